# Copyright 2026 SEFORA toolkit contributors. Licensed under the Apache License, Version 2.0.
"""Rubric judge metric: a thin `evaluate` wrapper over the ``feedback_judges`` library, which
the ``sefora-toolkit`` distribution installs."""

import inspect

import datasets
import evaluate

import feedback_judges  # From: sefora-toolkit

_CITATION = """\
@misc{rubric_judge,
  title={Rubric judge: LLM-as-judge checklists for writing and math feedback},
  note={sefora-toolkit; rubrics after the math-feedback rubric of "Improving the Validity of
        Automatically Generated Feedback via Reinforcement Learning" and the RFE checklist of
        "Beyond Score Prediction: LLM-Based Essay Scoring and Feedback Generation via
        Reinforcement Learning with Rubric Rewards" (arXiv:2607.19219)}
}
"""

_DESCRIPTION = """\
An LLM judge answers a checklist of binary rubric items about each feedback text, given the
material it was written for (an essay, or a math question with the student's answer). Each
item has a weight; the score is the weighted fraction of satisfied items, and 0 when a gate
item (e.g. "the feedback is correct") fails. The config name picks the rubric: the bundled
"essay-feedback" (default; coverage, evidence, faithfulness, safety) or "math-feedback"
(score = correct x sum of 5 labels / 5), or a path to a rubric JSON file.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): the feedback texts to judge.
    references (`list` of `dict`): per feedback, the material the judge sees, one string
        per context field of the rubric (essay-feedback: "essay", "prompt" optional;
        math-feedback: "question", "correct_answer", "student_answer", "solution" optional).
    model (`str`), base_url (`str`), api_key (`str`): the OpenAI-compatible LLM judge.
    batch_size (`int`): rubric items per request (default 20).
    cache_dir (`str`), use_cache (`bool`): the answer cache (shared with UniMatch).
    on_error (`str`): "raise" (default) or "skip" a feedback whose judging failed.
    return_details (`bool`): add per-feedback verdicts and reasons (default False).
Returns:
    score: mean score over judged feedback (0-1); dimension_scores, item_rates: means.
    scores: one score per feedback (None if it failed with on_error="skip").
    n_examples, n_failed, config (rubric, digest, model, endpoint, signature; never the key).
Examples:
    >>> judge = evaluate.load("rubric_judge", "math-feedback", model="gpt-5-mini")
    >>> results = judge.compute(
    ...     predictions=["Check how you simplified 6/8 before comparing the two shares."],
    ...     references=[{"question": "...", "correct_answer": "...", "student_answer": "..."}],
    ... )
    >>> results["score"]  # doctest: +SKIP
"""

_STRING = datasets.Value("string")
_MODULE_ARGS = set(inspect.signature(evaluate.EvaluationModule.__init__).parameters) - {
    "self",
    "kwargs",
}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RubricJudge(evaluate.Metric):
    """The rubric judge as an `evaluate.Metric`; options given to `evaluate.load` are defaults."""

    def __init__(self, config_name=None, cache_dir=None, **kwargs):
        module_kwargs = {key: kwargs.pop(key) for key in _MODULE_ARGS & set(kwargs)}
        name = feedback_judges.DEFAULT_RUBRIC if config_name in (None, "default") else config_name
        self._rubric = feedback_judges.load_rubric(name)
        super().__init__(config_name=config_name, cache_dir=cache_dir, **module_kwargs)
        if cache_dir is not None:
            kwargs.setdefault("cache_dir", cache_dir)
        self._judge = feedback_judges.RubricJudge(self._rubric, **kwargs)

    def _info(self):
        context = {c.name: _STRING for c in self._rubric.context}
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": _STRING, "references": context}),
            reference_urls=["https://arxiv.org/abs/2607.19219"],
        )

    def _complete(self, references):
        """References with every context field present ("" for one left out: `evaluate`
        needs the same keys in every row, and the library takes "" as absent)."""
        if references is None:
            return None
        names = [c.name for c in self._rubric.context]
        return [dict(ref) | {n: ref.get(n) or "" for n in names} for ref in references]

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch; optional context fields may be left out of the references."""
        return super().add_batch(
            predictions=predictions, references=self._complete(references), **kwargs
        )

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one example; optional context fields may be left out of the reference."""
        reference = None if reference is None else self._complete([reference])[0]
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Judge the feedback; optional context fields may be left out of the references."""
        return super().compute(
            predictions=predictions, references=self._complete(references), **kwargs
        )

    def _compute(self, predictions, references, **kwargs):
        return self._judge.compute(predictions, references, **kwargs)
