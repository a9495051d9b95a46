"""``sefora dpo-pairs``: DPO preference pairs (TRL's format) from a JSONL file of scored feedback.

Each input line is one feedback text for one prompt with its score, e.g. from the rubric
judge or UniMatch: ``{"prompt": ..., "feedback": ..., "score": 0.8, "group": "essay-7"}``
(``group`` is optional; the field names can be changed). Each output line is one pair
``{"prompt": ..., "chosen": ..., "rejected": ...}``.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from feedback_judges.dpo import ScoredFeedback, preference_pairs, scored_feedback
from feedback_judges.errors import JudgeInputError
from sefora_cli.options import reject_unused
from sefora_common.io import write_text
from sefora_common.jsonl import read_jsonl


def register(subparsers: Any) -> None:
    """Add the ``dpo-pairs`` subcommand."""
    parser = subparsers.add_parser(
        "dpo-pairs",
        description="For each prompt, pair every two feedback texts with different scores "
        "(the higher one chosen); with --mismatched, also prefer each prompt's best feedback "
        "over the best feedback of the other prompts of its group and of random other "
        "prompts. Writes TRL's preference format, one JSON object per line.",
    )
    parser.add_argument("input", type=Path, help="JSONL file, one scored feedback per line")
    parser.add_argument("--out", type=Path, required=True, help="output JSONL file")
    parser.add_argument("--prompt-field", default="prompt", help="input field of the prompt")
    parser.add_argument("--feedback-field", default="feedback", help="field of the feedback")
    parser.add_argument("--score-field", default="score", help="field of the score")
    parser.add_argument("--group-field", default="group", help="field of the group (optional)")
    parser.add_argument(
        "--mismatched", action="store_true", help="add mismatched-feedback hard negatives"
    )
    parser.add_argument(
        "--random-negatives",
        type=_count,
        help="with --mismatched: pairs against random prompts of other groups (default 1)",
    )
    parser.add_argument("--seed", type=int, help="with --mismatched: seed of the random negatives")
    parser.add_argument(
        "--conversational", action="store_true", help="chat messages instead of plain text"
    )
    parser.add_argument(
        "--metadata", action="store_true", help="add kind, score_chosen and score_rejected"
    )
    parser.set_defaults(func=run)


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a count >= 0, got {value}")
    return value


def read_scored(path: Path, args: argparse.Namespace) -> list[ScoredFeedback]:
    """The scored feedback of a JSONL file; a bad line is a `JudgeInputError` naming it."""
    fields = {
        "prompt": args.prompt_field,
        "feedback": args.feedback_field,
        "score": args.score_field,
        "group": args.group_field,
    }

    def row(raw: dict, where: str) -> ScoredFeedback:
        return scored_feedback({key: raw.get(name) for key, name in fields.items()}, where)

    def check(where: str, raw: dict) -> list[tuple[str, str]]:
        missing = [name for key, name in fields.items() if key != "group" and name not in raw]
        if missing:
            return [(where, f"missing field(s) {missing}")]
        try:
            row(raw, where)
        except ValueError as err:
            return [("", str(err))]  # the message names the line and the field
        return []

    return [row(raw, f"line {n}") for n, raw in read_jsonl(path, JudgeInputError, check)]


def run(args: argparse.Namespace) -> int:
    """Read, pair, write atomically, and print the counts as JSON."""
    if not args.mismatched:
        reject_unused(args, ["--random-negatives", "--seed"], "they apply with --mismatched")
    rows = read_scored(args.input, args)
    negatives = {"random_negatives": args.random_negatives, "seed": args.seed}
    pairs = preference_pairs(
        rows,
        mismatched=args.mismatched,
        conversational=args.conversational,
        metadata=True,
        **{name: value for name, value in negatives.items() if value is not None},
    )
    kinds = Counter(pair["kind"] for pair in pairs)
    if not args.metadata:
        for pair in pairs:
            for key in ("kind", "score_chosen", "score_rejected"):
                del pair[key]
    write_text(args.out, "".join(json.dumps(pair, ensure_ascii=False) + "\n" for pair in pairs))
    summary = {
        "out": str(args.out),
        "feedback": len(rows),
        "prompts": len({r.prompt for r in rows}),
        "pairs": len(pairs),
        "score_pairs": kinds["score"],
        "mismatch_pairs": kinds["mismatch"],
    }
    print(json.dumps(summary, indent=2))
    return 0
