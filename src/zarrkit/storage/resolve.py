"""Turning a store-like argument into a store.

- a ``Store`` is used as is; ``None`` is a new MemoryStore; a ``dict`` a MemoryStore over it;
- a path string or ``pathlib.Path`` (or a ``file://`` URL) is a directory
  (DirectoryStore), except a ``*.zip`` file (ZipStore), a ``*.sqlite``, ``*.sqlite3`` or
  ``*.db`` file (SQLiteStore) and a ``*.lmdb`` or ``*.mdb`` file (LMDBStore); a path with
  one of those suffixes that is an existing directory stays a DirectoryStore;
- ``http://`` and ``https://`` URLs are a read-only HTTPStore;
- ``memory://name`` is an in-process MemoryStore shared by name: every open of
  ``memory://name`` in the process sees the same data, for the life of the process (the
  name is the whole rest of the URL: ``memory://a/b`` is a store of its own, not a part
  of ``memory://a``); ``memory://`` alone is a new, unshared one;
- any other ``protocol://`` URL (``s3://``, ``gs://``, ``az://``, ...) is an FsspecStore.

``storage_options`` configure the URL's store: the file system's options for an
FsspecStore, HTTPStore's keyword arguments (``headers``, ``timeout``, ``retries``, ...)
for ``http(s)://``. Given for anything else, they are refused (TypeError), as nothing
would use them.

>>> from zarrkit.storage import MemoryStore
>>> isinstance(make_store({}, mode="w"), MemoryStore)
True
>>> make_store("memory://resolve-doc", mode="w").set("k", b"v")
>>> make_store("memory://resolve-doc", mode="r").get("k")
b'v'
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zarrkit.errors import ReadOnlyError
from zarrkit.storage.base import Store
from zarrkit.storage.directory import DirectoryStore
from zarrkit.storage.memory import MemoryStore

StoreLike = Store | dict[str, bytes] | str | os.PathLike[str] | None

_ZIP_MODES = {"r": "r", "r+": "a", "a": "a", "w": "w", "w-": "a"}
_SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
_LMDB_SUFFIXES = (".lmdb", ".mdb")
# Modes that must write: a read-only store cannot honour them. ("a" opens what exists.)
_WRITE_MODES = ("r+", "w", "w-")

# The data of the memory://name stores of this process, by name.
_named_memory: dict[str, dict[str, bytes]] = {}
_named_memory_lock = threading.Lock()


def _memory_store(name: str, read_only: bool) -> MemoryStore:
    if not name:
        return MemoryStore(read_only=read_only)
    with _named_memory_lock:
        data = _named_memory.setdefault(name, {})
    return MemoryStore(data, read_only=read_only)


def _url_store(url: str, mode: str, options: Mapping[str, Any] | None) -> Store:
    scheme = url.split("://", 1)[0].lower()
    read_only = mode == "r"
    if scheme in ("http", "https"):
        from zarrkit.storage.http import HTTPStore

        if mode in _WRITE_MODES:
            raise ReadOnlyError(f"cannot open {url!r} with mode {mode!r}: HTTP(S) stores "
                                "are read-only (open it with mode 'r')")
        return HTTPStore(url, **(options or {}))
    if scheme == "memory":
        if options:
            raise TypeError(f"storage_options were given for {url!r}, but a memory:// "
                            "store takes none")
        return _memory_store(url.split("://", 1)[1].strip("/"), read_only)
    from zarrkit.storage.fsspec_store import FsspecStore

    return FsspecStore(url, storage_options=options, read_only=read_only)


def _local_store(text: str, mode: str) -> Store:
    read_only = mode == "r"
    if text.endswith(".zip"):
        from zarrkit.storage.zip import ZipStore

        return ZipStore(text, mode=_ZIP_MODES[mode])
    if text.endswith(_SQLITE_SUFFIXES + _LMDB_SUFFIXES) and not os.path.isdir(text):
        if text.endswith(_SQLITE_SUFFIXES):
            from zarrkit.storage.sqlite import SQLiteStore

            return SQLiteStore(text, read_only=read_only)
        from zarrkit.storage.lmdb import LMDBStore

        return LMDBStore(text, read_only=read_only)
    return DirectoryStore(Path(text), read_only=read_only)


def make_store(store_like: Any, *, mode: str,
               storage_options: Mapping[str, Any] | None = None) -> Store:
    """A Store for ``store_like``, opened read-only when ``mode == "r"``.

    >>> make_store(None, mode="w")
    MemoryStore(<0 keys>)
    >>> make_store("https://example.org/data.zarr", mode="r")
    HTTPStore('https://example.org/data.zarr/')
    >>> make_store("memory://resolve-doc-fsspec", mode="r", storage_options={"x": 1})
    Traceback (most recent call last):
    TypeError: storage_options were given for 'memory://resolve-doc-fsspec', but a \
memory:// store takes none
    """
    if isinstance(store_like, (str, os.PathLike)):
        text = os.fspath(store_like)
        if isinstance(text, str) and "://" in text and not text.startswith("file://"):
            return _url_store(text, mode, storage_options)
    if storage_options:
        raise TypeError(
            f"storage_options were given, but they are only used with a URL "
            f"(s3://, http://, ...), not with {type(store_like).__name__} {store_like!r}")
    if isinstance(store_like, Store):
        return store_like
    if store_like is None:
        return MemoryStore()
    if isinstance(store_like, dict):
        return MemoryStore(store_like, read_only=mode == "r")
    if isinstance(store_like, (str, os.PathLike)):
        return _local_store(os.fspath(store_like).removeprefix("file://"), mode)
    raise TypeError(f"cannot use {type(store_like).__name__} as a store")
