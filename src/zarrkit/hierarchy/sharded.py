"""Partial I/O of sharded arrays: touch only the inner chunks a selection needs.

A read fetches each shard's index with one byte-range request, then only the inner chunks
the selection touches (neighbouring ranges coalesced into one request). A write of whole
shards never reads the old shards; a partial write rewrites only the shards it touches,
keeping the stored bytes of their untouched inner chunks as they are.

Work is spread over the thread pool as a queue that each thread draws from as soon as it is
free, so uneven shards (or a busy core) do not leave a thread idle at the end: reads queue
byte ranges of at most ``_MAX_READ`` bytes, so even one big shard is decoded by every
thread; writes queue whole shards, so at most one shard per thread is in memory at once.

>>> import numpy as np, zarrkit as zk
>>> a = zk.create_array({}, shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="i4",
...     zarr_format=3)
>>> a[1:3, 1:3] = 5
>>> int(a[...].sum())
20
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit import native
from zarrkit.buffers import reshaped_view
from zarrkit.codecs.v3.sharding import ShardingCodec
from zarrkit.codecs.v3.sharding_partial import (
    PartialReader,
    PartialWriter,
    RangeRead,
    ShardContext,
    ShardJob,
    ShardPiece,
    full_index,
    group_by_shard,
    is_view_selection,
)
from zarrkit.concurrency import Prefetch, chunk_lock, drain, parallel_map
from zarrkit.config import config
from zarrkit.indexing import ChunkProjection, basic_indexer
from zarrkit.storage.base import LocatesFiles, LocatesRanges, Store, offers

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array

IndexerFactory = Callable[[Any, tuple[int, ...], tuple[int, ...]], Any]

# Basic selections of more inner chunks than this are planned shard by shard in the
# threads; planning a few on the calling thread is cheaper than a second indexer.
_PLAN_IN_THREADS = 64

# Whole-shard requests are used when a read spans at least this many shards per thread:
# each shard is then decoded by one thread, and enough of them keep every thread busy.
_WHOLE_SHARDS_PER_THREAD = 2

def supports_partial_io(pipeline: Any) -> bool:
    """Whether shard bytes are addressable directly: sharding is the only codec, so no
    array-to-array codec reshapes the shard and no bytes codec wraps it."""
    return (pipeline.sharding is not None and not pipeline.array_array
            and not pipeline.bytes_bytes)


@dataclass(frozen=True)
class _Shards:
    """One sharded array as its partial I/O sees it: the codec and the small context it
    takes, the store the shards live in, and the native engine's chain (None: Python)."""

    codec: ShardingCodec
    context: ShardContext
    store: Store
    chain: Any
    key_prefix: str  # the array's path in the store, for the engine's own chunk keys
    key_layout: tuple[str, str] | None

    @classmethod
    def of(cls, array: Array) -> _Shards:
        """The one place partial I/O reads the array's internals."""
        codec = array._sharding_codec
        metadata = array._metadata
        context = ShardContext(
            name=array.name, array_shape=array.shape, dtype=array.dtype, fill=array._fill,
            shard_shape=tuple(array._grid_chunks), chunk_key=array._chunk_key,
            is_all_fill=array._is_all_fill, write_empty_chunks=array.write_empty_chunks)
        return cls(codec, context, array.store, array._native_chain, array._prefix,
                   metadata.chunk_key_layout())

    @property
    def inner_shape(self) -> tuple[int, ...]:
        return self.codec.chunk_shape

    @property
    def chunks_per_shard(self) -> tuple[int, ...]:
        return self.codec.chunks_per_shard(self.context.shard_shape)

    def get_range(self, key: str, start: int, length: int) -> bytes | memoryview | None:
        return self.store.get_range(key, start, length)


def _shard_jobs(shards: _Shards, factory: IndexerFactory, selection: Any, indexer: Any
                ) -> tuple[Any, list[ShardJob]]:
    """One job per shard for ``selection``, whose plan over the inner chunks is
    ``indexer``, and the indexer that the jobs' regions refer to."""
    context = shards.context
    if factory is basic_indexer and indexer.shape and indexer.nchunks > _PLAN_IN_THREADS:
        by_shard = basic_indexer(selection, context.array_shape, context.shard_shape)
        jobs = [ShardJob(p.chunk_coords, p.out_selection, None, p.chunk_selection)
                for p in by_shard]
        if all(is_view_selection(job.region) for job in jobs):
            return by_shard, jobs
    grouped = group_by_shard(list(indexer), shards.chunks_per_shard)
    return indexer, [ShardJob(coords, None, members) for coords, members in grouped.items()]


# --- reading ---------------------------------------------------------------------------------

