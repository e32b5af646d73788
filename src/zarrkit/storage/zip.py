"""A store in a single ZIP archive.

Reading accepts any archive a Zarr tool is likely to produce: stored, deflated, bzip2 and
LZMA members, ZIP64, data prepended to the archive (self-extracting style), and several
members with the same name (the last one in the central directory wins, as in Python's
``zipfile`` and in zarr-python). Directory members are ignored, and so is every member whose
name is not a valid store key (``..``, absolute paths, backslashes...): a crafted archive
can never make this store hand out a key that escapes a directory when copied elsewhere.
A damaged archive raises :class:`CorruptZipError` (a ``CorruptStoreError`` and a
``zipfile.BadZipFile``), an encrypted member or an unknown compression method
``UnsupportedOperationError``; sizes declared in headers are checked against the file
before anything is allocated for them.

Writing is append-only. Each value becomes a new STORED (uncompressed) member whose data
start at a file offset that is a multiple of 8, so that a reader can memory-map a chunk and
view it as a numpy array without copying (:meth:`ZipStore.map_value`). Setting a key that
already exists appends another member with the same name; the newest one wins on every
later read, by this store, by ``zipfile`` and by zarr-python, but the old bytes stay in the
file. Deleting is not possible. The central directory is written by :meth:`ZipStore.close`
(or at the end of a ``with`` block).

Appending never makes the earlier archive unreadable: new members go after the end of the
file, past the old central directory, which stays in place (as dead space once a new one
is written) so that a writer killed at any moment leaves the old archive whole. Opening an
archive that a writer did not close (no valid end record at the end of the file) recovers
it: the last valid central directory in the file, plus every complete member written after
it, found through the local headers (each of this store's members carries its sizes and
CRC there); a torn or corrupt member ends the scan. :attr:`ZipStore.recovered` tells; an
archive recovered in mode ``"a"`` gets a complete central directory on close.

All writable stores on one file in a process share one archive state (descriptor, index,
write position), so that threads opening their own handles never overwrite each other;
each close writes a complete central directory, the last one releases the file. Across
processes, a writable store holds an exclusive OS lock on the file: a second writer gets
:class:`~zarrkit.errors.StoreLockedError` at once. Readers take no lock.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "data.zip")
>>> with ZipStore(path, mode="w") as store:
...     store.set("a/.zarray", b"{}")
...     store.set("a/0", b"chunk")
>>> with ZipStore(path) as store:
...     store.list_dir("a/")
(['.zarray', '0'], [])
"""

from __future__ import annotations

import bisect
import bz2
import errno
import lzma
import mmap
import os
import struct
import threading
import time
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from zipfile import BadZipFile

from zarrkit.config import config
from zarrkit.errors import (
    CorruptStoreError,
    InvalidKeyError,
    ResourceLimitError,
    StoreLockedError,
    UnsupportedOperationError,
    ZarrkitError,
)
from zarrkit.storage.base import Buffer, Store
from zarrkit.storage.keys import validate_key, validate_prefix

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["BadZipFile", "CorruptZipError", "ZipStore"]

# Record layouts of the ZIP specification (APPNOTE.TXT), all little-endian.
_LOCAL = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIG = 0x04034B50
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
_CENTRAL_SIG = 0x02014B50
_EOCD = struct.Struct("<IHHHHIIH")
_EOCD_SIG = 0x06054B50
_EOCD_SIG_BYTES = struct.pack("<I", _EOCD_SIG)
_EOCD64 = struct.Struct("<IQHHIIQQQQ")
_EOCD64_SIG = 0x06064B50
_LOCATOR64 = struct.Struct("<IIQI")
_LOCATOR64_SIG = 0x07064B50
_EXTRA_HEADER = struct.Struct("<HH")

_ZIP64_EXTRA_ID = 0x0001
# The extra-field id Android's zipalign uses for alignment padding; readers skip unknown ids.
_ALIGN_EXTRA_ID = 0xD935
_ALIGN_EXTRA_MIN = 6  # id, size and the 2-byte alignment value

# Limits past which a value needs ZIP64. Module-level so that tests can lower them to
# exercise the ZIP64 code paths without writing 4 GiB.
_ZIP64_LIMIT = 0xFFFFFFFF
_ZIP64_COUNT_LIMIT = 0xFFFF
_SATURATED = 0xFFFFFFFF

_STORED, _DEFLATED, _BZIP2, _LZMA = 0, 8, 12, 14
_FLAG_ENCRYPTED = 0x1
_FLAG_DATA_DESCRIPTOR = 0x8
_FLAG_UTF8 = 0x800
_VERSION = 20
_VERSION_ZIP64 = 45
_UNIX_FILE_ATTRS = (0o100644 & 0xFFFF) << 16
_MADE_BY_UNIX = 3 << 8

_ALIGNMENT = 8
_MAX_COMMENT = 0xFFFF
_READ_BLOCK = 1 << 16
# Recovery reads the file backwards in blocks of this size looking for end records.
_SCAN_BLOCK = 1 << 20
# Below this size, header and data go out in one write call.
_SMALL_VALUE = 1 << 16
# Linux caps a single read or write at a little under 2 GiB.
_MAX_IO = 1 << 30
# liblzma allocates the whole declared dictionary up front; never more than this is needed
# for a member's declared size.
_LZMA_MIN_DICT = 4096

_HAS_PREAD = hasattr(os, "pread")
_HAS_PWRITE = hasattr(os, "pwrite")
_O_BINARY = getattr(os, "O_BINARY", 0)
_SEEK_LOCK = threading.Lock()  # only used where os.pread/pwrite are missing


class CorruptZipError(CorruptStoreError, BadZipFile):
    """A damaged ZIP archive: both a zarrkit ``CorruptStoreError`` and a
    ``zipfile.BadZipFile``, so code written against either catches it.

    >>> issubclass(CorruptZipError, BadZipFile), issubclass(CorruptZipError, ValueError)
    (True, True)
    """


@dataclass(slots=True)
class _Member:
    """Where one member lives. Offsets are absolute file positions."""

    header_offset: int
    compress_size: int
    file_size: int
    method: int
    crc: int
    flags: int
    data_offset: int = -1  # resolved from the local header on first use


