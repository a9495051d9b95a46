"""Prompt configurations of the feedback-generation study (paper §5, §14) as data.

A configuration is five toggles: template V1 (any number of points) or V2 (the single most
important point in a fixed format), guided (list the six feedback categories), rubric (insert
the assignment prompt and rubric), few-shot (five instructor comments, one per category) and
chain-of-thought (reasoning, then a marked final answer). Its id spells the toggles, e.g.
``v2-guided-rubric-zs`` or ``v1-unguided-norubric-zs-cot``. Every prompt text is this
project's own wording. ``sefora configs`` lists the ids.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sefora_dataset.categories import categorize, matching_categories
from sefora_dataset.errors import SeforaError

#: The six feedback categories of the guided setting, each with the description shown to
#: the model.
CATEGORIES: dict[str, str] = {
    "Task Constraints": "whether the paragraph meets the assignment's requirements "
    "(prompt, genre, length, sources, citation style, formatting)",
    "Concepts": "the ideas themselves: the central idea, claims, reasoning, accuracy, "
    "and how the paragraph serves the essay's purpose",
    "Elaboration": "places to develop further: more detail, an example, a scene, evidence "
    "or an explanation the reader needs",
    "Clarification": "wording, sentences or ideas a reader finds unclear, ambiguous or "
    "confusing, often asked as a question",
    "Mistakes": "errors of grammar, spelling, punctuation, tense, word choice or citation format",
    "Praise": "what works well and should be kept: a strong line, detail, image or move",
}


#: Comments outside this word range are not picked as exemplars (too terse to teach the
#: task, or long enough to crowd the prompt).
EXEMPLAR_WORDS = (4, 45)
#: Nor are replies in a conversation with the student ("Yes, ...", "Glad to hear it!"), which
#: are not feedback on the text.
_REPLY = re.compile(
    r"^(yes|yeah|glad|agreed?|thanks?|thank you|ha|lol|exactly|same|ok(ay)?)\b", re.I
)
#: The categories of the five few-shot exemplars (the paper uses five, one per category, for
#: six categories). Task Constraints is left out: its comments enforce one course's own
#: requirements (a citation style, a word count) and do not transfer to another assignment.
FEW_SHOT_CATEGORIES = ("Concepts", "Elaboration", "Clarification", "Mistakes", "Praise")

TEMPLATES = ("v1", "v2")
SHOTS = ("zs", "fs")
#: The marker that opens the final answer of a chain-of-thought reply.
FINAL_MARKER = "Final answer:"
FEEDBACK_LABEL = "Feedback:"


class ConfigError(SeforaError):
    """An unknown configuration id (the message lists the valid form)."""


@dataclass(frozen=True)
class PromptConfig:
    """One prompt configuration: the five toggles of the study."""

    template: str = "v2"
    guided: bool = True
    rubric: bool = True
    few_shot: bool = False
    cot: bool = False

    def __post_init__(self) -> None:
        if self.template not in TEMPLATES:
            raise ConfigError(f"template must be one of {', '.join(TEMPLATES)}: {self.template!r}")

    @property
    def id(self) -> str:
        """The stable id, e.g. ``v2-guided-rubric-zs`` (``-cot`` appended for CoT)."""
        parts = [
            self.template,
            "guided" if self.guided else "unguided",
            "rubric" if self.rubric else "norubric",
            "fs" if self.few_shot else "zs",
        ]
        return "-".join(parts + (["cot"] if self.cot else []))

    @property
    def in_paper_grid(self) -> bool:
        """Whether the paper ran this combination (CoT only with V1, zero-shot)."""
        return not self.cot or (self.template == "v1" and not self.few_shot)

    @classmethod
    def parse(cls, config_id: str) -> PromptConfig:
        """The configuration an id names; `ConfigError` for anything else."""
        by_id = {c.id: c for c in all_configs()}
        if config_id not in by_id:
            raise ConfigError(
                f"unknown configuration {config_id!r}: expected "
                "{v1|v2}-{guided|unguided}-{rubric|norubric}-{zs|fs}[-cot], e.g. "
                "v2-guided-rubric-zs (`sefora configs` lists them all)"
            )
        return by_id[config_id]


def all_configs(paper_only: bool = False) -> list[PromptConfig]:
    """Every combination of the toggles (32), or only the paper's per-model grid (20)."""
    configs = [
        PromptConfig(template, guided, rubric, few_shot, cot)
        for template, guided, rubric, few_shot, cot in itertools.product(
            TEMPLATES, (True, False), (True, False), (False, True), (False, True)
        )
    ]
    return [c for c in configs if c.in_paper_grid or not paper_only]


# --- few-shot exemplars ------------------------------------------------------------------


@dataclass(frozen=True)
class Exemplar:
    """An instructor comment used as a few-shot example, with where it came from."""

    category: str
    comment: str
    span: str | None
    annotation_id: str
    essay_id: str


