"""Annotated PDF drafts -> the corpus draft structure (PyMuPDF, deterministic).

Word processors (Word, Google Docs, Pages, LibreOffice) do not store text as text: they
store glyphs at positions, often without the spaces at line ends, never with tabs, and
sometimes out of reading order. So word and paragraph boundaries come from the glyphs'
geometry, measured on each document itself. In order:

1. **Characters.** Every character of the page text (``rawdict`` with whitespace and
   ligatures preserved and no synthesized spaces) is kept with its box. MuPDF's spans
   (runs of one font) are grouped into visual lines by baseline, and a line's runs are
   merged by position, each keeping its drawing order: glyphs drawn later in a fallback
   font land where they stand, a ligature's zero-width followers stay in place.
2. **Page furniture.** A line near the top or bottom edge whose text (digits ignored)
   recurs at the same height on at least two pages and on at least 40% of them -- a
   running header ("Okafor 3"), a footer, a page number -- is removed; so is a lone
   page-number line ("3", "Page 3 of 7", "Okafor 3") at the very edge of the page, and
   any line that is only a submission stamp (see
   :func:`~sefora_dataset.parsers.anchor.is_submission_line`). Everything below is
   measured without them.
3. **The layout's measures.** Left margin: the leftmost line start (whitespace glyphs
   included, so lines typed with leading spaces start at the margin) shared by a tenth
   of the lines. Right margin: the rightmost end of a line with a space in it (only a
   word too long for a line runs past the margin). Line pitch: the smallest common
   baseline distance. Fonts: how much taller a line holding a fallback font (CJK,
   symbols) is set, per font, from the document's own lines. Whether paragraphs are
   spaced, indented or neither; whether the text is justified (wrapped lines end at the
   margin); whether wrapped lines keep their trailing space.
4. **Paragraphs.** On a page, a new paragraph starts after vertical space beyond the
   pitch (net of what taller fonts explain), at a change of font size, at a first-line
   indent in documents that do not space their paragraphs, or after a line that ended
   -- the next line's first word would have fitted after it, or (justified text) it
   stops short of the margin -- except that where paragraphs are spaced such a line is a
   line break (``"\n"``); in documents marked by indents, a few unindented starts are
   line breaks too. A centred line continues a centred line above it when its first word
   would not have fitted there (a wrapped title). Across a page break the layout of both
   pages decides: a new paragraph when the next page starts indented or lower than its
   other pages' first lines, when the last line ended, or -- in spaced documents -- when
   another line would have fitted on the page (the next paragraph's space did not),
   unless that is widow control.
5. **Line joins.** A line break is a space unless the PDF kept the whitespace, the line
   ends with a hyphen, dash or slash attached to its word (keep it, add nothing) or with
   a character after which a URL breaks, the next line starts with an attached dash, a
   script written without spaces (CJK, Thai, ...) is on either side, or the two pieces
   form one word longer than a line. Inside a line, a gap between visible glyphs with
   no whitespace glyph is a space (none between ideographs), a whitespace glyph followed
   by a jump to a tab stop is a tab, and a paragraph indented without any glyph starts
   with typed tabs when the indent is not the document's formatting (see
   :func:`_leads`). Whitespace written without a glyph gets a box, so a highlight that
   reaches over it takes it.
6. **Annotations.** Highlight, Underline, Squiggly and StrikeOut annotations are
   anchored from their quads (the characters whose centre lies in a quad), one
   annotation per paragraph touched; the two halves of a highlight split over a page
   break are merged. Highlight colour comes from rendering the highlighted region (the
   most frequent non-white, non-text pixel colour, opacity undone) and is mapped to the
   nearest legend colour, ``generic`` when none is close (the annotation's ``/C``
   colour is the fallback when the rendering shows no colour). Sticky notes (Text) and
   FreeText boxes are anchored at the text boundary nearest to the icon's top-left
   corner; one whose subject says it is an overall/summary/general/final comment, or
   that lies farther than 72 pt from any body text, is the draft's overall comment. A
   reply (``/IRT``) is appended to its parent's comment on a new line. The
   annotation's ``/Contents`` is the comment.

Context strings are 20 characters (see :mod:`.anchor`).
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pymupdf

from ..errors import ParseError
from .anchor import Span, build_parsed_draft, is_submission_line
from .legend import GENERIC, Legend, load_legend

TEXT_FLAGS = (
    pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_PRESERVE_LIGATURES | pymupdf.TEXT_INHIBIT_SPACES
)

NOTE_RADIUS = 72.0  # pt: a sticky note farther than this from body text is an overall comment
OVERALL_SUBJECT = re.compile(
    r"\b(overall|summary|general|final|end|global|grade|grading)\b", re.IGNORECASE
)
PAGE_NUMBER_LINE = re.compile(
    r"^\W*(?:page\s*)?(\d{1,4})(?:\s*(?:of|/)\s*\d{1,4})?\W*$", re.IGNORECASE
)
HEADER_WITH_NUMBER = re.compile(r"^[^\d]{1,60}?\s(\d{1,4})$")

HIGHLIGHT_TYPES = {
    pymupdf.PDF_ANNOT_HIGHLIGHT: "highlight",
    pymupdf.PDF_ANNOT_UNDERLINE: "highlight",
    pymupdf.PDF_ANNOT_SQUIGGLY: "highlight",
    pymupdf.PDF_ANNOT_STRIKE_OUT: "strikeout",
}
NOTE_TYPES = {pymupdf.PDF_ANNOT_TEXT, pymupdf.PDF_ANNOT_FREE_TEXT}
DASHES = frozenset("\u2013\u2014")
URL_BREAKS = frozenset("?=&#%_~+")  # where a layout may break a URL
NO_BREAK = frozenset("\u00a0\u2007\u202f")  # spaces a line never breaks at


@dataclass(slots=True)
class Char:
    c: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    offset: int = -1  # offset in its paragraph's body, once built


@dataclass
class Line:
    page: int
    baseline: float
    chars: list[Char]
    size: float
    fonts: frozenset[str]
    para: int = -1
    text: str = ""
    top: float = 0.0
    bottom: float = 0.0
    first_vis: int = -1  # index of the first non-whitespace character, -1 if none
    last_vis: int = -1
    # whitespace the parser wrote without a glyph (line-break spaces, tabs), with boxes
    virtual: list[Char] = field(default_factory=list)

    def finish(self) -> None:
        self.text = "".join(ch.c for ch in self.chars)
        self.top = min(ch.y0 for ch in self.chars)
        self.bottom = max(ch.y1 for ch in self.chars)
        vis = [i for i, ch in enumerate(self.chars) if not ch.c.isspace()]
        self.first_vis = vis[0] if vis else -1
        self.last_vis = vis[-1] if vis else -1

    @property
    def x0_vis(self) -> float:
        return self.chars[self.first_vis].x0 if self.first_vis >= 0 else self.chars[0].x0

    @property
    def x1_vis(self) -> float:
        return self.chars[self.last_vis].x1 if self.last_vis >= 0 else self.chars[-1].x1

    @property
    def ends_with_space(self) -> bool:
        return self.chars[-1].c.isspace()

    @property
    def starts_with_space(self) -> bool:
        return self.chars[0].c.isspace()

    @property
    def inner_space(self) -> bool:
        """Whether the visible text has a whitespace glyph inside (something to stretch)."""
        return any(ch.c.isspace() for ch in self.chars[self.first_vis : self.last_vis])

    def first_word_width(self) -> float:
        """Width of the text before the first place a line could break."""
        if self.first_vis < 0:
            return 0.0
        start = end = self.chars[self.first_vis]
        for ch in self.chars[self.first_vis :]:
            if ch.c.isspace() and ch.c not in NO_BREAK:
                break
            end = ch
        return end.x1 - start.x0

    def last_word_width(self) -> float:
        """Width of the text after the last place a line could break."""
        if self.last_vis < 0:
            return 0.0
        end = start = self.chars[self.last_vis]
        for ch in reversed(self.chars[: self.last_vis + 1]):
            if ch.c.isspace() and ch.c not in NO_BREAK:
                break
            start = ch
        return end.x1 - start.x0


@dataclass
class _Page:
    number: int
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)


# ----------------------------------------------------------------------------- reading


def _open(path: Path) -> pymupdf.Document:
    data = path.read_bytes()
    if not data:
        raise ParseError(path, "empty file (0 bytes)")
    if b"%PDF-" not in data[:1024]:
        raise ParseError(path, "not a PDF (no %PDF- header)")
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as err:  # MuPDF raises its own exception types
        raise ParseError(path, f"corrupt PDF: {err}") from err
    if doc.needs_pass:
        doc.close()
        raise ParseError(path, "encrypted PDF (a password is required)")
    if b"%%EOF" not in data[-2048:] and doc.is_repaired:
        doc.close()
        raise ParseError(path, "truncated PDF (no %%EOF marker; the file was cut short)")
    if doc.page_count == 0:
        doc.close()
        raise ParseError(path, "PDF has no pages")
    return doc


def _page_lines(page: pymupdf.Page, number: int) -> list[Line]:
    """Visual lines of one page, top to bottom, each in reading order.

    MuPDF's spans (runs of one font) are grouped by baseline; a line's runs are merged
    by position, each keeping its own drawing order, so that glyphs a word processor
    drew later in a fallback font land where they stand, while a ligature's zero-width
    followers and kerned neighbours stay in order.
    """
    raw = page.get_text("rawdict", flags=TEXT_FLAGS)
    runs: list[tuple[float, float, str, list[Char]]] = []
    for block in raw["blocks"]:
        if block.get("type", 0) != 0:
            continue
        for line in block["lines"]:
            dx, dy = line["dir"]
            if abs(dy) > 0.1 or dx <= 0:  # rotated or vertical text (watermarks, margins)
                continue
            for span in line["spans"]:
                size = float(span["size"]) or 1.0
                chars = [Char(ch["c"], *_box(ch["bbox"]), size) for ch in span["chars"]]
                if chars:
                    runs.append((span["chars"][0]["origin"][1], size, span["font"], chars))
    runs.sort(key=lambda r: r[0])
    groups: list[list[tuple[float, float, str, list[Char]]]] = []
    for run in runs:
        if groups:
            last = groups[-1]
            tol = 0.5 * min(run[1], min(r[1] for r in last))
            if abs(run[0] - last[0][0]) <= tol:
                last.append(run)
                continue
        groups.append([run])
    lines = []
    for group in groups:
        if len(group) == 1:
            chars = group[0][3]
        else:
            chars = list(heapq.merge(*(r[3] for r in group), key=_x0))
        sizes = Counter(round(ch.size, 1) for ch in chars if not ch.c.isspace())
        size = sizes.most_common(1)[0][0] if sizes else group[0][1]
        fonts = frozenset(r[2] for r in group if any(not ch.c.isspace() for ch in r[3]))
        line = Line(number, group[0][0], chars, size, fonts)
        line.finish()
        lines.append(line)
    return lines


def _box(bbox: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = bbox
    return x0, y0, x1, y1


def _x0(ch: Char) -> float:
    return ch.x0


# ---------------------------------------------------------------------------- furniture


def _furniture_key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split())).lower()


def _remove_furniture(pages: list[_Page]) -> None:
    """Drop running headers/footers, page numbers and submission stamps (in place)."""
    n_pages = len(pages)
    candidates: dict[str, list[tuple[int, float]]] = defaultdict(list)
    zone_lines: list[tuple[_Page, Line, float]] = []
    for page in pages:
        for line in page.lines:
            centre = (line.top + line.bottom) / 2
            if centre < 0.12 * page.height or centre > 0.88 * page.height:
                zone_lines.append((page, line, centre))
                key = _furniture_key(line.text)
                if key:
                    candidates[key].append((page.number, centre))
    drop: set[int] = set()
    need = max(2, math.ceil(0.4 * n_pages))
    for page, line, centre in zone_lines:
        key = _furniture_key(line.text)
        if not key:
            continue
        pages_here = {p for p, y in candidates[key] if abs(y - centre) <= 6.0}
        if n_pages > 1 and len(pages_here) >= need:
            drop.add(id(line))
            continue
        edge = centre < 0.08 * page.height or centre > 0.92 * page.height
        if edge:
            text = " ".join(line.text.split())
            m = PAGE_NUMBER_LINE.match(text) or HEADER_WITH_NUMBER.match(text)
            if m and int(m.group(1)) == page.number + 1:
                drop.add(id(line))
    for page in pages:
        page.lines = [
            ln
            for ln in page.lines
            if id(ln) not in drop and not is_submission_line(ln.text) and ln.chars
        ]


# --------------------------------------------------------------------------- paragraphs

# Characters after which a line may break without a space: hyphens and dashes, a slash
# (a URL, "and/or"), a soft hyphen.
BREAK_AFTER = frozenset("-\u00ad\u2010\u2011\u2012\u2013\u2014/")
# Scripts written without spaces between words: no space at their line breaks or gaps.
UNSPACED = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3000, 0x30FF),  # CJK punctuation, Hiragana, Katakana
    (0x3100, 0x31FF),  # Bopomofo, Katakana extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFE30, 0xFE4F),  # CJK compatibility forms
    (0xFF00, 0xFFEF),  # fullwidth forms
    (0x20000, 0x3FFFF),  # CJK extensions B-H
)
TAB_STOP = 36.0  # pt: the default tab interval of word processors (0.5 in, LibreOffice 1.25 cm)


def _unspaced(c: str) -> bool:
    o = ord(c)
    return o >= 0x0E00 and any(lo <= o <= hi for lo, hi in UNSPACED)


def _mode(values: list[float], default: float) -> float:
    if not values:
        return default
    return Counter(values).most_common(1)[0][0]


@dataclass
class _Metrics:
    """The body text's layout, measured on the document itself."""

    left: float  # left margin
    right: float  # right margin (where full lines end)
    pitch: float  # baseline distance of consecutive body lines
    space: float  # width of a space in the body font
    size: float  # body font size
    heights: _FontHeights
    para_space: float | None  # the usual extra space between paragraphs (None: not spaced)
    gap_style: bool  # paragraphs separated by vertical space
    flush: bool  # paragraphs marked by neither space nor indents
    justified: bool
    keeps_spaces: bool  # wrapped lines keep their trailing space when it fits
    page_centre: float
    bottom: float  # lowest body baseline on any page
    top: float  # highest first baseline on the pages after the first


