"""Object references: the hdmf-zarr convention (NWB's Zarr backend).

Zarr has no references, so hdmf-zarr stores each one as a JSON object with the target's
``source`` store (``"."`` for the same store, else a path relative to the store's
location), its absolute ``path`` there, and optionally the target's ``object_id`` and the
``object_id`` of the source's root (``source_object_id``): the keys of
``hdmf_zarr.utils.ZarrReference``. :class:`Reference` is one such reference;
:meth:`Reference.resolve` opens its target.

Where references live:

* **Attributes**: ``{"value": {...reference...}, "zarr_dtype": "object"}``, read with
  :func:`decode_attribute` (or :func:`decode_attributes` for all of a node's) and written
  with :func:`encode_attribute`. Attributes themselves are left as stored: only these
  functions interpret them.
* **Reference datasets**: arrays whose ``zarr_dtype`` attribute is ``"object"``. hdmf-zarr
  writes Zarr v2 object arrays whose elements are the references, pickled by default
  (read through :mod:`zarrkit.codecs.restricted_pickle`, never numcodecs' Pickle) or JSON
  (``json2``). Plain indexing gives the stored dicts; :func:`read_references` gives
  :class:`Reference` objects. :func:`create_reference_dataset` writes them with ``json2``
  on v2 and, as v3 has no object data type, as JSON texts in a string array on v3.
* **Compound datasets** with reference fields: ``zarr_dtype`` is a list of
  ``{"name", "dtype"}`` fields, a reference field having dtype ``"object"`` (or ``"ref"``,
  ``"reference"``). hdmf-zarr writes a v2 structured dtype whose reference fields are
  objects; zarrkit writes the same with ``json2`` (each element a JSON list of its field
  values) on v2, and JSON rows in a string array on v3. :func:`read_references` returns a
  structured array whose reference fields hold :class:`Reference` objects.

>>> import zarrkit as zk
>>> root = zk.group({}, zarr_format=2)
>>> ts = root.create_group("acquisition/ts")
>>> refs = create_reference_dataset(root, "refs", [Reference.of(ts)] * 2)
>>> read_references(refs)[0]
Reference(path='/acquisition/ts', source='.', object_id=None, source_object_id=None)
>>> read_references(refs)[1].resolve(refs) == ts
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit.errors import MetadataError

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array
    from zarrkit.hierarchy.group import Group

#: The reserved attribute naming the hdmf data type of a dataset or reference attribute.
ZARR_DTYPE = "zarr_dtype"
#: The ``zarr_dtype`` of references (hdmf-zarr writes "object"; "ref" and "reference" are
#: the other hdmf names of the type).
OBJECT = "object"
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

    def to_json(self) -> dict[str, str | None]:
        """The stored form: hdmf-zarr's ``ZarrReference`` keys ``source``, ``path``,
        ``object_id`` and ``source_object_id`` (None when unknown, as hdmf-zarr writes).

        >>> Reference("/x", object_id="o-1").to_json()["object_id"]
        'o-1'
        """
        return {"source": self.source, "path": self.path, "object_id": self.object_id,
                "source_object_id": self.source_object_id}

    @classmethod
    def from_json(cls, value: Any) -> Reference:
        """The reference a stored mapping describes (a JSON object, or a pickled
        ``ZarrReference``); a missing ``source`` is ``"."``, other keys are ignored.
        MetadataError if it is not a reference.

        >>> Reference.from_json({"path": "/a", "source": ".", "object_id": None})
        Reference(path='/a', source='.', object_id=None, source_object_id=None)
        >>> Reference.from_json({"source": "."})
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: not an object reference (needs a str 'path'): {'source': '.'}
        """
        if not isinstance(value, Mapping):
            raise MetadataError(f"not an object reference (needs a JSON object): {value!r:.200}")
        path, source = value.get("path"), value.get("source", ".")
        if not isinstance(path, str):
            raise MetadataError(f"not an object reference (needs a str 'path'): {value!r:.200}")
        if not isinstance(source, str) or not source:
            raise MetadataError(f"object reference with an invalid source: {value!r:.200}")
        ids = [value.get(key) for key in ("object_id", "source_object_id")]
        if not all(i is None or isinstance(i, str) for i in ids):
            raise MetadataError(f"object reference with an invalid object id: {value!r:.200}")
        return cls(path, source, *ids)


# --- attributes ------------------------------------------------------------------------------


def is_reference_attribute(value: Any) -> bool:
    """Whether an attribute value is a stored reference (or list of references):
    ``{"zarr_dtype": "object", "value": ...}``.

    >>> is_reference_attribute({"zarr_dtype": "object", "value": {"path": "/a"}})
    True
    >>> is_reference_attribute({"value": 1})
    False
    """
    return (isinstance(value, Mapping) and _names_reference(value.get(ZARR_DTYPE))
            and "value" in value)


def decode_attribute(value: Any) -> Any:
    """An attribute value with a stored reference turned into a :class:`Reference` (a
    list of them into a list of References); any other value is returned unchanged.

    >>> decode_attribute({"value": {"path": "/general/extracellular_ephys/electrodes",
    ...     "source": "."}, "zarr_dtype": "object"})
    Reference(path='/general/extracellular_ephys/electrodes', source='.', object_id=None, \
source_object_id=None)
    >>> decode_attribute([1, 2])
    [1, 2]
    """
    if not is_reference_attribute(value):
        return value
    stored = value["value"]
    if isinstance(stored, list):
        return [Reference.from_json(item) for item in stored]
    return Reference.from_json(stored)


def encode_attribute(reference: Reference | Sequence[Reference]) -> dict[str, Any]:
    """The attribute value that stores ``reference`` (or a list of references), as
    hdmf-zarr writes it: ``node.attrs[name] = encode_attribute(ref)``.

    >>> encode_attribute(Reference("/general/devices/dev"))["zarr_dtype"]
    'object'
    >>> decode_attribute(encode_attribute([Reference("/a"), Reference("/b")]))[1].path
    '/b'
    """
    if isinstance(reference, Reference):
        return {"value": reference.to_json(), ZARR_DTYPE: OBJECT}
    items = list(reference)
    if not all(isinstance(item, Reference) for item in items):
        raise TypeError("encode_attribute takes a Reference or a sequence of References")
    return {"value": [item.to_json() for item in items], ZARR_DTYPE: OBJECT}


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


def _decode_element(value: Any) -> Reference | None:
    """A stored reference element: a mapping (json2 or pickled), JSON text (v3), or the
    fill value of an unwritten element (None, 0 or "", read as None)."""
    if isinstance(value, Reference):
        return value
    if isinstance(value, Mapping):
        return Reference.from_json(value)
    if isinstance(value, str):
        if not value:
            return None
        try:
            return Reference.from_json(json.loads(value))
        except (ValueError, RecursionError) as e:
            raise MetadataError(f"not an object reference: {value!r:.200}") from e
    if value is None or (type(value) is int and value == 0):
        return None
    raise MetadataError(f"not an object reference: {value!r:.200}")


_decode_elements = np.frompyfunc(_decode_element, 1, 1)


def _reference_kind(array: Array) -> Any:
    value = array.attrs.get(ZARR_DTYPE)
    if _names_reference(value) or isinstance(value, list):
        return value
    raise MetadataError(f"array {array.name!r} holds no object references (its zarr_dtype "
                        f"attribute is {value!r:.100})")


def read_references(array: Array, selection: Any = Ellipsis) -> Any:
    """``array[selection]`` with its references as :class:`Reference` objects: an object
    array of them for a reference dataset (``zarr_dtype`` ``"object"``), a structured
    array whose reference fields hold them for a compound one (``zarr_dtype`` a list of
    fields). An unwritten element (the fill value) is None. MetadataError for an array
    that holds no references.

    >>> import zarrkit as zk
    >>> root = zk.group({})
    >>> rows = create_reference_dataset(root, "ts", [(0, 5, Reference("/acquisition/ts"))],
    ...     fields=[("idx_start", "int32"), ("count", "int32"), ("timeseries", "object")])
    >>> read_references(rows)[0]["timeseries"].path, int(read_references(rows)[0]["count"])
    ('/acquisition/ts', 5)
    """
    kind = _reference_kind(array)
    stored = array[selection]
    if isinstance(stored, np.ndarray) and stored.dtype.kind == "T":  # v3 strings: objects
        stored = stored.astype(object)
    if not isinstance(kind, list):
        return _decode_elements(stored)
    fields = _fields(kind, f"array {array.name!r}")
    names = array.dtype.names
    structured = names is not None  # v2: references in object fields
    missing = [name for name, _ in fields if names is not None and name not in names]
    if missing:
        raise MetadataError(f"array {array.name!r}: compound fields {missing} are not in its "
                            f"dtype {array.dtype}")
    raw = np.asarray(stored)
    out = np.empty(raw.shape, dtype=_compound_dtype(fields, array.dtype if structured else None))
    if structured:
        for name, hdmf_dtype in fields:
            values = raw[name]
            out[name] = _decode_elements(values) if _names_reference(hdmf_dtype) else values
    else:  # JSON rows in a string array (v3)
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
        raise MetadataError(f"array {name!r}: invalid compound element {text!r:.200}") from e
    if not isinstance(row, list) or len(row) != len(references):
        raise MetadataError(f"array {name!r}: a compound element must be a list of "
                            f"{len(references)} values, found {row!r:.200}")
    return tuple(_decode_element(value) if reference else value
                 for value, reference in zip(row, references, strict=True))


def _stored_reference(value: Any, zarr_format: int) -> Any:
    if value is None:  # an unwritten element: the fill value (json2 null on v2, "" on v3)
        return None if zarr_format == 2 else ""
    if not isinstance(value, Reference):
        raise TypeError(f"a reference dataset holds References, found {value!r:.100}")
    return value.to_json() if zarr_format == 2 else json.dumps(
        value.to_json(), separators=(",", ":"), sort_keys=True)


def _json_value(value: Any) -> Any:
    if isinstance(value, Reference):
        return value.to_json()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _stored_values(array: Array, values: Any) -> np.ndarray[Any, Any]:
    """``values`` (References, or rows of a compound dataset) in the form ``array``
    stores them."""
    kind = _reference_kind(array)
    zarr_format = array.metadata.zarr_format
    if not isinstance(kind, list):
        items = values if isinstance(values, np.ndarray) else np.array(values, dtype=object)
        convert = np.frompyfunc(lambda v: _stored_reference(v, zarr_format), 1, 1)
        return np.asarray(convert(items), dtype=object)
    fields = _fields(kind, f"array {array.name!r}")
    single = isinstance(values, tuple | np.void)  # one row; a sequence of rows otherwise
    shape: tuple[int, ...] | None = () if single else None
    if isinstance(values, np.ndarray) and values.dtype.names:
        shape = values.shape  # a structured array of rows (as read_references gives)
    rows = _rows([values] if single else values, len(fields))
    if zarr_format == 3 or not array.dtype.names:
        texts = np.empty(len(rows), dtype=object)
        for i, row in enumerate(rows):
            texts[i] = json.dumps([_json_value(v) for v in row], separators=(",", ":"),
                                  sort_keys=True)
        return texts if shape is None else texts.reshape(shape)
    cells = np.array([tuple(v.to_json() if isinstance(v, Reference) else v for v in row)
                      for row in rows], dtype=array.dtype)
    return cells if shape is None else cells.reshape(shape)


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
    stored = _stored_values(array, values)
    array[selection] = stored[()] if stored.ndim == 0 else stored


def create_reference_dataset(
    group: Group,
    name: str,
    data: Any,
    *,
    fields: Sequence[tuple[str, str]] | Sequence[Mapping[str, str]] | None = None,
    attributes: Mapping[str, Any] | None = None,
    **options: Any,
) -> Array:
    """Create ``group[name]`` holding ``data`` as hdmf-zarr reads it, with the
    ``zarr_dtype`` attribute set (``"object"``, or the list of ``fields``).

    Without ``fields``, ``data`` is an array-like of :class:`Reference` (any shape).
    With ``fields`` (``(name, hdmf dtype)`` pairs or hdmf's ``{"name", "dtype"}``
    objects; ``"object"`` for references), ``data`` is a sequence of rows, one value
    per field. Zarr v2 stores them as hdmf-zarr's JSON object codec does: an object array
    (a structured dtype with object fields for compound rows) with the ``json2`` filter;
    Zarr v3 stores JSON texts in a string array. ``options`` go to
    :meth:`Group.create_array <zarrkit.hierarchy.group.Group.create_array>` (chunks,
    compressors, overwrite...).

    >>> import zarrkit as zk
    >>> refs = create_reference_dataset(zk.group({}, zarr_format=2), "group",
    ...     [Reference("/general/extracellular_ephys/eg")] * 2)
    >>> refs.attrs["zarr_dtype"], refs.filters[0].codec_id, refs[0]["path"]
    ('object', 'json2', '/general/extracellular_ephys/eg')
    """
    for key in ("dtype", "filters", "fill_value", "shape", "data"):
        if key in options:
            raise TypeError(f"create_reference_dataset chooses {key!r} itself")
    zarr_format = options.pop("zarr_format", None) or group.zarr_format
    if fields is None:
        pairs = None
        values = data if isinstance(data, np.ndarray) else np.array(data, dtype=object)
        shape = values.shape
    else:
        pairs = _known_fields(fields, f"array {name!r}")
        rows = _rows(data, len(pairs))
        values = rows  # type: ignore[assignment]
        shape = (len(rows),)
    storage = _array_options(zarr_format, pairs)
    storage["attributes"] = {**(attributes or {}), **storage["attributes"]}
    array = group.create_array(name, shape=shape, zarr_format=zarr_format, **storage, **options)
    if np.prod(shape):
        write_references(array, Ellipsis, values)
    return array


def _known_fields(fields: Iterable[tuple[str, str]] | Iterable[Mapping[str, str]],
                  where: str) -> list[tuple[str, str]]:
    """``(name, dtype)`` pairs or ``{"name", "dtype"}`` objects as (name, dtype) pairs,
    each dtype one of the compound field dtypes."""
    return _fields([dict(f) if isinstance(f, Mapping) else list(f) for f in fields],
                   where, known=True)


def _array_options(zarr_format: int, pairs: list[tuple[str, str]] | None) -> dict[str, Any]:
    """:func:`reference_array_options` of checked ``(name, dtype)`` fields (None: not a
    compound dataset)."""
    types = _field_types()
    zarr_dtype: Any = OBJECT if pairs is None else [
        {"name": field, "dtype": types[dtype_name][1]} for field, dtype_name in pairs]
    options: dict[str, Any] = {"dtype": str}  # v3: JSON texts in a string array
    if zarr_format == 2:
        options = {"dtype": object if pairs is None else
                   np.dtype([(field, types[d][0]) for field, d in pairs]),
                   "filters": [_JSON2], "fill_value": None}
    options["attributes"] = {ZARR_DTYPE: zarr_dtype}
    return options


def reference_array_options(
    zarr_format: int,
    fields: Sequence[tuple[str, str]] | Sequence[Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """Keyword arguments for :func:`zarrkit.create_array` that store references (a
    compound dataset: ``fields`` as for :func:`create_reference_dataset`) as
    :func:`create_reference_dataset` does, to be filled with :func:`write_references`:
    ``dtype`` (on v2 objects, or a structured dtype whose text and reference fields are
    objects, with the ``json2`` filter and a null ``fill_value``; ``str`` on v3, whose
    elements are JSON texts) and the ``zarr_dtype`` attribute (``"object"``, or the
    fields with hdmf-zarr's dtype names). MetadataError for an unknown field dtype.

    >>> reference_array_options(2)
    {'dtype': <class 'object'>, 'filters': [{'id': 'json2'}], 'fill_value': None, \
'attributes': {'zarr_dtype': 'object'}}
    >>> options = reference_array_options(3, [("n", "int"), ("target", "ref")])
    >>> options["dtype"], options["attributes"]["zarr_dtype"]
    (<class 'str'>, [{'name': 'n', 'dtype': 'int32'}, {'name': 'target', 'dtype': 'object'}])
    """
    if zarr_format not in (2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, found {zarr_format!r}")
    pairs = None if fields is None else _known_fields(fields, "compound dataset")
    return _array_options(zarr_format, pairs)


def iter_references(array: Array) -> Iterable[Reference]:
    """Every reference a reference or compound dataset holds, in C order (unwritten
    elements skipped).

    >>> import zarrkit as zk
    >>> refs = create_reference_dataset(zk.group({}), "r", [[Reference("/a")], [Reference("/b")]])
    >>> [r.path for r in iter_references(refs)]
    ['/a', '/b']
    """
    values = np.asarray(read_references(array))
    kind = _reference_kind(array)
    if isinstance(kind, list):
        names = [name for name, dtype in _fields(kind, array.name) if _names_reference(dtype)]
        columns = [values[name].reshape(-1) for name in names]
        items: Iterable[Any] = (ref for row in zip(*columns, strict=True) for ref in row)
    else:
        items = values.reshape(-1)
    return [item for item in items if item is not None]
