"""One base error per package, all under ToolkitError, with the specific kinds the callers
catch: backend failure, bad input (naming file and field), missing model file."""

from __future__ import annotations

import json
import pickle

import pytest

from feedback_judges.errors import (
    JudgeError,
    JudgeInputError,
    JudgeOptionError,
    JudgeRequestError,
    RubricError,
)
from sefora_common.errors import InputError, OptionError, OutputError, ToolkitError
from sefora_common.jsonl import read_jsonl
from sefora_dataset.errors import CorpusError, ParseError, SeforaError
from sefora_grid.errors import ConfigError, GenerationError, GridError, GridInputError
from sefora_llm.errors import LLMRequestError
from unimatch_metric.errors import (
    BackendError,
    ModelFileError,
    UniMatchError,
    UniMatchInputError,
    UniMatchOptionError,
)
from unimatch_metric.segmenters.learned import LearnedSegmenter


@pytest.mark.parametrize(
    ("error", "bases"),
    [
        (CorpusError, (SeforaError, InputError)),
        (ParseError, (SeforaError,)),
        (BackendError, (UniMatchError, LLMRequestError)),
        (UniMatchInputError, (UniMatchError, InputError)),
        (ModelFileError, (UniMatchError,)),
        (UniMatchOptionError, (UniMatchError, OptionError, ValueError)),
        (JudgeOptionError, (JudgeError, OptionError, ValueError)),
        (OutputError, (ToolkitError,)),
        (JudgeRequestError, (JudgeError, LLMRequestError)),
        (RubricError, (JudgeInputError, InputError)),
        (GenerationError, (GridError, LLMRequestError)),
        (GridInputError, (GridError, InputError)),
        (ConfigError, (GridError,)),
    ],
)
def test_hierarchy(error, bases):
    assert all(issubclass(error, base) for base in (*bases, ToolkitError))


def test_a_bad_jsonl_line_names_file_and_line_and_keeps_its_cause(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"a": 1}) + "\n\n{broken\n", encoding="utf-8")
    with pytest.raises(UniMatchInputError) as caught:
        read_jsonl(path, UniMatchInputError)
    assert str(caught.value).startswith(f"{path}: line 3: not JSON")
    assert isinstance(caught.value.__cause__, json.JSONDecodeError)
    assert (caught.value.path, caught.value.field) == (str(path), "line 3")
    copy = pickle.loads(pickle.dumps(caught.value))  # crosses process boundaries intact
    assert type(copy) is UniMatchInputError and str(copy) == str(caught.value)


def test_several_problems_of_one_file_are_one_error(tmp_path):
    error = UniMatchInputError.of_problems("f.jsonl", [("line 2", "not JSON"), ("", "empty")])
    assert str(error) == "f.jsonl: 2 problems:\n  - line 2: not JSON\n  - empty"
    assert error.problems == [("line 2", "not JSON"), ("", "empty")]
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is UniMatchInputError and copy.problems == error.problems
    assert str(copy) == str(error)
    single = UniMatchInputError.of_problems("f.jsonl", [("line 2", "not JSON")])
    assert (single.field, single.message, str(single)) == (
        "line 2",
        "not JSON",
        "f.jsonl: line 2: not JSON",
    )
    output = pickle.loads(pickle.dumps(OutputError("out", "Permission denied")))
    assert str(output) == "out: cannot write: Permission denied"


def test_a_missing_model_file_is_a_model_file_error(tmp_path):
    missing = tmp_path / "segmenter.npz"
    with pytest.raises(ModelFileError, match="model file missing: .*train-offline") as caught:
        LearnedSegmenter(path=missing)
    assert isinstance(caught.value.__cause__, FileNotFoundError)
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a zip archive")
    with pytest.raises(ModelFileError, match="unreadable"):
        LearnedSegmenter(path=broken)
