"""The shared output writer: atomic for regular files, write-through for FIFOs, devices and
symlinks (never replaced), and files and folders created with the user's umask."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from sefora_cli.main import main
from sefora_common.errors import InputError
from sefora_common.io import output_folder, write_text


@pytest.fixture(params=[0o022, 0o077], ids=["umask022", "umask077"])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def read_fifo(path, into: list) -> threading.Thread:
    def reader():
        with open(path, encoding="utf-8") as handle:
            into.append(handle.read())

    thread = threading.Thread(target=reader)
    thread.start()
    return thread


def test_new_file_and_folders_follow_the_umask(tmp_path, umask):
    target = tmp_path / "new" / "deeper" / "out.json"
    write_text(target, "{}\n")
    assert target.read_text() == "{}\n"
    assert mode(target) == 0o666 & ~umask
    assert mode(target.parent) == 0o777 & ~umask
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]  # no temporary left


def test_a_replaced_file_keeps_its_permissions(tmp_path, umask):
    target = tmp_path / "out.txt"
    target.write_text("old")
    target.chmod(0o640)
    inode = target.stat().st_ino
    write_text(target, "new")
    assert target.read_text() == "new"
    assert mode(target) == 0o640
    assert target.stat().st_ino != inode  # renamed into place, never half-written


def test_a_symlink_is_written_through_not_replaced(tmp_path, umask):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"


def test_a_fifo_is_written_through(tmp_path, umask):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    thread = read_fifo(fifo, got)
    write_text(fifo, "through the pipe")
    thread.join(timeout=10)
    assert got == ["through the pipe"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_output_folder_swaps_in_with_the_umask_and_refuses_strangers(tmp_path, umask):
    out = tmp_path / "built"
    with output_folder(out, ".marker", "test") as tmp:
        (tmp / ".marker").write_text("")
        (tmp / "data").mkdir()
    assert mode(out) == 0o777 & ~umask and mode(out / "data") == 0o777 & ~umask
    with pytest.raises(RuntimeError), output_folder(out, ".marker", "test") as tmp:
        (tmp / ".marker").write_text("")
        raise RuntimeError("a failed build")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["built"]  # old output kept, no temp
    assert (out / "data").is_dir()
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "keep.txt").write_text("mine")
    with (
        pytest.raises(InputError, match="refusing to replace"),
        output_folder(stranger, ".marker", "test"),
    ):
        pass
    assert (stranger / "keep.txt").read_text() == "mine"


def test_commands_write_through_fifos_and_symlinks(tmp_path, umask):
    source = tmp_path / "feedback.jsonl"
    source.write_text(json.dumps({"prediction": ["Nice hook."], "references": ["Nice hook."]}))
    fifo = tmp_path / "result.fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    thread = read_fifo(fifo, got)
    args = ["--segmenter", "rules", "--scorer", "exact", "--no-cache", "--output", str(fifo)]
    assert main(["unimatch", str(source), *args]) == 0
    thread.join(timeout=10)
    assert json.loads(got[0])["f1"] == 1.0

    scored = tmp_path / "scored.jsonl"
    scored.write_text(
        "\n".join(json.dumps({"prompt": "p", "feedback": f"f{i}", "score": i}) for i in range(2))
    )
    real = tmp_path / "pairs-real.jsonl"
    real.write_text("")
    link = tmp_path / "pairs.jsonl"
    link.symlink_to(real)
    assert main(["dpo-pairs", str(scored), "--out", str(link)]) == 0
    assert link.is_symlink()
    assert json.loads(real.read_text()) == {"prompt": "p", "chosen": "f1", "rejected": "f0"}


def test_build_output_follows_the_umask(tmp_path, umask):
    out = tmp_path / "sefora"
    assert main(["build", "--out", str(out), "--quiet"]) == 0
    assert mode(out) == 0o777 & ~umask
    for path in out.rglob("*"):
        assert mode(path) == (0o777 if path.is_dir() else 0o666) & ~umask, path
