"""Turning a store-like argument into a store.

A ``Store`` is used as is; a ``dict`` becomes a MemoryStore over it; a path string or
``pathlib.Path`` is a directory (``*.zip`` a ZipStore).

>>> from zarrkit.storage import MemoryStore
>>> isinstance(make_store({}, mode="w"), MemoryStore)
True
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from zarrkit.errors import ZarrkitError
from zarrkit.storage.base import Store
from zarrkit.storage.directory import DirectoryStore
from zarrkit.storage.memory import MemoryStore

StoreLike = Store | dict[str, bytes] | str | os.PathLike[str] | None

_ZIP_MODES = {"r": "r", "r+": "a", "a": "a", "w": "w", "w-": "a"}


def make_store(store_like: Any, *, mode: str) -> Store:
    """A Store for ``store_like``, opened read-only when ``mode == "r"``.

    >>> make_store(None, mode="w")
    MemoryStore(<0 keys>)
    """
    read_only = mode == "r"
    if isinstance(store_like, Store):
        return store_like
    if store_like is None:
        return MemoryStore()
    if isinstance(store_like, dict):
        return MemoryStore(store_like, read_only=read_only)
    if isinstance(store_like, (str, os.PathLike)):
        text = os.fspath(store_like)
        if "://" in text and not text.startswith("file://"):
            raise ZarrkitError(f"no store for URL {text!r} yet")
        text = text.removeprefix("file://")
        if text.endswith(".zip"):
            from zarrkit.storage.zip import ZipStore

            return ZipStore(text, mode=_ZIP_MODES[mode])
        return DirectoryStore(Path(text), read_only=read_only)
    raise TypeError(f"cannot use {type(store_like).__name__} as a store")
