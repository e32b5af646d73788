"""Fancy selections in ``a[...]``: dispatched as zarr-python 3.1 does, values as numpy's.

Reads and writes through ``[]`` are checked against numpy (hypothesis, 1-3 dimensions,
regular, sharded and rectilinear grids, v2 and v3, edge chunks), with zarr-python's rules
where it deliberately differs from numpy (a slice among index arrays makes an outer
product); and side by side against zarr-python itself on the same data, including the
selections both refuse.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import IndexingError, ZarrkitError
from zarrkit.indexing.dispatch import classify_selection

zarr = pytest.importorskip("zarr")

FAST = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])


# --- oracles ---------------------------------------------------------------------------------


def outer(data: np.ndarray[Any, Any], selection: tuple[Any, ...]) -> Any:
    """numpy's reading of an orthogonal selection: each axis on its own, integers dropping
    their axis (``np.ix_`` over index arrays, then the integer axes taken away)."""
    axes: list[np.ndarray[Any, Any]] = []
    drop: list[int] = []
    for axis, (item, n) in enumerate(zip(selection, data.shape, strict=False)):
        if type(item) is slice:
            axes.append(np.arange(n)[item])
        elif isinstance(item, int | np.integer):
            axes.append(np.array([item]))
            drop.append(axis)
        else:
            index = np.asarray(item)
            axes.append(np.flatnonzero(index) if index.dtype == bool
                        else index.astype(np.intp))  # [] is float to numpy
    for n in data.shape[len(axes):]:
        axes.append(np.arange(n))
    return np.ix_(*axes), tuple(drop)


def outer_read(data: np.ndarray[Any, Any], selection: tuple[Any, ...]) -> Any:
    mesh, drop = outer(data, selection)
    result = data[mesh]
    return result.reshape([n for axis, n in enumerate(result.shape) if axis not in drop])


def outer_write(data: np.ndarray[Any, Any], selection: tuple[Any, ...], value: Any) -> None:
    mesh, drop = outer(data, selection)
    shape = data[mesh].shape
    data[mesh] = np.broadcast_to(
        value, [n for axis, n in enumerate(shape) if axis not in drop]).reshape(shape)


# --- arrays ----------------------------------------------------------------------------------


@st.composite
def layouts(draw: st.DrawFn, max_ndim: int = 3) -> dict[str, Any]:
    """Shape, chunk grid and format: regular (v2 or v3), sharded, or rectilinear; chunk
    lengths that rarely divide the shape, so edge chunks are common."""
    shape = tuple(draw(st.lists(st.integers(1, 7), min_size=1, max_size=max_ndim)))
    kind = draw(st.sampled_from(["v2", "v3", "sharded", "rectilinear"]))
    chunks: list[Any] = [draw(st.integers(1, n)) for n in shape]
    options: dict[str, Any] = {"zarr_format": 2 if kind == "v2" else 3}
    if kind == "sharded":
        options["shards"] = tuple(c * draw(st.integers(1, 2)) for c in chunks)
    if kind == "rectilinear":
        axis = draw(st.integers(0, len(shape) - 1))
        lengths = draw(st.lists(st.integers(1, 3), min_size=1, max_size=shape[axis]))
        if sum(lengths) < shape[axis]:
            lengths.append(shape[axis] - sum(lengths))
        chunks[axis] = lengths
    return {"shape": shape, "chunks": chunks, **options}


def make(layout: dict[str, Any]) -> tuple[zk.Array, np.ndarray[Any, Any]]:
    data = np.arange(int(np.prod(layout["shape"])), dtype="i4").reshape(layout["shape"])
    array = zk.create_array({}, dtype="i4", fill_value=-1, **layout)
    array[...] = data
    return array, data


# --- selections ------------------------------------------------------------------------------


def index_list(draw: st.DrawFn, n: int, *, unique: bool) -> list[int]:
    """Indices along an axis of length ``n``, negative ones too, possibly none; distinct
    positions when ``unique`` (a write then has one value per element)."""
    return draw(st.lists(st.integers(-n, n - 1), max_size=n if unique else 2 * n,
                         unique_by=(lambda i: i % n) if unique else None))


def as_array_or_list(draw: st.DrawFn, items: list[int]) -> Any:
    return draw(st.sampled_from([items, np.array(items, dtype=np.intp),
                                 np.array(items, dtype="i1"), np.array(items, dtype="u8")
                                 if min(items, default=0) >= 0 else items]))


@st.composite
def coordinate_selections(draw: st.DrawFn, shape: tuple[int, ...], unique: bool) -> Any:
    """One integer, list or integer array per axis, at least one of the latter, all of
    one length: numpy's and zarr-python's pointwise reads."""
    ndim = len(shape)
    arrays = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim).filter(any))
    count = draw(st.integers(1, min(shape)))
    points: list[tuple[int, ...]] = draw(st.lists(
        st.tuples(*(st.integers(0, n - 1) for n in shape)), min_size=count, max_size=count,
        unique=unique))
    if unique and not all(arrays):
        # An integer axis repeats its value: keep the points distinct on the array axes.
        fixed = tuple(draw(st.integers(0, n - 1)) for n in shape)
        seen: set[tuple[int, ...]] = set()
        kept = []
        for point in points:
            key = tuple(p for p, is_array in zip(point, arrays, strict=True) if is_array)
            if key not in seen:
                seen.add(key)
                kept.append(point)
        points = [tuple(p if is_array else f for p, f, is_array
                        in zip(point, fixed, arrays, strict=True)) for point in kept]
    columns = list(zip(*points, strict=True))
    items: list[Any] = []
    for axis, n in enumerate(shape):
        if arrays[axis]:
            negative = draw(st.booleans())
            column = [c - n if negative else c for c in columns[axis]]
            items.append(as_array_or_list(draw, column))
        else:
            items.append(draw(st.sampled_from([columns[axis][0], np.int64(columns[axis][0])])))
    selection = tuple(items)
    if ndim == 1 and draw(st.booleans()):
        return selection[0]
    return selection


@st.composite
def orthogonal_selections(draw: st.DrawFn, shape: tuple[int, ...], unique: bool) -> Any:
    """Integers and slices (negative steps included) around exactly one index array (a
    list, integer array or boolean mask of the axis), as zarr-python reads orthogonally;
    trailing axes may be left out."""
    ndim = len(shape)
    length = draw(st.integers(1, ndim))
    array_axis = draw(st.integers(0, length - 1))
    items: list[Any] = []
    for axis in range(length):
        n = shape[axis]
        if axis == array_axis:
            if draw(st.booleans()):
                items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
            else:
                items.append(as_array_or_list(draw, index_list(draw, n, unique=unique)))
        elif draw(st.booleans()):
            items.append(draw(st.integers(-n, n - 1)))
        else:
            step = draw(st.sampled_from([None, 1, 2, 3, -1, -2]))
            start = draw(st.none() | st.integers(-n - 1, n + 1))
            stop = draw(st.none() | st.integers(-n - 1, n + 1))
            items.append(slice(start, stop, step))
    if length == 1 and draw(st.booleans()) and not isinstance(items[0], np.ndarray | list):
        return items[0]
    return tuple(items)


@st.composite
def all_array_orthogonal(draw: st.DrawFn, shape: tuple[int, ...], unique: bool) -> Any:
    """One index array per axis, a boolean one among them: orthogonal in zarr-python."""
    bool_axis = draw(st.integers(0, len(shape) - 1))
    items: list[Any] = []
    for axis, n in enumerate(shape):
        if axis == bool_axis:
            items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        else:
            items.append(index_list(draw, n, unique=unique))
    return tuple(items)


def value_for(draw: st.DrawFn, shape: tuple[int, ...]) -> Any:
    if draw(st.booleans()):
        return draw(st.integers(-100, 100))
    values = np.arange(1000, 1000 + int(np.prod(shape)), dtype="i4").reshape(shape)
    if len(shape) > 1 and draw(st.booleans()):
        return values[:1]  # broadcast along the first axis
    return values


# --- reads and writes against numpy ----------------------------------------------------------


@FAST
@given(layout=layouts(), data=st.data())
def test_coordinate_selections_match_numpy(layout: dict[str, Any], data: st.DataObject) -> None:
    array, expected = make(layout)
    selection = data.draw(coordinate_selections(array.shape, unique=False))
    assert classify_selection(selection, array.ndim)[0] == "vectorized"
    np.testing.assert_array_equal(array[selection], expected[selection])
    write = data.draw(coordinate_selections(array.shape, unique=True))
    value = value_for(data.draw, expected[write].shape)
    expected[write] = value
    array[write] = value
    np.testing.assert_array_equal(array[...], expected)


@FAST
@given(layout=layouts(), data=st.data())
def test_mask_selections_match_numpy(layout: dict[str, Any], data: st.DataObject) -> None:
    array, expected = make(layout)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=array.size,
                                       max_size=array.size))).reshape(array.shape)
    selection: Any = mask.tolist() if array.ndim == 1 and data.draw(st.booleans()) else mask
    np.testing.assert_array_equal(array[selection], expected[mask])
    value = value_for(data.draw, (int(mask.sum()),))
    expected[mask] = value
    array[selection] = value
    np.testing.assert_array_equal(array[...], expected)


@FAST
@given(layout=layouts(), data=st.data())
def test_orthogonal_selections_match_outer_product(layout: dict[str, Any],
                                                   data: st.DataObject) -> None:
    array, expected = make(layout)
    strategy = st.one_of(orthogonal_selections(array.shape, unique=False),
                         all_array_orthogonal(array.shape, unique=False))
    selection = data.draw(strategy)
    items = selection if type(selection) is tuple else (selection,)
    has_array = any(isinstance(i, np.ndarray | list) for i in items)
    # On one axis an integer array is both pointwise and orthogonal.
    assert (classify_selection(selection, array.ndim)[0] != "basic") == has_array
    np.testing.assert_array_equal(array[selection], outer_read(expected, items))
    write = data.draw(st.one_of(orthogonal_selections(array.shape, unique=True),
                                all_array_orthogonal(array.shape, unique=True)))
    write_items = write if type(write) is tuple else (write,)
    value = value_for(data.draw, outer_read(expected, write_items).shape)
    outer_write(expected, write_items, value)
    array[write] = value
    np.testing.assert_array_equal(array[...], expected)


@FAST
@given(layout=layouts(), data=st.data())
def test_single_array_selections_agree_with_numpy_itself(layout: dict[str, Any],
                                                         data: st.DataObject) -> None:
    # With one index array and no integer split from it by a slice, numpy's own reading
    # is the outer product: numpy is then the oracle as it is.
    array, expected = make(layout)
    first, last = array.shape[0], array.shape[-1]
    rows = data.draw(st.lists(st.integers(-first, first - 1), min_size=0, max_size=2 * first))
    columns = data.draw(st.lists(st.integers(-last, last - 1), min_size=0, max_size=2 * last))
    rest = tuple(slice(None, None, data.draw(st.sampled_from([1, -1, 2])))
                 for _ in array.shape[1:])
    for selection in [(rows, *rest), (Ellipsis, columns), rows]:
        np.testing.assert_array_equal(array[selection], expected[selection])


def test_scalar_and_broadcast_values() -> None:
    array, expected = make({"shape": (5, 6), "chunks": (2, 4)})
    for selection, value in [
        (([0, 4], [5, 0]), 7),
        ((np.array([[1], [3]]), np.array([0, 2, 5])), np.array([10, 11, 12])),
        ((slice(1, 4), [5, 1]), np.array([[20], [21], [22]])),
        ((2, [0, 3]), np.int8(9)),
        ((expected % 4 == 0), 0),
    ]:
        items = selection if type(selection) is tuple else (selection,)
        array[selection] = value
        if type(selection) is tuple and any(type(i) is slice for i in items):
            outer_write(expected, items, value)
        else:
            expected[selection] = value
        np.testing.assert_array_equal(array[...], expected)


# --- zarrkit's extras keep working -----------------------------------------------------------


def test_extras_negative_steps_len_and_out() -> None:
    array, expected = make({"shape": (6, 5), "chunks": (4, 2)})
    assert len(array) == 6
    np.testing.assert_array_equal(array[::-2, [4, 0]], expected[::-2][:, [4, 0]])
    np.testing.assert_array_equal(array[[5, 0], ::-1], expected[[5, 0], ::-1])
    out = np.empty((2, 2), dtype="i4")
    assert array.get_orthogonal_selection(([1, 2], [3, 4]), out=out) is out
    np.testing.assert_array_equal(out, expected[np.ix_([1, 2], [3, 4])])
    out = np.empty(2, dtype="i4")
    assert array.get_coordinate_selection(([1, 2], [3, 4]), out=out) is out
    np.testing.assert_array_equal(out, expected[[1, 2], [3, 4]])


def test_numpy_integer_scalars_count_as_integers() -> None:
    array, expected = make({"shape": (3, 4, 5), "chunks": (2, 3, 2)})
    # zarr-python reads (np.int64, slice, list) through basic indexing and refuses it;
    # numpy integers are integers everywhere in zarrkit, and the read is orthogonal.
    np.testing.assert_array_equal(array[np.int64(1), :, [0, 4]],
                                  outer_read(expected, (1, slice(None), [0, 4])))
    assert array[np.int64(1), np.int32(2), np.uint8(3)] == expected[1, 2, 3]
    # A 0-d integer array is an integer, as in numpy (zarr-python returns shape (1,)).
    assert array[np.array(1), 2, 3] == expected[1, 2, 3]
    np.testing.assert_array_equal(array[np.array(1), [0, 2], 3], expected[1, [0, 2], 3])


def test_structured_fields_as_numpy() -> None:
    # zarr-python 3.1.6 cannot read one field through [] (it raises TypeError) and writes
    # every field when asked for one: numpy's structured indexing is the oracle.
    dtype = np.dtype([("a", "i4"), ("b", "f8")])
    expected = np.zeros((4, 3), dtype=dtype)
    expected["a"] = np.arange(12).reshape(4, 3)
    expected["b"] = expected["a"] * 1.5
    array = zk.from_array({}, data=expected, chunks=(3, 2))
    np.testing.assert_array_equal(array["a"], expected["a"])
    np.testing.assert_array_equal(array[1:3, "b"], expected[1:3]["b"])
    np.testing.assert_array_equal(array[[0, 3], [2, 1], "a"], expected[[0, 3], [2, 1]]["a"])
    np.testing.assert_array_equal(array["b", 1:, [0, 2]], expected[1:, [0, 2]]["b"])
    assert array[2, 1, "a"] == expected[2, 1]["a"]
    both = array[0, "b", "a"]
    assert both.dtype == np.dtype([("b", "f8"), ("a", "i4")])  # packed, in the order asked
    np.testing.assert_array_equal(both["b"], expected[0]["b"])
    np.testing.assert_array_equal(both["a"], expected[0]["a"])
    array[1:3, "a"] = 99
    expected[1:3]["a"] = 99
    array[[0, 3], [0, 2], "b"] = [-1.0, -2.0]
    expected["b"][[0, 3], [0, 2]] = [-1.0, -2.0]
    array[2, 1:, "b", "a"] = (6.5, 5)
    expected["b"][2, 1:], expected["a"][2, 1:] = 6.5, 5
    np.testing.assert_array_equal(array[...], expected)
    with pytest.raises(IndexingError):
        array["c"]
    with pytest.raises(IndexingError):
        array[0, "c"] = 1
    plain = zk.from_array({}, data=np.arange(4), chunks=(2,))
    with pytest.raises(IndexingError):
        plain[0, "a"]


# --- side by side with zarr-python -----------------------------------------------------------


def both_arrays(shape: tuple[int, ...], chunks: tuple[int, ...], **options: Any
                ) -> tuple[zk.Array, Any, np.ndarray[Any, Any]]:
    data = np.arange(int(np.prod(shape)), dtype="i4").reshape(shape)
    ours = zk.create_array({}, shape=shape, chunks=chunks, dtype="i4", fill_value=0, **options)
    ours[...] = data
    # zarr-python 3.1.6 fails some orthogonal writes to sharded arrays (ValueError from
    # its shard merge): its unsharded array is the oracle for ours, sharded or not.
    options.pop("shards", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.create_array(zarr.storage.MemoryStore(), shape=shape, chunks=chunks,
                                   dtype="i4", fill_value=0, **options)
        theirs[...] = data
    return ours, theirs, data


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call()
    except Exception as error:  # noqa: BLE001 - the kind of failure is what is compared
        return "error", error
    return "value", np.asarray(result)


ROWS = np.array([True, False, True, False, True])
SELECTIONS_2D: list[Any] = [
    [0, 3], np.array([4, 0, 4]), [True, False, True, False, True],
    ([0, 2], [1, 3]), (1, [1, 3]), ([1, 3], 1), (np.int64(1), [1, 3]), ([-1, -5], [-1, 0]),
    (slice(1, 3), [0, 2]), ([0, 2], slice(None)), ([0, 2],), (slice(None), [5, 1, 1]),
    (slice(1, None, 2), np.array([True, False, True, False, True, True, False])),
    (ROWS, [0, 1]), (ROWS, np.array([True, False, True, False, True, False, True])),
    (np.array([[0, 1], [2, 3]]), np.array([[0, 1], [2, 3]])), (np.array([[0], [4]]), [1, 3]),
    (np.array([[0, 1], [2, 3]]), 1), (np.array(1), [1, 2]),
    ([True, False, True, False, True], slice(None)), (np.int64(1), slice(2, 4)),
    # refused by both (zarr-python raises ValueError for arrays that do not broadcast)
    [5], ([0, 5], [0, 1]), ([0, 1, 2], [0, 1]), np.ones((4, 6), dtype=bool), ROWS[:4],
    ([0.5, 1.0], 0), (np.array([[0, 1]]), slice(None)), ([[0, 1]], [0, 1]),
    (True, [0, 1]), ([1, 2], None), (None, [1]), (slice(None), slice(None), [0]),
    (np.array(True), 0), ([0, 1], [0, 1], [0, 1]), (range(2), slice(None)),
    ((0, 1), slice(None)),
]
SELECTIONS_3D: list[Any] = [
    (1, [0, 2], slice(None)), ([0, 2], slice(None), 1), (1, slice(None), [0, 2]),
    ([0, 2], [0, 2], [1, 3]), (0, 1, [1, 3]), ([2, 0], 3, [4, 0]), (slice(1, 3), 2, [1, 1]),
    (np.array([True, False, True]), np.array([True, True, False, False]),
     np.array([True, False, False, False, True])),
    (np.array([True, False, True]), [0, 3], [1, 4]), [2, 0],
    # refused by both: two index arrays split by a slice, or fewer arrays than axes
    (slice(None), [0, 2], [1, 3]), ([0, 1], slice(None), [1, 3]), ([0, 1], [0, 2]),
]


@pytest.mark.parametrize("options", [
    {"zarr_format": 3}, {"zarr_format": 2}, {"zarr_format": 3, "shards": (4, 6)},
], ids=["v3", "v2", "sharded"])
@pytest.mark.parametrize("selection", SELECTIONS_2D, ids=repr)
def test_reads_and_writes_as_zarr_python_2d(selection: Any, options: dict[str, Any]) -> None:
    check_side_by_side((5, 7), (2, 3), selection, options)


@pytest.mark.parametrize("selection", SELECTIONS_3D, ids=repr)
def test_reads_and_writes_as_zarr_python_3d(selection: Any) -> None:
    check_side_by_side((3, 4, 5), (2, 3, 2), selection, {})


def check_side_by_side(shape: tuple[int, ...], chunks: tuple[int, ...], selection: Any,
                       options: dict[str, Any]) -> None:
    if "shards" in options:
        chunks = (1, 3)
    ours, theirs, _ = both_arrays(shape, chunks, **dict(options))
    kind, ours_value = outcome(lambda: ours[selection])
    their_kind, their_value = outcome(lambda: theirs[selection])
    if isinstance(selection, tuple) and any(
            isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype != bool for i in selection):
        # zarr-python reads a 0-d index array as a 1-element one; zarrkit as numpy does.
        their_value = their_value.reshape(ours_value.shape)
    assert kind == their_kind, (ours_value, their_value)
    if kind == "error":
        assert isinstance(ours_value, ZarrkitError) and isinstance(ours_value, IndexError)
        if isinstance(their_value, IndexError):
            assert isinstance(ours_value, IndexError)
        assert outcome(lambda: ours.__setitem__(selection, 1))[0] == "error"
        return
    np.testing.assert_array_equal(ours_value, their_value)
    assert ours_value.shape == their_value.shape
    value: Any = -np.arange(ours_value.size, dtype="i4").reshape(ours_value.shape)
    # The data are their own flat positions: repeated values are repeated points, and
    # only a scalar then leaves no doubt which write lands.
    if np.unique(their_value).size != their_value.size:
        value = np.int32(-3)
    ours[selection] = value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs[selection] = value
        their_whole = theirs[...]
    np.testing.assert_array_equal(ours[...], their_whole)


# Refused by zarr-python, read by zarrkit as numpy reads them (each has one reading).
EXTENSIONS_2D: list[Any] = [
    ROWS, (Ellipsis, [1, 3]), ([3, 1], Ellipsis), (0, Ellipsis, [6, 0]), [], (slice(None), []),
    ([], []), (slice(None, None, -2), [0, 2]), ([4, 0], slice(5, None, -3)),
    (np.array(2), slice(None)), (np.int64(1), [2, 0], Ellipsis),
]


@pytest.mark.parametrize("selection", EXTENSIONS_2D, ids=repr)
def test_extensions_read_and_write_as_numpy(selection: Any) -> None:
    ours, theirs, expected = both_arrays((5, 7), (2, 3))
    assert outcome(lambda: theirs[selection])[0] == "error"
    np.testing.assert_array_equal(ours[selection], expected[selection])
    value = -np.arange(expected[selection].size, dtype="i4").reshape(expected[selection].shape)
    ours[selection] = value
    expected[selection] = value
    np.testing.assert_array_equal(ours[...], expected)


def test_structured_fields_as_zarr_python() -> None:
    # zarr-python 3.1.6 reads fields through [] only when all of them are asked for, in
    # order (a subset fails to cast): that read, and the refusals.
    dtype = np.dtype([("a", "i4"), ("b", "f8"), ("c", "u1")])
    data = np.zeros(5, dtype=dtype)
    data["a"], data["b"], data["c"] = np.arange(5), np.arange(5) / 2, np.arange(5) * 3
    ours = zk.from_array({}, data=data, chunks=(2,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.create_array(zarr.storage.MemoryStore(), shape=(5,), chunks=(2,),
                                   dtype=dtype)
        theirs[...] = data
        for selection in [("a", "b", "c"), (slice(1, 4), "a", "b", "c")]:
            expected = theirs[selection]
            result = ours[selection]
            assert result.dtype == expected.dtype
            np.testing.assert_array_equal(result, expected)
        for selection in [("d",), (slice(0, 2), "d")]:
            with pytest.raises(IndexError):
                theirs[selection]
            with pytest.raises(IndexingError):
                ours[selection]
