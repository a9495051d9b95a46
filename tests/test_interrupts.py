"""Stopping a command (#18 items 5 and 8): Ctrl-C ends with exit code 130 and SIGTERM with
143, one line and no traceback, and nothing half-written is left; temporary folders of a
build that was killed outright are removed, with a warning, by the next build."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sefora_common.io import STALE_AFTER, output_folder
from sefora_dataset import SAMPLE_SOURCE
from sefora_dataset.build import build_dataset
from tests.fake_openai_server import TEST_API_KEY, FakeOpenAIServer, Reply

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def start():
    """Starts `sefora` in a process of its own, Ctrl-C delivered as in a terminal (a
    background job of a script would otherwise inherit SIGINT ignored); a process still
    running when the test ends is killed."""
    started: list[subprocess.Popen] = []

    def run(*args: str, env: dict | None = None) -> subprocess.Popen:
        started.append(_popen(*args, env=env))
        return started[-1]

    yield run
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _popen(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "sefora_cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for(condition, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Poll ``condition`` every millisecond until it holds (the process must still run)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"finished first: {proc.communicate()}"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def big_corpus(root: Path, copies: int) -> Path:
    """The bundled sample copied ``copies`` times under other batch numbers (its drafts keep
    their ids within a batch), so that a build lasts long enough to be stopped while it
    writes."""
    for b in range(1, copies + 1):
        for path in SAMPLE_SOURCE.rglob("*"):
            if path.is_file():
                rel = str(path.relative_to(SAMPLE_SOURCE)).replace("Batch_9", f"Batch_{b}")
                target = root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
    return root


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return big_corpus(tmp_path_factory.mktemp("big") / "corpus", 60)


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stopped_build_leaves_no_temporary_folder_and_the_old_output(
    corpus, tmp_path, start, signum, code
):
    out = tmp_path / "sefora"
    build_dataset(SAMPLE_SOURCE, out, progress=False)  # an earlier output, to be kept
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    proc = start("build", "--source", str(corpus), "--out", str(out))
    wait_for(lambda: any(tmp_path.glob(".sefora.*.tmp")), proc)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("sefora build: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sefora"]  # no .sefora.*.tmp
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_stale_temporary_folders_are_removed_and_reported_live_ones_kept(tmp_path, caplog):
    out = tmp_path / "sefora"
    stale = tmp_path / ".sefora.0badc0de.tmp"  # left by a build killed with SIGKILL
    (stale / "paragraphs").mkdir(parents=True)
    (stale / "paragraphs" / "train.arrow").write_bytes(b"x" * 1000)
    old = time.time() - 2 * STALE_AFTER
    os.utime(stale, (old, old))
    fresh = tmp_path / ".sefora.1234abcd.tmp"  # a build starting right now
    fresh.mkdir()
    other = tmp_path / ".other.0badc0de.tmp"  # another output's: not ours to judge
    other.mkdir()
    os.utime(other, (old, old))
    with caplog.at_level(logging.WARNING, logger="sefora_common.io"):
        build_dataset(SAMPLE_SOURCE, out, progress=False)
        with output_folder(tmp_path / "live", "m", "test") as live:  # a run going on, locked
            os.utime(live, (old, old))
            build_dataset(SAMPLE_SOURCE, tmp_path / "live", progress=False)
            assert live.is_dir()  # old, but locked by its run: not stale
    assert not stale.exists() and fresh.is_dir() and other.is_dir()
    removed = [r.getMessage() for r in caplog.records if r.name == "sefora_common.io"]
    assert removed == [f"removed {stale}, left by an earlier run that was killed"]
    assert (out / ".sefora-build.json").is_file()


def test_the_next_build_reports_what_it_removed(tmp_path, start):
    out = tmp_path / "sefora"
    stale = tmp_path / ".sefora.0badc0de.tmp"
    stale.mkdir()
    old = time.time() - 2 * STALE_AFTER
    os.utime(stale, (old, old))
    proc = start("build", "--out", str(out))
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert f"WARNING sefora_common.io: removed {stale}, left by an earlier run" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sefora"]


def test_ctrl_c_while_requests_are_in_flight(tmp_path, start):
    data = tmp_path / "in.jsonl"
    rows = [{"prediction": f"Point {i}.", "references": [f"Ref {i}."]} for i in range(20)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "result.json"
    with FakeOpenAIServer(responder=lambda request: Reply("late", delay=60)) as server:
        proc = start(
            "unimatch", str(data), "--output", str(out), "--model", "fake-judge",
            "--base-url", server.base_url, "--no-cache",
            env={"UNIMATCH_API_KEY": TEST_API_KEY},
        )  # fmt: skip
        wait_for(lambda: server.request_count >= 1, proc)
        asked = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert time.monotonic() - asked < 10  # not held by the 60 s replies in flight
        time.sleep(0.5)
        assert server.request_count <= 4  # the queued requests were never sent
    assert proc.returncode == 130
    assert err.strip().splitlines() == [
        "sefora unimatch: interrupted; nothing half-written was left"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_ctrl_c_during_generate_stops_at_once_and_keeps_whole_rows(sample_dataset, tmp_path, start):
    replies = iter(range(1000))

    def model(request):  # the first two answer at once, the others after a minute
        return Reply("Feedback: vary your sentences.", delay=0 if next(replies) < 2 else 60)

    with FakeOpenAIServer(responder=model) as server:
        proc = start(
            "generate", "--config", "v1-unguided-norubric-zs", "--split", "train",
            "--data", str(sample_dataset), "--model", "m", "--base-url", server.base_url,
            "--api-key", TEST_API_KEY, "--out", str(tmp_path / "runs"), "--concurrency", "2",
        )  # fmt: skip
        wait_for(lambda: server.request_count >= 4, proc)
        asked = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert time.monotonic() - asked < 10  # not held by the replies in flight
    assert proc.returncode == 130 and "Traceback" not in err
    [run] = (tmp_path / "runs").glob("*.jsonl")
    text = run.read_text(encoding="utf-8")
    assert text.endswith("\n") and [json.loads(line)["feedback"] for line in text.splitlines()]
