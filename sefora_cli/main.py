"""The ``sefora`` command: a table of subcommands, each module imported only when chosen.

``sefora --help`` imports no subcommand module (so it starts fast); ``sefora build ...``
imports only `sefora_cli.build`. Each module defines ``register(subparsers)``, which adds
its subcommand(s) and sets ``func`` (args -> exit code) on them.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Any

from sefora_common import __version__
from sefora_common.errors import ToolkitError

#: Subcommand -> (module that registers it, one-line help shown by ``sefora --help``).
COMMANDS: dict[str, tuple[str, str]] = {
    "build": ("sefora_cli.build", "build the dataset (Arrow shards + card) from a corpus folder"),
    "parse": ("sefora_cli.parse", "parse annotated PDF/DOCX drafts into corpus-format JSON"),
    "configs": (
        "sefora_cli.configs",
        "list the prompt configurations of the feedback-generation grid",
    ),
    "generate": (
        "sefora_cli.generate",
        "generate paragraph feedback with an LLM under prompt configurations",
    ),
    "evaluate": (
        "sefora_cli.evaluate",
        "score generation runs with UniMatch (one result per configuration and model)",
    ),
    "report": (
        "sefora_cli.report",
        "tables (Markdown, CSV) and the verbosity plot of the evaluated grid",
    ),
    "unimatch": (
        "sefora_cli.unimatch",
        "score generated feedback against instructor comments with UniMatch",
    ),
    "anchored": (
        "sefora_cli.spans",
        "score anchored feedback (quoted spans + comments): span P/R/F1, anchored UniMatch",
    ),
    "span-stats": (
        "sefora_cli.spans",
        "instructor span sizes and revision labels of a built dataset",
    ),
    "train-offline": (
        "sefora_cli.offline",
        "retrain the learned offline segmenter and scorer from labelled data",
    ),
    "validate-segmenter": ("sefora_cli.offline", "agreement of a segmenter with labelled data"),
    "validate-scorer": ("sefora_cli.offline", "agreement of a scorer with labelled data"),
    "validate-e2e": (
        "sefora_cli.offline",
        "UniMatch F1 against judges' ratings of candidate feedback, per backend combination",
    ),
    "build-foxglove": (
        "sefora_cli.foxglove",
        "build the FOXGLOVE dataset (essays, comments, ratings) from its CSV files",
    ),
    "dpo-pairs": ("sefora_cli.pairs", "export DPO preference pairs from scored feedback (JSONL)"),
    "module": (
        "sefora_cli.module",
        "copy an evaluate module folder (unimatch, rubric_judge) here, for evaluate.load / hf",
    ),
}


class _Subcommands:
    """The subparsers a command module registers into, each given its table help line."""

    def __init__(self, actions: Any) -> None:
        self._actions = actions

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        return self._actions.add_parser(name, help=COMMANDS[name][1], **kwargs)


def _chosen(argv: list[str]) -> str | None:
    """The subcommand named on the command line (the first argument that is one), if any."""
    return next((arg for arg in argv if arg in COMMANDS), None)


def make_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser: the chosen subcommand in full, the others as help lines only.

    With ``argv`` None every subcommand module is imported (the full parser).
    """
    parser = argparse.ArgumentParser(
        prog="sefora",
        description="SEFORA dataset and UniMatch metric tools.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    actions = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = _chosen(argv) if argv is not None else None
    chosen_module = COMMANDS[chosen][0] if chosen else None
    loaded: set[str] = set()
    for name, (module, help_line) in COMMANDS.items():
        if argv is None or module == chosen_module:
            if module not in loaded:
                importlib.import_module(module).register(_Subcommands(actions))
                loaded.add(module)
        else:
            actions.add_parser(name, help=help_line, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; bad input ends with a one-line error and exit code 2."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = make_parser(argv).parse_args(argv)
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
