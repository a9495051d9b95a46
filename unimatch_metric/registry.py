"""The seam between UniMatch and its segmentation/scoring backends: a name -> factory
registry with the "auto" and "offline" aliases, and the cache lookup around every backend.

A later learned backend registers itself under a new name and becomes the offline default
by changing ``Registry.offline``; the baselines stay selectable by name.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

from sefora_llm.cache import Cache, make_key
from sefora_llm.client import llm_configured
from sefora_llm.options import Options
from unimatch_metric.errors import UniMatchError

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

    def resolve_name(self, spec: str, options: Options) -> str:
        """The registered name ``spec`` stands for."""
        if spec == "auto":
            spec = "llm" if llm_configured(options.model, options.base_url) else "offline"
        if spec == "offline":
            spec = self.offline
        if spec not in self._factories:
            choices = ", ".join(["auto", "offline", *self.names()])
            raise ValueError(
                f"unknown {self.kind} {spec!r}; choose one of: {choices}, or a callable"
            )
        return spec

    def create(self, spec: str | Callable, options: Options) -> B:
        """The backend ``spec`` (a name, an alias or a callable) names, built with ``options``."""
        if callable(spec):
            return self._wrap_callable(spec)
        if not isinstance(spec, str):
            raise TypeError(f"{self.kind} must be a name or a callable, got {type(spec).__name__}")
        return self._factories[self.resolve_name(spec, options)](options)


def run_cached(
    namespace: Sequence[str] | None,
    cache: Cache | None,
    items: Sequence[X],
    key_of: Callable[[X], tuple[str, ...]],
    run: Callable[[list[X]], list[Y | UniMatchError]],
) -> list[Y | UniMatchError]:
    """``run(items)`` with the results already in ``cache`` taken from there.

    ``namespace`` identifies the backend configuration (None: the backend is not cached);
    successful new results are stored, failures never are.
    """
    if namespace is None or cache is None:
        return run(list(items))
    keys = [make_key(namespace, *key_of(item)) for item in items]
    found = cache.get_many(keys)
    todo = [i for i, key in enumerate(keys) if key not in found]
    fresh = run([items[i] for i in todo]) if todo else []
    cache.put_many(
        {
            keys[i]: result
            for i, result in zip(todo, fresh, strict=True)
            if not isinstance(result, UniMatchError)
        }
    )
    results: list[Y | UniMatchError] = [found.get(key) for key in keys]  # type: ignore[misc]
    for i, result in zip(todo, fresh, strict=True):
        results[i] = result
    return results
