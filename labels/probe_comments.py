"""A held-out check of the segmenters on real instructor comments: comments drawn at random
from paragraphs of students of SEFORA's validation and test splits (who appear in no
training file; the end-to-end set's paragraphs left out), segmented under
segmentation-v2.md by an annotator who labelled nothing else (T32). Never assembled into
segments.jsonl: it trains and tunes nothing.

``draw``: 200 distinct non-empty comments, at most two per paragraph, in a seeded random
order with no filter on their surface (a fair sample of what instructors write) ->
material/v2/probe_comments.jsonl (text_id ``h<k>``, the paragraph body, the comment).
``check``: the learned and the rules segmenter against each annotator's segmentation
(raw/v2/probe_comments_T32.jsonl, and T33's, an independent second one), overall and for
comments of one sentence and of more, and the two annotators against each other; then,
as a control, the validation part's 134 instructor comments segmented again by a third
annotator (T34, raw/v2/probe_valcomments_T34.jsonl): the learned segmenter and the
validation labels (T2's) against T34's.
Run: python labels/probe_comments.py draw --corpus ../shared/data/SEFORA | check
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from assemble import agreement_line, read_jsonl, write_jsonl  # this folder: run as a script
from draw_comments import SENTENCE_END, shuffled_comments

HERE = Path(__file__).parent
MATERIAL = HERE / "material" / "v2" / "probe_comments.jsonl"
#: The annotators' segmentations: T32's, and T33's, an independent second one.
ANNOTATORS = {name: HERE / "raw" / "v2" / f"probe_comments_{name}.jsonl" for name in ("T32", "T33")}
CONTROL = HERE / "raw" / "v2" / "probe_valcomments_T34.jsonl"
COUNT = 200


def draw(corpus: Path) -> None:
    """Write the probe's material: a seeded, surface-blind sample of held-out comments."""
    from sefora_dataset.build import config_rows
    from sefora_dataset.read import read_corpus

    e2e = {r["paragraph_id"] for r in read_jsonl(HERE / "e2e" / "paragraphs.jsonl")}
    rows = config_rows(read_corpus(corpus, progress=False))["paragraphs"]
    pool = sorted(
        (
            r
            for split in ("validation", "test")
            for r in rows[split]
            if r["paragraph_id"] not in e2e
        ),
        key=lambda r: r["paragraph_id"],
    )
    random.Random(6).shuffle(pool)
    texts: list[dict] = []
    seen: set[str] = set()
    for r in pool:
        for c in [c for c in shuffled_comments(r) if c not in seen][:2]:
            seen.add(c)
            texts.append(
                {
                    "text_id": f"h{len(texts):03d}",
                    "paragraph_id": r["paragraph_id"],
                    "body": r["body"],
                    "text": c,
                }
            )
        if len(texts) >= COUNT:
            break
    write_jsonl(MATERIAL, texts[:COUNT])
    print(f"{min(len(texts), COUNT)} comments")


def check() -> None:
    """Each segmenter, and each annotator, against each annotator's segmentation, on the
    comments both annotators delivered."""
    from unimatch_metric.segmenters import segment

    gold = {
        name: {r["text_id"]: r["units"] for r in read_jsonl(path)}
        for name, path in ANNOTATORS.items()
        if path.exists()
    }
    rows = [r for r in read_jsonl(MATERIAL) if all(r["text_id"] in g for g in gold.values())]
    texts = [r["text"] for r in rows]
    groups = {
        "all": list(range(len(rows))),
        "one sentence": [k for k, t in enumerate(texts) if not SENTENCE_END.search(t)],
        "two or more sentences": [k for k, t in enumerate(texts) if SENTENCE_END.search(t)],
    }
    found = {
        name: [list(u) for u in segment(texts, segmenter=name, side="instructor", use_cache=False)]
        for name in ("learned", "rules")
    }
    found.update({name: [units[r["text_id"]] for r in rows] for name, units in gold.items()})
    for reference, units in gold.items():
        total = sum(len(units[r["text_id"]]) for r in rows)
        print(f"against {reference}: {len(rows)} comments, {total} units")
        for name, segmented in found.items():
            if name != reference:
                for group, members in groups.items():
                    print(
                        agreement_line(
                            f"  {name}, {group}",
                            [units[rows[k]["text_id"]] for k in members],
                            [segmented[k] for k in members],
                        )
                    )


def check_control() -> None:
    """The validation part's instructor comments: learned segmenter and T2's labels vs T34."""
    from unimatch_metric.segmenters import segment

    other = {r["text_id"]: r["units"] for r in read_jsonl(CONTROL)}
    rows = [
        r
        for r in read_jsonl(HERE / "segments.jsonl")
        if r["part"] == "validation" and r["source"] == "instructor" and r["text_id"] in other
    ]
    learned = segment(
        [r["text"] for r in rows], segmenter="learned", side="instructor", use_cache=False
    )
    reference = [other[r["text_id"]] for r in rows]
    for name, units in (
        ("learned", [list(u) for u in learned]),
        ("T2", [r["units"] for r in rows]),
    ):
        print(agreement_line(f"validation comments against T34, {name}", reference, units))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("draw", "check"))
    parser.add_argument("--corpus", type=Path, default=HERE.parents[1] / "shared/data/SEFORA")
    args = parser.parse_args()
    if args.command == "draw":
        draw(args.corpus)
        return
    check()
    if CONTROL.exists():
        check_control()


if __name__ == "__main__":
    main()
