"""The LLM segmenter: an OpenAI-compatible model inserts unit delimiters; the reply is
accepted only if removing the delimiters gives back the input text (whitespace aside)."""

from __future__ import annotations

from collections.abc import Sequence

from sefora_llm.backend import LLMBackend
from sefora_llm.client import ReplyError
from unimatch_metric.errors import BackendError, UniMatchError, as_backend_error
from unimatch_metric.options import Options
from unimatch_metric.prompts import (
    PROMPT_VERSION,
    SEGMENT_SYSTEM,
    UNIT_DELIMITER,
    segment_user_message,
)
from unimatch_metric.segmenters.base import Side, Units


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


class LLMSegmenter(LLMBackend):
    """Segmentation by an OpenAI-compatible model, one request per distinct text (cached)."""

    def __init__(self, options: Options) -> None:
        super().__init__(
            options.llm_settings(),
            prefix=("segment", "llm"),
            suffix=(PROMPT_VERSION,),
            failure=BackendError,
            progress=options.progress,
        )

    def _segment_one(self, text: str) -> Units:
        messages = [
            {"role": "system", "content": SEGMENT_SYSTEM},
            {"role": "user", "content": segment_user_message(text)},
        ]
        return self.client.complete(
            messages, lambda reply: units_from_delimited(text, reply.text), "segmentation request"
        )

    #: The prompt defines feedback units for both sides alike.
    sided = False

    def segment(self, texts: Sequence[str], side: Side = "feedback") -> list[Units | UniMatchError]:
        """Segment each text; a text that cannot be segmented gets its `BackendError`."""
        todo = [text for text in texts if text.strip() and UNIT_DELIMITER not in text]
        answers = self.run_batches(
            todo, 1, lambda batch: [self._segment_one(batch[0])], "segmenting"
        )
        done = dict(zip(todo, answers, strict=True))
        results: list[Units | UniMatchError] = []
        for text in texts:
            if UNIT_DELIMITER in text:
                results.append(
                    BackendError(f"the text contains the unit delimiter {UNIT_DELIMITER!r}")
                )
            else:
                answer = done.get(text, [])
                results.append(answer if isinstance(answer, list) else as_backend_error(answer))
        return results
