"""The gated reward against a chat-completions server on 127.0.0.1: the judge is asked about
exactly the completions the rule selects (band, top-k per group, every n steps, RLAES's
adaptive gate), the counts are reported (stats, TRL's log_metric and log_extra), and a
failing judge is counted, logged and falls back to the offline score. Also the plain
rewards: chat-message completions, figures, bad columns, the rubric judge's reward."""

from __future__ import annotations

import json
import logging
import re
from types import SimpleNamespace

import pytest

import unimatch_metric
from feedback_judges.errors import JudgeRequestError
from feedback_judges.rewards import RubricReward
from tests.fake_openai_server import TEST_API_KEY, FakeOpenAIServer, Reply, Request
from tests.test_unimatch_llm import pairs_in, toy_score
from unimatch_metric.errors import BackendError, UniMatchInputError
from unimatch_metric.prompts import SCORE_SYSTEM
from unimatch_metric.rewards import (
    Adaptive,
    Band,
    EveryN,
    GatedReward,
    TopK,
    UniMatchReward,
    completion_text,
)

PROMPTS = ["Comment on the laundromat paragraph.", "Comment on the sock paragraph."]
REFERENCES = {
    PROMPTS[0]: ["Describe the red sock in more detail."],
    PROMPTS[1]: ["Fix the comma splice in the second sentence."],
}
COMPLETIONS = {
    PROMPTS[0]: [
        "Describe the red sock in more detail.",
        "Describe the sock in detail.",
        "The red car is nice.",
        "Great title.",
    ],
    PROMPTS[1]: [
        "Fix the comma splice.",
        "Fix the second sentence.",
        "The comma is fine here.",
        "Lovely imagery throughout.",
    ],
}


def jaccard(pairs: list[tuple[str, str]]) -> list[float]:
    """An offline stand-in scorer: 4 x word-set Jaccard similarity."""
    out = []
    for a, b in pairs:
        x, y = set(a.lower().strip(".").split()), set(b.lower().strip(".").split())
        out.append(4 * len(x & y) / len(x | y))
    return out


def toy_scores(pairs: list[tuple[str, str]]) -> list[float]:
    return [float(toy_score(a, b)) for a, b in pairs]


def batch(prompts=PROMPTS, suffix: str = ""):
    """A GRPO-like batch: each prompt's group of completions, with its references column."""
    rows = [(p, c + suffix) for p in prompts for c in COMPLETIONS[p]]
    return {
        "prompts": [p for p, _ in rows],
        "completions": [c for _, c in rows],
        "references": [REFERENCES[p] for p, _ in rows],
    }


class Recorder:
    """TRL's log_metric and log_extra, recording what they are given."""

    def __init__(self) -> None:
        self.metrics: list[tuple[str, float]] = []
        self.extra: list[tuple[str, list]] = []

    def log_metric(self, name: str, value: float) -> None:
        self.metrics.append((name, value))

    def log_extra(self, column: str, values: list) -> None:
        self.extra.append((column, list(values)))


def judged_texts(server: FakeOpenAIServer) -> set[str]:
    """The model units of every scoring request the server received."""
    return {
        b for r in server.requests if r.message("system") == SCORE_SYSTEM for _, _, b in pairs_in(r)
    }


def toy_judge(request: Request) -> Reply:
    return Reply(json.dumps({label: toy_score(a, b) for label, a, b in pairs_in(request)}))


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=toy_judge) as srv:
        yield srv


@pytest.fixture
def rewards(llm, tmp_path):
    """The offline base reward and the LLM judge (rule-based units, LLM pair scores)."""
    base = UniMatchReward(segmenter="rules", scorer=jaccard, use_cache=False)
    judge = UniMatchReward(segmenter="rules", scorer="llm", **llm)
    return base, judge


def expected_judge(completions, references) -> list[float]:
    """What the judge gives, computed without the server (the toy scores as a callable)."""
    result = unimatch_metric.unimatch(
        completions, references, segmenter="rules", scorer=toy_scores, return_details=True
    )
    return [d["f1"] for d in result["details"]]


def test_band_judges_exactly_the_uncertain_completions(server, rewards):
    base, judge = rewards
    data = batch()
    offline = base(**data)
    rule = Band(0.2, 0.8)
    inside = [i for i, s in enumerate(offline) if 0.2 <= s <= 0.8]
    assert 0 < len(inside) < len(offline)  # the batch has both kinds
    gated = GatedReward(base, judge, rule)
    log = Recorder()
    values = gated(**data, log_metric=log.log_metric, log_extra=log.log_extra)
    assert judged_texts(server) == {data["completions"][i] for i in inside}
    judged = expected_judge(
        [data["completions"][i] for i in inside], [data["references"][i] for i in inside]
    )
    want = list(offline)
    for i, v in zip(inside, judged, strict=True):
        want[i] = v
    assert values == pytest.approx(want)
    assert gated.stats.as_dict() == {
        "calls": 1,
        "completions": 8,
        "judged": len(inside),
        "judge_failures": 0,
    }
    assert dict(log.metrics) == {
        "gate/judged": len(inside),
        "gate/judge_failures": 0,
        "gate/judged_total": len(inside),
    }
    assert log.extra == [("gate", ["judge" if i in inside else "base" for i in range(8)])]


