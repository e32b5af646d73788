"""The top-level functions: open, create and consolidate.

>>> import zarrkit as zk
>>> root = zk.open_group({}, mode="w")
>>> a = root.create_array("x", shape=(4,), chunks=(2,), dtype="i4")
>>> zk.open(root.store, path="x").shape
(4,)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrkit.config import config
from zarrkit.errors import (
    ContainsNodeError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
)
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.creation import array_metadata
from zarrkit.hierarchy.group import Group, node_from_found, open_group_node
from zarrkit.hierarchy.nodes import (
    ZARR_JSON,
    FoundNode,
    create_array_node,
    create_group_node,
    find_node,
    read_document,
    require_array,
)
from zarrkit.metadata.consolidated import check_consolidated_v3, parse_consolidated_v2
from zarrkit.metadata.jsonio import dump_json, load_json_object
from zarrkit.metadata.v2 import ZARRAY, ZATTRS, ZGROUP, ZMETADATA
from zarrkit.paths import join_path, key_prefix, normalize_path
from zarrkit.storage.base import Store
from zarrkit.storage.resolve import make_store

_MODES = ("r", "r+", "a", "w", "w-")


def _check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, found {mode!r}")


def _check_format(zarr_format: int | None) -> None:
    if zarr_format not in (None, 2, 3):
        raise MetadataError(f"zarr_format must be 2 or 3, found {zarr_format!r}")


def _load_consolidated(store: Store, path: str, zarr_format: int | None,
                       found: FoundNode | None = None) -> dict[str, Any]:
    """Consolidated metadata of the group at ``path`` as a store key -> document map:
    inline in ``zarr.json`` (format 3) or ``.zmetadata`` (format 2). ``found`` is the
    group as already read, so its ``zarr.json`` is not fetched again."""
    prefix = key_prefix(path)
    if zarr_format in (None, 3):
        key = join_path(path, ZARR_JSON)
        if found is not None and found.zarr_format == 3 and found.document is not None:
            document: Any = found.document
        elif found is not None and found.zarr_format == 2:
            document = None
        else:
            document = read_document(store, key)
        if document is not None and document.get("node_type") == "group":
            inline = document.get("consolidated_metadata")
            if inline is not None:
                if not (isinstance(inline, dict) and isinstance(inline.get("metadata"), dict)):
                    check_consolidated_v3(inline)  # says what is wrong (MetadataError)
                # The entries are checked once, when the group's document is parsed.
                snapshot = {key: document}
                for relative, child in inline["metadata"].items():
                    snapshot[f"{prefix}{relative}/{ZARR_JSON}"] = child
                return snapshot
            if zarr_format == 3:
                raise NodeNotFoundError(f"no consolidated metadata in {key!r}")
    key = join_path(path, ZMETADATA)
    raw = store.get(key)
    if raw is None:
        raise NodeNotFoundError(f"no consolidated metadata at {key!r}")
    metadata = parse_consolidated_v2(load_json_object(raw, key=key), key)
    return {prefix + k: v for k, v in metadata.items()}


def open_group(
    store: Any = None,
    *,
    mode: str = "a",
    path: str | None = None,
    zarr_format: int | None = None,
    consolidated: bool | None = None,
    attributes: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Open a group, creating it when the mode allows.

    ``consolidated=True`` reads all metadata from ``.zmetadata`` with no listing;
    ``None`` uses it when present in read-only mode. ``storage_options`` configure a URL's
    store (``s3://bucket/x.zarr``: credentials, endpoint...; see
    :func:`zarrkit.storage.resolve.make_store`).

    >>> import zarrkit as zk
    >>> g = zk.open_group({}, mode="w", attributes={"title": "demo"})
    >>> g.attrs["title"]
    'demo'
    >>> _ = zk.open_group("memory://api-doc", mode="w", attributes={"n": 1})
    >>> zk.open_group("memory://api-doc", mode="r").attrs["n"]  # the same store, by name
    1
    """
    _check_mode(mode)
    _check_format(zarr_format)
    store_obj = make_store(store, mode=mode, storage_options=storage_options)
    return _open_group(store_obj, normalize_path(path), mode, zarr_format, consolidated,
                       attributes)


