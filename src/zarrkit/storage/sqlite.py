"""A store in a single SQLite database file.

The layout is the one zarr-python 2's ``SQLiteStore`` wrote (and the SQLiteStore proposal
for zarr-python 3 keeps): one table ``zarr(k TEXT PRIMARY KEY, v BLOB)``, a row per key, so
databases written by either open here and the other way round. Other tables in the file
are left alone.

- The database runs in WAL mode: readers never block the writer nor each other, across
  threads and processes. ``zarrkit.config.fsync`` chooses ``synchronous=FULL`` (durable
  against power loss) over ``NORMAL`` (durable against a crash of the program; a power
  cut may lose the last transactions, never corrupt the file).
- Each thread gets its own connection, so that reads run in parallel (SQLite releases the
  GIL while it works). Writes of the handles on one file in a process take a shared
  thread lock; between processes, SQLite's own file locks serialise them, and a writer
  waits up to ``timeout`` seconds for another to finish (then StoreLockedError).
- :meth:`SQLiteStore.set_many` is one transaction: every key and value is checked before
  it starts, and any failure rolls it back, so either all the values are written or
  none. :meth:`SQLiteStore.set_if_not_exists` is one ``INSERT OR IGNORE``, atomic among
  every connection to the file.
- :meth:`SQLiteStore.get_range` reads only the pages that hold the range, through SQLite's
  incremental blob I/O (``substr()`` would load the whole value into SQLite's memory
  first); :meth:`SQLiteStore.get_many` is one query per 500 keys, in one read transaction.
- Listings are range queries on the primary key (``k >= prefix AND k < next(prefix)``,
  never ``LIKE``, so keys holding ``%`` or ``_`` are safe), paged so that a listing never
  holds a statement open between the values it yields. ``list_dir`` skips over each
  deeper level with one index seek instead of visiting every key below it.
- Rows whose key is not a valid store key (a database written by another program) are left
  out of listings, as ZipStore leaves out unsafe member names.

A file that is not an SQLite database, or whose ``zarr`` is anything but a plain table
of the two columns ``k`` and ``v`` (a view, a virtual table, a table with generated
columns or with triggers: each runs code of the file's author on every read or write, which
can take endless time or memory), raises :class:`~zarrkit.errors.CorruptStoreError` when
it is opened, in every mode, before any row is read. A value larger than
``zarrkit.config.max_chunk_bytes`` raises :class:`~zarrkit.errors.ResourceLimitError`
before it is loaded. Other database failures raise :class:`~zarrkit.errors.StoreIOError` (or
:class:`~zarrkit.errors.StoreLockedError` when another process holds the database past the
timeout). Values are limited to SQLite's maximum length (1 GB by default).

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "data.sqlite")
>>> with SQLiteStore(path) as store:
...     store.set_many({"a/.zarray": b"{}", "a/0": b"chunk"})
>>> with SQLiteStore(path, read_only=True) as store:
...     store.list_dir("a/"), store.get_range("a/0", 1, 3)
((['.zarray', '0'], []), b'hun')
"""

from __future__ import annotations

import builtins
import errno
import os
import re
import sqlite3
import stat
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

from zarrkit.config import config
from zarrkit.errors import (
    CorruptStoreError,
    InvalidKeyError,
    ResourceLimitError,
    StoreIOError,
    StoreLockedError,
)
from zarrkit.storage.base import Buffer, Store
from zarrkit.storage.directory import single_file_key_lock
from zarrkit.storage.keys import validate_key, validate_prefix

__all__ = ["SQLiteStore"]

T = TypeVar("T")

#: The table and its columns, as zarr-python 2's SQLiteStore made them.
TABLE = "zarr"
_CREATE = f"CREATE TABLE IF NOT EXISTS {TABLE}(k TEXT PRIMARY KEY, v BLOB)"
#: Keys per ``IN (...)`` query of get_many: below SQLite's oldest parameter limit (999).
_MANY_CHUNK = 500
#: Keys fetched per statement by the listings.
_PAGE = 1000
#: The columns of the table (PRAGMA table_xinfo's name and hidden), in order.
_COLUMNS = (("k", 0), ("v", 0))
#: Most rows of sqlite_master about the table that the schema check reads: a plain table
#: has its own row and its indexes'; more means something is attached to it.
_SCHEMA_ROWS = 64

