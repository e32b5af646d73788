"""zarr-python's convenience functions: ``save``, ``save_array``, ``save_group``, ``load``,
``open_consolidated``, ``create_hierarchy`` and ``tree``.

>>> import zarrkit as zk
>>> s = {}
>>> zk.save(s, np.arange(3))
>>> zk.load(s)
array([0, 1, 2])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from zarrkit.api import _specific_exists_error, create_array, open, open_group
from zarrkit.errors import ContainsNodeError, MetadataError
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.group import Group
from zarrkit.hierarchy.nodes import create_array_node, create_group_node, find_node
from zarrkit.metadata.jsonio import as_json_lists
from zarrkit.metadata.v2 import ArrayMetadataV2
from zarrkit.metadata.v3 import ArrayMetadataV3
from zarrkit.paths import ancestors, normalize_path
from zarrkit.storage.resolve import StoreLike, make_store


def save_array(store: StoreLike, arr: Any, *, zarr_version: int | None = None,
               zarr_format: int | None = None, path: str | None = None,
               storage_options: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """Store the numpy array ``arr`` at ``path``, replacing what is there; ``kwargs`` are
    those of :func:`zarrkit.create_array`.

    >>> import zarrkit as zk
    >>> s = {}
    >>> zk.save_array(s, np.ones(2), zarr_format=2)
    >>> zk.load(s)
    array([1., 1.])
    """
    if not (hasattr(arr, "shape") and hasattr(arr, "dtype")):
        if not np.isscalar(arr):
            raise TypeError("arr must be a numpy array or another array with shape and dtype")
        arr = np.asarray(arr)
    kwargs.pop("mode", None)
    overwrite = kwargs.pop("overwrite", True)
    chunks = getattr(arr, "chunks", None)
    if not (isinstance(chunks, tuple) and len(chunks) == len(arr.shape)):
        chunks = "auto"
    create_array(store, name=path, data=arr, chunks=kwargs.pop("chunks", chunks),
                 zarr_format=zarr_format or zarr_version, overwrite=overwrite,
                 storage_options=storage_options, **kwargs)


def save_group(store: StoreLike, *args: Any, zarr_version: int | None = None,
               zarr_format: int | None = None, path: str | None = None,
               storage_options: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """Store numpy arrays in a new group at ``path``: positional ones as ``arr_0``,
    ``arr_1``..., keyword ones under their names.

    >>> import zarrkit as zk
    >>> s = {}
    >>> zk.save_group(s, np.arange(2), b=np.zeros(1))
    >>> sorted(zk.open_group(s, mode="r"))
    ['arr_0', 'b']
    """
    arrays = {f"arr_{i}": a for i, a in enumerate(args)} | kwargs
    if not arrays:
        raise ValueError("at least one array must be provided")
    for name, value in arrays.items():
        if not (hasattr(value, "shape") and hasattr(value, "dtype")):
            raise TypeError(f"{name!r} must be a numpy array or another array-like")
    root = open_group(store, mode="w", path=path, zarr_format=zarr_format or zarr_version,
                      storage_options=storage_options)
    for name, value in arrays.items():
        save_array(root.store, value, path=f"{root.path}/{name}".lstrip("/"),
                   zarr_format=root.zarr_format)


def save(store: StoreLike, *args: Any, zarr_version: int | None = None,
         zarr_format: int | None = None, path: str | None = None,
         storage_options: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """One array: :func:`save_array`; several, or named ones: :func:`save_group`.
    ``storage_options`` go to the store (zarr-python 3.4), never into the group.

    >>> import zarrkit as zk
    >>> s = {}
    >>> zk.save(s, a=np.arange(2))
    >>> zk.load(s)["a"]
    array([0, 1])
    """
    if not args and not kwargs:
        raise ValueError("at least one array must be provided")
    if len(args) == 1 and not kwargs:
        save_array(store, args[0], zarr_version=zarr_version, zarr_format=zarr_format,
                   path=path, storage_options=storage_options)
    else:
        save_group(store, *args, zarr_version=zarr_version, zarr_format=zarr_format,
                   path=path, storage_options=storage_options, **kwargs)


def load(store: StoreLike, path: str | None = None, zarr_format: int | None = None,
         zarr_version: int | None = None) -> Any:
    """The values of the array at ``path`` as a numpy array. For a group, zarrkit returns
    a dict of its arrays' values by name (zarr-python 3 raises NotImplementedError).

    >>> import zarrkit as zk
    >>> s = {}
    >>> zk.save(s, np.arange(2), path="x")
    >>> zk.load(s, path="x")
    array([0, 1])
    """
    node = open(store, mode="r", path=path, zarr_format=zarr_format or zarr_version)
    if isinstance(node, Array):
        return node[...]
    return {name: member[...] for name, member in node.arrays()}


def open_consolidated(store: StoreLike = None, *, use_consolidated: bool = True,
                      mode: str = "a", path: str | None = None,
                      zarr_format: int | None = None, zarr_version: int | None = None,
                      storage_options: dict[str, Any] | None = None,
                      attributes: dict[str, Any] | None = None, **kwargs: Any) -> Group:
    """Open a group from its consolidated metadata, which must exist (as
    :func:`zarrkit.open_group` with ``use_consolidated=True``).

    >>> import zarrkit as zk
    >>> s = {}
    >>> _ = zk.group(s).create_array("a", shape=(1,), dtype="u1")
    >>> _ = zk.consolidate_metadata(s)
    >>> zk.open_consolidated(s, mode="r").consolidated
    True
    """
    if use_consolidated is not True:
        raise TypeError("use_consolidated must be True in open_consolidated; use "
                        "open_group(use_consolidated=False) to bypass consolidated metadata")
    return open_group(store, mode=mode, path=path, zarr_format=zarr_format,
                      zarr_version=zarr_version, storage_options=storage_options,
                      attributes=attributes, use_consolidated=True, **kwargs)


def _document_of(node: Any) -> dict[str, Any]:
    """The stored document of a node description: a zarrkit metadata object, a
    zarr-python one (``to_dict()``) or the JSON document itself."""
    if hasattr(node, "to_json"):
        return dict(node.to_json())
    if hasattr(node, "to_dict"):
        return dict(as_json_lists(node.to_dict()))
    if isinstance(node, Mapping):
        return dict(as_json_lists(dict(node)))
    raise TypeError(f"cannot create a node from {type(node).__name__}: give array or group "
                    "metadata (zarrkit's, zarr-python's) or its JSON document")


def _add_implicit_groups(store: Any, documents: dict[str, dict[str, Any]]) -> None:
    """Add a plain group for every ancestor of a described node that neither the
    description nor the store holds, so that it is created and yielded like the described
    nodes (zarr-python does so); ancestors the store already holds are left alone."""
    if not documents:
        return
    zarr_format = next(iter(documents.values())).get("zarr_format")
    group_document = ({"zarr_format": 3, "node_type": "group"} if zarr_format == 3
                      else {"zarr_format": 2})
    missing = {parent for path in documents for parent in ancestors(path)} - set(documents)
    for parent in sorted(missing):
        if find_node(store, parent) is None:
            documents[parent] = dict(group_document)


def create_hierarchy(*, store: StoreLike, nodes: Mapping[str, Any],
                     overwrite: bool = False) -> Iterator[tuple[str, Array | Group]]:
    """Create the nodes described by ``nodes`` (path -> metadata) and yield each as
    ``(path, node)``, parents first. A description is zarrkit's metadata object
    (``ArrayMetadataV3``, ``GroupMetadataV3``, ``ArrayMetadataV2``, ``GroupMetadataV2``),
    zarr-python's (``ArrayV3Metadata``, ``GroupMetadata``...) or the stored JSON document
    (``{"zarr_format": 3, "node_type": "group", "attributes": {...}}``; a format-2 one may
    carry ``"attributes"`` too). Missing parents become groups and are yielded too; parent
    groups already stored are left as they are. Nodes are created when the iterator is
    consumed, as in zarr-python.

    >>> import zarrkit as zk
    >>> from zarrkit.metadata.v3 import GroupMetadataV3
    >>> s = {}
    >>> made = dict(zk.create_hierarchy(store=s, nodes={
    ...     "": GroupMetadataV3(attributes={"t": 1}),
    ...     "a/x": {"zarr_format": 3, "node_type": "array", "shape": [2],
    ...             "data_type": "uint8", "fill_value": 0, "codecs": [{"name": "bytes"}],
    ...             "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
    ...             "chunk_key_encoding": {"name": "default"}}}))
    >>> sorted(made), zk.open_group(s, mode="r").attrs["t"]
    (['', 'a', 'a/x'], 1)
    """
    store_obj = make_store(store, mode="a")
    documents = {normalize_path(p): _document_of(n) for p, n in nodes.items()}
    _add_implicit_groups(store_obj, documents)
    for path in sorted(documents, key=lambda p: (p.count("/") + bool(p), p)):
        document = documents[path]
        zarr_format = document.get("zarr_format")
        if zarr_format == 3:
            is_array = document.get("node_type") == "array"
        elif zarr_format == 2:
            is_array = "shape" in document
        else:
            raise MetadataError(f"node {path!r}: zarr_format must be 2 or 3")
        attributes = document.get("attributes") or {}
        metadata: Any = None
        if is_array and zarr_format == 3:
            metadata = ArrayMetadataV3.from_json(document)
        elif is_array:
            metadata = ArrayMetadataV2.from_json(
                {k: v for k, v in document.items() if k != "attributes"})
        try:
            if metadata is None:
                create_group_node(store_obj, path, attributes, zarr_format=zarr_format,
                                  overwrite=overwrite)
            else:
                create_array_node(store_obj, path, metadata, attributes, overwrite=overwrite)
        except ContainsNodeError as error:
            raise _specific_exists_error(store_obj, path, error) from error
        if metadata is None:
            yield path, open_group(store_obj, mode="r+", path=path, use_consolidated=False)
        else:
            yield path, Array(store_obj, path, metadata, attributes=attributes)


class TreeText(str):
    """The text of a hierarchy's tree, shown as itself (not quoted) at a prompt, as
    zarr-python's tree object is.

    >>> TreeText("/")
    /
    """

    def __repr__(self) -> str:
        return str(self)


def tree(grp: Group, expand: bool | None = None, level: int | None = None) -> TreeText:
    """The hierarchy below ``grp`` as indented text (:meth:`zarrkit.Group.tree`); ``level``
    limits the depth shown. ``expand`` is accepted for zarr-python's sake.

    >>> import zarrkit as zk
    >>> g = zk.group(); _ = g.create_array("a/x", shape=(2,), dtype="u1")
    >>> print(zk.tree(g, level=1))
    /
    └── a
    """
    lines = grp.tree().splitlines()
    if level is not None:
        # Every level of depth indents a line by four characters.
        lines = [lines[0], *(line for line in lines[1:]
                             if _depth(line) <= level)]
    return TreeText("\n".join(lines))


def _depth(line: str) -> int:
    for i, ch in enumerate(line):
        if ch.isalnum() or ch in "_.-/":
            return i // 4
    return 0


__all__ = [
    "create_hierarchy",
    "load",
    "open_consolidated",
    "save",
    "save_array",
    "save_group",
    "tree",
]
