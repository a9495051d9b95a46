"""``sefora parse``: annotated PDF/DOCX drafts -> one corpus-format JSON file each."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from sefora_cli.options import show_progress
from sefora_common.io import write_text
from sefora_common.progress import progress_bar
from sefora_dataset.errors import ParseError, SeforaError
from sefora_dataset.parsers import SUFFIXES, load_legend, parse_file


def register(subparsers: Any) -> None:
    """Add the ``parse`` subcommand."""
    parser = subparsers.add_parser(
        "parse",
        description="Parse annotated PDF/DOCX student drafts (files, or folders searched "
        "recursively for *.pdf and *.docx) into one <stem>.json per input in --out, in "
        "the SEFORA draft JSON format. A file that cannot be parsed is reported with "
        "its reason and leaves no JSON behind; the others are still parsed. Exit code "
        "1 when any file failed.",
    )
    parser.add_argument(
        "inputs", nargs="+", metavar="FILE_OR_DIR", help="PDF/DOCX files or folders"
    )
    parser.add_argument("--out", required=True, help="output folder (created if missing)")
    parser.add_argument(
        "--legend",
        help="colour legend JSON: {name: [r, g, b] or [[r, g, b], ...]} "
        "(default: pink/green/yellow)",
    )
    parser.set_defaults(func=run)


def collect_inputs(inputs: list[str]) -> list[Path]:
    """Files named on the command line, plus the PDF/DOCX files under named folders."""
    found: list[Path] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            found.extend(
                sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
            )
        else:
            found.append(path)  # a missing file is reported as a failure when parsed
    seen: set[Path] = set()
    unique = []
    for path in found:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def output_names(paths: list[Path]) -> dict[Path, str]:
    """``<stem>.json``; ``<stem>_<ext>.json`` (then a counter) when stems collide."""
    stems = Counter(p.stem for p in paths)
    names: dict[Path, str] = {}
    used: set[str] = set()
    for path in paths:
        base = (
            path.stem if stems[path.stem] == 1 else f"{path.stem}_{path.suffix.lstrip('.').lower()}"
        )
        name, n = f"{base}.json", 1
        while name in used:
            n += 1
            name = f"{base}-{n}.json"
        used.add(name)
        names[path] = name
    return names


def run(args: argparse.Namespace) -> int:
    """Parse every input; report failures with their reasons; 1 when any failed."""
    legend = load_legend(args.legend) if args.legend else None
    paths = collect_inputs(args.inputs)
    if not paths:
        raise SeforaError(f"no PDF or DOCX files found in {', '.join(args.inputs)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = output_names(paths)
    failures: list[tuple[Path, str]] = []
    written = 0
    for path in progress_bar(paths, desc="parsing", unit="file", show=show_progress(args)):
        try:
            if not path.exists():
                raise ParseError(path, "no such file")
            draft = parse_file(path, legend)
        except ParseError as err:
            failures.append((path, err.reason))
            continue
        write_text(out / names[path], json.dumps(draft, ensure_ascii=False, indent=2) + "\n")
        written += 1
    for path, reason in failures:
        print(f"sefora parse: FAILED {path}: {reason}", file=sys.stderr)
    print(
        f"sefora parse: {written} parsed, {len(failures)} failed; JSON in {out}",
        file=sys.stderr,
    )
    return 1 if failures else 0