class ExemplarPool:
    """Candidate exemplars per category from the ``train`` paragraphs, in a fixed order.

    Comments whose words match a single category come before mixed ones; within each group
    the order is a hash of the annotation's id, so the choice is deterministic and does not
    depend on the order rows are read in. `pick` takes the first candidate per category
    whose essay is not the target's.
    """

    def __init__(self, paragraphs: Iterable[Mapping[str, Any]]) -> None:
        low, high = EXEMPLAR_WORDS
        found: dict[str, list[tuple[tuple[bool, str], Exemplar]]]
        found = {c: [] for c in FEW_SHOT_CATEGORIES}
        for row in paragraphs:
            for index, ann in enumerate(row["annotations"]):
                comment = " ".join(ann["comment"].split())
                category = categorize(comment)
                if category not in found or not low <= len(comment.split()) <= high:
                    continue
                if _REPLY.match(comment):
                    continue
                annotation_id = f"{row['paragraph_id']}_A{index:02d}"
                span = " ".join((ann.get("text") or "").split()) or None
                # Clear-cut comments (matching one category's keywords only) come first.
                mixed = len(matching_categories(comment)) > 1
                rank = (mixed, hashlib.sha256(annotation_id.encode()).hexdigest())
                found[category].append(
                    (rank, Exemplar(category, comment, span, annotation_id, row["essay_id"]))
                )
        self.candidates = {c: [e for _, e in sorted(items)] for c, items in found.items()}

    def pick(self, essay_id: str) -> list[Exemplar]:
        """One exemplar per few-shot category, none from ``essay_id``.

        Raises `SeforaError` when a category has no candidate outside that essay.
        """
        chosen = []
        for category, candidates in self.candidates.items():
            exemplar = next((e for e in candidates if e.essay_id != essay_id), None)
            if exemplar is None:
                raise SeforaError(
                    f"few-shot: no {category!r} instructor comment in the train split outside "
                    f"essay {essay_id} (see CATEGORY_KEYWORDS in sefora_dataset/categories.py)"
                )
            chosen.append(exemplar)
        return chosen


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

    Raises `SeforaError` when the configuration asks for exemplars and none are given.
    """
    if config.few_shot and not inputs.exemplars:
        raise SeforaError(f"configuration {config.id} is few-shot but no exemplars were given")
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
    answer = _ANSWER_FORMAT[config.template].format(
        intro="Give your answer in exactly this format:"
        if config.cot
        else "Reply in exactly this format, with no other text:",
        category_line=f"Category: <one of: {', '.join(CATEGORIES)}>\n" if config.guided else "",
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


# --- reading the reply -------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL | re.IGNORECASE)
_FINAL = re.compile(r"^[\s#*_>-]*final answer[\s*_]*:[\s*_]*", re.IGNORECASE | re.MULTILINE)
_LABEL = re.compile(
    r"^[\s#*_>-]*(focus|category|feedback|reasoning)[\s*_]*:[\s*_]*", re.IGNORECASE | re.MULTILINE
)


def extract_feedback(config: PromptConfig, raw: str) -> tuple[str, bool]:
    """The feedback in a raw reply, and whether the reply followed the asked format.

    Reasoning blocks (``<think>...</think>``) are dropped first. CoT: the text after the
    last "Final answer:" line; without that line there is no feedback (""), since the
    reasoning is not feedback. V2: the text of the "Feedback:" field; without that field
    the whole reply is taken as the feedback. V1: the whole reply. Markdown emphasis
    around the labels is tolerated.
    """
    text = _THINK.sub("", raw).strip()
    ok = True
    if config.cot:
        finals = list(_FINAL.finditer(text))
        if not finals:
            return "", False
        text = text[finals[-1].end() :].strip()
    if config.template == "v2":
        labels = list(_LABEL.finditer(text))
        feedback = [i for i, m in enumerate(labels) if m.group(1).lower() == "feedback"]
        if feedback:
            i = feedback[-1]
            end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
            text = text[labels[i].end() : end].strip()
        else:
            ok = False
    return text, ok


# --- the `sefora configs` command --------------------------------------------------------


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``configs`` subcommand."""
    parser = subparsers.add_parser(
        "configs",
        help="list the prompt configurations of the feedback-generation grid",
        description="List every prompt configuration id with its toggles. The paper's "
        "per-model grid is the 20 marked 'paper' (chain-of-thought only with V1 zero-shot).",
    )
    parser.add_argument("--paper", action="store_true", help="only the paper's 20 per model")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run_configs)


def run_configs(args: argparse.Namespace) -> int:
    """Print the configurations as a table (or JSON)."""
    configs = all_configs(paper_only=args.paper)
    rows = [
        {
            "id": c.id,
            "template": c.template,
            "guided": c.guided,
            "rubric": c.rubric,
            "few_shot": c.few_shot,
            "cot": c.cot,
            "paper": c.in_paper_grid,
        }
        for c in configs
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r["id"]) for r in rows)
    print(f"{'id':<{width}}  template  guided  rubric  few-shot  cot  paper")
    for r in rows:
        flags = [r["guided"], r["rubric"], r["few_shot"], r["cot"], r["paper"]]
        marks = ["yes" if f else "-" for f in flags]
        print(
            f"{r['id']:<{width}}  {r['template']:<8}  {marks[0]:<6}  {marks[1]:<6}  "
            f"{marks[2]:<8}  {marks[3]:<3}  {marks[4]}"
        )
    return 0
