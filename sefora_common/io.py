"""The one way the toolkit writes its outputs: never half-written, never replacing what it
should not, with the user's umask.

- `write_text` / `write_bytes`: a regular file (or a new path) is written to a temporary
  sibling and renamed into place, so a reader or a crash never sees a partial file; the
  new file gets the old one's permissions, or the umask's for a new path. Anything else
  (a device such as ``/dev/stdout``, a FIFO, a symlink) is opened and written through:
  a symlink keeps pointing where it did and its target gets the data.
- `output_folder`: a whole output folder built in a temporary sibling and swapped into
  place at the end (the old folder is removed only after the swap); it refuses to replace
  a folder that is not an earlier output of the same command. The temporary folder is
  removed on any error, Ctrl-C or SIGTERM (the ``sefora`` command turns SIGTERM into an
  exception); one left by a killed run is removed, with a warning, by the next run.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import secrets
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from sefora_common.errors import InputError, OutputError

logger = logging.getLogger(__name__)

#: A temporary output folder unlocked and untouched for this many seconds was left by a run
#: that was killed (a live run locks its folder the moment it creates it).
STALE_AFTER = 10.0

#: Permission bits of new files and folders before the umask (what ``open`` and ``mkdir``
#: use; ``tempfile`` would give 0600 and 0700).
FILE_MODE = 0o666
FOLDER_MODE = 0o777


def _replaceable(path: Path) -> bool:
    """Whether ``path`` is written by rename: a regular file (not a symlink) or nothing."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return True
    return stat.S_ISREG(mode)


def _temporary_sibling(path: Path, suffix: str) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(4)}{suffix}")


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` safely (see the module docstring); creates parent folders.

    Raises `OutputError` naming the path when the system refuses (no such folder,
    permission denied, a folder in the way).
    """
    try:
        _write_bytes(Path(path), data)
    except OSError as err:
        raise OutputError.of(path, err) from err


def _write_bytes(path: Path, data: bytes) -> None:
    if not _replaceable(path):
        with open(path, "wb") as handle:  # a device, FIFO or symlink: write through
            handle.write(data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    tmp: Path | None = None  # named before it exists: an interrupt at any point cleans up
    try:
        while True:
            tmp = _temporary_sibling(path, ".tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
                break
            except FileExistsError:
                tmp = None
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` safely (see `write_bytes`)."""
    write_bytes(path, text.encode(encoding))


def _lock(folder: Path) -> int | None:
    """An open descriptor of ``folder`` holding an exclusive lock on it, or None if another
    process holds it. The lock goes with the process, however it ends (even SIGKILL)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _make_temporary_folder(out: Path, made: list[Path]) -> int:
    """Make a new temporary sibling of ``out``, locked for as long as this run lasts; its
    path is put in ``made`` before it exists, so that the caller's cleanup covers it even
    if an interrupt lands in between. Returns the lock's descriptor."""
    while True:
        tmp = _temporary_sibling(out, ".tmp")
        made[:] = [tmp]
        try:
            tmp.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            made.clear()
            continue
        fd = _lock(tmp)
        if fd is not None:
            return fd


def remove_stale_folders(out: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary folders of ``out`` that earlier runs left when they were killed
    (unlocked, and older than `STALE_AFTER` seconds); return them, each logged as a warning.
    Folders of a run still going on are locked and left alone."""
    out = Path(out)
    removed = []
    for folder in sorted(out.parent.glob(f".{out.name}.*.tmp")):
        try:
            if not folder.is_dir() or folder.is_symlink():
                continue
            if time.time() - folder.stat().st_mtime < STALE_AFTER:
                continue
            fd = _lock(folder)
        except OSError:
            continue  # gone meanwhile, or not ours to open
        if fd is None:
            continue
        try:
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(fd)
        logger.warning("removed %s, left by an earlier run that was killed", folder)
        removed.append(folder)
    return removed


def _swap(new: Path, out: Path) -> None:
    """Put ``new`` in place of ``out``; the old output is removed only after the swap."""
    if not out.exists():
        os.replace(new, out)
        return
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    os.replace(out, old)
    try:
        os.replace(new, out)
    except OSError:
        os.replace(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def check_output_folder(
    out: str | os.PathLike[str], marker: str, command: str, error: type[InputError] = InputError
) -> None:
    """Raise ``error`` unless ``out`` is absent, empty, or an earlier output of ``command``
    (a folder holding the file ``marker``)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / marker).exists())):
        raise error(
            out,
            "",
            f"output exists and is not a previous `{command}` output; refusing to replace it",
        )


@contextlib.contextmanager
def output_folder(
    out: str | os.PathLike[str], marker: str, command: str, error: type[InputError] = InputError
) -> Iterator[Path]:
    """A fresh temporary sibling of ``out`` to write into; swapped in place of ``out`` when
    the block ends without an error, removed otherwise.

    The block must write ``marker`` into the folder (it tells a later run that this is an
    output it may replace); `check_output_folder` is applied first.
    """
    out = Path(out)
    check_output_folder(out, marker, command, error)
    made: list[Path] = []
    lock = None
    try:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            remove_stale_folders(out)
            lock = _make_temporary_folder(out, made)
        except OSError as err:
            raise OutputError.of(out, err) from err
        yield made[0]
        try:
            _swap(made[0], out)
        except OSError as err:
            raise OutputError.of(out, err) from err
    finally:
        for tmp in made:
            shutil.rmtree(tmp, ignore_errors=True)
        if lock is not None:
            os.close(lock)
