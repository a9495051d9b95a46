"""``sefora unimatch``: score a JSONL file of generated feedback with UniMatch.

Each input line is one paragraph: ``{"prediction": "text" or ["unit", ...],
"references": ["instructor comment", ...]}``, and with ``--paragraphs`` its text as
``"paragraph"`` (units about another text then score 0). The API key of the LLM backends
comes from ``$UNIMATCH_API_KEY`` (or ``$OPENAI_API_KEY``), never from the command line.
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
from unimatch_metric.pipeline import is_paragraph_text


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
    parser.add_argument(
        "--paragraphs",
        action="store_true",
        help="read each line's 'paragraph' (its text; ignored without this flag): units "
        "about another text score 0",
    )
    parser.set_defaults(func=run)


def _example_problems(where: str, row: dict, paragraphs: bool) -> list[tuple[str, str]]:
    if "prediction" not in row or "references" not in row:
        return [(where, "expected an object with 'prediction' and 'references'")]
    problems = []
    if paragraphs and not is_paragraph_text(row.get("paragraph")):
        problems.append((f"{where}: paragraph", "expected the paragraph's text (--paragraphs)"))
    if not (isinstance(row["prediction"], str) or _strings(row["prediction"])):
        problems.append((f"{where}: prediction", "expected a string or a list of strings"))
    if not _strings(row["references"]):
        problems.append((f"{where}: references", "expected a list of strings"))
    return problems


def read_examples(
    path: Path, paragraphs: bool = False
) -> tuple[list[Any], list[Any], list[str] | None]:
    """Predictions, references and (with ``paragraphs``) paragraph texts from a JSONL file;
    bad lines are one `UniMatchInputError` listing every problem of each."""
    rows = [
        row
        for _, row in read_jsonl(
            path, UniMatchInputError, lambda where, row: _example_problems(where, row, paragraphs)
        )
    ]
    texts = [r["paragraph"] for r in rows] if paragraphs else None
    return [r["prediction"] for r in rows], [r["references"] for r in rows], texts


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def run(args: argparse.Namespace) -> int:
    """Score the file and print (or write) the result."""
    predictions, references, paragraphs = read_examples(args.input, args.paragraphs)
    result = unimatch(
        predictions,
        references,
        paragraphs,
        return_details=args.details,
        **metric_options(args),
    )
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if args.output is None:
        print(text)
        return 0
    write_text(args.output, text + "\n")
    return 0
