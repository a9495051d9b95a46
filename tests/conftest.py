"""Test-wide settings: never touch a hub, and locate the shared corpus when present."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_EVALUATE_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SHARED_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "SEFORA"


@pytest.fixture(scope="session")
def sefora_corpus() -> Path:
    """The published corpus at ../shared/data/SEFORA, or a skip when it is absent."""
    if not SHARED_CORPUS.is_dir():
        pytest.skip(f"shared SEFORA corpus not found at {SHARED_CORPUS}")
    return SHARED_CORPUS
