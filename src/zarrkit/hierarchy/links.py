"""Links between nodes: hdmf-zarr's link conventions (NWB's Zarr backend).

Zarr has no links, so hdmf-zarr keeps them in a reserved group attribute, a list of JSON
objects, one per link, each holding the link's ``name``, the ``source`` store of its
target and the target's absolute ``path`` in that store. The source is ``"."`` for the
store holding the link, else a path relative to that store's *location*, e.g.
``"../other.zarr"`` for a sibling store (an external link). Two conventions name it:

* **hdmf-zarr 0.13** (Zarr v2 files): the attribute ``zarr_link``, whose entries may also
  hold the target's ``object_id`` and the ``object_id`` of the source's root group
  (``source_object_id``);
* **hdmf-zarr 0.14** (Zarr v3 files): the attribute ``_LINKS``, entries
  ``{"source", "path", "name"}``. hdmf-zarr 0.14 reads a group's ``zarr_link`` only when
  it has no ``_LINKS``; zarrkit reads links the same way, in files of either format.

Which convention a file uses is decided in one place, :func:`convention_of` (by the Zarr
format: hdmf-zarr 0.13 wrote only v2, 0.14 writes only v3), and :class:`Convention`
names the reserved attributes of each, for this module and for
:mod:`zarrkit.references` and :mod:`zarrkit.hdmf`. :meth:`Group.create_link
<zarrkit.hierarchy.group.Group.create_link>` appends to the link attribute a group
already has, else to its file's convention's one.

A store's location is the path that hdmf-zarr joins a source to: a directory store's root
directory, a ZIP store's archive file (so ``"../other.zarr"`` is a sibling of
``data.zarr`` as of ``data.zip``). An in-memory store has no location: its links can only
point inside it.

Links are plain JSON, so any Zarr implementation reads such a store; zarrkit's groups
follow them on lookup (:meth:`Group.__getitem__ <zarrkit.hierarchy.group.Group>`).

>>> import zarrkit as zk
>>> root = zk.group({}, zarr_format=2)
>>> dev = root.create_group("devices/dev", attributes={"object_id": "d-1"})
>>> root.create_group("eg").create_link("device", dev)
Link(name='device', source='.', path='/devices/dev', object_id='d-1', source_object_id=None)
>>> root["eg/device"] == dev
True
>>> v3 = zk.group({}, zarr_format=3)
>>> _ = v3.create_group("devices/dev")
>>> _ = v3.create_group("eg").create_link("device", "/devices/dev")
>>> v3["eg"].attrs["_LINKS"]
[{'source': '.', 'path': '/devices/dev', 'name': 'device'}]
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zarrkit.errors import (
    ContainsNodeError,
    LinkError,
    MetadataError,
    NodeNotFoundError,
    ZarrkitError,
)
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.nodes import (
    LINK_ATTRIBUTE,
    LINKS_ATTRIBUTE_V3,
    find_node,
    link_attribute_in,
)
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
class Convention:
    """One of hdmf-zarr's storage conventions: the reserved attributes it writes.

    ``link_attribute`` holds a group's links; ``dtype_attribute`` a dataset's hdmf dtype
    (``zarr_dtype``: every dataset, a compound's fields included; ``_DTYPE``: every
    dataset but compounds, whose fields the v3 data type states);
    ``reference_dtype`` is its value on a dataset of object references;
    ``reference_fields_attribute`` names a compound's reference fields (None: its
    ``zarr_dtype`` lists them); ``reference_key`` is the key of a reference attribute
    (``{"_REFERENCE": {...}}``; None: ``{"value": {...}, "zarr_dtype": "object"}``);
    ``scalar_shape`` the shape of a scalar dataset (0.13 marks its ``(1,)`` with
    ``zarr_dtype: "scalar"``).

    >>> HDMF_ZARR_014.link_attribute, HDMF_ZARR_014.reference_dtype
    ('_LINKS', 'object_reference')
    """

    name: str
    zarr_format: int
    link_attribute: str
    dtype_attribute: str
    reference_dtype: str
    reference_fields_attribute: str | None
    reference_key: str | None
    scalar_shape: tuple[int, ...]

    @property
    def link_keys(self) -> tuple[str, ...]:
        """The keys of a link entry this convention writes (``name``, ``source``,
        ``path``, in its order; 0.13 adds the object ids that are known).

        >>> HDMF_ZARR_014.link_keys
        ('source', 'path', 'name')
        """
        return ("name", "source", "path") if self.zarr_format == 2 else (
            "source", "path", "name")


#: hdmf-zarr 0.13's convention (zarr-python 2; the Zarr v2 files it wrote).
HDMF_ZARR_013 = Convention("hdmf-zarr 0.13", 2, LINK_ATTRIBUTE, "zarr_dtype", "object",
                           None, None, (1,))
#: hdmf-zarr 0.14's convention (zarr-python 3; it writes Zarr v3 files only).
HDMF_ZARR_014 = Convention("hdmf-zarr 0.14", 3, LINKS_ATTRIBUTE_V3, "_DTYPE",
                           "object_reference", "_REFERENCE_FIELDS", "_REFERENCE", ())


def convention_for(zarr_format: int) -> Convention:
    """The convention of files in ``zarr_format``: hdmf-zarr 0.13 wrote only Zarr v2,
    0.14 writes only Zarr v3.

    >>> convention_for(2).name
    'hdmf-zarr 0.13'
    """
    if zarr_format == 2:
        return HDMF_ZARR_013
    if zarr_format == 3:
        return HDMF_ZARR_014
    raise ValueError(f"zarr_format must be 2 or 3, found {zarr_format!r}")


def convention_of(node: Array | Group) -> Convention:
    """The hdmf-zarr convention of the file holding ``node``, the one that zarrkit writes
    there: hdmf-zarr 0.13's in a Zarr v2 file, 0.14's in a v3 one (a new v3 file gets
    0.14's). Both are read in files of either format (older zarrkit wrote 0.13's
    attributes in v3 files, and hdmf-zarr 0.14 reads those too).

    >>> import zarrkit as zk
    >>> convention_of(zk.group({}, zarr_format=3)).link_attribute
    '_LINKS'
    """
    return convention_for(node.zarr_format)


@dataclass(frozen=True)
class Link:
    """One entry of a group's link attribute (``zarr_link`` or ``_LINKS``).

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

    def to_json(self, convention: Convention | None = None) -> dict[str, str]:
        """The link entry in ``convention`` (hdmf-zarr 0.13's by default): for 0.13,
        ``name``, ``source``, ``path``, then the object ids that are known; for 0.14,
        ``source``, ``path`` and ``name`` only, as hdmf-zarr 0.14 writes them.

        >>> Link("device", ".", "/devices/dev", object_id="d-1").to_json()
        {'name': 'device', 'source': '.', 'path': '/devices/dev', 'object_id': 'd-1'}
        >>> Link("device", ".", "/devices/dev", object_id="d-1").to_json(HDMF_ZARR_014)
        {'source': '.', 'path': '/devices/dev', 'name': 'device'}
        """
        convention = convention or HDMF_ZARR_013
        document = {key: getattr(self, key) for key in convention.link_keys}
        if convention.zarr_format == 3:
            return document
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


