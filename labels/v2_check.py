"""Check a v2 output file against its material file (format only, never the labels' content).

  python labels/v2_check.py pairs MATERIAL.jsonl OUTPUT.jsonl   # every pair_id once, score 0-4
  python labels/v2_check.py seg MATERIAL.jsonl OUTPUT.jsonl     # units verbatim, in order, covering
  python labels/v2_check.py write MATERIAL.jsonl OUTPUT.jsonl WRITER   # 2 texts per paragraph
Prints what is missing or wrong, line by line, and exits 1 if anything is.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path


def rows(path: Path, problems: list[str]) -> list[dict]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as err:
            problems.append(f"{path}:{n}: not JSON ({err.msg})")
    return out


def covers(text: str, units: list[str]) -> str | None:
    """Why ``units`` are not verbatim pieces of ``text`` in order covering it, or None."""
    at = 0
    for unit in units:
        if not isinstance(unit, str) or not unit.strip():
            return f"empty or non-text unit {unit!r}"
        found = re.compile(r"\s+".join(re.escape(w) for w in unit.split())).search(text, at)
        if found is None:
            return f"unit {unit!r} is not in the text after the previous unit"
        if text[at : found.start()].strip():
            return f"text {text[at : found.start()]!r} before unit {unit!r} is in no unit"
        at = found.end()
    if text[at:].strip():
        return f"end of the text {text[at:]!r} is in no unit"
    return None


def check_pairs(material: list[dict], out: list[dict], problems: list[str]) -> None:
    wanted = {p["pair_id"] for item in material for p in item["pairs"]}
    seen = Counter(r.get("pair_id") for r in out)
    for r in out:
        if r.get("pair_id") not in wanted:
            problems.append(f"pair_id {r.get('pair_id')!r} is not in the material")
        if type(r.get("score")) is not int or not 0 <= r["score"] <= 4:
            problems.append(f"{r.get('pair_id')}: score {r.get('score')!r} is not an integer 0-4")
        if not r.get("annotator"):
            problems.append(f"{r.get('pair_id')}: no annotator")
    problems += [f"{p}: scored {n} times" for p, n in seen.items() if n > 1]
    missing = sorted(wanted - set(seen))
    if missing:
        problems.append(f"{len(missing)} pairs not scored yet, first: {missing[:5]}")


def check_seg(material: list[dict], out: list[dict], problems: list[str]) -> None:
    text_of = {t["text_id"]: t["text"] for t in material}
    seen = Counter(r.get("text_id") for r in out)
    for r in out:
        tid = r.get("text_id")
        if tid not in text_of:
            problems.append(f"text_id {tid!r} is not in the material")
            continue
        why = covers(text_of[tid], r.get("units") or [])
        if why:
            problems.append(f"{tid}: {why}")
        if not r.get("annotator"):
            problems.append(f"{tid}: no annotator")
    problems += [f"{t}: segmented {n} times" for t, n in seen.items() if n > 1]
    missing = sorted(set(text_of) - set(seen))
    if missing:
        problems.append(f"{len(missing)} texts not segmented yet, first: {missing[:5]}")


def check_write(material: list[dict], out: list[dict], writer: str, problems: list[str]) -> None:
    mine = {m["item_id"] for m in material if m["writer"] == writer}
    styles = (
        ("blind", "partial") if writer in ("W", "X", "Y", "Z") else ("partial", "margin")
    )  # round 2 / 1
    seen = Counter((r.get("item_id"), r.get("style")) for r in out)
    for r in out:
        if r.get("item_id") not in mine:
            problems.append(f"item_id {r.get('item_id')!r} is not one of writer {writer}'s")
        if r.get("style") not in styles:
            problems.append(
                f"{r.get('item_id')}: style {r.get('style')!r} is not {'/'.join(styles)}"
            )
        if not str(r.get("feedback", "")).strip():
            problems.append(f"{r.get('item_id')}: empty feedback")
        if r.get("writer") != writer:
            problems.append(f"{r.get('item_id')}: writer {r.get('writer')!r}, expected {writer}")
    problems += [f"{k}: written {n} times" for k, n in seen.items() if n > 1]
    missing = sorted((i, s) for i in mine for s in styles if (i, s) not in seen)
    if missing:
        problems.append(f"{len(missing)} texts not written yet, first: {missing[:5]}")


def main() -> None:
    if len(sys.argv) < 4 or sys.argv[1] not in ("pairs", "seg", "write"):
        sys.exit(__doc__)
    problems: list[str] = []
    material = rows(Path(sys.argv[2]), problems)
    out = rows(Path(sys.argv[3]), problems)
    if sys.argv[1] == "pairs":
        check_pairs(material, out, problems)
    elif sys.argv[1] == "seg":
        check_seg(material, out, problems)
    else:
        check_write(material, out, sys.argv[4] if len(sys.argv) > 4 else "", problems)
    print("\n".join(problems) if problems else f"OK: {len(out)} lines")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
