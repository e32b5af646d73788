"""Behaviour tests of Zarr format 3: sharding partial I/O, bad input, codec extension points,
groups, inline consolidated metadata, conversion and defaults.

numpy is the oracle for values; a recording store is the oracle for what zarrkit asks of
the store; shard indexes are decoded here, independently of zarrkit, from the spec's
layout (little-endian uint64 ``(offset, nbytes)`` pairs followed by a crc32c checksum).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import hypothesis.extra.numpy as hnp
import numcodecs
import numpy as np
import pytest
import zarr
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import run_threads

import zarrkit as zk
from zarrkit.codecs.registry import register_codec_v3
from zarrkit.codecs.v3.base import BytesBytesCodec
from zarrkit.errors import (
    ChunkDecodeError,
    MetadataError,
    UnknownCodecError,
    UnknownDataTypeError,
    UnsupportedDataTypeError,
    UnsupportedExtensionError,
    ZarrkitError,
)
from zarrkit.storage import MemoryStore

EMPTY = 2**64 - 1
ARRAY = "data/arr"
ARRAY_NAME = "/data/arr"
SHARD = f"{ARRAY}/c/0/0"

PROPERTY_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)


# --- a store that records what is asked of it ---------------------------------------------


@dataclass(frozen=True)
class Call:
    op: str
    key: str
    start: int | None = None
    length: int | None = None
    nbytes: int = 0


class RecordingStore(MemoryStore):
    """A MemoryStore recording every get, get_range, set, delete and listing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[Call] = []
        self._calls_lock = threading.Lock()

    def _record(self, call: Call) -> None:
        with self._calls_lock:
            self.calls.append(call)

    def reset(self) -> None:
        with self._calls_lock:
            self.calls = []

    def snapshot(self) -> dict[str, bytes]:
        return dict(self._data)

    def get(self, key: str) -> bytes | None:
        value = super().get(key)
        self._record(Call("get", key, nbytes=0 if value is None else len(value)))
        return value

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        value = super().get(key)  # MemoryStore's own get: not recorded as a full read
        out = None
        if value is not None:
            begin = start if start >= 0 else max(len(value) + start, 0)
            out = value[begin:None if length is None else begin + length]
        self._record(Call("get_range", key, start, length, 0 if out is None else len(out)))
        return out

    def get_many(self, keys: Any) -> list[bytes | None]:
        return [self.get(k) for k in keys]

    def set(self, key: str, value: Any) -> None:
        self._record(Call("set", key, nbytes=len(value)))
        super().set(key, value)

    def delete(self, key: str) -> None:
        self._record(Call("delete", key))
        super().delete(key)

    def delete_prefix(self, prefix: str) -> None:
        self._record(Call("delete_prefix", prefix))
        super().delete_prefix(prefix)

    def list(self) -> Iterator[str]:
        self._record(Call("list", ""))
        return super().list()

    def list_prefix(self, prefix: str) -> Iterator[str]:
        self._record(Call("list", prefix))
        return super().list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        self._record(Call("list", prefix))
        return super().list_dir(prefix)

    # views of the record
    def ops(self, *ops: str, key: str | None = None) -> list[Call]:
        return [c for c in self.calls if c.op in ops and (key is None or c.key == key)]

    def reads_of_chunks(self) -> list[Call]:
        return [c for c in self.ops("get", "get_range") if not is_metadata_key(c.key)]


class LatencyStore(MemoryStore):
    """Metadata reads take a few milliseconds, as they do on a network store."""

    def get(self, key: str) -> bytes | None:
        value = super().get(key)
        if key.endswith("zarr.json"):
            time.sleep(0.003)
        return value


def is_metadata_key(key: str) -> bool:
    return key.rsplit("/", 1)[-1] in ("zarr.json", ".zarray", ".zgroup", ".zattrs")


@contextmanager
def unchanged(store: MemoryStore) -> Iterator[None]:
    """Assert that nothing stored changes inside the block (even when it raises)."""
    before = dict(store._data)
    try:
        yield
    finally:
        assert dict(store._data) == before


def check_raises(error: type[ZarrkitError], fragments: tuple[str, ...],
                 action: Callable[[], Any]) -> ZarrkitError:
    """``action()`` raises ``error`` whose message names every fragment."""
    with pytest.raises(error) as info:
        action()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return info.value


# --- shard layout, decoded independently of zarrkit ---------------------------------------


def index_nbytes(cps: tuple[int, ...]) -> int:
    return 16 * math.prod(cps) + 4


def read_index(raw: bytes, cps: tuple[int, ...], location: str = "end") -> np.ndarray:
    """The ``(offset, nbytes)`` entries of a shard with the default index codecs."""
    n = index_nbytes(cps)
    part = raw[-n:] if location == "end" else raw[:n]
    body, checksum = part[:-4], part[-4:]
    assert int.from_bytes(checksum, "little") == crc32c(body), "index checksum"
    return np.frombuffer(body, dtype="<u8").reshape(*cps, 2)


def inner_bytes(raw: bytes, entries: np.ndarray, local: tuple[int, ...]) -> bytes | None:
    offset, nbytes = (int(v) for v in entries[local])
    if offset == EMPTY and nbytes == EMPTY:
        return None
    return raw[offset:offset + nbytes]


def encode_index(entries: np.ndarray) -> bytes:
    body = np.ascontiguousarray(entries, dtype="<u8").tobytes()
    return body + crc32c(body).to_bytes(4, "little")


def build_shard(parts: Mapping[tuple[int, ...], bytes], cps: tuple[int, ...],
                tweak: Callable[[np.ndarray], None] | None = None) -> bytes:
    """A shard (index at the end) holding ``parts``; ``tweak`` may edit the entries."""
    entries = np.full((*cps, 2), EMPTY, dtype="<u8")
    payload = b""
    for local, data in parts.items():
        entries[local] = (len(payload), len(data))
        payload += data
    if tweak is not None:
        tweak(entries)
    return payload + encode_index(entries)


def shard_parts(raw: bytes, cps: tuple[int, ...]) -> dict[tuple[int, ...], bytes]:
    entries = read_index(raw, cps)
    parts = {}
    for local in np.ndindex(*cps):
        data = inner_bytes(raw, entries, local)
        if data is not None:
            parts[local] = data
    return parts


def make_sharded(store: MemoryStore, name: str = "x", *, shape: tuple[int, ...] = (64, 64),
                 chunks: tuple[int, ...] = (8, 8), shards: tuple[int, ...] = (32, 32),
                 dtype: str = "<i4", **options: Any) -> zk.Array:
    return zk.create_array(store, name=name, shape=shape, chunks=chunks, shards=shards,
                           dtype=dtype, zarr_format=3, **options)


def random_ints(shape: tuple[int, ...], seed: int = 0, high: int = 1 << 30) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, high, shape).astype("<i4")


def stored_chunk_keys(store: MemoryStore, prefix: str) -> list[str]:
    return sorted(k for k in store._data if k.startswith(prefix + "/")
                  and not k.endswith("zarr.json"))


# === 1. sharding partial I/O ===============================================================


@pytest.mark.parametrize("location", ["end", "start"])
def test_single_element_read_is_one_index_read_plus_one_inner_chunk_read(location: str
                                                                         ) -> None:
    store = RecordingStore()
    a = make_sharded(store, compressors=None, index_location=location)
    data = random_ints(a.shape)
    a[...] = data
    raw = store._data["x/c/0/0"]
    cps = (4, 4)
    entries = read_index(raw, cps, location)
    wanted = inner_bytes(raw, entries, (1, 2))
    assert wanted is not None
    store.reset()

    assert a[13, 21] == data[13, 21]

    assert store.ops("get") == [], "a full get of the shard"
    reads = store.ops("get_range")
    assert [c.key for c in reads] == ["x/c/0/0", "x/c/0/0"], reads
    assert sorted(c.nbytes for c in reads) == sorted([index_nbytes(cps), len(wanted)])
    transferred = sum(c.nbytes for c in reads)
    assert transferred == index_nbytes(cps) + len(wanted)
    assert transferred * 4 < len(raw)


