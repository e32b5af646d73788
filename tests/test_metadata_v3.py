"""Zarr v3 metadata: data types, fill values, chunk grids, chunk key encodings, documents.

Documents written by zarr-python and tensorstore must parse and round-trip; both libraries
also serve as oracles for what we write.
"""

from __future__ import annotations

import base64
import json
import math
import warnings
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrkit import registry
from zarrkit.errors import (
    MetadataError,
    UnsupportedDataTypeError,
    UnsupportedExtensionError,
)
from zarrkit.metadata import (
    ArrayMetadataV3,
    ChunkKeyEncoding,
    DataTypeV3,
    GroupMetadataV3,
    RectilinearChunkGrid,
    RegularChunkGrid,
    data_type_v3_from_numpy,
    decode_fill_value_v3,
    default_fill_value_v3,
    encode_fill_value_v3,
    parse_chunk_grid,
    parse_data_type_v3,
    parse_node_v3,
)
from zarrkit.metadata.jsonio import dump_json, load_json_object

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
V3_CORPUS = FIXTURES / "corpus" / "v3"

FLOAT_NAMES = ["float16", "float32", "float64", "bfloat16", "float8_e3m4", "float8_e4m3fn",
               "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz",
               "float8_e8m0fnu", "float4_e2m1fn"]
INT_NAMES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "int2", "int4", "uint2", "uint4"]
COMPLEX_NAMES = ["complex64", "complex128"]


def _json_round_trip(value: Any) -> Any:
    """What a value becomes after being written to and read from a JSON file."""
    return json.loads(json.dumps(value, allow_nan=False))


def _bits(value: Any, dtype: np.dtype[Any]) -> bytes:
    return np.array([value], dtype=dtype).tobytes()


def _from_bits(bits: int, dtype: np.dtype[Any]) -> Any:
    return np.array([bits], dtype=f"u{dtype.itemsize}").view(dtype)[0]


def _array_doc(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [7, 5],
        "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 3]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
    }
    for name, value in changes.items():
        if value is _DELETE:
            del document[name]
        else:
            document[name] = value
    return document


_DELETE = object()


# --- the corpus written by zarr-python 3.4 and tensorstore ---------------------------------


def _corpus_documents() -> list[Any]:
    if not V3_CORPUS.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(
            reason=f"shared fixtures not found at {V3_CORPUS}"))]
    return [pytest.param(p, id=str(p.relative_to(V3_CORPUS)))
            for p in sorted(V3_CORPUS.rglob("zarr.json"))]


@pytest.mark.parametrize("path", _corpus_documents())
def test_corpus_document_round_trips(path: Path) -> None:
    key = str(path.relative_to(V3_CORPUS))
    document = load_json_object(path.read_bytes(), key=key)
    meta = parse_node_v3(document, key)
    written = meta.to_json()
    assert parse_node_v3(load_json_object(dump_json(written), key=key), key) == meta
    for name, value in document.items():
        if name == "chunk_key_encoding":
            # Canonical form: the separator is always spelled out.
            assert ChunkKeyEncoding.from_json(value) == ChunkKeyEncoding.from_json(written[name])
            assert "separator" in written[name]["configuration"]
        else:
            assert written[name] == value, name
    added = {name: written[name] for name in set(written) - set(document)}
    assert added in ({}, {"attributes": {}}, {"storage_transformers": []},
                     {"attributes": {}, "storage_transformers": []})


def _expected_npy(path: Path) -> Path | None:
    parts = path.relative_to(V3_CORPUS).parts  # writer, store, *inner, "zarr.json"
    store = parts[1].removesuffix(".zarr")
    inner = "~".join(parts[2:-1])
    name = f"{store}@{inner}.npy" if inner else f"{store}.npy"
    candidate = V3_CORPUS / parts[0] / name
    return candidate if candidate.exists() else None


def _corpus_fixed_size_arrays() -> list[Any]:
    """Corpus arrays with fixed-size items and expected values (groups and object arrays
    have no item size to compare)."""
    chosen = []
    for param in _corpus_documents():
        path = param.values[0]
        if path is None:
            chosen.append(param)
            continue
        meta = parse_node_v3(json.loads(path.read_bytes()), str(path))
        if isinstance(meta, ArrayMetadataV3) and meta.dtype.kind != "O" and _expected_npy(path):
            chosen.append(param)
    return chosen


@pytest.mark.parametrize("path", _corpus_fixed_size_arrays())
def test_corpus_dtype_matches_expected_values(path: Path) -> None:
    meta = parse_node_v3(json.loads(path.read_bytes()), str(path))
    expected = _expected_npy(path)
    assert isinstance(meta, ArrayMetadataV3) and expected is not None
    values = np.load(expected, allow_pickle=False)
    assert values.dtype.itemsize == meta.dtype.itemsize
    if meta.data_type.name not in ("bfloat16", "int4"):  # stored as their bit patterns
        assert values.dtype.newbyteorder("=") == meta.dtype


def test_corpus_consolidated_metadata_matches_children() -> None:
    store = V3_CORPUS / "zarr-python" / "hierarchy_consolidated.zarr"
    if not store.is_dir():
        pytest.skip(f"shared fixtures not found at {store}")
    root = parse_node_v3(json.loads((store / "zarr.json").read_bytes()), "zarr.json")
    assert isinstance(root, GroupMetadataV3)
    assert root.attributes["big_int"] == 9007199254740993
    nodes = root.consolidated_nodes()
    assert sorted(nodes) == ["a_root", "empty_group", "g1", "g1/a1", "g1/g2", "g1/g2/a2"]
    for path, node in nodes.items():
        on_disk = parse_node_v3(json.loads((store / path / "zarr.json").read_bytes()), path)
        if isinstance(node, ArrayMetadataV3):
            assert node == on_disk
        else:
            assert node.attributes == on_disk.attributes
    assert np.isnan(nodes["g1/a1"].fill_value)  # type: ignore[union-attr]


# --- zarr-python as an oracle --------------------------------------------------------------

