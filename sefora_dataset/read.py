"""Read a SEFORA corpus folder: find the drafts, parse ids from names, validate, order stages.

The published layout is ``Batch_*/Course_*/Class_*/Essay_*/<Stage>/<draft file>``; a draft
file is named ``Batch_b_Course_c_Class_k_Essay_e_<Stage>_ID<nnnn>`` with the suffix
``.json`` (the published format) or ``.pdf`` / ``.docx`` (raw annotated submissions, parsed
on the way). Files are found by name anywhere under the source, so a flattened copy of the
corpus reads too (it then has no assignment texts, which are found by folder).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sefora_common.errors import InputError
from sefora_common.jsonl import decode_json, value_problems
from sefora_common.progress import progress_bar

from .errors import CorpusError, SeforaError
from .schema import draft_problems

DRAFT_SUFFIXES = (".json", ".pdf", ".docx")
NAME_PATTERN = re.compile(
    r"^Batch_(?P<batch>\d+)_Course_(?P<course>\d+)_Class_(?P<class_>\d+)"
    r"_Essay_(?P<essay>\d+)_(?P<stage>.+)_ID(?P<student>\d+)$"
)
#: Order of the stage names used by SEFORA's instructors. Stages not listed here come
#: after the listed ones, in alphabetical order (a documented, deterministic fallback).
STAGE_ORDER = ("Outline", "StoryTelling", "Initial", "Draft", "Revision", "Final")


def stage_sort_key(stage: str) -> tuple[int, str]:
    """Sort key placing known stages in workflow order and unknown ones after, by name."""
    try:
        return (STAGE_ORDER.index(stage), "")
    except ValueError:
        return (len(STAGE_ORDER), stage)


@dataclass
class Draft:
    """One draft file: its ids (from the file name), assignment text and validated content."""

    draft_id: str
    batch: int
    course: int
    class_: int
    essay: int
    stage: str
    student_id: str
    path: Path
    source_file: str
    assignment_text: str
    assignment_files: list[str]
    data: dict[str, Any]
    stage_index: int = 0
    previous_draft_id: str | None = None

    @property
    def assignment_id(self) -> str:
        """The assignment (one essay prompt in one class) this draft answers."""
        return f"Batch_{self.batch}_Course_{self.course}_Class_{self.class_}_Essay_{self.essay}"

    @property
    def essay_id(self) -> str:
        """One student's work on one assignment, across all its stages."""
        return f"{self.assignment_id}_{self.student_id}"


@dataclass
class Essay:
    """All drafts of one student for one assignment, in stage order."""

    essay_id: str
    drafts: list[Draft]
    assignment_text: str
    assignment_files: list[str] = field(default_factory=list)


class CorpusProblems(SeforaError):
    """Every problem found while reading a corpus, reported together (nothing is skipped):
    ``problems`` holds one error per bad file, and the message one line per problem, each
    naming the file and the JSON path."""

    def __init__(self, problems: list[SeforaError]) -> None:
        self.problems = problems
        lines = [
            f"  - {err.path}: {field}: {message}" if field else f"  - {err.path}: {message}"
            for err in problems
            if isinstance(err, InputError)
            for field, message in err.problems
        ]
        lines += [f"  - {err}" for err in problems if not isinstance(err, InputError)]
        super().__init__(f"{len(lines)} problem(s) in the corpus:\n" + "\n".join(lines))


def parse_name(path: Path) -> dict[str, Any]:
    """Ids encoded in a draft file name; :class:`CorpusError` when the name does not match."""
    match = NAME_PATTERN.match(path.stem)
    if not match:
        raise CorpusError(
            str(path),
            "",
            "file name does not follow Batch_<b>_Course_<c>_Class_<k>_Essay_<e>_<Stage>_ID<nnnn>",
        )
    ids = match.groupdict()
    return {
        "batch": int(ids["batch"]),
        "course": int(ids["course"]),
        "class_": int(ids["class_"]),
        "essay": int(ids["essay"]),
        "stage": ids["stage"],
        "student_id": f"ID{ids['student']}",
    }


