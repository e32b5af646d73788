"""Packed properties as DataAxesFormats.jl writes them: "indexed+zipped" shards.

A packed property is a Zarr v3 ``sharding_indexed`` array of one shard (key ``c/0``, or
``c/0/0`` for a matrix) whose bytes are at the same time a Zarr shard and a ZIP archive
(the array's ``daf_packed_format`` attribute says ``"indexed+zipped"``). The Julia package
relies on the second reading: its converter to ``FilesDaf`` hard-links such a shard and
reads it through the ZIP central directory. The layout, as ``IncrementalShardWriter`` in
the package's ``src/packed_format.jl`` writes it:

* the Zarr shard index at offset 0: ``(offset, size)`` of every inner chunk as
  little-endian ``uint64`` pairs, in C order of the inner chunk grid, then their CRC-32C
  (``bytes`` + ``crc32c`` index codecs, ``index_location: "start"``). Every inner chunk is
  stored, even one equal to the fill value everywhere; the last ones along a dimension are
  padded with the fill value to the whole inner chunk shape;
* then, for every inner chunk in that order, a ZIP local file header followed by the
  encoded inner chunk (the index offset points past the header, at the chunk's bytes).
  The member is STORED (method 0): its data is the blosc frame verbatim, its CRC-32 that
  of the frame. Its name is ``c/<i>`` (``c/<i>/<j>``), each coordinate zero-padded to the
  digits of the largest one, so that every record of the shard has the same size;
* then a STORED member ``codec.json``: the inner codecs as a compact JSON list with sorted
  keys, for ZIP readers that do not know the Zarr metadata;
* then the central directory (the chunks in order, then ``codec.json``) and the ZIP64 end
  records (ZIP64 end of central directory, its locator, the end record with ZIP64
  sentinels).

Every header carries a ZIP64 extra field (sizes; and the header offset in the central
directory) with ``0xFFFFFFFF`` in the fixed fields, version 4.5, the UTF-8 name flag, the
DOS time 0 and date 1980-01-01 (no clock), made by Unix 3.0, mode ``0o100644``; there is
no data descriptor, no alignment padding and no comment. Zarr.jl's blosc codec compresses
the serialised chunk as bytes, so the blosc frames have a type size of 1 whatever the
``typesize`` in the metadata (which still names the element size).

>>> import zipfile, io
>>> shard = encode_shard(np.arange(6, dtype="f8"), (4,))
>>> with zipfile.ZipFile(io.BytesIO(shard)) as archive:
...     archive.namelist(), archive.testzip()
(['c/0', 'c/1', 'codec.json'], None)
"""

from __future__ import annotations

import json
import math
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.codecs.v3.pipeline import CodecPipelineV3
from zarrkit.codecs.v3.sharding import ShardingCodec
from zarrkit.codecs.v3.spec import ChunkSpec
from zarrkit.errors import DafValueError
from zarrkit.paths import join_path
from zarrkit.storage.base import Store
from zarrkit.storage.zip_format import (
    CENTRAL,
    CENTRAL_SIG,
    EOCD,
    EOCD64,
    EOCD64_SIG,
    EOCD_SIG,
    EXTRA_HEADER,
    FLAG_UTF8,
    LOCAL,
    LOCAL_SIG,
    LOCATOR64,
    LOCATOR64_SIG,
    SATURATED,
    STORED,
    UNIX_FILE_ATTRS,
    VERSION_ZIP64,
    ZIP64_EXTRA_ID,
)

#: "version made by" of every record: Unix (3), ZIP 3.0 (Julia's MmapZipStores).
MADE_BY = 0x031E
#: DOS date 1980-01-01 and time 00:00:00: Julia writes no clock into its headers.
DOS_DATE = 0x0021
DOS_TIME = 0
#: The member after the chunks that records the inner codecs (STORED codecs only).
CODEC_JSON_NAME = b"codec.json"
#: The blosc type size of Julia's frames (Zarr.jl compresses the chunk's bytes).
JULIA_BLOSC_TYPESIZE = 1

_U64 = struct.Struct("<Q")
_LOCAL_ZIP64 = struct.Struct("<HHQQ")  # id, size, uncompressed size, compressed size
_CENTRAL_ZIP64 = struct.Struct("<HHQQQ")  # ... and the local header offset
_EOCD64_RECORD_SIZE = EOCD64.size - 12  # the record without its signature and this field


@dataclass(frozen=True)
class Member:
    """One member of a shard's ZIP side: its name, where its local header and its data
    start in the shard, its size (stored: compressed = uncompressed) and CRC-32.

    >>> Member(b"c/0", 36, 89, 12, 0).end
    101
    """

    name: bytes
    header_offset: int
    data_offset: int
    size: int
    crc: int

    @property
    def end(self) -> int:
        """The offset just past the member's data."""
        return self.data_offset + self.size


