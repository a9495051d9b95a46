"""Write annotated PDF and DOCX drafts from draft structures (the corpus JSON), for tests.

``write_pdf(draft, path, seed)`` lays the paragraphs out itself with PyMuPDF (word
wrapping, left-aligned or justified, first-line indents or spaced paragraphs, titles,
tab stops, multi-page flow) under realistic page furniture -- a running header with the
student's surname and the page number, sometimes a "Page N of M" footer, and a
submission stamp -- then adds the instructor's annotations as a PDF reader would:
Highlight annotations with quads per line (two annotations when a highlight crosses a
page break), StrikeOut annotations, Text (sticky note) annotations at the insertion
point, and an overall comment as a sticky note whose subject is "Overall comment".
Fonts, sizes, margins, line spacing and page size vary with the seed.

``write_docx(draft, path, seed)`` writes the same draft with python-docx (>= 1.2): runs
split at annotation boundaries, Word highlights or run shading for highlights, strike /
double strike / tracked deletions for strikeouts, Word comments on the ranges (an empty
range for a sticky note), an overall comment on the whole document, a running header
with a PAGE field, and a submission stamp paragraph.

Both return the *expected* parse: the draft with the annotations that could be placed
(an annotation whose anchor is not found in its paragraph, or a highlight of no text,
cannot be drawn) and contexts recomputed at 20 characters. The bodies are the draft's
bodies verbatim -- nothing is adjusted for what a font can draw, so characters that no
built-in font covers show up as parse failures in the measurement.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from sefora_dataset.parsers.anchor import Span, build_draft

SURNAMES = [
    "Okafor",
    "Nguyen",
    "García",
    "Kowalski",
    "Smith",
    "Haddad",
    "Rossi",
    "Chen",
    "Müller",
    "O’Brien",
    "Patel",
    "Johansson",
    "Ivanova",
    "Kim",
    "Dubois",
]
INSTRUCTORS = ["Prof. Lane", "Dr. Ahmed", "J. Rivera", "Instructor", "M. Weber"]

# Colours the generator draws for each legend name (RGB 0-255), and "generic" ones that
# must not be mistaken for any legend colour.
PDF_COLOURS = {
    "pink": [(255, 0, 255), (255, 128, 192), (250, 10, 245)],
    "green": [(0, 255, 0), (128, 224, 128), (10, 245, 10)],
    "yellow": [(255, 255, 0), (255, 230, 80), (250, 250, 12)],
    "generic": [
        (0, 255, 255),
        (135, 206, 250),
        (192, 192, 192),
        (180, 150, 255),
        (255, 60, 60),
        (0, 128, 128),
    ],
}
DOCX_HIGHLIGHT = {
    "pink": ["magenta"],
    "green": ["green"],
    "yellow": ["yellow"],
    "generic": ["cyan", "lightGray", "red", "darkCyan", "blue", "darkMagenta"],
}
DOCX_SHADING = {
    "pink": ["FF00FF", "FF80C0"],
    "green": ["00FF00", "80E080"],
    "yellow": ["FFFF00", "FFE650"],
    "generic": ["00FFFF", "87CEFA", "C0C0C0", "B496FF", "FF3C3C"],
}

PDF_FONTS = ["tiro", "helv", "noto-serif", "cour"]
TITLE_FONTS = {"tiro": "tibo", "helv": "hebo", "noto-serif": "tibo", "cour": "cobo"}
FALLBACK_SCRIPTS = [0, 24, 6, 9, 22, 5, 19, 4, 23, 10, 14]  # Noto Latin, CJK, Arabic, ...

_FONT_CACHE: dict[str, pymupdf.Font] = {}


def font(name: str) -> pymupdf.Font:
    if name not in _FONT_CACHE:
        if name == "noto-serif":
            _FONT_CACHE[name] = pymupdf.Font(script=0)
        elif name.startswith("script-"):
            _FONT_CACHE[name] = pymupdf.Font(script=int(name[7:]))
        else:
            _FONT_CACHE[name] = pymupdf.Font(name)
    return _FONT_CACHE[name]


def font_for(ch: str, main: str) -> str:
    """The first font of the fallback chain that has a glyph for ``ch``."""
    if ch in "\t\n":
        return main
    if font(main).has_glyph(ord(ch)):
        return main
    for script in FALLBACK_SCRIPTS:
        name = "noto-serif" if script == 0 else f"script-{script}"
        if font(name).has_glyph(ord(ch)):
            return name
    return main  # drawn as .notdef: the character is lost, as it would be in a real file


# ----------------------------------------------------------------------------- anchors


def locate(body: str, ann: dict) -> tuple[int, int] | None:
    """Offsets [start, end) of a corpus annotation in its paragraph, None if not found."""
    text = ann.get("text", "") if ann["type"] != "note" else ""
    if ann["type"] != "note" and not text:
        return None
    probe = ann.get("context_left", "") + text + ann.get("context_right", "")
    i = body.find(probe)
    if i < 0:
        return None
    start = i + len(ann.get("context_left", ""))
    return start, start + len(text)


def placed_spans(draft: dict) -> tuple[list[Span], list[dict]]:
    """The draft's annotations as spans, plus the ones that cannot be placed."""
    spans, skipped = [], []
    order = 0
    for pi, para in enumerate(draft["paragraphs"]):
        for ann in para.get("annotations", []):
            order += 1
            where = locate(para["body"], ann)
            if where is None:
                skipped.append(ann)
                continue
            spans.append(
                Span(
                    ann["type"],
                    pi,
                    where[0],
                    where[1],
                    ann.get("comment", ""),
                    ann.get("color") if ann["type"] == "highlight" else None,
                    order,
                )
            )
    return spans, skipped


