"""The Zarr v3 codec pipeline: every codec round-trips, encodes byte for byte as zarr-python
does, decodes every chunk of the shared v3 corpus (zarr-python and tensorstore writers),
gives sharded data the same through partial access as through full decoding, and turns
corrupt or hostile chunks into ChunkDecodeError naming the chunk."""

from __future__ import annotations

import base64
import itertools
import json
import math
import struct
import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_fixtures import FIXTURES, fixtures_dir

from zarrkit.codecs.registry import codec_from_config, codec_v3_factory, register_codec_v3
from zarrkit.codecs.v3 import (
    ArrayArrayCodec,
    ChunkSpec,
    CodecPipelineV3,
    ShardIndex,
    ShardingCodec,
    coalesce_ranges,
)
from zarrkit.codecs.v3 import pipeline as v3_pipeline
from zarrkit.codecs.v3.compressors import crc32c
from zarrkit.codecs.v3.sharding import EMPTY, morton_rank
from zarrkit.errors import ChunkDecodeError, MetadataError, UnknownCodecError

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}
SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def pipeline(codecs: list[Any], shape: tuple[int, ...], dtype: Any, fill: Any = None
             ) -> CodecPipelineV3:
    return CodecPipelineV3.from_json(codecs, ChunkSpec(shape, np.dtype(dtype), fill))


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shape, dtype and bytes (so NaN == NaN and -0.0 != 0.0)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "O":
        return bool(a.tolist() == b.tolist())
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


# --- the shared corpus ------------------------------------------------------------------------

_DTYPES = {
    "bool": "?", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8", "uint8": "u1",
    "uint16": "u2", "uint32": "u4", "uint64": "u8", "float16": "f2", "float32": "f4",
    "float64": "f8", "complex64": "c8", "complex128": "c16", "string": "O",
    "variable_length_bytes": "O",
    # Stored as 2 bytes and 1 byte per element; compared as raw bits below.
    "bfloat16": "u2", "int4": "u1",
}


def _dtype(data_type: Any) -> np.dtype:
    if isinstance(data_type, str):
        return np.dtype(_DTYPES[data_type])
    config = data_type.get("configuration", {})
    return np.dtype({
        "null_terminated_bytes": f"S{config.get('length_bytes')}",
        "raw_bytes": f"V{config.get('length_bytes')}",
        "numpy.timedelta64": f"m8[{config.get('unit')}]",
        "numpy.datetime64": f"M8[{config.get('unit')}]",
    }[data_type["name"]])


def _fill(value: Any, dtype: np.dtype) -> Any:
    """Just enough of the v3 fill-value encoding for the corpus."""
    specials = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
    if dtype.kind == "O":
        return value
    if dtype.kind in "SV":
        return np.frombuffer(base64.b64decode(value).ljust(dtype.itemsize, b"\0"), dtype)[0]
    if dtype.kind == "c":
        return complex(*(specials.get(v, v) for v in value))
    return specials.get(value, value)


def _v3_entries() -> list[dict[str, Any]]:
    manifest = FIXTURES / "corpus" / "MANIFEST.json"
    if not manifest.exists():
        return []
    return [e for e in json.loads(manifest.read_text())["entries"] if e["zarr_format"] == 3]


V3_ENTRIES = _v3_entries()
SHARDED = [e for e in V3_ENTRIES if "codec:sharding_indexed" in e["features"]]


def _open(entry: dict[str, Any]) -> tuple[Path, dict[str, Any], CodecPipelineV3, np.ndarray]:
    corpus = fixtures_dir() / "corpus"
    root = corpus / entry["store"] / entry["array"]
    meta = json.loads((root / "zarr.json").read_text())
    dtype = _dtype(meta["data_type"])
    chunk_shape = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    spec = ChunkSpec(chunk_shape, dtype, _fill(meta["fill_value"], dtype))
    expected = np.load(corpus / entry["expected"], allow_pickle=False)
    return root, meta, CodecPipelineV3.from_json(meta["codecs"], spec), expected


def _chunks(root: Path, meta: dict[str, Any]) -> Iterator[tuple[str, tuple[slice, ...], Path]]:
    """(key, region of the array, file) of every stored chunk."""
    shape = meta["shape"]
    chunk_shape = meta["chunk_grid"]["configuration"]["chunk_shape"]
    encoding = meta["chunk_key_encoding"]
    sep = encoding.get("configuration", {}).get("separator", "/" if encoding["name"] ==
                                                "default" else ".")
    grid = [math.ceil(s / c) for s, c in zip(shape, chunk_shape, strict=True)]
    for coords in itertools.product(*(range(g) for g in grid)):
        parts = [str(c) for c in coords]
        key = sep.join(["c", *parts]) if encoding["name"] == "default" else sep.join(parts) or "0"
        path = root / key
        if path.exists():
            yield key, tuple(slice(c * n, min((c + 1) * n, s))
                             for c, n, s in zip(coords, chunk_shape, shape, strict=True)), path


def _assert_matches(decoded: np.ndarray, expected: np.ndarray, data_type: Any) -> None:
    part = decoded[tuple(slice(0, n) for n in expected.shape)]
    if data_type == "int4":  # tensorstore keeps one int4 per byte, in the low nibble
        assert np.array_equal(part & 0xF, expected.astype("i1").view("u1") & 0xF)
    elif part.dtype.kind == "O":
        assert np.array_equal(np.asarray(part.tolist(), dtype=expected.dtype), expected)
    elif part.dtype.kind in "mMV":
        assert part.tobytes() == np.ascontiguousarray(expected).astype(part.dtype).tobytes()
    else:
        assert np.array_equal(part, expected.astype(part.dtype), equal_nan=part.dtype.kind in "fc")


