"""Offline UniMatch throughput on the shared corpus, against the raw embedding rate.

Stand-in task: the reference of example i is the instructor comments of annotated
paragraph i; its prediction is the comments of paragraph i+1 joined into one text (so it
goes through segmentation like model output would). Default backends: the rule-based
segmenter and the MiniLM embedding scorer, on CPU.

Baseline (same run): ``model.encode`` of the very same unit texts, the least any
embedding-based scorer must spend. Reported: pairs/s and paragraphs/s of a cold
``compute`` (empty cache) and its ratio to the baseline; then ``compute`` on 64 paragraphs
with an empty cache and again with the cache warm.

Usage: python benchmarks/bench_unimatch.py [--source DIR] [--paragraphs N] [--repeat R]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

DEFAULT_SOURCE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "SEFORA"


def annotated_paragraphs(source: Path) -> list[list[str]]:
    """The non-empty instructor comments of every paragraph that has one, in corpus order."""
    from sefora_dataset.read import read_corpus

    paragraphs = []
    for essay in read_corpus(source, progress=False):
        for draft in essay.drafts:
            for paragraph in draft.data["paragraphs"]:
                comments = [a["comment"] for a in paragraph["annotations"] if a["comment"].strip()]
                if comments:
                    paragraphs.append(comments)
    return paragraphs


def timed(func, repeat: int) -> tuple[float, object]:
    """The best wall time of ``repeat`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--paragraphs", type=int, default=1000, help="0 = all")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warm", type=int, default=64, help="paragraphs for the cache test")
    args = parser.parse_args()

    import torch

    import unimatch_metric
    from unimatch_metric.score import load_embedding_model

    start = time.perf_counter()
    paragraphs = annotated_paragraphs(args.source)
    read_s = time.perf_counter() - start
    n = len(paragraphs) - 1 if args.paragraphs <= 0 else min(args.paragraphs, len(paragraphs) - 1)
    references = paragraphs[:n]
    predictions = [" ".join(comments) for comments in paragraphs[1 : n + 1]]

    start = time.perf_counter()
    model = load_embedding_model()
    load_s = time.perf_counter() - start

    # Units and pairs as UniMatch forms them, for the baseline and the counts.
    pred_units = unimatch_metric.segment(predictions, segmenter="rules")
    ref_units = [sum(unimatch_metric.segment(refs, segmenter="rules"), []) for refs in references]
    pairs = {(g, p) for gs, ps in zip(ref_units, pred_units, strict=True) for g in gs for p in ps}
    texts = list(dict.fromkeys(t for pair in sorted(pairs) for t in pair))

    encode_s, _ = timed(
        lambda: model.encode(texts, batch_size=64, normalize_embeddings=True), args.repeat
    )

    def cold(preds, refs):
        with tempfile.TemporaryDirectory() as cache_dir:
            return unimatch_metric.unimatch(preds, refs, scorer="offline", cache_dir=cache_dir)

    cold_s, result = timed(lambda: cold(predictions, references), args.repeat)
    nocache_s, _ = timed(
        lambda: unimatch_metric.unimatch(
            predictions, references, scorer="offline", use_cache=False
        ),
        args.repeat,
    )

    w = min(args.warm, n)
    with tempfile.TemporaryDirectory() as cache_dir:
        opts = {"scorer": "offline", "cache_dir": cache_dir}
        start = time.perf_counter()
        unimatch_metric.unimatch(predictions[:w], references[:w], **opts)
        warm_cold_s = time.perf_counter() - start
        warm_s, _ = timed(
            lambda: unimatch_metric.unimatch(predictions[:w], references[:w], **opts),
            args.repeat,
        )
    w_pairs = len(
        {
            (g, p)
            for gs, ps in zip(ref_units[:w], pred_units[:w], strict=True)
            for g in gs
            for p in ps
        }
    )

    print(f"corpus: {args.source} ({len(paragraphs)} annotated paragraphs, read in {read_s:.1f} s)")
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; model load {load_s:.2f} s"
    )
    print(
        f"examples: {n} paragraphs, {len(pairs)} distinct unit pairs, {len(texts)} distinct "
        f"unit texts; mean units pred {result['mean_predicted_units']:.2f}, "
        f"ref {result['mean_reference_units']:.2f}; f1 {result['f1']:.3f}"
    )
    print(f"best of {args.repeat}:")
    print(
        f"  {'baseline: encode the unit texts':<33}: {encode_s:7.2f} s  "
        f"{len(texts) / encode_s:8.0f} texts/s"
    )
    for label, secs in (("compute, empty cache", cold_s), ("compute, use_cache=False", nocache_s)):
        print(
            f"  {label:<33}: {secs:7.2f} s  {len(pairs) / secs:8.0f} pairs/s  "
            f"{n / secs:7.0f} paragraphs/s  ratio to baseline {secs / encode_s:.2f}"
        )
    print(
        f"  {w} paragraphs ({w_pairs} pairs): empty cache {warm_cold_s * 1000:.0f} ms, "
        f"warm cache {warm_s * 1000:.1f} ms ({warm_cold_s / warm_s:.0f}x faster, "
        f"{w_pairs / warm_s:.0f} pairs/s)"
    )


if __name__ == "__main__":
    main()
