"""Annotated DOCX drafts -> the corpus draft structure (python-docx + the WordprocessingML).

- **Paragraphs** are the body's ``w:p`` elements in document order (also those in tables
  and content controls; not the nested ones of text boxes), with their text as Word shows
  it in markup view: ``w:t``, tracked deletions (``w:delText``, shown struck) and
  insertions, ``w:tab`` -> tab, ``w:br``/``w:cr`` -> newline, no-break and soft hyphens.
  Paragraphs holding only whitespace are dropped, and so is a paragraph that is only a
  submission stamp (see :func:`~sefora_dataset.parsers.anchor.is_submission_line`).
  Running headers and footers live in their own parts and are never read.
- **Comments** (``w:comment``) are anchored by ``w:commentRangeStart``/``End`` (or at
  their ``w:commentReference`` when a range is missing). A comment whose range is all
  struck text is a ``strikeout``; one whose range is mostly highlighted text is a
  ``highlight`` (colour: the most common highlight colour in the range); mostly struck
  text, a ``strikeout``; otherwise a ``note`` anchored at the start of its range. A
  comment covering the whole document is the draft's overall comment. A range running
  over several paragraphs is cut at the end of its first paragraph. Replies
  (``w15:commentEx`` with ``paraIdParent``) are appended to their parent's comment on a
  new line.
- **Highlights**: ``w:highlight`` (Word's named colours) or a run shading fill
  (``w:shd/@w:fill``, as Google Docs writes highlights) mapped to the nearest legend
  colour; highlighted text outside any commented range becomes a highlight with an empty
  comment (a maximal stretch of one colour).
- **Strikeouts**: ``w:strike``, ``w:dstrike`` and tracked deletions (``w:del``); struck
  text outside any commented range is a strikeout with an empty comment.

Context strings are 20 characters (see :mod:`.anchor`).
"""

from __future__ import annotations

import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from ..errors import ParseError
from .anchor import Span, build_parsed_draft, is_submission_line
from .legend import Legend, load_legend

T = TypeVar("T")
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
W14 = "http://schemas.microsoft.com/office/word/2010/wordml"
W15 = "http://schemas.microsoft.com/office/word/2012/wordml"


def _q(tag: str) -> str:
    return f"{{{W}}}{tag}"


T_P, T_R, T_T, T_DELTEXT = _q("p"), _q("r"), _q("t"), _q("delText")
T_TAB, T_PTAB, T_BR, T_CR = _q("tab"), _q("ptab"), _q("br"), _q("cr")
T_NBH, T_SOFTH = _q("noBreakHyphen"), _q("softHyphen")
T_TBL, T_TR, T_TC, T_SDT, T_SDTCONTENT = _q("tbl"), _q("tr"), _q("tc"), _q("sdt"), _q("sdtContent")
T_CRS, T_CRE, T_CREF = _q("commentRangeStart"), _q("commentRangeEnd"), _q("commentReference")
T_DEL, T_INS, T_MOVEFROM = _q("del"), _q("ins"), _q("moveFrom")
T_RPR, T_HIGHLIGHT, T_SHD = _q("rPr"), _q("highlight"), _q("shd")
T_STRIKE, T_DSTRIKE, T_VANISH = _q("strike"), _q("dstrike"), _q("vanish")
A_VAL, A_ID, A_FILL, A_TYPE = _q("val"), _q("id"), _q("fill"), _q("type")
# Containers whose runs belong to the paragraph's text.
INLINE_CONTAINERS = {
    _q("hyperlink"),
    _q("smartTag"),
    _q("customXml"),
    _q("fldSimple"),
    T_INS,
    T_DEL,
    _q("moveTo"),
    T_MOVEFROM,
    T_SDT,
    T_SDTCONTENT,
    _q("dir"),
    _q("bdo"),
}

