"""Options of the ``sefora`` subcommands that more than one command takes, each defined once:
``-v``/``-q`` on every command, and the UniMatch options of every command that segments or
scores. A flag left out is not passed on, so the library's default applies and the library
can tell an option the user gave (and reject it where nothing would use it) from a default.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from sefora_common.errors import OptionError


def common_options() -> argparse.ArgumentParser:
    """The parent parser of every subcommand: ``-v`` (logs) and ``-q`` (no progress bar)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=argparse.SUPPRESS,  # keeps a `sefora -v COMMAND` given before the command
        help="show log messages (-vv: debug messages too)",
    )
    parent.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar (none is shown off a terminal)"
    )
    return parent


def show_progress(args: argparse.Namespace) -> bool | None:
    """The libraries' ``progress`` for these arguments: off with ``--quiet``, else a bar on a
    terminal only."""
    return False if getattr(args, "quiet", False) else None


def checked(convert: Callable[[str], Any], check: Callable[[Any], object]) -> Callable[[str], Any]:
    """An argparse ``type`` that converts the text, then applies the library's own ``check``
    (which raises `OptionError`), so a bad value is reported as argparse reports any."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(f"invalid value {text!r}") from err
        try:
            check(value)
        except OptionError as err:
            raise argparse.ArgumentTypeError(str(err)) from err
        return value

    return parse


#: The UniMatch stages a command runs, and the options each stage reads.
STAGE_OPTIONS = {
    "segment": ("segmenter",),
    "score": ("scorer", "batch_size"),
    "match": ("threshold", "segment_references", "on_error"),
}


def add_metric_options(
    parser: argparse.ArgumentParser, stages: Sequence[str] = ("segment", "score", "match")
) -> None:
    """The UniMatch options of a command that runs ``stages``; LLM endpoint, concurrency and
    cache options come with any stage. Defaults and checks are the library's."""
    from sefora_llm.options import ON_ERROR
    from unimatch_metric import SCORERS, SEGMENTERS
    from unimatch_metric.options import Options

    defaults = {f.name: f.default for f in dataclasses.fields(Options)}

    def option(name: str) -> Callable[[Any], object]:
        return lambda value: Options(**{name: value})

    def known(registry: Any) -> Callable[[Any], object]:
        return lambda spec: registry.resolve_name(spec, Options())

    names = [n for stage in stages for n in STAGE_OPTIONS[stage]]
    for name, registry in (("segmenter", SEGMENTERS), ("scorer", SCORERS)):
        if name in names:
            parser.add_argument(
                f"--{name}",
                type=checked(str, known(registry)),
                metavar="NAME",
                help=f"{', '.join(registry.choices())} (default: {defaults[name]}: an LLM "
                "when a model or endpoint is set, else the learned offline backend)",
            )
    if "threshold" in names:
        parser.add_argument(
            "--threshold",
            type=checked(float, option("threshold")),
            metavar="TAU",
            help="tau in (0, 4] of the hard variant: pairs scoring >= tau match "
            "(default: the soft variant)",
        )
    parser.add_argument("--model", help="LLM model name (or $UNIMATCH_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (or $UNIMATCH_BASE_URL)")
    if "batch_size" in names:
        parser.add_argument(
            "--batch-size",
            type=checked(int, option("batch_size")),
            help=f"pairs per LLM scoring request (default: {defaults['batch_size']})",
        )
    parser.add_argument(
        "--concurrency",
        type=checked(int, option("concurrency")),
        help=f"parallel LLM requests (default: {defaults['concurrency']})",
    )
    parser.add_argument("--cache-dir", help="score cache folder (default: XDG cache)")
    parser.add_argument(
        "--no-cache",
        dest="use_cache",
        action="store_false",
        default=None,
        help="neither read nor write the cache",
    )
    if "segment_references" in names:
        parser.add_argument(
            "--whole-references",
            dest="segment_references",
            action="store_false",
            default=None,
            help="take each instructor comment as one unit",
        )
    if "on_error" in names:
        parser.add_argument(
            "--on-error",
            choices=ON_ERROR,
            help="a paragraph whose LLM request failed: stop (raise, the default) or skip it",
        )
    parser.set_defaults(metric_options=names)


#: Options `add_metric_options` adds whatever the stages.
_ALWAYS = ("model", "base_url", "concurrency", "cache_dir", "use_cache")


def metric_options(args: argparse.Namespace) -> dict[str, Any]:
    """The UniMatch options given on the command line (defaults left to the library), with
    ``progress`` from ``-q``."""
    names = [*args.metric_options, *_ALWAYS]
    given = {name: getattr(args, name) for name in names if getattr(args, name) is not None}
    return {**given, "progress": show_progress(args)}


def reject_unused(args: argparse.Namespace, flags: Sequence[str], reason: str) -> None:
    """Raise `OptionError` if any of ``flags`` (e.g. ``"--seed"``) was given: they would be
    ignored, for ``reason``."""
    given = [f for f in flags if getattr(args, f.lstrip("-").replace("-", "_")) is not None]
    if given:
        raise OptionError(f"{', '.join(given)} would be ignored: {reason}")
