"""Draw the end-to-end validation paragraphs from SEFORA students of the validation and
test splits (never in labels/ training or validation): 1-5 non-empty instructor comments,
50-350 words, at most two paragraphs per essay, fixed seed. The first 48 (e000-e047) are
the first batch; a larger COUNT keeps them and draws on in the same order (the second
batch, e048-e095, is COUNT 96). Also writes the last batch's writer material,
writer_material_b<N>.jsonl and, without the instructor's comments, ..._blind.jsonl.

Run: python labels/e2e/draw.py labels/e2e/paragraphs.jsonl [COUNT]
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

from sefora_dataset.build import config_rows, split_of
from sefora_dataset.read import read_corpus


def main() -> None:
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 48
    corpus = read_corpus(Path("../shared/data/SEFORA"), progress=False)
    rows = config_rows(corpus)["paragraphs"]
    pool = [
        r
        for split in rows.values()
        for r in split
        if split_of(r["student_id"]) in ("validation", "test")
        and 1 <= len([c for c in r["instructor_comments"] if c.strip()]) <= 5
        and 50 <= len(r["body"].split()) <= 350
    ]
    pool.sort(key=lambda r: r["paragraph_id"])
    random.Random(16).shuffle(pool)
    out: list[dict] = []
    per_essay: Counter[str] = Counter()
    for r in pool:
        if per_essay[r["essay_id"]] >= 2:
            continue
        per_essay[r["essay_id"]] += 1
        out.append(r)
        if len(out) == count:
            break
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        for i, r in enumerate(out):
            row = {
                "e2e_id": f"e{i:03d}",
                "paragraph_id": r["paragraph_id"],
                "student_id": r["student_id"],
                "split": split_of(r["student_id"]),
                "body": r["body"],
                "instructor_comments": [c for c in r["instructor_comments"] if c.strip()],
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    # The writers' material of the last batch: the blind writer's without the comments.
    batch = [json.loads(line) for line in Path(sys.argv[1]).read_text("utf-8").splitlines()][-48:]
    n = len(out) // 48
    for name, keys in (("", ("body", "instructor_comments")), ("_blind", ("body",))):
        path = Path(sys.argv[1]).parent / f"writer_material_b{n}{name}.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for r in batch:
                f.write(
                    json.dumps(
                        {"e2e_id": r["e2e_id"], **{k: r[k] for k in keys}}, ensure_ascii=False
                    )
                    + "\n"
                )
    print(len(pool), "candidates,", len(out), "drawn")


if __name__ == "__main__":
    main()
