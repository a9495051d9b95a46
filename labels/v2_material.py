"""Build the material of the v2 labelling round (issue #16) in material/v2/.

Selection only: this script chooses WHICH pairs, texts and paragraphs annotators and
writers see, and splits them into chunks. It assigns no score and places no boundary.
Run from anywhere: python labels/v2_material.py [reseg-model | rescore-rest]
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from assemble import read_jsonl, write_jsonl  # this folder: run as a script

HERE = Path(__file__).parent
OUT = HERE / "material" / "v2"

# Selection filters for v1-0 pairs (selection, not labelling: an annotator scores them).
PRAISE = re.compile(
    r"(?i)\b(nice|nicely|great|good|excellent|love|lovely|i like|i liked|strong|effective"
    r"|effectively|vivid|beautiful|beautifully|well|awesome|wonderful|compelling|fantastic"
    r"|brilliant|powerful|engaging|fun to read|smile|keep it up|keep going|works|impressive"
    r"|clever|enjoy|enjoyed|wow|interesting|interested|glad|solid|successful|perfect|lively"
    r"|memorable|thoughtful|insightful|insights|striking|evocative|moving|sophisticated)\b"
)
NOT_PRAISE = re.compile(
    r"(?i)\?|\b(but|however|though|although|consider|should|could|would|try|needs?|check"
    r"|add|remove|cut|drop|revise|use|unclear|confusing|vague|missing|instead|rather|fix"
    r"|avoid|watch|make|sure|too|not|isn't|doesn't|don't|also|what|why|how|remain|remains"
    r"|let's|support|back it up)\b|→"
)
CLARIFY = re.compile(
    r"(?i)\?|\b(clarify|clarif\w*|explain|unclear|what (do|does) .* mean|more detail\w*"
    r"|specific|specify|example|elaborate|expand|develop|describe|say more"
    r"|tell (us|me|the reader) more|more about|unpack|confus\w*|vague)\b"
)
NOT_CLARIFY = re.compile(
    r"(?i)\b(grammar|spelling|comma|capitaliz\w*|typo|singular|plural|tense|citation|cite"
    r"|mla|apa|punctuation|apostrophe)\b"
)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def looks_praise(unit: str) -> bool:
    return bool(PRAISE.search(unit)) and not NOT_PRAISE.search(unit)


def looks_clarify(unit: str) -> bool:
    return bool(CLARIFY.search(unit)) and not NOT_CLARIFY.search(unit) and not looks_praise(unit)


def stable(key: str, seed: str = "v2") -> str:
    """A fixed pseudo-random order that does not depend on Python's hash seed."""
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def selected(pair: dict) -> bool:
    """The v2 re-scoring rule (documented in labels/README.md)."""
    scores = {pair["score"]} | ({pair["score_2"]} if "score_2" in pair else set())
    if pair["part"] == "validation" or scores & {1, 2, 3}:
        return True
    if 0 not in scores:
        return False
    both = (looks_praise(pair["a"]) and looks_praise(pair["b"])) or (
        looks_clarify(pair["a"]) and looks_clarify(pair["b"])
    )
    return both


def balance(groups: dict[str, int], bins: int) -> list[list[str]]:
    """Whole groups into ``bins`` lists of similar total size (largest first, greedy)."""
    out: list[list[str]] = [[] for _ in range(bins)]
    load = [0] * bins
    for key in sorted(groups, key=lambda k: (-groups[k], stable(k))):
        at = load.index(min(load))
        out[at].append(key)
        load[at] += groups[key]
    return [sorted(b) for b in out]


def item_line(item: dict, pairs: list[dict]) -> dict:
    """One line of pair material: the paragraph, its instructor comments, the pairs to score."""
    return {
        "item_id": item["item_id"],
        "body": item["body"],
        "instructor_comments": item["instructor_comments"],
        "pairs": [{"pair_id": p["pair_id"], "a": p["a"], "b": p["b"]} for p in pairs],
    }


