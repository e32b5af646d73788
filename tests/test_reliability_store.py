"""Reliability of the store layer and of writes through separate handles: shared locks
across handles (threads) and processes (file locks), create-if-absent node documents,
symbolic links that lead outside a directory store, OS errors, temporary files.

Each test here failed on the code before the reliability issue (see its docstring)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import run_threads

import zarrkit as zk
from zarrkit.errors import (
    ContainsNodeError,
    StoreEscapeError,
    StoreIOError,
    ZarrkitError,
)
from zarrkit.storage import DirectoryStore, MemoryStore, ZipStore
from zarrkit.storage import directory as directory_module
from zarrkit.storage.directory import TEMP_PREFIX

SRC = str(Path(__file__).resolve().parents[1] / "src")


def files_named_like_temporaries(root: Path) -> list[str]:
    return [os.path.join(d, n) for d, dirs, files in os.walk(root)
            for n in files + dirs if n.startswith(TEMP_PREFIX) or n.endswith(".partial")]


# --- separate handles in one process -------------------------------------------------------

@pytest.mark.parametrize("zarr_format,shards", [(2, None), (3, None), (3, (40,))])
def test_threads_opening_the_array_separately_lose_no_writes(
        tmp_path: Path, zarr_format: int, shards: tuple[int, ...] | None) -> None:
    """Before: the chunk lock was keyed by id(store), so each handle had its own locks and
    eight threads lost ~1,370 of 1,600 element writes to one chunk."""
    path = tmp_path / "a.zarr"
    zk.create_array(path, shape=(1600,), chunks=(1600,) if shards is None else (20,),
                    shards=shards, dtype="i4", fill_value=-1, zarr_format=zarr_format)

    def writer(i: int) -> None:
        for j in range(i, 1600, 8):
            handle = zk.open_array(path, mode="r+")  # a new handle (and store) per write
            handle[j] = j

    with zk.config.set(threads=1):
        run_threads(8, writer)
    np.testing.assert_array_equal(zk.open_array(path, mode="r")[:], np.arange(1600))


@pytest.mark.parametrize("shards", [None, (40,)])
def test_threads_with_their_own_zip_handles_lose_no_writes(
        tmp_path: Path, shards: tuple[int, ...] | None) -> None:
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w") as store:
        zk.create_array(store, shape=(400,), chunks=(400,) if shards is None else (20,),
                        shards=shards, dtype="i4", fill_value=-1)

    def writer(i: int) -> None:
        for j in range(i, 400, 8):
            with ZipStore(path, mode="a") as store:  # a new handle per write
                zk.open_array(store, mode="r+")[j] = j

    with zk.config.set(threads=1):
        run_threads(8, writer)
    with ZipStore(path) as store:
        np.testing.assert_array_equal(zk.open_array(store)[:], np.arange(400))


def test_handles_on_one_dict_share_locks() -> None:
    data: dict[str, bytes] = {}
    zk.create_array(data, shape=(400,), chunks=(400,), dtype="i2", fill_value=-1)

    def writer(i: int) -> None:
        for j in range(i, 400, 4):
            zk.open_array(MemoryStore(data), mode="r+")[j] = j

    run_threads(4, writer)
    np.testing.assert_array_equal(zk.open_array(data)[:], np.arange(400))


def test_lock_identity_is_the_resolved_directory(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    a = DirectoryStore(tmp_path / "real")
    b = DirectoryStore(tmp_path / "alias")
    c = DirectoryStore(str(tmp_path / "real") + "/./")
    assert a.lock_identity == b.lock_identity == c.lock_identity
    assert a.lock_identity != DirectoryStore(tmp_path / "other").lock_identity
    assert MemoryStore().lock_identity != MemoryStore().lock_identity


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_attribute_changes_through_separate_handles_are_all_kept(
        tmp_path: Path, zarr_format: int) -> None:
    """Before: each handle wrote back its own cached copy of the attributes, so handles
    setting different attributes lost each other's."""
    path = tmp_path / "g.zarr"
    root = zk.open_group(path, mode="w", zarr_format=zarr_format)
    root.create_array("x", shape=(2,), dtype="u1")

    def writer(i: int) -> None:
        for j in range(10):
            zk.open_group(path, mode="r+").attrs[f"g{i}-{j}"] = j
            zk.open_array(path / "x", mode="r+").attrs[f"a{i}-{j}"] = j

    run_threads(4, writer)
    assert dict(zk.open_group(path).attrs) == {f"g{i}-{j}": j for i in range(4) for j in range(10)}
    assert dict(zk.open_array(path / "x").attrs) == {
        f"a{i}-{j}": j for i in range(4) for j in range(10)}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_stale_handle_does_not_undo_a_resize(tmp_path: Path, zarr_format: int) -> None:
    """Before: a v3 attribute write rewrote zarr.json from the handle's old metadata, so
    a resize made through another handle was reverted."""
    path = tmp_path / "a.zarr"
    stale = zk.create_array(path, shape=(4,), chunks=(2,), dtype="i2", zarr_format=zarr_format)
    zk.open_array(path, mode="r+").resize((10,))
    stale.attrs["note"] = "kept"
    fresh = zk.open_array(path)
    assert fresh.shape == (10,)
    assert fresh.attrs["note"] == "kept"
    if zarr_format == 3:  # attributes live in zarr.json: the handle adopted what it found
        assert stale.shape == (10,)


