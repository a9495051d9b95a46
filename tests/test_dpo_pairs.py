"""DPO preference pairs: all pairs with different scores, mismatched hard negatives, TRL's
format, and the ``sefora dpo-pairs`` command."""

from __future__ import annotations

import argparse
import json
from itertools import combinations

import pytest
from datasets import Dataset

from feedback_judges.dpo import ScoredFeedback, preference_pairs
from feedback_judges.errors import JudgeInputError
from sefora_cli import pairs as pairs_cli


def test_all_pairs_with_different_scores():
    # Four feedback texts for one input scored 1.0, 0.8, 0.4, 0.4: five pairs, the tie left out.
    rows = [
        ScoredFeedback("x", "f1", 1.0),
        ScoredFeedback("x", "f3", 0.4),
        ScoredFeedback("x", "f2", 0.8),
        ScoredFeedback("x", "f4", 0.4),
    ]
    pairs = preference_pairs(rows)
    assert {(p["chosen"], p["rejected"]) for p in pairs} == {
        ("f1", "f2"),
        ("f1", "f3"),
        ("f1", "f4"),
        ("f2", "f3"),
        ("f2", "f4"),
    }
    assert len(pairs) == 5 and all(p["prompt"] == "x" for p in pairs)
    assert all(set(p) == {"prompt", "chosen", "rejected"} for p in pairs)


def test_every_pair_prefers_the_higher_score_and_stays_within_its_prompt():
    rows = [
        {"prompt": f"p{i % 3}", "feedback": f"text {i}", "score": (i * 7) % 5 / 4}
        for i in range(15)
    ]
    pairs = preference_pairs(rows, metadata=True)
    score = {(r["prompt"], r["feedback"]): r["score"] for r in rows}
    for pair in pairs:
        assert score[(pair["prompt"], pair["chosen"])] > score[(pair["prompt"], pair["rejected"])]
        assert pair["score_chosen"] == score[(pair["prompt"], pair["chosen"])]
        assert pair["kind"] == "score"
    expected = sum(
        1
        for p in ("p0", "p1", "p2")
        for a, b in combinations([r for r in rows if r["prompt"] == p], 2)
        if a["score"] != b["score"]
    )
    assert len(pairs) == expected > 0


def test_identical_texts_never_pair():
    rows = [ScoredFeedback("x", "same", 1.0), ScoredFeedback("x", "same", 0.2)]
    assert preference_pairs(rows) == []


def mismatch_rows() -> list[ScoredFeedback]:
    # Two essays; per essay three goals (prompts), each with a good and a weak feedback.
    rows = []
    for essay in ("e1", "e2"):
        for goal in ("claim", "evidence", "rebuttal"):
            prompt = f"{essay}/{goal}"
            rows.append(ScoredFeedback(prompt, f"good {prompt}", 0.9, essay))
            rows.append(ScoredFeedback(prompt, f"weak {prompt}", 0.3, essay))
    return rows


def test_mismatched_hard_negatives():
    rows = mismatch_rows()
    plain = preference_pairs(rows)
    pairs = preference_pairs(rows, mismatched=True, metadata=True, seed=3)
    assert [p for p in pairs if p["kind"] == "score"] == [
        p | {"kind": "score", "score_chosen": 0.9, "score_rejected": 0.3} for p in plain
    ]
    mismatch = [p for p in pairs if p["kind"] == "mismatch"]
    # Per prompt: the 2 other goals of its essay + 1 random prompt of the other essay.
    assert len(mismatch) == 6 * 3
    for pair in mismatch:
        assert pair["chosen"] == f"good {pair['prompt']}"
        other = pair["rejected"].removeprefix("good ")
        assert other != pair["prompt"] and pair["rejected"].startswith("good ")
    same_essay = [p for p in mismatch if p["rejected"].startswith(f"good {p['prompt'][:2]}/")]
    assert len(same_essay) == 6 * 2
    # Seeded: the same seed gives the same pairs, another seed may draw others.
    assert preference_pairs(rows, mismatched=True, seed=3) == [
        {k: p[k] for k in ("prompt", "chosen", "rejected")} for p in pairs
    ]
    more = preference_pairs(rows, mismatched=True, random_negatives=3, metadata=True)
    assert sum(p["kind"] == "mismatch" for p in more) == 6 * (2 + 3)
    none = preference_pairs(rows, mismatched=True, random_negatives=0, metadata=True)
    assert sum(p["kind"] == "mismatch" for p in none) == 6 * 2


def test_ungrouped_prompts_get_random_negatives_only():
    rows = [ScoredFeedback(f"q{i}", f"answer {i}", 1.0) for i in range(4)]
    pairs = preference_pairs(rows, mismatched=True)
    assert len(pairs) == 4
    assert all(p["chosen"] == f"answer {p['prompt'][1:]}" for p in pairs)
    assert all(p["rejected"] != p["chosen"] for p in pairs)


