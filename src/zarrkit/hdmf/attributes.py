"""The attributes of a node as the hdmf-zarr convention layer sees them.

hdmf-zarr reserves attribute names for its own machinery. hdmf-zarr 0.13 (Zarr v2):
``zarr_link`` (a group's links, :mod:`zarrkit.hierarchy.links`) and ``zarr_dtype`` (a
dataset's hdmf dtype, :mod:`zarrkit.hdmf.dtypes`); hdmf-zarr 0.14 (Zarr v3): ``_LINKS``,
``_DTYPE`` and ``_REFERENCE_FIELDS`` (a compound dataset's reference fields,
:mod:`zarrkit.references`), and it hides 0.13's names too. Both put ``.specloc`` on the
root group (where the cached specifications are, :mod:`zarrkit.hdmf.specifications`).
:func:`user_attributes` leaves all of those out and decodes reference attributes of
either convention (``{"value": {...}, "zarr_dtype": "object"}``, ``{"_REFERENCE": {...}}``)
into :class:`~zarrkit.references.Reference` objects; the stored attributes
(``node.attrs``) are untouched.

>>> import zarrkit as zk
>>> from zarrkit.references import Reference, encode_attribute
>>> root = zk.group({}, attributes={".specloc": "specifications", "object_id": "f-1"})
>>> user_attributes(root)
{'object_id': 'f-1'}
>>> g = root.create_group("g", attributes={"target": encode_attribute(Reference("/t"), root),
...                                        "_LINKS": []})
>>> user_attributes(g)["target"].path
'/t'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from zarrkit.hierarchy.links import HDMF_ZARR_013, HDMF_ZARR_014
from zarrkit.references import REFERENCE_FIELDS, decode_attribute

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array
    from zarrkit.hierarchy.group import Group

#: The root group attribute holding the path of the cached specifications' group.
SPEC_LOC_ATTRIBUTE = ".specloc"

#: The attributes hdmf-zarr reserves on any group or dataset (0.14 hides those of both
#: conventions, whatever the file's).
RESERVED_ATTRIBUTES = frozenset({
    HDMF_ZARR_013.link_attribute, HDMF_ZARR_013.dtype_attribute,
    HDMF_ZARR_014.link_attribute, HDMF_ZARR_014.dtype_attribute, REFERENCE_FIELDS})

#: The attributes hdmf-zarr reserves on the root group only.
RESERVED_ROOT_ATTRIBUTES = frozenset({SPEC_LOC_ATTRIBUTE})


def is_reserved(name: str, *, root: bool = False) -> bool:
    """Whether ``name`` is an attribute that hdmf-zarr reserves on a node (on the root
    group when ``root``).

    >>> is_reserved("zarr_dtype"), is_reserved(".specloc"), is_reserved(".specloc", root=True)
    (True, False, True)
    >>> is_reserved("_DTYPE"), is_reserved("_REFERENCE_FIELDS"), is_reserved("_ARRAY_DIMENSIONS")
    (True, True, False)
    """
    return name in RESERVED_ATTRIBUTES or (root and name in RESERVED_ROOT_ATTRIBUTES)


def user_attributes(node: Array | Group) -> dict[str, Any]:
    """The attributes of ``node`` in stored order, without those hdmf-zarr reserves
    (:data:`RESERVED_ATTRIBUTES`, and ``.specloc`` on the root group), reference
    attributes decoded into :class:`~zarrkit.references.Reference` objects (a list of
    them for a list of references).

    hdmf-zarr's reader drops a ``.specloc`` attribute on any node; here only the root's is
    reserved, as the storage spec says, so another node's ``.specloc`` is kept. Like
    hdmf-zarr, this keeps ``_ARRAY_DIMENSIONS``, which hdmf-zarr 0.14 writes on datasets.

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
