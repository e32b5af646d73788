"""Partial I/O of sharded arrays: touch only the inner chunks a selection needs.

A read fetches each shard's index with one byte-range request, then only the inner chunks
the selection touches (neighbouring ranges coalesced into one request). A write of whole
shards never reads the old shards; a partial write rewrites only the shards it touches,
keeping the stored bytes of their untouched inner chunks as they are.

>>> import numpy as np, zarrkit as zk
>>> a = zk.create_array({}, shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="i4",
...     zarr_format=3)
>>> a[1:3, 1:3] = 5
>>> int(a[...].sum())
20
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit.concurrency import chunk_lock, parallel_map
from zarrkit.errors import ChunkDecodeError
from zarrkit.indexing import ChunkProjection

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array

IndexerFactory = Callable[[Any, tuple[int, ...], tuple[int, ...]], Any]


def supports_partial_io(pipeline: Any) -> bool:
    """Whether shard bytes are addressable directly: sharding is the only codec, so no
    array-to-array codec reshapes the shard and no bytes codec wraps it."""
    return (pipeline.sharding is not None and not pipeline.array_array
            and not pipeline.bytes_bytes)


def _group_by_shard(
    projections: list[ChunkProjection], chunks_per_shard: tuple[int, ...]
) -> dict[tuple[int, ...], list[tuple[tuple[int, ...], ChunkProjection]]]:
    grouped: dict[tuple[int, ...], list[tuple[tuple[int, ...], ChunkProjection]]] = (
        defaultdict(list))
    for projection in projections:
        coords = projection.chunk_coords
        shard = tuple(c // n for c, n in zip(coords, chunks_per_shard, strict=True))
        local = tuple(c % n for c, n in zip(coords, chunks_per_shard, strict=True))
        grouped[shard].append((local, projection))
    return grouped


def _read_index(array: Array, key: str, shard_shape: tuple[int, ...]) -> Any:
    sharding = array._pipeline.sharding
    nbytes = sharding.index_nbytes(shard_shape)
    if sharding.index_location == "end":
        raw = array.store.get_range(key, -nbytes)
    else:
        raw = array.store.get_range(key, 0, nbytes)
    if raw is None:
        return None
    what = f"array {array.name!r} shard {key!r} index"
    if len(raw) != nbytes:
        raise ChunkDecodeError(f"{what}: truncated ({len(raw)} of {nbytes} bytes)")
    return sharding.decode_index(raw, shard_shape, what=what)


def read_sharded(array: Array, factory: IndexerFactory, selection: Any) -> Any:
    """Read ``selection`` from a sharded array, fetching only what it needs."""
    from zarrkit.codecs.v3.sharding import coalesce_ranges

    sharding = array._pipeline.sharding
    shard_shape = tuple(array._grid_chunks)
    inner_shape = tuple(sharding.chunk_shape)
    chunks_per_shard = sharding.chunks_per_shard(shard_shape)
    indexer = factory(selection, array.shape, inner_shape)
    out = np.empty(indexer.shape, dtype=array.dtype)
    target = out.reshape(-1) if getattr(indexer, "flat_output", False) else out
    fill = array._fill
    inner_pipeline = sharding.inner_pipeline

    def read_shard(item: tuple[tuple[int, ...], list[tuple[tuple[int, ...], ChunkProjection]]]
                   ) -> None:
        shard_coords, members = item
        key = array._chunk_key(shard_coords)
        index = _read_index(array, key, shard_shape)
        wanted: list[tuple[tuple[int, int], ChunkProjection]] = []
        for local, projection in members:
            byte_range = None if index is None else index.byte_range(local)
            if byte_range is None:
                target[projection.out_selection] = fill
            else:
                wanted.append((byte_range, projection))
        if not wanted:
            return
        for start, length, covered in coalesce_ranges([r for r, _ in wanted]):
            data = array.store.get_range(key, start, length)
            if data is None or len(data) != length:
                raise ChunkDecodeError(
                    f"array {array.name!r} shard {key!r}: index points past the end of the "
                    f"shard (bytes {start}..{start + length})"
                )
            view = memoryview(data)
            for i in covered:
                (offset, size), projection = wanted[i]
                piece = view[offset - start:offset - start + size]
                what = (f"array {array.name!r} shard {key!r} inner chunk "
                        f"{projection.chunk_coords}")
                chunk = inner_pipeline.decode(piece, what=what)
                target[projection.out_selection] = chunk[projection.chunk_selection]

    grouped = _group_by_shard(list(indexer), chunks_per_shard)
    parallel_map(read_shard, list(grouped.items()))
    return out[()] if out.ndim == 0 else out


def write_sharded(array: Array, factory: IndexerFactory, selection: Any, value: Any) -> None:
    """Write ``selection`` of a sharded array, rewriting only the shards it touches."""
    sharding = array._pipeline.sharding
    shard_shape = tuple(array._grid_chunks)
    inner_shape = tuple(sharding.chunk_shape)
    chunks_per_shard = sharding.chunks_per_shard(shard_shape)
    indexer = factory(selection, array.shape, inner_shape)
    source, is_scalar = array._prepare_value(indexer, value)
    inner_pipeline = sharding.inner_pipeline
    fill = array._fill
    skip_empty = not array.write_empty_chunks

    def inner_chunks_in_shard(shard_coords: tuple[int, ...]) -> int:
        """Inner chunks of this shard that lie (partly) inside the array."""
        counts = []
        for s, n, inner, size in zip(shard_coords, chunks_per_shard, inner_shape, array.shape,
                                     strict=True):
            first = s * n
            last = min((s + 1) * n, math.ceil(size / inner))
            counts.append(max(0, last - first))
        return math.prod(counts)

    def new_inner() -> np.ndarray[Any, Any]:
        return np.full(inner_shape, fill, dtype=array.dtype)

    def encode_inner(chunk: np.ndarray[Any, Any]) -> bytes | None:
        if skip_empty and array._is_all_fill(chunk):
            return None
        return inner_pipeline.encode(chunk)  # type: ignore[no-any-return]

    def write_shard(item: tuple[tuple[int, ...], list[tuple[tuple[int, ...], ChunkProjection]]]
                    ) -> None:
        shard_coords, members = item
        key = array._chunk_key(shard_coords)
        whole = (len(members) == inner_chunks_in_shard(shard_coords)
                 and all(p.is_complete for _, p in members))
        with chunk_lock(array.store, key):
            encoded: dict[tuple[int, ...], bytes] = {}
            old: bytes | None = None
            index = None
            if not whole:
                old = array.store.get(key)
                if old is not None:
                    index = _decode_full_index(array, key, old, shard_shape)
                    for local in np.ndindex(*chunks_per_shard):
                        byte_range = index.byte_range(local)
                        if byte_range is not None:
                            offset, size = byte_range
                            encoded[local] = old[offset:offset + size]
            for local, projection in members:
                part = source if is_scalar else source[projection.out_selection]
                if projection.is_complete:
                    chunk = new_inner()
                elif local in encoded:
                    what = (f"array {array.name!r} shard {key!r} inner chunk "
                            f"{projection.chunk_coords}")
                    chunk = inner_pipeline.decode(encoded[local], what=what)
                    if not chunk.flags.writeable:
                        chunk = chunk.copy()
                else:
                    chunk = new_inner()
                chunk[projection.chunk_selection] = part
                data = encode_inner(chunk)
                if data is None:
                    encoded.pop(local, None)
                else:
                    encoded[local] = data
            shard = sharding.assemble(encoded, shard_shape)
            if shard is None:
                array.store.delete(key)
            else:
                array.store.set(key, shard)

    grouped = _group_by_shard(list(indexer), chunks_per_shard)
    parallel_map(write_shard, list(grouped.items()))


def _decode_full_index(array: Array, key: str, shard: bytes, shard_shape: tuple[int, ...]
                       ) -> Any:
    sharding = array._pipeline.sharding
    nbytes = sharding.index_nbytes(shard_shape)
    what = f"array {array.name!r} shard {key!r} index"
    if len(shard) < nbytes:
        raise ChunkDecodeError(f"{what}: truncated ({len(shard)} bytes, index needs {nbytes})")
    raw = shard[-nbytes:] if sharding.index_location == "end" else shard[:nbytes]
    index = sharding.decode_index(raw, shard_shape, what=what)
    index.check_bounds(len(shard))
    return index