def test_top_k_judges_the_best_of_each_group(server, rewards):
    base, judge = rewards
    data = batch()
    offline = base(**data)
    best = {max(range(g, g + 4), key=lambda i: offline[i]) for g in (0, 4)}
    gated = GatedReward(base, judge, TopK(1))
    values = gated(**data)
    assert judged_texts(server) == {data["completions"][i] for i in best}
    assert gated.stats.judged == 2
    for i in range(8):
        if i not in best:
            assert values[i] == offline[i]


def test_every_n_steps_follows_the_trainer_step(server, rewards):
    base, judge = rewards
    gated = GatedReward(base, judge, EveryN(2))
    requests_by_step = []
    for step in range(5):
        before = server.request_count
        data = batch(suffix=f" Step {step}.")  # new texts each step: no cache hit
        gated(**data, trainer_state=SimpleNamespace(global_step=step))
        requests_by_step.append(server.request_count - before)
    assert [n > 0 for n in requests_by_step] == [True, False, True, False, True]
    assert gated.stats.judged == 3 * 8 and gated.stats.calls == 5
    # Without a trainer state the step is the number of earlier calls.
    plain = GatedReward(base, judge, EveryN(3))
    for _ in range(4):
        plain(**batch(suffix=" Again."))
    assert plain.stats.judged == 2 * 8


def test_adaptive_gate_stays_open_while_the_judge_is_unhappy(server, rewards):
    base, judge = rewards
    level = {"score": 0}  # what the judge answers for every pair

    def judge_at_level(request: Request) -> Reply:
        return Reply(json.dumps({label: level["score"] for label, _, _ in pairs_in(request)}))

    server.responder = judge_at_level
    rule = Adaptive(period=3, threshold=0.5)
    gated = GatedReward(base, judge, rule)
    judged_steps = []
    plan = {0: 0, 1: 4, 3: 4}  # the judge's answer from each step on
    for step in range(7):
        level["score"] = plan.get(step, level["score"])
        before = gated.stats.judged
        gated(**batch(suffix=f" S{step}."), trainer_state=SimpleNamespace(global_step=step))
        if gated.stats.judged > before:
            judged_steps.append(step)
    # step 0: periodic check, mean 0 <= 0.5 -> open; step 1: open, mean 1 > 0.5 -> closed;
    # step 3 and 6: periodic checks, content judge -> stays closed.
    assert judged_steps == [0, 1, 3, 6]
    assert rule.is_open is False


def test_a_failing_judge_is_counted_logged_and_falls_back(server, rewards, caplog):
    base, judge = rewards
    server.responder = lambda request: Reply.error(500, "judge down")
    data = batch()
    offline = base(**data)
    gated = GatedReward(base, judge, Band(0.0, 1.0))  # every completion is judged
    log = Recorder()
    with caplog.at_level(logging.WARNING, logger="unimatch_metric.rewards"):
        values = gated(**data, log_metric=log.log_metric, log_extra=log.log_extra)
    assert values == offline
    assert gated.stats.judged == 8 and gated.stats.judge_failures == 8
    assert dict(log.metrics)["gate/judge_failures"] == 8
    assert log.extra == [("gate", ["fallback"] * 8)]
    warnings = [r for r in caplog.records if "the judge failed" in r.getMessage()]
    assert len(warnings) == 8
    assert all("500" in r.getMessage() for r in warnings)
    assert TEST_API_KEY not in caplog.text
    strict = GatedReward(base, judge, Band(0.0, 1.0), on_judge_error="raise")
    with pytest.raises(BackendError, match="500"):
        strict(**data)


def test_only_the_completions_the_judge_failed_on_fall_back(server, llm, rewards):
    base, _ = rewards
    judge = UniMatchReward(segmenter="rules", scorer="llm", **{**llm, "batch_size": 1})

    def fails_on_one(request: Request) -> Reply:
        if any("Great title" in b for _, _, b in pairs_in(request)):
            return Reply.error(503, "overloaded")
        return toy_judge(request)

    server.responder = fails_on_one
    data = batch()
    offline = base(**data)
    gated = GatedReward(base, judge, Band(0.0, 1.0))
    values = gated(**data)
    bad = data["completions"].index("Great title.")
    judged = expected_judge(data["completions"], data["references"])
    assert values[bad] == offline[bad]
    assert [v for i, v in enumerate(values) if i != bad] == pytest.approx(
        [v for i, v in enumerate(judged) if i != bad]
    )
    assert gated.stats.judge_failures == 1