def overall_comments(draft: dict) -> list[str]:
    out = []
    for item in draft.get("annotations") or []:
        if isinstance(item, dict) and isinstance(item.get("comment"), str):
            out.append(item["comment"])
    return out


def expected_parse(draft: dict) -> tuple[dict, list[dict]]:
    """What a parser should give back for ``draft`` written by this module."""
    spans, skipped = placed_spans(draft)
    bodies = [p["body"] for p in draft["paragraphs"]]
    return build_draft(bodies, spans, overall_comments(draft)), skipped


# -------------------------------------------------------------------------- PDF layout


@dataclass
class PdfStyle:
    page: tuple[float, float]
    left: float
    right: float
    top: float
    bottom: float
    font: str
    size: float
    pitch: float
    justify: bool
    spaced: bool
    indent: float
    para_gap: float
    title: bool
    header_size: float
    header_font: str
    footer: bool
    stamp: str  # "first" | "footer" | "none"
    surname: str
    stamp_text: str

    @classmethod
    def random(cls, rng: random.Random) -> PdfStyle:
        page = rng.choice([(612.0, 792.0), (595.0, 842.0)])
        margin = rng.choice([72.0, 72.0, 64.8, 90.0, 54.0])
        fnt = rng.choice(PDF_FONTS)
        size = rng.choice([10.0, 10.5, 11.0, 12.0, 12.0, 13.0])
        spacing = rng.choice([1.15, 1.2, 1.5, 2.0, 2.0])
        spaced = rng.random() < 0.5
        month = rng.choice(["Oct", "November", "Mar", "September", "Feb"])
        day, hour, minute = rng.randint(1, 28), rng.randint(1, 12), rng.randint(0, 59)
        year = rng.choice([2022, 2023, 2024])
        stamp_text = rng.choice(
            [
                f"Submitted: {month} {day}, {year} {hour}:{minute:02d} PM",
                f"Submission date: {day} {month} {year}",
                f"{rng.randint(1, 12)}/{day}/{year} {hour}:{minute:02d} AM",
                f"Submitted on {month} {day}, {year} at {hour}:{minute:02d} pm",
            ]
        )
        return cls(
            page=page,
            left=margin,
            right=page[0] - margin,
            top=margin,
            bottom=page[1] - margin,
            font=fnt,
            size=size,
            pitch=round(size * spacing, 2),
            justify=rng.random() < 0.5,
            spaced=spaced,
            indent=0.0 if spaced and rng.random() < 0.7 else rng.choice([36.0, 18.0, 28.35]),
            para_gap=round(size * spacing * rng.uniform(0.6, 1.0), 2),
            title=rng.random() < 0.7,
            header_size=rng.choice([9.0, 10.0, 11.0, 12.0]),
            header_font=rng.choice(["helv", "tiro", fnt]),
            footer=rng.random() < 0.3,
            stamp=rng.choice(["first", "first", "footer", "none"]),
            surname=rng.choice(SURNAMES),
            stamp_text=stamp_text,
        )


