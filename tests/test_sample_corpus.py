"""Checks that the invented sample corpus is valid SEFORA-format data and matches its README.

Uses only `json` and `pathlib` (no project imports), so it checks the data independently of
the reader that consumes it.
"""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "sefora_dataset" / "sample"
CORPUS = SAMPLE_DIR / "SEFORA-sample"
CONTEXT = 20
COLOURS = {"pink", "green", "yellow", "generic"}
KEYS = {
    "highlight": {"type", "color", "text", "comment", "context_left", "context_right"},
    "note": {"type", "comment", "context_left", "context_right"},
    "strikeout": {"type", "text", "comment", "context_left", "context_right"},
}
NAME = re.compile(r"Batch_(\d+)_Course_(\d+)_Class_(\d+)_Essay_(\d+)_([A-Za-z]+)_ID(\d{4})\.json")
DRAFT_FILES = sorted(CORPUS.rglob("*.json"))


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def inline_annotations(path: Path) -> list[tuple[str, dict]]:
    """(paragraph body, annotation) pairs of one draft."""
    return [(p["body"], a) for p in load(path)["paragraphs"] for a in p["annotations"]]


def contexts_fit(body: str, ann: dict) -> bool:
    """True when some anchor in `body` has exactly `ann`'s 20-character contexts around it."""
    left, right = ann["context_left"], ann["context_right"]
    if ann["type"] == "note":
        anchors = [(p, p) for p in range(len(body) + 1)]
    else:
        text = ann["text"]
        anchors = [(s, s + len(text)) for s in range(len(body)) if body.startswith(text, s)]
    return any(
        body[max(0, start - CONTEXT) : start] == left and body[end : end + CONTEXT] == right
        for start, end in anchors
    )


def figures() -> dict[str, int]:
    """The sample's figures computed from the files, labelled as in the sample README."""
    counts: Counter[str] = Counter()
    essays, students, assignments = set(), set(), set()
    for path in DRAFT_FILES:
        batch, course, klass, essay, _stage, student = NAME.fullmatch(path.name).groups()
        students.add(student)
        assignments.add((batch, course, klass, essay))
        essays.add((batch, course, klass, essay, student))
        draft = load(path)
        for paragraph in draft["paragraphs"]:
            counts["Paragraphs"] += 1
            counts["Paragraphs with at least one annotation"] += bool(paragraph["annotations"])
            for ann in paragraph["annotations"]:
                counts["Inline annotations"] += 1
                counts[
                    {"highlight": "Highlights", "note": "Notes", "strikeout": "Strikeouts"}[
                        ann["type"]
                    ]
                ] += 1
                if ann["type"] == "highlight":
                    counts[f"{ann['color'].capitalize()} highlights"] += 1
                counts["Inline annotations with an empty comment"] += ann["comment"] == ""
        overall = draft.get("annotations") or []
        counts["Drafts with document-level grades"] += any(a.get("grades") for a in overall)
        counts["Drafts with an overall comment"] += any(a.get("comment") for a in overall)
    counts.update(
        {
            "Drafts": len(DRAFT_FILES),
            "Essays (student × assignment)": len(essays),
            "Students": len(students),
            "Assignments": len(assignments),
            "Prompt/rubric files": len(list(CORPUS.rglob("*.txt"))),
        }
    )
    return dict(counts)


def test_sample_has_drafts() -> None:
    assert len(DRAFT_FILES) >= 8, f"expected the sample drafts under {CORPUS}"


@pytest.mark.parametrize("path", DRAFT_FILES, ids=lambda p: p.stem)
def test_layout_matches_file_name(path: Path) -> None:
    match = NAME.fullmatch(path.name)
    assert match, f"{path.name} does not follow the SEFORA naming scheme"
    batch, course, klass, essay, stage, _ = match.groups()
    rel = path.relative_to(CORPUS).parts
    assert rel[:-1] == (
        f"Batch_{batch}",
        f"Course_{course}",
        f"Class_{klass}",
        f"Essay_{essay}",
        stage,
    )


