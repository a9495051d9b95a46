"""The dataset as a training set for feedback generation: one row per annotated paragraph
with its prompt under a grid configuration (same context budget as `sefora generate`) and
the instructor's references the rewards read, split by the dataset's student splits.

Rows follow TRL's conversational prompt format (``prompt`` is a list of chat messages), so
`GRPOTrainer` applies the policy's chat template and passes every other column to the
reward functions (`unimatch_metric.rewards`, `feedback_judges.rewards`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sefora_grid.categories import ExemplarPool
from sefora_grid.context import (
    DEFAULT_BUDGET,
    DEFAULT_MAX_NEW_TOKENS,
    ApproxCounter,
    TokenCounter,
    TokenizerCounter,
    fit_prompt,
)
from sefora_grid.evaluate import load_references
from sefora_grid.extract import extract_feedback
from sefora_grid.generate import exemplar_pool, load_targets, prompt_inputs
from sefora_grid.prompts import PromptConfig

logger = logging.getLogger(__name__)

SPLITS = ("train", "validation", "test")
DEFAULT_CONFIG = "v2-guided-rubric-zs"


@dataclass(frozen=True)
class FeedbackExtractor:
    """The feedback in a raw completion under one configuration's answer format (the
    grid's `extract_feedback`), for a reward's ``extract``; picklable."""

    config: PromptConfig

    def __call__(self, raw: str) -> str:
        return extract_feedback(self.config, raw)[0]


def feedback_extractor(config: str | PromptConfig = DEFAULT_CONFIG) -> FeedbackExtractor:
    """The extractor of a configuration (an id such as ``v2-guided-rubric-zs``)."""
    return FeedbackExtractor(PromptConfig.parse(config) if isinstance(config, str) else config)


def token_counter(tokenizer: Any = None) -> TokenCounter:
    """The counter for a budget: a transformers tokenizer, a local tokenizer folder, or
    None for the characters/4 approximation."""
    if tokenizer is None:
        return ApproxCounter()
    if isinstance(tokenizer, (str, Path)):
        return TokenizerCounter.from_path(tokenizer)
    name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
    return TokenizerCounter(tokenizer, f"tokenizer:{Path(str(name)).name}")


def training_rows(
    data_dir: str | Path,
    split: str,
    config: str | PromptConfig = DEFAULT_CONFIG,
    tokenizer: Any = None,
    budget: int = DEFAULT_BUDGET,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    bare: str = "legend",
    limit: int | None = None,
    pool: ExemplarPool | None = None,
) -> list[dict[str, Any]]:
    """The rows of one split (see `training_dataset`), in paragraph-id order."""
    config = PromptConfig.parse(config) if isinstance(config, str) else config
    counter = token_counter(tokenizer)
    if config.few_shot and pool is None:
        pool = exemplar_pool(data_dir)
    targets = load_targets(data_dir, split)  # first: a clear error for a missing split
    references = load_references(data_dir, [split], bare)
    rows: list[dict[str, Any]] = []
    dropped = 0
    for target in targets:
        refs = references[target.paragraph_id]["references"]
        if not refs:  # only generic highlights or empty notes: nothing to reward against
            dropped += 1
            continue
        if limit is not None and len(rows) == limit:
            break
        inputs = prompt_inputs(config, target, pool)
        fitted = fit_prompt(config, inputs, counter, budget, max_new_tokens)
        rows.append(
            {
                "prompt": fitted.messages,
                "references": refs,
                "paragraph_id": target.paragraph_id,
                "essay_id": target.essay_id,
                "draft_id": target.draft_id,
                "configuration": config.id,
                "paragraph": target.body,
                "draft_text": "\n\n".join([*target.before, target.body, *target.after]),
                "assignment_text": target.assignment_text or "",
                "prompt_tokens": fitted.prompt_tokens,
                "context_trimmed": fitted.context.trimmed_before or fitted.context.trimmed_after,
                "over_budget": fitted.over_budget,
            }
        )
    if dropped:
        logger.info(
            "%s/%s: %d annotated paragraph(s) without reference text left out (bare=%r)",
            data_dir, split, dropped, bare,
        )  # fmt: skip
    return rows


def training_dataset(
    data_dir: str | Path = "sefora",
    split: str | Sequence[str] = "train",
    config: str | PromptConfig = DEFAULT_CONFIG,
    tokenizer: Any = None,
    budget: int = DEFAULT_BUDGET,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    bare: str = "legend",
    limit: int | None = None,
) -> Any:
    """A `datasets.Dataset` (one split named) or `DatasetDict` (several) for training.

    One row per paragraph with at least one annotation that gives a reference text (as
    `sefora evaluate` scores them; ``bare`` as there): ``prompt`` (chat messages of
    configuration ``config``, fitted to ``budget - max_new_tokens`` tokens counted by
    ``tokenizer`` — the policy's — or approximately), ``references``, ids, ``paragraph``,
    ``draft_text``, ``assignment_text`` (the rubric judge's material) and the prompt's token
    count. ``split`` names one of the dataset's splits (disjoint by student) or several
    (e.g. `SPLITS`) for a `DatasetDict`; few-shot exemplars come from
    ``train``. Set the trainer's completion length to ``max_new_tokens``.
    """
    from datasets import Dataset, DatasetDict

    config = PromptConfig.parse(config) if isinstance(config, str) else config
    pool = exemplar_pool(data_dir) if config.few_shot else None
    names = [split] if isinstance(split, str) else list(split)

    def build(name: str) -> Any:
        return Dataset.from_list(
            training_rows(
                data_dir, name, config, tokenizer, budget, max_new_tokens, bare, limit, pool
            )
        )

    if isinstance(split, str):
        return build(split)
    return DatasetDict({name: build(name) for name in names})
