"""Anchored feedback: read a model's (quoted span, comment) items and find each quote.

A model asked for anchored feedback answers with blocks of labelled lines (the format the
grid's anchored prompts ask for)::

    Quote: "the exact words of the paragraph the comment is about"
    Category: Praise            (optional)
    Comment: the comment to the student

`parse_anchored` reads such a reply strictly (every line that is not part of an item is
reported), and `locate_quote` turns a quote into character offsets in the paragraph:
exact match first, then case-, quote-mark- and white-space-insensitive, then fuzzy (the
substring of least edit distance, accepted at ``similarity >= min_similarity``). A quote
that cannot be found is returned as unlocated with its best similarity, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sefora_common.text import Span, best_substring, normalise_with_map

#: How a quote was found, from the most to the least certain.
METHODS = ("exact", "normalized", "fuzzy", "unlocated")
#: Default minimum similarity (1 - edit distance / quote length, on normalized text) of a
#: fuzzy match: about one character in ten may differ.
MIN_SIMILARITY = 0.9
#: Quotation marks a model may wrap around a quote, and an elision inside one.
_WRAPPERS = ('"', "'", "“", "”", "‘", "’", "«", "»", "`")
_ELISION = re.compile(r"\s*(?:\.\.\.|…|\[\.\.\.\]|\[…\])\s*")


@dataclass(frozen=True)
class QuoteLocation:
    """Where a quote is in the paragraph: ``text[start:end]``, or -1/-1 when unlocated.

    ``similarity`` is 1 for exact and normalized matches, else 1 - edit distance / quote
    length of the best substring found (also for an unlocated quote, to show how close it
    came); ``occurrences`` counts the exact or normalized matches (the first is used).
    """

    quote: str
    start: int
    end: int
    method: str
    similarity: float
    occurrences: int = 1

    @property
    def located(self) -> bool:
        """Whether the quote was found."""
        return self.method != "unlocated"

    @property
    def span(self) -> Span | None:
        """``(start, end)``, or None when unlocated."""
        return (self.start, self.end) if self.located else None


def _unwrap(quote: str) -> str:
    text = quote.strip()
    while len(text) >= 2 and text[0] in _WRAPPERS and text[-1] in _WRAPPERS:
        text = text[1:-1].strip()
    return _ELISION.sub(" ... ", text).strip(" .") if _ELISION.search(text) else text


def _snap(text: str, start: int, end: int) -> Span:
    """Widen a fuzzy match to whole words (a match edge never cuts a word in two)."""
    while start > 0 and text[start - 1].isalnum() and text[start].isalnum():
        start -= 1
    while end < len(text) and text[end - 1].isalnum() and text[end].isalnum():
        end += 1
    return start, end


def _locate_part(part: str, text: str, offset: int, min_similarity: float) -> QuoteLocation:
    """The cascade for one contiguous piece of a quote, searching ``text[offset:]``."""
    hay = text[offset:]
    at = hay.find(part)
    if at >= 0:
        return QuoteLocation(
            part, offset + at, offset + at + len(part), "exact", 1.0, hay.count(part)
        )
    needle, _ = normalise_with_map(part)
    norm, where = normalise_with_map(hay)
    if not needle:
        return QuoteLocation(part, -1, -1, "unlocated", 0.0, 0)
    at = norm.find(needle)
    if at >= 0:
        start, end = where[at], where[at + len(needle) - 1] + 1
        return QuoteLocation(
            part, offset + start, offset + end, "normalized", 1.0, norm.count(needle)
        )
    (a, b), distance = best_substring(needle, norm)
    similarity = max(0.0, 1.0 - distance / len(needle))
    if b > a and similarity >= min_similarity:
        start, end = _snap(text, offset + where[a], offset + where[b - 1] + 1)
        return QuoteLocation(part, start, end, "fuzzy", similarity)
    return QuoteLocation(part, -1, -1, "unlocated", similarity, 0)


def locate_quote(quote: str, text: str, min_similarity: float = MIN_SIMILARITY) -> QuoteLocation:
    """Character offsets of ``quote`` in ``text`` (see the module docstring for the cascade).

    Quotation marks around the quote are ignored. An elided quote ("first words ... last
    words") is found piece by piece, in order, and spans from the first piece to the last;
    its method is that of its least certain piece.
    """
    if not 0 < min_similarity <= 1:
        raise ValueError(f"min_similarity must be in (0, 1], got {min_similarity!r}")
    cleaned = _unwrap(quote)
    parts = [p for p in cleaned.split(" ... ") if p.strip()] if " ... " in cleaned else [cleaned]
    if not parts or not cleaned:
        return QuoteLocation(quote, -1, -1, "unlocated", 0.0, 0)
    found, offset = [], 0
    for part in parts:
        location = _locate_part(part, text, offset, min_similarity)
        if not location.located:
            return QuoteLocation(quote, -1, -1, "unlocated", location.similarity, 0)
        found.append(location)
        offset = location.end
    method = max((f.method for f in found), key=METHODS.index)
    return QuoteLocation(
        quote,
        found[0].start,
        found[-1].end,
        method,
        min(f.similarity for f in found),
        found[0].occurrences if len(found) == 1 else 1,
    )


# --- the anchored reply format -----------------------------------------------------------

QUOTE_LABEL = "Quote:"
CATEGORY_LABEL = "Category:"
COMMENT_LABEL = "Comment:"
_LINE = re.compile(
    r"^[\s>#*_-]*(?:\d+[.)]\s*)?[*_]*(quote|category|comment)[*_]*\s*:[*_]*\s*(.*?)[*_]*\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AnchoredItem:
    """One (quoted span, comment) item of an anchored reply; ``quote`` None if it had none."""

    quote: str | None
    comment: str
    category: str | None = None


@dataclass
class AnchoredReply:
    """The items of a reply and every problem found reading it (line numbers are 1-based)."""

    items: list[AnchoredItem] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the reply followed the format exactly."""
        return not self.problems


def parse_anchored(reply: str) -> AnchoredReply:
    """The (quote, comment) items of an anchored reply, strictly.

    An item starts at a ``Quote:`` line and ends before the next ``Quote:``; a ``Comment:``
    (continued on the following unlabelled lines) completes it. Reported as problems, and
    kept where they still carry feedback: a comment without a quote (kept, ``quote`` None),
    a quote without a comment (dropped: it is no feedback), a second comment in one item
    (kept as an item without a quote), text outside any item (dropped).
    """
    result = AnchoredReply()
    current: dict[str, str | None] = {}
    last: str | None = None

    def close() -> None:
        nonlocal current, last
        quote, comment = current.get("quote"), (current.get("comment") or "").strip()
        if comment:
            result.items.append(AnchoredItem(quote, comment, current.get("category") or None))
            if quote is None:
                result.problems.append(f"comment without a quote: {comment[:60]!r}")
        elif quote is not None:
            result.problems.append(f"quote without a comment: {quote[:60]!r}")
        current, last = {}, None

    for number, line in enumerate(reply.splitlines(), 1):
        match = _LINE.match(line)
        if match is None:
            if not line.strip():
                continue
            if last in ("comment", "quote"):
                current[last] = f"{current[last]} {line.strip()}".strip()
            else:
                result.problems.append(f"line {number}: outside any item: {line.strip()[:60]!r}")
            continue
        label, value = match.group(1).lower(), match.group(2).strip()
        if label == "quote" and current:
            close()
        elif label in current:  # a second comment or category in one item
            close()
            result.problems.append(f"line {number}: a second {label} in one item")
        current[label] = value
        last = label
    if current:
        close()
    if not result.items and not result.problems:
        result.problems.append("no item in the reply")
    return result


@dataclass(frozen=True)
class AnchoredFeedback:
    """A parsed item with the location of its quote (None for an item without a quote)."""

    item: AnchoredItem
    location: QuoteLocation | None

    @property
    def span(self) -> Span | None:
        """The character range the comment is anchored to, or None."""
        return self.location.span if self.location is not None else None


def anchor_items(
    items: Sequence[AnchoredItem], paragraph: str, min_similarity: float = MIN_SIMILARITY
) -> list[AnchoredFeedback]:
    """Each item with its quote located in ``paragraph`` (every item is kept)."""
    return [
        AnchoredFeedback(
            item,
            None if item.quote is None else locate_quote(item.quote, paragraph, min_similarity),
        )
        for item in items
    ]
