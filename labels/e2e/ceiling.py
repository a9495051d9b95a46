"""UniMatch on labels/e2e with annotators as its judge: how far can a scorer that follows
guideline v2 go on this set?

``draw N``: segment every candidate and its paragraph's instructor comments with the
shipped learned segmenter and write every (instructor unit, candidate unit) pair, whole
candidates in a shuffled order, to N chunks ``ceiling_chunk<k>.jsonl`` (the rescore
format: item, paragraph, comments, pairs; nothing says which kind a candidate is).
``double``: the first whole candidates of each chunk, at least ``DOUBLE_PAIRS`` pairs
per chunk, for a second annotator -> ``ceiling_double.jsonl``.
``check``: read the annotators' scores (``raw/ceiling_<annotator>.jsonl``; the second
annotator's in ``raw/ceiling_double_<annotator>.jsonl``), match the first annotators' as
UniMatch does, with and without the grounding model's verdicts, and report F1 vs the
judges next to the learned scorer on the same units, and the two annotators' agreement.

Run: python labels/e2e/ceiling.py draw 8 | double | check
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np

from unimatch_metric.match import match
from unimatch_metric.pipeline import unimatch
from unimatch_metric.scorers.learned import LearnedScorer
from unimatch_metric.training.validate import (
    end_to_end_agreement,
    end_to_end_interval,
    read_end_to_end,
    score_agreement,
)

E2E = Path(__file__).resolve().parent
DOUBLE_PAIRS = 65


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def draw(n_chunks: int) -> None:
    candidates = read_end_to_end(E2E)
    out = unimatch(
        [c["text"] for c in candidates],
        [c["references"] for c in candidates],
        segmenter="learned",
        scorer="exact",
        return_details=True,
    )
    items = []
    for c, d in zip(candidates, out["details"], strict=True):
        refs, preds = d["reference_units"], d["prediction_units"]
        items.append(
            {
                "item_id": c["candidate_id"],
                "body": c["paragraph"],
                "instructor_comments": c["references"],
                "reference_units": refs,
                "prediction_units": preds,
                "pairs": [
                    {"pair_id": f"{c['candidate_id']}:A{i + 1}:B{j + 1}", "a": a, "b": b}
                    for i, a in enumerate(refs)
                    for j, b in enumerate(preds)
                ],
            }
        )
    random.Random(17).shuffle(items)
    total = sum(len(i["pairs"]) for i in items)
    chunk, n, size = [], 1, total / n_chunks
    for item in items:
        chunk.append(item)
        if sum(len(i["pairs"]) for i in chunk) >= size and n < n_chunks:
            write(E2E / f"ceiling_chunk{n}.jsonl", chunk)
            chunk, n = [], n + 1
    write(E2E / f"ceiling_chunk{n}.jsonl", chunk)
    print(f"{len(items)} candidates, {total} pairs in {n} chunks")


def double() -> None:
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


def annotator_scores(pattern: str) -> dict[str, float]:
    """Scores by pair_id from the raw files matching ``pattern``."""
    return {r["pair_id"]: float(r["score"]) for p in E2E.glob(pattern) for r in read(p)}


def check() -> None:
    candidates = read_end_to_end(E2E)
    items = {i["item_id"]: i for k in sorted(E2E.glob("ceiling_chunk*.jsonl")) for i in read(k)}
    scores = annotator_scores("raw/ceiling_R*.jsonl")
    missing = [
        p["pair_id"] for i in items.values() for p in i["pairs"] if p["pair_id"] not in scores
    ]
    if missing:
        sys.exit(f"{len(missing)} pairs without an annotator's score, e.g. {missing[0]}")
    second = annotator_scores("raw/ceiling_double_*.jsonl")
    if second:
        both = sorted(second)
        a = score_agreement([scores[k] for k in both], [second[k] for k in both])
        same = np.mean([scores[k] == second[k] for k in both])
        print(
            f"two annotators, {len(both)} pairs: Pearson {a.pearson:.3f}, "
            f"Spearman {a.spearman:.3f}, same score {same:.2f}"
        )
    grounded = unimatch(
        [c["text"] for c in candidates],
        [c["references"] for c in candidates],
        [c["paragraph"] for c in candidates],
        segmenter="learned",
        scorer="exact",
        return_details=True,
    )["details"]
    pairs = [(p["a"], p["b"]) for c in candidates for p in items[c["candidate_id"]]["pairs"]]
    learned = iter(LearnedScorer().score(pairs))
    f1: dict[str, list[float]] = {}
    gold, model = [], []
    for c, g in zip(candidates, grounded, strict=True):
        item = items[c["candidate_id"]]
        if g["prediction_units"] != item["prediction_units"]:
            sys.exit(f"{c['candidate_id']}: the segmenter's units changed since `draw`")
        shape = (len(item["reference_units"]), len(item["prediction_units"]))
        human = np.asarray([scores[p["pair_id"]] for p in item["pairs"]]).reshape(shape)
        machine = np.asarray([next(learned) for _ in item["pairs"]]).reshape(shape)
        gold += human.ravel().tolist()
        model += machine.ravel().tolist()
        off = list(g["off_paragraph_units"])
        for name, matrix in (("annotators", human), ("learned scorer", machine)):
            kept = matrix.copy()
            kept[:, off] = 0.0
            f1.setdefault(name, []).append(match(matrix).f1)
            f1.setdefault(f"{name}, given the paragraphs", []).append(match(kept).f1)
    agreement = score_agreement(gold, model)
    print(
        f"{len(gold)} pairs: learned scorer vs annotators Pearson {agreement.pearson:.3f}, "
        f"Spearman {agreement.spearman:.3f}"
    )
    judged = (
        [c["score"] for c in candidates],
        [c["rank"] for c in candidates],
        [c["e2e_id"] for c in candidates],
        [c["kind"] == "off_paragraph" for c in candidates],  # as `sefora validate-e2e`
    )
    for name, values in f1.items():
        e = end_to_end_agreement(values, *judged)
        ci = {
            k: tuple(round(x, 2) for x in v or ())
            for k, v in end_to_end_interval(values, *judged).items()
        }
        kinds = sorted({c["kind"] for c in candidates})
        mean = {
            k: round(
                float(
                    np.mean([v for v, c in zip(values, candidates, strict=True) if c["kind"] == k])
                ),
                3,
            )
            for k in kinds
        }
        print(
            f"learned segmenter + {name}: pooled Pearson {e.pooled_pearson:.3f} "
            f"{ci['pooled_pearson']}, per-paragraph Spearman "
            f"{e.mean_paragraph_spearman:.3f} {ci['mean_paragraph_spearman']}; mean F1 {mean}"
        )


if __name__ == "__main__":
    command = sys.argv[1:2]
    if command == ["draw"] and len(sys.argv) == 3 and sys.argv[2].isdigit():
        draw(int(sys.argv[2]))
    elif command == ["double"] and len(sys.argv) == 2:
        double()
    elif command == ["check"] and len(sys.argv) == 2:
        check()
    else:
        sys.exit(__doc__)
