"""The draft JSON schema (every violation listed with its JSON path) and the configs'
Features."""

from __future__ import annotations

from typing import Any

from datasets import Features, List, Value

from sefora_common.jsonl import member_path

ANNOTATION_TYPES = ("highlight", "note", "strikeout")
COLORS = ("green", "pink", "yellow", "generic")
#: Meaning of the highlight colours in the instructors' legend.
COLOR_LEGEND = {
    "pink": "great line",
    "green": "interesting: expand on this in the next draft",
    "yellow": "a problem in this sentence",
    "generic": "no colour convention",
}

_SPAN_KEYS = {"type", "comment", "context_left", "context_right", "text"}
_ALLOWED_KEYS = {
    "highlight": _SPAN_KEYS | {"color"},
    "strikeout": _SPAN_KEYS,
    "note": {"type", "comment", "context_left", "context_right"},
}
_DOCUMENT_KEYS = {"grades", "comment", "Peer Comment"}


class _Problems:
    """The (JSON path, message) problems found in one draft, in document order."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def expect(self, cond: bool, field: str, message: str) -> bool:
        """Record ``message`` at ``field`` unless ``cond``; return ``cond``."""
        if not cond:
            self.found.append((field, message))
        return cond

    def string(self, value: Any, field: str, nullable: bool = False) -> None:
        ok = isinstance(value, str) or (nullable and value is None)
        kind = "a string or null" if nullable else "a string"
        self.expect(ok, field, f"expected {kind}, got {type(value).__name__}")


def _check_annotation(ann: Any, check: _Problems, field: str) -> None:
    if not check.expect(isinstance(ann, dict), field, "expected an object"):
        return
    if not check.expect("type" in ann, field, "missing required key 'type'"):
        return
    kind = ann["type"]
    if not check.expect(
        isinstance(kind, str) and kind in ANNOTATION_TYPES,
        f"{field}.type",
        f"unknown annotation type {kind!r} (expected one of {', '.join(ANNOTATION_TYPES)})",
    ):
        return
    required = _ALLOWED_KEYS[kind] - ({"color"} if kind != "highlight" else set())
    for key in sorted(required):
        check.expect(key in ann, field, f"missing required key {key!r} for a {kind}")
    for key in sorted(set(ann) - _ALLOWED_KEYS[kind]):
        check.expect(False, f"{field}.{key}", f"unexpected key for a {kind}")
    for key in sorted(required - {"type", "color"}):
        if key in ann:
            check.string(ann[key], f"{field}.{key}")
    if kind == "highlight" and "color" in ann:
        check.expect(
            ann["color"] in COLORS,
            f"{field}.color",
            f"unknown colour {ann['color']!r} (expected one of {', '.join(COLORS)})",
        )


def _check_document_annotation(doc: Any, check: _Problems, field: str) -> None:
    if not check.expect(isinstance(doc, dict), field, "expected an object"):
        return
    for key in sorted(set(doc) - _DOCUMENT_KEYS):
        check.expect(False, f"{field}.{key}", "unexpected key in a document-level annotation")
    grades = doc.get("grades", {})
    if check.expect(
        isinstance(grades, dict), f"{field}.grades", "expected an object item -> score"
    ):
        for item, score in grades.items():
            check.expect(
                score is None
                or isinstance(score, (int, float, str))
                and not isinstance(score, bool),
                member_path(f"{field}.grades", item),
                f"expected a number or a string, got {type(score).__name__}",
            )
    for key in ("comment", "Peer Comment"):
        if key in doc:
            check.string(doc[key], f"{field}.{key}", nullable=True)


def draft_problems(data: Any) -> list[tuple[str, str]]:
    """Every schema violation of a draft as (JSON path, message), in document order."""
    check = _Problems()
    if not check.expect(isinstance(data, dict), "", "expected a JSON object at the top level"):
        return check.found
    for key in sorted(set(data) - {"paragraphs", "annotations"}):
        check.expect(False, key, "unexpected top-level key")
    paragraphs = data.get("paragraphs")
    if check.expect("paragraphs" in data, "paragraphs", "missing required key") and check.expect(
        isinstance(paragraphs, list), "paragraphs", "expected a list"
    ):
        for i, para in enumerate(paragraphs):
            field = f"paragraphs[{i}]"
            if not check.expect(isinstance(para, dict), field, "expected an object"):
                continue
            for key in ("body", "annotations"):
                check.expect(key in para, f"{field}.{key}", "missing required key")
            if "body" in para:
                check.string(para["body"], f"{field}.body")
            anns = para.get("annotations", [])
            if check.expect(isinstance(anns, list), f"{field}.annotations", "expected a list"):
                for j, ann in enumerate(anns):
                    _check_annotation(ann, check, f"{field}.annotations[{j}]")
    docs = data.get("annotations", [])
    if check.expect(isinstance(docs, list), "annotations", "expected a list"):
        for j, doc in enumerate(docs):
            _check_document_annotation(doc, check, f"annotations[{j}]")
    return check.found


# --- Features of the configs ------------------------------------------------------------

_ID_FIELDS = {
    "essay_id": Value("string"),
    "assignment_id": Value("string"),
    "student_id": Value("string"),
    "batch": Value("int32"),
    "course": Value("int32"),
    "class": Value("int32"),
    "essay": Value("int32"),
}

ANNOTATION_FIELDS = {
    "type": Value("string"),
    "text": Value("string"),
    "comment": Value("string"),
    "color": Value("string"),
    "context_left": Value("string"),
    "context_right": Value("string"),
    "start": Value("int32"),
    "end": Value("int32"),
}

GRADE_FIELDS = {"item": Value("string"), "score": Value("float64"), "raw": Value("string")}

ESSAY_FEATURES = Features(
    {
        **_ID_FIELDS,
        "assignment_text": Value("string"),
        "assignment_files": List(Value("string")),
        "draft_ids": List(Value("string")),
        "stages": List(Value("string")),
        "num_drafts": Value("int32"),
    }
)

DRAFT_FEATURES = Features(
    {
        "draft_id": Value("string"),
        **_ID_FIELDS,
        "stage": Value("string"),
        "stage_index": Value("int32"),
        "previous_draft_id": Value("string"),
        "paragraphs": List({"body": Value("string"), "annotations": List(ANNOTATION_FIELDS)}),
        "text": Value("string"),
        "grades": List(GRADE_FIELDS),
        "overall_comment": Value("string"),
        "peer_comment": Value("string"),
        "assignment_text": Value("string"),
        "assignment_files": List(Value("string")),
        "num_paragraphs": Value("int32"),
        "num_annotations": Value("int32"),
        "source_file": Value("string"),
    }
)

PARAGRAPH_FEATURES = Features(
    {
        "paragraph_id": Value("string"),
        "draft_id": Value("string"),
        **_ID_FIELDS,
        "stage": Value("string"),
        "stage_index": Value("int32"),
        "paragraph_index": Value("int32"),
        "body": Value("string"),
        "annotations": List(ANNOTATION_FIELDS),
        "instructor_comments": List(Value("string")),
        "num_annotations": Value("int32"),
        "num_comments": Value("int32"),
        "num_words": Value("int32"),
    }
)

ANNOTATION_FEATURES = Features(
    {
        "annotation_id": Value("string"),
        "paragraph_id": Value("string"),
        "draft_id": Value("string"),
        **_ID_FIELDS,
        "stage": Value("string"),
        "paragraph_index": Value("int32"),
        "annotation_index": Value("int32"),
        **ANNOTATION_FIELDS,
    }
)

REVISION_FEATURES = Features(
    {
        "annotation_id": Value("string"),
        "paragraph_id": Value("string"),
        "draft_id": Value("string"),
        "next_draft_id": Value("string"),
        **_ID_FIELDS,
        "stage": Value("string"),
        "next_stage": Value("string"),
        "paragraph_index": Value("int32"),
        "annotation_index": Value("int32"),
        "type": Value("string"),
        "color": Value("string"),
        "comment": Value("string"),
        "comment_category": Value("string"),
        "paragraph": Value("string"),
        "start": Value("int32"),
        "end": Value("int32"),
        "span_text": Value("string"),
        "next_paragraph_index": Value("int32"),
        "next_paragraph": Value("string"),
        "paragraph_similarity": Value("float64"),
        "next_start": Value("int32"),
        "next_end": Value("int32"),
        "next_span_text": Value("string"),
        "label": Value("string"),
        "edit_distance": Value("int32"),
        "moved": Value("bool"),
    }
)

CONFIG_FEATURES = {
    "essays": ESSAY_FEATURES,
    "drafts": DRAFT_FEATURES,
    "paragraphs": PARAGRAPH_FEATURES,
    "annotations": ANNOTATION_FEATURES,
    "revisions": REVISION_FEATURES,
}
