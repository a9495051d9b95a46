"""DPO preference pairs (TRL's format) from any set of scored feedback."""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ScoredFeedback:
    """One feedback text for one prompt with its score; ``group`` links prompts whose feedback
    makes hard negatives for each other (e.g. the goals of one essay)."""

    prompt: str
    feedback: str
    score: float
    group: str | None = None


def scored_feedback(item: ScoredFeedback | Mapping[str, Any], where: str) -> ScoredFeedback:
    """``item`` (a `ScoredFeedback` or a dict with its fields) checked; errors name ``where``.

    Raises ValueError unless prompt and feedback are non-empty strings, the score a finite
    number (a failed judgement has none: drop or re-judge it) and the group a string or None.
    """
    if isinstance(item, ScoredFeedback):
        row = dataclasses.asdict(item)
    elif isinstance(item, Mapping):
        row = dict(item)
    else:
        raise TypeError(f"{where}: expected a ScoredFeedback or a dict")
    for key in ("prompt", "feedback"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise ValueError(f"{where}: {key}: expected a non-empty string")
    score = row.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise ValueError(f"{where}: score: expected a finite number, got {score!r}")
    group = row.get("group")
    if group is not None and not isinstance(group, str):
        raise ValueError(f"{where}: group: expected a string or null, got {group!r}")
    return ScoredFeedback(row["prompt"], row["feedback"], float(score), group)


def preference_pairs(
    items: Iterable[ScoredFeedback | Mapping[str, Any]],
    mismatched: bool = False,
    random_negatives: int = 1,
    seed: int = 0,
    conversational: bool = False,
    metadata: bool = False,
) -> list[dict[str, Any]]:
    """DPO preference pairs ``{"prompt", "chosen", "rejected"}`` (TRL's preference format).

    For each prompt, every two of its feedback texts with different scores make a pair, the
    higher-scored one chosen (identical texts never pair). With ``mismatched``, each prompt's
    best feedback is also preferred over the best feedback of every other prompt of its
    ``group`` (hard negatives: written for a neighbouring input) and over that of
    ``random_negatives`` prompts drawn from other groups (seeded by ``seed``). With
    ``conversational`` the fields are chat message lists; ``metadata`` adds ``kind``
    (``score`` or ``mismatch``), ``score_chosen`` and ``score_rejected``.
    """
    if not isinstance(random_negatives, int) or random_negatives < 0:
        raise ValueError(f"random_negatives must be an integer >= 0, got {random_negatives!r}")
    rows = [scored_feedback(item, f"items[{i}]") for i, item in enumerate(items)]
    by_prompt: dict[str, list[ScoredFeedback]] = {}
    for row in rows:
        by_prompt.setdefault(row.prompt, []).append(row)
    groups = {p: {r.group for r in rs} for p, rs in by_prompt.items()}
    for prompt, names in groups.items():
        if len(names) > 1:
            raise ValueError(f"prompt {prompt[:60]!r} is given in several groups: {names}")
    triples: list[tuple[str, ScoredFeedback, ScoredFeedback, str]] = []
    for prompt, rs in by_prompt.items():
        for a_index, a in enumerate(rs):
            for b in rs[a_index + 1 :]:
                if a.score != b.score and a.feedback != b.feedback:
                    win, lose = (a, b) if a.score > b.score else (b, a)
                    triples.append((prompt, win, lose, "score"))
    if mismatched:
        best = {p: max(rs, key=lambda r: r.score) for p, rs in by_prompt.items()}
        group_of = {p: rs[0].group for p, rs in by_prompt.items()}
        prompts = list(by_prompt)
        rng = random.Random(seed)
        for prompt in prompts:
            group = group_of[prompt]
            same = [
                q for q in prompts if q != prompt and group is not None and group_of[q] == group
            ]
            other = [q for q in prompts if q != prompt and (group is None or group_of[q] != group)]
            drawn = rng.sample(other, min(random_negatives, len(other)))
            for q in same + drawn:
                if best[q].feedback != best[prompt].feedback:
                    triples.append((prompt, best[prompt], best[q], "mismatch"))
    return [_pair(*t, conversational, metadata) for t in triples]


def _pair(
    prompt: str,
    chosen: ScoredFeedback,
    rejected: ScoredFeedback,
    kind: str,
    conversational: bool,
    metadata: bool,
) -> dict[str, Any]:
    if conversational:
        pair: dict[str, Any] = {
            "prompt": [{"role": "user", "content": prompt}],
            "chosen": [{"role": "assistant", "content": chosen.feedback}],
            "rejected": [{"role": "assistant", "content": rejected.feedback}],
        }
    else:
        pair = {"prompt": prompt, "chosen": chosen.feedback, "rejected": rejected.feedback}
    if metadata:
        pair |= {"kind": kind, "score_chosen": chosen.score, "score_rejected": rejected.score}
    return pair
