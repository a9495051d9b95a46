"""Stage 4 of UniMatch: per-paragraph results and their macro and micro aggregates.

Macro figures are means over paragraphs (``f1`` is the mean of the paragraphs' F1, not
the F1 of the mean P and R); micro figures pool Φ (or TP) and unit counts over all
paragraphs before dividing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sefora_common import __version__
from unimatch_metric.match import MAX_SCORE, MatchResult, f1_score, ratio

FIGURES = (
    "precision",
    "recall",
    "f1",
    "micro_precision",
    "micro_recall",
    "micro_f1",
    "mean_predicted_units",
    "mean_reference_units",
)


@dataclass
class ExampleResult:
    """One paragraph: its units on both sides, the |G|×|P| scores and their matching."""

    prediction_units: list[str]
    reference_units: list[str]
    scores: np.ndarray
    match: MatchResult
    off_paragraph: list[int] | None = None  # predicted units found off-paragraph, if checked

    def details(self) -> dict[str, Any]:
        """The JSON-friendly per-example entry of ``details``."""
        return {
            "prediction_units": self.prediction_units,
            "reference_units": self.reference_units,
            "scores": self.scores.tolist(),
            "matches": [[i, j, score] for i, j, score in self.match.pairs],
            "n_recovered": self.match.n_recovered,
            "off_paragraph_units": self.off_paragraph,
            "precision": self.match.precision,
            "recall": self.match.recall,
            "f1": self.match.f1,
            "error": None,
        }


def failed_details(reason: str) -> dict[str, Any]:
    """The ``details`` entry of an example left out because of ``reason``."""
    return {
        "prediction_units": None,
        "reference_units": None,
        "scores": None,
        "matches": None,
        "n_recovered": None,
        "off_paragraph_units": None,
        "precision": None,
        "recall": None,
        "f1": None,
        "error": reason,
    }


def aggregate(results: Sequence[ExampleResult], threshold: float | None) -> dict[str, Any]:
    """Macro and micro precision/recall/F1 and mean unit counts over ``results``.

    Every figure is None when there is no result to aggregate.
    """
    n = len(results)
    if n == 0:
        return {**dict.fromkeys(FIGURES), "n_examples": 0}
    unit_weight = 1.0 if threshold is not None else MAX_SCORE
    total = sum(r.match.total for r in results)
    n_pred = sum(r.match.n_predicted for r in results)
    n_ref = sum(r.match.n_reference for r in results)
    micro_p = ratio(total, unit_weight * n_pred)
    micro_r = ratio(total, unit_weight * n_ref)
    return {
        "precision": float(np.mean([r.match.precision for r in results])),
        "recall": float(np.mean([r.match.recall for r in results])),
        "f1": float(np.mean([r.match.f1 for r in results])),
        "micro_precision": micro_p,
        "micro_recall": micro_r,
        "micro_f1": f1_score(micro_p, micro_r),
        "mean_predicted_units": n_pred / n,
        "mean_reference_units": n_ref / n,
        "n_examples": n,
    }


def _backend_signature(backend: Mapping[str, Any]) -> str:
    """One backend in a signature: an LLM by model name, a learned model by its file's
    digest, the embedding baseline by the MiniLM package version, a user function as such."""
    name = backend["name"]
    if backend.get("custom"):
        return f"custom:{name}"
    if name == "llm":
        return f"llm:{backend.get('model') or 'default'}"
    if backend.get("digest"):
        return f"{name}@{backend['digest'][:8]}"
    if backend.get("minilm"):
        return f"{name}@minilm-{backend['minilm']}"
    return name


def signature(config: Mapping[str, Any]) -> str:
    """The compact line that identifies how a result was computed, like sacrebleu's:
    ``unimatch:0.1.0|seg:learned@1a2b3c4d|score:llm:gpt-5-mini|prompt:...|tau:soft|bs:50|refs:units``.

    Two figures with the same signature were computed the same way; report it with them.
    Results checked against their paragraphs end in ``|ground:learned@…``.
    """
    tau = config["threshold"]
    grounding = config.get("grounding")
    return "|".join(
        [
            f"unimatch:{__version__}",
            f"seg:{_backend_signature(config['segmenter'])}",
            f"score:{_backend_signature(config['scorer'])}",
            f"prompt:{config['prompt_version']}",
            f"tau:{'soft' if tau is None else format(float(tau), 'g')}",
            f"bs:{config['batch_size']}",
            f"refs:{'units' if config['segment_references'] else 'whole'}",
            *([f"ground:{_backend_signature(grounding)}"] if grounding else []),
        ]
    )
