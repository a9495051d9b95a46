"""Build the dataset: rows of every config, student-disjoint splits, Arrow shards, card.

The output folder is a plain Hugging Face data folder (Arrow files + a README whose YAML
``configs:`` lists them), so ``load_dataset(out, "paragraphs")`` works offline. The build is
atomic: everything is written to a temporary sibling folder that replaces ``out`` at the end.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
from datasets import Features, List, Value

from sefora_common.io import check_output_folder, output_folder, write_bytes, write_text
from sefora_common.text import span_statistics

from . import SAMPLE_SOURCE, __version__
from .card import render_card
from .errors import CorpusError
from .read import Draft, Essay, read_corpus
from .revisions import essay_revision_rows, revision_summary
from .schema import CONFIG_FEATURES

SPLITS = ("train", "validation", "test")
#: Cumulative shares of the 100 hash buckets: students in buckets [0, 80) go to train,
#: [80, 90) to validation, [90, 100) to test.
SPLIT_BUCKETS = ((80, "train"), (90, "validation"), (100, "test"))
BUILD_INFO = ".sefora-build.json"
#: How the ``text`` of a draft (the whole draft) joins its paragraph bodies.
DRAFT_PARAGRAPH_SEPARATOR = "\n\n"


def split_of(student_id: str) -> str:
    """The split of a student: a stable hash of the id, so splits never share a student."""
    bucket = int.from_bytes(hashlib.sha256(student_id.encode()).digest()[:8], "big") % 100
    return next(name for limit, name in SPLIT_BUCKETS if bucket < limit)


def _common_suffix(a: str, b: str) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def locate_span(body: str, ann: dict[str, Any]) -> tuple[int, int]:
    """Character offsets of an annotation in its paragraph, or ``(-1, -1)`` if not found.

    A highlight/strikeout is the occurrence of its text whose surroundings agree best with
    its context strings; a note is the point between its left and right contexts.
    """
    left, right = ann.get("context_left", ""), ann.get("context_right", "")
    if ann["type"] == "note":
        candidates = []
        for probe, offset in ((left + right, len(left)), (left, len(left)), (right, 0)):
            if probe and (at := body.find(probe)) >= 0:
                candidates = [at + offset]
                break
        return (candidates[0], candidates[0]) if candidates else (-1, -1)
    text = ann.get("text") or ""
    best, best_score = (-1, -1), -1
    start = body.find(text) if text else -1
    while start >= 0:
        end = start + len(text)
        score = _common_suffix(body[:start], left) + _common_prefix(body[end:], right)
        if score > best_score:
            best, best_score = (start, end), score
        start = body.find(text, start + 1)
    return best


def _ids(draft: Draft) -> dict[str, Any]:
    return {
        "essay_id": draft.essay_id,
        "assignment_id": draft.assignment_id,
        "student_id": draft.student_id,
        "batch": draft.batch,
        "course": draft.course,
        "class": draft.class_,
        "essay": draft.essay,
    }


def _annotation_row(body: str, ann: dict[str, Any]) -> dict[str, Any]:
    start, end = locate_span(body, ann)
    return {
        "type": ann["type"],
        "text": ann.get("text"),
        "comment": ann["comment"],
        "color": ann.get("color"),
        "context_left": ann["context_left"],
        "context_right": ann["context_right"],
        "start": start,
        "end": end,
    }


def _grade(item: str, score: Any) -> dict[str, Any]:
    """A rubric grade: the score as a number when it is one (else null), the raw value kept."""
    raw = None if score is None else str(score)
    try:
        value = None if score is None else float(score)
    except ValueError:
        value = None
    return {"item": item, "score": value, "raw": raw}


def draft_rows(draft: Draft) -> tuple[dict, list[dict], list[dict]]:
    """The drafts row of one draft, and its paragraphs and annotations rows."""
    ids = _ids(draft)
    paragraphs, paragraph_rows, annotation_rows = [], [], []
    for p_index, para in enumerate(draft.data["paragraphs"]):
        body = para["body"]
        anns = [_annotation_row(body, a) for a in para["annotations"]]
        paragraphs.append({"body": body, "annotations": anns})
        paragraph_id = f"{draft.draft_id}_P{p_index:03d}"
        comments = [a["comment"] for a in anns if a["comment"].strip()]
        paragraph_rows.append(
            {
                "paragraph_id": paragraph_id,
                "draft_id": draft.draft_id,
                **ids,
                "stage": draft.stage,
                "stage_index": draft.stage_index,
                "paragraph_index": p_index,
                "body": body,
                "annotations": anns,
                "instructor_comments": comments,
                "num_annotations": len(anns),
                "num_comments": len(comments),
                "num_words": len(body.split()),
            }
        )
        for a_index, ann in enumerate(anns):
            annotation_rows.append(
                {
                    "annotation_id": f"{paragraph_id}_A{a_index:02d}",
                    "paragraph_id": paragraph_id,
                    "draft_id": draft.draft_id,
                    **ids,
                    "stage": draft.stage,
                    "paragraph_index": p_index,
                    "annotation_index": a_index,
                    **ann,
                }
            )
    documents = draft.data.get("annotations", [])
    grades = [_grade(item, s) for doc in documents for item, s in doc.get("grades", {}).items()]
    overall = [doc["comment"] for doc in documents if doc.get("comment")]
    peer = [doc["Peer Comment"] for doc in documents if doc.get("Peer Comment")]
    draft_row = {
        "draft_id": draft.draft_id,
        **ids,
        "stage": draft.stage,
        "stage_index": draft.stage_index,
        "previous_draft_id": draft.previous_draft_id,
        "paragraphs": paragraphs,
        "text": DRAFT_PARAGRAPH_SEPARATOR.join(p["body"] for p in paragraphs),
        "grades": grades,
        "overall_comment": "\n\n".join(overall) if overall else None,
        "peer_comment": "\n\n".join(peer) if peer else None,
        "assignment_text": draft.assignment_text,
        "assignment_files": draft.assignment_files,
        "num_paragraphs": len(paragraphs),
        "num_annotations": len(annotation_rows),
        "source_file": draft.source_file,
    }
    return draft_row, paragraph_rows, annotation_rows


def essay_row(essay: Essay) -> dict[str, Any]:
    """The essays row: ids, assignment text and the ordered drafts of one student's essay."""
    return {
        **_ids(essay.drafts[0]),
        "assignment_text": essay.assignment_text,
        "assignment_files": essay.assignment_files,
        "draft_ids": [d.draft_id for d in essay.drafts],
        "stages": [d.stage for d in essay.drafts],
        "num_drafts": len(essay.drafts),
    }