ZARR_PYTHON_CASES = [
    ("bool", True),
    ("int8", -3),
    ("uint64", 2**64 - 1),
    ("float16", float("nan")),
    ("float32", float("-inf")),
    ("float64", 1.5),
    ("complex64", complex(float("nan"), 1.0)),
    ("complex128", complex(1.0, -2.0)),
    ("S5", b"ab"),
    ("V3", b"abc"),
    ("U4", "hi"),
    (str, "x"),
    ("bytes", b"\x00ab"),
    ("M8[10s]", None),
    ("m8[ms]", "NaT"),
    ("M8[ns]", np.datetime64("2020-01-01", "ns")),
    ([("a", "<i4"), ("b", "<f8")], (1, 2.5)),
]


def _zarr_python_array(dtype: Any, fill_value: Any) -> tuple[dict[str, Any], Any]:
    zarr = pytest.importorskip("zarr")
    if dtype == "bytes":
        from zarr.core.dtype import VariableLengthBytes

        dtype = VariableLengthBytes()
    store: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        array = zarr.create_array(store=store, shape=(5,), chunks=(2,), dtype=dtype,
                                  fill_value=fill_value, zarr_format=3)
    return json.loads(store["zarr.json"].to_bytes()), array


def _open_with_zarr_python(document: dict[str, Any]) -> Any:
    zarr = pytest.importorskip("zarr")
    from zarr.core.buffer import cpu

    store = {"zarr.json": cpu.Buffer.from_bytes(dump_json(document))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(store=store, mode="r")


def _same_fill(ours: Any, theirs: Any) -> bool:
    if isinstance(ours, np.generic):
        return bool(ours.tobytes() == np.asarray(theirs, dtype=ours.dtype).tobytes())
    return bool(ours == theirs)


def _same_dtype(ours: DataTypeV3, theirs: np.dtype[Any]) -> bool:
    if ours.kind == "string":
        return theirs.kind in "OT"
    return ours.numpy == theirs


@pytest.mark.parametrize("dtype, fill_value", ZARR_PYTHON_CASES, ids=str)
def test_zarr_python_metadata_parses_the_same(dtype: Any, fill_value: Any) -> None:
    document, array = _zarr_python_array(dtype, fill_value)
    meta = ArrayMetadataV3.from_json(document)
    assert _same_dtype(meta.data_type, array.dtype)
    assert _same_fill(meta.fill_value, array.fill_value)
    assert meta.to_json()["data_type"] == document["data_type"]
    assert meta.to_json()["fill_value"] == document["fill_value"]
    if meta.data_type.kind != "struct":  # zarr-python 3.1 writes the legacy "structured"
        numpy_dtype = bytes if dtype == "bytes" else dtype
        assert data_type_v3_from_numpy(numpy_dtype).json == document["data_type"]


@pytest.mark.parametrize("dtype, fill_value", ZARR_PYTHON_CASES, ids=str)
def test_zarr_python_reads_what_we_write(dtype: Any, fill_value: Any) -> None:
    document, expected = _zarr_python_array(dtype, fill_value)
    meta = ArrayMetadataV3.from_json(document)
    array = _open_with_zarr_python(meta.to_json())
    assert array.dtype == expected.dtype
    assert _same_fill(meta.fill_value, array.fill_value)
    assert (array.shape, array.chunks) == ((5,), (2,))


@pytest.mark.parametrize("name, bits", [
    ("float32", 0x7FC00001), ("float32", 0xFFC00000), ("float64", 0x7FF0000000000001),
    ("float16", 0x7E01),
])
def test_zarr_python_reads_nan_payloads(name: str, bits: int) -> None:
    data_type = parse_data_type_v3(name)
    meta = ArrayMetadataV3(shape=(5,), data_type=data_type, chunk_grid=RegularChunkGrid((2,)),
                           fill_value=_from_bits(bits, data_type.numpy))
    assert meta.to_json()["fill_value"].startswith("0x")
    array = _open_with_zarr_python(meta.to_json())
    if name == "float16":  # zarr-python 3.1 reads a float16 NaN but drops its payload
        assert np.isnan(array.fill_value)
    else:
        assert _bits(array.fill_value, data_type.numpy) == _bits(meta.fill_value,
                                                                 data_type.numpy)


def test_struct_is_written_in_the_registered_form() -> None:
    data_type = data_type_v3_from_numpy([("a", "<i4"), ("b", ">f8")])
    assert data_type.json == {"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": "int32"}, {"name": "b", "data_type": "float64"}]}}
    fill = np.array((1, 2.5), dtype=data_type.numpy)[()]
    assert encode_fill_value_v3(fill, data_type) == {"a": 1, "b": 2.5}
    # The legacy name is read in either field form and written back as it was.
    legacy = parse_data_type_v3({"name": "structured", "configuration": {"fields": [
        {"name": "a", "data_type": "int32"}, ["b", "float64"]]}})
    assert legacy.json["configuration"]["fields"] == [["a", "int32"], ["b", "float64"]]
    assert legacy.numpy == data_type.numpy
    assert encode_fill_value_v3(fill, legacy) == "AQAAAAAAAAAAAARA"


# --- tensorstore as an oracle for its extra types ------------------------------------------

TENSORSTORE_CASES = [
    ("bfloat16", 1.5), ("bfloat16", "NaN"), ("bfloat16", "-Infinity"),
    ("float8_e4m3fn", "NaN"), ("float8_e4m3fn", 448.0), ("float8_e5m2", "Infinity"),
    ("float8_e4m3fnuz", -0.5), ("float8_e5m2fnuz", "NaN"), ("float8_e4m3b11fnuz", 0.25),
    # Not float8_e8m0fnu: tensorstore 0.1.86 scales it differently from ml_dtypes (1.0 is
    # bit pattern 63 there, 127 in ml_dtypes and the OCP MX specification).
    ("float8_e3m4", "0x7a"), ("float4_e2m1fn", -6.0),
    ("int4", -8), ("int2", 1), ("float32", "0x7fc00001"), ("complex64", ["0x7fc00001", 2.0]),
]


