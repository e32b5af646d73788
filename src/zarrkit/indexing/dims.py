"""Per-dimension planning: split one normalised selection item across the chunks of a dim.

A :data:`DimPiece` is ``(chunk_index, chunk_selection, out_selection, is_complete)`` for a
single dimension. ``out_selection`` is None when the item is an integer, because the
dimension is then dropped from the output. Orthogonal-style selections (basic, oindex,
blocks) are the Cartesian product of these per-dimension pieces (:func:`iter_product`).
A dimension's pieces are a list, or, when a regular dimension has very many, a
:class:`RegularSlicePieces` that makes them on demand.

Every function takes the dimension's entry of ``chunks``: a regular chunk length (an int,
the fast path) or rectilinear chunk boundaries (see :mod:`zarrkit.indexing.grid`), which
are located with ``np.searchsorted`` (``bisect`` for a single integer). Chunk selections
always address the chunk's own full length, ``b[i + 1] - b[i]`` when rectilinear.

>>> for piece in slice_pieces(start=1, step=1, length=5, dim_len=6, chunk_len=4):
...     print(piece)
(0, slice(1, 4, None), slice(0, 3, None), False)
(1, slice(0, 2, None), slice(3, 5, None), True)
>>> for piece in slice_pieces(start=1, step=1, length=5, dim_len=6, chunk_len=(0, 2, 3, 8)):
...     print(piece)
(0, slice(1, 2, None), slice(0, 1, None), False)
(1, slice(0, 1, None), slice(1, 2, None), True)
(2, slice(0, 3, None), slice(2, 5, None), True)
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from itertools import pairwise, product
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from zarrkit.indexing.grid import (
    INTP_MAX,
    AnyChunkDim,
    DimBoundaries,
    grid_shape,
    resolve_dim,
)
from zarrkit.indexing.grouping import (
    group_out_selections,
    group_starts,
    positions_part,
    stable_group_order,
)

__all__ = [
    "DimPiece",
    "DimPieces",
    "RegularSlicePieces",
    "all_complete",
    "incomplete_pieces",
    "array_pieces",
    "chunk_extent",
    "chunk_extents",
    "grid_shape",
    "integer_pieces",
    "iter_product",
    "locate_indices",
    "partial_product",
    "piece_for",
    "slice_pieces",
]

DimPiece = tuple[int, Any, Any, bool]

# A dimension's pieces, in ascending chunk order: a list, or a RegularSlicePieces that
# makes them on demand.
DimPieces = Sequence[DimPiece]

# A regular dimension with more pieces than this is never held in a list: its pieces are
# made on demand (RegularSlicePieces, walked by iter_product). Below it, a list is cheaper.
_HELD_PIECES = 1 << 16


def chunk_extent(chunk_index: int, dim_len: int, chunk_len: AnyChunkDim) -> int:
    """In-bounds length of chunk ``chunk_index`` along a dimension (edge chunks are short).

    >>> chunk_extent(0, 10, 4), chunk_extent(2, 10, 4), chunk_extent(1, 10, (0, 3, 12))
    (4, 2, 7)
    """
    resolved = chunk_len if type(chunk_len) is int else resolve_dim(chunk_len, dim_len)
    if type(resolved) is int:
        return min(resolved, dim_len - chunk_index * resolved)
    assert type(resolved) is DimBoundaries
    values = resolved.values
    return min(values[chunk_index + 1], dim_len) - values[chunk_index]


def integer_pieces(index: int, dim_len: int, chunk_len: AnyChunkDim) -> list[DimPiece]:
    """The single piece of an already normalised integer index.

    >>> integer_pieces(5, 10, 4), integer_pieces(5, 10, (0, 2, 7, 12))
    ([(1, 1, None, False)], [(1, 3, None, False)])
    """
    if type(chunk_len) is not int:
        return _rectilinear_integer_pieces(index, dim_len, chunk_len)
    chunk_index, offset = divmod(index, chunk_len)
    return [(chunk_index, offset, None, min(chunk_len, dim_len - chunk_index * chunk_len) == 1)]


def _rectilinear_integer_pieces(index: int, dim_len: int, chunk_len: AnyChunkDim) -> list[DimPiece]:
    resolved = resolve_dim(chunk_len, dim_len)
    if type(resolved) is int:
        return integer_pieces(index, dim_len, resolved)
    assert type(resolved) is DimBoundaries
    # One value: a binary search over the Python ints beats a numpy call by far.
    chunk_index = resolved.locate(index)
    values = resolved.values
    chunk_start = values[chunk_index]
    extent = min(values[chunk_index + 1], dim_len) - chunk_start
    return [(chunk_index, index - chunk_start, None, extent == 1)]


def _slice_piece(
    chunk_index: int, chunk_start: int, extent: int, first_in_chunk: int, last_in_chunk: int,
    count: int, start: int, step: int,
) -> tuple[int, slice, slice, bool]:
    """One chunk's share of a stepped slice: output slices run forwards, chunk slices
    follow the step's direction (shared by regular and rectilinear dimensions)."""
    stride = abs(step)
    chunk_step = None if step == 1 else step
    if step > 0:
        chunk_selection = slice(
            first_in_chunk - chunk_start, last_in_chunk - chunk_start + 1, chunk_step
        )
        out_start = (first_in_chunk - start) // step
    else:
        # A stop of -1 would mean "the last element", so running off the front of the
        # chunk has to be spelled None.
        stop = first_in_chunk - chunk_start - 1
        chunk_selection = slice(
            last_in_chunk - chunk_start, stop if stop >= 0 else None, chunk_step
        )
        out_start = (start - last_in_chunk) // stride
    return (chunk_index, chunk_selection, slice(out_start, out_start + count),
            count == extent and (step > 0 or count == 1))


