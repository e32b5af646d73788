"""A write that cannot complete changes nothing: a corrupt chunk (or shard index, or inner
chunk) that the write would have to update, or a value that cannot be converted or encoded,
fails the write before any chunk is stored. The oracle is the store itself: every key and
every stored byte, before and after."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import ChunkDecodeError
from zarrkit.storage import DirectoryStore, MemoryStore

SHAPE = (12, 16)
CHUNKS = (3, 4)
SHARDS = (6, 8)
PROPERTY = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def snapshot(store: Any) -> dict[str, bytes]:
    """Every key of the store and its bytes."""
    return {key: bytes(store.get(key)) for key in sorted(store.list())}


# --- array layouts -----------------------------------------------------------------------

def _regular(store: Any, zarr_format: int, **options: Any) -> zk.Array:
    return zk.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype="<i4", fill_value=0,
                           zarr_format=zarr_format, **options)


def _sharded_with_outer_checksum(store: Any) -> zk.Array:
    """Sharded, with a bytes codec after sharding: shards are then decoded and encoded
    whole (no partial I/O), the other write path."""
    zk.create_array(store, shape=SHAPE, chunks=CHUNKS, shards=SHARDS, dtype="<i4",
                    fill_value=0, zarr_format=3)
    document = json.loads(store.get("zarr.json"))
    document["codecs"].append({"name": "crc32c"})
    store.set("zarr.json", json.dumps(document).encode())
    array = zk.open_array(store, mode="r+")
    assert not array._sharded_io
    return array


LAYOUTS: dict[str, Callable[[Any], zk.Array]] = {
    "v2": lambda store: _regular(store, 2),
    "v3": lambda store: _regular(store, 3),
    "v3-sharded": lambda store: _regular(store, 3, shards=SHARDS),
    "v3-sharded-whole": _sharded_with_outer_checksum,
}


def _storage_grid(array: zk.Array) -> tuple[int, ...]:
    """The shape of the stored objects: shards of a sharded array, else chunks."""
    return tuple(array.shards or array.chunks)


def _data() -> np.ndarray[Any, Any]:
    return np.arange(1, 1 + np.prod(SHAPE), dtype="<i4").reshape(SHAPE)


# --- selections --------------------------------------------------------------------------

@st.composite
def selections(draw: st.DrawFn) -> tuple[str, Any, np.ndarray[Any, Any]]:
    """(kind, selection, mask of the elements it writes), computed with numpy."""
    kind = draw(st.sampled_from(["basic", "oindex", "vindex"]))
    mask = np.zeros(SHAPE, dtype=bool)
    if kind == "basic":
        selection: Any = draw(hnp.basic_indices(SHAPE, min_dims=2, allow_newaxis=False))
        mask[selection] = True
    elif kind == "oindex":
        selection = tuple(
            draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
            for n in SHAPE)
        mask[np.ix_(*selection)] = True
    else:
        points = draw(st.lists(st.tuples(*(st.integers(0, n - 1) for n in SHAPE)),
                               min_size=1, max_size=40, unique=True))
        selection = tuple(np.array(axis) for axis in zip(*points, strict=True))
        mask[selection] = True
    return kind, selection, mask


def _assign(array: zk.Array, kind: str, selection: Any, value: Any) -> None:
    {"basic": array.__setitem__, "oindex": array.oindex.__setitem__,
     "vindex": array.vindex.__setitem__}[kind](selection, value)


def _regions(grid: tuple[int, ...]) -> list[tuple[tuple[int, ...], tuple[slice, ...]]]:
    counts = [-(-n // g) for n, g in zip(SHAPE, grid, strict=True)]
    return [(coords, tuple(slice(c * g, (c + 1) * g) for c, g in zip(coords, grid, strict=True)))
            for coords in np.ndindex(*counts)]


def _partly_written(mask: np.ndarray[Any, Any], grid: tuple[int, ...]
                    ) -> list[tuple[int, ...]]:
    """Coordinates of the storage objects that the write updates without covering."""
    return [coords for coords, region in _regions(grid)
            if mask[region].any() and not mask[region].all()]


# --- a corrupt chunk, shard index or inner chunk -----------------------------------------

@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@PROPERTY
@given(chosen=selections(), data=st.data())
@example(chosen=("basic", (slice(1, 12), slice(1, 16)), None), data=None).via("the brief")
def test_a_corrupt_stored_object_fails_the_write_and_changes_nothing(
        layout: str, chosen: tuple[str, Any, Any], data: Any) -> None:
    kind, selection, mask = chosen
    if mask is None:  # the explicit example: the last object partly written, corrupt
        mask = np.zeros(SHAPE, dtype=bool)
        mask[selection] = True
    store = MemoryStore()
    array = LAYOUTS[layout](store)
    array[...] = _data()
    grid = _storage_grid(array)
    candidates = _partly_written(mask, grid)
    assume(candidates)
    corrupt = candidates[-1] if data is None else data.draw(st.sampled_from(candidates))
    store.set(array._chunk_key(corrupt), b"\x00corrupt\xff" * 3)
    before = snapshot(store)
    with pytest.raises(ChunkDecodeError):
        _assign(array, kind, selection, -5)
    assert snapshot(store) == before


@PROPERTY
@given(chosen=selections(), data=st.data())
def test_a_corrupt_inner_chunk_to_update_fails_the_write_and_changes_nothing(
        chosen: tuple[str, Any, Any], data: Any) -> None:
    kind, selection, mask = chosen
    store = MemoryStore()
    array = LAYOUTS["v3-sharded"](store)
    array[...] = _data()
    candidates = _partly_written(mask, CHUNKS)
    assume(candidates)
    inner = data.draw(st.sampled_from(candidates))
    shard = tuple(c * n // s for c, n, s in zip(inner, CHUNKS, SHARDS, strict=True))
    local = tuple(c % (s // n) for c, n, s in zip(inner, CHUNKS, SHARDS, strict=True))
    key = array._chunk_key(shard)
    stored = bytearray(store.get(key))
    index = array._pipeline.sharding.decode_index(bytes(stored), SHARDS, what=key)
    offset, nbytes = index.byte_range(local)
    stored[offset:offset + nbytes] = b"\xa5" * nbytes  # the index (and its checksum) intact
    store.set(key, bytes(stored))
    before = snapshot(store)
    with pytest.raises(ChunkDecodeError):
        _assign(array, kind, selection, np.int32(-5))
    assert snapshot(store) == before


def test_a_corrupt_last_chunk_on_disk_changes_no_file(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "a.zarr")
    array = _regular(store, 3)
    array[...] = _data()
    store.set(array._chunk_key((3, 3)), b"corrupt")
    before = snapshot(store)
    with pytest.raises(ChunkDecodeError):
        array[1:12, 1:15] = 9
    assert snapshot(store) == before


def test_a_valid_write_of_partial_chunks_still_lands() -> None:
    store = MemoryStore()
    array = LAYOUTS["v3-sharded"](store)
    expected = _data()
    array[...] = expected
    array[1:11, 3:13] = -1
    expected[1:11, 3:13] = -1
    np.testing.assert_array_equal(array[...], expected)


# --- values that cannot be converted or encoded -----------------------------------------

TEXT_LAYOUTS: dict[str, dict[str, Any]] = {
    "v2-vlen-utf8": {"dtype": str, "zarr_format": 2},
    "v3-vlen-utf8": {"dtype": str, "zarr_format": 3},
    "v3-vlen-utf8-sharded": {"dtype": str, "zarr_format": 3, "shards": (8,)},
    "v2-vlen-bytes": {"dtype": bytes, "zarr_format": 2},
    "v3-vlen-bytes": {"dtype": bytes, "zarr_format": 3},
}
# What each object codec refuses (None and 0 are not here: numcodecs' VLen codecs take
# them, as empty items).
REFUSED = {
    # The lone surrogate is a str that UTF-8 refuses. On numpy 2 values for strings are
    # converted as numpy's StringDType converts them (3 is "3"), as zarr-python does.
    str: (["\ud800"] if hasattr(np.dtypes, "StringDType")
          else [3, 2.5, b"bytes", "\ud800"]),
    bytes: [3, "text", 2.5],
}


def _text(kind: type, i: int) -> Any:
    return f"n{i}" if kind is str else f"n{i}".encode()


@pytest.mark.parametrize("layout", sorted(TEXT_LAYOUTS))
@PROPERTY
@given(start=st.integers(0, 20), length=st.integers(2, 12), data=st.data())
@example(start=1, length=9, data=None).via("the brief: the bad element last")
def test_an_element_the_object_codec_refuses_changes_nothing(
        layout: str, start: int, length: int, data: Any) -> None:
    options = TEXT_LAYOUTS[layout]
    kind = options["dtype"]
    store = MemoryStore()
    array = zk.create_array(store, shape=(24,), chunks=(4,), **options)
    array[...] = [_text(kind, i) for i in range(24)]
    stop = min(start + length, 24)
    assume(stop - start >= 2 and start // 4 != (stop - 1) // 4)  # several chunks
    value: list[Any] = [_text(kind, 100 + i) for i in range(stop - start)]
    if data is None:
        value[-1] = REFUSED[kind][0]
    else:
        value[data.draw(st.integers(0, len(value) - 1))] = data.draw(
            st.sampled_from(REFUSED[kind]))
    before = snapshot(store)
    with pytest.raises((TypeError, ValueError, UnicodeError)):
        array[start:stop] = value
    assert snapshot(store) == before


def test_an_object_msgpack_cannot_hold_changes_nothing() -> None:
    store = MemoryStore()
    array = zk.create_array(store, shape=(8,), chunks=(2,), dtype=object, zarr_format=2,
                            filters=[{"id": "msgpack2"}])
    array[...] = list(range(8))
    before = snapshot(store)
    with pytest.raises(TypeError):
        array[1:7] = [11, 12, 13, 14, 15, object()]
    assert snapshot(store) == before


def test_text_from_numpy_strings_is_written() -> None:
    # numcodecs' vlen-utf8 refuses numpy.str_ items: the value's conversion to an object
    # array must give Python strings, and the encode check must accept them.
    array = zk.create_array(MemoryStore(), shape=(8,), chunks=(3,), dtype=str, zarr_format=3)
    array[1:7] = np.array(["a", "bb", "ccc", "d", "é", "f"])
    assert array[...].tolist() == ["", "a", "bb", "ccc", "d", "é", "f", ""]


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("value", ["abc", ["1", "2", "abc"] * 4, [[1, 2], [3]]],
                         ids=["scalar", "list", "ragged"])
def test_numbers_given_something_else_change_nothing(zarr_format: int, value: Any) -> None:
    store = MemoryStore()
    array = zk.create_array(store, shape=(12,), chunks=(2,), dtype="<f8", fill_value=0,
                            zarr_format=zarr_format)
    array[...] = np.arange(12.0)
    before = snapshot(store)
    with pytest.raises(ValueError):
        array[...] = value
    assert snapshot(store) == before


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_records_given_something_else_change_nothing(zarr_format: int) -> None:
    store = MemoryStore()
    dtype = np.dtype([("a", "<i4"), ("b", "<f8")])
    array = zk.create_array(store, shape=(6,), chunks=(2,), dtype=dtype,
                            zarr_format=zarr_format)
    array[...] = np.array([(i, i / 2) for i in range(6)], dtype=dtype)
    before = snapshot(store)
    for value in ([(1, 2.0), (2, 3.0), (3, 4.0), ("x", 5.0)], [(1, 2.0, 3.0)] * 4, "abc"):
        with pytest.raises((ValueError, TypeError)):
            array[1:5] = value
        assert snapshot(store) == before


def test_a_value_scale_offset_cannot_hold_changes_nothing() -> None:
    store = MemoryStore()
    array = zk.create_array(store, shape=(8,), chunks=(2,), dtype="i1", zarr_format=3,
                            fill_value=0, filters=[
                                {"name": "scale_offset", "configuration": {"scale": 2}}])
    array[...] = np.arange(8)
    before = snapshot(store)
    with pytest.raises(ValueError, match="scale_offset"):
        array[1:8] = [11, 12, 13, 14, 15, 16, 100]  # 200 does not fit in int8
    assert snapshot(store) == before
