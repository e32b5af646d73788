"""``zarrkit.dtype`` against zarr-python 3.4's ``zarr.dtype``: the same classes, the same
data type JSON in both formats, the same numpy dtypes and default scalars, and scalars (fill
values) written and read as zarr-python writes and reads them, for every data type.

Where zarrkit writes a scalar differently on purpose (its metadata writer is the one source
of the JSON), the test says so and checks that each library reads the other's form:

- a NaN other than numpy's own is written in v3 as its ``"0x..."`` bit pattern (the spec's
  way to keep a payload; zarr-python writes ``"NaN"`` and loses it);
- a v2 ``|S<n>`` scalar is the base64 of all ``n`` bytes, NUL padded (tensorstore needs
  exactly that many; zarr-python drops the padding).

zarrkit also refuses, where zarr-python converts with a loss: scalars out of range or with a
fraction for an integer type, text longer than a fixed length, a sub-array dtype as raw
bytes, and a time without a unit in v2 (``test_zarrkit_refuses_scalars_that_would_change``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import from_dtype

import zarrkit
import zarrkit.dtype as kd
from zarrkit.errors import DataTypeMismatchError, DataTypeValidationError, MetadataError

zarr = pytest.importorskip("zarr")
zd = pytest.importorskip("zarr.dtype")

pytestmark = pytest.mark.filterwarnings(
    # zarr-python warns that raw_bytes, null_terminated_bytes and variable_length_bytes have
    # no v3 specification (zarrkit warns the same); not what these tests are about.
    "ignore::zarr.errors.UnstableSpecificationWarning",
    "ignore::zarrkit.errors.UnstableSpecificationWarning",
    # zarr-python's own casts of overflowing values warn.
    "ignore:overflow encountered:RuntimeWarning",
)

# One native dtype of each data type, both byte orders where there is one.
NATIVE = [
    "|b1", "|i1", "|u1", "<i2", ">i2", "<u2", ">u2", "<i4", ">i4", "<u4", ">u4", "<i8",
    ">i8", "<u8", ">u8", "<f2", ">f2", "<f4", ">f4", "<f8", ">f8", "<c8", ">c8", "<c16",
    ">c16", "<U1", ">U7", "|S1", "|S9", "|V1", "|V6", "<M8[s]", ">M8[10ms]", "<M8[ns]",
    "<M8[3D]", "<m8[us]", ">m8[7h]", "<m8[ps]",
    [("a", "<i2"), ("b", ">f4")],
    [("x", "<M8[s]"), ("y", "|S2"), ("z", [("p", "|u1"), ("q", "<c8")])],
]
IDS = [str(n) for n in NATIVE]


def _pair(native: Any, zarr_format: int = 3) -> tuple[Any, Any]:
    dtype = np.dtype([tuple(f) for f in native]) if isinstance(native, list) else np.dtype(
        native)
    return (zd.parse_dtype(dtype, zarr_format=zarr_format),
            kd.parse_dtype(dtype, zarr_format=zarr_format))


def _registered_classes() -> list[str]:
    return sorted(cls.__name__ for cls in zd.data_type_registry.contents.values())


def test_every_public_name_of_zarr_dtype_is_in_zarrkit_dtype() -> None:
    for name in zd.__all__:
        theirs = getattr(zd, name)
        ours = getattr(kd, name)
        # (zarr-python's DTypeSpec_V2 is a subscripted TypedDict, zarrkit's a TypedDict.)
        if isinstance(theirs, type) and issubclass(theirs, zd.ZDType):
            assert isinstance(ours, type) and issubclass(ours, kd.ZDType), name
        assert callable(ours) == callable(theirs), name
    assert kd.parse_data_type("int8", zarr_format=3) == kd.Int8()


def test_registries_hold_the_same_classes_under_the_same_names() -> None:
    theirs = {key: cls.__name__ for key, cls in zd.data_type_registry.contents.items()}
    ours = {key: cls.__name__ for key, cls in kd.data_type_registry.contents.items()}
    assert ours == theirs


def test_native_samples_cover_every_registered_class() -> None:
    covered = {type(_pair(native)[1]).__name__ for native in NATIVE}
    assert covered | {"VariableLengthUTF8", "VariableLengthBytes"} == set(_registered_classes())


@pytest.mark.parametrize("native", NATIVE, ids=IDS)
def test_the_same_data_type_from_a_native_dtype(native: Any) -> None:
    theirs, ours = _pair(native)
    assert type(ours).__name__ == type(theirs).__name__
    assert repr(ours) == repr(theirs)
    assert [f.name for f in dataclasses.fields(ours)] == [
        f.name for f in dataclasses.fields(theirs)]
    assert ours.to_native_dtype() == theirs.to_native_dtype()
    assert ours.to_native_dtype().str == theirs.to_native_dtype().str
    assert ours.item_size == theirs.item_size
    assert type(ours).from_native_dtype(ours.to_native_dtype()) == ours
    assert ours == kd.parse_dtype(ours, zarr_format=2)  # a ZDType is taken as it is


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("native", NATIVE, ids=IDS)
def test_the_same_json_and_back(native: Any, zarr_format: int) -> None:
    theirs, ours = _pair(native, zarr_format)
    document = ours.to_json(zarr_format=zarr_format)
    assert document == theirs.to_json(zarr_format=zarr_format)
    json.dumps(document)  # JSON, not Python objects
    # Each library reads the other's JSON into the same data type (v3 JSON has no byte
    # order: both read the host's).
    back_theirs = type(theirs).from_json(document, zarr_format=zarr_format)
    back_ours = type(ours).from_json(document, zarr_format=zarr_format)
    assert repr(back_ours) == repr(back_theirs)
    assert repr(kd.parse_dtype(document, zarr_format=zarr_format)) == repr(
        zd.parse_dtype(document, zarr_format=zarr_format))
    if zarr_format == 2:
        assert back_ours == ours


@pytest.mark.parametrize("native", NATIVE, ids=IDS)
def test_the_same_default_scalar(native: Any) -> None:
    theirs, ours = _pair(native)
    expected, got = theirs.default_scalar(), ours.default_scalar()
    assert type(got) is type(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    assert np.asarray(got).tobytes() == np.asarray(expected).tobytes()  # NaT included


@pytest.mark.parametrize("spec", ["string", "str", str, "variable_length_bytes", "bytes",
                                  {"name": "|O", "object_codec_id": "vlen-utf8"},
                                  {"name": "|O", "object_codec_id": "vlen-bytes"}],
                         ids=repr)
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_variable_length_types_parse_as_zarr_python_parses_them(spec: Any,
                                                                zarr_format: int) -> None:
    outcome: list[Any] = []
    for lib in (zd, kd):
        try:
            parsed = lib.parse_dtype(spec, zarr_format=zarr_format)
        except (ValueError, TypeError):
            outcome.append("error")
            continue
        outcome.append((repr(parsed), parsed.to_json(zarr_format=2),
                        parsed.to_json(zarr_format=3), str(parsed.to_native_dtype()),
                        parsed.default_scalar()))
    assert outcome[1] == outcome[0]


@pytest.mark.parametrize("spec", [np.dtype("O"), "float128x", {"name": "nope"}, "r16"],
                         ids=repr)
def test_what_zarr_python_matches_to_no_data_type_raises_in_zarrkit(spec: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        zd.parse_dtype(spec, zarr_format=3)
    with pytest.raises((ValueError, TypeError)):
        kd.parse_dtype(spec, zarr_format=3)


def test_the_wrong_json_is_a_data_type_validation_error() -> None:
    with pytest.raises(zarr.errors.DataTypeValidationError):
        zd.Int8.from_json("int16", zarr_format=3)
    with pytest.raises(DataTypeMismatchError, match="Int8"):
        kd.Int8.from_json("int16", zarr_format=3)
    with pytest.raises(DataTypeMismatchError):
        kd.Float32.from_json({"name": "<f8", "object_codec_id": None}, zarr_format=2)
    # Caught where zarr-python's code catches its DataTypeValidationError.
    assert issubclass(DataTypeMismatchError, DataTypeValidationError)
    assert issubclass(DataTypeMismatchError, ValueError)


@pytest.mark.parametrize(("cls", "kwargs"), [
    ("DateTime64", {"unit": "s", "scale_factor": 0}),
    ("TimeDelta64", {"unit": "fortnight"}),
    ("FixedLengthUTF32", {"length": 0}),
    ("RawBytes", {"length": 0}),
    ("Struct", {"fields": ()}),
])
def test_invalid_parameters_are_refused_as_in_zarr_python(cls: str, kwargs: dict[str, Any]
                                                           ) -> None:
    with pytest.raises(ValueError):
        getattr(zd, cls)(**kwargs)
    with pytest.raises(ValueError):
        getattr(kd, cls)(**kwargs)


def test_micro_is_written_us_as_in_zarr_python() -> None:
    assert kd.DateTime64(unit="μs") == kd.DateTime64(unit="us")
    assert repr(kd.DateTime64(unit="μs")) == repr(zd.DateTime64(unit="μs"))


# --- scalars ----------------------------------------------------------------------------


def _float_from_bits(dtype: np.dtype[Any]) -> st.SearchStrategy[Any]:
    """Every float of ``dtype`` by its bits: NaNs with payloads and signs, infinities,
    subnormals, -0.0."""
    unsigned = np.dtype(f"u{dtype.itemsize}")
    return st.integers(0, 2 ** (8 * dtype.itemsize) - 1).map(
        lambda bits: np.array(bits, dtype=unsigned).view(dtype.newbyteorder("="))[()])


def _scalars(native: np.dtype[Any]) -> st.SearchStrategy[Any]:
    if native.kind == "f":
        return _float_from_bits(native)
    if native.kind == "c":
        part = np.dtype(f"f{native.itemsize // 2}")
        return st.tuples(_float_from_bits(part), _float_from_bits(part)).map(
            lambda p: np.array(p, dtype=part).view(native.newbyteorder("="))[0])
    if native.kind == "V" and native.fields is None:
        return st.binary(min_size=native.itemsize, max_size=native.itemsize)
    if native.kind in "SU":
        # As numpy holds them: trailing NULs are not part of the value.
        return from_dtype(native).map(lambda v: np.array(v, dtype=native)[()])
    return from_dtype(native.newbyteorder("=") if native.fields is None else native)


def _is_nan_json(value: Any) -> bool:
    if value == "NaN":
        return True
    if isinstance(value, str) and value.startswith("0x"):
        bits = int(value, 16)
        width = 4 * (len(value) - 2)
        dtype = {16: "<f2", 32: "<f4", 64: "<f8"}[width]
        return bool(np.isnan(np.array(bits, dtype=f"<u{width // 8}").view(dtype)))
    return False


def _same_json(theirs: Any, ours: Any) -> bool:
    """Equal JSON, but for zarrkit's bit pattern of a NaN where zarr-python writes "NaN"
    (:func:`_check_scalar` checks the Python type of the top-level value)."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        return theirs.keys() == ours.keys() and all(
            _same_json(theirs[k], ours[k]) for k in theirs)
    if isinstance(theirs, (list, tuple)) and isinstance(ours, (list, tuple)):
        # One JSON array (zarr-python writes a complex field of a struct as a tuple).
        return len(theirs) == len(ours) and all(
            _same_json(a, b) for a, b in zip(theirs, ours, strict=True))
    if theirs == "NaN" and _is_nan_json(ours):
        return True
    return type(theirs) is type(ours) and (theirs == ours or (
        isinstance(theirs, float) and math.isnan(theirs) and math.isnan(ours)))


