"""UniMatch stage 1 offline: the rule-based segmenter, delimiter verification, the registry."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import unimatch_metric
from sefora_llm.client import ReplyError
from unimatch_metric.options import Options
from unimatch_metric.segmenters import SEGMENTERS
from unimatch_metric.segmenters.llm import units_from_delimited
from unimatch_metric.segmenters.rules import split_rules


@pytest.mark.parametrize(
    "text, units",
    [
        # A connective after a comma opens a second point inside one sentence.
        (
            "This paragraph is well-written, but try to make it more concise.",
            ["This paragraph is well-written,", "but try to make it more concise."],
        ),
        (
            "Great opening! Try varying your sentence length.",
            ["Great opening!", "Try varying your sentence length."],
        ),
        # Consecutive questions asking for the same elaboration stay one unit.
        (
            "How big is this park? Is it like a city block? ",
            ["How big is this park? Is it like a city block?"],
        ),
        # Bare interjections together; an emoticon joins its sentence.
        ("Wow. Yes.", ["Wow. Yes."]),
        ("great voice and tone :)", ["great voice and tone :)"]),
        ("Nice work. :) Now cite the source.", ["Nice work. :)", "Now cite the source."]),
        # Abbreviations and lowercase continuations do not end a sentence.
        (
            "See e.g. the intro. Also cite p. 4 here.",
            ["See e.g. the intro.", "Also cite p. 4 here."],
        ),
        ("Hmm... not sure about this claim.", ["Hmm... not sure about this claim."]),
        # A short clause before the connective is not cut off.
        ("Nice, but why?", ["Nice, but why?"]),
        # Lines are units (bulleted feedback).
        ("- Strong thesis.\n- Add evidence here.", ["- Strong thesis.", "- Add evidence here."]),
        ("", []),
        ("   \n ", []),
    ],
)
def test_rules_examples(text, units):
    assert split_rules(text) == units


feedback_alphabet = st.sampled_from(
    list("abcdefgh XYZ,;:.!?'\"()-\n\u2026") + [" but ", " however ", ", also ", "e.g. ", ":)"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(feedback_alphabet, max_size=60).map("".join))
def test_rules_units_cover_text_in_order(text):
    units = split_rules(text)
    assert all(u == u.strip() and u for u in units)
    assert "".join("".join(units).split()) == "".join(text.split())
    # Units are consecutive slices: each is found after the previous one.
    pos = 0
    for unit in units:
        pos = text.index(unit, pos) + len(unit)


def test_units_from_delimited_keeps_original_whitespace():
    text = "Lovely  details. Just be sure\nyou use the right words."
    reply = "Lovely details.<SEP> Just be sure you use the right words."
    assert units_from_delimited(text, reply) == [
        "Lovely  details.",
        "Just be sure\nyou use the right words.",
    ]


@pytest.mark.parametrize(
    "reply",
    [
        "Lovely details. <SEP> Just be sure you use the right word.",  # changed a word
        "Lovely details.",  # dropped text
        "Here you go: Lovely details. <SEP> Just be sure you use the right words.",
    ],
)
def test_units_from_delimited_rejects_changed_text(reply):
    with pytest.raises(ReplyError, match="give back the input"):
        units_from_delimited("Lovely details. Just be sure you use the right words.", reply)


def test_segment_public_api_and_callable():
    assert unimatch_metric.segment(
        ["Good. Bad spelling, but fixable here."], segmenter="rules"
    ) == [["Good.", "Bad spelling,", "but fixable here."]]
    by_comma = unimatch_metric.segment(["a, b ,c"], segmenter=lambda t: t.split(","))
    assert by_comma == [["a", "b", "c"]]
    with pytest.raises(TypeError):
        unimatch_metric.segment("one string", segmenter="rules")


def test_registry_resolution(monkeypatch):
    for var in ("UNIMATCH_MODEL", "UNIMATCH_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    assert SEGMENTERS.resolve_name("auto", Options()) == "learned"
    assert SEGMENTERS.resolve_name("offline", Options()) == "learned"
    assert SEGMENTERS.resolve_name("auto", Options(model="m")) == "llm"
    monkeypatch.setenv("UNIMATCH_MODEL", "some-model")
    assert SEGMENTERS.resolve_name("auto", Options()) == "llm"
    with pytest.raises(ValueError, match="unknown segmenter 'nope'.*rules"):
        SEGMENTERS.resolve_name("nope", Options())


def test_unknown_option_is_an_error():
    with pytest.raises(TypeError, match="unknown UniMatch option.*segmentr"):
        unimatch_metric.segment(["x"], segmentr="rules")
