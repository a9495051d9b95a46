"""The toolkit as its users get it (issue #15): the built sdist and wheel, installed in
fresh virtual environments and used from folders outside the repository; the module
folders as Hub repositories as they stand (copied alone, their requirements.txt installed
with the wheel as the only source of the toolkit, `evaluate.load(<copy>)` computing, the
Space apps serving); the README's quick start without any network.

The venvs are session fixtures (conftest.py); these tests are slow (CI runs them).
"""

from __future__ import annotations

import json
import re
import tarfile
import zipfile
from pathlib import Path

import evaluate
import pytest
from huggingface_hub import SpaceCard
from packaging.requirements import Requirement

import feedback_judges
import unimatch_metric
from sefora_common import __version__
from sefora_dataset import SAMPLE_SOURCE
from sefora_dataset.parsers import parse_file
from tests.distribution import REPO, App, card_front_matter, copy_alone
from tests.fake_openai_server import TEST_API_KEY, FakeOpenAIServer
from tests.make_annotated import write_docx, write_pdf
from tests.test_rubric_judge import CONTEXT, EXPECTED, FEEDBACK, answer

MODULES = {
    "unimatch": (Path(unimatch_metric.MODULE_PATH), "sefora-toolkit[local]"),
    "rubric_judge": (Path(feedback_judges.MODULE_PATH), "sefora-toolkit"),
}
PREDICTIONS = ["Great opening! Try varying your sentence length.", "The thesis is unclear."]
REFERENCES = [["Nice hook.", "Your sentences are all the same length."], ["Clarify the thesis."]]
MISSING_LOCAL = "needs the 'local' extra"


def test_module_cards_are_space_cards_and_imports_name_their_distribution() -> None:
    """Checked in the checkout (fast): what the Hub reads from each folder."""
    from evaluate.loading import get_imports

    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    pinned = re.search(r'"gradio==([\d.]+)"', pyproject).group(1)
    for name, (folder, install) in MODULES.items():
        card = SpaceCard.load(folder / "README.md")
        assert card.data.sdk == "gradio" and card.data.sdk_version == pinned, name
        assert (folder / card.data.app_file).is_file() and card.data.app_file == "app.py"
        assert card.data.license == "apache-2.0" and card.data.to_dict() == card_front_matter(
            folder
        )
        assert {"evaluate", "metric"} <= set(card.data.tags)
        # evaluate's import scan: the library is announced under its distribution's name.
        libraries = dict(
            (imp[1], imp[2])
            for imp in get_imports(str(folder / f"{name}.py"))
            if imp[0] == "library"
        )
        package = "unimatch_metric" if name == "unimatch" else "feedback_judges"
        assert libraries[package] == install
        requirements = [
            Requirement(line)
            for line in (folder / "requirements.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith(("#", "-"))
        ]
        toolkit = next(r for r in requirements if r.name == "sefora-toolkit")
        assert str(toolkit) == install and toolkit.specifier.contains(__version__)
        assert "gradio" not in {r.name for r in requirements}  # the card's sdk_version


@pytest.mark.slow
def test_wheel_and_sdist_carry_what_a_user_needs_and_nothing_else(dist) -> None:
    assert dist.wheel.name == f"sefora_toolkit-{__version__}-py3-none-any.whl"
    names = zipfile.ZipFile(dist.wheel).namelist()
    info = f"sefora_toolkit-{__version__}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    for path in (
        "unimatch_metric/models/scorer.npz",
        "unimatch_metric/models/segmenter.npz",
        "unimatch_metric/models/reference.json",
        "feedback_judges/rubrics/essay-feedback.json",
        "feedback_judges/rubrics/math-feedback.json",
        "sefora_dataset/sample/README.md",
        *(f"unimatch_metric/unimatch/{f}" for f in ("unimatch.py", "README.md", "app.py")),
        "unimatch_metric/unimatch/requirements.txt",
        "unimatch_metric/unimatch/examples.json",
        *(f"feedback_judges/rubric_judge/{f}" for f in ("rubric_judge.py", "README.md", "app.py")),
        "feedback_judges/rubric_judge/requirements.txt",
        "sefora_cli/module.py",
    ):
        assert path in names, path
    sample = [n for n in names if n.startswith("sefora_dataset/sample/SEFORA-sample/")]
    assert len(sample) == len([p for p in SAMPLE_SOURCE.rglob("*") if p.is_file()])
    tops = {n.split("/")[0] for n in names}
    assert tops == {
        "sefora_common",
        "sefora_dataset",
        "sefora_llm",
        "unimatch_metric",
        "feedback_judges",
        "sefora_grid",
        "sefora_cli",
        info,
    }
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    metadata = zipfile.ZipFile(dist.wheel).read(f"{info}/METADATA").decode()
    assert f"Version: {__version__}" in metadata and "License-Expression: Apache-2.0" in metadata
    requires = re.findall(r"^Requires-Dist: (.*)$", metadata, flags=re.MULTILINE)
    base = [r for r in requires if "extra ==" not in r]
    assert not [r for r in base if r.startswith(("matplotlib", "torch", "gradio"))]
    assert any(r.startswith("matplotlib") and 'extra == "report"' in r for r in requires)
    assert dist.wheel.stat().st_size < 30_000_000  # 20.2 MB of it the learned models
    with tarfile.open(dist.sdist) as sdist:
        members = sdist.getnames()
    root = f"sefora_toolkit-{__version__}"
    assert f"{root}/LICENSE" in members and f"{root}/pyproject.toml" in members
    assert not [m for m in members if m.startswith((f"{root}/labels", f"{root}/tests"))]


