"""The content-addressed sqlite cache: keys, location, and two processes writing at once."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from sefora_llm.cache import CACHE_FILENAME, Cache, default_cache_dir, make_key, open_cache


def test_keys_depend_on_namespace_and_every_text():
    base = make_key(("score", "llm", "m1", "v1"), "a", "b")
    assert base == make_key(("score", "llm", "m1", "v1"), "a", "b")
    assert (
        len(
            {
                base,
                make_key(("score", "llm", "m2", "v1"), "a", "b"),
                make_key(("score", "llm", "m1", "v2"), "a", "b"),
                make_key(("score", "llm", "m1", "v1"), "b", "a"),
                make_key(("score", "llm", "m1", "v1"), "ab", ""),
            }
        )
        == 5
    )


def test_default_location_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "unimatch"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "unimatch"


def test_round_trip_and_reopen(tmp_path):
    cache = Cache(tmp_path)
    cache.put_many({"k1": 2.5, "k2": ["unit one", "unit two"]})
    cache.close()
    again = open_cache(tmp_path)
    assert again.get_many(["k1", "k2", "missing"]) == {"k1": 2.5, "k2": ["unit one", "unit two"]}
    assert (tmp_path / CACHE_FILENAME).exists()
    assert open_cache(tmp_path) is again  # one connection per directory and process


def _writer(directory: str, worker: int, n: int) -> None:
    cache = Cache(directory)
    for start in range(0, n, 10):
        cache.put_many({f"w{worker}-{i}": i for i in range(start, start + 10)})
        cache.get_many([f"w{1 - worker}-{i}" for i in range(n)])


def test_two_processes_write_at_once(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 400)) for w in (0, 1)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [proc.exitcode for proc in procs] == [0, 0]
    cache = Cache(Path(tmp_path))
    assert len(cache) == 800
    assert cache.get_many(["w0-399", "w1-0"]) == {"w0-399": 399, "w1-0": 0}
