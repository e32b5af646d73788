"""A store in a single LMDB database file (requires the ``lmdb`` package).

Keys are the UTF-8 bytes of the store keys in the environment's main database, values the
values: the layout of zarr-python 2's ``LMDBStore``. The environment is opened with
``subdir=False``: the data are the one file at ``path``, and LMDB keeps its lock file (the
reader table) beside it at ``<path>-lock``, outside the database, so no listing ever sees
it. (zarr-python 2 used LMDB's default, a directory holding ``data.mdb`` and ``lock.mdb``;
open such a directory's ``data.mdb`` to read one here, while no zarr-python 2 process
writes it: the two use different lock files.) The lock file must exist or be creatable,
for read-only handles too.

- LMDB forbids opening one environment twice in a process, so every handle on a file in
  the process shares one environment (reference-counted; the last :meth:`~LMDBStore.close`
  closes it). A read-only handle opens the environment writable when the files allow it
  (the handle still refuses every write), so that writable handles can share it; opening a
  writable handle while only a read-only environment is open raises StoreLockedError.
- Opening a handle clears what killed processes left: the reader slots of dead readers
  (``reader_check``), and a commit that a writer killed while committing wrote but did not
  publish (LMDB publishes it when a process next takes the writer lock: the open takes it
  with an empty write transaction, so the commit cannot surface later under this
  handle's reads).
- The map (LMDB's maximum database size) starts at ``map_size`` and doubles whenever a
  write fills it: the transaction is aborted, the map grown, the write run again. Another
  process's larger map is adopted when LMDB reports it (``MapResizedError``). A resize
  needs every transaction of the process closed, so reads and writes hold a shared lock
  and a resize takes it exclusively.
- Writes of a process take turns on a thread lock; between processes LMDB's own writer
  lock serialises them. Readers never wait for writers. Each read runs in its own short
  read transaction (at most ``max_readers`` at once across all processes).
- :meth:`~LMDBStore.set_many` is one write transaction (all or nothing);
  :meth:`~LMDBStore.set_if_not_exists` is ``put(overwrite=False)`` inside one;
  :meth:`~LMDBStore.get_many` is one read transaction; ``get_range`` copies only the
  range out of the memory map.
- Listings walk a cursor from the prefix (``set_range``); ``list_dir`` jumps over each
  deeper level with one seek. Keys that are not valid store keys (a database written by
  another program) are left out.
- LMDB limits keys to 511 bytes: a longer key is refused with InvalidKeyError on writes,
  and is simply missing on reads.
- ``sync`` (default: ``zarrkit.config.fsync`` at opening) makes each commit durable
  against power loss; without it a commit survives a crash of the program, and a power
  cut may lose the last transactions but leaves the database intact.

A file that is not an LMDB database raises :class:`~zarrkit.errors.CorruptStoreError`;
so does one too short for the pages its header says are in use (a truncated file): its
two meta pages are read with ``pread`` and checked before the file is mapped, since LMDB
itself would map it and die of SIGBUS on the first page past the end. Every other LMDB
failure (a map that cannot be resized because another program rewrote the file, say)
raises :class:`~zarrkit.errors.StoreIOError`; no ``lmdb`` exception leaves the store.
The map is LMDB's shared one (zero-copy reads, and the way processes see each other's
commits): the header is checked again whenever another process's larger map is adopted,
but a file truncated by a program that is not LMDB while a handle is open can still end
the process with SIGBUS. LMDB files are to be written by LMDB only.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "data.mdb")
>>> with LMDBStore(path) as store:
...     store.set_many({"a/.zarray": b"{}", "a/0": b"chunk"})
>>> with LMDBStore(path, read_only=True) as store:
...     store.list_dir("a/"), store.get_range("a/0", 1, 3)
((['.zarray', '0'], []), b'hun')
>>> sorted(os.listdir(os.path.dirname(path)))
['data.mdb', 'data.mdb-lock']
"""

