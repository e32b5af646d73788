"""Orthogonal (outer) indexing, ``a.oindex[sel]``: each dimension is selected independently.

The result equals ``a[np.ix_(...)]`` with integers dropping their dimension. Integer
arrays are split across chunks with a stable sort on chunk ids; each chunk's share becomes
a slice when it is an increasing arithmetic run, and an index array otherwise. When several
dimensions of one projection are arrays, they are turned into an ``np.ix_``-style open mesh
so that numpy combines them orthogonally instead of pointwise.

>>> import numpy as np
>>> indexer = orthogonal_indexer(([3, 0], slice(1, 3)), shape=(4, 4), chunks=(2, 2))
>>> indexer.shape
(2, 2)
>>> for p in indexer:
...     print(p.chunk_coords, p.chunk_selection, p.out_selection)
(0, 0) (slice(0, 1, None), slice(1, 2, None)) (slice(1, 2, None), slice(0, 1, None))
(0, 1) (slice(0, 1, None), slice(0, 1, None)) (slice(1, 2, None), slice(1, 2, None))
(1, 0) (slice(1, 2, None), slice(1, 2, None)) (slice(0, 1, None), slice(0, 1, None))
(1, 1) (slice(1, 2, None), slice(0, 1, None)) (slice(0, 1, None), slice(1, 2, None))
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from itertools import product
from math import prod
from typing import Any, cast

import numpy as np

from zarrkit.errors import IndexingError
from zarrkit.indexing.basic import BasicIndexer
from zarrkit.indexing.dims import (
    DimPiece,
    DimPieces,
    array_pieces,
    integer_pieces,
    piece_for,
    slice_pieces,
)
from zarrkit.indexing.grid import ChunkGrid, DimBoundaries, chunk_shape_at, resolve_grid
from zarrkit.indexing.normalize import (
    as_integer,
    as_selection_tuple,
    expand_ellipsis,
    is_pure_basic,
    normalize_integer,
    normalize_integer_array,
    normalize_slice,
)
from zarrkit.indexing.plan import ChunkProjection, Indexer

__all__ = ["OrthogonalIndexer", "orthogonal_indexer"]


def _open_mesh(selection: tuple[Any, ...], axis_lengths: tuple[int, ...]) -> tuple[Any, ...]:
    """Rewrite a per-axis selection so numpy applies its index arrays orthogonally.

    numpy broadcasts index arrays together, and if advanced indices (arrays, and ints
    next to arrays) are not adjacent it moves the broadcast dimensions to the front. So
    arrays get ``np.ix_`` shapes, and when the advanced indices are split by a slice,
    the slices become aranges too so that every axis is advanced and none moves.
    """
    array_axes = [axis for axis, part in enumerate(selection) if type(part) is np.ndarray]
    if not array_axes:
        return selection
    int_axes = [axis for axis, part in enumerate(selection) if type(part) is int]
    if not int_axes and len(array_axes) == 1:
        return selection
    advanced_axes = sorted(array_axes + int_axes)
    if advanced_axes[-1] - advanced_axes[0] == len(advanced_axes) - 1:
        mesh_axes = array_axes
    else:
        mesh_axes = [axis for axis, part in enumerate(selection) if type(part) is not int]
    parts = list(selection)
    mesh_ndim = len(mesh_axes)
    for mesh_position, axis in enumerate(mesh_axes):
        part = parts[axis]
        if type(part) is slice:
            part = np.arange(*part.indices(axis_lengths[axis]))
        mesh_shape = [1] * mesh_ndim
        mesh_shape[mesh_position] = -1
        parts[axis] = part.reshape(mesh_shape)
    return tuple(parts)


class OrthogonalIndexer:
    """Plan of an orthogonal selection containing at least one index array.

    See :func:`orthogonal_indexer`.

    >>> OrthogonalIndexer(([0, 5],), (6,), (2,)).nchunks
    2
    """

    __slots__ = ("shape", "_lazy_pieces", "_held", "_chunks", "_rectilinear", "_drops_dims")

    flat_output: bool = False

    shape: tuple[int, ...]
    _lazy_pieces: list[DimPieces]
    _held: list[list[DimPiece]] | None
    _chunks: tuple[int | DimBoundaries, ...]
    _rectilinear: bool
    _drops_dims: bool

    def __init__(self, selection: Any, shape: tuple[int, ...], chunks: ChunkGrid) -> None:
        items = expand_ellipsis(as_selection_tuple(selection), len(shape))
        grid = resolve_grid(shape, chunks)
        pieces: list[DimPieces] = []
        out_shape: list[int] = []
        for item, dim_len, chunk_len in zip(items, shape, grid, strict=True):
            if type(item) is slice:
                start, step, length = normalize_slice(item, dim_len)
                pieces.append(slice_pieces(start, step, length, dim_len, chunk_len))
                out_shape.append(length)
                continue
            index = as_integer(item)
            if index is not None:
                pieces.append(integer_pieces(normalize_integer(index, dim_len), dim_len, chunk_len))
                continue
            if item is None or item is Ellipsis:
                raise IndexingError(f"unsupported index {item!r} in an orthogonal selection")
            indices = normalize_integer_array(item, dim_len, allow_bool=True)
            if indices.ndim != 1:
                raise IndexingError(
                    f"orthogonal index arrays must be 1-d, got shape {indices.shape}"
                )
            pieces.append(array_pieces(indices, dim_len, chunk_len))
            out_shape.append(indices.shape[0])
        self.shape = tuple(out_shape)
        # Slices' pieces are made when iterated: before then, an output too large to
        # allocate has been refused, and no dimension has more pieces than output length.
        self._lazy_pieces = pieces
        self._held = None
        self._chunks = grid
        self._rectilinear = any(type(chunk) is DimBoundaries for chunk in grid)
        self._drops_dims = len(out_shape) != len(shape)

    @property
    def nchunks(self) -> int:
        """Number of chunks the selection touches.

        >>> orthogonal_indexer(([0, 9], [1]), (10, 10), (5, 5)).nchunks
        2
        """
        return prod(len(dim_pieces) for dim_pieces in self._lazy_pieces)

    @property
    def _pieces(self) -> list[list[DimPiece]]:
        """Every dimension's pieces, held (iteration indexes them repeatedly)."""
        if self._held is None:
            self._held = [dim_pieces if type(dim_pieces) is list else list(dim_pieces)
                          for dim_pieces in self._lazy_pieces]
        return self._held

    def _premeshed(self) -> tuple[list[list[Any]], list[list[Any]]] | None:
        """Per axis, every piece's chunk part and output part already rewritten by
        :func:`_open_mesh`, when that rewrite cannot depend on the other axes' pieces
        (a regular grid and, along each axis, pieces of one kind): each part is then
        meshed once instead of once per chunk. None otherwise."""
        if self._rectilinear:
            return None
        pieces = self._pieces
        for axis_pieces in pieces:
            if len({(type(p[1]), type(p[2])) for p in axis_pieces}) != 1:
                return None
        chunk_shape = cast(tuple[int, ...], self._chunks)
        kept_axes = [axis for axis, axis_pieces in enumerate(pieces)
                     if axis_pieces[0][2] is not None]
        template = [axis_pieces[0] for axis_pieces in pieces]
        chunk_parts: list[list[Any]] = []
        out_parts: list[list[Any]] = []
        for axis, axis_pieces in enumerate(pieces):
            axis_chunk_parts: list[Any] = []
            axis_out_parts: list[Any] = []
            for piece in axis_pieces:
                combination = list(template)
                combination[axis] = piece
                meshed_chunk = _open_mesh(tuple(p[1] for p in combination), chunk_shape)
                axis_chunk_parts.append(meshed_chunk[axis])
                if piece[2] is None:
                    axis_out_parts.append(None)
                    continue
                meshed_out = _open_mesh(tuple(combination[a][2] for a in kept_axes), self.shape)
                axis_out_parts.append(meshed_out[kept_axes.index(axis)])
            chunk_parts.append(axis_chunk_parts)
            out_parts.append(axis_out_parts)
        return chunk_parts, out_parts

    def __iter__(self) -> Iterator[ChunkProjection]:
        premeshed = self._premeshed()
        if premeshed is not None:
            return self._iter_premeshed(*premeshed)
        return self._iter_meshing()

    def _iter_premeshed(self, chunk_parts: list[list[Any]], out_parts: list[list[Any]]
                        ) -> Iterator[ChunkProjection]:
        pieces = self._pieces
        kept_axes = [axis for axis, axis_pieces in enumerate(pieces)
                     if axis_pieces[0][2] is not None]
        for choice in product(*(range(len(axis_pieces)) for axis_pieces in pieces)):
            yield ChunkProjection(
                tuple(pieces[axis][j][0] for axis, j in enumerate(choice)),
                tuple(chunk_parts[axis][j] for axis, j in enumerate(choice)),
                tuple(out_parts[axis][choice[axis]] for axis in kept_axes),
                all(pieces[axis][j][3] for axis, j in enumerate(choice)),
            )

    def _iter_meshing(self) -> Iterator[ChunkProjection]:
        return self._meshed(product(*self._pieces))

    def projections_for(self, chunk_coords: Collection[tuple[int, ...]]
                        ) -> Iterator[ChunkProjection]:
        """The projections of those of ``chunk_coords`` that the selection touches, in
        C order of the grid.

        >>> indexer = orthogonal_indexer(([0, 9], slice(None)), (10, 4), (5, 2))
        >>> [p.chunk_coords for p in indexer.projections_for({(1, 1), (0, 3), (1, 0)})]
        [(1, 0), (1, 1)]
        """
        pieces = self._pieces
        combinations = (tuple(map(piece_for, pieces, coords)) for coords in sorted(chunk_coords))
        return self._meshed(c for c in combinations if None not in c)  # type: ignore[misc]

    def _meshed(self, combinations: Iterable[tuple[DimPiece, ...]]
                ) -> Iterator[ChunkProjection]:
        chunks = self._chunks
        # Every chunk has the same full shape unless a dimension is rectilinear.
        common_shape = None if self._rectilinear else cast(tuple[int, ...], chunks)
        out_shape = self.shape
        drops_dims = self._drops_dims
        for combination in combinations:
            coords, chunk_parts, out_parts, completes = zip(*combination, strict=False)
            if drops_dims:
                out_parts = tuple(part for part in out_parts if part is not None)
            # Chunk selections address the chunk's own full shape.
            chunk_shape = chunk_shape_at(chunks, coords) if common_shape is None else common_shape
            yield ChunkProjection(
                coords,
                _open_mesh(chunk_parts, chunk_shape),
                _open_mesh(out_parts, out_shape),
                False not in completes,
            )