def test_read_of_neighbouring_inner_chunks_coalesces_ranges() -> None:
    store = RecordingStore()
    a = make_sharded(store)
    data = random_ints(a.shape, high=1000)
    a[...] = data
    raw = store._data["x/c/0/0"]
    cps = (4, 4)
    entries = read_index(raw, cps)
    needed = [(0, 0), (0, 1), (1, 0), (1, 1)]
    ranges = sorted((int(entries[n][0]), int(entries[n][1])) for n in needed)
    # precondition: these four inner chunks are stored next to each other
    assert all(o1 + n1 == o2 for (o1, n1), (o2, _) in zip(ranges, ranges[1:], strict=False))
    span = sum(n for _, n in ranges)
    store.reset()

    np.testing.assert_array_equal(a[0:16, 0:16], data[0:16, 0:16])

    assert store.ops("get") == []
    reads = store.ops("get_range")
    assert {c.key for c in reads} == {"x/c/0/0"}
    data_reads = [c for c in reads if c.nbytes != index_nbytes(cps)]
    assert 1 <= len(data_reads) < len(needed)
    transferred = sum(c.nbytes for c in reads)
    assert transferred == index_nbytes(cps) + span
    assert transferred * 2 < len(raw)


def test_read_of_distant_inner_chunks_fetches_only_those_chunks() -> None:
    store = RecordingStore()
    a = make_sharded(store, shape=(256, 256), chunks=(8, 8), shards=(256, 256),
                     compressors=None)
    data = random_ints(a.shape)
    a[...] = data
    raw = store._data["x/c/0/0"]
    cps = (32, 32)
    entries = read_index(raw, cps)
    first, last = (0, 0), (31, 31)
    assert int(entries[last][0]) - int(entries[first][0]) > 200_000  # far apart
    store.reset()

    np.testing.assert_array_equal(a.vindex[[0, 255], [0, 255]], [data[0, 0], data[255, 255]])

    assert store.ops("get") == []
    reads = store.ops("get_range")
    assert sum(c.nbytes for c in reads) == index_nbytes(cps) + 2 * 256
    assert len(reads) == 3


def test_read_across_shards_reads_each_index_once_and_no_whole_shard() -> None:
    store = RecordingStore()
    a = make_sharded(store)
    data = random_ints(a.shape, high=1000)
    a[...] = data
    total = sum(len(v) for k, v in store._data.items() if not k.endswith("zarr.json"))
    store.reset()

    np.testing.assert_array_equal(a[:, 3], data[:, 3])
    np.testing.assert_array_equal(a.oindex[[1, 40], [2, 60]], data[np.ix_([1, 40], [2, 60])])

    assert store.ops("get") == []
    index_reads = [c for c in store.ops("get_range") if c.nbytes == index_nbytes((4, 4))]
    # first read: shards (0, 0) and (1, 0); second: all four shards
    assert len(index_reads) == 2 + 4
    assert sum(c.nbytes for c in store.ops("get_range")) * 2 < total


def test_read_of_missing_shard_is_one_range_read_and_fill() -> None:
    store = RecordingStore()
    a = make_sharded(store, fill_value=-3)
    a[0, 0] = 1
    store.reset()
    np.testing.assert_array_equal(a[40:48, 40:44], np.full((8, 4), -3, dtype="<i4"))
    assert [(c.op, c.key, c.nbytes) for c in store.calls] == [("get_range", "x/c/1/1", 0)]


def test_whole_shard_writes_never_read_the_shard() -> None:
    store = RecordingStore()
    # 40 is not a multiple of the shard side: the edge shards are whole too when every
    # inner chunk inside the array is written
    a = make_sharded(store, shape=(40, 72))
    data = random_ints(a.shape)
    a[...] = 0  # fill everywhere: nothing stored yet
    a[...] = data
    a[0:32, 32:64] = data[0:32, 32:64] + 1
    a[32:40, 64:72] = 7

    assert store.reads_of_chunks() == [], store.reads_of_chunks()
    expected = data.copy()
    expected[0:32, 32:64] += 1
    expected[32:40, 64:72] = 7
    np.testing.assert_array_equal(a[...], expected)


def test_partial_shard_write_rewrites_only_that_shard_and_keeps_other_inner_bytes() -> None:
    store = RecordingStore()
    a = make_sharded(store, compressors=[{"name": "gzip", "configuration": {"level": 1}}])
    data = random_ints(a.shape, high=100)
    a[...] = data
    # From now on the array's codecs say level 9: anything re-encoded gets other bytes
    document = json.loads(store._data["x/zarr.json"])
    inner = document["codecs"][0]["configuration"]["codecs"]
    assert inner[-1]["name"] == "gzip"
    inner[-1]["configuration"]["level"] = 9
    store.set("x/zarr.json", json.dumps(document).encode())
    a = zk.open_array(store, path="x", mode="r+")
    before = store.snapshot()
    cps = (4, 4)
    old_parts = shard_parts(before["x/c/0/1"], cps)
    store.reset()

    a[3, 40] = -1  # shard (0, 1), inner chunk (0, 1) of that shard
    a[4:6, 33:35] = -2  # same shard, same inner chunk (0, 0)

    assert {c.key for c in store.ops("set", "delete", "delete_prefix")} == {"x/c/0/1"}
    after = store.snapshot()
    assert {k: v for k, v in after.items() if k != "x/c/0/1"} == {
        k: v for k, v in before.items() if k != "x/c/0/1"}
    new_parts = shard_parts(after["x/c/0/1"], cps)
    assert set(new_parts) == set(old_parts)
    for local in old_parts:
        if local in ((0, 0), (0, 1)):
            assert new_parts[local] != old_parts[local], local
        else:
            assert new_parts[local] == old_parts[local], local
    expected = data.copy()
    expected[3, 40] = -1
    expected[4:6, 33:35] = -2
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(zk.open_array(store, path="x", mode="r")[...], expected)


def test_empty_inner_chunks_are_omitted_and_an_all_fill_shard_is_deleted() -> None:
    store = RecordingStore()
    a = make_sharded(store, fill_value=0)
    a[9, 9] = 5  # inner chunk (1, 1) of shard (0, 0)
    assert stored_chunk_keys(store, "x") == ["x/c/0/0"]
    raw = store._data["x/c/0/0"]
    entries = read_index(raw, (4, 4))
    for local in np.ndindex(4, 4):
        if local == (1, 1):
            assert int(entries[local][0]) != EMPTY and int(entries[local][1]) != EMPTY
        else:
            assert entries[local].tolist() == [EMPTY, EMPTY], local
    assert len(raw) == index_nbytes((4, 4)) + int(entries[1, 1][1])

    block = np.zeros((32, 32), dtype="<i4")
    block[0, 31] = 1  # only inner chunk (0, 3) holds data
    a[32:64, 0:32] = block
    entries = read_index(store._data["x/c/1/0"], (4, 4))
    stored = [local for local in np.ndindex(4, 4) if int(entries[local][0]) != EMPTY]
    assert stored == [(0, 3)]

    store.reset()
    a[9, 9] = 0
    assert "x/c/0/0" not in store._data
    assert store.ops("delete", key="x/c/0/0")
    a[32:64, 0:32] = 0
    assert stored_chunk_keys(store, "x") == []
    np.testing.assert_array_equal(a[...], np.zeros(a.shape, dtype="<i4"))


def test_64_threads_writing_distinct_inner_chunks_of_one_shard_lose_nothing() -> None:
    store = MemoryStore()
    a = make_sharded(store, shape=(16, 16), chunks=(2, 2), shards=(16, 16))
    expected = np.zeros((16, 16), dtype="<i4")
    for i in range(64):
        r, c = divmod(i, 8)
        expected[2 * r + (i % 2), 2 * c + 1] = i + 1

    def work(i: int) -> None:
        r, c = divmod(i, 8)
        # half the writers use their own handle on the same store
        target = a if i % 2 else zk.open_array(store, path="x", mode="r+")
        target[2 * r + (i % 2), 2 * c + 1] = i + 1

    run_threads(64, work)
    assert stored_chunk_keys(store, "x") == ["x/c/0/0"]
    np.testing.assert_array_equal(a[...], expected)
    entries = read_index(store._data["x/c/0/0"], (8, 8))
    assert not (entries == EMPTY).any()


