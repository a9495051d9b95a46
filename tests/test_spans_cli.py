"""`sefora anchored` and `sefora span-stats` on small files written here and the sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sefora_cli.main import main

PARAGRAPH = "The dog ran home. It was late and the sky was dark."


def write(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_anchored_scores_located_quotes_and_counts_unlocated(tmp_path, capsys):
    sky = PARAGRAPH.index("the sky")
    row = {
        "paragraph": PARAGRAPH,
        "predictions": [
            {"comment": "Nice image.", "quote": "THE SKY was dark"},
            {"comment": "Vary your verbs.", "quote": "The cat flew away"},
            {"comment": "Why home?", "start": 0, "end": 17},
        ],
        "references": [
            {"comment": "Nice image.", "start": sky, "end": len(PARAGRAPH) - 1},
            {"comment": "Why home?", "start": 5, "end": 5},  # a note: its sentence
        ],
    }
    path = write(tmp_path / "in.jsonl", [row])
    out = tmp_path / "out.json"
    args = ["anchored", str(path), "--segmenter", "rules", "--scorer", "exact"]
    assert main([*args, "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["quotes"] == {"normalized": 1, "unlocated": 1}
    assert result["span_precision"] == pytest.approx(2 / 3) and result["span_recall"] == 1.0
    assert result["span_n_unlocated_predictions"] == 1
    assert result["precision"] == pytest.approx(2 / 3) and result["recall"] == 1.0
    capsys.readouterr()
    assert main([*args, "--span-weight", "2"]) == 2
    assert "--span-weight must be in [0, 1], got 2.0" in capsys.readouterr().err


def test_anchored_bad_input_is_a_one_line_error(tmp_path, capsys):
    path = write(tmp_path / "bad.jsonl", [{"paragraph": PARAGRAPH, "predictions": [{"x": 1}]}])
    assert main(["anchored", str(path), "--scorer", "exact", "--segmenter", "rules"]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl: line 1: predictions[0]: expected a comment" in err
    assert "Traceback" not in err


def test_span_stats_of_the_sample(sample_dataset, capsys):
    assert main(["span-stats", "--data", str(sample_dataset)]) == 0
    out = json.loads(capsys.readouterr().out)
    counts = out["span_sizes"]["counts"]
    assert sum(counts.values()) == out["span_sizes"]["n_annotations"] == 85
    assert counts["point"] == 8
    assert sum(out["revisions"]["labels"].values()) == out["revisions"]["rows"] == 61
