"""Gradient-boosted trees stored as plain arrays, evaluated with numpy.

The learned backends ship their trees as ``.npz`` arrays (no pickle), so using them needs
only numpy; fitting them (`unimatch_metric.training.trees`) needs scikit-learn.
"""

from __future__ import annotations

import numpy as np


def predict_raw(model: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The ensemble's raw output per row (log-odds for a classifier, the value otherwise)."""
    if x.shape[1] != int(model["n_features"]):
        raise ValueError(f"expected {int(model['n_features'])} features, got {x.shape[1]}")
    offsets = model["offsets"]
    feature, threshold = model["feature"], model["threshold"]
    left, right, value = model["left"], model["right"], model["value"]
    rows = np.arange(len(x))[:, None]
    node = np.broadcast_to(offsets, (len(x), len(offsets))).copy()  # every row in every tree
    while True:
        inner = left[node] >= 0
        if not inner.any():
            break
        go_left = x[rows, np.maximum(feature[node], 0)] <= threshold[node]
        child = np.where(go_left, left[node], right[node]) + offsets
        node = np.where(inner, child, node)
    return float(model["init"]) + float(model["learning_rate"]) * value[node].sum(axis=1)


def predict_proba(model: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """Probability of the positive class for a classifier ensemble."""
    return 1.0 / (1.0 + np.exp(-predict_raw(model, x)))
