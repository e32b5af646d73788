"""Hostile metadata documents end in a zarrkit error, quickly and in little memory: deeply
nested JSON, malformed consolidated metadata, broken v2 structured dtypes, object codecs
where they cannot work, and fill values that do not fit their type."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import zarr
from support import bounded
from zarr.storage import MemoryStore as ZarrMemoryStore

import zarrkit as zk
from zarrkit.errors import MetadataError, UnsupportedDataTypeError, ZarrkitError
from zarrkit.metadata.dtypes import parse_dtype_v2
from zarrkit.metadata.dtypes_v3 import DataTypeV3, parse_data_type_v3
from zarrkit.metadata.fill_value import (
    decode_fill_value,
    decode_fill_value_v3,
    encode_fill_value,
    encode_fill_value_v3,
    normalize_fill_value,
)
from zarrkit.metadata.jsonio import MAX_JSON_DEPTH, dump_json, load_json, load_json_object
from zarrkit.metadata.v2 import ArrayMetadataV2
from zarrkit.metadata.v3 import ArrayMetadataV3, RegularChunkGrid

GROUP_V2 = b'{"zarr_format": 2}'
GROUP_V3 = b'{"zarr_format": 3, "node_type": "group"}'


def zarray(**changes: Any) -> dict[str, Any]:
    document = {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4",
                "compressor": None, "fill_value": 0, "order": "C", "filters": None}
    document.update(changes)
    return document


def v2_store(**changes: Any) -> dict[str, bytes]:
    return {".zarray": json.dumps(zarray(**changes)).encode()}


def zarr_json(**changes: Any) -> dict[str, Any]:
    document = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}
    document.update(changes)
    return document


# --- 1. deeply nested JSON ---------------------------------------------------------------

ONE_TOO_DEEP = b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1)
DEEP = [b"[" * 100_000, b'{"a":' * 100_000, ONE_TOO_DEEP]


def _deep_attributes(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


OPENERS: dict[str, Callable[[bytes], Any]] = {
    "zarr.json (open)": lambda raw: zk.open({"zarr.json": raw}, mode="r"),
    "zarr.json (group)": lambda raw: zk.open_group({"zarr.json": raw}, mode="r"),
    ".zarray": lambda raw: zk.open_array({".zarray": raw}, mode="r"),
    ".zgroup": lambda raw: zk.open_group({".zgroup": raw}, mode="r", zarr_format=2),
    ".zattrs of a group": lambda raw: dict(
        zk.open_group({".zgroup": GROUP_V2, ".zattrs": raw}, mode="r", zarr_format=2).attrs),
    ".zattrs of an array": lambda raw: dict(
        zk.open_array({**v2_store(), ".zattrs": raw}, mode="r").attrs),
    ".zmetadata": lambda raw: zk.open_group({".zgroup": GROUP_V2, ".zmetadata": raw},
                                            mode="r", consolidated=True),
    "attributes in zarr.json": lambda raw: zk.open_group(
        {"zarr.json": b'{"zarr_format": 3, "node_type": "group", "attributes": {"x": '
         + raw + b"}}"}, mode="r"),
    "consolidated entry": lambda raw: zk.open_group(
        {"zarr.json": b'{"zarr_format": 3, "node_type": "group", "consolidated_metadata": '
         b'{"kind": "inline", "must_understand": false, "metadata": {"a": ' + raw + b"}}}"},
        mode="r", consolidated=True),
}


@pytest.mark.parametrize("document", DEEP, ids=["arrays", "objects", "one-too-deep"])
@pytest.mark.parametrize("where", sorted(OPENERS))
def test_deeply_nested_json_is_a_metadata_error(where: str, document: bytes) -> None:
    with bounded(), pytest.raises(MetadataError, match="nests deeper"):
        OPENERS[where](document)


def test_the_deepest_allowed_document_round_trips() -> None:
    # Exactly MAX_JSON_DEPTH levels: readable, writable, and readable again.
    document = {"zarr_format": 3, "node_type": "group",
                "attributes": _deep_attributes(MAX_JSON_DEPTH - 2)}
    text = json.dumps(document).encode()
    assert load_json(text, key="zarr.json") == document
    assert load_json(dump_json(document), key="zarr.json") == document
    store: dict[str, bytes] = {"zarr.json": text}
    group = zk.open_group(store, mode="r+")
    group.attrs["y"] = 1  # rewrites the deep document
    assert zk.open_group(store, mode="r").attrs["a"] == document["attributes"]["a"]


def test_attributes_too_deep_to_read_back_are_refused_on_write() -> None:
    group = zk.group({}, zarr_format=2)
    with pytest.raises(MetadataError, match="nests deeper"):
        group.attrs["x"] = _deep_attributes(MAX_JSON_DEPTH)
    array = zk.create_array({}, shape=(2,), dtype="u1")
    with pytest.raises(MetadataError, match="nests? deeper"):
        array.attrs["x"] = _deep_attributes(5000)  # deeper than the interpreter's stack


# --- 2. consolidated metadata --------------------------------------------------------------

def _zmetadata(entries: Any, **top: Any) -> dict[str, bytes]:
    document = {"zarr_consolidated_format": 1, "metadata": entries, **top}
    return {".zgroup": GROUP_V2, ".zmetadata": json.dumps(document).encode()}


def _members(store: dict[str, bytes]) -> list[str]:
    group = zk.open_group(store, mode="r", consolidated=True)
    return [name for name, _ in group.members(max_depth=None)]


GOOD_ARRAY = zarray()
BAD_V2_SNAPSHOTS = {
    "array document is a number": {".zgroup": {"zarr_format": 2}, "a/.zarray": 5},
    "attributes are a list": {"a/.zgroup": {"zarr_format": 2}, "a/.zattrs": [1]},
    "group document is a string": {"a/.zgroup": "x"},
    "metadata is a list": [],
    "metadata is missing": None,
    "parent path": {"../a/.zarray": GOOD_ARRAY},
    "empty segment": {"a//b/.zarray": GOOD_ARRAY},
    "leading slash": {"/a/.zarray": GOOD_ARRAY},
    "dot segment": {"a/./b/.zgroup": {"zarr_format": 2}},
    "unknown document": {"a/.zfoo": {}},
    "bare name": {"a": {}},
}


@pytest.mark.parametrize("case", sorted(BAD_V2_SNAPSHOTS))
def test_malformed_zmetadata_is_refused_when_read(case: str) -> None:
    store = _zmetadata(BAD_V2_SNAPSHOTS[case])
    with pytest.raises(MetadataError, match=r"\.zmetadata"):
        _members(store)


def test_unknown_consolidated_format_is_refused() -> None:
    store = _zmetadata({"a/.zgroup": {"zarr_format": 2}}, zarr_consolidated_format=2)
    with pytest.raises(MetadataError, match="zarr_consolidated_format"):
        _members(store)


def test_valid_zmetadata_from_zarr_python_still_opens() -> None:
    store = ZarrMemoryStore()
    root = zarr.open_group(store, mode="w", zarr_format=2)
    root.create_group("g").create_array("a", shape=(3,), dtype="i2", fill_value=7)
    root.attrs["title"] = "t"
    zarr.consolidate_metadata(store, zarr_format=2)
    raw = {key: value.to_bytes() for key, value in store._store_dict.items()}
    group = zk.open_group(raw, mode="r", consolidated=True)
    assert group.attrs["title"] == "t"
    assert sorted(name for name, _ in group.members(max_depth=None)) == ["g", "g/a"]
    assert group["g/a"][:].tolist() == [7, 7, 7]


def _inline(entries: Any, kind: Any = "inline") -> dict[str, bytes]:
    document = {"zarr_format": 3, "node_type": "group", "consolidated_metadata": {
        "kind": kind, "must_understand": False, "metadata": entries}}
    return {"zarr.json": json.dumps(document).encode()}


GROUP_DOC = {"zarr_format": 3, "node_type": "group"}
BAD_V3_SNAPSHOTS = {
    "entry is a number": {"a": 5},
    "entry is a list": {"a": [GROUP_DOC]},
    "parent path": {"../a": GROUP_DOC},
    "empty path": {"": GROUP_DOC},
    "empty segment": {"a//b": GROUP_DOC},
    "nested snapshot entry is a number": {"a": {**GROUP_DOC, "consolidated_metadata": {
        "kind": "inline", "must_understand": False, "metadata": {"b": 5}}}},
}


@pytest.mark.parametrize("case", sorted(BAD_V3_SNAPSHOTS))
def test_malformed_inline_consolidated_metadata_is_refused(case: str) -> None:
    with pytest.raises(MetadataError, match="consolidated_metadata"):
        _members(_inline(BAD_V3_SNAPSHOTS[case]))


@pytest.mark.parametrize("entries", [[], 5, None])
def test_inline_snapshot_that_is_no_object_is_an_error(entries: Any) -> None:
    with pytest.raises(ZarrkitError):
        _members(_inline(entries))
    with pytest.raises(MetadataError, match="consolidated_metadata"):
        zk.open_group(_inline(entries), mode="r")


# --- 3. v2 data types ------------------------------------------------------------------

BAD_DTYPES = {
    "repeated name": [["a", "<i4"], ["a", "<f8"]],
    "repeated nested name": [["s", [["x", "<i2"], ["x", "<i2"]]]],
    "empty name": [["", "<i4"]],
    "name not text": [[1, "<i4"]],
    "no fields": [],
    "field not a list": ["a"],
    "field too long": [["a", "<i4", [2], "x"]],
    "bad field type": [["a", "<i5"]],
    "field type not text": [["a", 4]],
    "boolean dimension": [["a", "<i4", [True]]],
    "negative dimension": [["a", "<i4", [-1]]],
    "float dimension": [["a", "<i4", [2.0]]],
    "huge dimension": [["a", "<i4", [2**40]]],
    "huge element": [["a", "<i4", [2**31 - 1, 2**31 - 1]]],
    "zero size": [["a", "<i4", [0]]],
    "dimensions not a list": [["a", "<i4", 2]],
    "generic time unit": [["t", "<M8"]],
    "extended precision": [["f", "<f16"]],
    "fields adding up past a C int": [["a", "|V2147483647"], ["b", "|V2147483647"]],
    "sub-array past a C int": [["a", "|V1073741824", [3]]],
}


@pytest.mark.parametrize("case", sorted(BAD_DTYPES))
def test_bad_structured_dtypes_are_metadata_errors(case: str) -> None:
    with pytest.raises(UnsupportedDataTypeError):
        ArrayMetadataV2.from_json(zarray(dtype=BAD_DTYPES[case], fill_value=None))
    with pytest.raises(UnsupportedDataTypeError):
        zk.open_array(v2_store(dtype=BAD_DTYPES[case], fill_value=None), mode="r")


BAD_V3_DATA_TYPES = {
    "time unit is an object": {"name": "numpy.datetime64",
                               "configuration": {"unit": {}, "scale_factor": 1}},
    "time unit is a list": {"name": "numpy.timedelta64",
                            "configuration": {"unit": ["s"], "scale_factor": 1}},
    "raw type past a C int": "r34359738368",
    "raw_bytes past a C int": {"name": "raw_bytes", "configuration": {"length_bytes": 2**32 - 1}},
    "struct past a C int": {"name": "struct", "configuration": {"fields": [
        {"name": n, "data_type": {"name": "raw_bytes", "configuration": {
            "length_bytes": 2**31 - 1}}} for n in "ab"]}},
}


@pytest.mark.parametrize("case", sorted(BAD_V3_DATA_TYPES))
def test_bad_v3_data_types_are_metadata_errors(case: str) -> None:
    # Found by tests/fuzz: TypeError (unhashable unit, numpy "not understood") and a struct
    # whose itemsize numpy wrapped around to -2.
    with pytest.raises(MetadataError):
        parse_data_type_v3(BAD_V3_DATA_TYPES[case])
    with pytest.raises(MetadataError):
        ArrayMetadataV3.from_json(zarr_json(data_type=BAD_V3_DATA_TYPES[case]))


def test_structures_nested_too_deep_are_refused() -> None:
    dtype: Any = "<i4"
    for _ in range(200):
        dtype = [["a", dtype]]
    with pytest.raises(UnsupportedDataTypeError, match="nest deeper"):
        parse_dtype_v2(dtype)


@pytest.mark.parametrize("fields", [
    [["x", "<i4"], ["y", "<f8", [2, 3]]],
    [["outer", [["inner", "|u1", [4]], ["t", "<M8[ns]"]]], ["s", "|S3"]],
    [["a", ">u2"], ["b", "|b1"], ["c", "<c16"]],
])
def test_valid_structured_dtypes_match_numpy(fields: list[Any]) -> None:
    def numpy_form(value: Any) -> Any:  # the oracle: numpy's own descr
        return value if isinstance(value, str) else [
            (f[0], numpy_form(f[1]), *([tuple(f[2])] if len(f) == 3 else [])) for f in value]
    assert parse_dtype_v2(fields) == np.dtype(numpy_form(fields))


# --- 5. object codecs and object fill values --------------------------------------------

BAD_OBJECT_CHAINS = {
    "fill [] with vlen-utf8": dict(dtype="|O", fill_value=[], filters=[{"id": "vlen-utf8"}]),
    "fill {} with json2": dict(dtype="|O", fill_value={}, filters=[{"id": "json2"}]),
    "fill list with vlen-array": dict(dtype="|O", fill_value=[1, 2],
                                      filters=[{"id": "vlen-array", "dtype": "<i4"}]),
    "fill true with vlen-utf8": dict(dtype="|O", fill_value=True, filters=[{"id": "vlen-utf8"}]),
    "fill 5 with vlen-bytes": dict(dtype="|O", fill_value=5, filters=[{"id": "vlen-bytes"}]),
    "vlen-array on int64": dict(dtype="<i8", filters=[{"id": "vlen-array", "dtype": "<i4"}]),
    "json2 on float64": dict(dtype="<f8", filters=[{"id": "json2"}]),
    "vlen-utf8 as compressor": dict(dtype="|O", fill_value=None, compressor={"id": "vlen-utf8"}),
    "objects without a codec": dict(dtype="|O", fill_value=None),
    "objects with zlib first": dict(dtype="|O", fill_value=None,
                                    filters=[{"id": "zlib"}, {"id": "vlen-utf8"}]),
    "two object codecs": dict(dtype="|O", fill_value=None,
                              filters=[{"id": "vlen-utf8"}, {"id": "vlen-bytes"}]),
}


@pytest.mark.parametrize("case", sorted(BAD_OBJECT_CHAINS))
def test_object_codecs_need_object_arrays_and_fitting_fill_values(case: str) -> None:
    store = v2_store(**BAD_OBJECT_CHAINS[case])
    with pytest.raises(MetadataError):
        ArrayMetadataV2.from_json(json.loads(store[".zarray"]))
    with pytest.raises(MetadataError):
        zk.open_array(store, mode="r")


def _zarr_python_v2(document: dict[str, Any]) -> Any:
    store = ZarrMemoryStore()
    from zarr.core.buffer import cpu

    store._store_dict[".zarray"] = cpu.Buffer.from_bytes(json.dumps(document).encode())
    return zarr.open_array(store, mode="r")


@pytest.mark.parametrize("fill", [0, 5, 1.5, "x", ""])
def test_vlen_utf8_fill_values_read_as_zarr_python_reads_them(fill: Any) -> None:
    document = zarray(dtype="|O", fill_value=fill, filters=[{"id": "vlen-utf8"}])
    expected = _zarr_python_v2(document)[:].tolist()
    assert zk.open_array(v2_store(**document), mode="r")[:].tolist() == expected


def test_vlen_bytes_fill_values() -> None:
    document = zarray(dtype="|O", fill_value="YWI=", filters=[{"id": "vlen-bytes"}])
    expected = _zarr_python_v2(document)[:].tolist()
    assert zk.open_array(v2_store(**document), mode="r")[:].tolist() == expected == [b"ab"] * 4
    # zarr-python 2 wrote 0 for every array (hdmf-zarr files have it): no bytes in particular.
    zero = v2_store(**zarray(dtype="|O", fill_value=0, filters=[{"id": "vlen-bytes"}]))
    array = zk.open_array(zero, mode="r+")
    assert array[:].tolist() == [b""] * 4
    array[1] = b"x"  # a partial write starts from the fill value, which must encode
    assert array[:].tolist() == [b"", b"x", b"", b""]


# --- 8. fill values ---------------------------------------------------------------------

MALFORMED_BASE64 = ["cG*Fk", "cGF", "cG Fk", "cGFk\n", "cGFk=", "cGFk====", "====", "cGF=",
                    "-_-_", 5]


@pytest.mark.parametrize("value", MALFORMED_BASE64)
def test_malformed_base64_fill_values_are_refused(value: Any) -> None:
    # "cG*Fk" would decode as b"pad" if the characters outside the alphabet were skipped.
    with pytest.raises(MetadataError):
        decode_fill_value(value, np.dtype("S5"))
    with pytest.raises(MetadataError):
        ArrayMetadataV2.from_json(zarray(dtype="|S5", fill_value=value))
    with pytest.raises(MetadataError):
        decode_fill_value(value, np.dtype("O"), object_codec="vlen-bytes")
    for data_type in ("bytes", {"name": "null_terminated_bytes",
                                "configuration": {"length_bytes": 5}},
                      {"name": "raw_bytes", "configuration": {"length_bytes": 3}}):
        with pytest.raises(MetadataError):
            decode_fill_value_v3(value, parse_data_type_v3(data_type))


def test_well_formed_base64_fill_values_still_decode() -> None:
    assert decode_fill_value("cGFk", np.dtype("S5")) == b"pad"
    assert decode_fill_value_v3("cGFkAA==", parse_data_type_v3("bytes")) == b"pad\0"
    assert base64.b64decode(encode_fill_value(np.bytes_(b"pad"), np.dtype("S5"))) == b"pad\0\0"


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize(("dtype", "value"), [("S3", b"toolong"), ("U3", "toolong"),
                                              ("S1", b"ab"), ("U1", "\u00e9\u00e9")])
def test_over_long_fill_values_are_refused_not_truncated(
    zarr_format: int, dtype: str, value: Any
) -> None:
    with pytest.raises(MetadataError, match="longer than"):
        zk.create_array({}, shape=(2,), dtype=dtype, fill_value=value, zarr_format=zarr_format)
    with pytest.raises(MetadataError, match="longer than"):
        normalize_fill_value(value, np.dtype(dtype))


@pytest.mark.parametrize(("dtype", "value"), [("S3", b"toolong"), ("U3", "toolong")])
def test_over_long_fill_values_are_refused_in_documents_and_direct_metadata(
    dtype: str, value: Any
) -> None:
    stored = base64.b64encode(value).decode() if isinstance(value, bytes) else value
    with pytest.raises(MetadataError, match="longer than"):
        ArrayMetadataV2.from_json(zarray(dtype=np.dtype(dtype).str, fill_value=stored))
    with pytest.raises(MetadataError, match="longer than"):
        encode_fill_value(value, np.dtype(dtype))
    with pytest.raises(MetadataError, match="longer than"):
        ArrayMetadataV2(shape=(2,), chunks=(2,), dtype=np.dtype(dtype), fill_value=value).to_json()
    from zarrkit.metadata.dtypes_v3 import data_type_v3_from_numpy

    with pytest.raises(MetadataError, match="longer than"):
        ArrayMetadataV3(shape=(2,), data_type=data_type_v3_from_numpy(np.dtype(dtype)),
                        chunk_grid=RegularChunkGrid((2,)), fill_value=value)


def test_trailing_nuls_are_not_length() -> None:
    assert normalize_fill_value(b"ab\0\0\0", np.dtype("S2")) == b"ab"
    assert zk.create_array({}, shape=(1,), dtype="U2", fill_value="ab\0").fill_value == "ab"


SMALL_FLOATS = ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
                "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2",
                "float8_e5m2fnuz", "float8_e8m0fnu", "bfloat16"]


def _small_float(name: str) -> DataTypeV3:
    """The data type, registered or not (the float6 types are not v3 data types yet, but
    the fill value rules must hold for them too)."""
    numpy = np.dtype(getattr(ml_dtypes, name))
    try:
        return parse_data_type_v3(name)
    except MetadataError:
        return DataTypeV3(name=name, json=name, numpy=numpy, kind="numeric")


def _has(dtype: np.dtype[Any], special: float) -> bool:
    """The oracle: does ml_dtypes keep this special value through a round trip?"""
    with np.errstate(all="ignore"):
        back = float(dtype.type(special))
    return back == special or (math.isnan(special) and math.isnan(back))


@pytest.mark.parametrize("name", SMALL_FLOATS)
@pytest.mark.parametrize("special", ["Infinity", "-Infinity", "NaN"])
def test_special_fill_values_need_a_type_that_has_them(name: str, special: str) -> None:
    data_type = _small_float(name)
    number = float(special.replace("Infinity", "inf"))
    if _has(data_type.numpy, number):
        decoded = decode_fill_value_v3(special, data_type)
        assert math.isnan(decoded) if math.isnan(number) else float(decoded) == number
        assert encode_fill_value_v3(decoded, data_type) == special
    else:
        with pytest.raises(MetadataError, match="not representable"):
            decode_fill_value_v3(special, data_type)
        with pytest.raises(MetadataError, match="not representable"):
            normalize_fill_value(number, data_type.numpy)
        with pytest.raises(MetadataError, match="not representable"):
            encode_fill_value_v3(number, data_type)


@pytest.mark.parametrize("name", SMALL_FLOATS)
def test_hex_fill_values_wider_than_the_type_are_refused(name: str) -> None:
    data_type = _small_float(name)
    bits = ml_dtypes.finfo(data_type.numpy).bits
    digits = 2 * data_type.numpy.itemsize
    widest = f"0x{(1 << bits) - 1:0{digits}x}"
    expected = np.array([(1 << bits) - 1], f"u{data_type.numpy.itemsize}").view(data_type.numpy)
    assert decode_fill_value_v3(widest, data_type).tobytes() == expected.tobytes()
    for wider in (f"0x{1 << bits:x}", "0x" + "0" * (digits + 1), f"0x1{'0' * digits}"):
        with pytest.raises(MetadataError, match="more bits"):
            decode_fill_value_v3(wider, data_type)


def test_float4_examples_from_the_report() -> None:
    data_type = parse_data_type_v3("float4_e2m1fn")
    for value in ("0xff", "Infinity"):  # accepted today by tensorstore, as -6 and 6
        with pytest.raises(MetadataError):
            decode_fill_value_v3(value, data_type)
        with pytest.raises(MetadataError):
            ArrayMetadataV3.from_json(zarr_json(data_type="float4_e2m1fn", fill_value=value))
    with pytest.raises(MetadataError, match="no infinity"):
        zk.create_array({}, shape=(2,), dtype=ml_dtypes.float4_e2m1fn, fill_value=float("inf"))
    with pytest.raises(MetadataError, match="overflows"):
        zk.create_array({}, shape=(2,), dtype=ml_dtypes.float4_e2m1fn, fill_value=100.0)
    assert float(zk.create_array({}, shape=(1,), dtype=ml_dtypes.float4_e2m1fn,
                                 fill_value=-6.0).fill_value) == -6.0


def test_float8_e8m0fnu_has_no_zero_and_keeps_its_smallest_value() -> None:
    data_type = parse_data_type_v3("float8_e8m0fnu")
    assert decode_fill_value_v3(0, data_type).tobytes() == b"\0"
    created = zk.create_array({}, shape=(1,), dtype=ml_dtypes.float8_e8m0fnu, fill_value=0)
    assert created.fill_value.tobytes() == b"\0"
    with pytest.raises(MetadataError, match="not representable"):
        normalize_fill_value(-1.0, data_type.numpy)  # no sign bit: ml_dtypes makes it NaN


def test_standard_floats_still_follow_the_spec() -> None:
    float32 = parse_data_type_v3("float32")
    assert decode_fill_value_v3(1e300, float32) == np.float32("inf")  # JSON numbers round
    assert decode_fill_value_v3("0x7fc00001", float32).tobytes() == bytes.fromhex("0100c07f")
    with pytest.raises(MetadataError, match="overflows"):
        zk.create_array({}, shape=(1,), dtype="f4", fill_value=1e300)
    assert zk.create_array({}, shape=(1,), dtype="f2", fill_value=65519.0).fill_value == 65504
    with pytest.raises(MetadataError, match="overflows"):
        zk.create_array({}, shape=(1,), dtype="f2", fill_value=65520.0)
    with pytest.raises(MetadataError, match="int4"):
        normalize_fill_value(8, np.dtype(ml_dtypes.int4))
    assert int(normalize_fill_value(ml_dtypes.int4(-8), np.dtype(ml_dtypes.int4))) == -8


def test_json_parse_errors_keep_naming_the_document() -> None:
    with pytest.raises(MetadataError, match="^a/zarr.json: "):
        load_json_object(b"[" * 5000, key="a/zarr.json")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_damaged_consolidated_metadata_is_bad_metadata_not_a_missing_node(
        zarr_format: int) -> None:
    store: dict[str, bytes] = {}
    root = zk.open_group(store, mode="w", zarr_format=zarr_format)
    root.create_array("a", shape=(2,), dtype="u1")
    zk.consolidate_metadata(store)
    key = "zarr.json" if zarr_format == 3 else ".zmetadata"
    document = json.loads(store[key])
    if zarr_format == 3:
        document["consolidated_metadata"]["metadata"] = [1]
    else:
        document["metadata"]["a/.zarray"] = 5
    store[key] = json.dumps(document).encode()
    with pytest.raises(MetadataError):
        zk.open_group(store, mode="r", consolidated=True)
