"""FOXGLOVE (tutor and LLM feedback on argumentative essays) as a Hugging Face dataset.

FOXGLOVE is not redistributable here (CC BY-NC-SA 4.0, essays from PERSUADE 2.0): users point
`build_foxglove` at their own copy of its four CSV files. The reader checks every documented
column and value and names the file, row and column of anything wrong; the builder writes three
configs as Arrow shards with a card, atomically, like `sefora build`:

- ``essays``: one row per essay, its text and the three goals the feedback providers were given;
- ``comments``: one row per comment (tutor or model) with its goal, urgency rank and anchor;
- ``ratings``: one row per (rater, rated feedback, dimension), a 1-5 score (long format).

`unimatch_examples` turns the comments into UniMatch inputs per essay and goal: the tutors'
comments as references, one model's comments as the prediction.
"""

from __future__ import annotations

import csv
import json
import logging
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datasets import Features, List, Value

from sefora_common.io import check_output_folder, output_folder, write_text

from . import __version__
from .build import BUILD_INFO, write_shard
from .errors import CorpusError

logger = logging.getLogger(__name__)

ESSAYS_CSV = "essay_goals.csv"
FEEDBACK_CSV = "feedback.csv"
RATINGS_GLOBAL_CSV = "ratings_global.csv"
RATINGS_ITEMS_CSV = "ratings_items.csv"

#: The quality dimensions rated 1-5 for global comments; sentence-level comments add
#: ``accuracy_position`` (whether the anchored span is the right one).
GLOBAL_DIMENSIONS = (
    "accuracy_content",
    "actionability",
    "clarity",
    "relevance",
    "specificity",
    "tone",
)
ITEM_DIMENSIONS = (*GLOBAL_DIMENSIONS, "accuracy_position")
_RATING_IDS = ("rater_id", "essay_id", "real_model", "reviewer_id", "anonymous_label")

#: Documented columns of each file. Headers are compared after stripping surrounding spaces
#: (the published ``essay_goals.csv`` is known to spell its text column " Essay Contents").
COLUMNS = {
    ESSAYS_CSV: ("essay_id", "Essay Contents", "goal_1", "goal_2", "goal_3"),
    FEEDBACK_CSV: (
        "essay_id",
        "model",
        "reviewer_id",
        "goal_addressed",
        "urgency_rank",
        "feedback_content",
        "sentences_or_sections",
    ),
    RATINGS_GLOBAL_CSV: (*_RATING_IDS, *GLOBAL_DIMENSIONS),
    RATINGS_ITEMS_CSV: (*_RATING_IDS, "feedback_id", *ITEM_DIMENSIONS),
}

HUMAN = "human"
GLOBAL_GOAL = "global"

ESSAY_FEATURES = Features(
    {
        "essay_id": Value("string"),
        "text": Value("string"),
        "goals": List(Value("string")),
        "num_words": Value("int32"),
        "num_human_comments": Value("int32"),
        "num_model_comments": Value("int32"),
    }
)
COMMENT_FEATURES = Features(
    {
        "row_index": Value("int32"),
        "essay_id": Value("string"),
        "source": Value("string"),
        "model": Value("string"),
        "reviewer_id": Value("string"),
        "goal": Value("string"),
        "is_global": Value("bool"),
        "urgency_rank": Value("int32"),
        "text": Value("string"),
        "anchor_text": Value("string"),
        "anchor_start": Value("int32"),
        "anchor_end": Value("int32"),
    }
)
RATING_FEATURES = Features(
    {
        "rater_id": Value("string"),
        "level": Value("string"),
        "essay_id": Value("string"),
        "real_model": Value("string"),
        "source": Value("string"),
        "reviewer_id": Value("string"),
        "anonymous_label": Value("string"),
        "feedback_id": Value("string"),
        "dimension": Value("string"),
        "score": Value("int32"),
    }
)
FOXGLOVE_FEATURES = {
    "essays": ESSAY_FEATURES,
    "comments": COMMENT_FEATURES,
    "ratings": RATING_FEATURES,
}

