"""Per-dimension planning: split one normalised selection item across the chunks of a dim.

A :data:`DimPiece` is ``(chunk_index, chunk_selection, out_selection, is_complete)`` for a
single dimension. ``out_selection`` is None when the item is an integer, because the
dimension is then dropped from the output. Orthogonal-style selections (basic, oindex,
blocks) are the Cartesian product of these per-dimension pieces.

>>> for piece in slice_pieces(start=1, step=1, length=5, dim_len=6, chunk_len=4):
...     print(piece)
(0, slice(1, 4, None), slice(0, 3, None), False)
(1, slice(0, 2, None), slice(3, 5, None), True)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

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


def grid_shape(shape: tuple[int, ...], chunks: tuple[int, ...]) -> tuple[int, ...]:
    """Number of chunks along each dimension.

    >>> grid_shape((10, 0, 3), (4, 2, 5))
    (3, 0, 1)
    """
    return tuple(-(-length // chunk_len) for length, chunk_len in zip(shape, chunks, strict=True))


def chunk_extent(chunk_index: int, dim_len: int, chunk_len: int) -> int:
    """In-bounds length of chunk ``chunk_index`` along a dimension (edge chunks are short).

    >>> chunk_extent(0, 10, 4), chunk_extent(2, 10, 4)
    (4, 2)
    """
    return min(chunk_len, dim_len - chunk_index * chunk_len)


def integer_pieces(index: int, dim_len: int, chunk_len: int) -> list[DimPiece]:
    """The single piece of an already normalised integer index.

    >>> integer_pieces(5, 10, 4)
    [(1, 1, None, False)]
    """
    chunk_index, offset = divmod(index, chunk_len)
    return [(chunk_index, offset, None, chunk_extent(chunk_index, dim_len, chunk_len) == 1)]


def slice_pieces(
    start: int, step: int, length: int, dim_len: int, chunk_len: int
) -> list[DimPiece]:
    """Pieces of the progression ``start + j * step, j < length``, in ascending chunk order.

    Both selections are slices. Output slices always have step 1; for a negative step the
    chunk slice runs backwards instead, so chunks are still visited in grid order.

    >>> for piece in slice_pieces(start=5, step=-2, length=3, dim_len=6, chunk_len=3):
    ...     print(piece)
    (0, slice(1, 0, -2), slice(2, 3, None), False)
    (1, slice(2, None, -2), slice(0, 2, None), False)
    """
    if length == 0:
        return []
    last = start + (length - 1) * step
    stride = abs(step)
    low, high = (start, last) if step > 0 else (last, start)
    chunk_step = None if step == 1 else step
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
                    chunk_extent(chunk_index, dim_len, chunk_len) == 1,
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
        if step > 0:
            chunk_selection = slice(
                first_in_chunk - chunk_start, last_in_chunk - chunk_start + 1, chunk_step
            )
            out_start = (first_in_chunk - start) // step
        else:
            # A stop of -1 would mean "the last element", so running off the front of
            # the chunk has to be spelled None.
            stop = first_in_chunk - chunk_start - 1
            chunk_selection = slice(
                last_in_chunk - chunk_start, stop if stop >= 0 else None, chunk_step
            )
            out_start = (start - last_in_chunk) // stride
        pieces.append(
            (
                chunk_index,
                chunk_selection,
                slice(out_start, out_start + count),
                count == extent and (step > 0 or count == 1),
            )
        )
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


def array_pieces(indices: npt.NDArray[np.intp], dim_len: int, chunk_len: int) -> list[DimPiece]:
    """Pieces of a 1-d array of normalised indices (any order, duplicates allowed).

    Elements are grouped by chunk with a stable sort so that, within a chunk, they keep
    their output order. Increasing arithmetic runs become slices, on both sides.

    >>> for piece in array_pieces(np.array([5, 0, 1, 4]), dim_len=6, chunk_len=3):
    ...     print(piece)
    (0, slice(0, 2, None), slice(1, 3, None), False)
    (1, array([2, 1]), array([0, 3]), False)
    """
    count = indices.shape[0]
    if count == 0:
        return []
    chunk_ids, local = np.divmod(indices, chunk_len)
    order = stable_group_order(chunk_ids, -(-dim_len // chunk_len))
    if order is not None:
        chunk_ids = chunk_ids[order]
        local = local[order]
    starts = group_starts(chunk_ids)
    ends = np.append(starts[1:], count)
    group_chunks = chunk_ids[starts]
    extents = np.minimum(chunk_len, dim_len - group_chunks * chunk_len).tolist()
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