def test_64_threads_writing_elements_of_one_inner_chunk_lose_nothing() -> None:
    store = MemoryStore()
    a = make_sharded(store, shape=(16, 16), chunks=(8, 8), shards=(16, 16))
    a[8:16, 8:16] = 3  # another inner chunk of the same shard already holds data

    def work(i: int) -> None:
        target = a if i % 2 else zk.open_array(store, path="x", mode="r+")
        target[i // 8, i % 8] = i + 100

    run_threads(64, work)
    expected = np.zeros((16, 16), dtype="<i4")
    expected[8:16, 8:16] = 3
    expected[0:8, 0:8] = (np.arange(64) + 100).reshape(8, 8)
    np.testing.assert_array_equal(a[...], expected)


# --- properties: sharded arrays behave as numpy arrays ------------------------------------


@dataclass
class ShardedCase:
    store: MemoryStore
    array: zk.Array
    expected: np.ndarray
    fill: Any
    location: str
    cps: tuple[int, ...]


SHARDED_DTYPES = ["<i4", "u1", "<f8", ">i2"]
VALUES = st.integers(0, 100)


@st.composite
def sharded_cases(draw: st.DrawFn, *, min_side: int = 0) -> ShardedCase:
    ndim = draw(st.integers(1, 3))
    inner = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    cps = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    shards = tuple(i * n for i, n in zip(inner, cps, strict=True))
    shape = tuple(draw(st.integers(min_side, 10)) for _ in range(ndim))
    dtype = np.dtype(draw(st.sampled_from(SHARDED_DTYPES)))
    fill = dtype.type(draw(st.integers(0, 3)))
    location = draw(st.sampled_from(["end", "start"]))
    compressors = draw(st.sampled_from(["auto", None]))
    store = MemoryStore()
    array = zk.create_array(store, name="s", shape=shape, chunks=inner, shards=shards,
                            dtype=dtype, fill_value=fill, compressors=compressors,
                            index_location=location, zarr_format=3)
    # Mostly the fill value, so that empty inner chunks and shards occur.
    elements = st.one_of(st.just(int(fill)), VALUES)
    expected = draw(hnp.arrays(dtype, shape, elements=elements))
    if draw(st.booleans()):
        array[...] = expected
    else:
        expected[...] = fill
    return ShardedCase(store, array, expected, fill, location, cps)


def check_sharded(case: ShardedCase, expected: np.ndarray) -> None:
    """Values equal numpy (this handle and a fresh one), and the stored shards hold
    exactly the inner chunks that are not all fill value."""
    np.testing.assert_array_equal(case.array[...], expected)
    fresh = zk.open_array(case.store, path="s", mode="r")
    np.testing.assert_array_equal(fresh[...], expected)
    inner = case.array.chunks
    shards = case.array.shards
    assert shards is not None
    grid = tuple(math.ceil(s / n) for s, n in zip(expected.shape, shards, strict=True))
    stored = set(stored_chunk_keys(case.store, "s"))
    for shard in np.ndindex(*grid):
        key = "s/c/" + "/".join(str(i) for i in shard)
        region = expected[tuple(slice(i * n, (i + 1) * n)
                                for i, n in zip(shard, shards, strict=True))]
        assert (key in stored) == bool((region != case.fill).any()), key
        stored.discard(key)
        if key not in case.store._data:
            continue
        entries = read_index(case.store._data[key], case.cps, case.location)
        for local in np.ndindex(*case.cps):
            part = region[tuple(slice(i * n, (i + 1) * n)
                                for i, n in zip(local, inner, strict=True))]
            is_empty = entries[local].tolist() == [EMPTY, EMPTY]
            assert is_empty == (not (part != case.fill).any()), (key, local)
    assert stored == set(), f"shards outside the grid: {stored}"


@st.composite
def write_value(draw: st.DrawFn, dtype: np.dtype, target: tuple[int, ...],
                scalar_only: bool = False) -> Any:
    if scalar_only or draw(st.booleans()):
        return dtype.type(draw(VALUES))
    ndim = draw(st.integers(0, len(target)))
    tail = target[len(target) - ndim:]
    shape = tuple(1 if draw(st.booleans()) else side for side in tail)
    return draw(hnp.arrays(dtype, shape, elements=VALUES))


@st.composite
def orthogonal_selections(draw: st.DrawFn, shape: tuple[int, ...], *, unique: bool = False
                          ) -> tuple[tuple[Any, ...], list[np.ndarray], list[bool]]:
    """A per-axis selection, numpy's index array per axis, and which axes remain."""
    selection: list[Any] = []
    index_arrays: list[np.ndarray] = []
    keeps: list[bool] = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "mask", "array", "list"] + (["int"] if n else [])))
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
            indices = [] if n == 0 else draw(st.lists(
                st.integers(-n, n - 1), max_size=2 * n + 1,
                unique_by=(lambda i, n=n: i % n) if unique else None))
            selection.append(indices if kind == "list" else np.array(indices, dtype=np.intp))
            index_arrays.append(np.array([i % n for i in indices], dtype=np.intp))
    return tuple(selection), index_arrays, keeps


def kept_shape(index_arrays: list[np.ndarray], keeps: list[bool]) -> tuple[int, ...]:
    return tuple(len(ix) for ix, keep in zip(index_arrays, keeps, strict=True) if keep)


@st.composite
def block_selections(draw: st.DrawFn, shape: tuple[int, ...], chunks: tuple[int, ...]
                     ) -> tuple[tuple[Any, ...], tuple[slice, ...]]:
    """A block selection (blocks of ``chunks``) and the element slices it means."""
    selection: list[Any] = []
    regions: list[slice] = []
    for n, c in zip(shape, chunks, strict=True):
        nblocks = math.ceil(n / c)
        if nblocks and draw(st.booleans()):
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


@PROPERTY_SETTINGS
@given(case=sharded_cases(), data=st.data())
def test_sharded_basic_selections_match_numpy(case: ShardedCase, data: st.DataObject) -> None:
    expected = case.expected.copy()
    for _ in range(3):
        selection = data.draw(hnp.basic_indices(expected.shape, allow_newaxis=False,
                                                allow_ellipsis=True), label="read")
        np.testing.assert_array_equal(case.array[selection], expected[selection])
    for _ in range(2):
        selection = data.draw(hnp.basic_indices(expected.shape, allow_newaxis=False,
                                                allow_ellipsis=True), label="write")
        value = data.draw(write_value(expected.dtype, expected[selection].shape), label="value")
        expected[selection] = value
        case.array[selection] = value
        check_sharded(case, expected)


@PROPERTY_SETTINGS
@given(case=sharded_cases(), data=st.data())
def test_sharded_oindex_matches_numpy(case: ShardedCase, data: st.DataObject) -> None:
    expected = case.expected.copy()
    selection, index_arrays, keeps = data.draw(orthogonal_selections(expected.shape), "read")
    want = expected[np.ix_(*index_arrays)].reshape(kept_shape(index_arrays, keeps))
    np.testing.assert_array_equal(case.array.oindex[selection], want)
    scalar = data.draw(st.booleans(), label="scalar")
    selection, index_arrays, keeps = data.draw(
        orthogonal_selections(expected.shape, unique=not scalar), label="write")
    target = kept_shape(index_arrays, keeps)
    value = data.draw(write_value(expected.dtype, target, scalar_only=scalar), label="value")
    mesh = np.ix_(*index_arrays)
    if scalar:
        expected[mesh] = value
    else:
        expected[mesh] = np.broadcast_to(value, target).reshape(expected[mesh].shape)
    case.array.oindex[selection] = value
    check_sharded(case, expected)