def read_sharded(array: Array, factory: IndexerFactory, selection: Any,
                 out: np.ndarray[Any, Any] | None = None) -> Any:
    """Read ``selection`` from a sharded array, fetching only what it needs; into ``out``
    when given (it must fit the selection, see ``Array._check_output``)."""
    return read_sharded_counting(array, factory, selection, out)[0]


def read_sharded_counting(array: Array, factory: IndexerFactory, selection: Any,
                          out: np.ndarray[Any, Any] | None = None) -> tuple[Any, int]:
    """:func:`read_sharded`, and how many shards it found missing (read as the fill
    value; a count that may include a shard twice, for ``read_missing_chunks``, which
    asks only whether any was).

    >>> import zarrkit as zk
    >>> from zarrkit.indexing import basic_indexer
    >>> a = zk.create_array({}, shape=(8,), chunks=(2,), shards=(4,), dtype="u1")
    >>> a[:2] = 1
    >>> result, absent = read_sharded_counting(a, basic_indexer, slice(None))
    >>> result.tolist(), absent
    ([1, 1, 0, 0, 0, 0, 0, 0], 1)
    """
    shards = _Shards.of(array)
    indexer = factory(selection, shards.context.array_shape, shards.inner_shape)
    # The output first: one that cannot be allocated fails before any planning.
    result, target = array._output(indexer, out)
    absent = _read_into(shards, factory, selection, indexer, target)
    return (result[()] if out is None and result.ndim == 0 else result), absent


class _Absent:
    """Counts the shards a read finds missing, where the Python path fetches them: a
    shard's index (or the whole shard) not there. Shared by the threads: a count that is
    off by a lost increment still says whether any was missing, all that is asked."""

    def __init__(self, shards: _Shards) -> None:
        self.count = 0
        self._shards = shards

    def get_range(self, key: str, start: int, length: int) -> bytes | memoryview | None:
        data = self._shards.get_range(key, start, length)
        if data is None:
            self.count += 1
        return data

    def fetch_shard(self, key: str) -> tuple[memoryview, Any] | None:
        shard = _fetch_shard(self._shards, key)
        if shard is None:
            self.count += 1
        return shard


def _read_into(shards: _Shards, factory: IndexerFactory, selection: Any, indexer: Any,
               target: np.ndarray[Any, Any]) -> int:
    """Read ``indexer`` into ``target``; how many shards were found missing."""
    store = shards.store
    chain = shards.chain
    if chain is not None:
        absent = _read_shards_natively(shards, chain, indexer, target)
        if absent is not None:
            return absent
    tally = _Absent(shards)
    _, jobs = _shard_jobs(shards, factory, selection, indexer)
    # Indexes first (one small request per shard), then the inner chunks as one queue of
    # byte ranges shared by all threads. From a store where each request costs a round
    # trip, a shard wanted whole is one request (its index read from its own bytes) when
    # there are shards enough to keep every thread busy.
    whole = (store.prefers_whole_values
             and len(jobs) >= _WHOLE_SHARDS_PER_THREAD * config.threads)
    codec, context = shards.codec, shards.context
    plans = parallel_map(
        lambda job: codec.plan_partial_read(context, tally.get_range, job, target,
                                            whole=whole), jobs)
    reads = [read for plan in plans for read in plan]
    fetched_whole = list(dict.fromkeys(
        read.key for read in reads if isinstance(read, ShardPiece)))
    if not fetched_whole:
        drain(lambda: codec.partial_reader(context, shards.get_range).read, reads)
        return tally.count
    # Whole shards are fetched (and their indexes decoded) ahead of the threads, which share
    # the decoding of each shard piece by piece: no thread waits for a transfer between
    # shards, nor idles at the end while another decodes a whole shard.
    pieces = [sum(1 for read in reads if read.key == key) for key in fetched_whole]
    with Prefetch(tally.fetch_shard, fetched_whole,
                  ahead=config.threads, takes=pieces) as fetched:
        order = {key: i for i, key in enumerate(fetched_whole)}

        def reader() -> Callable[[RangeRead | ShardPiece], None]:
            return PartialReader(codec, context, shards.get_range,
                                 lambda key: fetched.take(order[key])).read

        drain(reader, reads)
    return tally.count


def _fetch_shard(shards: _Shards, key: str) -> tuple[memoryview, Any] | None:
    """A whole shard's bytes and its decoded index, or None if it is not stored."""
    data = shards.store.get(key)
    if data is None:
        return None
    return memoryview(data), full_index(shards.codec, shards.context, key, data)


