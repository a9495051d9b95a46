"""``sefora unimatch``: score a JSONL file of generated feedback with UniMatch.

Each input line is one paragraph: ``{"prediction": "text" or ["unit", ...],
"references": ["instructor comment", ...]}``. The API key of the LLM backends comes from
``$UNIMATCH_API_KEY`` (or ``$OPENAI_API_KEY``), never from the command line.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from sefora_cli.options import add_metric_options, metric_options
from sefora_common.io import write_text
from sefora_common.jsonl import read_jsonl
from unimatch_metric import unimatch
from unimatch_metric.errors import UniMatchInputError


def register(subparsers: Any) -> None:
    """Add the ``unimatch`` subcommand."""
    parser = subparsers.add_parser(
        "unimatch",
        description="Score a JSONL file of paragraphs ({'prediction': ..., 'references': "
        "[...]} per line) with UniMatch and print the result as JSON.",
    )
    parser.add_argument("input", type=Path, help="JSONL file, one paragraph per line")
    parser.add_argument("--output", type=Path, help="write the JSON result here, not stdout")
    add_metric_options(parser)
    parser.add_argument("--details", action="store_true", help="add per-paragraph details")
    parser.set_defaults(func=run)


def read_examples(path: Path) -> tuple[list[Any], list[Any]]:
    """Predictions and references from a JSONL file; a bad line is a `UniMatchInputError`."""
    predictions, references = [], []
    for number, row in read_jsonl(path, UniMatchInputError):
        if "prediction" not in row or "references" not in row:
            raise UniMatchInputError(
                path, f"line {number}", "expected an object with 'prediction' and 'references'"
            )
        pred, refs = row["prediction"], row["references"]
        if not (isinstance(pred, str) or _strings(pred)):
            raise UniMatchInputError(
                path, f"line {number}", "prediction: a string or list of strings"
            )
        if not _strings(refs):
            raise UniMatchInputError(path, f"line {number}", "references: a list of strings")
        predictions.append(pred)
        references.append(refs)
    return predictions, references


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def run(args: argparse.Namespace) -> int:
    """Score the file and print (or write) the result."""
    predictions, references = read_examples(args.input)
    result = unimatch(predictions, references, return_details=args.details, **metric_options(args))
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if args.output is None:
        print(text)
        return 0
    write_text(args.output, text + "\n")
    return 0
