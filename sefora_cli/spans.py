"""``sefora anchored`` and ``sefora span-stats``: the span-identification metric on a JSONL
file, and the span sizes and revision labels of a built dataset.

``sefora anchored`` reads one paragraph per line::

    {"paragraph": "...",
     "predictions": [{"comment": "...", "quote": "words of the paragraph"}, ...],
     "references": [{"comment": "...", "start": 10, "end": 42}, ...]}

A prediction may give ``start``/``end`` instead of a quote; a quote is located in the
paragraph (exact, normalized, fuzzy) and an unlocatable one is counted, never dropped.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from sefora_cli.options import add_metric_options, metric_options
from sefora_common.io import write_text
from sefora_common.jsonl import read_jsonl
from unimatch_metric.errors import UniMatchError, UniMatchInputError
from unimatch_metric.quotes import MIN_SIMILARITY, locate_quote
from unimatch_metric.spans import DEFAULT_SPAN_WEIGHT, DEFAULT_THETA, anchored_unimatch


def register(subparsers: Any) -> None:
    """Add the ``anchored`` and ``span-stats`` subcommands."""
    parser = subparsers.add_parser(
        "anchored",
        description="Score anchored feedback (comments with quoted spans) against the "
        "instructor's span-anchored comments: span P/R/F1 and anchored UniMatch, as JSON.",
    )
    parser.add_argument("input", type=Path, help="JSONL file, one paragraph per line")
    parser.add_argument("--output", type=Path, help="write the JSON result here, not stdout")
    add_metric_options(parser)
    parser.add_argument(
        "--span-weight",
        type=float,
        default=DEFAULT_SPAN_WEIGHT,
        help=f"lambda of the pair weight s*((1-lambda)+lambda*IoU) (default {DEFAULT_SPAN_WEIGHT})",
    )
    parser.add_argument(
        "--theta", type=float, default=DEFAULT_THETA, help="IoU of a span match (default 0.5)"
    )
    parser.add_argument(
        "--min-similarity",
        type=float,
        default=MIN_SIMILARITY,
        help=f"least similarity of a fuzzy quote match (default {MIN_SIMILARITY})",
    )
    parser.add_argument("--details", action="store_true", help="add per-paragraph details")
    parser.set_defaults(func=run_anchored)
    stats = subparsers.add_parser(
        "span-stats",
        description="Sizes of the instructor spans (phrase / sentence / multi-sentence, "
        "notes) and the revision labels of a built dataset, as JSON.",
    )
    stats.add_argument("--data", default="sefora", help="built dataset folder (default: sefora)")
    stats.set_defaults(func=run_span_stats)


def _span(value: Any, path: Path, where: str) -> tuple[int, int] | None:
    start, end = value.get("start"), value.get("end")
    if not (isinstance(start, int) and isinstance(end, int)):
        raise UniMatchInputError(path, where, "expected integer 'start' and 'end'")
    return (start, end) if start >= 0 else None


def read_anchored(path: Path, min_similarity: float) -> tuple[list, list, list, Counter]:
    """Predictions (comment, span), references and paragraphs of a JSONL file, and how the
    quotes were located; a bad line is a `UniMatchInputError` naming the file and line."""
    predictions, references, texts = [], [], []
    methods: Counter[str] = Counter()
    for number, row in read_jsonl(path, UniMatchInputError):
        where = f"line {number}"
        if not isinstance(row.get("paragraph"), str):
            raise UniMatchInputError(path, where, "expected 'paragraph' (a string)")
        items = []
        for i, pred in enumerate(row.get("predictions", [])):
            if not isinstance(pred, dict) or not isinstance(pred.get("comment"), str):
                raise UniMatchInputError(path, f"{where}: predictions[{i}]", "expected a comment")
            if isinstance(pred.get("quote"), str):
                location = locate_quote(pred["quote"], row["paragraph"], min_similarity)
                methods[location.method] += 1
                items.append((pred["comment"], location.span))
            else:
                items.append((pred["comment"], _span(pred, path, f"{where}: predictions[{i}]")))
        refs = []
        for i, ref in enumerate(row.get("references", [])):
            if not isinstance(ref, dict) or not isinstance(ref.get("comment"), str):
                raise UniMatchInputError(path, f"{where}: references[{i}]", "expected a comment")
            span = _span(ref, path, f"{where}: references[{i}]")
            refs.append((ref["comment"], span if span is not None else (-1, -1)))
        predictions.append(items)
        references.append(refs)
        texts.append(row["paragraph"])
    return predictions, references, texts, methods


def run_anchored(args: argparse.Namespace) -> int:
    """Score the file and print (or write) the result."""
    for name, value, low_open in (
        ("--span-weight", args.span_weight, False),
        ("--theta", args.theta, True),
        ("--min-similarity", args.min_similarity, True),
    ):
        if not (0 < value <= 1 if low_open else 0 <= value <= 1):
            interval = "(0, 1]" if low_open else "[0, 1]"
            raise UniMatchError(f"{name} must be in {interval}, got {value}")
    predictions, references, texts, methods = read_anchored(args.input, args.min_similarity)
    result = anchored_unimatch(
        predictions,
        references,
        texts,
        span_weight=args.span_weight,
        theta=args.theta,
        return_details=args.details,
        **metric_options(args),
    )
    result["quotes"] = dict(methods)
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if args.output is None:
        print(text)
    else:
        write_text(args.output, text + "\n")
    return 0


def run_span_stats(args: argparse.Namespace) -> int:
    """Print the span sizes of the ``annotations`` config and the ``revisions`` labels."""
    from datasets import load_dataset

    from sefora_common.text import span_statistics
    from sefora_dataset.errors import CorpusError
    from sefora_dataset.revisions import revision_summary

    data = Path(args.data)
    if not (data / "README.md").is_file():
        raise CorpusError(data, "", "no built dataset here (see `sefora build`)")
    every = "train+validation+test"
    paragraphs = load_dataset(str(data), "paragraphs", split=every).select_columns(
        ["body", "annotations"]
    )
    spans = [(p["body"], a["start"], a["end"]) for p in paragraphs for a in p["annotations"]]
    revisions = load_dataset(str(data), "revisions", split=every)
    summary = revision_summary(revisions)
    out = {
        "span_sizes": span_statistics(spans),
        "revisions": {k: summary[k] for k in ("rows", "labels", "moved")},
    }
    print(json.dumps(out, indent=2))
    return 0
