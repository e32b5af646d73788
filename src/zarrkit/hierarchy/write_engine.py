"""The write engine of an array: a value checked and converted once, then each chunk it
touches built (read back and updated where only part of it is written), encoded and stored,
or deleted when it holds only the fill value (the sharded partial path is
:mod:`zarrkit.hierarchy.sharded`).

Functions of the :class:`~zarrkit.hierarchy.array.Array` they write, which stays a thin
facade over them.

>>> import numpy as np, zarrkit as zk
>>> a = zk.create_array({}, shape=(4,), chunks=(2,), dtype="u1")
>>> from zarrkit.indexing import basic_indexer
>>> write(a, basic_indexer(slice(1, 3), a.shape, a._grid_chunks), 7); a[:].tolist()
[0, 7, 7, 0]
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from zarrkit import native
from zarrkit.buffers import scratch_array
from zarrkit.codecs.v2 import V2ChunkPipeline
from zarrkit.concurrency import Prefetch, chunk_lock, parallel_map
from zarrkit.config import config
from zarrkit.errors import ChunkDecodeError
from zarrkit.hierarchy.sharded import write_sharded
from zarrkit.indexing import (
    ChunkProjection,
    plan_batches,
)
from zarrkit.metadata.fill_value import is_all_fill
from zarrkit.storage.base import FileWrites, WritesFiles, offers

if TYPE_CHECKING:
    from zarrkit.codecs.v3.pipeline import CodecPipelineV3
    from zarrkit.hierarchy.array import Array

from zarrkit.hierarchy import read_engine  # noqa: E402


def set(array: Array, factory: Any, selection: Any, value: Any, *,
        keep_overhang: bool = False) -> None:
    """Write ``value`` into ``selection`` (planned by ``factory``). ``keep_overhang``: see
    :func:`write`."""
    array._check_writable()
    array._check_allocation_limit()
    if array._sharded_io:
        write_sharded(array, factory, selection, value)
    else:
        # One reading of the shape for the plan and the edge tests: threads appending
        # through this handle change it meanwhile.
        shape = array.shape
        write(array, factory(selection, shape, array._grid_chunks), value, shape,
              keep_overhang=keep_overhang)


def prepare_value(array: Array, indexer: Any, value: Any, *, check: bool = False
                   ) -> tuple[Any, bool]:
    """The value as an array broadcast to the selection, or a scalar (cheap to assign).
    With ``check``, its elements are also run through the codecs that may refuse them
    (:meth:`_check_encodable`): a write of several chunks must not fail after storing
    some of them."""
    dtype = array._storage_dtype
    if array._strings:
        # As zarr-python: values become text as numpy's StringDType converts them (str()
        # of a number or None, bytes decoded), then objects, which the codecs take.
        strings = np.asarray(value, dtype=array._dtype)
        if strings.ndim == 0:
            text = strings[()]
            if check:
                check_encodable(array, np.full(1, text, dtype=object))
            return text, True
        values = strings.astype(object)
    elif dtype.kind == "O":
        if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
            if check:
                check_encodable(array, np.full(1, value, dtype=object))
            return value, True
        values = np.empty(np.shape(value), dtype=object)
        values[...] = value
    elif np.isscalar(value) or (isinstance(value, np.ndarray) and value.ndim == 0):
        scalar = np.asarray(value, dtype=dtype)[()]
        if check:
            check_encodable(array, np.full(1, scalar, dtype=dtype))
        return scalar, True
    else:
        values = np.asarray(value, dtype=dtype) if dtype.fields is None else np.asarray(value)
        if dtype.fields is not None and values.dtype != dtype:
            values = values.astype(dtype)
    if check:
        check_encodable(array, values)
    try:
        values = np.broadcast_to(values, indexer.shape)
    except ValueError as e:
        raise ValueError(
            f"cannot broadcast a value of shape {values.shape} to the selection's shape "
            f"{indexer.shape} in array {array.name!r}"
        ) from e
    if getattr(indexer, "flat_output", False):
        values = values.reshape(-1)
    return values, False


def check_encodable(array: Array, elements: np.ndarray[Any, Any]) -> None:
    """Encode ``elements`` (of a value to write), in blocks of a chunk's shape, through
    the codecs that can refuse a value, and drop the result: the innermost chunks'
    codecs up to the one that makes bytes of the values. Those are the authority on
    what they take: for objects, str for vlen-utf8 (and not numpy.str_), bytes for
    vlen-bytes, what msgpack can hold...; for numbers, scale_offset refuses what its
    type cannot hold (numpy has converted the value already). Codecs of bytes take
    any bytes, so they are not run."""
    pipeline = array._pipeline
    while pipeline.sharding is not None:
        pipeline = pipeline.sharding.inner_pipeline
    stages: list[Any]
    if isinstance(pipeline, V2ChunkPipeline):
        stages, shape = list(pipeline.filters), tuple(pipeline.chunk_shape)
    else:
        v3 = cast("CodecPipelineV3", pipeline)
        stages = [*v3.array_array, *([v3.array_bytes] if array._storage_dtype.hasobject
                                     else [])]
        shape = tuple(v3.spec.shape)
    if not stages:
        return
    size = math.prod(shape)
    flat = elements.reshape(-1)
    for start in range(0, flat.size, size):
        # Every element of a block comes from the value (np.resize repeats them).
        block = np.resize(flat[start:start + size], shape)
        for codec in stages:
            block = codec.encode(block)


def is_edge_chunk(array: Array, chunk_coords: tuple[int, ...],
                  shape: tuple[int, ...] | None = None) -> bool:
    """Whether the chunk overhangs ``shape`` (the array's now when not given)."""
    if not array._regular:
        return True  # cheap to treat every chunk as possibly overhanging
    return any(
        (c + 1) * n > s
        for c, n, s in zip(chunk_coords, array._grid_chunks,
                           array.shape if shape is None else shape, strict=True)
    )


def empty_chunk(array: Array, chunk_coords: tuple[int, ...]) -> np.ndarray[Any, Any]:
    shape = array._chunk_shape(chunk_coords)
    return np.full(shape, array._fill, dtype=array._storage_dtype, order=array._stored_order)  # type: ignore[call-overload]


def load_chunk_for_update(array: Array, key: str, chunk_coords: tuple[int, ...]
                           ) -> np.ndarray[Any, Any]:
    data = array._store.get(key)
    if data is None:
        return empty_chunk(array, chunk_coords)
    chunk = read_engine.decode(array, data, key, chunk_coords)
    return chunk if chunk.flags.writeable else chunk.copy(order="K")


def store_chunk(array: Array, key: str, chunk: np.ndarray[Any, Any]) -> None:
    skip = array._store.supports_deletes and not array.write_empty_chunks
    encoded = (None if skip and is_all_fill(chunk, array._metadata.fill_value)
               else array._pipeline_for(chunk.shape).encode(chunk))
    if encoded is None:  # all fill, or a shard whose inner chunks are all empty
        array._store.delete(key)
    else:
        array._store.set(key, encoded)


def write(array: Array, indexer: Any, value: Any,
          shape: tuple[int, ...] | None = None, *, keep_overhang: bool = False) -> None:
    """Write ``value`` into the selection ``indexer`` plans, which was planned against the
    array's ``shape`` (its shape now when not given). An edge chunk written whole within
    ``shape`` is built anew, unless ``keep_overhang``: then it is read and updated, so
    what another handle stored past ``shape`` (it may have grown the array: appends
    from several threads or processes) is kept."""
    array._check_writable()
    if shape is None:
        shape = array.shape
    # Nothing is stored before the value encodes and every chunk to update decodes:
    # otherwise a write of several chunks failing on a later one leaves the first
    # ones written. (With one chunk, a failure comes before its store anyway.)
    several = indexer.nchunks > 1
    values, is_scalar = prepare_value(array, indexer, value, check=several)
    if several:
        check_chunks_to_update(array, indexer)
    storage_dtype = array._storage_dtype

    def write_one(projection: ChunkProjection) -> None:
        key = array._chunk_key(projection.chunk_coords)
        part = values if is_scalar else values[projection.out_selection]
        with chunk_lock(array._store, key):
            edge = is_edge_chunk(array, projection.chunk_coords, shape)
            if projection.is_complete and not (edge and keep_overhang):
                if edge:
                    chunk = empty_chunk(array, projection.chunk_coords)
                elif storage_dtype.hasobject:
                    chunk = np.empty(array._grid_chunks, dtype=storage_dtype,  # type: ignore[call-overload]
                                     order=array._stored_order)
                else:  # every element is written: no fill, and no fresh pages either
                    chunk = scratch_array(array._grid_chunks, storage_dtype, array._stored_order)
            elif projection.is_complete:  # an edge chunk whose overhang is kept
                try:
                    chunk = load_chunk_for_update(array, key, projection.chunk_coords)
                except ChunkDecodeError:  # nothing of it to keep: written anew, as before
                    chunk = empty_chunk(array, projection.chunk_coords)
            else:
                chunk = load_chunk_for_update(array, key, projection.chunk_coords)
            chunk[projection.chunk_selection] = part
            store_chunk(array, key, chunk)

    chain = array._native_chain
    if chain is None or is_scalar or storage_dtype.hasobject or chain.sharded:
        for_each_chunk(array, iter(indexer), write_one)
        return
    if math.prod(array._grid_chunks) * storage_dtype.itemsize > NATIVE_WRITE_CHUNK_BYTES:
        skip_fill = array._store.supports_deletes and not array.write_empty_chunks

        def write_one_natively(projection: ChunkProjection) -> None:
            part = values[projection.out_selection]
            if (not projection.is_complete
                    or is_edge_chunk(array, projection.chunk_coords, shape)
                    or part.shape != tuple(array._grid_chunks)):
                write_one(projection)
                return
            # The engine gathers the value's own view (no copy into a chunk first) and
            # encodes it with the GIL released, in this pool thread.
            encode_and_store(array, chain, [projection], [part], 1, skip_fill)

        for_each_chunk(array, iter(indexer), write_one_natively)
        return
    with NativeWrites(array, chain, values, indexer.nchunks) as native_writes:
        # The first plan batch is one engine call's worth, so that the engine starts on it
        # while the rest of the selection is planned.
        for batch in plan_batches(iter(indexer), read_engine.PLAN_BATCH,
                                  first=native_writes.chunks_per_call):
            whole = [p for p in batch if p.is_complete and not (
                keep_overhang and is_edge_chunk(array, p.chunk_coords, shape))]
            native_writes.write(whole)
            if len(whole) < len(batch):  # the others: read, update, store
                done = {id(p) for p in whole}
                for_each_chunk(array, (p for p in batch if id(p) not in done), write_one)


# The decoded bytes of chunks handed to the native engine in one call: its threads encode
# them in parallel (and store them, where it writes the files itself) while this thread
# stores the last call's; this bounds the memory a call holds, and smaller calls overlap
# better (S1's 4 MiB chunks: 64 MiB calls 0.67, 16 MiB 0.73 GB/s).
_NATIVE_WRITE_BYTES = 16 << 20
# Larger chunks are not batched: each pool thread encodes one chunk through the engine and
# stores it at once, so the stores run on both threads instead of the calling thread
# alone, and the engine reads the value's view without a copy into a chunk first
# (S1, 4 MiB chunks). Below this, batches win on their lower cost per chunk (S5, 8 KiB).
NATIVE_WRITE_CHUNK_BYTES = 1 << 20
# Calls that also write the files are smaller: a call's Python part (chunk views, keys,
# file names) is made while the engine writes the last call's, and the more calls, the
# less of it is left alone before the first.
_NATIVE_FILE_WRITE_BYTES = 4 << 20


def write_natively(array: Array, chain: Any, values: np.ndarray[Any, Any],
                   projections: list[ChunkProjection]) -> None:
    """Store chunks written whole (``projections`` all complete) through the native
    engine, as :class:`NativeWrites` does.

    >>> import numpy as np, zarrkit as zk
    >>> from zarrkit.indexing import basic_indexer
    >>> a = zk.create_array({}, shape=(4,), chunks=(2,), dtype="u1")
    >>> if a._native_chain is not None:
    ...     write_natively(a, a._native_chain, np.arange(4, dtype="u1"),
    ...                    list(basic_indexer(slice(None), a.shape, a._grid_chunks)))
    ... else:
    ...     a[:] = np.arange(4)
    >>> a[:].tolist()
    [0, 1, 2, 3]
    """
    with NativeWrites(array, chain, values, len(projections)) as writes:
        writes.write(projections)


class NativeWrites:
    """Chunks written whole (complete projections), stored through the native engine as
    a write's plan batches come: encoded a group at a time by its threads with the GIL
    released, all-fill ones deleted unless ``write_empty_chunks``, as :func:`store_chunk`
    does one at a time.

    Where the store lets the engine write its files (a DirectoryStore), a writer thread
    has the engine encode and store each group while the calling thread makes the next
    groups' chunk views, keys and file names, from this plan batch or the next; otherwise
    the next group encodes while the calling thread stores the last one. Leaving the
    ``with`` block waits for every group (the first failure raised, the groups not yet
    started given up). ``nchunks`` is how many chunks the write may hold: up to one
    call's worth, calls run on the calling thread.

    >>> import numpy as np, zarrkit as zk
    >>> from zarrkit.indexing import basic_indexer
    >>> a = zk.create_array({}, shape=(4,), chunks=(2,), dtype="u1")
    >>> plan = list(basic_indexer(slice(None), a.shape, a._grid_chunks))
    >>> if a._native_chain is not None:
    ...     with NativeWrites(a, a._native_chain, np.arange(4, dtype="u1"), 2) as writes:
    ...         writes.write(plan[:1]); writes.write(plan[1:])
    ... else:
    ...     a[:] = np.arange(4)
    >>> a[:].tolist()
    [0, 1, 2, 3]
    """

    def __init__(self, array: Array, chain: Any, values: np.ndarray[Any, Any],
                 nchunks: int) -> None:
        self._array, self._chain, self._values = array, chain, values
        self._chunk_nbytes = math.prod(array._grid_chunks) * array._storage_dtype.itemsize
        self._skip_fill = array._store.supports_deletes and not array.write_empty_chunks
        self.chunks_per_call = max(1, _NATIVE_FILE_WRITE_BYTES // max(1, self._chunk_nbytes))
        # A write of one call's chunks runs it on the calling thread: no writer thread.
        self._inline = nchunks <= self.chunks_per_call
        self._writer: ThreadPoolExecutor | None = None
        self._calls: deque[Future[None]] = deque()

    def __enter__(self) -> NativeWrites:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        try:
            self._finish(raising=exc is None)
        finally:
            if self._writer is not None:
                self._writer.shutdown(wait=True)

    def _finish(self, raising: bool) -> None:
        """Wait for every call in turn; after a failure (this write's own, or a call's),
        give up the calls not yet started and raise only the first."""
        first: BaseException | None = None
        while self._calls:
            call = self._calls.popleft()
            if first is not None or not raising:
                call.cancel()
            if not call.cancelled():
                error = call.exception()
                first = first or error
        if first is not None and raising:
            raise first

    def write(self, projections: list[ChunkProjection]) -> None:
        """Store the chunks of ``projections``, every one complete."""
        if not projections:
            return
        if not offers(self._array._store, WritesFiles):  # before any chunk view is made
            self._encode_then_store(projections)
            return
        groups = self._grouped(projections, _NATIVE_FILE_WRITE_BYTES)
        first = file_batch(self._array, groups[0], self._chunks_of(groups[0]))
        if first is None:  # the store must write these itself (fsync): bytes to it
            self._encode_then_store(projections)
            return
        self._submit(first, self._threads_for(groups[0]))
        for group in groups[1:]:
            chunks = self._chunks_of(group)
            batch = file_batch(self._array, group, chunks)
            if batch is None:  # the store's settings changed: it writes the rest
                encode_and_store(self._array, self._chain, group, chunks,
                                 self._threads_for(group), self._skip_fill)
                continue
            self._submit(batch, self._threads_for(group))

    def _submit(self, batch: FileBatch, threads: int) -> None:
        if self._inline:
            store_file_batch(self._array, self._chain, batch, threads, self._skip_fill)
            return
        if self._writer is None:
            self._writer = ThreadPoolExecutor(1, thread_name_prefix="zarrkit-write")
        self._calls.append(self._writer.submit(store_file_batch, self._array, self._chain,
                                               batch, threads, self._skip_fill))
        # One call running and one queued behind it: the engine never waits for this
        # thread between calls, and no more calls' chunk views and names are held.
        while len(self._calls) > 2:
            self._calls.popleft().result()

    def _encode_then_store(self, projections: list[ChunkProjection]) -> None:
        """The store writes: each group encoded by the engine while this thread stores
        the last one's bytes."""
        groups = self._grouped(projections, _NATIVE_WRITE_BYTES)

        def encode(group: list[ChunkProjection]) -> list[bytes | None]:
            return native.encode_batch(  # type: ignore[no-any-return]
                self._chain, self._chunks_of(group), self._threads_for(group),
                self._skip_fill)

        def store(group: list[ChunkProjection], encoded: list[bytes | None]) -> None:
            for projection, data in zip(group, encoded, strict=True):
                store_encoded(self._array, projection, data)

        if len(groups) == 1:
            store(groups[0], encode(groups[0]))
            return
        with Prefetch(encode, groups, ahead=1) as encoded:
            for index, group in enumerate(groups):
                store(group, encoded.take(index))

    def _grouped(self, projections: list[ChunkProjection], nbytes: int
                 ) -> list[list[ChunkProjection]]:
        per_call = max(1, nbytes // max(1, self._chunk_nbytes))
        return [projections[start:start + per_call]
                for start in range(0, len(projections), per_call)]

    def _chunks_of(self, group: list[ChunkProjection]) -> list[np.ndarray[Any, Any]]:
        array, values = self._array, self._values
        chunks = []
        for projection in group:
            part = values[projection.out_selection]
            if (not is_edge_chunk(array, projection.chunk_coords)
                    and part.shape == tuple(array._grid_chunks)):
                chunks.append(part)  # the value's own view: the engine gathers it
            else:
                chunk = empty_chunk(array, projection.chunk_coords)
                chunk[projection.chunk_selection] = part
                chunks.append(chunk)
        return chunks

    def _threads_for(self, group: list[ChunkProjection]) -> int:
        return (config.threads
                if len(group) * self._chunk_nbytes >= read_engine.INLINE_WORK_BYTES else 1)


@dataclass(frozen=True)
class FileBatch:
    """Chunks the engine encodes and writes into their files itself: their keys, the
    values (views the engine gathers) and where the store says their files go."""

    keys: list[str]
    chunks: list[np.ndarray[Any, Any]]
    files: FileWrites


def file_batch(array: Array, projections: list[ChunkProjection],
               chunks: list[np.ndarray[Any, Any]]) -> FileBatch | None:
    """The :class:`FileBatch` of ``chunks`` (of ``projections``), or None when the store
    does not let the engine write its files (it offers no
    :class:`~zarrkit.storage.base.WritesFiles`, or must write them itself now)."""
    store = array._store
    if not offers(store, WritesFiles):
        return None
    keys = [array._chunk_key(p.chunk_coords) for p in projections]
    files = store.file_writes(keys)  # type: ignore[attr-defined]
    return None if files is None else FileBatch(keys, chunks, files)


def store_file_batch(array: Array, chain: Any, batch: FileBatch, threads: int,
                     skip_fill: bool) -> None:
    """Encode and write ``batch`` with the engine, on ``threads`` of its threads with the
    GIL released, holding every key's lock: the store takes only what the engine could
    not write (its error then raised as the store words it) and deletes the all-fill
    chunks."""
    store = array._store
    files = batch.files
    with store.key_locks(batch.keys):  # type: ignore[attr-defined]
        results = native.encode_to_files(chain, batch.chunks, files.targets,
                                         files.temp_directory, files.temp_prefix,
                                         threads, skip_fill)
        for key, result in zip(batch.keys, results, strict=True):
            if result is False:
                store.delete(key)
            elif result is not None:
                store.set(key, result)


def encode_and_store(array: Array, chain: Any, projections: list[ChunkProjection],
                     chunks: list[np.ndarray[Any, Any]], threads: int, skip_fill: bool
                     ) -> None:
    """Encode whole ``chunks`` (of ``projections``) with the engine and store them:
    written by the engine itself where the store allows (:func:`store_file_batch`),
    otherwise each encoded chunk handed to the store as :func:`store_encoded` does."""
    batch = file_batch(array, projections, chunks)
    if batch is not None:
        store_file_batch(array, chain, batch, threads, skip_fill)
        return
    encoded = native.encode_batch(chain, chunks, threads, skip_fill)
    for projection, data in zip(projections, encoded, strict=True):
        store_encoded(array, projection, data)


def store_encoded(array: Array, projection: ChunkProjection, data: bytes | None) -> None:
    """Store a chunk the engine encoded, or delete it when the engine found it all fill
    (``data`` None), under the chunk's lock."""
    key = array._chunk_key(projection.chunk_coords)
    with chunk_lock(array._store, key):
        if data is None:
            array._store.delete(key)
        else:
            array._store.set(key, data)


def check_chunks_to_update(array: Array, indexer: Any) -> None:
    """Read and decode, then drop, every stored chunk that a write of ``indexer`` only
    partly overwrites, so that a corrupt one fails the write before anything is
    stored. Each is read again under its lock when rewritten: another writer may
    change it in between."""

    def check_one(projection: ChunkProjection) -> None:
        key = array._chunk_key(projection.chunk_coords)
        data = array._store.get(key)
        if data is not None:
            read_engine.decode(array, data, key, projection.chunk_coords)

    for_each_chunk(array, indexer.partial_projections(), check_one)


def for_each_chunk(array: Array, projections: Iterator[ChunkProjection],
                    work: Callable[[ChunkProjection], None]) -> None:
    """``work`` on every projection, a plan batch at a time: in the pool when the
    batch's chunks add up to enough bytes to be worth it."""
    for batch in plan_batches(projections, read_engine.PLAN_BATCH):
        if read_engine.chunks_bytes(array, batch) < read_engine.INLINE_WORK_BYTES:
            for projection in batch:
                work(projection)
        else:
            parallel_map(work, batch)

