"""Zarr format 2 interoperability: zarrkit against zarr-python 3.1 and tensorstore.

Every test writes an array (or a hierarchy) with one implementation and reads it with another,
then checks the values against the numpy data that was written and the metadata (shape,
chunks, dtype, fill value, order, codecs, attributes) against what was asked for.

Peer limitations are excluded where the cases are generated, never skipped at run time:

* zarr-python 3.1 has no data type for structured dtypes whose fields are themselves
  structured or subarrays ("No Zarr data type found"), and none for object arrays whose
  object codec is not vlen-utf8/vlen-bytes (so the ``categorize`` filter cannot be read).
  ``fill_value=None`` means "the default" to it, so it never writes a null fill value.
* tensorstore's zarr driver has no datetime/timedelta (``M8``/``m8``), fixed-width unicode
  (``U``), object (vlen-utf8/vlen-bytes) or nested structured dtypes; it reads a structured
  array one field at a time (``"field"`` in the spec); it supports no filters at all; its
  compressors are only blosc, zstd, zlib, gzip and bz2 (``lz4`` and ``lzma`` are "not
  registered"); and it does not read ``.zattrs``.  Its numpy binding gives ``|S``/``|V``
  arrays the unusable element types ``S0``/``V0`` (tensorstore ``char``/``byte``), so those
  are read through their raw buffer.
* No peer reads nested structured dtypes, so for those the stored bytes are checked against
  the spec directly (uncompressed chunk == the C-order bytes of the records).
"""

from __future__ import annotations

import base64
import ctypes
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import tensorstore as ts
import zarr
from hypothesis import event, given, reject, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from interop_helpers import (
    assert_same,
    assert_same_scalar,
    chunk_files,
    expected_with_fill,
    make_data,
    make_text,
    same_codec,
    ts_metadata,
    ts_open,
    ts_read,
    ts_spec,
    zarr_open,
)

# zarr-python with each of its codec pipelines (its own, zarrs): see zarrs_pipeline.
from zarrs_pipeline import (  # noqa: F401, F811
    DEFAULT_V2_COMPRESSOR,
    ZarrsLimit,
    pytest_generate_tests,
    zarr_pipeline,
    zarrs_chunk_bytes_limit,
    zarrs_empty_chunks_limit,
    zarrs_is_active,
    zarrs_read_limit,
)

import zarrkit as zk

# These suites pin format 2; the v3 behaviour has its own tests.
pytestmark = pytest.mark.usefixtures("default_format_2")

# --- the case tables -------------------------------------------------------------------------
SHAPE = (7, 5)
CHUNKS = (3, 2)  # edge chunks along both axes: 7 = 3 + 3 + 1, 5 = 2 + 2 + 1
# Written region: chunks (0..1, 0..1) entirely; the last chunk row and column stay missing
# except the corner element, which is written into a partial (edge) chunk.
REGION = (slice(0, 6), slice(0, 4))
CORNER = (6, 4)

STRUCT = np.dtype([("x", "<i4"), ("y", ">f8"), ("flag", "|b1")])
STRUCT_SUBARRAY = np.dtype([("id", "<u2"), ("vec", "<f4", (3,))])
STRUCT_NESTED = np.dtype([("id", "<i2"), ("pos", [("lat", "<f8"), ("lon", ">f4")])])

# id -> (dtype, a non-default fill value)
DTYPES: dict[str, tuple[np.dtype, Any]] = {
    "bool": (np.dtype("|b1"), True),
    "int8": (np.dtype("|i1"), -7),
    "int16": (np.dtype("<i2"), -300),
    "int32": (np.dtype("<i4"), 42),
    "int64": (np.dtype("<i8"), -(2**63)),
    "uint8": (np.dtype("|u1"), 255),
    "uint16": (np.dtype("<u2"), 65535),
    "uint32": (np.dtype("<u4"), 7),
    "uint64": (np.dtype("<u8"), 2**64 - 1),
    "float16": (np.dtype("<f2"), np.nan),
    "float32": (np.dtype("<f4"), np.inf),
    "float64": (np.dtype("<f8"), -np.inf),
    "complex64": (np.dtype("<c8"), complex(np.nan, 1.0)),
    "complex128": (np.dtype("<c16"), complex(2.5, -np.inf)),
    ">i2": (np.dtype(">i2"), -2),
    ">i4": (np.dtype(">i4"), 123456),
    ">i8": (np.dtype(">i8"), -(2**40)),
    ">u4": (np.dtype(">u4"), 2**32 - 1),
    ">f4": (np.dtype(">f4"), 1.5),
    ">f8": (np.dtype(">f8"), np.nan),
    ">c8": (np.dtype(">c8"), complex(1.0, 2.0)),
    ">c16": (np.dtype(">c16"), complex(np.nan, np.nan)),
    "<M8[ns]": (np.dtype("<M8[ns]"), np.datetime64("NaT", "ns")),
    "<M8[D]": (np.dtype("<M8[D]"), np.datetime64("2001-02-03", "D")),
    ">M8[ns]": (np.dtype(">M8[ns]"), np.datetime64("NaT", "ns")),
    "<m8[ms]": (np.dtype("<m8[ms]"), np.timedelta64(5, "ms")),
    ">m8[s]": (np.dtype(">m8[s]"), np.timedelta64(-3, "s")),
    "S7": (np.dtype("|S7"), b"pad"),
    "S1": (np.dtype("|S1"), b"z"),
    "<U5": (np.dtype("<U5"), "ünï"),
    ">U5": (np.dtype(">U5"), "x€"),
    "V4": (np.dtype("|V4"), b"\x01\x02\x03\x04"),
    "struct": (STRUCT, (1, np.nan, True)),
    "struct-subarray": (STRUCT_SUBARRAY, (9, [1.0, np.nan, -np.inf])),
    "struct-nested": (STRUCT_NESTED, (-1, (0.5, 1.5))),
}

# zarr-python 3.1: no nested or subarray structured fields.
ZARR_DTYPES = [k for k in DTYPES if k not in ("struct-subarray", "struct-nested")]
# tensorstore: no datetime/timedelta, no fixed-width unicode, no nested structured fields.
TS_DTYPES = [
    k for k in DTYPES
    if DTYPES[k][0].kind not in "mMU" and k != "struct-nested"
]

COMPRESSORS: dict[str, Any] = {
    "none": None,
    "blosc-lz4-shuffle": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
    "blosc-zstd-bitshuffle": numcodecs.Blosc(
        cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE),
    "blosc-blosclz-noshuffle": numcodecs.Blosc(
        cname="blosclz", clevel=9, shuffle=numcodecs.Blosc.NOSHUFFLE),
    "blosc-zlib-dict": {"id": "blosc", "cname": "zlib", "clevel": 1, "shuffle": 1},
    "zstd": numcodecs.Zstd(level=3),
    "zstd-dict": {"id": "zstd", "level": 1},
    "zlib": numcodecs.Zlib(level=6),
    "gzip": numcodecs.GZip(level=5),
    "bz2": numcodecs.BZ2(level=9),
    "lzma": numcodecs.LZMA(preset=1),
    "lz4": numcodecs.LZ4(acceleration=1),
}
# tensorstore's zarr driver has no lz4 and no lzma codec.
TS_COMPRESSORS = [k for k in COMPRESSORS if k not in ("lz4", "lzma")]