def _texts_in(folder: Path) -> tuple[tuple[str, str], ...]:
    return tuple((p.name, p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.txt")))


def find_assignment(folder: Path, root: Path) -> tuple[str, list[str]]:
    """Assignment prompt/rubric text: the ``.txt`` files of the nearest folder that has any,
    looking from ``folder`` upward to ``root``. Several files are joined by a blank line."""
    current = folder
    while True:
        texts = _texts_in(current)
        if texts:
            rel = current.relative_to(root)
            files = [str(rel / name) for name, _ in texts]
            return "\n\n".join(text.strip() for _, text in texts), files
        if current == root or root not in current.parents:
            return "", []
        current = current.parent


def load_draft_file(path: Path) -> dict[str, Any]:
    """The draft structure of one file: JSON is loaded, PDF/DOCX parsed; then validated.

    Raises one `CorpusError` listing every problem of the file, each with its JSON path:
    values JSON cannot hold (NaN, Infinity, a lone surrogate) and schema violations.
    """
    if path.suffix.lower() == ".json":
        try:
            data, problems = decode_json(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as err:
            raise CorpusError(str(path), "", f"not UTF-8 text ({err.reason})") from err
        except json.JSONDecodeError as err:
            raise CorpusError(
                str(path), f"line {err.lineno} column {err.colno}", f"malformed JSON: {err.msg}"
            ) from err
    else:
        from .parsers import parse_file

        data = parse_file(path)
        problems = value_problems(data)
    problems += draft_problems(data)
    if problems:
        raise CorpusError.of_problems(str(path), problems)
    return data


def find_draft_files(source: Path) -> list[Path]:
    """Every draft file under ``source`` (sorted, hidden folders ignored)."""
    return sorted(
        p
        for p in source.rglob("*")
        if p.suffix.lower() in DRAFT_SUFFIXES
        and p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(source).parts)
    )


def read_corpus(source: str | Path, progress: bool | None = None) -> list[Essay]:
    """Read, validate and order every draft under ``source``.

    Raises :class:`CorpusError` when the folder is missing or holds no drafts, and
    :class:`CorpusProblems` listing every bad file (file + JSON path) when any is invalid.
    """
    root = Path(source)
    if not root.is_dir():
        raise CorpusError(str(root), "", "source folder does not exist")
    root = root.resolve()
    paths = find_draft_files(root)
    if not paths:
        raise CorpusError(
            str(root), "", f"no draft files ({', '.join(DRAFT_SUFFIXES)}) found in this folder"
        )
    drafts: dict[str, Draft] = {}
    problems: list[SeforaError] = []
    for path in progress_bar(paths, desc="Reading drafts", unit="file", show=progress):
        try:
            ids = parse_name(path)
            if path.stem in drafts:
                raise CorpusError(
                    str(path), "", f"duplicate draft id (also {drafts[path.stem].source_file})"
                )
            text, files = find_assignment(path.parent, root)
            drafts[path.stem] = Draft(
                draft_id=path.stem,
                path=path,
                source_file=str(path.relative_to(root)),
                assignment_text=text,
                assignment_files=files,
                data=load_draft_file(path),
                **ids,
            )
        except SeforaError as err:
            problems.append(err)
    if problems:
        raise CorpusProblems(problems)
    return group_essays(drafts.values(), root)


def group_essays(drafts: Iterable[Draft], root: Path) -> list[Essay]:
    """Group drafts by essay, order them by stage and link each to its previous draft."""
    by_essay: dict[str, list[Draft]] = defaultdict(list)
    for draft in drafts:
        by_essay[draft.essay_id].append(draft)
    essays = []
    for essay_id in sorted(by_essay):
        ordered = sorted(by_essay[essay_id], key=lambda d: stage_sort_key(d.stage))
        for index, draft in enumerate(ordered):
            draft.stage_index = index
            draft.previous_draft_id = ordered[index - 1].draft_id if index else None
        essay_folder = _essay_folder(ordered[0].path, root)
        text, files = find_assignment(essay_folder, root)
        essays.append(Essay(essay_id, ordered, text, files))
    return essays


def _essay_folder(path: Path, root: Path) -> Path:
    """The ``Essay_*`` folder above a draft (its own folder in a flattened layout)."""
    for parent in path.parents:
        if parent == root:
            break
        if parent.name.startswith("Essay_"):
            return parent
    return path.parent
