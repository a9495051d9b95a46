"""Assemble the judges' material: per paragraph, four candidates in a fixed shuffled order.

Candidates: the three writers' texts (batch 1, e000-e047: K blind, L informed_most,
M informed_partial; batch 2, e048-e095: S, U, V likewise) and a trivial one, the batch's
blind writer's text for another student's paragraph of the same batch
(``off_paragraph``). The order is shuffled per paragraph with a fixed seed and shown as
letters A-D; the key (letter -> writer/kind) is written to candidates.jsonl, never shown
to judges. A batch whose writers have not delivered yet is left out.
Run: python labels/e2e/make_judge_material.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


#: Per batch of 48 paragraphs: its blind, informed_most and informed_partial writers.
BATCHES = ("KLM", "SUV")
BATCH = 48


def main() -> None:
    paragraphs = read(HERE / "paragraphs.jsonl")
    rng = random.Random(1601)
    candidates, material = [], []
    for b, writers in enumerate(BATCHES):
        batch = paragraphs[b * BATCH : (b + 1) * BATCH]
        files = [HERE / "raw" / f"candidates_{w}.jsonl" for w in writers]
        if not batch or not all(f.exists() for f in files):
            continue  # not drawn or not written yet
        texts = {(r["e2e_id"], r["writer"]): r for f in files for r in read(f)}
        for i, p in enumerate(batch):
            # The off-paragraph candidate: the next paragraph (cyclically, within the batch)
            # of another student, as its blind writer wrote on it.
            other = next(
                batch[(i + k) % len(batch)]
                for k in range(1, len(batch))
                if batch[(i + k) % len(batch)]["student_id"] != p["student_id"]
            )
            pool = [
                (texts[(p["e2e_id"], w)]["text"], w, texts[(p["e2e_id"], w)]["kind"])
                for w in writers
            ] + [(texts[(other["e2e_id"], writers[0])]["text"], writers[0], "off_paragraph")]
            rng.shuffle(pool)
            shown = []
            for letter, (text, writer, kind) in zip("ABCD", pool, strict=True):
                candidates.append(
                    {
                        "candidate_id": f"{p['e2e_id']}{letter}",
                        "e2e_id": p["e2e_id"],
                        "letter": letter,
                        "writer": writer,
                        "kind": kind,
                        "text": text,
                    }
                )
                shown.append({"letter": letter, "text": text})
            material.append(
                {
                    "e2e_id": p["e2e_id"],
                    "body": p["body"],
                    "instructor_comments": p["instructor_comments"],
                    "candidates": shown,
                }
            )
    with (HERE / "candidates.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in candidates)
    with (HERE / "judge_material.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in material)
    print(len(candidates), "candidates,", len(material), "paragraphs")


if __name__ == "__main__":
    main()
