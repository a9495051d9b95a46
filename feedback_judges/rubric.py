"""Rubrics as data: a checklist of binary items given as JSON, checked field by field.

Each item is a yes/no question about the feedback, with a weight, a dimension, the answer
that satisfies it (``pass_if``), and optionally ``gate`` (failing it makes the score 0).
The reward is the weighted fraction of satisfied items, times 0 if a gate item fails: the
math-feedback rubric (score = correct x sum/5) and RFE-style checklists (weighted fraction)
are both instances. Two rubrics ship in ``rubrics/``: ``math-feedback`` and
``essay-feedback``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from feedback_judges.errors import RubricError
from sefora_common.jsonl import read_json

RUBRIC_DIR = Path(__file__).resolve().parent / "rubrics"
DEFAULT_RUBRIC = "essay-feedback"
ANSWERS = ("yes", "no")


@dataclass(frozen=True)
class RubricItem:
    """One binary checklist item: a yes/no question whose answer ``pass_if`` satisfies it."""

    id: str
    question: str
    dimension: str
    weight: float = 1.0
    pass_if: str = "yes"
    gate: bool = False


@dataclass(frozen=True)
class ContextField:
    """A piece of material the judge sees next to the feedback (e.g. the essay)."""

    name: str
    title: str
    required: bool = True


def _fail(source: str, where: str, message: str) -> RubricError:
    return RubricError(source, where, message)


def _text(data: Mapping[str, Any], key: str, source: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _fail(source, f"{where}{key}", "expected a non-empty string")
    return value.strip()


def _keys(data: Any, allowed: set[str], source: str, where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise _fail(source, where.rstrip(".") or "", "expected an object")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise _fail(source, f"{where}{unknown[0]}", f"unknown key (allowed: {sorted(allowed)})")
    return data


def _item(data: Any, source: str, where: str) -> RubricItem:
    allowed = {"id", "question", "dimension", "weight", "pass_if", "gate"}
    data = _keys(data, allowed, source, where)
    question = _text(data, "question", source, where)
    if "\n" in question:
        raise _fail(source, f"{where}question", "must be one line")
    weight = data.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight > 0:
        raise _fail(source, f"{where}weight", f"expected a positive number, got {weight!r}")
    if not math.isfinite(weight):
        raise _fail(source, f"{where}weight", f"expected a finite number, got {weight!r}")
    pass_if = data.get("pass_if", "yes")
    if pass_if not in ANSWERS:
        raise _fail(source, f"{where}pass_if", f"expected 'yes' or 'no', got {pass_if!r}")
    gate = data.get("gate", False)
    if not isinstance(gate, bool):
        raise _fail(source, f"{where}gate", f"expected true or false, got {gate!r}")
    return RubricItem(
        id=_text(data, "id", source, where),
        question=question,
        dimension=_text(data, "dimension", source, where),
        weight=float(weight),
        pass_if=pass_if,
        gate=gate,
    )


def _context_field(data: Any, source: str, where: str) -> ContextField:
    data = _keys(data, {"name", "title", "required"}, source, where)
    required = data.get("required", True)
    if not isinstance(required, bool):
        raise _fail(source, f"{where}required", f"expected true or false, got {required!r}")
    return ContextField(
        _text(data, "name", source, where), _text(data, "title", source, where), required
    )


@dataclass(frozen=True)
class Rubric:
    """A checklist of binary items, the material the judge sees, and how they are scored."""

    name: str
    version: str
    description: str
    task: str  # one or two sentences telling the judge what the feedback was written for
    context: tuple[ContextField, ...]
    items: tuple[RubricItem, ...]

    @classmethod
    def from_dict(cls, data: Any, source: str = "<rubric>") -> Rubric:
        """A checked rubric from its JSON form; raises `RubricError` naming the bad field."""
        allowed = {"name", "version", "description", "task", "context", "items"}
        data = _keys(data, allowed, source, "")
        lists = {}
        for key in ("context", "items"):
            value = data.get(key)
            if not isinstance(value, list) or (key == "items" and not value):
                kind = "a non-empty list" if key == "items" else "a list"
                raise _fail(source, key, f"expected {kind}")
            lists[key] = value
        items = tuple(_item(d, source, f"items[{i}].") for i, d in enumerate(lists["items"]))
        context = tuple(
            _context_field(d, source, f"context[{i}].") for i, d in enumerate(lists["context"])
        )
        for kind, names in (
            ("items", [i.id for i in items]),
            ("context", [c.name for c in context]),
        ):
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise _fail(source, kind, f"repeated name(s): {', '.join(repeated)}")
        return cls(
            name=_text(data, "name", source, ""),
            version=str(data.get("version", "1")),
            description=_text(data, "description", source, ""),
            task=_text(data, "task", source, ""),
            context=context,
            items=items,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``from_dict`` inverts it)."""
        return dataclasses.asdict(self) | {
            "context": [dataclasses.asdict(c) for c in self.context],
            "items": [dataclasses.asdict(i) for i in self.items],
        }

    @property
    def digest(self) -> str:
        """A short digest of the whole rubric, recorded with results."""
        text = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    @property
    def dimensions(self) -> list[str]:
        """The item dimensions, in order of first appearance."""
        return list(dict.fromkeys(item.dimension for item in self.items))

    def satisfied(self, answers: Mapping[str, str]) -> dict[str, bool]:
        """Item id -> satisfied, from the judge's yes/no answer per item id."""
        return {item.id: answers[item.id] == item.pass_if for item in self.items}

    def score(self, satisfied: Mapping[str, bool], dimension: str | None = None) -> float:
        """The weighted fraction of satisfied items, 0 when a gate item fails; with
        ``dimension``, the plain weighted fraction of that dimension's items (no gate)."""
        if dimension is None and any(item.gate and not satisfied[item.id] for item in self.items):
            return 0.0
        chosen = [i for i in self.items if dimension is None or i.dimension == dimension]
        total = sum(i.weight for i in chosen)
        return sum(i.weight for i in chosen if satisfied[i.id]) / total

    def check_context(self, context: Any, where: str) -> dict[str, str]:
        """``context`` reduced to this rubric's fields; a missing or unknown field is an error."""
        if not isinstance(context, Mapping):
            raise TypeError(f"{where}: expected a dict of context fields, got {type(context)}")
        names = {c.name for c in self.context}
        unknown = sorted(set(context) - names)
        if unknown:
            raise ValueError(
                f"{where}: unknown context field(s) {unknown} for rubric {self.name!r} "
                f"(fields: {sorted(names)})"
            )
        out = {}
        for c in self.context:
            value = context.get(c.name)
            if value is None or (isinstance(value, str) and not value.strip()):
                if c.required:
                    raise ValueError(f"{where}: rubric {self.name!r} needs context {c.name!r}")
                continue
            if not isinstance(value, str):
                raise TypeError(f"{where}: context {c.name!r} must be a string")
            out[c.name] = value
        return out


def bundled_rubrics() -> list[str]:
    """Names of the rubrics shipped with the library."""
    return sorted(p.stem for p in RUBRIC_DIR.glob("*.json"))


def load_rubric(spec: str | Path | Rubric | Mapping[str, Any] = DEFAULT_RUBRIC) -> Rubric:
    """A rubric: a bundled name (see `bundled_rubrics`), a JSON file path, a dict, or as is."""
    if isinstance(spec, Rubric):
        return spec
    if isinstance(spec, Mapping):
        return Rubric.from_dict(spec)
    path = Path(spec)
    if str(spec) in bundled_rubrics():
        path = RUBRIC_DIR / f"{spec}.json"
    elif not path.is_file():
        raise RubricError(
            str(spec), "", f"no such file and no bundled rubric (bundled: {bundled_rubrics()})"
        )
    return Rubric.from_dict(read_json(path, RubricError), str(path))
