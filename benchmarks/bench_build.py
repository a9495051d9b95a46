"""Build time of the full corpus as a ratio to a baseline measured in the same run.

Baseline: a fresh Python process that imports ``datasets`` and reads every draft JSON file.
Measured: a fresh Python process that runs ``build_dataset`` on the same corpus.
Target: ratio <= 3. Usage: python benchmarks/bench_build.py [--source DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_SOURCE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "SEFORA"

BASELINE = """
import json, sys
from pathlib import Path
import datasets
for p in sorted(Path(sys.argv[1]).rglob("*.json")):
    json.loads(p.read_text(encoding="utf-8"))
"""

BUILD = """
import sys
from sefora_dataset import build_dataset
build_dataset(sys.argv[1], sys.argv[2], progress=False)
"""


def timed(code: str, *args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(DEFAULT_SOURCE))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "sefora")
        base, build = [], []
        for _ in range(args.repeat):  # interleaved, so drifting machine load hits both
            base.append(timed(BASELINE, args.source))
            build.append(timed(BUILD, args.source, out))
    b, m = statistics.median(base), statistics.median(build)
    print(f"baseline (import datasets + read JSON): {b:.2f} s (median of {args.repeat})")
    print(f"build_dataset:                          {m:.2f} s")
    print(f"ratio: {m / b:.2f}x (target <= 3x)")


if __name__ == "__main__":
    main()
