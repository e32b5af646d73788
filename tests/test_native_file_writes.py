"""The native engine writes a DirectoryStore's chunk files itself (``WritesFiles``): under
the keys' locks, with the store's checks and errors, and never where the store must do the
writing (``fsync``, wrappers). Byte-for-byte equality with the Python path is
``test_engine_equivalence.py::test_both_engines_store_the_same_bytes``."""

from __future__ import annotations

import errno
import os
import random
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest

import zarrkit as zk
from zarrkit import native
from zarrkit.errors import ReadOnlyError, StoreEscapeError, StoreIOError
from zarrkit.hierarchy import write_engine
from zarrkit.storage import DirectoryStore, LoggingStore
from zarrkit.storage.base import WritesFiles, offers
from zarrkit.storage.directory import TEMP_PREFIX
from zarrkit.storage.locking import key_lock, keys_lock

pytestmark = pytest.mark.skipif(not native.built(), reason="zarrkit._engine is not built "
                                "(make test builds it)")

ZSTD = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]


@pytest.fixture(autouse=True)
def native_engine() -> Iterator[None]:
    """These tests are about the engine's writes: they use it whatever ``ZARRKIT_ENGINE``
    says (``make test``'s second pass sets it to python)."""
    with zk.config.set(engine="auto"):
        yield


def new_array(store: Any, **options: Any) -> Any:
    return zk.create_array(store, shape=(8, 8), chunks=(4, 4), dtype="<u2",
                           compressors=ZSTD, **options)


def counting_engine_writes() -> tuple[Any, list[int]]:
    """A patch of the engine's file writer that counts the chunks it is given."""
    calls: list[int] = []
    original = native.encode_to_files

    def counted(*args: Any) -> Any:
        calls.append(len(args[1]))
        return original(*args)

    return mock.patch.object(native, "encode_to_files", counted), calls


def temporaries(root: Path) -> list[str]:
    side = root.parent / f"{TEMP_PREFIX}{root.name}"
    places = [root] + ([side] if side.is_dir() else [])
    return [p.name for place in places for p in place.rglob("*")
            if p.name.startswith(TEMP_PREFIX)]


def test_the_engine_writes_the_files_and_they_read_back(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "a")
    a = new_array(store)
    data = np.arange(64, dtype="<u2").reshape(8, 8)
    patch, calls = counting_engine_writes()
    with patch:
        a[...] = data
    assert calls == [4]
    np.testing.assert_array_equal(zk.open_array(DirectoryStore(tmp_path / "a"))[...], data)
    assert sorted(store.list_prefix("c/")) == ["c/0/0", "c/0/1", "c/1/0", "c/1/1"]
    assert temporaries(tmp_path / "a") == []


def test_all_fill_chunks_written_whole_are_deleted(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "a")
    a = new_array(store)
    a[...] = 1
    data = np.ones((8, 8), "<u2")
    data[:4, :4] = 0
    a[...] = data
    assert sorted(store.list_prefix("c/")) == ["c/0/1", "c/1/0", "c/1/1"]
    assert not (tmp_path / "a" / "c" / "0" / "0").exists()


def test_the_engine_waits_for_a_chunk_lock_held_elsewhere(tmp_path: Path) -> None:
    """A read-modify-write holding one chunk's lock keeps the engine's batch (which
    writes that chunk) from starting until it is released."""
    store = DirectoryStore(tmp_path / "a")
    a = new_array(store)
    a[...] = 1
    before = store.get("c/1/1")
    done = threading.Event()

    def write() -> None:
        a[...] = np.full((8, 8), 2, "<u2")
        done.set()

    with store.key_lock("c/1/1"):
        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(0.3)
        assert not done.is_set()
        assert store.get("c/1/1") == before
        assert store.get("c/0/0") == before  # the batch has not started at all
    writer.join(10)
    assert done.is_set()
    assert (a[...] == 2).all()


