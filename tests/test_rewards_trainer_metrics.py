"""UniMatch as compute_metrics of a transformers.Trainer (tiny random GPT-2 built here): the
figures are UniMatch's on the teacher-forced predictions at the label positions, decoded
independently here, under flat float keys."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import unimatch_metric
from tests.test_generate_transformers import make_tiny_lm
from unimatch_metric.rewards import TrainerMetrics, flat_figures

EXAMPLES = [
    ("Comment on: The dryer hummed all night.", "Describe the sound of the dryer."),
    ("Comment on: My mother folded the red sock.", "Your mom is quotable! Tell us more."),
    ("Comment on: I kept the quarter.", "Why did you keep it?"),
]
REFERENCES = [["Describe the dryer's sound."], ["Nice quote."], ["Why keep the quarter?"]]


def test_flat_figures_keep_numbers_only():
    result = {
        "f1": 0.5,
        "precision": None,
        "n_examples": 3,
        "config": {"scorer": {"name": "x"}},
        "details": [{}],
        "ok": True,
        "micro_f1": float("nan"),
    }
    assert flat_figures(result) == {"unimatch_f1": 0.5, "unimatch_n_examples": 3.0}
    assert flat_figures({"f1": 1}, prefix="") == {"f1": 1.0}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return make_tiny_lm(tmp_path_factory.mktemp("tiny") / "tiny-lm")


def encode(tokenizer, prompt: str, target: str) -> dict[str, list[int]]:
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    target_ids = tokenizer(" " + target, add_special_tokens=False)["input_ids"]
    return {"input_ids": prompt_ids + target_ids, "labels": [-100] * len(prompt_ids) + target_ids}


def test_trainer_evaluate_logs_flat_unimatch_figures(tiny: Path, tmp_path: Path, private_cache):
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

    tokenizer = AutoTokenizer.from_pretrained(str(tiny), local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(str(tiny), local_files_only=True)
    rows = [encode(tokenizer, p, t) for p, t in EXAMPLES]
    pad = tokenizer.pad_token_id

    def collate(batch):
        width = max(len(b["input_ids"]) for b in batch)
        ids = [b["input_ids"] + [pad] * (width - len(b["input_ids"])) for b in batch]
        labels = [b["labels"] + [-100] * (width - len(b["labels"])) for b in batch]
        mask = [[1] * len(b["input_ids"]) + [0] * (width - len(b["input_ids"])) for b in batch]
        return {
            "input_ids": torch.tensor(ids),
            "labels": torch.tensor(labels),
            "attention_mask": torch.tensor(mask),
        }

    metrics_fn = TrainerMetrics(tokenizer, REFERENCES)
    trainer = Trainer(
        model=model,
        args=TrainingArguments(
            output_dir=str(tmp_path / "out"),
            per_device_eval_batch_size=2,  # two batches of different widths
            report_to="none",
            use_cpu=True,
        ),
        eval_dataset=Dataset.from_list(rows),
        data_collator=collate,
        compute_metrics=metrics_fn,
        preprocess_logits_for_metrics=TrainerMetrics.argmax,
    )
    metrics = trainer.evaluate()

    # The same predictions, one example at a time, decoded here.
    texts = []
    with torch.no_grad():
        for row in rows:
            logits = model(torch.tensor([row["input_ids"]])).logits[0]
            predicted = logits.argmax(-1).tolist()
            positions = [t for t, label in enumerate(row["labels"]) if label != -100]
            texts.append(
                tokenizer.decode([predicted[t - 1] for t in positions], skip_special_tokens=True)
            )
    assert all(t.strip() for t in texts)  # the random model predicts some text
    want = unimatch_metric.unimatch(texts, REFERENCES)
    assert metrics["eval_unimatch_f1"] == pytest.approx(want["f1"])
    assert metrics["eval_unimatch_precision"] == pytest.approx(want["precision"])
    assert metrics["eval_unimatch_recall"] == pytest.approx(want["recall"])
    assert metrics["eval_unimatch_n_examples"] == 3.0
    unimatch_keys = [k for k in metrics if k.startswith("eval_unimatch_")]
    assert all(isinstance(metrics[k], float) and math.isfinite(metrics[k]) for k in unimatch_keys)
    assert not any(isinstance(v, (dict, list)) for v in metrics.values())
    with pytest.raises(ValueError, match="3 evaluation examples but 2 reference lists"):
        TrainerMetrics(tokenizer, REFERENCES[:2])(
            type("P", (), {"predictions": [[1, 2]] * 3, "label_ids": [[1, 2]] * 3})()
        )
