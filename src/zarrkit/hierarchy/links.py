"""Links between nodes: the hdmf-zarr ``zarr_link`` convention (NWB's Zarr backend).

Zarr has no links, so hdmf-zarr keeps them in a reserved group attribute, ``zarr_link``: a
list of JSON objects, one per link, each holding the link's ``name``, the ``source`` store
of its target and the target's absolute ``path`` in that store, optionally with the
target's ``object_id`` and the ``object_id`` of the source's root group
(``source_object_id``). The source is ``"."`` for the store holding the link, else a path
relative to that store's *location*, e.g. ``"../other.zarr"`` for a sibling store.

A store's location is the path that hdmf-zarr joins a source to: a directory store's root
directory, a ZIP store's archive file (so ``"../other.zarr"`` is a sibling of
``data.zarr`` as of ``data.zip``). An in-memory store has no location: its links can only
point inside it.

Links are plain JSON, so any Zarr implementation reads such a store; zarrkit's groups
follow them on lookup (:meth:`Group.__getitem__ <zarrkit.hierarchy.group.Group>`).

>>> import zarrkit as zk
>>> root = zk.group({})
>>> dev = root.create_group("devices/dev", attributes={"object_id": "d-1"})
>>> root.create_group("eg").create_link("device", dev)
Link(name='device', source='.', path='/devices/dev', object_id='d-1', source_object_id=None)
>>> root["eg/device"] == dev
True
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zarrkit.errors import LinkError, MetadataError, NodeNotFoundError, ZarrkitError
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.nodes import LINK_ATTRIBUTE, find_node
from zarrkit.paths import join_path, normalize_path
from zarrkit.storage.base import Store
from zarrkit.storage.directory import DirectoryStore
from zarrkit.storage.zip import ZipStore

if TYPE_CHECKING:
    from zarrkit.hierarchy.group import Group


#: How many links one lookup may follow before it is taken for a cycle in disguise (the
#: limit Linux puts on symbolic links in one path).
MAX_LINK_HOPS = 40

_OPTIONAL_KEYS = ("object_id", "source_object_id")


@dataclass(frozen=True)
class Link:
    """One entry of a group's ``zarr_link`` attribute.

    ``path`` is the target's absolute path in the ``source`` store (``"."``: the store
    holding the link; else a path relative to that store's location). ``object_id`` and
    ``source_object_id`` are None when unknown (and then absent from the JSON).

    >>> link = Link("device", ".", "/general/devices/dev")
    >>> str(link), link.external
    ('device -> /general/devices/dev', False)
    """

    name: str
    source: str
    path: str
    object_id: str | None = None
    source_object_id: str | None = None

    @property
    def external(self) -> bool:
        """Whether the target lies in another store (``source`` is not ``"."``).

        >>> Link("x", "../other.zarr", "/data").external
        True
        """
        return not _is_same_source(self.source)

    def to_json(self) -> dict[str, str]:
        """The ``zarr_link`` entry: ``name``, ``source``, ``path``, then the object ids
        that are known.

        >>> Link("device", ".", "/devices/dev", object_id="d-1").to_json()
        {'name': 'device', 'source': '.', 'path': '/devices/dev', 'object_id': 'd-1'}
        """
        document = {"name": self.name, "source": self.source, "path": self.path}
        for key in _OPTIONAL_KEYS:
            value = getattr(self, key)
            if value is not None:
                document[key] = value
        return document

    @classmethod
    def from_json(cls, document: Any, *, where: str = LINK_ATTRIBUTE) -> Link:
        """The link that a ``zarr_link`` entry describes; MetadataError (naming ``where``)
        if it is not one. A missing ``source`` is ``"."``; other keys are ignored.

        >>> Link.from_json({"name": "d", "path": "/devices/dev", "source": "."})
        Link(name='d', source='.', path='/devices/dev', object_id=None, source_object_id=None)
        >>> Link.from_json({"name": "a/b", "path": "/x"})
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: zarr_link: invalid link name 'a/b'
        """
        if not isinstance(document, Mapping):
            raise MetadataError(
                f"{where}: a link must be a JSON object, found {type(document).__name__}")
        name, source, path = (document.get(k) for k in ("name", "source", "path"))
        if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
            raise MetadataError(f"{where}: invalid link name {name!r}")
        if source is None:
            source = "."
        if not isinstance(source, str) or not source or "\x00" in source:
            raise MetadataError(f"{where}: link {name!r} has an invalid source {source!r}")
        if not isinstance(path, str):
            raise MetadataError(f"{where}: link {name!r} has an invalid path {path!r}")
        try:
            normalize_path(path)
        except ZarrkitError as error:
            raise MetadataError(f"{where}: link {name!r}: {error}") from None
        ids = []
        for key in _OPTIONAL_KEYS:
            value = document.get(key)
            if value is not None and not isinstance(value, str):
                raise MetadataError(f"{where}: link {name!r} has an invalid {key} {value!r}")
            ids.append(value)
        return cls(name, source, path, *ids)

    def __str__(self) -> str:
        target = self.path if not self.external else f"{self.source}:{self.path}"
        return f"{self.name} -> {target}"


def parse_links(value: Any, *, where: str = LINK_ATTRIBUTE) -> dict[str, Link]:
    """The links of a ``zarr_link`` attribute value (None: no links), by name in stored
    order (of two entries with one name, the last wins, as hdmf-zarr reads them).

    >>> parse_links([{"name": "d", "source": ".", "path": "/dev"}])
    {'d': Link(name='d', source='.', path='/dev', object_id=None, source_object_id=None)}
    >>> parse_links("nope", where="/eg")
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: /eg: zarr_link must be a list of links, found str
    """
    if value is None:
        return {}
    if not isinstance(value, list):
        raise MetadataError(
            f"{where}: {LINK_ATTRIBUTE} must be a list of links, found {type(value).__name__}")
    links = [Link.from_json(entry, where=where) for entry in value]
    return {link.name: link for link in links}


def store_location(store: Store) -> Path | None:
    """The absolute path that external link sources are relative to: a directory store's
    root, a ZIP store's archive; None for a store with no place on disk.

    >>> import tempfile
    >>> from zarrkit.storage import DirectoryStore, MemoryStore
    >>> top = Path(tempfile.mkdtemp())
    >>> store_location(DirectoryStore(top / "a.zarr")) == top / "a.zarr"
    True
    >>> store_location(MemoryStore()) is None
    True
    """
    if isinstance(store, DirectoryStore):
        return store.root
    if isinstance(store, ZipStore):
        return store.path.absolute()
    return None


def relative_source(origin: Store, target: Store) -> str:
    """The ``source`` of a link held in ``origin`` to a node of ``target``: ``"."`` for
    the same store, else ``target``'s location relative to ``origin``'s (POSIX
    separators). LinkError if either store has no location.

    >>> import tempfile
    >>> from zarrkit.storage import DirectoryStore
    >>> top = Path(tempfile.mkdtemp())
    >>> relative_source(DirectoryStore(top / "a.zarr"), DirectoryStore(top / "b.zarr"))
    '../b.zarr'
    """
    if target is origin:
        return "."
    origin_location, target_location = store_location(origin), store_location(target)
    if origin_location is None or target_location is None:
        raise LinkError(
            f"cannot link from {origin!r} to {target!r}: a store with no location on disk "
            f"(a directory or a ZIP archive) holds no links to other stores")
    if origin_location == target_location:
        return "."
    return Path(os.path.relpath(target_location, origin_location)).as_posix()


def open_target(node: Array | Group, source: str, path: str) -> Array | Group:
    """The node at ``path`` (absolute in its store; the leading ``/`` is optional) of the
    store that ``source`` names, relative to the store holding ``node``.

    ``"."`` is ``node``'s own store, read as ``node`` reads it (read-only, consolidated
    metadata); another source is a path relative to the location of ``node``'s store
    (see :func:`store_location`), opened with :func:`zarrkit.open`: read-only when
    ``node`` is, or is in a ZIP archive, else in mode ``r+``. Links met along ``path`` are
    followed. LinkError when the source cannot be opened, the target does not exist, or
    links along the way dangle or form a cycle.

    >>> import zarrkit as zk
    >>> root = zk.group({})
    >>> _ = root.create_array("data/x", shape=(2,), dtype="u1")
    >>> open_target(root["data"], ".", "/data/x").name
    '/data/x'
    >>> open_target(root, ".", "/data/y")
    Traceback (most recent call last):
    zarrkit.errors.LinkError: no array or group at path '/data/y' in source '.'
    """
    segments = _segments(path)
    start = source_root(node, source)
    try:
        return resolve_path(start, segments)
    except LinkError:
        raise
    except NodeNotFoundError as error:
        raise LinkError(
            f"no array or group at path {path!r} in source {source!r}") from error


def resolve_path(start: Array | Group, segments: list[str], *,
                 known_missing: bool = False) -> Array | Group:
    """The node at ``segments`` below ``start``, following the links met on the way (a
    real member wins over a link of the same name). ``known_missing``: the caller already
    knows that no real node lies at the whole path, so it is not looked up again.
    NodeNotFoundError for a plain miss, LinkError for a dangling link or a cycle.

    >>> import zarrkit as zk
    >>> root = zk.group({})
    >>> _ = root.create_group("a/b")
    >>> _ = root.create_link("l", "/a")
    >>> resolve_path(root, ["l", "b"]).name
    '/a/b'
    """
    return _resolve(start, segments, known_missing, _Chain())


def _resolve(start: Array | Group, segments: list[str], known_missing: bool,
             chain: _Chain) -> Array | Group:
    from zarrkit.hierarchy.group import Group

    if not segments:
        return start
    full = "/" + join_path(start.path, *segments)
    if not isinstance(start, Group):
        raise NodeNotFoundError(f"no array or group at path {full[1:]!r}")
    if not known_missing:
        node = start._find_real(full[1:])
        if node is not None:
            return node
    current: Array | Group = start
    followed = False
    for i, segment in enumerate(segments):
        if not isinstance(current, Group):
            raise NodeNotFoundError(
                f"no array or group at path {full[1:]!r}: {current.name!r} is an array")
        child = None
        # Until a link is followed, the last segment completes the whole path, just missed.
        if followed or i < len(segments) - 1:
            child = current._find_real(join_path(current.path, segment))
        if child is None:
            link = lookup_links(current).get(segment)
            if link is None:
                raise NodeNotFoundError(f"no array or group at path {full[1:]!r}")
            child = _follow(current, link, chain)
            followed = True
        current = child
    return current


def lookup_links(group: Group) -> dict[str, Link]:
    """The links of ``group`` for a lookup: as :meth:`Group.links`, except that an
    attributes document that cannot be read at all counts as holding none (a malformed
    ``zarr_link`` value is still a MetadataError).

    >>> import zarrkit as zk
    >>> lookup_links(zk.group({}))
    {}
    """
    try:
        value = group.attrs.get(LINK_ATTRIBUTE)
    except MetadataError:
        return {}
    return parse_links(value, where=f"{LINK_ATTRIBUTE} of group {group.name!r}")


# --- following links ----------------------------------------------------------------------
@dataclass(frozen=True)
class _Chain:
    """The links followed so far by one lookup: identities (to detect cycles) and labels
    (to name them); ``origin`` is the identity of the store the lookup started in."""

    keys: tuple[Hashable, ...] = ()
    labels: tuple[str, ...] = ()
    origin: Hashable = None

    def push(self, key: Hashable, label: str, store_key: Hashable) -> _Chain:
        origin = self.origin if self.keys else store_key
        return _Chain((*self.keys, key), (*self.labels, label), origin)


def _store_key(store: Store) -> Hashable:
    location = store_location(store)
    return ("memory", id(store)) if location is None else str(location)


def _follow(group: Group, link: Link, chain: _Chain) -> Array | Group:
    """The target of ``group``'s ``link``, as part of the lookup that ``chain`` records."""
    store_key = _store_key(group.store)
    key = (store_key, group.path, link.name)
    label = "/" + join_path(group.path, link.name)
    if chain.keys and store_key != chain.origin:
        label = f"{store_location(group.store)}:{label}"
    if key in chain.keys:
        first = chain.keys.index(key)
        cycle = " -> ".join((*chain.labels[first:], label))
        raise LinkError(f"links form a cycle: {cycle}")
    if len(chain.keys) >= MAX_LINK_HOPS:
        raise LinkError(f"more than {MAX_LINK_HOPS} links to follow from "
                        f"{chain.labels[0]!r} (at {label!r})")
    target = link.path if not link.external else f"{link.source}:{link.path}"
    try:
        segments = _segments(link.path)
        start = source_root(group, link.source)
    except ZarrkitError as error:
        raise LinkError(f"link {label!r} -> {target!r}: {error}") from error
    try:
        return _resolve(start, segments, False, chain.push(key, label, store_key))
    except LinkError:
        raise
    except NodeNotFoundError as error:
        raise LinkError(f"dangling link {label!r} -> {target!r}: {error}") from error


