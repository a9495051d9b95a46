"""MiniLM with its top layers fine-tuned on the labelled pairs, for the learned scorer.

The bottom layers stay frozen, so training runs them once per distinct text and then fits
only the top `TUNED_LAYERS` layers as a bi-encoder (mean pooling, normalised; the cosine of
the two units regressed on score / 4). At scoring time one pass through the shared bottom
feeds both the original and the fine-tuned top, giving both embeddings of each text. The
``"embedding"`` baseline keeps its own, untouched model instance.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

#: Top transformer layers that are trained (MiniLM-L6 has 6); the rest stay frozen.
TUNED_LAYERS = 2
#: Recipe compared on the validation part (1-3 epochs, 4e-5 or 1e-4): 3 epochs at 4e-5 best.
FIT_PARAMS = {"epochs": 3, "learning_rate": 4e-5, "batch_size": 32, "seed": 0}
_BATCH = 64


def _torch() -> Any:
    try:
        import torch
    except ImportError as err:
        raise ImportError(
            "the learned scorer needs the 'local' extra: pip install 'sefora-toolkit[local]'"
        ) from err
    return torch


def _additive_mask(mask: Any) -> Any:
    torch = _torch()
    return (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min


def layer_states(bert: Any, input_ids: Any, mask: Any, depths: Sequence[int]) -> list[Any]:
    """Hidden states of a BERT model after each of its layers in ``depths`` (1-based, rising),
    running only the layers up to the deepest one."""
    h = bert.embeddings(input_ids=input_ids, token_type_ids=_torch().zeros_like(input_ids))
    attention = _additive_mask(mask)
    out = []
    for depth, layer in enumerate(bert.encoder.layer[: max(depths)], start=1):
        h = layer(h, attention_mask=attention)
        if depth in depths:
            out.append(h)
    return out


def _batches(lengths: np.ndarray, size: int) -> list[np.ndarray]:
    """Shuffled batches of pairs of similar length (less padding, faster training).

    Pools of 16 batches are drawn at random and sorted by length, then the batches are
    shuffled; the global torch RNG (seeded by the caller) decides both orders.
    """
    torch = _torch()
    order = torch.randperm(len(lengths)).numpy()
    batches = []
    for start in range(0, len(order), 16 * size):
        pool = order[start : start + 16 * size]
        pool = pool[np.argsort(lengths[pool], kind="stable")]
        batches += [pool[i : i + size] for i in range(0, len(pool), size)]
    return [batches[i] for i in torch.randperm(len(batches)).numpy()]


class TunedEncoder:
    """Original and fine-tuned MiniLM embeddings of texts, over one shared frozen bottom."""

    def __init__(self, weights: dict[str, np.ndarray] | None = None) -> None:
        from unimatch_metric.scorers import load_embedding_model

        torch = _torch()
        self.model = load_embedding_model()  # shared with the baseline: only read, never changed
        bert = self.model[0].auto_model
        self.frozen = len(bert.encoder.layer) - TUNED_LAYERS  # layers below the tuned ones
        self.original = bert.encoder.layer[self.frozen :]
        self.tuned = copy.deepcopy(self.original)
        if weights is not None:
            state = {k: torch.from_numpy(v.astype(np.float32)) for k, v in weights.items()}
            self.tuned.load_state_dict(state, strict=True)
        self.tuned.eval()

    def weights(self) -> dict[str, np.ndarray]:
        """The fine-tuned layers' parameters as fp16 arrays (what the package ships)."""
        return {
            k: v.detach().numpy().astype(np.float16) for k, v in self.tuned.state_dict().items()
        }

    def bottom_states(self, texts: Sequence[str]) -> list[Any]:
        """Hidden states after the frozen layers, one (tokens, 384) tensor per text."""
        torch = _torch()
        bert = self.model[0].auto_model
        out: list[Any] = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # little padding
        with torch.no_grad():
            for start in range(0, len(order), _BATCH):
                batch = order[start : start + _BATCH]
                enc = self.model.tokenizer(
                    [texts[i] for i in batch],
                    padding=True,
                    truncation=True,
                    max_length=self.model.max_seq_length,
                    return_tensors="pt",
                )
                [h] = layer_states(bert, enc["input_ids"], enc["attention_mask"], [self.frozen])
                for k, i in enumerate(batch):
                    out[i] = h[k, : int(enc["attention_mask"][k].sum())].clone()
        return out

    @staticmethod
    def _top(layers: Any, states: Sequence[Any]) -> Any:
        """Mean-pooled, normalised output of ``layers`` over a batch of bottom states."""
        torch = _torch()
        width = max(s.shape[0] for s in states)
        h = torch.zeros(len(states), width, states[0].shape[1])
        mask = torch.zeros(len(states), width)
        for k, s in enumerate(states):
            h[k, : s.shape[0]], mask[k, : s.shape[0]] = s, 1.0
        attention = _additive_mask(mask)
        for layer in layers:
            h = layer(h, attention_mask=attention)
        pooled = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True)
        return torch.nn.functional.normalize(pooled, dim=-1)

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(fine-tuned, original) normalised embeddings of ``texts``, in input order."""
        torch = _torch()
        if not texts:
            return np.zeros((0, 384)), np.zeros((0, 384))
        states = self.bottom_states(texts)
        order = sorted(range(len(texts)), key=lambda i: -states[i].shape[0])
        tuned, original = np.zeros((len(texts), 384)), np.zeros((len(texts), 384))
        with torch.inference_mode():
            for start in range(0, len(order), _BATCH):
                batch = order[start : start + _BATCH]
                chunk = [states[i] for i in batch]
                tuned[batch] = self._top(self.tuned, chunk).numpy()
                original[batch] = self._top(self.original, chunk).numpy()
        return tuned, original

    def fit(
        self,
        states: Sequence[Any],
        pairs: Sequence[tuple[int, int]],
        scores: Sequence[float],
        progress: bool = True,
    ) -> None:
        """Train the top layers so that the cosine of each pair nears score/4.

        ``states`` are `bottom_states` of the texts that ``pairs`` index, computed once and
        shared by every encoder trained on them.
        """
        from tqdm.auto import tqdm

        torch = _torch()
        p = FIT_PARAMS
        left = np.asarray([a for a, _ in pairs])
        right = np.asarray([b for _, b in pairs])
        target = torch.tensor(np.asarray(scores) / 4.0, dtype=torch.float32)
        tokens = np.asarray([s.shape[0] for s in states])
        lengths = np.maximum(tokens[left], tokens[right])
        with torch.random.fork_rng():  # seeded dropout and order, global RNG left alone
            torch.manual_seed(int(p["seed"]))
            optimiser = torch.optim.AdamW(self.tuned.parameters(), lr=float(p["learning_rate"]))
            self.tuned.train()
            size = int(p["batch_size"])
            steps = int(p["epochs"]) * math.ceil(len(pairs) / size)
            with tqdm(total=steps, desc="Fine-tuning MiniLM", disable=not progress) as bar:
                for _ in range(int(p["epochs"])):
                    for batch in _batches(lengths, size):
                        ids = list(dict.fromkeys([*left[batch], *right[batch]]))
                        at = {t: k for k, t in enumerate(ids)}
                        v = self._top(self.tuned, [states[i] for i in ids])
                        a = v[[at[i] for i in left[batch]]]
                        b = v[[at[i] for i in right[batch]]]
                        loss = torch.nn.functional.mse_loss((a * b).sum(-1), target[batch])
                        optimiser.zero_grad()
                        loss.backward()
                        optimiser.step()
                        bar.update()
            self.tuned.eval()
        # What ships is fp16: use the rounded weights from here on, as the loaded model will.
        self.tuned.load_state_dict(
            {k: torch.from_numpy(v.astype(np.float32)) for k, v in self.weights().items()}
        )
