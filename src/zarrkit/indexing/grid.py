"""Chunk grids: regular (one chunk length per dimension) or rectilinear (boundaries).

Each entry of ``chunks`` describes one dimension of length ``n``:

* an ``int`` ``c``: a regular grid, chunk ``i`` covers ``[i * c, min((i + 1) * c, n))``;
* a tuple of boundaries ``(0, b1, ..., bk)``, strictly increasing with ``bk >= n``: the
  rectilinear grid of the ``rectilinear`` chunk grid extension, chunk ``i`` covers
  ``[b_i, b_{i+1})`` intersected with ``[0, n)``. Its full (stored) length is
  ``b_{i+1} - b_i``, so only the last chunk that holds data may overhang the array.

Chunks that lie wholly past the end of the array (the extension allows boundaries to
overflow ``n`` by several chunks) hold no element: they are not counted by
:func:`grid_shape` and no selection ever touches them.

>>> grid_shape((10, 7), (4, (0, 2, 5, 9)))
(3, 3)
>>> chunk_shape_at((4, (0, 2, 5, 9)), (2, 1))
(4, 3)
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from zarrkit.errors import BoundsCheckError, IndexingError

__all__ = [
    "INTP_MAX",
    "AnyChunkDim",
    "ChunkDim",
    "ChunkGrid",
    "DimBoundaries",
    "chunk_shape_at",
    "grid_shape",
    "resolve_dim",
    "resolve_grid",
]

INTP_MAX = int(np.iinfo(np.intp).max)
"""The largest index a numpy index array can hold. Shapes may be larger: Python ints."""

ChunkDim = int | tuple[int, ...]
"""How one dimension is chunked: a regular chunk length, or rectilinear boundaries."""

ChunkGrid = tuple[ChunkDim, ...]
"""How an array is chunked: one :data:`ChunkDim` per dimension."""


class DimBoundaries:
    """Validated boundaries ``(0, b1, ..., bk)`` of one rectilinear dimension.

    ``values`` holds them as Python ints (for scalar lookups with :mod:`bisect`),
    ``array`` as a read-only ``intp`` array (for vectorised ``np.searchsorted``).

    >>> bounds = DimBoundaries((0, 2, 5))
    >>> bounds.locate(4), bounds.nchunks(4), bounds.chunk_length(1)
    (1, 2, 3)
    """

    __slots__ = ("values", "array")

    values: tuple[int, ...]
    array: npt.NDArray[np.intp]

    def __init__(self, values: tuple[int, ...]) -> None:
        self.values = values
        array = np.array(values, dtype=np.intp)
        array.flags.writeable = False
        self.array = array

    def __repr__(self) -> str:
        return f"DimBoundaries({self.values!r})"

    def locate(self, index: int) -> int:
        """The chunk holding element ``index`` (assumed in bounds).

        >>> DimBoundaries((0, 2, 5)).locate(2)
        1
        """
        return bisect_right(self.values, index) - 1

    def nchunks(self, dim_len: int) -> int:
        """Number of chunks holding at least one of the ``dim_len`` elements.

        >>> DimBoundaries((0, 2, 5, 8, 9)).nchunks(5), DimBoundaries((0, 3)).nchunks(0)
        (2, 0)
        """
        return bisect_left(self.values, dim_len, 0, len(self.values) - 1)

    def chunk_length(self, chunk_index: int) -> int:
        """Full (stored) length of chunk ``chunk_index``, overhang included.

        >>> DimBoundaries((0, 2, 5)).chunk_length(0)
        2
        """
        return self.values[chunk_index + 1] - self.values[chunk_index]


AnyChunkDim = int | tuple[int, ...] | DimBoundaries
"""A :data:`ChunkDim`, or rectilinear boundaries already validated by :func:`resolve_dim`."""


def _describe(values: tuple[object, ...]) -> str:
    if len(values) <= 8:
        return repr(values)
    return f"({', '.join(map(repr, values[:4]))}, ..., {values[-1]!r}) [{len(values)} values]"


@lru_cache(maxsize=64)
def _parse_boundaries(values: tuple[object, ...]) -> DimBoundaries:
    """Validate the parts of a boundary tuple that do not depend on the dimension length.

    Cached by value: validation and the conversion to numpy are O(k), and the same grid
    is indexed over and over. The entries must already be known to be integers.
    """
    ints = tuple(int(value) for value in values)  # type: ignore[call-overload]
    if not ints or ints[0] != 0:
        raise IndexingError(f"chunk boundaries {_describe(values)} must start at 0")
    try:
        array = np.array(ints, dtype=np.intp)
    except OverflowError:
        raise IndexingError(f"chunk boundaries {_describe(values)} overflow intp") from None
    steps = np.diff(array)
    if steps.size and not bool((steps > 0).all()):
        position = int(np.argmax(steps <= 0)) + 1
        raise IndexingError(
            f"chunk boundaries {_describe(values)} must be strictly increasing: "
            f"boundary {position} ({ints[position]}) does not exceed the one before it "
            f"({ints[position - 1]})"
        )
    return DimBoundaries(ints)


# Boundaries by tuple identity: hashing a tuple (to look it up by value) costs O(k) on
# every call, too much for a scalar read on a grid with many chunks. Each entry holds
# its tuple, so the id cannot be reused while the entry exists.
_BY_IDENTITY: dict[int, tuple[tuple[object, ...], DimBoundaries]] = {}
_BY_IDENTITY_SIZE = 64


def _boundaries_of(chunk: tuple[object, ...] | list[object]) -> DimBoundaries:
    entry = _BY_IDENTITY.get(id(chunk))
    if entry is not None and entry[0] is chunk:
        return entry[1]
    values = tuple(chunk)
    # Checked before the cache by value, where (0, True) or (0, 2.0) would find (0, 1) or
    # (0, 2): equal and equally hashed. ``map(type, ...)`` keeps the scan in C.
    for kind in set(map(type, values)):
        if kind is not int and not issubclass(kind, np.integer):
            offender = next(value for value in values if type(value) is kind)
            raise IndexingError(
                f"chunk boundaries {_describe(values)} must be integers, got {offender!r}"
            )
    bounds = _parse_boundaries(values)
    if type(chunk) is tuple:  # a list may change: only immutable tuples are kept by id
        if len(_BY_IDENTITY) >= _BY_IDENTITY_SIZE:
            _BY_IDENTITY.clear()  # atomic, unlike evicting one entry, so thread-safe
        _BY_IDENTITY[id(chunk)] = (chunk, bounds)
    return bounds


def resolve_dim(chunk: AnyChunkDim, dim_len: int) -> int | DimBoundaries:
    """Validate one entry of ``chunks`` against its dimension length.

    A regular entry comes back as a Python int, rectilinear boundaries as a
    :class:`DimBoundaries`. Invalid boundaries raise
    :class:`~zarrkit.errors.IndexingError`.

    >>> resolve_dim(4, 10), resolve_dim((0, 4, 12), 10)
    (4, DimBoundaries((0, 4, 12)))
    >>> resolve_dim((0, 4, 8), 10)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.IndexingError: chunk boundaries (0, 4, 8) end at 8, before the end of ...
    >>> resolve_dim((1, 4, 12), 10)
    Traceback (most recent call last):
    zarrkit.errors.IndexingError: chunk boundaries (1, 4, 12) must start at 0
    """
    if type(chunk) is int:
        return chunk
    if type(chunk) is DimBoundaries:
        bounds = chunk
    elif isinstance(chunk, tuple | list):
        bounds = _boundaries_of(chunk)
    elif isinstance(chunk, np.integer) and not isinstance(chunk, np.bool_):
        return int(chunk)
    else:
        raise IndexingError(
            f"each entry of chunks must be an int (a regular chunk length) or a tuple of "
            f"chunk boundaries, got {chunk!r} of type {type(chunk).__name__}"
        )
    last = bounds.values[-1]
    if last < dim_len:
        raise IndexingError(
            f"chunk boundaries {_describe(bounds.values)} end at {last}, before the end "
            f"of a dimension of length {dim_len}"
        )
    return bounds


def resolve_grid(
    shape: tuple[int, ...], chunks: tuple[AnyChunkDim, ...]
) -> tuple[int | DimBoundaries, ...]:
    """Validate every entry of ``chunks`` (see :func:`resolve_dim`).

    >>> resolve_grid((10, 3), (4, (0, 1, 3)))
    (4, DimBoundaries((0, 1, 3)))
    """
    if len(chunks) != len(shape):
        raise IndexingError(f"chunks {chunks!r} do not match an array of {len(shape)} dimensions")
    return tuple(
        chunk if type(chunk) is int else resolve_dim(chunk, dim_len)
        for chunk, dim_len in zip(chunks, shape, strict=True)
    )


def grid_shape(shape: tuple[int, ...], chunks: tuple[AnyChunkDim, ...]) -> tuple[int, ...]:
    """Number of chunks along each dimension, for regular and rectilinear dimensions.

    Rectilinear chunks wholly past the end of the array are not counted.

    >>> grid_shape((10, 0, 3), (4, 2, 5))
    (3, 0, 1)
    >>> grid_shape((10, 6, 0), ((0, 3, 10), (0, 1, 2, 6, 9, 12), (0, 2)))
    (2, 3, 0)
    """
    result: list[int] = []
    for length, chunk in zip(shape, chunks, strict=True):
        resolved = chunk if type(chunk) is int else resolve_dim(chunk, length)
        if type(resolved) is int:
            result.append(-(-length // resolved))
        else:
            assert type(resolved) is DimBoundaries
            result.append(resolved.nchunks(length))
    return tuple(result)


def chunk_shape_at(
    chunks: tuple[AnyChunkDim, ...], chunk_coords: tuple[int, ...]
) -> tuple[int, ...]:
    """Full shape of the chunk at ``chunk_coords``, overhang included.

    This is the shape of the array that ``ChunkProjection.chunk_selection`` indexes:
    the regular chunk length, or ``b[i + 1] - b[i]`` along a rectilinear dimension.

    >>> chunk_shape_at((4, (0, 2, 5, 9)), (0, 0)), chunk_shape_at((4, (0, 2, 5, 9)), (7, 2))
    ((4, 2), (4, 4))
    >>> chunk_shape_at(((0, 2),), (1,))
    Traceback (most recent call last):
    zarrkit.errors.BoundsCheckError: chunk 1 is out of bounds for chunk boundaries (0, 2)
    """
    if len(chunk_coords) != len(chunks):
        raise IndexingError(
            f"chunk coordinates {chunk_coords!r} do not match a grid of {len(chunks)} dimensions"
        )
    result: list[int] = []
    for chunk, index in zip(chunks, chunk_coords, strict=True):
        if index < 0:
            raise BoundsCheckError(f"chunk coordinates must be non-negative, got {chunk_coords}")
        if type(chunk) is int:
            result.append(chunk)
            continue
        resolved = resolve_dim(chunk, 0)
        if type(resolved) is int:
            result.append(resolved)
            continue
        assert type(resolved) is DimBoundaries
        if index >= len(resolved.values) - 1:
            raise BoundsCheckError(
                f"chunk {index} is out of bounds for chunk boundaries {_describe(resolved.values)}"
            )
        result.append(resolved.chunk_length(index))
    return tuple(result)


def grown_chunk_lengths(
    chunk_shapes: tuple[int | tuple[int, ...], ...], shape: tuple[int, ...]
) -> tuple[int | tuple[int, ...], ...]:
    """A rectilinear grid's chunk lengths (per dimension one regular length, or the
    tuple of lengths) for a resize to ``shape``: a dimension whose chunks no longer cover
    it gains one chunk spanning the added extent; otherwise its chunks stay, also those
    now past the end (as zarr-python resizes a varying dimension, so that growing back
    reuses them).

    >>> grown_chunk_lengths(((3, 4), 5), (10, 12))
    ((3, 4, 3), 5)
    >>> grown_chunk_lengths(((3, 4),), (2,))
    ((3, 4),)
    """
    if len(chunk_shapes) != len(shape):
        raise IndexingError(
            f"chunk lengths {chunk_shapes!r} do not match a shape of {len(shape)} dimensions")
    grown: list[int | tuple[int, ...]] = []
    for lengths, extent in zip(chunk_shapes, shape, strict=True):
        if isinstance(lengths, int) or sum(lengths) >= extent:
            grown.append(lengths)
        else:
            grown.append((*lengths, extent - sum(lengths)))
    return tuple(grown)
