"""SQLite and LMDB stores refuse files that are not what they claim (issue 28).

Each hostile file is built here. The cases that used to hang, kill the process (SIGBUS)
or take gigabytes run in a child process with a timeout, so that a regression fails
instead of hanging or killing pytest.
"""

from __future__ import annotations

import os
import sqlite3
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import lmdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit
from zarrkit.errors import CorruptStoreError, ResourceLimitError, StoreIOError, ZarrkitError
from zarrkit.storage.lmdb import LMDBStore
from zarrkit.storage.sqlite import SQLiteStore

#: Seconds a child may take: opening a refused file takes well under one.
TIMEOUT = 60


def run_child(code: str, *args: str) -> str:
    """Run ``code`` in a fresh interpreter and return its output; fail (never hang) if it
    runs past TIMEOUT or dies of a signal."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), *args],
            capture_output=True, text=True, timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not finish in {TIMEOUT} s (hang)")
    assert done.returncode == 0, (
        f"child exited with {done.returncode} (negative: killed by that signal)\n"
        f"{done.stdout}\n{done.stderr}"
    )
    return done.stdout


# A child that opens the store, reads a key, and prints the error it got (class: message)
# and its peak RSS in KiB.
OPEN_AND_READ = """
    import sys
    from zarrkit.errors import ZarrkitError
    kind, path, mode = sys.argv[1:]
    if kind == "sqlite":
        from zarrkit.storage.sqlite import SQLiteStore as Store
    else:
        from zarrkit.storage.lmdb import LMDBStore as Store
    try:
        with Store(path, read_only=mode == "r") as store:
            store.get("zarr.json")
            store.get("a/0")
            list(store.list())
        print("no error")
    except ZarrkitError as error:
        print(f"{type(error).__name__}: {error}")
    # This process's own peak (VmHWM): Linux keeps ru_maxrss across exec, so it would
    # start at the size of the pytest worker that started this child.
    with open("/proc/self/status") as status:
        print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")))
