"""The rubric judge: an OpenAI-compatible LLM answers a rubric's checklist about feedback.

`RubricJudge` asks about ``batch_size`` items per request, parses the reply strictly (every
item exactly once, a reason and a yes/no answer), retries malformed replies, keeps every
reason, caches answers per item (in the cache UniMatch uses), and never turns a failure
into a 0: a failed example is raised or reported as failed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from feedback_judges.errors import JudgeError, JudgeOptionError, JudgeRequestError
from feedback_judges.rubric import ANSWERS, DEFAULT_RUBRIC, Rubric, RubricItem, load_rubric
from sefora_common import __version__
from sefora_common.errors import OptionError
from sefora_llm.backend import LLMBackend
from sefora_llm.cache import run_cached
from sefora_llm.client import LLMClient, ReplyError, parse_json_object
from sefora_llm.errors import LLMRequestError
from sefora_llm.options import LLMOptions

#: The folder of the ``evaluate`` module: ``evaluate.load(MODULE_PATH, "math-feedback")``.
MODULE_PATH = str(Path(__file__).resolve().parent / "rubric_judge")
#: Part of every cache key of the judge: change it whenever the judge's prompt changes.
JUDGE_PROMPT_VERSION = "rubric-judge-1"


def as_judge_error(err: LLMRequestError) -> JudgeError:
    """``err`` as a `JudgeRequestError` (the judge's client already raises that type)."""
    return err if isinstance(err, JudgeError) else JudgeRequestError(str(err))


JUDGE_SYSTEM = """\
You check one piece of written feedback against a checklist. {task}

For each checklist item, look for evidence in the feedback and in the material shown, then
answer the item's question with "yes" or "no". Judge what the feedback actually says, not
what it might have meant; when the evidence is missing, the answer is the one the question
implies for missing evidence.

Reply with one JSON object and nothing else. Its keys are the item labels exactly as given
(I1, I2, ...), each exactly once. Each value is an object with two keys, in this order:
"reason" (one or two sentences that cite the feedback or the material) and "answer"
("yes" or "no")."""


def judge_user_message(
    rubric: Rubric, context: Mapping[str, str], feedback: str, items: Sequence[RubricItem]
) -> str:
    """The user turn: the material, the feedback, and the labelled checklist items."""
    parts = [f"## {c.title}\n{context[c.name]}" for c in rubric.context if c.name in context]
    parts.append(f"## Feedback to check\n{feedback}")
    checklist = "\n".join(f"I{k + 1}. {item.question}" for k, item in enumerate(items))
    parts.append(f"## Checklist\n{checklist}")
    return "\n\n".join(parts)


def parse_answers(reply: str, n_items: int) -> list[dict[str, str]]:
    """``[{"answer": "yes"|"no", "reason": str}, ...]`` for items I1..In of a judge's reply.

    Raises `ReplyError` unless the reply is one JSON object holding every label exactly once
    (and no other key), each with a non-empty ``reason`` string and a yes/no ``answer``.
    """
    labels = [f"I{k + 1}" for k in range(n_items)]
    obj = parse_json_object(reply)
    missing = [label for label in labels if label not in obj]
    extra = sorted(set(obj) - set(labels))
    if missing or extra:
        raise ReplyError(f"items missing: {missing or 'none'}; unknown items: {extra or 'none'}")
    out = []
    for label in labels:
        value = obj[label]
        if not isinstance(value, dict) or set(value) != {"reason", "answer"}:
            raise ReplyError(f"{label}: expected an object with 'reason' and 'answer' only")
        answer, reason = value["answer"], value["reason"]
        if not isinstance(answer, str) or answer.strip().lower() not in ANSWERS:
            raise ReplyError(f"{label}: answer must be 'yes' or 'no', got {answer!r}")
        if not isinstance(reason, str) or not reason.strip():
            raise ReplyError(f"{label}: reason must be a non-empty string")
        out.append({"answer": answer.strip().lower(), "reason": reason.strip()})
    return out


@dataclass(frozen=True)
class Judgement:
    """The verdict on one feedback text: score, per-item satisfaction and the judge's reasons."""

    score: float
    dimension_scores: dict[str, float]
    satisfied: dict[str, bool]
    reasons: dict[str, str]

    def details(self) -> dict[str, Any]:
        """A JSON-ready form, with ``error`` None."""
        return {**dataclasses.asdict(self), "error": None}


@dataclass
class JudgeOptions(LLMOptions):
    """The options of `RubricJudge` (see the metric card)."""

    what: ClassVar[str] = "rubric judge"
    error: ClassVar[type[OptionError]] = JudgeOptionError

    batch_size: int = 20


# A judging task: (feedback, context as canonical JSON, item index); hashable, cacheable.
_Task = tuple[str, str, int]


class RubricJudge:
    """An LLM judge for one rubric, reusable across calls (like sacrebleu's metric classes).

    ``RubricJudge("math-feedback", model=..., base_url=...).compute(feedback, contexts)``
    """

    def __init__(
        self, rubric: str | Path | Rubric | Mapping[str, Any] = DEFAULT_RUBRIC, **options: Any
    ) -> None:
        self.rubric = load_rubric(rubric)
        self.options = JudgeOptions.from_kwargs(**options)

    def compute(
        self, feedback: Sequence[str], contexts: Sequence[Mapping[str, str]], **options: Any
    ) -> dict[str, Any]:
        """Judge each feedback text with its context; ``options`` override this instance's.

        Returns ``score`` (mean over judged examples), ``dimension_scores`` and ``item_rates``
        (means, likewise), ``scores`` (one per example, None for a failed one), ``n_examples``
        (judged), ``n_failed``, ``config`` and, with ``return_details=True``, per-example
        ``details`` with every item's verdict and reason (or the error).
        """
        opts = JudgeOptions.from_kwargs(self.options, **options)
        backend = LLMBackend(
            opts.llm_settings(),
            prefix=("rubric",),
            suffix=(JUDGE_PROMPT_VERSION, self.rubric.task),
            failure=JudgeRequestError,
            progress=opts.progress,
        )
        outcomes = self._judge(feedback, contexts, opts, backend)
        failures = [(i, o) for i, o in enumerate(outcomes) if isinstance(o, JudgeError)]
        if failures and opts.on_error == "raise":
            index, err = failures[0]
            raise JudgeRequestError(f"example {index}: {err}") from err
        done = [o for o in outcomes if isinstance(o, Judgement)]
        rubric = self.rubric
        output: dict[str, Any] = {
            "score": _mean([j.score for j in done]),
            "dimension_scores": {
                d: _mean([j.dimension_scores[d] for j in done]) for d in rubric.dimensions
            },
            "item_rates": {
                item.id: _mean([float(j.satisfied[item.id]) for j in done]) for item in rubric.items
            },
            "scores": [o.score if isinstance(o, Judgement) else None for o in outcomes],
            "n_examples": len(done),
            "n_failed": len(failures),
            "config": {
                "rubric": rubric.name,
                "rubric_version": rubric.version,
                "rubric_digest": rubric.digest,
                **backend.config,
                "batch_size": opts.batch_size,
                "prompt_version": JUDGE_PROMPT_VERSION,
            },
        }
        output["config"]["signature"] = signature(output["config"])
        if opts.return_details:
            empty = dict.fromkeys(("score", "dimension_scores", "satisfied", "reasons"))
            output["details"] = [
                o.details() if isinstance(o, Judgement) else {**empty, "error": str(o)}
                for o in outcomes
            ]
        return output

    def _judge(
        self,
        feedback: Sequence[str],
        contexts: Sequence[Mapping[str, str]],
        opts: JudgeOptions,
        backend: LLMBackend,
    ) -> list[Judgement | JudgeError]:
        if isinstance(feedback, str) or len(feedback) != len(contexts):
            raise ValueError("feedback and contexts must be lists of the same length")
        for i, text in enumerate(feedback):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"feedback[{i}] must be a non-empty string")
        material = [
            json.dumps(
                self.rubric.check_context(c, f"contexts[{i}]"), sort_keys=True, ensure_ascii=False
            )
            for i, c in enumerate(contexts)
        ]
        items = self.rubric.items
        pairs = zip(feedback, material, strict=True)
        tasks = list(dict.fromkeys((f, m, k) for f, m in pairs for k in range(len(items))))
        answers = dict(
            zip(
                tasks,
                run_cached(
                    backend.cache_namespace,
                    opts.cache(),
                    tasks,
                    lambda t: (t[1], t[0], items[t[2]].question),
                    lambda todo: backend.run_batches(
                        todo,
                        opts.batch_size,
                        lambda batch: self._ask(backend.client, batch),
                        "judging",
                        group=lambda t: t[:2],  # the items of one (feedback, context) per request
                    ),
                ),
                strict=True,
            )
        )
        outcomes: list[Judgement | JudgeError] = []
        for f, m in zip(feedback, material, strict=True):
            got = [answers[(f, m, k)] for k in range(len(items))]
            error = next((a for a in got if isinstance(a, LLMRequestError)), None)
            if error is not None:
                outcomes.append(as_judge_error(error))
                continue
            by_id = {item.id: a for item, a in zip(items, got, strict=True) if isinstance(a, dict)}
            satisfied = self.rubric.satisfied({i: a["answer"] for i, a in by_id.items()})
            outcomes.append(
                Judgement(
                    score=self.rubric.score(satisfied),
                    dimension_scores={
                        d: self.rubric.score(satisfied, d) for d in self.rubric.dimensions
                    },
                    satisfied=satisfied,
                    reasons={i: a["reason"] for i, a in by_id.items()},
                )
            )
        return outcomes

    def _ask(self, client: LLMClient, batch: list[_Task]) -> list[dict[str, str]]:
        """One request: the items of ``batch`` (one feedback and context) answered."""
        feedback, material = batch[0][0], batch[0][1]
        items = [self.rubric.items[k] for _, _, k in batch]
        messages = [
            {"role": "system", "content": JUDGE_SYSTEM.format(task=self.rubric.task)},
            {
                "role": "user",
                "content": judge_user_message(self.rubric, json.loads(material), feedback, items),
            },
        ]
        what = f"rubric request ({self.rubric.name}, {len(items)} item{'s' * (len(items) != 1)})"
        return client.complete(messages, lambda reply: parse_answers(reply.text, len(items)), what)


def signature(config: Mapping[str, Any]) -> str:
    """The compact line identifying how a rubric score was computed (as UniMatch's and
    sacrebleu's): ``rubric_judge:0.1.0|rubric:math-feedback@1#1a2b3c4d|llm:M|prompt:P|bs:20``."""
    return "|".join(
        [
            f"rubric_judge:{__version__}",
            f"rubric:{config['rubric']}@{config['rubric_version']}#{config['rubric_digest'][:8]}",
            f"llm:{config.get('model') or 'default'}",
            f"prompt:{config['prompt_version']}",
            f"bs:{config['batch_size']}",
        ]
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def judge_feedback(
    feedback: Sequence[str],
    contexts: Sequence[Mapping[str, str]],
    rubric: str | Path | Rubric | Mapping[str, Any] = DEFAULT_RUBRIC,
    **options: Any,
) -> dict[str, Any]:
    """Rubric scores of ``feedback`` given ``contexts`` (see `RubricJudge.compute`)."""
    return RubricJudge(rubric, **options).compute(feedback, contexts)
