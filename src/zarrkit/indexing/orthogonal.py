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

from collections.abc import Callable, Collection, Iterable, Iterator
from functools import lru_cache
from itertools import product
from math import prod
from operator import itemgetter
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


def _open_mesh(selection: tuple[Any, ...], axis_lengths: tuple[int, ...],
               cache: dict[tuple[int, ...], tuple[Any, Any]] | None = None) -> tuple[Any, ...]:
    """Rewrite a per-axis selection so numpy applies its index arrays orthogonally.

    numpy broadcasts index arrays together, and if advanced indices (arrays, and ints
    next to arrays) are not adjacent it moves the broadcast dimensions to the front. So
    arrays get ``np.ix_`` shapes, and when the advanced indices are split by a slice,
    the slices become aranges too so that every axis is advanced and none moves.
    ``cache`` keeps the rewritten parts for selections that share them (the chunks of
    one plan share each dimension's few pieces).

    >>> [np.shape(p) for p in _open_mesh((np.array([0, 1]), slice(0, 3), 0, np.array([2])),
    ...                                  (2, 3, 1, 4))]
    [(2, 1, 1), (1, 3, 1), (), (1, 1, 1)]
    """
    mesh_axes = _mesh_axes(tuple(map(type, selection)))
    if mesh_axes is None:
        return selection
    parts = list(selection)
    mesh_ndim = len(mesh_axes)
    for mesh_position, axis in enumerate(mesh_axes):
        part = parts[axis]
        if cache is not None:
            key = (id(part), axis_lengths[axis], mesh_position, mesh_ndim)
            cached = cache.get(key)
            if cached is not None and cached[0] is part:
                parts[axis] = cached[1]
                continue
        meshed = _mesh_part(part, axis_lengths[axis], mesh_position, mesh_ndim)
        if cache is not None:
            cache[key] = (part, meshed)  # the part too: its id stays its own while cached
        parts[axis] = meshed
    return tuple(parts)


