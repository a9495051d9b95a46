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
    add_metric_options(parser, backend="auto")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write it")
    parser.add_argument(
        "--whole-references", action="store_true", help="take each comment as one unit"
    )
    parser.add_argument("--details", action="store_true", help="add per-paragraph details")
    parser.set_defaults(func=run)


#: `unimatch` keyword arguments that `add_metric_options` puts on a command line.
METRIC_OPTIONS = (
    "segmenter",
    "scorer",
    "threshold",
    "model",
    "base_url",
    "batch_size",
    "concurrency",
    "cache_dir",
    "on_error",
)


def add_metric_options(parser: argparse.ArgumentParser, backend: str) -> None:
    """The UniMatch options of `sefora unimatch` and `sefora evaluate`; ``backend`` is the
    default segmenter and scorer."""
    names = f"(default: {backend})"
    parser.add_argument("--segmenter", default=backend, help=f"auto, llm, offline, rules {names}")
    parser.add_argument(
        "--scorer", default=backend, help=f"auto, llm, offline, embedding, exact {names}"
    )
    parser.add_argument("--threshold", type=float, help="tau of the hard variant (1-4)")
    parser.add_argument("--model", help="LLM model name (or $UNIMATCH_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (or $UNIMATCH_BASE_URL)")
    parser.add_argument("--batch-size", type=int, default=50, help="pairs per LLM request")
    parser.add_argument("--concurrency", type=int, default=4, help="parallel LLM requests")
    parser.add_argument("--cache-dir", help="score cache folder (default: XDG cache)")
    parser.add_argument(
        "--on-error", choices=("raise", "skip"), default="raise", help="a paragraph that fails"
    )


def metric_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options `add_metric_options` parsed, as `unimatch` keyword arguments."""
    return {name: getattr(args, name) for name in METRIC_OPTIONS}


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
    result = unimatch(
        predictions,
        references,
        use_cache=not args.no_cache,
        segment_references=not args.whole_references,
        return_details=args.details,
        **metric_options(args),
    )
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if args.output is None:
        print(text)
        return 0
    write_text(args.output, text + "\n")
    return 0
