"""The Space app's logic without a browser: input checks, the offline run, the LLM path
against a real chat-completions server on 127.0.0.1 (good key, wrong key, unreachable and
slow endpoints), the API key never shown, and the pre-filled examples."""

from __future__ import annotations

import importlib.util
import json
import logging
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import unimatch_metric
from tests.fake_openai_server import FakeOpenAIServer, Reply, Request
from tests.test_demo_explain import Tags
from unimatch_metric.prompts import SCORE_SYSTEM, SEGMENT_SYSTEM, UNIT_DELIMITER

pytest.importorskip("gradio", reason="the demo needs the 'demo' extra (gradio)")

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "unimatch_metric" / "unimatch" / "app.py"
SAMPLE = REPO / "sefora_dataset" / "sample" / "SEFORA-sample"
SHARED_CORPUS = REPO.parent / "shared" / "data" / "SEFORA"
SECRET = "sk-demo-SECRET-4c1e9a7b2d"
COMMENTS = "Cut 'In conclusion'.\n\n'a lot' is two words.\n"
FEEDBACK = "Drop 'In conclusion'. Say more about the sock."


@pytest.fixture(scope="module")
def app():
    spec = importlib.util.spec_from_file_location("unimatch_space_app", APP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pytestmark = pytest.mark.usefixtures("private_cache")


def word_overlap_judge(request: Request) -> Reply:
    """A deterministic model: sentence-level segmentation; shared words as the score."""
    if request.message("system") == SEGMENT_SYSTEM:
        text = request.message("user").split("\n", 1)[1]
        return Reply(text.replace(". ", f". {UNIT_DELIMITER} "))
    assert request.message("system") == SCORE_SYSTEM
    user = request.message("user")
    scores = {}
    for block in user.split("\n\nPair ")[1:]:
        label, a, b = block.split("\n")[:3]
        shared = set(json.loads(a[3:]).lower().split()) & set(json.loads(b[3:]).lower().split())
        scores[label] = min(4, len(shared))
    return Reply(json.dumps(scores))


def needs_key(request: Request) -> Reply:
    """The endpoint's answer: 401 unless the request carries SECRET."""
    if request.headers.get("authorization") != f"Bearer {SECRET}":
        return Reply.error(401, "Incorrect API key provided")
    return word_overlap_judge(request)


def form(app, **fields):
    """The handler's arguments: offline defaults, overridden by ``fields``."""
    values = {
        "paragraph": "",
        "comments": COMMENTS,
        "feedback": FEEDBACK,
        "scorer": app.OFFLINE,
        "base_url": "",
        "model": "",
        "api_key": "",
        "use_threshold": False,
        "tau": 3,
    }
    return {**values, **fields}


def error_of(outputs) -> str | None:
    """The error message in the page, checking that every result view is cleared."""
    status = Tags(outputs[0])
    box = status.with_class("um-status-error")
    if not box:
        return None
    assert outputs[1:] == ("", "", "", "")
    assert "Traceback" not in outputs[0]
    return " ".join(status.text)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"feedback": "  "}, "Paste the model's feedback"),
        ({"comments": "\n \n"}, "at least one instructor comment"),
        ({"comments": "x\n" * 21}, "At most 20 instructor comments"),
        ({"feedback": "word " * 1000}, "too long"),
        ({"scorer": "LLM endpoint (OpenAI-compatible)", "model": " "}, "Give the model name"),
        ({"use_threshold": True, "tau": 0}, "Invalid input: threshold must be in (0, 4]"),
        ({"scorer": "LLM endpoint (OpenAI-compatible)", "model": "m"}, "Give your API key"),
    ],
)
def test_bad_input_is_a_message_in_the_page(app, fields, message):
    assert message in error_of(app.score_paragraph(**form(app, **fields)))


def test_offline_run_matches_the_library(app):
    outputs = app.score_paragraph(**form(app, paragraph="A paragraph.", use_threshold=True))
    assert error_of(outputs) is None
    expected = unimatch_metric.unimatch(
        [FEEDBACK],
        [["Cut 'In conclusion'.", "'a lot' is two words."]],
        segmenter="offline",
        scorer="offline",
        paragraphs=["A paragraph."],
        threshold=3.0,
        return_details=True,
    )
    detail = expected["details"][0]
    status, figures, alignment, matrix, units = outputs
    assert "scored by " + expected["config"]["scorer"]["name"] in status
    zeroed = len(detail["off_paragraph_units"])
    assert f"Checked against the paragraph: {zeroed} unit(s) about another text" in status
    f1 = next(a for _, a in Tags(figures).tags if a.get("id") == "um-f1")
    assert float(f1["data-value"]) == expected["f1"]
    assert "(score ≥ 3)" in figures
    cells = [float(c["data-score"]) for c in Tags(matrix).with_class("um-cell")]
    assert cells == pytest.approx([s for row in detail["scores"] for s in row])
    unit_text = " ".join(Tags(units).text)
    for unit in detail["prediction_units"] + detail["reference_units"]:
        assert unit in unit_text
    kinds = [r["data-kind"] for r in Tags(alignment).with_class("um-row")]
    assert kinds.count("matched") == len(detail["matches"])


