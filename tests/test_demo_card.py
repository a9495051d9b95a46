"""The metric card as a Hugging Face Space card: YAML front matter a Space accepts, the
sections of a metric card, the Space's requirements, and the demo example's printed output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

import unimatch_metric
from unimatch_metric.explain import explain

MODULE = Path(unimatch_metric.MODULE_PATH)
# The colours a Space card may name (Hub Spaces configuration reference).
SPACE_COLOURS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}
REQUIRED = {
    "title": str,
    "emoji": str,
    "colorFrom": str,
    "colorTo": str,
    "sdk": str,
    "sdk_version": str,
    "app_file": str,
    "pinned": bool,
    "tags": list,
    "description": str,
    "license": str,
}


def card() -> tuple[dict, str]:
    text = (MODULE / "README.md").read_text(encoding="utf-8")
    match = re.fullmatch(r"---\n(.*?)\n---\n(.*)", text, flags=re.DOTALL)
    assert match, "the card must open with a YAML block between '---' lines"
    return yaml.safe_load(match.group(1)), match.group(2)


def test_front_matter_is_a_valid_space_config():
    meta, _ = card()
    for key, kind in REQUIRED.items():
        assert isinstance(meta.get(key), kind), f"{key} must be a {kind.__name__}"
    assert meta["sdk"] == "gradio"
    assert meta["colorFrom"] in SPACE_COLOURS and meta["colorTo"] in SPACE_COLOURS
    assert 1 <= len(meta["emoji"]) <= 2
    assert re.fullmatch(r"\d+\.\d+\.\d+", meta["sdk_version"])
    assert (MODULE / meta["app_file"]).is_file() and meta["app_file"] == "app.py"
    assert {"evaluate", "metric"} <= set(meta["tags"])
    assert meta["license"] == "apache-2.0"
    assert len(meta.get("short_description", "")) <= 60  # the Hub's limit
    assert len(meta["description"]) > 50


def test_sdk_version_is_the_installed_gradio():
    gradio = pytest.importorskip("gradio", reason="the demo needs the 'demo' extra (gradio)")
    assert card()[0]["sdk_version"] == gradio.__version__


def test_card_has_the_sections_of_a_metric_card():
    _, body = card()
    for heading in (
        "# Metric Card for UniMatch",
        "## Metric Description",
        "## How to Use",
        "### Inputs",
        "### Output Values",
        "### Examples",
        "### The Space demo",
        "## Limitations and Bias",
        "## Citation",
        "## License",
    ):
        assert re.search(rf"^{re.escape(heading)}$", body, flags=re.MULTILINE), heading
    assert "```bibtex" in body and "Pearson / Spearman" in body


def test_space_requirements_parse_and_leave_gradio_to_sdk_version():
    lines = (MODULE / "requirements.txt").read_text(encoding="utf-8").splitlines()
    requirements = [
        Requirement(line) for line in lines if line.strip() and not line.startswith(("#", "-"))
    ]
    names = {r.name for r in requirements}
    assert {"sefora-toolkit", "evaluate", "torch"} <= names
    assert "gradio" not in names
    toolkit = next(r for r in requirements if r.name == "sefora-toolkit")
    assert "local" in toolkit.extras


def test_card_demo_example_is_real_output(monkeypatch, tmp_path):
    """The card prints the reading and rows of the Space's first example: recompute them."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _, body = card()
    example = json.loads((MODULE / "examples.json").read_text(encoding="utf-8"))["examples"][0]
    assert all(comment in body for comment in example["comments"])
    result = unimatch_metric.unimatch(
        [example["feedback"]],
        [example["comments"]],
        segmenter="rules",
        scorer="embedding",
        threshold=3,
        return_details=True,
    )
    view = explain(result)
    assert repr(view.reading()) in body
    rows = [(row.kind, row.reference_index, row.prediction_index) for row in view.rows()]
    assert repr(rows) in body
    assert repr((result["precision"], result["recall"], result["f1"])) in body
