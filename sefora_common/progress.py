"""The one progress bar of the toolkit's long work (reading a corpus, parsing, segmenting,
scoring, generating): tqdm on stderr, shown on a terminal only and only once the work has
lasted a moment, so short calls (a metric inside a training loop) print nothing."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

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
