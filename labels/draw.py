"""Draw a further batch of annotation material from SEFORA's train split.

Batch 2 takes new paragraphs of the students batch 1 already covers, so every student
keeps one ``part`` (train / validation) across batches. Same criteria as batch 1: 1-4
non-empty instructor comments, 60-350 words, at most two paragraphs per essay in all.
Appends to material/paragraphs.jsonl and material/seg_instructor.jsonl.
Run: python labels/draw.py --corpus ../shared/data/SEFORA --count 120 --seed 2
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

from assemble import read_jsonl  # this folder: run as a script, like assemble.py

from sefora_dataset.build import config_rows, split_of
from sefora_dataset.read import read_corpus

HERE = Path(__file__).parent
MATERIAL = HERE / "material"


def append_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--count", type=int, default=120)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()

    items = read_jsonl(MATERIAL / "paragraphs.jsonl")
    part_of = {r["student_id"]: r["part"] for r in items}
    used = {r["paragraph_id"] for r in items}
    rows = config_rows(read_corpus(args.corpus, progress=False))["paragraphs"]
    essay_of = {r["paragraph_id"]: r["essay_id"] for split in rows.values() for r in split}
    per_essay = Counter(essay_of[r["paragraph_id"]] for r in items)
    pool = [
        r
        for split in rows.values()
        for r in split
        if split_of(r["student_id"]) == "train"
        and r["student_id"] in part_of
        and r["paragraph_id"] not in used
        and 1 <= len([c for c in r["instructor_comments"] if c.strip()]) <= 4
        and 60 <= len(r["body"].split()) <= 350
    ]
    pool.sort(key=lambda r: r["paragraph_id"])
    random.Random(args.seed).shuffle(pool)
    new: list[dict] = []
    for r in pool:
        if per_essay[r["essay_id"]] >= 2:
            continue
        per_essay[r["essay_id"]] += 1
        comments = [c for c in r["instructor_comments"] if c.strip()]
        new.append(
            {
                "item_id": f"p{len(items) + len(new):03d}",
                "paragraph_id": r["paragraph_id"],
                "student_id": r["student_id"],
                "part": part_of[r["student_id"]],
                "body": r["body"],
                "instructor_comments": comments,
            }
        )
        if len(new) == args.count:
            break
    texts = [
        {
            "text_id": f"{n['item_id']}-i{k}",
            "item_id": n["item_id"],
            "source": "instructor",
            "text": c,
        }
        for n in new
        for k, c in enumerate(n["instructor_comments"])
    ]
    append_jsonl(MATERIAL / "paragraphs.jsonl", new)
    append_jsonl(MATERIAL / "seg_instructor.jsonl", texts)
    print(f"{len(new)} paragraphs ({Counter(n['part'] for n in new)}), {len(texts)} comments")


if __name__ == "__main__":
    main()
