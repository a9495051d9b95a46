"""UniMatch as a training signal: reward functions in TRL's signature, a gated reward that
calls an expensive judge only when a rule says so, and ``compute_metrics`` for
``transformers.Trainer`` with flat result keys.

A reward is called as ``reward(prompts=..., completions=..., **columns)`` and returns one
float per completion (TRL's `GRPOTrainer` passes the dataset's other columns, each one value
per completion, plus ``trainer_state``, ``log_metric`` and ``log_extra``). Completions may be
plain strings or chat messages. Nothing here imports TRL or transformers.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from sefora_common.errors import ToolkitError
from unimatch_metric.errors import BackendError, UniMatchInputError
from unimatch_metric.pipeline import UniMatch, is_paragraph_text

logger = logging.getLogger(__name__)

#: The per-completion UniMatch figures a reward can return.
FIGURES = ("f1", "precision", "recall")
#: The dataset column the UniMatch reward reads the references from by default (the one
#: `sefora_grid.training` writes).
REFERENCES_COLUMN = "references"
#: Keyword arguments TRL adds to every reward call besides the dataset's columns.
TRAINER_KWARGS = ("trainer_state", "log_metric", "log_extra", "completion_ids", "environments")

Outcome = float | ToolkitError


def completion_text(completion: Any) -> str:
    """The text of one completion: a string as is; chat messages (TRL's conversational
    format), the content of their assistant turns joined by newlines."""
    if isinstance(completion, str):
        return completion
    if not isinstance(completion, Sequence):
        raise TypeError(f"a completion is a string or a list of messages, got {completion!r}")
    parts = []
    for message in completion:
        if not isinstance(message, Mapping) or "content" not in message:
            raise TypeError(f"a chat message is a dict with 'content', got {message!r}")
        if message.get("role", "assistant") != "assistant":
            continue
        content = message["content"]
        if isinstance(content, str):
            parts.append(content)
        else:  # a list of typed parts: keep the text ones
            parts += [p["text"] for p in content if isinstance(p, Mapping) and "text" in p]
    return "\n".join(parts)


def group_ids(prompts: Sequence[Any] | None, n: int) -> list[int]:
    """For each completion, the index of the first completion with the same prompt (GRPO
    samples a group of completions per prompt); all distinct when no prompts are given."""
    if prompts is None:
        return list(range(n))
    first: dict[str, int] = {}
    keys = [
        p if isinstance(p, str) else json.dumps(p, sort_keys=True, default=str) for p in prompts
    ]
    return [first.setdefault(key, i) for i, key in enumerate(keys)]


def _column(columns: Mapping[str, Any], name: str, n: int) -> Sequence[Any]:
    if name not in columns:
        given = sorted(k for k in columns if k not in TRAINER_KWARGS)
        raise UniMatchInputError(
            "reward input", name, f"missing column (the dataset's columns here: {given})"
        )
    values = columns[name]
    if isinstance(values, str) or len(values) != n:
        raise UniMatchInputError(
            "reward input", name, f"expected one value per completion ({n}), got {values!r:.80}"
        )
    return values


def check_reward_options(options: Mapping[str, Any]) -> None:
    """Refuse the metric options a reward decides itself (they would be ignored)."""
    fixed = sorted({"on_error", "return_details"} & set(options))
    if fixed:
        raise TypeError(
            f"{', '.join(fixed)}: not an option of a reward (a reward returns one score per "
            "completion; a failure is raised by a plain call, and a gated reward falls back)"
        )


def offline_by_default(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with the offline segmenter and scorer unless they name backends."""
    return {"segmenter": "offline", "scorer": "offline", **options}


class Reward:
    """The base of the rewards here: TRL's call signature over `outcomes`.

    Subclasses implement ``outcomes(prompts, texts, columns)``: one score, or the error
    that prevented it (naming the completion), per text. Calling the reward raises the
    first error.
    """

    #: TRL logs a reward function's values as ``rewards/<__name__>/mean``.
    __name__: str = "reward"

    def outcomes(
        self, prompts: Sequence[Any] | None, texts: Sequence[str], columns: Mapping[str, Any]
    ) -> list[Outcome]:
        """One score per text, or the error that prevented it (in place)."""
        raise NotImplementedError

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        **columns: Any,
    ) -> list[float]:
        """One reward per completion (TRL's reward-function signature)."""
        if completions is None or isinstance(completions, str):
            raise TypeError("completions must be a list (one item per completion)")
        texts = [completion_text(c) for c in completions]
        values = []
        for outcome in self.outcomes(prompts, texts, columns):
            if isinstance(outcome, ToolkitError):
                raise outcome
            values.append(outcome)
        return values