@pytest.mark.parametrize("entry", V3_ENTRIES, ids=[e["id"] for e in V3_ENTRIES])
def test_corpus_chunks_decode_to_expected_values(entry: dict[str, Any]) -> None:
    root, meta, pipe, expected = _open(entry)
    assert pipe.to_json()  # canonical form exists for every corpus pipeline
    for key, region, path in _chunks(root, meta):
        decoded = pipe.decode(path.read_bytes(), what=key)
        assert decoded.shape == pipe.spec.shape
        _assert_matches(decoded, expected[region], meta["data_type"])


def test_corpus_has_the_v3_cases_this_suite_relies_on() -> None:
    fixtures_dir()
    ids = {e["id"].split("/", 1)[1] for e in V3_ENTRIES}
    for name in ("tensorstore/shard_nested", "tensorstore/shard_index_start_gzip",
                 "zarr-python/shard_partial_missing_inner", "zarr-python/scale_offset_float64",
                 "zarr-python/dtype_string_vlen_utf8_zstd", "zarr-python/int32_numcodecs_lzma"):
        assert name in ids


@pytest.mark.parametrize("entry", SHARDED, ids=[e["id"] for e in SHARDED])
def test_partial_shard_access_matches_full_decode(entry: dict[str, Any]) -> None:
    root, meta, pipe, _ = _open(entry)
    sharding = pipe.sharding
    assert sharding is not None
    shard_shape = pipe.spec.shape
    n = sharding.index_nbytes(shard_shape)
    for key, _, path in _chunks(root, meta):
        data = path.read_bytes()
        full = pipe.decode(data, what=key)
        # Read only the index, as a store with range reads would.
        index_bytes = data[:n] if sharding.index_location == "start" else data[-n:]
        index = sharding.decode_index(index_bytes, shard_shape, what=key)
        index.check_bounds(len(data))
        ranges = {}
        for coords, region in sharding.inner_regions(shard_shape):
            byte_range = index.byte_range(coords)
            if byte_range is None:
                assert same_bits(full[region], sharding.inner_pipeline.spec.fill_chunk())
                continue
            ranges[coords] = byte_range
            offset, nbytes = byte_range
            inner = sharding.inner_pipeline.decode(data[offset:offset + nbytes], what=key)
            assert same_bits(inner, full[region])
        # Coalesced reads cover exactly the same bytes.
        keys = list(ranges)
        for start, length, members in coalesce_ranges([ranges[k] for k in keys]):
            block = data[start:start + length]
            for i in members:
                offset, nbytes = ranges[keys[i]]
                assert block[offset - start:offset - start + nbytes] == \
                    data[offset:offset + nbytes]


def test_partially_missing_shard_reads_fill_value() -> None:
    fixtures_dir()  # skips when the shared fixtures are absent
    entry = next(e for e in SHARDED if e["id"].endswith("shard_partial_missing_inner"))
    root, meta, pipe, _ = _open(entry)
    assert pipe.sharding is not None
    _, _, path = next(_chunks(root, meta))
    index = pipe.sharding.decode_index(path.read_bytes(), pipe.spec.shape, what="c/0/0")
    assert not index.is_all_empty()
    assert index.empty_mask().any()


# --- round trips ------------------------------------------------------------------------------

NUMERIC = ["u1", "i1", "u2", "i2", "u4", "i4", "u8", "i8", "f2", "f4", "f8", "c8", "c16", "?",
           "S3", "V2", "m8[ms]", "M8[s]", "U2"]


@st.composite
def numeric_chunks(draw: Any) -> np.ndarray:
    dtype = np.dtype(draw(st.sampled_from(NUMERIC)))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=0, max_size=3)))
    raw = draw(st.binary(min_size=math.prod(shape) * dtype.itemsize,
                         max_size=math.prod(shape) * dtype.itemsize))
    if dtype.kind == "U":  # only valid code points
        return (np.frombuffer(raw, "u4") % 0x10000).astype("u4").view(dtype).reshape(shape)
    if dtype == np.bool_:
        return (np.frombuffer(raw, "u1") % 2).astype("?").reshape(shape)
    return np.frombuffer(raw, dtype).reshape(shape).copy()


def _chains(ndim: int) -> list[list[Any]]:
    order = list(range(ndim))[::-1]
    return [
        [LE], [BE],
        [{"name": "transpose", "configuration": {"order": order}}, LE],
        [LE, CRC],
        [BE, {"name": "gzip", "configuration": {"level": 1}}],
        [LE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
        [LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                 "shuffle": "bitshuffle"}}],
        [LE, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1,
                                                 "shuffle": "shuffle", "typesize": 4}}],
        [LE, {"name": "gzip", "configuration": {"level": 0}}, CRC,
         {"name": "zstd", "configuration": {"level": 1}}],
        [LE, {"name": "numcodecs.zlib", "configuration": {"level": 1}},
         {"name": "numcodecs.adler32", "configuration": {}}],
    ]


