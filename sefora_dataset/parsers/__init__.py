"""Deterministic parsers for annotated student drafts (PDF and DOCX).

``parse_file(path, legend=None)`` returns the corpus draft structure::

    {"paragraphs": [{"body": str, "annotations": [
        {"type": "highlight" | "note" | "strikeout",
         "text": str,                 # highlight / strikeout only
         "comment": str,
         "color": "pink" | "green" | "yellow" | "generic",   # highlight only
         "context_left": str, "context_right": str}]}],
     "annotations": [{"grades": {}, "comment": str}]}  # only when the file has an overall comment

Context strings are the 20 characters of the paragraph body left and right of the span
(``CONTEXT_CHARS``). The format is chosen from the file's signature (``%PDF-`` or a ZIP
package with ``word/document.xml``), so a misnamed file is still read by what it is; a
file that is neither is refused. Every failure -- empty, not a PDF/DOCX, encrypted,
truncated, corrupt, no text layer -- raises :class:`~sefora_dataset.errors.ParseError`
``(path, reason)``; no other exception escapes. ``legend`` is a
:class:`~sefora_dataset.parsers.legend.Legend`, a JSON file path or a name -> RGB mapping
(default: pink/green/yellow).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ParseError
from .anchor import CONTEXT_CHARS, is_submission_line
from .legend import DEFAULT_LEGEND, GENERIC, Legend, LegendError, load_legend

SUFFIXES = (".pdf", ".docx")

__all__ = [
    "CONTEXT_CHARS",
    "DEFAULT_LEGEND",
    "GENERIC",
    "SUFFIXES",
    "Legend",
    "LegendError",
    "ParseError",
    "detect_format",
    "is_submission_line",
    "load_legend",
    "parse_file",
]


def detect_format(path: str | Path) -> str:
    """``"pdf"`` or ``"docx"`` from the file's first bytes (ParseError when neither)."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            head = fh.read(1024)
    except IsADirectoryError as err:
        raise ParseError(path, "is a directory, not a file") from err
    except OSError as err:
        raise ParseError(path, f"cannot read file: {err.strerror or err}") from err
    if not head:
        raise ParseError(path, "empty file (0 bytes)")
    if b"%PDF-" in head:
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        return "docx"
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        raise ParseError(path, "not a PDF (no %PDF- header)")
    if suffix == ".docx":
        raise ParseError(path, "not a DOCX (not a ZIP package)")
    raise ParseError(path, "neither a PDF nor a DOCX file")


def parse_file(path: str | Path, legend: Legend | str | Path | dict | None = None) -> dict:
    """Parse one annotated PDF or DOCX draft into the corpus draft structure."""
    path = Path(path)
    legend = load_legend(legend)  # a bad legend is the caller's error, not the file's
    kind = detect_format(path)
    try:
        if kind == "pdf":
            from .pdf import parse_pdf

            return parse_pdf(path, legend)
        from .docx import parse_docx

        return parse_docx(path, legend)
    except ParseError:
        raise
    except RecursionError as err:
        raise ParseError(path, f"corrupt {kind.upper()}: structure nested too deeply") from err
    except Exception as err:  # any library failure on a damaged file is a parse failure
        raise ParseError(path, f"corrupt {kind.upper()}: {type(err).__name__}: {err}") from err
