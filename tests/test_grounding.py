"""Grounding: given the paragraph, units about another text score 0; the features, the
shipped model's reference outputs, the inputs' checks and the CLI and module entry points."""

from __future__ import annotations

import json
from pathlib import Path

import evaluate
import numpy as np
import pytest

import unimatch_metric
from sefora_cli.main import main
from unimatch_metric import unimatch
from unimatch_metric.grounding import (
    EVIDENCE_CLIP,
    N_FEATURES,
    OFF_PARAGRAPH_BELOW,
    Grounding,
    feedback_vocabulary,
    grounding_features,
    text_log_odds,
)
from unimatch_metric.models import GROUNDING_FILE, REFERENCE_FILE, load_model, model_digest

pytestmark = pytest.mark.usefixtures("private_cache")

PARAGRAPH = (
    "Maya carried her grandmother's cello up the hill every Sunday, even in the rain. "
    "The case was heavier than she was, and the strap left a red mark on her shoulder. "
    "At the top, she sat on the bench by the water tower and played until the streetlights "
    "came on."
)
OWN = "I love the red mark the strap leaves on her shoulder."
OTHER = "The scene where Dmitri burns the letters at the lighthouse is powerful."
REFERENCES = ["Lovely image of the strap on her shoulder.", "Great scene!"]


def test_features_count_what_the_paragraph_holds() -> None:
    units = ['The line "played until the streetlights came on" is lovely, Maya.', "Rain in 1998?"]
    x = grounding_features(units, PARAGRAPH, frozenset({"line", "lovely"}))
    assert x.shape == (2, N_FEATURES)
    # content words: line, played, until, streetlights, came, lovely, maya -> 5 in the paragraph
    assert list(x[0, :4]) == [7, 5, 5 / 7, 2]
    assert list(x[0, 4:7]) == [5, 5, 0]  # outside the vocabulary, all in the paragraph
    assert list(x[0, 7:10]) == [1, 1, 0]  # one quoted phrase, found
    assert list(x[0, 10:13]) == [1, 1, 0]  # one name after the sentence start, found
    assert list(x[1, 13:15]) == [1, 0]  # a number the paragraph lacks
    assert list(x[1, 10:13]) == [0, 0, 0]  # "Rain" opens the unit: not taken for a name
    # Names and numbers count as whole words only: "Art" is not in "start", 19 not in 1998.
    y = grounding_features(["Ask Art about 19 things."], "A start in 1998.", frozenset())
    assert list(y[0, 10:15]) == [1, 0, 1, 1, 0]
    assert grounding_features([], PARAGRAPH, frozenset()).shape == (0, N_FEATURES)


def test_vocabulary_is_what_feedback_on_many_paragraphs_uses() -> None:
    # 100 paragraphs: "clear" and "point" in the feedback on all, "detail" on two (2 %),
    # each name on one.
    feedback = [[f"Clear point, name{i}."] for i in range(100)]
    feedback[0].append("Add detail.")
    feedback[1].append("More detail!")
    assert feedback_vocabulary(feedback).tolist() == ["clear", "detail", "point"]
    assert feedback_vocabulary([]).tolist() == []


def test_shipped_model_reproduces_its_reference_outputs() -> None:
    reference = json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))["grounding"]
    probabilities = Grounding().probabilities(
        [r["units"] for r in reference], [r["paragraph"] for r in reference]
    )
    for got, row in zip(probabilities, reference, strict=True):
        np.testing.assert_allclose(got, row["probabilities"], atol=1e-4)
    # Each reference text's units fit its own paragraph better than the next text's.
    own, other = probabilities[0::2], probabilities[1::2]
    assert np.mean(np.concatenate(own)) > np.mean(np.concatenate(other)) + 0.3


def test_a_unit_about_another_text_scores_zero() -> None:
    grounding = Grounding()
    [p] = grounding.probabilities([[OWN, OTHER]], [PARAGRAPH])
    assert p[0] > 0.5 > OFF_PARAGRAPH_BELOW > p[1]
    assert grounding.off_paragraph([[OWN, OTHER], []], [PARAGRAPH, PARAGRAPH]) == [[1], []]

    plain = unimatch([[OWN, OTHER]], [REFERENCES], return_details=True)
    grounded = unimatch([[OWN, OTHER]], [REFERENCES], [PARAGRAPH], return_details=True)
    [before], [after] = plain["details"], grounded["details"]
    assert before["off_paragraph_units"] is None and after["off_paragraph_units"] == [1]
    assert max(row[1] for row in before["scores"]) > 0  # the scorer alone credits it
    assert all(row[1] == 0 for row in after["scores"])
    assert [row[0] for row in after["scores"]] == [row[0] for row in before["scores"]]
    assert after["f1"] < before["f1"] and after["f1"] > 0
    assert grounded["mean_predicted_units"] == 2  # still a predicted unit
    assert "ground:" not in plain["config"]["signature"]
    digest = model_digest(GROUNDING_FILE)[:8]
    assert grounded["config"]["signature"].endswith(f"|ground:learned@{digest}")
    assert grounded["config"]["grounding"] == {
        "name": "learned",
        "digest": model_digest(GROUNDING_FILE),
    }


