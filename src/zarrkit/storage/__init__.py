"""Key/value stores and the store protocol.

>>> from zarrkit.storage import MemoryStore
>>> MemoryStore().get("missing") is None
True

``LocalStore`` (zarr-python's name) is :class:`DirectoryStore`:

>>> from zarrkit.storage import DirectoryStore, LocalStore
>>> LocalStore is DirectoryStore
True
"""

from typing import TYPE_CHECKING

from zarrkit.storage.base import ListableStore, ReadableStore, Store, WritableStore
from zarrkit.storage.directory import DirectoryStore
from zarrkit.storage.fsspec_store import FsspecStore
from zarrkit.storage.http import HTTPStore
from zarrkit.storage.memory import MemoryStore
from zarrkit.storage.sqlite import SQLiteStore
from zarrkit.storage.zip import ZipStore

# zarr-python's name for a store in a local directory: the same class.
LocalStore = DirectoryStore

if TYPE_CHECKING:
    from zarrkit.storage.lmdb import LMDBStore

__all__ = [
    "DirectoryStore",
    "FsspecStore",
    "HTTPStore",
    "LMDBStore",
    "ListableStore",
    "LocalStore",
    "MemoryStore",
    "ReadableStore",
    "SQLiteStore",
    "Store",
    "WritableStore",
    "ZipStore",
]


def __getattr__(name: str) -> object:
    # LMDBStore needs the optional ``lmdb`` package: imported on first use, so that
    # zarrkit works without it.
    if name == "LMDBStore":
        from zarrkit.storage.lmdb import LMDBStore

        return LMDBStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
