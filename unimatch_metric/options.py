"""The options of UniMatch's segmenters, scorers and pipeline, checked in one place."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from sefora_llm.options import LLMOptions


@dataclass
class Options(LLMOptions):
    """Every UniMatch option with its default (see the metric card for their meaning)."""

    what: ClassVar[str] = "UniMatch"

    segmenter: str | Callable[..., Any] = "auto"
    scorer: str | Callable[..., Any] = "auto"
    threshold: float | None = None
    segment_references: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.threshold is not None and not 0 < float(self.threshold) <= 4:
            raise ValueError(f"threshold must be in (0, 4], got {self.threshold!r}")