FIELD_DOCS = {
    "essays": {
        "essay_id": "anonymised essay id (links to PERSUADE 2.0)",
        "text": "the essay, as in `essay_goals.csv` (`Essay Contents`)",
        "goals": "the three argumentative goals the feedback providers were asked to address",
        "num_words": "words (split on whitespace)",
        "num_human_comments, num_model_comments": "comments on the essay by source",
    },
    "comments": {
        "row_index": "0-based position of the comment's row in `feedback.csv`",
        "essay_id": "the essay commented on",
        "source": "`human` (a trained writing tutor) or `model` (an LLM)",
        "model": "`human` or the model's name, as in `feedback.csv`",
        "reviewer_id": "anonymised tutor id (e.g. R1) or the model name; null when empty",
        "goal": "`goal_addressed`: the argumentative goal, or `global` for the essay-level comment",
        "is_global": "whether `goal` is `global` (case-insensitive)",
        "urgency_rank": "1 (most urgent), 2 or 3 for the three top-ranked comments, else null",
        "text": "the comment (`feedback_content`)",
        "anchor_text": "the highlighted essay text (`sentences_or_sections`); null if none",
        "anchor_start, anchor_end": "character offsets of `anchor_text` in the essay "
        "(first exact occurrence); -1 when absent or not found verbatim",
    },
    "ratings": {
        "rater_id": "anonymised expert rater (e.g. rater1)",
        "level": "`global` (from `ratings_global.csv`) or `item` (`ratings_items.csv`)",
        "essay_id, real_model, reviewer_id": "whose feedback was rated",
        "source": "`human` or `model`, from `real_model`",
        "anonymous_label": "the blinded label the rater saw (e.g. Feedback Set C)",
        "feedback_id": "item ratings only: the rated row of `feedback.csv`, verbatim",
        "dimension": "accuracy_content, actionability, clarity, relevance, specificity, tone, "
        "or (items only) accuracy_position",
        "score": "1-5 Likert score",
    },
}


@dataclass(frozen=True)
class FoxgloveTables:
    """The rows of the three configs, read and checked from the four CSV files."""

    essays: list[dict[str, Any]]
    comments: list[dict[str, Any]]
    ratings: list[dict[str, Any]]
    missing_ratings: int


def _where(row: int, column: str | None = None) -> str:
    return f"row {row}, column {column!r}" if column else f"row {row}"


def _read_csv(path: Path) -> list[dict[str, str]]:
    """The data rows of one FOXGLOVE file as column -> text (header names stripped).

    Raises `CorpusError` for a missing file, a missing documented column, a repeated column or
    a row whose number of fields differs from the header's. Undocumented columns are ignored.
    """
    required = COLUMNS[path.name]
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError as err:
        raise CorpusError(str(path), "", "file not found") from err
    with handle:
        try:
            reader = csv.reader(handle, strict=True)
            header = [name.strip() for name in next(reader, [])]
            records = list(reader)
        except (csv.Error, UnicodeDecodeError) as err:
            raise CorpusError(str(path), "", f"not a readable UTF-8 CSV file ({err})") from err
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise CorpusError(str(path), "header", f"column(s) given twice: {', '.join(repeated)}")
    missing = [name for name in required if name not in header]
    if missing:
        raise CorpusError(
            str(path),
            "header",
            f"missing column(s) {', '.join(map(repr, missing))} "
            f"(found: {', '.join(map(repr, header)) or 'no header'})",
        )
    extra = [name for name in header if name not in required]
    if extra:
        logger.warning("%s: ignoring undocumented column(s): %s", path, ", ".join(extra))
    rows = []
    for number, record in enumerate(records, 1):
        if not record:
            continue
        if len(record) != len(header):
            raise CorpusError(
                str(path),
                _where(number),
                f"has {len(record)} fields, the header has {len(header)}",
            )
        rows.append(dict(zip(header, record, strict=True)))
    return rows


