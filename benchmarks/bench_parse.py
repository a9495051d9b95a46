"""Parse time per page, as a ratio to PyMuPDF's own ``page.get_text("rawdict")``.

Two sources of annotated PDFs: the PyMuPDF test generator (``tests/make_annotated.py``)
writes drafts of the shared SEFORA corpus when it is present, else drafts made up here;
and the committed LibreOffice-exported fixtures (``tests/fixtures/exported``, real word-
processor output). For each file, in the same run and the same process: the baseline
opens the file and calls ``page.get_text("rawdict")`` on every page; the parser is
``parse_file``. Each is timed best-of-``--repeat`` per file; the totals are compared,
overall and per source. Target: ratio <= 4.

    python benchmarks/bench_parse.py [--files 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import pymupdf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sefora_dataset.parsers import parse_file  # noqa: E402
from tests.make_annotated import write_pdf  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "SEFORA"
TARGET = 4.0
EXPORTED = ROOT / "tests" / "fixtures" / "exported"


def drafts(n: int) -> list[dict]:
    files = sorted(CORPUS.glob("Batch_*/**/*.json")) if CORPUS.is_dir() else []
    if files:
        step = max(1, len(files) // n)
        return [json.loads(p.read_text(encoding="utf-8")) for p in files[::step][:n]]
    rng = random.Random(0)
    words = [
        "the",
        "river",
        "ran",
        "brown",
        "after",
        "the",
        "storm",
        "and",
        "the",
        "old",
        "bridge",
        "groaned",
        "under",
        "every",
        "truck",
        "that",
        "crossed",
        "it",
        "while",
        "nobody",
        "asked",
        "why",
    ]
    out = []
    for _ in range(n):
        paras = []
        for _ in range(rng.randint(6, 14)):
            body = " ".join(rng.choice(words) for _ in range(rng.randint(60, 160))) + "."
            anns = [
                {
                    "type": "highlight",
                    "color": "pink",
                    "text": body[10:60],
                    "comment": "c",
                    "context_left": body[:10][-20:],
                    "context_right": body[60:80],
                }
            ]
            paras.append({"body": body, "annotations": anns})
        out.append({"paragraphs": paras})
    return out


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def baseline(path: Path) -> None:
    with pymupdf.open(path) as doc:
        for page in doc:
            page.get_text("rawdict")


def _time(paths: list[Path], repeat: int) -> dict:
    pages = annots = 0
    for path in paths:
        with pymupdf.open(path) as doc:
            pages += doc.page_count
            annots += sum(len(list(p.annots())) for p in doc)
    t_base = t_parse = 0.0
    for path in paths:
        t_base += best_of(repeat, lambda p=path: baseline(p))
        t_parse += best_of(repeat, lambda p=path: parse_file(p))
    return {
        "files": len(paths),
        "pages": pages,
        "annotations": annots,
        "rawdict_ms_per_page": round(1000 * t_base / pages, 3),
        "parse_ms_per_page": round(1000 * t_parse / pages, 3),
        "ratio": round(t_parse / t_base, 2),
        "seconds": (t_base, t_parse),
    }


def run(n_files: int, repeat: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        generated = []
        for i, draft in enumerate(drafts(n_files)):
            path = Path(tmp) / f"d{i:03d}.pdf"
            write_pdf(draft, path, seed=i)
            generated.append(path)
        exported = sorted(EXPORTED.glob("*.pdf"))
        parse_file(generated[0])  # warm-up: imports, fonts
        baseline(generated[0])
        sources = {"pymupdf-generator": _time(generated, repeat)}
        if exported:
            sources["libreoffice-exported"] = _time(exported, repeat)
    seconds = [s.pop("seconds") for s in sources.values()]
    t_base = sum(base for base, _ in seconds)
    t_parse = sum(parse for _, parse in seconds)
    return {
        "sources": sources,
        "ratio": round(t_parse / t_base, 2),
        "target": TARGET,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    result = run(args.files, args.repeat)
    print(json.dumps(result, indent=2))
    return 0 if result["ratio"] <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
