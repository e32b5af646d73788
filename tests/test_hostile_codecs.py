"""Hostile codec configurations and chunks end in a zarrkit error, quickly and in little
memory: configurations that numcodecs would only trip over when a chunk is written or read,
object chunks that claim more items than they hold, and decompression bombs hidden in any
step of a chain, filters included."""

from __future__ import annotations

import bz2
import functools
import json
import lzma
import re
import struct
import zlib
from collections.abc import Iterator
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr
import zstandard
from numcodecs import blosc
from numcodecs.registry import codec_registry
from support import bounded
from zarr.core.buffer import cpu
from zarr.storage import MemoryStore as ZarrMemoryStore

import zarrkit as zk
from zarrkit.codecs.numcodecs_config import ARRAY_FILTERS, CHECKED_IDS, OBJECT_CODECS
from zarrkit.codecs.registry import REFUSED_CODEC_IDS
from zarrkit.errors import ChunkDecodeError, MetadataError, UnknownCodecError
from zarrkit.metadata.dtypes_v3 import data_type_v3_from_numpy

MiB = 2**20


def zarray(**changes: Any) -> dict[str, Any]:
    document = {"zarr_format": 2, "shape": [16], "chunks": [16], "dtype": "<f8",
                "compressor": None, "fill_value": 0, "order": "C", "filters": None}
    document.update(changes)
    return document


def v2_store(**changes: Any) -> dict[str, bytes]:
    return {".zarray": json.dumps(zarray(**changes)).encode()}


def zarr_json(codecs: list[Any], **changes: Any) -> dict[str, bytes]:
    document = {"zarr_format": 3, "node_type": "array", "shape": [16], "data_type": "float64",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16]}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs}
    document.update(changes)
    return {"zarr.json": json.dumps(document).encode()}


LE = {"name": "bytes", "configuration": {"endian": "little"}}

# --- 4. codec configurations --------------------------------------------------------------

MISSING_CNAME = next((c for c in ("snappy", "lz4hc", "zlib")
                      if c not in blosc.list_compressors()), "bogus")