def _read_shards_natively(shards: _Shards, chain: Any, indexer: Any,
                          target: np.ndarray[Any, Any]) -> int | None:
    """Read a selection with the native engine, its threads checking each shard's index
    and decoding and copying inner chunks with the GIL released. From a store that
    locates its files (a DirectoryStore), any selection of forward slices: the engine
    reads a shard file whole when most of it is wanted, else its index and the wanted
    inner chunks with pread; the same from a store that locates its values in an open
    file (a ZipStore's stored members). From other stores, only a selection that wants
    every inner chunk of each shard it touches (the common read-all): shards are fetched
    whole, a few at a time (from a remote store, the next few while these decode); a
    partial read from them takes the Python path, which fetches only byte ranges. Returns
    how many shards were found missing; None, having read nothing, when the selection is
    not one of those: the caller then takes the Python path."""
    context, store = shards.context, shards.store
    files = offers(store, LocatesFiles)
    only: set[tuple[int, ...]] | None = None
    absent = 0
    if files:
        grid = _read_grid_natively(shards, chain, indexer, target)
        if grid is not None:
            absent, deferred = grid
            if not deferred:
                return absent
            # Shard files that are links: read through the store.
            only, files = {tuple(coords) for coords in deferred}, False
    # A store that locates its values in an open file (ZipStore) hands the engine each
    # shard's place in it, to read as it reads a file.
    ranges = not files and only is None and offers(store, LocatesRanges)
    tasks: list[tuple[str, list[tuple[tuple[int, ...], Any, Any]], bool]] = []
    for coords, members in group_by_shard(list(indexer), shards.chunks_per_shard).items():
        if only is not None and coords not in only:
            continue
        whole = len(members) == context.stored_inner_chunks(coords, shards.inner_shape)
        if not (whole or files or ranges or only is not None):
            return None
        inner = []
        for local, projection in members:
            chunk_selection = native.selection_triples(projection.chunk_selection,
                                                       shards.inner_shape)
            out_selection = native.selection_triples(projection.out_selection, target.shape)
            if chunk_selection is None or out_selection is None:
                return None
            inner.append((local, chunk_selection, out_selection))
        tasks.append((context.chunk_key(coords), inner, whole))
    threads = config.threads
    if (store.prefers_whole_values and not files and not ranges
            and len(tasks) < _WHOLE_SHARDS_PER_THREAD * threads):
        # Too few shards to keep every thread busy one whole shard each: the Python path
        # then reads their indexes and inner chunks with parallel range requests.
        return None
    if files:
        value_file = store.value_file  # type: ignore[attr-defined]
        shard_tasks: list[Any] = [(key, (value_file(key), 0, None), inner)
                                  for key, inner, _ in tasks]
        missing, linked = _decode_shards(context, chain, target, shard_tasks, threads)
        absent += len(missing)
        # Shard files that are links: read through the store, which knows where they lead.
        tasks = [tasks[i] for i in linked]
    elif ranges:
        places = [store.value_range(key) for key, _, _ in tasks]  # type: ignore[attr-defined]
        # A shard the store must read itself (compressed) is fetched whole below: only
        # worth it when all of it is wanted.
        if any(place is False and not whole
               for place, (_, _, whole) in zip(places, tasks, strict=True)):
            return None
        shard_tasks = []
        for place, (key, inner, _) in zip(places, tasks, strict=True):
            if place is None:
                _fill_missing(target, inner, context.fill)
                absent += 1
            elif place is not False:
                shard_tasks.append((key, place, inner))
        if shard_tasks:
            _decode_shards(context, chain, target, shard_tasks, threads)
        tasks = [task for place, task in zip(places, tasks, strict=True) if place is False]
    # A few shards in memory at a time: enough to keep every thread busy. From a store
    # where a fetch waits on the network, the next batch is fetched while the engine
    # decodes this one (with the GIL released).
    step = max(1, 2 * threads)
    batches = [tasks[start:start + step] for start in range(0, len(tasks), step)]

    def fetch(batch: list[Any]) -> list[Any]:
        return store.get_many([key for key, _, _ in batch])

    ahead = 1 if store.prefers_whole_values and len(batches) > 1 else 0
    with contextlib.ExitStack() as stack:
        fetched = (stack.enter_context(Prefetch(fetch, batches, ahead=ahead))
                   if ahead else None)
        for index, batch in enumerate(batches):
            values = fetch(batch) if fetched is None else fetched.take(index)
            shard_tasks = []
            for (key, inner, _), data in zip(batch, values, strict=True):
                if data is None:
                    _fill_missing(target, inner, context.fill)
                    absent += 1
                else:
                    shard_tasks.append((key, data, inner))
            if shard_tasks:
                _decode_shards(context, chain, target, shard_tasks, threads)
            del values, shard_tasks
    return absent


