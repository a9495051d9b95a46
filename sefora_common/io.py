"""The one way the toolkit writes its outputs: never half-written, never replacing what it
should not, with the user's umask.

- `write_text` / `write_bytes`: a regular file (or a new path) is written to a temporary
  sibling and renamed into place, so a reader or a crash never sees a partial file; the
  new file gets the old one's permissions, or the umask's for a new path. Anything else
  (a device such as ``/dev/stdout``, a FIFO, a symlink) is opened and written through:
  a symlink keeps pointing where it did and its target gets the data.
- `output_folder`: a whole output folder built in a temporary sibling and swapped into
  place at the end (the old folder is removed only after the swap); it refuses to replace
  a folder that is not an earlier output of the same command.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from sefora_common.errors import InputError

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
    """Write ``data`` to ``path`` safely (see the module docstring); creates parent folders."""
    path = Path(path)
    if not _replaceable(path):
        with open(path, "wb") as handle:  # a device, FIFO or symlink: write through
            handle.write(data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    while True:
        tmp = _temporary_sibling(path, ".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` safely (see `write_bytes`)."""
    write_bytes(path, text.encode(encoding))


def _make_temporary_folder(out: Path) -> Path:
    while True:
        tmp = _temporary_sibling(out, ".tmp")
        try:
            tmp.mkdir(mode=FOLDER_MODE)
            return tmp
        except FileExistsError:
            continue


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
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = _make_temporary_folder(out)
    try:
        yield tmp
        _swap(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
