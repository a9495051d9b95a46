"""Validate UniMatch against human labels: segmentation and similarity agreement of its
stages, and end to end, how its F1 follows judges' ratings of candidate feedback texts.

Segmentations are lists of units; boundaries are word indices (a boundary ``i`` sits between
word ``i`` and word ``i + 1``, counted from 1). A unit boundary inside a stretch without
whitespace ("etc...I'm", "Nice--I wonder") splits it into two words for both segmentations
compared, so annotators may cut there. WindowDiff follows Pevzner & Hearst (2002)
with ``k`` = half the mean reference unit length in words unless given; boundary precision,
recall and F1 count boundary indices only (true negatives excluded). Figures are pooled over
all texts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from sefora_common import jsonl
from unimatch_metric.errors import UniMatchInputError
from unimatch_metric.segmenters.base import Side


def side_of(row: dict[str, Any]) -> Side:
    """The side a labelled text is segmented as: its ``source`` (``"instructor"`` or, for
    model-style feedback and rows without one, ``"feedback"``)."""
    return "instructor" if row.get("source") == "instructor" else "feedback"


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


def segmenter_validation(
    rows: Sequence[dict[str, Any]],
    segment: Callable[[list[str], Side], Sequence[Sequence[str]]],
    k: int | None = None,
) -> dict[str, Any]:
    """Agreement of ``segment(texts, side)`` with labelled ``rows`` (``text``, ``units``,
    ``source``), each side segmented as such: pooled, and per source as ``by_source``."""
    hyps: list[Sequence[str]] = [[] for _ in rows]
    for side in ("feedback", "instructor"):
        at = [i for i, r in enumerate(rows) if side_of(r) == side]
        for i, units in zip(at, segment([rows[i]["text"] for i in at], side), strict=True):
            hyps[i] = units
    refs = [r["units"] for r in rows]
    out: dict[str, Any] = asdict(segmentation_agreement(refs, hyps, k))
    sources = sorted({str(r.get("source", "")) for r in rows} - {""})
    if sources:
        out["by_source"] = {
            source: asdict(
                segmentation_agreement(
                    [refs[i] for i, r in enumerate(rows) if r.get("source") == source],
                    [hyps[i] for i, r in enumerate(rows) if r.get("source") == source],
                    k,
                )
            )
            for source in sources
        }
    return out


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


@dataclass(frozen=True)
class EndToEndAgreement:
    """Agreement of a metric's per-candidate values with judges' quality ratings."""

    pooled_pearson: float | None
    mean_paragraph_spearman: float | None
    n_candidates: int
    n_paragraphs: int


def end_to_end_agreement(
    metric: Sequence[float],
    scores: Sequence[float],
    ranks: Sequence[float],
    paragraphs: Sequence[str],
    trivial: Sequence[bool],
) -> EndToEndAgreement:
    """How far a metric's values for candidate feedback texts follow judges' ratings.

    Pearson of ``metric`` with the judges' ``scores`` pooled over every candidate, and the
    mean over paragraphs of the Spearman correlation of ``metric`` with the judges' ``ranks``
    (1 = best) over each paragraph's non-``trivial`` candidates. A paragraph where the
    metric gives those candidates one value counts as 0 (it ranks nothing); one whose
    judges tie them all is left out. A correlation that is undefined (the metric or the
    judges give every candidate one value; no paragraph left) is None.
    """
    if not len(metric) == len(scores) == len(ranks) == len(paragraphs) == len(trivial):
        raise ValueError("metric, scores, ranks, paragraphs and trivial differ in length")
    if len(metric) < 2:
        raise ValueError("need at least two candidates")
    groups: dict[str, list[int]] = {}
    for i, (paragraph, easy) in enumerate(zip(paragraphs, trivial, strict=True)):
        if not easy:
            groups.setdefault(paragraph, []).append(i)
    rhos = []
    for rows in groups.values():
        m, r = [metric[i] for i in rows], [-ranks[i] for i in rows]
        if len(rows) < 2 or len(set(r)) < 2:
            continue
        rhos.append(0.0 if len(set(m)) < 2 else float(stats.spearmanr(m, r).statistic))
    constant = len(set(metric)) < 2 or len(set(scores)) < 2
    return EndToEndAgreement(
        pooled_pearson=None if constant else float(stats.pearsonr(metric, scores).statistic),
        mean_paragraph_spearman=float(np.mean(rhos)) if rhos else None,
        n_candidates=len(metric),
        n_paragraphs=len(rhos),
    )


def end_to_end_interval(
    metric: Sequence[float],
    scores: Sequence[float],
    ranks: Sequence[float],
    paragraphs: Sequence[str],
    trivial: Sequence[bool],
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, tuple[float, float] | None]:
    """95 % paragraph-bootstrap intervals of `end_to_end_agreement`'s two figures.

    Paragraphs are drawn with replacement (one drawn twice counts as two paragraphs), the
    figures recomputed on each of ``resamples`` draws (seeded, so the interval is
    repeatable) and their 2.5th and 97.5th percentiles returned. A draw on which a figure is
    undefined (see `end_to_end_agreement`) is left out of that figure's interval; a figure
    undefined on every draw has None. Candidates are resampled with their paragraph, as a
    paragraph's candidates share its instructor comments and judges.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    rows: dict[str, list[int]] = {}
    for i, paragraph in enumerate(paragraphs):
        rows.setdefault(paragraph, []).append(i)
    names = sorted(rows)
    rng = np.random.default_rng(seed)
    pooled, per_paragraph = [], []
    for _ in range(resamples):
        drawn = rng.integers(len(names), size=len(names))
        picked = [(k, i) for k, n in enumerate(drawn) for i in rows[names[n]]]
        result = end_to_end_agreement(
            [metric[i] for _, i in picked],
            [scores[i] for _, i in picked],
            [ranks[i] for _, i in picked],
            [f"{paragraphs[i]}#{k}" for k, i in picked],
            [trivial[i] for _, i in picked],
        )
        if result.pooled_pearson is not None:
            pooled.append(result.pooled_pearson)
        if result.mean_paragraph_spearman is not None:
            per_paragraph.append(result.mean_paragraph_spearman)

    def interval(values: list[float]) -> tuple[float, float] | None:
        if not values:
            return None
        low, high = np.percentile(values, [2.5, 97.5])
        return float(low), float(high)

    return {"pooled_pearson": interval(pooled), "mean_paragraph_spearman": interval(per_paragraph)}


