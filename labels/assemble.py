"""Assemble the annotators' raw files (raw/, raw/v2/) into the released label files.

segments.jsonl: one feedback text per line with its units (primary annotator) and, for the
double-labelled subset, the second annotator's units. pairs.jsonl: one (instructor unit,
model unit) pair per line with its 0-4 score(s). Where a v2 annotator delivered (raw/v2/,
guideline version 2), the v2 label is the primary one and the v1 label is kept beside it
(``score_v1`` / ``units_v1``); second opinions are of the same guideline version as the
primary label. Prints the agreement of the double-labelled subsets.
Run from anywhere: python labels/assemble.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sefora_common import jsonl

HERE = Path(__file__).parent
RAW = HERE / "raw"
RAW_V2 = RAW / "v2"
SECOND_OPINIONS = {"S2", "S5", "S14", "P5"}  # annotators who re-labelled a subset independently
#: Each v2 second annotator and whose primary labels it re-did (for the agreement report).
SECOND_OPINION_OF = {
    "R5": "R1-R4",
    "R8": "R2",
    "R13": "R9-R12",
    "R18": "R14-R17",
    "R36": "R28-R35",
    "T3": "T1/T2",
    "T10": "T6-T9",
    "T17": "T13-T16",
    "T26": "T20-T25",
    "T28": "T27",
    "T30": "T29",
    "T39": "T35-T38",
    "T44": "T40-T43",
    "T64": "T60-T63",
    "T54": "T50-T53",
    "R44": "R40-R43",
    "T59": "T55-T58",
    "R49": "R45-R48",
    "T69": "T65-T68",
    "R54": "R50-R53",
    "T74": "T70-T73",
    "R59": "R55-R58",
}
SECOND_OPINIONS_V2 = set(SECOND_OPINION_OF)
#: Writers whose texts (and their pairs) are held out of segments.jsonl and pairs.jsonl: round
#: 5 (v2_new_material.py), a check on writers and annotators the models never learned from
#: (heldout.py).
HELD_OUT_WRITERS = {"AH", "AI", "AJ", "AK"}


def held_out(text_id: str) -> bool:
    """Whether a new text's id (``<item>-<writer>-<style>``, or a pair id starting with it)
    names a held-out writer."""
    parts = text_id.split(":")[0].split("-")
    return len(parts) == 3 and parts[1] in HELD_OUT_WRITERS


def read_jsonl(path: Path) -> list[dict]:
    return [row for _, row in jsonl.read_jsonl(path)]


def read_delivered(path: Path) -> list[dict]:
    """The complete lines of a file an annotator may still be appending to (a last line
    without its newline is being written and is left for the next run)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if text and not text.endswith("\n"):
        lines = lines[:-1]
    return [json.loads(line) for line in lines if line.strip()]


def v2_labels(pattern: str, key: str, value: str) -> tuple[dict[str, dict[str, object]], int]:
    """{id: {annotator: label}} from the raw/v2 files matching ``pattern``, and how many ids
    an annotator labelled twice differently (those labels are left out until they fix it)."""
    labels: dict[str, dict[str, object]] = {}
    conflicts: set[tuple[str, str]] = set()
    for path in sorted(RAW_V2.glob(pattern)):
        name = path.stem.rsplit("_", 1)[1]
        for r in read_delivered(path):
            mine = labels.setdefault(r[key], {})
            if name in mine and mine[name] != r[value]:
                conflicts.add((r[key], name))
            mine.setdefault(name, r[value])
    for id_, name in conflicts:
        del labels[id_][name]
    return labels, len(conflicts)


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


def segments(items: dict, v2: dict[str, dict[str, object]]) -> list[dict]:
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
        rows.append(with_v2_units(row, v2))
    return rows + new_texts(items, v2) + comment_texts(items, v2)


def v2_units(text: str, labelled: dict[str, object]) -> dict:
    """A text's v2 fields: the first primary annotator's units, and the first second
    opinion's where one was given."""
    primary = sorted(n for n in labelled if n not in SECOND_OPINIONS_V2)
    fields = {
        "units": verbatim(text, labelled[primary[0]]),
        "annotator": primary[0],
        "guideline": "v2",
    }
    seconds = sorted(n for n in labelled if n in SECOND_OPINIONS_V2)
    if seconds:
        fields["units_2"] = verbatim(text, labelled[seconds[0]])
        fields["annotator_2"] = seconds[0]
    return fields