@SETTINGS
@given(chunk=numeric_chunks(), which=st.integers(0, 9))
def test_round_trip_every_codec(chunk: np.ndarray, which: int) -> None:
    codecs = _chains(chunk.ndim)[which]
    if chunk.dtype.byteorder == "|":  # 1-byte and bytes types take no endian
        codecs = [{"name": "bytes"} if c in (LE, BE) else c for c in codecs]
    pipe = pipeline(codecs, chunk.shape, chunk.dtype)
    data = pipe.encode(chunk)
    assert isinstance(data, bytes)
    if pipe.encoded_size is not None:
        assert len(data) == pipe.encoded_size
    decoded = pipe.decode(data, what="c/0")
    assert same_bits(decoded, chunk)
    assert pipe.decode(memoryview(bytearray(data)), what="c/0").shape == chunk.shape


@st.composite
def sharded_cases(draw: Any) -> tuple[np.ndarray, list[int], list[Any], Any]:
    ndim = draw(st.integers(1, 3))
    inner = [draw(st.integers(1, 3)) for _ in range(ndim)]
    shard_shape = tuple(i * draw(st.integers(1, 3)) for i in inner)
    dtype = np.dtype(draw(st.sampled_from(["u1", "i4", "f8", "c8"])))
    fill = draw(st.sampled_from([0, 1]))
    # Mostly fill values, so that some inner chunks are empty.
    values = draw(st.lists(st.sampled_from([fill, fill, fill, 2, -0.0 if dtype.kind == "f"
                                            else 3]),
                           min_size=math.prod(shard_shape), max_size=math.prod(shard_shape)))
    chunk = np.array(values).astype(dtype).reshape(shard_shape)
    endian = {"name": "bytes"} if dtype.itemsize == 1 else LE
    inner_codecs = draw(st.sampled_from([
        [endian],
        [{"name": "transpose", "configuration": {"order": list(range(ndim))[::-1]}}, endian,
         {"name": "gzip", "configuration": {"level": 1}}],
        [endian, CRC],
    ]))
    return chunk, inner, inner_codecs, fill


@SETTINGS
@given(case=sharded_cases(), location=st.sampled_from(["start", "end"]),
       index_codecs=st.sampled_from([[LE, CRC], [BE], [LE]]))
def test_round_trip_sharding(case: tuple, location: str, index_codecs: list[Any]) -> None:
    chunk, inner, inner_codecs, fill = case
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner, "codecs": inner_codecs, "index_codecs": index_codecs,
        "index_location": location}}]
    pipe = pipeline(codecs, chunk.shape, chunk.dtype, fill)
    data = pipe.encode(chunk)
    fill_chunk = pipe.spec.fill_chunk()
    if data is None:
        assert same_bits(chunk, fill_chunk)
        return
    assert same_bits(pipe.decode(data, what="c/0"), chunk)
    sharding = pipe.sharding
    assert sharding is not None
    index = sharding.decode_index(data, chunk.shape, what="c/0")
    empty = sharding.empty_inner_chunks(chunk)
    assert np.array_equal(index.empty_mask(), empty)
    # Reassembling from the stored inner bytes reproduces the shard exactly.
    stored = {c: data[o:o + n] for c in index.nonempty() for o, n in [index.byte_range(c)]}
    assert sharding.assemble(stored, chunk.shape) == data


@SETTINGS
@given(st.lists(st.text(), min_size=1, max_size=12))
def test_round_trip_vlen_utf8(items: list[str]) -> None:
    chunk = np.array(items + [""], dtype=object)
    for codecs in ([{"name": "vlen-utf8"}],
                   [{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 1}}],
                   [{"name": "vlen-utf8"}, {"name": "blosc", "configuration": {
                       "cname": "lz4", "clevel": 1, "shuffle": "noshuffle"}}]):
        pipe = pipeline(codecs, chunk.shape, object, "")
        assert pipe.decode(pipe.encode(chunk), what="c/0").tolist() == chunk.tolist()


@SETTINGS
@given(st.lists(st.binary(), min_size=1, max_size=12))
def test_round_trip_vlen_bytes(items: list[bytes]) -> None:
    chunk = np.array(items, dtype=object).reshape(1, -1)
    pipe = pipeline([{"name": "vlen-bytes"}, {"name": "gzip", "configuration": {"level": 1}}],
                    chunk.shape, object, b"")
    assert pipe.decode(pipe.encode(chunk), what="c/0").tolist() == chunk.tolist()


def test_vlen_format_is_the_documented_one() -> None:
    chunk = np.array([["a", "é"], ["", "xyz"]], dtype=object)
    data = pipeline([{"name": "vlen-utf8"}], (2, 2), object, "").encode(chunk)
    expected = struct.pack("<I", 4) + b"".join(
        struct.pack("<I", len(s.encode())) + s.encode() for s in ["a", "é", "", "xyz"])
    assert data == expected == bytes(numcodecs.VLenUTF8().encode(chunk.ravel()))


def test_sharded_strings_round_trip() -> None:
    chunk = np.array([["a", ""], ["", ""], ["b", "c"], ["", ""]], dtype=object)
    pipe = pipeline([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1, 2], "codecs": [{"name": "vlen-utf8"}]}}], (4, 2), object, "")
    data = pipe.encode(chunk)
    assert data is not None
    assert pipe.decode(data, what="s").tolist() == chunk.tolist()
    index = pipe.sharding.decode_index(data, (4, 2), what="s")  # type: ignore[union-attr]
    assert index.nonempty() == [(0, 0), (2, 0)]


@SETTINGS
@given(values=st.lists(st.integers(-1000, 1000), min_size=1, max_size=20),
       dtype=st.sampled_from(["i2", "i4", "i8", "f4", "f8"]))