def _same_value(ours: Any, theirs: Any) -> bool:
    if ours.dtype.name in INT_NAMES:  # tensorstore keeps int4/int2 sign-extended in a byte
        return int(ours) == int(theirs)
    return bool(ours.tobytes() == theirs.tobytes())


def test_tensorstore_default_float8_e8m0fnu_parses() -> None:
    # e8m0 has no zero: the 0.0 tensorstore writes by default is its smallest value.
    data_type = parse_data_type_v3("float8_e8m0fnu")
    assert decode_fill_value_v3(0.0, data_type).tobytes() == b"\0"
    assert decode_fill_value_v3("NaN", data_type).tobytes() == b"\xff"


def _tensorstore_open(path: Path, metadata: dict[str, Any] | None = None) -> Any:
    ts = pytest.importorskip("tensorstore")
    spec: dict[str, Any] = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}
    if metadata is not None:
        spec.update(metadata=metadata, create=True)
    return ts.open(spec).result()


@pytest.mark.parametrize("name, fill_value", TENSORSTORE_CASES, ids=str)
def test_tensorstore_round_trip(tmp_path: Path, name: str, fill_value: Any) -> None:
    written = _tensorstore_open(tmp_path / "ts", {
        "shape": [5], "data_type": name, "fill_value": fill_value,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
    })
    document = json.loads((tmp_path / "ts" / "zarr.json").read_bytes())
    meta = ArrayMetadataV3.from_json(document)
    assert meta.dtype == written.dtype.numpy_dtype
    assert _same_value(meta.fill_value, np.asarray(written.fill_value)[()])
    assert meta.to_json()["fill_value"] == document["fill_value"]
    assert data_type_v3_from_numpy(meta.dtype).json == name

    (tmp_path / "ours").mkdir()
    (tmp_path / "ours" / "zarr.json").write_bytes(dump_json(meta.to_json()))
    read = _tensorstore_open(tmp_path / "ours")
    assert read.dtype == written.dtype
    assert _same_value(meta.fill_value, np.asarray(read.fill_value)[()])
    assert read.shape == (5,) and read.chunk_layout.read_chunk.shape == (2,)


# --- fill values ----------------------------------------------------------------------------


def _fill_round_trip(value: Any, data_type: DataTypeV3) -> Any:
    return decode_fill_value_v3(_json_round_trip(encode_fill_value_v3(value, data_type)),
                                data_type)


@pytest.mark.parametrize("name", FLOAT_NAMES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_float_fill_values_round_trip_bit_for_bit(name: str, data: st.DataObject) -> None:
    data_type = parse_data_type_v3(name)
    dtype = data_type.numpy
    width = int(ml_dtypes.finfo(dtype).bits)
    bits = data.draw(st.one_of(
        st.integers(0, 2**width - 1),
        # NaNs and infinities, with and without payloads, are what matters most here.
        st.sampled_from([_bits(v, dtype) for v in (np.nan, -np.nan, np.inf, -np.inf, -0.0)])
        .map(lambda b: int.from_bytes(b, "little")),
    ))
    value = _from_bits(bits, dtype)
    assert _bits(_fill_round_trip(value, data_type), dtype) == _bits(value, dtype)


@pytest.mark.parametrize("name", INT_NAMES)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_int_fill_values_round_trip(name: str, data: st.DataObject) -> None:
    data_type = parse_data_type_v3(name)
    info = ml_dtypes.iinfo(data_type.numpy)
    value = data.draw(st.integers(int(info.min), int(info.max)))
    decoded = _fill_round_trip(value, data_type)
    assert int(decoded) == value and decoded.dtype == data_type.numpy
    with pytest.raises(MetadataError, match="out of range"):
        decode_fill_value_v3(int(info.max) + 1, data_type)


@pytest.mark.parametrize("name", COMPLEX_NAMES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_complex_fill_values_round_trip_bit_for_bit(name: str, data: st.DataObject) -> None:
    data_type = parse_data_type_v3(name)
    part = np.dtype(f"f{data_type.numpy.itemsize // 2}")
    specials = [int.from_bytes(_bits(v, part), "little") for v in (np.nan, -np.nan, np.inf)]
    parts = [data.draw(st.one_of(st.integers(0, 2 ** (8 * part.itemsize) - 1),
                                 st.sampled_from(specials))) for _ in range(2)]
    value = np.array(parts, dtype=f"u{part.itemsize}").view(data_type.numpy)[0]
    encoded = encode_fill_value_v3(value, data_type)
    assert isinstance(encoded, list) and len(encoded) == 2
    assert _bits(_fill_round_trip(value, data_type), data_type.numpy) == value.tobytes()


@pytest.mark.parametrize("data_type", [
    parse_data_type_v3("r8"), parse_data_type_v3("r24"),
    parse_data_type_v3({"name": "raw_bytes", "configuration": {"length_bytes": 3}}),
], ids=lambda d: d.name)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_raw_fill_values_round_trip(data_type: DataTypeV3, data: st.DataObject) -> None:
    raw = data.draw(st.binary(min_size=data_type.numpy.itemsize,
                              max_size=data_type.numpy.itemsize))
    value = np.frombuffer(raw, dtype=data_type.numpy)[0]
    encoded = encode_fill_value_v3(value, data_type)
    # The core r<bits> types list byte values; zarr-python's raw_bytes is base64.
    assert encoded == (list(raw) if data_type.name != "raw_bytes" else
                       base64.standard_b64encode(raw).decode())
    assert _fill_round_trip(value, data_type).tobytes() == raw


@pytest.mark.parametrize("unit", ["ns", "10s", "D", "us", "generic"])
@settings(max_examples=30, deadline=None)
@given(count=st.integers(-(2**63), 2**63 - 1))
def test_datetime_fill_values_round_trip(unit: str, count: int) -> None:
    for code in ("M8", "m8"):
        dtype = np.dtype(code if unit == "generic" else f"{code}[{unit}]")
        data_type = data_type_v3_from_numpy(dtype)
        value = np.array(count, dtype="i8").view(dtype)[()]
        assert encode_fill_value_v3(value, data_type) == count
        assert _bits(_fill_round_trip(value, data_type), dtype) == _bits(value, dtype)


@settings(max_examples=50, deadline=None)
@given(text=st.text(), raw=st.binary(), short=st.binary(max_size=5),
       short_text=st.text(max_size=4))
def test_string_and_bytes_fill_values_round_trip(
    text: str, raw: bytes, short: bytes, short_text: str
) -> None:
    assert _fill_round_trip(text, parse_data_type_v3("string")) == text
    for name in ("variable_length_bytes", "bytes"):
        assert _fill_round_trip(raw, parse_data_type_v3(name)) == raw
    fixed = parse_data_type_v3({"name": "null_terminated_bytes",
                                "configuration": {"length_bytes": 5}})
    assert _fill_round_trip(short, fixed) == short.rstrip(b"\0")
    utf32 = parse_data_type_v3({"name": "fixed_length_utf32",
                                "configuration": {"length_bytes": 16}})
    assert _fill_round_trip(short_text, utf32) == short_text.rstrip("\0")


@settings(max_examples=40, deadline=None)
@given(a=st.integers(-128, 127), b=st.floats(width=32), c=st.binary(min_size=2, max_size=2))
def test_struct_fill_values_round_trip(a: int, b: float, c: bytes) -> None:
    data_type = parse_data_type_v3({"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": "int8"},
        {"name": "b", "data_type": "float32"},
        {"name": "c", "data_type": {"name": "struct", "configuration": {"fields": [
            {"name": "raw", "data_type": "r16"}]}}},
    ]}})
    value = np.zeros((), dtype=data_type.numpy)
    value["a"], value["b"], value["c"]["raw"] = a, b, np.frombuffer(c, dtype="V2")[0]
    encoded = encode_fill_value_v3(value[()], data_type)
    assert encoded["c"] == {"raw": list(c)}
    assert _fill_round_trip(value[()], data_type).tobytes() == value.tobytes()


