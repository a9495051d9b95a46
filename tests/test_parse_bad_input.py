"""Bad input: every broken file is a clear ParseError, and ``sefora parse`` carries on."""

from __future__ import annotations

import json
import zipfile

import pymupdf
import pytest

from sefora_cli.main import main as cli_main
from sefora_dataset.errors import ParseError
from sefora_dataset.parsers import parse_file
from tests.make_annotated import write_docx, write_pdf

DRAFT = {
    "paragraphs": [
        {
            "body": "A first paragraph that says something about bridges and rivers.",
            "annotations": [
                {
                    "type": "highlight",
                    "color": "pink",
                    "text": "bridges",
                    "comment": "nice",
                    "context_left": "says something about ",
                    "context_right": " and rivers.",
                }
            ],
        },
        {"body": "A second paragraph, shorter.", "annotations": []},
    ],
    "annotations": [{"grades": {}, "comment": "Good start."}],
}


@pytest.fixture
def good_pdf(tmp_path):
    path = tmp_path / "good.pdf"
    write_pdf(DRAFT, path, seed=1)
    return path


@pytest.fixture
def good_docx(tmp_path):
    path = tmp_path / "good.docx"
    write_docx(DRAFT, path, seed=1)
    return path


def _reason(path) -> str:
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert info.value.path == str(path)
    return info.value.reason


def test_encrypted_pdf(tmp_path, good_pdf):
    path = tmp_path / "locked.pdf"
    with pymupdf.open(good_pdf) as doc:
        doc.save(
            path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="student", owner_pw="teacher"
        )
    assert "encrypted" in _reason(path)


@pytest.mark.parametrize("name", ["empty.pdf", "empty.docx"])
def test_zero_byte_file(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"")
    assert "empty" in _reason(path)


def test_text_file_named_pdf(tmp_path):
    path = tmp_path / "notes.pdf"
    path.write_text("These are my notes, not a PDF.\n", encoding="utf-8")
    assert "not a PDF" in _reason(path)


def test_text_file_named_docx(tmp_path):
    path = tmp_path / "notes.docx"
    path.write_text("plain text", encoding="utf-8")
    assert "not a DOCX" in _reason(path)


def test_corrupt_docx_zip(tmp_path, good_docx):
    data = good_docx.read_bytes()
    path = tmp_path / "cut.docx"
    path.write_bytes(data[: len(data) // 2])
    assert "corrupt DOCX" in _reason(path)


def test_docx_with_damaged_member(tmp_path, good_docx):
    data = bytearray(good_docx.read_bytes())
    with zipfile.ZipFile(good_docx) as zf:
        info = zf.getinfo("word/document.xml")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 10
    for i in range(start, start + 40):
        data[i] ^= 0xFF
    path = tmp_path / "damaged.docx"
    path.write_bytes(bytes(data))
    assert "corrupt DOCX" in _reason(path)


def test_zip_that_is_not_a_docx(tmp_path):
    path = tmp_path / "archive.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("hello.txt", "hi")
    assert "word/document.xml" in _reason(path)


def test_pdf_without_text_layer(tmp_path):
    path = tmp_path / "scan.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 200, 100), False)
    pix.set_rect(pix.irect, (230, 230, 230))
    page.insert_image(pymupdf.Rect(72, 72, 472, 272), pixmap=pix)
    doc.save(path)
    assert "no text layer" in _reason(path)


def test_truncated_pdf(tmp_path, good_pdf):
    data = good_pdf.read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[: len(data) // 2])
    reason = _reason(path)
    assert reason.startswith("truncated PDF")


def test_pdf_with_no_pages(tmp_path):
    path = tmp_path / "nopages.pdf"
    path.write_bytes(
        b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
        b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
    )
    assert _reason(path)


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(ParseError):
        parse_file(tmp_path)


def test_misnamed_files_are_read_by_their_signature(tmp_path, good_pdf, good_docx):
    pdf_as_docx = tmp_path / "really_pdf.docx"
    pdf_as_docx.write_bytes(good_pdf.read_bytes())
    docx_as_pdf = tmp_path / "really_docx.pdf"
    docx_as_pdf.write_bytes(good_docx.read_bytes())
    assert parse_file(pdf_as_docx)["paragraphs"][0]["body"].startswith("A first paragraph")
    assert parse_file(docx_as_pdf)["paragraphs"][0]["body"].startswith("A first paragraph")


def test_cli_mix_of_good_and_bad_files(tmp_path, good_pdf, good_docx, capsys):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a_good.pdf").write_bytes(good_pdf.read_bytes())
    (inputs / "b_good.docx").write_bytes(good_docx.read_bytes())
    (inputs / "c_empty.pdf").write_bytes(b"")
    (inputs / "d_text.pdf").write_text("not a pdf", encoding="utf-8")
    (inputs / "e_cut.docx").write_bytes(good_docx.read_bytes()[:500])
    (inputs / "ignored.txt").write_text("not picked up from a folder", encoding="utf-8")
    out = tmp_path / "out"
    code = cli_main(
        ["parse", str(inputs), str(tmp_path / "missing.pdf"), "--out", str(out), "--quiet"]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert sorted(p.name for p in out.iterdir()) == ["a_good.json", "b_good.json"]
    for name in ("a_good.json", "b_good.json"):
        draft = json.loads((out / name).read_text(encoding="utf-8"))
        assert draft["paragraphs"][0]["annotations"][0]["comment"] == "nice"
        assert draft["annotations"] == [{"grades": {}, "comment": "Good start."}]
    assert "c_empty.pdf: empty file" in err
    assert "d_text.pdf: not a PDF" in err
    assert "e_cut.docx: corrupt DOCX" in err
    assert "missing.pdf: no such file" in err
    assert "2 parsed, 4 failed" in err


def test_cli_all_good_exits_zero(tmp_path, good_pdf, good_docx, capsys):
    out = tmp_path / "out"
    assert cli_main(["parse", str(good_pdf), str(good_docx), "--out", str(out), "--quiet"]) == 0
    # same stem in both formats: both kept, told apart by extension
    assert sorted(p.name for p in out.iterdir()) == ["good_docx.json", "good_pdf.json"]


def test_cli_bad_legend_is_a_usage_error(tmp_path, good_pdf, capsys):
    legend = tmp_path / "legend.json"
    legend.write_text('{"pink": [300, 0, 0]}', encoding="utf-8")
    code = cli_main(
        ["parse", str(good_pdf), "--out", str(tmp_path / "o"), "--legend", str(legend), "--quiet"]
    )
    assert code == 2
    assert "0-255" in capsys.readouterr().err
