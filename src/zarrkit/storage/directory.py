"""A store on a local directory: one file per key, ``/`` in keys as nested directories.

Writes are atomic: the value goes to a temporary file, is optionally fsynced
(``zarrkit.config.fsync``, which also syncs the directory after the rename), then renamed
over the target, so a crash leaves the old or the new value and never a torn one.

Temporary files live beside the store, in ``.zarrkit-tmp-<root name>`` next to the root,
where no listing of the store (zarrkit's, zarr-python's or ``os.walk``'s) ever looks; the
cross-process lock file of ``zarrkit.config.file_locks`` lives there too. Temporary files
left by a killed writer are removed when the store is next opened. Where that directory
cannot be made (an unwritable parent, another file system) they go into the target's own
directory under the same hidden prefix, which zarrkit's listings skip and clean.

The store never reaches outside its root: a symbolic link inside it that resolves outside
(or into a cycle) is refused with StoreEscapeError on reads, writes and deletes, and left
out of listings. Links that stay inside the root are followed.

>>> import tempfile
>>> store = DirectoryStore(tempfile.mkdtemp())
>>> store.set("g/a/.zarray", b"{}")
>>> store.list_dir("g/")
([], ['a'])
"""

from __future__ import annotations

import errno
import itertools
import mmap
import os
import shutil
import socket
import stat
import zlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from zarrkit import native
from zarrkit.config import config
from zarrkit.errors import StoreEscapeError, StoreIOError
from zarrkit.storage.base import Buffer, FileWrites, Store
from zarrkit.storage.keys import validate_key, validate_keys, validate_prefix
from zarrkit.storage.locking import key_lock, keys_lock

TEMP_PREFIX = ".zarrkit-tmp-"
LOCK_FILE_NAME = "locks"
# Temporary names carry the writer's host and pid, so that cleaning removes only files
# whose writer is gone; a counter and a per-process salt keep them unique.
_HOST = f"{zlib.crc32(socket.gethostname().encode()):08x}"
_SALT = os.urandom(4).hex()
_COUNTER = itertools.count()
_MAX_CHECKED_DIRECTORIES = 1 << 16
# What os.link raises where the file system has no hard links (FAT, some FUSE and SMB
# mounts): create-if-absent falls back to an exclusive create there.
_NO_HARD_LINKS = (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS)
# O_BINARY: no newline translation. O_NONBLOCK: opening a FIFO put where a value belongs
# returns at once (without it, the open waits for a writer forever); a regular file's reads
# ignore it.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# Temporaries are new files (names unique to this process): O_EXCL never follows or
# clobbers anything already there. os.open/os.write, not open(): a file object costs
# three more system calls per chunk (fstat, ioctl, lseek) and a buffer.
_WRITE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
                | getattr(os, "O_CLOEXEC", 0))


def _write_all(fd: int, value: Buffer) -> None:
    """Write the whole of ``value`` (os.write may write less than it is given)."""
    view = memoryview(value).cast("B")
    while view:
        written = os.write(fd, view)
        view = view[written:]


# From this many keys on, get_many hands the reads to the native engine.
_ENGINE_READ_KEYS = 8


def _read_at(fd: int, offset: int, length: int) -> bytes:
    """``length`` bytes of the file from ``offset`` (fewer only at its end)."""
    if not hasattr(os, "pread"):  # Windows
        os.lseek(fd, offset, os.SEEK_SET)
        return _read_all(lambda n, _: os.read(fd, n), offset, length)
    return _read_all(lambda n, at: os.pread(fd, n, at), offset, length)


def _read_all(read: Callable[[int, int], bytes], offset: int, length: int) -> bytes:
    data = read(length, offset)
    if len(data) == length or not data:
        return data
    parts = [data]  # a short read: keep reading until the length or the end of the file
    done = len(data)
    while done < length:
        part = read(length - done, offset + done)
        if not part:
            break
        parts.append(part)
        done += len(part)
    return b"".join(parts)


