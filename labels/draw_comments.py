"""Draw instructor comments to segment: where the learned segmenter is weakest, or at random.

From paragraphs of SEFORA's train split not yet in material/paragraphs.jsonl, of students
whose ``part`` is train (or who have none yet: they become train), at most two comments
per paragraph, paragraphs in an order seeded by ``--seed``: short comments of two or more
sentences (at most 60 words) and one-sentence comments with a clause a second point could
start at (a comma, "and", "but"), 3:1; or, with ``--random``, any comment (a fair sample
of what instructors write, as the held-out probe is; within a paragraph in an order
seeded by its id). The selection reads the text's surface only; every boundary is placed
by an annotator.
Appends the paragraphs to material/paragraphs.jsonl and writes the next free
material/v2/seg_comments_chunk<N>.jsonl files and a second-opinion subset,
seg_comments_double<R>.jsonl (R = 2, 3, ... per draw; the first draw's has no number).
Run: python labels/draw_comments.py --corpus ../shared/data/SEFORA --count 520 --chunks 4
(round 1, seed 4; round 2: --count 800 --seed 5; round 3: --count 600 --seed 7 --random;
round 4: --count 700 --seed 8 --random, which took the 587 the two-per-paragraph cap left;
round 5: --rest, the 613 comments the cap had left in the drawn paragraphs).
With ``--rest``, every comment of an already drawn paragraph not drawn yet, under that
paragraph's item (text ids continue its ``-i<k>``); no paragraph is added.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
from collections import Counter
from pathlib import Path

from assemble import read_jsonl, write_jsonl  # this folder: run as a script, like assemble.py
from draw import append_jsonl

from sefora_dataset.build import config_rows, split_of
from sefora_dataset.read import read_corpus

HERE = Path(__file__).parent
MATERIAL = HERE / "material"
SENTENCE_END = re.compile(r"[.!?]+(?=\s+\S)")
CLAUSE = re.compile(r",|\b(and|but)\b", re.IGNORECASE)
#: Comments drawn and the paragraphs' order seed when --count / --seed are not given.
COUNT, SEED = 520, 4


def kind(comment: str) -> str | None:
    """'multi' (2+ sentences, <= 60 words), 'clause' (one sentence, <= 40 words, a comma or
    and/but) or None (not drawn)."""
    words = len(comment.split())
    if SENTENCE_END.search(comment.strip()):
        return "multi" if words <= 60 else None
    return "clause" if words <= 40 and CLAUSE.search(comment) else None


def shuffled_comments(row: dict) -> list[str]:
    """A paragraph's distinct non-empty comments, stripped, in an order seeded by its id."""
    comments = [c for c in dict.fromkeys(c.strip() for c in row["instructor_comments"]) if c]
    random.Random(row["paragraph_id"]).shuffle(comments)
    return comments


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--count", type=int, help=f"comments to draw (default {COUNT})")
    parser.add_argument("--chunks", type=int, default=4)
    parser.add_argument("--seed", type=int, help=f"order of the paragraphs (default {SEED})")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--random", action="store_true", help="no filter on the surface")
    how.add_argument(
        "--rest", action="store_true", help="the comments left in already drawn paragraphs"
    )
    args = parser.parse_args()
    if args.rest and (args.count is not None or args.seed is not None):
        parser.error("--rest takes every comment left: no --count or --seed")
    args.count = COUNT if args.count is None else args.count
    args.seed = SEED if args.seed is None else args.seed

    items = read_jsonl(MATERIAL / "paragraphs.jsonl")
    rows = config_rows(read_corpus(args.corpus, progress=False))["paragraphs"]
    if args.rest:
        new, texts = [], rest_of_drawn(items, rows)
        note = "the rest of the drawn paragraphs"
    else:
        new, texts, taken = draw_new(items, rows, args)
        note = str(dict(taken))
    if not texts:
        raise SystemExit("no comment left to draw: nothing written")
    append_jsonl(MATERIAL / "paragraphs.jsonl", new)
    done = len(list((MATERIAL / "v2").glob("seg_comments_chunk*.jsonl")))
    double = len(list((MATERIAL / "v2").glob("seg_comments_double*.jsonl")))
    size = -(-len(texts) // args.chunks)
    for n in range(args.chunks):
        path = MATERIAL / "v2" / f"seg_comments_chunk{done + n + 1}.jsonl"
        write_jsonl(path, texts[n * size : (n + 1) * size])
    order = sorted(texts, key=lambda t: hashlib.sha256(t["text_id"].encode()).hexdigest())[
        : len(texts) // 8
    ]
    name = f"seg_comments_double{double + 1 if double else ''}.jsonl"
    write_jsonl(MATERIAL / "v2" / name, order)
    print(f"{len(new)} paragraphs, {len(texts)} comments ({note}), {len(order)} double")


def draw_new(
    items: list[dict], rows: dict, args: argparse.Namespace
) -> tuple[list[dict], list[dict], Counter[str]]:
    """New paragraphs (items) and their comments to segment, at most two per paragraph."""
    part_of = {r["student_id"]: r["part"] for r in items}
    used = {r["paragraph_id"] for r in items}
    first_item = sum(r["item_id"].startswith("c") for r in items)
    pool = [
        r
        for split in rows.values()
        for r in split
        if split_of(r["student_id"]) == "train"
        and part_of.get(r["student_id"], "train") == "train"
        and r["paragraph_id"] not in used
    ]
    pool.sort(key=lambda r: r["paragraph_id"])
    random.Random(args.seed).shuffle(pool)
    if args.random:
        wanted = {"any": args.count}
    else:
        wanted = {"multi": args.count * 3 // 4, "clause": args.count - args.count * 3 // 4}
    taken: Counter[str] = Counter()
    new, texts = [], []
    for r in pool:
        chosen = []
        if args.random:
            comments = shuffled_comments(r)
        else:
            comments = list(dict.fromkeys(c.strip() for c in r["instructor_comments"] if c.strip()))
        for c in comments:
            k = "any" if args.random else kind(c)
            if k and taken[k] < wanted[k] and len(chosen) < 2:
                taken[k] += 1
                chosen.append(c)
        if not chosen:
            continue
        item_id = f"c{first_item + len(new):03d}"
        new.append(
            {
                "item_id": item_id,
                "paragraph_id": r["paragraph_id"],
                "student_id": r["student_id"],
                "part": "train",
                "body": r["body"],
                "instructor_comments": chosen,
            }
        )
        texts += [
            {"text_id": f"{item_id}-i{k}", "item_id": item_id, "body": r["body"], "text": c}
            for k, c in enumerate(chosen)
        ]
        if sum(taken.values()) == args.count:
            break
    return new, texts, taken


def rest_of_drawn(items: list[dict], rows: dict) -> list[dict]:
    """The comments of the train paragraphs drawn here (``c`` items) that no chunk holds
    yet, under their paragraph's item, in item order and then the paragraph's seeded order."""
    drawn: dict[str, list[str]] = {}
    for path in (MATERIAL / "v2").glob("seg_comments_chunk*.jsonl"):
        for t in read_jsonl(path):
            drawn.setdefault(t["item_id"], []).append(t["text"])
    by_paragraph = {r["paragraph_id"]: r for split in rows.values() for r in split}
    texts = []
    for item in items:
        if not item["item_id"].startswith("c") or item["part"] != "train":
            continue
        row = by_paragraph[item["paragraph_id"]]
        had = drawn.get(item["item_id"], [])
        left = [c for c in shuffled_comments(row) if c not in had]
        texts += [
            {
                "text_id": f"{item['item_id']}-i{len(had) + k}",
                "item_id": item["item_id"],
                "body": row["body"],
                "text": c,
            }
            for k, c in enumerate(left)
        ]
    return texts


if __name__ == "__main__":
    main()
