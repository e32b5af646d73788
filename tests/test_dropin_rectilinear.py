"""Resizing and appending arrays on a rectilinear chunk grid.

zarr-python 3.1 has no rectilinear grids; the rule followed is the one zarr-python adopted
with them later (and the rectilinear extension in /work/shared/specs allows): a dimension
whose chunks no longer cover it gains one chunk spanning the added extent, and shrinking
keeps the chunk lengths (the last ones then lie past the end). Values are checked against
numpy doing the same resizes and appends.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk


def _grid(store: dict[str, bytes]) -> list[Any]:
    """Per dimension the stored chunk length or lengths (a regular grid's as lengths)."""
    grid = json.loads(store["zarr.json"])["chunk_grid"]
    if grid["name"] == "regular":
        return list(grid["configuration"]["chunk_shape"])
    return list(grid["configuration"]["chunk_shapes"])


def _clipped(lengths: tuple[int, ...], size: int) -> tuple[int, ...]:
    out, start = [], 0
    for length in lengths:
        if start >= size:
            break
        out.append(min(length, size - start))
        start += length
    return tuple(out)


def test_resize_adds_a_chunk_for_the_added_extent_and_keeps_chunks_on_shrinking() -> None:
    store: dict[str, bytes] = {}
    data = np.arange(40, dtype="i4").reshape(10, 4)
    a = zk.create_array(store, shape=(10, 4), chunks=[[3, 4, 3], 2], dtype="i4",
                        zarr_format=3, data=data, fill_value=-1)
    a.resize((15, 6))
    assert _grid(store) == [[3, 4, 3, 5], 2]
    assert a.chunks == ((3, 4, 3, 5), 2)
    assert a.write_chunk_sizes == ((3, 4, 3, 5), (2, 2, 2))
    expected = np.full((15, 6), -1, dtype="i4")
    expected[:10, :4] = data
    np.testing.assert_array_equal(a[...], expected)
    a.resize((5, 6))  # the chunk lengths stay; those past the end hold nothing
    assert _grid(store) == [[3, 4, 3, 5], 2]
    assert a.write_chunk_sizes == ((3, 2), (2, 2, 2)) and a.cdata_shape == (2, 3)
    a.resize((12, 6))  # covered again by the kept chunks: no new one
    assert _grid(store) == [[3, 4, 3, 5], 2]
    expected = np.full((12, 6), -1, dtype="i4")
    expected[:5, :4] = data[:5]
    np.testing.assert_array_equal(a[...], expected)


def test_append_adds_one_chunk_per_append_along_a_rectilinear_axis() -> None:
    store: dict[str, bytes] = {}
    a = zk.create_array(store, shape=(0, 3), chunks=[[2], 3], dtype="f8", zarr_format=3)
    oracle = np.zeros((0, 3))
    for rows in (2, 5, 1):
        block = np.random.default_rng(rows).random((rows, 3))
        assert a.append(block) == (oracle.shape[0] + rows, 3)
        oracle = np.concatenate([oracle, block])
    assert _grid(store) == [[2, 5, 1], 3]  # the declared chunk of 2 took the first 2 rows
    assert a.write_chunk_sizes == ((2, 5, 1), (3,))
    np.testing.assert_array_equal(a[...], oracle)
    assert sorted(k for k in store if k.startswith("c/")) == ["c/0/0", "c/1/0", "c/2/0"]


@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_resizes_and_appends_match_numpy(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 2))
    shape = tuple(data.draw(st.integers(1, 8)) for _ in range(ndim))
    chunks: list[Any] = []
    for size in shape:
        if data.draw(st.booleans()):
            chunks.append(data.draw(st.integers(1, 4)))
        else:
            lengths = [data.draw(st.integers(1, 4))]
            while sum(lengths) < size:
                lengths.append(data.draw(st.integers(1, 4)))
            chunks.append(lengths)
    store: dict[str, bytes] = {}
    oracle = np.arange(int(np.prod(shape)), dtype="i2").reshape(shape)
    a = zk.create_array(store, shape=shape, chunks=chunks, dtype="i2", zarr_format=3,
                        data=oracle, fill_value=0)
    for _ in range(data.draw(st.integers(1, 4))):
        if data.draw(st.booleans()):
            axis = data.draw(st.integers(0, ndim - 1))
            rows = data.draw(st.integers(1, 5))
            block_shape = tuple(rows if i == axis else s for i, s in enumerate(oracle.shape))
            block = np.full(block_shape, data.draw(st.integers(1, 99)), dtype="i2")
            a.append(block, axis=axis)
            oracle = np.concatenate([oracle, block], axis=axis)
        else:
            new_shape = tuple(data.draw(st.integers(0, 12)) for _ in range(ndim))
            a.resize(new_shape)
            grown = np.zeros(new_shape, dtype="i2")
            common = tuple(slice(0, min(o, n)) for o, n in zip(oracle.shape, new_shape,
                                                                strict=True))
            grown[common] = oracle[common]
            oracle = grown
        assert a.shape == oracle.shape
        np.testing.assert_array_equal(a[...], oracle)
        reopened = zk.open_array(store)
        np.testing.assert_array_equal(reopened[...], oracle)
        for axis, (spec, size) in enumerate(zip(_grid(store), oracle.shape, strict=True)):
            if isinstance(spec, int):
                assert reopened.write_chunk_sizes[axis] == _clipped((spec,) * (size // spec + 1),
                                                                     size)
            else:
                lengths = tuple(n for item in spec for n in (
                    [item[0]] * item[1] if isinstance(item, list) else [item]))
                assert sum(lengths) >= size
                assert reopened.write_chunk_sizes[axis] == _clipped(lengths, size)