@PROPERTY_SETTINGS
@given(case=sharded_cases(min_side=1), data=st.data())
def test_sharded_vindex_matches_numpy(case: ShardedCase, data: st.DataObject) -> None:
    expected = case.expected.copy()
    shape = expected.shape
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=len(shape), min_dims=0,
                                                         max_dims=2, max_side=5), "shapes")
    coords = tuple(data.draw(hnp.arrays(np.intp, s, elements=st.integers(-n, n - 1)), "coords")
                   for s, n in zip(shapes.input_shapes, shape, strict=True))
    np.testing.assert_array_equal(case.array.vindex[coords], expected[coords])
    mask = data.draw(hnp.arrays(np.bool_, shape), label="mask")
    np.testing.assert_array_equal(case.array.vindex[mask], expected[mask])
    points = np.ravel_multi_index(
        tuple(b % n for b, n in zip(np.broadcast_arrays(*coords), shape, strict=True)), shape)
    unique = np.unique(points).size == points.size
    value = data.draw(write_value(expected.dtype, shapes.result_shape, scalar_only=not unique),
                      label="value")
    expected[coords] = value
    case.array.vindex[coords] = value
    check_sharded(case, expected)
    value = data.draw(write_value(expected.dtype, expected[mask].shape), label="mask value")
    expected[mask] = value
    case.array.vindex[mask] = value
    check_sharded(case, expected)


@PROPERTY_SETTINGS
@given(case=sharded_cases(), data=st.data())
def test_sharded_blocks_match_numpy(case: ShardedCase, data: st.DataObject) -> None:
    # A block of a sharded array is a shard, as in zarr-python (whose ``blocks`` follow the
    # grid of stored objects, while its cdata_shape and nchunks count inner chunks).
    expected = case.expected.copy()
    shards = case.array.shards
    assert shards is not None
    selection, regions = data.draw(block_selections(expected.shape, shards), label="read")
    np.testing.assert_array_equal(case.array.blocks[selection], expected[regions])
    selection, regions = data.draw(block_selections(expected.shape, shards), label="write")
    value = data.draw(write_value(expected.dtype, expected[regions].shape), label="value")
    expected[regions] = value
    case.array.blocks[selection] = value
    check_sharded(case, expected)


def test_sharded_blocks_agree_with_zarr_python_and_the_whole_shard_path() -> None:
    store = MemoryStore()
    a = make_sharded(store, shape=(8,), chunks=(2,), shards=(4,))
    a[...] = np.arange(8)
    # zarr-python on the same bytes
    theirs = zarr.open_array(store=_zarr_store_copy(store), path="x", mode="r")
    assert theirs.chunks == a.chunks and theirs.shards == a.shards
    assert a.cdata_shape == theirs.cdata_shape == (4,) and a.nchunks == theirs.nchunks == 4
    assert a.nchunks_initialized == theirs.nchunks_initialized == 4
    np.testing.assert_array_equal(theirs.blocks[1], [4, 5, 6, 7])
    # the same array with a checksum after the shard (no partial I/O in zarrkit)
    document = json.loads(store._data["x/zarr.json"])
    document["codecs"].append({"name": "crc32c"})
    other = MemoryStore({"x/zarr.json": json.dumps(document).encode()})
    b = zk.open_array(other, path="x", mode="r+")
    b[...] = np.arange(8)
    # Sharded, for zarr-python, means sharding_indexed is the only codec.
    theirs_b = zarr.open_array(store=_zarr_store_copy(other), path="x", mode="r")
    assert (b.chunks, b.shards) == (theirs_b.chunks, theirs_b.shards) == ((4,), None)
    np.testing.assert_array_equal(b.blocks[1], [4, 5, 6, 7])
    np.testing.assert_array_equal(a.blocks[1], b.blocks[1])


# === 2. bad input ==========================================================================


def bad_shard_store(compressors: Any = None) -> tuple[MemoryStore, np.ndarray]:
    """Groups at the root and ``data``, a sharded array at ``data/arr`` (shards 4x4 of
    2x2 inner chunks) holding data in every inner chunk, and an intact second shard."""
    store = MemoryStore()
    zk.open_group(store, mode="w", zarr_format=3)
    a = make_sharded(store, ARRAY, shape=(8, 8), chunks=(2, 2), shards=(4, 4),
                     compressors=compressors)
    data = random_ints((8, 8), high=1000)
    a[...] = data
    return store, data


def corrupt_shard(store: MemoryStore, new: bytes) -> zk.Array:
    store.set(SHARD, new)
    return zk.open_array(store, path=ARRAY, mode="r+")


def assert_shard_error(store: MemoryStore, array: zk.Array, data: np.ndarray,
                       *extra: str) -> None:
    """Reads touching the bad shard and writes into it raise ChunkDecodeError naming the
    array and the shard key, and change nothing; the other shards still read."""
    fragments = (ARRAY_NAME, SHARD, *extra)
    with unchanged(store):
        check_raises(ChunkDecodeError, fragments, lambda: array[0, 0])
        check_raises(ChunkDecodeError, fragments, lambda: array[...])
        check_raises(ChunkDecodeError, fragments, lambda: array.oindex[[0, 5], [1]])
    with unchanged(store):
        check_raises(ChunkDecodeError, fragments, lambda: array.__setitem__((0, 0), 1))
    np.testing.assert_array_equal(array[4:8, :], data[4:8, :])


def test_truncated_shard_index() -> None:
    store, data = bad_shard_store()
    raw = store.get(SHARD)
    assert raw is not None
    array = corrupt_shard(store, raw[:10])
    assert_shard_error(store, array, data)


def test_shard_index_checksum_mismatch() -> None:
    store, data = bad_shard_store()
    raw = bytearray(store.get(SHARD) or b"")
    raw[-index_nbytes((2, 2)) + 3] ^= 0xFF  # inside the entries: the crc32c no longer fits
    array = corrupt_shard(store, bytes(raw))
    assert_shard_error(store, array, data, "crc32c")


def test_shard_index_entry_past_the_end_of_the_shard() -> None:
    store, data = bad_shard_store()
    raw = store.get(SHARD)
    assert raw is not None
    parts = shard_parts(raw, (2, 2))

    def tweak(entries: np.ndarray) -> None:
        entries[0, 0] = (len(raw) + 100, 16)

    array = corrupt_shard(store, build_shard(parts, (2, 2), tweak))
    assert_shard_error(store, array, data)


@pytest.mark.parametrize("compressors", [None, "auto"])
def test_inner_chunk_that_decodes_to_the_wrong_size(compressors: Any) -> None:
    store, data = bad_shard_store(compressors)
    raw = store.get(SHARD)
    assert raw is not None
    parts = shard_parts(raw, (2, 2))
    short = np.arange(3, dtype="<i4").tobytes()  # 12 bytes where 16 are needed
    parts[(0, 0)] = short if compressors is None else numcodecs.Zstd().encode(short)
    array = corrupt_shard(store, build_shard(parts, (2, 2)))
    assert_shard_error(store, array, data)


def array_document(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {"k": "v"},
    }
    document.update(changes)
    return document


def store_with_array(document: dict[str, Any]) -> MemoryStore:
    store = MemoryStore()
    zk.open_group(store, mode="w", zarr_format=3)
    zk.open_group(store, mode="w", path="data", zarr_format=3)
    store.set(f"{ARRAY}/zarr.json", json.dumps(document).encode())
    store.set(f"{ARRAY}/c/0", np.array([1, 2], dtype="<i4").tobytes())
    return store


def all_openers(store: MemoryStore) -> list[Callable[[], Any]]:
    return [
        lambda: zk.open_array(store, path=ARRAY, mode="r"),
        lambda: zk.open_array(store, path=ARRAY, mode="r+"),
        lambda: zk.open(store, path=ARRAY, mode="r"),
        lambda: zk.open_group(store, mode="r")[ARRAY],
    ]


def assert_open_fails(store: MemoryStore, error: type[ZarrkitError],
                      fragments: tuple[str, ...]) -> None:
    with unchanged(store):
        for opener in all_openers(store):
            check_raises(error, (ARRAY, *fragments), opener)


def test_sanity_valid_document_opens() -> None:
    store = store_with_array(array_document())
    for opener in all_openers(store):
        np.testing.assert_array_equal(opener()[...], [1, 2, 0, 0])


