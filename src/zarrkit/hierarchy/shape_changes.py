"""Shape changes of an array: resize (chunks outside the new shape deleted, straddling ones
trimmed to the fill value) and append.

>>> import numpy as np, zarrkit as zk
>>> a = zk.from_array({}, data=np.arange(4), chunks=(2,))
>>> append(a, np.arange(2))
(6,)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit.concurrency import chunk_lock
from zarrkit.hierarchy import write_engine
from zarrkit.hierarchy.array_layout import with_shape
from zarrkit.hierarchy.nodes import stored_metadata
from zarrkit.indexing import basic_indexer, grid_shape

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array

__all__ = ["append", "resize"]


def resize(array: Array, new_shape: Any, *more: Any) -> None:
    """Change the shape to ``new_shape`` (a tuple, or the lengths as arguments as in
    zarr-python 2); chunks wholly outside the new shape are deleted, and the part of a
    straddling chunk outside it is reset to the fill value. A rectilinear chunk grid
    that no longer covers a dimension gains a chunk spanning the added extent.

    >>> import zarrkit as zk
    >>> a = zk.from_array({}, data=np.arange(6), chunks=(2,))
    >>> resize(a, 3); resize(a, 6); a[:]
    array([0, 1, 2, 0, 0, 0])
    """
    array._check_writable()
    shape = (new_shape, *more)
    new_shape = tuple(int(s) for s in (shape[0] if len(shape) == 1 and isinstance(
        shape[0], (tuple, list)) else shape))
    if len(new_shape) != array.ndim or any(s < 0 for s in new_shape):
        raise ValueError(
            f"cannot resize array {array.name!r} of shape {array.shape} to {new_shape}"
        )
    if any(n < o for n, o in zip(new_shape, array.shape, strict=True)):
        array._check_allocation_limit()  # before any change: shrinking rewrites chunks
    # Shrinking clears what falls outside before the smaller shape is written: a
    # writer killed in between leaves the old shape over partly cleared data, never a
    # small shape over old data that a later grow would bring back.
    current = stored_metadata(array._store, array._metadata_key, array._metadata.zarr_format)
    if any(n < o for n, o in zip(new_shape, current.shape, strict=True)):
        # Along growing dimensions nothing is cleared (and a rectilinear grid may
        # not cover the new length yet).
        _trim_chunks(array, tuple(min(n, o) for n, o in zip(new_shape, current.shape,
                                                          strict=True)))
    array._update_metadata(lambda stored: with_shape(stored, new_shape))


def _trim_chunks(array: Array, shape: tuple[int, ...]) -> None:
    grid = grid_shape(shape, array._grid_chunks)
    doomed: list[str] = []
    straddling: list[tuple[str, tuple[int, ...], tuple[slice, ...]]] = []
    for key in list(array._store.list_prefix(array._prefix)):  # type: ignore[attr-defined]
        coords = array._metadata.parse_chunk_key(key[len(array._prefix):])
        if coords is None:
            continue
        if any(c >= g for c, g in zip(coords, grid, strict=True)):
            doomed.append(key)
            continue
        starts = array._chunk_start(coords)
        extents = array._chunk_shape(coords)
        if any(b + n > s for b, n, s in zip(starts, extents, shape, strict=True)):
            inside = tuple(slice(0, min(n, s - b))
                           for b, n, s in zip(starts, extents, shape, strict=True))
            straddling.append((key, coords, inside))
    for key in doomed:
        array._store.delete(key)
    for key, coords, inside in straddling:
        with chunk_lock(array._store, key):
            chunk = array._load_chunk_for_update(key, coords)
            trimmed = array._empty_chunk(coords)
            trimmed[inside] = chunk[inside]
            array._store_chunk(key, trimmed)


def append(array: Array, data: Any, axis: int = 0) -> tuple[int, ...]:
    """Grow the array along ``axis`` and write ``data`` into the new region; return
    the new shape.

    >>> import zarrkit as zk
    >>> a = zk.from_array({}, data=np.zeros((2, 2)), chunks=(1, 2))
    >>> append(a, np.ones((1, 2)))
    (3, 2)
    """
    array._check_writable()
    data = np.asanyarray(data)
    if data.ndim != array.ndim:
        raise ValueError(f"cannot append {data.ndim}-d data to a {array.ndim}-d array")
    axis = axis % array.ndim
    added = data.shape[axis]
    starts: list[int] = []

    def grow(stored: Any) -> Any:
        # The region is reserved from the shape as stored, under the document's lock:
        # appends from other threads and handles (and processes, with file locks) each
        # get a region of their own, where a shape read before would hand two the same.
        shape = stored.shape
        for i, (s, d) in enumerate(zip(shape, data.shape, strict=True)):
            if i != axis and s != d:
                raise ValueError(
                    f"shape {data.shape} does not match {shape} except along axis {axis}")
        starts.append(shape[axis])
        return with_shape(stored, tuple(s + added if i == axis else s
                                        for i, s in enumerate(shape)))

    new_shape: tuple[int, ...] = array._update_metadata(grow).shape
    start = starts[-1]
    region = tuple(slice(start, start + added) if i == axis else slice(None)
                   for i in range(array.ndim))
    # The last chunk's part past this region may be another append's already.
    write_engine.set(array, basic_indexer, region, data, keep_overhang=True)
    return new_shape
