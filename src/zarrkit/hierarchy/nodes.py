"""Finding, creating and deleting nodes (arrays and groups) of either Zarr format.

A node's metadata is ``zarr.json`` (format 3) or ``.zarray``/``.zgroup`` plus ``.zattrs``
(format 2). Creating a node creates every missing ancestor group, and a name cannot hold
both an array and a group. Everything is validated before the first write, so a failed
creation leaves the store as it was.

>>> from zarrkit.storage import MemoryStore
>>> store = MemoryStore()
>>> create_group_node(store, "a/b", zarr_format=2)
>>> sorted(store.list())
['.zgroup', 'a/.zgroup', 'a/b/.zgroup']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

from zarrkit.concurrency import parallel_batches
from zarrkit.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    ContainsNodeError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarrkit.hierarchy.consolidated import record_changes, record_documents_v2
from zarrkit.metadata.jsonio import dump_json, load_json_object
from zarrkit.metadata.v2 import (
    ZARRAY,
    ZATTRS,
    ZGROUP,
    ZMETADATA,
    ArrayMetadataV2,
    GroupMetadataV2,
    parse_attributes,
)
from zarrkit.metadata.v3 import (
    CONSOLIDATED_MEMBER,
    ArrayMetadataV3,
    GroupMetadataV3,
    parse_node_v3,
)
from zarrkit.paths import ancestors, join_path, key_prefix
from zarrkit.storage.base import Store

ZARR_JSON = "zarr.json"
#: The names of metadata documents, of either format (a v2 consolidated view included):
#: copies write them after a node's chunks, so that a node appears only once complete.
METADATA_DOCUMENT_NAMES = frozenset({ZARR_JSON, ZARRAY, ZGROUP, ZATTRS, ZMETADATA})
#: The reserved group attribute that holds a group's links in hdmf-zarr 0.13's convention
#: (Zarr v2; see zarrkit.hierarchy.links): node creation refuses a name a link has.
LINK_ATTRIBUTE = "zarr_link"
#: The same in hdmf-zarr 0.14's convention (Zarr v3).
LINKS_ATTRIBUTE_V3 = "_LINKS"


def link_attribute_in(attributes: Mapping[str, Any]) -> str | None:
    """The attribute that holds a group's links, as hdmf-zarr 0.14 reads them: ``_LINKS``
    when the group has it (a ``zarr_link`` beside it is then not read), else
    ``zarr_link``; None when the group has neither.

    >>> link_attribute_in({"zarr_link": [], "_LINKS": []}), link_attribute_in({"a": 1})
    ('_LINKS', None)
    """
    for name in (LINKS_ATTRIBUTE_V3, LINK_ATTRIBUTE):
        if name in attributes:
            return name
    return None



class _Default:
    """The type of :data:`DEFAULT`."""

    def __repr__(self) -> str:
        return "<default>"


#: Stands for an argument not given where None is a value of its own (``fill_value=None``
#: asks for a null fill value; leaving it out, for the data type's default).
DEFAULT: Any = _Default()

NodeKind = Literal["array", "group"]
Consolidated = Mapping[str, Any]
ArrayMetadata = Union[ArrayMetadataV2, "ArrayMetadataV3"]
GroupMetadata = Union[GroupMetadataV2, "GroupMetadataV3"]


@dataclass(frozen=True)
class FoundNode:
    """What :func:`find_node` learnt about a node: its kind, format and metadata.

    ``attributes`` is the attributes document when it is already known (always for format
    3, for format 2 when read from consolidated metadata), else None: read it lazily.
    """

    path: str
    kind: NodeKind
    zarr_format: int
    metadata: Any
    attributes: dict[str, Any] | None
    # The format-3 document the metadata was parsed from (shared, never to be modified).
    document: Mapping[str, Any] | None = None


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


def _documents(store: Store, keys: list[str], omit: str | None = None
               ) -> list[dict[str, Any] | None]:
    """The documents of ``keys`` read from the store; ``omit`` names a top-level member
    that ``zarr.json`` documents are loaded without."""
    return [None if raw is None else load_json_object(
                raw, key=key, omit=omit if key.endswith(ZARR_JSON) else None)
            for key, raw in zip(keys, store.get_many(keys), strict=True)]


def find_node(
    store: Store,
    path: str,
    consolidated: Consolidated | None = None,
    zarr_format: int | None = None,
    *,
    without_consolidated: bool = False,
) -> FoundNode | None:
    """The node at ``path`` with its parsed metadata, or None if there is none.

    ``zarr_format=None`` looks for both formats (``zarr.json`` first).
    ``without_consolidated`` leaves out a format-3 group's consolidated metadata, unparsed
    (zarr-python's ``use_consolidated=False``).

    >>> from zarrkit.storage import MemoryStore
    >>> find_node(MemoryStore({".zgroup": b'{"zarr_format": 2}'}), "").kind
    'group'
    """
    if zarr_format not in (None, 2, 3):
        raise MetadataError(f"zarr_format must be 2 or 3, found {zarr_format!r}")
    # key_prefix(path) + name is join_path(path, name), without its generator: opening the
    # members of a consolidated group runs this once per member.
    prefix = key_prefix(path)
    if consolidated is not None:
        return _consolidated_node(path, prefix, consolidated, zarr_format)
    v3_key, array_key, group_key = prefix + ZARR_JSON, prefix + ZARRAY, prefix + ZGROUP
    keys: list[str] = []
    if zarr_format in (None, 3):
        keys.append(v3_key)
    if zarr_format in (None, 2):
        keys += [array_key, group_key]
    omit: str | None = None
    if without_consolidated:
        omit = CONSOLIDATED_MEMBER
    documents = dict(zip(keys, _documents(store, keys, omit), strict=True))
    v3_doc = documents.get(v3_key)
    if v3_doc is not None:
        return _found_v3(path, v3_doc, v3_key)
    array_doc = documents.get(array_key)
    group_doc = documents.get(group_key)
    if array_doc is None and group_doc is None:
        return None
    if array_doc is not None:
        return FoundNode(path, "array", 2, ArrayMetadataV2.from_json(array_doc, key=array_key),
                         None)
    return FoundNode(path, "group", 2, GroupMetadataV2.from_json(group_doc or {}, key=group_key),
                     None)


def _consolidated_node(path: str, prefix: str, consolidated: Consolidated,
                       zarr_format: int | None) -> FoundNode | None:
    """:func:`find_node` from consolidated metadata (the members of a consolidated group,
    one call each): the same documents looked up directly, no store read to batch."""
    if zarr_format != 2:
        document = consolidated.get(prefix + ZARR_JSON)
        if document is not None:
            return _found_v3(path, dict(document), prefix + ZARR_JSON)
        if zarr_format == 3:
            return None
    array_doc = consolidated.get(prefix + ZARRAY)
    group_doc = consolidated.get(prefix + ZGROUP) if array_doc is None else None
    if array_doc is None and group_doc is None:
        return None
    attributes = dict(consolidated.get(prefix + ZATTRS) or {})
    if array_doc is not None:
        metadata = ArrayMetadataV2.from_json(dict(array_doc), key=prefix + ZARRAY)
        return FoundNode(path, "array", 2, metadata, attributes)
    group = GroupMetadataV2.from_json(dict(group_doc or {}), key=prefix + ZGROUP)
    return FoundNode(path, "group", 2, group, attributes)


def read_values(store: Store, keys: Sequence[str]) -> list[bytes | None]:
    """``store.get_many(keys)``, with large batches split across the thread pool: a local
    store then overlaps the reads (file opens release the GIL), and a remote one gets
    several requests in flight.

    >>> from zarrkit.storage import MemoryStore
    >>> read_values(MemoryStore({"a": b"1"}), ["a", "b"])
    [b'1', None]
    """
    if len(keys) < _PARALLEL_READ_KEYS or store.reads_many_in_parallel:
        return list(store.get_many(keys))
    return parallel_batches(store.get_many, keys)


# Below this many keys a batch is read in the calling thread: handing it to the pool
# costs more than the reads (a missing file costs ~5 us to probe).
_PARALLEL_READ_KEYS = 64


def node_from_values(path: str, v3_raw: bytes | None, array_raw: bytes | None,
                     group_raw: bytes | None, attributes_raw: bytes | None
                     ) -> FoundNode | None:
    """The node that the raw ``zarr.json``, ``.zarray``, ``.zgroup`` and ``.zattrs``
    values at ``path`` describe, parsed as :func:`find_node` parses them, or None.

    Format 2 attributes come parsed when valid; a malformed ``.zattrs`` is left for the
    node's attributes to read (and report) on first access, as when opened alone.

    >>> node_from_values("a", None, None, b'{"zarr_format": 2}', b'{"x": 1}').attributes
    {'x': 1}
    """
    keys = _node_keys(path)
    # Every document present is parsed, as find_node does, so a malformed one fails alike.
    v3_doc, array_doc, group_doc = (
        None if raw is None else load_json_object(raw, key=key)
        for key, raw in zip(keys, (v3_raw, array_raw, group_raw), strict=True))
    if v3_doc is not None:
        return _found_v3(path, v3_doc, keys[0])
    if array_doc is None and group_doc is None:
        return None
    attributes: dict[str, Any] | None = {}
    if attributes_raw is not None:
        try:
            attributes = parse_attributes(
                load_json_object(attributes_raw, key=join_path(path, ZATTRS)))
        except MetadataError:
            attributes = None
    if array_doc is not None:
        metadata = ArrayMetadataV2.from_json(array_doc, key=keys[1])
        return FoundNode(path, "array", 2, metadata, attributes)
    group = GroupMetadataV2.from_json(group_doc or {}, key=keys[2])
    return FoundNode(path, "group", 2, group, attributes)


def _found_v3(path: str, document: dict[str, Any], key: str) -> FoundNode:
    metadata = parse_node_v3(document, key)
    kind: NodeKind = "array" if isinstance(metadata, ArrayMetadataV3) else "group"
    return FoundNode(path, kind, 3, metadata, dict(metadata.attributes), document)


def node_kind(
    store: Store, path: str, consolidated: Consolidated | None = None
) -> NodeKind | None:
    """``"array"``, ``"group"`` or None for the node at ``path`` (either format).

    >>> from zarrkit.storage import MemoryStore
    >>> node_kind(MemoryStore(), "x") is None
    True
    """
    keys = _node_keys(path)
    if consolidated is not None:
        present = [consolidated.get(k) for k in keys]
    else:
        present = list(store.get_many(keys))
    return _kind_of(keys[0], *present)


def require_array(
    store: Store, path: str, consolidated: Consolidated | None = None,
    zarr_format: int | None = None,
) -> FoundNode:
    """The array at ``path``, or ArrayNotFoundError.

    >>> from zarrkit.storage import MemoryStore
    >>> require_array(MemoryStore(), "missing")
    Traceback (most recent call last):
    zarrkit.errors.ArrayNotFoundError: no array at path 'missing' (found nothing)
    """
    node = find_node(store, path, consolidated, zarr_format)
    if node is None or node.kind != "array":
        what = "a group" if node is not None else "nothing"
        raise ArrayNotFoundError(f"no array at path {path!r} (found {what})")
    return node


def require_group(
    store: Store, path: str, consolidated: Consolidated | None = None,
    zarr_format: int | None = None, *, without_consolidated: bool = False,
) -> FoundNode:
    """The group at ``path``, or GroupNotFoundError (``without_consolidated``: see
    :func:`find_node`).

    >>> from zarrkit.storage import MemoryStore
    >>> require_group(MemoryStore({".zgroup": b"[1]"}), "")
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: .zgroup: expected a JSON object, found list
    """
    node = find_node(store, path, consolidated, zarr_format,
                     without_consolidated=without_consolidated)
    if node is None or node.kind != "group":
        what = "an array" if node is not None else "nothing"
        raise GroupNotFoundError(f"no group at path {path!r} (found {what})")
    return node


def stored_metadata(store: Store, key: str, zarr_format: int) -> Any:
    """The metadata document at ``key`` as stored now, parsed (a handle's own copy may be
    older than what other handles wrote since). NodeNotFoundError if it is gone.

    >>> from zarrkit.storage import MemoryStore
    >>> s = MemoryStore({"zarr.json": b'{"zarr_format": 3, "node_type": "group"}'})
    >>> stored_metadata(s, "zarr.json", 3)
    GroupMetadataV3(attributes={}, consolidated_metadata=None, extra={})
    """
    raw = store.get(key)
    if raw is None:
        raise NodeNotFoundError(f"{key!r} was deleted by another writer")
    document = load_json_object(raw, key=key)
    if zarr_format == 3:
        return parse_node_v3(document, key)
    return ArrayMetadataV2.from_json(document, key=key)


def group_document(zarr_format: int, attributes: dict[str, Any] | None = None) -> bytes:
    """The serialised metadata of a new group.

    >>> group_document(2)
    b'{\\n  "zarr_format": 2\\n}'
    """
    if zarr_format == 3:
        return dump_json(GroupMetadataV3(attributes=dict(attributes or {})).to_json())
    return dump_json(GroupMetadataV2().to_json())


def group_metadata_key(path: str, zarr_format: int) -> str:
    """The key holding a group's metadata document.

    >>> group_metadata_key("a", 3), group_metadata_key("a", 2)
    ('a/zarr.json', 'a/.zgroup')
    """
    return join_path(path, ZARR_JSON if zarr_format == 3 else ZGROUP)


def _check_store_writable(store: Store, path: str, kind: NodeKind) -> None:
    if store.read_only:
        raise ReadOnlyError(f"cannot create {kind} {path or '/'!r}: {store!r} is read-only")


@dataclass(frozen=True)
class _Site:
    """What a new node at some path finds in the store, learnt from one batched read.

    ``missing``: ancestors with no group metadata (implicit groups in v3; creating them is
    idempotent, so two workers creating siblings at once both succeed). ``existing``: the
    kind of the node already at the path. ``snapshots``: whether an ancestor's
    ``zarr.json`` holds consolidated metadata that the creation must update.
    """

    missing: list[str]
    existing: NodeKind | None
    snapshots: bool


def _node_keys(path: str) -> tuple[str, str, str]:
    return join_path(path, ZARR_JSON), join_path(path, ZARRAY), join_path(path, ZGROUP)


def _inspect_site(store: Store, path: str, zarr_format: int) -> _Site:
    """Check that no ancestor of ``path`` is an array and that no ancestor holds a link
    named like the next step towards ``path`` (a new node would hide it), and see what is
    there: the metadata keys of the ancestors and of the node itself are read in a single
    ``get_many`` (format 2 adds the ancestors' ``.zattrs``, for their links, and
    ``.zmetadata``, which the creation must update)."""
    candidates = ancestors(path)
    extra = (ZATTRS, ZMETADATA) if zarr_format == 2 else ()
    width = 3 + len(extra)
    keys = [k for p in candidates for k in (*_node_keys(p), *(join_path(p, e) for e in extra))]
    keys += _node_keys(path)
    values = store.get_many(keys)
    missing = []
    snapshots = False
    steps = path.split("/")
    for i, ancestor in enumerate(candidates):
        v3_raw, array_raw, group_raw, *more = values[width * i:width * (i + 1)]
        is_array = array_raw is not None
        attributes: Any = None
        if v3_raw is not None:
            document = load_json_object(v3_raw, key=keys[width * i])
            is_array = is_array or document.get("node_type") == "array"
            snapshots = snapshots or isinstance(document.get("consolidated_metadata"), dict)
            attributes = document.get("attributes")
        elif more:
            attributes_raw, zmetadata_raw = more
            snapshots = snapshots or zmetadata_raw is not None
            if attributes_raw is not None:
                attributes = load_json_object(attributes_raw, key=keys[width * i + 3])
        if is_array:
            raise ContainsNodeError(
                f"cannot create a node under {path!r}: {ancestor or '/'!r} is an array"
            )
        if v3_raw is None and group_raw is None:
            missing.append(ancestor)
        _refuse_link_name(attributes, steps[i], ancestor)
    existing = _kind_of(keys[-3], *values[-3:])
    return _Site(missing, existing, snapshots)


def _refuse_link_name(attributes: Any, name: str, group_path: str) -> None:
    where = link_attribute_in(attributes) if isinstance(attributes, dict) else None
    links = attributes.get(where) if where is not None else None
    if isinstance(links, list) and any(
            isinstance(link, dict) and link.get("name") == name for link in links):
        raise ContainsNodeError(
            f"{name!r} is a link of group {'/' + group_path!r}; delete the link first")


def _kind_of(v3_key: str, v3_raw: Any, array_raw: Any, group_raw: Any) -> NodeKind | None:
    """The kind of node that these metadata values (raw or parsed) describe, if any."""
    if v3_raw is not None:
        document = v3_raw if isinstance(v3_raw, dict) else load_json_object(v3_raw, key=v3_key)
        return "array" if document.get("node_type") == "array" else "group"
    if array_raw is not None:
        return "array"
    return "group" if group_raw is not None else None


def _clear_for_new_node(store: Store, path: str, existing: NodeKind | None, *,
                        overwrite: bool) -> None:
    if existing is None:
        return
    if not overwrite:
        # zarr-python's classes, named after what is there (both are ContainsNodeErrors).
        error = ContainsArrayError if existing == "array" else ContainsGroupError
        raise error(f"{existing} already exists at path {path or '/'!r}")
    delete_node(store, path)


def delete_node(store: Store, path: str) -> None:
    """Delete the node at ``path`` and everything below it.

    >>> from zarrkit.storage import MemoryStore
    >>> s = MemoryStore(); create_group_node(s, "a/b", zarr_format=2); delete_node(s, "a")
    >>> sorted(s.list())
    ['.zgroup']
    """
    store.delete_prefix(key_prefix(path))
    if path:
        record_changes(store, {path: None})
        record_documents_v2(store, {}, removed=[path])


def create_group_node(
    store: Store,
    path: str,
    attributes: dict[str, Any] | None = None,
    *,
    zarr_format: int,
    overwrite: bool = False,
) -> None:
    """Write a group (and any missing ancestor groups) at ``path``."""
    _check_store_writable(store, path, "group")
    if zarr_format == 3:
        group_json = GroupMetadataV3(attributes=dict(attributes or {})).to_json()
    else:
        group_json = GroupMetadataV2().to_json()
    attributes_doc = dump_json(attributes) if attributes and zarr_format == 2 else None
    _write_node(store, path, group_metadata_key(path, zarr_format), group_json,
                attributes_doc, zarr_format=zarr_format, overwrite=overwrite)


def _write_node(store: Store, path: str, key: str, document: dict[str, Any],
                attributes_doc: bytes | None, *, zarr_format: int, overwrite: bool) -> None:
    """Write a new node's metadata ``document`` under ``key`` (and the v2 attributes) with
    its missing ancestor groups, after every check has passed.

    Documents are created only where none exists (``set_if_not_exists``), as zarr-python
    does: an implicit ancestor never replaces a group that another writer created
    meanwhile with its attributes, and of two writers creating the same node without
    ``overwrite`` one wins and the other gets ContainsNodeError, never a silent loss.
    """
    encoded = dump_json(document)
    site = _inspect_site(store, path, zarr_format)
    _clear_for_new_node(store, path, site.existing, overwrite=overwrite)
    if site.missing:
        empty_group = group_document(zarr_format)
        for ancestor in site.missing:  # top down, so a parent is there before its child
            store.set_if_not_exists(group_metadata_key(ancestor, zarr_format), empty_group)
    if overwrite:
        store.set(key, encoded)
    elif not store.set_if_not_exists(key, encoded):
        raise ContainsNodeError(
            f"a node was created at path {path or '/'!r} by another writer meanwhile")
    if attributes_doc is not None:
        store.set(join_path(path, ZATTRS), attributes_doc)
    # Only ancestors can hold a format-3 snapshot (the read above saw them all): with
    # none there, skip record_changes' reads.
    if zarr_format == 3 and site.snapshots:
        _record_created(store, site.missing, path, document)
    elif zarr_format == 2 and site.snapshots:
        documents: dict[str, dict[str, Any] | None] = {
            group_metadata_key(ancestor, 2): GroupMetadataV2().to_json()
            for ancestor in site.missing}
        documents[key] = document
        if attributes_doc is not None:
            attributes_key = join_path(path, ZATTRS)
            documents[attributes_key] = load_json_object(attributes_doc, key=attributes_key)
        record_documents_v2(store, documents)


def _record_created(store: Store, missing: list[str], path: str,
                    document: dict[str, Any]) -> None:
    empty = GroupMetadataV3().to_json()
    changes: dict[str, dict[str, Any] | None] = {p: empty for p in missing if p}
    if path:
        changes[path] = document
    record_changes(store, changes)


def array_metadata_key(path: str, zarr_format: int) -> str:
    """The key holding an array's metadata document.

    >>> array_metadata_key("", 2)
    '.zarray'
    """
    # key_prefix(path) + name is join_path(path, name); every Array object asks twice.
    return key_prefix(path) + (ZARR_JSON if zarr_format == 3 else ZARRAY)


def create_array_node(
    store: Store,
    path: str,
    metadata: Any,
    attributes: dict[str, Any] | None = None,
    *,
    overwrite: bool = False,
) -> None:
    """Write array metadata at ``path`` (and any missing ancestor groups). For format 3
    the attributes live in ``metadata`` itself.

    One batched read checks the ancestors and the path; one ``set_many`` writes the
    documents.

    >>> from zarrkit.hierarchy.creation import array_metadata
    >>> from zarrkit.storage import MemoryStore
    >>> store = MemoryStore()
    >>> create_array_node(store, "g/x", array_metadata(zarr_format=2, shape=(2,), dtype="u1"))
    >>> sorted(store.list())
    ['.zgroup', 'g/.zgroup', 'g/x/.zarray']
    """
    _check_store_writable(store, path, "array")
    zarr_format = metadata.zarr_format
    attributes_doc = dump_json(attributes) if attributes and zarr_format == 2 else None
    _write_node(store, path, array_metadata_key(path, zarr_format), metadata.to_json(),
                attributes_doc, zarr_format=zarr_format, overwrite=overwrite)


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


def store_url(store: Store) -> str:
    """The URL that names ``store`` in :class:`StorePath`, written as zarr-python writes
    its stores' (``memory://<id>``, ``file://dir`` and ``zip://a.zip`` as given); a remote
    store's own URL; else ``<kind>://<location>``.

    >>> from zarrkit.storage import MemoryStore
    >>> store_url(MemoryStore()).startswith("memory://")
    True
    """
    from zarrkit.storage.directory import DirectoryStore
    from zarrkit.storage.memory import MemoryStore
    from zarrkit.storage.zip import ZipStore

    if isinstance(store, MemoryStore):
        return f"memory://{id(store)}"
    if isinstance(store, DirectoryStore):
        return f"file://{store.given_root.as_posix()}"
    if isinstance(store, ZipStore):
        return f"zip://{store.path.as_posix()}"
    url = getattr(store, "url", None)
    if isinstance(url, str):
        return url.rstrip("/")
    location = getattr(store, "path", None)
    kind = type(store).__name__.removesuffix("Store").lower()
    return f"{kind}://{location if location is not None else id(store)}"


@dataclass(frozen=True, eq=False)
class StorePath:
    """A node's place: its store and its path in it (zarr-python's ``StorePath``, as
    ``array.store_path`` and ``group.store_path`` give it). ``str()`` is the store's URL
    followed by the path; two are equal when their stores are (the same object, or equal
    stores such as two handles on one directory) and their paths are.

    >>> import tempfile
    >>> from zarrkit.storage import DirectoryStore
    >>> top = tempfile.mkdtemp()
    >>> p = StorePath(DirectoryStore(top), "a/b")
    >>> str(p) == f"file://{top}/a/b", p == StorePath(DirectoryStore(top), "a/b")
    (True, True)
    >>> str(p / "c") == f"file://{top}/a/b/c"
    True
    """

    store: Store
    path: str = ""

    def __str__(self) -> str:
        base = store_url(self.store)
        return f"{base}/{self.path}" if self.path else base

    def __repr__(self) -> str:
        return f"StorePath({type(self.store).__name__}, {str(self)!r})"

    def __truediv__(self, other: str) -> StorePath:
        return StorePath(self.store, join_path(self.path, other))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StorePath) or other.path != self.path:
            return False
        return other.store is self.store or bool(other.store == self.store)

    def __hash__(self) -> int:
        return hash(self.path)
