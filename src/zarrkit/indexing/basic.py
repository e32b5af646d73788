"""Basic indexing (``a[sel]`` with integers, slices and Ellipsis) and block indexing.

Only plain Python ints and slices are produced, so numpy takes its fastest (view) path
for every chunk, and a scalar read is planned without creating a single numpy object.

>>> indexer = basic_indexer((3, slice(None, None, 2)), shape=(10, 10), chunks=(4, 4))
>>> indexer.shape
(5,)
>>> for p in indexer:
...     print(p.chunk_coords, p.chunk_selection, p.out_selection)
(0, 0) (3, slice(0, 3, 2)) (slice(0, 2, None),)
(0, 1) (3, slice(0, 3, 2)) (slice(2, 4, None),)
(0, 2) (3, slice(0, 1, 2)) (slice(4, 5, None),)
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from math import prod
from typing import Any

from zarrkit.errors import BoundsCheckError, IndexingError
from zarrkit.indexing.dims import (
    DimPiece,
    DimPieces,
    integer_pieces,
    iter_product,
    partial_product,
    piece_for,
    slice_pieces,
)
from zarrkit.indexing.grid import AnyChunkDim, ChunkGrid, DimBoundaries, grid_shape, resolve_grid
from zarrkit.indexing.normalize import (
    as_integer,
    as_selection_tuple,
    expand_ellipsis,
    normalize_integer,
    normalize_slice,
)
from zarrkit.indexing.plan import ChunkProjection, Indexer

__all__ = ["BasicIndexer", "basic_indexer", "block_indexer", "block_region"]

_FULL_SLICE = slice(None)

# A normalised dimension: an in-bounds int, or (start, step, length) of a slice.
_BasicDim = int | tuple[int, int, int]


def _normalize_basic_item(item: Any, dim_len: int) -> _BasicDim:
    if type(item) is slice:
        return normalize_slice(item, dim_len)
    index = as_integer(item)
    if index is None:
        if item is None:
            raise IndexingError("newaxis (None) is not supported in a selection")
        raise IndexingError(
            f"unsupported index {item!r} of type {type(item).__name__}: "
            "expected an integer, a slice or Ellipsis"
        )
    return normalize_integer(index, dim_len)


class BasicIndexer:
    """Plan of a selection made of integers and slices (see :func:`basic_indexer`).

    >>> BasicIndexer((slice(1, 3),), (4,), (2,)).nchunks
    2
    """

    __slots__ = ("shape", "_dims", "_array_shape", "_chunks", "_pieces")

    flat_output: bool = False

    shape: tuple[int, ...]
    _dims: list[_BasicDim]
    _array_shape: tuple[int, ...]
    _chunks: tuple[AnyChunkDim, ...]
    _pieces: list[DimPieces] | None

    def __init__(
        self, selection: Any, shape: tuple[int, ...], chunks: tuple[AnyChunkDim, ...]
    ) -> None:
        items = selection if type(selection) is tuple else (selection,)
        if len(items) != len(shape):
            items = expand_ellipsis(items, len(shape))
        dims: list[_BasicDim] = []
        out_shape: list[int] = []
        seen_ellipsis = False
        for item, dim_len in zip(items, shape, strict=True):
            # Inline int fast path: scalar reads are the most latency-sensitive call.
            if type(item) is int:
                index = item + dim_len if item < 0 else item
                if not 0 <= index < dim_len:
                    raise BoundsCheckError(
                        f"index {item} is out of bounds for a dimension of length {dim_len}"
                    )
                dims.append(index)
                continue
            if item is Ellipsis:
                # With as many items as dimensions, an Ellipsis stands for one full slice.
                if seen_ellipsis:
                    raise IndexingError("a selection may contain at most one Ellipsis")
                seen_ellipsis = True
                item = _FULL_SLICE
            dim = _normalize_basic_item(item, dim_len)
            dims.append(dim)
            if type(dim) is tuple:
                out_shape.append(dim[2])
        self.shape = tuple(out_shape)
        self._dims = dims
        self._array_shape = shape
        self._chunks = chunks
        self._pieces = None

    def dim_pieces(self) -> list[DimPieces]:
        """Per dimension, the pieces of the chunks the selection touches: ``(chunk index,
        chunk selection, output selection or None for an integer, complete)``, in
        ascending chunk order; the plan is their product.

        >>> rows, columns = basic_indexer((1, slice(1, None)), (4, 4), (2, 2)).dim_pieces()
        >>> list(rows), list(columns)[1]
        ([(0, 1, None, False)], (1, slice(0, 2, None), slice(1, 3, None), True))
        """
        return self._dim_pieces()

    def _dim_pieces(self) -> list[DimPieces]:
        if self._pieces is None:
            pieces: list[DimPieces] = []
            for dim, dim_len, chunk_len in zip(
                self._dims, self._array_shape, self._chunks, strict=True
            ):
                if isinstance(dim, int):
                    pieces.append(integer_pieces(dim, dim_len, chunk_len))
                else:
                    start, step, length = dim
                    pieces.append(slice_pieces(start, step, length, dim_len, chunk_len))
            self._pieces = pieces
        return self._pieces

    @property
    def nchunks(self) -> int:
        """Number of chunks the selection touches (found without planning them).

        >>> basic_indexer(slice(None), (10,), (3,)).nchunks
        4
        >>> basic_indexer(slice(None), (2**62,), (1,)).nchunks
        4611686018427387904
        """
        return prod(len(pieces) for pieces in self._dim_pieces())

    def __iter__(self) -> Iterator[ChunkProjection]:
        if len(self.shape) == 0:
            # Every dimension is an integer: one element, one chunk, no product needed.
            return iter((self._point_projection(),))
        return self._projections(iter_product(self._dim_pieces()))

    def projections_for(self, chunk_coords: Collection[tuple[int, ...]]
                        ) -> Iterator[ChunkProjection]:
        """The projections of those of ``chunk_coords`` that the selection touches, in
        C order of the grid; the work is proportional to ``len(chunk_coords)``, whatever
        the number of chunks the selection spans.

        >>> indexer = basic_indexer(slice(None), (2**62,), (4,))
        >>> [p.out_selection for p in indexer.projections_for([(7,), (2**61,), (1,)])]
        [(slice(4, 8, None),), (slice(28, 32, None),)]
        """
        return self._projections(self._combinations_for(sorted(chunk_coords)))

    def partial_projections(self) -> Iterator[ChunkProjection]:
        """The projections of the chunks the selection covers only in part, in C order,
        found without planning the chunks it covers whole (``a[:] = v``, or a region on
        chunk boundaries: none at all).

        >>> aligned = basic_indexer(slice(2, 8), (8, 4), (2, 2))
        >>> [p.chunk_coords for p in aligned.partial_projections()]
        []
        >>> cut = basic_indexer((slice(1, 4), 0), (8, 4), (2, 2))
        >>> [p.chunk_coords for p in cut.partial_projections()]
        [(0, 0), (1, 0)]
        """
        if len(self.shape) == 0:
            return (projection for projection in self if not projection.is_complete)
        return self._projections(partial_product(self._dim_pieces()))

    def _combinations_for(self, chunk_coords: Iterable[tuple[int, ...]]
                          ) -> Iterator[tuple[DimPiece, ...]]:
        pieces = self._dim_pieces()
        for coords in chunk_coords:
            combination = tuple(map(piece_for, pieces, coords))
            if None not in combination:
                yield combination  # type: ignore[misc]

    def _projections(self, combinations: Iterable[tuple[DimPiece, ...]]
                     ) -> Iterator[ChunkProjection]:
        drops_dims = len(self.shape) != len(self._dims)
        for combination in combinations:
            coords, chunk_selection, out_parts, completes = zip(*combination, strict=False)
            out_selection = (
                tuple(part for part in out_parts if part is not None) if drops_dims else out_parts
            )
            yield ChunkProjection(coords, chunk_selection, out_selection, False not in completes)

    def _point_projection(self) -> ChunkProjection:
        coords: list[int] = []
        offsets: list[int] = []
        complete = True
        # Assumed regular: a rectilinear entry (a tuple) makes divmod raise TypeError, and
        # catching that keeps the regular scalar path free of any per-dimension type test.
        regular_chunks: tuple[int, ...] = self._chunks  # type: ignore[assignment]
        try:
            for index, dim_len, chunk_len in zip(
                self._dims, self._array_shape, regular_chunks, strict=True
            ):
                assert type(index) is int
                chunk_index, offset = divmod(index, chunk_len)
                coords.append(chunk_index)
                offsets.append(offset)
                # The chunk holds a single in-bounds element only if it is 1 long here.
                if complete and chunk_len != 1 and dim_len - chunk_index * chunk_len != 1:
                    complete = False
        except TypeError:
            return self._rectilinear_point_projection()
        return ChunkProjection(tuple(coords), tuple(offsets), (), complete)

    def _rectilinear_point_projection(self) -> ChunkProjection:
        coords: list[int] = []
        offsets: list[int] = []
        complete = True
        for index, dim_len, chunk_len in zip(
            self._dims, self._array_shape, self._chunks, strict=True
        ):
            assert type(index) is int
            ((chunk_index, offset, _, dim_complete),) = integer_pieces(index, dim_len, chunk_len)
            coords.append(chunk_index)
            offsets.append(offset)
            complete = complete and dim_complete
        return ChunkProjection(tuple(coords), tuple(offsets), (), complete)


def basic_indexer(selection: Any, shape: tuple[int, ...], chunks: ChunkGrid) -> Indexer:
    """Plan ``a[selection]`` for integers, slices (any step) and at most one Ellipsis.

    Chunk and output selections are tuples of Python ints and slices; integer dimensions
    are dropped from the output, exactly as numpy does.

    >>> indexer = basic_indexer((-1, slice(None, None, -1)), shape=(3, 4), chunks=(2, 2))
    >>> indexer.shape
    (4,)
    >>> for p in indexer:
    ...     print(p.chunk_coords, p.chunk_selection, p.out_selection)
    (1, 0) (0, slice(1, None, -1)) (slice(2, 4, None),)
    (1, 1) (0, slice(1, None, -1)) (slice(0, 2, None),)
    >>> basic_indexer((1, 2), shape=(3, 4), chunks=(2, 2)).shape
    ()

    Rectilinear dimensions take a tuple of chunk boundaries; chunk selections then index
    that chunk's own full shape. Boundaries are validated when the plan is computed (on
    iteration or ``nchunks``), which keeps regular scalar planning free of checks.

    >>> for p in basic_indexer((slice(1, 6), 3), shape=(6, 4), chunks=((0, 2, 3, 8), 2)):
    ...     print(p.chunk_coords, p.chunk_selection, p.out_selection, p.is_complete)
    (0, 1) (slice(1, 2, None), 1) (slice(0, 1, None),) False
    (1, 1) (slice(0, 1, None), 1) (slice(1, 2, None),) False
    (2, 1) (slice(0, 3, None), 1) (slice(2, 5, None),) False
    """
    return BasicIndexer(selection, shape, chunks)


def _block_item_to_slice(
    item: Any, dim_len: int, chunk_len: int | DimBoundaries, nblocks: int
) -> slice:
    if type(item) is slice:
        if item.step is not None and item.step != 1:
            raise IndexingError(f"block selections only support step 1, got {item.step!r}")
        first_block, _, block_count = normalize_slice(item, nblocks)
        if block_count == 0:
            return slice(0, 0)
        stop_block = first_block + block_count
    else:
        block = as_integer(item)
        if block is None:
            raise IndexingError(
                f"unsupported block index {item!r} of type {type(item).__name__}: "
                "expected an integer, a step-1 slice or Ellipsis"
            )
        if not -nblocks <= block < nblocks:
            raise BoundsCheckError(f"block {block} is out of bounds for a grid of {nblocks} blocks")
        first_block = block % nblocks
        stop_block = first_block + 1
    if type(chunk_len) is int:
        return slice(first_block * chunk_len, min(stop_block * chunk_len, dim_len))
    assert type(chunk_len) is DimBoundaries
    values = chunk_len.values
    return slice(values[first_block], min(values[stop_block], dim_len))


def block_region(selection: Any, shape: tuple[int, ...], chunks: tuple[AnyChunkDim, ...]
                 ) -> tuple[slice, ...]:
    """The element region ``a.blocks[selection]`` covers: one step-1 slice per dimension,
    edge blocks truncated to the array bounds (see :func:`block_indexer`).

    >>> block_region((slice(1, None), -1), shape=(10, 7), chunks=(4, 3))
    (slice(4, 10, None), slice(6, 7, None))
    """
    items = expand_ellipsis(as_selection_tuple(selection), len(shape))
    grid = resolve_grid(shape, chunks)
    nblocks = grid_shape(shape, grid)
    return tuple(
        _block_item_to_slice(item, dim_len, chunk_len, dim_blocks)
        for item, dim_len, chunk_len, dim_blocks in zip(items, shape, grid, nblocks, strict=True)
    )


def block_indexer(selection: Any, shape: tuple[int, ...], chunks: ChunkGrid) -> Indexer:
    """Plan ``a.blocks[selection]``: a selection counted in chunks, with dask semantics.

    Integers pick one block and keep the dimension; slices (step 1) pick a run of blocks.
    Edge blocks are truncated to the array bounds. The plan is a basic one. Along a
    rectilinear dimension, blocks are its chunks, of varying lengths.

    >>> block_indexer(0, shape=(10, 10), chunks=(5, 5)).shape
    (5, 10)
    >>> block_indexer((slice(1, None), -1), shape=(10, 7), chunks=(4, 3)).shape
    (6, 1)
    >>> block_indexer((slice(1, 3), -1), shape=(10, 7), chunks=((0, 2, 7, 10), (0, 1, 9))).shape
    (8, 6)
    """
    grid = resolve_grid(shape, chunks)
    return BasicIndexer(block_region(selection, shape, grid), shape, grid)
