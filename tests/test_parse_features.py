"""Parser details: legend, colour by rendering, furniture, notes, replies, DOCX markup."""

from __future__ import annotations

import json

import docx
import pymupdf
import pytest
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from sefora_dataset.parsers import (
    CONTEXT_CHARS,
    Legend,
    LegendError,
    is_submission_line,
    parse_file,
)
from sefora_dataset.parsers.legend import DEFAULT_LEGEND, load_legend
from tests.make_annotated import PDF_COLOURS, write_pdf

# ------------------------------------------------------------------------------ legend


@pytest.mark.parametrize("name", ["pink", "green", "yellow", "generic"])
def test_generator_colours_map_to_their_legend_names(name):
    for rgb in PDF_COLOURS[name]:
        assert DEFAULT_LEGEND.name_of(rgb) == name


def test_word_highlighter_names_map_to_legend():
    from sefora_dataset.parsers.docx import HIGHLIGHT_RGB

    assert DEFAULT_LEGEND.name_of(HIGHLIGHT_RGB["magenta"]) == "pink"
    assert DEFAULT_LEGEND.name_of(HIGHLIGHT_RGB["green"]) == "green"
    assert DEFAULT_LEGEND.name_of(HIGHLIGHT_RGB["yellow"]) == "yellow"
    for other in ("cyan", "lightGray", "red", "blue", "darkCyan", "darkMagenta"):
        assert DEFAULT_LEGEND.name_of(HIGHLIGHT_RGB[other]) == "generic"


def test_legend_from_file(tmp_path):
    path = tmp_path / "legend.json"
    path.write_text(
        json.dumps({"praise": [120, 200, 255], "problem": [[255, 150, 0]], "max_distance": 25}),
        encoding="utf-8",
    )
    legend = load_legend(path)
    assert legend.names == ["praise", "problem"]
    assert legend.name_of((125, 198, 250)) == "praise"
    assert legend.name_of((255, 255, 0)) == "generic"
    assert legend.max_distance == 25


@pytest.mark.parametrize(
    "content",
    [
        '{"pink": [1, 2]}',
        "[1, 2, 3]",
        "{}",
        "not json",
        '{"generic": [1, 2, 3]}',
        '{"a": [1, 2, 3], "max_distance": "x"}',
    ],
)
def test_bad_legend_files(tmp_path, content):
    path = tmp_path / "legend.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(LegendError):
        Legend.from_file(path)


def _one_para_pdf(tmp_path, body, make_annots, name="x.pdf"):
    """A one-page PDF with ``body`` at (72, 100) in Helvetica 12, annotated by a callback."""
    doc = pymupdf.open()
    page = doc.new_page()
    font = pymupdf.Font("helv")
    tw = pymupdf.TextWriter(page.rect)
    tw.append((72, 100), body, font=font, fontsize=12)
    tw.write_text(page)
    make_annots(page, font)
    path = tmp_path / name
    doc.save(path)
    return path


def _span_quad(font, body, text, size=12, x=72, baseline=100):
    start = body.index(text)
    x0 = x + font.text_length(body[:start], size)
    x1 = x0 + font.text_length(text, size)
    return pymupdf.Rect(
        x0, baseline - size * font.ascender, x1, baseline - size * font.descender
    ).quad


def test_colour_comes_from_the_rendering_not_the_colour_entry(tmp_path):
    body = "A sentence with a highlighted phrase in it."

    def annots(page, font):
        a = page.add_highlight_annot(quads=[_span_quad(font, body, "highlighted phrase")])
        a.set_colors(stroke=(0, 1, 0))  # green appearance ...
        a.update()
        doc = page.parent
        doc.xref_set_key(a.xref, "C", "[1 1 0]")  # ... but /C now claims yellow

    parsed = parse_file(_one_para_pdf(tmp_path, body, annots))
    (ann,) = parsed["paragraphs"][0]["annotations"]
    assert ann["text"] == "highlighted phrase"
    assert ann["color"] == "green"


def test_opacity_is_undone_and_overlaps_do_not_tint(tmp_path):
    body = "One two three four five six seven eight nine ten."

    def annots(page, font):
        a = page.add_highlight_annot(quads=[_span_quad(font, body, "two three four five six")])
        a.set_colors(stroke=(1, 0, 1))
        a.set_opacity(0.5)
        a.update()
        b = page.add_highlight_annot(quads=[_span_quad(font, body, "four")])
        b.set_colors(stroke=(1, 1, 0))
        b.update()

    parsed = parse_file(_one_para_pdf(tmp_path, body, annots))
    got = {a["text"]: a["color"] for a in parsed["paragraphs"][0]["annotations"]}
    assert got == {"two three four five six": "pink", "four": "yellow"}