def test_round_trip_scale_offset(values: list[int], dtype: str) -> None:
    chunk = np.array(values, dtype=dtype)
    pipe = pipeline([{"name": "scale_offset", "configuration": {"offset": 7, "scale": 4}}, LE],
                    chunk.shape, dtype, 0)
    assert same_bits(pipe.decode(pipe.encode(chunk), what="c/0"), chunk)


def test_scale_offset_refuses_what_the_type_cannot_hold() -> None:
    pipe = pipeline([{"name": "scale_offset", "configuration": {"scale": 2}}, {"name": "bytes"}],
                    (1,), "i1", 0)
    with pytest.raises(ValueError, match="does not fit"):
        pipe.encode(np.array([100], "i1"))
    with pytest.raises(ChunkDecodeError, match="c/9.*divisible"):
        pipe.decode(b"\x03", what="c/9")
    with pytest.raises(MetadataError, match="real-number"):
        pipeline([{"name": "scale_offset"}, LE], (1,), "c8")
    with pytest.raises(MetadataError, match="cannot be zero"):
        pipeline([{"name": "scale_offset", "configuration": {"scale": 0}}, LE], (1,), "f8")
    hex_offset = pipeline([{"name": "scale_offset", "configuration": {
        "offset": "0x3ff0000000000000", "scale": "Infinity"}}, LE], (1,), "f8")
    with pytest.raises(ValueError, match="overflows"):
        hex_offset.encode(np.array([2.0]))
    assert hex_offset.decode(np.array([5.0]).tobytes(), what="c").tolist() == [1.0]
    with pytest.raises(MetadataError, match="not a valid int16"):
        pipeline([{"name": "scale_offset", "configuration": {"offset": 0.5}}, LE], (1,), "i2")


def test_numcodecs_filters_round_trip() -> None:
    data = np.linspace(0, 100, 24).reshape(4, 6)
    pipe = pipeline([{"name": "numcodecs.fixedscaleoffset", "configuration": {
        "offset": 0, "scale": 10, "dtype": "<f8", "astype": "<u2"}}, LE], (4, 6), "f8")
    assert pipe.array_array[0].encoded_spec().dtype == np.dtype("u2")
    assert np.allclose(pipe.decode(pipe.encode(data), what="c"), data, atol=0.05)
    bits = np.array([True, False, True] * 3)
    packed = pipeline([{"name": "numcodecs.packbits"}, {"name": "bytes"}], (9,), "?")
    assert packed.encoded_size == 3
    assert np.array_equal(packed.decode(packed.encode(bits), what="c"), bits)
    delta = pipeline([{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, LE,
                      {"name": "numcodecs.bz2", "configuration": {"level": 1}}], (5,), "i4")
    ints = np.array([5, 1, 9, 9, -4], "i4")
    assert np.array_equal(delta.decode(delta.encode(ints), what="c"), ints)
    with pytest.raises(MetadataError, match="configured for float64"):
        pipeline([{"name": "numcodecs.delta", "configuration": {"dtype": "<f8"}}, LE], (2,), "i4")


# --- byte-exactness with zarr-python --------------------------------------------------------

EXACT_CASES = [
    [LE], [BE],
    [{"name": "transpose", "configuration": {"order": [1, 0]}}, LE],
    [LE, CRC],
    [LE, {"name": "gzip", "configuration": {"level": 5}}],
    [BE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    [LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                             "typesize": 4, "blocksize": 0}}],
    [LE, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3,
                                             "shuffle": "bitshuffle"}}],
    [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 3], "codecs": [LE], "index_codecs": [LE, CRC],
        "index_location": "end"}}],
    [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 3], "codecs": [LE, {"name": "gzip", "configuration": {"level": 1}}],
        "index_codecs": [LE, CRC], "index_location": "start"}}],
    [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [8, 6], "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [4, 3], "codecs": [LE], "index_codecs": [LE, CRC]}}],
        "index_codecs": [LE, CRC]}}],
    [LE, {"name": "numcodecs.zlib", "configuration": {"level": 1}}],
    [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, LE,
     {"name": "numcodecs.crc32", "configuration": {}}],
]


def _zarr_python_chunk(chunk: np.ndarray, codecs: list[Any]) -> tuple[bytes | None, Any]:
    zarr = pytest.importorskip("zarr")
    import asyncio

    from zarr.core.buffer import default_buffer_prototype

    store = zarr.storage.MemoryStore()
    meta = {
        "zarr_format": 3, "node_type": "array", "shape": list(chunk.shape),
        "data_type": str(chunk.dtype), "fill_value": 0, "codecs": codecs, "attributes": {},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunk.shape)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    }
    prototype = default_buffer_prototype()
    asyncio.run(store.set("zarr.json", prototype.buffer.from_bytes(json.dumps(meta).encode())))
    array = zarr.open_array(store, mode="r+")
    array[...] = chunk
    stored = asyncio.run(store.get("c/0/0", prototype))
    return (None if stored is None else stored.to_bytes()), array.metadata.to_dict()["codecs"]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("codecs", EXACT_CASES, ids=lambda c: "+".join(
    x["name"] for x in c) + ("-" + c[0]["configuration"]["codecs"][0]["name"]
                             if c[0]["name"] == "sharding_indexed" else ""))