class UniMatchReward(Reward):
    """UniMatch's per-paragraph ``figure`` (F1, precision or recall) of each completion
    against the references of its row (column ``references``).

    ``options`` are UniMatch options (see the metric card). The backends are the offline
    ones (deterministic, cached on disk) unless ``segmenter``/``scorer`` name others, e.g.
    ``"llm"`` for the paper's judge: a reward never switches to paid requests because an
    endpoint is set in the environment.
    ``extract`` maps a raw completion to the feedback to score (e.g. the "Feedback:" field
    of a V2 reply; `sefora_grid.training.feedback_extractor`). An empty completion scores 0;
    a row without references is an error. ``paragraphs`` names a column holding each row's
    paragraph text: units about another text then score 0 (the metric card's grounding).
    """

    def __init__(
        self,
        figure: str = "f1",
        references: str = REFERENCES_COLUMN,
        extract: Callable[[str], str] | None = None,
        paragraphs: str | None = None,
        **options: Any,
    ) -> None:
        if figure not in FIGURES:
            raise ValueError(f"figure must be one of {FIGURES}, got {figure!r}")
        check_reward_options(options)
        self.figure = figure
        self.references = references
        self.paragraphs = paragraphs
        self.extract = extract
        self.metric = UniMatch(**offline_by_default(options))
        self.__name__ = f"unimatch_{figure}"

    def outcomes(
        self, prompts: Sequence[Any] | None, texts: Sequence[str], columns: Mapping[str, Any]
    ) -> list[Outcome]:
        """One batched UniMatch computation; a paragraph whose backend failed gets its error."""
        references = _column(columns, self.references, len(texts))
        for i, refs in enumerate(references):
            if isinstance(refs, str) or not refs or not all(isinstance(r, str) for r in refs):
                raise UniMatchInputError(
                    f"reward column {self.references!r}",
                    f"row {i}",
                    "expected a non-empty list of reference texts",
                )
        texts_of = None
        if self.paragraphs is not None:
            texts_of = _column(columns, self.paragraphs, len(texts))
            for i, text in enumerate(texts_of):
                if not is_paragraph_text(text):
                    raise UniMatchInputError(
                        f"reward column {self.paragraphs!r}", f"row {i}", "expected a text"
                    )
        feedback = [self.extract(t) for t in texts] if self.extract else list(texts)
        result = self.metric.compute(
            feedback, references, texts_of, return_details=True, on_error="skip"
        )
        return [
            float(d[self.figure])
            if d["error"] is None
            else BackendError(f"{self.__name__}: completion {i}: {d['error']}")
            for i, d in enumerate(result["details"])
        ]


# --- gating ------------------------------------------------------------------------------


class GateRule(Protocol):
    """Which completions of a batch go to the judge."""

    def select(self, scores: Sequence[float], groups: Sequence[int], step: int) -> list[bool]:
        """For each completion (its offline score and group), whether to judge it."""
        ...

    def observe(self, judged: Sequence[float], step: int) -> None:
        """Learn from the judge's scores of this step (the adaptive rule keeps its gate)."""
        ...


