"""The draft JSON schema (validation with precise JSON paths) and the configs' Features."""

from __future__ import annotations

from typing import Any

from datasets import Features, List, Value

from .errors import CorpusError

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


def _expect(cond: bool, path: str, field: str, message: str) -> None:
    if not cond:
        raise CorpusError(path, field, message)


def _check_string(value: Any, path: str, field: str, nullable: bool = False) -> None:
    ok = isinstance(value, str) or (nullable and value is None)
    kind = "a string or null" if nullable else "a string"
    _expect(ok, path, field, f"expected {kind}, got {type(value).__name__}")


def _validate_annotation(ann: Any, path: str, field: str) -> None:
    _expect(isinstance(ann, dict), path, field, "expected an object")
    _expect("type" in ann, path, field, "missing required key 'type'")
    kind = ann["type"]
    _expect(
        kind in ANNOTATION_TYPES,
        path,
        f"{field}.type",
        f"unknown annotation type {kind!r} (expected one of {', '.join(ANNOTATION_TYPES)})",
    )
    required = _ALLOWED_KEYS[kind] - ({"color"} if kind != "highlight" else set())
    for key in sorted(required):
        _expect(key in ann, path, field, f"missing required key {key!r} for a {kind}")
    for key in sorted(set(ann) - _ALLOWED_KEYS[kind]):
        raise CorpusError(path, f"{field}.{key}", f"unexpected key for a {kind}")
    for key in sorted(required - {"type"}):
        _check_string(ann[key], path, f"{field}.{key}")
    if kind == "highlight":
        _expect(
            ann["color"] in COLORS,
            path,
            f"{field}.color",
            f"unknown colour {ann['color']!r} (expected one of {', '.join(COLORS)})",
        )


def _validate_document_annotation(doc: Any, path: str, field: str) -> None:
    _expect(isinstance(doc, dict), path, field, "expected an object")
    for key in sorted(set(doc) - _DOCUMENT_KEYS):
        raise CorpusError(path, f"{field}.{key}", "unexpected key in a document-level annotation")
    grades = doc.get("grades", {})
    _expect(isinstance(grades, dict), path, f"{field}.grades", "expected an object item -> score")
    for item, score in grades.items():
        _expect(
            score is None or isinstance(score, (int, float, str)) and not isinstance(score, bool),
            path,
            f"{field}.grades[{item!r}]",
            f"expected a number or a string, got {type(score).__name__}",
        )
    for key in ("comment", "Peer Comment"):
        if key in doc:
            _check_string(doc[key], path, f"{field}.{key}", nullable=True)


def validate_draft(data: Any, path: str) -> None:
    """Raise :class:`CorpusError` naming the file and JSON path of the first schema violation."""
    _expect(isinstance(data, dict), path, "", "expected a JSON object at the top level")
    _expect("paragraphs" in data, path, "paragraphs", "missing required key")
    for key in sorted(set(data) - {"paragraphs", "annotations"}):
        raise CorpusError(path, key, "unexpected top-level key")
    paragraphs = data["paragraphs"]
    _expect(isinstance(paragraphs, list), path, "paragraphs", "expected a list")
    for i, para in enumerate(paragraphs):
        field = f"paragraphs[{i}]"
        _expect(isinstance(para, dict), path, field, "expected an object")
        for key in ("body", "annotations"):
            _expect(key in para, path, f"{field}.{key}", "missing required key")
        _check_string(para["body"], path, f"{field}.body")
        _expect(
            isinstance(para["annotations"], list), path, f"{field}.annotations", "expected a list"
        )
        for j, ann in enumerate(para["annotations"]):
            _validate_annotation(ann, path, f"{field}.annotations[{j}]")
    docs = data.get("annotations", [])
    _expect(isinstance(docs, list), path, "annotations", "expected a list")
    for j, doc in enumerate(docs):
        _validate_document_annotation(doc, path, f"annotations[{j}]")


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
