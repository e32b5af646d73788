"""The read engine of an array: a selection's plan to the chunks it needs, fetched from
the store, decoded and copied into the output, in the thread pool when there is work
enough (the sharded partial path is :mod:`zarrkit.hierarchy.sharded`).

Functions of the :class:`~zarrkit.hierarchy.array.Array` they read, which stays a thin
facade over them.

>>> import numpy as np, zarrkit as zk
>>> a = zk.create_array({}, shape=(4,), chunks=(2,), dtype="u1"); a[:] = [1, 2, 3, 4]
>>> from zarrkit.indexing import basic_indexer
>>> read(a, basic_indexer(slice(1, 3), a.shape, a._grid_chunks)).tolist()
[2, 3]
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit import native
from zarrkit.buffers import ROW_COPY_FROM, allocate, copy_into, reshaped_view, scratch_array
from zarrkit.concurrency import parallel_batches
from zarrkit.config import config
from zarrkit.errors import (
    ChunkDecodeError,
    ChunkNotFoundError,
    OutputArrayError,
    ResourceLimitError,
)
from zarrkit.hierarchy.sharded import read_sharded_counting
from zarrkit.indexing import (
    ChunkProjection,
    basic_indexer,
    plan_batches,
)
from zarrkit.storage.base import LocatesFiles, LocatesRanges, ReadsInto, offers

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array


# Reads with less work than this run in the calling thread: handing a few small chunks
# to the pool costs more in wake-ups and GIL hand-offs than decoding them (S6's 16^3
# boxes over 64 KiB chunks ran 2x slower in the pool). The work is the bytes produced:
# of the output for uncompressed chunks (copies), of whole chunks otherwise (decoding).
INLINE_WORK_BYTES = 1 << 20
# Pointwise reads of fewer bytes than this run in one engine thread.
_POINTS_IN_POOL = 64 << 10
# Uncompressed reads use the pool only when each chunk's copy averages at least this.
_POOL_COPY_BYTES = 256 << 10
# Plans are run this many projections at a time (a batch at a time in the pool): a
# selection of millions of chunks never holds a projection for each of them at once.
PLAN_BATCH = 8192
# A read of at least _LIST_FROM chunks, spanning at least 1/_LIST_FRACTION of the grid,
# switches to listing the array's stored chunks once and reading only those when it has
# met as many missing chunks as stored ones, and at least half a probe (its first _PROBE
# chunks) of them. Each missing chunk costs a request, a listed key much less (2**20
# missing chunks took 5.4 s in memory and 15 s on disk read chunk by chunk). Listing costs
# in proportion to the whole array, hence the fraction; the stored chunks already read
# are read again, at most as many as the missing ones met. A dense array never switches.
_LIST_FROM = 4096
_LIST_FRACTION = 4
_PROBE = 32


def decode(array: Array, data: bytes, key: str, chunk_coords: tuple[int, ...]
            ) -> np.ndarray[Any, Any]:
    pipeline = array._pipeline_for(array._chunk_shape(chunk_coords))
    return pipeline.decode(data, what=f"array {array.name!r} chunk {key!r}")  # type: ignore[no-any-return]


def get(array: Array, factory: Any, selection: Any, out: np.ndarray[Any, Any] | None = None
         ) -> Any:
    array._check_allocation_limit()
    if array._sharded_io:
        # Decodes straight into ``out`` (checked there against the selection).
        result, absent = read_sharded_counting(array, factory, selection, out)
        if absent and not array.read_missing_chunks:
            indexer = factory(selection, array.shape, array._grid_chunks)
            raise_missing(array, (p.chunk_coords for p in indexer))
        return in_read_order(array, result, out)
    indexer = factory(selection, array.shape, array._grid_chunks)
    if array._mmap and out is None and factory is basic_indexer and indexer.nchunks == 1:
        view = mapped_selection(array, indexer)
        if view is not None:  # a view into the file is the point of mmap=: no copy
            return view
    return in_read_order(array, read(array, indexer, out), out)


def read_order(array: Array) -> str | None:
    """The memory order of what reads return when it is not C (None): the config
    order of a format 3 handle; the stored order of a format 2 array, whatever the
    config, as zarr-python's."""
    if array._metadata.zarr_format == 3:
        return array._config_order
    return "F" if array._stored_order == "F" else None


