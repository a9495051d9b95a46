"""FOXGLOVE: reading the four CSV files, building the three configs, the UniMatch helper."""

from __future__ import annotations

import argparse
import json

import pytest
from datasets import load_dataset

import unimatch_metric
from sefora_cli import foxglove as foxglove_cli
from sefora_dataset.foxglove import (
    COMMENT_FEATURES,
    read_foxglove,
    unimatch_examples,
)
from tests.foxglove_fixture import ESSAY_A, write_foxglove


@pytest.fixture
def source(tmp_path):
    return write_foxglove(tmp_path / "FOXGLOVE")


def test_read_types_and_values(source):
    tables = read_foxglove(source)
    assert [e["essay_id"] for e in tables.essays] == ["E01", "E02"]
    first = tables.essays[0]
    assert first["text"] == ESSAY_A  # multi-line text with quotes and commas, byte-exact
    assert first["goals"] == ["Claim", "Evidence", "Rebuttal"]
    assert (first["num_human_comments"], first["num_model_comments"]) == (4, 3)
    assert len(tables.comments) == 9
    c = tables.comments
    assert [x["row_index"] for x in c] == list(range(9))
    assert c[0]["source"] == "human" and c[4]["source"] == "model"
    assert [x["urgency_rank"] for x in c] == [1, 2, None, None, 1, 2, 3, 1, None]
    assert c[3]["is_global"] and not any(x["is_global"] for x in c if x is not c[3])
    assert c[8]["reviewer_id"] is None and c[2]["anchor_text"] is None
    # Anchors are located in the essay when they occur verbatim, else -1.
    assert ESSAY_A[c[1]["anchor_start"] : c[1]["anchor_end"]] == c[1]["anchor_text"]
    assert (c[6]["anchor_start"], c[6]["anchor_end"]) == (-1, -1)
    assert (c[2]["anchor_start"], c[2]["anchor_end"]) == (-1, -1)


def test_ratings_are_long_format_and_skip_empty_cells(source):
    tables = read_foxglove(source)
    ratings = tables.ratings
    global_rows = [r for r in ratings if r["level"] == "global"]
    item_rows = [r for r in ratings if r["level"] == "item"]
    assert len(global_rows) == 6 + 5 and tables.missing_ratings == 1
    assert len(item_rows) == 2 * 7
    assert {r["feedback_id"] for r in global_rows} == {None}
    assert {r["feedback_id"] for r in item_rows} == {"0", "4"}
    position = [r for r in item_rows if r["dimension"] == "accuracy_position"]
    assert [(r["source"], r["score"]) for r in position] == [("human", 5), ("model", 1)]
    specificity = [r for r in global_rows if r["dimension"] == "specificity"]
    assert [r["rater_id"] for r in specificity] == ["rater1"]  # rater2 left it empty


def test_build_loads_offline_with_the_declared_features(source, tmp_path):
    out = tmp_path / "built"
    parser = argparse.ArgumentParser()
    foxglove_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["build-foxglove", "--source", str(source), "--out", str(out)])
    assert args.func(args) == 0
    info = json.loads((out / ".sefora-build.json").read_text())
    assert info["rows"] == {"essays": 2, "comments": 9, "ratings": 25}
    assert info["comments_by_model"] == {"claude-sonnet-4.5": 1, "gpt-5.2": 3, "human": 5}
    card = (out / "README.md").read_text()
    assert "config_name: ratings" in card and "cc-by-nc-sa-4.0" in card
    comments = load_dataset(str(out), "comments", split="train")
    assert comments.features == COMMENT_FEATURES
    assert comments.to_list() == read_foxglove(source).comments
    essays = load_dataset(str(out), "essays", split="train")
    assert essays[0]["goals"] == ["Claim", "Evidence", "Rebuttal"]
    ratings = load_dataset(str(out), "ratings", split="train")
    assert sorted(set(ratings["score"])) <= [1, 2, 3, 4, 5] and len(ratings) == 25
    # A rebuild replaces the folder; a folder that is not a build is never replaced.
    args.func(args)
    assert sorted(p.name for p in out.iterdir()) == [
        ".sefora-build.json",
        "README.md",
        "comments",
        "essays",
        "ratings",
    ]


def test_build_refuses_to_replace_a_foreign_folder(source, tmp_path):
    from sefora_dataset import CorpusError
    from sefora_dataset.foxglove import build_foxglove

    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(CorpusError, match="refusing to replace"):
        build_foxglove(source, foreign)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_unimatch_examples_per_essay_and_goal(source):
    comments = read_foxglove(source).comments
    examples = unimatch_examples(comments, "gpt-5.2")
    keys = [(e["essay_id"], e["goal"]) for e in examples]
    # Goals with a tutor comment only; "Evidence"/"evidence" are one goal; global left out.
    assert keys == [("E01", "Claim"), ("E01", "Evidence"), ("E02", "Position")]
    assert examples[0]["prediction"] == ["Your claim is clear and arguable."]
    assert examples[0]["references"] == ["State your claim in the first sentence."]
    assert examples[1]["prediction"] == []  # gpt-5.2 said nothing about evidence
    assert examples[1]["references"] == [
        "Who is the teacher? Name your source.",
        "Add a statistic about motivation.",
    ]
    with_global = unimatch_examples(comments, "claude-sonnet-4.5", include_global=True)
    assert ("E01", "Global") in [(e["essay_id"], e["goal"]) for e in with_global]
    with pytest.raises(ValueError, match="no comments by model 'gpt-4'.*claude"):
        unimatch_examples(comments, "gpt-4")
    result = unimatch_metric.unimatch(
        [e["prediction"] for e in examples],
        [e["references"] for e in examples],
        scorer="exact",
        segment_references=False,
        use_cache=False,
    )
    assert result["n_examples"] == 3 and result["recall"] == 0.0


def test_unimatch_examples_work_on_the_built_dataset(source, tmp_path):
    from sefora_dataset.foxglove import build_foxglove

    build_foxglove(source, tmp_path / "built")
    loaded = load_dataset(str(tmp_path / "built"), "comments", split="train")
    assert unimatch_examples(loaded, "gpt-5.2") == unimatch_examples(
        read_foxglove(source).comments, "gpt-5.2"
    )
