"""Reading a generated reply: the feedback it holds under its configuration's answer format."""

from __future__ import annotations

import re

from sefora_grid.prompts import PromptConfig
from unimatch_metric.quotes import AnchoredFeedback, anchor_items, parse_anchored

_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL | re.IGNORECASE)
_FINAL = re.compile(r"^[\s#*_>-]*final answer[\s*_]*:[\s*_]*", re.IGNORECASE | re.MULTILINE)
_LABEL = re.compile(
    r"^[\s#*_>-]*(focus|category|feedback|reasoning)[\s*_]*:[\s*_]*", re.IGNORECASE | re.MULTILINE
)


def reply_text(raw: str) -> str:
    """A free-text reply without its reasoning blocks (``<think>...</think>``)."""
    return _THINK.sub("", raw).strip()


def _final_text(config: PromptConfig, raw: str) -> tuple[str, bool]:
    """The reply without reasoning blocks, and for CoT only what follows "Final answer:"."""
    text = reply_text(raw)
    if config.cot:
        finals = list(_FINAL.finditer(text))
        if not finals:
            return "", False
        text = text[finals[-1].end() :].strip()
    return text, True


def extract_anchored(
    config: PromptConfig, raw: str, paragraph: str
) -> tuple[list[AnchoredFeedback], list[str]]:
    """The (quote, comment) items of an anchored reply with each quote located in
    ``paragraph``, and every problem found (format deviations, unlocated quotes, a V2 reply
    with other than one item). Items are kept even when their quote is not found."""
    text, ok = _final_text(config, raw)
    if not ok:
        return [], ["no final answer after the reasoning"]
    reply = parse_anchored(text)
    items = anchor_items(reply.items, paragraph)
    problems = list(reply.problems)
    problems += [
        f"quote not found in the paragraph: {a.item.quote[:60]!r}"
        for a in items
        if a.item.quote is not None and a.span is None
    ]
    if config.template == "v2" and len(items) != 1:
        problems.append(f"expected one item, found {len(items)}")
    return items, problems


def extract_feedback(config: PromptConfig, raw: str) -> tuple[str, bool]:
    """The feedback in a raw reply, and whether the reply followed the asked format.

    Reasoning blocks (``<think>...</think>``) are dropped first. CoT: the text after the
    last "Final answer:" line; without that line there is no feedback (""), since the
    reasoning is not feedback. V2: the text of the "Feedback:" field; without that field
    the whole reply is taken as the feedback. V1: the whole reply. Markdown emphasis
    around the labels is tolerated.
    """
    text, ok = _final_text(config, raw)
    if not ok:
        return "", False
    if config.template == "v2":
        labels = list(_LABEL.finditer(text))
        feedback = [i for i, m in enumerate(labels) if m.group(1).lower() == "feedback"]
        if feedback:
            i = feedback[-1]
            end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
            text = text[labels[i].end() : end].strip()
        else:
            ok = False
    return text, ok
