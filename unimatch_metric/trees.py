"""Gradient-boosted trees as plain arrays: fitted with scikit-learn, evaluated with numpy.

The learned backends ship their trees as ``.npz`` arrays (no pickle), so using them needs
only numpy; scikit-learn is needed only to retrain them.
"""

from __future__ import annotations

import numpy as np

TREE_PARAMS = {"n_estimators": 200, "max_depth": 3, "learning_rate": 0.05, "subsample": 0.8}


def fit_trees(
    x: np.ndarray, y: np.ndarray, classify: bool, seed: int = 0, **params: float
) -> dict[str, np.ndarray]:
    """Fit boosted trees (log-loss when ``classify``, else squared error); return arrays."""
    try:
        from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
    except ImportError as err:
        raise ImportError(
            "retraining the learned models needs scikit-learn: pip install 'sefora-toolkit[local]'"
        ) from err
    kind = GradientBoostingClassifier if classify else GradientBoostingRegressor
    model = kind(random_state=seed, **{**TREE_PARAMS, **params}).fit(x, y)
    trees = [est.tree_ for est in model.estimators_[:, 0]]
    sizes = np.asarray([t.node_count for t in trees])
    return {
        "offsets": np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64),
        "feature": np.concatenate([t.feature for t in trees]).astype(np.int64),
        "threshold": np.concatenate([t.threshold for t in trees]),
        "left": np.concatenate([t.children_left for t in trees]).astype(np.int64),
        "right": np.concatenate([t.children_right for t in trees]).astype(np.int64),
        "value": np.concatenate([t.value[:, 0, 0] for t in trees]),
        "init": np.asarray(float(model._raw_predict_init(x[:1])[0, 0])),
        "learning_rate": np.asarray(model.learning_rate),
        "n_features": np.asarray(x.shape[1]),
    }


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
