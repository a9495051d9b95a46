"""Material for the v2 round of terse comments: short margin comments in an instructor's
register, written by writers P and Q for train paragraphs, then segmented under
segmentation-v2.md by T27 (primary) and T28 (second opinion of every text). Real instructors
rarely pair a short praise with a separate request ("Nice hook. Cite your sources."), so
the training data held few such comments, and the segmenter kept them whole.
Round 2: the shortest comments (2-10 words, often fragments), which round 1's segmenter
still kept whole ("Nice hook. Cite your sources."), written by AA and AB and segmented by
T29 (primary) and T30 (second opinion of every text).

``draw R``: 100 train paragraphs whose real comments draw_comments.py drew and no round wrote
on, in a fixed hash order, half per writer -> material/v2/write_terse.jsonl (round 1),
write_shortest.jsonl (round 2) (the writers see the paragraph only, never the instructor's
comments).
``seg R``: every comment of the round's raw/v2/terse_writer<W>.jsonl -> material/v2/
seg_terse.jsonl (round 1), seg_terse_shortest.jsonl (round 2) (text_id
``<item>-<writer>t<k>``, the paragraph body, the comment). Selection and assembly only; no
boundary is placed here.
``draw probe|seg probe``: the held-out check (`ROUNDS`).
``check R``: the shipped segmenter's agreement with the round's primary segmentation.
Run: python labels/v2_terse.py draw 2|seg 2|check probe
"""

from __future__ import annotations

import hashlib
import sys
from typing import NamedTuple

from assemble import agreement_line  # this folder: run as a script
from v2_new_material import HERE, RAW, V2, read, write


class Round(NamedTuple):
    """One round: who writes, the paragraphs file they write on, the texts file to segment,
    the part and number of paragraphs, and the primary segmentation in raw/v2."""

    writers: tuple[str, ...]
    paragraphs: str
    texts: str
    part: str
    count: int
    primary: str


#: "probe" is a held-out check, never assembled into segments.jsonl: writer AC's comments
#: on 20 validation paragraphs, segmented by T31.
ROUNDS = {
    "1": Round(("P", "Q"), "write_terse.jsonl", "seg_terse.jsonl", "train", 100, "seg_T27"),
    "2": Round(
        ("AA", "AB"), "write_shortest.jsonl", "seg_terse_shortest.jsonl", "train", 100, "seg_T29"
    ),
    "probe": Round(
        ("AC",), "write_probe.jsonl", "probe_shortest.jsonl", "validation", 20, "probe_T31"
    ),
}


def draw(round_: str) -> None:
    this = ROUNDS[round_]
    order = list(ROUNDS)  # this round's and later rounds' paragraphs: a re-run draws the same
    later = {ROUNDS[r].paragraphs for r in order[order.index(round_) :]}
    written = {
        r["item_id"]
        for path in V2.glob("write_*.jsonl")
        if path.name not in later
        for r in read(path)
    }
    pool = [
        r
        for r in read(HERE / "material" / "paragraphs.jsonl")
        if r["part"] == this.part
        and (this.part != "train" or r["item_id"].startswith("c"))
        and r["item_id"] not in written
    ]
    pool.sort(key=lambda r: hashlib.sha256(f"terse:{r['item_id']}".encode()).hexdigest())
    out = [
        {"item_id": r["item_id"], "body": r["body"], "writer": this.writers[i % len(this.writers)]}
        for i, r in enumerate(sorted(pool[: this.count], key=lambda r: r["item_id"]))
    ]
    write(V2 / this.paragraphs, out)
    print(len(out), "paragraphs")


def check(round_: str) -> None:
    """The shipped learned segmenter against the round's primary segmenter (per writer)."""
    from unimatch_metric.segmenters.learned import LearnedSegmenter

    this = ROUNDS[round_]
    gold = {r["text_id"]: r["units"] for r in read(RAW / f"{this.primary}.jsonl")}
    rows = [r for r in read(V2 / this.texts) if r["text_id"] in gold]
    found = LearnedSegmenter().segment([r["text"] for r in rows], side="instructor")
    for writer in (None, *this.writers):
        mine = [k for k, r in enumerate(rows) if writer in (None, r["writer"])]
        reference = [gold[rows[k]["text_id"]] for k in mine]
        print(agreement_line(writer or "all", reference, [list(found[k]) for k in mine]))


def seg_material(round_: str) -> None:
    this = ROUNDS[round_]
    items = {r["item_id"]: r for r in read(V2 / this.paragraphs)}
    rows = [
        {
            "text_id": f"{r['item_id']}-{writer}t{k}",
            "item_id": r["item_id"],
            "writer": writer,
            "body": items[r["item_id"]]["body"],
            "text": comment,
        }
        for writer in this.writers
        for r in read(RAW / f"terse_writer{writer}.jsonl")
        for k, comment in enumerate(r["comments"])
    ]
    write(V2 / this.texts, rows)
    print(len(rows), "comments")


if __name__ == "__main__":
    commands = {"draw": draw, "seg": seg_material, "check": check}
    if len(sys.argv) != 3 or sys.argv[1] not in commands or sys.argv[2] not in ROUNDS:
        sys.exit(f"usage: python labels/v2_terse.py {'|'.join(commands)} {'|'.join(ROUNDS)}")
    commands[sys.argv[1]](sys.argv[2])
