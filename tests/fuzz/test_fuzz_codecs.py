"""Bounded fuzzing of codecs: stored chunks of every codec chain (valid chunks mutated,
random bytes, truncations), and generated codec configurations (whatever is accepted when
an array is opened must encode and decode its chunks).

Property (see ``targets``): a chunk decodes to exactly the chunk's shape and dtype, or is
refused with a ZarrkitError; a document is refused with a ZarrkitError, or is usable.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import targets
from .test_fuzz_metadata import (
    DTYPES,
    JSON_VALUES,
    SMALL_INTS,
    V2_CODEC,
    V3_CODEC,
    maybe,
    numcodecs_configs,
    optional_fields,
)

FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Values that headers (item counts, lengths, sizes) are most likely to be wrong with.
HOSTILE_WORDS = [0, 1, 2, 3, 29, 30, 31, 255, 2**16, 2**28, 2**31 - 1, 2**31, 2**32 - 1]


@st.composite
def mutated_chunks(draw: st.DrawFn, chain: str) -> bytes:
    """A valid chunk of ``chain`` with one to four mutations."""
    buffer = bytearray(draw(st.sampled_from(targets.valid_chunks(chain))))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["xor", "word", "truncate", "cut", "dup", "insert", "splice"]))
        at = draw(st.integers(0, max(0, len(buffer) - 1)))
        if op == "xor" and buffer:
            buffer[at] ^= draw(st.integers(1, 255))
        elif op == "word":  # a header field: count, length, size
            word = struct.pack("<I", draw(st.sampled_from(HOSTILE_WORDS)))
            buffer[at:at + 4] = word
        elif op == "truncate":
            del buffer[at:]
        elif op == "cut":
            del buffer[at:at + draw(st.integers(1, 16))]
        elif op == "dup":
            buffer[at:at] = buffer[at:at + draw(st.integers(1, 32))]
        elif op == "insert":
            buffer[at:at] = draw(st.binary(min_size=1, max_size=16))
        else:  # a piece of another valid chunk
            other = draw(st.sampled_from(targets.valid_chunks(chain)))
            start = draw(st.integers(0, max(0, len(other) - 1)))
            buffer[at:] = other[start:]
    return bytes(buffer)


@st.composite
def truncations(draw: st.DrawFn, chain: str) -> bytes:
    data = draw(st.sampled_from(targets.valid_chunks(chain)))
    return data[:draw(st.integers(0, max(0, len(data) - 1)))]


def chunks(chain: str) -> st.SearchStrategy[bytes]:
    return st.one_of(mutated_chunks(chain), mutated_chunks(chain), truncations(chain),
                     st.binary(max_size=400))


@pytest.mark.parametrize("chain", targets.CHAINS)
def test_valid_chunks_decode(chain: str) -> None:
    for data in targets.valid_chunks(chain):
        assert targets.CHUNK_TARGETS[chain](data)


@pytest.mark.parametrize("chain", targets.CHAINS)
def test_hostile_chunks(chain: str) -> None:
    @FUZZ
    @given(chunks(chain))
    def run(data: bytes) -> None:
        targets.CHUNK_TARGETS[chain](data)

    run()


# --- generated codec configurations ------------------------------------------------------

FILL = {"|O": None, "<U3": "", "|S4": "", "|b1": False}


@st.composite
def v2_chains(draw: st.DrawFn) -> bytes:
    """A .zarray document of a small array with generated filters and compressor."""
    dtype = draw(DTYPES)
    filters = draw(st.lists(V2_CODEC, max_size=2))
    if dtype == "|O":  # an object codec first, to get past that check
        codec_id, config = draw(numcodecs_configs(OBJECT_IDS))
        filters = [{"id": codec_id, **config}, *filters]
    document = {"zarr_format": 2, "shape": [5, 3], "chunks": [4, 2], "dtype": dtype,
                "compressor": draw(st.none() | V2_CODEC), "fill_value": FILL.get(dtype, 0),
                "order": draw(st.sampled_from(["C", "F"])), "filters": filters or None}
    return json.dumps(document).encode()


OBJECT_IDS = ("vlen-utf8", "vlen-bytes", "vlen-array", "json2", "msgpack2", "categorize")


@FUZZ
@given(v2_chains())
def test_generated_v2_codec_configurations(document: bytes) -> None:
    targets.parse_v2_array_document(document)


V3_DATA_TYPES = st.sampled_from(["float64", "float32", "int64", "int16", "uint8", "bool",
                                 "string", "bytes", "complex64", "bfloat16"])
SERIALISERS = {"string": {"name": "vlen-utf8"}, "bytes": {"name": "vlen-bytes"}}


@st.composite
def v3_chains(draw: st.DrawFn) -> bytes:
    """A zarr.json of a small array with generated codecs around its serialiser."""
    data_type = draw(V3_DATA_TYPES)
    serialiser = SERIALISERS.get(data_type, {"name": "bytes",
                                             "configuration": {"endian": "little"}})
    numcodecs = numcodecs_configs().map(
        lambda c: {"name": f"numcodecs.{c[0]}", "configuration": c[1]})
    codecs = [*draw(st.lists(st.one_of(V3_CODEC, numcodecs), max_size=2)),
              draw(maybe(st.just(serialiser))),
              *draw(st.lists(st.one_of(V3_CODEC, numcodecs), max_size=2))]
    fill: Any = {"string": "", "bytes": "", "bool": False, "complex64": [0, 0]}.get(data_type, 0)
    document = {"zarr_format": 3, "node_type": "array", "shape": [5, 3],
                "data_type": data_type, "fill_value": fill, "codecs": codecs,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 2]}},
                "chunk_key_encoding": {"name": "default"}}
    return json.dumps(document).encode()


@FUZZ
@given(v3_chains())
def test_generated_v3_codec_configurations(document: bytes) -> None:
    targets.parse_v3_document(document)


@st.composite
def one_v3_compressor(draw: st.DrawFn) -> bytes:
    """One core bytes -> bytes codec with generated fields, after a valid serialiser."""
    name = draw(st.sampled_from(["gzip", "zstd", "blosc", "crc32c"]))
    configuration = draw(optional_fields(
        level=SMALL_INTS, checksum=maybe(st.booleans()),
        cname=maybe(st.sampled_from(["lz4", "lz4hc", "zstd", "zlib", "blosclz", "snappy"])),
        clevel=SMALL_INTS, typesize=SMALL_INTS, blocksize=SMALL_INTS,
        shuffle=maybe(st.sampled_from(["noshuffle", "shuffle", "bitshuffle", 0, 1, 2, -1])),
        junk=JSON_VALUES))
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}},
              {"name": name, "configuration": configuration}]
    document = {"zarr_format": 3, "node_type": "array", "shape": [9], "data_type": "int32",
                "fill_value": 0, "codecs": codecs, "chunk_key_encoding": {"name": "default"},
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}}}
    return json.dumps(document).encode()


@FUZZ
@given(one_v3_compressor())
def test_generated_v3_compressor_configurations(document: bytes) -> None:
    targets.parse_v3_document(document)
