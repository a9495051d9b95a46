"""UniMatch at document level: an overall assessment of a whole draft against the
instructor's overall comment on it.

Both sides are segmented into feedback units, every pair is scored and the units are
matched, exactly as for a paragraph (`unimatch_metric.pipeline`); only the inputs differ:
one overall comment per draft (the ``overall_comment`` of the ``drafts`` config) instead
of a paragraph's inline comments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from unimatch_metric.pipeline import UniMatch


def document_unimatch(
    predictions: Sequence[str], overall_comments: Sequence[str], **options: Any
) -> dict[str, Any]:
    """UniMatch of generated overall assessments against the instructors' overall comments.

    ``predictions[i]`` and ``overall_comments[i]`` are about the same draft; ``options``
    are UniMatch's (scorer, segmenter, threshold, ...). Returns `UniMatch.compute`'s output.
    """
    if isinstance(overall_comments, str) or isinstance(predictions, str):
        raise TypeError("predictions and overall_comments must be lists (one item per draft)")
    for i, comment in enumerate(overall_comments):
        if not isinstance(comment, str) or not comment.strip():
            raise ValueError(f"overall_comments[{i}] must be a non-empty string")
    return UniMatch(**options).compute(list(predictions), [[c] for c in overall_comments])