@dataclass
class Glyph:
    ch: str
    font: str
    x: float
    width: float  # advance in the layout (a tab's jump to its stop)
    drawn: bool = True
    natural: float = -1.0  # the glyph's own advance, as the PDF viewer will place it

    def __post_init__(self) -> None:
        if self.natural < 0:
            self.natural = self.width


@dataclass
class LaidLine:
    page: int
    baseline: float
    size: float
    font: str
    glyphs: list[Glyph] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)  # body offset of each glyph


def _units(body: str) -> list[tuple[str, str, bool]]:
    """(word, trailing whitespace, forced break after) units; breaks after spaces/hyphens."""
    units = []
    i, n = 0, len(body)
    while i < n:
        j = i
        while j < n and body[j] not in " \t\n":
            j += 1
            if body[j - 1] in "-—" and j < n and body[j] not in " \t\n" and j - i > 1:
                break
        k = j
        while k < n and body[k] in " \t":
            k += 1
        forced = k < n and body[k] == "\n"
        units.append((body[i:j], body[j:k], forced))
        i = k + 1 if forced else k
    if body.endswith("\n") and (not units or not units[-1][2]):
        units.append(("", "", True))
    return units


class _Layout:
    def __init__(self, style: PdfStyle) -> None:
        self.s = style
        self.lines: list[LaidLine] = []
        self.page = 0
        self.baseline: float | None = None
        self.space_w = font(style.font).text_length(" ", style.size)

    def width(self, ch: str, fname: str, size: float) -> float:
        return font(fname).text_length(ch, size)

    def new_line(self, size: float, fname: str, extra: float = 0.0) -> LaidLine:
        s = self.s
        pitch = max(s.pitch, size * 1.2)
        if self.baseline is None:
            self.baseline = s.top + size * font(fname).ascender
        else:
            nxt = self.baseline + pitch + extra
            if nxt - size * font(fname).descender > s.bottom:
                self.page += 1
                nxt = s.top + size * font(fname).ascender
            self.baseline = nxt
        line = LaidLine(self.page, self.baseline, size, fname)
        self.lines.append(line)
        return line

    def paragraph(
        self,
        body: str,
        base: int,
        *,
        size: float,
        fname: str,
        centre: bool,
        first_indent: float,
        gap_before: float,
    ) -> list[LaidLine]:
        s = self.s
        out: list[LaidLine] = []
        line = self.new_line(size, fname, gap_before)
        out.append(line)
        x = s.left + first_indent
        offset = base
        line_end_forced: list[bool] = []

        def place(ch: str, x: float, off: int) -> float:
            fn = font_for(ch, fname)
            if ch == "\n":
                line.glyphs.append(Glyph(ch, fn, x, 0.0, drawn=False))
                line.offsets.append(off)
                return x
            if ch == "\t":
                stop = s.left + 36.0
                while stop < x + max(12.0, 4 * self.space_w):
                    stop += 36.0
                line.glyphs.append(Glyph(" ", fn, x, stop - x, natural=self.width(" ", fn, size)))
                line.offsets.append(off)
                return stop
            w = self.width(ch, fn, size)
            line.glyphs.append(Glyph(ch, fn, x, w))
            line.offsets.append(off)
            return x + w

        for word, ws, forced in _units(body):
            wlen = sum(self.width(c, font_for(c, fname), size) for c in word)
            if line.glyphs and x + wlen > s.right + 0.01:
                line_end_forced.append(False)
                line = self.new_line(size, fname)
                out.append(line)
                x = s.left
            if x + wlen > s.right + 0.01 and word:
                # a word longer than the line: break it where it stops fitting
                for ch in word:
                    w = self.width(ch, font_for(ch, fname), size)
                    if line.glyphs and x + w > s.right + 0.01:
                        line_end_forced.append(False)
                        line = self.new_line(size, fname)
                        out.append(line)
                        x = s.left
                    x = place(ch, x, offset)
                    offset += 1
            else:
                for ch in word:
                    x = place(ch, x, offset)
                    offset += 1
            for ch in ws:
                x = place(ch, x, offset)
                offset += 1
            if forced:
                place("\n", x, offset)
                offset += 1
                line_end_forced.append(True)
                line = self.new_line(size, fname)
                out.append(line)
                x = s.left
        line_end_forced.append(True)  # the last line of a paragraph is never stretched
        if centre:
            for ln in out:
                vis = [g for g in ln.glyphs if g.drawn and not g.ch.isspace()]
                if vis:
                    width = vis[-1].x + vis[-1].width - ln.glyphs[0].x
                    shift = max(0.0, (s.left + s.right - width) / 2 - ln.glyphs[0].x)
                    for g in ln.glyphs:
                        g.x += shift
        elif s.justify:
            for ln, forced in zip(out, line_end_forced, strict=True):
                if not forced:
                    self._justify(ln)
        return out

    def _justify(self, ln: LaidLine) -> None:
        s = self.s
        gl = ln.glyphs
        # gaps: positions after a run of plain spaces that is followed by a visible glyph
        gaps = []
        for i in range(1, len(gl)):
            if gl[i - 1].ch == " " and gl[i].ch != " " and gl[i - 1].width < 2 * self.space_w:
                gaps.append(i)
        last_vis = max((i for i, g in enumerate(gl) if not g.ch.isspace() and g.drawn), default=-1)
        gaps = [i for i in gaps if i <= last_vis]
        if not gaps or last_vis < 0:
            return
        end = gl[last_vis].x + gl[last_vis].width
        extra = (s.right - end) / len(gaps)
        if extra <= 0 or extra > 1.5 * self.space_w:
            return
        shift = 0.0
        gap_set = set(gaps)
        for i, g in enumerate(gl):
            if i in gap_set:
                shift += extra
            g.x += shift


