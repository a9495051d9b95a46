"""Prompt configurations of the feedback-generation study (paper §5, §14) as data.

A configuration is six toggles: template V1 (any number of points) or V2 (the single most
important point in a fixed format), guided (list the six feedback categories), rubric (insert
the assignment prompt and rubric), few-shot (five instructor comments, one per category),
chain-of-thought (reasoning, then a marked final answer) and anchored (each comment quotes
the words it is about, for the span-identification study; not in the paper). Its id spells
the toggles, e.g. ``v2-guided-rubric-zs``, ``v1-unguided-norubric-zs-cot`` or
``v2-guided-rubric-zs-anchored``. Every prompt text is this
project's own wording. ``sefora configs`` lists the ids; `sefora_grid.categories` holds
the categories and few-shot exemplars, `sefora_grid.extract` reads the replies.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sefora_grid.categories import CATEGORIES, Exemplar
from sefora_grid.errors import ConfigError, GridError
from unimatch_metric.quotes import CATEGORY_LABEL, COMMENT_LABEL, QUOTE_LABEL

TEMPLATES = ("v1", "v2")
#: The marker that opens the final answer of a chain-of-thought reply.
FINAL_MARKER = "Final answer:"
FEEDBACK_LABEL = "Feedback:"


@dataclass(frozen=True)
class PromptConfig:
    """One prompt configuration: the toggles of the study."""

    template: str = "v2"
    guided: bool = True
    rubric: bool = True
    few_shot: bool = False
    cot: bool = False
    anchored: bool = False

    def __post_init__(self) -> None:
        if self.template not in TEMPLATES:
            raise ConfigError(f"template must be one of {', '.join(TEMPLATES)}: {self.template!r}")

    @property
    def id(self) -> str:
        """The stable id, e.g. ``v2-guided-rubric-zs`` (``-cot``, ``-anchored`` appended)."""
        parts = [
            self.template,
            "guided" if self.guided else "unguided",
            "rubric" if self.rubric else "norubric",
            "fs" if self.few_shot else "zs",
        ]
        parts += ["cot"] if self.cot else []
        return "-".join(parts + (["anchored"] if self.anchored else []))

    @property
    def in_paper_grid(self) -> bool:
        """Whether the paper ran this combination (CoT only with V1, zero-shot; not anchored)."""
        cot_ok = not self.cot or (self.template == "v1" and not self.few_shot)
        return cot_ok and not self.anchored

    @classmethod
    def parse(cls, config_id: str) -> PromptConfig:
        """The configuration an id names; `ConfigError` for anything else."""
        by_id = {c.id: c for c in all_configs()}
        if config_id not in by_id:
            raise ConfigError(
                f"unknown configuration {config_id!r}: expected "
                "{v1|v2}-{guided|unguided}-{rubric|norubric}-{zs|fs}[-cot][-anchored], e.g. "
                "v2-guided-rubric-zs (`sefora configs` lists them all)"
            )
        return by_id[config_id]


def all_configs(paper_only: bool = False) -> list[PromptConfig]:
    """Every combination of the toggles (64), or only the paper's per-model grid (20)."""
    configs = [
        PromptConfig(template, guided, rubric, few_shot, cot, anchored)
        for anchored, template, guided, rubric, few_shot, cot in itertools.product(
            (False, True), TEMPLATES, (True, False), (True, False), (False, True), (False, True)
        )
    ]
    return [c for c in configs if c.in_paper_grid or not paper_only]


# --- prompt text -------------------------------------------------------------------------

SYSTEM_PROMPT = (
    "You are an experienced writing instructor reading a student's draft. You write the "
    "kind of comments a teacher leaves in the margin next to a paragraph: short, specific, "
    "addressed to the student, and about this paragraph's writing."
)

_TASK = {
    "v1": "Read the draft and write your feedback on the target paragraph.",
    "v2": "Read the draft and decide what single point about the target paragraph matters "
    "most for the student's next revision, then write feedback on that one point only.",
}

_ANSWER_FORMAT = {
    "v1": "Give as many separate comments as you find useful, each on its own line "
    'starting with "- ".',
    "v2": "{intro}\n"
    "Focus: <the phrase or sentence of the target paragraph your comment is about>\n"
    "{category_line}"
    f"{FEEDBACK_LABEL} <your comment to the student, one or two sentences>",
}

