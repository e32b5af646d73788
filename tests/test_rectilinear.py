"""Arrays on a rectilinear chunk grid (the registered v3 extension): per-dimension chunk
lengths, checked against numpy."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import MetadataError


@st.composite
def grids(draw: st.DrawFn) -> tuple[tuple[int, ...], list[object]]:
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 12)) for _ in range(ndim))
    chunks: list[object] = []
    for size in shape:
        if draw(st.booleans()):
            chunks.append(draw(st.integers(1, size)))
        else:
            lengths: list[int] = []
            while sum(lengths) < size:
                lengths.append(draw(st.integers(1, 5)))
            chunks.append(lengths)
    return shape, chunks


@settings(max_examples=60, deadline=None)
@given(grid=grids(), data=st.data())
def test_rectilinear_reads_and_writes_match_numpy(grid: tuple, data: st.DataObject) -> None:
    shape, chunks = grid
    store: dict[str, bytes] = {}
    a = zk.create_array(store, shape=shape, chunks=chunks, dtype="i4", fill_value=-1,
                        zarr_format=3)
    expected = np.full(shape, -1, dtype="i4")
    region = tuple(slice(data.draw(st.integers(0, s - 1)), None) for s in shape)
    values = np.arange(np.prod(expected[region].shape), dtype="i4").reshape(
        expected[region].shape)
    a[region] = values
    expected[region] = values
    np.testing.assert_array_equal(a[...], expected)
    point = tuple(data.draw(st.integers(0, s - 1)) for s in shape)
    assert a[point] == expected[point]
    index = [data.draw(st.lists(st.integers(0, s - 1), min_size=1, max_size=4)) for s in shape]
    np.testing.assert_array_equal(a.oindex[tuple(index)], expected[np.ix_(*index)])
    again = zk.open_array(store, mode="r")
    np.testing.assert_array_equal(again[...], expected)


def test_rectilinear_metadata_and_resize() -> None:
    store: dict[str, bytes] = {}
    data = np.arange(70, dtype="i4").reshape(10, 7)
    a = zk.create_array(store, shape=(10, 7), chunks=[[3, 4, 3], 4], dtype="i4",
                        zarr_format=3, data=data)
    grid = json.loads(store["zarr.json"])["chunk_grid"]
    assert grid["name"] == "rectilinear"
    assert a.chunks == ((3, 4, 3), 4)
    assert a.cdata_shape == (3, 2)
    assert sorted(k for k in store if k.startswith("c/")) == [
        f"c/{i}/{j}" for i in range(3) for j in range(2)]
    a.resize((6, 7))  # the last row of chunks goes, the middle one is trimmed
    assert not any(k.startswith("c/2/") for k in store)
    a.resize((10, 7))
    expected = np.full((10, 7), 0, dtype="i4")
    expected[:6] = data[:6]
    np.testing.assert_array_equal(a[...], expected)


def test_iterating_a_rectilinear_array_yields_its_rows() -> None:
    data = np.arange(70, dtype="i4").reshape(10, 7)
    a = zk.create_array({}, shape=(10, 7), chunks=[[3, 4, 3], 4], dtype="i4", data=data)
    np.testing.assert_array_equal(np.stack(list(a)), data)
    b = zk.create_array({}, shape=(7, 2), chunks=[4, [1, 1]], dtype="i4", data=data[:7, :2])
    np.testing.assert_array_equal(np.stack(list(b)), data[:7, :2])


def test_rectilinear_rejects_uncovered_shape_and_sharding() -> None:
    with pytest.raises(MetadataError, match="do not cover"):
        zk.create_array({}, shape=(10,), chunks=[[3, 4]], dtype="i4", zarr_format=3)
    # As zarr-python 3.4: the inner chunks of shards are regular; the shards may vary.
    with pytest.raises(MetadataError, match="use rectilinear shards instead"):
        zk.create_array({}, shape=(10,), chunks=[[5, 5]], shards=(10,), dtype="i4",
                        zarr_format=3)
