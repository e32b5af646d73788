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


def _from_hex(value: str, dtype: np.dtype[Any]) -> Any:
    """A ``"0x..."`` bit pattern as a float of ``dtype``. It may have at most two digits
    per byte (tensorstore's limit) and no bit beyond the type's width: ``"0xff"`` is not a
    float4_e2m1fn, whose four bits some readers would take from the low end and others
    refuse."""
    digits = len(value) - 2
    bits = int(value, 16)
    if digits > 2 * dtype.itemsize or bits >> _float_bits(dtype):
        raise MetadataError(
            f"invalid fill value {value!r} for dtype {dtype}: more bits than the type has"
        )
    return _from_bits(bits, dtype)


def _to_float(number: float, dtype: np.dtype[Any], value: Any, *, exact_range: bool) -> Any:
    """``number`` as a float scalar of ``dtype``, refusing what the type cannot hold:
    NaN or an infinity for a type without them (the 4-, 6- and 8-bit ml_dtypes types
    would silently saturate, turn them into -0 or into NaN), a finite number that becomes
    NaN, and with ``exact_range`` any finite number beyond the type's range (otherwise it
    rounds to the largest value or infinity, as the v3 spec rounds JSON numbers).

    >>> import ml_dtypes
    >>> _to_float(math.inf, np.dtype(ml_dtypes.float4_e2m1fn), "Infinity", exact_range=False)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: fill value 'Infinity' is not ...: the type has no infinity
    """
    with np.errstate(over="ignore", invalid="ignore"):
        result = dtype.type(number)
    decoded = float(result)
    if number == 0 and math.isnan(decoded):
        # float8_e8m0fnu has no zero (ml_dtypes makes it NaN); the nearest value is the
        # smallest, bit pattern 0, which is also where tensorstore puts its default 0.0.
        return _from_bits(0, dtype)
    if math.isnan(number) and not math.isnan(decoded):
        raise _not_representable(value, dtype, "the type has no NaN")
    if math.isinf(number) and decoded != number:
        raise _not_representable(value, dtype, "the type has no infinity")
    if math.isfinite(number) and (math.isnan(decoded) or exact_range and (
            math.isinf(decoded) or _overflows(abs(number), dtype))):
        raise _not_representable(value, dtype, "it overflows")
    return result


def _overflows(magnitude: float, dtype: np.dtype[Any]) -> bool:
    """Whether round-to-nearest-even takes ``magnitude`` past the largest finite value of
    ``dtype``: beyond halfway to the next step, or exactly halfway when the largest value
    is odd (its last mantissa bit set), since the tie then rounds up.

    >>> import ml_dtypes
    >>> _overflows(7.0, np.dtype(ml_dtypes.float4_e2m1fn)), _overflows(6.5, np.dtype(
    ...     ml_dtypes.float4_e2m1fn))
    (True, False)
    """
    threshold, tie_overflows = _overflow_threshold(dtype)
    return magnitude > threshold or (tie_overflows and magnitude == threshold)


def _overflow_threshold(dtype: np.dtype[Any]) -> tuple[float, bool]:
    """Halfway from the largest finite value of ``dtype`` to the next step, and whether
    that tie rounds up (the largest value's bit pattern is odd)."""
    threshold = _THRESHOLDS.get(dtype)
    if threshold is None:
        top = ml_dtypes.finfo(dtype).max
        top_bits = _bits_of(top, dtype)
        below = float(_from_bits(top_bits - 1, dtype))
        threshold = _THRESHOLDS[dtype] = (float(top) + (float(top) - below) / 2,
                                          bool(top_bits & 1))
    return threshold


_THRESHOLDS: dict[np.dtype[Any], tuple[float, bool]] = {}