@pytest.mark.parametrize("where", ["top", "sharding inner codecs"])
def test_unknown_codec_name(where: str) -> None:
    if where == "top":
        codecs = [{"name": "bytes", "configuration": {"endian": "little"}},
                  {"name": "no-such-codec"}]
        document = array_document(codecs=codecs)
    else:
        document = array_document(codecs=[{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "no-such-codec"}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c"}],
        }}])
    store = store_with_array(document)
    assert_open_fails(store, UnknownCodecError, ("no-such-codec",))


def test_bytes_codec_without_endian_for_int32() -> None:
    store = store_with_array(array_document(codecs=[{"name": "bytes"}]))
    assert_open_fails(store, MetadataError, ("endian",))
    store = store_with_array(array_document(codecs=["bytes"]))
    assert_open_fails(store, MetadataError, ("endian",))


@pytest.mark.parametrize("value", [{"x": 1}, {"must_understand": True}, 5, "text"])
def test_unknown_top_level_field_must_be_understood(value: Any) -> None:
    store = store_with_array(array_document(my_extension=value))
    assert_open_fails(store, UnsupportedExtensionError, ("my_extension",))


def test_ignorable_extension_is_kept_and_written_back() -> None:
    extension = {"must_understand": False, "configuration": {"nested": [1, {"a": None}]}}
    store = store_with_array(array_document(my_extension=extension))
    array = zk.open_array(store, path=ARRAY, mode="r+")
    np.testing.assert_array_equal(array[...], [1, 2, 0, 0])
    array.attrs["new"] = 1
    document = json.loads(store._data[f"{ARRAY}/zarr.json"])
    assert document["my_extension"] == extension
    assert document["attributes"] == {"k": "v", "new": 1}
    array.resize(6)
    document = json.loads(store._data[f"{ARRAY}/zarr.json"])
    assert document["my_extension"] == extension
    assert document["shape"] == [6]
    # and on a group
    store.set("data/zarr.json", json.dumps(
        {"zarr_format": 3, "node_type": "group", "attributes": {}, "g_ext": extension}).encode())
    group = zk.open_group(store, path="data", mode="r+")
    group.attrs["x"] = 2
    document = json.loads(store._data["data/zarr.json"])
    assert document["g_ext"] == extension
    assert document["attributes"] == {"x": 2}


def test_unknown_data_type() -> None:
    store = store_with_array(array_document(data_type="float1024"))
    assert_open_fails(store, UnknownDataTypeError, ("float1024",))
    assert issubclass(UnknownDataTypeError, UnsupportedDataTypeError)
    store = store_with_array(array_document(data_type={"name": "my.type", "configuration": {}}))
    assert_open_fails(store, UnsupportedDataTypeError, ("my.type",))


def test_unknown_chunk_key_encoding() -> None:
    store = store_with_array(array_document(chunk_key_encoding={"name": "hilbert"}))
    assert_open_fails(store, UnsupportedExtensionError, ("hilbert",))


# === 3. extension points: a registered codec ===============================================


class XorCodec(BytesBytesCodec):
    """A test codec: every byte XORed with ``key``."""

    name = "test.xor"

    def __init__(self, configuration: Mapping[str, Any], spec: Any) -> None:
        super().__init__(configuration, spec)
        key = configuration.get("key", 0)
        if not isinstance(key, int) or not 0 <= key < 256:
            raise MetadataError(f"codec 'test.xor': bad key {key!r}")
        self.key = key

    def configuration(self) -> dict[str, Any]:
        return {"key": self.key}

    def encoded_size(self, size: int) -> int:
        return size

    def encode(self, data: bytes) -> bytes:
        return (np.frombuffer(data, dtype=np.uint8) ^ np.uint8(self.key)).tobytes()

    def decode(self, data: Any, *, what: str, limit: int, exact: bool) -> bytes:
        out = (np.frombuffer(data, dtype=np.uint8) ^ np.uint8(self.key)).tobytes()
        if len(out) > limit or (exact and len(out) != limit):
            raise ChunkDecodeError(f"{what}: {len(out)} bytes, expected {limit}")
        return out


@pytest.fixture()
def xor_codec() -> Iterator[None]:
    register_codec_v3("test.xor", XorCodec.from_config)
    yield


def xor(data: bytes, key: int) -> bytes:
    return (np.frombuffer(data, dtype=np.uint8) ^ np.uint8(key)).tobytes()


def test_registered_bytes_codec_is_used_by_name(xor_codec: None) -> None:
    store = MemoryStore()
    a = zk.create_array(store, name="x", shape=(6, 5), chunks=(3, 5), dtype="<u2",
                        compressors=[{"name": "test.xor", "configuration": {"key": 0x5A}}],
                        zarr_format=3)
    data = np.arange(30, dtype="<u2").reshape(6, 5) * 1000
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    document = json.loads(store._data["x/zarr.json"])
    assert document["codecs"][-1] == {"name": "test.xor", "configuration": {"key": 0x5A}}
    for i in range(2):
        stored = store._data[f"x/c/{i}/0"]
        assert stored == xor(data[3 * i:3 * i + 3].tobytes(), 0x5A)
    fresh = zk.open_array(store, path="x", mode="r")
    np.testing.assert_array_equal(fresh[1:5, 2], data[1:5, 2])


def test_registered_codec_inside_shards(xor_codec: None) -> None:
    store = MemoryStore()
    a = make_sharded(store, shape=(4, 4), chunks=(2, 2), shards=(4, 4), dtype="u1",
                     compressors=[{"name": "test.xor", "configuration": {"key": 0xFF}}])
    data = np.arange(1, 17, dtype="u1").reshape(4, 4)
    a[...] = data
    np.testing.assert_array_equal(zk.open_array(store, path="x")[...], data)
    parts = shard_parts(store._data["x/c/0/0"], (2, 2))
    for (i, j), stored in parts.items():
        block = np.ascontiguousarray(data[2 * i:2 * i + 2, 2 * j:2 * j + 2])
        assert stored == xor(block.tobytes(), 0xFF)


# === 4. groups =============================================================================


def test_group_zarr_json() -> None:
    store = MemoryStore()
    root = zk.open_group(store, mode="w", zarr_format=3, attributes={"title": "t"})
    root.create_group("sub/deeper", attributes={"n": 1})
    assert json.loads(store._data["zarr.json"]) == {
        "zarr_format": 3, "node_type": "group", "attributes": {"title": "t"}}
    assert json.loads(store._data["sub/zarr.json"])["node_type"] == "group"
    assert json.loads(store._data["sub/deeper/zarr.json"]) == {
        "zarr_format": 3, "node_type": "group", "attributes": {"n": 1}}
    assert not any(k.rsplit("/", 1)[-1].startswith(".z") for k in store._data)
    again = zk.open_group(store, mode="r")
    assert again.zarr_format == 3
    assert again["sub/deeper"].attrs["n"] == 1


def test_16_threads_creating_siblings_under_a_missing_ancestor() -> None:
    store = LatencyStore()
    root = zk.open_group(store, mode="w", zarr_format=3)
    arrays: dict[int, zk.Array] = {}

    def work(i: int) -> None:
        arrays[i] = root.create_array(f"a/x{i}", shape=(4,), chunks=(2,), dtype="i2",
                                      data=np.full(4, i, dtype="i2"))

    run_threads(16, work)
    assert json.loads(store._data["a/zarr.json"])["node_type"] == "group"
    fresh = zk.open_group(store, mode="r", consolidated=False)
    group = fresh["a"]
    assert isinstance(group, zk.Group)
    assert sorted(group) == sorted(f"x{i}" for i in range(16))
    for i in range(16):
        np.testing.assert_array_equal(fresh[f"a/x{i}"][...], np.full(4, i, dtype="i2"))


