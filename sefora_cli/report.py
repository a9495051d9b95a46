"""``sefora report``: the experiment grid's tables and plot from ``sefora evaluate`` results."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sefora_grid.report import AVERAGES, write_report


def register(subparsers: Any) -> None:
    """Add the ``report`` subcommand."""
    parser = subparsers.add_parser(
        "report",
        description="Turn the results of `sefora evaluate` into report.md, table3.csv, "
        "configurations.csv and units_vs_scores.png; with anchored runs also spans.csv (span "
        "identification and uptake), with document-level runs documents.csv and "
        "documents_units.png.",
    )
    parser.add_argument("results", type=Path, help="folder written by `sefora evaluate`")
    parser.add_argument("--out", type=Path, help="output folder (default: the results folder)")
    parser.add_argument("--average", choices=AVERAGES, default="macro", help="default: macro")
    parser.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    """Write the report and print where its files are."""
    paths = write_report(args.results, args.out, args.average)
    for kind, path in paths.items():
        print(f"{kind}: {path}")
    return 0
