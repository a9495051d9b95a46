"""Draw the end-to-end validation paragraphs from SEFORA students of the validation/test splits (never in labels/ training or validation). Run: python labels/e2e/draw.py labels/e2e/paragraphs.jsonl
import json, random, sys
from collections import Counter
from pathlib import Path
from sefora_dataset.build import config_rows, split_of
from sefora_dataset.read import read_corpus
rows = config_rows(read_corpus(Path("/work/shared/data/SEFORA"), progress=False))["paragraphs"]
pool = [r for split in rows.values() for r in split
        if split_of(r["student_id"]) in ("validation", "test")
        and 1 <= len([c for c in r["instructor_comments"] if c.strip()]) <= 5
        and 50 <= len(r["body"].split()) <= 350]
pool.sort(key=lambda r: r["paragraph_id"])
random.Random(16).shuffle(pool)
out, per_essay = [], Counter()
for r in pool:
    if per_essay[r["essay_id"]] >= 2: continue
    per_essay[r["essay_id"]] += 1
    out.append(r)
    if len(out) == 48: break
with open(sys.argv[1], "w") as f:
    for i, r in enumerate(out):
        f.write(json.dumps({"e2e_id": f"e{i:03d}", "paragraph_id": r["paragraph_id"], "student_id": r["student_id"],
            "split": split_of(r["student_id"]), "body": r["body"],
            "instructor_comments": [c for c in r["instructor_comments"] if c.strip()]}, ensure_ascii=False) + "\n")
print(len(pool), len(out), Counter(split_of(r["student_id"]) for r in out), len({r["student_id"] for r in out}))