FILL_CASES: list[tuple[str, str, Any]] = [
    ("f8-nan", "<f8", np.nan),
    ("f8-inf", "<f8", np.inf),
    ("f8-neginf", "<f8", -np.inf),
    ("f4-nan", "<f4", np.nan),
    ("f2-neginf", "<f2", -np.inf),
    (">f8-nan", ">f8", np.nan),
    ("f8-null", "<f8", None),
    ("i4-null", "<i4", None),
    ("S7-null", "|S7", None),
    ("c16-nan-real", "<c16", complex(np.nan, 1.0)),
    ("c8-inf-imag", "<c8", complex(0.0, np.inf)),
    ("S7-bytes", "|S7", b"fill"),
    ("S7-full-width", "|S7", b"1234567"),
    ("bool-true", "|b1", True),
    ("M8-nat", "<M8[ns]", np.datetime64("NaT", "ns")),
    (">M8-nat", ">M8[ns]", np.datetime64("NaT", "ns")),
    ("M8-date", "<M8[s]", np.datetime64("2020-01-01T12:00:00", "s")),
    (">m8-value", ">m8[us]", np.timedelta64(1234, "us")),
    ("m8-nat", "<m8[ms]", np.timedelta64("NaT", "ms")),
    ("u8-max", "<u8", 2**64 - 1),
    ("i8-min", "<i8", -(2**63)),
    ("U5-text", "<U5", "héllo"),
    ("V4-bytes", "|V4", b"\xff\x00\xfe\x01"),
]
# tensorstore reads every kind above but datetime, timedelta and unicode.
TS_FILL_CASES = [c for c in FILL_CASES if np.dtype(c[1]).kind not in "mMU"]
# zarr-python 3.1 cannot write a null fill value (None means "default" to it).
ZARR_WRITE_FILL_CASES = [c for c in FILL_CASES if c[2] is not None]

ORDERS = ["C", "F"]
SEPARATORS = [".", "/"]


def _zarrs_hierarchy_limit() -> ZarrsLimit | None:
    # The arrays _build_zarrkit_hierarchy writes: (dtype, order, shape, codecs).
    arrays = [("<f4", "C", (6, 4), [DEFAULT_V2_COMPRESSOR]),
              (">i8", "F", (9,), [numcodecs.Blosc(cname="zstd")]),
              ("|S3", "C", (4, 2), [DEFAULT_V2_COMPRESSOR])]
    return next(filter(None, (zarrs_read_limit(*array) for array in arrays)), None)


# zarrs' own limits met by these cases (see zarrs_pipeline): test -> the limit that the
# test's parameters meet, None where zarrs does what zarr-python's own pipeline does.
ZARRS_LIMITS: dict[str, Callable[..., ZarrsLimit | None]] = {
    "test_zarrkit_dtype_read_by_zarr": lambda dtype_id, order: zarrs_read_limit(
        DTYPES[dtype_id][0], order, SHAPE, [DEFAULT_V2_COMPRESSOR]),
    "test_zarrkit_fill_value_read_by_zarr": lambda case: zarrs_read_limit(
        case[1], "C", SHAPE, [DEFAULT_V2_COMPRESSOR]),
    "test_zarrkit_default_fill_matches_zarr_python": lambda dtype_str: zarrs_read_limit(
        STRUCT if dtype_str == "STRUCT" else dtype_str, "C", (3,), [DEFAULT_V2_COMPRESSOR]),
    "test_zarrkit_compressor_read_by_zarr": lambda compressor_id, order, separator: (
        zarrs_read_limit("<f8", order, SHAPE, [COMPRESSORS[compressor_id]])),
    "test_zarrkit_filters_read_by_zarr": lambda case, order: zarrs_read_limit(
        case[1], order, SHAPE, [*case[2], numcodecs.Zlib(level=1)]),
    "test_filters_same_chunk_bytes": lambda case, order: zarrs_chunk_bytes_limit(
        case[1], [*case[2], numcodecs.Zlib(level=1)]),
    "test_zarrkit_hierarchy_read_by_zarr": _zarrs_hierarchy_limit,
    "test_zarrkit_consolidated_read_by_zarr": _zarrs_hierarchy_limit,
    "test_zarr_write_empty_chunks_read_by_zarrkit": lambda write_empty_chunks: (
        zarrs_empty_chunks_limit("<f8", [DEFAULT_V2_COMPRESSOR], write_empty_chunks)),
}

ATTRIBUTES = {
    "title": "zarrkit ✓ 日本語 🚀",
    "nested": {"list": [1, 2.5, None, True, "x"], "deep": {"deeper": {"k": []}}},
    "big_int": 2**63 + 5,
    "huge_negative": -(2**70),
    "float": 1e-300,
    "empty": {},
    "quote\"and\\backslash": "line\nbreak\ttab",
}


def _chunk_keys(grid: tuple[int, ...], separator: str) -> set[str]:
    return {separator.join(map(str, idx)) for idx in np.ndindex(*grid)} if grid else {"0"}


def _region_expected(dtype: np.dtype, fill: Any, data: np.ndarray) -> np.ndarray:
    expected = expected_with_fill(data.shape, dtype, fill, REGION, data[REGION])
    expected[CORNER] = data[CORNER]
    return expected


def _fill_for_zarrkit(dtype: np.dtype, fill: Any) -> Any:
    """Fill values as a numpy scalar of the dtype (structured fills as a record)."""
    return None if fill is None else np.array(fill, dtype=dtype)[()]