@dataclass(slots=True)
class _Header:
    """The fields of a local header that the member's central record repeats."""

    name: bytes
    version: int
    flags: int
    method: int
    clock: int
    date: int
    crc: int
    compress_size: int
    file_size: int

    def central_record(self, offset: int) -> bytes:
        return _central_record(
            self.name, self.version, self.flags, self.method, self.clock, self.date, self.crc,
            self.compress_size, self.file_size, offset,
        )


@dataclass(slots=True)
class _Directory:
    """A central directory as one end record describes it."""

    index: dict[str, _Member]
    central: bytes  # the records, verbatim
    count: int  # records found
    expected: int  # records the end record announces
    concat: int  # bytes in front of the archive proper
    start: int  # file offset of the first record: member data end before it
    eocd_pos: int
    end: int  # just past the end record's comment (or the end of the file)
    comment: bytes


@dataclass(slots=True)
class _Layout:
    """What opening found: the directory, and the members recovered past it."""

    index: dict[str, _Member]
    central: bytes = b""
    count: int = 0
    concat: int = 0
    comment: bytes = b""
    data_end: int = 0  # member data lie below this offset
    end: int = 0  # the end of the valid archive: where new members go
    recovered: bool = False
    recovered_records: list[bytes] = field(default_factory=list)


# --- raw I/O ---------------------------------------------------------------------------
def _pread_exact(fd: int, offset: int, size: int, path: Path) -> bytes:
    """Read exactly ``size`` bytes at ``offset``; a short file is a damaged archive."""
    parts: list[bytes] = []
    while size > 0:
        n = min(size, _MAX_IO)
        if _HAS_PREAD:
            part = os.pread(fd, n, offset)
        else:  # pragma: no cover - Windows
            with _SEEK_LOCK:
                os.lseek(fd, offset, os.SEEK_SET)
                part = os.read(fd, n)
        if not part:
            raise CorruptZipError(f"{path}: unexpected end of file at offset {offset}")
        parts.append(part)
        offset += len(part)
        size -= len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _pwrite_all(fd: int, data: Buffer, offset: int) -> None:
    """Write all of ``data`` at ``offset`` (one call in the common case)."""
    if _HAS_PWRITE and len(data) <= _MAX_IO:
        written = os.pwrite(fd, data, offset)
        if written == len(data):
            return
        data, offset = memoryview(data)[written:], offset + written
    view = memoryview(data).cast("B")
    while view:
        chunk = view[:_MAX_IO]
        if _HAS_PWRITE:
            n = os.pwrite(fd, chunk, offset)
        else:  # pragma: no cover - Windows
            with _SEEK_LOCK:
                os.lseek(fd, offset, os.SEEK_SET)
                n = os.write(fd, chunk)
        view = view[n:]
        offset += n


# --- encoding and decoding -------------------------------------------------------------
# The last second converted, and its DOS date and time: appends come many to a second.
_dos_cache: tuple[int, tuple[int, int]] = (-1, (0, 0))


def _dos_datetime(timestamp: float) -> tuple[int, int]:
    global _dos_cache
    second = int(timestamp)
    cached = _dos_cache  # one read: another thread may replace it meanwhile
    if cached[0] == second:
        return cached[1]
    t = time.localtime(second)
    year = min(max(t.tm_year, 1980), 2107)
    date = ((year - 1980) << 9) | (t.tm_mon << 5) | t.tm_mday
    clock = (t.tm_hour << 11) | (t.tm_min << 5) | (t.tm_sec // 2)
    _dos_cache = (second, (date, clock))
    return date, clock


def _lzma_decompress(data: bytes, limit: int) -> bytes:
    # A ZIP LZMA member starts with its own small header (version, properties size and the
    # 5-byte LZMA1 properties) in front of a raw LZMA1 stream.
    if len(data) < 4:
        raise CorruptZipError("truncated LZMA header")
    (props_size,) = struct.unpack_from("<H", data, 2)
    props = data[4 : 4 + props_size]
    if len(props) != 5:
        raise CorruptZipError("bad LZMA properties")
    packed, dict_size = props[0], int.from_bytes(props[1:5], "little")
    lc, rest = packed % 9, packed // 9
    lp, pb = rest % 5, rest // 5
    # No match reaches further back than the output is long, so a dictionary of the
    # output's size decodes the same stream; a forged 4 GiB one is never allocated.
    dict_size = min(dict_size, max(limit, _LZMA_MIN_DICT))
    filters = [
        {"id": lzma.FILTER_LZMA1, "lc": lc, "lp": lp, "pb": pb, "dict_size": dict_size}
    ]
    decompressor = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters)
    return decompressor.decompress(data[4 + props_size :], limit)


# Stored members never come here: their bytes are read as they are.
_DECODERS: dict[int, Callable[[bytes, int], bytes]] = {
    _DEFLATED: lambda raw, limit: zlib.decompressobj(-15).decompress(raw, limit),
    _BZIP2: lambda raw, limit: bz2.BZ2Decompressor().decompress(raw, limit),
    _LZMA: _lzma_decompress,
}


def _decompress(method: int, raw: bytes, size: int, what: str) -> bytes:
    """Return ``raw`` decompressed to exactly ``size`` bytes; ``what`` names the member in
    errors. Never produces more than ``size + 1`` bytes, whatever the stream holds."""
    decoder = _DECODERS.get(method)
    if decoder is None:
        raise UnsupportedOperationError(f"{what} uses unsupported compression method {method}")
    if size > config.max_chunk_bytes:
        raise ResourceLimitError(
            f"{what} declares {size} bytes, more than zarrkit.config.max_chunk_bytes"
        )
    try:
        data = decoder(raw, size + 1)
    except ZarrkitError:
        raise
    except (zlib.error, lzma.LZMAError, OSError, EOFError, ValueError) as error:
        # bz2 reports a bad stream as OSError, lzma bad properties as ValueError.
        raise CorruptZipError(f"{what} cannot be decompressed: {error}") from error
    if len(data) != size:
        raise CorruptZipError(f"{what} has {len(data)} bytes, the directory says {size}")
    return data


def _align_padding(used: int) -> bytes:
    """Return an extra field that makes ``used + len(field)`` a multiple of the alignment."""
    pad = -used % _ALIGNMENT
    if pad == 0:
        return b""
    # A well-formed extra block needs at least _ALIGN_EXTRA_MIN bytes, so short pads grow
    # by a whole alignment unit.
    while pad < _ALIGN_EXTRA_MIN:
        pad += _ALIGNMENT
    return (
        _EXTRA_HEADER.pack(_ALIGN_EXTRA_ID, pad - 4)
        + struct.pack("<H", _ALIGNMENT)
        + bytes(pad - _ALIGN_EXTRA_MIN)
    )