def parse_links(value: Any, *, where: str = LINK_ATTRIBUTE,
                attribute: str = LINK_ATTRIBUTE) -> dict[str, Link]:
    """The links of a link attribute value (``zarr_link`` or ``_LINKS``, named by
    ``attribute``; None: no links), by name in stored order (of two entries with one
    name, the last wins, as hdmf-zarr reads them).

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
            f"{where}: {attribute} must be a list of links, found {type(value).__name__}")
    links = [Link.from_json(entry, where=where) for entry in value]
    return {link.name: link for link in links}


def read_links(attributes: Mapping[str, Any], group_name: str) -> dict[str, Link]:
    """The links of the group named ``group_name`` whose attributes are ``attributes``:
    those of its ``_LINKS`` attribute when it has one, else of its ``zarr_link`` (as
    hdmf-zarr 0.14 reads them), by name in stored order. MetadataError (naming the
    attribute and the group) for a malformed value.

    >>> read_links({"_LINKS": [{"source": ".", "path": "/d", "name": "d"}],
    ...             "zarr_link": [{"name": "old", "path": "/o"}]}, "/eg")
    {'d': Link(name='d', source='.', path='/d', object_id=None, source_object_id=None)}
    """
    attribute = link_attribute_in(attributes)
    if attribute is None:
        return {}
    return parse_links(attributes[attribute], where=f"{attribute} of group {group_name!r}",
                       attribute=attribute)


def add_link(attributes: Mapping[str, Any], link: Link, convention: Convention,
             group_name: str) -> tuple[dict[str, Any], Link]:
    """``attributes`` (a group's, as stored now) with ``link`` appended to the link
    attribute the group has (the one :func:`read_links` reads), else to
    ``convention``'s, in the form of that attribute's convention; and the link as
    stored (0.14's entries hold no object ids). ContainsNodeError if the group has a
    link of that name.

    >>> add_link({"_LINKS": []}, Link("d", ".", "/dev", "o-1"), HDMF_ZARR_013, "/g")
    ({'_LINKS': [{'source': '.', 'path': '/dev', 'name': 'd'}]}, Link(name='d', \
source='.', path='/dev', object_id=None, source_object_id=None))
    """
    attribute = link_attribute_in(attributes) or convention.link_attribute
    if link.name in read_links(attributes, group_name):
        raise ContainsNodeError(f"group {group_name!r} already has a link {link.name!r}")
    entry = link.to_json(HDMF_ZARR_014 if attribute == LINKS_ATTRIBUTE_V3 else HDMF_ZARR_013)
    return ({**attributes, attribute: [*(attributes.get(attribute) or []), entry]},
            Link.from_json(entry))


def remove_link(attributes: Mapping[str, Any], name: str, group_name: str) -> dict[str, Any]:
    """``attributes`` (a group's, as stored now) without its link ``name`` (the link
    attribute goes when its last link does); NodeNotFoundError if it has no such link.

    >>> remove_link({"_LINKS": [{"source": ".", "path": "/d", "name": "d"}], "x": 1},
    ...             "d", "/g")
    {'x': 1}
    """
    attribute = link_attribute_in(attributes)
    if attribute is None or name not in read_links(attributes, group_name):
        raise NodeNotFoundError(f"group {group_name!r} has no link {name!r}")
    kept = [entry for entry in attributes[attribute] or [] if entry.get("name") != name]
    rest = {k: v for k, v in attributes.items() if k != attribute}
    return {**rest, attribute: kept} if kept else rest


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
    (see :func:`store_location`), opened read-only with :func:`zarrkit.open` whatever
    ``node``'s mode (a link never writes, and never creates a store: a source that does
    not exist is a LinkError). Links met along ``path`` are followed. LinkError when the
    source cannot be opened, the target does not exist, or links along the way dangle or
    form a cycle.

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
    ``_LINKS`` or ``zarr_link`` value is still a MetadataError).

    >>> import zarrkit as zk
    >>> lookup_links(zk.group({}))
    {}
    """
    try:
        attributes = group.attrs.asdict()
    except MetadataError:
        return {}
    return read_links(attributes, group.name)


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
    # A link is data from the file, which may name any path (absolute ones too): following
    # it must never create or change a store there, so the source must already exist and
    # is opened read-only, whatever the mode of the store holding the link.
    if not os.path.exists(location):  # False, not an error, for a NUL or too long a name
        raise LinkError(f"cannot open source {source!r} ({location}): no such file or "
                        f"directory")
    from zarrkit.api import open as open_node

    try:
        return open_node(location, mode="r")
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
