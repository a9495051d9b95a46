"""Speed of the learned offline backends, against the bare embedding rate in the same run.

Pairs: instructor units of annotated paragraph i against those of paragraph i+1 over the
shared corpus (the stand-in of `bench_unimatch.py`). Baseline: MiniLM encoding of the
distinct unit texts, the least any embedding-based scorer must spend. Measured: the
learned scorer on all pairs (embedding included, no cache), and the learned segmenter on
all comments against the rule-based one and against MiniLM encoding of the same comments
(it runs four of MiniLM's six layers over each text). Target: the learned scorer >= 500
pairs/s.

Usage: python benchmarks/bench_learned.py [--source DIR] [--repeat R]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench_unimatch import DEFAULT_SOURCE, annotated_paragraphs, best_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from unimatch_metric.encoder import load_embedding_model
    from unimatch_metric.scorers.learned import LearnedScorer
    from unimatch_metric.segmenters.learned import LearnedSegmenter
    from unimatch_metric.segmenters.rules import RuleSegmenter

    paragraphs = [comments for comments, _ in annotated_paragraphs(args.source)]
    units = LearnedSegmenter().segment([c for cs in paragraphs for c in cs])
    per_paragraph, at = [], 0
    for comments in paragraphs:
        per_paragraph.append([u for us in units[at : at + len(comments)] for u in us])
        at += len(comments)
    neighbours = zip(per_paragraph, per_paragraph[1:], strict=False)
    pairs = sorted({(g, p) for gs, ps in neighbours for g in gs for p in ps})
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    comments = [c for cs in paragraphs for c in cs]
    model = load_embedding_model()
    model.encode(["warm-up"] * 64, batch_size=64)
    scorer, learned, rules = LearnedScorer(), LearnedSegmenter(), RuleSegmenter()

    secs, _ = best_of(
        {
            "encode": lambda: model.encode(texts, batch_size=64, normalize_embeddings=True),
            "score": lambda: scorer.score(pairs),
            "encode comments": lambda: model.encode(comments, batch_size=64),
            "learned": lambda: learned.segment(comments),
            "rules": lambda: rules.segment(comments),
        },
        args.repeat,
    )
    print(f"{len(pairs)} distinct pairs, {len(texts)} distinct texts, {len(comments)} comments")
    print(f"best of {args.repeat} interleaved rounds:")
    encode, score = secs["encode"], secs["score"]
    print(f"  baseline, encode texts : {encode:6.2f} s  {len(texts) / encode:7.0f} texts/s")
    print(
        f"  learned scorer         : {score:6.2f} s  {len(pairs) / score:7.0f} pairs/s"
        f"  (ratio to baseline {score / encode:.2f}; target >= 500 pairs/s)"
    )
    for name in ("encode comments", "learned", "rules"):
        label = name if name.startswith("encode") else f"{name} segmenter"
        print(f"  {label:<23}: {secs[name]:6.2f} s  {len(comments) / secs[name]:7.0f} texts/s")
    ratio = secs["learned"] / secs["encode comments"]
    print(f"  learned segmenter / encode comments: {ratio:.2f}")


if __name__ == "__main__":
    main()
