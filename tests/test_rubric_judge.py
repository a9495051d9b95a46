"""The rubric judge against a real chat-completions server on 127.0.0.1: batching of items,
strict replies and retries, failures never scored 0, the shared cache, and the API key."""

from __future__ import annotations

import json
import logging
import math
import re

import evaluate
import pytest

from feedback_judges.errors import JudgeRequestError
from feedback_judges.judge import (
    JUDGE_SYSTEM,
    MODULE_PATH,
    RubricJudge,
    judge_feedback,
)
from feedback_judges.rubric import load_rubric
from sefora_llm.cache import CACHE_FILENAME
from tests.fake_openai_server import TEST_API_KEY, FakeOpenAIServer, Reply, Request

SECRET = TEST_API_KEY
MATH = load_rubric("math-feedback")
ESSAY = load_rubric("essay-feedback")
ITEM_LINE = re.compile(r"^I(\d+)\. (.*)$", flags=re.MULTILINE)

CONTEXT = {
    "question": "Simplify 36/168.",
    "correct_answer": "3/14",
    "student_answer": "18/84",
}
# What the fake judge answers, per feedback text and item id ("yes"/"no" to the question).
# For math-feedback, "correct" and "not_revealing" are satisfied by a "no".
ANSWERS = {
    "You stopped halving too early; divide by 6 again.": {
        "correct": "no",
        "not_revealing": "no",
        "suggestion": "yes",
        "diagnostic": "yes",
        "positive": "no",
    },  # satisfied: correct, not_revealing, suggestion, diagnostic -> 4/5
    "Great effort! The answer is 3/14.": {
        "correct": "no",
        "not_revealing": "yes",
        "suggestion": "no",
        "diagnostic": "no",
        "positive": "yes",
    },  # satisfied: correct, positive -> 2/5
    "Great effort! You divided wrongly, 36/168 is 1/4.": {
        "correct": "yes",
        "not_revealing": "no",
        "suggestion": "yes",
        "diagnostic": "yes",
        "positive": "yes",
    },  # incorrect: the gate makes it 0 whatever the rest
}
EXPECTED = [0.8, 0.4, 0.0]


def parse_request(request: Request) -> tuple[str, list[tuple[str, str]]]:
    """The feedback and the (label, question) items of a judge request."""
    user = request.message("user")
    feedback = user.split("## Feedback to check\n", 1)[1].split("\n\n## Checklist", 1)[0]
    return feedback, [(f"I{n}", q) for n, q in ITEM_LINE.findall(user)]


def item_id(question: str) -> str:
    return next(i.id for i in (*MATH.items, *ESSAY.items) if i.question == question)


def answer(request: Request, drop: str | None = None) -> Reply:
    """The scripted verdicts, reasons naming the item; ``drop`` leaves a label out."""
    feedback, items = parse_request(request)
    verdicts = ANSWERS.get(feedback, {})
    body = {
        label: {"reason": f"about {item_id(q)}", "answer": verdicts.get(item_id(q), "yes")}
        for label, q in items
        if label != drop
    }
    return Reply(json.dumps(body))


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=answer) as srv:
        yield srv


FEEDBACK = list(ANSWERS)


@pytest.mark.parametrize("batch_size, per_feedback", [(2, 3), (5, 1), (20, 1), (1, 5)])
def test_scores_batches_and_protocol(server, llm, batch_size, per_feedback):
    result = judge_feedback(
        FEEDBACK, [CONTEXT] * 3, "math-feedback", batch_size=batch_size, return_details=True, **llm
    )
    assert result["scores"] == pytest.approx(EXPECTED)
    assert result["score"] == pytest.approx(sum(EXPECTED) / 3)
    assert server.request_count == 3 * per_feedback
    asked = []
    for request in server.requests:
        feedback, items = parse_request(request)
        assert len(items) <= batch_size
        assert request.json["model"] == "fake-judge" and request.json["temperature"] == 0
        assert request.headers["authorization"] == f"Bearer {SECRET}"
        assert request.message("system") == JUDGE_SYSTEM.format(task=MATH.task)
        assert "## Question\nSimplify 36/168." in request.message("user")
        asked += [(feedback, item_id(q)) for _, q in items]
    assert sorted(asked) == sorted((f, i.id) for f in FEEDBACK for i in MATH.items)
    first = result["details"][0]
    assert first["satisfied"] == {
        "correct": True,
        "not_revealing": True,
        "suggestion": True,
        "diagnostic": True,
        "positive": False,
    }
    assert first["reasons"]["diagnostic"] == "about diagnostic"  # every reason is kept
    assert first["error"] is None
    # Dimension scores are plain fractions; the gate zeroes only the overall score.
    assert result["details"][2]["dimension_scores"] == {"correctness": 0.0, "alignment": 1.0}
    assert result["item_rates"]["positive"] == pytest.approx(2 / 3)
    assert result["config"]["rubric"] == "math-feedback" and SECRET not in json.dumps(result)


