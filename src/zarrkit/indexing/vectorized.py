"""Vectorised (pointwise) indexing, ``a.vindex[...]``: integer coordinate arrays or a mask.

Points are grouped by chunk entirely in numpy (linear chunk id per point, stable argsort,
split at id changes), so Python work is proportional to the number of chunks touched.

These indexers have ``flat_output = True``: ``out_selection`` is a 1-tuple holding a
slice or a 1-d position array into the *flattened* output, so the caller reads with
``out.reshape(-1)[p.out_selection] = chunk[p.chunk_selection]`` and writes with
``chunk[p.chunk_selection] = value.reshape(-1)[p.out_selection]``. ``chunk_selection`` is
a tuple of 1-d chunk-local coordinate arrays, one per dimension.

>>> indexer = coordinate_indexer(([0, 5, 1], [2, 0, 3]), shape=(6, 4), chunks=(4, 4))
>>> indexer.shape, indexer.flat_output
((3,), True)
>>> [(p.chunk_coords, [c.tolist() for c in p.chunk_selection], p.out_selection) for p in indexer]
[((0, 0), [[0, 1], [2, 3]], (array([0, 2]),)), ((1, 0), [[1], [0]], (slice(1, 2, None),))]
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from math import prod
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from zarrkit.errors import IndexingError
from zarrkit.indexing.dims import chunk_extents, locate_indices
from zarrkit.indexing.grid import (
    AnyChunkDim,
    ChunkGrid,
    DimBoundaries,
    grid_shape,
    resolve_grid,
)
from zarrkit.indexing.grouping import (
    group_out_selections,
    group_starts,
    positions_part,
    stable_group_order,
)
from zarrkit.indexing.normalize import as_selection_tuple, normalize_integer_array
from zarrkit.indexing.plan import ChunkProjection, Indexer

__all__ = ["VectorizedIndexer", "coordinate_indexer", "mask_indexer", "vindex_indexer"]

# Indexing a 0-d array with a 0-d True mask gives a 1-element 1-d view, which matches the
# flat output on both read and write (``chunk[()]`` would be 0-d and refuse a (1,) value).
_WHOLE_ZERO_D = (np.array(True),)
_WHOLE_ZERO_D[0].flags.writeable = False


class VectorizedIndexer:
    """Plan of a pointwise selection (see :func:`coordinate_indexer`, :func:`mask_indexer`).

    >>> VectorizedIndexer.from_points((np.array([0, 3]),), (4,), (2,), result_shape=(2,)).nchunks
    2
    """

    __slots__ = ("shape", "points", "_projections", "_plan")

    flat_output: bool = True

    shape: tuple[int, ...]
    points: tuple[npt.NDArray[np.intp], ...] | None
    """The selected elements' coordinates, one 1-d array per dimension in output order,
    when there are many points on a regular grid (else None): the native engine reads
    them without the plan, which is grouped only when first iterated."""

    def __init__(self, shape: tuple[int, ...], projections: list[ChunkProjection] | None,
                 *, plan: Callable[[], list[ChunkProjection]] | None = None,
                 points: tuple[npt.NDArray[np.intp], ...] | None = None) -> None:
        self.shape = shape
        self._projections = projections
        self._plan = plan
        self.points = points

    def _planned(self) -> list[ChunkProjection]:
        if self._projections is None:
            assert self._plan is not None
            self._projections, self._plan = self._plan(), None
        return self._projections

    @property
    def nchunks(self) -> int:
        """Number of chunks the selection touches.

        >>> coordinate_indexer(([0, 1, 7],), (8,), (4,)).nchunks
        2
        """
        return len(self._planned())

    def __iter__(self) -> Iterator[ChunkProjection]:
        return iter(self._planned())

    def partial_projections(self) -> Iterator[ChunkProjection]:
        """The projections that are not complete, in C order."""
        return (projection for projection in self if not projection.is_complete)

    def projections_for(self, chunk_coords: Collection[tuple[int, ...]]
                        ) -> Iterator[ChunkProjection]:
        """The projections of those of ``chunk_coords`` that the selection touches, in
        C order of the grid.

        >>> indexer = coordinate_indexer(([0, 7],), (8,), (4,))
        >>> [p.chunk_coords for p in indexer.projections_for({(1,), (5,)})]
        [(1,)]
        """
        wanted = chunk_coords if isinstance(chunk_coords, set | frozenset) else set(chunk_coords)
        return (p for p in self._planned() if p.chunk_coords in wanted)

    @classmethod
    def from_points(
        cls,
        coordinates: tuple[npt.NDArray[np.intp], ...],
        array_shape: tuple[int, ...],
        chunks: tuple[AnyChunkDim, ...],
        *,
        result_shape: tuple[int, ...],
        unique_in_c_order: bool = False,
    ) -> VectorizedIndexer:
        """Group normalised 1-d point coordinates (one array per dimension) by chunk.

        ``unique_in_c_order`` promises the points are distinct and sorted in C order of
        the array (as ``np.nonzero`` returns them), which makes completeness a count check.

        >>> points = (np.array([3, 0]), np.array([1, 1]))
        >>> indexer = VectorizedIndexer.from_points(points, (4, 2), (2, 2), result_shape=(2,))
        >>> [p.chunk_coords for p in indexer]
        [(0, 0), (1, 0)]
        """
        ndim = len(array_shape)
        npoints = prod(result_shape)
        resolved = resolve_grid(array_shape, chunks)
        if npoints == 0:
            return cls(result_shape, [])
        if ndim == 0:
            return cls(result_shape, [ChunkProjection((), _WHOLE_ZERO_D, (slice(0, 1),), True)])
        rectilinear = any(type(chunk_len) is DimBoundaries for chunk_len in resolved)
        if npoints <= _FEW_POINTS and not rectilinear:
            return cls(result_shape, _few_point_projections(
                coordinates, array_shape, cast(tuple[int, ...], resolved)))
        for _ in zip(coordinates, array_shape, resolved, strict=True):
            pass  # one array per dimension, refused now rather than when planned
        return cls(result_shape, None, points=None if rectilinear else coordinates,
                   plan=lambda: cls._grouped(coordinates, array_shape, resolved, npoints,
                                             unique_in_c_order))

    @staticmethod
    def _grouped(coordinates: tuple[npt.NDArray[np.intp], ...], array_shape: tuple[int, ...],
                 resolved: tuple[int | DimBoundaries, ...], npoints: int,
                 unique_in_c_order: bool
                 ) -> list[ChunkProjection]:
        """The projections of the points: grouped by chunk in numpy."""
        grid = grid_shape(array_shape, resolved)
        chunk_ids: list[npt.NDArray[np.intp]] = []
        local: list[npt.NDArray[np.intp]] = []
        for coords, dim_len, chunk_len in zip(coordinates, array_shape, resolved, strict=True):
            dim_ids, dim_local = locate_indices(coords, dim_len, chunk_len)
            chunk_ids.append(dim_ids)
            local.append(dim_local)
        order, starts, group_chunk_ids = _group_by_chunk(chunk_ids, grid)
        if order is not None:
            local = [dim_local[order] for dim_local in local]
        ends = np.append(starts[1:], npoints)
        # Completeness needs the point count to equal the in-bounds volume; comparing all
        # groups at once keeps the per-chunk Python work to the rare candidates. Volumes
        # are multiplied in float64 so that huge chunks cannot overflow: exact below 2**53,
        # and a volume above that cannot equal any count of points held in memory.
        extents = [chunk_extents(dim_ids, dim_len, chunk_len) for dim_ids, dim_len, chunk_len
                   in zip(group_chunk_ids, array_shape, resolved, strict=True)]
        volumes = np.ones(starts.shape[0], dtype=np.float64)
        for dim_extents in extents:
            volumes *= dim_extents
        fills_chunk = (ends - starts == volumes).tolist()
        out_parts = group_out_selections(order, starts, ends)
        group_coords = zip(*(dim_ids.tolist() for dim_ids in group_chunk_ids), strict=True)
        projections: list[ChunkProjection] = []
        for group, (chunk_coords, begin, end, out_part, candidate) in enumerate(zip(
            group_coords, starts.tolist(), ends.tolist(), out_parts, fills_chunk, strict=True
        )):
            chunk_selection = tuple(dim_local[begin:end] for dim_local in local)
            complete = candidate and (
                unique_in_c_order
                or _visits_in_c_order(
                    chunk_selection, tuple(int(dim_extents[group]) for dim_extents in extents))
            )
            projections.append(
                ChunkProjection(chunk_coords, chunk_selection, (out_part,), complete)
            )
        return projections


# Up to this many points are grouped in plain Python: numpy's per-call cost on a handful
# of points exceeds the work (S10's five-point vindex spent 60% of its time grouping).
_FEW_POINTS = 32


def _few_point_projections(
    coordinates: tuple[npt.NDArray[np.intp], ...],
    array_shape: tuple[int, ...],
    chunks: tuple[int, ...],
) -> list[ChunkProjection]:
    """The projections of a few points on a regular grid, as :meth:`from_points` makes
    them: chunks in C order, each chunk's points in selection order.

    >>> [(p.chunk_coords, p.out_selection) for p in _few_point_projections(
    ...     (np.array([3, 0, 2]),), (4,), (2,))]
    [((0,), (slice(1, 2, None),)), ((1,), (array([0, 2]),))]
    """
    columns = [dim_coords.tolist() for dim_coords in coordinates]
    groups: dict[tuple[int, ...], list[int]] = {}
    for point, position in enumerate(zip(*columns, strict=True)):
        key = tuple(index // chunk_len for index, chunk_len in zip(position, chunks, strict=True))
        groups.setdefault(key, []).append(point)
    projections: list[ChunkProjection] = []
    for chunk_coords in sorted(groups):
        points = groups[chunk_coords]
        chunk_selection = tuple(
            np.array([dim_coords[p] - coord * chunk_len for p in points], dtype=np.intp)
            for dim_coords, coord, chunk_len in zip(columns, chunk_coords, chunks, strict=True)
        )
        out_part = positions_part(points)
        extents = tuple(min(chunk_len, dim_len - coord * chunk_len)
                        for coord, chunk_len, dim_len in zip(chunk_coords, chunks, array_shape,
                                                             strict=True))
        complete = len(points) == prod(extents) and _visits_in_c_order(chunk_selection, extents)
        projections.append(ChunkProjection(chunk_coords, chunk_selection, (out_part,), complete))
    return projections


def _group_by_chunk(
    chunk_ids: list[npt.NDArray[np.intp]], grid: tuple[int, ...]
) -> tuple[npt.NDArray[np.intp] | None, npt.NDArray[np.intp], tuple[npt.NDArray[np.intp], ...]]:
    """Stable grouping permutation (None if already grouped), group starts, group chunks."""
    nchunks = prod(grid)
    if nchunks <= np.iinfo(np.intp).max:
        linear_ids = np.ravel_multi_index(chunk_ids, grid) if len(grid) > 1 else chunk_ids[0]
        order = stable_group_order(linear_ids, nchunks)
        if order is not None:
            linear_ids = linear_ids[order]
        starts = group_starts(linear_ids)
        return order, starts, np.unravel_index(linear_ids[starts], grid)
    # A grid too large to number its chunks in one machine integer: sort by coordinates.
    order = np.lexsort(chunk_ids[::-1])
    sorted_ids = [dim_ids[order] for dim_ids in chunk_ids]
    changes = np.zeros(order.shape[0] - 1, dtype=bool)
    for dim_ids in sorted_ids:
        changes |= dim_ids[1:] != dim_ids[:-1]
    starts = np.concatenate(([0], np.flatnonzero(changes) + 1))
    return order, starts, tuple(dim_ids[starts] for dim_ids in sorted_ids)


def _visits_in_c_order(
    chunk_selection: tuple[npt.NDArray[np.intp], ...], extents: tuple[int, ...]
) -> bool:
    # Called only when the point count equals the in-bounds volume (the product of
    # ``extents``), so strictly increasing linear positions mean every in-bounds element
    # exactly once, in C order. Positions are taken over the in-bounds region, not the
    # full chunk: they order points the same, and the region's size is the point count,
    # while an overhanging chunk may have more elements than an intp can number.
    positions = np.ravel_multi_index(chunk_selection, extents)
    return bool((positions[1:] > positions[:-1]).all())


def coordinate_indexer(selection: Any, shape: tuple[int, ...], chunks: ChunkGrid) -> Indexer:
    """Plan ``a.vindex[selection]`` for one integer array (or list, or int) per dimension.

    The arrays broadcast together; the result has the broadcast shape, like numpy's
    ``a[tuple_of_int_arrays]``. Output selections address ``out.reshape(-1)``.

    >>> import numpy as np
    >>> full = np.arange(20).reshape(4, 5)
    >>> rows, cols = np.array([[0], [3]]), np.array([-1, 1])
    >>> indexer = coordinate_indexer((rows, cols), (4, 5), (4, 5))
    >>> out = np.empty(indexer.shape, dtype=full.dtype)
    >>> for p in indexer:
    ...     out.reshape(-1)[p.out_selection] = full[p.chunk_selection]
    >>> out.tolist() == full[rows, cols].tolist()
    True

    Along a rectilinear dimension, local coordinates count from the chunk's own start:

    >>> indexer = coordinate_indexer(([4, 0, 2],), shape=(5,), chunks=((0, 1, 3, 7),))
    >>> [(p.chunk_coords, p.chunk_selection[0].tolist()) for p in indexer]
    [((0,), [0]), ((1,), [1]), ((2,), [1])]
    """
    items = as_selection_tuple(selection)
    if len(items) != len(shape):
        raise IndexingError(
            f"vindex needs exactly one index array per dimension: got {len(items)} "
            f"for an array of {len(shape)} dimensions"
        )
    arrays: list[npt.NDArray[np.intp]] = []
    for item, dim_len in zip(items, shape, strict=True):
        if item is None or item is Ellipsis or type(item) is slice:
            raise IndexingError(f"vindex accepts only integer arrays, got {item!r}")
        arrays.append(normalize_integer_array(item, dim_len, allow_bool=False))
    try:
        broadcast = np.broadcast_arrays(*arrays)
    except ValueError as error:
        raise IndexingError(f"vindex arrays do not broadcast together: {error}") from error
    result_shape = broadcast[0].shape if broadcast else ()
    points = tuple(array.reshape(-1) for array in broadcast)
    return VectorizedIndexer.from_points(points, shape, chunks, result_shape=result_shape)


def mask_indexer(selection: Any, shape: tuple[int, ...], chunks: ChunkGrid) -> Indexer:
    """Plan ``a.vindex[mask]`` for a boolean array with exactly the array's shape.

    The result is 1-d, the selected elements in C order: numpy's ``a[mask]``.

    >>> import numpy as np
    >>> mask = np.array([[True, False], [False, True], [True, True]])
    >>> indexer = mask_indexer(mask, (3, 2), (2, 2))
    >>> indexer.shape, [p.is_complete for p in indexer]
    ((4,), [False, True])
    """
    items = as_selection_tuple(selection)
    if len(items) != 1:
        raise IndexingError("a mask selection must be a single boolean array")
    mask = np.asarray(items[0])
    if mask.dtype != np.bool_ or mask.shape != shape:
        raise IndexingError(
            f"a mask selection must be a boolean array of shape {shape}, "
            f"got dtype {mask.dtype} and shape {mask.shape}"
        )
    if mask.ndim == 0:
        # np.nonzero refuses 0-d input; a 0-d mask selects its single element or nothing.
        return VectorizedIndexer.from_points((), shape, chunks, result_shape=(int(mask),))
    points = tuple(np.nonzero(mask))
    return VectorizedIndexer.from_points(
        points, shape, chunks, result_shape=(points[0].shape[0],), unique_in_c_order=True
    )


def vindex_indexer(selection: Any, shape: tuple[int, ...], chunks: ChunkGrid) -> Indexer:
    """Plan ``a.vindex[selection]``: a whole-array boolean mask, else coordinate arrays.

    >>> import numpy as np
    >>> vindex_indexer(np.ones((2, 2), dtype=bool), (2, 2), (1, 1)).shape
    (4,)
    >>> vindex_indexer(([1, 0], [0, 0]), (2, 2), (1, 1)).shape
    (2,)
    """
    items = as_selection_tuple(selection)
    if (
        len(items) == 1
        and isinstance(items[0], np.ndarray)
        and items[0].dtype == np.bool_
        and items[0].ndim == len(shape)
    ):
        return mask_indexer(items[0], shape, chunks)
    return coordinate_indexer(items, shape, chunks)
