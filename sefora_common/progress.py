"""The one progress bar of the toolkit's long work (reading a corpus, parsing, segmenting,
scoring, generating): tqdm on stderr, shown on a terminal only and only once the work has
lasted a moment, so short calls (a metric inside a training loop) print nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

X = TypeVar("X")
Y = TypeVar("Y")

#: Seconds of work before a bar appears.
DELAY = 1.0


def progress_bar(
    iterable: Iterable[Any] | None = None,
    *,
    desc: str,
    total: int | None = None,
    unit: str = "it",
    show: bool | None = None,
) -> Any:
    """A tqdm bar over ``iterable`` (or updated by hand up to ``total``).

    ``show``: None (the default everywhere) shows it when stderr is a terminal; False never
    (``--quiet``); True always.
    """
    from tqdm.auto import tqdm  # imported on first use: `sefora --help` stays fast

    return tqdm(
        iterable,
        desc=desc,
        total=total,
        unit=unit,
        disable=None if show is None else not show,
        delay=DELAY,
        dynamic_ncols=True,
    )


def in_chunks(
    run: Callable[[list[X]], list[Y]],
    items: Sequence[X],
    size: int,
    *,
    desc: str,
    unit: str = "it",
    show: bool | None = None,
) -> list[Y]:
    """``run(items)`` made of calls on at most ``size`` items each, with a `progress_bar`
    counting the items done (for batched work that would otherwise show nothing)."""
    out: list[Y] = []
    with progress_bar(total=len(items), desc=desc, unit=unit, show=show) as bar:
        for start in range(0, len(items), size):
            chunk = list(items[start : start + size])
            out += run(chunk)
            bar.update(len(chunk))
    return out
