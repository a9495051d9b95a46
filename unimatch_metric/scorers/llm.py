"""The LLM judge: an OpenAI-compatible model scores ``batch_size`` labelled pairs per request;
every label must come back exactly once with an integer 0–4, otherwise the request is
retried; a batch that still fails is reported as failed, never scored 0."""

from __future__ import annotations

from collections.abc import Sequence

from sefora_llm.backend import LLMBackend
from sefora_llm.client import ReplyError, parse_json_object
from unimatch_metric.errors import BackendError, UniMatchError, as_backend_error
from unimatch_metric.options import Options
from unimatch_metric.prompts import PROMPT_VERSION, SCORE_SYSTEM, score_user_message
from unimatch_metric.scorers.base import Pair


def parse_scores(reply: str, labels: Sequence[str]) -> dict[str, int]:
    """The label -> score mapping of a judge's reply.

    Raises `ReplyError` unless the reply is one JSON object holding each label exactly once,
    each with an integer from 0 to 4, and nothing else.
    """
    obj = parse_json_object(reply)
    missing = [label for label in labels if label not in obj]
    extra = sorted(set(obj) - set(labels))
    if missing or extra:
        raise ReplyError(f"labels missing: {missing or 'none'}; unknown labels: {extra or 'none'}")
    bad = {
        k: v
        for k, v in obj.items()
        if not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 4)
    }
    if bad:
        raise ReplyError(f"scores must be integers from 0 to 4, got {bad}")
    return obj


class LLMScorer(LLMBackend):
    """The LLM judge: ``batch_size`` labelled pairs per request, requests run concurrently."""

    def __init__(self, options: Options) -> None:
        super().__init__(
            options.llm_settings(),
            prefix=("score", "llm"),
            suffix=(PROMPT_VERSION,),
            failure=BackendError,
            progress=options.progress,
        )
        self.batch_size = options.batch_size

    def _score_batch(self, batch: Sequence[Pair]) -> list[float]:
        labels = [f"P{i + 1}" for i in range(len(batch))]
        messages = [
            {"role": "system", "content": SCORE_SYSTEM},
            {
                "role": "user",
                "content": score_user_message(
                    [(lab, a, b) for lab, (a, b) in zip(labels, batch, strict=True)]
                ),
            },
        ]
        scores = self.client.complete(
            messages,
            lambda reply: parse_scores(reply.text, labels),
            f"similarity request ({len(batch)} pair{'s' if len(batch) != 1 else ''})",
        )
        return [float(scores[label]) for label in labels]

    def score(self, pairs: Sequence[Pair]) -> list[float | UniMatchError]:
        """Score the pairs in batches; the pairs of a failed batch get its error."""
        answers = self.run_batches(list(pairs), self.batch_size, self._score_batch, "scoring")
        return [a if isinstance(a, float) else as_backend_error(a) for a in answers]