def test_batch_and_single_key_locks_exclude_each_other_and_never_deadlock() -> None:
    """Threads taking random batches of keys (in any order, with repeats) and single keys
    of one store: each key is held by one thread at a time, and all finish."""
    keys = [f"c/{i}" for i in range(40)]
    holders: dict[str, int] = {}
    guard = threading.Lock()
    overlaps: list[str] = []
    identity = ("test", "locks")

    def hold(held: list[str]) -> None:
        with guard:
            overlaps.extend(key for key in held if holders.get(key))
            for key in held:
                holders[key] = holders.get(key, 0) + 1
        time.sleep(0.0005)
        with guard:
            for key in held:
                holders[key] -= 1

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(60):
            if rng.random() < 0.5:
                batch = rng.sample(keys, rng.randint(1, 12)) * rng.randint(1, 2)
                with keys_lock(identity, batch):
                    hold(sorted(set(batch)))
            else:
                key = rng.choice(keys)
                with key_lock(identity, key):
                    hold([key])

    threads = [threading.Thread(target=worker, args=(seed,), daemon=True) for seed in range(6)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 20
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads), "deadlock"
    assert overlaps == []


def test_file_locks_are_taken_for_a_batch(tmp_path: Path) -> None:
    """With ``file_locks``, the batch takes every key's byte of the store's lock file."""
    import fcntl

    store = DirectoryStore(tmp_path / "a")
    a = new_array(store)
    taken: list[int] = []
    real = fcntl.lockf

    def lockf(fd: int, cmd: int, length: int = 0, start: int = 0, whence: int = 0) -> Any:
        if cmd == fcntl.LOCK_EX:
            taken.append(start)
        return real(fd, cmd, length, start, whence)

    with zk.config.set(file_locks=True), mock.patch.object(fcntl, "lockf", lockf):
        a[...] = np.ones((8, 8), "<u2")
    from zarrkit.storage.locking import key_stripe
    assert sorted(taken) == sorted({key_stripe(f"c/{i}/{j}") for i in (0, 1) for j in (0, 1)})


def test_fsync_and_wrappers_leave_the_writing_to_the_store(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "a")
    a = new_array(store)
    patch, calls = counting_engine_writes()
    with patch, zk.config.set(fsync=True):
        a[...] = np.ones((8, 8), "<u2")
    assert calls == []  # the store syncs each file and directory itself
    logged = LoggingStore(DirectoryStore(tmp_path / "b"))
    assert not offers(logged, WritesFiles)
    b = new_array(logged)
    with patch:
        b[...] = np.ones((8, 8), "<u2")
    assert calls == []
    assert (b[...] == 1).all()


def test_a_file_where_a_chunk_directory_goes_fails_as_the_python_path_does(
        tmp_path: Path) -> None:
    errors = []
    for engine in ("auto", "python"):
        store = DirectoryStore(tmp_path / engine)
        a = new_array(store)
        (tmp_path / engine / "c").write_bytes(b"in the way")
        with zk.config.set(engine=engine), pytest.raises(StoreIOError) as caught:
            a[...] = np.ones((8, 8), "<u2")
        # The same error for the same key (the OS's own words name each temporary file).
        words = str(caught.value).replace(engine, "").split(": [Errno")[0]
        errors.append((caught.value.errno, words))
        assert temporaries(tmp_path / engine) == []
        assert (tmp_path / engine / "c").read_bytes() == b"in the way"
    assert errors[0] == errors[1]
    assert errors[0][0] == errno.ENOTDIR


def test_a_chunk_directory_that_leads_outside_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    for engine in ("auto", "python"):
        store = DirectoryStore(tmp_path / engine)
        a = new_array(store)
        (tmp_path / engine / "c").symlink_to(outside)
        with zk.config.set(engine=engine), pytest.raises(StoreEscapeError):
            a[...] = np.ones((8, 8), "<u2")
        assert list(outside.rglob("*")) == []