from __future__ import annotations

import builtins
import errno
import os
import stat
import struct
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

import lmdb

from zarrkit.config import config
from zarrkit.errors import (
    CorruptStoreError,
    InvalidKeyError,
    StoreIOError,
    StoreLockedError,
)
from zarrkit.storage.base import Buffer, Store
from zarrkit.storage.directory import single_file_key_lock
from zarrkit.storage.keys import validate_key, validate_prefix
from zarrkit.storage.sqlite import contiguous

__all__ = ["DEFAULT_MAP_SIZE", "LMDBStore"]

T = TypeVar("T")

#: The initial map size: address space only (the file grows with the data), doubled
#: whenever a write fills it.
DEFAULT_MAP_SIZE = 1 << 30
_GROW_STEP = 1 << 20
#: Keys per read transaction of a listing.
_PAGE = 1000
#: Keys deleted per write transaction by delete_prefix.
_DELETE_BATCH = 10_000
#: LMDB's meta pages (lmdb/libraries/liblmdb/mdb.c, MDB_page + MDB_meta, 64-bit): a
#: 16-byte page header, then magic, version; the page size is the free DB's md_pad; then
#: the last page in use and the transaction id. Pages 0 and 1 are the two metas.
_META_MAGIC = 0xBEEFC0DE
_META_VERSION = 1
_META_FLAGS = struct.Struct("=H")  # mp_flags at offset 10
_META_HEADER = struct.Struct("=II")  # mm_magic, mm_version at offset 16
_META_PSIZE = struct.Struct("=I")  # mm_dbs[FREE_DBI].md_pad at offset 40
_META_TAIL = struct.Struct("=QQ")  # mm_last_pg, mm_txnid at offset 136
_META_BYTES = 152
_P_META = 0x08
#: LMDB errors that mean the file is no (readable) LMDB database.
_CORRUPT = (
    lmdb.InvalidError,
    lmdb.CorruptedError,
    lmdb.VersionMismatchError,
    lmdb.PageNotFoundError,
)


class _SharedLock:
    """Many holders in shared mode, or one in exclusive mode; a waiting exclusive holder
    keeps new shared ones out, so that a resize is never starved by readers."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._shared = 0
        self._exclusive = False
        self._waiting = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            while self._exclusive or self._waiting:
                self._cond.wait()
            self._shared += 1
        try:
            yield
        finally:
            with self._cond:
                self._shared -= 1
                if not self._shared:
                    self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._waiting += 1
            try:
                while self._exclusive or self._shared:
                    self._cond.wait()
            finally:
                self._waiting -= 1
            self._exclusive = True
        try:
            yield
        finally:
            with self._cond:
                self._exclusive = False
                self._cond.notify_all()


class _Environment:
    """One open LMDB environment, shared by every handle on its file in the process."""

    def __init__(self, env: lmdb.Environment, real_path: str, read_only: bool) -> None:
        self.env = env
        self.real_path = real_path
        self.read_only = read_only
        self.refs = 1
        self.pid = os.getpid()
        self.access = _SharedLock()  # shared: any transaction; exclusive: a resize
        self.write_lock = threading.Lock()
        self.max_key_size = env.max_key_size()

    def release(self) -> None:
        """Drop one handle's reference; the last one closes the environment."""
        with _registry_lock:
            self.refs -= 1
            if self.refs > 0:
                return
            if _registry.get(self.real_path) is self:
                del _registry[self.real_path]
            # Closed under the registry lock: an open racing with this close must not
            # find the file still open by an environment it can no longer see.
            if os.getpid() == self.pid:
                with self.access.exclusive():
                    self.env.close()


# Environments open in this process, by real path. Reentrant: a handle finalised by the
# garbage collector releases its reference from whatever code runs.
_registry: dict[str, _Environment] = {}
_registry_lock = threading.RLock()


