"""Fuzz targets: one function per kind of untrusted input, taking the raw bytes an attacker
controls.

A target returns when zarrkit handles the input: True when it parses or decodes, False when
it refuses with a :class:`~zarrkit.errors.ZarrkitError`. Anything else escapes and is a
finding: another
exception, or a decoded chunk of the wrong shape or dtype. A document that zarrkit accepts
must also be usable: its first chunk is written and read back (only for chunks of at most
:data:`ROUND_TRIP_BYTES`), which checks that every codec configuration accepted when an
array is opened can encode and decode.

The same functions serve the hypothesis tests next to this file and a coverage-guided
harness::

    import sys, atheris
    with atheris.instrument_imports():
        from fuzz import targets
    atheris.Setup(sys.argv, targets.parse_v3_document)
    atheris.Fuzz()

``CHUNK_TARGETS`` has one chunk-decoding target per codec chain, and
:func:`valid_chunks` the chunks of that chain to start mutating from;
:func:`decode_any_chunk` covers them all in one target. Each target ``name`` has its seeds
in ``name_seeds()``: documents zarrkit writes, the shared fixture stores' documents when
``../shared/fixtures`` exists, and valid chunks.
"""

from __future__ import annotations

import functools
import json
import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import zarrkit as zk
from zarrkit.errors import ZarrkitError
from zarrkit.metadata.jsonio import load_json_object
from zarrkit.metadata.v2 import ArrayMetadataV2, GroupMetadataV2, parse_attributes
from zarrkit.metadata.v3 import ArrayMetadataV3, RegularChunkGrid, parse_node_v3

ROUND_TRIP_BYTES = 1 << 20
# As tests/shared_fixtures.py says; computed here too, because the atheris harness imports
# this module on its own, without the tests directory on the path.
FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"

OUTCOMES: Counter[str] = Counter()
"""How many inputs each target saw, by outcome: ``"<target>:accepted"`` or
``"<target>:refused"`` (the fuzz tests report it)."""


def _run(target: str, body: Callable[[], None]) -> bool:
    """Run ``body`` and count the input: True when it completes, False when zarrkit
    refuses with a ZarrkitError; anything else propagates."""
    try:
        body()
    except ZarrkitError:
        OUTCOMES[f"{target}:refused"] += 1
        return False
    OUTCOMES[f"{target}:accepted"] += 1
    return True


def _chunk_nbytes(chunks: tuple[int, ...], dtype: np.dtype[Any]) -> int:
    return math.prod(chunks) * (dtype.itemsize or 8)


