"""Segmentation and score agreement figures on hand-worked examples."""

from __future__ import annotations

import pytest

from unimatch_metric.training.validate import boundaries, score_agreement, segmentation_agreement


def test_boundaries_are_word_indices() -> None:
    assert boundaries(["Nice image,", "but it runs on.", "Cut it."]) == {2, 6}
    assert boundaries(["One unit only."]) == set()


def test_identical_segmentations_agree_perfectly() -> None:
    units = [["a b c", "d e"], ["f g h i"]]
    result = segmentation_agreement(units, units)
    assert (result.window_diff, result.precision, result.recall, result.f1) == (0, 1, 1, 1)


def test_hand_worked_window_diff_and_boundary_f1() -> None:
    # 6 words; reference boundary after word 3, hypothesis after word 2 and word 4.
    ref = [["w1 w2 w3", "w4 w5 w6"]]
    hyp = [["w1 w2", "w3 w4", "w5 w6"]]
    result = segmentation_agreement(ref, hyp, k=2)
    # Windows of 2 gaps over gaps 1..5: (1,2) (2,3) (3,4) (4,5):
    # ref counts 0,1,1,0; hyp counts 1,1,1,1 -> 2 disagreements of 4 windows.
    assert result.window_diff == pytest.approx(0.5)
    assert (result.precision, result.recall, result.f1) == (0.0, 0.0, 0.0)
    # k defaults to half the mean reference unit length: (3 + 3) / 2 / 2 = 1.5 -> 2.
    assert segmentation_agreement(ref, hyp).k == 2


def test_pooled_boundary_precision_recall() -> None:
    ref = [["a b", "c d", "e f"], ["g h i"]]
    hyp = [["a b", "c d e f"], ["g", "h i"]]
    result = segmentation_agreement(ref, hyp)
    assert result.precision == pytest.approx(1 / 2)  # {2} right, {1} in text 2 wrong
    assert result.recall == pytest.approx(1 / 2)  # {2} found, {4} missed
    assert result.f1 == pytest.approx(1 / 2)


def test_mismatched_texts_are_rejected() -> None:
    with pytest.raises(ValueError, match="text 0"):
        segmentation_agreement([["a b c"]], [["a b"]])
    with pytest.raises(ValueError, match="1 references but 2"):
        segmentation_agreement([["a"]], [["a"], ["b"]])


def test_score_agreement() -> None:
    result = score_agreement([0, 1, 2, 3, 4], [0.5, 1, 2.5, 2.5, 4])
    assert result.pearson > 0.95 and result.spearman > 0.95
    assert result.mean_absolute_error == pytest.approx(0.3)
    assert score_agreement([0, 1, 2], [2, 1, 0]).pearson == pytest.approx(-1)
