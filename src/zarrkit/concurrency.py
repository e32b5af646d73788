"""The shared thread pool and per-chunk locks.

numcodecs' C codecs release the GIL, so decoding and encoding chunks in threads uses every
core. Work submitted from inside a pool thread runs inline, so nested use cannot deadlock.

>>> parallel_map(lambda x: x * 2, [1, 2, 3])
[2, 4, 6]
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Generic, TypeVar

from zarrkit.config import config
from zarrkit.storage.locking import key_lock

T = TypeVar("T")
R = TypeVar("R")

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()
_in_pool = threading.local()


def _forget_pool_after_fork() -> None:
    # A forked child has none of the parent's threads: the pool it inherits would take
    # work and never run it, and a lock held at the fork would never be released.
    global _pool, _pool_size, _pool_lock
    _pool = None
    _pool_size = 0
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_after_fork)


def _mark_worker() -> None:
    _in_pool.active = True


def _get_pool() -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size != config.threads:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool_size = config.threads
            _pool = ThreadPoolExecutor(
                max_workers=max(1, _pool_size), thread_name_prefix="zarrkit",
                initializer=_mark_worker,
            )
        return _pool


# Work is handed to the pool in this many batches per thread: enough to balance uneven
# chunks, few enough that per-task overhead (a lock and a future each) stays negligible.
_BATCHES_PER_THREAD = 4
# Fewer items than this run inline: handing a few small chunks to the pool costs more in
# lock waits than it saves (seen in the S10 indexing benchmark).
_MIN_PARALLEL_ITEMS = 4


def split_batches(items: Sequence[T], batches: int) -> list[Sequence[T]]:
    """``items`` cut into at most ``batches`` contiguous runs of near-equal length.

    >>> split_batches([1, 2, 3, 4, 5], 2)
    [[1, 2, 3], [4, 5]]
    """
    count = max(1, min(batches, len(items)))
    size, extra = divmod(len(items), count)
    runs: list[Sequence[T]] = []
    start = 0
    for i in range(count):
        stop = start + size + (1 if i < extra else 0)
        runs.append(items[start:stop])
        start = stop
    return runs


def parallel_batches(function: Callable[[Sequence[T]], list[R]], items: Sequence[T]
                     ) -> list[R]:
    """``function`` applied to contiguous batches of ``items`` in the pool; the results,
    concatenated in order. One task per batch, not per item.

    >>> parallel_batches(lambda batch: [x * 2 for x in batch], list(range(5)))
    [0, 2, 4, 6, 8]
    """
    if (len(items) < _MIN_PARALLEL_ITEMS or config.threads <= 1
            or getattr(_in_pool, "active", False)):
        return function(items)
    runs = split_batches(items, config.threads * _BATCHES_PER_THREAD)
    results: list[R] = []
    for part in _get_pool().map(function, runs):
        results.extend(part)
    return results


def parallel_map(function: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[function(x) for x in items]``, run in the pool (in batches) when that can help.

    >>> parallel_map(str, range(3))
    ['0', '1', '2']
    """
    return parallel_batches(lambda batch: [function(item) for item in batch], items)


def drain(make_worker: Callable[[], Callable[[T], None]], items: Sequence[T]) -> None:
    """Apply a worker to every item, each pool thread taking the next item as soon as it is
    free (a shared queue, not fixed batches: uneven items, or a core taken by something
    else, leave no thread idle at the end). ``make_worker`` runs once per thread, so a
    worker can keep scratch buffers. The first error stops the other threads from taking
    new items and is raised.

    >>> seen = []
    >>> drain(lambda: seen.append, range(5)); sorted(seen)
    [0, 1, 2, 3, 4]
    """
    threads = min(config.threads, len(items))
    if threads <= 1 or getattr(_in_pool, "active", False):
        worker = make_worker()
        for item in items:
            worker(item)
        return
    taken = itertools.count()  # next() on it is atomic: threads never get the same item
    failed = threading.Event()

    def run() -> None:
        worker = make_worker()
        while not failed.is_set():
            i = next(taken)
            if i >= len(items):
                return
            try:
                worker(items[i])
            except BaseException:
                failed.set()
                raise

    pool = _get_pool()
    for future in [pool.submit(run) for _ in range(threads)]:
        future.result()


_DONE: Future[object] = Future()
_DONE.set_result(None)


class Prefetch(Generic[T, R]):
    """``fetch`` of each item, started ``ahead`` items before a consumer asks for it, in
    threads of its own: a consumer that decodes what it fetched overlaps its decoding with
    the next fetches instead of waiting for each in turn. Consumers ask for the items in
    about their order (as :func:`drain` hands them out); each value is handed out
    ``takes[i]`` times (once if not given) and then forgotten, so at most about ``ahead``
    values are held at a time. Use it as a context manager: leaving it cancels the fetches
    not yet started.

    >>> with Prefetch(str.upper, ["a", "b", "c"], ahead=1) as fetched:
    ...     [fetched.take(i) for i in range(3)]
    ['A', 'B', 'C']
    """

    def __init__(self, fetch: Callable[[T], R], items: Sequence[T], ahead: int,
                 takes: Sequence[int] | None = None) -> None:
        self._fetch = fetch
        self._items = items
        self._takes_left = list(takes) if takes is not None else [1] * len(items)
        self._ahead = max(1, ahead)
        self._futures: dict[int, Future[R]] = {}
        self._submitted = 0
        self._taken = 0
        self._closed = False
        # Reentrant: a fetch that is done before its callback is added runs the callback
        # at once, in the thread that holds the lock.
        self._lock = threading.RLock()
        self._executor = ThreadPoolExecutor(max_workers=self._ahead,
                                            thread_name_prefix="zarrkit-prefetch")

    def take(self, index: int) -> R:
        """The value of item ``index``, waiting for its fetch (started now if it was not).

        The first item is fetched alone, the next ones only once it has arrived: the
        consumers wait for it with nothing else to do, and it arrives soonest when it
        shares the connection's bandwidth with no other."""
        with self._lock:
            self._taken = max(self._taken, index)
            if not self._submitted:
                self._submit_next().add_done_callback(lambda _: self._submit_window())
            else:
                self._submit_window_locked()
            future = self._futures[index]
            self._takes_left[index] -= 1
            if not self._takes_left[index]:
                del self._futures[index]
        return future.result()

    def _submit_next(self) -> Future[R]:
        future = self._futures[self._submitted] = self._executor.submit(
            self._fetch, self._items[self._submitted])
        self._submitted += 1
        return future

    def _submit_window(self) -> None:
        with self._lock:
            self._submit_window_locked()

    def _submit_window_locked(self) -> None:
        if self._submitted == 1 and not self._futures.get(0, _DONE).done():
            return  # the first item is still on its way alone
        until = min(len(self._items), self._taken + self._ahead + 1)
        while self._submitted < until and not self._closed:
            self._submit_next()

    def __enter__(self) -> Prefetch[T, R]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self._closed = True
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._futures.clear()


def chunk_lock(store: object, key: str) -> AbstractContextManager[None]:
    """Serialise read-modify-write of one chunk (or document) across threads, and across
    processes where the store and ``zarrkit.config.file_locks`` allow.

    The lock belongs to the store's data, not to the store object: every handle opened on
    the same directory or archive in this process shares it.

    >>> from zarrkit.storage import MemoryStore
    >>> with chunk_lock(MemoryStore(), "a/0.0"):
    ...     pass
    """
    lock = getattr(store, "key_lock", None)
    if lock is not None:
        return lock(key)  # type: ignore[no-any-return]
    return key_lock(("object", id(store)), key)