def test_node_without_ancestor_metadata_opens() -> None:
    source = MemoryStore()
    made = zk.create_array(source, name="arr", shape=(3, 4), chunks=(2, 2), dtype="<f4",
                           zarr_format=3, attributes={"units": "m"})
    data = np.arange(12, dtype="<f4").reshape(3, 4)
    made[...] = data
    store = MemoryStore()
    for key, value in source._data.items():
        if key.startswith("arr/"):
            store.set("p/q/" + key, value)
    assert "zarr.json" not in store._data and "p/zarr.json" not in store._data
    with unchanged(store):
        a = zk.open_array(store, path="p/q/arr", mode="r")
        np.testing.assert_array_equal(a[...], data)
        assert a.attrs["units"] == "m"
        node = zk.open(store, path="p/q/arr", mode="r")
        assert isinstance(node, zk.Array)
        np.testing.assert_array_equal(node[1:, 1], data[1:, 1])
    writable = zk.open_array(store, path="p/q/arr", mode="r+")
    writable[0, 0] = 9
    assert zk.open(store, path="p/q/arr")[0, 0] == 9


# === 5. consolidated metadata ==============================================================


def build_hierarchy(store: Any) -> dict[str, np.ndarray]:
    root = zk.open_group(store, mode="w", zarr_format=3, attributes={"title": "t"})
    g = root.create_group("g", attributes={"k": 1})
    g.create_group("sub/deep", attributes={"level": 3})
    values = {
        "g/a": np.arange(12, dtype="<i4").reshape(3, 4),
        "b": np.linspace(0, 1, 5),
        "g/sub/s": np.arange(16, dtype="u1").reshape(4, 4),
    }
    root.create_array("g/a", shape=(3, 4), chunks=(2, 2), dtype="<i4", data=values["g/a"],
                      attributes={"units": "m"})
    root.create_array("b", shape=(5,), chunks=(2,), dtype="<f8", data=values["b"])
    root.create_array("g/sub/s", shape=(4, 4), chunks=(2, 2), shards=(4, 4), dtype="u1",
                      data=values["g/sub/s"], dimension_names=["y", "x"])
    return values


def describe(group: zk.Group) -> dict[str, Any]:
    """What a walk of the hierarchy shows: kind, shape, dtype, chunks, attributes."""
    out: dict[str, Any] = {"": ("group", dict(group.attrs))}
    for name, node in group.members(max_depth=None):
        if isinstance(node, zk.Array):
            out[name] = ("array", node.shape, str(node.dtype), node.chunks, node.shards,
                         dict(node.attrs), node.dimension_names)
        else:
            out[name] = ("group", dict(node.attrs))
    return out


def test_consolidate_writes_inline_metadata_as_zarr_python() -> None:
    store = MemoryStore()
    build_hierarchy(store)
    zk.consolidate_metadata(store)
    document = json.loads(store._data["zarr.json"])
    assert document["node_type"] == "group" and document["attributes"] == {"title": "t"}
    inline = document["consolidated_metadata"]
    assert inline["kind"] == "inline" and inline["must_understand"] is False
    assert sorted(inline["metadata"]) == ["b", "g", "g/a", "g/sub", "g/sub/deep", "g/sub/s"]
    for path, entry in inline["metadata"].items():
        own = json.loads(store._data[f"{path}/zarr.json"])
        if own["node_type"] == "group":
            # A nested group's own snapshot is written empty, as zarr-python writes it.
            assert entry["consolidated_metadata"] == {
                "kind": "inline", "must_understand": False, "metadata": {}}
            assert list(entry) == ["attributes", "zarr_format", "consolidated_metadata",
                                   "node_type"]
            own.pop("consolidated_metadata", None)
            entry = {k: v for k, v in entry.items() if k != "consolidated_metadata"}
        assert entry == own, path
    # zarr-python reads it, and its own consolidation of the same hierarchy agrees
    ours = zarr.open_group(store=_zarr_store_copy(store), mode="r", use_consolidated=True)
    assert ours.metadata.consolidated_metadata is not None
    names = sorted(k for k, _ in ours.members(max_depth=None))
    assert names == sorted(inline["metadata"])
    plain = dict(store._data)
    plain["zarr.json"] = json.dumps({k: v for k, v in document.items()
                                     if k != "consolidated_metadata"}).encode()
    theirs_store = _zarr_store_copy(MemoryStore(plain))
    zarr.consolidate_metadata(theirs_store)
    theirs = json.loads(_zarr_store_copy_back(theirs_store)["zarr.json"])
    reference = theirs["consolidated_metadata"]
    assert reference["kind"] == inline["kind"]
    assert reference["must_understand"] == inline["must_understand"]
    assert sorted(reference["metadata"]) == sorted(inline["metadata"])
    for path, entry in reference["metadata"].items():
        assert entry == inline["metadata"][path], path


def _zarr_store_copy(store: MemoryStore) -> Any:
    """A zarr-python MemoryStore holding the same keys and bytes."""
    from zarr.core.buffer import default_buffer_prototype

    prototype = default_buffer_prototype()
    return zarr.storage.MemoryStore(
        {k: prototype.buffer.from_bytes(v) for k, v in store._data.items()})


def _zarr_store_copy_back(store: Any) -> dict[str, bytes]:
    return {k: v.to_bytes() for k, v in store._store_dict.items()}


def test_open_consolidated_needs_no_listing_and_no_node_metadata_reads() -> None:
    store = RecordingStore()
    values = build_hierarchy(store)
    expected = describe(zk.open_group(store, mode="r", consolidated=False))
    zk.consolidate_metadata(store)
    store.reset()

    g = zk.open_group(store, mode="r", consolidated=True)
    assert g.consolidated
    assert describe(g) == expected
    assert sorted(g) == ["b", "g"] and "g/sub/deep" in g and "g/nope" not in g
    assert sorted(g["g"].group_keys()) == ["sub"]
    assert sorted(g["g"].array_keys()) == ["a"]
    for path, data in values.items():
        np.testing.assert_array_equal(g[path][...], data)

    assert store.ops("list") == [], store.ops("list")
    metadata_reads = [c.key for c in store.ops("get", "get_range")
                      if c.key.endswith("zarr.json")]
    assert metadata_reads == ["zarr.json"], metadata_reads


def consolidated_matches_store(store: Any) -> None:
    consolidated = zk.open_group(store, mode="r", consolidated=True)
    plain = zk.open_group(store, mode="r", consolidated=False)
    assert describe(consolidated) == describe(plain)


def changes() -> list[tuple[str, Callable[[Any], None]]]:
    def create_via_group(store: Any) -> None:
        zk.open_group(store, mode="r+").create_array("g/new", shape=(2,), dtype="u1")

    def create_via_api(store: Any) -> None:
        zk.create_array(store, name="g/sub/other", shape=(3,), dtype="i8", zarr_format=3,
                        attributes={"a": 1})

    def create_group_deep(store: Any) -> None:
        zk.open_group(store, mode="r+")["g"].create_group("x/y/z", attributes={"z": 1})

    def delete_array(store: Any) -> None:
        del zk.open_group(store, mode="r+")["g/a"]

    def delete_group(store: Any) -> None:
        del zk.open_group(store, mode="r+", path="g")["sub"]

    def resize(store: Any) -> None:
        zk.open_array(store, path="g/a", mode="r+").resize(7, 2)

    def append(store: Any) -> None:
        zk.open_array(store, path="b", mode="r+").append(np.ones(4))

    def array_attrs(store: Any) -> None:
        zk.open_array(store, path="g/sub/s", mode="r+").attrs.update({"new": [1, 2]})

    def group_attrs(store: Any) -> None:
        zk.open_group(store, path="g/sub/deep", mode="r+").attrs["level"] = 4

    def root_attrs(store: Any) -> None:
        zk.open_group(store, mode="r+").attrs["title"] = "changed"

    def overwrite(store: Any) -> None:
        zk.create_array(store, name="g/a", shape=(9,), dtype="f4", zarr_format=3,
                        overwrite=True)

    return [(f.__name__, f) for f in (
        create_via_group, create_via_api, create_group_deep, delete_array, delete_group,
        resize, append, array_attrs, group_attrs, root_attrs, overwrite)]


CHANGES = changes()


