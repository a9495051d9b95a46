"""The studies beyond the paper end to end on the sample dataset: document-level and
anchored generation with `sefora generate` against a local OpenAI-compatible server, then
`sefora evaluate` and `sefora report`."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from datasets import load_dataset

from sefora_cli.main import main
from sefora_common.text import resolve_span
from sefora_grid.evaluate import reference_text
from sefora_grid.prompts import TARGET_END, TARGET_START
from tests.fake_openai_server import FakeOpenAIServer, Reply, Request

MODEL = "fake-llm"
SCORING = ["--segmenter", "rules", "--scorer", "exact", "--quiet"]
FILLER = "Overall, proofread carefully before you submit."


def base_args(dataset: Path, out: Path, url: str, configs: list[str]) -> list[str]:
    args = ["generate", "--split", "train", "--data", str(dataset), "--model", MODEL]
    args += ["--base-url", url, "--api-key", "sk-x", "--out", str(out), "--quiet"]
    args += ["--max-retries", "0"]
    for config in configs:
        args += ["--config", config]
    return args


class DocumentLLM:
    """Answers a document prompt with the instructor's own overall comment of the draft when
    asked with the rubric, and with a generic filler sentence otherwise."""

    def __init__(self, dataset: Path) -> None:
        rows = load_dataset(str(dataset), "drafts", split="train")
        self.by_text = {r["text"]: r["overall_comment"] for r in rows if r["overall_comment"]}
        self.prompts: list[str] = []

    def __call__(self, request: Request) -> Reply:
        user = request.message("user")
        self.prompts.append(user)
        draft = user.split("## The draft\n", 1)[1].split("\n\n## Your answer", 1)[0]
        if "## Assignment prompt and rubric" in user:
            return Reply(f"<think>planning</think>{self.by_text[draft]}")
        return Reply(FILLER)


def test_document_level_generate_evaluate_report(sample_dataset: Path, tmp_path: Path) -> None:
    runs, results = tmp_path / "runs", tmp_path / "results"
    fake = DocumentLLM(sample_dataset)
    configs = ["doc-guided-rubric-zs", "doc-unguided-norubric-fs"]
    with FakeOpenAIServer(responder=fake) as server:
        assert main(base_args(sample_dataset, runs, server.base_url, configs)) == 0
        assert {r.json["max_tokens"] for r in server.requests} == {400}
    drafts = {r["draft_id"]: r for r in load_dataset(str(sample_dataset), "drafts", split="train")}
    with_comment = {d for d, r in drafts.items() if r["overall_comment"]}
    assert len(fake.prompts) == 2 * len(with_comment)
    for prompt in fake.prompts:
        if "## Assignment prompt and rubric" in prompt:
            assert "graded on these rubric items:" in prompt
            assert "- Praise:" in prompt  # guided
        else:
            assert "Examples of instructors' overall comments" in prompt  # few-shot
    for config in configs:
        rows = [json.loads(x) for x in (runs / f"{config}__{MODEL}.jsonl").open()]
        assert {r["draft_id"] for r in rows} == with_comment
        assert all(r["level"] == "document" and r["format_ok"] for r in rows)
        assert all(r["context_paragraphs"] == r["draft_paragraphs"] for r in rows)
        if config.endswith("-fs"):
            for r in rows:
                assert len(r["exemplars"]) == 2
                assert all(drafts[e]["essay_id"] != r["essay_id"] for e in r["exemplars"])
    right = [json.loads(x) for x in (runs / f"{configs[0]}__{MODEL}.jsonl").open()]
    assert all("<think>" not in r["feedback"] for r in right)

    args = ["evaluate", str(runs), "--out", str(results), "--data", str(sample_dataset)]
    assert main(args + SCORING) == 0
    own = json.loads((results / f"{configs[0]}__{MODEL}.json").read_text())
    filler = json.loads((results / f"{configs[1]}__{MODEL}.json").read_text())
    assert own["level"] == filler["level"] == "document"
    assert own["full"]["n_examples"] == len(with_comment)
    assert own["full"]["f1"] == 1.0  # the instructor's own comment, unit for unit
    assert filler["full"]["f1"] == 0.0
    assert own["toggles"] == {"guided": True, "rubric": True, "few_shot": False}

    assert main(["report", str(results)]) == 0
    report = (results / "report.md").read_text()
    assert "Document level" in report and "Table 3" not in report  # no paragraph runs
    with (results / "documents.csv").open() as handle:
        table = {r["configuration"]: r for r in csv.DictReader(handle)}
    assert float(table[configs[0]]["f1"]) == 1.0
    assert (results / "documents_units.png").read_bytes().startswith(b"\x89PNG")


class AnchoredLLM:
    """Quotes each located instructor span of the target paragraph with its reference text
    (V1), or quotes words the paragraph does not contain (V2)."""

    def __init__(self, dataset: Path) -> None:
        rows = load_dataset(str(dataset), "paragraphs", split="train")
        self.by_body = {r["body"]: r["annotations"] for r in rows}

    def __call__(self, request: Request) -> Reply:
        user = request.message("user")
        body = re.search(
            re.escape(TARGET_START) + r"\n\n(.*?)\n\n" + re.escape(TARGET_END), user, re.DOTALL
        ).group(1)
        if "one block, on your single most important point" in user:
            return Reply('Quote: "words that appear nowhere in it"\nComment: Expand this.')
        blocks = []
        for a in self.by_body[body]:
            span = resolve_span(body, a["start"], a["end"])
            if span is not None:
                quote = " ".join(body[span[0] : span[1]].split())
                comment = reference_text(a) or "Good."  # a bare generic highlight
                blocks.append(f'Quote: "{quote}"\nComment: {comment}')
        return Reply("\n\n".join(blocks))


def test_anchored_generate_evaluate_report(sample_dataset: Path, tmp_path: Path) -> None:
    runs, results = tmp_path / "runs", tmp_path / "results"
    configs = ["v1-guided-rubric-zs-anchored", "v2-guided-rubric-zs-anchored"]
    with FakeOpenAIServer(responder=AnchoredLLM(sample_dataset)) as server:
        args = base_args(sample_dataset, runs, server.base_url, configs) + ["--limit", "12"]
        assert main(args) == 0
    v1_rows = [json.loads(x) for x in (runs / f"{configs[0]}__{MODEL}.jsonl").open()]
    v2_rows = [json.loads(x) for x in (runs / f"{configs[1]}__{MODEL}.jsonl").open()]
    items = [i for r in v1_rows for i in r["items"]]
    assert items and all(i["match"] in ("exact", "normalized") for i in items)
    assert all(r["feedback"] == "\n".join(i["comment"] for i in r["items"]) for r in v1_rows)
    assert all(not r["format_ok"] and r["items"][0]["start"] == -1 for r in v2_rows)
    assert all("quote not found" in r["format_problems"][0] for r in v2_rows)

    args = ["evaluate", str(runs), "--out", str(results), "--data", str(sample_dataset)]
    assert main(args + SCORING) == 0
    v1 = json.loads((results / f"{configs[0]}__{MODEL}.json").read_text())["anchored"]
    v2 = json.loads((results / f"{configs[1]}__{MODEL}.json").read_text())["anchored"]
    assert v1["located_rate"] == 1.0 and v2["located_rate"] == 0.0
    assert v1["span_precision"] == 1.0 and v2["span_f1"] == 0.0
    # Every unit at its own span (up to white space the quotes leave out): nearly full weight.
    assert 0.95 * v1["content_f1"] < v1["f1"] <= v1["content_f1"]
    assert v2["quotes"] == {"unlocated": len(v2_rows)}
    # The sample's drafts with a later stage: the hit spans' uptake is measured.
    assert v1["uptake"]["n_hit"] > 0 and v2["uptake"]["n_hit"] == 0
    assert 0 <= v1["uptake"]["uptake_hit"] <= 1

    assert main(["report", str(results)]) == 0
    report = (results / "report.md").read_text()
    assert "Span identification" in report and "anchored (quoted spans) vs not" in report
    with (results / "spans.csv").open() as handle:
        table = {r["configuration"]: r for r in csv.DictReader(handle)}
    assert float(table[configs[0]]["span_precision"]) == 1.0
    assert float(table[configs[1]]["located_rate"]) == 0.0
