"""Resumable runs: a killed generation loses at most the rows in flight; a re-run fills the
gaps without duplicates; a line cut short by the kill is detected and rewritten."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sefora_cli.main import main
from sefora_grid.errors import GridInputError
from sefora_grid.generate import load_targets
from sefora_grid.runs import RunWriter, read_rows
from tests.fake_openai_server import FakeOpenAIServer, Reply, Request

REPO = Path(__file__).resolve().parents[1]
CONFIG = "v2-guided-rubric-zs"
MODEL = "fake-model"
RUN_FILE = f"{CONFIG}__{MODEL}.jsonl"


@pytest.fixture(scope="module")
def dataset(sample_dataset: Path) -> Path:
    return sample_dataset


def answer(request: Request) -> Reply:
    target = request.message("user").split("<<< TARGET PARAGRAPH >>>")[1][:40].strip()
    return Reply(f"Focus: {target}\nFeedback: Say more about {target.split()[0]}.")


def generate_args(dataset: Path, out: Path, base_url: str, *extra: str) -> list[str]:
    return [
        "generate",
        "--config",
        CONFIG,
        "--split",
        "train",
        "--data",
        str(dataset),
        "--backend",
        "openai",
        "--model",
        MODEL,
        "--base-url",
        base_url,
        "--out",
        str(out),
        "--concurrency",
        "1",
        "--max-retries",
        "0",
        "--quiet",
        *extra,
    ]


def test_read_rows_repairs_a_cut_last_line_and_rejects_a_bad_middle_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with RunWriter(path) as writer:
        writer.append({"paragraph_id": "a"})
        writer.append({"paragraph_id": "b"})
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"paragraph_id": "c", "raw_out')
    assert [r["paragraph_id"] for r in read_rows(path)] == ["a", "b"]
    assert path.read_bytes() != whole  # not repaired unless asked
    assert [r["paragraph_id"] for r in read_rows(path, repair=True)] == ["a", "b"]
    assert path.read_bytes() == whole
    path.write_bytes(b'{"paragraph_id": "a"}\nnot json\n{"paragraph_id": "b"}\n')
    with pytest.raises(GridInputError, match="line 2"):
        read_rows(path)
    assert read_rows(tmp_path / "missing.jsonl") == []


def test_killed_run_resumes_without_duplicates_or_gaps(dataset: Path, tmp_path: Path) -> None:
    targets = [t.paragraph_id for t in load_targets(dataset, "train")]
    limit = 8
    answered = 3
    out = tmp_path / "runs"

    def stall_after_three(request: Request) -> Reply:
        reply = answer(request)
        if server.request_count > answered:
            reply.delay = 60  # the server hangs: the generator is killed while waiting
        return reply

    with FakeOpenAIServer(responder=stall_after_three) as server:
        args = generate_args(dataset, out, server.base_url, "--limit", str(limit))
        process = subprocess.Popen(
            [sys.executable, "-m", "sefora_cli.main", *args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        path = out / RUN_FILE
        deadline = time.monotonic() + 120
        try:
            while time.monotonic() < deadline:
                if path.exists() and len(read_rows(path)) == answered:
                    break
                assert process.poll() is None, process.communicate()
                time.sleep(0.1)
            else:
                pytest.fail("the generator did not write its first rows in time")
            while server.request_count <= answered:  # the next request is in flight
                time.sleep(0.05)
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
        assert process.returncode == -signal.SIGKILL
        before = path.read_bytes()
        assert before.count(b"\n") == answered
        # What a kill in the middle of a write leaves behind.
        with path.open("ab") as handle:
            handle.write(b'{"paragraph_id": "' + targets[answered].encode() + b'", "raw_ou')

        server.responder = answer
        assert main(generate_args(dataset, out, server.base_url, "--limit", str(limit))) == 0

    rows = read_rows(path)
    ids = [r["paragraph_id"] for r in rows]
    assert len(ids) == len(set(ids)) == limit  # no duplicates
    assert set(ids) == set(targets[:limit])  # no gaps
    assert path.read_bytes().startswith(before)  # earlier rows untouched
    assert all(line.startswith(b"{") for line in path.read_bytes().splitlines())
    for row in rows:
        assert row["feedback"].startswith("Say more about") and row["format_ok"]


def test_rerun_of_a_complete_run_sends_nothing_and_settings_must_match(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    with FakeOpenAIServer(responder=answer) as server:
        assert main(generate_args(dataset, out, server.base_url, "--limit", "3")) == 0
        sent = server.request_count
        assert sent == 3
        assert main(generate_args(dataset, out, server.base_url, "--limit", "3")) == 0
        assert server.request_count == sent
        assert "0 written, 3 already there" in capsys.readouterr().out
        # A larger limit continues where the run stopped.
        assert main(generate_args(dataset, out, server.base_url, "--limit", "5")) == 0
        assert server.request_count == sent + 2
        # Other settings would mix two experiments in one file.
        code = main(generate_args(dataset, out, server.base_url, "--budget", "4096"))
        assert code == 2
        assert "budget" in capsys.readouterr().err
    rows = [json.loads(line) for line in (out / RUN_FILE).read_text().splitlines()]
    assert len(rows) == 5 and all(r["budget"] == 8192 for r in rows)
