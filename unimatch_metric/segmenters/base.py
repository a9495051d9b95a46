"""What a segmentation backend is, and the wrapper that makes a user function one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from unimatch_metric.errors import UniMatchError

Units = list[str]


class Segmenter(Protocol):
    """What a segmentation backend provides."""

    @property
    def name(self) -> str:
        """The backend's name in results."""
        ...

    @property
    def cache_namespace(self) -> tuple[str, ...] | None:
        """Identifies the backend's configuration in the cache; None: results are not cached."""
        ...

    @property
    def config(self) -> dict[str, Any]:
        """What to record about the backend in results (never an API key)."""
        ...

    def segment(self, texts: Sequence[str]) -> list[Units | UniMatchError]:
        """The units of each text, or the error that prevented segmenting it."""
        ...


class CallableSegmenter:
    """A user function ``text -> list of units`` (stripped, empty ones dropped; not cached)."""

    cache_namespace = None
    config: dict[str, Any] = {"custom": True}

    def __init__(self, func: Callable[[str], Sequence[str]]) -> None:
        self.func = func
        self.name = getattr(func, "__name__", repr(func))

    def segment(self, texts: Sequence[str]) -> list[Units | UniMatchError]:
        """Call the function on each text and check its units."""
        results: list[Units | UniMatchError] = []
        for text in texts:
            units = self.func(text)
            if isinstance(units, str) or not all(isinstance(u, str) for u in units):
                raise TypeError(f"segmenter {self.name} must return a list of strings")
            results.append([u.strip() for u in units if u.strip()])
        return results
