"""Tests written for mutants of zarrkit.metadata.fill_value that the rest of the suite let live.

``make mutate MODULE=metadata/fill_value.py`` (tools/mutate/run.py) changes the module one
small step at a time and runs its tests against each change; a change no test notices shows
behaviour that nothing checks. Each test here holds one promise of the public functions
(``normalize_fill_value``, ``encode_fill_value``, ``decode_fill_value``, their v3
counterparts and the defaults), checked against numpy, the Zarr specs or zarr-python.
"""

from __future__ import annotations

import base64
import json
import math
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st
from zarr.core.buffer import cpu
from zarr.storage import MemoryStore as ZarrMemoryStore

import zarrkit as zk
from zarrkit.errors import MetadataError
from zarrkit.metadata.dtypes_v3 import DataTypeV3, parse_data_type_v3
from zarrkit.metadata.fill_value import (
    decode_fill_value,
    decode_fill_value_v3,
    default_fill_value,
    encode_fill_value,
    normalize_fill_value,
)
from zarrkit.metadata.v2 import ArrayMetadataV2

STRUCT = np.dtype([("a", "i1"), ("b", "<f4")])
STRING_DTYPE = np.dtypes.StringDType()
FLOAT4 = np.dtype(ml_dtypes.float4_e2m1fn)
FLOAT8_E4M3FN = np.dtype(ml_dtypes.float8_e4m3fn)


def _message(call: Any, *args: Any, **kwargs: Any) -> str:
    """The message of the MetadataError that ``call(*args, **kwargs)`` raises."""
    with pytest.raises(MetadataError) as info:
        call(*args, **kwargs)
    assert type(info.value) is MetadataError
    return str(info.value)


def _same_bits(a: Any, b: Any) -> bool:
    return bool(np.asarray(a).tobytes() == np.asarray(b).tobytes())


def _zarr_python_v2_fill(document: dict[str, Any]) -> Any:
    """The fill value zarr-python reads from a ``.zarray`` document."""
    store = ZarrMemoryStore()
    store._store_dict[".zarray"] = cpu.Buffer.from_bytes(json.dumps(document).encode())
    return zarr.open_array(store, mode="r").fill_value


def _zarray(dtype: str, fill_value: Any) -> dict[str, Any]:
    return {"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": dtype, "compressor": None,
            "fill_value": fill_value, "order": "C", "filters": None}


# --- v2: decoding, kind by kind -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), (False, False), (1, True), (0, False)],
)
def test_v2_bool_fill_values_decode_as_zarr_python_reads_them(value: Any, expected: bool) -> None:
    """A JSON boolean (or 0/1, which zarr-python also reads) is a numpy bool."""
    decoded = decode_fill_value(value, np.dtype("?"))
    assert type(decoded) is np.bool_ and bool(decoded) is expected
    assert decoded == _zarr_python_v2_fill(_zarray("|b1", value))


@pytest.mark.parametrize("value", ["true", 1.0, [True]])
def test_v2_bool_fill_values_that_are_no_boolean_are_refused(value: Any) -> None:
    assert _message(decode_fill_value, value, np.dtype("?")) == (
        f"invalid fill value {value!r} for dtype bool"
    )


@pytest.mark.parametrize(
    ("dtype", "value", "expected"),
    [
        ("<M8[s]", 5, np.datetime64(5, "s")),
        ("<M8[ns]", -1, np.datetime64(-1, "ns")),
        ("<m8[s]", 7, np.timedelta64(7, "s")),
        ("<m8[ms]", "NaT", np.timedelta64("NaT", "ms")),
        ("<M8[D]", "NaT", np.datetime64("NaT", "D")),
        (">M8[s]", 5, np.datetime64(5, "s")),
    ],
)
def test_v2_time_fill_values_are_counts_of_the_unit(dtype: str, value: Any, expected: Any) -> None:
    """Datetimes and timedeltas are their int64 count (or "NaT"), in the array's unit."""
    decoded = decode_fill_value(value, np.dtype(dtype))
    assert type(decoded) is type(expected)
    assert decoded.dtype == expected.dtype
    assert _same_bits(decoded, expected)
    if value != "NaT":
        assert decoded == _zarr_python_v2_fill(_zarray(dtype, value))


