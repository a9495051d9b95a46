"""Quadratic weighted kappa: a hand-computed example, scikit-learn, edge cases; rubric files."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from feedback_judges.errors import RubricError
from feedback_judges.qwk import quadratic_weighted_kappa
from feedback_judges.rubric import bundled_rubrics, load_rubric


def test_hand_computed_example():
    # Ratings 1..4, so weights (i - j)^2 / 9. Observed: (1,2), (2,2), (3,3), (4,3), so the
    # weighted disagreement is 1/9 + 0 + 0 + 1/9 = 2/9. Marginals: true [1,1,1,1], predicted
    # [0,2,2,0]; expected counts E[i][j] = 1 * pred[j] / 4, i.e. 0.5 in columns 2 and 3 of
    # every row: sum of w*E = 0.5 * ((1+4) + (0+1) + (1+0) + (4+1)) / 9 = 6/9.
    # QWK = 1 - (2/9) / (6/9) = 2/3.
    assert quadratic_weighted_kappa([1, 2, 3, 4], [2, 2, 3, 3]) == pytest.approx(2 / 3)
    assert quadratic_weighted_kappa([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    # Reversed ratings: perfect disagreement on a symmetric scale.
    assert quadratic_weighted_kappa([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
def test_agrees_with_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(7)
    for trial in range(200):
        low, high = rng.randint(0, 2), rng.randint(3, 6)
        n = rng.randint(2, 60)
        true = [rng.randint(low, high) for _ in range(n)]
        noise = rng.choice([0, 1, 2])
        pred = [min(high, max(low, t + rng.randint(-noise, noise))) for t in true]
        ours = quadratic_weighted_kappa(true, pred)
        theirs = metrics.cohen_kappa_score(
            true, pred, weights="quadratic", labels=list(range(low, high + 1))
        )
        if math.isnan(theirs):
            assert math.isnan(ours), trial
        else:
            assert ours == pytest.approx(theirs, abs=1e-12), trial


def test_weights_are_value_distances_and_numpy_inputs():
    # With a gap in the ratings used (no 3), the distance 2 -> 4 is 2, not one rank step:
    # scikit-learn's default (labels inferred) differs, its labels=range(...) agrees.
    metrics = pytest.importorskip("sklearn.metrics")
    true, pred = [1, 2, 4, 4, 2], [2, 4, 4, 2, 1]
    ours = quadratic_weighted_kappa(true, pred)
    assert ours == pytest.approx(
        metrics.cohen_kappa_score(true, pred, weights="quadratic", labels=[1, 2, 3, 4])
    )
    assert ours != pytest.approx(metrics.cohen_kappa_score(true, pred, weights="quadratic"))
    assert quadratic_weighted_kappa(np.array([2, 3, 4]), np.array([2.0, 3.0, 3.0])) == (
        quadratic_weighted_kappa([2, 3, 4], [2, 3, 3])
    )


def test_undefined_and_bad_input():
    assert math.isnan(quadratic_weighted_kappa([3, 3, 3], [3, 3, 3]))
    assert quadratic_weighted_kappa([3, 3], [4, 4]) == 0.0
    with pytest.raises(ValueError, match=r"y_pred\[1\] must be an integer rating, got 2\.5"):
        quadratic_weighted_kappa([1, 2], [1, 2.5])
    with pytest.raises(ValueError, match=r"y_true\[0\] must be an integer rating, got True"):
        quadratic_weighted_kappa([True, 2], [1, 2])
    with pytest.raises(ValueError, match="equal length"):
        quadratic_weighted_kappa([1, 2], [1])
    with pytest.raises(ValueError, match="equal length"):
        quadratic_weighted_kappa([], [])


# --- rubric files ----------------------------------------------------------------------


def test_bundled_rubrics():
    assert bundled_rubrics() == ["essay-feedback", "math-feedback"]
    math_rubric = load_rubric("math-feedback")
    assert [i.id for i in math_rubric.items] == [
        "correct",
        "not_revealing",
        "suggestion",
        "diagnostic",
        "positive",
    ]
    everything = dict.fromkeys((i.id for i in math_rubric.items), True)
    # score = correct x (sum of the five labels) / 5
    assert math_rubric.score(everything) == 1.0
    assert math_rubric.score(everything | {"positive": False, "suggestion": False}) == 0.6
    assert math_rubric.score(everything | {"correct": False}) == 0.0
    essay = load_rubric("essay-feedback")
    assert essay.dimensions == ["coverage", "evidence", "faithfulness", "safety"]
    assert not any(i.gate for i in essay.items)
    for rubric in (math_rubric, essay):
        assert type(rubric).from_dict(rubric.to_dict()) == rubric


def rubric_dict(**item) -> dict:
    return {
        "name": "r",
        "description": "d",
        "task": "t",
        "context": [{"name": "essay", "title": "Essay"}],
        "items": [{"id": "a", "dimension": "x", "question": "Q?", **item}],
    }


@pytest.mark.parametrize(
    "change, where",
    [
        ({"weight": 0}, "items[0].weight: expected a positive number"),
        ({"weight": "2"}, "items[0].weight: expected a positive number"),
        ({"weight": float("inf")}, "items[0].weight: Infinity is not a JSON number"),
        ({"pass_if": "true"}, "items[0].pass_if: expected 'yes' or 'no'"),
        ({"gate": "yes"}, "items[0].gate: expected true or false"),
        ({"question": ""}, "items[0].question: expected a non-empty string"),
        ({"question": "Two\nlines?"}, "items[0].question: must be one line"),
        ({"weigth": 2}, "items[0].weigth: unknown key"),
    ],
)
def test_bad_rubric_items_are_named(tmp_path, change, where):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(rubric_dict(**change)))
    with pytest.raises(RubricError) as caught:
        load_rubric(path)
    assert str(caught.value).startswith(f"{path}: {where}")


def test_bad_rubric_files(tmp_path):
    data = rubric_dict()
    data["items"].append(dict(data["items"][0]))
    with pytest.raises(RubricError, match="items: repeated name"):
        load_rubric(data)
    with pytest.raises(RubricError, match="items: expected a non-empty list"):
        load_rubric(rubric_dict() | {"items": []})
    with pytest.raises(RubricError, match="no such file and no bundled rubric"):
        load_rubric("maths-feedback")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(RubricError, match="line 1 column 2: malformed JSON"):
        load_rubric(broken)
