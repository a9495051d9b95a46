"""`sefora build` on a corpus tree of raw annotated PDF/DOCX drafts mixed with JSON ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sefora_dataset import SAMPLE_SOURCE, build_dataset
from sefora_dataset.read import CorpusProblems
from tests.make_annotated import write_docx, write_pdf
from tests.test_dataset_build import every_split


@pytest.fixture
def mixed(tmp_path: Path) -> tuple[Path, dict[str, dict]]:
    """The sample corpus with two drafts replaced by a PDF and a DOCX of the same content."""
    root = tmp_path / "corpus"
    shutil.copytree(SAMPLE_SOURCE, root)
    drafts = sorted(root.rglob("*.json"))
    expected = {}
    for path, writer in ((drafts[0], write_pdf), (drafts[1], write_docx)):
        draft = json.loads(path.read_text(encoding="utf-8"))
        raw = path.with_suffix(".pdf" if writer is write_pdf else ".docx")
        expected[path.stem] = writer(draft, raw, seed=3)
        path.unlink()
    return root, expected


def test_raw_drafts_are_parsed_into_the_dataset(mixed, tmp_path: Path) -> None:
    root, expected = mixed
    build_dataset(root, tmp_path / "out", progress=False)
    drafts = every_split(tmp_path / "out", "drafts")
    by_id = {d["draft_id"]: d for d in drafts}
    assert len(by_id) == len(list(SAMPLE_SOURCE.rglob("*.json")))
    for draft_id, want in expected.items():
        got = by_id[draft_id]
        assert got["source_file"].endswith((".pdf", ".docx"))
        assert [p["body"] for p in got["paragraphs"]] == [p["body"] for p in want["paragraphs"]]
        got_anns = [
            (a["type"], a["text"] or "", a["comment"])
            for p in got["paragraphs"]
            for a in p["annotations"]
        ]
        want_anns = [
            (a["type"], a.get("text", ""), a["comment"])
            for p in want["paragraphs"]
            for a in p["annotations"]
        ]
        assert got_anns == want_anns


def test_a_broken_raw_draft_is_reported_by_name(mixed, tmp_path: Path) -> None:
    root, _ = mixed
    bad = next(root.rglob("*.json")).with_suffix(".pdf")
    bad.write_text("this is not a PDF", encoding="utf-8")
    bad.with_suffix(".json").unlink()
    with pytest.raises(CorpusProblems) as info:
        build_dataset(root, tmp_path / "out", progress=False)
    [problem] = info.value.problems
    assert problem.path == str(bad)
    assert not (tmp_path / "out").exists()