def _reset_after_fork() -> None:
    # LMDB environments must not be used across fork: the child opens its own.
    global _registry_lock
    _registry.clear()
    _registry_lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def check_lmdb_file(path: str) -> None:
    """Raise CorruptStoreError unless the file at ``path`` (if it exists and is not
    empty) starts with two valid LMDB meta pages and is long enough for every page the
    newer of them says is in use. LMDB maps the file and reads those pages without
    checking, so that a truncated file kills the process with SIGBUS.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.mdb")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(b"not lmdb" * 1000)
    >>> check_lmdb_file(path)
    Traceback (most recent call last):
    ...
    zarrkit.errors.CorruptStoreError: ...t.mdb: not an LMDB database (no meta page magic)
    """
    try:
        # O_NONBLOCK: a FIFO standing at the path must not block the open.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return  # LMDB creates it (or reports it missing)
    except OSError as error:
        raise StoreIOError(error.errno or errno.EIO, f"cannot open {path}: {error}") from error
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CorruptStoreError(f"{path}: not a regular file, so not an LMDB database")
        if info.st_size == 0:
            return  # a new database: LMDB writes its metas
        first = os.pread(fd, _META_BYTES, 0)
        if len(first) < _META_BYTES:
            raise CorruptStoreError(
                f"{path}: not an LMDB database ({info.st_size} bytes, truncated)"
            )
        _check_meta(path, first)
        psize = _META_PSIZE.unpack_from(first, 40)[0]
        if psize < 512 or psize > (1 << 16) or psize & (psize - 1):
            raise CorruptStoreError(f"{path}: not an LMDB database (page size {psize})")
        second = os.pread(fd, _META_BYTES, psize)
        if len(second) < _META_BYTES:
            raise CorruptStoreError(
                f"{path}: truncated LMDB database ({info.st_size} bytes, less than its two "
                f"{psize}-byte meta pages)"
            )
        _check_meta(path, second)
        # The size is read after the metas: a writer in another process writes its pages
        # before the meta that claims them, so a meta read earlier never claims more than
        # a size read later shows, while the other order races with every commit.
        size = os.fstat(fd).st_size
        # Both metas are checked, as LMDB does: it reads the newer, and falls back to the
        # older one when asked to.
        for page, raw in enumerate((first, second)):
            last_page = _META_TAIL.unpack_from(raw, 136)[0]
            needed = (last_page + 1) * psize
            if needed > size:
                raise CorruptStoreError(
                    f"{path}: truncated LMDB database ({size} bytes; its meta page {page} "
                    f"uses pages up to {last_page}, {needed} bytes)"
                )
    except OSError as error:
        raise StoreIOError(error.errno or errno.EIO, f"cannot read {path}: {error}") from error
    finally:
        os.close(fd)


def _check_meta(path: str, raw: bytes) -> None:
    flags = _META_FLAGS.unpack_from(raw, 10)[0]
    magic, version = _META_HEADER.unpack_from(raw, 16)
    if magic != _META_MAGIC or not flags & _P_META:
        raise CorruptStoreError(f"{path}: not an LMDB database (no meta page magic)")
    if version != _META_VERSION:
        raise CorruptStoreError(f"{path}: LMDB data version {version}, not {_META_VERSION}")


def _lmdb_error(error: lmdb.Error, what: str) -> Exception:
    """The zarrkit error for an LMDB one."""
    if isinstance(error, _CORRUPT):
        return CorruptStoreError(f"{what}: not a valid LMDB database ({error})")
    if isinstance(error, lmdb.ReadersFullError):
        return StoreIOError(
            errno.EAGAIN, f"{what}: too many readers at once (raise max_readers): {error}"
        )
    if isinstance(error, lmdb.TxnFullError):
        return StoreIOError(errno.EFBIG, f"{what}: too much for one LMDB transaction: {error}")
    code = getattr(error, "code", None)
    number = code if isinstance(code, int) and 0 < code < 4096 else errno.EIO
    return StoreIOError(number, f"{what}: {error}")


