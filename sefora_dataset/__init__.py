"""The SEFORA student-feedback corpus as a Hugging Face ``datasets`` dataset.

``build_dataset(source, out)`` turns a corpus folder (published JSON, or raw annotated
PDF/DOCX drafts) into Arrow shards with five configs: essays, drafts, paragraphs,
annotations and revisions. ``load_dataset(out, "paragraphs")`` then loads them offline.

Names are imported on first use, so ``import sefora_dataset`` does not load ``datasets``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from sefora_common import __version__ as __version__  # re-exported

#: The small invented sample corpus shipped in the package (the default build source).
SAMPLE_SOURCE = Path(__file__).resolve().parent / "sample" / "SEFORA-sample"

_LAZY = {
    "build_dataset": "build",
    "split_of": "build",
    "read_corpus": "read",
    "CorpusError": "errors",
    "ParseError": "errors",
    "SeforaError": "errors",
}
__all__ = sorted([*_LAZY, "SAMPLE_SOURCE", "__version__"])


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
