"""The store protocol: a store maps string keys to bytes.

Three capabilities, modelled as protocols so that code says in its signature what it needs
(an HTTP store is readable only):

- :class:`ReadableStore`: ``get``, ``get_range``, ``get_many``
- :class:`WritableStore`: ``set``, ``set_if_not_exists``, ``set_many``, ``delete``,
  ``delete_prefix``
- :class:`ListableStore`: ``list``, ``list_prefix``, ``list_dir``

:class:`Store` is the base class of zarrkit's own stores: it supplies the batch methods in
terms of the single-key ones and the read-only guard.

Every store also has a ``lock_identity`` (equal for every handle on the same data, so that
handles opened separately share their in-process chunk locks) and a ``key_lock(key)``
context for read-modify-write of one key.

>>> from zarrkit.storage import MemoryStore
>>> store = MemoryStore()
>>> store.set("a/b", b"xyz")
>>> store.get_range("a/b", 1, 2)
b'yz'
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from zarrkit.errors import ReadOnlyError
from zarrkit.storage.keys import validate_key, validate_keys, validate_prefix
from zarrkit.storage.locking import key_lock

Buffer = bytes | bytearray | memoryview


@runtime_checkable
class ReadableStore(Protocol):
    """A store whose values can be read."""

    def get(self, key: str) -> bytes | None: ...

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None: ...

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]: ...


@runtime_checkable
class WritableStore(Protocol):
    """A store whose values can be written and deleted."""

    read_only: bool

    def set(self, key: str, value: Buffer) -> None: ...

    def set_if_not_exists(self, key: str, value: Buffer) -> bool: ...

    def set_many(self, items: Mapping[str, Buffer] | Iterable[tuple[str, Buffer]]) -> None: ...

    def delete(self, key: str) -> None: ...

    def delete_prefix(self, prefix: str) -> None: ...


@runtime_checkable
class ListableStore(Protocol):
    """A store whose keys can be listed."""

    def list(self) -> Iterator[str]: ...

    def list_prefix(self, prefix: str) -> Iterator[str]: ...

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]: ...


@runtime_checkable
class ReadsInto(Protocol):
    """A store that reads a value straight into a caller's buffer (DirectoryStore,
    ZipStore): uncompressed chunks then skip a copy.

    >>> from zarrkit.storage import DirectoryStore, MemoryStore
    >>> import tempfile
    >>> directory = DirectoryStore(tempfile.mkdtemp())
    >>> isinstance(directory, ReadsInto), isinstance(MemoryStore(), ReadsInto)
    (True, False)
    """

    def get_into(self, key: str, out: memoryview) -> bool: ...


@runtime_checkable
class MapsValues(Protocol):
    """A store that hands values over memory-mapped, without reading them (DirectoryStore,
    ZipStore): ``mmap=True`` arrays and the server's ranges use it.

    >>> from zarrkit.storage import MemoryStore
    >>> isinstance(MemoryStore(), MapsValues)
    False
    """

    def map_value(self, key: str) -> memoryview | None: ...


@runtime_checkable
class LocatesFiles(Protocol):
    """A store whose values are whole files that another reader may open by path
    (DirectoryStore): the native engine then reads chunks itself, in its own threads.
    ``value_file`` names the file a key's value would be in (it need not exist), after
    checking that the directories on the way stay inside the store; the file itself is
    opened without following a symbolic link, and one is read through the store instead.
    Files are replaced whole by renaming, so such a read sees one version of a value.

    >>> from zarrkit.storage import DirectoryStore, MemoryStore
    >>> import os, tempfile
    >>> store = DirectoryStore(tempfile.mkdtemp())
    >>> store.value_file("a/b") == os.path.join(store.root, "a", "b")
    True
    >>> offers(MemoryStore(), LocatesFiles)
    False
    """

    @property
    def files_root(self) -> str:
        """The directory keys name files in, ending in a separator: the file of a key
        is ``files_root + key`` (POSIX)."""
        ...

    def value_file(self, key: str) -> str: ...


# (open descriptor, file name for messages, offset, length, CRC-32 to check or None)
ValueRange = tuple[int, str, int, int, int | None]


@runtime_checkable
class LocatesRanges(Protocol):
    """A store whose values lie as they are (uncompressed) in one file it holds open, at
    places it knows (ZipStore's stored members): the native engine reads them with pread
    in its own threads, as it reads a DirectoryStore's files. ``value_range(key)`` is the
    value's :data:`ValueRange`, None when the key has no value, or False when the value
    must be read through the store (a compressed member).

    >>> from zarrkit.storage import MemoryStore
    >>> offers(MemoryStore(), LocatesRanges)
    False
    """

    def value_range(self, key: str) -> ValueRange | None | Literal[False]: ...


@dataclass(frozen=True)
class FileWrites:
    """Where a writer that makes files itself puts a batch of values (see
    :class:`WritesFiles`): value ``i`` goes to a new temporary file named
    ``temp_prefix`` + ``i`` in ``temp_directory`` (beside its target when None), which is
    then renamed over ``targets[i]``; the target's missing directories are made first.

    >>> FileWrites(["/d/c/0"], None, ".tmp-1-").targets
    ['/d/c/0']
    """

    targets: list[str]
    temp_directory: str | None
    temp_prefix: str


@runtime_checkable
class WritesFiles(Protocol):
    """A store whose values are whole files that another writer may make (DirectoryStore):
    the native engine then stores encoded chunks itself, in its own threads, as the store
    would (a temporary file renamed over the target). ``file_writes(keys)`` checks the keys
    and the directories on the way as ``set`` does and says where their files go, or gives
    None when the values must go through ``set`` (the store has more to do, such as syncing
    to disk); ``key_locks(keys)`` holds every key's lock for the writes.

    >>> from zarrkit.storage import DirectoryStore, MemoryStore
    >>> import tempfile
    >>> offers(DirectoryStore(tempfile.mkdtemp()), WritesFiles), offers(MemoryStore(), WritesFiles)
    (True, False)
    """

    def file_writes(self, keys: Sequence[str]) -> FileWrites | None: ...

    def key_locks(self, keys: Sequence[str]) -> AbstractContextManager[None]: ...


def offers(store: object, ability: type) -> bool:
    """Whether ``store`` offers the optional ``ability`` (:class:`ReadsInto`,
    :class:`MapsValues`, :class:`LocatesFiles`, :class:`LocatesRanges`,
    :class:`WritesFiles`): the protocol's
    own runtime check, which
    looks for its method, without typing's generic ``isinstance`` machinery (20 µs a
    call, on every read).

    >>> from zarrkit.storage import MemoryStore
    >>> offers(MemoryStore(), MapsValues), offers(MemoryStore(), ReadableStore)
    (False, True)
    """
    methods = _ABILITY_METHODS.get(ability)
    if methods is None:
        methods = _ABILITY_METHODS[ability] = tuple(
            name for name in vars(ability) if not name.startswith("_")
            and callable(getattr(ability, name)))
    return all(callable(getattr(store, name, None)) for name in methods)


_ABILITY_METHODS: dict[type, tuple[str, ...]] = {}


# The fallback create-if-absent of stores that have no atomic one of their own; never held
# together with a key lock, so it cannot deadlock with one.
_create_guard = threading.Lock()


class Store:
    """Base class of zarrkit's stores.

    Subclasses implement ``_get``, ``_set``, ``_delete`` and ``_iter_keys`` (and may override
    any public method with something faster); this class validates keys, enforces
    ``read_only`` and derives the batch and listing methods.

    >>> from zarrkit.storage import MemoryStore
    >>> s = MemoryStore()
    >>> s.set_many({"x/0": b"a", "x/1": b"b", "y": b"c"})
    >>> s.list_dir("x/")
    (['0', '1'], [])
    """

    read_only: bool = False
    supports_listing: bool = True
    supports_writes: bool = True
    supports_deletes: bool = True
    supports_partial_reads: bool = True
    # Each request costs a round trip (HTTP, object stores): a shard wanted whole is
    # fetched with one request rather than an index read and ranges.
    prefers_whole_values: bool = False
    # get_many reads many keys in parallel threads of its own (DirectoryStore through the
    # native engine): callers hand it a whole batch rather than split it across a pool.
    reads_many_in_parallel: bool = False

    # --- to implement -------------------------------------------------------------------
    def _get(self, key: str) -> bytes | None:
        raise NotImplementedError

    def _set(self, key: str, value: Buffer) -> None:
        raise NotImplementedError

    def _delete(self, key: str) -> None:
        raise NotImplementedError

    def _iter_keys(self) -> Iterator[str]:
        raise NotImplementedError

    # --- readable -----------------------------------------------------------------------
    def get(self, key: str) -> bytes | None:
        """Return the value stored under ``key``, or ``None`` if there is none."""
        return self._get(validate_key(key))

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Return ``length`` bytes of ``key``'s value from ``start`` (to the end if None).

        A negative ``start`` counts from the end, as an HTTP suffix range does.
        """
        value = self.get(key)
        if value is None:
            return None
        if start < 0:
            start = max(len(value) + start, 0)
        end = None if length is None else start + length
        return bytes(value[start:end])

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """Return the values of ``keys`` in order (``None`` for a missing key)."""
        if type(self).get is Store.get:
            # The keys checked in one match, then read (a store that redefines get, to
            # count or to wrap reads, still sees every key go through it).
            validate_keys(keys)
            read = self._get
            return [read(key) for key in keys]
        return [self.get(key) for key in keys]

    def get_many_as_completed(self, keys: Sequence[str]
                              ) -> Iterator[tuple[int, bytes | None]]:
        """``(index in keys, value)`` for every key, in the order the values arrive: a
        reader decodes each while the others are still on their way. Stores whose
        ``get_many`` runs requests concurrently (HTTP) yield as each completes; the
        default yields in order after one ``get_many``.

        >>> from zarrkit.storage import MemoryStore
        >>> list(MemoryStore({"a": b"1"}).get_many_as_completed(["a", "b"]))
        [(0, b'1'), (1, None)]
        """
        return enumerate(self.get_many(keys))

    # --- writable -----------------------------------------------------------------------
    def _check_write(self, key: str, value: object) -> None:
        """Refuse a write before any I/O: a read-only store, a bad key, a value that is not
        bytes-like (every store's ``set`` and ``set_if_not_exists`` start here)."""
        self._check_writable(key)
        validate_key(key)
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"store values must be bytes-like, not {type(value).__name__}")

    def _check_writable(self, key: str = "") -> None:
        if self.read_only:
            target = f"write {key!r}" if key else "write"
            raise ReadOnlyError(f"cannot {target}: {self!r} is read-only")

    def set(self, key: str, value: Buffer) -> None:
        """Store ``value`` under ``key``, replacing any previous value."""
        self._check_write(key, value)
        self._set(key, value)

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        """Store ``value`` under ``key`` only if no value is there; return whether it was
        stored. Node documents are created this way, so that creating a node never
        replaces one that another writer made meanwhile.

        This fallback is atomic among the threads of one process only; zarrkit's stores
        override it with what their medium offers (a hard link for files).

        >>> from zarrkit.storage import MemoryStore
        >>> s = MemoryStore()
        >>> s.set_if_not_exists("k", b"a"), s.set_if_not_exists("k", b"b"), s.get("k")
        (True, False, b'a')
        """
        self._check_write(key, value)
        with _create_guard:
            if self.get(key) is not None:
                return False
            self.set(key, value)
            return True

    # --- locks --------------------------------------------------------------------------
    @property
    def lock_identity(self) -> Hashable:
        """What the store's key locks are keyed by: equal for every handle on the same
        data (a directory's resolved path, a ZIP file's inode), so that separately opened
        handles in one process exclude each other. Here, the object itself.

        >>> from zarrkit.storage import MemoryStore
        >>> s = MemoryStore(); s.lock_identity == s.lock_identity
        True
        """
        return (type(self).__name__, id(self))

    def key_lock(self, key: str) -> AbstractContextManager[None]:
        """A context that serialises read-modify-write of ``key`` among every handle on
        this store's data in the process (and among processes, for stores that can).

        >>> from zarrkit.storage import MemoryStore
        >>> with MemoryStore().key_lock("a/0"):
        ...     pass
        """
        return key_lock(self.lock_identity, key)

    def set_many(self, items: Mapping[str, Buffer] | Iterable[tuple[str, Buffer]]) -> None:
        """Store several values; keys are all validated before anything is written."""
        pairs = list(items.items()) if isinstance(items, Mapping) else list(items)
        self._check_writable(pairs[0][0] if pairs else "")
        for key, _ in pairs:
            validate_key(key)
        for key, value in pairs:
            self.set(key, value)

    def delete(self, key: str) -> None:
        """Delete ``key``; deleting a missing key is not an error."""
        self._check_writable(key)
        self._delete(validate_key(key))

    def delete_prefix(self, prefix: str) -> None:
        """Delete every key that starts with ``prefix`` (``""`` empties the store)."""
        self._check_writable(prefix)
        for key in list(self.list_prefix(prefix)):
            self._delete(key)

    # --- listable -----------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        """Iterate over every key in the store."""
        return self._iter_keys()

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Iterate over the keys that start with ``prefix``."""
        validate_prefix(prefix)
        return (key for key in self._iter_keys() if key.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """Return ``(keys, prefixes)`` directly under ``prefix`` (a ``""`` or ``/``-ended
        prefix): the names of values, and the names of deeper levels, both sorted."""
        validate_prefix(prefix)
        keys: set[str] = set()
        prefixes: set[str] = set()
        for key in self.list_prefix(prefix):
            rest = key[len(prefix):]
            head, sep, _ = rest.partition("/")
            (prefixes if sep else keys).add(head)
        return sorted(keys), sorted(prefixes)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def close(self) -> None:
        """Release resources; a closed store must not be used again."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
