"""hdmf's dtype names and how hdmf-zarr stores each (the "dtype mappings" of its storage
spec), and back from a stored dataset to its hdmf dtype.

Two vocabularies meet here:

* **hdmf dtype names**, as a schema writes them: ``"float"`` (32 bit), ``"double"``,
  ``"long"``, ``"int"``, ``"text"``, ``"ascii"``, ``"isodatetime"``, ``"ref"``... Their
  aliases fold to one canonical name each (:data:`HDMF_DTYPES`, :func:`canonical_dtype`):
  ``"float32"``, ``"float64"``, ``"int64"``, ``"int32"``, ``"int16"``, ``"int8"``,
  ``"uint64"``, ``"uint32"``, ``"uint16"``, ``"uint8"``, ``"bool"``, ``"text"``
  (unicode), ``"ascii"``, ``"isodatetime"``, ``"object"`` (an object reference), and a
  compound dtype: a list of ``{"name", "dtype"}`` fields.
* **``zarr_dtype`` attribute values**, which hdmf-zarr 0.13 writes on every dataset: the
  name of the Python or numpy type it stored (``"float64"``, ``"int16"``, ``"uint8"``,
  ``"bool"``; ``"str"`` for unicode text, ``"bytes"`` for ASCII text and ISO 8601 dates;
  ``"float"`` for data that was a list of Python floats, stored as 64 bit), ``"object"``
  for references, ``"scalar"`` for a scalar dataset (stored with shape ``(1,)``), or a
  list of ``{"name", "dtype"}`` for a compound one. So ``zarr_dtype`` ``"str"`` is
  unicode while the hdmf dtype ``"str"`` is ASCII, and ``zarr_dtype`` ``"float"`` is 64
  bit while the hdmf ``"float"`` is 32.
* **``_DTYPE`` attribute values**, which hdmf-zarr 0.14 writes on every dataset but
  compound ones (Zarr v3 files): the same type names (``"float64"``, ``"int32"``,
  ``"bool"``, ``"float"``...; ``"str"`` for all text, as Zarr v3 has no byte strings, so
  ASCII text and dates are stored and read as unicode), numpy's type codes for data
  written chunk by chunk (``"<f8"``), and ``"object_reference"`` for references. A
  scalar dataset has shape ``()`` and its element's type. A compound dataset has a v3
  ``struct`` data type and, with references, ``_REFERENCE_FIELDS``.

:func:`storage_dtype` maps an hdmf dtype to how hdmf-zarr stores it (numpy dtype, v2
object codec, ``zarr_dtype``; :meth:`StorageDtype.array_options` in either convention);
:func:`hdmf_dtype_of` reads a stored array's hdmf dtype, from its ``_DTYPE`` or
``zarr_dtype`` attribute where that tells more than the storage (references, compounds,
ASCII versus unicode in object arrays) and from the storage otherwise. ``"isodatetime"``
is stored as ASCII text, so it reads back as ``"ascii"`` (as ``"text"`` in 0.14's files).

>>> storage_dtype("float").dtype, storage_dtype("text").object_codec
(dtype('float32'), 'vlen-utf8')
>>> import zarrkit as zk
>>> root = zk.group({}, zarr_format=2)
>>> hdmf_dtype_of(root.create_array("t", shape=(2,), **storage_dtype("utf8").array_options()))
'text'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit.hierarchy.links import HDMF_ZARR_013, HDMF_ZARR_014, convention_for

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array

#: Every hdmf dtype name (the storage spec's table, plus ``uint64`` and ``bytes`` that
#: hdmf-zarr also maps) to its canonical name.
HDMF_DTYPES: dict[str, str] = {
    "float": "float32", "float32": "float32",
    "double": "float64", "float64": "float64",
    "long": "int64", "int64": "int64",
    "int": "int32", "int32": "int32",
    "int16": "int16", "int8": "int8",
    "uint64": "uint64", "uint32": "uint32", "uint16": "uint16", "uint8": "uint8",
    "bool": "bool",
    "text": "text", "utf": "text", "utf8": "text", "utf-8": "text",
    "ascii": "ascii", "str": "ascii", "bytes": "ascii",
    "isodatetime": "isodatetime",
    "ref": "object", "reference": "object", "object": "object",
}

#: The canonical names of the numeric types, whose numpy dtype has the same name.
NUMERIC_DTYPES = ("float32", "float64", "int64", "int32", "int16", "int8",
                  "uint64", "uint32", "uint16", "uint8", "bool")

#: The ``zarr_dtype`` value of a scalar dataset (stored with shape ``(1,)``).
SCALAR = "scalar"

#: numpy's names of its text and bool scalar types (numpy 2's and numpy 1's), which
#: hdmf-zarr writes in compound ``zarr_dtype`` lists, to the canonical names they stand for.
NUMPY_TYPE_NAMES: dict[str, str] = {
    "str_": "text", "unicode": "text", "bytes_": "ascii", "string_": "ascii", "bool_": "bool",
}

#: The names of object references, as hdmf dtypes and as ``zarr_dtype`` values.
REFERENCE_DTYPES = frozenset(name for name, canonical in HDMF_DTYPES.items()
                             if canonical == "object")

# zarr_dtype values (hdmf-zarr's names of Python and numpy types) of text in object arrays:
# "str" is Python's unicode type there, while the hdmf dtype "str" is ASCII.
_ZARR_DTYPE_TEXT = frozenset({"str"} | {
    name for name, canonical in (HDMF_DTYPES | NUMPY_TYPE_NAMES).items() if canonical == "text"})
_ZARR_DTYPE_ASCII = frozenset(
    name for name, canonical in (HDMF_DTYPES | NUMPY_TYPE_NAMES).items()
    if canonical == "ascii" and name not in _ZARR_DTYPE_TEXT)
# Python and numpy type names hdmf-zarr writes for numbers, as canonical names ("float" and
# "int" are Python's types there: 64 bit, while the hdmf dtypes "float" and "int" are 32).
_ZARR_DTYPE_NUMBERS = {name: name for name in NUMERIC_DTYPES} | {
    name: canonical for name, canonical in NUMPY_TYPE_NAMES.items()
    if canonical in NUMERIC_DTYPES} | {
    "float": "float64", "int": "int64", "float_": "float64", "int_": "int64"}
_OBJECT_CODECS = frozenset({"json2", "pickle", "msgpack2"})


def canonical_dtype(hdmf_dtype: Any) -> str | list[dict[str, Any]]:
    """The canonical name of an hdmf dtype: an alias folded (``"double"`` ->
    ``"float64"``), a reference spec (``{"target_type": ..., "reftype": "object"}``) as
    ``"object"``, a compound one as a list of ``{"name", "dtype"}`` with canonical field
    dtypes. ValueError for an unknown name (hdmf-zarr has no region references).

    >>> canonical_dtype("long"), canonical_dtype({"target_type": "Device", "reftype": "object"})
    ('int64', 'object')
    >>> canonical_dtype([{"name": "x", "dtype": "uint32"}, {"name": "t", "dtype": "ref"}])
    [{'name': 'x', 'dtype': 'uint32'}, {'name': 't', 'dtype': 'object'}]
    >>> canonical_dtype("float128")
    Traceback (most recent call last):
    ValueError: unknown hdmf dtype 'float128'
    """
    if isinstance(hdmf_dtype, str):
        name = HDMF_DTYPES.get(hdmf_dtype)
        if name is None:
            raise ValueError(f"unknown hdmf dtype {hdmf_dtype!r}")
        return name
    if isinstance(hdmf_dtype, Mapping):
        if "reftype" in hdmf_dtype:
            if hdmf_dtype["reftype"] not in REFERENCE_DTYPES:
                raise ValueError(f"unsupported reference type {hdmf_dtype['reftype']!r} "
                                 f"(hdmf-zarr stores object references only)")
            return "object"
        raise ValueError(f"unknown hdmf dtype {dict(hdmf_dtype)!r}")
    if isinstance(hdmf_dtype, list | tuple):
        fields = []
        for field in hdmf_dtype:
            if not isinstance(field, Mapping) or not isinstance(field.get("name"), str):
                raise ValueError(f"a compound field is a {{'name', 'dtype'}} object, "
                                 f"found {field!r}")
            dtype = canonical_dtype(field.get("dtype"))
            if isinstance(dtype, list):
                raise ValueError(f"compound field {field['name']!r} is itself compound")
            fields.append({"name": field["name"], "dtype": dtype})
        if not fields or len({f["name"] for f in fields}) != len(fields):
            raise ValueError(f"a compound dtype needs fields with distinct names, found "
                             f"{hdmf_dtype!r}")
        return fields
    raise ValueError(f"unknown hdmf dtype {hdmf_dtype!r}")


@dataclass(frozen=True)
class StorageDtype:
    """How hdmf-zarr stores a dataset of one hdmf dtype (Zarr v2).

    ``hdmf_dtype`` is the canonical name (a list of fields for a compound dtype),
    ``dtype`` the numpy dtype of the Zarr array (objects for text and references, a
    structured dtype for a compound), ``object_codec`` the id of the v2 object codec its
    elements need (``"vlen-utf8"``, ``"vlen-bytes"``; ``"json2"`` for references, as with
    hdmf-zarr's JSON object codec, whose default ``pickle`` zarrkit reads but never
    writes) or None, and ``zarr_dtype`` the attribute value hdmf-zarr writes with a
    non-scalar dataset (a scalar one has ``"scalar"``).

    >>> storage_dtype("isodatetime")
    StorageDtype(hdmf_dtype='isodatetime', dtype=dtype('O'), object_codec='vlen-bytes', \
zarr_dtype='bytes')
    """

    hdmf_dtype: str | tuple[tuple[str, str], ...]
    dtype: np.dtype[Any]
    object_codec: str | None
    zarr_dtype: Any

    @property
    def is_reference(self) -> bool:
        """Whether the dataset holds object references (wholly, or in compound fields).

        >>> storage_dtype("ref").is_reference, storage_dtype("int").is_reference
        (True, False)
        """
        if isinstance(self.hdmf_dtype, tuple):
            return any(dtype == "object" for _, dtype in self.hdmf_dtype)
        return self.hdmf_dtype == "object"

    @property
    def dtype_v3(self) -> str:
        """The ``_DTYPE`` value hdmf-zarr 0.14 writes with this dtype: numpy's type name
        of a number (``"float32"``, ``"bool"``), ``"str"`` for text of any kind,
        ``"object_reference"`` for references (a compound dataset has none: TypeError).

        >>> storage_dtype("isodatetime").dtype_v3, storage_dtype("float").dtype_v3
        ('str', 'float32')
        """
        if isinstance(self.hdmf_dtype, tuple):
            raise TypeError("hdmf-zarr 0.14 writes no _DTYPE on a compound dataset")
        if self.hdmf_dtype == "object":
            return HDMF_ZARR_014.reference_dtype
        return "str" if self.object_codec is not None else self.dtype.type.__name__

    def array_options(self, zarr_format: int = 2, *, scalar: bool = False) -> dict[str, Any]:
        """Keyword arguments for :meth:`Group.create_array
        <zarrkit.hierarchy.group.Group.create_array>` that store this dtype as hdmf-zarr
        does in a file of ``zarr_format``. hdmf-zarr 0.13 (v2): ``dtype`` (``str`` or
        ``bytes`` for text), the object codec as ``filters``, and the ``zarr_dtype``
        attribute (``"scalar"`` with ``scalar``; give such an array shape ``(1,)``).
        hdmf-zarr 0.14 (v3): ``dtype`` (``str`` for all text) and the ``_DTYPE``
        attribute (:attr:`dtype_v3`; a scalar has shape ``()``). Datasets of references
        are written by :func:`zarrkit.references.create_reference_dataset`: TypeError
        here.

        >>> options = storage_dtype("text").array_options()
        >>> options["dtype"], options["filters"], options["attributes"]
        (<class 'str'>, [{'id': 'vlen-utf8'}], {'zarr_dtype': 'str'})
        >>> storage_dtype("double").array_options(2, scalar=True)
        {'dtype': dtype('float64'), 'attributes': {'zarr_dtype': 'scalar'}}
        >>> storage_dtype("ascii").array_options(3)
        {'dtype': <class 'str'>, 'attributes': {'_DTYPE': 'str'}}
        """
        if self.is_reference:
            raise TypeError("datasets of references are created by "
                            "zarrkit.references.create_reference_dataset")
        if isinstance(self.hdmf_dtype, tuple) and self.dtype.hasobject:
            raise TypeError("compound datasets with text fields are created by "
                            "zarrkit.references.create_reference_dataset")
        convention = convention_for(zarr_format)
        dtype: Any = self.dtype
        if self.object_codec == "vlen-utf8" or (
                self.object_codec is not None and convention.zarr_format == 3):
            dtype = str
        elif self.object_codec == "vlen-bytes":
            dtype = bytes
        if convention.zarr_format == 3:
            return {"dtype": dtype, "attributes": {convention.dtype_attribute: self.dtype_v3}}
        options: dict[str, Any] = {
            "dtype": dtype, "attributes": {"zarr_dtype": SCALAR if scalar else self.zarr_dtype}}
        if self.object_codec is not None:
            options["filters"] = [{"id": self.object_codec}]
        return options


def storage_dtype(hdmf_dtype: Any) -> StorageDtype:
    """How hdmf-zarr stores a dataset of ``hdmf_dtype`` (any name or alias, a reference
    spec, or a compound list of ``{"name", "dtype"}``): see :class:`StorageDtype`.
    Numbers keep their type (little-endian), text of either kind and references are
    objects; a compound dtype is a structured one whose text and reference fields are
    objects, with ``zarr_dtype`` listing the fields as hdmf-zarr does (``"object"`` for a
    reference, numpy's type names for the others: ``"str_"``, ``"bytes_"``, ``"int32"``).

    >>> storage_dtype("int").dtype.str, storage_dtype("int").zarr_dtype
    ('<i4', 'int32')
    >>> s = storage_dtype([{"name": "idx_start", "dtype": "int"},
    ...                    {"name": "timeseries", "dtype": "object"}])
    >>> s.dtype, s.object_codec
    (dtype([('idx_start', '<i4'), ('timeseries', 'O')]), 'json2')
    >>> s.zarr_dtype
    [{'name': 'idx_start', 'dtype': 'int32'}, {'name': 'timeseries', 'dtype': 'object'}]
    """
    name = canonical_dtype(hdmf_dtype)
    if isinstance(name, list):
        parts: list[tuple[str, Any]] = []
        zarr_fields = []
        for field in name:
            element = _simple_storage(field["dtype"])
            parts.append((field["name"], element.dtype))
            zarr_fields.append({"name": field["name"], "dtype": _compound_zarr_dtype(element)})
        dtype = np.dtype(parts)
        return StorageDtype(
            hdmf_dtype=tuple((f["name"], f["dtype"]) for f in name), dtype=dtype,
            object_codec="json2" if dtype.hasobject else None, zarr_dtype=zarr_fields)
    return _simple_storage(name)


def _simple_storage(name: str) -> StorageDtype:
    if name in NUMERIC_DTYPES:
        dtype = np.dtype("<" + np.dtype(name).str[1:])  # little-endian, as hdmf-zarr writes
        return StorageDtype(name, dtype, None, dtype.type.__name__)
    if name == "text":
        return StorageDtype(name, np.dtype(object), "vlen-utf8", "str")
    if name in ("ascii", "isodatetime"):
        return StorageDtype(name, np.dtype(object), "vlen-bytes", "bytes")
    return StorageDtype(name, np.dtype(object), "json2", "object")


def _compound_zarr_dtype(element: StorageDtype) -> str:
    if element.hdmf_dtype == "object":
        return "object"
    if element.hdmf_dtype == "text":
        return "str_"
    if element.object_codec == "vlen-bytes":
        return "bytes_"
    return str(element.zarr_dtype)


def _compound_field(canonical: str) -> tuple[np.dtype[Any], str]:
    element = _simple_storage(canonical)
    return element.dtype, _compound_zarr_dtype(element)


#: Every dtype name a compound field may have (hdmf's names and aliases, and numpy's type
#: names hdmf-zarr writes in compound ``zarr_dtype`` lists: :data:`NUMPY_TYPE_NAMES`) to the
#: numpy dtype of the field in a structured array (objects for text and references) and
#: the field dtype name hdmf-zarr writes (``"int32"``, ``"str_"``, ``"bytes_"``,
#: ``"object"``...). :mod:`zarrkit.references` reads and writes compound datasets with it.
COMPOUND_FIELD_DTYPES: dict[str, tuple[np.dtype[Any], str]] = {
    name: _compound_field(canonical)
    for name, canonical in (HDMF_DTYPES | NUMPY_TYPE_NAMES).items()}


def hdmf_dtype_of(array: Array) -> str | list[dict[str, Any]]:
    """The canonical hdmf dtype of a stored dataset: ``"object"`` for references
    (``_DTYPE`` ``"object_reference"``, or ``zarr_dtype`` ``"object"``) and a list of
    ``{"name", "dtype"}`` for a compound dataset (a structured data type, its reference
    fields named by ``_REFERENCE_FIELDS``; or ``zarr_dtype`` listing the fields), else
    from the array's storage (numbers by type, object or string arrays as ``"text"`` or
    ``"ascii"`` by their codec or data type, else by ``_DTYPE`` or ``zarr_dtype``).
    ValueError for an array of a type hdmf has no name for.

    >>> import zarrkit as zk
    >>> root = zk.group({})
    >>> hdmf_dtype_of(root.create_array("a", shape=(1,), dtype="<f8",
    ...                                 attributes={"zarr_dtype": "float"}))
    'float64'
    >>> hdmf_dtype_of(root.create_array("b", shape=(1,), dtype=bytes,
    ...                                 attributes={"zarr_dtype": "scalar"}))
    'ascii'
    >>> hdmf_dtype_of(root.create_array("c", shape=(2,), dtype=str,
    ...                                 attributes={"_DTYPE": "object_reference"}))
    'object'
    """
    attributes = array.attrs.asdict()
    dtype = array.dtype
    if attributes.get(HDMF_ZARR_014.dtype_attribute) == HDMF_ZARR_014.reference_dtype:
        return "object"
    # hdmf-zarr 0.14 reads _DTYPE first, then 0.13's zarr_dtype.
    zarr_dtype = attributes.get(HDMF_ZARR_014.dtype_attribute,
                                attributes.get(HDMF_ZARR_013.dtype_attribute))
    if isinstance(zarr_dtype, list):
        return _compound_of(zarr_dtype, dtype, array.name)
    if isinstance(zarr_dtype, str) and zarr_dtype in REFERENCE_DTYPES:
        return "object"
    if dtype.fields is not None:
        references = attributes.get(HDMF_ZARR_014.reference_fields_attribute or "") or []
        return [{"name": field, "dtype": "object" if field in references
                 else _element_of(info[0], None, array.name)}
                for field, info in dtype.fields.items()]
    if dtype.kind in "OT":  # objects, or strings read as numpy's StringDType
        return _object_kind(array, zarr_dtype)
    return _element_of(dtype, zarr_dtype, array.name)


def _element_of(dtype: np.dtype[Any], zarr_dtype: Any, where: str) -> str:
    """The canonical hdmf name of a non-compound numpy dtype."""
    if dtype.kind == "b":
        return "bool"
    if dtype.kind in "iuf" and dtype.name in NUMERIC_DTYPES:
        return dtype.name
    if dtype.kind == "S":
        return "ascii"
    if dtype.kind == "U":
        return "text"
    if dtype.kind == "O":
        if zarr_dtype in REFERENCE_DTYPES:
            return "object"
        return "ascii" if zarr_dtype in _ZARR_DTYPE_ASCII else "text"
    raise ValueError(f"array {where!r}: hdmf has no dtype for {dtype}")


def _object_kind(array: Array, zarr_dtype: Any) -> str:
    """``"text"`` or ``"ascii"`` for an array of objects (v2) or strings (v3)."""
    if array.zarr_format == 3:
        kind = getattr(array.metadata.data_type, "kind", None)
        if kind == "bytes":
            return "ascii"
        if kind == "string":
            return "text"
    else:
        ids = [getattr(f, "codec_id", None) for f in array.filters]
        if "vlen-bytes" in ids:
            return "ascii"
        if "vlen-utf8" in ids:
            return "text"
    return "ascii" if zarr_dtype in _ZARR_DTYPE_ASCII else "text"


def _compound_of(zarr_dtype: list[Any], dtype: np.dtype[Any], where: str
                 ) -> list[dict[str, Any]]:
    """The fields of a compound dataset: from ``zarr_dtype``, typed by the stored
    structured dtype where there is one (v3 stores compound rows as JSON text)."""
    fields = []
    for field in zarr_dtype:
        if not isinstance(field, Mapping) or not isinstance(field.get("name"), str):
            raise ValueError(f"array {where!r}: invalid compound field {field!r:.200}")
        name, stored = field["name"], field.get("dtype")
        if dtype.fields is not None and name in dtype.fields:
            element = _element_of(dtype.fields[name][0], stored, where)
        elif isinstance(stored, str) and stored in REFERENCE_DTYPES:
            element = "object"
        elif isinstance(stored, str) and stored in _ZARR_DTYPE_NUMBERS:
            element = _ZARR_DTYPE_NUMBERS[stored]
        elif isinstance(stored, str) and stored in _ZARR_DTYPE_ASCII:
            element = "ascii"
        elif isinstance(stored, str) and stored in _ZARR_DTYPE_TEXT:
            element = "text"
        elif isinstance(stored, str) and stored in HDMF_DTYPES:
            element = HDMF_DTYPES[stored]
        else:
            raise ValueError(f"array {where!r}: unknown compound field dtype {stored!r:.100}")
        fields.append({"name": name, "dtype": element})
    return fields
