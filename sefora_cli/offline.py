"""``sefora train-offline``, ``validate-segmenter``, ``validate-scorer``: the learned offline
UniMatch backends, retrained from labelled data and checked against it.

Labelled files are JSONL: segmentations ``{"text", "units", "part"?}`` and scored pairs
``{"a", "b", "score", "score_2"?, "part"?}`` (``labels/segments.jsonl``, ``labels/pairs.jsonl``).
LLM backends take their key from ``$UNIMATCH_API_KEY`` / ``$OPENAI_API_KEY``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from unimatch_metric import score_pairs, segment
from unimatch_metric.errors import UniMatchInputError
from unimatch_metric.models import MODEL_DIR
from unimatch_metric.training.train import pair_label, read_labels, train_offline
from unimatch_metric.training.validate import score_agreement, segmentation_agreement

LABELS = Path(__file__).resolve().parents[1] / "labels"


def register(subparsers: Any) -> None:
    """Add the three subcommands."""
    train = subparsers.add_parser(
        "train-offline",
    )
    train.add_argument("--labels", type=Path, default=LABELS, help="folder with the JSONL files")
    train.add_argument("--out", type=Path, default=MODEL_DIR, help="where to write the models")
    train.add_argument("--limit", type=int, help="use only the first N rows of each file")
    train.set_defaults(func=run_train)

    for name, default, kind in (
        ("validate-segmenter", LABELS / "segments.jsonl", "segmenter"),
        ("validate-scorer", LABELS / "pairs.jsonl", "scorer"),
    ):
        p = subparsers.add_parser(name)
        p.add_argument("file", type=Path, nargs="?", default=default, help="labelled JSONL")
        p.add_argument(f"--{kind}", default="offline", help="backend name (default: offline)")
        p.add_argument("--part", help="only rows whose 'part' is this (e.g. validation)")
        p.add_argument("--model", help="LLM model name (LLM backends)")
        p.add_argument("--base-url", help="OpenAI-compatible endpoint (LLM backends)")
        if kind == "segmenter":
            p.add_argument("--k", type=int, help="WindowDiff window (default: half mean length)")
        p.set_defaults(func=run_validate_segmenter if kind == "segmenter" else run_validate_scorer)


def run_train(args: argparse.Namespace) -> int:
    """Retrain both models and print the validation report."""
    report = train_offline(args.labels, args.out, limit=args.limit)
    print(json.dumps(report, indent=2))
    return 0


def _rows(args: argparse.Namespace, keys: tuple[str, ...]) -> list[dict]:
    rows = read_labels(args.file)
    for n, row in enumerate(rows, 1):
        missing = [k for k in keys if k not in row]
        if missing:
            raise UniMatchInputError(args.file, f"row {n}", f"missing {', '.join(missing)}")
    if args.part:
        rows = [r for r in rows if r.get("part") == args.part]
    if not rows:
        raise UniMatchInputError(args.file, "", "no rows to validate on")
    return rows


def _llm_options(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in (("model", args.model), ("base_url", args.base_url)) if v}


def run_validate_segmenter(args: argparse.Namespace) -> int:
    """Print WindowDiff and boundary P/R/F1 of a segmenter against the labels."""
    rows = _rows(args, ("text", "units"))
    hyps = segment([r["text"] for r in rows], segmenter=args.segmenter, **_llm_options(args))
    result = segmentation_agreement([r["units"] for r in rows], hyps, k=args.k)
    print(json.dumps({"segmenter": args.segmenter, **asdict(result)}, indent=2))
    return 0


def run_validate_scorer(args: argparse.Namespace) -> int:
    """Print Pearson and Spearman of a scorer against the labels (mean of annotators)."""
    rows = _rows(args, ("a", "b", "score"))
    scores = score_pairs([(r["a"], r["b"]) for r in rows], scorer=args.scorer, **_llm_options(args))
    result = score_agreement([pair_label(r) for r in rows], scores)
    print(json.dumps({"scorer": args.scorer, **asdict(result)}, indent=2))
    return 0
