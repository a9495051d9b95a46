"""The seam between UniMatch and its segmentation/scoring backends: a name -> factory
registry with the "auto" and "offline" aliases.

A later learned backend registers itself under a new name and becomes the offline default
by changing ``Registry.offline``; the baselines stay selectable by name.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from sefora_llm.client import llm_configured
from unimatch_metric.errors import UniMatchOptionError
from unimatch_metric.options import Options

B = TypeVar("B")
X = TypeVar("X", bound=Hashable)
Y = TypeVar("Y")


class Registry(Generic[B]):
    """Backends of one kind ("segmenter" or "scorer") by name.

    ``"auto"`` means ``"llm"`` when a model or endpoint is configured (by option or
    environment variable) and ``"offline"`` otherwise; ``"offline"`` means the current
    offline default; a callable is wrapped by ``wrap_callable``.
    """

    def __init__(self, kind: str, offline: str, wrap_callable: Callable[[Callable], B]) -> None:
        self.kind = kind
        self.offline = offline
        self._wrap_callable = wrap_callable
        self._factories: dict[str, Callable[[Options], B]] = {}

    def register(self, name: str, factory: Callable[[Options], B]) -> None:
        """Make ``factory(options)`` available as ``name``."""
        if name in ("auto", "offline"):
            raise ValueError(f"{name!r} is an alias and cannot name a {self.kind}")
        self._factories[name] = factory

    def names(self) -> list[str]:
        """The registered names, aliases excluded."""
        return sorted(self._factories)

    def choices(self) -> list[str]:
        """Every name ``spec`` can take: the aliases, then the registered names."""
        return ["auto", "offline", *self.names()]

    def resolve_name(self, spec: str, options: Options) -> str:
        """The registered name ``spec`` stands for; `UniMatchOptionError` if none."""
        if spec == "auto":
            spec = "llm" if llm_configured(options.model, options.base_url) else "offline"
        if spec == "offline":
            spec = self.offline
        if spec not in self._factories:
            raise UniMatchOptionError(
                f"unknown {self.kind} {spec!r}; choose one of: {', '.join(self.choices())}, "
                "or a callable"
            )
        return spec

    def backend_name(self, spec: str | Callable, options: Options) -> str:
        """The name of the backend ``spec`` will create ("callable" for a function),
        checked without loading it."""
        if callable(spec):
            return "callable"
        if not isinstance(spec, str):
            raise TypeError(f"{self.kind} must be a name or a callable, got {type(spec).__name__}")
        return self.resolve_name(spec, options)

    def create(self, spec: str | Callable, options: Options) -> B:
        """The backend ``spec`` (a name, an alias or a callable) names, built with ``options``."""
        if callable(spec):
            return self._wrap_callable(spec)
        return self._factories[self.backend_name(spec, options)](options)