@pytest.mark.parametrize("name, text", [
    ("float16", "0x7e00"), ("float32", "0x7fc00000"), ("float64", "0x7ff8000000000000"),
    ("bfloat16", "0x7fc0"),
])
def test_nan_is_the_canonical_bit_pattern(name: str, text: str) -> None:
    data_type = parse_data_type_v3(name)
    nan = decode_fill_value_v3("NaN", data_type)
    assert _bits(nan, data_type.numpy) == _bits(decode_fill_value_v3(text, data_type),
                                                data_type.numpy)
    assert encode_fill_value_v3(nan, data_type) == "NaN"
    assert decode_fill_value_v3(text.upper().replace("0X", "0x"), data_type).tobytes() == \
        nan.tobytes()


def test_json_numbers_round_to_the_type() -> None:
    assert decode_fill_value_v3(0.1, parse_data_type_v3("float32")) == np.float32(0.1)
    assert decode_fill_value_v3(1e40, parse_data_type_v3("float32")) == np.inf
    assert decode_fill_value_v3(3.0, parse_data_type_v3("int8")) == 3
    assert decode_fill_value_v3(1, parse_data_type_v3("bool")) is np.True_
    assert decode_fill_value_v3(
        -9223372036854775808, data_type_v3_from_numpy("m8[ms]")
    ).tobytes() == np.timedelta64("NaT", "ms").tobytes()


@pytest.mark.parametrize("name, value", [
    ("float32", "nan"), ("float32", "0xzz"), ("float32", True), ("float16", "0x1ffff"),
    ("float8_e4m3fn", "Infinity"), ("float8_e4m3fn", 1e6), ("float4_e2m1fn", "NaN"),
    ("int8", 1.5), ("int8", "1"), ("uint8", -1), ("bool", 2), ("bool", "true"),
    ("complex64", 1.0), ("complex64", [1.0]), ("int32", None), ("r16", [1]),
    ("r16", [1, 256]), ("string", 1), ("bytes", "not base64!"),
])
def test_invalid_fill_values(name: str, value: Any) -> None:
    with pytest.raises(MetadataError, match="invalid (base64 )?fill value|not representable|range"):
        decode_fill_value_v3(value, parse_data_type_v3(name))


def test_invalid_fill_values_of_parametrized_types() -> None:
    fixed = parse_data_type_v3({"name": "null_terminated_bytes",
                                "configuration": {"length_bytes": 2}})
    with pytest.raises(MetadataError, match="longer than 2 bytes"):
        decode_fill_value_v3("YWJj", fixed)
    utf32 = parse_data_type_v3({"name": "fixed_length_utf32",
                                "configuration": {"length_bytes": 4}})
    with pytest.raises(MetadataError, match="longer than 1 code points"):
        decode_fill_value_v3("ab", utf32)
    struct = data_type_v3_from_numpy([("a", "i1"), ("b", "i1")])
    with pytest.raises(MetadataError, match=r"missing fields \['b'\]"):
        decode_fill_value_v3({"a": 1}, struct)
    with pytest.raises(MetadataError, match="must be 2 bytes"):
        decode_fill_value_v3("AQ==", parse_data_type_v3({"name": "structured",
            "configuration": {"fields": [["a", "int8"], ["b", "int8"]]}}))


@pytest.mark.parametrize("name", [*FLOAT_NAMES, *INT_NAMES, *COMPLEX_NAMES, "bool", "string",
                                  "bytes", "r16"])
def test_default_fill_values_are_encodable(name: str) -> None:
    data_type = parse_data_type_v3(name)
    value = default_fill_value_v3(data_type)
    encoded = encode_fill_value_v3(value, data_type)
    if name != "float8_e8m0fnu":  # which has no zero
        assert encoded in (0, 0.0, False, [0.0, 0.0], "", [0, 0])
    decoded = _fill_round_trip(value, data_type)
    if data_type.variable_length:
        assert decoded == value and type(decoded) is type(value)
    else:
        assert _bits(decoded, data_type.numpy) == _bits(value, data_type.numpy)