def in_read_order(array: Array, result: Any, out: Any) -> Any:
    """``result`` in the handle's config order (a copy only when a path could not
    allocate it so); a caller's ``out`` is returned as it is."""
    if (read_order(array) != "F" or out is not None or not isinstance(result, np.ndarray)
            or result.flags.f_contiguous):
        return result
    return np.asfortranarray(result)


def check_output(array: Array, out: Any, shape: tuple[int, ...], *, flat: bool
                  ) -> np.ndarray[Any, Any]:
    """``out`` if it can receive a selection of ``shape``, else OutputArrayError."""
    problem = None
    if not isinstance(out, np.ndarray):
        problem = f"is a {type(out).__name__}, not a numpy array"
    elif tuple(out.shape) != tuple(shape):
        problem = f"has shape {out.shape}, the selection {tuple(shape)}"
    elif out.dtype != array.dtype and not (array._strings and out.dtype == array._storage_dtype):
        # Strings may also be read into objects, as they were before StringDType.
        problem = f"has dtype {out.dtype}, the array {array.dtype}"
    elif not out.flags.writeable:
        problem = "is read-only"
    elif flat and not out.flags.c_contiguous:
        problem = "must be C-contiguous for this selection"
    if problem is not None:
        raise OutputArrayError(f"out= for array {array.name!r} {problem}")
    return out  # type: ignore[no-any-return]


