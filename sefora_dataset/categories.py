"""The feedback category of an instructor comment by a keyword rule (no model involved).

Used to pick few-shot exemplars in the generation grid and to count comments by category
in the dataset card (e.g. of the `revisions` config).
"""

from __future__ import annotations

import re

#: The keyword rule that assigns a category to an instructor comment when few-shot
#: exemplars are picked: the first category (in this order) with a matching pattern wins;
#: comments matching none are never exemplars. Mistakes and task constraints are checked
#: first, and praise only counts without a question or a "but", because instructors often
#: soften a correction or a request with a compliment.
CATEGORY_KEYWORDS: tuple[tuple[str, str], ...] = (
    (
        "Mistakes",
        r"\b(grammar|grammatical|spell\w*|typo\w*|punctuat\w*|comma\w*|apostrophe\w*|"
        r"tense|run-on|runs on|fragment|capitali[sz]\w*|subject-verb|agreement|"
        r"word choice|one word|two words|repetitive|preposition\w*)\b",
    ),
    (
        "Task Constraints",
        r"\b(assignment|prompt|rubric|requirement\w*|word count|minimum|maximum|"
        r"citation\w*|cite|sources?|MLA|APA|format\w*|font|indent\w*|title page|"
        r"works cited|bibliograph\w*)\b",
    ),
    (
        "Clarification",
        r"\b(unclear|confus\w*|what do you mean|do you mean|not sure what|not clear|"
        r"clarify|vague|ambiguous|lost me|hard to follow)\b",
    ),
    (
        "Elaboration",
        r"\b(expand\w*|elaborat\w*|more detail\w*|develop\w*|tell us more|say more|"
        r"know more|more about|an example|one example|explain\w*|show us|give us|"
        r"flesh\w* out|go deeper|dig deeper)\b",
    ),
    (  # praise only: no question and no "but"/"however" turning it into a critique
        "Praise",
        r"^(?![\s\S]*(\?|\bbut\b|\bhowever\b|\balthough\b))[\s\S]*"
        r"\b(great|love\w*|lovely|nice|excellent|wonderful|beautiful\w*|good|well done|"
        r"awesome|fantastic|strong|brilliant|enjoy\w*|effective)\b",
    ),
    (
        "Concepts",
        r"\b(idea\w*|argument\w*|claim\w*|thesis|logic\w*|reasoning|analys\w*|evidence|"
        r"focus\w*|purpose|meaning|theme\w*|connect\w*|contradict\w*)\b",
    ),
)

_PATTERNS = [(name, re.compile(p, re.IGNORECASE)) for name, p in CATEGORY_KEYWORDS]


def matching_categories(comment: str) -> list[str]:
    """Every category whose keywords match ``comment``, in `CATEGORY_KEYWORDS` order."""
    return [name for name, pattern in _PATTERNS if pattern.search(comment)]


def categorize(comment: str) -> str | None:
    """The category the keyword rule (`CATEGORY_KEYWORDS`) gives a comment, or None."""
    found = matching_categories(comment)
    return found[0] if found else None