def _zip64_block(extra: bytes) -> list[int] | None:
    """The 8-byte values of the ZIP64 block in ``extra``, or None if it has none."""
    pos = 0
    while pos + 4 <= len(extra):
        block_id, block_size = _EXTRA_HEADER.unpack_from(extra, pos)
        body = extra[pos + 4 : pos + 4 + block_size]
        pos += 4 + block_size
        if block_id == _ZIP64_EXTRA_ID:
            return [v for (v,) in struct.iter_unpack("<Q", body[: len(body) // 8 * 8])]
    return None


def _central_zip64_fields(
    extra: bytes, file_size: int, compress_size: int, header_offset: int, path: Path
) -> tuple[int, int, int]:
    values = _zip64_block(extra)
    if values is None:
        raise CorruptZipError(f"{path}: ZIP64 field saturated without a ZIP64 extra")
    # Only the fields saturated in the fixed record are present, in this order.
    if file_size == _SATURATED and values:
        file_size = values.pop(0)
    if compress_size == _SATURATED and values:
        compress_size = values.pop(0)
    if header_offset == _SATURATED and values:
        header_offset = values.pop(0)
    return file_size, compress_size, header_offset


def _local_zip64_sizes(extra: bytes, file_size: int, compress_size: int) -> tuple[int, int]:
    # In a local header the ZIP64 block always holds both sizes, uncompressed first.
    values = _zip64_block(extra)
    if values is None or len(values) < 2:
        raise CorruptZipError("ZIP64 sizes saturated without a ZIP64 extra")
    return values[0], values[1]


def _central_record(
    name: bytes, version: int, flags: int, method: int, clock: int, date: int, crc: int,
    compress_size: int, file_size: int, offset: int,
) -> bytes:
    """The central directory record of a member whose local header is at ``offset``
    (relative to the archive start)."""
    zip64_values: list[int] = []
    compress32, size32, offset32 = compress_size, file_size, offset
    if file_size >= _ZIP64_LIMIT or compress_size >= _ZIP64_LIMIT:
        zip64_values += [file_size, compress_size]
        compress32 = size32 = _SATURATED
    if offset >= _ZIP64_LIMIT:
        zip64_values.append(offset)
        offset32 = _SATURATED
    extra = b""
    if zip64_values:
        extra = _EXTRA_HEADER.pack(_ZIP64_EXTRA_ID, 8 * len(zip64_values)) + struct.pack(
            f"<{len(zip64_values)}Q", *zip64_values
        )
        version = max(version, _VERSION_ZIP64)
    return (
        _CENTRAL.pack(
            _CENTRAL_SIG, _MADE_BY_UNIX | version, version, flags, method, clock, date, crc,
            compress32, size32, len(name), len(extra), 0, 0, 0, _UNIX_FILE_ATTRS, offset32,
        )
        + name
        + extra
    )


def _key_of(raw_name: bytes, flags: int) -> str | None:
    """The store key a member name stands for, or None for a directory, an undecodable
    name or one that could escape a directory (zip slip)."""
    try:
        name = raw_name.decode("utf-8" if flags & _FLAG_UTF8 else "cp437")
    except UnicodeDecodeError:
        return None
    if name.endswith("/"):
        return None
    try:
        validate_key(name)
    except InvalidKeyError:
        return None
    return name


def _counts_agree(found: int, expected: int) -> bool:
    # Some writers wrap the 16-bit count or saturate it; the records are authoritative.
    return found == expected or expected == 0xFFFF or found & 0xFFFF == expected


# --- reading an archive's structure ------------------------------------------------------
class _Reader:
    """Reads the structure of the archive in an open file of ``size`` bytes. Every kind of
    damage it meets raises CorruptZipError."""

    def __init__(self, fd: int, path: Path, size: int) -> None:
        self.fd = fd
        self.path = path
        self.size = size

    def _read(self, offset: int, size: int) -> bytes:
        # Checked before reading: a forged size must never become an allocation.
        if offset < 0 or size < 0 or offset + size > self.size:
            raise CorruptZipError(
                f"{self.path}: {size} bytes at offset {offset} lie outside the file"
            )
        return _pread_exact(self.fd, offset, size, self.path) if size else b""

    def read(self) -> _Layout:
        """The archive's layout: the central directory its end record names or, if the
        file has no valid one at its end, what :meth:`recover` finds."""
        failure: CorruptZipError | None = None
        for pos in self._end_records_at_end():
            try:
                directory = self._directory_at(pos)
            except CorruptZipError as error:
                failure = failure or error
                continue
            if not _counts_agree(directory.count, directory.expected):
                warnings.warn(
                    f"{self.path}: central directory holds {directory.count} records, "
                    f"end record says {directory.expected}",
                    stacklevel=2,
                )
            return _Layout(
                directory.index, directory.central, directory.count, directory.concat,
                directory.comment, data_end=directory.start, end=self.size,
            )
        return self.recover(failure)

    def _end_records_at_end(self) -> Iterator[int]:
        """Offsets of the end records whose comment ends exactly at the end of the file,
        last first (a comment may hold something that looks like one)."""
        tail_size = min(self.size, _EOCD.size + _MAX_COMMENT)
        tail = self._read(self.size - tail_size, tail_size)
        pos = tail.rfind(_EOCD_SIG_BYTES)
        while pos >= 0:
            if pos + _EOCD.size <= len(tail):
                (comment_len,) = struct.unpack_from("<H", tail, pos + _EOCD.size - 2)
                if pos + _EOCD.size + comment_len == len(tail):
                    yield self.size - tail_size + pos
            pos = tail.rfind(_EOCD_SIG_BYTES, 0, pos + 3)

    def _directory_at(self, pos: int) -> _Directory:
        """Parse the end record at ``pos`` and the central directory it names."""
        record = self._read(pos, _EOCD.size)
        (sig, disk, cd_disk, _, count, cd_size, cd_offset, comment_len) = _EOCD.unpack(record)
        if sig != _EOCD_SIG:
            raise CorruptZipError(f"{self.path}: no end of central directory at {pos}")
        end = min(pos + _EOCD.size + comment_len, self.size)
        comment = self._read(pos + _EOCD.size, end - pos - _EOCD.size)
        directory_end = pos  # where the central directory (or the ZIP64 record) ends
        zip64 = self._zip64_end_record(pos - _LOCATOR64.size)
        if zip64 is not None:
            directory_end, disk, cd_disk, count, cd_size, cd_offset = zip64
        if disk != 0 or cd_disk != 0:
            raise CorruptZipError(f"{self.path}: multi-disk archives are not supported")
        concat = directory_end - cd_size - cd_offset
        if concat < 0:
            raise CorruptZipError(f"{self.path}: central directory offset past its end")
        start = concat + cd_offset
        central = self._read(start, cd_size)
        index, found = self._parse_central(central, concat)
        return _Directory(index, central, found, count, concat, start, pos, end, comment)

    def _zip64_end_record(self, locator_pos: int) -> tuple[int, int, int, int, int, int] | None:
        """``(position, disk, cd_disk, count, cd_size, cd_offset)`` of the ZIP64 end
        record that a locator at ``locator_pos`` points to, or None if there is no
        locator."""
        if locator_pos < 0:
            return None
        sig, _, eocd64_offset, _ = _LOCATOR64.unpack(self._read(locator_pos, _LOCATOR64.size))
        if sig != _LOCATOR64_SIG:
            return None
        # The record normally sits right before the locator; if prepended data shift the
        # archive, the offset in the locator is relative to the archive start.
        last = locator_pos - _EOCD64.size
        for candidate in (last, eocd64_offset):
            if 0 <= candidate <= last:
                raw = self._read(candidate, _EOCD64.size)
                (sig64, _, _, _, disk, cd_disk, _, count, cd_size, cd_offset) = (
                    _EOCD64.unpack(raw)
                )
                if sig64 == _EOCD64_SIG:
                    return candidate, disk, cd_disk, count, cd_size, cd_offset
        raise CorruptZipError(f"{self.path}: ZIP64 end of central directory not found")

    def _parse_central(self, central: bytes, concat: int) -> tuple[dict[str, _Member], int]:
        pos = 0
        count = 0
        index: dict[str, _Member] = {}
        while pos < len(central):
            if pos + _CENTRAL.size > len(central):
                raise CorruptZipError(f"{self.path}: truncated central directory")
            (
                sig,
                _made_by,
                _needed,
                flags,
                method,
                _time,
                _date,
                crc,
                compress_size,
                file_size,
                name_len,
                extra_len,
                comment_len,
                _disk,
                _internal,
                _external,
                header_offset,
            ) = _CENTRAL.unpack_from(central, pos)
            if sig != _CENTRAL_SIG:
                raise CorruptZipError(
                    f"{self.path}: bad central directory record at entry {count}"
                )
            pos += _CENTRAL.size
            raw_name = central[pos : pos + name_len]
            pos += name_len
            extra = central[pos : pos + extra_len]
            pos += extra_len + comment_len
            count += 1
            if _SATURATED in (compress_size, file_size, header_offset):
                file_size, compress_size, header_offset = _central_zip64_fields(
                    extra, file_size, compress_size, header_offset, self.path
                )
            key = _key_of(raw_name, flags)
            if key is not None:
                index[key] = _Member(
                    header_offset + concat, compress_size, file_size, method, crc, flags
                )
        if pos != len(central):
            raise CorruptZipError(f"{self.path}: truncated central directory")
        return index, count

    # --- recovery -----------------------------------------------------------------------
    def recover(self, failure: CorruptZipError | None) -> _Layout:
        """The archive of a writer that did not close: the last valid central directory
        (none if there is no valid one) plus the complete members written after it."""
        directory = self._trusted_last_directory()
        layout = _Layout({}, recovered=True)
        start = 0
        if directory is not None:
            layout = _Layout(
                directory.index, directory.central, directory.count, directory.concat,
                directory.comment, data_end=directory.start, end=directory.end,
                recovered=True,
            )
            start = directory.end
        for pos, header, data_offset in self._local_headers(start):
            if not self._intact(header, data_offset):
                break  # sizes past a damaged member cannot be trusted
            layout.recovered_records.append(header.central_record(pos - layout.concat))
            key = _key_of(header.name, header.flags)
            if key is not None:
                layout.index[key] = _Member(
                    pos, header.compress_size, header.file_size, header.method, header.crc,
                    header.flags, data_offset,
                )
            layout.end = layout.data_end = data_offset + header.compress_size
        if directory is None and not layout.recovered_records and not self._starts_local():
            reason = f" ({failure})" if failure is not None else ""
            raise CorruptZipError(
                f"{self.path} is not a ZIP archive: no valid end of central directory and "
                f"no member at its start{reason}"
            ) from failure
        return layout

    def _starts_local(self) -> bool:
        return self.size >= 4 and self._read(0, 4) == struct.pack("<I", _LOCAL_SIG)

    def _trusted_last_directory(self) -> _Directory | None:
        """The last valid central directory that is not inside a member's data (a value
        that is itself a ZIP archive holds a perfectly valid one)."""
        directory = self._last_directory(self.size)
        while directory is not None:
            earlier = self._last_directory(directory.eocd_pos)
            if not self._inside_member(earlier.end if earlier else 0, directory.eocd_pos):
                return directory
            directory = earlier
        return None

    def _last_directory(self, before: int) -> _Directory | None:
        """The last end record before offset ``before`` whose central directory parses
        and holds the number of records it announces."""
        for pos in self._end_signatures(before):
            try:
                directory = self._directory_at(pos)
            except CorruptZipError:
                continue
            if _counts_agree(directory.count, directory.expected):
                return directory
        return None

    def _end_signatures(self, before: int) -> Iterator[int]:
        """Offsets of end-record signatures that start before ``before``, last first."""
        high = before
        while high > 0:
            low = max(0, high - _SCAN_BLOCK)
            # Three bytes of overlap find a signature that straddles two blocks.
            block = self._read(low, min(high + 3, self.size) - low)
            pos = block.rfind(_EOCD_SIG_BYTES, 0, high - low + 3)
            while pos >= 0:
                yield low + pos
                pos = block.rfind(_EOCD_SIG_BYTES, 0, pos + 3)
            high = low

    def _inside_member(self, start: int, target: int) -> bool:
        """Whether walking the members from ``start`` lands inside one holding ``target``."""
        for pos, header, data_offset in self._local_headers(start):
            if pos > target:
                return False
            if target < data_offset + header.compress_size:
                return True
        return False

    def _local_headers(self, pos: int) -> Iterator[tuple[int, _Header, int]]:
        """``(offset, header, data offset)`` of consecutive members from ``pos``, up to the
        first that is not one, is torn, or has no sizes in its header."""
        while pos + _LOCAL.size <= self.size:
            (sig, version, flags, method, clock, date, crc, compress_size, file_size,
             name_len, extra_len) = _LOCAL.unpack(self._read(pos, _LOCAL.size))
            if sig != _LOCAL_SIG or flags & (_FLAG_DATA_DESCRIPTOR | _FLAG_ENCRYPTED):
                return
            data_offset = pos + _LOCAL.size + name_len + extra_len
            if data_offset > self.size:
                return
            variable = self._read(pos + _LOCAL.size, name_len + extra_len)
            if _SATURATED in (compress_size, file_size):
                try:
                    file_size, compress_size = _local_zip64_sizes(
                        variable[name_len:], file_size, compress_size
                    )
                except CorruptZipError:
                    return
            if data_offset + compress_size > self.size:
                return
            name = variable[:name_len]
            yield pos, _Header(
                name, version, flags, method, clock, date, crc, compress_size, file_size
            ), data_offset
            pos = data_offset + compress_size

    def _intact(self, header: _Header, data_offset: int) -> bool:
        """Whether the member's data are all there and match its CRC."""
        if header.method == _STORED:
            if header.compress_size != header.file_size:
                return False
            crc = 0
            done = 0
            while done < header.file_size:
                n = min(_SCAN_BLOCK, header.file_size - done)
                crc = zlib.crc32(self._read(data_offset + done, n), crc)
                done += n
            return crc == header.crc
        try:
            raw = self._read(data_offset, header.compress_size)
            data = _decompress(header.method, raw, header.file_size, f"{self.path}: member")
        except ZarrkitError:
            return False
        return zlib.crc32(data) == header.crc


# --- shared archive state --------------------------------------------------------------
class _Archive:
    """One open archive file: descriptor, index and write position. Every writable
    ZipStore on the same file in a process shares one (so their appends never overlap);
    a read-only store has its own."""

    def __init__(self, path: Path, fd: int, identity: tuple[int, int], writable: bool) -> None:
        self.path = path
        self.fd = fd
        self.identity = identity
        self.writable = writable  # then it sits in the registry, shared
        self.locked = False  # holds the OS lock on the file
        self.pid = os.getpid()  # a forked child shares the lock and must not release it
        self.refs = 1
        self.index: dict[str, _Member] = {}
        self.sorted_keys: list[str] | None = None
        self.index_lock = threading.Lock()  # guards the index and the sorted-key cache
        self.write_lock = threading.Lock()  # serialises appends and central directories
        # Central directory records of the archive as found on disk, re-emitted verbatim in
        # append mode so that members this store hides (directories, unsafe names,
        # shadowed duplicates) survive.
        self.old_central = b""
        self.old_count = 0
        self.comment = b""
        self.new_central: list[bytes] = []
        self.concat = 0  # bytes before the archive proper
        self.data_end = 0  # member data lie below this offset
        self.write_pos = 0
        self.dirty = False
        self.recovered = False

    def load(self, writable: bool) -> None:
        layout = _Reader(self.fd, self.path, os.fstat(self.fd).st_size).read()
        self.index = layout.index
        self.concat = layout.concat
        self.comment = layout.comment
        self.data_end = layout.data_end
        self.write_pos = layout.end
        self.recovered = layout.recovered
        if writable:
            self.old_central, self.old_count = layout.central, layout.count
            self.new_central = layout.recovered_records
            if layout.recovered:
                # What follows the last intact member is a torn one: drop it, and give
                # the archive a complete central directory on close.
                os.ftruncate(self.fd, layout.end)
                self.dirty = True

    def write_central_directory(self) -> None:
        """Write a central directory of every member at the write position. Later appends
        go after it, so the archive stays valid whatever happens to them."""
        start = self.write_pos
        central = b"".join([self.old_central, *self.new_central])
        count = self.old_count + len(self.new_central)
        archive_start = start - self.concat
        tail = bytearray(central)
        if (
            count >= _ZIP64_COUNT_LIMIT
            or archive_start >= _ZIP64_LIMIT
            or len(central) >= _ZIP64_LIMIT
        ):
            eocd64_offset = archive_start + len(central)
            tail += _EOCD64.pack(
                _EOCD64_SIG, _EOCD64.size - 12, _MADE_BY_UNIX | _VERSION_ZIP64,
                _VERSION_ZIP64, 0, 0, count, count, len(central), archive_start,
            )
            tail += _LOCATOR64.pack(_LOCATOR64_SIG, 0, eocd64_offset, 1)
        tail += _EOCD.pack(
            _EOCD_SIG, 0, 0, min(count, 0xFFFF), min(count, 0xFFFF),
            min(len(central), _SATURATED), min(archive_start, _SATURATED), len(self.comment),
        )
        tail += self.comment
        _pwrite_all(self.fd, tail, start)
        os.ftruncate(self.fd, start + len(tail))
        if config.fsync:
            os.fsync(self.fd)
        self.write_pos = start + len(tail)
        self.dirty = False

    def release(self) -> None:
        """Drop one handle's reference; the last one unlocks and closes the file."""
        with _registry_lock:
            self.refs -= 1
            if self.refs > 0 or self.fd < 0:
                return
            # Unlocked and closed under the registry lock: an open racing with this close
            # must not find the file still locked by a state it cannot see any more.
            if self.writable and _registry.get(self.identity) is self:
                del _registry[self.identity]
            if self.locked and fcntl is not None and os.getpid() == self.pid:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            fd, self.fd = self.fd, -1
            os.close(fd)


# Writable archives open in this process, by (st_dev, st_ino). Reentrant: a ZipStore
# finalised by the garbage collector releases its reference from whatever code runs.
_registry: dict[tuple[int, int], _Archive] = {}
_registry_lock = threading.RLock()


def _reset_after_fork() -> None:
    # The child is another process: it must take the OS lock itself, not reuse the
    # parent's states (whose lock may be held by a thread that no longer exists).
    global _registry_lock
    _registry.clear()
    _registry_lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _lock_exclusive(fd: int, path: Path) -> bool:
    """Take the archive's exclusive OS lock without waiting; return whether the platform
    and file system have one."""
    if fcntl is None:  # pragma: no cover - Windows
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise StoreLockedError(
            f"{path} is open for writing in another process (it holds the archive's lock); "
            "close it there, or open this one with mode='r'"
        ) from None
    except OSError as error:
        if error.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
            return False  # a file system without locks: write unguarded, as before
        raise
    return True


def _open_archive(path: Path, mode: str) -> _Archive:
    """The archive state for a new handle: its own for a reader, the shared one for a
    writer."""
    if mode == "r":
        fd = os.open(path, os.O_RDONLY | _O_BINARY)
        try:
            stat = os.fstat(fd)
            archive = _Archive(path, fd, (stat.st_dev, stat.st_ino), writable=False)
            archive.load(writable=False)
        except BaseException:
            os.close(fd)
            raise
        return archive
    # No O_TRUNC: mode "w" empties the file only once it holds the lock.
    flags = os.O_RDWR | os.O_CREAT | _O_BINARY | (os.O_EXCL if mode == "x" else 0)
    with _registry_lock:
        fd = os.open(path, flags, 0o666)
        try:
            stat = os.fstat(fd)
            identity = (stat.st_dev, stat.st_ino)
            shared = _registry.get(identity)
            if shared is None or shared.refs <= 0:
                return _new_writable_archive(path, fd, identity, mode)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the shared state has its own descriptor
        if mode == "w":
            raise StoreLockedError(
                f"{path} is open for writing in this process; mode 'w' would empty it "
                "under the other handles (open it with mode 'a' to share it)"
            )
        shared.refs += 1
        return shared


def _new_writable_archive(path: Path, fd: int, identity: tuple[int, int], mode: str) -> _Archive:
    """Lock, empty (mode "w") and read the archive; register it for sharing."""
    archive = _Archive(path, fd, identity, writable=True)
    archive.locked = _lock_exclusive(fd, path)
    if mode == "w":
        os.ftruncate(fd, 0)
    if os.fstat(fd).st_size:
        archive.load(writable=True)
    else:
        archive.dirty = True  # a new archive is written on close even if nothing is set
    _registry[identity] = archive
    return archive


class ZipStore(Store):
    """Keys as members of a ZIP archive at ``path``.

    ``mode`` is ``"r"`` (read an existing archive; the store is read-only), ``"w"`` (create
    or truncate), ``"a"`` (append to an existing archive, or create it) or ``"x"`` (create;
    fail with FileExistsError if the file exists). ``read_only`` defaults to ``mode == "r"``
    and may only restate that. ``verify_crc`` checks each member's CRC-32 on full reads.

    Writes append STORED members whose data are 8-byte aligned; writing an existing key
    appends a new member that shadows the old one (the file keeps both). ``delete`` of a
    present key raises NotImplementedError; deleting a missing key is a no-op. Call
    :meth:`close` (or use ``with``) to write the central directory.

    The store is safe to use from many threads: writes are serialised by a lock, reads use
    positional reads (``os.pread``) and never block each other. Writable stores opened
    separately on one file in a process share their state (opening one with mode ``"w"``
    while another is open raises StoreLockedError, as it would empty the archive under
    it); while they are open, a writable open in another process raises StoreLockedError.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.zip")
    >>> with ZipStore(path, mode="w") as s:
    ...     s.set("k", b"old")
    ...     s.set("k", b"new")  # appends; the last member wins
    ...     s.get("k")
    b'new'
    """

    supports_deletes: bool = False

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: str = "r",
        *,
        read_only: bool | None = None,
        verify_crc: bool = True,
    ) -> None:
        if mode not in ("r", "w", "a", "x"):
            raise ValueError(f"ZipStore mode must be 'r', 'w', 'a' or 'x', not {mode!r}")
        if read_only is None:
            read_only = mode == "r"
        elif read_only != (mode == "r"):
            raise ValueError(f"read_only={read_only} contradicts mode {mode!r}")
        self.path = Path(path)
        self.mode = mode
        self.read_only = read_only
        self.verify_crc = verify_crc
        self._fd = -1
        self._mmap: mmap.mmap | None = None
        self._map_lock = threading.Lock()
        archive = _open_archive(self.path, mode)
        self._archive = archive
        self._index = archive.index
        self._index_lock = archive.index_lock
        self._write_lock = archive.write_lock
        self._fd = archive.fd

    def __repr__(self) -> str:
        return f"ZipStore({str(self.path)!r}, mode={self.mode!r})"

    @property
    def recovered(self) -> bool:
        """Whether opening found an archive that was not closed (a writer killed before
        writing its central directory) and recovered its intact members.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "v.zip")
        >>> ZipStore(path, mode="w").close()
        >>> with ZipStore(path) as s:
        ...     s.recovered
        False
        """
        return self._archive.recovered

    @property
    def lock_identity(self) -> tuple[str, int, int]:
        """Equal for every handle on the same archive file (its device and inode), so that
        separately opened handles share their key locks.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "i.zip")
        >>> with ZipStore(path, mode="w") as a, ZipStore(path, mode="a") as b:
        ...     a.lock_identity == b.lock_identity
        True
        """
        return ("zip", *self._archive.identity)

    # --- low-level I/O ------------------------------------------------------------------
    def _require_open(self) -> int:
        fd = self._fd
        if fd < 0:
            raise ValueError(f"I/O operation on closed {self!r}")
        return fd

    def _pread(self, offset: int, size: int) -> bytes:
        fd = self._require_open()
        if _HAS_PREAD and size <= _MAX_IO:
            data = os.pread(fd, size, offset)
            if len(data) == size:
                return data
        return _pread_exact(fd, offset, size, self.path)

    # --- reading members ----------------------------------------------------------------
    def _data_offset(self, member: _Member) -> int:
        if member.data_offset >= 0:
            return member.data_offset
        limit = self._archive.data_end
        if member.header_offset + _LOCAL.size > limit:
            raise CorruptZipError(f"{self.path}: local header at {member.header_offset} "
                                  "lies past the member data")
        header = self._pread(member.header_offset, _LOCAL.size)
        sig, *_, name_len, extra_len = _LOCAL.unpack(header)
        if sig != _LOCAL_SIG:
            raise CorruptZipError(f"{self.path}: bad local header at {member.header_offset}")
        if member.method == _STORED and member.compress_size != member.file_size:
            raise CorruptZipError(
                f"{self.path}: stored member at {member.header_offset} declares two sizes"
            )
        offset = member.header_offset + _LOCAL.size + name_len + extra_len
        if offset + member.compress_size > limit:
            raise CorruptZipError(
                f"{self.path}: member at {member.header_offset} overruns the data"
            )
        member.data_offset = offset  # benign race: every thread computes the same value
        return offset

    def _member(self, key: str) -> _Member | None:
        member = self._index.get(key)
        if member is not None and member.flags & _FLAG_ENCRYPTED:
            raise UnsupportedOperationError(f"{self.path}: member {key!r} is encrypted")
        return member

    def _check_crc(self, key: str, member: _Member, data: Buffer) -> None:
        if self.verify_crc and zlib.crc32(data) != member.crc:
            raise CorruptZipError(f"{self.path}: bad CRC-32 for member {key!r}")

    # --- readable -----------------------------------------------------------------------
    def _get(self, key: str) -> bytes | None:
        member = self._member(key)
        if member is None:
            return None
        raw = self._pread(self._data_offset(member), member.compress_size)
        if member.method == _STORED:
            data = raw  # _data_offset checked that both sizes agree
        else:
            data = _decompress(
                member.method, raw, member.file_size, f"{self.path}: member {key!r}"
            )
        self._check_crc(key, member, data)
        return data

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Return ``length`` bytes of ``key``'s value from ``start`` (to the end if None);
        a negative ``start`` counts from the end. A stored member is read in place; a
        deflated one is decompressed only as far as needed.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "r.zip")
        >>> with ZipStore(path, mode="w") as s:
        ...     s.set("k", b"0123456789")
        ...     s.get_range("k", -3)
        b'789'
        """
        validate_key(key)
        member = self._member(key)
        if member is None:
            return None
        size = member.file_size
        if start < 0:
            start = max(size + start, 0)
        begin, end, _ = slice(start, None if length is None else start + length).indices(size)
        if end <= begin:
            return b""
        data_offset = self._data_offset(member)
        if member.method == _STORED:
            return self._pread(data_offset + begin, end - begin)
        if member.method == _DEFLATED:
            return self._inflate_prefix(key, member, data_offset, end)[begin:end]
        value = self._get(key)
        assert value is not None
        return value[begin:end]

    def _inflate_prefix(self, key: str, member: _Member, data_offset: int, end: int) -> bytes:
        if end > config.max_chunk_bytes:
            raise ResourceLimitError(
                f"{self.path}: reading {end} bytes of {key!r} exceeds max_chunk_bytes"
            )
        decompressor = zlib.decompressobj(-15)
        out = bytearray()
        consumed = 0
        try:
            while len(out) < end and consumed < member.compress_size:
                block = self._pread(
                    data_offset + consumed, min(_READ_BLOCK, member.compress_size - consumed)
                )
                consumed += len(block)
                out += decompressor.decompress(block, end - len(out))
                while decompressor.unconsumed_tail and len(out) < end:
                    out += decompressor.decompress(decompressor.unconsumed_tail, end - len(out))
        except zlib.error as error:
            raise CorruptZipError(f"{self.path}: member {key!r}: {error}") from error
        if len(out) < end:
            raise CorruptZipError(f"{self.path}: member {key!r} is shorter than declared")
        return bytes(out)

    def get_into(self, key: str, out: memoryview) -> bool:
        """Read ``key`` into ``out``, which must be exactly its size; return False if the
        key is missing. A stored member goes straight from the file into ``out``.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "i.zip")
        >>> with ZipStore(path, mode="w") as s:
        ...     s.set("k", b"abc")
        ...     buf = bytearray(3)
        ...     s.get_into("k", memoryview(buf)), bytes(buf)
        (True, b'abc')
        """
        validate_key(key)
        member = self._member(key)
        if member is None:
            return False
        target = memoryview(out).cast("B")
        if len(target) != member.file_size:
            raise ValueError(
                f"size of {key!r} ({member.file_size}) differs from the expected {len(target)}"
            )
        if member.method == _STORED and hasattr(os, "preadv"):
            offset = self._data_offset(member)
            done = 0
            while done < len(target):
                n = os.preadv(self._require_open(), [target[done : done + _MAX_IO]], offset)
                if n <= 0:
                    raise CorruptZipError(f"{self.path}: unexpected end of file in {key!r}")
                done += n
                offset += n
            self._check_crc(key, member, target)
            return True
        value = self._get(key)
        assert value is not None
        target[:] = value
        return True

    def map_value(self, key: str) -> memoryview | None:
        """Return a read-only, zero-copy view of a STORED member's bytes, or None if
        ``key`` is missing. The view maps the file; it stays valid after :meth:`close` as
        long as it is referenced. Only for stores opened with ``mode="r"``; a compressed
        member raises ValueError (read it with :meth:`get`).

        >>> import os, tempfile
        >>> import numpy as np
        >>> path = os.path.join(tempfile.mkdtemp(), "m.zip")
        >>> with ZipStore(path, mode="w") as s:
        ...     s.set("0", np.arange(4, dtype="<i4").tobytes())
        >>> with ZipStore(path) as s:
        ...     np.frombuffer(s.map_value("0"), dtype="<i4")
        array([0, 1, 2, 3], dtype=int32)
        """
        validate_key(key)
        if not self.read_only:
            raise ValueError(f"map_value needs a read-only ZipStore; {self!r} is writable")
        member = self._member(key)
        if member is None:
            return None
        if member.method != _STORED:
            raise ValueError(
                f"member {key!r} of {self.path} is compressed (method {member.method}) and "
                "cannot be mapped; use get()"
            )
        offset = self._data_offset(member)
        mapped = self._mmap
        if mapped is None:
            with self._map_lock:
                if self._mmap is None:
                    self._mmap = mmap.mmap(self._require_open(), 0, access=mmap.ACCESS_READ)
                mapped = self._mmap
        return memoryview(mapped)[offset : offset + member.file_size]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._index

    # --- writable -----------------------------------------------------------------------
    def _set(self, key: str, value: Buffer) -> None:
        member = self._prepare(key, value)
        with self._write_lock:
            self._append(key, *member)

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        """Store ``value`` under ``key`` unless the key is present; return whether it was
        stored. Atomic among every handle on the archive (they share one write lock, and
        other processes cannot write it).

        >>> import os, tempfile
        >>> with ZipStore(os.path.join(tempfile.mkdtemp(), "s.zip"), mode="w") as s:
        ...     s.set_if_not_exists("k", b"a"), s.set_if_not_exists("k", b"b"), s.get("k")
        (True, False, b'a')
        """
        self._check_writable(key)
        validate_key(key)
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"store values must be bytes-like, not {type(value).__name__}")
        if key in self._index:  # keys never disappear, so this answer is final
            return False
        member = self._prepare(key, value)
        with self._write_lock:
            if key in self._index:
                return False
            self._append(key, *member)
        return True

    @staticmethod
    def _prepare(key: str, value: Buffer) -> tuple[memoryview, bytes, int, int]:
        """The bytes, name, flags and CRC of a new member, computed outside the write
        lock."""
        view = memoryview(value)
        if not view.c_contiguous:
            view = memoryview(view.tobytes())
        view = view.cast("B")
        flags = 0 if key.isascii() else _FLAG_UTF8
        return view, key.encode("utf-8"), flags, zlib.crc32(view)

    def _append(self, key: str, view: memoryview, name: bytes, flags: int, crc: int) -> None:
        """Append one member at the write position; the caller holds the write lock."""
        fd = self._require_open()
        archive = self._archive
        offset = archive.write_pos
        archive_offset = offset - archive.concat
        size = view.nbytes
        big = size >= _ZIP64_LIMIT
        version = _VERSION_ZIP64 if big or archive_offset >= _ZIP64_LIMIT else _VERSION
        local_extra = (
            _EXTRA_HEADER.pack(_ZIP64_EXTRA_ID, 16) + struct.pack("<QQ", size, size)
            if big
            else b""
        )
        local_extra += _align_padding(offset + _LOCAL.size + len(name) + len(local_extra))
        size32 = _SATURATED if big else size
        date, clock = _dos_datetime(time.time())
        local = (
            _LOCAL.pack(
                _LOCAL_SIG, version, flags, _STORED, clock, date, crc, size32, size32,
                len(name), len(local_extra),
            )
            + name
            + local_extra
        )
        data_offset = offset + len(local)
        if size < _SMALL_VALUE:
            _pwrite_all(fd, local + view.tobytes(), offset)
        else:
            _pwrite_all(fd, local, offset)
            _pwrite_all(fd, view, data_offset)
        archive.write_pos = archive.data_end = data_offset + size
        archive.dirty = True
        archive.new_central.append(
            _central_record(name, _VERSION, flags, _STORED, clock, date, crc, size, size,
                            archive_offset)
        )
        member = _Member(offset, size, size, _STORED, crc, flags, data_offset)
        with archive.index_lock:
            is_new = key not in archive.index
            archive.index[key] = member
            if is_new:
                archive.sorted_keys = None

    def _delete(self, key: str) -> None:
        if key in self._index:
            raise UnsupportedOperationError(
                f"cannot delete {key!r}: {self!r} is append-only and does not support delete"
            )

    def delete_prefix(self, prefix: str) -> None:
        """Raise NotImplementedError if any key starts with ``prefix`` (a ZIP archive
        cannot drop members); do nothing if none does.

        >>> import os, tempfile
        >>> with ZipStore(os.path.join(tempfile.mkdtemp(), "d.zip"), mode="w") as s:
        ...     s.delete_prefix("nothing/")
        """
        self._check_writable(prefix)
        for key in self.list_prefix(prefix):
            raise UnsupportedOperationError(
                f"cannot delete prefix {prefix!r} (holding {key!r}): {self!r} is append-only"
            )

    # --- listable -----------------------------------------------------------------------
    def _iter_keys(self) -> Iterator[str]:
        with self._index_lock:
            keys = list(self._index)
        return iter(keys)

    def _sorted(self) -> list[str]:
        archive = self._archive
        with self._index_lock:
            if archive.sorted_keys is None:
                archive.sorted_keys = sorted(self._index)
            # The cached list is replaced, never mutated, so it can be read unlocked.
            return archive.sorted_keys

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Iterate, in sorted order, over the keys that start with ``prefix``.

        >>> import os, tempfile
        >>> with ZipStore(os.path.join(tempfile.mkdtemp(), "l.zip"), mode="w") as s:
        ...     s.set_many({"a/1": b"", "a/0": b"", "b": b""})
        ...     list(s.list_prefix("a/"))
        ['a/0', 'a/1']
        """
        validate_prefix(prefix)
        keys = self._sorted()
        first = bisect.bisect_left(keys, prefix)
        return self._take_prefixed(keys, first, prefix)

    @staticmethod
    def _take_prefixed(keys: list[str], first: int, prefix: str) -> Iterator[str]:
        for i in range(first, len(keys)):
            if not keys[i].startswith(prefix):
                return
            yield keys[i]

    # --- closing ------------------------------------------------------------------------
    def close(self) -> None:
        """Write the central directory (if anything changed since the last one) and
        close this handle; the last handle on the archive closes the file. Calling it
        again does nothing.

        >>> import os, tempfile, zipfile
        >>> path = os.path.join(tempfile.mkdtemp(), "c.zip")
        >>> s = ZipStore(path, mode="w"); s.set("k", b"v"); s.close()
        >>> zipfile.ZipFile(path).read("k")
        b'v'
        """
        archive = self._archive
        with archive.write_lock:
            if self._fd < 0:
                return
            try:
                if archive.dirty:
                    archive.write_central_directory()
            finally:
                self._fd = -1
                self._close_map()
                archive.release()

    def _close_map(self) -> None:
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                pass  # views handed out keep the mapping alive; it closes when they die
            self._mmap = None

    def __enter__(self) -> ZipStore:
        return self

    def __del__(self) -> None:
        archive = getattr(self, "_archive", None)
        if archive is None or getattr(self, "_fd", -1) < 0:
            return
        if archive.dirty and archive.refs == 1:
            warnings.warn(
                f"{self!r} was not closed; the archive has no central directory",
                ResourceWarning,
                stacklevel=2,
            )
        self._fd = -1
        archive.release()