# ST_HighlightColor values -> RGB (Word's highlighter palette).
HIGHLIGHT_RGB = {
    "yellow": (255, 255, 0),
    "green": (0, 255, 0),
    "cyan": (0, 255, 255),
    "magenta": (255, 0, 255),
    "blue": (0, 0, 255),
    "red": (255, 0, 0),
    "darkBlue": (0, 0, 128),
    "darkCyan": (0, 128, 128),
    "darkGreen": (0, 128, 0),
    "darkMagenta": (128, 0, 128),
    "darkRed": (128, 0, 0),
    "darkYellow": (128, 128, 0),
    "darkGray": (128, 128, 128),
    "lightGray": (192, 192, 192),
    "black": (0, 0, 0),
    "white": (255, 255, 255),
}
OFF_VALUES = {"0", "false", "off", "none"}


@dataclass
class _Para:
    chars: list[str] = field(default_factory=list)
    # per character: highlight colour name (legend) or None, struck flag
    colour: list[str | None] = field(default_factory=list)
    struck: list[bool] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.chars)


def _on(el) -> bool:
    if el is None:
        return False
    val = el.get(A_VAL)
    return val is None or val.lower() not in OFF_VALUES


def _run_format(run, legend: Legend) -> tuple[str | None, bool, bool]:
    """(highlight colour name or None, struck, hidden) of a ``w:r``."""
    rpr = run.find(T_RPR)
    if rpr is None:
        return None, False, False
    colour = None
    hl = rpr.find(T_HIGHLIGHT)
    if hl is not None:
        val = hl.get(A_VAL) or ""
        if val and val != "none":
            rgb = HIGHLIGHT_RGB.get(val)
            colour = legend.name_of(rgb) if rgb else "generic"
    if colour is None:
        shd = rpr.find(T_SHD)
        if shd is not None:
            fill = (shd.get(A_FILL) or "").strip()
            if len(fill) == 6 and fill.lower() not in ("auto", "ffffff"):
                try:
                    rgb = (int(fill[0:2], 16), int(fill[2:4], 16), int(fill[4:6], 16))
                except ValueError:
                    rgb = None
                if rgb is not None:
                    colour = legend.name_of(rgb)
    struck = _on(rpr.find(T_STRIKE)) or _on(rpr.find(T_DSTRIKE))
    hidden = _on(rpr.find(T_VANISH))
    return colour, struck, hidden


class _Walker:
    """Walks the body collecting paragraph text, run formats and comment anchors."""

    def __init__(self, legend: Legend) -> None:
        self.legend = legend
        self.paras: list[_Para] = []
        self.starts: dict[str, tuple[int, int]] = {}
        self.ends: dict[str, tuple[int, int]] = {}
        self.refs: dict[str, tuple[int, int]] = {}
        self.pending_starts: list[str] = []  # range starts found between paragraphs

    def _pos(self) -> tuple[int, int]:
        para = self.paras[-1]
        return len(self.paras) - 1, len(para.chars)

    def block(self, el) -> None:
        for child in el:
            tag = child.tag
            if tag == T_P:
                self.paragraph(child)
            elif tag == T_TBL:
                for row in child.iter(T_TR):
                    for cell in row.iter(T_TC):
                        self.block(cell)
            elif tag in (T_SDT, T_SDTCONTENT, _q("customXml")):
                self.block(child)
            elif tag == T_CRS:
                self.pending_starts.append(child.get(A_ID))
            elif tag == T_CRE and self.paras:
                para = self.paras[-1]
                self.ends[child.get(A_ID)] = (len(self.paras) - 1, len(para.chars))

    def paragraph(self, p) -> None:
        self.paras.append(_Para())
        for cid in self.pending_starts:
            self.starts[cid] = (len(self.paras) - 1, 0)
        self.pending_starts = []
        self.inline(p, deleted=False)

    def inline(self, el, deleted: bool) -> None:
        for child in el:
            tag = child.tag
            if tag == T_R:
                self.run(child, deleted)
            elif tag == T_CRS:
                self.starts[child.get(A_ID)] = self._pos()
            elif tag == T_CRE:
                self.ends[child.get(A_ID)] = self._pos()
            elif tag in INLINE_CONTAINERS:
                self.inline(child, deleted or tag in (T_DEL, T_MOVEFROM))

    def run(self, r, deleted: bool) -> None:
        colour, struck, hidden = _run_format(r, self.legend)
        if hidden:
            return
        struck = struck or deleted
        para = self.paras[-1]
        for child in r:
            tag = child.tag
            text = ""
            if tag in (T_T, T_DELTEXT):
                text = child.text or ""
            elif tag in (T_TAB, T_PTAB):
                text = "\t"
            elif tag == T_BR:
                if (child.get(A_TYPE) or "textWrapping") == "textWrapping":
                    text = "\n"
            elif tag == T_CR:
                text = "\n"
            elif tag == T_NBH:
                text = "\u2011"
            elif tag == T_SOFTH:
                text = "\u00ad"
            elif tag == T_CREF:
                self.refs[child.get(A_ID)] = self._pos()
            if text:
                para.chars.extend(text)
                para.colour.extend([colour] * len(text))
                para.struck.extend([struck] * len(text))


