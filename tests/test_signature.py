"""The reproducibility signature (as sacrebleu prints one) in every UniMatch and rubric judge
result: what it names, that it tells differently computed figures apart and keeps equal
ones equal, and that `sefora unimatch` prints it."""

from __future__ import annotations

import json
import re

import pytest

import unimatch_metric
from sefora_cli.main import main
from sefora_common import __version__
from tests.fake_openai_server import FakeOpenAIServer, Reply, Request
from unimatch_metric.models import SCORER_FILE, SEGMENTER_FILE, model_digest
from unimatch_metric.prompts import PROMPT_VERSION, SCORE_SYSTEM, SEGMENT_SYSTEM

PRED = ["Nice hook. Cite your sources."]
REFS = [["Nice hook."]]

pytestmark = pytest.mark.usefixtures("private_cache")


def sig(**options) -> str:
    return unimatch_metric.unimatch(PRED, REFS, **options)["config"]["signature"]


def test_offline_default_names_version_model_digests_and_settings() -> None:
    fields = dict(part.split(":", 1) for part in sig().split("|"))
    assert fields == {
        "unimatch": __version__,
        "seg": f"learned@{model_digest(SEGMENTER_FILE)[:8]}",
        "score": f"learned@{model_digest(SCORER_FILE)[:8]}",
        "prompt": PROMPT_VERSION,
        "tau": "soft",
        "bs": "50",
        "refs": "units",
    }


def test_equal_options_equal_signatures_and_every_option_tells_apart() -> None:
    base = {"segmenter": "rules", "scorer": "exact"}
    assert sig(**base) == sig(**base)
    variants = [
        sig(**base),
        sig(**base, threshold=3),
        sig(**base, threshold=2.5),
        sig(**base, segment_references=False),
        sig(segmenter="rules", scorer="embedding"),
        sig(segmenter="learned", scorer="exact"),
        sig(segmenter="rules", scorer=lambda pairs: [4.0] * len(pairs)),
    ]
    assert len(set(variants)) == len(variants)
    assert "|tau:2.5|" in variants[2] and "|refs:whole" in variants[3]
    assert re.search(r"\|score:embedding@minilm-[\w.]+\|", variants[4])
    assert "|score:custom:<lambda>|" in variants[6]


def word_judge(request: Request) -> Reply:
    """Segmentation: the text as one unit; scoring: 2 for every pair."""
    if request.message("system") == SEGMENT_SYSTEM:
        return Reply(request.message("user").split("\n", 1)[1])
    assert request.message("system") == SCORE_SYSTEM
    labels = re.findall(r"^Pair (\S+)$", request.message("user"), flags=re.MULTILINE)
    return Reply(json.dumps(dict.fromkeys(labels, 2)))


def test_llm_backends_are_named_by_model(llm_options) -> None:
    assert "|seg:llm:fake-judge|score:llm:fake-judge|" in sig(**llm_options)
    assert "|seg:rules|score:llm:fake-judge|" in sig(segmenter="rules", **llm_options)
    # The batch size tells the LLM scorer's figures apart (with another scorer it is unused,
    # so an error: see test_cli_ux).
    assert "|bs:10|" in sig(batch_size=10, **llm_options)
    assert sig(batch_size=10, **llm_options) != sig(**llm_options)


@pytest.fixture
def llm_options(tmp_path):
    with FakeOpenAIServer(responder=word_judge) as server:
        yield {
            "model": "fake-judge",
            "base_url": server.base_url,
            "api_key": "sk-sig",
            "cache_dir": tmp_path / "c",
        }


def test_cli_output_carries_the_signature(tmp_path, capsys) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps({"prediction": PRED[0], "references": REFS[0]}) + "\n")
    assert main(["unimatch", str(path), "--segmenter", "rules", "--scorer", "exact"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["signature"] == sig(segmenter="rules", scorer="exact")
