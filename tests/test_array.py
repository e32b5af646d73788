"""Behaviour tests of zarrkit.Array, with numpy as the oracle.

Every read is compared with the same selection applied to a numpy array holding the same
data, and every write with the same assignment applied to a numpy copy.
"""

from __future__ import annotations

import json
import math
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.storage import DirectoryStore, MemoryStore

# These suites pin format 2; the v3 behaviour has its own tests.
pytestmark = pytest.mark.usefixtures("default_format_2")

DTYPES = ["i1", "u1", "<i2", ">i4", "<u8", "<f4", ">f8", "|b1", "<c8", ">c16", "|S5", "<M8[s]"]

PROPERTY_SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --- helpers ------------------------------------------------------------------------------


def assert_same(actual: Any, expected: Any) -> None:
    """Equal shape, dtype and values; NaN equals NaN (per component for complex)."""
    actual_array = np.asarray(actual)
    expected_array = np.asarray(expected)
    assert actual_array.shape == expected_array.shape, (actual_array.shape, expected_array.shape)
    kind = expected_array.dtype.kind
    if isinstance(actual, np.generic) or isinstance(expected, np.generic):
        # numpy scalars are in native byte order, and a bytes scalar is as long as its value
        assert actual_array.dtype.kind == kind, (actual_array.dtype, expected_array.dtype)
        if kind not in "SUV":
            assert actual_array.dtype.itemsize == expected_array.dtype.itemsize
    else:
        assert actual_array.dtype == expected_array.dtype, (actual_array.dtype,
                                                            expected_array.dtype)
    if kind == "c":
        np.testing.assert_array_equal(actual_array.real, expected_array.real)
        np.testing.assert_array_equal(actual_array.imag, expected_array.imag)
    elif kind in "mM":
        np.testing.assert_array_equal(actual_array.astype("i8"), expected_array.astype("i8"))
    else:
        np.testing.assert_array_equal(actual_array, expected_array)


def read_fill(dtype: np.dtype[Any], fill: Any) -> Any:
    """What a missing chunk reads as: the fill value, or for a null fill the type's default
    (zero, NaT for times) as zarr-python reads it."""
    if fill is not None:
        return fill
    return np.array("NaT", dtype=dtype)[()] if dtype.kind in "mM" else np.zeros((), dtype)[()]


def chunk_keys(store: MemoryStore, prefix: str = "") -> list[str]:
    """Stored keys under ``prefix`` that are not metadata documents."""
    return sorted(
        k[len(prefix):] for k in store.list()
        if k.startswith(prefix) and not k.rsplit("/", 1)[-1].startswith(".z")
    )


@dataclass
class Case:
    store: MemoryStore
    array: zk.Array
    expected: np.ndarray[Any, Any]
    elements: st.SearchStrategy[Any]

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.expected.dtype


@st.composite
def cases(draw: st.DrawFn, *, min_dims: int = 0, min_side: int = 0,
          allow_unwritten: bool = False) -> Case:
    """A random array in a MemoryStore, written with random data (or left unwritten)."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=min_side, max_side=7))
    chunks = tuple(draw(st.integers(1, max(side, 1) + 1)) for side in shape)
    order = draw(st.sampled_from(["C", "F"]))
    elements = hnp.from_dtype(dtype)
    fill = draw(st.none() | elements)
    if fill is not None:
        fill = np.array(fill, dtype=dtype)[()]
    compressors = draw(st.sampled_from(["auto", None]))
    store = MemoryStore()
    array = zk.create_array(store, shape=shape, chunks=chunks, dtype=dtype, fill_value=fill,
                            order=order, compressors=compressors)
    if allow_unwritten and draw(st.booleans()):
        expected = np.full(shape, read_fill(dtype, fill), dtype=dtype)
    else:
        # Mostly the fill value, so some chunks are empty and never stored.
        sparse = draw(st.booleans())
        background = st.just(read_fill(dtype, fill)) if sparse else None
        expected = draw(hnp.arrays(dtype, shape, elements=elements, fill=background))
        array[...] = expected
    return Case(store, array, expected, elements)


def reopen(case: Case) -> zk.Array:
    """A fresh read-only handle on the case's array (metadata read back from JSON)."""
    return zk.open_array(case.store, mode="r")


@st.composite
def write_values(draw: st.DrawFn, case: Case, target_shape: tuple[int, ...],
                 scalar_only: bool = False) -> Any:
    """A scalar of the array's dtype, or an array broadcastable to ``target_shape``."""
    if scalar_only or draw(st.booleans()):
        return np.array(draw(case.elements), dtype=case.dtype)[()]
    ndim = draw(st.integers(0, len(target_shape)))
    tail = target_shape[len(target_shape) - ndim:]
    shape = tuple(1 if draw(st.booleans()) else side for side in tail)
    return draw(hnp.arrays(case.dtype, shape, elements=case.elements))


