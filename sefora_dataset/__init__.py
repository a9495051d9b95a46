"""The SEFORA student-feedback corpus as a Hugging Face ``datasets`` dataset.

``build_dataset(source, out)`` turns a corpus folder (published JSON, or raw annotated
PDF/DOCX drafts) into Arrow shards with four configs: essays, drafts, paragraphs and
annotations. ``load_dataset(out, "paragraphs")`` then loads them offline.
"""

__version__ = "0.1.0"

from .build import SAMPLE_SOURCE, build_dataset, split_of  # noqa: E402
from .errors import CorpusError, ParseError, SeforaError  # noqa: E402
from .read import read_corpus  # noqa: E402

__all__ = [
    "SAMPLE_SOURCE",
    "CorpusError",
    "ParseError",
    "SeforaError",
    "build_dataset",
    "read_corpus",
    "split_of",
]
