"""The dataset card (README.md with YAML ``configs:``) written next to the built shards."""

from __future__ import annotations

import json
from typing import Any

from datasets import List, Value

from .revisions import LABELS, REVISED
from .schema import CONFIG_FEATURES

CITATION = """@article{oskoui2026sefora,
  title={SEFORA: Student Essays with Feedback Corpus and LLM Feedback Evaluation Framework},
  author={Oskoui, Shayan Peyghambari and Almousa, Norah and Hou, Zhaoyi Joey and
          Gustafson, Carolina and Rogers, Gayle and Coelho, Raquel and Litman, Diane and
          Li, Xiang Lorraine},
  journal={arXiv preprint arXiv:2607.00274},
  year={2026}
}"""

FIELD_DOCS = {
    "essays": {
        "essay_id": "one student's work on one assignment (`<assignment_id>_<student_id>`)",
        "assignment_id": "the assignment (`Batch_b_Course_c_Class_k_Essay_e`)",
        "student_id": "pseudonymous student id from the file name (`ID0059`)",
        "batch, course, class, essay": "numeric parts of the ids",
        "assignment_text": "prompt/rubric text: the `.txt` files nearest the essay folder",
        "assignment_files": "paths of those `.txt` files, relative to the corpus root",
        "draft_ids, stages": "the essay's drafts in stage order",
        "num_drafts": "number of drafts",
    },
    "drafts": {
        "draft_id": "file stem, e.g. `Batch_1_Course_1_Class_2_Essay_3_Final_ID0061`",
        "stage, stage_index": "stage name as given by the instructor and its position (0-based)",
        "previous_draft_id": "the draft before this one in the same essay, or null",
        "paragraphs": "list of {body, annotations} (annotations as in `annotations` below)",
        "text": "the whole draft: the paragraph bodies joined by a blank line (the input of "
        "a document-level assessment)",
        "grades": "rubric grades as a list of {item, score (float or null), raw (as given)}",
        "overall_comment": "the instructor's overall comment, or null",
        "peer_comment": "a peer-review comment when the draft carries one, or null",
        "assignment_text, assignment_files": "prompt/rubric text nearest the stage folder",
        "num_paragraphs, num_annotations": "counts",
        "source_file": "path of the draft file, relative to the corpus root",
    },
    "paragraphs": {
        "paragraph_id": "`<draft_id>_P<nnn>`",
        "paragraph_index": "0-based position in the draft",
        "body": "paragraph text, exactly as in the corpus",
        "annotations": "list of inline annotations (fields as in the `annotations` config)",
        "instructor_comments": "the non-empty comments of those annotations, in order",
        "num_annotations, num_comments, num_words": "counts (words split on whitespace)",
    },
    "annotations": {
        "annotation_id": "`<paragraph_id>_A<nn>`",
        "type": "`highlight`, `note` (sticky note) or `strikeout`",
        "text": "highlighted or struck text (null for notes)",
        "comment": "the instructor's comment (may be empty: a bare highlight)",
        "color": "highlight colour: pink = great line, green = interesting, expand on it, "
        "yellow = a problem in this sentence, generic = no convention (null otherwise)",
        "context_left, context_right": "text just left/right of the span or note",
        "start, end": "character offsets of the span in the paragraph body "
        "(`body[start:end] == text`; for a note start == end, the anchor point); "
        "-1 when the span cannot be located",
    },
    "revisions": {
        "annotation_id, paragraph_id, draft_id": "the annotation, as in `annotations`",
        "next_draft_id, next_stage": "the essay's next draft, where the span is followed",
        "type, color, comment": "the annotation's, as in `annotations`",
        "comment_category": "the comment's feedback category by the toolkit's keyword rule "
        "(`sefora_dataset.categories`), null for none or an empty comment",
        "paragraph": "the annotated paragraph's body",
        "start, end, span_text": "the followed span in `paragraph`: the annotation's own, "
        "the sentence around a sticky note (or a white-space-only span), -1/null if unlocated",
        "next_paragraph_index, next_paragraph": "the aligned paragraph of the next draft "
        "(-1/null when none)",
        "paragraph_similarity": "word-bigram Dice similarity of the two paragraphs (null: none)",
        "next_start, next_end, next_span_text": "where the span went (a removed span: the "
        "empty range where it was; -1/null when not followed)",
        "label": "`unchanged`, `edited`, `removed`, `paragraph_removed` or `unaligned` "
        "(the span was never located)",
        "edit_distance": "character edit distance between the span's text before and after "
        "(the span's length when removed; null when unaligned)",
        "moved": "the span's text was found verbatim in another paragraph of the next draft "
        "(e.g. after a paragraph split) and followed there",
    },
}


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "n>100K"