@st.composite
def orthogonal_selections(draw: st.DrawFn, shape: tuple[int, ...], *, unique: bool = False
                          ) -> tuple[tuple[Any, ...], list[np.ndarray[Any, Any]], list[bool]]:
    """A per-axis selection, the index array numpy sees per axis, and which axes remain."""
    selection: list[Any] = []
    index_arrays: list[np.ndarray[Any, Any]] = []
    keeps: list[bool] = []
    for n in shape:
        kinds = ["slice", "mask", "array", "list"] + (["int"] if n > 0 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "int":
            i = draw(st.integers(-n, n - 1))
            selection.append(i)
            index_arrays.append(np.array([i % n], dtype=np.intp))
            keeps.append(False)
            continue
        keeps.append(True)
        if kind == "slice":
            s = draw(st.slices(n))
            selection.append(s)
            index_arrays.append(np.arange(n, dtype=np.intp)[s])
        elif kind == "mask":
            mask = draw(hnp.arrays(np.bool_, (n,)))
            selection.append(mask)
            index_arrays.append(np.nonzero(mask)[0].astype(np.intp))
        else:
            if n == 0:
                indices: list[int] = []
            else:
                indices = draw(st.lists(
                    st.integers(-n, n - 1), max_size=2 * n + 1,
                    unique_by=(lambda i, n=n: i % n) if unique else None,
                ))
            selection.append(indices if kind == "list" else np.array(indices, dtype=np.intp))
            index_arrays.append(np.array([i % n for i in indices], dtype=np.intp))
    return tuple(selection), index_arrays, keeps


def kept_shape(index_arrays: list[np.ndarray[Any, Any]], keeps: list[bool]) -> tuple[int, ...]:
    return tuple(len(ix) for ix, keep in zip(index_arrays, keeps, strict=True) if keep)


@st.composite
def coordinate_selections(draw: st.DrawFn, shape: tuple[int, ...]
                          ) -> tuple[tuple[np.ndarray[Any, Any], ...], tuple[int, ...]]:
    """One integer array per axis (negative, unsorted, repeated), broadcasting together."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=len(shape), min_dims=0,
                                                    max_dims=2, max_side=5))
    arrays = tuple(
        draw(hnp.arrays(np.intp, s, elements=st.integers(-n, n - 1)))
        for s, n in zip(shapes.input_shapes, shape, strict=True)
    )
    return arrays, shapes.result_shape


@st.composite
def block_selections(draw: st.DrawFn, shape: tuple[int, ...], chunks: tuple[int, ...]
                     ) -> tuple[tuple[Any, ...], tuple[slice, ...]]:
    """A block selection and the element slices it means (an int block keeps the dim)."""
    selection: list[Any] = []
    regions: list[slice] = []
    for n, c in zip(shape, chunks, strict=True):
        nblocks = math.ceil(n / c)
        if nblocks > 0 and draw(st.booleans()):
            b = draw(st.integers(-nblocks, nblocks - 1))
            selection.append(b)
            first = b % nblocks
            regions.append(slice(first * c, min((first + 1) * c, n)))
        else:
            bound = st.none() | st.integers(-nblocks - 2, nblocks + 2)
            s = slice(draw(bound), draw(bound))
            selection.append(s)
            blocks = range(nblocks)[s]
            if len(blocks) == 0:
                regions.append(slice(0, 0))
            else:
                regions.append(slice(blocks.start * c, min(blocks.stop * c, n)))
    return tuple(selection), tuple(regions)


# --- reading: properties ------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(case=cases(allow_unwritten=True), data=st.data())
def test_basic_selection_matches_numpy(case: Case, data: st.DataObject) -> None:
    assert_same(case.array[...], case.expected)
    fresh = reopen(case)
    assert_same(fresh[...], case.expected)
    for _ in range(4):
        selection = data.draw(hnp.basic_indices(case.expected.shape, allow_newaxis=False,
                                                allow_ellipsis=True), label="selection")
        assert_same(case.array[selection], case.expected[selection])
        assert_same(fresh[selection], case.expected[selection])


@PROPERTY_SETTINGS
@given(case=cases(min_dims=1), data=st.data())
def test_oindex_matches_numpy(case: Case, data: st.DataObject) -> None:
    for _ in range(4):
        selection, index_arrays, keeps = data.draw(
            orthogonal_selections(case.expected.shape), label="selection")
        expected = case.expected[np.ix_(*index_arrays)].reshape(kept_shape(index_arrays, keeps))
        assert_same(case.array.oindex[selection], expected)
        assert_same(case.array.get_orthogonal_selection(selection), expected)


@PROPERTY_SETTINGS
@given(case=cases(min_dims=1, min_side=1), data=st.data())
def test_vindex_coordinates_match_numpy(case: Case, data: st.DataObject) -> None:
    for _ in range(4):
        arrays, _ = data.draw(coordinate_selections(case.expected.shape), label="coordinates")
        assert_same(case.array.vindex[arrays], case.expected[arrays])
    flat = tuple(np.array(a, dtype=np.intp).reshape(-1) for a in np.broadcast_arrays(*arrays))
    assert_same(case.array.get_coordinate_selection(flat), case.expected[flat])


@PROPERTY_SETTINGS
@given(case=cases(), data=st.data())
def test_vindex_mask_matches_numpy(case: Case, data: st.DataObject) -> None:
    mask = data.draw(hnp.arrays(np.bool_, case.expected.shape), label="mask")
    assert_same(case.array.vindex[mask], case.expected[mask])
    assert_same(case.array.get_mask_selection(mask), case.expected[mask])


@PROPERTY_SETTINGS
@given(case=cases(min_dims=1), data=st.data())
def test_blocks_match_numpy(case: Case, data: st.DataObject) -> None:
    for _ in range(4):
        selection, regions = data.draw(
            block_selections(case.expected.shape, case.array.chunks), label="blocks")
        assert_same(case.array.blocks[selection], case.expected[regions])
        assert_same(case.array.get_block_selection(selection), case.expected[regions])


# --- writing: properties ------------------------------------------------------------------


def check_written(case: Case, expected: np.ndarray[Any, Any]) -> None:
    assert_same(case.array[...], expected)
    assert_same(reopen(case)[...], expected)


@PROPERTY_SETTINGS
@given(case=cases(allow_unwritten=True), data=st.data())
def test_basic_setitem_matches_numpy(case: Case, data: st.DataObject) -> None:
    expected = case.expected.copy()
    for _ in range(2):
        selection = data.draw(hnp.basic_indices(expected.shape, allow_newaxis=False,
                                                allow_ellipsis=True), label="selection")
        value = data.draw(write_values(case, expected[selection].shape), label="value")
        expected[selection] = value
        case.array[selection] = value
        check_written(case, expected)


@PROPERTY_SETTINGS
@given(case=cases(min_dims=1, allow_unwritten=True), data=st.data())
def test_oindex_setitem_matches_numpy(case: Case, data: st.DataObject) -> None:
    expected = case.expected.copy()
    scalar = data.draw(st.booleans(), label="scalar")
    # With an array value, repeated indices would make the result order-dependent.
    selection, index_arrays, keeps = data.draw(
        orthogonal_selections(expected.shape, unique=not scalar), label="selection")
    target = kept_shape(index_arrays, keeps)
    value = data.draw(write_values(case, target, scalar_only=scalar), label="value")
    mesh = np.ix_(*index_arrays)
    if scalar:
        expected[mesh] = value
    else:
        expected[mesh] = np.broadcast_to(value, target).reshape(expected[mesh].shape)
    case.array.oindex[selection] = value
    check_written(case, expected)


@PROPERTY_SETTINGS
@given(case=cases(min_dims=1, min_side=1, allow_unwritten=True), data=st.data())
def test_vindex_setitem_matches_numpy(case: Case, data: st.DataObject) -> None:
    expected = case.expected.copy()
    arrays, result_shape = data.draw(coordinate_selections(expected.shape), label="coordinates")
    points = np.ravel_multi_index(
        tuple(b % n for b, n in zip(np.broadcast_arrays(*arrays), expected.shape, strict=True)),
        expected.shape,
    )
    unique = np.unique(points).size == points.size
    value = data.draw(write_values(case, result_shape, scalar_only=not unique), label="value")
    expected[arrays] = value
    case.array.vindex[arrays] = value
    check_written(case, expected)


@PROPERTY_SETTINGS
@given(case=cases(allow_unwritten=True), data=st.data())
def test_mask_setitem_matches_numpy(case: Case, data: st.DataObject) -> None:
    expected = case.expected.copy()
    mask = data.draw(hnp.arrays(np.bool_, expected.shape), label="mask")
    value = data.draw(write_values(case, expected[mask].shape), label="value")
    expected[mask] = value
    case.array.vindex[mask] = value
    check_written(case, expected)


@PROPERTY_SETTINGS
@given(case=cases(min_dims=1, allow_unwritten=True), data=st.data())
def test_blocks_setitem_matches_numpy(case: Case, data: st.DataObject) -> None:
    expected = case.expected.copy()
    selection, regions = data.draw(
        block_selections(expected.shape, case.array.chunks), label="blocks")
    value = data.draw(write_values(case, expected[regions].shape), label="value")
    expected[regions] = value
    case.array.blocks[selection] = value
    check_written(case, expected)


# --- layout and fill values ---------------------------------------------------------------


@pytest.mark.parametrize("order", ["C", "F"])
def test_order_of_stored_chunk_bytes(order: str) -> None:
    store = MemoryStore()
    data = np.arange(24, dtype="<i4").reshape(4, 6)
    a = zk.create_array(store, shape=(4, 6), chunks=(4, 6), dtype="<i4", order=order,
                        compressors=None)
    a[...] = data
    assert store.get("0.0") == data.tobytes(order=order)
    assert json.loads(store.get(".zarray"))["order"] == order
    assert a.order == order
    assert_same(zk.open_array(store, mode="r")[1:3, ::-2], data[1:3, ::-2])


def test_f_order_edge_chunks_round_trip() -> None:
    data = np.arange(7 * 5, dtype="f8").reshape(7, 5)
    a = zk.create_array({}, shape=(7, 5), chunks=(3, 2), dtype="f8", order="F")
    a[...] = data
    assert_same(a[...], data)
    assert_same(a[2:6, 1:4], data[2:6, 1:4])


def test_missing_chunks_read_as_fill_value() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(5, 5), chunks=(2, 2), dtype="i2", fill_value=-7)
    assert_same(a[...], np.full((5, 5), -7, dtype="i2"))
    a[0, 0] = 1
    assert chunk_keys(store) == ["0.0"]
    expected = np.full((5, 5), -7, dtype="i2")
    expected[0, 0] = 1
    assert_same(a[...], expected)
    assert_same(zk.open_array(store, mode="r")[...], expected)


def test_nan_fill_value() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(4,), chunks=(2,), dtype="f4", fill_value=float("nan"))
    assert math.isnan(a.fill_value)
    assert json.loads(store.get(".zarray"))["fill_value"] == "NaN"
    a[3] = 2.5
    assert_same(a[...], np.array([np.nan, np.nan, np.nan, 2.5], dtype="f4"))
    fresh = zk.open_array(store, mode="r")
    assert math.isnan(fresh.fill_value)
    assert_same(fresh[...], np.array([np.nan, np.nan, np.nan, 2.5], dtype="f4"))


@pytest.mark.parametrize("dtype", ["u1", "f8", "c8", "|b1", "|S3", "<M8[s]"])
def test_none_fill_reads_missing_chunks_as_the_default(dtype: str, tmp_path: Path) -> None:
    store = zk.DirectoryStore(tmp_path)
    a = zk.create_array(store, shape=(3, 3), chunks=(2, 2), dtype=dtype, fill_value=None)
    assert a.fill_value is None
    assert json.loads(store.get(".zarray"))["fill_value"] is None
    expected = np.full((3, 3), read_fill(np.dtype(dtype), None), dtype=dtype)
    assert_same(a[...], expected)
    assert_same(zk.open_array(store, mode="r")[1:, :], expected[1:, :])
    # zarr-python reads the same (zeros; NaT for times).
    zarr = pytest.importorskip("zarr")
    peer = zarr.open_array(store=str(tmp_path), mode="r")
    assert_same(np.asarray(peer[...]), expected)


def test_edge_chunk_is_stored_full_size() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(5,), chunks=(2,), dtype="<i4", fill_value=0,
                        compressors=None)
    a[4] = 9
    assert chunk_keys(store) == ["2"]
    assert len(store.get("2")) == 2 * 4
    assert np.frombuffer(store.get("2"), "<i4")[0] == 9
    assert_same(a[...], np.array([0, 0, 0, 0, 9], dtype="<i4"))
    a[...] = np.arange(5)
    assert_same(a[3:], np.array([3, 4], dtype="<i4"))


def test_zero_dimensional_array() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(), dtype="i4", fill_value=3)
    assert a.shape == () and a.ndim == 0 and a.size == 1 and a.chunks == ()
    assert a.nchunks == 1
    assert a[()] == 3
    assert_same(a[...], np.array(3, dtype="i4"))
    a[...] = 5
    assert a[()] == 5
    assert chunk_keys(store) == ["0"]
    a[()] = 6
    assert a[()] == 6
    assert_same(np.asarray(a), np.array(6, dtype="i4"))
    assert_same(zk.open_array(store, mode="r")[()], np.int32(6))
    with pytest.raises(TypeError):
        len(a)
    with pytest.raises(TypeError):
        list(a)
    with pytest.raises(TypeError):  # as numpy: iter() itself refuses a 0-d array
        iter(a)


# --- array protocol, len, iter --------------------------------------------------------------


def test_array_protocol_len_and_iter() -> None:
    data = np.arange(7 * 3, dtype="u2").reshape(7, 3)
    a = zk.create_array({}, shape=(7, 3), chunks=(3, 2), dtype="u2")
    a[...] = data
    assert_same(np.asarray(a), data)
    assert_same(np.asarray(a, dtype="f8"), data.astype("f8"))
    assert len(a) == 7
    rows = list(a)
    assert len(rows) == 7
    for row, expected in zip(rows, data, strict=True):
        assert_same(row, expected)


def test_iter_one_dimensional_yields_scalars() -> None:
    data = np.array([3.5, -1.0, 2.0, 8.0, 0.0])
    a = zk.create_array({}, shape=(5,), chunks=(2,), dtype="f8")
    a[...] = data
    items = list(a)
    assert items == list(data)
    assert all(np.ndim(item) == 0 for item in items)
    assert len(zk.create_array({}, shape=(0, 4), chunks=(2, 2), dtype="f8")) == 0
    assert list(zk.create_array({}, shape=(0,), chunks=(2,), dtype="f8")) == []


# --- properties ---------------------------------------------------------------------------


def test_properties() -> None:
    store = MemoryStore()
    a = zk.create_array(
        store, name="grp/arr", shape=(10, 7), chunks=(4, 3), dtype="<f4", fill_value=1.5,
        order="F", attributes={"units": "m"}, filters=[{"id": "delta", "dtype": "<f4"}],
    )
    assert a.shape == (10, 7)
    assert a.dtype == np.dtype("<f4")
    assert a.chunks == (4, 3)
    assert a.ndim == 2
    assert a.size == 70
    assert a.nbytes == 70 * 4
    assert a.fill_value == 1.5
    assert a.order == "F"
    assert [c.codec_id for c in a.compressors] == ["zstd"]
    assert [f.codec_id for f in a.filters] == ["delta"]
    assert dict(a.attrs) == {"units": "m"}
    assert a.path == "grp/arr"
    assert a.name == "/grp/arr"
    assert a.basename == "arr"
    assert a.zarr_format == 2
    assert a.cdata_shape == (3, 3)
    assert a.nchunks == 9
    assert a.nchunks_initialized == 0
    assert a.read_only is False
    stored_before = a.nbytes_stored
    metadata_size = len(store.get("grp/arr/.zarray")) + len(store.get("grp/arr/.zattrs"))
    assert stored_before == metadata_size
    a[:5, :] = np.arange(35, dtype="f4").reshape(5, 7)
    assert a.nchunks_initialized == 6
    chunk_bytes = sum(len(store.get("grp/arr/" + k)) for k in chunk_keys(store, "grp/arr/"))
    assert chunk_bytes > 0
    assert a.nbytes_stored == metadata_size + chunk_bytes
    fresh = zk.open_array(store, path="grp/arr", mode="r")
    assert fresh.read_only is True
    assert (fresh.shape, fresh.chunks, fresh.dtype, fresh.order) == (a.shape, a.chunks,
                                                                      a.dtype, a.order)
    assert fresh.fill_value == 1.5
    assert dict(fresh.attrs) == {"units": "m"}


def test_properties_without_codecs() -> None:
    a = zk.create_array({}, shape=(3,), dtype="u1", compressors=None)
    assert a.compressors == ()
    assert a.compressor is None
    assert a.filters == ()
    assert a.name == "/"
    assert a.path == ""


def test_nchunks_initialized_counts_only_chunks_of_this_array() -> None:
    store = MemoryStore()
    root = zk.group(store)
    a = root.create_array("a", shape=(4,), chunks=(1,), dtype="u1")
    b = root.create_array("a2", shape=(4,), chunks=(1,), dtype="u1")
    b[...] = 1
    a[1] = 1
    assert a.nchunks_initialized == 1
    assert b.nchunks_initialized == 4


_INFO_CASES = [
    {"zarr_format": 2, "dtype": "i8", "fill_value": -1},
    {"zarr_format": 2, "dtype": "f4", "order": "F", "compressors": None},
    {"zarr_format": 3, "dtype": "i8", "fill_value": -1},
    {"zarr_format": 3, "dtype": "u1", "shards": (6, 4)},
    {"zarr_format": 3, "dtype": "f8", "compressors": None},
    {"zarr_format": 3, "dtype": "c8", "fill_value": 0},
    {"zarr_format": 3, "dtype": "M8[s]", "fill_value": 0},
    {"zarr_format": 3, "dtype": "?"},
]


@pytest.mark.parametrize("case", _INFO_CASES, ids=lambda case: "-".join(map(str, case.values())))
def test_info_and_info_complete_print_as_zarr_python(case: dict[str, Any]) -> None:
    zarr = pytest.importorskip("zarr")
    kw = {"shape": (6, 4), "chunks": (3, 2), **case}
    theirs = zarr.create_array(zarr.storage.MemoryStore(), name="x/y", **kw)
    ours = zk.create_array(MemoryStore(), name="x/y", **kw)
    theirs[:3, :2] = 1
    ours[:3, :2] = 1
    assert str(ours.info) == repr(ours.info) == str(theirs.info)
    # zarrkit lays its metadata documents out differently (same JSON): the stored byte
    # count is checked against the store, the other rows against zarr-python.
    keys = list(ours.store.list_prefix("x/y/"))
    stored = sum(len(v or b"") for v in ours.store.get_many(keys))
    ours_rows, theirs_rows = (_rows(str(a.info_complete())) for a in (ours, theirs))
    assert ours_rows.pop("No. bytes stored").split()[0] == str(stored)
    theirs_rows.pop("No. bytes stored")
    assert float(ours_rows.pop("Storage ratio")) == pytest.approx(ours.nbytes / stored, abs=0.05)
    theirs_rows.pop("Storage ratio")
    assert ours_rows == theirs_rows


def _rows(text: str) -> dict[str, str]:
    rows = {}
    for line in text.splitlines():
        label, sep, value = line.partition(" : ")
        assert sep, line
        rows[label.strip()] = value
    return rows


# --- write_empty_chunks -------------------------------------------------------------------


def test_write_empty_chunks_default_false() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(6,), chunks=(2,), dtype="i4", fill_value=7)
    assert a.write_empty_chunks is False
    a[...] = 7
    assert chunk_keys(store) == []
    a[...] = np.array([7, 1, 7, 7, 7, 2])
    assert chunk_keys(store) == ["0", "2"]
    a[1] = 7  # the chunk now holds only the fill value: it is deleted
    assert chunk_keys(store) == ["2"]
    a[4:6] = 7
    assert chunk_keys(store) == []
    assert_same(a[...], np.full(6, 7, dtype="i4"))


def test_write_empty_chunks_true_stores_fill_chunks() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(6,), chunks=(2,), dtype="i4", fill_value=7,
                        write_empty_chunks=True)
    assert a.write_empty_chunks is True
    a[...] = 7
    assert chunk_keys(store) == ["0", "1", "2"]
    assert_same(a[...], np.full(6, 7, dtype="i4"))


def test_write_empty_chunks_from_config() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(4,), chunks=(2,), dtype="i4")
    with zk.config.set(write_empty_chunks=True):
        a[:2] = 0
    assert chunk_keys(store) == ["0"]
    a[2:] = 0
    assert chunk_keys(store) == ["0"]


def test_write_empty_chunks_with_nan_fill() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(4, 4), chunks=(2, 2), dtype="f8", fill_value=np.nan)
    a[...] = np.nan
    assert chunk_keys(store) == []
    a[0, 0] = 1.0
    a[3, 3] = np.nan
    assert chunk_keys(store) == ["0.0"]
    a[0, 0] = np.nan
    assert chunk_keys(store) == []
    a[2:, :2] = np.array([[np.nan, 0.0], [np.nan, np.nan]])
    assert chunk_keys(store) == ["1.0"]

    kept = MemoryStore()
    b = zk.create_array(kept, shape=(4,), chunks=(2,), dtype="f8", fill_value=np.nan,
                        write_empty_chunks=True)
    b[...] = np.nan
    assert chunk_keys(kept) == ["0", "1"]
    assert np.isnan(b[...]).all()


def test_complex_nan_fill_does_not_swallow_other_values() -> None:
    store = MemoryStore()
    fill = complex(1.0, float("nan"))
    a = zk.create_array(store, shape=(2,), chunks=(2,), dtype="c16", fill_value=fill)
    a[...] = np.array([complex(5.0, float("nan"))] * 2)
    assert chunk_keys(store) == ["0"]
    assert_same(a[...], np.array([complex(5.0, float("nan"))] * 2))


# --- resize and append --------------------------------------------------------------------


def test_resize_grow_shows_fill_in_new_region() -> None:
    store = MemoryStore()
    data = np.arange(25, dtype="i4").reshape(5, 5)
    a = zk.create_array(store, shape=(5, 5), chunks=(2, 2), dtype="i4", fill_value=-1)
    a[...] = data
    a.resize(7, 8)
    assert a.shape == (7, 8)
    expected = np.full((7, 8), -1, dtype="i4")
    expected[:5, :5] = data
    assert_same(a[...], expected)
    fresh = zk.open_array(store, mode="r")
    assert fresh.shape == (7, 8)
    assert_same(fresh[...], expected)


def test_resize_shrink_deletes_outside_chunks_and_regrow_shows_fill() -> None:
    store = MemoryStore()
    data = np.arange(1, 26, dtype="i4").reshape(5, 5)
    a = zk.create_array(store, shape=(5, 5), chunks=(2, 2), dtype="i4", fill_value=0)
    a[...] = data
    assert len(chunk_keys(store)) == 9
    a.resize((3, 3))
    assert a.shape == (3, 3)
    assert chunk_keys(store) == ["0.0", "0.1", "1.0", "1.1"]
    assert_same(a[...], data[:3, :3])
    a.resize(5, 5)
    expected = np.zeros((5, 5), dtype="i4")
    expected[:3, :3] = data[:3, :3]
    assert_same(a[...], expected)
    assert_same(zk.open_array(store, mode="r")[...], expected)


def test_resize_to_zero_deletes_every_chunk() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(4,), chunks=(2,), dtype="u1", fill_value=0)
    a[...] = [1, 2, 3, 4]
    a.resize(0)
    assert chunk_keys(store) == []
    a.resize(4)
    assert_same(a[...], np.zeros(4, dtype="u1"))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_append_matches_concatenate(axis: int) -> None:
    store = MemoryStore()
    data = np.arange(15, dtype="f8").reshape(3, 5)
    a = zk.create_array(store, shape=(3, 5), chunks=(2, 2), dtype="f8")
    a[...] = data
    extra = np.arange(100, 100 + 3 * 5 * 2, dtype="f8").reshape(
        (6, 5) if axis == 0 else (3, 10))
    expected = np.concatenate([data, extra], axis=axis)
    new_shape = a.append(extra, axis=axis)
    assert new_shape == expected.shape
    assert a.shape == expected.shape
    assert_same(a[...], expected)
    more = np.full((1, expected.shape[1]) if axis == 0 else (expected.shape[0], 1), -5.0)
    expected = np.concatenate([expected, more], axis=axis)
    a.append(more, axis=axis)
    assert_same(zk.open_array(store, mode="r")[...], expected)


def test_append_rejects_mismatched_shape() -> None:
    a = zk.create_array({}, shape=(3, 5), chunks=(2, 2), dtype="f8")
    with pytest.raises(ValueError):
        a.append(np.zeros((2, 4)), axis=0)
    assert a.shape == (3, 5)


# --- threads ------------------------------------------------------------------------------


def test_threads_writing_elements_of_one_chunk() -> None:
    for _ in range(10):
        store = MemoryStore()
        a = zk.create_array(store, shape=(8, 8), chunks=(8, 8), dtype="u1", fill_value=0)
        barrier = threading.Barrier(64)

        def write(i: int, a: zk.Array = a, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            a[divmod(i, 8)] = i + 1

        with ThreadPoolExecutor(max_workers=64) as pool:
            list(pool.map(write, range(64)))
        assert_same(a[...], np.arange(1, 65, dtype="u1").reshape(8, 8))
        assert chunk_keys(store) == ["0.0"]


def test_threads_writing_distinct_chunks_while_reading() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(16, 8), chunks=(2, 8), dtype="i4", fill_value=0)
    rounds = 20
    writers = a.nchunks
    barrier = threading.Barrier(writers + 4)
    errors: list[str] = []

    def writer(block: int) -> None:
        barrier.wait()
        for r in range(1, rounds + 1):
            a.blocks[block] = block * 1000 + r

    def reader() -> None:
        barrier.wait()
        for _ in range(rounds):
            snapshot = a[...]
            for block in range(writers):
                values = np.unique(snapshot[2 * block:2 * block + 2])
                # a chunk is written whole: never a mix of two rounds
                if values.size != 1:
                    errors.append(f"block {block} torn: {values}")
                value = int(values[0])
                if value != 0 and not block * 1000 < value <= block * 1000 + rounds:
                    errors.append(f"block {block} holds foreign value {value}")

    threads = [threading.Thread(target=writer, args=(b,)) for b in range(writers)]
    threads += [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    expected = np.repeat(np.arange(writers) * 1000 + rounds, 16).reshape(16, 8).astype("i4")
    assert_same(a[...], expected)


# --- directory store ----------------------------------------------------------------------


def test_directory_store_nested_round_trip(tmp_path: Any) -> None:
    root = tmp_path / "data.zarr"
    store = DirectoryStore(root)
    data = np.arange(5 * 6, dtype="<u2").reshape(5, 6)
    a = zk.create_array(store, name="g/x", shape=(5, 6), chunks=(2, 4), dtype="<u2",
                        dimension_separator="/")
    a[...] = data
    assert (root / ".zgroup").is_file()
    assert (root / "g" / ".zgroup").is_file()
    assert (root / "g" / "x" / ".zarray").is_file()
    for i in range(3):
        for j in range(2):
            assert (root / "g" / "x" / str(i) / str(j)).is_file(), (i, j)
    assert not (root / "g" / "x" / "0.0").exists()
    document = json.loads((root / "g" / "x" / ".zarray").read_text())
    assert document["dimension_separator"] == "/"
    fresh = zk.open_array(str(root), path="g/x", mode="r")
    assert fresh.metadata.dimension_separator == "/"
    assert_same(fresh[...], data)
    assert fresh.nchunks_initialized == 6
    assert_same(fresh.oindex[[4, 0], [5, 1]], data[np.ix_([4, 0], [5, 1])])


# --- object arrays ------------------------------------------------------------------------


def test_vlen_utf8_round_trip() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(5,), chunks=(2,), dtype=str)
    # numpy's variable-width strings from numpy 2, as zarr-python 3.1 (objects before).
    assert a.dtype == (np.dtypes.StringDType() if hasattr(np.dtypes, "StringDType")
                       else np.dtype(object))
    assert a.fill_value == ""
    assert [f["id"] for f in json.loads(store.get(".zarray"))["filters"]] == ["vlen-utf8"]
    a[1:3] = ["héllo", "wörld ☃"]
    assert chunk_keys(store) == ["0", "1"]
    expected = np.array(["", "héllo", "wörld ☃", "", ""], dtype=object)
    assert a[...].tolist() == expected.tolist()
    fresh = zk.open_array(store, mode="r")
    assert fresh[...].tolist() == expected.tolist()
    assert fresh[2] == "wörld ☃"
    a[4] = "end"
    assert a.vindex[[4, 1]].tolist() == ["end", "héllo"]


def test_vlen_bytes_round_trip() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(2, 3), chunks=(1, 2), dtype=bytes)
    assert a.fill_value == b""
    assert [f["id"] for f in json.loads(store.get(".zarray"))["filters"]] == ["vlen-bytes"]
    a[1, 2] = b"\x00\xffraw"
    assert chunk_keys(store) == ["1.1"]
    expected = [[b"", b"", b""], [b"", b"", b"\x00\xffraw"]]
    assert a[...].tolist() == expected
    assert zk.open_array(store, mode="r")[...].tolist() == expected


@pytest.mark.parametrize("dtype,fill,value", [(str, "pad", "x"), (bytes, b"pad", b"x")])
def test_object_fill_value_survives_reopening(dtype: type, fill: Any, value: Any) -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(4,), chunks=(2,), dtype=dtype, fill_value=fill)
    assert a.fill_value == fill
    a[3] = value
    assert chunk_keys(store) == ["1"]
    expected = [fill, fill, fill, value]
    assert a[...].tolist() == expected
    fresh = zk.open_array(store, mode="r")
    assert fresh.fill_value == fill
    assert fresh[...].tolist() == expected


# --- pickling ---------------------------------------------------------------------------------


def _pickle_stores(tmp_path: Path) -> dict[str, Any]:
    return {
        "directory": lambda: zk.storage.DirectoryStore(tmp_path / "d.zarr"),
        "dict": dict,
        "memory-url": lambda: "memory://test-array-pickle",
        "zip": lambda: zk.storage.ZipStore(tmp_path / "z.zip", mode="w"),
    }


@pytest.mark.parametrize("layout", ["chunked", "sharded", "v2"])
@pytest.mark.parametrize("kind", ["directory", "dict", "memory-url", "zip"])
def test_arrays_pickle_by_store_path_and_metadata(tmp_path: Path, kind: str, layout: str
                                                  ) -> None:
    store = _pickle_stores(tmp_path)[kind]()
    options: dict[str, Any] = {"zarr_format": 2} if layout == "v2" else {"zarr_format": 3}
    if layout == "sharded":
        options["shards"] = (4, 4)
    data = np.arange(48, dtype="i4").reshape(6, 8)
    a = zk.create_array(store, name="x", shape=data.shape, chunks=(2, 2), dtype="i4",
                        write_empty_chunks=True, overwrite=True, **options)
    a[...] = data
    a.attrs["unit"] = "m"
    copy = pickle.loads(pickle.dumps(a))
    assert (copy.shape, copy.chunks, copy.dtype, copy.path) == (a.shape, a.chunks, a.dtype, "x")
    assert copy.attrs.asdict() == {"unit": "m"}
    np.testing.assert_array_equal(copy[...], data)
    copy[0, :] = -1
    expected = data.copy()
    expected[0, :] = -1
    np.testing.assert_array_equal(copy[...], expected)
    # Stores on disk are reopened, so the original sees the copy's write; a MemoryStore
    # is copied by value, as zarr-python's is.
    shared = kind in ("directory", "zip")
    np.testing.assert_array_equal(a[...], expected if shared else data)


def test_a_pickled_zip_store_appends_and_never_empties_the_archive(tmp_path: Path) -> None:
    path = tmp_path / "z.zip"
    with zk.storage.ZipStore(path, mode="w") as store:
        store.set("k", b"v")
        copy = pickle.loads(pickle.dumps(store))
        assert (copy.mode, copy.read_only) == ("a", False)
        assert copy.get("k") == b"v"
        copy.set("n", b"new")
        copy.close()
    with zk.storage.ZipStore(path) as reader:
        assert reader.get("k") == b"v" and reader.get("n") == b"new"
        assert pickle.loads(pickle.dumps(reader)).read_only