def _draw_line(tw: pymupdf.TextWriter, ln: LaidLine, size: float) -> None:
    run: list[Glyph] = []

    def flush():
        if run:
            tw.append(
                (run[0].x, ln.baseline),
                "".join(g.ch for g in run),
                font=font(run[0].font),
                fontsize=size,
            )
            run.clear()

    for g in ln.glyphs:
        if not g.drawn:
            flush()
            continue
        if run and (g.font != run[-1].font or abs(run[-1].x + run[-1].natural - g.x) > 0.01):
            flush()
        run.append(g)
    flush()


def _draw_plain(
    tw: pymupdf.TextWriter,
    text: str,
    x: float,
    baseline: float,
    fname: str,
    size: float,
    align: str = "left",
    right: float = 0.0,
) -> None:
    w = font(fname).text_length(text, size)
    if align == "right":
        x = right - w
    elif align == "centre":
        x = (x + right - w) / 2
    tw.append((x, baseline), text, font=font(fname), fontsize=size)


def write_pdf(draft: dict, path: str | Path, seed: int = 0, style: PdfStyle | None = None) -> dict:
    """Write ``draft`` as an annotated PDF at ``path``; return the expected parse."""
    rng = random.Random(seed)
    s = style or PdfStyle.random(rng)
    lay = _Layout(s)
    bodies = [p["body"] for p in draft["paragraphs"]]
    per_para: list[list[LaidLine]] = []
    stamp_first = s.stamp == "first"
    if stamp_first:
        # the stamp takes the first line of page 1, then a gap
        lay.baseline = s.top + s.header_size * font("helv").ascender
        stamp_line = (0, lay.baseline)
        lay.baseline += s.pitch * 0.5
    for i, body in enumerate(bodies):
        is_title = (
            i == 0
            and s.title
            and len(body) < 90
            and "\n" not in body
            and "\t" not in body
            and len(bodies) > 1
        )
        size = round(s.size * 1.3, 1) if is_title else s.size
        fname = TITLE_FONTS[s.font] if is_title else s.font
        gap = s.para_gap if (s.spaced or is_title or (i == 1 and s.title)) and i > 0 else 0.0
        if i == 0 and stamp_first:
            gap = s.pitch
        indent = 0.0 if is_title else s.indent
        per_para.append(
            lay.paragraph(
                body,
                0,
                size=size,
                fname=fname,
                centre=is_title,
                first_indent=indent,
                gap_before=gap,
            )
        )
    n_pages = lay.page + 1
    doc = pymupdf.open()
    for _ in range(n_pages):
        doc.new_page(width=s.page[0], height=s.page[1])
    rect = pymupdf.Rect(0, 0, s.page[0], s.page[1])
    writers = [pymupdf.TextWriter(rect) for _ in range(n_pages)]
    for lines in per_para:
        for ln in lines:
            _draw_line(writers[ln.page], ln, ln.size)
    # furniture
    for number, tw in enumerate(writers):
        _draw_plain(
            tw,
            f"{s.surname} {number + 1}",
            s.left,
            s.top / 2,
            s.header_font,
            s.header_size,
            align="right",
            right=s.right,
        )
        if s.footer:
            _draw_plain(
                tw,
                f"Page {number + 1} of {n_pages}",
                s.left,
                s.page[1] - s.top / 2,
                s.header_font,
                s.header_size - 1,
                align="centre",
                right=s.right,
            )
        if s.stamp == "footer":
            _draw_plain(tw, s.stamp_text, s.left, s.page[1] - s.top / 3, "helv", 8)
    if stamp_first:
        _draw_plain(writers[0], s.stamp_text, s.left, stamp_line[1], "helv", s.header_size)
    for number, tw in enumerate(writers):
        tw.write_text(doc[number])
    pages = [doc[i] for i in range(n_pages)]

    # annotations
    spans, skipped = placed_spans(draft)
    index = _glyph_index(per_para)
    author = rng.choice(INSTRUCTORS)
    for span in spans:
        if span.type == "note":
            page_no, x, y = _insertion_point(per_para[span.para], span.start)
            annot = pages[page_no].add_text_annot((x, y), span.comment, icon="Comment")
            annot.set_info(title=author)
            annot.update()
            continue
        quads_by_page = _quads(index[span.para], span.start, span.end)
        if not quads_by_page:
            skipped.append({"type": span.type, "reason": "no drawable glyph"})
            continue
        colour = None
        if span.type == "highlight":
            name = span.color if span.color in PDF_COLOURS else "generic"
            colour = rng.choice(PDF_COLOURS[name])
        opacity = rng.choice([1.0, 1.0, 1.0, 0.8, 0.6]) if colour else 1.0
        for k, (page_no, quads) in enumerate(sorted(quads_by_page.items())):
            page = pages[page_no]
            if span.type == "highlight":
                annot = page.add_highlight_annot(quads=quads)
                annot.set_colors(stroke=[c / 255 for c in colour])
                if opacity < 1:
                    annot.set_opacity(opacity)
            else:
                annot = page.add_strikeout_annot(quads=quads)
            comment = span.comment if k == 0 or rng.random() < 0.5 else ""
            annot.set_info(content=comment, title=author)
            annot.update()
    for comment in overall_comments(draft):
        annot = pages[0].add_text_annot((s.page[0] - 40, 8), comment, icon="Note")
        annot.set_info(title=author, subject="Overall comment")
        annot.update()
    doc.save(str(path), garbage=3, deflate=True)
    doc.close()
    spans_all, _ = placed_spans(draft)
    return build_draft(bodies, spans_all, overall_comments(draft))