@pytest.mark.parametrize("dtype", ["<M8[s]", "<m8[s]"])
@pytest.mark.parametrize("value", ["2020-01-01", 1.5, True])
def test_v2_time_fill_values_must_be_counts(dtype: str, value: Any) -> None:
    assert _message(decode_fill_value, value, np.dtype(dtype)) == (
        f"invalid fill value {value!r} for dtype {np.dtype(dtype)}"
    )


@pytest.mark.parametrize("value", [2**63, 2**64 - 1, -(2**63) - 1])
def test_time_fill_values_beyond_int64_are_refused(value: int) -> None:
    """A count outside int64 is no datetime (numpy cannot hold it), in v2 and in v3."""
    message = _message(decode_fill_value, value, np.dtype("<M8[ns]"))
    assert message.startswith(f"invalid fill value {value} for dtype datetime64[ns]: ")
    data_type = parse_data_type_v3(
        {"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}
    )
    with pytest.raises(MetadataError):
        decode_fill_value_v3(value, data_type)


@pytest.mark.parametrize(
    ("dtype", "value", "expected"),
    [
        ("<c8", 1.5, np.complex64(1.5)),
        ("<c16", -2, np.complex128(-2)),
        ("<c16", "NaN", np.complex128(complex(math.nan, 0))),
        ("<c8", [1.5, -2.0], np.complex64(1.5 - 2j)),
        ("<c16", ["Infinity", "NaN"], np.complex128(complex(math.inf, math.nan))),
    ],
)
def test_v2_complex_fill_values(dtype: str, value: Any, expected: Any) -> None:
    """[real, imag] as zarr-python writes it; a lone number is the real part (numpy's own
    reading of a real number as a complex one)."""
    decoded = decode_fill_value(value, np.dtype(dtype))
    assert type(decoded) is type(expected)
    assert _same_bits(decoded, expected)


def test_v2_float_numbers_round_to_the_type_without_warnings() -> None:
    """The v2 spec's JSON numbers round to the type, to infinity if need be; that is no
    error and warns nobody."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert decode_fill_value(1e300, np.dtype("f4")) == np.float32(np.inf)
        assert decode_fill_value(-1e300, np.dtype("f2")) == np.float16(-np.inf)
        decoded = decode_fill_value([1e300, -1e300], np.dtype("c8"))
    assert _same_bits(decoded, np.complex64(complex(math.inf, -math.inf)))


@pytest.mark.parametrize("value", ["0x7fc00000", "0x3f800000"])
def test_v2_has_no_hex_float_fill_values(value: str) -> None:
    """Bit patterns are a Zarr v3 form; the v2 spec (and zarr-python's v2 reader) has only
    numbers and the three special strings."""
    assert _message(decode_fill_value, value, np.dtype("f4")) == (
        f"invalid fill value {value!r} for dtype float32"
    )
    with pytest.raises(TypeError):
        _zarr_python_v2_fill(_zarray("<f4", value))


def test_v2_raw_void_fill_values_are_base64_of_their_bytes() -> None:
    """The v2 spec: structured and raw values are base64 of their bytes."""
    decoded = decode_fill_value("AQI=", np.dtype("V2"))
    assert type(decoded) is np.void and decoded.tobytes() == b"\x01\x02"
    assert decoded.tobytes() == _zarr_python_v2_fill(_zarray("|V2", "AQI=")).tobytes()
    packed = np.array((1, 2.5), dtype=STRUCT).tobytes()
    structured = decode_fill_value(base64.b64encode(packed).decode(), STRUCT)
    assert structured.dtype == STRUCT and structured.tobytes() == packed
    assert (int(structured["a"]), float(structured["b"])) == (1, 2.5)


@pytest.mark.parametrize(("raw", "dtype"), [(b"\x01", "V2"), (b"\x01\x02\x03", "V2"),
                                            (b"\x01\x00\x00", STRUCT)])
def test_v2_void_fill_values_of_the_wrong_size_are_refused(raw: bytes, dtype: Any) -> None:
    dtype = np.dtype(dtype)
    value = base64.b64encode(raw).decode()
    assert _message(decode_fill_value, value, dtype) == (
        f"fill value for dtype {dtype} must be {dtype.itemsize} bytes, found {len(raw)}"
    )


def test_v2_malformed_base64_names_the_value_and_dtype() -> None:
    assert _message(decode_fill_value, "cG*Fk", np.dtype("S3")) == (
        "invalid base64 fill value 'cG*Fk' for dtype |S3"
    )
    assert _message(decode_fill_value, "A*E=", np.dtype("V2")) == (
        "invalid base64 fill value 'A*E=' for dtype |V2"
    )


def test_v2_fill_values_of_dtypes_without_a_json_form_are_refused() -> None:
    """numpy's variable-width StringDType has no v2 fill value form."""
    assert _message(decode_fill_value, "x", STRING_DTYPE) == (
        f"unsupported dtype {STRING_DTYPE} for a fill value"
    )
    assert _message(encode_fill_value, "x", STRING_DTYPE) == (
        f"unsupported dtype {STRING_DTYPE} for a fill value"
    )


@pytest.mark.parametrize(
    ("value", "dtypes"),
    [
        (37, ["i1", "u2", "f4", "c8", "f8", "<m8[s]"]),
        (0.0, ["f4", "f2", "f8", "c16"]),
        (-0.0, ["f8", "f4"]),
        ("NaN", ["f2", "f4", "f8", "c8"]),
        (True, ["?", "i1"]),
    ],
)
def test_decoding_the_same_json_for_other_dtypes_gives_each_dtype(
    value: Any, dtypes: list[str]
) -> None:
    """Decoded values are remembered by dtype and JSON value: one JSON value decoded for
    several dtypes gives a scalar of each (never the one decoded first)."""
    for _ in range(2):
        for name in dtypes:
            if name == "i1" and value is True:  # a JSON boolean is no integer
                with pytest.raises(MetadataError):
                    decode_fill_value(value, np.dtype(name))
                continue
            decoded = decode_fill_value(value, np.dtype(name))
            assert decoded.dtype == np.dtype(name)
            if isinstance(value, float) and value == 0:
                assert math.copysign(1, decoded.real) == math.copysign(1, value)


# --- v2: arrays of objects ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "codec"),
    [("abc", None), ("abc", "json2"), ("abc", "pickle"), (5, "vlen-array"), (1.5, None)],
)
def test_object_fill_values_of_other_codecs_stay_as_written(value: Any, codec: Any) -> None:
    """Only the vlen codecs say what an item is; any other codec's value is kept as is."""
    assert decode_fill_value(value, np.dtype("O"), object_codec=codec) == value


@pytest.mark.parametrize(
    ("value", "codec", "why"),
    [
        ([], "vlen-utf8", "it must be one string, number, boolean or null"),
        ({"a": 1}, None, "it must be one string, number, boolean or null"),
        (True, "vlen-utf8", "vlen-utf8 items are strings"),
        (True, "vlen-bytes", "vlen-bytes items are bytes, written in base64"),
        (1.5, "vlen-bytes", "vlen-bytes items are bytes, written in base64"),
        ("abc", "vlen-array", "vlen-array items are numbers"),
    ],
)
def test_object_fill_values_that_do_not_fit_the_codec_say_why(
    value: Any, codec: str | None, why: str
) -> None:
    assert _message(decode_fill_value, value, np.dtype("O"), object_codec=codec) == (
        f"invalid fill value {value!r} for an array of objects: {why}"
    )


def test_vlen_bytes_fill_values_in_malformed_base64_name_the_object_dtype() -> None:
    assert _message(decode_fill_value, "cG*Fk", np.dtype("O"), object_codec="vlen-bytes") == (
        "invalid base64 fill value 'cG*Fk' for dtype object"
    )


# --- v2: encoding -------------------------------------------------------------------------


@pytest.mark.parametrize("value", [True, False, np.True_, np.False_])
def test_v2_bool_fill_values_encode_as_json_booleans(value: Any) -> None:
    encoded = encode_fill_value(value, np.dtype("?"))
    assert type(encoded) is bool and encoded is bool(value)


@pytest.mark.parametrize(
    ("value", "dtype", "expected"),
    [
        (np.datetime64(5, "s"), "<M8[s]", 5),
        (np.datetime64(1, "s"), "<M8[ms]", 1000),
        (np.datetime64(-1, "D"), "<M8[h]", -24),
        ("1970-01-01T00:00:01", "<M8[ms]", 1000),
        (np.datetime64("NaT"), "<M8[s]", -(2**63)),
        (np.timedelta64(2, "m"), "<m8[s]", 120),
        (np.timedelta64(3, "s"), ">m8[ms]", 3000),
    ],
)
def test_v2_time_fill_values_encode_as_counts_of_the_arrays_unit(
    value: Any, dtype: str, expected: int
) -> None:
    """A time in another unit (or as text) is converted to the array's unit, as numpy
    converts it, before its count is written."""
    encoded = encode_fill_value(value, np.dtype(dtype))
    assert type(encoded) is int and encoded == expected
    assert encoded == int(np.array(value, dtype=np.dtype(dtype).newbyteorder("=")).view("i8"))


@pytest.mark.parametrize(
    ("value", "dtype", "raw"),
    [
        (np.void(b"\x01\x02"), "V2", b"\x01\x02"),
        (b"\x03\x04", "V2", b"\x03\x04"),
        ((1, 2.5), STRUCT, np.array((1, 2.5), dtype=STRUCT).tobytes()),
        (np.array((7, -1.0), dtype=STRUCT)[()], STRUCT, np.array((7, -1.0), STRUCT).tobytes()),
    ],
)
def test_v2_void_fill_values_encode_as_base64_of_their_bytes(
    value: Any, dtype: Any, raw: bytes
) -> None:
    encoded = encode_fill_value(value, np.dtype(dtype))
    assert encoded == base64.b64encode(raw).decode()
    assert decode_fill_value(encoded, np.dtype(dtype)).tobytes() == raw


@pytest.mark.parametrize(
    ("value", "expected"),
    [("abc", "abc"), (5, 5), (b"\x00fill", "AGZpbGw="), (b"", "")],
)
def test_v2_object_fill_values_encode_bytes_as_base64_and_the_rest_as_is(
    value: Any, expected: Any
) -> None:
    assert encode_fill_value(value, np.dtype("O")) == expected


def test_v2_metadata_round_trips_time_and_void_fill_values() -> None:
    """Through the public metadata path: what is written is read back the same."""
    for dtype, fill in (("<M8[ms]", np.datetime64(1, "s")), ("<m8[s]", np.timedelta64(2, "m")),
                        ("|V2", np.void(b"\x01\x02"))):
        array = zk.create_array({}, shape=(3,), dtype=dtype, fill_value=fill, zarr_format=2)
        document = array.metadata.to_json()
        again = ArrayMetadataV2.from_json(json.loads(json.dumps(document)))
        assert _same_bits(again.fill_value, np.array(fill, dtype=dtype))
        assert _same_bits(array[:], np.full(3, fill, dtype=dtype))


# --- normalize_fill_value: booleans and integers --------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), (False, False), (np.True_, True), (1, True), (0, False), (np.int8(1), True),
     (np.uint64(0), False)],
)
def test_bool_fill_values_are_booleans_or_zero_and_one(value: Any, expected: bool) -> None:
    normalized = normalize_fill_value(value, np.dtype("?"))
    assert type(normalized) is np.bool_ and bool(normalized) is expected


