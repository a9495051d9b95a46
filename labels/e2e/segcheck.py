"""A check of the segmenters on feedback by writers the models never learned from: the
end-to-end set's candidate texts written for their paragraph (blind, informed_most,
informed_partial: 288, by six writers), segmented under segmentation-v2.md by annotators
who labelled nothing else. Never assembled into segments.jsonl: it trains and tunes nothing.

``draw``: the texts in four chunks (seg_chunk<N>.jsonl: text_id = candidate_id, the
paragraph's body, the text) and a second-opinion subset (seg_double.jsonl, every sixth
text); refuses to overwrite them.
``check``: the learned and the rules segmenter (feedback side) against the annotators'
units (raw/seg_<annotator>.jsonl; the first opinion where there are two), overall, per kind
and per writer; the second opinion against the first.
Run: python labels/e2e/segcheck.py draw | check
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))  # assemble.py: run as a script, like it
from assemble import agreement_line, group_lines, read_jsonl, write_jsonl  # noqa: E402

CHUNKS = 4
DOUBLE = HERE / "seg_double.jsonl"


def draw() -> None:
    """Write the chunks and the second-opinion subset (never over existing ones)."""
    paths = [HERE / f"seg_chunk{k}.jsonl" for k in range(1, CHUNKS + 1)] + [DOUBLE]
    if any(p.exists() for p in paths):
        sys.exit(f"{next(p for p in paths if p.exists())} exists: drawn already")
    bodies = {r["e2e_id"]: r["body"] for r in read_jsonl(HERE / "paragraphs.jsonl")}
    rows = [
        {"text_id": r["candidate_id"], "body": bodies[r["e2e_id"]], "text": r["text"]}
        for r in read_jsonl(HERE / "candidates.jsonl")
        if r["kind"] != "off_paragraph"
    ]
    for k, path in enumerate(paths[:CHUNKS]):
        write_jsonl(path, rows[k::CHUNKS])
    write_jsonl(DOUBLE, rows[::6])
    print(f"{len(rows)} texts in {CHUNKS} chunks, {len(rows[::6])} for a second opinion")


def check() -> None:
    """Each segmenter against the annotators' units, by kind and writer; the two opinions."""
    from unimatch_metric.segmenters import segment

    double = {r["text_id"] for r in read_jsonl(DOUBLE)}
    first: dict[str, list[str]] = {}
    second: dict[str, list[str]] = {}
    for path in sorted((HERE / "raw").glob("seg_*.jsonl")):
        rows = read_jsonl(path)
        only_double = {r["text_id"] for r in rows} <= double
        for r in rows:
            (second if only_double else first)[r["text_id"]] = r["units"]
    candidates = [r for r in read_jsonl(HERE / "candidates.jsonl") if r["candidate_id"] in first]
    for r in candidates:
        if "".join("".join(first[r["candidate_id"]]).split()) != "".join(r["text"].split()):
            sys.exit(f"{r['candidate_id']}: the units do not make up the text")
    texts = [r["text"] for r in candidates]
    reference = [first[r["candidate_id"]] for r in candidates]
    print(f"{len(candidates)} texts, {sum(len(u) for u in reference)} units")
    groups: dict[str, list[int]] = {"all": list(range(len(candidates)))}
    for key in ("kind", "writer"):
        for k, r in enumerate(candidates):
            groups.setdefault(f"{key} {r[key]}", []).append(k)
    for name in ("learned", "rules"):
        found = [list(u) for u in segment(texts, segmenter=name, use_cache=False)]
        print("\n".join(group_lines(f"  {name}", groups, reference, found)))
    both = [t for t in sorted(second) if t in first]
    if both:
        print(
            agreement_line(
                "second opinion against the first",
                [first[t] for t in both],
                [second[t] for t in both],
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("draw", "check"))
    if parser.parse_args().command == "draw":
        draw()
    else:
        check()


if __name__ == "__main__":
    main()
