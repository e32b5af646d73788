"""numcodecs codecs in Zarr v3 arrays, as zarr-python's ``zarr.codecs.numcodecs`` has them:
``Delta(dtype="<i4")`` is stored as ``{"name": "numcodecs.delta", "configuration":
{"dtype": "<i4"}}``.

Each class holds the configuration as given (``codec_config``, with its ``id``); the codec
is checked and run by the array it is given to, through zarrkit's registry
(:mod:`zarrkit.codecs.v3.numcodecs_codecs`). Settings zarr-python chooses from the array's
data type (``Shuffle``'s ``elementsize``, the ``dtype`` of ``FixedScaleOffset`` and
``Quantize``, ``AsType``'s ``decode_dtype``) are chosen the same way by :meth:`for_dtype`.

>>> Delta(dtype="<i4")
Delta(codec_name='numcodecs.delta', codec_config={'dtype': '<i4'})
>>> Delta(dtype="<i4").to_dict()
{'name': 'numcodecs.delta', 'configuration': {'dtype': '<i4'}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from zarrkit.codecs.public import ARRAY_ARRAY, ARRAY_BYTES, BYTES_BYTES, PublicCodec
from zarrkit.codecs.v3.base import parse_codec_entry
from zarrkit.errors import MetadataError

PREFIX = "numcodecs."

__all__ = [
    "BZ2", "CRC32", "CRC32C", "LZ4", "LZMA", "ZFPY", "Adler32", "AsType", "BitRound", "Blosc",
    "Delta", "FixedScaleOffset", "Fletcher32", "GZip", "JenkinsLookup3", "PCodec", "PackBits",
    "Quantize", "Shuffle", "Zlib", "Zstd", "numcodecs_class",
]


@dataclass(frozen=True, repr=False)
class _NumcodecsCodec(PublicCodec):
    """A numcodecs codec by its v3 name and configuration.

    >>> Zlib(level=1) == Zlib(level=1), Zlib(level=1).codec_config
    (True, {'id': 'zlib', 'level': 1})
    """

    codec_name: ClassVar[str] = ""
    codec_config: dict[str, Any]

    def __init__(self, **codec_config: Any) -> None:
        codec_id = self.codec_name.removeprefix(PREFIX)
        if codec_config.setdefault("id", codec_id) != codec_id:
            raise MetadataError(
                f"codec {self.codec_name!r}: 'id' must be {codec_id!r}, found "
                f"{codec_config['id']!r}"
            )
        config = {"id": codec_id, **{k: v for k, v in codec_config.items() if k != "id"}}
        object.__setattr__(self, "codec_config", config)

    def __init_subclass__(cls, *, codec_id: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if codec_id is not None:
            cls.codec_name = cls.name = PREFIX + codec_id

    def _options(self) -> dict[str, Any]:
        return {k: v for k, v in self.codec_config.items() if k != "id"}

    def to_dict(self) -> dict[str, Any]:
        """The configuration as given, without its ``id``."""
        return {"name": self.codec_name, "configuration": self._options()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PublicCodec:
        """The codec of a ``{"name": "numcodecs.<id>", "configuration": ...}`` form.

        >>> Zlib.from_dict({"name": "numcodecs.zlib", "configuration": {"level": 1}})
        Zlib(codec_name='numcodecs.zlib', codec_config={'level': 1})
        """
        name, configuration, _ = parse_codec_entry(data)
        if name != cls.codec_name:
            raise MetadataError(f"expected a codec named {cls.codec_name!r}, found {name!r}")
        return cls(**configuration)

    def _with(self, key: str, value: Any) -> PublicCodec:
        return type(self)(**{**self.codec_config, key: value})

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(codec_name={self.codec_name!r}, "
                f"codec_config={self._options()!r})")


class _BytesBytes(_NumcodecsCodec):
    kind: ClassVar[str] = BYTES_BYTES


class _ArrayArray(_NumcodecsCodec):
    kind: ClassVar[str] = ARRAY_ARRAY


class _ArrayBytes(_NumcodecsCodec):
    kind: ClassVar[str] = ARRAY_BYTES


def _dtype_name(dtype: np.dtype[Any]) -> str:
    """What zarr-python writes for a filter's data type chosen from the array's."""
    return str(dtype.newbyteorder("="))


class Blosc(_BytesBytes, codec_id="blosc"):
    """``numcodecs.blosc``."""


class LZ4(_BytesBytes, codec_id="lz4"):
    """``numcodecs.lz4``."""


class Zstd(_BytesBytes, codec_id="zstd"):
    """``numcodecs.zstd``."""


class Zlib(_BytesBytes, codec_id="zlib"):
    """``numcodecs.zlib``."""


class GZip(_BytesBytes, codec_id="gzip"):
    """``numcodecs.gzip``."""


class BZ2(_BytesBytes, codec_id="bz2"):
    """``numcodecs.bz2``."""


class LZMA(_BytesBytes, codec_id="lzma"):
    """``numcodecs.lzma``."""


class Shuffle(_BytesBytes, codec_id="shuffle"):
    """``numcodecs.shuffle``; ``elementsize`` defaults to the array's item size.

    >>> Shuffle().for_dtype(np.dtype("f8"))
    Shuffle(codec_name='numcodecs.shuffle', codec_config={'elementsize': 8})
    """

    def for_dtype(self, dtype: np.dtype[Any]) -> PublicCodec:
        """``elementsize`` chosen from ``dtype`` when not given."""
        if self.codec_config.get("elementsize") is None:
            return self._with("elementsize", dtype.itemsize)
        return self


class CRC32(_BytesBytes, codec_id="crc32"):
    """``numcodecs.crc32``."""


class CRC32C(_BytesBytes, codec_id="crc32c"):
    """``numcodecs.crc32c``."""


class Adler32(_BytesBytes, codec_id="adler32"):
    """``numcodecs.adler32``."""


class Fletcher32(_BytesBytes, codec_id="fletcher32"):
    """``numcodecs.fletcher32``."""


class JenkinsLookup3(_BytesBytes, codec_id="jenkins_lookup3"):
    """``numcodecs.jenkins_lookup3``."""


class Delta(_ArrayArray, codec_id="delta"):
    """``numcodecs.delta``."""


class BitRound(_ArrayArray, codec_id="bitround"):
    """``numcodecs.bitround``."""


class FixedScaleOffset(_ArrayArray, codec_id="fixedscaleoffset"):
    """``numcodecs.fixedscaleoffset``; ``dtype`` defaults to the array's.

    >>> FixedScaleOffset(offset=0, scale=10).for_dtype(np.dtype("<f8")).to_dict()
    {'name': 'numcodecs.fixedscaleoffset', 'configuration': {'offset': 0, 'scale': 10, \
'dtype': 'float64'}}
    """

    def for_dtype(self, dtype: np.dtype[Any]) -> PublicCodec:
        """``dtype`` chosen from the array's when not given."""
        if self.codec_config.get("dtype") is None:
            return self._with("dtype", _dtype_name(dtype))
        return self


