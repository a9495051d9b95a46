"""UniMatch on labels/e2e with annotators as its judge: how far can a scorer that follows
guideline v2 go on this set?

``draw N``: segment every candidate and its paragraph's instructor comments with the
shipped learned segmenter and write every (instructor unit, candidate unit) pair, whole
candidates in a shuffled order, to N chunks ``ceiling_chunk<k>.jsonl`` (the rescore
format: item, paragraph, comments, pairs; nothing says which kind a candidate is); it
stops where chunks exist, as the annotators' scores refer to their pair ids.
``double``: the first whole candidates of each chunk, at least ``DOUBLE_PAIRS`` pairs
per chunk, for a second annotator -> ``ceiling_double.jsonl``.
``check``: read the annotators' scores (``raw/ceiling_<annotator>.jsonl``; the second
annotator's in ``raw/ceiling_double_<annotator>.jsonl``), match the first annotators' as
UniMatch does, with and without the grounding model's verdicts, and report F1 vs the
judges next to the learned scorer on the same units, and the two annotators' agreement.
It reads the units written at ``draw`` (the segmenter of that day, digest 6724fceb), so
it measures the same pairs after the shipped segmenter changes, and stops where a chunk no
longer matches its candidate or a score names no drawn pair.

Run: python labels/e2e/ceiling.py draw 8 | double | check
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

from sefora_common import jsonl
from sefora_common.io import write_text
from unimatch_metric.grounding import Grounding
from unimatch_metric.match import match
from unimatch_metric.pipeline import unimatch
from unimatch_metric.scorers.learned import LearnedScorer
from unimatch_metric.training.validate import (
    end_to_end_agreement,
    end_to_end_interval,
    judgements,
    mean_by_kind,
    read_end_to_end,
    score_agreement,
)

E2E = Path(__file__).resolve().parent
DOUBLE_PAIRS = 65


def scored(where: str, row: dict[str, Any]) -> list[tuple[str, str]]:
    """An annotator's line needs a ``pair_id`` and a ``score`` from 0 to 4."""
    if not isinstance(row.get("pair_id"), str):
        return [(f"{where}: pair_id", "expected a string")]
    if row.get("score") not in (0, 1, 2, 3, 4):
        return [(f"{where}: score", "expected an integer from 0 to 4")]
    return []


def read(path: Path, check: jsonl.RowCheck | None = None) -> list[dict]:
    """The rows of a JSONL file (bad lines stop with the file, line and field named)."""
    return [row for _, row in jsonl.read_jsonl(path, check=check)]


