"""The grid end to end: `sefora generate` against a local OpenAI-compatible server, then
`sefora evaluate` with the offline scorer and `sefora report` (tables and plot)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from datasets import load_dataset

from sefora_cli.main import main
from sefora_grid.evaluate import reference_texts
from sefora_grid.prompts import TARGET_END, TARGET_START
from tests.fake_openai_server import FakeOpenAIServer, Reply, Request
from unimatch_metric import SCORERS

CONFIGS = [
    "v2-guided-rubric-zs",
    "v1-guided-rubric-zs",
    "v2-unguided-rubric-zs",
    "v2-guided-rubric-fs",
]
MODEL = "fake-llm"
SECRET = "sk-test-SECRET-0123456789"
LIMIT = 6
FILLER = [
    "Check the spelling of every word in this paragraph.",
    "Vary the length of your sentences.",
    "Add a transition to the next paragraph.",
]


@pytest.fixture(scope="module")
def dataset(sample_dataset: Path) -> Path:
    return sample_dataset


class FakeLLM:
    """Answers like a model that has read the instructor's comments: V2 with the first
    one in the asked format, V1 with all of them plus generic filler points."""

    def __init__(self, dataset: Path) -> None:
        rows = load_dataset(str(dataset), "paragraphs", split="train")
        self.comments = {r["body"]: reference_texts(r["annotations"]) for r in rows}
        self.prompts: list[str] = []

    def __call__(self, request: Request) -> Reply:
        if request.json["model"] != MODEL:
            return Reply.error(404, f"The model `{request.json['model']}` does not exist")
        user = request.message("user")
        self.prompts.append(user)
        target = re.search(
            re.escape(TARGET_START) + r"\n\n(.*?)\n\n" + re.escape(TARGET_END), user, re.DOTALL
        ).group(1)
        comments = self.comments[target] or ["Good paragraph."]
        if "Feedback: <" in user:  # V2's fixed format
            return Reply(f"Focus: the paragraph\nFeedback: {comments[0]}")
        return Reply("\n".join(f"- {c}" for c in [*comments, *FILLER]))


def generate(
    dataset: Path, out: Path, base_url: str, model: str = MODEL, workers: int = 4
) -> list[str]:
    args = ["generate", "--split", "train", "--data", str(dataset), "--model", model]
    args += ["--concurrency", str(workers)]
    args += ["--base-url", base_url, "--api-key", SECRET, "--limit", str(LIMIT)]
    args += ["--out", str(out), "--max-retries", "0", "--quiet"]
    for config in CONFIGS:
        args += ["--config", config]
    return args


def test_generate_evaluate_report(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs, results = tmp_path / "runs", tmp_path / "results"
    fake = FakeLLM(dataset)
    with FakeOpenAIServer(responder=fake) as server:
        assert main(generate(dataset, runs, server.base_url)) == 0
        assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {SECRET}"}
        assert {r.json["max_tokens"] for r in server.requests} == {250}
        assert {r.json["temperature"] for r in server.requests} == {0}
    assert len(fake.prompts) == LIMIT * len(CONFIGS)

    paragraphs = {
        r["paragraph_id"]: r for r in load_dataset(str(dataset), "paragraphs", split="train")
    }
    essay_of_annotation = {
        f"{pid}_A{i:02d}": r["essay_id"]
        for pid, r in paragraphs.items()
        for i in range(len(r["annotations"]))
    }
    files = sorted(runs.glob("*.jsonl"))
    assert [f.name for f in files] == sorted(f"{c}__{MODEL}.jsonl" for c in CONFIGS)
    for path in files:
        assert SECRET not in path.read_text()
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        assert len(rows) == LIMIT
        for row in rows:
            target = paragraphs[row["paragraph_id"]]
            assert target["num_annotations"] >= 1
            assert row["prompt_tokens"] <= 8192 - 250 and not row["over_budget"]
            assert row["usage_prompt_tokens"] == 1 and row["completion_tokens"] == 1
            if "-fs" in row["configuration"]:
                assert len(row["exemplars"]) == 5
                assert all(essay_of_annotation[a] != row["essay_id"] for a in row["exemplars"])
            if row["configuration"].startswith("v2"):
                assert row["format_ok"] and "Focus:" not in row["feedback"]

    assert main(["evaluate", str(runs), "--out", str(results), "--data", str(dataset),
                 "--cache-dir", str(tmp_path / "cache"), "--quiet"]) == 0  # fmt: skip
    summaries = {
        s["configuration"]: s for s in (json.loads(p.read_text()) for p in results.glob("*.json"))
    }
    assert set(summaries) == set(CONFIGS)
    signatures = {s["unimatch"]["signature"] for s in summaries.values()}
    assert len(signatures) == 1  # every run scored the same way
    assert f"UniMatch signature: {signatures.pop()}\n" in capsys.readouterr().out
    single_ids = {pid for pid, r in paragraphs.items() if r["num_annotations"] == 1}
    for config, s in summaries.items():
        full = s["full"]
        assert s["model"] == MODEL and s["n_rows"] == LIMIT
        assert full["n_examples"] + s["n_no_reference"] == LIMIT and full["n_failed"] == 0
        assert all(0 <= full[k] <= 1 for k in ("precision", "recall", "f1", "micro_f1"))
        rows = [json.loads(x) for x in (results / f"{config}__{MODEL}.paragraphs.jsonl").open()]
        assert s["single_reference"]["n_examples"] == sum(
            r["paragraph_id"] in single_ids for r in rows
        )
        assert s["unimatch"]["scorer"]["name"] == s["scoring"]["scorer"] == SCORERS.offline
    v1, v2 = summaries["v1-guided-rubric-zs"]["full"], summaries["v2-guided-rubric-zs"]["full"]
    # The filler points make V1 more verbose and less precise, as in the paper.
    assert v1["mean_predicted_units"] > v2["mean_predicted_units"]
    assert v1["precision"] < v2["precision"]
    assert v1["recall"] >= v2["recall"]

    capsys.readouterr()
    assert main(["evaluate", str(runs), "--out", str(results), "--data", str(dataset),
                 "--cache-dir", str(tmp_path / "cache"), "--quiet"]) == 0  # fmt: skip
    assert "already scored" in capsys.readouterr().out

    assert main(["report", str(results)]) == 0
    report = (results / "report.md").read_text()
    assert "Table 3" in report and MODEL in report and "Pearson r" in report
    assert f"UniMatch signature(s): `{summaries[CONFIGS[0]]['unimatch']['signature']}`" in report
    with (results / "table3.csv").open() as handle:
        (table,) = list(csv.DictReader(handle))
    assert table["model"] == MODEL
    assert float(table["f1"]) == pytest.approx(v2["f1"])
    assert float(table["f1_unconstrained_v1"]) == pytest.approx(v1["f1"])
    assert table["f1_no_rubric"] == ""  # not run
    with (results / "configurations.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == len(CONFIGS)
    png = (results / "units_vs_scores.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 5000


def test_unknown_model_and_config_are_clear_errors(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer(responder=FakeLLM(dataset)) as server:
        args = generate(dataset, tmp_path / "runs", server.base_url, model="nope", workers=1)
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "HTTP 404" in err and "nope" in err and SECRET not in err
        assert server.request_count == 1  # stopped at the first failure, no retries on 404
        for path in (tmp_path / "runs").glob("*.jsonl"):
            assert path.read_text() == ""
        args = generate(dataset, tmp_path / "runs", server.base_url)
        args[args.index(CONFIGS[0])] = "v3-guided-rubric-zs"
        assert main(args) == 2
        assert "unknown configuration 'v3-guided-rubric-zs'" in capsys.readouterr().err
