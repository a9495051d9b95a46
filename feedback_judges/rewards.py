"""The rubric judge as a reward in TRL's signature (see `unimatch_metric.rewards`): the
weighted fraction of a rubric's items the feedback satisfies, judged by an LLM."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from feedback_judges.errors import JudgeInputError, JudgeRequestError
from feedback_judges.judge import RubricJudge
from feedback_judges.rubric import DEFAULT_RUBRIC, Rubric
from unimatch_metric.rewards import TRAINER_KWARGS, Outcome, Reward, check_reward_options

#: Where the bundled essay rubric's material comes from in `sefora_grid.training`'s view.
DEFAULT_CONTEXT_COLUMNS = {"essay": "draft_text", "prompt": "assignment_text"}


class RubricReward(Reward):
    """The rubric judge's score (0-1, see `Rubric.score`) of each completion.

    ``context_columns`` maps each context field of the rubric to the dataset column that
    holds it (e.g. ``{"essay": "draft_text"}``); an empty value of an optional field is
    left out. ``options`` are the judge's (``model``, ``base_url``, ``api_key``,
    ``batch_size``, ``cache_dir``, ...). An empty completion scores 0 without a request; a
    failed judgement is returned as its error (`GatedReward` falls back, a plain call
    raises it).
    """

    def __init__(
        self,
        rubric: str | Path | Rubric | Mapping[str, Any] = DEFAULT_RUBRIC,
        context_columns: Mapping[str, str] | None = None,
        extract: Callable[[str], str] | None = None,
        **options: Any,
    ) -> None:
        check_reward_options(options)
        self.judge = RubricJudge(rubric, **options)
        self.context_columns = dict(context_columns or DEFAULT_CONTEXT_COLUMNS)
        fields = {c.name for c in self.judge.rubric.context}
        unknown = sorted(set(self.context_columns) - fields)
        if unknown:
            raise ValueError(
                f"context_columns name field(s) {unknown} that rubric "
                f"{self.judge.rubric.name!r} does not have (its fields: {sorted(fields)})"
            )
        self.extract = extract
        self.__name__ = f"rubric_{self.judge.rubric.name}".replace("-", "_")

    def outcomes(
        self, prompts: Sequence[Any] | None, texts: Sequence[str], columns: Mapping[str, Any]
    ) -> list[Outcome]:
        """One batch of judge requests for the non-empty completions."""
        n = len(texts)
        material: dict[str, Sequence[Any]] = {}
        for field, column in self.context_columns.items():
            values = columns.get(column)
            if column in TRAINER_KWARGS or values is None or len(values) != n:
                raise JudgeInputError(
                    "reward input", column, f"missing column (one value per completion, {n})"
                )
            material[field] = values
        contexts = [{f: v[i] for f, v in material.items() if v[i]} for i in range(n)]
        feedback = [self.extract(t) if self.extract else t for t in texts]
        todo = [i for i, f in enumerate(feedback) if f.strip()]
        outcomes: list[Outcome] = [0.0] * n
        if todo:
            result = self.judge.compute(
                [feedback[i] for i in todo],
                [contexts[i] for i in todo],
                on_error="skip",
                return_details=True,
            )
            for i, detail in zip(todo, result["details"], strict=True):
                outcomes[i] = (
                    float(detail["score"])
                    if detail["error"] is None
                    else JudgeRequestError(f"{self.__name__}: completion {i}: {detail['error']}")
                )
        return outcomes
