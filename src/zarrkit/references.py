"""Object references: hdmf-zarr's conventions (NWB's Zarr backend).

Zarr has no references, so hdmf-zarr stores each one as its target's ``source`` store
(``"."`` for the same store, else a path relative to the store's location) and its
absolute ``path`` there; hdmf-zarr 0.13 also kept the target's ``object_id`` and the
``object_id`` of the source's root (``source_object_id``). :class:`Reference` is one such
reference; :meth:`Reference.resolve` opens its target.

Two conventions (:func:`zarrkit.hierarchy.links.convention_of` tells a file's: 0.13 in
Zarr v2 files, 0.14 in v3 ones) say where references live:

* **Attributes**: 0.13 ``{"value": {...reference...}, "zarr_dtype": "object"}``; 0.14
  ``{"_REFERENCE": {"source": ..., "path": ...}}``.
* **Reference datasets**: 0.13 marks them ``zarr_dtype: "object"``, an object array of
  JSON objects (pickled by default, or ``json2``); 0.14 ``_DTYPE: "object_reference"``,
  a string array of target paths.
* **Compound datasets** with reference fields: 0.13's ``zarr_dtype`` lists the fields
  (``{"name", "dtype"}``, a reference field's dtype ``"object"``), stored as a structured
  dtype whose reference fields are objects (pickled: numcodecs' JSON codec cannot decode a
  structured array, so zarrkit writes each row as a JSON array in an object array, which
  hdmf-zarr 0.13 reads as rows too); 0.14 stores a v3 ``struct`` data type whose
  reference and text fields are fixed-length strings (at least 512 characters) holding
  target paths, and names the reference fields in ``_REFERENCE_FIELDS``.
* **Regions** (hdmf's ``DynamicTableRegion``, e.g. an ElectricalSeries' ``electrodes``):
  row indices whose ``table`` attribute references the table; :func:`read_region`.

hdmf-zarr 0.14 writes plain paths, so its references never leave their file; it reads
JSON texts too, which zarrkit writes for a reference to another store in a 0.14 dataset
(and which zarrkit itself wrote in v3 files before it knew 0.14: JSON texts in string
arrays with ``zarr_dtype``, read and written as they are).

:func:`decode_attribute` (:func:`decode_attributes` for all of a node's) reads reference
attributes of both conventions, :func:`encode_attribute` writes one in a node's;
attributes themselves are left as stored. :func:`read_references` and
:func:`write_references` read and write the references of a dataset in the form it
stores them; :func:`create_reference_dataset` creates one in its file's convention.
Pickled references (0.13's default object codec) are read through
:mod:`zarrkit.codecs.restricted_pickle`, never numcodecs' Pickle.

>>> import zarrkit as zk
>>> root = zk.group({}, zarr_format=2)
>>> ts = root.create_group("acquisition/ts")
>>> refs = create_reference_dataset(root, "refs", [Reference.of(ts)] * 2)
>>> read_references(refs)[0]
Reference(path='/acquisition/ts', source='.', object_id=None, source_object_id=None)
>>> read_references(refs)[1].resolve(refs) == ts
True
>>> v3 = zk.group({}, zarr_format=3)
>>> refs = create_reference_dataset(v3, "refs", [Reference("/acquisition/ts")])
>>> refs.attrs["_DTYPE"], refs[0]
('object_reference', '/acquisition/ts')
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit.codecs.restricted_pickle import describe_value
from zarrkit.errors import MetadataError
from zarrkit.hierarchy.links import (
    HDMF_ZARR_013,
    HDMF_ZARR_014,
    Convention,
    convention_for,
    convention_of,
)

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array
    from zarrkit.hierarchy.group import Group

#: hdmf-zarr 0.13's reserved attribute naming the hdmf data type of a dataset or
#: reference attribute.
ZARR_DTYPE = HDMF_ZARR_013.dtype_attribute
#: hdmf-zarr 0.14's: the data type of a dataset (compound datasets have none).
DTYPE = HDMF_ZARR_014.dtype_attribute
#: hdmf-zarr 0.14's attribute listing the reference fields of a compound dataset.
REFERENCE_FIELDS = "_REFERENCE_FIELDS"
assert REFERENCE_FIELDS == HDMF_ZARR_014.reference_fields_attribute
#: hdmf-zarr 0.14's key of a reference attribute: ``{"_REFERENCE": {"source", "path"}}``.
REFERENCE_KEY = "_REFERENCE"
assert REFERENCE_KEY == HDMF_ZARR_014.reference_key
#: The ``zarr_dtype`` of references (hdmf-zarr 0.13 writes "object"; "ref" and
#: "reference" are the other hdmf names of the type).
OBJECT = HDMF_ZARR_013.reference_dtype
#: The ``_DTYPE`` of a dataset of references (hdmf-zarr 0.14).
OBJECT_REFERENCE = HDMF_ZARR_014.reference_dtype
#: The fewest characters hdmf-zarr 0.14 gives a reference or text field of a compound
#: dataset (its ``COMPOUND_DTYPE_MIN_STRING_LENGTH``), so that longer rows can be appended.
MIN_FIELD_CHARACTERS = 512
_KEYS = ("source", "path", "object_id", "source_object_id")

# The names of hdmf's dtypes are zarrkit.hdmf.dtypes' table, imported where used: the
# zarrkit.hdmf package imports this module (zarrkit.hdmf.attributes decodes references).


def _names_reference(dtype: Any) -> bool:
    """Whether a ``zarr_dtype`` value or compound field dtype names object references."""
    from zarrkit.hdmf.dtypes import REFERENCE_DTYPES

    return isinstance(dtype, str) and dtype in REFERENCE_DTYPES


def _field_types() -> Mapping[str, tuple[np.dtype[Any], str]]:
    """The compound field dtypes: name -> (numpy dtype of the field, name written)."""
    from zarrkit.hdmf.dtypes import COMPOUND_FIELD_DTYPES

    return COMPOUND_FIELD_DTYPES


def _field_dtype(name: str) -> np.dtype[Any]:
    """The numpy dtype of a compound field read from JSON rows (objects for unknown
    names)."""
    known = _field_types().get(name)
    return known[0] if known is not None else np.dtype(object)


# The json2 configuration that hdmf-zarr's JSON object codec writes (numcodecs' defaults).
_JSON2 = {"id": "json2"}


@dataclass(frozen=True)
class Reference:
    """An hdmf-zarr object reference: the node at ``path`` (absolute) in the store that
    ``source`` names (``"."``: the store holding the reference), with the target's
    ``object_id`` and its source root's ``source_object_id`` when known.

    >>> ref = Reference("/general/devices/dev")
    >>> ref.to_json()
    {'source': '.', 'path': '/general/devices/dev', 'object_id': None, 'source_object_id': None}
    >>> Reference.from_json(ref.to_json()) == ref
    True
    """

    path: str
    source: str = "."
    object_id: str | None = None
    source_object_id: str | None = None

    #: Read by the hierarchy's attribute writer to say how to store a Reference there.
    __zarrkit_attribute_hint__ = (
        "store it with zarrkit.references.encode_attribute(reference, node), which writes "
        "the hdmf-zarr convention of the node's file")

    def __post_init__(self) -> None:
        if not isinstance(self.path, str) or not isinstance(self.source, str) or (
                not self.source):
            raise TypeError(f"a reference needs a str path and a non-empty str source, found "
                            f"path={self.path!r}, source={self.source!r}")
        for key in ("object_id", "source_object_id"):
            value = getattr(self, key)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"a reference's {key} must be a str or None, found {value!r}")

    @classmethod
    def of(cls, node: Array | Group, *, origin: Array | Group | None = None) -> Reference:
        """A reference to ``node``, to be stored in ``origin``'s store (by default
        ``node``'s own): ``source`` is then the path from that store to ``node``'s (see
        :func:`zarrkit.hierarchy.links.relative_source`); ``object_id`` and
        ``source_object_id`` are the ``object_id`` attributes of ``node`` and of its
        store's root, when they have one.

        >>> import zarrkit as zk
        >>> root = zk.group({}, attributes={"object_id": "file-1"})
        >>> Reference.of(root.create_group("dev", attributes={"object_id": "dev-1"}))
        Reference(path='/dev', source='.', object_id='dev-1', source_object_id='file-1')
        """
        from zarrkit.hierarchy.links import object_id_of, relative_source, root_object_id

        source = "." if origin is None else relative_source(origin.store, node.store)
        return cls(path=node.name, source=source, object_id=object_id_of(node),
                   source_object_id=root_object_id(node.store))

    @property
    def external(self) -> bool:
        """Whether the target lies in another store (``source`` is not ``"."``).

        >>> Reference("/a").external, Reference("/a", "../b.zarr").external
        (False, True)
        """
        return self.source not in (".", "./")

    def resolve(self, from_node: Array | Group) -> Array | Group:
        """The target, opened relative to ``from_node``'s store (the node holding the
        reference); :class:`~zarrkit.errors.LinkError` if it cannot be opened.

        >>> import zarrkit as zk
        >>> root = zk.group({})
        >>> _ = root.create_array("data", shape=(2,), dtype="u1")
        >>> Reference("/data").resolve(root)  # doctest: +ELLIPSIS
        <Array memory://.../data shape=(2,) dtype=uint8>
        >>> Reference("/nope").resolve(root)
        Traceback (most recent call last):
        zarrkit.errors.LinkError: no array or group at path '/nope' in source '.'
        """
        from zarrkit.hierarchy.links import open_target

        return open_target(from_node, self.source, self.path)

    def to_json(self, convention: Convention | None = None) -> dict[str, str | None]:
        """The stored form in ``convention`` (hdmf-zarr 0.13's by default): 0.13's
        ``ZarrReference`` keys ``source``, ``path``, ``object_id`` and
        ``source_object_id`` (None when unknown, as hdmf-zarr writes); 0.14 keeps
        ``source`` and ``path`` only.

        >>> Reference("/x", object_id="o-1").to_json()["object_id"]
        'o-1'
        >>> Reference("/x", object_id="o-1").to_json(HDMF_ZARR_014)
        {'source': '.', 'path': '/x'}
        """
        if convention is not None and convention.zarr_format == 3:
            return {"source": self.source, "path": self.path}
        return {"source": self.source, "path": self.path, "object_id": self.object_id,
                "source_object_id": self.source_object_id}

    @classmethod
    def from_json(cls, value: Any) -> Reference:
        """The reference a stored mapping describes (a JSON object, or a pickled
        ``ZarrReference``); a missing ``source`` is ``"."``, other keys are ignored.
        MetadataError if it is not a reference.

        >>> Reference.from_json({"path": "/a", "source": ".", "object_id": None})
        Reference(path='/a', source='.', object_id=None, source_object_id=None)
        >>> Reference.from_json({"source": "."})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: not an object reference (needs a str 'path'): a dict of ...
        """
        if not isinstance(value, Mapping):
            raise MetadataError("not an object reference (needs a JSON object): "
                                f"{describe_value(value, 200)}")
        path, source = value.get("path"), value.get("source", ".")
        if not isinstance(path, str):
            raise MetadataError("not an object reference (needs a str 'path'): "
                                f"{describe_value(value, 200)}")
        if not isinstance(source, str) or not source:
            raise MetadataError("object reference with an invalid source: "
                                f"{describe_value(source, 200)}")
        ids = [value.get(key) for key in ("object_id", "source_object_id")]
        if not all(i is None or isinstance(i, str) for i in ids):
            raise MetadataError("object reference with an invalid object id: "
                                f"{', '.join(describe_value(i, 80) for i in ids)}")
        return cls(path, source, *ids)


# --- attributes ------------------------------------------------------------------------------


def _is_v3_reference(value: Any) -> bool:
    return isinstance(value, Mapping) and REFERENCE_KEY in value


def is_reference_attribute(value: Any) -> bool:
    """Whether an attribute value is a stored reference, or list of them: hdmf-zarr
    0.14's ``{"_REFERENCE": {...}}`` (a list of those), or 0.13's ``{"zarr_dtype":
    "object", "value": ...}``.

    >>> is_reference_attribute({"zarr_dtype": "object", "value": {"path": "/a"}})
    True
    >>> is_reference_attribute({"_REFERENCE": {"source": ".", "path": "/a"}})
    True
    >>> is_reference_attribute({"value": 1})
    False
    """
    if isinstance(value, list):
        return bool(value) and all(_is_v3_reference(item) for item in value)
    return _is_v3_reference(value) or (
        isinstance(value, Mapping) and _names_reference(value.get(ZARR_DTYPE))
        and "value" in value)


def decode_attribute(value: Any) -> Any:
    """An attribute value with a stored reference (of either convention) turned into a
    :class:`Reference` (a list of them into a list of References); any other value is
    returned unchanged.

    >>> decode_attribute({"value": {"path": "/general/extracellular_ephys/electrodes",
    ...     "source": "."}, "zarr_dtype": "object"})
    Reference(path='/general/extracellular_ephys/electrodes', source='.', object_id=None, \
source_object_id=None)
    >>> decode_attribute({"_REFERENCE": {"source": ".", "path": "/electrodes"}}).path
    '/electrodes'
    >>> decode_attribute([1, 2])
    [1, 2]
    """
    if not is_reference_attribute(value):
        return value
    if isinstance(value, list):
        return [decode_attribute(item) for item in value]
    stored = value[REFERENCE_KEY] if REFERENCE_KEY in value else value["value"]
    if isinstance(stored, list):
        return [Reference.from_json(item) for item in stored]
    return Reference.from_json(stored)


def encode_attribute(reference: Reference | Sequence[Reference],
                     node: Array | Group | Convention | None = None) -> Any:
    """The attribute value that stores ``reference`` (or a list of references) in the
    hdmf-zarr convention of ``node``'s file (:func:`~zarrkit.hierarchy.links.convention_of`),
    or in ``node`` when it is a :class:`~zarrkit.hierarchy.links.Convention`; without
    ``node``, 0.13's, which 0.14 also reads: ``node.attrs[name] = encode_attribute(ref,
    node)``.

    hdmf-zarr 0.14 writes no list of references in an attribute; zarrkit writes a list
    of 0.14 reference attributes, which hdmf-zarr 0.14 reads as that list, unresolved.

    >>> encode_attribute(Reference("/general/devices/dev"))["zarr_dtype"]
    'object'
    >>> decode_attribute(encode_attribute([Reference("/a"), Reference("/b")]))[1].path
    '/b'
    >>> import zarrkit as zk
    >>> encode_attribute(Reference("/general/devices/dev"), zk.group({}, zarr_format=3))
    {'_REFERENCE': {'source': '.', 'path': '/general/devices/dev'}}
    """
    convention = (HDMF_ZARR_013 if node is None else node if isinstance(node, Convention)
                  else convention_of(node))
    single = isinstance(reference, Reference)
    items: list[Any] = [reference] if isinstance(reference, Reference) else list(reference)
    if not all(isinstance(item, Reference) for item in items):
        raise TypeError("encode_attribute takes a Reference or a sequence of References")
    if convention.reference_key is not None:
        encoded = [{convention.reference_key: item.to_json(convention)} for item in items]
        return encoded[0] if single else encoded
    stored = [item.to_json(convention) for item in items]
    return {"value": stored[0] if single else stored, ZARR_DTYPE: OBJECT}


def decode_attributes(node: Array | Group | Mapping[str, Any]) -> dict[str, Any]:
    """All attributes of ``node`` (or an attribute mapping), reference attributes
    decoded by :func:`decode_attribute`.

    >>> import zarrkit as zk
    >>> g = zk.group({}, attributes={"n": 1, "target": encode_attribute(Reference("/t"))})
    >>> decode_attributes(g)
    {'n': 1, 'target': Reference(path='/t', source='.', object_id=None, source_object_id=None)}
    """
    attributes = node if isinstance(node, Mapping) else node.attrs
    return {name: decode_attribute(value) for name, value in attributes.items()}


# --- datasets --------------------------------------------------------------------------------


def _fields(zarr_dtype: Any, where: str, *, known: bool = False) -> list[tuple[str, str]]:
    """The (name, dtype name) fields of a compound ``zarr_dtype``; with ``known``, each
    dtype must be one of the compound field dtypes zarrkit writes."""
    if not isinstance(zarr_dtype, list) or not zarr_dtype:
        raise MetadataError(f"{where}: a compound zarr_dtype is a list of fields, found "
                            f"{zarr_dtype!r:.200}")
    fields = []
    for field in zarr_dtype:
        if isinstance(field, Mapping):
            name, dtype = field.get("name"), field.get("dtype")
        elif isinstance(field, list | tuple) and len(field) == 2:
            name, dtype = field
        else:
            name = dtype = None
        if not isinstance(name, str) or not name or not isinstance(dtype, str) or (
                known and dtype not in _field_types()):
            raise MetadataError(f"{where}: invalid compound field {field!r:.200} (a name and "
                                f"one of the dtypes {sorted(_field_types())})")
        fields.append((name, dtype))
    if len({name for name, _ in fields}) != len(fields):
        raise MetadataError(f"{where}: compound fields with the same name: {zarr_dtype!r}")
    return fields


@dataclass(frozen=True)
class _Layout:
    """How a dataset stores references. ``fields``: a compound dataset's ``(name, dtype
    name)`` fields (None: a dataset of references); ``form``: ``"objects"`` (hdmf-zarr
    0.13: JSON objects in object arrays or object fields, a compound's rows as JSON arrays
    in an object array), ``"json"`` (zarrkit's v3 form
    before hdmf-zarr 0.14: JSON texts, or JSON rows of a compound, in a string array),
    ``"paths"`` (hdmf-zarr 0.14: target paths in a string array, or in fixed-length
    string fields of a struct)."""

    fields: list[tuple[str, str]] | None
    form: str


def _layout(array: Array) -> _Layout:
    """How ``array`` stores references; MetadataError if it holds none."""
    attributes = array.attrs
    where = f"array {array.name!r}"
    if attributes.get(DTYPE) == OBJECT_REFERENCE:
        return _Layout(None, "paths")
    names = array.dtype.names
    reference_fields = attributes.get(REFERENCE_FIELDS)
    if reference_fields is not None and names is not None:
        if not isinstance(reference_fields, list) or not all(
                isinstance(name, str) and name in names for name in reference_fields):
            raise MetadataError(f"{where}: {REFERENCE_FIELDS} must list fields of its dtype "
                                f"{array.dtype}, found {reference_fields!r:.200}")
        return _Layout([(name, OBJECT if name in reference_fields else
                         _stored_field_name(array.dtype[name]))
                        for name in names], "paths")
    value = attributes.get(ZARR_DTYPE)
    if _names_reference(value):
        return _Layout(None, "objects" if array.dtype.kind == "O" and
                       array.zarr_format == 2 else "json")
    if isinstance(value, list):
        rows_of_objects = array.dtype.kind == "O" and array.zarr_format == 2
        return _Layout(_fields(value, where),
                       "objects" if names is not None or rows_of_objects else "json")
    raise MetadataError(
        f"{where} holds no object references (its {DTYPE} attribute is "
        f"{attributes.get(DTYPE)!r:.100}, its {REFERENCE_FIELDS} "
        f"{reference_fields!r:.100}, its {ZARR_DTYPE} {value!r:.100})")


def reference_fields(array: Array) -> list[tuple[str, str]] | None:
    """The ``(name, hdmf dtype name)`` fields of a compound dataset with references (a
    reference field's dtype is ``"object"``), or None for a dataset of references.
    MetadataError for an array that holds no references (see
    :func:`is_reference_dataset`).

    >>> import zarrkit as zk
    >>> rows = create_reference_dataset(zk.group({}), "r", [(1, Reference("/a"))],
    ...     fields=[("n", "int32"), ("target", "object")])
    >>> reference_fields(rows)
    [('n', 'int32'), ('target', 'object')]
    """
    return _layout(array).fields


def is_reference_dataset(array: Array) -> bool:
    """Whether ``array`` holds references (wholly, or in compound fields) in either
    convention: ``_DTYPE`` ``"object_reference"``, ``_REFERENCE_FIELDS``, or a
    ``zarr_dtype`` of ``"object"`` or a list of fields.

    >>> import zarrkit as zk
    >>> is_reference_dataset(zk.group({}).create_array("x", shape=(1,), dtype="u1"))
    False
    """
    try:
        _layout(array)
    except MetadataError:
        return False
    return True


def _stored_field_name(dtype: np.dtype[Any]) -> str:
    """The hdmf dtype name of a field of an hdmf-zarr 0.14 struct that holds no
    references: ``"text"`` for strings, numpy's name of a number."""
    return "text" if dtype.kind in "UOT" else dtype.name


def _decode_element(value: Any, paths: bool = False) -> Reference | None:
    """A stored reference element: a mapping (json2 or pickled), JSON text, with
    ``paths`` (hdmf-zarr 0.14's datasets) a target path, or the fill value of an
    unwritten element (None, 0 or "", read as None)."""
    if isinstance(value, Reference):
        return value
    if isinstance(value, Mapping):
        return Reference.from_json(value)
    if isinstance(value, str):
        if not value:
            return None
        if paths and not value.startswith("{"):  # a path: never JSON (it starts with "/")
            return Reference(value)
        try:
            return Reference.from_json(json.loads(value))
        except (ValueError, RecursionError) as e:
            raise MetadataError(f"not an object reference: {describe_value(value, 200)}"
                                ) from e
    if value is None or (type(value) is int and value == 0):
        return None
    raise MetadataError(f"not an object reference: {describe_value(value, 200)}")


_decode_elements = np.frompyfunc(_decode_element, 1, 1)
_decode_paths = np.frompyfunc(lambda value: _decode_element(value, True), 1, 1)


def read_references(array: Array, selection: Any = Ellipsis) -> Any:
    """``array[selection]`` with its references as :class:`Reference` objects: an object
    array of them for a reference dataset (``_DTYPE`` ``"object_reference"`` or
    ``zarr_dtype`` ``"object"``), a structured array whose reference fields hold them
    for a compound one (``_REFERENCE_FIELDS``, or ``zarr_dtype`` a list of fields). An
    unwritten element (the fill value) is None. MetadataError for an array that holds no
    references.

    >>> import zarrkit as zk
    >>> root = zk.group({})
    >>> rows = create_reference_dataset(root, "ts", [(0, 5, Reference("/acquisition/ts"))],
    ...     fields=[("idx_start", "int32"), ("count", "int32"), ("timeseries", "object")])
    >>> read_references(rows)[0]["timeseries"].path, int(read_references(rows)[0]["count"])
    ('/acquisition/ts', 5)
    """
    layout = _layout(array)
    stored = array[selection]
    if isinstance(stored, np.ndarray) and stored.dtype.kind == "T":  # v3 strings: objects
        stored = stored.astype(object)
    decode = _decode_paths if layout.form == "paths" else _decode_elements
    if layout.fields is None:
        return decode(stored)
    fields = layout.fields
    names = array.dtype.names
    structured = names is not None  # v2 object fields, or 0.14's fixed-length strings
    missing = [name for name, _ in fields if names is not None and name not in names]
    if missing:
        raise MetadataError(f"array {array.name!r}: compound fields {missing} are not in its "
                            f"dtype {array.dtype}")
    if structured or isinstance(stored, np.ndarray):
        raw = np.asarray(stored)
    else:  # one element, maybe a row as a JSON array: not an array of its values
        raw = np.empty((), dtype=object)
        raw[()] = stored
    out = np.empty(raw.shape, dtype=_compound_dtype(fields, array.dtype if structured else None))
    if structured:
        for name, hdmf_dtype in fields:
            values = raw[name]
            out[name] = decode(values) if _names_reference(hdmf_dtype) else values
    else:  # JSON rows in a string array
        references = [_names_reference(dtype) for _, dtype in fields]
        unwritten = tuple(None if out.dtype[i].hasobject else 0 for i in range(len(fields)))
        flat = out.reshape(-1)
        for i, text in enumerate(raw.reshape(-1)):
            flat[i] = _decode_row(text, references, unwritten, array.name)
    return out if isinstance(stored, np.ndarray) else out[()]


def _compound_dtype(fields: list[tuple[str, str]], stored: np.dtype[Any] | None
                    ) -> np.dtype[Any]:
    """The numpy dtype a compound dataset reads as: objects for references, the stored
    field types for the others (for JSON rows, those of the storage spec's table)."""
    parts: list[tuple[str, Any]] = []
    for name, hdmf_dtype in fields:
        if _names_reference(hdmf_dtype):
            parts.append((name, "O"))
        elif stored is not None and stored.fields is not None:
            parts.append((name, stored.fields[name][0]))
        else:
            parts.append((name, _field_dtype(hdmf_dtype)))
    return np.dtype(parts)


def _decode_row(text: Any, references: list[bool], unwritten: tuple[Any, ...], name: str
                ) -> tuple[Any, ...]:
    """One JSON row of a compound dataset (``references``: which fields hold them;
    ``unwritten``: the row an unwritten element reads as)."""
    if text in ("", None):  # an unwritten element
        return unwritten
    try:
        row = json.loads(text) if isinstance(text, str) else text
    except (ValueError, RecursionError) as e:
        raise MetadataError(f"array {name!r}: invalid compound element "
                            f"{describe_value(text, 200)}") from e
    if not isinstance(row, list) or len(row) != len(references):
        raise MetadataError(f"array {name!r}: a compound element must be a list of "
                            f"{len(references)} values, found {describe_value(row, 200)}")
    return tuple(_decode_element(value) if reference else value
                 for value, reference in zip(row, references, strict=True))


def _path_text(value: Any) -> str:
    """A reference as hdmf-zarr 0.14 stores it in a dataset: its target's path (the
    unwritten element, None, is ``""``); a reference to another store, which 0.14 never
    writes, as the JSON text ``{"source", "path"}`` that 0.14 also reads."""
    if value is None:
        return ""
    if not isinstance(value, Reference):
        raise TypeError(f"a reference dataset holds References, found {value!r:.100}")
    if value.external:
        return json.dumps(value.to_json(HDMF_ZARR_014), separators=(",", ":"))
    return value.path


def _stored_reference(value: Any, form: str) -> Any:
    if form == "paths":
        return _path_text(value)
    if value is None:  # an unwritten element: the fill value (json2 null, or "")
        return None if form == "objects" else ""
    if not isinstance(value, Reference):
        raise TypeError(f"a reference dataset holds References, found {value!r:.100}")
    return value.to_json() if form == "objects" else json.dumps(
        value.to_json(), separators=(",", ":"), sort_keys=True)


def _json_value(value: Any) -> Any:
    if isinstance(value, Reference):
        return value.to_json()
    if isinstance(value, np.generic):
        return value.item()
    return value


def stored_references(array: Array, values: Any) -> np.ndarray[Any, Any]:
    """``values`` (References, or rows of a compound dataset whose reference fields are
    References; None for an unwritten reference) in the form ``array`` stores them, as
    :func:`write_references` writes them. TypeError or ValueError for values it cannot
    hold (a text longer than a fixed-length field of hdmf-zarr 0.14's compounds).

    >>> import zarrkit as zk
    >>> refs = create_reference_dataset(zk.group({}), "r", [Reference("/a")])
    >>> stored_references(refs, [Reference("/b"), None]).tolist()
    ['/b', '']
    """
    layout = _layout(array)
    if layout.fields is None:
        items = values if isinstance(values, np.ndarray) else np.array(values, dtype=object)
        convert = np.frompyfunc(lambda v: _stored_reference(v, layout.form), 1, 1)
        return np.asarray(convert(items), dtype=object)
    fields = layout.fields
    single = isinstance(values, tuple | np.void)  # one row; a sequence of rows otherwise
    shape: tuple[int, ...] | None = () if single else None
    if isinstance(values, np.ndarray) and values.dtype.names:
        shape = values.shape  # a structured array of rows (as read_references gives)
    rows = _rows([values] if single else values, len(fields))
    if layout.form == "json":
        texts = np.empty(len(rows), dtype=object)
        for i, row in enumerate(rows):
            texts[i] = json.dumps([_json_value(v) for v in row], separators=(",", ":"),
                                  sort_keys=True)
        return texts if shape is None else texts.reshape(shape)
    if layout.form == "paths":
        cells = _fixed_rows(array, fields, rows)
    elif array.dtype.names is None:  # hdmf-zarr 0.13's rows as JSON arrays of objects
        cells = np.empty(len(rows), dtype=object)
        for i, row in enumerate(rows):
            cells[i] = [_json_value(v) for v in row]
    else:
        cells = np.array([tuple(v.to_json() if isinstance(v, Reference) else v for v in row)
                          for row in rows], dtype=array.dtype)
    return cells if shape is None else cells.reshape(shape)


def _fixed_rows(array: Array, fields: list[tuple[str, str]], rows: list[tuple[Any, ...]]
                ) -> np.ndarray[Any, Any]:
    """Rows of an hdmf-zarr 0.14 compound dataset: references as their path texts, each
    text checked to fit its fixed-length field (numpy would cut it silently)."""
    dtype = array.dtype
    converted = []
    for row in rows:
        cells = []
        for (name, hdmf_dtype), value in zip(fields, row, strict=True):
            field = dtype.fields[name][0] if dtype.fields else None
            if _names_reference(hdmf_dtype):
                value = _path_text(value)
            elif field is not None and field.kind == "U" and (
                    value is None or (type(value) is int and value == 0)):
                value = ""  # 0.13's unwritten text element (None, or 0 as numpy fills it)
            if field is not None and field.kind == "U" and isinstance(value, str) and (
                    len(value) > field.itemsize // 4):
                raise ValueError(
                    f"array {array.name!r}: a value of {len(value)} characters does not fit "
                    f"field {name!r}, fixed at {field.itemsize // 4} characters when the "
                    f"dataset was created (as hdmf-zarr 0.14 fixes it)")
            cells.append(value)
        converted.append(tuple(cells))
    return np.array(converted, dtype=dtype)


def _rows(values: Any, count: int) -> list[tuple[Any, ...]]:
    if isinstance(values, np.ndarray) and values.dtype.names:
        values = values.reshape(-1).tolist()
    rows = [tuple(row.tolist() if isinstance(row, np.void) else row) for row in values]
    for row in rows:
        if len(row) != count:
            raise ValueError(f"a compound element needs {count} values, found {row!r:.100}")
    return rows


def write_references(array: Array, selection: Any, values: Any) -> None:
    """Write ``values`` into ``array[selection]`` in the form the dataset stores them:
    References (an array-like of them, or one) into a reference dataset; into a compound
    one, rows (one as a tuple, several as a sequence of tuples or a structured array)
    whose reference fields are References. None is an unwritten reference (stored as the
    fill value), as :func:`read_references` gives it.

    >>> import zarrkit as zk
    >>> refs = create_reference_dataset(zk.group({}), "r", [Reference("/a"), Reference("/b")])
    >>> write_references(refs, 1, Reference("/c"))
    >>> [r.path for r in read_references(refs)]
    ['/a', '/c']
    """
    stored = stored_references(array, values)
    # One element is written as itself, but for a row of 0.13's compound (a JSON array),
    # which would be taken for the values of a selection of that many elements.
    single = stored.ndim == 0 and not isinstance(stored[()], list)
    array[selection] = stored[()] if single else stored


def create_reference_dataset(
    group: Group,
    name: str,
    data: Any,
    *,
    fields: Sequence[tuple[str, str]] | Sequence[Mapping[str, str]] | None = None,
    attributes: Mapping[str, Any] | None = None,
    **options: Any,
) -> Array:
    """Create ``group[name]`` holding ``data`` as hdmf-zarr reads it, in the convention
    of ``group``'s file (see the module docstring): hdmf-zarr 0.13's in a Zarr v2 file,
    0.14's in a v3 one.

    Without ``fields``, ``data`` is an array-like of :class:`Reference` (any shape).
    With ``fields`` (``(name, hdmf dtype)`` pairs or hdmf's ``{"name", "dtype"}``
    objects; ``"object"`` for references), ``data`` is a sequence of rows, one value
    per field. Zarr v2 stores them as hdmf-zarr 0.13's JSON object codec does: an object
    array (of JSON arrays for compound rows, as zarr-python 2 reads no structured dtype
    with object fields through ``json2``) with the ``json2`` filter and the ``zarr_dtype``
    attribute. Zarr v3 stores them as hdmf-zarr 0.14
    does: target paths in a string array with ``_DTYPE: "object_reference"``, or a
    struct whose reference and text fields are fixed-length strings (of at least 512
    characters, or the longest value) with ``_REFERENCE_FIELDS``. ``options`` go to
    :meth:`Group.create_array <zarrkit.hierarchy.group.Group.create_array>` (chunks,
    compressors, overwrite...).

    >>> import zarrkit as zk
    >>> refs = create_reference_dataset(zk.group({}, zarr_format=2), "group",
    ...     [Reference("/general/extracellular_ephys/eg")] * 2)
    >>> refs.attrs["zarr_dtype"], refs.filters[0].codec_id, refs[0]["path"]
    ('object', 'json2', '/general/extracellular_ephys/eg')
    >>> rows = create_reference_dataset(zk.group({}, zarr_format=3), "rows",
    ...     [(0, Reference("/ts"))], fields=[("idx_start", "int32"), ("ts", "object")])
    >>> rows.attrs["_REFERENCE_FIELDS"], rows.dtype
    (['ts'], dtype([('idx_start', '<i4'), ('ts', '<U512')]))
    """
    for key in ("dtype", "filters", "fill_value", "shape", "data"):
        if key in options:
            raise TypeError(f"create_reference_dataset chooses {key!r} itself")
    zarr_format = options.pop("zarr_format", None) or group.zarr_format
    if fields is None:
        pairs = None
        values = data if isinstance(data, np.ndarray) else np.array(data, dtype=object)
        shape = values.shape
        widths: dict[str, int] = {}
    else:
        pairs = _known_fields(fields, f"array {name!r}")
        rows = _rows(data, len(pairs))
        values = rows  # type: ignore[assignment]
        shape = (len(rows),)
        widths = _field_widths(pairs, rows)
    storage = _array_options(convention_for(zarr_format), pairs, widths)
    storage["attributes"] = {**(attributes or {}), **storage["attributes"]}
    array = group.create_array(name, shape=shape, zarr_format=zarr_format, **storage, **options)
    if np.prod(shape):
        write_references(array, Ellipsis, values)
    return array


def _field_widths(pairs: list[tuple[str, str]], rows: list[tuple[Any, ...]]
                  ) -> dict[str, int]:
    """The characters of the longest text of each reference or text field in ``rows``
    (as hdmf-zarr 0.14 would store them)."""
    types = _field_types()
    widths: dict[str, int] = {}
    for i, (field, dtype_name) in enumerate(pairs):
        if types[dtype_name][0].kind != "O":
            continue
        reference = _names_reference(dtype_name)
        widths[field] = max((len(_path_text(row[i]) if reference else str(row[i]))
                             for row in rows), default=0)
    return widths


def _known_fields(fields: Iterable[tuple[str, str]] | Iterable[Mapping[str, str]],
                  where: str) -> list[tuple[str, str]]:
    """``(name, dtype)`` pairs or ``{"name", "dtype"}`` objects as (name, dtype) pairs,
    each dtype one of the compound field dtypes."""
    return _fields([dict(f) if isinstance(f, Mapping) else list(f) for f in fields],
                   where, known=True)


def _array_options(convention: Convention, pairs: list[tuple[str, str]] | None,
                   widths: Mapping[str, int] | None = None) -> dict[str, Any]:
    """:func:`reference_array_options` of checked ``(name, dtype)`` fields (None: not a
    compound dataset); ``widths``: the longest text of a field, for 0.14's fixed-length
    fields."""
    types = _field_types()
    if convention.zarr_format == 3:
        if pairs is None:
            return {"dtype": str, "attributes": {DTYPE: OBJECT_REFERENCE}}
        parts = []
        for field, dtype_name in pairs:
            dtype = types[dtype_name][0]
            if dtype.kind == "O":  # references and text: fixed-length strings
                width = max(MIN_FIELD_CHARACTERS, (widths or {}).get(field, 0))
                dtype = np.dtype(f"<U{width}")
            parts.append((field, dtype))
        return {"dtype": np.dtype(parts), "attributes": {
            REFERENCE_FIELDS: [f for f, d in pairs if _names_reference(d)]}}
    zarr_dtype: Any = OBJECT if pairs is None else [
        {"name": field, "dtype": types[dtype_name][1]} for field, dtype_name in pairs]
    # A compound's rows too are objects (JSON arrays): numcodecs' JSON codec decodes no
    # structured array, so zarr-python 2 (and hdmf-zarr 0.13) could not read one.
    return {"dtype": object, "filters": [_JSON2], "fill_value": None,
            "attributes": {ZARR_DTYPE: zarr_dtype}}


def reference_array_options(
    zarr_format: int,
    fields: Sequence[tuple[str, str]] | Sequence[Mapping[str, str]] | None = None,
    *,
    rows: Any = None,
) -> dict[str, Any]:
    """Keyword arguments for :func:`zarrkit.create_array` that store references (a
    compound dataset: ``fields`` as for :func:`create_reference_dataset`) as
    :func:`create_reference_dataset` does in a file of ``zarr_format``, to be filled
    with :func:`write_references`. On v2 (hdmf-zarr 0.13): ``dtype`` objects (a
    compound's rows are JSON arrays), with the ``json2`` filter, a null ``fill_value``
    and the ``zarr_dtype`` attribute (``"object"``, or the fields with hdmf-zarr's dtype
    names). On v3 (hdmf-zarr 0.14): ``dtype`` ``str`` and
    ``_DTYPE: "object_reference"``, or a structured dtype whose text and reference fields
    are strings of 512 characters, or of the longest value of that field in ``rows``
    (the compound rows to be written; longer values are refused on write), with
    ``_REFERENCE_FIELDS``. MetadataError for an unknown field dtype.

    >>> reference_array_options(2)
    {'dtype': <class 'object'>, 'filters': [{'id': 'json2'}], 'fill_value': None, \
'attributes': {'zarr_dtype': 'object'}}
    >>> options = reference_array_options(3, [("n", "int"), ("target", "ref")])
    >>> options["dtype"], options["attributes"]
    (dtype([('n', '<i4'), ('target', '<U512')]), {'_REFERENCE_FIELDS': ['target']})
    """
    pairs = None if fields is None else _known_fields(fields, "compound dataset")
    widths = None if pairs is None or rows is None else _field_widths(
        pairs, _rows(rows, len(pairs)))
    return _array_options(convention_for(zarr_format), pairs, widths)


def iter_references(array: Array) -> Iterable[Reference]:
    """Every reference a reference or compound dataset holds, in C order (unwritten
    elements skipped).

    >>> import zarrkit as zk
    >>> refs = create_reference_dataset(zk.group({}), "r", [[Reference("/a")], [Reference("/b")]])
    >>> [r.path for r in iter_references(refs)]
    ['/a', '/b']
    """
    values = np.asarray(read_references(array))
    layout = _layout(array)
    if layout.fields is not None:
        names = [name for name, dtype in layout.fields if _names_reference(dtype)]
        columns = [values[name].reshape(-1) for name in names]
        items: Iterable[Any] = (ref for row in zip(*columns, strict=True) for ref in row)
    else:
        items = values.reshape(-1)
    return [item for item in items if item is not None]


# --- regions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Region:
    """The rows of a table that a region dataset selects (hdmf's ``DynamicTableRegion``,
    NWB's region references: e.g. an ElectricalSeries' ``electrodes``): the ``table``
    group its ``table`` reference attribute names and the row indices it holds.

    >>> import numpy as np, zarrkit as zk
    >>> Region(zk.group({}), np.array([0, 2])).rows.tolist()
    [0, 2]
    """

    table: Group
    rows: np.ndarray[Any, Any]


def read_region(array: Array) -> Region:
    """The table and rows that ``array`` selects: a ``DynamicTableRegion`` dataset (row
    indices) whose ``table`` attribute is a reference (either convention) to the table's
    group. MetadataError if ``array`` has no such attribute or is not of integers;
    LinkError if the table cannot be opened.

    >>> import zarrkit as zk
    >>> root = zk.group({}, zarr_format=3)
    >>> table = root.create_group("electrodes")
    >>> region = root.create_array("es_electrodes", shape=(2,), dtype="i8",
    ...     attributes={"table": encode_attribute(Reference.of(table), root)})
    >>> region[...] = [0, 2]
    >>> found = read_region(region)
    >>> found.table.name, found.rows.tolist()
    ('/electrodes', [0, 2])
    """
    from zarrkit.hierarchy.group import Group

    reference = decode_attribute(array.attrs.get("table"))
    if not isinstance(reference, Reference):
        raise MetadataError(f"array {array.name!r} is no region: its 'table' attribute is "
                            f"not a reference ({array.attrs.get('table')!r:.100})")
    if array.dtype.kind not in "iu":
        raise MetadataError(f"array {array.name!r} is no region: it holds {array.dtype}, "
                            f"not row indices")
    table = reference.resolve(array)
    if not isinstance(table, Group):
        raise MetadataError(f"array {array.name!r}: its table {reference.path!r} is an "
                            f"array, not a table's group")
    return Region(table, np.asarray(array[...]))