# --- data types ---------------------------------------------------------------------------


BUILTIN_DATA_TYPES = [*FLOAT_NAMES, *INT_NAMES, *COMPLEX_NAMES, "bool", "string", "bytes",
                      "variable_length_bytes", "numpy.datetime64", "numpy.timedelta64",
                      "raw_bytes", "null_terminated_bytes", "fixed_length_utf32", "struct",
                      "structured", "r8", "r64"]
CONFIGURATIONS: dict[str, Any] = {
    "numpy.datetime64": {"unit": "us", "scale_factor": 5},
    "numpy.timedelta64": {"unit": "generic", "scale_factor": 1},
    "raw_bytes": {"length_bytes": 2},
    "null_terminated_bytes": {"length_bytes": 2},
    "fixed_length_utf32": {"length_bytes": 8},
    "struct": {"fields": [{"name": "x", "data_type": "float32"}]},
    "structured": {"fields": [["x", "float32"]]},
}


@pytest.mark.parametrize("name", BUILTIN_DATA_TYPES)
def test_data_types_round_trip(name: str) -> None:
    value: Any = {"name": name, "configuration": CONFIGURATIONS[name]} \
        if name in CONFIGURATIONS else name
    data_type = parse_data_type_v3(value)
    assert name in registry.data_types or name.startswith("r")
    assert data_type.json == value
    assert parse_data_type_v3(data_type.json) == data_type
    assert data_type.numpy.isnative
    if name not in ("structured", "bytes", "string", "variable_length_bytes", "r8", "r64"):
        assert data_type_v3_from_numpy(data_type.numpy) == data_type


def test_microseconds_may_be_spelled_with_mu() -> None:
    data_type = parse_data_type_v3({"name": "numpy.datetime64",
                                    "configuration": {"unit": "μs", "scale_factor": 1}})
    assert data_type.numpy == np.dtype("M8[us]")
    assert data_type.json["configuration"]["unit"] == "μs"


@pytest.mark.parametrize("dtype, expected", [
    ("?", "bool"), ("<i8", "int64"), (">u2", "uint16"), ("<f2", "float16"), (">c16", "complex128"),
    (ml_dtypes.bfloat16, "bfloat16"), (ml_dtypes.float8_e5m2, "float8_e5m2"),
    (ml_dtypes.int4, "int4"), (ml_dtypes.uint2, "uint2"), (np.dtypes.StringDType(), "string"),
    (str, "string"), (bytes, "variable_length_bytes"),
    ("V2", {"name": "raw_bytes", "configuration": {"length_bytes": 2}}),
    (">U3", {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}),
    ("M8[25ns]", {"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 25}}),
])
def test_data_type_from_numpy(dtype: Any, expected: Any) -> None:
    assert data_type_v3_from_numpy(dtype).json == expected


def test_object_arrays_need_an_object_kind() -> None:
    assert data_type_v3_from_numpy("O", object_kind="string").kind == "string"
    assert data_type_v3_from_numpy("O", object_kind="bytes").kind == "bytes"
    with pytest.raises(UnsupportedDataTypeError, match="object_kind"):
        data_type_v3_from_numpy("O")


@pytest.mark.parametrize("dtype", [
    np.longdouble if np.dtype(np.longdouble).itemsize > 8 else "g", "S0", ("i4", (2,)),
    [("a", "i4", (2,))], [(("title", "a"), "i4")], [("s", "O")],
])
def test_numpy_dtypes_without_a_v3_type(dtype: Any) -> None:
    with pytest.raises(UnsupportedDataTypeError):
        data_type_v3_from_numpy(dtype)


def test_struct_data_types() -> None:
    data_type = parse_data_type_v3({"name": "struct", "configuration": {"fields": [
        {"name": "t", "data_type": {"name": "numpy.datetime64",
                                    "configuration": {"unit": "s", "scale_factor": 1}}},
        {"name": "p", "data_type": {"name": "struct", "configuration": {"fields": [
            {"name": "x", "data_type": {"name": "float32"}}]}}},
    ]}})
    assert data_type.numpy == np.dtype([("t", "M8[s]"), ("p", [("x", "f4")])])
    assert [name for name, _ in data_type.fields] == ["t", "p"]
    # {"name": "float32"} is the object form of the short name; it is written short.
    assert data_type.json["configuration"]["fields"][1]["data_type"]["configuration"] == {
        "fields": [{"name": "x", "data_type": "float32"}]}
    # Padded numpy layouts map to the packed struct.
    padded = np.dtype({"names": ["a", "b"], "formats": ["u1", "<i4"], "offsets": [0, 4]})
    assert data_type_v3_from_numpy(padded).numpy.itemsize == 5


@pytest.mark.parametrize("value, match", [
    ("float128", "unsupported data type 'float128'"),
    ({"name": "complex256", "must_understand": False}, "complex256"),
    ("r12", "multiple of 8"),
    (5, "must be a name"),
    ({"name": "int8", "configuration": {"x": 1}}, "takes no configuration"),
    ({"name": "raw_bytes", "configuration": {"length_bytes": 0}}, "positive integer"),
    ({"name": "raw_bytes"}, "needs a configuration"),
    ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 6}}, "multiple of 4"),
    ({"name": "numpy.datetime64", "configuration": {"unit": "fortnight", "scale_factor": 1}},
     "unknown time unit"),
    ({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 2**31}},
     "scale_factor"),
    ({"name": "numpy.datetime64", "configuration": {"unit": "s"}}, "exactly the keys"),
    ({"name": "struct", "configuration": {"fields": []}}, "non-empty"),
    ({"name": "struct", "configuration": {"fields": [["a", "int8"], ["a", "int8"]]}},
     "duplicate field"),
    ({"name": "struct", "configuration": {"fields": [["a", "string"]]}}, "variable-length"),
    ({"name": "struct", "configuration": {"fields": [{"name": "", "data_type": "int8"}]}},
     "non-empty strings"),
])
def test_invalid_data_types(value: Any, match: str) -> None:
    with pytest.raises(MetadataError, match=match):
        parse_data_type_v3(value)


