"""Assemble the annotators' raw files (raw/) into the released label files.

segments.jsonl: one feedback text per line with its units (primary annotator) and, for the
double-labelled subset, the second annotator's units. pairs.jsonl: one (instructor unit,
model unit) pair per line with its 0-4 score(s). Run from anywhere: python labels/assemble.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sefora_common import jsonl

HERE = Path(__file__).parent
RAW = HERE / "raw"
SECOND_OPINIONS = {"S2", "S5", "S14", "P5"}  # annotators who re-labelled a subset independently


def read_jsonl(path: Path) -> list[dict]:
    return [row for _, row in jsonl.read_jsonl(path)]


def by(rows: list[dict], key: str) -> dict:
    return {r[key]: r for r in rows}


def write_jsonl(path: Path, rows: list[dict]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    tmp.replace(path)


def verbatim(text: str, units: list[str]) -> list[str]:
    """The units as exact pieces of ``text``: a few annotators collapsed a line break inside
    a unit into a space; the boundaries are theirs, the whitespace is the text's."""
    out, at = [], 0
    for unit in units:
        pattern = r"\s+".join(re.escape(word) for word in unit.split())
        found = re.compile(pattern).search(text, at)
        if found is None:
            raise ValueError(f"unit {unit!r} is not in the text {text!r}")
        out.append(found.group())
        at = found.end()
    return out


def segments(items: dict) -> list[dict]:
    texts = read_jsonl(HERE / "material" / "seg_instructor.jsonl")
    texts += read_jsonl(HERE / "material" / "seg_model.jsonl")
    primary: dict[str, tuple[str, list[str]]] = {}
    second: dict[str, tuple[str, list[str]]] = {}
    for path in sorted(RAW.glob("seg_*.jsonl")):
        name = path.stem.rsplit("_", 1)[1]
        chosen = second if name in SECOND_OPINIONS else primary
        chosen.update({r["text_id"]: (name, r["units"]) for r in read_jsonl(path)})
    text_of = {t["text_id"]: t["text"] for t in texts}
    for labelled in (primary, second):
        for text_id, (name, units) in labelled.items():
            labelled[text_id] = (name, verbatim(text_of[text_id], units))
    rows = []
    for t in texts:
        if t["text_id"] not in primary:
            continue  # not segmented yet: main() reports how many
        item = items[t["item_id"]]
        annotator, units = primary[t["text_id"]]
        row = {
            "text_id": t["text_id"],
            "item_id": t["item_id"],
            "paragraph_id": item["paragraph_id"],
            "part": item["part"],
            "source": t["source"],
            "style": t.get("style"),
            "text": t["text"],
            "units": units,
            "annotator": annotator,
        }
        if t["text_id"] in second:
            row["annotator_2"], row["units_2"] = second[t["text_id"]]
        rows.append(row)
    return rows


def pairs(items: dict) -> list[dict]:
    pair_items = by(read_jsonl(HERE / "material" / "pair_items.jsonl"), "item_id")
    labels: dict[tuple, dict[str, int]] = {}
    for path in sorted(RAW.glob("pairs_P*.jsonl")):
        name = path.stem.rsplit("_", 1)[1]
        for r in read_jsonl(path):
            labels.setdefault((r["item_id"], r["a"], r["b"]), {})[name] = r["score"]
    rows = []
    for item_id, item in pair_items.items():
        a_units = {u["id"]: u["text"] for u in item["instructor_units"]}
        b_units = {u["id"]: u["text"] for u in item["model_units"]}
        for a_id, a in a_units.items():
            for b_id, b in b_units.items():
                scores = labels.get((item_id, a_id, b_id))
                if not scores:
                    continue
                names = sorted(scores, key=lambda n: n in SECOND_OPINIONS)
                row = {
                    "pair_id": f"{item_id}:{a_id}:{b_id}",
                    "item_id": item_id,
                    "paragraph_id": items[item_id]["paragraph_id"],
                    "part": items[item_id]["part"],
                    "a": a,
                    "b": b,
                    "score": scores[names[0]],
                    "annotator": names[0],
                }
                if len(names) > 1:
                    row["score_2"], row["annotator_2"] = scores[names[1]], names[1]
                rows.append(row)
    return rows


def main() -> None:
    items = by(read_jsonl(HERE / "material" / "paragraphs.jsonl"), "item_id")
    seg = segments(items)
    write_jsonl(HERE / "segments.jsonl", seg)
    waiting = (
        len(read_jsonl(HERE / "material" / "seg_instructor.jsonl"))
        + len(read_jsonl(HERE / "material" / "seg_model.jsonl"))
        - len(seg)
    )
    print(f"segments.jsonl: {len(seg)} texts ({waiting} in material not segmented yet)")
    if list(RAW.glob("pairs_P*.jsonl")):
        pr = pairs(items)
        write_jsonl(HERE / "pairs.jsonl", pr)
        print(f"pairs.jsonl: {len(pr)} pairs")


if __name__ == "__main__":
    main()
