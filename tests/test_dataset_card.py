"""The built dataset folder as a Hub dataset repository: its card read by huggingface_hub's
card classes, the card's own loading example run, splits without rows left out, and a copy
of the folder moved elsewhere still loading."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest
import yaml
from datasets import load_dataset
from huggingface_hub import DatasetCard, DatasetCardData

from sefora_dataset import build_dataset
from sefora_dataset.schema import CONFIG_FEATURES
from tests.test_dataset_build import corpus  # noqa: F401  (a fixture: two students, both train)

SPLITS = ("train", "validation", "test")


def front_matter(card: Path) -> dict:
    return yaml.safe_load(card.read_text(encoding="utf-8").split("---\n")[1])


def loading_example(card: Path) -> str:
    """The Python block of the card's "Loading" section."""
    text = card.read_text(encoding="utf-8")
    section = text.split("## Loading", 1)[1]
    return re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)


def run_example(code: str, cwd: Path, monkeypatch) -> str:
    monkeypatch.chdir(cwd)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "card example", "exec"), {})
    return out.getvalue()


def test_card_is_a_valid_dataset_card_for_huggingface_hub(sample_dataset: Path) -> None:
    card = DatasetCard.load(sample_dataset / "README.md")  # parses and checks the YAML block
    assert isinstance(card.data, DatasetCardData)
    data = card.data.to_dict()
    assert data == front_matter(sample_dataset / "README.md")
    assert card.data.license == "cc-by-4.0" and card.data.pretty_name == "SEFORA"
    assert card.data.language == ["en"] and card.data.size_categories == ["n<1K"]
    configs = {c["config_name"]: c for c in data["configs"]}
    assert list(configs) == list(CONFIG_FEATURES)
    assert [name for name, c in configs.items() if c.get("default")] == ["paragraphs"]
    for config in configs.values():
        assert [f["split"] for f in config["data_files"]] == list(SPLITS)
        for entry in config["data_files"]:
            assert (sample_dataset / entry["path"]).is_file(), entry
    # Round trip: what the Hub would store is what the build wrote.
    again = DatasetCard(str(card))
    assert again.data.to_dict() == data
    assert "# SEFORA: Student Essays with Feedback" in card.text


def test_card_loading_example_runs_as_written(sample_dataset: Path, monkeypatch) -> None:
    card = sample_dataset / "README.md"
    code = loading_example(card)
    assert 'load_dataset("sefora", "paragraphs", split="test")' in code
    assert 'load_dataset("<namespace>/sefora", "paragraphs", split="test")' in code  # Hub form
    printed = run_example(code, sample_dataset.parent, monkeypatch).split()
    test_rows = len(load_dataset(str(sample_dataset), "paragraphs", split="test"))
    drafts = load_dataset(str(sample_dataset), "drafts")
    assert printed == [str(test_rows), str(sum(len(d) for d in drafts.values()))]
    assert test_rows > 0


def test_every_split_of_the_sample_has_rows_and_loads_without_a_split(
    sample_dataset: Path,
) -> None:
    for config in CONFIG_FEATURES:
        loaded = load_dataset(str(sample_dataset), config)
        assert list(loaded) == list(SPLITS)
        assert all(len(loaded[s]) > 0 for s in SPLITS), config
    students = {
        s: set(load_dataset(str(sample_dataset), "drafts", split=s)["student_id"]) for s in SPLITS
    }
    assert students == {"train": {"ID9002"}, "validation": {"ID9008"}, "test": {"ID9009"}}


def test_splits_without_rows_are_left_out_of_the_card(
    corpus: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch,
) -> None:
    out = tmp_path / "course"
    summary = build_dataset(corpus, out, progress=False)
    assert summary["rows"]["drafts"] == {"train": 4, "validation": 0, "test": 0}
    meta = front_matter(out / "README.md")
    for config in meta["configs"]:
        assert [f["split"] for f in config["data_files"]] == ["train"]
    assert not list(out.glob("*/validation-*")) and not list(out.glob("*/test-*"))
    assert list(load_dataset(str(out), "paragraphs")) == ["train"]  # no split named: loads
    text = (out / "README.md").read_text(encoding="utf-8")
    assert "Left out of this build's `configs:` for having no rows" in text
    assert "`paragraphs` validation/test" in text
    # The card's example names the folder and only the splits it has.
    code = loading_example(out / "README.md")
    assert 'load_dataset("course", "paragraphs", split="train")' in code
    assert run_example(code, tmp_path, monkeypatch).split() == ["5", "4"]


def test_a_moved_copy_of_the_built_folder_loads(tmp_path: Path, monkeypatch) -> None:
    built = tmp_path / "here" / "sefora"
    build_dataset(out=built, progress=False)
    before = {s: load_dataset(str(built), "annotations", split=s)["annotation_id"] for s in SPLITS}
    moved = tmp_path / "elsewhere" / "deep" / "sefora-copy"
    moved.parent.mkdir(parents=True)
    shutil.move(str(built), str(moved))
    assert not built.exists()
    monkeypatch.chdir(tmp_path / "elsewhere")
    after = load_dataset("deep/sefora-copy", "annotations")
    assert {s: after[s]["annotation_id"] for s in SPLITS} == before
    with pytest.raises(FileNotFoundError):
        load_dataset(str(built), "annotations")