def _fill_missing(target: np.ndarray[Any, Any], inner: list[tuple[Any, Any, Any]],
                  fill: Any) -> None:
    """The regions of a missing shard's wanted inner chunks, set to the fill value."""
    for _, _, out_selection in inner:
        target[tuple(slice(*part) for part in out_selection)] = fill


def _read_grid_natively(shards: _Shards, chain: Any, indexer: Any,
                        target: np.ndarray[Any, Any]) -> tuple[int, list[list[int]]] | None:
    """A basic selection read by the engine's ``decode_grid_into`` from shard files
    (Python plans per dimension, the engine groups inner chunks by shard and reads each
    shard once); how many shards were missing and the coordinates of those it deferred
    (links), or None when the engine cannot take the selection (nothing read)."""
    plan = native.grid_pieces(indexer, shards.inner_shape)
    if plan is None or shards.key_layout is None:
        return None
    dims = plan.dims
    view = reshaped_view(target, plan.shape)  # the integers' axes back, never a copy
    if view is None:
        return None
    store = shards.store
    key_prefix, separator = shards.key_prefix + shards.key_layout[0], shards.key_layout[1]
    wanted = [list(dict.fromkeys(piece[0] // n for piece in dim))
              for dim, n in zip(dims, shards.chunks_per_shard, strict=True)]
    native.check_grid_directories(store.value_file, key_prefix, separator, wanted)  # type: ignore[attr-defined]
    with native.errors_named(f"array {shards.context.name!r} shard"):
        absent, deferred = native.decode_grid_into(chain, view, dims, store.files_root,  # type: ignore[attr-defined]
                                                   key_prefix, separator, config.threads)
    return absent, deferred


def _decode_shards(context: ShardContext, chain: Any, target: np.ndarray[Any, Any],
                   shard_tasks: Any, threads: int) -> tuple[list[int], list[int]]:
    """The engine's ``decode_shards_into``, its errors as zarrkit's."""
    with native.errors_named(f"array {context.name!r} shard"):
        return native.decode_shards_into(chain, target, shard_tasks, threads)  # type: ignore[no-any-return]


# --- writing ---------------------------------------------------------------------------------

def write_sharded(array: Array, factory: IndexerFactory, selection: Any, value: Any) -> None:
    """Write ``selection`` of a sharded array, rewriting only the shards it touches.

    Nothing is stored before the value encodes and every shard to update decodes (its
    index and the inner chunks partly overwritten): a write of several shards failing
    on a later one would leave the first ones written.
    """
    shards = _Shards.of(array)
    context = shards.context
    indexer, jobs = _shard_jobs(
        shards, factory, selection,
        factory(selection, context.array_shape, shards.inner_shape))
    several = len(jobs) > 1
    source, is_scalar = array._prepare_value(indexer, value, check=several)
    whole = _whole_shards_for_engine(shards, factory, selection, is_scalar)
    if whole:
        done = {projection.chunk_coords for projection in whole}
        jobs = [job for job in jobs if job.coords not in done]
    if several:
        drain(lambda: _writer(shards, source, is_scalar).check, jobs)
    if whole:
        from zarrkit.hierarchy.write_engine import write_natively

        write_natively(array, shards.chain, source, whole)
    drain(lambda: _store_rebuilt(shards, _writer(shards, source, is_scalar)), jobs)


def _writer(shards: _Shards, source: Any, is_scalar: bool) -> PartialWriter:
    return shards.codec.partial_writer(shards.context, shards.store.get, source, is_scalar)


def _store_rebuilt(shards: _Shards, writer: PartialWriter) -> Callable[[ShardJob], None]:
    """Stores shards rebuilt by ``writer`` (one per thread), each read-modify-write under
    the shard's lock; an empty shard is deleted."""
    store = shards.store

    def write(job: ShardJob) -> None:
        key = shards.context.chunk_key(job.coords)
        with chunk_lock(store, key):
            builder = writer.rebuild(job)
            shard = builder.finish()
            if shard is None:
                store.delete(key)
            else:
                store.set(key, shard)
            del shard
            writer.recycle(builder)

    return write


def _whole_shards_for_engine(shards: _Shards, factory: IndexerFactory, selection: Any,
                             is_scalar: bool) -> list[ChunkProjection]:
    """The projections (over the shard grid) of the shards that a basic selection writes
    whole, when the native engine is to encode them; else none."""
    if shards.chain is None or is_scalar or factory is not basic_indexer:
        return []
    context = shards.context
    by_shard = basic_indexer(selection, context.array_shape, context.shard_shape)
    return [projection for projection in by_shard if projection.is_complete]
