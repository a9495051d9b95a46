"""What a segmentation backend is, and the wrapper that makes a user function one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from unimatch_metric.errors import UniMatchError

Units = list[str]

#: Which side of UniMatch a text is on: feedback being evaluated (a model's, by default) or
#: the instructor's comments it is compared with. Instructor comments are often terse
#: ("Nice hook. Cite your sources."), so a backend may cut them differently.
Side = Literal["feedback", "instructor"]
SIDES: tuple[Side, ...] = ("feedback", "instructor")


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

    @property
    def sided(self) -> bool:
        """Whether `segment` cuts instructor comments differently (then cached apart)."""
        ...

    def segment(self, texts: Sequence[str], side: Side = "feedback") -> list[Units | UniMatchError]:
        """The units of each text (all on one ``side``), or the error that prevented it."""
        ...


class CallableSegmenter:
    """A user function ``text -> list of units`` (stripped, empty ones dropped; not cached)."""

    cache_namespace = None
    config: dict[str, Any] = {"custom": True}
    sided = False

    def __init__(self, func: Callable[[str], Sequence[str]]) -> None:
        self.func = func
        self.name = getattr(func, "__name__", repr(func))

    def segment(self, texts: Sequence[str], side: Side = "feedback") -> list[Units | UniMatchError]:
        """Call the function on each text and check its units (both sides alike)."""
        results: list[Units | UniMatchError] = []
        for text in texts:
            units = self.func(text)
            if isinstance(units, str) or not all(isinstance(u, str) for u in units):
                raise TypeError(f"segmenter {self.name} must return a list of strings")
            results.append([u.strip() for u in units if u.strip()])
        return results
