"""Stores that wrap another store: :class:`WrapperStore` forwards every operation (the base
for stores that add behaviour around another), and :class:`LoggingStore` logs and counts
each call, as zarr-python's classes of these names do.

>>> from zarrkit.storage import MemoryStore
>>> store = LoggingStore(MemoryStore(), log_handler=logging.NullHandler())
>>> store.set("a", b"1"); store.get("a"), store.get("b")
(b'1', None)
>>> dict(store.counter)
{'set': 1, 'get': 2}
"""

from __future__ import annotations

import builtins
import logging
import sys
import time
from collections import defaultdict
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Generic, TypeVar

from zarrkit.storage.base import Buffer, Store

T_Store = TypeVar("T_Store", bound=Store)

_NOT_FORWARDED = frozenset({"_store", "value_file", "value_range", "file_writes"})
"""Names a wrapper never takes from the store it wraps: its own state, and the file (or
file range) behind a value (a reader given it would bypass the wrapper's reads, a writer
its writes)."""


class WrapperStore(Store, Generic[T_Store]):
    """A store that forwards every operation to the store it wraps (``_store``).
    Subclasses override the operations they change; anything else, including an
    optional capability of the wrapped store (``get_into``, ``map_value``...), passes
    through.

    >>> from zarrkit.storage import MemoryStore
    >>> inner = MemoryStore()
    >>> outer = WrapperStore(inner)
    >>> outer.set("k", b"v"); inner.get("k"), list(outer.list())
    (b'v', ['k'])
    """

    def __init__(self, store: T_Store) -> None:
        if not isinstance(store, Store):
            raise TypeError(f"{type(self).__name__} wraps a zarrkit Store, not {store!r}")
        self._store = store

    @classmethod
    def open(cls, store_cls: type[T_Store], *args: Any, **kwargs: Any) -> WrapperStore[T_Store]:
        """Make a ``store_cls(*args, **kwargs)`` and wrap it.

        >>> from zarrkit.storage import MemoryStore
        >>> type(WrapperStore.open(MemoryStore)._store).__name__
        'MemoryStore'
        """
        return cls(store_cls(*args, **kwargs))

    def _with_store(self, store: T_Store) -> WrapperStore[T_Store]:
        """The same kind of wrapper around another store (subclasses with options of their
        own keep them)."""
        return type(self)(store)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this class lacks: the wrapped store's own extras. Names
        # of private state are not forwarded, so that copying or unpickling a wrapper
        # (when ``_store`` is not set yet) cannot recurse.
        if name.startswith("__") or name in _NOT_FORWARDED:
            raise AttributeError(name)
        return getattr(self._store, name)

    # --- properties of the wrapped store ------------------------------------------------
    @property
    def read_only(self) -> bool:  # type: ignore[override]
        return self._store.read_only

    @property
    def supports_listing(self) -> bool:  # type: ignore[override]
        return self._store.supports_listing

    @property
    def supports_writes(self) -> bool:  # type: ignore[override]
        return self._store.supports_writes

    @property
    def supports_deletes(self) -> bool:  # type: ignore[override]
        return self._store.supports_deletes

    @property
    def supports_partial_reads(self) -> bool:  # type: ignore[override]
        return self._store.supports_partial_reads

    @property
    def prefers_whole_values(self) -> bool:  # type: ignore[override]
        return self._store.prefers_whole_values

    @property
    def lock_identity(self) -> Hashable:
        return self._store.lock_identity

    # --- forwarded operations -----------------------------------------------------------
    def key_lock(self, key: str) -> AbstractContextManager[None]:
        return self._store.key_lock(key)

    def get(self, key: str) -> bytes | None:
        return self._store.get(key)

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        return self._store.get_range(key, start, length)

    def get_many(self, keys: Sequence[str]) -> builtins.list[bytes | None]:
        return self._store.get_many(keys)

    def get_many_as_completed(self, keys: Sequence[str]
                              ) -> Iterator[tuple[int, bytes | None]]:
        return self._store.get_many_as_completed(keys)

    def set(self, key: str, value: Buffer) -> None:
        self._store.set(key, value)

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        return self._store.set_if_not_exists(key, value)

    def set_many(self, items: Mapping[str, Buffer] | Iterable[tuple[str, Buffer]]) -> None:
        self._store.set_many(items)

    def delete(self, key: str) -> None:
        self._store.delete(key)

    def delete_prefix(self, prefix: str) -> None:
        self._store.delete_prefix(prefix)

    def list(self) -> Iterator[str]:
        return self._store.list()

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self._store.list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return self._store.list_dir(prefix)

    def __contains__(self, key: object) -> bool:
        return key in self._store

    def close(self) -> None:
        self._store.close()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and bool(
            other._store == self._store)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._store!r})"


