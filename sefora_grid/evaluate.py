"""Scoring every generation run with UniMatch against the instructors.

Each run file (one configuration and model) gives one result: macro and micro precision,
recall and F1 and the mean number of generated units, on the full set and on the
single-reference subset (paragraphs with exactly one instructor annotation), as in the
paper's Tables 3-6. Document-level runs (``doc-*``) are scored against the drafts'
overall comments; anchored runs also get span-identification and uptake figures. Results
go to ``<out>/<run>.json`` (plus per-target figures in ``<run>.paragraphs.jsonl``); a run
whose file and scoring options are unchanged since its result was written is not scored
again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sefora_common.io import write_text
from sefora_common.progress import progress_bar
from sefora_dataset.revisions import uptake
from sefora_dataset.schema import COLOR_LEGEND
from sefora_grid.documents import DocumentConfig, is_document_config
from sefora_grid.errors import GridError, GridInputError
from sefora_grid.prompts import PromptConfig
from sefora_grid.runs import read_rows
from unimatch_metric import PROMPT_VERSION, SCORERS, SEGMENTERS, UniMatch, match
from unimatch_metric.match import ratio
from unimatch_metric.options import Options
from unimatch_metric.report import ExampleResult, aggregate
from unimatch_metric.spans import anchored_unimatch

#: How an annotation without a comment becomes a reference: "legend" reads a coloured
#: highlight by the instructors' colour legend (and a strikeout as "cut this"), quoting the
#: marked text; "skip" leaves it out. Generic highlights and empty notes carry no meaning
#: and are always left out.
BARE_ANNOTATIONS = ("legend", "skip")
RESULT_VERSION = 1


def reference_text(annotation: Mapping[str, Any], bare: str = "legend") -> str:
    """The instructor's reference feedback of one annotation ("" when it gives none)."""
    if bare not in BARE_ANNOTATIONS:
        raise ValueError(f"bare must be one of {BARE_ANNOTATIONS}, got {bare!r}")
    comment = " ".join((annotation.get("comment") or "").split())
    marked = " ".join((annotation.get("text") or "").split())
    if comment:
        return comment
    if bare == "legend" and marked and annotation["type"] == "strikeout":
        return f'Cut this: "{marked}"'
    if bare == "legend" and marked and annotation.get("color") in ("pink", "green", "yellow"):
        return f'{COLOR_LEGEND[annotation["color"]].capitalize()}: "{marked}"'
    return ""


def reference_texts(annotations: Sequence[Mapping[str, Any]], bare: str = "legend") -> list[str]:
    """The instructor's reference feedback of a paragraph, one text per annotation."""
    return [t for t in (reference_text(a, bare) for a in annotations) if t]


def load_references(
    data_dir: str | Path, splits: Iterable[str], bare: str
) -> dict[str, dict[str, Any]]:
    """Paragraph id -> its references and annotation count, for the given splits."""
    from datasets import load_dataset

    data_dir = Path(data_dir)
    if not (data_dir / "README.md").is_file():
        raise GridError(f"{data_dir}: no built dataset here (see `sefora build`)")
    found = {}
    for split in sorted(set(splits)):
        rows = load_dataset(str(data_dir), "paragraphs", split=split).select_columns(
            ["paragraph_id", "annotations", "num_annotations", "body"]
        )
        for row in rows:
            found[row["paragraph_id"]] = {
                "references": reference_texts(row["annotations"], bare),
                "num_annotations": row["num_annotations"],
                "body": row["body"],
                # (reference text, span) per annotation, for the anchored figures
                "items": [
                    (reference_text(a, bare), (a["start"], a["end"])) for a in row["annotations"]
                ],
            }
        for row in load_dataset(str(data_dir), "drafts", split=split).select_columns(
            ["draft_id", "overall_comment"]
        ):
            if (row["overall_comment"] or "").strip():
                found[row["draft_id"]] = {
                    "references": [row["overall_comment"]],
                    "num_annotations": 1,
                }
    return found


def load_revisions(data_dir: str | Path, splits: Iterable[str]) -> list[dict[str, Any]]:
    """The ``revisions`` rows (paragraph, span, label) of the given splits, for uptake rates;
    none for a dataset built before that config existed."""
    from datasets import load_dataset

    rows: list[dict[str, Any]] = []
    card = Path(data_dir) / "README.md"
    if "config_name: revisions" not in card.read_text(encoding="utf-8"):
        return rows
    for split in sorted(set(splits)):
        rows += load_dataset(str(data_dir), "revisions", split=split).select_columns(
            ["paragraph_id", "start", "end", "label"]
        )
    return rows


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes (to tell whether a run changed since it was scored)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_key(configuration: str) -> str:
    """The row field that identifies a target in a run of ``configuration``."""
    return "draft_id" if is_document_config(configuration) else "paragraph_id"


