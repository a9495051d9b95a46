"""Building the draft structure from paragraphs and anchored spans, shared by both formats.

A span is anchored in one paragraph by character offsets ``[start, end)`` into its body
(``start == end`` for a sticky note, which sits at an insertion point). Its context is the
``CONTEXT_CHARS`` (20) characters of the body immediately left and right of the span, cut at
the paragraph's edges (so shorter at the start or end of a paragraph) -- the length the
SEFORA corpus mostly uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CONTEXT_CHARS = 20

TYPE_ORDER = {"highlight": 0, "strikeout": 1, "note": 2}

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_WEEKDAY = r"(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?"
_DATE = (
    rf"(?:{_WEEKDAY}{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|{_WEEKDAY}\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH},?\s+\d{{4}}"
    r"|\d{4}-\d{1,2}-\d{1,2}"
    r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4})"
)
_TIME = r"(?:(?:,|\s+at|\s+@)?\s*\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?(?:\s*[A-Z]{2,4})?)"
_LABEL = (
    r"(?:submitted(?:\s+on)?|submission(?:\s+date)?|date\s+submitted|turned\s+in(?:\s+on)?"
    r"|handed\s+in(?:\s+on)?|uploaded(?:\s+on)?|received(?:\s+on)?|last\s+modified|due"
    r"(?:\s+date)?|date)"
)
# A line that is only a submission stamp: a label and a date (and maybe a time), or a date
# with a time. A bare date without label or time ("November 5, 2024") is kept: students
# write such lines themselves.
SUBMISSION_LINE = re.compile(
    rf"^\W*(?:{_LABEL}\s*[:\-–—]?\s*{_DATE}{_TIME}?|{_DATE}{_TIME}|{_LABEL}\s*[:\-–—]?\s*"
    rf"{_TIME}\s*,?\s*{_DATE})\W*$",
    re.IGNORECASE,
)


def is_submission_line(text: str) -> bool:
    """True for a line that only stamps a submission date ("Submitted: Oct 3, 2022 9:14 PM")."""
    text = text.strip()
    return 0 < len(text) <= 80 and SUBMISSION_LINE.match(text) is not None


@dataclass
class Span:
    """An annotation anchored in one paragraph (offsets into its body)."""

    type: str  # highlight | note | strikeout
    para: int
    start: int
    end: int
    comment: str = ""
    color: str | None = None  # highlights only
    order: int = 0  # tie-break: position of the annotation in the source file


def annotation_dict(body: str, span: Span, context: int = CONTEXT_CHARS) -> dict:
    """The corpus JSON form of one anchored annotation."""
    start = max(0, min(span.start, len(body)))
    end = max(start, min(span.end, len(body)))
    out: dict = {"type": span.type}
    if span.type == "highlight":
        out["color"] = span.color or "generic"
    if span.type != "note":
        out["text"] = body[start:end]
    out["comment"] = span.comment
    out["context_left"] = body[max(0, start - context) : start]
    out["context_right"] = body[end : end + context]
    return out


def build_draft(
    bodies: list[str],
    spans: list[Span],
    overall: list[str] | None = None,
    context: int = CONTEXT_CHARS,
) -> dict:
    """The draft dict (corpus JSON structure) from paragraph bodies and anchored spans.

    Annotations within a paragraph are ordered by position (start, end), then type, then
    their order in the source file. ``overall`` comments become the top-level
    ``annotations`` list (with empty ``grades``), present only when there is one.
    """
    per_para: list[list[Span]] = [[] for _ in bodies]
    for span in spans:
        if 0 <= span.para < len(bodies):
            per_para[span.para].append(span)
    paragraphs = []
    for body, items in zip(bodies, per_para, strict=True):
        items.sort(key=lambda s: (s.start, s.end, TYPE_ORDER.get(s.type, 9), s.order))
        paragraphs.append(
            {"body": body, "annotations": [annotation_dict(body, s, context) for s in items]}
        )
    draft: dict = {"paragraphs": paragraphs}
    if overall:
        draft["annotations"] = [{"grades": {}, "comment": c} for c in overall]
    return draft


def build_parsed_draft(bodies: list[str], spans: list[Span], overall: list[str]) -> dict:
    """:func:`build_draft` for a parsed file, one tail for both formats.

    Paragraphs that hold only whitespace or only a submission stamp are dropped and the
    spans' paragraph numbers follow.
    """
    keep = [i for i, b in enumerate(bodies) if b.strip() and not is_submission_line(b)]
    renumber = {old: new for new, old in enumerate(keep)}
    kept = [
        Span(s.type, renumber[s.para], s.start, s.end, s.comment, s.color, s.order)
        for s in spans
        if s.para in renumber
    ]
    return build_draft([bodies[i] for i in keep], kept, overall)
