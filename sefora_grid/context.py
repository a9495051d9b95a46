"""The context window: the target paragraph plus as much of the surrounding essay as fits.

Token counts come from the model's tokenizer when one is given (a local transformers
folder), otherwise from `ApproxCounter` (characters / 4, rounded up, plus a fixed cost per
chat message): a rough rule for English text with BPE tokenizers, so leave a margin below
the server's context length when relying on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from sefora_grid.errors import GridError
from sefora_grid.prompts import PromptConfig, PromptInputs, build_messages

#: Prompt + generated tokens per request, as in the paper.
DEFAULT_BUDGET = 8192
#: Generated tokens per paragraph, as in the paper.
DEFAULT_MAX_NEW_TOKENS = 250
#: Characters per token of the approximation.
CHARS_PER_TOKEN = 4
#: Tokens the approximation adds per chat message (role and delimiters), and once for the
#: assistant turn the model starts.
MESSAGE_OVERHEAD = 4
PARAGRAPH_SEPARATOR = "\n\n"


class TokenCounter(Protocol):
    """Counts tokens of a text and of a list of chat messages as the model will see them."""

    name: str

    def count(self, text: str) -> int:
        """Tokens of ``text`` on its own."""
        ...

    def count_messages(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens of a whole chat prompt, up to where the model starts answering."""
        ...


