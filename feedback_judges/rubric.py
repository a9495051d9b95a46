"""Rubric judging of feedback, quadratic weighted kappa, and DPO preference pairs.

- A `Rubric` is a checklist of binary items given as data (JSON): each item is a yes/no
  question about the feedback, with a weight, a dimension, the answer that satisfies it
  (``pass_if``), and optionally ``gate`` (failing it makes the score 0). The reward is the
  weighted fraction of satisfied items, times 0 if a gate item fails: the math-feedback
  rubric (score = correct x sum/5) and RFE-style checklists (weighted fraction) are both
  instances. Two rubrics ship in ``rubrics/``: ``math-feedback`` and ``essay-feedback``.
- `RubricJudge` asks an OpenAI-compatible LLM about ``batch_size`` items per request, parses
  the reply strictly (every item exactly once, a reason and a yes/no answer), retries
  malformed replies, keeps every reason, caches answers per item in UniMatch's cache, and
  never turns a failure into a 0: a failed example is raised or reported as failed.
- `quadratic_weighted_kappa` measures agreement of ordinal score predictions (QWK).
- `preference_pairs` turns any scored feedback set into DPO pairs in TRL's format.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from feedback_judges.errors import JudgeError, JudgeRequestError, RubricError
from sefora_llm.cache import run_cached
from sefora_llm.client import LLMClient, ReplyError, parse_json_object
from sefora_llm.options import LLMOptions

RUBRIC_DIR = Path(__file__).resolve().parent / "rubrics"
#: The folder of the ``evaluate`` module: ``evaluate.load(MODULE_PATH, "math-feedback")``.
MODULE_PATH = str(Path(__file__).resolve().parent / "rubric_judge")
DEFAULT_RUBRIC = "essay-feedback"
#: Part of every cache key of the judge: change it whenever the judge's prompt changes.
JUDGE_PROMPT_VERSION = "rubric-judge-1"
ANSWERS = ("yes", "no")


# --- rubrics as data -------------------------------------------------------------------


@dataclass(frozen=True)
class RubricItem:
    """One binary checklist item: a yes/no question whose answer ``pass_if`` satisfies it."""

    id: str
    question: str
    dimension: str
    weight: float = 1.0
    pass_if: str = "yes"
    gate: bool = False


@dataclass(frozen=True)
class ContextField:
    """A piece of material the judge sees next to the feedback (e.g. the essay)."""

    name: str
    title: str
    required: bool = True


def _fail(source: str, where: str, message: str) -> RubricError:
    return RubricError(source, where, message)


def _text(data: Mapping[str, Any], key: str, source: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _fail(source, f"{where}{key}", "expected a non-empty string")
    return value.strip()


def _keys(data: Any, allowed: set[str], source: str, where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise _fail(source, where.rstrip(".") or "", "expected an object")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise _fail(source, f"{where}{unknown[0]}", f"unknown key (allowed: {sorted(allowed)})")
    return data


def _item(data: Any, source: str, where: str) -> RubricItem:
    allowed = {"id", "question", "dimension", "weight", "pass_if", "gate"}
    data = _keys(data, allowed, source, where)
    question = _text(data, "question", source, where)
    if "\n" in question:
        raise _fail(source, f"{where}question", "must be one line")
    weight = data.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight > 0:
        raise _fail(source, f"{where}weight", f"expected a positive number, got {weight!r}")
    if not math.isfinite(weight):
        raise _fail(source, f"{where}weight", f"expected a finite number, got {weight!r}")
    pass_if = data.get("pass_if", "yes")
    if pass_if not in ANSWERS:
        raise _fail(source, f"{where}pass_if", f"expected 'yes' or 'no', got {pass_if!r}")
    gate = data.get("gate", False)
    if not isinstance(gate, bool):
        raise _fail(source, f"{where}gate", f"expected true or false, got {gate!r}")
    return RubricItem(
        id=_text(data, "id", source, where),
        question=question,
        dimension=_text(data, "dimension", source, where),
        weight=float(weight),
        pass_if=pass_if,
        gate=gate,
    )


def _context_field(data: Any, source: str, where: str) -> ContextField:
    data = _keys(data, {"name", "title", "required"}, source, where)
    required = data.get("required", True)
    if not isinstance(required, bool):
        raise _fail(source, f"{where}required", f"expected true or false, got {required!r}")
    return ContextField(
        _text(data, "name", source, where), _text(data, "title", source, where), required
    )


@dataclass(frozen=True)
class Rubric:
    """A checklist of binary items, the material the judge sees, and how they are scored."""

    name: str
    version: str
    description: str
    task: str  # one or two sentences telling the judge what the feedback was written for
    context: tuple[ContextField, ...]
    items: tuple[RubricItem, ...]

    @classmethod
    def from_dict(cls, data: Any, source: str = "<rubric>") -> Rubric:
        """A checked rubric from its JSON form; raises `RubricError` naming the bad field."""
        allowed = {"name", "version", "description", "task", "context", "items"}
        data = _keys(data, allowed, source, "")
        lists = {}
        for key in ("context", "items"):
            value = data.get(key)
            if not isinstance(value, list) or (key == "items" and not value):
                kind = "a non-empty list" if key == "items" else "a list"
                raise _fail(source, key, f"expected {kind}")
            lists[key] = value
        items = tuple(_item(d, source, f"items[{i}].") for i, d in enumerate(lists["items"]))
        context = tuple(
            _context_field(d, source, f"context[{i}].") for i, d in enumerate(lists["context"])
        )
        for kind, names in (
            ("items", [i.id for i in items]),
            ("context", [c.name for c in context]),
        ):
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise _fail(source, kind, f"repeated name(s): {', '.join(repeated)}")
        return cls(
            name=_text(data, "name", source, ""),
            version=str(data.get("version", "1")),
            description=_text(data, "description", source, ""),
            task=_text(data, "task", source, ""),
            context=context,
            items=items,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``from_dict`` inverts it)."""
        return dataclasses.asdict(self) | {
            "context": [dataclasses.asdict(c) for c in self.context],
            "items": [dataclasses.asdict(i) for i in self.items],
        }

    @property
    def digest(self) -> str:
        """A short digest of the whole rubric, recorded with results."""
        text = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    @property
    def dimensions(self) -> list[str]:
        """The item dimensions, in order of first appearance."""
        return list(dict.fromkeys(item.dimension for item in self.items))

    def satisfied(self, answers: Mapping[str, str]) -> dict[str, bool]:
        """Item id -> satisfied, from the judge's yes/no answer per item id."""
        return {item.id: answers[item.id] == item.pass_if for item in self.items}

    def score(self, satisfied: Mapping[str, bool], dimension: str | None = None) -> float:
        """The weighted fraction of satisfied items, 0 when a gate item fails; with
        ``dimension``, the plain weighted fraction of that dimension's items (no gate)."""
        if dimension is None and any(item.gate and not satisfied[item.id] for item in self.items):
            return 0.0
        chosen = [i for i in self.items if dimension is None or i.dimension == dimension]
        total = sum(i.weight for i in chosen)
        return sum(i.weight for i in chosen if satisfied[i.id]) / total

    def check_context(self, context: Any, where: str) -> dict[str, str]:
        """``context`` reduced to this rubric's fields; a missing or unknown field is an error."""
        if not isinstance(context, Mapping):
            raise TypeError(f"{where}: expected a dict of context fields, got {type(context)}")
        names = {c.name for c in self.context}
        unknown = sorted(set(context) - names)
        if unknown:
            raise ValueError(
                f"{where}: unknown context field(s) {unknown} for rubric {self.name!r} "
                f"(fields: {sorted(names)})"
            )
        out = {}
        for c in self.context:
            value = context.get(c.name)
            if value is None or (isinstance(value, str) and not value.strip()):
                if c.required:
                    raise ValueError(f"{where}: rubric {self.name!r} needs context {c.name!r}")
                continue
            if not isinstance(value, str):
                raise TypeError(f"{where}: context {c.name!r} must be a string")
            out[c.name] = value
        return out