def test_weights_and_optional_context(server, llm, tmp_path):
    custom = {
        "name": "weighted",
        "description": "two items, one weighing three times the other",
        "task": "Feedback on an essay.",
        "context": [{"name": "essay", "title": "Essay"}],
        "items": [
            {"id": "a", "dimension": "d", "weight": 3, "question": ESSAY.items[0].question},
            {"id": "b", "dimension": "d", "weight": 1, "question": ESSAY.items[1].question},
        ],
    }
    ANSWERS["Name a strength only."] = {"coverage_strength": "yes", "coverage_weakness": "no"}
    try:
        result = judge_feedback(["Name a strength only."], [{"essay": "E."}], custom, **llm)
    finally:
        del ANSWERS["Name a strength only."]
    assert result["score"] == pytest.approx(0.75)
    # The essay rubric's optional prompt: shown when given, absent otherwise.
    judge_feedback(["Fine."], [{"essay": "Text.", "prompt": "Argue."}], "essay-feedback", **llm)
    assert "## Assignment prompt\nArgue." in server.requests[-1].message("user")
    judge_feedback(["Fine."], [{"essay": "Text."}], "essay-feedback", **llm)
    assert "Assignment prompt" not in server.requests[-1].message("user")


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param("The feedback seems fine.", id="not-json"),
        pytest.param('{"I1": {"reason": "x", "answer": "yes"}', id="truncated"),
        pytest.param('{"I1": {"reason": "x", "answer": "maybe"}}', id="not-yes-no"),
        pytest.param('{"I1": {"answer": "yes"}}', id="no-reason"),
        pytest.param('{"I1": "yes"}', id="bare-answer"),
        pytest.param('{"I1": {"reason": "x", "answer": "yes"}, "I2": {}}', id="unknown-item"),
    ],
)
def test_malformed_reply_is_retried(server, llm, bad):
    server.push(Reply(bad))
    custom = MATH.to_dict() | {"items": MATH.to_dict()["items"][:1]}
    result = judge_feedback([FEEDBACK[0]], [CONTEXT], custom, **llm)
    assert result["scores"] == [1.0]  # "correct" satisfied: 1/1
    assert server.request_count == 2


def test_missing_item_retried_then_failure_reported_never_zero(server, llm, caplog):
    server.responder = lambda request: answer(request, drop="I2")
    with caplog.at_level(logging.WARNING), pytest.raises(JudgeRequestError) as caught:
        judge_feedback([FEEDBACK[0]], [CONTEXT], "math-feedback", **llm)
    message = str(caught.value)
    assert message.startswith("example 0: rubric request (math-feedback, 5 items) failed")
    assert "after 3 attempts" in message and "items missing: ['I2']" in message
    assert server.request_count == 3
    assert SECRET not in message and SECRET not in caplog.text

    server.reset()
    server.responder = lambda request: answer(
        request, drop="I2" if parse_request(request)[0] == FEEDBACK[1] else None
    )
    result = judge_feedback(
        FEEDBACK[:2], [CONTEXT] * 2, "math-feedback", on_error="skip", return_details=True, **llm
    )
    assert result["scores"] == [pytest.approx(0.8), None]
    assert result["n_examples"] == 1 and result["n_failed"] == 1
    assert result["score"] == pytest.approx(0.8)  # the failure is left out, not counted as 0
    assert result["details"][1]["score"] is None and result["details"][1]["satisfied"] is None
    assert set(result["details"][1]) == set(result["details"][0])
    assert "items missing" in result["details"][1]["error"]

    server.responder = lambda request: answer(request, drop="I1")
    nothing = judge_feedback([FEEDBACK[2]], [CONTEXT], "math-feedback", on_error="skip", **llm)
    assert nothing["score"] is None and nothing["scores"] == [None]
    assert all(v is None for v in nothing["dimension_scores"].values())


def test_http_errors_and_the_key_never_leak(server, llm, caplog):
    server.push(
        Reply.error(500, f"upstream echoed {SECRET}"),
        Reply.error(429, "slow down", retry_after=0),
    )
    with caplog.at_level(logging.DEBUG):
        result = judge_feedback(FEEDBACK[:1], [CONTEXT], "math-feedback", **llm)
    assert result["scores"] == [pytest.approx(0.8)]
    assert server.request_count == 3
    assert SECRET not in caplog.text and "[REDACTED]" in caplog.text
    server.reset()
    server.responder = lambda request: Reply.error(401, f"bad key {SECRET}")
    with pytest.raises(JudgeRequestError) as caught:
        judge_feedback(FEEDBACK[1:2], [CONTEXT], "math-feedback", use_cache=False, **llm)
    assert server.request_count == 1  # a 401 is not retried
    assert "HTTP 401" in str(caught.value) and SECRET not in str(caught.value)