def orthogonal_indexer(selection: Any, shape: tuple[int, ...], chunks: ChunkGrid) -> Indexer:
    """Plan ``a.oindex[selection]``.

    Per dimension: an integer (drops the dimension), a slice (any step), a 1-d integer
    array or list (negative, unsorted and repeated entries allowed) or a 1-d boolean array
    as long as the dimension; plus at most one Ellipsis. Without any array this is exactly
    :func:`basic_indexer`.

    >>> import numpy as np
    >>> full = np.arange(12).reshape(3, 4)
    >>> indexer = orthogonal_indexer(([2, 0], [True, False, False, True]), (3, 4), (2, 3))
    >>> out = np.empty(indexer.shape, dtype=full.dtype)
    >>> for p in indexer:
    ...     k0, k1 = p.chunk_coords
    ...     chunk = np.zeros((2, 3), dtype=full.dtype)
    ...     block = full[2 * k0 : 2 * k0 + 2, 3 * k1 : 3 * k1 + 3]
    ...     chunk[: block.shape[0], : block.shape[1]] = block
    ...     out[p.out_selection] = chunk[p.chunk_selection]
    >>> out.tolist()
    [[8, 11], [0, 3]]
    >>> indexer = orthogonal_indexer(([4, 0, 1], 1), shape=(5, 3), chunks=((0, 2, 6), 2))
    >>> [(p.chunk_coords, p.chunk_selection) for p in indexer]
    [((0, 0), (slice(0, 2, None), 1)), ((1, 0), (slice(2, 3, None), 1))]
    """
    if is_pure_basic(selection):
        return BasicIndexer(selection, shape, chunks)
    return OrthogonalIndexer(selection, shape, chunks)
