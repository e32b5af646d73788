"""Decompression that refuses to produce more than a known number of bytes.

A corrupt or hostile chunk must not make zarrkit allocate gigabytes: each compressor's
decoded size is learnt from its header (blosc, zstd, lz4) or the stream is decompressed with
a cap (zlib, gzip, bz2, lzma) before anything is allocated whole.

>>> import numcodecs, numpy as np
>>> data = numcodecs.Zlib().encode(np.zeros(100, "u1"))
>>> len(decode_bounded(numcodecs.Zlib(), data, 100, what="chunk 0"))
100
>>> decode_bounded(numcodecs.Zlib(), data, 50, what="chunk 0")
Traceback (most recent call last):
zarrkit.errors.ChunkDecodeError: chunk 0: decodes to more than the expected 50 bytes
"""

from __future__ import annotations

import bz2
import lzma
import re
import struct
import threading
import zlib
from typing import Any

import numpy as np
import zstandard

from zarrkit.errors import ChunkDecodeError

_ZSTD_MAGIC = 0xFD2FB528

# A bound on what any compressor may add to its input, used only to cap how much a stacked
# compressor may inflate to (decompression-bomb protection), never to size real buffers.
COMPRESSION_OVERHEAD = 1024


# Chunks of objects (strings, bytes) have no size to bound their decompression by; this cap
# keeps a hostile chunk from exhausting memory.
UNBOUNDED_CHUNK_LIMIT = 1 << 31


def compressed_bound(size: int) -> int:
    """A generous upper bound on the compressed size of ``size`` bytes (any compressor).

    >>> compressed_bound(8000)
    11024
    """
    return size + (size >> 2) + COMPRESSION_OVERHEAD


def _too_big(what: str, limit: int) -> ChunkDecodeError:
    return ChunkDecodeError(f"{what}: decodes to more than the expected {limit} bytes")


def as_bytes_view(data: Any) -> memoryview:
    """Any contiguous buffer (bytes, memoryview, ndarray) as a flat memoryview of bytes.

    >>> as_bytes_view(np.array([1, 2], dtype="<u2")).tobytes()
    b'\\x01\\x00\\x02\\x00'
    """
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    view = memoryview(data)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view


def zstd_content_size(data: bytes | memoryview) -> int | None:
    """The decoded size a zstd frame header declares, or None if it does not say.

    >>> import numcodecs, numpy as np
    >>> zstd_content_size(numcodecs.Zstd().encode(np.zeros(300, "u1")))
    300
    """
    view = memoryview(data)
    if len(view) < 6 or struct.unpack_from("<I", view, 0)[0] != _ZSTD_MAGIC:
        return None
    descriptor = view[4]
    fcs_flag = descriptor >> 6
    single_segment = (descriptor >> 5) & 1
    dict_id_size = (0, 1, 2, 4)[descriptor & 3]
    offset = 5 + (0 if single_segment else 1) + dict_id_size
    size_bytes = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    if size_bytes == 0 or len(view) < offset + size_bytes:
        return None
    raw = int.from_bytes(view[offset:offset + size_bytes], "little")
    return raw + 256 if size_bytes == 2 else raw


_zstd_state = threading.local()


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    """This thread's zstd decompression context. numcodecs makes a new context for every
    call, which costs as much as decoding a small chunk; a context serves one thread."""
    decompressor = getattr(_zstd_state, "decompressor", None)
    if decompressor is None:
        decompressor = _zstd_state.decompressor = zstandard.ZstdDecompressor()
    return decompressor


def _zstd_single_frame(data: Any) -> bytes | None:
    """``data`` decoded with this thread's context when it is one zstd frame, else None
    (several frames, which numcodecs decodes and this context would cut at the first)."""
    try:
        return _zstd_decompressor().decompress(data, allow_extra_data=False)  # type: ignore[no-any-return]
    except zstandard.ZstdError:
        return None


def _stream_decode(decompressor: Any, data: Any, limit: int, what: str) -> bytes:
    out = decompressor.decompress(bytes(data), limit + 1)
    if len(out) > limit:
        raise _too_big(what, limit)
    if not decompressor.eof:
        # A cut-short stream decompresses to a prefix without complaint.
        raise ChunkDecodeError(f"{what}: the compressed stream is truncated")
    return bytes(out)


def _zstd_undeclared(codec: Any, data: Any, limit: int, exact: bool, what: str) -> Any:
    """Decode a zstd frame that does not declare its size into at most ``limit`` bytes.

    numcodecs decodes such a frame into a caller's buffer only when the buffer has exactly
    the decoded size, and its error then names that size; without a buffer it would grow
    without bound. Without an exact size the buffer grows from a small guess, so a short
    frame never reserves ``limit`` bytes.
    """
    size = limit if exact else min(limit, max(1 << 16, 8 * len(data)))
    while True:
        try:
            return codec.decode(data, out=np.empty(size, dtype=np.uint8))
        except RuntimeError as e:
            if "too small" in str(e):
                if size >= limit:
                    raise _too_big(what, limit) from e
                size = min(limit, size * 8)
                continue
            found = re.search(r"expected to decompress \d+, got (\d+)", str(e))
            if exact or found is None:
                raise
            return codec.decode(data, out=np.empty(int(found.group(1)), dtype=np.uint8))


