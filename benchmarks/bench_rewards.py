"""Offline UniMatch reward throughput for GRPO-sized batches, against MiniLM encoding.

Task: 64 prompts (annotated paragraphs of the shared corpus, or of the bundled sample when
the corpus is absent), a group of 8 completions each. The references of prompt i are the
instructor comments of paragraph i; its completions are the comments of 8 other paragraphs
(distinct for every completion, none a reference), each joined into one text: feedback-like
text of varied length, segmented like model output.
The reward (`UniMatchReward`, offline backends) is called as TRL calls it, one batch of
``--prompts-per-call`` prompts (x 8 completions) at a time.

Reported: completions/s with an empty cache (every segmentation and pair scored) and with
a warm cache (the same completions again), and each as a ratio to the baseline measured in
the same run: MiniLM's ``encode`` of the very same texts (completions and references).
Models are loaded before timing.

Usage: python benchmarks/bench_rewards.py [--source DIR] [--prompts 64] [--group 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench_unimatch import DEFAULT_SOURCE, annotated_paragraphs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--group", type=int, default=8, help="completions per prompt")
    parser.add_argument("--prompts-per-call", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import torch

    from sefora_dataset import SAMPLE_SOURCE
    from unimatch_metric.encoder import load_embedding_model
    from unimatch_metric.rewards import UniMatchReward

    source = args.source if args.source.is_dir() else SAMPLE_SOURCE
    paragraphs = [comments for comments, _ in annotated_paragraphs(source)]
    n = len(paragraphs)
    prompts, completions, references = [], [], []
    for i in range(args.prompts):
        for k in range(args.group):
            prompts.append(f"prompt {i}")
            completions.append(" ".join(paragraphs[(args.prompts + i * args.group + k) % n]))
            references.append(paragraphs[i % n])
    per_call = args.prompts_per_call * args.group
    calls = [slice(s, s + per_call) for s in range(0, len(completions), per_call)]
    texts = list(dict.fromkeys([*completions, *(c for refs in references for c in refs)]))

    start = time.perf_counter()
    model = load_embedding_model()
    model.encode(["warm-up"] * 64, batch_size=64)
    with tempfile.TemporaryDirectory() as scratch:  # load the learned models, outside timings
        UniMatchReward(cache_dir=scratch)(
            prompts=["p"], completions=["Warm-up text."], references=[["Warm up."]]
        )
    load_s = time.perf_counter() - start

    def run(reward: UniMatchReward) -> list[float]:
        values: list[float] = []
        for part in calls:
            values += reward(
                prompts=prompts[part], completions=completions[part], references=references[part]
            )
        return values

    times: dict[str, list[float]] = {"baseline": [], "cold": [], "warm": []}
    with tempfile.TemporaryDirectory() as root:
        for round_ in range(args.repeat):  # interleaved, so load bursts hit all alike
            start = time.perf_counter()
            model.encode(texts, batch_size=64, normalize_embeddings=True)
            times["baseline"].append(time.perf_counter() - start)
            reward = UniMatchReward(cache_dir=Path(root, str(round_)))
            start = time.perf_counter()
            cold = run(reward)
            times["cold"].append(time.perf_counter() - start)
            start = time.perf_counter()
            warm = run(reward)
            times["warm"].append(time.perf_counter() - start)
            assert warm == cold, "a warm-cache reward differs from the cold one"
    best = {name: min(t) for name, t in times.items()}
    total = len(completions)
    print(f"source: {source} ({n} annotated paragraphs)")
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; "
        f"models loaded in {load_s:.1f} s"
    )
    print(
        f"{args.prompts} prompts x {args.group} completions = {total}, {len(calls)} calls of "
        f"{per_call}; {len(texts)} distinct texts; mean reward {sum(cold) / total:.3f}"
    )
    print(f"best of {args.repeat} interleaved rounds:")
    print(
        f"  {'baseline: MiniLM encode the texts':<34}: {best['baseline']:7.2f} s  "
        f"{len(texts) / best['baseline']:8.0f} texts/s"
    )
    for label, key in (("reward, empty cache", "cold"), ("reward, warm cache", "warm")):
        print(
            f"  {label:<34}: {best[key]:7.2f} s  {total / best[key]:8.0f} completions/s  "
            f"ratio to baseline {best[key] / best['baseline']:.3g}"
        )


if __name__ == "__main__":
    main()
