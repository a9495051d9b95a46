"""Content-addressed on-disk cache of segmentations and similarity scores (sqlite, WAL).

Keys are SHA-256 digests of a namespace (backend, model, prompt version, ...) and the
text(s) concerned, so an entry is reused only for exactly the same request. Several
threads and processes may read and write one cache file at once: sqlite's write-ahead log
serialises the writers and every write is one short transaction.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from sefora_common.errors import OutputError

X = TypeVar("X", bound=Hashable)
Y = TypeVar("Y")

CACHE_FILENAME = "unimatch-cache.sqlite3"
_SQL_CHUNK = 500  # keys per SELECT, below sqlite's bound-parameter limit
_BUSY_TIMEOUT_MS = 60_000


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/unimatch``, or ``~/.cache/unimatch`` when that variable is unset."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "unimatch"


def make_key(namespace: Sequence[str], *texts: str) -> str:
    """The cache key of ``texts`` under ``namespace`` (a hex SHA-256 digest)."""
    payload = json.dumps([list(namespace), list(texts)], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class Cache:
    """A key -> JSON value store in one sqlite file; safe across threads and processes."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.path = Path(directory) / CACHE_FILENAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            self.path,
            timeout=_BUSY_TIMEOUT_MS / 1000,
            check_same_thread=False,
            isolation_level=None,
        )
        self._conn.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
        self._enable_wal()
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value TEXT)")

    def _enable_wal(self) -> None:
        """Switch to WAL; retried, because sqlite answers "locked" without waiting when
        another process is creating or converting the same new file at that moment."""
        deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The cached values of those ``keys`` that are present."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, Any] = {}
        with self._lock:
            for start in range(0, len(keys), _SQL_CHUNK):
                chunk = keys[start : start + _SQL_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT key, value FROM entries WHERE key IN ({marks})", chunk
                ).fetchall()
                found.update((key, json.loads(value)) for key, value in rows)
        return found

    def put_many(self, items: Mapping[str, Any]) -> None:
        """Store ``items`` (key -> JSON-serialisable value) in one transaction."""
        if not items:
            return
        rows = [(key, json.dumps(value, ensure_ascii=False)) for key, value in items.items()]
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?)", rows)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]

    def close(self) -> None:
        """Close the connection (further use raises)."""
        with self._lock:
            self._conn.close()


_OPEN: dict[tuple[str, int], Cache] = {}
_OPEN_LOCK = threading.Lock()


def open_cache(directory: str | os.PathLike[str] | None = None) -> Cache:
    """The process's shared `Cache` for ``directory`` (default: `default_cache_dir`);
    `OutputError` if it cannot be created there.

    One connection per directory and process: a connection inherited through ``fork`` is
    never reused by the child.
    """
    path = str(Path(directory if directory is not None else default_cache_dir()).resolve())
    key = (path, os.getpid())
    with _OPEN_LOCK:
        if key not in _OPEN:
            try:
                _OPEN[key] = Cache(path)
            except (OSError, sqlite3.Error) as err:
                reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
                raise OutputError(path, f"{reason} (the score cache; see cache_dir)") from err
        return _OPEN[key]


def run_cached(
    namespace: Sequence[str] | None,
    cache: Cache | None,
    items: Sequence[X],
    key_of: Callable[[X], tuple[str, ...]],
    run: Callable[[list[X]], list[Y]],
) -> list[Y]:
    """``run(items)`` with the results already in ``cache`` taken from there.

    ``namespace`` identifies the backend configuration (None: the backend is not cached);
    successful new results are stored, failures (results that are exceptions) never are.
    """
    if namespace is None or cache is None:
        return run(list(items))
    keys = [make_key(namespace, *key_of(item)) for item in items]
    found = cache.get_many(keys)
    todo = [i for i, key in enumerate(keys) if key not in found]
    fresh = run([items[i] for i in todo]) if todo else []
    cache.put_many(
        {
            keys[i]: result
            for i, result in zip(todo, fresh, strict=True)
            if not isinstance(result, Exception)
        }
    )
    results: list[Y] = [found.get(key) for key in keys]  # type: ignore[misc]  # filled below
    for i, result in zip(todo, fresh, strict=True):
        results[i] = result
    return results
