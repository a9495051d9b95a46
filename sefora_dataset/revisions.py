"""Revisions: what became of each instructor-marked span in the essay's next draft.

For every inline annotation on a draft that has a later stage:

1. Paragraph alignment: the paragraphs of the draft and of the next one are aligned in
   order (a maximum-similarity monotone alignment, like a sequence alignment with free
   gaps) where two paragraphs may pair only if their similarity (Dice coefficient of their
   word-bigram sets, case-folded) is at least `MIN_PARAGRAPH_SIMILARITY`; a second pass
   pairs paragraphs moved out of order. A paragraph left without a partner was removed
   (or rewritten beyond recognition).
2. Span alignment: a span whose text occurs exactly once in the partner paragraph stayed
   as it was; otherwise the character diff (difflib on word and punctuation tokens) of
   the paragraph and its partner maps the span's ends into the next draft. An end inside
   a changed stretch maps to the edge of its replacement (so the whole replacement
   counts); text inserted right at a span's edge stays outside it.
3. Label: ``unaligned`` (the span was never located in its paragraph, so there is nothing
   to follow), ``paragraph_removed`` (no partner paragraph), ``removed`` (nothing of the
   span is left), ``unchanged`` (the mapped text equals the original) or ``edited``; plus
   the character edit distance between the span's text before and after.

A span whose paragraph lost it (``removed`` or ``paragraph_removed``) but whose exact text
(at least `MIN_MOVED_CHARS` characters) appears in another paragraph of the next draft was
moved, e.g. by a paragraph split: it is followed there and ``moved`` is set. Sticky notes
are followed through the sentence around them (the sticky-note rule of
`sefora_common.text.sentence_around`).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sefora_common.text import Span, levenshtein, resolve_span, span_iou

from .categories import categorize

LABELS = ("unchanged", "edited", "removed", "paragraph_removed", "unaligned")
#: Labels that count as "the student revised the span".
REVISED = ("edited", "removed", "paragraph_removed")
#: Two paragraphs below this bigram Dice similarity are never aligned.
MIN_PARAGRAPH_SIMILARITY = 0.2
#: A lost span is searched verbatim in the other paragraphs only if at least this long.
MIN_MOVED_CHARS = 12

# Diff tokens: words and single other characters, compared without the white space that
# follows them (which still belongs to their character range).
_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"\w+")


def _bigrams(text: str) -> set[tuple[str, str]]:
    words = _WORD.findall(text.casefold())
    return set(zip(words, words[1:], strict=False)) or {(w, "") for w in words}


def _dice(x: set, y: set) -> float:
    return 2 * len(x & y) / (len(x) + len(y)) if x or y else 1.0


def paragraph_similarity(a: str, b: str) -> float:
    """Dice coefficient of the word-bigram sets of two paragraphs (1 = same bigrams)."""
    return _dice(_bigrams(a), _bigrams(b))


def align_paragraphs(
    before: Sequence[str], after: Sequence[str], min_similarity: float = MIN_PARAGRAPH_SIMILARITY
) -> list[tuple[int | None, float]]:
    """For each paragraph of ``before``: the index of its partner in ``after`` (or None) and
    their similarity, from the order-preserving alignment of greatest total similarity;
    then paragraphs still without a partner take the most similar one still free (a
    paragraph moved out of order)."""
    grams_after = [_bigrams(b) for b in after]
    sims = [[_dice(x, y) for y in grams_after] for x in map(_bigrams, before)]
    n, m = len(before), len(after)
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            s = sims[i - 1][j - 1]
            pair = best[i - 1][j - 1] + s if s >= min_similarity else -1.0
            best[i][j] = max(best[i - 1][j], best[i][j - 1], pair)
    partner: list[tuple[int | None, float]] = [(None, 0.0)] * n
    i, j = n, m
    while i > 0 and j > 0:
        s = sims[i - 1][j - 1]
        if s >= min_similarity and best[i][j] == best[i - 1][j - 1] + s:
            partner[i - 1] = (j - 1, s)
            i, j = i - 1, j - 1
        elif best[i][j] == best[i - 1][j]:
            i -= 1
        else:
            j -= 1
    # Second pass: a paragraph moved out of order pairs with the most similar one left over.
    free = set(range(m)) - {j for j, _ in partner if j is not None}
    for i in sorted(range(n), key=lambda i: -max(sims[i], default=0.0)):
        if partner[i][0] is None and free:
            j = max(free, key=lambda j: (sims[i][j], -j))
            if sims[i][j] >= min_similarity:
                partner[i] = (j, sims[i][j])
                free.discard(j)
    return partner


def _tokens(text: str) -> tuple[list[str], list[int]]:
    """The tokens of ``text`` and their character boundaries (token i covers
    ``bounds[i]:bounds[i + 1]``, its trailing white space included; leading white space
    belongs to the first token)."""
    found = list(_TOKEN.finditer(text))
    bounds = [0] + [m.start() for m in found[1:]] + [len(text)]
    return [m.group() for m in found], (bounds if found else [0, len(text)])


def char_opcodes(a: str, b: str) -> list[tuple[str, int, int, int, int]]:
    """difflib opcodes of the token diff of ``a`` and ``b``, in character offsets."""
    if a == b:
        return [("equal", 0, len(a), 0, len(b))] if a else []
    ta, oa = _tokens(a)
    tb, ob = _tokens(b)
    if not ta or not tb:  # nothing to match: one change over everything
        return [("replace" if ta and tb else "delete" if ta else "insert", 0, len(a), 0, len(b))]
    matcher = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    return [(tag, oa[i1], oa[i2], ob[j1], ob[j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes()]


def map_span(span: Span, opcodes: Sequence[tuple[str, int, int, int, int]]) -> Span:
    """The range ``span`` becomes under a character diff (empty if all of it was deleted)."""
    start, end = span
    new_start = new_end = None
    for tag, i1, i2, j1, j2 in opcodes:
        if new_start is None and i1 <= start < i2:
            new_start = j1 + (start - i1) if tag == "equal" else j1
        if new_end is None and i1 < end <= i2:
            new_end = j1 + (end - i1) if tag == "equal" else (j2 if tag == "replace" else j1)
    last = opcodes[-1][4] if opcodes else 0
    new_start = last if new_start is None else new_start
    new_end = 0 if new_end is None else new_end
    return (new_start, max(new_start, new_end))


def follow_span(
    span: Span, before: str, after: str, opcodes: Sequence[tuple[str, int, int, int, int]]
) -> tuple[Span, str]:
    """Where ``span`` of paragraph ``before`` went in ``after`` (``opcodes``: their
    `char_opcodes`), and its label: unchanged, edited or removed."""
    new = map_span(span, opcodes)
    if new[1] <= new[0] or not after[new[0] : new[1]].strip():
        return new, "removed"
    return new, "unchanged" if after[new[0] : new[1]] == before[span[0] : span[1]] else "edited"


def _find_moved(text: str, paragraphs: Sequence[str], skip: int | None) -> tuple[int, Span] | None:
    if len(text.strip()) < MIN_MOVED_CHARS:
        return None
    for index, body in enumerate(paragraphs):
        at = body.find(text) if index != skip else -1
        if at >= 0:
            return index, (at, at + len(text))
    return None


def revision_rows(draft: Mapping[str, Any], next_draft: Mapping[str, Any]) -> list[dict]:
    """The ``revisions`` rows of one draft (a ``drafts`` config row) against the next one."""
    before = [p["body"] for p in draft["paragraphs"]]
    after = [p["body"] for p in next_draft["paragraphs"]]
    partners = align_paragraphs(before, after)
    ids = {k: draft[k] for k in ("essay_id", "assignment_id", "student_id", "batch", "course")}
    ids.update({k: draft[k] for k in ("class", "essay")})
    rows = []
    for p_index, (para, (partner, similarity)) in enumerate(
        zip(draft["paragraphs"], partners, strict=True)
    ):
        body = para["body"]
        opcodes: list[tuple[str, int, int, int, int]] | None = None  # diffed on first need
        paragraph_id = f"{draft['draft_id']}_P{p_index:03d}"
        for a_index, ann in enumerate(para["annotations"]):
            span = resolve_span(body, ann["start"], ann["end"])
            target, moved = partner, False
            new: Span | None = None
            span_text = new_text = None
            distance: int | None = None
            if span is None:
                label = "unaligned"
            else:
                span_text = body[span[0] : span[1]]
                if partner is None:
                    label = "paragraph_removed"
                else:
                    other = after[partner]
                    if other.count(span_text) == 1:  # verbatim, once: it stayed as it was
                        at = other.index(span_text)
                        new, label = (at, at + len(span_text)), "unchanged"
                    else:
                        opcodes = opcodes if opcodes is not None else char_opcodes(body, other)
                        new, label = follow_span(span, body, other, opcodes)
                if label in ("removed", "paragraph_removed"):
                    found = _find_moved(span_text, after, partner)
                    if found is not None:
                        target, new = found
                        label, moved = "unchanged", True
                if target is not None and new is not None:
                    new_text = after[target][new[0] : new[1]]
                if label == "edited" and new_text is not None:
                    distance = levenshtein(span_text, new_text)
                else:  # unchanged: 0; removed: all of the span's characters went
                    distance = 0 if label == "unchanged" else len(span_text)
            rows.append(
                {
                    "annotation_id": f"{paragraph_id}_A{a_index:02d}",
                    "paragraph_id": paragraph_id,
                    "draft_id": draft["draft_id"],
                    "next_draft_id": next_draft["draft_id"],
                    **ids,
                    "stage": draft["stage"],
                    "next_stage": next_draft["stage"],
                    "paragraph_index": p_index,
                    "annotation_index": a_index,
                    "type": ann["type"],
                    "color": ann["color"],
                    "comment": ann["comment"],
                    "comment_category": categorize(ann["comment"]) if ann["comment"] else None,
                    "paragraph": body,
                    "start": span[0] if span else -1,
                    "end": span[1] if span else -1,
                    "span_text": span_text,
                    "next_paragraph_index": -1 if target is None else target,
                    "next_paragraph": after[target] if target is not None else None,
                    "paragraph_similarity": similarity if partner is not None else None,
                    "next_start": new[0] if new is not None else -1,
                    "next_end": new[1] if new is not None else -1,
                    "next_span_text": new_text,
                    "label": label,
                    "edit_distance": distance,
                    "moved": moved,
                }
            )
    return rows


def essay_revision_rows(drafts: Sequence[Mapping[str, Any]]) -> list[dict]:
    """The ``revisions`` rows of one essay: its ``drafts`` rows in stage order, each
    against the next."""
    rows = []
    for draft, next_draft in zip(drafts, drafts[1:], strict=False):
        rows += revision_rows(draft, next_draft)
    return rows


def revision_summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts for the card: labels overall and by annotation type, colour and category."""
    rows = list(rows)

    def by(key: str) -> dict[str, dict[str, int]]:
        table: dict[str, Counter] = {}
        for row in rows:
            table.setdefault(str(row[key] or "none"), Counter())[row["label"]] += 1
        return {k: {label: table[k][label] for label in LABELS} for k in sorted(table)}

    return {
        "rows": len(rows),
        "labels": {label: sum(r["label"] == label for r in rows) for label in LABELS},
        "moved": sum(bool(r["moved"]) for r in rows),
        "by_type": by("type"),
        "by_color": by("color"),
        "by_category": by("comment_category"),
    }


