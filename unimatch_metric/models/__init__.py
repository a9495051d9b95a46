"""The learned models shipped with the package (``*.npz`` arrays, no pickle): where they
are, loading them once per process, and the cache namespace that names each model file."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numpy as np

from unimatch_metric.errors import ModelFileError

MODEL_DIR = Path(__file__).resolve().parent
SEGMENTER_FILE = MODEL_DIR / "segmenter.npz"
SCORER_FILE = MODEL_DIR / "scorer.npz"
GROUNDING_FILE = MODEL_DIR / "grounding.npz"
REFERENCE_FILE = MODEL_DIR / "reference.json"


def model_namespace(stage: str, path: Path) -> tuple[str, ...]:
    """Cache key prefix of a learned model: its stage, the MiniLM package version and the
    digest of its ``.npz`` (a retrained model never reuses an old model's results)."""
    from unimatch_metric.encoder import minilm_version

    return (stage, "learned", minilm_version(), model_digest(path))


def model_digest(path: Path) -> str:
    """The first 16 hex digits of the SHA-256 of a model file (names it in cache keys and in
    the result's signature)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except FileNotFoundError as err:
        raise ModelFileError(
            f"learned model file missing: {path} (run `sefora train-offline`)"
        ) from err


@functools.lru_cache(maxsize=4)
def load_model(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a model file (loaded once per process)."""
    try:
        with np.load(path) as data:
            return {k: data[k] for k in data.files}
    except FileNotFoundError as err:
        raise ModelFileError(
            f"learned model file missing: {path} (run `sefora train-offline`)"
        ) from err
    except (OSError, ValueError) as err:
        raise ModelFileError(f"learned model file unreadable: {path} ({err})") from err
