"""Material for the v2 round's new texts (writers N and O): first to segment, then to score.

``seg W``: every text of raw/v2/feedback_writer<W>.jsonl ->
material/v2/seg_new_<W>.jsonl
(text_id ``<item>-<writer>-<style>``, the paragraph body, the text).
``pairs``: after segmentation (raw/v2/seg_T4.jsonl for N, seg_T5.jsonl for O), every
(instructor unit x new unit) pair of an item, the instructor units taken from T1's v2
segmentation -> material/v2/
score_new_chunk{1,2}.jsonl (whole items per chunk, the rescore format). Selection and
assembly only; no boundary or score is produced here.
Run: python labels/v2_new_material.py seg N|seg O|pairs
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
V2 = HERE / "material" / "v2"
RAW = HERE / "raw" / "v2"


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def write(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def seg_material(writer: str) -> None:
    items = {r["item_id"]: r for r in read(V2 / "write_partial.jsonl")}
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


def pairs_material() -> None:
    items = {r["item_id"]: r for r in read(V2 / "write_partial.jsonl")}
    instructor: dict[str, list[str]] = {}
    for r in read(RAW / "seg_T1.jsonl"):
        instructor.setdefault(r["text_id"].rsplit("-i", 1)[0], []).extend(r["units"])
    new: dict[str, list[tuple[str, list[str]]]] = {}
    for r in read(RAW / "seg_T4.jsonl") + read(RAW / "seg_T5.jsonl"):
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
    half = len(out) // 2
    write(V2 / "score_new_chunk1.jsonl", out[:half])
    write(V2 / "score_new_chunk2.jsonl", out[half:])
    print(len(out), "items,", sum(len(r["pairs"]) for r in out), "pairs")


if __name__ == "__main__":
    if sys.argv[1] == "seg":
        seg_material(sys.argv[2])
    else:
        pairs_material()
