"""UniMatch's LLM backends against a real chat-completions server on 127.0.0.1: batching,
strict parsing and retries, HTTP errors, Retry-After, timeouts, concurrency, cache, and
the API key never leaking."""

from __future__ import annotations

import json
import logging
import math
import random
import re
import threading
import time

import pytest

import unimatch_metric
from tests.fake_openai_server import TEST_API_KEY, FakeOpenAIServer, Reply, Request
from unimatch_metric import UniMatchError
from unimatch_metric.prompts import SCORE_SYSTEM, SEGMENT_SYSTEM, UNIT_DELIMITER
from unimatch_metric.segmenters.rules import split_rules

SECRET = TEST_API_KEY
PAIR_BLOCK = re.compile(r"^Pair (\S+)\nA: (.*)\nB: (.*)$", flags=re.MULTILINE)


def pairs_in(request: Request) -> list[tuple[str, str, str]]:
    """The (label, A, B) pairs of a scoring request."""
    return [
        (label, json.loads(a), json.loads(b))
        for label, a, b in PAIR_BLOCK.findall(request.message("user"))
    ]


def toy_score(a: str, b: str) -> int:
    """A deterministic 'judge': shared words, capped at 4."""
    return min(4, len(set(a.lower().split()) & set(b.lower().split())))


def fake_model(request: Request, shuffle: bool = True) -> Reply:
    """Answers segmentation requests with rule-based delimiters, scoring ones with toy_score."""
    system = request.message("system")
    if system == SEGMENT_SYSTEM:
        text = request.message("user").split("\n", 1)[1]
        return Reply(f" {UNIT_DELIMITER} ".join(split_rules(text)) or text)
    assert system == SCORE_SYSTEM
    labelled = pairs_in(request)
    if shuffle:
        random.Random(len(labelled)).shuffle(labelled)
    return Reply(json.dumps({label: toy_score(a, b) for label, a, b in labelled}))


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=fake_model) as srv:
        yield srv


def make_pairs(n: int) -> list[tuple[str, str]]:
    return [(f"unit {i} about the thesis", f"point {i} about the thesis claim") for i in range(n)]


@pytest.mark.parametrize("n, batch_size", [(23, 5), (10, 10), (1, 50), (51, 50)])
def test_batching_request_count_and_protocol(server, llm, n, batch_size):
    pairs = make_pairs(n)
    scores = unimatch_metric.score_pairs(pairs, scorer="llm", batch_size=batch_size, **llm)
    assert scores == [float(toy_score(a, b)) for a, b in pairs]
    assert server.request_count == math.ceil(n / batch_size)
    sent = [pair for request in server.requests for pair in pairs_in(request)]
    assert sorted((a, b) for _, a, b in sent) == sorted(pairs)  # each pair sent once
    for request in server.requests:
        assert request.path == "/v1/chat/completions"
        assert request.json["model"] == "fake-judge"
        assert request.json["temperature"] == 0
        assert len(pairs_in(request)) <= batch_size
        assert request.headers["authorization"] == f"Bearer {SECRET}"


def test_reply_order_does_not_matter(server, llm):
    pairs = [(f"a{i}", f"b{i}") for i in range(8)]
    wanted = [4, 0, 3, 1, 2, 4, 0, 1]

    def reversed_reply(request: Request) -> Reply:
        labelled = pairs_in(request)
        scores = {label: wanted[int(a[1:])] for label, a, _ in reversed(labelled)}
        return Reply(json.dumps(scores))

    server.responder = reversed_reply
    assert unimatch_metric.score_pairs(pairs, scorer="llm", batch_size=8, **llm) == wanted


def one_batch_reply(server: FakeOpenAIServer, n: int, edit) -> Reply:
    """A reply to the n-pair batch P1..Pn, altered by ``edit(dict) -> str``."""
    return Reply(edit({f"P{i + 1}": 2 for i in range(n)}))