def _required(value: str, path: Path, row: int, column: str) -> str:
    if not value.strip():
        raise CorpusError(str(path), _where(row, column), "must not be empty")
    return value


def _optional(value: str) -> str | None:
    return value if value.strip() else None


def _integer(value: str, path: Path, row: int, column: str, allowed: range) -> int | None:
    """An integer cell within ``allowed``, or None when empty (``"2.0"`` reads as 2)."""
    text = value.strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number.is_integer() and int(number) in allowed):
        raise CorpusError(
            str(path),
            _where(row, column),
            f"expected an integer from {allowed.start} to {allowed.stop - 1} or an empty "
            f"cell, got {value!r}",
        )
    return int(number)


def _source(model: str) -> str:
    return HUMAN if model.strip().casefold() == HUMAN else "model"


def _read_essays(path: Path) -> list[dict[str, Any]]:
    essays, seen = [], set()
    for number, raw in enumerate(_read_csv(path), 1):
        essay_id = _required(raw["essay_id"], path, number, "essay_id").strip()
        if essay_id in seen:
            raise CorpusError(str(path), _where(number, "essay_id"), f"repeated id {essay_id!r}")
        seen.add(essay_id)
        text = _required(raw["Essay Contents"], path, number, "Essay Contents")
        goals = [_required(raw[f"goal_{k}"], path, number, f"goal_{k}").strip() for k in (1, 2, 3)]
        essays.append(
            {"essay_id": essay_id, "text": text, "goals": goals, "num_words": len(text.split())}
        )
    return essays


def _locate(essay: str, anchor: str | None) -> tuple[int, int]:
    start = essay.find(anchor) if anchor else -1
    return (start, start + len(anchor)) if anchor and start >= 0 else (-1, -1)


def _read_comments(path: Path, essays: Mapping[str, str]) -> list[dict[str, Any]]:
    comments = []
    for number, raw in enumerate(_read_csv(path), 1):
        essay_id = _required(raw["essay_id"], path, number, "essay_id").strip()
        if essay_id not in essays:
            raise CorpusError(
                str(path), _where(number, "essay_id"), f"unknown essay id {essay_id!r}"
            )
        model = _required(raw["model"], path, number, "model").strip()
        goal = _required(raw["goal_addressed"], path, number, "goal_addressed").strip()
        anchor = _optional(raw["sentences_or_sections"])
        start, end = _locate(essays[essay_id], anchor)
        comments.append(
            {
                "row_index": number - 1,
                "essay_id": essay_id,
                "source": _source(model),
                "model": model,
                "reviewer_id": _optional(raw["reviewer_id"].strip()),
                "goal": goal,
                "is_global": goal.casefold() == GLOBAL_GOAL,
                "urgency_rank": _integer(
                    raw["urgency_rank"], path, number, "urgency_rank", range(1, 4)
                ),
                "text": _required(raw["feedback_content"], path, number, "feedback_content"),
                "anchor_text": anchor,
                "anchor_start": start,
                "anchor_end": end,
            }
        )
    return comments


def _read_ratings(path: Path, level: str, essays: Mapping[str, str]) -> tuple[list[dict], int]:
    """Long-format rating rows of one ratings file, and the number of empty rating cells."""
    dimensions = ITEM_DIMENSIONS if level == "item" else GLOBAL_DIMENSIONS
    rows, empty = [], 0
    for number, raw in enumerate(_read_csv(path), 1):
        ids = {
            key: _required(raw[key], path, number, key).strip()
            for key in ("rater_id", "essay_id", "real_model")
        }
        if ids["essay_id"] not in essays:
            raise CorpusError(
                str(path), _where(number, "essay_id"), f"unknown essay id {ids['essay_id']!r}"
            )
        feedback_id = None
        if level == "item":
            feedback_id = _required(raw["feedback_id"], path, number, "feedback_id").strip()
        base = {
            "rater_id": ids["rater_id"],
            "level": level,
            "essay_id": ids["essay_id"],
            "real_model": ids["real_model"],
            "source": _source(ids["real_model"]),
            "reviewer_id": _optional(raw["reviewer_id"].strip()),
            "anonymous_label": _optional(raw["anonymous_label"].strip()),
            "feedback_id": feedback_id,
        }
        for dimension in dimensions:
            score = _integer(raw[dimension], path, number, dimension, range(1, 6))
            if score is None:
                empty += 1
                continue
            rows.append({**base, "dimension": dimension, "score": score})
    return rows, empty


