"""The viewer's JSON documents: a group's members (one level of the tree at a time, so a
large hierarchy opens quickly) and everything about one node.

>>> import zarrkit as zk
>>> store = {}
>>> _ = zk.group(store).create_array("a", shape=(3, 4), dtype="u2")
>>> [(m["name"], m["kind"], m["shape"]) for m in members(store, "")]
[('a', 'array', [3, 4])]
>>> describe(store, "a")["preview"]
'image'
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrkit.errors import NodeNotFoundError, ZarrkitError
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.group import Group


def plain(value: Any) -> Any:
    """``value`` with only JSON types that a browser parses: numpy scalars and arrays as
    numbers and lists, non-finite floats as the strings Zarr uses (``"NaN"``, ...).

    >>> plain({"a": (np.float32(1.5), float("nan"))})
    {'a': [1.5, 'NaN']}
    """
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, (complex, bytes)):
        return repr(value)
    return value


def _open(store: Any, path: str) -> Array | Group:
    from zarrkit.api import open as open_node

    node = open_node(store, path=path, mode="r")
    if not isinstance(node, (Array, Group)):  # pragma: no cover - zarrkit.open returns these
        raise NodeNotFoundError(f"no node at {path!r}")
    return node


def _summary(name: str, path: str, node: Array | Group) -> dict[str, Any]:
    if isinstance(node, Array):
        return {"name": name, "path": path, "kind": "array", "shape": list(node.shape),
                "dtype": str(node.dtype), "zarr_format": node.zarr_format}
    return {"name": name, "path": path, "kind": "group", "zarr_format": node.zarr_format}


def members(store: Any, path: str) -> list[dict[str, Any]]:
    """The direct members of the group at ``path`` (arrays, groups and links), by name.

    >>> import zarrkit as zk
    >>> store = {}
    >>> _ = zk.group(store).create_group("g")
    >>> members(store, "")
    [{'name': 'g', 'path': 'g', 'kind': 'group', 'zarr_format': 3}]
    """
    from zarrkit.api import open_group

    group = open_group(store, path=path, mode="r")
    prefix = f"{path}/" if path else ""
    found = [_summary(name, prefix + name, node) for name, node in group.members()]
    try:
        links = group.links()
    except ZarrkitError:
        links = {}  # a malformed link attribute: the attributes pane shows it as it is
    found += [{"name": name, "path": prefix + name, "kind": "link", "target": str(link.path),
               "source": str(link.source)} for name, link in links.items()]
    return sorted(found, key=lambda member: str(member["name"]))


def describe(store: Any, path: str) -> dict[str, Any]:
    """Everything the viewer shows about the node at ``path``: its kind, format, metadata
    document, attributes, a summary table, and for an array which preview it has
    (``"image"``, ``"line"`` or None), the lengths of the axes a preview holds fixed, and
    for a 0-d array its value.

    >>> import zarrkit as zk
    >>> store = {}
    >>> _ = zk.create_array(store, name="v", shape=(2, 3, 4), dtype="f8", attributes={"u": 1})
    >>> d = describe(store, "v")
    >>> d["kind"], d["attributes"], d["held_axes"], d["preview"]
    ('array', {'u': 1}, [2], 'image')
    """
    node = _open(store, path)
    document: dict[str, Any] = {
        "path": path, "name": path.rsplit("/", 1)[-1] if path else "/",
        "kind": "array" if isinstance(node, Array) else "group",
        "zarr_format": node.zarr_format,
        "metadata": plain(node.metadata.to_json()),
        "attributes": plain(node.attrs.asdict()),
    }
    if isinstance(node, Array):
        numeric = node.dtype.kind in "biufcmM"
        document.update(
            shape=list(node.shape), dtype=str(node.dtype), chunks=plain(node.chunks),
            shards=plain(node.shards), dimension_names=plain(node.dimension_names),
            info=[list(row) for row in node.info.items()],
            held_axes=list(node.shape[:-2]) if node.ndim > 2 else [],
            preview=(None if not numeric or node.ndim == 0 or node.size == 0
                     else "line" if node.ndim == 1 else "image"),
        )
        if node.ndim == 0:
            document["value"] = plain(np.asarray(node[()]).tolist())
    return document