# (configuration, array dtype, field the error must name). The array is 16 elements.
BAD_NUMCODECS: dict[str, tuple[dict[str, Any], str, str]] = {
    "blosc shuffle 3": ({"id": "blosc", "shuffle": 3}, "<f8", "shuffle"),
    "blosc shuffle -2": ({"id": "blosc", "shuffle": -2}, "<f8", "shuffle"),
    "blosc clevel 10": ({"id": "blosc", "clevel": 10}, "<f8", "clevel"),
    "blosc blocksize 2**31": ({"id": "blosc", "blocksize": 2**31}, "<f8", "blocksize"),
    "blosc blocksize -1": ({"id": "blosc", "blocksize": -1}, "<f8", "blocksize"),
    "blosc typesize 0": ({"id": "blosc", "typesize": 0}, "<f8", "typesize"),
    "blosc typesize 2**31": ({"id": "blosc", "typesize": 2**31}, "<f8", "typesize"),
    "blosc missing cname": ({"id": "blosc", "cname": MISSING_CNAME}, "<f8", "cname"),
    "blosc cname not text": ({"id": "blosc", "cname": 1}, "<f8", "cname"),
    "zlib level 10": ({"id": "zlib", "level": 10}, "<f8", "level"),
    "zlib level text": ({"id": "zlib", "level": "1"}, "<f8", "level"),
    "zlib level true": ({"id": "zlib", "level": True}, "<f8", "level"),
    "zlib unknown field": ({"id": "zlib", "lvl": 1}, "<f8", "lvl"),
    "gzip level 10": ({"id": "gzip", "level": 10}, "<f8", "level"),
    "bz2 level 0": ({"id": "bz2", "level": 0}, "<f8", "level"),
    "zstd level 2**31": ({"id": "zstd", "level": 2**31}, "<f8", "level"),
    "zstd checksum text": ({"id": "zstd", "checksum": "yes"}, "<f8", "checksum"),
    "lz4 acceleration 2**31": ({"id": "lz4", "acceleration": 2**31}, "<f8", "acceleration"),
    "lz4 acceleration float": ({"id": "lz4", "acceleration": 1.5}, "<f8", "acceleration"),
    "lzma format auto": ({"id": "lzma", "format": 0}, "<f8", "format"),
    "lzma check 3": ({"id": "lzma", "check": 3}, "<f8", "check"),
    "lzma check without xz": ({"id": "lzma", "format": 2, "check": 1}, "<f8", "check"),
    "lzma preset 10": ({"id": "lzma", "preset": 10}, "<f8", "preset"),
    "lzma preset and filters": ({"id": "lzma", "preset": 1, "filters": [{"id": 33}]},
                                "<f8", "preset"),
    "lzma raw without filters": ({"id": "lzma", "format": 3}, "<f8", "filters"),
    "lzma bad filter": ({"id": "lzma", "format": 3, "filters": [{"id": 99}]}, "<f8", "filters"),
    "lzma dict size": ({"id": "lzma", "format": 3, "filters": [{"id": 33, "dict_size": 1}]},
                       "<f8", "dict_size"),
    "delta object dtype": ({"id": "delta", "dtype": "|O"}, "<f8", "dtype"),
    "delta no dtype": ({"id": "delta"}, "<f8", "dtype"),
    "delta other dtype": ({"id": "delta", "dtype": "<i4"}, "<f8", "dtype"),
    "delta bad astype": ({"id": "delta", "dtype": "<f8", "astype": "x"}, "<f8", "astype"),
    "astype other decode": ({"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<i8"},
                            "<f8", "decode_dtype"),
    "astype text": ({"id": "astype", "encode_dtype": "<U3", "decode_dtype": "<f8"},
                    "<f8", "encode_dtype"),
    "fixedscaleoffset scale 0": ({"id": "fixedscaleoffset", "offset": 0, "scale": 0,
                                  "dtype": "<f8"}, "<f8", "scale"),
    "fixedscaleoffset NaN": ({"id": "fixedscaleoffset", "offset": "NaN", "scale": 1,
                              "dtype": "<f8"}, "<f8", "offset"),
    "fixedscaleoffset other dtype": ({"id": "fixedscaleoffset", "offset": 0, "scale": 1,
                                      "dtype": "<f4"}, "<f8", "dtype"),
    "quantize 400 digits": ({"id": "quantize", "digits": 400, "dtype": "<f8"}, "<f8", "digits"),
    "quantize integers": ({"id": "quantize", "digits": 2, "dtype": "<i8"}, "<i8", "dtype"),
    "bitround too many bits": ({"id": "bitround", "keepbits": 24}, "<f4", "keepbits"),
    "bitround on integers": ({"id": "bitround", "keepbits": 3}, "<i4", "keepbits"),
    "packbits on integers": ({"id": "packbits"}, "<i4", "bool"),
    "categorize labels": ({"id": "categorize", "labels": "ab", "dtype": "<U2"}, "<U2", "labels"),
    "categorize too many": ({"id": "categorize", "labels": [str(i) for i in range(256)],
                             "dtype": "<U3"}, "<U3", "astype"),
    "categorize long label": ({"id": "categorize", "labels": ["abcd"], "dtype": "<U3"},
                              "<U3", "dtype"),
    "categorize integers": ({"id": "categorize", "labels": ["a"], "dtype": "<i4"}, "<i4",
                            "dtype"),
    "shuffle not dividing": ({"id": "shuffle", "elementsize": 3}, "<f8", "elementsize"),
    "shuffle negative": ({"id": "shuffle", "elementsize": -1}, "<f8", "elementsize"),
    "crc32 location": ({"id": "crc32", "location": "middle"}, "<f8", "location"),
    "jenkins initval": ({"id": "jenkins_lookup3", "initval": -1}, "<f8", "initval"),
    "jenkins prefix": ({"id": "jenkins_lookup3", "prefix": "ab"}, "<f8", "prefix"),
    "vlen-array objects": ({"id": "vlen-array", "dtype": "|O"}, "|O", "dtype"),
}
# The same, as an object codec on an object array.
BAD_OBJECT_NUMCODECS: dict[str, tuple[dict[str, Any], str]] = {
    "json2 rot13": ({"id": "json2", "encoding": "rot13"}, "encoding"),
    "json2 indent": ({"id": "json2", "indent": 10**9}, "indent"),
    "json2 separators": ({"id": "json2", "separators": [1, 2]}, "separators"),
    "json2 three separators": ({"id": "json2", "separators": [",", ":", ";"]}, "separators"),
    "json2 strict text": ({"id": "json2", "strict": "no"}, "strict"),
    "msgpack2 raw text": ({"id": "msgpack2", "raw": "yes"}, "raw"),
}


