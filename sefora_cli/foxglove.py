"""``sefora build-foxglove``: turn a local copy of FOXGLOVE's CSV files into a dataset folder."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sefora_dataset.foxglove import build_foxglove


def register(subparsers: Any) -> None:
    """Add the ``build-foxglove`` subcommand."""
    parser = subparsers.add_parser(
        "build-foxglove",
        description="Read essay_goals.csv, feedback.csv, ratings_global.csv and "
        "ratings_items.csv from a FOXGLOVE copy, check them, and write the essays, comments "
        "and ratings configs as Arrow shards with a dataset card.",
    )
    parser.add_argument("--source", required=True, help="folder holding the four CSV files")
    parser.add_argument("--out", default="foxglove", help="output folder (default: ./foxglove)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build, then print the counts as JSON."""
    summary = build_foxglove(args.source, args.out)
    print(json.dumps({"out": args.out, **summary}, indent=2))
    return 0
