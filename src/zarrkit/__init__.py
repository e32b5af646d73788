"""zarrkit: a complete, fast and trustworthy Zarr implementation.

>>> import zarrkit as zk
>>> root = zk.open_group({}, mode="w")
>>> a = root.create_array("raw/img", shape=(4, 4), chunks=(2, 2), dtype="uint16")
>>> a[:2, :] = 7
>>> int(a[...].sum())
56
"""

from zarrkit import errors
from zarrkit.api import (
    consolidate_metadata,
    create_array,
    create_group,
    from_array,
    group,
    open,
    open_array,
    open_group,
)
from zarrkit.codecs.registry import register_codec
from zarrkit.config import config
from zarrkit.convert import convert, migrate_metadata
from zarrkit.hierarchy import Array, Attributes, Group
from zarrkit.storage import DirectoryStore, MemoryStore, Store

__version__ = "0.1.0"

__all__ = [
    "Array",
    "Attributes",
    "DirectoryStore",
    "Group",
    "MemoryStore",
    "Store",
    "config",
    "consolidate_metadata",
    "convert",
    "create_array",
    "create_group",
    "errors",
    "from_array",
    "group",
    "open",
    "open_array",
    "migrate_metadata",
    "open_group",
    "register_codec",
]
