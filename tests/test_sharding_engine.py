"""The sharded I/O engine: how reads and writes of sharded arrays are split over threads,
what they ask of the store, how much memory a write holds, and that the bytes written are
exactly those of the whole-shard codec.

Oracles: numpy for values, ``ShardingCodec.encode`` for shard bytes, the store's own record
of calls, and tracemalloc for memory.

This is the Python path (the reference): the native engine's reads of whole shards of small
inner chunks are checked against it in tests/test_engine_equivalence.py."""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
import tracemalloc
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.codecs.v3 import sharding_partial
from zarrkit.codecs.v3.sharding import EMPTY, ShardBuilder, ShardIndex, coalesce_ranges
from zarrkit.concurrency import drain
from zarrkit.errors import ChunkDecodeError
from zarrkit.hierarchy import sharded
from zarrkit.hierarchy.sharded import read_sharded
from zarrkit.indexing import basic_indexer
from zarrkit.storage import MemoryStore
from zarrkit.storage.base import Buffer


@pytest.fixture(autouse=True)
def python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zk.config, "engine", "python")


BLOSC = [{"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1,
                                             "shuffle": "shuffle"}}]


class RecordingStore(MemoryStore):
    """A memory store recording each chunk read: the method, the key, and the thread."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__()
        self.calls: list[tuple[str, str, int]] = []
        self.delay = delay

    def get(self, key: str) -> bytes | None:
        if "/c/" in key:
            self.calls.append(("get", key, threading.get_ident()))
        return super().get(key)

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        if "/c/" in key:
            self.calls.append(("get_range", key, threading.get_ident()))
            time.sleep(self.delay)  # so that every thread gets a turn
        value = self._get(key)  # not self.get: that would record a whole-value read
        if value is None:
            return None
        start = max(len(value) + start, 0) if start < 0 else start
        return value[start:None if length is None else start + length]


def image(shape: tuple[int, ...], seed: int = 0) -> np.ndarray[Any, Any]:
    """Compressible but not constant uint16 data."""
    rng = np.random.default_rng(seed)
    return (1000 + rng.normal(0, 4, shape)).astype("u2")


def sharded_array(store: Any, shape: tuple[int, ...] = (16, 16, 16),
                  shards: tuple[int, ...] = (8, 8, 8), chunks: tuple[int, ...] = (4, 4, 4),
                  **kwargs: Any) -> Any:
    kwargs.setdefault("compressors", BLOSC)
    return zk.create_array(store, name="x", shape=shape, chunks=chunks, shards=shards,
                           dtype="u2", fill_value=0, zarr_format=3, **kwargs)


# --- reading ---------------------------------------------------------------------------------


SHARD_KEYS = sorted(f"x/c/{i}/{j}/{k}" for i in range(2) for j in range(2) for k in range(2))


def test_read_all_of_few_shards_per_thread_fetches_each_index_once_and_never_whole_shards(
) -> None:
    store = RecordingStore()
    a = sharded_array(store)
    data = image(a.shape)
    a[...] = data
    store.calls.clear()
    with zk.config.set(threads=8):  # 8 shards for 8 threads: ranges the threads share
        np.testing.assert_array_equal(a[...], data)
    assert [c for c in store.calls if c[0] == "get"] == []
    per_shard = Counter(key for _, key, _ in store.calls)
    # 8 shards: one index read each, and their inner chunks in one coalesced read each.
    assert sorted(per_shard) == SHARD_KEYS
    assert set(per_shard.values()) == {2}


def test_read_all_of_many_shards_per_thread_fetches_each_shard_whole_once() -> None:
    # From a store where requests are costly, with two shards or more per thread: one
    # request a shard, its index read from its bytes.
    store = RecordingStore()
    a = sharded_array(store, shape=(16, 16, 13))  # edge shards hold fewer inner chunks
    data = image(a.shape)
    a[...] = data
    store.delete("x/c/1/1/1")  # a missing shard reads as fill values
    data[8:, 8:, 8:] = 0
    store.calls.clear()
    with zk.config.set(threads=2):
        np.testing.assert_array_equal(a[...], data)  # a local store: index and ranges
        assert {c[0] for c in store.calls} == {"get_range"}
        store.calls.clear()
        store.prefers_whole_values = True
        np.testing.assert_array_equal(a[...], data)
        assert sorted(c[1] for c in store.calls) == SHARD_KEYS
        assert {c[0] for c in store.calls} == {"get"}
        store.calls.clear()
        # A shard of which some inner chunks are not wanted is still read by ranges.
        np.testing.assert_array_equal(a[:, :, 5:], data[:, :, 5:])
        assert {c[1] for c in store.calls if c[0] == "get"} == {
            k for k in SHARD_KEYS if k.endswith("/1")}


def test_one_big_shard_is_read_by_every_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shard's inner chunks are cut into several reads that the threads share, so
    reading one shard is not left to one thread."""
    monkeypatch.setattr(sharding_partial, "MAX_READ", 1)  # one read per inner chunk
    store = RecordingStore(delay=0.005)
    a = sharded_array(store, shape=(8, 8, 8))
    data = image(a.shape)
    a[...] = data
    store.calls.clear()
    with zk.config.set(threads=2):
        np.testing.assert_array_equal(a[...], data)
    data_reads = store.calls[1:]  # the first is the index
    assert len(data_reads) == 8
    assert len({thread for _, _, thread in data_reads}) == 2


