"""A store in a single ZIP archive.

Reading accepts any archive a Zarr tool is likely to produce: stored, deflated, bzip2 and
LZMA members, ZIP64, data prepended to the archive (self-extracting style), and several
members with the same name (the last one in the central directory wins, as in Python's
``zipfile`` and in zarr-python). Directory members are ignored, and so is every member whose
name is not a valid store key (``..``, absolute paths, backslashes...): a crafted archive
can never make this store hand out a key that escapes a directory when copied elsewhere.
A damaged archive raises :class:`CorruptZipError` (a ``CorruptStoreError`` and a
``zipfile.BadZipFile``), an encrypted member or an unknown compression method
``UnsupportedOperationError``; sizes declared in headers are checked against the file
before anything is allocated for them.

Writing is append-only. Each value becomes a new STORED (uncompressed) member whose data
start at a file offset that is a multiple of 8, so that a reader can memory-map a chunk and
view it as a numpy array without copying (:meth:`ZipStore.map_value`). Setting a key that
already exists appends another member with the same name; the newest one wins on every
later read, by this store, by ``zipfile`` and by zarr-python, but the old bytes stay in the
file. Deleting is not possible. The central directory is written by :meth:`ZipStore.close`
(or at the end of a ``with`` block).

Appending never makes the earlier archive unreadable: new members go after the end of the
file, past the old central directory, which stays in place (as dead space once a new one
is written) so that a writer killed at any moment leaves the old archive whole. Opening an
archive that a writer did not close (no valid end record at the end of the file) recovers
it: the last valid central directory in the file, plus every complete member written after
it, found through the local headers (each of this store's members carries its sizes and
CRC there); a torn or corrupt member ends the scan. :attr:`ZipStore.recovered` tells; an
archive recovered in mode ``"a"`` gets a complete central directory on close.

All writable stores on one file in a process share one archive state (descriptor, index,
write position), so that threads opening their own handles never overwrite each other;
each close writes a complete central directory, the last one releases the file. Across
processes, a writable store holds an exclusive OS lock on the file: a second writer gets
:class:`~zarrkit.errors.StoreLockedError` at once. Readers take no lock.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "data.zip")
>>> with ZipStore(path, mode="w") as store:
...     store.set("a/.zarray", b"{}")
...     store.set("a/0", b"chunk")
>>> with ZipStore(path) as store:
...     store.list_dir("a/")
(['.zarray', '0'], [])
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import functools
import mmap
import os
import shutil
import struct
import tempfile
import threading
import time
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal
from zipfile import BadZipFile

from zarrkit.config import config
from zarrkit.errors import (
    ResourceLimitError,
    StoreIOError,
    StoreLockedError,
    UnsupportedOperationError,
)
from zarrkit.storage import zip_format
from zarrkit.storage.base import Buffer, Store, ValueRange
from zarrkit.storage.keys import validate_key, validate_prefix
from zarrkit.storage.zip_format import (
    DEFLATED,
    EOCD,
    EOCD64,
    EOCD64_SIG,
    EOCD_SIG,
    EXTRA_HEADER,
    FLAG_ENCRYPTED,
    FLAG_UTF8,
    HAS_PREAD,
    LOCAL,
    LOCAL_SIG,
    LOCATOR64,
    LOCATOR64_SIG,
    MADE_BY_UNIX,
    MAX_IO,
    O_BINARY,
    READ_BLOCK,
    SATURATED,
    SMALL_VALUE,
    STORED,
    VERSION,
    VERSION_ZIP64,
    ZIP64_EXTRA_ID,
    ArchiveReader,
    CorruptZipError,
    Member,
    align_padding,
    central_record,
    decompress,
    dos_datetime,
    pread_exact,
    pwrite_all,
)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["BadZipFile", "CorruptZipError", "ZipStore"]

# --- shared archive state --------------------------------------------------------------
class _Archive:
    """One open archive file: descriptor, index and write position. Every writable
    ZipStore on the same file in a process shares one (so their appends never overlap);
    a read-only store has its own."""

    def __init__(self, path: Path, fd: int, identity: tuple[int, int], writable: bool) -> None:
        self.path = path
        self.fd = fd
        self.identity = identity
        self.writable = writable  # then it sits in the registry, shared
        self.locked = False  # holds the OS lock on the file
        self.pid = os.getpid()  # a forked child shares the lock and must not release it
        self.refs = 1
        self.index: dict[str, Member] = {}
        self.sorted_keys: list[str] | None = None
        self.index_lock = threading.Lock()  # guards the index and the sorted-key cache
        self.write_lock = threading.Lock()  # serialises appends and central directories
        # Central directory records of the archive as found on disk, re-emitted verbatim in
        # append mode so that members this store hides (directories, unsafe names,
        # shadowed duplicates) survive.
        self.old_central = b""
        self.old_count = 0
        self.comment = b""
        self.new_central: list[bytes] = []
        self.concat = 0  # bytes before the archive proper
        self.data_end = 0  # member data lie below this offset
        self.write_pos = 0
        self.dirty = False
        self.recovered = False

    def load(self, writable: bool) -> None:
        layout = ArchiveReader(self.fd, self.path, os.fstat(self.fd).st_size).read()
        self.index = layout.index
        self.concat = layout.concat
        # An archive comment is kept, unless it holds a record signature: written after
        # our end record, a reader searching from the end would find that one instead.
        self.comment = b"" if any(
            struct.pack("<I", sig) in layout.comment
            for sig in (EOCD_SIG, EOCD64_SIG, LOCATOR64_SIG)) else layout.comment
        self.data_end = layout.data_end
        self.write_pos = layout.end
        self.recovered = layout.recovered
        if writable:
            self.old_central, self.old_count = layout.central, layout.count
            self.new_central = layout.recovered_records
            if layout.recovered:
                # What follows the last intact member is a torn one: drop it, and give
                # the archive a complete central directory on close.
                os.ftruncate(self.fd, layout.end)
                self.dirty = True

    def write_central_directory(self) -> None:
        """Write a central directory of every member at the write position. Later appends
        go after it, so the archive stays valid whatever happens to them."""
        start = self.write_pos
        central = b"".join([self.old_central, *self.new_central])
        count = self.old_count + len(self.new_central)
        archive_start = start - self.concat
        tail = bytearray(central)
        if (
            count >= zip_format.ZIP64_COUNT_LIMIT
            or archive_start >= zip_format.ZIP64_LIMIT
            or len(central) >= zip_format.ZIP64_LIMIT
        ):
            eocd64_offset = archive_start + len(central)
            tail += EOCD64.pack(
                EOCD64_SIG, EOCD64.size - 12, MADE_BY_UNIX | VERSION_ZIP64,
                VERSION_ZIP64, 0, 0, count, count, len(central), archive_start,
            )
            tail += LOCATOR64.pack(LOCATOR64_SIG, 0, eocd64_offset, 1)
        tail += EOCD.pack(
            EOCD_SIG, 0, 0, min(count, 0xFFFF), min(count, 0xFFFF),
            min(len(central), SATURATED), min(archive_start, SATURATED), len(self.comment),
        )
        tail += self.comment
        try:
            pwrite_all(self.fd, tail, start)
            os.ftruncate(self.fd, start + len(tail))
            if config.fsync:
                os.fsync(self.fd)
        except OSError as error:
            # A refused write (disk full, file too large) leaves the file as it was, so a
            # later flush or close can try again, and no earlier directory is shadowed.
            _truncate_quietly(self.fd, start)
            raise StoreIOError(error.errno, f"cannot write the central directory of "
                                            f"{self.path}: {error}") from error
        self.write_pos = start + len(tail)
        self.dirty = False

    def release(self) -> None:
        """Drop one handle's reference; the last one unlocks and closes the file."""
        with _registry_lock:
            self.refs -= 1
            if self.refs > 0 or self.fd < 0:
                return
            # Unlocked and closed under the registry lock: an open racing with this close
            # must not find the file still locked by a state it cannot see any more.
            if self.writable and _registry.get(self.identity) is self:
                del _registry[self.identity]
            if self.locked and fcntl is not None and os.getpid() == self.pid:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            fd, self.fd = self.fd, -1
            os.close(fd)


