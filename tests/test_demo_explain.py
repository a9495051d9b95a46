"""The demo's explanation layer (`unimatch_metric.explain`): alignment rows, the one-line
reading, and the HTML views, on results computed by the real pipeline with a scripted judge."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

import unimatch_metric
from unimatch_metric import UniMatchError
from unimatch_metric.explain import explain, scale_label
from unimatch_metric.report import failed_details

INSTRUCTOR = ["Cut 'In conclusion'.", "'a lot' is two words."]
MODEL = [
    "Nice sock image.",
    "Drop 'In conclusion'.",
    "Say more about Mrs. Delgado.",
    "End on the sock.",
]
# The judge: one strong pair, every other pair weakly related.
STRONG = {("Cut 'In conclusion'.", "Drop 'In conclusion'."): 3.5}


def judge(pairs):
    return [STRONG.get(pair, 1.0) for pair in pairs]


def run(predictions, references, **options):
    return unimatch_metric.unimatch(
        [predictions], [references], scorer=judge, return_details=True, **options
    )


class Tags(HTMLParser):
    """Every start tag of an HTML fragment with its attributes, and the text."""

    def __init__(self, fragment: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(fragment)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def with_class(self, css_class: str) -> list[dict[str, str | None]]:
        return [a for _, a in self.tags if css_class in (a.get("class") or "").split()]


def test_threshold_reading_is_the_issue_sentence():
    view = explain(run(MODEL, INSTRUCTOR, threshold=3))
    assert view.reading() == (
        "The model recovered 1 of 2 instructor points (score ≥ 3) and added 3 the "
        "instructor did not make."
    )
    kinds = [(r.kind, r.reference_index, r.prediction_index) for r in view.rows()]
    assert kinds == [
        ("matched", 0, 1),
        ("missed", 1, None),
        ("over-generated", None, 0),
        ("over-generated", None, 2),
        ("over-generated", None, 3),
    ]
    assert (view.n_matched, view.n_missed, view.n_over_generated) == (1, 1, 3)


def test_soft_reading_counts_partial_credit_but_recovers_only_at_two():
    result = run(MODEL, INSTRUCTOR)
    view = explain(result)
    # Soft matching pairs the second instructor unit too (score 1): Φ = 3.5 + 1. That pair
    # shares only the broad kind of feedback, so it recovers no point (#18 item 13).
    assert view.n_matched == 2 and view.n_over_generated == 2 and view.n_missed == 0
    assert view.n_recovered == 1 and result["config"]["recovered_at"] == 2
    assert result["details"][0]["n_recovered"] == 1
    assert view.reading() == (
        "The model recovered 1 of 2 instructor points (score ≥ 2), for 4.5 of the 8 points "
        "possible, and added 3 the instructor did not make."
    )
    assert view.precision == pytest.approx(4.5 / 16) == result["precision"]
    assert view.f1 == result["f1"]
    weak = Tags(view.alignment_html()).with_class("um-weak")
    assert [cell["data-score"] for cell in weak] == ["1.0"]
    assert "below 2: not recovered" in view.alignment_html()


@pytest.mark.parametrize("score, recovered", [(0.12, 0), (1.99, 0), (2.0, 1), (3.0, 1)])
def test_a_point_is_recovered_only_at_two_or_more(score, recovered):
    # The issue's case: two pairs matched, one scoring 0.12 ("unrelated").
    scores = {("Cut 'In conclusion'.", "Drop 'In conclusion'."): 3.5}
    result = unimatch_metric.unimatch(
        [MODEL[:2]],
        [INSTRUCTOR],
        scorer=lambda pairs: [scores.get(p, score if p[1] == MODEL[0] else 0.0) for p in pairs],
        return_details=True,
    )
    view = explain(result)
    assert view.n_matched == 2
    assert view.n_recovered == result["details"][0]["n_recovered"] == 1 + recovered
    assert view.reading().startswith(
        f"The model recovered {1 + recovered} of 2 instructor points (score ≥ 2)"
    )


def test_singular_nothing_added_and_empty_sides():
    view = explain(run(["Drop 'In conclusion'."], INSTRUCTOR[:1], threshold=3))
    assert view.reading() == (
        "The model recovered 1 of 1 instructor point (score ≥ 3) and added nothing the "
        "instructor did not make."
    )
    empty = explain(run([], INSTRUCTOR))
    assert empty.reading() == (
        "The model gave no feedback unit, so it recovered none of 2 instructor points."
    )
    assert [r.kind for r in empty.rows()] == ["missed", "missed"]
    assert "No unit pair" in empty.matrix_html()
    no_reference = explain(run(MODEL[:2], []))
    assert no_reference.reading().endswith("the model added 2 the instructor did not make.")


def test_matrix_html_is_the_score_matrix_with_the_matching_marked():
    result = run(MODEL, INSTRUCTOR, threshold=3)
    view = explain(result)
    cells = Tags(view.matrix_html()).with_class("um-cell")
    assert len(cells) == len(INSTRUCTOR) * len(MODEL)
    scores = [float(c["data-score"]) for c in cells]
    assert scores == [s for row in result["details"][0]["scores"] for s in row]
    matched = [k for k, c in enumerate(cells) if "um-matched" in c["class"].split()]
    assert matched == [1]  # row G1, column P2
    # Darker cells for higher scores.
    assert cells[1]["style"] != cells[0]["style"]


def test_alignment_and_figures_html():
    view = explain(run(MODEL, INSTRUCTOR, threshold=3))
    rows = Tags(view.alignment_html()).with_class("um-row")
    assert [r["data-kind"] for r in rows] == [r.kind for r in view.rows()]
    parsed = Tags(view.alignment_html())
    text = " ".join(parsed.text)
    assert text.count("missed") == 1 and text.count("over-generated") == 3
    assert "same feedback" in text  # 3.5 rounds to level 4
    figures = Tags(view.figures_html())
    f1 = next(a for _, a in figures.tags if a.get("id") == "um-f1")
    assert float(f1["data-value"]) == view.f1
    assert view.reading() in " ".join(figures.text)
    assert "threshold τ = 3" in " ".join(figures.text)


def test_unit_text_is_escaped():
    hostile = "<script>alert('x')</script> & <b>bold</b>"
    view = explain(run([hostile], INSTRUCTOR))
    for fragment in (view.units_html(), view.matrix_html(), view.alignment_html()):
        assert "<script>" not in fragment and "<b>" not in fragment
        assert "&lt;script&gt;" in fragment
    assert hostile in " ".join(Tags(view.units_html()).text)


def test_scale_labels():
    assert scale_label(0) == "unrelated"
    assert scale_label(3.49) == "same point, a detail differs"
    assert scale_label(3.5) == "same feedback"
    assert scale_label(1.0) == "same broad kind only"


def test_explain_rejects_results_it_cannot_show():
    result = run(MODEL, INSTRUCTOR)
    with pytest.raises(ValueError, match="return_details=True"):
        explain({key: value for key, value in result.items() if key != "details"})
    with pytest.raises(ValueError, match="no paragraph 3"):
        explain(result, index=3)
    failed = {**result, "details": [failed_details("HTTP 401: bad key")]}
    with pytest.raises(UniMatchError, match="HTTP 401"):
        explain(failed)
