"""Grounding, between scoring and matching when the paragraphs are given: is a predicted
unit about this paragraph at all?

UniMatch assumes both sides address the same paragraph; a scorer that sees two units only
cannot tell "the ending about the age gap lands well" written for another text from the
same praise of this one, and feedback about another text then earns the credit of generic
matches. Given the paragraph, boosted trees (``models/grounding.npz``) estimate the
probability that a unit was written for it from how much of the unit (its words, those
outside general feedback vocabulary, quoted phrases, names, numbers) the paragraph
contains. A unit under `OFF_PARAGRAPH_BELOW` scores 0 against every instructor unit; it
still counts as a predicted unit. So do all units of a text whose units together speak for
another text (`text_log_odds` under the model's ``text_below``): generic units ("Nice
work!") written for another paragraph fit this one too, and alone they cannot tell. No
encoder runs: MiniLM similarities of the unit to the
paragraph and its sentences changed the end-to-end figures by 0.004 and made UniMatch four
times slower.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from unimatch_metric.features import content_words
from unimatch_metric.models import GROUNDING_FILE, load_model, model_digest
from unimatch_metric.trees import predict_proba

#: Probability (of being about the given paragraph) under which a unit is off-paragraph: the
#: model finds it at least nine times likelier to be about another text (its training rows
#: are half own, half other paragraphs). On the e2e set 0.2 gained 0.015 pooled Pearson but
#: zeroed 2-3 % of the units written for their paragraph instead of 1-2 %.
OFF_PARAGRAPH_BELOW = 0.1
#: Bounds of a unit's probability in `text_log_odds`: no unit counts for more than odds of 49
#: to 1 either way, so one confident unit does not decide a whole text.
EVIDENCE_CLIP = 0.02
#: Share of the training paragraphs whose feedback must use a word for it to count as
#: feedback vocabulary ("sentence", "detail", "clear") rather than a word of one text.
VOCABULARY_SHARE = 0.02
#: Columns of `grounding_features` (the model file records the count it was fitted with).
N_FEATURES = 15

_DOUBLE_QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d]{2,}?)[\"\u201d]")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+")
_NUMBER = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text.lower())


def _has_word(flat: str, word: str) -> bool:
    """Whether ``word`` occurs in ``flat`` as a whole word ("Art" is not in "start")."""
    return re.search(rf"(?<!\w){re.escape(word.lower())}(?!\w)", flat) is not None


def feedback_vocabulary(texts_by_paragraph: Sequence[Sequence[str]]) -> np.ndarray:
    """The content words of feedback in general: those used in the feedback on at least
    `VOCABULARY_SHARE` of the paragraphs (sorted)."""
    counts: dict[str, int] = {}
    for texts in texts_by_paragraph:
        for word in set().union(*(content_words(t) for t in texts)):
            counts[word] = counts.get(word, 0) + 1
    least = VOCABULARY_SHARE * len(texts_by_paragraph)
    return np.asarray(sorted(w for w, n in counts.items() if n >= least), dtype=str)


def grounding_features(
    units: Sequence[str], paragraph: str, vocabulary: frozenset[str]
) -> np.ndarray:
    """One row per unit: its content words, those outside the feedback ``vocabulary``
    (names, topic words), quoted phrases, capitalised words and numbers, each counted found
    and not found in ``paragraph`` (words by their first five letters)."""
    stems = {w[:5] for w in content_words(paragraph)}
    flat = _flat(paragraph)
    rows = []
    for unit in units:
        words = content_words(unit)
        found = sum(w[:5] in stems for w in words)
        specific = [w for w in words if w not in vocabulary]
        specific_found = sum(w[:5] in stems for w in specific)
        quotes = [_flat(q).strip(" .,;:!?") for q in _DOUBLE_QUOTED.findall(unit)]
        quoted = sum(bool(q) and q in flat for q in quotes)
        names = set(_NAME.findall(unit))
        named = sum(_has_word(flat, n) for n in names)
        numbers = set(_NUMBER.findall(unit))
        counted = sum(_has_word(flat, n) for n in numbers)
        rows.append(
            [
                len(words),
                found,
                found / max(1, len(words)),
                len(words) - found,
                len(specific),
                specific_found,
                len(specific) - specific_found,
                len(quotes),
                quoted,
                len(quotes) - quoted,
                len(names),
                named,
                len(names) - named,
                len(numbers),
                counted,
            ]
        )
    return np.asarray(rows, dtype=float).reshape(len(units), N_FEATURES)


def text_log_odds(probabilities: np.ndarray) -> float:
    """The log-odds that a text's units were all written for the paragraph: the sum of each
    unit's log-odds (clipped to `EVIDENCE_CLIP`), as if their evidence were independent;
    positive for this paragraph, 0 for a text without units."""
    p = np.clip(probabilities, EVIDENCE_CLIP, 1.0 - EVIDENCE_CLIP)
    return float(np.log(p / (1.0 - p)).sum())


def off_units(probabilities: np.ndarray, text_below: float) -> np.ndarray:
    """Which units of one text score 0: those under `OFF_PARAGRAPH_BELOW`, or all of them
    when the text's `text_log_odds` is under ``text_below``."""
    if text_log_odds(probabilities) < text_below:
        return np.ones(len(probabilities), dtype=bool)
    return probabilities < OFF_PARAGRAPH_BELOW


class Grounding:
    """The learned grounding model: which predicted units are about another text."""

    name = "learned"

    def __init__(self, path: Path = GROUNDING_FILE) -> None:
        self.path = path
        self.model = load_model(path)
        self.vocabulary = frozenset(self.model["vocabulary"].tolist())
        self.text_below = float(self.model["text_below"])

    @property
    def config(self) -> dict[str, Any]:
        """The model file's digest (names it in the signature)."""
        return {"name": self.name, "digest": model_digest(self.path)}

    def probabilities(
        self, units: Sequence[Sequence[str]], paragraphs: Sequence[str]
    ) -> list[np.ndarray]:
        """Per example, the probability that each unit is about its paragraph."""
        return [
            predict_proba(self.model, grounding_features(u, p, self.vocabulary))
            if u
            else np.zeros(0)
            for u, p in zip(units, paragraphs, strict=True)
        ]

    def off_paragraph(
        self, units: Sequence[Sequence[str]], paragraphs: Sequence[str]
    ) -> list[list[int]]:
        """Per example, the indices of the units that score 0 (`off_units` at the model's
        ``text_below``)."""
        return [
            [int(j) for j in np.flatnonzero(off_units(p, self.text_below))]
            for p in self.probabilities(units, paragraphs)
        ]
