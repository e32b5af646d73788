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

import math
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from zarrkit import native
from zarrkit.buffers import copy_into
from zarrkit.codecs.v3.sharding import ShardBuilder, coalesce_ranges
from zarrkit.concurrency import Prefetch, chunk_lock, drain, parallel_map
from zarrkit.config import config
from zarrkit.errors import ChunkDecodeError, StoreIOError
from zarrkit.indexing import ChunkProjection, basic_indexer
from zarrkit.storage.base import LocatesFiles, offers

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array

IndexerFactory = Callable[[Any, tuple[int, ...], tuple[int, ...]], Any]
Members = list[tuple[tuple[int, ...], ChunkProjection]]
T = TypeVar("T")

# Longest coalesced read: small enough that one shard's inner chunks are shared among the
# threads and a thread holds little compressed data at a time, large enough that the
# per-request cost (an open and a seek for a file) stays negligible.
_MAX_READ = 4 << 20


# Basic selections of more inner chunks than this are planned shard by shard in the
# threads; planning a few on the calling thread is cheaper than a second indexer.
_PLAN_IN_THREADS = 64


def supports_partial_io(pipeline: Any) -> bool:
    """Whether shard bytes are addressable directly: sharding is the only codec, so no
    array-to-array codec reshapes the shard and no bytes codec wraps it."""
    return (pipeline.sharding is not None and not pipeline.array_array
            and not pipeline.bytes_bytes)


@dataclass(frozen=True)
class _Layout:
    """What every shard of one array shares."""

    array: Array
    sharding: Any
    shard_shape: tuple[int, ...]
    inner_shape: tuple[int, ...]
    chunks_per_shard: tuple[int, ...]
    inner_pipeline: Any

    @classmethod
    def of(cls, array: Array) -> _Layout:
        sharding = array._sharding_codec
        shard_shape = tuple(array._grid_chunks)
        return cls(array, sharding, shard_shape, tuple(sharding.chunk_shape),
                   sharding.chunks_per_shard(shard_shape), sharding.inner_pipeline)

    @property
    def inner_nbytes(self) -> int:
        """Bytes of one decoded inner chunk."""
        return math.prod(self.inner_shape) * self.array.dtype.itemsize

    def what(self, key: str, projection: ChunkProjection) -> str:
        return (f"array {self.array.name!r} shard {key!r} inner chunk "
                f"{projection.chunk_coords}")


@dataclass(frozen=True, eq=False)
class _ShardJob:
    """One shard's part of a selection.

    ``region`` is where that part lies in the selection's output (and value), so that
    ``members`` index that region; with no region they index the whole output. Members
    not yet known are planned from ``selection`` (a basic selection of the shard) by the
    thread that takes the job, so planning thousands of inner chunks is shared too.
    """

    coords: tuple[int, ...]
    region: tuple[slice, ...] | None
    members: Members | None
    selection: Any = None

    def resolve(self, layout: _Layout, whole: Any, is_scalar: bool = False
                ) -> tuple[Any, Members]:
        """The region of ``whole`` (the output or the value) and the members."""
        part = whole if self.region is None or is_scalar else whole[self.region]
        if self.members is not None:
            return part, self.members
        # The shard clipped to the array, so completeness means what it does globally.
        shape = tuple(min(n, size - c * n) for c, n, size in zip(
            self.coords, layout.shard_shape, layout.array.shape, strict=True))
        indexer = basic_indexer(self.selection, shape, layout.inner_shape)
        return part, [(p.chunk_coords, p) for p in indexer]


def _shard_jobs(layout: _Layout, factory: IndexerFactory, selection: Any, indexer: Any
                ) -> tuple[Any, list[_ShardJob]]:
    """One job per shard for ``selection``, whose plan over the inner chunks is
    ``indexer``, and the indexer that the jobs' regions refer to."""
    array = layout.array
    if factory is basic_indexer and indexer.shape and indexer.nchunks > _PLAN_IN_THREADS:
        shards = basic_indexer(selection, array.shape, layout.shard_shape)
        jobs = [_ShardJob(p.chunk_coords, p.out_selection, None, p.chunk_selection)
                for p in shards]
        if all(_is_view_selection(job.region) for job in jobs):
            return shards, jobs
    grouped = _group_by_shard(list(indexer), layout.chunks_per_shard)
    return indexer, [_ShardJob(coords, None, members) for coords, members in grouped.items()]


