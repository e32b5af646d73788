"""A store that keeps the values it reads from another store in a third one, as
zarr-python's ``zarr.experimental.cache_store.CacheStore`` (3.1.4): the same constructor,
settings (``max_age_seconds``, ``max_size``, ``cache_set_data``), statistics
(``cache_info()``, ``cache_stats()``) and ``clear_cache()``.

Whole values (``get``, ``get_many``) are kept in the cache store; byte ranges
(``get_range``: shard indexes and inner chunks) in a dict in memory, so that partial reads
never fill a persistent cache. Both share the ``max_size`` budget and one
least-recently-used order: an entry read from the cache, or stored in it, becomes the most
recently used, and the least recently used are evicted until a new entry fits. An entry
older than ``max_age_seconds`` is read from the source store again (and kept anew).

Writes go to the source store and, with ``cache_set_data`` (the default), to the cache;
a write or a deletion drops what was kept of the key's byte ranges, and a deletion (also
``delete_prefix``) drops the key from the cache.

Where zarr-python's class does otherwise, zarrkit's follows its documentation rather than
the code: a value larger than ``max_size`` is not kept at all (zarr-python stores it in the
cache store untracked and serves it from there); ``delete_prefix`` drops the keys under the
prefix from the cache (zarr-python's ``delete_dir`` leaves them there, served afterwards);
and re-storing a kept key makes it the most recently used without ever evicting it for its
own room (zarr-python keeps its place in the order, and can evict the value it has just
stored while still counting it). Reads bypass the cache nowhere: the wrapped store's
file-level shortcuts (reading into a buffer, memory maps, the native engine reading files
itself) are not offered through a CacheStore.

>>> from zarrkit.storage import MemoryStore
>>> source = MemoryStore({"a": b"12345"})
>>> cached = CacheStore(source, cache_store=MemoryStore(), max_size=8)
>>> cached.get("a"), cached.get("a"), cached.get_range("a", 1, 2)
(b'12345', b'12345', b'23')
>>> cached.cache_stats()["hits"], cached.cache_stats()["misses"]
(1, 2)
>>> cached.cache_info()["current_size"], cached.cache_info()["cached_keys"]
(7, 2)
"""

from __future__ import annotations

import builtins
import threading
import time
from collections import OrderedDict
from collections.abc import Coroutine as AbcCoroutine
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from zarrkit.storage.base import Buffer, Store
from zarrkit.storage.wrapper import WrapperStore

__all__ = ["CacheStore"]

# A byte range as ``Store.get_range`` takes it: (start, length).
_Range = tuple[int, int | None]
# A cache entry: a whole value by its key, or a byte range of one.
_Entry = str | tuple[str, _Range]

# The wrapped store's abilities that read or write values around the wrapper (and so
# around the cache): never taken from it.
_BYPASSES = frozenset({"get_into", "map_value", "value_file", "value_range", "file_writes",
                       "key_locks"})


@dataclass
class _CacheState:
    """What a CacheStore knows of its cache, shared by the threads that use it."""

    order: OrderedDict[_Entry, None] = field(default_factory=OrderedDict)
    sizes: dict[_Entry, int] = field(default_factory=dict)
    inserted: dict[_Entry, float] = field(default_factory=dict)
    ranges: dict[str, dict[_Range, bytes]] = field(default_factory=dict)
    current_size: int = 0
    hits: int = 0
    misses: int = 0
    evictions: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock)


class _Done(AbcCoroutine[Any, Any, None]):
    """An awaitable that has already finished: what ``clear_cache`` returns, so that
    zarr-python's ``asyncio.run(store.clear_cache())`` and ``await store.clear_cache()``
    work as well as a plain call (the clearing is done before it is returned)."""

    def send(self, value: Any) -> Any:
        raise StopIteration(None)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        raise typ if val is None else val

    def close(self) -> None:
        return None

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # a generator that returns at once


