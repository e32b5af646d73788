"""Rectilinear shard grids, as zarr-python 3.4 has them: ``shards`` as one list of shard
lengths per dimension (a ``rectilinear`` chunk grid of shards) over regular inner chunks
that divide every shard.

zarr-python 3.4.2 is the oracle for the metadata (``zarr.json`` compared whole, shards
compared byte for byte), the validation, the chunk counts and the growth of the grid on
resize; numpy is the oracle for values, read and written by zarrkit with both engines and
read back by zarr-python (and the other way round).

Where zarrkit differs on purpose: zarr-python raises NotImplementedError for ``shards``
of a rectilinear shard grid; zarrkit gives the shard lengths per dimension, as its
``chunks`` does for a rectilinear chunk grid (dask's form).
"""

from __future__ import annotations

import json
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import MetadataError

ENGINES = ("native", "python")
SHARDS = [[60, 40, 20], [50, 50]]


@contextmanager
def rectilinear_zarr() -> Iterator[None]:
    """zarr-python's rectilinear grids are behind a flag (experimental in 3.4)."""
    with zarr.config.set({"array.rectilinear_chunks": True}), warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        yield


def _zarr_bytes(store: Any) -> dict[str, bytes]:
    return {key: value.to_bytes() for key, value in store._store_dict.items()}


def test_the_user_guide_array_is_written_as_zarr_python_writes_it() -> None:
    """Same arguments, same data: the same zarr.json and the same shard bytes."""
    data = np.arange(120 * 100, dtype="i4").reshape(120, 100)
    with rectilinear_zarr():
        theirs_store = zarr.storage.MemoryStore()
        theirs = zarr.create_array(theirs_store, shape=(120, 100), chunks=(10, 10),
                                   shards=SHARDS, dtype="int32")
        theirs[:] = data
    ours_store: dict[str, bytes] = {}
    ours = zk.create_array(ours_store, shape=(120, 100), chunks=(10, 10), shards=SHARDS,
                           dtype="int32")
    ours[:] = data
    stored = _zarr_bytes(theirs_store)
    assert json.loads(ours_store["zarr.json"]) == json.loads(stored.pop("zarr.json"))
    assert {k: v for k, v in ours_store.items() if k != "zarr.json"} == stored
    np.testing.assert_array_equal(ours[50:70, 40:60], data[50:70, 40:60])
    with rectilinear_zarr():
        for name in ("chunks", "cdata_shape", "nchunks", "nchunks_initialized",
                     "read_chunk_sizes", "write_chunk_sizes"):
            assert getattr(ours, name) == getattr(theirs, name), name
        with pytest.raises(NotImplementedError):
            theirs.shards  # noqa: B018 - zarr-python's refusal, kept here as the record
        ours_rows, theirs_rows = _info_rows(ours.info_complete()), _info_rows(
            theirs.info_complete())
    # The serializer's repr is the public codec classes' (they differ for every array).
    for rows in (ours_rows, theirs_rows):
        del rows["Serializer"]
    assert ours_rows == theirs_rows
    assert ours.shards == ((60, 40, 20), (50, 50))
    assert ours.engine == "python"  # the engine declines a rectilinear shard grid


def _info_rows(info: Any) -> dict[str, str]:
    return {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip()
            for line in str(info).splitlines()}


BAD_SHARDS = [
    ("not a multiple of the inner chunk", dict(shape=(120, 100), shards=[[65, 55], [50, 50]],
                                               chunks=(10, 10))),
    ("lengths short of the dimension", dict(shape=(120, 100), shards=[[60, 40], [50, 50]],
                                            chunks=(10, 10))),
    ("lengths past the dimension", dict(shape=(120, 100), shards=[[60, 40, 30], [50, 50]],
                                        chunks=(10, 10))),
    ("a zero length", dict(shape=(120, 100), shards=[[60, 0, 60], [50, 50]], chunks=(10, 10))),
    ("an empty list", dict(shape=(0, 100), shards=[[], [50, 50]], chunks=(10, 10))),
    ("a float", dict(shape=(120, 100), shards=[[60.0, 40, 20], [50, 50]], chunks=(10, 10))),
    ("too few dimensions", dict(shape=(120, 100), shards=[[60, 40, 20]], chunks=(10, 10))),
    ("rectilinear inner chunks", dict(shape=(120, 100), shards=[[60, 40, 20], [50, 50]],
                                      chunks=[[10, 50, 60], [50, 50]])),
    ("the guessed inner chunk", dict(shape=(120, 100), shards=[[60, 40, 20], [50, 50]])),
]


@pytest.mark.parametrize(("why", "arguments"), BAD_SHARDS, ids=[b[0] for b in BAD_SHARDS])
def test_what_zarr_python_refuses_zarrkit_refuses(why: str, arguments: dict[str, Any]
                                                  ) -> None:
    with rectilinear_zarr(), pytest.raises((ValueError, TypeError)):
        zarr.create_array({}, dtype="i4", **arguments)
    store: dict[str, bytes] = {}
    with pytest.raises(MetadataError):
        zk.create_array(store, dtype="i4", **arguments)
    assert not store


