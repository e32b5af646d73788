"""The Group: a node holding arrays and other groups.

A group may also hold links (hdmf-zarr's ``_LINKS`` or ``zarr_link`` attribute, see
:mod:`zarrkit.hierarchy.links`): lookups follow them when no real member has the name,
while ``keys()``, ``members()`` and iteration list real members only, as any Zarr
implementation sees them; ``links()`` lists the links.

>>> import zarrkit as zk
>>> root = zk.group({})
>>> _ = root.create_array("a/x", shape=(3,), dtype="i4")
>>> _ = root.create_link("alias", "/a")
>>> sorted(root), "a/x" in root, root["alias/x"].name
(['a'], True, '/a/x')
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from zarrkit.concurrency import chunk_lock
from zarrkit.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    ContainsNodeError,
    GroupNotFoundError,
    InvalidKeyError,
    LinkError,
    MetadataError,
    NodeNotFoundError,
    ReadOnlyError,
    UnsupportedOperationError,
)
from zarrkit.hierarchy.accessors import READ_CONFIG_KEYS
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.attributes import Attributes, Edit
from zarrkit.hierarchy.consolidated import record_changes, record_documents_v2
from zarrkit.hierarchy.creation import array_metadata
from zarrkit.hierarchy.info import GroupInfo
from zarrkit.hierarchy.links import (
    Link,
    add_link,
    convention_of,
    object_id_of,
    read_links,
    relative_source,
    remove_link,
    resolve_path,
    root_object_id,
    source_root,
    store_location,
)
from zarrkit.hierarchy.nodes import (
    DEFAULT,
    METADATA_DOCUMENT_NAMES,
    ZARR_JSON,
    Consolidated,
    FoundNode,
    StorePath,
    create_array_node,
    create_group_node,
    delete_node,
    find_node,
    group_metadata_key,
    node_from_values,
    node_kind,
    read_values,
    require_group,
    store_url,
    stored_metadata,
)
from zarrkit.metadata.jsonio import dump_json, load_json_object
from zarrkit.metadata.v2 import ZARRAY, ZATTRS, ZGROUP
from zarrkit.paths import check_node_name, join_path, key_prefix, normalize_path
from zarrkit.storage.base import Store

# The documents node_from_values takes for a member, in find_node's order of precedence,
# and those read for a member of a v3 and of a v2 group.
_MEMBER_KEYS = (ZARR_JSON, ZARRAY, ZGROUP, ZATTRS)
_MEMBER_KEYS_V3 = (ZARR_JSON,)
_MEMBER_KEYS_V2 = (ZARRAY, ZGROUP, ZATTRS)


class Group:
    """A Zarr group: a mapping from member names to arrays and groups.

    >>> import zarrkit as zk
    >>> g = zk.group({})
    >>> sub = g.create_group("sub", attributes={"a": 1})
    >>> g["sub"].attrs["a"]
    1
    """

    def __init__(
        self,
        store: Store,
        path: str = "",
        *,
        zarr_format: int = 2,
        metadata: Any = None,
        read_only: bool = False,
        attributes: dict[str, Any] | None = None,
        consolidated: Consolidated | None = None,
    ) -> None:
        self._store = store
        self._path = path
        self._zarr_format = zarr_format
        self._metadata = metadata
        self._read_only = read_only
        self._consolidated = consolidated
        if zarr_format == 3:
            if metadata is None:
                from zarrkit.metadata.v3 import GroupMetadataV3

                self._metadata = GroupMetadataV3(attributes=dict(attributes or {}))
            # v3 keeps attributes inside zarr.json: a change rewrites that document.
            self._attrs = Attributes(
                store, group_metadata_key(path, 3), read_only=read_only,
                loaded=dict(self._metadata.attributes), writer=self._write_attributes_v3,
            )
        else:
            self._attrs = Attributes(
                store, join_path(path, ZATTRS), read_only=read_only, loaded=attributes
            )

    def _write_attributes_v3(self, edit: Edit) -> dict[str, Any]:
        from dataclasses import replace

        key = group_metadata_key(self._path, 3)
        with chunk_lock(self._store, key):
            # The stored document, not this object's copy: other handles may have changed
            # attributes or refreshed the consolidated snapshot since.
            current = stored_metadata(self._store, key, 3)
            if not isinstance(current, type(self._metadata)):
                raise ContainsNodeError(f"{key!r} is no longer a group")
            metadata = replace(current, attributes=edit(dict(current.attributes)))
            document = metadata.to_json()
            self._store.set(key, dump_json(document))
        self._metadata = metadata
        if self._path:
            record_changes(self._store, {self._path: document})
        return dict(metadata.attributes)

    # --- description ------------------------------------------------------------------------
    @property
    def store(self) -> Store:
        """The store holding this group."""
        return self._store

    @property
    def path(self) -> str:
        """Path of the group in its store (``""`` for the root)."""
        return self._path

    @property
    def name(self) -> str:
        """Absolute name, ``"/"`` for the root."""
        return "/" + self._path

    @property
    def basename(self) -> str:
        """The last segment of the name."""
        return self._path.rsplit("/", 1)[-1]

    @property
    def attrs(self) -> Attributes:
        """User attributes, written through to the store on every change."""
        return self._attrs

    @property
    def zarr_format(self) -> int:
        """The Zarr format version."""
        return self._zarr_format

    @property
    def metadata(self) -> Any:
        """The parsed group metadata document (None for a format 2 group). A format 3
        group opened through a consolidated ancestor carries, as in zarr-python, the
        part of that snapshot below it as its ``consolidated_metadata``.

        >>> import zarrkit as zk
        >>> s = {}; _ = zk.group(s, zarr_format=3).create_group("a/b")
        >>> _ = zk.consolidate_metadata(s)
        >>> a = zk.open_group(s, mode="r", consolidated=True)["a"]
        >>> list(a.metadata.consolidated_metadata.metadata)
        ['b']
        """
        metadata = self._metadata
        if (self._zarr_format == 3 and self._consolidated is None and metadata is not None
                and metadata.consolidated_metadata is not None):
            # Opened without its consolidated metadata (use_consolidated=False): zarr-python
            # 3.4 then reports none, whatever the stored document holds.
            from dataclasses import replace

            return replace(metadata, consolidated_metadata=None)
        # A snapshot's entry for a nested group holds an empty snapshot of its own (as
        # zarr-python writes it): its members are found in the holder's flat snapshot.
        if (self._zarr_format == 3 and self._consolidated is not None and self._path
                and metadata is not None and (metadata.consolidated_metadata is None
                                              or not metadata.consolidated_metadata.documents)):
            from dataclasses import replace

            from zarrkit.metadata.v3 import ConsolidatedMetadata

            prefix = key_prefix(self._path)
            below = {key[len(prefix):-len(ZARR_JSON) - 1]: document
                     for key, document in self._consolidated.items()
                     if key.startswith(prefix) and key.endswith("/" + ZARR_JSON)
                     and key != prefix + ZARR_JSON}
            # The snapshot's holder has the shortest key; as zarr-python nests it, its
            # direct member groups get a snapshot even when empty, deeper ones only when
            # something is below them.
            holder = min(self._consolidated, key=len)[:-len(ZARR_JSON)]
            direct = "/" not in self._path[len(holder):]
            if below or direct:
                # The consolidated view only; the stored document stays as it is.
                self._metadata = metadata = replace(metadata, consolidated_metadata=(
                    ConsolidatedMetadata({"kind": "inline", "must_understand": False,
                                          "metadata": below}, nested=True)))
        return metadata

    @property
    def read_only(self) -> bool:
        """Whether writes are refused."""
        return self._read_only or self._store.read_only

    @property
    def consolidated(self) -> bool:
        """Whether metadata is being read from consolidated metadata."""
        return self._consolidated is not None

    def __repr__(self) -> str:
        # zarr-python's form: the store's URL and the path.
        return f"<Group {self.store_path}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Group) and self.store_path == other.store_path

    __hash__ = None  # type: ignore[assignment]

    @property
    def store_path(self) -> StorePath:
        """The group's store and path; ``str()`` of it is the store's URL and the path,
        as zarr-python prints it.

        >>> import zarrkit as zk
        >>> zk.group({}).create_group("a/b").store_path.path
        'a/b'
        """
        return StorePath(self._store, self._path)

    @property
    def synchronizer(self) -> None:
        """Always None: zarr-python keeps the attribute from version 2, where it named a
        lock; zarrkit locks chunks itself."""
        return None

    @property
    def info(self) -> GroupInfo:
        """What is known of the group without reading its members (their counts too
        when it holds consolidated metadata), printed as zarr-python prints it.

        >>> import zarrkit as zk
        >>> print(zk.group({}, zarr_format=3).create_group("g").info)
        Name        : g
        Type        : Group
        Zarr format : 3
        Read-only   : False
        Store type  : MemoryStore
        """
        snapshot = (self.metadata.consolidated_metadata
                    if self._zarr_format == 3 and self._consolidated is not None else None)
        if snapshot is None:
            return GroupInfo(self)
        nodes = snapshot.flattened_metadata.values()
        groups = sum(1 for node in nodes if node.node_type == "group")
        return GroupInfo(self, members=len(nodes), groups=groups)

    def info_complete(self) -> GroupInfo:
        """:attr:`info` with the numbers of members, arrays and groups below the group
        (at any depth), read from the store when not consolidated.

        >>> import zarrkit as zk
        >>> g = zk.group({}).create_group("g"); _ = g.create_array("a/x", shape=(1,), dtype="u1")
        >>> print(g.info_complete())  # doctest: +ELLIPSIS
        Name        : g
        ...
        No. members : 2
        No. arrays  : 1
        No. groups  : 1
        """
        kinds = [isinstance(node, Group) for _, node in self.members(max_depth=None)]
        return GroupInfo(self, members=len(kinds), groups=sum(kinds))

    def nmembers(self, max_depth: int | None = 0) -> int:
        """The number of members down to ``max_depth`` levels below the direct ones
        (None: all), as zarr-python counts them.

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_group("a/b/c")
        >>> g.nmembers(), g.nmembers(max_depth=None)
        (1, 3)
        """
        return sum(1 for _ in self._iter_members(max_depth))

    # --- navigation -------------------------------------------------------------------------
    def _child_path(self, name: str) -> str:
        relative = normalize_path(name)
        if not relative:
            raise NodeNotFoundError("a member name must not be empty")
        return join_path(self._path, relative)

    def _find(self, path: str) -> FoundNode | None:
        """The node at store path ``path``, from the consolidated snapshot when this group
        reads through one. A writable group that misses a node there looks in the store:
        a writer must see every node, and a snapshot can lack the nodes that a killed
        writer (or a library that does not keep it current) created after it."""
        found = find_node(self._store, path, self._consolidated)
        if found is None and self._consolidated is not None and not self._read_only:
            found = find_node(self._store, path)
        return found

    def _find_real(self, path: str) -> Array | Group | None:
        """The real node (not a link) at store path ``path``, read as this group reads
        (consolidated metadata, read-only-ness), or None."""
        found = self._find(path)
        if found is None:
            return None
        return node_from_found(self._store, found, read_only=self._read_only,
                               consolidated=self._consolidated)

    def _through_links(self, path: str) -> Array | Group:
        """The node at ``path`` (a descendant's store path, where no real node is) reached
        through links; NodeNotFoundError or LinkError."""
        relative = path[len(key_prefix(self._path)):]
        return resolve_path(self, relative.split("/"), known_missing=True)

    def __getitem__(self, name: str) -> Array | Group:
        """The node at ``name`` (a path relative to this group), following links (of this
        group and of those on the way) where no real member has the name.

        A dangling link, or links forming a cycle, raise LinkError (a NodeNotFoundError,
        so a KeyError) naming the link and its target.
        """
        path = self._child_path(name)
        found = self._find(path)
        if found is None:
            return self._through_links(path)
        return node_from_found(self._store, found, read_only=self._read_only,
                               consolidated=self._consolidated)

    def get(self, path: str, default: Any = None) -> Any:
        """The member at ``path`` (following links, as ``group[path]``), or ``default``,
        also for a dangling or cyclic link (as h5py's ``get``).

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_link("dangling", "/nowhere")
        >>> g.get("dangling", "default")
        'default'
        """
        try:
            return self[path]
        except NodeNotFoundError:
            return default

    def __contains__(self, name: object) -> bool:
        """Whether ``group[name]`` finds a node (following links: a dangling link is not
        contained, as in h5py)."""
        if not isinstance(name, str):
            return False
        path = self._child_path(name)
        if node_kind(self._store, path, self._consolidated) is not None:
            return True
        try:
            self._through_links(path)
        except NodeNotFoundError:
            return False
        return True

    def _child_names(self) -> list[str]:
        if self._consolidated is not None:
            return self._consolidated_names()
        return [name for name, _ in self._listed_members(parse=False)]

    def _consolidated_names(self) -> list[str]:
        prefix = key_prefix(self._path)
        names = set()
        for key in self._consolidated or {}:
            if key.startswith(prefix):
                head, _, tail = key[len(prefix):].partition("/")
                if tail in (ZARRAY, ZGROUP, ZARR_JSON):
                    names.add(head)
        return sorted(names)

    def _listed_members(self, *, parse: bool) -> Iterator[tuple[str, FoundNode | None]]:
        """``(name, node)`` for the direct members found by listing the store: one listing
        and one batched read of every candidate's metadata documents (and attributes,
        when ``parse``), each parsed only when the iteration reaches it."""
        prefix = key_prefix(self._path)
        _, candidates = self._store.list_dir(prefix)  # type: ignore[attr-defined]
        # Members are nodes of the group's own format (as zarr-python reads them): a v3
        # group's have a zarr.json, a v2 group's a .zarray or .zgroup (and .zattrs), and
        # the other format's documents, almost never there, are not asked for.
        names = _MEMBER_KEYS_V3 if self._zarr_format == 3 else (
            _MEMBER_KEYS_V2 if parse else _MEMBER_KEYS_V2[:2])
        width = len(names)
        values = read_values(self._store, [f"{prefix}{c}/{n}" for c in candidates for n in names])
        for i, candidate in enumerate(candidates):
            found_values = dict(zip(names, values[width * i:width * (i + 1)], strict=True))
            raw = [found_values.get(name) for name in _MEMBER_KEYS]
            if parse:
                found = node_from_values(join_path(self._path, candidate), *raw)
                if found is not None:
                    yield candidate, found
            elif any(v is not None for v in raw):
                yield candidate, None

    def member_nodes(self) -> Iterator[tuple[str, FoundNode]]:
        """``(name, found)`` for every direct member: its kind, format, parsed metadata
        and attributes, without building Array or Group objects (consolidated metadata
        when the group was opened with it, else one listing and one batched read).

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_array("a", shape=(2,), dtype="u1")
        >>> [(name, found.kind) for name, found in g.member_nodes()]
        [('a', 'array')]
        """
        return self._member_nodes()

    def _member_nodes(self) -> Iterator[tuple[str, FoundNode]]:
        """``(name, node)`` for every direct member, from consolidated metadata or the
        store; nodes are parsed one at a time, as the caller iterates."""
        if self._consolidated is None:
            yield from ((name, found) for name, found in self._listed_members(parse=True)
                        if found is not None)
            return
        prefix = key_prefix(self._path)  # prefix + name is join_path(self._path, name)
        for name in self._consolidated_names():
            # Members are of the group's format, as when listing (zarr-python's rule).
            found = find_node(self._store, prefix + name, self._consolidated, self._zarr_format)
            if found is not None:
                yield name, found

    def __iter__(self) -> Iterator[str]:
        return iter(self._child_names())

    def __len__(self) -> int:
        return len(self._child_names())

    def keys(self) -> list[str]:
        """Names of the direct members, sorted."""
        return self._child_names()

    def members(self, max_depth: int | None = 0, *, use_consolidated_for_children: bool = True
                ) -> tuple[tuple[str, Array | Group], ...]:
        """``(name, node)`` for direct members, a tuple as zarr-python's; ``max_depth=None``
        walks the whole tree (names then are paths relative to this group). Consolidated
        metadata, when the group was opened with it, answers for the whole tree
        (``use_consolidated_for_children`` is accepted for zarr-python's sake).

        Without consolidated metadata, the members' documents are read together (listing
        once).

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_group("a/b")
        >>> [name for name, _ in g.members(max_depth=None)]
        ['a', 'a/b']
        """
        return tuple(self._iter_members(max_depth))

    def _iter_members(self, max_depth: int | None = 0) -> Iterator[tuple[str, Array | Group]]:
        """:meth:`members` one by one: each node is built as the iteration reaches it."""
        for name, found in self._member_nodes():
            node = node_from_found(self._store, found, read_only=self._read_only,
                                   consolidated=self._consolidated)
            yield name, node
            if isinstance(node, Group) and (max_depth is None or max_depth > 0):
                deeper = None if max_depth is None else max_depth - 1
                for sub_name, sub_node in node._iter_members(deeper):
                    yield f"{name}/{sub_name}", sub_node

    def groups(self) -> Iterator[tuple[str, Group]]:
        """``(name, group)`` for the direct member groups."""
        for name, node in self._iter_members():
            if isinstance(node, Group):
                yield name, node

    def arrays(self) -> Iterator[tuple[str, Array]]:
        """``(name, array)`` for the direct member arrays."""
        for name, node in self._iter_members():
            if isinstance(node, Array):
                yield name, node

    def group_keys(self) -> list[str]:
        """Names of the direct member groups."""
        return [name for name, _ in self.groups()]

    def array_keys(self) -> list[str]:
        """Names of the direct member arrays."""
        return [name for name, _ in self.arrays()]

    def links(self) -> dict[str, Link]:
        """This group's links (its ``_LINKS`` attribute, else its ``zarr_link``: see
        :func:`zarrkit.hierarchy.links.read_links`), by name in stored order.
        Links are not members: ``keys()``, ``members()`` and iteration leave them out.
        MetadataError if the attribute is malformed.

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_group("data")
        >>> _ = g.create_link("alias", "/data")
        >>> g.links()
        {'alias': Link(name='alias', source='.', path='/data', object_id=None, \
source_object_id=None)}
        """
        return read_links(self._attrs, self.name)

    def create_link(self, name: str, target: Array | Group | str, source: str = ".") -> Link:
        """Add a link ``name`` to ``target`` and return it: appended to the link
        attribute this group has, else to that of its file's hdmf-zarr convention
        (``zarr_link`` in a Zarr v2 file, ``_LINKS`` in a v3 one: see
        :mod:`zarrkit.hierarchy.links`).

        ``target`` is an Array or Group, of this store or of another on disk (the link's
        ``source`` is then that store's location relative to this store's, e.g.
        ``"../other.zarr"``), or the target's absolute path in the store that ``source``
        names (``"."``: this one; else a path relative to this store's location). The
        link may dangle: the target need not exist. When it does, a ``zarr_link`` entry
        records its ``object_id`` attribute and the ``object_id`` of its store's root, as
        hdmf-zarr 0.13 documents (a ``_LINKS`` entry has no object ids). The link is
        returned as stored.

        The entry is appended to the attributes as stored now, under the attribute lock:
        concurrent links and attribute changes are all kept. ContainsNodeError if a
        member or a link of that name exists; LinkError for a target in another store when
        either store is not on disk.

        >>> import zarrkit as zk
        >>> g = zk.group({}, zarr_format=2, attributes={"object_id": "file-1"})
        >>> dev = g.create_group("devices/dev", attributes={"object_id": "dev-1"})
        >>> g.create_group("eg").create_link("device", dev).to_json()
        {'name': 'device', 'source': '.', 'path': '/devices/dev', 'object_id': 'dev-1', \
'source_object_id': 'file-1'}
        >>> g["eg/device"].attrs["object_id"]
        'dev-1'
        >>> v3 = zk.group({}, zarr_format=3)
        >>> v3.create_group("eg").create_link("device", "/devices/dev")
        Link(name='device', source='.', path='/devices/dev', object_id=None, \
source_object_id=None)
        >>> v3["eg"].attrs["_LINKS"]
        [{'source': '.', 'path': '/devices/dev', 'name': 'device'}]
        """
        self._check_writable()
        check_node_name(name, self._zarr_format)
        kind = node_kind(self._store, join_path(self._path, name))
        if kind is not None:
            raise ContainsNodeError(f"{kind} {join_path(self._path, name)!r} already exists")
        node: Array | Group | None = None
        source_id: str | None = None
        if isinstance(target, (Array, Group)):
            if source != ".":
                raise ValueError("source is computed from the target node; give it only "
                                 "with a target path")
            source = relative_source(self._store, target.store)
            node, path = target, target.name
            source_id = root_object_id(target.store)
        elif isinstance(target, str):
            if Link(name, source, "/").external and store_location(self._store) is None:
                raise LinkError(f"cannot link to source {source!r}: {self._store!r} has no "
                                f"location on disk, so it holds no links to other stores")
            path = "/" + normalize_path(target)
            try:
                root = source_root(self, source)
            except LinkError:
                pass  # an external store not there (yet): the link may dangle
            else:
                source_id = object_id_of(root)
                try:
                    node = resolve_path(root, path[1:].split("/") if path != "/" else [])
                except NodeNotFoundError:
                    pass  # a dangling link, as h5py allows
        else:
            raise TypeError(f"a link target is an Array, a Group or a path, "
                            f"not {type(target).__name__}")
        link = Link(name, source, path, object_id=None if node is None else object_id_of(node),
                    source_object_id=source_id)
        convention = convention_of(self)
        stored: list[Link] = []

        def edit(current: dict[str, Any]) -> dict[str, Any]:
            attributes, entry = add_link(current, link, convention, self.name)
            stored.append(entry)
            return attributes

        self._attrs._change(edit)
        return stored[-1]

    def tree(self, expand: bool | None = None, level: int | None = None, *,
             max_nodes: int = 500, plain: bool = False) -> str:
        """The hierarchy below this group as indented text; links show as ``name ->
        /target/path`` (``name -> source:/path`` for another store) and are not expanded.
        ``level`` limits the depth shown (1: the direct members); zarrkit's tree is always
        plain text, so ``expand``, ``max_nodes`` and ``plain`` (zarr-python's options for
        its rich display) change nothing.

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_array("a/x", shape=(2,), dtype="u1")
        >>> _ = g.create_link("b", "/a/x")
        >>> print(g.tree())
        /
        ├── a
        │   └── x (2,) uint8
        └── b -> /a/x
        <BLANKLINE>
        """
        lines = [self.name if self._path else "/"]

        def walk(group: Group, indent: str, depth: int = 1) -> None:
            if level is not None and depth > level:
                return
            entries: list[tuple[str, Array | Group | Link]] = list(group.members())
            try:
                links = group.links()
            except MetadataError:
                links = {}
            if links:
                real = {name for name, _ in entries}
                entries += [(n, link) for n, link in links.items() if n not in real]
                entries.sort(key=lambda entry: entry[0])
            for i, (name, node) in enumerate(entries):
                last = i == len(entries) - 1
                branch = "└── " if last else "├── "
                if isinstance(node, Link):
                    lines.append(f"{indent}{branch}{node}")
                elif isinstance(node, Array):
                    lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")
                else:
                    lines.append(f"{indent}{branch}{name}")
                    walk(node, indent + ("    " if last else "│   "), depth + 1)

        walk(self, "")
        return TreeText("\n".join(lines))

    # --- changes ----------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyError(f"group {self.name!r} is read-only")
        # A change makes a consolidated snapshot stale: read the store from now on.
        self._consolidated = None

    def __delitem__(self, name: str) -> None:
        """Delete the member at ``name`` and everything below it; where there is none, a
        link of this group named ``name`` (only the link: its target stays)."""
        self._check_writable()
        path = self._child_path(name)
        if node_kind(self._store, path) is None:
            relative = normalize_path(name)
            if "/" not in relative:
                try:
                    self.delete_link(relative)  # checks the attributes as stored now
                    return
                except (NodeNotFoundError, MetadataError):
                    pass
            raise NodeNotFoundError(f"no array or group at path {path!r}")
        delete_node(self._store, path)

    def delete_link(self, name: str) -> None:
        """Remove this group's link ``name`` (its target stays); NodeNotFoundError if there
        is none. The attribute goes when its last link does.

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_link("l", "/x")
        >>> g.delete_link("l"); g.links(), dict(g.attrs)
        ({}, {})
        """
        self._check_writable()
        self._attrs._change(lambda current: remove_link(current, name, self.name))

    def create_group(
        self, name: str, *, overwrite: bool = False, attributes: dict[str, Any] | None = None
    ) -> Group:
        """Create a group (and missing intermediate groups) at ``name``.

        >>> import zarrkit as zk
        >>> zk.group({}).create_group("a/b", attributes={"k": 1}).attrs["k"]
        1
        """
        self._check_writable()
        path = self._child_path(name)
        create_group_node(self._store, path, attributes, overwrite=overwrite,
                          zarr_format=self._zarr_format)
        return Group(self._store, path, zarr_format=self._zarr_format,
                     attributes=attributes or {})

    def require_group(self, name: str, *, overwrite: bool = False,
                      attributes: dict[str, Any] | None = None) -> Group:
        """The group at ``name``, created if missing (or replaced, with ``overwrite``); an
        array there is a ContainsNodeError. ``attributes`` are those of a new group.

        >>> import zarrkit as zk
        >>> g = zk.group({}); g.require_group("a") == g.require_group("a")
        True
        """
        if overwrite:
            return self.create_group(name, overwrite=True, attributes=attributes)
        path = self._child_path(name)
        kind = node_kind(self._store, path, self._consolidated)
        if kind == "group":
            group = self[name]
            assert isinstance(group, Group)
            return group
        if kind == "array":
            raise ContainsNodeError(f"an array already exists at path {path!r}")
        return self.create_group(name, attributes=attributes)

    def require_groups(self, *names: str) -> tuple[Group, ...]:
        """:meth:`require_group` for each name.

        >>> import zarrkit as zk
        >>> [g.path for g in zk.group({}).require_groups("a", "b/c")]
        ['a', 'b/c']
        """
        return tuple(self.require_group(name) for name in names)

    def get_array(self, path: str) -> Array:
        """The array at ``path`` (following links), as zarr-python 3.4's
        ``Group.get_array``: ArrayNotFoundError (a KeyError) when nothing is there,
        ContainsGroupError (a ValueError) when a group is.

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_array("a/x", shape=(1,), dtype="u1")
        >>> g.get_array("a/x").path
        'a/x'
        >>> g.get_array("a")
        Traceback (most recent call last):
        zarrkit.errors.ContainsGroupError: A group exists in store memory://... at path 'a'.
        """
        node = self._get_node(path, ArrayNotFoundError, "array")
        if not isinstance(node, Array):
            raise ContainsGroupError(f"A group exists in store {store_url(self._store)} "
                                     f"at path {node.path!r}.")
        return node

    def get_group(self, path: str) -> Group:
        """The group at ``path`` (following links), as zarr-python 3.4's
        ``Group.get_group``: GroupNotFoundError (a KeyError) when nothing is there,
        ContainsArrayError (a ValueError) when an array is.

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_group("a/b"); g.get_group("a/b").path
        'a/b'
        """
        node = self._get_node(path, GroupNotFoundError, "group")
        if not isinstance(node, Group):
            raise ContainsArrayError(f"An array exists in store {store_url(self._store)} "
                                     f"at path {node.path!r}.")
        return node

    def _get_node(self, path: str, missing: type[NodeNotFoundError], kind: str) -> Any:
        """``self[path]``, a missing node raised as ``missing`` (a link that cannot be
        followed keeps its own LinkError, which names the link)."""
        try:
            return self[path]
        except LinkError:
            raise
        except NodeNotFoundError as error:
            raise missing(f"No {kind} found in store {store_url(self._store)} at path "
                          f"{self._child_path(path)!r}") from error

    def array_values(self) -> Iterator[Array]:
        """The direct member arrays."""
        for _, array in self.arrays():
            yield array

    def group_values(self) -> Iterator[Group]:
        """The direct member groups."""
        for _, group in self.groups():
            yield group

    def create_array(
        self,
        name: str,
        *,
        shape: Any = None,
        dtype: Any = None,
        data: Any = None,
        chunks: Any = "auto",
        shards: Any = None,
        filters: Any = "auto",
        compressors: Any = "auto",
        compressor: Any = "auto",
        serializer: Any = "auto",
        fill_value: Any = DEFAULT,
        order: str | None = None,
        attributes: dict[str, Any] | None = None,
        chunk_key_encoding: Any = None,
        dimension_names: Any = None,
        storage_options: dict[str, Any] | None = None,
        overwrite: bool = False,
        config: Any = None,
        write_data: bool = True,
        write_empty_chunks: bool | None = None,
        zarr_format: int | None = None,
        dimension_separator: str | None = None,
        index_location: str | None = None,
    ) -> Array:
        """Create an array at ``name``, with zarr-python's keywords (see
        :func:`zarrkit.create_array`). ``shape`` and ``dtype`` default to those of
        ``data``, written unless ``write_data`` is false (``dtype`` to float64 without
        data); ``config`` is an :class:`~zarrkit.hierarchy.accessors.ArrayConfig` or a dict
        of its fields. ``storage_options`` concern opening a store, which the group has
        done: they are not used. zarrkit's own: ``write_empty_chunks``, ``zarr_format``
        (default: the group's), ``dimension_separator`` and ``index_location``.

        >>> import numpy as np, zarrkit as zk
        >>> a = zk.group({}).create_array("a", data=np.arange(3, dtype="i2"))
        >>> a.shape, a.dtype, a[:]
        ((3,), dtype('int16'), array([0, 1, 2], dtype=int16))
        """
        self._check_writable()
        path = self._child_path(name)
        if data is not None:
            data = data if hasattr(data, "dtype") and hasattr(data, "shape") else (
                np.asarray(data))
            shape = data.shape if shape is None else shape
            dtype = data.dtype if dtype is None else dtype
        if shape is None:
            raise TypeError("create_array needs a shape, or data to take it from")
        if config is not None:
            settings = config if isinstance(config, dict) else config.to_dict()
            if write_empty_chunks is None:
                write_empty_chunks = settings.get("write_empty_chunks")
            if order is None and settings.get("order", "C") != "C":
                order = settings["order"]
        # What is left at zarr-python's default ("auto"; None where None means nothing
        # given) takes zarrkit's, which makes the same array; None is a value of its own
        # for the codecs (none of them) and chunks.
        automatic = {"chunks": chunks, "filters": filters, "compressors": compressors,
                     "compressor": compressor, "serializer": serializer}
        options = {key: value for key, value in automatic.items()
                   if not (isinstance(value, str) and value == "auto")}
        if fill_value is not DEFAULT:  # None asks for a null fill value
            options["fill_value"] = fill_value
        optional = {"shards": shards, "order": order,
                    "chunk_key_encoding": chunk_key_encoding,
                    "dimension_names": dimension_names,
                    "dimension_separator": dimension_separator, "index_location": index_location}
        options.update((key, value) for key, value in optional.items()
                       if value is not None)
        metadata = array_metadata(
            zarr_format=zarr_format or self._zarr_format, shape=shape,
            dtype="float64" if dtype is None else dtype, attributes=attributes, **options,
        )
        create_array_node(self._store, path, metadata, attributes, overwrite=overwrite)
        array = Array(self._store, path, metadata, attributes=attributes or {},
                      write_empty_chunks=write_empty_chunks)
        if config is not None and any(key in settings for key in READ_CONFIG_KEYS):
            # zarr-python's read settings of the handle
            array = array.with_config({key: value for key, value in settings.items()
                                       if key in READ_CONFIG_KEYS})
        if data is not None and write_data:
            array[...] = data
        return array

    # zarr-python's other names for create_array (``array`` is its older one).
    create = create_array
    array = create_array

    def create_dataset(self, name: str, **kwargs: Any) -> Array:
        """:meth:`create_array` (the h5py and zarr-python 2 name)."""
        return self.create_array(name, **kwargs)

    def require_array(self, name: str, *, shape: Any, dtype: Any = None, exact: bool = False,
                      config: Any = None, **kwargs: Any) -> Array:
        """The array at ``name`` if it exists with this shape and a compatible dtype
        (with ``exact``, this dtype; else one that the stored dtype casts to safely, as
        zarr-python checks), else a new one made by :meth:`create_array` with
        ``kwargs``. TypeError when the existing array does not fit; ContainsNodeError
        for a group there. The runtime ``config`` applies to the array returned, existing
        or new (zarr-python 3.4).

        >>> import zarrkit as zk
        >>> g = zk.group({}); a = g.require_array("x", shape=(2,), dtype="i2")
        >>> g.require_array("x", shape=(2,), dtype="f4") == a
        True
        """
        path = self._child_path(name)
        kind = node_kind(self._store, path, self._consolidated)
        if kind == "group":
            raise ContainsNodeError(f"a group already exists at path {path!r}")
        if kind != "array":
            return self.create_array(name, shape=shape, dtype=dtype, config=config, **kwargs)
        array = self[name]
        assert isinstance(array, Array)
        from zarrkit.hierarchy.creation import dtype_argument, normalize_shape
        from zarrkit.metadata.dtypes import normalize_dtype

        if array.shape != normalize_shape(shape):
            raise TypeError(f"array {path!r} exists with shape {array.shape}, not {shape}")
        # No dtype is float64 here, as numpy (and so zarr-python) reads None.
        wanted = normalize_dtype(dtype_argument("float64" if dtype is None else dtype,
                                                zarr_format=array.metadata.zarr_format))
        fits = array.dtype == wanted if exact else np.can_cast(array.dtype, wanted)
        if not fits:
            raise TypeError(f"array {path!r} exists with dtype {array.dtype}, "
                            f"not {'' if exact else 'castable to '}{wanted}")
        return array if config is None else array.with_config(config)

    def require_dataset(self, name: str, *, shape: Any, **kwargs: Any) -> Array:
        """:meth:`require_array` (the h5py and zarr-python 2 name)."""
        return self.require_array(name, shape=shape, **kwargs)

    # zarr-python's array makers on a group: keyword-only ``name``, other keywords as
    # create_array's; the format is the group's (zarr-python 3.1 makes format 3 arrays
    # even in a format 2 group).
    def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """A new array of zeros (its fill value 0).

        >>> import zarrkit as zk
        >>> zk.group({}).zeros(name="z", shape=(2,))[:]
        array([0., 0.])
        """
        return self.create_array(name, shape=shape, fill_value=0, **kwargs)

    def ones(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """A new array of ones (its fill value 1).

        >>> import zarrkit as zk
        >>> zk.group({}).ones(name="o", shape=(2,), dtype="i1")[:]
        array([1, 1], dtype=int8)
        """
        return self.create_array(name, shape=shape, fill_value=1, **kwargs)

    def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> Array:
        """A new array whose fill value is ``fill_value``."""
        return self.create_array(name, shape=shape, fill_value=fill_value, **kwargs)

    def empty(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """A new array with nothing written: it reads as its default fill value."""
        return self.create_array(name, shape=shape, **kwargs)

    def _like(self, name: str, data: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        """create_array's arguments for an array shaped like ``data``: its shape and
        dtype, and its chunks when it is a Zarr array; ``kwargs`` take precedence."""
        like: dict[str, Any] = {"shape": np.shape(data),
                                "dtype": getattr(data, "dtype", None) or np.asarray(data).dtype}
        if isinstance(data, Array) and all(isinstance(c, int) for c in data.chunks):
            like["chunks"] = data.chunks
        return {**like, **kwargs}

    def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """:meth:`zeros` shaped like ``data``.

        >>> import numpy as np, zarrkit as zk
        >>> zk.group({}).zeros_like(name="z", data=np.ones(2, "u1"))[:]
        array([0, 0], dtype=uint8)
        """
        return self.zeros(name=name, **self._like(name, data, kwargs))

    def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """:meth:`ones` shaped like ``data``."""
        return self.ones(name=name, **self._like(name, data, kwargs))

    def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """:meth:`empty` shaped like ``data``."""
        return self.empty(name=name, **self._like(name, data, kwargs))

    def full_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """:meth:`full` shaped like ``data``; ``fill_value`` is a keyword, else that of
        ``data`` when it is a Zarr array (TypeError when neither gives one)."""
        if "fill_value" not in kwargs:
            if not isinstance(data, Array):
                raise TypeError("full_like needs a fill_value")
            kwargs = {**kwargs, "fill_value": data.fill_value}
        return self.full(name=name, **self._like(name, data, kwargs))

    def update_attributes(self, new_attributes: dict[str, Any]) -> Group:
        """Merge ``new_attributes`` in one write; return self."""
        self._attrs.update(new_attributes)
        return self

    def move(self, source: str, dest: str) -> None:
        """Move the member at ``source`` (an array or a group, with everything below it) to
        ``dest``, both paths relative to this group. Missing parents of ``dest`` become
        groups; a node already at ``dest`` is ContainsArrayError or ContainsGroupError (a
        ``ValueError``, as zarr-python 2 raised), a missing ``source`` NodeNotFoundError.
        Consolidated metadata above either place is kept current.

        Keys are copied before any is deleted, chunks before node documents: an error (or
        a crash) midway leaves the source whole, and no half-copied node at ``dest``.

        >>> import zarrkit as zk
        >>> g = zk.group({})
        >>> g.create_array("a/x", shape=(2,), dtype="u1", fill_value=0)[:] = [5, 6]
        >>> g.move("a/x", "b/c/y")
        >>> sorted(g.keys()), g["b/c/y"][:].tolist(), "a/x" in g
        (['a', 'b'], [5, 6], False)
        """
        self._check_writable()
        if not self._store.supports_deletes:
            raise UnsupportedOperationError(
                f"cannot move in {self._store!r}: it cannot delete the source afterwards")
        source_path = self._child_path(source)
        dest_path = self._child_path(dest)
        if node_kind(self._store, source_path) is None:
            raise NodeNotFoundError(f"the source, {source_path!r}, does not exist")
        if dest_path == source_path or dest_path.startswith(key_prefix(source_path)):
            raise InvalidKeyError(f"cannot move {source_path!r} into itself ({dest_path!r})")
        existing = node_kind(self._store, dest_path)
        if existing is not None:
            error = ContainsArrayError if existing == "array" else ContainsGroupError
            raise error(f"the dest, {dest_path!r}, already exists (an {existing})")
        parent = dest_path.rpartition("/")[0]
        parent_kind = node_kind(self._store, parent)
        if parent_kind == "array":
            raise ContainsArrayError(f"cannot move into {dest_path!r}: {parent!r} is an array")
        if parent_kind is None:
            create_group_node(self._store, parent, zarr_format=self._zarr_format)
        _move_keys(self._store, source_path, dest_path)

    def create_hierarchy(self, nodes: Any, *, overwrite: bool = False
                         ) -> Iterator[tuple[str, Array | Group]]:
        """Create the nodes described by ``nodes`` (paths relative to this group ->
        metadata, as :func:`zarrkit.create_hierarchy` takes them, all of this group's
        format) and yield each as ``(path relative to this group, node)``; missing parents
        become groups. Naming this group itself (``""``) is ContainsGroupError. Nodes are
        created as the iterator is consumed.

        >>> import zarrkit as zk
        >>> g = zk.group({}).create_group("top")
        >>> made = dict(g.create_hierarchy({"a/b": {"zarr_format": 3, "node_type": "group"}}))
        >>> sorted(made), made["a/b"].path
        (['a', 'a/b'], 'top/a/b')
        """
        from zarrkit.convenience import _document_of, create_hierarchy

        prefix = self._path
        described: dict[str, Any] = {}
        for key, value in nodes.items():
            # As JSON: zarr-python's metadata objects give tuples where documents hold lists.
            document = _document_of(value)
            zarr_format = document.get("zarr_format")
            if zarr_format != self._zarr_format:
                raise MetadataError(
                    f"the node at {key!r} has zarr_format {zarr_format}, but the parent "
                    f"group has zarr_format {self._zarr_format}: they must be the same")
            relative = normalize_path(key)
            if not relative:
                raise ContainsGroupError(
                    "the input names the root node, which exists: this group; leave it out "
                    "(zarrkit.create_hierarchy creates a hierarchy with its root)")
            described[join_path(prefix, relative)] = document
        for path, node in create_hierarchy(store=self._store, nodes=described,
                                           overwrite=overwrite):
            yield (path.removeprefix(key_prefix(prefix)) if prefix else path), node

    @classmethod
    def from_store(cls, store: Any, *, attributes: dict[str, Any] | None = None,
                   zarr_format: int = 3, overwrite: bool = False) -> Group:
        """Create a group at the root of ``store`` (any store-like argument); with
        ``overwrite``, replacing what is there, else ContainsNodeError if a node is.

        >>> Group.from_store({}, attributes={"a": 1}).attrs["a"]
        1
        """
        from zarrkit.api import open_group

        return open_group(store, mode="w" if overwrite else "w-", zarr_format=zarr_format,
                          attributes=attributes)

    @classmethod
    def open(cls, store: Any, zarr_format: int | None = 3) -> Group:
        """The existing group at the root of ``store`` (GroupNotFoundError if none).

        >>> s = {}; _ = Group.from_store(s)
        >>> Group.open(s).zarr_format
        3
        """
        from zarrkit.api import open_group

        return open_group(store, mode="r+", zarr_format=zarr_format)


def _move_keys(store: Store, source_path: str, dest_path: str) -> None:
    """Copy every key below ``source_path`` to ``dest_path`` (chunks first, documents
    last), record the new nodes in consolidated metadata, then delete the source. A
    failed copy removes what it wrote and leaves the source as it was."""
    source_prefix = key_prefix(source_path)
    keys = sorted(store.list_prefix(source_prefix),
                  key=lambda k: (k.rpartition("/")[2] in METADATA_DOCUMENT_NAMES, k))
    written: list[str] = []
    documents_v3: dict[str, dict[str, Any] | None] = {source_path: None}
    documents_v2: dict[str, dict[str, Any] | None] = {}
    try:
        for key in keys:
            value = store.get(key)
            if value is None:  # deleted since it was listed
                continue
            new_key = join_path(dest_path, key[len(source_prefix):])
            store.set(new_key, value)
            written.append(new_key)
            node, _, name = new_key.rpartition("/")
            if name == ZARR_JSON:
                documents_v3[node] = load_json_object(value, key=new_key)
            elif name in (ZARRAY, ZGROUP, ZATTRS):
                documents_v2[new_key] = load_json_object(value, key=new_key)
    except BaseException:
        for new_key in written:
            store.delete(new_key)
        raise
    record_changes(store, documents_v3)
    record_documents_v2(store, documents_v2, removed=[source_path])
    store.delete_prefix(source_prefix)


def node_from_found(
    store: Store, found: FoundNode, *, read_only: bool,
    consolidated: Consolidated | None = None, write_empty_chunks: bool | None = None,
) -> Array | Group:
    """The Array or Group object for a node that :func:`find_node` located."""
    if found.kind == "array":
        return Array(store, found.path, found.metadata, read_only=read_only,
                     attributes=found.attributes, write_empty_chunks=write_empty_chunks)
    return Group(store, found.path, zarr_format=found.zarr_format,
                 metadata=found.metadata if found.zarr_format == 3 else None,
                 read_only=read_only, attributes=found.attributes, consolidated=consolidated)


class TreeText(str):
    """The text of :meth:`Group.tree`: equal to the lines joined, and printed (``str``,
    ``repr``) with a final newline as zarr-python's tree prints.

    >>> t = TreeText("/\\n└── a")
    >>> t == "/\\n└── a", str(t)
    (True, '/\\n└── a\\n')
    """

    __slots__ = ()

    def __str__(self) -> str:
        return f"{str.__str__(self)}\n"

    __repr__ = __str__


def open_group_node(
    store: Store, path: str, *, read_only: bool, consolidated: Consolidated | None = None,
    zarr_format: int | None = None, without_consolidated: bool = False,
) -> Group:
    """The existing group at ``path``, or GroupNotFoundError; ``without_consolidated``
    leaves its consolidated metadata out, unparsed, as zarr-python's
    ``use_consolidated=False`` drops it."""
    found = require_group(store, path, consolidated, zarr_format,
                          without_consolidated=without_consolidated)
    group = node_from_found(store, found, read_only=read_only, consolidated=consolidated)
    assert isinstance(group, Group)
    return group