def _open_group(store_obj: Store, node_path: str, mode: str, zarr_format: int | None,
                consolidated: bool | None, attributes: dict[str, Any] | None,
                found: FoundNode | None = None) -> Group:
    """:func:`open_group` on a store; ``found`` is the group when already read."""
    if mode == "a" and (store_obj.read_only or consolidated):
        # Nothing may be created in a read-only store (HTTP), and asking for consolidated
        # metadata means the group exists: open it as mode "r"/"r+" would, instead of
        # silently ignoring the snapshot.
        mode = "r" if store_obj.read_only else "r+"
    read_only = mode == "r"
    if mode in ("r", "r+"):
        snapshot = None
        if consolidated or (consolidated is None and mode == "r"):
            try:
                snapshot = _load_consolidated(store_obj, node_path, zarr_format, found)
            except NodeNotFoundError:
                if consolidated:
                    raise
        return open_group_node(store_obj, node_path, read_only=read_only,
                               consolidated=snapshot, zarr_format=zarr_format)
    if mode == "a":
        if found is None:
            found = find_node(store_obj, node_path, zarr_format=zarr_format)
        if found is not None and found.kind == "group":
            group = node_from_found(store_obj, found, read_only=False)
            assert isinstance(group, Group)
            if attributes:
                group.attrs.update(attributes)
            return group
        if found is not None:
            raise ContainsNodeError(f"an array exists at path {node_path!r}, not a group")
    new_format = zarr_format or config.default_zarr_format
    create_group_node(store_obj, node_path, attributes, overwrite=mode == "w",
                      zarr_format=new_format)
    return Group(store_obj, node_path, zarr_format=new_format, attributes=attributes or {})