@pytest.mark.parametrize(("label", "change"), CHANGES, ids=[label for label, _ in CHANGES])
def test_changes_refresh_the_inline_snapshot(label: str, change: Callable[[Any], None]
                                             ) -> None:
    store = MemoryStore()
    build_hierarchy(store)
    zk.consolidate_metadata(store)
    before = describe(zk.open_group(store, mode="r", consolidated=True))
    change(store)
    consolidated_matches_store(store)
    assert describe(zk.open_group(store, mode="r", consolidated=True)) != before, label
    assert json.loads(store._data["zarr.json"])["consolidated_metadata"]["kind"] == "inline"


def test_changes_refresh_a_subgroup_snapshot() -> None:
    store = MemoryStore()
    build_hierarchy(store)
    zk.consolidate_metadata(store, path="g")
    zk.open_group(store, mode="r+", path="g").create_array("fresh", shape=(2,), dtype="u1")
    zk.open_array(store, path="g/a", mode="r+").attrs["units"] = "km"
    consolidated = zk.open_group(store, mode="r", path="g", consolidated=True)
    plain = zk.open_group(store, mode="r", path="g", consolidated=False)
    assert describe(consolidated) == describe(plain)
    assert "fresh" in json.loads(store._data["g/zarr.json"])["consolidated_metadata"]["metadata"]


def test_all_changes_together_seen_by_zarr_python(tmp_path: Any) -> None:
    store = zk.DirectoryStore(tmp_path)
    build_hierarchy(store)
    zk.consolidate_metadata(store)
    by_name = dict(CHANGES)
    for name in ("create_via_group", "create_via_api", "create_group_deep", "resize", "append",
                 "array_attrs", "group_attrs", "root_attrs", "delete_array", "overwrite",
                 "delete_group"):
        by_name[name](store)
    consolidated_matches_store(store)
    zgroup = zarr.open_group(store=str(tmp_path), mode="r", use_consolidated=True)
    assert zgroup.metadata.consolidated_metadata is not None
    theirs = dict(zgroup.members(max_depth=None))
    plain = zk.open_group(store, mode="r", consolidated=False)
    assert sorted(theirs) == sorted(name for name, _ in plain.members(max_depth=None))
    for name, node in theirs.items():
        mine = plain[name]
        assert isinstance(node, zarr.Array) == isinstance(mine, zk.Array), name
        assert dict(node.attrs) == dict(mine.attrs), name
        if isinstance(node, zarr.Array):
            assert node.shape == mine.shape, name
    assert dict(zgroup.attrs) == {"title": "changed"}


def test_zarr_python_consolidated_hierarchy_opens_without_listing(tmp_path: Any) -> None:
    root = zarr.open_group(str(tmp_path), mode="w", zarr_format=3, attributes={"t": 1})
    g = root.create_group("g", attributes={"k": 1})
    g.create_group("sub/deep", attributes={"d": 2})
    z = g.create_array("a", shape=(4, 4), chunks=(2, 2), shards=(4, 4), dtype="<i4")
    z[...] = np.arange(16).reshape(4, 4)
    zarr.consolidate_metadata(str(tmp_path))
    store = RecordingStore()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            store.set(path.relative_to(tmp_path).as_posix(), path.read_bytes())
    expected = describe(zk.open_group(store, mode="r", consolidated=False))
    store.reset()
    ours = zk.open_group(store, mode="r", consolidated=True)
    assert describe(ours) == expected
    np.testing.assert_array_equal(ours["g/a"][...], np.arange(16).reshape(4, 4))
    assert store.ops("list") == []
    assert [c.key for c in store.ops("get", "get_range") if is_metadata_key(c.key)] == [
        "zarr.json"]
    zk.open_group(store, mode="r+").create_array("g/sub/new", shape=(2,), dtype="u1")
    consolidated_matches_store(store)


def test_16_threads_creating_arrays_under_a_consolidated_root() -> None:
    store = LatencyStore()
    root = zk.open_group(store, mode="w", zarr_format=3)
    zk.consolidate_metadata(store)

    def work(i: int) -> None:
        root.create_array(f"a/x{i}", shape=(2,), dtype="u1")

    run_threads(16, work)
    assert sorted(zk.open_group(store, path="a", mode="r")) == sorted(
        f"x{i}" for i in range(16))
    inline = json.loads(store._data["zarr.json"])["consolidated_metadata"]["metadata"]
    assert sorted(inline) == sorted(["a", *(f"a/x{i}" for i in range(16))])
    consolidated_matches_store(store)


# === 6. conversion and migration ===========================================================


def build_v2_hierarchy(store: MemoryStore) -> dict[str, np.ndarray]:
    root = zk.open_group(store, mode="w", zarr_format=2, attributes={"title": "v2"})
    g = root.create_group("g", attributes={"k": [1, 2]})
    values = {
        "g/a": random_ints((20, 18), seed=1, high=1000),
        "b": np.linspace(-5, 5, 15 * 9).reshape(15, 9),
        "g/plain_f": np.arange(30, dtype="<i2").reshape(5, 6),
        "g/f": np.arange(30, dtype="<i8").reshape(5, 6) ** 2,
        "g/e": np.arange(30, dtype=">i8").reshape(5, 6) ** 2,
    }
    g.create_array("a", shape=(20, 18), chunks=(7, 5), dtype="<i4", data=values["g/a"],
                   attributes={"units": "m", "_ARRAY_DIMENSIONS": ["y", "x"]})
    root.create_array("b", shape=(15, 9), chunks=(4, 4), dtype="<f8", fill_value=np.nan,
                      data=values["b"], compressors=[numcodecs.Blosc("lz4")])
    # F order alone; F order with a filter; a big-endian filter
    root.create_array("g/plain_f", shape=(5, 6), chunks=(2, 4), dtype="<i2", order="F",
                      data=values["g/plain_f"], dimension_separator="/")
    root.create_array("g/f", shape=(5, 6), chunks=(2, 4), dtype="<i8", order="F",
                      data=values["g/f"], filters=[{"id": "delta", "dtype": "<i8"}])
    root.create_array("g/e", shape=(5, 6), chunks=(2, 4), dtype=">i8",
                      data=values["g/e"], filters=[{"id": "delta", "dtype": ">i8"}],
                      dimension_separator="/")
    return values


def mismatches(read: Callable[[str], Any], values: dict[str, np.ndarray]) -> list[str]:
    """Paths whose values (read with ``read``) differ from ``values``."""
    return [path for path, data in values.items()
            if not np.array_equal(np.asarray(read(path)), data, equal_nan=True)]


def test_convert_v2_to_v3_with_new_chunks_and_shards_and_back() -> None:
    source = MemoryStore()
    values = build_v2_hierarchy(source)
    before = dict(source._data)
    progress: list[tuple[int, int]] = []
    dest = MemoryStore()
    result = zk.convert(source, dest, zarr_format=3,
                        compressors=[{"name": "gzip", "configuration": {"level": 1}}],
                        chunks=(2, 3), shards=(4, 6),
                        progress=lambda done, total: progress.append((done, total)))
    assert dict(source._data) == before
    assert isinstance(result, zk.Group) and result.zarr_format == 3
    assert not any(k.rsplit("/", 1)[-1].startswith(".z") for k in dest._data)
    converted = zk.open_group(dest, mode="r")
    assert dict(converted.attrs) == {"title": "v2"}
    assert dict(converted["g"].attrs) == {"k": [1, 2]}
    for path in values:
        a = converted[path]
        assert isinstance(a, zk.Array)
        assert a.zarr_format == 3 and a.chunks == (2, 3) and a.shards == (4, 6)
        inner = json.loads(dest._data[f"{path}/zarr.json"])["codecs"][0]
        assert inner["name"] == "sharding_indexed"
        assert inner["configuration"]["codecs"][-1] == {"name": "gzip",
                                                        "configuration": {"level": 1}}
    assert converted["g/a"].attrs["units"] == "m"
    assert converted["g/a"].dimension_names == ("y", "x")
    assert np.isnan(converted["b"].fill_value)
    total = sum(d.nbytes for d in values.values())
    assert progress and progress[-1] == (total, total)
    dones = [d for d, _ in progress]
    assert dones == sorted(dones) and all(t == total for _, t in progress)
    assert len(set(dones)) > 1

    back = MemoryStore()
    zk.convert(dest, back, zarr_format=2, progress=False)
    assert "zarr.json" not in back._data and ".zgroup" in back._data
    reopened = zk.open_group(back, mode="r")
    assert reopened.zarr_format == 2 and dict(reopened.attrs) == {"title": "v2"}
    assert dict(reopened["g"].attrs) == {"k": [1, 2]}
    for path in values:
        a = reopened[path]
        assert a.zarr_format == 2 and a.shards is None and a.chunks == (2, 3)

    wrong_v3 = mismatches(lambda p: converted[p][...], values)
    wrong_v2 = mismatches(lambda p: reopened[p][...], values)
    assert (wrong_v3, wrong_v2) == ([], []), "arrays with wrong values in v3, back in v2"