@pytest.mark.parametrize(
    "bad_reply",
    [
        pytest.param('{"P1": 2, "P2": 2}', id="missing-label"),
        pytest.param('{"P1": 2, "P2": 2, "P3": 1, "P3": 1}', id="duplicated-label"),
        pytest.param('{"P1": 2, "P2": 2, "P3": 1, "P9": 0}', id="unknown-label"),
        pytest.param('{"P1": 5, "P2": 2, "P3": 1}', id="above-4"),
        pytest.param('{"P1": -1, "P2": 2, "P3": 1}', id="negative"),
        pytest.param('{"P1": 2.5, "P2": 2, "P3": 1}', id="not-integer"),
        pytest.param('{"P1": "3", "P2": 2, "P3": 1}', id="string"),
        pytest.param('{"P1": true, "P2": 2, "P3": 1}', id="boolean"),
        pytest.param("P1: 2, P2: 2, P3: 1", id="not-json"),
        pytest.param("[2, 2, 1]", id="json-list"),
        pytest.param("", id="empty"),
    ],
)
def test_malformed_reply_is_retried(server, llm, bad_reply):
    server.push(Reply(bad_reply))
    pairs = make_pairs(3)
    scores = unimatch_metric.score_pairs(pairs, scorer="llm", **llm)
    assert scores == [float(toy_score(a, b)) for a, b in pairs]
    assert server.request_count == 2


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("this is not json", id="not-json-body"),
        pytest.param({"object": "chat.completion"}, id="no-choices"),
        pytest.param({"choices": [{"message": {"content": None}}]}, id="null-content"),
        pytest.param([1, 2], id="list-body"),
    ],
)
def test_invalid_completion_body_is_retried(server, llm, body):
    server.push(Reply(body=body))
    assert len(unimatch_metric.score_pairs(make_pairs(2), scorer="llm", **llm)) == 2
    assert server.request_count == 2


def test_code_fenced_reply_is_accepted(server, llm):
    server.push(Reply('```json\n{"P2": 1, "P1": 3}\n```'))
    assert unimatch_metric.score_pairs(make_pairs(2), scorer="llm", **llm) == [3.0, 1.0]
    assert server.request_count == 1


def test_server_errors_are_retried_then_succeed(server, llm):
    server.push(Reply.error(500), Reply.error(503))
    scores = unimatch_metric.score_pairs(make_pairs(2), scorer="llm", **llm)
    assert len(scores) == 2
    assert server.request_count == 3


def test_persistent_failure_raises_with_reason(server, llm):
    server.push(*[Reply.error(500, "overloaded")] * 3)
    with pytest.raises(UniMatchError, match=r"after 3 attempts.*HTTP 500: overloaded") as info:
        unimatch_metric.score_pairs(make_pairs(2), scorer="llm", **llm)
    assert server.request_count == 3  # max_retries=2 -> 3 attempts, no more
    assert "fake-judge" in str(info.value) and server.base_url in str(info.value)


def test_client_error_is_not_retried_and_key_is_redacted(server, llm):
    # Like OpenAI's own 401, the server's message quotes the key it was sent.
    server.push(Reply.error(401, f"Incorrect API key provided: {SECRET}"))
    with pytest.raises(UniMatchError, match="HTTP 401") as info:
        unimatch_metric.score_pairs(make_pairs(2), scorer="llm", **llm)
    assert server.request_count == 1
    assert SECRET not in str(info.value)
    assert "[REDACTED]" in str(info.value)
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_429_retry_after_is_honoured(server, llm):
    server.push(Reply.error(429, "slow down", retry_after=1))
    start = time.monotonic()
    unimatch_metric.score_pairs(make_pairs(2), scorer="llm", **llm)
    assert server.request_count == 2
    first, second = server.requests
    # The backoff is 0.01 s: only the Retry-After header explains a wait of a second.
    assert second.received_at - first.received_at >= 1.0
    assert time.monotonic() - start < 5


