"""The context window: fits the token budget, trims the longer side first, never the target."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sefora_grid.context import (
    PARAGRAPH_SEPARATOR,
    ApproxCounter,
    fit_context,
    fit_prompt,
)
from sefora_grid.errors import GridError
from sefora_grid.prompts import (
    TARGET_END,
    TARGET_START,
    PromptConfig,
    PromptInputs,
    build_messages,
)

COUNTER = ApproxCounter()


def para(tag: str, words: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(words))


def test_everything_kept_when_it_fits() -> None:
    before, after = [para("b", 10), para("c", 10)], [para("a", 10)]
    context = fit_context(before, after, 1000, COUNTER)
    assert (list(context.before), list(context.after)) == (before, after)
    assert not context.trimmed_before and not context.trimmed_after


def test_longer_side_is_trimmed_first_from_its_far_end() -> None:
    before = [para(f"b{k}_", 60) for k in range(6)]  # ~ 6 x 125 tokens
    after = [para("a", 20)]  # ~ 30 tokens
    after_tokens = COUNTER.count(after[0])
    available = 400
    context = fit_context(before, after, available, COUNTER)
    assert list(context.after) == after and not context.trimmed_after
    assert context.trimmed_before
    kept = PARAGRAPH_SEPARATOR.join(context.before)
    assert PARAGRAPH_SEPARATOR.join(before).endswith(kept)  # the text nearest the target
    assert context.before[-1] == before[-1]
    assert COUNTER.count(kept) <= available - after_tokens
    # Filled up to the word: one more word would not fit.
    first = context.before[0]
    source = next(p for p in before if p.endswith(first))
    longer = " ".join(source.split(" ")[-len(first.split(" ")) - 1 :])
    assert COUNTER.count(PARAGRAPH_SEPARATOR.join((longer, *context.before[1:]))) > (
        available - after_tokens
    )


def test_both_sides_trimmed_to_equal_shares_when_both_are_long() -> None:
    before = [para(f"b{k}_", 80) for k in range(4)]
    after = [para(f"a{k}_", 80) for k in range(4)]
    context = fit_context(before, after, 300, COUNTER)
    assert context.trimmed_before and context.trimmed_after
    left = COUNTER.count(PARAGRAPH_SEPARATOR.join(context.before))
    right = COUNTER.count(PARAGRAPH_SEPARATOR.join(context.after))
    assert left <= 150 and right <= 150 and left + right >= 280
    assert context.after[0] == after[0] and context.before[-1] == before[-1]


def test_the_following_side_is_trimmed_first_when_it_is_longer() -> None:
    before, after = [para("b", 20)], [para(f"a{k}_", 60) for k in range(5)]
    context = fit_context(before, after, 250, COUNTER)
    assert list(context.before) == before and context.trimmed_after
    assert PARAGRAPH_SEPARATOR.join(after).startswith(PARAGRAPH_SEPARATOR.join(context.after))


def test_target_longer_than_the_budget_is_sent_whole_and_flagged() -> None:
    target = para("t", 3000)
    inputs = PromptInputs(target=target, before=(para("b", 50),), after=(para("a", 50),))
    fitted = fit_prompt(PromptConfig(), inputs, COUNTER, budget=1000, max_new_tokens=250)
    assert fitted.over_budget and not fitted.context.before and not fitted.context.after
    assert target in fitted.messages[1]["content"]


def test_budget_must_leave_room_for_the_output() -> None:
    with pytest.raises(GridError, match="no room"):
        fit_prompt(PromptConfig(), PromptInputs(target="x"), COUNTER, budget=250)


paragraph = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=0, max_size=400
)


@settings(max_examples=150, deadline=None)
@given(
    target=paragraph.filter(str.strip),
    before=st.lists(paragraph, max_size=8),
    after=st.lists(paragraph, max_size=8),
    room=st.integers(min_value=0, max_value=900),
    config=st.sampled_from(
        [PromptConfig(), PromptConfig("v1", False, False), PromptConfig(cot=True)]
    ),
)
def test_fitted_prompt_fits_and_keeps_the_target(
    target: str, before: list[str], after: list[str], room: int, config: PromptConfig
) -> None:
    inputs = PromptInputs(
        target=target, before=tuple(before), after=tuple(after), assignment_text="Rubric."
    )
    base = COUNTER.count_messages(build_messages(config, PromptInputs(target, **_no_context())))
    max_new = 250
    budget = base + max_new + room
    fitted = fit_prompt(config, inputs, COUNTER, budget=budget, max_new_tokens=max_new)
    assert not fitted.over_budget
    assert fitted.prompt_tokens == COUNTER.count_messages(fitted.messages) <= budget - max_new
    text = fitted.messages[1]["content"]
    assert f"{TARGET_START}\n\n{target}\n\n{TARGET_END}" in text
    # What is kept is the text nearest the target, on both sides.
    full_before = PARAGRAPH_SEPARATOR.join(p for p in before if p.strip())
    full_after = PARAGRAPH_SEPARATOR.join(p for p in after if p.strip())
    assert full_before.endswith(PARAGRAPH_SEPARATOR.join(fitted.context.before))
    assert full_after.startswith(PARAGRAPH_SEPARATOR.join(fitted.context.after))
    if COUNTER.count_messages(build_messages(config, inputs)) <= budget - max_new:
        assert not (fitted.context.trimmed_before or fitted.context.trimmed_after)


def _no_context() -> dict:
    return {"assignment_text": "Rubric."}
