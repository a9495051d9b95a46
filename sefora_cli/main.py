"""The ``sefora`` command: a table of subcommands, each module imported only when chosen,
and the one wrapper that runs any of them.

``sefora --help`` imports no subcommand module (so it starts fast); ``sefora build ...``
imports only `sefora_cli.build`. Each module defines ``register(subparsers)``, which adds
its subcommand(s) and sets ``func`` (args -> exit code) on them; every subcommand gets the
common ``-v``/``-q`` options.

The wrapper (`main`) keeps logs quiet unless ``-v`` is given, reports a user's mistake (any
`ToolkitError`) in one line with exit code 2, and turns Ctrl-C (exit 130) and SIGTERM
(exit 143) into an exception, so that every temporary output is removed on the way out.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from sefora_cli.options import common_options, show_progress
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
    """The subparsers a command module registers into, each given its table help line and
    the common options."""

    def __init__(self, actions: Any) -> None:
        self._actions = actions
        self._common = common_options()

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        return self._actions.add_parser(
            name, help=COMMANDS[name][1], parents=[self._common], **kwargs
        )


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
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="show log messages (-vv: debug too)"
    )
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


class Terminated(BaseException):
    """Raised in the main thread when the process gets SIGTERM (or SIGHUP), so that the
    work unwinds like after Ctrl-C: temporary files and folders are removed on the way."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGTERM and SIGHUP raise `Terminated` while the block runs (in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    kinds = [signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    # A signal the caller chose to ignore (`nohup`) stays ignored.
    kinds = [kind for kind in kinds if signal.getsignal(kind) == signal.SIG_DFL]
    previous = {kind: signal.signal(kind, _terminate) for kind in kinds}
    try:
        yield
    finally:
        for kind, handler in previous.items():
            signal.signal(kind, handler)


def configure_logging(verbosity: int) -> None:
    """Warnings and errors only by default (no per-request ``httpx`` line, no model-loading
    line); ``-v`` adds information messages, ``-vv`` debug messages."""
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbosity, 2)]
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


def library_bars(show: bool | None) -> None:
    """The progress bars of `datasets` and the Hugging Face hub client follow the toolkit's
    rule: none with ``-q`` or off a terminal (they would fill a log with bar lines)."""
    if show is False or (show is None and not sys.stderr.isatty()):
        for variable in ("HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS"):
            os.environ.setdefault(variable, "1")  # read when `datasets` is imported
        if "datasets" in sys.modules:  # already imported: switch its bars off directly
            sys.modules["datasets"].disable_progress_bars()


def _run(args: argparse.Namespace) -> int:
    """The subcommand's exit code; log lines printed above a progress bar, not through it."""
    from tqdm.contrib.logging import logging_redirect_tqdm

    with logging_redirect_tqdm():
        return int(args.func(args) or 0)


def _exit_now(code: int, process: bool) -> int:
    """``code``; with ``process`` (the console script, not a call from Python), leave at once
    if worker threads (LLM requests in flight) would hold the interpreter's exit until they
    time out: the main thread's cleanup has already run."""
    main_thread = threading.main_thread()
    if process and any(
        t is not main_thread and t.is_alive() and not t.daemon for t in threading.enumerate()
    ):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand: a user's mistake ends with a one-line error and exit code 2,
    Ctrl-C with 130, SIGTERM with 143, and none leaves a half-written output behind."""
    process = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    args = make_parser(argv).parse_args(argv)
    configure_logging(args.verbose)
    library_bars(show_progress(args))
    prefix = f"sefora {args.command}"
    try:
        with _signals_raise():
            return _run(args)
    except ToolkitError as err:
        print(f"{prefix}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{prefix}: interrupted; nothing half-written was left", file=sys.stderr)
        return _exit_now(130, process)
    except Terminated as stop:
        print(f"{prefix}: stopped by {stop}; nothing half-written was left", file=sys.stderr)
        return _exit_now(128 + stop.signum, process)
    except BrokenPipeError:  # the reader went away (`sefora configs | head -1`)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