def member_name(coords: Sequence[int], chunks_per_shard: Sequence[int]) -> bytes:
    """The ZIP member name of the inner chunk at ``coords`` (Zarr order): ``c/`` and the
    coordinates, each zero-padded to the digits of the largest one along its dimension.

    >>> member_name((3,), (12,)), member_name((0, 7), (1, 8))
    (b'c/03', b'c/0/7')
    """
    parts = [str(c).zfill(len(str(max(n - 1, 0))))
             for c, n in zip(coords, chunks_per_shard, strict=True)]
    return ("c/" + "/".join(parts)).encode()


def codec_json(codecs: Sequence[dict[str, Any]]) -> bytes:
    """The content of the ``codec.json`` member: the inner codecs as Julia's JSON writer
    prints them (compact, keys sorted).

    >>> codec_json([{"name": "bytes", "configuration": {"endian": "little"}}])
    b'[{"configuration":{"endian":"little"},"name":"bytes"}]'
    """
    return json.dumps(list(codecs), sort_keys=True, separators=(",", ":")).encode()


def local_header(name: bytes, size: int, crc: int) -> bytes:
    """The local file header of a STORED member of a shard (with its ZIP64 extra field).

    >>> len(local_header(b"c/0", 5, 0))
    53
    """
    return (LOCAL.pack(LOCAL_SIG, VERSION_ZIP64, FLAG_UTF8, STORED, DOS_TIME, DOS_DATE, crc,
                       SATURATED, SATURATED, len(name), _LOCAL_ZIP64.size)
            + name + _LOCAL_ZIP64.pack(ZIP64_EXTRA_ID, _LOCAL_ZIP64.size - EXTRA_HEADER.size,
                                       size, size))


def central_header(member: Member) -> bytes:
    """The central directory record of a STORED member of a shard.

    >>> len(central_header(Member(b"c/0", 36, 89, 12, 0)))
    77
    """
    name = member.name
    return (CENTRAL.pack(CENTRAL_SIG, MADE_BY, VERSION_ZIP64, FLAG_UTF8, STORED, DOS_TIME,
                          DOS_DATE, member.crc, SATURATED, SATURATED, len(name),
                          _CENTRAL_ZIP64.size, 0, 0, 0, UNIX_FILE_ATTRS, SATURATED)
            + name + _CENTRAL_ZIP64.pack(ZIP64_EXTRA_ID,
                                         _CENTRAL_ZIP64.size - EXTRA_HEADER.size,
                                         member.size, member.size, member.header_offset))


def end_records(count: int, directory_offset: int, directory_size: int) -> bytes:
    """The ZIP64 end of central directory record, its locator and the end record (with
    ZIP64 sentinels) after a central directory of ``count`` records.

    >>> len(end_records(3, 1000, 231))
    98
    """
    end64_offset = directory_offset + directory_size
    return (EOCD64.pack(EOCD64_SIG, _EOCD64_RECORD_SIZE, MADE_BY, VERSION_ZIP64, 0, 0, count,
                        count, directory_size, directory_offset)
            + LOCATOR64.pack(LOCATOR64_SIG, 0, end64_offset, 1)
            + EOCD.pack(EOCD_SIG, 0, 0, 0xFFFF, 0xFFFF, SATURATED, SATURATED, 0))


def assemble_shard(index: bytes, chunks: Sequence[bytes], chunks_per_shard: Sequence[int],
                   codecs: Sequence[dict[str, Any]]) -> tuple[bytes, list[Member]]:
    """The dual-format shard of the encoded inner ``chunks`` (C order of the inner chunk
    grid ``chunks_per_shard``) and its members (the chunks, then ``codec.json``).
    ``index`` is a placeholder of the encoded index's size: the caller patches the real
    index in at offset 0 once the chunk offsets are known (see :func:`encode_shard`).

    >>> shard, members = assemble_shard(bytes(36), [b"ab", b"c"], (2,), [])
    >>> [(m.name, m.data_offset, m.size) for m in members]
    [(b'c/0', 89, 2), (b'c/1', 144, 1), (b'codec.json', 205, 2)]
    """
    if len(chunks) != math.prod(chunks_per_shard):
        raise DafValueError(f"{len(chunks)} inner chunks for a grid of {tuple(chunks_per_shard)}")
    parts: list[bytes] = [index]
    members: list[Member] = []
    position = len(index)

    def add(name: bytes, data: bytes) -> None:
        nonlocal position
        crc = zlib.crc32(data)
        header = local_header(name, len(data), crc)
        members.append(Member(name, position, position + len(header), len(data), crc))
        parts.extend((header, data))
        position += len(header) + len(data)

    for coords, data in zip(np.ndindex(*chunks_per_shard), chunks, strict=True):
        add(member_name(coords, chunks_per_shard), data)
    add(CODEC_JSON_NAME, codec_json(codecs))
    directory = b"".join(central_header(member) for member in members)
    parts.append(directory)
    parts.append(end_records(len(members), position, len(directory)))
    return b"".join(parts), members


