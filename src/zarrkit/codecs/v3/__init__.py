"""Zarr v3 codecs: the codec pipeline, the built-in codecs and sharding.

Importing this package registers the built-in codecs (``bytes``, ``transpose``, ``gzip``,
``zstd``, ``blosc``, ``crc32c``, ``vlen-utf8``, ``vlen-bytes``, ``scale_offset``,
``sharding_indexed``) with :func:`zarrkit.codecs.registry.register_codec_v3`, unless a codec
of the same name was registered first. ``numcodecs.<id>`` names are resolved through
numcodecs without registration.

>>> import numpy as np
>>> spec = ChunkSpec((2,), np.dtype("<f4"), 0.0)
>>> pipeline = CodecPipelineV3.from_json(["bytes"], spec)
Traceback (most recent call last):
zarrkit.errors.MetadataError: codec 'bytes': 'endian' is required for data type float32
"""

from __future__ import annotations

from zarrkit import registry as _registry
from zarrkit.codecs.registry import register_codec_v3
from zarrkit.codecs.v3.array_codecs import (
    BytesCodec,
    ScaleOffsetCodec,
    TransposeCodec,
    VLenBytesCodec,
    VLenUTF8Codec,
)
from zarrkit.codecs.v3.base import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, Codec
from zarrkit.codecs.v3.compressors import BloscCodec, Crc32cCodec, GzipCodec, ZstdCodec
from zarrkit.codecs.v3.pipeline import CodecPipelineV3
from zarrkit.codecs.v3.sharding import ShardIndex, ShardingCodec, coalesce_ranges
from zarrkit.codecs.v3.spec import ChunkSpec

__all__ = [
    "ArrayArrayCodec",
    "ArrayBytesCodec",
    "BloscCodec",
    "BytesBytesCodec",
    "BytesCodec",
    "ChunkSpec",
    "Codec",
    "CodecPipelineV3",
    "Crc32cCodec",
    "GzipCodec",
    "ScaleOffsetCodec",
    "ShardIndex",
    "ShardingCodec",
    "TransposeCodec",
    "VLenBytesCodec",
    "VLenUTF8Codec",
    "ZstdCodec",
    "coalesce_ranges",
]

_BUILTINS: dict[str, type[Codec]] = {
    "bytes": BytesCodec,
    "transpose": TransposeCodec,
    "scale_offset": ScaleOffsetCodec,
    "vlen-utf8": VLenUTF8Codec,
    "vlen-bytes": VLenBytesCodec,
    "gzip": GzipCodec,
    "zstd": ZstdCodec,
    "blosc": BloscCodec,
    "crc32c": Crc32cCodec,
    "sharding_indexed": ShardingCodec,
}

for _name, _codec in _BUILTINS.items():
    if _name not in _registry.codecs:
        register_codec_v3(_name, _codec.from_config)