def _fails_in_numcodecs(config: dict[str, Any], dtype: str) -> bool:
    """The oracle: does numcodecs itself fail to build, describe, encode or decode a
    chunk with this configuration?"""
    try:
        codec = numcodecs.get_codec(dict(config))
        repr(codec)
        data = np.zeros(16, dtype=dtype)
        codec.decode(codec.encode(data))
    except Exception:
        return True
    return False


@pytest.mark.parametrize("case", sorted(BAD_NUMCODECS))
@pytest.mark.parametrize("position", ["compressor", "filter"])
def test_bad_v2_configurations_are_refused_on_open(case: str, position: str) -> None:
    config, dtype, field = BAD_NUMCODECS[case]
    if dtype == "|O" and position == "compressor":
        pytest.skip("an object codec is refused as a compressor before its fields are read")
    chain = {"compressor": config} if position == "compressor" else {"filters": [config]}
    fill = "" if dtype.startswith("<U") else 0
    store = v2_store(dtype=dtype, fill_value=fill, **chain)
    with pytest.raises(MetadataError, match=f"codec '{config['id']}'.*{re.escape(field)}"):
        zk.open_array(store, mode="r")


@pytest.mark.parametrize("case", sorted(BAD_OBJECT_NUMCODECS))
def test_bad_v2_object_codec_configurations_are_refused_on_open(case: str) -> None:
    config, field = BAD_OBJECT_NUMCODECS[case]
    store = v2_store(dtype="|O", fill_value=None, filters=[config])
    with pytest.raises(MetadataError, match=f"codec '{config['id']}'.*{re.escape(field)}"):
        zk.open_array(store, mode="r")


# Cases numcodecs only trips over late: the refusal is what it saves users from.
NUMCODECS_FAILS = ["blosc shuffle 3", "blosc blocksize 2**31", "blosc typesize 2**31",
                   "blosc clevel 10", "zlib level 10", "gzip level 10", "bz2 level 0",
                   "zstd level 2**31", "lz4 acceleration 2**31", "lzma format auto",
                   "lzma check 3", "lzma raw without filters", "quantize 400 digits",
                   "bitround too many bits", "categorize too many", "shuffle not dividing",
                   "crc32 location", "jenkins initval"]


@pytest.mark.parametrize("case", NUMCODECS_FAILS)
def test_refused_configurations_do_fail_in_numcodecs(case: str) -> None:
    config, dtype, _ = BAD_NUMCODECS[case]
    assert _fails_in_numcodecs(config, dtype)


@pytest.mark.parametrize("case", sorted(BAD_NUMCODECS))
def test_bad_v3_numcodecs_configurations_are_refused_on_open(case: str) -> None:
    config, dtype, field = BAD_NUMCODECS[case]
    name = f"numcodecs.{config['id']}"
    entry = {"name": name, "configuration": {k: v for k, v in config.items() if k != "id"}}
    serialiser = {"name": "vlen-utf8"} if dtype == "|O" else LE
    if config["id"] in ARRAY_FILTERS:
        codecs = [entry, serialiser]
    elif config["id"] in OBJECT_CODECS:
        codecs = [entry]
    else:
        codecs = [serialiser, entry]
    data_type = data_type_v3_from_numpy(np.dtype(dtype), object_kind="string").json
    fill = {"b": False, "U": "", "O": ""}.get(np.dtype(dtype).kind, 0)
    with pytest.raises(MetadataError, match=f"codec '{re.escape(name)}'.*{re.escape(field)}"):
        zk.open_array(zarr_json(codecs, data_type=data_type, fill_value=fill), mode="r")


