"""The one scaffolding of LLM-backed computations (the UniMatch LLM segmenter and scorer,
the rubric judge): a chat client, a cache namespace that names the model, the endpoint and
the prompt version, and batched requests run concurrently with failures kept in place."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from sefora_llm.client import LLMClient, LLMSettings
from sefora_llm.errors import LLMRequestError

X = TypeVar("X")
Y = TypeVar("Y")

_NO_GROUP = object()


class LLMBackend:
    """A computation whose answers come from an OpenAI-compatible model.

    ``cache_namespace`` is ``(*prefix, model, endpoint, *suffix)``: a cached answer is
    reused only for the same model at the same endpoint with the same prompt version.
    """

    name = "llm"

    def __init__(
        self,
        settings: LLMSettings,
        prefix: Sequence[str],
        suffix: Sequence[str],
        failure: type[LLMRequestError] = LLMRequestError,
        progress: bool | None = None,
    ) -> None:
        self.client = LLMClient(settings, failure)
        self.progress = progress
        self._namespace = (
            *prefix,
            self.client.settings.model or "",
            self.client.endpoint,
            *suffix,
        )

    @property
    def cache_namespace(self) -> tuple[str, ...]:
        """The cache key prefix of this backend's answers."""
        return self._namespace

    @property
    def config(self) -> dict[str, Any]:
        """Model and endpoint, for results (never the key)."""
        return self.client.config

    def run_batches(
        self,
        items: Sequence[X],
        size: int,
        ask: Callable[[list[X]], list[Y]],
        desc: str,
        group: Callable[[X], Hashable] | None = None,
    ) -> list[Y | LLMRequestError]:
        """``ask`` over batches of at most ``size`` items (never mixing two ``group`` keys),
        requests in flight concurrently; each item gets its answer, or its batch's error."""
        by_group: dict[Hashable, list[int]] = {}
        for i, item in enumerate(items):
            by_group.setdefault(_NO_GROUP if group is None else group(item), []).append(i)
        batches = [
            indices[start : start + size]
            for indices in by_group.values()
            for start in range(0, len(indices), size)
        ]
        answers = self.client.map(
            lambda batch: ask([items[i] for i in batch]), batches, desc, self.progress
        )
        results: list[Y | LLMRequestError | None] = [None] * len(items)
        for batch, answer in zip(batches, answers, strict=True):
            for n, i in enumerate(batch):
                results[i] = answer if isinstance(answer, LLMRequestError) else answer[n]
        return results  # type: ignore[return-value]  # every index was filled