# Writers on one file in this process, by real path: they take turns here rather than in
# SQLite's busy handler, which sleeps in steps of up to 100 ms.
_write_locks: dict[str, threading.Lock] = {}
_write_locks_guard = threading.Lock()


def _reset_after_fork() -> None:
    # A lock held by another thread at fork time would never be released in the child.
    global _write_locks_guard
    _write_locks.clear()
    _write_locks_guard = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _write_lock(real_path: str) -> threading.Lock:
    with _write_locks_guard:
        lock = _write_locks.get(real_path)
        if lock is None:
            lock = _write_locks[real_path] = threading.Lock()
        return lock


def prefix_end(prefix: str) -> str | None:
    """The smallest string above every string that starts with ``prefix`` (``None`` when
    there is none: ``""``, or only the largest code point), in code point order, which is
    also the byte order of UTF-8 and so SQLite's ordering of ``TEXT`` keys.

    >>> prefix_end("a/b/")
    'a/b0'
    >>> prefix_end("") is None
    True
    """
    chars = list(prefix)
    while chars:
        code = ord(chars.pop()) + 1
        if code <= 0x10FFFF:
            if 0xD800 <= code <= 0xDFFF:
                code = 0xE000  # surrogates have no UTF-8 form: skip them
            return "".join(chars) + chr(code)
    return None


def encodable(key: str) -> bool:
    """Whether ``key`` has a UTF-8 form (a lone surrogate has none), as a database needs.

    >>> encodable("grüße"), encodable("bad\\udc80")
    (True, False)
    """
    if key.isascii():
        return True
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def contiguous(value: Buffer) -> Buffer:
    """``value`` as a C-contiguous buffer of bytes, without copying when it already is one
    (a database binds only those).

    >>> bytes(contiguous(memoryview(b"a-b-c")[::2]))
    b'abc'
    """
    if isinstance(value, bytes):
        return value
    view = memoryview(value)
    if not view.c_contiguous:
        return view.tobytes()
    if view.format != "B" or view.ndim != 1:
        return view.cast("B")
    return view


