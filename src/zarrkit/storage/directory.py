"""A store on a local directory: one file per key, ``/`` in keys as nested directories.

Writes are atomic: the value goes to a hidden temporary file in the target directory, is
optionally fsynced (``zarrkit.config.fsync``), then renamed over the target, so a crash leaves
the old or the new value and never a torn one.

>>> import tempfile
>>> store = DirectoryStore(tempfile.mkdtemp())
>>> store.set("g/a/.zarray", b"{}")
>>> store.list_dir("g/")
([], ['a'])
"""

from __future__ import annotations

import errno
import mmap
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from zarrkit.config import config
from zarrkit.storage.base import Buffer, Store
from zarrkit.storage.keys import validate_key, validate_prefix

TEMP_PREFIX = ".zarrkit-tmp-"
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)  # O_BINARY: no newline translation


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


class DirectoryStore(Store):
    """Keys as files under ``root``.

    >>> import tempfile
    >>> s = DirectoryStore(tempfile.mkdtemp())
    >>> s.set("x", b"1"); s.get("x")
    b'1'
    """

    def __init__(self, root: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.root = Path(root).absolute()
        self.read_only = read_only
        # Reads build file names by string concatenation: pathlib costs ~15 us per key,
        # as much as reading a small chunk.
        self._root_prefix = str(self.root) + os.sep

    def __repr__(self) -> str:
        return f"DirectoryStore({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DirectoryStore) and self.root == other.root

    __hash__ = None  # type: ignore[assignment]

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*key.split("/"))

    def _file(self, key: str) -> str:
        """The file name of a (validated) key, as a string."""
        return self._root_prefix + (key if os.sep == "/" else key.replace("/", os.sep))

    # Reads use os.open/os.pread/os.close: the builtin open() costs twice the time for a
    # small chunk (a FileIO object, and read() ends with an extra read that finds EOF),
    # and measured no faster with two threads than with one.
    def _open_for_reading(self, key: str) -> int | None:
        try:
            return os.open(self._file(key), _READ_FLAGS)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def _get(self, key: str) -> bytes | None:
        fd = self._open_for_reading(key)
        if fd is None:
            return None
        try:
            return _read_at(fd, 0, os.fstat(fd).st_size)
        except IsADirectoryError:  # os.open succeeds on a directory; reading it fails
            return None
        finally:
            os.close(fd)

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        validate_key(key)
        fd = self._open_for_reading(key)
        if fd is None:
            return None
        try:
            size = os.fstat(fd).st_size
            if start < 0:
                start = max(size + start, 0)
            stop = size if length is None else min(size, start + length)
            return _read_at(fd, start, max(stop - start, 0))
        except IsADirectoryError:
            return None
        finally:
            os.close(fd)

    def get_into(self, key: str, out: memoryview) -> bool:
        """Read ``key`` straight into ``out`` (which must be exactly its size); return
        False if the key is missing. Lets uncompressed chunks skip a copy."""
        validate_key(key)
        fd = self._open_for_reading(key)
        if fd is None:
            return False
        try:
            size = os.fstat(fd).st_size
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
        """
        validate_key(key)
        try:
            fd = os.open(self._file(key), os.O_RDONLY)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        try:
            size = os.fstat(fd).st_size
            if size == 0:  # mmap refuses empty files
                return memoryview(b"")
            return memoryview(mmap.mmap(fd, size, access=mmap.ACCESS_READ))
        finally:
            os.close(fd)

    def _set(self, key: str, value: Buffer) -> None:
        target = self._file(key)
        directory, _, name = target.rpartition(os.sep)
        if isinstance(value, memoryview) and not value.c_contiguous:
            value = value.tobytes()  # file.write() rejects strided buffers
        temp = f"{directory}{os.sep}{TEMP_PREFIX}{name}.{uuid.uuid4().hex}"
        try:
            # Open first and create the directory only when that fails: most writes go to
            # a directory that exists, and a probing mkdir per write was ~10% of creating
            # an array's metadata.
            try:
                f = open(temp, "wb")
            except FileNotFoundError:
                self._make_directory(directory, key)
                f = open(temp, "wb")
            with f:
                f.write(value)
                if config.fsync:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(temp, target)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise

    @staticmethod
    def _make_directory(directory: str, key: str) -> None:
        """Create ``directory`` and its missing parents for ``key``'s file."""
        try:
            os.makedirs(directory, exist_ok=True)
        except FileExistsError as e:  # a file stands where a directory is needed
            raise NotADirectoryError(errno.ENOTDIR, f"cannot store {key!r}: {e}") from e

    def set_many(self, items: Mapping[str, Buffer] | Iterable[tuple[str, Buffer]]) -> None:
        super().set_many(items)

    def _delete(self, key: str) -> None:
        path = self._path(key)
        try:
            if path.is_dir():
                return
            path.unlink()
        except (FileNotFoundError, NotADirectoryError):
            return
        self._prune_empty_parents(path.parent)

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
            directory = self._path(prefix[:-1])
            if directory.is_dir():
                shutil.rmtree(directory)
                self._prune_empty_parents(directory.parent)
            return
        for key in list(self.list_prefix(prefix)):
            self._delete(key)

    def _iter_keys(self) -> Iterator[str]:
        return self._walk(self.root, "")

    def _walk(self, directory: Path, prefix: str) -> Iterator[str]:
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            if entry.name.startswith(TEMP_PREFIX):
                continue
            if entry.is_dir():
                yield from self._walk(Path(entry.path), f"{prefix}{entry.name}/")
            else:
                yield prefix + entry.name

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        # Walk only the deepest directory the prefix names, not the whole tree.
        head, _, _ = prefix.rpartition("/")
        start = f"{head}/" if head else ""
        directory = self._path(head) if head else self.root
        return (k for k in self._walk(directory, start) if k.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        validate_prefix(prefix)
        directory = self._path(prefix.rstrip("/")) if prefix else self.root
        keys: list[str] = []
        prefixes: list[str] = []
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return [], []
        for entry in entries:
            if entry.name.startswith(TEMP_PREFIX):
                continue
            (prefixes if entry.is_dir() else keys).append(entry.name)
        return sorted(keys), sorted(prefixes)