def _yaml(files: dict[str, dict[str, str]], n_paragraphs: int) -> str:
    lines = [
        "---",
        "pretty_name: SEFORA",
        "license: cc-by-4.0",
        "language:",
        "- en",
        "task_categories:",
        "- text-generation",
        "tags:",
        "- education",
        "- writing-feedback",
        "- essays",
        "size_categories:",
        f"- {_size_category(n_paragraphs)}",
        "configs:",
    ]
    for config in CONFIG_FEATURES:
        if not files[config]:
            continue  # no rows at all: nothing `load_dataset` could load
        lines.append(f"- config_name: {config}")
        if config == "paragraphs":
            lines.append("  default: true")
        lines.append("  data_files:")
        for split, path in files[config].items():
            lines += [f"  - split: {split}", f"    path: {path}"]
    lines.append("---")
    return "\n".join(lines)


def _counts_table(summary: dict[str, Any]) -> str:
    rows = summary["rows"]
    splits = list(rows["drafts"])
    head = "| config | " + " | ".join(splits) + " | total |"
    sep = "|---" * (len(splits) + 2) + "|"
    body = [
        f"| {c} | " + " | ".join(f"{n:,}" for n in per.values()) + f" | {sum(per.values()):,} |"
        for c, per in rows.items()
    ]
    students = summary["students"]
    body.append(
        "| students | "
        + " | ".join(f"{students[s]:,}" for s in splits)
        + f" | {sum(students.values()):,} |"
    )
    return "\n".join([head, sep, *body])


def _empty_splits(files: dict[str, dict[str, str]]) -> list[str]:
    """A note naming the splits (and configs) this build leaves out for having no rows."""
    missing = [
        f"`{config}`" + (f" {'/'.join(absent)}" if files[config] else " (no rows at all)")
        for config in CONFIG_FEATURES
        if (absent := [s for s in ("train", "validation", "test") if s not in files[config]])
    ]
    if not missing:
        return []
    return [
        "",
        "Left out of this build's `configs:` for having no rows (`datasets` cannot load an "
        f"empty split): {', '.join(missing)}.",
    ]


def _type_name(feature: Any) -> str:
    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, List):
        return f"list<{_type_name(feature.feature)}>"
    return "struct{" + ", ".join(f"{k}: {_type_name(v)}" for k, v in feature.items()) + "}"


def _fields(config: str) -> str:
    docs = "\n".join(f"- `{name}`: {doc}" for name, doc in FIELD_DOCS[config].items())
    types = " ".join(
        f"`{name}` {_type_name(feature)}," for name, feature in CONFIG_FEATURES[config].items()
    )
    return f"{docs}\n\nTypes: {types.rstrip(',')}."


def _example(row: dict[str, Any]) -> str:
    """A paragraphs row as JSON, long texts shortened."""
    shown = {
        k: (v[:160] + "…" if isinstance(v, str) and len(v) > 160 else v) for k, v in row.items()
    }
    return json.dumps(shown, ensure_ascii=False, indent=2)


