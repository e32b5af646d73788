"""Zarr v3 metadata documents: the ``zarr.json`` of arrays and groups.

Unknown fields follow the spec's extension rules: a top-level field zarrkit does not know,
or an unknown codec or storage transformer, is refused with
:class:`~zarrkit.errors.UnsupportedExtensionError` unless it is an object that says
``"must_understand": false``, in which case it is kept and written back unchanged.

>>> meta = parse_node_v3({"zarr_format": 3, "node_type": "array", "shape": [10],
...     "data_type": "int32", "chunk_grid": {"name": "regular",
...     "configuration": {"chunk_shape": [5]}}, "chunk_key_encoding": {"name": "default"},
...     "fill_value": 0, "codecs": ["bytes"]})
>>> meta.chunks, meta.dtype, meta.chunk_key((1,)), meta.codecs
((5,), dtype('int32'), 'c/1', ({'name': 'bytes'},))
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from zarrkit import registry
from zarrkit.caching import BoundedCache
from zarrkit.errors import MetadataError, UnknownCodecError, UnsupportedExtensionError
from zarrkit.metadata.chunk_grid import (
    ChunkGrid,
    RectilinearChunkGrid,
    RegularChunkGrid,
    parse_chunk_grid,
)
from zarrkit.metadata.chunk_key_encoding import ChunkKeyEncoding
from zarrkit.metadata.consolidated import check_consolidated_v3
from zarrkit.metadata.dtypes import bytes_codec_json
from zarrkit.metadata.dtypes_v3 import DataTypeV3, parse_data_type_v3, parse_extension
from zarrkit.metadata.fill_value import (
    decode_fill_value_v3,
    default_fill_value_v3,
    encode_fill_value_v3,
)
from zarrkit.metadata.jsonio import MAX_JSON_DEPTH, content_key, json_depth_exceeds

ZARR_JSON = "zarr.json"

_REQUIRED_ARRAY_KEYS = ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value",
                        "codecs")
_ARRAY_KEYS = frozenset({"zarr_format", "node_type", *_REQUIRED_ARRAY_KEYS, "attributes",
                         "dimension_names", "storage_transformers"})
#: The member of a group's ``zarr.json`` that holds its consolidated metadata.
CONSOLIDATED_MEMBER = "consolidated_metadata"
_GROUP_KEYS = frozenset({"zarr_format", "node_type", "attributes", CONSOLIDATED_MEMBER})


def _prefixed(error: MetadataError, key: str) -> MetadataError:
    """The same kind of error, its message starting with the document's key."""
    prefixed = type(error)(f"{key}: {error}")
    prefixed.__cause__ = error
    return prefixed


def _check_header(document: Any, key: str, node_type: str) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise MetadataError(f"{key}: expected a JSON object, found {type(document).__name__}")
    zarr_format = document.get("zarr_format")
    if zarr_format != 3 or isinstance(zarr_format, bool):
        raise MetadataError(f"{key}: zarr_format must be 3, found {zarr_format!r}")
    if document.get("node_type") != node_type:
        raise MetadataError(
            f"{key}: node_type must be {node_type!r}, found {document.get('node_type')!r}"
        )
    return document


