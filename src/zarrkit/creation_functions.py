"""zarr-python's numpy-style creation functions: ``create``, ``array``, ``zeros``, ``ones``,
``full``, ``empty``, their ``*_like`` forms and ``open_like``.

They take zarr-python's (and zarr-python 2's) arguments and store what zarr-python stores
for the same call. Without ``store`` the array lives in memory.

>>> import zarrkit as zk
>>> z = zk.zeros((4, 4), chunks=(2, 2), dtype="i2")
>>> int(z[...].sum()), z.chunks
(0, (2, 2))
>>> zk.full_like(z, fill_value=7)[0, 0]
np.int16(7)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrkit.api import open_array
from zarrkit.config import config
from zarrkit.hierarchy.accessors import ArrayConfig
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.nodes import DEFAULT
from zarrkit.storage.resolve import StoreLike


def create(
    shape: Any,
    *,
    chunks: Any = None,
    dtype: Any = None,
    compressor: Any = "auto",
    fill_value: Any = DEFAULT,
    order: str | None = None,
    store: StoreLike = None,
    synchronizer: Any = None,
    overwrite: bool = False,
    path: str | None = None,
    chunk_store: StoreLike = None,
    filters: Any = None,
    cache_metadata: bool | None = None,
    cache_attrs: bool | None = None,
    read_only: bool | None = None,
    object_codec: Any = None,
    dimension_separator: str | None = None,
    write_empty_chunks: bool | None = None,
    zarr_version: int | None = None,
    zarr_format: int | None = None,
    meta_array: Any = None,
    attributes: dict[str, Any] | None = None,
    chunk_shape: Any = None,
    chunk_key_encoding: Any = None,
    codecs: Any = None,
    dimension_names: Any = None,
    storage_options: dict[str, Any] | None = None,
    config: ArrayConfig | dict[str, Any] | None = None,
    mode: str | None = None,
    data: Any = None,
    compressors: Any = "auto",
    shards: Any = None,
    serializer: Any = "auto",
) -> Array:
    """Create an array (zarr-python's ``zarr.create``): ``chunks`` None guesses a chunk
    shape, ``dtype`` None is float64, ``codecs`` (format 3) is the whole codec chain,
    ``chunk_key_encoding`` may be zarr-python's tuple ``("default", "/")``. An existing
    node is an error unless ``overwrite``. ``synchronizer``, ``chunk_store``,
    ``cache_metadata``, ``cache_attrs`` and ``meta_array`` are accepted and have no effect.
    ``mode`` None is ``"a"``; ``data`` (zarr-python 3.4) is written into the new array,
    whose shape and data type it does not set.

    >>> import zarrkit as zk
    >>> z = zk.create((10,), chunks=5, dtype="u1", fill_value=3, zarr_format=2)
    >>> z.fill_value, z.metadata.compressor
    (np.uint8(3), {'id': 'zstd', 'level': 0})
    >>> zk.create((3,), dtype="i2", data=[1, 2, 3])[...]
    array([1, 2, 3], dtype=int16)
    """
    if read_only:
        raise ValueError("read_only=True does not apply to a new array; open it with mode='r'")
    if mode is None:
        mode = "a"
    array = open_array(
        store, mode="w" if overwrite else ("w-" if mode == "a" else mode), path=path,
        zarr_version=zarr_version, zarr_format=zarr_format,
        storage_options=storage_options, shape=shape, chunks=chunks, dtype=dtype,
        compressor=compressor, fill_value=fill_value, order=order, filters=filters,
        object_codec=object_codec, dimension_separator=dimension_separator,
        write_empty_chunks=write_empty_chunks, attributes=attributes,
        chunk_shape=chunk_shape, chunk_key_encoding=chunk_key_encoding, codecs=codecs,
        dimension_names=dimension_names, config=config, compressors=compressors,
        shards=shards, serializer=serializer)
    if data is not None:
        array[...] = data
    return array


def empty(shape: Any, **kwargs: Any) -> Array:
    """A new array whose elements were never written (they read as its fill value, 0
    unless ``fill_value`` says otherwise); ``kwargs`` are those of :func:`create`.

    >>> import zarrkit as zk
    >>> zk.empty((2,), dtype="u1").shape
    (2,)
    """
    return create(shape=shape, **kwargs)


def zeros(shape: Any, **kwargs: Any) -> Array:
    """A new array of zeros; ``kwargs`` are those of :func:`create`.

    >>> import zarrkit as zk
    >>> zk.zeros(3)[...]
    array([0., 0., 0.])
    """
    return create(shape=shape, fill_value=0, **kwargs)


def ones(shape: Any, **kwargs: Any) -> Array:
    """A new array of ones; ``kwargs`` are those of :func:`create`.

    >>> import zarrkit as zk
    >>> zk.ones((2,), dtype="i4")[...]
    array([1, 1], dtype=int32)
    """
    return create(shape=shape, fill_value=1, **kwargs)


def full(shape: Any, fill_value: Any, **kwargs: Any) -> Array:
    """A new array whose every element is ``fill_value``; ``kwargs`` are those of
    :func:`create`.

    >>> import zarrkit as zk
    >>> zk.full((2,), 5.5)[...]
    array([5.5, 5.5])
    """
    return create(shape=shape, fill_value=fill_value, **kwargs)


def _like_arguments(a: Any, zarr_format: int | None) -> dict[str, Any]:
    """The shape, chunks, dtype and (for an Array) fill value and codecs of ``a``, as
    zarr-python 3.4 copies them into a new array "like" it: the new array has ``a``'s
    format unless ``zarr_format`` asks for the other, and then its own format's default
    codecs (a format's codecs mean nothing in the other)."""
    like: dict[str, Any] = {}
    shape = getattr(a, "shape", None)
    if isinstance(shape, tuple):
        like["shape"] = shape
        chunks = getattr(a, "chunks", None)
        if isinstance(chunks, tuple) and len(chunks) == len(shape):
            like["chunks"] = chunks
    if hasattr(a, "dtype"):
        like["dtype"] = a.dtype
    if isinstance(a, Array):
        like["fill_value"] = a.fill_value
        if zarr_format is None:
            zarr_format = a.zarr_format
        if zarr_format == a.zarr_format == 2:
            like["order"] = a.order
            like["compressor"] = a.metadata.compressor
            like["filters"] = a.metadata.filters
        elif zarr_format == a.zarr_format:
            # The stored chain on the stored grid (a sharded array's shard shape).
            like["codecs"] = a.metadata.codecs
            like["chunks"] = tuple(a.metadata.chunks)
    if zarr_format is not None:
        like["zarr_format"] = zarr_format
    return like


def empty_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """A new empty array with the shape, chunks, dtype, fill value and codecs of ``a``
    (in ``a``'s Zarr format unless ``zarr_format`` says otherwise).

    >>> import zarrkit as zk
    >>> zk.empty_like(np.zeros((3, 2), "u1")).shape
    (3, 2)
    """
    return empty(**(_like_arguments(a, zarr_format) | kwargs))


def zeros_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """A new array of zeros like ``a`` (see :func:`empty_like`).

    >>> import zarrkit as zk
    >>> zk.zeros_like(np.ones(2, "i1"))[...]
    array([0, 0], dtype=int8)
    """
    like = _like_arguments(a, zarr_format)
    like.pop("fill_value", None)
    return zeros(**(like | kwargs))


def ones_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """A new array of ones like ``a`` (see :func:`empty_like`).

    >>> import zarrkit as zk
    >>> zk.ones_like(np.zeros(2, "i1"))[...]
    array([1, 1], dtype=int8)
    """
    like = _like_arguments(a, zarr_format)
    like.pop("fill_value", None)
    return ones(**(like | kwargs))


def full_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """A new array like ``a`` filled with ``fill_value`` (by default a zarrkit Array's own
    fill value), as zarr-python's ``full_like``.

    >>> import zarrkit as zk
    >>> zk.full_like(np.zeros(2), fill_value=4.0)[...]
    array([4., 4.])
    """
    return full(**(_like_arguments(a, zarr_format) | kwargs))


def open_like(a: Any, path: str, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """Open the array at ``path`` (``store=`` in ``kwargs``), creating it like ``a`` when
    missing; ``kwargs`` are those of :func:`zarrkit.open_array`. Codecs are copied when
    the array opened or created is in ``a``'s format (``zarr_format``, by default
    ``zarrkit.config``'s).

    >>> import zarrkit as zk
    >>> s = {}
    >>> zk.open_like(zk.zeros((3,), dtype="u2"), "x", store=s).dtype
    dtype('uint16')
    """
    like = _like_arguments(a, zarr_format or config.default_zarr_format)
    like.pop("zarr_format")
    return open_array(path=path, zarr_format=zarr_format, **(like | kwargs))


def array(data: Any, **kwargs: Any) -> Array:
    """A new array holding a copy of ``data`` (zarr-python's ``zarr.array``): shape, dtype
    and, for a chunked source, chunks follow it; ``kwargs`` are those of :func:`create`
    (a zarrkit Array source: of :func:`zarrkit.from_array`).

    >>> import zarrkit as zk
    >>> zk.array([[1, 2], [3, 4]], chunks=(1, 2))[1]
    array([3, 4])
    """
    if isinstance(data, Array):
        from zarrkit.api import from_array

        return from_array(kwargs.pop("store", None), data=data, **kwargs)
    if not (hasattr(data, "shape") and hasattr(data, "dtype")):
        data = np.asanyarray(data)
    if kwargs.get("dtype") is None:
        kwargs["dtype"] = data.dtype
    kwargs["shape"] = data.shape
    if kwargs.get("chunks") is None:
        chunks = getattr(data, "chunks", None)
        if isinstance(chunks, tuple) and len(chunks) == len(data.shape) and all(
                isinstance(c, int) for c in chunks):
            kwargs["chunks"] = chunks
    if kwargs.pop("read_only", False):
        raise ValueError("read_only=True does not apply to a new array; open it with mode='r'")
    z = create(**kwargs)
    z[...] = data
    return z


__all__ = [
    "array",
    "create",
    "empty",
    "empty_like",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "open_like",
    "zeros",
    "zeros_like",
]
