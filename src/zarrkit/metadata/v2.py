"""Zarr v2 metadata documents: ``.zarray``, ``.zgroup``, ``.zattrs`` and ``.zmetadata``.

>>> meta = ArrayMetadataV2.from_json({"zarr_format": 2, "shape": [10], "chunks": [5],
...     "dtype": "<i4", "compressor": None, "fill_value": 0, "order": "C", "filters": None})
>>> meta.dimension_separator, meta.dtype
('.', dtype('int32'))
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from zarrkit.caching import BoundedCache
from zarrkit.errors import MetadataError
from zarrkit.metadata.consolidated import ZMETADATA as ZMETADATA
from zarrkit.metadata.dtypes import dtype_to_json_v2, parse_dtype_v2
from zarrkit.metadata.fill_value import decode_fill_value, encode_fill_value
from zarrkit.metadata.jsonio import content_key

ZARRAY = ".zarray"
ZGROUP = ".zgroup"
ZATTRS = ".zattrs"

_REQUIRED_ARRAY_KEYS = ("zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value",
                        "order", "filters")

# Filters that turn an array of Python objects into bytes ("json" and "msgpack" are the old
# numcodecs ids of json2 and msgpack2). Such a filter must come first, where the array is,
# and only on an array of objects: elsewhere it would meet bytes or numbers.
OBJECT_CODEC_IDS = frozenset({"vlen-utf8", "vlen-bytes", "vlen-array", "json2", "msgpack2",
                              "pickle", "json", "msgpack"})
# categorize maps objects (or fixed-length text) to integers: first on an object array, it
# is that array's object codec.
FIRST_FILTERS_OF_OBJECTS = OBJECT_CODEC_IDS | {"categorize"}


def _require_int_tuple(value: Any, name: str, key: str, *, positive: bool) -> tuple[int, ...]:
    lower = 1 if positive else 0
    if type(value) is list and all(type(n) is int and n >= lower for n in value):
        return tuple(value)  # valid: one pass instead of the two below, which explain errors
    if not isinstance(value, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) for n in value
    ):
        raise MetadataError(f"{key}: {name!r} must be a list of integers, found {value!r}")
    if any(n < lower for n in value):
        raise MetadataError(f"{key}: {name!r} entries must be >= {lower}, found {value!r}")
    return tuple(value)


def _check_object_codecs(dtype: np.dtype[Any], compressor: dict[str, Any] | None,
                         filters: tuple[dict[str, Any], ...] | None) -> None:
    """An array of objects needs an object codec as its first filter; an object codec
    anywhere else would be handed bytes or numbers it cannot encode.

    >>> _check_object_codecs(np.dtype("<i8"), None, ({"id": "vlen-array", "dtype": "<i4"},))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'vlen-array' encodes arrays of objects, but the dtype is ...
    """
    if not filters and not dtype.hasobject:  # the common case, checked at every parse
        if compressor is not None and compressor["id"] in OBJECT_CODEC_IDS:
            raise MetadataError(f"codec {compressor['id']!r} encodes arrays of objects, but "
                                f"the dtype is {dtype}")
        return
    ids = [f["id"] for f in filters or ()]
    if dtype.hasobject and (not ids or ids[0] not in FIRST_FILTERS_OF_OBJECTS):
        raise MetadataError(
            f"dtype {dtype} holds objects and needs an object codec as its first filter "
            f"(one of {sorted(FIRST_FILTERS_OF_OBJECTS)}), found filters {ids}"
        )
    later = ids[1:] if dtype.hasobject else ids
    misplaced = [i for i in later if i in OBJECT_CODEC_IDS]
    if compressor is not None and compressor["id"] in OBJECT_CODEC_IDS:
        misplaced.append(compressor["id"])
    if misplaced:
        where = "after the first filter" if dtype.hasobject else f"the dtype is {dtype}"
        raise MetadataError(
            f"codec {misplaced[0]!r} encodes arrays of objects, but {where}"
        )


def _codec_config(value: Any, name: str, key: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        raise MetadataError(f"{key}: {name} must be an object with a string 'id', found {value!r}")
    return dict(value)


# Parsed .zarray documents by content (only successes: an invalid one raises every time).
_PARSED_ARRAYS: BoundedCache[bytes, tuple[dict[str, Any], ArrayMetadataV2]] = BoundedCache(256)


@dataclass(frozen=True)
class ArrayMetadataV2:
    """The contents of a ``.zarray`` document, parsed.

    ``fill_value`` holds the decoded value (a numpy scalar, ``None``, or a JSON value for
    object arrays); ``compressor`` and ``filters`` hold numcodecs JSON configurations.

    >>> m = ArrayMetadataV2(shape=(4,), chunks=(2,), dtype=np.dtype("f8"), fill_value=None)
    >>> m.to_json()["fill_value"] is None
    True
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: np.dtype[Any]
    fill_value: Any = None
    order: Literal["C", "F"] = "C"
    compressor: dict[str, Any] | None = None
    filters: tuple[dict[str, Any], ...] | None = None
    dimension_separator: Literal[".", "/"] = "."
    zarr_format: Literal[2] = 2
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    #: The document parsed (``from_json``), as :func:`~zarrkit.metadata.jsonio.content_key`
    #: gives it; None when built otherwise (see ``ArrayMetadataV3.layout_key``).
    layout_key: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.shape) != len(self.chunks):
            raise MetadataError(
                f"shape {self.shape} and chunks {self.chunks} have different lengths"
            )
        if self.order not in ("C", "F"):
            raise MetadataError(f"order must be 'C' or 'F', found {self.order!r}")
        if self.dimension_separator not in (".", "/"):
            raise MetadataError(
                f"dimension_separator must be '.' or '/', found {self.dimension_separator!r}"
            )
        _check_object_codecs(self.dtype, self.compressor, self.filters)

    @classmethod
    def from_json(cls, document: dict[str, Any], key: str = ZARRAY) -> ArrayMetadataV2:
        """Parse a ``.zarray`` document; unknown extra keys are ignored.

        >>> ArrayMetadataV2.from_json({"zarr_format": 2})
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: .zarray: missing required key 'shape'
        """
        layout = None
        if cls is ArrayMetadataV2 and type(document) is dict:
            # A hierarchy's .zarray documents are often all alike: each content is parsed
            # once (the key and == agree, as for format 3).
            layout = content_key(document)
            seen = None if layout is None else _PARSED_ARRAYS.get(layout)
            if seen is not None and seen[0] == document:
                metadata = object.__new__(cls)
                metadata.__dict__.update(seen[1].__dict__)
                metadata.__dict__["extra"] = dict(seen[1].extra)
                return metadata
        metadata = cls._parse(document, key)
        if layout is not None:
            metadata.__dict__["layout_key"] = layout
            _PARSED_ARRAYS.put(layout, (dict(document), metadata))
        return metadata

    @classmethod
    def _parse(cls, document: dict[str, Any], key: str) -> ArrayMetadataV2:
        for name in _REQUIRED_ARRAY_KEYS:
            if name not in document:
                raise MetadataError(f"{key}: missing required key {name!r}")
        if document["zarr_format"] != 2:
            raise MetadataError(f"{key}: zarr_format must be 2, found {document['zarr_format']!r}")
        shape = _require_int_tuple(document["shape"], "shape", key, positive=False)
        chunks = _require_int_tuple(document["chunks"], "chunks", key, positive=True)
        try:
            dtype = parse_dtype_v2(document["dtype"])
        except MetadataError as e:
            raise type(e)(f"{key}: {e}") from e
        compressor = document["compressor"]
        if compressor is not None:
            compressor = _codec_config(compressor, "compressor", key)
        filters = document["filters"]
        if filters is not None:
            if not isinstance(filters, list):
                raise MetadataError(f"{key}: filters must be a list or null, found {filters!r}")
            filters = tuple(_codec_config(f, "filter", key) for f in filters) or None
        order = document["order"]
        separator = document.get("dimension_separator", ".")
        if separator is None:
            separator = "."
        try:
            object_codec = filters[0]["id"] if filters and dtype.hasobject else None
            fill_value = decode_fill_value(
                document["fill_value"], dtype, object_codec=object_codec
            )
            return cls(
                shape=shape, chunks=chunks, dtype=dtype, fill_value=fill_value, order=order,
                compressor=compressor, filters=filters, dimension_separator=separator,
            )
        except MetadataError as e:
            raise MetadataError(f"{key}: {e}") from e

    def to_json(self) -> dict[str, Any]:
        """The ``.zarray`` document for this metadata.

        >>> ArrayMetadataV2(shape=(), chunks=(), dtype=np.dtype("i4"), fill_value=5).to_json()
        ... # doctest: +NORMALIZE_WHITESPACE
        {'shape': [], 'chunks': [], 'dtype': '<i4', 'fill_value': 5, 'order': 'C',
         'filters': None, 'dimension_separator': '.', 'compressor': None, 'zarr_format': 2}
        """
        # zarr-python's field order, so that both libraries write the same bytes.
        return {
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "dtype": dtype_to_json_v2(self.dtype),
            "fill_value": encode_fill_value(self.fill_value, self.dtype),
            "order": self.order,
            "filters": list(self.filters) if self.filters else None,
            "dimension_separator": self.dimension_separator,
            "compressor": self.compressor,
            "zarr_format": 2,
        }

    def with_shape(self, shape: tuple[int, ...]) -> ArrayMetadataV2:
        """A copy with a new shape (for resize).

        >>> ArrayMetadataV2(shape=(2,), chunks=(2,), dtype=np.dtype("u1")).with_shape((5,)).shape
        (5,)
        """
        return replace(self, shape=tuple(shape))

    def chunk_key(self, chunk_coords: tuple[int, ...]) -> str:
        """The key of a chunk relative to the array, e.g. ``"0.1"``; ``"0"`` for 0-d.

        >>> ArrayMetadataV2(shape=(4, 4), chunks=(2, 2), dtype=np.dtype("u1"),
        ...     dimension_separator="/").chunk_key((1, 0))
        '1/0'
        """
        if not chunk_coords:
            return "0"
        return self.dimension_separator.join(map(str, chunk_coords))

    def chunk_key_layout(self) -> tuple[str, str]:
        """(prefix, separator) of the keys of chunks of one or more dimensions: no
        prefix, the coordinates joined by the dimension separator.

        >>> ArrayMetadataV2(shape=(4,), chunks=(2,), dtype=np.dtype("u1")).chunk_key_layout()
        ('', '.')
        """
        return "", self.dimension_separator

    def parse_chunk_key(self, relative_key: str) -> tuple[int, ...] | None:
        """The chunk coordinates a key (relative to the array) names, or None when it
        names no chunk of this array (the inverse of :meth:`chunk_key`).

        >>> m = ArrayMetadataV2(shape=(4, 4), chunks=(2, 2), dtype=np.dtype("u1"))
        >>> m.parse_chunk_key("1.0"), m.parse_chunk_key(".zarray"), m.parse_chunk_key("1/0")
        ((1, 0), None, None)
        """
        match = _chunk_key_pattern(len(self.shape), self.dimension_separator).fullmatch(
            relative_key)
        return None if match is None else tuple(int(c) for c in match.groups())