def _segments(path: str) -> list[str]:
    normalized = normalize_path(path)
    return normalized.split("/") if normalized else []


def _is_same_source(source: str) -> bool:
    return source == "." or os.path.normpath(source) == "."


def source_root(node: Array | Group, source: str) -> Array | Group:
    """The root node of the store that ``source`` names, relative to the store holding
    ``node`` (see :func:`open_target`); LinkError if it cannot be opened.

    >>> import zarrkit as zk
    >>> root = zk.group({}, attributes={"object_id": "f-1"})
    >>> source_root(root.create_group("a/b"), ".").attrs["object_id"]
    'f-1'
    """
    store = node.store
    if _is_same_source(source):
        return _same_store_root(node)
    base = store_location(store)
    if base is None:
        raise LinkError(f"cannot open source {source!r}: {store!r} has no location on "
                        f"disk, so it holds no links to other stores")
    location = Path(os.path.normpath(os.path.join(base, source)))
    if location == base:
        return _same_store_root(node)
    from zarrkit.api import open as open_node

    # A ZIP archive opened for writing takes a lock and must be closed: read those only.
    read_only = node.read_only or location.suffix == ".zip"
    try:
        return open_node(location, mode="r" if read_only else "r+")
    except (OSError, ZarrkitError) as error:
        raise LinkError(f"cannot open source {source!r} ({location}): {error}") from error