BAD_V3_CORE = {
    "blosc blocksize 2**31": ({"name": "blosc", "configuration": {
        "cname": "lz4", "blocksize": 2**31}}, "blocksize"),
    "blosc typesize 2**31": ({"name": "blosc", "configuration": {
        "cname": "lz4", "typesize": 2**31}}, "typesize"),
    "blosc clevel 10": ({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 10}},
                        "clevel"),
    "blosc shuffle": ({"name": "blosc", "configuration": {"cname": "lz4", "shuffle": "x"}},
                      "shuffle"),
    "blosc missing cname": ({"name": "blosc", "configuration": {"cname": MISSING_CNAME}},
                            "cname"),
    "gzip level 10": ({"name": "gzip", "configuration": {"level": 10}}, "level"),
    "zstd level 23": ({"name": "zstd", "configuration": {"level": 23}}, "level"),
    "zstd checksum": ({"name": "zstd", "configuration": {"checksum": 1}}, "checksum"),
    "crc32c configured": ({"name": "crc32c", "configuration": {"a": 1}}, "a"),
}


@pytest.mark.parametrize("case", sorted(BAD_V3_CORE))
def test_bad_v3_core_configurations_are_refused_on_open(case: str) -> None:
    entry, field = BAD_V3_CORE[case]
    with pytest.raises(MetadataError, match=f"codec '{entry['name']}'.*{re.escape(field)}"):
        zk.open_array(zarr_json([LE, entry]), mode="r")