def group(
    store: Any = None,
    *,
    overwrite: bool = False,
    path: str | None = None,
    zarr_format: int | None = None,
    attributes: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Open or create a group (``overwrite=True`` replaces what is there).

    >>> import zarrkit as zk
    >>> zk.group().name
    '/'
    """
    return open_group(store, mode="w" if overwrite else "a", path=path,
                      zarr_format=zarr_format, attributes=attributes,
                      storage_options=storage_options)


def create_group(store: Any = None, *, path: str | None = None, overwrite: bool = False,
                 attributes: dict[str, Any] | None = None,
                 zarr_format: int | None = None,
                 storage_options: dict[str, Any] | None = None) -> Group:
    """Create a group; an existing node is an error unless ``overwrite``.

    >>> import zarrkit as zk
    >>> zk.create_group({}, path="a/b").path
    'a/b'
    """
    return open_group(store, mode="w" if overwrite else "w-", path=path,
                      zarr_format=zarr_format, attributes=attributes,
                      storage_options=storage_options)


def open_array(
    store: Any = None,
    *,
    mode: str = "a",
    path: str | None = None,
    zarr_format: int | None = None,
    write_empty_chunks: bool | None = None,
    mmap: bool = False,
    storage_options: dict[str, Any] | None = None,
    **create_kwargs: Any,
) -> Array:
    """Open an array; with mode ``w``/``w-`` (or ``a`` when missing), create it from
    ``create_kwargs`` (``shape``, ``dtype``, ...).

    ``mmap=True`` (directory and ZIP stores) maps uncompressed chunks
    instead of reading them: a basic selection inside one chunk returns a read-only view
    of the mapped file (of the whole array, for a single-chunk array), with no copy.
    Compressed chunks are read as usual.

    >>> import zarrkit as zk
    >>> s = {}
    >>> _ = zk.open_array(s, mode="w", shape=(2,), dtype="u1")
    >>> zk.open_array(s, mode="r").read_only
    True
    """
    _check_mode(mode)
    _check_format(zarr_format)
    store_obj = make_store(store, mode=mode, storage_options=storage_options)
    node_path = normalize_path(path)
    existing = None if mode in ("w", "w-") else find_node(store_obj, node_path,
                                                         zarr_format=zarr_format)
    if mode in ("r", "r+") or existing is not None:
        # The document already read is reused: a remote store pays one request per read.
        found = (existing if existing is not None and existing.kind == "array"
                 else require_array(store_obj, node_path, zarr_format=zarr_format))
        return _array_of(store_obj, found, mode, write_empty_chunks, mmap)
    if "shape" not in create_kwargs:
        raise NodeNotFoundError(
            f"no array at path {node_path!r}; give shape and dtype to create one"
        )
    created = create_array(store_obj, name=node_path, overwrite=mode == "w",
                           zarr_format=zarr_format, write_empty_chunks=write_empty_chunks,
                           **create_kwargs)
    if not mmap:
        return created
    return Array(store_obj, node_path, created.metadata, write_empty_chunks=write_empty_chunks,
                 mmap=True)


def _array_of(store: Store, found: FoundNode, mode: str, write_empty_chunks: bool | None,
              mmap: bool) -> Array:
    """The existing array ``found`` (by :func:`find_node`) opened in ``mode``."""
    return Array(store, found.path, found.metadata, read_only=mode == "r",
                 attributes=found.attributes, write_empty_chunks=write_empty_chunks, mmap=mmap)


def open(  # noqa: A001 - zarr-python's name
    store: Any = None,
    *,
    mode: str = "a",
    path: str | None = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array | Group:
    """Open the array or group at ``path``, whichever it is; create a group (or an array,
    when ``shape`` is given) if the mode allows and nothing is there.

    >>> import zarrkit as zk
    >>> isinstance(zk.open({}, mode="w"), zk.Group)
    True
    """
    _check_mode(mode)
    _check_format(zarr_format)
    store_obj = make_store(store, mode=mode, storage_options=storage_options)
    node_path = normalize_path(path)
    found = find_node(store_obj, node_path, zarr_format=zarr_format) if mode != "w" else None
    if found is not None and found.kind == "array" and mode != "w-":
        return _array_of(store_obj, found, mode, kwargs.get("write_empty_chunks"),
                         kwargs.get("mmap", False))
    if (found is not None and found.kind == "array") or (found is None and "shape" in kwargs):
        return open_array(store_obj, mode=mode, path=node_path, zarr_format=zarr_format,
                          **kwargs)
    if found is None and mode in ("r", "r+"):
        raise NodeNotFoundError(f"no array or group at path {node_path!r}")
    unknown = set(kwargs) - {"consolidated", "attributes"}
    if unknown:
        raise TypeError(f"open() of a group got unexpected arguments {sorted(unknown)}")
    return _open_group(store_obj, node_path, mode, zarr_format, kwargs.get("consolidated"),
                       kwargs.get("attributes"), found if mode != "w" else None)


def create_array(
    store: Any = None,
    *,
    name: str | None = None,
    shape: Any,
    dtype: Any = "float64",
    attributes: dict[str, Any] | None = None,
    zarr_format: int | None = None,
    overwrite: bool = False,
    write_empty_chunks: bool | None = None,
    data: Any = None,
    storage_options: dict[str, Any] | None = None,
    **options: Any,
) -> Array:
    """Create an array in ``store`` at ``name``; missing parent groups are created.

    ``options``: ``chunks``, ``shards`` (v3), ``fill_value``, ``order``, ``compressors``
    (or ``compressor``), ``filters``, ``serializer`` (v3), ``dimension_names`` (v3),
    ``dimension_separator``, ``chunk_key_encoding``.

    >>> import zarrkit as zk, numcodecs
    >>> a = zk.create_array({}, name="x", shape=(10, 10), chunks=(5, 5), dtype="<i4",
    ...     compressors=[numcodecs.Blosc("zstd")], filters=[{"id": "delta", "dtype": "<i4"}],
    ...     dimension_separator="/", zarr_format=2)
    >>> a.metadata.dimension_separator, a.filters[0].codec_id
    ('/', 'delta')
    """
    _check_format(zarr_format)
    store_obj = make_store(store, mode="a", storage_options=storage_options)
    path = normalize_path(name)
    metadata = array_metadata(zarr_format=zarr_format or config.default_zarr_format, shape=shape,
                              dtype=dtype, attributes=attributes, **options)
    create_array_node(store_obj, path, metadata, attributes, overwrite=overwrite)
    array = Array(store_obj, path, metadata, attributes=attributes or {},
                  write_empty_chunks=write_empty_chunks)
    if data is not None:
        array[...] = data
    return array


def from_array(
    store: Any = None,
    *,
    data: Any,
    name: str | None = None,
    chunks: Any = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Array:
    """Create an array holding a copy of ``data`` (a numpy array, a zarrkit Array or
    anything ``numpy.asarray`` accepts); shape, dtype and, for an Array, chunks follow it.

    >>> import zarrkit as zk
    >>> zk.from_array({}, data=np.arange(5), chunks=(2,))[:]
    array([0, 1, 2, 3, 4])
    """
    if isinstance(data, Array):
        if chunks is None:
            chunks = data.chunks
        kwargs.setdefault("fill_value", data.fill_value)
        kwargs.setdefault("order", data.order)
        kwargs.setdefault("attributes", data.attrs.asdict())
        source = data[...]
    else:
        source = np.asarray(data)
    return create_array(store, name=name, shape=np.shape(source),
                        dtype=kwargs.pop("dtype", source.dtype), chunks=chunks, data=source,
                        storage_options=storage_options, **kwargs)


def consolidate_metadata(store: Any, path: str = "", zarr_format: int | None = None, *,
                         storage_options: dict[str, Any] | None = None) -> Group:
    """Gather the metadata of every node under ``path`` so the hierarchy opens with no
    listing, as zarr-python does: inline ``consolidated_metadata`` in the group's
    ``zarr.json`` (format 3) or a ``.zmetadata`` document (format 2). Return the group.

    >>> import zarrkit as zk
    >>> s = {}
    >>> _ = zk.group(s).create_array("a", shape=(1,), dtype="u1")
    >>> g = zk.consolidate_metadata(s)
    >>> again = zk.open_group(s, mode="r", consolidated=True)
    >>> again.consolidated, list(again)
    (True, ['a'])
    """
    store_obj = make_store(store, mode="a", storage_options=storage_options)
    group_path = normalize_path(path)
    prefix = key_prefix(group_path)
    found = find_node(store_obj, group_path, zarr_format=zarr_format)
    if found is None or found.kind != "group":
        raise GroupNotFoundError(f"no group at path {group_path!r} to consolidate")
    names = (ZARR_JSON,) if found.zarr_format == 3 else (ZARRAY, ZGROUP, ZATTRS)
    keys = sorted(
        key for key in store_obj.list_prefix(prefix)  # type: ignore[attr-defined]
        if key.rsplit("/", 1)[-1] in names and key != join_path(group_path, ZARR_JSON)
    )
    documents: dict[str, Any] = {}
    for key, raw in zip(keys, store_obj.get_many(keys), strict=True):
        if raw is not None:
            documents[key[len(prefix):]] = load_json_object(raw, key=key)
    if found.zarr_format == 3:
        inline = {}
        for relative_key, document in documents.items():
            if document.get("node_type") == "group":
                # Nested groups' own snapshots would repeat their subtrees.
                document = {**document, "consolidated_metadata": None}
            inline[relative_key.rsplit("/", 1)[0]] = document
        group_document = found.metadata.to_json()
        group_document["consolidated_metadata"] = {
            "kind": "inline", "must_understand": False, "metadata": inline,
        }
        store_obj.set(join_path(group_path, ZARR_JSON), dump_json(group_document))
    else:
        store_obj.set(
            join_path(group_path, ZMETADATA),
            dump_json({"metadata": documents, "zarr_consolidated_format": 1}),
        )
    return open_group_node(store_obj, group_path, read_only=False)


__all__ = [
    "consolidate_metadata",
    "create_array",
    "create_group",
    "from_array",
    "group",
    "open",
    "open_array",
    "open_group",
    "read_document",
]
