"""Report pieces on results written here: Table 3 shape, matched-pair effects, verbosity
correlation, bad results folders; and how annotations become references."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from scipy.stats import pearsonr

from sefora_grid.errors import GridError
from sefora_grid.evaluate import reference_texts
from sefora_grid.prompts import PromptConfig, all_configs
from sefora_grid.report import (
    load_results,
    pearson,
    table3,
    toggle_effects,
    verbosity,
    write_report,
)


def result(model: str, config_id: str, f1: float, units: float, precision: float) -> dict:
    config = PromptConfig.parse(config_id)
    figures = {
        "precision": precision,
        "recall": f1 / 2,
        "f1": f1,
        "micro_precision": precision / 2,
        "micro_recall": f1 / 4,
        "micro_f1": f1 / 3,
        "mean_predicted_units": units,
        "mean_reference_units": 2.0,
        "n_examples": 10,
    }
    return {
        "run": f"{config_id}__{model}.jsonl",
        "configuration": config_id,
        "model": model,
        "split": "test",
        "toggles": {
            "template": config.template,
            "guided": config.guided,
            "rubric": config.rubric,
            "few_shot": config.few_shot,
            "cot": config.cot,
        },
        "n_rows": 10,
        "n_no_reference": 0,
        "format_ok_rate": 1.0,
        "mean_prompt_tokens": 900.0,
        "mean_completion_tokens": 40.0,
        "full": {**figures, "n_failed": 0, "total_predicted_units": int(units * 10)},
        "single_reference": {**figures, "f1": f1 + 0.1, "n_examples": 4},
        "unimatch": {"scorer": {"name": "embedding"}, "segmenter": {"name": "rules"}},
    }


GRID = [
    result("m1", "v2-guided-rubric-zs", 0.30, 1.0, 0.40),
    result("m1", "v1-guided-rubric-zs", 0.20, 4.0, 0.15),
    result("m1", "v2-unguided-rubric-zs", 0.26, 1.2, 0.35),
    result("m1", "v1-unguided-rubric-zs", 0.22, 3.0, 0.20),
    result("m2", "v2-guided-rubric-zs", 0.25, 1.1, 0.33),
    result("m2", "v2-guided-norubric-zs", 0.27, 1.0, 0.36),
    result("m2", "v2-guided-rubric-fs", 0.28, 1.0, 0.37),
]


def write_results(folder: Path, results: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for r in results:
        (folder / r["run"].replace(".jsonl", ".json")).write_text(json.dumps(r))
    (folder / "notes.json").write_text('["not a result"]')
    return folder


def test_table3_base_and_one_toggle_ablations() -> None:
    rows = {row["model"]: row for row in table3(GRID, "macro")}
    assert rows["m1"]["f1"] == 0.30 and rows["m1"]["f1_single_reference"] == pytest.approx(0.40)
    assert rows["m1"]["f1_unconstrained_v1"] == 0.20 and rows["m1"]["f1_unguided"] == 0.26
    assert rows["m1"]["f1_no_rubric"] is None and rows["m1"]["f1_few_shot"] is None
    assert rows["m2"]["f1_no_rubric"] == 0.27 and rows["m2"]["f1_few_shot"] == 0.28
    assert rows["m2"]["f1_unconstrained_v1"] is None
    micro = {row["model"]: row for row in table3(GRID, "micro")}
    assert micro["m1"]["f1"] == pytest.approx(0.10) and micro["m1"]["precision"] == 0.20


def test_toggle_effects_over_matched_pairs() -> None:
    effects = {e["toggle"].split()[0]: e for e in toggle_effects(GRID, "macro")}
    # V2 vs V1: (0.30-0.20) and (0.26-0.22) for m1; m2 has no V1 run.
    assert effects["V2"]["pairs"] == 2 and effects["V2"]["wins"] == 2
    assert effects["V2"]["mean_delta_f1"] == pytest.approx((0.10 + 0.04) / 2)
    # guided vs unguided: (0.30-0.26) and (0.20-0.22).
    assert effects["guided"]["pairs"] == 2 and effects["guided"]["wins"] == 1
    assert effects["guided"]["mean_delta_f1"] == pytest.approx((0.04 - 0.02) / 2)
    assert effects["rubric"]["mean_delta_f1"] == pytest.approx(0.25 - 0.27)
    assert effects["few-shot"]["mean_delta_f1"] == pytest.approx(0.28 - 0.25)
    assert effects["chain-of-thought"]["pairs"] == 0
    assert effects["chain-of-thought"]["mean_delta_f1"] is None


def test_verbosity_correlation() -> None:
    data = verbosity(GRID, "macro")
    assert data["r_precision"] == pytest.approx(pearsonr(data["units"], data["precision"])[0])
    assert data["r_precision"] < -0.9  # the grid above is built verbose-and-imprecise
    assert pearson([1.0, 2.0], [0.3, 0.2]) is None  # too few points
    assert pearson([1.0, 1.0, 1.0], [0.3, 0.2, 0.1]) is None  # constant


def test_write_report_files(tmp_path: Path) -> None:
    folder = write_results(tmp_path / "results", GRID)
    paths = write_report(folder, tmp_path / "report")
    with paths["table3"].open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["model"] for r in rows] == ["m1", "m2"] and rows[0]["f1_no_rubric"] == ""
    with paths["configurations"].open() as handle:
        configs = list(csv.DictReader(handle))
    assert len(configs) == len(GRID)
    order = [c.id for c in all_configs()]
    m1 = [c["configuration"] for c in configs if c["model"] == "m1"]
    assert m1 == sorted(m1, key=order.index)  # grouped by model, in `sefora configs` order
    text = paths["markdown"].read_text()
    assert "| m1 | 0.400 |" in text and "| V2 (one point) vs V1 | 2 | +0.070 | 2 |" in text
    assert paths["plot"].read_bytes().startswith(b"\x89PNG")
    assert not list((tmp_path / "report").glob(".*tmp"))  # no temporary files left


def test_bad_results_folders(tmp_path: Path) -> None:
    with pytest.raises(GridError, match="no results"):
        load_results(write_results(tmp_path / "empty", []))
    twice = write_results(tmp_path / "twice", GRID[:1])
    (twice / "copy.json").write_text(json.dumps(GRID[0]))
    with pytest.raises(GridError, match="scored twice"):
        load_results(twice)
    broken = write_results(tmp_path / "broken", GRID[:1])
    (broken / "broken.json").write_text("{")
    with pytest.raises(GridError, match="broken.json"):
        load_results(broken)


def test_reference_texts_from_annotations() -> None:
    annotations = [
        {"type": "highlight", "comment": "  Nice\n image. ", "text": "red sock", "color": "pink"},
        {"type": "highlight", "comment": "", "text": "red sock", "color": "pink"},
        {"type": "highlight", "comment": "", "text": "went past", "color": "yellow"},
        {"type": "highlight", "comment": "", "text": "so I sat", "color": "generic"},
        {"type": "strikeout", "comment": "", "text": "very", "color": None},
        {"type": "note", "comment": "", "text": None, "color": None},
    ]
    assert reference_texts(annotations) == [
        "Nice image.",
        'Great line: "red sock"',
        'A problem in this sentence: "went past"',
        'Cut this: "very"',
    ]
    assert reference_texts(annotations, bare="skip") == ["Nice image."]
    with pytest.raises(ValueError):
        reference_texts(annotations, bare="keep")
