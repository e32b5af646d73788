"""Raw exceptions become zarrkit errors (issue 28), in both engines:

- a write that the file system refuses (EFBIG here, from ``RLIMIT_FSIZE`` in a child
  process; ENOSPC takes the same path) is a ``StoreIOError`` keeping its errno, from a ZIP
  archive and from a directory store, and loses nothing stored before it;
- a shard index entry whose offset (or offset + length) lies past the largest file offset,
  behind a valid CRC-32C, is a ``ChunkDecodeError`` naming the shard, for every kind of
  selection (the Python path once let ``os.pread`` raise ``OverflowError``).
"""

from __future__ import annotations

import errno
import json
import os
import struct
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Any

import crc32c
import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import ChunkDecodeError
from zarrkit.storage import DirectoryStore, ZipStore

ENGINES = ["auto", "python"]

# The child: stores what it is told, then lowers RLIMIT_FSIZE to a little above the file
# sizes reached, so that the next large write fails with EFBIG (SIGXFSZ ignored), and
# reports each outcome as JSON.
_CHILD = textwrap.dedent("""
    import json, os, resource, signal, sys
    import numpy as np
    import zarrkit as zk
    from zarrkit.storage import DirectoryStore, ZipStore

    kind, path = sys.argv[1], sys.argv[2]
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    results = {}

    def attempt(name, action):
        try:
            action()
            results[name] = None
        except BaseException as error:
            results[name] = [type(error).__name__, getattr(error, "errno", None), str(error),
                             [c.__name__ for c in type(error).__mro__]]

    old = np.arange(64, dtype="u1").tobytes()
    big = bytes(range(256)) * 64  # 16 KiB
    if kind == "zip":
        store = ZipStore(path, mode="w")
        store.set("old/a", old)
        store.set("old/b", old[::-1])
        store.flush()
        size = os.path.getsize(path)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 4096, resource.RLIM_INFINITY))
        attempt("set_big", lambda: store.set("new/big", big))
        attempt("set_if_not_exists_big", lambda: store.set_if_not_exists("new/big2", big))
        attempt("set_small", lambda: store.set("new/small", b"fits"))
        attempt("close", store.close)
    elif kind == "zip_directory":
        # The member fits, the central directory after it does not.
        store = ZipStore(path, mode="w")
        store.set("old/a", old)
        store.flush()
        size = os.path.getsize(path)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 2048, resource.RLIM_INFINITY))
        attempt("set_fits", lambda: store.set("new/x", bytes(1900)))
        attempt("close", store.close)
    elif kind == "directory":
        store = DirectoryStore(path)
        store.set("old/a", old)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
        attempt("set_big", lambda: store.set("new/big", big))
        attempt("replace_big", lambda: store.set("old/a", big))
        attempt("set_if_not_exists_big", lambda: store.set_if_not_exists("new/big2", big))
        attempt("set_small", lambda: store.set("new/small", b"fits"))
    elif kind in ("array_directory", "array_zip"):
        store = DirectoryStore(path) if kind == "array_directory" else ZipStore(path, mode="w")
        a = zk.create_array(store, name="a", shape=(4096,), chunks=(4096,), dtype="u1",
                            compressors=None)
        a[...] = 1
        if kind == "array_zip":
            store.flush()
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192 if kind == "array_directory"
                                                   else os.path.getsize(path) + 1024,
                                                   resource.RLIM_INFINITY))
        b = zk.create_array(store, name="b", shape=(16384,), chunks=(16384,), dtype="u1",
                            compressors=None)
        attempt("write_big", lambda: b.__setitem__(Ellipsis, 7))
        attempt("rewrite_a", lambda: a.__setitem__(Ellipsis, np.full(4096, 9, "u1")))
        if kind == "array_zip":
            attempt("close", store.close)
    print(json.dumps(results))
""")