def test_deleting_an_attribute_keeps_others_changes(tmp_path: Path) -> None:
    path = tmp_path / "g.zarr"
    a = zk.open_group(path, mode="w")
    a.attrs.update({"x": 1, "y": 2})
    b = zk.open_group(path, mode="r+")
    a.attrs["z"] = 3
    del b.attrs["x"]
    assert dict(zk.open_group(path).attrs) == {"y": 2, "z": 3}
    with pytest.raises(KeyError):
        del b.attrs["missing"]


# --- processes ------------------------------------------------------------------------------

_PROCESS_WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {src!r})
    import zarrkit as zk
    path, first, step, count, locks = sys.argv[1], *map(int, sys.argv[2:6])
    zk.config.set(file_locks=bool(locks), threads=1)
    for j in range(first, count, step):
        zk.open_array(path, mode="r+")[j] = j
""")


def run_processes(script: str, args: Sequence[Sequence[str]], timeout: float = 120) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", script, *a]) for a in args]
    for p in procs:
        assert p.wait(timeout=timeout) == 0


@pytest.mark.parametrize("zarr_format,shards", [(2, None), (3, (32,))])
def test_processes_with_file_locks_lose_no_writes(
        tmp_path: Path, zarr_format: int, shards: tuple[int, ...] | None) -> None:
    """Before: there were no cross-process locks; 8 processes writing disjoint elements
    of one chunk lost ~47% of their writes."""
    path = tmp_path / "a.zarr"
    count = 480
    zk.create_array(path, shape=(count,), chunks=(count,) if shards is None else (8,),
                    shards=shards, dtype="i4", fill_value=-1, zarr_format=zarr_format)
    script = _PROCESS_WRITER.format(src=SRC)
    run_processes(script, [[str(path), str(i), "8", str(count), "1"] for i in range(8)])
    np.testing.assert_array_equal(zk.open_array(path)[:], np.arange(count))
    # The lock file lives beside the store, outside its keys and outside its directory.
    assert not any("lock" in k for k in DirectoryStore(path).list())
    assert not any("lock" in n for _, _, files in os.walk(path) for n in files)


def test_set_if_not_exists_has_one_winner_across_processes(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {SRC!r})
        from zarrkit.storage import DirectoryStore
        store = DirectoryStore(sys.argv[1])
        start = float(sys.argv[3])
        while time.time() < start:
            pass
        won = store.set_if_not_exists("g/zarr.json", sys.argv[2].encode())
        sys.exit(0 if won else 3)
    """)
    start = str(time.time() + 1.5)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), f"w{i}", start])
             for i in range(6)]
    codes = [p.wait(timeout=60) for p in procs]
    assert sorted(codes) == [0] + [3] * 5
    winner = codes.index(0)
    assert DirectoryStore(tmp_path).get("g/zarr.json") == f"w{winner}".encode()


