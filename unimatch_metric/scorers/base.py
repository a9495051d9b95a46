"""What a scoring backend is, and the wrapper that makes a user function one."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from unimatch_metric.errors import UniMatchError

Pair = tuple[str, str]


class Scorer(Protocol):
    """What a scoring backend provides."""

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

    def score(self, pairs: Sequence[Pair]) -> list[float | UniMatchError]:
        """A 0–4 score for each pair, or the error that prevented scoring it."""
        ...


class CallableScorer:
    """A user function ``pairs -> scores``, checked to give one score in [0, 4] per pair."""

    cache_namespace = None
    config: dict[str, Any] = {"custom": True}

    def __init__(self, func: Callable[[list[Pair]], Sequence[float]]) -> None:
        self.func = func
        self.name = getattr(func, "__name__", repr(func))

    def score(self, pairs: Sequence[Pair]) -> list[float | UniMatchError]:
        """Call the function once on all pairs and check what it returns."""
        if not pairs:
            return []
        scores: list[float | UniMatchError] = [float(s) for s in self.func(list(pairs))]
        if len(scores) != len(pairs):
            raise ValueError(
                f"scorer {self.name} returned {len(scores)} scores for {len(pairs)} pairs"
            )
        if not all(isinstance(s, float) and math.isfinite(s) and 0 <= s <= 4 for s in scores):
            raise ValueError(f"scorer {self.name} must return finite scores between 0 and 4")
        return scores
