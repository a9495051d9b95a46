"""What a new user meets on the command line (#18 items 2, 5, 6, 7): the same option meaning
in every command and no option silently ignored; one-line errors with exit code 2, never a
traceback; quiet logs unless -v; progress bars on a terminal only, none with --quiet."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from datasets import load_dataset

from sefora_cli.main import main, make_parser
from sefora_cli.options import metric_options
from sefora_grid.evaluate import reference_texts
from tests.fake_openai_server import TEST_API_KEY, FakeOpenAIServer, Reply, Request
from tests.test_unimatch_llm import fake_model

ROOT = Path(__file__).resolve().parents[1]
ROWS = [
    {"prediction": "Nice hook. Cite your sources.", "references": ["Nice hook."]},
    {"prediction": "Vary your sentences. Typo here.", "references": ["Vary your sentences."]},
]

pytestmark = pytest.mark.usefixtures("private_cache")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def sefora(*args: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    """The `sefora` command in a process of its own, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "sefora_cli.main", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=300,
        **kwargs,
    )


def one_line_error(done: subprocess.CompletedProcess, command: str) -> str:
    """The error line of a failed run, checked to be its last line and no traceback."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"sefora {command}: error: ")
    return last


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=fake_model) as srv:
        yield srv


# --- item 2: one meaning per option, none silently ignored ----------------------------


@pytest.mark.parametrize(
    "flags, expected",
    [
        ([], {}),
        (["--model", "m", "--base-url", "http://h/v1"], {"model": "m", "base_url": "http://h/v1"}),
        (["--scorer", "embedding", "--segmenter", "rules", "--threshold", "3"],
         {"scorer": "embedding", "segmenter": "rules", "threshold": 3.0}),
        (["--batch-size", "7", "--concurrency", "2", "--cache-dir", "c", "--on-error", "skip"],
         {"batch_size": 7, "concurrency": 2, "cache_dir": "c", "on_error": "skip"}),
        (["--no-cache", "--whole-references", "-q"],
         {"use_cache": False, "segment_references": False, "progress": False}),
    ],
)  # fmt: skip
def test_unimatch_and_evaluate_read_the_metric_options_alike(flags, expected):
    def options(command: str, *argv: str) -> dict:
        argv = [command, "x", *argv]
        return metric_options(make_parser(argv).parse_args(argv))

    # Only what is given is passed on: left out, the library's own default applies.
    assert options("unimatch", *flags) == options("evaluate", *flags)
    assert options("unimatch", *flags) == {"progress": None, **expected}


def run_file(dataset: Path, runs: Path) -> list[dict]:
    """A generation run file (as `sefora generate` writes it) whose feedback is the first
    instructor comment of four annotated train paragraphs; returns the paragraphs as
    `sefora unimatch` input."""
    rows, paragraphs = [], []
    for r in load_dataset(str(dataset), "paragraphs", split="train"):
        refs = reference_texts(r["annotations"])
        if refs and len(rows) < 4:
            feedback = f"{refs[0]} Also vary your sentences."
            rows.append(
                {
                    "paragraph_id": r["paragraph_id"],
                    "configuration": "v2-guided-rubric-zs",
                    "model": "m",
                    "split": "train",
                    "feedback": feedback,
                    "prompt_tokens": 10,
                    "completion_tokens": 5,
                    "format_ok": True,
                }
            )
            paragraphs.append({"prediction": feedback, "references": refs})
    runs.mkdir()
    write_jsonl(runs / "v2-guided-rubric-zs__m.jsonl", rows)
    return paragraphs


def test_evaluate_with_model_and_base_url_asks_the_judge_like_unimatch(
    sample_dataset, tmp_path, server, monkeypatch
):
    monkeypatch.setenv("UNIMATCH_API_KEY", TEST_API_KEY)
    paragraphs = run_file(sample_dataset, tmp_path / "runs")
    llm = ["--model", "fake-judge", "--base-url", server.base_url, "--no-cache", "-q"]
    results = tmp_path / "results"
    assert main(["evaluate", str(tmp_path / "runs"), "--out", str(results),
                 "--data", str(sample_dataset), *llm]) == 0  # fmt: skip
    asked = server.request_count
    assert asked > 0  # the judge was asked (#18 item 2: it used to score offline, silently)
    summary = json.loads((results / "v2-guided-rubric-zs__m.json").read_text())
    assert summary["unimatch"]["scorer"]["name"] == "llm"
    assert summary["unimatch"]["segmenter"]["name"] == "llm"
    # `sefora unimatch` with the same flags on the same paragraphs gives the same figures.
    data = write_jsonl(tmp_path / "same.jsonl", paragraphs)
    out = tmp_path / "unimatch.json"
    assert main(["unimatch", str(data), "--output", str(out), *llm]) == 0
    alone = json.loads(out.read_text())
    assert server.request_count > asked
    for figure in ("precision", "recall", "f1", "micro_f1", "mean_predicted_units"):
        assert alone[figure] == pytest.approx(summary["full"][figure]), figure


@pytest.mark.parametrize(
    "argv, named",
    [
        (["unimatch", "{data}", "--scorer", "exact", "--segmenter", "rules", "--model", "m"],
         "model"),
        (["unimatch", "{data}", "--scorer", "exact", "--segmenter", "rules", "--batch-size", "9"],
         "batch_size"),
        (["unimatch", "{data}", "--scorer", "exact", "--no-cache", "--cache-dir", "c"],
         "cache_dir"),
        (["validate-scorer", "{data}", "--scorer", "exact", "--base-url", "http://x"],
         "base_url"),
        (["dpo-pairs", "{data}", "--out", "o.jsonl", "--seed", "3"], "--seed"),
        (["generate", "--config", "v2-guided-rubric-zs", "--model", "m",
          "--backend", "transformers", "--concurrency", "2"], "--concurrency"),
        (["generate", "--config", "v2-guided-rubric-zs", "--model", "m", "--device", "cuda"],
         "--device"),
    ],
)  # fmt: skip
def test_an_option_that_would_be_ignored_is_an_error(tmp_path, capsys, argv, named):
    # Rows that are good paragraphs for `unimatch` and good scored pairs for `validate-*`.
    data = write_jsonl(tmp_path / "in.jsonl", [{**r, "a": "x", "b": "y", "score": 2} for r in ROWS])
    argv = [a.replace("{data}", str(data)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"sefora {argv[0]}: error: ") and "ignored" in err
    assert named in err and len(err.splitlines()) == 1
    assert not (tmp_path / "o.jsonl").exists()


# --- item 5: one line naming the option or the file and JSON path, exit 2 -------------


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--scorer", "nope"], "argument --scorer: unknown scorer 'nope'; choose one of: auto"),
        (["--segmenter", "learnd"], "argument --segmenter: unknown segmenter 'learnd'"),
        (["--threshold", "0"], "argument --threshold: threshold must be in (0, 4], got 0.0"),
        (["--threshold", "nan"], "argument --threshold: threshold must be in (0, 4]"),
        (["--threshold", "x"], "argument --threshold: invalid value 'x'"),
        (["--batch-size", "0"], "argument --batch-size: batch_size must be an integer >= 1"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(tmp_path, flags, message):
    data = write_jsonl(tmp_path / "in.jsonl", ROWS)
    out = tmp_path / "out.json"
    done = sefora("unimatch", str(data), "--output", str(out), *flags)
    assert message in one_line_error(done, "unimatch")
    assert not out.exists()


def test_a_lone_surrogate_names_the_file_line_and_json_path(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text(
        json.dumps(ROWS[0]) + "\n" + '{"prediction": "ok", "references": ["a", "b\\ud800"]}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out.json"
    done = sefora("unimatch", str(data), "--scorer", "exact", "--output", str(out))
    line = one_line_error(done, "unimatch")
    assert line.endswith(f"{data}: line 2: references[1]: the string holds a lone surrogate U+D800")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_an_output_that_cannot_be_written_is_one_line(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", ROWS)
    blocker = tmp_path / "file"
    blocker.write_text("")
    exact = ["--segmenter", "rules", "--scorer", "exact"]
    for flags, where, reason in [
        ([*exact, "--output", str(tmp_path)], tmp_path, "Is a directory"),
        ([*exact, "--output", str(blocker / "o.json")], blocker / "o.json", "Not a directory"),
        (["--segmenter", "rules", "--scorer", "learned", "--cache-dir", str(blocker / "c")],
         blocker / "c", "Not a directory (the score cache; see cache_dir)"),
    ]:  # fmt: skip
        assert main(["unimatch", str(data), *flags]) == 2
        err = capsys.readouterr().err
        assert err == f"sefora unimatch: error: {where}: cannot write: {reason}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "in.jsonl"]


def test_every_bad_line_of_a_file_is_listed(tmp_path, capsys):
    data = tmp_path / "in.jsonl"
    data.write_text(
        '{"prediction": "a", "references": ["b"]}\n{broken\n'
        '{"prediction": "a", "references": ["b"], "weight": NaN}\n[1]\n',
        encoding="utf-8",
    )
    assert main(["unimatch", str(data), "--scorer", "exact"]) == 2
    err = capsys.readouterr().err
    assert f"{data}: 3 problems:" in err
    assert "  - line 2: not JSON" in err
    assert "  - line 3: weight: NaN is not a JSON number" in err
    assert "  - line 4: expected a JSON object" in err


# --- item 6: quiet logs by default, -v for logs ---------------------------------------


def test_no_log_lines_by_default_and_logs_with_v(tmp_path, server):
    data = write_jsonl(tmp_path / "in.jsonl", ROWS * 3)
    llm = ["--model", "fake-judge", "--base-url", server.base_url, "--no-cache"]
    env = {"UNIMATCH_API_KEY": TEST_API_KEY}
    quiet = sefora("unimatch", str(data), *llm, env=env)
    assert quiet.returncode == 0, quiet.stderr
    assert server.request_count > 3  # one request per text to segment, then scoring
    assert quiet.stderr == ""  # no INFO httpx line per request, no bar off a terminal
    assert json.loads(quiet.stdout)["n_examples"] == 6
    server.reset()
    loud = sefora("unimatch", str(data), *llm, "-v", env=env)
    assert loud.returncode == 0
    requests = [line for line in loud.stderr.splitlines() if line.startswith("INFO httpx")]
    assert len(requests) == server.request_count
    assert TEST_API_KEY not in loud.stderr
    assert json.loads(loud.stdout) == json.loads(quiet.stdout)


@pytest.mark.slow
def test_offline_backends_load_their_model_without_a_log_line(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ROWS)
    offline = ["--segmenter", "learned", "--scorer", "embedding", "--no-cache"]
    quiet = sefora("unimatch", str(data), *offline)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""  # was "INFO sentence_transformers...: Loading ..." every run
    loud = sefora("unimatch", str(data), *offline, "-v")
    assert "INFO sentence_transformers" in loud.stderr
    assert json.loads(loud.stdout) == json.loads(quiet.stdout)


# --- item 7: progress on a terminal, off with --quiet or off a terminal ---------------


def run_on_terminal(*args: str, env: dict) -> tuple[int, str]:
    """Run `sefora` with stderr on a pseudo-terminal (100 columns); its return code and
    what it drew there."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sefora_cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        cwd=ROOT,
        env={**os.environ, **env},
    )
    os.close(slave)
    drawn = b""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            drawn += chunk
        elif proc.poll() is not None:
            break
    proc.communicate(timeout=60)
    os.close(master)
    return proc.returncode, drawn.decode("utf-8", "replace")