def _same_store_root(node: Array | Group) -> Array | Group:
    from zarrkit.hierarchy.group import Group, node_from_found

    store = node.store
    consolidated = node._consolidated if isinstance(node, Group) else None
    found = find_node(store, "", consolidated)
    if found is None and consolidated is not None:
        # The snapshot of a subgroup's consolidated metadata does not cover the root.
        consolidated = None
        found = find_node(store, "")
    if found is None:
        raise LinkError(f"source '.' has no root node: {store!r}")
    return node_from_found(store, found, read_only=node.read_only, consolidated=consolidated)


def root_object_id(store: Store) -> str | None:
    """The ``object_id`` attribute of ``store``'s root node, if it has one (hdmf-zarr's
    ``source_object_id`` of links into that store).

    >>> import zarrkit as zk
    >>> root_object_id(zk.group({}, attributes={"object_id": "f-1"}).store)
    'f-1'
    """
    from zarrkit.hierarchy.group import node_from_found

    found = find_node(store, "")
    if found is None:
        return None
    return object_id_of(node_from_found(store, found, read_only=True))


def object_id_of(node: Array | Group) -> str | None:
    """The ``object_id`` attribute of ``node`` when it is a string, else None.

    >>> import zarrkit as zk
    >>> object_id_of(zk.group({}, attributes={"object_id": "o-1"})), object_id_of(zk.group({}))
    ('o-1', None)
    """
    try:
        value = node.attrs.get("object_id")
    except MetadataError:
        return None
    return value if isinstance(value, str) else None
