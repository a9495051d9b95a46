"""The one JSON Lines reader: every bad line is an error naming the file and the line."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sefora_common.errors import InputError


def parse_jsonl(
    text: str, source: str | os.PathLike[str], error: type[InputError] = InputError
) -> list[tuple[int, dict]]:
    """(line number, object) for each non-blank line of ``text`` read from ``source``.

    A line that is not a JSON object raises ``error(source, "line N", reason)``.
    """
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise error(source, f"line {number}", f"not JSON ({err.msg})") from err
        if not isinstance(row, dict):
            raise error(source, f"line {number}", "expected a JSON object")
        rows.append((number, row))
    return rows


def read_jsonl(
    path: str | os.PathLike[str], error: type[InputError] = InputError
) -> list[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a UTF-8 JSONL file.

    An unreadable file or a bad line raises ``error`` (an `InputError` subclass of the
    caller's package) naming the file and the line.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise error(path, "", f"cannot read ({err})") from err
    return parse_jsonl(text, path, error)