def parse_run_config(configuration: str) -> PromptConfig | DocumentConfig:
    """The paragraph- or document-level configuration an id names."""
    if is_document_config(configuration):
        return DocumentConfig.parse(configuration)
    return PromptConfig.parse(configuration)


def run_identity(path: Path, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The configuration, model and split of a run file; `GridInputError` if they are mixed."""
    if not rows:
        raise GridInputError(path, "", "the run file has no rows")
    identity: dict[str, Any] = {}
    for key in ("configuration", "model", "split"):
        values = {row.get(key) for row in rows}
        if len(values) != 1 or None in values:
            raise GridInputError(path, key, f"expected one value in every row, found {values}")
        identity[key] = values.pop()
    key = run_key(identity["configuration"])
    ids = [row.get(key) for row in rows]
    if len(set(ids)) != len(ids):
        raise GridInputError(path, key, "a target appears more than once")
    parse_run_config(identity["configuration"])
    return identity


def _example(detail: Mapping[str, Any], threshold: float | None) -> ExampleResult:
    scores = np.asarray(detail["scores"], dtype=float).reshape(
        len(detail["reference_units"]), len(detail["prediction_units"])
    )
    return ExampleResult(
        detail["prediction_units"], detail["reference_units"], scores, match(scores, threshold)
    )


def evaluate_run(
    path: Path,
    rows: Sequence[Mapping[str, Any]],
    references: Mapping[str, Mapping[str, Any]],
    metric: UniMatch,
    revisions: Sequence[Mapping[str, Any]] = (),
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The result of one run file (its ``rows``) and its per-target figures.

    Paragraphs whose annotations give no reference text (see `reference_texts`) are left
    out and counted in ``n_no_reference``. A document-level run is scored against the
    drafts' overall comments; an anchored run also gets its ``anchored`` figures (see
    `anchored_figures`).
    """
    identity = run_identity(path, rows)
    key = run_key(identity["configuration"])
    threshold = metric.options.threshold
    unknown = [r[key] for r in rows if r[key] not in references]
    if unknown:
        raise GridInputError(
            path, key, f"{len(unknown)} id(s) not in the dataset, e.g. {unknown[0]}"
        )
    rows = sorted(rows, key=lambda r: r[key])
    scored = [r for r in rows if references[r[key]]["references"]]
    result = metric.compute(
        [r["feedback"] for r in scored],
        [references[r[key]]["references"] for r in scored],
        return_details=True,
    )
    details = result.pop("details")
    paragraphs, single = [], []
    for row, detail in zip(scored, details, strict=True):
        n_annotations = references[row[key]]["num_annotations"]
        ok = detail["error"] is None
        if ok and n_annotations == 1:
            single.append(_example(detail, threshold))
        paragraphs.append(
            {
                key: row[key],
                "num_annotations": n_annotations,
                "precision": detail["precision"],
                "recall": detail["recall"],
                "f1": detail["f1"],
                "predicted_units": len(detail["prediction_units"]) if ok else None,
                "reference_units": len(detail["reference_units"]) if ok else None,
                "error": detail["error"],
            }
        )
    unimatch_config = result.pop("config")
    n_failed = result.pop("n_failed")
    full = {**result, "n_failed": n_failed}
    full["total_predicted_units"] = sum(p["predicted_units"] or 0 for p in paragraphs)
    completion = [r["completion_tokens"] for r in rows if r.get("completion_tokens") is not None]
    config = parse_run_config(identity["configuration"])
    summary = {
        "result_version": RESULT_VERSION,
        "run": path.name,
        **identity,
        "level": "document" if isinstance(config, DocumentConfig) else "paragraph",
        "toggles": dataclasses.asdict(config),
        "n_rows": len(rows),
        "n_no_reference": len(rows) - len(scored),
        "format_ok_rate": sum(bool(r.get("format_ok")) for r in rows) / len(rows),
        "mean_prompt_tokens": float(np.mean([r["prompt_tokens"] for r in rows])),
        "mean_completion_tokens": float(np.mean(completion)) if completion else None,
        "full": full,
        "single_reference": aggregate(single, threshold),
        "unimatch": unimatch_config,
    }
    if isinstance(config, PromptConfig) and config.anchored:
        summary["anchored"] = anchored_figures(rows, references, metric, revisions)
    return summary, paragraphs


def anchored_figures(
    rows: Sequence[Mapping[str, Any]],
    references: Mapping[str, Mapping[str, Any]],
    metric: UniMatch,
    revisions: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Span identification figures of an anchored run: how its quotes were located, span
    P/R/F1 and anchored UniMatch (`unimatch_metric.spans`) against the instructors'
    annotations, and the uptake rate of the instructor spans it hit
    (`sefora_dataset.revisions.uptake`, over paragraphs of drafts with a later stage)."""
    with_items = [r for r in rows if references[r["paragraph_id"]].get("items")]
    predictions: list[list[tuple[str, tuple[int, int] | None]]] = [
        [
            (i["comment"], (i["start"], i["end"]) if i["start"] >= 0 else None)
            for i in r.get("items", [])
        ]
        for r in with_items
    ]
    options = {f.name: getattr(metric.options, f.name) for f in dataclasses.fields(Options)}
    result = anchored_unimatch(
        predictions,
        [references[r["paragraph_id"]]["items"] for r in with_items],
        [references[r["paragraph_id"]]["body"] for r in with_items],
        **{**options, "return_details": False},
    )
    result.pop("config")
    methods = Counter(i["match"] or "no quote" for r in rows for i in r.get("items", []))
    spans: dict[str, list[tuple[int, int] | None]] = {
        r["paragraph_id"]: [span for _, span in preds if span is not None]
        for r, preds in zip(with_items, predictions, strict=True)
    }
    wanted = set(spans)
    return {
        **result,
        "quotes": dict(methods),
        "located_rate": ratio(
            sum(n for m, n in methods.items() if m in ("exact", "normalized", "fuzzy")),
            sum(methods.values()),
        ),
        "uptake": uptake([r for r in revisions if r["paragraph_id"] in wanted], spans),
    }


def scoring_identity(metric: UniMatch, bare: str) -> dict[str, Any]:
    """What decides the scores besides the run: the backends the options resolve to (so a
    new offline default counts as a change), their settings and the judge prompt version."""
    opts = metric.options
    named = {
        kind: registry.resolve_name(spec, opts) if isinstance(spec, str) else repr(spec)
        for kind, registry, spec in (
            ("segmenter", SEGMENTERS, opts.segmenter),
            ("scorer", SCORERS, opts.scorer),
        )
    }
    uses_llm = "llm" in named.values()
    return {
        "bare_annotations": bare,
        **named,
        "threshold": opts.threshold,
        "segment_references": opts.segment_references,
        "model": opts.model if uses_llm else None,
        "base_url": opts.base_url if uses_llm else None,
        "batch_size": opts.batch_size if uses_llm else None,
        "prompt_version": PROMPT_VERSION if uses_llm else None,
    }


def evaluate_runs(
    runs_dir: str | Path,
    out_dir: str | Path,
    data_dir: str | Path = "sefora",
    bare: str = "legend",
    progress: bool | None = None,
    **unimatch_options: Any,
) -> list[dict[str, Any]]:
    """Score every ``*.jsonl`` run in ``runs_dir`` not already scored with these options."""
    runs_dir, out_dir = Path(runs_dir), Path(out_dir)
    paths = sorted(runs_dir.glob("*.jsonl"))
    if not paths:
        raise GridError(f"{runs_dir}: no run files (*.jsonl) to evaluate")
    metric = UniMatch(progress=progress, **unimatch_options)
    scoring = scoring_identity(metric, bare)
    todo = []
    for path in paths:
        digest = file_digest(path)
        previous = out_dir / f"{path.stem}.json"
        if previous.is_file():
            old = json.loads(previous.read_text(encoding="utf-8"))
            if old.get("run_sha256") == digest and old.get("scoring") == scoring:
                continue
        rows = read_rows(path)
        todo.append((path, digest, rows, run_identity(path, rows)["split"]))
    splits = {t[3] for t in todo}
    references = load_references(data_dir, splits, bare) if todo else {}
    anchored = any(
        PromptConfig.parse(r[0]["configuration"]).anchored
        for _, _, r, _ in todo
        if not is_document_config(r[0]["configuration"])
    )
    revisions = load_revisions(data_dir, splits) if anchored else []
    written = []
    for path, digest, rows, _ in progress_bar(todo, desc="evaluate", unit="run", show=progress):
        summary, paragraphs = evaluate_run(path, rows, references, metric, revisions)
        summary = {**summary, "run_sha256": digest, "scoring": scoring}
        lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in paragraphs)
        write_text(out_dir / f"{path.stem}.paragraphs.jsonl", lines)
        write_text(out_dir / f"{path.stem}.json", json.dumps(summary, indent=2) + "\n")
        written.append(summary)
    return written
