"""The Python examples of the README, the two metric cards and the modules' docstrings run
as written, and print what they show (#18 item 11).

Each document's examples run in order in one namespace, in a folder prepared by the
README's quick start (`sefora build`, `sefora module unimatch`, `sefora module
rubric_judge`), so the bare names `"sefora"`, `"unimatch"` and `"rubric_judge"` resolve as
they do for a user. Doctest blocks (``>>>``) are checked against their printed output; other
blocks must run without error. A block preceded by the marker comment below is not run (it
needs a real LLM endpoint); every such block is listed here, so none is skipped silently.
The rubric judge's examples talk to a chat-completions server on 127.0.0.1 named by the
environment variables the card documents.
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import re
from pathlib import Path

import evaluate
import pytest

import feedback_judges
import unimatch_metric
from sefora_cli.main import main
from tests.fake_openai_server import FakeOpenAIServer, Reply, Request

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
UNIMATCH_CARD = Path(unimatch_metric.MODULE_PATH) / "README.md"
JUDGE_CARD = Path(feedback_judges.MODULE_PATH) / "README.md"
NOT_RUN = "<!-- example not run by tests/test_docs_examples.py:"
BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
#: Python blocks per document: (run, not run). A change here is a change of the docs.
COUNTS = {README: (3, 1), UNIMATCH_CARD: (7, 1), JUDGE_CARD: (1, 0)}


def python_blocks(path: Path) -> tuple[list[tuple[int, str]], list[str]]:
    """(line number, code) of each block to run, and the blocks marked as not run."""
    text = path.read_text(encoding="utf-8")
    run, skipped = [], []
    for m in BLOCK.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if before.startswith(NOT_RUN):
            skipped.append(m.group(1))
        else:
            run.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    return run, skipped


def run_examples(path: Path, blocks: list[tuple[int, str]], namespace: dict) -> None:
    """Run the blocks in order in ``namespace``; a doctest block must print what it shows."""
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=FLAGS)
    for line, code in blocks:
        name = f"{path.relative_to(REPO)}:{line}"
        if ">>>" in code:
            test = parser.get_doctest(code, namespace, name, str(path), line)
            runner.run(test, clear_globs=False)
            namespace.update(test.globs)  # DocTest runs in a copy: keep what it defined
        else:
            exec(compile(code, name, "exec"), namespace)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} doctest examples of {path.name} failed"


@pytest.fixture
def quick_start(tmp_path: Path, monkeypatch, private_cache) -> Path:
    """A folder after the README's quick start (the dataset and the two modules)."""
    monkeypatch.chdir(tmp_path)
    for argv in (["build", "--quiet"], ["module", "unimatch"], ["module", "rubric_judge"]):
        assert main(argv) == 0
    return tmp_path


def test_every_python_block_is_run_or_marked() -> None:
    for path, (n_run, n_skipped) in COUNTS.items():
        run, skipped = python_blocks(path)
        assert (len(run), len(skipped)) == (n_run, n_skipped), path.name
        for code in skipped:
            assert "base_url=" in code  # only the LLM-endpoint examples are left out


@pytest.mark.parametrize("path", [README, UNIMATCH_CARD], ids=["README", "unimatch card"])
def test_offline_examples_print_what_they_show(path: Path, quick_start: Path, capsys) -> None:
    run_examples(path, python_blocks(path)[0], {})
    assert "Failed example" not in capsys.readouterr().out


def rubric_answers(request: Request) -> Reply:
    """Every checklist item answered "yes" with a reason."""
    labels = re.findall(r"^(I\d+)\. ", request.message("user"), flags=re.MULTILINE)
    return Reply(json.dumps({k: {"reason": "checked", "answer": "yes"} for k in labels}))


def test_rubric_judge_card_example_runs(quick_start: Path, monkeypatch, capsys) -> None:
    with FakeOpenAIServer(responder=rubric_answers) as server:
        monkeypatch.setenv("UNIMATCH_MODEL", "fake-judge")
        monkeypatch.setenv("UNIMATCH_BASE_URL", server.base_url)
        monkeypatch.setenv("UNIMATCH_API_KEY", "sk-docs-test")
        namespace: dict = {}
        run_examples(JUDGE_CARD, python_blocks(JUDGE_CARD)[0], namespace)
        assert server.request_count == 1  # five items, one request
    assert "Failed example" not in capsys.readouterr().out
    assert namespace["results"]["config"]["model"] == "fake-judge"


def module_docstring(folder: str, name: str) -> str:
    """The ``_KWARGS_DESCRIPTION`` (the examples evaluate shows) of a copied module."""
    spec = importlib.util.spec_from_file_location(f"docs_{name}", Path(folder, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._KWARGS_DESCRIPTION


def test_module_docstring_examples_run(quick_start: Path, monkeypatch) -> None:
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    parser = doctest.DocTestParser()

    def run(name: str) -> None:
        text = module_docstring(str(quick_start / name), name)
        runner.run(parser.get_doctest(text, {"evaluate": evaluate}, name, name, 0))

    run("unimatch")  # offline: no endpoint configured
    with FakeOpenAIServer(responder=rubric_answers) as server:
        monkeypatch.setenv("UNIMATCH_BASE_URL", server.base_url)
        monkeypatch.setenv("UNIMATCH_API_KEY", "sk-docs-test")
        run("rubric_judge")
        assert server.request_count == 1
    failed, attempted = runner.summarize(verbose=False)
    assert attempted >= 5 and failed == 0
