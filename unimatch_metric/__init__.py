"""UniMatch: unit-level, matching-based evaluation of writing feedback against instructor
comments (SEFORA paper, section 4), as a library and as an ``evaluate`` module.

``MODULE_PATH`` is the folder of the ``evaluate`` module: ``evaluate.load(MODULE_PATH)``.
Heavy dependencies (torch, sentence-transformers, openai) load on first use only.
"""

from __future__ import annotations

from pathlib import Path

from sefora_common import __version__
from unimatch_metric.errors import UniMatchError
from unimatch_metric.match import MatchResult, match
from unimatch_metric.pipeline import UniMatch, check_inputs, check_paragraphs, unimatch
from unimatch_metric.prompts import PROMPT_VERSION
from unimatch_metric.scorers import SCORERS, score_pairs
from unimatch_metric.segmenters import SEGMENTERS, segment

MODULE_PATH = str(Path(__file__).resolve().parent / "unimatch")

__all__ = [
    "MODULE_PATH",
    "PROMPT_VERSION",
    "SCORERS",
    "SEGMENTERS",
    "MatchResult",
    "UniMatch",
    "UniMatchError",
    "check_inputs",
    "check_paragraphs",
    "match",
    "score_pairs",
    "segment",
    "__version__",
    "unimatch",
]