def test_unknown_data_type_is_both_unsupported_kinds() -> None:
    with pytest.raises(UnsupportedDataTypeError, match="'float128'"):
        parse_data_type_v3("float128")
    with pytest.raises(UnsupportedExtensionError, match="'float128'"):
        parse_data_type_v3("float128")


# --- chunk grids and chunk key encodings ----------------------------------------------------


def test_regular_chunk_grid() -> None:
    grid = parse_chunk_grid({"name": "regular", "configuration": {"chunk_shape": [5, 20, 400]}})
    assert isinstance(grid, RegularChunkGrid)
    assert grid.grid_shape((10, 200, 3000)) == (2, 10, 8)
    assert grid.grid_shape((0, 1, 400)) == (0, 1, 1)
    assert RegularChunkGrid.from_json(grid.to_json()) == grid
    with pytest.raises(MetadataError, match="3 dimensions but the shape"):
        grid.grid_shape((1, 1))


def test_rectilinear_chunk_grid() -> None:
    # The example of the rectilinear extension.
    document = {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [
        4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]}}
    grid = parse_chunk_grid(document)
    assert isinstance(grid, RectilinearChunkGrid)
    shape = (6, 6, 6, 6, 6)
    grid.check_array_shape(shape)
    assert grid.chunk_lengths(shape) == ((4, 4), (1, 2, 3), (4, 4), (1, 1, 1, 3), (4, 4))
    assert grid.chunk_boundaries(shape)[1] == (0, 1, 3, 6)
    assert grid.grid_shape(shape) == (2, 3, 2, 4, 2)
    written = grid.to_json()
    assert written["configuration"]["chunk_shapes"] == [4, [1, 2, 3], [[4, 2]], [[1, 3], 3],
                                                        [[4, 3]]]
    assert parse_chunk_grid(written) == grid
    with pytest.raises(MetadataError, match="sums to 12, less than"):
        grid.check_array_shape((6, 6, 6, 6, 13))