def write_pair_chunks(
    name: str, chunks: list[list[str]], items: dict, by_item: dict[str, list[dict]]
) -> None:
    """Write ``<name><n>.jsonl`` for each chunk of item ids (`item_line` per item)."""
    for n, chunk in enumerate(chunks, 1):
        write_jsonl(OUT / f"{name}{n}.jsonl", [item_line(items[i], by_item[i]) for i in chunk])
        print(f"{name}{n}: {len(chunk)} items, {sum(len(by_item[i]) for i in chunk)} pairs")


def double_items(chunks: list[list[str]], by_item: dict[str, list[dict]]) -> list[str]:
    """A second-opinion subset of about 250 pairs: items with 10-25 pairs, taken from the
    chunks in turn, each chunk's in a fixed hash order."""
    pools = [sorted((i for i in c if 10 <= len(by_item[i]) <= 25), key=stable) for c in chunks]
    double: list[str] = []
    total, n = 0, 0
    while total < 250 and any(pools):
        pool = pools[n % len(chunks)]
        if pool:
            double.append(pool.pop(0))
            total += len(by_item[double[-1]])
        n += 1
    return sorted(double)


def write_double(name: str, double: list[str], items: dict, by_item: dict[str, list[dict]]) -> None:
    """Write the second-opinion subset ``<name>.jsonl``."""
    write_jsonl(OUT / f"{name}.jsonl", [item_line(items[i], by_item[i]) for i in double])
    print(f"{name}: {len(double)} items, {sum(len(by_item[i]) for i in double)} pairs")


def rescore(items: dict) -> None:
    pairs = [p for p in read_jsonl(HERE / "pairs.jsonl") if selected(p)]
    by_item: dict[str, list[dict]] = defaultdict(list)
    for p in pairs:
        by_item[p["item_id"]].append(p)

    # Train items in chunks 1-2, validation items in chunks 3-4: the annotators whose
    # scores validate the models score no training pair.
    chunks = []
    for part in ("train", "validation"):
        sizes = {i: len(ps) for i, ps in by_item.items() if items[i]["part"] == part}
        chunks += balance(sizes, 2)
    write_pair_chunks("rescore_chunk", chunks, items, by_item)
    write_double("rescore_double", double_items(chunks, by_item), items, by_item)


def reseg(items: dict) -> None:
    texts = [t for t in read_jsonl(HERE / "segments.jsonl") if t["source"] == "instructor"]

    def line(t: dict) -> dict:
        return {"text_id": t["text_id"], "body": items[t["item_id"]]["body"], "text": t["text"]}

    # Chunk 1 the train part, chunk 2 the validation part (independent validation labels).
    parts = [[t for t in texts if t["part"] == p] for p in ("train", "validation")]
    for n, chunk in enumerate(parts, 1):
        write_jsonl(OUT / f"reseg_chunk{n}.jsonl", [line(t) for t in chunk])
        print(f"reseg_chunk{n}: {len(chunk)} texts")
    # Double subset: 100 texts, in proportion to the parts' sizes.
    share = round(100 * len(parts[0]) / len(texts))
    double = sorted(parts[0], key=lambda t: stable(t["text_id"]))[:share]
    double += sorted(parts[1], key=lambda t: stable(t["text_id"]))[: 100 - share]
    double.sort(key=lambda t: t["text_id"])
    write_jsonl(OUT / "reseg_double.jsonl", [line(t) for t in double])
    print(f"reseg_double: {len(double)} texts ({share} train, {100 - share} validation)")


def short_multi(comment: str) -> bool:
    """A short instructor comment of two or more sentences ("Nice hook. Cite your sources.")."""
    sentences = [s for s in SENTENCE_END.split(comment.strip()) if s]
    return len(comment.split()) <= 30 and len(sentences) >= 2


