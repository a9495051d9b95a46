"""Test-wide settings and shared fixtures: never touch a hub, the shared corpus when present,
the bundled sample built once, a private score cache, options for the fake LLM server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sefora_dataset import SAMPLE_SOURCE
from tests.fake_openai_server import TEST_API_KEY

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


@pytest.fixture(scope="session")
def sample_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample corpus built once for the session (read it, never change it)."""
    from sefora_dataset.build import build_dataset

    out = tmp_path_factory.mktemp("sample") / "sefora"
    build_dataset(SAMPLE_SOURCE, out, progress=False)
    return out


@pytest.fixture
def private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A score cache of the test's own, and no LLM endpoint configured by the environment."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    for var in ("UNIMATCH_MODEL", "UNIMATCH_BASE_URL", "UNIMATCH_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def llm(server, tmp_path: Path) -> dict:
    """Options pointing an LLM backend at the module's fake ``server``, with fast retries."""
    return {
        "model": "fake-judge",
        "base_url": server.base_url,
        "api_key": TEST_API_KEY,
        "cache_dir": tmp_path / "cache",
        "backoff": 0.01,
        "max_retries": 2,
        "request_timeout": 5.0,
    }


# --- The toolkit as a user outside the repository gets it (tests/distribution.py) ---------


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory):
    """The sdist and wheel of the checkout, built once for the session."""
    from tests.distribution import build_distributions

    return build_distributions(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def metric_wheel(tmp_path_factory: pytest.TempPathFactory, dist):
    """A fresh venv with CPU torch, then the wheel with its ``local`` extra."""
    from tests.distribution import TORCH, Venv

    venv = Venv(tmp_path_factory.mktemp("metric-wheel") / "venv")
    venv.pip(TORCH)
    venv.pip(f"{dist.wheel}[local]")
    yield venv
    venv.remove()


def _space(tmp_path_factory: pytest.TempPathFactory, dist, module_path: str, name: str):
    """A module folder copied alone to an empty folder, and a fresh venv that installed
    its requirements.txt (and its card's gradio) with the wheel as the toolkit's source."""
    from tests.distribution import Venv, copy_alone, install_requirements

    root = tmp_path_factory.mktemp(name)
    folder = copy_alone(Path(module_path), root / "hub")
    venv = Venv(root / "venv")
    install_requirements(venv, folder, dist)
    return venv, folder


@pytest.fixture(scope="session")
def metric_space(tmp_path_factory: pytest.TempPathFactory, dist):
    """(venv, folder) of the UniMatch module as a Space (see `_space`)."""
    import unimatch_metric

    venv, folder = _space(tmp_path_factory, dist, unimatch_metric.MODULE_PATH, "metric-space")
    yield venv, folder
    venv.remove()


@pytest.fixture(scope="session")
def judge_space(tmp_path_factory: pytest.TempPathFactory, dist):
    """(venv, folder) of the rubric judge module as a Space: its requirements are the base
    wheel (no extra) and evaluate, so it is also the base install's environment."""
    import feedback_judges

    venv, folder = _space(tmp_path_factory, dist, feedback_judges.MODULE_PATH, "judge-space")
    yield venv, folder
    venv.remove()
