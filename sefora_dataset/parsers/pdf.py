"""Annotated PDF drafts -> the corpus draft structure (PyMuPDF, deterministic).

What the parser does, in order:

1. **Characters.** Every character of the page text (``rawdict`` with whitespace and
   ligatures preserved and no synthesized spaces) is kept, with its box and baseline.
   Pieces of text on one baseline are merged into visual lines, read top to bottom and
   left to right (a single text column, as in student essays).
2. **Page furniture.** A line near the top or bottom edge whose text (digits ignored)
   recurs at the same height on at least two pages and on at least 40% of them -- a
   running header ("Okafor 3"), a footer, a page number -- is removed; so is a lone
   page-number line ("3", "Page 3 of 7", "Okafor 3") at the very edge of the page, and
   any line that is only a submission stamp ("Submitted: Oct 3, 2022 9:14 PM", see
   :func:`~sefora_dataset.parsers.anchor.is_submission_line`).
3. **Paragraphs** are rebuilt from layout, not from PDF blocks: a new paragraph starts
   after a vertical gap wider than 1.3 line pitches (a bigger font gets a bigger pitch),
   at a change of font size, or -- in documents that mark paragraphs by indents rather
   than gaps -- at a first-line indent (first visible character right of the left
   margin by more than ~0.6 em); in gap-separated documents an indented line without a
   gap is a line break with a tab. A centred line continues a centred line above it when
   its first word would not have fitted there (a wrapped title). At a page break a
   paragraph goes on unless the next page starts indented, or (in documents that
   separate paragraphs by gaps) the last line of the page ended short. Documents with
   neither gaps nor indents break paragraphs at short lines.
4. **Line joins** inside a paragraph: a line that ended short (the next line's first word
   would have fitted) is a forced line break (``"\\n"``); otherwise lines are joined
   directly when the line ends (or the next starts) with a whitespace character, and by
   one space otherwise -- except in files whose wrapped lines carry their trailing
   spaces, where a line ending without one was broken inside a word (a hyphen, a URL)
   and is joined directly. A whitespace glyph followed by a jump far wider than itself
   (to a tab stop) is a tab (``"\\t"``); a wide gap between two visible characters
   without any whitespace glyph is a space.
5. **Annotations.** Highlight, Underline, Squiggly and StrikeOut annotations are
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

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pymupdf

from ..errors import ParseError
from .anchor import Span, build_draft, is_submission_line
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
BREAK_WS = frozenset(" \t\u200b\u2002\u2003\u2009\u200a\u3000")


@dataclass
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
    para: int = -1
    text: str = ""
    top: float = 0.0
    bottom: float = 0.0
    first_vis: int = -1  # index of the first non-whitespace character, -1 if none
    last_vis: int = -1

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
        return self.chars[-1].c in BREAK_WS or self.chars[-1].c.isspace()

    @property
    def starts_with_space(self) -> bool:
        return self.chars[0].c in BREAK_WS or self.chars[0].c.isspace()

    def first_word_width(self) -> float:
        if self.first_vis < 0:
            return 0.0
        start = self.chars[self.first_vis]
        end = start
        for ch in self.chars[self.first_vis :]:
            if ch.c.isspace():
                break
            end = ch
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
    """Visual lines of one page: MuPDF lines merged by baseline, in reading order."""
    raw = page.get_text("rawdict", flags=TEXT_FLAGS)
    pieces: list[tuple[float, float, list[Char], float]] = []
    for block in raw["blocks"]:
        if block.get("type", 0) != 0:
            continue
        for line in block["lines"]:
            dx, dy = line["dir"]
            if abs(dy) > 0.1 or dx <= 0:  # rotated or vertical text (watermarks, margins)
                continue
            chars: list[Char] = []
            baseline = None
            sizes = []
            for span in line["spans"]:
                size = float(span["size"]) or 1.0
                for ch in span["chars"]:
                    x0, y0, x1, y1 = ch["bbox"]
                    chars.append(Char(ch["c"], x0, y0, x1, y1, size))
                    if baseline is None:
                        baseline = ch["origin"][1]
                sizes.append(size)
            if chars:
                pieces.append((baseline, chars[0].x0, chars, max(sizes)))
    pieces.sort(key=lambda p: (p[0], p[1]))
    groups: list[list[tuple[float, float, list[Char], float]]] = []
    for piece in pieces:
        if groups:
            last = groups[-1]
            ref_base = last[0][0]
            tol = 0.5 * min(piece[3], min(p[3] for p in last))
            if abs(piece[0] - ref_base) <= tol:
                last.append(piece)
                continue
        groups.append([piece])
    lines = []
    for group in groups:
        group.sort(key=lambda p: p[1])
        chars = [ch for p in group for ch in p[2]]
        sizes = Counter(round(ch.size, 1) for ch in chars if not ch.c.isspace())
        size = sizes.most_common(1)[0][0] if sizes else group[0][3]
        line = Line(number, group[0][0], chars, size)
        line.finish()
        lines.append(line)
    return lines


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


def _mode(values: list[float], default: float) -> float:
    if not values:
        return default
    return Counter(values).most_common(1)[0][0]


def _percentile(values: list[float], q: float, default: float) -> float:
    if not values:
        return default
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


@dataclass
class _Metrics:
    left: float
    right: float
    pitch: float
    space: float
    size: float
    trailing_ws: bool
    gap_style: bool
    flush: bool


def _metrics(lines: list[Line]) -> _Metrics:
    vis = [ln for ln in lines if ln.first_vis >= 0]
    left = _mode([round(ln.x0_vis) for ln in vis], vis[0].x0_vis if vis else 0.0)
    right = _percentile([ln.x1_vis for ln in vis], 0.95, left + 400)
    deltas = []
    for a, b in zip(lines, lines[1:], strict=False):
        if a.page == b.page and b.baseline > a.baseline:
            deltas.append(round((b.baseline - a.baseline) * 2) / 2)
    pitch = _mode(deltas, 14.0)
    spaces = [ch.x1 - ch.x0 for ln in lines for ch in ln.chars if ch.c == " " and ch.x1 > ch.x0]
    space = (
        sorted(spaces)[len(spaces) // 2]
        if spaces
        else 0.25 * _mode([ln.size for ln in lines], 11.0)
    )
    # Do wrapped lines keep their trailing space? (look at lines followed at normal pitch)
    followed = [
        a
        for a, b in zip(lines, lines[1:], strict=False)
        if a.page == b.page and abs((b.baseline - a.baseline) - pitch) < 0.2 * pitch
    ]
    trailing = sum(1 for a in followed if a.ends_with_space)
    trailing_ws = bool(followed) and trailing > 0.5 * len(followed)
    size = _mode([ln.size for ln in vis], 11.0)
    gaps = indents = 0
    for a, b in zip(lines, lines[1:], strict=False):
        if a.page != b.page or abs(a.size - b.size) > 0.15 * max(a.size, b.size):
            continue  # (a title in a bigger font says nothing about the body's style)
        if b.baseline - a.baseline > 1.3 * pitch * max(1.0, b.size / size):
            gaps += 1
        elif b.first_vis >= 0 and b.x0_vis > left + max(0.6 * b.size, 5.0):
            indents += 1
    return _Metrics(
        left, right, pitch, space, size, trailing_ws, gaps > indents, gaps + indents == 0
    )


def _is_short(a: Line, b: Line, m: _Metrics) -> bool:
    """Would the first word of ``b`` have fitted at the end of ``a``?"""
    if b.first_vis < 0 or a.first_vis < 0:
        return False
    room = m.right - a.x1_vis - m.space
    return b.first_word_width() < room - 1.0


def _indented(b: Line, m: _Metrics) -> bool:
    return b.first_vis >= 0 and b.x0_vis > m.left + max(0.6 * b.size, 5.0)


def _gap_limit(a: Line, b: Line, m: _Metrics) -> float:
    """Baseline distance beyond which two lines belong to different paragraphs.

    The line pitch is measured on the body text; a line in a bigger font (a title) gets a
    proportionally bigger pitch. A change of font size between two lines is a paragraph
    break by itself (the limit is then 0).
    """
    if abs(a.size - b.size) > 0.15 * max(a.size, b.size):
        return 0.0
    return 1.3 * m.pitch * max(1.0, b.size / m.size)


def _centred(line: Line, m: _Metrics, min_indent: float | None = None) -> bool:
    if line.first_vis < 0:
        return False
    if min_indent is None:
        if not _indented(line, m):
            return False
    elif line.x0_vis <= m.left + min_indent:
        return False
    return abs((line.x0_vis + line.x1_vis) / 2 - (m.left + m.right) / 2) <= 3.0


def _line_text(line: Line, m: _Metrics, start_offset: int) -> str:
    """The line's characters as body text; sets each character's offset."""
    out = []
    chars = line.chars
    offset = start_offset
    for i, ch in enumerate(chars):
        c = ch.c
        if i > 0:
            prev = chars[i - 1]
            if (
                not prev.c.isspace()
                and not c.isspace()
                and ch.x0 - prev.x1 > 0.3 * ch.size
                and prev.c not in "\u200b"
            ):
                out.append(" ")
                offset += 1
        if c == " " and i + 1 < len(chars):
            width = max(ch.x1 - ch.x0, 0.1)
            advance = chars[i + 1].x0 - ch.x0
            if advance > 3.2 * width and advance > 8.0:
                c = "\t"
        ch.offset = offset
        out.append(c)
        offset += len(c)
    return "".join(out)


def _paragraphs(pages: list[_Page]) -> list[str]:
    lines = [ln for page in pages for ln in page.lines]
    if not lines:
        return []
    m = _metrics(lines)
    bodies: list[list[str]] = []
    lengths: list[int] = []
    prev: Line | None = None
    for line in lines:
        new_para = prev is None
        sep = ""
        if prev is not None:
            wrapped_centre = False
            if line.page == prev.page:
                gap = line.baseline - prev.baseline
                if gap > _gap_limit(prev, line, m) or gap < 0:
                    new_para = True
                elif _centred(prev, m, 0.5) and _centred(line, m):
                    # a centred block (a title) wraps when the next word did not fit
                    space = m.space * line.size / m.size
                    room = (m.right - m.left) - (prev.x1_vis - prev.x0_vis) - space
                    wrapped_centre = line.first_word_width() >= room - 1.0
                    new_para = not wrapped_centre
                elif _indented(line, m) and not m.gap_style or _is_short(prev, line, m) and m.flush:
                    new_para = True
            else:
                if _indented(line, m) or (_is_short(prev, line, m) and (m.gap_style or m.flush)):
                    new_para = True
            if not new_para:
                if _is_short(prev, line, m) and not wrapped_centre:
                    sep = "\n"
                elif prev.ends_with_space or line.starts_with_space or m.trailing_ws:
                    sep = ""
                else:
                    sep = " "
        if new_para:
            bodies.append([])
            lengths.append(0)
        elif sep:
            bodies[-1].append(sep)
            lengths[-1] += len(sep)
        line.para = len(bodies) - 1
        text = _line_text(line, m, lengths[-1])
        bodies[-1].append(text)
        lengths[-1] += len(text)
        prev = line
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
        for ch in line.chars:
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
    # Drop paragraphs that hold only whitespace (and renumber the annotations' anchors).
    keep = [i for i, b in enumerate(bodies) if b.strip()]
    renumber = {old: new for new, old in enumerate(keep)}
    spans = [
        Span(r.type, renumber[r.para], r.start, r.end, r.comment, r.color, r.order)
        for r in raws
        if r.para in renumber
    ]
    return build_draft([bodies[i] for i in keep], spans, overall)
