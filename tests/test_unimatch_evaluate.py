"""The `evaluate` module: loading offline, init and compute options, add/add_batch, and
evaluate's distributed mode with two real processes."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import evaluate
import pytest

import unimatch_metric
from sefora_llm.cache import CACHE_FILENAME
from unimatch_metric.errors import UniMatchOptionError

REPO = Path(__file__).resolve().parents[1]

PREDICTIONS = [
    "Nice hook. Cite your sources.",
    "Great imagery, but the ending feels rushed.",
    "The thesis is unclear.",
    "Wow. Yes.",
    "Vary your sentence length.",
]
REFERENCES = [
    ["Nice hook."],
    ["The ending feels rushed.", "Great imagery"],
    ["Clarify your thesis in the first sentence."],
    [],
    ["Vary your sentence length.", "Check the comma splice."],
]


pytestmark = pytest.mark.usefixtures("private_cache")


def test_module_path_and_relative_load(monkeypatch, tmp_path):
    assert Path(unimatch_metric.MODULE_PATH, "unimatch.py").is_file()
    monkeypatch.chdir(REPO)
    metric = evaluate.load("unimatch_metric/unimatch", scorer="exact", cache_dir=str(tmp_path))
    assert metric.name == "unimatch"
    assert "macro averages (means over paragraphs)" in metric.description


def test_compute_matches_library_and_init_kwargs_are_defaults(tmp_path):
    metric = evaluate.load(
        unimatch_metric.MODULE_PATH, scorer="exact", threshold=2, cache_dir=str(tmp_path)
    )
    out = metric.compute(predictions=PREDICTIONS, references=REFERENCES)
    assert out == unimatch_metric.unimatch(PREDICTIONS, REFERENCES, scorer="exact", threshold=2)
    assert out["config"]["threshold"] == 2
    assert out["config"]["scorer"]["name"] == "exact"
    soft = metric.compute(
        predictions=PREDICTIONS, references=REFERENCES, threshold=None, return_details=True
    )
    assert soft["config"]["threshold"] is None and len(soft["details"]) == 5


def test_add_batch_and_add_equal_one_compute(tmp_path):
    metric = evaluate.load(unimatch_metric.MODULE_PATH, scorer="exact", cache_dir=str(tmp_path))
    expected = metric.compute(predictions=PREDICTIONS, references=REFERENCES)
    metric.add_batch(predictions=PREDICTIONS[:2], references=REFERENCES[:2])
    metric.add(prediction=PREDICTIONS[2], reference=REFERENCES[2])
    metric.add_batch(predictions=PREDICTIONS[3:], references=REFERENCES[3:])
    assert metric.compute() == expected


@pytest.mark.parametrize(
    "options, message",
    [
        ({"scorer": "learnd"}, "unknown scorer 'learnd'; choose one of: auto, offline"),
        ({"segmenter": "rule"}, "unknown segmenter 'rule'"),
        ({"threshold": 0}, r"threshold must be in \(0, 4\], got 0"),
        ({"threshold": "3"}, r"threshold must be in \(0, 4\], got '3'"),
        ({"on_error": "ignore"}, "on_error must be one of"),
        ({"concurrency": 0}, "concurrency must be an integer >= 1"),
        ({"scorer": "exact", "segmenter": "rules", "model": "m"}, "option\\(s\\) model would be"),
        ({"scorer": "learned", "batch_size": 10}, "batch_size would be ignored"),
    ],
)
def test_options_are_checked_by_evaluate_load(tmp_path, options, message):
    # #18 item 10: `scorer="learnd"` used to be accepted here and fail at the first
    # compute(), after an epoch of training.
    with pytest.raises(UniMatchOptionError, match=message):
        evaluate.load(unimatch_metric.MODULE_PATH, cache_dir=str(tmp_path), **options)


def test_compute_options_are_checked_too(tmp_path):
    metric = evaluate.load(unimatch_metric.MODULE_PATH, scorer="exact", cache_dir=str(tmp_path))
    with pytest.raises(UniMatchOptionError, match="unknown scorer 'nope'"):
        metric.compute(predictions=["a"], references=[["a"]], scorer="nope")


def test_empty_input_gives_the_empty_result(tmp_path):
    metric = evaluate.load(unimatch_metric.MODULE_PATH, scorer="exact", cache_dir=str(tmp_path))
    out = metric.compute(predictions=[], references=[])  # was an IndexError inside evaluate
    assert out == unimatch_metric.unimatch([], [], scorer="exact")
    assert out["n_examples"] == 0 and out["n_failed"] == 0 and out["f1"] is None
    metric.add_batch(predictions=[], references=[])  # adds nothing, and fails nothing
    metric.add_batch(predictions=PREDICTIONS[:1], references=REFERENCES[:1])
    assert metric.compute()["n_examples"] == 1


@pytest.mark.parametrize(
    "predictions, references, message",
    [
        (
            ["a", None],
            [["a"], ["b"]],
            r"predictions\[1\] must be a string or a list of strings, got None",
        ),
        ([["a", None]], [["a"]], r"predictions\[0\]\[1\] must be a string, got None"),
        (["a", "b"], [["a"], ["b", None]], r"references\[1\]\[1\] must be a string, got None"),
        (["a"], [None], r"references\[0\] must be a list of strings .*got None"),
        ([3], [["a"]], r"predictions\[0\] must be a string or a list of strings, got int"),
        (["a"], [["a"], ["b"]], "differ in length: 1 != 2"),
    ],
)
@pytest.mark.parametrize("how", ["compute", "add_batch"])
def test_a_bad_item_is_named_by_its_index(tmp_path, predictions, references, message, how):
    metric = evaluate.load(unimatch_metric.MODULE_PATH, scorer="exact", cache_dir=str(tmp_path))
    with pytest.raises((TypeError, ValueError), match=message):
        getattr(metric, how)(predictions=predictions, references=references)
    assert len(metric) == 0  # nothing half-added
    with pytest.raises(TypeError, match=r"predictions\[0\] must be a string"):
        metric.add(prediction=None, reference=["a"])


def test_ready_units_as_predictions(tmp_path):
    metric = evaluate.load(unimatch_metric.MODULE_PATH, scorer="exact", cache_dir=str(tmp_path))
    out = metric.compute(
        predictions=[["Nice hook.", "Cite your sources."]], references=[["Nice hook."]]
    )
    assert (out["precision"], out["recall"]) == (0.5, 1.0)


def test_offline_default_end_to_end(tmp_path):
    metric = evaluate.load(unimatch_metric.MODULE_PATH, cache_dir=str(tmp_path))
    out = metric.compute(predictions=PREDICTIONS, references=REFERENCES, return_details=True)
    assert out["config"]["scorer"]["name"] == "learned"
    assert out["config"]["segmenter"]["name"] == "learned"
    assert out["n_examples"] == 5 and out["n_failed"] == 0
    assert 0 < out["f1"] < 1
    # The identical unit pair scores 4; evaluate's cache_dir also holds the score cache.
    assert out["details"][4]["matches"][0][:2] == [0, 0]
    assert out["details"][4]["scores"][0][0] == pytest.approx(4.0)
    assert (tmp_path / CACHE_FILENAME).is_file()


def _distributed_worker(process_id, cache_dir, predictions, references, queue):
    metric = evaluate.load(
        unimatch_metric.MODULE_PATH,
        num_process=2,
        process_id=process_id,
        experiment_id="unimatch-distributed-test",
        cache_dir=cache_dir,
        segmenter="rules",
        scorer="exact",
    )
    metric.add_batch(predictions=predictions, references=references)
    queue.put((process_id, metric.compute()))


def test_distributed_two_processes_equal_one(tmp_path):
    # fork: the workers reuse the loaded libraries. They must never touch torch (the rules
    # segmenter and exact scorer), since torch's thread pool does not survive a fork.
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    halves = [(PREDICTIONS[:3], REFERENCES[:3]), (PREDICTIONS[3:], REFERENCES[3:])]
    procs = [
        ctx.Process(target=_distributed_worker, args=(i, str(tmp_path), *halves[i], queue))
        for i in range(2)
    ]
    for proc in procs:
        proc.start()
    results = dict(queue.get(timeout=120) for _ in procs)
    for proc in procs:
        proc.join(60)
    assert [proc.exitcode for proc in procs] == [0, 0]
    assert results[1] is None  # only process 0 gets the result
    single = evaluate.load(
        unimatch_metric.MODULE_PATH, segmenter="rules", scorer="exact", cache_dir=str(tmp_path)
    )
    assert results[0] == single.compute(predictions=PREDICTIONS, references=REFERENCES)
    assert results[0]["n_examples"] == 5


def test_metric_card_front_matter():
    import yaml

    card = Path(unimatch_metric.MODULE_PATH, "README.md").read_text(encoding="utf-8")
    _, front, body = card.split("---\n", 2)
    meta = yaml.safe_load(front)
    for key in ("title", "emoji", "colorFrom", "colorTo", "sdk_version", "description"):
        assert meta[key], key
    assert meta["sdk"] == "gradio" and meta["pinned"] is False
    assert {"evaluate", "metric"} <= set(meta["tags"])
    assert Path(unimatch_metric.MODULE_PATH, meta["app_file"]).is_file()
    assert Path(unimatch_metric.MODULE_PATH, "requirements.txt").is_file()
    assert "macro" in body and "@article{oskoui2026sefora" in body