@pytest.mark.parametrize("value", [2, -1, np.int8(2), 1.0, "True", b"\x01"])
def test_other_bool_fill_values_are_refused_not_made_truthy(value: Any) -> None:
    assert _message(normalize_fill_value, value, np.dtype("?")) == (
        f"fill value {value!r} is not representable as bool"
    )


@pytest.mark.parametrize(
    ("value", "dtype"),
    [(3.0, "i4"), (np.float32(-4.0), "i2"), (127, "i1"), (-128, "i1"), (255, "u1"),
     (2**63 - 1, "i8"), (2**64 - 1, "u8"), (np.int64(7), "u1"), (ml_dtypes.int4(-3), "i1")],
)
def test_int_fill_values_in_range_keep_their_value(value: Any, dtype: str) -> None:
    """Integers from the minimum to the maximum of the type (numpy's iinfo) and integral
    floats are accepted unchanged."""
    normalized = normalize_fill_value(value, np.dtype(dtype))
    assert type(normalized) is np.dtype(dtype).type
    assert int(normalized) == int(value)


@pytest.mark.parametrize(
    ("value", "dtype"),
    [(3.5, "i4"), (128, "i1"), (-129, "i1"), (256, "u1"), (-1, "u1"), (2**64, "u8"),
     (True, "i4"), ("3", "i4"), (1 + 0j, "i4"), (None, "i4")],
)
def test_int_fill_values_that_would_change_are_refused(value: Any, dtype: str) -> None:
    if value is None:  # None means "no fill value" and stays None
        assert normalize_fill_value(value, np.dtype(dtype)) is None
        return
    assert _message(normalize_fill_value, value, np.dtype(dtype)) == (
        f"fill value {value!r} is not representable as {np.dtype(dtype)}"
    )