def _picker(axes: list[int]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """The parts at ``axes`` (none or one: itemgetter takes the rest) as a tuple."""
    return lambda parts: tuple(parts[axis] for axis in axes)


def _mesh_part(part: Any, length: int, position: int, mesh_ndim: int) -> Any:
    """One axis's part as :func:`_open_mesh` rewrites it at ``position`` of a mesh of
    ``mesh_ndim`` axes (``length``: the axis's length, for a slice)."""
    if type(part) is slice:
        part = np.arange(*part.indices(length))
    mesh_shape = [1] * mesh_ndim
    mesh_shape[position] = -1
    return part.reshape(mesh_shape)


def _premesh(parts: list[list[Any]], lengths: tuple[int, ...]) -> list[list[Any]] | None:
    """Each axis's parts (one per piece) as :func:`_open_mesh` rewrites them in any
    combination, or None when that rewrite depends on the combination (see
    :func:`_mesh_plan`).

    >>> [[np.shape(p) for p in axis] for axis in _premesh(
    ...     [[np.array([0, 2]), slice(1, 2)], [slice(0, 3)], [0], [slice(0, 5)]], (4, 3, 1, 5))]
    [[(2, 1, 1), (1, 1, 1)], [(1, 3, 1)], [()], [(1, 1, 5)]]
    """
    plan = _mesh_plan(tuple(frozenset(map(type, axis_parts)) for axis_parts in parts))
    if plan is None:
        return None
    mesh_axes, as_arrays = plan
    meshed = list(parts)
    for axis in as_arrays:
        meshed[axis] = [np.arange(*part.indices(lengths[axis])) if type(part) is slice
                        else part for part in parts[axis]]
    for position, axis in enumerate(mesh_axes or ()):
        meshed[axis] = [_mesh_part(part, lengths[axis], position, len(mesh_axes or ()))
                        for part in meshed[axis]]
    return meshed


@lru_cache(maxsize=256)
def _mesh_plan(kinds: tuple[frozenset[type], ...]
               ) -> tuple[tuple[int, ...] | None, tuple[int, ...]] | None:
    """How to mesh selections whose axes' parts are of these kinds, alike for every
    combination of pieces: the mesh axes (:func:`_mesh_axes`) and the axes whose slices
    must become index arrays; None when no one rewrite fits every combination.

    An index array's pieces are slices where their indices run evenly and arrays
    elsewhere (S10's rows: four in one chunk, one in another). Where such a mix does not
    change the mesh (a lone index array), the slices stay slices; where it does, they
    become index arrays, so that every combination meshes alike.

    >>> mixed, alone = frozenset({np.ndarray, slice}), frozenset({int})
    >>> _mesh_plan((mixed,)), _mesh_plan((mixed, alone))
    ((None, ()), ((0,), (0,)))
    >>> _mesh_plan((mixed, frozenset({slice}), alone, frozenset({slice})))  # S10's oindex
    ((0, 1, 3), (0,))
    """
    mixed = [axis for axis, axis_kinds in enumerate(kinds) if len(axis_kinds) > 1]
    if len(mixed) > 4 or any(kinds[axis] != {slice, np.ndarray} for axis in mixed):
        return None
    base = [next(iter(axis_kinds)) if len(axis_kinds) == 1 else np.ndarray
            for axis_kinds in kinds]
    layouts = set()
    for choice in product((slice, np.ndarray), repeat=len(mixed)):
        combination = list(base)
        for axis, kind in zip(mixed, choice, strict=True):
            combination[axis] = kind
        layouts.add(_mesh_axes(tuple(combination)))
    if len(layouts) == 1:
        return layouts.pop(), ()
    return _mesh_axes(tuple(base)), tuple(mixed)


@lru_cache(maxsize=256)
def _mesh_axes(kinds: tuple[type, ...]) -> tuple[int, ...] | None:
    """The axes :func:`_open_mesh` turns into mesh arrays for selections of these part
    types, or None when numpy already indexes them orthogonally."""
    array_axes = [axis for axis, kind in enumerate(kinds) if kind is np.ndarray]
    if not array_axes:
        return None
    int_axes = [axis for axis, kind in enumerate(kinds) if kind is int]
    if not int_axes and len(array_axes) == 1:
        return None
    advanced_axes = sorted(array_axes + int_axes)
    if advanced_axes[-1] - advanced_axes[0] == len(advanced_axes) - 1:
        return tuple(array_axes)
    return tuple(axis for axis, kind in enumerate(kinds) if kind is not int)


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

    def dim_pieces(self) -> list[DimPieces]:
        """Per dimension, the pieces of the chunks the selection touches: ``(chunk index,
        chunk selection, output selection or None for an integer, complete)``, in
        ascending chunk order; the plan is their product.

        >>> rows, columns = orthogonal_indexer(([3, 0], 1), (4, 4), (2, 2)).dim_pieces()
        >>> rows[1], columns
        ((1, slice(1, 2, None), slice(0, 1, None), False), [(0, 1, None, False)])
        """
        return self._lazy_pieces

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
        (a regular grid; see :func:`_mesh_plan`): each part is then meshed once instead
        of once per chunk. None otherwise."""
        if self._rectilinear:
            return None
        pieces = self._pieces
        if not all(pieces):  # a selection touching nothing
            return None
        chunk_shape = cast(tuple[int, ...], self._chunks)
        kept_axes = [axis for axis, axis_pieces in enumerate(pieces)
                     if axis_pieces[0][2] is not None]
        chunk_parts = [[piece[1] for piece in axis_pieces] for axis_pieces in pieces]
        out_parts = [[pieces[axis][i][2] for i in range(len(pieces[axis]))]
                     for axis in kept_axes]
        chunk_meshed = _premesh(chunk_parts, chunk_shape)
        out_meshed = _premesh(out_parts, self.shape)
        if chunk_meshed is None or out_meshed is None:
            return None
        all_out: list[list[Any]] = [[None] * len(axis_pieces) for axis_pieces in pieces]
        for kept, axis in enumerate(kept_axes):
            all_out[axis] = out_meshed[kept]
        return chunk_meshed, all_out

    def __iter__(self) -> Iterator[ChunkProjection]:
        premeshed = self._premeshed()
        if premeshed is not None:
            return self._iter_premeshed(*premeshed)
        return self._iter_meshing()

    def _iter_premeshed(self, chunk_parts: list[list[Any]], out_parts: list[list[Any]]
                        ) -> Iterator[ChunkProjection]:
        # Per axis, each piece as it goes into a projection: zip(*) then assembles the
        # projection's fields in C.
        records = [list(zip([piece[0] for piece in axis_pieces], chunk_parts[axis],
                            out_parts[axis], [piece[3] for piece in axis_pieces],
                            strict=True))
                   for axis, axis_pieces in enumerate(self._pieces)]
        kept_axes = [axis for axis, axis_pieces in enumerate(self._pieces)
                     if axis_pieces[0][2] is not None]
        # The output's axes, picked in C (an integer drops its axis from the output).
        kept: Callable[[tuple[Any, ...]], tuple[Any, ...]] | None = None
        if len(kept_axes) >= 2 and self._drops_dims:
            kept = itemgetter(*kept_axes)
        elif self._drops_dims:
            kept = _picker(kept_axes)
        for combination in product(*records):
            coords, chunk_selection, out_selection, completes = zip(*combination, strict=True)
            yield ChunkProjection(coords, chunk_selection,
                                  out_selection if kept is None else kept(out_selection),
                                  False not in completes)

    def _iter_meshing(self) -> Iterator[ChunkProjection]:
        return self._meshed(product(*self._pieces))

    def partial_projections(self) -> Iterator[ChunkProjection]:
        """The projections that are not complete, in C order."""
        return (projection for projection in self if not projection.is_complete)

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
        meshes: dict[tuple[int, ...], tuple[Any, Any]] = {}
        for combination in combinations:
            coords, chunk_parts, out_parts, completes = zip(*combination, strict=False)
            if drops_dims:
                out_parts = tuple(part for part in out_parts if part is not None)
            # Chunk selections address the chunk's own full shape.
            chunk_shape = chunk_shape_at(chunks, coords) if common_shape is None else common_shape
            yield ChunkProjection(
                coords,
                _open_mesh(chunk_parts, chunk_shape, meshes),
                _open_mesh(out_parts, out_shape, meshes),
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
