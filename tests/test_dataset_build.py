"""Building the dataset from small corpora written here: rows, offsets, order, splits, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from datasets import Dataset, concatenate_datasets, load_dataset

from sefora_cli.main import main
from sefora_dataset import CorpusError, build_dataset, split_of
from sefora_dataset.build import locate_span
from sefora_dataset.read import CorpusProblems, read_corpus, stage_sort_key

BODY = "The dog ran home. The dog ran away, and the cat watched the dog."


def every_split(path: str | Path, config: str) -> Dataset:
    """All rows of a built config, whichever splits the build lists."""
    return concatenate_datasets(list(load_dataset(str(path), config).values()))


def span(body: str, text: str, nth: int = 0, width: int = 20) -> dict:
    """A highlight on the nth occurrence of ``text``, with context strings cut from ``body``."""
    start = -1
    for _ in range(nth + 1):
        start = body.index(text, start + 1)
    end = start + len(text)
    return {
        "type": "highlight",
        "text": text,
        "comment": f"about {text}",
        "color": "yellow",
        "context_left": body[max(0, start - width) : start],
        "context_right": body[end : end + width],
    }


def draft(paragraphs: list[tuple[str, list[dict]]], grades: dict | None = None) -> dict:
    data: dict = {"paragraphs": [{"body": b, "annotations": a} for b, a in paragraphs]}
    if grades is not None:
        data["annotations"] = [{"grades": grades, "comment": "Good work overall."}]
    return data


def write(root: Path, stage: str, student: str, data, essay: int = 1, raw: str | None = None):
    folder = root / "Batch_1" / "Course_1" / "Class_1" / f"Essay_{essay}" / stage
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"Batch_1_Course_1_Class_1_Essay_{essay}_{stage}_ID{student}.json"
    path.write_text(raw if raw is not None else json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    note = {"type": "note", "comment": "Why?", "context_left": "ran away,", "context_right": " and"}
    strike = {**span(BODY, "the cat"), "type": "strikeout", "comment": ""}
    del strike["color"]
    write(root, "Initial", "0001", draft([("Title", []), (BODY, [span(BODY, "The dog", 1)])]))
    write(root, "Final", "0001", draft([(BODY, [note, strike])], {"Thesis": 4, "Style": "N/A"}))
    write(root, "Reflection", "0001", draft([("Looking back.", [])]))
    write(root, "Initial", "0002", draft([(BODY, [])]), essay=2)
    (root / "Batch_1" / "Course_1" / "Class_1" / "Essay_1" / "prompt_rubric.txt").write_text(
        "Write about a pet.", encoding="utf-8"
    )
    (root / "Batch_1" / "Course_1" / "Class_1" / "class_rubric.txt").write_text(
        "Class-wide rubric.", encoding="utf-8"
    )
    return root


def test_rows_offsets_order_and_grades(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = build_dataset(corpus, out, progress=False)
    total = {c: sum(per.values()) for c, per in summary["rows"].items()}
    # revisions: the annotation of Initial and the two of Final (Reflection comes after it)
    assert total == {"essays": 2, "drafts": 4, "paragraphs": 5, "annotations": 3, "revisions": 3}
    drafts = {r["draft_id"]: r for r in every_split(out, "drafts")}
    initial, final, reflection = (
        drafts[f"Batch_1_Course_1_Class_1_Essay_1_{s}_ID0001"]
        for s in ("Initial", "Final", "Reflection")
    )
    # Known stages in workflow order, an unknown stage after them.
    assert [d["stage_index"] for d in (initial, final, reflection)] == [0, 1, 2]
    assert initial["previous_draft_id"] is None
    assert reflection["previous_draft_id"] == final["draft_id"]
    assert final["grades"] == [
        {"item": "Thesis", "score": 4.0, "raw": "4"},
        {"item": "Style", "score": None, "raw": "N/A"},
    ]
    assert final["overall_comment"] == "Good work overall."
    assert initial["assignment_text"] == "Write about a pet."
    other = drafts["Batch_1_Course_1_Class_1_Essay_2_Initial_ID0002"]
    assert other["assignment_text"] == "Class-wide rubric."  # found by looking upward

    anns = every_split(out, "annotations")
    by_type = {a["type"]: a for a in anns}
    hl = by_type["highlight"]
    # "The dog" occurs twice; the contexts pick the second occurrence.
    assert (hl["start"], hl["end"]) == (BODY.index("The dog", 1), BODY.index("The dog", 1) + 7)
    st = by_type["strikeout"]
    assert BODY[st["start"] : st["end"]] == "the cat"
    nt = by_type["note"]
    assert nt["start"] == nt["end"] == BODY.index(" and")
    assert nt["text"] is None and nt["color"] is None

    paras = every_split(out, "paragraphs")
    final_para = next(p for p in paras if p["draft_id"] == final["draft_id"])
    assert final_para["instructor_comments"] == ["Why?"]  # the empty strikeout comment is left out
    assert final_para["num_annotations"] == 2


def test_essays_config_lists_ordered_drafts(corpus: Path, tmp_path: Path) -> None:
    build_dataset(corpus, tmp_path / "out", progress=False)
    essays = every_split(tmp_path / "out", "essays")
    first = next(e for e in essays if e["essay_id"] == "Batch_1_Course_1_Class_1_Essay_1_ID0001")
    assert first["stages"] == ["Initial", "Final", "Reflection"]
    assert first["num_drafts"] == 3
    assert first["assignment_files"] == ["Batch_1/Course_1/Class_1/Essay_1/prompt_rubric.txt"]


def test_locate_span_reports_missing_text() -> None:
    ann = {"type": "highlight", "text": "absent words", "context_left": "", "context_right": ""}
    assert locate_span(BODY, ann) == (-1, -1)
    note = {"type": "note", "context_left": "nowhere", "context_right": "at all"}
    assert locate_span(BODY, note) == (-1, -1)


def test_stage_order_fallback() -> None:
    stages = ["Final", "Zeta", "Initial", "Outline", "Alpha", "Revision"]
    assert sorted(stages, key=stage_sort_key) == [
        "Outline",
        "Initial",
        "Revision",
        "Final",
        "Alpha",
        "Zeta",
    ]


def test_splits_are_deterministic_and_student_disjoint() -> None:
    ids = [f"ID{i:04d}" for i in range(2000)]
    splits = [split_of(s) for s in ids]
    assert splits == [split_of(s) for s in ids]
    shares = {name: splits.count(name) / len(ids) for name in ("train", "validation", "test")}
    assert 0.75 < shares["train"] < 0.85
    assert 0.07 < shares["validation"] < 0.13 and 0.07 < shares["test"] < 0.13


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        ('{"paragraphs": [', "line 1 column 17", "malformed JSON"),
        ('{"annotations": []}', "paragraphs", "missing required key"),
        (
            json.dumps(
                draft(
                    [
                        (
                            "x",
                            [
                                {
                                    "type": "underline",
                                    "comment": "",
                                    "context_left": "",
                                    "context_right": "",
                                }
                            ],
                        )
                    ]
                )
            ),
            "paragraphs[0].annotations[0].type",
            "unknown annotation type 'underline'",
        ),
        (
            json.dumps({"paragraphs": [{"body": 3, "annotations": []}]}),
            "paragraphs[0].body",
            "expected a string",
        ),
        (
            json.dumps(draft([("x", [])], {"Thesis": [1]})),
            "annotations[0].grades.Thesis",
            "expected a number or a string",
        ),
    ],
)
def test_bad_drafts_are_named_and_previous_output_kept(
    corpus: Path, tmp_path: Path, raw: str, field: str, message: str
) -> None:
    out = tmp_path / "out"
    build_dataset(corpus, out, progress=False)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = write(corpus, "Revision", "0009", None, raw=raw)
    with pytest.raises(CorpusProblems) as info:
        build_dataset(corpus, out, progress=False)
    [problem] = info.value.problems
    assert isinstance(problem, CorpusError)
    assert problem.path == str(bad) and problem.field == field
    assert message in problem.message
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "out"]  # no temp left


@pytest.mark.parametrize(
    ("literal", "shown"), [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"),
                           ("1e999", "1e999")]
)  # fmt: skip
def test_non_finite_grades_are_rejected_naming_the_field(
    corpus: Path, tmp_path: Path, literal: str, shown: str
) -> None:
    # Python's json reads NaN and Infinity (not JSON) and 1e999 (beyond a float) as floats,
    # which the build stored as grades (#18 item 9).
    raw = json.dumps(draft([("x", [])], {"Thesis": 3, "Style": 1.5})).replace("1.5", literal)
    bad = write(corpus, "Revision", "0009", None, raw=raw)
    with pytest.raises(CorpusProblems) as info:
        build_dataset(corpus, tmp_path / "out", progress=False)
    [problem] = info.value.problems
    assert (problem.path, problem.field) == (str(bad), "annotations[0].grades.Style")
    assert problem.message == f"{shown} is not a JSON number (expected a finite number)"
    assert not (tmp_path / "out").exists()


def test_every_problem_of_a_file_is_listed(corpus: Path, capsys) -> None:
    # Four problems planted in one file, one in another: all five listed (#18 item 9).
    data = draft([(BODY, [span(BODY, "The dog")]), ("Second.", [])], {"Thesis": 4})
    data["paragraphs"][0]["annotations"][0]["color"] = "purple"
    data["paragraphs"][0]["annotations"].append({"type": "underline"})
    data["paragraphs"][1]["body"] = "lone \ud800 surrogate"
    data["annotations"][0]["grades"]["Voice"] = float("nan")
    bad = write(corpus, "Revision", "0009", data)
    other = write(corpus, "Revision", "0008", {"paragraphs": [], "extra": 1})
    with pytest.raises(CorpusProblems) as info:
        read_corpus(corpus, progress=False)
    by_file = {p.path: p.problems for p in info.value.problems}
    assert sorted(by_file[str(bad)]) == [
        ("annotations[0].grades.Voice", "NaN is not a JSON number (expected a finite number)"),
        ("paragraphs[0].annotations[0].color", "unknown colour 'purple' (expected one of "
         "green, pink, yellow, generic)"),
        ("paragraphs[0].annotations[1].type", "unknown annotation type 'underline' (expected "
         "one of highlight, note, strikeout)"),
        ("paragraphs[1].body", "the string holds a lone surrogate U+D800"),
    ]  # fmt: skip
    assert by_file[str(other)] == [("extra", "unexpected top-level key")]
    assert main(["build", "--source", str(corpus), "--out", "never", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sefora build: error: 5 problem(s) in the corpus:\n")
    assert f"  - {bad}: paragraphs[1].body: the string holds a lone surrogate U+D800" in err
    assert f"  - {other}: extra: unexpected top-level key" in err
    assert not Path("never").exists()


def test_every_bad_file_is_reported(corpus: Path) -> None:
    write(corpus, "Revision", "0008", None, raw="not json")
    write(corpus, "Revision", "0009", {"paragraphs": "nope"})
    (corpus / "Batch_1" / "notes_ID12.json").write_text("{}", encoding="utf-8")
    with pytest.raises(CorpusProblems) as info:
        read_corpus(corpus, progress=False)
    assert len(info.value.problems) == 3
    text = str(info.value)
    assert "ID0008.json" in text and "ID0009.json: paragraphs" in text
    assert "notes_ID12.json" in text and "file name does not follow" in text


def test_empty_or_missing_source(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="no draft files"):
        build_dataset(tmp_path / "empty", tmp_path / "out", progress=False)
    with pytest.raises(CorpusError, match="does not exist"):
        build_dataset(tmp_path / "missing", tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_refuses_to_replace_a_foreign_folder(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious", encoding="utf-8")
    with pytest.raises(CorpusError, match="not a previous `sefora build` output"):
        build_dataset(corpus, out, progress=False)
    assert (out / "thesis.tex").read_text(encoding="utf-8") == "precious"


def test_cli_build_and_errors(corpus: Path, tmp_path: Path, capsys) -> None:
    assert main(["build", "--source", str(corpus), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"]["drafts"]
    assert main(["build", "--source", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "nope" in err and "Traceback" not in err


def test_card_yaml_lists_every_config(corpus: Path, tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    build_dataset(corpus, tmp_path / "out", progress=False)
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["license"] == "cc-by-4.0"
    names = [c["config_name"] for c in meta["configs"]]
    assert names == ["essays", "drafts", "paragraphs", "annotations", "revisions"]
    for c in meta["configs"]:
        for entry in c["data_files"]:
            assert list((tmp_path / "out").glob(entry["path"])), entry
    assert "## Citation" in card and "Content warning" in card
    assert meta["size_categories"] == ["n<1K"]
    assert "`annotations` list<struct{type: string" in card
    example = json.loads(card.split("```json")[1].split("```")[0])
    assert example["num_annotations"] >= 1 and example["paragraph_index"] >= 0


def test_bundled_sample_builds_by_default(tmp_path: Path, monkeypatch) -> None:
    from sefora_dataset import SAMPLE_SOURCE

    raw = [json.loads(p.read_text(encoding="utf-8")) for p in SAMPLE_SOURCE.rglob("*.json")]
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--quiet"]) == 0  # default source = sample, default out = ./sefora
    paragraphs = load_dataset("sefora", "paragraphs", split="train+validation+test")
    assert len(paragraphs) == sum(len(d["paragraphs"]) for d in raw)
    anns = load_dataset("sefora", "annotations", split="train+validation+test")
    assert len(anns) == sum(len(p["annotations"]) for d in raw for p in d["paragraphs"])
    assert {a["type"] for a in anns} == {"highlight", "note", "strikeout"}
    for a in anns:
        if a["type"] != "note":
            body = paragraphs.filter(lambda p, pid=a["paragraph_id"]: p["paragraph_id"] == pid)[0]
            assert body["body"][a["start"] : a["end"]] == a["text"]
    card = (tmp_path / "sefora" / "README.md").read_text(encoding="utf-8")
    assert "invented sample corpus" in card


def test_rebuild_in_same_folder_is_not_served_from_stale_cache(corpus: Path, tmp_path: Path):
    out = tmp_path / "out"
    build_dataset(corpus, out, progress=False)
    assert len(every_split(out, "drafts")) == 4
    write(corpus, "Revision", "0001", draft([("A new revision.", [])]))
    build_dataset(corpus, out, progress=False)
    drafts = every_split(out, "drafts")
    assert len(drafts) == 5 and "A new revision." in str(drafts["paragraphs"])
