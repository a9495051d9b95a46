"""Annotated PDFs laid out by a real word processor: DOCX -> LibreOffice PDF export -> PyMuPDF.

The second round-trip generator, independent of the parser's layout assumptions (unlike
``make_annotated.write_pdf``, which lays text out itself):

1. The draft's bodies are written verbatim as a DOCX with python-docx, in a style drawn
   from the seed: font (Liberation Serif/Sans, Carlito, Caladea, DejaVu Serif/Sans), size,
   line spacing, paragraphs separated by spacing, first-line indents, both or empty
   paragraphs, left-aligned or justified, margins and page size, a centred title, a
   running header with the student's surname and a PAGE field (sometimes a "Page N of M"
   footer), a submission-date line, widow/orphan control, automatic hyphenation on or off
   and ligatures on or off (LibreOffice's ``Font:-liga`` feature syntax).
2. LibreOffice (``soffice --headless --convert-to pdf``) lays the DOCX out and exports it.
3. The exported glyphs are read back (PyMuPDF ``rawdict``), put in reading order by
   position (lines by baseline, glyphs by x) and aligned with the bodies' characters;
   then the instructor's annotations are added as a PDF reader would from those glyph
   boxes: Highlight and StrikeOut annotations with one quad per line (one annotation per
   page when a span crosses a page break; a quad reaches over a line-end space that has
   no glyph, as a selection does), sticky notes at the insertion point, popups on some,
   an overall comment as a note whose subject says so.

``write_pdfs(jobs, workdir)`` does this for many drafts with one LibreOffice run and
returns, per draft, the *expected* parse and the style. The expected bodies are the
draft's bodies, except that in hyphenated documents the hyphens LibreOffice drew at line
ends are part of the text (a PDF shows them as ordinary hyphens; nothing tells a reader
they were not typed). Annotations that cannot be placed are handled as in
``make_annotated``.

Needs LibreOffice: ``apt-get install libreoffice-writer-nogui hyphen-en-us fonts-liberation
fonts-dejavu fonts-crosextra-carlito fonts-crosextra-caladea fonts-noto-cjk
fonts-noto-core``. ``python -m tests.make_exported_fixtures`` regenerates the committed fixtures.
"""

from __future__ import annotations

import heapq
import random
import shutil
import subprocess
import tempfile
import unicodedata
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pymupdf

from sefora_dataset.parsers.anchor import Span, build_draft
from tests.make_annotated import (
    INSTRUCTORS,
    PDF_COLOURS,
    SURNAMES,
    PdfStyle,
    overall_comments,
    placed_spans,
)

FONTS = ["Liberation Serif", "Liberation Sans", "Carlito", "Caladea", "DejaVu Serif", "DejaVu Sans"]
READ_FLAGS = (
    pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_PRESERVE_LIGATURES | pymupdf.TEXT_INHIBIT_SPACES
)
HYPHENS = "-\u2010\u00ad"


def soffice() -> str | None:
    """Path of the LibreOffice executable, None when it is not installed."""
    return shutil.which("soffice") or shutil.which("libreoffice")


# ----------------------------------------------------------------------------- style


