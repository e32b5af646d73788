"""Property tests of zarrkit.indexing against numpy, through a simulated chunk store.

The array is split into full-size chunk arrays whose overhang is filled with a sentinel,
so any plan that reads the overhang returns a wrong value and any plan that writes it
is caught when the overhang is checked after the write. Grids are regular (an int per
dimension) or rectilinear (a tuple of chunk boundaries on some dimensions, so chunk
arrays have varying shapes); the simulation below is written independently of zarrkit.
"""

from __future__ import annotations

import doctest
import functools
import importlib
import itertools
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from zarrkit.errors import BoundsCheckError, IndexingError
from zarrkit.indexing import (
    ChunkProjection,
    Indexer,
    basic_indexer,
    block_indexer,
    chunk_shape_at,
    coordinate_indexer,
    grid_shape,
    is_pure_basic,
    mask_indexer,
    orthogonal_indexer,
    vindex_indexer,
)
from zarrkit.indexing.grouping import stable_group_order

OVERHANG = -7
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------------------------------
# Chunked simulation


Chunks = tuple[int | tuple[int, ...], ...]


@functools.lru_cache(maxsize=1024)
def dim_chunk_spans(n: int, chunk: int | tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """``(start, stop)`` in array coordinates of each chunk of a dim holding data; ``stop``
    includes the overhang, so ``stop - start`` is the full length of the chunk array."""
    if isinstance(chunk, int):
        return tuple((k * chunk, (k + 1) * chunk) for k in range(-(-n // chunk)))
    return tuple((chunk[i], chunk[i + 1]) for i in range(len(chunk) - 1) if chunk[i] < n)


def grid_of(shape: tuple[int, ...], chunks: Chunks) -> tuple[int, ...]:
    return tuple(len(dim_chunk_spans(n, c)) for n, c in zip(shape, chunks, strict=True))


def chunk_spans(
    coords: tuple[int, ...], shape: tuple[int, ...], chunks: Chunks
) -> list[tuple[int, int]]:
    return [dim_chunk_spans(n, c)[k] for k, n, c in zip(coords, shape, chunks, strict=True)]


def full_chunk_shape(coords: tuple[int, ...], shape: tuple[int, ...], chunks: Chunks) -> tuple:
    return tuple(stop - start for start, stop in chunk_spans(coords, shape, chunks))


def source_region(
    coords: tuple[int, ...], shape: tuple[int, ...], chunks: Chunks
) -> tuple[slice, ...]:
    return tuple(slice(start, stop) for start, stop in chunk_spans(coords, shape, chunks))


def inbounds_region(
    coords: tuple[int, ...], shape: tuple[int, ...], chunks: Chunks
) -> tuple[slice, ...]:
    return tuple(
        slice(0, min(stop, n) - start)
        for (start, stop), n in zip(chunk_spans(coords, shape, chunks), shape, strict=True)
    )


def make_chunk(full: np.ndarray, chunks: Chunks, coords: tuple[int, ...]) -> np.ndarray:
    chunk = np.full(full_chunk_shape(coords, full.shape, chunks), OVERHANG, dtype=full.dtype)
    chunk[inbounds_region(coords, full.shape, chunks)] = full[
        source_region(coords, full.shape, chunks)
    ]
    return chunk


def split_into_chunks(full: np.ndarray, chunks: Chunks) -> dict[tuple[int, ...], np.ndarray]:
    return {
        coords: make_chunk(full, chunks, coords)
        for coords in itertools.product(*(range(g) for g in grid_of(full.shape, chunks)))
    }


def join_chunks(
    store: dict[tuple[int, ...], np.ndarray], shape: tuple[int, ...], chunks: Chunks
) -> np.ndarray:
    full = np.empty(shape, dtype=np.int64)
    for coords, chunk in store.items():
        full[source_region(coords, shape, chunks)] = chunk[inbounds_region(coords, shape, chunks)]
    return full


def overhang_untouched(
    store: dict[tuple[int, ...], np.ndarray], shape: tuple[int, ...], chunks: Chunks
) -> bool:
    for coords, chunk in store.items():
        probe = chunk.copy()
        probe[inbounds_region(coords, shape, chunks)] = OVERHANG
        if not (probe == OVERHANG).all():
            return False
    return True


def output_view(indexer: Indexer, array: np.ndarray) -> np.ndarray:
    return array.reshape(-1) if indexer.flat_output else array


def check_plan_shape(
    indexer: Indexer, shape: tuple[int, ...], chunks: Chunks
) -> list[ChunkProjection]:
    """Grid order, no repeats, only touched chunks, is_complete exactly right, and
    partial_projections exactly the others."""
    projections = list(indexer)
    assert len(projections) == indexer.nchunks
    coords = [p.chunk_coords for p in projections]
    assert coords == sorted(coords)
    assert len(set(coords)) == len(coords)
    grid = grid_of(shape, chunks)
    assert grid_shape(shape, chunks) == grid
    for p in projections:
        assert len(p.chunk_coords) == len(shape)
        assert all(0 <= k < g for k, g in zip(p.chunk_coords, grid, strict=True))
        chunk_shape = full_chunk_shape(p.chunk_coords, shape, chunks)
        assert chunk_shape_at(chunks, p.chunk_coords) == chunk_shape
        local_positions = np.arange(int(np.prod(chunk_shape))).reshape(chunk_shape)
        visited = np.asarray(local_positions[p.chunk_selection]).reshape(-1)
        assert visited.size > 0, "an untouched chunk was yielded"
        in_order = local_positions[inbounds_region(p.chunk_coords, shape, chunks)].reshape(-1)
        assert p.is_complete == np.array_equal(visited, in_order), p
    partial = list(indexer.partial_projections())
    assert [p.chunk_coords for p in partial] == [
        p.chunk_coords for p in projections if not p.is_complete]
    assert repr(partial) == repr([p for p in projections if not p.is_complete])
    return projections


def planned_read(indexer: Indexer, store: Any) -> np.ndarray:
    out = np.full(indexer.shape, -12345, dtype=np.int64)
    target = output_view(indexer, out)
    for p in indexer:
        target[p.out_selection] = store[p.chunk_coords][p.chunk_selection]
    return out


def planned_write(
    indexer: Indexer, store: dict[tuple[int, ...], np.ndarray], value: np.ndarray
) -> None:
    source = output_view(indexer, np.array(np.broadcast_to(value, indexer.shape)))
    for p in indexer:
        store[p.chunk_coords][p.chunk_selection] = source[p.out_selection]


def check_read_and_write(
    make_indexer: Any,
    selection: Any,
    full: np.ndarray,
    chunks: Chunks,
    expected_read: np.ndarray,
    numpy_setitem: Any,
    check_write: bool = True,
) -> Indexer:
    shape = full.shape
    indexer = make_indexer(selection, shape, chunks)
    assert indexer.shape == expected_read.shape
    check_plan_shape(indexer, shape, chunks)
    store = split_into_chunks(full, chunks)
    np.testing.assert_array_equal(planned_read(indexer, store), expected_read)
    if check_write:
        value = -(np.arange(expected_read.size, dtype=np.int64) + 1).reshape(expected_read.shape)
        planned_write(indexer, store, value)
        expected_full = full.copy()
        numpy_setitem(expected_full, value)
        np.testing.assert_array_equal(join_chunks(store, shape, chunks), expected_full)
        assert overhang_untouched(store, shape, chunks)
    return indexer


# ---------------------------------------------------------------------------------------
# Strategies


@st.composite
def boundaries(draw: st.DrawFn, n: int) -> tuple[int, ...]:
    """Rectilinear boundaries for a dim of length n: the last chunk holding data may
    overhang, and up to two more chunks may lie wholly past the end."""
    bounds = [0]
    while bounds[-1] < n:
        bounds.append(bounds[-1] + draw(st.integers(1, max(1, n + 1))))
    for _ in range(draw(st.integers(0, 2))):
        bounds.append(bounds[-1] + draw(st.integers(1, 3)))
    return tuple(bounds)


@st.composite
def arrays_and_chunks(
    draw: st.DrawFn,
    min_dims: int = 0,
    max_dims: int = 3,
    min_side: int = 0,
    max_side: int = 9,
    rectilinear: bool = False,
) -> tuple[np.ndarray, Chunks]:
    """An array and its chunks; ``rectilinear`` puts boundaries on at least one dim."""
    shape = draw(
        hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)
    )
    chunks: list[int | tuple[int, ...]] = [draw(st.integers(1, max(1, n + 2))) for n in shape]
    if rectilinear and shape:
        forced = draw(st.integers(0, len(shape) - 1))
        for axis, n in enumerate(shape):
            if axis == forced or draw(st.booleans()):
                chunks[axis] = draw(boundaries(n))
    full = np.arange(1, int(np.prod(shape)) + 1, dtype=np.int64).reshape(shape)
    return full, tuple(chunks)


GRIDS = pytest.mark.parametrize("rectilinear", [False, True], ids=["regular", "rectilinear"])


@st.composite
def orthogonal_selections(draw: st.DrawFn, shape: tuple[int, ...], unique: bool) -> tuple[Any, ...]:
    items: list[Any] = []
    for n in shape:
        kinds = ["slice", "bool"] + (["int", "list", "array"] if n > 0 else ["empty"])
        kind = draw(st.sampled_from(kinds))
        if kind == "slice":
            items.append(draw(st.slices(n)))
        elif kind == "bool":
            items.append(draw(hnp.arrays(np.bool_, (n,))))
        elif kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "empty":
            items.append([])
        else:
            values: list[int] = draw(
                st.lists(st.integers(-n, n - 1), min_size=0, max_size=2 * n + 1, unique=unique)
            )
            if unique:
                # -1 and n-1 name the same element; keep writes free of duplicates.
                values = list({v % n: v for v in values}.values())
            items.append(values if kind == "list" else np.array(values, dtype=np.int32))
    use_ellipsis: bool = draw(st.booleans())
    if items and use_ellipsis:
        start = draw(st.integers(0, len(items)))
        stop = draw(st.integers(start, len(items)))
        items[start:stop] = [Ellipsis]  # the replaced dimensions become full slices
    return tuple(items)


def expand_items(selection: Any, ndim: int) -> list[Any]:
    """Independent re-implementation of Ellipsis expansion and trailing-slice padding."""
    items = list(selection) if isinstance(selection, tuple) else [selection]
    if any(item is Ellipsis for item in items):
        position = next(i for i, item in enumerate(items) if item is Ellipsis)
        items[position : position + 1] = [slice(None)] * (ndim - len(items) + 1)
    return items + [slice(None)] * (ndim - len(items))


def orthogonal_numpy(full: np.ndarray, selection: tuple[Any, ...]) -> tuple[Any, ...]:
    """Rewrite an orthogonal selection as numpy ``np.ix_`` (integers become length-1)."""
    ranges: list[np.ndarray] = []
    for item, n in zip(expand_items(selection, full.ndim), full.shape, strict=True):
        if isinstance(item, slice):
            ranges.append(np.arange(n)[item])
        elif isinstance(item, int | np.integer):
            ranges.append(np.array([item % n]))
        else:
            array = np.asarray(item)
            ranges.append(np.flatnonzero(array) if array.dtype == bool else array.astype(np.intp))
    return np.ix_(*ranges) if ranges else ()


def orthogonal_expected(full: np.ndarray, selection: tuple[Any, ...]) -> np.ndarray:
    result = full[orthogonal_numpy(full, selection)]
    kept = [not isinstance(item, int | np.integer) for item in expand_items(selection, full.ndim)]
    return result.reshape(tuple(n for n, keep in zip(result.shape, kept, strict=True) if keep))


# ---------------------------------------------------------------------------------------
# Basic indexing


@GRIDS
@PROPERTY
@given(data=st.data())
def test_basic_matches_numpy(data: st.DataObject, rectilinear: bool) -> None:
    full, chunks = data.draw(arrays_and_chunks(rectilinear=rectilinear))
    selection = data.draw(hnp.basic_indices(full.shape, allow_newaxis=False))

    def setitem(target: np.ndarray, value: np.ndarray) -> None:
        target[selection] = value

    check_read_and_write(basic_indexer, selection, full, chunks, full[selection], setitem)


@GRIDS
@PROPERTY
@given(data=st.data())
def test_basic_large_and_negative_steps(data: st.DataObject, rectilinear: bool) -> None:
    full, chunks = data.draw(arrays_and_chunks(min_dims=1, min_side=1, rectilinear=rectilinear))
    selection = tuple(
        slice(
            data.draw(st.none() | st.integers(-2 * n, 2 * n)),
            data.draw(st.none() | st.integers(-2 * n, 2 * n)),
            data.draw(st.integers(-n - 2, n + 2).filter(bool)),
        )
        for n in full.shape
    )

    def setitem(target: np.ndarray, value: np.ndarray) -> None:
        target[selection] = value

    check_read_and_write(basic_indexer, selection, full, chunks, full[selection], setitem)


@pytest.mark.parametrize(
    "selection",
    [
        (),
        Ellipsis,
        (Ellipsis,),
        3,
        -1,
        slice(None),
        (1, 2),
        (Ellipsis, 2),
        (-3, Ellipsis, 1),
        np.int64(2),
        (np.uint8(1), np.array(3)),
        (slice(None, None, -1), 0, slice(1, None, 3)),
    ],
)
def test_basic_examples(selection: Any) -> None:
    full = np.arange(7 * 5 * 4, dtype=np.int64).reshape(7, 5, 4)

    def setitem(target: np.ndarray, value: np.ndarray) -> None:
        target[selection] = value

    check_read_and_write(basic_indexer, selection, full, (3, 2, 3), full[selection], setitem)


@pytest.mark.parametrize("selection", [(), Ellipsis, (Ellipsis,)])
def test_zero_dimensional_basic(selection: Any) -> None:
    full = np.array(42, dtype=np.int64)
    indexer = check_read_and_write(
        basic_indexer, selection, full, (), full[()], lambda t, v: t.__setitem__((), v)
    )
    assert indexer.shape == ()
    assert [(p.chunk_coords, p.chunk_selection, p.out_selection) for p in indexer] == [((), (), ())]
    assert next(iter(indexer)).is_complete


def test_scalar_plan_is_plain_python() -> None:
    (projection,) = basic_indexer((3, -1), (10, 10), (4, 3))
    assert projection == ChunkProjection((0, 3), (3, 0), (), False)
    (projection,) = basic_indexer((3, -1), (10, 10), (1, 3))
    assert projection == ChunkProjection((3, 3), (0, 0), (), True)
    assert all(type(x) is int for x in projection.chunk_selection)


def test_slice_plan_is_plain_python() -> None:
    for projection in basic_indexer((slice(1, 9), 2), (10, 10), (4, 3)):
        assert all(type(x) in (int, slice) for x in projection.chunk_selection)
        assert all(type(x) is slice for x in projection.out_selection)


def test_zero_length_dimensions() -> None:
    full = np.zeros((0, 4), dtype=np.int64)
    for selection in [(), (slice(None), 1), (slice(2, 5), slice(None, None, -1))]:
        indexer = basic_indexer(selection, full.shape, (2, 2))
        assert indexer.shape == full[selection].shape
        assert list(indexer) == []
    assert orthogonal_indexer(([], [1, 2]), (0, 4), (2, 2)).shape == (0, 2)
    assert coordinate_indexer(([], []), (0, 4), (2, 2)).shape == (0,)
    assert list(mask_indexer(np.zeros((0, 4), dtype=bool), (0, 4), (2, 2))) == []
    assert block_indexer(slice(None), (0, 4), (2, 2)).shape == (0, 4)
    with pytest.raises(BoundsCheckError):
        basic_indexer(0, (0, 4), (2, 2))


def test_selection_touching_nothing_yields_nothing() -> None:
    indexer = basic_indexer((slice(5, 2), 1), (10, 10), (3, 3))
    assert indexer.shape == (0,)
    assert list(indexer) == []
    assert list(orthogonal_indexer(([], slice(None)), (10, 10), (3, 3))) == []


def test_large_step_visits_only_touched_chunks() -> None:
    indexer = basic_indexer(slice(None, None, 10**6), (10**7,), (1,))
    assert [p.chunk_coords for p in indexer] == [(k * 10**6,) for k in range(10)]


@pytest.mark.parametrize(
    ("selection", "error"),
    [
        (10, BoundsCheckError),
        ((0, -6), BoundsCheckError),
        ((np.int64(-11),), BoundsCheckError),
        (1.0, IndexingError),
        ("a", IndexingError),
        ((0, 1, 2), IndexingError),
        ((Ellipsis, 0, Ellipsis), IndexingError),
        ((Ellipsis, Ellipsis), IndexingError),
        (None, IndexingError),
        ((0, None), IndexingError),
        (slice(None, None, 0), IndexingError),
        (slice(0.5, 2), IndexingError),
        (True, IndexingError),
        ([0, 1], IndexingError),
        (np.array([1]), IndexingError),
    ],
)
def test_basic_errors(selection: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        basic_indexer(selection, (10, 5), (3, 3))


def test_errors_are_index_errors() -> None:
    with pytest.raises(IndexError):
        basic_indexer(99, (10,), (3,))
    with pytest.raises(IndexError):
        basic_indexer("x", (10,), (3,))


def test_is_pure_basic() -> None:
    assert is_pure_basic((1, slice(None), Ellipsis))
    assert is_pure_basic(np.int32(1))
    assert is_pure_basic(())
    assert not is_pure_basic(([1, 2],))
    assert not is_pure_basic(np.array([True]))
    assert not is_pure_basic((None,))
    assert not is_pure_basic(1.5)


# ---------------------------------------------------------------------------------------
# Orthogonal indexing


@GRIDS
@PROPERTY
@given(data=st.data())
def test_orthogonal_read_matches_numpy(data: st.DataObject, rectilinear: bool) -> None:
    full, chunks = data.draw(arrays_and_chunks(min_dims=1, rectilinear=rectilinear))
    selection = data.draw(orthogonal_selections(full.shape, unique=False))
    check_read_and_write(
        orthogonal_indexer,
        selection,
        full,
        chunks,
        orthogonal_expected(full, selection),
        None,
        check_write=False,
    )


@GRIDS
@PROPERTY
@given(data=st.data())
def test_orthogonal_write_matches_numpy(data: st.DataObject, rectilinear: bool) -> None:
    full, chunks = data.draw(arrays_and_chunks(min_dims=1, rectilinear=rectilinear))
    selection = data.draw(orthogonal_selections(full.shape, unique=True))
    expected = orthogonal_expected(full, selection)

    def setitem(target: np.ndarray, value: np.ndarray) -> None:
        numpy_selection = orthogonal_numpy(target, selection)
        target[numpy_selection] = value.reshape(target[numpy_selection].shape)

    check_read_and_write(orthogonal_indexer, selection, full, chunks, expected, setitem)


@pytest.mark.parametrize(
    "selection",
    [
        # Each array below puts several non-progression entries in one chunk, so that
        # numpy really receives index arrays rather than slices.
        (slice(None), [1, 0, 4, 1], slice(None), [1, 0]),  # arrays split by a slice
        (2, slice(None), [2, 0], slice(1, None)),  # int and array split by a slice
        ([2, 0, 5, 6], 1, [2, 1], slice(None)),  # arrays adjacent to an int
        ([2, 0], slice(1, 3), [3, 0, 1], 1),  # array, slice, array, int
        (slice(None, None, -1), slice(None), slice(None), [1, 0, 2]),
        (np.array([True, False, True, False, False, True, True]), 0, Ellipsis),
        (slice(None, None, -2), [3, 1, 0], slice(None, None, -1), [2, 1, 0]),
    ],
)
@pytest.mark.parametrize(
    "chunks",
    [(3, 2, 3, 2), ((0, 3, 8), 2, (0, 3, 5), (0, 2, 4)), ((0, 1, 4, 7), (0, 4, 6), 3, (0, 3))],
    ids=["regular", "rectilinear", "rectilinear-exact"],
)
def test_orthogonal_mixed_layouts(selection: Any, chunks: Chunks) -> None:
    full = np.arange(7 * 5 * 4 * 3, dtype=np.int64).reshape(7, 5, 4, 3)

    def setitem(target: np.ndarray, value: np.ndarray) -> None:
        numpy_selection = orthogonal_numpy(target, selection)
        target[numpy_selection] = value.reshape(target[numpy_selection].shape)

    expected = orthogonal_expected(full, selection)
    check_read_and_write(orthogonal_indexer, selection, full, chunks, expected, setitem)


def test_orthogonal_sorted_runs_become_slices() -> None:
    indexer = orthogonal_indexer(([0, 1, 2, 3, 4, 6],), (10,), (4,))
    projections = list(indexer)
    assert [p.chunk_selection for p in projections] == [(slice(0, 4),), (slice(0, 3, 2),)]
    assert [p.out_selection for p in projections] == [(slice(0, 4),), (slice(4, 6),)]
    assert [p.is_complete for p in projections] == [True, False]


@pytest.mark.parametrize(
    ("selection", "error"),
    [
        (([0, 10],), BoundsCheckError),
        (([-11],), BoundsCheckError),
        ((0, [5]), BoundsCheckError),
        ((np.ones(3, dtype=bool),), IndexingError),
        ((np.ones((10, 5), dtype=bool),), IndexingError),
        (([[0, 1]],), IndexingError),
        (([0.5],), IndexingError),
        ((["a"],), IndexingError),
        (([0], None), IndexingError),
        (([0], 1, 2), IndexingError),
    ],
)
def test_orthogonal_errors(selection: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        orthogonal_indexer(selection, (10, 5), (3, 3))


# ---------------------------------------------------------------------------------------
# Vectorised indexing


@GRIDS
@PROPERTY
@given(data=st.data())
def test_coordinate_read_matches_numpy(data: st.DataObject, rectilinear: bool) -> None:
    full, chunks = data.draw(arrays_and_chunks(min_dims=1, min_side=1, rectilinear=rectilinear))
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=full.ndim, max_dims=3, max_side=4)
    )
    selection = tuple(
        data.draw(hnp.arrays(np.int64, index_shape, elements=st.integers(-n, n - 1)))
        for index_shape, n in zip(shapes.input_shapes, full.shape, strict=True)
    )
    if data.draw(st.booleans()):
        selection = tuple(array.tolist() for array in selection)
    expected = full[tuple(np.asarray(item, dtype=np.intp) for item in selection)]
    check_read_and_write(
        coordinate_indexer, selection, full, chunks, expected, None, check_write=False
    )


@GRIDS
@PROPERTY
@given(data=st.data())
def test_coordinate_write_matches_numpy(data: st.DataObject, rectilinear: bool) -> None:
    full, chunks = data.draw(arrays_and_chunks(min_dims=1, min_side=1, rectilinear=rectilinear))
    result_shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
    count = int(np.prod(result_shape))
    assume(count <= full.size)
    flat = data.draw(
        st.lists(st.integers(0, full.size - 1), min_size=count, max_size=count, unique=True)
    )
    selection = tuple(
        coords.reshape(result_shape) - (full.shape[axis] if data.draw(st.booleans()) else 0)
        for axis, coords in enumerate(np.unravel_index(np.array(flat, dtype=np.intp), full.shape))
    )

    def setitem(target: np.ndarray, value: np.ndarray) -> None:
        target[selection] = value

    check_read_and_write(coordinate_indexer, selection, full, chunks, full[selection], setitem)


@GRIDS
@PROPERTY
@given(data=st.data())
def test_mask_matches_numpy(data: st.DataObject, rectilinear: bool) -> None:
    full, chunks = data.draw(arrays_and_chunks(rectilinear=rectilinear))
    mask = data.draw(hnp.arrays(np.bool_, full.shape))

    def setitem(target: np.ndarray, value: np.ndarray) -> None:
        target[mask] = value

    for make_indexer in (mask_indexer, vindex_indexer):
        check_read_and_write(make_indexer, mask, full, chunks, full[mask], setitem)


def test_full_mask_chunks_are_complete() -> None:
    mask = np.zeros((5, 5), dtype=bool)
    mask[:3, :3] = True
    mask[3:, 3:] = True
    completes = {p.chunk_coords: p.is_complete for p in mask_indexer(mask, (5, 5), (3, 3))}
    assert completes == {(0, 0): True, (1, 1): True}


def test_coordinate_complete_only_in_c_order() -> None:
    rows, cols = np.meshgrid(np.arange(2), np.arange(2), indexing="ij")
    forward = coordinate_indexer((rows.ravel(), cols.ravel()), (2, 2), (2, 2))
    backward = coordinate_indexer((rows.ravel()[::-1], cols.ravel()[::-1]), (2, 2), (2, 2))
    assert [p.is_complete for p in forward] == [True]
    assert [p.is_complete for p in backward] == [False]


def test_vindex_zero_dimensional() -> None:
    full = np.array(5, dtype=np.int64)
    check_read_and_write(
        coordinate_indexer, (), full, (), full[()], lambda t, v: t.__setitem__((), v)
    )
    for flag in (True, False):
        mask = np.array(flag)
        check_read_and_write(
            vindex_indexer, mask, full, (), full[mask], lambda t, v, m=mask: t.__setitem__(m, v)
        )


def test_vindex_dispatch() -> None:
    mask = np.zeros((4, 4), dtype=bool)
    mask[1, 2] = True
    assert vindex_indexer(mask, (4, 4), (2, 2)).shape == (1,)
    assert vindex_indexer((mask,), (4, 4), (2, 2)).shape == (1,)
    assert vindex_indexer(([1, 2], 0), (4, 4), (2, 2)).shape == (2,)
    assert vindex_indexer(np.array([1, 3]), (4,), (2,)).shape == (2,)
    assert vindex_indexer(np.array([True, False, True, True]), (4,), (2,)).shape == (3,)


@pytest.mark.parametrize(
    ("selection", "error"),
    [
        (([0, 10], [0, 0]), BoundsCheckError),
        (([0], [-6]), BoundsCheckError),
        (([0, 1],), IndexingError),
        (([0], [0], [0]), IndexingError),
        (([0, 1], [0, 1, 2]), IndexingError),
        ((slice(None), [0]), IndexingError),
        ((Ellipsis, [0]), IndexingError),
        (([0.5], [0]), IndexingError),
        ((np.array([True, False]), [0]), IndexingError),
    ],
)
def test_coordinate_errors(selection: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        vindex_indexer(selection, (10, 5), (3, 3))


@pytest.mark.parametrize(
    "selection",
    [np.ones((10,), dtype=bool), np.ones((5, 10), dtype=bool), np.ones((10, 5), dtype=int)],
)
def test_mask_errors(selection: Any) -> None:
    with pytest.raises(IndexingError):
        mask_indexer(selection, (10, 5), (3, 3))


class LazyChunks:
    """Builds padded chunks on demand, for grids too large to materialise."""

    def __init__(self, full: np.ndarray, chunks: Chunks) -> None:
        self.full = full
        self.chunks = chunks
        self.spans = [dim_chunk_spans(n, c) for n, c in zip(full.shape, chunks, strict=True)]

    def __getitem__(self, coords: tuple[int, ...]) -> np.ndarray:
        spans = [dim_spans[k] for dim_spans, k in zip(self.spans, coords, strict=True)]
        chunk = np.full([stop - start for start, stop in spans], OVERHANG, dtype=self.full.dtype)
        inbounds = tuple(
            slice(0, min(stop, n) - start)
            for (start, stop), n in zip(spans, self.full.shape, strict=True)
        )
        chunk[inbounds] = self.full[tuple(slice(start, stop) for start, stop in spans)]
        return chunk


def random_boundaries(n: int, max_len: int, seed: int) -> tuple[int, ...]:
    lengths = np.random.default_rng(seed).integers(1, max_len + 1, size=n)
    edges = np.concatenate(([0], np.cumsum(lengths)))
    return tuple(edges[: int(np.searchsorted(edges, n)) + 1].tolist())


@pytest.mark.parametrize(
    ("shape", "chunks"),
    [
        ((300, 300), (1, 1)),
        ((300, 300), (1, 300)),
        ((70000,), (1,)),
        ((30, 30, 30), (1, 1, 30)),
        ((70000,), (random_boundaries(70000, 3, seed=1),)),
        ((300, 300), (random_boundaries(300, 2, seed=2), 7)),
        ((30, 30, 30), (1, random_boundaries(30, 4, seed=3), (0, 30))),
    ],
    ids=[f"grid{i}" for i in range(7)],
)
def test_many_chunk_grids(shape: tuple[int, ...], chunks: Chunks) -> None:
    rng = np.random.default_rng(0)
    full = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    store = LazyChunks(full, chunks)
    points = tuple(rng.integers(-n, n, size=(50, 3)) for n in shape)
    indexer = coordinate_indexer(points, shape, chunks)
    assert [p.chunk_coords for p in indexer] == sorted({p.chunk_coords for p in indexer})
    np.testing.assert_array_equal(planned_read(indexer, store), full[points])
    columns = rng.integers(-shape[-1], shape[-1], size=200)
    selection = (Ellipsis, columns)
    np.testing.assert_array_equal(
        planned_read(orthogonal_indexer(selection, shape, chunks), store), full[..., columns]
    )
    step = max(1, shape[-1] // 7)
    selection = (Ellipsis, slice(3, None, step))
    np.testing.assert_array_equal(
        planned_read(basic_indexer(selection, shape, chunks), store), full[selection]
    )


@PROPERTY
@given(
    nkeys=st.sampled_from([1, 2, 255, 256, 257, 2**16, 2**16 + 1, 2**32, 2**32 + 1, 2**62]),
    data=st.data(),
)
def test_stable_group_order_matches_stable_argsort(nkeys: int, data: st.DataObject) -> None:
    keys = np.array(data.draw(st.lists(st.integers(0, nkeys - 1), max_size=60)), dtype=np.intp)
    order = stable_group_order(keys, nkeys)
    expected = np.argsort(keys, kind="stable")
    if order is None:
        assert (np.diff(keys) >= 0).all()
    else:
        np.testing.assert_array_equal(order, expected)


def test_grid_too_large_for_linear_chunk_ids() -> None:
    shape, chunks = (2**40, 2**40), (1, 1)
    rows = np.array([5, 2**40 - 1, 5, 0])
    cols = np.array([7, 0, 7, 2**39])
    projections = list(coordinate_indexer((rows, cols), shape, chunks))
    assert [p.chunk_coords for p in projections] == [(0, 2**39), (5, 7), (2**40 - 1, 0)]
    assert [p.out_selection[0].tolist() for p in projections[1:2]] == [[0, 2]]
    assert [p.is_complete for p in projections] == [True, False, True]


# ---------------------------------------------------------------------------------------
# Block indexing


def blocks_expected(full: np.ndarray, chunks: Chunks, selection: Any) -> np.ndarray:
    """Dask ``.blocks`` semantics, built by concatenating the chosen (truncated) blocks."""
    grid = grid_of(full.shape, chunks)
    items = expand_items(selection, full.ndim)
    chosen = [
        list(range(g))[item] if isinstance(item, slice) else [list(range(g))[item]]
        for item, g in zip(items, grid, strict=True)
    ]
    blocks = {
        coords: full[source_region(coords, full.shape, chunks)]
        for coords in itertools.product(*chosen)
    }
    if not blocks:
        block_lengths = [
            sum(min(stop, n) - start for start, stop in (dim_chunk_spans(n, c)[k] for k in ks))
            for ks, n, c in zip(chosen, full.shape, chunks, strict=True)
        ]
        return np.empty(block_lengths, dtype=full.dtype)

    def nest(prefix: tuple[int, ...], depth: int) -> Any:
        if depth == full.ndim:
            return blocks[prefix]
        return [nest(prefix + (k,), depth + 1) for k in chosen[depth]]

    return np.block(nest((), 0)) if full.ndim else full


@GRIDS
@PROPERTY
@given(data=st.data())
def test_blocks_match_manual_concatenation(data: st.DataObject, rectilinear: bool) -> None:
    full, chunks = data.draw(arrays_and_chunks(rectilinear=rectilinear))
    grid = grid_of(full.shape, chunks)
    items: list[Any] = []
    for g in grid:
        if g > 0 and data.draw(st.booleans()):
            items.append(data.draw(st.integers(-g, g - 1)))
        else:
            start = data.draw(st.none() | st.integers(-g - 1, g + 1))
            stop = data.draw(st.none() | st.integers(-g - 1, g + 1))
            items.append(slice(start, stop, data.draw(st.sampled_from([None, 1]))))
    selection: Any = tuple(items)
    if data.draw(st.booleans()) and len(items) == 1:
        selection = items[0]
    expected = blocks_expected(full, chunks, selection)
    indexer = block_indexer(selection, full.shape, chunks)
    assert indexer.shape == expected.shape
    check_plan_shape(indexer, full.shape, chunks)
    np.testing.assert_array_equal(planned_read(indexer, split_into_chunks(full, chunks)), expected)


def test_blocks_dask_examples() -> None:
    full = np.arange(100, dtype=np.int64).reshape(10, 10)
    chunks = (5, 5)
    assert block_indexer(0, full.shape, chunks).shape == (5, 10)
    store = split_into_chunks(full, chunks)
    indexer = block_indexer((slice(0, 2), -1), full.shape, chunks)
    np.testing.assert_array_equal(planned_read(indexer, store), full[:, 5:])
    indexer = block_indexer((Ellipsis, 1), (10, 7), (4, 3))
    assert indexer.shape == (10, 3)
    assert block_indexer((2, 2), (10, 7), (4, 3)).shape == (2, 1)
    assert block_indexer((), (), ()).shape == ()
    assert block_indexer(Ellipsis, (), ()).shape == ()


@pytest.mark.parametrize(
    ("selection", "error"),
    [
        (3, BoundsCheckError),
        ((0, -4), BoundsCheckError),
        (slice(None, None, 2), IndexingError),
        (slice(None, None, -1), IndexingError),
        ([0, 1], IndexingError),
        (0.0, IndexingError),
        ((0, 0, 0), IndexingError),
    ],
)
def test_block_errors(selection: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        block_indexer(selection, (10, 7), (4, 3))


# ---------------------------------------------------------------------------------------
# Rectilinear grids: helpers, validation and targeted plans

RECT_SHAPE = (8, 7, 5)
RECT_CHUNKS: Chunks = ((0, 2, 3, 7, 9), 3, (0, 1, 4, 5))


def test_grid_shape_and_chunk_shape_at() -> None:
    assert grid_shape(RECT_SHAPE, RECT_CHUNKS) == (4, 3, 3)
    assert grid_shape((10, 7), (4, 3)) == (3, 3)
    # Chunks wholly past the end of the array hold nothing and are not counted.
    assert grid_shape((7, 0), ((0, 2, 7, 9, 10), (0, 4))) == (2, 0)
    assert grid_shape((7, 0), ((0, 2, 8, 9), (0,))) == (2, 0)
    assert grid_shape((4, 4), ([0, 1, 4], np.int64(3))) == (2, 2)
    assert chunk_shape_at(RECT_CHUNKS, (0, 0, 0)) == (2, 3, 1)
    assert chunk_shape_at(RECT_CHUNKS, (3, 2, 2)) == (2, 3, 1)
    assert chunk_shape_at(RECT_CHUNKS, (2, 9, 1)) == (4, 3, 3)
    assert chunk_shape_at((), ()) == ()
    assert all(type(n) is int for n in chunk_shape_at((np.int64(3), (0, 5)), (0, 0)))
    with pytest.raises(BoundsCheckError, match="chunk 4 is out of bounds"):
        chunk_shape_at(RECT_CHUNKS, (4, 0, 0))
    with pytest.raises(BoundsCheckError):
        chunk_shape_at(RECT_CHUNKS, (0, -1, 0))
    with pytest.raises(IndexingError):
        chunk_shape_at(RECT_CHUNKS, (0, 0))


_PLANNERS = {
    "basic-scalar": lambda c: list(basic_indexer((1, 1), (10, 6), c)),
    "basic-slice": lambda c: list(basic_indexer((slice(None), 2), (10, 6), c)),
    "basic-empty": lambda c: basic_indexer(slice(4, 4), (10, 6), c).nchunks,
    "orthogonal": lambda c: orthogonal_indexer(([3, 1], 0), (10, 6), c),
    "orthogonal-empty": lambda c: orthogonal_indexer(([], [0]), (10, 6), c),
    "coordinate": lambda c: coordinate_indexer(([3, 1], [0, 0]), (10, 6), c),
    "coordinate-empty": lambda c: coordinate_indexer(([], []), (10, 6), c),
    "mask": lambda c: mask_indexer(np.ones((10, 6), dtype=bool), (10, 6), c),
    "block": lambda c: block_indexer(0, (10, 6), c),
    "grid_shape": lambda c: grid_shape((10, 6), c),
}


@pytest.mark.parametrize("planner", list(_PLANNERS))
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ((1, 4, 10), "must start at 0"),
        ((), "must start at 0"),
        ((0, 4, 4, 10), r"strictly increasing: boundary 2 \(4\)"),
        ((0, 6, 3, 10), "strictly increasing"),
        ((0, 4, 8), "end at 8, before the end of a dimension of length 10"),
        ((0,), "end at 0"),
        ((0, 2.5, 10), "must be integers"),
        ((0, True, 10), "must be integers"),
        ((0, [5], 10), "must be integers"),
        ("0, 10", "each entry of chunks"),
    ],
)
def test_invalid_boundaries(planner: str, bad: Any, message: str) -> None:
    for chunks in ((bad, 3), (3, bad)):
        dim_len = 10 if chunks[0] is bad else 6
        expected = message.replace("length 10", f"length {dim_len}")
        if chunks[1] is bad and "end at" in message:
            chunks = (3, tuple(b for b in bad if b < 6) + (5,) if len(bad) > 1 else bad)
            expected = "end at"
        with pytest.raises(IndexingError, match=expected):
            _PLANNERS[planner](chunks)


# The scalar fast path does not type-check chunk entries (it would cost every scalar read),
# so numpy-array boundaries are checked on every other planner only.
@pytest.mark.parametrize("planner", [p for p in _PLANNERS if p != "basic-scalar"])
def test_numpy_array_boundaries_are_rejected(planner: str) -> None:
    with pytest.raises(IndexingError, match="each entry of chunks"):
        _PLANNERS[planner]((np.array([0, 5, 10]), 3))


def test_numpy_integer_chunk_lengths_stay_regular() -> None:
    full = np.arange(70, dtype=np.int64).reshape(10, 7)
    chunks = (np.int64(3), (0, 2, np.int32(7)))
    store = split_into_chunks(full, (3, (0, 2, 7)))
    for make_indexer, selection, expected in [
        (basic_indexer, (slice(1, 9, 2), 3), full[1:9:2, 3]),
        (basic_indexer, (4, 5), full[4, 5]),
        (orthogonal_indexer, ([9, 0], [1, 6]), full[np.ix_([9, 0], [1, 6])]),
        (coordinate_indexer, ([9, 0], [1, 6]), full[[9, 0], [1, 6]]),
        (block_indexer, (1, 1), full[3:6, 2:]),
    ]:
        indexer = make_indexer(selection, full.shape, chunks)
        np.testing.assert_array_equal(planned_read(indexer, store), expected)


def test_boundary_lists_are_read_afresh() -> None:
    bounds = [0, 5, 10]
    assert grid_shape((10,), (bounds,)) == (2,)
    bounds[1:2] = [2, 5]  # a list may change between calls; a tuple cannot
    assert grid_shape((10,), (bounds,)) == (3,)
    assert [p.chunk_coords for p in basic_indexer(slice(None), (10,), (bounds,))] == [
        (0,),
        (1,),
        (2,),
    ]


def test_equal_but_invalid_boundaries_are_not_served_from_a_cache() -> None:
    assert grid_shape((10,), ((0, 1, 10),)) == (2,)
    assert grid_shape((10,), ((0, 5, 10),)) == (2,)
    with pytest.raises(IndexingError, match="must be integers, got True"):
        grid_shape((10,), ((0, True, 10),))
    with pytest.raises(IndexingError, match="must be integers, got 5.0"):
        list(basic_indexer(3, (10,), ((0, 5.0, 10),)))


def test_invalid_boundaries_are_index_and_zarrkit_errors() -> None:
    with pytest.raises(IndexError):
        grid_shape((10,), ((0, 5),))
    with pytest.raises(IndexingError, match="do not match"):
        coordinate_indexer(([1],), (10,), (3, (0, 1)))


def test_rectilinear_scalar_plan_is_plain_python() -> None:
    (projection,) = basic_indexer((3, -1), (10, 10), ((0, 3, 4, 12), 3))
    assert projection == ChunkProjection((1, 3), (0, 0), (), True)
    (projection,) = basic_indexer((5, 2), (10, 10), ((0, 3, 4, 12), (0, 2, 3, 10)))
    assert projection == ChunkProjection((2, 1), (1, 0), (), False)
    assert all(type(x) is int for x in projection.chunk_coords + projection.chunk_selection)
    for projection in basic_indexer((slice(1, 9), 2), (10, 10), ((0, 3, 4, 12), 3)):
        assert all(type(x) in (int, slice) for x in projection.chunk_selection)
        assert all(type(x) is int for x in projection.chunk_coords)
        assert all(type(x) is slice for x in projection.out_selection)


def test_rectilinear_whole_array_writes_are_complete() -> None:
    for make_indexer, selection in [
        (basic_indexer, Ellipsis),
        (orthogonal_indexer, (np.arange(8), slice(None), [True] * 5)),
        (mask_indexer, np.ones(RECT_SHAPE, dtype=bool)),
        (block_indexer, Ellipsis),
    ]:
        projections = list(make_indexer(selection, RECT_SHAPE, RECT_CHUNKS))
        assert len(projections) == 4 * 3 * 3
        assert all(p.is_complete for p in projections)
    rows, cols, deps = np.unravel_index(np.arange(8 * 7 * 5), RECT_SHAPE)
    projections = list(coordinate_indexer((rows, cols, deps), RECT_SHAPE, RECT_CHUNKS))
    assert all(p.is_complete for p in projections)
    backward = (rows[::-1], cols[::-1], deps[::-1])
    for p in coordinate_indexer(backward, RECT_SHAPE, RECT_CHUNKS):
        region = inbounds_region(p.chunk_coords, RECT_SHAPE, RECT_CHUNKS)
        assert p.is_complete == (int(np.prod([r.stop for r in region])) == 1)


@pytest.mark.parametrize(
    ("n", "step"), [(10**6, 10**5 + 1), (10**6, -(10**5 + 3)), (30000, 7), (30000, -3)]
)
def test_rectilinear_long_slices(n: int, step: int) -> None:
    # A large step over about half a million chunks must only visit the touched ones.
    bounds = random_boundaries(n, 3, seed=4)
    projections = list(basic_indexer(slice(None, None, step), (n,), (bounds,)))
    elements = np.arange(n)[::step]
    edges = np.array(bounds)
    element_chunks = np.searchsorted(edges, elements, side="right") - 1
    assert [p.chunk_coords[0] for p in projections] == sorted(set(element_chunks.tolist()))
    out = np.empty(elements.shape, dtype=np.intp)
    for p in projections:
        (k,) = p.chunk_coords
        local = np.arange(bounds[k], bounds[k + 1])[p.chunk_selection]
        out[p.out_selection] = local
    np.testing.assert_array_equal(out, elements)


def test_rectilinear_zero_length_dimensions() -> None:
    chunks: Chunks = ((0,), (0, 1, 4))
    assert grid_shape((0, 4), chunks) == (0, 2)
    assert list(basic_indexer((slice(None), 1), (0, 4), chunks)) == []
    assert orthogonal_indexer(([], [1, 2]), (0, 4), chunks).shape == (0, 2)
    assert coordinate_indexer(([], []), (0, 4), chunks).shape == (0,)
    assert list(mask_indexer(np.zeros((0, 4), dtype=bool), (0, 4), chunks)) == []
    assert block_indexer(slice(None), (0, 4), chunks).shape == (0, 4)
    assert block_indexer(slice(None), (0, 4), ((0, 3), 2)).shape == (0, 4)
    with pytest.raises(BoundsCheckError):
        list(basic_indexer((0, 0), (0, 4), chunks))


def test_rectilinear_blocks() -> None:
    full = np.arange(100, dtype=np.int64).reshape(10, 10)
    chunks: Chunks = ((0, 3, 4, 10), (0, 5, 12))
    store = split_into_chunks(full, chunks)
    for selection, expected in [
        ((1, -1), full[3:4, 5:]),
        ((slice(1, None), 0), full[3:, :5]),
        ((slice(0, 2), Ellipsis), full[:4]),
        ((slice(5, 9), 1), full[10:, 5:]),
    ]:
        indexer = block_indexer(selection, full.shape, chunks)
        np.testing.assert_array_equal(planned_read(indexer, store), expected)
    trailing: Chunks = ((0, 2, 7, 9, 10),)
    assert block_indexer(-1, (7,), trailing).shape == (5,)
    with pytest.raises(BoundsCheckError):
        block_indexer(2, (7,), trailing)


# ---------------------------------------------------------------------------------------
# Housekeeping


@pytest.mark.parametrize(
    "module",
    [
        "__init__",
        "normalize",
        "plan",
        "grid",
        "dims",
        "grouping",
        "basic",
        "orthogonal",
        "vectorized",
    ],
)
def test_docstring_examples(module: str) -> None:
    name = "zarrkit.indexing" if module == "__init__" else f"zarrkit.indexing.{module}"
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
    assert result.attempted > 0


@PROPERTY
@given(data=st.data())
def test_orthogonal_premeshed_plan_equals_the_meshing_plan(data: st.DataObject) -> None:
    """Parts meshed once per axis give the projections meshed per chunk: the same chunks,
    and selections that pick the same elements in the same layout (an axis mixing slice
    and array pieces has its slices as index arrays in the premeshed plan)."""
    from zarrkit.indexing.orthogonal import OrthogonalIndexer

    full, chunks = data.draw(arrays_and_chunks(min_dims=1, rectilinear=False))
    selection = data.draw(orthogonal_selections(full.shape, unique=False))
    indexer = orthogonal_indexer(selection, full.shape, chunks)
    if not isinstance(indexer, OrthogonalIndexer):
        return
    premeshed = indexer._premeshed()
    assume(premeshed is not None)
    fast = list(indexer._iter_premeshed(*premeshed))
    slow = list(indexer._iter_meshing())
    assert len(fast) == len(slow)
    chunk_shape = tuple(int(n) for n in chunks)  # type: ignore[arg-type]
    chunk_positions = np.arange(int(np.prod(chunk_shape))).reshape(chunk_shape)
    out_positions = np.arange(int(np.prod(indexer.shape))).reshape(indexer.shape)
    for a, b in zip(fast, slow, strict=True):
        assert a.chunk_coords == b.chunk_coords and a.is_complete == b.is_complete
        for positions, x, y in ((chunk_positions, a.chunk_selection, b.chunk_selection),
                                (out_positions, a.out_selection, b.out_selection)):
            picked, expected = positions[x], positions[y]
            assert picked.shape == expected.shape
            np.testing.assert_array_equal(picked, expected)


@PROPERTY
@given(data=st.data())
def test_few_index_pieces_equal_the_numpy_grouping(data: st.DataObject) -> None:
    """Short index arrays are grouped in plain Python: the same pieces as numpy's path."""
    from zarrkit.indexing import dims

    dim_len = data.draw(st.integers(1, 60))
    chunk_len = data.draw(st.integers(1, 12))
    indices = np.array(data.draw(st.lists(st.integers(0, dim_len - 1), min_size=1,
                                          max_size=dims._FEW_INDICES)), dtype=np.intp)
    few = dims.array_pieces(indices, dim_len, chunk_len)
    saved, dims._FEW_INDICES = dims._FEW_INDICES, 0
    try:
        grouped = dims.array_pieces(indices, dim_len, chunk_len)
    finally:
        dims._FEW_INDICES = saved
    assert len(few) == len(grouped)
    for a, b in zip(few, grouped, strict=True):
        assert a[0] == b[0] and a[3] == b[3]
        for x, y in zip(a[1:3], b[1:3], strict=True):
            assert type(x) is type(y)
            if isinstance(x, np.ndarray):
                assert x.dtype == y.dtype
                np.testing.assert_array_equal(x, y)
            else:
                assert x == y


@pytest.mark.parametrize(("selection", "chunk_len", "expected"), [
    (slice(None), 1, []),  # whole chunks: none, without planning 2**40 of them
    (slice(0, 2**40 - 4), 4, []),  # on chunk boundaries
    (slice(2, 2**40 - 4), 4, [(0,)]),
    (slice(0, 2**40 - 1), 4, [(2**38 - 1,)]),
    (slice(1, 2**40 - 1), 4, [(0,), (2**38 - 1,)]),
])
def test_partial_projections_of_a_huge_selection_are_found_without_planning_it(
        selection: slice, chunk_len: int, expected: list[tuple[int, ...]]) -> None:
    """A write reads back only the chunks it covers in part; over a dimension of 2**40
    elements, finding none (or the edge ones) must not walk every chunk in between."""
    indexer = basic_indexer(selection, (2**40,), (chunk_len,))
    partial = indexer.partial_projections()
    assert [p.chunk_coords for p in itertools.islice(partial, 3)] == expected


def test_partial_projections_of_a_huge_grid_walk_only_the_partial_rows() -> None:
    """Over 2**40 x 8 chunks, a write cut mid-chunk along the second axis only has its
    last column in part: found row by row, one per row, in C order."""
    indexer = basic_indexer((slice(None), slice(0, 31)), (2**40, 32), (1, 4))
    partial = list(itertools.islice(indexer.partial_projections(), 3))
    assert [p.chunk_coords for p in partial] == [(0, 7), (1, 7), (2, 7)]
    assert all(not p.is_complete for p in partial)