def test_custom_legend(tmp_path):
    body = "Orange marks a question here."

    def annots(page, font):
        a = page.add_highlight_annot(quads=[_span_quad(font, body, "a question")])
        a.set_colors(stroke=(1, 0.6, 0))
        a.update()

    path = _one_para_pdf(tmp_path, body, annots)
    assert parse_file(path)["paragraphs"][0]["annotations"][0]["color"] in ("yellow", "generic")
    legend = {"question": [255, 153, 0], "praise": [0, 255, 0]}
    assert parse_file(path, legend=legend)["paragraphs"][0]["annotations"][0]["color"] == "question"


def test_underline_and_strikeout_and_reply(tmp_path):
    body = "Keep this, cut that, underline those words."

    def annots(page, font):
        s = page.add_strikeout_annot(quads=[_span_quad(font, body, "cut that")])
        s.set_info(content="cut")
        s.update()
        u = page.add_underline_annot(quads=[_span_quad(font, body, "those words")])
        u.set_info(content="why?")
        u.update()
        r = page.add_text_annot((300, 300), "because I said so")
        r.set_irt_xref(u.xref)
        r.update()

    parsed = parse_file(_one_para_pdf(tmp_path, body, annots))
    anns = parsed["paragraphs"][0]["annotations"]
    assert [(a["type"], a["text"], a["comment"]) for a in anns] == [
        ("strikeout", "cut that", "cut"),
        ("highlight", "those words", "why?\nbecause I said so"),
    ]


def test_sticky_note_anchor_and_context_length(tmp_path):
    body = "The quick brown fox jumps over the lazy dog while the cat sleeps soundly."
    at = body.index("over")

    def annots(page, font):
        x = 72 + font.text_length(body[:at], 12)
        page.add_text_annot((x + 0.4, 97), "note here")
        far = page.add_text_annot((300, 700), "far from any text")
        far.update()

    parsed = parse_file(_one_para_pdf(tmp_path, body, annots))
    (note,) = parsed["paragraphs"][0]["annotations"]
    assert note == {
        "type": "note",
        "comment": "note here",
        "context_left": body[at - CONTEXT_CHARS : at],
        "context_right": body[at : at + CONTEXT_CHARS],
    }
    assert parsed["annotations"] == [{"grades": {}, "comment": "far from any text"}]


def test_running_header_footer_and_stamp_removed(tmp_path):
    """Furniture at the same place on every page goes; body text that looks alike stays."""
    doc = pymupdf.open()
    font = pymupdf.Font("tiro")
    for n in range(3):
        page = doc.new_page()
        tw = pymupdf.TextWriter(page.rect)
        tw.append((480, 36), f"Lee {n + 1}", font=font, fontsize=11)
        tw.append((250, 760), f"Page {n + 1} of 3", font=font, fontsize=10)
        if n == 0:
            tw.append((72, 80), "Submitted: Oct 3, 2022 9:14 PM", font=font, fontsize=10)
            tw.append((72, 110), "November 5, 2024", font=font, fontsize=12)
        tw.append((108, 140), f"Page {n + 2} is where the story goes on.", font=font, fontsize=12)
        tw.write_text(page)
    path = tmp_path / "f.pdf"
    doc.save(path)
    bodies = [p["body"] for p in parse_file(path)["paragraphs"]]
    assert bodies[0] == "November 5, 2024"  # a bare date is the student's, not a stamp
    text = "\n".join(bodies)
    for n in (2, 3, 4):
        assert f"Page {n} is where the story goes on." in text
    for furniture in ("Lee", "of 3", "Submitted"):
        assert furniture not in text


def test_submission_line_pattern():
    assert is_submission_line("Submitted: Oct 14, 2022 11:52 PM")
    assert is_submission_line("Submission date: 14 October 2022")
    assert is_submission_line("10/14/2022 11:52 PM")
    assert not is_submission_line("November 5, 2024")
    assert not is_submission_line("Retrieved 2024-12-13.")
    assert not is_submission_line("I submitted my essay on Oct 3, 2022 at 9:14 PM and slept.")


def test_pdf_generator_covers_non_latin_text(tmp_path):
    draft = {
        "paragraphs": [{"body": "She said 你好 and “ciao” — ﬁne, Ünïcödé ½ ℃.", "annotations": []}]
    }
    path = tmp_path / "u.pdf"
    expected = write_pdf(draft, path, seed=2)
    assert parse_file(path) == expected