def read_foxglove(source: str | Path) -> FoxgloveTables:
    """Read and check the four FOXGLOVE CSV files in ``source``; raise `CorpusError` if bad."""
    source = Path(source)
    if not source.is_dir():
        raise CorpusError(str(source), "", "not a folder (expected the FOXGLOVE CSV files)")
    essays = _read_essays(source / ESSAYS_CSV)
    texts = {e["essay_id"]: e["text"] for e in essays}
    comments = _read_comments(source / FEEDBACK_CSV, texts)
    global_rows, global_empty = _read_ratings(source / RATINGS_GLOBAL_CSV, "global", texts)
    item_rows, item_empty = _read_ratings(source / RATINGS_ITEMS_CSV, "item", texts)
    counts = Counter((c["essay_id"], c["source"]) for c in comments)
    for essay in essays:
        essay["num_human_comments"] = counts[essay["essay_id"], HUMAN]
        essay["num_model_comments"] = counts[essay["essay_id"], "model"]
    return FoxgloveTables(essays, comments, global_rows + item_rows, global_empty + item_empty)


def summarize(tables: FoxgloveTables) -> dict[str, Any]:
    """Counts reported in the card and the build info."""
    return {
        "rows": {
            "essays": len(tables.essays),
            "comments": len(tables.comments),
            "ratings": len(tables.ratings),
        },
        "comments_by_model": dict(sorted(Counter(c["model"] for c in tables.comments).items())),
        "global_comments": sum(c["is_global"] for c in tables.comments),
        "ranked_comments": sum(c["urgency_rank"] is not None for c in tables.comments),
        "located_anchors": sum(c["anchor_start"] >= 0 for c in tables.comments),
        "anchored_comments": sum(c["anchor_text"] is not None for c in tables.comments),
        "ratings_by_level": dict(sorted(Counter(r["level"] for r in tables.ratings).items())),
        "raters": len({r["rater_id"] for r in tables.ratings}),
        "empty_rating_cells": tables.missing_ratings,
    }


