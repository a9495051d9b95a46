"""The three studies beyond the paper, measured on the shared corpus (no model, offline).

1. Revisions: the ``revisions`` config's row count and label distribution.
2. Span sizes of the instructor annotations (phrase / sentence / multi-sentence, notes).
3. Span identification: span P/R/F1 and anchored UniMatch of three offline stand-ins for a
   model's anchored feedback on each annotated paragraph (with at least two sentences):
   ``right`` the instructor's own comments at their own spans (the ceiling), ``moved``
   the same comments each moved to another sentence of the paragraph (right point, wrong
   place), ``other`` the comments of the next annotated paragraph at their offsets there
   (wrong point, arbitrary place). A metric that separates right from wrong spans ranks
   right > moved on anchored UniMatch with equal content F1, and right > moved, other on
   span F1.

Usage: python benchmarks/corpus_studies.py [--source DIR] [--paragraphs N] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

DEFAULT_SOURCE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "SEFORA"


def corpus_rows(source: Path) -> tuple[list[dict], list[dict]]:
    """The drafts rows and the revisions rows of the corpus, as the dataset build makes them."""
    from sefora_dataset.build import draft_rows
    from sefora_dataset.read import read_corpus
    from sefora_dataset.revisions import essay_revision_rows

    drafts, revisions = [], []
    for essay in read_corpus(source, progress=False):
        rows = [draft_rows(d)[0] for d in essay.drafts]
        drafts += rows
        revisions += essay_revision_rows(rows)
    return drafts, revisions


def stand_ins(drafts: list[dict], limit: int) -> tuple[list[str], list[list], dict[str, list]]:
    """Paragraph texts, their references (comment, span) and the three stand-ins' items."""
    from sefora_common.text import resolve_span, sentence_bounds

    paragraphs = []
    for draft in drafts:
        for para in draft["paragraphs"]:
            refs = [
                (a["comment"].strip(), (a["start"], a["end"]))
                for a in para["annotations"]
                if a["comment"].strip() and a["start"] >= 0
            ]
            if refs and len(sentence_bounds(para["body"])) >= 2:
                paragraphs.append((para["body"], refs))
    paragraphs = paragraphs[: limit + 1] if limit else paragraphs
    texts = [t for t, _ in paragraphs[:-1]]
    references = [r for _, r in paragraphs[:-1]]
    moved = []
    for text, refs in zip(texts, references, strict=True):
        sentences = sentence_bounds(text)
        items = []
        for comment, (start, end) in refs:
            span = resolve_span(text, start, end)
            here = next((i for i, (_, e) in enumerate(sentences) if span[0] < e), 0)
            items.append((comment, sentences[(here + len(sentences) // 2) % len(sentences)]))
        moved.append(items)
    other = []
    for text, (_, refs) in zip(texts, paragraphs[1:], strict=True):
        n = len(text)
        other.append([(c, (min(s, n), min(max(e, s), n))) for c, (s, e) in refs])
    right = [list(r) for r in references]
    return texts, references, {"right": right, "moved": moved, "other": other}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--paragraphs", type=int, default=0, help="0 = every annotated one")
    parser.add_argument("--segmenter", default="offline")
    parser.add_argument("--scorer", default="offline")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()

    from sefora_common.text import span_statistics
    from unimatch_metric.spans import anchored_unimatch

    start = time.perf_counter()
    drafts, revisions = corpus_rows(args.source)
    figures: dict = {
        "revisions": {
            "rows": len(revisions),
            "labels": dict(Counter(r["label"] for r in revisions).most_common()),
            "moved": sum(r["moved"] for r in revisions),
        }
    }
    annotations = [
        (p["body"], a["start"], a["end"])
        for d in drafts
        for p in d["paragraphs"]
        for a in p["annotations"]
    ]
    figures["span_sizes"] = span_statistics(annotations)
    texts, references, runs = stand_ins(drafts, args.paragraphs)
    figures["span_identification"] = {"paragraphs": len(texts)}
    keys = ("f1", "content_f1", "span_f1", "span_soft_f1", "precision", "recall")
    for name, predictions in runs.items():
        out = anchored_unimatch(
            predictions, references, texts, segmenter=args.segmenter, scorer=args.scorer
        )
        figures["span_identification"][name] = {k: round(out[k], 4) for k in keys}
        figures["span_identification"]["scorer"] = out["config"]["scorer"]["name"]
    figures["seconds"] = round(time.perf_counter() - start, 1)
    text = json.dumps(figures, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
