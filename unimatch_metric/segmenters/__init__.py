"""Stage 1 of UniMatch: split feedback texts into feedback units.

A feedback unit is a self-contained statement about one aspect of the writing; it can be
part of a sentence or span several. Backends, one per module, imported when first used:

- ``"rules"`` (`rules`): the offline baseline (sentences, connectives, merge rules).
- ``"llm"`` (`llm`): an OpenAI-compatible model inserts unit delimiters; the reply is
  accepted only if removing the delimiters gives back the input text (whitespace aside).
- ``"learned"`` (`learned`): a boundary classifier over candidate cut points, trained on
  the project's guideline-labelled segmentations (``sefora train-offline``).
- ``"offline"``: the current offline default (``"learned"``); ``"auto"``: ``"llm"`` when a
  model or endpoint is configured, else ``"offline"``; or a callable ``text -> units``.

Every backend returns units as stripped slices of the input, in order, covering all of its
non-space characters. A text is on one `Side`: ``"feedback"`` (evaluated) or
``"instructor"`` (the comments it is compared with); only ``"learned"`` cuts the two apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sefora_llm.cache import run_cached
from unimatch_metric.errors import UniMatchError, UniMatchOptionError
from unimatch_metric.options import Options
from unimatch_metric.registry import Registry
from unimatch_metric.segmenters.base import SIDES, CallableSegmenter, Segmenter, Side, Units

__all__ = [
    "SEGMENTERS",
    "SIDES",
    "Segmenter",
    "Side",
    "Units",
    "segment",
    "segment_outcomes",
    "segment_sides",
]


def _learned(options: Options) -> Segmenter:
    from unimatch_metric.segmenters.learned import LearnedSegmenter

    return LearnedSegmenter(progress=options.progress)


def _rules(options: Options) -> Segmenter:
    from unimatch_metric.segmenters.rules import RuleSegmenter

    return RuleSegmenter()


def _llm(options: Options) -> Segmenter:
    from unimatch_metric.segmenters.llm import LLMSegmenter

    return LLMSegmenter(options)


SEGMENTERS: Registry[Segmenter] = Registry("segmenter", "learned", CallableSegmenter)
SEGMENTERS.register("learned", _learned)
SEGMENTERS.register("rules", _rules)
SEGMENTERS.register("llm", _llm)


def segment_outcomes(
    texts: Sequence[str], segmenter: Segmenter, options: Options, side: Side = "feedback"
) -> list[Units | UniMatchError]:
    """Segment each text (all on ``side``) through the cache; failures are returned in place."""
    unique = list(dict.fromkeys(texts))
    namespace = segmenter.cache_namespace
    if namespace is not None and segmenter.sided and side != "feedback":
        namespace = (*namespace, side)
    outcomes = run_cached(
        namespace,
        options.cache() if namespace else None,
        unique,
        lambda text: (text,),
        lambda batch: segmenter.segment(batch, side),
    )
    by_text = dict(zip(unique, outcomes, strict=True))
    return [by_text[text] for text in texts]


def segment_sides(
    feedback: Sequence[str], instructor: Sequence[str], segmenter: Segmenter, options: Options
) -> dict[Side, dict[str, Units | UniMatchError]]:
    """The outcomes of `segment_outcomes` for feedback texts and for instructor comments,
    by side and text (a text on both sides may be cut differently)."""
    sides: tuple[tuple[Side, Sequence[str]], ...] = (
        ("feedback", feedback),
        ("instructor", instructor),
    )
    return {
        side: dict(zip(texts, segment_outcomes(texts, segmenter, options, side), strict=True))
        for side, texts in sides
    }


def segment(
    texts: Sequence[str],
    segmenter: str | Callable[[str], Sequence[str]] = "auto",
    side: Side = "feedback",
    **options: Any,
) -> list[Units]:
    """Split each text into feedback units (stripped strings, in order, covering the text).

    ``side`` says whose texts they are: ``"feedback"`` (to evaluate) or ``"instructor"``.
    ``options`` are UniMatch options (``model``, ``base_url``, ``api_key``, ``cache_dir``,
    ``use_cache``, ``request_timeout``, ...). Raises `UniMatchError` if a text cannot be segmented.
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, not one string")
    if side not in SIDES:
        raise UniMatchOptionError(f"side must be one of {', '.join(SIDES)}, not {side!r}")
    opts = Options.from_kwargs(segmenter=segmenter, **options)
    name = SEGMENTERS.backend_name(opts.segmenter, opts)
    opts.check_used(options, segmenter=name, scorer=None, pipeline=False)
    backend = SEGMENTERS.create(opts.segmenter, opts)
    results = []
    for outcome in segment_outcomes(list(texts), backend, opts, side):
        if isinstance(outcome, UniMatchError):
            raise outcome
        results.append(outcome)
    return results
