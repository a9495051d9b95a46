"""UniMatch end to end offline: aggregation (macro/micro) on hand-worked examples, options,
input checks, the embedding baseline and the import cost."""

from __future__ import annotations

import subprocess
import sys

import pytest

import unimatch_metric
from sefora_llm.cache import open_cache
from unimatch_metric import UniMatch, unimatch
from unimatch_metric.scorers.embedding import cosine_to_score

PREDICTIONS = [["a", "b"], ["c"]]
REFERENCES = [["a"], ["x", "y", "c"]]


def test_macro_and_micro_hand_worked(tmp_path):
    out = unimatch(PREDICTIONS, REFERENCES, scorer="exact", segmenter="rules")
    # Paragraph 1: Φ=4, |P|=2, |G|=1 -> P=.5, R=1, F1=2/3.
    # Paragraph 2: Φ=4, |P|=1, |G|=3 -> P=1, R=1/3, F1=1/2.
    assert out["precision"] == pytest.approx(0.75)
    assert out["recall"] == pytest.approx(2 / 3)
    assert out["f1"] == pytest.approx((2 / 3 + 1 / 2) / 2)  # mean of F1s, not F1 of means
    # Micro: Φ=8 over 4·3 predicted and 4·4 reference units.
    assert out["micro_precision"] == pytest.approx(8 / 12)
    assert out["micro_recall"] == pytest.approx(8 / 16)
    assert out["micro_f1"] == pytest.approx(4 / 7)
    assert out["mean_predicted_units"] == 1.5
    assert out["mean_reference_units"] == 2.0
    assert (out["n_examples"], out["n_failed"]) == (2, 0)
    assert "details" not in out


def test_threshold_variant_and_details():
    table = {("g1", "p1"): 3.5, ("g1", "p2"): 2.0, ("g2", "p1"): 3.0, ("g2", "p2"): 0.5}
    calls = []

    def judge(pairs):
        calls.append(list(pairs))
        return [table[p] for p in pairs]

    args = ([["p1", "p2"]], [["g1", "g2"]])
    soft = unimatch(*args, scorer=judge, return_details=True)
    # Optimum: (g1,p2)+(g2,p1) = 5.0 beats (g1,p1)+(g2,p2) = 4.0.
    assert soft["details"][0]["matches"] == [[0, 1, 2.0], [1, 0, 3.0]]
    assert soft["precision"] == pytest.approx(5 / 8)
    assert soft["details"][0]["scores"] == [[3.5, 2.0], [3.0, 0.5]]
    hard = unimatch(*args, scorer=judge, threshold=3, return_details=True)
    # Edges ≥ 3: (g1,p1), (g2,p1) -> one match, TP = 1.
    assert hard["precision"] == 0.5 and hard["recall"] == 0.5
    assert hard["micro_precision"] == 0.5
    assert hard["config"]["threshold"] == 3
    assert len(calls) == 2 and all(len(c) == 4 for c in calls)  # one call, distinct pairs


def test_segmentation_of_strings_and_references():
    # The rules segmenter: what is tested is which side gets segmented, not a model's cuts.
    pred = ["Nice hook. Cite your sources."]
    refs = [["Nice hook.", "Please cite your sources, but also fix the comma splice here."]]
    out = unimatch(pred, refs, segmenter="rules", scorer="exact", return_details=True)
    detail = out["details"][0]
    assert detail["prediction_units"] == ["Nice hook.", "Cite your sources."]
    assert detail["reference_units"] == [
        "Nice hook.",
        "Please cite your sources,",
        "but also fix the comma splice here.",
    ]
    whole = unimatch(
        pred, refs, segmenter="rules", scorer="exact", segment_references=False, return_details=True
    )
    assert whole["details"][0]["reference_units"] == refs[0]
    assert whole["recall"] == 0.5 and out["recall"] == pytest.approx(1 / 3)


