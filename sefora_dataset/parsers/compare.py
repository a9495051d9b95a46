"""Scoring a parsed draft against the expected one (round-trip and regression checks).

- **Paragraphs**: the two lists of bodies are aligned (longest common subsequence, via
  difflib); a paragraph counts as exact when its body is found verbatim in the aligned
  output. Rate = exact / expected paragraphs.
- **Annotations** match on type + text + anchor, the anchor being the context strings
  (the same 20 characters either side of the span in both); recall = matched / expected,
  precision = matched / parsed, F1 their harmonic mean.
- **Colour accuracy**: matched highlights whose colour is the expected one.
- **Comments**: matched annotations whose comment is exactly the expected one, plus the
  overall (document-level) comments, compared in order.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from dataclasses import dataclass, field


@dataclass
class Scores:
    drafts: int = 0
    paragraphs_expected: int = 0
    paragraphs_parsed: int = 0
    paragraphs_exact: int = 0
    annotations_expected: int = 0
    annotations_parsed: int = 0
    annotations_matched: int = 0
    highlights_matched: int = 0
    colours_correct: int = 0
    comments_compared: int = 0
    comments_exact: int = 0
    overall_expected: int = 0
    overall_exact: int = 0
    failures: list[str] = field(default_factory=list)

    def add(self, other: Scores) -> None:
        for name, value in vars(other).items():
            if isinstance(value, int):
                setattr(self, name, getattr(self, name) + value)
        self.failures.extend(other.failures)

    @staticmethod
    def _ratio(a: int, b: int) -> float:
        return a / b if b else 1.0

    @property
    def paragraph_exact_rate(self) -> float:
        return self._ratio(self.paragraphs_exact, self.paragraphs_expected)

    @property
    def annotation_recall(self) -> float:
        return self._ratio(self.annotations_matched, self.annotations_expected)

    @property
    def annotation_precision(self) -> float:
        return self._ratio(self.annotations_matched, self.annotations_parsed)

    @property
    def annotation_f1(self) -> float:
        p, r = self.annotation_precision, self.annotation_recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def colour_accuracy(self) -> float:
        return self._ratio(self.colours_correct, self.highlights_matched)

    @property
    def comment_exact_rate(self) -> float:
        return self._ratio(
            self.comments_exact + self.overall_exact,
            self.comments_compared + self.overall_expected,
        )

    def summary(self) -> dict:
        return {
            "drafts": self.drafts,
            "paragraphs": self.paragraphs_expected,
            "paragraph_exact": round(self.paragraph_exact_rate, 4),
            "annotations": self.annotations_expected,
            "annotation_recall": round(self.annotation_recall, 4),
            "annotation_precision": round(self.annotation_precision, 4),
            "annotation_f1": round(self.annotation_f1, 4),
            "colour_accuracy": round(self.colour_accuracy, 4),
            "comment_exact": round(self.comment_exact_rate, 4),
            "overall_comments": self.overall_expected,
            "overall_exact": self.overall_exact,
        }


def _key(ann: dict) -> tuple:
    return (
        ann.get("type"),
        ann.get("text", "") if ann.get("type") != "note" else "",
        ann.get("context_left", ""),
        ann.get("context_right", ""),
    )


def compare_drafts(expected: dict, parsed: dict, name: str = "") -> Scores:
    """Scores of one parsed draft against the expected draft."""
    sc = Scores(drafts=1)
    exp_bodies = [p["body"] for p in expected["paragraphs"]]
    got_bodies = [p["body"] for p in parsed["paragraphs"]]
    sc.paragraphs_expected = len(exp_bodies)
    sc.paragraphs_parsed = len(got_bodies)
    matcher = difflib.SequenceMatcher(None, exp_bodies, got_bodies, autojunk=False)
    exact = sum(block.size for block in matcher.get_matching_blocks())
    sc.paragraphs_exact = exact
    if exact < len(exp_bodies):
        sc.failures.append(f"{name}: {len(exp_bodies) - exact} paragraph(s) differ")

    exp_anns = [a for p in expected["paragraphs"] for a in p["annotations"]]
    got_anns = [a for p in parsed["paragraphs"] for a in p["annotations"]]
    sc.annotations_expected = len(exp_anns)
    sc.annotations_parsed = len(got_anns)
    pool: dict[tuple, list[dict]] = defaultdict(list)
    for ann in got_anns:
        pool[_key(ann)].append(ann)
    for ann in exp_anns:
        bucket = pool.get(_key(ann))
        if not bucket:
            sc.failures.append(f"{name}: missed {ann.get('type')} {_key(ann)[1:]!r}"[:300])
            continue
        # prefer the candidate with the same comment (and colour) when keys repeat
        best = next(
            (
                g
                for g in bucket
                if g.get("comment") == ann.get("comment") and g.get("color") == ann.get("color")
            ),
            bucket[0],
        )
        bucket.remove(best)
        sc.annotations_matched += 1
        sc.comments_compared += 1
        if best.get("comment") == ann.get("comment"):
            sc.comments_exact += 1
        else:
            sc.failures.append(f"{name}: comment differs for {_key(ann)[1:]!r}"[:300])
        if ann.get("type") == "highlight":
            sc.highlights_matched += 1
            if best.get("color") == ann.get("color"):
                sc.colours_correct += 1
            else:
                sc.failures.append(
                    f"{name}: colour {best.get('color')} != {ann.get('color')} for "
                    f"{_key(ann)[1]!r}"[:300]
                )
    for key, rest in pool.items():
        for _ in rest:
            sc.failures.append(f"{name}: spurious {key[0]} {key[1:]!r}"[:300])

    exp_overall = [a.get("comment") for a in expected.get("annotations") or []]
    got_overall = [a.get("comment") for a in parsed.get("annotations") or []]
    sc.overall_expected = len(exp_overall)
    sc.overall_exact = sum(1 for a, b in zip(exp_overall, got_overall, strict=False) if a == b)
    if exp_overall != got_overall:
        sc.failures.append(f"{name}: overall comments differ")
    return sc
