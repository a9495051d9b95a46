"""The examples of docs/training.md run as written, in order, in a folder of their own: the
sample dataset built, a tiny model made, two GRPO steps, the gated and rubric rewards
against a chat-completions server on 127.0.0.1, and compute_metrics with flat keys."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from sefora_cli.main import main
from tests.fake_openai_server import FakeOpenAIServer
from tests.test_rubric_docs import any_model

DOC = Path(__file__).resolve().parents[1] / "docs" / "training.md"
BLOCK = re.compile(r"```(python|bash)\n(.*?)```", flags=re.DOTALL)


@pytest.mark.slow
def test_examples_run(tmp_path, monkeypatch):
    pytest.importorskip("trl")
    blocks = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert [language for language, _ in blocks] == ["bash"] + ["python"] * 5
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    namespace: dict = {}
    with FakeOpenAIServer(responder=any_model) as server:
        monkeypatch.setenv("UNIMATCH_MODEL", "fake-judge")
        monkeypatch.setenv("UNIMATCH_BASE_URL", server.base_url)
        monkeypatch.setenv("UNIMATCH_API_KEY", "sk-docs-test")
        for language, code in blocks:
            if language == "python":
                exec(compile(code, f"{DOC.name} block", "exec"), namespace)
                continue
            for line in code.strip().splitlines():
                argv = shlex.split(line)
                assert argv[0] == "sefora"
                assert main([*argv[1:], "--quiet"]) == 0
        assert server.request_count > 0  # the judges asked the server
    logged = [h for h in namespace["grpo"].state.log_history if "reward" in h]
    assert [h["step"] for h in logged] == [1, 2]
    assert all(0.0 <= h["rewards/unimatch_f1/mean"] <= 1.0 for h in logged)
    assert namespace["gated"].stats.calls == 1 and namespace["gated"].stats.judge_failures == 0
    assert all(0.0 <= v <= 1.0 for v in namespace["values"])
    metrics = namespace["metrics"]
    figures = {k: v for k, v in metrics.items() if k.startswith("eval_unimatch_")}
    assert {"eval_unimatch_f1", "eval_unimatch_precision", "eval_unimatch_recall"} <= set(figures)
    assert all(isinstance(v, float) for v in figures.values())
    assert figures["eval_unimatch_n_examples"] == 4
    assert not any(isinstance(v, dict) for v in metrics.values())
    assert not any("config" in k or "details" in k for k in metrics)


def test_the_readme_training_example_runs(sample_dataset, tmp_path, monkeypatch, capsys):
    readme = (DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Training with UniMatch", 1)[1].split("\n## ", 1)[0]
    ((language, code),) = BLOCK.findall(section)
    assert language == "python"
    (tmp_path / "sefora").symlink_to(sample_dataset)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    namespace: dict = {}
    exec(compile(code, "README.md training block", "exec"), namespace)
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    values = [float(v) for v in printed.strip("[]").split(",")]
    rows, replies = namespace["rows"], namespace["replies"]
    assert values == namespace["reward"](
        prompts=rows["prompt"], completions=replies, references=rows["references"]
    )
    assert len(values) == 2 and all(0.0 <= v <= 1.0 for v in values)
