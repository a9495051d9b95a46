"""Segmentation, score and end-to-end agreement figures on hand-worked examples."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from unimatch_metric.errors import UniMatchInputError
from unimatch_metric.training.validate import (
    boundaries,
    end_to_end_agreement,
    end_to_end_interval,
    judgements,
    mean_by_kind,
    read_end_to_end,
    score_agreement,
    segmentation_agreement,
)


def test_boundaries_are_word_indices() -> None:
    assert boundaries(["Nice image,", "but it runs on.", "Cut it."]) == {2, 6}
    assert boundaries(["One unit only."]) == set()


def test_identical_segmentations_agree_perfectly() -> None:
    units = [["a b c", "d e"], ["f g h i"]]
    result = segmentation_agreement(units, units)
    assert (result.window_diff, result.precision, result.recall, result.f1) == (0, 1, 1, 1)


def test_hand_worked_window_diff_and_boundary_f1() -> None:
    # 6 words; reference boundary after word 3, hypothesis after word 2 and word 4.
    ref = [["w1 w2 w3", "w4 w5 w6"]]
    hyp = [["w1 w2", "w3 w4", "w5 w6"]]
    result = segmentation_agreement(ref, hyp, k=2)
    # Windows of 2 gaps over gaps 1..5: (1,2) (2,3) (3,4) (4,5):
    # ref counts 0,1,1,0; hyp counts 1,1,1,1 -> 2 disagreements of 4 windows.
    assert result.window_diff == pytest.approx(0.5)
    assert (result.precision, result.recall, result.f1) == (0.0, 0.0, 0.0)
    # k defaults to half the mean reference unit length: (3 + 3) / 2 / 2 = 1.5 -> 2.
    assert segmentation_agreement(ref, hyp).k == 2


def test_pooled_boundary_precision_recall() -> None:
    ref = [["a b", "c d", "e f"], ["g h i"]]
    hyp = [["a b", "c d e f"], ["g", "h i"]]
    result = segmentation_agreement(ref, hyp)
    assert result.precision == pytest.approx(1 / 2)  # {2} right, {1} in text 2 wrong
    assert result.recall == pytest.approx(1 / 2)  # {2} found, {4} missed
    assert result.f1 == pytest.approx(1 / 2)


def test_a_cut_inside_a_word_splits_it_for_both_sides() -> None:
    # "facts--is" has no space: the reference cuts inside it, the hypothesis cannot.
    ref = [["Full of facts--", "is still a report."]]
    hyp = [["Full of facts--is still a report."]]
    result = segmentation_agreement(ref, hyp, k=2)
    assert (result.precision, result.recall) == (1.0, 0.0)
    # 7 words on the common grid (facts-- | is); windows over gaps 1-2 .. 5-6, the two
    # holding gap 3 disagree.
    assert result.window_diff == pytest.approx(2 / 5)
    assert segmentation_agreement(ref, ref).f1 == 1.0


def test_mismatched_texts_are_rejected() -> None:
    with pytest.raises(ValueError, match="text 0"):
        segmentation_agreement([["a b c"]], [["a b"]])
    with pytest.raises(ValueError, match="1 references but 2"):
        segmentation_agreement([["a"]], [["a"], ["b"]])


def test_score_agreement() -> None:
    result = score_agreement([0, 1, 2, 3, 4], [0.5, 1, 2.5, 2.5, 4])
    assert result.pearson > 0.95 and result.spearman > 0.95
    assert result.mean_absolute_error == pytest.approx(0.3)
    assert score_agreement([0, 1, 2], [2, 1, 0]).pearson == pytest.approx(-1)


def test_end_to_end_agreement_hand_worked() -> None:
    # Two paragraphs of three candidates, the last of each trivial (off-paragraph).
    metric = [0.5, 0.2, 0.0, 0.3, 0.3, 0.1]
    scores = [9.0, 4.0, 0.0, 6.0, 2.0, 1.0]
    ranks = [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
    paragraphs = ["p", "p", "p", "q", "q", "q"]
    trivial = [False, False, True, False, False, True]
    result = end_to_end_agreement(metric, scores, ranks, paragraphs, trivial)
    assert result.pooled_pearson == pytest.approx(float(np.corrcoef(metric, scores)[0, 1]))
    # p: the metric orders its two like the judges (rho 1); q: a tie ranks nothing (0).
    assert result.mean_paragraph_spearman == pytest.approx(0.5)
    assert (result.n_candidates, result.n_paragraphs) == (6, 2)
    # A metric with one value for every candidate has no correlation (None, not NaN).
    flat = end_to_end_agreement([0.0] * 6, scores, ranks, paragraphs, trivial)
    assert (flat.pooled_pearson, flat.mean_paragraph_spearman) == (None, 0.0)
    with pytest.raises(ValueError, match="differ in length"):
        end_to_end_agreement(metric[:5], scores, ranks, paragraphs, trivial)


def test_end_to_end_interval_resamples_whole_paragraphs() -> None:
    # Six paragraphs of three candidates; the metric follows the judges in five, and in the
    # sixth ranks the two non-trivial candidates the wrong way round.
    metric, scores, ranks, paragraphs, trivial = [], [], [], [], []
    for p in range(6):
        good, fair = (0.6, 0.3) if p < 5 else (0.3, 0.6)
        metric += [good, fair, 0.05 * p]
        scores += [9.0, 5.0, 0.0]
        ranks += [1.0, 2.0, 3.0]
        paragraphs += [f"p{p}"] * 3
        trivial += [False, False, True]
    point = end_to_end_agreement(metric, scores, ranks, paragraphs, trivial)
    ci = end_to_end_interval(metric, scores, ranks, paragraphs, trivial, resamples=300)
    low, high = ci["mean_paragraph_spearman"]
    # Per-paragraph rhos are 1 or -1: a draw's mean is 1 - 2 * (share of the sixth paragraph).
    assert point.mean_paragraph_spearman == pytest.approx(4 / 6)
    # A draw holds the sixth paragraph three times or more with probability 0.06, so the
    # 2.5th percentile is 1 - 2 * 3/6; were repeated draws merged, it would be 1/3.
    assert low == pytest.approx(0.0)
    assert low < point.mean_paragraph_spearman < high <= 1.0
    assert ci["pooled_pearson"][0] < point.pooled_pearson < ci["pooled_pearson"][1]
    # Seeded: the same draws give the same interval.
    again = end_to_end_interval(metric, scores, ranks, paragraphs, trivial, resamples=300)
    assert again == ci
    # A metric that is exactly the judges' scores agrees on every draw.
    exact = end_to_end_interval(scores, scores, ranks, paragraphs, trivial, resamples=50)
    assert exact["pooled_pearson"] == pytest.approx((1.0, 1.0))
    # A constant metric has no pooled correlation on any draw.
    flat = end_to_end_interval([0.1] * 18, scores, ranks, paragraphs, trivial, resamples=20)
    assert flat["pooled_pearson"] is None
    assert flat["mean_paragraph_spearman"] == pytest.approx((0.0, 0.0))
    with pytest.raises(ValueError, match="at least 1"):
        end_to_end_interval(metric, scores, ranks, paragraphs, trivial, resamples=0)


def _write_e2e(folder: Path, judges: int = 2, bodies: bool = False) -> None:
    def lines(path: Path, rows: list[dict]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    lines(
        folder / "paragraphs.jsonl",
        [
            {"e2e_id": "e0", "instructor_comments": ["Nice hook.", "Cite your sources."]},
            {"e2e_id": "e1", "instructor_comments": ["Who is Mara?"]},
        ],
    )
    if bodies:
        lines(
            folder / "paragraphs.jsonl",
            [
                {
                    "e2e_id": "e0",
                    "instructor_comments": ["Nice hook.", "Cite your sources."],
                    "body": "Studies show that sleep matters (Walker). Teens sleep too little.",
                },
                {
                    "e2e_id": "e1",
                    "instructor_comments": ["Who is Mara?"],
                    "body": "Mara waved from the dock. I pretended not to see her.",
                },
            ],
        )
    texts = {
        ("e0", "A"): ("close", "Nice hook. Cite your sources."),
        ("e0", "B"): ("partial", "Nice hook. The ending drags."),
        ("e0", "C"): ("off_paragraph", "Who is Mara?"),
        ("e1", "A"): ("close", "Who is Mara?"),
        ("e1", "B"): ("partial", "Nice hook. Who is Mara?"),
        ("e1", "C"): ("off_paragraph", "Cite your sources."),
    }
    lines(
        folder / "candidates.jsonl",
        [
            {"candidate_id": f"{e}{x}", "e2e_id": e, "letter": x, "kind": k, "text": t}
            for (e, x), (k, t) in texts.items()
        ],
    )
    for j in range(judges):
        lines(
            folder / "raw" / f"rankings_J{j + 1}.jsonl",
            [
                {"e2e_id": e, "scores": {"A": 9 - j, "B": 5, "C": 0}, "ranking": ["A", "B", "C"]}
                for e in ("e0", "e1")
            ],
        )


def test_read_end_to_end_joins_candidates_comments_and_judges(tmp_path: Path) -> None:
    _write_e2e(tmp_path)
    rows = read_end_to_end(tmp_path)
    assert [r["candidate_id"] for r in rows] == ["e0A", "e0B", "e0C", "e1A", "e1B", "e1C"]
    assert rows[0]["references"] == ["Nice hook.", "Cite your sources."]
    assert (rows[0]["score"], rows[0]["rank"], rows[2]["rank"]) == (8.5, 1.0, 3.0)
    assert {r["judges"] for r in rows} == {2}
    # A paragraph can have its own judges: J2 rated only e0, so e1's figures are J1's.
    path = tmp_path / "raw" / "rankings_J2.jsonl"
    first, second = path.read_text().splitlines()
    path.write_text(first + "\n", encoding="utf-8")
    rows = read_end_to_end(tmp_path)
    assert [(r["score"], r["judges"]) for r in rows if r["candidate_id"] in ("e0A", "e1A")] == [
        (8.5, 2),
        (9.0, 1),
    ]
    # A judge who rated a paragraph but left one of its candidates out is an error naming it.
    line = json.loads(second)
    del line["scores"]["A"]
    path.write_text(first + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(UniMatchInputError, match="e1A: judge J2 rated its paragraph but did not"):
        read_end_to_end(tmp_path)
    # A paragraph no judge rated is an error too.
    for judge in ("J1", "J2"):
        path = tmp_path / "raw" / f"rankings_{judge}.jsonl"
        path.write_text(path.read_text().splitlines()[0] + "\n", encoding="utf-8")
    with pytest.raises(UniMatchInputError, match="e1A: rated by no judge"):
        read_end_to_end(tmp_path)


def test_validate_e2e_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sefora_cli.main import main

    _write_e2e(tmp_path)
    args = ["validate-e2e", str(tmp_path), "--segmenters", "rules", "--scorers", "exact"]
    assert main(args) == 0
    [out] = json.loads(capsys.readouterr().out)
    assert (out["segmenter"], out["scorer"], out["n_candidates"]) == ("rules", "exact", 6)
    # Exact matching: the close candidates match every instructor unit, the partial ones half
    # (e0) or with an extra unit (e1), the off-paragraph ones nothing.
    assert out["mean_f1"] == {
        "close": 1.0,
        "off_paragraph": 0.0,
        "partial": pytest.approx((0.5 + 2 / 3) / 2),
    }
    assert out["mean_paragraph_spearman"] == pytest.approx(1.0)
    assert out["pooled_pearson"] > 0.9
    assert "bootstrap_95" not in out
    assert main([*args, "--bootstrap", "40"]) == 0
    [boot] = json.loads(capsys.readouterr().out)
    ci = boot["bootstrap_95"]
    assert ci["resamples"] == 40
    assert ci["pooled_pearson"][0] <= out["pooled_pearson"] <= ci["pooled_pearson"][1]
    assert main([*args, "--bootstrap", "-1"]) == 2
    assert "--bootstrap" in capsys.readouterr().err
    assert main(["validate-e2e", str(tmp_path / "missing")]) == 2
    assert "paragraphs.jsonl" in capsys.readouterr().err
    # --paragraphs needs every paragraph's text, and passes it on.
    assert main([*args, "--paragraphs"]) == 2
    assert "e0: no 'body' text (needed by --paragraphs)" in capsys.readouterr().err
    assert out["paragraphs"] is False
    _write_e2e(tmp_path, bodies=True)
    assert main([*args, "--paragraphs"]) == 0
    [grounded] = json.loads(capsys.readouterr().out)
    assert grounded["paragraphs"] is True and grounded["n_candidates"] == 6
    assert grounded["mean_f1"]["close"] == 1.0  # units about their paragraph keep their scores


def test_judgements_mark_feedback_on_another_paragraph_trivial_and_kinds_average_apart() -> None:
    candidates = [
        {"score": 9.0, "rank": 1.0, "e2e_id": "e1", "kind": "informed_most"},
        {"score": 0.0, "rank": 4.0, "e2e_id": "e1", "kind": "off_paragraph"},
        {"score": 7.0, "rank": 2.0, "e2e_id": "e2", "kind": "informed_most"},
    ]
    assert judgements(candidates) == (
        [9.0, 0.0, 7.0],
        [1.0, 4.0, 2.0],
        ["e1", "e1", "e2"],
        [False, True, False],
    )
    assert mean_by_kind([0.5, 0.25, 0.75], candidates) == {
        "informed_most": 0.625,
        "off_paragraph": 0.25,
    }
