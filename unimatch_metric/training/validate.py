"""Validate UniMatch's stages against human labels: segmentation and similarity agreement.

Segmentations are lists of units; boundaries are word indices (a boundary ``i`` sits between
word ``i`` and word ``i + 1``, counted from 1). A unit boundary inside a stretch without
whitespace ("etc...I'm", "Nice--I wonder") splits it into two words for both segmentations
compared, so annotators may cut there. WindowDiff follows Pevzner & Hearst (2002)
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


def _ends(units: Sequence[str]) -> tuple[list[int], list[int]]:
    """Word ends and unit ends of a segmentation, as counts of non-space characters."""
    words, unit_ends, at = [], [], 0
    for unit in units:
        for word in unit.split():
            at += len(word)
            words.append(at)
        unit_ends.append(at)
    return words, unit_ends


def _common_words(ref: Sequence[str], hyp: Sequence[str]) -> tuple[int, set[int], set[int]] | None:
    """Words of a text cut by both segmentations (every word end and unit end of either), and
    each one's boundaries as indices into them; None if they are not of the same text."""
    (ref_words, ref_units), (hyp_words, hyp_units) = _ends(ref), _ends(hyp)
    if (ref_words or [0])[-1] != (hyp_words or [0])[-1]:
        return None
    index = {end: i for i, end in enumerate(sorted({*ref_words, *hyp_words}), 1)}
    return (
        len(index),
        {index[end] for end in ref_units[:-1]},
        {index[end] for end in hyp_units[:-1]},
    )


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

    Both segment the same texts: each pair must hold the same non-space characters.
    """
    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} hypotheses")
    grids = [_common_words(r, h) for r, h in zip(references, hypotheses, strict=True)]
    for i, (ref, hyp, grid) in enumerate(zip(references, hypotheses, grids, strict=True)):
        if grid is None:
            raise ValueError(
                f"text {i}: reference and hypothesis differ in length "
                f"({_ends(ref)[1][-1:]} / {_ends(hyp)[1][-1:]} non-space characters)"
            )
    lengths = [len(u.split()) for ref in references for u in ref]
    if k is None:
        k = max(1, round(sum(lengths) / len(lengths) / 2)) if lengths else 1
    errors = windows = tp = fp = fn = 0
    for n, rb, hb in (g for g in grids if g is not None):
        tp += len(rb & hb)
        fp += len(hb - rb)
        fn += len(rb - hb)
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