def _same_scalar(a: Any, b: Any, native: np.dtype[Any]) -> bool:
    """Equal scalars: bit for bit, except that any NaN is a NaN (zarr-python reads
    numbers through Python floats, which do not keep every payload)."""
    if type(a) in (str, bytes) or type(b) in (str, bytes):
        return type(a) is type(b) and a == b
    left, right = np.asarray(a, dtype=native), np.asarray(b, dtype=native)
    if left.tobytes() == right.tobytes():
        return True
    if native.fields is not None:
        return all(_same_scalar(left[name][()], right[name][()], native.fields[name][0])
                   for name in native.names or ())
    if native.kind in "fc":
        both_nan = np.isnan(left.real) & np.isnan(right.real) | (left.real == right.real)
        both_nan_imag = np.isnan(left.imag) & np.isnan(right.imag) | (left.imag == right.imag)
        return bool(both_nan & both_nan_imag)
    return False


def _check_scalar(theirs: Any, ours: Any, value: Any, zarr_format: int) -> None:
    native = ours.to_native_dtype()
    theirs_json = theirs.to_json_scalar(value, zarr_format=zarr_format)
    ours_json = ours.to_json_scalar(value, zarr_format=zarr_format)
    json.dumps(ours_json, allow_nan=False)  # always valid JSON
    if zarr_format == 2 and native.kind == "S":
        # zarrkit pads to the full length (see the module docstring): the same bytes.
        assert ours.from_json_scalar(theirs_json, zarr_format=2) == value
    else:
        assert _same_json(theirs_json, ours_json), (theirs_json, ours_json)
        assert type(ours_json) is type(theirs_json)  # a complex pair is a tuple in both
    # Each library reads either JSON as the same scalar; zarrkit reads its own bit for bit.
    for document in (theirs_json, ours_json, *(json.loads(json.dumps(d))
                                               for d in (theirs_json, ours_json))):
        expected = theirs.from_json_scalar(document, zarr_format=zarr_format)
        got = ours.from_json_scalar(document, zarr_format=zarr_format)
        assert _same_scalar(expected, got, native), (document, expected, got)
    # zarrkit reads its own JSON back bit for bit, but for a NaN's payload in v2 (whose
    # JSON has only "NaN").
    own = ours.from_json_scalar(ours_json, zarr_format=zarr_format)
    cast = ours.cast_scalar(value)
    if zarr_format == 3:
        assert np.asarray(own, dtype=native).tobytes() == np.asarray(
            cast, dtype=native).tobytes()
    else:
        assert _same_scalar(own, cast, native)