class Quantize(FixedScaleOffset, codec_id="quantize"):
    """``numcodecs.quantize``; ``dtype`` defaults to the array's."""


class PackBits(_ArrayArray, codec_id="packbits"):
    """``numcodecs.packbits``."""


class AsType(_ArrayArray, codec_id="astype"):
    """``numcodecs.astype``; ``decode_dtype`` defaults to the array's."""

    def for_dtype(self, dtype: np.dtype[Any]) -> PublicCodec:
        """``decode_dtype`` chosen from the array's when not given."""
        if self.codec_config.get("decode_dtype") is None:
            return self._with("decode_dtype", _dtype_name(dtype))
        return self


class PCodec(_ArrayBytes, codec_id="pcodec"):
    """``numcodecs.pcodec``."""


class ZFPY(_ArrayBytes, codec_id="zfpy"):
    """``numcodecs.zfpy``."""


_BY_NAME: dict[str, type[_NumcodecsCodec]] = {
    cls.codec_name: cls for cls in (
        Blosc, LZ4, Zstd, Zlib, GZip, BZ2, LZMA, Shuffle, CRC32, CRC32C, Adler32, Fletcher32,
        JenkinsLookup3, Delta, BitRound, FixedScaleOffset, Quantize, PackBits, AsType, PCodec,
        ZFPY)
}


def numcodecs_class(name: str) -> type[PublicCodec] | None:
    """The class of the v3 codec ``numcodecs.<id>``, or None when zarr-python has none.

    >>> numcodecs_class("numcodecs.zlib"), numcodecs_class("numcodecs.json2")
    (<class 'zarrkit.codecs.numcodecs.Zlib'>, None)
    """
    return _BY_NAME.get(name)
