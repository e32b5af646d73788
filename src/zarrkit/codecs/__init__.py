"""Codecs: the public codec classes zarr-python users pass to ``create_array``
(``compressors=[BloscCodec(...)]``), the registry (``register_codec``), and the chunk
pipelines behind them.

>>> import zarrkit as zk
>>> a = zk.create_array({}, shape=(4,), dtype="u1", compressors=[GzipCodec(level=1)])
>>> a.compressors
(GzipCodec(level=1),)
"""

from __future__ import annotations

from zarrkit.codecs import numcodecs as numcodecs
from zarrkit.codecs.numcodecs import (
    BZ2,
    CRC32,
    CRC32C,
    LZ4,
    LZMA,
    ZFPY,
    Adler32,
    AsType,
    BitRound,
    Blosc,
    Delta,
    FixedScaleOffset,
    Fletcher32,
    GZip,
    JenkinsLookup3,
    PackBits,
    PCodec,
    Quantize,
    Shuffle,
    Zlib,
    Zstd,
)
from zarrkit.codecs.public import (
    BloscCname,
    BloscCodec,
    BloscShuffle,
    BytesCodec,
    Crc32cCodec,
    Endian,
    GzipCodec,
    ScaleOffset,
    ShardingCodec,
    ShardingCodecIndexLocation,
    SubchunkWriteOrder,
    TransposeCodec,
    VLenBytesCodec,
    VLenUTF8Codec,
    ZstdCodec,
)
from zarrkit.codecs.registry import register_codec

__all__ = [
    "BZ2",
    "CRC32",
    "CRC32C",
    "LZ4",
    "LZMA",
    "ZFPY",
    "Adler32",
    "AsType",
    "BitRound",
    "Blosc",
    "BloscCname",
    "BloscCodec",
    "BloscShuffle",
    "BytesCodec",
    "Crc32cCodec",
    "Delta",
    "Endian",
    "FixedScaleOffset",
    "Fletcher32",
    "GZip",
    "GzipCodec",
    "JenkinsLookup3",
    "PCodec",
    "PackBits",
    "Quantize",
    "ScaleOffset",
    "ShardingCodec",
    "ShardingCodecIndexLocation",
    "Shuffle",
    "SubchunkWriteOrder",
    "TransposeCodec",
    "VLenBytesCodec",
    "VLenUTF8Codec",
    "Zlib",
    "Zstd",
    "ZstdCodec",
    "register_codec",
]
