"""Reading JSON Lines input files with errors that name the file and line (stdlib only)."""

from __future__ import annotations

import json
from pathlib import Path

from sefora_dataset.errors import CorpusError


def read_jsonl(path: str | Path) -> list[tuple[int, dict]]:
    """(line number, object) for each non-blank line; `CorpusError` naming a bad line."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise CorpusError(str(path), "", f"cannot read ({err})") from None
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise CorpusError(str(path), f"line {number}", f"not JSON ({err.msg})") from None
        if not isinstance(row, dict):
            raise CorpusError(str(path), f"line {number}", "expected a JSON object")
        rows.append((number, row))
    return rows