class LoggingStore(WrapperStore[T_Store]):
    """A :class:`WrapperStore` that logs each call to the wrapped store (``Calling`` and
    ``Finished`` lines, with the time taken, at INFO level on the logger
    ``LoggingStore(<store>)``) and counts calls per method in ``counter``. Without a
    ``log_handler``, the logger writes to standard output, as zarr-python's does.

    >>> from zarrkit.storage import MemoryStore
    >>> s = LoggingStore(MemoryStore(), log_level="WARNING")
    >>> s.set("x", b"1"); s.set("y", b"2"); sorted(s.list())
    ['x', 'y']
    >>> s.counter["set"], s.counter["list"]
    (2, 1)
    """

    counter: defaultdict[str, int]

    def __init__(self, store: T_Store, log_level: str = "DEBUG",
                 log_handler: logging.Handler | None = None) -> None:
        super().__init__(store)
        self.counter = defaultdict(int)
        self.log_level = log_level
        self.log_handler = log_handler
        self.logger = logging.getLogger(f"LoggingStore({self._store!r})")
        self.logger.setLevel(log_level)
        # One handler per logger: wrapping the same store twice must not print twice.
        if not self.logger.hasHandlers():
            self.logger.addHandler(log_handler or self._default_handler())

    def _default_handler(self) -> logging.Handler:
        handler = logging.StreamHandler(stream=sys.stdout)
        handler.setLevel(self.log_level)
        handler.setFormatter(
            logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s"))
        return handler

    def _with_store(self, store: T_Store) -> LoggingStore[T_Store]:
        return type(self)(store, log_level=self.log_level, log_handler=self.log_handler)

    @classmethod
    def open(cls, store_cls: type[T_Store], *args: Any, **kwargs: Any) -> LoggingStore[T_Store]:
        """Make a ``store_cls(*args, **kwargs)`` and wrap it; ``log_level`` and
        ``log_handler`` among the keywords are the wrapper's.

        >>> from zarrkit.storage import MemoryStore
        >>> LoggingStore.open(MemoryStore, log_level="ERROR").log_level
        'ERROR'
        """
        log_level = kwargs.pop("log_level", "DEBUG")
        log_handler = kwargs.pop("log_handler", None)
        return cls(store_cls(*args, **kwargs), log_level=log_level, log_handler=log_handler)

    def _call(self, method: str, hint: object, *args: Any) -> Any:
        operation = f"{type(self._store).__name__}.{method}"
        if hint:
            operation = f"{operation}({hint})"
        self.logger.info(" Calling %s", operation)
        self.counter[method] += 1
        start = time.perf_counter()
        try:
            return getattr(self._store, method)(*args)
        finally:
            self.logger.info("Finished %s [%.2f s]", operation, time.perf_counter() - start)

    def get(self, key: str) -> bytes | None:
        return self._call("get", key, key)  # type: ignore[no-any-return]

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        return self._call("get_range", key, key, start, length)  # type: ignore[no-any-return]

    def get_many(self, keys: Sequence[str]) -> builtins.list[bytes | None]:
        return self._call("get_many", len(keys), keys)  # type: ignore[no-any-return]

    def get_many_as_completed(self, keys: Sequence[str]
                              ) -> Iterator[tuple[int, bytes | None]]:
        # Drained here, so that the time logged is that of the reads.
        return iter(list(self._call("get_many_as_completed", len(keys), keys)))

    def set(self, key: str, value: Buffer) -> None:
        self._call("set", key, key, value)

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        return self._call("set_if_not_exists", key, key, value)  # type: ignore[no-any-return]

    def set_many(self, items: Mapping[str, Buffer] | Iterable[tuple[str, Buffer]]) -> None:
        self._call("set_many", "", items)

    def delete(self, key: str) -> None:
        self._call("delete", key, key)

    def delete_prefix(self, prefix: str) -> None:
        self._call("delete_prefix", prefix, prefix)

    def list(self) -> Iterator[str]:
        return iter(list(self._call("list", "")))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return iter(list(self._call("list_prefix", prefix, prefix)))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return self._call("list_dir", prefix, prefix)  # type: ignore[no-any-return]

    def close(self) -> None:
        self._call("close", "")

    def __repr__(self) -> str:
        return f"LoggingStore({self._store!r})"