# --- normalize_fill_value: real floats ------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "dtype", "expected"),
    [("NaN", "f4", np.float32(math.nan)), ("Infinity", "f2", np.float16(math.inf)),
     ("-Infinity", "f8", -math.inf), ("Infinity", "float8_e5m2", math.inf),
     ("NaN", "bfloat16", math.nan)],
)
def test_the_special_float_strings_are_accepted(value: str, dtype: str, expected: Any) -> None:
    """The strings of the v2 spec's table (and the v3 spec) name NaN and the infinities."""
    numpy_dtype = np.dtype(getattr(ml_dtypes, dtype, dtype))
    normalized = normalize_fill_value(value, numpy_dtype)
    assert normalized.dtype == numpy_dtype
    if math.isnan(expected):
        assert math.isnan(float(normalized))
    else:
        assert float(normalized) == expected


@pytest.mark.parametrize(
    ("value", "dtype", "why"),
    [
        ("nan", "f4", ""),
        ("inf", "f8", ""),
        ("1.5", "f4", ""),
        (True, "f4", ""),
        (np.False_, "f8", ""),
        ([1.0], "f4", ""),
        (1 + 2j, "f4", ""),
        (np.complex64(1), "f8", ": it is complex"),
        (2**1024, "f4", ": it overflows"),
        (2**1024, "f8", ": it overflows"),
        (1e300, "f4", ": it overflows"),
        (-1e39, "f4", ": it overflows"),
        (70000, "f2", ": it overflows"),
        ("NaN", "float4_e2m1fn", ": the type has no NaN"),
        ("Infinity", "float4_e2m1fn", ": the type has no infinity"),
        ("-Infinity", "float8_e4m3fn", ": the type has no infinity"),
        (math.nan, "float6_e3m2fn", ": the type has no NaN"),
    ],
)
def test_float_fill_values_that_would_change_are_refused_saying_why(
    value: Any, dtype: str, why: str
) -> None:
    numpy_dtype = np.dtype(getattr(ml_dtypes, dtype, dtype))
    assert _message(normalize_fill_value, value, numpy_dtype) == (
        f"fill value {value!r} is not representable as {numpy_dtype}{why}"
    )