def test_text_log_odds_sums_bounded_unit_evidence() -> None:
    assert text_log_odds(np.zeros(0)) == 0.0
    assert text_log_odds(np.asarray([0.5, 0.5])) == 0.0
    assert text_log_odds(np.asarray([0.8])) == pytest.approx(np.log(4.0))
    most = np.log(EVIDENCE_CLIP / (1 - EVIDENCE_CLIP))  # one unit counts for at most this
    assert text_log_odds(np.asarray([0.0])) == pytest.approx(most)
    assert text_log_odds(np.asarray([0.0, 0.0])) == pytest.approx(2 * most)
    assert text_log_odds(np.asarray([0.0, 1.0])) == pytest.approx(0.0)


def test_a_text_about_another_paragraph_is_set_aside_whole() -> None:
    grounding = Grounding()
    elsewhere = [
        "Nice work!",
        OTHER,
        "Dmitri should say why he keeps the letters so long.",
        "Tell us more about the lighthouse keeper's daughter.",
    ]
    [p, q] = grounding.probabilities([elsewhere, elsewhere[:2]], [PARAGRAPH, PARAGRAPH])
    assert p[0] > 0.3  # generic praise: alone it fits any paragraph
    assert text_log_odds(p) < grounding.text_below < text_log_odds(q)
    # With three units about another text, the generic one goes too; with one, it stays.
    off = grounding.off_paragraph([elsewhere, elsewhere[:2]], [PARAGRAPH, PARAGRAPH])
    assert off == [[0, 1, 2, 3], [1]]
    grounded = unimatch([elsewhere], [REFERENCES], [PARAGRAPH], return_details=True)
    assert grounded["details"][0]["off_paragraph_units"] == [0, 1, 2, 3]
    assert grounded["f1"] == 0.0 and unimatch([elsewhere], [REFERENCES])["f1"] > 0


def test_the_models_text_below_decides(tmp_path: Path) -> None:
    units = [[OWN, OTHER], ["Nice work!", OTHER]]
    off = {}
    for cut in (-50.0, 50.0):
        np.savez(tmp_path / f"g{cut}.npz", **{**load_model(GROUNDING_FILE), "text_below": cut})
        off[cut] = Grounding(tmp_path / f"g{cut}.npz").off_paragraph(units, [PARAGRAPH] * 2)
    assert off[-50.0] == [[1], [1]]  # units under OFF_PARAGRAPH_BELOW only
    assert off[50.0] == [[0, 1], [0, 1]]


@pytest.mark.parametrize(
    ("paragraphs", "error", "message"),
    [
        ("one text", TypeError, "paragraphs must be a list"),
        ([PARAGRAPH, PARAGRAPH], ValueError, "paragraphs and predictions differ in length: 2 != 1"),
        ([None], TypeError, r"paragraphs\[0\] must be a string, got None"),
        (["\ud800"], ValueError, r"paragraphs\[0\] holds a lone surrogate"),
        ([" \n"], ValueError, r"paragraphs\[0\] is empty"),
    ],
)
def test_bad_paragraphs_are_named(paragraphs: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        unimatch([OWN], [REFERENCES], paragraphs, scorer="exact")  # type: ignore[arg-type]


def test_cli_reads_paragraphs_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "in.jsonl"
    rows = [{"prediction": [OWN, OTHER], "references": REFERENCES, "paragraph": PARAGRAPH}]
    data.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    assert main(["unimatch", str(data), "--details"]) == 0
    assert json.loads(capsys.readouterr().out)["details"][0]["off_paragraph_units"] is None
    assert main(["unimatch", str(data), "--details", "--paragraphs"]) == 0
    assert json.loads(capsys.readouterr().out)["details"][0]["off_paragraph_units"] == [1]
    del rows[0]["paragraph"]
    data.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    assert main(["unimatch", str(data), "--paragraphs"]) == 2
    err = capsys.readouterr().err
    assert "in.jsonl" in err and "line 1: paragraph" in err and "Traceback" not in err


def test_evaluate_module_passes_paragraphs(tmp_path: Path) -> None:
    metric = evaluate.load(unimatch_metric.MODULE_PATH, cache_dir=str(tmp_path))
    metric.add_batch(predictions=[[OWN, OTHER]], references=[REFERENCES])
    out = metric.compute(paragraphs=[PARAGRAPH], return_details=True)
    assert out["details"][0]["off_paragraph_units"] == [1]
    assert out == unimatch([[OWN, OTHER]], [REFERENCES], [PARAGRAPH], return_details=True)
    # A bad paragraphs= is caught before evaluate reads back (and drops) the added examples.
    metric.add_batch(predictions=[[OWN, OTHER]], references=[REFERENCES])
    with pytest.raises(ValueError, match="paragraphs and predictions differ in length: 0 != 2"):
        metric.compute(predictions=[[OWN]], references=[REFERENCES], paragraphs=[])
    assert len(metric) == 1
    again = metric.compute(predictions=[[OWN]], references=[REFERENCES], paragraphs=[PARAGRAPH] * 2)
    assert again["n_examples"] == 2