def test_slow_reply_hits_timeout_then_retry_succeeds(server, llm):
    good = json.dumps({"P1": 4, "P2": 4})
    server.push(Reply(good, delay=2.0))
    start = time.monotonic()
    scores = unimatch_metric.score_pairs(
        make_pairs(2), scorer="llm", **{**llm, "request_timeout": 0.4}
    )
    elapsed = time.monotonic() - start
    assert server.request_count == 2
    assert scores == [float(toy_score(a, b)) for a, b in make_pairs(2)]  # the fresh reply
    assert 0.4 <= elapsed < 2.0


def test_timeouts_exhausted_raise(server, llm):
    server.push(*[Reply("{}", delay=1.0)] * 2)
    with pytest.raises(UniMatchError, match="timeout"):
        unimatch_metric.score_pairs(
            make_pairs(1), scorer="llm", **{**llm, "request_timeout": 0.2, "max_retries": 1}
        )
    assert server.request_count == 2


def test_concurrency_limit(server, llm):
    in_flight = 0
    peak = 0
    lock = threading.Lock()

    def slow(request: Request) -> Reply:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.15)
        with lock:
            in_flight -= 1
        return fake_model(request)

    server.responder = slow
    unimatch_metric.score_pairs(make_pairs(12), scorer="llm", batch_size=2, concurrency=2, **llm)
    assert server.request_count == 6
    assert peak == 2


PREDICTIONS = [
    "The thesis is clear, but the evidence for the thesis is thin. Add a source.",
    "Great imagery in the opening lines.",
]
REFERENCES = [
    ["Your thesis is clear.", "Where is the evidence for the thesis? Cite a source."],
    ["Great imagery here!"],
]


def test_end_to_end_llm_and_cache(server, llm):
    first = unimatch_metric.unimatch(PREDICTIONS, REFERENCES, return_details=True, **llm)
    # auto -> llm because a model and endpoint are configured.
    assert first["config"]["scorer"] == {
        "name": "llm",
        "model": "fake-judge",
        "base_url": server.base_url,
    }
    assert first["config"]["segmenter"]["name"] == "llm"
    texts = {PREDICTIONS[0], PREDICTIONS[1], *REFERENCES[0], *REFERENCES[1]}
    segment_requests = [r for r in server.requests if r.message("system") == SEGMENT_SYSTEM]
    assert len(segment_requests) == len(texts)
    n_pairs = sum(len(d["reference_units"]) * len(d["prediction_units"]) for d in first["details"])
    assert server.request_count == len(texts) + math.ceil(n_pairs / 50)
    # Units follow the rule-based cuts the fake model returned; scores its toy judge.
    assert first["details"][0]["prediction_units"] == split_rules(PREDICTIONS[0])
    d = first["details"][1]
    assert d["scores"] == [[float(toy_score(d["reference_units"][0], d["prediction_units"][0]))]]

    before = server.request_count
    second = unimatch_metric.unimatch(PREDICTIONS, REFERENCES, return_details=True, **llm)
    assert server.request_count == before  # everything came from the cache
    assert second == first


def test_skip_drops_failed_example_and_never_scores_it_zero(server, llm):
    def fail_on_imagery(request: Request) -> Reply:
        if request.message("system") == SCORE_SYSTEM and "imagery" in request.message("user"):
            return Reply.error(500, "cannot score this")
        return fake_model(request)

    server.responder = fail_on_imagery
    opts = {**llm, "segmenter": "rules", "batch_size": 1, "max_retries": 1}
    skipped = unimatch_metric.unimatch(
        PREDICTIONS, REFERENCES, on_error="skip", return_details=True, **opts
    )
    alone = unimatch_metric.unimatch(PREDICTIONS[:1], REFERENCES[:1], **opts)
    assert skipped["n_failed"] == 1 and skipped["n_examples"] == 1
    for key in ("precision", "recall", "f1", "micro_f1", "mean_predicted_units"):
        assert skipped[key] == alone[key]
    assert skipped["details"][1]["error"].startswith("similarity request")
    assert skipped["details"][1]["f1"] is None
    with pytest.raises(UniMatchError, match=r"^example 1: similarity request .*HTTP 500"):
        unimatch_metric.unimatch(PREDICTIONS, REFERENCES, **opts)


