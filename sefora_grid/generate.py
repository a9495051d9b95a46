"""Generating paragraph feedback from an LLM under prompt configurations, resumably.

For every paragraph of a split with at least one instructor annotation (as in the paper),
each configuration's prompt is built within the token budget and sent to the backend; the
rows go to ``<out>/<config>__<model>.jsonl``. A re-run skips the paragraphs already written.
"""

from __future__ import annotations

import concurrent.futures as futures
import datetime
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sefora_common.progress import progress_bar
from sefora_grid.backends import Backend, Generation, model_slug
from sefora_grid.categories import ExemplarPool
from sefora_grid.context import (
    DEFAULT_BUDGET,
    DEFAULT_MAX_NEW_TOKENS,
    FittedPrompt,
    fit_prompt,
)
from sefora_grid.errors import GridError
from sefora_grid.extract import extract_anchored, extract_feedback
from sefora_grid.prompts import PromptConfig, PromptInputs, all_configs, prompt_hash
from sefora_grid.runs import RunWriter, read_rows
from unimatch_metric.quotes import AnchoredFeedback

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Target:
    """A paragraph to generate feedback for, with what its prompt needs from its draft."""

    paragraph_id: str
    essay_id: str
    draft_id: str
    body: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    assignment_text: str | None


def load_split(data_dir: Path, config: str, split: str) -> Any:
    """One split of one config of the built dataset in ``data_dir``; `GridError` if absent."""
    from datasets import load_dataset

    if not (data_dir / "README.md").is_file():
        raise GridError(
            f"{data_dir}: no built dataset here; build one with `sefora build --out {data_dir}`"
        )
    try:
        return load_dataset(str(data_dir), config, split=split)
    except ValueError as err:
        raise GridError(f"{data_dir}: cannot load {config}/{split}: {err}") from err


def load_targets(data_dir: str | Path, split: str, limit: int | None = None) -> list[Target]:
    """The paragraphs of ``split`` with at least one annotation, in paragraph-id order."""
    data_dir = Path(data_dir)
    drafts = {
        row["draft_id"]: row
        for row in load_split(data_dir, "drafts", split).select_columns(
            ["draft_id", "paragraphs", "assignment_text"]
        )
    }
    paragraphs = load_split(data_dir, "paragraphs", split).select_columns(
        ["paragraph_id", "essay_id", "draft_id", "paragraph_index", "body", "num_annotations"]
    )
    annotated = (r for r in paragraphs if r["num_annotations"] > 0)
    rows = sorted(annotated, key=lambda r: r["paragraph_id"])
    targets = []
    for row in rows[:limit] if limit is not None else rows:
        draft = drafts[row["draft_id"]]
        bodies = [p["body"] for p in draft["paragraphs"]]
        index = row["paragraph_index"]
        targets.append(
            Target(
                row["paragraph_id"],
                row["essay_id"],
                row["draft_id"],
                row["body"],
                tuple(bodies[:index]),
                tuple(bodies[index + 1 :]),
                draft["assignment_text"],
            )
        )
    return targets


def exemplar_pool(data_dir: str | Path) -> ExemplarPool:
    """Few-shot candidates from the ``train`` split of the dataset."""
    rows = load_split(Path(data_dir), "paragraphs", "train").select_columns(
        ["paragraph_id", "essay_id", "annotations"]
    )
    return ExemplarPool(rows)


def run_path(out_dir: str | Path, config_id: str, model: str) -> Path:
    """Where the rows of one configuration and model go."""
    return Path(out_dir) / f"{config_id}__{model_slug(model)}.jsonl"


@dataclass
class Item:
    """A target with its fitted prompt, ready to send."""

    target: Target
    prompt: FittedPrompt
    exemplars: tuple[str, ...]


