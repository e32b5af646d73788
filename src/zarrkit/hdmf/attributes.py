"""The attributes of a node as the hdmf-zarr convention layer sees them.

hdmf-zarr reserves attribute names for its own machinery: ``zarr_link`` (a group's links,
:mod:`zarrkit.hierarchy.links`), ``zarr_dtype`` (a dataset's hdmf dtype,
:mod:`zarrkit.hdmf.dtypes`) and, on the root group, ``.specloc`` (where the cached
specifications are, :mod:`zarrkit.hdmf.specifications`). :func:`user_attributes` leaves
those out and decodes reference attributes (``{"value": {...}, "zarr_dtype": "object"}``)
into :class:`~zarrkit.references.Reference` objects; the stored attributes (``node.attrs``)
are untouched.

>>> import zarrkit as zk
>>> from zarrkit.references import Reference, encode_attribute
>>> root = zk.group({}, attributes={".specloc": "specifications", "object_id": "f-1"})
>>> user_attributes(root)
{'object_id': 'f-1'}
>>> g = root.create_group("g", attributes={"target": encode_attribute(Reference("/t"))})
>>> user_attributes(g)["target"].path
'/t'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from zarrkit.hierarchy.links import LINK_ATTRIBUTE
from zarrkit.references import ZARR_DTYPE, decode_attribute

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array
    from zarrkit.hierarchy.group import Group

#: The root group attribute holding the path of the cached specifications' group.
SPEC_LOC_ATTRIBUTE = ".specloc"

#: The attributes hdmf-zarr reserves on any group or dataset.
RESERVED_ATTRIBUTES = frozenset({LINK_ATTRIBUTE, ZARR_DTYPE})

#: The attributes hdmf-zarr reserves on the root group only.
RESERVED_ROOT_ATTRIBUTES = frozenset({SPEC_LOC_ATTRIBUTE})


def is_reserved(name: str, *, root: bool = False) -> bool:
    """Whether ``name`` is an attribute that hdmf-zarr reserves on a node (on the root
    group when ``root``).

    >>> is_reserved("zarr_dtype"), is_reserved(".specloc"), is_reserved(".specloc", root=True)
    (True, False, True)
    """
    return name in RESERVED_ATTRIBUTES or (root and name in RESERVED_ROOT_ATTRIBUTES)


def user_attributes(node: Array | Group) -> dict[str, Any]:
    """The attributes of ``node`` in stored order, without those hdmf-zarr reserves
    (``zarr_link``, ``zarr_dtype``, and ``.specloc`` on the root group), reference
    attributes decoded into :class:`~zarrkit.references.Reference` objects (a list of
    them for a list of references).

    hdmf-zarr's reader drops a ``.specloc`` attribute on any node; here only the root's is
    reserved, as the storage spec says, so another node's ``.specloc`` is kept.

    >>> import zarrkit as zk
    >>> a = zk.group({}).create_array("x", shape=(1,), dtype="i8",
    ...     attributes={"zarr_dtype": "int64", "unit": "m"})
    >>> user_attributes(a)
    {'unit': 'm'}
    """
    root = node.path == ""
    attributes: Mapping[str, Any] = node.attrs.asdict()
    return {name: decode_attribute(value) for name, value in attributes.items()
            if not is_reserved(name, root=root)}
