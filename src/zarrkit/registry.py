"""The one registry of extensions: data types, codecs, chunk grids, chunk key encodings.

Each extension point is a :class:`Registry` mapping a name (as it appears in metadata) to
what implements it. Third-party code adds entries with the ``register_*`` functions that
the modules of each extension point export.

>>> example = Registry[int]("example")
>>> example.register("one", 1)
>>> example.get("one"), example.get("two")
(1, None)
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Names to implementations for one extension point.

    >>> r = Registry[str]("codec")
    >>> r.register("x", "impl"); r.names()
    ['x']
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._lock = threading.Lock()

    def register(self, name: str, implementation: T, *, replace: bool = True) -> None:
        """Add (or, with ``replace``, override) the implementation of ``name``."""
        with self._lock:
            if not replace and name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = implementation

    def get(self, name: str) -> T | None:
        """The implementation of ``name``, or None."""
        return self._entries.get(name)

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries


data_types: Registry[object] = Registry("data type")
codecs: Registry[object] = Registry("codec")
chunk_grids: Registry[object] = Registry("chunk grid")
chunk_key_encodings: Registry[object] = Registry("chunk key encoding")
