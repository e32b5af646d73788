"""Dask arrays over zarrkit arrays: lazy reads, one task per chunk, and parallel writes.

- :func:`to_dask` (or ``Array.to_dask()``): a dask array whose blocks are the array's
  storage grid: one task per chunk, or per *shard* for a sharded array (each task reads
  its shard's region in one go, a single store read of the whole shard object).
- :func:`store`: write a dask array into a zarrkit array, one task per block, no lock
  when the blocks are aligned with the storage grid (chunks, shards when sharded).
- :func:`from_dask`: create an array shaped like a dask array and :func:`store` into it.

Unaligned writes (a chunk or shard shared by several blocks) are a read-modify-write of
that chunk by several tasks. ``store`` handles them as ``lock`` says:

- ``lock=None`` (default): the dask array is rechunked to aligned blocks first (each
  block is whole chunks, or whole shards, at least as large as the blocks were); then no
  task touches another's chunks. Always safe, wherever the tasks run.
- ``lock=True``: blocks are written as they are, each chunk's read-modify-write under
  zarrkit's key lock for it (``store.key_lock``). Those locks serialise the threads of a
  process; they serialise *processes* (dask.distributed workers, the ``processes``
  scheduler) only on stores with OS file locks, with ``zk.config.file_locks=True``
  (directory, SQLite and LMDB stores). Tasks of such a write are refused
  (:class:`UnsafeWriteError`) when dask ships them to another process without those.
- ``lock=False``: blocks are written as they are and the write is refused up front
  (:class:`UnsafeWriteError`) unless the store's key locks span processes.

Tasks carry an :class:`ArraySource`. Within a process it holds the Array itself; sent to
another process it travels as the way to reopen the array (its store, path and metadata),
and the receiving process reopens it once and keeps it for later tasks. A memory store
cannot be shared with another process (refused with a clear error); a read-only ZIP
store is reopened from its path; others are pickled.

>>> import numpy as np, zarrkit as zk
>>> a = zk.from_array({}, data=np.arange(10), chunks=(4,))
>>> x = a.to_dask()
>>> x.chunks, int(x.sum().compute(scheduler="sync"))
(((4, 4, 2),), 45)
>>> b = zk.from_dask(x + 1, {}, chunks=(5,))   # unaligned blocks: rechunked first
>>> b[:]
array([ 1,  2,  3,  4,  5,  6,  7,  8,  9, 10])
"""

from __future__ import annotations

import bisect
import collections
import itertools
import os
import pickle
import threading
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrkit.config import config
from zarrkit.errors import ReadOnlyError, UnsupportedOperationError, ZarrkitError
from zarrkit.hierarchy.array import Array

__all__ = [
    "ArraySource",
    "UnsafeWriteError",
    "aligned_chunks",
    "from_dask",
    "grid_boundaries",
    "is_aligned",
    "store",
    "to_dask",
]


class UnsafeWriteError(ZarrkitError, ValueError):
    """A parallel write whose blocks share chunks (or shards), in processes that zarrkit's
    chunk locks would not serialise: writers could lose each other's parts of a chunk.

    >>> issubclass(UnsafeWriteError, ValueError)
    True
    """


# --- the storage grid -------------------------------------------------------------------

def grid_boundaries(array: Array) -> list[list[int]]:
    """Per dimension, the positions where the array's storage grid cuts it, from 0 to the
    dimension's length: chunk boundaries, shard boundaries for a sharded array.

    >>> import zarrkit as zk
    >>> grid_boundaries(zk.create_array({}, shape=(5, 4), chunks=(2, 4), dtype="u1"))
    [[0, 2, 4, 5], [0, 4]]
    >>> grid_boundaries(zk.create_array({}, shape=(8,), chunks=(2,), shards=(4,), dtype="u1"))
    [[0, 4, 8]]
    """
    grid = array.shards or array.chunks
    result = []
    for size, chunk in zip(array.shape, grid, strict=True):
        if isinstance(chunk, int):
            cuts = list(range(0, size, max(chunk, 1)))
        else:  # rectilinear: the chunk lengths
            cuts = [b for b in itertools.accumulate(chunk, initial=0) if b < size]
        result.append([*cuts, size] if size else [0])
    return result