@pytest.mark.parametrize(("chunks", "shards"), [
    ((10, 5), [[60, 40, 20], 50]), ((10, 5), [[60, 40, 20], -1]),
    ((10, 10), [[60, 40, 20], -1]), ((10, 5), ((60, 40, 20), (45, 50))),
    ((10, 5), [[40, 40, 40], [45, 50]])])
def test_what_zarr_python_takes_is_stored_as_it_stores_it(chunks: tuple[int, int],
                                                          shards: Any) -> None:
    """A single length (or -1: the whole dimension, rounded up to whole inner chunks)
    beside a list; tuples; equal lengths (kept as a list of them, run-length encoded)."""
    with rectilinear_zarr():
        theirs_store = zarr.storage.MemoryStore()
        theirs = zarr.create_array(theirs_store, shape=(120, 95), chunks=chunks,
                                   shards=shards, dtype="u1")
    ours_store: dict[str, bytes] = {}
    ours = zk.create_array(ours_store, shape=(120, 95), chunks=chunks, shards=shards,
                           dtype="u1")
    assert json.loads(ours_store["zarr.json"]) == json.loads(
        _zarr_bytes(theirs_store)["zarr.json"])
    assert ours.write_chunk_sizes == theirs.write_chunk_sizes


def test_format_2_has_no_shards() -> None:
    with rectilinear_zarr(), pytest.raises(ValueError):
        zarr.create_array({}, shape=(120,), shards=[[60, 60]], chunks=(10,), dtype="i4",
                          zarr_format=2)
    with pytest.raises(MetadataError, match="zarr_format=3"):
        zk.create_array({}, shape=(120,), shards=[[60, 60]], chunks=(10,), dtype="i4",
                        zarr_format=2)


def test_resizes_grow_the_shard_grid_as_zarr_python_does() -> None:
    """Growing past the shards adds one spanning the added extent; shrinking keeps the
    lengths; a growth the inner chunks do not tile is refused, nothing changed."""
    data = np.arange(120 * 100, dtype="i4").reshape(120, 100)
    with rectilinear_zarr():
        theirs_store = zarr.storage.MemoryStore()
        theirs = zarr.create_array(theirs_store, shape=(120, 100), chunks=(10, 10),
                                   shards=SHARDS, dtype="i4", fill_value=-1)
        theirs[:] = data
    ours_store: dict[str, bytes] = {}
    ours = zk.create_array(ours_store, shape=(120, 100), chunks=(10, 10), shards=SHARDS,
                           dtype="i4", fill_value=-1)
    ours[:] = data
    expected = data
    for shape in [(150, 100), (100, 120), (30, 40), (200, 200)]:
        with rectilinear_zarr():
            theirs.resize(shape)
        ours.resize(shape)
        grown = np.full(shape, -1, dtype="i4")
        common = tuple(slice(0, min(a, b)) for a, b in zip(shape, expected.shape, strict=True))
        grown[common] = expected[common]
        expected = grown
        assert json.loads(ours_store["zarr.json"]) == json.loads(
            _zarr_bytes(theirs_store)["zarr.json"])
        assert sorted(ours_store) == sorted(_zarr_bytes(theirs_store))
        assert ours.write_chunk_sizes == theirs.write_chunk_sizes
        np.testing.assert_array_equal(ours[...], expected)
    before = ours_store["zarr.json"]
    with rectilinear_zarr(), pytest.raises(ValueError, match="not divisible"):
        theirs.append(np.ones((7, 200), "i4"))
    with pytest.raises(MetadataError, match="shard length 7 of dimension 0"):
        ours.append(np.ones((7, 200), "i4"))
    assert ours_store["zarr.json"] == before and ours.shape == (200, 200)
    ours.append(np.ones((30, 200), "i4"))
    assert ours.write_chunk_sizes == ((60, 40, 20, 30, 50, 30), (50, 50, 20, 80))
    with rectilinear_zarr():
        np.testing.assert_array_equal(
            zarr.open_array(zarr.storage.MemoryStore(
                {k: zarr.core.buffer.cpu.Buffer.from_bytes(v) for k, v in ours_store.items()}),
                mode="r")[...], ours[...])


def test_a_stored_shard_grid_the_inner_chunks_do_not_tile_is_refused_at_open() -> None:
    """As zarr-python refuses it (nothing would read its shards right)."""
    store: dict[str, bytes] = {}
    zk.create_array(store, shape=(30,), chunks=(10,), shards=[[20, 10]], dtype="u1")
    document = json.loads(store["zarr.json"])
    document["chunk_grid"]["configuration"]["chunk_shapes"] = [[20, 5, 5]]
    store["zarr.json"] = json.dumps(document).encode()
    with pytest.raises(MetadataError, match="shard length 5 of dimension 0"):
        zk.open_array(store, mode="r")