def test_reads_are_cut_at_the_read_size(monkeypatch: pytest.MonkeyPatch) -> None:
    store = RecordingStore()
    a = sharded_array(store, shape=(8, 8, 8), compressors=None)
    a[...] = image(a.shape)
    inner_nbytes = 4 * 4 * 4 * 2
    monkeypatch.setattr(sharding_partial, "MAX_READ", 3 * inner_nbytes)
    store.calls.clear()
    a[...]
    assert len(store.calls) == 1 + 3  # the index, then 8 chunks in reads of at most 3


@pytest.mark.parametrize("selection", [
    (slice(None), slice(None), slice(None)),
    (slice(3, 13), 5, slice(None, None, -3)),
    (slice(None, None, 2), slice(1, 16, 5), slice(0, 9)),
    (7, 8, 9),
])
@pytest.mark.parametrize("threads", [1, 2])
def test_reads_match_numpy(selection: Any, threads: int,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Every selection planned shard by shard in the threads, however small.
    monkeypatch.setattr(sharded, "_PLAN_IN_THREADS", 0)
    a = sharded_array(MemoryStore(), shape=(15, 16, 13))  # edge shards and chunks
    data = image(a.shape)
    a[...] = data
    a[0:4, 0:4, 0:4] = 0  # one inner chunk left unstored
    data[0:4, 0:4, 0:4] = 0
    with zk.config.set(threads=threads):
        np.testing.assert_array_equal(a[selection], data[selection])
        np.testing.assert_array_equal(a.oindex[[0, 14], :, [1, 12]], data[[0, 14]][:, :, [1, 12]])


class WholeValueStore(MemoryStore):
    """A memory store that asks for whole shards, as remote stores do."""

    prefers_whole_values = True


@st.composite
def sharded_reads(draw: st.DrawFn) -> tuple[Any, ...]:
    """A sharded array's geometry (edge shards and inner chunks included), the inner
    chunks left unstored, and a basic selection of it."""
    ndim = draw(st.integers(1, 3))
    chunks = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    shards = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    shape = tuple(draw(st.integers(1, 3 * n)) for n in shards)
    holes = draw(st.lists(st.tuples(*(st.integers(0, n - 1) for n in shape)), max_size=3))
    # Whole axes and chunk-aligned slices (which the block decoding of inner chunks side
    # by side takes) as often as any slice or integer.
    selection = tuple(
        draw(st.one_of(st.just(slice(None)),
                       st.builds(lambda a, b, c=c: slice(a * c, b * c),
                                 st.integers(0, -(-n // c)), st.integers(0, -(-n // c))),
                       st.integers(-n, n - 1),
                       st.builds(slice, st.none() | st.integers(-n, n),
                                 st.none() | st.integers(-n, n),
                                 st.none() | st.sampled_from([1, 1, 2, -1, -3]))))
        for n, c in zip(shape, chunks, strict=True))
    return shape, chunks, shards, holes, selection


@settings(max_examples=150, deadline=None)
@given(case=sharded_reads(), whole=st.booleans(), threads=st.sampled_from([1, 2, 3]),
       run_chunks=st.sampled_from([2, 3, 16]), piece_chunks=st.sampled_from([1, 2, 1000]))
def test_reads_of_any_geometry_match_numpy(case: tuple[Any, ...], whole: bool, threads: int,
                                           run_chunks: int, piece_chunks: int) -> None:
    """Every read path (index and ranges, or whole shards decoded piece by piece; inner
    chunks decoded one by one, or side by side as one block) against numpy."""
    shape, chunks, shards, holes, selection = case
    store = WholeValueStore() if whole else MemoryStore()
    a = sharded_array(store, shape=shape, chunks=chunks, shards=shards)
    data = image(shape)
    a[...] = data
    for hole in holes:  # an inner chunk of fill values is not stored
        region = tuple(slice(i - i % c, i - i % c + c) for i, c in zip(hole, chunks, strict=True))
        a[region] = 0
        data[region] = 0
    item_size = math.prod(chunks) * 2
    with (pytest.MonkeyPatch.context() as patch, zk.config.set(threads=threads)):
        patch.setattr(sharding_partial, "_RUN_CHUNKS", run_chunks)
        patch.setattr(sharding_partial, "_PIECE_BYTES", piece_chunks * item_size)
        patch.setattr(sharded, "_WHOLE_SHARDS_PER_THREAD", 0)
        np.testing.assert_array_equal(a[selection], data[selection])


def test_inner_chunks_side_by_side_are_decoded_as_one_block(
        monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[int] = []
    decode_run = sharding_partial.PartialReader._decode_run

    def record(self: Any, pieces: Any, what: str, target: Any) -> None:
        runs.append(len(pieces))
        decode_run(self, pieces, what, target)

    monkeypatch.setattr(sharding_partial.PartialReader, "_decode_run", record)
    for store in (MemoryStore(), WholeValueStore()):
        a = sharded_array(store, shape=(16, 16, 16), chunks=(4, 4, 4), shards=(8, 8, 8))
        data = image(a.shape)
        a[...] = data
        runs.clear()
        with zk.config.set(threads=1):
            np.testing.assert_array_equal(a[...], data)
        # Each shard's 8 inner chunks: 4 rows of 2 chunks side by side along the last axis.
        assert runs == [2] * 32
        runs.clear()
        with zk.config.set(threads=1):  # chunks cut by the selection are decoded alone
            np.testing.assert_array_equal(a[:, :, 1:15], data[:, :, 1:15])
            assert runs == []
            # A destination with contiguous rows is decoded into directly.
            np.testing.assert_array_equal(a[0:4, 0:4, 0:8], data[0:4, 0:4, 0:8])
            assert runs == [2]
            np.testing.assert_array_equal(a[0, 0:4, 0:4], data[0, 0:4, 0:4])
            assert runs == [2]


@pytest.mark.parametrize("holes", [
    [(0, 1)],  # a gap in a row: (0, 0) and (0, 2) are not side by side
    [(0, 2), (0, 3), (1, 0), (1, 1)],  # (0, 1) ends where (1, 2) starts, a row below
    [(1, 3)],
])
@pytest.mark.parametrize("store_type", [MemoryStore, WholeValueStore])
def test_only_inner_chunks_side_by_side_in_one_row_form_a_block(
        holes: list[tuple[int, int]], store_type: type[MemoryStore],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sharded, "_WHOLE_SHARDS_PER_THREAD", 0)
    a = sharded_array(store_type(), shape=(3, 4, 8), chunks=(3, 2, 2), shards=(3, 4, 8))
    data = image(a.shape)
    a[...] = data
    for i, j in holes:
        a[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2] = 0
        data[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2] = 0
    with zk.config.set(threads=1):
        np.testing.assert_array_equal(a[...], data)
        np.testing.assert_array_equal(a[1], data[1])


def test_a_whole_shard_is_decoded_by_every_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    threads_seen: set[int] = set()
    decode_all = sharding_partial.PartialReader._decode_all
    started = threading.Barrier(2, timeout=5)

    def record(self: Any, pieces: Any, what: str, target: Any) -> None:
        threads_seen.add(threading.get_ident())
        with contextlib.suppress(threading.BrokenBarrierError):
            started.wait()  # both threads hold a piece of the first shard at once
        decode_all(self, pieces, what, target)

    monkeypatch.setattr(sharding_partial.PartialReader, "_decode_all", record)
    monkeypatch.setattr(sharding_partial, "_PIECE_BYTES", 1)  # a piece per inner chunk
    store = WholeValueStore()
    a = sharded_array(store)
    data = image(a.shape)
    a[...] = data
    with zk.config.set(threads=2):
        np.testing.assert_array_equal(a[...], data)
    assert len(threads_seen) == 2


def test_a_corrupt_whole_shard_index_is_reported() -> None:
    store = WholeValueStore()
    a = sharded_array(store)
    a[...] = image(a.shape)
    key = "x/c/0/1/0"
    raw = bytearray(store._data[key])
    raw[-1] ^= 0xFF  # the index's crc32c
    store._data[key] = bytes(raw)
    with zk.config.set(threads=2), pytest.raises(ChunkDecodeError, match="c/0/1/0"):
        a[...]
    store._data[key] = bytes(raw[:10])  # shorter than an index
    with zk.config.set(threads=2), pytest.raises(ChunkDecodeError, match="truncated"):
        a[...]


def test_read_into_a_given_output() -> None:
    a = sharded_array(MemoryStore())
    data = image(a.shape)
    a[...] = data
    out = np.zeros((16, 16, 16), "u2")
    result = read_sharded(a, basic_indexer, ..., out)
    assert result is out
    np.testing.assert_array_equal(out, data)


def test_a_corrupt_inner_chunk_is_reported_whatever_the_thread() -> None:
    store = MemoryStore()
    a = sharded_array(store)
    a[...] = image(a.shape)
    key = "x/c/1/1/1"
    raw = bytearray(store._data[key])
    raw[40:48] = b"\xff" * 8  # inside the first inner chunk's blosc stream
    store._data[key] = bytes(raw)
    with zk.config.set(threads=2), pytest.raises(ChunkDecodeError, match="c/1/1/1"):
        a[...]


# --- writing ---------------------------------------------------------------------------------


def test_whole_shard_writes_read_nothing() -> None:
    store = RecordingStore()
    a = sharded_array(store, shape=(15, 16, 13))  # edge shards count as whole too
    a[...] = image(a.shape)
    a[...] = image(a.shape, seed=1)
    assert store.calls == []
    np.testing.assert_array_equal(a[...], image(a.shape, seed=1))


@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("write_empty_chunks", [True, False])
def test_written_shards_are_those_of_the_whole_shard_codec(location: str,
                                                           write_empty_chunks: bool) -> None:
    store = MemoryStore()
    a = sharded_array(store, index_location=location, write_empty_chunks=write_empty_chunks)
    data = image(a.shape)
    data[8:, :8, :8] = 0  # one shard all fill
    data[:4, :4, :4] = 0  # one inner chunk all fill
    a[...] = data
    a[5:11, 2:3, 7:9] = 7  # partial rewrites keep untouched inner chunks' bytes
    data[5:11, 2:3, 7:9] = 7
    codec = a._pipeline.sharding
    for shard in np.ndindex(2, 2, 2):
        key = "x/c/" + "/".join(map(str, shard))
        region = tuple(slice(8 * s, 8 * s + 8) for s in shard)
        expected = codec.encode(data[region]) if not write_empty_chunks else (
            _encode_keeping_empty(codec, data[region]))
        assert store._data.get(key) == expected, key


def _encode_keeping_empty(codec: Any, shard: np.ndarray[Any, Any]) -> bytes:
    """The whole-shard encoding with every inner chunk stored, fill or not."""
    inner = {coords: codec.inner_pipeline.encode(shard[region])
             for coords, region in codec.inner_regions(shard.shape)}
    result = codec.assemble(inner, shard.shape)
    assert result is not None
    return result


class RetainingStore(MemoryStore):
    """A store that keeps the very buffers it is given, as a store may."""

    def __init__(self) -> None:
        super().__init__()
        self.kept: dict[str, Buffer] = {}

    def _set(self, key: str, value: Buffer) -> None:
        self.kept[key] = value
        super()._set(key, value)


def test_a_store_keeping_written_buffers_sees_them_unchanged() -> None:
    store = RetainingStore()
    a = sharded_array(store)
    with zk.config.set(threads=1):  # one thread writes every shard: reuse is tempting
        a[...] = image(a.shape)
    shards = [k for k in store.kept if "/c/" in k]
    assert len(shards) == 8
    for key in shards:
        assert bytes(store.kept[key]) == store._data[key]


class DiscardingStore(MemoryStore):
    """Keeps metadata; of chunks only their size, so memory measures the writer alone."""

    def _set(self, key: str, value: Buffer) -> None:
        super()._set(key, b"" if "/c/" in key else value)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_write_holds_at_most_one_shard_per_thread(threads: int) -> None:
    shard_nbytes = 64 * 64 * 64 * 2
    a = sharded_array(DiscardingStore(), shape=(128, 128, 128), shards=(64, 64, 64),
                      chunks=(16, 16, 16), compressors=None)
    data = image(a.shape)
    with zk.config.set(threads=threads):
        a[:64, :64, :64] = data[:64, :64, :64]  # the pool and caches warmed up
        tracemalloc.start()
        try:
            a[...] = data
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    # One shard per thread in flight, not its encoded parts and the joined shard as well
    # (twice that); the rest is small objects.
    assert peak < (threads + 0.5) * shard_nbytes, peak / shard_nbytes


# --- the pieces ------------------------------------------------------------------------------


def test_drain_runs_every_item_once_and_raises_the_first_error() -> None:
    seen: list[int] = []
    lock = threading.Lock()

    def make_worker() -> Any:
        def work(item: int) -> None:
            with lock:
                seen.append(item)
        return work

    with zk.config.set(threads=2):
        drain(make_worker, list(range(100)))
    assert sorted(seen) == list(range(100))

    def failing() -> Any:
        def work(item: int) -> None:
            if item == 3:
                raise ValueError("item 3")
        return work

    with zk.config.set(threads=2), pytest.raises(ValueError, match="item 3"):
        drain(failing, list(range(100)))


def test_byte_ranges_agree_with_byte_range() -> None:
    rng = np.random.default_rng(3)
    entries = rng.integers(0, 1000, (4, 4, 4, 2)).astype(np.uint64)
    entries[rng.random((4, 4, 4)) < 0.3] = EMPTY
    index = ShardIndex(entries, what="s")
    coords = [tuple(int(v) for v in c) for c in rng.integers(0, 4, (40, 3))]
    assert index.byte_ranges(coords) == [index.byte_range(c) for c in coords]
    with pytest.raises(IndexError):
        index.byte_ranges([*coords, (0, 4, 0)])


def test_coalesced_reads_respect_the_length_limit() -> None:
    ranges = [(i * 10, 10) for i in range(10)]
    reads = coalesce_ranges(ranges, max_length=35)
    assert [(start, length) for start, length, _ in reads] == [(0, 30), (30, 30), (60, 30),
                                                               (90, 10)]
    assert coalesce_ranges([(0, 100)], max_length=10) == [(0, 100, [0])]


def test_shard_builder_grows_past_a_wrong_capacity() -> None:
    a = sharded_array(MemoryStore(), shape=(8, 8, 8), shards=(8, 8, 8), compressors=None)
    codec = a._pipeline.sharding
    parts = {(0, 0, 0): b"a" * 100, (1, 0, 0): b"b" * 50}
    builder = ShardBuilder(codec, (8, 8, 8), capacity=10)
    for coords in builder.morton_sorted(parts):
        builder.add(coords, parts[coords])
    shard = builder.finish()
    assert shard is not None
    assert bytes(shard) == codec.assemble(parts, (8, 8, 8))


@pytest.mark.parametrize("write_empty_chunks", [True, False])
def test_nested_shards_with_empty_inner_shards(write_empty_chunks: bool) -> None:
    """An inner shard whose chunks all equal the fill value encodes to nothing; writing
    one used to fail with TypeError when write_empty_chunks was on."""
    inner = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [{"name": "bytes", "configuration": {
            "endian": "little"}}]}}
    store = MemoryStore()
    metadata = {"zarr_format": 3, "node_type": "array", "shape": [8, 8], "data_type": "int16",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 8]}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                "codecs": [{"name": "sharding_indexed", "configuration": {
                    "chunk_shape": [4, 4], "codecs": [inner]}}]}
    store.set("zarr.json", json.dumps(metadata).encode())
    expected = np.zeros((8, 8), "i2")
    with zk.config.set(write_empty_chunks=write_empty_chunks):
        a = zk.open_array(store, mode="r+")
        a[:] = 0
        a[0:3, 5:7] = 9
        expected[0:3, 5:7] = 9
    np.testing.assert_array_equal(zk.open_array(store)[:], expected)
