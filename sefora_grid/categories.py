"""The six feedback categories of the guided setting and the pool of few-shot exemplars
drawn from the train split (sorted by the dataset's keyword rule, `sefora_dataset.categories`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sefora_dataset.categories import categorize, matching_categories
from sefora_grid.errors import GridError

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

        Raises `GridError` when a category has no candidate outside that essay.
        """
        chosen = []
        for category, candidates in self.candidates.items():
            exemplar = next((e for e in candidates if e.essay_id != essay_id), None)
            if exemplar is None:
                raise GridError(
                    f"few-shot: no {category!r} instructor comment in the train split outside "
                    f"essay {essay_id} (see CATEGORY_KEYWORDS in sefora_dataset/categories.py)"
                )
            chosen.append(exemplar)
        return chosen