# Writable archives open in this process, by (st_dev, st_ino). Reentrant: a ZipStore
# finalised by the garbage collector releases its reference from whatever code runs.
_registry: dict[tuple[int, int], _Archive] = {}
_registry_lock = threading.RLock()


def _reset_after_fork() -> None:
    # The child is another process: it must take the OS lock itself, not reuse the
    # parent's states (whose lock may be held by a thread that no longer exists).
    global _registry_lock
    _registry.clear()
    _registry_lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _lock_exclusive(fd: int, path: Path) -> bool:
    """Take the archive's exclusive OS lock without waiting; return whether the platform
    and file system have one."""
    if fcntl is None:  # pragma: no cover - Windows
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise StoreLockedError(
            f"{path} is open for writing in another process (it holds the archive's lock); "
            "close it there, or open this one with mode='r'"
        ) from None
    except OSError as error:
        if error.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
            return False  # a file system without locks: write unguarded, as before
        raise
    return True


def _open_archive(path: Path, mode: str) -> _Archive:
    """The archive state for a new handle: its own for a reader, the shared one for a
    writer."""
    if mode == "r":
        fd = os.open(path, os.O_RDONLY | O_BINARY)
        try:
            stat = os.fstat(fd)
            archive = _Archive(path, fd, (stat.st_dev, stat.st_ino), writable=False)
            archive.load(writable=False)
        except BaseException:
            os.close(fd)
            raise
        return archive
    # No O_TRUNC: mode "w" empties the file only once it holds the lock.
    flags = os.O_RDWR | os.O_CREAT | O_BINARY | (os.O_EXCL if mode == "x" else 0)
    with _registry_lock:
        fd = os.open(path, flags, 0o666)
        try:
            stat = os.fstat(fd)
            identity = (stat.st_dev, stat.st_ino)
            shared = _registry.get(identity)
            if shared is None or shared.refs <= 0:
                return _new_writable_archive(path, fd, identity, mode)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the shared state has its own descriptor
        if mode == "w":
            raise StoreLockedError(
                f"{path} is open for writing in this process; mode 'w' would empty it "
                "under the other handles (open it with mode 'a' to share it)"
            )
        shared.refs += 1
        return shared