class ApproxCounter:
    """ceil(characters / 4) per text, plus `MESSAGE_OVERHEAD` per message and per reply."""

    name = f"approx-chars/{CHARS_PER_TOKEN}"

    def count(self, text: str) -> int:
        """Approximate tokens of ``text``."""
        return math.ceil(len(text) / CHARS_PER_TOKEN)

    def count_messages(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Approximate tokens of a chat prompt."""
        content = sum(self.count(m["content"]) for m in messages)
        return content + MESSAGE_OVERHEAD * (len(messages) + 1)


class TokenizerCounter:
    """Exact counts with a transformers tokenizer, through its chat template when it has one."""

    def __init__(self, tokenizer: Any, name: str) -> None:
        self.tokenizer = tokenizer
        self.name = name

    @classmethod
    def from_path(cls, path: str | Path) -> TokenizerCounter:
        """The tokenizer in a local folder (never downloaded); `GridError` if unusable."""
        folder = Path(path)
        if not folder.is_dir():
            raise GridError(f"{folder}: tokenizer folder not found (a local path is required)")
        from transformers import AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        except (OSError, ValueError) as err:
            raise GridError(f"{folder}: cannot load a tokenizer: {err}") from err
        return cls(tokenizer, f"tokenizer:{folder.name}")

    def count(self, text: str) -> int:
        """Tokens of ``text`` without special tokens."""
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def count_messages(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens of the chat prompt as rendered by the chat template (generation prompt on)."""
        if self.tokenizer.chat_template is None:
            content = sum(self.count(m["content"]) for m in messages)
            return content + MESSAGE_OVERHEAD * (len(messages) + 1)
        ids = self.tokenizer.apply_chat_template(
            list(messages), add_generation_prompt=True, tokenize=True, return_dict=False
        )
        return len(ids)


@dataclass(frozen=True)
class Context:
    """The paragraphs kept on each side of the target, nearest last/first, and trim flags."""

    before: tuple[str, ...]
    after: tuple[str, ...]
    trimmed_before: bool
    trimmed_after: bool


def _tokens(counter: TokenCounter, paragraphs: Sequence[str]) -> int:
    return counter.count(PARAGRAPH_SEPARATOR.join(paragraphs)) if paragraphs else 0


def _nonempty(paragraphs: Sequence[str]) -> tuple[str, ...]:
    return tuple(p for p in paragraphs if p.strip())


def _cut(paragraph: str, keep_words: int, keep_end: bool) -> str:
    words = paragraph.split(" ")
    return " ".join(words[len(words) - keep_words :] if keep_end else words[:keep_words])


def _keep(paragraphs: Sequence[str], room: int, counter: TokenCounter, near_end: bool) -> list[str]:
    """The paragraphs nearest the target (the end of ``paragraphs`` when ``near_end``) that fit
    ``room`` tokens, the first one that does not fit cut word by word to what fits."""
    order = list(reversed(paragraphs)) if near_end else list(paragraphs)
    kept: list[str] = []

    def joined(extra: str) -> list[str]:
        return [extra, *kept] if near_end else [*kept, extra]

    for paragraph in order:
        if _tokens(counter, joined(paragraph)) <= room:
            kept = joined(paragraph)
            continue
        low, high = 0, len(paragraph.split(" ")) - 1
        while low < high:  # the most words of this paragraph that still fit
            mid = (low + high + 1) // 2
            if _tokens(counter, joined(_cut(paragraph, mid, keep_end=near_end))) <= room:
                low = mid
            else:
                high = mid - 1
        piece = _cut(paragraph, low, keep_end=near_end)
        if piece.strip():
            kept = joined(piece)
        break
    return kept


def fit_context(
    before: Sequence[str], after: Sequence[str], available: int, counter: TokenCounter
) -> Context:
    """As much of ``before``/``after`` as fits in ``available`` tokens, nearest text first.

    The side with more text is trimmed first: the shorter side keeps all of its text up to
    half of ``available`` and the longer side gets the rest (so both are trimmed, to equal
    shares, only when even the shorter one exceeds half). Each side loses text at its far
    end: whole paragraphs, then the words of the paragraph where the cut falls.
    """
    left, right = list(_nonempty(before)), list(_nonempty(after))
    available = max(0, available)
    left_tokens, right_tokens = _tokens(counter, left), _tokens(counter, right)
    if left_tokens + right_tokens <= available:
        return Context(tuple(left), tuple(right), False, False)
    if left_tokens > right_tokens:
        right_room = min(right_tokens, available // 2)
        left_room = available - right_room
    else:
        left_room = min(left_tokens, available // 2)
        right_room = available - left_room
    kept_left = _keep(left, left_room, counter, near_end=True)
    kept_right = _keep(right, right_room, counter, near_end=False)
    return Context(tuple(kept_left), tuple(kept_right), kept_left != left, kept_right != right)


@dataclass(frozen=True)
class FittedPrompt:
    """A prompt built within the budget: its messages, the context kept and its token count."""

    messages: list[dict[str, str]]
    context: Context
    prompt_tokens: int
    over_budget: bool


#: Builds the chat messages from the context kept (a `Context`).
Builder = Callable[[Context], list[dict[str, str]]]


def fit_messages(
    build: Builder,
    before: Sequence[str],
    after: Sequence[str],
    counter: TokenCounter,
    budget: int = DEFAULT_BUDGET,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
) -> FittedPrompt:
    """The messages ``build`` makes with as much of ``before``/``after`` as fits
    ``budget - max_new_tokens`` (see `fit_context`). When even the prompt without any of
    them is too long, it is returned as is with ``over_budget`` set (the caller records it).
    """
    limit = budget - max_new_tokens
    if limit <= 0:
        raise GridError(f"token budget {budget} leaves no room for {max_new_tokens} new tokens")
    context = Context(_nonempty(before), _nonempty(after), False, False)
    messages = build(context)
    tokens = counter.count_messages(messages)
    if tokens <= limit:  # everything fits
        return FittedPrompt(messages, context, tokens, False)
    whole = context
    available = limit - counter.count_messages(build(Context((), (), False, False)))
    while True:
        context = fit_context(whole.before, whole.after, available, counter)
        messages = build(context)
        tokens = counter.count_messages(messages)
        # Counts of separate pieces do not add up exactly (separators, merges at the joins,
        # trim markers): shrink the room by the excess and fit again.
        if tokens <= limit or not (context.before or context.after):
            return FittedPrompt(messages, context, tokens, tokens > limit)
        available = max(0, available - (tokens - limit))


def fit_prompt(
    config: PromptConfig,
    inputs: PromptInputs,
    counter: TokenCounter,
    budget: int = DEFAULT_BUDGET,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
) -> FittedPrompt:
    """The prompt for ``inputs`` with as much context as fits ``budget - max_new_tokens``.

    ``inputs.before``/``after`` are the whole draft's other paragraphs; the target is never
    trimmed.
    """

    def build(context: Context) -> list[dict[str, str]]:
        return build_messages(
            config,
            replace(
                inputs,
                before=context.before,
                after=context.after,
                trimmed_before=context.trimmed_before,
                trimmed_after=context.trimmed_after,
            ),
        )

    return fit_messages(build, inputs.before, inputs.after, counter, budget, max_new_tokens)