@pytest.mark.parametrize("path", DRAFT_FILES, ids=lambda p: p.stem)
def test_json_is_pretty_printed_utf8(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("path", DRAFT_FILES, ids=lambda p: p.stem)
def test_annotation_fields_follow_the_type(path: Path) -> None:
    for paragraph in load(path)["paragraphs"]:
        assert set(paragraph) == {"body", "annotations"}
        assert isinstance(paragraph["body"], str)
        for ann in paragraph["annotations"]:
            assert set(ann) == KEYS[ann["type"]], ann
            assert isinstance(ann["comment"], str)
            if ann["type"] == "highlight":
                assert ann["color"] in COLOURS


@pytest.mark.parametrize("path", DRAFT_FILES, ids=lambda p: p.stem)
def test_spans_and_contexts_are_exact(path: Path) -> None:
    for body, ann in inline_annotations(path):
        left, right = ann["context_left"], ann["context_right"]
        assert len(left) <= CONTEXT and len(right) <= CONTEXT, ann
        span = ann.get("text", "")
        if ann["type"] != "note":
            assert span and span in body, f"{path.name}: {span!r} not in its paragraph"
        assert left + span + right in body, f"{path.name}: context of {ann} not in body"
        assert contexts_fit(body, ann), f"{path.name}: contexts of {ann} are not the 20 chars"


def test_every_type_and_colour_appears() -> None:
    anns = [a for path in DRAFT_FILES for _, a in inline_annotations(path)]
    assert {a["type"] for a in anns} == set(KEYS)
    assert {a["color"] for a in anns if a["type"] == "highlight"} == COLOURS


def test_readme_figures_match_the_files() -> None:
    readme = (SAMPLE_DIR / "README.md").read_text(encoding="utf-8")
    table = {
        label: int(value)
        for label, value in re.findall(r"^\| ([^|]+?) \| (\d+) \|$", readme, flags=re.M)
    }
    assert table == figures()


def test_document_level_annotations_cover_the_variants() -> None:
    drafts = [load(path) for path in DRAFT_FILES]
    assert any("annotations" not in d for d in drafts), "a draft without overall annotations"
    overall = [a for d in drafts for a in d.get("annotations", [])]
    assert any(a["comment"] is None for a in overall), "an overall comment that is null"
    assert all(set(a) == {"grades", "comment"} for a in overall)
    kinds = {type(v).__name__ for a in overall for v in a["grades"].values()}
    assert kinds == {"int", "float", "str"}
    assert {v for a in overall for v in a["grades"].values() if isinstance(v, str)} == {"N/A"}


def test_tricky_inline_cases_are_present() -> None:
    pairs = [pair for path in DRAFT_FILES for pair in inline_annotations(path)]
    assert any(a["comment"] == "" for _, a in pairs), "a bare annotation"
    assert any(a["type"] == "note" and a["context_left"] == "" for _, a in pairs)
    repeated = [a for body, a in pairs if "text" in a and body.count(a["text"]) > 1]
    assert repeated, "a span whose text occurs twice in its paragraph"
    paragraphs = [p for path in DRAFT_FILES for p in load(path)["paragraphs"]]
    assert any(not p["annotations"] for p in paragraphs), "a paragraph without annotations"
    bodies = [p["body"] for p in paragraphs]
    assert any("—" in b for b in bodies) and any("“" in b and "”" in b for b in bodies)


def nearest_prompt_file(stage_dir: Path) -> Path | None:
    """The first .txt found looking from the stage folder up to the class folder."""
    for folder in (stage_dir, stage_dir.parent, stage_dir.parent.parent):
        found = sorted(folder.glob("*.txt"))
        if found:
            return found[0]
    return None


def test_every_stage_finds_a_prompt_at_different_levels() -> None:
    stage_dirs = sorted({path.parent for path in DRAFT_FILES})
    levels = {}
    for stage_dir in stage_dirs:
        found = nearest_prompt_file(stage_dir)
        assert found is not None, f"no prompt/rubric above {stage_dir}"
        levels[stage_dir.relative_to(CORPUS).as_posix()] = len(stage_dir.parts) - len(
            found.parent.parts
        )
    assert set(levels.values()) == {0, 1, 2}, levels
    assert levels["Batch_9/Course_1/Class_1/Essay_2/Draft"] == 2, "Draft finds the class file"