def _extra_fields(document: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for name in document:
        if name in known:
            continue
        value = document[name]
        if not (isinstance(value, dict) and value.get("must_understand") is False):
            raise UnsupportedExtensionError(
                f"unsupported field {name!r} (zarrkit does not implement it and it is not "
                "marked \"must_understand\": false)"
            )
        extra[name] = copy.deepcopy(value)
    return extra


def _copy_json(value: Any) -> Any:
    """A deep copy of a JSON-like tree: ``copy.deepcopy``'s result, without its memo and
    dispatch for the dicts, lists and scalars metadata consists of (5x faster; to_json of
    1000 arrays was dominated by deepcopy).

    >>> tree = {"a": [1, {"b": None}]}
    >>> copied = _copy_json(tree)
    >>> copied == tree and copied["a"][1] is not tree["a"][1]
    True
    """
    kind = type(value)
    if kind is dict:
        return {k: _copy_json(v) for k, v in value.items()}
    if kind is list:
        return [_copy_json(v) for v in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)  # tuples, numpy values, subclasses: the general copy


_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def _check_extra(extra: dict[str, Any], known: frozenset[str]) -> None:
    for name, value in extra.items():
        if name in known:
            raise MetadataError(f"extra field {name!r} is a standard field")
        if not (isinstance(value, dict) and value.get("must_understand") is False):
            raise MetadataError(f"extra field {name!r} must be an object with "
                                "\"must_understand\": false")


def _attributes(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MetadataError(f"attributes must be a JSON object, found {value!r}")
    return value


def _check_nesting(value: Any, name: str) -> None:
    """Refuse a free-form member (attributes, extensions) nested so deep that its document
    could not be written, nor read back (parsed documents are already within the limit;
    this guards values given in code)."""
    if json_depth_exceeds(value, MAX_JSON_DEPTH - 1):
        raise MetadataError(f"{name} nest deeper than {MAX_JSON_DEPTH - 1} levels")


def _codec_is_known(name: str) -> bool:
    if name in registry.codecs:
        return True  # the common case, before names(), which sorts every entry
    if name.startswith("numcodecs."):
        # The codec pipeline resolves these through numcodecs, without registration, and
        # reports an id numcodecs lacks itself.
        return True
    if not registry.codecs.names():
        # No v3 codec is registered (zarrkit.codecs.v3 is not loaded): which codecs are
        # supported is then for the codec pipeline to say when it is built.
        return True
    return False


def _normalize_codec(codec: Any) -> dict[str, Any]:
    ref = parse_extension(codec, "codec", strict=False)
    if isinstance(codec, str):
        return {"name": codec}
    if ref.must_understand and not _codec_is_known(ref.name):
        raise UnknownCodecError(f"unknown codec {ref.name!r}")
    # Shallow: parsed documents are never mutated, and deep copies of 1000 codec lists
    # dominated opening a large hierarchy.
    return dict(codec)


#: The codecs of metadata built without any: a ``bytes`` codec, little endian where the
#: data type has a byte order (told apart by identity; a document's codecs are its own).
_DEFAULT_CODECS: tuple[dict[str, Any], ...] = ({"name": "bytes"},)


def _codec_tuple(codecs: Sequence[Any]) -> tuple[dict[str, Any], ...]:
    if not codecs:
        raise MetadataError("codecs must not be empty (an array -> bytes codec is required)")
    return tuple(_normalize_codec(c) for c in codecs)


def _normalize_storage_transformer(transformer: Any) -> dict[str, Any]:
    ref = parse_extension(transformer, "storage transformer", strict=False)
    # zarrkit implements no storage transformer; only ignorable ones can be kept.
    if ref.must_understand:
        raise UnsupportedExtensionError(f"unsupported storage transformer {ref.name!r}")
    return dict(transformer)


def _dimension_names(names: Any, ndim: int) -> tuple[str | None, ...]:
    if isinstance(names, str) or not isinstance(names, Sequence) or not all(
        n is None or isinstance(n, str) for n in names
    ):
        raise MetadataError(f"dimension_names must be a list of strings or nulls, found {names!r}")
    if len(names) != ndim:
        raise MetadataError(
            f"dimension_names {list(names)} has {len(names)} entries but the array "
            f"has {ndim} dimensions"
        )
    return tuple(names)


def _int_tuple(value: Any, name: str) -> tuple[int, ...]:
    if type(value) is list and all(type(n) is int and n >= 0 for n in value):
        return tuple(value)  # a JSON list: the ABC and numpy checks below cost more
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in value
    ):
        raise MetadataError(f"{name} must be a list of non-negative integers, found {value!r}")
    return tuple(int(n) for n in value)


def _fill_identity(value: Any) -> Any:
    """What makes two fill values equal: their bytes, so NaN equals the same NaN."""
    if isinstance(value, np.generic):
        return (value.dtype.str, value.dtype.descr, value.tobytes())
    return (type(value).__name__, value)


# Parsed array documents by their content other than attributes (``layout_key``): the
# arrays of a hierarchy are mostly alike (S9's 1,000 differ in their attributes only), and
# parsing each whole was a third of the cost of opening it. Only successes are kept: an
# invalid document raises every time.
_PARSED_ARRAYS: BoundedCache[bytes, tuple[dict[str, Any], ArrayMetadataV3]] = BoundedCache(256)


@dataclass(frozen=True, eq=False)
class ArrayMetadataV3:
    """The ``zarr.json`` of an array, parsed.

    ``fill_value`` is decoded (a numpy scalar of ``data_type.numpy``; str or bytes for the
    ``string`` and ``bytes`` types); None means the data type's default. ``codecs`` are JSON
    objects ``{"name": ..., "configuration": ...}`` (validated by the codec pipeline).
    Equality compares fill values bit for bit, so NaN fills compare equal.

    >>> from zarrkit.metadata.dtypes_v3 import data_type_v3_from_numpy
    >>> m = ArrayMetadataV3(shape=(4,), data_type=data_type_v3_from_numpy("f4"),
    ...     chunk_grid=RegularChunkGrid((2,)), fill_value=float("nan"), codecs=("bytes",))
    >>> m.to_json()["fill_value"], m.fill_value.dtype, m == ArrayMetadataV3.from_json(m.to_json())
    ('NaN', dtype('float32'), True)
    """

    shape: tuple[int, ...]
    data_type: DataTypeV3
    chunk_grid: ChunkGrid
    chunk_key_encoding: ChunkKeyEncoding = field(default_factory=ChunkKeyEncoding)
    fill_value: Any = None
    codecs: tuple[dict[str, Any], ...] = _DEFAULT_CODECS
    attributes: dict[str, Any] = field(default_factory=dict)
    dimension_names: tuple[str | None, ...] | None = None
    storage_transformers: tuple[dict[str, Any], ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    #: The content of the document parsed (``from_json``) other than its attributes, as
    #: :func:`~zarrkit.metadata.jsonio.content_key` gives it; None when built otherwise.
    #: What an array works out from its metadata is cached under it (not an init field:
    #: ``replace`` makes a new one None).
    layout_key: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Direct construction: every field is coerced and checked here. from_json checks
        # the document itself and builds through _from_checked, skipping this second pass
        # (it was half the cost of parsing a zarr.json).
        set_ = object.__setattr__
        set_(self, "shape", _int_tuple(self.shape, "shape"))
        if not isinstance(self.data_type, DataTypeV3):
            raise MetadataError(f"data_type must be a DataTypeV3, found {self.data_type!r}")
        if not isinstance(self.chunk_grid, ChunkGrid):
            raise MetadataError(f"chunk_grid must be a ChunkGrid, found {self.chunk_grid!r}")
        self.chunk_grid.check_array_shape(self.shape)
        if not isinstance(self.chunk_key_encoding, ChunkKeyEncoding):
            raise MetadataError(
                f"chunk_key_encoding must be a ChunkKeyEncoding, found {self.chunk_key_encoding!r}"
            )
        if self.fill_value is None:
            set_(self, "fill_value", default_fill_value_v3(self.data_type))
        else:
            # Through the JSON form and back: checks the value and gives it its exact type.
            set_(self, "fill_value", decode_fill_value_v3(
                encode_fill_value_v3(self.fill_value, self.data_type), self.data_type
            ))
        if isinstance(self.codecs, (str, dict)) or not isinstance(self.codecs, Sequence):
            raise MetadataError(f"codecs must be a list, found {self.codecs!r}")
        if self.codecs is _DEFAULT_CODECS:
            # The spec requires a bytes codec's endian where the data type has a byte
            # order (zarr-python 3.4 refuses a document without it).
            set_(self, "codecs", (bytes_codec_json(self.data_type.numpy),))
        set_(self, "codecs", _codec_tuple(self.codecs))
        set_(self, "attributes", _attributes(self.attributes))
        _check_nesting(self.attributes, "attributes")
        if self.dimension_names is not None:
            set_(self, "dimension_names", _dimension_names(self.dimension_names, len(self.shape)))
        if isinstance(self.storage_transformers, (str, dict)) or not isinstance(
            self.storage_transformers, Sequence
        ):
            raise MetadataError(
                f"storage_transformers must be a list, found {self.storage_transformers!r}"
            )
        set_(self, "storage_transformers", tuple(
            _normalize_storage_transformer(t) for t in self.storage_transformers
        ))
        _check_extra(self.extra, _ARRAY_KEYS)
        _check_nesting(self.extra, "extension fields")

    @classmethod
    def _from_checked(cls, **fields: Any) -> ArrayMetadataV3:
        """An instance from fields that are already in their final, validated form.

        Only from_json calls this, after doing every check of ``__post_init__`` that its
        parsers do not already guarantee; a subclass (which may add checks of its own)
        still goes through ``__init__``.
        """
        if cls is not ArrayMetadataV3:
            return cls(**fields)
        metadata = object.__new__(cls)
        # Frozen: __setattr__ refuses, but the instance dict takes the fields directly.
        metadata.__dict__.update(fields)
        return metadata

    def _with_parsed_attributes(self, attributes: dict[str, Any]) -> ArrayMetadataV3:
        """A copy holding ``attributes`` (already checked) instead of this one's: another
        document of the same layout, parsed."""
        metadata = object.__new__(type(self))
        metadata.__dict__.update(self.__dict__)
        metadata.__dict__["attributes"] = attributes
        metadata.__dict__["extra"] = dict(self.extra)
        return metadata

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayMetadataV3):
            return NotImplemented
        return (
            self.shape == other.shape
            and self.data_type == other.data_type
            and self.chunk_grid == other.chunk_grid
            and self.chunk_key_encoding == other.chunk_key_encoding
            and _fill_identity(self.fill_value) == _fill_identity(other.fill_value)
            and self.codecs == other.codecs
            and self.attributes == other.attributes
            and self.dimension_names == other.dimension_names
            and self.storage_transformers == other.storage_transformers
            and self.extra == other.extra
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def zarr_format(self) -> Literal[3]:
        """Always 3.

        >>> ArrayMetadataV3(shape=(), data_type=parse_data_type_v3("int8"),
        ...     chunk_grid=RegularChunkGrid(())).zarr_format
        3
        """
        return 3

    @property
    def node_type(self) -> Literal["array"]:
        """Always ``"array"``.

        >>> ArrayMetadataV3(shape=(), data_type=parse_data_type_v3("int8"),
        ...     chunk_grid=RegularChunkGrid(())).node_type
        'array'
        """
        return "array"

    @property
    def dtype(self) -> np.dtype[Any]:
        """The numpy dtype of decoded arrays (``object`` for ``string`` and ``bytes``).

        >>> ArrayMetadataV3(shape=(), data_type=parse_data_type_v3("string"),
        ...     chunk_grid=RegularChunkGrid(()), codecs=("vlen-utf8",)).dtype
        dtype('O')
        """
        return self.data_type.numpy

    @property
    def ndim(self) -> int:
        """Number of dimensions.

        >>> ArrayMetadataV3(shape=(3, 0), data_type=parse_data_type_v3("int8"),
        ...     chunk_grid=RegularChunkGrid((2, 2))).ndim
        2
        """
        return len(self.shape)

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape of a regular chunk grid.

        >>> m = ArrayMetadataV3.from_json({"zarr_format": 3, "node_type": "array",
        ...     "shape": [3], "data_type": "uint8", "chunk_key_encoding": {"name": "default"},
        ...     "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline",
        ...     "chunk_shapes": [[1, 2]]}}, "fill_value": 0, "codecs": [{"name": "bytes"}]})
        >>> m.chunks  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.UnsupportedExtensionError: the array has a 'rectilinear' chunk grid, ...
        """
        if isinstance(self.chunk_grid, RegularChunkGrid):
            return self.chunk_grid.chunk_shape
        raise UnsupportedExtensionError(
            f"the array has a {self.chunk_grid.name!r} chunk grid, which has no single chunk "
            "shape; zarrkit arrays support only regular chunk grids for now"
        )

    def chunk_key(self, chunk_coords: Sequence[int]) -> str:
        """The key of a chunk relative to the array (``"c/0/1"`` with the default encoding).

        >>> ArrayMetadataV3(shape=(), data_type=parse_data_type_v3("bool"),
        ...     chunk_grid=RegularChunkGrid(())).chunk_key(())
        'c'
        """
        return self.chunk_key_encoding.encode(chunk_coords)

    def chunk_key_layout(self) -> tuple[str, str] | None:
        """(prefix, separator) of the keys of chunks of one or more dimensions (see
        :meth:`ChunkKeyEncoding.layout`), or None when their encoding has rules of its own.

        >>> ArrayMetadataV3(shape=(4,), data_type=parse_data_type_v3("int8"),
        ...     chunk_grid=RegularChunkGrid((2,))).chunk_key_layout()
        ('c/', '/')
        """
        return self.chunk_key_encoding.layout()

    def parse_chunk_key(self, relative_key: str) -> tuple[int, ...] | None:
        """The chunk coordinates a key (relative to the array) names, or None when it
        names no chunk of this array (the inverse of :meth:`chunk_key`).

        >>> m = ArrayMetadataV3(shape=(4,), data_type=parse_data_type_v3("int8"),
        ...     chunk_grid=RegularChunkGrid((2,)))
        >>> m.parse_chunk_key("c/1"), m.parse_chunk_key("c/1/0"), m.parse_chunk_key("zarr.json")
        ((1,), None, None)
        """
        coords = self.chunk_key_encoding.decode(relative_key)
        return None if coords is None or len(coords) != len(self.shape) else tuple(coords)

    def with_shape(self, shape: Sequence[int]) -> ArrayMetadataV3:
        """A copy with a new shape (for resize); the number of dimensions cannot change.

        >>> m = ArrayMetadataV3(shape=(2,), data_type=parse_data_type_v3("int8"),
        ...     chunk_grid=RegularChunkGrid((2,)))
        >>> m.with_shape((5,)).shape
        (5,)
        """
        return replace(self, shape=tuple(shape))

    def with_attributes(self, attributes: dict[str, Any]) -> ArrayMetadataV3:
        """A copy with new user attributes.

        >>> m = ArrayMetadataV3(shape=(2,), data_type=parse_data_type_v3("int8"),
        ...     chunk_grid=RegularChunkGrid((2,)))
        >>> m.with_attributes({"units": "m"}).to_json()["attributes"]
        {'units': 'm'}
        """
        return replace(self, attributes=dict(attributes))

    @classmethod
    def from_json(cls, document: Any, key: str = ZARR_JSON) -> ArrayMetadataV3:
        """Parse an array's ``zarr.json`` document; errors name ``key``.

        >>> ArrayMetadataV3.from_json({"zarr_format": 3, "node_type": "array"}, "a/zarr.json")
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: a/zarr.json: missing required key 'shape'
        """
        layout = content = None
        if cls is ArrayMetadataV3 and type(document) is dict:
            content = dict(document)  # a copy and a pop: twice as fast as a comprehension
            content.pop("attributes", None)
            layout = content_key(content)
            seen = None if layout is None else _PARSED_ARRAYS.get(layout)
            # The key tells true, 1 and 1.0 apart, == tells a list from a tuple (a
            # document built in Python, not parsed from JSON): both must agree.
            if seen is not None and seen[0] == content:
                try:
                    attributes = dict(_attributes(document.get("attributes", {})))
                except MetadataError as e:
                    raise _prefixed(e, key) from e
                return seen[1]._with_parsed_attributes(attributes)
        try:
            document = _check_header(document, key, "array")
            for name in _REQUIRED_ARRAY_KEYS:
                if name not in document:
                    raise MetadataError(f"missing required key {name!r}")
            extra = _extra_fields(document, _ARRAY_KEYS)
            shape = _int_tuple(document["shape"], "shape")
            data_type = parse_data_type_v3(document["data_type"])
            chunk_grid = parse_chunk_grid(document["chunk_grid"])
            chunk_key_encoding = ChunkKeyEncoding.from_json(document["chunk_key_encoding"])
            fill_value = decode_fill_value_v3(document["fill_value"], data_type)
            codecs = document["codecs"]
            if not isinstance(codecs, list):
                raise MetadataError(f"codecs must be a list, found {codecs!r}")
            transformers = document.get("storage_transformers", [])
            if not isinstance(transformers, list):
                raise MetadataError(f"storage_transformers must be a list, found {transformers!r}")
            dimension_names = document.get("dimension_names")
            if dimension_names is not None and not isinstance(dimension_names, list):
                raise MetadataError(
                    f"dimension_names must be a list of strings or nulls, found {dimension_names!r}"
                )
            # What __post_init__ would check next, in its order. Left out: the field types
            # (the parsers above return them) and the fill value's trip through its JSON
            # form (decode_fill_value_v3 already gave it its exact type); ``extra`` holds
            # only unknown names marked "must_understand": false, as _check_extra requires.
            chunk_grid.check_array_shape(shape)
            codec_tuple = _codec_tuple(codecs)
            attributes = dict(_attributes(document.get("attributes", {})))
            names = (None if dimension_names is None
                     else _dimension_names(dimension_names, len(shape)))
            transformer_tuple = tuple(_normalize_storage_transformer(t) for t in transformers)
            metadata = cls._from_checked(
                shape=shape,
                data_type=data_type,
                chunk_grid=chunk_grid,
                chunk_key_encoding=chunk_key_encoding,
                fill_value=fill_value,
                codecs=codec_tuple,
                attributes=attributes,
                dimension_names=names,
                storage_transformers=transformer_tuple,
                extra=extra,
            )
        except MetadataError as e:
            if str(e).startswith(f"{key}: "):
                raise
            raise _prefixed(e, key) from e
        if layout is not None and content is not None:
            metadata.__dict__["layout_key"] = layout
            _PARSED_ARRAYS.put(layout, (content, metadata))
        return metadata

    def to_json(self) -> dict[str, Any]:
        """The ``zarr.json`` document (a fresh object the caller may modify).

        >>> m = ArrayMetadataV3(shape=(4, 4), data_type=parse_data_type_v3("uint8"),
        ...     chunk_grid=RegularChunkGrid((2, 2)), dimension_names=("y", None))
        >>> doc = m.to_json()
        >>> doc["chunk_key_encoding"], doc["fill_value"], doc["dimension_names"]
        ({'name': 'default', 'configuration': {'separator': '/'}}, 0, ['y', None])
        """
        # zarr-python's field order, so that both libraries write the same bytes.
        document: dict[str, Any] = {
            "shape": list(self.shape),
            "data_type": _copy_json(self.data_type.json),
            "chunk_grid": self.chunk_grid.to_json(),
            "chunk_key_encoding": self.chunk_key_encoding.to_json(),
            "fill_value": encode_fill_value_v3(self.fill_value, self.data_type),
            "codecs": _copy_json(list(self.codecs)),
            "attributes": _copy_json(self.attributes),
        }
        if self.dimension_names is not None:
            document["dimension_names"] = list(self.dimension_names)
        document["zarr_format"] = 3
        document["node_type"] = "array"
        document["storage_transformers"] = _copy_json(list(self.storage_transformers))
        document.update(_copy_json(self.extra))
        return document


class ConsolidatedMetadata:
    """A group's inline consolidated metadata (zarr-python's ``ConsolidatedMetadata``).

    Stored flat, as zarr-python writes it: ``{"kind": "inline", "must_understand": false,
    "metadata": {relative path: zarr.json document}}``. As in zarr-python, ``metadata``
    holds the direct members only, each parsed, a member group carrying the snapshot of
    its own members in its ``consolidated_metadata``; ``flattened_metadata`` holds every
    node below the group by relative path. Entries are parsed when first asked for:
    opening a group of thousands of arrays does not parse them all.

    >>> cm = ConsolidatedMetadata.from_dict({"kind": "inline", "must_understand": False,
    ...     "metadata": {"a": {"zarr_format": 3, "node_type": "group"},
    ...                  "a/b": {"zarr_format": 3, "node_type": "group"}}})
    >>> list(cm.metadata), list(cm.metadata["a"].consolidated_metadata.metadata)
    (['a'], ['b'])
    >>> sorted(cm.flattened_metadata), cm.kind, cm.must_understand
    (['a', 'a/b'], 'inline', False)
    """

    def __init__(self, document: dict[str, Any], *, nested: bool = False) -> None:
        check_consolidated_v3(document)
        self._document = document
        # The snapshot a member group carries (zarr-python's nesting): its own member
        # groups with nothing below them keep what their stored document says.
        self._nested = nested

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConsolidatedMetadata:
        """Parse the stored ``consolidated_metadata`` object (MetadataError if it is
        malformed; each entry is checked when parsed)."""
        return cls(data)

    def to_dict(self) -> dict[str, Any]:
        """The stored form (a fresh object the caller may modify).

        >>> ConsolidatedMetadata.from_dict({"kind": "inline", "metadata": {}}).to_dict()
        {'kind': 'inline', 'metadata': {}}
        """
        return _copy_json(self._document)  # type: ignore[no-any-return]

    @property
    def kind(self) -> str:
        """Always ``"inline"`` (the only kind there is)."""
        return str(self._document["kind"])

    @property
    def must_understand(self) -> bool:
        """Whether a reader must understand the snapshot (false as written by Zarr
        implementations; absent counts as false)."""
        return bool(self._document.get("must_understand", False))

    @property
    def documents(self) -> dict[str, dict[str, Any]]:
        """Every entry's stored ``zarr.json`` document by path relative to the group
        (shared: not to be modified)."""
        return self._document["metadata"]  # type: ignore[no-any-return]

    @property
    def flattened_metadata(self) -> dict[str, ArrayMetadataV3 | GroupMetadataV3]:
        """Every node below the group, parsed, by relative path; groups with an empty
        snapshot, as zarr-python's ``flattened_metadata``.

        >>> ConsolidatedMetadata.from_dict({"kind": "inline", "metadata": {"g": {
        ...     "zarr_format": 3, "node_type": "group"}}}).flattened_metadata["g"]
        ... # doctest: +ELLIPSIS
        GroupMetadataV3(attributes={}, consolidated_metadata=ConsolidatedMetadata(metadata={}, ...
        """
        cached = self.__dict__.get("_flat_cache")
        if cached is None:
            empty = {"kind": "inline", "must_understand": False, "metadata": {}}
            cached = {}
            for path, document in self.documents.items():
                node = parse_node_v3(document, f"consolidated_metadata entry {path!r}")
                if isinstance(node, GroupMetadataV3):
                    node = replace(node, consolidated_metadata=ConsolidatedMetadata(empty))
                cached[path] = node
            self.__dict__["_flat_cache"] = cached
        return cached  # type: ignore[no-any-return]

    @property
    def metadata(self) -> dict[str, ArrayMetadataV3 | GroupMetadataV3]:
        """The direct members, parsed, by name; a member group holds the snapshot of
        the nodes below it."""
        cached = self.__dict__.get("_members_cache")
        if cached is None:
            cached = {}
            for path, document in self.documents.items():
                if "/" in path:
                    continue
                node = parse_node_v3(document, f"consolidated_metadata entry {path!r}")
                prefix = path + "/"
                below = {k[len(prefix):]: v for k, v in self.documents.items()
                         if k.startswith(prefix)}
                if isinstance(node, GroupMetadataV3) and (below or not self._nested):
                    node = replace(node, consolidated_metadata=ConsolidatedMetadata(
                        {**self._document, "metadata": below}, nested=True))
                cached[path] = node
            self.__dict__["_members_cache"] = cached
        return cached  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConsolidatedMetadata):
            return NotImplemented
        return self._document == other._document

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"ConsolidatedMetadata(metadata={self.metadata!r}, kind={self.kind!r}, "
                f"must_understand={self.must_understand!r})")


@dataclass(frozen=True)
class GroupMetadataV3:
    """The ``zarr.json`` of a group, parsed.

    ``consolidated_metadata`` is the inline snapshot zarr-python writes, as a
    :class:`ConsolidatedMetadata` (given as its stored dict, it is parsed into one), or
    None.

    >>> GroupMetadataV3(attributes={"a": 1}).to_json()
    {'attributes': {'a': 1}, 'zarr_format': 3, 'node_type': 'group'}
    """

    attributes: dict[str, Any] = field(default_factory=dict)
    consolidated_metadata: ConsolidatedMetadata | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _attributes(self.attributes)
        _check_nesting(self.attributes, "attributes")
        if self.consolidated_metadata is not None and not isinstance(
                self.consolidated_metadata, ConsolidatedMetadata):
            object.__setattr__(self, "consolidated_metadata",
                               ConsolidatedMetadata(self.consolidated_metadata))
        _check_extra(self.extra, _GROUP_KEYS)
        _check_nesting(self.extra, "extension fields")

    @property
    def zarr_format(self) -> Literal[3]:
        """Always 3.

        >>> GroupMetadataV3().zarr_format
        3
        """
        return 3

    @property
    def node_type(self) -> Literal["group"]:
        """Always ``"group"``.

        >>> GroupMetadataV3().node_type
        'group'
        """
        return "group"

    def with_attributes(self, attributes: dict[str, Any]) -> GroupMetadataV3:
        """A copy with new user attributes.

        >>> GroupMetadataV3().with_attributes({"x": 1}).attributes
        {'x': 1}
        """
        return replace(self, attributes=dict(attributes))

    def consolidated_nodes(
        self, key: str = ZARR_JSON
    ) -> dict[str, ArrayMetadataV3 | GroupMetadataV3]:
        """The consolidated child nodes parsed, by path relative to this group (empty when
        there is no consolidated metadata).

        >>> g = GroupMetadataV3(consolidated_metadata={"kind": "inline",
        ...     "must_understand": False, "metadata": {"sub": {"zarr_format": 3,
        ...     "node_type": "group"}}})
        >>> g.consolidated_nodes()
        {'sub': GroupMetadataV3(attributes={}, consolidated_metadata=None, extra={})}
        """
        if self.consolidated_metadata is None:
            return {}
        prefix = key[: -len(ZARR_JSON)] if key.endswith(ZARR_JSON) else ""
        return {
            path: parse_node_v3(document, f"{prefix}{path}/{ZARR_JSON}")
            for path, document in self.consolidated_metadata.documents.items()
        }

    @classmethod
    def from_json(cls, document: Any, key: str = ZARR_JSON) -> GroupMetadataV3:
        """Parse a group's ``zarr.json`` document; errors name ``key``.

        >>> GroupMetadataV3.from_json({"zarr_format": 3, "node_type": "group",
        ...     "attributes": {"a": 1}}).attributes
        {'a': 1}
        >>> GroupMetadataV3.from_json({"zarr_format": 2, "node_type": "group"}, "g/zarr.json")
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: g/zarr.json: zarr_format must be 3, found 2
        """
        try:
            document = _check_header(document, key, "group")
            extra = _extra_fields(document, _GROUP_KEYS)
            return cls(
                attributes=dict(_attributes(document.get("attributes", {}))),
                consolidated_metadata=document.get(CONSOLIDATED_MEMBER),
                extra=extra,
            )
        except MetadataError as e:
            if str(e).startswith(f"{key}: "):
                raise
            raise _prefixed(e, key) from e

    def to_json(self) -> dict[str, Any]:
        """The ``zarr.json`` document (a fresh object the caller may modify).

        >>> GroupMetadataV3(extra={"x": {"must_understand": False}}).to_json()["x"]
        {'must_understand': False}
        """
        # zarr-python's field order, so that both libraries write the same bytes.
        document: dict[str, Any] = {"attributes": _copy_json(self.attributes), "zarr_format": 3}
        if self.consolidated_metadata is not None:
            document[CONSOLIDATED_MEMBER] = self.consolidated_metadata.to_dict()
        document["node_type"] = "group"
        document.update(_copy_json(self.extra))
        return document


def parse_node_v3(document: Any, key: str = ZARR_JSON) -> ArrayMetadataV3 | GroupMetadataV3:
    """Parse a ``zarr.json`` document as an array or a group, by its ``node_type``.

    >>> parse_node_v3({"zarr_format": 3, "node_type": "group"})
    GroupMetadataV3(attributes={}, consolidated_metadata=None, extra={})
    >>> parse_node_v3({"zarr_format": 3, "node_type": "dataset"}, "x/zarr.json")
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: x/zarr.json: node_type must be 'array' or 'group', found 'dataset'
    """
    if not isinstance(document, dict):
        raise MetadataError(f"{key}: expected a JSON object, found {type(document).__name__}")
    node_type = document.get("node_type")
    if node_type == "array":
        return ArrayMetadataV3.from_json(document, key)
    if node_type == "group":
        return GroupMetadataV3.from_json(document, key)
    zarr_format = document.get("zarr_format")
    if zarr_format != 3 or isinstance(zarr_format, bool):
        raise MetadataError(f"{key}: zarr_format must be 3, found {zarr_format!r}")
    raise MetadataError(f"{key}: node_type must be 'array' or 'group', found {node_type!r}")


__all__ = [
    "ZARR_JSON",
    "ArrayMetadataV3",
    "ConsolidatedMetadata",
    "GroupMetadataV3",
    "RectilinearChunkGrid",
    "RegularChunkGrid",
    "parse_node_v3",
]
