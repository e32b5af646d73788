"""A store's values as the server sends them: the bytes, an ETag and a modification time,
and the byte range a ``Range`` header asks for.

Directory and ZIP stores hand values over memory-mapped (``map_value``), so a range of a
large shard costs no copy of the rest; their validators come from the file system (size,
modification time, inode: no hashing of the value). Other stores are read whole and their
ETag is a hash of the value.

>>> from zarrkit.storage import MemoryStore
>>> value = read_value(MemoryStore({"k": b"abc"}), "k")
>>> bytes(value.data), value.etag.startswith('"'), value.last_modified
(b'abc', True, None)
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from typing import cast

from zarrkit.errors import ZarrkitError
from zarrkit.storage.base import MapsValues, Store, offers
from zarrkit.storage.directory import DirectoryStore
from zarrkit.storage.zip import ZipStore

_SINGLE_RANGE = re.compile(r"bytes=(\d*)-(\d*)", re.ASCII | re.IGNORECASE)


class RangeNotSatisfiableError(ZarrkitError, ValueError):
    """A ``Range`` header that selects no byte of the value (HTTP 416).

    >>> issubclass(RangeNotSatisfiableError, ValueError)
    True
    """


@dataclass(frozen=True)
class Value:
    """A value with its validators: ``etag`` (quoted, strong) and ``last_modified`` (POSIX
    seconds, None where the store does not know it).

    >>> Value(b"x", '"1"', None).size
    1
    """

    data: bytes | memoryview
    etag: str
    last_modified: float | None

    @property
    def size(self) -> int:
        """The length of the value in bytes."""
        return len(self.data)


def _file_stat(store: Store, key: str) -> os.stat_result | None:
    """The status of the file that holds ``key`` (the archive for a ZIP store), if any.

    Taken before the value is read: the validators then never claim a newer value than
    the one sent. Used only once the store has read the key, so a link out of a directory
    store's root (which the store refuses) tells nothing.
    """
    if isinstance(store, DirectoryStore):
        path = os.path.join(store.root, *key.split("/"))
    elif isinstance(store, ZipStore):
        path = str(store.path)
    else:
        return None
    try:
        return os.stat(path)
    except OSError:
        return None


def content_etag(seed: bytes) -> str:
    """A strong entity tag for ``seed`` (a value, or what identifies its version).

    >>> content_etag(b"abc") == content_etag(b"abc") != content_etag(b"abd")
    True
    """
    return '"' + hashlib.blake2b(seed, digest_size=12).hexdigest() + '"'


def _map_or_read(store: Store, key: str) -> bytes | memoryview | None:
    if not offers(store, MapsValues):
        return store.get(key)
    try:
        return cast(MapsValues, store).map_value(key)
    except ZarrkitError:  # refused by the store (a link out, a value that is no file)
        raise
    except OSError:
        # Mapping fails on file systems without mmap support: a plain read answers.
        return store.get(key)


def read_value(store: Store, key: str) -> Value | None:
    """``key``'s value with its validators, or None if the store has no such key.

    >>> from zarrkit.storage import MemoryStore
    >>> store = MemoryStore({"k": b"abc"})
    >>> read_value(store, "k").etag == read_value(store, "k").etag
    True
    >>> read_value(store, "missing") is None
    True
    """
    stat = _file_stat(store, key)
    data = _map_or_read(store, key)
    if data is None:
        return None
    if stat is None:
        return Value(data, content_etag(bytes(data)), None)
    seed = f"{key}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ino}".encode()
    return Value(data, content_etag(seed), stat.st_mtime)


#: Digits beyond which a byte position is past any value: longer numbers are not parsed
#: (Python refuses to convert more than 4,300 digits, and a client may send thousands).
_MAX_POSITION_DIGITS = 19
_PAST_ANY_VALUE = 10**_MAX_POSITION_DIGITS


def _shortened(header: str) -> str:
    """A header as an error message quotes it: its first 80 characters."""
    return header if len(header) <= 80 else header[:80] + "..."


def _position(digits: str) -> int | None:
    """A byte position of a Range header, capped past any value's end; None if absent.

    >>> _position(""), _position("12"), _position("9" * 5000) == _PAST_ANY_VALUE
    (None, 12, True)
    """
    if digits == "":
        return None
    digits = digits.lstrip("0") or "0"
    return _PAST_ANY_VALUE if len(digits) > _MAX_POSITION_DIGITS else int(digits)


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The ``(start, stop)`` bytes a ``Range`` header selects of a value of ``size`` bytes,
    or None to send the whole value (no header, or one this server ignores as HTTP allows:
    several ranges, another unit, bad syntax). RangeNotSatisfiableError when no byte is
    selected.

    >>> byte_range("bytes=2-5", 10), byte_range("bytes=-3", 10), byte_range("bytes=7-", 10)
    ((2, 6), (7, 10), (7, 10))
    >>> byte_range("bytes=5-100", 10), byte_range("bytes=-100", 10), byte_range(None, 10)
    ((5, 10), (0, 10), None)
    >>> byte_range("bytes=0-" + "9" * 5000, 10), byte_range("bytes=-" + "9" * 5000, 10)
    ((0, 10), (0, 10))
    >>> byte_range("bytes=10-", 10)
    Traceback (most recent call last):
    zarrkit.server.values.RangeNotSatisfiableError: range 'bytes=10-' selects no byte of \
a value of 10 bytes
    """
    if header is None:
        return None
    match = _SINGLE_RANGE.fullmatch(header.strip())
    if match is None or match.group(1) == match.group(2) == "":
        return None
    first, last = _position(match.group(1)), _position(match.group(2))
    if first is None:  # a suffix: the last N bytes
        assert last is not None
        start, stop = max(size - last, 0), size
        if last == 0:
            start = stop = size
    else:
        start = first
        stop = size if last is None else min(last + 1, size)
        if last is not None and last < start:
            return None  # an invalid range is ignored, as RFC 9110 says
    if start >= stop:
        raise RangeNotSatisfiableError(
            f"range {_shortened(header)!r} selects no byte of a value of {size} bytes")
    return start, stop
