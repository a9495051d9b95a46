"""Feedback judges related to UniMatch: rubric checklists judged by an LLM, quadratic
weighted kappa, and DPO preference pairs from scored feedback."""

from feedback_judges.dpo import ScoredFeedback, preference_pairs
from feedback_judges.errors import JudgeError, RubricError
from feedback_judges.judge import MODULE_PATH, RubricJudge, judge_feedback
from feedback_judges.qwk import quadratic_weighted_kappa
from feedback_judges.rubric import DEFAULT_RUBRIC, Rubric, bundled_rubrics, load_rubric
from sefora_common import __version__

__all__ = [
    "DEFAULT_RUBRIC",
    "MODULE_PATH",
    "JudgeError",
    "Rubric",
    "RubricError",
    "RubricJudge",
    "ScoredFeedback",
    "bundled_rubrics",
    "judge_feedback",
    "load_rubric",
    "preference_pairs",
    "__version__",
    "quadratic_weighted_kappa",
]
