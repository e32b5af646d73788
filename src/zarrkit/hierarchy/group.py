"""The Group: a node holding arrays and other groups.

A group may also hold links (the hdmf-zarr ``zarr_link`` attribute, see
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

from zarrkit.concurrency import chunk_lock
from zarrkit.errors import (
    ContainsNodeError,
    LinkError,
    MetadataError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.attributes import Attributes, Edit
from zarrkit.hierarchy.consolidated import record_changes
from zarrkit.hierarchy.creation import array_metadata
from zarrkit.hierarchy.links import (
    LINK_ATTRIBUTE,
    Link,
    object_id_of,
    parse_links,
    relative_source,
    resolve_path,
    root_object_id,
    source_root,
    store_location,
)
from zarrkit.hierarchy.nodes import (
    ZARR_JSON,
    Consolidated,
    FoundNode,
    create_array_node,
    create_group_node,
    delete_node,
    find_node,
    group_metadata_key,
    node_from_values,
    node_kind,
    read_values,
    require_group,
    stored_metadata,
)
from zarrkit.metadata.jsonio import dump_json
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
        """The parsed group metadata document (None for a format 2 group)."""
        return self._metadata

    @property
    def read_only(self) -> bool:
        """Whether writes are refused."""
        return self._read_only or self._store.read_only

    @property
    def consolidated(self) -> bool:
        """Whether metadata is being read from consolidated metadata."""
        return self._consolidated is not None

    def __repr__(self) -> str:
        return f"<zarrkit.Group {self.name!r}>"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Group) and other._store is self._store
                and other._path == self._path)

    __hash__ = None  # type: ignore[assignment]

    # --- navigation -------------------------------------------------------------------------
    def _child_path(self, name: str) -> str:
        relative = normalize_path(name)
        if not relative:
            raise NodeNotFoundError("a member name must not be empty")
        return join_path(self._path, relative)

    def _find_real(self, path: str) -> Array | Group | None:
        """The real node (not a link) at store path ``path``, read as this group reads
        (consolidated metadata, read-only-ness), or None."""
        found = find_node(self._store, path, self._consolidated)
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
        found = find_node(self._store, path, self._consolidated)
        if found is None:
            return self._through_links(path)
        return node_from_found(self._store, found, read_only=self._read_only,
                               consolidated=self._consolidated)

    def get(self, name: str, default: Any = None) -> Any:
        """The member at ``name`` (following links, as ``group[name]``), or ``default``,
        also for a dangling or cyclic link (as h5py's ``get``).

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_link("dangling", "/nowhere")
        >>> g.get("dangling", "default")
        'default'
        """
        try:
            return self[name]
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
            found = find_node(self._store, prefix + name, self._consolidated)
            if found is not None:
                yield name, found

    def __iter__(self) -> Iterator[str]:
        return iter(self._child_names())

    def __len__(self) -> int:
        return len(self._child_names())

    def keys(self) -> list[str]:
        """Names of the direct members, sorted."""
        return self._child_names()

    def members(self, max_depth: int | None = 0) -> Iterator[tuple[str, Array | Group]]:
        """``(name, node)`` for direct members; ``max_depth=None`` walks the whole tree
        (names then are paths relative to this group).

        Without consolidated metadata, the members' documents are read together (listing
        once); each node object is built as the iteration reaches it.

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_group("a/b")
        >>> [name for name, _ in g.members(max_depth=None)]
        ['a', 'a/b']
        """
        for name, found in self._member_nodes():
            node = node_from_found(self._store, found, read_only=self._read_only,
                                   consolidated=self._consolidated)
            yield name, node
            if isinstance(node, Group) and (max_depth is None or max_depth > 0):
                deeper = None if max_depth is None else max_depth - 1
                for sub_name, sub_node in node.members(max_depth=deeper):
                    yield f"{name}/{sub_name}", sub_node

    def groups(self) -> Iterator[tuple[str, Group]]:
        """``(name, group)`` for the direct member groups."""
        for name, node in self.members():
            if isinstance(node, Group):
                yield name, node

    def arrays(self) -> Iterator[tuple[str, Array]]:
        """``(name, array)`` for the direct member arrays."""
        for name, node in self.members():
            if isinstance(node, Array):
                yield name, node

    def group_keys(self) -> list[str]:
        """Names of the direct member groups."""
        return [name for name, _ in self.groups()]

    def array_keys(self) -> list[str]:
        """Names of the direct member arrays."""
        return [name for name, _ in self.arrays()]

    def links(self) -> dict[str, Link]:
        """This group's links (its ``zarr_link`` attribute), by name in stored order.
        Links are not members: ``keys()``, ``members()`` and iteration leave them out.
        MetadataError if the attribute is malformed.

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_group("data")
        >>> _ = g.create_link("alias", "/data")
        >>> g.links()
        {'alias': Link(name='alias', source='.', path='/data', object_id=None, \
source_object_id=None)}
        """
        return parse_links(self._attrs.get(LINK_ATTRIBUTE),
                           where=f"{LINK_ATTRIBUTE} of group {self.name!r}")

    def create_link(self, name: str, target: Array | Group | str, source: str = ".") -> Link:
        """Add a link ``name`` to ``target`` (hdmf-zarr's ``zarr_link`` convention) and
        return it.

        ``target`` is an Array or Group, of this store or of another on disk (the link's
        ``source`` is then that store's location relative to this store's, e.g.
        ``"../other.zarr"``), or the target's absolute path in the store that ``source``
        names (``"."``: this one; else a path relative to this store's location). The
        link may dangle: the target need not exist. When it does, the link records its
        ``object_id`` attribute and the ``object_id`` of its store's root, as hdmf-zarr
        documents.

        The entry is appended to the attributes as stored now, under the attribute lock:
        concurrent links and attribute changes are all kept. ContainsNodeError if a
        member or a link of that name exists; LinkError for a target in another store when
        either store is not on disk.

        >>> import zarrkit as zk
        >>> g = zk.group({}, attributes={"object_id": "file-1"})
        >>> dev = g.create_group("devices/dev", attributes={"object_id": "dev-1"})
        >>> g.create_group("eg").create_link("device", dev).to_json()
        {'name': 'device', 'source': '.', 'path': '/devices/dev', 'object_id': 'dev-1', \
'source_object_id': 'file-1'}
        >>> g["eg/device"].attrs["object_id"]
        'dev-1'
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
        entry = link.to_json()
        where = f"{LINK_ATTRIBUTE} of group {self.name!r}"

        def edit(current: dict[str, Any]) -> dict[str, Any]:
            existing = current.get(LINK_ATTRIBUTE)
            if name in parse_links(existing, where=where):
                raise ContainsNodeError(f"group {self.name!r} already has a link {name!r}")
            return {**current, LINK_ATTRIBUTE: [*(existing or []), entry]}

        self._attrs._change(edit)
        return link

    def tree(self) -> str:
        """The hierarchy below this group as indented text; links show as ``name ->
        /target/path`` (``name -> source:/path`` for another store) and are not expanded.

        >>> import zarrkit as zk
        >>> g = zk.group({}); _ = g.create_array("a/x", shape=(2,), dtype="u1")
        >>> _ = g.create_link("b", "/a/x")
        >>> print(g.tree())
        /
        ├── a
        │   └── x (2,) uint8
        └── b -> /a/x
        """
        lines = [self.name if self._path else "/"]

        def walk(group: Group, indent: str) -> None:
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
                    walk(node, indent + ("    " if last else "│   "))

        walk(self, "")
        return "\n".join(lines)

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
        where = f"{LINK_ATTRIBUTE} of group {self.name!r}"

        def edit(current: dict[str, Any]) -> dict[str, Any]:
            existing = current.get(LINK_ATTRIBUTE)
            if name not in parse_links(existing, where=where):
                raise NodeNotFoundError(f"group {self.name!r} has no link {name!r}")
            kept = [entry for entry in existing or [] if entry.get("name") != name]
            rest = {k: v for k, v in current.items() if k != LINK_ATTRIBUTE}
            return {**rest, LINK_ATTRIBUTE: kept} if kept else rest

        self._attrs._change(edit)

    def create_group(
        self, name: str, *, overwrite: bool = False, attributes: dict[str, Any] | None = None
    ) -> Group:
        """Create a group (and missing intermediate groups) at ``name``."""
        self._check_writable()
        path = self._child_path(name)
        create_group_node(self._store, path, attributes, overwrite=overwrite,
                          zarr_format=self._zarr_format)
        return Group(self._store, path, zarr_format=self._zarr_format,
                     attributes=attributes or {})

    def require_group(self, name: str, **kwargs: Any) -> Group:
        """The group at ``name``, created if missing; an array there is an error."""
        path = self._child_path(name)
        kind = node_kind(self._store, path, self._consolidated)
        if kind == "group":
            group = self[name]
            assert isinstance(group, Group)
            return group
        if kind == "array":
            raise ContainsNodeError(f"an array already exists at path {path!r}")
        return self.create_group(name, **kwargs)

    def create_array(
        self,
        name: str,
        *,
        shape: Any,
        dtype: Any = "float64",
        attributes: dict[str, Any] | None = None,
        overwrite: bool = False,
        write_empty_chunks: bool | None = None,
        data: Any = None,
        zarr_format: int | None = None,
        **options: Any,
    ) -> Array:
        """Create an array at ``name``; ``options`` are those of
        :func:`zarrkit.create_array` (chunks, shards, fill_value, compressors...). The
        format defaults to the group's."""
        self._check_writable()
        path = self._child_path(name)
        metadata = array_metadata(
            zarr_format=zarr_format or self._zarr_format, shape=shape, dtype=dtype,
            attributes=attributes, **options,
        )
        create_array_node(self._store, path, metadata, attributes, overwrite=overwrite)
        array = Array(self._store, path, metadata, attributes=attributes or {},
                      write_empty_chunks=write_empty_chunks)
        if data is not None:
            array[...] = data
        return array

    def require_array(self, name: str, *, shape: Any, dtype: Any = "float64",
                      **kwargs: Any) -> Array:
        """The array at ``name`` if it exists with this shape and dtype, else a new one."""
        path = self._child_path(name)
        kind = node_kind(self._store, path, self._consolidated)
        if kind == "group":
            raise ContainsNodeError(f"a group already exists at path {path!r}")
        if kind == "array":
            array = self[name]
            assert isinstance(array, Array)
            from zarrkit.hierarchy.creation import normalize_shape
            from zarrkit.metadata.dtypes import normalize_dtype

            if array.shape != normalize_shape(shape):
                raise TypeError(f"array {path!r} exists with shape {array.shape}, not {shape}")
            if array.dtype != normalize_dtype(dtype):
                raise TypeError(f"array {path!r} exists with dtype {array.dtype}, not {dtype}")
            return array
        return self.create_array(name, shape=shape, dtype=dtype, **kwargs)

    def update_attributes(self, attributes: dict[str, Any]) -> Group:
        """Merge ``attributes`` in one write; return self."""
        self._attrs.update(attributes)
        return self


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


def open_group_node(
    store: Store, path: str, *, read_only: bool, consolidated: Consolidated | None = None,
    zarr_format: int | None = None,
) -> Group:
    """The existing group at ``path``, or GroupNotFoundError."""
    found = require_group(store, path, consolidated, zarr_format)
    group = node_from_found(store, found, read_only=read_only, consolidated=consolidated)
    assert isinstance(group, Group)
    return group
