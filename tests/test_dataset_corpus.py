"""The build on the published corpus reproduces its documented figures (skipped without it)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from datasets import load_dataset

from sefora_dataset import build_dataset


@pytest.fixture(scope="module")
def built(sefora_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sefora") / "sefora"
    build_dataset(sefora_corpus, out, progress=False)
    return out


def load_all(out: Path, config: str):
    return load_dataset(str(out), config, split="train+validation+test")


def test_corpus_figures(built: Path) -> None:
    drafts = load_all(built, "drafts")
    paragraphs = load_all(built, "paragraphs")
    annotations = load_all(built, "annotations")
    assert len(drafts) == 564
    assert len(paragraphs) == 8186
    assert len(annotations) == 5684
    assert Counter(annotations["type"]) == {"highlight": 4830, "note": 746, "strikeout": 108}
    assert sum(1 for n in paragraphs["num_annotations"] if n) == 3499
    assert len(load_all(built, "essays")) == 371
    assert sum(1 for g in drafts["grades"] if g) == 520


def test_splits_are_student_disjoint(built: Path) -> None:
    students = {
        split: set(load_dataset(str(built), "drafts", split=split)["student_id"])
        for split in ("train", "validation", "test")
    }
    assert not students["train"] & students["validation"]
    assert not students["train"] & students["test"]
    assert not students["validation"] & students["test"]
    total = sum(len(s) for s in students.values())
    assert len(students["train"]) / total > 0.7


def test_located_spans_are_correct(built: Path, sefora_corpus: Path) -> None:
    annotations = load_all(built, "annotations")
    paragraphs = {p["paragraph_id"]: p["body"] for p in load_all(built, "paragraphs")}
    located = 0
    for ann in annotations:
        body = paragraphs[ann["paragraph_id"]]
        if ann["type"] == "note" or ann["start"] < 0:
            continue
        located += 1
        assert body[ann["start"] : ann["end"]] == ann["text"], ann["annotation_id"]
    # Every span whose text occurs in its paragraph is located.
    expected = sum(
        1
        for f in sefora_corpus.rglob("*.json")
        for p in json.loads(f.read_text(encoding="utf-8"))["paragraphs"]
        for a in p["annotations"]
        if a["type"] != "note" and a["text"] and a["text"] in p["body"]
    )
    assert located == expected


def test_paragraph_rows_match_source(built: Path, sefora_corpus: Path) -> None:
    path = sorted(sefora_corpus.rglob("*_Final_ID0061.json"))[0]
    source = json.loads(path.read_text(encoding="utf-8"))
    draft_id = path.stem
    rows = [p for p in load_all(built, "paragraphs") if p["draft_id"] == draft_id]
    assert [r["body"] for r in rows] == [p["body"] for p in source["paragraphs"]]
    assert [r["paragraph_index"] for r in rows] == list(range(len(rows)))
