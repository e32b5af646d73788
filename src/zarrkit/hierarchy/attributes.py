"""User attributes of a node: a mutable mapping written through to the store.

>>> from zarrkit.storage import MemoryStore
>>> store = MemoryStore()
>>> attrs = Attributes(store, ".zattrs")
>>> attrs.update({"a": 1, "b": [1, 2]})
>>> store.get(".zattrs") is not None, dict(attrs)
(True, {'a': 1, 'b': [1, 2]})
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from zarrkit.errors import ReadOnlyError
from zarrkit.metadata.jsonio import dump_json, load_json_object
from zarrkit.metadata.v2 import parse_attributes
from zarrkit.storage.base import Store


class Attributes(MutableMapping[str, Any]):
    """Attributes stored as a JSON object under ``key``; every change is one write.

    ``loaded`` may hold an already-read document (from consolidated metadata) so that no
    store read is needed. ``writer`` replaces the default write of the whole document, for
    formats that keep attributes inside another document.

    >>> from zarrkit.storage import MemoryStore
    >>> a = Attributes(MemoryStore(), "x/.zattrs")
    >>> a["k"] = "v"; a["k"]
    'v'
    """

    def __init__(
        self,
        store: Store,
        key: str,
        *,
        read_only: bool = False,
        loaded: dict[str, Any] | None = None,
        writer: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self._store = store
        self._key = key
        self._read_only = read_only
        self._cache = None if loaded is None else dict(loaded)
        self._writer = writer

    def _load(self) -> dict[str, Any]:
        if self._cache is None:
            raw = self._store.get(self._key)
            self._cache = {} if raw is None else parse_attributes(
                load_json_object(raw, key=self._key), self._key
            )
        return self._cache

    def _write(self, document: dict[str, Any]) -> None:
        if self._read_only or self._store.read_only:
            raise ReadOnlyError(f"attributes at {self._key!r} are read-only")
        if self._writer is not None:
            self._writer(document)
        else:
            self._store.set(self._key, dump_json(document))
        self._cache = document

    def refresh(self) -> None:
        """Forget the cached document so the next access reads the store again."""
        self._cache = None

    def __getitem__(self, name: str) -> Any:
        return self._load()[name]

    def __setitem__(self, name: str, value: Any) -> None:
        self._write({**self._load(), name: value})

    def __delitem__(self, name: str) -> None:
        document = dict(self._load())
        del document[name]
        self._write(document)

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Change several attributes in one write."""
        self._write({**self._load(), **dict(*args, **kwargs)})

    def put(self, document: dict[str, Any]) -> None:
        """Replace all attributes with ``document`` in one write."""
        self._write(dict(document))

    def asdict(self) -> dict[str, Any]:
        """A copy of the attributes as a plain dict."""
        return dict(self._load())

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._load()))

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"Attributes({self._load()!r})"
