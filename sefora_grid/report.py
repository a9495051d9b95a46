"""The experiment grid's tables and plot from ``sefora evaluate`` results.

Writes, next to the results (or to ``--out``): ``report.md`` (a table shaped like the
paper's Table 3, every configuration, matched-pair effects of each prompt toggle, and the
correlation of verbosity with precision and F1), ``table3.csv``, ``configurations.csv``
and ``units_vs_scores.png``; with anchored runs the span-identification table with uptake
rates (``spans.csv``); with document-level runs their table (``documents.csv``) and
verbosity plot (``documents_units.png``).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sefora_common.errors import MissingExtraError
from sefora_common.io import write_bytes, write_text
from sefora_common.jsonl import read_json
from sefora_grid.documents import document_configs
from sefora_grid.errors import GridError, GridInputError
from sefora_grid.prompts import PromptConfig, all_configs

#: The base setting of the paper's Table 3 and the one-toggle ablations it reports.
BASE = PromptConfig(template="v2", guided=True, rubric=True, few_shot=False, cot=False)
#: Table 3's ablation columns: the F1 of the base setting with one toggle changed.
ABLATIONS: dict[str, dict[str, Any]] = {
    "f1_unconstrained_v1": {"template": "v1"},
    "f1_unguided": {"guided": False},
    "f1_no_rubric": {"rubric": False},
    "f1_few_shot": {"few_shot": True},
}
#: Each toggle's "on" and "off" values for matched-pair effects, with the paper's figure.
TOGGLES: dict[str, tuple[str, Any, Any, str]] = {
    "template": ("V2 (one point) vs V1", "v2", "v1", "+0.090 F1, wins 27 of 28"),
    "guided": ("guided vs unguided", True, False, "+0.035 to +0.059 F1"),
    "rubric": ("rubric vs none", True, False, "about 0"),
    "few_shot": ("few-shot vs zero-shot", True, False, "+0.017 F1"),
    "cot": ("chain-of-thought vs none", True, False, "+0.041 F1 over V1"),
    "anchored": ("anchored (quoted spans) vs not", True, False, "not in the paper"),
}
PAPER_CORRELATION = {"precision": -0.850, "f1": -0.840}
AVERAGES = ("macro", "micro")
_CONFIG_ORDER = {
    config_id: i
    for i, config_id in enumerate(
        [*(c.id for c in all_configs()), *(d.id for d in document_configs())]
    )
}


def load_results(results_dir: str | Path) -> list[dict[str, Any]]:
    """Every run result (``<run>.json`` written by ``sefora evaluate``) in a folder."""
    results_dir = Path(results_dir)
    results = []
    for path in sorted(results_dir.glob("*.json")):
        data = read_json(path, GridInputError)
        if isinstance(data, dict) and "configuration" in data and "full" in data:
            results.append(data)
    if not results:
        raise GridError(f"{results_dir}: no results of `sefora evaluate` here")
    seen: dict[tuple[str, str], str] = {}
    for r in results:
        key = (r["model"], r["configuration"])
        if key in seen:
            raise GridError(
                f"{results_dir}: {key[1]} of {key[0]} is scored twice ({seen[key]}, {r['run']})"
            )
        seen[key] = r["run"]
    return sorted(results, key=lambda r: (r["model"], _CONFIG_ORDER[r["configuration"]]))


def figure(result: Mapping[str, Any], name: str, average: str, subset: str = "full") -> Any:
    """A precision/recall/F1 figure of a result under the chosen average."""
    key = f"micro_{name}" if average == "micro" else name
    return result[subset][key]


def configuration_rows(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One flat row per model and configuration, with every figure (for the CSV)."""
    rows = []
    for r in results:
        full, single = r["full"], r["single_reference"]
        rows.append(
            {
                "model": r["model"],
                "configuration": r["configuration"],
                **r["toggles"],
                "n": full["n_examples"],
                "precision": full["precision"],
                "recall": full["recall"],
                "f1": full["f1"],
                "micro_precision": full["micro_precision"],
                "micro_recall": full["micro_recall"],
                "micro_f1": full["micro_f1"],
                "mean_predicted_units": full["mean_predicted_units"],
                "total_predicted_units": full["total_predicted_units"],
                "single_n": single["n_examples"],
                "single_precision": single["precision"],
                "single_recall": single["recall"],
                "single_f1": single["f1"],
                "single_micro_f1": single["micro_f1"],
                "n_failed": full["n_failed"],
                "n_no_reference": r["n_no_reference"],
                "format_ok_rate": r["format_ok_rate"],
                "mean_prompt_tokens": r["mean_prompt_tokens"],
                "mean_completion_tokens": r["mean_completion_tokens"],
            }
        )
    return rows