# The OCP Microscaling formats saturate instead of overflowing: the largest finite value and
# the step below it (from the spec's tables), so numbers above max + step / 2 cannot round
# to max. float8_e4m3fn has no infinity either; 464 is the tie, which rounds to 448 (even).
SATURATING = [
    ("float4_e2m1fn", 6.0, 2.0),
    ("float6_e2m3fn", 7.5, 0.5),
    ("float6_e3m2fn", 28.0, 4.0),
    ("float8_e4m3fn", 448.0, 32.0),
]


@pytest.mark.parametrize(("name", "top", "step"), SATURATING)
def test_numbers_that_round_to_the_largest_value_are_accepted(
    name: str, top: float, step: float
) -> None:
    dtype = np.dtype(getattr(ml_dtypes, name))
    assert float(ml_dtypes.finfo(dtype).max) == top
    for sign in (1, -1):
        for number in (top, top + step / 4, top + step * 0.49):
            normalized = normalize_fill_value(sign * number, dtype)
            assert normalized.dtype == dtype and float(normalized) == sign * top


def test_the_tie_above_the_largest_float8_e4m3fn_rounds_to_even() -> None:
    """464 is halfway between 448 (mantissa 110, even) and 480: round-half-to-even (and
    ml_dtypes) gives 448, so it does not overflow."""
    assert float(ml_dtypes.float8_e4m3fn(464.0)) == 448.0
    assert float(normalize_fill_value(464.0, FLOAT8_E4M3FN)) == 448.0
    assert float(normalize_fill_value(-464.0, FLOAT8_E4M3FN)) == -448.0


@pytest.mark.parametrize(("name", "top", "step"), SATURATING)
def test_numbers_beyond_the_largest_value_are_refused_not_saturated(
    name: str, top: float, step: float
) -> None:
    dtype = np.dtype(getattr(ml_dtypes, name))
    for number in (top + step * 0.55, top + step, 2 * top + 3 * step):
        for signed in (number, -number):
            assert _message(normalize_fill_value, signed, dtype) == (
                f"fill value {signed!r} is not representable as {dtype}: it overflows"
            )


