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

import numpy as np

from zarrkit.concurrency import chunk_lock
from zarrkit.errors import AttributeValueError, ReadOnlyError
from zarrkit.hierarchy.consolidated import record_documents_v2
from zarrkit.metadata.jsonio import dump_json, load_json_object
from zarrkit.metadata.v2 import parse_attributes
from zarrkit.storage.base import Store

#: A change to a node's attributes: the current stored ones in, the new ones out.
Edit = Callable[[dict[str, Any]], dict[str, Any]]

_JSON_LEAVES = (str, int, float, bool, type(None), np.generic, np.ndarray)
_JSON_KEYS = (str, int, float, bool, type(None))  # json.dumps' rules, as dump_json's


def check_json_value(name: str, value: Any, key: str) -> None:
    """AttributeValueError (a TypeError) naming ``key`` (the attributes' document) and
    the attribute ``name`` if ``value`` holds something JSON cannot: an object that is
    no str, number, bool, None, list, tuple or dict of them (keys as ``json.dumps``
    takes them; numpy scalars and arrays are written as numbers and lists). A type may
    say how to store it instead in a class attribute ``__zarrkit_attribute_hint__`` (a
    Reference does: :func:`zarrkit.references.encode_attribute`), which the message
    repeats.

    >>> check_json_value("ok", {"a": [1, 2.5, None]}, "g/.zattrs")
    >>> check_json_value("bad", [object()], "g/.zattrs")
    Traceback (most recent call last):
    zarrkit.errors.AttributeValueError: attribute 'bad' of 'g/.zattrs': an object is not \
JSON serialisable
    """
    stack = [value]
    while stack:  # a loop, not recursion: deep values are the JSON writer's to refuse
        item = stack.pop()
        if isinstance(item, _JSON_LEAVES):
            continue
        if isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, dict) and all(isinstance(k, _JSON_KEYS) for k in item):
            stack.extend(item.values())
        else:
            hint = getattr(type(item), "__zarrkit_attribute_hint__", None)
            kind = type(item).__name__
            article = "an" if kind[:1].lower() in "aeiou" else "a"
            raise AttributeValueError(
                f"attribute {name!r} of {key!r}: {article} {kind} is not JSON serialisable"
                + (f"; {hint}" if isinstance(hint, str) else ""))


class Attributes(MutableMapping[str, Any]):
    """Attributes stored as a JSON object under ``key``.

    Every change is applied to the document *as stored now*, under the key's lock (shared
    by every handle on the store, and across processes with ``config.file_locks``): two
    handles that set different attributes both keep theirs.

    ``loaded`` may hold an already-read document (from consolidated metadata) so that no
    store read is needed for reading. ``writer`` applies a change itself, for formats that
    keep attributes inside another document; it returns the new attributes.

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
        writer: Callable[[Edit], dict[str, Any]] | None = None,
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

    def _change(self, edit: Edit) -> None:
        if self._read_only or self._store.read_only:
            raise ReadOnlyError(f"attributes at {self._key!r} are read-only")
        if self._writer is not None:
            document = self._writer(edit)
        else:
            with chunk_lock(self._store, self._key):
                raw = self._store.get(self._key)
                current = {} if raw is None else parse_attributes(
                    load_json_object(raw, key=self._key), self._key)
                document = edit(current)
                self._store.set(self._key, dump_json(document))
            record_documents_v2(self._store, {self._key: document})
        self._cache = document

    @property
    def _where(self) -> str:
        return f"{self._key} in {self._store!r}"

    def refresh(self) -> None:
        """Forget the cached document so the next access reads the store again."""
        self._cache = None

    def __getitem__(self, name: str) -> Any:
        return self._load()[name]

    def __setitem__(self, name: str, value: Any) -> None:
        check_json_value(name, value, self._where)
        self._change(lambda current: {**current, name: value})

    def __delitem__(self, name: str) -> None:
        if name not in self._load():
            raise KeyError(name)
        self._change(lambda current: {k: v for k, v in current.items() if k != name})

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Change several attributes in one write."""
        changes = dict(*args, **kwargs)
        for name, value in changes.items():
            check_json_value(name, value, self._where)
        self._change(lambda current: {**current, **changes})

    def put(self, document: dict[str, Any]) -> None:
        """Replace all attributes with ``document`` in one write."""
        replacement = dict(document)
        for name, value in replacement.items():
            check_json_value(name, value, self._where)
        self._change(lambda _: dict(replacement))

    def asdict(self) -> dict[str, Any]:
        """A copy of the attributes as a plain dict."""
        return dict(self._load())

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._load()))

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"Attributes({self._load()!r})"
