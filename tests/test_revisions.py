"""Revision tracking on hand-built drafts: paragraph alignment with an inserted, a deleted
and an edited paragraph; span following and its labels; the uptake rate."""

from __future__ import annotations

import pytest

from sefora_dataset.revisions import (
    align_paragraphs,
    char_opcodes,
    essay_revision_rows,
    follow_span,
    revision_rows,
    revision_summary,
    uptake,
)

INTRO = "My grandmother kept a garden behind the house where she grew tomatoes and beans."
STORY = "Every summer we picked the beans together and she told me about her childhood in Italy."
CUT = "I also played soccer that year, which has nothing to do with the garden at all."
ENDING = "Now the garden is gone, but I still plant beans on my balcony every spring."
STORY_EDITED = (
    "Every summer we picked the green beans together while she told me about her childhood "
    "in Italy."
)
NEW = "The smell of wet soil still takes me back to those mornings with her."


def test_alignment_with_inserted_deleted_and_edited_paragraphs():
    before = [INTRO, STORY, CUT, ENDING]
    after = [INTRO, NEW, STORY_EDITED, ENDING]
    partners = align_paragraphs(before, after)
    assert [j for j, _ in partners] == [0, 2, None, 3]
    assert partners[0][1] == 1.0 and 0.3 < partners[1][1] < 1.0
    assert partners[2] == (None, 0.0)


def test_moved_paragraph_is_aligned_in_a_second_pass():
    before = [INTRO, STORY, ENDING]
    after = [ENDING, INTRO, STORY]  # the ending moved to the front
    assert [j for j, _ in align_paragraphs(before, after)] == [1, 2, 0]


def span_of(body: str, text: str) -> tuple[int, int]:
    start = body.index(text)
    return start, start + len(text)


def test_follow_span_labels():
    def follow(text):
        span = span_of(STORY, text)
        (s, e), label = follow_span(span, STORY, STORY_EDITED, char_opcodes(STORY, STORY_EDITED))
        return STORY_EDITED[s:e], label

    assert follow("her childhood in Italy") == ("her childhood in Italy", "unchanged")
    assert follow("picked the beans") == ("picked the green beans", "edited")
    assert follow("and she told") == ("while she told", "edited")
    gone = "Every summer we picked the beans together and she told me."
    shorter = "Every summer we picked."
    span = span_of(gone, "the beans together and she told me")
    (s, e), label = follow_span(span, gone, shorter, char_opcodes(gone, shorter))
    assert (s, e, label) == (len("Every summer we picked"),) * 2 + ("removed",)


def annotation(body: str, text: str | None, kind: str = "highlight", comment: str = "") -> dict:
    start, end = span_of(body, text) if text else (body.index("she told"),) * 2
    return {
        "type": kind,
        "text": text,
        "comment": comment,
        "color": "yellow" if kind == "highlight" else None,
        "start": start,
        "end": end,
    }


def draft_row(draft_id: str, stage: str, paragraphs: list[tuple[str, list[dict]]]) -> dict:
    return {
        "draft_id": draft_id,
        "essay_id": "E_ID0001",
        "assignment_id": "E",
        "student_id": "ID0001",
        "batch": 1,
        "course": 1,
        "class": 1,
        "essay": 1,
        "stage": stage,
        "paragraphs": [{"body": b, "annotations": a} for b, a in paragraphs],
    }


