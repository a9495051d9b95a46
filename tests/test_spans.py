"""Span identification on hand-built paragraphs: sentences and the sticky-note rule, span
matching with overlaps (hard and soft), span sizes, and anchored UniMatch."""

from __future__ import annotations

import numpy as np
import pytest

from sefora_common.text import (
    resolve_span,
    sentence_around,
    sentence_bounds,
    span_iou,
    span_size,
    span_statistics,
)
from unimatch_metric import unimatch
from unimatch_metric.spans import (
    anchored_unimatch,
    anchored_weights,
    match_spans,
    span_f1,
)

TEXT = (
    "Dr. Lee opened the door. The room smelled of rain and old paper! "
    "Was anyone there? Nobody answered."
)
S1, S2, S3, S4 = sentence_bounds(TEXT)


def test_sentences_keep_abbreviations_and_cover_the_text():
    assert [TEXT[s:e] for s, e in sentence_bounds(TEXT)] == [
        "Dr. Lee opened the door.",
        "The room smelled of rain and old paper!",
        "Was anyone there?",
        "Nobody answered.",
    ]
    assert sentence_bounds("one line\nsecond line") == ((0, 8), (9, 20))
    assert sentence_bounds("   ") == ()


def test_sticky_note_rule():
    inside = TEXT.index("smelled")
    assert sentence_around(TEXT, inside) == S2
    # At the end of a sentence or in the space after it: the sentence before.
    assert sentence_around(TEXT, S1[1]) == S1
    assert sentence_around(TEXT, S1[1] + 1) == S2  # the first character of the next one
    assert sentence_around(TEXT, len(TEXT)) == S4
    assert resolve_span(TEXT, inside, inside) == S2
    assert resolve_span(TEXT, 4, 7) == (4, 7)
    assert resolve_span(TEXT, S1[1], S1[1] + 1) == S1  # a span of white space is a point
    assert resolve_span(TEXT, -1, -1) is None


def test_iou():
    assert span_iou((0, 10), (5, 15)) == pytest.approx(5 / 15)
    assert span_iou((0, 10), (10, 20)) == 0.0
    assert span_iou((0, 10), None) == 0.0


def test_hard_matching_is_one_to_one():
    refs = [(0, 10), (20, 30)]
    # Both predictions overlap the first reference well; only one may take it.
    preds = [(0, 9), (1, 10), (22, 40)]
    result = match_spans(refs, preds, theta=0.5)
    assert len(result.pairs) == 1 and result.pairs[0][0] == 0
    # (22, 40) vs (20, 30): IoU 8/20 = 0.4 < 0.5, no match.
    assert result.precision == pytest.approx(1 / 3)
    assert result.recall == pytest.approx(1 / 2)
    assert result.f1 == pytest.approx(0.4)
    loose = match_spans(refs, preds, theta=0.4)
    assert len(loose.pairs) == 2 and loose.recall == 1.0


def test_hard_matching_maximises_pairs_before_overlap():
    # Greedy on IoU would give p0 to r0 (0.9) and leave r1 without a partner.
    refs = [(0, 10), (0, 12)]
    preds = [(0, 11), (0, 6)]
    result = match_spans(refs, preds, theta=0.5)
    assert {(i, j) for i, j, _ in result.pairs} == {(0, 1), (1, 0)}


def test_soft_variant_by_hand():
    refs = [(0, 10), (20, 30)]
    preds = [(0, 5), (25, 30)]
    result = match_spans(refs, preds, theta=0.9)
    assert result.pairs == []  # IoU 0.5 each, below theta
    assert result.soft_total == pytest.approx(1.0)
    assert result.soft_precision == pytest.approx(0.5)
    assert result.soft_recall == pytest.approx(0.5)
    with pytest.raises(ValueError, match="theta"):
        match_spans(refs, preds, theta=0)


def test_span_f1_notes_unlocated_and_aggregates():
    note = TEXT.index("rain")
    refs = [[(note, note), (-1, -1)], [(0, 3)]]
    preds = [[S2, None], [(30, 40)]]
    out = span_f1(preds, refs, [TEXT, TEXT], return_details=True)
    # Paragraph 1: the note is the whole second sentence, matched exactly; the unlocated
    # reference is left out of |G|; the unlocated prediction stays in |P|.
    assert out["details"][0]["reference_spans"] == [S2]
    assert out["details"][0]["precision"] == 0.5 and out["details"][0]["recall"] == 1.0
    # Paragraph 2: no overlap.
    assert out["details"][1]["f1"] == 0.0
    assert out["precision"] == pytest.approx(0.25)
    assert out["micro_precision"] == pytest.approx(1 / 3)
    assert out["micro_recall"] == pytest.approx(1 / 2)
    assert (out["n_unlocated_references"], out["n_unlocated_predictions"]) == (1, 1)
    assert out["n_examples"] == 2
    with pytest.raises(ValueError, match="differ in length"):
        span_f1(preds, refs, [TEXT])


