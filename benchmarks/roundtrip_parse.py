"""Round trip of real SEFORA drafts through annotated PDF and DOCX files and the parsers.

Each draft JSON of the shared corpus is written as an annotated PDF and as an annotated
DOCX by the test generator (``tests/make_annotated.py``) into a temporary folder, parsed
back with ``sefora_dataset.parsers.parse_file``, and compared with the draft (see
``sefora_dataset.parsers.compare``). Reports, per format: paragraph exact-match rate,
annotation recall / precision / F1 (type + text + anchor), colour accuracy, comment
exact-match. Targets: paragraphs >= 0.97, annotations F1 >= 0.97, colour >= 0.98,
comments >= 0.99.

    python benchmarks/roundtrip_parse.py                # every draft of the corpus
    python benchmarks/roundtrip_parse.py --limit 120    # an evenly spread sample
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from make_annotated import expected_parse, write_docx, write_pdf  # noqa: E402

from sefora_dataset.parsers import parse_file  # noqa: E402
from sefora_dataset.parsers.compare import Scores, compare_drafts  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "SEFORA"
TARGETS = {
    "paragraph_exact": 0.97,
    "annotation_f1": 0.97,
    "colour_accuracy": 0.98,
    "comment_exact": 0.99,
}


def corpus_drafts(corpus: Path, limit: int | None = None) -> list[Path]:
    """The corpus's draft JSON files, sorted; an evenly spread sample when ``limit``."""
    files = sorted(corpus.glob("Batch_*/**/*.json"))
    if limit and limit < len(files):
        step = len(files) / limit
        files = [files[int(i * step)] for i in range(limit)]
    return files


def roundtrip(
    files: list[Path], formats=("pdf", "docx"), seed: int = 0, workdir: Path | None = None
) -> tuple[dict[str, Scores], dict]:
    """Write, parse and score every draft in every format."""
    scores = {fmt: Scores() for fmt in formats}
    info = {"skipped_annotations": 0, "seconds": {fmt: 0.0 for fmt in formats}}
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for i, path in enumerate(files):
            draft = json.loads(path.read_text(encoding="utf-8"))
            _, skipped = expected_parse(draft)
            info["skipped_annotations"] += len(skipped)
            for fmt in formats:
                out = Path(tmp) / f"{path.stem}.{fmt}"
                writer = write_pdf if fmt == "pdf" else write_docx
                expected = writer(draft, out, seed=seed + i)
                t0 = time.perf_counter()
                parsed = parse_file(out)
                info["seconds"][fmt] += time.perf_counter() - t0
                scores[fmt].add(compare_drafts(expected, parsed, f"{fmt}:{path.stem}"))
                out.unlink()
    return scores, info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--limit", type=int, default=None, help="number of drafts (default: all)")
    ap.add_argument("--formats", nargs="+", default=["pdf", "docx"], choices=["pdf", "docx"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=15, help="failures to print per format")
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    files = corpus_drafts(args.corpus, args.limit)
    scores, info = roundtrip(files, tuple(args.formats), args.seed)
    report = {"drafts": len(files), "annotations_not_placeable": info["skipped_annotations"]}
    ok = True
    for fmt, sc in scores.items():
        summary = sc.summary()
        summary["parse_seconds"] = round(info["seconds"][fmt], 2)
        report[fmt] = summary
        print(
            f"== {fmt.upper()}: {len(files)} drafts, {sc.paragraphs_expected} paragraphs, "
            f"{sc.annotations_expected} annotations"
        )
        for name, target in TARGETS.items():
            value = summary[name]
            mark = "ok" if value >= target else "BELOW TARGET"
            ok &= value >= target
            print(f"   {name:<18} {value:.4f}  (target {target})  {mark}")
        print(
            f"   annotation recall {summary['annotation_recall']:.4f}, precision "
            f"{summary['annotation_precision']:.4f}; overall comments "
            f"{sc.overall_exact}/{sc.overall_expected}; parse time "
            f"{summary['parse_seconds']} s"
        )
        for line in sc.failures[: args.show]:
            print("   -", line)
    print(
        f"annotations in the drafts that cannot be placed (anchor not found in the "
        f"paragraph, or a highlight of no text): {info['skipped_annotations']}"
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