def new_texts(items: dict, v2: dict[str, dict[str, object]]) -> list[dict]:
    """The v2 rounds' new model-style texts (writers N, O, W-Z, AD-AG, AL-AS; round 5's
    are held out) with their v2 units (T54's, T69's and T74's as second opinions on rounds
    4, 6 and 7)."""
    rows = []
    for path in sorted((HERE / "material" / "v2").glob("seg_new_*.jsonl")):
        for t in read_jsonl(path):
            labelled = v2.get(t["text_id"], {})
            if held_out(t["text_id"]) or not labelled.keys() - SECOND_OPINIONS_V2:
                continue  # held out, or not segmented yet
            item_id, writer, style = t["text_id"].split("-")
            item = items[item_id]
            row = {
                "text_id": t["text_id"],
                "item_id": item_id,
                "paragraph_id": item["paragraph_id"],
                "part": item["part"],
                "source": "model",
                "style": style,
                "text": t["text"],
                **v2_units(t["text"], labelled),
            }
            rows.append(row)
    return rows


def comment_texts(items: dict, v2: dict[str, dict[str, object]]) -> list[dict]:
    """The further instructor comments drawn by draw_comments.py, with their v2 units
    (T6-T9, T13-T16, T35-T38, T40-T43, T60-T63; T10's, T17's, T39's, T44's and T64's as
    second opinions), then the terse comments writers P and Q wrote in an instructor's
    register (v2_terse.py; style "terse", T27, T28's as the second opinion) and the
    shortest ones of writers AA and AB (T29, T30's)."""
    rows = []
    folder = HERE / "material" / "v2"
    paths = sorted(folder.glob("seg_comments_chunk*.jsonl")) + sorted(
        folder.glob("seg_terse*.jsonl")
    )
    for path in paths:
        for t in read_jsonl(path):
            labelled = v2.get(t["text_id"], {})
            if not labelled.keys() - SECOND_OPINIONS_V2:
                continue  # not segmented yet
            item = items[t["item_id"]]
            row = {
                "text_id": t["text_id"],
                "item_id": t["item_id"],
                "paragraph_id": item["paragraph_id"],
                "part": item["part"],
                "source": "instructor",
                "style": "terse" if "writer" in t else None,
                **({"writer": t["writer"]} if "writer" in t else {}),
                "text": t["text"],
                **v2_units(t["text"], labelled),
            }
            rows.append(row)
    return rows


def with_v2_units(row: dict, v2: dict[str, dict[str, object]]) -> dict:
    """``row`` with its v2 segmentation as the primary label where a v2 annotator delivered
    (T1/T2 for instructor comments, T20-T25 for model-style texts; the v1 units kept as
    ``units_v1``; T3's or T26's as the second opinion), else marked as v1."""
    labelled = v2.get(row["text_id"], {})
    primary = sorted(n for n in labelled if n not in SECOND_OPINIONS_V2)
    if not primary:
        return {**row, "guideline": "v1"}
    out = {
        k: v for k, v in row.items() if k not in ("units", "annotator", "units_2", "annotator_2")
    }
    out["units"] = verbatim(row["text"], labelled[primary[0]])
    out["annotator"] = primary[0]
    out["guideline"] = "v2"
    seconds = sorted(n for n in labelled if n in SECOND_OPINIONS_V2)
    if seconds:
        out["units_2"] = verbatim(row["text"], labelled[seconds[0]])
        out["annotator_2"] = seconds[0]
    out["units_v1"], out["annotator_v1"] = row["units"], row["annotator"]
    if "units_2" in row:
        out["units_v1_2"], out["annotator_v1_2"] = row["units_2"], row["annotator_2"]
    return out


def pairs(items: dict, v2: dict[str, dict[str, object]]) -> list[dict]:
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
                rows.append(with_v2_score(row, v2))
    return rows + new_pairs(items, v2)


