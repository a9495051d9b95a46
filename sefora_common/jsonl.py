"""The one JSON and JSON Lines reader: strict JSON (no NaN or Infinity, no lone surrogate),
every problem named by file, line and JSON path."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sefora_common.errors import InputError
from sefora_common.text import lone_surrogate

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _NonFinite(float):
    """A number JSON cannot hold (NaN, Infinity, 1e999), kept with its text to report it."""

    text: str

    def __new__(cls, text: str) -> _NonFinite:
        number = super().__new__(cls, float(text.replace("Infinity", "inf")))
        number.text = text
        return number


def _float(text: str) -> float:
    number = float(text)
    return number if math.isfinite(number) else _NonFinite(text)


def member_path(path: str, key: str) -> str:
    """The JSON path of member ``key`` of the object at ``path``: ``a.b``, or ``a['b c']``
    for a key that is not an identifier."""
    if _IDENTIFIER.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{key!r}]"


def value_problems(value: Any, path: str = "") -> list[tuple[str, str]]:
    """(JSON path, message) for each value of a decoded document that is not portable data:
    a non-finite number (only from `decode_json`) or a string with a lone surrogate (which no
    UTF-8 file, Arrow column or cache key can hold)."""
    problems: list[tuple[str, str]] = []
    if isinstance(value, _NonFinite):
        problems.append((path, f"{value.text} is not a JSON number (expected a finite number)"))
    elif isinstance(value, str):
        if code := lone_surrogate(value):
            problems.append((path, f"the string holds a lone surrogate {code}"))
    elif isinstance(value, dict):
        for key, item in value.items():
            if code := lone_surrogate(key):
                problems.append((path, f"key {key!r} holds a lone surrogate {code}"))
            problems += value_problems(item, member_path(path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            problems += value_problems(item, f"{path}[{i}]")
    return problems


def decode_json(text: str) -> tuple[Any, list[tuple[str, str]]]:
    """The value of one JSON document and its `value_problems`.

    Python's ``json`` accepts NaN, Infinity and numbers beyond the float range, which JSON
    does not: they are decoded but reported. Raises ``json.JSONDecodeError`` on bad syntax.
    """
    value = json.loads(text, parse_constant=_NonFinite, parse_float=_float)
    return value, value_problems(value)


def read_json(path: str | os.PathLike[str], error: type[InputError] = InputError) -> Any:
    """The value of a UTF-8 JSON file; ``error`` names the file and lists every problem (bad
    syntax with its line and column, or each value `decode_json` reports, by JSON path)."""
    try:
        value, problems = decode_json(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise error(path, "", f"cannot read ({err})") from err
    except json.JSONDecodeError as err:
        where = f"line {err.lineno} column {err.colno}"
        raise error(path, where, f"malformed JSON: {err.msg}") from err
    if problems:
        raise error.of_problems(path, problems)
    return value


#: A caller's check of one row: ``check("line 7", row)`` returns its problems as
#: (field, message), the field naming the line (e.g. ``("line 7: score", "expected ...")``).
RowCheck = Callable[[str, dict], list[tuple[str, str]]]


def parse_jsonl(
    text: str,
    source: str | os.PathLike[str],
    error: type[InputError] = InputError,
    check: RowCheck | None = None,
) -> list[tuple[int, dict]]:
    """(line number, object) for each non-blank line of ``text`` read from ``source``.

    Every line that is not a JSON object, holds a value `decode_json` reports or fails the
    caller's ``check`` is listed in one ``error`` naming ``source``, the line and the field.
    """
    rows = []
    problems: list[tuple[str, str, json.JSONDecodeError | None]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            row, bad = decode_json(line)
        except json.JSONDecodeError as err:
            problems.append((where, f"not JSON ({err.msg})", err))
            continue
        if not isinstance(row, dict):
            problems.append((where, "expected a JSON object", None))
            continue
        problems += [(f"{where}: {path}" if path else where, msg, None) for path, msg in bad]
        if check is not None and not bad:  # a value JSON cannot hold is reported once
            problems += [(field, msg, None) for field, msg in check(where, row)]
        rows.append((number, row))
    if problems:
        failure = error.of_problems(source, [(field, msg) for field, msg, _ in problems])
        raise failure from problems[0][2]
    return rows


def read_jsonl(
    path: str | os.PathLike[str],
    error: type[InputError] = InputError,
    check: RowCheck | None = None,
) -> list[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a UTF-8 JSONL file.

    An unreadable file or bad lines raise ``error`` (an `InputError` subclass of the
    caller's package) naming the file, the line and the field (see `parse_jsonl`).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise error(path, "", f"cannot read ({err})") from err
    return parse_jsonl(text, path, error, check)
