"""Round trip of real SEFORA drafts through annotated files and the parsers, per generator.

Each draft JSON of the shared corpus is written as an annotated file by a generator into
a temporary folder, parsed back with ``sefora_dataset.parsers.parse_file`` and compared
with what the generator says the parse should be (``sefora_dataset.parsers.compare``):

- ``pymupdf``: ``tests/make_annotated.write_pdf`` lays the PDF out itself;
- ``libreoffice``: ``tests/make_libreoffice.write_pdfs`` writes a DOCX that LibreOffice
  lays out and exports (needs ``soffice``), annotated from the exported glyph boxes;
- ``docx``: ``tests/make_annotated.write_docx``.

Reports per generator: paragraph exact-match rate, annotation recall / precision / F1
(type + text + anchor), colour accuracy, comment exact-match -- overall, and for the PDF
generators per alignment (left / justified) and per line spacing. Targets: paragraphs
>= 0.995 for ``pymupdf``, >= 0.98 for ``libreoffice``, >= 0.97 for ``docx``; annotation F1
>= 0.98, colour >= 0.99, comments >= 0.99 for all.

    python benchmarks/roundtrip_parse.py                       # every draft, all generators
    python benchmarks/roundtrip_parse.py --limit 120 --generators libreoffice
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sefora_dataset.parsers import parse_file  # noqa: E402
from sefora_dataset.parsers.compare import Scores, compare_drafts  # noqa: E402
from tests.make_annotated import PdfStyle, expected_parse, write_docx, write_pdf  # noqa: E402
from tests.make_libreoffice import Job, soffice, write_pdfs  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "SEFORA"
GENERATORS = ("pymupdf", "libreoffice", "docx")
TARGETS = {
    "paragraph_exact": {"pymupdf": 0.995, "libreoffice": 0.98, "docx": 0.97},
    "annotation_f1": 0.98,
    "colour_accuracy": 0.99,
    "comment_exact": 0.99,
}


def corpus_drafts(corpus: Path, limit: int | None = None) -> list[Path]:
    """The corpus's draft JSON files, sorted; an evenly spread sample when ``limit``."""
    files = sorted(corpus.glob("Batch_*/**/*.json"))
    if limit and limit < len(files):
        step = len(files) / limit
        files = [files[int(i * step)] for i in range(limit)]
    return files


def _spacing(value: float) -> str:
    return f"{value:g}"


class Run:
    """Scores of one generator: overall and by layout group."""

    def __init__(self) -> None:
        self.total = Scores()
        self.groups: dict[str, dict[str, Scores]] = defaultdict(lambda: defaultdict(Scores))
        self.seconds = 0.0

    def add(self, expected: dict, path: Path, name: str, groups: dict[str, str]) -> None:
        t0 = time.perf_counter()
        parsed = parse_file(path)
        self.seconds += time.perf_counter() - t0
        scores = compare_drafts(expected, parsed, name)
        self.total.add(scores)
        for kind, value in groups.items():
            self.groups[kind][value].add(scores)


def run_pymupdf(files: list[Path], tmp: Path, seed: int) -> Run:
    out = Run()
    for i, path in enumerate(files):
        draft = json.loads(path.read_text(encoding="utf-8"))
        style = PdfStyle.random(random.Random(seed + i))  # the style write_pdf draws
        pdf = tmp / f"{path.stem}.pdf"
        expected = write_pdf(draft, pdf, seed=seed + i)
        groups = {
            "alignment": "justified" if style.justify else "left",
            "line spacing": _spacing(round(style.pitch / style.size, 2)),
        }
        out.add(expected, pdf, f"pymupdf:{path.stem}", groups)
        pdf.unlink()
    return out


def run_libreoffice(files: list[Path], tmp: Path, seed: int) -> Run:
    out = Run()
    drafts = [json.loads(path.read_text(encoding="utf-8")) for path in files]
    jobs = [
        Job(draft, tmp / f"{path.stem}.pdf", seed + i)
        for i, (path, draft) in enumerate(zip(files, drafts, strict=True))
    ]
    for job, path, (expected, style, _) in zip(jobs, files, write_pdfs(jobs, tmp), strict=True):
        groups = {
            "alignment": "justified" if style.justify else "left",
            "line spacing": _spacing(style.spacing),
        }
        out.add(expected, job.path, f"libreoffice:{path.stem}", groups)
        job.path.unlink()
    return out


def run_docx(files: list[Path], tmp: Path, seed: int) -> Run:
    out = Run()
    for i, path in enumerate(files):
        draft = json.loads(path.read_text(encoding="utf-8"))
        docx = tmp / f"{path.stem}.docx"
        expected = write_docx(draft, docx, seed=seed + i)
        out.add(expected, docx, f"docx:{path.stem}", {})
        docx.unlink()
    return out


RUNNERS = {"pymupdf": run_pymupdf, "libreoffice": run_libreoffice, "docx": run_docx}


def _target(name: str, generator: str) -> float:
    target = TARGETS[name]
    return target[generator] if isinstance(target, dict) else target


def _row(label: str, sc: Scores) -> str:
    s = sc.summary()
    return (
        f"   {label:<22} {s['drafts']:>4} drafts {s['paragraphs']:>5} paras  "
        f"paragraphs {s['paragraph_exact']:.4f}  annotations F1 {s['annotation_f1']:.4f}  "
        f"colour {s['colour_accuracy']:.4f}  comments {s['comment_exact']:.4f}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--limit", type=int, default=None, help="number of drafts (default: all)")
    ap.add_argument("--generators", nargs="+", default=list(GENERATORS), choices=GENERATORS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=15, help="failures to print per generator")
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    if "libreoffice" in args.generators and soffice() is None:
        print("LibreOffice (soffice) is not installed: cannot run that generator", file=sys.stderr)
        return 2
    files = corpus_drafts(args.corpus, args.limit)
    skipped = sum(len(expected_parse(json.loads(p.read_text(encoding="utf-8")))[1]) for p in files)
    report: dict = {"drafts": len(files), "annotations_not_placeable": skipped}
    ok = True
    for generator in args.generators:
        with tempfile.TemporaryDirectory() as tmp:
            run = RUNNERS[generator](files, Path(tmp), args.seed)
        summary = run.total.summary()
        summary["parse_seconds"] = round(run.seconds, 2)
        summary["groups"] = {
            kind: {value: sc.summary() for value, sc in sorted(values.items())}
            for kind, values in run.groups.items()
        }
        report[generator] = summary
        print(
            f"== {generator}: {len(files)} drafts, {run.total.paragraphs_expected} paragraphs, "
            f"{run.total.annotations_expected} annotations; parse time {summary['parse_seconds']} s"
        )
        for name in TARGETS:
            value, target = summary[name], _target(name, generator)
            mark = "ok" if value >= target else "BELOW TARGET"
            ok &= value >= target
            print(f"   {name:<18} {value:.4f}  (target {target})  {mark}")
        print(
            f"   annotation recall {summary['annotation_recall']:.4f}, precision "
            f"{summary['annotation_precision']:.4f}; overall comments "
            f"{run.total.overall_exact}/{run.total.overall_expected}"
        )
        for kind, values in run.groups.items():
            print(f"   by {kind}:")
            for value, sc in sorted(values.items()):
                print(_row(value, sc))
        for line in run.total.failures[: args.show]:
            print("   -", line)
    print(
        f"annotations in the drafts that cannot be placed (anchor not found in the "
        f"paragraph, or a highlight of no text): {skipped}"
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
