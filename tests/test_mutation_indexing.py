"""zarrkit.indexing checked against numpy's own indexing, written to kill the mutants that
``tools/mutate/run.py indexing/`` left alive.

Plans are executed on a simulated chunked array (written here independently of zarrkit):
every chunk is a full-size numpy array whose overhang holds a sentinel, so a plan that
reads the overhang returns a wrong value, and one that writes it is seen afterwards. The
result of every plan is compared with the same selection applied by numpy to the whole
array; ``is_complete`` is compared with what the chunk selection visits, and every
projection must select something.

Beyond that: exact error classes and messages for bad selections and grids, the plan
forms the package documents (a chunk's increasing arithmetic run of an index array is a
slice; a chunk's elements keep their output order), the lazy pieces of very long
dimensions (also forced on small ones by lowering ``dims._HELD_PIECES``), plans over
dimensions and grids beyond ``intp``, and 0-d arrays.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice, product
from typing import Any, cast
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit.indexing.dims as dims_module
from zarrkit.errors import BoundsCheckError, IndexingError, ShapeOverflowError
from zarrkit.indexing import (
    BasicIndexer,
    ChunkProjection,
    VectorizedIndexer,
    basic_indexer,
    block_indexer,
    block_region,
    chunk_shape_at,
    coordinate_indexer,
    grid_shape,
    mask_indexer,
    normalize_integer_array,
    orthogonal_indexer,
    vindex_indexer,
)
from zarrkit.indexing.dims import RegularSlicePieces, piece_for, slice_pieces
from zarrkit.indexing.grid import DimBoundaries, resolve_dim
from zarrkit.indexing.normalize import normalize_slice

SENTINEL = -999
Chunks = tuple[int | tuple[int, ...], ...]
FAST = settings(max_examples=60, deadline=None, derandomize=True, database=None)


# --- the simulation -------------------------------------------------------------------------


def spans(n: int, chunk: int | tuple[int, ...]) -> list[tuple[int, int]]:
    """``(start, full stop)`` of each chunk of a dimension that holds data."""
    if isinstance(chunk, int):
        return [(k * chunk, (k + 1) * chunk) for k in range(-(-n // chunk))]
    return [(chunk[i], chunk[i + 1]) for i in range(len(chunk) - 1) if chunk[i] < n]


def chunk_span(chunk: int | tuple[int, ...], k: int) -> tuple[int, int]:
    """``(start, full stop)`` of chunk ``k`` of a dimension."""
    if isinstance(chunk, int):
        return k * chunk, (k + 1) * chunk
    return chunk[k], chunk[k + 1]


class Store:
    """The chunks of ``full``, each made on first use: full-size, overhang = SENTINEL."""

    def __init__(self, full: np.ndarray, chunks: Chunks) -> None:
        self.full, self.chunks = full, chunks
        self.made: dict[tuple[int, ...], np.ndarray] = {}

    def region(self, coords: tuple[int, ...]) -> tuple[slice, ...]:
        """The chunk's in-bounds part, in array coordinates."""
        assert len(coords) == self.full.ndim
        spans_ = [chunk_span(c, k) for c, k in zip(self.chunks, coords, strict=True)]
        assert all(0 <= a < n for (a, _), n in zip(spans_, self.full.shape, strict=True)), coords
        return tuple(slice(a, min(b, n)) for (a, b), n in zip(spans_, self.full.shape, strict=True))

    def inside(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(r.stop - r.start for r in self.region(coords))

    def __getitem__(self, coords: tuple[int, ...]) -> np.ndarray:
        if coords not in self.made:
            region = self.region(coords)
            shape = tuple(b - a for a, b in (chunk_span(c, k) for c, k
                                              in zip(self.chunks, coords, strict=True)))
            chunk = np.full(shape, SENTINEL, dtype=self.full.dtype)
            chunk[tuple(slice(0, r.stop - r.start) for r in region)] = self.full[region]
            self.made[coords] = chunk
        return self.made[coords]

    def join(self) -> np.ndarray:
        """The array as the chunks now hold it; no overhang may have been written."""
        full = self.full.copy()
        for coords, chunk in self.made.items():
            region = self.region(coords)
            inside = tuple(slice(0, r.stop - r.start) for r in region)
            full[region] = chunk[inside]
            overhang = chunk.copy()
            overhang[inside] = SENTINEL
            assert (overhang == SENTINEL).all(), f"overhang of chunk {coords} written"
        return full


def execute(indexer: Any, full: np.ndarray, chunks: Chunks) -> np.ndarray:
    """Read through the plan, checking each projection on the way."""
    store = Store(full, chunks)
    out = np.full(indexer.shape, SENTINEL - 1, dtype=full.dtype)
    target = out.reshape(-1) if indexer.flat_output else out
    projections = list(indexer)
    assert len(projections) == indexer.nchunks
    coords = [p.chunk_coords for p in projections]
    assert coords == sorted(coords) and len(set(coords)) == len(coords)
    for p in projections:
        assert isinstance(p, ChunkProjection)
        assert type(p.chunk_selection) is tuple and type(p.out_selection) is tuple, p
        chunk = store[p.chunk_coords]
        assert chunk.shape == chunk_shape_at(chunks, p.chunk_coords)
        target[p.out_selection] = chunk[p.chunk_selection]
        # is_complete: the selection visits every in-bounds element once, in C order.
        inside = store.inside(p.chunk_coords)
        labels = np.full(chunk.shape, -1, dtype=np.int64)
        labels[tuple(slice(0, n) for n in inside)] = np.arange(
            int(np.prod(inside))).reshape(inside)
        visited = np.asarray(labels[p.chunk_selection]).reshape(-1)
        assert p.is_complete == (visited.tolist() == list(range(int(np.prod(inside))))), p
        # Only chunks the selection touches are planned.
        assert visited.size > 0, p
        for part in p.chunk_selection:
            if isinstance(part, slice):  # a step of 1 is spelled None
                assert part.step != 1, p
    assert list(indexer.projections_for(coords)) .__len__() == len(coords)
    if coords:
        every_other = set(coords[::2]) | {tuple(c + 1000 for c in coords[0])}
        chosen = list(indexer.projections_for(every_other))
        assert [p.chunk_coords for p in chosen] == sorted(coords[::2])
    return out


def execute_write(indexer: Any, full: np.ndarray, chunks: Chunks, value: np.ndarray
                  ) -> np.ndarray:
    store = Store(full, chunks)
    source = np.broadcast_to(value, indexer.shape)
    source = source.reshape(-1) if indexer.flat_output else source
    for p in indexer:
        store[p.chunk_coords][p.chunk_selection] = source[p.out_selection]
    return store.join()


def labelled(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)


def oindex_numpy(full: np.ndarray, selection: tuple[Any, ...]) -> np.ndarray:
    """numpy's orthogonal selection: each dimension on its own, integers dropped."""
    lists, drop = [], []
    for axis, item in enumerate(selection):
        picked = np.arange(full.shape[axis])[item]
        if np.ndim(picked) == 0:
            drop.append(axis)
            picked = np.array([picked])
        lists.append(picked)
    result = full[np.ix_(*lists)] if lists else full
    return result.reshape([n for a, n in enumerate(result.shape) if a not in drop])


# --- strategies ------------------------------------------------------------------------------


@st.composite
def grids(draw: st.DrawFn, max_ndim: int = 3, max_len: int = 9) -> tuple[tuple[int, ...], Chunks]:
    ndim = draw(st.integers(1, max_ndim))
    shape = tuple(draw(st.integers(0, max_len)) for _ in range(ndim))
    chunks: list[int | tuple[int, ...]] = []
    for n in shape:
        if draw(st.booleans()):
            chunks.append(draw(st.integers(1, max(1, n + 1))))
        else:
            cuts = sorted(draw(st.sets(st.integers(1, n + 3), max_size=4)) | {max(n, 1)})
            extra = draw(st.integers(0, 2))
            chunks.append((0, *cuts, *(cuts[-1] + i + 1 for i in range(extra))))
    return shape, tuple(chunks)


def slices(n: int) -> st.SearchStrategy[slice]:
    bound = st.none() | st.integers(-n - 3, n + 3)
    step = st.none() | st.integers(-4, 4).filter(lambda s: s != 0)
    return st.builds(slice, bound, bound, step)


@st.composite
def basic_selections(draw: st.DrawFn, shape: tuple[int, ...]) -> Any:
    items: list[Any] = []
    for n in shape:
        if n and draw(st.booleans()):
            items.append(draw(st.integers(-n, n - 1)))
        else:
            items.append(draw(slices(n)))
    if len(items) > 0 and draw(st.booleans()):
        position = draw(st.integers(0, len(items)))
        count = draw(st.integers(0, len(items) - position))
        items[position : position + count] = [Ellipsis]
    return tuple(items) if len(items) != 1 or draw(st.booleans()) else items[0]


@st.composite
def orthogonal_selections(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, ...]:
    items: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "list", "bool"] if n else ["slice", "list"]))
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            items.append(draw(slices(n)))
        elif kind == "list":
            items.append(draw(st.lists(st.integers(-n, n - 1), max_size=6)) if n else [])
        else:
            items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                                  dtype=bool))
    return tuple(items)


