"""Arrays whose declared shapes, chunks or shards are valid metadata but hostile to a
careless implementation: dimensions at and beyond 2**63, chunks of 2**62 elements, shards
of 2**40 inner chunks, selections of millions of missing chunks. Opening must work; I/O
must work or fail at once with a zarrkit error.

Oracles are independent of zarrkit's indexing: Python's own ``range`` and ``slice.indices``
give the selected coordinates, a dict holds the values written, numpy lays out the result.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import ResourceLimitError, ShapeOverflowError
from zarrkit.storage import MemoryStore

INTP_MAX = 2**63 - 1
PROPERTY = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# --- len() and overflowing positions ------------------------------------------------------

def test_len_beyond_what_python_can_return_is_a_clear_error() -> None:
    array = zk.create_array(MemoryStore(), shape=(2**63,), chunks=(10,), dtype="i4")
    with pytest.raises(ShapeOverflowError, match=r"9223372036854775808.*\.shape\[0\]"):
        len(array)
    with pytest.raises(OverflowError):  # what an ordinary except clause names
        len(array)
    assert len(zk.create_array(MemoryStore(), shape=(INTP_MAX, 2), chunks=(10, 2),
                               dtype="i4")) == INTP_MAX


def test_index_arrays_work_on_a_dimension_of_2_63() -> None:
    array = zk.create_array(MemoryStore(), shape=(2**63,), chunks=(10,), dtype="i4",
                            fill_value=-1)
    array[1] = 5
    array[INTP_MAX] = 7
    assert array.oindex[[0, 1]].tolist() == [-1, 5]
    assert array.oindex[[-1, 1, -2**63]].tolist() == [7, 5, -1]
    assert array.vindex[[INTP_MAX, 1]].tolist() == [7, 5]


def test_index_array_entries_beyond_intp_are_refused_clearly() -> None:
    array = zk.create_array(MemoryStore(), shape=(2**64 + 3,), chunks=(7,), dtype="i4")
    for selection in ([2**63], [0, 2**64], [-1], np.array([2**63], dtype=np.uint64)):
        with pytest.raises(ShapeOverflowError, match="select it with an integer or a slice"):
            array.oindex[selection]
    array[2**64 + 2] = 3  # plain integers reach every element
    assert array[-1] == 3 and array[2**64:].tolist() == [0, 0, 3]


# --- huge shapes, small selections, against a coordinate oracle ---------------------------

HUGE = [INTP_MAX, 2**63, 2**63 + 7, 2**64 + 3, 2**80]
SMALL = [1, 5, 17]
CHUNK_LENGTHS = [1, 3, 7, 64, 1000]


@st.composite
def hostile_arrays(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    ndim = draw(st.integers(1, 2))
    shape = tuple(draw(st.sampled_from(HUGE + SMALL)) for _ in range(ndim))
    if not any(n in HUGE for n in shape):
        shape = (draw(st.sampled_from(HUGE)), *shape[1:])
    chunks = tuple(draw(st.sampled_from(CHUNK_LENGTHS)) for _ in range(ndim))
    return shape, chunks, draw(st.sampled_from([2, 3]))


def positions(n: int) -> st.SearchStrategy[int]:
    """In-bounds positions, mostly near the ends and at chunk-unfriendly places."""
    return st.one_of(st.integers(0, min(n, 6) - 1), st.integers(max(0, n - 6), n - 1),
                     st.sampled_from([n // 2, n // 3, min(INTP_MAX, n - 1)]),
                     st.integers(0, n - 1))


def negative_form(draw: st.DrawFn, index: int, n: int) -> int:
    """``index`` or its negative spelling."""
    return index - n if draw(st.booleans()) else index


@st.composite
def short_slices(draw: st.DrawFn, n: int) -> slice:
    """A slice of a dimension of length ``n`` selecting at most 4 elements: any step sign
    and size, stops far beyond the dimension, negative spellings."""
    start = draw(positions(n))
    count = draw(st.integers(0, 4))
    step = draw(st.sampled_from([1, 2, 3, 2**62, -1, -2, -(2**62)]))
    stop: int | None = start + count * step
    if stop is not None and not 0 <= stop < n:
        stop = draw(st.sampled_from([None, 2**90 if step > 0 else -(2**90)]))
    return slice(negative_form(draw, start, n), stop, step)


def basic_coordinates(item: Any, n: int) -> list[int] | int:
    """What a basic selection item selects, from Python alone."""
    if isinstance(item, slice):
        return list(range(*item.indices(n)))
    return item % n if item < 0 else item


@st.composite
def written_points(draw: st.DrawFn, shape: tuple[int, ...]) -> dict[tuple[int, ...], int]:
    points = draw(st.lists(st.tuples(*(positions(n) for n in shape)), min_size=1,
                           max_size=4, unique=True))
    return {point: 100 + i for i, point in enumerate(points)}


def _make(shape: tuple[int, ...], chunks: tuple[int, ...], zarr_format: int,
          points: dict[tuple[int, ...], int]) -> zk.Array:
    array = zk.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="<i4",
                            fill_value=-1, zarr_format=zarr_format)
    for point, value in points.items():
        array[point] = value
    return array


def _expected(oracle: dict[tuple[int, ...], int], per_dim: Sequence[list[int] | int]
              ) -> np.ndarray[Any, Any]:
    """The orthogonal selection of ``per_dim`` coordinates (ints drop their dimension)."""
    lists = [c if isinstance(c, list) else [c] for c in per_dim]
    values = [oracle.get(point, -1) for point in itertools.product(*lists)]
    full = np.array(values, dtype="<i4").reshape([len(c) for c in lists])
    return full.reshape([len(c) for c in per_dim if isinstance(c, list)])


@PROPERTY
@given(layout=hostile_arrays(), data=st.data())
def test_basic_selections_of_huge_arrays_read_and_write_as_python_says(
        layout: tuple[tuple[int, ...], tuple[int, ...], int], data: Any) -> None:
    shape, chunks, zarr_format = layout
    points = data.draw(written_points(shape))
    array = _make(shape, chunks, zarr_format, points)
    selection = tuple(
        data.draw(st.one_of(short_slices(n),
                            positions(n).map(lambda i, n=n: i - n if i % 2 else i)))
        for n in shape)
    per_dim = [basic_coordinates(item, n) for item, n in zip(selection, shape, strict=True)]
    expected = _expected(points, per_dim)
    np.testing.assert_array_equal(array[selection], expected)
    # Write distinct values through the same selection, read them back one by one.
    values = np.arange(expected.size, dtype="<i4").reshape(expected.shape) + 1000
    array[selection] = values
    lists = [c if isinstance(c, list) else [c] for c in per_dim]
    for value, point in zip(values.reshape(-1).tolist(), itertools.product(*lists),
                            strict=True):
        points[point] = value
    for point, value in points.items():
        assert array[point] == value


@PROPERTY
@given(layout=hostile_arrays(), data=st.data())
def test_index_array_selections_of_huge_arrays_follow_python(
        layout: tuple[tuple[int, ...], tuple[int, ...], int], data: Any) -> None:
    shape, chunks, zarr_format = layout
    points = data.draw(written_points(shape))
    array = _make(shape, chunks, zarr_format, points)
    # Orthogonal: per dimension an index list (possibly negative), a slice or an int.
    selection: list[Any] = []
    per_dim: list[list[int] | int] = []
    beyond_intp = False  # an index list entry no intp can hold (slices and ints can)
    for n in shape:
        kind = data.draw(st.sampled_from(["list", "slice", "int"]))
        if kind == "list":
            wanted = data.draw(st.lists(positions(n), min_size=1, max_size=4))
            selection.append([negative_form(data.draw, i, n) for i in wanted])
            per_dim.append(wanted)
            beyond_intp = beyond_intp or max(wanted) > INTP_MAX
        elif kind == "slice":
            item = data.draw(short_slices(n))
            selection.append(item)
            per_dim.append(basic_coordinates(item, n))
        else:
            index = data.draw(positions(n))
            selection.append(negative_form(data.draw, index, n))
            per_dim.append(index)
    if beyond_intp:
        with pytest.raises(ShapeOverflowError):
            array.oindex[tuple(selection)]
    else:
        np.testing.assert_array_equal(array.oindex[tuple(selection)],
                                      _expected(points, per_dim))
    # Pointwise: the written points and neighbours, in a drawn order.
    chosen = data.draw(st.lists(st.sampled_from(sorted(points)), min_size=1, max_size=5))
    chosen += [tuple(min(c + 1, n - 1) for c, n in zip(p, shape, strict=True)) for p in chosen]
    coordinates = tuple(list(axis) for axis in zip(*chosen, strict=True))
    if any(c > INTP_MAX for point in chosen for c in point):
        with pytest.raises(ShapeOverflowError):
            array.vindex[coordinates]
        return
    assert array.vindex[coordinates].tolist() == [points.get(p, -1) for p in chosen]
    array.vindex[coordinates] = np.arange(len(chosen), dtype="<i4") + 500
    for i, point in enumerate(chosen):
        points[point] = 500 + i  # a repeated point takes its last value, as in numpy
    for point, value in points.items():
        assert array[point] == value


# --- chunks and shards too big to allocate -----------------------------------------------

def test_a_chunk_beyond_the_limit_opens_and_refuses_io() -> None:
    store = MemoryStore()
    zk.create_array(store, shape=(2**62,), chunks=(2**62,), dtype="i1", fill_value=0)
    array = zk.open_array(store, mode="r+")  # valid metadata opens
    assert array.shape == (2**62,) and array.chunks == (2**62,)
    for io in (lambda: array[0], lambda: array.__setitem__(0, 1),
               lambda: array.blocks[0], lambda: array.resize((2,))):
        with pytest.raises(ResourceLimitError, match="4611686018427387904 bytes decoded"):
            io()
    assert array.shape == (2**62,)  # the refused resize changed nothing


def test_a_shard_of_2_40_inner_chunks_refuses_io_naming_its_index() -> None:
    store = MemoryStore()
    array = zk.create_array(store, shape=(2**40,), chunks=(1,), shards=(2**40,), dtype="i1",
                            fill_value=0, zarr_format=3)
    for io in (lambda: array[0], lambda: array.__setitem__(0, 1), lambda: array.blocks[0],
               lambda: array.oindex[[0, 1]], lambda: array.vindex[[0]]):
        with pytest.raises(ResourceLimitError, match=r"index of a shard of \(1099511627776,\)"):
            io()
    assert list(store.list()) == ["zarr.json"]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_the_limit_is_zarrkit_config_max_chunk_bytes(zarr_format: int) -> None:
    array = zk.create_array(MemoryStore(), shape=(300,), chunks=(100,), dtype="<f8",
                            fill_value=0, zarr_format=zarr_format)
    with zk.config.set(max_chunk_bytes=799):
        with pytest.raises(ResourceLimitError, match="max_chunk_bytes"):
            array[5] = 1.0
        with pytest.raises(ResourceLimitError):
            array[:]
    with zk.config.set(max_chunk_bytes=800):  # exactly one chunk: allowed
        array[5] = 1.0
        assert array[5] == 1.0


def test_a_shard_index_beyond_the_limit_is_refused_even_when_the_shard_is_small() -> None:
    # 4096 one-byte inner chunks: a 4 KiB shard with a 64 KiB index (16 bytes per chunk).
    array = zk.create_array(MemoryStore(), shape=(8192,), chunks=(1,), shards=(4096,),
                            dtype="u1", fill_value=0, zarr_format=3)
    with zk.config.set(max_chunk_bytes=10_000):
        with pytest.raises(ResourceLimitError, match="index of a shard"):
            array[0] = 1
    array[0] = 1
    assert array[:2].tolist() == [1, 0]


# --- outputs that cannot be allocated fail before any planning ---------------------------

@pytest.fixture
def no_planning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Walking a slice's chunks is an error: a refusal must come before planning."""
    from zarrkit.indexing import dims

    def planned(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the selection was planned before the output was refused")

    for method in ("__iter__", "__getitem__", "piece_for"):
        monkeypatch.setattr(dims.RegularSlicePieces, method, planned)


@pytest.mark.usefixtures("no_planning")
def test_an_impossible_output_is_refused_before_planning() -> None:
    square = zk.create_array(MemoryStore(), shape=(2**62, 2**62), chunks=(1, 1), dtype="i1")
    with pytest.raises(ResourceLimitError, match=r"shape \(4611686018427387904,\).*bytes"):
        square[0]
    with pytest.raises(ResourceLimitError, match="4611686018427387904"):
        square.oindex[[0, 1], :]
    with pytest.raises(ResourceLimitError, match="4611686018427387904"):
        square.blocks[0]
    line = zk.create_array(MemoryStore(), shape=(2**40,), chunks=(1,), dtype="i1")
    with pytest.raises(ResourceLimitError, match="1099511627776"):
        line[:]
    longest = zk.create_array(MemoryStore(), shape=(2**64,), chunks=(3,), dtype="i1")
    for io in (lambda: longest[:], lambda: longest[::-1], lambda: longest.blocks[:],
               lambda: longest.oindex[::2]):
        with pytest.raises(ResourceLimitError, match=r"\(18446744073709551616,\)|"
                                                     r"\(9223372036854775808,\)"):
            io()
    sharded = zk.create_array(MemoryStore(), shape=(2**50,), chunks=(2,), shards=(4,),
                              dtype="i2", zarr_format=3)
    with pytest.raises(ResourceLimitError, match=str(2**51)):
        sharded[:]


def test_small_selections_of_impossible_arrays_still_work() -> None:
    square = zk.create_array(MemoryStore(), shape=(2**62, 2**62), chunks=(1, 1), dtype="i1",
                             fill_value=3)
    square[2**62 - 1, 5] = 9
    assert square[-1, 4:7].tolist() == [3, 9, 3]
    assert square.vindex[[0, 2**62 - 1], [5, 5]].tolist() == [3, 9]
    assert square.oindex[[-1], [5, 0]].tolist() == [[9, 3]]


# --- reads of very many missing chunks ----------------------------------------------------

class CountingStore(MemoryStore):
    """A MemoryStore that counts the values asked for and the listings made."""

    def __init__(self, *, listable: bool = True) -> None:
        super().__init__()
        self.supports_listing = listable
        self.asked = 0
        self.listings = 0

    def get(self, key: str) -> bytes | None:
        self.asked += 1
        return super().get(key)

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        self.asked += len(keys)
        return [super(CountingStore, self).get(key) for key in keys]

    def list_prefix(self, prefix: str) -> Iterator[str]:
        self.listings += 1
        return super().list_prefix(prefix)


def _sparse(n: int, stored: dict[int, float], *, listable: bool = True
            ) -> tuple[zk.Array, CountingStore, np.ndarray[Any, Any]]:
    store = CountingStore(listable=listable)
    array = zk.create_array(store, shape=(n,), chunks=(1,), dtype="<f8", fill_value=1.5)
    expected = np.full(n, 1.5)
    for index, value in stored.items():
        array[index] = value
        expected[index] = value
    store.asked = store.listings = 0
    return array, store, expected


def test_a_read_of_many_missing_chunks_asks_only_for_the_stored_ones() -> None:
    n = 2**15
    array, store, expected = _sparse(n, {3: 7.0, 20_000: 8.0, n - 1: 9.0})
    np.testing.assert_array_equal(array[:], expected)
    assert store.listings == 1
    assert store.asked <= 32 + 3  # a first probe of the plan, then the listed chunks
    np.testing.assert_array_equal(array[::-3], expected[::-3])
    np.testing.assert_array_equal(array.oindex[np.arange(0, n, 2)], expected[::2])


def test_an_array_written_at_its_start_switches_to_listing() -> None:
    n = 2**16
    array, store, expected = _sparse(n, dict.fromkeys(range(100), 2.0))
    np.testing.assert_array_equal(array[:], expected)
    assert store.listings == 1 and store.asked < n // 4


def test_a_dense_read_never_lists() -> None:
    n = 2**13
    array, store, expected = _sparse(n, {})
    array[:] = np.arange(n, dtype="<f8")
    store.asked = 0
    np.testing.assert_array_equal(array[:], np.arange(n, dtype="<f8"))
    assert store.listings == 0 and store.asked == n


def test_a_store_that_cannot_list_is_read_chunk_by_chunk() -> None:
    n = 2**13
    array, store, expected = _sparse(n, {5: 2.0}, listable=False)
    np.testing.assert_array_equal(array[:], expected)
    assert store.listings == 0 and store.asked == n


def test_a_small_part_of_a_huge_grid_is_read_chunk_by_chunk() -> None:
    # Listing costs in proportion to the whole array: not worth it for a small part.
    array, store, expected = _sparse(2**20, {2**19: 4.0})
    np.testing.assert_array_equal(array[2**19 - 5000:2**19 + 5000], expected[2**19 - 5000:
                                                                                 2**19 + 5000])
    assert store.listings == 0


# --- the lazy plan of a slice -------------------------------------------------------------

def _brute_pieces(start: int, step: int, length: int, dim_len: int, chunk_len: int
                  ) -> dict[int, tuple[list[int], list[int], bool]]:
    """Per chunk touched: the chunk-local indices in selection order, their output
    positions, and whether the chunk's in-bounds elements are all selected in order."""
    found: dict[int, tuple[list[int], list[int], bool]] = {}
    for position, index in enumerate(range(start, start + length * step, step)):
        local, out = found.setdefault(index // chunk_len, ([], [], False))[:2]
        local.append(index % chunk_len)
        out.append(position)
    for chunk, (local, out, _) in found.items():
        extent = min(chunk_len, dim_len - chunk * chunk_len)
        found[chunk] = (local, out, local == list(range(extent)))
    return found


@PROPERTY
@given(dim_len=st.integers(1, 60), chunk_len=st.integers(1, 12), data=st.data())
def test_slice_pieces_made_on_demand_match_a_brute_force_split(
        dim_len: int, chunk_len: int, data: Any) -> None:
    from zarrkit.indexing.dims import RegularSlicePieces

    selection = slice(data.draw(st.integers(-70, 70) | st.none()),
                      data.draw(st.integers(-70, 70) | st.none()),
                      data.draw(st.sampled_from([1, 2, 3, 5, 13, -1, -2, -7])))
    start, stop, step = selection.indices(dim_len)
    length = len(range(start, stop, step))
    pieces = RegularSlicePieces(start, step, length, dim_len, chunk_len)
    expected = _brute_pieces(start, step, length, dim_len, chunk_len)
    walked = list(pieces)
    assert len(pieces) == len(walked) == len(expected)
    assert [p[0] for p in walked] == sorted(expected)
    chunk_indices = np.arange(chunk_len)
    outputs = np.arange(length)
    for position, (chunk, chunk_selection, out_selection, complete) in enumerate(walked):
        local, out, whole = expected[chunk]
        assert chunk_indices[chunk_selection].tolist() == local
        assert outputs[out_selection].tolist() == out
        assert complete == whole
        assert pieces[position] == walked[position] == pieces.piece_for(chunk)
    for chunk in range(-(-dim_len // chunk_len)):
        if chunk not in expected:
            assert pieces.piece_for(chunk) is None


def test_a_plan_of_2_62_chunks_is_walked_lazily() -> None:
    from zarrkit.indexing import basic_indexer

    indexer = basic_indexer((slice(None), slice(1, 3)), (2**62, 4), (1, 2))
    wanted = [(2**62 - 1, 1), (5, 0), (2**61, 7)]  # the last is not in the selection
    assert [(p.chunk_coords, p.out_selection) for p in indexer.projections_for(wanted)] == [
        ((5, 0), (slice(5, 6), slice(0, 1))),
        ((2**62 - 1, 1), (slice(2**62 - 1, 2**62), slice(1, 2)))]
    first = list(itertools.islice(indexer, 3))
    assert [p.chunk_coords for p in first] == [(0, 0), (0, 1), (1, 0)]
    assert [p.out_selection for p in first] == [(slice(0, 1), slice(0, 1)),
                                                (slice(0, 1), slice(1, 2)),
                                                (slice(1, 2), slice(0, 1))]
    assert indexer.nchunks == 2**63
    assert math.prod(indexer.shape) == 2**63 > sys.maxsize
