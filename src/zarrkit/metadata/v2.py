"""Zarr v2 metadata documents: ``.zarray``, ``.zgroup``, ``.zattrs`` and ``.zmetadata``.

>>> meta = ArrayMetadataV2.from_json({"zarr_format": 2, "shape": [10], "chunks": [5],
...     "dtype": "<i4", "compressor": None, "fill_value": 0, "order": "C", "filters": None})
>>> meta.dimension_separator, meta.dtype
('.', dtype('int32'))
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from zarrkit.errors import MetadataError
from zarrkit.metadata.dtypes import dtype_to_json_v2, parse_dtype_v2
from zarrkit.metadata.fill_value import decode_fill_value, encode_fill_value

ZARRAY = ".zarray"
ZGROUP = ".zgroup"
ZATTRS = ".zattrs"
ZMETADATA = ".zmetadata"

_REQUIRED_ARRAY_KEYS = ("zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value",
                        "order", "filters")


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


def _codec_config(value: Any, name: str, key: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        raise MetadataError(f"{key}: {name} must be an object with a string 'id', found {value!r}")
    return dict(value)


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

    @classmethod
    def from_json(cls, document: dict[str, Any], key: str = ZARRAY) -> ArrayMetadataV2:
        """Parse a ``.zarray`` document; unknown extra keys are ignored.

        >>> ArrayMetadataV2.from_json({"zarr_format": 2})
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: .zarray: missing required key 'shape'
        """
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
            object_codec = next(
                (f["id"] for f in filters if f["id"] in ("vlen-bytes", "vlen-utf8")), None
            ) if filters else None
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
        {'zarr_format': 2, 'shape': [], 'chunks': [], 'dtype': '<i4', 'fill_value': 5,
         'order': 'C', 'compressor': None, 'filters': None, 'dimension_separator': '.'}
        """
        return {
            "zarr_format": 2,
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "dtype": dtype_to_json_v2(self.dtype),
            "fill_value": encode_fill_value(self.fill_value, self.dtype),
            "order": self.order,
            "compressor": self.compressor,
            "filters": list(self.filters) if self.filters else None,
            "dimension_separator": self.dimension_separator,
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