def _run_child(kind: str, path: Path, engine: str) -> dict[str, Any]:
    env = {**os.environ, "ZARRKIT_ENGINE": engine}
    done = subprocess.run([sys.executable, "-c", _CHILD, kind, str(path)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _assert_store_io_error(outcome: Any, key: str | None) -> None:
    assert outcome is not None, "the write should have been refused"
    name, code, message, mro = outcome
    assert name == "StoreIOError" and "ZarrkitError" in mro, outcome
    assert code == errno.EFBIG, outcome
    if key is not None:
        assert key in message, outcome


@pytest.mark.parametrize("engine", ENGINES)
def test_zip_write_refused_by_the_file_system(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "data.zip"
    results = _run_child("zip", path, engine)
    _assert_store_io_error(results["set_big"], "new/big")
    _assert_store_io_error(results["set_if_not_exists_big"], "new/big2")
    # The refused members left nothing behind: later writes and the close succeed ...
    assert results["set_small"] is None and results["close"] is None
    # ... and the archive, read by the standard library, holds exactly what was stored.
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        assert sorted(archive.namelist()) == ["new/small", "old/a", "old/b"]
        old = np.arange(64, dtype="u1").tobytes()
        assert archive.read("old/a") == old and archive.read("old/b") == old[::-1]
        assert archive.read("new/small") == b"fits"
    with ZipStore(path, mode="r") as store:
        assert store.get("new/big") is None and store.get("old/a") == old


@pytest.mark.parametrize("engine", ENGINES)
def test_zip_central_directory_refused_by_the_file_system(tmp_path: Path,
                                                          engine: str) -> None:
    path = tmp_path / "data.zip"
    results = _run_child("zip_directory", path, engine)
    assert results["set_fits"] is None
    _assert_store_io_error(results["close"], None)
    assert str(path) in results["close"][2]
    # What the last flush wrote stays readable, by the standard library and by zarrkit.
    old = np.arange(64, dtype="u1").tobytes()
    with zipfile.ZipFile(path) as archive:
        assert archive.read("old/a") == old
    with ZipStore(path, mode="r") as store:
        assert store.get("old/a") == old


@pytest.mark.parametrize("engine", ENGINES)
def test_directory_write_refused_by_the_file_system(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "data.zarr"
    results = _run_child("directory", path, engine)
    _assert_store_io_error(results["set_big"], "new/big")
    _assert_store_io_error(results["replace_big"], "old/a")
    _assert_store_io_error(results["set_if_not_exists_big"], "new/big2")
    assert results["set_small"] is None
    store = DirectoryStore(path, read_only=True)
    assert store.get("old/a") == np.arange(64, dtype="u1").tobytes()  # not replaced
    assert store.get("new/big") is None and store.get("new/big2") is None
    assert store.get("new/small") == b"fits"
    # No temporary file is left behind.
    assert sorted(store.list_prefix("")) == ["new/small", "old/a"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", ["array_directory", "array_zip"])
def test_array_write_refused_by_the_file_system(tmp_path: Path, engine: str,
                                                kind: str) -> None:
    path = tmp_path / ("data.zarr" if kind == "array_directory" else "data.zip")
    results = _run_child(kind, path, engine)
    _assert_store_io_error(results["write_big"], "b/")
    if kind == "array_zip":
        # The archive cannot grow any more, but the failure is a zarrkit error each time.
        for name in ("rewrite_a", "close"):
            if results[name] is not None:
                _assert_store_io_error(results[name], None)
        with ZipStore(path, mode="r") as store:
            a = zk.open_array(store, path="a", mode="r")
            np.testing.assert_array_equal(a[...], np.ones(4096, "u1"))
    else:
        assert results["rewrite_a"] is None
        a = zk.open_array(path, path="a", mode="r")
        np.testing.assert_array_equal(a[...], np.full(4096, 9, "u1"))


# --- shard index offsets past the largest file offset ----------------------------------
def _plant_offset(store_path: Path, entry: int, offset: int, length: int | None) -> None:
    """Rewrite one entry of the (end) index of shard ``c/0`` with a valid CRC-32C."""
    shard = store_path / "c" / "0"
    raw = bytearray(shard.read_bytes())
    n = 4
    start = len(raw) - (16 * n + 4)
    entries = list(struct.unpack(f"<{2 * n}Q", raw[start:start + 16 * n]))
    entries[2 * entry] = offset
    if length is not None:
        entries[2 * entry + 1] = length
    index = struct.pack(f"<{2 * n}Q", *entries)
    raw[start:] = index + struct.pack("<I", crc32c.crc32c(index))
    shard.write_bytes(bytes(raw))


SELECTIONS = {
    "vindex": lambda a: a.vindex[[2, 3]],
    "vindex_mask": lambda a: a.vindex[np.arange(8) % 2 == 0],
    "basic": lambda a: a[2:4],
    "whole": lambda a: a[...],
    "oindex": lambda a: a.oindex[[2]],
    "scalar": lambda a: a[3],
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("selection", sorted(SELECTIONS))
@pytest.mark.parametrize(("offset", "length"), [
    (2**63, None), (2**63 - 2, None), (2**64 - 2, None), (2**63 - 1, 1), (0, 2**63),
    (2, 2**64 - 3), (2**40, None)], ids=["2^63", "2^63-2", "2^64-2", "end+1", "len2^63",
                                       "len2^64-3", "past-size"])
def test_shard_index_offset_past_the_file(tmp_path: Path, engine: str, selection: str,
                                          offset: int, length: int | None) -> None:
    path = tmp_path / "a.zarr"
    a = zk.create_array(DirectoryStore(path), shape=(8,), chunks=(2,), shards=(8,),
                        dtype="u1", compressors=None)
    a[...] = np.arange(8, dtype="u1")
    _plant_offset(path, 1, offset, length)
    with zk.config.set(engine=engine):
        b = zk.open_array(DirectoryStore(path, read_only=True), mode="r")
        with pytest.raises(ChunkDecodeError, match="c/0"):
            SELECTIONS[selection](b)


@pytest.mark.parametrize("kind", ["directory", "zip", "memory"])
@pytest.mark.parametrize(("start", "length"), [(2**63, 2), (2**64, 1), (2**63 - 1, 2**63),
                                               (2**62, 2), (2, 2**63), (-(2**63), 2)])
def test_get_range_past_the_largest_file_offset(tmp_path: Path, kind: str, start: int,
                                                length: int) -> None:
    # A range is clamped to the value, as a slice is: bytes(...)[start:][:length] is the
    # oracle, whatever the offsets (os.pread once overflowed past 2^63 - 1).
    value = b"abcdef"
    store: Any
    if kind == "directory":
        store = DirectoryStore(tmp_path / "d")
    elif kind == "zip":
        store = ZipStore(tmp_path / "z.zip", mode="w")
    else:
        store = zk.storage.MemoryStore()
    store.set("k", value)
    expected = value[max(len(value) + start, 0):][:length] if start < 0 else \
        value[start:][:length]
    assert bytes(store.get_range("k", start, length)) == expected
    store.close()
