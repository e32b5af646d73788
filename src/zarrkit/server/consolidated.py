"""Consolidated metadata made on the fly, for stores that have none.

zarr-python opens a hierarchy over HTTP from its consolidated metadata (HTTP cannot list),
so the server answers ``<group>/.zmetadata`` for a format-2 group that has none, and
serves a format-3 group's ``zarr.json`` with ``consolidated_metadata`` inlined when the
stored document holds none. The documents are made by :func:`zarrkit.consolidate_metadata`
itself, run on a :class:`ScratchOverlay` that reads the served store and keeps its writes in
memory: the served store is never written.

A document is made once per state of the group's own metadata and kept: the server serves
data at rest, and a node added below the group later shows after a restart.

>>> import zarrkit as zk
>>> from zarrkit.storage import MemoryStore
>>> store = MemoryStore()
>>> _ = zk.group(store, zarr_format=2).create_array("a", shape=(2,), dtype="u1")
>>> import json
>>> sorted(json.loads(Consolidator(store).document(".zmetadata"))["metadata"])
['.zgroup', 'a/.zarray']
>>> ".zmetadata" in store
False
"""

from __future__ import annotations

import builtins
import json
import threading
from collections.abc import Iterator

from zarrkit.errors import ZarrkitError
from zarrkit.storage.base import Buffer, Store

ZMETADATA = ".zmetadata"
ZGROUP = ".zgroup"
ZARR_JSON = "zarr.json"


class ScratchOverlay(Store):
    """A writable view of ``base`` whose writes stay in memory (deletes are refused).

    >>> from zarrkit.storage import MemoryStore
    >>> base = MemoryStore({"a": b"1"}, read_only=True)
    >>> overlay = ScratchOverlay(base)
    >>> overlay.set("b", b"2")
    >>> sorted(overlay.list()), "b" in base
    (['a', 'b'], False)
    """

    supports_deletes = False

    def __init__(self, base: Store) -> None:
        self.base = base
        self.written: dict[str, bytes] = {}

    def _get(self, key: str) -> bytes | None:
        if key in self.written:
            return self.written[key]
        return self.base.get(key)

    def _set(self, key: str, value: Buffer) -> None:
        self.written[key] = bytes(value)

    def _delete(self, key: str) -> None:
        raise PermissionError(f"{type(self).__name__} does not delete {key!r}")

    def _iter_keys(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        new = sorted(k for k in self.written if k.startswith(prefix))
        return iter(new + [k for k in self.base.list_prefix(prefix) if k not in self.written])

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return Store.list_dir(self, prefix)


def _group_path(key: str, name: str) -> str | None:
    """The group path of a ``<path>/<name>`` key, or None if the key is not so named."""
    if key == name:
        return ""
    if key.endswith("/" + name):
        return key[: -len(name) - 1]
    return None


class Consolidator:
    """Makes (and keeps) the consolidated documents of one served store.

    >>> from zarrkit.storage import MemoryStore
    >>> Consolidator(MemoryStore()).document("a/.zarray") is None
    True
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._made: dict[tuple[str, bytes | None], bytes | None] = {}
        self._lock = threading.Lock()

    def document(self, key: str, stored: bytes | None = None) -> bytes | None:
        """The document to serve for ``key`` in place of ``stored`` (the stored value, None
        if missing), or None when the stored value stands: ``key`` names no consolidated
        document, the store has its own, or no group is there. Blocking: it may list and
        read the whole hierarchy below the group.
        """
        v2_group = _group_path(key, ZMETADATA)
        v3_group = _group_path(key, ZARR_JSON)
        if v2_group is not None and stored is None:
            if self.store.get(f"{v2_group}/{ZGROUP}" if v2_group else ZGROUP) is None:
                return None
            return self._cached(key, None, v2_group, 2)
        if v3_group is not None and stored is not None and _lacks_snapshot(stored):
            return self._cached(key, stored, v3_group, 3)
        return None

    def _cached(self, key: str, stored: bytes | None, group: str, zarr_format: int
                ) -> bytes | None:
        with self._lock:
            if (key, stored) in self._made:
                return self._made[(key, stored)]
        made = _consolidate(self.store, key, group, zarr_format)
        with self._lock:
            self._made[(key, stored)] = made
        return made


def _lacks_snapshot(raw: bytes) -> bool:
    """Whether a ``zarr.json`` is a group document with no consolidated metadata."""
    try:
        document = json.loads(raw)
    except ValueError:
        return False
    return (isinstance(document, dict) and document.get("node_type") == "group"
            and not isinstance(document.get("consolidated_metadata"), dict))


def _consolidate(store: Store, key: str, group: str, zarr_format: int) -> bytes | None:
    """The document :func:`zarrkit.consolidate_metadata` would write at ``key``, or None
    where it cannot be made (a store that cannot list, such as HTTP)."""
    from zarrkit.api import consolidate_metadata

    if not getattr(store, "supports_listing", True):
        return None
    overlay = ScratchOverlay(store)
    try:
        consolidate_metadata(overlay, path=group, zarr_format=zarr_format)
    except (ZarrkitError, ValueError, OSError):
        return None  # a hierarchy that does not consolidate is served as it is stored
    return overlay.written.get(key)