def _decode_float(value: Any, dtype: np.dtype[Any], *, v3: bool = False) -> Any:
    """A JSON float fill value; ``v3`` adds bit patterns and refuses lossy conversions
    (a NaN or infinity for a type without one, a finite number that overflows to NaN)."""
    if isinstance(value, str):
        if v3 and _HEX_BITS.match(value):
            return _from_hex(value, dtype)
        if value not in _SPECIAL_FLOATS:
            raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
        number = _SPECIAL_FLOATS[value]
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}")
    else:
        number = value
    if v3:
        return _to_float(number, dtype, value, exact_range=False)
    with np.errstate(over="ignore"):  # a JSON number rounds to the type, to inf if need be
        return dtype.type(number)


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
    """Bytes from base64 text in its one canonical form: characters outside the alphabet,
    missing or excess padding and stray bits are refused, not skipped, because an
    implementation that skips them reads different bytes from another that refuses.

    >>> _decode_base64("cGFk", np.dtype("S3")), _decode_base64("cG*Fk", np.dtype("S3"))
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: invalid base64 fill value 'cG*Fk' for dtype |S3
    """
    if not isinstance(value, str):
        raise MetadataError(f"fill value for dtype {dtype} must be base64 text, not {value!r}")
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as e:
        raise MetadataError(f"invalid base64 fill value {value!r} for dtype {dtype}") from e
    if _encode_base64(raw) != value:  # "cGFk=" (excess padding), "cGF=" (stray bits)
        raise MetadataError(f"invalid base64 fill value {value!r} for dtype {dtype}")
    return raw


def _encode_base64(raw: bytes) -> str:
    return base64.standard_b64encode(raw).decode("ascii")


def _fixed_length(value: Any, dtype: np.dtype[Any]) -> Any:
    """``value`` as a scalar of a fixed-length bytes (``S``) or text (``U``) dtype, refusing
    a value of the wrong type or longer than the type, where numpy would truncate it
    (trailing NULs aside, which numpy drops).

    >>> _fixed_length(b"ab\\0\\0", np.dtype("S3")), _fixed_length("toolong", np.dtype("U3"))
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: fill value 'toolong' is longer than 3 code points (dtype <U3)
    """
    expected: type[Any]
    nul: Any
    if dtype.kind == "S":
        expected, nul, length, unit = bytes, b"\0", dtype.itemsize, "bytes"
    else:
        expected, nul, length, unit = str, "\0", dtype.itemsize // 4, "code points"
    if not isinstance(value, expected):
        raise MetadataError(
            f"fill value {value!r} for dtype {dtype} must be {expected.__name__}"
        )
    if len(value.rstrip(nul)) > length:  # type: ignore[arg-type]
        raise MetadataError(
            f"fill value {value!r} is longer than {length} {unit} (dtype {dtype})"
        )
    return np.array(value.rstrip(nul), dtype=dtype)[()]  # type: ignore[arg-type]


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
            return _fixed_length(_decode_base64(value, dtype), dtype)
        if kind == "U":
            return _fixed_length(value, dtype)
        if kind == "V":
            if dtype.hasobject:
                return _decode_object_struct_fill(value, dtype, object_codec)
            raw = _decode_base64(value, dtype)
            if len(raw) != dtype.itemsize:
                raise MetadataError(
                    f"fill value for dtype {dtype} must be {dtype.itemsize} bytes, "
                    f"found {len(raw)}"
                )
            return np.frombuffer(raw, dtype=dtype)[0]
        if kind == "O":
            return _decode_object_fill(value, object_codec)
    except (TypeError, ValueError, OverflowError) as e:
        if isinstance(e, MetadataError):
            raise
        raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}: {e}") from e
    raise MetadataError(f"unsupported dtype {dtype} for a fill value")


def _decode_object_struct_fill(value: Any, dtype: np.dtype[Any], object_codec: str | None
                               ) -> Any:
    """The fill value of a structured dtype with object fields, which zarr-python 2 writes
    as its object codec's encoding of the value, in base64: hdmf-zarr's compound datasets
    with references hold ``pickle.dumps(0)``, unpickled here by zarrkit's restricted
    unpickler (no global is accepted) and spread over the fields as numpy does.

    >>> _decode_object_struct_fill("gAVLAC4=", np.dtype([("i", "<i4"), ("r", "O")]), "pickle")
    np.void((0, 0), dtype=[('i', '<i4'), ('r', 'O')])
    """
    raw = _decode_base64(value, dtype)
    if object_codec != "pickle":
        raise MetadataError(f"unsupported fill value {value!r} for dtype {dtype} with the "
                            f"{object_codec} object codec")
    from zarrkit.codecs.restricted_pickle import restricted_loads

    # Its errors (UnsafePickleError for any global) become MetadataErrors of the caller.
    decoded = restricted_loads(raw, what="pickled fill value")
    if not isinstance(decoded, int | float | str | bytes | tuple) and decoded is not None:
        raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}: it unpickles "
                            f"to a {type(decoded).__name__}")
    filled = np.array(decoded, dtype=dtype)
    if filled.ndim:
        raise MetadataError(f"invalid fill value {value!r} for dtype {dtype}: not one element")
    return filled[()]