def _element_piece(index: int, start: int, step: int, dim_len: int, chunk_len: int
                   ) -> DimPiece:
    """The piece of the one selected element ``index`` in its chunk (a step no shorter
    than a chunk: no chunk holds two selected elements)."""
    chunk_index, offset = divmod(index, chunk_len)
    out_index = (index - start) // step
    return (chunk_index, slice(offset, offset + 1), slice(out_index, out_index + 1),
            min(chunk_len, dim_len - chunk_index * chunk_len) == 1)


def _chunk_piece(chunk_index: int, low: int, high: int, start: int, step: int, dim_len: int,
                 chunk_len: int) -> DimPiece:
    """The piece of chunk ``chunk_index`` of the progression from ``low`` to ``high`` (a
    step shorter than a chunk: every chunk in between is touched)."""
    stride = abs(step)
    chunk_start = chunk_index * chunk_len
    extent = min(chunk_len, dim_len - chunk_start)
    if chunk_start <= low:
        first_in_chunk = low
    else:
        first_in_chunk = low + -(-(chunk_start - low) // stride) * stride
    last_in_chunk = low + ((min(chunk_start + extent - 1, high) - low) // stride) * stride
    count = (last_in_chunk - first_in_chunk) // stride + 1
    return _slice_piece(chunk_index, chunk_start, extent, first_in_chunk, last_in_chunk,
                        count, start, step)


def slice_pieces(
    start: int, step: int, length: int, dim_len: int, chunk_len: AnyChunkDim
) -> DimPieces:
    """Pieces of the progression ``start + j * step, j < length``, in ascending chunk order.

    Both selections are slices. Output slices always have step 1; for a negative step the
    chunk slice runs backwards instead, so chunks are still visited in grid order. Along a
    regular dimension, more than ``_HELD_PIECES`` pieces come as a
    :class:`RegularSlicePieces`, made on demand.

    >>> for piece in slice_pieces(start=5, step=-2, length=3, dim_len=6, chunk_len=3):
    ...     print(piece)
    (0, slice(1, 0, -2), slice(2, 3, None), False)
    (1, slice(2, None, -2), slice(0, 2, None), False)
    >>> type(slice_pieces(start=0, step=1, length=2**40, dim_len=2**40, chunk_len=1)).__name__
    'RegularSlicePieces'
    """
    if type(chunk_len) is not int:
        return _rectilinear_slice_pieces(start, step, length, dim_len, chunk_len)
    if length == 0:
        return []
    last = start + (length - 1) * step
    stride = abs(step)
    low, high = (start, last) if step > 0 else (last, start)
    if stride >= chunk_len:
        # No chunk holds two selected elements, so walking elements is walking touched
        # chunks; walking the chunk range instead could visit many untouched chunks.
        if length > _HELD_PIECES:
            return RegularSlicePieces(start, step, length, dim_len, chunk_len)
        return [_element_piece(index, start, step, dim_len, chunk_len)
                for index in range(low, high + 1, stride)]
    first_chunk, last_chunk = low // chunk_len, high // chunk_len
    if last_chunk - first_chunk >= _HELD_PIECES:
        return RegularSlicePieces(start, step, length, dim_len, chunk_len)
    return [_chunk_piece(chunk_index, low, high, start, step, dim_len, chunk_len)
            for chunk_index in range(first_chunk, last_chunk + 1)]


class RegularSlicePieces(Sequence[DimPiece]):
    """The pieces of a stepped slice along a regular dimension, made when asked for.

    A selection can cross more chunks than it is reasonable to hold a piece for at once
    (``a[:]`` over 2**40 one-element chunks): this sequence costs nothing to build, walks
    its pieces in ascending chunk order, and finds the piece of any one chunk in O(1).
    Pieces are those :func:`slice_pieces` lists for fewer chunks.

    >>> pieces = RegularSlicePieces(start=1, step=1, length=5, dim_len=6, chunk_len=4)
    >>> len(pieces), pieces[1], pieces.piece_for(0) == pieces[0], pieces.piece_for(2)
    (2, (1, slice(0, 2, None), slice(3, 5, None), True), True, None)
    """

    __slots__ = ("_start", "_step", "_dim_len", "_chunk_len", "_low", "_high",
                 "_per_element", "_first_chunk", "_count")

    def __init__(self, start: int, step: int, length: int, dim_len: int, chunk_len: int
                 ) -> None:
        self._start, self._step = start, step
        self._dim_len, self._chunk_len = dim_len, chunk_len
        last = start + (length - 1) * step
        self._low, self._high = (start, last) if step > 0 else (last, start)
        # As in slice_pieces: a piece per element when no chunk holds two of them.
        self._per_element = abs(step) >= chunk_len
        self._first_chunk = self._low // chunk_len
        if length == 0:
            self._count = 0
        elif self._per_element:
            self._count = length
        else:
            self._count = self._high // chunk_len - self._first_chunk + 1

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, position: int) -> DimPiece:  # type: ignore[override]
        if not -self._count <= position < self._count:
            raise IndexError(f"piece {position} of {self._count}")
        position %= self._count
        if self._per_element:
            return self._element(self._low + position * abs(self._step))
        return self._chunk(self._first_chunk + position)

    def __iter__(self) -> Iterator[DimPiece]:
        if self._count == 0:
            return iter(())
        if self._per_element:
            return map(self._element, range(self._low, self._high + 1, abs(self._step)))
        return map(self._chunk, range(self._first_chunk, self._first_chunk + self._count))

    def piece_for(self, chunk_index: int) -> DimPiece | None:
        """The piece of chunk ``chunk_index``, or None if the slice does not touch it.

        >>> RegularSlicePieces(0, 5, 3, 20, 2).piece_for(5)
        (5, slice(0, 1, None), slice(2, 3, None), False)
        >>> RegularSlicePieces(0, 5, 3, 20, 2).piece_for(4) is None
        True
        """
        if self._count == 0:
            return None
        if not self._per_element:
            position = chunk_index - self._first_chunk
            return self._chunk(chunk_index) if 0 <= position < self._count else None
        # The first selected element at or after the chunk's start, if it is in the chunk.
        stride = abs(self._step)
        chunk_start = chunk_index * self._chunk_len
        position = max(0, -(-(chunk_start - self._low) // stride))
        index = self._low + position * stride
        if position < self._count and chunk_start <= index < chunk_start + self._chunk_len:
            return self._element(index)
        return None

    def _element(self, index: int) -> DimPiece:
        return _element_piece(index, self._start, self._step, self._dim_len, self._chunk_len)

    def _chunk(self, chunk_index: int) -> DimPiece:
        return _chunk_piece(chunk_index, self._low, self._high, self._start, self._step,
                            self._dim_len, self._chunk_len)


def all_complete(pieces: DimPieces) -> bool:
    """Whether every piece of a dimension covers its chunk whole.

    >>> all_complete(slice_pieces(4, 1, 8, 12, 4)), all_complete(slice_pieces(0, 2, 8, 16, 4))
    (True, False)
    >>> all_complete(slice_pieces(0, 1, 2**40 - 1, 2**40, 1))
    True
    """
    return next(incomplete_pieces(pieces), None) is None


def incomplete_pieces(pieces: DimPieces) -> Iterator[DimPiece]:
    """The pieces of a dimension that cover their chunk only in part, in order, walking
    no more of a :class:`RegularSlicePieces` than its ends when its inner pieces are whole.

    >>> [p[0] for p in incomplete_pieces(slice_pieces(1, 1, 2**40 - 2, 2**40, 4))]
    [0, 274877906943]
    """
    if type(pieces) is not RegularSlicePieces:
        return (piece for piece in pieces if not piece[3])
    count = len(pieces)
    if count > 2 and not pieces[1][3]:
        # Its pieces between the first and the last are alike (each a whole chunk's share
        # of the same progression): one in part, all in part.
        return (piece for piece in pieces if not piece[3])
    ends = [pieces[position] for position in sorted({0, count - 1}) if position < count]
    return (piece for piece in ends if not piece[3])


def partial_product(dims: Sequence[DimPieces]) -> Iterator[tuple[DimPiece, ...]]:
    """The combinations of :func:`iter_product` with at least one piece not whole, in the
    same order, at a cost that follows their number rather than the product's.

    >>> [tuple(p[0] for p in c) for c in partial_product([[(0, 0, 0, True), (1, 0, 0, False)],
    ...                                                  [(5, 0, 0, True), (6, 0, 0, False)]])]
    [(0, 6), (1, 5), (1, 6)]
    """
    if not dims:
        return iter(())
    # rest_partial[d]: whether the dimensions after d hold a piece not whole.
    rest_partial = [False] * len(dims)
    for axis in range(len(dims) - 2, -1, -1):
        rest_partial[axis] = rest_partial[axis + 1] or not all_complete(dims[axis + 1])
    return _walk_partial(dims, 0, rest_partial)


def _walk_partial(dims: Sequence[DimPieces], axis: int, rest_partial: list[bool]
                  ) -> Iterator[tuple[DimPiece, ...]]:
    rest = dims[axis + 1:]
    if not rest_partial[axis]:
        # Every combination needs this dimension's piece in part; the rest are all whole.
        for piece in incomplete_pieces(dims[axis]):
            for tail in iter_product(rest):
                yield (piece, *tail)
        return
    for piece in dims[axis]:
        tails = iter_product(rest) if not piece[3] else _walk_partial(dims, axis + 1,
                                                                        rest_partial)
        for tail in tails:
            yield (piece, *tail)


def piece_for(pieces: DimPieces, chunk_index: int) -> DimPiece | None:
    """The piece of chunk ``chunk_index`` among a dimension's pieces, or None.

    >>> piece_for([(0, 1, None, False), (3, 0, None, True)], 3)
    (3, 0, None, True)
    >>> piece_for([(0, 1, None, False)], 2) is None
    True
    """
    if type(pieces) is RegularSlicePieces:
        return pieces.piece_for(chunk_index)
    # Pieces are in ascending chunk order, so a binary search finds the chunk's one.
    position = bisect_left(pieces, chunk_index, key=_CHUNK_OF)
    if position < len(pieces) and pieces[position][0] == chunk_index:
        return pieces[position]
    return None


_CHUNK_OF = itemgetter(0)


def iter_product(dims: Sequence[DimPieces]) -> Iterator[tuple[DimPiece, ...]]:
    """``itertools.product(*dims)``, without holding a :class:`RegularSlicePieces` in
    memory: ``product`` turns each input into a tuple first, which a dimension of 2**40
    pieces cannot afford, so such dimensions are walked one piece at a time.

    >>> [tuple(p[0] for p in c) for c in iter_product([[(0,), (1,)], [(5,)]])]
    [(0, 5), (1, 5)]
    """
    if RegularSlicePieces not in map(type, dims):
        return product(*dims)
    lazy = [axis for axis, pieces in enumerate(dims) if type(pieces) is RegularSlicePieces]
    return _walk_product(dims, lazy[-1])


def _walk_product(dims: Sequence[DimPieces], axis: int) -> Iterator[tuple[DimPiece, ...]]:
    """:func:`iter_product` where ``axis`` is the last lazy dimension: the ones before it
    recursively, it walked, the ones after it held."""
    tail = [list(pieces) for pieces in dims[axis + 1:]]
    for head in iter_product(dims[:axis]):
        for piece in dims[axis]:
            for rest in product(*tail):
                yield (*head, piece, *rest)


def _rectilinear_slice_pieces(
    start: int, step: int, length: int, dim_len: int, chunk_len: AnyChunkDim
) -> DimPieces:
    """:func:`slice_pieces` over rectilinear chunks, with the per-chunk maths vectorised."""
    resolved = resolve_dim(chunk_len, dim_len)
    if type(resolved) is int:
        return slice_pieces(start, step, length, dim_len, resolved)
    assert type(resolved) is DimBoundaries
    if length == 0:
        return []
    bounds = resolved.array
    last = start + (length - 1) * step
    stride = abs(step)
    low, high = (start, last) if step > 0 else (last, start)
    first_chunk = resolved.locate(low)
    last_chunk = resolved.locate(high)
    if length <= last_chunk - first_chunk + 1:
        # No more elements than chunks in range: locate the elements, so that a large
        # step never costs work for the chunks it jumps over.
        elements = np.arange(low, high + 1, stride, dtype=np.intp)
        element_chunks = np.searchsorted(bounds, elements, side="right") - 1
        group_first = group_starts(element_chunks)
        group_last = np.append(group_first[1:], length) - 1
        chunk_ids = element_chunks[group_first]
        firsts = elements[group_first]
        lasts = elements[group_last]
        counts = group_last - group_first + 1
    else:
        # Every chunk in range, clipped to [low, high], and its first and last element.
        chunk_ids = np.arange(first_chunk, last_chunk + 1, dtype=np.intp)
        clipped_low = np.maximum(bounds[first_chunk : last_chunk + 1], low)
        clipped_high = np.minimum(bounds[first_chunk + 1 : last_chunk + 2], high + 1) - 1
        firsts = low + -(-(clipped_low - low) // stride) * stride
        lasts = low + ((clipped_high - low) // stride) * stride
        counts = (lasts - firsts) // stride + 1
        touched = counts > 0
        if not bool(touched.all()):
            chunk_ids, firsts, lasts, counts = (
                chunk_ids[touched],
                firsts[touched],
                lasts[touched],
                counts[touched],
            )
    chunk_starts = bounds[chunk_ids]
    extents = np.minimum(bounds[chunk_ids + 1], dim_len) - chunk_starts
    pieces: list[DimPiece] = []
    for chunk_index, chunk_start, extent, first_in_chunk, last_in_chunk, count in zip(
        chunk_ids.tolist(),
        chunk_starts.tolist(),
        extents.tolist(),
        firsts.tolist(),
        lasts.tolist(),
        counts.tolist(),
        strict=True,
    ):
        pieces.append(_slice_piece(chunk_index, chunk_start, extent, first_in_chunk,
                                   last_in_chunk, count, start, step))
    return pieces


def _as_slice_if_arithmetic(local: npt.NDArray[np.intp] | list[int]
                            ) -> slice | npt.NDArray[np.intp]:
    """A strictly increasing arithmetic progression becomes a slice: cheaper to index.
    Anything else stays (or, given as a list, becomes) an ``intp`` array.

    >>> _as_slice_if_arithmetic([2, 4, 6]), _as_slice_if_arithmetic([2, 1])
    (slice(2, 7, 2), array([2, 1]))
    """
    count = len(local)
    first = int(local[0])
    if count == 1:
        return slice(first, first + 1)
    step = int(local[1]) - first
    last = int(local[-1])
    if step <= 0 or last - first != step * (count - 1) or count > 2 and not (
            all(b - a == step for a, b in pairwise(local))
            if isinstance(local, list) else bool((np.diff(local) == step).all())):
        return local if isinstance(local, np.ndarray) else np.array(local, dtype=np.intp)
    return slice(first, last + 1, None if step == 1 else step)


def locate_indices(
    indices: npt.NDArray[np.intp], dim_len: int, chunk_len: int | DimBoundaries
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """For in-bounds indices along a dimension: the chunk holding each, and its position in
    that chunk. Safe for any chunk length: numpy refuses a Python int beyond ``intp`` as an
    operand, and a chunk that long holds every index an ``intp`` array can carry.

    >>> [a.tolist() for a in locate_indices(np.array([5, 0]), 10, 4)]
    [[1, 0], [1, 0]]
    >>> [a.tolist() for a in locate_indices(np.array([5, 0]), 2**70, 2**65)]
    [[0, 0], [5, 0]]
    """
    if type(chunk_len) is int:
        if chunk_len > INTP_MAX:
            return np.zeros_like(indices), indices
        chunk_ids, local = np.divmod(indices, chunk_len)
        return chunk_ids, local
    assert type(chunk_len) is DimBoundaries
    bounds = chunk_len.array
    chunk_ids = np.searchsorted(bounds, indices, side="right") - 1
    return chunk_ids, indices - bounds[chunk_ids]


def chunk_extents(
    chunk_ids: npt.NDArray[np.intp], dim_len: int, chunk_len: int | DimBoundaries
) -> npt.NDArray[np.intp]:
    """In-bounds length of each chunk in ``chunk_ids`` (edge chunks are short), for chunks
    that hold an element. Only the last chunk can be short along a regular dimension, and
    it is found in Python ints: ``dim_len`` may be beyond what ``intp`` can hold. Lengths
    saturate at ``INTP_MAX``: no index array can cover a longer chunk.

    >>> chunk_extents(np.array([0, 2, 2]), 10, 4).tolist()
    [4, 2, 2]
    >>> chunk_extents(np.array([0, 3]), 2**64, 2**62).tolist()
    [4611686018427387904, 4611686018427387904]
    >>> chunk_extents(np.array([1]), 10, DimBoundaries((0, 3, 12))).tolist()
    [7]
    """
    if type(chunk_len) is int:
        last_chunk, last_offset = divmod(dim_len - 1, chunk_len)
        extents = np.full(chunk_ids.shape, min(chunk_len, INTP_MAX), dtype=np.intp)
        if last_chunk <= INTP_MAX:  # else no intp chunk id can name it
            extents[chunk_ids == last_chunk] = min(last_offset + 1, INTP_MAX)
        return extents
    assert type(chunk_len) is DimBoundaries
    bounds = chunk_len.array
    return np.minimum(bounds[chunk_ids + 1], dim_len) - bounds[chunk_ids]


# Index arrays up to this long are grouped in plain Python: numpy's set-up per call costs
# more than the whole grouping of a few indices (S10's oindex: 12 -> 3 us per array).
_FEW_INDICES = 16


def _few_array_pieces(indices: list[int], dim_len: int, chunk_len: int) -> list[DimPiece]:
    """:func:`array_pieces` of a few indices along a regular dimension, the same pieces.

    >>> for piece in _few_array_pieces([5, 0, 1, 4], dim_len=6, chunk_len=3):
    ...     print(piece)
    (0, slice(0, 2, None), slice(1, 3, None), False)
    (1, array([2, 1]), array([0, 3]), False)
    """
    positions_by_chunk: dict[int, list[int]] = {}
    for position, index in enumerate(indices):
        positions_by_chunk.setdefault(index // chunk_len, []).append(position)
    last_chunk, last_offset = divmod(dim_len - 1, chunk_len)
    pieces: list[DimPiece] = []
    for chunk_index in sorted(positions_by_chunk):
        positions = positions_by_chunk[chunk_index]
        base = chunk_index * chunk_len
        local = [indices[position] - base for position in positions]
        chunk_selection = _as_slice_if_arithmetic(local)
        extent = last_offset + 1 if chunk_index == last_chunk else chunk_len
        complete = (type(chunk_selection) is slice and chunk_selection.start == 0
                    and chunk_selection.step is None and chunk_selection.stop == extent)
        pieces.append((chunk_index, chunk_selection, positions_part(positions), complete))
    return pieces


def array_pieces(
    indices: npt.NDArray[np.intp], dim_len: int, chunk_len: AnyChunkDim
) -> list[DimPiece]:
    """Pieces of a 1-d array of normalised indices (any order, duplicates allowed).

    Elements are grouped by chunk with a stable sort so that, within a chunk, they keep
    their output order. Increasing arithmetic runs become slices, on both sides.

    >>> for piece in array_pieces(np.array([5, 0, 1, 4]), dim_len=6, chunk_len=3):
    ...     print(piece)
    (0, slice(0, 2, None), slice(1, 3, None), False)
    (1, array([2, 1]), array([0, 3]), False)
    >>> for piece in array_pieces(np.array([5, 0, 1, 4]), dim_len=6, chunk_len=(0, 1, 4, 9)):
    ...     print(piece)
    (0, slice(0, 1, None), slice(1, 2, None), True)
    (1, slice(0, 1, None), slice(2, 3, None), False)
    (2, array([1, 0]), array([0, 3]), False)
    """
    resolved = chunk_len if type(chunk_len) is int else resolve_dim(chunk_len, dim_len)
    count = indices.shape[0]
    if count == 0:
        return []
    if count <= _FEW_INDICES and type(resolved) is int and resolved <= INTP_MAX:
        return _few_array_pieces(indices.tolist(), dim_len, resolved)
    chunk_ids, local = locate_indices(indices, dim_len, resolved)
    if type(resolved) is int:
        nchunks = -(-dim_len // resolved)
    else:
        assert type(resolved) is DimBoundaries
        nchunks = resolved.nchunks(dim_len)
    order = stable_group_order(chunk_ids, nchunks)
    if order is not None:
        chunk_ids = chunk_ids[order]
        local = local[order]
    starts = group_starts(chunk_ids)
    ends = np.append(starts[1:], count)
    group_chunks = chunk_ids[starts]
    extents = chunk_extents(group_chunks, dim_len, resolved).tolist()
    out_parts = group_out_selections(order, starts, ends)
    pieces: list[DimPiece] = []
    for chunk_index, begin, end, extent, out_part in zip(
        group_chunks.tolist(), starts.tolist(), ends.tolist(), extents, out_parts, strict=True
    ):
        chunk_selection = _as_slice_if_arithmetic(local[begin:end])
        complete = (
            type(chunk_selection) is slice
            and chunk_selection.start == 0
            and chunk_selection.step is None
            and chunk_selection.stop == extent
        )
        pieces.append((chunk_index, chunk_selection, out_part, complete))
    return pieces