@functools.lru_cache(maxsize=64)
def _chunk_key_pattern(ndim: int, separator: str) -> re.Pattern[str]:
    if ndim == 0:
        return re.compile("0")
    return re.compile(re.escape(separator).join([r"(\d+)"] * ndim))


@dataclass(frozen=True)
class GroupMetadataV2:
    """The contents of a ``.zgroup`` document.

    >>> GroupMetadataV2().to_json()
    {'zarr_format': 2}
    """

    zarr_format: Literal[2] = 2

    @classmethod
    def from_json(cls, document: dict[str, Any], key: str = ZGROUP) -> GroupMetadataV2:
        """Parse a ``.zgroup`` document.

        >>> GroupMetadataV2.from_json({"zarr_format": 3})
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: .zgroup: zarr_format must be 2, found 3
        """
        if document.get("zarr_format") != 2:
            raise MetadataError(
                f"{key}: zarr_format must be 2, found {document.get('zarr_format')!r}"
            )
        return cls()

    def to_json(self) -> dict[str, Any]:
        """The ``.zgroup`` document."""
        return {"zarr_format": 2}


def parse_attributes(document: Any, key: str = ZATTRS) -> dict[str, Any]:
    """Check that a ``.zattrs`` document is an object.

    >>> parse_attributes({"a": 1})
    {'a': 1}
    """
    if not isinstance(document, dict):
        raise MetadataError(f"{key}: attributes must be a JSON object")
    return document