SCALAR_NATIVE = [n for n in NATIVE if not (isinstance(n, str) and n.startswith("|V"))] + [
    "|V3"]


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("native", SCALAR_NATIVE, ids=[str(n) for n in SCALAR_NATIVE])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_scalars_to_and_from_json_as_zarr_python(native: Any, zarr_format: int,
                                                 data: st.DataObject) -> None:
    theirs, ours = _pair(native, zarr_format)
    value = data.draw(_scalars(ours.to_native_dtype()), label="value")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _check_scalar(theirs, ours, value, zarr_format)


@pytest.mark.parametrize("zarr_format", [2, 3])
@settings(max_examples=60, deadline=None)
@given(text=st.text(), raw=st.binary())
def test_variable_length_scalars_as_zarr_python(zarr_format: int, text: str, raw: bytes
                                                ) -> None:
    for theirs, ours, value in ((zd.VariableLengthUTF8(), kd.VariableLengthUTF8(), text),
                                (zd.VariableLengthBytes(), kd.VariableLengthBytes(), raw)):
        document = ours.to_json_scalar(value, zarr_format=zarr_format)
        assert document == theirs.to_json_scalar(value, zarr_format=zarr_format)
        assert ours.from_json_scalar(document, zarr_format=zarr_format) == value
        assert theirs.from_json_scalar(document, zarr_format=zarr_format) == value