# --- tensorstore reading helpers --------------------------------------------------------------
def _ts_bytes(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """tensorstore returns ``|S``/``|V`` as (..., itemsize) arrays of its char/byte type,
    which numpy sees as ``S0``/``V0``: copy the raw buffer out and view it as ``dtype``."""
    interface = array.__array_interface__
    count = math.prod(array.shape)
    if count == 0:
        return np.zeros(array.shape[:-1], dtype=dtype)
    strides = interface["strides"]
    c_strides = tuple(int(np.prod(array.shape[i + 1:])) for i in range(array.ndim))
    assert strides is None or tuple(strides) == c_strides, strides
    raw = bytes((ctypes.c_char * count).from_address(interface["data"][0]))
    return np.frombuffer(raw, dtype=dtype).reshape(array.shape[:-1])


def ts_read_as(path: Path, dtype: np.dtype, inner: str | None = None) -> np.ndarray:
    """Read with tensorstore and return what it read as an array of ``dtype`` (native byte
    order; structured arrays re-assembled from one read per field)."""
    if dtype.fields is not None:
        out = np.zeros(ts_open(path, inner, dtype.names[0]).shape, dtype=dtype)
        for name in dtype.names:
            out[name] = _ts_read_plain(path, dtype.fields[name][0], inner, name)
        return out
    return _ts_read_plain(path, dtype, inner, None)


def _ts_read_plain(path: Path, dtype: np.dtype, inner: str | None, field: str | None) -> Any:
    base = dtype.base
    store = ts_open(path, inner, field)
    array = store.read().result()
    if base.kind in "SV":
        return _ts_bytes(array, base)
    return np.asarray(array)


def check_ts_metadata(path: Path, *, shape: tuple[int, ...], chunks: tuple[int, ...],
                      dtype: np.dtype, fill: Any, order: str, separator: str = ".",
                      compressor: Any = "any", inner: str | None = None) -> None:
    """tensorstore resolves the metadata that was asked for."""
    field = dtype.names[0] if dtype.fields is not None else None
    store = ts_open(path, inner, field)
    meta = ts_metadata(store)
    assert tuple(meta["shape"]) == shape
    assert tuple(meta["chunks"]) == chunks
    assert np.dtype(_json_dtype_to_numpy(meta["dtype"])) == dtype
    assert meta["order"] == order
    assert meta.get("dimension_separator", ".") == separator
    if compressor != "any":
        assert same_codec(meta["compressor"], compressor), (meta["compressor"], compressor)
    if fill is None:
        assert meta["fill_value"] is None
    elif dtype.fields is not None or dtype.kind in "SV":
        raw = np.array(fill, dtype=dtype).tobytes()
        assert base64.b64decode(meta["fill_value"]) == raw
    else:
        assert_same_scalar(np.asarray(store.fill_value)[()], fill, dtype.newbyteorder("="))


def _json_dtype_to_numpy(value: Any) -> Any:
    if isinstance(value, str):
        return value
    return [(f[0], _json_dtype_to_numpy(f[1]), *([tuple(f[2])] if len(f) == 3 else []))
            for f in value]


def check_zarr_metadata(z: Any, *, shape: tuple[int, ...], chunks: tuple[int, ...],
                        dtype: np.dtype, fill: Any, order: str, attributes: dict[str, Any],
                        separator: str = ".", compressor: Any = "any",
                        filters: Any = "any") -> None:
    """zarr-python sees the metadata that was asked for."""
    assert z.shape == shape
    assert z.chunks == chunks
    if dtype.kind != "O":
        assert np.dtype(z.dtype) == dtype
    assert z.order == order
    assert z.metadata.dimension_separator == separator
    assert z.attrs.asdict() == attributes
    if fill is None and dtype.kind != "O":
        assert z.metadata.fill_value is None
    else:
        assert_same_scalar(z.fill_value, fill, dtype)
    if compressor != "any":
        assert same_codec(z.metadata.compressor, compressor), z.metadata.compressor
    if filters != "any":
        got = list(z.metadata.filters or [])
        want = list(filters or [])
        assert len(got) == len(want)
        assert all(same_codec(g, w) for g, w in zip(got, want, strict=True)), got


def check_zk_metadata(a: zk.Array, *, shape: tuple[int, ...], chunks: tuple[int, ...],
                      dtype: np.dtype, fill: Any, order: str, attributes: dict[str, Any],
                      separator: str = ".", compressor: Any = "any",
                      filters: Any = "any") -> None:
    """zarrkit sees the metadata the peer was asked to write."""
    assert a.shape == shape
    assert a.chunks == chunks
    assert a.dtype == dtype
    assert a.order == order
    assert a.metadata.dimension_separator == separator
    assert a.attrs.asdict() == attributes
    assert_same_scalar(a.fill_value, fill, dtype)
    if compressor != "any":
        assert same_codec(a.compressor, compressor), a.compressor
    if filters != "any":
        got = list(a.filters)
        want = list(filters or [])
        assert len(got) == len(want)
        assert all(same_codec(g, w) for g, w in zip(got, want, strict=True)), got


# =============================================================================================
# 1. zarrkit writes -> zarr-python and tensorstore read
# =============================================================================================
def _zk_write_region(path: Path, dtype: np.dtype, fill: Any, order: str, **kwargs: Any
                     ) -> np.ndarray:
    data = make_data(dtype, SHAPE, seed=len(str(dtype)))
    a = zk.create_array(str(path), shape=SHAPE, dtype=dtype, chunks=CHUNKS,
                        fill_value=_fill_for_zarrkit(dtype, fill), order=order, **kwargs)
    a[REGION] = data[REGION]
    a[CORNER] = data[CORNER]
    return _region_expected(dtype, fill, data)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("dtype_id", ZARR_DTYPES)
def test_zarrkit_dtype_read_by_zarr(tmp_path: Path, dtype_id: str, order: str) -> None:
    dtype, fill = DTYPES[dtype_id]
    attributes = {"dtype": dtype_id}
    expected = _zk_write_region(tmp_path, dtype, fill, order, attributes=attributes)
    z = zarr_open(tmp_path)
    check_zarr_metadata(z, shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                        fill=_fill_for_zarrkit(dtype, fill), order=order, attributes=attributes)
    assert_same(z[...], expected)
    assert_same(z[2:7, 1:5], expected[2:7, 1:5])


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("dtype_id", TS_DTYPES)
def test_zarrkit_dtype_read_by_tensorstore(tmp_path: Path, dtype_id: str, order: str) -> None:
    dtype, fill = DTYPES[dtype_id]
    expected = _zk_write_region(tmp_path, dtype, fill, order)
    check_ts_metadata(tmp_path, shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                      fill=_fill_for_zarrkit(dtype, fill), order=order)
    assert_same(ts_read_as(tmp_path, dtype), expected, exact_dtype=False)


def test_zarrkit_nested_struct_matches_spec_bytes(tmp_path: Path) -> None:
    # No peer reads nested structured dtypes: check the .zarray and raw chunks against the spec.
    dtype, fill = DTYPES["struct-nested"]
    data = make_data(dtype, (5,), seed=3)
    a = zk.create_array(str(tmp_path), shape=(5,), chunks=(2,), dtype=dtype, compressors=None,
                        fill_value=_fill_for_zarrkit(dtype, fill))
    a[:4] = data[:4]
    meta = json.loads((tmp_path / ".zarray").read_text())
    assert meta["dtype"] == [["id", "<i2"], ["pos", [["lat", "<f8"], ["lon", ">f4"]]]]
    assert base64.b64decode(meta["fill_value"]) == np.array(fill, dtype=dtype).tobytes()
    assert chunk_files(tmp_path) == {"0", "1"}
    assert (tmp_path / "0").read_bytes() == data[:2].tobytes()
    assert (tmp_path / "1").read_bytes() == data[2:4].tobytes()
    expected = np.empty(5, dtype=dtype)
    expected[:4] = data[:4]
    expected[4] = np.array(fill, dtype=dtype)
    assert_same(zk.open_array(str(tmp_path), mode="r")[...], expected)


@pytest.mark.parametrize("case", FILL_CASES, ids=[c[0] for c in FILL_CASES])
def test_zarrkit_fill_value_read_by_zarr(tmp_path: Path, case: tuple[str, str, Any]) -> None:
    _, dtype_str, fill = case
    dtype = np.dtype(dtype_str)
    expected = _zk_write_region(tmp_path, dtype, fill, "C")
    z = zarr_open(tmp_path)
    check_zarr_metadata(z, shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                        fill=_fill_for_zarrkit(dtype, fill), order="C", attributes={})
    assert_same(z[...], expected)


@pytest.mark.parametrize("case", TS_FILL_CASES, ids=[c[0] for c in TS_FILL_CASES])
def test_zarrkit_fill_value_read_by_tensorstore(tmp_path: Path,
                                                case: tuple[str, str, Any]) -> None:
    _, dtype_str, fill = case
    dtype = np.dtype(dtype_str)
    expected = _zk_write_region(tmp_path, dtype, fill, "F")
    check_ts_metadata(tmp_path, shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                      fill=_fill_for_zarrkit(dtype, fill), order="F")
    assert_same(ts_read_as(tmp_path, dtype), expected, exact_dtype=False)


@pytest.mark.parametrize(
    ("fill", "json_value"),
    [(np.nan, "NaN"), (np.inf, "Infinity"), (-np.inf, "-Infinity"), (None, None),
     (complex(np.nan, -np.inf), ["NaN", "-Infinity"]), (True, True), (b"abc", "YWJj")],
    ids=["nan", "inf", "-inf", "null", "complex", "bool", "bytes"],
)
def test_zarrkit_fill_value_json_encoding(tmp_path: Path, fill: Any, json_value: Any) -> None:
    # The v2 spec's JSON encodings, which every peer parses.
    dtype = {bool: "|b1", complex: "<c16", bytes: "|S3"}.get(type(fill), "<f8")
    zk.create_array(str(tmp_path), shape=(2,), chunks=(2,), dtype=dtype, fill_value=fill)
    assert json.loads((tmp_path / ".zarray").read_text())["fill_value"] == json_value


@pytest.mark.parametrize("dtype_str", ["<i4", "<f8", "|b1", "<c8", "|S7", "<U5", "|V4", "STRUCT"])
def test_zarrkit_default_fill_matches_zarr_python(tmp_path: Path, dtype_str: str) -> None:
    # Both libraries default to "zero" of the type: 0, False, empty strings, zero bytes.
    # (Datetimes are excluded: zarr-python 3.1 chose NaT as its default there.)
    dtype = STRUCT if dtype_str == "STRUCT" else np.dtype(dtype_str)
    zk.create_array(str(tmp_path / "zk"), shape=(3,), chunks=(2,), dtype=dtype)
    ours = zarr_open(tmp_path / "zk")
    theirs = zarr.create_array(store=str(tmp_path / "zarr"), shape=(3,), chunks=(2,),
                               dtype=dtype, zarr_format=2)
    assert_same_scalar(ours.fill_value, theirs.fill_value, dtype)
    assert_same(ours[...], theirs[...])


@pytest.mark.parametrize("separator", SEPARATORS)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("compressor_id", list(COMPRESSORS))
def test_zarrkit_compressor_read_by_zarr(tmp_path: Path, compressor_id: str, order: str,
                                         separator: str) -> None:
    compressor = COMPRESSORS[compressor_id]
    data = make_data("<f8", SHAPE, seed=5)
    a = zk.create_array(str(tmp_path), shape=SHAPE, chunks=CHUNKS, dtype="<f8", order=order,
                        compressor=compressor, dimension_separator=separator, fill_value=-1.0)
    a[...] = data
    assert chunk_files(tmp_path) == _chunk_keys((3, 3), separator)
    z = zarr_open(tmp_path)
    check_zarr_metadata(z, shape=SHAPE, chunks=CHUNKS, dtype=np.dtype("<f8"), fill=-1.0,
                        order=order, attributes={}, separator=separator,
                        compressor=compressor, filters=None)
    assert_same(z[...], data)


@pytest.mark.parametrize("separator", SEPARATORS)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("compressor_id", TS_COMPRESSORS)
def test_zarrkit_compressor_read_by_tensorstore(tmp_path: Path, compressor_id: str, order: str,
                                                separator: str) -> None:
    compressor = COMPRESSORS[compressor_id]
    data = make_data("<u2", SHAPE, seed=6)
    zk.create_array(str(tmp_path), shape=SHAPE, chunks=CHUNKS, dtype="<u2", order=order,
                    compressors=[compressor] if compressor is not None else None,
                    dimension_separator=separator, data=data)
    check_ts_metadata(tmp_path, shape=SHAPE, chunks=CHUNKS, dtype=np.dtype("<u2"), fill=0,
                      order=order, separator=separator, compressor=compressor)
    assert_same(ts_read(tmp_path), data)


def _filter_cases() -> list[tuple[str, np.dtype, list[Any], np.ndarray]]:
    rng = np.random.default_rng(11)
    ints = rng.integers(-1000, 1000, SHAPE).astype("<i4")
    small = rng.integers(-100, 100, SHAPE).astype("<i8")
    floats = rng.uniform(1000.0, 7000.0, SHAPE)
    f4 = rng.standard_normal(SHAPE).astype("<f4") * 1e6
    bools = rng.integers(0, 2, SHAPE).astype(bool)
    return [
        ("delta", np.dtype("<i4"), [numcodecs.Delta(dtype="<i4")], ints),
        ("delta-astype", np.dtype("<i8"), [numcodecs.Delta(dtype="<i8", astype="<i2")], small),
        ("fixedscaleoffset", np.dtype("<f8"),
         [numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<u2")], floats),
        ("quantize", np.dtype("<f8"), [numcodecs.Quantize(digits=3, dtype="<f8")], floats),
        ("bitround", np.dtype("<f4"), [numcodecs.BitRound(keepbits=7)], f4),
        ("astype", np.dtype("<f8"), [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")],
         floats),
        ("packbits", np.dtype("|b1"), [numcodecs.PackBits()], bools),
        ("shuffle", np.dtype("<i4"), [numcodecs.Shuffle(elementsize=4)], ints),
        ("delta-then-shuffle", np.dtype("<i4"),
         [{"id": "delta", "dtype": "<i4"}, {"id": "shuffle", "elementsize": 4}], ints),
    ]
    # ("categorize", object ...) is left out: zarr-python 3.1 cannot read an object array
    # whose only object codec is categorize.


FILTER_CASES = _filter_cases()
# numcodecs' BitRound.encode returns ``a.copy()`` (C order) for an F-ordered chunk, so with
# order="F" both zarr-python and zarrkit store C-ordered bytes that neither reads back as
# written (a numcodecs limitation, identical in both: see test_filters_same_chunk_bytes).
FILTER_ORDER_CASES = [
    pytest.param(case, order, id=f"{case[0]}-{order}")
    for case in FILTER_CASES for order in ORDERS
    if not (case[0] == "bitround" and order == "F")
]


def _through_filters(filters: list[Any], dtype: np.dtype, data: np.ndarray) -> np.ndarray:
    """What the (possibly lossy) filters make of ``data``: numcodecs itself is the oracle."""
    out = np.asarray(data, dtype=dtype)
    codecs = [numcodecs.get_codec(dict(f)) if isinstance(f, dict) else f for f in filters]
    encoded: Any = out
    for codec in codecs:
        encoded = codec.encode(encoded)
    for codec in reversed(codecs):
        encoded = codec.decode(encoded)
    return np.frombuffer(np.ascontiguousarray(encoded).tobytes(), dtype=dtype).reshape(out.shape)


@pytest.mark.parametrize(("case", "order"), FILTER_ORDER_CASES)
def test_zarrkit_filters_read_by_zarr(tmp_path: Path, case: Any, order: str) -> None:
    _, dtype, filters, data = case
    # Whole-array oracle is valid: every filter here is element-wise or exactly invertible.
    expected = _through_filters(filters, dtype, data)
    a = zk.create_array(str(tmp_path), shape=SHAPE, chunks=CHUNKS, dtype=dtype, order=order,
                        filters=filters, compressors=[numcodecs.Zlib(level=1)])
    a[...] = data
    z = zarr_open(tmp_path)
    check_zarr_metadata(z, shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                        fill=np.zeros((), dtype)[()], order=order, attributes={},
                        compressor=numcodecs.Zlib(level=1), filters=filters)
    assert_same(z[...], expected)
    assert_same(a[...], expected)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("case", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filters_same_chunk_bytes(tmp_path: Path, case: Any, order: str) -> None:
    # With the same deterministic codecs, zarrkit and zarr-python store identical chunks.
    _, dtype, filters, data = case
    codecs = [numcodecs.get_codec(dict(f)) if isinstance(f, dict) else f for f in filters]
    zk.create_array(str(tmp_path / "zk"), shape=SHAPE, chunks=CHUNKS, dtype=dtype, order=order,
                    filters=filters, compressors=[numcodecs.Zlib(level=1)], data=data)
    z = zarr.create_array(store=str(tmp_path / "zarr"), shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                          order=order, filters=codecs, compressors=numcodecs.Zlib(level=1),
                          zarr_format=2)
    z[...] = data
    names = chunk_files(tmp_path / "zk")
    # Both skip chunks equal to the fill value (some all-False boolean chunks here).
    assert names == chunk_files(tmp_path / "zarr")
    assert len(names) >= 8
    for name in names:
        assert (tmp_path / "zk" / name).read_bytes() == (tmp_path / "zarr" / name).read_bytes()


OBJECT_CASES = [
    ("vlen-utf8-default", False, None),
    ("vlen-utf8-fill", False, "fill ✓"),
    ("vlen-bytes-default", True, None),
    ("vlen-bytes-fill", True, b"\x00fill\xff"),
]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("case", OBJECT_CASES, ids=[c[0] for c in OBJECT_CASES])
def test_zarrkit_object_read_by_zarr(tmp_path: Path, case: Any, order: str) -> None:
    # Object arrays: zarr-python only (tensorstore has no object dtype).
    _, as_bytes, fill = case
    data = make_text(SHAPE, seed=4, as_bytes=as_bytes)
    kwargs = {} if fill is None else {"fill_value": fill}
    a = zk.create_array(str(tmp_path), shape=SHAPE, chunks=CHUNKS,
                        dtype=bytes if as_bytes else str, order=order, **kwargs)
    a[REGION] = data[REGION]
    effective_fill = fill if fill is not None else (b"" if as_bytes else "")
    expected = expected_with_fill(SHAPE, object, effective_fill, REGION, data[REGION])
    meta = json.loads((tmp_path / ".zarray").read_text())
    assert meta["dtype"] == "|O"
    assert meta["filters"] == [{"id": "vlen-bytes" if as_bytes else "vlen-utf8"}]
    z = zarr_open(tmp_path)
    assert z.shape == SHAPE and z.chunks == CHUNKS and z.order == order
    assert_same_scalar(z.fill_value, effective_fill, np.dtype(object))
    assert_same(np.asarray(z[...], dtype=object), expected)
    # And zarrkit reads its own missing chunks the same way.
    assert_same(zk.open_array(str(tmp_path), mode="r")[...], expected)


@pytest.mark.parametrize(
    ("shape", "chunks"),
    [((), ()), ((0,), (2,)), ((3, 0), (2, 2)), ((0, 0, 0), (1, 1, 1)), ((3,), (10,)),
     ((10, 7), (4, 3)), ((1, 1, 1), (1, 1, 1)), ((5, 4, 3), (2, 3, 2))],
    ids=["0d", "empty-1d", "empty-2d", "empty-3d", "chunk-bigger", "edge-2d", "ones", "edge-3d"],
)
def test_zarrkit_shapes_read_by_peers(tmp_path: Path, shape: tuple[int, ...],
                                      chunks: tuple[int, ...]) -> None:
    data = make_data("<i2", shape, seed=8)
    zk.create_array(str(tmp_path), shape=shape, chunks=chunks, dtype="<i2", compressors=None,
                    fill_value=-5, data=data)
    grid = tuple(math.ceil(s / c) for s, c in zip(shape, chunks, strict=True))
    stored = chunk_files(tmp_path)
    assert stored == (_chunk_keys(grid, ".") if math.prod(shape) or not shape else set())
    # Uncompressed chunks are always whole chunks, edge chunks included (the spec's rule).
    for key in stored:
        assert (tmp_path / key).stat().st_size == math.prod(chunks) * 2
    z = zarr_open(tmp_path)
    assert z.shape == shape and z.chunks == chunks
    assert_same(z[...], data)
    assert_same(ts_read(tmp_path), data)


def test_zarrkit_missing_chunks_read_by_peers(tmp_path: Path) -> None:
    a = zk.create_array(str(tmp_path), shape=(6, 6), chunks=(2, 2), dtype="<f4",
                        fill_value=np.nan, dimension_separator="/")
    a[0, 0] = 1.0          # partial chunk 0/0
    a[2:4, 4:6] = 2.0      # whole chunk 1/2
    a[5, 5] = 3.0          # partial chunk 2/2
    assert chunk_files(tmp_path) == {"0/0", "1/2", "2/2"}
    expected = np.full((6, 6), np.nan, dtype="<f4")
    expected[0, 0], expected[2:4, 4:6], expected[5, 5] = 1.0, 2.0, 3.0
    assert_same(zarr_open(tmp_path)[...], expected)
    assert_same(ts_read(tmp_path), expected)


@pytest.mark.parametrize(
    ("dtype", "fill", "values"),
    [("<i4", 7, [7, 7, 1, 2, 7, 7, 7]),
     ("<f8", np.nan, [np.nan, np.nan, 1.0, np.nan, np.nan, np.nan, np.nan]),
     # A fill value is a bit pattern: -0.0 chunks are empty for a -0.0 fill (and data for
     # a 0.0 one: tests/test_fill_rule.py).
     ("<f8", -0.0, [-0.0, -0.0, 3.0, -0.0, -0.0, -0.0, -0.0]),
     ("|b1", True, [True, True, False, True, True, True, True]),
     ("|S3", b"ab", [b"ab", b"ab", b"x", b"ab", b"ab", b"ab", b"ab"]),
     ("<M8[s]", np.datetime64("NaT", "s"), ["NaT", "NaT", "2000-01-01", "NaT", "NaT", "NaT",
                                             "NaT"])],
    ids=["int", "nan", "zero-and-negative-zero", "bool", "bytes", "nat"],
)
def test_zarrkit_write_empty_chunks_default(tmp_path: Path, dtype: str, fill: Any,
                                            values: list[Any]) -> None:
    # By default a chunk equal to the fill value everywhere is not stored (and an existing
    # one is deleted); zarr-python reads the fill value there.
    data = np.array(values, dtype=dtype)
    a = zk.create_array(str(tmp_path), shape=(7,), chunks=(2,), dtype=dtype, fill_value=fill)
    a[...] = data
    assert chunk_files(tmp_path) == {"1"}
    assert_same(zarr_open(tmp_path)[...], data)
    a[2:4] = np.array(fill, dtype=dtype)
    assert chunk_files(tmp_path) == set()
    assert_same(zarr_open(tmp_path)[...], np.full(7, fill, dtype=dtype))


def test_zarrkit_write_empty_chunks_true(tmp_path: Path) -> None:
    a = zk.create_array(str(tmp_path), shape=(5,), chunks=(2,), dtype="<i4", fill_value=3,
                        write_empty_chunks=True)
    a[...] = 3
    assert chunk_files(tmp_path) == {"0", "1", "2"}
    assert_same(zarr_open(tmp_path)[...], np.full(5, 3, dtype="<i4"))
    assert_same(ts_read(tmp_path), np.full(5, 3, dtype="<i4"))


def _build_zarrkit_hierarchy(path: Path) -> dict[str, np.ndarray]:
    root = zk.open_group(str(path), mode="w")
    root.attrs.update(ATTRIBUTES)
    g1 = root.create_group("g1", attributes={"level": 1, "ü": "ÿ"})
    g2 = g1.create_group("g2", attributes={"list": [[1, 2], [3]]})
    root.create_group("empty")
    arrays = {
        "g1/g2/arr": make_data("<f4", (6, 4), seed=1),
        "g1/ints": make_data(">i8", (9,), seed=2),
        "top": make_data("|S3", (4, 2), seed=3),
    }
    g2.create_array("arr", shape=(6, 4), chunks=(4, 3), dtype="<f4", fill_value=np.nan,
                    attributes={"units": "m/s", "scale": 2**64}, dimension_separator="/",
                    data=arrays["g1/g2/arr"])
    g1.create_array("ints", shape=(9,), chunks=(4,), dtype=">i8", order="F",
                    compressor=numcodecs.Blosc(cname="zstd"), data=arrays["g1/ints"])
    root.create_array("top", shape=(4, 2), chunks=(3, 2), dtype="|S3", fill_value=b"n/a",
                      data=arrays["top"])
    return arrays


EXPECTED_TREE = {"g1": "group", "g1/g2": "group", "g1/g2/arr": "array", "g1/ints": "array",
                 "empty": "group", "top": "array"}
EXPECTED_NODE_ATTRS = {"": ATTRIBUTES, "g1": {"level": 1, "ü": "ÿ"},
                       "g1/g2": {"list": [[1, 2], [3]]}, "empty": {},
                       "g1/g2/arr": {"units": "m/s", "scale": 2**64}, "g1/ints": {}, "top": {}}


def _check_zarr_hierarchy(root: Any, arrays: dict[str, np.ndarray]) -> None:
    members = dict(root.members(max_depth=None))
    kinds = {name: "array" if isinstance(node, zarr.Array) else "group"
             for name, node in members.items()}
    assert kinds == EXPECTED_TREE
    assert root.attrs.asdict() == ATTRIBUTES
    for name, expected_attrs in EXPECTED_NODE_ATTRS.items():
        if name:
            assert root[name].attrs.asdict() == expected_attrs, name
    for name, data in arrays.items():
        assert_same(root[name][...], data)
    assert root["g1/g2/arr"].metadata.dimension_separator == "/"
    assert root["g1/ints"].order == "F"
    assert root["top"].fill_value == b"n/a"


def test_zarrkit_hierarchy_read_by_zarr(tmp_path: Path) -> None:
    arrays = _build_zarrkit_hierarchy(tmp_path)
    _check_zarr_hierarchy(zarr.open_group(store=str(tmp_path), mode="r", zarr_format=2), arrays)


def test_zarrkit_hierarchy_read_by_tensorstore(tmp_path: Path) -> None:
    arrays = _build_zarrkit_hierarchy(tmp_path)
    for name in ("g1/g2/arr", "g1/ints"):
        assert_same(ts_read(tmp_path, name), arrays[name], exact_dtype=False)
    # The same array addressed through the zarr driver's "path" inside a root kvstore.
    spec = {"driver": "zarr", "path": "g1/g2/arr",
            "kvstore": {"driver": "file", "path": str(tmp_path) + "/"}}
    assert_same(np.asarray(ts.open(spec, read=True).result().read().result()),
                arrays["g1/g2/arr"])
    assert_same(ts_read_as(tmp_path, np.dtype("|S3"), "top"), arrays["top"])


def test_zarrkit_consolidated_read_by_zarr(tmp_path: Path) -> None:
    arrays = _build_zarrkit_hierarchy(tmp_path)
    zk.consolidate_metadata(str(tmp_path))
    document = json.loads((tmp_path / ".zmetadata").read_text())
    assert document["zarr_consolidated_format"] == 1
    root = zarr.open_consolidated(str(tmp_path), zarr_format=2)
    consolidated = root.metadata.consolidated_metadata
    assert consolidated is not None
    assert set(consolidated.flattened_metadata) == set(EXPECTED_TREE)
    _check_zarr_hierarchy(root, arrays)


def test_zarrkit_consolidated_is_used_by_zarr(tmp_path: Path) -> None:
    # zarr-python's consolidated view answers from .zmetadata alone: attributes changed in
    # .zattrs after consolidating stay invisible to it, but not to a plain open.
    _build_zarrkit_hierarchy(tmp_path)
    zk.consolidate_metadata(str(tmp_path))
    (tmp_path / "g1" / ".zattrs").write_text(json.dumps({"level": 99}))
    root = zarr.open_consolidated(str(tmp_path), zarr_format=2)
    assert root["g1"].attrs.asdict() == {"level": 1, "ü": "ÿ"}
    plain = zarr.open_group(store=str(tmp_path), mode="r", zarr_format=2, use_consolidated=False)
    assert plain["g1"].attrs.asdict() == {"level": 99}


# =============================================================================================
# 2. zarr-python writes -> zarrkit reads
# =============================================================================================
def _zarr_write_region(path: Path, dtype: np.dtype, fill: Any, order: str,
                       **kwargs: Any) -> np.ndarray:
    data = make_data(dtype, SHAPE, seed=len(str(dtype)) + 1)
    z = zarr.create_array(store=str(path), shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                          fill_value=_fill_for_zarrkit(dtype, fill), order=order,
                          zarr_format=2, **kwargs)
    z[REGION] = data[REGION]
    z[CORNER] = data[CORNER]
    return _region_expected(dtype, fill, data)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("dtype_id", ZARR_DTYPES)
def test_zarr_dtype_read_by_zarrkit(tmp_path: Path, dtype_id: str, order: str) -> None:
    dtype, fill = DTYPES[dtype_id]
    attributes = {"dtype": dtype_id, "ü": [1, {"x": None}]}
    expected = _zarr_write_region(tmp_path, dtype, fill, order, attributes=attributes)
    a = zk.open_array(str(tmp_path), mode="r")
    check_zk_metadata(a, shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                      fill=_fill_for_zarrkit(dtype, fill), order=order, attributes=attributes)
    assert_same(a[...], expected)
    assert_same(a[2:7, 1:5], expected[2:7, 1:5])


@pytest.mark.parametrize("case", ZARR_WRITE_FILL_CASES, ids=[c[0] for c in ZARR_WRITE_FILL_CASES])
def test_zarr_fill_value_read_by_zarrkit(tmp_path: Path, case: tuple[str, str, Any]) -> None:
    _, dtype_str, fill = case
    dtype = np.dtype(dtype_str)
    expected = _zarr_write_region(tmp_path, dtype, fill, "F")
    a = zk.open_array(str(tmp_path), mode="r")
    check_zk_metadata(a, shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                      fill=_fill_for_zarrkit(dtype, fill), order="F", attributes={})
    assert_same(a[...], expected)


@pytest.mark.parametrize("separator", SEPARATORS)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("compressor_id", list(COMPRESSORS))
def test_zarr_compressor_read_by_zarrkit(tmp_path: Path, compressor_id: str, order: str,
                                         separator: str) -> None:
    compressor = COMPRESSORS[compressor_id]
    if isinstance(compressor, dict):
        compressor = numcodecs.get_codec(dict(compressor))
    data = make_data("<i8", SHAPE, seed=9)
    z = zarr.create_array(store=str(tmp_path), shape=SHAPE, chunks=CHUNKS, dtype="<i8",
                          order=order, compressors=compressor, filters=None, zarr_format=2,
                          chunk_key_encoding={"name": "v2", "separator": separator},
                          fill_value=-1)
    z[...] = data
    assert chunk_files(tmp_path) == _chunk_keys((3, 3), separator)
    a = zk.open_array(str(tmp_path), mode="r")
    check_zk_metadata(a, shape=SHAPE, chunks=CHUNKS, dtype=np.dtype("<i8"), fill=-1,
                      order=order, attributes={}, separator=separator, compressor=compressor,
                      filters=None)
    assert_same(a[...], data)


@pytest.mark.parametrize(("case", "order"), FILTER_ORDER_CASES)
def test_zarr_filters_read_by_zarrkit(tmp_path: Path, case: Any, order: str) -> None:
    _, dtype, filters, data = case
    codecs = [numcodecs.get_codec(dict(f)) if isinstance(f, dict) else f for f in filters]
    expected = _through_filters(filters, dtype, data)
    z = zarr.create_array(store=str(tmp_path), shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                          order=order, filters=codecs, compressors=numcodecs.BZ2(level=1),
                          zarr_format=2)
    z[...] = data
    a = zk.open_array(str(tmp_path), mode="r")
    check_zk_metadata(a, shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                      fill=np.zeros((), dtype)[()], order=order, attributes={},
                      compressor=numcodecs.BZ2(level=1), filters=codecs)
    assert_same(a[...], expected)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("case", OBJECT_CASES, ids=[c[0] for c in OBJECT_CASES])
def test_zarr_object_read_by_zarrkit(tmp_path: Path, case: Any, order: str) -> None:
    _, as_bytes, fill = case
    data = make_text(SHAPE, seed=5, as_bytes=as_bytes)
    dtype = zarr.dtype.VariableLengthBytes() if as_bytes else zarr.dtype.VariableLengthUTF8()
    kwargs = {} if fill is None else {"fill_value": fill}
    z = zarr.create_array(store=str(tmp_path), shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                          order=order, zarr_format=2, **kwargs)
    z[REGION] = data[REGION]
    effective_fill = fill if fill is not None else (b"" if as_bytes else "")
    expected = expected_with_fill(SHAPE, object, effective_fill, REGION, data[REGION])
    a = zk.open_array(str(tmp_path), mode="r")
    assert a.shape == SHAPE and a.chunks == CHUNKS and a.order == order
    # As zarr-python: StringDType for vlen-utf8 (numpy 2), objects for vlen-bytes.
    assert a.dtype == z.dtype
    assert a.dtype == (np.dtype(object) if as_bytes or not hasattr(np.dtypes, "StringDType")
                       else np.dtypes.StringDType())
    assert_same_scalar(a.fill_value, effective_fill, np.dtype(object))
    assert_same(a[...], expected)


@pytest.mark.parametrize(
    ("shape", "chunks"),
    [((), ()), ((0,), (2,)), ((3, 0), (2, 2)), ((3,), (10,)), ((10, 7), (4, 3)),
     ((5, 4, 3), (2, 3, 2))],
    ids=["0d", "empty-1d", "empty-2d", "chunk-bigger", "edge-2d", "edge-3d"],
)
def test_zarr_shapes_read_by_zarrkit(tmp_path: Path, shape: tuple[int, ...],
                                     chunks: tuple[int, ...]) -> None:
    data = make_data("<u4", shape, seed=10)
    z = zarr.create_array(store=str(tmp_path), shape=shape, chunks=chunks, dtype="<u4",
                          fill_value=9, compressors=None, zarr_format=2)
    z[...] = data
    a = zk.open_array(str(tmp_path), mode="r")
    assert a.shape == shape and a.chunks == chunks
    assert_same(a[...], data)


def test_zarr_missing_chunks_read_by_zarrkit(tmp_path: Path) -> None:
    z = zarr.create_array(store=str(tmp_path), shape=(6, 6), chunks=(2, 2), dtype="<c8",
                          fill_value=complex(np.nan, 2.0), zarr_format=2,
                          chunk_key_encoding={"name": "v2", "separator": "/"})
    z[0, 0] = 1 + 1j
    z[2:4, 4:6] = 2j
    assert chunk_files(tmp_path) == {"0/0", "1/2"}
    expected = np.full((6, 6), complex(np.nan, 2.0), dtype="<c8")
    expected[0, 0], expected[2:4, 4:6] = 1 + 1j, 2j
    assert_same(zk.open_array(str(tmp_path), mode="r")[...], expected)


@pytest.mark.parametrize("write_empty_chunks", [False, True])
def test_zarr_write_empty_chunks_read_by_zarrkit(tmp_path: Path,
                                                 write_empty_chunks: bool) -> None:
    z = zarr.create_array(store=str(tmp_path), shape=(7,), chunks=(2,), dtype="<f8",
                          fill_value=np.nan, zarr_format=2,
                          config={"write_empty_chunks": write_empty_chunks})
    data = np.array([np.nan, np.nan, 1.0, np.nan, np.nan, np.nan, np.nan])
    z[...] = data
    assert chunk_files(tmp_path) == ({"0", "1", "2", "3"} if write_empty_chunks else {"1"})
    assert_same(zk.open_array(str(tmp_path), mode="r")[...], data)


def _build_zarr_hierarchy(path: Path) -> dict[str, np.ndarray]:
    root = zarr.open_group(store=str(path), mode="w", zarr_format=2, attributes=ATTRIBUTES)
    g1 = root.create_group("g1", attributes={"level": 1, "ü": "ÿ"})
    g2 = g1.create_group("g2", attributes={"list": [[1, 2], [3]]})
    root.create_group("empty")
    arrays = {
        "g1/g2/arr": make_data("<f4", (6, 4), seed=1),
        "g1/ints": make_data(">i8", (9,), seed=2),
        "top": make_data("|S3", (4, 2), seed=3),
    }
    arr = g2.create_array("arr", shape=(6, 4), chunks=(4, 3), dtype="<f4", fill_value=np.nan,
                          attributes={"units": "m/s", "scale": 2**64},
                          chunk_key_encoding={"name": "v2", "separator": "/"})
    arr[...] = arrays["g1/g2/arr"]
    ints = g1.create_array("ints", shape=(9,), chunks=(4,), dtype=">i8", order="F",
                           compressors=numcodecs.Blosc(cname="zstd"))
    ints[...] = arrays["g1/ints"]
    top = root.create_array("top", shape=(4, 2), chunks=(3, 2), dtype="|S3", fill_value=b"n/a")
    top[...] = arrays["top"]
    return arrays


def _check_zk_hierarchy(root: zk.Group, arrays: dict[str, np.ndarray]) -> None:
    kinds = {name: "array" if isinstance(node, zk.Array) else "group"
             for name, node in root.members(max_depth=None)}
    assert kinds == EXPECTED_TREE
    assert root.attrs.asdict() == ATTRIBUTES
    for name, expected_attrs in EXPECTED_NODE_ATTRS.items():
        if name:
            assert root[name].attrs.asdict() == expected_attrs, name
    assert sorted(root.group_keys()) == ["empty", "g1"]
    assert root.array_keys() == ["top"]
    for name, data in arrays.items():
        assert_same(root[name][...], data)
    arr = root["g1/g2/arr"]
    assert isinstance(arr, zk.Array)
    assert arr.metadata.dimension_separator == "/" and np.isnan(arr.fill_value)
    assert root["g1/ints"].order == "F"
    assert root["top"].fill_value == b"n/a"


def test_zarr_hierarchy_read_by_zarrkit(tmp_path: Path) -> None:
    arrays = _build_zarr_hierarchy(tmp_path)
    _check_zk_hierarchy(zk.open_group(str(tmp_path), mode="r"), arrays)
    # An array inside the hierarchy opened directly by path.
    a = zk.open_array(str(tmp_path), mode="r", path="g1/g2/arr")
    assert_same(a[...], arrays["g1/g2/arr"])


def test_zarr_consolidated_read_by_zarrkit(tmp_path: Path) -> None:
    arrays = _build_zarr_hierarchy(tmp_path)
    zarr.consolidate_metadata(str(tmp_path), zarr_format=2)
    root = zk.open_group(str(tmp_path), mode="r", consolidated=True)
    assert root.consolidated
    _check_zk_hierarchy(root, arrays)


def test_zarr_consolidated_is_used_by_zarrkit(tmp_path: Path) -> None:
    # consolidated=True reads metadata from zarr-python's .zmetadata, not the node documents.
    _build_zarr_hierarchy(tmp_path)
    zarr.consolidate_metadata(str(tmp_path), zarr_format=2)
    (tmp_path / "g1" / ".zattrs").write_text(json.dumps({"level": 99}))
    root = zk.open_group(str(tmp_path), mode="r", consolidated=True)
    assert root["g1"].attrs.asdict() == {"level": 1, "ü": "ÿ"}
    assert zk.open_group(str(tmp_path), mode="r", consolidated=False)["g1"].attrs.asdict() == {
        "level": 99}


# =============================================================================================
# 3. tensorstore writes -> zarrkit reads
# =============================================================================================
def _dtype_json(dtype: np.dtype) -> Any:
    if dtype.fields is None:
        return dtype.str
    out = []
    for name in dtype.names:
        field = dtype.fields[name][0]
        if field.subdtype is not None:
            out.append([name, _dtype_json(field.subdtype[0]), list(field.subdtype[1])])
        else:
            out.append([name, _dtype_json(field)])
    return out


def _fill_json(dtype: np.dtype, fill: Any) -> Any:
    if fill is None:
        return None
    if dtype.fields is not None or dtype.kind in "SV":
        return base64.b64encode(np.array(fill, dtype=dtype).tobytes()).decode()
    value = np.array(fill, dtype=dtype)[()]

    def number(x: float) -> Any:
        if np.isnan(x):
            return "NaN"
        if np.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return float(x)

    if dtype.kind == "c":
        return [number(value.real), number(value.imag)]
    if dtype.kind == "f":
        return number(value)
    return value.item()


def _ts_writable(array: np.ndarray) -> np.ndarray:
    """tensorstore writes |S and |V as arrays of S1/V1 with a trailing byte dimension."""
    if array.dtype.kind in "SV":
        element = "S1" if array.dtype.kind == "S" else "V1"
        raw = np.frombuffer(np.ascontiguousarray(array).tobytes(), dtype=element)
        return raw.reshape(array.shape + (array.dtype.itemsize,))
    return array


def _ts_create(path: Path, dtype: np.dtype, fill: Any, *, order: str = "C",
               compressor: Any = None, separator: str = ".", shape: tuple[int, ...] = SHAPE,
               chunks: tuple[int, ...] = CHUNKS) -> list[Any]:
    """Create with tensorstore; return one writable store per field (or the array)."""
    metadata = {"dtype": _dtype_json(dtype), "shape": list(shape), "chunks": list(chunks),
                "compressor": compressor, "order": order, "fill_value": _fill_json(dtype, fill),
                "dimension_separator": separator}
    fields = list(dtype.names) if dtype.fields is not None else [None]
    spec = ts_spec(path, field=fields[0])
    spec["metadata"] = metadata
    stores = [ts.open(spec, create=True, delete_existing=True).result()]
    for field in fields[1:]:
        stores.append(ts.open(ts_spec(path, field=field), open=True, write=True).result())
    return stores


def _ts_write(stores: list[Any], dtype: np.dtype, selection: Any, data: np.ndarray) -> None:
    if dtype.fields is None:
        stores[0][selection].write(_ts_writable(data)).result()
        return
    for store, name in zip(stores, dtype.names, strict=True):
        store[selection].write(_ts_writable(np.ascontiguousarray(data[name]))).result()


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("dtype_id", TS_DTYPES)
def test_tensorstore_dtype_read_by_zarrkit(tmp_path: Path, dtype_id: str, order: str) -> None:
    dtype, fill = DTYPES[dtype_id]
    data = make_data(dtype, SHAPE, seed=12)
    stores = _ts_create(tmp_path, dtype, fill, order=order)
    _ts_write(stores, dtype, REGION, data[REGION])
    _ts_write(stores, dtype, (slice(6, 7), slice(4, 5)), data[6:7, 4:5])
    a = zk.open_array(str(tmp_path), mode="r")
    check_zk_metadata(a, shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                      fill=_fill_for_zarrkit(dtype, fill), order=order, attributes={})
    assert_same(a[...], _region_expected(dtype, fill, data))


@pytest.mark.parametrize("case", TS_FILL_CASES, ids=[c[0] for c in TS_FILL_CASES])
def test_tensorstore_fill_value_read_by_zarrkit(tmp_path: Path,
                                                case: tuple[str, str, Any]) -> None:
    _, dtype_str, fill = case
    dtype = np.dtype(dtype_str)
    data = make_data(dtype, SHAPE, seed=13)
    stores = _ts_create(tmp_path, dtype, fill, order="F")
    _ts_write(stores, dtype, REGION, data[REGION])
    _ts_write(stores, dtype, (slice(6, 7), slice(4, 5)), data[6:7, 4:5])
    a = zk.open_array(str(tmp_path), mode="r")
    check_zk_metadata(a, shape=SHAPE, chunks=CHUNKS, dtype=dtype,
                      fill=_fill_for_zarrkit(dtype, fill), order="F", attributes={})
    assert_same(a[...], _region_expected(dtype, fill, data))


@pytest.mark.parametrize("separator", SEPARATORS)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("compressor_id", TS_COMPRESSORS)
def test_tensorstore_compressor_read_by_zarrkit(tmp_path: Path, compressor_id: str, order: str,
                                                separator: str) -> None:
    compressor = COMPRESSORS[compressor_id]
    config = None if compressor is None else (
        dict(compressor) if isinstance(compressor, dict) else compressor.get_config())
    if config is not None and config["id"] == "zstd":
        # tensorstore's zstd takes only "level" and rejects numcodecs' "checksum" member.
        config.pop("checksum", None)
    dtype = np.dtype("<f4")
    data = make_data(dtype, SHAPE, seed=14)
    stores = _ts_create(tmp_path, dtype, 0.5, order=order, compressor=config,
                        separator=separator)
    _ts_write(stores, dtype, (), data)
    assert chunk_files(tmp_path) == _chunk_keys((3, 3), separator)
    a = zk.open_array(str(tmp_path), mode="r")
    check_zk_metadata(a, shape=SHAPE, chunks=CHUNKS, dtype=dtype, fill=np.float32(0.5),
                      order=order, attributes={}, separator=separator, compressor=compressor,
                      filters=None)
    assert_same(a[...], data)


@pytest.mark.parametrize(
    ("shape", "chunks"),
    [((), ()), ((0,), (2,)), ((3, 0), (2, 2)), ((3,), (10,)), ((10, 7), (4, 3)),
     ((5, 4, 3), (2, 3, 2))],
    ids=["0d", "empty-1d", "empty-2d", "chunk-bigger", "edge-2d", "edge-3d"],
)
def test_tensorstore_shapes_read_by_zarrkit(tmp_path: Path, shape: tuple[int, ...],
                                            chunks: tuple[int, ...]) -> None:
    dtype = np.dtype(">i4")
    data = make_data(dtype, shape, seed=15)
    stores = _ts_create(tmp_path, dtype, 4, shape=shape, chunks=chunks,
                        compressor={"id": "zlib", "level": 1})
    _ts_write(stores, dtype, (), data)
    a = zk.open_array(str(tmp_path), mode="r")
    assert a.shape == shape and a.chunks == chunks
    assert_same(a[...], data)


def test_tensorstore_missing_chunks_read_by_zarrkit(tmp_path: Path) -> None:
    dtype = np.dtype("<i2")
    stores = _ts_create(tmp_path, dtype, None, shape=(6, 6), chunks=(2, 2), separator="/")
    _ts_write(stores, dtype, (slice(0, 1), slice(0, 1)), np.array([[5]], dtype=dtype))
    _ts_write(stores, dtype, (slice(2, 4), slice(4, 6)), np.full((2, 2), -3, dtype=dtype))
    assert chunk_files(tmp_path) == {"0/0", "1/2"}
    a = zk.open_array(str(tmp_path), mode="r")
    assert a.fill_value is None
    # A null fill value: tensorstore and zarr-python read missing chunks as zeros.
    expected = np.zeros((6, 6), dtype=dtype)
    expected[0, 0], expected[2:4, 4:6] = 5, -3
    assert_same(a[...], expected)
    assert_same(zarr_open(tmp_path)[...], expected)


# =============================================================================================
# 4. Property-based round trips
# =============================================================================================
# Types hypothesis can fill with arbitrary values (including NaN, infinities, -0.0, extremes,
# NaT, empty strings and arbitrary unicode). zarr-python supports all of them in format 2.
HYPOTHESIS_DTYPES = ["|b1", "|i1", "<i2", ">i4", "<i8", "|u1", ">u2", "<u8", "<f2", "<f4",
                     ">f8", "<c8", ">c16", "<M8[s]", "<m8[us]", "|S3", "<U2", "|V3"]


@st.composite
def array_cases(draw: st.DrawFn) -> dict[str, Any]:
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 12), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, 12)) for _ in shape)
    dtype = np.dtype(draw(st.sampled_from(HYPOTHESIS_DTYPES)))
    if dtype.kind == "V":  # hypothesis infers no strategy for raw bytes: draw them as u1
        raw = draw(hnp.arrays(np.uint8, shape + (dtype.itemsize,)))
        data = np.ascontiguousarray(raw).view(dtype).reshape(shape)
        fill = np.void(draw(st.binary(min_size=dtype.itemsize, max_size=dtype.itemsize)))
    else:
        data = draw(hnp.arrays(dtype, shape))
        fill = draw(hnp.from_dtype(dtype))
    # A random written region (the rest keeps the fill value and may leave chunks absent).
    region = tuple(slice(*sorted(draw(st.lists(st.integers(0, s), min_size=2, max_size=2))))
                   for s in shape)
    return {
        "shape": shape, "chunks": chunks, "dtype": dtype, "data": data, "region": region,
        "order": draw(st.sampled_from(ORDERS)),
        "separator": draw(st.sampled_from(SEPARATORS)),
        "compressor": draw(st.sampled_from([None, numcodecs.Zstd(level=1),
                                            numcodecs.Blosc(cname="lz4")])),
        "fill": fill,
    }


def _case_expected(case: dict[str, Any]) -> np.ndarray:
    region = case["region"]
    expected = expected_with_fill(case["shape"], case["dtype"], case["fill"], region,
                                  case["data"][region])
    return expected


@settings(max_examples=25, deadline=None)
@given(case=array_cases())
def test_property_zarrkit_write_zarr_read(tmp_path_factory: pytest.TempPathFactory,
                                          case: dict[str, Any]) -> None:
    # Under zarrs, what zarrs cannot read (big-endian data; F-ordered chunks it decodes
    # itself) is its own limit, met by the fixed cases above: not drawn here.
    limit = zarrs_read_limit(case["dtype"], case["order"], case["shape"], [case["compressor"]])
    if limit is not None and zarrs_is_active():
        event(f"zarrs limit: {limit.reason}")
        reject()
    path = tmp_path_factory.mktemp("zk")
    a = zk.create_array(str(path), shape=case["shape"], chunks=case["chunks"],
                        dtype=case["dtype"], fill_value=case["fill"], order=case["order"],
                        compressor=case["compressor"], dimension_separator=case["separator"])
    a[case["region"]] = case["data"][case["region"]]
    expected = _case_expected(case)
    z = zarr_open(path)
    assert z.shape == case["shape"] and z.chunks == case["chunks"]
    assert np.dtype(z.dtype) == case["dtype"]
    assert_same_scalar(z.fill_value, case["fill"], case["dtype"])
    assert_same(z[...], expected)
    if case["dtype"].kind not in "mMUSV":  # tensorstore: see the module docstring
        assert_same(ts_read(path), expected, exact_dtype=False)


@settings(max_examples=25, deadline=None)
@given(case=array_cases())
def test_property_zarr_write_zarrkit_read(tmp_path_factory: pytest.TempPathFactory,
                                          case: dict[str, Any]) -> None:
    path = tmp_path_factory.mktemp("zarr")
    z = zarr.create_array(store=str(path), shape=case["shape"], chunks=case["chunks"],
                          dtype=case["dtype"], fill_value=case["fill"], order=case["order"],
                          compressors=case["compressor"], zarr_format=2,
                          chunk_key_encoding={"name": "v2", "separator": case["separator"]})
    z[case["region"]] = case["data"][case["region"]]
    expected = _case_expected(case)
    a = zk.open_array(str(path), mode="r")
    assert a.shape == case["shape"] and a.chunks == case["chunks"]
    assert a.dtype == case["dtype"] and a.order == case["order"]
    assert_same_scalar(a.fill_value, case["fill"], case["dtype"])
    assert_same(a[...], expected)