@settings(max_examples=40, deadline=None)
@given(st.floats(width=32, allow_nan=False))
def test_float32_numbers_normalize_to_numpys_float32(number: float) -> None:
    """A number that float32 holds exactly is kept bit for bit (signed zero included)."""
    assert _same_bits(normalize_fill_value(number, np.dtype("f4")), np.float32(number))


# --- normalize_fill_value: complex numbers --------------------------------------------------


@pytest.mark.parametrize(
    ("value", "dtype", "expected"),
    [
        ([1.5, -2.0], "c8", complex(1.5, -2.0)),
        ((0.25, 3), "c16", complex(0.25, 3)),
        (["NaN", "Infinity"], "c8", complex(math.nan, math.inf)),
        (complex(1.5, 2), "c8", complex(1.5, 2)),
        (np.complex128(-1 - 0.5j), "c8", complex(-1, -0.5)),
        (3, "c8", complex(3, 0)),
        (-0.5, "c16", complex(-0.5, 0)),
        (np.float32(2.5), "c16", complex(2.5, 0)),
        ("-Infinity", "c16", complex(-math.inf, 0)),
        ([1e5, -1e5], "c8", complex(1e5, -1e5)),
        (1e300, "c16", complex(1e300, 0)),
    ],
)
def test_complex_fill_values_as_pairs_complex_numbers_or_reals(
    value: Any, dtype: str, expected: complex
) -> None:
    """[real, imag], a complex number, or a real number whose imaginary part is +0."""
    normalized = normalize_fill_value(value, np.dtype(dtype))
    assert type(normalized) is np.dtype(dtype).type
    assert _same_bits(normalized, np.array(expected, dtype=dtype))


@pytest.mark.parametrize(
    ("value", "dtype", "shown"),
    [
        ([1e39, 0], "c8", "1e+39"),
        ([0, 1e39], "c8", "1e+39"),
        (complex(1e39, 0), "c8", "1e+39"),
        (complex(0, -1e39), "c8", "-1e+39"),
        (1e39, "c8", "1e+39"),
    ],
)
def test_complex_parts_that_overflow_the_part_type_are_refused(
    value: Any, dtype: str, shown: str
) -> None:
    """A complex64's parts are float32s: a part beyond float32 overflows."""
    assert _message(normalize_fill_value, value, np.dtype(dtype)) == (
        f"fill value {shown} is not representable as float32: it overflows"
    )


@pytest.mark.parametrize("value", [[1.0, 2.0, 3.0], [1.0], "x", b"ab", [True, 0]])
def test_complex_fill_values_of_other_shapes_are_refused(value: Any) -> None:
    with pytest.raises(MetadataError):
        normalize_fill_value(value, np.dtype("c16"))


@settings(max_examples=40, deadline=None)
@given(st.floats(width=32, allow_nan=False), st.floats(width=32, allow_nan=False))
def test_complex64_values_normalize_to_numpys_complex64(real: float, imag: float) -> None:
    expected = np.complex64(complex(real, imag))
    for form in ([real, imag], complex(real, imag)):
        assert _same_bits(normalize_fill_value(form, np.dtype("c8")), expected)


# --- normalize_fill_value: raw, structured, text, times ------------------------------------


@pytest.mark.parametrize(
    ("value", "dtype"),
    [(b"\x01\x02", "V2"), (np.void(b"\x03\x04"), "V2"),
     (np.array((1, 2.5), dtype=STRUCT)[()], STRUCT), ((1, 2.5), STRUCT),
     (np.array((3, 0.5), dtype=STRUCT).tobytes(), STRUCT)],
)
def test_void_fill_values_keep_their_bytes(value: Any, dtype: Any) -> None:
    """Raw and structured values are their bytes in the dtype's layout (numpy's)."""
    dtype = np.dtype(dtype)
    normalized = normalize_fill_value(value, dtype)
    assert type(normalized) is np.void and normalized.dtype == dtype
    expected = value if isinstance(value, bytes) else np.array(value, dtype=dtype).tobytes()
    assert normalized.tobytes() == expected


@pytest.mark.parametrize(("value", "dtype"), [(b"\x01", "V2"), (b"\x01\x02\x03", "V2"),
                                              (np.void(b"\x01"), "V2"), (b"\x01", STRUCT)])
def test_void_fill_values_of_the_wrong_size_are_refused_not_padded(
    value: Any, dtype: Any
) -> None:
    """numpy would zero-pad or truncate (``np.array(b"\\x01", dtype="V2")``); a fill value
    of the wrong size is refused instead."""
    dtype = np.dtype(dtype)
    assert _message(normalize_fill_value, value, dtype) == (
        f"fill value {value!r} is not representable as {dtype}: "
        f"it must be {dtype.itemsize} bytes"
    )