@pytest.mark.parametrize(("cls", "document", "zarr_format"), [
    ("Int16", "42", 3), ("UInt8", 7.0, 2), ("Float32", "1.5", 3), ("Float64", "-Infinity", 2),
    ("VariableLengthUTF8", 12, 3), ("VariableLengthUTF8", 2.5, 2), ("Complex64", [1, "NaN"], 3),
    ("Bool", True, 3),
])
def test_the_lenient_scalar_forms_zarr_python_reads(cls: str, document: Any,
                                                    zarr_format: int) -> None:
    expected = getattr(zd, cls)().from_json_scalar(document, zarr_format=zarr_format)
    got = getattr(kd, cls)().from_json_scalar(document, zarr_format=zarr_format)
    assert type(got) is type(expected)
    assert _same_scalar(got, expected, np.asarray(expected).dtype)


def test_a_nan_payload_is_kept_in_v3_where_zarr_python_writes_nan() -> None:
    payload = np.array(0x7FC00001, dtype="<u4").view("<f4")[()]
    assert zd.Float32().to_json_scalar(payload, zarr_format=3) == "NaN"
    assert kd.Float32().to_json_scalar(payload, zarr_format=3) == "0x7fc00001"
    back = kd.Float32().from_json_scalar("0x7fc00001", zarr_format=3)
    assert np.asarray(back).view("<u4") == 0x7FC00001
    assert kd.Float32().to_json_scalar(np.float32("nan"), zarr_format=3) == "NaN"


def test_zarrkit_refuses_scalars_that_would_change() -> None:
    # zarr-python truncates or wraps these; zarrkit writes only what reads back the same.
    with pytest.raises(MetadataError):
        kd.Int8().to_json_scalar(300, zarr_format=3)
    with pytest.raises(MetadataError):
        kd.Int8().to_json_scalar(2.5, zarr_format=3)
    with pytest.raises(MetadataError):
        kd.FixedLengthUTF32(length=2).to_json_scalar("abc", zarr_format=3)
    # A sub-array dtype: zarr-python makes raw bytes of it (the numbers would be stored as
    # opaque bytes), zarrkit refuses it as its metadata layer does.
    assert zd.parse_dtype("(2,)i4", zarr_format=3) == zd.RawBytes(length=8)
    with pytest.raises(ValueError, match="No Zarr data type"):
        kd.parse_dtype("(2,)i4", zarr_format=3)
    # A time without a unit has no v2 form zarrkit (or numpy's "<M8[ns]" readers) can read
    # back: zarr-python writes "<M8", which zarrkit's v2 reader refuses as well.
    assert zd.DateTime64().to_json(zarr_format=2)["name"] == "<M8"
    with pytest.raises(MetadataError, match="needs a time unit"):
        kd.DateTime64().to_json(zarr_format=2)


