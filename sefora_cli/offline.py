"""``sefora train-offline``, ``validate-segmenter``, ``validate-scorer``, ``validate-e2e``: the
learned offline UniMatch backends, retrained from labelled data and checked against it, stage
by stage and end to end (UniMatch F1 against judges' ratings of candidate feedback).

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

from sefora_cli.options import add_metric_options, metric_options, show_progress
from sefora_common.errors import OptionError
from unimatch_metric import score_pairs, segment, unimatch
from unimatch_metric.errors import UniMatchInputError
from unimatch_metric.models import MODEL_DIR
from unimatch_metric.pipeline import is_paragraph_text
from unimatch_metric.training.train import pair_label, read_labels, train_offline
from unimatch_metric.training.validate import (
    end_to_end_agreement,
    end_to_end_interval,
    judgements,
    mean_by_kind,
    read_end_to_end,
    score_agreement,
    segmenter_validation,
)

#: Options of `validate-e2e` given only to the segmenter x scorer pairs that use an LLM.
LLM_FLAGS = ("model", "base_url", "concurrency")

#: The labelled data in a repository checkout (a wheel does not ship it).
LABELS = Path(__file__).resolve().parents[1] / "labels"


def labels_dir() -> Path:
    """The checkout's ``labels/``; outside a checkout (a wheel install) a
    `UniMatchInputError` saying where labelled data can come from."""
    if not LABELS.is_dir():
        raise UniMatchInputError(
            LABELS,
            "",
            "no labelled data here: the installed package does not ship labels/; pass "
            "--labels (or the JSONL file) from a checkout of the toolkit's repository",
        )
    return LABELS


def register(subparsers: Any) -> None:
    """Add the three subcommands."""
    train = subparsers.add_parser(
        "train-offline",
    )
    train.add_argument(
        "--labels", type=Path, help="folder with the JSONL files (default: the checkout's labels/)"
    )
    train.add_argument("--out", type=Path, default=MODEL_DIR, help="where to write the models")
    train.add_argument(
        "--limit",
        type=int,
        help="use only the first N rows of each file (of each side in segments.jsonl)",
    )
    train.set_defaults(func=run_train)

    for name, default, stage in (
        ("validate-segmenter", "segments.jsonl", "segment"),
        ("validate-scorer", "pairs.jsonl", "score"),
    ):
        p = subparsers.add_parser(name)
        p.add_argument(
            "file", type=Path, nargs="?", help=f"labelled JSONL (default: labels/{default})"
        )
        p.add_argument("--part", help="only rows whose 'part' is this (e.g. validation)")
        add_metric_options(p, stages=[stage])
        if stage == "segment":
            p.add_argument("--k", type=int, help="WindowDiff window (default: half mean length)")
        p.set_defaults(func=run_validate_segmenter if stage == "segment" else run_validate_scorer)

    e2e = subparsers.add_parser("validate-e2e")
    e2e.add_argument(
        "folder", type=Path, nargs="?", help="end-to-end set folder (default: labels/e2e)"
    )
    e2e.add_argument(
        "--segmenters", default="learned,rules", help="comma-separated segmenter backends"
    )
    e2e.add_argument("--scorers", default="learned,embedding", help="comma-separated scorers")
    e2e.add_argument(
        "--bootstrap",
        type=int,
        default=0,
        metavar="N",
        help="also print 95 %% intervals from N paragraph resamples (e.g. 1000)",
    )
    e2e.add_argument(
        "--paragraphs",
        action="store_true",
        help="give UniMatch each paragraph's text (its 'body'): units about another text score 0",
    )
    add_metric_options(e2e, stages=["match"])  # --model etc. go to the llm/auto backends
    e2e.set_defaults(func=run_validate_e2e)


def run_train(args: argparse.Namespace) -> int:
    """Retrain both models and print the validation report."""
    labels = args.labels if args.labels is not None else labels_dir()
    report = train_offline(labels, args.out, limit=args.limit, progress=show_progress(args))
    print(json.dumps(report, indent=2))
    return 0


def _rows(args: argparse.Namespace, keys: tuple[str, ...], default: str) -> list[dict]:
    if args.file is None:
        args.file = labels_dir() / default
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


def run_validate_segmenter(args: argparse.Namespace) -> int:
    """Print WindowDiff and boundary P/R/F1 of a segmenter against the labels (instructor
    comments segmented as such), pooled and per source."""
    rows = _rows(args, ("text", "units"), "segments.jsonl")
    options = metric_options(args)
    result = segmenter_validation(
        rows, lambda texts, side: segment(texts, side=side, **options), k=args.k
    )
    print(json.dumps({"segmenter": args.segmenter or "auto", **result}, indent=2))
    return 0


def run_validate_scorer(args: argparse.Namespace) -> int:
    """Print Pearson and Spearman of a scorer against the labels (mean of annotators)."""
    rows = _rows(args, ("a", "b", "score"), "pairs.jsonl")
    scores = score_pairs([(r["a"], r["b"]) for r in rows], **metric_options(args))
    result = score_agreement([pair_label(r) for r in rows], scores)
    print(json.dumps({"scorer": args.scorer or "auto", **asdict(result)}, indent=2))
    return 0


def run_validate_e2e(args: argparse.Namespace) -> int:
    """Print, for every segmenter x scorer, how UniMatch F1 follows the judges: Pearson with
    their scores over all candidates, mean per-paragraph Spearman with their ranking of the
    non-trivial candidates (with ``--bootstrap N``, their 95 % paragraph-bootstrap
    intervals), and the mean F1 of each kind of candidate; with ``--paragraphs``, UniMatch
    sees each paragraph's text (`unimatch_metric.grounding`)."""
    if args.bootstrap < 0:
        raise OptionError(
            f"--bootstrap takes a number of resamples (0: none), got {args.bootstrap}"
        )
    segmenters, scorers = args.segmenters.split(","), args.scorers.split(",")
    options = metric_options(args)
    llm = {name: options.pop(name) for name in LLM_FLAGS if name in options}
    if llm and not {"llm", "auto"} & {*segmenters, *scorers}:
        raise OptionError(
            f"{', '.join(llm)} would be ignored: no 'llm' (or 'auto') in --segmenters/--scorers"
        )
    folder = args.folder if args.folder is not None else labels_dir() / "e2e"
    candidates = read_end_to_end(folder)
    if args.paragraphs:
        for c in candidates:
            if not is_paragraph_text(c["paragraph"]):
                where = folder / "paragraphs.jsonl"
                raise UniMatchInputError(
                    where, c["e2e_id"], "no 'body' text (needed by --paragraphs)"
                )
    results = []
    for segmenter in segmenters:
        for scorer in scorers:
            uses_llm = {"llm", "auto"} & {segmenter, scorer}
            out = unimatch(
                [c["text"] for c in candidates],
                [c["references"] for c in candidates],
                [c["paragraph"] for c in candidates] if args.paragraphs else None,
                segmenter=segmenter,
                scorer=scorer,
                return_details=True,
                **options,
                **(llm if uses_llm else {}),
            )
            f1 = [d["f1"] for d in out["details"]]
            judged = judgements(candidates)
            agreement = end_to_end_agreement(f1, *judged)
            mean_f1 = mean_by_kind(f1, candidates)
            result = {
                "segmenter": segmenter,
                "scorer": scorer,
                "paragraphs": args.paragraphs,
                **asdict(agreement),
            }
            if args.bootstrap:
                result["bootstrap_95"] = {
                    **end_to_end_interval(f1, *judged, resamples=args.bootstrap),
                    "resamples": args.bootstrap,
                }
            results.append({**result, "mean_f1": mean_f1})
    print(json.dumps(results, indent=2))
    return 0
