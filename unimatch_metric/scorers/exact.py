"""The exact scorer, a sanity check: 4 for units equal up to case and spacing, else 0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sefora_common.text import normalise
from unimatch_metric.errors import UniMatchError
from unimatch_metric.scorers.base import Pair


class ExactScorer:
    """4 for units equal up to case and whitespace, 0 otherwise (not cached)."""

    name = "exact"
    cache_namespace = None
    config: dict[str, Any] = {}

    def score(self, pairs: Sequence[Pair]) -> list[float | UniMatchError]:
        """Compare the normalised texts of each pair."""
        return [4.0 if normalise(a) == normalise(b) else 0.0 for a, b in pairs]
