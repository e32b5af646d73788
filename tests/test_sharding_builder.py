"""ShardBuilder: shards laid out piece by piece must be byte for byte the shards the
whole-shard codec and zarr-python write, whatever capacity the caller guessed, and an inner
chunk cannot be added twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

from zarrkit.codecs.v3.sharding import ShardBuilder, ShardingCodec
from zarrkit.codecs.v3.spec import ChunkSpec

SHARD = (8, 8)
INNER = (2, 2)
INNER_CODECS = [{"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]


def _codec(index_location: str = "end") -> ShardingCodec:
    return ShardingCodec({"chunk_shape": list(INNER), "codecs": INNER_CODECS,
                          "index_location": index_location},
                         ChunkSpec(SHARD, np.dtype("<u2"), 0))


def _shard_data() -> np.ndarray[Any, Any]:
    """Inner chunks of varied encoded lengths (zstd of noisy and of constant data), and
    two inner chunks equal to the fill value, which no writer stores."""
    rng = np.random.default_rng(7)
    data = rng.integers(1, 60000, SHARD, dtype="<u2")
    data[2:4, :] = 9  # compresses well: short inner chunks among long ones
    data[4:6, 0:4] = 0  # fill: not stored
    return data


def _encoded_inner_chunks(codec: ShardingCodec, data: np.ndarray[Any, Any]
                          ) -> dict[tuple[int, ...], bytes]:
    empty = codec.empty_inner_chunks(data)
    parts = {}
    for coords, region in codec.inner_regions(data.shape):
        if not empty[coords]:
            encoded = codec.inner_pipeline.encode(data[region])
            assert encoded is not None
            parts[coords] = encoded
    return parts


def _zarr_python_shard(tmp_path: Path, data: np.ndarray[Any, Any], index_location: str
                       ) -> bytes:
    """The shard zarr-python writes for ``data`` with the same codecs (our oracle)."""
    array = zarr.create_array(
        store=str(tmp_path), shape=SHARD, chunks=INNER, shards=SHARD, dtype="<u2",
        fill_value=0, compressors=[zarr.codecs.ZstdCodec(level=1)],
        serializer=zarr.codecs.BytesCodec(endian="little"))
    if index_location == "start":  # zarr-python's create_array has no such argument
        meta = json.loads((tmp_path / "zarr.json").read_text())
        meta["codecs"][0]["configuration"]["index_location"] = "start"
        (tmp_path / "zarr.json").write_text(json.dumps(meta))
        array = zarr.open_array(str(tmp_path), mode="r+")
    array[...] = data
    return (tmp_path / "c" / "0" / "0").read_bytes()


def _build(codec: ShardingCodec, parts: dict[tuple[int, ...], bytes], capacity: int | None,
           buffer: np.ndarray[Any, Any] | None = None
           ) -> tuple[bytes, np.ndarray[Any, Any] | None]:
    builder = ShardBuilder(codec, SHARD, capacity, buffer)
    for coords in builder.morton_sorted(parts):
        builder.add(coords, parts[coords])
    shard = builder.finish()
    assert shard is not None
    return bytes(shard), builder.detach()


@pytest.mark.parametrize("index_location", ["start", "end"])
@pytest.mark.parametrize("capacity_of", [
    lambda total, index: 0,  # grows on the first chunk, then again with data in it
    lambda total, index: 1,
    lambda total, index: total // 3,  # grows part-way, copying what is there
    lambda total, index: total - 1,  # the last chunk does not fit
    lambda total, index: total - index,  # index at the end: grows only in finish()
], ids=["zero", "one", "third", "one-short", "index-short"])
def test_underestimated_capacity_builds_the_same_shard(tmp_path: Path, index_location: str,
                                                       capacity_of: Any) -> None:
    codec = _codec(index_location)
    data = _shard_data()
    parts = _encoded_inner_chunks(codec, data)
    total = sum(len(p) for p in parts.values())
    index_nbytes = codec.index_nbytes(SHARD)
    capacity = capacity_of(total, index_nbytes)
    if index_location == "start" and capacity == total - index_nbytes:
        capacity = total - 1  # the index is written first: only a chunk can overflow
    shard, buffer = _build(codec, parts, capacity)
    # The growth path must have run, or this test would prove nothing about it.
    assert buffer is not None and len(buffer) > index_nbytes + capacity
    assert shard == codec.encode(data)
    assert shard == _zarr_python_shard(tmp_path, data, index_location)


@pytest.mark.parametrize("index_location", ["start", "end"])
def test_a_reused_buffer_too_small_or_dirty_changes_nothing(index_location: str) -> None:
    codec = _codec(index_location)
    data = _shard_data()
    parts = _encoded_inner_chunks(codec, data)
    total = sum(len(p) for p in parts.values())
    expected = codec.encode(data)
    dirty = np.full(2 * (total + codec.index_nbytes(SHARD)), 0xAB, dtype=np.uint8)
    small = np.full(10, 0xCD, dtype=np.uint8)
    for spare in (dirty, small):
        shard, _ = _build(codec, parts, total // 4, spare.copy())
        assert shard == expected


def test_no_capacity_joins_the_parts_the_same() -> None:
    codec = _codec()
    data = _shard_data()
    shard, buffer = _build(codec, _encoded_inner_chunks(codec, data), None)
    assert buffer is None and shard == codec.encode(data)


@pytest.mark.parametrize("capacity", [None, 0, 1 << 12])
def test_adding_an_inner_chunk_twice_is_refused(capacity: int | None) -> None:
    codec = _codec()
    builder = ShardBuilder(codec, SHARD, capacity)
    builder.add((0, 0), b"first")
    with pytest.raises(ValueError, match=r"inner chunk \(0, 0\) was already added"):
        builder.add((0, 0), b"second")
    builder.add((1, 0), b"next")
    # Not only the last one added: any chunk already in the shard.
    with pytest.raises(ValueError, match=r"inner chunk \(0, 0\) was already added"):
        builder.add([0, 0], b"third")
    shard = builder.finish()
    assert shard is not None
    # The refused calls left no trace: the shard holds the first copy only.
    assert bytes(shard) == codec.assemble({(0, 0): b"first", (1, 0): b"next"}, SHARD)


def test_out_of_order_chunks_are_refused_as_such() -> None:
    builder = ShardBuilder(_codec(), SHARD)
    builder.add((1, 0), b"x")
    with pytest.raises(ValueError, match=r"\(0, 0\) comes before \(1, 0\) in Morton order"):
        builder.add((0, 0), b"y")
