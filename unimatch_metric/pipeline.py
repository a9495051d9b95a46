"""UniMatch end to end: segment, score every unit pair of a paragraph, match, aggregate.

One example is one paragraph: the model's feedback (a string to segment, or a list of
ready units) against the instructor's comments on that paragraph (a list of strings).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sefora_common.text import lone_surrogate
from unimatch_metric.errors import BackendError, UniMatchError
from unimatch_metric.grounding import Grounding
from unimatch_metric.match import RECOVERED_AT, match
from unimatch_metric.options import Options
from unimatch_metric.prompts import PROMPT_VERSION
from unimatch_metric.report import ExampleResult, aggregate, failed_details, signature
from unimatch_metric.scorers import SCORERS, score_outcomes
from unimatch_metric.segmenters import SEGMENTERS, Side, segment_sides


def _check_text(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{where} must be a string, got {_kind(value)}")
    if code := lone_surrogate(value):
        raise ValueError(f"{where} holds a lone surrogate {code}, which UTF-8 cannot encode")


def _kind(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def check_inputs(predictions: Any, references: Any, paragraphs: Any = None) -> None:
    """Raise TypeError or ValueError naming the first bad item, e.g. ``references[2][1]``.

    ``predictions``: one string or list of strings per paragraph; ``references``: one list
    of strings per paragraph, as many as predictions; ``paragraphs`` (optional): the text
    of each paragraph, as many as predictions. Empty lists are fine.
    """
    for name, value in (("predictions", predictions), ("references", references)):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise TypeError(f"{name} must be a list (one item per paragraph), got {_kind(value)}")
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions and references differ in length: {len(predictions)} != {len(references)}"
        )
    for i, pred in enumerate(predictions):
        if isinstance(pred, str):
            _check_text(pred, f"predictions[{i}]")
        elif isinstance(pred, Sequence) and not isinstance(pred, bytes):
            for j, unit in enumerate(pred):
                _check_text(unit, f"predictions[{i}][{j}]")
        else:
            raise TypeError(
                f"predictions[{i}] must be a string or a list of strings, got {_kind(pred)}"
            )
    for i, refs in enumerate(references):
        if isinstance(refs, (str, bytes)) or not isinstance(refs, Sequence):
            raise TypeError(
                f"references[{i}] must be a list of strings (the instructor's comments), "
                f"got {_kind(refs)}"
            )
        for j, comment in enumerate(refs):
            _check_text(comment, f"references[{i}][{j}]")
    if paragraphs is not None:
        check_paragraphs(paragraphs, len(predictions))


def is_paragraph_text(value: Any) -> bool:
    """Whether ``value`` can be a paragraph given to grounding: a string that is not blank."""
    return isinstance(value, str) and bool(value.strip())


def check_paragraphs(paragraphs: Any, n: int) -> None:
    """Raise TypeError or ValueError unless ``paragraphs`` holds ``n`` non-empty texts (the
    paragraphs of as many examples), naming the first bad one."""
    if isinstance(paragraphs, (str, bytes)) or not isinstance(paragraphs, Sequence):
        raise TypeError(
            f"paragraphs must be a list (one text per paragraph), got {_kind(paragraphs)}"
        )
    if len(paragraphs) != n:
        raise ValueError(f"paragraphs and predictions differ in length: {len(paragraphs)} != {n}")
    for i, paragraph in enumerate(paragraphs):
        _check_text(paragraph, f"paragraphs[{i}]")
        if not is_paragraph_text(paragraph):
            raise ValueError(f"paragraphs[{i}] is empty: give the paragraph's text")


def _ready_units(units: Sequence[str]) -> list[str]:
    return [u.strip() for u in units if u.strip()]


class UniMatch:
    """The UniMatch metric with fixed options, reusable across calls (like sacrebleu's BLEU).

    ``UniMatch(scorer="llm", model="...", base_url="...").compute(predictions, references)``
    """

    def __init__(self, **options: Any) -> None:
        self.options = Options.from_kwargs(**options)
        self._given = frozenset(options)
        self._check(self.options, self._given)

    @staticmethod
    def _check(opts: Options, given: frozenset[str]) -> None:
        """Backend names known and every option given used (`UniMatchOptionError`), so a
        mistake shows when the metric is made, not after a training epoch."""
        opts.check_used(
            given,
            segmenter=SEGMENTERS.backend_name(opts.segmenter, opts),
            scorer=SCORERS.backend_name(opts.scorer, opts),
            pipeline=True,
        )

    def compute(
        self,
        predictions: Sequence[str | Sequence[str]],
        references: Sequence[Sequence[str]],
        paragraphs: Sequence[str] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Score ``predictions`` against ``references``; ``options`` override this instance's.

        With ``paragraphs`` (the text each example's feedback is about), predicted units that
        the grounding model finds about another text score 0 (`unimatch_metric.grounding`).

        Returns macro ``precision``/``recall``/``f1`` (means over paragraphs), pooled
        ``micro_*`` figures, mean unit counts, ``n_examples`` (examples scored), ``n_failed``
        (examples left out with ``on_error="skip"``), ``config`` and, with
        ``return_details=True``, per-example ``details``.
        """
        opts = Options.from_kwargs(self.options, **options)
        if options:
            self._check(opts, self._given | set(options))
        check_inputs(predictions, references, paragraphs)
        segmenter = SEGMENTERS.create(opts.segmenter, opts)
        scorer = SCORERS.create(opts.scorer, opts)
        grounding = Grounding() if paragraphs is not None else None  # loaded before any request
        n = len(predictions)
        errors: dict[int, str] = {}

        def fail(i: int, err: UniMatchError) -> None:
            if opts.on_error == "raise":
                raise BackendError(f"example {i}: {err}") from err
            errors.setdefault(i, str(err))

        # Stage 1: segmentation of every text that needs it, one pass per side.
        segmented = segment_sides(
            [p for p in predictions if isinstance(p, str)],
            [c for refs in references for c in refs] if opts.segment_references else [],
            segmenter,
            opts,
        )

        def units_of(texts: Sequence[str], i: int, side: Side) -> list[str]:
            units: list[str] = []
            for text in texts:
                outcome = segmented[side][text]
                if isinstance(outcome, UniMatchError):
                    fail(i, outcome)
                    return []
                units += outcome
            return units

        pred_units, ref_units = [], []
        for i, (pred, refs) in enumerate(zip(predictions, references, strict=True)):
            pred_units.append(
                units_of([pred], i, "feedback") if isinstance(pred, str) else _ready_units(pred)
            )
            ref_units.append(
                units_of(refs, i, "instructor") if opts.segment_references else _ready_units(refs)
            )

        # Stage 2: one score per (reference unit, predicted unit) pair of each paragraph.
        live = [i for i in range(n) if i not in errors]
        pairs = [(g, p) for i in live for g in ref_units[i] for p in pred_units[i]]
        scored = dict(zip(pairs, score_outcomes(pairs, scorer, opts), strict=True))

        # Between scoring and matching: the units that are about another text, if known.
        off: dict[int, list[int]] = {}
        if grounding is not None and paragraphs is not None:
            found = grounding.off_paragraph(
                [pred_units[i] for i in live], [paragraphs[i] for i in live]
            )
            off = dict(zip(live, found, strict=True))

        # Stage 3: matching per paragraph.
        results: dict[int, ExampleResult] = {}
        for i in live:
            values = [scored[(g, p)] for g in ref_units[i] for p in pred_units[i]]
            failure = next((v for v in values if isinstance(v, UniMatchError)), None)
            if failure is not None:
                fail(i, failure)
                continue
            matrix = np.asarray(values, dtype=float).reshape(len(ref_units[i]), len(pred_units[i]))
            matrix[:, off.get(i, [])] = 0.0
            results[i] = ExampleResult(
                pred_units[i],
                ref_units[i],
                matrix,
                match(matrix, opts.threshold),
                off.get(i) if grounding is not None else None,
            )

        # Stage 4: aggregation.
        output = aggregate([results[i] for i in sorted(results)], opts.threshold)
        output["n_failed"] = len(errors)
        output["config"] = {
            "segmenter": {"name": segmenter.name, **segmenter.config},
            "scorer": {"name": scorer.name, **scorer.config},
            "threshold": opts.threshold,
            "recovered_at": RECOVERED_AT if opts.threshold is None else float(opts.threshold),
            "batch_size": opts.batch_size,
            "segment_references": opts.segment_references,
            "prompt_version": PROMPT_VERSION,
            "grounding": grounding.config if grounding is not None else None,
        }
        output["config"]["signature"] = signature(output["config"])
        if opts.return_details:
            output["details"] = [
                results[i].details() if i in results else failed_details(errors[i])
                for i in range(n)
            ]
        return output


def unimatch(
    predictions: Sequence[str | Sequence[str]],
    references: Sequence[Sequence[str]],
    paragraphs: Sequence[str] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """UniMatch scores of ``predictions`` against ``references`` (see `UniMatch.compute`)."""
    return UniMatch(**options).compute(predictions, references, paragraphs)
