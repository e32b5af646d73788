"""zarrkit: a complete, fast and trustworthy Zarr implementation.

>>> import zarrkit as zk
>>> root = zk.open_group({}, mode="w")
>>> a = root.create_array("raw/img", shape=(4, 4), chunks=(2, 2), dtype="uint16")
>>> a[:2, :] = 7
>>> int(a[...].sum())
56
"""

from typing import Any

from zarrkit import dtype, errors
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
from zarrkit.codecs.registry import register_codec, register_codec_v3
from zarrkit.config import config
from zarrkit.convenience import (
    create_hierarchy,
    load,
    open_consolidated,
    save,
    save_array,
    save_group,
    tree,
)
from zarrkit.convert import convert, migrate_metadata
from zarrkit.copying import copy, copy_all, copy_store
from zarrkit.creation_functions import (
    array,
    create,
    empty,
    empty_like,
    full,
    full_like,
    ones,
    ones_like,
    open_like,
    zeros,
    zeros_like,
)
from zarrkit.diagnostics import print_debug_info, set_format, set_log_level
from zarrkit.hierarchy import Array, Attributes, Group
from zarrkit.metadata.chunk_grid import register_chunk_grid
from zarrkit.metadata.chunk_key_encoding import register_chunk_key_encoding
from zarrkit.metadata.dtypes_v3 import register_data_type
from zarrkit.references import Reference
from zarrkit.storage import (
    DirectoryStore,
    FsspecStore,
    LocalStore,
    MemoryStore,
    Store,
    ZipStore,
)

__version__ = "0.1.0"

__all__ = [
    "Array",
    "Attributes",
    "DirectoryStore",
    "FsspecStore",
    "Group",
    "LocalStore",
    "MemoryStore",
    "Reference",
    "Store",
    "ZipStore",
    "array",
    "config",
    "consolidate_metadata",
    "convert",
    "copy",
    "copy_all",
    "copy_store",
    "create",
    "create_array",
    "create_group",
    "create_hierarchy",
    "dtype",
    "empty",
    "empty_like",
    "errors",
    "from_array",
    "full",
    "full_like",
    "group",
    "load",
    "migrate_metadata",
    "ones",
    "ones_like",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "open_like",
    "print_debug_info",
    "register_chunk_grid",
    "register_chunk_key_encoding",
    "register_codec",
    "register_codec_v3",
    "register_data_type",
    "save",
    "save_array",
    "save_group",
    "set_format",
    "set_log_level",
    "tree",
    "zeros",
    "zeros_like",
]


# Dask functions, resolved (and dask imported) on first use, not with zarrkit.
_DASK_FUNCTIONS = ("to_dask", "from_dask", "store")


def __getattr__(name: str) -> Any:
    # zarrkit.models needs pydantic, and zarrkit.daf is a convention few programs use:
    # imported when first used, not with zarrkit.
    if name in ("models", "daf"):
        import importlib

        return importlib.import_module(f"zarrkit.{name}")
    if name in _DASK_FUNCTIONS:
        import importlib

        return getattr(importlib.import_module("zarrkit.dask"), name)
    raise AttributeError(f"module 'zarrkit' has no attribute {name!r}")
