"""The rule-based segmenter, the offline baseline: sentences and lines, then a cut before a
connective that opens a new point (", but ...", "; however ..."), then merges: consecutive
questions form one unit, and bare interjections or emoticons join their neighbour."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

from unimatch_metric.errors import UniMatchError
from unimatch_metric.segmenters.base import Side, Units

# A period after these words does not end a sentence.
_ABBREVIATIONS = frozenset(
    ["e.g", "i.e", "etc", "cf", "vs", "viz", "mr", "mrs", "ms", "dr", "prof", "st", "p", "pp"]
    + ["no", "vol", "fig", "ch", "approx", "ca"]
)
# Sentence-final punctuation with closing quotes/brackets, or an emoticon such as ":)".
_SENTENCE_END = re.compile(r"(?:[.!?\u2026]+[\"'\u201d\u2019)\]]*|(?<=\s)[:;]-?[()DPp])(?=\s|$)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_NEWLINE = re.compile(r"\n")
_NEXT_CHAR = re.compile(r"\s*(\S)")
# A connective opening a new point, after a comma, semicolon or dash.
_CONNECTIVE = re.compile(
    r"(?:[,;:]|\s[-\u2013\u2014])\s+(?=(?:but|however|although|though|also|plus|otherwise|"
    r"instead|and also)\b)",
    flags=re.IGNORECASE,
)
_QUESTION_END = re.compile(r"\?[\"'\u201d\u2019)\]]*$")
_INTERJECTION_END = re.compile(r"(?:\w|[.!\u2026]+[\"'\u201d\u2019)\]]*)$")
_WORD = re.compile(r"\w+")
_MIN_WORDS_LEFT = 2  # a connective cut needs this many words before it ...
_MIN_WORDS_RIGHT = 3  # ... and this many after it, in the same sentence
_INTERJECTION_WORDS = 2


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def sentence_cuts(text: str) -> list[int]:
    """Offsets where a sentence or a line ends."""
    cuts = [m.end() for m in _NEWLINE.finditer(text)]
    for m in _SENTENCE_END.finditer(text):
        nxt = _NEXT_CHAR.match(text, m.end())
        if nxt is None:
            continue
        if m.group().startswith(".") and len(m.group()) == 1:
            before = _WORD_BEFORE.search(text, 0, m.start())
            if before and before.group(1).lower().rstrip(".") in _ABBREVIATIONS:
                continue
        if nxt.group(1).islower():
            continue
        cuts.append(m.end())
    return cuts


def _clause_cuts(text: str, start: int, end: int) -> list[int]:
    """Offsets inside ``text[start:end]`` (one sentence) where a new point begins."""
    return [
        m.end()
        for m in _CONNECTIVE.finditer(text, start, end)
        if _words(text[start : m.start()]) >= _MIN_WORDS_LEFT
        and _words(text[m.end() : end]) >= _MIN_WORDS_RIGHT
    ]


def _is_interjection(piece: str) -> bool:
    """A word or two ending a sentence ("Wow.", "Yes!"), not a question or a clause."""
    return _words(piece) <= _INTERJECTION_WORDS and bool(_INTERJECTION_END.search(piece))


def _merge(pieces: list[list[int]], text: str) -> list[list[int]]:
    """Apply the merge rules to consecutive [start, end) spans."""
    merged: list[list[int]] = []
    for span in pieces:
        piece = text[span[0] : span[1]].strip()
        if merged:
            prev = text[merged[-1][0] : merged[-1][1]].strip()
            if (
                not any(ch.isalnum() for ch in piece)  # an emoticon or stray punctuation
                or not any(ch.isalnum() for ch in prev)
                or (_QUESTION_END.search(prev) and _QUESTION_END.search(piece))
                or (_is_interjection(prev) and _is_interjection(piece))
            ):
                merged[-1][1] = span[1]
                continue
        merged.append(list(span))
    return merged


def split_rules(text: str) -> Units:
    """The rule-based segmentation of one text (see the module docstring)."""
    sentence_bounds = sorted({0, len(text), *sentence_cuts(text)})
    cuts = set(sentence_bounds)
    for start, end in itertools.pairwise(sentence_bounds):
        cuts.update(_clause_cuts(text, start, end))
    bounds = sorted(cuts)
    pieces = [[a, b] for a, b in itertools.pairwise(bounds) if text[a:b].strip()]
    return [text[a:b].strip() for a, b in _merge(pieces, text)]


class RuleSegmenter:
    """The offline rule-based baseline (deterministic, microseconds per text; not cached)."""

    name = "rules"
    cache_namespace = None
    config: dict[str, Any] = {}
    sided = False

    def segment(self, texts: Sequence[str], side: Side = "feedback") -> list[Units | UniMatchError]:
        """Segment each text with `split_rules` (both sides alike)."""
        return [split_rules(text) for text in texts]