def uptake(
    revisions: Iterable[Mapping[str, Any]],
    predicted: Mapping[str, Sequence[Span | None]],
    theta: float = 0.5,
) -> dict[str, Any]:
    """How often the instructor-marked spans a feedback set hit were revised by the student.

    ``predicted`` maps a paragraph id to the spans the feedback pointed at (``(start,
    end)`` in that paragraph, None for an unlocated quote); ``revisions`` are rows of the
    ``revisions`` config. Over the rows of those paragraphs (``unaligned`` ones left out
    and counted), an instructor span is *hit* when some predicted span overlaps it with
    IoU ≥ ``theta``. Returns the uptake rate (share with a label in `REVISED`) of the hit
    spans, of the missed ones and of all, with the label counts of each group.
    """
    groups: dict[str, Counter] = {"hit": Counter(), "missed": Counter()}
    unaligned = 0
    paragraphs = set()
    for row in revisions:
        spans = predicted.get(row["paragraph_id"])
        if spans is None:
            continue
        paragraphs.add(row["paragraph_id"])
        if row["label"] == "unaligned":
            unaligned += 1
            continue
        span = (row["start"], row["end"])
        hit = any(span_iou(span, p) >= theta for p in spans)
        groups["hit" if hit else "missed"][row["label"]] += 1

    def rate(counter: Counter) -> float | None:
        total = sum(counter.values())
        return sum(counter[label] for label in REVISED) / total if total else None

    every = groups["hit"] + groups["missed"]
    return {
        "n_paragraphs": len(paragraphs),
        "n_spans": sum(every.values()),
        "n_hit": sum(groups["hit"].values()),
        "n_unaligned": unaligned,
        "uptake_hit": rate(groups["hit"]),
        "uptake_missed": rate(groups["missed"]),
        "uptake_all": rate(every),
        "labels_hit": {label: groups["hit"][label] for label in LABELS[:-1]},
        "labels_missed": {label: groups["missed"][label] for label in LABELS[:-1]},
        "theta": theta,
    }
