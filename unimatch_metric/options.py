"""The options of UniMatch's segmenters, scorers and pipeline, checked in one place: values
when the options are made, and that every option given is used by the chosen backends."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from sefora_common.errors import OptionError
from sefora_llm.options import LLMOptions
from unimatch_metric.errors import UniMatchOptionError

#: Options only an LLM backend reads (``batch_size``: only the LLM scorer).
LLM_ONLY = (
    "model",
    "base_url",
    "api_key",
    "concurrency",
    "request_timeout",
    "max_retries",
    "backoff",
)
#: Options of the whole pipeline, which segmenting or scoring alone does not read.
PIPELINE_ONLY = ("threshold", "segment_references", "return_details", "on_error")


@dataclass
class Options(LLMOptions):
    """Every UniMatch option with its default (see the metric card for their meaning)."""

    what: ClassVar[str] = "UniMatch"
    error: ClassVar[type[OptionError]] = UniMatchOptionError

    segmenter: str | Callable[..., Any] = "auto"
    scorer: str | Callable[..., Any] = "auto"
    threshold: float | None = None
    segment_references: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        tau = self.threshold
        if tau is not None and not (
            isinstance(tau, numbers.Real)
            and not isinstance(tau, bool)
            and math.isfinite(tau)
            and 0 < tau <= 4
        ):
            raise self.error(f"threshold must be in (0, 4], got {tau!r}")

    def check_used(
        self, given: Iterable[str], segmenter: str | None, scorer: str | None, pipeline: bool
    ) -> None:
        """Raise `UniMatchOptionError` if an option in ``given`` (the ones the caller set) has
        a value other than its default that would change nothing: ``segmenter`` / ``scorer``
        are the backend names that will run (None: that stage does not run), ``pipeline``
        whether matching follows.

        A silently ignored option would make a result look like what it is not (a model
        named, yet no request sent), so it is an error instead. Options passed on at their
        default values (a caller forwarding a whole option set) are not.
        """
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        given = {name for name in given if getattr(self, name) != defaults.get(name)}
        unused = []
        if "llm" not in (segmenter, scorer):
            unused += [name for name in LLM_ONLY if name in given]
        if "batch_size" in given and scorer != "llm":
            unused.append("batch_size")
        if "cache_dir" in given and not self.use_cache:
            unused.append("cache_dir")
        if not pipeline:
            unused += [name for name in PIPELINE_ONLY if name in given]
            unused += [
                name
                for name, stage in (("segmenter", segmenter), ("scorer", scorer))
                if stage is None and name in given
            ]
        if unused:
            backends = ", ".join(
                f"{kind} {name!r}"
                for kind, name in (("segmenter", segmenter), ("scorer", scorer))
                if name is not None
            )
            raise self.error(
                f"option(s) {', '.join(unused)} would be ignored here ({backends}"
                f"{', no cache' if not self.use_cache else ''}"
                f"{'' if pipeline else ', no matching'}): leave them out, or choose a "
                "backend that uses them (an LLM: segmenter/scorer 'llm', or 'auto' with a "
                "model or endpoint)"
            )