def julia_inner_codecs(codecs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The inner codecs that encode chunks as Zarr.jl does: ``codecs`` with the blosc
    ``typesize`` set to 1 (Zarr.jl hands blosc the chunk's bytes, not its elements).

    >>> julia_inner_codecs([{"name": "blosc", "configuration": {"typesize": 8}}])
    [{'name': 'blosc', 'configuration': {'typesize': 1}}]
    """
    out: list[dict[str, Any]] = []
    for codec in codecs:
        if codec.get("name") == "blosc":
            configuration = dict(codec.get("configuration") or {})
            configuration["typesize"] = JULIA_BLOSC_TYPESIZE
            codec = {**codec, "configuration": configuration}
        out.append(codec)
    return out


def inner_blocks(data: np.ndarray[Any, Any], inner: Sequence[int], fill_value: Any
                 ) -> list[np.ndarray[Any, Any]]:
    """The inner chunks of ``data`` in C order of their grid, those reaching past its end
    padded with ``fill_value`` to the whole ``inner`` shape.

    >>> [b.tolist() for b in inner_blocks(np.arange(5), (2,), 0)]
    [[0, 1], [2, 3], [4, 0]]
    """
    inner = tuple(int(n) for n in inner)
    grid = tuple(-(-s // n) for s, n in zip(data.shape, inner, strict=True))
    blocks: list[np.ndarray[Any, Any]] = []
    for coords in np.ndindex(*grid):
        region = tuple(slice(c * n, min((c + 1) * n, s))
                       for c, n, s in zip(coords, inner, data.shape, strict=True))
        part = data[region]
        if part.shape == inner:
            blocks.append(np.ascontiguousarray(part))
            continue
        block = np.full(inner, fill_value, dtype=data.dtype)
        block[tuple(slice(0, n) for n in part.shape)] = part
        blocks.append(block)
    return blocks


def encode_shard(data: np.ndarray[Any, Any], inner: Sequence[int], *,
                 codecs: Sequence[dict[str, Any]] | None = None) -> bytes:
    """The "indexed+zipped" shard holding all of ``data`` (the array in Zarr order) in
    inner chunks of shape ``inner``, byte for byte as DataAxesFormats.jl writes it.
    ``codecs`` are the inner codecs of the metadata (default: what a packed property of
    ``data``'s type gets, see :func:`zarrkit.daf.layout.packed_options`).

    >>> shard = encode_shard(np.zeros((2, 3), "u1"), (1, 2))
    >>> struct.unpack_from("<2Q", shard, 0)  # chunk 0: past the index and a local header
    (123, 18)
    """
    from zarrkit.daf import layout

    dtype = data.dtype
    if codecs is None:
        codecs = layout.packed_inner_codecs(dtype)
    inner = tuple(int(n) for n in inner)
    shard_shape = tuple(-(-s // n) * n for s, n in zip(data.shape, inner, strict=True))
    fill_value = "" if dtype.kind == "O" else 0
    sharding = ShardingCodec(
        {"chunk_shape": list(inner), "codecs": list(codecs), "index_location": "start"},
        ChunkSpec(shard_shape, dtype, fill_value))
    encoder = CodecPipelineV3.from_json(julia_inner_codecs(codecs),
                                        ChunkSpec(inner, dtype, fill_value))
    chunks: list[bytes] = []
    for block in inner_blocks(data, inner, fill_value):
        encoded = encoder.encode(block)
        assert encoded is not None  # only sharding codecs elide a chunk
        chunks.append(bytes(encoded))
    chunks_per_shard = sharding.chunks_per_shard(shard_shape)
    index_size = sharding.index_nbytes(shard_shape)
    shard, members = assemble_shard(bytes(index_size), chunks, chunks_per_shard, codecs)
    entries = np.array([(m.data_offset, m.size) for m in members[:len(chunks)]],
                       dtype=np.uint64).reshape((*chunks_per_shard, 2))
    index = sharding.encode_index(entries, shard_shape)
    assert len(index) == index_size
    return index + shard[index_size:]


def write_packed(store: Store, path: str, metadata: Any, data: np.ndarray[Any, Any]) -> None:
    """Store ``data`` (the whole array, Zarr order) as the one shard of the packed array
    at ``path`` whose (v3, ``sharding_indexed``) ``metadata`` has been written.

    >>> import zarrkit as zk
    >>> from zarrkit.daf.layout import packed_options
    >>> from zarrkit.hierarchy.creation import array_metadata
    >>> values = np.arange(1100.0)
    >>> options = packed_options(values.dtype, values.shape); del options["attributes"]
    >>> store = zk.MemoryStore(); meta = array_metadata(zarr_format=3, **options)
    >>> write_packed(store, "v", meta, values); store.get("v/c/0")[:4] != b"PK\\x03\\x04"
    True
    """
    (sharding,) = metadata.codecs
    configuration = sharding["configuration"]
    shard = encode_shard(np.asarray(data), configuration["chunk_shape"],
                         codecs=configuration["codecs"])
    store.set(join_path(path, metadata.chunk_key((0,) * len(metadata.shape))), shard)


__all__ = [
    "CODEC_JSON_NAME",
    "DOS_DATE",
    "DOS_TIME",
    "JULIA_BLOSC_TYPESIZE",
    "MADE_BY",
    "Member",
    "assemble_shard",
    "central_header",
    "codec_json",
    "encode_shard",
    "end_records",
    "inner_blocks",
    "julia_inner_codecs",
    "local_header",
    "member_name",
    "write_packed",
]