def test_the_native_engine_declines_a_rectilinear_shard_grid() -> None:
    """Its chain holds one shard shape: handed the first shard's, it would read the others
    wrong, so the adapter gives no chain at all and the Python path reads."""
    from zarrkit import native
    from zarrkit.hierarchy.creation import array_metadata

    meta = array_metadata(zarr_format=3, shape=(120, 100), chunks=(10, 10), shards=SHARDS,
                          dtype="i4", compressors=None)
    regular = array_metadata(zarr_format=3, shape=(120, 100), chunks=(10, 10),
                             shards=(60, 50), dtype="i4", compressors=None)
    with zk.config.set(engine="native"):
        assert native.array_chain(meta, np.dtype("i4"), 0) is None
        assert (native.array_chain(regular, np.dtype("i4"), 0) is None) == (
            not native.built())


# --- the property ----------------------------------------------------------------------------


@st.composite
def rectilinear_shards(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], list[Any]]:
    """(shape, inner chunk shape, shards): per dimension a list of multiples of the inner
    chunk summing to the dimension, or a single multiple (a regular dimension)."""
    ndim = draw(st.integers(1, 3))
    inner = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    shape: list[int] = []
    shards: list[Any] = []
    for step in inner:
        if draw(st.integers(0, 3)) == 0:
            length = step * draw(st.integers(1, 3))
            shards.append(length)
            shape.append(draw(st.integers(1, 3 * length)))
        else:
            lengths = [step * n for n in draw(st.lists(st.integers(1, 3), min_size=1,
                                                       max_size=4))]
            shards.append(lengths)
            shape.append(sum(lengths))
    if not any(isinstance(s, list) for s in shards):
        shards[0] = [shape[0] + (-shape[0]) % inner[0]] if shape[0] else [inner[0]]
        shape[0] = sum(shards[0])
    return tuple(shape), inner, shards


def _boxes(draw: st.DrawFn, shape: tuple[int, ...], count: int) -> list[tuple[slice, ...]]:
    boxes = []
    for _ in range(count):
        box = []
        for n in shape:
            start = draw(st.integers(0, n - 1))
            box.append(slice(start, draw(st.integers(start + 1, n))))
        boxes.append(tuple(box))
    return boxes


def _reads(draw: st.DrawFn, shape: tuple[int, ...]) -> list[tuple[str, Any]]:
    basic = tuple(draw(st.integers(0, n - 1)) if draw(st.booleans()) else slice(
        draw(st.integers(0, n)), draw(st.integers(0, n)), draw(st.integers(1, 3)))
        for n in shape)
    ortho = tuple(np.array(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4)))
                  for n in shape)
    points = draw(st.integers(1, 5))
    vector = tuple(np.array(draw(st.lists(st.integers(0, n - 1), min_size=points,
                                          max_size=points))) for n in shape)
    return [("basic", ...), ("basic", basic), ("oindex", ortho), ("vindex", vector)]


def _check_reads(array: Any, expected: np.ndarray, reads: list[tuple[str, Any]]) -> None:
    for kind, selection in reads:
        if kind == "oindex":
            got, want = array.oindex[selection], expected[np.ix_(*selection)]
        elif kind == "vindex":
            got, want = array.vindex[selection], expected[selection]
        else:
            got, want = array[selection], expected[selection]
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{kind} {selection}")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grid=rectilinear_shards(), dtype=st.sampled_from(["u1", "<i2", "<f8", ">u4"]),
       data=st.data())
def test_rectilinear_shards_round_trip_with_zarr_python(
        grid: tuple[tuple[int, ...], tuple[int, ...], list[Any]], dtype: str,
        data: st.DataObject) -> None:
    """zarrkit writes boxes (whole and partial shards, some shards never written) with
    either engine setting; its reads, zarr-python's and numpy agree; then zarr-python
    writes a box into the same store and zarrkit reads it back, both engines."""
    shape, inner, shards = grid
    boxes = _boxes(data.draw, shape, data.draw(st.integers(1, 3)))
    expected = np.full(shape, 7, dtype=dtype)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "a.zarr"
        ours = zk.create_array(path, shape=shape, chunks=inner, shards=shards, dtype=dtype,
                               fill_value=7)
        for box in boxes:
            values = np.asarray(data.draw(st.integers(0, 100)) + np.arange(
                expected[box].size).reshape(expected[box].shape) % 50, dtype=dtype)
            with zk.config.set(engine=data.draw(st.sampled_from(ENGINES))):
                ours[box] = values
            expected[box] = values
        reads = _reads(data.draw, shape)
        for engine in ENGINES:
            with zk.config.set(engine=engine):
                again = zk.open_array(path, mode="r")
                assert again.engine == "python"
                _check_reads(again, expected, reads)
        with rectilinear_zarr():
            theirs = zarr.open_array(path, mode="r+")
            np.testing.assert_array_equal(theirs[...], expected)
            [box] = _boxes(data.draw, shape, 1)
            theirs[box] = 3
        expected[box] = 3
        for engine in ENGINES:
            with zk.config.set(engine=engine):
                _check_reads(zk.open_array(path, mode="r"), expected, reads)