# --- node creation never replaces a document ---------------------------------------------

@pytest.mark.parametrize("zarr_format", [2, 3])
def test_implicit_parents_never_replace_a_group_created_meanwhile(
        tmp_path: Path, zarr_format: int) -> None:
    """Before: creating p/c0 wrote p's group document unconditionally when p looked
    missing, replacing a p that another writer had created with attributes meanwhile
    (p.attrs == {} in ~3 of 4 racing rounds)."""
    for round_ in range(12):
        path = tmp_path / f"r{round_}.zarr"
        root = zk.open_group(path, mode="w", zarr_format=zarr_format)
        outcome: dict[str, Any] = {}

        def create(i: int, root: zk.Group = root, outcome: dict[str, Any] = outcome) -> None:
            if i == 0:
                try:
                    root.create_group("p", attributes={"mine": 1})
                    outcome["explicit"] = "created"
                except ContainsNodeError:
                    outcome["explicit"] = "refused"
            else:
                root.create_group(f"p/c{i}")

        run_threads(7, create)
        p = zk.open_group(path / "p")
        expected = {"mine": 1} if outcome["explicit"] == "created" else {}
        assert dict(p.attrs) == expected
        assert sorted(p.group_keys()) == [f"c{i}" for i in range(1, 7)]


class _StaleReads(MemoryStore):
    """A store whose batched reads miss documents written after a moment: the view a
    creator has when another writer acts between its check and its write."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden: set[str] = set()

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        return [None if k in self.hidden else self.get(k) for k in keys]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_creation_after_a_stale_check(zarr_format: int) -> None:
    store = _StaleReads()
    root = zk.open_group(store, mode="w", zarr_format=zarr_format)
    root.create_group("p", attributes={"mine": 1})
    key = "p/zarr.json" if zarr_format == 3 else "p/.zgroup"
    store.hidden.add(key)
    root.create_group("p/c0")  # sees p as missing: must not replace it
    with pytest.raises(ContainsNodeError):
        root.create_group("p")  # sees nothing there: must not replace it either
    store.hidden.clear()
    assert zk.open_group(store, path="p").attrs["mine"] == 1


# --- create-if-absent ------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda p: DirectoryStore(p), lambda p: MemoryStore(),
], ids=["directory", "memory"])
def test_set_if_not_exists_races_have_one_winner(tmp_path: Path,
                                                 make: Callable[[Path], Any]) -> None:
    store = make(tmp_path)
    for round_ in range(20):
        wins: list[int] = []

        def race(i: int, r: int = round_, wins: list[int] = wins) -> None:
            if store.set_if_not_exists(f"k{r}/x", b"%d" % i):
                wins.append(i)

        run_threads(8, race)
        assert len(wins) == 1
        assert store.get(f"k{round_}/x") == b"%d" % wins[0]


# --- symbolic links -------------------------------------------------------------------------

@pytest.fixture
def escaping(tmp_path: Path) -> tuple[Path, Path]:
    """A store whose ``link`` and ``file`` lead to data outside it."""
    outside = tmp_path / "outside"
    (outside / "arr").mkdir(parents=True)
    (outside / "secret").write_bytes(b"secret")
    (outside / "arr" / "0").write_bytes(b"outside chunk")
    root = tmp_path / "store"
    root.mkdir()
    (root / "link").symlink_to(outside)
    (root / "file").symlink_to(outside / "secret")
    (root / "inner").mkdir()
    (root / "inner" / "v").write_bytes(b"inside")
    (root / "alias").symlink_to(root / "inner")
    return root, outside


def test_reads_through_links_leading_outside_are_refused(escaping: tuple[Path, Path]) -> None:
    """Before: reads returned data from outside the root."""
    root, _ = escaping
    store = DirectoryStore(root)
    for key in ("link/secret", "link/arr/0", "file"):
        with pytest.raises(StoreEscapeError):
            store.get(key)
        with pytest.raises(StoreEscapeError):
            store.get_range(key, 0, 2)
    assert store.get("alias/v") == b"inside"  # links that stay inside are followed


def test_a_listing_vouches_for_real_directories_only(escaping: tuple[Path, Path]) -> None:
    """A listing remembers the real directories it finds as inside the store (no lstat
    each when their keys are read next), never the links: those are still refused after
    any listing, a nested one included, and a link in a listed directory too."""
    root, outside = escaping
    (root / "inner" / "deep").mkdir()
    (root / "inner" / "out").symlink_to(outside)
    store = DirectoryStore(root)
    assert store.list_dir("") == ([], ["alias", "inner"])  # links leading out are left out
    assert store.list_dir("inner/") == (["v"], ["deep"])
    assert store.list_dir("alias/") == (["v"], ["deep"])
    for key in ("link/secret", "link/arr/0", "file", "inner/out/secret", "inner/out/arr/0"):
        with pytest.raises(StoreEscapeError):
            store.get(key)
    with pytest.raises(StoreEscapeError):
        store.set("inner/out/new", b"1")
    store.set("inner/deep/new", b"1")
    assert store.get("inner/deep/new") == b"1" and store.get("alias/v") == b"inside"
    assert sorted(p.name for p in outside.rglob("*")) == ["0", "arr", "secret"]


def test_writes_and_deletes_through_links_leading_outside_are_refused(
        escaping: tuple[Path, Path]) -> None:
    """Before: create_array("link/new") wrote outside and del g["link"]["arr"] deleted
    outside the root."""
    root, outside = escaping
    store = DirectoryStore(root)
    with pytest.raises(StoreEscapeError):
        store.set("link/new/zarr.json", b"{}")
    with pytest.raises(StoreEscapeError):
        store.set("link/x", b"1")
    with pytest.raises(StoreEscapeError):
        store.delete("link/arr/0")
    with pytest.raises(StoreEscapeError):
        store.delete_prefix("link/arr/")
    with pytest.raises(StoreEscapeError):
        zk.open_group(root, mode="a").create_array("link/new", shape=(2,), dtype="u1")
    assert sorted(p.name for p in outside.rglob("*")) == ["0", "arr", "secret"]
    assert (outside / "arr" / "0").read_bytes() == b"outside chunk"
    store.set("file", b"replaced")  # the link itself is replaced, never its target
    assert (outside / "secret").read_bytes() == b"secret"
    assert not (root / "file").is_symlink()


def test_new_directories_are_checked_up_to_a_directory_known_inside(
        escaping: tuple[Path, Path]) -> None:
    """A key's directories are vouched for one level at a time, up to one known to be
    inside: new ones under a real directory are inside, and a link anywhere on the way
    (first met, or after its siblings were written) is still resolved, whatever follows
    it; through the store and the engine's file writes alike."""
    root, outside = escaping
    store = DirectoryStore(root)
    store.set("inner/n1/n2/n3/x", b"1")  # three new levels under a real directory
    store.set("alias/m1/m2/y", b"2")  # new levels under a link that stays inside
    assert (root / "inner" / "m1" / "m2" / "y").read_bytes() == b"2"
    (root / "inner" / "n1" / "out").symlink_to(outside)  # after n1 was vouched for
    for key in ("inner/n1/out/new/deeper/z", "link/new/deeper/z", "inner/n1/out/z"):
        with pytest.raises(StoreEscapeError):
            store.set(key, b"3")
        with pytest.raises(StoreEscapeError):
            store.file_writes(["inner/n1/n2/ok", key])
    assert sorted(p.name for p in outside.rglob("*")) == ["0", "arr", "secret"]
    store.set("inner/n1/n2/n3/w", b"4")
    assert store.get("inner/n1/n2/n3/x") == b"1" and store.get("inner/n1/n2/n3/w") == b"4"