def new_pairs(items: dict, v2: dict[str, dict[str, object]]) -> list[dict]:
    """Pairs of the instructor's v2 units with the new texts' units, as scored under v2 (R13's
    and R18's scores as the second opinion where they scored the pair)."""
    rows = []
    for path in sorted((HERE / "material" / "v2").glob("score_new_chunk*.jsonl")):
        for item in read_jsonl(path):
            for p in item["pairs"]:
                scored = v2.get(p["pair_id"], {})
                primary = sorted(n for n in scored if n not in SECOND_OPINIONS_V2)
                if not primary or held_out(p["pair_id"]):
                    continue  # not scored yet, or held out
                row = {
                    "pair_id": p["pair_id"],
                    "item_id": item["item_id"],
                    "paragraph_id": items[item["item_id"]]["paragraph_id"],
                    "part": items[item["item_id"]]["part"],
                    "a": p["a"],
                    "b": p["b"],
                    "score": scored[primary[0]],
                    "annotator": primary[0],
                    "guideline": "v2",
                }
                seconds = sorted(n for n in scored if n in SECOND_OPINIONS_V2)
                if seconds:
                    row["score_2"], row["annotator_2"] = scored[seconds[0]], seconds[0]
                rows.append(row)
    return rows


def with_v2_score(row: dict, v2: dict[str, dict[str, object]]) -> dict:
    """``row`` with its v2 score as the primary label where R1-R4 delivered (the v1 scores
    kept as ``score_v1``; R5's as the second opinion), else marked as v1."""
    scored = v2.get(row["pair_id"], {})
    primary = sorted(n for n in scored if n not in SECOND_OPINIONS_V2)
    if not primary:
        return {**row, "guideline": "v1"}
    out = {
        k: v for k, v in row.items() if k not in ("score", "annotator", "score_2", "annotator_2")
    }
    out["score"], out["annotator"], out["guideline"] = scored[primary[0]], primary[0], "v2"
    seconds = sorted(n for n in scored if n in SECOND_OPINIONS_V2)
    if seconds:
        out["score_2"], out["annotator_2"] = scored[seconds[0]], seconds[0]
    out["score_v1"], out["annotator_v1"] = row["score"], row["annotator"]
    if "score_2" in row:
        out["score_v1_2"], out["annotator_v1_2"] = row["score_2"], row["annotator_2"]
    return out


def agreement(seg: list[dict], pr: list[dict]) -> list[str]:
    """Lines reporting the v2 double-labelled subsets' agreement and how v2 moved v1 labels."""
    from scipy import stats

    from unimatch_metric.training.validate import segmentation_agreement

    out = []
    for part in ("train", "validation", None):
        name = part or "all"
        for second, firsts in ((k, v) for k, v in SECOND_OPINION_OF.items() if k[0] == "R"):
            both = [r for r in pr if r["guideline"] == "v2" and r.get("annotator_2") == second]
            both = [r for r in both if part in (None, r["part"])]
            if len(both) > 2:
                a, b = [r["score"] for r in both], [r["score_2"] for r in both]
                pearson = stats.pearsonr(a, b).statistic
                spearman = stats.spearmanr(a, b).statistic
                mad = sum(abs(x - y) for x, y in zip(a, b, strict=True)) / len(a)
                out.append(
                    f"similarity v2, {second} vs {firsts}, {name}: {len(both)} pairs, Pearson "
                    f"{pearson:.3f}, Spearman {spearman:.3f}, mean absolute difference {mad:.2f}"
                )
        for second, firsts in ((k, v) for k, v in SECOND_OPINION_OF.items() if k[0] == "T"):
            texts = [r for r in seg if r["guideline"] == "v2" and r.get("annotator_2") == second]
            texts = [r for r in texts if part in (None, r["part"])]
            if texts:
                s = segmentation_agreement(
                    [r["units"] for r in texts], [r["units_2"] for r in texts]
                )
                out.append(
                    f"segmentation v2, {second} vs {firsts}, {name}: {s.n_texts} texts, "
                    f"WindowDiff {s.window_diff:.3f}, boundary P {s.precision:.2f} / "
                    f"R {s.recall:.2f} / F1 {s.f1:.2f}"
                )
    moved = [r for r in pr if "score_v1" in r]
    if moved:
        changed = sum(r["score"] != r["score_v1"] for r in moved)
        shift = sum(r["score"] - r["score_v1"] for r in moved) / len(moved)
        out.append(
            f"v2 re-scores: {len(moved)} pairs, {changed} ({changed / len(moved):.0%}) differ "
            f"from v1, mean change {shift:+.2f}"
        )
    for source in ("instructor", "model"):
        resegmented = [r for r in seg if "units_v1" in r and r["source"] == source]
        if resegmented:
            changed = sum(r["units"] != r["units_v1"] for r in resegmented)
            out.append(
                f"v2 re-segmentations, {source}: {len(resegmented)} texts, {changed} differ from v1"
            )
    return out