@dataclass
class Band:
    """Judge the completions whose offline score lies in ``[low, high]`` (the uncertain band)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not self.low <= self.high:
            raise ValueError(f"band needs low <= high, got [{self.low}, {self.high}]")

    def select(self, scores: Sequence[float], groups: Sequence[int], step: int) -> list[bool]:
        """In the band or not."""
        return [self.low <= s <= self.high for s in scores]

    def observe(self, judged: Sequence[float], step: int) -> None:
        """Nothing to learn."""


@dataclass
class TopK:
    """Judge the ``k`` completions of each group with the highest offline scores (ties:
    the earlier completion first)."""

    k: int

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")

    def select(self, scores: Sequence[float], groups: Sequence[int], step: int) -> list[bool]:
        """The top k of every group."""
        chosen = [False] * len(scores)
        for group in dict.fromkeys(groups):
            members = [i for i, g in enumerate(groups) if g == group]
            for i in sorted(members, key=lambda i: -scores[i])[: self.k]:
                chosen[i] = True
        return chosen

    def observe(self, judged: Sequence[float], step: int) -> None:
        """Nothing to learn."""


@dataclass
class EveryN:
    """Judge every completion on steps 0, n, 2n, ... and none on the others."""

    n: int

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n must be at least 1, got {self.n}")

    def select(self, scores: Sequence[float], groups: Sequence[int], step: int) -> list[bool]:
        """All or nothing, by step."""
        return [step % self.n == 0] * len(scores)

    def observe(self, judged: Sequence[float], step: int) -> None:
        """Nothing to learn."""


@dataclass
class Adaptive:
    """RLAES's adaptive gate (AGFO): the whole batch is judged every ``period`` steps; when
    the judge's mean score is at most ``threshold`` the gate stays open (the judge scores
    every step) until a judged mean exceeds it. ``threshold=0`` is periodic judging, ``1``
    judging every step (scores in [0, 1])."""

    period: int
    threshold: float
    is_open: bool = False

    def __post_init__(self) -> None:
        if self.period < 1:
            raise ValueError(f"period must be at least 1, got {self.period}")

    def select(self, scores: Sequence[float], groups: Sequence[int], step: int) -> list[bool]:
        """All when the gate is open or a periodic check is due."""
        return [self.is_open or step % self.period == 0] * len(scores)

    def observe(self, judged: Sequence[float], step: int) -> None:
        """Open or close the gate by the judged mean (unchanged when nothing was judged)."""
        if judged:
            self.is_open = float(np.mean(judged)) <= self.threshold


@dataclass
class GateStats:
    """What a gated reward did so far: calls, completions, completions sent to the judge
    (a verdict in the judge's cache makes no request), and the judge's failures (each fell
    back to the base score)."""

    calls: int = 0
    completions: int = 0
    judged: int = 0
    judge_failures: int = 0

    def as_dict(self) -> dict[str, int]:
        """Flat counts, for logs."""
        return {
            "calls": self.calls,
            "completions": self.completions,
            "judged": self.judged,
            "judge_failures": self.judge_failures,
        }


ON_JUDGE_ERROR = ("fallback", "raise")


class GatedReward(Reward):
    """The ``base`` reward (e.g. offline UniMatch) for every completion; the ``judge`` (e.g.
    UniMatch with an LLM judge, or `feedback_judges.rewards.RubricReward`) for those the
    ``rule`` selects, its score replacing the base one (so use a judge on the base's scale).

    A completion the judge fails on keeps its base score, is counted in
    ``stats.judge_failures`` and logged (a warning with the reason); ``on_judge_error="raise"``
    raises instead. The step a rule sees is TRL's ``trainer_state.global_step`` when given,
    else the number of earlier calls. Under TRL, every call logs ``gate/judged``,
    ``gate/judge_failures`` (this batch) and ``gate/judged_total`` with ``log_metric``, and
    a ``gate`` column ("judge", "base" or "fallback" per completion) with ``log_extra``.
    """

    def __init__(
        self,
        base: Reward,
        judge: Reward,
        rule: GateRule,
        on_judge_error: str = "fallback",
        name: str | None = None,
    ) -> None:
        if on_judge_error not in ON_JUDGE_ERROR:
            raise ValueError(f"on_judge_error must be one of {ON_JUDGE_ERROR}: {on_judge_error!r}")
        self.base = base
        self.judge = judge
        self.rule = rule
        self.on_judge_error = on_judge_error
        self.stats = GateStats()
        self.__name__ = name or f"gated_{base.__name__}"

    def outcomes(
        self, prompts: Sequence[Any] | None, texts: Sequence[str], columns: Mapping[str, Any]
    ) -> list[Outcome]:
        """Base scores, the selected ones replaced by the judge's where it succeeded."""
        n = len(texts)
        base = self.base.outcomes(prompts, texts, columns)
        failed_base = next((o for o in base if isinstance(o, ToolkitError)), None)
        if failed_base is not None:
            return base
        scores = [float(o) for o in base]  # type: ignore[arg-type]  # no error, checked above
        state = columns.get("trainer_state")
        step = int(state.global_step) if state is not None else self.stats.calls
        chosen = [
            i
            for i, pick in enumerate(self.rule.select(scores, group_ids(prompts, n), step))
            if pick
        ]
        values: list[Outcome] = list(scores)
        labels = ["base"] * n
        judged_scores: list[float] = []
        failures = 0
        if chosen:
            sub_columns = {
                key: [value[i] for i in chosen]
                if key not in TRAINER_KWARGS
                and isinstance(value, Sequence)
                and not isinstance(value, str)
                and len(value) == n
                else value
                for key, value in columns.items()
            }
            sub_prompts = None if prompts is None else [prompts[i] for i in chosen]
            verdicts = self.judge.outcomes(sub_prompts, [texts[i] for i in chosen], sub_columns)
            for i, verdict in zip(chosen, verdicts, strict=True):
                if isinstance(verdict, ToolkitError):
                    if self.on_judge_error == "raise":
                        raise verdict
                    failures += 1
                    labels[i] = "fallback"
                    logger.warning(
                        "%s: the judge failed on completion %d at step %d; its base score "
                        "%.4f is used: %s",
                        self.__name__, i, step, scores[i], verdict,
                    )  # fmt: skip
                    continue
                values[i] = float(verdict)
                labels[i] = "judge"
                judged_scores.append(float(verdict))
        self.rule.observe(judged_scores, step)
        self.stats.calls += 1
        self.stats.completions += n
        self.stats.judged += len(chosen)
        self.stats.judge_failures += failures
        log_metric = columns.get("log_metric")
        if callable(log_metric):
            log_metric("gate/judged", float(len(chosen)))
            log_metric("gate/judge_failures", float(failures))
            log_metric("gate/judged_total", float(self.stats.judged))
        log_extra = columns.get("log_extra")
        if callable(log_extra):
            log_extra("gate", labels)
        return values


# --- transformers.Trainer ----------------------------------------------------------------


def flat_figures(result: Mapping[str, Any], prefix: str = "unimatch_") -> dict[str, float]:
    """The numeric figures of a UniMatch result under flat keys (``config`` and ``details``
    dropped, undefined figures left out), as trainers' loggers want them."""
    return {
        f"{prefix}{key}": float(value)
        for key, value in result.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    }


class TrainerMetrics:
    """``compute_metrics`` for a `transformers.Trainer` over a causal LM: the model's
    teacher-forced predictions at the label positions, decoded, scored with UniMatch against
    ``references`` (one list per evaluation example, in the evaluation dataset's order).

    Pass ``preprocess_logits_for_metrics=TrainerMetrics.argmax`` too, so the trainer keeps
    token ids rather than whole logits. Returns flat keys (``unimatch_f1``, ...; the trainer
    adds ``eval_``); the backends are offline unless named, as for `UniMatchReward`.
    ``shift=False`` for predictions already aligned with the labels (e.g. a
    seq2seq model's generations).
    """

    def __init__(
        self,
        tokenizer: Any,
        references: Sequence[Sequence[str]],
        prefix: str = "unimatch_",
        shift: bool = True,
        **options: Any,
    ) -> None:
        self.tokenizer = tokenizer
        self.references = [list(r) for r in references]
        self.prefix = prefix
        self.shift = shift
        self.metric = UniMatch(**offline_by_default(options))

    @staticmethod
    def argmax(logits: Any, labels: Any) -> Any:
        """The predicted token ids (for ``preprocess_logits_for_metrics``)."""
        if isinstance(logits, tuple):
            logits = logits[0]
        return logits.argmax(dim=-1)

    def texts(self, predictions: Any, label_ids: Any) -> list[str]:
        """The decoded prediction of each example at its label positions."""
        predictions = predictions[0] if isinstance(predictions, tuple) else predictions
        predictions, labels = np.asarray(predictions), np.asarray(label_ids)
        if predictions.ndim == 3:
            predictions = predictions.argmax(axis=-1)
        out = []
        for pred, label in zip(predictions, labels, strict=True):
            if self.shift:  # a causal LM's position t predicts token t + 1
                pred, label = pred[:-1], label[1:]
            keep = label != -100
            out.append(self.tokenizer.decode(pred[keep].tolist(), skip_special_tokens=True))
        return out

    def __call__(self, eval_prediction: Any) -> dict[str, float]:
        """The flat UniMatch figures of one evaluation."""
        texts = self.texts(eval_prediction.predictions, eval_prediction.label_ids)
        if len(texts) != len(self.references):
            raise ValueError(
                f"{len(texts)} evaluation examples but {len(self.references)} reference lists: "
                "give the references of the evaluation dataset, in its order"
            )
        return flat_figures(self.metric.compute(texts, self.references), self.prefix)