def _glyph_index(per_para: list[list[LaidLine]]) -> list[dict[int, tuple[LaidLine, Glyph]]]:
    out = []
    for lines in per_para:
        idx = {}
        for ln in lines:
            for g, off in zip(ln.glyphs, ln.offsets, strict=True):
                idx[off] = (ln, g)
        out.append(idx)
    return out


def _quads(idx: dict[int, tuple[LaidLine, Glyph]], start: int, end: int):
    by_line: dict[int, list[tuple[LaidLine, Glyph]]] = {}
    for off in range(start, end):
        hit = idx.get(off)
        if hit is None or not hit[1].drawn:
            continue
        by_line.setdefault(id(hit[0]), []).append(hit)
    out: dict[int, list[pymupdf.Quad]] = {}
    for items in by_line.values():
        ln = items[0][0]
        x0 = min(g.x for _, g in items)
        x1 = max(g.x + g.width for _, g in items)
        f = font(ln.font)
        top = ln.baseline - ln.size * f.ascender
        bottom = ln.baseline - ln.size * f.descender
        if x1 - x0 < 0.01:
            continue
        out.setdefault(ln.page, []).append(pymupdf.Rect(x0, top, x1, bottom).quad)
    return out


def _insertion_point(lines: list[LaidLine], offset: int) -> tuple[int, float, float]:
    """Page and icon corner for a sticky note at body offset ``offset``."""
    last = None
    for ln in lines:
        for g, off in zip(ln.glyphs, ln.offsets, strict=True):
            if off == offset:
                return ln.page, g.x, ln.baseline - 0.3 * ln.size
            last = (ln, g)
    if last is None:
        ln = lines[0]
        return ln.page, 72.0, ln.baseline - 0.3 * ln.size
    ln, g = last
    return ln.page, g.x + g.width, ln.baseline - 0.3 * ln.size