def bundled_rubrics() -> list[str]:
    """Names of the rubrics shipped with the library."""
    return sorted(p.stem for p in RUBRIC_DIR.glob("*.json"))


def load_rubric(spec: str | Path | Rubric | Mapping[str, Any] = DEFAULT_RUBRIC) -> Rubric:
    """A rubric: a bundled name (see `bundled_rubrics`), a JSON file path, a dict, or as is."""
    if isinstance(spec, Rubric):
        return spec
    if isinstance(spec, Mapping):
        return Rubric.from_dict(spec)
    path = Path(spec)
    if str(spec) in bundled_rubrics():
        path = RUBRIC_DIR / f"{spec}.json"
    elif not path.is_file():
        raise RubricError(
            str(spec), "", f"no such file and no bundled rubric (bundled: {bundled_rubrics()})"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RubricError(str(path), "", f"not a readable JSON file ({err})") from err
    return Rubric.from_dict(data, str(path))


# --- the judge -------------------------------------------------------------------------

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

    batch_size: int = 20

    def client(self) -> LLMClient:
        """The chat client these options describe."""
        return LLMClient(self.llm_settings(), failure=JudgeRequestError)


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
        client = opts.client()
        outcomes = self._judge(feedback, contexts, opts, client)
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
                **client.config,
                "batch_size": opts.batch_size,
                "prompt_version": JUDGE_PROMPT_VERSION,
            },
        }
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
        client: LLMClient,
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
        namespace = (
            "rubric",
            client.settings.model or "",
            client.endpoint,
            JUDGE_PROMPT_VERSION,
            self.rubric.task,
        )
        pairs = zip(feedback, material, strict=True)
        tasks = list(dict.fromkeys((f, m, k) for f, m in pairs for k in range(len(items))))
        answers = dict(
            zip(
                tasks,
                run_cached(
                    namespace,
                    opts.cache(),
                    tasks,
                    lambda t: (t[1], t[0], items[t[2]].question),
                    lambda todo: self._ask_all(todo, client, opts),
                ),
                strict=True,
            )
        )
        outcomes: list[Judgement | JudgeError] = []
        for f, m in zip(feedback, material, strict=True):
            got = [answers[(f, m, k)] for k in range(len(items))]
            error = next((a for a in got if isinstance(a, JudgeError)), None)
            if error is not None:
                outcomes.append(error)
                continue
            by_id = {item.id: a for item, a in zip(items, got, strict=True)}
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

    def _ask_all(
        self, tasks: list[_Task], client: LLMClient, opts: JudgeOptions
    ) -> list[dict[str, str] | JudgeError]:
        """Answer ``tasks``: the items of one (feedback, context) go ``batch_size`` per request."""
        by_text: dict[tuple[str, str], list[int]] = defaultdict(list)
        for f, m, k in tasks:
            by_text[(f, m)].append(k)
        requests = [
            (f, m, ks[start : start + opts.batch_size])
            for (f, m), ks in by_text.items()
            for start in range(0, len(ks), opts.batch_size)
        ]
        replies = client.map(
            lambda request: self._ask(client, *request), requests, "judging", opts.progress
        )
        found: dict[_Task, dict[str, str] | JudgeError] = {}
        for (f, m, ks), reply in zip(requests, replies, strict=True):
            for n, k in enumerate(ks):
                found[(f, m, k)] = reply if isinstance(reply, JudgeError) else reply[n]
        return [found[task] for task in tasks]

    def _ask(
        self, client: LLMClient, feedback: str, material: str, indices: list[int]
    ) -> list[dict[str, str]]:
        items = [self.rubric.items[k] for k in indices]
        messages = [
            {"role": "system", "content": JUDGE_SYSTEM.format(task=self.rubric.task)},
            {
                "role": "user",
                "content": judge_user_message(self.rubric, json.loads(material), feedback, items),
            },
        ]
        what = f"rubric request ({self.rubric.name}, {len(items)} item{'s' * (len(items) != 1)})"
        return client.complete(messages, lambda reply: parse_answers(reply.text, len(items)), what)


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