def render_card(summary: dict[str, Any], files: dict[str, str]) -> str:
    """The dataset card: YAML ``configs:`` for the three configs, contents, fields, licence."""
    lines = [
        "---",
        "pretty_name: FOXGLOVE",
        "license: cc-by-nc-sa-4.0",
        "language:",
        "- en",
        "tags:",
        "- education",
        "- writing-feedback",
        "- argumentative-essays",
        "configs:",
    ]
    for config, path in files.items():
        lines.append(f"- config_name: {config}")
        if config == "comments":
            lines.append("  default: true")
        lines += ["  data_files:", "  - split: train", f"    path: {path}"]
    lines.append("---")
    rows = summary["rows"]
    by_model = ", ".join(f"{m} {n:,}" for m, n in summary["comments_by_model"].items())
    sections = [
        "\n".join(lines),
        "",
        "# FOXGLOVE: tutor and LLM feedback on argumentative essays",
        "",
        "Built with `sefora build-foxglove` from a local copy of the FOXGLOVE CSV files "
        "(essays from PERSUADE 2.0, 12th grade). Sentence-anchored comments on each essay by "
        "trained writing tutors and by LLMs under one protocol (goal label, urgency rank "
        "1-3 for the three most important comments, one global comment per provider), and "
        "expert 1-5 ratings of a sample of them.",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        'comments = load_dataset("path/to/this/folder", "comments", split="train")',
        "```",
        "",
        "## Contents",
        "",
        f"{rows['essays']:,} essays, {rows['comments']:,} comments ({by_model}; "
        f"{summary['global_comments']:,} global, {summary['ranked_comments']:,} with an "
        f"urgency rank; {summary['located_anchors']:,} of {summary['anchored_comments']:,} "
        f"anchors found verbatim in their essay), {rows['ratings']:,} ratings by "
        f"{summary['raters']:,} raters "
        f"({', '.join(f'{n:,} {lv}' for lv, n in summary['ratings_by_level'].items())}; "
        f"{summary['empty_rating_cells']:,} empty rating cells left out).",
        "",
        "There is no official split: everything is in `train`.",
        "",
        "## Configs and fields",
        "",
    ]
    for config in FOXGLOVE_FEATURES:
        sections += [f"### {config}", ""]
        sections += [f"- `{name}`: {doc}" for name, doc in FIELD_DOCS[config].items()]
        sections.append("")
    sections += [
        "## Licence",
        "",
        "FOXGLOVE is released under CC BY-NC-SA 4.0 (non-commercial, share-alike); its "
        "essays come from the PERSUADE 2.0 corpus. This folder is a derived copy under the "
        "same licence; do not redistribute it under other terms.",
        "",
    ]
    return "\n".join(sections)


def build_foxglove(source: str | Path, out: str | Path) -> dict[str, Any]:
    """Read FOXGLOVE from ``source``, write the three configs to ``out`` atomically."""
    check_output_folder(out, BUILD_INFO, "sefora build-foxglove", CorpusError)
    tables = read_foxglove(source)
    summary = summarize(tables)
    with output_folder(out, BUILD_INFO, "sefora build-foxglove", CorpusError) as tmp:
        files = {}
        for config, features in FOXGLOVE_FEATURES.items():
            (tmp / config).mkdir()
            shard = write_shard(getattr(tables, config), features, tmp / config, "train")
            files[config] = shard.relative_to(tmp).as_posix()
        write_text(tmp / "README.md", render_card(summary, files))
        info = {
            "dataset": "foxglove",
            "version": __version__,
            "source": str(Path(source).resolve()),
            **summary,
        }
        write_text(tmp / BUILD_INFO, json.dumps(info, indent=2))
    return summary


def unimatch_examples(
    comments: Iterable[Mapping[str, Any]], model: str, include_global: bool = False
) -> list[dict[str, Any]]:
    """UniMatch inputs per essay and goal: the tutors' comments against one model's.

    One example per (essay, goal) that at least one tutor commented on, sorted by essay and
    goal: ``{"essay_id", "goal", "model", "prediction": [the model's comments],
    "references": [the tutors' comments]}``. ``prediction`` is a list of ready units (one per
    comment; join them to let UniMatch segment them) and is empty when the model left the goal
    alone. Goals compare case-insensitively. ``comments`` are rows of the ``comments`` config
    (a loaded dataset or `read_foxglove`'s). The example dicts are also lines for
    ``sefora unimatch``.
    """
    comments = list(comments)
    models = sorted({c["model"] for c in comments if c["source"] != HUMAN})
    if model not in models:
        raise ValueError(f"no comments by model {model!r}; models: {', '.join(models) or 'none'}")
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    sides: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(
        lambda: {"prediction": [], "references": []}
    )
    for c in comments:
        if c["is_global"] and not include_global:
            continue
        key = (c["essay_id"], c["goal"].casefold())
        if c["source"] == HUMAN:
            sides[key]["references"].append(c["text"])
            groups.setdefault(key, {"essay_id": c["essay_id"], "goal": c["goal"]})
        elif c["model"] == model:
            sides[key]["prediction"].append(c["text"])
    return [
        {**groups[key], "model": model, **sides[key]}
        for key in sorted(groups)
        if sides[key]["references"]
    ]
