"""Surface features of feedback units shared by the learned segmenter and scorer: cues of
the broad kinds of feedback, questions, length, content words and quotes."""

from __future__ import annotations

import math
import re

#: Cue patterns for broad kinds of feedback. They are features for the learned models, which
#: weigh them from data; they are never used to label anything.
CATEGORY_CUES = {
    "praise": r"\b(great|good|nice|love|like|strong|excellent|well|wonderful|effective|vivid|"
    r"interesting|beautiful|powerful|fun|enjoy|yes|wow|cool|impressive|compelling)\b|:\)|!",
    "mistake": r"\b(grammar|spell|spelling|typo|comma|tense|agreement|incorrect|wrong|error|"
    r"run-on|fragment|awkward|awk|punctuation|capitali[sz]|apostrophe|word choice|sp)\b",
    "elaboration": r"\b(expand|elaborate|more|detail|details|develop|explain|describe|tell|"
    r"show|add|example|examples|specific|deeper|explore)\b",
    "clarification": r"\b(unclear|confus\w*|mean|clarify|vague|sure|who|which|what|how|why|"
    r"lost|understand)\b|\?",
    "suggestion": r"\b(should|could|might|consider|try|cut|remove|delete|move|replace|rewrite|"
    r"avoid|combine|split|instead|maybe|perhaps)\b",
    "task": r"\b(prompt|assignment|rubric|thesis|citation|cite|mla|source|sources|quote|"
    r"quotes|format|works cited|argument|claim|evidence|audience|reader)\b",
    "structure": r"\b(paragraph|transition|structure|organi[sz]\w*|flow|order|topic sentence|"
    r"conclusion|introduction|intro|sentence|sentences)\b",
}
_CUES = {name: re.compile(p, re.IGNORECASE) for name, p in CATEGORY_CUES.items()}
WORD = re.compile(r"[a-z0-9']+")
QUOTED = re.compile(r"[\"\u201c\u2018']([^\"\u201d\u2019']{3,})[\"\u201d\u2019']")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "this",
        "that",
        "these",
        "those",
        "i",
        "you",
        "your",
        "my",
        "we",
        "our",
        "they",
        "their",
        "he",
        "she",
        "his",
        "her",
        "its",
        "as",
        "by",
        "from",
        "so",
        "if",
        "not",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "can",
        "could",
        "would",
        "should",
        "will",
        "just",
        "very",
        "really",
        "more",
        "here",
        "there",
        "what",
    ]
)


def content_words(text: str) -> set[str]:
    """The lower-cased words of ``text`` longer than two letters, stop words left out."""
    return {w for w in WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def unit_features(text: str) -> list[float]:
    """Surface features of one unit: category cues, question, length."""
    words = len(text.split())
    return [
        *(1.0 if cue.search(text) else 0.0 for cue in _CUES.values()),
        1.0 if text.rstrip().endswith("?") else 0.0,
        math.log1p(words),
    ]


#: Length of `unit_features`' rows.
UNIT_DIM = len(CATEGORY_CUES) + 2