def test_encoding_is_byte_identical_to_zarr_python(codecs: list[Any],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # zarr-python's gzip stamps the current second into its header, where zarrkit writes
    # 0 (zarrkit.codecs.gzip_member): its clock is set to 0.
    import time

    monkeypatch.setattr(time, "time", lambda: 0.0)
    rng = np.random.default_rng(1)
    chunk = rng.integers(-500, 500, size=(16, 12)).astype("i4")
    chunk[0:4, 0:3] = 0  # an empty inner chunk for the sharded cases
    chunk[8:12] = 0
    pipe = pipeline(codecs, chunk.shape, "i4", 0)
    ours = pipe.encode(chunk)
    theirs, their_codecs = _zarr_python_chunk(chunk, codecs)
    assert ours == theirs
    assert pipe.decode(theirs, what="c/0/0").tolist() == chunk.tolist()  # type: ignore[arg-type]
    assert CodecPipelineV3.from_json(their_codecs, pipe.spec).to_json() == pipe.to_json()


def test_all_empty_shard_encodes_to_none_like_zarr_python() -> None:
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [LE], "index_codecs": [LE, CRC]}}]
    chunk = np.full((4, 4), 3, dtype="i4")
    pipe = pipeline(codecs, (4, 4), "i4", 3)
    assert pipe.encode(chunk) is None
    nested = pipeline([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 4], "codecs": codecs}}], (8, 4), "i4", 3)
    assert nested.encode(np.full((8, 4), 3, "i4")) is None


# --- canonical JSON and validation -------------------------------------------------------


def test_to_json_is_canonical() -> None:
    pipe = pipeline(["bytes", {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1}},
                     "crc32c"], (4,), "u1")
    assert pipe.to_json() == [
        {"name": "bytes"},
        {"name": "blosc", "configuration": {"typesize": 1, "cname": "lz4", "clevel": 1,
                                            "shuffle": "bitshuffle", "blocksize": 0}},
        {"name": "crc32c"},
    ]
    f_order = pipeline([{"name": "transpose", "configuration": {"order": "F"}}, LE], (2, 3, 4),
                       "i2")
    assert f_order.to_json()[0] == {"name": "transpose", "configuration": {"order": [2, 1, 0]}}
    assert f_order.array_array[0].encoded_spec().shape == (4, 3, 2)
    shard = pipeline([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2], "codecs": [LE]}}], (4,), "f8")
    assert shard.to_json() == [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2], "codecs": [LE], "index_codecs": [LE, CRC], "index_location": "end"}}]
    vlen = pipeline([{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 3}}],
                    (2,), object, "")
    assert vlen.to_json() == [{"name": "vlen-utf8", "configuration": {}},
                              {"name": "zstd", "configuration": {"level": 3, "checksum": False}}]


def test_is_raw() -> None:
    native = "little" if np.little_endian else "big"
    other = "big" if np.little_endian else "little"
    assert pipeline([{"name": "bytes", "configuration": {"endian": native}}], (2,), "i4").is_raw
    assert pipeline(["bytes"], (2,), "u1").is_raw
    assert not pipeline([{"name": "bytes", "configuration": {"endian": other}}], (2,), "i4").is_raw
    assert not pipeline(["bytes", "crc32c"], (2,), "u1").is_raw
    assert not pipeline([{"name": "transpose", "configuration": {"order": [0]}}, "bytes"],
                        (2,), "u1").is_raw


@pytest.mark.parametrize(("codecs", "dtype", "error", "message"), [
    ([{"name": "nope"}], "u1", UnknownCodecError, "'nope'"),
    (["bytes", {"name": "lz5"}], "u1", UnknownCodecError, "'lz5'"),
    ([{"name": "numcodecs.nope"}], "u1", UnknownCodecError, "'numcodecs.nope'"),
    ([{"name": "numcodecs.pickle"}], "O", UnknownCodecError, "refused"),
    ([{"name": "sharding_indexed", "configuration": {"chunk_shape": [1], "codecs": [
        {"name": "inner-nope"}]}}], "u1", UnknownCodecError, "'inner-nope'"),
    ([{"name": "bytes"}], "i4", MetadataError, "'endian' is required"),
    ([{"name": "bytes", "configuration": {"endian": "middle"}}], "i4", MetadataError, "middle"),
    ([{"name": "bytes"}], "O", MetadataError, "vlen"),
    ([{"name": "vlen-utf8"}], "i4", MetadataError, "variable-length"),
    ([], "u1", MetadataError, "exactly one array -> bytes"),
    ([{"name": "gzip"}], "u1", MetadataError, "before the array -> bytes"),
    (["bytes", "bytes"], "u1", MetadataError, "only one array -> bytes"),
    (["bytes", {"name": "transpose", "configuration": {"order": [0]}}], "u1", MetadataError,
     "cannot come after"),
    ([{"name": "transpose", "configuration": {"order": [0, 0]}}, "bytes"], "u1", MetadataError,
     "permutation"),
    (["bytes", {"name": "gzip", "configuration": {"level": 12}}], "u1", MetadataError, "level"),
    (["bytes", {"name": "gzip", "configuration": {"levle": 1}}], "u1", MetadataError, "levle"),
    (["bytes", {"name": "zstd", "configuration": {"checksum": "yes"}}], "u1", MetadataError,
     "checksum"),
    (["bytes", {"name": "blosc", "configuration": {"cname": "lz5"}}], "u1", MetadataError,
     "cname"),
    (["bytes", {"name": "blosc", "configuration": {"shuffle": "bits"}}], "u1", MetadataError,
     "shuffle"),
    ([{"name": "sharding_indexed", "configuration": {"chunk_shape": [3], "codecs": ["bytes"]}}],
     "u1", MetadataError, "does not divide"),
    ([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2]}}], "u1", MetadataError,
     "'codecs' is required"),
    ([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2], "codecs": ["bytes"],
                                                     "index_codecs": [LE, {"name": "gzip"}]}}],
     "u1", MetadataError, "fixed size"),
    ([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2], "codecs": ["bytes"],
                                                     "index_location": "middle"}}],
     "u1", MetadataError, "index_location"),
    ("bytes", "u1", MetadataError, "must be a list"),
    ([{"configuration": {}}], "u1", MetadataError, "'name'"),
    ([{"name": "bytes", "extra": 1}], "u1", MetadataError, "extra"),
])
def test_invalid_pipelines_are_refused(codecs: Any, dtype: str, error: type, message: str
                                       ) -> None:
    with pytest.raises(error, match=message):
        CodecPipelineV3.from_json(codecs, ChunkSpec((4,), np.dtype(dtype), None))


