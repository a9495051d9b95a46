"""The examples of docs/related-systems.md run as written: FOXGLOVE on invented CSV files,
the LLM parts against a chat-completions server on 127.0.0.1 named by the environment."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from sefora_cli.main import main
from tests.fake_openai_server import FakeOpenAIServer, Reply, Request
from tests.foxglove_fixture import write_foxglove
from unimatch_metric.prompts import SCORE_SYSTEM, SEGMENT_SYSTEM

DOC = Path(__file__).resolve().parents[1] / "docs" / "related-systems.md"
BLOCK = re.compile(r"```(python|bash)\n(.*?)```", flags=re.DOTALL)


def any_model(request: Request) -> Reply:
    """Segmentation: one unit; similarity: 2 for every pair; rubric items: all "yes"."""
    system, user = request.message("system"), request.message("user")
    if system == SEGMENT_SYSTEM:
        return Reply(user.split("\n", 1)[1])
    if system == SCORE_SYSTEM:
        return Reply(json.dumps({label: 2 for label in re.findall(r"^Pair (\S+)$", user, re.M)}))
    labels = re.findall(r"^(I\d+)\. ", user, flags=re.MULTILINE)
    return Reply(json.dumps({k: {"reason": "stated", "answer": "yes"} for k in labels}))


def test_examples_run(tmp_path, monkeypatch, capsys):
    blocks = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 8
    write_foxglove(tmp_path / "FOXGLOVE")
    scored = [
        {"prompt": f"p{i // 3}", "feedback": f"text {i}", "score": i % 3 / 2, "group": "g"}
        for i in range(6)
    ]
    (tmp_path / "scored.jsonl").write_text("\n".join(json.dumps(r) for r in scored))
    renamed = [{**r, "f1": r.pop("score")} for r in scored]
    (tmp_path / "unimatch_scored.jsonl").write_text("\n".join(json.dumps(r) for r in renamed))
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
                assert main(argv[1:]) == 0
        assert server.request_count > 0
    assert namespace["paired"], "the FOXGLOVE study example pairs no essay"
    assert len(namespace["pairs"]) == 1 + 2  # one score pair, two mismatched
    assert (tmp_path / "foxglove" / "README.md").is_file()
    assert len((tmp_path / "pairs.jsonl").read_text().splitlines()) == 2 * 3
    assert "0.666" in capsys.readouterr().out
