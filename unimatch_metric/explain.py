"""A readable account of one UniMatch paragraph: which units were matched, missed or
over-generated, a one-line reading of the figures, and HTML views of the score matrix and
the alignment (used by the Space demo, and shown inline in Jupyter).

    result = unimatch_metric.unimatch([feedback], [comments], return_details=True)
    view = explain(result)
    view.reading()  # 'The model recovered 1 of 2 instructor points (score ≥ 2), ...'

A point counts as recovered only when its matched pair scores at least the result's
``recovered_at`` (2 on the 0–4 scale, "shares an important point"; τ in the threshold
variant): the matching pairs every unit it can, even an unrelated one.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any, Literal

from unimatch_metric.errors import UniMatchError
from unimatch_metric.match import MAX_SCORE, RECOVERED_AT

RowKind = Literal["matched", "missed", "over-generated"]

# What each level of the 0–4 scale means, for labelling a matched pair.
SCALE = {
    4: "same feedback",
    3: "same point, a detail differs",
    2: "one important part shared",
    1: "same broad kind only",
    0: "unrelated",
}


def scale_label(score: float) -> str:
    """The meaning of the scale level nearest to ``score`` (halves round up)."""
    level = min(4, max(0, math.floor(score + 0.5)))
    return SCALE[level]


@dataclass(frozen=True)
class AlignmentRow:
    """One line of the alignment: a matched pair, a missed instructor unit or an
    over-generated model unit (indices are 0-based positions in the unit lists)."""

    kind: RowKind
    reference_index: int | None
    prediction_index: int | None
    score: float | None


@dataclass(frozen=True)
class Explanation:
    """One paragraph's units, |G|×|P| scores, matching and figures, ready to display."""

    reference_units: list[str]
    prediction_units: list[str]
    scores: list[list[float]]
    matches: list[tuple[int, int, float]]
    precision: float
    recall: float
    f1: float
    threshold: float | None
    recovered_at: float = RECOVERED_AT

    def rows(self) -> list[AlignmentRow]:
        """Instructor units in order (matched or missed), then unmatched model units."""
        partner = {i: (j, score) for i, j, score in self.matches}
        rows = [
            AlignmentRow("matched", i, *partner[i])
            if i in partner
            else AlignmentRow("missed", i, None, None)
            for i in range(len(self.reference_units))
        ]
        matched = {j for _, j, _ in self.matches}
        rows += [
            AlignmentRow("over-generated", None, j, None)
            for j in range(len(self.prediction_units))
            if j not in matched
        ]
        return rows

    @property
    def n_matched(self) -> int:
        """Matched pairs (a positive score, or a score ≥ τ in the threshold variant)."""
        return len(self.matches)

    @property
    def n_recovered(self) -> int:
        """Instructor points recovered: matched pairs scoring at least ``recovered_at``."""
        return sum(1 for _, _, score in self.matches if score >= self.recovered_at)

    @property
    def n_missed(self) -> int:
        """Instructor units left without a partner."""
        return len(self.reference_units) - self.n_matched

    @property
    def n_over_generated(self) -> int:
        """Model units left without a partner."""
        return len(self.prediction_units) - self.n_matched

    def reading(self) -> str:
        """The figures in one sentence, e.g. "The model recovered 1 of 2 instructor points
        (score ≥ 2), for 4.5 of the 8 points possible, and added 3 the instructor did not
        make." A model unit whose pair recovers no point counts as added.
        """
        n_ref, n_pred = len(self.reference_units), len(self.prediction_units)
        points = f"{n_ref} instructor point{'s' if n_ref != 1 else ''}"
        if n_pred == 0:
            return f"The model gave no feedback unit, so it recovered none of {points}."
        added = n_pred - self.n_recovered
        extra = f"added {added or 'nothing'} the instructor did not make"
        if n_ref == 0:
            return f"There is no instructor point to recover; the model {extra}."
        recovered = (
            f"The model recovered {self.n_recovered} of {points} (score ≥ {self.recovered_at:g})"
        )
        if self.threshold is not None:
            return f"{recovered} and {extra}."
        total = sum(score for _, _, score in self.matches)
        possible = f"{MAX_SCORE * n_ref:g} points possible"
        return f"{recovered}, for {total:.1f} of the {possible}, and {extra}."

    # --- HTML views ------------------------------------------------------------------

    def units_html(self) -> str:
        """The units of both sides as two numbered lists (G1… instructor, P1… model)."""
        return (
            '<div class="um-units">'
            + _unit_list("Instructor units", "G", self.reference_units, "um-units-instructor")
            + _unit_list("Model units", "P", self.prediction_units, "um-units-model")
            + "</div>"
        )

    def matrix_html(self) -> str:
        """The score matrix as a heatmap table: rows G, columns P, matched cells outlined."""
        if not self.reference_units or not self.prediction_units:
            return '<p class="um-empty">No unit pair to score.</p>'
        matched = {(i, j) for i, j, _ in self.matches}
        head = "".join(
            f'<th scope="col" title="{_esc(unit)}">P{j + 1}<div class="um-head">'
            f"{_esc(_shorten(unit))}</div></th>"
            for j, unit in enumerate(self.prediction_units)
        )
        body = []
        for i, (unit, row) in enumerate(zip(self.reference_units, self.scores, strict=True)):
            cells = "".join(_score_cell(score, (i, j) in matched) for j, score in enumerate(row))
            body.append(
                f'<tr><th scope="row" title="{_esc(unit)}">G{i + 1}'
                f'<div class="um-head">{_esc(_shorten(unit))}</div></th>{cells}</tr>'
            )
        return (
            '<table class="um-matrix"><thead><tr><th></th>'
            + head
            + "</tr></thead><tbody>"
            + "".join(body)
            + "</tbody></table>"
        )

    def alignment_html(self) -> str:
        """The matching as pairs side by side; unmatched units marked missed or
        over-generated."""
        lines = []
        for row in self.rows():
            left = (
                _unit_cell("G", row.reference_index, self.reference_units)
                if row.reference_index is not None
                else '<td class="um-none">—</td>'
            )
            right = (
                _unit_cell("P", row.prediction_index, self.prediction_units)
                if row.prediction_index is not None
                else '<td class="um-none">—</td>'
            )
            if row.kind == "matched":
                weak = (row.score or 0.0) < self.recovered_at
                note = f" (below {self.recovered_at:g}: not recovered)" if weak else ""
                middle = (
                    f'<td class="um-pair-score{" um-weak" if weak else ""}" '
                    f'data-score="{row.score!r}">{row.score:.2f}'
                    f'<div class="um-scale">{scale_label(row.score or 0.0)}{note}</div></td>'
                )
            else:
                middle = f'<td class="um-mark">{row.kind}</td>'
            lines.append(
                f'<tr class="um-row um-{row.kind}" data-kind="{row.kind}">'
                f"{left}{middle}{right}</tr>"
            )
        if not lines:
            return '<p class="um-empty">No unit on either side.</p>'
        return (
            '<table class="um-alignment"><thead><tr><th>Instructor unit</th><th>Score</th>'
            "<th>Model unit</th></tr></thead><tbody>" + "".join(lines) + "</tbody></table>"
        )

    def figures_html(self) -> str:
        """Precision, recall and F1 with the one-line reading."""
        variant = "soft" if self.threshold is None else f"threshold τ = {self.threshold:g}"
        figures = "".join(
            f'<div class="um-figure" id="um-{name.lower()}" data-value="{value!r}">'
            f'<span class="um-label">{name}</span><span class="um-value">{value:.3f}</span></div>'
            for name, value in (
                ("Precision", self.precision),
                ("Recall", self.recall),
                ("F1", self.f1),
            )
        )
        return (
            f'<div class="um-figures">{figures}</div>'
            f'<p class="um-reading" id="um-reading">{_esc(self.reading())}</p>'
            f'<p class="um-variant">UniMatch, {variant} variant.</p>'
        )

    def _repr_html_(self) -> str:
        return self.figures_html() + self.alignment_html() + self.matrix_html()


