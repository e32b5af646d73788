"""The top-level functions: open, create and consolidate.

>>> import zarrkit as zk
>>> root = zk.open_group({}, mode="w")
>>> a = root.create_array("x", shape=(4,), chunks=(2,), dtype="i4")
>>> zk.open(root.store, path="x").shape
(4,)
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np

from zarrkit.config import config as settings
from zarrkit.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    ContainsNodeError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
)
from zarrkit.hierarchy.accessors import (
    READ_CONFIG_KEYS,
    ArrayConfig,
    array_config_dict,
    check_array_config_keys,
)
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.consolidated import snapshot_entry, with_snapshot
from zarrkit.hierarchy.creation import array_metadata, normalize_shape
from zarrkit.hierarchy.group import Group, node_from_found, open_group_node
from zarrkit.hierarchy.nodes import (
    DEFAULT,
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
from zarrkit.storage.resolve import StoreLike, make_store

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


def _format_of(zarr_format: int | None, zarr_version: int | None) -> int | None:
    """``zarr_format``, or zarr-python's deprecated ``zarr_version`` in its place."""
    if zarr_version is not None:
        warnings.warn("zarr_version is deprecated, use zarr_format", DeprecationWarning,
                      stacklevel=3)
        if zarr_format is not None and zarr_format != zarr_version:
            raise MetadataError(
                f"zarr_format {zarr_format} and zarr_version {zarr_version} disagree")
        zarr_format = zarr_version
    _check_format(zarr_format)
    return zarr_format


def _specific_exists_error(store: Store, path: str, error: ContainsNodeError) -> Exception:
    """``error`` as zarr-python names it: ContainsArrayError or ContainsGroupError after
    what is at ``path``; as it was when something else stands in the way."""
    if isinstance(error, (ContainsArrayError, ContainsGroupError)):
        return error
    found = find_node(store, path)
    if found is None:
        return error
    kind = ContainsArrayError if found.kind == "array" else ContainsGroupError
    return kind(f"{'an array' if found.kind == 'array' else 'a group'} exists in store "
                f"{store!r} at path {path or '/'!r}")


def _config_write_empty_chunks(config: dict[str, Any] | None,
                               write_empty_chunks: bool | None) -> bool | None:
    """The ``write_empty_chunks`` of zarr-python's array ``config`` (a given
    ``write_empty_chunks`` wins)."""
    if config is None:
        return write_empty_chunks
    check_array_config_keys(config)
    if write_empty_chunks is not None:
        return write_empty_chunks
    return config.get("write_empty_chunks")


def _with_runtime_config(array: Array, config: dict[str, Any] | None,
                         config_order: str | None) -> Array:
    """``array`` with the read settings of zarr-python's array ``config`` and the runtime
    order ``config_order``, when they are given."""
    runtime = {key: value for key, value in (config or {}).items() if key in READ_CONFIG_KEYS}
    if config_order is not None:
        runtime["order"] = config_order
    return array.with_config(runtime) if runtime else array


def _new_array(
    store_obj: Store, path: str, *, shape: Any, dtype: Any, zarr_format: int | None,
    overwrite: bool, attributes: dict[str, Any] | None, write_empty_chunks: bool | None,
    config: dict[str, Any] | None, order: str | None, mmap: bool = False,
    **options: Any,
) -> Array:
    """Create the array at ``path`` from normalized ``create_array`` arguments."""
    # ``order`` is the stored order of a format-2 array; the config's order is that of
    # what reads return (format 3; format 2 reads keep the stored order), as in zarr-python.
    # zarr-python's global ``array.order`` is also the runtime order of new arrays.
    config_order = (config or {}).get("order") or (
        None if settings.order == "C" else settings.order)
    if order is None:
        order = settings.order
    options = {k: v for k, v in options.items() if v is not DEFAULT}
    metadata = array_metadata(zarr_format=zarr_format or settings.default_zarr_format,
                              shape=shape, dtype=dtype, attributes=attributes, order=order,
                              **options)
    try:
        create_array_node(store_obj, path, metadata, attributes, overwrite=overwrite)
    except ContainsNodeError as error:
        raise _specific_exists_error(store_obj, path, error) from error
    array = Array(store_obj, path, metadata, attributes=attributes or {},
                  write_empty_chunks=_config_write_empty_chunks(config, write_empty_chunks),
                  mmap=mmap)
    return _with_runtime_config(array, config, config_order)




