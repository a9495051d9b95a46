"""Small FOXGLOVE-format CSV files written by the tests (invented essays and comments)."""

from __future__ import annotations

import csv
from pathlib import Path

ESSAY_A = (
    'Schools should let students choose electives. "Choice builds motivation," one teacher '
    "said.\nSome argue that core classes matter more. Yet electives teach skills, too."
)
ESSAY_B = "Phones should be banned in class. They distract everyone, including the teacher."

ESSAYS = [
    # The published file spells the text column with a leading space; the reader strips it.
    ["essay_id", " Essay Contents", "goal_1", "goal_2", "goal_3"],
    ["E01", ESSAY_A, "Claim", "Evidence", "Rebuttal"],
    ["E02", ESSAY_B, "Position", "Claim", "Counterclaim"],
]

FEEDBACK_HEADER = [
    "essay_id",
    "model",
    "reviewer_id",
    "goal_addressed",
    "urgency_rank",
    "feedback_content",
    "sentences_or_sections",
]
FEEDBACK = [
    FEEDBACK_HEADER,
    [
        "E01",
        "human",
        "R1",
        "Claim",
        "1",
        "State your claim in the first sentence.",
        "Schools should let students choose electives.",
    ],
    [
        "E01",
        "human",
        "R1",
        "Evidence",
        "2",
        "Who is the teacher? Name your source.",
        '"Choice builds motivation," one teacher said.',
    ],
    ["E01", "human", "R2", "evidence", "", "Add a statistic about motivation.", ""],
    ["E01", "human", "R1", "Global", "", "A clear stance; develop the rebuttal.", ""],
    [
        "E01",
        "gpt-5.2",
        "gpt-5.2",
        "Claim",
        "1",
        "Your claim is clear and arguable.",
        "Schools should let students choose electives.",
    ],
    [
        "E01",
        "gpt-5.2",
        "gpt-5.2",
        "Rebuttal",
        "2",
        "Answer the counterargument directly.",
        "Yet electives teach skills, too.",
    ],
    [
        "E01",
        "claude-sonnet-4.5",
        "claude-sonnet-4.5",
        "Evidence",
        "3.0",
        "Quote the teacher's full name and role.",
        "one teacher said (paraphrased)",
    ],
    [
        "E02",
        "human",
        "R3",
        "Position",
        "1",
        "Good, firm position.",
        "Phones should be banned in class.",
    ],
    ["E02", "gpt-5.2", "", "Counterclaim", "", "Consider emergencies as a counterclaim.", ""],
]

RATING_IDS = ["rater_id", "essay_id", "real_model", "reviewer_id", "anonymous_label"]
GLOBAL_DIMS = ["accuracy_content", "actionability", "clarity", "relevance", "specificity", "tone"]
RATINGS_GLOBAL = [
    RATING_IDS + GLOBAL_DIMS,
    ["rater1", "E01", "human", "R1", "Feedback Set A", "5", "4", "5", "5", "4", "5"],
    ["rater2", "E01", "gpt-5.2", "gpt-5.2", "Feedback Set B", "4", "3", "5", "4", "", "4"],
]
RATINGS_ITEMS = [
    [*RATING_IDS, "feedback_id", *GLOBAL_DIMS, "accuracy_position"],
    ["rater1", "E01", "human", "R1", "Feedback Set A", "0", "5", "5", "4", "5", "4", "5", "5"],
    [
        "rater1",
        "E01",
        "gpt-5.2",
        "gpt-5.2",
        "Feedback Set B",
        "4",
        "3",
        "2",
        "4",
        "3",
        "2",
        "4",
        "1",
    ],
]

FILES = {
    "essay_goals.csv": ESSAYS,
    "feedback.csv": FEEDBACK,
    "ratings_global.csv": RATINGS_GLOBAL,
    "ratings_items.csv": RATINGS_ITEMS,
}


def write_csv(path: Path, rows: list[list[str]], bom: bool = False) -> Path:
    """Write ``rows`` as CSV (quoted where needed), optionally with a UTF-8 byte-order mark."""
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


def write_foxglove(folder: Path, **replace: list[list[str]]) -> Path:
    """The four files in ``folder``; ``replace`` swaps a file's rows (name without .csv)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in FILES.items():
        rows = replace.get(name.removesuffix(".csv"), rows)
        write_csv(folder / name, rows, bom=name == "essay_goals.csv")
    return folder