def write(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` as JSONL, whole or not at all."""
    write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def units() -> tuple[list[dict], list[dict]]:
    """The candidates and UniMatch's details for each with the learned segmenter; the
    `exact` scorer, as only the units are wanted."""
    candidates = read_end_to_end(E2E)
    details = unimatch(
        [c["text"] for c in candidates],
        [c["references"] for c in candidates],
        segmenter="learned",
        scorer="exact",
        return_details=True,
    )["details"]
    return candidates, details


def draw(n_chunks: int) -> None:
    """Every candidate's unit pairs, whole candidates shuffled, in ``n_chunks`` chunks of
    about equal numbers of pairs; never over chunks already drawn (their pair ids are what
    the annotators' scores refer to)."""
    if any(E2E.glob("ceiling_chunk*.jsonl")):
        sys.exit("ceiling_chunk*.jsonl exist: the annotators' scores refer to their pairs")
    candidates, details = units()
    items = []
    for c, d in zip(candidates, details, strict=True):
        refs, preds = d["reference_units"], d["prediction_units"]
        items.append(
            {
                "item_id": c["candidate_id"],
                "body": c["paragraph"],
                "instructor_comments": c["references"],
                "reference_units": refs,
                "prediction_units": preds,
                "pairs": unit_pairs(c["candidate_id"], refs, preds),
            }
        )
    random.Random(17).shuffle(items)
    total = sum(len(i["pairs"]) for i in items)
    chunk, n, filled, size = [], 1, 0, total / n_chunks
    for item in items:
        chunk.append(item)
        filled += len(item["pairs"])
        if filled >= size and n < n_chunks:
            write(E2E / f"ceiling_chunk{n}.jsonl", chunk)
            chunk, n, filled = [], n + 1, 0
    write(E2E / f"ceiling_chunk{n}.jsonl", chunk)
    print(f"{len(items)} candidates, {total} pairs in {n} chunks")


def double() -> None:
    """The first whole candidates of each chunk, at least `DOUBLE_PAIRS` pairs per chunk."""
    out = []
    for chunk in sorted(E2E.glob("ceiling_chunk*.jsonl")):
        n = 0
        for item in read(chunk):
            if n >= DOUBLE_PAIRS:
                break
            out.append(item)
            n += len(item["pairs"])
    write(E2E / "ceiling_double.jsonl", out)
    print(f"{len(out)} candidates, {sum(len(i['pairs']) for i in out)} pairs")


def unit_pairs(candidate_id: str, refs: list[str], preds: list[str]) -> list[dict]:
    """Every (instructor unit, candidate unit) pair, its id naming both positions."""
    return [
        {"pair_id": f"{candidate_id}:A{i + 1}:B{j + 1}", "a": a, "b": b}
        for i, a in enumerate(refs)
        for j, b in enumerate(preds)
    ]


def drawn_for(item: dict, candidate: dict) -> bool:
    """Whether a chunk's item was drawn for ``candidate`` as it stands (same comments and
    paragraph) and each pair holds the units its id names."""
    return (
        item["instructor_comments"] == candidate["references"]
        and item["body"] == candidate["paragraph"]
        and item["pairs"]
        == unit_pairs(candidate["candidate_id"], item["reference_units"], item["prediction_units"])
    )


def annotator_scores(pattern: str) -> dict[str, float]:
    """Scores by pair_id from the raw files matching ``pattern``; a pair scored twice stops."""
    scores: dict[str, float] = {}
    for path in sorted(E2E.glob(pattern)):
        for r in read(path, scored):
            if r["pair_id"] in scores:
                sys.exit(f"{path.name}: {r['pair_id']} is scored in another file too")
            scores[r["pair_id"]] = float(r["score"])
    return scores


def agreement(name: str, gold: list[float], other: list[float]) -> None:
    """Print Pearson and Spearman of two lists of pair scores."""
    a = score_agreement(gold, other)
    print(f"{name}, {len(gold)} pairs: Pearson {a.pearson:.3f}, Spearman {a.spearman:.3f}")


def check() -> None:
    """F1 vs the judges with the annotators' scores and with the learned scorer's, without
    and with the paragraphs (grounding zeroes its off-paragraph units' columns, as the
    pipeline does); the scorer's and a second annotator's agreement on the pairs."""
    items = {i["item_id"]: i for k in sorted(E2E.glob("ceiling_chunk*.jsonl")) for i in read(k)}
    scores = annotator_scores("raw/ceiling_R*.jsonl")
    known = {p["pair_id"] for i in items.values() for p in i["pairs"]}
    missing, unknown = sorted(known - set(scores)), sorted(set(scores) - known)
    if missing:
        sys.exit(f"{len(missing)} pairs without an annotator's score, e.g. {missing[0]}")
    if unknown:
        sys.exit(f"{len(unknown)} scored pairs in no chunk, e.g. {unknown[0]}")
    candidates = read_end_to_end(E2E)
    drawn = [items[c["candidate_id"]] for c in candidates]
    for c, item in zip(candidates, drawn, strict=True):
        if not drawn_for(item, c):
            sys.exit(f"{c['candidate_id']}: its chunk no longer matches the candidate or its units")
    off_paragraph = Grounding().off_paragraph(
        [i["prediction_units"] for i in drawn], [c["paragraph"] for c in candidates]
    )
    pairs = [p for i in drawn for p in i["pairs"]]
    learned = dict(
        zip(
            (p["pair_id"] for p in pairs),
            LearnedScorer().score([(p["a"], p["b"]) for p in pairs]),
            strict=True,
        )
    )
    agreement(
        "learned scorer vs annotators", [scores[k] for k in learned], [learned[k] for k in learned]
    )
    second = annotator_scores("raw/ceiling_double_*.jsonl")
    both = sorted(second)
    if both:
        same = np.mean([scores[k] == second[k] for k in both])
        agreement("second annotator vs first", [scores[k] for k in both], [second[k] for k in both])
        print(f"  the same score on {same:.0%} of them")
        for name, gold in (("first", scores), ("second", second)):
            agreement(
                f"  learned scorer vs the {name} annotator on them",
                [gold[k] for k in both],
                [learned[k] for k in both],
            )
    f1: dict[str, list[float]] = {}
    for item, off in zip(drawn, off_paragraph, strict=True):
        shape = (len(item["reference_units"]), len(item["prediction_units"]))
        for name, by_pair in (("annotators", scores), ("learned scorer", learned)):
            matrix = np.asarray([by_pair[p["pair_id"]] for p in item["pairs"]]).reshape(shape)
            kept = matrix.copy()
            kept[:, off] = 0.0
            f1.setdefault(name, []).append(match(matrix).f1)
            f1.setdefault(f"{name}, given the paragraphs", []).append(match(kept).f1)
    judged = judgements(candidates)
    for name, values in f1.items():
        e = end_to_end_agreement(values, *judged)
        ci = end_to_end_interval(values, *judged)
        bounds = {k: tuple(round(x, 2) for x in v or ()) for k, v in ci.items()}
        mean = {k: round(v, 3) for k, v in mean_by_kind(values, candidates).items()}
        print(
            f"learned segmenter + {name}: pooled Pearson {e.pooled_pearson:.3f} "
            f"{bounds['pooled_pearson']}, per-paragraph Spearman "
            f"{e.mean_paragraph_spearman:.3f} {bounds['mean_paragraph_spearman']}; "
            f"mean F1 {mean}"
        )


if __name__ == "__main__":
    command = sys.argv[1:2]
    if command == ["draw"] and len(sys.argv) == 3 and sys.argv[2].isdigit() and int(sys.argv[2]):
        draw(int(sys.argv[2]))
    elif command == ["double"] and len(sys.argv) == 2:
        double()
    elif command == ["check"] and len(sys.argv) == 2:
        check()
    else:
        sys.exit(__doc__)