def test_deleting_a_link_removes_the_link_only(escaping: tuple[Path, Path]) -> None:
    root, _ = escaping
    store = DirectoryStore(root)
    store.delete_prefix("alias/")
    assert not (root / "alias").exists() and (root / "inner" / "v").read_bytes() == b"inside"


def test_listings_leave_out_links_leading_outside(escaping: tuple[Path, Path]) -> None:
    root, _ = escaping
    store = DirectoryStore(root)
    assert sorted(store.list()) == ["alias/v", "inner/v"]
    assert store.list_dir("") == ([], ["alias", "inner"])
    assert list(store.list_prefix("link/")) == []
    assert store.list_dir("link/") == ([], [])


def test_link_cycles_end_in_a_zarrkit_error(tmp_path: Path) -> None:
    """Before: ELOOP surfaced as a raw OSError (or a listing recursed for ever)."""
    root = tmp_path / "store"
    root.mkdir()
    (root / "a").symlink_to(root / "b")
    (root / "b").symlink_to(root / "a")
    (root / "d").mkdir()
    (root / "d" / "up").symlink_to(root)  # inside, but back up the tree
    (root / "d" / "k").write_bytes(b"v")
    store = DirectoryStore(root)
    for call in (lambda: store.get("a/x"), lambda: store.set("a/x", b"1"),
                 lambda: store.get("a")):
        try:
            call()
        except ZarrkitError:
            pass
    keys = list(store.list())
    assert "d/k" in keys and len(keys) < 10