#: The anchored answer formats: one block per comment, its quote first (read back by
#: `unimatch_metric.quotes.parse_anchored`).
_ANCHORED_FORMAT = {
    "v1": "Give as many separate comments as you find useful. For each, write a block of "
    "lines like this, with a blank line between blocks:",
    "v2": "{intro} (one block, on your single most important point):",
}
_ANCHORED_BLOCK = (
    f'{QUOTE_LABEL} "<the exact words of the target paragraph your comment is about, copied '
    'character for character>"\n'
    "{category_line}"
    f"{COMMENT_LABEL} <your comment to the student, one or two sentences>"
)

_COT = (
    'Think before you answer. First write "Reasoning:" and work through the paragraph '
    "step by step: what it tries to do, what works, what does not, and what the student "
    f'should hear. Then write a line that starts with "{FINAL_MARKER}" and give your '
    "answer after it, in the form asked above. Only the text after that line is passed "
    "on to the student."
)

TARGET_START = "<<< TARGET PARAGRAPH >>>"
TARGET_END = "<<< END OF TARGET PARAGRAPH >>>"
TRIMMED = "[...]"


@dataclass(frozen=True)
class PromptInputs:
    """What a prompt is built from: the target, its surrounding paragraphs and extras."""

    target: str
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    trimmed_before: bool = False
    trimmed_after: bool = False
    assignment_text: str | None = None
    exemplars: tuple[Exemplar, ...] = ()


def _categories_section(template: str) -> str:
    lines = [f"- {name}: {description}" for name, description in CATEGORIES.items()]
    closing = (
        "Say which kind your comment is in the Category line."
        if template == "v2"
        else "Your comments can be of any of these kinds."
    )
    return (
        "## Kinds of feedback\nInstructors' comments on a paragraph do one of these things:\n"
        + "\n".join(lines)
        + "\n"
        + closing
    )


def _exemplars_section(exemplars: Sequence[Exemplar], guided: bool) -> str:
    items = []
    for number, e in enumerate(exemplars, 1):
        label = f" [{e.category}]" if guided else ""
        on = f'On "{e.span}": ' if e.span else ""
        items.append(f"{number}.{label} {on}{e.comment}")
    return (
        "## Examples of instructor comments\n"
        "Comments instructors wrote on other students' paragraphs, to show the style "
        "expected:\n" + "\n".join(items)
    )


def _draft_section(inputs: PromptInputs) -> str:
    # A trim marker shows where kept text was cut; a side with nothing kept shows nothing.
    blocks = [TRIMMED] if inputs.trimmed_before and inputs.before else []
    blocks += [*inputs.before, TARGET_START, inputs.target, TARGET_END, *inputs.after]
    blocks += [TRIMMED] if inputs.trimmed_after and inputs.after else []
    return "## The draft\n" + "\n\n".join(blocks)


def build_messages(config: PromptConfig, inputs: PromptInputs) -> list[dict[str, str]]:
    """The chat messages (system + user) of one configuration for one target paragraph.

    Raises `GridError` when the configuration asks for exemplars and none are given.
    """
    if config.few_shot and not inputs.exemplars:
        raise GridError(f"configuration {config.id} is few-shot but no exemplars were given")
    sections = [
        "Below is a student's essay draft with one paragraph marked as the target. "
        + _TASK[config.template]
    ]
    if config.rubric:
        assignment = (inputs.assignment_text or "").strip()
        sections.append(
            "## Assignment prompt and rubric\n"
            + (assignment or "(No assignment prompt or rubric is available for this draft.)")
        )
    if config.guided:
        sections.append(_categories_section(config.template))
    if config.few_shot:
        sections.append(_exemplars_section(inputs.exemplars, config.guided))
    sections.append(_draft_section(inputs))
    intro = (
        "Give your answer in exactly this format:"
        if config.cot
        else "Reply in exactly this format, with no other text:"
    )
    categories = ", ".join(CATEGORIES)
    if config.anchored:
        answer = (
            _ANCHORED_FORMAT[config.template].format(intro=intro)
            + "\n"
            + _ANCHORED_BLOCK.format(
                category_line=f"{CATEGORY_LABEL} <one of: {categories}>\n" if config.guided else ""
            )
        )
    else:
        answer = _ANSWER_FORMAT[config.template].format(
            intro=intro,
            category_line=f"Category: <one of: {categories}>\n" if config.guided else "",
        )
    sections.append("## Your answer\n" + answer + ("\n\n" + _COT if config.cot else ""))
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n\n".join(sections)},
    ]


def prompt_hash(messages: Sequence[Mapping[str, str]]) -> str:
    """A short stable hash of the exact messages sent (to tell prompt versions apart)."""
    blob = json.dumps(list(messages), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