def test_trl_formats_load_as_a_dataset():
    rows = mismatch_rows()
    standard = Dataset.from_list(preference_pairs(rows))
    assert standard.column_names == ["prompt", "chosen", "rejected"]
    chat = preference_pairs(rows, conversational=True)
    assert chat[0]["prompt"] == [{"role": "user", "content": rows[0].prompt}]
    assert chat[0]["chosen"] == [{"role": "assistant", "content": rows[0].feedback}]
    assert chat[0]["rejected"] == [{"role": "assistant", "content": rows[1].feedback}]
    assert Dataset.from_list(chat).column_names == ["prompt", "chosen", "rejected"]


@pytest.mark.parametrize(
    "row, message",
    [
        ({"prompt": "x", "feedback": "f", "score": None}, r"items\[0\]: score: expected a finite"),
        ({"prompt": "x", "feedback": "f", "score": True}, r"items\[0\]: score"),
        ({"prompt": "x", "feedback": "f", "score": float("nan")}, r"items\[0\]: score"),
        ({"prompt": "", "feedback": "f", "score": 1}, r"items\[0\]: prompt"),
        ({"prompt": "x", "feedback": "f", "score": 1, "group": 3}, r"items\[0\]: group"),
    ],
)
def test_bad_items(row, message):
    with pytest.raises(ValueError, match=message):
        preference_pairs([row])


def test_a_prompt_in_two_groups_is_an_error():
    rows = [ScoredFeedback("x", "a", 1, "g1"), ScoredFeedback("x", "b", 0, "g2")]
    with pytest.raises(ValueError, match="several groups"):
        preference_pairs(rows)
    with pytest.raises(ValueError, match="random_negatives"):
        preference_pairs([], random_negatives=-1)


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    pairs_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["dpo-pairs", *argv])
    return args.func(args)


def test_cli_with_renamed_fields(tmp_path, capsys):
    source = tmp_path / "scored.jsonl"
    rows = [
        {"essay": r.group, "input": r.prompt, "text": r.feedback, "f1": r.score}
        for r in mismatch_rows()
    ]
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    out = tmp_path / "pairs" / "dpo.jsonl"
    argv = [str(source), "--out", str(out), "--prompt-field", "input"]
    argv += ["--feedback-field", "text", "--score-field", "f1", "--group-field", "essay"]
    assert run_cli([*argv, "--mismatched"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary == {
        "out": str(out),
        "feedback": 12,
        "prompts": 6,
        "pairs": 6 + 18,
        "score_pairs": 6,
        "mismatch_pairs": 18,
    }
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert written == preference_pairs(mismatch_rows(), mismatched=True)
    assert [p.name for p in out.parent.iterdir()] == ["dpo.jsonl"]  # no temp file left
    assert run_cli([*argv, "--metadata", "--conversational"]) == 0
    first = json.loads(out.read_text().splitlines()[0])
    assert first["kind"] == "score" and first["chosen"][0]["role"] == "assistant"


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", "line 2: not JSON"),
        ("[1, 2]", "line 2: expected a JSON object"),
        ('{"prompt": "x", "feedback": "f"}', "line 2: missing field(s) ['score']"),
        ('{"prompt": "x", "feedback": "f", "score": null}', "line 2: score: expected a finite"),
    ],
)
def test_cli_bad_lines_are_named(tmp_path, line, message):
    source = tmp_path / "scored.jsonl"
    good = json.dumps({"prompt": "x", "feedback": "g", "score": 1})
    source.write_text(f"{good}\n{line}\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    with pytest.raises(JudgeInputError) as caught:
        run_cli([str(source), "--out", str(out)])
    assert str(caught.value).startswith(f"{source}: ") and message in str(caught.value)
    assert not out.exists()


def test_registered_in_the_sefora_command(tmp_path, capsys):
    from sefora_cli.main import main

    source = tmp_path / "scored.jsonl"
    source.write_text('{"prompt": "x", "feedback": "f", "score": null}\n', encoding="utf-8")
    assert main(["dpo-pairs", str(source), "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sefora dpo-pairs: error: ") and "line 1: score" in err


def test_every_bad_line_is_listed(tmp_path, capsys):
    from sefora_cli.main import main

    source = tmp_path / "scored.jsonl"
    source.write_text(
        '{"prompt": "x", "feedback": "f", "score": null}\n'
        '{"prompt": "x", "feedback": "g", "score": 1}\n'
        '{"prompt": "x", "score": 1}\n'
        '{"prompt": "x", "feedback": "h", "score": Infinity}\n',
        encoding="utf-8",
    )
    assert main(["dpo-pairs", str(source), "--out", str(tmp_path / "o.jsonl")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"sefora dpo-pairs: error: {source}: 3 problems:",
        "  - line 1: score: expected a finite number, got None",
        "  - line 3: missing field(s) ['feedback']",
        "  - line 4: score: Infinity is not a JSON number (expected a finite number)",
    ]
