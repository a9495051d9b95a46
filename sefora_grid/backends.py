"""Generation backends: any OpenAI-compatible endpoint, or a local transformers causal LM.

Both decode greedily (temperature 0) and stop after ``max_new_tokens``. A backend takes a
batch of chat prompts and returns one `Generation` per prompt; the runner calls it from
``workers`` threads at once.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sefora_grid.context import TokenCounter, TokenizerCounter
from sefora_grid.errors import GenerationError, GridError

Messages = Sequence[Mapping[str, str]]


@dataclass(frozen=True)
class Generation:
    """One reply: its text, the token counts the backend reports, and the seconds it took."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    seconds: float


class Backend(Protocol):
    """What the runner needs from a backend."""

    name: str
    model: str
    batch_size: int
    workers: int
    counter: TokenCounter

    def generate(self, prompts: Sequence[Messages]) -> list[Generation]:
        """One reply per prompt, in order; raises `GridError` when a request fails."""
        ...


def model_slug(model: str) -> str:
    """A file-name-safe name for a model: a local path's folder name, else the model id."""
    name = Path(model).name if Path(model).is_dir() else model
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"


class TransformersBackend:
    """A local causal LM by path: batched, left-padded, greedy, through its chat template."""

    name = "transformers"
    workers = 1

    def __init__(
        self, path: str, max_new_tokens: int, batch_size: int = 4, device: str = "cpu"
    ) -> None:
        folder = Path(path)
        if not (folder / "config.json").is_file():
            raise GridError(
                f"--model {path}: not a local transformers model folder (no config.json); "
                "the transformers backend never downloads models"
            )
        import torch
        from transformers import AutoModelForCausalLM

        counter = TokenizerCounter.from_path(folder)
        tokenizer = counter.tokenizer
        if tokenizer.chat_template is None:
            raise GridError(
                f"{folder}: the tokenizer has no chat template; use an instruction-tuned "
                "chat model (or add a chat_template to its tokenizer_config.json)"
            )
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        self._torch = torch
        self.model = str(folder)
        self.counter: TokenCounter = counter
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.batch_size = batch_size
        self.device = device
        self.lm = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True)
        self.lm.to(device).eval()  # type: ignore[arg-type]  # transformers' stubs want a model

    def generate(self, prompts: Sequence[Messages]) -> list[Generation]:
        """Greedy replies for a batch of prompts (timing is the batch's, shared equally)."""
        started = time.perf_counter()
        texts = [
            self.tokenizer.apply_chat_template(list(m), add_generation_prompt=True, tokenize=False)
            for m in prompts
        ]
        batch = self.tokenizer(
            texts, return_tensors="pt", padding=True, add_special_tokens=False
        ).to(self.device)
        with self._torch.inference_mode():
            output = self.lm.generate(
                **batch,
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        new = output[:, batch["input_ids"].shape[1] :]
        seconds = (time.perf_counter() - started) / len(prompts)
        stops = {self.tokenizer.pad_token_id, self.tokenizer.eos_token_id}
        results = []
        for row, mask in zip(new.tolist(), batch["attention_mask"].tolist(), strict=True):
            length = next((i + 1 for i, t in enumerate(row) if t in stops), len(row))
            text = self.tokenizer.decode(row[:length], skip_special_tokens=True)
            results.append(Generation(text.strip(), int(sum(mask)), length, seconds))
        return results


class OpenAIBackend:
    """Any OpenAI-compatible chat endpoint, through the shared UniMatch client (its retries,
    Retry-After handling, timeouts, concurrency limit and key redaction)."""

    name = "openai"
    batch_size = 1

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str | None,
        max_new_tokens: int,
        counter: TokenCounter,
        concurrency: int = 4,
        timeout: float = 120.0,
        max_retries: int = 3,
    ) -> None:
        from sefora_llm.client import LLMClient, LLMSettings

        if not base_url and not api_key:
            raise GridError(
                "the openai backend needs an API key for the default OpenAI endpoint: set "
                "$OPENAI_API_KEY (or pass --api-key), or point --base-url at a local server"
            )
        self.client = LLMClient(
            LLMSettings(
                model=model,
                base_url=base_url,
                api_key=api_key,
                timeout=timeout,
                max_retries=max_retries,
                concurrency=concurrency,
            ),
            failure=GenerationError,
        )
        self.model = model
        self.counter = counter
        self.workers = concurrency
        self.max_new_tokens = max_new_tokens

    def generate(self, prompts: Sequence[Messages]) -> list[Generation]:
        """One reply per prompt (greedy, at most ``max_new_tokens``)."""
        return [
            self.client.complete(
                messages,
                parse=lambda reply: Generation(
                    reply.text.strip(), reply.prompt_tokens, reply.completion_tokens, reply.seconds
                ),
                what="feedback generation",
                max_tokens=self.max_new_tokens,
            )
            for messages in prompts
        ]