def slow_judge(request: Request) -> Reply:
    """The fake judge, a little slow: a run of several requests lasts over a second."""
    reply = fake_model(request)
    reply.delay = 0.15
    return reply


def test_progress_bar_on_a_terminal_only_and_never_with_quiet(tmp_path):
    rows = [
        {"prediction": f"Point {i}. Fix line {i}.", "references": [f"Line {i}."]} for i in range(6)
    ]
    data = write_jsonl(tmp_path / "in.jsonl", rows)  # 12 texts to segment, one request each
    with FakeOpenAIServer(responder=slow_judge) as server:
        llm = ["--model", "fake-judge", "--base-url", server.base_url, "--no-cache"]
        env = {"UNIMATCH_API_KEY": TEST_API_KEY}
        code, drawn = run_on_terminal("unimatch", str(data), *llm, "--concurrency", "1", env=env)
        assert code == 0
        assert "segmenting: 100%" in drawn and "it/s" in drawn
        code, drawn = run_on_terminal("unimatch", str(data), *llm, "-q", env=env)
        assert code == 0 and drawn.strip() == ""
        piped = sefora("unimatch", str(data), *llm, "--concurrency", "1", env=env)
        assert piped.returncode == 0 and piped.stderr == ""


def test_offline_segmenting_and_scoring_draw_bars(monkeypatch, capsys):
    """The learned backends' batched work is cut in chunks so that a bar moves (#18 item 7:
    195 s on 1,500 paragraphs with no sign of life)."""
    import sefora_common.progress as progress
    import unimatch_metric

    monkeypatch.setattr(progress, "DELAY", 0.0)
    texts = [f"Nice point {i}. But the claim in line {i} needs a source." for i in range(150)]
    unimatch_metric.unimatch(texts, [[t] for t in texts], progress=True, use_cache=False)
    err = capsys.readouterr().err
    assert "segmenting: 100%" in err and "150/150" in err  # each distinct text once
    assert "scoring: 100%" in err
    unimatch_metric.unimatch(texts[:5], [[t] for t in texts[:5]], progress=False, use_cache=False)
    assert capsys.readouterr().err == ""


def test_no_dataset_loading_bars_off_a_terminal(sample_dataset, tmp_path):
    run_file(sample_dataset, tmp_path / "runs")
    fresh = {"HF_HOME": str(tmp_path / "hf")}  # `datasets` prepares the splits again
    done = sefora("evaluate", str(tmp_path / "runs"), "--out", str(tmp_path / "results"),
                  "--data", str(sample_dataset), "--segmenter", "rules", "--scorer", "exact",
                  env=fresh)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # was a "Generating train split" bar per split
    assert done.stdout.startswith("v2-guided-rubric-zs__m.jsonl: F1 ")
    assert (tmp_path / "hf").is_dir()