class CacheStore(WrapperStore[Store]):
    """A store that reads through ``store`` and keeps what it read in ``cache_store`` (see
    the module's description); zarr-python's ``CacheStore``, with zarrkit's synchronous
    store methods.

    ``max_age_seconds``: seconds an entry stays fresh, or ``"infinity"`` (the default);
    ``max_size``: the bytes kept at most (None: no limit); ``cache_set_data``: whether
    writes are kept too (default True). The cache store must support deletes.

    >>> from zarrkit.storage import MemoryStore
    >>> import zarrkit as zk
    >>> store = CacheStore(MemoryStore(), cache_store=MemoryStore(), max_size=1 << 20)
    >>> a = zk.create_array(store, shape=(4,), chunks=(2,), dtype="u1"); a[:] = 3
    >>> a[:].tolist(), store.cache_stats()["hits"] >= 2
    ([3, 3, 3, 3], True)
    """

    max_age_seconds: int | float | Literal["infinity"]
    max_size: int | None
    cache_set_data: bool

    def __init__(self, store: Store, *, cache_store: Store,
                 max_age_seconds: int | float | str = "infinity", max_size: int | None = None,
                 cache_set_data: bool = True) -> None:
        super().__init__(store)
        if not cache_store.supports_deletes:
            raise ValueError(
                f"The provided cache store {cache_store} does not support deletes. "
                "The cache_store must support deletes for CacheStore to function properly.")
        self._cache = cache_store
        if isinstance(max_age_seconds, str):
            if max_age_seconds != "infinity":
                raise ValueError("max_age_seconds string value must be 'infinity'")
            self.max_age_seconds = "infinity"
        else:
            self.max_age_seconds = max_age_seconds
        self.max_size = max_size
        self.cache_set_data = cache_set_data
        self._state = _CacheState()

    def __getattr__(self, name: str) -> Any:
        if name in _BYPASSES:
            raise AttributeError(name)
        return super().__getattr__(name)

    def _with_store(self, store: Store) -> CacheStore:
        # A new source behind the same cache would be served the old source's values.
        raise NotImplementedError("CacheStore does not support this operation.")

    # --- the cache's bookkeeping (callers hold the lock) ------------------------------------
    def _is_fresh(self, entry: _Entry) -> bool:
        if self.max_age_seconds == "infinity":
            return True
        # An entry not kept counts as inserted at time 0: never fresh.
        return time.monotonic() - self._state.inserted.get(entry, 0) < self.max_age_seconds

    def _forget(self, entry: _Entry) -> int:
        """Drop ``entry`` from the bookkeeping (and a byte range's bytes); its size."""
        state = self._state
        size = state.sizes.pop(entry, 0)
        if entry in state.order:
            del state.order[entry]
        state.inserted.pop(entry, None)
        state.current_size = max(0, state.current_size - size)
        if not isinstance(entry, str):
            key, byte_range = entry
            kept = state.ranges.get(key)
            if kept is not None:
                kept.pop(byte_range, None)
                if not kept:
                    del state.ranges[key]
        return size

    def _evict(self, entry: _Entry) -> None:
        if isinstance(entry, str):
            self._cache.delete(entry)
        self._forget(entry)
        self._state.evictions += 1

    def _keep(self, entry: _Entry, value: Buffer) -> None:
        """Keep ``value`` as ``entry`` (the most recently used), evicting the least
        recently used entries until it fits; a value larger than ``max_size`` is not kept,
        nor any older value of the entry."""
        size = memoryview(value).nbytes
        self._forget(entry)
        if self.max_size is not None and size > self.max_size:
            if isinstance(entry, str):
                self._cache.delete(entry)
            return
        state = self._state
        if self.max_size is not None:
            while state.order and state.current_size + size > self.max_size:
                self._evict(next(iter(state.order)))
        if isinstance(entry, str):
            self._cache.set(entry, value)
        else:
            key, byte_range = entry
            state.ranges.setdefault(key, {})[byte_range] = bytes(value)
        state.order[entry] = None
        state.sizes[entry] = size
        state.inserted[entry] = time.monotonic()
        state.current_size += size

    def _drop_key(self, key: str) -> None:
        """Forget everything kept of ``key``: its value and its byte ranges."""
        self._drop_ranges(key)
        self._cache.delete(key)
        self._forget(key)

    def _drop_ranges(self, key: str) -> None:
        for byte_range in list(self._state.ranges.get(key, ())):
            self._forget((key, byte_range))

    def _fetched(self, entry: _Entry, value: bytes | None) -> None:
        """Record what a read of ``entry`` found in the source store."""
        if value is not None:
            self._keep(entry, value)
        elif isinstance(entry, str):
            self._cache.delete(entry)
            self._forget(entry)
        else:
            self._forget(entry)

    def _hit(self, entry: _Entry) -> None:
        state = self._state
        state.hits += 1
        if entry in state.order:
            state.order.move_to_end(entry)

    # --- reading ---------------------------------------------------------------------------
    def get(self, key: str) -> bytes | None:
        """The value of ``key``: from the cache when kept and fresh, else from the source
        store (and then kept)."""
        with self._state.lock:
            fresh = self._is_fresh(key)
        # The cache store is read outside the lock: threads read it in parallel.
        cached = self._cache.get(key) if fresh else None
        with self._state.lock:
            if cached is not None:
                self._hit(key)
                return cached
            self._state.misses += 1
        value = self._store.get(key)
        with self._state.lock:
            self._fetched(key, value)
        return value

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """``length`` bytes of ``key``'s value from ``start`` (``Store.get_range``), kept in
        memory by (key, start, length)."""
        entry = (key, (start, length))
        with self._state.lock:
            if self._is_fresh(entry):
                cached = self._state.ranges.get(key, {}).get((start, length))
                if cached is not None:
                    self._hit(entry)
                    return cached
            self._state.misses += 1
        value = self._store.get_range(key, start, length)
        with self._state.lock:
            self._fetched(entry, value)
        return value

    def get_many(self, keys: Sequence[str]) -> builtins.list[bytes | None]:
        """The values of ``keys`` as :meth:`get` gives them one after the other (the same
        hits, misses and evictions), with one ``get_many`` of the cache store and one of
        the source store."""
        state = self._state
        with state.lock:
            fresh = [i for i, key in enumerate(keys) if self._is_fresh(key)]
        cached = self._cache.get_many([keys[i] for i in fresh]) if fresh else []
        found = {i: value for i, value in zip(fresh, cached, strict=True) if value is not None}
        missed = [i for i in range(len(keys)) if i not in found]
        fetched = dict(zip(missed, self._store.get_many([keys[i] for i in missed])
                           if missed else [], strict=True))
        values: list[bytes | None] = []
        with state.lock:
            kept_before = {keys[i] for i in found if keys[i] in state.order}
            read: dict[str, bytes | None] = {}  # what this call read, for a repeated key
            for i, key in enumerate(keys):
                value = found.get(i)
                if (value is None and key in read and key in state.order
                        and self._is_fresh(key)):
                    value = read[key]  # kept by this call's earlier read of the key
                if value is not None and (key in state.order or key not in kept_before):
                    self._hit(key)
                    values.append(value)
                    continue
                # Not kept, or evicted to make room for an earlier key of this call: a
                # read one by one would fetch it again (its value is the one just read).
                state.misses += 1
                value = fetched[i] if value is None else value
                self._fetched(key, value)
                read[key] = value
                values.append(value)
        return values

    def get_many_as_completed(self, keys: Sequence[str]
                              ) -> Iterator[tuple[int, bytes | None]]:
        return enumerate(self.get_many(keys))

    # --- writing ---------------------------------------------------------------------------
    def _written(self, key: str, value: Buffer) -> None:
        with self._state.lock:
            self._drop_ranges(key)
            if self.cache_set_data:
                self._keep(key, value)
            else:
                self._cache.delete(key)
                self._forget(key)

    def set(self, key: str, value: Buffer) -> None:
        """Store ``value`` in the source store, and in the cache with ``cache_set_data``."""
        self._store.set(key, value)
        self._written(key, value)

    def set_many(self, items: Mapping[str, Buffer] | Iterable[tuple[str, Buffer]]) -> None:
        pairs = list(items.items() if isinstance(items, Mapping) else items)
        self._store.set_many(pairs)
        for key, value in pairs:
            self._written(key, value)

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        """As the source store's; what was kept of ``key`` is dropped when it is stored
        (the next read fetches it, as in zarr-python)."""
        stored = self._store.set_if_not_exists(key, value)
        if stored:
            with self._state.lock:
                self._drop_key(key)
        return stored

    def delete(self, key: str) -> None:
        """Delete ``key`` from the source store and from the cache."""
        self._store.delete(key)
        with self._state.lock:
            self._drop_key(key)

    def delete_prefix(self, prefix: str) -> None:
        """Delete the keys under ``prefix`` from the source store and from the cache."""
        self._store.delete_prefix(prefix)
        with self._state.lock:
            for entry in list(self._state.order):
                if (entry if isinstance(entry, str) else entry[0]).startswith(prefix):
                    self._forget(entry)
            self._cache.delete_prefix(prefix)

    # --- zarr-python's cache API ----------------------------------------------------------------
    def cache_info(self) -> dict[str, Any]:
        """The cache's settings and contents, as zarr-python's ``cache_info()``.

        >>> from zarrkit.storage import MemoryStore
        >>> info = CacheStore(MemoryStore(), cache_store=MemoryStore()).cache_info()
        >>> info["cache_store_type"], info["max_age_seconds"], info["cached_keys"]
        ('MemoryStore', 'infinity', 0)
        """
        state = self._state
        with state.lock:
            return {
                "cache_store_type": type(self._cache).__name__,
                "max_age_seconds": self.max_age_seconds,
                "max_size": self.max_size,
                "current_size": state.current_size,
                "cache_set_data": self.cache_set_data,
                "tracked_keys": len(state.inserted),
                "cached_keys": len(state.order),
            }

    def cache_stats(self) -> dict[str, Any]:
        """Hits, misses, evictions, requests and the hit rate, as zarr-python's
        ``cache_stats()``.

        >>> from zarrkit.storage import MemoryStore
        >>> CacheStore(MemoryStore(), cache_store=MemoryStore()).cache_stats()["hit_rate"]
        0.0
        """
        state = self._state
        with state.lock:
            total = state.hits + state.misses
            return {"hits": state.hits, "misses": state.misses, "evictions": state.evictions,
                    "total_requests": total,
                    "hit_rate": state.hits / total if total > 0 else 0.0}

    def clear_cache(self) -> AbcCoroutine[Any, Any, None]:
        """Empty the cache store and forget every entry (the statistics stay). Done at
        once; what is returned may also be awaited, as zarr-python's coroutine
        (``asyncio.run(store.clear_cache())``).

        >>> from zarrkit.storage import MemoryStore
        >>> s = CacheStore(MemoryStore({"k": b"v"}), cache_store=MemoryStore())
        >>> _ = s.get("k"); _ = s.clear_cache(); s.cache_info()["cached_keys"]
        0
        """
        state = self._state
        with state.lock:
            self._cache.delete_prefix("")
            state.order.clear()
            state.sizes.clear()
            state.inserted.clear()
            state.ranges.clear()
            state.current_size = 0
        return _Done()

    def __repr__(self) -> str:
        state = self._state
        return (f"{type(self).__name__}(store={self._store!r}, cache_store={self._cache!r}, "
                f"max_age_seconds={self.max_age_seconds}, max_size={self.max_size}, "
                f"current_size={state.current_size}, cached_keys={len(state.order)})")