def _comments(document) -> dict[str, str]:
    """Comment id -> text, replies appended to their parent."""
    out: dict[str, str] = {}
    try:
        comments = document.comments
    except Exception:
        return out
    para_owner: dict[str, str] = {}
    for comment in comments:
        cid = str(comment.comment_id)
        out[cid] = comment.text
        for p in comment._comment_elm.iter(T_P):  # noqa: SLF001 - the XML is the API here
            pid = p.get(f"{{{W14}}}paraId")
            if pid:
                para_owner[pid] = cid
    # Threads (Word 2013+): commentsExtended maps a reply's paragraph to its parent's.
    try:
        part = document.part.package
        ext = None
        for rel_part in part.iter_parts():
            if str(rel_part.partname).endswith("/commentsExtended.xml"):
                ext = rel_part
                break
        if ext is not None:
            from lxml import etree

            root = etree.fromstring(ext.blob)
            for item in root.iter(f"{{{W15}}}commentEx"):
                child = para_owner.get(item.get(f"{{{W15}}}paraId") or "")
                parent = para_owner.get(item.get(f"{{{W15}}}paraIdParent") or "")
                if child and parent and child != parent:
                    out[f"reply:{child}"] = parent
    except Exception:
        pass
    return out


def _open(path: Path):
    data_head = b""
    try:
        with path.open("rb") as fh:
            data_head = fh.read(4)
    except OSError as err:
        raise ParseError(path, f"cannot read file: {err}") from err
    if not data_head:
        raise ParseError(path, "empty file (0 bytes)")
    if data_head != b"PK\x03\x04":
        raise ParseError(path, "not a DOCX (not a ZIP package)")
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if "word/document.xml" not in names:
                raise ParseError(path, "not a DOCX (the package has no word/document.xml)")
            bad = zf.testzip()
            if bad is not None:
                raise ParseError(path, f"corrupt DOCX (damaged member {bad})")
    except zipfile.BadZipFile as err:
        raise ParseError(path, f"corrupt DOCX (bad ZIP: {err})") from err
    except ParseError:
        raise
    except Exception as err:
        raise ParseError(path, f"corrupt DOCX ({type(err).__name__}: {err})") from err
    import docx

    try:
        return docx.Document(str(path))
    except Exception as err:
        raise ParseError(path, f"corrupt DOCX ({type(err).__name__}: {err})") from err


def _runs_of(flags: list[T], start: int, end: int) -> list[tuple[int, int, T]]:
    """Maximal stretches [a, b) of equal truthy values in flags[start:end]."""
    out = []
    i = start
    while i < end:
        v = flags[i]
        if not v:
            i += 1
            continue
        j = i
        while j < end and flags[j] == v:
            j += 1
        out.append((i, j, v))
        i = j
    return out