def test_v3_array_codec_configurations_are_refused_on_open() -> None:
    for codecs, message in [
        ([{"name": "bytes", "configuration": {"endian": "middle"}}], "endian"),
        ([{"name": "transpose", "configuration": {"order": [0, 0]}}, LE], "order"),
        ([{"name": "scale_offset", "configuration": {"offset": 300}}, LE], "offset"),
        ([{"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}], "array -> bytes"),
        ([LE, {"name": "zstd"}, {"name": "numcodecs.shuffle",
                                  "configuration": {"elementsize": 4}}], "elementsize"),
    ]:
        data_type = "int8" if codecs[0]["name"] == "scale_offset" else "float64"
        with pytest.raises(MetadataError, match=message):
            zk.open_array(zarr_json(codecs, data_type=data_type), mode="r")


def test_every_numcodecs_codec_is_checked_or_refused() -> None:
    # numcodecs' own registry is the list of what zarrkit can be asked to run.
    assert set(codec_registry) - REFUSED_CODEC_IDS <= CHECKED_IDS


def test_unknown_ids_stay_unknown_codec_errors() -> None:
    with pytest.raises(UnknownCodecError, match="unknown codec id 'nope'"):
        zk.open_array(v2_store(compressor={"id": "nope"}), mode="r")
    with pytest.raises(UnknownCodecError, match="'numcodecs.nope'"):
        zk.open_array(zarr_json([LE, {"name": "numcodecs.nope"}]), mode="r")


# Edge values that are valid: each must write and read back, and zarr-python (an independent
# reader) must read what zarrkit wrote.
GOOD_V2 = {
    "blosc widest": ({"compressor": {"id": "blosc", "cname": "zstd", "clevel": 9, "shuffle": -1,
                                     "blocksize": 2**31 - 1}}, "<f8"),
    "blosc typesize": ({"compressor": {"id": "blosc", "clevel": 0, "shuffle": 2,
                                       "typesize": 255}}, "<f8"),
    "zlib -1": ({"compressor": {"id": "zlib", "level": -1}}, "<f8"),
    "gzip 9": ({"compressor": {"id": "gzip", "level": 9}}, "<f8"),
    "bz2 9": ({"compressor": {"id": "bz2", "level": 9}}, "<f8"),
    "zstd extremes": ({"compressor": {"id": "zstd", "level": -131072, "checksum": True},
                       "filters": [{"id": "zstd", "level": 22}]}, "<f8"),
    "lz4 acceleration": ({"compressor": {"id": "lz4", "acceleration": 2**31 - 1}}, "<f8"),
    "lzma raw lzma1": ({"compressor": {"id": "lzma", "format": 3, "filters": [
        {"id": lzma.FILTER_DELTA, "dist": 8}, {"id": lzma.FILTER_LZMA1, "dict_size": 4096}]}},
        "<f8"),
    "lzma alone": ({"compressor": {"id": "lzma", "format": 2, "preset": 9 | 2**31}}, "<f8"),
    "lzma xz sha256": ({"compressor": {"id": "lzma", "check": 10}}, "<f8"),
    "shuffle 8": ({"filters": [{"id": "shuffle", "elementsize": 8}],
                   "compressor": {"id": "crc32", "location": "end"}}, "<f8"),
    "delta to int16": ({"filters": [{"id": "delta", "dtype": "<i8", "astype": "<i2"}]}, "<i8"),
    "astype": ({"filters": [{"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}]},
               "<f8"),
    "fixedscaleoffset": ({"filters": [{"id": "fixedscaleoffset", "offset": 1, "scale": 10,
                                       "dtype": "<f8", "astype": "<i4"}]}, "<f8"),
    "quantize": ({"filters": [{"id": "quantize", "digits": 300, "dtype": "<f8"}]}, "<f8"),
    "bitround 52": ({"filters": [{"id": "bitround", "keepbits": 52}]}, "<f8"),
    "packbits": ({"filters": [{"id": "packbits"}], "compressor": {"id": "zlib"}}, "|b1"),
    "jenkins": ({"compressor": {"id": "jenkins_lookup3", "initval": 2**32 - 1}}, "<f8"),
    "fletcher32 and adler32": ({"filters": [{"id": "fletcher32"}],
                                "compressor": {"id": "adler32"}}, "<f8"),
}


@pytest.mark.parametrize("case", sorted(GOOD_V2))
def test_valid_edge_configurations_write_and_read(case: str) -> None:
    chain, dtype = GOOD_V2[case]
    store = v2_store(dtype=dtype, fill_value=False if dtype == "|b1" else 0, **chain)
    array = zk.open_array(store, mode="r+")
    data = (np.arange(16) % 3 == 0) if dtype == "|b1" else np.arange(16).astype(dtype) * 3
    array[:] = data
    assert np.array_equal(array[:], data)
    expected = _zarr_python_read(store)
    assert np.array_equal(np.asarray(expected), data)


def _zarr_python_read(store: dict[str, bytes]) -> Any:
    peer = ZarrMemoryStore()
    for key, value in store.items():
        peer._store_dict[key] = cpu.Buffer.from_bytes(bytes(value))
    return zarr.open_array(peer, mode="r")[:]


def test_valid_object_codecs_write_and_read() -> None:
    for config, values in [
        ({"id": "json2", "indent": 2, "separators": [", ", ": "], "sort_keys": False},
         [1, "a", None, [1, 2]]),
        ({"id": "msgpack2", "use_single_float": True}, ["a", 1, 2.5, None]),
        ({"id": "vlen-array", "dtype": "<i2"}, [np.arange(3, dtype="<i2")] * 4),
        ({"id": "categorize", "labels": ["x", "y"], "dtype": "|O", "astype": "<u2"},
         ["x", "y", "", "x"]),
    ]:
        store = v2_store(dtype="|O", shape=[4], chunks=[2], fill_value=None, filters=[config])
        array = zk.open_array(store, mode="r+")
        data = np.empty(4, dtype=object)
        data[:] = values if config["id"] != "vlen-array" else [v for v in values]
        array[:] = data
        assert [np.asarray(v).tolist() for v in array[:]] == [
            np.asarray(v).tolist() for v in values]


# --- 6. object chunks that claim too many items -----------------------------------------

VLEN_V2 = {"vlen-utf8": {"id": "vlen-utf8"}, "vlen-bytes": {"id": "vlen-bytes"},
           "vlen-array": {"id": "vlen-array", "dtype": "<i4"}}


@pytest.mark.parametrize("claimed", [2**28, 2**32 - 1, 3, 1])
@pytest.mark.parametrize("codec", sorted(VLEN_V2))
def test_v2_vlen_item_counts_are_checked_before_allocating(codec: str, claimed: int) -> None:
    store = v2_store(dtype="|O", shape=[2], chunks=[2], fill_value=None,
                     filters=[VLEN_V2[codec]])
    store["0"] = struct.pack("<I", claimed)
    array = zk.open_array(store, mode="r")
    with bounded(), pytest.raises(ChunkDecodeError, match="items"):
        array[:]


@pytest.mark.parametrize("codec", sorted(VLEN_V2))
def test_vlen_item_lengths_are_checked_against_the_bytes_left(codec: str) -> None:
    store = v2_store(dtype="|O", shape=[2], chunks=[2], fill_value=None,
                     filters=[VLEN_V2[codec]], compressor={"id": "zlib"})
    store["0"] = zlib.compress(struct.pack("<III", 2, 2**31 - 1, 4) + b"abcd")
    with bounded(), pytest.raises(ChunkDecodeError):
        zk.open_array(store, mode="r")[:]


BIG = [16384, 16384]  # 2**28 elements: a legitimate chunk shape, 2 GiB as objects


def test_a_huge_chunk_is_not_allocated_for_a_tiny_vlen_chunk() -> None:
    header = struct.pack("<I", 2**28)  # the right count, with no room for the items
    v2 = v2_store(dtype="|O", shape=BIG, chunks=BIG, fill_value=None,
                  filters=[{"id": "vlen-utf8"}])
    v2["0.0"] = header
    string = {"data_type": "string", "shape": BIG, "fill_value": "",
              "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": BIG}}}
    builtin = zarr_json([{"name": "vlen-utf8"}], **string)
    wrapped = zarr_json([{"name": "numcodecs.vlen-utf8", "configuration": {}}], **string)
    for store, key in ((v2, "0.0"), (builtin, "c/0/0"), (wrapped, "c/0/0")):
        store[key] = header
        array = zk.open_array(store, mode="r")
        with bounded(), pytest.raises(ChunkDecodeError, match="cannot hold"):
            array[:1, :1]


@pytest.mark.parametrize("codec", ["numcodecs.vlen-utf8", "numcodecs.vlen-bytes"])
def test_v3_numcodecs_vlen_counts_are_checked(codec: str) -> None:
    data_type = "string" if codec.endswith("utf8") else "bytes"
    store = zarr_json([{"name": codec, "configuration": {}}], data_type=data_type,
                      fill_value="", shape=[2],
                      chunk_grid={"name": "regular", "configuration": {"chunk_shape": [2]}})
    store["c/0"] = struct.pack("<I", 2**32 - 1)
    with bounded(), pytest.raises(ChunkDecodeError, match="items"):
        zk.open_array(store, mode="r")[:]


def _json2_chunk(items: list[Any], dtype: Any, shape: Any) -> bytes:
    return json.dumps([*items, dtype, shape]).encode()


HOSTILE_STRUCTURED = {
    "huge shape": _json2_chunk([1], "|O", [2**40]),
    "huge dtype": _json2_chunk([1, 2], "V1000000000", [2]),
    "too few items": _json2_chunk([1], "|O", [2]),
    "too many items": _json2_chunk([1, 2, 3], "|O", [2]),
    "ragged rows": _json2_chunk([[1, 2], [3]], "|O", [2, 2]),
    "wrong shape for the count": _json2_chunk([[1], [2]], "|O", [2, 1, 2]),
    "not a list": b'{"a": 1}',
    "no dtype": b"[[2]]",
    "negative shape": _json2_chunk([], "|O", [-2]),
    "deep nesting": b"[" * 100_000,
}


@pytest.mark.parametrize("case", sorted(HOSTILE_STRUCTURED))
@pytest.mark.parametrize("codec", ["json2", "msgpack2"])
def test_json_and_msgpack_chunks_must_hold_the_chunks_items(codec: str, case: str) -> None:
    data = HOSTILE_STRUCTURED[case]
    if codec == "msgpack2":
        import msgpack

        try:
            data = msgpack.packb(json.loads(data))
        except (ValueError, RecursionError):
            data = b"\xdd\xff\xff\xff\xff"  # an array header claiming 2**32 - 1 items
    store = v2_store(dtype="|O", shape=[4], chunks=[4], fill_value=None, filters=[{"id": codec}])
    store["0"] = data
    with bounded(), pytest.raises(ChunkDecodeError):
        zk.open_array(store, mode="r")[:]


@pytest.mark.parametrize("codec", [numcodecs.JSON(), numcodecs.MsgPack()])
def test_json_and_msgpack_chunks_from_numcodecs_decode_as_numcodecs_does(codec: Any) -> None:
    values = np.empty((2, 3), dtype=object)
    values[:] = [[1, "a", None], [[1, 2], {"k": "v"}, 2.5]]
    store = v2_store(dtype="|O", shape=[2, 3], chunks=[2, 3], fill_value=None,
                     filters=[codec.get_config()])
    store["0.0"] = codec.encode(values)
    expected = codec.decode(store["0.0"])
    assert zk.open_array(store, mode="r")[:].tolist() == expected.tolist() == values.tolist()


# --- 7. decompression bombs in every step ----------------------------------------------

BOMB = 64 * MiB  # eight times what a refusing read may allocate (BOMB_MEMORY)
BOMB_MEMORY = 8  # MiB


@functools.cache
def bomb(codec_id: str, size: int = BOMB) -> bytes:
    """A small stream that decompresses to ``size`` zero bytes, made without holding them."""
    block = bytes(MiB)
    if codec_id == "zstd":  # a frame that declares its size
        return zstandard.ZstdCompressor().compress(bytes(0)) if size == 0 else b"".join(
            _zstd_stream(size, declared=True))
    if codec_id == "zstd-undeclared":
        return b"".join(_zstd_stream(size, declared=False))
    factories = {"zlib": lambda: zlib.compressobj(1), "bz2": lambda: bz2.BZ2Compressor(9),
                 "gzip": lambda: zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS),
                 "lzma": lambda: lzma.LZMACompressor(preset=0)}
    compressor = factories[codec_id]()
    parts = [compressor.compress(block) for _ in range(size // MiB)]
    return b"".join([*parts, compressor.flush()])


def _zstd_stream(size: int, declared: bool) -> Iterator[bytes]:
    compressor = zstandard.ZstdCompressor(level=1, write_content_size=declared)
    stream = compressor.compressobj(size=size if declared else -1)
    for _ in range(size // MiB):
        yield stream.compress(bytes(MiB))
    yield stream.flush()


def _header_bomb(codec_id: str) -> bytes:
    """A real chunk whose header claims 64 MiB (blosc, lz4 trust their headers)."""
    codec = numcodecs.get_codec({"id": codec_id})
    data = bytearray(codec.encode(np.zeros(80, "u1")))
    offset = 4 if codec_id == "blosc" else 0
    struct.pack_into("<I", data, offset, BOMB)
    return bytes(data)


BOMB_IDS = ["zstd", "zstd-undeclared", "zlib", "gzip", "bz2", "lzma"]


def _bomb_for(codec_id: str) -> bytes:
    if codec_id in ("blosc", "lz4"):
        return _header_bomb(codec_id)
    # bz2 and lzma are slow to make: a quarter is still twice what a refusing read may use.
    return bomb(codec_id, BOMB if codec_id not in ("bz2", "lzma") else BOMB // 4)


def _config(codec_id: str) -> dict[str, Any]:
    return {"id": "zstd" if codec_id.startswith("zstd") else codec_id}


@pytest.mark.parametrize("codec_id", [*BOMB_IDS, "blosc", "lz4"])
def test_a_filter_bomb_without_compressor_is_refused(codec_id: str) -> None:
    # The report's case: no compressor, so the filter's output was never bounded.
    store = v2_store(dtype="|u1", shape=[10], chunks=[10], filters=[_config(codec_id)])
    store["0"] = _bomb_for(codec_id)
    array = zk.open_array(store, mode="r")
    with bounded(megabytes=BOMB_MEMORY), pytest.raises(ChunkDecodeError):
        array[:]


@pytest.mark.parametrize("codec_id", BOMB_IDS)
def test_a_bomb_in_a_middle_step_is_refused(codec_id: str) -> None:
    # filters [x, crc32] then zlib: the bomb is x's stream, inside a valid checksum and zlib.
    store = v2_store(dtype="|u1", shape=[10], chunks=[10],
                     filters=[_config(codec_id), {"id": "crc32"}], compressor={"id": "zlib"})
    store["0"] = numcodecs.Zlib().encode(numcodecs.CRC32().encode(_bomb_for(codec_id)))
    array = zk.open_array(store, mode="r")
    with bounded(megabytes=BOMB_MEMORY), pytest.raises(ChunkDecodeError):
        array[:]


def test_a_compressing_filter_after_an_object_codec_still_reads() -> None:
    store = v2_store(dtype="|O", shape=[2], chunks=[2], fill_value=None,
                     filters=[{"id": "vlen-bytes"}, {"id": "zstd"}])
    store["0"] = numcodecs.Zstd().encode(numcodecs.VLenBytes().encode(
        np.array([b"a", b"b"], dtype=object)))
    assert zk.open_array(store, mode="r")[:].tolist() == [b"a", b"b"]


@pytest.mark.parametrize("codec_id", BOMB_IDS)
def test_v3_numcodecs_compressor_bombs_are_refused(codec_id: str) -> None:
    name = "numcodecs." + _config(codec_id)["id"]
    store = zarr_json([LE, {"name": name, "configuration": {}}])
    store["c/0"] = _bomb_for(codec_id)
    with bounded(megabytes=BOMB_MEMORY), pytest.raises(ChunkDecodeError):
        zk.open_array(store, mode="r")[:]


def test_a_raw_lzma_filter_is_bounded_too() -> None:
    filters = [{"id": lzma.FILTER_LZMA2, "preset": 0}]
    compressor = lzma.LZMACompressor(lzma.FORMAT_RAW, filters=filters)
    data = b"".join([*(compressor.compress(bytes(MiB)) for _ in range(16)), compressor.flush()])
    store = v2_store(dtype="|u1", shape=[10], chunks=[10],
                     filters=[{"id": "lzma", "format": 3, "filters": filters}])
    store["0"] = data
    with bounded(megabytes=BOMB_MEMORY), pytest.raises(ChunkDecodeError):
        zk.open_array(store, mode="r")[:]


# --- the model of what each codec does, against numcodecs itself ---------------------------

FILTER_CONFIGS = [
    {"id": "bitround", "keepbits": k} for k in (0, 3, 10, 23, 52)
] + [
    {"id": "delta", "dtype": "<i8", "astype": "<i2"}, {"id": "delta", "dtype": "<f4"},
    {"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"},
    {"id": "fixedscaleoffset", "offset": 1, "scale": 4, "dtype": "<f8", "astype": "|u1"},
    {"id": "quantize", "digits": 2, "dtype": "<f4", "astype": "<f8"},
    {"id": "packbits"},
    {"id": "categorize", "labels": ["a", "b"], "dtype": "<U2", "astype": "<u2"},
    {"id": "shuffle", "elementsize": 4}, {"id": "crc32"}, {"id": "base64"},
]
INPUTS = ["<f8", ">f8", "<f4", "<f2", "<i8", "|b1", "<U2"]


@pytest.mark.parametrize("dtype", INPUTS)
@pytest.mark.parametrize("config", FILTER_CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_what_a_chain_accepts_numcodecs_encodes_as_predicted(config: dict[str, Any],
                                                              dtype: str) -> None:
    from zarrkit.codecs.numcodecs_config import Flow, flow_through
    from zarrkit.codecs.registry import codec_from_config

    codec = codec_from_config(config)
    try:
        predicted = flow_through(config["id"], codec, Flow.of_array(np.dtype(dtype), 13))
    except MetadataError:
        return  # refused: nothing to hold numcodecs to
    values = np.zeros(13, dtype=dtype)
    encoded = codec.encode(values)
    out = np.asarray(encoded) if predicted.dtype is not None else np.frombuffer(encoded, "u1")
    assert out.nbytes == predicted.nbytes or predicted.nbytes is None
    if predicted.dtype is not None:
        assert (out.dtype, out.size) == (predicted.dtype, predicted.count)
    codec.decode(encoded)


def test_v3_bitround_writes_what_zarr_python_reads() -> None:
    # bitround hands on the integers of the rounded bits; converting them back to floats
    # by value (as the encoded type once said) stored garbage that no reader could decode.
    data = np.linspace(0, 3.3, 8)
    store = zarr_json([{"name": "numcodecs.bitround", "configuration": {"keepbits": 10}}, LE],
                      shape=[8], chunk_grid={"name": "regular",
                                             "configuration": {"chunk_shape": [8]}})
    array = zk.open_array(store, mode="r+")
    array[:] = data
    assert np.allclose(array[:], data, rtol=2**-10)
    assert np.array_equal(_zarr_python_read(store), array[:])
