"""Scoring every generation run with UniMatch against the instructors.

Each run file (one configuration and model) gives one result: macro and micro precision,
recall and F1 and the mean number of generated units, on the full set and on the
single-reference subset (paragraphs with exactly one instructor annotation), as in the
paper's Tables 3-6. Results go to ``<out>/<run>.json`` (plus per-paragraph figures in
``<run>.paragraphs.jsonl``); a run whose file and scoring options are unchanged since its
result was written is not scored again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from sefora_common.io import write_text
from sefora_dataset.schema import COLOR_LEGEND
from sefora_grid.errors import GridError, GridInputError
from sefora_grid.prompts import PromptConfig
from sefora_grid.runs import read_rows
from unimatch_metric import PROMPT_VERSION, SCORERS, SEGMENTERS, UniMatch, match
from unimatch_metric.report import ExampleResult, aggregate

#: How an annotation without a comment becomes a reference: "legend" reads a coloured
#: highlight by the instructors' colour legend (and a strikeout as "cut this"), quoting the
#: marked text; "skip" leaves it out. Generic highlights and empty notes carry no meaning
#: and are always left out.
BARE_ANNOTATIONS = ("legend", "skip")
RESULT_VERSION = 1


def reference_texts(annotations: Sequence[Mapping[str, Any]], bare: str = "legend") -> list[str]:
    """The instructor's reference feedback of a paragraph, one text per annotation."""
    if bare not in BARE_ANNOTATIONS:
        raise ValueError(f"bare must be one of {BARE_ANNOTATIONS}, got {bare!r}")
    texts = []
    for ann in annotations:
        comment = " ".join((ann.get("comment") or "").split())
        marked = " ".join((ann.get("text") or "").split())
        if comment:
            texts.append(comment)
        elif bare == "legend" and marked and ann["type"] == "strikeout":
            texts.append(f'Cut this: "{marked}"')
        elif bare == "legend" and marked and ann.get("color") in ("pink", "green", "yellow"):
            texts.append(f'{COLOR_LEGEND[ann["color"]].capitalize()}: "{marked}"')
    return texts


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
            ["paragraph_id", "annotations", "num_annotations"]
        )
        for row in rows:
            found[row["paragraph_id"]] = {
                "references": reference_texts(row["annotations"], bare),
                "num_annotations": row["num_annotations"],
            }
    return found


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes (to tell whether a run changed since it was scored)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


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
    ids = [row.get("paragraph_id") for row in rows]
    if len(set(ids)) != len(ids):
        raise GridInputError(path, "paragraph_id", "a paragraph appears more than once")
    PromptConfig.parse(identity["configuration"])
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
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The result of one run file (its ``rows``) and its per-paragraph figures.

    Paragraphs whose annotations give no reference text (see `reference_texts`) are left
    out and counted in ``n_no_reference``.
    """
    identity = run_identity(path, rows)
    threshold = metric.options.threshold
    unknown = [r["paragraph_id"] for r in rows if r["paragraph_id"] not in references]
    if unknown:
        raise GridInputError(
            path, "paragraph_id", f"{len(unknown)} id(s) not in the dataset, e.g. {unknown[0]}"
        )
    rows = sorted(rows, key=lambda r: r["paragraph_id"])
    scored = [r for r in rows if references[r["paragraph_id"]]["references"]]
    result = metric.compute(
        [r["feedback"] for r in scored],
        [references[r["paragraph_id"]]["references"] for r in scored],
        return_details=True,
    )
    details = result.pop("details")
    paragraphs, single = [], []
    for row, detail in zip(scored, details, strict=True):
        n_annotations = references[row["paragraph_id"]]["num_annotations"]
        ok = detail["error"] is None
        if ok and n_annotations == 1:
            single.append(_example(detail, threshold))
        paragraphs.append(
            {
                "paragraph_id": row["paragraph_id"],
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
    config = PromptConfig.parse(identity["configuration"])
    summary = {
        "result_version": RESULT_VERSION,
        "run": path.name,
        **identity,
        "toggles": {
            "template": config.template,
            "guided": config.guided,
            "rubric": config.rubric,
            "few_shot": config.few_shot,
            "cot": config.cot,
        },
        "n_rows": len(rows),
        "n_no_reference": len(rows) - len(scored),
        "format_ok_rate": sum(bool(r.get("format_ok")) for r in rows) / len(rows),
        "mean_prompt_tokens": float(np.mean([r["prompt_tokens"] for r in rows])),
        "mean_completion_tokens": float(np.mean(completion)) if completion else None,
        "full": full,
        "single_reference": aggregate(single, threshold),
        "unimatch": unimatch_config,
    }
    return summary, paragraphs


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
    references = load_references(data_dir, {t[3] for t in todo}, bare) if todo else {}
    written = []
    for path, digest, rows, _ in tqdm(
        todo, desc="evaluate", unit="run", disable=_disabled(progress)
    ):
        summary, paragraphs = evaluate_run(path, rows, references, metric)
        summary = {**summary, "run_sha256": digest, "scoring": scoring}
        lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in paragraphs)
        write_text(out_dir / f"{path.stem}.paragraphs.jsonl", lines)
        write_text(out_dir / f"{path.stem}.json", json.dumps(summary, indent=2) + "\n")
        written.append(summary)
    return written


def _disabled(progress: bool | None) -> bool | None:
    return None if progress is None else not progress
