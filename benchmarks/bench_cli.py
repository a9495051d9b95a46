"""Cold start of the ``sefora`` command: ``sefora --help`` against ``python -c pass``.

Both run as fresh interpreters in this run (best of N, no warm imports); the target is
``sefora --help`` in at most 0.5 s. Usage: python benchmarks/bench_cli.py [--repeat N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

TARGET_SECONDS = 0.5


def best_of(command: list[str], repeat: int) -> float:
    """The fastest wall-clock time of ``repeat`` runs of ``command``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    baseline = best_of([sys.executable, "-c", "pass"], args.repeat)
    cli = best_of([sys.executable, "-m", "sefora_cli.main", "--help"], args.repeat)
    print(f"python -c pass: {baseline:.3f} s")
    print(f"sefora --help:  {cli:.3f} s ({cli / baseline:.1f}x; target <= {TARGET_SECONDS} s)")
    return 0 if cli <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