def test_empty_sides_in_a_paragraph():
    out = unimatch([[], "Good."], [["Good."], ["", "  "]], scorer="exact", return_details=True)
    assert [d["precision"] for d in out["details"]] == [0.0, 0.0]
    assert [d["recall"] for d in out["details"]] == [0.0, 0.0]
    assert out["mean_predicted_units"] == 0.5


def test_same_text_scores_perfectly_with_every_offline_scorer():
    feedback = "Strong opening, but the second claim needs a source. Vary sentence length."
    for scorer in ("exact", "offline"):
        out = unimatch([feedback], [[feedback]], scorer=scorer, use_cache=False)
        assert out["f1"] == pytest.approx(1.0), scorer


def test_embedding_scorer_baseline(tmp_path):
    pairs = [
        ("Your sentences are all the same length.", "Your sentences are all the same length."),
        ("Your sentences are all the same length.", "Try varying your sentence length."),
        ("Please cite recently published sources.", "What a lovely metaphor!"),
    ]
    scores = unimatch_metric.score_pairs(pairs, scorer="embedding", cache_dir=tmp_path)
    assert scores[0] == pytest.approx(4.0)
    assert scores[0] > scores[1] > scores[2] >= 0
    assert len(open_cache(tmp_path)) == 3
    assert unimatch_metric.score_pairs(pairs, scorer="embedding", cache_dir=tmp_path) == scores
    learned = unimatch_metric.score_pairs(pairs, scorer="offline", cache_dir=tmp_path)
    assert learned[0] == 4.0 and learned[1] > learned[2]


def test_cosine_mapping_is_monotone_and_clipped():
    import numpy as np

    cos = np.linspace(-1, 1, 41)
    mapped = cosine_to_score(cos)
    assert mapped.min() == 0 and mapped.max() == 4
    assert (np.diff(mapped) >= 0).all()
    assert cosine_to_score(np.array([0.5]))[0] == pytest.approx(2.0)


@pytest.mark.parametrize(
    "predictions, references, error",
    [
        (["a"], [["a"], ["b"]], "differ in length"),
        ("a", [["a"]], "predictions must be a list"),
        ([3], [["a"]], r"predictions\[0\] must be a string or a list of strings, got int"),
        (["a"], ["a"], r"references\[0\] must be a list of strings"),
        (["a"], [[None]], r"references\[0\]\[0\] must be a string, got None"),
        (["a", "b"], [["a"], ["x", None]], r"references\[1\]\[1\] must be a string, got None"),
        ([["a", None]], [["a"]], r"predictions\[0\]\[1\] must be a string, got None"),
        (["a\ud800"], [["a"]], r"predictions\[0\] holds a lone surrogate U\+D800"),
    ],
)
def test_bad_inputs_name_the_item(predictions, references, error):
    with pytest.raises((TypeError, ValueError), match=error):
        unimatch(predictions, references, scorer="exact")


@pytest.mark.parametrize(
    "options, error",
    [
        ({"on_error": "ignore"}, "on_error"),
        ({"batch_size": 0}, "batch_size"),
        ({"threshold": 5}, "threshold"),
        ({"scorer": "bleu"}, "unknown scorer 'bleu'"),
        ({"scorer": lambda pairs: [9.0] * len(pairs)}, "between 0 and 4"),
        ({"scorer": lambda pairs: [1.0]}, "returned 1 scores for 2 pairs"),
    ],
)
def test_bad_options(options, error):
    with pytest.raises((TypeError, ValueError), match=error):
        unimatch([["p", "q"]], [["g"]], **{"scorer": "exact", **options})


def test_instance_options_are_defaults_and_calls_override():
    metric = UniMatch(scorer="exact", threshold=4)
    assert metric.compute(["a"], [["a"]])["config"]["threshold"] == 4
    assert metric.compute(["a"], [["a"]], threshold=None)["config"]["threshold"] is None
    assert metric.options.threshold == 4


def test_no_examples():
    out = unimatch([], [], scorer="exact")
    assert out["n_examples"] == 0 and out["f1"] is None


def test_import_is_light():
    code = (
        "import sys, unimatch_metric; "
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'openai', 'transformers') "
        "if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
