"""Fine-tuning the learned scorer's MiniLM top layers on the labelled pairs.

The bottom layers stay frozen, so training runs them once per distinct text and then fits
only copies of the top ``TUNED_LAYERS`` layers (`unimatch_metric.encoder`): as a
bi-encoder (mean pooling, normalised; the cosine of the two units regressed on score / 4),
and as the `PairReader` over both units at once (cross-entropy against the labels'
distribution over 0-4).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sefora_common.progress import progress_bar
from unimatch_metric.encoder import PairReader, TunedEncoder, import_torch

__all__ = ["FIT_PARAMS", "fine_tune", "fit_pair_reader"]

#: Recipes. The bi-encoder's, compared on the validation part (1-3 epochs, 4e-5 or 1e-4):
#: 3 epochs at 4e-5. The pair reader's (``pair_*``), compared on the validation part of the
#: v2 labels: 4 epochs at 1e-4 (Spearman 0.659; 5e-5: 0.647), the head at 1e-3.
FIT_PARAMS = {
    "epochs": 3,
    "learning_rate": 4e-5,
    "batch_size": 32,
    "seed": 0,
    "pair_epochs": 4,
    "pair_learning_rate": 1e-4,
    "pair_head_learning_rate": 1e-3,
}


def _batches(lengths: np.ndarray, size: int) -> list[np.ndarray]:
    """Shuffled batches of pairs of similar length (less padding, faster training).

    Pools of 16 batches are drawn at random and sorted by length, then the batches are
    shuffled; the global torch RNG (seeded by the caller) decides both orders.
    """
    torch = import_torch()
    order = torch.randperm(len(lengths)).numpy()
    batches = []
    for start in range(0, len(order), 16 * size):
        pool = order[start : start + 16 * size]
        pool = pool[np.argsort(lengths[pool], kind="stable")]
        batches += [pool[i : i + size] for i in range(0, len(pool), size)]
    return [batches[i] for i in torch.randperm(len(batches)).numpy()]


def fine_tune(
    encoder: TunedEncoder,
    states: Sequence[Any],
    pairs: Sequence[tuple[int, int]],
    scores: Sequence[float] | np.ndarray,
    progress: bool | None = None,
    params: Mapping[str, Any] = FIT_PARAMS,
) -> None:
    """Train ``encoder``'s tuned top layers so that the cosine of each pair nears score/4.

    ``states`` are `bottom_states` of the texts that ``pairs`` index, computed once and
    shared by every encoder trained on them; ``params`` is the recipe (`FIT_PARAMS`).
    """
    torch = import_torch()
    p = params
    left = np.asarray([a for a, _ in pairs])
    right = np.asarray([b for _, b in pairs])
    target = torch.tensor(np.asarray(scores) / 4.0, dtype=torch.float32)
    tokens = np.asarray([s.shape[0] for s in states])
    lengths = np.maximum(tokens[left], tokens[right])
    with torch.random.fork_rng():  # seeded dropout and order, global RNG left alone
        torch.manual_seed(int(p["seed"]))
        optimiser = torch.optim.AdamW(encoder.tuned.parameters(), lr=float(p["learning_rate"]))
        encoder.tuned.train()
        size = int(p["batch_size"])
        steps = int(p["epochs"]) * math.ceil(len(pairs) / size)
        with progress_bar(total=steps, desc="Fine-tuning MiniLM", show=progress) as bar:
            for _ in range(int(p["epochs"])):
                for batch in _batches(lengths, size):
                    ids = list(dict.fromkeys([*left[batch], *right[batch]]))
                    at = {t: k for k, t in enumerate(ids)}
                    v = encoder.top(encoder.tuned, [states[i] for i in ids])
                    a = v[[at[i] for i in left[batch]]]
                    b = v[[at[i] for i in right[batch]]]
                    loss = torch.nn.functional.mse_loss((a * b).sum(-1), target[batch])
                    optimiser.zero_grad()
                    loss.backward()
                    optimiser.step()
                    bar.update()
        encoder.tuned.eval()
    # What ships is fp16: use the rounded weights from here on, as the loaded model will.
    encoder.tuned.load_state_dict(
        {k: torch.from_numpy(v.astype(np.float32)) for k, v in encoder.weights().items()}
    )


def _distribution(scores: np.ndarray) -> np.ndarray:
    """Each label as a distribution over 0-4: a mean of two annotators (2.5) splits between
    its neighbours."""
    out = np.zeros((len(scores), 5), dtype=np.float32)
    low = np.floor(scores).astype(int)
    weight = scores - low
    out[np.arange(len(scores)), low] = 1.0 - weight
    high = np.minimum(low + 1, 4)
    out[np.arange(len(scores)), high] += weight
    return out


def fit_pair_reader(
    reader: PairReader,
    states: Sequence[Any],
    pairs: Sequence[tuple[int, int]],
    scores: Sequence[float] | np.ndarray,
    progress: bool | None = None,
    params: Mapping[str, Any] = FIT_PARAMS,
) -> None:
    """Train ``reader`` to predict each pair's score distribution (cross-entropy).

    ``states`` are `TunedEncoder.bottom_states` of the texts that ``pairs`` index;
    ``params`` is the recipe (`FIT_PARAMS`, its ``pair_*`` entries).
    """
    torch = import_torch()
    p = params
    left = np.asarray([a for a, _ in pairs])
    right = np.asarray([b for _, b in pairs])
    target = torch.from_numpy(_distribution(np.asarray(scores, dtype=float)))
    tokens = np.asarray([s.shape[0] for s in states])
    lengths = tokens[left] + tokens[right]
    module = reader.module
    with torch.random.fork_rng():  # seeded dropout and order, global RNG left alone
        torch.manual_seed(int(p["seed"]))
        optimiser = torch.optim.AdamW(
            [
                {"params": module["layers"].parameters(), "lr": float(p["pair_learning_rate"])},
                {
                    "params": [*module["side"].parameters(), *module["head"].parameters()],
                    "lr": float(p["pair_head_learning_rate"]),
                },
            ]
        )
        module.train()
        size = int(p["batch_size"])
        steps = int(p["pair_epochs"]) * math.ceil(len(pairs) / size)
        with progress_bar(total=steps, desc="Fine-tuning the pair reader", show=progress) as bar:
            for _ in range(int(p["pair_epochs"])):
                for batch in _batches(lengths, size):
                    logits = reader.logits(
                        [states[i] for i in left[batch]], [states[i] for i in right[batch]]
                    )
                    loss = -(target[batch] * torch.log_softmax(logits, dim=-1)).sum(-1).mean()
                    optimiser.zero_grad()
                    loss.backward()
                    optimiser.step()
                    bar.update()
        module.eval()
    # What ships is fp16: use the rounded weights from here on, as the loaded model will.
    module.load_state_dict(
        {k: torch.from_numpy(v.astype(np.float32)) for k, v in reader.weights().items()}
    )