def test_span_sizes_and_statistics():
    door = TEXT.index("the door")
    assert span_size(TEXT, door, door + len("the door")) == "phrase"
    assert span_size(TEXT, *S2) == "sentence"
    assert span_size(TEXT, S2[0], S2[1] - 3) == "sentence"  # most of one sentence
    assert span_size(TEXT, S2[0], S3[1]) == "multi_sentence"
    assert span_size(TEXT, S2[0], S3[0] + 2) == "sentence"  # 2 characters spill over
    assert span_size(TEXT, 5, 5) == "point"
    assert span_size(TEXT, S1[1], S1[1] + 1) == "point"  # white space only
    assert span_size(TEXT, -1, -1) == "unlocated"
    stats = span_statistics(
        [(TEXT, door, door + 8), (TEXT, *S2), (TEXT, S1[0], S4[1]), (TEXT, 5, 5)]
    )
    assert stats["counts"] == {
        "phrase": 1,
        "sentence": 1,
        "multi_sentence": 1,
        "point": 1,
        "unlocated": 0,
    }
    assert stats["shares"]["phrase"] == pytest.approx(1 / 3)
    assert stats["mean_words"]["phrase"] == 2.0


# --- anchored UniMatch ---------------------------------------------------------------

SAME = "Vivid detail about the smell."
OTHER = "Check your comma here."


def judge(pairs):
    """4 for the same comment, 0 otherwise (a content judge that is easy to reason about)."""
    return [4.0 if g == p else 0.0 for g, p in pairs]


def run(predictions, **kw):
    return anchored_unimatch(
        [predictions],
        [[(SAME, S2)]],
        [TEXT],
        scorer=judge,
        segmenter="rules",
        **kw,
    )


def test_right_point_on_the_right_words_scores_highest():
    right = run([(SAME, S2)])
    elsewhere = run([(SAME, S4)])
    half_overlap = run([(SAME, (S2[0], (S2[0] + S2[1]) // 2))])
    wrong_point = run([(OTHER, S2)])
    unlocated = run([(SAME, None)])
    assert right["f1"] == 1.0
    assert elsewhere["f1"] == pytest.approx(0.5)  # (1 - λ) of the content score
    assert elsewhere["f1"] < half_overlap["f1"] < right["f1"]
    assert wrong_point["f1"] == 0.0  # the right place alone earns nothing
    assert unlocated["f1"] == pytest.approx(0.5)
    assert unlocated["span_n_unlocated_predictions"] == 1
    # The content-only figures do not see the place; the span figures do not see content.
    assert elsewhere["content_f1"] == right["content_f1"] == 1.0
    assert wrong_point["span_f1"] == right["span_f1"] == 1.0
    assert elsewhere["span_f1"] == 0.0


def test_span_weight_zero_is_plain_unimatch_and_one_needs_overlap():
    predictions = [(SAME, S4), (OTHER, S2)]
    plain = unimatch([[SAME, OTHER]], [[SAME]], scorer=judge, segmenter="rules")
    zero = run(predictions, span_weight=0.0)
    assert zero["f1"] == pytest.approx(plain["f1"])
    assert run(predictions, span_weight=1.0)["f1"] == 0.0
    with pytest.raises(ValueError, match="span_weight"):
        run(predictions, span_weight=1.5)


def test_units_inherit_their_comment_span_and_notes_count_as_sentences():
    note = TEXT.index("rain")
    out = anchored_unimatch(
        [[("Nice image. Check your comma here.", S2)]],
        [[(SAME, (note, note)), (OTHER, S2)]],
        [TEXT],
        scorer=judge,
        segmenter="rules",
        return_details=True,
    )
    detail = out["details"][0]
    assert detail["prediction_units"] == ["Nice image.", "Check your comma here."]
    assert detail["prediction_spans"] == [S2, S2]
    assert detail["reference_spans"] == [S2, S2]  # the note became its sentence
    assert detail["matches"] == [[1, 1, 4.0]]
    assert out["precision"] == pytest.approx(0.5) and out["recall"] == pytest.approx(0.5)
    assert detail["content_scores"] == [[0.0, 0.0], [0.0, 4.0]]


def test_anchored_weights():
    scores = np.array([[4.0, 2.0, 0.0]])
    overlaps = np.array([[1.0, 0.0, 1.0]])
    assert anchored_weights(scores, overlaps, 0.5).tolist() == [[4.0, 1.0, 0.0]]
    assert anchored_weights(scores, overlaps, 0.25).tolist() == [[4.0, 1.5, 0.0]]


def test_a_reference_without_comment_counts_for_spans_only():
    out = anchored_unimatch(
        [[(SAME, S2), (OTHER, S3)]],
        [[(SAME, S2), ("", S3)]],
        [TEXT],
        scorer=judge,
        segmenter="rules",
        return_details=True,
    )
    assert out["details"][0]["reference_units"] == [SAME]
    assert out["recall"] == 1.0 and out["precision"] == 0.5
    assert out["span_f1"] == 1.0  # both reference spans are hit
