"""``sefora build``: turn a corpus folder into the dataset's Arrow shards and card."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sefora_cli.options import show_progress
from sefora_dataset import SAMPLE_SOURCE


def register(subparsers: Any) -> None:
    """Add the ``build`` subcommand."""
    parser = subparsers.add_parser(
        "build",
        description="Build the configs (essays, drafts, paragraphs, annotations, revisions) "
        "from a folder in the SEFORA layout holding JSON and/or annotated PDF/DOCX drafts.",
    )
    parser.add_argument(
        "--source",
        default=str(SAMPLE_SOURCE),
        help="corpus folder, e.g. a SEFORA clone's SEFORA/ (default: the bundled sample)",
    )
    parser.add_argument("--out", default="sefora", help="output folder (default: ./sefora)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build, then print the row counts as JSON."""
    from sefora_dataset.build import build_dataset  # loads `datasets`: only when building

    summary = build_dataset(args.source, args.out, progress=show_progress(args))
    print(json.dumps({"out": args.out, **summary}, indent=2))
    return 0
