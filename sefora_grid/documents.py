"""Document level: generating an overall assessment of a whole draft, resumably.

The task of the instructor's overall comment (the ``overall_comment`` of the ``drafts``
config): for every draft of a split that has one, the model reads the whole draft and
writes the comment an instructor leaves at its end. The grid's dimensions apply: guided
(the feedback categories, as aspects an overall comment can address), rubric (the
assignment prompt and rubric, and the names of the rubric items the draft is graded on;
never the grades) and few-shot (instructors' overall comments on drafts of other essays).
Ids spell the toggles: ``doc-guided-rubric-zs``. The prompt is context-budgeted like the
paragraph grid's: when the draft does not fit, its paragraphs are kept from the start and
the last one kept is cut word by word (a ``[...]`` marks the cut). Rows go to
``<out>/<config>__<model>.jsonl``, one per draft (``draft_id``), with ``level`` set to
``"document"``.
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sefora_grid.backends import Backend, Generation
from sefora_grid.categories import CATEGORIES
from sefora_grid.context import DEFAULT_BUDGET, Context, FittedPrompt, fit_messages
from sefora_grid.errors import ConfigError, GridError
from sefora_grid.extract import reply_text
from sefora_grid.generate import generate_rows, load_split, run_path, run_settings
from sefora_grid.prompts import SYSTEM_PROMPT, TRIMMED, prompt_hash

PREFIX = "doc"
#: Generated tokens per draft: instructors' overall comments run to about 120 words.
DEFAULT_MAX_NEW_TOKENS = 400
#: Overall comments of this many words can be few-shot exemplars, and this many are shown.
EXEMPLAR_WORDS = (30, 160)
N_EXEMPLARS = 2


@dataclass(frozen=True)
class DocumentConfig:
    """One document-level configuration: guided, rubric and few-shot toggles."""

    guided: bool = True
    rubric: bool = True
    few_shot: bool = False

    @property
    def id(self) -> str:
        """The stable id, e.g. ``doc-guided-rubric-zs``."""
        return "-".join(
            [
                PREFIX,
                "guided" if self.guided else "unguided",
                "rubric" if self.rubric else "norubric",
                "fs" if self.few_shot else "zs",
            ]
        )

    @classmethod
    def parse(cls, config_id: str) -> DocumentConfig:
        """The configuration an id names; `ConfigError` for anything else."""
        by_id = {c.id: c for c in document_configs()}
        if config_id not in by_id:
            raise ConfigError(
                f"unknown document configuration {config_id!r}: expected "
                "doc-{guided|unguided}-{rubric|norubric}-{zs|fs}, e.g. doc-guided-rubric-zs"
            )
        return by_id[config_id]


def document_configs() -> list[DocumentConfig]:
    """Every document-level configuration (8)."""
    return [
        DocumentConfig(guided, rubric, few_shot)
        for guided, rubric, few_shot in itertools.product((True, False), repeat=3)
    ]


def is_document_config(config_id: str) -> bool:
    """Whether a configuration id is a document-level one."""
    return config_id.startswith(f"{PREFIX}-")


@dataclass(frozen=True)
class DocumentTarget:
    """A draft to assess, with what its prompt needs."""

    draft_id: str
    essay_id: str
    paragraphs: tuple[str, ...]
    assignment_text: str | None
    rubric_items: tuple[str, ...]


def load_document_targets(
    data_dir: str | Path, split: str, limit: int | None = None
) -> list[DocumentTarget]:
    """The drafts of ``split`` that carry an overall comment, in draft-id order."""
    rows = load_split(Path(data_dir), "drafts", split).select_columns(
        ["draft_id", "essay_id", "paragraphs", "assignment_text", "grades", "overall_comment"]
    )
    chosen = sorted((r for r in rows if (r["overall_comment"] or "").strip()), key=_draft_id)
    return [
        DocumentTarget(
            r["draft_id"],
            r["essay_id"],
            tuple(p["body"] for p in r["paragraphs"]),
            r["assignment_text"],
            tuple(dict.fromkeys(g["item"] for g in r["grades"])),
        )
        for r in (chosen[:limit] if limit is not None else chosen)
    ]


def _draft_id(row: Mapping[str, Any]) -> str:
    return str(row["draft_id"])


class OverallCommentPool:
    """Instructors' overall comments of the ``train`` drafts usable as few-shot exemplars,
    in a fixed order (a hash of the draft id), `EXEMPLAR_WORDS` long."""

    def __init__(self, drafts: Iterable[Mapping[str, Any]]) -> None:
        low, high = EXEMPLAR_WORDS
        found = []
        for row in drafts:
            comment = " ".join((row["overall_comment"] or "").split())
            if low <= len(comment.split()) <= high:
                rank = hashlib.sha256(row["draft_id"].encode()).hexdigest()
                found.append((rank, row["draft_id"], row["essay_id"], comment))
        self.candidates = [(d, e, c) for _, d, e, c in sorted(found)]

    def pick(self, essay_id: str) -> list[tuple[str, str]]:
        """`N_EXEMPLARS` (draft id, comment) pairs from essays other than ``essay_id``."""
        chosen = [(d, c) for d, e, c in self.candidates if e != essay_id][:N_EXEMPLARS]
        if len(chosen) < N_EXEMPLARS:
            raise GridError(
                f"few-shot: fewer than {N_EXEMPLARS} overall comments of {EXEMPLAR_WORDS} words "
                f"in the train split outside essay {essay_id}"
            )
        return chosen


def overall_comment_pool(data_dir: str | Path) -> OverallCommentPool:
    """Few-shot candidates from the ``train`` split's drafts."""
    rows = load_split(Path(data_dir), "drafts", "train").select_columns(
        ["draft_id", "essay_id", "overall_comment"]
    )
    return OverallCommentPool(rows)


