"""The ``bytes -> bytes`` codecs of the spec and its extensions: ``gzip``, ``zstd``,
``blosc`` and ``crc32c``.

Compression runs in numcodecs' C code (which releases the GIL); decompression goes through
:func:`zarrkit.codecs.bounded.decode_bounded`, so a stored chunk never decompresses to more
than the pipeline expects.

>>> import numpy as np
>>> from zarrkit.codecs.v3.spec import ChunkSpec
>>> codec = GzipCodec({"level": 1}, ChunkSpec((100,), np.dtype("u1")))
>>> bytes(codec.decode(codec.encode(bytes(100)), what="c/0", limit=100, exact=True)) == bytes(100)
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numcodecs
import numpy as np  # noqa: F401  (the doctests use it)

from zarrkit.codecs.bounded import as_bytes_view as as_bytes_view
from zarrkit.codecs.bounded import decode_bounded, decode_bounded_into
from zarrkit.codecs.config import INT32_MAX
from zarrkit.codecs.gzip_member import encode_with
from zarrkit.codecs.numcodecs_config import BLOSC_COMPRESSORS
from zarrkit.codecs.v3.base import (
    BytesBytesCodec,
    check_keys,
    config_choice,
    config_int,
)
from zarrkit.codecs.v3.spec import ChunkSpec
from zarrkit.errors import ChunkDecodeError, MetadataError


class _NumcodecsCompressor(BytesBytesCodec):
    """A compressor backed by one numcodecs codec object, decoded with a size bound."""

    _codec: Any

    def encode(self, data: bytes) -> bytes:
        """The compressed bytes (gzip's with a fixed time: :mod:`zarrkit.codecs.gzip_member`)."""
        return bytes(encode_with(self._codec, data))

    def decode(
        self, data: bytes | memoryview, *, what: str, limit: int, exact: bool
    ) -> bytes | memoryview:
        """The decompressed bytes (at most ``limit``)."""
        decoded = decode_bounded(self._codec, data, limit, what=what, exact=exact)
        return as_bytes_view(decoded)

    def decode_into(self, data: bytes | memoryview, out: memoryview, *, what: str) -> bool:
        """Decode into ``out`` when numcodecs can (blosc); see BytesBytesCodec."""
        return decode_bounded_into(self._codec, data, out, what=what)


class GzipCodec(_NumcodecsCompressor):
    """``gzip`` (RFC 1952) with ``level`` 0-9 (5 when absent, as zarr-python).

    >>> GzipCodec({"level": 1}, ChunkSpec((1,), np.dtype("u1"))).to_json()
    {'name': 'gzip', 'configuration': {'level': 1}}
    """

    name = "gzip"

    def __init__(self, configuration: Mapping[str, Any], spec: ChunkSpec) -> None:
        super().__init__(configuration, spec)
        check_keys(self.name, configuration, {"level"})
        self.level = config_int(self.name, configuration, "level", 5, low=0, high=9)
        self._codec = numcodecs.GZip(level=self.level)

    def configuration(self) -> dict[str, Any]:
        """``{"level": ...}``."""
        return {"level": self.level}


class ZstdCodec(_NumcodecsCompressor):
    """``zstd`` with ``level`` (-131072..22, 0 = library default) and optional ``checksum``.

    >>> ZstdCodec({"level": 3}, ChunkSpec((1,), np.dtype("u1"))).to_json()
    {'name': 'zstd', 'configuration': {'level': 3, 'checksum': False}}
    """

    name = "zstd"

    def __init__(self, configuration: Mapping[str, Any], spec: ChunkSpec) -> None:
        super().__init__(configuration, spec)
        check_keys(self.name, configuration, {"level", "checksum"})
        self.level = config_int(self.name, configuration, "level", 0, low=-131072, high=22)
        checksum = configuration.get("checksum", False)
        if not isinstance(checksum, bool):
            raise MetadataError(f"codec 'zstd': 'checksum' must be a boolean, found {checksum!r}")
        self.checksum = checksum
        self._codec = numcodecs.Zstd(level=self.level, checksum=self.checksum)

    def configuration(self) -> dict[str, Any]:
        """``{"level": ..., "checksum": ...}`` (zarr-python writes both)."""
        return {"level": self.level, "checksum": self.checksum}


_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")
# The spec's compressors that this build of c-blosc has ("snappy" is often left out: an
# array using it could not be written, nor its chunks read).
_CNAMES = tuple(c for c in ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")
                if c in BLOSC_COMPRESSORS)


class BloscCodec(_NumcodecsCompressor):
    """``blosc``: ``cname``, ``clevel``, ``shuffle``, ``typesize``, ``blocksize``.

    A missing ``typesize`` is the item size of the array given to the ``array -> bytes``
    codec (1 for variable-length types) and a missing ``shuffle`` is ``bitshuffle`` for
    one-byte items, else ``shuffle``, as zarr-python chooses; both are written back.

    >>> BloscCodec({"cname": "lz4", "clevel": 5}, ChunkSpec((4,), np.dtype("f8"))).to_json()
    ... # doctest: +NORMALIZE_WHITESPACE
    {'name': 'blosc', 'configuration': {'typesize': 8, 'cname': 'lz4', 'clevel': 5,
     'shuffle': 'shuffle', 'blocksize': 0}}
    """

    name = "blosc"
    decodes_into_buffer = True

    def __init__(self, configuration: Mapping[str, Any], spec: ChunkSpec) -> None:
        super().__init__(configuration, spec)
        check_keys(
            self.name, configuration, {"cname", "clevel", "shuffle", "typesize", "blocksize"}
        )
        self.cname = config_choice(self.name, configuration, "cname", _CNAMES, "zstd")
        self.clevel = config_int(self.name, configuration, "clevel", 5, low=0, high=9)
        default_typesize = 1 if spec.dtype.kind == "O" else max(spec.dtype.itemsize, 1)
        # c-blosc keeps typesize and blocksize in C ints.
        self.typesize = config_int(
            self.name, configuration, "typesize", default_typesize, low=1, high=INT32_MAX
        )
        shuffle = configuration.get("shuffle")
        if isinstance(shuffle, int) and not isinstance(shuffle, bool) and 0 <= shuffle <= 2:
            shuffle = _SHUFFLES[shuffle]  # the v2 integer form, read leniently
        if shuffle is None:
            shuffle = "bitshuffle" if self.typesize == 1 else "shuffle"
        self.shuffle = config_choice(self.name, {"shuffle": shuffle}, "shuffle", _SHUFFLES)
        self.blocksize = config_int(
            self.name, configuration, "blocksize", 0, low=0, high=INT32_MAX
        )
        self._codec = numcodecs.Blosc(
            cname=self.cname,
            clevel=self.clevel,
            shuffle=_SHUFFLES.index(self.shuffle),
            blocksize=self.blocksize,
            typesize=self.typesize,
        )

    def configuration(self) -> dict[str, Any]:
        """Every member, with ``typesize`` filled in."""
        return {
            "typesize": self.typesize,
            "cname": self.cname,
            "clevel": self.clevel,
            "shuffle": self.shuffle,
            "blocksize": self.blocksize,
        }


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


def _crc32c_pure(data: Any, _table: list[int] = _crc32c_table()) -> int:  # noqa: B008
    crc = 0xFFFFFFFF
    for byte in memoryview(data).cast("B"):
        crc = _table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


_crc32c_fast: Callable[[Any], int] | None
try:  # the C implementation; the pure-Python one keeps zarrkit working without it
    from crc32c import crc32c as _crc32c_fast
except ImportError:  # pragma: no cover - the package is a declared dependency
    _crc32c_fast = None


def crc32c(data: Any) -> int:
    """The CRC32C (Castagnoli, RFC 3720) checksum of a buffer.

    >>> crc32c(b"123456789") == 0xE3069283
    True
    """
    if _crc32c_fast is not None:
        return int(_crc32c_fast(as_bytes_view(data)))
    return _crc32c_pure(data)


class Crc32cCodec(BytesBytesCodec):
    """``crc32c``: appends the little-endian CRC32C of the data; a mismatch on decode is a
    ChunkDecodeError.

    >>> codec = Crc32cCodec({}, ChunkSpec((1,), np.dtype("u1")))
    >>> codec.encode(b"123456789").hex()
    '313233343536373839839206e3'
    """

    name = "crc32c"

    def __init__(self, configuration: Mapping[str, Any], spec: ChunkSpec) -> None:
        super().__init__(configuration, spec)
        check_keys(self.name, configuration, set())

    def encoded_size(self, size: int) -> int:
        """Four bytes more than the input."""
        return size + 4

    def encode(self, data: bytes) -> bytes:
        """``data`` followed by its checksum."""
        return bytes(data) + crc32c(data).to_bytes(4, "little")

    def decode(
        self, data: bytes | memoryview, *, what: str, limit: int, exact: bool
    ) -> bytes | memoryview:
        """``data`` without its checksum (a view), after checking it.

        >>> Crc32cCodec({}, ChunkSpec((1,), np.dtype("u1"))).decode(
        ...     b"abcd\\0\\0\\0\\0", what="c/0", limit=4, exact=True)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.ChunkDecodeError: c/0: crc32c checksum mismatch (stored 0x00000000, ...)
        """
        view = as_bytes_view(data)
        if len(view) < 4:
            raise ChunkDecodeError(f"{what}: {len(view)} bytes is too short for a crc32c checksum")
        payload = view[:-4]
        stored = int.from_bytes(view[-4:], "little")
        computed = crc32c(payload)
        if stored != computed:
            raise ChunkDecodeError(
                f"{what}: crc32c checksum mismatch "
                f"(stored 0x{stored:08x}, computed 0x{computed:08x})"
            )
        return payload
