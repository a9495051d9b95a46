"""Material for the v2 round of terse comments: short margin comments in an instructor's
register, written by writers P and Q for train paragraphs, then segmented under
segmentation-v2.md by T27 (primary) and T28 (second opinion of every text). Real instructors
rarely pair a short praise with a separate request ("Nice hook. Cite your sources."), so
the training data held few such comments, and the segmenter kept them whole.

``draw``: 100 train paragraphs whose real comments draw_comments.py drew and no round wrote
on, in a fixed hash order, half per writer -> material/v2/write_terse.jsonl (the writers see
the paragraph only, never the instructor's comments).
``seg``: every comment of raw/v2/terse_writer<W>.jsonl -> material/v2/seg_terse.jsonl
(text_id ``<item>-<writer>t<k>``, the paragraph body, the comment). Selection and assembly
only; no boundary is placed here.
Run: python labels/v2_terse.py draw|seg
"""

from __future__ import annotations

import hashlib
import sys

from v2_new_material import HERE, RAW, V2, read, write  # this folder: run as a script

WRITERS = ("P", "Q")


def draw() -> None:
    written = {
        r["item_id"]
        for path in V2.glob("write_*.jsonl")
        if path.name != "write_terse.jsonl"  # its own output: a re-run draws the same 100
        for r in read(path)
    }
    pool = [
        r
        for r in read(HERE / "material" / "paragraphs.jsonl")
        if r["part"] == "train" and r["item_id"].startswith("c") and r["item_id"] not in written
    ]
    pool.sort(key=lambda r: hashlib.sha256(f"terse:{r['item_id']}".encode()).hexdigest())
    out = [
        {"item_id": r["item_id"], "body": r["body"], "writer": WRITERS[i % 2]}
        for i, r in enumerate(sorted(pool[:100], key=lambda r: r["item_id"]))
    ]
    write(V2 / "write_terse.jsonl", out)
    print(len(out), "paragraphs")


def seg_material() -> None:
    items = {r["item_id"]: r for r in read(V2 / "write_terse.jsonl")}
    rows = [
        {
            "text_id": f"{r['item_id']}-{writer}t{k}",
            "item_id": r["item_id"],
            "writer": writer,
            "body": items[r["item_id"]]["body"],
            "text": comment,
        }
        for writer in WRITERS
        for r in read(RAW / f"terse_writer{writer}.jsonl")
        for k, comment in enumerate(r["comments"])
    ]
    write(V2 / "seg_terse.jsonl", rows)
    print(len(rows), "comments")


if __name__ == "__main__":
    {"draw": draw, "seg": seg_material}[sys.argv[1]]()