def agreement_line(label: str, reference: list[list[str]], found: list[list[str]]) -> str:
    """One line of segmentation agreement of ``found`` against ``reference``."""
    from unimatch_metric.training.validate import segmentation_agreement

    s = segmentation_agreement(reference, found)
    return (
        f"{label}: {s.n_texts} texts, WindowDiff {s.window_diff:.3f}, "
        f"boundary P {s.precision:.2f} / R {s.recall:.2f} / F1 {s.f1:.3f}"
    )


def group_lines(
    label: str, groups: dict[str, list[int]], reference: list[list[str]], found: list[list[str]]
) -> list[str]:
    """`agreement_line` of ``found`` against ``reference`` for each group of text indices."""
    return [
        agreement_line(
            f"{label}, {group}", [reference[k] for k in members], [found[k] for k in members]
        )
        for group, members in groups.items()
    ]


def unknown(labels: dict[str, dict[str, object]], rows: list[dict], key: str) -> list[str]:
    """The ids labelled in raw/v2 that no assembled row has and no held-out writer's (a typo
    in an annotator's file)."""
    return sorted(set(labels) - {r[key] for r in rows} - {k for k in labels if held_out(k)})


def main() -> None:
    items = by(read_jsonl(HERE / "material" / "paragraphs.jsonl"), "item_id")
    seg_v2, seg_conflicts = v2_labels("seg_T*.jsonl", "text_id", "units")
    seg = segments(items, seg_v2)
    write_jsonl(HERE / "segments.jsonl", seg)
    waiting = sum(
        1
        for path in (HERE / "material").glob("**/seg_*.jsonl")
        if path.name.startswith(
            ("seg_instructor", "seg_model", "seg_new_", "seg_comments_chunk", "seg_terse")
        )
        for t in read_jsonl(path)
        if not held_out(t["text_id"])
    ) - len(seg)
    v2_texts = sum(r["guideline"] == "v2" for r in seg)
    print(
        f"segments.jsonl: {len(seg)} texts ({waiting} in material not segmented yet), "
        f"{v2_texts} with v2 units"
    )
    pair_v2, pair_conflicts = v2_labels("pairs_R*.jsonl", "pair_id", "score")
    pr = pairs(items, pair_v2)
    write_jsonl(HERE / "pairs.jsonl", pr)
    new = sum("score_v1" not in r and r["guideline"] == "v2" for r in pr)
    print(
        f"pairs.jsonl: {len(pr)} pairs, {sum(r['guideline'] == 'v2' for r in pr)} with v2 "
        f"scores ({new} new pairs of the v2 rounds' new texts)"
    )
    for what, n in (("texts segmented", seg_conflicts), ("pairs scored", pair_conflicts)):
        if n:
            print(f"left out until fixed: {n} {what} twice differently by one v2 annotator")
    for what, ids in (
        ("text_id", unknown(seg_v2, seg, "text_id")),
        ("pair_id", unknown(pair_v2, pr, "pair_id")),
    ):
        if ids:
            print(f"raw/v2: {len(ids)} unknown {what}s, first: {ids[:5]}")
    print("\n".join(agreement(seg, pr)))


if __name__ == "__main__":
    main()
