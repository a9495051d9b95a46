"""Fine-tuning MiniLM layers on the labels: the learned scorer's top layers on the labelled
pairs (`fine_tune`), the learned segmenter's layers 3-4 and head on the labelled cuts
(`fine_tune_cuts`).

The bottom layers stay frozen, so training runs them once per distinct text (or window)
and then fits only the layers above. The scorer's top ``TUNED_LAYERS`` layers
(`unimatch_metric.encoder`) train as a bi-encoder (mean pooling, normalised; the cosine of
the two units regressed on score / 4).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from sefora_common.progress import progress_bar
from unimatch_metric.encoder import TunedEncoder, import_torch, layer_weights
from unimatch_metric.segmenters.learned import (
    CUT_WIDTH,
    HEAD_PREFIX,
    CutWindow,
    cut_layers,
    window_features,
)

__all__ = [
    "CUT_FIT_PARAMS",
    "FIT_PARAMS",
    "fine_tune",
    "fine_tune_cuts",
    "length_batches",
    "paragraph_batches",
]

#: Recipe: one epoch, the rate peaking at 2e-4. On label batches 1-3 (7,520 pairs) 3 epochs
#: at 4e-5 did best of 1-3 epochs at 4e-5 or 1e-4 (constant rates); with the v2 rounds'
#: 11,411 pairs one epoch keeps retraining within its budget (three fine-tunes,
#: `unimatch_metric.training.train`). Batches that keep each paragraph's pairs together
#: (`paragraph_batches`) instead of random pairs of similar length: validation Pearson /
#: Spearman 0.819 / 0.780 -> 0.816 / 0.785, `sefora train-offline` 14:50 -> 12:55 on two
#: cores (user time 1,651 s -> 1,417 s); with them a peak of 3e-4 gave 0.816 / 0.782.
#: The rate warms up linearly over the first ``warmup`` share of the steps to its peak, then
#: decays linearly to 0: at peak 2e-4 this raised validation Pearson / Spearman from 0.795 /
#: 0.775 (constant 1e-4) to 0.820 / 0.791, and the end-to-end pooled Pearson on labels/e2e
#: from 0.700 to 0.725 (per-paragraph Spearman 0.864 to 0.869). Peaks of 1.5e-4 and 3e-4
#: gave 0.815 / 0.782 and 0.820 / 0.788.
#: Fitting the cosine to (score / 4) ** 0.5 instead, which widens the 0-1 step most labels
#: sit on, raised validation Spearman (two tuned layers) from 0.744 to 0.768 (exponent
#: 0.35: 0.764) but lowered the end-to-end pooled Pearson on labels/e2e by 0.018 (95 %
#: interval of the difference over 2,000 paragraph resamples, both models on each: -0.030
#: to -0.006). Adding a CoSENT ranking loss (scale 20, weight 1) over each batch's pairs,
#: which rewards ordering the cosines as the scores, lowered validation Pearson / Spearman
#: of the shipped two-fold recipe from 0.795 / 0.775 to 0.782 / 0.750.
#: Averaging the tuned weights of seeds 0-2 (a uniform soup, one encoder at inference, the
#: trees of seed 0) moved validation from 0.816 / 0.779 to 0.823 / 0.789 and held-out round
#: 5 from 0.814 / 0.781 to 0.818 / 0.794, but not the independent e2e annotators' 4,272
#: pairs (0.820 / 0.780 -> 0.818 / 0.777); its two more full fine-tunes would take
#: retraining from 13 to about 18.5 minutes, over budget. Averaging the two fold encoders
#: with the full one, at no cost, lowered round 5 to 0.804 / 0.767.
#: A pair head trained beside the cosine (an MLP over the two vectors' product and absolute
#: difference, 768 -> 64 -> 1, regressed on score / 4; its output one more tree feature)
#: raised the mean Spearman of seeds 0-2 on validation from 0.781 to 0.788 and on round 5
#: from 0.788 to 0.803, but not on the e2e annotators' pairs (0.773 -> 0.775; Pearson 0.812
#: -> 0.809): it fits this project's annotators, not the task, so it was left out.
FIT_PARAMS = {"epochs": 1, "learning_rate": 2e-4, "warmup": 0.1, "batch_size": 32, "seed": 0}


#: Recipe of the segmenter's layers 3-4 and head (weighted binary cross-entropy over the
#: candidate cuts; the head, zero at the start, learns at ten times the layers' rate).
#: Against frozen states under a logistic layer, 5-fold train CV boundary F1 of the mean
#: with the trees, best threshold per subset, two epochs: model-style feedback 0.906 ->
#: 0.913, instructor comments 0.734 -> 0.763, random instructor comments 0.718 -> 0.734.
#: Three epochs against two, on two of those folds: 0.919 -> 0.925, 0.763 -> 0.784,
#: 0.771 -> 0.783; one epoch at 2e-4 was worse than two at 1e-4 on every subset. Four
#: epochs, or tuning layers 2-4 (a third more training time), moved these by -0.012 to
#: +0.015, inside the folds' noise; nor did weighting the head above the trees help.
CUT_FIT_PARAMS = {
    "epochs": 3,
    "learning_rate": 1e-4,
    "head_learning_rate": 1e-3,
    "warmup": 0.1,
    "batch_size": 16,
    "seed": 0,
}


def paragraph_batches(groups: np.ndarray, size: int) -> list[np.ndarray]:
    """Shuffled batches that keep each paragraph's pairs together: its units recur across its
    pairs, so a batch of 32 runs about 27 distinct texts through the tuned layers on the v2
    labels (about 2 paragraphs per batch), where 32 random pairs need 63.

    Paragraphs come in a random order, each one's pairs shuffled, the sequence is cut into
    batches and the batches are shuffled; the global torch RNG (seeded by the caller)
    decides every order.
    """
    torch = import_torch()
    names, group = np.unique(groups, return_inverse=True)
    order = []
    for g in torch.randperm(len(names)).numpy():
        members = np.flatnonzero(group == g)
        order.append(members[torch.randperm(len(members)).numpy()])
    sequence = np.concatenate(order) if order else np.zeros(0, dtype=int)
    batches = [sequence[i : i + size] for i in range(0, len(sequence), size)]
    return [batches[i] for i in torch.randperm(len(batches)).numpy()]


def _rate_factor(steps: int, warmup: float) -> Callable[[int], float]:
    """The share of the peak learning rate at each step: linear warm-up, then linear decay."""
    warm = max(1, int(warmup * steps))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return (steps - step) / max(1, steps - warm)

    return factor


def fine_tune(
    encoder: TunedEncoder,
    states: Sequence[Any],
    pairs: Sequence[tuple[int, int]],
    scores: Sequence[float] | np.ndarray,
    groups: Sequence[str] | np.ndarray,
    progress: bool | None = None,
    params: Mapping[str, Any] = FIT_PARAMS,
) -> None:
    """Train ``encoder``'s tuned top layers so that the cosine of each pair nears score/4.

    ``states`` are `bottom_states` of the texts that ``pairs`` index, computed once and
    shared by every encoder trained on them; ``groups`` names each pair's paragraph (kept
    together in batches, `paragraph_batches`); ``params`` is the recipe (`FIT_PARAMS`).
    """
    missing = sorted(FIT_PARAMS.keys() - params.keys())
    if missing:
        raise ValueError(f"the fine-tuning recipe lacks {', '.join(missing)} (see FIT_PARAMS)")
    for name, values in (("scores", scores), ("groups", groups)):
        if len(values) != len(pairs):
            raise ValueError(
                f"{name} has {len(values)} entries for {len(pairs)} pairs (one per pair)"
            )
    torch = import_torch()
    p = params
    left = np.asarray([a for a, _ in pairs])
    right = np.asarray([b for _, b in pairs])
    target = torch.tensor(np.asarray(scores) / 4.0, dtype=torch.float32)
    # Dropout off (eval mode), whatever mode the caller left: with it, validation Pearson /
    # Spearman were 0.816 / 0.779 and fine-tuning took a fifth longer; without, 0.816 / 0.775.
    encoder.tuned.eval()
    with torch.random.fork_rng():  # seeded order, global RNG left alone
        torch.manual_seed(int(p["seed"]))
        optimiser = torch.optim.AdamW(encoder.tuned.parameters(), lr=float(p["learning_rate"]))
        size = int(p["batch_size"])
        steps = int(p["epochs"]) * math.ceil(len(pairs) / size)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimiser, _rate_factor(steps, float(p["warmup"]))
        )
        with progress_bar(total=steps, desc="Fine-tuning MiniLM", show=progress) as bar:
            for _ in range(int(p["epochs"])):
                for batch in paragraph_batches(np.asarray(groups), size):
                    ids = list(dict.fromkeys([*left[batch], *right[batch]]))
                    at = {t: k for k, t in enumerate(ids)}
                    v = encoder.top(encoder.tuned, [states[i] for i in ids])
                    a = v[[at[i] for i in left[batch]]]
                    b = v[[at[i] for i in right[batch]]]
                    loss = torch.nn.functional.mse_loss((a * b).sum(-1), target[batch])
                    optimiser.zero_grad()
                    loss.backward()
                    optimiser.step()
                    schedule.step()
                    bar.update()
    # What ships is fp16: use the rounded weights from here on, as the loaded model will.
    encoder.tuned.load_state_dict(
        {k: torch.from_numpy(v.astype(np.float32)) for k, v in encoder.weights().items()}
    )


def length_batches(lengths: Sequence[int], size: int) -> list[np.ndarray]:
    """Shuffled batches of items of similar length: a random order cut into runs of 50
    batches, each run sorted by length and cut into batches, the batches shuffled (the
    global torch RNG, seeded by the caller, decides every order)."""
    torch = import_torch()
    sequence = torch.randperm(len(lengths)).numpy()
    batches = []
    for start in range(0, len(sequence), 50 * size):
        run = sorted(sequence[start : start + 50 * size], key=lambda k: lengths[k])
        batches += [np.asarray(run[i : i + size]) for i in range(0, len(run), size)]
    return [batches[i] for i in torch.randperm(len(batches)).numpy()]


def fine_tune_cuts(
    windows: Sequence[CutWindow],
    states: Sequence[Any],
    labels: Sequence[np.ndarray],
    weights: Sequence[float],
    progress: bool | None = None,
    params: Mapping[str, Any] = CUT_FIT_PARAMS,
) -> tuple[Any, dict[str, np.ndarray]]:
    """The segmenter's fine-tuned layers (`CUT_LAYERS` above the first) and head, trained
    on the cuts of ``windows`` (`unimatch_metric.segmenters.learned.cut_windows`).

    ``states`` are the windows' `frozen_states`; ``labels`` holds, for each text the windows
    index, 1 at each candidate cut where a unit starts, and ``weights`` each text's weight.
    Returns the layers loaded from their fp16 weights, as they ship, and the head's arrays.
    """
    missing = sorted(CUT_FIT_PARAMS.keys() - params.keys())
    if missing:
        raise ValueError(f"the cut recipe lacks {', '.join(missing)} (see CUT_FIT_PARAMS)")
    if not windows or len(states) != len(windows):
        raise ValueError(f"{len(states)} window states for {len(windows)} windows (one each)")
    if len(weights) != len(labels) or max(w.text_index for w in windows) >= len(labels):
        raise ValueError(
            f"{len(labels)} label arrays and {len(weights)} weights: one of each per text"
        )
    torch = import_torch()
    p = params
    layers = cut_layers()
    with torch.random.fork_rng():  # seeded order, global RNG left alone
        head = torch.nn.Linear(CUT_WIDTH, 1)  # its random start is zeroed below
        torch.manual_seed(int(p["seed"]))
        torch.nn.init.zeros_(head.weight)
        torch.nn.init.zeros_(head.bias)
        optimiser = torch.optim.AdamW(
            [
                {"params": layers.parameters(), "lr": float(p["learning_rate"])},
                {"params": head.parameters(), "lr": float(p["head_learning_rate"])},
            ]
        )
        size = int(p["batch_size"])
        steps = int(p["epochs"]) * math.ceil(len(windows) / size)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimiser, _rate_factor(steps, float(p["warmup"]))
        )
        lengths = [len(w.ids) for w in windows]
        with progress_bar(total=steps, desc="Fine-tuning the cuts", show=progress) as bar:
            for _ in range(int(p["epochs"])):
                for batch in length_batches(lengths, size):
                    read = [windows[k] for k in batch]
                    logit = head(window_features(layers, read, [states[k] for k in batch]))
                    cuts = [(w.text_index, row) for w in read for row, *_ in w.cuts]
                    y = torch.tensor([float(labels[t][row]) for t, row in cuts])
                    w = torch.tensor([float(weights[t]) for t, _ in cuts])
                    loss = (
                        torch.nn.functional.binary_cross_entropy_with_logits(
                            logit.squeeze(-1), y, weight=w, reduction="sum"
                        )
                        / w.sum()
                    )
                    optimiser.zero_grad()
                    loss.backward()
                    optimiser.step()
                    schedule.step()
                    bar.update()
    shipped = cut_layers(layer_weights(layers))
    return shipped, {
        HEAD_PREFIX + "weight": head.weight.detach().numpy()[0].astype(np.float32),
        HEAD_PREFIX + "bias": np.asarray(float(head.bias.detach()[0]), dtype=np.float32),
    }