def test_ignorable_unknown_codecs_pass_through() -> None:
    odd_a = {"name": "x.odd", "configuration": {"k": 1}, "must_understand": False}
    odd_b = {"name": "x.other", "must_understand": False}
    pipe = pipeline([odd_a, "bytes", odd_b, "crc32c"], (3,), "u1")
    chunk = np.array([1, 2, 3], "u1")
    assert pipe.decode(pipe.encode(chunk), what="c").tolist() == [1, 2, 3]  # type: ignore[arg-type]
    assert pipe.to_json() == [odd_a, {"name": "bytes"}, odd_b, {"name": "crc32c"}]
    assert pipe.encoded_size == 7


def test_registered_codecs_are_used_and_v2_lookup_is_unchanged() -> None:
    class Negate(ArrayArrayCodec):
        name = "test.negate"

        def encode(self, chunk: np.ndarray) -> np.ndarray:
            return -chunk

        def decode(self, chunk: np.ndarray, *, what: str) -> np.ndarray:
            return -chunk

    register_codec_v3("test.negate", Negate.from_config)
    assert codec_v3_factory("test.negate") is not None
    pipe = pipeline(["test.negate", LE], (2,), "i4")
    assert pipe.encode(np.array([1, 2], "i4")) == np.array([-1, -2], "<i4").tobytes()
    assert codec_from_config({"id": "gzip", "level": 1}).codec_id == "gzip"


# --- corruption ----------------------------------------------------------------------------


def _fixture_chunk(name: str) -> tuple[CodecPipelineV3, bytes]:
    fixtures_dir()  # skips when the shared fixtures are absent
    entry = next(e for e in V3_ENTRIES if e["id"].endswith(name))
    root, meta, pipe, _ = _open(entry)
    return pipe, next(_chunks(root, meta))[2].read_bytes()


def test_crc32c_mismatch_is_reported_with_the_chunk_name() -> None:
    pipe, data = _fixture_chunk("tensorstore/int32_crc32c")
    corrupt = bytearray(data)
    corrupt[10] ^= 1
    with pytest.raises(ChunkDecodeError, match=r"c/0/0.*crc32c checksum mismatch"):
        pipe.decode(bytes(corrupt), what="c/0/0")
    with pytest.raises(ChunkDecodeError, match=r"c/0/0.*too short"):
        pipe.decode(data[:3], what="c/0/0")


def test_crc32c_matches_the_reference_values() -> None:
    assert crc32c(b"") == 0
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720 B.4


def _sharded() -> tuple[CodecPipelineV3, ShardingCodec, bytes]:
    pipe = pipeline([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [LE], "index_codecs": [LE, CRC]}}], (4, 4), "i4", 0)
    data = pipe.encode(np.arange(1, 17, dtype="i4").reshape(4, 4))
    assert pipe.sharding is not None and data is not None
    return pipe, pipe.sharding, data


def _with_index(sharding: ShardingCodec, data: bytes, entries: np.ndarray) -> bytes:
    n = sharding.index_nbytes((4, 4))
    return data[:-n] + sharding.encode_index(entries, (4, 4))


def test_truncated_shard_index() -> None:
    pipe, sharding, data = _sharded()
    with pytest.raises(ChunkDecodeError,
                       match=r"c/1/2: shard index truncated \(needs 68 bytes, found 40\)"):
        pipe.decode(data[-40:], what="c/1/2")
    with pytest.raises(ChunkDecodeError, match=r"c/1/2.*crc32c"):
        pipe.decode(data[:-1], what="c/1/2")  # the index is read from the wrong place


def test_index_pointing_past_the_end() -> None:
    pipe, sharding, data = _sharded()
    entries = sharding.decode_index(data, (4, 4), what="s").entries.copy()
    entries[1, 1] = (len(data) - 8, 16)
    corrupt = _with_index(sharding, data, entries)
    with pytest.raises(ChunkDecodeError, match=r"c/0/0: inner chunk \(1, 1\).*past the end"):
        pipe.decode(corrupt, what="c/0/0")
    index = sharding.decode_index(corrupt, (4, 4), what="c/0/0")
    with pytest.raises(ChunkDecodeError, match="c/0/0"):
        index.check_bounds(len(corrupt))
    entries[1, 1] = (EMPTY, 16)
    with pytest.raises(ChunkDecodeError, match="malformed"):
        pipe.decode(_with_index(sharding, data, entries), what="c/0/0")
    entries[1, 1] = (2**63, 2**63)  # offset + nbytes overflows 64 bits
    with pytest.raises(ChunkDecodeError, match="past the end"):
        pipe.decode(_with_index(sharding, data, entries), what="c/0/0")