def test_migrate_metadata_rewrites_metadata_only() -> None:
    store = MemoryStore()
    values = build_v2_hierarchy(store)
    chunks_before = {k: v for k, v in store._data.items() if not is_metadata_key(k)}
    attrs_before = {name: dict(node.attrs) for name, node in
                    zk.open_group(store, mode="r").members(max_depth=None)}
    migrated = zk.migrate_metadata(store)
    nodes = ["", "b", "g", *sorted(p for p in values if p.startswith("g/"))]
    assert sorted(migrated) == sorted(nodes)
    metadata = {k for k in store._data if is_metadata_key(k)}
    assert metadata == {f"{p}/zarr.json" if p else "zarr.json" for p in nodes}
    assert {k: v for k, v in store._data.items() if k not in metadata} == chunks_before
    group = zk.open_group(store, mode="r")
    assert group.zarr_format == 3 and dict(group.attrs) == {"title": "v2"}
    for name, node in group.members(max_depth=None):
        assert node.zarr_format == 3
        assert dict(node.attrs) == attrs_before[name], name
    assert group["g/a"].dimension_names == ("y", "x")
    wrong = mismatches(lambda p: zk.open_array(store, path=p, mode="r")[...], values)
    assert wrong == [], f"zarrkit reads wrong values after migration: {wrong}"


def test_migrated_hierarchy_reads_the_same_in_zarr_python() -> None:
    store = MemoryStore()
    values = build_v2_hierarchy(store)
    zk.migrate_metadata(store)
    theirs = zarr.open_group(store=_zarr_store_copy(store), mode="r")
    wrong = mismatches(lambda p: theirs[p][...], values)
    assert wrong == [], f"zarr-python reads wrong values after migration: {wrong}"


def test_migrate_metadata_refuses_structured_dtype_and_writes_nothing() -> None:
    store = MemoryStore()
    build_v2_hierarchy(store)
    zk.create_array(store, name="g/rec", shape=(3,), dtype=[("x", "<i4"), ("y", "<f4")],
                    zarr_format=2)
    with unchanged(store):
        check_raises(MetadataError, ("g/rec",), lambda: zk.migrate_metadata(store))


# === 7. defaults ===========================================================================


def test_create_array_v3_defaults() -> None:
    store = MemoryStore()
    a = zk.create_array(store, name="a", shape=(5, 6), chunks=(2, 3), dtype="<i4",
                        dimension_names=["y", None], zarr_format=3)
    assert a.zarr_format == 3 and a.shards is None and a.chunks == (2, 3)
    document = json.loads(store._data["a/zarr.json"])
    assert document["zarr_format"] == 3 and document["node_type"] == "array"
    assert document["chunk_key_encoding"] == {"name": "default",
                                              "configuration": {"separator": "/"}}
    assert document["chunk_grid"] == {"name": "regular",
                                      "configuration": {"chunk_shape": [2, 3]}}
    assert document["data_type"] == "int32" and document["fill_value"] == 0
    assert document["dimension_names"] == ["y", None]
    assert [c["name"] for c in document["codecs"]] == ["bytes", "zstd"]
    assert document["codecs"][0]["configuration"] == {"endian": "little"}
    assert a.dimension_names == ("y", None)
    a[2:4, 3:6] = 1
    assert stored_chunk_keys(store, "a") == ["a/c/1/1"]
    a[4, 0] = 2
    assert stored_chunk_keys(store, "a") == ["a/c/1/1", "a/c/2/0"]
    assert numcodecs.Zstd().decode(store._data["a/c/2/0"]) == np.array(
        [[2, 0, 0], [0, 0, 0]], dtype="<i4").tobytes()
    # no format given: format 3 too
    b = zk.create_array(store, name="b", shape=(2,), dtype="u1")
    assert b.zarr_format == 3 and "b/zarr.json" in store._data
    # other chunk key encodings
    c = zk.create_array(store, name="c", shape=(4, 4), chunks=(2, 2), dtype="u1",
                        dimension_separator=".", zarr_format=3)
    c[2, 3] = 1
    assert stored_chunk_keys(store, "c") == ["c/c.1.1"]
    d = zk.create_array(store, name="d", shape=(4, 4), chunks=(2, 2), dtype="u1",
                        chunk_key_encoding={"name": "v2"}, zarr_format=3)
    d[2, 3] = 1
    assert stored_chunk_keys(store, "d") == ["d/1.1"]
    assert json.loads(store._data["d/zarr.json"])["chunk_key_encoding"] == {
        "name": "v2", "configuration": {"separator": "."}}
    np.testing.assert_array_equal(zk.open_array(store, path="d")[...], d[...])


def test_sharded_array_chunks_and_shards() -> None:
    store = MemoryStore()
    a = make_sharded(store, shape=(10, 12), chunks=(2, 3), shards=(4, 6))
    assert a.chunks == (2, 3) and a.shards == (4, 6)
    document = json.loads(store._data["x/zarr.json"])
    assert document["chunk_grid"]["configuration"]["chunk_shape"] == [4, 6]
    (codec,) = document["codecs"]
    assert codec["name"] == "sharding_indexed"
    assert codec["configuration"]["chunk_shape"] == [2, 3]
    a[...] = 1
    assert stored_chunk_keys(store, "x") == [f"x/c/{i}/{j}" for i in range(3) for j in range(2)]
    with pytest.raises(MetadataError):
        make_sharded(MemoryStore(), shape=(10,), chunks=(3,), shards=(4,))


def test_resize_shrinking_a_sharded_array_deletes_shards_outside() -> None:
    store = MemoryStore()
    a = make_sharded(store, shape=(16, 16), chunks=(2, 2), shards=(4, 4))
    data = random_ints((16, 16))
    a[...] = data
    a.resize(6, 5)
    assert a.shape == (6, 5)
    assert stored_chunk_keys(store, "x") == ["x/c/0/0", "x/c/0/1", "x/c/1/0", "x/c/1/1"]
    np.testing.assert_array_equal(a[...], data[:6, :5])
    # the parts of straddling shards outside the new shape are gone
    entries = read_index(store._data["x/c/1/1"], (2, 2))
    assert [local for local in np.ndindex(2, 2) if int(entries[local][0]) != EMPTY] == [(0, 0)]
    a.resize(16, 16)
    expected = np.zeros((16, 16), dtype="<i4")
    expected[:6, :5] = data[:6, :5]
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(zk.open_array(store, path="x")[...], expected)
    assert json.loads(store._data["x/zarr.json"])["shape"] == [16, 16]


def test_append_on_sharded_array() -> None:
    store = MemoryStore()
    a = make_sharded(store, shape=(5, 4), chunks=(2, 2), shards=(4, 4))
    data = random_ints((5, 4))
    a[...] = data
    extra = random_ints((6, 4), seed=3)
    assert a.append(extra) == (11, 4)
    expected = np.concatenate([data, extra])
    np.testing.assert_array_equal(a[...], expected)
    side = random_ints((11, 3), seed=4)
    assert a.append(side, axis=1) == (11, 7)
    expected = np.concatenate([expected, side], axis=1)
    np.testing.assert_array_equal(zk.open_array(store, path="x", mode="r")[...], expected)
