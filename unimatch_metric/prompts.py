"""Prompt texts of the LLM segmenter and the LLM similarity judge.

``PROMPT_VERSION`` is part of every cache key of the LLM backends: change it whenever a
prompt's wording changes, so that cached answers to an older prompt are not reused.
"""

from __future__ import annotations

import json

PROMPT_VERSION = "unimatch-prompts-1"

# The delimiter the segmenter inserts between feedback units.
UNIT_DELIMITER = "<SEP>"

SEGMENT_SYSTEM = f"""\
You split written feedback on a student's paragraph into feedback units.

A feedback unit is a self-contained statement about one aspect of the student's writing:
one thing praised, one problem pointed out, one question or one suggestion about one
target. Rules:
- A single sentence can hold several units. "The argument is convincing, but the
  conclusion comes too fast" is two units: praise of the argument, a problem with the
  conclusion.
- One unit can span several sentences. Several questions that all ask the student to
  develop the same idea form one unit; a suggestion followed by the reason for it is
  one unit.
- Interjections and emoticons ("Wow.", ":)") belong to the unit they react to.
- Do not drop, add, reorder, correct or rephrase anything.

Answer with the feedback text exactly as given, with the marker {UNIT_DELIMITER} inserted
at each boundary between two units and nowhere else. If the feedback is a single unit,
answer with it unchanged. Write nothing else: no explanation, no quotes, no numbering."""


def segment_user_message(text: str) -> str:
    """The user turn asking for the unit boundaries of one feedback text."""
    return f"Feedback to split:\n{text}"


SCORE_SYSTEM = """\
You compare feedback units written about the same paragraph of a student's essay. In each
pair, unit A comes from the instructor and unit B from another source. Judge how far B
gives the student the same feedback as A.

Look at two sides of each unit:
- its target: the aspect, passage or idea of the paragraph the unit is about;
- its comment: what it says about that target (praise, criticism, a question, a
  suggestion to change something).

Scale (integers only):
4 - The same feedback: same target and same comment. Wording, tone and length may differ.
3 - The same point with one detail that differs: for instance one unit is a more specific
    or a more general version of the other, or the suggested fix differs slightly.
2 - One important part is shared and another is not: the same target with a different
    comment, or the same comment applied to a different target.
1 - Different points that belong to the same broad kind of feedback (both praise, both
    flag errors, both ask for more detail) without sharing target or comment.
0 - Unrelated, or contradicting each other (one praises what the other criticises).

Judge every pair on its own: other pairs in the same request are unrelated to it. Do not
reward shared words that do not carry the same feedback.

Answer with one JSON object and nothing else. Its keys are the pair labels, each exactly
once; each value is the integer score of that pair, for example {"P3": 2, "P1": 4}."""


def score_user_message(labelled_pairs: list[tuple[str, str, str]]) -> str:
    """The user turn listing labelled (label, instructor unit, other unit) pairs to score."""

    def quoted(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)

    blocks = [f"Pair {label}\nA: {quoted(a)}\nB: {quoted(b)}" for label, a, b in labelled_pairs]
    labels = ", ".join(label for label, _, _ in labelled_pairs)
    return (
        f"Score these {len(labelled_pairs)} pairs.\n\n"
        + "\n\n".join(blocks)
        + f"\n\nReply with a JSON object whose keys are exactly: {labels}."
    )