def test_cache_second_run_sends_nothing_and_is_shared(server, llm, tmp_path):
    judge = RubricJudge("math-feedback", batch_size=2, **llm)
    first = judge.compute(FEEDBACK, [CONTEXT] * 3)
    sent = server.request_count
    assert sent == 9
    again = judge.compute(FEEDBACK, [CONTEXT] * 3)
    assert server.request_count == sent and again == first
    assert (tmp_path / "cache" / CACHE_FILENAME).is_file()  # UniMatch's cache file
    # Duplicate inputs are asked once; a changed weight needs no new answer; a changed
    # question is asked again, for that item only.
    judge.compute([FEEDBACK[0]] * 4, [CONTEXT] * 4)
    assert server.request_count == sent
    edited = MATH.to_dict()
    edited["items"][4] = edited["items"][4] | {"weight": 2.0}
    assert RubricJudge(edited, **llm).compute(FEEDBACK[:1], [CONTEXT])["scores"] == [
        pytest.approx(4 / 6)
    ]
    assert server.request_count == sent
    edited["items"][4]["question"] = "Is the feedback kind to the student?"
    server.responder = lambda request: Reply(
        json.dumps({"I1": {"reason": "kind enough", "answer": "yes"}})
    )
    assert RubricJudge(edited, **llm).compute(FEEDBACK[:1], [CONTEXT])["scores"] == [1.0]
    assert server.request_count == sent + 1  # the new question only
    assert "I2." not in server.requests[-1].message("user")


def test_failures_are_not_cached(server, llm):
    server.responder = lambda request: Reply("no JSON here")
    with pytest.raises(JudgeRequestError):
        judge_feedback(FEEDBACK[:1], [CONTEXT], "math-feedback", **llm)
    server.responder = answer
    before = server.request_count
    assert judge_feedback(FEEDBACK[:1], [CONTEXT], "math-feedback", **llm)["scores"] == [
        pytest.approx(0.8)
    ]
    assert server.request_count == before + 1


def test_bad_inputs(llm):
    with pytest.raises(ValueError, match=r"contexts\[0\]: rubric 'math-feedback' needs context"):
        judge_feedback(["Hi."], [{"question": "q", "correct_answer": "a"}], "math-feedback", **llm)
    with pytest.raises(ValueError, match=r"contexts\[1\]: unknown context field\(s\) \['esay'\]"):
        judge_feedback(["a", "b"], [{"essay": "e"}, {"esay": "e"}], **llm)
    with pytest.raises(ValueError, match="same length"):
        judge_feedback(["a", "b"], [{"essay": "e"}], **llm)
    with pytest.raises(ValueError, match=r"feedback\[0\] must be a non-empty string"):
        judge_feedback([" "], [{"essay": "e"}], **llm)
    with pytest.raises(TypeError, match="unknown rubric judge option"):
        RubricJudge("math-feedback", threshold=2)
    with pytest.raises(ValueError, match="on_error"):
        RubricJudge("math-feedback", on_error="ignore")


def test_evaluate_module(server, llm, tmp_path):
    path = MODULE_PATH
    options = {k: v for k, v in llm.items() if k != "cache_dir"}
    metric = evaluate.load(path, "math-feedback", cache_dir=str(tmp_path / "ev"), **options)
    assert metric.name == "rubric_judge"
    out = metric.compute(predictions=FEEDBACK, references=[CONTEXT] * 3)
    assert out["scores"] == pytest.approx(EXPECTED)
    assert (tmp_path / "ev" / CACHE_FILENAME).is_file()  # evaluate's cache_dir holds the cache
    metric.add_batch(predictions=FEEDBACK[:2], references=[CONTEXT] * 2)
    metric.add(prediction=FEEDBACK[2], reference=CONTEXT | {"solution": "Divide by 12."})
    assert metric.compute()["scores"][:2] == pytest.approx(EXPECTED[:2])
    essay = evaluate.load(path, cache_dir=str(tmp_path / "ev"), **options)
    assert essay.config_name == "default"
    result = essay.compute(predictions=["Fine."], references=[{"essay": "Text."}])
    assert result["config"]["rubric"] == "essay-feedback"
    # The fake says "yes" to all 16 items: the 5 satisfied by a "no" fail.
    assert math.isclose(result["score"], 11 / 16)