def open_group(
    store: StoreLike = None,
    *,
    mode: str = "a",
    cache_attrs: bool | None = None,
    synchronizer: Any = None,
    path: str | None = None,
    chunk_store: StoreLike = None,
    storage_options: dict[str, Any] | None = None,
    zarr_version: int | None = None,
    zarr_format: int | None = None,
    meta_array: Any = None,
    attributes: dict[str, Any] | None = None,
    use_consolidated: bool | str | None = None,
    consolidated: bool | None = None,
) -> Group:
    """Open a group, creating it when the mode allows.

    Consolidated metadata (``.zmetadata``, or inline in a format-3 ``zarr.json``) is used
    when present, as zarr-python does: ``use_consolidated=None`` (the default) reads it in
    every mode that opens an existing group, ``True`` requires it, ``False`` ignores it;
    ``consolidated`` is zarrkit's older name for the same switch. ``storage_options``
    configure a URL's store (``s3://bucket/x.zarr``: credentials, endpoint...; see
    :func:`zarrkit.storage.resolve.make_store`). ``cache_attrs``, ``synchronizer``,
    ``chunk_store`` and ``meta_array`` are accepted for zarr-python's sake and have no effect.

    >>> import zarrkit as zk
    >>> g = zk.open_group({}, mode="w", attributes={"title": "demo"})
    >>> g.attrs["title"]
    'demo'
    >>> _ = zk.open_group("memory://api-doc", mode="w", attributes={"n": 1})
    >>> zk.open_group("memory://api-doc", mode="r").attrs["n"]  # the same store, by name
    1
    """
    _check_mode(mode)
    zarr_format = _format_of(zarr_format, zarr_version)
    if consolidated is None and use_consolidated is not None:
        consolidated = bool(use_consolidated)
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
        if consolidated or consolidated is None:
            try:
                snapshot = _load_consolidated(store_obj, node_path, zarr_format, found)
            except NodeNotFoundError:
                if consolidated:
                    raise
        return open_group_node(store_obj, node_path, read_only=read_only,
                               consolidated=snapshot, zarr_format=zarr_format,
                               without_consolidated=consolidated is False)
    if mode == "a":
        if found is None:
            found = find_node(store_obj, node_path, zarr_format=zarr_format)
        if found is not None and found.kind == "group":
            opened: Array | Group
            if consolidated is None:
                # zarr-python reads consolidated metadata, when there is some, in every
                # mode that opens a group.
                opened = _open_group(store_obj, node_path, "r+", zarr_format, None, None,
                                     found)
            else:
                opened = node_from_found(store_obj, found, read_only=False)
            group = opened
            assert isinstance(group, Group)
            if attributes:
                group.attrs.update(attributes)
            return group
        if found is not None:
            raise ContainsArrayError(f"an array exists at path {node_path!r}, not a group")
    new_format = zarr_format or settings.default_zarr_format
    try:
        create_group_node(store_obj, node_path, attributes, overwrite=mode == "w",
                          zarr_format=new_format)
    except ContainsNodeError as error:
        raise _specific_exists_error(store_obj, node_path, error) from error
    return Group(store_obj, node_path, zarr_format=new_format, attributes=attributes or {})