def _group_by_shard(projections: list[ChunkProjection], chunks_per_shard: tuple[int, ...]
                    ) -> dict[tuple[int, ...], Members]:
    grouped: dict[tuple[int, ...], Members] = defaultdict(list)
    for projection in projections:
        coords = projection.chunk_coords
        shard = tuple(c // n for c, n in zip(coords, chunks_per_shard, strict=True))
        local = tuple(c % n for c, n in zip(coords, chunks_per_shard, strict=True))
        grouped[shard].append((local, projection))
    return grouped


def _covers(selection: Any, shape: tuple[int, ...]) -> bool:
    """Whether ``selection`` is plain slices spanning all of ``shape`` (a view of it all).

    >>> _covers((slice(0, 2), slice(None)), (2, 3)), _covers((slice(1, 2),), (2,))
    (True, False)
    >>> _covers((np.array([0, 1]),), (2,))
    False
    """
    if not _is_view_selection(selection) or len(selection) != len(shape):
        return False
    if selection == _full_slices(shape):  # what indexers produce; cheaper than indices()
        return True
    return all(s.indices(n) == (0, n, 1) for s, n in zip(selection, shape, strict=True))


@lru_cache(maxsize=64)
def _full_slices(shape: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(0, n, None) for n in shape)


def _is_view_selection(selection: Any) -> bool:
    """Whether indexing with ``selection`` gives an array view (plain slices), not a copy
    or, for ``()`` on a 0-d array, a scalar."""
    return (type(selection) is tuple and len(selection) > 0
            and all(type(s) is slice for s in selection))


def _read_index(array: Array, key: str, shard_shape: tuple[int, ...]) -> Any:
    store = array.store
    return array._sharding_codec.read_index(
        lambda start, length: store.get_range(key, start, length), shard_shape,
        what=f"array {array.name!r} shard {key!r}")


# --- reading ---------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _RangeRead:
    """One byte-range request of a shard and the inner chunks it holds."""

    key: str
    start: int
    length: int
    target: np.ndarray[Any, Any]  # what the pieces' out_selection index
    pieces: list[tuple[int, int, ChunkProjection]]  # (offset in the shard, nbytes, where)


def read_sharded(array: Array, factory: IndexerFactory, selection: Any,
                 out: np.ndarray[Any, Any] | None = None) -> Any:
    """Read ``selection`` from a sharded array, fetching only what it needs; into ``out``
    when given (it must fit the selection, see ``Array._check_output``)."""
    layout = _Layout.of(array)
    indexer = factory(selection, array.shape, layout.inner_shape)
    # The output first: one that cannot be allocated fails before any planning.
    result, target = array._output(indexer, out)
    # Remote stores (whole values preferred) keep the Python path, whose fetches overlap
    # the decoding (see Prefetch below); the engine's batches fetch, then decode.
    chain = None if array.store.prefers_whole_values else array._native_chain
    if chain is not None and _read_shards_natively(layout, chain, indexer, target):
        return result[()] if out is None and result.ndim == 0 else result
    _, jobs = _shard_jobs(layout, factory, selection, indexer)
    # Indexes first (one small request per shard), then the inner chunks as one queue of
    # byte ranges shared by all threads. From a store where each request costs a round
    # trip, a shard wanted whole is one request (its index read from its own bytes) when
    # there are shards enough to keep every thread busy.
    whole = (array.store.prefers_whole_values
             and len(jobs) >= _WHOLE_SHARDS_PER_THREAD * config.threads)
    plans = parallel_map(lambda job: _plan_reads(layout, target, job, whole), jobs)
    reads = [read for plan in plans for read in plan]
    shards = list(dict.fromkeys(read.key for read in reads if isinstance(read, _ShardPiece)))
    if not shards:
        drain(lambda: _RangeReader(layout).read, reads)
        return result[()] if out is None and result.ndim == 0 else result
    # Whole shards are fetched (and their indexes decoded) ahead of the threads, which share
    # the decoding of each shard piece by piece: no thread waits for a transfer between
    # shards, nor idles at the end while another decodes a whole shard.
    pieces = [sum(1 for read in reads if read.key == key) for key in shards]
    with Prefetch(lambda key: _fetch_shard(layout, key), shards, ahead=config.threads,
                  takes=pieces) as fetched:
        order = {key: i for i, key in enumerate(shards)}
        drain(lambda: _RangeReader(layout, lambda key: fetched.take(order[key])).read, reads)
    return result[()] if out is None and result.ndim == 0 else result


def _read_shards_natively(layout: _Layout, chain: Any, indexer: Any,
                          target: np.ndarray[Any, Any]) -> bool:
    """Read a selection with the native engine, its threads checking each shard's index
    and decoding and copying inner chunks with the GIL released. From a store that
    locates its files (a DirectoryStore), any selection of forward slices: the engine
    reads a shard file whole when most of it is wanted, else its index and the wanted
    inner chunks with pread. From other stores, only a selection that wants every inner
    chunk of each shard it touches (the common read-all): shards are fetched whole, a few
    at a time. False, having read nothing, when the selection is not one of those: the
    caller then takes the Python path."""
    array = layout.array
    files = offers(array.store, LocatesFiles)
    only: set[tuple[int, ...]] | None = None
    if files:
        deferred = _read_grid_natively(layout, chain, indexer, target)
        if deferred is not None and not deferred:
            return True
        if deferred is not None:  # shard files that are links: read through the store
            only, files = {tuple(coords) for coords in deferred}, False
    tasks: list[tuple[str, list[tuple[tuple[int, ...], Any, Any]]]] = []
    for coords, members in _group_by_shard(list(indexer), layout.chunks_per_shard).items():
        if only is not None and coords not in only:
            continue
        if not files and only is None and len(members) != _stored_inner_chunks(layout, coords):
            return False
        inner = []
        for local, projection in members:
            chunk_selection = native.selection_triples(projection.chunk_selection,
                                                       layout.inner_shape)
            out_selection = native.selection_triples(projection.out_selection, target.shape)
            if chunk_selection is None or out_selection is None:
                return False
            inner.append((local, chunk_selection, out_selection))
        tasks.append((array._chunk_key(coords), inner))
    threads = config.threads
    if files:
        value_file = array.store.value_file  # type: ignore[attr-defined]
        shard_tasks: list[Any] = [(key, (value_file(key), 0, None), inner)
                                  for key, inner in tasks]
        _, linked = _decode_shards(array, chain, target, shard_tasks, threads)
        # Shard files that are links: read through the store, which knows where they lead.
        tasks = [tasks[i] for i in linked]
    # A few shards in memory at a time: enough to keep every thread busy.
    step = max(1, 2 * threads)
    for start in range(0, len(tasks), step):
        batch = tasks[start:start + step]
        shard_tasks = []
        for (key, inner), data in zip(batch, array.store.get_many([k for k, _ in batch]),
                                      strict=True):
            if data is None:
                for _, _, out_selection in inner:
                    target[tuple(slice(*part) for part in out_selection)] = array._fill
            else:
                shard_tasks.append((key, data, inner))
        if shard_tasks:
            _decode_shards(array, chain, target, shard_tasks, threads)
    return True


def _read_grid_natively(layout: _Layout, chain: Any, indexer: Any,
                        target: np.ndarray[Any, Any]) -> list[list[int]] | None:
    """A basic selection read by the engine's ``decode_grid_into`` from shard files
    (Python plans per dimension, the engine groups inner chunks by shard and reads each
    shard once); the coordinates of the shards it deferred (links), or None when the
    engine cannot take the selection (nothing read)."""
    array = layout.array
    grid = native.grid_pieces(indexer, layout.inner_shape)
    key_layout = array._metadata.chunk_key_layout()
    if grid is None or key_layout is None:
        return None
    dims, shape = grid
    view = target.view()
    try:
        view.shape = shape  # the integers' axes back, as a view
    except (AttributeError, ValueError):
        return None
    store = array.store
    key_prefix, separator = array._prefix + key_layout[0], key_layout[1]
    shards = [list(dict.fromkeys(piece[0] // n for piece in dim))
              for dim, n in zip(dims, layout.chunks_per_shard, strict=True)]
    native.check_grid_directories(store.value_file, key_prefix, separator, shards)  # type: ignore[attr-defined]
    try:
        _, deferred = native.decode_grid_into(chain, view, dims, store.files_root,  # type: ignore[attr-defined]
                                              key_prefix, separator, config.threads)
    except native.ChunkDecodeError as e:
        raise ChunkDecodeError(f"array {array.name!r} shard {e}") from None
    except native.ChunkReadError as e:
        raise StoreIOError(f"array {array.name!r} shard {e}") from None
    return deferred  # type: ignore[no-any-return]


def _decode_shards(array: Array, chain: Any, target: np.ndarray[Any, Any], shard_tasks: Any,
                   threads: int) -> tuple[list[int], list[int]]:
    """The engine's ``decode_shards_into``, its errors as zarrkit's."""
    try:
        return native.decode_shards_into(chain, target, shard_tasks, threads)  # type: ignore[no-any-return]
    except native.ChunkDecodeError as e:
        raise ChunkDecodeError(f"array {array.name!r} shard {e}") from None
    except native.ChunkReadError as e:
        raise StoreIOError(f"array {array.name!r} shard {e}") from None


def _plan_reads(layout: _Layout, output: np.ndarray[Any, Any], job: _ShardJob,
                whole: bool = False) -> list[_RangeRead | _ShardPiece]:
    """The requests that fetch one shard's wanted inner chunks; chunks it does not store
    are filled in right away. With ``whole``, a shard whose every inner chunk is wanted is
    fetched with one request."""
    array = layout.array
    target, members = job.resolve(layout, output)
    key = array._chunk_key(job.coords)
    if whole and len(members) == _stored_inner_chunks(layout, job.coords):
        per_piece = max(1, _PIECE_BYTES // layout.inner_nbytes)
        return [_ShardPiece(key, target, members[i:i + per_piece])
                for i in range(0, len(members), per_piece)]
    index = _read_index(array, key, layout.shard_shape)
    if index is None:
        ranges: list[tuple[int, int] | None] = [None] * len(members)
    else:
        ranges = index.byte_ranges([local for local, _ in members])
    wanted: list[tuple[tuple[int, int], ChunkProjection]] = []
    for (_, projection), byte_range in zip(members, ranges, strict=True):
        if byte_range is None:
            target[projection.out_selection] = array._fill
        else:
            wanted.append((byte_range, projection))
    return [
        _RangeRead(key, start, length, target,
                   [(wanted[i][0][0], wanted[i][0][1], wanted[i][1]) for i in covered])
        for start, length, covered in coalesce_ranges(
            [r for r, _ in wanted], max_length=_MAX_READ)
    ]


@dataclass(frozen=True, eq=False)
class _ShardPiece:
    """Some inner chunks of a shard fetched whole (every inner chunk of which is wanted)."""

    key: str
    target: np.ndarray[Any, Any]
    members: Members


# A shard fetched whole is decoded in pieces of about this many decoded bytes, shared
# among the threads.
_PIECE_BYTES = 4 << 20


def _fetch_shard(layout: _Layout, key: str) -> tuple[memoryview, Any] | None:
    """A whole shard's bytes and its decoded index, or None if it is not stored."""
    data = layout.array.store.get(key)
    if data is None:
        return None
    return memoryview(data), _decode_full_index(layout.array, key, data, layout.shard_shape)


# Whole-shard requests are used when a read spans at least this many shards per thread:
# each shard is then decoded by one thread, and enough of them keep every thread busy.
_WHOLE_SHARDS_PER_THREAD = 2


def _stored_inner_chunks(layout: _Layout, coords: tuple[int, ...]) -> int:
    """How many inner chunks of the shard at ``coords`` lie inside the array."""
    return math.prod(
        -(-min(n, size - c * n) // inner) for c, n, size, inner in zip(
            coords, layout.shard_shape, layout.array.shape, layout.inner_shape, strict=True))


# The most inner chunks decoded together as one block (see _RangeReader._decode_run).
_RUN_CHUNKS = 16


class _RangeReader:
    """Fetches byte ranges and decodes their inner chunks into their targets; one per thread,
    so its scratch chunk is reused for every inner chunk that thread decodes."""

    def __init__(self, layout: _Layout,
                 fetched_shard: Callable[[str], tuple[memoryview, Any] | None] | None = None
                 ) -> None:
        self.layout = layout
        self._fetched_shard = fetched_shard
        self._scratch: np.ndarray[Any, Any] | None = None
        self._block: np.ndarray[Any, Any] | None = None

    def read(self, read: _RangeRead | _ShardPiece) -> None:
        if isinstance(read, _ShardPiece):
            self._read_shard_piece(read)
            return
        array = self.layout.array
        data = array.store.get_range(read.key, read.start, read.length)
        if data is None or len(data) != read.length:
            raise ChunkDecodeError(
                f"array {array.name!r} shard {read.key!r}: index points past the end of the "
                f"shard (bytes {read.start}..{read.start + read.length})"
            )
        view = memoryview(data)
        what = f"array {array.name!r} shard {read.key!r} inner chunk "
        self._decode_all(
            [(view[offset - read.start:offset - read.start + size], projection)
             for offset, size, projection in read.pieces], what, read.target)

    def _read_shard_piece(self, read: _ShardPiece) -> None:
        array = self.layout.array
        assert self._fetched_shard is not None
        shard = self._fetched_shard(read.key)
        if shard is None:
            for _, projection in read.members:
                read.target[projection.out_selection] = array._fill
            return
        view, index = shard
        what = f"array {array.name!r} shard {read.key!r} inner chunk "
        ranges = index.byte_ranges([local for local, _ in read.members])
        stored = []
        for (_, projection), byte_range in zip(read.members, ranges, strict=True):
            if byte_range is None:
                read.target[projection.out_selection] = array._fill
            else:
                start, size = byte_range
                stored.append((view[start:start + size], projection))
        self._decode_all(stored, what, read.target)

    def _decode_all(self, pieces: list[tuple[memoryview, ChunkProjection]], what: str,
                    target: np.ndarray[Any, Any]) -> None:
        """Decode stored inner chunks into ``target``; runs of whole chunks side by side
        along the last axis are decoded together and copied as one block."""
        if len(pieces) > 1 and target.ndim > 1:
            # Shards store their inner chunks in any order (zarr-python and zarrkit in
            # Morton order, tensorstore in C order): C order puts neighbours side by side.
            pieces = sorted(pieces, key=lambda piece: piece[1].chunk_coords)
        start = 0
        while start < len(pieces):
            stop = self._run_end(pieces, start, target)
            if stop - start > 1:
                self._decode_run(pieces[start:stop], what, target)
            else:
                piece, projection = pieces[start]
                self._decode(piece, what, target, projection)
            start = stop

    def _run_end(self, pieces: list[tuple[memoryview, ChunkProjection]], start: int,
                 target: np.ndarray[Any, Any]) -> int:
        """The end of the run of pieces from ``start`` that :meth:`_decode_run` can take:
        whole inner chunks, each written to a plain slice of ``target`` that continues the
        previous one along the last axis, into rows that are not contiguous (a contiguous
        destination is decoded into directly)."""
        layout = self.layout
        first = pieces[start][1]
        if (target.dtype.hasobject or target.ndim < 2 or target.strides[-1] != target.itemsize
                or not _covers(first.chunk_selection, layout.inner_shape)
                or not _is_view_selection(first.out_selection)
                or len(first.out_selection) != target.ndim):
            return start + 1
        if target[first.out_selection].flags.c_contiguous:
            return start + 1
        head = first.out_selection[:-1]
        last = first.out_selection[-1]
        end = start + 1
        limit = min(len(pieces), start + _RUN_CHUNKS)
        while end < limit:
            projection = pieces[end][1]
            selection = projection.out_selection
            if not (_is_view_selection(selection) and len(selection) == target.ndim
                    and selection[:-1] == head
                    and selection[-1].start == last.stop and last.step in (None, 1)
                    and selection[-1].step in (None, 1)
                    and _covers(projection.chunk_selection, layout.inner_shape)):
                break
            last = selection[-1]
            end += 1
        return end

    def _decode_run(self, pieces: list[tuple[memoryview, ChunkProjection]], what: str,
                    target: np.ndarray[Any, Any]) -> None:
        """Decode whole inner chunks lying side by side along the last axis into one
        scratch block, then copy the block once: its rows are ``len(pieces)`` times longer
        than a chunk's, and scattering long rows into a big array is much faster than short
        ones (1.7x for 8 chunks of 32^3 uint16, measured)."""
        layout = self.layout
        count = len(pieces)
        block = self._scratch_block()[:count]
        for (piece, projection), chunk in zip(pieces, block, strict=False):
            layout.inner_pipeline.decode_into(piece, chunk,
                                              what=what + str(projection.chunk_coords))
        first, last = pieces[0][1].out_selection, pieces[-1][1].out_selection
        destination = target[first[:-1] + (slice(first[-1].start, last[-1].stop),)]
        rows = destination.reshape(destination.shape[:-1] + (count, layout.inner_shape[-1]))
        copy_into(rows, np.moveaxis(block, 0, -2))

    def _scratch_block(self) -> np.ndarray[Any, Any]:
        if self._block is None:
            self._block = np.empty((_RUN_CHUNKS, *self.layout.inner_shape),
                                   dtype=self.layout.array.dtype)
        return self._block

    def _decode(self, piece: memoryview, what: str, target: np.ndarray[Any, Any],
                projection: ChunkProjection) -> None:
        layout = self.layout
        what += str(projection.chunk_coords)
        whole = _covers(projection.chunk_selection, layout.inner_shape)
        if not _is_view_selection(projection.out_selection):
            chunk = self._decode_scratch(piece, what)
            target[projection.out_selection] = chunk if whole else chunk[
                projection.chunk_selection]
            return
        destination = target[projection.out_selection]
        if whole and destination.shape == layout.inner_shape and destination.flags.c_contiguous:
            # The chunk is a contiguous block of the output: decode straight into it.
            layout.inner_pipeline.decode_into(piece, destination, what=what)
            return
        chunk = self._decode_scratch(piece, what)
        copy_into(destination, chunk if whole else chunk[projection.chunk_selection])

    def _decode_scratch(self, piece: memoryview, what: str) -> np.ndarray[Any, Any]:
        """The chunk decoded into this thread's scratch chunk (valid until the next)."""
        if self._scratch is None:
            self._scratch = np.empty(self.layout.inner_shape, dtype=self.layout.array.dtype)
        self.layout.inner_pipeline.decode_into(piece, self._scratch, what=what)
        return self._scratch


# --- writing ---------------------------------------------------------------------------------

def write_sharded(array: Array, factory: IndexerFactory, selection: Any, value: Any) -> None:
    """Write ``selection`` of a sharded array, rewriting only the shards it touches.

    Nothing is stored before the value encodes and every shard to update decodes (its
    index and the inner chunks partly overwritten): a write of several shards failing
    on a later one would leave the first ones written.
    """
    layout = _Layout.of(array)
    indexer, jobs = _shard_jobs(
        layout, factory, selection, factory(selection, array.shape, layout.inner_shape))
    several = len(jobs) > 1
    source, is_scalar = array._prepare_value(indexer, value, check=several)
    chain, whole = _whole_shards_for_engine(layout, factory, selection, is_scalar)
    if whole:
        done = {projection.chunk_coords for projection in whole}
        jobs = [job for job in jobs if job.coords not in done]
    if several:
        drain(lambda: _ShardWriter(layout, source, is_scalar).check, jobs)
    if whole:
        from zarrkit.hierarchy.write_engine import write_natively

        write_natively(array, chain, source, whole)
    drain(lambda: _ShardWriter(layout, source, is_scalar).write, jobs)


# Shards whose inner chunks are up to this size are encoded whole by the native engine
# when a write covers them (S11's 8 KiB inner chunks); larger ones by the Python path,
# whose threads each build and store a shard (S8's 64 KiB: the same speed either way,
# and the Python path holds less memory).
_NATIVE_WRITE_INNER_BYTES = 32 << 10


def _whole_shards_for_engine(layout: _Layout, factory: IndexerFactory, selection: Any,
                             is_scalar: bool) -> tuple[Any, list[ChunkProjection]]:
    """The engine's chain and the projections (over the shard grid) of the shards that a
    basic selection writes whole, when the engine is to encode them; else (None, [])."""
    array = layout.array
    chain = array._native_chain
    if (chain is None or is_scalar or factory is not basic_indexer
            or layout.inner_nbytes > _NATIVE_WRITE_INNER_BYTES):
        return None, []
    shards = basic_indexer(selection, array.shape, layout.shard_shape)
    return chain, [projection for projection in shards if projection.is_complete]


class _ShardWriter:
    """Builds and stores shards one at a time; one per thread, so its scratch chunk is
    reused for every inner chunk that thread encodes."""

    def __init__(self, layout: _Layout, source: Any, is_scalar: bool) -> None:
        self.layout = layout
        self.source = source
        self.is_scalar = is_scalar
        self._scratch: np.ndarray[Any, Any] | None = None
        self._spare: np.ndarray[Any, Any] | None = None

    def _plan(self, job: _ShardJob
              ) -> tuple[str, Any, dict[tuple[int, ...], list[ChunkProjection]], bool]:
        """The shard's key, the job's part of the source, the projections written into
        each inner chunk, and whether the job overwrites the whole shard."""
        source, members = job.resolve(self.layout, self.source, self.is_scalar)
        whole = (len(members) == self._inner_chunks_in_shard(job.coords)
                 and all(p.is_complete for _, p in members))
        written: dict[tuple[int, ...], list[ChunkProjection]] = defaultdict(list)
        for local, projection in members:
            written[local].append(projection)
        return self.layout.array._chunk_key(job.coords), source, written, whole

    def check(self, job: _ShardJob) -> None:
        """Read the shard as :meth:`write` will (its index, and the stored inner chunks
        it decodes to update), storing nothing: a corrupt one raises here."""
        key, _, written, whole = self._plan(job)
        if whole:
            return
        old = self._stored_chunks(key)
        for local, projections in written.items():
            base = _update_base(projections, old.get(local))
            if base is not None:
                self.layout.inner_pipeline.decode_into(
                    base, self._scratch_chunk(), what=self.layout.what(key, projections[0]))

    def write(self, job: _ShardJob) -> None:
        array = self.layout.array
        key, source, written, whole = self._plan(job)
        with chunk_lock(array.store, key):
            old = {} if whole else self._stored_chunks(key)
            builder = self._build(key, source, written, old)
            shard = builder.finish()
            if shard is None:
                array.store.delete(key)
            else:
                array.store.set(key, shard)
            del shard
            self._recycle(builder.detach())

    def _scratch_chunk(self) -> np.ndarray[Any, Any]:
        if self._scratch is None:
            self._scratch = np.empty(self.layout.inner_shape, dtype=self.layout.array.dtype)
        return self._scratch

    def _recycle(self, buffer: np.ndarray[Any, Any] | None) -> None:
        """Keep the buffer of the shard just stored for the next one, unless the store
        still refers to it: a fresh buffer's pages cost a page fault each to fill (a
        tenth of the encode time of a shard, measured)."""
        # Two references: the argument and getrefcount's own; more means someone (the
        # store) holds a view of it, which reusing it would overwrite.
        if buffer is not None and getattr(sys, "getrefcount", lambda _: 99)(buffer) <= 2:
            self._spare = buffer

    def _inner_chunks_in_shard(self, shard_coords: tuple[int, ...]) -> int:
        """Inner chunks of this shard that lie (partly) inside the array."""
        layout = self.layout
        counts = []
        for s, n, inner, size in zip(shard_coords, layout.chunks_per_shard, layout.inner_shape,
                                     layout.array.shape, strict=True):
            first = s * n
            last = min((s + 1) * n, math.ceil(size / inner))
            counts.append(max(0, last - first))
        return math.prod(counts)

    def _stored_chunks(self, key: str) -> dict[tuple[int, ...], memoryview]:
        """The stored bytes of each inner chunk of the shard at ``key`` (views, no copies)."""
        array = self.layout.array
        shard = array.store.get(key)
        if shard is None:
            return {}
        index = _decode_full_index(array, key, shard, self.layout.shard_shape)
        view = memoryview(shard)
        return {local: view[offset:offset + size]
                for local in index.nonempty()
                for offset, size in [index.byte_range(local)]}

    def _build(self, key: str, source: Any, written: dict[tuple[int, ...], list[ChunkProjection]],
               old: dict[tuple[int, ...], memoryview]) -> ShardBuilder:
        """The new shard: written inner chunks encoded, the others' stored bytes kept."""
        layout = self.layout
        bound = layout.inner_pipeline.max_encoded_size
        capacity = None if bound is None else (
            len(written) * bound + sum(v.nbytes for local, v in old.items()
                                       if local not in written))
        spare, self._spare = self._spare, None
        builder = ShardBuilder(layout.sharding, layout.shard_shape, capacity, spare)
        del spare
        for local in builder.morton_sorted(written.keys() | old.keys()):
            projections = written.get(local)
            data = old[local] if projections is None else self._encode(
                key, source, projections, old.get(local))
            if data is not None:
                builder.add(local, data)
        return builder

    def _encode(self, key: str, source: Any, projections: list[ChunkProjection],
                stored: memoryview | None) -> bytes | None:
        """One written inner chunk's new bytes (None: all fill and empty chunks are not
        written). ``stored`` is its old bytes, the base unless a write covers the chunk."""
        layout = self.layout
        array = layout.array
        chunk = self._scratch_chunk()
        base = _update_base(projections, stored)
        for i, projection in enumerate(projections):
            selection = projection.chunk_selection
            if i == 0 and base is not None:
                layout.inner_pipeline.decode_into(base, chunk, what=layout.what(key, projection))
            elif projection.is_complete or i == 0:
                if not _covers(selection, layout.inner_shape):
                    chunk[...] = array._fill
            if self.is_scalar:
                chunk[selection] = source
            elif _is_view_selection(selection) and _is_view_selection(projection.out_selection):
                copy_into(chunk[selection], source[projection.out_selection])
            else:
                chunk[selection] = source[projection.out_selection]
        if not array.write_empty_chunks and array._is_all_fill(chunk):
            return None
        data = layout.inner_pipeline.encode(chunk)
        if data is None:  # a nested shard whose chunks are all empty: nothing to store
            return None
        # The builder may keep what it is given, and the scratch chunk is reused.
        return data if isinstance(data, bytes) else bytes(data)


def _update_base(projections: list[ChunkProjection], stored: memoryview | None
                 ) -> memoryview | None:
    """The stored bytes a written inner chunk is updated from: None when nothing is
    stored, or when the first write covers the chunk whole (it is built from scratch)."""
    return None if projections[0].is_complete else stored


def _decode_full_index(array: Array, key: str, shard: bytes, shard_shape: tuple[int, ...]
                       ) -> Any:
    return array._sharding_codec.shard_index(shard, shard_shape,
                                             what=f"array {array.name!r} shard {key!r}")