def _check_read(result: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> None:
    """A read has the selection's shape and the array's dtype; a 0-d read is a numpy
    scalar, as in numpy, whose array form is in native order and, for text, as long as
    its value: there only the kind can be compared. A 0-d read of objects is the object
    itself, as numpy's ``np.empty((), object)[()]`` is: any Python value."""
    out = np.asarray(result)
    assert out.shape == shape, (out.shape, shape)
    if shape:
        assert out.dtype == dtype, (out.dtype, dtype)
    elif dtype.kind not in "OT":  # a 0-d read of numpy's StringDType is a str too
        assert out.dtype.kind == dtype.kind, (out.dtype, dtype)


def _round_trip_first_chunk(store: dict[str, bytes], shape: tuple[int, ...],
                            chunks: tuple[int, ...], dtype: np.dtype[Any]) -> None:
    """Read, write and read again the region of the first chunk; the fill value must
    encode and decode (with ``write_empty_chunks``, so the chunk is really stored)."""
    if 0 in shape or _chunk_nbytes(chunks, dtype) > ROUND_TRIP_BYTES:
        return
    region = tuple(slice(0, min(c, s)) for c, s in zip(chunks, shape, strict=True))
    expected_shape = tuple(min(c, s) for c, s in zip(chunks, shape, strict=True))
    array = zk.open_array(store, mode="r+")
    before = array[region]
    _check_read(before, expected_shape, array.dtype)
    with zk.config.set(write_empty_chunks=True):
        array[region] = before
    _check_read(zk.open_array(store, mode="r")[region], expected_shape, array.dtype)


# --- documents -------------------------------------------------------------------------------


def parse_v2_array_document(data: bytes) -> bool:
    """A ``.zarray`` document: parsed, opened, and its first chunk written and read."""
    def body() -> None:
        metadata = ArrayMetadataV2.from_json(load_json_object(data, key=".zarray"))
        store = {".zarray": data}
        zk.open_array(store, mode="r")
        _round_trip_first_chunk(store, metadata.shape, metadata.chunks, metadata.dtype)
    return _run("v2 .zarray", body)


def parse_v2_group_document(data: bytes) -> bool:
    """A ``.zgroup`` document, opened as a group and listed."""
    def body() -> None:
        GroupMetadataV2.from_json(load_json_object(data, key=".zgroup"))
        group = zk.open_group({".zgroup": data}, mode="r", zarr_format=2)
        assert list(group.members()) == []
    return _run("v2 .zgroup", body)


def parse_v2_attributes(data: bytes) -> bool:
    """A ``.zattrs`` document, as a group's attributes, read then written back."""
    def body() -> None:
        attributes = parse_attributes(load_json_object(data, key=".zattrs"))
        store = {".zgroup": b'{"zarr_format": 2}', ".zattrs": data}
        group = zk.open_group(store, mode="r+", zarr_format=2)
        assert dict(group.attrs) == attributes
        group.attrs.update(dict(attributes))
        assert dict(zk.open_group(store, mode="r", zarr_format=2).attrs) == attributes
    return _run("v2 .zattrs", body)


def _walk(group: Any) -> None:
    """Open every member of a consolidated group, and the first chunk of its arrays."""
    for _, node in group.members(max_depth=None):
        dict(node.attrs)
        if isinstance(node, zk.Array) and 0 not in node.shape and _chunk_nbytes(
                tuple(node.chunks), node.dtype) <= ROUND_TRIP_BYTES:
            node[tuple(slice(0, c) for c in node.chunks)]


def parse_v2_consolidated(data: bytes) -> bool:
    """A ``.zmetadata`` document: the group opened through it and every member walked."""
    def body() -> None:
        store = {".zgroup": b'{"zarr_format": 2}', ".zmetadata": data}
        _walk(zk.open_group(store, mode="r", consolidated=True))
    return _run("v2 .zmetadata", body)


def parse_v3_document(data: bytes) -> bool:
    """A ``zarr.json``: parsed; an array is opened and its first chunk written and read."""
    def body() -> None:
        node = parse_node_v3(load_json_object(data, key="zarr.json"))
        store = {"zarr.json": data}
        if isinstance(node, ArrayMetadataV3):
            zk.open_array(store, mode="r")
            if isinstance(node.chunk_grid, RegularChunkGrid):
                _round_trip_first_chunk(store, node.shape, node.chunks, node.dtype)
        else:
            _walk(zk.open_group(store, mode="r"))
    return _run("v3 zarr.json", body)


def parse_v3_consolidated(data: bytes) -> bool:
    """A group ``zarr.json`` read with its consolidated metadata, every member walked."""
    return _run("v3 consolidated", lambda: _walk(
        zk.open_group({"zarr.json": data}, mode="r", consolidated=True)))


DOCUMENT_TARGETS: dict[str, Callable[[bytes], bool]] = {
    ".zarray": parse_v2_array_document,
    ".zgroup": parse_v2_group_document,
    ".zattrs": parse_v2_attributes,
    ".zmetadata": parse_v2_consolidated,
    "zarr.json": parse_v3_document,
    "zarr.json consolidated": parse_v3_consolidated,
}


# --- chunks ----------------------------------------------------------------------------------

_V2_SHAPE = [6, 5]
_V2_CHAINS: dict[str, tuple[str, Any, list[dict[str, Any]] | None]] = {
    # name: (dtype, compressor, filters)
    "v2 raw": ("<i4", None, None),
    "v2 zlib": ("<i4", {"id": "zlib", "level": 1}, None),
    "v2 gzip": ("<f8", {"id": "gzip", "level": 1}, None),
    "v2 bz2": ("<u2", {"id": "bz2", "level": 1}, None),
    "v2 lzma": ("<u2", {"id": "lzma"}, None),
    "v2 lz4": (">i8", {"id": "lz4"}, None),
    "v2 zstd": ("<f4", {"id": "zstd", "level": 1, "checksum": True}, None),
    "v2 blosc lz4": ("<i4", {"id": "blosc", "cname": "lz4", "shuffle": 1}, None),
    "v2 blosc zstd bitshuffle": ("<f8", {"id": "blosc", "cname": "zstd", "shuffle": 2}, None),
    "v2 zstd filter": ("<i2", None, [{"id": "zstd"}]),
    "v2 delta zlib": ("<i8", {"id": "zlib"}, [{"id": "delta", "dtype": "<i8", "astype": "<i2"}]),
    "v2 fixedscaleoffset": ("<f8", {"id": "zstd"}, [
        {"id": "fixedscaleoffset", "offset": 0, "scale": 10, "dtype": "<f8", "astype": "<u2"}]),
    "v2 astype quantize": ("<f8", None, [
        {"id": "quantize", "digits": 3, "dtype": "<f8"},
        {"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}]),
    "v2 bitround": ("<f4", {"id": "zstd"}, [{"id": "bitround", "keepbits": 10}]),
    "v2 packbits": ("|b1", {"id": "zlib"}, [{"id": "packbits"}]),
    "v2 shuffle checksums": ("<i4", {"id": "crc32"}, [
        {"id": "shuffle", "elementsize": 4}, {"id": "adler32", "location": "end"},
        {"id": "fletcher32"}, {"id": "jenkins_lookup3"}]),
    "v2 categorize": ("<U3", {"id": "zlib"}, [
        {"id": "categorize", "labels": ["a", "bb", "ccc"], "dtype": "<U3"}]),
    "v2 vlen-utf8": ("|O", {"id": "zstd"}, [{"id": "vlen-utf8"}]),
    "v2 vlen-bytes": ("|O", None, [{"id": "vlen-bytes"}]),
    "v2 vlen-array": ("|O", None, [{"id": "vlen-array", "dtype": "<i2"}]),
    "v2 json2": ("|O", None, [{"id": "json2"}]),
    "v2 msgpack2": ("|O", None, [{"id": "msgpack2"}]),
}

_LE = {"name": "bytes", "configuration": {"endian": "little"}}
_V3_CHAINS: dict[str, tuple[str, list[Any]]] = {
    # name: (data_type, codecs)
    "v3 bytes": ("int32", [_LE]),
    "v3 big-endian gzip": ("float64", [{"name": "bytes", "configuration": {"endian": "big"}},
                                       {"name": "gzip", "configuration": {"level": 1}}]),
    "v3 zstd crc32c": ("uint16", [_LE, {"name": "zstd", "configuration": {"level": 1}},
                                  {"name": "crc32c"}]),
    "v3 blosc": ("float32", [_LE, {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4}}]),
    "v3 transpose": ("int16", [{"name": "transpose", "configuration": {"order": [1, 0]}}, _LE,
                               {"name": "zstd"}]),
    "v3 scale_offset": ("int32", [{"name": "scale_offset", "configuration": {
        "offset": 3, "scale": 2}}, _LE]),
    "v3 vlen-utf8": ("string", [{"name": "vlen-utf8"}, {"name": "zstd"}]),
    "v3 vlen-bytes": ("bytes", [{"name": "vlen-bytes"}]),
    "v3 numcodecs filters": ("float64", [
        {"name": "numcodecs.delta", "configuration": {"dtype": "<f8"}}, _LE,
        {"name": "numcodecs.zlib", "configuration": {"level": 1}},
        {"name": "numcodecs.crc32", "configuration": {}}]),
    "v3 numcodecs shuffle": ("int64", [_LE, {"name": "numcodecs.shuffle",
                                             "configuration": {"elementsize": 8}},
                                       {"name": "numcodecs.lz4", "configuration": {}}]),
    "v3 numcodecs vlen-utf8": ("string", [{"name": "numcodecs.vlen-utf8", "configuration": {}}]),
    "v3 numcodecs json2": ("string", [{"name": "numcodecs.json2", "configuration": {}}]),
    "v3 sharding": ("uint8", [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [3, 5], "codecs": [{"name": "bytes"}, {"name": "zstd"}],
        "index_codecs": [_LE, {"name": "crc32c"}], "index_location": "end"}}]),
}

CHAINS = sorted([*_V2_CHAINS, *_V3_CHAINS])


def _sample_values(dtype: np.dtype[Any], shape: list[int], seed: int) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    count = math.prod(shape)
    if dtype.kind == "O":
        words = ["", "a", "éß", "x" * 40, "∂"]
        values = np.empty(count, dtype=object)
        values[:] = [words[i] for i in rng.integers(0, len(words), count)]
        return values.reshape(shape)
    if dtype.kind == "U":
        return rng.choice(np.array(["a", "bb", "ccc", "zz"], dtype=dtype), size=shape)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    return (rng.integers(-50, 50, size=shape) * (1 + seed)).astype(dtype)


@functools.cache
def _store_for(chain: str) -> tuple[dict[str, bytes], str]:
    """An empty store holding one array of the chain (shape = one chunk), and the key of
    its chunk."""
    if chain in _V2_CHAINS:
        dtype, compressor, filters = _V2_CHAINS[chain]
        fill = None if dtype == "|O" else ("" if dtype.startswith("<U") else 0)
        document = {"zarr_format": 2, "shape": _V2_SHAPE, "chunks": _V2_SHAPE, "dtype": dtype,
                    "compressor": compressor, "fill_value": fill, "order": "C",
                    "filters": filters}
        return {".zarray": json.dumps(document).encode()}, "0.0"
    data_type, codecs = _V3_CHAINS[chain]
    fill: Any = "" if data_type in ("string", "bytes") else 0
    document = {"zarr_format": 3, "node_type": "array", "shape": _V2_SHAPE,
                "data_type": data_type, "fill_value": fill, "codecs": codecs,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": _V2_SHAPE}},
                "chunk_key_encoding": {"name": "default"}}
    return {"zarr.json": json.dumps(document).encode()}, "c/0/0"


@functools.cache
def valid_chunks(chain: str) -> tuple[bytes, ...]:
    """Stored chunks of ``chain`` holding a few kinds of values, written by zarrkit."""
    metadata_store, key = _store_for(chain)
    chunks = []
    for seed in range(3):
        store = dict(metadata_store)
        array = zk.open_array(store, mode="r+")
        values = _sample_values(array.dtype, _V2_SHAPE, seed)
        if chain in ("v2 vlen-bytes", "v3 vlen-bytes"):
            values = np.vectorize(lambda s: s.encode(), otypes=[object])(values)
        if chain == "v2 vlen-array":
            values = np.vectorize(lambda s: np.arange(len(s), dtype="<i2"), otypes=[object])(
                values)
        with zk.config.set(write_empty_chunks=True):
            array[...] = values
        chunks.append(store[key])
    return tuple(chunks)


def decode_chunk(chain: str, data: bytes) -> bool:
    """Read ``data`` as the one stored chunk of an array of ``chain``."""
    def body() -> None:
        metadata_store, key = _store_for(chain)
        array = zk.open_array({**metadata_store, key: data}, mode="r")
        _check_read(array[...], tuple(_V2_SHAPE), array.dtype)
    return _run(f"chunk {chain}", body)


CHUNK_TARGETS: dict[str, Callable[[bytes], bool]] = {
    chain: functools.partial(decode_chunk, chain) for chain in CHAINS
}


def decode_any_chunk(data: bytes) -> bool:
    """Every chain in one target: the first byte picks the chain, the rest is its chunk."""
    chain = CHAINS[data[0] % len(CHAINS)] if data else CHAINS[0]
    return decode_chunk(chain, data[1:])


def decode_any_chunk_seeds() -> list[bytes]:
    """The valid chunks of every chain, behind the byte that picks it."""
    return [bytes([i]) + chunk for i, chain in enumerate(CHAINS) for chunk in valid_chunks(chain)]


# --- seed documents --------------------------------------------------------------------------

DOCUMENT_NAMES = (".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json")


def fixture_documents() -> list[tuple[str, bytes]]:
    """``(name, document)`` of the shared fixture stores (none when they are absent),
    thinned evenly to about 60 of each name."""
    corpus = FIXTURES / "corpus"
    if not corpus.is_dir():
        return []
    by_name: dict[str, list[tuple[str, bytes]]] = {}
    for path in sorted(corpus.rglob("*")):
        if path.name in DOCUMENT_NAMES and path.is_file():
            by_name.setdefault(path.name, []).append((path.name, path.read_bytes()))
    return [d for docs in by_name.values() for d in docs[:: max(1, len(docs) // 60)]]


@functools.cache
def zarrkit_documents() -> tuple[tuple[str, bytes], ...]:
    """``(name, document)`` of what zarrkit writes: arrays with every kind of chain,
    groups with attributes, consolidated metadata, in both formats."""
    store: dict[str, bytes] = {}
    for fmt in (2, 3):
        root = zk.open_group(store, mode="w", path=f"f{fmt}", zarr_format=fmt,
                             attributes={"title": "t", "nested": {"a": [1, 2.5, None]}})
        root.create_array("plain", shape=(7, 3), chunks=(4, 2), dtype="f8", fill_value=np.nan)
        root.create_array("text", shape=(5,), chunks=(2,), dtype=str)
        root.create_array("fixed", shape=(2,), dtype="S3", fill_value=b"ab")
        root.create_array("blosc", shape=(9,), chunks=(4,), dtype="i2",
                          compressors=[{"name": "blosc", "configuration": {
                              "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle"}}])
        root.create_array("delta", shape=(9,), chunks=(4,), dtype="i8",
                          filters=[{"id": "delta", "dtype": "<i8", "astype": "<i2"}]
                          if fmt == 2 else [{"name": "numcodecs.delta",
                                             "configuration": {"dtype": "<i8"}}])
        root.create_group("sub/deeper").create_array("x", shape=(), dtype="u1")
        zk.consolidate_metadata(store, path=f"f{fmt}")
    zk.create_array(store, name="f3/sharded", shape=(8, 8), chunks=(2, 2), shards=(4, 4),
                    dtype="u2")
    return tuple((key.rsplit("/", 1)[-1], value) for key, value in sorted(store.items())
                 if key.rsplit("/", 1)[-1] in DOCUMENT_NAMES)


def all_documents() -> list[tuple[str, bytes]]:
    """Every document of the fixtures and of zarrkit, by name."""
    return fixture_documents() + list(zarrkit_documents())


def document_seeds() -> list[tuple[str, bytes]]:
    """The seed documents, by name."""
    return all_documents()


def _named(name: str) -> list[bytes]:
    return [data for kind, data in document_seeds() if kind == name]


def parse_v2_array_document_seeds() -> list[bytes]:
    """Seeds of :func:`parse_v2_array_document`."""
    return _named(".zarray")


def parse_v2_group_document_seeds() -> list[bytes]:
    """Seeds of :func:`parse_v2_group_document`."""
    return _named(".zgroup")


def parse_v2_attributes_seeds() -> list[bytes]:
    """Seeds of :func:`parse_v2_attributes`."""
    return _named(".zattrs")


def parse_v2_consolidated_seeds() -> list[bytes]:
    """Seeds of :func:`parse_v2_consolidated`."""
    return _named(".zmetadata")


def parse_v3_document_seeds() -> list[bytes]:
    """Seeds of :func:`parse_v3_document`."""
    return _named("zarr.json")


def parse_v3_consolidated_seeds() -> list[bytes]:
    """Seeds of :func:`parse_v3_consolidated`: groups with a snapshot."""
    return [d for d in _named("zarr.json") if b'"consolidated_metadata"' in d]
