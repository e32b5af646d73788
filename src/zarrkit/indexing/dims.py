"""Per-dimension planning: split one normalised selection item across the chunks of a dim.

A :data:`DimPiece` is ``(chunk_index, chunk_selection, out_selection, is_complete)`` for a
single dimension. ``out_selection`` is None when the item is an integer, because the
dimension is then dropped from the output. Orthogonal-style selections (basic, oindex,
blocks) are the Cartesian product of these per-dimension pieces.

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

from typing import Any

import numpy as np
import numpy.typing as npt

from zarrkit.indexing.grid import AnyChunkDim, DimBoundaries, grid_shape, resolve_dim
from zarrkit.indexing.grouping import group_out_selections, group_starts, stable_group_order

__all__ = [
    "DimPiece",
    "array_pieces",
    "chunk_extent",
    "grid_shape",
    "integer_pieces",
    "slice_pieces",
]

DimPiece = tuple[int, Any, Any, bool]


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


def slice_pieces(
    start: int, step: int, length: int, dim_len: int, chunk_len: AnyChunkDim
) -> list[DimPiece]:
    """Pieces of the progression ``start + j * step, j < length``, in ascending chunk order.

    Both selections are slices. Output slices always have step 1; for a negative step the
    chunk slice runs backwards instead, so chunks are still visited in grid order.

    >>> for piece in slice_pieces(start=5, step=-2, length=3, dim_len=6, chunk_len=3):
    ...     print(piece)
    (0, slice(1, 0, -2), slice(2, 3, None), False)
    (1, slice(2, None, -2), slice(0, 2, None), False)
    """
    if type(chunk_len) is not int:
        return _rectilinear_slice_pieces(start, step, length, dim_len, chunk_len)
    if length == 0:
        return []
    last = start + (length - 1) * step
    stride = abs(step)
    low, high = (start, last) if step > 0 else (last, start)
    pieces: list[DimPiece] = []
    if stride >= chunk_len:
        # No chunk holds two selected elements, so walking elements is walking touched
        # chunks; walking the chunk range instead could visit many untouched chunks.
        for index in range(low, high + 1, stride):
            chunk_index, offset = divmod(index, chunk_len)
            out_index = (index - start) // step
            pieces.append(
                (
                    chunk_index,
                    slice(offset, offset + 1),
                    slice(out_index, out_index + 1),
                    min(chunk_len, dim_len - chunk_index * chunk_len) == 1,
                )
            )
        return pieces
    # stride < chunk_len: every chunk between the first and the last one is touched.
    for chunk_index in range(low // chunk_len, high // chunk_len + 1):
        chunk_start = chunk_index * chunk_len
        extent = min(chunk_len, dim_len - chunk_start)
        if chunk_start <= low:
            first_in_chunk = low
        else:
            first_in_chunk = low + -(-(chunk_start - low) // stride) * stride
        last_in_chunk = low + ((min(chunk_start + extent - 1, high) - low) // stride) * stride
        count = (last_in_chunk - first_in_chunk) // stride + 1
        pieces.append(_slice_piece(chunk_index, chunk_start, extent, first_in_chunk,
                                   last_in_chunk, count, start, step))
    return pieces


def _rectilinear_slice_pieces(
    start: int, step: int, length: int, dim_len: int, chunk_len: AnyChunkDim
) -> list[DimPiece]:
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


def _as_slice_if_arithmetic(local: npt.NDArray[np.intp]) -> slice | npt.NDArray[np.intp]:
    """A strictly increasing arithmetic progression becomes a slice: cheaper to index."""
    count = local.shape[0]
    first = int(local[0])
    if count == 1:
        return slice(first, first + 1)
    step = int(local[1]) - first
    last = int(local[-1])
    if step <= 0 or last - first != step * (count - 1):
        return local
    if count > 2 and not bool((np.diff(local) == step).all()):
        return local
    return slice(first, last + 1, None if step == 1 else step)


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
    if type(resolved) is int:
        bounds = None
        chunk_ids, local = np.divmod(indices, resolved)
        nchunks = -(-dim_len // resolved)
    else:
        assert type(resolved) is DimBoundaries
        bounds = resolved.array
        chunk_ids = np.searchsorted(bounds, indices, side="right") - 1
        local = indices - bounds[chunk_ids]
        nchunks = resolved.nchunks(dim_len)
    order = stable_group_order(chunk_ids, nchunks)
    if order is not None:
        chunk_ids = chunk_ids[order]
        local = local[order]
    starts = group_starts(chunk_ids)
    ends = np.append(starts[1:], count)
    group_chunks = chunk_ids[starts]
    if bounds is None:
        assert type(resolved) is int
        extents = np.minimum(resolved, dim_len - group_chunks * resolved).tolist()
    else:
        extents = (np.minimum(bounds[group_chunks + 1], dim_len) - bounds[group_chunks]).tolist()
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
