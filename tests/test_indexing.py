"""Property tests of zarrkit.indexing against numpy, through a simulated chunk store.

The array is split into full-size chunk arrays whose overhang is filled with a sentinel,
so any plan that reads the overhang returns a wrong value and any plan that writes it
is caught when the overhang is checked after the write.
"""

from __future__ import annotations

import doctest
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
    coordinate_indexer,
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


def grid_of(shape: tuple[int, ...], chunks: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(-(-n // c) for n, c in zip(shape, chunks, strict=True))


def inbounds_region(
    coords: tuple[int, ...], shape: tuple[int, ...], chunks: tuple[int, ...]
) -> tuple[slice, ...]:
    return tuple(slice(0, min(c, n - k * c)) for k, n, c in zip(coords, shape, chunks, strict=True))


def split_into_chunks(
    full: np.ndarray, chunks: tuple[int, ...]
) -> dict[tuple[int, ...], np.ndarray]:
    store: dict[tuple[int, ...], np.ndarray] = {}
    for coords in itertools.product(*(range(g) for g in grid_of(full.shape, chunks))):
        chunk = np.full(chunks, OVERHANG, dtype=full.dtype)
        source = tuple(slice(k * c, (k + 1) * c) for k, c in zip(coords, chunks, strict=True))
        chunk[inbounds_region(coords, full.shape, chunks)] = full[source]
        store[coords] = chunk
    return store


def join_chunks(
    store: dict[tuple[int, ...], np.ndarray], shape: tuple[int, ...], chunks: tuple[int, ...]
) -> np.ndarray:
    full = np.empty(shape, dtype=np.int64)
    for coords, chunk in store.items():
        target = tuple(slice(k * c, (k + 1) * c) for k, c in zip(coords, chunks, strict=True))
        full[target] = chunk[inbounds_region(coords, shape, chunks)]
    return full


def overhang_untouched(
    store: dict[tuple[int, ...], np.ndarray], shape: tuple[int, ...], chunks: tuple[int, ...]
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
    indexer: Indexer, shape: tuple[int, ...], chunks: tuple[int, ...]
) -> list[ChunkProjection]:
    """Grid order, no repeats, only touched chunks, and is_complete exactly right."""
    projections = list(indexer)
    assert len(projections) == indexer.nchunks
    coords = [p.chunk_coords for p in projections]
    assert coords == sorted(coords)
    assert len(set(coords)) == len(coords)
    local_positions = np.arange(int(np.prod(chunks))).reshape(chunks)
    for p in projections:
        assert len(p.chunk_coords) == len(shape)
        visited = np.asarray(local_positions[p.chunk_selection]).reshape(-1)
        assert visited.size > 0, "an untouched chunk was yielded"
        in_order = local_positions[inbounds_region(p.chunk_coords, shape, chunks)].reshape(-1)
        assert p.is_complete == np.array_equal(visited, in_order), p
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
    chunks: tuple[int, ...],
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
def arrays_and_chunks(
    draw: st.DrawFn, min_dims: int = 0, max_dims: int = 3, min_side: int = 0, max_side: int = 9
) -> tuple[np.ndarray, tuple[int, ...]]:
    shape = draw(
        hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)
    )
    chunks = tuple(draw(st.integers(1, max(1, n + 2))) for n in shape)
    full = np.arange(1, int(np.prod(shape)) + 1, dtype=np.int64).reshape(shape)
    return full, chunks


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


@PROPERTY
@given(data=st.data(), array_and_chunks=arrays_and_chunks())
def test_basic_matches_numpy(data: st.DataObject, array_and_chunks: Any) -> None:
    full, chunks = array_and_chunks
    selection = data.draw(hnp.basic_indices(full.shape, allow_newaxis=False))

    def setitem(target: np.ndarray, value: np.ndarray) -> None:
        target[selection] = value

    check_read_and_write(basic_indexer, selection, full, chunks, full[selection], setitem)


@PROPERTY
@given(data=st.data(), array_and_chunks=arrays_and_chunks(min_dims=1, min_side=1))
def test_basic_large_and_negative_steps(data: st.DataObject, array_and_chunks: Any) -> None:
    full, chunks = array_and_chunks
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


@PROPERTY
@given(data=st.data(), array_and_chunks=arrays_and_chunks(min_dims=1))
def test_orthogonal_read_matches_numpy(data: st.DataObject, array_and_chunks: Any) -> None:
    full, chunks = array_and_chunks
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


@PROPERTY
@given(data=st.data(), array_and_chunks=arrays_and_chunks(min_dims=1))
def test_orthogonal_write_matches_numpy(data: st.DataObject, array_and_chunks: Any) -> None:
    full, chunks = array_and_chunks
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
    ],
)
def test_orthogonal_mixed_layouts(selection: Any) -> None:
    full = np.arange(7 * 5 * 4 * 3, dtype=np.int64).reshape(7, 5, 4, 3)

    def setitem(target: np.ndarray, value: np.ndarray) -> None:
        numpy_selection = orthogonal_numpy(target, selection)
        target[numpy_selection] = value.reshape(target[numpy_selection].shape)

    expected = orthogonal_expected(full, selection)
    check_read_and_write(orthogonal_indexer, selection, full, (3, 2, 3, 2), expected, setitem)


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


