"""UniMatch stage 3: Hungarian matching and P/R/F1 on hand-worked examples and against brute
force over every one-to-one matching."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from unimatch_metric import MatchResult, match


def test_soft_hand_worked():
    # G = 2 reference units, P = 3 predicted units.
    scores = [
        [4, 1, 0],
        [3, 2, 0],
    ]
    # Greedy would take (0,0)=4 then (1,1)=2 -> 6; the optimum is the same 6 vs (0,1)+(1,0)=4.
    result = match(scores)
    assert isinstance(result, MatchResult)
    assert result.total == 6
    assert result.pairs == [(0, 0, 4.0), (1, 1, 2.0)]
    assert result.precision == pytest.approx(6 / 12)  # Φ / (4|P|)
    assert result.recall == pytest.approx(6 / 8)  # Φ / (4|G|)
    assert result.f1 == pytest.approx(2 * 0.5 * 0.75 / 1.25)


def test_soft_needs_global_optimum_not_greedy():
    # Greedy picks (0,0)=4 and then (1,1)=0 -> 4; the optimum pairs (0,1)=3 and (1,0)=3 -> 6.
    result = match([[4, 3], [3, 0]])
    assert result.total == 6
    assert sorted(result.pairs) == [(0, 1, 3.0), (1, 0, 3.0)]
    assert result.precision == pytest.approx(6 / 8)
    assert result.recall == pytest.approx(6 / 8)


def test_soft_zero_score_pairs_are_not_listed():
    result = match([[0, 0], [0, 2.5]])
    assert result.pairs == [(1, 1, 2.5)]
    assert result.total == 2.5


def test_threshold_hand_worked():
    scores = [
        [4, 3, 0],
        [3, 1, 0],
        [0, 0, 2],
    ]
    # τ = 3: edges (0,0), (0,1), (1,0) -> maximum matching {(0,1), (1,0)} has 2 pairs.
    hard = match(scores, threshold=3)
    assert hard.total == 2
    assert sorted((i, j) for i, j, _ in hard.pairs) == [(0, 1), (1, 0)]
    assert (hard.tp, hard.fp, hard.fn) == (2, 1, 1)
    assert hard.precision == pytest.approx(2 / 3)
    assert hard.recall == pytest.approx(2 / 3)
    # τ = 2 adds (2,2).
    assert match(scores, threshold=2).total == 3
    # τ = 4: only (0,0).
    four = match(scores, threshold=4)
    assert four.pairs == [(0, 0, 4.0)]
    assert four.precision == pytest.approx(1 / 3)


def test_threshold_on_unequal_sides():
    hard = match([[4, 4, 4, 4]], threshold=1)  # one reference, four predictions
    assert (hard.tp, hard.fp, hard.fn) == (1, 3, 0)
    assert hard.precision == 0.25
    assert hard.recall == 1.0
    assert hard.f1 == pytest.approx(0.4)


@pytest.mark.parametrize(
    "shape, precision, recall",
    [
        ((2, 0), 0.0, 0.0),  # no predicted unit: P undefined -> 0, R = 0
        ((0, 3), 0.0, 0.0),  # no reference unit: R undefined -> 0, P = 0
        ((0, 0), 0.0, 0.0),
    ],
)
@pytest.mark.parametrize("threshold", [None, 2])
def test_empty_sides(shape, precision, recall, threshold):
    result = match(np.zeros(shape), threshold=threshold)
    assert (result.precision, result.recall, result.f1) == (precision, recall, 0.0)
    assert (result.n_reference, result.n_predicted) == shape
    assert result.pairs == []


def test_empty_list_is_empty_matrix():
    assert match([]).n_reference == 0


@pytest.mark.parametrize("bad", [[[5.0]], [[-1.0]], [[float("nan")]], [1, 2], [[[1]]]])
def test_invalid_scores_rejected(bad):
    with pytest.raises(ValueError):
        match(bad)


@pytest.mark.parametrize("tau", [0, -1, 4.5])
def test_invalid_threshold_rejected(tau):
    with pytest.raises(ValueError, match="threshold"):
        match([[1.0]], threshold=tau)


def brute_force(matrix: np.ndarray, threshold: float | None) -> float:
    """The best total over every one-to-one matching (partial matchings included)."""
    weights = matrix if threshold is None else (matrix >= threshold).astype(float)
    n_ref, n_pred = weights.shape
    best = 0.0
    small, large = (n_ref, n_pred) if n_ref <= n_pred else (n_pred, n_ref)
    w = weights if n_ref <= n_pred else weights.T
    for chosen in itertools.permutations(range(large), small):
        best = max(best, float(sum(w[i, j] for i, j in enumerate(chosen))))
    return best


score_matrices = st.tuples(st.integers(0, 4), st.integers(0, 5)).flatmap(
    lambda shape: arrays(
        float,
        shape,
        elements=st.one_of(
            st.integers(0, 4).map(float), st.floats(0, 4, allow_nan=False, width=32)
        ),
    )
)


@settings(max_examples=200, deadline=None)
@given(score_matrices, st.sampled_from([None, 1, 2, 3, 4]))
def test_hungarian_equals_brute_force(matrix, threshold):
    result = match(matrix, threshold=threshold)
    assert result.total == pytest.approx(brute_force(matrix, threshold), abs=1e-9)
    # The reported pairs form a valid one-to-one matching whose weight is the total.
    rows = [i for i, _, _ in result.pairs]
    cols = [j for _, j, _ in result.pairs]
    assert len(set(rows)) == len(rows) and len(set(cols)) == len(cols)
    for i, j, score in result.pairs:
        assert score == matrix[i, j]
    if threshold is None:
        assert result.total == pytest.approx(sum(s for _, _, s in result.pairs))
    else:
        assert all(s >= threshold for _, _, s in result.pairs)
    assert 0 <= result.precision <= 1 and 0 <= result.recall <= 1
