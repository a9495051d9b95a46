"""Stage 2 of UniMatch: a 0–4 similarity for each (instructor unit, predicted unit) pair.

The scale (see `prompts.SCORE_SYSTEM`): 4 the same feedback, 3 the same point with a
differing detail, 2 one important part shared (target or comment), 1 only the same broad
kind of feedback, 0 unrelated or contradictory. Backends, one per module, imported when
first used:

- ``"llm"`` (`llm`): an OpenAI-compatible judge scoring ``batch_size`` pairs per request.
- ``"embedding"`` (`embedding`): the offline baseline, mapped MiniLM cosine similarity.
- ``"exact"`` (`exact`): 4 for units equal up to case and spacing, else 0 (a sanity check).
- ``"learned"`` (`learned`): boosted trees on fine-tuned MiniLM features and feedback
  cues, trained on the project's guideline-labelled pairs (``sefora train-offline``).
- ``"offline"``: the current offline default (``"learned"``); ``"auto"``: ``"llm"`` when a
  model or endpoint is configured, else ``"offline"``; or a callable taking the list of
  pairs and returning one score in [0, 4] per pair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sefora_llm.cache import run_cached
from unimatch_metric.errors import UniMatchError
from unimatch_metric.options import Options
from unimatch_metric.registry import Registry
from unimatch_metric.scorers.base import CallableScorer, Pair, Scorer

__all__ = ["SCORERS", "Pair", "Scorer", "score_outcomes", "score_pairs"]


def _learned(options: Options) -> Scorer:
    from unimatch_metric.scorers.learned import LearnedScorer

    return LearnedScorer(progress=options.progress)


def _embedding(options: Options) -> Scorer:
    from unimatch_metric.scorers.embedding import EmbeddingScorer

    return EmbeddingScorer(options)


def _llm(options: Options) -> Scorer:
    from unimatch_metric.scorers.llm import LLMScorer

    return LLMScorer(options)


def _exact(options: Options) -> Scorer:
    from unimatch_metric.scorers.exact import ExactScorer

    return ExactScorer()


SCORERS: Registry[Scorer] = Registry("scorer", "learned", CallableScorer)
SCORERS.register("learned", _learned)
SCORERS.register("embedding", _embedding)
SCORERS.register("llm", _llm)
SCORERS.register("exact", _exact)


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
    checked = [tuple(pair) for pair in pairs]
    if not all(len(pair) == 2 and all(isinstance(t, str) for t in pair) for pair in checked):
        raise TypeError("pairs must be (instructor unit, model unit) tuples of two strings")
    pairs = [(a, b) for a, b in checked]
    opts = Options.from_kwargs(scorer=scorer, **options)
    name = SCORERS.backend_name(opts.scorer, opts)
    opts.check_used(options, segmenter=None, scorer=name, pipeline=False)
    backend = SCORERS.create(opts.scorer, opts)
    results = []
    for outcome in score_outcomes(pairs, backend, opts):
        if isinstance(outcome, UniMatchError):
            raise outcome
        results.append(outcome)
    return results