# --- operating-system errors ------------------------------------------------------------------

def test_os_errors_become_store_errors(tmp_path: Path) -> None:
    """Before: ENAMETOOLONG, NotADirectoryError and IsADirectoryError escaped raw."""
    root = zk.open_group(tmp_path / "g.zarr", mode="w", zarr_format=3)
    with pytest.raises(StoreIOError) as info:
        root.create_array("n" * 300, shape=(2,), dtype="u1")
    assert info.value.errno == errno.ENAMETOOLONG
    assert zk.open_group(tmp_path / "g.zarr").get("n" * 300) is None  # a read is a miss
    store = DirectoryStore(tmp_path / "s")
    store.set("a/b", b"1")
    with pytest.raises(StoreIOError):
        store.set("a", b"a directory stands here")
    assert store.get("a/b") == b"1"
    store.set("f", b"1")
    with pytest.raises(StoreIOError):
        store.set("f/zarr.json", b"{}")
    with pytest.raises(ZarrkitError):
        root.create_group("x").create_group("zarr.json").create_group("y")


# --- temporary files ----------------------------------------------------------------------------

def test_temporary_files_are_outside_the_store(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path / "s.zarr")
    seen: list[str] = []
    real_replace = os.replace

    def spy(src: str, dst: str) -> None:
        seen.append(src)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    store.set("a/b/0", b"x")
    assert seen and all(not s.startswith(str(store.root)) for s in seen)
    assert all(os.path.basename(os.path.dirname(s)).startswith(TEMP_PREFIX) for s in seen)


_KILLED_WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {src!r})
    from zarrkit.storage import DirectoryStore
    store = DirectoryStore(sys.argv[1])
    value = b"x" * (1 << 22)
    print("ready", flush=True)
    i = 0
    while True:
        store.set(f"a/{{i % 50}}", value)
        i += 1
