"""Moving a node from one hdmf-zarr convention to the other (hdmf-zarr 0.13's in Zarr v2
files, 0.14's in v3 ones: :class:`~zarrkit.hierarchy.links.Convention`), for
:func:`zarrkit.convert`: which reserved attributes a copy of the node carries, and how the
copy of a dataset is stored.

* links: ``zarr_link`` <-> ``_LINKS`` (the links the group holds as hdmf-zarr 0.14 reads
  them, in the entry form of the destination; 0.14's entries have no object ids);
* reference attributes: ``{"value": {...}, "zarr_dtype": "object"}`` <->
  ``{"_REFERENCE": {"source", "path"}}``;
* dataset dtypes: ``zarr_dtype`` <-> ``_DTYPE`` (``"object"`` <-> ``"object_reference"``;
  a compound's field list <-> ``_REFERENCE_FIELDS``; ``"bytes"`` text becomes ``"str"``,
  as hdmf-zarr 0.14 has no byte strings);
* scalar datasets: shape ``(1,)`` with ``zarr_dtype: "scalar"`` <-> shape ``()``;
* the cached specifications' sources (:func:`specification_prefix`): 0.13 stores each
  as a scalar dataset (shape ``(1,)``, ``zarr_dtype: "scalar"``), 0.14 as a dataset of
  shape ``()`` with no attributes.

A node already in the destination's convention is left as it is; a node with none of
these attributes is no hdmf-zarr node, and is left alone too.

>>> from zarrkit.hierarchy.links import HDMF_ZARR_014
>>> group_attributes({"zarr_link": [{"name": "d", "source": ".", "path": "/dev",
...     "object_id": "o-1"}], "n": 1}, HDMF_ZARR_014, "/eg")
{'n': 1, '_LINKS': [{'source': '.', 'path': '/dev', 'name': 'd'}]}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from zarrkit.errors import MetadataError
from zarrkit.hdmf.dtypes import COMPOUND_FIELD_DTYPES, REFERENCE_DTYPES, SCALAR
from zarrkit.hdmf.specifications import spec_location
from zarrkit.hierarchy.links import (
    HDMF_ZARR_013,
    HDMF_ZARR_014,
    Convention,
    read_links,
)
from zarrkit.hierarchy.nodes import LINK_ATTRIBUTE, LINKS_ATTRIBUTE_V3
from zarrkit.references import (
    REFERENCE_FIELDS,
    decode_attribute,
    encode_attribute,
    is_reference_attribute,
    is_reference_dataset,
    reference_fields,
)

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array
    from zarrkit.hierarchy.group import Group

_DTYPE_ATTRIBUTES = (HDMF_ZARR_013.dtype_attribute, HDMF_ZARR_014.dtype_attribute,
                     REFERENCE_FIELDS)


def group_attributes(attributes: Mapping[str, Any], to: Convention, name: str
                     ) -> dict[str, Any]:
    """``attributes`` (of the node named ``name``) with its links and reference
    attributes in convention ``to``; the other attributes as they are, in their order.

    >>> from zarrkit.hierarchy.links import HDMF_ZARR_013
    >>> group_attributes({"t": {"_REFERENCE": {"source": ".", "path": "/x"}}},
    ...                  HDMF_ZARR_013, "/g")["t"]["zarr_dtype"]
    'object'
    """
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if key in (LINK_ATTRIBUTE, LINKS_ATTRIBUTE_V3):
            continue
        out[key] = (encode_attribute(decode_attribute(value), to)
                    if is_reference_attribute(value) else value)
    links = read_links(attributes, name)
    if links:
        out[to.link_attribute] = [link.to_json(to) for link in links.values()]
    return out


def _in_convention(attributes: Mapping[str, Any], convention: Convention) -> bool:
    if convention.zarr_format == 3:
        return HDMF_ZARR_014.dtype_attribute in attributes or REFERENCE_FIELDS in attributes
    return HDMF_ZARR_013.dtype_attribute in attributes


def is_hdmf_dataset(array: Array) -> bool:
    """Whether ``array`` carries an hdmf-zarr dtype attribute (``zarr_dtype``,
    ``_DTYPE`` or ``_REFERENCE_FIELDS``).

    >>> import zarrkit as zk
    >>> is_hdmf_dataset(zk.group({}).create_array("x", shape=(1,), dtype="u1",
    ...                                           attributes={"_DTYPE": "uint8"}))
    True
    """
    attributes = array.attrs
    return any(key in attributes for key in _DTYPE_ATTRIBUTES)


def specification_prefix(root: Group) -> str | None:
    """The path prefix (``"/specifications/"``) of the datasets below which ``root``, the
    root group of an hdmf-zarr file, caches its specifications (its ``.specloc``); None
    for a group with no ``.specloc``, or one that names no path (then it is no hdmf-zarr
    file, and its arrays are copied as they are).

    >>> import zarrkit as zk
    >>> specification_prefix(zk.group({}, attributes={".specloc": "specifications"}))
    '/specifications/'
    """
    try:
        location = spec_location(root)
    except MetadataError:
        return None
    return None if not location else f"/{location}/"


def scalar_shape(array: Array, to: Convention, *, specification: bool = False
                 ) -> tuple[int, ...] | None:
    """The shape of ``array``'s copy in convention ``to`` when it is a scalar dataset
    whose shape changes (``(1,)`` with ``zarr_dtype: "scalar"`` -> ``()``; an hdmf-zarr
    0.14 dataset of shape ``()`` -> ``(1,)``), else None. ``specification``: ``array``
    is a source of the cached specifications, a scalar dataset in both conventions
    (0.14 gives it no dtype attribute).

    >>> import zarrkit as zk
    >>> a = zk.group({}).create_array("s", shape=(1,), dtype="f8",
    ...                               attributes={"zarr_dtype": "scalar"})
    >>> scalar_shape(a, HDMF_ZARR_014)
    ()
    """
    if specification:
        return to.scalar_shape if array.shape in ((), (1,)) and (
            array.shape != to.scalar_shape) else None
    attributes = array.attrs
    if to.zarr_format == 3 and array.shape == (1,) and (
            attributes.get(HDMF_ZARR_013.dtype_attribute) == SCALAR) and (
            not _in_convention(attributes, to)):
        return ()
    if to.zarr_format == 2 and array.shape == () and is_hdmf_dataset(array) and (
            not _in_convention(attributes, to)):
        return (1,)
    return None


def _type_name(array: Array) -> str:
    """hdmf-zarr 0.14's ``_DTYPE`` of a dataset of ``array``'s elements."""
    return "str" if array.dtype.kind in "OTSU" else array.dtype.name


def dataset_attributes(array: Array, to: Convention, *, specification: bool = False
                       ) -> dict[str, Any]:
    """The attributes of ``array``'s copy in convention ``to``: reference attributes
    translated (:func:`group_attributes`) and, unless the array already follows ``to``,
    its hdmf dtype in ``to``'s attribute (see the module docstring). ``specification``:
    ``array`` is a source of the cached specifications (``zarr_dtype: "scalar"`` in
    0.13's convention, no dtype attribute in 0.14's).

    >>> import zarrkit as zk
    >>> a = zk.group({}, zarr_format=2).create_array("s", shape=(1,), dtype="f8",
    ...     attributes={"zarr_dtype": "scalar", "unit": "m"})
    >>> dataset_attributes(a, HDMF_ZARR_014)
    {'unit': 'm', '_DTYPE': 'float64'}
    """
    attributes = array.attrs.asdict()
    out = group_attributes(attributes, to, array.name)
    if specification:
        for key in _DTYPE_ATTRIBUTES:
            out.pop(key, None)
        if to.zarr_format == 2:
            out[to.dtype_attribute] = SCALAR
        return out
    if not is_hdmf_dataset(array) or _in_convention(attributes, to):
        return out
    for key in _DTYPE_ATTRIBUTES:
        out.pop(key, None)
    if is_reference_dataset(array):
        fields = reference_fields(array)
        if fields is None:
            out[to.dtype_attribute] = to.reference_dtype
        elif to.zarr_format == 3:
            out[REFERENCE_FIELDS] = [n for n, d in fields if d in REFERENCE_DTYPES]
        else:
            out[to.dtype_attribute] = [{"name": n, "dtype": COMPOUND_FIELD_DTYPES[d][1]}
                                       for n, d in fields]
        return out
    value = attributes.get(HDMF_ZARR_014.dtype_attribute,
                           attributes.get(HDMF_ZARR_013.dtype_attribute))
    if isinstance(value, list):  # a compound of numbers: 0.14's struct says it all
        if to.zarr_format == 2:
            out[to.dtype_attribute] = value
        return out
    if to.zarr_format == 3:
        out[to.dtype_attribute] = _type_name(array) if value in (SCALAR, "bytes") or (
            array.dtype.kind in "OTSU") else value
    else:
        out[to.dtype_attribute] = SCALAR if array.shape == () else value
    return out
