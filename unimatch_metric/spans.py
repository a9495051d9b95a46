"""Span identification: does the feedback point where the instructor's did?

Spans are character ranges ``(start, end)`` in the paragraph. Two measures:

- **Span localisation P/R/F1** (`span_f1`): predicted spans are matched one to one to the
  instructor's by character overlap. Hard variant: a pair counts when its intersection
  over union (IoU) is at least θ (default 0.5), and the matching has the most such pairs
  (ties: the larger total IoU); P = TP/|P|, R = TP/|G|. Soft variant: the matching of
  largest total IoU, Φ = that total, P = Φ/|P|, R = Φ/|G|.
- **Anchored UniMatch** (`anchored_unimatch`): UniMatch whose pair weight also asks for
  the right place. With s the 0–4 content score of a (reference unit, predicted unit) pair
  and o the IoU of their spans, the weight is ``w = s · ((1 − λ) + λ · o)``, λ =
  ``span_weight`` (default 0.5). Content stays necessary (w = 0 when s = 0); the same
  point at the instructor's exact span keeps its full score, the same point elsewhere
  keeps (1 − λ) of it. λ = 0 is plain UniMatch; λ = 1 credits only overlapping feedback.
  Matching, P/R/F1 and their aggregation are UniMatch's own (Hungarian, Φ/(4|P|), ...).

The sticky-note rule: an instructor note is a point (``start == end``); it counts as the
span of the sentence around it (`sefora_common.text.sentence_around`: the sentence
containing the point, or the one just before it when the point falls between sentences).
An instructor span that could not be located in the paragraph (``start == -1``) is left
out of |G| and counted in ``n_unlocated_references``; a predicted item without a located
quote stays in |P| (it pointed nowhere) and is counted in ``n_unlocated_predictions``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from sefora_common.text import Span, resolve_span, span_iou
from unimatch_metric.errors import BackendError, UniMatchError
from unimatch_metric.match import f1_score, match, ratio
from unimatch_metric.options import Options
from unimatch_metric.pipeline import UniMatch
from unimatch_metric.report import ExampleResult, aggregate, failed_details
from unimatch_metric.segmenters import SEGMENTERS, Side, segment_sides

DEFAULT_THETA = 0.5
DEFAULT_SPAN_WEIGHT = 0.5


_FIGURES = ("precision", "recall", "f1", "soft_precision", "soft_recall", "soft_f1")


def iou_matrix(references: Sequence[Span | None], predictions: Sequence[Span | None]) -> np.ndarray:
    """The |G|×|P| matrix of span IoUs (0 where a span is None)."""
    return np.array(
        [[span_iou(g, p) for p in predictions] for g in references], dtype=float
    ).reshape(len(references), len(predictions))


@dataclass(frozen=True)
class SpanMatch:
    """The span matching of one paragraph, hard (IoU ≥ θ) and soft (total IoU)."""

    pairs: list[tuple[int, int, float]]  # hard matches: (reference, predicted, IoU)
    soft_total: float
    n_reference: int
    n_predicted: int
    precision: float
    recall: float
    f1: float
    soft_precision: float
    soft_recall: float
    soft_f1: float


def match_spans(
    references: Sequence[Span], predictions: Sequence[Span | None], theta: float = DEFAULT_THETA
) -> SpanMatch:
    """Match predicted spans to reference spans one to one (see the module docstring)."""
    if not 0 < theta <= 1:
        raise ValueError(f"theta must be in (0, 1], got {theta!r}")
    ious = iou_matrix(references, predictions)
    n_ref, n_pred = ious.shape
    hit = ious >= theta
    # Each matched pair is worth 1, plus a tie-breaking share of its IoU below 1 in total.
    weights = hit * (1.0 + ious / (1 + min(n_ref, n_pred)))
    rows, cols = linear_sum_assignment(weights, maximize=True)
    pairs = [
        (int(i), int(j), float(ious[i, j])) for i, j in zip(rows, cols, strict=True) if hit[i, j]
    ]
    rows, cols = linear_sum_assignment(ious, maximize=True)
    soft = float(ious[rows, cols].sum())
    p, r = ratio(len(pairs), n_pred), ratio(len(pairs), n_ref)
    sp, sr = ratio(soft, n_pred), ratio(soft, n_ref)
    return SpanMatch(pairs, soft, n_ref, n_pred, p, r, f1_score(p, r), sp, sr, f1_score(sp, sr))


def _check_lengths(**named: Sequence[Any]) -> None:
    lengths = {name: len(value) for name, value in named.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"inputs differ in length: {lengths}")


def _resolved(text: str, spans: Sequence[Sequence[int] | None]) -> list[Span | None]:
    return [None if s is None else resolve_span(text, int(s[0]), int(s[1])) for s in spans]


def span_f1(
    predictions: Sequence[Sequence[Sequence[int] | None]],
    references: Sequence[Sequence[Sequence[int]]],
    texts: Sequence[str],
    theta: float = DEFAULT_THETA,
    return_details: bool = False,
) -> dict[str, Any]:
    """Span localisation P/R/F1 over paragraphs, hard and soft, macro and micro.

    ``predictions[i]`` are the predicted spans of paragraph ``texts[i]`` (``(start, end)``,
    or None for an item whose quote was not located), ``references[i]`` the instructor's
    annotations' ``(start, end)`` (notes: ``start == end``; unlocated: -1). Macro figures
    are means over the paragraphs that have a located reference span; micro figures pool
    the matched counts (TP, Φ) and the span counts.
    """
    _check_lengths(predictions=predictions, references=references, texts=texts)
    details, results = [], []
    unlocated_refs = unlocated_preds = 0
    for text, preds, refs in zip(texts, predictions, references, strict=True):
        ref_spans = [s for s in _resolved(text, refs) if s is not None]
        pred_spans = _resolved(text, preds)
        unlocated_refs += len(refs) - len(ref_spans)
        unlocated_preds += sum(s is None for s in pred_spans)
        result = match_spans(ref_spans, pred_spans, theta) if ref_spans else None
        if result is not None:
            results.append(result)
        details.append(
            {
                "reference_spans": ref_spans,
                "predicted_spans": pred_spans,
                "matches": result.pairs if result else None,
                **{
                    k: getattr(result, k) if result else None
                    for k in (
                        "precision",
                        "recall",
                        "f1",
                        "soft_precision",
                        "soft_recall",
                        "soft_f1",
                    )
                },
            }
        )
    output = aggregate_spans(results)
    output.update(
        n_unlocated_references=unlocated_refs,
        n_unlocated_predictions=unlocated_preds,
        theta=theta,
    )
    if return_details:
        output["details"] = details
    return output


def aggregate_spans(results: Sequence[SpanMatch]) -> dict[str, Any]:
    """Macro (mean over paragraphs) and micro (pooled) span figures of ``results``."""
    names = _FIGURES
    if not results:
        return {
            **dict.fromkeys(names),
            **dict.fromkeys(f"micro_{n}" for n in names),
            "n_examples": 0,
        }
    n_pred = sum(r.n_predicted for r in results)
    n_ref = sum(r.n_reference for r in results)
    tp = sum(len(r.pairs) for r in results)
    soft = sum(r.soft_total for r in results)
    mp, mr = ratio(tp, n_pred), ratio(tp, n_ref)
    sp, sr = ratio(soft, n_pred), ratio(soft, n_ref)
    return {
        **{n: float(np.mean([getattr(r, n) for r in results])) for n in names},
        "micro_precision": mp,
        "micro_recall": mr,
        "micro_f1": f1_score(mp, mr),
        "micro_soft_precision": sp,
        "micro_soft_recall": sr,
        "micro_soft_f1": f1_score(sp, sr),
        "n_examples": len(results),
        "n_predicted_spans": n_pred,
        "n_reference_spans": n_ref,
    }


# --- anchored UniMatch --------------------------------------------------------------------


def anchored_weights(scores: np.ndarray, overlaps: np.ndarray, span_weight: float) -> np.ndarray:
    """The pair weights of anchored UniMatch: ``s · ((1 − λ) + λ · o)``, λ = span_weight."""
    if not 0 <= span_weight <= 1:
        raise ValueError(f"span_weight must be in [0, 1], got {span_weight!r}")
    return scores * ((1.0 - span_weight) + span_weight * overlaps)


Item = tuple[str, Sequence[int] | None]  # a predicted (comment, span or None)
Reference = tuple[str, Sequence[int]]  # an instructor's (comment, (start, end))


def anchored_unimatch(
    predictions: Sequence[Sequence[Item]],
    references: Sequence[Sequence[Reference]],
    texts: Sequence[str],
    span_weight: float = DEFAULT_SPAN_WEIGHT,
    theta: float = DEFAULT_THETA,
    **options: Any,
) -> dict[str, Any]:
    """Anchored UniMatch of anchored feedback against the instructor's annotations.

    ``predictions[i]`` lists the model's ``(comment, span)`` items on paragraph ``texts[i]``
    (span ``(start, end)`` or None when unlocated), ``references[i]`` the instructor's
    ``(comment, (start, end))`` (a note: ``start == end``; unlocated: -1). Each comment is
    segmented into units that inherit its span; the units are scored by UniMatch's scorer
    (the same pipeline, options and cache as `unimatch`), weighted by `anchored_weights` and
    matched. Returns UniMatch's figures (``precision``, ``recall``, ``f1``, ``micro_*``, ...)
    under these weights, the same figures unweighted as ``content_*`` (λ = 0), and the span
    figures of `span_f1` as ``span_*``; ``details`` with ``return_details=True``. A
    reference without a comment (a bare highlight) gives no unit but its span still counts
    in the span figures.
    """
    _check_lengths(predictions=predictions, references=references, texts=texts)
    opts = Options.from_kwargs(**options)
    if not 0 <= span_weight <= 1:
        raise ValueError(f"span_weight must be in [0, 1], got {span_weight!r}")
    n = len(texts)
    pred_spans = [
        _resolved(t, [s for _, s in items]) for t, items in zip(texts, predictions, strict=True)
    ]
    ref_spans = [
        _resolved(t, [s for _, s in items]) for t, items in zip(texts, references, strict=True)
    ]

    # Units: each comment segmented (as UniMatch would), each unit keeping its item's span.
    segmenter = SEGMENTERS.create(opts.segmenter, opts)
    segmented = segment_sides(
        [c for items in predictions for c, _ in items if c.strip()],
        [c for items in references for c, _ in items if c.strip() and opts.segment_references],
        segmenter,
        opts,
    )
    errors: dict[int, str] = {}

    def units(
        i: int,
        items: Sequence[tuple[str, Any]],
        spans: list[Span | None],
        side: Side,
        split: bool,
    ) -> tuple[list[str], list[Span | None]]:
        """The units of example ``i``'s comments, each with its comment's span."""
        texts_: list[str] = []
        spans_: list[Span | None] = []
        for (comment, _), span in zip(items, spans, strict=True):
            pieces = segmented[side][comment] if split and comment.strip() else [comment]
            if isinstance(pieces, UniMatchError):
                if opts.on_error == "raise":
                    raise BackendError(f"example {i}: {pieces}") from pieces
                errors.setdefault(i, str(pieces))
                return [], []
            for piece in pieces:
                if piece.strip():
                    texts_.append(piece.strip())
                    spans_.append(span)
        return texts_, spans_

    pred_units = [units(i, predictions[i], pred_spans[i], "feedback", True) for i in range(n)]
    ref_units = [
        units(i, references[i], ref_spans[i], "instructor", opts.segment_references)
        for i in range(n)
    ]
    live = [i for i in range(n) if i not in errors]

    # Content scores: UniMatch itself, on the ready units.
    result = UniMatch(**options).compute(
        [pred_units[i][0] for i in live],
        [ref_units[i][0] for i in live],
        return_details=True,
        segment_references=False,
    )
    by_example: dict[int, ExampleResult] = {}
    plain: dict[int, ExampleResult] = {}
    for i, detail in zip(live, result["details"], strict=True):
        if detail["error"] is not None:
            errors[i] = detail["error"]
            continue
        scores = np.asarray(detail["scores"], dtype=float).reshape(
            len(ref_units[i][0]), len(pred_units[i][0])
        )
        overlaps = iou_matrix(ref_units[i][1], pred_units[i][1])
        weights = anchored_weights(scores, overlaps, span_weight)
        units_p, units_g = pred_units[i][0], ref_units[i][0]
        by_example[i] = ExampleResult(units_p, units_g, weights, match(weights, opts.threshold))
        plain[i] = ExampleResult(units_p, units_g, scores, match(scores, opts.threshold))

    kept = sorted(by_example)
    output = aggregate([by_example[i] for i in kept], opts.threshold)
    content_figures = aggregate([plain[i] for i in kept], opts.threshold)
    output.update({f"content_{k}": v for k, v in content_figures.items() if k != "n_examples"})
    spans = span_f1(
        [pred_spans[i] for i in kept],
        [[s for _, s in references[i]] for i in kept],
        [texts[i] for i in kept],
        theta,
        return_details=opts.return_details,
    )
    span_details = spans.pop("details", None)
    output.update({f"span_{k}": v for k, v in spans.items()})
    output["n_failed"] = len(errors)
    output["config"] = {
        **result["config"],
        "segment_references": opts.segment_references,
        "span_weight": span_weight,
        "theta": theta,
    }
    if opts.return_details:
        span_by = dict(zip(kept, span_details or [], strict=True))
        output["details"] = [
            {
                **by_example[i].details(),
                "content_scores": plain[i].scores.tolist(),
                "prediction_spans": pred_units[i][1],
                "reference_spans": ref_units[i][1],
                "span": span_by[i],
            }
            if i in by_example
            else failed_details(errors[i])
            for i in range(n)
        ]
    return output
