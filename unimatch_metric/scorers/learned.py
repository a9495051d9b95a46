"""The learned scorer: gradient-boosted trees on the cosine of the two units' MiniLM
embeddings, its top four layers fine-tuned on the labelled pairs, feedback-category cues
and word and quote overlap, predicting the 0–4 score (clipped).

Deterministic and CPU-only; the trees and the fine-tuned layers (fp16) load from
``models/scorer.npz`` (`unimatch_metric.training.train` fits them).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sefora_common.text import normalise
from unimatch_metric.encoder import TunedEncoder
from unimatch_metric.errors import UniMatchError
from unimatch_metric.features import QUOTED, content_words, unit_features
from unimatch_metric.models import SCORER_FILE, load_model, model_namespace
from unimatch_metric.trees import predict_raw

#: Prefix of the fine-tuned MiniLM layers' arrays inside the scorer's ``.npz``.
TUNED_PREFIX = "minilm."


@functools.lru_cache(maxsize=4)
def tuned_encoder(path: Path) -> TunedEncoder:
    """The scorer's fine-tuned MiniLM layers over the shared frozen bottom (loaded once)."""
    model = load_model(path)
    return TunedEncoder(
        {k[len(TUNED_PREFIX) :]: v for k, v in model.items() if k.startswith(TUNED_PREFIX)}
    )


def pair_features(
    pairs: Sequence[tuple[str, str]], encoder: TunedEncoder, progress: bool | None = None
) -> np.ndarray:
    """Features of each (instructor unit, model unit) pair: cosine + category cues.

    The fine-tuned MiniLM cosine, cue agreement, each unit's cues, word and quote overlap.
    The embeddings' element-wise products are left out: on the validation part they made
    the trees 100x slower to fit and no better (reduced to 8 or 16 principal components,
    they moved Spearman by at most 0.004). So is the original MiniLM cosine: without it the
    trees fitted on the same out-of-fold features gave validation Pearson / Spearman 0.783 /
    0.761 against 0.784 / 0.759, and it cost a third of the scorer's encoding time.
    Besides the words' Jaccard overlap, the share of the smaller unit's words and of the
    instructor unit's words found in the other: a short comment ("this risk", "echo your
    intro") is often wholly inside a longer unit that makes the same point (on the shipped
    out-of-fold features, validation 0.816 / 0.775 -> 0.820 / 0.782). Token-level
    alignment of the tuned states (mean best cosine each way) added nothing beyond them.
    """
    if not pairs:
        return np.zeros((0, 0))
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    index = {t: i for i, t in enumerate(texts)}
    vectors = encoder.encode(texts, progress)
    units = np.asarray([unit_features(t) for t in texts])
    words = [content_words(t) for t in texts]
    quotes = [{q.lower() for q in QUOTED.findall(t)} for t in texts]
    ia = np.asarray([index[a] for a, _ in pairs])
    ib = np.asarray([index[b] for _, b in pairs])
    fa, fb = units[ia], units[ib]
    cos = np.einsum("ij,ij->i", vectors[ia], vectors[ib])[:, None]
    overlap = [
        _overlap(words[i], words[j], any(q in b.lower() for q in quotes[i]))
        for i, j, (_, b) in zip(ia, ib, pairs, strict=True)
    ]
    cues = slice(0, 8)  # category cues and the question mark, not the length
    return np.hstack(
        [
            cos,
            cos * cos,
            fa[:, cues] * fb[:, cues],
            np.abs(fa[:, cues] - fb[:, cues]),
            fa,
            fb,
            np.asarray(overlap),
        ]
    )


def _overlap(a: set[str], b: set[str], quoted: bool) -> list[float]:
    """Word overlap of an (instructor, model) pair's content words: Jaccard, share of the
    smaller unit's and of the instructor unit's words found in the other; and whether the
    model unit repeats a passage the instructor unit quotes."""
    shared = len(a & b)
    return [
        shared / max(1, len(a) + len(b) - shared),
        shared / max(1, min(len(a), len(b))),
        shared / max(1, len(a)),
        1.0 if quoted else 0.0,
    ]


def predict_score(model: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """Scores of the scorer's trees, clipped to the 0–4 scale; a score below the model's
    ``zero_below`` (chosen in training) is 0, as a judge scores most unrelated pairs."""
    scores = np.clip(predict_raw(model, x), 0.0, 4.0)
    return np.where(scores < float(model.get("zero_below", 0.0)), 0.0, scores)


class LearnedScorer:
    """Boosted trees on fine-tuned MiniLM features (``models/scorer.npz``; results cached)."""

    name = "learned"

    def __init__(self, path: Path = SCORER_FILE, progress: bool | None = None) -> None:
        self.model = load_model(path)
        self.encoder = tuned_encoder(path)
        self.cache_namespace = model_namespace("score", path)
        self.progress = progress

    @property
    def config(self) -> dict[str, Any]:
        """The learned scorer, its embedding model and the digest of its model file."""
        return {
            "model": "learned-scorer",
            "embedding": "all-MiniLM-L6-v2, top layers fine-tuned",
            "digest": self.cache_namespace[-1],
        }

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float | UniMatchError]:
        """Predict a 0–4 score for each pair; identical units (up to case and spacing) get 4."""
        if not pairs:
            return []
        predicted = predict_score(self.model, pair_features(pairs, self.encoder, self.progress))
        return [
            4.0 if normalise(a) == normalise(b) else float(s)
            for (a, b), s in zip(pairs, predicted, strict=True)
        ]
