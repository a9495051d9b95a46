"""Offline UniMatch throughput on the shared corpus, against the raw embedding rate.

Stand-in task: the reference of example i is the instructor comments of annotated
paragraph i; its prediction is the comments of paragraph i+1 joined into one text (so it
goes through segmentation like model output would). Default backends: the offline ones
(the learned segmenter and scorer; ``--segmenter rules --scorer embedding`` for the
baselines), on CPU.

Baseline (same run): ``model.encode`` of the very same unit texts, the least any
embedding-based scorer must spend. Reported: pairs/s and paragraphs/s of a cold
``compute`` (empty cache) and its ratio to the baseline; then ``compute`` on 64 paragraphs
with an empty cache and again with the cache warm.

With ``--grounding`` every ``compute`` is also given the paragraphs' texts (the references'
paragraphs), so the grounding model runs too.

Usage: python benchmarks/bench_unimatch.py [--source DIR] [--paragraphs N] [--repeat R]
[--grounding]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

DEFAULT_SOURCE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "SEFORA"


def annotated_paragraphs(source: Path) -> list[tuple[list[str], str]]:
    """The non-empty instructor comments and the text of every paragraph that has one, in
    corpus order."""
    from sefora_dataset.read import read_corpus

    paragraphs = []
    for essay in read_corpus(source, progress=False):
        for draft in essay.drafts:
            for paragraph in draft.data["paragraphs"]:
                comments = [a["comment"] for a in paragraph["annotations"] if a["comment"].strip()]
                if comments:
                    paragraphs.append((comments, paragraph["body"]))
    return paragraphs


def best_of(jobs: dict[str, object], repeat: int) -> tuple[dict[str, float], dict[str, object]]:
    """The best wall time of each job over ``repeat`` rounds, jobs interleaved in each round
    (so a burst of load on the shared machine hits all of them alike), and their results."""
    times: dict[str, list[float]] = {name: [] for name in jobs}
    results: dict[str, object] = {}
    for _ in range(repeat):
        for name, job in jobs.items():
            start = time.perf_counter()
            results[name] = job()
            times[name].append(time.perf_counter() - start)
    return {name: min(t) for name, t in times.items()}, results


def distinct_pairs(ref_units, pred_units) -> set[tuple[str, str]]:
    """The distinct (reference unit, predicted unit) pairs of the examples."""
    return {(g, p) for gs, ps in zip(ref_units, pred_units, strict=True) for g in gs for p in ps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--paragraphs", type=int, default=500, help="0 = all")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warm", type=int, default=64, help="paragraphs for the cache test")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    parser.add_argument("--segmenter", default="offline", help="segmenter backend name")
    parser.add_argument("--scorer", default="offline", help="scorer backend name")
    parser.add_argument(
        "--grounding", action="store_true", help="give compute the paragraphs (grounding on)"
    )
    args = parser.parse_args()

    import torch

    import unimatch_metric
    from unimatch_metric.encoder import load_embedding_model

    if args.threads:
        torch.set_num_threads(args.threads)
    start = time.perf_counter()
    paragraphs = annotated_paragraphs(args.source)
    read_s = time.perf_counter() - start
    n = len(paragraphs) - 1 if args.paragraphs <= 0 else min(args.paragraphs, len(paragraphs) - 1)
    references = [comments for comments, _ in paragraphs[:n]]
    predictions = [" ".join(comments) for comments, _ in paragraphs[1 : n + 1]]
    # With --grounding every compute also gets the references' paragraph texts.
    given = {"paragraphs": [body for _, body in paragraphs[:n]]} if args.grounding else {}

    start = time.perf_counter()
    model = load_embedding_model()
    load_s = time.perf_counter() - start
    model.encode(["warm-up"] * 64, batch_size=64)  # first-call allocations, outside timings

    # Units and pairs as UniMatch forms them, for the baseline and the counts.
    pred_units = unimatch_metric.segment(predictions, segmenter=args.segmenter)
    ref_units = [
        sum(unimatch_metric.segment(refs, segmenter=args.segmenter), []) for refs in references
    ]
    pairs = distinct_pairs(ref_units, pred_units)
    texts = list(dict.fromkeys(t for pair in sorted(pairs) for t in pair))

    def cold():
        with tempfile.TemporaryDirectory() as cache_dir:
            return unimatch_metric.unimatch(
                predictions,
                references,
                scorer=args.scorer,
                segmenter=args.segmenter,
                cache_dir=cache_dir,
                **given,
            )

    secs, results = best_of(
        {
            "baseline": lambda: model.encode(texts, batch_size=64, normalize_embeddings=True),
            "cold": cold,
            "nocache": lambda: unimatch_metric.unimatch(
                predictions,
                references,
                scorer=args.scorer,
                segmenter=args.segmenter,
                use_cache=False,
                **given,
            ),
        },
        args.repeat,
    )
    result = results["cold"]

    w = min(args.warm, n)
    given_w = {k: v[:w] for k, v in given.items()}
    w_pairs = len(distinct_pairs(ref_units[:w], pred_units[:w]))
    with tempfile.TemporaryDirectory() as root:
        rounds = iter(range(10**6))

        def warm_cold():  # a fresh cache folder each time
            folder = Path(root, str(next(rounds)))
            return unimatch_metric.unimatch(
                predictions[:w],
                references[:w],
                scorer=args.scorer,
                segmenter=args.segmenter,
                cache_dir=folder,
                **given_w,
            )

        unimatch_metric.unimatch(
            predictions[:w],
            references[:w],
            scorer=args.scorer,
            segmenter=args.segmenter,
            cache_dir=Path(root, "warm"),
            **given_w,
        )
        w_secs, _ = best_of(
            {
                "empty": warm_cold,
                "warm": lambda: unimatch_metric.unimatch(
                    predictions[:w],
                    references[:w],
                    scorer=args.scorer,
                    segmenter=args.segmenter,
                    cache_dir=Path(root, "warm"),
                    **given_w,
                ),
            },
            args.repeat,
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
    print(f"best of {args.repeat} interleaved rounds:")
    print(
        f"  {'baseline: encode the unit texts':<33}: {secs['baseline']:7.2f} s  "
        f"{len(texts) / secs['baseline']:8.0f} texts/s"
    )
    for label, key in (("compute, empty cache", "cold"), ("compute, use_cache=False", "nocache")):
        print(
            f"  {label:<33}: {secs[key]:7.2f} s  {len(pairs) / secs[key]:8.0f} pairs/s  "
            f"{n / secs[key]:7.1f} paragraphs/s  ratio to baseline "
            f"{secs[key] / secs['baseline']:.2f}"
        )
    print(
        f"  {w} paragraphs ({w_pairs} pairs): empty cache {w_secs['empty'] * 1000:.0f} ms, "
        f"warm cache {w_secs['warm'] * 1000:.1f} ms ({w_secs['empty'] / w_secs['warm']:.0f}x "
        f"faster; {w / w_secs['warm']:.0f} paragraphs/s, {w_pairs / w_secs['warm']:.0f} pairs/s)"
    )


if __name__ == "__main__":
    main()