def _by_key(results: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Mapping[str, Any]]:
    return {(r["model"], r["configuration"]): r for r in results}


def table3(results: Sequence[Mapping[str, Any]], average: str) -> list[dict[str, Any]]:
    """Per model: the base setting's P/R/F1, its single-reference F1 and generated units,
    and the F1 of each one-toggle ablation (None where that run is missing)."""
    index = _by_key(results)
    rows = []
    for model in dict.fromkeys(r["model"] for r in results):
        base = index.get((model, BASE.id))
        row: dict[str, Any] = {"model": model}
        row["precision"] = figure(base, "precision", average) if base else None
        row["recall"] = figure(base, "recall", average) if base else None
        row["f1"] = figure(base, "f1", average) if base else None
        row["f1_single_reference"] = (
            figure(base, "f1", average, "single_reference") if base else None
        )
        row["units_per_paragraph"] = base["full"]["mean_predicted_units"] if base else None
        for column, change in ABLATIONS.items():
            other = index.get((model, replace(BASE, **change).id))
            row[column] = figure(other, "f1", average) if other else None
        rows.append(row)
    return rows


def toggle_effects(results: Sequence[Mapping[str, Any]], average: str) -> list[dict[str, Any]]:
    """For each toggle, the F1 difference over matched pairs (same model, other toggles
    equal): number of pairs, mean difference, and how often the "on" side wins."""
    index = _by_key(results)
    effects = []
    for toggle, (label, on, off, paper) in TOGGLES.items():
        deltas = []
        for (model, config_id), result in index.items():
            config = PromptConfig.parse(config_id)
            if getattr(config, toggle) != on:
                continue
            other = index.get((model, replace(config, **{toggle: off}).id))
            if other is None:
                continue
            a, b = figure(result, "f1", average), figure(other, "f1", average)
            if a is not None and b is not None:
                deltas.append(a - b)
        effects.append(
            {
                "toggle": label,
                "pairs": len(deltas),
                "mean_delta_f1": sum(deltas) / len(deltas) if deltas else None,
                "wins": sum(d > 0 for d in deltas),
                "paper": paper,
            }
        )
    return effects


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r, or None with fewer than 3 points or a constant series."""
    if len(xs) < 3:
        return None
    from scipy.stats import pearsonr

    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    return float(pearsonr(xs, ys).statistic)


def verbosity(results: Sequence[Mapping[str, Any]], average: str) -> dict[str, Any]:
    """Mean generated units per paragraph of each configuration, against its precision
    and F1, with Pearson's r across configurations."""
    points = [
        (
            r["full"]["mean_predicted_units"],
            figure(r, "precision", average),
            figure(r, "f1", average),
        )
        for r in results
        if r["full"]["mean_predicted_units"] is not None
    ]
    units = [p[0] for p in points]
    return {
        "units": units,
        "precision": [p[1] for p in points],
        "f1": [p[2] for p in points],
        "r_precision": pearson(units, [p[1] for p in points]),
        "r_f1": pearson(units, [p[2] for p in points]),
    }


