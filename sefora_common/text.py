"""Text helpers shared by the packages: normalisation, sentences, spans, edit distance.

- `normalise`: the one normalisation used to compare feedback units.
- `sentence_bounds` / `sentence_around`: sentences as character ranges, and the rule that
  turns a point (a sticky note, ``start == end``) into the sentence around it.
- `span_size` / `span_statistics`: phrase, sentence or multi-sentence spans.
- `normalise_with_map`: case- and whitespace-insensitive text with a map back to offsets.
- `levenshtein` and `best_substring`: character edit distance, globally and of a needle
  against its best-matching substring of a longer text (semi-global alignment).
- `lone_surrogate`: the one check that a text can be stored (encoded as UTF-8).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

Span = tuple[int, int]
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def normalise(text: str) -> str:
    """``text`` case-folded with runs of whitespace collapsed to one space (ends stripped)."""
    return " ".join(text.casefold().split())


# Sentence terminators, with the closing quotes and brackets that follow them.
_END = re.compile(r"[.!?…]+[\"'”’»)\]]*")
_LAST_WORD = re.compile(r"([\w.]+)$")
_ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "vs", "etc", "e.g", "i.e", "cf",
    "no", "vol", "pp", "fig", "approx", "dept", "inc", "ltd", "co", "mt",
}  # fmt: skip


def _is_boundary(text: str, end: int, dot: int) -> bool:
    """Whether the terminator ending at ``end`` (its first character at ``dot``) ends a
    sentence: white space follows, the next word does not start in lower case, and the
    word before a single period is not an abbreviation or an initial."""
    rest = text[end:]
    stripped = rest.lstrip()
    if not rest or not rest[0].isspace() or not stripped:
        return not stripped
    if "\n" in rest[: len(rest) - len(stripped)]:
        return True
    if stripped[0].islower():
        return False
    if text[dot:end].rstrip("\"'”’»)]") == ".":
        word = _LAST_WORD.search(text, max(0, dot - 24), dot)
        if word and (word.group(1).lower() in _ABBREVIATIONS or len(word.group(1)) == 1):
            return False
    return True


@functools.lru_cache(maxsize=4096)
def sentence_bounds(text: str) -> tuple[Span, ...]:
    """The sentences of ``text`` as ``(start, end)`` ranges without surrounding white space.

    Sentences end at ``.``, ``!``, ``?`` or ``…`` (closing quotes and brackets included)
    before white space and a word not in lower case, except after a common abbreviation or
    a one-letter initial; a line break always ends one. Every non-space character of
    ``text`` is in exactly one range.
    """
    cuts = [0]
    for m in _END.finditer(text):
        if _is_boundary(text, m.end(), m.start()):
            cuts.append(m.end())
    for m in re.finditer(r"\n", text):
        cuts.append(m.start())
    cuts = sorted(set(cuts)) + [len(text)]
    bounds = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        piece = text[a:b]
        if piece.strip():
            start = a + len(piece) - len(piece.lstrip())
            bounds.append((start, a + len(piece.rstrip())))
    return tuple(bounds)


def sentence_around(text: str, offset: int) -> Span:
    """The sentence a point of ``text`` belongs to: the sticky-note rule.

    A point inside a sentence (``start <= offset < end``) belongs to it; a point in the
    white space between two sentences, or at the end of one, belongs to the sentence before
    it (a note follows what it comments on); a point before the first sentence belongs to
    the first. Text without any sentence gives the empty span at ``offset``.
    """
    bounds = sentence_bounds(text)
    if not bounds:
        return (offset, offset)
    chosen = bounds[0]
    for start, end in bounds:
        if start <= offset:
            chosen = (start, end)
        else:
            break
    return chosen


def resolve_span(text: str, start: int, end: int) -> Span | None:
    """The character range an annotation covers: its own span; the sentence around it for a
    point (``start == end``, see `sentence_around`) or a span of white space only (which
    marks a point too); None when it is unlocated (-1)."""
    if start < 0 or end < 0:
        return None
    if start == end or not text[start:end].strip():
        return sentence_around(text, start)
    return (start, end)


#: Span sizes of `span_size`; points (notes) and unlocated spans are counted apart.
SIZE_CLASSES = ("phrase", "sentence", "multi_sentence")
#: A span covering at least this share of its one sentence's characters is a "sentence".
SENTENCE_COVER = 0.8
#: A span touches a sentence when it overlaps it by this many characters (or all of it).
TOUCH_CHARS = 4


def span_size(text: str, start: int, end: int) -> str:
    """``phrase``, ``sentence`` or ``multi_sentence`` for a span of ``text``; ``point`` for a
    sticky note (``start == end``) or a mark of white space only, ``unlocated`` for -1.

    A span touches a sentence it overlaps by `TOUCH_CHARS` characters or more (or entirely,
    for a shorter sentence): two or more → multi-sentence; one → sentence if it covers at
    least `SENTENCE_COVER` of it, else phrase; none (a word or two) → phrase.
    """
    if start < 0 or end < 0:
        return "unlocated"
    if start == end or not text[start:end].strip():
        return "point"
    touched = []
    for s, e in sentence_bounds(text):
        overlap = min(e, end) - max(s, start)
        if overlap >= min(TOUCH_CHARS, e - s):
            touched.append(overlap / (e - s))
    if len(touched) >= 2:
        return "multi_sentence"
    if len(touched) == 1 and touched[0] >= SENTENCE_COVER:
        return "sentence"
    return "phrase"


def span_statistics(annotations: Sequence[tuple[str, int, int]]) -> dict[str, Any]:
    """Counts and shares of span sizes over ``(paragraph text, start, end)`` annotations,
    with the mean length in words of each size class."""
    counts: Counter[str] = Counter()
    words: dict[str, list[int]] = {c: [] for c in SIZE_CLASSES}
    for text, start, end in annotations:
        size = span_size(text, start, end)
        counts[size] += 1
        if size in words:
            words[size].append(len(text[start:end].split()))
    sized = sum(counts[c] for c in SIZE_CLASSES)
    return {
        "counts": {c: counts[c] for c in (*SIZE_CLASSES, "point", "unlocated")},
        "shares": {c: counts[c] / sized if sized else 0.0 for c in SIZE_CLASSES},
        "mean_words": {c: sum(w) / len(w) if w else None for c, w in words.items()},
        "n_annotations": len(annotations),
    }


def span_iou(a: Span | None, b: Span | None) -> float:
    """Intersection over union of two character ranges (0 when either is None or empty)."""
    if a is None or b is None:
        return 0.0
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union > 0 and inter > 0 else 0.0


# Typographic variants mapped to one form before case-insensitive comparison.
_FOLD = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "…": "..."})


def normalise_with_map(text: str) -> tuple[str, list[int]]:
    """``text`` case-folded, typographic quotes and dashes unified, white-space runs made
    one space and stripped; with, for each output character, the offset it came from."""
    out: list[str] = []
    where: list[int] = []
    pending_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            pending_space = bool(out)
            continue
        if pending_space:
            out.append(" ")
            where.append(i - 1)
            pending_space = False
        for piece in unicodedata.normalize("NFKC", ch).translate(_FOLD).casefold():
            out.append(piece)
            where.append(i)
    return "".join(out), where


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def _last_row(needle: np.ndarray, hay: np.ndarray, free_start: bool) -> np.ndarray:
    """Last row of the edit-distance table of ``needle`` against prefixes of ``hay``;
    with ``free_start`` the match may begin anywhere in ``hay`` (semi-global)."""
    n = len(hay)
    steps = np.arange(n + 1)
    row = np.zeros(n + 1, dtype=np.int64) if free_start else steps.astype(np.int64)
    for i, code in enumerate(needle, 1):
        diagonal = row[:-1] + (hay != code)
        candidate = np.empty(n + 1, dtype=np.int64)
        candidate[0] = i
        candidate[1:] = np.minimum(diagonal, row[1:] + 1)
        # Insertions along the row: row[j] = min over k <= j of candidate[k] + (j - k).
        row = np.minimum.accumulate(candidate - steps) + steps
    return row


def levenshtein(a: str, b: str) -> int:
    """Character edit distance (insertions, deletions, substitutions) between two texts."""
    # A common prefix and suffix cost nothing: compare only what lies between them.
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    a, b = a[head : len(a) - tail], b[head : len(b) - tail]
    if not a or not b:
        return len(a) + len(b)
    return int(_last_row(_codes(a), _codes(b), free_start=False)[-1])


def best_substring(needle: str, haystack: str) -> tuple[Span, int]:
    """The substring of ``haystack`` closest to ``needle`` by edit distance, and that
    distance: the earliest end among the best, then the latest start for that end."""
    if not needle:
        return (0, 0), 0
    if not haystack:
        return (0, 0), len(needle)
    codes, hay = _codes(needle), _codes(haystack)
    row = _last_row(codes, hay, free_start=True)
    end = int(np.argmin(row))
    # The start: align the reversed needle against the reversed prefix ending at ``end``.
    back = _last_row(codes[::-1], hay[:end][::-1], free_start=False)
    length = int(np.argmin(back))
    return (end - length, end), int(row[end])


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate of ``text`` as ``"U+D800"``, or None if there is none.

    JSON's ``"\\ud800"`` escape decodes to such a code point, which no UTF-8 file, Arrow
    column or cache key can hold (a paired ``"\\ud83d\\ude00"`` decodes to one character).
    """
    found = _LONE_SURROGATE.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"
