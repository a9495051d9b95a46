"""Stage 1 of UniMatch: split feedback texts into feedback units.

A feedback unit is a self-contained statement about one aspect of the writing; it can be
part of a sentence or span several. Backends:

- ``"rules"``: the offline baseline. Sentences and lines, then a cut before a connective
  that opens a new point (", but ...", "; however ..."), then merges: consecutive
  questions form one unit, and bare interjections or emoticons join their neighbour.
- ``"llm"``: an OpenAI-compatible model inserts unit delimiters; the reply is accepted only
  if removing the delimiters gives back the input text (whitespace aside).
- ``"learned"``: boosted trees over candidate cut points, trained on the project's
  guideline-labelled segmentations (see `unimatch_metric.segmenters.learned`).
- ``"offline"``: the current offline default (``"learned"``); ``"auto"``: ``"llm"`` when a
  model or endpoint is configured, else ``"offline"``; or a callable ``text -> units``.

Every backend returns units as stripped slices of the input, in order, covering all of its
non-space characters.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from sefora_llm.cache import run_cached
from sefora_llm.client import LLMClient, ReplyError
from unimatch_metric.errors import BackendError, UniMatchError
from unimatch_metric.options import Options
from unimatch_metric.prompts import (
    PROMPT_VERSION,
    SEGMENT_SYSTEM,
    UNIT_DELIMITER,
    segment_user_message,
)
from unimatch_metric.registry import Registry

Units = list[str]


class Segmenter(Protocol):
    """What a segmentation backend provides."""

    name: str
    # Identifies the backend's configuration in the cache; None: results are not cached.
    cache_namespace: tuple[str, ...] | None

    @property
    def config(self) -> dict[str, Any]:
        """What to record about the backend in results (never an API key)."""
        ...

    def segment(self, texts: Sequence[str]) -> list[Units | UniMatchError]:
        """The units of each text, or the error that prevented segmenting it."""
        ...


# --- rule-based baseline ---------------------------------------------------------------

# A period after these words does not end a sentence.
_ABBREVIATIONS = frozenset(
    ["e.g", "i.e", "etc", "cf", "vs", "viz", "mr", "mrs", "ms", "dr", "prof", "st", "p", "pp"]
    + ["no", "vol", "fig", "ch", "approx", "ca"]
)
# Sentence-final punctuation with closing quotes/brackets, or an emoticon such as ":)".
_SENTENCE_END = re.compile(r"(?:[.!?\u2026]+[\"'\u201d\u2019)\]]*|(?<=\s)[:;]-?[()DPp])(?=\s|$)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_NEWLINE = re.compile(r"\n")
_NEXT_CHAR = re.compile(r"\s*(\S)")
# A connective opening a new point, after a comma, semicolon or dash.
_CONNECTIVE = re.compile(
    r"(?:[,;:]|\s[-\u2013\u2014])\s+(?=(?:but|however|although|though|also|plus|otherwise|"
    r"instead|and also)\b)",
    flags=re.IGNORECASE,
)
_QUESTION_END = re.compile(r"\?[\"'\u201d\u2019)\]]*$")
_INTERJECTION_END = re.compile(r"(?:\w|[.!\u2026]+[\"'\u201d\u2019)\]]*)$")
_WORD = re.compile(r"\w+")
_MIN_WORDS_LEFT = 2  # a connective cut needs this many words before it ...
_MIN_WORDS_RIGHT = 3  # ... and this many after it, in the same sentence
_INTERJECTION_WORDS = 2


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def _sentence_cuts(text: str) -> list[int]:
    """Offsets where a sentence or a line ends."""
    cuts = [m.end() for m in _NEWLINE.finditer(text)]
    for m in _SENTENCE_END.finditer(text):
        nxt = _NEXT_CHAR.match(text, m.end())
        if nxt is None:
            continue
        if m.group().startswith(".") and len(m.group()) == 1:
            before = _WORD_BEFORE.search(text, 0, m.start())
            if before and before.group(1).lower().rstrip(".") in _ABBREVIATIONS:
                continue
        if nxt.group(1).islower():
            continue
        cuts.append(m.end())
    return cuts


def _clause_cuts(text: str, start: int, end: int) -> list[int]:
    """Offsets inside ``text[start:end]`` (one sentence) where a new point begins."""
    return [
        m.end()
        for m in _CONNECTIVE.finditer(text, start, end)
        if _words(text[start : m.start()]) >= _MIN_WORDS_LEFT
        and _words(text[m.end() : end]) >= _MIN_WORDS_RIGHT
    ]


def _is_interjection(piece: str) -> bool:
    """A word or two ending a sentence ("Wow.", "Yes!"), not a question or a clause."""
    return _words(piece) <= _INTERJECTION_WORDS and bool(_INTERJECTION_END.search(piece))


def _merge(pieces: list[list[int]], text: str) -> list[list[int]]:
    """Apply the merge rules to consecutive [start, end) spans."""
    merged: list[list[int]] = []
    for span in pieces:
        piece = text[span[0] : span[1]].strip()
        if merged:
            prev = text[merged[-1][0] : merged[-1][1]].strip()
            if (
                not any(ch.isalnum() for ch in piece)  # an emoticon or stray punctuation
                or not any(ch.isalnum() for ch in prev)
                or (_QUESTION_END.search(prev) and _QUESTION_END.search(piece))
                or (_is_interjection(prev) and _is_interjection(piece))
            ):
                merged[-1][1] = span[1]
                continue
        merged.append(list(span))
    return merged


def split_rules(text: str) -> Units:
    """The rule-based segmentation of one text (see the module docstring)."""
    sentence_bounds = sorted({0, len(text), *_sentence_cuts(text)})
    cuts = set(sentence_bounds)
    for start, end in itertools.pairwise(sentence_bounds):
        cuts.update(_clause_cuts(text, start, end))
    bounds = sorted(cuts)
    pieces = [[a, b] for a, b in itertools.pairwise(bounds) if text[a:b].strip()]
    return [text[a:b].strip() for a, b in _merge(pieces, text)]


class RuleSegmenter:
    """The offline rule-based baseline (deterministic, microseconds per text; not cached)."""

    name = "rules"
    cache_namespace = None
    config: dict[str, Any] = {}

    def segment(self, texts: Sequence[str]) -> list[Units | UniMatchError]:
        """Segment each text with `split_rules`."""
        return [split_rules(text) for text in texts]


# --- LLM -------------------------------------------------------------------------------


def units_from_delimited(text: str, reply: str, delimiter: str = UNIT_DELIMITER) -> Units:
    """Cut ``text`` where ``reply`` (the text with delimiters inserted) puts delimiters.

    Raises `ReplyError` when the reply, delimiters removed, differs from ``text`` in
    anything but whitespace. The units are slices of ``text`` itself, so the model's
    whitespace changes never leak into them.
    """
    pieces = [piece for piece in reply.split(delimiter) if piece.strip()]
    squeezed_text = "".join(text.split())
    if "".join("".join(piece.split()) for piece in pieces) != squeezed_text:
        raise ReplyError("removing the delimiters does not give back the input text")
    units: Units = []
    pos = 0
    for piece in pieces:
        remaining = len("".join(piece.split()))
        start = pos
        while remaining:
            if not text[pos].isspace():
                remaining -= 1
            pos += 1
        units.append(text[start:pos].strip())
    return units


class LLMSegmenter:
    """Segmentation by an OpenAI-compatible model, one request per distinct text (cached)."""

    name = "llm"

    def __init__(self, options: Options) -> None:
        self.client = LLMClient(options.llm_settings(), failure=BackendError)
        self.progress = options.progress
        self.cache_namespace = (
            "segment",
            "llm",
            self.client.settings.model or "",
            self.client.endpoint,
            PROMPT_VERSION,
        )

    @property
    def config(self) -> dict[str, Any]:
        """Model and endpoint."""
        return self.client.config

    def _segment_one(self, text: str) -> Units:
        messages = [
            {"role": "system", "content": SEGMENT_SYSTEM},
            {"role": "user", "content": segment_user_message(text)},
        ]
        return self.client.complete(
            messages, lambda reply: units_from_delimited(text, reply.text), "segmentation request"
        )

    def segment(self, texts: Sequence[str]) -> list[Units | UniMatchError]:
        """Segment each text; a text that cannot be segmented gets its `UniMatchError`."""
        todo = [text for text in texts if text.strip() and UNIT_DELIMITER not in text]
        done = dict(
            zip(
                todo,
                self.client.map(self._segment_one, todo, "segmenting", self.progress),
                strict=True,
            )
        )
        results: list[Units | UniMatchError] = []
        for text in texts:
            if UNIT_DELIMITER in text:
                results.append(
                    BackendError(f"the text contains the unit delimiter {UNIT_DELIMITER!r}")
                )
            else:
                results.append(done.get(text, []))
        return results


class CallableSegmenter:
    """A user function ``text -> list of units`` (stripped, empty ones dropped; not cached)."""

    cache_namespace = None
    config: dict[str, Any] = {}

    def __init__(self, func: Callable[[str], Sequence[str]]) -> None:
        self.func = func
        self.name = getattr(func, "__name__", repr(func))

    def segment(self, texts: Sequence[str]) -> list[Units | UniMatchError]:
        """Call the function on each text and check its units."""
        results: list[Units | UniMatchError] = []
        for text in texts:
            units = self.func(text)
            if isinstance(units, str) or not all(isinstance(u, str) for u in units):
                raise TypeError(f"segmenter {self.name} must return a list of strings")
            results.append([u.strip() for u in units if u.strip()])
        return results


def _learned(options: Options) -> Segmenter:
    from unimatch_metric.segmenters.learned import LearnedSegmenter  # it builds on this module

    return LearnedSegmenter(options)


SEGMENTERS: Registry[Segmenter] = Registry("segmenter", "learned", CallableSegmenter)
SEGMENTERS.register("learned", _learned)
SEGMENTERS.register("rules", lambda options: RuleSegmenter())
SEGMENTERS.register("llm", LLMSegmenter)


def segment_outcomes(
    texts: Sequence[str], segmenter: Segmenter, options: Options
) -> list[Units | UniMatchError]:
    """Segment each text through the cache; failures are returned in place."""
    unique = list(dict.fromkeys(texts))
    outcomes = run_cached(
        segmenter.cache_namespace,
        options.cache() if segmenter.cache_namespace else None,
        unique,
        lambda text: (text,),
        segmenter.segment,
    )
    by_text = dict(zip(unique, outcomes, strict=True))
    return [by_text[text] for text in texts]


def segment(
    texts: Sequence[str], segmenter: str | Callable[[str], Sequence[str]] = "auto", **options: Any
) -> list[Units]:
    """Split each text into feedback units (stripped strings, in order, covering the text).

    ``options`` are UniMatch options (``model``, ``base_url``, ``api_key``, ``cache_dir``,
    ``use_cache``, ``request_timeout``, ...). Raises `UniMatchError` if a text cannot be segmented.
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, not one string")
    opts = Options.from_kwargs(segmenter=segmenter, **options)
    backend = SEGMENTERS.create(opts.segmenter, opts)
    results = []
    for outcome in segment_outcomes(list(texts), backend, opts):
        if isinstance(outcome, UniMatchError):
            raise outcome
        results.append(outcome)
    return results