def build_document_messages(
    config: DocumentConfig,
    target: DocumentTarget,
    context: Context,
    exemplars: Sequence[tuple[str, str]] = (),
) -> list[dict[str, str]]:
    """The chat messages of one configuration for one draft, with the paragraphs kept
    (``context.after``; ``trimmed_after`` adds the cut marker)."""
    if config.few_shot and not exemplars:
        raise GridError(f"configuration {config.id} is few-shot but no exemplars were given")
    sections = [
        "Below is a student's complete essay draft. Write the overall comment you would leave "
        "at the end of this draft: your assessment of the essay as a whole, to guide the "
        "student's next revision."
    ]
    if config.rubric:
        assignment = (target.assignment_text or "").strip()
        rubric = (
            "\nThe draft is graded on these rubric items: " + "; ".join(target.rubric_items) + "."
            if target.rubric_items
            else ""
        )
        sections.append(
            "## Assignment prompt and rubric\n"
            + (assignment or "(No assignment prompt or rubric is available for this draft.)")
            + rubric
        )
    if config.guided:
        lines = [f"- {name}: {description}" for name, description in CATEGORIES.items()]
        sections.append(
            "## Kinds of feedback\nInstructors' comments do these things; an overall comment "
            "usually weighs a few of them for the essay as a whole:\n" + "\n".join(lines)
        )
    if config.few_shot:
        shown = "\n\n".join(f"Example {n}:\n{c}" for n, (_, c) in enumerate(exemplars, 1))
        sections.append(
            "## Examples of instructors' overall comments\nComments instructors wrote at the "
            "end of other students' drafts, to show the style expected:\n\n" + shown
        )
    blocks = [*context.after, *([TRIMMED] if context.trimmed_after and context.after else [])]
    sections.append("## The draft\n" + "\n\n".join(blocks))
    sections.append(
        "## Your answer\nWrite only the overall comment, addressed to the student, in one or "
        "two short paragraphs."
    )
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n\n".join(sections)},
    ]


@dataclass
class DocumentItem:
    """A draft with its fitted prompt, ready to send."""

    target: DocumentTarget
    prompt: FittedPrompt
    exemplars: tuple[str, ...]


def prepare_document(
    config: DocumentConfig,
    target: DocumentTarget,
    pool: OverallCommentPool | None,
    backend: Backend,
    budget: int,
    max_new_tokens: int,
) -> DocumentItem:
    """The prompt of one draft within the budget."""
    exemplars = pool.pick(target.essay_id) if config.few_shot and pool else []

    def build(context: Context) -> list[dict[str, str]]:
        return build_document_messages(config, target, context, exemplars)

    fitted = fit_messages(build, (), target.paragraphs, backend.counter, budget, max_new_tokens)
    if fitted.over_budget:
        logging.getLogger(__name__).warning(
            "%s: prompt of %d tokens exceeds the budget even without the draft",
            target.draft_id,
            fitted.prompt_tokens,
        )
    return DocumentItem(target, fitted, tuple(d for d, _ in exemplars))


def document_row(
    config: DocumentConfig,
    item: DocumentItem,
    generation: Generation,
    backend: Backend,
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """The run row of one generated overall assessment."""
    feedback = reply_text(generation.text)
    context = item.prompt.context
    return {
        "draft_id": item.target.draft_id,
        "essay_id": item.target.essay_id,
        "level": "document",
        "configuration": config.id,
        "model": backend.model,
        "prompt_hash": prompt_hash(item.prompt.messages),
        "prompt_tokens": item.prompt.prompt_tokens,
        "usage_prompt_tokens": generation.prompt_tokens,
        "completion_tokens": generation.completion_tokens,
        "draft_paragraphs": len(item.target.paragraphs),
        "context_paragraphs": len(context.after),
        "context_trimmed": context.trimmed_after,
        "over_budget": item.prompt.over_budget,
        "rubric_available": bool((item.target.assignment_text or "").strip()),
        "exemplars": list(item.exemplars),
        "raw_output": generation.text,
        "feedback": feedback,
        "format_ok": bool(feedback),
        "seconds": round(generation.seconds, 4),
        "finished_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        **settings,
    }


def generate_document_run(
    config: DocumentConfig,
    targets: Sequence[DocumentTarget],
    backend: Backend,
    out_dir: str | Path,
    split: str,
    pool: OverallCommentPool | None = None,
    budget: int = DEFAULT_BUDGET,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Generate the overall assessments of ``targets`` missing from the run file (resumable,
    as `sefora_grid.generate.generate_run`)."""
    if config.few_shot and pool is None:
        raise GridError(f"configuration {config.id} is few-shot: an exemplar pool is needed")
    settings = run_settings(split, budget, max_new_tokens, backend)
    return generate_rows(
        config.id,
        run_path(out_dir, config.id, backend.model),
        [(t.draft_id, t) for t in targets],
        "draft_id",
        lambda t: prepare_document(config, t, pool, backend, budget, max_new_tokens),
        lambda item, generation: document_row(config, item, generation, backend, settings),
        backend,
        settings,
        progress,
    )