@dataclass
class LoStyle:
    font: str
    size: float
    spacing: float  # line spacing multiple
    separation: str  # "space" | "indent" | "both" | "blank"
    space_after: float
    indent: float  # first-line indent, pt
    justify: bool
    page: tuple[float, float]
    margins: tuple[float, float, float, float]  # left, right, top, bottom
    title: bool
    title_size: float
    footer: bool
    stamp: bool
    stamp_text: str
    surname: str
    hyphenate: bool
    ligatures: bool
    widow_control: bool
    tab_stop: int  # default tab stop, twips

    @classmethod
    def random(cls, rng: random.Random) -> LoStyle:
        size = rng.choice([10.0, 10.5, 11.0, 12.0, 12.0, 13.0])
        separation = rng.choice(["space", "space", "indent", "both", "blank"])
        side = rng.choice([72.0, 72.0, 90.0, 56.7, 54.0])
        vertical = rng.choice([side, 72.0, 56.7])
        return cls(
            font=rng.choice(FONTS),
            size=size,
            spacing=rng.choice([1.0, 1.15, 1.5, 2.0, 2.0]),
            separation=separation,
            space_after=rng.choice([6.0, 8.0, 10.0, 12.0])
            if separation in ("space", "both")
            else 0.0,
            indent=rng.choice([36.0, 36.0, 28.35, 18.0])
            if separation in ("indent", "both")
            else 0.0,
            justify=rng.random() < 0.5,
            page=rng.choice([(612.0, 792.0), (595.3, 841.9)]),
            margins=(side, rng.choice([side, side, 72.0]), vertical, vertical),
            title=rng.random() < 0.7,
            title_size=round(size * rng.choice([1.0, 1.2, 1.4, 1.7]), 1),
            footer=rng.random() < 0.3,
            stamp=rng.random() < 0.6,
            stamp_text=PdfStyle.random(rng).stamp_text,
            surname=rng.choice(SURNAMES),
            hyphenate=rng.random() < 0.35,
            ligatures=rng.random() < 0.6,
            widow_control=rng.random() < 0.6,
            tab_stop=rng.choice([720, 720, 709]),
        )


# ------------------------------------------------------------------------------ DOCX


def _field(paragraph, instr: str, shown: str) -> None:
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    fld = OxmlElement("w:fldSimple")
    fld.set(qn("w:instr"), instr)
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = shown
    run.append(text)
    fld.append(run)
    paragraph._p.append(fld)


def _is_title(bodies: list[str], style: LoStyle) -> bool:
    first = bodies[0] if bodies else ""
    return (
        style.title
        and len(bodies) > 1
        and 0 < len(first) < 90
        and "\n" not in first
        and "\t" not in first
        and first == first.strip()
    )


def write_docx(bodies: list[str], path: Path, style: LoStyle) -> None:
    """The bodies as a DOCX laid out in ``style`` (no annotations: they go on the PDF)."""
    import docx
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Pt

    d = docx.Document()
    font = style.font if style.ligatures else f"{style.font}:-liga"
    normal = d.styles["Normal"]
    normal.font.name = font
    normal.font.size = Pt(style.size)
    pf = normal.paragraph_format
    pf.line_spacing = style.spacing
    pf.space_before = Pt(0)
    pf.space_after = Pt(style.space_after)
    pf.first_line_indent = Pt(style.indent) if style.indent else None
    pf.alignment = WD_ALIGN_PARAGRAPH.JUSTIFY if style.justify else WD_ALIGN_PARAGRAPH.LEFT
    pf.widow_control = style.widow_control
    settings = d.settings.element
    tab = settings.find(qn("w:defaultTabStop"))
    if tab is not None:
        tab.set(qn("w:val"), str(style.tab_stop))
    if style.hyphenate:
        settings.append(OxmlElement("w:autoHyphenation"))
    section = d.sections[0]
    section.page_width, section.page_height = Pt(style.page[0]), Pt(style.page[1])
    left, right, top, bottom = style.margins
    section.left_margin, section.right_margin = Pt(left), Pt(right)
    section.top_margin, section.bottom_margin = Pt(top), Pt(bottom)
    section.header_distance = section.footer_distance = Pt(min(top, bottom) / 2)
    header = section.header.paragraphs[0]
    header.alignment = WD_ALIGN_PARAGRAPH.RIGHT
    header.add_run(f"{style.surname} ")
    _field(header, "PAGE", "1")
    if style.footer:
        footer = section.footer.paragraphs[0]
        footer.alignment = WD_ALIGN_PARAGRAPH.CENTER
        footer.add_run("Page ")
        _field(footer, "PAGE", "1")
        footer.add_run(" of ")
        _field(footer, "NUMPAGES", "1")
    if style.stamp:
        stamp = d.add_paragraph()
        stamp.paragraph_format.first_line_indent = Pt(0)
        stamp.paragraph_format.alignment = WD_ALIGN_PARAGRAPH.LEFT
        stamp.add_run(style.stamp_text).font.size = Pt(max(8.0, style.size - 2))
    title = _is_title(bodies, style)
    for i, body in enumerate(bodies):
        if i > 0 and style.separation == "blank":
            d.add_paragraph()
        para = d.add_paragraph()
        if i == 0 and title:
            para.alignment = WD_ALIGN_PARAGRAPH.CENTER
            para.paragraph_format.first_line_indent = Pt(0)
            para.paragraph_format.space_after = Pt(max(style.space_after, style.size))
            run = para.add_run(body)
            run.bold = True
            run.font.size = Pt(style.title_size)
            continue
        para.add_run(body)  # python-docx writes "\t" as w:tab and "\n" as w:br
    d.save(str(path))