def test_all_failed_gives_no_figures(server, llm):
    server.responder = lambda request: Reply.error(500)
    out = unimatch_metric.unimatch(
        PREDICTIONS, REFERENCES, on_error="skip", **{**llm, "max_retries": 0}
    )
    assert out["n_examples"] == 0 and out["n_failed"] == 2
    assert out["f1"] is None and out["precision"] is None


def test_llm_segmentation_verified_and_retried(server, llm):
    text = "Strong start, but the ending drags on too long."
    server.push(
        Reply("Strong start, <SEP> but the ending drags on too long!"),  # altered text
        Reply("Strong start,\n<SEP>\nbut the ending   drags on too long."),
    )
    units = unimatch_metric.segment([text], segmenter="llm", **llm)
    assert units == [["Strong start,", "but the ending drags on too long."]]
    assert server.request_count == 2
    # Cached: no new request, even through the public function.
    assert unimatch_metric.segment([text], segmenter="llm", **llm) == units
    assert server.request_count == 2


def test_llm_segmentation_failure_and_delimiter_in_text(server, llm):
    server.responder = lambda request: Reply("something else entirely")
    with pytest.raises(UniMatchError, match="give back the input text"):
        unimatch_metric.segment(["Fine."], segmenter="llm", **llm)
    assert server.request_count == 3
    server.reset()
    with pytest.raises(UniMatchError, match="unit delimiter"):
        unimatch_metric.segment([f"a {UNIT_DELIMITER} b"], segmenter="llm", **llm)
    assert server.request_count == 0
    assert unimatch_metric.segment(["", "  "], segmenter="llm", **llm) == [[], []]
    assert server.request_count == 0


def test_api_key_never_leaks(server, llm, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    server.push(
        Reply.error(429, f"rate limited for {SECRET}", retry_after=0),
        Reply.error(500, f"boom {SECRET}"),
        Reply("not json"),
    )
    result = unimatch_metric.unimatch(PREDICTIONS, REFERENCES, return_details=True, **llm)
    server.responder = lambda request: Reply.error(502, f"bad gateway for key {SECRET}")
    with pytest.raises(UniMatchError) as info:
        unimatch_metric.unimatch(["A new text."], [["Another one."]], **llm)
    assert server.request_count > 5
    out = capsys.readouterr()
    haystacks = [
        caplog.text,
        out.out,
        out.err,
        json.dumps(result),
        str(info.value),
        repr(info.value),
        repr(unimatch_metric.UniMatch(**llm).options),
    ]
    assert "retrying" in caplog.text  # the retries were logged ...
    for text in haystacks:
        assert SECRET not in text  # ... without the key


def test_missing_model_or_key_is_a_clear_error(monkeypatch, tmp_path):
    for var in (
        "UNIMATCH_MODEL",
        "UNIMATCH_BASE_URL",
        "UNIMATCH_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(UniMatchError, match="needs a model name"):
        unimatch_metric.score_pairs([("a", "b")], scorer="llm", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(UniMatchError, match="no API key"):
        unimatch_metric.score_pairs([("a", "b")], scorer="llm", model="m")


def test_client_for_free_text_with_params_and_usage(server):
    from sefora_llm.client import LLMClient, LLMSettings

    client = LLMClient(LLMSettings(model="gen", base_url=server.base_url, api_key=SECRET))
    server.push(Reply("Consider a clearer topic sentence."))
    reply = client.complete(
        [{"role": "user", "content": "Give feedback."}], lambda r: r, "generation", max_tokens=7
    )
    assert reply.text == "Consider a clearer topic sentence."
    assert (reply.prompt_tokens, reply.completion_tokens) == (1, 1)  # the server's usage
    assert reply.seconds >= 0
    (request,) = server.requests
    assert request.json["max_tokens"] == 7 and request.json["temperature"] == 0
    assert client.config == {"model": "gen", "base_url": server.base_url}
    assert SECRET not in repr(client.settings)