def test_inner_chunk_of_the_wrong_size() -> None:
    pipe, sharding, data = _sharded()
    entries = sharding.decode_index(data, (4, 4), what="s").entries.copy()
    entries[0, 1, 1] -= 4
    with pytest.raises(ChunkDecodeError, match=r"c/3/3 inner chunk \(0, 1\): 12 bytes, "
                                               r"expected 16"):
        pipe.decode(_with_index(sharding, data, entries), what="c/3/3")


def test_corrupt_compressed_chunks() -> None:
    pipe, data = _fixture_chunk("zarr-python/int32_gzip")
    with pytest.raises(ChunkDecodeError, match="c/0/0.*truncated"):
        pipe.decode(data[:-20], what="c/0/0")
    with pytest.raises(ChunkDecodeError, match="c/0/0"):
        pipe.decode(b"garbage" * 10, what="c/0/0")
    for name in ("int32_zstd_checksum", "int32_blosc_lz4_shuffle", "int32_numcodecs_lzma"):
        pipe, data = _fixture_chunk("zarr-python/" + name)
        with pytest.raises(ChunkDecodeError, match="c/0/0"):
            pipe.decode(data[: len(data) // 2], what="c/0/0")
    pipe = pipeline([{"name": "vlen-utf8"}], (3,), object, "")
    with pytest.raises(ChunkDecodeError, match="c/0: vlen-utf8 holds 4000000000 items"):
        pipe.decode(struct.pack("<I", 4_000_000_000), what="c/0")
    with pytest.raises(ChunkDecodeError, match="c/0"):
        pipe.decode(struct.pack("<II", 3, 100) + b"ab", what="c/0")


def _zstd_without_size(frame: bytes) -> bytes:
    """The same zstd frame with its content size removed from the header (as a streaming
    compressor writes it)."""
    descriptor = frame[4]
    single_segment = (descriptor >> 5) & 1
    size_bytes = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
    header_end = 5 + (0 if single_segment else 1) + size_bytes
    window = 0 if single_segment else frame[5]
    window = window or (27 - 10) << 3  # a 128 MiB window holds any test content
    return frame[:4] + bytes([descriptor & 0x07, window]) + frame[header_end:]


def test_zstd_frames_without_a_declared_size() -> None:
    chunk = np.arange(1000, dtype="<i4")
    frame = _zstd_without_size(bytes(numcodecs.Zstd(level=1).encode(chunk)))
    pipe = pipeline([LE, {"name": "zstd", "configuration": {"level": 1}}], (1000,), "i4")
    assert np.array_equal(pipe.decode(frame, what="c/0"), chunk)
    small = pipeline([LE, {"name": "zstd", "configuration": {"level": 1}}], (999,), "i4")
    with pytest.raises(ChunkDecodeError, match="c/0: decodes to more than the expected 3996"):
        small.decode(frame, what="c/0")
    large = pipeline([LE, {"name": "zstd", "configuration": {"level": 1}}], (1001,), "i4")
    with pytest.raises(ChunkDecodeError, match="c/0"):
        large.decode(frame, what="c/0")
    # Not an exact size (variable-length data): decoded within the bound.
    text = np.array(["abc", "dé"] * 50, dtype=object)
    vlen = pipeline([{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 1}}],
                    text.shape, object, "")
    vframe = _zstd_without_size(bytes(numcodecs.Zstd(level=1).encode(
        np.frombuffer(bytes(numcodecs.VLenUTF8().encode(text)), "u1"))))
    assert vlen.decode(vframe, what="c/0").tolist() == text.tolist()


BOMB_SIZE = 64 << 20


def _bombs() -> dict[str, tuple[list[Any], bytes]]:
    zeros = np.zeros(BOMB_SIZE, dtype="u1")
    gzip_bomb = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zstd = bytes(numcodecs.Zstd(level=1).encode(zeros))
    return {
        "gzip": ([{"name": "gzip", "configuration": {"level": 1}}],
                 gzip_bomb.compress(zeros.tobytes()) + gzip_bomb.flush()),
        "zstd": ([{"name": "zstd", "configuration": {"level": 1}}], zstd),
        "zstd-no-size": ([{"name": "zstd", "configuration": {"level": 1}}],
                         _zstd_without_size(zstd)),
        "blosc": ([{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1,
                                                       "shuffle": "noshuffle"}}],
                  bytes(numcodecs.Blosc("lz4", 1, 0).encode(zeros))),
        "numcodecs.zlib": ([{"name": "numcodecs.zlib", "configuration": {"level": 1}}],
                           zlib.compress(zeros.tobytes(), 1)),
    }


@pytest.fixture(scope="module")
def bombs() -> dict[str, tuple[list[Any], bytes]]:
    return _bombs()