def config_rows(essays: list[Essay]) -> dict[str, dict[str, list[dict]]]:
    """Rows of every config, grouped by split (config -> split -> rows)."""
    out: dict[str, dict[str, list[dict]]] = {c: {s: [] for s in SPLITS} for c in CONFIG_FEATURES}
    for essay in essays:
        split = split_of(essay.drafts[0].student_id)
        out["essays"][split].append(essay_row(essay))
        d_rows = []
        for draft in essay.drafts:
            d_row, p_rows, a_rows = draft_rows(draft)
            d_rows.append(d_row)
            out["paragraphs"][split].extend(p_rows)
            out["annotations"][split].extend(a_rows)
        out["drafts"][split].extend(d_rows)
        out["revisions"][split].extend(essay_revision_rows(d_rows))
    return out


def _plain(feature: Any) -> bool:
    """Whether ``feature`` holds only `Value`s (in lists and structs): Python values of such
    features encode to themselves, so `datasets`' per-row encoding (slow) can be skipped."""
    if isinstance(feature, Value):
        return True
    if isinstance(feature, List):
        return _plain(feature.feature)
    return isinstance(feature, dict) and all(_plain(f) for f in feature.values())


def write_shard(rows: list[dict], features: Features, folder: Path, split: str) -> Path:
    """One Arrow (IPC stream) file whose schema carries the ``Features``.

    The file name ends with a digest of its bytes: ``datasets`` keys its cache on the card's
    data file paths, so a rebuilt dataset in the same folder must not reuse a stale cache.
    """
    encoded = rows if _plain(features) else [features.encode_example(r) for r in rows]
    table = pa.Table.from_pylist(encoded, features.arrow_schema)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    data = sink.getvalue().to_pybytes()
    path = folder / f"{split}-00000-of-00001-{hashlib.sha256(data).hexdigest()[:12]}.arrow"
    write_bytes(path, data)
    return path


def summarize(rows: dict[str, dict[str, list[dict]]]) -> dict[str, Any]:
    """Counts reported in the card and the build info: rows per config and split, and more."""
    every = {c: [r for s in SPLITS for r in rows[c][s]] for c in rows}
    return {
        "rows": {c: {s: len(rows[c][s]) for s in SPLITS} for c in rows},
        "students": {s: len({r["student_id"] for r in rows["essays"][s]}) for s in SPLITS},
        "annotation_types": dict(sorted(Counter(a["type"] for a in every["annotations"]).items())),
        "highlight_colors": dict(
            sorted(Counter(a["color"] for a in every["annotations"] if a["color"]).items())
        ),
        "annotated_paragraphs": sum(1 for p in every["paragraphs"] if p["num_annotations"]),
        "single_annotation_paragraphs": sum(
            1 for p in every["paragraphs"] if p["num_annotations"] == 1
        ),
        "located_spans": sum(1 for a in every["annotations"] if a["start"] >= 0),
        "drafts_with_grades": sum(1 for d in every["drafts"] if d["grades"]),
        "drafts_with_overall_comment": sum(1 for d in every["drafts"] if d["overall_comment"]),
        "assignments": len({e["assignment_id"] for e in every["essays"]}),
        "revisions": revision_summary(every["revisions"]),
        "span_sizes": span_statistics(
            [
                (p["body"], a["start"], a["end"])
                for p in every["paragraphs"]
                for a in p["annotations"]
            ]
        ),
    }


def build_dataset(
    source: str | Path = SAMPLE_SOURCE, out: str | Path = "sefora", progress: bool | None = None
) -> dict[str, Any]:
    """Read ``source``, write every config to ``out`` atomically; return the summary."""
    check_output_folder(out, BUILD_INFO, "sefora build", CorpusError)
    essays = read_corpus(source, progress=progress)
    rows = config_rows(essays)
    summary = summarize(rows)
    is_sample = Path(source).resolve() == SAMPLE_SOURCE.resolve()
    with output_folder(out, BUILD_INFO, "sefora build", CorpusError) as tmp:
        files: dict[str, dict[str, str]] = {}
        for config, per_split in rows.items():
            (tmp / config).mkdir()
            # A split without rows is left out: `datasets` cannot load an empty split.
            files[config] = {
                split: write_shard(rows_, CONFIG_FEATURES[config], tmp / config, split)
                .relative_to(tmp)
                .as_posix()
                for split, rows_ in per_split.items()
                if rows_
            }
        example = next(
            (r for s in SPLITS for r in rows["paragraphs"][s] if r["num_annotations"]),
            next(r for s in SPLITS for r in rows["paragraphs"][s]),
        )
        card = render_card(summary, files, example, is_sample, Path(out).resolve().name)
        write_text(tmp / "README.md", card)
        info = {"version": __version__, "source": str(Path(source).resolve()), **summary}
        write_text(tmp / BUILD_INFO, json.dumps(info, indent=2))
    return summary
