"""The one kind of cache zarrkit keeps: a bounded map of parse and build results.

Opening a hierarchy parses the same data types, fill values, grids and codec chains over
and over; each is cached by its JSON form. Entries are cheap to recompute, so a full
cache is simply emptied rather than tracking recency. Only successes are ever stored, so
invalid input fails every time.

>>> cache = BoundedCache(2)
>>> cache.put("a", 1); cache.put("b", 2); cache.put("c", 3)
>>> cache.get("a"), cache.get("c")
(None, 3)
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

MISSING: Any = object()


class BoundedCache(Generic[K, V]):
    """At most ``limit`` entries; emptied when a new one would exceed that.

    ``get_for``/``put_for`` keep with each value the registered factory that produced it,
    so that registering another factory under the same name makes the entry stale.

    >>> cache: BoundedCache[str, int] = BoundedCache(8)
    >>> cache.put_for("x", len, 3)
    >>> cache.get_for("x", len), cache.get_for("x", abs)
    (3, None)
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._entries: dict[K, Any] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K, default: Any = None) -> Any:
        """The cached value of ``key``, or ``default``."""
        return self._entries.get(key, default)

    def put(self, key: K, value: V) -> None:
        """Cache ``value`` under ``key``."""
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[key] = value

    def get_for(self, key: K, factory: object) -> V | None:
        """The value cached under ``key`` if ``factory`` (the one registered now) made it."""
        entry = self._entries.get(key)
        if entry is not None and entry[0] is factory:
            return entry[1]  # type: ignore[no-any-return]
        return None

    def put_for(self, key: K, factory: object, value: V) -> None:
        """Cache ``value`` under ``key``, as made by ``factory``."""
        self.put(key, (factory, value))  # type: ignore[arg-type]