def test_llm_endpoint_with_a_good_key(app):
    with FakeOpenAIServer(responder=needs_key) as server:
        fields = form(
            app,
            scorer=app.LLM,
            base_url=server.base_url,
            model="fake-judge",
            api_key=SECRET,
            use_threshold=True,
            tau=1,
        )
        outputs = app.score_paragraph(**fields)
        first_run = server.request_count
        again = app.score_paragraph(**fields)
    assert error_of(outputs) is None
    assert "Segmented by llm (fake-judge); scored by llm (fake-judge)." in outputs[0]
    # 3 texts to segment, 1 scoring batch; the second run asks again (no cached answer
    # stands in for a key that may be wrong).
    assert first_run == 4 and server.request_count == 2 * first_run
    assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in server.requests)
    units = " ".join(Tags(outputs[4]).text)
    assert "Drop 'In conclusion'." in units and "Say more about the sock." in units
    assert "recovered" in outputs[1]
    for output in outputs + again:
        assert SECRET not in output


def test_wrong_key_is_a_message_and_the_key_is_never_shown_or_logged(app, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    wrong = "sk-wrong-key-0123456789abcdef"
    with FakeOpenAIServer(responder=needs_key) as server:
        outputs = app.score_paragraph(
            **form(app, scorer=app.LLM, base_url=server.base_url, model="m", api_key=wrong)
        )
    message = error_of(outputs)
    assert message.startswith("The LLM endpoint failed")
    assert "HTTP 401" in message and "Incorrect API key" in message
    assert server.request_count >= 1
    captured = capsys.readouterr()
    for text in (*outputs, caplog.text, captured.out, captured.err):
        assert wrong not in text


def test_server_environment_never_supplies_endpoint_or_key(app, monkeypatch):
    """A visitor's endpoint must not receive the Space owner's key from the environment."""
    owner_key = "sk-owner-SECRET-from-env"
    monkeypatch.setenv("OPENAI_API_KEY", owner_key)
    monkeypatch.setenv("UNIMATCH_API_KEY", owner_key)
    monkeypatch.setenv("UNIMATCH_BASE_URL", "http://127.0.0.1:9/v1")
    with FakeOpenAIServer(responder=word_overlap_judge) as server:
        outputs = app.score_paragraph(
            **form(app, scorer=app.LLM, base_url=server.base_url, model="m", api_key="")
        )
    assert error_of(outputs) is None and server.request_count == 4
    assert all(owner_key not in r.headers["authorization"] for r in server.requests)
    options = app.backend_options(app.LLM, "", "m", "sk-typed", False, 3)
    assert options["base_url"] == app.OPENAI_URL and options["api_key"] == "sk-typed"


def test_unreachable_endpoint_fails_fast(app):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    start = time.monotonic()
    outputs = app.score_paragraph(
        **form(
            app, scorer=app.LLM, base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key=SECRET
        )
    )
    assert "connection failed" in error_of(outputs)
    assert time.monotonic() - start < 10


def test_slow_endpoint_hits_the_request_timeout(app, monkeypatch):
    monkeypatch.setattr(app, "REQUEST_TIMEOUT", 0.3)
    with FakeOpenAIServer(responder=lambda request: Reply("late", delay=2)) as server:
        start = time.monotonic()
        outputs = app.score_paragraph(
            **form(app, scorer=app.LLM, base_url=server.base_url, model="m", api_key=SECRET)
        )
        elapsed = time.monotonic() - start
    assert "timeout" in error_of(outputs)
    assert elapsed < 5  # two attempts of 0.3 s and a short backoff, not the 2 s replies


def test_overall_deadline_bounds_the_wait(app, monkeypatch):
    monkeypatch.setattr(app, "DEADLINE", 0.5)
    workers = ThreadPoolExecutor(max_workers=1)
    monkeypatch.setattr(app, "_WORKERS", workers)

    def slow_judge(request: Request) -> Reply:
        reply = word_overlap_judge(request)
        reply.delay = 1.0
        return reply

    with FakeOpenAIServer(responder=slow_judge) as server:
        start = time.monotonic()
        outputs = app.score_paragraph(
            **form(app, scorer=app.LLM, base_url=server.base_url, model="m", api_key=SECRET)
        )
        elapsed = time.monotonic() - start
        workers.shutdown(wait=True)  # the abandoned run ends on its own, within its timeouts
    assert "No result within 0.5 s" in error_of(outputs)
    assert elapsed < 2


def test_key_field_is_a_password_kept_out_of_examples(app):
    config = app.demo.config
    by_id = {c["id"]: c for c in config["components"]}
    key = next(c for c in config["components"] if c["props"].get("elem_id") == "um-api-key")
    assert key["props"]["type"] == "password" and not key["props"].get("value")
    dataset = next(c for c in config["components"] if c["type"] == "dataset")
    example_inputs = {by_id[i]["props"].get("elem_id") for i in dataset["props"]["component_ids"]}
    assert example_inputs == {"um-paragraph", "um-comments", "um-feedback"}


def test_examples_come_from_the_invented_sample_corpus(app):
    sample_paragraphs, sample_comments = set(), set()
    for path in SAMPLE.rglob("*.json"):
        for paragraph in json.loads(path.read_text(encoding="utf-8"))["paragraphs"]:
            sample_paragraphs.add(paragraph["body"])
            sample_comments.update(a["comment"] for a in paragraph["annotations"])
    assert len(app.EXAMPLES) >= 3
    for example in app.EXAMPLES:
        assert example["paragraph"] in sample_paragraphs
        assert example["comments"] and all(c.strip() for c in example["comments"])
        assert example["feedback"].strip()
    if SHARED_CORPUS.is_dir():  # and none of it is SEFORA text
        corpus = "\n".join(p.read_text(encoding="utf-8") for p in SHARED_CORPUS.rglob("*.json"))
        for example in app.EXAMPLES:
            for text in [example["paragraph"], example["feedback"], *example["comments"]]:
                if len(text) > 20:
                    assert json.dumps(text)[1:-1] not in corpus, text
