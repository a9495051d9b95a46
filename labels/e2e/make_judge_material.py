"""Assemble the judges' material: per paragraph, four candidates in a fixed shuffled order.

Candidates: the three writers' texts (K blind, L informed_most, M informed_partial) and a
trivial one, writer K's text for another student's paragraph (``off_paragraph``). The
order is shuffled per paragraph with a fixed seed and shown as letters A-D; the key
(letter -> writer/kind) is written to candidates.jsonl, never shown to judges.
Run: python labels/e2e/make_judge_material.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def main() -> None:
    paragraphs = read(HERE / "paragraphs.jsonl")
    texts = {
        (r["e2e_id"], r["writer"]): r
        for w in "KLM"
        for r in read(HERE / "raw" / f"candidates_{w}.jsonl")
    }
    rng = random.Random(1601)
    candidates, material = [], []
    for i, p in enumerate(paragraphs):
        # The off-paragraph candidate: the next paragraph (cyclically) of another student.
        j = next(
            (i + k) % len(paragraphs)
            for k in range(1, len(paragraphs))
            if paragraphs[(i + k) % len(paragraphs)]["student_id"] != p["student_id"]
        )
        pool = [
            (texts[(p["e2e_id"], w)]["text"], w, texts[(p["e2e_id"], w)]["kind"]) for w in "KLM"
        ] + [(texts[(paragraphs[j]["e2e_id"], "K")]["text"], "K", "off_paragraph")]
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
