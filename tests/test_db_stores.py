"""Tests of the database stores, SQLiteStore and LMDBStore: the conformance suite, Zarr
hierarchies written and read back through them, all-or-nothing batches, threads and
processes writing one database, read-only handles, and files that are no database."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lmdb
import numpy as np
import pytest
from support import run_threads

import zarrkit as zk
from zarrkit.errors import (
    CorruptStoreError,
    InvalidKeyError,
    ReadOnlyError,
    StoreIOError,
    StoreLockedError,
)
from zarrkit.storage import LMDBStore, SQLiteStore, Store
from zarrkit.storage.sqlite import prefix_end
from zarrkit.testing import StoreTests

# --- conformance --------------------------------------------------------------------------


class TestSQLiteStore(StoreTests):
    def make_store(self, tmp_path: Path) -> Store:
        return SQLiteStore(tmp_path / "store.sqlite")

    def reopen_read_only(self, store: Store) -> Store:
        assert isinstance(store, SQLiteStore)
        store.close()
        return SQLiteStore(store.path, read_only=True)


class TestLMDBStore(StoreTests):
    def make_store(self, tmp_path: Path) -> Store:
        return LMDBStore(tmp_path / "store.mdb")

    def reopen_read_only(self, store: Store) -> Store:
        assert isinstance(store, LMDBStore)
        store.close()  # a read-only environment of its own, not the writer's shared one
        return LMDBStore(store.path, read_only=True)


class TestLMDBStoreGrowing(StoreTests):
    """The conformance suite on a map so small that most writes must grow it."""

    def make_store(self, tmp_path: Path) -> Store:
        return LMDBStore(tmp_path / "store.mdb", map_size=64 * 1024)


# --- helpers ------------------------------------------------------------------------------

Opener = Callable[..., Store]
KINDS: dict[str, tuple[Opener, str]] = {
    "sqlite": (SQLiteStore, "db.sqlite"),
    "lmdb": (LMDBStore, "db.mdb"),
}


@pytest.fixture(params=sorted(KINDS))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def db_path(kind: str, tmp_path: Path) -> Path:
    return tmp_path / KINDS[kind][1]


def open_db(kind: str, path: Path, **kwargs: Any) -> Store:
    return KINDS[kind][0](path, **kwargs)


def contents(kind: str, path: Path) -> dict[str, bytes]:
    """Everything in the database, read through a new read-only handle."""
    with open_db(kind, path, read_only=True) as store:
        return {key: store.get(key) or b"" for key in store.list()}


# --- Zarr hierarchies ---------------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_hierarchy_round_trip(kind: str, db_path: Path, zarr_format: int) -> None:
    rng = np.random.default_rng(zarr_format)
    image = rng.integers(0, 1000, size=(37, 23), dtype="uint16")
    table = rng.standard_normal(101).astype("float32")
    with open_db(kind, db_path) as store:
        root = zk.open_group(store, mode="w", zarr_format=zarr_format,
                             attributes={"title": "db"})
        raw = root.create_group("raw")
        raw.attrs["units"] = "counts"
        img = raw.create_array("img", shape=image.shape, chunks=(10, 8), dtype="uint16",
                               fill_value=0)
        img[...] = image
        options: dict[str, Any] = {"chunks": (10,)}
        if zarr_format == 3:
            options = {"chunks": (8,), "shards": (32,)}  # partial reads: get_range
        root.create_array("deep/table", shape=table.shape, dtype="float32", data=table,
                          **options)
        zk.consolidate_metadata(store)
    with open_db(kind, db_path, read_only=True) as store:
        group = zk.open_group(store, mode="r", consolidated=True)
        assert group.consolidated
        assert group.attrs["title"] == "db"
        assert group["raw"].attrs["units"] == "counts"
        np.testing.assert_array_equal(group["raw/img"][...], image)
        np.testing.assert_array_equal(group["raw/img"][3:17, 5], image[3:17, 5])
        np.testing.assert_array_equal(group["deep/table"][...], table)
        np.testing.assert_array_equal(group["deep/table"][40:45], table[40:45])
        assert sorted(name for name, _ in group.members(max_depth=None)) == [
            "deep", "deep/table", "raw", "raw/img"]
        with pytest.raises(ReadOnlyError):
            group["raw/img"][0, 0] = 1
        # The same hierarchy opens without consolidated metadata, by listing.
        plain = zk.open_group(store, mode="r", consolidated=False)
        np.testing.assert_array_equal(plain["raw/img"][...], image)


# --- set_many: all or nothing -------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [("../escape", b"x"), ("fine", "not bytes"), ("a//b", b"x"), ("bad\udc80", b"x")],
    ids=["traversal", "str-value", "empty-segment", "surrogate"],
)
def test_set_many_bad_item_in_the_middle_writes_nothing(
    kind: str, db_path: Path, bad: tuple[str, Any]
) -> None:
    items = [(f"k/{i}", bytes([i]) * 10) for i in range(5)]
    items.insert(3, bad)
    with open_db(kind, db_path) as store:
        store.set("existing", b"old")
        with pytest.raises((InvalidKeyError, TypeError)):
            store.set_many(items)
        assert sorted(store.list()) == ["existing"]
    assert contents(kind, db_path) == {"existing": b"old"}


def test_set_many_failure_inside_the_transaction_rolls_back(
    kind: str, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = {f"k/{i}": b"v%d" % i for i in range(6)}
    with open_db(kind, db_path) as store:
        store.set("k/0", b"old")
        if isinstance(store, SQLiteStore):
            # This thread's connection refuses values over 64 bytes: the 4th row fails
            # after three were inserted.
            store._conn().setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 64)
            items["k/3"] = b"x" * 100
            expected: type[Exception] = StoreIOError
        else:
            assert isinstance(store, LMDBStore)
            original = LMDBStore._put
            calls = []

            def failing_put(self: LMDBStore, txn: Any, key: str, value: Any,
                            overwrite: bool = True) -> bool:
                calls.append(key)
                if len(calls) == 4:
                    raise OSError("disk on fire")
                return original(self, txn, key, value, overwrite)

            monkeypatch.setattr(LMDBStore, "_put", failing_put)
            expected = OSError
        with pytest.raises(expected):
            store.set_many(items)
        assert sorted(store.list()) == ["k/0"]
        assert store.get("k/0") == b"old"
    assert contents(kind, db_path) == {"k/0": b"old"}


def test_set_many_is_one_transaction_for_readers(kind: str, db_path: Path) -> None:
    """A reader never sees part of a batch: each snapshot has all its keys or none."""
    batches = 30
    keys = [f"b/{i}" for i in range(50)]
    with open_db(kind, db_path) as store:
        stop = threading.Event()
        torn: list[int] = []

        def read() -> None:
            while not stop.is_set():
                values = store.get_many(keys)
                if len(set(values)) != 1:
                    torn.append(1)

        reader = threading.Thread(target=read)
        store.set_many({key: b"0" for key in keys})
        reader.start()
        try:
            for n in range(1, batches):
                store.set_many({key: b"%d" % n for key in keys})
        finally:
            stop.set()
            reader.join()
        assert torn == []


# --- threads and processes ----------------------------------------------------------------


def test_threads_with_their_own_handles(kind: str, db_path: Path) -> None:
    open_db(kind, db_path).close()

    def work(t: int) -> None:
        with open_db(kind, db_path) as store:
            for i in range(25):
                store.set(f"t{t}/{i}", b"%d:%d" % (t, i))
            store.set_many({f"m{t}/{i}": b"%d" % i for i in range(25)})
            store.set_if_not_exists("winner", b"%d" % t)

    run_threads(8, work)
    found = contents(kind, db_path)
    assert len(found) == 8 * 50 + 1
    for t in range(8):
        for i in range(25):
            assert found[f"t{t}/{i}"] == b"%d:%d" % (t, i)
            assert found[f"m{t}/{i}"] == b"%d" % i
    assert found["winner"] in {b"%d" % t for t in range(8)}


def _process_writer(kind: str, path: str, worker: int, count: int) -> int:
    """Write ``count`` keys of its own (one by one and in batches, large enough to grow an
    LMDB map), race for one shared key; return 1 if it won the race."""
    options: dict[str, Any] = {"map_size": 256 * 1024} if kind == "lmdb" else {}
    store = open_db(kind, Path(path), **options)
    try:
        for i in range(count):
            store.set(f"p{worker}/{i}", bytes([worker]) * (1000 + i))
        store.set_many({f"q{worker}/{i}": b"%d-%d" % (worker, i) for i in range(count)})
        won = store.set_if_not_exists("race", b"%d" % worker)
        return int(won)
    finally:
        store.close()


def test_processes_write_one_database(kind: str, db_path: Path) -> None:
    open_db(kind, db_path, **({"map_size": 64 * 1024} if kind == "lmdb" else {})).close()
    count = 60
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        wins = pool.starmap(_process_writer, [(kind, str(db_path), w, count) for w in range(4)])
    assert sum(wins) == 1
    found = contents(kind, db_path)
    assert len(found) == 4 * 2 * count + 1
    for w in range(4):
        for i in range(count):
            assert found[f"p{w}/{i}"] == bytes([w]) * (1000 + i)
            assert found[f"q{w}/{i}"] == b"%d-%d" % (w, i)
    assert found["race"] == b"%d" % wins.index(1)


def _lmdb_grower(path: str, count: int) -> None:
    with LMDBStore(path, map_size=64 * 1024) as store:
        for i in range(count):
            store.set(f"g/{i}", b"x" * 20000)


def _lmdb_opener(path: str, count: int) -> list[str]:
    """Open, read and close the database ``count`` times; the errors met."""
    errors = []
    for _ in range(count):
        try:
            with LMDBStore(path, map_size=64 * 1024) as store:
                store.get("g/0")
        except StoreIOError as error:
            errors.append(str(error))
    return errors


def test_lmdb_opens_while_another_process_grows_the_map(tmp_path: Path) -> None:
    """Opening reads the map size and then begins a transaction: a map grown by another
    process in between (MDB_MAP_RESIZED) must not fail the open. Before the fix about one
    open in 300 failed here."""
    path = str(tmp_path / "db.mdb")
    LMDBStore(path, map_size=64 * 1024).close()
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        grower = pool.apply_async(_lmdb_grower, (path, 400))
        openers = [pool.apply_async(_lmdb_opener, (path, 300)) for _ in range(3)]
        grower.get()
        assert [opener.get() for opener in openers] == [[], [], []]


def test_lmdb_open_retries_a_map_resized_mid_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real_open = lmdb.open

    def resized_twice(*args: Any, **kwargs: Any) -> lmdb.Environment:
        calls.append(1)
        if len(calls) <= 2:
            raise lmdb.MapResizedError("mdb_txn_begin: MDB_MAP_RESIZED")
        return real_open(*args, **kwargs)

    monkeypatch.setattr(lmdb, "open", resized_twice)
    with LMDBStore(tmp_path / "db.mdb") as store:
        store.set("k", b"v")
        assert store.get("k") == b"v"
    assert len(calls) == 3


# --- read-only, closing, bad files --------------------------------------------------------


def test_read_only_refuses_every_write(kind: str, db_path: Path) -> None:
    with open_db(kind, db_path) as store:
        store.set("k", b"v")
    with open_db(kind, db_path, read_only=True) as store:
        assert store.read_only
        for write in (
            lambda: store.set("k", b"x"),
            lambda: store.set_many({"n": b"x"}),
            lambda: store.set_many([]),
            lambda: store.set_if_not_exists("n", b"x"),
            lambda: store.delete("k"),
            lambda: store.delete_prefix(""),
        ):
            with pytest.raises(ReadOnlyError):
                write()
        assert store.get("k") == b"v"
    assert contents(kind, db_path) == {"k": b"v"}


def test_read_only_of_a_missing_file(kind: str, db_path: Path) -> None:
    with pytest.raises(StoreIOError) as info:
        open_db(kind, db_path, read_only=True)
    assert isinstance(info.value, FileNotFoundError) or info.value.errno == 2
    assert not db_path.exists()


@pytest.mark.parametrize(
    "content",
    [b"this is not a database at all\n" * 300, os.urandom(16384), b"\x00" * 8192,
     b"SQLite format 3\x00" + b"\xff" * 4000],
    ids=["text", "random", "zeros", "bad-sqlite-header"],
)
@pytest.mark.parametrize("read_only", [False, True])
def test_file_that_is_no_database(
    kind: str, db_path: Path, content: bytes, read_only: bool
) -> None:
    db_path.write_bytes(content)
    with pytest.raises((CorruptStoreError, StoreIOError)):
        store = open_db(kind, db_path, read_only=read_only)
        store.get("k")  # should the open not notice, the first read must
        store.close()
    assert db_path.read_bytes() == content  # left untouched


def test_each_refuses_the_others_file(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "a.sqlite") as store:
        store.set("k", b"v")
    with LMDBStore(tmp_path / "b.mdb") as store:
        store.set("k", b"v")
    with pytest.raises(CorruptStoreError):
        LMDBStore(tmp_path / "a.sqlite", read_only=True)
    with pytest.raises(CorruptStoreError):
        SQLiteStore(tmp_path / "b.mdb", read_only=True)


def test_closed_store_refuses_use(kind: str, db_path: Path) -> None:
    store = open_db(kind, db_path)
    store.set("k", b"v")
    store.close()
    with pytest.raises(ValueError, match="closed"):
        store.get("k")
    with pytest.raises(ValueError, match="closed"):
        store.set("k", b"w")
    store.close()


# --- keys and listings --------------------------------------------------------------------


def test_like_wildcards_and_neighbours_in_listings(kind: str, db_path: Path) -> None:
    keys = ["a%/0", "a_/0", "a/0", "a/%", "a/_", "a0", "a.", "a-b/c", "b", "a/b/\U0010ffff",
            "a\U0010ffff/x", "é/1", "\ud7ff/1", "\ue000/1"]
    with open_db(kind, db_path) as store:
        store.set_many({key: key.encode("utf-8") for key in keys})
        assert list(store.list()) == sorted(keys)
        assert list(store.list_prefix("a/")) == sorted(k for k in keys if k.startswith("a/"))
        assert list(store.list_prefix("a%/")) == ["a%/0"]
        assert list(store.list_prefix("a_/")) == ["a_/0"]
        assert list(store.list_prefix("\ud7ff/")) == ["\ud7ff/1"]
        assert store.list_dir("a/") == (["%", "0", "_"], ["b"])
        keys_, prefixes = store.list_dir("")
        assert keys_ == ["a.", "a0", "b"]
        assert prefixes == sorted(["a%", "a_", "a", "a-b", "a\U0010ffff", "é", "\ud7ff",
                                   "\ue000"])
        store.delete_prefix("a_/")
        assert store.get("a_/0") is None and store.get("a%/0") == b"a%/0"
        store.delete_prefix("a/")
        assert sorted(store.list()) == sorted(k for k in keys if not k.startswith(("a/", "a_/")))


def test_listings_span_many_pages(kind: str, db_path: Path) -> None:
    with open_db(kind, db_path) as store:
        keys = {f"x/c/{i // 50}/{i % 50}": b"" for i in range(2500)}
        keys.update({f"x/{i:05d}": b"" for i in range(2500)})
        store.set_many(keys)
        assert list(store.list_prefix("x/")) == sorted(keys)
        names, prefixes = store.list_dir("x/")
        assert names == [f"{i:05d}" for i in range(2500)] and prefixes == ["c"]
        assert store.list_dir("x/c/") == ([], sorted(str(i) for i in range(50)))
        iterator = store.list_prefix("x/c/")
        first = [next(iterator) for _ in range(1500)]
        store.set("x/c/zzz", b"")  # writing while a listing is half read
        rest = list(iterator)
        assert first + rest == sorted(k for k in [*keys, "x/c/zzz"] if k.startswith("x/c/"))
        store.delete_prefix("x/")
        assert list(store.list()) == []


def test_get_many_of_many_keys(kind: str, db_path: Path) -> None:
    with open_db(kind, db_path) as store:
        store.set_many({f"c/{i}": b"%d" % i for i in range(0, 3000, 2)})
        wanted = [f"c/{i}" for i in range(3000)] + ["c/4", "c/4"]
        got = store.get_many(wanted)
        assert got[:3000] == [b"%d" % i if i % 2 == 0 else None for i in range(3000)]
        assert got[3000:] == [b"4", b"4"]


def test_prefix_end() -> None:
    assert prefix_end("a/") == "a0"
    assert prefix_end("a\U0010ffff") == "b"
    assert prefix_end("\U0010ffff") is None
    assert prefix_end("\ud7ff") == "\ue000"


def test_partial_reads_of_a_large_value(kind: str, db_path: Path) -> None:
    value = os.urandom(3 * 2**20 + 17)
    with open_db(kind, db_path) as store:
        store.set("big", value)
        assert store.get_range("big", 2**20 + 5, 1000) == value[2**20 + 5 : 2**20 + 1005]
        assert store.get_range("big", -17) == value[-17:]
        assert store.get_range("big", len(value) - 3, 100) == value[-3:]
        assert store.get_range("big", len(value) + 3, 10) == b""


# --- SQLite specifics ---------------------------------------------------------------------


def test_sqlite_layout_is_zarr_python_2s(tmp_path: Path) -> None:
    path = tmp_path / "z.sqlite"
    with SQLiteStore(path) as store:
        store.set("a/0", b"\x00\x01")
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT k, v FROM zarr").fetchall() == [("a/0", b"\x00\x01")]
    finally:
        conn.close()


def test_sqlite_reads_a_database_written_by_another_program(tmp_path: Path) -> None:
    path = tmp_path / "foreign.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE zarr(k TEXT PRIMARY KEY, v BLOB)")
    conn.execute("CREATE TABLE other(x)")
    conn.executemany("INSERT INTO zarr VALUES (?, ?)", [
        (".zgroup", '{"zarr_format": 2}'),  # TEXT, as a JSON writer might store it
        ("a/0", b"chunk"),
        ("../escape", b"bad"),  # not a valid key: never listed
        ("a//b", b"bad"),
    ])
    conn.commit()
    conn.close()
    with SQLiteStore(path, read_only=True) as store:
        assert list(store.list()) == [".zgroup", "a/0"]
        assert store.list_dir("") == ([".zgroup"], ["a"])
        assert store.get(".zgroup") == b'{"zarr_format": 2}'
        assert store.get_range(".zgroup", 2, 11) == b"zarr_format"
        assert store.get_range(".zgroup", -2) == b"2}"
        assert dict(zk.open_group(store, mode="r").attrs) == {}


def test_sqlite_read_only_needs_the_table(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE unrelated(x)")
    conn.commit()
    conn.close()
    with pytest.raises(CorruptStoreError, match="zarr"):
        SQLiteStore(path, read_only=True)


def test_sqlite_busy_past_the_timeout(tmp_path: Path) -> None:
    path = tmp_path / "busy.sqlite"
    SQLiteStore(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another "process" holds the write lock
    try:
        with SQLiteStore(path, timeout=0.2) as store:
            with pytest.raises(StoreLockedError):
                store.set("k", b"v")
            assert store.get("k") is None  # readers are not blocked
            other.execute("COMMIT")
            store.set("k", b"v")
            assert store.get("k") == b"v"
    finally:
        other.close()


def test_sqlite_connections_per_thread_are_closed(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "t.sqlite")
    run_threads(4, lambda t: store.set(f"k{t}", b"v"))
    connections = list(store._connections)
    assert 1 <= len(connections) <= 5
    store.close()
    for _, conn in connections:
        with pytest.raises(sqlite3.ProgrammingError):
            conn.execute("SELECT 1")


# --- LMDB specifics -----------------------------------------------------------------------


def test_lmdb_single_file_with_its_lock_beside(tmp_path: Path) -> None:
    path = tmp_path / "one.mdb"
    with LMDBStore(path) as store:
        store.set("a", b"1")
        assert sorted(os.listdir(tmp_path)) == ["one.mdb", "one.mdb-lock"]
        assert list(store.list()) == ["a"]
        assert store.list_dir("") == (["a"], [])
    assert path.is_file()


def test_lmdb_map_grows(tmp_path: Path) -> None:
    path = tmp_path / "grow.mdb"
    with LMDBStore(path, map_size=64 * 1024) as store:
        value = os.urandom(5 * 2**20)
        store.set("big", value)
        store.set_many({f"c/{i}": os.urandom(100_000) for i in range(40)})
        assert store.get("big") == value
        assert store._environment.env.info()["map_size"] > 8 * 2**20
    with LMDBStore(path, read_only=True, map_size=64 * 1024) as store:
        assert store.get("big") == value  # a reader adopts the larger map
        assert len(list(store.list_prefix("c/"))) == 40


def test_lmdb_map_grows_under_concurrent_readers(tmp_path: Path) -> None:
    with LMDBStore(tmp_path / "g.mdb", map_size=64 * 1024) as store:
        store.set("fixed", b"f" * 5000)

        def work(t: int) -> None:
            if t == 0:
                for i in range(60):
                    store.set(f"w/{i}", os.urandom(50_000))
            else:
                for _ in range(300):
                    assert store.get("fixed") == b"f" * 5000
                    assert store.get_range("fixed", -3) == b"fff"
                    list(store.list_prefix("w/"))

        run_threads(6, work)
        assert len(list(store.list_prefix("w/"))) == 60


def test_lmdb_handles_in_one_process_share_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "s.mdb"
    writer = LMDBStore(path)
    reader = LMDBStore(path, read_only=True)  # LMDB cannot open the file twice: shared
    other_writer = LMDBStore(path)
    try:
        writer.set("k", b"v")
        assert reader.get("k") == b"v"
        with pytest.raises(ReadOnlyError):
            reader.set("k", b"w")
        other_writer.set("k2", b"w")
        writer.close()
        assert reader.get("k2") == b"w"  # the environment lives on for the others
    finally:
        writer.close()
        reader.close()
        other_writer.close()
    # A read-only handle opens the environment writable when the files allow it, so a
    # writable handle opened while only it is open shares the environment.
    with LMDBStore(path, read_only=True) as only_reader:
        assert only_reader.get("k") == b"v"
        with LMDBStore(path) as late_writer:
            late_writer.set("k", b"late")
        assert only_reader.get("k") == b"late"
        with pytest.raises(ReadOnlyError):
            only_reader.set("k", b"no")
    with LMDBStore(path) as store:  # all closed: writable again
        store.set("k3", b"x")


def test_lmdb_key_limit(tmp_path: Path) -> None:
    with LMDBStore(tmp_path / "k.mdb") as store:
        long_key = "a/" + "x" * 600
        with pytest.raises(InvalidKeyError, match="511"):
            store.set(long_key, b"v")
        with pytest.raises(InvalidKeyError):
            store.set_many({"ok": b"1", long_key: b"v"})
        assert store.get(long_key) is None
        assert store.get_many([long_key]) == [None]
        assert long_key not in store
        assert list(store.list_prefix(long_key + "/")) == []
        store.delete(long_key)
        assert list(store.list()) == []


def test_lmdb_skips_foreign_keys(tmp_path: Path) -> None:
    path = tmp_path / "foreign.mdb"
    env = lmdb.open(str(path), subdir=False)
    with env.begin(write=True) as txn:
        txn.put(b"a/0", b"ok")
        txn.put(b"a/../x", b"bad")
        txn.put(b"a/\xff", b"not utf-8")
        txn.put(b"b//c", b"bad")
    env.close()
    with LMDBStore(path, read_only=True) as store:
        assert list(store.list()) == ["a/0"]
        assert store.list_dir("") == ([], ["a"])
        assert store.list_dir("a/") == (["0"], [])


@pytest.fixture(autouse=True)
def _no_leaked_environments() -> Iterator[None]:
    from zarrkit.storage import lmdb as lmdb_store

    yield
    leaked = [env.real_path for env in lmdb_store._registry.values() if env.refs > 0]
    assert leaked == []


def test_pickling_reopens(kind: str, db_path: Path) -> None:
    import pickle

    with open_db(kind, db_path) as store:
        store.set("k", b"v")
    with open_db(kind, db_path, read_only=True) as store:
        with pickle.loads(pickle.dumps(store)) as copy:
            assert copy.read_only and copy.get("k") == b"v"
            assert copy.lock_identity == store.lock_identity
    store.close()
    with pytest.raises(ValueError, match="closed"):
        pickle.dumps(store)