def test_revision_rows_label_every_case():
    unlocated = {**annotation(INTRO, "garden"), "start": -1, "end": -1}
    first = draft_row(
        "D1",
        "Initial",
        [
            (INTRO, [annotation(INTRO, "tomatoes and beans", comment="Great detail!")]),
            (
                STORY,
                [
                    annotation(STORY, "picked the beans", comment="Which beans? Be specific."),
                    annotation(STORY, None, kind="note", comment="Tell us more."),
                    unlocated,
                ],
            ),
            (CUT, [annotation(CUT, "nothing to do with the garden", comment="Cut this.")]),
            (ENDING, [annotation(ENDING, "on my balcony every spring")]),
        ],
    )
    ending_edited = ENDING.replace(" on my balcony every spring", "")
    second = draft_row(
        "D2", "Final", [(INTRO, []), (NEW, []), (STORY_EDITED, []), (ending_edited, [])]
    )
    rows = revision_rows(first, second)
    by = {r["annotation_id"]: r for r in rows}
    assert [r["label"] for r in rows] == [
        "unchanged",
        "edited",
        "edited",  # the note follows its sentence, which was edited
        "unaligned",
        "paragraph_removed",
        "removed",
    ]
    intro = by["D1_P000_A00"]
    assert (intro["next_paragraph_index"], intro["edit_distance"]) == (0, 0)
    assert intro["next_span_text"] == "tomatoes and beans"
    assert intro["comment_category"] == "Praise" and intro["next_draft_id"] == "D2"
    story = by["D1_P001_A00"]
    assert story["next_paragraph_index"] == 2
    assert story["next_span_text"] == "picked the green beans"
    assert story["edit_distance"] == len("green ")
    note = by["D1_P001_A01"]
    assert note["span_text"] == STORY  # one sentence: the whole paragraph
    assert note["next_span_text"] == STORY_EDITED
    assert by["D1_P001_A02"]["edit_distance"] is None
    cut = by["D1_P002_A00"]
    assert (cut["next_paragraph_index"], cut["next_paragraph"], cut["next_start"]) == (-1, None, -1)
    assert cut["edit_distance"] == len("nothing to do with the garden")
    removed = by["D1_P003_A00"]
    assert (
        removed["next_start"]
        == removed["next_end"]
        == len("Now the garden is gone, but I still plant beans")
    )
    summary = revision_summary(rows)
    assert summary["labels"] == {
        "unchanged": 1,
        "edited": 2,
        "removed": 1,
        "paragraph_removed": 1,
        "unaligned": 1,
    }
    assert summary["by_type"]["note"]["edited"] == 1
    assert summary["by_color"]["none"]["edited"] == 1  # the note has no colour


def test_span_of_a_split_paragraph_is_followed_where_it_moved():
    merged = f"{STORY} {CUT}"
    marks = [
        annotation(merged, "which has nothing to do"),
        annotation(merged, "her childhood in Italy"),
    ]
    first = draft_row("D1", "Initial", [(merged, marks)])
    # The merged paragraph aligns with CUT, its closer half; the story half was split off.
    second = draft_row("D2", "Final", [(STORY_EDITED, []), ("Later.", []), (CUT, [])])
    in_cut, in_story = revision_rows(first, second)
    assert (in_cut["label"], in_cut["moved"], in_cut["next_paragraph_index"]) == (
        "unchanged",
        False,
        2,
    )
    assert (in_story["label"], in_story["moved"], in_story["next_paragraph_index"]) == (
        "unchanged",
        True,
        0,
    )
    assert in_story["next_span_text"] == "her childhood in Italy"
    assert STORY_EDITED[in_story["next_start"] : in_story["next_end"]] == "her childhood in Italy"


def test_essay_rows_pair_consecutive_drafts_only():
    d1 = draft_row("D1", "Outline", [(INTRO, [annotation(INTRO, "garden")])])
    d2 = draft_row("D2", "Draft", [(INTRO, [annotation(INTRO, "tomatoes")])])
    d3 = draft_row("D3", "Final", [(INTRO, [annotation(INTRO, "beans")])])
    rows = essay_revision_rows([d1, d2, d3])
    assert [(r["draft_id"], r["next_draft_id"]) for r in rows] == [("D1", "D2"), ("D2", "D3")]
    assert essay_revision_rows([d3]) == []


def test_uptake_rate_of_the_spans_a_feedback_set_hit():
    def row(pid, start, end, label):
        return {"paragraph_id": pid, "start": start, "end": end, "label": label}

    revisions = [
        row("P1", 0, 10, "edited"),
        row("P1", 20, 30, "unchanged"),
        row("P1", 40, 50, "removed"),
        row("P1", -1, -1, "unaligned"),
        row("P2", 0, 10, "unchanged"),
        row("P3", 0, 10, "edited"),  # a paragraph the feedback set does not cover
    ]
    predicted = {"P1": [(0, 9), (41, 50), None], "P2": [(0, 10)]}
    out = uptake(revisions, predicted)
    assert (out["n_paragraphs"], out["n_spans"], out["n_hit"], out["n_unaligned"]) == (2, 4, 3, 1)
    assert out["uptake_hit"] == pytest.approx(2 / 3)
    assert out["uptake_missed"] == 0.0
    assert out["uptake_all"] == pytest.approx(2 / 4)
    assert out["labels_hit"] == {
        "unchanged": 1,
        "edited": 1,
        "removed": 1,
        "paragraph_removed": 0,
    }
    assert uptake(revisions, {})["uptake_all"] is None