""")


def test_temporaries_of_killed_writers_are_cleaned_on_open(tmp_path: Path) -> None:
    """Before: 6 temporary files remained inside the store after 30 kills."""
    path = tmp_path / "s.zarr"
    side = tmp_path / f"{TEMP_PREFIX}s.zarr"
    script = _KILLED_WRITER.format(src=SRC)
    for seed in range(6):
        proc = subprocess.Popen([sys.executable, "-c", script, str(path)],
                                stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        time.sleep(0.05 + 0.03 * seed)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert files_named_like_temporaries(path) == []
    DirectoryStore(path)  # opening cleans what killed writers left beside it
    assert not side.exists() or os.listdir(side) == []
    store = DirectoryStore(path)
    assert all(store.get(k) == b"x" * (1 << 22) for k in store.list())


def test_temporaries_of_live_writers_are_kept(tmp_path: Path) -> None:
    side = tmp_path / f"{TEMP_PREFIX}s.zarr"
    side.mkdir()
    mine = side / f"{TEMP_PREFIX}{directory_module._HOST}-{os.getpid()}-x-0"
    foreign_host = side / f"{TEMP_PREFIX}00000000-1-x-0"
    mine.write_bytes(b"in flight")
    foreign_host.write_bytes(b"another host's")
    DirectoryStore(tmp_path / "s.zarr")
    assert mine.exists() and foreign_host.exists()


def test_unwritable_parent_keeps_temporaries_inside_and_hidden(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path / "s.zarr")
    store._side = None  # as when the parent directory is not writable
    store.set("a/0", b"1")
    assert store.get("a/0") == b"1" and list(store.list()) == ["a/0"]
    assert files_named_like_temporaries(tmp_path / "s.zarr") == []


# --- mutants the suite let live -----------------------------------------------------------------

def test_short_reads_are_completed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pread that returns fewer bytes than asked (signals, network file systems) must be
    followed by more reads, not taken as the whole value."""
    store = DirectoryStore(tmp_path)
    value = bytes(range(256)) * 40
    store.set("k", value)
    real_pread = os.pread

    def short_pread(fd: int, n: int, offset: int) -> bytes:
        return real_pread(fd, min(n, 3), offset)

    monkeypatch.setattr(os, "pread", short_pread)
    assert store.get("k") == value
    assert store.get_range("k", 5, 100) == value[5:105]


@pytest.mark.parametrize("fsync", [True, False])
def test_fsync_setting_syncs_files_and_directories(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fsync: bool) -> None:
    store = DirectoryStore(tmp_path / "s")
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    with zk.config.set(fsync=fsync):
        store.set("a/b", b"1")
        store.set_if_not_exists("a/c", b"2")
    # a file and its directory per write (and the new directory's parent)
    assert (len(synced) >= 4) if fsync else synced == []


def test_deleting_a_key_that_names_a_directory_deletes_nothing(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.set("a/b", b"1")
    store.delete("a")
    assert store.get("a/b") == b"1" and list(store.list()) == ["a/b"]


def test_config_set_called_bare_takes_effect() -> None:
    """Before: Config.set was a generator context manager, so a bare call did nothing."""
    previous = zk.config.file_locks
    try:
        zk.config.set(file_locks=True)
        assert zk.config.file_locks is True
    finally:
        zk.config.file_locks = previous
    with zk.config.set(file_locks=not previous) as cfg:
        assert cfg.file_locks is (not previous)
    assert zk.config.file_locks is previous
    with pytest.raises(AttributeError):
        zk.config.set(no_such_setting=1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_a_process_forked_after_parallel_work_can_work_in_parallel(tmp_path: Path) -> None:
    """Before: the child inherited the parent's thread pool without its threads, and its
    first parallel read waited for ever."""
    data = np.arange(1024 * 1024, dtype="i4").reshape(1024, 1024)  # 4 MiB: read in the pool
    a = zk.create_array(tmp_path / "a.zarr", shape=data.shape, chunks=(128, 128), dtype="i4",
                        data=data)
    with zk.config.set(threads=2):
        assert np.array_equal(a[:], data)  # the parent's pool now runs
        pid = os.fork()
        if pid == 0:  # the child: exit 0 only if a parallel read completes
            code = 1
            try:
                done = threading.Event()
                threading.Thread(target=lambda: (a[:], done.set()), daemon=True).start()
                code = 0 if done.wait(20) else 2
            finally:
                os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
