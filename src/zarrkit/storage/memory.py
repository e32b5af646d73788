"""An in-memory store.

>>> store = MemoryStore()
>>> data = bytearray(b"abc")
>>> store.set("k", data)
>>> data[0] = 0
>>> store.get("k")
b'abc'
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator, MutableMapping
from typing import Any

from zarrkit.storage.base import Buffer, Store


class StoredBytes(bytes):
    """A value in a dict given to a :class:`MemoryStore`: bytes that also answer
    ``to_bytes()``, as the Buffer objects do that zarr-python's MemoryStore keeps in the
    dict (code written for either library reads the dict).

    >>> d = {}
    >>> MemoryStore(d).set("k", b"v")
    >>> d["k"] == b"v", d["k"].to_bytes()
    (True, b'v')
    """

    __slots__ = ()

    def to_bytes(self) -> bytes:
        """The value as plain ``bytes``.

        >>> StoredBytes(b"ab").to_bytes()
        b'ab'
        """
        return bytes(self)


class MemoryStore(Store):
    """Keys and values in a dict. Values are copied in, so a caller's buffer is never
    aliased, and returned as immutable ``bytes`` (:class:`StoredBytes` in a dict the
    caller gave).

    >>> s = MemoryStore({"a": b"1"})
    >>> sorted(s.list())
    ['a']
    """

    def __init__(
        self, store_dict: MutableMapping[str, bytes] | None = None, *,
        read_only: bool = False
    ) -> None:
        # A dict passed in is used as is (writes show up in it), as zarr-python does; the
        # parameter has zarr-python's name.
        self._data: MutableMapping[str, bytes] = {} if store_dict is None else store_dict
        self._value_type: type[bytes] = bytes if store_dict is None else StoredBytes
        self._lock = threading.Lock()
        self.read_only = read_only

    def _get(self, key: str) -> bytes | None:
        return self._data.get(key)

    def _set(self, key: str, value: Buffer) -> None:
        copied = self._value_type(value)
        with self._lock:
            self._data[key] = copied

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        """Store ``value`` under ``key`` unless a value is there; whether it was stored.

        >>> s = MemoryStore()
        >>> s.set_if_not_exists("k", b"1"), s.set_if_not_exists("k", b"2")
        (True, False)
        """
        self._check_write(key, value)
        copied = self._value_type(value)
        # dict.setdefault is one atomic step, so handles sharing a dict agree too.
        return self._data.setdefault(key, copied) is copied

    @property
    def lock_identity(self) -> Hashable:
        """Handles over the same dict share locks.

        >>> d = {}; MemoryStore(d).lock_identity == MemoryStore(d).lock_identity
        True
        """
        return ("memory", id(self._data))

    def _delete(self, key: str) -> None:
        with self._lock:
            self._data.pop(key, None)

    def _iter_keys(self) -> Iterator[str]:
        with self._lock:
            keys = list(self._data)
        return iter(keys)

    def __getstate__(self) -> dict[str, Any]:
        # A copy holds a copy of the data, as zarr-python's MemoryStore pickles: memory is
        # not shared between processes.
        with self._lock:
            data = dict(self._data)
        return {"data": data, "read_only": self.read_only}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["data"], read_only=state["read_only"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self._data)} keys>)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemoryStore) and self._data == other._data

    __hash__ = None  # type: ignore[assignment]