def test_the_rubric_judge_as_reward_and_as_gated_judge(server, llm, rewards):
    answers = {"I1": "yes", "I2": "no"}

    def rubric_judge(request: Request) -> Reply:
        labels = re.findall(r"^(I\d+)\. ", request.message("user"), flags=re.MULTILINE)
        if "FAIL" in request.message("user"):
            return Reply.error(500, "rubric judge down")
        body = {k: {"reason": "as seen", "answer": answers.get(k, "yes")} for k in labels}
        return Reply(json.dumps(body))

    server.responder = rubric_judge
    rubric = {
        "name": "two-items",
        "description": "A two-item checklist.",
        "task": "The feedback is on a student's paragraph.",
        "context": [{"name": "essay", "title": "Student essay"}],
        "items": [
            {"id": "specific", "question": "Is it specific?", "dimension": "d", "weight": 3},
            {"id": "kind", "question": "Is it kind?", "dimension": "d", "weight": 1},
        ],
    }
    reward = RubricReward(rubric, context_columns={"essay": "draft_text"}, **llm)
    assert reward.__name__ == "rubric_two_items"
    drafts = ["The laundromat essay.", "The sock essay.", "The FAIL essay."]
    values = reward(completions=["Be specific.", "", "Nice."][:2], draft_text=drafts[:2])
    assert values == [0.75, 0.0]  # 3 of 4 weight satisfied; empty feedback is 0, unasked
    assert server.request_count == 1
    base, _ = rewards
    gated = GatedReward(base, reward, Band(0.0, 1.0))
    data = {
        "prompts": PROMPTS + PROMPTS[:1],
        "completions": ["Describe the sock.", "Fix the comma.", "Nice."],
        "references": [REFERENCES[PROMPTS[0]], REFERENCES[PROMPTS[1]], REFERENCES[PROMPTS[0]]],
        "draft_text": drafts,
    }
    offline = base(**data)
    assert gated(**data) == [0.75, 0.75, offline[2]]
    assert gated.stats.judge_failures == 1
    with pytest.raises(JudgeRequestError, match="rubric judge down"):
        reward(completions=["Nice."], draft_text=["The FAIL essay."])


def test_completions_as_chat_messages_and_the_figures():
    refs = [["Nice hook.", "Cite your sources."]]
    text = "Nice hook."
    chat = [{"role": "assistant", "content": [{"type": "text", "text": text}]}]
    assert (
        completion_text(chat) == text == completion_text([{"role": "assistant", "content": text}])
    )
    figures = {
        figure: UniMatchReward(figure, segmenter="rules", scorer="exact", use_cache=False)
        for figure in ("f1", "precision", "recall")
    }
    got = {
        name: r(prompts=["p"], completions=[chat], references=refs)[0]
        for name, r in figures.items()
    }
    assert got == pytest.approx({"f1": 2 / 3, "precision": 1.0, "recall": 0.5})
    with pytest.raises(ValueError, match="figure"):
        UniMatchReward("accuracy")
    with pytest.raises(TypeError, match="on_error: not an option of a reward"):
        UniMatchReward(on_error="skip")


def test_bad_reward_columns_are_clear_errors():
    reward = UniMatchReward(segmenter="rules", scorer="exact", use_cache=False)
    with pytest.raises(UniMatchInputError, match="references: missing column.*'draft'"):
        reward(prompts=["p"], completions=["x"], draft=["d"], trainer_state=None)
    with pytest.raises(UniMatchInputError, match="row 1: expected a non-empty list"):
        reward(prompts=["p", "q"], completions=["x", "y"], references=[["a"], []])
    with pytest.raises(UniMatchInputError, match="one value per completion"):
        reward(prompts=["p", "q"], completions=["x", "y"], references=[["a"]])


def test_a_paragraph_column_grounds_the_reward():
    paragraph = "Maya carried her grandmother's cello up the hill. The strap left a red mark."
    completion = ["The scene where Dmitri burns his father's letters at the lighthouse is great."]
    refs = [["Great scene!"]]
    plain = UniMatchReward(use_cache=False)(prompts=["p"], completions=completion, references=refs)
    grounded = UniMatchReward(paragraphs="paragraph", use_cache=False)
    got = grounded(prompts=["p"], completions=completion, references=refs, paragraph=[paragraph])
    assert plain[0] > 0 and got == [0.0]
    with pytest.raises(UniMatchInputError, match="paragraph: missing column"):
        grounded(prompts=["p"], completions=completion, references=refs)
    with pytest.raises(UniMatchInputError, match="row 0: expected a text"):
        grounded(prompts=["p"], completions=completion, references=refs, paragraph=[" "])