def _loading(files: dict[str, dict[str, str]], folder: str) -> list[str]:
    """The card's loading example, naming only configs and splits this build has."""
    split = "test" if "test" in files["paragraphs"] else next(iter(files["paragraphs"]))
    every = "+".join(files["drafts"])
    return [
        "```python",
        "from datasets import load_dataset",
        "",
        "# run next to this folder (or give its path); from the Hub, once uploaded:",
        f'# load_dataset("<namespace>/{folder}", "paragraphs", split="{split}")',
        f'paragraphs = load_dataset("{folder}", "paragraphs", split="{split}")',
        f'everything = load_dataset("{folder}", "drafts", split="{every}")',
        "print(len(paragraphs), len(everything))",
        "```",
    ]


def _label_table(title: str, table: dict[str, dict[str, int]]) -> str:
    head = f"| {title} | " + " | ".join(LABELS) + " | revised |"
    lines = [head, "|---" * (len(LABELS) + 2) + "|"]
    for key, counts in table.items():
        followed = sum(counts.values()) - counts["unaligned"]
        share = sum(counts[label] for label in REVISED) / followed if followed else None
        cells = " | ".join(f"{counts[label]:,}" for label in LABELS)
        lines.append(f"| {key} | {cells} | {'–' if share is None else f'{share:.0%}'} |")
    return "\n".join(lines)


def _span_sizes_section(sizes: dict[str, Any]) -> list[str]:
    """How large the instructors' spans are (`sefora_common.text.span_size`)."""
    counts, shares, words = sizes["counts"], sizes["shares"], sizes["mean_words"]
    lines = ["| size | spans | share | mean words |", "|---|---|---|---|"]
    for name in ("phrase", "sentence", "multi_sentence"):
        mean = "–" if words[name] is None else f"{words[name]:.1f}"
        lines.append(f"| {name} | {counts[name]:,} | {shares[name]:.0%} | {mean} |")
    return [
        "### How large the marked spans are",
        "",
        "A highlight or strikeout is a *phrase* when it stays inside one sentence and covers "
        "less than 80% of it, a *sentence* when it covers at least 80% of one sentence, "
        "*multi-sentence* when it overlaps two or more sentences by 4 characters or more. "
        f"{counts['point']:,} marks are points (sticky notes, and a few highlights of white "
        "space only): the span-identification metric counts each as the sentence around it. "
        f"{counts['unlocated']:,} spans are unlocated.",
        "",
        "\n".join(lines),
        "",
    ]


def _revisions_section(revisions: dict[str, Any]) -> list[str]:
    """The card's account of the `revisions` config: label counts by type, colour, category."""
    labels = ", ".join(f"{n:,} {label}" for label, n in revisions["labels"].items())
    return [
        "### What became of the marked spans (`revisions`)",
        "",
        f"{revisions['rows']:,} annotations on drafts with a later stage: {labels} "
        f"({revisions['moved']:,} found moved to another paragraph). The paragraphs of "
        "consecutive drafts are aligned by word-bigram similarity in order (then moved "
        "paragraphs), spans are found verbatim or followed through a token diff, sticky notes "
        "through the sentence around them. *Revised* = edited, removed or paragraph removed, "
        "among the followed (not unaligned) spans.",
        "",
        _label_table("type", revisions["by_type"]),
        "",
        _label_table("colour", revisions["by_color"]),
        "",
        _label_table("comment category", revisions["by_category"]),
        "",
    ]


