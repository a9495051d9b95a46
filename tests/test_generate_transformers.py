"""The transformers backend with a tiny randomly initialised GPT-2 and a BPE tokenizer
trained here (nothing downloaded): batched greedy generation, exact token counts, the
token budget, and `sefora generate --backend transformers`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sefora_cli.main import main
from sefora_dataset import SAMPLE_SOURCE
from sefora_grid.backends import TransformersBackend
from sefora_grid.categories import CATEGORIES
from sefora_grid.context import TokenizerCounter, fit_prompt
from sefora_grid.errors import GridError
from sefora_grid.prompts import SYSTEM_PROMPT, PromptConfig, PromptInputs

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
MAX_NEW = 6


def make_tiny_lm(folder: Path, chat_template: str | None = CHAT_TEMPLATE) -> Path:
    """A 2-layer GPT-2 with random weights and a byte-level BPE tokenizer, saved to ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=800,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    corpus = [SYSTEM_PROMPT, *CATEGORIES.values()]
    corpus += [p.read_text() for p in sorted(SAMPLE_SOURCE.rglob("*.json"))]
    tokenizer.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    if chat_template is not None:
        fast.chat_template = chat_template
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(fast), n_positions=2048, n_embd=32, n_layer=2, n_head=2,
        bos_token_id=fast.eos_token_id, eos_token_id=fast.eos_token_id,
    )  # fmt: skip
    GPT2LMHeadModel(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_lm(tmp_path_factory.mktemp("tiny") / "tiny-lm")


@pytest.fixture(scope="module")
def dataset(sample_dataset: Path) -> Path:
    return sample_dataset


def test_batched_greedy_generation_matches_one_by_one(tiny_lm: Path) -> None:
    backend = TransformersBackend(str(tiny_lm), max_new_tokens=MAX_NEW, batch_size=3)
    prompts = [
        [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]
        for text in ("A short one.", "A much longer prompt about a laundromat " * 5, "Mid.")
    ]
    batched = backend.generate(prompts)
    single = [backend.generate([p])[0] for p in prompts]
    assert [g.text for g in batched] == [g.text for g in single]
    for generation, messages in zip(batched, prompts, strict=True):
        assert 1 <= generation.completion_tokens <= MAX_NEW
        assert generation.prompt_tokens == backend.counter.count_messages(messages)
    assert [g.text for g in backend.generate(prompts)] == [g.text for g in batched]  # greedy


def test_tokenizer_counts_keep_the_prompt_in_budget(tiny_lm: Path) -> None:
    counter = TokenizerCounter.from_path(tiny_lm)
    paragraphs = tuple(
        f"Paragraph {i} talks about the dryer and the red sock. " * 6 for i in range(9)
    )
    inputs = PromptInputs(target="The target paragraph.", before=paragraphs, after=paragraphs)
    fitted = fit_prompt(PromptConfig(), inputs, counter, budget=900, max_new_tokens=MAX_NEW)
    assert (fitted.context.trimmed_before, fitted.context.trimmed_after) == (True, True)
    assert fitted.prompt_tokens == counter.count_messages(fitted.messages) <= 900 - MAX_NEW
    assert 900 - MAX_NEW - fitted.prompt_tokens < 40  # filled close to the limit


def test_generate_command_with_the_transformers_backend(
    tiny_lm: Path, dataset: Path, tmp_path: Path
) -> None:
    args = ["generate", "--backend", "transformers", "--model", str(tiny_lm), "--split", "train"]
    args += ["--data", str(dataset), "--out", str(tmp_path / "runs"), "--limit", "3"]
    args += ["--config", "v1-guided-rubric-zs", "--budget", "2048"]
    args += ["--max-new-tokens", str(MAX_NEW), "--batch-size", "2", "--quiet"]
    assert main(args) == 0
    (path,) = (tmp_path / "runs").glob("*.jsonl")
    assert path.name == "v1-guided-rubric-zs__tiny-lm.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 3 and len({r["paragraph_id"] for r in rows}) == 3
    for row in rows:
        assert row["backend"] == "transformers" and row["token_counter"] == "tokenizer:tiny-lm"
        assert row["usage_prompt_tokens"] == row["prompt_tokens"] <= 2048 - MAX_NEW
        assert not row["over_budget"]
        assert 1 <= row["completion_tokens"] <= MAX_NEW
        assert row["feedback"] == row["raw_output"]  # V1 takes the whole reply
    assert main(args) == 0  # resumed: nothing left to do
    assert len(path.read_text().splitlines()) == 3


def test_unusable_model_folders_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(GridError, match="not a local transformers model folder"):
        TransformersBackend(str(tmp_path / "missing"), max_new_tokens=MAX_NEW)
    plain = make_tiny_lm(tmp_path / "plain", chat_template=None)
    with pytest.raises(GridError, match="no chat template"):
        TransformersBackend(str(plain), max_new_tokens=MAX_NEW)