def group(
    store: StoreLike = None,
    *,
    overwrite: bool = False,
    chunk_store: StoreLike = None,
    cache_attrs: bool | None = None,
    synchronizer: Any = None,
    path: str | None = None,
    zarr_version: int | None = None,
    zarr_format: int | None = None,
    meta_array: Any = None,
    attributes: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Open or create a group (``overwrite=True`` replaces what is there).

    >>> import zarrkit as zk
    >>> zk.group().name
    '/'
    """
    return open_group(store, mode="w" if overwrite else "a", path=path,
                      zarr_format=_format_of(zarr_format, zarr_version),
                      attributes=attributes, storage_options=storage_options)


def create_group(store: StoreLike = None, *, path: str | None = None,
                 zarr_format: int | None = None, overwrite: bool = False,
                 attributes: dict[str, Any] | None = None,
                 storage_options: dict[str, Any] | None = None) -> Group:
    """Create a group; an existing node is an error (ContainsArrayError or
    ContainsGroupError) unless ``overwrite``.

    >>> import zarrkit as zk
    >>> zk.create_group({}, path="a/b").path
    'a/b'
    """
    return open_group(store, mode="w" if overwrite else "w-", path=path,
                      zarr_format=zarr_format, attributes=attributes,
                      storage_options=storage_options)


def open_array(
    store: StoreLike = None,
    *,
    mode: str = "a",
    zarr_version: int | None = None,
    zarr_format: int | None = None,
    path: str | None = None,
    storage_options: dict[str, Any] | None = None,
    shape: Any = None,
    chunks: Any = None,
    dtype: Any = None,
    compressor: Any = "auto",
    fill_value: Any = DEFAULT,
    order: str | None = None,
    synchronizer: Any = None,
    overwrite: bool = False,
    filters: Any = None,
    cache_metadata: bool | None = None,
    cache_attrs: bool | None = None,
    read_only: bool | None = None,
    object_codec: Any = None,
    dimension_separator: str | None = None,
    write_empty_chunks: bool | None = None,
    meta_array: Any = None,
    attributes: dict[str, Any] | None = None,
    chunk_shape: Any = None,
    chunk_key_encoding: Any = None,
    codecs: Any = None,
    dimension_names: Any = None,
    config: ArrayConfig | dict[str, Any] | None = None,
    chunk_store: StoreLike = None,
    compressors: Any = "auto",
    shards: Any = None,
    serializer: Any = "auto",
    mmap: bool = False,
) -> Array:
    """Open an array; with mode ``w``/``w-`` (or ``a`` when missing), create it from the
    arguments of :func:`create` (``shape``, ``dtype``, ``chunks``...).

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
    config = array_config_dict(config)
    _check_mode(mode)
    zarr_format = _format_of(zarr_format, zarr_version)
    store_obj = make_store(store, mode=mode, storage_options=storage_options)
    node_path = normalize_path(path)
    write_empty_chunks = _config_write_empty_chunks(config, write_empty_chunks)
    existing = None if mode in ("w", "w-") else find_node(store_obj, node_path,
                                                         zarr_format=zarr_format)
    if mode in ("r", "r+") or existing is not None:
        # The document already read is reused: a remote store pays one request per read.
        found = (existing if existing is not None and existing.kind == "array"
                 else require_array(store_obj, node_path, zarr_format=zarr_format))
        return _array_of(store_obj, found, "r" if read_only else mode, write_empty_chunks,
                         mmap, config)
    if shape is None:
        raise ArrayNotFoundError(
            f"no array at path {node_path!r}; give shape and dtype to create one"
        )
    return _new_array(
        store_obj, node_path, shape=shape, dtype="float64" if dtype is None else dtype,
        zarr_format=zarr_format, overwrite=overwrite or mode == "w", attributes=attributes,
        write_empty_chunks=write_empty_chunks, config=config, order=order, mmap=mmap,
        chunks=chunks if chunk_shape is None else chunk_shape, compressor=compressor,
        compressors=compressors, fill_value=fill_value,
        filters=_with_object_codec(filters, object_codec),
        dimension_separator=dimension_separator,
        chunk_key_encoding=_chunk_key_encoding(chunk_key_encoding),
        codecs=codecs, dimension_names=dimension_names,
        shards=DEFAULT if shards is None else shards,
        serializer=DEFAULT if serializer == "auto" else serializer,
    )


def _with_object_codec(filters: Any, object_codec: Any) -> Any:
    """zarr-python 2's ``object_codec``: the first filter of an object array."""
    if object_codec is None:
        return None if isinstance(filters, str) and filters == "auto" else filters
    rest = [] if filters is None or isinstance(filters, str) else list(filters)
    return [object_codec, *rest]


def _chunk_key_encoding(value: Any) -> Any:
    """zarr-python's tuple form ``("default", "/")`` as a chunk key encoding document."""
    if isinstance(value, tuple) and len(value) == 2:
        return {"name": value[0], "configuration": {"separator": value[1]}}
    if isinstance(value, dict) and "separator" in value and "configuration" not in value:
        return {"name": value.get("name", "default"),
                "configuration": {"separator": value["separator"]}}
    return value


def _array_of(store: Store, found: FoundNode, mode: str, write_empty_chunks: bool | None,
              mmap: bool, config: dict[str, Any] | None = None) -> Array:
    """The existing array ``found`` (by :func:`find_node`) opened in ``mode``, with the
    runtime ``config`` given (zarr-python 3.4 applies it to existing arrays too)."""
    array = Array(store, found.path, found.metadata, read_only=mode == "r",
                  attributes=found.attributes, write_empty_chunks=write_empty_chunks,
                  mmap=mmap)
    return _with_runtime_config(array, config, (config or {}).get("order"))


def open(  # noqa: A001 - zarr-python's name
    store: StoreLike = None,
    *,
    mode: str | None = None,
    zarr_version: int | None = None,
    zarr_format: int | None = None,
    path: str | None = None,
    storage_options: dict[str, Any] | None = None,
    shape: Any = None,
    chunks: Any = None,
    dtype: Any = None,
    compressor: Any = "auto",
    fill_value: Any = DEFAULT,
    order: str | None = None,
    synchronizer: Any = None,
    overwrite: bool = False,
    filters: Any = None,
    cache_metadata: bool | None = None,
    cache_attrs: bool | None = None,
    read_only: bool | None = None,
    object_codec: Any = None,
    dimension_separator: str | None = None,
    write_empty_chunks: bool | None = None,
    meta_array: Any = None,
    attributes: dict[str, Any] | None = None,
    chunk_shape: Any = None,
    chunk_key_encoding: Any = None,
    codecs: Any = None,
    dimension_names: Any = None,
    config: ArrayConfig | dict[str, Any] | None = None,
    chunk_store: StoreLike = None,
    compressors: Any = "auto",
    shards: Any = None,
    serializer: Any = "auto",
    use_consolidated: bool | str | None = None,
    consolidated: bool | None = None,
    mmap: bool = False,
) -> Array | Group:
    """Open the array or group at ``path``, whichever it is; create a group (or an array,
    when ``shape`` is given) if the mode allows and nothing is there. ``mode`` None is
    ``"r"`` for a read-only store, else ``"a"``. The array arguments are those of
    :func:`open_array`, the group ones those of :func:`open_group`.

    >>> import zarrkit as zk
    >>> isinstance(zk.open({}, mode="w"), zk.Group)
    True
    """
    config = array_config_dict(config)
    if mode is None:
        mode = "r" if isinstance(store, Store) and store.read_only else "a"
    _check_mode(mode)
    zarr_format = _format_of(zarr_format, zarr_version)
    store_obj = make_store(store, mode=mode, storage_options=storage_options)
    node_path = normalize_path(path)
    found = find_node(store_obj, node_path, zarr_format=zarr_format) if mode != "w" else None
    if found is not None and found.kind == "array" and mode != "w-":
        return _array_of(store_obj, found, "r" if read_only else mode,
                         _config_write_empty_chunks(config, write_empty_chunks), mmap, config)
    if (found is not None and found.kind == "array") or (found is None and shape is not None):
        return open_array(
            store_obj, mode=mode, path=node_path, zarr_format=zarr_format, shape=shape,
            chunks=chunks, dtype=dtype, compressor=compressor, fill_value=fill_value,
            order=order, overwrite=overwrite, filters=filters, read_only=read_only,
            object_codec=object_codec, dimension_separator=dimension_separator,
            write_empty_chunks=write_empty_chunks, attributes=attributes,
            chunk_shape=chunk_shape, chunk_key_encoding=chunk_key_encoding, codecs=codecs,
            dimension_names=dimension_names, config=config, compressors=compressors,
            shards=shards, serializer=serializer, mmap=mmap)
    if found is None and mode in ("r", "r+"):
        raise NodeNotFoundError(f"no array or group at path {node_path!r}")
    if consolidated is None and use_consolidated is not None:
        consolidated = bool(use_consolidated)
    return _open_group(store_obj, node_path, mode, zarr_format, consolidated,
                       attributes, found if mode != "w" else None)


def create_array(
    store: StoreLike = None,
    *,
    name: str | None = None,
    shape: Any = None,
    dtype: Any = None,
    data: Any = None,
    chunks: Any = "auto",
    shards: Any = None,
    filters: Any = "auto",
    compressors: Any = "auto",
    serializer: Any = "auto",
    fill_value: Any = DEFAULT,
    order: str | None = None,
    zarr_format: int | None = None,
    attributes: dict[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    dimension_names: Any = None,
    storage_options: dict[str, Any] | None = None,
    overwrite: bool = False,
    config: ArrayConfig | dict[str, Any] | None = None,
    write_data: bool = True,
    compressor: Any = "auto",
    dimension_separator: str | None = None,
    write_empty_chunks: bool | None = None,
    index_location: str = "end",
) -> Array:
    """Create an array in ``store`` at ``name``; missing parent groups are created.

    As in zarr-python: ``data`` gives the shape, dtype and values (``write_data=False``
    keeps only its shape and dtype); ``chunks="auto"`` guesses a chunk shape as zarr-python
    does; ``shards`` (format 3) makes ``chunks`` the inner chunks; ``compressors`` (or
    zarr-python 2's ``compressor``), ``filters`` and ``serializer`` (format 3) choose the
    codecs (``"auto"``: zstd, and the filters an object dtype needs); ``chunk_key_encoding``
    is a document such as ``{"name": "v2", "separator": "."}``; ``config`` is
    ``{"write_empty_chunks": ..., "order": ...}``. ``zarr_format`` None is
    ``zarrkit.config.default_zarr_format`` (3). An existing node is an error
    (ContainsArrayError, ContainsGroupError) unless ``overwrite``.

    >>> import zarrkit as zk, numcodecs
    >>> a = zk.create_array({}, name="x", shape=(10, 10), chunks=(5, 5), dtype="<i4",
    ...     compressors=[numcodecs.Blosc("zstd")], filters=[{"id": "delta", "dtype": "<i4"}],
    ...     dimension_separator="/", zarr_format=2)
    >>> a.metadata.dimension_separator, a.filters[0].codec_id
    ('/', 'delta')
    >>> zk.create_array({}, data=np.arange(3)).dtype
    dtype('int64')
    """
    config = array_config_dict(config)
    zarr_format = _format_of(zarr_format, None)
    store_obj = make_store(store, mode="a", storage_options=storage_options)
    source = None
    if data is not None:
        source = data[...] if isinstance(data, Array) else np.asanyarray(data)
        if shape is not None and normalize_shape(shape) != source.shape:
            raise MetadataError(f"shape {shape} differs from the shape {source.shape} of data")
        shape = source.shape
        dtype = source.dtype if dtype is None else dtype
    elif shape is None:
        raise TypeError("create_array() needs shape (and dtype), or data")
    array = _new_array(
        store_obj, normalize_path(name), shape=shape,
        dtype="float64" if dtype is None else dtype, zarr_format=zarr_format,
        overwrite=overwrite, attributes=attributes, write_empty_chunks=write_empty_chunks,
        config=config, order=order, chunks=chunks, compressors=compressors,
        compressor=compressor, filters=_with_object_codec(filters, None),
        fill_value=fill_value, dimension_separator=dimension_separator,
        chunk_key_encoding=_chunk_key_encoding(chunk_key_encoding),
        dimension_names=dimension_names,
        shards=DEFAULT if shards is None else shards,
        serializer=DEFAULT if serializer == "auto" else serializer,
        index_location=DEFAULT if index_location == "end" else index_location,
    )
    if source is not None and write_data:
        array[...] = source
    return array


def _kept(value: Any, kept: Any) -> Any:
    return kept if isinstance(value, str) and value == "keep" else value


def from_array(
    store: StoreLike = None,
    *,
    data: Any,
    write_data: bool = True,
    name: str | None = None,
    chunks: Any = "keep",
    shards: Any = "keep",
    filters: Any = "keep",
    compressors: Any = "keep",
    serializer: Any = "keep",
    fill_value: Any = DEFAULT,
    order: str | None = None,
    zarr_format: int | None = None,
    attributes: dict[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    dimension_names: Any = None,
    storage_options: dict[str, Any] | None = None,
    overwrite: bool = False,
    config: ArrayConfig | dict[str, Any] | None = None,
    dtype: Any = None,
    write_empty_chunks: bool | None = None,
) -> Array:
    """Create an array holding a copy of ``data`` (a numpy array, a zarrkit Array or
    anything ``numpy.asarray`` accepts). As in zarr-python, ``"keep"`` (the default of
    ``chunks``, ``shards``, ``filters``, ``compressors``, ``serializer``) takes the setting
    of a zarrkit Array source of the same format (``"auto"`` otherwise); order, chunk key
    encoding, dimension names and format follow such a source when not given, and (as in
    zarr-python 3.4) so do its fill value and a deep copy of its attributes;
    ``fill_value=None`` is the data type's default and ``attributes={}`` none. zarr-python
    refuses ``overwrite=True`` onto a path that overlaps the source (it deletes before it
    copies); zarrkit reads the source first, so the copy is whole.

    >>> import zarrkit as zk
    >>> zk.from_array({}, data=np.arange(5), chunks=(2,))[:]
    array([0, 1, 2, 3, 4])
    """
    config = array_config_dict(config)
    keep: dict[str, Any] = {"chunks": "auto", "shards": None, "filters": "auto",
                            "compressors": "auto", "serializer": "auto"}
    codecs = None
    if isinstance(data, Array):
        metadata = data.metadata
        zarr_format = zarr_format or data.zarr_format
        if fill_value is DEFAULT:
            fill_value = data.fill_value
        if attributes is None:
            attributes = copy.deepcopy(dict(data.attrs))
        order = order or data.order
        dimension_names = data.dimension_names if dimension_names is None else dimension_names
        same_format = zarr_format == data.zarr_format
        if same_format and chunk_key_encoding is None:
            chunk_key_encoding = (metadata.chunk_key_encoding.to_json() if zarr_format == 3
                                  else {"name": "v2", "separator":
                                        metadata.dimension_separator})
        keep["chunks"], keep["shards"] = data.chunks, data.shards
        if same_format:
            if zarr_format == 2:
                keep["filters"] = metadata.filters
                keep["compressors"] = metadata.compressor
            elif all(isinstance(v, str) and v == "keep"
                     for v in (shards, filters, compressors, serializer)):
                # The whole chain as stored (sharding included), on the stored grid.
                codecs, keep["chunks"] = metadata.codecs, tuple(metadata.chunks)
            else:
                keep.update(filters=data.filters, compressors=data.compressors,
                            serializer=data.serializer)
        source = data[...]
    else:
        source = np.asanyarray(data)
    if fill_value is DEFAULT:
        fill_value = 0
    store_obj = make_store(store, mode="a", storage_options=storage_options)
    if codecs is not None and isinstance(chunks, str) and chunks == "keep":
        array = _new_array(
            store_obj, normalize_path(name), shape=source.shape,
            dtype=source.dtype if dtype is None else dtype, zarr_format=zarr_format,
            overwrite=overwrite, attributes=attributes,
            write_empty_chunks=write_empty_chunks, config=config, order=order,
            chunks=keep["chunks"], codecs=codecs, fill_value=fill_value,
            chunk_key_encoding=_chunk_key_encoding(chunk_key_encoding),
            dimension_names=dimension_names)
        if write_data:
            array[...] = source
        return array
    return create_array(
        store_obj, name=name, data=source, dtype=dtype, write_data=write_data,
        chunks=_kept(chunks, keep["chunks"]), shards=_kept(shards, keep["shards"]),
        filters=_kept(filters, keep["filters"]),
        compressors=_kept(compressors, keep["compressors"]),
        serializer=_kept(serializer, keep["serializer"]), fill_value=fill_value,
        order=order, zarr_format=zarr_format, attributes=attributes,
        chunk_key_encoding=chunk_key_encoding, dimension_names=dimension_names,
        overwrite=overwrite, config=config, write_empty_chunks=write_empty_chunks)


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
        # Sorted by node path, as zarr-python lists them ("a" before "a/b").
        inline = dict(sorted((relative_key.rsplit("/", 1)[0], snapshot_entry(document))
                             for relative_key, document in documents.items()))
        group_document = with_snapshot(found.metadata.to_json(), inline)
        store_obj.set(join_path(group_path, ZARR_JSON), dump_json(group_document))
    else:
        store_obj.set(
            join_path(group_path, ZMETADATA),
            dump_json({"metadata": documents, "zarr_consolidated_format": 1}, compact=True),
        )
    # As zarr-python's, the group returned reads its members through the new snapshot.
    return _open_group(store_obj, group_path, "r+", found.zarr_format, True, None)


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