def render_card(
    summary: dict[str, Any],
    files: dict[str, dict[str, str]],
    example: dict[str, Any],
    is_sample: bool,
    folder: str = "sefora",
) -> str:
    """The whole card: YAML front matter, description, structure, counts, licence, citation.

    ``folder`` is the name of the built folder, used in the loading example.
    """
    types = summary["annotation_types"]
    colors = ", ".join(f"{c} {n:,}" for c, n in summary["highlight_colors"].items())
    provenance = (
        "**This build is the toolkit's invented sample corpus** (a few made-up essays used "
        "for tests and the quick start), not SEFORA itself. Build the real corpus with "
        "`sefora build --source <SEFORA clone>/SEFORA`."
        if is_sample
        else "Built from the published SEFORA corpus with `sefora build`."
    )
    total_ann = sum(types.values())
    sections = [
        _yaml(files, sum(summary["rows"]["paragraphs"].values())),
        "",
        "# SEFORA: Student Essays with Feedback",
        "",
        "Real first-year college essay drafts with the comments their instructors wrote on "
        "them: span-anchored inline annotations (highlights, sticky notes, strikeouts), "
        "overall comments and rubric grades, with the assignment prompts and rubrics and "
        "the successive drafts of each essay. It is the reference material for studying how "
        "close LLM-written feedback comes to an instructor's (e.g. with the UniMatch metric).",
        "",
        provenance,
        "",
        "> **Content warning.** Authentic student writing, unedited: it can contain strong "
        "language and emotionally charged opinions. Names are pseudonymised by the corpus "
        "authors. The views are the students' own.",
        "",
        "## Loading",
        "",
        *_loading(files, folder),
        "",
        "The shards are Arrow files listed in this card's YAML; no loading script, no network.",
        "",
        "## Contents",
        "",
        f"{total_ann:,} inline annotations "
        f"({', '.join(f'{n:,} {t}' for t, n in types.items())}; highlight colours: {colors}), "
        f"{summary['annotated_paragraphs']:,} paragraphs with at least one annotation "
        f"({summary['single_annotation_paragraphs']:,} with exactly one), "
        f"{summary['drafts_with_grades']:,} drafts with rubric grades, "
        f"{summary['drafts_with_overall_comment']:,} with an overall comment, "
        f"{summary['assignments']:,} assignments. "
        f"{summary['located_spans']:,} of the annotations are located in their paragraph "
        "(`start >= 0`).",
        "",
        "## Splits",
        "",
        "`train` / `validation` / `test` are disjoint by **student**: a student's id is hashed "
        "(SHA-256) into 100 buckets, 0-79 train, 80-89 validation, 90-99 test, so a student "
        "never appears in two splits and a student's split never changes when the corpus "
        "grows. Student ids are taken as global across classes (the conservative reading: "
        'the same id is always kept in one split). Use `split="train+validation+test"` for '
        "the whole corpus.",
        *_empty_splits(files),
        "",
        _counts_table(summary),
        "",
        "## Configs and fields",
        "",
        "- `essays`: one row per essay (a student's work on one assignment).",
        "- `drafts`: one row per draft file (one stage of an essay).",
        "- `paragraphs` (default): one row per paragraph, with its annotations.",
        "- `annotations`: one row per inline annotation.",
        "- `revisions`: one row per inline annotation on a draft that has a later stage, with "
        "what became of its span in the next draft.",
        "",
        "All configs share `essay_id`, `assignment_id`, `student_id`, `batch`, `course`, "
        "`class`, `essay`; `drafts`, `paragraphs`, `annotations` and `revisions` also carry "
        "`draft_id` and `stage`.",
        "",
    ]
    for config in CONFIG_FEATURES:
        sections += [f"### {config}", "", _fields(config), ""]
    sections += _span_sizes_section(summary["span_sizes"])
    sections += _revisions_section(summary["revisions"])
    sections += [
        "### An example (`paragraphs`)",
        "",
        "```json",
        _example(example),
        "```",
        "",
    ]
    sections += [
        "## Limitations",
        "",
        "- Stage names are the instructors' own (Initial, Draft, Outline, StoryTelling, "
        "Revision, Final); drafts of an essay are ordered Outline, StoryTelling, Initial, "
        "Draft, Revision, Final, then any other stage name alphabetically.",
        "- Some annotations have an empty comment: a bare highlight whose colour carries the "
        "meaning. `instructor_comments` leaves them out; `annotations` keeps them.",
        "- Grades use each course's own rubric and scale; non-numeric grades (e.g. `N/A`) "
        "have `score = null` and keep their `raw` value.",
        "",
        "## Licence",
        "",
        "Creative Commons Attribution 4.0 International (CC BY 4.0). Credit the corpus "
        "authors (citation below).",
        "",
        "## Citation",
        "",
        "```bibtex",
        CITATION,
        "```",
        "",
    ]
    return "\n".join(sections)
