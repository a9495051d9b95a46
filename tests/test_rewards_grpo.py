"""Two GRPO steps of TRL on CPU with a tiny random GPT-2 built here, on the training view of
the bundled sample, rewarded by offline UniMatch: the rewards the trainer logs are the
reward function's own values for the same completions. A gated reward (an LLM judge on the
fake server every other step) reports its judge calls to the trainer's log."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sefora_grid.training import feedback_extractor, training_dataset
from tests.fake_openai_server import FakeOpenAIServer
from tests.test_generate_transformers import make_tiny_lm
from tests.test_rewards_gating import toy_judge
from unimatch_metric.rewards import EveryN, GatedReward, UniMatchReward

MAX_NEW = 12
GROUP = 4
BUDGET = 2048  # the tiny model's context length


@pytest.mark.slow
def test_two_grpo_steps_log_the_reward_functions_values(
    sample_dataset: Path, tmp_path: Path, server: FakeOpenAIServer, llm: dict
):
    pytest.importorskip("trl")
    import pandas as pd
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    tiny = make_tiny_lm(tmp_path / "tiny-lm")
    tokenizer = AutoTokenizer.from_pretrained(str(tiny), local_files_only=True)
    train = training_dataset(
        sample_dataset, "train", tokenizer=tokenizer, budget=BUDGET, max_new_tokens=MAX_NEW, limit=4
    )
    assert len(train) == 4 and max(train["prompt_tokens"]) <= BUDGET - MAX_NEW
    # The embedding scorer: a tiny random model's text is unrelated to every comment, which
    # the learned scorer rightly scores 0 for all completions; cosines still differ, so the
    # logged rewards can be checked against the function's own values.
    reward = UniMatchReward(
        extract=feedback_extractor(), scorer="embedding", cache_dir=tmp_path / "cache"
    )
    judge = UniMatchReward(extract=feedback_extractor(), scorer="llm", **llm)
    gated = GatedReward(reward, judge, EveryN(2), name="gated")
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=GROUP,
        num_generations=GROUP,
        max_completion_length=MAX_NEW,
        max_steps=2,
        logging_steps=1,
        log_completions=True,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=0,
        learning_rate=1e-3,
    )
    trainer = GRPOTrainer(
        model=str(tiny),
        reward_funcs=[reward, gated],
        args=args,
        train_dataset=train,
        processing_class=tokenizer,
    )
    trainer.train()

    logged = [h for h in trainer.state.log_history if "rewards/unimatch_f1/mean" in h]
    assert [h["step"] for h in logged] == [1, 2]
    tables = sorted((tmp_path / "out" / "completions").glob("completions_*.parquet"))
    assert len(tables) == 2
    references = {row["prompt"][-1]["content"]: row["references"] for row in train}
    for table, entry in zip(tables, logged, strict=True):
        rows = pd.read_parquet(table)
        assert len(rows) == GROUP
        prompts = [list(p) for p in rows["prompt"]]
        completions = [[dict(m) for m in c] for c in rows["completion"]]
        refs = [references[p[-1]["content"]] for p in prompts]
        assert any(c[0]["content"].strip() for c in completions)  # the model generated text
        own = reward(prompts=prompts, completions=completions, references=refs)
        assert len(set(own)) > 1  # the completions' rewards differ: a signal to learn from
        np.testing.assert_allclose(rows["unimatch_f1"].to_numpy(), own, rtol=1e-6, atol=1e-6)
        assert entry["rewards/unimatch_f1/mean"] == pytest.approx(float(np.mean(own)), abs=1e-6)
    # The gate: the first generation (global step 0) judged, the second (step 1) not.
    assert [h["gate/judged"] for h in logged] == [GROUP, 0]
    assert [h["gate/judged_total"] for h in logged] == [GROUP, GROUP]
    assert [list(pd.read_parquet(t)["gate"]) for t in tables] == [
        ["judge"] * GROUP,
        ["base"] * GROUP,
    ]
    assert gated.stats.judged == GROUP and gated.stats.judge_failures == 0
    assert server.request_count > 0


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=toy_judge) as srv:
        yield srv
