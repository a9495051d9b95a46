"""Fuzz: mutated PDF/DOCX bytes never make the PDF or DOCX parser raise anything but
ParseError (called directly, not through `parse_file`'s catch-all)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sefora_dataset.errors import ParseError
from sefora_dataset.parsers import DEFAULT_LEGEND, detect_format, parse_file
from sefora_dataset.parsers.docx import parse_docx
from sefora_dataset.parsers.pdf import parse_pdf
from tests.make_annotated import write_docx, write_pdf

DRAFT = {
    "paragraphs": [
        {
            "body": "\tFuzzing is a kind of “testing” that throws odd bytes at a parser.",
            "annotations": [
                {
                    "type": "highlight",
                    "color": "green",
                    "text": "odd bytes",
                    "comment": "ok",
                    "context_left": "” that throws ",
                    "context_right": " at a parser.",
                },
                {"type": "note", "comment": "n", "context_left": "", "context_right": "\tFuzzing"},
            ],
        },
        {
            "body": "Second paragraph with a struck word here.",
            "annotations": [
                {
                    "type": "strikeout",
                    "text": "struck",
                    "comment": "",
                    "context_left": "Second paragraph with a ",
                    "context_right": " word here.",
                }
            ],
        },
    ],
    "annotations": [{"grades": {}, "comment": "overall"}],
}


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("fuzz-seeds")
    out = {}
    for fmt, writer in (("pdf", write_pdf), ("docx", write_docx)):
        path = folder / f"seed.{fmt}"
        writer(DRAFT, path, seed=3)
        out[fmt] = path.read_bytes()
    # an uncompressed DOCX, so that byte flips hit XML rather than deflate streams
    with zipfile.ZipFile(io.BytesIO(out["docx"])) as zin:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zout:
            for item in zin.infolist():
                zout.writestr(item.filename, zin.read(item.filename))
    out["docx-stored"] = buf.getvalue()
    return out


mutation = st.lists(
    st.tuples(
        st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
        st.sampled_from(["flip", "delete", "insert", "truncate", "duplicate"]),
        st.binary(min_size=1, max_size=16),
    ),
    min_size=1,
    max_size=6,
)


def mutate(data: bytes, ops) -> bytes:
    buf = bytearray(data)
    for where, kind, chunk in ops:
        if not buf:
            break
        i = min(int(where * len(buf)), len(buf) - 1)
        if kind == "flip":
            for k, b in enumerate(chunk):
                if i + k < len(buf):
                    buf[i + k] ^= b or 0xFF
        elif kind == "delete":
            del buf[i : i + len(chunk) * 8]
        elif kind == "insert":
            buf[i:i] = chunk
        elif kind == "truncate":
            del buf[i:]
        else:
            buf[i:i] = buf[max(0, i - 64) : i]
    return bytes(buf)


def _check(path: Path) -> None:
    """Parse with the format's own parser, beneath `parse_file`'s catch-all (which turns any
    exception into a ParseError): an exception of any other type fails the test."""
    try:
        kind = detect_format(path)
        parser = parse_pdf if kind == "pdf" else parse_docx
        draft = parser(path, DEFAULT_LEGEND)
    except ParseError as err:
        assert err.reason
        return
    assert isinstance(draft["paragraphs"], list)
    assert parse_file(path) == draft  # the public entry point gives the same result


FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(
    ops=mutation,
    fmt=st.sampled_from(["pdf", "docx", "docx-stored"]),
    suffix=st.sampled_from([".pdf", ".docx"]),
)
def test_mutated_files_raise_only_parse_error(tmp_path, seeds, ops, fmt, suffix):
    path = tmp_path / f"mutant{suffix}"
    path.write_bytes(mutate(seeds[fmt], ops))
    _check(path)


@FUZZ
@given(data=st.binary(max_size=2048), head=st.sampled_from([b"", b"%PDF-1.7\n", b"PK\x03\x04"]))
def test_random_bytes_raise_only_parse_error(tmp_path, data, head):
    path = tmp_path / "random.pdf"
    path.write_bytes(head + data)
    _check(path)
