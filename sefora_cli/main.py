"""The ``sefora`` command: one subcommand per job, each a thin layer over the libraries."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from sefora_common.errors import ToolkitError

# Each module listed here defines ``register(subparsers)`` that adds its subcommand(s)
# and sets ``func`` (args -> exit code) on them.
COMMAND_MODULES = [
    "sefora_cli.build",
    "sefora_cli.parse",
    "sefora_grid.prompts",
    "sefora_grid.generate",
    "sefora_grid.evaluate",
    "sefora_grid.report",
    "sefora_cli.unimatch",
    "sefora_cli.offline",
    "sefora_cli.foxglove",
    "sefora_cli.pairs",
]


def make_parser() -> argparse.ArgumentParser:
    """The top-level parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="sefora",
        description="SEFORA dataset and UniMatch metric tools.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; bad input ends with a one-line error and exit code 2."""
    args = make_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.func(args) or 0)
    except ToolkitError as err:
        print(f"sefora {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
