"""``sefora unimatch``: JSONL in, JSON result out; bad lines named."""

from __future__ import annotations

import argparse
import json

import pytest

from sefora_cli import unimatch as unimatch_cli
from unimatch_metric import UniMatchError, unimatch


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    unimatch_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["unimatch", *argv])
    return args.func(args)


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")


ROWS = [
    {"prediction": "Nice hook. Cite your sources.", "references": ["Nice hook."]},
    {"prediction": ["Vary your sentences."], "references": ["Vary your sentences.", "Typo."]},
]


def test_scores_a_file_like_the_library(tmp_path, capsys):
    data = tmp_path / "in.jsonl"
    write_jsonl(data, ROWS)
    assert run_cli([str(data), "--scorer", "exact", "--threshold", "3"]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = unimatch(
        [r["prediction"] for r in ROWS],
        [r["references"] for r in ROWS],
        scorer="exact",
        threshold=3,
    )
    assert printed == expected
    out = tmp_path / "res" / "result.json"
    assert run_cli([str(data), "--scorer", "exact", "--details", "--output", str(out)]) == 0
    assert len(json.loads(out.read_text())["details"]) == 2
    assert not list(out.parent.glob("*.tmp"))


@pytest.mark.parametrize(
    "line, error",
    [
        ("not json", "line 2: not JSON"),
        ('{"prediction": "x"}', "line 2: expected an object"),
        ('{"prediction": 3, "references": []}', "line 2: prediction"),
        ('{"prediction": "x", "references": "y"}', "line 2: references"),
    ],
)
def test_bad_line_is_named(tmp_path, line, error):
    data = tmp_path / "bad.jsonl"
    data.write_text(json.dumps(ROWS[0]) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(UniMatchError, match=error):
        run_cli([str(data), "--scorer", "exact"])


def test_missing_file(tmp_path):
    with pytest.raises(UniMatchError, match="cannot read"):
        run_cli([str(tmp_path / "none.jsonl")])


def test_every_problem_of_every_line_is_listed(tmp_path):
    data = tmp_path / "bad.jsonl"
    data.write_text(
        json.dumps(ROWS[0]) + "\n"
        '{"prediction": 3, "references": "y"}\n'
        '{"prediction": "x"}\n'
        '{"prediction": "x", "references": ["a", NaN]}\n',
        encoding="utf-8",
    )
    with pytest.raises(UniMatchError) as caught:
        run_cli([str(data), "--scorer", "exact"])
    assert caught.value.problems == [
        ("line 2: prediction", "expected a string or a list of strings"),
        ("line 2: references", "expected a list of strings"),
        ("line 3", "expected an object with 'prediction' and 'references'"),
        ("line 4: references[1]", "NaN is not a JSON number (expected a finite number)"),
    ]
    assert str(caught.value).startswith(f"{data}: 4 problems:\n  - line 2: prediction: ")
