"""One-to-one matching of reference and predicted feedback units, and its P/R/F1.

Soft variant (the default): maximum-weight bipartite matching (Hungarian algorithm) over
the 0–4 similarity matrix; with Φ the matched weight, P = Φ/(4|P|), R = Φ/(4|G|).
Threshold variant: an edge wherever the score is at least τ, a maximum-cardinality
matching, and hard P = TP/|P|, R = TP/|G| with TP the matching size.

Empty sides: a ratio whose denominator is 0 is undefined and reported as 0 (no predicted
unit → P = 0; no reference unit → R = 0); F1 is 0 whenever P + R = 0.

A matched pair *recovers* the instructor's point only if it scores at least `RECOVERED_AT`
(2: the two units share an important point), or τ in the threshold variant: the
assignment pairs every unit it can, and a pair scoring 0.1 ("unrelated") recovers nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import linear_sum_assignment

MAX_SCORE = 4.0
#: The least score of a matched pair that counts as recovering a point (soft variant).
RECOVERED_AT = 2.0


@dataclass(frozen=True)
class MatchResult:
    """The matching of one paragraph and its precision, recall and F1.

    ``pairs`` lists the matched (reference index, predicted index, score) triples with a
    positive score (soft) or a score ≥ ``threshold`` (hard), ordered by reference index.
    ``total`` is Φ, the matched weight (soft), or TP, the matching size (hard).
    """

    pairs: list[tuple[int, int, float]]
    total: float
    n_reference: int
    n_predicted: int
    precision: float
    recall: float
    f1: float
    threshold: float | None = None

    @property
    def recovered_at(self) -> float:
        """The least score of a recovered point: τ, or `RECOVERED_AT` for the soft variant."""
        return RECOVERED_AT if self.threshold is None else self.threshold

    @property
    def n_recovered(self) -> int:
        """Instructor points recovered: matched pairs scoring at least `recovered_at`."""
        return sum(1 for _, _, score in self.pairs if score >= self.recovered_at)

    @property
    def tp(self) -> int:
        """Matched pairs (hard variant); for the soft variant, the number of positive pairs."""
        return len(self.pairs)

    @property
    def fp(self) -> int:
        """Predicted units left unmatched."""
        return self.n_predicted - self.tp

    @property
    def fn(self) -> int:
        """Reference units left unmatched."""
        return self.n_reference - self.tp


def f1_score(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall; 0 when both are 0."""
    total = precision + recall
    return 2 * precision * recall / total if total > 0 else 0.0


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, and 0 for an empty denominator (undefined → 0)."""
    return numerator / denominator if denominator > 0 else 0.0


def as_score_matrix(scores: ArrayLike) -> np.ndarray:
    """``scores`` as a float |G|×|P| array, checked to lie in [0, 4].

    An empty 1-D input (``[]``) is read as a 0×0 matrix.
    """
    matrix = np.asarray(scores, dtype=float)
    if matrix.ndim == 1 and matrix.size == 0:
        matrix = matrix.reshape(0, 0)
    if matrix.ndim != 2:
        raise ValueError(f"scores must be a 2-D |G|x|P| matrix, got shape {matrix.shape}")
    if matrix.size and not (
        np.isfinite(matrix).all() and matrix.min() >= 0 and matrix.max() <= MAX_SCORE
    ):
        raise ValueError("scores must be finite numbers between 0 and 4")
    return matrix


def match(scores: ArrayLike, threshold: float | None = None) -> MatchResult:
    """Match reference units (rows) to predicted units (columns) one to one.

    With ``threshold=None`` the soft variant (maximum total score); with ``threshold=τ``
    the hard variant (maximum number of pairs scoring at least τ, τ in (0, 4]).
    """
    matrix = as_score_matrix(scores)
    n_ref, n_pred = matrix.shape
    if threshold is not None and not 0 < threshold <= MAX_SCORE:
        raise ValueError(f"threshold must be in (0, 4], got {threshold}")
    weights = matrix if threshold is None else (matrix >= threshold).astype(float)
    rows, cols = linear_sum_assignment(weights, maximize=True)
    pairs = [
        (int(i), int(j), float(matrix[i, j]))
        for i, j in zip(rows, cols, strict=True)
        if weights[i, j] > 0
    ]
    if threshold is None:
        total = float(sum(score for _, _, score in pairs))
        precision = ratio(total, MAX_SCORE * n_pred)
        recall = ratio(total, MAX_SCORE * n_ref)
    else:
        total = float(len(pairs))
        precision = ratio(total, n_pred)
        recall = ratio(total, n_ref)
    return MatchResult(
        pairs=pairs,
        total=total,
        n_reference=n_ref,
        n_predicted=n_pred,
        precision=precision,
        recall=recall,
        f1=f1_score(precision, recall),
        threshold=threshold,
    )