@pytest.mark.parametrize("value, error", [
    ({"name": "regular", "configuration": {"chunk_shape": [0, 2]}}, MetadataError),
    ({"name": "regular", "configuration": {"chunk_shape": [-1]}}, MetadataError),
    ({"name": "regular", "configuration": {"chunk_shape": [True]}}, MetadataError),
    ({"name": "regular", "configuration": {}}, MetadataError),
    ({"name": "regular"}, MetadataError),
    ({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[[2, 0]]]}},
     MetadataError),
    ({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[[2]]]}},
     MetadataError),
    ({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": ["4"]}},
     MetadataError),
    ({"name": "hexagonal", "must_understand": False}, UnsupportedExtensionError),
])
def test_invalid_chunk_grids(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        parse_chunk_grid(value)


@pytest.mark.parametrize("value, coords, key", [
    ("default", (1, 23, 45), "c/1/23/45"),
    ({"name": "default"}, (), "c"),
    ({"name": "default", "configuration": {"separator": "."}}, (1, 0), "c.1.0"),
    ({"name": "v2"}, (1, 23, 45), "1.23.45"),
    ({"name": "v2", "configuration": {"separator": "/"}}, (0, 2), "0/2"),
    ("v2", (), "0"),
])
def test_chunk_key_encodings(value: Any, coords: tuple[int, ...], key: str) -> None:
    encoding = ChunkKeyEncoding.from_json(value)
    assert encoding.encode(coords) == key
    assert encoding.decode(key, ndim=len(coords)) == coords
    assert ChunkKeyEncoding.from_json(encoding.to_json()) == encoding


@pytest.mark.parametrize("encoding, key, ndim", [
    (ChunkKeyEncoding(), "c/01", None), (ChunkKeyEncoding(), "c/-1", None),
    (ChunkKeyEncoding(), "c/1/x", None), (ChunkKeyEncoding(), "zarr.json", None),
    (ChunkKeyEncoding(), "c/1/2", 3), (ChunkKeyEncoding(), "c.1", None),
    (ChunkKeyEncoding(), "c/", None), (ChunkKeyEncoding("v2"), "1.2.", None),
    (ChunkKeyEncoding("v2"), "zarr.json", None), (ChunkKeyEncoding("v2"), "1", 0),
])
def test_chunk_key_decode_rejects_other_keys(
    encoding: ChunkKeyEncoding, key: str, ndim: int | None
) -> None:
    assert encoding.decode(key, ndim) is None


@settings(max_examples=50, deadline=None)
@given(coords=st.lists(st.integers(0, 10**12), max_size=5),
       name=st.sampled_from(["default", "v2"]), separator=st.sampled_from(["/", "."]))
def test_chunk_keys_round_trip(coords: list[int], name: str, separator: str) -> None:
    encoding = ChunkKeyEncoding(name, separator)
    assert encoding.decode(encoding.encode(coords), ndim=len(coords)) == tuple(coords)


@pytest.mark.parametrize("value, error", [
    ({"name": "default", "configuration": {"separator": "-"}}, MetadataError),
    ({"name": "default", "configuration": {"sep": "/"}}, MetadataError),
    ({"name": "nested"}, UnsupportedExtensionError),
    ({"name": "nested", "must_understand": False}, UnsupportedExtensionError),
])
def test_invalid_chunk_key_encodings(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        ChunkKeyEncoding.from_json(value)


# --- array and group documents -------------------------------------------------------------


def test_array_metadata_basics() -> None:
    meta = ArrayMetadataV3.from_json(_array_doc(dimension_names=["y", None]))
    assert (meta.shape, meta.chunks, meta.ndim, meta.dtype) == ((7, 5), (4, 3), 2,
                                                                np.dtype("i2"))
    assert (meta.zarr_format, meta.node_type) == (3, "array")
    assert meta.chunk_key((1, 0)) == "c/1/0"
    assert meta.dimension_names == ("y", None)
    resized = meta.with_shape((20, 5))
    assert resized.shape == (20, 5) and resized.chunks == meta.chunks
    assert meta.with_attributes({"a": [1]}).to_json()["attributes"] == {"a": [1]}
    assert meta.attributes == {}
    with pytest.raises(MetadataError, match="2 dimensions but the shape"):
        meta.with_shape((3,))


def test_to_json_is_a_copy() -> None:
    meta = ArrayMetadataV3.from_json(_array_doc(attributes={"a": {"b": 1}}))
    document = meta.to_json()
    document["attributes"]["a"]["b"] = 2
    document["codecs"][0]["configuration"]["endian"] = "big"
    assert meta.to_json() == _array_doc(attributes={"a": {"b": 1}}, storage_transformers=[])


def test_codecs_are_normalized() -> None:
    meta = ArrayMetadataV3.from_json(_array_doc(codecs=["bytes", {"name": "gzip",
                                                                  "configuration": {"level": 1}}]))
    assert meta.codecs == ({"name": "bytes"}, {"name": "gzip", "configuration": {"level": 1}})


def test_nan_fill_values_compare_equal() -> None:
    first = ArrayMetadataV3.from_json(_array_doc(data_type="float32", fill_value="NaN"))
    assert first == ArrayMetadataV3.from_json(_array_doc(data_type="float32",
                                                         fill_value="0x7fc00000"))
    assert first != ArrayMetadataV3.from_json(_array_doc(data_type="float32",
                                                         fill_value="0x7fc00001"))


def test_rectilinear_arrays_parse_but_have_no_chunks() -> None:
    meta = ArrayMetadataV3.from_json(_array_doc(chunk_grid={"name": "rectilinear",
        "configuration": {"kind": "inline", "chunk_shapes": [[3, 4], 5]}}))
    assert meta.chunk_grid.grid_shape(meta.shape) == (2, 1)
    assert ArrayMetadataV3.from_json(meta.to_json()) == meta
    with pytest.raises(UnsupportedExtensionError, match="rectilinear"):
        _ = meta.chunks


KEY = "a/b/zarr.json"


@pytest.mark.parametrize("name", ["shape", "data_type", "chunk_grid", "chunk_key_encoding",
                                  "fill_value", "codecs"])
def test_missing_keys(name: str) -> None:
    with pytest.raises(MetadataError, match=f"^{KEY}: missing required key '{name}'"):
        ArrayMetadataV3.from_json(_array_doc(**{name: _DELETE}), KEY)


@pytest.mark.parametrize("changes, error, match", [
    ({"zarr_format": 2}, MetadataError, "zarr_format must be 3, found 2"),
    ({"zarr_format": "3"}, MetadataError, "zarr_format must be 3"),
    ({"zarr_format": _DELETE}, MetadataError, "zarr_format must be 3, found None"),
    ({"node_type": "group"}, MetadataError, "node_type must be 'array', found 'group'"),
    ({"node_type": _DELETE}, MetadataError, "node_type must be 'array'"),
    ({"shape": [7, -5]}, MetadataError, "shape must be a list of non-negative"),
    ({"shape": "7"}, MetadataError, "shape must be a list"),
    ({"data_type": "float128"}, UnsupportedDataTypeError, "'float128'"),
    ({"data_type": "float128"}, UnsupportedExtensionError, "'float128'"),
    ({"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 0]}}},
     MetadataError, "positive integer"),
    ({"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}}},
     MetadataError, "1 dimensions but the shape"),
    ({"chunk_grid": {"name": "irregular"}}, UnsupportedExtensionError, "'irregular'"),
    ({"chunk_key_encoding": {"name": "nested"}}, UnsupportedExtensionError, "'nested'"),
    ({"fill_value": "zero"}, MetadataError, "invalid fill value 'zero'"),
    ({"fill_value": None}, MetadataError, "requires a fill value"),
    ({"codecs": []}, MetadataError, "codecs must not be empty"),
    ({"codecs": {"name": "bytes"}}, MetadataError, "codecs must be a list"),
    ({"codecs": [{"configuration": {}}]}, MetadataError, "codec must be a name or an object"),
    ({"dimension_names": ["y"]}, MetadataError, "has 1 entries but the array has 2"),
    ({"dimension_names": ["y", 1]}, MetadataError, "strings or nulls"),
    ({"dimension_names": "yx"}, MetadataError, "strings or nulls"),
    ({"attributes": []}, MetadataError, "attributes must be a JSON object"),
    ({"storage_transformers": [{"name": "chunk-manifest"}]}, UnsupportedExtensionError,
     "storage transformer 'chunk-manifest'"),
    ({"storage_transformers": {}}, MetadataError, "storage_transformers must be a list"),
    ({"future_field": 1}, UnsupportedExtensionError, "'future_field'"),
    ({"future_field": {"name": "x"}}, UnsupportedExtensionError, "'future_field'"),
    ({"future_field": {"must_understand": True}}, UnsupportedExtensionError, "'future_field'"),
    ({"consolidated_metadata": None}, UnsupportedExtensionError, "'consolidated_metadata'"),
])
def test_bad_array_documents(changes: dict[str, Any], error: type[Exception], match: str
                             ) -> None:
    with pytest.raises(error, match=f"^{KEY}: .*{match}"):
        ArrayMetadataV3.from_json(_array_doc(**changes), KEY)


def test_documents_must_be_objects() -> None:
    for parse in (ArrayMetadataV3.from_json, GroupMetadataV3.from_json, parse_node_v3):
        with pytest.raises(MetadataError, match=f"^{KEY}: expected a JSON object, found list"):
            parse([], KEY)


def test_ignorable_extensions_are_kept_and_written_back() -> None:
    field = {"must_understand": False, "name": "provenance", "configuration": {"by": "me"}}
    transformer = {"name": "chunk-manifest", "must_understand": False}
    document = _array_doc(provenance=field, storage_transformers=[transformer])
    meta = ArrayMetadataV3.from_json(document, KEY)
    assert meta.extra == {"provenance": field}
    assert meta.storage_transformers == (transformer,)
    assert meta.to_json() == document
    group = GroupMetadataV3.from_json({"zarr_format": 3, "node_type": "group",
                                       "provenance": field})
    assert group.to_json()["provenance"] == field


def test_must_understand_false_does_not_excuse_unknown_core_extension_points() -> None:
    for name, value in [("data_type", {"name": "float128", "must_understand": False}),
                        ("chunk_grid", {"name": "irregular", "must_understand": False}),
                        ("chunk_key_encoding", {"name": "nested", "must_understand": False})]:
        with pytest.raises(UnsupportedExtensionError):
            ArrayMetadataV3.from_json(_array_doc(**{name: value}), KEY)


def test_unknown_codecs_when_codecs_are_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry.codecs, "_entries", {"bytes": object()})
    codecs = [{"name": "bytes"}, {"name": "numcodecs.zlib", "configuration": {"level": 1}}]
    assert ArrayMetadataV3.from_json(_array_doc(codecs=codecs)).codecs == tuple(codecs)
    with pytest.raises(UnsupportedExtensionError, match=f"^{KEY}: unknown codec 'lz5'"):
        ArrayMetadataV3.from_json(_array_doc(codecs=[*codecs, {"name": "lz5"}]), KEY)
    ignorable = {"name": "lz5", "must_understand": False}
    meta = ArrayMetadataV3.from_json(_array_doc(codecs=[*codecs, ignorable]))
    assert meta.to_json()["codecs"][-1] == ignorable


def test_group_metadata() -> None:
    consolidated = {"kind": "inline", "must_understand": False, "metadata": {
        "a": _array_doc(), "g": {"zarr_format": 3, "node_type": "group"}}}
    document = {"zarr_format": 3, "node_type": "group", "attributes": {"x": 1},
                "consolidated_metadata": consolidated}
    group = parse_node_v3(document, KEY)
    assert isinstance(group, GroupMetadataV3)
    assert group.to_json() == document
    assert GroupMetadataV3.from_json(group.to_json()) == group
    nodes = group.consolidated_nodes(KEY)
    assert nodes["a"] == ArrayMetadataV3.from_json(_array_doc())
    assert isinstance(nodes["g"], GroupMetadataV3)
    assert group.with_attributes({}).attributes == {}
    bare = GroupMetadataV3.from_json({"zarr_format": 3, "node_type": "group",
                                      "consolidated_metadata": None})
    assert bare.consolidated_metadata is None and bare.consolidated_nodes() == {}


@pytest.mark.parametrize("changes, error, match", [
    ({"zarr_format": 2}, MetadataError, "zarr_format must be 3"),
    ({"node_type": "array"}, MetadataError, "node_type must be 'group'"),
    ({"attributes": "x"}, MetadataError, "attributes must be a JSON object"),
    ({"consolidated_metadata": {"kind": "file", "metadata": {}}}, MetadataError, "kind"),
    ({"consolidated_metadata": {"kind": "inline", "metadata": []}}, MetadataError, "metadata"),
    ({"members": []}, UnsupportedExtensionError, "'members'"),
])
def test_bad_group_documents(changes: dict[str, Any], error: type[Exception], match: str
                             ) -> None:
    document = {"zarr_format": 3, "node_type": "group", **changes}
    with pytest.raises(error, match=f"^{KEY}: .*{match}"):
        GroupMetadataV3.from_json(document, KEY)


def test_consolidated_errors_name_the_child() -> None:
    group = GroupMetadataV3(consolidated_metadata={"kind": "inline", "metadata": {
        "x/y": {"zarr_format": 3, "node_type": "array"}}})
    with pytest.raises(MetadataError, match="^root/x/y/zarr.json: missing required key"):
        group.consolidated_nodes("root/zarr.json")


@pytest.mark.parametrize("document, match", [
    ({"zarr_format": 3, "node_type": "dataset"}, "node_type must be 'array' or 'group'"),
    ({"zarr_format": 3}, "node_type must be 'array' or 'group', found None"),
    ({"zarr_format": 2}, "zarr_format must be 3, found 2"),
])
def test_parse_node_rejects_other_nodes(document: dict[str, Any], match: str) -> None:
    with pytest.raises(MetadataError, match=f"^{KEY}: {match}"):
        parse_node_v3(document, KEY)


@pytest.mark.parametrize("name, value", [
    ("int8", 1.5), ("int8", "1"), ("float32", "1.5"), ("float32", 1j), ("bool", "false"),
    ("bool", 2), ("string", b"x"), ("bytes", "x"), ("r16", b"x"),
])
def test_values_that_cannot_be_encoded(name: str, value: Any) -> None:
    with pytest.raises(MetadataError, match="invalid fill value"):
        encode_fill_value_v3(value, parse_data_type_v3(name))


def test_constructed_metadata_checks_its_fill_value() -> None:
    data_type = parse_data_type_v3("uint8")
    grid = RegularChunkGrid((2,))
    assert ArrayMetadataV3(shape=(3,), data_type=data_type, chunk_grid=grid,
                           fill_value=7.0).fill_value.dtype == np.uint8
    with pytest.raises(MetadataError, match="out of range"):
        ArrayMetadataV3(shape=(3,), data_type=data_type, chunk_grid=grid, fill_value=300)
    with pytest.raises(MetadataError, match="invalid fill value"):
        ArrayMetadataV3(shape=(3,), data_type=parse_data_type_v3("string"), chunk_grid=grid,
                        fill_value=b"x")
    default = ArrayMetadataV3(shape=(3,), data_type=data_type_v3_from_numpy("M8[s]"),
                              chunk_grid=grid)
    assert np.isnat(default.fill_value) and default.to_json()["fill_value"] == -(2**63)
    assert math.isnan(ArrayMetadataV3(shape=(3,), data_type=parse_data_type_v3("bfloat16"),
                                      chunk_grid=grid, fill_value=math.nan).fill_value)