def _chunks_from_boundaries(boundaries: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """Dask's ``chunks`` (block lengths per dimension) for a grid's boundaries."""
    return tuple(tuple(b - a for a, b in itertools.pairwise(cuts)) if len(cuts) > 1 else (0,)
                 for cuts in boundaries)


def _block_cuts(chunks: Sequence[int]) -> list[int]:
    return list(itertools.accumulate(chunks, initial=0))


def is_aligned(chunks: Sequence[Sequence[int]], array: Array) -> bool:
    """Whether blocks of ``chunks`` (dask's form) each cover whole chunks (whole shards of a
    sharded array): no two blocks then share a stored object.

    >>> import zarrkit as zk
    >>> a = zk.create_array({}, shape=(10,), chunks=(4,), dtype="u1")
    >>> is_aligned(((8, 2),), a), is_aligned(((5, 5),), a)
    (True, False)
    """
    for dim_chunks, cuts in zip(chunks, grid_boundaries(array), strict=True):
        allowed = set(cuts)
        if any(cut not in allowed for cut in _block_cuts(dim_chunks)):
            return False
    return True


def aligned_chunks(chunks: Sequence[Sequence[int]], array: Array
                   ) -> tuple[tuple[int, ...], ...]:
    """Blocks aligned with ``array``'s storage grid and at least as large as the largest
    of ``chunks`` along each dimension: what :func:`store` rechunks unaligned blocks to.

    >>> import zarrkit as zk
    >>> a = zk.create_array({}, shape=(10,), chunks=(4,), dtype="u1")
    >>> aligned_chunks(((5, 5),), a)
    ((8, 2),)
    """
    return tuple(aligned_block_sizes(dim_chunks, cuts)
                 for dim_chunks, cuts in zip(chunks, grid_boundaries(array), strict=True))


def aligned_block_sizes(dim_chunks: Sequence[int], cuts: Sequence[int]) -> tuple[int, ...]:
    """Block sizes along one dimension whose ends are among ``cuts`` (the grid boundaries,
    from 0 to the length) and that are at least as large as the largest of ``dim_chunks``
    (except the last).

    >>> aligned_block_sizes((5, 5), [0, 4, 8, 10])
    (8, 2)
    """
    target = max(max(dim_chunks, default=0), 1)
    chosen = [0]
    while chosen[-1] < cuts[-1]:
        # The first grid boundary at least ``target`` past the last cut (or the end).
        i = bisect.bisect_left(cuts, chosen[-1] + target)
        chosen.append(cuts[min(i, len(cuts) - 1)])
    return tuple(b - a for a, b in itertools.pairwise(chosen)) or (0,)


def _locks_span_processes(store: Any, file_locks: bool) -> bool:
    """Whether the store's key locks exclude other processes: OS file locks, which the
    directory and single-file (SQLite, LMDB) stores take with ``config.file_locks``."""
    if not file_locks:
        return False
    from zarrkit.storage.directory import DirectoryStore
    from zarrkit.storage.sqlite import SQLiteStore

    return (isinstance(store, (DirectoryStore, SQLiteStore))
            or type(store).__module__ == "zarrkit.storage.lmdb")


def _scheduler_pickles() -> bool:
    """Whether dask's current scheduler sends tasks through pickle (to other processes):
    dask.distributed (even with in-process workers) and the ``processes`` scheduler."""
    from dask.base import get_scheduler

    scheduler = get_scheduler()
    if scheduler is None:
        return False
    owner = getattr(scheduler, "__self__", None)
    module = getattr(owner if owner is not None else scheduler, "__module__", "")
    return module.startswith("distributed") or module == "dask.multiprocessing"


# --- what tasks carry ---------------------------------------------------------------------

# Arrays reopened in this process from sources sent by another, by source token: later
# tasks of the same graph (or of later graphs over the same source) reuse them.
_REOPENED: collections.OrderedDict[str, ArraySource] = collections.OrderedDict()
_REOPENED_LIMIT = 64
_reopened_lock = threading.Lock()


class ArraySource:
    """A zarrkit Array as dask tasks (and xarray's lazy arrays) carry it: indexable like
    the array, and picklable as the small recipe that reopens it.

    Within a process it is the Array itself. Pickled (sent to a dask.distributed worker,
    say) it becomes the array's store, path and metadata; the receiving process reopens it
    once per source and keeps it for later tasks. A MemoryStore lives in one process and
    is refused; a read-only ZipStore is reopened from its path; other stores are pickled
    (a directory as its path, HTTP and fsspec stores as their URL and options).

    ``unaligned_writes=True`` marks a source written by blocks that share chunks: pickling
    it is refused unless the store's key locks span processes (:class:`UnsafeWriteError`),
    and a process that receives it with file locks turns ``config.file_locks`` on.

    >>> import pickle, numpy as np, zarrkit as zk
    >>> src = ArraySource(zk.from_array({}, data=np.arange(4), chunks=(2,)))
    >>> src[1:3], src.shape
    (array([1, 2]), (4,))
    >>> pickle.dumps(src)
    Traceback (most recent call last):
    zarrkit.errors.UnsupportedOperationError: cannot send array '/' to another process: \
its MemoryStore lives in this process's memory (use dask's threaded or synchronous \
scheduler, or a store other processes can open: a directory, a URL)
    """

    def __init__(self, array: Array, *, unaligned_writes: bool = False) -> None:
        self.array = array
        self.shape: tuple[int, ...] = tuple(array.shape)
        self.dtype: np.dtype[Any] = array.dtype
        self.ndim = len(self.shape)
        self.unaligned_writes = unaligned_writes
        # Captured where the graph is built: worker processes have their own config.
        self.file_locks = bool(config.file_locks)
        self.token = uuid.uuid4().hex
        self._store_spec: tuple[str, Any] | None = None

    def __repr__(self) -> str:
        return f"ArraySource({self.array!r})"

    def __getitem__(self, region: Any) -> Any:
        return self.array.read(region)

    def __setitem__(self, region: Any, value: Any) -> None:
        self.array[region] = value

    def __dask_tokenize__(self) -> Any:
        return ("zarrkit.ArraySource", self.token)

    def _spec(self) -> tuple[str, Any]:
        """How another process reopens the store (computed once)."""
        if self._store_spec is not None:
            return self._store_spec
        from zarrkit.storage.memory import MemoryStore
        from zarrkit.storage.zip import ZipStore

        store = self.array.store
        where = f"cannot send array {self.array.path or '/'!r} to another process"
        if isinstance(store, MemoryStore):
            raise UnsupportedOperationError(
                f"{where}: its MemoryStore lives in this process's memory (use dask's "
                f"threaded or synchronous scheduler, or a store other processes can open: "
                f"a directory, a URL)")
        if isinstance(store, ZipStore):
            if not store.read_only:
                raise UnsupportedOperationError(
                    f"{where}: {store!r} is open for writing, and a ZIP archive has one "
                    f"writer (write with dask's threaded scheduler, or into a directory "
                    f"and convert it)")
            spec: tuple[str, Any] = ("zip", os.path.abspath(store.path))
        else:
            try:
                spec = ("pickle", pickle.dumps(store))
            except Exception as e:
                raise UnsupportedOperationError(f"{where}: {store!r} cannot be pickled ({e})"
                                                ) from e
        self._store_spec = spec
        return spec

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        array = self.array
        if self.unaligned_writes and not _locks_span_processes(array.store, self.file_locks):
            raise UnsafeWriteError(
                f"array {array.name!r}: the blocks of this write share chunks, and its "
                f"tasks are being sent to other processes, which {array.store!r}'s chunk "
                f"locks do not exclude; set zk.config.set(file_locks=True) before building "
                f"the graph (directory, SQLite and LMDB stores), or store with lock=None "
                f"(rechunk to aligned blocks)")
        return (_reopen, (self.token, self._spec(), array.path, array.metadata,
                          array._read_only, array._write_empty_chunks, array._mmap,
                          self.unaligned_writes, self.file_locks))


def _open_spec(spec: tuple[str, Any]) -> Any:
    kind, value = spec
    if kind == "zip":
        from zarrkit.storage.zip import ZipStore

        return ZipStore(value, mode="r")
    return pickle.loads(value)


def _reopen(token: str, spec: tuple[str, Any], path: str, metadata: Any, read_only: bool,
            write_empty_chunks: bool | None, mmap: bool, unaligned_writes: bool,
            file_locks: bool) -> ArraySource:
    """An :class:`ArraySource` unpickled: the array reopened, once per process."""
    with _reopened_lock:
        found = _REOPENED.get(token)
        if found is not None:
            _REOPENED.move_to_end(token)
            return found
    if unaligned_writes and file_locks and not config.file_locks:
        # The graph was built relying on OS file locks; this process must take them too.
        config.file_locks = True
    array = Array(_open_spec(spec), path, metadata, read_only=read_only,
                  write_empty_chunks=write_empty_chunks, mmap=mmap)
    source = ArraySource(array, unaligned_writes=unaligned_writes)
    source.token, source.file_locks, source._store_spec = token, file_locks, spec
    with _reopened_lock:
        _REOPENED[token] = source
        while len(_REOPENED) > _REOPENED_LIMIT:
            _REOPENED.popitem(last=False)
    return source


def _read_block(source: ArraySource, region: Any, asarray: bool = True, lock: Any = None
                ) -> np.ndarray[Any, Any]:
    """Read one block (dask's ``getter`` signature)."""
    return np.asarray(source.array.read(region))


# --- the public functions ------------------------------------------------------------------

def to_dask(array: Array, chunks: Any = None, *, name: str | None = None) -> Any:
    """A dask array reading ``array`` lazily through zarrkit.

    By default its blocks are the storage grid: one task per chunk, per shard for a sharded
    array. ``chunks`` (anything ``dask.array.from_array`` takes: ``"auto"`` picks multiples
    of the storage grid) changes them; a block that cuts chunks reads them partly.

    >>> import numpy as np, zarrkit as zk
    >>> a = zk.from_array({}, data=np.arange(16), chunks=(2,), shards=(8,))
    >>> x = to_dask(a)
    >>> x.chunks, len(x.__dask_graph__())  # one task per shard
    (((8, 8),), 2)
    >>> x[3:6].compute(scheduler="sync")
    array([3, 4, 5])
    """
    import dask.array as da
    from dask.base import tokenize

    grid = _chunks_from_boundaries(grid_boundaries(array))
    if chunks is None:
        dask_chunks: Any = grid
    else:
        previous = array.shards or array.chunks
        dask_chunks = da.core.normalize_chunks(
            chunks, array.shape, dtype=array.dtype,
            previous_chunks=previous if all(isinstance(c, int) for c in previous) else grid)
    source = ArraySource(array)
    store_obj = array.store
    if name is None:
        name = "zarrkit-" + tokenize(repr(store_obj), store_obj.lock_identity, array.path,
                                     array.metadata.to_json(), dask_chunks)
    meta = np.empty((0,) * array.ndim, dtype=array.dtype)
    return da.from_array(source, chunks=dask_chunks, name=name, inline_array=True,
                         asarray=False, lock=False, getitem=_read_block, meta=meta)


def store(dask_array: Any, zarrkit_array: Array, *, lock: bool | None = None,
          compute: bool = True) -> Any:
    """Write ``dask_array`` into ``zarrkit_array`` (of the same shape), one task per block.

    Blocks aligned with the storage grid (each covering whole chunks, whole shards of a
    sharded array) are written with no lock. Unaligned blocks: ``lock=None`` rechunks them
    to aligned ones (:func:`aligned_chunks`) first; ``lock=True`` writes them as they are
    under each chunk's key lock, refused (:class:`UnsafeWriteError`) if the tasks go to
    other processes and those locks are not OS file locks (``zk.config.file_locks``);
    ``lock=False`` writes them as they are only if the store's locks span processes, and
    refuses otherwise. ``compute=False`` returns the dask ``Delayed`` of the write.

    >>> import dask.array as da, numpy as np, zarrkit as zk
    >>> z = zk.create_array({}, shape=(6,), chunks=(2,), dtype="i8")
    >>> store(da.arange(6, chunks=3), z)                 # rechunked to blocks of 4
    >>> z[:]
    array([0, 1, 2, 3, 4, 5])
    >>> store(da.ones(6, chunks=3, dtype="i8"), z, lock=False)
    Traceback (most recent call last):
    zarrkit.dask.UnsafeWriteError: array '/': blocks ((3, 3),) share chunks of the \
storage grid ((2, 2, 2),), and the chunk locks of MemoryStore(<4 keys>) do not exclude \
other processes: use lock=None (rechunk to aligned blocks), lock=True (in-process locks: \
dask's threaded or synchronous scheduler), or zk.config.set(file_locks=True) with a \
directory, SQLite or LMDB store
    """
    import dask.array as da

    if tuple(dask_array.shape) != tuple(zarrkit_array.shape):
        raise ValueError(f"cannot store a dask array of shape {dask_array.shape} into array "
                         f"{zarrkit_array.name!r} of shape {zarrkit_array.shape}")
    if zarrkit_array.read_only:
        raise ReadOnlyError(f"cannot store into array {zarrkit_array.name!r}: it is read-only")
    unaligned = not is_aligned(dask_array.chunks, zarrkit_array)
    if unaligned and lock is None:
        dask_array = dask_array.rechunk(aligned_chunks(dask_array.chunks, zarrkit_array))
        unaligned = False
    elif unaligned and lock is False and not _locks_span_processes(zarrkit_array.store,
                                                                  config.file_locks):
        grid = _chunks_from_boundaries(grid_boundaries(zarrkit_array))
        raise UnsafeWriteError(
            f"array {zarrkit_array.name!r}: blocks {dask_array.chunks} share chunks of the "
            f"storage grid {grid}, and the chunk locks of {zarrkit_array.store!r} do not "
            f"exclude other processes: use lock=None (rechunk to aligned blocks), lock=True "
            f"(in-process locks: dask's threaded or synchronous scheduler), or "
            f"zk.config.set(file_locks=True) with a directory, SQLite or LMDB store")
    elif (unaligned and compute and _scheduler_pickles()
          and not _locks_span_processes(zarrkit_array.store, config.file_locks)):
        # Refused when the tasks are pickled anyway; said here, before dask wraps it.
        ArraySource(zarrkit_array, unaligned_writes=True).__reduce__()
    target: Any = ArraySource(zarrkit_array, unaligned_writes=unaligned)
    return da.store(dask_array, target, lock=False, compute=compute, return_stored=False)


_store = store  # from_dask's ``store`` argument hides the function


def from_dask(dask_array: Any, store: Any = None, name: str | None = None, *,
              lock: bool | None = None, **create_array_kwargs: Any) -> Array:
    """Create an array shaped like ``dask_array`` (its dtype unless ``dtype`` is given) in
    ``store`` at ``name``, write it in parallel with :func:`store` (``lock`` as there) and
    return it. ``create_array_kwargs`` go to :func:`zarrkit.create_array`; ``chunks``
    defaults to the dask array's block shape (unless ``shards`` is given).

    >>> import dask.array as da, zarrkit as zk
    >>> a = from_dask(da.arange(8, chunks=4), {}, "x", shards=(4,), chunks=(2,))
    >>> a.shards, a[:]
    ((4,), array([0, 1, 2, 3, 4, 5, 6, 7]))
    """
    from zarrkit.api import create_array

    if "chunks" not in create_array_kwargs and "shards" not in create_array_kwargs:
        create_array_kwargs["chunks"] = tuple(max(int(c), 1) for c in dask_array.chunksize)
    dtype = create_array_kwargs.pop("dtype", dask_array.dtype)
    array = create_array(store, name=name, shape=dask_array.shape, dtype=dtype,
                         **create_array_kwargs)
    _store(dask_array, array, lock=lock)
    return array
