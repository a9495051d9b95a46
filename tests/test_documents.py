"""Document level: UniMatch of overall assessments against overall comments (through the
paragraph pipeline), and the budgeted document prompt."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from sefora_grid.context import ApproxCounter
from sefora_grid.documents import DocumentConfig, DocumentTarget, document_configs, prepare_document
from sefora_grid.errors import ConfigError
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


def test_document_prompt_is_budgeted_and_ids_round_trip():
    configs = document_configs()
    assert len({c.id for c in configs}) == 8
    assert all(DocumentConfig.parse(c.id) == c for c in configs)
    with pytest.raises(ConfigError, match="unknown document configuration"):
        DocumentConfig.parse("doc-guided")
    paragraphs = tuple(f"Paragraph {i} " + "word " * 300 for i in range(10))
    target = DocumentTarget("D", "E", paragraphs, "Write a memoir.", ("Focus", "Detail"))
    backend = SimpleNamespace(counter=ApproxCounter())
    item = prepare_document(DocumentConfig(), target, None, backend, 2000, 400)
    user = item.prompt.messages[1]["content"]
    assert item.prompt.prompt_tokens <= 2000 - 400 and not item.prompt.over_budget
    assert item.prompt.context.trimmed_after and user.rstrip().count("[...]") == 1
    assert "Paragraph 0" in user and "Paragraph 9" not in user  # kept from the start
    assert "graded on these rubric items: Focus; Detail." in user
    whole = prepare_document(DocumentConfig(rubric=False), target, None, backend, 20000, 400)
    assert (
        not whole.prompt.context.trimmed_after
        and "Paragraph 9" in whole.prompt.messages[1]["content"]
    )
    assert "rubric items" not in whole.prompt.messages[1]["content"]