class LMDBStore(Store):
    """Keys and values in the LMDB database file at ``path`` (created unless
    ``read_only``), with its lock file at ``<path>-lock``.

    ``map_size`` is the initial map size in bytes (it grows as needed), ``max_readers``
    the size of LMDB's reader table (read transactions open at once, over all processes),
    ``sync`` whether commits are flushed to disk (default ``zarrkit.config.fsync``). The
    first handle on a file in a process sets all three.

    The store is safe to use from many threads and processes at once; see the module
    documentation. Close it (or use ``with``) to release the environment.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.mdb")
    >>> store = LMDBStore(path)
    >>> store.set("g/zarr.json", b"{}"); store.get("g/zarr.json")
    b'{}'
    >>> store.close()
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        map_size: int = DEFAULT_MAP_SIZE,
        max_readers: int = 126,
        sync: bool | None = None,
    ) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self._options: dict[str, Any] = {
            "map_size": map_size, "max_readers": max_readers, "sync": sync,
        }
        self._real = os.path.realpath(self.path)
        self._closed = False
        self._environment = self._open(map_size, max_readers, config.fsync if sync is None
                                       else sync)

    def __repr__(self) -> str:
        return f"LMDBStore({str(self.path)!r})"

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the way to open the store, not the open environment: unpickling (in
        another process, say) opens the file again.

        >>> import os, pickle, tempfile
        >>> with LMDBStore(os.path.join(tempfile.mkdtemp(), "p.mdb")) as s:
        ...     s.set("k", b"v")
        ...     with pickle.loads(pickle.dumps(s)) as copy:
        ...         copy.get("k")
        b'v'
        """
        if self._closed:
            raise ValueError(f"cannot pickle closed {self!r}")
        return {"path": self.path, "read_only": self.read_only, **self._options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        options = dict(state)
        self.__init__(options.pop("path"), **options)  # type: ignore[misc]

    # --- environment ------------------------------------------------------------------------
    def _open(self, map_size: int, max_readers: int, sync: bool) -> _Environment:
        with _registry_lock:
            shared = _registry.get(self._real)
            if shared is not None and shared.pid == os.getpid() and shared.refs > 0:
                if shared.read_only and not self.read_only:
                    raise StoreLockedError(
                        errno.EAGAIN,
                        f"{self.path} is open read-only in this process, and LMDB cannot "
                        "open it twice: close those handles first, or open this one "
                        "read-only",
                    )
                shared.refs += 1
                self._recover(shared)
                return shared
            if self.read_only and not os.path.exists(self._real):
                raise StoreIOError(errno.ENOENT, f"cannot open {self!r}: no such file")
            check_lmdb_file(self._real)
            # A read-only handle opens the environment writable when the files allow it (the
            # store still refuses every write), so that it can recover what a killed
            # writer left (below), and so that writable handles can share it later.
            env = None
            if self.read_only and os.access(self._real, os.W_OK) and (
                    not os.path.exists(self._real + "-lock")
                    or os.access(self._real + "-lock", os.W_OK)):
                with suppress(lmdb.Error):
                    env = self._open_environment(map_size, max_readers, sync, writable=True)
            if env is None:
                try:
                    env = self._open_environment(map_size, max_readers, sync,
                                                 writable=not self.read_only)
                except lmdb.Error as error:
                    raise _lmdb_error(error, f"cannot open {self!r}") from error
            environment = _Environment(env, self._real, env.flags()["readonly"])
            try:
                self._recover(environment)
            except BaseException:
                # Unregistered, it would stay open: a second environment on the file in
                # this process breaks LMDB's locks.
                with suppress(lmdb.Error):
                    env.close()
                raise
            _registry[self._real] = environment
            return environment

    def _open_environment(self, map_size: int, max_readers: int, sync: bool, *,
                          writable: bool) -> lmdb.Environment:
        # Opening reads the map size from the file and then begins a transaction; another
        # process that grows the map in between makes that transaction fail with
        # MDB_MAP_RESIZED. Opening again reads the new size.
        attempts_left = 100
        while True:
            try:
                return lmdb.open(self._real, subdir=False, readonly=not writable,
                                 create=not self.read_only, lock=True, map_size=map_size,
                                 max_readers=max_readers, max_dbs=0, sync=sync,
                                 metasync=sync)
            except lmdb.MapResizedError:
                attempts_left -= 1
                if not attempts_left:
                    raise

    def _recover(self, environment: _Environment) -> None:
        """Clear what killed processes left in the environment, before this handle reads:
        the reader slots of dead processes (they pin old pages, and fill the reader table),
        and a commit that a writer killed while committing wrote to disk but did not
        publish. LMDB publishes such a commit only when a process next takes its writer
        lock, which could otherwise happen between this handle's read of a key and its
        write of it, making the write undo that commit. Taking the lock (an empty write
        transaction) publishes it now; it waits for a live writer's transaction to end."""
        if environment.read_only:
            return  # neither is possible through a read-only environment
        for _ in range(100):
            try:
                with environment.access.shared():
                    environment.env.reader_check()
                    with environment.write_lock, environment.env.begin(write=True):
                        return
            except lmdb.MapResizedError:
                self._adopt_map_size(environment)
            except lmdb.Error as error:
                raise _lmdb_error(error, f"cannot open {self!r}") from error
        raise StoreIOError(errno.EIO, f"cannot open {self!r}: the map keeps changing")

    def _env(self) -> _Environment:
        if self._closed:
            raise ValueError(f"I/O operation on closed {self!r}")
        return self._environment

    def _adopt_map_size(self, environment: _Environment) -> None:
        """Take up the larger map that another process has set."""
        with environment.access.exclusive():
            # The new size comes from the file: check that it has the pages it claims
            # before mapping them (a legitimate writer writes its pages before the meta
            # that claims them).
            check_lmdb_file(self._real)
            try:
                environment.env.set_mapsize(0)
            except lmdb.Error as error:
                # A file rewritten under the handle can declare a map this process
                # cannot reserve (lmdb.MemoryError).
                raise _lmdb_error(error, f"cannot adopt the new map size of {self!r}") \
                    from error

    def _grow(self, environment: _Environment, needed: int) -> None:
        with environment.access.exclusive():
            try:
                current = environment.env.info()["map_size"]
                target = max(2 * current, current + 2 * needed)
                target = -(-target // _GROW_STEP) * _GROW_STEP
                environment.env.set_mapsize(target)
            except lmdb.Error as error:
                raise _lmdb_error(error, f"cannot grow the map of {self!r}") from error

    def _read(self, action: str, work: Callable[[lmdb.Transaction], T]) -> T:
        """Run ``work`` in one read transaction (one snapshot of the database)."""
        environment = self._env()
        for _ in range(100):
            try:
                with environment.access.shared():
                    with environment.env.begin(buffers=True) as txn:
                        return work(txn)
            except lmdb.MapResizedError:
                self._adopt_map_size(environment)
            except lmdb.Error as error:
                raise _lmdb_error(error, f"cannot {action} in {self!r}") from error
        raise StoreIOError(errno.EIO, f"cannot {action} in {self!r}: the map keeps changing")

    def _write(self, action: str, work: Callable[[lmdb.Transaction], T], size: int = 0) -> T:
        """Run ``work`` in one write transaction: committed if it returns, aborted if
        anything fails; run again on a larger map when the map is full."""
        environment = self._env()
        with environment.write_lock:
            for _ in range(100):
                try:
                    with environment.access.shared():
                        txn = environment.env.begin(write=True)
                        try:
                            result = work(txn)
                            txn.commit()
                        except BaseException:
                            with suppress(lmdb.Error):  # a failed commit has aborted
                                txn.abort()
                            raise
                        return result
                except lmdb.MapFullError:
                    self._grow(environment, size)
                except lmdb.MapResizedError:
                    self._adopt_map_size(environment)
                except lmdb.Error as error:
                    raise _lmdb_error(error, f"cannot {action} in {self!r}") from error
        raise StoreIOError(errno.ENOSPC, f"cannot {action} in {self!r}: the map cannot grow")

    def _key_bytes(self, key: str) -> bytes | None:
        """The stored form of ``key``, or None if no such key can be stored."""
        try:
            raw = key.encode("utf-8")
        except UnicodeEncodeError:
            return None
        if len(raw) > self._environment.max_key_size:
            return None
        return raw

    # --- identity and locks -----------------------------------------------------------------
    @property
    def lock_identity(self) -> tuple[str, str]:
        """``("lmdb", real path)``: equal for every handle on the same database file.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "i.mdb")
        >>> with LMDBStore(path) as a, LMDBStore(path, read_only=True) as b:
        ...     a.lock_identity == b.lock_identity == ("lmdb", os.path.realpath(path))
        True
        """
        return ("lmdb", self._real)

    def key_lock(self, key: str) -> AbstractContextManager[None]:
        """A lock for read-modify-write of ``key``, shared by every handle on this file in
        the process and, with ``zarrkit.config.file_locks``, an OS lock that other
        processes respect too (its lock file lives in ``.zarrkit-tmp-<file name>`` beside
        the database, as a DirectoryStore's does).

        >>> import os, tempfile
        >>> with LMDBStore(os.path.join(tempfile.mkdtemp(), "k.mdb")) as s:
        ...     with s.key_lock("a/0"):
        ...         pass
        """
        return single_file_key_lock(self.lock_identity, key, self._real)

    # --- readable ---------------------------------------------------------------------------
    def _get(self, key: str) -> bytes | None:
        raw = self._key_bytes(key)
        if raw is None:
            return None

        def read(txn: lmdb.Transaction) -> bytes | None:
            value = txn.get(raw)
            return None if value is None else bytes(value)

        return self._read(f"read {key!r}", read)

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Return ``length`` bytes of ``key``'s value from ``start`` (to the end if None);
        a negative ``start`` counts from the end. Only the range is copied out of the
        memory map.

        >>> import os, tempfile
        >>> with LMDBStore(os.path.join(tempfile.mkdtemp(), "r.mdb")) as s:
        ...     s.set("k", b"0123456789")
        ...     s.get_range("k", 2, 3), s.get_range("k", -2), s.get_range("no", 0)
        (b'234', b'89', None)
        """
        validate_key(key)
        raw = self._key_bytes(key)
        if raw is None:
            return None

        def read(txn: lmdb.Transaction) -> bytes | None:
            value = txn.get(raw)
            if value is None:
                return None
            size = len(value)
            first = max(size + start, 0) if start < 0 else min(start, size)
            end = size if length is None else min(first + max(length, 0), size)
            return bytes(value[first:end]) if end > first else b""

        return self._read(f"read {key!r}", read)

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """Return the values of ``keys`` in order (``None`` for a missing key), read in one
        transaction.

        >>> import os, tempfile
        >>> with LMDBStore(os.path.join(tempfile.mkdtemp(), "m.mdb")) as s:
        ...     s.set_many({"a": b"1", "b": b"2"})
        ...     s.get_many(["b", "missing", "a"])
        [b'2', None, b'1']
        """
        raws = [self._key_bytes(validate_key(key)) for key in keys]
        if not raws:
            return []

        def read(txn: lmdb.Transaction) -> list[bytes | None]:
            values: list[bytes | None] = []
            for raw in raws:
                value = None if raw is None else txn.get(raw)
                values.append(None if value is None else bytes(value))
            return values

        return self._read("read many keys", read)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        raw = self._key_bytes(validate_key(key))
        if raw is None:
            return False
        return self._read(f"read {key!r}", lambda txn: txn.get(raw) is not None)

    # --- writable ---------------------------------------------------------------------------
    def _check_write(self, key: str, value: object) -> None:
        super()._check_write(key, value)
        try:
            raw = key.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidKeyError(f"invalid store key {key!r}: not encodable as UTF-8") from None
        limit = self._env().max_key_size
        if len(raw) > limit:
            raise InvalidKeyError(
                f"invalid store key {key[:40]!r}...: {len(raw)} bytes, longer than LMDB's "
                f"limit of {limit}"
            )

    def _put(self, txn: lmdb.Transaction, key: str, value: Buffer, overwrite: bool = True) -> bool:
        """Put one (checked) value in a write transaction; whether it was stored."""
        return bool(txn.put(key.encode("utf-8"), value, overwrite=overwrite))

    def _set(self, key: str, value: Buffer) -> None:
        data = contiguous(value)
        self._write(f"write {key!r}", lambda txn: self._put(txn, key, data), len(data))

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        """Store ``value`` under ``key`` unless a value is there; return whether it was
        stored. ``put(overwrite=False)`` in a write transaction: atomic among every
        handle, in every process.

        >>> import os, tempfile
        >>> with LMDBStore(os.path.join(tempfile.mkdtemp(), "n.mdb")) as s:
        ...     s.set_if_not_exists("k", b"a"), s.set_if_not_exists("k", b"b"), s.get("k")
        (True, False, b'a')
        """
        self._check_write(key, value)
        data = contiguous(value)
        return self._write(
            f"create {key!r}", lambda txn: self._put(txn, key, data, False), len(data)
        )

    def set_many(self, items: Mapping[str, Buffer] | Iterable[tuple[str, Buffer]]) -> None:
        """Store several values in one write transaction: every key and value is checked
        first, and a failure part-way aborts it, so that all or none are written.

        >>> import os, tempfile
        >>> with LMDBStore(os.path.join(tempfile.mkdtemp(), "b.mdb")) as s:
        ...     try:
        ...         s.set_many([("a", b"1"), ("b", "not bytes")])
        ...     except TypeError:
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
        size = sum(memoryview(data).nbytes + len(key) for key, data in rows)

        def write(txn: lmdb.Transaction) -> None:
            for key, data in rows:
                self._put(txn, key, data)

        self._write(f"write {len(rows)} keys", write, size)

    def _delete(self, key: str) -> None:
        raw = self._key_bytes(key)
        if raw is not None:
            self._write(f"delete {key!r}", lambda txn: txn.delete(raw))

    def delete_prefix(self, prefix: str) -> None:
        """Delete every key that starts with ``prefix`` (``""`` empties the store), in
        write transactions of up to 10,000 keys.

        >>> import os, tempfile
        >>> with LMDBStore(os.path.join(tempfile.mkdtemp(), "d.mdb")) as s:
        ...     s.set_many({"a/0": b"", "a/1": b"", "ab": b""})
        ...     s.delete_prefix("a/")
        ...     list(s.list())
        ['ab']
        """
        self._check_writable(prefix)
        validate_prefix(prefix)
        raw = self._prefix_bytes(prefix)
        if raw is None:
            return

        def delete_batch(txn: lmdb.Transaction) -> bool:
            cursor = txn.cursor()
            if not cursor.set_range(raw):
                return False
            for _ in range(_DELETE_BATCH):
                found = bytes(cursor.key())
                if not found or not found.startswith(raw):
                    return False
                if not cursor.delete():
                    return False
            return True

        while self._write(f"delete prefix {prefix!r}", delete_batch):
            pass

    # --- listable ---------------------------------------------------------------------------
    def _prefix_bytes(self, prefix: str) -> bytes | None:
        try:
            raw = prefix.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return raw if len(raw) <= self._env().max_key_size else None

    def _iter_keys(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Iterate, in sorted order, over the keys that start with ``prefix`` (read a page
        at a time, so no transaction stays open while the caller holds the iterator).

        >>> import os, tempfile
        >>> with LMDBStore(os.path.join(tempfile.mkdtemp(), "l.mdb")) as s:
        ...     s.set_many({"a/1": b"", "a/0": b"", "b": b""})
        ...     list(s.list_prefix("a/")), list(s.list())
        (['a/0', 'a/1'], ['a/0', 'a/1', 'b'])
        """
        validate_prefix(prefix)
        return self._scan(prefix)

    def _scan(self, prefix: str) -> Iterator[str]:
        raw = self._prefix_bytes(prefix)
        if raw is None:
            return
        after: bytes | None = None

        def page(txn: lmdb.Transaction) -> tuple[builtins.list[bytes], bool]:
            cursor = txn.cursor()
            found: builtins.list[bytes] = []
            if not cursor.set_range(raw if after is None else after):
                return found, True
            for key in cursor.iternext(keys=True, values=False):
                key = bytes(key)
                if not key.startswith(raw):
                    return found, True
                if key == after:
                    continue
                found.append(key)
                if len(found) >= _PAGE:
                    return found, False
            return found, True

        while True:
            keys, done = self._read(f"list {prefix!r}", page)
            for key in keys:
                name = _store_key(key)
                if name is not None:
                    yield name
            if done or not keys:
                return
            after = keys[-1]

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """Return ``(keys, prefixes)`` directly under ``prefix``, both sorted. Each deeper
        level costs one cursor seek, however many keys it holds.

        >>> import os, tempfile
        >>> with LMDBStore(os.path.join(tempfile.mkdtemp(), "ld.mdb")) as s:
        ...     s.set_many({"a/zarr.json": b"", "a/c/0/0": b"", "a/c/0/1": b"", "b": b""})
        ...     s.list_dir(""), s.list_dir("a/")
        ((['b'], ['a']), (['zarr.json'], ['c']))
        """
        validate_prefix(prefix)
        raw = self._prefix_bytes(prefix)
        if raw is None:
            return [], []

        def walk(txn: lmdb.Transaction) -> tuple[set[str], set[str]]:
            keys: set[str] = set()
            prefixes: set[str] = set()
            cursor = txn.cursor()
            positioned = cursor.set_range(raw)
            while positioned:
                key = bytes(cursor.key())
                if not key.startswith(raw):
                    break
                name = _store_key(key)
                rest = key[len(raw) :]
                cut = rest.find(b"/")
                if cut < 0:
                    if name is not None:
                        keys.add(rest.decode("utf-8"))
                    positioned = cursor.next()
                    continue
                head = rest[:cut]
                if name is not None:
                    prefixes.add(head.decode("utf-8"))
                    # "0" follows "/": the first key past every one under this level.
                    positioned = cursor.set_range(raw + head + b"0")
                else:
                    positioned = cursor.next()
            return keys, prefixes

        keys, prefixes = self._read(f"list {prefix!r}", walk)
        return sorted(keys), sorted(prefixes)

    # --- closing ----------------------------------------------------------------------------
    def close(self) -> None:
        """Release this handle; the last handle on the file in the process closes the
        environment. Calling it again does nothing.

        >>> import os, tempfile
        >>> s = LMDBStore(os.path.join(tempfile.mkdtemp(), "c.mdb"))
        >>> s.close(); s.close()
        """
        if self._closed:
            return
        self._closed = True
        environment: Any = getattr(self, "_environment", None)
        if environment is not None:
            environment.release()

    def __enter__(self) -> LMDBStore:
        return self

    def __del__(self) -> None:
        if not getattr(self, "_closed", True) and getattr(self, "_environment", None):
            self.close()


def _store_key(raw: bytes) -> str | None:
    """The store key stored as ``raw``, or None if it is none (another program's key)."""
    try:
        key = raw.decode("utf-8")
        return key if validate_key(key) == key else None
    except (UnicodeDecodeError, InvalidKeyError):
        return None
