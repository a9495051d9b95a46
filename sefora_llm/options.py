"""The options every LLM-backed computation takes (UniMatch, the rubric judge), checked in
one place: endpoint, key, batching, cache, retries, error handling."""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sefora_common.errors import OptionError
from sefora_llm.cache import Cache, open_cache
from sefora_llm.client import LLMSettings

if TYPE_CHECKING:
    from typing_extensions import Self

ON_ERROR = ("raise", "skip")


@dataclass
class LLMOptions:
    """Options of every LLM-backed computation here (UniMatch, the rubric judge)."""

    what: ClassVar[str] = "LLM"  # names the options in errors
    error: ClassVar[type[OptionError]] = OptionError  # the package's bad-option error

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    batch_size: int = 50
    cache_dir: str | Path | None = None
    use_cache: bool = True
    return_details: bool = False
    on_error: str = "raise"
    request_timeout: float = 60.0
    max_retries: int = 3
    concurrency: int = 4
    backoff: float = 1.0
    progress: bool | None = None

    def __post_init__(self) -> None:
        if self.on_error not in ON_ERROR:
            raise self.error(f"on_error must be one of {ON_ERROR}, got {self.on_error!r}")
        for name, least in (("batch_size", 1), ("concurrency", 1), ("max_retries", 0)):
            value = getattr(self, name)
            if not _integer(value) or value < least:
                raise self.error(f"{name} must be an integer >= {least}, got {value!r}")
        for name, positive in (("request_timeout", True), ("backoff", False)):
            value = getattr(self, name)
            if not _real(value) or value < 0 or (positive and value == 0):
                bound = "> 0" if positive else ">= 0"
                raise self.error(f"{name} must be a number {bound}, got {value!r}")

    @classmethod
    def from_kwargs(cls, base: Self | None = None, **kwargs: Any) -> Self:
        """``base`` (or the defaults) with ``kwargs`` applied; an unknown name is a TypeError."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise TypeError(
                f"unknown {cls.what} option(s): {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known))}"
            )
        return dataclasses.replace(base or cls(), **kwargs)

    def llm_settings(self) -> LLMSettings:
        """The chat-client settings these options describe."""
        return LLMSettings(
            model=self.model,
            base_url=self.base_url,
            api_key=self.api_key,
            timeout=self.request_timeout,
            max_retries=self.max_retries,
            concurrency=self.concurrency,
            backoff=self.backoff,
        )

    def cache(self) -> Cache | None:
        """The on-disk cache to use, or None when caching is off."""
        return open_cache(self.cache_dir) if self.use_cache else None


def _integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and value == value
