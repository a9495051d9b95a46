"""Validate UniMatch's stages against human labels: segmentation and similarity agreement.

Segmentations are lists of units; boundaries are word indices (a boundary ``i`` sits between
word ``i`` and word ``i + 1``, counted from 1). WindowDiff follows Pevzner & Hearst (2002)
with ``k`` = half the mean reference unit length in words unless given; boundary precision,
recall and F1 count boundary indices only (true negatives excluded). Figures are pooled over
all texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


def boundaries(units: Sequence[str]) -> set[int]:
    """Word indices after which a new unit starts (the end of the last unit is not one)."""
    out, total = set(), 0
    for unit in units[:-1]:
        total += len(unit.split())
        out.add(total)
    return out


def _word_count(units: Sequence[str]) -> int:
    return sum(len(u.split()) for u in units)


@dataclass(frozen=True)
class SegmentationAgreement:
    """Pooled agreement of hypothesis segmentations with reference ones."""

    window_diff: float
    precision: float
    recall: float
    f1: float
    k: int
    n_texts: int


def segmentation_agreement(
    references: Sequence[Sequence[str]],
    hypotheses: Sequence[Sequence[str]],
    k: int | None = None,
) -> SegmentationAgreement:
    """WindowDiff and boundary P/R/F1 of ``hypotheses`` against ``references``.

    Both segment the same texts: each pair must cover the same number of words.
    """
    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} hypotheses")
    for i, (ref, hyp) in enumerate(zip(references, hypotheses, strict=True)):
        if _word_count(ref) != _word_count(hyp):
            raise ValueError(
                f"text {i}: reference has {_word_count(ref)} words, hypothesis {_word_count(hyp)}"
            )
    lengths = [len(u.split()) for ref in references for u in ref]
    if k is None:
        k = max(1, round(sum(lengths) / len(lengths) / 2)) if lengths else 1
    errors = windows = tp = fp = fn = 0
    for ref, hyp in zip(references, hypotheses, strict=True):
        rb, hb = boundaries(ref), boundaries(hyp)
        tp += len(rb & hb)
        fp += len(hb - rb)
        fn += len(rb - hb)
        n = _word_count(ref)
        for i in range(n - k):  # window covers the gaps after words i+1 .. i+k
            r = sum(1 for b in rb if i < b <= i + k)
            h = sum(1 for b in hb if i < b <= i + k)
            errors += r != h
            windows += 1
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return SegmentationAgreement(
        window_diff=errors / windows if windows else 0.0,
        precision=precision,
        recall=recall,
        f1=f1,
        k=k,
        n_texts=len(references),
    )


@dataclass(frozen=True)
class ScoreAgreement:
    """Correlation of predicted pair scores with labelled ones."""

    pearson: float
    spearman: float
    mean_absolute_error: float
    n_pairs: int


def score_agreement(
    labels: Sequence[float], predictions: Sequence[float] | np.ndarray
) -> ScoreAgreement:
    """Pearson, Spearman and mean absolute error of predicted 0-4 scores against labels."""
    if len(labels) != len(predictions):
        raise ValueError(f"{len(labels)} labels but {len(predictions)} predictions")
    if len(labels) < 2:
        raise ValueError("need at least two labelled pairs")
    return ScoreAgreement(
        pearson=float(stats.pearsonr(labels, predictions).statistic),
        spearman=float(stats.spearmanr(labels, predictions).statistic),
        mean_absolute_error=sum(abs(a - b) for a, b in zip(labels, predictions, strict=True))
        / len(labels),
        n_pairs=len(labels),
    )