def _new_writable_archive(path: Path, fd: int, identity: tuple[int, int], mode: str) -> _Archive:
    """Lock, empty (mode "w") and read the archive; register it for sharing."""
    archive = _Archive(path, fd, identity, writable=True)
    archive.locked = _lock_exclusive(fd, path)
    if mode == "w":
        os.ftruncate(fd, 0)
    if os.fstat(fd).st_size:
        archive.load(writable=True)
    else:
        archive.dirty = True  # a new archive is written on close even if nothing is set
    _registry[identity] = archive
    return archive


class ZipStore(Store):
    """Keys as members of a ZIP archive at ``path``.

    ``mode`` is ``"r"`` (read an existing archive; the store is read-only), ``"w"`` (create
    or truncate), ``"a"`` (append to an existing archive, or create it) or ``"x"`` (create;
    fail with FileExistsError if the file exists). ``read_only`` defaults to ``mode == "r"``
    and may only restate that. ``verify_crc`` checks each member's CRC-32 on full reads.
    ``path`` may also be an open binary file, as ``zipfile.ZipFile`` takes: one on disk is
    opened again by its name; any other (``io.BytesIO``) is worked on in a temporary copy,
    written back into it on :meth:`close` when the store is writable.

    Writes append STORED members whose data are 8-byte aligned; writing an existing key
    appends a new member that shadows the old one (the file keeps both). ``delete`` of a
    present key raises NotImplementedError; deleting a missing key is a no-op. Call
    :meth:`close` (or use ``with``) to write the central directory.

    The store is safe to use from many threads: writes are serialised by a lock, reads use
    positional reads (``os.pread``) and never block each other. Writable stores opened
    separately on one file in a process share their state (opening one with mode ``"w"``
    while another is open raises StoreLockedError, as it would empty the archive under
    it); while they are open, a writable open in another process raises StoreLockedError.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.zip")
    >>> with ZipStore(path, mode="w") as s:
    ...     s.set("k", b"old")
    ...     s.set("k", b"new")  # appends; the last member wins
    ...     s.get("k")
    b'new'
    """

    supports_deletes: bool = False

    def __init__(
        self,
        path: str | os.PathLike[str] | BinaryIO,
        mode: str = "r",
        *,
        read_only: bool | None = None,
        verify_crc: bool = True,
    ) -> None:
        if mode not in ("r", "w", "a", "x"):
            raise ValueError(f"ZipStore mode must be 'r', 'w', 'a' or 'x', not {mode!r}")
        if read_only is None:
            read_only = mode == "r"
        elif read_only != (mode == "r"):
            raise ValueError(f"read_only={read_only} contradicts mode {mode!r}")
        # An open binary file (as zipfile.ZipFile takes): see _adopt_file_object.
        self._file_object: BinaryIO | None = None
        if not isinstance(path, (str, os.PathLike)):
            path = self._adopt_file_object(path, mode)
        self.path = Path(path)
        self.mode = mode
        self.read_only = read_only
        self.verify_crc = verify_crc
        self._fd = -1
        self._mmap: mmap.mmap | None = None
        self._map_lock = threading.Lock()
        archive = _open_archive(self.path, mode)
        self._archive = archive
        self._index = archive.index
        self._index_lock = archive.index_lock
        self._write_lock = archive.write_lock
        self._fd = archive.fd

    def _adopt_file_object(self, file: BinaryIO, mode: str) -> str:
        """The path to open for the open binary ``file``: its own name when it is a file
        on disk (opened again by name, as a path would be), else a private temporary copy
        of its bytes; a writable store copies the archive back into ``file`` on close."""
        if not (hasattr(file, "read") and hasattr(file, "seek")):
            raise TypeError(f"ZipStore takes a path or an open binary file, not {file!r}")
        name = getattr(file, "name", None)
        if isinstance(name, str) and os.path.isfile(name):
            return name
        descriptor, temporary = tempfile.mkstemp(suffix=".zip", prefix="zarrkit-")
        with os.fdopen(descriptor, "wb") as copy:
            if mode in ("r", "a"):
                file.seek(0)
                shutil.copyfileobj(file, copy)
        self._file_object = file
        return temporary

    def _release_file_object(self) -> None:
        """Copy a written archive back into the file object it came from; drop the
        temporary copy."""
        file, self._file_object = self._file_object, None
        if file is None:
            return
        try:
            if not self.read_only:
                with open(self.path, "rb") as archive:
                    file.seek(0)
                    shutil.copyfileobj(archive, file)
                file.truncate()
                file.seek(0)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def __reduce__(self) -> tuple[Any, ...]:
        if self._file_object is not None:
            raise TypeError("a ZipStore opened from a file object cannot be copied to "
                            "another process; open it from a path")
        # A copy (a Dask task in another process) opens the file again: a reader as a
        # reader, a writer in mode "a", never "w", which would empty the archive. A writable
        # copy in another process meets the OS lock (StoreLockedError) while this one is
        # open, as any second writer does.
        return (functools.partial(ZipStore, verify_crc=self.verify_crc),
                (self.path, "r" if self.read_only else "a"))

    def __repr__(self) -> str:
        return f"ZipStore({str(self.path)!r}, mode={self.mode!r})"

    @property
    def recovered(self) -> bool:
        """Whether opening found an archive that was not closed (a writer killed before
        writing its central directory) and recovered its intact members.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "v.zip")
        >>> ZipStore(path, mode="w").close()
        >>> with ZipStore(path) as s:
        ...     s.recovered
        False
        """
        return self._archive.recovered

    @property
    def lock_identity(self) -> tuple[str, int, int]:
        """Equal for every handle on the same archive file (its device and inode), so that
        separately opened handles share their key locks.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "i.zip")
        >>> with ZipStore(path, mode="w") as a, ZipStore(path, mode="a") as b:
        ...     a.lock_identity == b.lock_identity
        True
        """
        return ("zip", *self._archive.identity)

    # --- low-level I/O ------------------------------------------------------------------
    def _require_open(self) -> int:
        fd = self._fd
        if fd < 0:
            raise ValueError(f"I/O operation on closed {self!r}")
        return fd

    def _pread(self, offset: int, size: int) -> bytes:
        fd = self._require_open()
        if HAS_PREAD and size <= MAX_IO:
            data = os.pread(fd, size, offset)
            if len(data) == size:
                return data
        return pread_exact(fd, offset, size, self.path)

    # --- reading members ----------------------------------------------------------------
    def _data_offset(self, member: Member) -> int:
        if member.data_offset >= 0:
            return member.data_offset
        limit = self._archive.data_end
        if member.header_offset + LOCAL.size > limit:
            raise CorruptZipError(f"{self.path}: local header at {member.header_offset} "
                                  "lies past the member data")
        header = self._pread(member.header_offset, LOCAL.size)
        sig, *_, name_len, extra_len = LOCAL.unpack(header)
        if sig != LOCAL_SIG:
            raise CorruptZipError(f"{self.path}: bad local header at {member.header_offset}")
        if member.method == STORED and member.compress_size != member.file_size:
            raise CorruptZipError(
                f"{self.path}: stored member at {member.header_offset} declares two sizes"
            )
        offset = member.header_offset + LOCAL.size + name_len + extra_len
        if offset + member.compress_size > limit:
            raise CorruptZipError(
                f"{self.path}: member at {member.header_offset} overruns the data"
            )
        member.data_offset = offset  # benign race: every thread computes the same value
        return offset

    def _member(self, key: str) -> Member | None:
        member = self._index.get(key)
        if member is not None and member.flags & FLAG_ENCRYPTED:
            raise UnsupportedOperationError(f"{self.path}: member {key!r} is encrypted")
        return member

    def _check_crc(self, key: str, member: Member, data: Buffer) -> None:
        if self.verify_crc and zlib.crc32(data) != member.crc:
            raise CorruptZipError(f"{self.path}: bad CRC-32 for member {key!r}")

    # --- readable -----------------------------------------------------------------------
    def _get(self, key: str) -> bytes | None:
        member = self._member(key)
        if member is None:
            return None
        raw = self._pread(self._data_offset(member), member.compress_size)
        if member.method == STORED:
            data = raw  # _data_offset checked that both sizes agree
        else:
            data = decompress(
                member.method, raw, member.file_size, f"{self.path}: member {key!r}"
            )
        self._check_crc(key, member, data)
        return data

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Return ``length`` bytes of ``key``'s value from ``start`` (to the end if None);
        a negative ``start`` counts from the end. A stored member is read in place; a
        deflated one is decompressed only as far as needed.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "r.zip")
        >>> with ZipStore(path, mode="w") as s:
        ...     s.set("k", b"0123456789")
        ...     s.get_range("k", -3)
        b'789'
        """
        validate_key(key)
        member = self._member(key)
        if member is None:
            return None
        size = member.file_size
        if start < 0:
            start = max(size + start, 0)
        begin, end, _ = slice(start, None if length is None else start + length).indices(size)
        if end <= begin:
            return b""
        data_offset = self._data_offset(member)
        if member.method == STORED:
            return self._pread(data_offset + begin, end - begin)
        if member.method == DEFLATED:
            return self._inflate_prefix(key, member, data_offset, end)[begin:end]
        value = self._get(key)
        assert value is not None
        return value[begin:end]

    def _inflate_prefix(self, key: str, member: Member, data_offset: int, end: int) -> bytes:
        if end > config.max_chunk_bytes:
            raise ResourceLimitError(
                f"{self.path}: reading {end} bytes of {key!r} exceeds max_chunk_bytes"
            )
        decompressor = zlib.decompressobj(-15)
        out = bytearray()
        consumed = 0
        try:
            while len(out) < end and consumed < member.compress_size:
                block = self._pread(
                    data_offset + consumed, min(READ_BLOCK, member.compress_size - consumed)
                )
                consumed += len(block)
                out += decompressor.decompress(block, end - len(out))
                while decompressor.unconsumed_tail and len(out) < end:
                    out += decompressor.decompress(decompressor.unconsumed_tail, end - len(out))
        except zlib.error as error:
            raise CorruptZipError(f"{self.path}: member {key!r}: {error}") from error
        if len(out) < end:
            raise CorruptZipError(f"{self.path}: member {key!r} is shorter than declared")
        return bytes(out)

    def get_into(self, key: str, out: memoryview) -> bool:
        """Read ``key`` into ``out``, which must be exactly its size; return False if the
        key is missing. A stored member goes straight from the file into ``out``.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "i.zip")
        >>> with ZipStore(path, mode="w") as s:
        ...     s.set("k", b"abc")
        ...     buf = bytearray(3)
        ...     s.get_into("k", memoryview(buf)), bytes(buf)
        (True, b'abc')
        """
        validate_key(key)
        member = self._member(key)
        if member is None:
            return False
        target = memoryview(out).cast("B")
        if len(target) != member.file_size:
            raise ValueError(
                f"size of {key!r} ({member.file_size}) differs from the expected {len(target)}"
            )
        if member.method == STORED and hasattr(os, "preadv"):
            offset = self._data_offset(member)
            done = 0
            while done < len(target):
                n = os.preadv(self._require_open(), [target[done : done + MAX_IO]], offset)
                if n <= 0:
                    raise CorruptZipError(f"{self.path}: unexpected end of file in {key!r}")
                done += n
                offset += n
            self._check_crc(key, member, target)
            return True
        value = self._get(key)
        assert value is not None
        target[:] = value
        return True

    def value_range(self, key: str) -> ValueRange | None | Literal[False]:
        """Where a STORED member's bytes lie in the archive, for the native engine to read
        them itself: (descriptor, path, offset, length, CRC-32 when ``verify_crc``); None
        if ``key`` is missing, False for a compressed member (read it with :meth:`get`).
        The descriptor is this store's: valid until :meth:`close`.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "v.zip")
        >>> with ZipStore(path, mode="w") as s:
        ...     s.set("k", b"abc")
        ...     _, _, offset, length, _ = s.value_range("k")
        ...     s.value_range("nope"), length, os.pread(s._fd, length, offset)
        (None, 3, b'abc')
        """
        validate_key(key)
        member = self._member(key)
        if member is None:
            return None
        if member.method != STORED:
            return False
        return (self._require_open(), str(self.path), self._data_offset(member),
                member.file_size, member.crc if self.verify_crc else None)

    def map_value(self, key: str) -> memoryview | None:
        """Return a read-only, zero-copy view of a STORED member's bytes, or None if
        ``key`` is missing. The view maps the file; it stays valid after :meth:`close` as
        long as it is referenced. A writable store maps too: members are only ever appended,
        so the bytes of one never change while the archive is open (a member written after
        the last mapping maps the grown file). A compressed member raises ValueError (read
        it with :meth:`get`).

        >>> import os, tempfile
        >>> import numpy as np
        >>> path = os.path.join(tempfile.mkdtemp(), "m.zip")
        >>> with ZipStore(path, mode="w") as s:
        ...     s.set("0", np.arange(4, dtype="<i4").tobytes())
        >>> with ZipStore(path) as s:
        ...     np.frombuffer(s.map_value("0"), dtype="<i4")
        array([0, 1, 2, 3], dtype=int32)
        """
        validate_key(key)
        member = self._member(key)
        if member is None:
            return None
        if member.method != STORED:
            raise ValueError(
                f"member {key!r} of {self.path} is compressed (method {member.method}) and "
                "cannot be mapped; use get()"
            )
        offset = self._data_offset(member)
        end = offset + member.file_size
        mapped = self._mmap
        if mapped is None or len(mapped) < end:
            with self._map_lock:
                if self._mmap is None or len(self._mmap) < end:
                    # A mapping the file has outgrown is dropped, not closed: views of it
                    # may be alive, and they keep it mapped for as long as they are.
                    self._mmap = mmap.mmap(self._require_open(), 0, access=mmap.ACCESS_READ)
                mapped = self._mmap
        return memoryview(mapped)[offset:end]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._index

    # --- writable -----------------------------------------------------------------------
    def _set(self, key: str, value: Buffer) -> None:
        member = self._prepare(key, value)
        with self._write_lock:
            self._append(key, *member)

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        """Store ``value`` under ``key`` unless the key is present; return whether it was
        stored. Atomic among every handle on the archive (they share one write lock, and
        other processes cannot write it).

        >>> import os, tempfile
        >>> with ZipStore(os.path.join(tempfile.mkdtemp(), "s.zip"), mode="w") as s:
        ...     s.set_if_not_exists("k", b"a"), s.set_if_not_exists("k", b"b"), s.get("k")
        (True, False, b'a')
        """
        self._check_write(key, value)
        if key in self._index:  # keys never disappear, so this answer is final
            return False
        member = self._prepare(key, value)
        with self._write_lock:
            if key in self._index:
                return False
            self._append(key, *member)
        return True

    @staticmethod
    def _prepare(key: str, value: Buffer) -> tuple[memoryview, bytes, int, int]:
        """The bytes, name, flags and CRC of a new member, computed outside the write
        lock."""
        view = memoryview(value)
        if not view.c_contiguous:
            view = memoryview(view.tobytes())
        view = view.cast("B")
        flags = 0 if key.isascii() else FLAG_UTF8
        return view, key.encode("utf-8"), flags, zlib.crc32(view)

    def _append(self, key: str, view: memoryview, name: bytes, flags: int, crc: int) -> None:
        """Append one member at the write position; the caller holds the write lock."""
        fd = self._require_open()
        archive = self._archive
        self._check_process(archive)
        offset = archive.write_pos
        archive_offset = offset - archive.concat
        size = view.nbytes
        big = size >= zip_format.ZIP64_LIMIT
        version = VERSION_ZIP64 if big or archive_offset >= zip_format.ZIP64_LIMIT else VERSION
        local_extra = (
            EXTRA_HEADER.pack(ZIP64_EXTRA_ID, 16) + struct.pack("<QQ", size, size)
            if big
            else b""
        )
        local_extra += align_padding(offset + LOCAL.size + len(name) + len(local_extra))
        size32 = SATURATED if big else size
        date, clock = dos_datetime(time.time())
        local = (
            LOCAL.pack(
                LOCAL_SIG, version, flags, STORED, clock, date, crc, size32, size32,
                len(name), len(local_extra),
            )
            + name
            + local_extra
        )
        data_offset = offset + len(local)
        try:
            if size < SMALL_VALUE:
                pwrite_all(fd, local + view.tobytes(), offset)
            else:
                pwrite_all(fd, local, offset)
                pwrite_all(fd, view, data_offset)
        except OSError as error:
            # Disk full or file too large: drop the torn member, so that the archive ends
            # where it did and every member stored before stays readable.
            _truncate_quietly(fd, offset)
            raise StoreIOError(error.errno, f"cannot store {key!r} in {self!r}: "
                                            f"{error}") from error
        archive.write_pos = archive.data_end = data_offset + size
        archive.dirty = True
        archive.new_central.append(
            central_record(name, VERSION, flags, STORED, clock, date, crc, size, size,
                            archive_offset)
        )
        member = Member(offset, size, size, STORED, crc, flags, data_offset)
        with archive.index_lock:
            is_new = key not in archive.index
            archive.index[key] = member
            if is_new:
                archive.sorted_keys = None

    def _delete(self, key: str) -> None:
        if key in self._index:
            raise UnsupportedOperationError(
                f"cannot delete {key!r}: {self!r} is append-only and does not support delete"
            )

    def delete_prefix(self, prefix: str) -> None:
        """Raise NotImplementedError if any key starts with ``prefix`` (a ZIP archive
        cannot drop members); do nothing if none does.

        >>> import os, tempfile
        >>> with ZipStore(os.path.join(tempfile.mkdtemp(), "d.zip"), mode="w") as s:
        ...     s.delete_prefix("nothing/")
        """
        self._check_writable(prefix)
        for key in self.list_prefix(prefix):
            raise UnsupportedOperationError(
                f"cannot delete prefix {prefix!r} (holding {key!r}): {self!r} is append-only"
            )

    # --- listable -----------------------------------------------------------------------
    def _iter_keys(self) -> Iterator[str]:
        with self._index_lock:
            keys = list(self._index)
        return iter(keys)

    def _sorted(self) -> list[str]:
        archive = self._archive
        with self._index_lock:
            if archive.sorted_keys is None:
                archive.sorted_keys = sorted(self._index)
            # The cached list is replaced, never mutated, so it can be read unlocked.
            return archive.sorted_keys

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Iterate, in sorted order, over the keys that start with ``prefix``.

        >>> import os, tempfile
        >>> with ZipStore(os.path.join(tempfile.mkdtemp(), "l.zip"), mode="w") as s:
        ...     s.set_many({"a/1": b"", "a/0": b"", "b": b""})
        ...     list(s.list_prefix("a/"))
        ['a/0', 'a/1']
        """
        validate_prefix(prefix)
        keys = self._sorted()
        first = bisect.bisect_left(keys, prefix)
        return self._take_prefixed(keys, first, prefix)

    @staticmethod
    def _take_prefixed(keys: list[str], first: int, prefix: str) -> Iterator[str]:
        for i in range(first, len(keys)):
            if not keys[i].startswith(prefix):
                return
            yield keys[i]

    # --- closing ------------------------------------------------------------------------
    def close(self) -> None:
        """Write the central directory (if anything changed since the last one) and
        close this handle; the last handle on the archive closes the file. Calling it
        again does nothing.

        >>> import os, tempfile, zipfile
        >>> path = os.path.join(tempfile.mkdtemp(), "c.zip")
        >>> s = ZipStore(path, mode="w"); s.set("k", b"v"); s.close()
        >>> zipfile.ZipFile(path).read("k")
        b'v'
        """
        archive = self._archive
        with archive.write_lock:
            if self._fd < 0:
                return
            try:
                # Only the process that appended writes the directory (see _check_process).
                if archive.dirty and archive.pid == os.getpid():
                    archive.write_central_directory()
            finally:
                self._fd = -1
                self._close_map()
                archive.release()
                self._release_file_object()

    def flush(self) -> None:
        """Write the central directory now if anything was appended since the last one,
        keeping the store open: readers opening the archive (other processes, ``zipfile``)
        then see every member written so far. Later appends go after it.

        >>> import os, tempfile, zipfile
        >>> path = os.path.join(tempfile.mkdtemp(), "f.zip")
        >>> with ZipStore(path, mode="w") as s:
        ...     s.set("k", b"v")
        ...     s.flush()
        ...     zipfile.ZipFile(path).read("k")
        b'v'
        """
        archive = self._archive
        with archive.write_lock:
            self._require_open()
            self._check_process(archive)
            if archive.dirty:
                archive.write_central_directory()

    def _check_process(self, archive: _Archive) -> None:
        # A forked child shares the parent's file but not its later appends: what it
        # wrote at its stale write position would overwrite them.
        if archive.writable and archive.pid != os.getpid():
            raise UnsupportedOperationError(
                f"{self!r} was opened for writing in process {archive.pid}; this forked "
                "process cannot write it (open the archive again here)")

    def _close_map(self) -> None:
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                pass  # views handed out keep the mapping alive; it closes when they die
            self._mmap = None

    def __enter__(self) -> ZipStore:
        return self

    def __del__(self) -> None:
        archive = getattr(self, "_archive", None)
        if archive is None or getattr(self, "_fd", -1) < 0:
            return
        if archive.dirty and archive.refs == 1:
            warnings.warn(
                f"{self!r} was not closed; the archive has no central directory",
                ResourceWarning,
                stacklevel=2,
            )
        self._fd = -1
        archive.release()


def _truncate_quietly(fd: int, size: int) -> None:
    # Shrinking a file needs no space; if even that fails, the reader's recovery of torn
    # tails (ArchiveReader) still finds every complete member.
    with contextlib.suppress(OSError):
        os.ftruncate(fd, size)