@pytest.mark.parametrize(
    ("value", "dtype", "expected"),
    [(b"AX", "S2", b"AX"), (b"XX", "S3", b"XX"), (b"ab\0", "S2", b"ab"), (b"", "S2", b""),
     ("AX", "U2", "AX"), ("XX", "U3", "XX"), ("\u00e9\0", "U1", "\u00e9"), ("", "U1", "")],
)
def test_fixed_length_fill_values_keep_every_character_but_trailing_nuls(
    value: Any, dtype: str, expected: Any
) -> None:
    """Only trailing NULs are dropped (numpy drops them from S and U values too)."""
    normalized = normalize_fill_value(value, np.dtype(dtype))
    assert normalized == expected == np.array(value, dtype=dtype)[()]
    assert type(normalized) is np.dtype(dtype).type


@pytest.mark.parametrize(("value", "dtype", "expected"),
                         [("ab", "S3", "bytes"), (b"ab", "U3", "str"), (5, "S3", "bytes")])
def test_fixed_length_fill_values_of_the_wrong_type_are_refused(
    value: Any, dtype: str, expected: str
) -> None:
    assert _message(normalize_fill_value, value, np.dtype(dtype)) == (
        f"fill value {value!r} for dtype {np.dtype(dtype)} must be {expected}"
    )


@pytest.mark.parametrize(
    ("value", "dtype"),
    [("2020-01-01", "<M8[D]"), (np.datetime64(5, "s"), "<M8[ms]"), (7, "<m8[s]"),
     ("NaT", "<M8[ns]"), (np.timedelta64(1, "h"), "<m8[s]")],
)
def test_time_fill_values_are_converted_as_numpy_converts_them(value: Any, dtype: str) -> None:
    normalized = normalize_fill_value(value, np.dtype(dtype))
    expected = np.array(value, dtype=dtype)[()]
    assert type(normalized) is type(expected) and normalized.dtype == np.dtype(dtype)
    assert _same_bits(normalized, expected)


def test_time_fill_values_numpy_cannot_read_are_refused_with_numpys_reason() -> None:
    dtype = np.dtype("<M8[ns]")
    with pytest.raises(ValueError) as numpy_error:
        np.array("not a date", dtype=dtype)
    assert _message(normalize_fill_value, "not a date", dtype) == (
        f"fill value 'not a date' is not representable as datetime64[ns]: {numpy_error.value}"
    )


@pytest.mark.parametrize(("value", "dtype"), [(["2020-01-01", "2020-01-02"], "<M8[D]"),
                                              ([1, 2], "<m8[s]"), ([(1, 2.5)], STRUCT)])
def test_fill_values_are_one_scalar_not_a_sequence(value: Any, dtype: Any) -> None:
    """numpy would make an array of a list; a fill value is one element."""
    dtype = np.dtype(dtype)
    assert _message(normalize_fill_value, value, dtype) == (
        f"fill value {value!r} is not representable as {dtype}: it must be a scalar"
    )


# --- defaults -----------------------------------------------------------------------------


def test_arrays_of_objects_have_no_default_fill_value() -> None:
    """Zero of the type, except for objects, where zero means nothing: no fill value, and
    times, whose default is NaT (as zarr-python's)."""
    assert default_fill_value(np.dtype("O")) is None
    for name in ("?", "i2", "f4", "c8", "S3", "U2", "V2"):
        default = default_fill_value(np.dtype(name))
        assert np.array(default, dtype=name).tobytes() == np.zeros((), dtype=name).tobytes()
    for name in ("<M8[s]", "<m8[ns]"):
        assert np.isnat(default_fill_value(np.dtype(name)))
        assert default_fill_value(np.dtype(name)).dtype == np.dtype(name)


# --- Zarr v3 ------------------------------------------------------------------------------


def _struct(name: str = "struct") -> DataTypeV3:
    if name == "structured":
        return parse_data_type_v3(
            {"name": "structured", "configuration": {"fields": [["a", "int8"], ["b", "float32"]]}}
        )
    return parse_data_type_v3({"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": "int8"}, {"name": "b", "data_type": "float32"}]}})