def explain(result: dict[str, Any], index: int = 0) -> Explanation:
    """The `Explanation` of paragraph ``index`` of a UniMatch result computed with
    ``return_details=True``.

    Raises ValueError when the result has no details, and `UniMatchError` with the reason
    when that paragraph could not be scored.
    """
    details = result.get("details")
    if details is None:
        raise ValueError(
            "the result has no per-paragraph details: compute it with return_details=True"
        )
    if not 0 <= index < len(details):
        raise ValueError(f"no paragraph {index} in a result of {len(details)}")
    detail = details[index]
    config = result["config"]
    threshold = config["threshold"]
    if detail["error"] is not None:
        raise UniMatchError(f"paragraph {index} could not be scored: {detail['error']}")
    return Explanation(
        reference_units=list(detail["reference_units"]),
        prediction_units=list(detail["prediction_units"]),
        scores=[list(row) for row in detail["scores"]],
        matches=[(int(i), int(j), float(s)) for i, j, s in detail["matches"]],
        precision=detail["precision"],
        recall=detail["recall"],
        f1=detail["f1"],
        threshold=threshold,
        recovered_at=config.get("recovered_at", RECOVERED_AT if threshold is None else threshold),
    )


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _unit_list(title: str, prefix: str, units: list[str], css_class: str) -> str:
    items = (
        "".join(
            f'<li class="um-unit"><span class="um-tag">{prefix}{k + 1}</span> {_esc(unit)}</li>'
            for k, unit in enumerate(units)
        )
        or '<li class="um-none">no unit</li>'
    )
    return f'<div class="{css_class}"><h4>{title}</h4><ol>{items}</ol></div>'


def _unit_cell(prefix: str, index: int, units: list[str]) -> str:
    return (
        f'<td class="um-unit"><span class="um-tag">{prefix}{index + 1}</span> '
        f"{_esc(units[index])}</td>"
    )


def _score_cell(score: float, matched: bool) -> str:
    """A heatmap cell: white at 0 to deep blue at 4, white text on dark cells."""
    share = max(0.0, min(1.0, score / MAX_SCORE))
    red, green, blue = (round(255 + (end - 255) * share) for end in (33, 102, 172))
    ink = "#fff" if share > 0.55 else "#111"
    mark = " um-matched" if matched else ""
    return (
        f'<td class="um-cell{mark}" data-score="{score!r}" '
        f'style="background:rgb({red},{green},{blue});color:{ink}">{score:.2f}</td>'
    )
