"""Quadratic weighted kappa (QWK): agreement of ordinal score predictions with labels."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def _ratings(values: Sequence[Any], name: str) -> list[int]:
    out = []
    for i, v in enumerate(values):
        number = float(v) if isinstance(v, (int, float, np.integer, np.floating)) else math.nan
        if isinstance(v, bool) or not (math.isfinite(number) and number.is_integer()):
            raise ValueError(f"{name}[{i}] must be an integer rating, got {v!r}")
        out.append(int(number))
    return out


def quadratic_weighted_kappa(y_true: Sequence[int], y_pred: Sequence[int]) -> float:
    """Cohen's kappa with quadratic weights (QWK) between two lists of integer ratings.

    A disagreement between ratings a and b weighs (a - b)^2: the distance of the values, not
    of their ranks among the ratings seen, as in the ASAP essay-scoring benchmark (the value
    does not depend on the scale's unused end points). NaN when undefined (every rating in
    both lists is the same value).
    """
    true, pred = _ratings(y_true, "y_true"), _ratings(y_pred, "y_pred")
    if len(true) != len(pred) or not true:
        raise ValueError(f"need two non-empty lists of equal length, got {len(true)}, {len(pred)}")
    low = min(true + pred)
    size = max(true + pred) - low + 1
    observed = np.zeros((size, size))
    np.add.at(observed, (np.array(true) - low, np.array(pred) - low), 1)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / len(true)
    index = np.arange(size)
    weights = (index[:, None] - index[None, :]) ** 2
    denominator = float((weights * expected).sum())
    if denominator == 0:
        return math.nan
    return 1.0 - float((weights * observed).sum()) / denominator