@pytest.mark.parametrize("value", [2, -1, "true", 1.0])
def test_v3_bool_fill_values_must_be_booleans(value: Any) -> None:
    """The v3 spec: a bool fill value is a JSON boolean (0 and 1 are let through)."""
    assert _message(decode_fill_value_v3, value, parse_data_type_v3("bool")) == (
        f"invalid fill value {value!r} for data type 'bool'"
    )


def test_v3_numbers_beyond_a_float_round_to_infinity_without_warnings() -> None:
    """The v3 spec rounds JSON numbers to the type; for float32 1e300 is +inf, silently."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert decode_fill_value_v3(1e300, parse_data_type_v3("float32")) == np.inf
        assert decode_fill_value_v3(-1e10, parse_data_type_v3("float16")) == -np.inf
        assert decode_fill_value_v3(100, parse_data_type_v3("float4_e2m1fn")) == 6.0


@pytest.mark.parametrize(
    ("value", "name", "why"),
    [
        ("NaN", "float4_e2m1fn", "the type has no NaN"),
        ("Infinity", "float8_e4m3fn", "the type has no infinity"),
        ("-Infinity", "float4_e2m1fn", "the type has no infinity"),
    ],
)
def test_v3_special_floats_need_a_type_that_has_them(value: str, name: str, why: str) -> None:
    assert _message(decode_fill_value_v3, value, parse_data_type_v3(name)) == (
        f"fill value {value!r} is not representable as {name}: {why}"
    )


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (5, "it must be an object with one member per field"),
        ([1, 2.5], "it must be an object with one member per field"),
        ({"a": 1, "b": 2.5, "c": 0}, "missing fields [], unknown fields ['c']"),
        ({"a": 1}, "missing fields ['b'], unknown fields []"),
        ({"b": 1, "z": 0, "y": 0}, "missing fields ['a'], unknown fields ['y', 'z']"),
    ],
)
def test_v3_struct_fill_values_name_each_field_once(value: Any, why: str) -> None:
    assert _message(decode_fill_value_v3, value, _struct()) == (
        f"invalid fill value {value!r} for data type 'struct': {why}"
    )


def test_v3_struct_fill_values_decode_field_by_field() -> None:
    decoded = decode_fill_value_v3({"b": 2.5, "a": -3}, _struct())
    assert decoded.tobytes() == np.array((-3, 2.5), dtype=STRUCT).tobytes()


def test_v3_legacy_structured_fill_values_are_their_packed_bytes() -> None:
    """The legacy "structured" type wrote base64 of the packed value."""
    packed = np.array((1, 2.5), dtype=STRUCT).tobytes()
    decoded = decode_fill_value_v3(base64.b64encode(packed).decode(), _struct("structured"))
    assert decoded.tobytes() == packed
    assert _message(decode_fill_value_v3, "AQ==", _struct("structured")) == (
        "invalid fill value 'AQ==' for data type 'structured': it must be 5 bytes"
    )
    assert _message(decode_fill_value_v3, "A*Q==", _struct("structured")) == (
        f"invalid base64 fill value 'A*Q==' for dtype {STRUCT}"
    )


@pytest.mark.parametrize("fill", [[1, 2], {"a": 1}, (1,)])
def test_object_arrays_refuse_container_fill_values(fill: Any) -> None:
    # numpy would spread a list over the elements, and no reader takes it back.
    with pytest.raises(MetadataError, match="array of objects"):
        zk.create_array({}, name="x", shape=(2,), dtype=object, fill_value=fill,
                        zarr_format=2, filters=[{"id": "vlen-utf8"}])


@pytest.mark.parametrize("value, dtype_name", [
    (7.0, "float4_e2m1fn"), (7.75, "float6_e2m3fn"), (30.0, "float6_e3m2fn")])
def test_a_tie_above_an_odd_largest_value_overflows(value: float, dtype_name: str) -> None:
    # Round-half-to-even takes the tie up, past the largest value (as float16's 65520).
    dtype = np.dtype(getattr(ml_dtypes, dtype_name))
    with pytest.raises(MetadataError, match="overflows"):
        normalize_fill_value(value, dtype)
    below = np.nextafter(value, 0)
    assert float(normalize_fill_value(below, dtype)) == float(ml_dtypes.finfo(dtype).max)


def test_a_tie_above_an_even_largest_value_rounds_down() -> None:
    dtype = np.dtype(ml_dtypes.float8_e4m3fn)  # 448 = 0b1110 mantissa: even
    assert float(normalize_fill_value(464.0, dtype)) == 448.0