def single_file_key_lock(identity: Hashable, key: str, real_path: str
                         ) -> AbstractContextManager[None]:
    """The key lock of a store kept in one file (SQLite, LMDB): the in-process lock of
    ``identity`` and, with ``zarrkit.config.file_locks``, an OS lock whose file lives in
    the side directory ``.zarrkit-tmp-<file name>`` beside the file, as a
    DirectoryStore's lives beside its root.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "db")
    >>> with single_file_key_lock(("example", path), "a/0", path):
    ...     pass
    """
    lock_file = None
    if config.file_locks:
        directory, name = os.path.split(real_path)
        lock_file = os.path.join(directory, f"{TEMP_PREFIX}{name}", LOCK_FILE_NAME)
    return key_lock(identity, key, lock_file)


class DirectoryStore(Store):
    """Keys as files under ``root``.

    >>> import tempfile
    >>> s = DirectoryStore(tempfile.mkdtemp())
    >>> s.set("x", b"1"); s.get("x")
    b'1'
    """

    def __init__(self, root: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.root = Path(root).absolute()
        # zarr-python names a LocalStore by the path as given (``file://data/x.zarr``).
        self.given_root = Path(root)
        self.read_only = read_only
        # Reads build file names by string concatenation: pathlib costs ~15 us per key,
        # as much as reading a small chunk.
        self._root_prefix = str(self.root) + os.sep
        self._real_root = os.path.realpath(self.root)
        # Directories (as _file spells them) checked to resolve inside the root: a read
        # checks its directory once, not once per chunk.
        self._inside: set[str] = {str(self.root)}
        real = Path(self._real_root)
        side = real.parent / f"{TEMP_PREFIX}{real.name}"
        self._side: str | None = None if real.parent == real else str(side)
        self._clean_side_directory()

    def __repr__(self) -> str:
        return f"DirectoryStore({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DirectoryStore) and self.root == other.root

    __hash__ = None  # type: ignore[assignment]

    # --- identity and locks -------------------------------------------------------------
    @property
    def lock_identity(self) -> Hashable:
        """The same for every handle on this directory, however its path was spelt.

        >>> import os, tempfile
        >>> d = tempfile.mkdtemp()
        >>> DirectoryStore(d).lock_identity == DirectoryStore(d + "/.").lock_identity
        True
        """
        return ("directory", self._real_root)

    def key_lock(self, key: str) -> AbstractContextManager[None]:
        """A lock for read-modify-write of ``key``: shared by every handle on this
        directory in the process and, with ``zarrkit.config.file_locks``, an OS lock
        that other processes respect too.

        >>> import tempfile
        >>> with DirectoryStore(tempfile.mkdtemp()).key_lock("a/0"):
        ...     pass
        """
        return key_lock(self.lock_identity, key, self._lock_file())

    def key_locks(self, keys: Sequence[str]) -> AbstractContextManager[None]:
        """:meth:`key_lock` of every key in ``keys``, held together (for a writer that
        stores them in one call: see :class:`~zarrkit.storage.base.WritesFiles`).

        >>> import tempfile
        >>> with DirectoryStore(tempfile.mkdtemp()).key_locks(["a/0", "a/1"]):
        ...     pass
        """
        return keys_lock(self.lock_identity, keys, self._lock_file())

    def _lock_file(self) -> str | None:
        """The file of the OS locks other processes respect (``zarrkit.config.file_locks``),
        or None for thread locks alone."""
        if not config.file_locks:
            return None
        return os.path.join(self._side or self._real_root, LOCK_FILE_NAME)

    # --- paths ---------------------------------------------------------------------------
    def _path(self, key: str) -> Path:
        return self.root.joinpath(*key.split("/"))

    def _file(self, key: str) -> str:
        """The file name of a (validated) key, as a string."""
        return self._root_prefix + (key if os.sep == "/" else key.replace("/", os.sep))

    def _resolves_inside(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real == self._real_root or real.startswith(self._real_root + os.sep)

    def _check_directory(self, directory: str, key: str) -> None:
        """Refuse ``key`` if its directory resolves outside the root (a symbolic link)."""
        if not self._is_inside(directory):
            raise StoreEscapeError(
                f"key {key!r} of {self!r} leads outside the store through a symbolic link")

    def _is_inside(self, directory: str) -> bool:
        """Whether ``directory`` (the root or below it, spelt as :meth:`_file` spells it)
        resolves inside the root; remembered once it exists."""
        if directory in self._inside:
            return True
        parent = directory.rpartition(os.sep)[0]
        if len(parent) >= len(self._root_prefix) - 1 and self._is_inside(parent) \
                and not os.path.islink(directory):
            # Inside a directory found inside, and not a link: inside too, for one lstat
            # a level up to a directory known to be inside, where realpath takes one per
            # component (1,000 member directories of a group: 20 ms; the first write of
            # a v3 array's chunk rows, each row a new directory under a new c/).
            if os.path.isdir(directory):
                self._remember_inside(directory)
            return True
        if not self._resolves_inside(directory):
            return False
        if os.path.isdir(directory):  # a directory not there yet may become a link
            self._remember_inside(directory)
        return True

    def _remember_inside(self, directory: str) -> None:
        if len(self._inside) >= _MAX_CHECKED_DIRECTORIES:
            self._inside = {str(self.root)}  # v3 chunk directories can be millions
        self._inside.add(directory)

    def _check_file(self, file: str, key: str) -> None:
        """Refuse ``key`` if its file is a link that resolves outside the root."""
        self._check_directory(file.rpartition(os.sep)[0], key)
        if os.path.islink(file) and not self._resolves_inside(file):
            raise StoreEscapeError(
                f"key {key!r} of {self!r} is a symbolic link leading outside the store")

    def _io_error(self, error: OSError, key: str, action: str) -> Exception:
        if error.errno == errno.ELOOP:
            return StoreEscapeError(
                f"cannot {action} {key!r} in {self!r}: a symbolic link loop ({error})")
        return StoreIOError(error.errno, f"cannot {action} {key!r} in {self!r}: {error}")

    # Reads use os.open/os.pread/os.close: the builtin open() costs twice the time for a
    # small chunk (a FileIO object, and read() ends with an extra read that finds EOF),
    # and measured no faster with two threads than with one.
    def _open_for_reading(self, key: str) -> int | None:
        file = self._file(key)
        directory = file.rpartition(os.sep)[0]
        if directory not in self._inside:
            self._check_directory(directory, key)
        try:
            # O_NOFOLLOW: a link as the last component fails here and is checked below.
            return os.open(file, _READ_FLAGS | _NOFOLLOW)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as e:
            if e.errno == errno.ENAMETOOLONG:
                return None  # no such file can exist
            if e.errno != errno.ELOOP:
                raise self._io_error(e, key, "read") from e
        self._check_file(file, key)
        try:
            return os.open(file, _READ_FLAGS)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None  # a dangling link inside the store: no value
        except OSError as e:
            raise self._io_error(e, key, "read") from e

    def _value_size(self, fd: int, key: str) -> int | None:
        """The size of the value open at ``fd``, None for a directory (no value):
        StoreIOError for anything but a regular file (a FIFO, device or socket would block
        or never end)."""
        status = os.fstat(fd)
        if stat.S_ISREG(status.st_mode):
            return status.st_size
        if stat.S_ISDIR(status.st_mode):
            return None
        raise StoreIOError(errno.EINVAL, f"cannot read {key!r} in {self!r}: it is not a "
                                         f"regular file (mode {stat.filemode(status.st_mode)})")

    def _get(self, key: str) -> bytes | None:
        fd = self._open_for_reading(key)
        if fd is None:
            return None
        try:
            size = self._value_size(fd, key)
            return None if size is None else _read_at(fd, 0, size)
        except IsADirectoryError:  # os.open succeeds on a directory; reading it fails
            return None
        finally:
            os.close(fd)

    @property
    def reads_many_in_parallel(self) -> bool:  # type: ignore[override]
        return native.available()

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """The values of ``keys`` in order (None for a missing key). Many at once are
        read by the native engine's threads with the GIL released (opening a thousand
        small metadata files took a third of the time of opening their arrays); a file
        that is a symbolic link is read here, where links leading out are refused.

        >>> import tempfile
        >>> s = DirectoryStore(tempfile.mkdtemp()); s.set("a/k", b"1")
        >>> s.get_many(["a/k", "a/nope"] * 8)[:2]
        [b'1', None]
        """
        if len(keys) < _ENGINE_READ_KEYS or not native.available():
            return super().get_many(keys)
        files = [self.value_file(validate_key(key)) for key in keys]
        try:
            values = native.read_files(files, config.threads)
        except native.ChunkReadError as e:
            raise StoreIOError(f"cannot read from {self!r}: {e}") from None
        return [self.get(key) if value is False else value  # type: ignore[misc]
                for key, value in zip(keys, values, strict=True)]

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        validate_key(key)
        fd = self._open_for_reading(key)
        if fd is None:
            return None
        try:
            size = self._value_size(fd, key)
            if size is None:
                return None
            # Past the end reads nothing (a start beyond off_t would make pread overflow).
            start = max(size + start, 0) if start < 0 else min(start, size)
            stop = size if length is None else min(size, start + length)
            return _read_at(fd, start, max(stop - start, 0))
        except IsADirectoryError:
            return None
        finally:
            os.close(fd)

    def get_into(self, key: str, out: memoryview) -> bool:
        """Read ``key`` straight into ``out`` (which must be exactly its size); return
        False if the key is missing. Lets uncompressed chunks skip a copy.

        >>> import tempfile
        >>> s = DirectoryStore(tempfile.mkdtemp()); s.set("k", b"abc")
        >>> buf = bytearray(3); s.get_into("k", memoryview(buf)), bytes(buf)
        (True, b'abc')
        """
        validate_key(key)
        fd = self._open_for_reading(key)
        if fd is None:
            return False
        try:
            size = self._value_size(fd, key)
            if size is None:
                return False
            target = memoryview(out).cast("B")
            if size != target.nbytes:
                raise ValueError(f"size of {key!r} ({size}) differs from the expected "
                                 f"{target.nbytes}")
            if not hasattr(os, "readv"):  # Windows
                target[:] = _read_at(fd, 0, size)
                return True
            done = 0
            while done < size:
                n = os.readv(fd, [target[done:]])
                if n <= 0:
                    raise ValueError(f"{key!r} ended after {done} of {size} bytes")
                done += n
            return True
        except IsADirectoryError:
            return False
        finally:
            os.close(fd)

    def map_value(self, key: str) -> memoryview | None:
        """A read-only, zero-copy view of ``key``'s file mapped into memory, or None if the
        key is missing. Writes replace files by renaming, so a mapping keeps showing the
        value it was made from even after the key is overwritten.

        >>> import tempfile
        >>> s = DirectoryStore(tempfile.mkdtemp())
        >>> s.set("k", b"abc"); bytes(s.map_value("k"))
        b'abc'
        >>> s.set("d/k", b"1"); s.map_value("d") is None
        True
        """
        validate_key(key)
        fd = self._open_for_reading(key)
        if fd is None:
            return None
        try:
            size = self._value_size(fd, key)
            if size is None:  # a directory is not a value (and mmap fails on it with
                return None   # ENODEV, not IsADirectoryError)
            if size == 0:  # mmap refuses empty files
                return memoryview(b"")
            return memoryview(mmap.mmap(fd, size, access=mmap.ACCESS_READ))
        except (IsADirectoryError, ValueError):
            return None
        finally:
            os.close(fd)

    @property
    def files_root(self) -> str:
        """The store's directory, ending in a separator (see ``value_file``).

        >>> import os, tempfile
        >>> DirectoryStore(tempfile.mkdtemp()).files_root.endswith(os.sep)
        True
        """
        return self._root_prefix

    def value_file(self, key: str) -> str:
        """The file ``key``'s value is (or would be) in, for a reader that opens files
        itself (the native engine; see :class:`~zarrkit.storage.base.LocatesFiles`):
        StoreEscapeError if a directory on the way leads outside the store.

        >>> import os, tempfile
        >>> s = DirectoryStore(tempfile.mkdtemp())
        >>> s.value_file("c/0/1") == os.path.join(s.root, "c", "0", "1")
        True
        """
        file = self._file(key)
        directory = file.rpartition(os.sep)[0]
        if directory not in self._inside:
            validate_key(key)
            self._check_directory(directory, key)
        return file

    # --- writing -------------------------------------------------------------------------
    def file_writes(self, keys: Sequence[str]) -> FileWrites | None:
        """Where a writer that makes the files itself (the native engine; see
        :class:`~zarrkit.storage.base.WritesFiles`) puts ``keys``' values, after the checks
        ``set`` makes (read-only, key syntax, directories that lead outside the store);
        None with ``zarrkit.config.fsync``, whose syncs ``set`` makes.

        >>> import os, tempfile
        >>> s = DirectoryStore(tempfile.mkdtemp())
        >>> s.file_writes(["c/0"]).targets == [os.path.join(s.root, "c", "0")]
        True
        """
        self._check_writable(keys[0] if keys else "")
        if config.fsync:
            return None
        validate_keys(keys)
        targets = [self._file(key) for key in keys]
        checked: set[str] = set()
        for key, target in zip(keys, targets, strict=True):
            directory = target.rpartition(os.sep)[0]
            if directory not in checked:
                checked.add(directory)  # a new chunk directory: resolved once, not per key
                self._check_directory(directory, key)
        if self._side is not None:
            try:
                os.makedirs(self._side, exist_ok=True)
            except OSError:
                self._side = None
        return FileWrites(targets, self._side, f"{self._temp_name()}-")

    def _temp_name(self) -> str:
        return f"{TEMP_PREFIX}{_HOST}-{os.getpid()}-{_SALT}-{next(_COUNTER)}"

    def _write_temp(self, value: Buffer, directory: str, key: str) -> str:
        """Write ``value`` to a new temporary file (fsynced if configured); its path."""
        if isinstance(value, memoryview) and not value.c_contiguous:
            value = value.tobytes()  # _write_all casts to bytes: strided views cannot
        name = self._temp_name()
        temp = ""
        fd = None
        if self._side is not None:
            temp = self._side + os.sep + name
            try:
                fd = os.open(temp, _WRITE_FLAGS, 0o666)
            except FileNotFoundError:
                try:
                    os.makedirs(self._side, exist_ok=True)
                    fd = os.open(temp, _WRITE_FLAGS, 0o666)
                except OSError:
                    self._side = None
            except OSError:  # the parent is not writable: keep temporaries inside
                self._side = None
        if fd is None:
            temp = directory + os.sep + name
            # Open first and create the directory only when that fails: most writes go
            # to a directory that exists, and a probing mkdir per write was ~10% of
            # creating an array's metadata.
            try:
                fd = os.open(temp, _WRITE_FLAGS, 0o666)
            except FileNotFoundError:
                self._make_directory(directory, key)
                fd = os.open(temp, _WRITE_FLAGS, 0o666)
        try:
            try:
                _write_all(fd, value)
                if config.fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException:
            _remove_quietly(temp)
            raise
        return temp

    def _set(self, key: str, value: Buffer) -> None:
        target = self._file(key)
        directory = target.rpartition(os.sep)[0]
        self._check_directory(directory, key)
        temp = ""
        try:
            temp = self._write_temp(value, directory, key)
            try:
                os.replace(temp, target)
            except FileNotFoundError:
                if os.path.exists(temp):  # the target's directory is missing
                    self._make_directory(directory, key)
                    os.replace(temp, target)
                else:
                    raise
            except OSError as e:
                if e.errno != errno.EXDEV:
                    raise
                # The root holds a mount point: temporaries go beside their targets.
                self._side = None
                _remove_quietly(temp)
                temp = self._write_temp(value, directory, key)
                os.replace(temp, target)
            if config.fsync:
                _fsync_directory(directory)
        except BaseException as e:
            if temp:
                _remove_quietly(temp)
            if isinstance(e, OSError) and not isinstance(e, (StoreIOError, StoreEscapeError)):
                raise self._io_error(e, key, "store") from e
            raise

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        """Store ``value`` under ``key`` only if no value is there; return whether it was
        stored. Atomic across threads and processes: the complete file is hard-linked
        into place, which fails if the name exists.

        >>> import tempfile
        >>> s = DirectoryStore(tempfile.mkdtemp())
        >>> s.set_if_not_exists("k", b"first"), s.set_if_not_exists("k", b"second")
        (True, False)
        >>> s.get("k")
        b'first'
        """
        self._check_write(key, value)
        target = self._file(key)
        directory = target.rpartition(os.sep)[0]
        self._check_directory(directory, key)
        temp = ""
        try:
            temp = self._write_temp(value, directory, key)
            try:
                created = self._link_if_absent(temp, target, directory, key)
            except OSError as e:
                if e.errno not in _NO_HARD_LINKS:
                    raise
                created = self._create_exclusively(target, value)
            if created and config.fsync:
                _fsync_directory(directory)
            return created
        except OSError as e:
            if isinstance(e, (StoreIOError, StoreEscapeError)):
                raise
            raise self._io_error(e, key, "store") from e
        finally:
            if temp:
                _remove_quietly(temp)

    def _link_if_absent(self, temp: str, target: str, directory: str, key: str) -> bool:
        """Hard-link the complete ``temp`` file as ``target`` unless that name exists."""
        try:
            os.link(temp, target)
        except FileExistsError:
            return False
        except FileNotFoundError:
            self._make_directory(directory, key)
            try:
                os.link(temp, target)
            except FileExistsError:
                return False
        return True

    @staticmethod
    def _create_exclusively(target: str, value: Buffer) -> bool:
        """Create-if-absent where hard links are not allowed: exclusive, not atomic."""
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as f:
            f.write(value)
        return True

    @staticmethod
    def _make_directory(directory: str, key: str) -> None:
        """Create ``directory`` and its missing parents for ``key``'s file."""
        try:
            os.makedirs(directory, exist_ok=True)
        except FileExistsError as e:  # a file stands where a directory is needed
            raise StoreIOError(
                errno.ENOTDIR, f"cannot store {key!r}: a file stands where a directory "
                f"is needed ({e})") from e
        if config.fsync:
            _fsync_directory(os.path.dirname(directory))

    def set_many(self, items: Mapping[str, Buffer] | Iterable[tuple[str, Buffer]]) -> None:
        super().set_many(items)

    def _delete(self, key: str) -> None:
        file = self._file(key)
        self._check_directory(file.rpartition(os.sep)[0], key)
        try:
            if os.path.isdir(file) and not os.path.islink(file):
                return  # a key never names a directory: what is under it stays
            os.unlink(file)  # a link is removed itself, never what it points to
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as e:
            raise self._io_error(e, key, "delete") from e
        self._prune_empty_parents(Path(file).parent)

    def _prune_empty_parents(self, directory: Path) -> None:
        while directory != self.root and self.root in directory.parents:
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable(prefix)
        validate_prefix(prefix)
        if prefix == "":
            if self.root.exists():
                for child in self.root.iterdir():
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child)
                    else:
                        child.unlink()
            return
        if prefix.endswith("/"):
            directory = self._file(prefix[:-1])
            self._check_directory(directory.rpartition(os.sep)[0], prefix)
            if os.path.islink(directory):
                os.unlink(directory)  # the link goes; what it points to stays
            elif os.path.isdir(directory):
                shutil.rmtree(directory)
            else:
                return
            self._prune_empty_parents(Path(directory).parent)
            return
        for key in list(self.list_prefix(prefix)):
            self._delete(key)

    # --- listing -------------------------------------------------------------------------
    def _iter_keys(self) -> Iterator[str]:
        return self._walk(self.root, "", frozenset())

    def _entries(self, directory: str | Path) -> list[tuple[str, bool]]:
        """(name, is a directory) of the entries of ``directory`` that belong to the store:
        no temporaries, no links leading outside it."""
        try:
            scanned = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as e:
            if e.errno == errno.ELOOP:
                return []
            raise StoreIOError(e.errno, f"cannot list {directory} in {self!r}: {e}") from e
        # A real directory (not a link) in a directory known to be inside is inside too:
        # remembered here, from the listing's own entry types, reading the members of a
        # group of 1,000 arrays needs no lstat per member directory afterwards.
        listed_inside = str(directory) in self._inside
        entries = []
        for entry in scanned:
            if entry.name.startswith(TEMP_PREFIX):
                self._clean_temp(entry.path, entry.name)
                continue
            link = entry.is_symlink()
            if link and not self._resolves_inside(entry.path):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:  # a link loop
                continue
            if listed_inside and is_dir and not link:
                self._remember_inside(entry.path)
            entries.append((entry.name, is_dir))
        return entries

    def _walk(self, directory: Path, prefix: str, above: frozenset[tuple[int, int]]
              ) -> Iterator[str]:
        """The keys under ``directory``; ``above`` holds the directories walked down
        through to get here, so that a link back up the tree is not walked again."""
        try:
            info = os.stat(directory)
        except OSError:
            return
        here = (info.st_dev, info.st_ino)
        if here in above:
            return
        above = above | {here}
        for name, is_dir in self._entries(directory):
            if is_dir:
                yield from self._walk(directory / name, f"{prefix}{name}/", above)
            else:
                yield prefix + name

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        # Walk only the deepest directory the prefix names, not the whole tree.
        head, _, _ = prefix.rpartition("/")
        start = f"{head}/" if head else ""
        directory = self._path(head) if head else self.root
        if head and not self._resolves_inside(str(directory)):
            return iter(())
        return (k for k in self._walk(directory, start, frozenset()) if k.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        validate_prefix(prefix)
        directory = self._path(prefix.rstrip("/")) if prefix else self.root
        if (prefix and str(directory) not in self._inside
                and not self._resolves_inside(str(directory))):
            return [], []
        keys: list[str] = []
        prefixes: list[str] = []
        for name, is_dir in self._entries(directory):
            (prefixes if is_dir else keys).append(name)
        return sorted(keys), sorted(prefixes)

    # --- temporary files -----------------------------------------------------------------
    def _clean_side_directory(self) -> None:
        """Remove temporary files that killed writers left beside the store."""
        if self._side is None:
            return
        try:
            names = os.listdir(self._side)
        except OSError:
            return
        for name in names:
            if name.startswith(TEMP_PREFIX):
                self._clean_temp(os.path.join(self._side, name), name)
        try:
            os.rmdir(self._side)  # fails, as it should, while anything is left in it
        except OSError:
            pass

    def close(self) -> None:
        """Remove the directory of temporary files beside the store if nothing is left
        in it (it holds the lock file once ``file_locks`` was used, and stays then).

        >>> import os, tempfile
        >>> parent = tempfile.mkdtemp()
        >>> s = DirectoryStore(os.path.join(parent, "x.zarr")); s.set("k", b"v"); s.close()
        >>> os.listdir(parent)
        ['x.zarr']
        """
        if self._side is not None:
            try:
                os.rmdir(self._side)
            except OSError:
                pass  # not there, or in use by another handle or process

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown: os may be gone
            pass

    def _clean_temp(self, path: str, name: str) -> None:
        in_side = self._side is not None and path.startswith(self._side + os.sep)
        if self.read_only and not in_side:
            return  # inside a read-only store: leave its files alone
        if _writer_is_gone(name):
            _remove_quietly(path)


def _writer_is_gone(temp_name: str) -> bool:
    """Whether the process that made this temporary file has ended (only answerable for
    files made on this host; others are kept)."""
    parts = temp_name[len(TEMP_PREFIX):].split("-")
    if len(parts) < 2 or parts[0] != _HOST or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, owned by someone else
    return False


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _fsync_directory(directory: str) -> None:
    """Make a rename or a new entry in ``directory`` durable (POSIX only)."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on directories
    finally:
        os.close(fd)