# ------------------------------------------------------------------------------- DOCX


def write_docx(draft: dict, path: str | Path, seed: int = 0) -> dict:
    """Write ``draft`` as an annotated DOCX at ``path``; return the expected parse."""
    import docx
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Pt

    rng = random.Random(seed)
    d = docx.Document()
    normal = d.styles["Normal"]
    normal.font.name = rng.choice(["Times New Roman", "Calibri", "Georgia", "Arial"])
    normal.font.size = Pt(rng.choice([11, 12, 12, 13]))
    pf = normal.paragraph_format
    pf.line_spacing = rng.choice([1.0, 1.15, 1.5, 2.0])
    if rng.random() < 0.5:
        pf.first_line_indent = Pt(36)
        pf.space_after = Pt(0)
    else:
        pf.space_after = Pt(rng.choice([6, 8, 12]))
    section = d.sections[0]
    surname = rng.choice(SURNAMES)
    hp = section.header.paragraphs[0]
    hp.alignment = WD_ALIGN_PARAGRAPH.RIGHT
    hp.add_run(f"{surname} ")
    fld = OxmlElement("w:fldSimple")
    fld.set(qn("w:instr"), "PAGE")
    r = OxmlElement("w:r")
    t = OxmlElement("w:t")
    t.text = "1"
    r.append(t)
    fld.append(r)
    hp._p.append(fld)
    author = rng.choice(INSTRUCTORS)
    initials = "".join(w[0] for w in author.replace(".", "").split())[:3]
    use_shading = rng.random() < 0.3

    first_run = None
    if rng.random() < 0.7:
        stamp = PdfStyle.random(rng).stamp_text
        first_run = d.add_paragraph().add_run(stamp)

    spans, _ = placed_spans(draft)
    by_para: dict[int, list[Span]] = {}
    for span in spans:
        by_para.setdefault(span.para, []).append(span)
    last_run = None
    bodies = [p["body"] for p in draft["paragraphs"]]
    for pi, body in enumerate(bodies):
        para = d.add_paragraph()
        if pi == 0 and len(body) < 90 and len(bodies) > 1 and rng.random() < 0.6:
            para.alignment = WD_ALIGN_PARAGRAPH.CENTER
            para.paragraph_format.first_line_indent = Pt(0)
        items = by_para.get(pi, [])
        cuts = {0, len(body)}
        for sp in items:
            cuts.update((sp.start, sp.end))
        cuts = sorted(cuts)
        segments = list(zip(cuts, cuts[1:], strict=False)) if len(body) else []
        # runs by segment; notes get an empty run at their offset
        runs_at: dict[int, object] = {}
        seg_runs: list[tuple[int, int, object]] = []
        notes_at = sorted({sp.start for sp in items if sp.type == "note"})
        note_runs: dict[int, object] = {}
        ni = 0
        for a, b in segments:
            while ni < len(notes_at) and notes_at[ni] <= a:
                note_runs[notes_at[ni]] = para.add_run("")
                ni += 1
            run = para.add_run(body[a:b])
            covering = [sp for sp in items if sp.type != "note" and sp.start <= a and b <= sp.end]
            hls = [sp for sp in covering if sp.type == "highlight"]
            if hls:
                inner = min(hls, key=lambda sp: (sp.end - sp.start, -sp.order))
                _docx_colour(
                    run, inner.color or "generic", inner.order, use_shading, qn, OxmlElement
                )
            if any(sp.type == "strikeout" for sp in covering):
                mode = rng.choice(["strike", "strike", "dstrike", "del"])
                if mode == "strike":
                    run.font.strike = True
                elif mode == "dstrike":
                    run.font.double_strike = True
                else:
                    _track_delete(run, author, qn, OxmlElement)
            runs_at[a] = run
            seg_runs.append((a, b, run))
            if first_run is None:
                first_run = run
            last_run = run
        while ni < len(notes_at):
            note_runs[notes_at[ni]] = para.add_run("")
            ni += 1
        for sp in sorted(items, key=lambda sp: sp.order):
            if sp.type == "note":
                d.add_comment(
                    note_runs[sp.start], text=sp.comment, author=author, initials=initials
                )
                continue
            if not sp.comment:
                continue
            runs = [run for a, b, run in seg_runs if sp.start <= a and b <= sp.end]
            if runs:
                d.add_comment(
                    [runs[0], runs[-1]], text=sp.comment, author=author, initials=initials
                )
    overall = overall_comments(draft)[:1]
    if overall and last_run is not None:
        d.add_comment([first_run, last_run], text=overall[0], author=author, initials=initials)
    else:
        overall = []  # a draft without text has nothing to hang a Word comment on
    d.save(str(path))
    return build_draft(bodies, spans, overall)