def prompt_inputs(config: PromptConfig, target: Target, pool: ExemplarPool | None) -> PromptInputs:
    """What ``config``'s prompt is built from for ``target``: the paragraph, its draft
    context, the assignment and, for few-shot configurations, exemplars from ``pool``."""
    exemplars = tuple(pool.pick(target.essay_id)) if config.few_shot and pool else ()
    return PromptInputs(
        target=target.body,
        before=target.before,
        after=target.after,
        assignment_text=target.assignment_text,
        exemplars=exemplars,
    )


def _prepare(
    config: PromptConfig,
    target: Target,
    pool: ExemplarPool | None,
    backend: Backend,
    budget: int,
    max_new_tokens: int,
) -> Item:
    inputs = prompt_inputs(config, target, pool)
    fitted = fit_prompt(config, inputs, backend.counter, budget, max_new_tokens)
    if fitted.over_budget:
        logger.warning(
            "%s: prompt of %d tokens exceeds the budget even without context",
            target.paragraph_id,
            fitted.prompt_tokens,
        )
    return Item(target, fitted, tuple(e.annotation_id for e in inputs.exemplars))


def _row(
    config: PromptConfig,
    item: Item,
    generation: Generation,
    backend: Backend,
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    anchored: dict[str, Any] = {}
    if config.anchored:
        located, problems = extract_anchored(config, generation.text, item.target.body)
        feedback = "\n".join(a.item.comment for a in located)
        format_ok = not problems
        anchored = {"items": [anchored_item(a) for a in located], "format_problems": problems}
    else:
        feedback, format_ok = extract_feedback(config, generation.text)
    context = item.prompt.context
    return {
        "paragraph_id": item.target.paragraph_id,
        "essay_id": item.target.essay_id,
        "draft_id": item.target.draft_id,
        "configuration": config.id,
        "model": backend.model,
        "prompt_hash": prompt_hash(item.prompt.messages),
        "prompt_tokens": item.prompt.prompt_tokens,
        "usage_prompt_tokens": generation.prompt_tokens,
        "completion_tokens": generation.completion_tokens,
        "context_paragraphs_before": len(context.before),
        "context_paragraphs_after": len(context.after),
        "context_trimmed": context.trimmed_before or context.trimmed_after,
        "over_budget": item.prompt.over_budget,
        "rubric_available": bool((item.target.assignment_text or "").strip()),
        "exemplars": list(item.exemplars),
        "raw_output": generation.text,
        "feedback": feedback,
        "format_ok": format_ok,
        **anchored,
        "seconds": round(generation.seconds, 4),
        "finished_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        **settings,
    }


def anchored_item(feedback: AnchoredFeedback) -> dict[str, Any]:
    """A located anchored item as stored in a run row (offsets -1 when not located)."""
    location = feedback.location
    return {
        "quote": feedback.item.quote,
        "comment": feedback.item.comment,
        "category": feedback.item.category,
        "start": location.start if location else -1,
        "end": location.end if location else -1,
        "match": location.method if location else None,
        "similarity": location.similarity if location else None,
    }


def _check_resumable(path: Path, rows: Sequence[Mapping[str, Any]], expected: Mapping) -> None:
    for number, row in enumerate(rows, 1):
        for key, value in expected.items():
            if row.get(key) != value:
                raise GridError(
                    f"{path}: row {number} has {key}={row.get(key)!r} but this run has "
                    f"{value!r}; resume with the same settings or write to another --out"
                )


def _batches(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def generate_run(
    config: PromptConfig,
    targets: Sequence[Target],
    backend: Backend,
    out_dir: str | Path,
    split: str,
    pool: ExemplarPool | None = None,
    budget: int = DEFAULT_BUDGET,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Generate the rows of ``targets`` missing from this configuration's run file.

    Rows are written as replies arrive (up to ``backend.workers`` batches in flight). The
    first failed request stops the run: replies already in flight are still written, then
    the error is raised; a re-run continues from there.
    """
    if config.few_shot and pool is None:
        raise GridError(f"configuration {config.id} is few-shot: an exemplar pool is needed")
    settings = run_settings(split, budget, max_new_tokens, backend)
    return generate_rows(
        config.id,
        run_path(out_dir, config.id, backend.model),
        [(t.paragraph_id, t) for t in targets],
        "paragraph_id",
        lambda t: _prepare(config, t, pool, backend, budget, max_new_tokens),
        lambda item, generation: _row(config, item, generation, backend, settings),
        backend,
        settings,
        progress,
    )


def run_settings(split: str, budget: int, max_new_tokens: int, backend: Backend) -> dict[str, Any]:
    """The row fields that must match between a run file and the run resuming it."""
    return {
        "split": split,
        "budget": budget,
        "max_new_tokens": max_new_tokens,
        "token_counter": backend.counter.name,
        "backend": backend.name,
    }


def generate_rows(
    config_id: str,
    path: Path,
    targets: Sequence[tuple[str, Any]],
    key: str,
    prepare: Callable[[Any], Any],
    make_row: Callable[[Any, Generation], dict[str, Any]],
    backend: Backend,
    settings: Mapping[str, Any],
    progress: bool | None = None,
) -> dict[str, Any]:
    """The resumable generation loop shared by the paragraph and document levels.

    ``targets`` are (id, target) pairs; the rows already in ``path`` (by their ``key``
    field) are skipped; ``prepare(target)`` gives an object with the ``prompt`` to send and
    ``make_row(item, generation)`` the row to append.
    """
    existing = read_rows(path, repair=True)
    expected = {"configuration": config_id, "model": backend.model, **settings}
    _check_resumable(path, existing, expected)
    done = {row[key] for row in existing}
    todo = [t for i, t in targets if i not in done]
    items = (prepare(t) for t in todo)
    failure: BaseException | None = None
    written = 0
    bar = progress_bar(
        total=len(todo),
        desc=f"{config_id} {model_slug(backend.model)}",
        unit="target",
        show=progress,
    )
    pool_ = futures.ThreadPoolExecutor(backend.workers)
    with RunWriter(path) as writer:
        pending: dict[futures.Future, list[Any]] = {}

        def collect(wait_for: str) -> None:
            nonlocal failure, written
            finished, _ = futures.wait(pending, return_when=wait_for)
            for future in finished:
                batch = pending.pop(future)
                try:
                    generations = future.result()
                except Exception as err:  # stop submitting; the rows in flight are kept
                    failure = failure or err
                    continue
                for item, generation in zip(batch, generations, strict=True):
                    writer.append(make_row(item, generation))
                    written += 1
                bar.update(len(batch))

        try:
            for batch in _batches(items, backend.batch_size):
                if failure is not None:
                    break
                prompts = [item.prompt.messages for item in batch]
                pending[pool_.submit(backend.generate, prompts)] = batch
                if len(pending) >= backend.workers:
                    collect(futures.FIRST_COMPLETED)
            while pending:
                collect(futures.ALL_COMPLETED)
        except BaseException:  # Ctrl-C, SIGTERM: stop now; the requests in flight are lost
            pool_.shutdown(wait=False, cancel_futures=True)
            raise
    pool_.shutdown()
    bar.close()
    if failure is not None and not isinstance(failure, GridError):
        raise failure
    if failure is not None:
        raise GridError(
            f"{config_id}: generation stopped after {written} new row(s) "
            f"({len(done) + written} of {len(targets)} in {path}): {failure}"
        ) from failure
    return {
        "configuration": config_id,
        "model": backend.model,
        "path": str(path),
        "skipped": len(targets) - len(todo),
        "written": written,
        "total": len(done) + written,
    }


def parse_configs(specs: Sequence[str]) -> list[PromptConfig]:
    """Configurations from ``--config`` values (ids, or ``paper`` for the paper's 20)."""
    configs: list[PromptConfig] = []
    for spec in specs:
        named = all_configs(paper_only=True) if spec == "paper" else [PromptConfig.parse(spec)]
        for config in named:
            if config not in configs:
                configs.append(config)
    return configs