# --- plans against numpy ------------------------------------------------------------------------


@FAST
@given(data=st.data())
def test_basic_plans_read_and_write_like_numpy(data: st.DataObject) -> None:
    check_basic_plan(data)


def check_basic_plan(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    selection = data.draw(basic_selections(shape))
    full = labelled(shape)
    indexer = basic_indexer(selection, shape, chunks)
    expected = full[selection]
    assert indexer.shape == expected.shape
    assert np.array_equal(execute(indexer, full, chunks), expected)
    value = -labelled(expected.shape) - 1
    written = full.copy()
    written[selection] = value
    assert np.array_equal(execute_write(indexer, full, chunks, value), written)


@FAST
@given(data=st.data())
def test_orthogonal_plans_read_and_write_like_numpy(data: st.DataObject) -> None:
    check_orthogonal_plan(data)


def check_orthogonal_plan(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    selection = data.draw(orthogonal_selections(shape))
    full = labelled(shape)
    indexer = orthogonal_indexer(selection, shape, chunks)
    expected = oindex_numpy(full, selection)
    assert indexer.shape == expected.shape
    assert np.array_equal(execute(indexer, full, chunks), expected)
    # Writes of unique positions (numpy leaves the last of repeated ones).
    unique = tuple(np.unique(np.arange(n)[item]) if isinstance(item, list) else item
                   for n, item in zip(shape, selection, strict=True))
    indexer = orthogonal_indexer(unique, shape, chunks)
    value = -labelled(indexer.shape) - 1
    written = full.copy()
    lists = [np.atleast_1d(np.arange(n)[item]) for n, item in zip(shape, unique, strict=True)]
    written[np.ix_(*lists)] = value.reshape([len(x) for x in lists])
    assert np.array_equal(execute_write(indexer, full, chunks, value), written)


@FAST
@given(data=st.data())
def test_coordinate_plans_read_like_numpy(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    full = labelled(shape)
    if 0 in shape:
        points = 0
    else:
        points = data.draw(st.integers(0, 40))
    rows = [data.draw(st.lists(st.integers(-n, n - 1), min_size=points, max_size=points))
            if n else [] for n in shape]
    selection = tuple(np.array(r, dtype=np.intp) for r in rows)
    indexer = coordinate_indexer(selection, shape, chunks)
    expected = full[selection]
    assert indexer.shape == expected.shape
    assert np.array_equal(execute(indexer, full, chunks), expected)


@FAST
@given(data=st.data())
def test_mask_plans_read_and_write_like_numpy(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    full = labelled(shape)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=full.size,
                                       max_size=full.size)), dtype=bool).reshape(shape)
    for indexer in (mask_indexer(mask, shape, chunks), vindex_indexer(mask, shape, chunks)):
        assert indexer.shape == full[mask].shape
        assert np.array_equal(execute(indexer, full, chunks), full[mask])
        value = -np.arange(int(mask.sum())) - 1
        written = full.copy()
        written[mask] = value
        assert np.array_equal(execute_write(indexer, full, chunks, value), written)


@FAST
@given(data=st.data())
def test_block_plans_cover_whole_chunks(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    full = labelled(shape)
    per_dim = [spans(n, c) for n, c in zip(shape, chunks, strict=True)]
    items: list[Any] = []
    regions = []
    for n, dim_spans in zip(shape, per_dim, strict=True):
        count = len(dim_spans)
        if count and data.draw(st.booleans()):
            block = data.draw(st.integers(-count, count - 1))
            a, b = dim_spans[block]
            items.append(block)
            regions.append(slice(a, min(b, n)))
        else:
            first = data.draw(st.none() | st.integers(-count - 2, count + 2))
            stop = data.draw(st.none() | st.integers(-count - 2, count + 2))
            items.append(slice(first, stop))
            picked = list(range(count))[slice(first, stop)]
            regions.append(slice(dim_spans[picked[0]][0], min(dim_spans[picked[-1]][1], n))
                           if picked else slice(0, 0))
    assert block_region(tuple(items), shape, chunks) == tuple(regions)
    indexer = block_indexer(tuple(items), shape, chunks)
    assert np.array_equal(execute(indexer, full, chunks), full[tuple(regions)])


# --- basic.py: messages and grids of the wrong rank ----------------------------------------


def raises_exactly(kind: type[Exception], message: str, call: Any) -> None:
    """``call()`` raises exactly ``kind`` (not a subclass) with exactly ``message``."""
    with pytest.raises(kind) as info:
        call()
    assert type(info.value) is kind
    assert str(info.value) == message


def test_basic_selection_errors_name_the_offender() -> None:
    def plan(selection: Any, shape: tuple[int, ...] = (5, 5)) -> Any:
        return lambda: list(basic_indexer(selection, shape, (2,) * len(shape)))

    raises_exactly(IndexingError, "newaxis (None) is not supported in a selection",
                   plan((0, None)))
    raises_exactly(IndexingError, "unsupported index 1.5 of type float: "
                   "expected an integer, a slice or Ellipsis", plan((1.5, 0)))
    raises_exactly(IndexingError, "unsupported index [1] of type list: "
                   "expected an integer, a slice or Ellipsis", plan([1]))
    # The inline int path and the general one (numpy ints) say the same.
    for index in (5, -6, np.int64(5)):
        raises_exactly(BoundsCheckError,
                       f"index {index} is out of bounds for a dimension of length 5",
                       plan((0, index)))
    # As many items as dimensions: the indexer itself meets the second Ellipsis.
    raises_exactly(IndexingError, "a selection may contain at most one Ellipsis",
                   plan((Ellipsis, Ellipsis)))
    raises_exactly(IndexingError, "a selection may contain at most one Ellipsis",
                   plan((Ellipsis, 0, Ellipsis), (5, 5, 5)))


def test_block_selection_errors_name_the_offender() -> None:
    def region(selection: Any) -> Any:
        return lambda: block_region(selection, (10, 7), (4, (0, 2, 7)))

    raises_exactly(IndexingError, "block selections only support step 1, got 2",
                   region(slice(0, 2, 2)))
    raises_exactly(IndexingError, "block selections only support step 1, got -1",
                   region((0, slice(None, None, -1))))
    raises_exactly(IndexingError, "unsupported block index 1.5 of type float: "
                   "expected an integer, a step-1 slice or Ellipsis", region(1.5))
    raises_exactly(IndexingError, "unsupported block index None of type NoneType: "
                   "expected an integer, a step-1 slice or Ellipsis", region((0, None)))
    raises_exactly(BoundsCheckError, "block 3 is out of bounds for a grid of 3 blocks",
                   region(3))
    raises_exactly(BoundsCheckError, "block -3 is out of bounds for a grid of 2 blocks",
                   region((0, -3)))


@pytest.mark.parametrize("selection", [(1, 1), (slice(None), 1), (1, slice(0, 3))])
@pytest.mark.parametrize("chunks", [(2,), (2, 2, 2), ((0, 2, 4),), ((0, 4), 2, 2)])
def test_basic_plans_refuse_a_grid_of_another_rank(selection: Any, chunks: Chunks) -> None:
    """Never a plan over the first dimensions only (zip(strict=True) raises ValueError)."""
    indexer = basic_indexer(selection, (4, 4), chunks)
    with pytest.raises(ValueError, match="zip"):
        list(indexer)
    if indexer.shape:
        with pytest.raises(ValueError, match="zip"):
            _ = indexer.nchunks


# --- dims.py: lazy pieces, rectilinear steps, many chunks ------------------------------------


INTP_MAX = 2**63 - 1


@contextmanager
def held_pieces(limit: int) -> Iterator[None]:
    """Lower the number of pieces a regular dimension holds in a list, so that small
    selections take the lazy path (RegularSlicePieces and the lazy product walk)."""
    with mock.patch.object(dims_module, "_HELD_PIECES", limit):
        yield


@FAST
@given(data=st.data())
def test_regular_slice_pieces_are_those_of_slice_pieces(data: st.DataObject) -> None:
    """RegularSlicePieces, a Sequence made on demand, gives what slice_pieces lists."""
    dim_len = data.draw(st.integers(0, 30))
    chunk_len = data.draw(st.integers(1, 7))
    start, step, length = normalize_slice(data.draw(slices(dim_len)), dim_len)
    listed = slice_pieces(start, step, length, dim_len, chunk_len)
    assert type(listed) is list
    lazy = RegularSlicePieces(start, step, length, dim_len, chunk_len)
    assert len(lazy) == len(listed)
    assert list(lazy) == listed
    assert [lazy[i] for i in range(-len(listed), len(listed))] == listed + listed
    for position in (len(listed), -len(listed) - 1):
        with pytest.raises(IndexError) as info:
            lazy[position]
        assert str(info.value) == f"piece {position} of {len(listed)}"
    for chunk_index in range(-(-dim_len // chunk_len) + 2):
        assert lazy.piece_for(chunk_index) == piece_for(listed, chunk_index)
        assert piece_for(lazy, chunk_index) == piece_for(listed, chunk_index)


@FAST
@given(data=st.data())
def test_lazy_pieces_plan_like_numpy(data: st.DataObject) -> None:
    """The basic and orthogonal simulations again, with regular slices made lazily."""
    with held_pieces(data.draw(st.integers(0, 2))):
        check_basic_plan(data)
        check_orthogonal_plan(data)


@pytest.mark.parametrize(("selection", "huge", "small", "chunks"), [
    ((slice(None), slice(None)), (2**40, 3), (600, 3), (1, 2)),  # a piece per element
    ((slice(3, None, 2), -1), (2**40, 3), (600, 3), (1, 2)),
    ((slice(5, None), slice(None, None, -2)), (2**40, 3), (600, 3), (4, 2)),  # per chunk
    ((1, slice(7, None, 3), 2), (2, 2**40, 3), (2, 600, 3), (2, 5, 1)),  # lazy in between
])
def test_plans_over_2_to_the_40_elements_start_as_small_ones(
        selection: Any, huge: tuple[int, ...], small: tuple[int, ...], chunks: Chunks) -> None:
    """Beyond 2**16 chunks the pieces are made when iterated; a plan's first projections
    are those of the same selection on a short array (whose pieces are held in lists)."""
    big_plan = basic_indexer(selection, huge, chunks)
    first = list(islice(big_plan, 40))
    assert first == list(islice(basic_indexer(selection, small, chunks), 40))
    coords = [p.chunk_coords for p in first]
    assert list(big_plan.projections_for(coords[::3])) == first[::3]
    assert big_plan.nchunks > 2**16


def test_rectilinear_steps_skip_chunks_they_jump_over() -> None:
    """More elements than chunks in range, yet a short chunk holds none of them."""
    bounds = (0, 5, 6, 11, 12, 20)
    chunks: Chunks = (bounds,)
    full = labelled((20,))
    for selection in (slice(0, 20, 2), slice(19, None, -2), slice(1, 20, 3)):
        indexer = basic_indexer(selection, (20,), chunks)
        expected = full[selection]
        assert np.array_equal(execute(indexer, full, chunks), expected)
        hit = {k for k in range(5) for i in np.arange(20)[selection]
               if bounds[k] <= i < bounds[k + 1]}
        assert [p.chunk_coords for p in indexer] == [(k,) for k in sorted(hit)]


@st.composite
def long_rectilinear(draw: st.DrawFn) -> tuple[int, tuple[int, ...]]:
    lengths = draw(st.lists(st.integers(1, 4), min_size=1, max_size=25))
    bounds = tuple(np.cumsum([0, *lengths]).tolist())
    return draw(st.integers(1, bounds[-1])), bounds


@FAST
@given(data=st.data())
def test_rectilinear_slices_with_steps_like_numpy(data: st.DataObject) -> None:
    dim_len, bounds = data.draw(long_rectilinear())
    chunks: Chunks = (bounds,)
    full = labelled((dim_len,))
    selection = slice(data.draw(st.none() | st.integers(0, dim_len)),
                      data.draw(st.none() | st.integers(0, dim_len)),
                      data.draw(st.sampled_from([1, 2, 3, 5, -1, -2, -3, -5])))
    indexer = basic_indexer(selection, (dim_len,), chunks)
    assert np.array_equal(execute(indexer, full, chunks), full[selection])


def test_one_element_per_chunk_is_a_unit_slice() -> None:
    """A step as long as the chunks puts one element in each: the chunk selection is
    slice(o, o + 1), as where a step jumps over chunks."""
    for selection, shape, expected in [
        (slice(None, None, 2), (5,), [(0, 0, 0, False), (1, 0, 1, False), (2, 0, 2, True)]),
        (slice(None, None, -2), (6,), [(0, 1, 2, False), (1, 1, 1, False), (2, 1, 0, False)]),
        (slice(1, None, 3), (9,), [(0, 1, 0, False), (2, 0, 1, False), (3, 1, 2, False)]),
    ]:
        plan = [(p.chunk_coords[0], p.chunk_selection[0].start, p.out_selection[0].start,
                 p.is_complete) for p in basic_indexer(selection, shape, (2,))]
        assert plan == expected
        for p in basic_indexer(selection, shape, (2,)):
            (part,) = p.chunk_selection
            assert part == slice(part.start, part.start + 1), p


def test_index_arrays_find_the_chunk_of_the_largest_intp() -> None:
    plan = list(orthogonal_indexer(([INTP_MAX, 0],), (2**63,), (INTP_MAX,)))
    assert plan == [
        ChunkProjection((0,), (slice(0, 1),), (slice(1, 2),), False),
        ChunkProjection((1,), (slice(0, 1),), (slice(0, 1),), True),
    ]


@FAST
@given(data=st.data())
def test_index_arrays_over_many_chunks_like_numpy(data: st.DataObject) -> None:
    """Beyond 256 and 65536 chunks, grouping sorts on wider keys."""
    dim_len = data.draw(st.sampled_from([300, 1000, 70_000, 140_000]))
    chunk_len = data.draw(st.sampled_from([1, 2, 3]))
    rows = data.draw(st.lists(st.integers(-dim_len, dim_len - 1), max_size=30))
    full = labelled((dim_len,))
    chunks: Chunks = (chunk_len,)
    indexer = orthogonal_indexer((rows,), (dim_len,), chunks)
    assert np.array_equal(execute(indexer, full, chunks), full[rows])
    points = coordinate_indexer((np.array(rows, dtype=np.intp),), (dim_len,), chunks)
    assert np.array_equal(execute(points, full, chunks), full[rows])


@FAST
@given(data=st.data())
def test_one_dimensional_index_arrays_keep_arithmetic_runs_as_slices(
        data: st.DataObject) -> None:
    """A chunk's share of an index array is a slice exactly when it is an increasing
    arithmetic run (or a single element), an array otherwise."""
    dim_len = data.draw(st.integers(1, 40))
    chunk_len: int | tuple[int, ...] = data.draw(
        st.integers(1, 8) | long_rectilinear().map(lambda d: d[1]).filter(
            lambda b: b[-1] >= dim_len))
    rows = data.draw(st.lists(st.integers(0, dim_len - 1), min_size=1, max_size=12))
    if data.draw(st.booleans()):
        rows = sorted(set(rows))
    chunks: Chunks = (chunk_len,)
    indexer = orthogonal_indexer((np.array(rows),), (dim_len,), chunks)
    full = labelled((dim_len,))
    assert np.array_equal(execute(indexer, full, chunks), full[rows])
    for p in indexer:
        (part,) = p.chunk_selection
        local = np.arange(chunk_shape_at(chunks, p.chunk_coords)[0])[part]
        steps = set(np.diff(local).tolist())
        run = len(local) == 1 or (len(steps) == 1 and steps.pop() > 0)
        assert isinstance(part, slice) == run, p


# --- grid.py: boundaries, messages, grids of another rank ------------------------------------


def test_boundaries_are_read_only_and_count_only_their_chunks() -> None:
    bounds = resolve_dim((0, 2, 5), 5)
    assert type(bounds) is DimBoundaries
    assert bounds.array.dtype == np.intp and bounds.array.tolist() == [0, 2, 5]
    assert bounds.array.flags.writeable is False
    with pytest.raises(ValueError, match="read-only"):
        bounds.array[0] = 1
    # Never more chunks than the boundaries define, whatever length is asked about.
    assert [DimBoundaries((0, 3)).nchunks(n) for n in (0, 1, 3, 4, 9)] == [0, 1, 1, 1, 1]
    assert [DimBoundaries((0, 2, 5)).nchunks(n) for n in (2, 3, 5, 6)] == [1, 2, 2, 2]


def test_grid_errors_name_the_offender() -> None:
    eight = tuple(range(8))
    raises_exactly(IndexingError, "chunk boundaries (0, 1, 2, 3, 4, 5, 6, 7) end at 7, "
                   "before the end of a dimension of length 10", lambda: resolve_dim(eight, 10))
    nine = tuple(range(9))
    raises_exactly(IndexingError, "chunk boundaries (0, 1, 2, 3, ..., 8) [9 values] end at 8, "
                   "before the end of a dimension of length 10", lambda: resolve_dim(nine, 10))
    raises_exactly(IndexingError, "each entry of chunks must be an int (a regular chunk "
                   "length) or a tuple of chunk boundaries, got 2.5 of type float",
                   lambda: resolve_dim(cast(Any, 2.5), 4))
    raises_exactly(IndexingError, "chunk coordinates (0, 0) do not match a grid of 1 "
                   "dimensions", lambda: chunk_shape_at((4,), (0, 0)))
    raises_exactly(BoundsCheckError, "chunk coordinates must be non-negative, got (0, -1)",
                   lambda: chunk_shape_at((4, 4), (0, -1)))
    # Boundaries (0,) describe a dimension of length 0, which has no chunk at all.
    raises_exactly(BoundsCheckError, "chunk 0 is out of bounds for chunk boundaries (0,)",
                   lambda: chunk_shape_at(((0,),), (0,)))
    assert grid_shape((0,), ((0,),)) == (0,)


def test_chunk_shapes_of_numpy_integer_lengths() -> None:
    """resolve_dim turns numpy integer lengths into Python ints, in any dimension."""
    chunks: tuple[Any, ...] = (np.int64(4), (0, 2, 5), np.uint8(3))
    assert chunk_shape_at(chunks, (7, 1, 2)) == (4, 3, 3)
    assert all(type(n) is int for n in chunk_shape_at(chunks, (0, 0, 0)))


@pytest.mark.parametrize(("shape", "chunks"), [((4, 4), (2,)), ((4,), (2, 2)),
                                               ((4, 4), ((0, 4),))])
def test_grid_shape_refuses_a_grid_of_another_rank(shape: tuple[int, ...],
                                                   chunks: Chunks) -> None:
    with pytest.raises(ValueError, match="zip"):
        grid_shape(shape, chunks)


# --- grouping.py: a chunk's elements keep their output order ----------------------------------


@FAST
@given(data=st.data())
def test_elements_of_a_chunk_keep_their_output_order(data: st.DataObject) -> None:
    """The grouping sort is stable for every key width (8 bits, 16, two 16-bit passes,
    wider), so within a chunk, output positions ascend, as they must for runs of
    positions to become output slices."""
    nchunks = data.draw(st.sampled_from([200, 256, 257, 5000, 65536, 65537, 100_000]))
    chunk_len = 2
    dim_len = nchunks * chunk_len
    picked = data.draw(st.lists(st.integers(0, nchunks - 1), min_size=1, max_size=4,
                                unique=True))
    rows = data.draw(st.lists(
        st.sampled_from(picked).flatmap(
            lambda k: st.integers(k * chunk_len, k * chunk_len + chunk_len - 1)),
        min_size=20, max_size=60))
    full = labelled((dim_len,))
    chunks: Chunks = (chunk_len,)
    for indexer in (orthogonal_indexer((rows,), (dim_len,), chunks),
                    coordinate_indexer((np.array(rows),), (dim_len,), chunks)):
        assert np.array_equal(execute(indexer, full, chunks), full[rows])
        for p in indexer:
            positions = np.arange(len(rows))[p.out_selection[0]].tolist()
            assert positions == sorted(positions), p
            assert np.array_equal(np.array(rows)[positions] % chunk_len,
                                  np.arange(chunk_len)[p.chunk_selection[0]])


# --- normalize.py: messages, huge dimensions, integer lists beyond int64 ----------------------


def test_selection_errors_found_while_normalising() -> None:
    raises_exactly(IndexingError, "slice bounds must be integers or None, got "
                   "slice(1.5, 2, None)", lambda: basic_indexer(slice(1.5, 2), (4,), (2,)))
    # Fewer items than dimensions: expand_ellipsis meets the second Ellipsis.
    for plan in (basic_indexer, orthogonal_indexer):
        raises_exactly(IndexingError, "a selection may contain at most one Ellipsis",
                       lambda plan=plan: plan((Ellipsis, [0], Ellipsis), (4, 4, 4, 4), (2,) * 4))
    raises_exactly(IndexingError, "a selection may contain at most one Ellipsis",
                   lambda: block_region((Ellipsis, Ellipsis), (4,), (2,)))
    raises_exactly(IndexingError, "too many indices: 2 given for an array of 1 dimensions",
                   lambda: basic_indexer((0, Ellipsis, 0), (4,), (2,)))
    raises_exactly(IndexingError, "cannot interpret [[0, 1], [2]] as an index array",
                   lambda: orthogonal_indexer(([[0, 1], [2]],), (4,), (2,)))
    raises_exactly(IndexingError, "boolean arrays are only accepted as a whole-array mask here",
                   lambda: coordinate_indexer((np.array([True, False]),), (2,), (2,)))
    raises_exactly(IndexingError, "boolean index of shape (1,) does not match a dimension "
                   "of length 2", lambda: orthogonal_indexer((np.array([True]),), (2,), (2,)))


def test_index_array_errors_name_the_offender() -> None:
    def normalize(selection: Any, dim_len: int = 4) -> Any:
        return lambda: normalize_integer_array(selection, dim_len, allow_bool=False)

    for selection, offender in [([-5, 0], -5), ([0, 4], 4), ([-4, 4], 4), ([-5, 4], -5)]:
        raises_exactly(BoundsCheckError, f"index {offender} is out of bounds for a "
                       "dimension of length 4", normalize(selection))
    beyond = ("is beyond what an index array can hold (2**63 - 1) in a dimension of length "
              "{}; select it with an integer or a slice")
    raises_exactly(ShapeOverflowError, f"index {2**63} " + beyond.format(2**64),
                   normalize([2**63, 0], 2**64))
    raises_exactly(ShapeOverflowError, f"index {2**64} " + beyond.format(2**64 + 1),
                   normalize([-1, 0], 2**64 + 1))
    refused: list[tuple[Any, str]] = [(np.array([1, 2], dtype=object), "object"),
                                      (np.array([1.0]), "float64"), ([1, 2.0], "float64"),
                                      ([2**64, 1.5], "object"),
                                      ([[2**64], [np.int64(1)]], "object")]
    for selection, dtype in refused:
        raises_exactly(IndexingError, f"index arrays must hold integers, got dtype {dtype}",
                       normalize(selection, 2**65))


def test_index_arrays_along_dimensions_beyond_intp() -> None:
    def normalize(selection: Any, dim_len: int) -> np.ndarray:
        result = normalize_integer_array(selection, dim_len, allow_bool=False)
        assert result.dtype == np.intp
        return result

    assert normalize([], 4).shape == (0,)
    assert normalize([[], []], 4).shape == (2, 0)
    assert normalize([0, 5], 2**64).tolist() == [0, 5]
    assert normalize(np.array([3, 0], dtype=np.uint64), 2**64).tolist() == [3, 0]
    # Python ints beyond int64: numpy holds them in an object array.
    assert normalize([-(2**63) - 1, 0], 2**64).tolist() == [INTP_MAX, 0]
    assert normalize([[-(2**63) - 1, 0], [1, -(2**64)]], 2**64).tolist() == [[INTP_MAX, 0],
                                                                             [1, 0]]
    assert normalize([-(2**63), 7], 2**63 + 5).tolist() == [5, 7]


# --- orthogonal.py: open meshes in four dimensions, messages ----------------------------------


def test_orthogonal_plans_of_every_axis_kind_in_four_dimensions() -> None:
    """Ints, slices and index arrays on four axes, in every arrangement: index arrays
    split by a slice must still combine orthogonally, whichever axes they are on. The
    arrays make chunk-local arrays ([3, 0, 3]) or output position arrays ([0, 2, 1, 3])."""
    kinds: list[Any] = [1, slice(0, 3), [3, 0, 3], [0, 2, 1, 3]]
    shape = (4, 4, 4, 4)
    full = labelled(shape)
    for chunks in ((4, 4, 4, 4), (2, 2, 2, 2)):
        for selection in product(kinds, repeat=4):
            indexer = orthogonal_indexer(selection, shape, chunks)
            expected = oindex_numpy(full, selection)
            assert indexer.shape == expected.shape
            assert np.array_equal(execute(indexer, full, chunks), expected), selection


def test_orthogonal_plans_with_mixed_pieces_on_every_axis() -> None:
    """Each axis has chunks whose share is a slice and chunks whose share is an array."""
    rows = [0, 1, 3, 2]  # chunk 0: slice(0, 2); chunk 1: array([1, 0])
    for selection in ((rows, rows), (rows, rows, rows), (rows, 2, rows)):
        shape = (4,) * len(selection)
        chunks: Chunks = (2,) * len(selection)
        full = labelled(shape)
        indexer = orthogonal_indexer(selection, shape, chunks)
        assert np.array_equal(execute(indexer, full, chunks), oindex_numpy(full, selection))


def test_orthogonal_selection_errors_name_the_offender() -> None:
    raises_exactly(IndexingError, "unsupported index None in an orthogonal selection",
                   lambda: orthogonal_indexer(([0], None), (4, 4), (2, 2)))
    raises_exactly(IndexingError, "orthogonal index arrays must be 1-d, got shape (1, 2)",
                   lambda: orthogonal_indexer(([[0, 1]],), (4,), (2,)))


def test_orthogonal_selections_without_arrays_are_basic_ones() -> None:
    """"Without any array this is exactly basic_indexer": its lazy plan, e.g. over 2**40
    chunks, not one that holds a piece per chunk."""
    for selection in ((1, slice(None)), slice(2, None), Ellipsis, (np.int64(1), Ellipsis)):
        indexer = orthogonal_indexer(selection, (2**40, 4), (1, 2))
        assert type(indexer) is BasicIndexer
        assert list(islice(indexer, 3)) == list(islice(basic_indexer(selection, (2**40, 4),
                                                                      (1, 2)), 3))


# --- vectorized.py: 0-d arrays, grids beyond intp, completeness, messages ---------------------


def same_plan(a: list[ChunkProjection], b: list[ChunkProjection]) -> bool:
    def canonical(p: ChunkProjection) -> tuple[Any, ...]:
        def part(x: Any) -> Any:
            return ("array", x.tolist()) if isinstance(x, np.ndarray) else x
        return (p.chunk_coords, [part(x) for x in p.chunk_selection],
                [part(x) for x in p.out_selection], p.is_complete)
    return [canonical(p) for p in a] == [canonical(p) for p in b]


def test_vectorized_plans_of_zero_dimensional_arrays() -> None:
    full = labelled(())
    for value in (True, False):
        mask = np.array(value)
        for indexer in (mask_indexer(mask, (), ()), vindex_indexer(mask, (), ())):
            assert indexer.shape == full[mask].shape
            assert np.array_equal(execute(indexer, full, ()), full[mask])
            written = full.copy()
            written[mask] = -5
            assert np.array_equal(execute_write(indexer, full, (), np.array([-5] * value)),
                                  written)
    indexer = coordinate_indexer((), (), ())
    assert indexer.shape == ()
    assert np.array_equal(execute(indexer, full, ()), full[()])
    assert np.array_equal(execute_write(indexer, full, (), np.array(-5)), np.array(-5))


@pytest.mark.parametrize("npoints", [3, 40])
def test_points_of_another_rank_or_length_are_refused(npoints: int) -> None:
    rows = np.arange(npoints, dtype=np.intp) % 4
    with pytest.raises(ValueError, match="zip"):  # one array too many
        VectorizedIndexer.from_points((rows, rows), (4,), (2,), result_shape=(npoints,))
    with pytest.raises(ValueError, match="zip"):  # one array too few
        VectorizedIndexer.from_points((rows,), (4, 4), (2, 2), result_shape=(npoints,))
    if npoints <= 32:
        with pytest.raises(ValueError, match="zip"):  # arrays of unequal lengths
            VectorizedIndexer.from_points((rows, rows[:-1]), (4, 4), (2, 2),
                                          result_shape=(npoints,))


@pytest.mark.parametrize("chunks", [(1, 1), (2, 3), (3, 1, 2)])
def test_points_on_grids_beyond_intp_plan_as_on_small_ones(chunks: tuple[int, ...]) -> None:
    """More chunks than an intp can number: grouped by coordinates instead of by linear
    chunk id. Points far from the edges plan the same whatever the array's size."""
    rng = np.random.default_rng(7)
    small = (9, 12, 8)[: len(chunks)]
    huge = (2**40, 2**41, 2**42)[: len(chunks)]
    for npoints in (5, 33, 80):
        points = tuple(rng.integers(0, n, size=npoints) for n in small)
        big_plan = list(coordinate_indexer(points, huge, chunks))
        small_plan = list(coordinate_indexer(points, small, chunks))
        # Completeness may differ only where a chunk reaches the small array's edge.
        assert same_plan([p._replace(is_complete=False) for p in big_plan],
                         [p._replace(is_complete=False) for p in small_plan])
        assert [p.is_complete for p in big_plan] == [
            p.is_complete and all((k + 1) * c <= n for k, c, n
                                  in zip(p.chunk_coords, chunks, small, strict=True))
            for p in small_plan]
        full = labelled(small)
        assert np.array_equal(execute(coordinate_indexer(points, small, chunks), full,
                                      chunks), full[points])


@pytest.mark.parametrize("repeat", [1, 12])  # 4 or 48 points: both ways of grouping
def test_points_covering_a_chunk_out_of_order_do_not_complete_it(repeat: int) -> None:
    full = labelled((2, 2))
    for order in ([(0, 0), (1, 1), (0, 1), (1, 0)], [(0, 0), (0, 1), (1, 0), (1, 1)],
                  [(0, 1), (0, 0), (1, 0), (1, 1)]):
        rows, cols = (np.array([p[axis] for p in order] * repeat) for axis in (0, 1))
        indexer = coordinate_indexer((rows, cols), (2, 2), (2, 2))
        assert np.array_equal(execute(indexer, full, (2, 2)), full[rows, cols])
        expected = repeat == 1 and order == sorted(order)
        assert [p.is_complete for p in indexer] == [expected]


def test_vectorized_selection_errors_name_the_offender() -> None:
    raises_exactly(IndexingError, "vindex needs exactly one index array per dimension: got 1 "
                   "for an array of 2 dimensions",
                   lambda: coordinate_indexer(([0],), (4, 4), (2, 2)))
    for item in (None, Ellipsis, slice(0, 2)):
        raises_exactly(IndexingError, f"vindex accepts only integer arrays, got {item!r}",
                       lambda item=item: coordinate_indexer(([0], item), (4, 4), (2, 2)))
    with pytest.raises(IndexingError) as info:
        coordinate_indexer(([0, 1], [0, 1, 2]), (4, 4), (2, 2))
    assert str(info.value).startswith("vindex arrays do not broadcast together: shape mismatch")
    mask = np.ones((4,), dtype=bool)
    raises_exactly(IndexingError, "a mask selection must be a single boolean array",
                   lambda: mask_indexer((mask, mask), (4, 4), (2, 2)))
    raises_exactly(IndexingError, "a mask selection must be a boolean array of shape (4, 4), "
                   "got dtype bool and shape (4,)", lambda: mask_indexer(mask, (4, 4), (2, 2)))