# --- arrays -----------------------------------------------------------------------------


def _document(store: dict[str, Any], zarr_format: int) -> dict[str, Any]:
    raw = store["zarr.json" if zarr_format == 3 else ".zarray"]
    return json.loads(raw.to_bytes() if hasattr(raw, "to_bytes") else raw)  # type: ignore[no-any-return]


ARRAY_TYPES: list[tuple[str, dict[str, Any]]] = [
    ("Int8", {}), ("Int16", {"endianness": "big"}), ("Float64", {}), ("Complex64", {}),
    ("Bool", {}), ("DateTime64", {"unit": "s", "scale_factor": 10}),
    ("DateTime64", {"unit": "ns", "endianness": "big"}), ("TimeDelta64", {"unit": "ms"}),
    ("FixedLengthUTF32", {"length": 3}), ("RawBytes", {"length": 2}),
    ("VariableLengthUTF8", {}), ("VariableLengthBytes", {}),
]


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize(("cls", "kwargs"), ARRAY_TYPES,
                         ids=[f"{c}{k}" for c, k in ARRAY_TYPES])
def test_create_array_takes_a_data_type_instance(cls: str, kwargs: dict[str, Any],
                                                 zarr_format: int) -> None:
    documents, dtypes = [], []
    for lib in (zarr, zarrkit):
        store: dict[str, Any] = {}
        array = lib.create_array(store, shape=(3,), chunks=(3,), compressors=None,
                                 dtype=getattr(lib.dtype, cls)(**kwargs),
                                 zarr_format=zarr_format)
        document = _document(store, zarr_format)
        key = "data_type" if zarr_format == 3 else "dtype"
        documents.append((document[key], document["fill_value"], document.get("filters")))
        dtypes.append(array.dtype)
    assert documents[1] == documents[0]
    if zarr_format == 2 or "endianness" not in kwargs:
        # (A v3 array's numpy dtype is native in zarrkit: the bytes codec has the order.)
        assert dtypes[1] == dtypes[0]


def test_create_array_takes_a_struct_and_v3_data_type_json() -> None:
    for dtype in (lambda lib: lib.dtype.Struct(fields=(("a", lib.dtype.Int16()),
                                                       ("b", lib.dtype.Float32()))),
                  lambda lib: {"name": "numpy.datetime64",
                               "configuration": {"unit": "ms", "scale_factor": 5}},
                  lambda lib: "string", lambda lib: "bytes"):
        made = []
        for lib in (zarr, zarrkit):
            store: dict[str, Any] = {}
            array = lib.create_array(store, shape=(2,), dtype=dtype(lib))
            document = _document(store, 3)
            made.append((document["data_type"], document["fill_value"], str(array.dtype)))
        assert made[1] == made[0]


def test_an_array_of_a_data_type_instance_reads_back() -> None:
    array = zarrkit.create_array({}, shape=(4,), dtype=kd.DateTime64(unit="s"),
                                 fill_value=np.datetime64(5, "s"))
    assert array.dtype == np.dtype("M8[s]")
    assert array[0] == np.datetime64(5, "s")


# --- a dict as a store -------------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_dict_store_holds_values_that_answer_to_bytes(zarr_format: int) -> None:
    documents: list[Any] = []
    for lib in (zarr, zarrkit):
        store: dict[str, Any] = {}
        lib.create_array(store, shape=(1,), dtype=">i2", zarr_format=zarr_format)
        key = ".zarray" if zarr_format == 2 else "zarr.json"
        documents.append(json.loads(store[key].to_bytes())["dtype" if zarr_format == 2
                                                            else "data_type"])
        if lib is zarrkit:
            # Still bytes, as zarrkit's own code and users compare them.
            assert isinstance(store[key], bytes)
            assert store[key] == store[key].to_bytes()
    assert documents[1] == documents[0]


def test_require_array_compares_a_data_type_instance() -> None:
    for lib in (zarr, zarrkit):
        group = lib.group({})
        array = group.create_array("a", shape=(2,), dtype="<i2")
        assert group.require_array("a", shape=(2,), dtype=lib.dtype.Int16()).dtype == (
            array.dtype)
