"""Document-level UniMatch: overall assessments against overall comments, through the
paragraph pipeline."""

from __future__ import annotations

import pytest

from unimatch_metric import unimatch
from unimatch_metric.documents import document_unimatch

COMMENT = "Strong voice throughout. Your conclusion needs a clearer final claim."


def test_overall_comment_is_segmented_like_a_paragraph_comment():
    prediction = "Your conclusion needs a clearer final claim. Check your commas."
    out = document_unimatch([prediction], [COMMENT], segmenter="rules", scorer="exact")
    assert out == unimatch([prediction], [[COMMENT]], segmenter="rules", scorer="exact")
    # Two reference units, two predicted units, one identical pair: P = R = 4/8.
    assert (out["precision"], out["recall"]) == (0.5, 0.5)
    assert out["mean_reference_units"] == 2.0


def test_inputs_are_checked():
    with pytest.raises(ValueError, match=r"overall_comments\[1\]"):
        document_unimatch(["a", "b"], [COMMENT, "  "], scorer="exact")
    with pytest.raises(TypeError, match="one item per draft"):
        document_unimatch("a", [COMMENT], scorer="exact")
    with pytest.raises(ValueError, match="differ in length"):
        document_unimatch(["a", "b"], [COMMENT], scorer="exact", segmenter="rules")
