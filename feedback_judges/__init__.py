"""Feedback judges related to UniMatch: rubric checklists judged by an LLM, quadratic
weighted kappa, and DPO preference pairs from scored feedback."""

from feedback_judges.rubric import (
    MODULE_PATH,
    Rubric,
    RubricError,
    RubricJudge,
    ScoredFeedback,
    bundled_rubrics,
    judge_feedback,
    load_rubric,
    preference_pairs,
    quadratic_weighted_kappa,
)

__all__ = [
    "MODULE_PATH",
    "Rubric",
    "RubricError",
    "RubricJudge",
    "ScoredFeedback",
    "bundled_rubrics",
    "judge_feedback",
    "load_rubric",
    "preference_pairs",
    "quadratic_weighted_kappa",
]