@PROPERTY
@given(data=st.data(), array_and_chunks=arrays_and_chunks(min_dims=1, min_side=1))
def test_coordinate_read_matches_numpy(data: st.DataObject, array_and_chunks: Any) -> None:
    full, chunks = array_and_chunks
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


@PROPERTY
@given(data=st.data(), array_and_chunks=arrays_and_chunks(min_dims=1, min_side=1))
def test_coordinate_write_matches_numpy(data: st.DataObject, array_and_chunks: Any) -> None:
    full, chunks = array_and_chunks
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


@PROPERTY
@given(data=st.data(), array_and_chunks=arrays_and_chunks())
def test_mask_matches_numpy(data: st.DataObject, array_and_chunks: Any) -> None:
    full, chunks = array_and_chunks
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

    def __init__(self, full: np.ndarray, chunks: tuple[int, ...]) -> None:
        self.full = full
        self.chunks = chunks

    def __getitem__(self, coords: tuple[int, ...]) -> np.ndarray:
        chunk = np.full(self.chunks, OVERHANG, dtype=self.full.dtype)
        source = tuple(slice(k * c, (k + 1) * c) for k, c in zip(coords, self.chunks, strict=True))
        chunk[inbounds_region(coords, self.full.shape, self.chunks)] = self.full[source]
        return chunk


@pytest.mark.parametrize(
    ("shape", "chunks"),
    [((300, 300), (1, 1)), ((300, 300), (1, 300)), ((70000,), (1,)), ((30, 30, 30), (1, 1, 30))],
)
def test_many_chunk_grids(shape: tuple[int, ...], chunks: tuple[int, ...]) -> None:
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


def blocks_expected(full: np.ndarray, chunks: tuple[int, ...], selection: Any) -> np.ndarray:
    """Dask ``.blocks`` semantics, built by concatenating the chosen (truncated) blocks."""
    grid = grid_of(full.shape, chunks)
    items = expand_items(selection, full.ndim)
    chosen = [
        list(range(g))[item] if isinstance(item, slice) else [list(range(g))[item]]
        for item, g in zip(items, grid, strict=True)
    ]
    blocks = {
        coords: full[tuple(slice(k * c, (k + 1) * c) for k, c in zip(coords, chunks, strict=True))]
        for coords in itertools.product(*chosen)
    }
    if not blocks:
        block_lengths = [
            sum(min(c, n - k * c) for k in ks)
            for ks, n, c in zip(chosen, full.shape, chunks, strict=True)
        ]
        return np.empty(block_lengths, dtype=full.dtype)

    def nest(prefix: tuple[int, ...], depth: int) -> Any:
        if depth == full.ndim:
            return blocks[prefix]
        return [nest(prefix + (k,), depth + 1) for k in chosen[depth]]

    return np.block(nest((), 0)) if full.ndim else full


@PROPERTY
@given(data=st.data(), array_and_chunks=arrays_and_chunks())
def test_blocks_match_manual_concatenation(data: st.DataObject, array_and_chunks: Any) -> None:
    full, chunks = array_and_chunks
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
# Housekeeping


@pytest.mark.parametrize(
    "module",
    ["__init__", "normalize", "plan", "dims", "grouping", "basic", "orthogonal", "vectorized"],
)
def test_docstring_examples(module: str) -> None:
    name = "zarrkit.indexing" if module == "__init__" else f"zarrkit.indexing.{module}"
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
    assert result.attempted > 0