# --- quadratic weighted kappa ----------------------------------------------------------


def _ratings(values: Sequence[Any], name: str) -> list[int]:
    out = []
    for i, v in enumerate(values):
        number = float(v) if isinstance(v, (int, float, np.integer, np.floating)) else math.nan
        if isinstance(v, bool) or not (math.isfinite(number) and number.is_integer()):
            raise ValueError(f"{name}[{i}] must be an integer rating, got {v!r}")
        out.append(int(number))
    return out


def quadratic_weighted_kappa(y_true: Sequence[int], y_pred: Sequence[int]) -> float:
    """Cohen's kappa with quadratic weights (QWK) between two lists of integer ratings.

    A disagreement between ratings a and b weighs (a - b)^2: the distance of the values, not
    of their ranks among the ratings seen, as in the ASAP essay-scoring benchmark (the value
    does not depend on the scale's unused end points). NaN when undefined (every rating in
    both lists is the same value).
    """
    true, pred = _ratings(y_true, "y_true"), _ratings(y_pred, "y_pred")
    if len(true) != len(pred) or not true:
        raise ValueError(f"need two non-empty lists of equal length, got {len(true)}, {len(pred)}")
    low = min(true + pred)
    size = max(true + pred) - low + 1
    observed = np.zeros((size, size))
    np.add.at(observed, (np.array(true) - low, np.array(pred) - low), 1)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / len(true)
    index = np.arange(size)
    weights = (index[:, None] - index[None, :]) ** 2
    denominator = float((weights * expected).sum())
    if denominator == 0:
        return math.nan
    return 1.0 - float((weights * observed).sum()) / denominator


# --- preference pairs ------------------------------------------------------------------


