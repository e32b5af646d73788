"""Keeping format-3 inline consolidated metadata up to date.

When zarrkit creates, changes or deletes a node below a group whose ``zarr.json`` holds
``consolidated_metadata``, it updates that snapshot in place: only the entries of the
changed nodes, with no listing, so the snapshot never goes stale through zarrkit.

>>> import zarrkit as zk
>>> s = {}
>>> root = zk.group(s, zarr_format=3)
>>> _ = zk.consolidate_metadata(s)
>>> _ = root.create_array("a", shape=(2,), dtype="u1")
>>> sorted(zk.open_group(s, mode="r", consolidated=True).metadata.consolidated_metadata
...        .metadata)
['a']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from zarrkit.concurrency import chunk_lock
from zarrkit.metadata.jsonio import dump_json, load_json_object
from zarrkit.paths import ancestors, join_path
from zarrkit.storage.base import Store

ZARR_JSON = "zarr.json"


def record_changes(store: Store, changes: Mapping[str, dict[str, Any] | None]) -> None:
    """Apply node changes (path -> new ``zarr.json`` document, or None for a deleted node)
    to every consolidated snapshot held by an ancestor of a changed node.

    >>> from zarrkit.storage import MemoryStore
    >>> record_changes(MemoryStore(), {"a": None})  # no snapshot anywhere: nothing to do
    """
    if not changes:
        return
    candidates = sorted({a for path in changes for a in ancestors(path)})
    keys = [join_path(a, ZARR_JSON) for a in candidates]
    for holder, key, raw in zip(candidates, keys, store.get_many(keys), strict=True):
        if raw is None:
            continue
        with chunk_lock(store, key):  # read-modify-write: concurrent updates must not race
            _update_snapshot(store, holder, key, changes)


def _update_snapshot(store: Store, holder: str, key: str,
                     changes: Mapping[str, dict[str, Any] | None]) -> None:
    raw = store.get(key)
    if raw is None:
        return
    document = load_json_object(raw, key=key)
    inline = document.get("consolidated_metadata")
    if not isinstance(inline, dict) or not isinstance(inline.get("metadata"), dict):
        return
    entries: dict[str, Any] = dict(inline["metadata"])
    prefix = f"{holder}/" if holder else ""
    for path, node_document in changes.items():
        if not path.startswith(prefix) or path == holder:
            continue
        relative = path[len(prefix):]
        if node_document is None:
            entries = {k: v for k, v in entries.items()
                       if k != relative and not k.startswith(relative + "/")}
        else:
            entries[relative] = snapshot_entry(node_document)
    _add_missing_ancestors(store, holder, entries)
    document["consolidated_metadata"] = {**inline, "metadata": dict(sorted(entries.items()))}
    store.set(key, dump_json(document))


def snapshot_entry(node_document: dict[str, Any]) -> dict[str, Any]:
    """A node's ``zarr.json`` document as an entry of an inline snapshot.

    A nested group's own snapshot would repeat its subtree, which the flat snapshot already
    holds, so it is written empty (zarr-python writes it so).

    >>> snapshot_entry({"attributes": {}, "zarr_format": 3, "node_type": "group"})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'attributes': {}, 'zarr_format': 3,
     'consolidated_metadata': {'kind': 'inline', 'must_understand': False, 'metadata': {}},
     'node_type': 'group'}
    """
    if node_document.get("node_type") != "group":
        return node_document
    return with_snapshot(node_document, {})


def with_snapshot(group_document: dict[str, Any], entries: dict[str, Any]) -> dict[str, Any]:
    """A group's ``zarr.json`` document holding ``entries`` as its inline snapshot, the keys
    in zarr-python's order (``consolidated_metadata`` before ``node_type``).

    >>> list(with_snapshot({"zarr_format": 3, "node_type": "group", "attributes": {}}, {}))
    ['zarr_format', 'attributes', 'consolidated_metadata', 'node_type']
    """
    document = {key: value for key, value in group_document.items()
                if key not in ("consolidated_metadata", "node_type")}
    document["consolidated_metadata"] = {"kind": "inline", "must_understand": False,
                                         "metadata": entries}
    document["node_type"] = "group"
    return document


def _add_missing_ancestors(store: Store, holder: str, entries: dict[str, Any]) -> None:
    """Give every entry its parent groups. A writer killed between creating a node and
    recording it leaves the snapshot without that node; a child recorded later would then
    be an orphan, and readers that build the tree from the snapshot (zarr-python) refuse
    the whole hierarchy. The parents' documents are read from the store as they are now.
    """
    missing = sorted({parent for relative in entries for parent in ancestors(relative)
                      if parent and parent not in entries})
    if not missing:
        return
    keys = [join_path(join_path(holder, parent), ZARR_JSON) for parent in missing]
    for parent, parent_key, raw in zip(missing, keys, store.get_many(keys), strict=True):
        parent_document = None if raw is None else load_json_object(raw, key=parent_key)
        if parent_document is not None and parent_document.get("node_type") == "group":
            entries[parent] = snapshot_entry(parent_document)
        else:  # no group there any more: what the snapshot holds below it is stale
            for relative in [k for k in entries if k.startswith(parent + "/")]:
                del entries[relative]


ZMETADATA = ".zmetadata"


def record_documents_v2(store: Store, documents: Mapping[str, dict[str, Any] | None], *,
                        removed: Sequence[str] = ()) -> None:
    """Apply format-2 document changes (store key such as ``"a/.zattrs"`` -> the new
    document, None when deleted) and the deletion of whole nodes (``removed`` paths) to
    every ``.zmetadata`` of a group at or above them, so a consolidated view never goes
    stale through zarrkit (readers such as hdmf-zarr open files consolidated).

    >>> from zarrkit.storage import MemoryStore
    >>> s = MemoryStore({".zmetadata": b'{"metadata": {}, "zarr_consolidated_format": 1}'})
    >>> record_documents_v2(s, {"a/.zattrs": {"x": 1}})
    >>> load_json_object(s.get(".zmetadata"), key=".zmetadata")["metadata"]
    {'a/.zattrs': {'x': 1}}
    """
    paths = [key.rpartition("/")[0] for key in documents] + list(removed)
    if not paths:
        return
    holders = sorted({holder for path in paths for holder in (*ancestors(path), path)})
    keys = [join_path(holder, ZMETADATA) for holder in holders]
    for holder, key, raw in zip(holders, keys, store.get_many(keys), strict=True):
        if raw is None:
            continue
        with chunk_lock(store, key):
            _update_zmetadata(store, holder, key, documents, removed)


def _update_zmetadata(store: Store, holder: str, key: str,
                      documents: Mapping[str, dict[str, Any] | None],
                      removed: Sequence[str]) -> None:
    raw = store.get(key)
    if raw is None:
        return
    document = load_json_object(raw, key=key)
    entries = document.get("metadata")
    if not isinstance(entries, dict):
        return  # not ours to repair: the reader reports it
    entries = dict(entries)
    prefix = f"{holder}/" if holder else ""
    for path in removed:
        if path == holder or not path.startswith(prefix):
            continue
        relative = path[len(prefix):]
        entries = {k: v for k, v in entries.items() if not k.startswith(relative + "/")}
    for document_key, value in documents.items():
        if not document_key.startswith(prefix):
            continue
        relative_key = document_key[len(prefix):]
        if value is None:
            entries.pop(relative_key, None)
        else:
            entries[relative_key] = value
    document["metadata"] = dict(sorted(entries.items()))
    store.set(key, dump_json(document, compact=True))