def parse_docx(path: str | Path, legend: Legend | str | Path | None = None) -> dict:
    """Parse an annotated DOCX draft into the corpus draft structure.

    Raises :class:`~sefora_dataset.errors.ParseError` when the file is empty, not a
    DOCX (ZIP) package, or corrupt.
    """
    path = Path(path)
    legend = load_legend(legend)
    document = _open(path)
    walker = _Walker(legend)
    walker.block(document.element.body)
    paras = walker.paras
    comments = _comments(document)

    with_text = [
        i for i, p in enumerate(paras) if p.text.strip() and not is_submission_line(p.text)
    ]
    first_text = with_text[0] if with_text else None
    last_text = with_text[-1] if with_text else None
    spans: list[Span] = []
    overall: list[str] = []
    claimed_hl: list[list[bool]] = [[False] * len(p.chars) for p in paras]
    claimed_st: list[list[bool]] = [[False] * len(p.chars) for p in paras]
    order = 0
    reply_of = {k[6:]: v for k, v in comments.items() if k.startswith("reply:")}
    texts = {k: v for k, v in comments.items() if not k.startswith("reply:")}
    for cid in sorted(set(walker.starts) | set(walker.ends) | set(walker.refs), key=_id_key):
        if cid in reply_of:
            continue
        comment = texts.get(cid, "")
        for child, parent in reply_of.items():
            if parent == cid and texts.get(child):
                comment = f"{comment}\n{texts[child]}" if comment else texts[child]
        order += 1
        start = walker.starts.get(cid) or walker.refs.get(cid) or walker.ends.get(cid)
        end = walker.ends.get(cid) or walker.refs.get(cid) or start
        if start is None or end is None:
            continue
        if end < start:
            start, end = end, start
        (sp, so), (ep, eo) = start, end
        whole = (
            first_text is not None
            and (sp, so) <= (first_text, 0)
            and last_text is not None
            and (ep, eo) >= (last_text, len(paras[last_text].chars))
        )
        if whole:
            overall.append(comment)
            continue
        if ep != sp:
            eo = len(paras[sp].chars)
        para = paras[sp]
        colours = [c for c in para.colour[so:eo] if c]
        n_struck = sum(para.struck[so:eo])
        fully_struck = eo > so and n_struck == eo - so
        if not fully_struck and eo > so and colours and 2 * len(colours) >= eo - so:
            colour = Counter(colours).most_common(1)[0][0]
            spans.append(Span("highlight", sp, so, eo, comment, colour, order))
            for i in range(so, eo):
                claimed_hl[sp][i] = True
        elif eo > so and n_struck and 2 * n_struck >= eo - so:
            spans.append(Span("strikeout", sp, so, eo, comment, None, order))
            for i in range(so, eo):
                claimed_st[sp][i] = True
        else:
            spans.append(Span("note", sp, so, so, comment, None, order))
    # Highlighted / struck text that no comment claims.
    for pi, para in enumerate(paras):
        n = len(para.chars)
        free_colour = [
            c if c and not claimed_hl[pi][i] else None for i, c in enumerate(para.colour)
        ]
        for a, b, run_colour in _runs_of(free_colour, 0, n):
            order += 1
            spans.append(Span("highlight", pi, a, b, "", run_colour, order))
        free_struck = [bool(s and not claimed_st[pi][i]) for i, s in enumerate(para.struck)]
        for a, b, _ in _runs_of(free_struck, 0, n):
            order += 1
            spans.append(Span("strikeout", pi, a, b, "", None, order))

    return build_parsed_draft([p.text for p in paras], spans, overall)


def _id_key(cid: str):
    try:
        return (0, int(cid))
    except (TypeError, ValueError):
        return (1, str(cid))