def _docx_colour(run, name: str, order: int, use_shading: bool, qn, OxmlElement) -> None:
    rpr = run._r.get_or_add_rPr()
    pick = order  # deterministic per annotation, varied across annotations
    if use_shading:
        fills = DOCX_SHADING.get(name, DOCX_SHADING["generic"])
        shd = OxmlElement("w:shd")
        shd.set(qn("w:val"), "clear")
        shd.set(qn("w:color"), "auto")
        shd.set(qn("w:fill"), fills[pick % len(fills)])
        rpr.append(shd)
    else:
        vals = DOCX_HIGHLIGHT.get(name, DOCX_HIGHLIGHT["generic"])
        hl = OxmlElement("w:highlight")
        hl.set(qn("w:val"), vals[pick % len(vals)])
        rpr.append(hl)


def _track_delete(run, author: str, qn, OxmlElement) -> None:
    """Turn a run into a tracked deletion (w:del with w:delText)."""
    r = run._r
    for t in r.findall(qn("w:t")):
        t.tag = qn("w:delText")
    dele = OxmlElement("w:del")
    dele.set(qn("w:id"), str(abs(hash((id(r), author))) % 100000 + 1000))
    dele.set(qn("w:author"), author)
    dele.set(qn("w:date"), "2024-01-01T00:00:00Z")
    r.addprevious(dele)
    dele.append(r)
