"""Prompt configurations: ids, what each toggle puts in the prompt, few-shot exemplars, CoT."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import load_dataset

from sefora_dataset.categories import categorize
from sefora_grid.categories import (
    CATEGORIES,
    FEW_SHOT_CATEGORIES,
    Exemplar,
    ExemplarPool,
)
from sefora_grid.documents import document_configs
from sefora_grid.errors import ConfigError, GridError
from sefora_grid.extract import extract_feedback
from sefora_grid.generate import parse_configs
from sefora_grid.prompts import (
    FINAL_MARKER,
    TARGET_END,
    TARGET_START,
    PromptConfig,
    PromptInputs,
    all_configs,
    build_messages,
    prompt_hash,
)

ASSIGNMENT = "Write a narrative about a place. Rubric: focus, detail, organisation."
EXEMPLARS = tuple(
    Exemplar(c, f"An instructor comment for {c.lower()} number {i}.", "a span", f"P{i}_A00", "E9")
    for i, c in enumerate(FEW_SHOT_CATEGORIES)
)
INPUTS = PromptInputs(
    target="The target paragraph about the laundromat.",
    before=("An opening paragraph.",),
    after=("A closing paragraph.",),
    assignment_text=ASSIGNMENT,
    exemplars=EXEMPLARS,
)


def user_text(config: PromptConfig, inputs: PromptInputs = INPUTS) -> str:
    messages = build_messages(config, inputs)
    assert [m["role"] for m in messages] == ["system", "user"]
    return messages[1]["content"]


def test_ids_are_generated_from_the_toggles_and_round_trip() -> None:
    configs = all_configs()
    ids = [c.id for c in configs]
    assert len(ids) == len(set(ids)) == 2**6
    assert all(PromptConfig.parse(i) == c for i, c in zip(ids, configs, strict=True))
    paper = all_configs(paper_only=True)
    assert len(paper) == 20  # 16 template x guided x rubric x shots, plus 4 V1 zero-shot CoT
    assert {c.id for c in paper if c.cot} == {
        f"v1-{g}-{r}-zs-cot" for g in ("guided", "unguided") for r in ("rubric", "norubric")
    }
    assert PromptConfig().id == "v2-guided-rubric-zs"
    assert PromptConfig(anchored=True, cot=True).id == "v2-guided-rubric-zs-cot-anchored"
    assert not any(c.anchored for c in paper)


@pytest.mark.parametrize("bad", ["v3-guided-rubric-zs", "v2-guided", "V2-GUIDED-RUBRIC-ZS", ""])
def test_unknown_config_is_a_clear_error(bad: str) -> None:
    with pytest.raises(ConfigError, match="unknown configuration"):
        PromptConfig.parse(bad)
    with pytest.raises(ConfigError):
        parse_configs(["v2-guided-rubric-zs", bad])


def test_parse_configs_paper_alias_and_dedup() -> None:
    configs = parse_configs(["v2-guided-rubric-zs", "paper", "v2-guided-rubric-zs-cot"])
    assert len(configs) == 21 and configs[0].id == "v2-guided-rubric-zs"


@pytest.mark.parametrize("base", all_configs(), ids=lambda c: c.id)
def test_every_toggle_changes_the_prompt_as_specified(base: PromptConfig) -> None:
    text = user_text(base)
    # The target and its surroundings are always there, in order.
    assert text.index("An opening") < text.index(TARGET_START) < text.index("The target")
    assert text.index("The target") < text.index(TARGET_END) < text.index("A closing")
    # rubric: the assignment text is inserted.
    assert (ASSIGNMENT in text) == base.rubric
    # guided: the six categories are listed (and named nowhere else).
    assert all((f"- {name}:" in text) == base.guided for name in CATEGORIES)
    assert ("Category:" in text) == (base.guided and (base.template == "v2" or base.anchored))
    # few-shot: five exemplars, one per category (labelled only when guided).
    assert all((e.comment in text) == base.few_shot for e in EXEMPLARS)
    assert ("[Praise]" in text) == (base.few_shot and base.guided)
    # CoT: reasoning first, then the marked final answer.
    assert (FINAL_MARKER in text) == base.cot
    # template: V2 asks for one point in a fixed format, V1 for any number of comments.
    assert ("Feedback: <" in text) == (base.template == "v2" and not base.anchored)
    assert ("as many separate comments" in text) == (base.template == "v1")
    # anchored: every comment comes with the exact words it is about.
    assert ('Quote: "<the exact words' in text) == base.anchored
    assert ("Comment: <" in text) == base.anchored
    for field in ("template", "guided", "rubric", "few_shot", "cot", "anchored"):
        value = getattr(base, field)
        flipped = dataclasses.replace(
            base, **{field: ("v1" if value == "v2" else "v2") if field == "template" else not value}
        )
        assert user_text(flipped) != text, field
        assert prompt_hash(build_messages(flipped, INPUTS)) != prompt_hash(
            build_messages(base, INPUTS)
        )


def test_rubric_without_assignment_text_is_said_not_silent() -> None:
    text = user_text(PromptConfig(), dataclasses.replace(INPUTS, assignment_text=None))
    assert "No assignment prompt or rubric is available" in text


def test_few_shot_without_exemplars_is_an_error() -> None:
    with pytest.raises(GridError, match="few-shot"):
        build_messages(PromptConfig(few_shot=True), dataclasses.replace(INPUTS, exemplars=()))


def test_trim_markers_show_where_context_was_cut() -> None:
    text = user_text(PromptConfig(), dataclasses.replace(INPUTS, trimmed_before=True))
    assert text.index("[...]") < text.index("An opening")
    assert "[...]" not in user_text(PromptConfig())


@pytest.mark.parametrize(
    ("comment", "category"),
    [
        ("Watch your verb tense here.", "Mistakes"),
        ("Please add in-text citations in APA style.", "Task Constraints"),
        ("I'm confused by this sentence.", "Clarification"),
        ("Could you expand on this moment?", "Elaboration"),
        ("Love this line.", "Praise"),
        ("How does this idea connect to your thesis?", "Concepts"),
        ("Great line, but watch the comma splice.", "Mistakes"),
        ("Hmm.", None),
    ],
)
def test_keyword_rule(comment: str, category: str | None) -> None:
    assert categorize(comment) == category


def annotated(paragraph_id: str, essay_id: str, *comments: str) -> dict:
    return {
        "paragraph_id": paragraph_id,
        "essay_id": essay_id,
        "annotations": [{"comment": c, "text": "some text"} for c in comments],
    }


CATEGORY_COMMENTS = {
    "Concepts": "How does this idea connect to your main argument?",
    "Elaboration": "Could you expand on this moment a little?",
    "Clarification": "I'm confused by what happens in this sentence.",
    "Mistakes": "Watch your verb tense in this sentence.",
    "Praise": "Love this line, it is so vivid.",
}


def test_exemplars_one_per_category_never_from_the_target_essay() -> None:
    rows = [
        annotated(f"E{e}_P{p}", f"E{e}", *CATEGORY_COMMENTS.values())
        for e in range(4)
        for p in range(2)
    ]
    pool = ExemplarPool(rows)
    for essay in ("E0", "E1", "E2", "E3", "elsewhere"):
        picked = pool.pick(essay)
        assert [e.category for e in picked] == list(FEW_SHOT_CATEGORIES)
        assert all(e.essay_id != essay for e in picked)
        assert all(e.comment == CATEGORY_COMMENTS[e.category] for e in picked)
    # The first-ranked candidate's essay gets the next one instead; others keep the first.
    first = pool.pick("elsewhere")
    for exemplar in first:
        again = {e.category: e for e in pool.pick(exemplar.essay_id)}[exemplar.category]
        assert again.essay_id != exemplar.essay_id
    # Deterministic: independent of the order rows are read in.
    assert ExemplarPool(list(reversed(rows))).pick("E1") == pool.pick("E1")


def test_exemplar_pool_error_when_only_the_target_essay_has_a_category() -> None:
    rows = [annotated("E0_P0", "E0", *CATEGORY_COMMENTS.values())]
    rows.append(annotated("E1_P0", "E1", CATEGORY_COMMENTS["Praise"]))
    pool = ExemplarPool(rows)
    assert len(pool.pick("E1")) == 5
    with pytest.raises(GridError, match="no 'Concepts' instructor comment"):
        pool.pick("E0")


def test_exemplars_from_the_sample_train_split(sample_dataset: Path) -> None:
    rows = list(load_dataset(str(sample_dataset), "paragraphs", split="train"))
    essays = {r["essay_id"] for r in rows}
    assert len(essays) > 1
    pool = ExemplarPool(rows)
    for essay in essays:
        picked = pool.pick(essay)
        assert [e.category for e in picked] == list(FEW_SHOT_CATEGORIES)
        assert all(e.essay_id != essay and categorize(e.comment) == e.category for e in picked)


# --- CoT and format extraction -------------------------------------------------------------

V2 = PromptConfig(template="v2")
V1 = PromptConfig(template="v1")
V1_COT = PromptConfig(template="v1", cot=True)
V2_COT = PromptConfig(template="v2", cot=True)


@pytest.mark.parametrize(
    ("config", "raw", "feedback", "ok"),
    [
        (V1, "- Nice image.\n- Check the tense.", "- Nice image.\n- Check the tense.", True),
        (V2, "Focus: a\nCategory: Praise\nFeedback: Lovely detail.", "Lovely detail.", True),
        (V2, "Focus: x\nFeedback: Expand this\nmoment.", "Expand this\nmoment.", True),
        (V2, "**Feedback:** Lovely detail.", "Lovely detail.", True),
        (V2, "Lovely detail.", "Lovely detail.", False),
        (V1, "<think>hidden plan</think>\nNice image.", "Nice image.", True),
        (V1_COT, "Reasoning: it is vivid.\nFinal answer: Nice image.", "Nice image.", True),
        (V1_COT, "Reasoning: a\nFinal answer: x\nFinal answer: - One\n- Two", "- One\n- Two", True),
        (V1_COT, "## Final Answer:\nNice image.", "Nice image.", True),
        (V1_COT, "Reasoning: it is vivid and I would say", "", False),
        (V2_COT, "Reasoning: r\nFinal answer:\nFocus: f\nFeedback: One point.", "One point.", True),
        (V2_COT, "Reasoning: Feedback: not this\nFinal answer: Just text.", "Just text.", False),
    ],
)
def test_extract_feedback(config: PromptConfig, raw: str, feedback: str, ok: bool) -> None:
    assert extract_feedback(config, raw) == (feedback, ok)


def test_configs_command_lists_every_id() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sefora_cli.main", "configs"],
        capture_output=True,
        text=True,
        check=True,
    )
    listed = [line.split()[0] for line in result.stdout.splitlines()[1:]]
    assert listed == [c.id for c in all_configs()] + [d.id for d in document_configs()]
    paper = subprocess.run(
        [sys.executable, "-m", "sefora_cli.main", "configs", "--paper", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert paper.stdout.count('"id"') == 20


def test_exemplar_ranking_prefers_clear_cut_comments_and_skips_replies() -> None:
    rows = [annotated("E1_P0", "E1", *CATEGORY_COMMENTS.values())]
    rows.append(
        annotated(
            "E2_P0",
            "E2",
            "Yes, the grammar in this sentence is a problem.",  # a reply: never an exemplar
            "Watch the tense here, and the idea needs a clearer connection.",  # mixed
            "Watch your verb tense in this sentence, please.",  # clear-cut
        )
    )
    mistakes = ExemplarPool(rows).candidates["Mistakes"]
    assert [e.comment for e in mistakes][0] in {
        CATEGORY_COMMENTS["Mistakes"],
        "Watch your verb tense in this sentence, please.",
    }
    assert [e.comment for e in mistakes][-1].startswith("Watch the tense here")
    assert all(not e.comment.startswith("Yes") for e in mistakes)