@pytest.mark.parametrize("kind", ["gzip", "zstd", "zstd-no-size", "blosc", "numcodecs.zlib"])
@pytest.mark.parametrize("variable", [False, True], ids=["fixed", "vlen"])
def test_decompression_bombs_are_refused_without_allocating(
    bombs: dict[str, tuple[list[Any], bytes]], kind: str, variable: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compressor, bomb = bombs[kind]
    if variable:  # no exact size: bounded by the cap for variable-length chunks
        monkeypatch.setattr(v3_pipeline, "UNBOUNDED_CHUNK_LIMIT", 1 << 20)
        pipe = pipeline([{"name": "vlen-bytes"}, *compressor], (4,), object, b"")
    else:
        pipe = pipeline(["bytes", *compressor], (64, 64), "u1")
    tracemalloc.start()
    try:
        with pytest.raises(ChunkDecodeError, match="c/0/0: decodes to more than"):
            pipe.decode(bomb, what="c/0/0")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"decoding allocated {peak} bytes"


def test_nested_compressors_are_bounded_too() -> None:
    inner = np.zeros(1 << 20, dtype="u1")
    bomb = bytes(numcodecs.GZip(1).encode(np.frombuffer(
        bytes(numcodecs.Zstd(1).encode(inner)), "u1")))
    pipe = pipeline(["bytes", {"name": "zstd", "configuration": {"level": 1}},
                     {"name": "gzip", "configuration": {"level": 1}}], (1000,), "u1")
    with pytest.raises(ChunkDecodeError, match="c/0: decodes to more than the expected 1000"):
        pipe.decode(bomb, what="c/0")


# --- sharding helpers ------------------------------------------------------------------------


def test_assemble_keeps_inner_bytes_as_given() -> None:
    pipe, sharding, data = _sharded()
    index = sharding.decode_index(data, (4, 4), what="s")
    inner: dict[tuple[int, ...], bytes | None] = {
        c: data[o:o + n] for c in index.nonempty() for o, n in [index.byte_range(c)]}
    replacement = sharding.inner_pipeline.encode(np.full((2, 2), 9, "i4"))
    inner[(1, 0)] = replacement
    inner[(0, 1)] = None
    shard = sharding.assemble(inner, (4, 4))
    assert shard is not None
    decoded = pipe.decode(shard, what="s")
    assert (decoded[2:4, 0:2] == 9).all() and (decoded[0:2, 2:4] == 0).all()
    new_index = sharding.decode_index(shard, (4, 4), what="s")
    for coords in [(0, 0), (1, 1)]:
        o, n = new_index.byte_range(coords)  # type: ignore[misc]
        assert shard[o:o + n] == inner[coords]
    assert new_index.byte_range((0, 1)) is None
    with pytest.raises(ValueError, match="outside"):
        sharding.assemble({(2, 0): b"x"}, (4, 4))


def test_index_at_start_offsets_count_the_index() -> None:
    pipe = pipeline([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2], "codecs": ["bytes"], "index_location": "start"}}], (4,), "u1")
    data = pipe.encode(np.array([1, 2, 3, 4], "u1"))
    assert data is not None
    sharding = pipe.sharding
    assert sharding is not None
    assert sharding.index_nbytes((4,)) == 36
    assert data[36:] == b"\x01\x02\x03\x04"
    index = sharding.decode_index(data[:36], (4,), what="s")
    assert index.byte_range((0,)) == (36, 2) and index.byte_range((1,)) == (38, 2)
    with pytest.raises(IndexError):
        index.byte_range((2,))


def test_empty_inner_chunks_compare_bits() -> None:
    codecs = [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2],
                                                               "codecs": [LE]}}]
    nan_fill = pipeline(codecs, (4,), "f8", math.nan)
    shard = np.array([np.nan, np.nan, -0.0, 0.0])
    sharding = nan_fill.sharding
    assert sharding is not None
    assert sharding.empty_inner_chunks(shard).tolist() == [True, False]
    zero_fill = pipeline(codecs, (4,), "f8", 0.0)
    data = zero_fill.encode(np.array([-0.0, 0.0, 0.0, 0.0]))
    assert data is not None
    assert same_bits(zero_fill.decode(data, what="s"), np.array([-0.0, 0.0, 0.0, 0.0]))


def test_morton_order_matches_zarr_python() -> None:
    pytest.importorskip("zarr")
    from zarr.core.indexing import morton_order_coords  # zarr-python 3.4's name

    for cps in [(4, 4), (3, 5), (2, 3, 4), (1, 7), (8,), (5, 1, 3)]:
        rank = morton_rank(cps)
        ours = sorted(np.ndindex(*cps), key=lambda c: int(rank[c]))
        assert ours == [tuple(int(i) for i in c) for c in morton_order_coords(cps)]


def test_coalesce_ranges() -> None:
    assert coalesce_ranges([]) == []
    assert coalesce_ranges([(0, 10), (10, 10), (5, 2)], max_gap=0) == [(0, 20, [0, 2, 1])]
    assert coalesce_ranges([(0, 10), (11, 1)], max_gap=0) == [(0, 10, [0]), (11, 1, [1])]
    assert coalesce_ranges([(0, 10), (11, 1)], max_gap=1) == [(0, 12, [0, 1])]
    assert coalesce_ranges([(100, 1), (0, 1)]) == [(0, 101, [1, 0])]


def test_shard_index_helpers() -> None:
    entries = np.full((2, 3, 2), EMPTY, dtype=np.uint64)
    entries[1, 2] = (0, 8)
    index = ShardIndex(entries, what="c/0")
    assert index.chunks_per_shard == (2, 3)
    assert index.nonempty() == [(1, 2)]
    assert not index.is_all_empty()
    index.check_bounds(8)
    with pytest.raises(ChunkDecodeError, match="c/0"):
        index.check_bounds(7)


def test_zero_dimensional_and_zero_size_chunks() -> None:
    scalar = pipeline([LE, CRC], (), "f8")
    assert scalar.decode(scalar.encode(np.array(2.5)), what="c").item() == 2.5
    empty = pipeline([LE, {"name": "zstd", "configuration": {"level": 1}}], (0, 3), "i4")
    assert empty.decode(empty.encode(np.zeros((0, 3), "i4")), what="c").shape == (0, 3)
    sharded = pipeline([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [], "codecs": [LE]}}], (), "i4", 0)
    data = sharded.encode(np.array(5, "i4"))
    assert data is not None and sharded.decode(data, what="c").item() == 5