def write_partial(items: dict) -> None:
    train = [i for i in items.values() if i["part"] == "train"]
    candidates = [i for i in train if any(short_multi(c) for c in i["instructor_comments"])]
    candidates.sort(
        key=lambda i: (
            -sum(short_multi(c) for c in i["instructor_comments"]),
            -len(i["instructor_comments"]),
            stable(i["item_id"]),
        )
    )
    chosen, per_student = [], Counter()
    for i in candidates:
        if per_student[i["student_id"]] < 2 and len(chosen) < 60:
            chosen.append(i)
            per_student[i["student_id"]] += 1
    chosen.sort(key=lambda i: i["item_id"])
    rows = [
        {
            "item_id": i["item_id"],
            "writer": "NO"[n % 2],
            "body": i["body"],
            "instructor_comments": i["instructor_comments"],
        }
        for n, i in enumerate(chosen)
    ]
    write_jsonl(OUT / "write_partial.jsonl", rows)
    print(f"write_partial: {len(rows)} paragraphs ({Counter(r['writer'] for r in rows)})")


def reseg_model(items: dict) -> None:
    """The model-style texts still under v1 units, to re-segment under v2: the train part in
    five chunks (``reseg_model_chunk1``-``5``), the validation part in a sixth (its
    annotator segments no training text), 60 texts (40 train, 20 validation, fixed hash
    order) in ``reseg_model_double`` for a second opinion."""
    texts = [
        t
        for t in read_jsonl(HERE / "segments.jsonl")
        if t["source"] == "model" and t["guideline"] == "v1"
    ]

    def line(t: dict) -> dict:
        return {"text_id": t["text_id"], "body": items[t["item_id"]]["body"], "text": t["text"]}

    train = [t for t in texts if t["part"] == "train"]
    validation = [t for t in texts if t["part"] == "validation"]
    size = -(-len(train) // 5)
    chunks = [train[k : k + size] for k in range(0, len(train), size)] + [validation]
    for n, chunk in enumerate(chunks, 1):
        write_jsonl(OUT / f"reseg_model_chunk{n}.jsonl", [line(t) for t in chunk])
        print(f"reseg_model_chunk{n}: {len(chunk)} texts")
    double = sorted(train, key=lambda t: stable(t["text_id"]))[:40]
    double += sorted(validation, key=lambda t: stable(t["text_id"]))[:20]
    double.sort(key=lambda t: t["text_id"])
    write_jsonl(OUT / "reseg_model_double.jsonl", [line(t) for t in double])
    print(f"reseg_model_double: {len(double)} texts")


def rescore_rest(items: dict, chunks: int = 8) -> None:
    """Every pair still under a v1 score (train pairs the first re-scoring did not select:
    v1 score 0 or 4), whole items in ``chunks`` chunks of similar size
    (``rescore_rest_chunk1``-``8``), and a second-opinion subset of about 250 pairs: items
    with 10-25 such pairs, taken from the chunks in turn in a fixed hash order
    (``rescore_rest_double``)."""
    by_item: dict[str, list[dict]] = defaultdict(list)
    for p in read_jsonl(HERE / "pairs.jsonl"):
        if p["guideline"] == "v1":
            by_item[p["item_id"]].append(p)
    if not by_item:
        sys.exit("no pair of pairs.jsonl is under v1 any more: the material stays as delivered")
    parts = balance({i: len(ps) for i, ps in by_item.items()}, chunks)
    write_pair_chunks("rescore_rest_chunk", parts, items, by_item)
    write_double("rescore_rest_double", double_items(parts, by_item), items, by_item)


def main() -> None:
    """Build the v2 round's first material (no argument), the model-style texts'
    re-segmentation material (``reseg-model``, drawn after the first round was assembled) or
    the re-scoring of the pairs still under v1 (``rescore-rest``, after all the rounds)."""
    OUT.mkdir(parents=True, exist_ok=True)
    items = {r["item_id"]: r for r in read_jsonl(HERE / "material" / "paragraphs.jsonl")}
    if sys.argv[1:] == ["reseg-model"]:
        reseg_model(items)
        return
    if sys.argv[1:] == ["rescore-rest"]:
        rescore_rest(items)
        return
    rescore(items)
    reseg(items)
    write_partial(items)


if __name__ == "__main__":
    main()