"""


def open_in_child(kind: str, path: Path, mode: str) -> tuple[str, int]:
    """(the error line, peak RSS in bytes) of OPEN_AND_READ on ``path``."""
    lines = run_child(OPEN_AND_READ, kind, str(path), mode).strip().splitlines()
    return lines[0], int(lines[-1]) * 1024


def make_sqlite(path: Path, *statements: str) -> Path:
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path


# --- SQLite: the schema is checked before the table is touched ----------------------------

ENDLESS_VIEW = (
    "CREATE VIEW zarr(k, v) AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL "
    "SELECT n + 1 FROM r) SELECT 'x' || n, x'00' FROM r"
)


@pytest.mark.parametrize("mode", ["r", "r+"])
def test_sqlite_view_over_endless_cte_is_refused(tmp_path: Path, mode: str) -> None:
    # Reading "zarr.json" from that view scans an endless CTE: the default (writable)
    # open used to hang there. Now the open refuses the view itself, in every mode.
    path = make_sqlite(tmp_path / "view.sqlite", ENDLESS_VIEW)
    line, _ = open_in_child("sqlite", path, mode)
    assert line.startswith("CorruptStoreError:"), line
    assert str(path) in line and "is a view" in line


@pytest.mark.parametrize("mode", ["r", "r+"])
def test_sqlite_generated_column_bomb_is_refused_with_bounded_memory(
    tmp_path: Path, mode: str
) -> None:
    # A few KB of file whose value column is computed: 256 MiB for every row read.
    path = make_sqlite(
        tmp_path / "generated.sqlite",
        "CREATE TABLE zarr(k TEXT PRIMARY KEY, "
        "v BLOB GENERATED ALWAYS AS (zeroblob(268435456)) VIRTUAL)",
        "INSERT INTO zarr(k) VALUES ('zarr.json'), ('a/0')",
    )
    assert path.stat().st_size < 64 * 1024
    line, rss = open_in_child("sqlite", path, mode)
    assert line.startswith("CorruptStoreError:"), line
    assert str(path) in line and "generated columns" in line
    assert rss < 200 * 2**20, f"peak RSS {rss / 2**20:.0f} MiB"


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ("CREATE TABLE zarr(k TEXT PRIMARY KEY, v BLOB AS (k || 'x') STORED)",
         "generated columns"),
        ("CREATE TABLE zarr(k TEXT PRIMARY KEY, v BLOB, extra AS (1))", "generated columns"),
        ("CREATE TABLE zarr(k TEXT PRIMARY KEY, v BLOB, extra BLOB)", r"not \(k, v\)"),
        ("CREATE TABLE zarr(key TEXT PRIMARY KEY, value BLOB)", r"not \(k, v\)"),
        ("CREATE TABLE zarr(k TEXT PRIMARY KEY, v BLOB CHECK (length(randomblob(8)) = 8))",
         "CHECK"),
        ("CREATE VIEW zarr AS SELECT 'zarr.json' AS k, x'7b7d' AS v", "is a view"),
    ],
)
@pytest.mark.parametrize("read_only", [True, False])
def test_sqlite_unexpected_schema_is_refused(
    tmp_path: Path, schema: str, why: str, read_only: bool
) -> None:
    path = make_sqlite(tmp_path / "odd.sqlite", schema)
    before = path.read_bytes()
    with pytest.raises(CorruptStoreError, match=why) as caught:
        SQLiteStore(path, read_only=read_only)
    assert str(path) in str(caught.value)
    # Refused before anything was written: no WAL switch, no table made.
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "extra",
    [
        "CREATE TRIGGER t AFTER INSERT ON zarr BEGIN DELETE FROM zarr; END",
        "CREATE TRIGGER t BEFORE DELETE ON ZARR BEGIN SELECT 1; END",
        "CREATE INDEX i ON zarr(zeroblob(100000))",
    ],
)
@pytest.mark.parametrize("read_only", [True, False])
def test_sqlite_triggers_and_expression_indexes_are_refused(
    tmp_path: Path, extra: str, read_only: bool
) -> None:
    path = make_sqlite(
        tmp_path / "trigger.sqlite", "CREATE TABLE zarr(k TEXT PRIMARY KEY, v BLOB)", extra
    )
    with pytest.raises(CorruptStoreError, match="triggers|indexes") as caught:
        SQLiteStore(path, read_only=read_only)
    assert str(path) in str(caught.value)


def test_sqlite_zarr_python_layout_still_opens(tmp_path: Path) -> None:
    # The layout zarr-python 2's SQLiteStore makes, with another table beside it.
    path = make_sqlite(
        tmp_path / "ok.sqlite",
        "CREATE TABLE IF NOT EXISTS zarr(k TEXT PRIMARY KEY, v BLOB)",
        "CREATE TABLE other(a, b)",
        "CREATE TRIGGER t AFTER INSERT ON other BEGIN SELECT 1; END",
        "INSERT INTO zarr VALUES ('a/0', x'0102')",
    )
    with SQLiteStore(path, read_only=True) as store:
        assert store.get("a/0") == b"\x01\x02"
    with SQLiteStore(path) as store:
        store.set("a/1", b"x")
        assert store.get("a/1") == b"x"


def _store_with_value(path: Path, size: int) -> None:
    with SQLiteStore(path) as store:
        store.set("a/0", bytes(size))
        store.set("small", b"abc")


def test_sqlite_value_over_max_chunk_bytes_is_refused_before_loading(tmp_path: Path) -> None:
    path = tmp_path / "big.sqlite"
    _store_with_value(path, 2 << 20)
    with zarrkit.config.set(max_chunk_bytes=1 << 20), SQLiteStore(path, read_only=True) as s:
        for read in (lambda: s.get("a/0"), lambda: s.get_many(["small", "a/0"]),
                     lambda: s.get_range("a/0", 0)):
            with pytest.raises(ResourceLimitError, match="max_chunk_bytes") as caught:
                read()
            assert str(path) in str(caught.value) and "'a/0'" in str(caught.value)
        # Below the bound everything reads as before.
        assert s.get("small") == b"abc"
        assert s.get_range("a/0", 5, 10) == bytes(10)
        assert s.get_many(["small", "missing"]) == [b"abc", None]


@settings(max_examples=25, deadline=None)
@given(size=st.integers(0, 4096), limit=st.integers(0, 4096), text=st.booleans())
def test_sqlite_value_bound_property(
    tmp_path_factory: pytest.TempPathFactory, size: int, limit: int, text: bool
) -> None:
    # A value reads back whole if it fits the bound and raises ResourceLimitError if not,
    # whichever way it was stored (text written by another program counts in bytes).
    path = tmp_path_factory.mktemp("bound") / "b.sqlite"
    value = "é" * (size // 2) if text else bytes(range(256)) * (size // 256) + bytes(size % 256)
    make_sqlite(path, "CREATE TABLE zarr(k TEXT PRIMARY KEY, v BLOB)")
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO zarr VALUES ('k', ?)", (value,))
    conn.commit()
    conn.close()
    expected = value.encode() if isinstance(value, str) else value
    with zarrkit.config.set(max_chunk_bytes=limit), SQLiteStore(path, read_only=True) as s:
        if len(expected) <= limit:
            assert s.get("k") == expected
            assert s.get_many(["k"]) == [expected]
        else:
            with pytest.raises(ResourceLimitError):
                s.get("k")
            with pytest.raises(ResourceLimitError):
                s.get_many(["k"])


# --- LMDB: the header is checked before the file is mapped --------------------------------

def make_lmdb(path: Path, entries: int = 1000) -> int:
    """An LMDB file of many pages made by lmdb itself; return its page size."""
    for stale in (path, Path(f"{path}-lock")):
        stale.unlink(missing_ok=True)
    env = lmdb.open(str(path), subdir=False, map_size=64 << 20)
    with env.begin(write=True) as txn:
        for i in range(entries):
            txn.put(b"a/%d" % i, bytes(200))
        txn.put(b"zarr.json", b"{}")
    psize = int(env.stat()["psize"])
    env.close()
    return psize


@pytest.mark.parametrize("kib", [8, 12, 16, 40])
def test_lmdb_truncated_file_is_refused_not_sigbus(tmp_path: Path, kib: int) -> None:
    path = tmp_path / "cut.mdb"
    psize = make_lmdb(path)
    assert path.stat().st_size > 64 * 1024
    os.truncate(path, kib * 1024)
    line, _ = open_in_child("lmdb", path, "r")
    assert line.startswith("CorruptStoreError:"), line
    assert str(path) in line and "truncated" in line
    # Writable handles refuse it the same way (and leave the file as it was).
    with pytest.raises(CorruptStoreError, match="truncated"):
        LMDBStore(path)
    assert path.stat().st_size == kib * 1024 and psize == 4096


@pytest.mark.parametrize("kib", [1, 4])
def test_lmdb_shorter_than_its_meta_pages_is_refused(tmp_path: Path, kib: int) -> None:
    path = tmp_path / "short.mdb"
    make_lmdb(path)
    os.truncate(path, kib * 1024)
    with pytest.raises(CorruptStoreError, match="truncated") as caught:
        LMDBStore(path, read_only=True)
    assert str(path) in str(caught.value)


def test_lmdb_wrong_magic_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "magic.mdb"
    make_lmdb(path)
    with open(path, "r+b") as f:
        f.seek(4096 + 16)
        f.write(struct.pack("=I", 0xDEADBEEF))
    with pytest.raises(CorruptStoreError, match="not an LMDB database") as caught:
        LMDBStore(path, read_only=True)
    assert str(path) in str(caught.value)


def _rewrite_last_page(path: Path, last_page: int) -> None:
    """Rewrite both meta pages in place, as another program could: the last page in use
    becomes ``last_page`` (so the map LMDB must adopt is last_page + 1 pages)."""
    with open(path, "r+b") as f:
        for page in (0, 1):
            f.seek(page * 4096 + 136)
            f.write(struct.pack("=Q", last_page))


REWRITE_UNDER_HANDLE = """
    import os, struct, sys
    from zarrkit.errors import ZarrkitError
    from zarrkit.storage.lmdb import LMDBStore
    path, mode, last_page, map_size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    store = LMDBStore(path, read_only=mode == "r")
    assert store.get("zarr.json") == b"{}"
    # Another program rewrites both meta pages in place.
    with open(path, "r+b") as f:
        for page in (0, 1):
            f.seek(page * 4096 + 32)
            f.write(struct.pack("=Q", map_size))
            f.seek(page * 4096 + 136)
            f.write(struct.pack("=Q", last_page))
        if sys.argv[5] == "extend":  # sparse: the file has the pages it claims
            f.truncate((last_page + 1) * 4096)
    for action in (lambda: store.get("zarr.json"), lambda: store.set("b", b"x")):
        try:
            action()
            print("no error")
        except ZarrkitError as error:
            print(f"{type(error).__name__}: {error}")
        except Exception as error:
            print(f"raw {type(error).__module__}.{type(error).__name__}: {error}")
