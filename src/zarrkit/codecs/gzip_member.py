"""gzip compression that gives the same bytes for the same data.

numcodecs' ``GZip`` (and Python's ``gzip`` module) write the time of compression into the
member's header, so one chunk compressed twice differs in four bytes. zarrkit writes 0
there, as its native engine does: a chunk written again is the same file, so a resumed
copy (``zarrkit.convert``) finds it unchanged, and both engines store the same bytes.
Readers ignore the field.

>>> import numcodecs
>>> member = gzip_compress(bytes(100), 1)
>>> member[4:8], numcodecs.GZip(1).decode(member) == bytes(100)
(b'\\x00\\x00\\x00\\x00', True)
"""

from __future__ import annotations

import gzip
import io
from typing import Any

import numcodecs
from numcodecs.compat import ensure_contiguous_ndarray


def gzip_compress(data: Any, level: int) -> bytes:
    """``data`` (any buffer) as one gzip member at ``level``: numcodecs' ``GZip`` bytes
    with a modification time of 0.

    >>> import numcodecs
    >>> theirs = bytes(numcodecs.GZip(6).encode(b"abc" * 50))
    >>> gzip_compress(b"abc" * 50, 6) == theirs[:4] + bytes(4) + theirs[8:]
    True
    """
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=level, mtime=0) as member:
        member.write(ensure_contiguous_ndarray(data))  # as numcodecs' GZip takes it
    return buffer.getvalue()


def encode_with(codec: Any, data: Any) -> Any:
    """``codec.encode(data)``, except that numcodecs' own ``GZip`` compresses through
    :func:`gzip_compress` (a subclass keeps its own ``encode``).

    >>> encode_with(numcodecs.GZip(1), bytes(10)) == gzip_compress(bytes(10), 1)
    True
    """
    if type(codec) is numcodecs.GZip:
        return gzip_compress(data, codec.level)
    return codec.encode(data)