# -------------------------------------------------------------------------------- DOCX


def _docx_with(tmp_path, build) -> dict:
    d = docx.Document()
    build(d)
    path = tmp_path / "d.docx"
    d.save(path)
    return parse_file(path)


def test_docx_shading_double_strike_deletion_and_reply(tmp_path):
    def build(d):
        p = d.add_paragraph()
        p.add_run("Plain start, ")
        shaded = p.add_run("shaded green")
        shd = OxmlElement("w:shd")
        shd.set(qn("w:val"), "clear")
        shd.set(qn("w:fill"), "80E080")
        shaded._r.get_or_add_rPr().append(shd)
        p.add_run(", then ")
        ds = p.add_run("double struck")
        ds.font.double_strike = True
        p.add_run(" and ")
        deleted = p.add_run("deleted")
        p.add_run(" text.")
        r = deleted._r
        for t in r.findall(qn("w:t")):
            t.tag = qn("w:delText")
        dele = OxmlElement("w:del")
        dele.set(qn("w:id"), "9")
        dele.set(qn("w:author"), "T")
        r.addprevious(dele)
        dele.append(r)
        d.add_comment(ds, text="why strike?", author="T")

    parsed = _docx_with(tmp_path, build)
    (para,) = parsed["paragraphs"]
    assert para["body"] == "Plain start, shaded green, then double struck and deleted text."
    got = [(a["type"], a["text"], a["comment"], a.get("color")) for a in para["annotations"]]
    assert got == [
        ("highlight", "shaded green", "", "green"),
        ("strikeout", "double struck", "why strike?", None),
        ("strikeout", "deleted", "", None),
    ]


def test_docx_note_is_anchored_at_range_start_and_whole_doc_comment_is_overall(tmp_path):
    def build(d):
        d.add_paragraph("Submitted: Oct 3, 2022 9:14 PM")
        p1 = d.add_paragraph()
        a = p1.add_run("First paragraph ")
        b = p1.add_run("with a plain commented range")
        p1.add_run(".")
        d.add_paragraph("")  # an empty paragraph is dropped
        p2 = d.add_paragraph()
        c = p2.add_run("Second paragraph.\tWith a tab.")
        d.add_comment(b, text="a note", author="T")
        d.add_comment([a, c], text="Overall: good.", author="T")

    parsed = _docx_with(tmp_path, build)
    assert [p["body"] for p in parsed["paragraphs"]] == [
        "First paragraph with a plain commented range.",
        "Second paragraph.\tWith a tab.",
    ]
    assert parsed["paragraphs"][0]["annotations"] == [
        {
            "type": "note",
            "comment": "a note",
            "context_left": "First paragraph ",
            "context_right": "with a plain comment",
        }
    ]
    assert parsed["annotations"] == [{"grades": {}, "comment": "Overall: good."}]


def test_docx_reply_is_appended_to_its_parent(tmp_path):
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part

    def build(d):
        p = d.add_paragraph()
        p.add_run("A sentence with ")
        target = p.add_run("a point")
        p.add_run(" in it.")
        parent = d.add_comment(target, text="Explain?", author="T")
        reply = d.add_comment(target, text="See the rubric.", author="T")
        w14 = "http://schemas.microsoft.com/office/word/2010/wordml"
        parent.paragraphs[0]._p.set(f"{{{w14}}}paraId", "0000000A")
        reply.paragraphs[0]._p.set(f"{{{w14}}}paraId", "0000000B")
        xml = (
            b'<w15:commentsEx xmlns:w15="http://schemas.microsoft.com/office/word/2012/wordml">'
            b'<w15:commentEx w15:paraId="0000000A" w15:done="0"/>'
            b'<w15:commentEx w15:paraId="0000000B" w15:paraIdParent="0000000A" w15:done="0"/>'
            b"</w15:commentsEx>"
        )
        part = Part(
            PackURI("/word/commentsExtended.xml"),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.commentsExtended+xml",
            xml,
            d.part.package,
        )
        d.part.relate_to(
            part, "http://schemas.microsoft.com/office/2011/relationships/commentsExtended"
        )

    parsed = _docx_with(tmp_path, build)
    assert parsed["paragraphs"][0]["annotations"] == [
        {
            "type": "note",
            "comment": "Explain?\nSee the rubric.",
            "context_left": "A sentence with ",
            "context_right": "a point in it.",
        }
    ]