def output(array: Array, indexer: Any, out: np.ndarray[Any, Any] | None
            ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """(the result of a read: ``out`` once checked, or a new array; the array the
    indexer's ``out_selection`` address: the result, flattened for pointwise reads)."""
    flat = getattr(indexer, "flat_output", False)
    if out is None:
        try:
            if read_order(array) == "F" and not flat:
                # An F-ordered array is the transpose of a C-ordered one.
                result = allocate(tuple(indexer.shape)[::-1], array.dtype).T
            else:
                result = allocate(indexer.shape, array.dtype)
        except ResourceLimitError as e:
            raise ResourceLimitError(f"reading array {array.name!r}: {e}") from e
    else:
        result = check_output(array, out, indexer.shape, flat=flat)
    return result, (result.reshape(-1) if flat else result)


def read(array: Array, indexer: Any, out: np.ndarray[Any, Any] | None = None) -> Any:
    # The output first: one that cannot be allocated fails before any planning.
    result, target = output(array, indexer, out)
    reader = native_reader(array, target)
    read_batch: Callable[[Sequence[ChunkProjection]], list[bool]]
    if reader is not None and (reader.read_grid(indexer, result) or reader.read_points(indexer)):
        if reader.absent and not array.read_missing_chunks:
            raise_missing(array, (p.chunk_coords for p in indexer))
        return result[()] if out is None and result.ndim == 0 else result
    if reader is not None and not (reader.raw and target.nbytes < INLINE_WORK_BYTES):
        read_batch = reader
    else:
        # Small copies of raw chunks that are not a grid: Python's per-chunk copies cost
        # less than working out, chunk by chunk, which ones the engine could take.
        read_batch = python_batch_reader(array, target)
    if may_list_for(array, indexer):
        read_sparse(array, indexer, target, result, read_batch)
    else:
        missing: list[tuple[int, ...]] = []
        strict = not array.read_missing_chunks  # only then are the missing ones named
        for batch in plan_batches(indexer, PLAN_BATCH):
            found = read_projections(array, batch, result, read_batch)
            if strict:
                missing.extend(p.chunk_coords for p, stored in zip(batch, found, strict=True)
                               if not stored)
        if missing:
            raise_missing(array, missing, checked=True)
    if out is None and result.ndim == 0:
        return result[()]
    return result


def raise_missing(array: Array, coords: Any, *, checked: bool = False) -> None:
    """ChunkNotFoundError, worded as zarr-python's, naming the chunks (shards) among the
    grid coordinates ``coords`` that are not stored: all of them when ``checked`` (a reader
    found them missing), else those the store says it lacks (a reader counted missing
    chunks without naming them). Nothing is raised when none is missing.

    >>> import zarrkit as zk
    >>> a = zk.create_array({}, shape=(4,), chunks=(2,), dtype="u1"); a[:2] = 1
    >>> raise_missing(a, [(0,), (1,)])
    Traceback (most recent call last):
    ...
    zarrkit.errors.ChunkNotFoundError: 1 chunk(s) not found in store 'memory://...'.
    Set the 'array.read_missing_chunks' config to True ...
    Missing chunks:
      chunk 'c/1' (grid position (1,))
    """
    # Sorted, the order of zarr-python's chunk iteration for every kind of selection.
    unique = sorted({tuple(int(c) for c in chunk) for chunk in coords})
    if not checked:
        # A one-byte range: asks whether the value exists without fetching it.
        store = array._store
        unique = [chunk for chunk in unique
                  if store.get_range(array._chunk_key(chunk), 0, 1) is None]
    if not unique:
        return
    lines = "\n".join(f"  chunk '{array._metadata.chunk_key(chunk)}' (grid position {chunk})"
                      for chunk in unique)
    raise ChunkNotFoundError(
        f"{len(unique)} chunk(s) not found in store '{array.store_path}'.\n"
        f"Set the 'array.read_missing_chunks' config to True to fill missing chunks with "
        f"the fill value.\nMissing chunks:\n{lines}")


def read_sparse(array: Array, indexer: Any, target: np.ndarray[Any, Any],
                 result: np.ndarray[Any, Any],
                 read_batch: Callable[[Sequence[ChunkProjection]], list[bool]]) -> None:
    """Read chunk by chunk, counting the chunks found missing; once they are as many
    as those found stored (see _LIST_FROM), list the stored chunks and read those."""
    found = missing = 0
    for batch in plan_batches(indexer, PLAN_BATCH, first=_PROBE):
        if missing >= max(_PROBE // 2, found):
            read_listed(array, indexer, target, result, read_batch)
            return
        stored = sum(read_projections(array, batch, result, read_batch))
        found += stored
        missing += len(batch) - stored


def may_list_for(array: Array, indexer: Any) -> bool:
    """Whether a read of ``indexer`` may switch to listing the stored chunks (see
    _LIST_FROM): it spans very many chunks and a good part of the grid, and the
    store can list; never when a missing chunk is an error (it must be named)."""
    # Each chunk gives at least an element.
    if math.prod(indexer.shape) < _LIST_FROM or not array.read_missing_chunks:
        return False
    nchunks = indexer.nchunks
    return (nchunks >= _LIST_FROM
            and nchunks * _LIST_FRACTION >= math.prod(array._storage_grid_shape)
            and getattr(array._store, "supports_listing", False))


def read_listed(array: Array, indexer: Any, target: np.ndarray[Any, Any],
                 result: np.ndarray[Any, Any],
                 read_batch: Callable[[Sequence[ChunkProjection]], list[bool]]) -> None:
    """The read again, from the array's stored chunks listed once: ``target`` filled
    with the fill value, then only the listed chunks the selection touches read."""
    stored = [coords for _, coords in array._stored_chunks()]
    target[...] = array._fill
    for batch in plan_batches(indexer.projections_for(stored), PLAN_BATCH):
        read_projections(array, batch, result, read_batch)


def read_projections(array: Array, batch: list[ChunkProjection], result: np.ndarray[Any, Any],
                read_batch: Callable[[Sequence[ChunkProjection]], list[bool]]
                ) -> list[bool]:
    """Read one batch of a plan, in the pool when worth it (the native engine runs its
    own threads); for each chunk, whether it was stored."""
    if not isinstance(read_batch, NativeBatchReader) and read_in_pool(array, batch, result):
        return parallel_batches(read_batch, batch)
    return read_batch(batch)


def read_in_pool(array: Array, projections: Sequence[ChunkProjection],
                  result: np.ndarray[Any, Any]) -> bool:
    """Whether a read is worth the thread pool. Decoding is: once the chunks add up
    to enough bytes. Uncompressed chunks are only copied into the result, and a short
    copy per chunk gains less than the hand-off costs (S10's ``a[::7]``: 32 copies of
    87 KB, 1.0 ms inline, 1.8 ms in the pool): the copies must be long as well."""
    if array._pipeline.is_raw:
        return (result.nbytes >= INLINE_WORK_BYTES
                and result.nbytes >= _POOL_COPY_BYTES * len(projections))
    return chunks_bytes(array, projections) >= INLINE_WORK_BYTES


def chunks_bytes(array: Array, projections: Sequence[ChunkProjection]) -> int:
    """Decoded size of the chunks ``projections`` touch (estimated from the first chunk's
    shape on a rectilinear grid)."""
    if not projections:
        return 0
    chunk_shape = array._chunk_shape(projections[0].chunk_coords)
    return len(projections) * math.prod(chunk_shape) * array._storage_dtype.itemsize


class NativeBatchReader:
    """Reads batches of projections with the native engine: the chunks decoded and
    copied into the target in one engine call (its threads, the GIL released), read
    by the engine from their files when the store locates them
    (:class:`~zarrkit.storage.base.LocatesFiles`), else fetched with one ``get_many``.
    A projection the engine cannot address (integer or array indices, negative steps),
    or a chunk file that is a symbolic link, goes through the Python reader.

    >>> import numpy as np, zarrkit as zk
    >>> a = zk.create_array({}, shape=(6, 4), chunks=(4, 4), dtype="u2")
    >>> a[...] = np.arange(24).reshape(6, 4)
    >>> a[1:6:2, ::-1].tolist() == np.arange(24).reshape(6, 4)[1:6:2, ::-1].tolist()
    True
    """

    def __init__(self, array: Array, target: np.ndarray[Any, Any], chain: Any) -> None:
        self.array = array
        self.target = target
        self.chain = chain
        self.chunk_shape = tuple(chain.chunk_shape)
        self.raw = array._pipeline.is_raw
        # Chunks the engine's grid and point reads found missing (they count, not name).
        self.absent = 0

    @functools.cached_property
    def value_file(self) -> Callable[[str], Any] | None:
        """The store's ``value_file`` when it locates its values' files, else None."""
        store = self.array._store
        return store.value_file if offers(store, LocatesFiles) else None  # type: ignore[attr-defined,no-any-return]

    @functools.cached_property
    def value_range(self) -> Callable[[str], Any] | None:
        """The store's ``value_range`` when it locates its values in an open file."""
        store = self.array._store
        return store.value_range if offers(store, LocatesRanges) else None  # type: ignore[attr-defined,no-any-return]

    @functools.cached_property
    def fallback(self) -> Callable[[Sequence[ChunkProjection]], list[bool]]:
        """The Python reader of what the engine leaves (links, selections it cannot
        address), made when first needed."""
        return python_batch_reader(self.array, self.target)

    def threads(self, chunks_bytes: int) -> int:
        """The engine threads for a call that reads chunks of ``chunks_bytes`` decoded:
        the work is that much decoding, or for uncompressed chunks, at most the target's
        bytes copied (S10's ``a[0]`` copies 320 bytes out of eight 600 KB chunks: the
        pool's hand-off took longer than the copies)."""
        work = min(chunks_bytes, self.target.nbytes) if self.raw else chunks_bytes
        return config.threads if work >= INLINE_WORK_BYTES else 1

    def read_grid(self, indexer: Any, result: np.ndarray[Any, Any]) -> bool:
        """Read a basic or orthogonal selection with the engine's grid reads: Python
        plans per dimension (an index array's share of a chunk in runs, see
        ``native.grid_pieces``) and the engine forms and names every chunk, a few
        thousand per call, and reads them, from their files (``decode_grid_into``) when
        the store locates them, else
        from the values of one ``get_many`` (``decode_grid_values_into``; a ZIP archive
        gives its stored members' file ranges). As for other reads, a read of files that
        finds as many chunks missing as stored switches to listing the stored ones (see
        ``may_list_for``). False, having read nothing, when the engine cannot take the
        selection, or when values Python fetches are of shards (``read_sharded`` reads
        those) or may be missing in great numbers (the general path probes first)."""
        plan = native.grid_pieces(indexer, self.chunk_shape)
        if plan is None:
            return False
        array, target = self.array, self.target
        layout = array._metadata.chunk_key_layout()
        if layout is None:
            return False
        dims = plan.dims
        view = reshaped_view(target, plan.shape)  # the integers' axes back, never a copy
        if view is None:
            return False
        key_prefix = array._prefix + layout[0]
        separator = layout[1]
        store = array._store
        # Each dimension's chunks, and where each of dimension 0's begins among its pieces
        # (an index array may give a chunk several pieces; a batch never splits them).
        chunk_indices = ([list(dict.fromkeys(piece[0] for piece in dim)) for dim in dims]
                         if plan.several else None)
        bounds = ([0] + [j for j in range(1, len(dims[0]))
                         if dims[0][j][0] != dims[0][j - 1][0]] + [len(dims[0])]
                  if plan.several else range(len(dims[0]) + 1))
        read_box: Callable[..., tuple[int, list[list[int]]]]  # (batch, threads=)
        if self.value_file is not None:
            native.check_grid_directories(
                self.value_file, key_prefix, separator,
                chunk_indices or [[piece[0] for piece in dim] for dim in dims])
            may_list = may_list_for(array, indexer)
            root = store.files_root  # type: ignore[attr-defined]
            read_box = functools.partial(native.decode_grid_into, self.chain, view,
                                         root=root, key_prefix=key_prefix,
                                         separator=separator)
        elif self.chain.sharded or may_list_for(array, indexer):
            return False
        else:
            may_list = False
            fetch = (store.get_many if self.value_range is None
                     else functools.partial(value_sources, store, self.value_range))
            read_box = functools.partial(native.decode_grid_values_into, self.chain, view,
                                         fetch=fetch, key_prefix=key_prefix,
                                         separator=separator)
        per_row = math.prod(map(len, (chunk_indices or dims)[1:]))
        rows = max(1, PLAN_BATCH // per_row)
        chunk_bytes = math.prod(self.chunk_shape) * array._storage_dtype.itemsize
        found = missing = 0
        for first in range(0, len(bounds) - 1, rows):
            if may_list and missing >= max(_PROBE // 2, found):
                read_listed(array, indexer, target, result, self.fallback)
                return True
            last = min(first + rows, len(bounds) - 1)
            batch = [dims[0][bounds[first]:bounds[last]], *dims[1:]]
            count = (last - first) * per_row
            with native.errors_named(f"array {array.name!r} chunk"):
                absent, deferred = read_box(batch, threads=self.threads(count * chunk_bytes))
            if deferred:  # chunk files that are links: read through the store
                self.absent += self.fallback(list(indexer.projections_for(
                    [tuple(c) for c in deferred]))).count(False)
            found += count - absent
            missing += absent
            self.absent += absent
        return True

    def read_points(self, indexer: Any) -> bool:
        """Read a pointwise selection (``vindex``) with the engine: it groups the points
        by chunk, reads each chunk once and copies every point's item, with no plan made
        in Python; from their files (``decode_points_into``) when the store locates them,
        else from the values of one ``get_many`` (``decode_points_values_into``). False,
        having read nothing, when the engine cannot take it (as for ``read_grid``)."""
        points = getattr(indexer, "points", None)
        if points is None:
            return False
        array, target = self.array, self.target
        layout = array._metadata.chunk_key_layout()
        if (layout is None or self.chain.sharded
                or target.ndim != 1 or not target.flags.c_contiguous):
            return False
        if self.value_file is None and may_list_for(array, indexer):
            return False
        coordinates = [np.ascontiguousarray(dim, dtype=np.int64) for dim in points]
        key_prefix, separator = array._prefix + layout[0], layout[1]
        work = len(coordinates[0]) * array._storage_dtype.itemsize
        threads = config.threads if work >= _POINTS_IN_POOL else 1
        store = array._store
        if self.value_file is None:
            fetch = (store.get_many if self.value_range is None
                     else functools.partial(value_sources, store, self.value_range))
            with native.errors_named(f"array {array.name!r} chunk"):
                absent, _ = native.decode_points_values_into(
                    self.chain, target, coordinates, list(array.shape), fetch, key_prefix,
                    separator, threads)
            self.absent += absent
            return True
        touched = []
        for dim, chunk_len, dim_len in zip(coordinates, self.chunk_shape, array.shape,
                                           strict=True):
            present = np.zeros(-(-dim_len // chunk_len), dtype=bool)
            present[dim // chunk_len] = True
            touched.append(np.flatnonzero(present).tolist())
        native.check_grid_directories(self.value_file, key_prefix, separator, touched)
        with native.errors_named(f"array {array.name!r} chunk"):
            absent, deferred = native.decode_points_into(
                self.chain, target, coordinates, list(array.shape),
                store.files_root, key_prefix, separator, threads)  # type: ignore[attr-defined]
        self.absent += absent
        if deferred:  # chunk files that are links: read through the store
            self.absent += self.fallback(list(indexer.projections_for(
                {tuple(c) for c in deferred}))).count(False)
        return True

    def __call__(self, batch: Sequence[ChunkProjection]) -> list[bool]:
        array, target, chunk_shape = self.array, self.target, self.chunk_shape
        triples = native.selection_triples
        found = [False] * len(batch)
        direct: list[tuple[int, Any, Any]] = []
        other: list[int] = []
        for index, projection in enumerate(batch):
            chunk_selection = triples(projection.chunk_selection, chunk_shape)
            out_selection = (None if chunk_selection is None
                             else triples(projection.out_selection, target.shape))
            if out_selection is None:
                other.append(index)
            else:
                direct.append((index, chunk_selection, out_selection))
        keys = [array._chunk_key(batch[index].chunk_coords) for index, _, _ in direct]
        tasks: list[tuple[str, Any, Any, Any]] = []
        stored: list[int] = []
        if self.value_file is not None:
            value_file = self.value_file
            for key, (index, chunk_selection, out_selection) in zip(keys, direct, strict=True):
                tasks.append((key, (value_file(key), 0, None), chunk_selection, out_selection))
                stored.append(index)
        else:
            values = (array._store.get_many(keys) if self.value_range is None
                      else value_sources(array._store, self.value_range, keys))
            for key, (index, chunk_selection, out_selection), data in zip(
                    keys, direct, values, strict=True):
                if data is None:
                    target[batch[index].out_selection] = array._fill
                    continue
                tasks.append((key, data, chunk_selection, out_selection))
                stored.append(index)
        if tasks:
            threads = self.threads(
                len(tasks) * math.prod(chunk_shape) * array._storage_dtype.itemsize)
            with native.errors_named(f"array {array.name!r} chunk"):
                missing, deferred = native.decode_into(self.chain, target, tasks, threads)
            for index in stored:
                found[index] = True
            for task in missing:
                found[stored[task]] = False
            other.extend(stored[task] for task in deferred)
        if other:
            for index, was_stored in zip(other, self.fallback([batch[i] for i in other]),
                                         strict=True):
                found[index] = was_stored
        return found


def value_sources(store: Any, value_range: Callable[[str], Any], keys: list[str]
                  ) -> list[Any]:
    """The engine's sources of ``keys`` from a store that locates its values in an open
    file (:class:`~zarrkit.storage.base.LocatesRanges`): each value's file range, None for
    a missing one, the value's bytes for one the store must read (a compressed member)."""
    ranges = [value_range(key) for key in keys]
    unplaced = [key for key, place in zip(keys, ranges, strict=True) if place is False]
    fetched = dict(zip(unplaced, store.get_many(unplaced), strict=True)) if unplaced else {}
    return [fetched[key] if place is False else place
            for key, place in zip(keys, ranges, strict=True)]


def native_reader(array: Array, target: np.ndarray[Any, Any]) -> NativeBatchReader | None:
    """The native engine's reader into ``target`` when the engine covers the array's
    chunks, or copies its raw ones (see :class:`NativeBatchReader`), else None."""
    chain = array._native_chain
    if chain is None and not offers(array._store, ReadsInto):
        chain = array._native_copy_chain
    return None if chain is None else NativeBatchReader(array, target, chain)


def python_batch_reader(array: Array, target: np.ndarray[Any, Any]
                        ) -> Callable[[Sequence[ChunkProjection]], list[bool]]:
    """A function that reads a batch of projections into ``target``, and says for
    each whether its chunk was stored.

    Chunks go by the cheapest route their codecs and the store allow: read straight
    into the destination (uncompressed, with a store that has ``get_into``), decoded
    into it (when the chunk fills a contiguous block of it), decoded into this thread's
    scratch buffer and copied (no fresh chunk-sized allocation), or, for codecs that
    need it, decoded into a new array."""
    fill = array._fill
    pipeline = array._pipeline
    raw = pipeline.is_raw
    mapped = array._mmap and raw
    reads_into = raw and not mapped and offers(array._store, ReadsInto)
    decodes_into = pipeline.decodes_into and not raw

    dtype = array._storage_dtype
    order = array._stored_order
    itemsize = dtype.itemsize

    def put(projection: ChunkProjection, chunk: np.ndarray[Any, Any]) -> None:
        part = chunk[projection.chunk_selection]
        if type(part) is np.ndarray and part.nbytes >= ROW_COPY_FROM and all(
                type(s) is slice for s in projection.out_selection):
            copy_into(target[projection.out_selection], part)
        else:
            target[projection.out_selection] = part

    def place(projection: ChunkProjection, key: str, data: Any) -> None:
        if data is None:
            target[projection.out_selection] = fill
            return
        chunk_shape = array._chunk_shape(projection.chunk_coords)
        if raw:  # a view of the stored bytes: the only copy is into the target
            if len(data) != math.prod(chunk_shape) * itemsize:
                raise ChunkDecodeError(
                    f"array {array.name!r} chunk {key!r}: {len(data)} bytes, expected "
                    f"{math.prod(chunk_shape) * itemsize} for shape {chunk_shape} of {dtype}")
            put(projection, np.frombuffer(data, dtype).reshape(chunk_shape, order=order))  # type: ignore[call-overload]
            return
        what = f"array {array.name!r} chunk {key!r}"
        if decodes_into:
            chunk_pipeline = array._pipeline_for(chunk_shape)
            destination = whole_chunk_view(array, target, projection, chunk_shape)
            if destination is not None:
                chunk_pipeline.decode_into(data, destination, what=what)
                return
            chunk = scratch_array(chunk_shape, dtype, array._stored_order)
            chunk_pipeline.decode_into(data, chunk, what=what)
        else:
            chunk = array._pipeline_for(chunk_shape).decode(data, what=what)
        put(projection, chunk)

    def read_into(projection: ChunkProjection, key: str) -> bool:
        chunk_shape = array._chunk_shape(projection.chunk_coords)
        destination = whole_chunk_view(array, target, projection, chunk_shape)
        chunk = destination if destination is not None else scratch_array(
            chunk_shape, dtype, array._stored_order)
        flat = chunk.reshape(-1, order="A")  # type: ignore[call-overload]
        buffer = flat.view(np.uint8).data
        try:
            found = array._store.get_into(key, buffer)  # type: ignore[attr-defined]
        except ValueError as e:
            raise ChunkDecodeError(f"array {array.name!r} chunk {key!r}: {e}") from e
        if not found:
            target[projection.out_selection] = fill
        elif destination is None:
            put(projection, chunk)
        return bool(found)

    def read_chunk_batch(batch: Sequence[ChunkProjection]) -> list[bool]:
        # Fetch inside the worker: local stores read in parallel, and remote stores
        # still get one get_many per batch of keys.
        keys = [array._chunk_key(p.chunk_coords) for p in batch]
        if reads_into:
            return [read_into(projection, key)
                    for projection, key in zip(batch, keys, strict=True)]
        if mapped:
            values = [mapped_value(array, key) for key in keys]
            for projection, key, data in zip(batch, keys, values, strict=True):
                place(projection, key, data)
            return [data is not None for data in values]
        # Each chunk is decoded as it arrives: a remote store's other requests of
        # the batch are still in flight meanwhile (a local store's come in order).
        found = [False] * len(keys)
        arriving = getattr(array._store, "get_many_as_completed", None)
        pairs = (arriving(keys) if arriving is not None
                 else enumerate(array._store.get_many(keys)))
        for index, data in pairs:
            place(batch[index], keys[index], data)
            found[index] = data is not None
        return found

    return read_chunk_batch


def whole_chunk_view(array: Array, target: np.ndarray[Any, Any], projection: ChunkProjection,
                      chunk_shape: tuple[int, ...]) -> np.ndarray[Any, Any] | None:
    """The part of ``target`` a chunk fills whole, when that part is one contiguous
    block laid out as the chunk is stored (so the chunk can be decoded into it)."""
    if not projection.is_complete:
        return None
    for part in projection.out_selection:
        if type(part) is not slice:
            return None
    view = target[(*projection.out_selection, Ellipsis)]  # a view even when 0-d
    if view.shape != chunk_shape:
        return None
    flags = view.flags
    contiguous = flags.f_contiguous if array._stored_order == "F" else flags.c_contiguous
    return view if contiguous else None


def mapped_value(array: Array, key: str) -> Any:
    """The stored value of ``key`` mapped into memory, or read when it cannot be
    mapped (a compressed ZIP member), or None when missing."""
    try:
        return array._store.map_value(key)  # type: ignore[attr-defined]
    except ValueError:
        return array._store.get(key)


def mapped_selection(array: Array, indexer: Any) -> np.ndarray[Any, Any] | None:
    """A read-only view into the memory-mapped chunk holding a one-chunk basic
    selection, or None when that chunk is not stored raw (or not stored)."""
    if not array._pipeline.is_raw:
        return None
    projection = next(iter(indexer))
    key = array._chunk_key(projection.chunk_coords)
    try:
        mapped = array._store.map_value(key)  # type: ignore[attr-defined]
    except ValueError:  # a compressed ZIP member cannot be mapped
        return None
    if mapped is None:
        return None
    chunk_shape = array._chunk_shape(projection.chunk_coords)
    chunk = array._pipeline_for(chunk_shape).decode(
        mapped, what=f"array {array.name!r} chunk {key!r}")
    return chunk[projection.chunk_selection]  # type: ignore[no-any-return]

