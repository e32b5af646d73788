"""Key/value stores and the store protocol.

>>> from zarrkit.storage import MemoryStore
>>> MemoryStore().get("missing") is None
True
"""

from zarrkit.storage.base import ListableStore, ReadableStore, Store, WritableStore
from zarrkit.storage.directory import DirectoryStore
from zarrkit.storage.memory import MemoryStore
from zarrkit.storage.zip import ZipStore

__all__ = [
    "DirectoryStore",
    "ListableStore",
    "MemoryStore",
    "ReadableStore",
    "Store",
    "WritableStore",
    "ZipStore",
]
