"""Fill values in metadata JSON: the one encoder and decoder for every data type.

JSON has no NaN or Infinity, so floats use the strings ``"NaN"``, ``"Infinity"`` and
``"-Infinity"``; complex numbers are ``[real, imag]``; fixed bytes, raw and structured values
are base64; datetimes are their int64 count.

>>> decode_fill_value("NaN", np.dtype("f4"))
np.float32(nan)
>>> encode_fill_value(np.float64("-inf"), np.dtype("f8"))
'-Infinity'

Zarr v3 (:func:`decode_fill_value_v3`, :func:`encode_fill_value_v3`) adds the spec's
``"0x..."`` bit patterns, which are the only way to keep a NaN payload, ``r<bits>`` raw values
as lists of byte values, and struct values as one object member per field:

>>> from zarrkit.metadata.dtypes_v3 import parse_data_type_v3
>>> encode_fill_value_v3(np.float32(-np.nan), parse_data_type_v3("float32"))
'0xffc00000'
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np

from zarrkit.caching import MISSING, BoundedCache
from zarrkit.errors import MetadataError

if TYPE_CHECKING:
    from zarrkit.metadata.dtypes_v3 import DataTypeV3

_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_HEX_BITS = re.compile(r"^0[xX][0-9a-fA-F]+$")
_RAW_NAME = re.compile(r"^r[0-9]+$")


def _float_bits(dtype: np.dtype[Any]) -> int:
    """Width of the bit pattern written as ``"0x..."`` (4 for float4, 16 for bfloat16...)."""
    return int(ml_dtypes.finfo(dtype).bits)


def _bits_of(value: Any, dtype: np.dtype[Any]) -> int:
    return int(np.array([value], dtype=dtype).view(f"u{dtype.itemsize}")[0])


def _from_bits(bits: int, dtype: np.dtype[Any]) -> Any:
    return np.array([bits], dtype=f"u{dtype.itemsize}").view(dtype)[0]


def _decode_float(value: Any, dtype: np.dtype[Any], *, v3: bool = False) -> Any:
    """A JSON float fill value; ``v3`` adds bit patterns and refuses lossy conversions
    (a NaN or infinity for a type without one, a finite number that overflows to NaN)."""
    if isinstance(value, str):
        if v3 and _HEX_BITS.match(value):
            bits = int(value, 16)
            if bits >> _float_bits(dtype):
                raise MetadataError(
                    f"invalid fill value {value!r} for dtype {dtype}: more bits than the type has"
                )
            return _from_bits(bits, dtype)
        if value not in _SPECIAL_FLOATS:
            raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
        number = _SPECIAL_FLOATS[value]
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
    else:
        number = value
    with np.errstate(over="ignore"):  # a JSON number rounds to the type, to inf if need be
        result = dtype.type(number)
    if v3:
        decoded = float(result)
        if number == 0 and math.isnan(decoded):
            # float8_e8m0fnu has no zero (ml_dtypes makes it NaN); the nearest value is the
            # smallest, bit pattern 0, which is also where tensorstore puts its default 0.0.
            return _from_bits(0, dtype)
        # Some 8- and 4-bit types lack NaN or infinity, and their conversions then silently
        # saturate or produce NaN: a fill value must decode to what it says.
        if (math.isnan(decoded) != math.isnan(number)) or (
            isinstance(value, str) and math.isinf(number) and decoded != number
        ):
            raise MetadataError(f"fill value {value!r} is not representable as {dtype}")
    return result


def _encode_float(value: Any, dtype: np.dtype[Any] | None = None) -> Any:
    """The JSON form of a float; given its ``dtype``, a NaN other than the canonical one
    keeps its payload as a ``"0x..."`` bit pattern."""
    number = float(value)
    if math.isnan(number):
        if dtype is not None:
            bits = _bits_of(value, dtype)
            if bits != _bits_of(dtype.type(math.nan), dtype):
                return f"0x{bits:0{-(-_float_bits(dtype) // 4)}x}"
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return number


def _decode_int(value: Any, dtype: np.dtype[Any]) -> Any:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
    info = ml_dtypes.iinfo(dtype)
    if not int(info.min) <= value <= int(info.max):
        raise MetadataError(f"fill value {value} is out of range for dtype {dtype}")
    return dtype.type(value)


def _decode_datetime(value: Any, dtype: np.dtype[Any]) -> Any:
    if value == "NaT":
        # dtype.type("NaT") would be a unitless NaT; keep the array's unit.
        return np.array("NaT", dtype=dtype.newbyteorder("="))[()]
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
    # Scalars are native-endian: go through the native form of a big-endian type.
    return np.array(value, dtype="i8").view(dtype.newbyteorder("="))[()]


def _encode_datetime(value: Any, dtype: np.dtype[Any]) -> int:
    return int(np.array(value, dtype=dtype.newbyteorder("=")).view("i8"))


def _decode_base64(value: Any, dtype: np.dtype[Any]) -> bytes:
    if not isinstance(value, str):
        raise MetadataError(f"fill value for dtype {dtype} must be base64 text, not {value!r}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as e:
        raise MetadataError(f"invalid base64 fill value {value!r} for dtype {dtype}") from e


def _encode_base64(raw: bytes) -> str:
    return base64.standard_b64encode(raw).decode("ascii")


def _decode_bytes(value: Any, dtype: np.dtype[Any]) -> bytes:
    """Bytes written either as base64 text or as a list of byte values (v3 allows both)."""
    if isinstance(value, list):
        if not all(
            isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= 255 for b in value
        ):
            raise MetadataError(
                f"invalid fill value {value!r} for dtype {dtype}: byte values are integers "
                "in [0, 255]"
            )
        return bytes(value)
    return _decode_base64(value, dtype)


def decode_fill_value(
    value: Any, dtype: np.dtype[Any], *, object_codec: str | None = None
) -> Any:
    """A JSON fill value as a numpy scalar of ``dtype`` (``None`` stays ``None``).

    >>> decode_fill_value(["NaN", 1.0], np.dtype("c16"))
    np.complex128(nan+1j)
    >>> decode_fill_value("cGFk", np.dtype("S5"))
    np.bytes_(b'pad')

    For object arrays, ``object_codec`` (the id of the array's object codec) says how the
    value is stored: base64 for ``vlen-bytes``, as is otherwise.

    >>> decode_fill_value("AGZpbGw=", np.dtype("O"), object_codec="vlen-bytes")
    b'\\x00fill'
    """
    if value is None:
        return None
    key = _scalar_key(dtype, value) if dtype.kind in _CACHED_NUMPY_KINDS else None
    if key is None:
        return _decode_fill_value(value, dtype, object_codec)
    decoded = _DECODED.get(key, MISSING)
    if decoded is MISSING:
        decoded = _decode_fill_value(value, dtype, object_codec)
        _DECODED.put(key, decoded)
    return decoded


# Decoded v2 fill values by (dtype, JSON value), as for v3 below: only kinds whose value
# is an immutable numpy scalar and that do not depend on the object codec.
_DECODED: BoundedCache[tuple[Any, ...], Any] = BoundedCache(1024)
_CACHED_NUMPY_KINDS = frozenset("biufcmMSU")


def _decode_fill_value(value: Any, dtype: np.dtype[Any], object_codec: str | None) -> Any:
    kind = dtype.kind
    try:
        if kind == "b":
            if not isinstance(value, (bool, int)):
                raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
            return np.bool_(value)
        if kind in "iu":
            return _decode_int(value, dtype)
        if kind == "f":
            return _decode_float(value, dtype)
        if kind == "c":
            if isinstance(value, (list, tuple)) and len(value) == 2:
                part = np.dtype(f"f{dtype.itemsize // 2}")
                real, imag = (_decode_float(v, part) for v in value)
                return dtype.type(complex(real, imag))
            return dtype.type(_decode_float(value, np.dtype("f8")))
        if kind in "mM":
            return _decode_datetime(value, dtype)
        if kind == "S":
            return np.bytes_(_decode_base64(value, dtype)[: dtype.itemsize])
        if kind == "U":
            if not isinstance(value, str):
                raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
            return np.str_(value)
        if kind == "V":
            raw = _decode_base64(value, dtype)
            if len(raw) != dtype.itemsize:
                raise MetadataError(
                    f"fill value for dtype {dtype} must be {dtype.itemsize} bytes, "
                    f"found {len(raw)}"
                )
            return np.frombuffer(raw, dtype=dtype)[0]
        if kind == "O":
            if object_codec == "vlen-bytes" and isinstance(value, str):
                return _decode_base64(value, dtype)
            return value
    except (TypeError, ValueError, OverflowError) as e:
        if isinstance(e, MetadataError):
            raise
        raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}: {e}") from e
    raise MetadataError(f"unsupported dtype {dtype} for a fill value")


def encode_fill_value(value: Any, dtype: np.dtype[Any]) -> Any:
    """The JSON form of a fill value (inverse of :func:`decode_fill_value`).

    >>> encode_fill_value(np.bytes_(b"pad"), np.dtype("S5"))
    'cGFkAAA='
    >>> encode_fill_value(complex("nan+1j"), np.dtype("c8"))
    ['NaN', 1.0]
    """
    if value is None:
        return None
    kind = dtype.kind
    if kind == "b":
        return bool(value)
    if kind in "iu":
        return int(value)
    if kind == "f":
        return _encode_float(value)
    if kind == "c":
        number = complex(value)
        return [_encode_float(number.real), _encode_float(number.imag)]
    if kind in "mM":
        return _encode_datetime(value, dtype)
    if kind == "S":
        # All itemsize bytes, zero-padded: tensorstore requires exactly that many.
        return _encode_base64(np.array(value, dtype=dtype).tobytes())
    if kind == "U":
        return str(value)
    if kind == "V":
        return _encode_base64(np.array(value, dtype=dtype).tobytes())
    if kind == "O":
        if isinstance(value, bytes):
            return _encode_base64(value)
        return value
    raise MetadataError(f"unsupported dtype {dtype} for a fill value")


def _not_representable(value: Any, dtype: np.dtype[Any], why: str = "") -> MetadataError:
    suffix = f": {why}" if why else ""
    return MetadataError(f"fill value {value!r} is not representable as {dtype}{suffix}")


def _normalize_real(value: Any, dtype: np.dtype[Any]) -> Any:
    if isinstance(value, str):
        if value not in _SPECIAL_FLOATS:
            raise _not_representable(value, dtype)
        return dtype.type(_SPECIAL_FLOATS[value])
    # np.generic admits the ml_dtypes scalars (bfloat16, float8...), which are not np.number.
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.generic)):
        raise _not_representable(value, dtype)
    if isinstance(value, (complex, np.complexfloating)):
        raise _not_representable(value, dtype, "it is complex")
    with np.errstate(over="ignore"):
        result = dtype.type(value)
    if np.isinf(result) and np.isfinite(float(value)):
        raise _not_representable(value, dtype, "it overflows")
    return result


def normalize_fill_value(value: Any, dtype: np.dtype[Any]) -> Any:
    """A user's fill value as a numpy scalar of ``dtype``, checked to be representable
    without loss (no silent rounding, overflow or truthiness).

    >>> normalize_fill_value(3, np.dtype("u1"))
    np.uint8(3)
    >>> normalize_fill_value(300, np.dtype("u1"))
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: fill value 300 is not representable as uint8
    """
    if value is None:
        return None
    kind = dtype.kind
    if kind == "O":
        return value
    if kind == "b":
        if isinstance(value, (bool, np.bool_)) or (
            isinstance(value, (int, np.integer)) and int(value) in (0, 1)
        ):
            return np.bool_(value)
        raise _not_representable(value, dtype)
    if kind in "iu":
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise _not_representable(value, dtype)
        info = np.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise _not_representable(value, dtype)
        return dtype.type(value)
    if kind == "f":
        return _normalize_real(value, dtype)
    if kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        if isinstance(value, (list, tuple)) and len(value) == 2:
            real, imag = (_normalize_real(v, part) for v in value)
        elif isinstance(value, (complex, np.complexfloating)):
            real, imag = _normalize_real(value.real, part), _normalize_real(value.imag, part)
        else:
            real, imag = _normalize_real(value, part), part.type(0)
        return dtype.type(complex(real, imag))
    if kind == "V" and isinstance(value, (bytes, np.void)):
        raw = bytes(value) if isinstance(value, bytes) else value.tobytes()
        if len(raw) != dtype.itemsize:
            raise _not_representable(value, dtype, f"it must be {dtype.itemsize} bytes")
        return np.frombuffer(raw, dtype=dtype)[0]
    if kind == "S" and not isinstance(value, (bytes, np.bytes_)):
        raise _not_representable(value, dtype, "it must be bytes")
    if kind == "U" and not isinstance(value, str):
        raise _not_representable(value, dtype, "it must be a str")
    try:
        result = np.array(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as e:
        raise _not_representable(value, dtype, str(e)) from e
    if result.ndim != 0:
        raise _not_representable(value, dtype, "it must be a scalar")
    if kind in "SU" and len(value) > result[()].__len__() and value.rstrip(
        b"\0" if kind == "S" else "\0"
    ) != result[()]:
        raise _not_representable(value, dtype, "it is longer than the type")
    return result[()]


def default_fill_value(dtype: np.dtype[Any]) -> Any:
    """The fill value used when none is given: zero of the type (empty for strings).

    >>> default_fill_value(np.dtype("f4"))
    np.float32(0.0)
    """
    if dtype.kind == "O":
        return None
    return np.zeros((), dtype=dtype)[()]


# --- Zarr v3 ------------------------------------------------------------------------------


def _numeric_class(dtype: np.dtype[Any]) -> str:
    """"i", "f" or "c" for a numeric dtype, ml_dtypes ones included (their numpy kind is
    "V" or even "f" for float8_e5m2, so the kind alone cannot tell)."""
    if dtype.kind in "iu":
        return "i"
    if dtype.kind == "c":
        return "c"
    known = _NUMERIC_CLASSES.get(dtype)
    if known is None:
        try:
            ml_dtypes.iinfo(dtype)
            known = "i"
        except ValueError:
            known = "f"
        # Asking ml_dtypes costs an exception per float dtype, three times per zarr.json.
        _NUMERIC_CLASSES[dtype] = known
    return known


_NUMERIC_CLASSES: dict[np.dtype[Any], str] = {}


def _invalid_v3(value: Any, data_type: DataTypeV3, why: str = "") -> MetadataError:
    suffix = f": {why}" if why else ""
    return MetadataError(f"invalid fill value {value!r} for data type {data_type.name!r}{suffix}")


def decode_fill_value_v3(value: Any, data_type: DataTypeV3) -> Any:
    """A ``zarr.json`` fill value as a scalar of ``data_type`` (str or bytes for the
    variable-length ``string`` and ``bytes`` types, a numpy scalar otherwise).

    >>> from zarrkit.metadata.dtypes_v3 import parse_data_type_v3
    >>> decode_fill_value_v3(["-Infinity", "0x7fc00001"], parse_data_type_v3("complex64"))
    np.complex64(-inf+nanj)
    >>> decode_fill_value_v3([1, 2], parse_data_type_v3("r16"))
    np.void(b'\\x01\\x02')
    >>> decode_fill_value_v3("NaT", parse_data_type_v3({"name": "numpy.datetime64",
    ...     "configuration": {"unit": "ns", "scale_factor": 1}}))
    np.datetime64('NaT','ns')
    """
    key = _fill_key(value, data_type)
    if key is None:
        return _decode_fill_value_v3(value, data_type)
    decoded = _DECODED_V3.get(key, MISSING)
    if decoded is MISSING:
        decoded = _decode_fill_value_v3(value, data_type)
        _DECODED_V3.put(key, decoded)
    return decoded


# Decoded v3 fill values by (data type, JSON value): a hierarchy's arrays mostly share one
# data type and fill value, and decoding a float costs a numpy error-state context each
# time. Only immutable results are kept (numpy scalars other than np.void, str) and only
# successes, so an invalid value fails every time.
_DECODED_V3: BoundedCache[tuple[Any, ...], Any] = BoundedCache(1024)
_CACHED_KINDS = frozenset({"bool", "numeric", "datetime", "string", "fixed_bytes",
                           "fixed_string"})


def _fill_key(value: Any, data_type: DataTypeV3) -> tuple[Any, ...] | None:
    """The cache key of a v3 fill value, or None when it is not cached."""
    if data_type.kind not in _CACHED_KINDS:
        return None
    return _scalar_key(data_type, value)


def _scalar_key(owner: Any, value: Any) -> tuple[Any, ...] | None:
    """``(owner, type, value)`` for a JSON scalar, or None for anything else: the type is
    part of the key (True, 1 and 1.0 decode differently) and a float is keyed by its bits
    (0.0 == -0.0, and NaN != NaN).

    >>> _scalar_key("f4", -0.0) == _scalar_key("f4", 0.0), _scalar_key("f4", [1]) is None
    (False, True)
    """
    kind = type(value)
    if kind is float:
        return (owner, kind, struct.pack("<d", value))
    if kind is str or kind is int or kind is bool:
        return (owner, kind, value)
    return None


def _decode_fill_value_v3(value: Any, data_type: DataTypeV3) -> Any:
    if value is None:
        raise _invalid_v3(value, data_type, "Zarr v3 requires a fill value")
    dtype = data_type.numpy
    kind = data_type.kind
    try:
        if kind == "bool":
            if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
                return np.bool_(value)
            raise _invalid_v3(value, data_type)
        if kind == "numeric":
            numeric = _numeric_class(dtype)
            if numeric == "i":
                return _decode_int(value, dtype)
            if numeric == "f":
                return _decode_float(value, dtype, v3=True)
            if not isinstance(value, list) or len(value) != 2:
                raise _invalid_v3(value, data_type, "complex values are [real, imag]")
            part = np.dtype(f"f{dtype.itemsize // 2}")
            parts = [_decode_float(v, part, v3=True) for v in value]
            # Assembling through the bytes keeps NaN payloads that complex() could lose.
            return np.array(parts, dtype=part).view(dtype)[0]
        if kind == "datetime":
            return _decode_datetime(value, dtype)
        if kind == "raw":
            raw = _decode_bytes(value, dtype)
            if len(raw) != dtype.itemsize:
                raise _invalid_v3(value, data_type, f"it must be {dtype.itemsize} bytes")
            return np.frombuffer(raw, dtype=dtype)[0]
        if kind == "fixed_bytes":
            raw = _decode_bytes(value, dtype)
            if len(raw.rstrip(b"\0")) > dtype.itemsize:
                raise _invalid_v3(value, data_type, f"it is longer than {dtype.itemsize} bytes")
            return np.array(raw.rstrip(b"\0"), dtype=dtype)[()]
        if kind == "fixed_string":
            if not isinstance(value, str):
                raise _invalid_v3(value, data_type, "it must be a string")
            if len(value.rstrip("\0")) > dtype.itemsize // 4:
                raise _invalid_v3(value, data_type,
                                  f"it is longer than {dtype.itemsize // 4} code points")
            return np.array(value.rstrip("\0"), dtype=dtype)[()]
        if kind == "string":
            if not isinstance(value, str):
                raise _invalid_v3(value, data_type, "it must be a string")
            return value
        if kind == "bytes":
            return _decode_bytes(value, dtype)
        if kind == "struct":
            return _decode_struct(value, data_type)
    except MetadataError:
        raise
    except (TypeError, ValueError, OverflowError) as e:
        raise _invalid_v3(value, data_type, str(e)) from e
    raise MetadataError(f"data type {data_type.name!r} of kind {kind!r} has no fill value form")


def _decode_struct(value: Any, data_type: DataTypeV3) -> Any:
    dtype = data_type.numpy
    if isinstance(value, str):  # the legacy "structured" form: the packed bytes, base64
        raw = _decode_base64(value, dtype)
        if len(raw) != dtype.itemsize:
            raise _invalid_v3(value, data_type, f"it must be {dtype.itemsize} bytes")
        return np.frombuffer(raw, dtype=dtype)[0]
    if not isinstance(value, dict):
        raise _invalid_v3(value, data_type, "it must be an object with one member per field")
    names = [name for name, _ in data_type.fields]
    missing = [name for name in names if name not in value]
    unknown = sorted(set(value) - set(names))
    if missing or unknown:
        raise _invalid_v3(value, data_type, f"missing fields {missing}, unknown fields {unknown}")
    result = np.zeros((), dtype=dtype)
    for name, field_type in data_type.fields:
        result[name] = _decode_fill_value_v3(value[name], field_type)
    return result[()]


def encode_fill_value_v3(value: Any, data_type: DataTypeV3) -> Any:
    """The ``zarr.json`` form of a fill value (inverse of :func:`decode_fill_value_v3`);
    always valid JSON (no NaN or Infinity numbers).

    >>> from zarrkit.metadata.dtypes_v3 import parse_data_type_v3
    >>> encode_fill_value_v3(np.float16("inf"), parse_data_type_v3("float16"))
    'Infinity'
    >>> encode_fill_value_v3(b"pad", parse_data_type_v3(
    ...     {"name": "null_terminated_bytes", "configuration": {"length_bytes": 5}}))
    'cGFk'
    >>> encode_fill_value_v3((1, 2.5), parse_data_type_v3({"name": "struct",
    ...     "configuration": {"fields": [{"name": "a", "data_type": "int8"},
    ...                                  {"name": "b", "data_type": "float32"}]}}))
    {'a': 1, 'b': 2.5}
    """
    dtype = data_type.numpy
    kind = data_type.kind
    if value is None:
        raise _invalid_v3(value, data_type, "Zarr v3 requires a fill value")
    try:
        if kind == "bool":
            if not isinstance(value, (bool, np.bool_, int, np.integer)) or value not in (0, 1):
                raise _invalid_v3(value, data_type, "it must be a boolean")
            return bool(value)
        if kind == "numeric":
            numeric = _numeric_class(dtype)
            # numpy would parse strings, truncate fractions and drop imaginary parts.
            if isinstance(value, (str, bytes)) or (
                numeric != "c" and isinstance(value, (complex, np.complexfloating))
            ):
                raise _invalid_v3(value, data_type, "it must be a number")
            if numeric == "i":
                if isinstance(value, (float, np.floating)) and not float(value).is_integer():
                    raise _invalid_v3(value, data_type, "it must be an integer")
                return int(value)
            scalar = np.array(value, dtype=dtype)
            if numeric == "f":
                return _encode_float(scalar[()], dtype)
            part = np.dtype(f"f{dtype.itemsize // 2}")
            return [_encode_float(p, part) for p in scalar.reshape(1).view(part)]
        if kind == "datetime":
            return _encode_datetime(value, dtype)
        if kind == "raw":
            raw = _raw_bytes(value, dtype)
            # The core r<bits> types list byte values; zarr-python's raw_bytes uses base64.
            return list(raw) if _RAW_NAME.match(data_type.name) else _encode_base64(raw)
        if kind == "fixed_bytes":
            # numpy drops trailing NULs from S values; zarr-python writes them that way too.
            return _encode_base64(bytes(np.array(value, dtype=dtype)[()]))
        if kind == "fixed_string":
            return str(np.array(value, dtype=dtype)[()])
        if kind == "string":
            if not isinstance(value, str):
                raise _invalid_v3(value, data_type, "it must be a str")
            return value
        if kind == "bytes":
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise _invalid_v3(value, data_type, "it must be bytes")
            return _encode_base64(bytes(value))
        if kind == "struct":
            scalar = np.array(value, dtype=dtype)[()]
            if data_type.name == "structured":
                return _encode_base64(np.array(scalar, dtype=dtype).tobytes())
            return {
                name: encode_fill_value_v3(scalar[name], field_type)
                for name, field_type in data_type.fields
            }
    except (TypeError, ValueError, OverflowError) as e:
        if isinstance(e, MetadataError):
            raise
        raise _invalid_v3(value, data_type, str(e)) from e
    raise MetadataError(f"data type {data_type.name!r} of kind {kind!r} has no fill value form")


def _raw_bytes(value: Any, dtype: np.dtype[Any]) -> bytes:
    raw = bytes(value) if isinstance(value, (bytes, bytearray)) else np.array(
        value, dtype=dtype
    ).tobytes()
    if len(raw) != dtype.itemsize:
        raise MetadataError(
            f"invalid fill value {value!r} for dtype {dtype}: it must be {dtype.itemsize} bytes"
        )
    return raw


def default_fill_value_v3(data_type: DataTypeV3) -> Any:
    """The fill value recorded when none is given: zero, empty, or NaT for times (as
    zarr-python chooses).

    >>> from zarrkit.metadata.dtypes_v3 import parse_data_type_v3
    >>> default_fill_value_v3(parse_data_type_v3("string"))
    ''
    >>> default_fill_value_v3(parse_data_type_v3("int4")).dtype
    dtype(int4)
    """
    if data_type.kind == "string":
        return ""
    if data_type.kind == "bytes":
        return b""
    if data_type.kind == "datetime":
        return _decode_datetime("NaT", data_type.numpy)
    return np.zeros((), dtype=data_type.numpy)[()]
