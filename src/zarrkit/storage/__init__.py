"""Key/value stores and the store protocol.

>>> from zarrkit.storage import MemoryStore
>>> MemoryStore().get("missing") is None
True

``LocalStore`` (zarr-python's name) is :class:`DirectoryStore`:

>>> from zarrkit.storage import DirectoryStore, LocalStore
>>> LocalStore is DirectoryStore
True

As in ``zarr.storage``, ``StorePath`` (a node's store and path), ``StoreLike`` (what
functions take as a store), and the wrapping stores ``WrapperStore`` and ``LoggingStore``
are here too:

>>> from zarrkit.storage import LoggingStore, StorePath
>>> str(StorePath(LoggingStore(MemoryStore(), log_level="ERROR"), "a")).endswith("/a")
True
"""

from typing import TYPE_CHECKING

from zarrkit.storage.base import ListableStore, ReadableStore, Store, WritableStore
from zarrkit.storage.directory import DirectoryStore
from zarrkit.storage.fsspec_store import FsspecStore
from zarrkit.storage.http import HTTPStore
from zarrkit.storage.memory import MemoryStore
from zarrkit.storage.resolve import StoreLike
from zarrkit.storage.sqlite import SQLiteStore
from zarrkit.storage.wrapper import LoggingStore, WrapperStore
from zarrkit.storage.zip import ZipStore

# zarr-python's name for a store in a local directory: the same class.
LocalStore = DirectoryStore

if TYPE_CHECKING:
    from zarrkit.hierarchy.nodes import StorePath
    from zarrkit.storage.lmdb import LMDBStore

__all__ = [
    "DirectoryStore",
    "FsspecStore",
    "HTTPStore",
    "LMDBStore",
    "ListableStore",
    "LocalStore",
    "LoggingStore",
    "MemoryStore",
    "ReadableStore",
    "SQLiteStore",
    "Store",
    "StoreLike",
    "StorePath",
    "WrapperStore",
    "WritableStore",
    "ZipStore",
]


def __getattr__(name: str) -> object:
    # LMDBStore needs the optional ``lmdb`` package: imported on first use, so that
    # zarrkit works without it.
    if name == "LMDBStore":
        from zarrkit.storage.lmdb import LMDBStore

        return LMDBStore
    if name == "StorePath":  # defined with the nodes, which import this package
        from zarrkit.hierarchy.nodes import StorePath

        return StorePath
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
