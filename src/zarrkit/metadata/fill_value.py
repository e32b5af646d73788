"""Fill values in metadata JSON: the one encoder and decoder for every data type.

JSON has no NaN or Infinity, so floats use the strings ``"NaN"``, ``"Infinity"`` and
``"-Infinity"``; complex numbers are ``[real, imag]``; fixed bytes, raw and structured values
are base64; datetimes are their int64 count.

>>> decode_fill_value("NaN", np.dtype("f4"))
np.float32(nan)
>>> encode_fill_value(np.float64("-inf"), np.dtype("f8"))
'-Infinity'
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

import numpy as np

from zarrkit.errors import MetadataError

_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _decode_float(value: Any, dtype: np.dtype[Any]) -> Any:
    if isinstance(value, str):
        if value in _SPECIAL_FLOATS:
            return dtype.type(_SPECIAL_FLOATS[value])
        raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
    return dtype.type(value)


def _encode_float(value: Any) -> Any:
    number = float(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return number


def _decode_base64(value: Any, dtype: np.dtype[Any]) -> bytes:
    if not isinstance(value, str):
        raise MetadataError(f"fill value for dtype {dtype} must be base64 text, not {value!r}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as e:
        raise MetadataError(f"invalid base64 fill value {value!r} for dtype {dtype}") from e


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
    kind = dtype.kind
    try:
        if kind == "b":
            if not isinstance(value, (bool, int)):
                raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
            return np.bool_(value)
        if kind in "iu":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
            info = np.iinfo(dtype)
            if not info.min <= value <= info.max:
                raise MetadataError(f"fill value {value} is out of range for dtype {dtype}")
            return dtype.type(value)
        if kind == "f":
            return _decode_float(value, dtype)
        if kind == "c":
            if isinstance(value, (list, tuple)) and len(value) == 2:
                part = np.dtype(f"f{dtype.itemsize // 2}")
                real, imag = (_decode_float(v, part) for v in value)
                return dtype.type(complex(real, imag))
            return dtype.type(_decode_float(value, np.dtype("f8")))
        if kind in "mM":
            if value == "NaT":
                return dtype.type("NaT")
            if isinstance(value, bool) or not isinstance(value, int):
                raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
            # Scalars are native-endian: go through the native form of a big-endian type.
            return np.array(value, dtype="i8").view(dtype.newbyteorder("="))[()]
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
        return int(np.array(value, dtype=dtype.newbyteorder("=")).view("i8"))
    if kind == "S":
        # All itemsize bytes, zero-padded: tensorstore requires exactly that many.
        raw = np.array(value, dtype=dtype).tobytes()
        return base64.standard_b64encode(raw).decode("ascii")
    if kind == "U":
        return str(value)
    if kind == "V":
        raw = np.array(value, dtype=dtype).tobytes()
        return base64.standard_b64encode(raw).decode("ascii")
    if kind == "O":
        if isinstance(value, bytes):
            return base64.standard_b64encode(value).decode("ascii")
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
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
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