def _pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, or a `MissingExtraError` naming the extra."""
    try:
        import matplotlib
    except ImportError as err:
        raise MissingExtraError("the verbosity plot of the report", "report", err.name) from err
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_verbosity(
    data: Mapping[str, Any], path: Path, average: str, per: str = "paragraph"
) -> None:
    """Scatter of generated units vs precision and F1 (one point per configuration), with
    least-squares lines and Pearson's r in the legend; written atomically as PNG."""
    plt = _pyplot()
    import numpy as np

    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    units = np.asarray(data["units"], dtype=float)
    for name, marker, color in (("precision", "o", "tab:blue"), ("f1", "s", "tab:red")):
        values = np.asarray(data[name], dtype=float)
        r = data[f"r_{name}"]
        label = f"{'F1' if name == 'f1' else 'Precision'} (r = {_num(r)})"
        ax.scatter(units, values, marker=marker, color=color, alpha=0.8, label=label)
        if r is not None:
            slope, intercept = np.polyfit(units, values, 1)
            xs = np.linspace(units.min(), units.max(), 50)
            ax.plot(xs, slope * xs + intercept, color=color, linewidth=1, alpha=0.7)
    ax.set_xlabel(f"generated feedback units per {per} (mean)")
    ax.set_ylabel(f"UniMatch score ({average})")
    ax.set_title(f"Verbosity vs precision and F1 ({len(units)} configurations)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    image = io.BytesIO()
    try:
        fig.savefig(image, format="png")
    finally:
        plt.close(fig)
    write_bytes(path, image.getvalue())


def _signatures(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """The distinct UniMatch signatures of the results (older results carry none)."""
    found = (r["unimatch"].get("signature") for r in results)
    return list(dict.fromkeys(sig for sig in found if sig)) or ["none recorded"]


def _num(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A Markdown table of ``rows`` with the given columns (numbers to 3 decimals)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(_num(row.get(c)) for c in columns) + " |")
    return "\n".join(lines)


def to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV text of ``rows`` (every key, in first-seen order, as header; empty for None)."""
    buffer = io.StringIO()
    fields = list(dict.fromkeys(k for row in rows for k in row))
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n", restval="")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buffer.getvalue()


def span_rows(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per anchored run: quote location, span P/R/F1, anchored UniMatch, uptake."""
    rows = []
    for r in results:
        a = r.get("anchored")
        if not a:
            continue
        up = a["uptake"]
        rows.append(
            {
                "model": r["model"],
                "configuration": r["configuration"],
                "n": a["n_examples"],
                "located_rate": a["located_rate"],
                "span_precision": a["span_precision"],
                "span_recall": a["span_recall"],
                "span_f1": a["span_f1"],
                "span_soft_f1": a["span_soft_f1"],
                "anchored_f1": a["f1"],
                "content_f1": a["content_f1"],
                "uptake_n": up["n_spans"],
                "uptake_hit": up["uptake_hit"],
                "uptake_missed": up["uptake_missed"],
                "uptake_all": up["uptake_all"],
            }
        )
    return rows


def document_rows(results: Sequence[Mapping[str, Any]], average: str) -> list[dict[str, Any]]:
    """One row per document-level run: P/R/F1 against the overall comments, units, length."""
    return [
        {
            "model": r["model"],
            "configuration": r["configuration"],
            **r["toggles"],
            "n": r["full"]["n_examples"],
            "precision": figure(r, "precision", average),
            "recall": figure(r, "recall", average),
            "f1": figure(r, "f1", average),
            "mean_predicted_units": r["full"]["mean_predicted_units"],
            "mean_reference_units": r["full"]["mean_reference_units"],
            "n_failed": r["full"]["n_failed"],
            "format_ok_rate": r["format_ok_rate"],
            "mean_completion_tokens": r["mean_completion_tokens"],
        }
        for r in results
    ]


def _verbosity_text(verbose: Mapping[str, Any], per: str, plot: Path, paper: bool) -> list[str]:
    against = (
        f" (paper: {PAPER_CORRELATION['precision']})",
        f" (paper: {PAPER_CORRELATION['f1']})",
    )
    if not paper:
        against = ("", "")
    return [
        f"Pearson r across configurations between generated units per {per} and "
        f"precision: {_num(verbose['r_precision'])}{against[0]}, and F1: "
        f"{_num(verbose['r_f1'])}{against[1]}; n = {len(verbose['units'])}.",
        f"![generated units vs precision and F1]({plot.name})",
    ]


def write_report(
    results_dir: str | Path, out_dir: str | Path | None = None, average: str = "macro"
) -> dict[str, Path]:
    """Write the report files; returns their paths by kind.

    Paragraph-level runs give Table 3, every configuration, toggle effects and the
    verbosity plot; anchored runs add the span-identification table (with uptake rates);
    document-level runs their own table and verbosity plot.
    """
    if average not in AVERAGES:
        raise GridError(f"average must be one of {AVERAGES}, got {average!r}")
    _pyplot()  # before anything is written: the report is complete or not written
    every = load_results(results_dir)
    results = [r for r in every if r.get("level", "paragraph") == "paragraph"]
    documents = [r for r in every if r.get("level") == "document"]
    out = Path(out_dir) if out_dir is not None else Path(results_dir)
    paths: dict[str, Path] = {"markdown": out / "report.md"}
    first = every[0]
    sections = [
        "# Feedback generation grid: UniMatch results",
        f"{len(every)} run(s), {len({r['model'] for r in every})} model(s); "
        f"{average} averages over paragraphs (drafts at document level); scorer: "
        f"{first['unimatch']['scorer']['name']}, segmenter: "
        f"{first['unimatch']['segmenter']['name']}.",
        "UniMatch signature(s): "
        + ", ".join(f"`{sig}`" for sig in _signatures(every))
        + " (results with one signature were computed the same way).",
    ]
    prefix = "micro_" if average == "micro" else ""
    if results:
        paths.update(
            table3=out / "table3.csv",
            configurations=out / "configurations.csv",
            plot=out / "units_vs_scores.png",
        )
        t3 = table3(results, average)
        configs = configuration_rows(results)
        effects = toggle_effects(results, average)
        verbose = verbosity(results, average)
        plot_verbosity(verbose, paths["plot"], average)
        write_text(paths["table3"], to_csv(t3))
        write_text(paths["configurations"], to_csv(configs))
        config_columns = [
            "model",
            "configuration",
            "n",
            f"{prefix}precision",
            f"{prefix}recall",
            f"{prefix}f1",
            "mean_predicted_units",
            "single_n",
            "single_f1" if average == "macro" else "single_micro_f1",
            "format_ok_rate",
        ]
        effect_rows = [
            {
                **e,
                "mean_delta_f1": None
                if e["mean_delta_f1"] is None
                else f"{e['mean_delta_f1']:+.3f}",
            }
            for e in effects
        ]
        sections += [
            "## Table 3: base setting (V2, guided, rubric, zero-shot) and one-toggle ablations",
            "F1 of the full set unless marked; units = generated feedback units per paragraph.",
            markdown_table(t3, list(t3[0])),
            "## Every configuration",
            markdown_table(configs, config_columns),
            "## Prompt toggles over matched pairs (same model, other toggles equal)",
            markdown_table(effect_rows, ["toggle", "pairs", "mean_delta_f1", "wins", "paper"]),
            "## Verbosity",
            *_verbosity_text(verbose, "paragraph", paths["plot"], paper=True),
        ]
    spans = span_rows(results)
    if spans:
        paths["spans"] = out / "spans.csv"
        write_text(paths["spans"], to_csv(spans))
        sections += [
            "## Span identification (anchored configurations)",
            "Span P/R/F1: the model's quoted spans matched one to one to the instructor's "
            "(IoU >= 0.5; soft: total IoU); notes count as their sentence. Anchored F1: "
            "UniMatch with pair weight content x (0.5 + 0.5 IoU); content F1: the same units "
            "without the spans. Uptake: the share of instructor-marked spans the feedback hit "
            "(or missed) that the student revised in the next draft.",
            markdown_table(spans, list(spans[0])),
        ]
    if documents:
        paths.update(documents=out / "documents.csv", documents_plot=out / "documents_units.png")
        rows = document_rows(documents, average)
        write_text(paths["documents"], to_csv(rows))
        verbose = verbosity(documents, average)
        plot_verbosity(verbose, paths["documents_plot"], average, per="draft")
        columns = ["model", "configuration", "n", "precision", "recall", "f1"]
        columns += ["mean_predicted_units", "mean_reference_units", "format_ok_rate"]
        sections += [
            "## Document level: overall assessments against the instructors' overall comments",
            markdown_table(rows, columns),
            "### Verbosity at document level",
            *_verbosity_text(verbose, "draft", paths["documents_plot"], paper=False),
        ]
    write_text(paths["markdown"], "\n\n".join(sections) + "\n")
    return paths
