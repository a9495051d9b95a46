"""Run files: JSONL, one generated row per line, that survive a kill at any moment.

Each row is appended as one line, flushed and fsynced before the next, so an interrupted
run loses at most the rows in flight; a line cut short by the kill (no final newline) is
detected on the next open and removed, and its paragraph is generated again.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sefora_common.jsonl import parse_jsonl
from sefora_grid.errors import GridInputError

logger = logging.getLogger(__name__)


def read_rows(path: str | Path, repair: bool = False) -> list[dict[str, Any]]:
    """The rows of a run file (none if it does not exist).

    A last line without its newline is an interrupted write: with ``repair`` it is cut off
    the file, otherwise it is ignored. Any other line that is not a JSON object raises
    `GridInputError` naming the file and line.
    """
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    complete = data.rfind(b"\n") + 1
    if complete < len(data):
        logger.warning(
            "%s: dropping an incomplete last line (%d bytes) left by an interrupted run",
            path,
            len(data) - complete,
        )
        if repair:
            with path.open("r+b") as handle:
                handle.truncate(complete)
                handle.flush()
                os.fsync(handle.fileno())
    text = data[:complete].decode("utf-8")
    return [row for _, row in parse_jsonl(text, path, GridInputError)]


class RunWriter:
    """Appends rows to a run file durably (one line, flushed and fsynced, per row)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = self.path.open("a", encoding="utf-8")

    def append(self, row: Mapping[str, Any]) -> None:
        """Write one row as one line and make it durable before returning."""
        self._handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Close the file."""
        self._handle.close()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