def run_ok(venv, argv, cwd, **kw):
    proc = venv.run(argv, cwd, **kw)
    assert proc.returncode == 0, f"{argv}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.mark.slow
def test_base_install_works_outside_the_repository(judge_space, tmp_path: Path) -> None:
    """The wheel without extras (the rubric judge Space's requirements): the CLI, the
    sample build and its loading, the parsers, the module copies, and a clear message
    (never a PackageNotFoundError) wherever an extra is missing."""
    venv, _ = judge_space
    work = tmp_path / "user"
    work.mkdir()
    assert run_ok(venv, ["sefora", "--version"], work).stdout.strip() == f"sefora {__version__}"
    versions = run_ok(
        venv,
        [
            "python",
            "-c",
            "import sefora_common, sefora_dataset, unimatch_metric, feedback_judges as f, "
            "sefora_llm; print(sefora_dataset.__version__, unimatch_metric.__version__, "
            "f.__version__, unimatch_metric.MODULE_PATH)",
        ],
        work,
    ).stdout.split()
    assert versions[:3] == [__version__] * 3
    assert "site-packages" in versions[3] and not versions[3].startswith(str(REPO))

    summary = json.loads(run_ok(venv, ["sefora", "build", "--quiet"], work).stdout)
    loaded = run_ok(
        venv,
        [
            "python",
            "-c",
            "from datasets import load_dataset; d = load_dataset('sefora', 'paragraphs'); "
            "print({s: len(d[s]) for s in d})",
        ],
        work,
    ).stdout
    assert eval(loaded.strip().splitlines()[-1]) == summary["rows"]["paragraphs"]
    run_ok(venv, ["sefora", "module", "unimatch"], work)
    assert (work / "unimatch" / "unimatch.py").read_bytes() == (
        MODULES["unimatch"][0] / "unimatch.py"
    ).read_bytes()

    # The parsers, against the checkout's parse of the same files.
    drafts = sorted(SAMPLE_SOURCE.rglob("*.json"))[:2]
    raw = work / "submissions"
    raw.mkdir()
    write_pdf(json.loads(drafts[0].read_text(encoding="utf-8")), raw / "a.pdf", seed=5)
    write_docx(json.loads(drafts[1].read_text(encoding="utf-8")), raw / "b.docx", seed=5)
    run_ok(venv, ["sefora", "parse", "submissions", "--out", "parsed"], work)
    for stem, suffix in (("a", ".pdf"), ("b", ".docx")):
        got = json.loads((work / "parsed" / f"{stem}.json").read_text(encoding="utf-8"))
        assert got == json.loads(json.dumps(parse_file(raw / f"{stem}{suffix}")))

    # Without the `local` extra: rules + exact work; the offline backends say what to install.
    exact = run_ok(
        venv,
        [
            "python",
            "-c",
            "import unimatch_metric as u; print(u.unimatch([['Nice hook.', 'Cite it.']], "
            "[['Nice hook.']], segmenter='rules', scorer='exact')['f1'])",
        ],
        work,
    )
    assert exact.stdout.strip() == repr(2 / 3)
    for options in ("", "segmenter='rules', scorer='embedding'", "scorer='learned'"):
        proc = venv.run(
            [
                "python",
                "-c",
                f"import unimatch_metric as u; u.unimatch(['a b.'], [['c.']], {options})",
            ],
            work,
        )
        assert proc.returncode == 1, options
        assert MISSING_LOCAL in proc.stderr and "pip install 'sefora-toolkit[local]'" in proc.stderr
        last = proc.stderr.strip().splitlines()[-1]  # what the user reads (causes kept above)
        assert last.startswith("sefora_common.errors.MissingExtraError: "), (options, last)
    (work / "f.jsonl").write_text('{"prediction": "a.", "references": ["b."]}\n')
    proc = venv.run(["sefora", "unimatch", "f.jsonl"], work)
    assert proc.returncode == 2 and MISSING_LOCAL in proc.stderr and "Traceback" not in proc.stderr
    proc = venv.run(["sefora", "report", "results"], work)
    assert proc.returncode == 2 and "pip install 'sefora-toolkit[report]'" in proc.stderr
    for command in (
        ["train-offline"],
        ["validate-scorer"],
        ["validate-segmenter"],
        ["validate-e2e"],
    ):
        proc = venv.run(["sefora", *command], work)
        assert proc.returncode == 2 and "pass --labels" in proc.stderr, command
        assert "site-packages" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_rubric_judge_folder_as_a_hub_repo_loads_and_its_space_serves(judge_space) -> None:
    venv, folder = judge_space
    script = (
        "import json, sys, evaluate\n"
        "judge = evaluate.load(sys.argv[1], 'math-feedback', model='fake-judge', "
        "base_url=sys.argv[2], api_key=sys.argv[3])\n"
        "r = judge.compute(predictions=json.loads(sys.argv[4]),\n"
        "                  references=[json.loads(sys.argv[5])] * 3)\n"
        "print(json.dumps(r))\n"
    )
    with FakeOpenAIServer(responder=answer) as server:
        out = run_ok(
            venv,
            [
                "python",
                "-c",
                script,
                str(folder),
                server.base_url,
                TEST_API_KEY,
                json.dumps(FEEDBACK),
                json.dumps(CONTEXT),
            ],
            folder.parent,
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert result["scores"] == pytest.approx(EXPECTED)
        assert result["config"]["signature"].startswith(f"rubric_judge:{__version__}|")
        assert TEST_API_KEY not in out.stdout + out.stderr

        app = App(venv, folder, folder.parent / "run")
        try:
            fields = [
                "",
                "",
                CONTEXT["question"],
                CONTEXT["correct_answer"],
                "",
                CONTEXT["student_answer"],
            ]
            summary, items = app.call(
                "judge",
                [
                    "math-feedback",
                    FEEDBACK[0],
                    server.base_url,
                    "fake-judge",
                    TEST_API_KEY,
                    *fields,
                ],
            )
            assert re.search(r'id="rj-score" data-value="0\.8"', summary), summary
            assert items.count('class="rj-item"') == 5
            assert 'data-id="positive" data-satisfied="false"' in items
            message, _ = app.call("judge", ["math-feedback", FEEDBACK[0], "", "", "", *fields])
            assert "Give the model name" in message
        finally:
            log = app.stop()
    assert "Traceback" not in log and TEST_API_KEY not in log


@pytest.mark.slow
def test_metric_folder_copied_alone_computes_offline(metric_wheel, tmp_path: Path) -> None:
    copy = copy_alone(MODULES["unimatch"][0], tmp_path / "hub")
    script = (
        "import json, sys, evaluate\n"
        "m = evaluate.load(sys.argv[1])\n"
        "r = m.compute(predictions=json.loads(sys.argv[2]), references=json.loads(sys.argv[3]), "
        "return_details=True)\n"
        "print(json.dumps(r))\n"
    )
    proc = run_ok(
        metric_wheel,
        ["python", "-c", script, str(copy), json.dumps(PREDICTIONS), json.dumps(REFERENCES)],
        tmp_path,
        offline=True,
    )
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    here = evaluate.load(unimatch_metric.MODULE_PATH).compute(
        predictions=PREDICTIONS, references=REFERENCES, return_details=True, use_cache=False
    )
    assert got == json.loads(json.dumps(here))  # the same learned models, the same figures
    assert got["config"]["scorer"]["name"] == "learned" and got["n_examples"] == 2
    assert got["config"]["signature"].startswith(f"unimatch:{__version__}|seg:learned@")


def readme_quick_start() -> tuple[list[str], str]:
    """The README's commands for a user without a checkout, and the Python that follows."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("Without a checkout", 1)[1]
    commands = re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL).group(1)
    code = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)
    lines = [line.split("#")[0].strip() for line in commands.strip().splitlines()]
    return lines, code


@pytest.mark.slow
def test_readme_quick_start_in_a_fresh_folder_without_network(metric_wheel, tmp_path) -> None:
    commands, code = readme_quick_start()
    assert (
        commands[0].startswith("pip install torch==2.13.0")
        and "sefora-toolkit[local]" in commands[0]
    )
    assert 'load_dataset("sefora", "paragraphs"' in code and 'evaluate.load("unimatch")' in code
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for line in commands[1:]:  # the install is the fixture's (pip needs the network)
        run_ok(metric_wheel, line.split(), fresh, offline=True)
    assert (fresh / "sefora" / "README.md").is_file() and (
        fresh / "unimatch" / "unimatch.py"
    ).is_file()
    (fresh / "quickstart.txt").write_text(code, encoding="utf-8")
    runner = (
        "import doctest, sys\n"
        "text = open('quickstart.txt', encoding='utf-8').read()\n"
        "test = doctest.DocTestParser().get_doctest(text, {}, 'README', 'README.md', 0)\n"
        "r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)\n"
        "r.run(test)\n"
        "failed, attempted = r.summarize(verbose=False)\n"
        "print('attempted', attempted)\n"
        "sys.exit(1 if failed else 0)\n"
    )
    proc = run_ok(metric_wheel, ["python", "-c", runner], fresh, offline=True)
    assert "attempted" in proc.stdout and int(proc.stdout.split()[-1]) >= 8


@pytest.mark.slow
def test_metric_space_requirements_install_and_app_serves(metric_space) -> None:
    venv, folder = metric_space
    app = App(venv, folder, folder.parent / "run")
    try:
        outputs = app.call(
            "score",
            [
                "",
                "\n".join(REFERENCES[0]),
                PREDICTIONS[0],
                "Offline (no API key)",
                "",
                "",
                "",
                False,
                3,
            ],
        )
    finally:
        log = app.stop()
    status, figures = outputs[0], outputs[1]
    assert "scored by learned" in status
    expected = unimatch_metric.unimatch(PREDICTIONS[:1], REFERENCES[:1], use_cache=False)
    assert f'id="um-f1" data-value="{expected["f1"]!r}"' in figures
    assert "Traceback" not in log


def test_module_command_copies_the_folder_and_replaces_only_an_earlier_copy(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    from sefora_cli.main import main

    monkeypatch.chdir(tmp_path)
    for name, (folder, _) in MODULES.items():
        assert main(["module", name]) == 0
        files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        assert {p.name: p.read_bytes() for p in (tmp_path / name).iterdir()} == files
    (tmp_path / "unimatch" / "README.md").write_text("edited")
    assert main(["module", "unimatch"]) == 0  # an earlier copy is replaced whole
    assert (tmp_path / "unimatch" / "README.md").read_bytes() == (
        MODULES["unimatch"][0] / "README.md"
    ).read_bytes()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    capsys.readouterr()
    assert main(["module", "rubric_judge", "--out", "mine"]) == 2
    assert "refusing to replace it" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]