"""


@pytest.mark.parametrize(
    ("last_page", "map_size", "extend", "expected"),
    [
        # Claims 2^40 pages (4 PiB) it does not have: refused from the header.
        (1 << 40, 1 << 30, "no", ("CorruptStoreError:", "truncated")),
        # Has the pages (sparse) but declares a map no process can reserve.
        ((1 << 18) + 10, 1 << 60, "extend", ("StoreIOError:", "map")),
    ],
)
@pytest.mark.parametrize("mode", ["r+", "r"])
def test_lmdb_rewritten_under_open_handle_raises_zarrkit_error(
    tmp_path: Path, last_page: int, map_size: int, extend: str,
    expected: tuple[str, str], mode: str,
) -> None:
    # The map LMDB must adopt after the rewrite cannot be reserved: lmdb raised its own
    # MemoryError out of _adopt_map_size / _grow. Run in a child: the address space
    # reservation is the child's.
    path = tmp_path / "rewritten.mdb"
    make_lmdb(path)
    lines = run_child(
        REWRITE_UNDER_HANDLE, str(path), mode, str(last_page), str(map_size), extend
    ).strip().splitlines()
    kind, words = expected
    assert lines[0].startswith(kind), lines
    assert str(path) in lines[0] and words in lines[0], lines
    # The write that follows fails as a zarrkit error too (ReadOnlyError for mode "r").
    assert lines[1].startswith((kind, "StoreIOError:", "ReadOnlyError:")), lines


def test_lmdb_rewritten_file_is_refused_at_open(tmp_path: Path) -> None:
    # The same rewrite before an open: the file claims pages it does not have.
    path = tmp_path / "claims.mdb"
    make_lmdb(path)
    _rewrite_last_page(path, 1 << 40)
    line, _ = open_in_child("lmdb", path, "r+")
    assert line.startswith("CorruptStoreError:") and "truncated" in line, line


def test_lmdb_every_error_is_a_zarrkit_error(tmp_path: Path) -> None:
    # A FIFO where the database should be: refused without blocking, as a ZarrkitError.
    path = tmp_path / "fifo.mdb"
    os.mkfifo(path)
    line, _ = open_in_child("lmdb", path, "r")
    assert line.startswith("CorruptStoreError:") and "regular file" in line, line
    with pytest.raises(ZarrkitError):
        LMDBStore(tmp_path / "missing.mdb", read_only=True)
    with pytest.raises(StoreIOError):
        LMDBStore(tmp_path / "missing.mdb", read_only=True)


@pytest.mark.parametrize("mode", ["r", "r+"])
def test_sqlite_fifo_is_refused_without_blocking(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "fifo.sqlite"
    os.mkfifo(path)
    line, _ = open_in_child("sqlite", path, mode)
    assert line.startswith("CorruptStoreError:") and "regular file" in line, line
    assert str(path) in line