def export_pdfs(docx_paths: list[Path], outdir: Path, timeout: float = 900.0) -> None:
    """Convert DOCX files to PDF with one headless LibreOffice run (a private profile)."""
    exe = soffice()
    if exe is None:
        raise RuntimeError("LibreOffice (soffice) is not installed")
    with tempfile.TemporaryDirectory(prefix="lo-profile-") as profile:
        cmd = [
            exe,
            f"-env:UserInstallation=file://{profile}",
            "--headless",
            "--norestore",
            "--convert-to",
            "pdf",
            "--outdir",
            str(outdir),
            *map(str, docx_paths),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    missing = [p for p in docx_paths if not (outdir / f"{p.stem}.pdf").is_file()]
    if missing:
        raise RuntimeError(
            f"LibreOffice did not export {len(missing)} file(s), e.g. {missing[0]}: "
            f"{done.stderr.strip()[-500:]}"
        )


# ------------------------------------------------------------------- glyphs and alignment


@dataclass
class Glyph:
    c: str
    page: int
    line: int  # index into the document's lines
    x0: float
    y0: float
    x1: float
    y1: float
    font: str = ""


@dataclass
class GlyphLine:
    page: int
    baseline: float
    glyphs: list[Glyph] = field(default_factory=list)


def read_glyphs(doc: pymupdf.Document, style: LoStyle) -> list[GlyphLine]:
    """The body's glyphs in reading order (header and footer areas left out).

    Lines by baseline; within a line, each run of one font keeps its drawing order (a
    ligature's zero-width followers, kerned pairs) and the runs are merged by position
    (glyphs of a fallback font are drawn after the rest of the line).
    """
    lines: list[GlyphLine] = []
    _, _, top, bottom = style.margins
    for page in doc:
        runs: list[tuple[float, list[dict]]] = []
        raw = page.get_text("rawdict", flags=READ_FLAGS)
        for block in raw["blocks"]:
            for line in block.get("lines", []):
                for span in line["spans"]:
                    base = span["origin"][1]
                    if (
                        span["chars"]
                        and top - 1 <= base <= page.rect.height - bottom + span["size"]
                    ):
                        runs.append((base, [dict(ch, font=span["font"]) for ch in span["chars"]]))
        runs.sort(key=lambda r: r[0])
        groups: list[list[tuple[float, list[dict]]]] = []
        for run in runs:
            if groups and abs(run[0] - groups[-1][0][0]) <= 1.0:
                groups[-1].append(run)
            else:
                groups.append([run])
        for group in groups:
            current = GlyphLine(page.number, group[0][0])
            lines.append(current)
            for ch in heapq.merge(*(chars for _, chars in group), key=lambda c: c["bbox"][0]):
                x0, y0, x1, y1 = ch["bbox"]
                current.glyphs.append(
                    Glyph(ch["c"], page.number, len(lines) - 1, x0, y0, x1, y1, ch["font"])
                )
    return lines


def _same(a: str, b: str) -> bool:
    return a == b or unicodedata.normalize("NFKC", a) == unicodedata.normalize("NFKC", b)


def align(text: str, glyphs: list[Glyph]) -> tuple[list[Glyph | None], list[Glyph]]:
    """Glyph of each character of ``text`` (None: not drawn), and the glyphs left over.

    Visible characters are matched greedily, with a short look-ahead on both sides where
    the streams differ (hyphens the layout added, characters no font could draw, shaped
    clusters); whitespace characters then take the whitespace glyphs between the glyphs
    of their visible neighbours, in order.
    """
    out: list[Glyph | None] = [None] * len(text)
    vis_t = [i for i, c in enumerate(text) if not c.isspace()]
    vis_g = [g for g in glyphs if not g.c.isspace()]
    extra: list[Glyph] = []
    i = j = 0
    window = 40
    while i < len(vis_t) and j < len(vis_g):
        if _same(text[vis_t[i]], vis_g[j].c):
            out[vis_t[i]] = vis_g[j]
            i += 1
            j += 1
            continue
        best = None
        for cost in range(1, window):
            for skip_t in range(cost + 1):
                skip_g = cost - skip_t
                k = 0
                while (
                    k < 3
                    and i + skip_t + k < len(vis_t)
                    and j + skip_g + k < len(vis_g)
                    and _same(text[vis_t[i + skip_t + k]], vis_g[j + skip_g + k].c)
                ):
                    k += 1
                ends = i + skip_t + k == len(vis_t) or j + skip_g + k == len(vis_g)
                if k == 3 or (k > 0 and ends):
                    best = (skip_t, skip_g)
                    break
            if best is not None:
                break
        if best is None:
            break
        skip_t, skip_g = best
        extra.extend(vis_g[j : j + skip_g])
        i += skip_t
        j += skip_g
    extra.extend(vis_g[j:])
    index = {id(g): n for n, g in enumerate(glyphs)}
    prev = -1
    for k in [*vis_t, len(text)]:
        if k - prev > 1:
            left = out[prev] if prev >= 0 else None
            right = out[k] if k < len(text) else None
            if left is not None and right is not None:
                a, b = index[id(left)], index[id(right)]
                between = [g for g in glyphs[a + 1 : b] if g.c.isspace()]
                for off, g in zip(range(prev + 1, k), between, strict=False):
                    out[off] = g
        prev = k
    return out, extra


# ----------------------------------------------------------------------- annotations


@dataclass
class Placed:
    """Where each body character of a draft ended up in the PDF."""

    bodies: list[str]  # the draft's bodies
    expected: list[str]  # the bodies as the PDF shows them (with the layout's hyphens)
    glyphs: list[list[Glyph | None]]  # per body, per character
    lines: list[GlyphLine]
    hyphens: list[list[int]]  # per body: offsets before which the layout drew a hyphen


def place(bodies: list[str], lines: list[GlyphLine], style: LoStyle) -> Placed:
    """Align the document's glyphs with the bodies (and the stamp line before them)."""
    glyphs = [g for ln in lines for g in ln.glyphs]
    parts = ([style.stamp_text] if style.stamp else []) + bodies
    mapped, extra = align("\n".join(parts), glyphs)
    per_body: list[list[Glyph | None]] = []
    pos = len(style.stamp_text) + 1 if style.stamp else 0
    for body in bodies:
        per_body.append(mapped[pos : pos + len(body)])
        pos += len(body) + 1
    hyphens: list[list[int]] = [[] for _ in bodies]
    if style.hyphenate:
        owner = {
            id(g): (bi, off)
            for bi, chars in enumerate(per_body)
            for off, g in enumerate(chars)
            if g is not None
        }
        for g in extra:
            if g.c not in HYPHENS or g.line + 1 >= len(lines):
                continue
            vis = [h for h in lines[g.line].glyphs if not h.c.isspace()]
            nxt = [h for h in lines[g.line + 1].glyphs if not h.c.isspace()]
            if len(vis) < 2 or vis[-1] is not g or not nxt:
                continue
            before, after = owner.get(id(vis[-2])), owner.get(id(nxt[0]))
            if before and after and before[0] == after[0] and after[1] == before[1] + 1:
                hyphens[before[0]].append(after[1])
    expected = []
    for body, cuts in zip(bodies, hyphens, strict=True):
        pieces, last = [], 0
        for c in sorted(cuts):
            pieces += [body[last:c], "-"]
            last = c
        expected.append("".join(pieces) + body[last:])
    return Placed(bodies, expected, per_body, lines, [sorted(h) for h in hyphens])


def _shift(offset: int, cuts: list[int]) -> int:
    """An offset of the original body in the expected (hyphenated) body."""
    return offset + sum(1 for c in cuts if c <= offset)


def _quads(placed: Placed, para: int, start: int, end: int, space: float) -> dict[int, list]:
    """Quads per page for body characters [start, end) of paragraph ``para``: one per line.

    A whitespace character without a glyph at a line end (the layout stored no trailing
    space) widens its line's quad by a space, as a reader's selection does.
    """
    body, chars = placed.bodies[para], placed.glyphs[para]
    boxes: dict[int, list[float]] = {}
    for off in range(start, min(end, len(chars))):
        g = chars[off]
        if g is not None:
            box = boxes.setdefault(g.line, [g.x0, g.y0, g.x1, g.y1])
            box[0], box[1] = min(box[0], g.x0), min(box[1], g.y0)
            box[2], box[3] = max(box[2], g.x1), max(box[3], g.y1)
            continue
        if not body[off].isspace():
            continue
        before = next((chars[k] for k in range(off - 1, -1, -1) if chars[k] is not None), None)
        after = next((chars[k] for k in range(off + 1, len(chars)) if chars[k] is not None), None)
        if before is not None and (after is None or after.line != before.line):
            box = boxes.setdefault(before.line, [before.x1, before.y0, before.x1, before.y1])
            box[2] = max(box[2], before.x1 + space)
    out: dict[int, list] = {}
    for line_no, (x0, y0, x1, y1) in sorted(boxes.items()):
        if x1 - x0 >= 0.05:
            out.setdefault(placed.lines[line_no].page, []).append(pymupdf.Rect(x0, y0, x1, y1).quad)
    return out


def _note_point(placed: Placed, para: int, offset: int) -> tuple[int, float, float] | None:
    """Page and icon corner of a sticky note inserted before body character ``offset``."""
    chars = placed.glyphs[para]
    if 0 < offset < len(chars) and chars[offset] is None and chars[offset - 1] is not None:
        g = chars[offset - 1]  # before a space the layout did not draw: at the word's end
        return g.page, g.x1, (g.y0 + g.y1) / 2
    for g in chars[offset:]:
        if g is not None:
            return g.page, g.x0, (g.y0 + g.y1) / 2
    for g in reversed(chars[:offset]):
        if g is not None:
            return g.page, g.x1, (g.y0 + g.y1) / 2
    return None


def annotate(
    exported: Path, draft: dict, style: LoStyle, seed: int, out: Path
) -> tuple[dict, dict]:
    """Annotate the exported PDF as an instructor would, save it to ``out``.

    Returns the expected parse and a report (pages, hyphens the layout drew, annotations
    drawn, visible characters that no glyph shows).
    """
    rng = random.Random(seed * 7919 + 13)
    bodies = [p["body"] for p in draft["paragraphs"]]
    doc = pymupdf.open(exported)
    lines = read_glyphs(doc, style)
    placed = place(bodies, lines, style)
    spans, _ = placed_spans(draft)
    space = 0.25 * style.size
    author = rng.choice(INSTRUCTORS)
    drawn = 0
    expected_spans: list[Span] = []
    for span in spans:
        cuts = placed.hyphens[span.para]
        start = _shift(span.start, cuts)
        end = (
            start
            if span.type == "note"
            else _shift(span.end - 1, cuts) + 1
            if span.end > span.start
            else start
        )
        expected_spans.append(
            Span(span.type, span.para, start, end, span.comment, span.color, span.order)
        )
        if span.type == "note":
            where = _note_point(placed, span.para, span.start)
            if where is None:
                continue
            page_no, x, y = where
            annot = doc[page_no].add_text_annot((x, y), span.comment, icon="Comment")
            annot.set_info(title=author)
            if rng.random() < 0.3:
                annot.set_popup(pymupdf.Rect(x + 20, y, x + 200, y + 80))
            annot.update()
            drawn += 1
            continue
        quads = _quads(placed, span.para, span.start, span.end, space)
        if not quads:
            continue
        colour = None
        if span.type == "highlight":
            colour = rng.choice(PDF_COLOURS[span.color if span.color in PDF_COLOURS else "generic"])
        opacity = rng.choice([1.0, 1.0, 1.0, 0.8, 0.6]) if colour else 1.0
        for k, (page_no, page_quads) in enumerate(sorted(quads.items())):
            page = doc[page_no]
            if colour is not None:
                annot = page.add_highlight_annot(quads=page_quads)
                annot.set_colors(stroke=[c / 255 for c in colour])
                if opacity < 1:
                    annot.set_opacity(opacity)
            else:
                annot = page.add_strikeout_annot(quads=page_quads)
            comment = span.comment if k == 0 or rng.random() < 0.5 else ""
            annot.set_info(content=comment, title=author)
            if comment and rng.random() < 0.3:
                r = page_quads[0].rect
                annot.set_popup(pymupdf.Rect(r.x1 + 10, r.y0, r.x1 + 190, r.y0 + 80))
            annot.update()
        drawn += 1
    for comment in overall_comments(draft):
        annot = doc[0].add_text_annot((style.page[0] - 40, 8), comment, icon="Note")
        annot.set_info(title=author, subject="Overall comment")
        annot.update()
    doc.save(str(out), garbage=3, deflate=True)
    doc.close()
    undrawn = sum(
        1
        for body, chars in zip(bodies, placed.glyphs, strict=True)
        for c, g in zip(body, chars, strict=True)
        if g is None and not c.isspace()
    )
    report = {
        "pages": lines[-1].page + 1 if lines else 0,
        "hyphens": sum(len(h) for h in placed.hyphens),
        "annotations_drawn": drawn,
        "undrawn_characters": undrawn,
        "features": layout_features(placed, style),
    }
    return build_draft(placed.expected, expected_spans, overall_comments(draft)), report


def layout_features(placed: Placed, style: LoStyle) -> dict[str, list[int]]:
    """Paragraphs (indices) in which the layout shows what the parser must get right.

    - ``line_end_hyphen``: a hyphen the student typed ends a line inside the paragraph;
    - ``fallback_font``: a word drawn in two or more fonts;
    - ``cjk``: CJK ideographs on two or more lines of the paragraph;
    - ``page_break_full``: the paragraph's last line ends a page, nearly full (the next
      paragraph's first word would not have fitted after it), the next paragraph starts
      the next page; ``page_break_room``: the same, on a page with room left for another
      line (the next paragraph's spacing did not fit);
    - ``multi_page``: the paragraph runs over a page break.
    """
    out: dict[str, list[int]] = defaultdict(list)
    right = style.page[0] - style.margins[1]
    spans: list[tuple[int, int] | None] = []  # (first line, last line) per paragraph
    for bi, (body, chars) in enumerate(zip(placed.bodies, placed.glyphs, strict=True)):
        drawn = [(off, g) for off, g in enumerate(chars) if g is not None]
        if not drawn:
            spans.append(None)
            continue
        first, last = drawn[0][1].line, drawn[-1][1].line
        spans.append((first, last))
        line_ends = {}
        for off, g in drawn:
            if not body[off].isspace():
                line_ends[g.line] = off
        if any(
            line_no != last and body[off] in HYPHENS and not body[off + 1 : off + 2].isspace()
            for line_no, off in line_ends.items()
        ):
            out["line_end_hyphen"].append(bi)
        fonts_per_word: list[set[str]] = [set()]
        for off, g in drawn:
            if body[off].isspace():
                fonts_per_word.append(set())
            else:
                fonts_per_word[-1].add(g.font)
        if any(len(fonts) > 1 for fonts in fonts_per_word):
            out["fallback_font"].append(bi)
        if len({g.line for off, g in drawn if 0x4E00 <= ord(body[off]) <= 0x9FFF}) > 1:
            out["cjk"].append(bi)
        if placed.lines[first].page != placed.lines[last].page:
            out["multi_page"].append(bi)
    deltas = Counter(
        round(b.baseline - a.baseline, 1)
        for a, b in zip(placed.lines, placed.lines[1:], strict=False)
        if a.page == b.page
    )
    pitch = deltas.most_common(1)[0][0] if deltas else style.size
    lowest = max((ln.baseline for ln in placed.lines), default=0.0)
    for bi in range(len(spans) - 1):
        here, nxt = spans[bi], spans[bi + 1]
        if here is None or nxt is None or here[1] + 1 != nxt[0]:
            continue
        a, b = placed.lines[here[1]], placed.lines[nxt[0]]
        if b.page != a.page + 1:
            continue
        vis = [g for g in a.glyphs if not g.c.isspace()]
        word = placed.expected[bi + 1].split()[:1]
        head = [g for g in b.glyphs if not g.c.isspace()][: len(word[0]) if word else 0]
        if vis and head and vis[-1].x1 + 0.25 * style.size + head[-1].x1 - head[0].x0 > right:
            out["page_break_full"].append(bi)
            if a.baseline + pitch <= lowest + 0.5:
                out["page_break_room"].append(bi)
    return dict(out)


# ------------------------------------------------------------------------ entry points


@dataclass
class Job:
    draft: dict
    path: Path  # the annotated PDF to write
    seed: int
    style: LoStyle | None = None


def write_pdfs(jobs: list[Job], workdir: Path, batch: int = 40) -> list[tuple[dict, LoStyle, dict]]:
    """Write every job's draft as an annotated, LibreOffice-exported PDF.

    Returns, per job, the expected parse, the style and a report (pages, hyphens drawn,
    annotations drawn, characters no font drew).
    """
    results: list[tuple[dict, LoStyle, dict] | None] = [None] * len(jobs)
    styles = [job.style or LoStyle.random(random.Random(job.seed)) for job in jobs]
    for lo in range(0, len(jobs), batch):
        chunk = range(lo, min(len(jobs), lo + batch))
        with tempfile.TemporaryDirectory(dir=workdir) as tmp:
            tmp_path = Path(tmp)
            docx_paths = []
            for k in chunk:
                bodies = [p["body"] for p in jobs[k].draft["paragraphs"]]
                path = tmp_path / f"job{k:05d}.docx"
                write_docx(bodies, path, styles[k])
                docx_paths.append(path)
            export_pdfs(docx_paths, tmp_path)
            for k, docx_path in zip(chunk, docx_paths, strict=True):
                exported = tmp_path / f"{docx_path.stem}.pdf"
                expected, report = annotate(
                    exported, jobs[k].draft, styles[k], jobs[k].seed, out=jobs[k].path
                )
                results[k] = (expected, styles[k], report)
    return [r for r in results if r is not None]


def style_dict(style: LoStyle) -> dict:
    return asdict(style)
