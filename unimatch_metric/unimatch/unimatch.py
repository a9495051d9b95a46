# Copyright 2026 SEFORA toolkit contributors. Licensed under the Apache License, Version 2.0.
"""UniMatch metric: a thin `evaluate` wrapper over the ``unimatch_metric`` library, which
the ``sefora-toolkit`` distribution installs (its ``local`` extra: the offline backends)."""

import inspect

import datasets
import evaluate

import unimatch_metric  # From: sefora-toolkit[local]

_CITATION = """\
@article{oskoui2026sefora,
  title={SEFORA: Student Essays with Feedback Corpus and LLM Feedback Evaluation Framework},
  author={Oskoui, Shayan Peyghambari and Almousa, Norah and Hou, Zhaoyi Joey and
          Gustafson, Carolina and Rogers, Gayle and Coelho, Raquel and Litman, Diane and
          Li, Xiang Lorraine},
  journal={arXiv preprint arXiv:2607.00274},
  year={2026}
}
"""

_DESCRIPTION = """\
UniMatch compares generated writing feedback with an instructor's comments on the same
paragraph, unit by unit. Both sides are split into feedback units (self-contained
statements about one aspect of the writing); every (instructor unit, generated unit) pair
is scored 0-4; a maximum-weight one-to-one matching (Hungarian algorithm) gives the
matched weight PHI, soft precision PHI/(4|P|), recall PHI/(4|G|) and F1. With a threshold
tau, pairs scoring at least tau count as matches and hard P/R/F1 follow. Precision, recall
and F1 are macro averages (means over paragraphs); micro_* figures pool all paragraphs.
Segmentation and scoring use an OpenAI-compatible LLM when a model or endpoint is given,
and otherwise the learned offline segmenter and scorer shipped with the library (boosted
trees and fine-tuned MiniLM layers, CPU, no download). Every result's config carries a
signature naming the version, backends, model digests, prompt version and threshold.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str` or of `list` of `str`): per paragraph, the generated
        feedback, either one text to segment or a list of ready feedback units.
    references (`list` of `list` of `str`): per paragraph, the instructor's comments.
    paragraphs (`list` of `str`, optional, `compute` only): the text of each paragraph;
        predicted units the grounding model finds about another text then score 0 (one
        process only: evaluate does not gather compute arguments across processes).
    segmenter (`str` or callable): "auto" (default), "llm", "offline" (= "learned"),
        "rules", or a function text -> units.
    scorer (`str` or callable): "auto" (default), "llm", "offline" (= "learned"),
        "embedding", "exact", or a function taking a list of (reference unit, predicted
        unit) pairs and returning one 0-4 score per pair.
    threshold (`float`, optional): tau for the hard variant; None (default) is soft.
    model (`str`), base_url (`str`), api_key (`str`): the OpenAI-compatible LLM backend.
    batch_size (`int`): pairs per LLM scoring request (default 50).
    cache_dir (`str`): where the score cache lives (default $XDG_CACHE_HOME/unimatch).
    use_cache (`bool`): read and write the cache (default True).
    segment_references (`bool`): segment each instructor comment (default True).
    return_details (`bool`): add per-paragraph units, scores and matches (default False).
    on_error (`str`): "raise" (default) or "skip" a paragraph whose LLM request failed.
Returns:
    precision, recall, f1: macro averages over paragraphs (0-1).
    micro_precision, micro_recall, micro_f1: pooled over paragraphs (0-1).
    mean_predicted_units, mean_reference_units: units per paragraph.
    n_examples: paragraphs scored; n_failed: paragraphs left out (on_error="skip").
    config: backends, model and endpoint used (never the API key), and "signature", one
        line such as "unimatch:0.1.0|seg:learned@60f9f30e|score:learned@92f09744|...".
    details: per paragraph (with return_details=True).
Examples:
    >>> unimatch = evaluate.load("unimatch", scorer="exact")
    >>> results = unimatch.compute(
    ...     predictions=[["Nice hook.", "Cite your sources."]],
    ...     references=[["Nice hook."]],
    ... )
    >>> print(results["precision"], results["recall"], results["f1"])
    0.5 1.0 0.6666666666666666
"""

_STRING = datasets.Value("string")
# Keyword arguments that belong to evaluate's EvaluationModule; all others are UniMatch options.
_MODULE_ARGS = set(inspect.signature(evaluate.EvaluationModule.__init__).parameters) - {
    "self",
    "kwargs",
}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Unimatch(evaluate.Metric):
    """UniMatch as an `evaluate.Metric`; options given to `evaluate.load` become defaults,
    checked there (an unknown backend fails at load time, not at the first `compute`)."""

    def __init__(self, cache_dir=None, **kwargs):
        module_kwargs = {key: kwargs.pop(key) for key in _MODULE_ARGS & set(kwargs)}
        # evaluate's own cache_dir (its Arrow buffers) also holds the score cache, if any.
        if cache_dir is not None and kwargs.get("use_cache", True):
            kwargs.setdefault("cache_dir", cache_dir)
        self._unimatch = unimatch_metric.UniMatch(**kwargs)
        super().__init__(cache_dir=cache_dir, **module_kwargs)

    # The inputs are checked before evaluate sees them: its own check does not say which
    # item is wrong, and it cannot store an empty batch.

    def add(self, *, prediction=None, reference=None, **kwargs):
        """As `evaluate.Metric.add`, the example checked first."""
        unimatch_metric.check_inputs([prediction], [reference])
        super().add(prediction=prediction, reference=reference, **kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """As `evaluate.Metric.add_batch`, the examples checked first; an empty batch adds
        nothing."""
        unimatch_metric.check_inputs(predictions, references)
        if len(predictions):
            super().add_batch(predictions=predictions, references=references, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """As `evaluate.Metric.compute`; no example at all gives UniMatch's empty result
        (``n_examples`` 0, every figure None). ``paragraphs`` is checked against every
        example before evaluate reads the added ones back (and drops them)."""
        if predictions is not None or references is not None:
            unimatch_metric.check_inputs(predictions, references)
        if kwargs.get("paragraphs") is not None:
            if self.num_process > 1:
                raise ValueError(
                    "paragraphs= works in one process only (evaluate gives compute "
                    "arguments to the main process alone, unaligned with the gathered examples)"
                )
            added = len(predictions) if predictions is not None else 0
            unimatch_metric.check_paragraphs(kwargs["paragraphs"], len(self) + added)
        empty = predictions is not None and not len(predictions) and not len(self)
        if empty and self.num_process == 1:
            return self._unimatch.compute([], [], **kwargs)
        return super().compute(predictions=predictions, references=references, **kwargs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features(
                    {"predictions": _STRING, "references": datasets.Sequence(_STRING)}
                ),
                datasets.Features(
                    {
                        "predictions": datasets.Sequence(_STRING),
                        "references": datasets.Sequence(_STRING),
                    }
                ),
            ],
            reference_urls=["https://arxiv.org/abs/2607.00274"],
        )

    def _compute(self, predictions, references, **kwargs):
        return self._unimatch.compute(predictions, references, **kwargs)