class SQLiteStore(Store):
    """Keys as rows of the table ``zarr(k TEXT PRIMARY KEY, v BLOB)`` in the SQLite
    database at ``path`` (created, with its table, unless ``read_only``).

    ``read_only`` opens the file with ``mode=ro``: the file must exist and hold the table.
    ``timeout`` is how long, in seconds, a write waits for another process's transaction
    to end. ``synchronous`` overrides SQLite's ``synchronous`` pragma (``"FULL"`` when
    ``zarrkit.config.fsync`` is set at opening, else ``"NORMAL"``).

    The store is safe to use from many threads and processes at once; see the module
    documentation. Close it (or use ``with``) to release its connections.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.db")
    >>> store = SQLiteStore(path)
    >>> store.set("g/zarr.json", b"{}"); store.get("g/zarr.json")
    b'{}'
    >>> store.close()
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        timeout: float = 30.0,
        synchronous: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.timeout = timeout
        if synchronous is None:
            synchronous = "FULL" if config.fsync else "NORMAL"
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA: {synchronous!r}")
        self.synchronous = synchronous.upper()
        self._real = os.path.realpath(self.path)
        self._write_lock = _write_lock(self._real)
        self._local = threading.local()
        # Every connection made, with its thread: close() closes them all, and the
        # connections of threads that have ended are closed as new ones are made.
        self._connections: list[tuple[weakref.ref[threading.Thread], sqlite3.Connection]] = []
        self._connections_lock = threading.Lock()
        self._pid = os.getpid()
        self._closed = False
        if read_only and not os.path.exists(self._real):
            raise StoreIOError(errno.ENOENT, f"cannot open {self!r}: no such file")
        _check_regular(self._real, self.path)
        try:
            self._initialise()
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the way to open the store, not its connections: unpickling (in another
        process, say) opens the file again.

        >>> import os, pickle, tempfile
        >>> with SQLiteStore(os.path.join(tempfile.mkdtemp(), "p.db")) as s:
        ...     s.set("k", b"v")
        ...     with pickle.loads(pickle.dumps(s)) as copy:
        ...         copy.get("k")
        b'v'
        """
        if self._closed:
            raise ValueError(f"cannot pickle closed {self!r}")
        return {"path": self.path, "read_only": self.read_only, "timeout": self.timeout,
                "synchronous": self.synchronous}

    def __setstate__(self, state: dict[str, Any]) -> None:
        options = dict(state)
        self.__init__(options.pop("path"), **options)  # type: ignore[misc]

    # --- connections ----------------------------------------------------------------------
    def _initialise(self) -> None:
        conn = self._conn()
        # The schema is checked before anything touches the table: a view, a generated
        # column or a trigger runs the file author's SQL, which can take endless time
        # (a recursive CTE) or memory (a 1 GB value computed from a 12 KB file).
        exists = self._run("open", lambda: self._check_schema(conn))
        if self.read_only:
            if not exists:
                raise CorruptStoreError(
                    f"{self.path} is an SQLite database without a {TABLE!r} table: "
                    "not a Zarr store"
                )
            return

        def create() -> None:
            with self._write_lock:
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(_CREATE)
                # Another process may have made the table between the check and here.
                self._check_schema(conn)

        self._run("open", create)

    def _check_schema(self, conn: sqlite3.Connection) -> bool:
        """Whether the table exists; CorruptStoreError unless it is a plain table of the
        expected columns with no triggers. Reads only the schema, a bounded number of rows."""
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master "
            "WHERE name = ? COLLATE NOCASE OR tbl_name = ? COLLATE NOCASE LIMIT ?",
            (TABLE, TABLE, _SCHEMA_ROWS + 1),
        ).fetchall()
        if not rows:
            return False

        def refuse(why: str) -> CorruptStoreError:
            return CorruptStoreError(
                f"{self.path}: the {TABLE!r} table of this SQLite database {why}: "
                "not a Zarr store zarrkit will read"
            )

        if len(rows) > _SCHEMA_ROWS:
            raise refuse(f"has more than {_SCHEMA_ROWS} schema objects attached")
        kinds = {str(kind) for kind, _, _ in rows}
        if "view" in kinds:
            raise refuse("is a view")
        if "trigger" in kinds:
            raise refuse("has triggers")
        tables = [(name, sql) for kind, name, sql in rows if kind == "table"]
        if len(tables) != 1:
            raise refuse("is no table")
        sql = str(tables[0][1] or "")
        if sql.lstrip().upper().startswith("CREATE VIRTUAL"):
            raise refuse("is a virtual table")
        # CHECK constraints and explicit indexes evaluate expressions on every write (an
        # index on zeroblob(1e9) writes a GB per row); zarr-python makes neither.
        if re.search(r"\bCHECK\b", sql, re.IGNORECASE):
            raise refuse("has CHECK constraints")
        if any(kind == "index" and text is not None for kind, _, text in rows):
            raise refuse("has explicitly created indexes")
        columns = conn.execute(f"PRAGMA table_xinfo({TABLE})").fetchmany(len(_COLUMNS) + 1)
        found = tuple((str(column[1]), int(column[6])) for column in columns)
        if any(hidden in (2, 3) for _, hidden in found):
            raise refuse("has generated columns")
        if found != _COLUMNS:
            names = ", ".join(name for name, _ in found[: len(_COLUMNS)])
            raise refuse(f"has the columns ({names}{', ...' if len(found) > 2 else ''}), "
                         "not (k, v)")
        return True

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            target, uri = Path(self._real).as_uri() + "?mode=ro", True
        else:
            target, uri = self._real, False
        try:
            conn = sqlite3.connect(
                target,
                timeout=self.timeout,
                isolation_level=None,  # autocommit: transactions are begun explicitly
                check_same_thread=False,  # close() may run on any thread
                uri=uri,
            )
        except sqlite3.Error as error:
            raise self._error(error, "open") from error
        try:
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
        except sqlite3.Error as error:
            conn.close()
            raise self._error(error, "open") from error
        return conn

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection, made on first use."""
        if self._closed:
            raise ValueError(f"I/O operation on closed {self!r}")
        if os.getpid() != self._pid:
            # A forked child must not touch its parent's connections (closing one could
            # checkpoint and remove the WAL under the parent): it drops them unclosed.
            self._pid = os.getpid()
            self._local = threading.local()
            self._connections = []
            self._connections_lock = threading.Lock()
            self._write_lock = _write_lock(self._real)
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        conn = self._connect()
        ended: list[sqlite3.Connection] = []
        with self._connections_lock:
            if self._closed:
                conn.close()
                raise ValueError(f"I/O operation on closed {self!r}")
            alive = []
            for thread_ref, other in self._connections:
                thread = thread_ref()
                if thread is None or not thread.is_alive():
                    ended.append(other)
                else:
                    alive.append((thread_ref, other))
            alive.append((weakref.ref(threading.current_thread()), conn))
            self._connections = alive
        for other in ended:
            other.close()
        self._local.conn = conn
        return conn

    def _error(self, error: sqlite3.Error, action: str) -> Exception:
        """The zarrkit error for an SQLite one."""
        code = getattr(error, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        message = f"cannot {action} in {self!r}: {error}"
        if primary in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
            return CorruptStoreError(f"{self.path} is not a valid SQLite database: {error}")
        if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return StoreLockedError(
                errno.EAGAIN,
                f"{message} (another connection held the database past the "
                f"{self.timeout} s timeout)",
            )
        number = {
            sqlite3.SQLITE_FULL: errno.ENOSPC,
            sqlite3.SQLITE_TOOBIG: errno.EFBIG,
            sqlite3.SQLITE_READONLY: errno.EACCES,
            sqlite3.SQLITE_PERM: errno.EACCES,
            sqlite3.SQLITE_CANTOPEN: errno.ENOENT if not os.path.exists(self._real)
            else errno.EACCES,
            sqlite3.SQLITE_NOMEM: errno.ENOMEM,
        }.get(primary if primary is not None else -1, errno.EIO)
        return StoreIOError(number, message)

    def _run(self, action: str, work: Callable[[], T]) -> T:
        """Run ``work``, turning SQLite's errors into zarrkit's."""
        try:
            return work()
        except sqlite3.Error as error:
            raise self._error(error, action) from error

    def _read(self, action: str, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in one read transaction (one snapshot of the database)."""
        conn = self._conn()

        def transaction() -> T:
            conn.execute("BEGIN")
            try:
                return work(conn)
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

        return self._run(action, transaction)

    def _write(self, action: str, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in one write transaction: committed if it returns, rolled back if
        anything fails."""
        conn = self._conn()

        def transaction() -> T:
            # IMMEDIATE takes the write lock at once: a deferred transaction that first
            # reads could not wait for it when it finally writes.
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result

        with self._write_lock:
            return self._run(action, transaction)

    def _write_one(self, action: str, sql: str, params: tuple[object, ...]) -> int:
        """Run one writing statement (atomic by itself); return the rows it changed."""
        conn = self._conn()
        with self._write_lock:
            return self._run(action, lambda: conn.execute(sql, params).rowcount)

    # --- identity and locks -----------------------------------------------------------------
    @property
    def lock_identity(self) -> tuple[str, str]:
        """``("sqlite", real path)``: equal for every handle on the same database file.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "i.db")
        >>> with SQLiteStore(path) as a, SQLiteStore(path, read_only=True) as b:
        ...     a.lock_identity == b.lock_identity == ("sqlite", os.path.realpath(path))
        True
        """
        return ("sqlite", self._real)

    def key_lock(self, key: str) -> AbstractContextManager[None]:
        """A lock for read-modify-write of ``key``, shared by every handle on this file in
        the process and, with ``zarrkit.config.file_locks``, an OS lock that other
        processes respect too (its lock file lives in ``.zarrkit-tmp-<file name>`` beside
        the database, as a DirectoryStore's does).

        >>> import os, tempfile
        >>> with SQLiteStore(os.path.join(tempfile.mkdtemp(), "k.db")) as s:
        ...     with s.key_lock("a/0"):
        ...         pass
        """
        return single_file_key_lock(self.lock_identity, key, self._real)

    # --- readable ---------------------------------------------------------------------------
    def _get(self, key: str) -> bytes | None:
        if not encodable(key):
            return None
        conn = self._conn()
        limit = config.max_chunk_bytes
        row = self._run(
            f"read {key!r}",
            lambda: conn.execute(_BOUNDED_SELECT + " WHERE k = ?", (limit, key)).fetchone(),
        )
        return None if row is None else self._bounded(key, row[1], row[2], limit)

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Return ``length`` bytes of ``key``'s value from ``start`` (to the end if None);
        a negative ``start`` counts from the end. Only the database pages holding the
        range are read.

        >>> import os, tempfile
        >>> with SQLiteStore(os.path.join(tempfile.mkdtemp(), "r.db")) as s:
        ...     s.set("k", b"0123456789")
        ...     s.get_range("k", 2, 3), s.get_range("k", -2), s.get_range("no", 0)
        (b'234', b'89', None)
        """
        validate_key(key)
        if not encodable(key):
            return None

        def read(conn: sqlite3.Connection) -> bytes | None:
            row = conn.execute(
                f"SELECT rowid, length(v), typeof(v) FROM {TABLE} WHERE k = ?", (key,)
            ).fetchone()
            if row is None:
                return None
            rowid, size, kind = row
            if kind not in ("blob", "text"):
                value = conn.execute(
                    f"SELECT v FROM {TABLE} WHERE rowid = ?", (rowid,)
                ).fetchone()[0]
                return _slice(_as_bytes(value), start, length)
            if kind == "text":  # length() counts characters there; the blob API, bytes
                size = conn.execute(
                    f"SELECT length(CAST(v AS BLOB)) FROM {TABLE} WHERE rowid = ?", (rowid,)
                ).fetchone()[0]
            first = max(size + start, 0) if start < 0 else min(start, size)
            end = size if length is None else min(first + max(length, 0), size)
            if end <= first:
                return b""
            if end - first > config.max_chunk_bytes:
                raise self._too_large(key, end - first)
            with conn.blobopen(TABLE, "v", rowid, readonly=True) as blob:
                blob.seek(first)
                return blob.read(end - first)

        return self._read(f"read {key!r}", read)

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """Return the values of ``keys`` in order (``None`` for a missing key), read in one
        transaction with one query per 500 distinct keys.

        >>> import os, tempfile
        >>> with SQLiteStore(os.path.join(tempfile.mkdtemp(), "m.db")) as s:
        ...     s.set_many({"a": b"1", "b": b"2"})
        ...     s.get_many(["b", "missing", "a"])
        [b'2', None, b'1']
        """
        for key in keys:
            validate_key(key)
        wanted = list(dict.fromkeys(key for key in keys if encodable(key)))
        if not wanted:
            return [None] * len(keys)

        def read(conn: sqlite3.Connection) -> dict[str, bytes]:
            found: dict[str, bytes] = {}
            limit = config.max_chunk_bytes
            for i in range(0, len(wanted), _MANY_CHUNK):
                part = wanted[i : i + _MANY_CHUNK]
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    f"{_BOUNDED_SELECT} WHERE k IN ({marks})", (limit, *part)
                )
                for k, value, size in rows:
                    found[k] = self._bounded(k, value, size, limit)
            return found

        found = self._read("read many keys", read)
        return [found.get(key) for key in keys]

    def _bounded(self, key: str, value: object, size: int | None, limit: int) -> bytes:
        """A value of the bounded select, or ResourceLimitError when it was too large to
        load (``size`` counts characters for text: a text value is checked again in bytes)."""
        if size is not None and size > limit:
            raise self._too_large(key, size)
        data = _as_bytes(value)
        if len(data) > limit:
            raise self._too_large(key, len(data))
        return data

    def _too_large(self, key: str, size: int) -> ResourceLimitError:
        return ResourceLimitError(
            f"{self.path}: the value of {key!r} holds {size} bytes, more than "
            f"zarrkit.config.max_chunk_bytes ({config.max_chunk_bytes})"
        )

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        validate_key(key)
        if not encodable(key):
            return False
        conn = self._conn()
        row = self._run(
            f"read {key!r}",
            lambda: conn.execute(f"SELECT 1 FROM {TABLE} WHERE k = ?", (key,)).fetchone(),
        )
        return row is not None

    # --- writable ---------------------------------------------------------------------------
    def _check_write(self, key: str, value: object) -> None:
        super()._check_write(key, value)
        if not encodable(key):
            raise InvalidKeyError(f"invalid store key {key!r}: not encodable as UTF-8")

    def _set(self, key: str, value: Buffer) -> None:
        self._write_one(
            f"write {key!r}",
            f"INSERT OR REPLACE INTO {TABLE}(k, v) VALUES (?, ?)",
            (key, contiguous(value)),
        )

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        """Store ``value`` under ``key`` unless a value is there; return whether it was
        stored. One ``INSERT OR IGNORE``: atomic among every connection, in every process.

        >>> import os, tempfile
        >>> with SQLiteStore(os.path.join(tempfile.mkdtemp(), "n.db")) as s:
        ...     s.set_if_not_exists("k", b"a"), s.set_if_not_exists("k", b"b"), s.get("k")
        (True, False, b'a')
        """
        self._check_write(key, value)
        changed = self._write_one(
            f"create {key!r}",
            f"INSERT OR IGNORE INTO {TABLE}(k, v) VALUES (?, ?)",
            (key, contiguous(value)),
        )
        return changed == 1

    def set_many(self, items: Mapping[str, Buffer] | Iterable[tuple[str, Buffer]]) -> None:
        """Store several values in one transaction: every key and value is checked first,
        and a failure part-way rolls everything back, so that all or none are written.

        >>> import os, tempfile
        >>> with SQLiteStore(os.path.join(tempfile.mkdtemp(), "b.db")) as s:
        ...     try:
        ...         s.set_many([("a", b"1"), ("../bad", b"2")])
        ...     except ValueError:
        ...         pass
        ...     list(s.list())
        []
        """
        pairs = list(items.items()) if isinstance(items, Mapping) else list(items)
        self._check_writable(pairs[0][0] if pairs else "")
        for key, _ in pairs:
            validate_key(key)
        for key, value in pairs:
            self._check_write(key, value)
        if not pairs:
            return
        rows = [(key, contiguous(value)) for key, value in pairs]

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(f"INSERT OR REPLACE INTO {TABLE}(k, v) VALUES (?, ?)", rows)

        self._write(f"write {len(rows)} keys", write)

    def _delete(self, key: str) -> None:
        if encodable(key):
            self._write_one(f"delete {key!r}", f"DELETE FROM {TABLE} WHERE k = ?", (key,))

    def delete_prefix(self, prefix: str) -> None:
        """Delete every key that starts with ``prefix`` (``""`` empties the store), in one
        statement.

        >>> import os, tempfile
        >>> with SQLiteStore(os.path.join(tempfile.mkdtemp(), "d.db")) as s:
        ...     s.set_many({"a/0": b"", "a/1": b"", "ab": b""})
        ...     s.delete_prefix("a/")
        ...     list(s.list())
        ['ab']
        """
        self._check_writable(prefix)
        validate_prefix(prefix)
        if not encodable(prefix):
            return
        where, params = _range_condition(prefix, prefix, True)
        self._write_one(f"delete prefix {prefix!r}", f"DELETE FROM {TABLE}{where}", params)

    # --- listable ---------------------------------------------------------------------------
    def _page(
        self, prefix: str, lower: str, inclusive: bool, limit: int
    ) -> builtins.list[str]:
        """Up to ``limit`` keys from ``lower`` on that start with ``prefix``, in order."""
        where, params = _range_condition(prefix, lower, inclusive)
        conn = self._conn()
        rows = self._run(
            f"list {prefix!r}",
            lambda: conn.execute(
                f"SELECT k FROM {TABLE}{where} ORDER BY k LIMIT ?", (*params, limit)
            ).fetchall(),
        )
        return [row[0] for row in rows]

    def _iter_keys(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Iterate, in sorted order, over the keys that start with ``prefix`` (fetched a
        page at a time, so no statement stays open while the caller holds the iterator).

        >>> import os, tempfile
        >>> with SQLiteStore(os.path.join(tempfile.mkdtemp(), "l.db")) as s:
        ...     s.set_many({"a/1": b"", "a/0": b"", "a%": b"", "b": b""})
        ...     list(s.list_prefix("a/")), list(s.list())
        (['a/0', 'a/1'], ['a%', 'a/0', 'a/1', 'b'])
        """
        validate_prefix(prefix)
        return self._scan(prefix)

    def _scan(self, prefix: str) -> Iterator[str]:
        if not encodable(prefix):
            return
        lower, inclusive = prefix, True
        while True:
            page = self._page(prefix, lower, inclusive, _PAGE)
            for key in page:
                if _is_store_key(key):
                    yield key
            if len(page) < _PAGE:
                return
            lower, inclusive = page[-1], False

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """Return ``(keys, prefixes)`` directly under ``prefix``, both sorted. Each deeper
        level costs one index seek, however many keys it holds.

        >>> import os, tempfile
        >>> with SQLiteStore(os.path.join(tempfile.mkdtemp(), "ld.db")) as s:
        ...     s.set_many({"a/zarr.json": b"", "a/c/0/0": b"", "a/c/0/1": b"", "b": b""})
        ...     s.list_dir(""), s.list_dir("a/")
        ((['b'], ['a']), (['zarr.json'], ['c']))
        """
        validate_prefix(prefix)
        keys: builtins.list[str] = []
        prefixes: builtins.list[str] = []
        if not encodable(prefix):
            return keys, prefixes
        lower, inclusive, limit = prefix, True, 16
        while True:
            page = self._page(prefix, lower, inclusive, limit)
            jumped = False
            for key in page:
                if not _is_store_key(key):
                    continue
                head, sep, _ = key[len(prefix) :].partition("/")
                if sep:
                    prefixes.append(head)
                    # "0" follows "/": the first key past every one under this level.
                    lower, inclusive, limit = f"{prefix}{head}0", True, 16
                    jumped = True
                    break
                keys.append(head)
            if jumped:
                continue
            if len(page) < limit:
                break
            lower, inclusive, limit = page[-1], False, min(limit * 4, _PAGE)
        # Key order is not name order ("b-c/x" < "b/x" but "b" < "b-c"): sort the names.
        return sorted(keys), sorted(prefixes)

    # --- closing ----------------------------------------------------------------------------
    def close(self) -> None:
        """Close every connection of this handle (the last one on the file checkpoints the
        WAL into the database). Calling it again does nothing.

        >>> import os, tempfile
        >>> s = SQLiteStore(os.path.join(tempfile.mkdtemp(), "c.db"))
        >>> s.close(); s.close()
        """
        with self._connections_lock:
            if self._closed:
                return
            self._closed = True
            connections, self._connections = self._connections, []
        self._local = threading.local()
        if os.getpid() != self._pid:
            return  # the parent's connections: not this process's to close
        for _, conn in connections:
            conn.close()

    def __enter__(self) -> SQLiteStore:
        return self


#: The key, the value unless it is longer than the bound parameter, and its length.
#: length() of a blob reads only the record header, and CASE evaluates one branch, so a
#: value over the bound is never loaded.
_BOUNDED_SELECT = (
    f"SELECT k, CASE WHEN length(v) > ? THEN NULL ELSE v END, length(v) FROM {TABLE}"
)


def _check_regular(real: str, path: Path) -> None:
    """CorruptStoreError if something other than a regular file stands at ``real``: SQLite
    would block forever opening a FIFO, or read a device."""
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise StoreIOError(error.errno or errno.EIO, f"cannot open {path}: {error}") from error
    if not stat.S_ISREG(mode):
        raise CorruptStoreError(f"{path}: not a regular file, so not an SQLite database")


def _as_bytes(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):  # a TEXT value written by another program
        return value.encode("utf-8", "surrogatepass")
    if value is None:
        return b""
    raise CorruptStoreError(f"SQLite store value of type {type(value).__name__}")


def _slice(value: bytes, start: int, length: int | None) -> bytes:
    if start < 0:
        start = max(len(value) + start, 0)
    return value[start : None if length is None else start + max(length, 0)]


def _is_store_key(key: object) -> bool:
    try:
        return isinstance(key, str) and validate_key(key) == key
    except InvalidKeyError:
        return False


def _range_condition(prefix: str, lower: str, inclusive: bool) -> tuple[str, tuple[str, ...]]:
    """A ``WHERE`` clause for the keys from ``lower`` on that start with ``prefix``."""
    clauses: builtins.list[str] = []
    params: builtins.list[str] = []
    if lower or not inclusive:
        clauses.append("k >= ?" if inclusive else "k > ?")
        params.append(lower)
    end = prefix_end(prefix)
    if end is not None:
        clauses.append("k < ?")
        params.append(end)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)
