"""A check of the offline models on round 5 of the v2 labels (v2_new_material.py): 240
feedback texts by writers AH-AK, segmented by T55-T58 (T59 again on 40), and their 1,809
pairs with the instructor's units, scored by R45-R48 (R49 again on 275). assemble.py holds
them out of segments.jsonl and pairs.jsonl (`HELD_OUT_WRITERS`): they train and tune
nothing, and no writer or annotator of this round labelled anything the models learned from.
``check``: the learned and the rules segmenter (feedback side) against the first
segmentation, overall, per style and per writer; the learned and the embedding scorer
against the first score; each second opinion against the first.
Run: python labels/heldout.py check
"""

from __future__ import annotations

import argparse
from pathlib import Path

from assemble import HELD_OUT_WRITERS, agreement_line, group_lines, read_jsonl, v2_labels

HERE = Path(__file__).parent
V2 = HERE / "material" / "v2"
#: The round's annotators: segmenters and scorers, then their second opinions.
SEGMENTERS, SEGMENTER_2 = ("T55", "T56", "T57", "T58"), "T59"
SCORERS, SCORER_2 = ("R45", "R46", "R47", "R48"), "R49"


def opinions(
    pattern: str, key: str, value: str, firsts: tuple[str, ...], second: str
) -> tuple[dict[str, object], dict[str, object]]:
    """{id: label} of the round's first annotators and of its second one, from the raw/v2
    files matching ``pattern`` (`assemble.v2_labels`)."""
    labelled, _ = v2_labels(pattern, key, value)
    return (
        {k: label for k, by in labelled.items() for n, label in by.items() if n in firsts},
        {k: by[second] for k, by in labelled.items() if second in by},
    )


def check_segmenters() -> None:
    """The segmenters against the round's first segmentation, and the second opinion."""
    from unimatch_metric.segmenters import segment

    first, second = opinions("seg_T*.jsonl", "text_id", "units", SEGMENTERS, SEGMENTER_2)
    texts = [
        t
        for w in sorted(HELD_OUT_WRITERS)
        for t in read_jsonl(V2 / f"seg_new_{w}.jsonl")
        if t["text_id"] in first
    ]
    reference = [list(first[t["text_id"]]) for t in texts]
    print(f"segmentation: {len(texts)} texts, {sum(len(u) for u in reference)} units")
    groups: dict[str, list[int]] = {"all": list(range(len(texts)))}
    for k, t in enumerate(texts):
        _, writer, style = t["text_id"].split("-")
        groups.setdefault(f"style {style}", []).append(k)
        groups.setdefault(f"writer {writer}", []).append(k)
    for name in ("learned", "rules"):
        found = [list(u) for u in segment([t["text"] for t in texts], name, use_cache=False)]
        print("\n".join(group_lines(f"  {name}", groups, reference, found)))
    both = sorted(set(second) & set(first))
    print(
        agreement_line(
            f"  {SEGMENTER_2} against the first",
            [first[t] for t in both],
            [second[t] for t in both],
        )
    )


def check_scorers() -> None:
    """The scorers against the round's first scores, and the second opinion."""
    from unimatch_metric.scorers import score_pairs
    from unimatch_metric.training.validate import score_agreement

    first, second = opinions("pairs_R*.jsonl", "pair_id", "score", SCORERS, SCORER_2)
    pairs = [
        p
        for path in sorted(V2.glob("score_new_chunk*.jsonl"))
        for item in read_jsonl(path)
        for p in item["pairs"]
        if p["pair_id"] in first
    ]
    gold = [float(first[p["pair_id"]]) for p in pairs]
    print(f"similarity: {len(pairs)} pairs")
    for name in ("learned", "embedding"):
        found = score_pairs([(p["a"], p["b"]) for p in pairs], scorer=name, use_cache=False)
        s = score_agreement(gold, [float(x) for x in found])
        print(
            f"  {name}: Pearson {s.pearson:.3f}, Spearman {s.spearman:.3f}, "
            f"mean absolute error {s.mean_absolute_error:.2f}"
        )
    both = sorted(set(second) & set(first))
    s = score_agreement(
        [float(first[t]) for t in both],
        [float(second[t]) for t in both],
    )
    print(
        f"  {SCORER_2} against the first, {len(both)} pairs: Pearson {s.pearson:.3f}, "
        f"Spearman {s.spearman:.3f}, mean absolute error {s.mean_absolute_error:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("check",))
    parser.parse_args()
    check_segmenters()
    check_scorers()


if __name__ == "__main__":
    main()
