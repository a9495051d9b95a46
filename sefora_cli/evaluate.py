"""``sefora evaluate``: score every generation run with UniMatch against the instructors."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sefora_cli.options import add_metric_options, metric_options
from sefora_grid.evaluate import BARE_ANNOTATIONS, evaluate_runs


def register(subparsers: Any) -> None:
    """Add the ``evaluate`` subcommand."""
    parser = subparsers.add_parser(
        "evaluate",
        description="Score every run file in RUNS against the instructors' comments with "
        "UniMatch: precision, recall, F1 (macro and micro) and mean generated units on the "
        "full set and the single-reference subset. The LLM judge's key comes from "
        "$UNIMATCH_API_KEY or $OPENAI_API_KEY.",
    )
    parser.add_argument("runs", type=Path, help="folder of run files from `sefora generate`")
    parser.add_argument("--out", type=Path, default=Path("results"), help="default: results")
    parser.add_argument("--data", default="sefora", help="built dataset folder (default: sefora)")
    add_metric_options(parser)
    parser.add_argument(
        "--bare-annotations",
        choices=BARE_ANNOTATIONS,
        default="legend",
        help="annotations without a comment: read by the colour legend (default) or skip",
    )
    parser.set_defaults(func=run_evaluate)


def run_evaluate(args: argparse.Namespace) -> int:
    """Evaluate the runs and print one line per newly scored run."""
    summaries = evaluate_runs(
        args.runs,
        args.out,
        data_dir=args.data,
        bare=args.bare_annotations,
        **metric_options(args),
    )
    for s in summaries:
        full, single = s["full"], s["single_reference"]
        print(
            f"{s['run']}: F1 {_fmt(full['f1'])} (P {_fmt(full['precision'])}, "
            f"R {_fmt(full['recall'])}, {_fmt(full['mean_predicted_units'])} units/paragraph, "
            f"n={full['n_examples']}); "
            f"single-reference F1 {_fmt(single['f1'])} (n={single['n_examples']})"
        )
    for signature in dict.fromkeys(s["unimatch"]["signature"] for s in summaries):
        print(f"UniMatch signature: {signature}")
    if not summaries:
        print(f"{args.out}: every run is already scored with these options")
    return 0


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
