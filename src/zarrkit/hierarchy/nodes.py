"""Reading, creating and deleting nodes (arrays and groups) in a store.

Creation follows the v2 spec: every missing ancestor becomes a group, and a name cannot hold
both an array and a group. Everything is validated before the first write, so a failed
creation leaves the store as it was.

>>> from zarrkit.storage import MemoryStore
>>> store = MemoryStore()
>>> create_group_node(store, "a/b")
>>> sorted(store.list())
['.zgroup', 'a/.zgroup', 'a/b/.zgroup']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from zarrkit.errors import ContainsNodeError, NodeNotFoundError, ReadOnlyError
from zarrkit.metadata.jsonio import dump_json, load_json_object
from zarrkit.metadata.v2 import ZARRAY, ZATTRS, ZGROUP, ArrayMetadataV2, GroupMetadataV2
from zarrkit.paths import ancestors, join_path, key_prefix
from zarrkit.storage.base import Store

NodeKind = Literal["array", "group"]
Consolidated = Mapping[str, Any]


def read_document(
    store: Store, key: str, consolidated: Consolidated | None = None
) -> dict[str, Any] | None:
    """A metadata document by store key, from consolidated metadata when given.

    >>> from zarrkit.storage import MemoryStore
    >>> read_document(MemoryStore({".zgroup": b'{"zarr_format": 2}'}), ".zgroup")
    {'zarr_format': 2}
    """
    if consolidated is not None:
        document = consolidated.get(key)
        return None if document is None else dict(document)
    raw = store.get(key)
    return None if raw is None else load_json_object(raw, key=key)


def node_kind(
    store: Store, path: str, consolidated: Consolidated | None = None
) -> NodeKind | None:
    """``"array"``, ``"group"`` or None for the node at ``path``.

    >>> from zarrkit.storage import MemoryStore
    >>> node_kind(MemoryStore(), "x") is None
    True
    """
    array_key, group_key = join_path(path, ZARRAY), join_path(path, ZGROUP)
    if consolidated is not None:
        if array_key in consolidated:
            return "array"
        return "group" if group_key in consolidated else None
    array_doc, group_doc = store.get_many([array_key, group_key])
    if array_doc is not None:
        return "array"
    return "group" if group_doc is not None else None


def read_array_metadata(
    store: Store, path: str, consolidated: Consolidated | None = None
) -> ArrayMetadataV2:
    """The parsed ``.zarray`` of the array at ``path``.

    >>> from zarrkit.storage import MemoryStore
    >>> read_array_metadata(MemoryStore(), "missing")
    Traceback (most recent call last):
    zarrkit.errors.ArrayNotFoundError: no array at path 'missing'
    """
    from zarrkit.errors import ArrayNotFoundError

    key = join_path(path, ZARRAY)
    document = read_document(store, key, consolidated)
    if document is None:
        raise ArrayNotFoundError(f"no array at path {path!r}")
    return ArrayMetadataV2.from_json(document, key=key)


def read_group_metadata(
    store: Store, path: str, consolidated: Consolidated | None = None
) -> GroupMetadataV2:
    """The parsed ``.zgroup`` of the group at ``path``.

    >>> from zarrkit.storage import MemoryStore
    >>> read_group_metadata(MemoryStore({".zgroup": b"[1]"}), "")
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: .zgroup: expected a JSON object, found list
    """
    from zarrkit.errors import GroupNotFoundError

    key = join_path(path, ZGROUP)
    document = read_document(store, key, consolidated)
    if document is None:
        raise GroupNotFoundError(f"no group at path {path!r}")
    return GroupMetadataV2.from_json(document, key=key)


def read_attributes(
    store: Store, path: str, consolidated: Consolidated | None = None
) -> dict[str, Any] | None:
    """The attributes document at ``path`` when consolidated metadata holds it, else None
    (attributes are then read lazily from the store)."""
    if consolidated is None:
        return None
    return dict(consolidated.get(join_path(path, ZATTRS)) or {})


def _check_store_writable(store: Store, path: str, kind: NodeKind) -> None:
    if store.read_only:
        raise ReadOnlyError(f"cannot create {kind} {path or '/'!r}: {store!r} is read-only")


def _prepare_ancestors(store: Store, path: str) -> list[str]:
    """Check that no ancestor is an array; return the ancestors lacking group metadata."""
    missing = []
    candidates = ancestors(path)
    keys = [k for p in candidates for k in (join_path(p, ZARRAY), join_path(p, ZGROUP))]
    values = store.get_many(keys)
    for i, ancestor in enumerate(candidates):
        array_doc, group_doc = values[2 * i], values[2 * i + 1]
        if array_doc is not None:
            raise ContainsNodeError(
                f"cannot create a node under {path!r}: {ancestor or '/'!r} is an array"
            )
        if group_doc is None:
            missing.append(ancestor)
    return missing


def _clear_for_new_node(store: Store, path: str, *, overwrite: bool, kind: NodeKind) -> None:
    existing = node_kind(store, path)
    if existing is None:
        return
    if not overwrite:
        raise ContainsNodeError(f"{existing} already exists at path {path or '/'!r}")
    delete_node(store, path)


def delete_node(store: Store, path: str) -> None:
    """Delete the node at ``path`` and everything below it.

    >>> from zarrkit.storage import MemoryStore
    >>> s = MemoryStore(); create_group_node(s, "a/b"); delete_node(s, "a")
    >>> sorted(s.list())
    ['.zgroup']
    """
    store.delete_prefix(key_prefix(path))
    if path:
        for name in (ZARRAY, ZGROUP, ZATTRS):
            store.delete(join_path(path, name))


def create_group_node(
    store: Store,
    path: str,
    attributes: dict[str, Any] | None = None,
    *,
    overwrite: bool = False,
    exist_ok: bool = False,
) -> None:
    """Write a group (and any missing ancestor groups) at ``path``."""
    _check_store_writable(store, path, "group")
    missing = _prepare_ancestors(store, path)
    existing = node_kind(store, path)
    if existing == "group" and exist_ok and not overwrite:
        if attributes:
            store.set(join_path(path, ZATTRS), dump_json(attributes))
        return
    if existing == "array" and exist_ok and not overwrite:
        raise ContainsNodeError(f"an array already exists at path {path or '/'!r}")
    attributes_doc = dump_json(attributes) if attributes else None
    _clear_for_new_node(store, path, overwrite=overwrite, kind="group")
    group_doc = dump_json(GroupMetadataV2().to_json())
    items = {join_path(p, ZGROUP): group_doc for p in missing}
    items[join_path(path, ZGROUP)] = group_doc
    if attributes_doc is not None:
        items[join_path(path, ZATTRS)] = attributes_doc
    store.set_many(items)


def create_array_node(
    store: Store,
    path: str,
    metadata: ArrayMetadataV2,
    attributes: dict[str, Any] | None = None,
    *,
    overwrite: bool = False,
) -> None:
    """Write array metadata at ``path`` (and any missing ancestor groups)."""
    _check_store_writable(store, path, "array")
    array_doc = dump_json(metadata.to_json())
    attributes_doc = dump_json(attributes) if attributes else None
    missing = _prepare_ancestors(store, path)
    _clear_for_new_node(store, path, overwrite=overwrite, kind="array")
    group_doc = dump_json(GroupMetadataV2().to_json())
    items = {join_path(p, ZGROUP): group_doc for p in missing}
    items[join_path(path, ZARRAY)] = array_doc
    if attributes_doc is not None:
        items[join_path(path, ZATTRS)] = attributes_doc
    store.set_many(items)


def require_node(
    store: Store, path: str, consolidated: Consolidated | None = None
) -> NodeKind:
    """The kind of the node at ``path``, or NodeNotFoundError.

    >>> from zarrkit.storage import MemoryStore
    >>> require_node(MemoryStore(), "a")
    Traceback (most recent call last):
    zarrkit.errors.NodeNotFoundError: no array or group at path 'a'
    """
    kind = node_kind(store, path, consolidated)
    if kind is None:
        raise NodeNotFoundError(f"no array or group at path {path!r}")
    return kind
