"""The quote locator (each fallback, elisions, an unlocatable quote) and the strict parser
of anchored replies, on hand-written paragraphs and replies."""

from __future__ import annotations

import pytest

from unimatch_metric.quotes import anchor_items, locate_quote, parse_anchored

PARAGRAPH = (
    "When I was nine, being grounded felt like a prison. The pillow where I would lay my "
    "head felt like a dog’s cage.  The smell of must\nbegan to fill my nostrils."
)


def test_exact_match_with_quotation_marks_around():
    loc = locate_quote('"a dog’s cage"', PARAGRAPH)
    assert loc.method == "exact" and loc.similarity == 1.0
    assert PARAGRAPH[loc.start : loc.end] == "a dog’s cage"
    assert loc.span == (loc.start, loc.end)


def test_normalized_match_ignores_case_quote_marks_and_spacing():
    loc = locate_quote(
        "THE PILLOW where i would lay my head felt like a dog's cage. The smell", PARAGRAPH
    )
    assert loc.method == "normalized"
    text = PARAGRAPH[loc.start : loc.end]
    assert text.startswith("The pillow") and text.endswith("The smell")
    # A line break and a double space in the paragraph, single spaces in the quote.
    loc = locate_quote("cage. The smell of must began", PARAGRAPH)
    assert loc.method == "normalized"
    assert PARAGRAPH[loc.start : loc.end] == "cage.  The smell of must\nbegan"


def test_fuzzy_match_for_a_misquote():
    loc = locate_quote("being grounded felt like a prision", PARAGRAPH)
    assert loc.method == "fuzzy"
    assert PARAGRAPH[loc.start : loc.end] == "being grounded felt like a prison"
    assert loc.similarity == pytest.approx(1 - 1 / 34)
    # A fuzzy edge inside a word is widened to the whole word.
    loc = locate_quote("eing grounded felt like a prisn", PARAGRAPH)
    assert loc.method == "fuzzy" and PARAGRAPH[loc.start : loc.end].startswith("being")


def test_unlocatable_quote_is_reported_with_its_best_similarity():
    loc = locate_quote("The essay argues that homework should be banned", PARAGRAPH)
    assert not loc.located and loc.span is None
    assert (loc.start, loc.end, loc.method) == (-1, -1, "unlocated")
    assert 0 < loc.similarity < 0.9
    # The same misquote is found with a lower threshold, and not with a stricter one.
    assert locate_quote("felt like a prisn cell", PARAGRAPH, min_similarity=0.7).located
    assert not locate_quote("felt like a prisn cell", PARAGRAPH, min_similarity=0.95).located
    assert not locate_quote('""', PARAGRAPH).located
    with pytest.raises(ValueError, match="min_similarity"):
        locate_quote("prison", PARAGRAPH, min_similarity=0)


def test_elided_quote_spans_its_pieces_in_order():
    loc = locate_quote("The pillow ... dog’s cage.", PARAGRAPH)
    assert loc.method == "exact"
    assert (
        PARAGRAPH[loc.start : loc.end]
        == "The pillow where I would lay my head felt like a dog’s cage"
    )
    loc = locate_quote("the pillow … DOG'S cage", PARAGRAPH)
    assert loc.method == "normalized"
    assert not locate_quote("dog’s cage ... The pillow", PARAGRAPH).located  # out of order


def test_parse_well_formed_reply_with_markdown():
    reply = (
        '1. **Quote:** "felt like a prison"\n'
        "   **Category:** Praise\n"
        "   **Comment:** A striking comparison.\n"
        "   Keep it.\n\n"
        "- Quote: “The smell of must”\n"
        "- Comment: Which smell? Say more.\n"
    )
    parsed = parse_anchored(reply)
    assert parsed.ok, parsed.problems
    assert [(i.quote, i.comment, i.category) for i in parsed.items] == [
        ('"felt like a prison"', "A striking comparison. Keep it.", "Praise"),
        ("“The smell of must”", "Which smell? Say more.", None),
    ]
    located = anchor_items(parsed.items, PARAGRAPH)
    assert [PARAGRAPH[a.span[0] : a.span[1]] for a in located] == [
        "felt like a prison",
        "The smell of must",
    ]


def test_parse_reports_every_deviation():
    reply = (
        "Here is my feedback.\n"
        "Quote: a dog's cage\n"
        "Comment: Nice.\n"
        "Comment: Also vary your sentences.\n"
        "Quote: never commented on\n"
        "Quote: not in the paragraph at all\n"
        "Comment: Expand.\n"
    )
    parsed = parse_anchored(reply)
    assert not parsed.ok
    assert [(i.quote, i.comment) for i in parsed.items] == [
        ("a dog's cage", "Nice."),
        (None, "Also vary your sentences."),  # kept, without a quote
        ("not in the paragraph at all", "Expand."),
    ]
    assert len(parsed.problems) == 4
    assert parsed.problems[0].startswith("line 1: outside any item")
    assert any("second comment" in p for p in parsed.problems)
    assert any("quote without a comment" in p for p in parsed.problems)
    located = anchor_items(parsed.items, PARAGRAPH)
    assert [a.location.method if a.location else None for a in located] == [
        "normalized",
        None,
        "unlocated",
    ]
    assert [a.span is None for a in located] == [False, True, True]
    assert parse_anchored("").problems == ["no item in the reply"]
