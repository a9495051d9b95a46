"""Material for the v2 rounds' new texts: paragraphs to write on, then texts to segment, then
pairs to score. Round 1: writers N and O (``partial`` / ``margin`` texts); round 2: writers
W and X, round 3: writers Y and Z (``blind`` / ``partial`` texts; round 3 on the paragraphs
of the instructor comments draw_comments.py drew); round 4: writers AD-AG (``blind`` /
``most`` texts), round 5: writers AH-AK (``partial`` / ``most`` texts), round 6: writers
AL-AO (``blind`` / ``partial`` texts), round 7: writers AP-AS (``blind`` / ``most`` texts),
all four on the paragraphs of the comments draw_comments.py --random drew.

``draw R``: 120 train paragraphs not yet written on (their instructor comments segmented
under v2), fixed hash order, shared in turn by the round's writers ->
material/v2/write_more.jsonl (round 2), write_comments.jsonl (round 3), write_random.jsonl
(round 4), write_random2.jsonl (round 5), write_random3.jsonl (round 6), write_random4.jsonl
(round 7).
``seg W``: every text of raw/v2/feedback_writer<W>.jsonl -> material/v2/seg_new_<W>.jsonl
(text_id ``<item>-<writer>-<style>``, the paragraph body, the text).
``pairs R``: after round R's segmentation (round 1: raw/v2/seg_T4.jsonl for N, seg_T5.jsonl
for O; round 2: seg_T11.jsonl for W, seg_T12.jsonl for X; round 3: T18, T19; round 4:
T50-T53; round 5: T55-T58; round 6: T65-T68; round 7: T70-T73), every (instructor unit x new
unit) pair of an item, the instructor units taken from the round's v2 segmentations (T1;
round 3: T6-T9, T13-T16; rounds 4-7: T35-T38, T40-T43) -> material/v2/score_new_chunk*.jsonl
(whole items per chunk, the rescore format; round 1 chunks 1-2, round 2 chunks 3-6, round 3
chunks 7-10, round 4 chunks 11-14, round 5 chunks 15-18, round 6 chunks 19-22, round 7
chunks 23-26). Selection and assembly only; no boundary or score is produced here.
``segdouble R``: ten texts of each of round R's writers -> double_seg_new<R>.jsonl, for a
second segmenter.
``double R``: four items of each of round R's score chunks -> score_new_double<R>.jsonl, for
a second annotator.
Run: python labels/v2_new_material.py draw 4|seg AD|segdouble 4|pairs 4|double 4
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
V2 = HERE / "material" / "v2"
RAW = HERE / "raw" / "v2"
#: The segmenters of the comments draw_comments.py --random drew (rounds 4-7 write on their
#: paragraphs, and their pairs take these instructor units).
RANDOM_COMMENTS = ("T35", "T36", "T37", "T38", "T40", "T41", "T42", "T43")
#: Per round: the paragraphs file, each writer's segmenter, the first score chunk, chunks,
#: and whose v2 segmentations of the instructor comments the pairs take.
ROUNDS = {
    "1": ("write_partial.jsonl", {"N": "T4", "O": "T5"}, 1, 2, ("T1",)),
    "2": ("write_more.jsonl", {"W": "T11", "X": "T12"}, 3, 4, ("T1",)),
    "3": (
        "write_comments.jsonl",
        {"Y": "T18", "Z": "T19"},
        7,
        4,
        ("T6", "T7", "T8", "T9", "T13", "T14", "T15", "T16"),
    ),
    "4": (
        "write_random.jsonl",
        {"AD": "T50", "AE": "T51", "AF": "T52", "AG": "T53"},
        11,
        4,
        RANDOM_COMMENTS,
    ),
    "5": (
        "write_random2.jsonl",
        {"AH": "T55", "AI": "T56", "AJ": "T57", "AK": "T58"},
        15,
        4,
        RANDOM_COMMENTS,
    ),
    "6": (
        "write_random3.jsonl",
        {"AL": "T65", "AM": "T66", "AN": "T67", "AO": "T68"},
        19,
        4,
        RANDOM_COMMENTS,
    ),
    "7": (
        "write_random4.jsonl",
        {"AP": "T70", "AQ": "T71", "AR": "T72", "AS": "T73"},
        23,
        4,
        RANDOM_COMMENTS,
    ),
}


#: Paragraphs skipped at the head of a round's draw: round 4's first draw (two writers) was
#: replaced, before anything was written on it, by the next 120 for four writers.
SKIP = {"4": 120}


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def write(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def draw(round_: str) -> None:
    """A round's 120 paragraphs: train items whose instructor comments the round's
    segmenters split under v2, none written on in an earlier round (round 3: the paragraphs of the
    comments draw_comments.py drew)."""
    taken = {
        r["item_id"]
        for r_, (name, *_) in ROUNDS.items()
        if int(r_) < int(round_) and (V2 / name).exists()
        for r in read(V2 / name)
    }
    segmented = {
        r["text_id"].rsplit("-i", 1)[0]
        for t in ROUNDS[round_][4]
        for r in read(RAW / f"seg_{t}.jsonl")
    }
    pool = [
        r
        for r in read(HERE / "material" / "paragraphs.jsonl")
        if r["part"] == "train" and r["item_id"] in segmented and r["item_id"] not in taken
    ]
    pool.sort(key=lambda r: hashlib.sha256(f"round{round_}:{r['item_id']}".encode()).hexdigest())
    writers = list(ROUNDS[round_][1])
    out = [
        {
            **{k: r[k] for k in ("item_id", "body", "instructor_comments")},
            "writer": writers[i % len(writers)],
        }
        for i, r in enumerate(sorted(pool[SKIP.get(round_, 0) :][:120], key=lambda r: r["item_id"]))
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
    name, writers, first, chunks, segmenters = ROUNDS[round_]
    items = {r["item_id"]: r for r in read(V2 / name)}
    instructor: dict[str, list[str]] = {}
    for r in (r for t in segmenters for r in read(RAW / f"seg_{t}.jsonl")):
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


def double(round_: str) -> None:
    """Four items of each of the round's score chunks (fixed hash order), to be scored again
    by a second annotator -> material/v2/score_new_double<R>.jsonl."""
    _, _, first, chunks, _ = ROUNDS[round_]
    out = []
    for n in range(first, first + chunks):
        items = read(V2 / f"score_new_chunk{n}.jsonl")
        items.sort(key=lambda r: hashlib.sha256(f"double:{r['item_id']}".encode()).hexdigest())
        out += items[:4]
    write(V2 / f"score_new_double{round_}.jsonl", out)
    print(len(out), "items,", sum(len(r["pairs"]) for r in out), "pairs")


def seg_double(round_: str) -> None:
    """Ten texts of each of the round's writers (fixed hash order), to be segmented again by
    a second annotator -> material/v2/double_seg_new<R>.jsonl."""
    out = []
    for writer in ROUNDS[round_][1]:
        rows = read(V2 / f"seg_new_{writer}.jsonl")
        rows.sort(key=lambda r: hashlib.sha256(f"double:{r['text_id']}".encode()).hexdigest())
        out += rows[:10]
    write(V2 / f"double_seg_new{round_}.jsonl", out)
    print(len(out), "texts")


if __name__ == "__main__":
    commands = {
        "draw": draw,
        "seg": seg_material,
        "pairs": pairs_material,
        "double": double,
        "segdouble": seg_double,
    }
    commands[sys.argv[1]](sys.argv[2])
