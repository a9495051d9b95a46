"""Material for the v2 rounds' new texts: paragraphs to write on, then texts to segment, then
pairs to score. Round 1: writers N and O (``partial`` / ``margin`` texts); round 2: writers
W and X (``blind`` / ``partial`` texts).

``draw 2``: 120 train paragraphs not yet written on (their instructor comments segmented
under v2 by T1), fixed hash order, half per writer -> material/v2/write_more.jsonl.
``seg W``: every text of raw/v2/feedback_writer<W>.jsonl -> material/v2/seg_new_<W>.jsonl
(text_id ``<item>-<writer>-<style>``, the paragraph body, the text).
``pairs R``: after round R's segmentation (round 1: raw/v2/seg_T4.jsonl for N, seg_T5.jsonl
for O; round 2: seg_T11.jsonl for W, seg_T12.jsonl for X), every (instructor unit x new
unit) pair of an item, the instructor units taken from T1's v2 segmentation ->
material/v2/score_new_chunk*.jsonl (whole items per chunk, the rescore format; round 1
chunks 1-2, round 2 chunks 3-6). Selection and assembly only; no boundary or score is
produced here.
Run: python labels/v2_new_material.py draw 2|seg W|pairs 2
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
V2 = HERE / "material" / "v2"
RAW = HERE / "raw" / "v2"
#: Per round: the paragraphs file, each writer's segmenter, the first score chunk, chunks.
ROUNDS = {
    "1": ("write_partial.jsonl", {"N": "T4", "O": "T5"}, 1, 2),
    "2": ("write_more.jsonl", {"W": "T11", "X": "T12"}, 3, 4),
}


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def write(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def draw(round_: str) -> None:
    """Round 2's paragraphs: train items with v2 instructor units, none written on before."""
    taken = {
        r["item_id"]
        for name, *_ in ROUNDS.values()
        if (V2 / name).exists()
        for r in read(V2 / name)
    }
    segmented = {r["text_id"].rsplit("-i", 1)[0] for r in read(RAW / "seg_T1.jsonl")}
    pool = [
        r
        for r in read(HERE / "material" / "paragraphs.jsonl")
        if r["part"] == "train" and r["item_id"] in segmented and r["item_id"] not in taken
    ]
    pool.sort(key=lambda r: hashlib.sha256(f"round{round_}:{r['item_id']}".encode()).hexdigest())
    writers = list(ROUNDS[round_][1])
    out = [
        {**{k: r[k] for k in ("item_id", "body", "instructor_comments")}, "writer": writers[i % 2]}
        for i, r in enumerate(sorted(pool[:120], key=lambda r: r["item_id"]))
    ]
    write(V2 / ROUNDS[round_][0], out)
    print(len(out), "paragraphs")


def seg_material(writer: str) -> None:
    name = next(n for n, writers, *_ in ROUNDS.values() if writer in writers)
    items = {r["item_id"]: r for r in read(V2 / name)}
    rows = [
        {
            "text_id": f"{f['item_id']}-{f['writer']}-{f['style']}",
            "body": items[f["item_id"]]["body"],
            "text": f["feedback"],
        }
        for f in read(RAW / f"feedback_writer{writer}.jsonl")
    ]
    write(V2 / f"seg_new_{writer}.jsonl", rows)
    print(len(rows), "texts")


def pairs_material(round_: str) -> None:
    name, writers, first, chunks = ROUNDS[round_]
    items = {r["item_id"]: r for r in read(V2 / name)}
    instructor: dict[str, list[str]] = {}
    for r in read(RAW / "seg_T1.jsonl"):
        instructor.setdefault(r["text_id"].rsplit("-i", 1)[0], []).extend(r["units"])
    new: dict[str, list[tuple[str, list[str]]]] = {}
    for r in (r for t in writers.values() for r in read(RAW / f"seg_{t}.jsonl")):
        new.setdefault(r["text_id"].split("-")[0], []).append((r["text_id"], r["units"]))
    out = []
    for item_id in sorted(new):
        a_units = instructor[item_id]
        pairs = [
            {"pair_id": f"{text_id}:A{i}:B{j}", "a": a, "b": b}
            for text_id, b_units in new[item_id]
            for i, a in enumerate(a_units, 1)
            for j, b in enumerate(b_units, 1)
        ]
        it = items[item_id]
        out.append(
            {
                "item_id": item_id,
                "body": it["body"],
                "instructor_comments": it["instructor_comments"],
                "pairs": pairs,
            }
        )
    size = -(-len(out) // chunks)
    for n in range(chunks):
        write(V2 / f"score_new_chunk{first + n}.jsonl", out[n * size : (n + 1) * size])
    print(len(out), "items,", sum(len(r["pairs"]) for r in out), "pairs")


if __name__ == "__main__":
    {"draw": draw, "seg": seg_material, "pairs": pairs_material}[sys.argv[1]](sys.argv[2])