def decode_bounded(
    codec: Any, data: Any, limit: int | None, *, what: str, exact: bool = False
) -> Any:
    """Decode ``data`` with the numcodecs ``codec``, refusing output above ``limit`` bytes.

    ``limit=None`` decodes without a cap; ``exact=True`` says the output must be exactly
    ``limit`` bytes (a zstd frame that does not declare its size must then fill that
    buffer exactly). A zlib/gzip/bz2/lzma stream that ends early is refused. Errors from
    the codec become ChunkDecodeError naming ``what``.

    >>> import numcodecs, numpy as np
    >>> data = numcodecs.Zstd().encode(np.zeros(1000, "u1"))
    >>> decode_bounded(numcodecs.Zstd(), data, 999, what="c/0")
    Traceback (most recent call last):
    zarrkit.errors.ChunkDecodeError: c/0: decodes to more than the expected 999 bytes
    """
    codec_id = getattr(codec, "codec_id", None)
    try:
        if codec_id == "zstd" and limit is None and zstd_content_size(data):
            decoded = _zstd_single_frame(data)
            if decoded is not None:
                return decoded
        if limit is not None:
            if codec_id == "blosc" and len(data) >= 16:
                nbytes, _, cbytes = struct.unpack_from("<III", memoryview(data), 4)
                if nbytes > limit:
                    raise _too_big(what, limit)
                if cbytes > len(data):
                    # c-blosc trusts its header and would read past the buffer.
                    raise ChunkDecodeError(
                        f"{what}: blosc header says {cbytes} bytes, found {len(data)}"
                    )
            elif codec_id == "zstd":
                declared = zstd_content_size(data)
                if declared is not None and declared > limit:
                    raise _too_big(what, limit)
                if declared is None:
                    return _zstd_undeclared(codec, data, limit, exact, what)
                if declared == 0:  # numcodecs refuses frames of empty content
                    return b""
                decoded = _zstd_single_frame(data)
                if decoded is not None:
                    return decoded
            elif codec_id == "lz4" and len(data) >= 4:
                if struct.unpack_from("<i", memoryview(data), 0)[0] > limit:
                    raise _too_big(what, limit)
            elif codec_id == "zlib":
                return _stream_decode(zlib.decompressobj(), data, limit, what)
            elif codec_id == "gzip":
                return _stream_decode(zlib.decompressobj(16 + zlib.MAX_WBITS), data, limit, what)
            elif codec_id == "bz2":
                return _stream_decode(bz2.BZ2Decompressor(), data, limit, what)
            elif codec_id == "lzma" and getattr(codec, "format", None) in (
                lzma.FORMAT_XZ, lzma.FORMAT_ALONE, lzma.FORMAT_AUTO
            ):
                return _stream_decode(lzma.LZMADecompressor(), data, limit, what)
            elif codec_id == "lzma" and getattr(codec, "format", None) == lzma.FORMAT_RAW:
                # A raw stream has no header: its filters come from the configuration.
                decompressor = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=codec.filters)
                return _stream_decode(decompressor, data, limit, what)
        decoded = codec.decode(data)
    except ChunkDecodeError:
        raise
    except Exception as e:  # any codec failure on stored bytes is a corrupt chunk
        raise ChunkDecodeError(f"{what}: cannot decode with {codec_id or codec!r}: {e}") from e
    if limit is not None and memoryview(decoded).nbytes > limit:
        raise _too_big(what, limit)
    return decoded


def decode_bounded_into(codec: Any, data: Any, out: Any, *, what: str) -> bool:
    """Decode ``data`` straight into ``out`` (a writable contiguous buffer of exactly the
    decoded size) when the codec can do that without a temporary; return False, having
    written nothing, when it cannot (the caller then uses :func:`decode_bounded`).

    >>> import numcodecs, numpy as np
    >>> blosc = numcodecs.Blosc()
    >>> out = np.empty(4, "u2")
    >>> decode_bounded_into(blosc, blosc.encode(np.arange(4, dtype="u2")), out, what="c/0")
    True
    >>> out
    array([0, 1, 2, 3], dtype=uint16)
    """
    if getattr(codec, "codec_id", None) != "blosc" or len(data) < 16:
        return False
    nbytes, _, cbytes = struct.unpack_from("<III", memoryview(data), 4)
    target = memoryview(out).cast("B")
    if nbytes != target.nbytes:
        raise ChunkDecodeError(
            f"{what}: blosc header says {nbytes} bytes, expected {target.nbytes}")
    if cbytes > len(data):
        raise ChunkDecodeError(f"{what}: blosc header says {cbytes} bytes, found {len(data)}")
    try:
        codec.decode(data, out=target)
    except Exception as e:  # any codec failure on stored bytes is a corrupt chunk
        raise ChunkDecodeError(f"{what}: cannot decode with blosc: {e}") from e
    return True