def _decode_object_fill(value: Any, object_codec: str | None) -> Any:
    """The fill value of an array of objects, as its object codec holds items: text for
    ``vlen-utf8``, bytes (base64 in JSON) for ``vlen-bytes``, one JSON value otherwise.

    A list or object is refused: readers assign the fill value to every missing element,
    and numpy would spread a list across them instead. A number for ``vlen-utf8`` is read
    as its text, as zarr-python 3 reads it; ``0`` for ``vlen-bytes`` is the default that
    zarr-python 2 wrote for every array (hdmf-zarr files have it) and means empty bytes.

    >>> _decode_object_fill(0, "vlen-utf8"), _decode_object_fill(0, "vlen-bytes")
    ('0', b'')
    >>> _decode_object_fill([], "vlen-utf8")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: invalid fill value [] for an array of objects: ...
    """
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(value, (list, dict)):
        why = "it must be one string, number, boolean or null"
    elif object_codec == "vlen-utf8":
        if isinstance(value, str) or number:
            return str(value)
        why = "vlen-utf8 items are strings"
    elif object_codec == "vlen-bytes":
        if isinstance(value, str):
            return _decode_base64(value, np.dtype(object))
        if number and value == 0:
            return b""
        why = "vlen-bytes items are bytes, written in base64"
    elif object_codec == "vlen-array" and isinstance(value, str):
        why = "vlen-array items are numbers"
    else:
        return value
    raise MetadataError(f"invalid fill value {value!r} for an array of objects: {why}")


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
        return _encode_base64(np.array(_fixed_length(value, dtype), dtype=dtype).tobytes())
    if kind == "U":
        return str(_fixed_length(value, dtype))
    if kind == "V":
        if dtype.hasobject:
            # Its bytes hold pointers, and zarr-python 2's form (a pickle) is refused for
            # writing: written as null, the default fill (hdmf-zarr never reads it back).
            return None
        return _encode_base64(_raw_bytes(value, dtype))
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
        return _to_float(_SPECIAL_FLOATS[value], dtype, value, exact_range=True)
    # np.generic admits the ml_dtypes scalars (bfloat16, float8...), which are not np.number.
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.generic)):
        raise _not_representable(value, dtype)
    if isinstance(value, (complex, np.complexfloating)):
        raise _not_representable(value, dtype, "it is complex")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError) as e:  # an int beyond any float
        raise _not_representable(value, dtype, "it overflows") from e
    if dtype.itemsize > 8 or (isinstance(value, np.generic) and value.dtype == dtype):
        return dtype.type(value)  # no loss to check: same type, or wider than a Python float
    return _to_float(number, dtype, value, exact_range=True)


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
    kind = _ml_dtypes_kind(dtype) or dtype.kind
    if kind == "O":
        if isinstance(value, (str, bytes, bool, int, float, np.generic)):
            return value
        # A list or dict would be spread over the elements by numpy, and no reader
        # (zarrkit's included) takes one as the fill value of an object array.
        raise MetadataError(f"invalid fill value {value!r} for an array of objects: it "
                            "must be one string, bytes, number or boolean")
    if kind == "b":
        if isinstance(value, (bool, np.bool_)) or (
            isinstance(value, (int, np.integer)) and int(value) in (0, 1)
        ):
            return np.bool_(value)
        raise _not_representable(value, dtype)
    if kind in "iu":
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        if isinstance(value, np.generic) and _ml_dtypes_kind(value.dtype) == "i":
            value = int(value)  # int4 and friends are no np.integer
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise _not_representable(value, dtype)
        info = ml_dtypes.iinfo(dtype)
        if not int(info.min) <= int(value) <= int(info.max):
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
    if kind in "SU":
        return _fixed_length(value, dtype)
    try:
        result = np.array(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as e:
        raise _not_representable(value, dtype, str(e)) from e
    if result.ndim != 0:
        raise _not_representable(value, dtype, "it must be a scalar")
    return result[()]


def _ml_dtypes_kind(dtype: np.dtype[Any]) -> str | None:
    """"i" or "f" for the ml_dtypes numbers whose numpy kind is "V" (int4, bfloat16,
    float8...), None for every other dtype.

    >>> _ml_dtypes_kind(np.dtype(ml_dtypes.int4)), _ml_dtypes_kind(np.dtype("V2"))
    ('i', None)
    """
    if dtype.kind != "V" or not dtype.type.__module__.startswith("ml_dtypes"):
        return None
    return _numeric_class(dtype)


def default_fill_value(dtype: np.dtype[Any]) -> Any:
    """The fill value used when none is given: zero of the type (empty for strings), NaT
    for dates and durations (as zarr-python chooses).

    >>> default_fill_value(np.dtype("f4"))
    np.float32(0.0)
    >>> default_fill_value(np.dtype("M8[s]"))
    np.datetime64('NaT','s')
    """
    if dtype.kind == "O":
        return None
    if dtype.kind in "mM":
        return np.array("NaT", dtype=dtype)[()]
    return np.zeros((), dtype=dtype)[()]


def fill_mask(array: np.ndarray[Any, Any], fill: Any) -> np.ndarray[Any, Any]:
    """Elementwise "is the fill value", bit for bit for fixed-size types: a fill value is a
    bit pattern (the v3 spec), so a NaN fill matches NaNs of its own bits and ``-0.0`` is not
    ``0.0``. Objects compare by ``==``.

    >>> fill_mask(np.array([0.0, -0.0, np.nan]), 0.0).tolist()
    [True, False, False]
    """
    if array.dtype.kind == "O":
        return np.asarray(array == fill, dtype=bool).reshape(array.shape)
    flat = np.ascontiguousarray(array).reshape(-1)
    target = np.asarray(fill, dtype=array.dtype).reshape(1)
    itemsize = array.dtype.itemsize
    if itemsize in (1, 2, 4, 8):
        as_int = np.dtype(f"u{itemsize}")
        mask = flat.view(as_int) == target.view(as_int)[0]
    else:
        raw = flat.view(np.uint8).reshape(flat.size, itemsize)
        mask = (raw == target.view(np.uint8)).all(axis=1)
    return mask.reshape(array.shape)


def is_all_fill(array: np.ndarray[Any, Any], fill: Any) -> bool:
    """Whether every element of ``array`` is the fill value, by :func:`fill_mask`'s rule
    (bit for bit); never for a null fill value. The one rule for skipping empty chunks, whole
    or inside shards.

    >>> is_all_fill(np.full(4, np.nan), np.nan), is_all_fill(np.array([-0.0]), 0.0)
    (True, False)
    """
    if fill is None:
        return False
    if array.dtype.kind == "O":
        return all(item == fill for item in array.ravel(order="K"))
    if array.size:
        # Data rarely equals the fill value everywhere: one element usually settles it
        # without comparing (and allocating a mask for) the whole chunk.
        first = array[(0,) * array.ndim]
        if np.asarray(first, array.dtype).tobytes() != np.asarray(fill, array.dtype).tobytes():
            return False
    return bool(fill_mask(array, fill).all())


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
            return _fixed_length(_decode_bytes(value, dtype), dtype)
        if kind == "fixed_string":
            return _fixed_length(value, dtype)
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
            if numeric == "f":
                # Checked as a user's value: np.array() would saturate an infinity to the
                # largest float4, or an overflow to NaN in float8_e4m3fn.
                return _encode_float(_normalize_real(value, dtype), dtype)
            scalar = np.array(value, dtype=dtype)
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
            return _encode_base64(bytes(_fixed_length(value, dtype)))
        if kind == "fixed_string":
            return str(_fixed_length(value, dtype))
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
