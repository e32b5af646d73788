"""Zarr v2 data types: the typestr and structured-list forms, to and from numpy.

>>> parse_dtype_v2("<M8[ns]")
dtype('<M8[ns]')
>>> dtype_to_json_v2(np.dtype([("x", "<i4"), ("y", "<f8", (2,))]))
[['x', '<i4'], ['y', '<f8', [2]]]
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from zarrkit.caching import BoundedCache
from zarrkit.errors import UnsupportedDataTypeError

# numpy writes a scale factor before the unit ("<M8[10s]"), as zarrkit and zarr-python do.
_TYPESTR = re.compile(r"^[<>|]([biufcSUV]\d+|[mM]8\[(?:[1-9]\d{0,9})?(?P<unit>[A-Za-z]+)\]|O)$")
_TIME_UNITS = {"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as"}


def parse_dtype_v2(value: Any) -> np.dtype[Any]:
    """Parse a ``.zarray`` ``dtype`` value (typestr or structured list) into a numpy dtype.

    >>> parse_dtype_v2([["a", "<i2"], ["b", [["c", "|u1"]]]])
    dtype([('a', '<i2'), ('b', [('c', 'u1')])])
    >>> parse_dtype_v2("<M8")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.UnsupportedDataTypeError: unsupported Zarr v2 dtype '<M8': ... need a unit...
    """
    return _parse_dtype(value, 0)


# Structures nest structures; real ones go two or three deep, and the parse recurses.
_MAX_NESTING = 32


def _parse_dtype(value: Any, depth: int) -> np.dtype[Any]:
    if isinstance(value, str):
        dtype = _TYPESTRS.get(value)
        if dtype is None:
            dtype = _parse_typestr(value)
            _TYPESTRS.put(value, dtype)
        return dtype
    if isinstance(value, list):
        if depth >= _MAX_NESTING:
            raise UnsupportedDataTypeError(
                f"unsupported Zarr v2 dtype: structures nest deeper than {_MAX_NESTING} levels"
            )
        return _structured(value, depth)
    raise UnsupportedDataTypeError(f"unsupported Zarr v2 dtype {value!r}")


# Parsed typestrs: a hierarchy repeats a few, and a numpy dtype is immutable. Only
# successes are kept, so an invalid typestr fails every time.
_TYPESTRS: BoundedCache[str, np.dtype[Any]] = BoundedCache(256)


def _parse_typestr(value: str) -> np.dtype[Any]:
    match = _TYPESTR.match(value)
    if match is None:
        if re.match(r"^[<>|][mM]8$", value):
            raise UnsupportedDataTypeError(
                f"unsupported Zarr v2 dtype {value!r}: datetime and timedelta types need a "
                f"unit, as in '{value}[ns]'"
            )
        raise UnsupportedDataTypeError(f"unsupported Zarr v2 dtype {value!r}")
    unit = match.group("unit")
    if unit is not None and unit not in _TIME_UNITS:
        raise UnsupportedDataTypeError(f"unsupported Zarr v2 dtype {value!r}: unknown time unit")
    try:
        dtype = np.dtype(value)
    except TypeError as e:
        raise UnsupportedDataTypeError(f"unsupported Zarr v2 dtype {value!r}: {e}") from e
    _check_portable(dtype, value)
    return dtype


def _check_portable(dtype: np.dtype[Any], described: Any) -> None:
    """Refuse types whose meaning depends on the platform or that hold nothing."""
    if dtype.kind in "SUV" and dtype.itemsize == 0:
        raise UnsupportedDataTypeError(f"unsupported Zarr v2 dtype {described!r}: zero size")
    if (dtype.kind == "f" and dtype.itemsize > 8) or (dtype.kind == "c" and dtype.itemsize > 16):
        raise UnsupportedDataTypeError(
            f"unsupported Zarr v2 dtype {described!r}: extended precision is platform-specific"
        )


# numpy keeps sub-array dimensions and type sizes in C ints.
_MAX_SUBARRAY_DIM = 2**31 - 1


def _structured(fields: list[Any], depth: int) -> np.dtype[Any]:
    """A structured dtype from its list form, checked field by field (numpy would rename
    an empty name to ``f0`` and raise plain ValueErrors for the rest)."""
    if not fields:
        raise UnsupportedDataTypeError("unsupported Zarr v2 dtype []: a structure needs fields")
    parsed = _parse_fields(fields, depth)
    try:
        dtype = np.dtype(parsed)
    except (TypeError, ValueError, OverflowError, MemoryError) as e:
        raise UnsupportedDataTypeError(f"unsupported Zarr v2 dtype {fields!r}: {e}") from e
    if dtype.itemsize == 0:
        raise UnsupportedDataTypeError(f"unsupported Zarr v2 dtype {fields!r}: zero size")
    return dtype


def _subarray_shape(field: list[Any]) -> tuple[int, ...]:
    shape = field[2]
    if not isinstance(shape, list) or not all(
        type(n) is int and 0 <= n <= _MAX_SUBARRAY_DIM for n in shape
    ):
        raise UnsupportedDataTypeError(f"malformed subarray shape in field {field!r}")
    return tuple(shape)


def _parse_fields(fields: list[Any], depth: int) -> list[tuple[Any, ...]]:
    parsed: list[tuple[Any, ...]] = []
    names: set[str] = set()
    size = 0  # in Python ints: numpy would wrap a size beyond a C int around
    for field in fields:
        if not isinstance(field, list) or len(field) not in (2, 3) or not isinstance(
            field[0], str
        ):
            raise UnsupportedDataTypeError(f"malformed structured dtype field {field!r}")
        name, ftype = field[0], field[1]
        if not name:
            raise UnsupportedDataTypeError(f"structured dtype field {field!r} has an empty name")
        if name in names:
            raise UnsupportedDataTypeError(f"structured dtype field name {name!r} is repeated")
        names.add(name)
        base = _parse_dtype(ftype, depth + 1)
        shape = _subarray_shape(field) if len(field) == 3 else ()
        parsed.append((name, base, shape) if len(field) == 3 else (name, base))
        size += base.itemsize * math.prod(shape)
        if size > _MAX_SUBARRAY_DIM:
            raise UnsupportedDataTypeError(
                f"structured dtype {fields!r} is larger than {_MAX_SUBARRAY_DIM} bytes")
    return parsed


def dtype_to_json_v2(dtype: np.dtype[Any]) -> Any:
    """The ``.zarray`` form of a numpy dtype.

    >>> dtype_to_json_v2(np.dtype("bool"))
    '|b1'
    """
    dtype = np.dtype(dtype)
    if dtype.fields is not None:
        for name in dtype.names or ():
            field_type = dtype.fields[name][0]
            dtype_to_json_v2(field_type.base)
        return _descr_to_json(dtype.descr)
    if dtype.subdtype is not None:
        raise UnsupportedDataTypeError(
            f"a subarray dtype {dtype} cannot be an array's dtype; put it inside a field"
        )
    if dtype.kind in "mM" and np.datetime_data(dtype)[0] == "generic":
        raise UnsupportedDataTypeError(f"dtype {dtype} needs a time unit, as in '<M8[ns]'")
    if dtype.kind not in "biufcmMSUVO":
        raise UnsupportedDataTypeError(f"unsupported dtype {dtype}")
    _check_portable(dtype, dtype.str)
    return dtype.str


def _descr_to_json(descr: list[Any]) -> list[Any]:
    out: list[Any] = []
    for entry in descr:
        name, ftype = entry[0], entry[1]
        ftype_json = _descr_to_json(ftype) if isinstance(ftype, list) else ftype
        if len(entry) == 3:
            out.append([name, ftype_json, list(entry[2])])
        else:
            out.append([name, ftype_json])
    return out


def normalize_dtype(dtype: Any) -> np.dtype[Any]:
    """A user's dtype argument as a numpy dtype, checked to be storable.

    >>> normalize_dtype("uint16")
    dtype('uint16')
    >>> normalize_dtype(str)
    dtype('O')
    """
    if dtype is str or dtype is bytes:
        return np.dtype(object)
    try:
        result = np.dtype(dtype)
    except TypeError as e:
        raise UnsupportedDataTypeError(f"unsupported dtype {dtype!r}: {e}") from e
    if result.kind == "T":  # numpy's StringDType: variable-length text, stored as objects
        return np.dtype(object)
    dtype_to_json_v2(result)
    return result


def has_endianness(dtype: np.dtype[Any]) -> bool:
    """True when the stored form of ``dtype`` depends on a byte order: multi-byte numbers
    (also inside structured or sub-array types), but not bool, int8, raw or fixed bytes.

    >>> has_endianness(np.dtype("i4")), has_endianness(np.dtype("S5"))
    (True, False)
    """
    if dtype.fields is not None:
        return any(has_endianness(field[0]) for field in dtype.fields.values())
    if dtype.subdtype is not None:
        return has_endianness(dtype.subdtype[0])
    return dtype.byteorder != "|" and dtype.itemsize > 1


def bytes_codec_json(dtype: np.dtype[Any]) -> dict[str, Any]:
    """The v3 ``bytes`` codec zarrkit writes for ``dtype``: little endian where the type
    has a byte order (the spec requires ``endian`` there; zarr-python 3.4 refuses a
    document without it), no configuration where it has none.

    >>> bytes_codec_json(np.dtype("u2")), bytes_codec_json(np.dtype("u1"))
    ({'name': 'bytes', 'configuration': {'endian': 'little'}}, {'name': 'bytes'})
    """
    if has_endianness(dtype):
        return {"name": "bytes", "configuration": {"endian": "little"}}
    return {"name": "bytes"}