def test_temporaries_go_beside_their_targets_without_a_side_directory(
        tmp_path: Path) -> None:
    root = tmp_path / "a"
    store = DirectoryStore(root)
    a = new_array(store)
    side = tmp_path / f"{TEMP_PREFIX}a"
    shutil.rmtree(side)
    side.write_bytes(b"")  # no side directory can be made
    patch, calls = counting_engine_writes()
    with patch:
        a[...] = np.full((8, 8), 3, "<u2")
    assert calls == [4]
    assert (zk.open_array(DirectoryStore(root))[...] == 3).all()
    assert temporaries(root) == []


def test_a_read_only_store_gives_no_file_writes(tmp_path: Path) -> None:
    DirectoryStore(tmp_path).set("x", b"1")
    with pytest.raises(ReadOnlyError):
        DirectoryStore(tmp_path, read_only=True).file_writes(["c/0"])


def test_file_writes_names_new_temporaries_for_every_batch(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "a")
    first, second = store.file_writes(["c/0", "c/1"]), store.file_writes(["c/0"])
    assert first is not None and second is not None
    assert first.temp_prefix != second.temp_prefix
    assert first.temp_prefix.startswith(f"{TEMP_PREFIX}")
    assert f"-{os.getpid()}-" in first.temp_prefix


def test_calls_made_while_the_last_one_writes_keep_every_chunk(tmp_path: Path) -> None:
    """Small engine calls (one chunk each): each is prepared while the last one writes;
    one the store refuses to let the engine write (``file_writes`` None, as with fsync
    turned on meanwhile) goes through the store, and every chunk arrives."""
    store = DirectoryStore(tmp_path / "a")
    a = zk.create_array(store, shape=(32, 32), chunks=(4, 4), dtype="<u2", compressors=ZSTD)
    data = np.arange(32 * 32, dtype="<u2").reshape(32, 32)
    real = DirectoryStore.file_writes
    answered: list[bool] = []

    def file_writes(self: DirectoryStore, keys: Any) -> Any:
        answered.append(len(answered) not in (5, 6))  # the 6th call's group, asked twice
        return real(self, keys) if answered[-1] else None

    patch, calls = counting_engine_writes()
    with patch, mock.patch.object(DirectoryStore, "file_writes", file_writes), \
            mock.patch.object(write_engine, "_NATIVE_FILE_WRITE_BYTES", 32):
        a[...] = data
    assert len(answered) == 65 and calls == [1] * 63
    np.testing.assert_array_equal(zk.open_array(DirectoryStore(tmp_path / "a"))[...], data)
    assert temporaries(tmp_path / "a") == []


def test_a_call_that_fails_among_many_raises_and_leaves_nothing_running(
        tmp_path: Path) -> None:
    """One chunk a call, calls queued behind each other across plan batches: the row whose
    directory is a file fails with the store's error; the rows before it are written, no
    temporary file is left, no writer thread outlives the write, and the array takes the
    next write."""
    root = tmp_path / "a"
    store = DirectoryStore(root)
    a = zk.create_array(store, shape=(32, 32), chunks=(4, 4), dtype="<u2", compressors=ZSTD)
    (root / "c").mkdir()
    (root / "c" / "5").write_bytes(b"in the way")
    data = np.arange(32 * 32, dtype="<u2").reshape(32, 32)
    patch, calls = counting_engine_writes()
    with patch, mock.patch.object(write_engine, "_NATIVE_FILE_WRITE_BYTES", 32), \
            mock.patch.object(write_engine.read_engine, "PLAN_BATCH", 5), \
            pytest.raises(StoreIOError) as caught:
        a[...] = data
    assert caught.value.errno == errno.ENOTDIR and "c/5/0" in str(caught.value)
    assert calls[:41] == [1] * 41  # rows 0 to 4, and row 5's first chunk
    assert not [t for t in threading.enumerate() if t.name.startswith("zarrkit-write")]
    assert temporaries(root) == [] and (root / "c" / "5").read_bytes() == b"in the way"
    np.testing.assert_array_equal(a[:20], data[:20])
    (root / "c" / "5").unlink()
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