def _same_size(a: Line, b: Line) -> bool:
    return abs(a.size - b.size) <= 0.15 * max(a.size, b.size)


def _left_margin(vis: list[Line]) -> float:
    """The leftmost line start shared by enough lines.

    A line's start is its first glyph, whitespace included, so lines that begin with
    typed spaces still start at the margin; first-line indents and centred lines start
    further right, and a few stray lines further left (a hanging number) are ignored.
    """
    starts = Counter(round(ln.chars[0].x0) for ln in vis)
    need = max(2, 0.1 * len(vis))
    shared = [x for x, n in starts.items() if n >= need]
    if shared:
        return float(min(shared))
    return float(starts.most_common(1)[0][0]) if starts else 0.0


def _metrics(lines: list[Line], page_width: float) -> _Metrics:
    vis = [ln for ln in lines if ln.first_vis >= 0]
    size = _mode([ln.size for ln in vis], 11.0)
    body = [ln for ln in vis if abs(ln.size - size) <= 0.15 * size]
    left = _left_margin(vis) if vis else 0.0
    # a line with a space in it never runs past the margin (only a word too long for a
    # line can), so the rightmost end of such lines is the margin
    # line can), so the rightmost end of such lines is the margin -- unless no line came
    # within an inch of the margin a left margin of the same width would give
    ends = [ln.x1_vis for ln in body or vis if ln.inner_space]
    right = max(ends, default=0.0)
    if right < page_width - left - 72.0:
        right = page_width - left
    pairs = [
        (a, b)
        for a, b in zip(lines, lines[1:], strict=False)
        if a.page == b.page and b.baseline > a.baseline and _same_size(a, b)
    ]
    body_pairs = [(a, b) for a, b in pairs if abs(a.size - size) <= 0.15 * size]
    deltas = [round(b.baseline - a.baseline, 1) for a, b in body_pairs]
    # the line pitch is the smallest common distance (in documents of short spaced
    # paragraphs, the distance across a paragraph space may be the most common one)
    counts = Counter(deltas)
    common = [d for d, n in counts.items() if n >= max(2, 0.15 * len(deltas))]
    pitch = min(common) if common else _mode(deltas, 1.2 * size)
    near = [d for d in deltas if abs(d - pitch) <= 0.3]
    pitch = sorted(near)[len(near) // 2] if near else pitch
    spaces = [ch.x1 - ch.x0 for ln in body for ch in ln.chars if ch.c == " " and ch.x1 > ch.x0]
    space = sorted(spaces)[len(spaces) // 2] if spaces else 0.25 * size
    fonts = Counter(f for ln in body for f in ln.fonts)
    body_font = fonts.most_common(1)[0][0] if fonts else ""
    heights = _font_heights(body_pairs, pitch, body_font)
    spaced = [
        b.baseline - a.baseline - pitch
        for a, b in body_pairs
        if heights.extra(a, b) is None and b.baseline - a.baseline - pitch > _jitter(pitch)
    ]
    para_space = sorted(spaced)[len(spaced) // 2] if spaced else None
    m = _Metrics(
        left,
        right,
        pitch,
        space,
        size,
        heights,
        para_space,
        False,
        False,
        False,
        False,
        page_width / 2,
        0.0,
        0.0,
    )
    gaps = indents = flush_lines = wrapped = roomy = kept = 0
    for a, b in body_pairs:
        if _gap(a, b, m):
            gaps += 1
        elif _indented(b, m):
            indents += 1
        elif a.inner_space and not _is_short(a, b, m):
            wrapped += 1
            flush_lines += _flush_right(a, m)
            if a.x1_vis + 2 * m.space < m.right:  # there was room for the space
                roomy += 1
                kept += a.ends_with_space
    m.gap_style = gaps > indents
    m.flush = gaps + indents == 0
    m.justified = wrapped >= 3 and flush_lines >= 0.6 * wrapped
    m.keeps_spaces = roomy >= 3 and kept >= 0.9 * roomy
    bottoms = [max(ln.baseline for ln in page_lines) for page_lines in _by_page(body).values()]
    m.bottom = max(bottoms) if bottoms else 0.0
    tops = [min(ln.baseline for ln in pl) for p, pl in _by_page(body).items() if p > 0]
    m.top = min(tops) if tops else 0.0
    return m


def _by_page(lines: list[Line]) -> dict[int, list[Line]]:
    out: dict[int, list[Line]] = defaultdict(list)
    for ln in lines:
        out[ln.page].append(ln)
    return out


@dataclass
class _FontHeights:
    """How much farther from its neighbours a line is set when it holds other fonts.

    Word processors make a line as tall as its tallest font: a line with CJK or symbol
    glyphs from a fallback font sits lower below the line above (the font rises higher)
    and the next line sits lower below it (it drops deeper). Each font's rise and drop
    is the smallest extra distance seen where the other line holds only the body font
    (or fonts measured as no taller); a font seen once is never taken to add more than
    a fifth of a line. ``joint`` covers combinations no single font explains.
    """

    plain: frozenset[str]  # the body font and fonts measured as no taller
    rise: dict[str, float]
    drop: dict[str, float]
    joint: dict[tuple[frozenset[str], frozenset[str]], float]

    def extra(self, a: Line, b: Line) -> float | None:
        """Extra distance the two lines' fonts explain; None when both hold plain fonts."""
        above, below = a.fonts - self.plain, b.fonts - self.plain
        if not above and not below:
            return None
        if all(f in self.drop for f in above) and all(f in self.rise for f in below):
            return max((self.drop[f] for f in above), default=0.0) + max(
                (self.rise[f] for f in below), default=0.0
            )
        return self.joint.get((above, below), 0.0)


def _least(values: list[float], cap: float) -> float:
    return max(0.0, min(values) if len(values) > 1 else min(values[0], cap))


def _font_heights(pairs: list[tuple[Line, Line]], pitch: float, body_font: str) -> _FontHeights:
    plain = frozenset([body_font])
    cap = 0.2 * pitch
    rise: dict[str, float] = {}
    drop: dict[str, float] = {}
    for _ in range(2):  # the second round treats fonts measured flat as plain
        rises: dict[str, list[float]] = defaultdict(list)
        drops: dict[str, list[float]] = defaultdict(list)
        joint: dict[tuple[frozenset[str], frozenset[str]], list[float]] = defaultdict(list)
        for a, b in pairs:
            above, below = a.fonts - plain, b.fonts - plain
            excess = b.baseline - a.baseline - pitch
            if below and not above:
                for f in below:
                    rises[f].append(excess)
            elif above and not below:
                for f in above:
                    drops[f].append(excess)
            if above or below:
                joint[(above, below)].append(excess)
        rise = {f: _least(v, cap) for f, v in rises.items()}
        drop = {f: _least(v, cap) for f, v in drops.items()}
        flat = {f for f in rise if rise[f] < 0.5 and drop.get(f, 0.0) < 0.5}
        flat |= {f for f in drop if drop[f] < 0.5 and rise.get(f, 0.0) < 0.5}
        if not flat - plain:
            break
        plain = plain | flat
    return _FontHeights(plain, rise, drop, {k: _least(v, cap) for k, v in joint.items()})


def _gap(a: Line, b: Line, m: _Metrics) -> bool:
    """Is there vertical space between the two lines of one page beyond the line pitch?

    Between lines of the body font, any space beyond jitter counts. Where a line holds a
    taller font, the space its font explains is taken off, and what remains must also be
    near the document's usual paragraph space (half a line where it has none), since a
    fallback font's height varies from line to line.
    """
    excess = b.baseline - a.baseline - m.pitch * max(1.0, b.size / m.size)
    extra = m.heights.extra(a, b)
    if extra is None:
        return excess > _jitter(m.pitch)
    usual = m.para_space - 1.0 if m.para_space else 0.5 * m.pitch
    return excess - extra > _jitter(m.pitch) and excess > usual


def _jitter(pitch: float) -> float:
    """Extra baseline distance still within one paragraph's lines (rounding, sub/superscripts)."""
    return max(1.5, 0.08 * pitch)


def _is_short(a: Line, b: Line, m: _Metrics) -> bool:
    """Would the first word of ``b`` have fitted at the end of ``a``?"""
    if b.first_vis < 0 or a.first_vis < 0:
        return False
    room = m.right - a.x1_vis - m.space * a.size / m.size
    return b.first_word_width() < room - 1.0


def _flush_right(a: Line, m: _Metrics) -> bool:
    return a.x1_vis >= m.right - max(3.0, 0.25 * a.size)


def _ended(a: Line, b: Line, m: _Metrics) -> bool:
    """Did ``a`` end before the margin (a paragraph end or a line break, not a wrap)?

    A line ended when the next line's first word would have fitted after it. In justified
    text a wrapped line is also stretched to the margin, so one that stops short ended --
    unless reaching the margin would have stretched its spaces by more than one and a
    half times their width, which some layout engines refuse to do.
    """
    if _is_short(a, b, m):
        return True
    if not m.justified or _flush_right(a, m):
        return False
    gaps = sum(1 for ch in a.chars[a.first_vis : a.last_vis] if ch.c.isspace())
    return gaps > 0 and (m.right - a.x1_vis) / gaps <= 1.5 * m.space * a.size / m.size


def _indented(b: Line, m: _Metrics) -> bool:
    return b.first_vis >= 0 and b.x0_vis > m.left + max(0.6 * b.size, 5.0)


def _centred(line: Line, m: _Metrics, min_indent: float | None = None) -> bool:
    """Is the line centred (and indented, or beyond ``min_indent``)?"""
    if line.first_vis < 0:
        return False
    if min_indent is None:
        if not _indented(line, m):
            return False
    elif line.x0_vis <= m.left + min_indent:
        return False
    middle = (line.x0_vis + line.x1_vis) / 2
    # centred between the margins, or on the page (the right margin may be estimated short);
    # text that starts on a tab stop was more likely tabbed there, unless centred exactly
    off = min(abs(middle - (m.left + m.right) / 2), abs(middle - m.page_centre))
    return off <= (0.5 if _on_tab_stop(line.x0_vis - m.left) else 3.0)


PARA, BREAK, JOIN = "para", "break", "join"


def _same_page_break(a: Line, b: Line, m: _Metrics) -> str:
    """How line ``b`` follows line ``a`` above it on the same page."""
    if b.baseline <= a.baseline or not _same_size(a, b) or _gap(a, b, m):
        return PARA
    if _centred(a, m, 0.5) and _centred(b, m):
        # a centred block (a title) wraps when the next word did not fit
        space = m.space * b.size / m.size
        room = (m.right - m.left) - (a.x1_vis - a.x0_vis) - space
        return JOIN if b.first_word_width() >= room - 1.0 else PARA
    if _indented(b, m) and not m.gap_style:
        return PARA
    if _ended(a, b, m):
        # where paragraphs are spaced, a line that ended without a gap is a line break
        return BREAK if m.gap_style else PARA
    return JOIN


def _page_break(a: Line, b: Line, m: _Metrics, kinds: list[str], i: int, lines: list[Line]) -> str:
    """How line ``b``, first on its page, follows line ``a``, last on the page before.

    A new paragraph when ``b`` is indented, when ``a`` ended short, when ``b`` sits lower
    than the other pages' first lines (an empty paragraph or space before it), or -- in
    documents that space their paragraphs -- when another line would have fitted below
    ``a`` (the next paragraph's space did not), unless that is widow control at work
    (``b``'s paragraph then ends after one more line). A nearly full last line on a full
    page leaves it open: the paragraph goes on.
    """
    if not _same_size(a, b) or _indented(b, m) or _ended(a, b, m):
        return PARA
    if m.top and b.baseline > m.top + 0.5 * m.pitch:
        return PARA
    taller = m.heights.extra(a, b) or 0.0  # a line with a taller font needs more room
    if m.gap_style and a.baseline + m.pitch + taller <= m.bottom + 0.5:
        rest = 0
        for k in range(i + 1, len(lines)):
            if lines[k].page != b.page or kinds[k] == PARA:
                break
            rest += 1
        widow = rest == 1 and a.baseline + 2 * m.pitch > m.bottom + 0.5
        return JOIN if widow else PARA
    return JOIN


def _join(a: Line, b: Line, m: _Metrics) -> str:
    """What stands between two lines of one paragraph: a space or nothing.

    A break is a space unless it needs none: the PDF kept the whitespace; the line ends
    with a hyphen, dash or slash attached to its word (a spaced dash is followed by a
    space), with a character after which a URL breaks, or the next line starts with a
    dash attached to its word; a script without spaces (CJK, Thai, ...) is on either side;
    or the two pieces are one word wider than a line (a word too long for a line starts
    one and is broken where it stops fitting). In a document whose wrapped lines keep
    their trailing space, a spaced dash at the end of a line that had room for the space
    and kept none was not spaced.
    """
    if a.ends_with_space or b.starts_with_space or a.last_vis < 0 or b.first_vis < 0:
        return ""
    last, first = a.chars[a.last_vis].c, b.chars[b.first_vis].c
    kept_none = m.keeps_spaces and a.x1_vis + 2 * m.space * a.size / m.size < m.right
    if last in BREAK_AFTER:
        spaced = last != "/" and a.last_vis > 0 and a.chars[a.last_vis - 1].c.isspace()
        return " " if spaced and not kept_none else ""
    if last in URL_BREAKS and _in_url(a):
        return ""
    if (
        first in DASHES
        and b.first_vis + 1 < len(b.chars)
        and not b.chars[b.first_vis + 1].c.isspace()
    ):
        return ""
    if _unspaced(last) or _unspaced(first):
        return ""
    if not a.inner_space and a.last_word_width() + b.first_word_width() > m.right - m.left - 1.0:
        return ""
    return " "


def _in_url(a: Line) -> bool:
    """Does ``a`` end inside a URL (its last word holds a scheme or www.)?"""
    k = a.last_vis
    while k >= 0 and not a.chars[k].c.isspace():
        k -= 1
    word = "".join(ch.c for ch in a.chars[k + 1 : a.last_vis + 1]).lower()
    return "://" in word or word.startswith("www.")


def _line_text(line: Line, m: _Metrics, start_offset: int, lead: str) -> str:
    """The line's characters as body text; sets each character's offset.

    ``lead`` is whitespace to write before the first glyph (a tab the PDF did not keep).
    A whitespace glyph right after its predecessor and followed by a jump far wider than
    itself (to a tab stop) is a tab (a space glyph is the tab; after another whitespace
    glyph such as a no-break space, a tab follows it). A gap between two visible glyphs
    without any whitespace glyph is a space (a tab when wider than four spaces), except
    between characters of scripts without spaces and before a line-end hyphen.
    """
    out = []
    chars = line.chars
    offset = start_offset
    if lead:
        first = chars[0]
        line.virtual.append(Char(lead, m.left, line.top, first.x0, line.bottom, first.size, offset))
        out.append(lead)
        offset += len(lead)
    for i, ch in enumerate(chars):
        c = ch.c
        if i > 0:
            prev = chars[i - 1]
            gap = ch.x0 - prev.x1
            if (
                gap > 0.15 * ch.size
                and not prev.c.isspace()
                and not c.isspace()
                and prev.c != "\u200b"
                and not (_unspaced(prev.c) or _unspaced(c))
                and not (c in BREAK_AFTER and i == line.last_vis)
            ):
                fill = "\t" if gap > 4 * m.space * ch.size / m.size else " "
                line.virtual.append(
                    Char(fill, prev.x1, line.top, ch.x0, line.bottom, ch.size, offset)
                )
                out.append(fill)
                offset += 1
        ch.offset = offset
        if c.isspace() and i + 1 < len(chars):
            width = max(ch.x1 - ch.x0, 0.1)
            advance = chars[i + 1].x0 - ch.x0
            attached = i == 0 or ch.x0 - chars[i - 1].x1 <= 0.3 * width
            if advance > 3.2 * width and advance > 8.0 and attached:
                if c == " ":
                    c = "\t"
                elif c != "\t":
                    out.append(c)
                    offset += 1
                    line.virtual.append(
                        Char("\t", ch.x1, line.top, chars[i + 1].x0, line.bottom, ch.size, offset)
                    )
                    c = "\t"
        out.append(c)
        offset += len(c)
    return "".join(out)


def _starts(kinds: list[str]) -> list[tuple[int, int]]:
    """(first line, number of lines) of every paragraph."""
    out: list[tuple[int, int]] = []
    for i, kind in enumerate(kinds):
        if kind == PARA:
            out.append((i, 1))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + 1)
    return out


def _flush_starts(lines: list[Line], kinds: list[str], m: _Metrics) -> tuple[list[int], dict]:
    """Paragraphs of several lines starting at the margin after a line that ended, and the
    indented ones (line index -> indent)."""
    flush: list[int] = []
    indents: dict[int, float] = {}
    for i, n in _starts(kinds):
        ln = lines[i]
        if ln.first_vis != 0 or any(_centred(x, m) for x in lines[i : i + n]):
            continue  # (a centred block: a title)
        if _indented(ln, m):
            indents[i] = ln.x0_vis - m.left
        elif n >= 2 and ln.x0_vis - m.left < 2.0 and (i == 0 or _ended(lines[i - 1], ln, m)):
            flush.append(i)  # (after a line that ended: not the second half of a split)
    return flush, indents


def _soft_breaks(lines: list[Line], kinds: list[str], m: _Metrics) -> None:
    """In documents that mark paragraphs by indents, read a few unindented ones as breaks.

    There, a line that ended short followed by one at the margin is a new paragraph that
    was not indented or a line break inside one. When such starts are rare beside the
    indented ones (a tenth at most), the indent is the document's habit and they are line
    breaks; otherwise they are paragraphs (indents typed on some paragraphs only).
    """
    if m.gap_style:
        return
    flush, indents = _flush_starts(lines, kinds, m)
    if not flush or len(flush) > 0.1 * len(indents):
        return
    for i in flush:
        a, b = lines[i - 1] if i else None, lines[i]
        if a is not None and a.page == b.page and _same_size(a, b) and not _gap(a, b, m):
            kinds[i] = BREAK


def _leads(lines: list[Line], kinds: list[str], m: _Metrics) -> dict[int, str]:
    """Tabs to write at paragraph starts that are indented without any glyph.

    Word processors export a tab as a jump, and a typed tab looks like a first-line
    indent. The smallest indent is formatting -- unless some paragraphs of several lines
    start at the margin: then the indents were typed (one tab per tab stop passed, every
    half inch). Beyond the formatting indent the extra is typed, and so is an indent
    after a line break.
    """
    flush, indents = _flush_starts(lines, kinds, m)
    base = 0.0 if flush or not indents else min(indents.values())
    out = {}
    for i, amount in indents.items():
        if amount - base > max(0.6 * lines[i].size, 5.0):
            out[i] = _tabs(base, amount)
    # after a line break only typed tabs indent (formatting indents the first line)
    for i, kind in enumerate(kinds):
        ln = lines[i]
        if kind == BREAK and ln.first_vis == 0 and _indented(ln, m):
            out[i] = _tabs(0.0, ln.x0_vis - m.left)
    return out


def _on_tab_stop(x: float) -> bool:
    """Is ``x`` (pt from the margin) on a default tab stop (every 0.5 in or 1.25 cm)?"""
    return x > 5.0 and any(abs(x - step * round(x / step)) <= 0.25 for step in (TAB_STOP, 35.43))


def _tabs(start: float, end: float) -> str:
    """The tabs that jump from ``start`` to ``end`` (pt from the margin): one per stop passed."""
    stops = math.floor(end / TAB_STOP + 0.1) - math.floor(start / TAB_STOP + 0.1)
    return "\t" * max(1, stops)


def _paragraphs(pages: list[_Page]) -> list[str]:
    lines = [ln for page in pages for ln in page.lines]
    if not lines:
        return []
    m = _metrics(lines, pages[0].width)
    kinds = [PARA] * len(lines)
    for i in range(1, len(lines)):
        if lines[i].page == lines[i - 1].page:
            kinds[i] = _same_page_break(lines[i - 1], lines[i], m)
    for i in range(1, len(lines)):
        if lines[i].page != lines[i - 1].page:
            kinds[i] = _page_break(lines[i - 1], lines[i], m, kinds, i, lines)
    _soft_breaks(lines, kinds, m)
    leads = _leads(lines, kinds, m)
    bodies: list[list[str]] = []
    lengths: list[int] = []
    for i, line in enumerate(lines):
        kind = kinds[i]
        if kind == PARA:
            bodies.append([])
            lengths.append(0)
        else:
            prev = lines[i - 1]
            sep = "\n" if kind == BREAK else _join(prev, line, m)
            if sep == " ":
                last = prev.chars[-1]
                width = m.space * prev.size / m.size
                prev.virtual.append(
                    Char(
                        " ", last.x1, prev.top, last.x1 + width, prev.bottom, prev.size, lengths[-1]
                    )
                )
            if sep:
                bodies[-1].append(sep)
                lengths[-1] += len(sep)
        line.para = len(bodies) - 1
        text = _line_text(line, m, lengths[-1], leads.get(i, ""))
        bodies[-1].append(text)
        lengths[-1] += len(text)
    return ["".join(parts) for parts in bodies]


# -------------------------------------------------------------------------- annotations


def _quads(annot: pymupdf.Annot) -> list[pymupdf.Rect]:
    verts = annot.vertices or []
    rects = []
    for i in range(0, len(verts) - 3, 4):
        try:
            rects.append(pymupdf.Quad(verts[i : i + 4]).rect)
        except Exception:
            continue
    if not rects:
        rects.append(annot.rect)
    return rects


def _hits(lines: list[Line], rect: pymupdf.Rect) -> list[tuple[int, int]]:
    """(paragraph, offset) of the characters whose centre lies in ``rect``."""
    out = []
    for line in lines:
        if line.para < 0 or line.bottom < rect.y0 or line.top > rect.y1:
            continue
        for ch in line.chars + line.virtual:
            cx = (ch.x0 + ch.x1) / 2
            cy = (ch.y0 + ch.y1) / 2
            if rect.x0 - 0.01 <= cx < rect.x1 - 0.01 and rect.y0 <= cy <= rect.y1:
                out.append((line.para, ch.offset))
    return out


def _render_annot_band(annot: pymupdf.Annot, band: pymupdf.Rect):
    """Pixels of ``band`` with only this annotation drawn on white paper (RGB rows)."""
    mu = pymupdf.mupdf
    irect = mu.FzIrect(
        math.floor(band.x0), math.floor(band.y0), math.ceil(band.x1), math.ceil(band.y1)
    )
    pix = mu.fz_new_pixmap_with_bbox(mu.fz_device_rgb(), irect, mu.FzSeparations(), 0)
    mu.fz_clear_pixmap_with_value(pix, 255)
    dev = mu.fz_new_draw_device(mu.FzMatrix(), pix)
    try:
        mu.pdf_run_annot(annot.this, dev, mu.FzMatrix(), mu.FzCookie())
    finally:
        mu.fz_close_device(dev)
    out = pymupdf.Pixmap(pix)
    if out.width == 0 or out.height == 0:
        return None
    return np.frombuffer(out.samples, dtype=np.uint8).reshape(-1, out.n)[:, :3]


def _render_colour(
    page: pymupdf.Page, annot: pymupdf.Annot, quads: list[pymupdf.Rect]
) -> tuple[float, float, float] | None:
    """The highlight's colour as a reader draws it, from rendering its appearance.

    The annotation alone is drawn over white paper in the middle band of its quads
    (so neither the text nor other, overlapping highlights tint it); the most frequent
    non-white pixel is its colour, with the annotation's opacity undone.
    """
    counts: Counter = Counter()
    for q in quads[:8]:
        h = q.y1 - q.y0
        band = pymupdf.Rect(q.x0 + 1, q.y0 + 0.3 * h, q.x1 - 1, q.y1 - 0.3 * h)
        if band.is_empty or band.width < 1 or band.height < 1:
            band = pymupdf.Rect(q.x0, q.y0, max(q.x1, q.x0 + 1), max(q.y1, q.y0 + 1))
        arr = _render_annot_band(annot, band)
        if arr is None:
            continue
        keep = arr[arr.min(axis=1) < 250]
        if len(keep) == 0:
            continue
        packed = (keep[:, 0].astype(np.int64) << 16) | (keep[:, 1].astype(np.int64) << 8)
        packed |= keep[:, 2]
        values, freq = np.unique(packed, return_counts=True)
        for v, f in zip(values.tolist(), freq.tolist(), strict=True):
            counts[v] += f
    if not counts:
        return None
    v = counts.most_common(1)[0][0]
    rgb = ((v >> 16) & 255, (v >> 8) & 255, v & 255)
    opacity = annot.opacity
    if opacity is not None and 0 < opacity < 0.999:
        rgb = tuple(max(0.0, min(255.0, 255 - (255 - c) / opacity)) for c in rgb)
    return rgb


def _annot_colour(annot: pymupdf.Annot) -> tuple[float, float, float] | None:
    colours = annot.colors or {}
    for key in ("stroke", "fill"):
        value = colours.get(key)
        if value and len(value) == 3:
            return tuple(255 * c for c in value)
        if value and len(value) == 1:
            return (255 * value[0],) * 3
        if value and len(value) == 4:
            c, mm, y, k = value
            return (255 * (1 - c) * (1 - k), 255 * (1 - mm) * (1 - k), 255 * (1 - y) * (1 - k))
    return None


def _nearest_point(lines: list[Line], x: float, y: float) -> tuple[int, int, float] | None:
    """(paragraph, offset, distance) of the text boundary nearest to (x, y)."""
    best = None
    for line in lines:
        if line.para < 0:
            continue
        dy = max(0.0, line.top - y, y - line.bottom)
        left = line.chars[0].x0
        right = line.chars[-1].x1
        dx = max(0.0, left - x, x - right)
        d = math.hypot(dx, dy)
        if best is None or d < best[0] - 1e-6:
            best = (d, line)
    if best is None:
        return None
    d, line = best
    xs = [ch.x0 for ch in line.chars] + [line.chars[-1].x1]
    offsets = [ch.offset for ch in line.chars] + [line.chars[-1].offset + len(line.chars[-1].c)]
    i = min(range(len(xs)), key=lambda k: abs(xs[k] - x))
    return line.para, offsets[i], d


@dataclass
class _Raw:
    type: str
    page: int
    para: int
    start: int
    end: int
    comment: str
    color: str | None
    order: int
    xref: int


def _annotations(
    doc: pymupdf.Document, pages: list[_Page], legend: Legend
) -> tuple[list[_Raw], list[str]]:
    raws: list[_Raw] = []
    overall: list[tuple[int, str]] = []
    replies: list[tuple[int, str]] = []
    by_xref: dict[int, list[_Raw]] = {}
    order = 0
    for page_info in pages:
        page = doc[page_info.number]
        if not page.first_annot:
            continue
        for annot in page.annots():
            order += 1
            atype = annot.type[0]
            info = annot.info or {}
            comment = info.get("content") or ""
            irt = annot.irt_xref if hasattr(annot, "irt_xref") else 0
            if irt and atype in NOTE_TYPES:
                replies.append((irt, comment))
                continue
            if atype in HIGHLIGHT_TYPES:
                kind = HIGHLIGHT_TYPES[atype]
                quads = _quads(annot)
                hits: list[tuple[int, int]] = []
                for q in quads:
                    hits.extend(_hits(page_info.lines, q))
                if not hits:
                    continue
                colour = None
                if kind == "highlight":
                    rgb = None
                    if atype == pymupdf.PDF_ANNOT_HIGHLIGHT:
                        try:
                            rgb = _render_colour(page, annot, quads)
                        except Exception:  # no appearance to draw: trust /C below
                            rgb = None
                    if rgb is None:
                        rgb = _annot_colour(annot)
                    colour = legend.name_of(rgb) if rgb is not None else GENERIC
                per_para: dict[int, list[int]] = defaultdict(list)
                for para, off in hits:
                    per_para[para].append(off)
                for para in sorted(per_para):
                    offs = per_para[para]
                    raw = _Raw(
                        kind,
                        page_info.number,
                        para,
                        min(offs),
                        max(offs) + 1,
                        comment,
                        colour,
                        order,
                        annot.xref,
                    )
                    raws.append(raw)
                    by_xref.setdefault(annot.xref, []).append(raw)
            elif atype in NOTE_TYPES:
                subject = info.get("subject") or ""
                r = annot.rect
                hit = _nearest_point(page_info.lines, r.x0, r.y0)
                if OVERALL_SUBJECT.search(subject) or hit is None or hit[2] > NOTE_RADIUS:
                    overall.append((annot.xref, comment))
                    continue
                raw = _Raw(
                    "note",
                    page_info.number,
                    hit[0],
                    hit[1],
                    hit[1],
                    comment,
                    None,
                    order,
                    annot.xref,
                )
                raws.append(raw)
                by_xref.setdefault(annot.xref, []).append(raw)
    overall_comments = dict(overall)
    for parent, text in replies:
        if parent in by_xref:
            for raw in by_xref[parent]:
                raw.comment = f"{raw.comment}\n{text}" if raw.comment else text
        elif parent in overall_comments:
            prev = overall_comments[parent]
            overall_comments[parent] = f"{prev}\n{text}" if prev else text
    return _merge_page_splits(raws), [overall_comments[x] for x, _ in overall]


def _merge_page_splits(raws: list[_Raw]) -> list[_Raw]:
    """Join the halves of a highlight/strikeout that a page break cut in two."""
    marked = sorted((r for r in raws if r.type != "note"), key=lambda r: (r.para, r.start, r.page))
    dead: set[int] = set()
    for i, a in enumerate(marked):
        if id(a) in dead:
            continue
        for b in marked[i + 1 :]:
            if b.para != a.para or b.start > a.end + 1:
                break
            if (
                id(b) not in dead
                and b.page == a.page + 1
                and b.type == a.type
                and b.color == a.color
                and b.start >= a.end
                and (a.comment == b.comment or not a.comment or not b.comment)
            ):
                a.end = b.end
                a.comment = a.comment or b.comment
                dead.add(id(b))
                break
    return [r for r in raws if id(r) not in dead]


# ---------------------------------------------------------------------------- entry point


def parse_pdf(path: str | Path, legend: Legend | str | Path | None = None) -> dict:
    """Parse an annotated PDF draft into the corpus draft structure.

    Raises :class:`~sefora_dataset.errors.ParseError` when the file is empty, not a PDF,
    encrypted, truncated, has no pages, or has no text layer (a scan).
    """
    path = Path(path)
    legend = load_legend(legend)
    doc = _open(path)
    try:
        pages = []
        n_chars = 0
        for number in range(doc.page_count):
            page = doc[number]
            lines = _page_lines(page, number)
            n_chars += sum(len(ln.chars) for ln in lines)
            pages.append(_Page(number, page.rect.width, page.rect.height, lines))
        if n_chars == 0:
            raise ParseError(path, "PDF has no text layer (a scanned image?); OCR it first")
        _remove_furniture(pages)
        bodies = _paragraphs(pages)
        raws, overall = _annotations(doc, pages, legend)
    finally:
        doc.close()
    spans = [Span(r.type, r.para, r.start, r.end, r.comment, r.color, r.order) for r in raws]
    return build_parsed_draft(bodies, spans, overall)