def read_end_to_end(folder: Path) -> list[dict[str, Any]]:
    """The candidates of an end-to-end validation set with their paragraph's instructor
    comments and the judges' mean score and mean rank position (1 = best).

    ``folder`` holds ``paragraphs.jsonl`` (``e2e_id``, ``instructor_comments``, optionally
    the paragraph's text as ``body``; ``paragraph`` is None without it),
    ``candidates.jsonl`` (``candidate_id``, ``e2e_id``, ``letter``, ``kind``, ``text``) and
    ``raw/rankings_*.jsonl``, one file per judge (``e2e_id``, ``scores`` and ``ranking`` by
    letter). A judge rates whole paragraphs (every candidate of each paragraph it has a line
    for); every paragraph needs at least one judge (batches may have their own judges).
    """

    def rows(path: Path, keys: tuple[str, ...]) -> list[dict]:
        out = []
        for line, row in jsonl.read_jsonl(path, UniMatchInputError):
            missing = [k for k in keys if k not in row]
            if missing:
                raise UniMatchInputError(path, f"line {line}", f"missing {', '.join(missing)}")
            out.append(row)
        return out

    paragraphs = rows(folder / "paragraphs.jsonl", ("e2e_id", "instructor_comments"))
    comments = {r["e2e_id"]: r["instructor_comments"] for r in paragraphs}
    bodies = {r["e2e_id"]: r.get("body") for r in paragraphs}
    candidates = rows(
        folder / "candidates.jsonl", ("candidate_id", "e2e_id", "letter", "kind", "text")
    )
    judges = sorted((folder / "raw").glob("rankings_*.jsonl"))
    if not judges:
        raise UniMatchInputError(folder / "raw", "", "no judges' file rankings_*.jsonl")
    rated: dict[str, list[dict]] = {}  # e2e_id -> its judges' lines
    for path in judges:
        for r in rows(path, ("e2e_id", "scores", "ranking")):
            rated.setdefault(r["e2e_id"], []).append({**r, "judge": path.stem.split("_", 1)[1]})
    out = []
    for c in candidates:
        if c["e2e_id"] not in comments:
            raise UniMatchInputError(folder / "paragraphs.jsonl", c["e2e_id"], "no such paragraph")
        lines = rated.get(c["e2e_id"], [])
        if not lines:
            raise UniMatchInputError(folder / "raw", c["candidate_id"], "rated by no judge")
        for r in lines:
            if c["letter"] not in r["scores"] or c["letter"] not in r["ranking"]:
                raise UniMatchInputError(
                    folder / "raw",
                    c["candidate_id"],
                    f"judge {r['judge']} rated its paragraph but did not score and rank it",
                )
        out.append(
            {
                **c,
                "references": comments[c["e2e_id"]],
                "paragraph": bodies[c["e2e_id"]],
                "score": float(np.mean([float(r["scores"][c["letter"]]) for r in lines])),
                "rank": float(np.mean([r["ranking"].index(c["letter"]) + 1 for r in lines])),
                "judges": len(lines),
            }
        )
    return out


#: The kind of candidate that `judgements` marks trivial: feedback on another paragraph.
TRIVIAL_KIND = "off_paragraph"


def judgements(
    candidates: Sequence[dict[str, Any]],
) -> tuple[list[float], list[float], list[str], list[bool]]:
    """The judges' scores, ranks, paragraphs and trivial flags of `read_end_to_end`'s
    ``candidates``, as `end_to_end_agreement` and `end_to_end_interval` take them after the
    metric's values."""
    return (
        [c["score"] for c in candidates],
        [c["rank"] for c in candidates],
        [c["e2e_id"] for c in candidates],
        [c["kind"] == TRIVIAL_KIND for c in candidates],
    )


def mean_by_kind(values: Sequence[float], candidates: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The mean of a metric's ``values`` over each kind of candidate, kinds sorted."""
    kinds: dict[str, list[float]] = {}
    for value, c in zip(values, candidates, strict=True):
        kinds.setdefault(c["kind"], []).append(value)
    return {k: float(np.mean(kinds[k])) for k in sorted(kinds)}