@dataclass(frozen=True)
class ScoredFeedback:
    """One feedback text for one prompt with its score; ``group`` links prompts whose feedback
    makes hard negatives for each other (e.g. the goals of one essay)."""

    prompt: str
    feedback: str
    score: float
    group: str | None = None


def scored_feedback(item: ScoredFeedback | Mapping[str, Any], where: str) -> ScoredFeedback:
    """``item`` (a `ScoredFeedback` or a dict with its fields) checked; errors name ``where``.

    Raises ValueError unless prompt and feedback are non-empty strings, the score a finite
    number (a failed judgement has none: drop or re-judge it) and the group a string or None.
    """
    if isinstance(item, ScoredFeedback):
        row = dataclasses.asdict(item)
    elif isinstance(item, Mapping):
        row = dict(item)
    else:
        raise TypeError(f"{where}: expected a ScoredFeedback or a dict")
    for key in ("prompt", "feedback"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise ValueError(f"{where}: {key}: expected a non-empty string")
    score = row.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise ValueError(f"{where}: score: expected a finite number, got {score!r}")
    group = row.get("group")
    if group is not None and not isinstance(group, str):
        raise ValueError(f"{where}: group: expected a string or null, got {group!r}")
    return ScoredFeedback(row["prompt"], row["feedback"], float(score), group)


def preference_pairs(
    items: Iterable[ScoredFeedback | Mapping[str, Any]],
    mismatched: bool = False,
    random_negatives: int = 1,
    seed: int = 0,
    conversational: bool = False,
    metadata: bool = False,
) -> list[dict[str, Any]]:
    """DPO preference pairs ``{"prompt", "chosen", "rejected"}`` (TRL's preference format).

    For each prompt, every two of its feedback texts with different scores make a pair, the
    higher-scored one chosen (identical texts never pair). With ``mismatched``, each prompt's
    best feedback is also preferred over the best feedback of every other prompt of its
    ``group`` (hard negatives: written for a neighbouring input) and over that of
    ``random_negatives`` prompts drawn from other groups (seeded by ``seed``). With
    ``conversational`` the fields are chat message lists; ``metadata`` adds ``kind``
    (``score`` or ``mismatch``), ``score_chosen`` and ``score_rejected``.
    """
    if not isinstance(random_negatives, int) or random_negatives < 0:
        raise ValueError(f"random_negatives must be an integer >= 0, got {random_negatives!r}")
    rows = [scored_feedback(item, f"items[{i}]") for i, item in enumerate(items)]
    by_prompt: dict[str, list[ScoredFeedback]] = {}
    for row in rows:
        by_prompt.setdefault(row.prompt, []).append(row)
    groups = {p: {r.group for r in rs} for p, rs in by_prompt.items()}
    for prompt, names in groups.items():
        if len(names) > 1:
            raise ValueError(f"prompt {prompt[:60]!r} is given in several groups: {names}")
    triples: list[tuple[str, ScoredFeedback, ScoredFeedback, str]] = []
    for prompt, rs in by_prompt.items():
        for a_index, a in enumerate(rs):
            for b in rs[a_index + 1 :]:
                if a.score != b.score and a.feedback != b.feedback:
                    win, lose = (a, b) if a.score > b.score else (b, a)
                    triples.append((prompt, win, lose, "score"))
    if mismatched:
        best = {p: max(rs, key=lambda r: r.score) for p, rs in by_prompt.items()}
        group_of = {p: rs[0].group for p, rs in by_prompt.items()}
        prompts = list(by_prompt)
        rng = random.Random(seed)
        for prompt in prompts:
            group = group_of[prompt]
            same = [
                q for q in prompts if q != prompt and group is not None and group_of[q] == group
            ]
            other = [q for q in prompts if q != prompt and (group is None or group_of[q] != group)]
            drawn = rng.sample(other, min(random_negatives, len(other)))
            for q in same + drawn:
                if best[q].feedback != best[prompt].feedback:
                    triples.append((prompt, best[prompt], best[q], "mismatch"))
    return [_pair(*t, conversational, metadata) for t in triples]


def _pair(
    prompt: str,
    chosen: ScoredFeedback,
    rejected: ScoredFeedback,
    kind: str,
    conversational: bool,
    metadata: bool,
) -> dict[str, Any]:
    if conversational:
        pair: dict[str, Any] = {
            "prompt": [{"role": "user", "content": prompt}],
            "chosen": [{"role": "assistant", "content": chosen.feedback}],
            "rejected": [{"role": "assistant", "content": rejected.feedback}],
        }
    else:
        pair = {"prompt": prompt, "chosen": chosen.feedback, "rejected": rejected.feedback}
    if metadata:
        pair |= {"kind": kind, "score_chosen": chosen.score, "score_rejected": rejected.score}
    return pair
