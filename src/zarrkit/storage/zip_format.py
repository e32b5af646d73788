"""The ZIP file format as ZipStore reads and writes it: record layouts (APPNOTE.TXT),
decoding a member, and finding an archive's members, by its central directory or, for an
archive whose writer was killed before writing one, by recovery through local headers.

Nothing here holds state between calls: :class:`ZipStore` (``storage/zip.py``) keeps the
open file, the index and the write position.

>>> align_padding(3) != b""
True
"""

from __future__ import annotations

import bz2
import lzma
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
    UnsupportedOperationError,
    ZarrkitError,
)
from zarrkit.storage.base import Buffer
from zarrkit.storage.keys import validate_key

# Record layouts of the ZIP specification (APPNOTE.TXT), all little-endian.
LOCAL = struct.Struct("<IHHHHHIIIHH")
LOCAL_SIG = 0x04034B50
CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
CENTRAL_SIG = 0x02014B50
EOCD = struct.Struct("<IHHHHIIH")
EOCD_SIG = 0x06054B50
_EOCD_SIG_BYTES = struct.pack("<I", EOCD_SIG)
EOCD64 = struct.Struct("<IQHHIIQQQQ")
EOCD64_SIG = 0x06064B50
LOCATOR64 = struct.Struct("<IIQI")
LOCATOR64_SIG = 0x07064B50
EXTRA_HEADER = struct.Struct("<HH")

ZIP64_EXTRA_ID = 0x0001
# The extra-field id Android's zipalign uses for alignment padding; readers skip unknown ids.
_ALIGN_EXTRA_ID = 0xD935
_ALIGN_EXTRA_MIN = 6  # id, size and the 2-byte alignment value

# Limits past which a value needs ZIP64. Module-level so that tests can lower them to
# exercise the ZIP64 code paths without writing 4 GiB.
ZIP64_LIMIT = 0xFFFFFFFF
ZIP64_COUNT_LIMIT = 0xFFFF
SATURATED = 0xFFFFFFFF

STORED, DEFLATED, _BZIP2, _LZMA = 0, 8, 12, 14
FLAG_ENCRYPTED = 0x1
_FLAG_DATA_DESCRIPTOR = 0x8
FLAG_UTF8 = 0x800
VERSION = 20
VERSION_ZIP64 = 45
UNIX_FILE_ATTRS = (0o100644 & 0xFFFF) << 16
MADE_BY_UNIX = 3 << 8

_ALIGNMENT = 8
_MAX_COMMENT = 0xFFFF
READ_BLOCK = 1 << 16
# Recovery reads the file backwards in blocks of this size looking for end records.
_SCAN_BLOCK = 1 << 20
# Below this size, header and data go out in one write call.
SMALL_VALUE = 1 << 16
# Linux caps a single read or write at a little under 2 GiB.
MAX_IO = 1 << 30
# liblzma allocates the whole declared dictionary up front; never more than this is needed
# for a member's declared size.
_LZMA_MIN_DICT = 4096

HAS_PREAD = hasattr(os, "pread")
_HAS_PWRITE = hasattr(os, "pwrite")
O_BINARY = getattr(os, "O_BINARY", 0)
_SEEK_LOCK = threading.Lock()  # only used where os.pread/pwrite are missing


class CorruptZipError(CorruptStoreError, BadZipFile):
    """A damaged ZIP archive: both a zarrkit ``CorruptStoreError`` and a
    ``zipfile.BadZipFile``, so code written against either catches it.

    >>> issubclass(CorruptZipError, BadZipFile), issubclass(CorruptZipError, ValueError)
    (True, True)
    """


@dataclass(slots=True)
class Member:
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
        return central_record(
            self.name, self.version, self.flags, self.method, self.clock, self.date, self.crc,
            self.compress_size, self.file_size, offset,
        )


@dataclass(slots=True)
class _Directory:
    """A central directory as one end record describes it."""

    index: dict[str, Member]
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

    index: dict[str, Member]
    central: bytes = b""
    count: int = 0
    concat: int = 0
    comment: bytes = b""
    data_end: int = 0  # member data lie below this offset
    end: int = 0  # the end of the valid archive: where new members go
    recovered: bool = False
    recovered_records: list[bytes] = field(default_factory=list)


# --- raw I/O ---------------------------------------------------------------------------
def pread_exact(fd: int, offset: int, size: int, path: Path) -> bytes:
    """Read exactly ``size`` bytes at ``offset``; a short file is a damaged archive."""
    parts: list[bytes] = []
    while size > 0:
        n = min(size, MAX_IO)
        if HAS_PREAD:
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


def pwrite_all(fd: int, data: Buffer, offset: int) -> None:
    """Write all of ``data`` at ``offset`` (one call in the common case)."""
    if _HAS_PWRITE and len(data) <= MAX_IO:
        written = os.pwrite(fd, data, offset)
        if written == len(data):
            return
        data, offset = memoryview(data)[written:], offset + written
    view = memoryview(data).cast("B")
    while view:
        chunk = view[:MAX_IO]
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


def dos_datetime(timestamp: float) -> tuple[int, int]:
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
    DEFLATED: lambda raw, limit: zlib.decompressobj(-15).decompress(raw, limit),
    _BZIP2: lambda raw, limit: bz2.BZ2Decompressor().decompress(raw, limit),
    _LZMA: _lzma_decompress,
}


def decompress(method: int, raw: bytes, size: int, what: str) -> bytes:
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


def align_padding(used: int) -> bytes:
    """Return an extra field that makes ``used + len(field)`` a multiple of the alignment."""
    pad = -used % _ALIGNMENT
    if pad == 0:
        return b""
    # A well-formed extra block needs at least _ALIGN_EXTRA_MIN bytes, so short pads grow
    # by a whole alignment unit.
    while pad < _ALIGN_EXTRA_MIN:
        pad += _ALIGNMENT
    return (
        EXTRA_HEADER.pack(_ALIGN_EXTRA_ID, pad - 4)
        + struct.pack("<H", _ALIGNMENT)
        + bytes(pad - _ALIGN_EXTRA_MIN)
    )


def _zip64_block(extra: bytes) -> list[int] | None:
    """The 8-byte values of the ZIP64 block in ``extra``, or None if it has none."""
    pos = 0
    while pos + 4 <= len(extra):
        block_id, block_size = EXTRA_HEADER.unpack_from(extra, pos)
        body = extra[pos + 4 : pos + 4 + block_size]
        pos += 4 + block_size
        if block_id == ZIP64_EXTRA_ID:
            return [v for (v,) in struct.iter_unpack("<Q", body[: len(body) // 8 * 8])]
    return None


def _central_zip64_fields(
    extra: bytes, file_size: int, compress_size: int, header_offset: int, path: Path
) -> tuple[int, int, int]:
    values = _zip64_block(extra)
    if values is None:
        raise CorruptZipError(f"{path}: ZIP64 field saturated without a ZIP64 extra")
    # Only the fields saturated in the fixed record are present, in this order.
    if file_size == SATURATED and values:
        file_size = values.pop(0)
    if compress_size == SATURATED and values:
        compress_size = values.pop(0)
    if header_offset == SATURATED and values:
        header_offset = values.pop(0)
    return file_size, compress_size, header_offset


def _local_zip64_sizes(extra: bytes, file_size: int, compress_size: int) -> tuple[int, int]:
    # In a local header the ZIP64 block always holds both sizes, uncompressed first.
    values = _zip64_block(extra)
    if values is None or len(values) < 2:
        raise CorruptZipError("ZIP64 sizes saturated without a ZIP64 extra")
    return values[0], values[1]


def central_record(
    name: bytes, version: int, flags: int, method: int, clock: int, date: int, crc: int,
    compress_size: int, file_size: int, offset: int,
) -> bytes:
    """The central directory record of a member whose local header is at ``offset``
    (relative to the archive start)."""
    zip64_values: list[int] = []
    compress32, size32, offset32 = compress_size, file_size, offset
    if file_size >= ZIP64_LIMIT or compress_size >= ZIP64_LIMIT:
        zip64_values += [file_size, compress_size]
        compress32 = size32 = SATURATED
    if offset >= ZIP64_LIMIT:
        zip64_values.append(offset)
        offset32 = SATURATED
    extra = b""
    if zip64_values:
        extra = EXTRA_HEADER.pack(ZIP64_EXTRA_ID, 8 * len(zip64_values)) + struct.pack(
            f"<{len(zip64_values)}Q", *zip64_values
        )
        version = max(version, VERSION_ZIP64)
    return (
        CENTRAL.pack(
            CENTRAL_SIG, MADE_BY_UNIX | version, version, flags, method, clock, date, crc,
            compress32, size32, len(name), len(extra), 0, 0, 0, UNIX_FILE_ATTRS, offset32,
        )
        + name
        + extra
    )


def _key_of(raw_name: bytes, flags: int) -> str | None:
    """The store key a member name stands for, or None for a directory, an undecodable
    name or one that could escape a directory (zip slip)."""
    try:
        name = raw_name.decode("utf-8" if flags & FLAG_UTF8 else "cp437")
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
class ArchiveReader:
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
        return pread_exact(self.fd, offset, size, self.path) if size else b""

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
        tail_size = min(self.size, EOCD.size + _MAX_COMMENT)
        tail = self._read(self.size - tail_size, tail_size)
        pos = tail.rfind(_EOCD_SIG_BYTES)
        while pos >= 0:
            if pos + EOCD.size <= len(tail):
                (comment_len,) = struct.unpack_from("<H", tail, pos + EOCD.size - 2)
                if pos + EOCD.size + comment_len == len(tail):
                    yield self.size - tail_size + pos
            pos = tail.rfind(_EOCD_SIG_BYTES, 0, pos + 3)

    def _directory_at(self, pos: int) -> _Directory:
        """Parse the end record at ``pos`` and the central directory it names."""
        record = self._read(pos, EOCD.size)
        (sig, disk, cd_disk, _, count, cd_size, cd_offset, comment_len) = EOCD.unpack(record)
        if sig != EOCD_SIG:
            raise CorruptZipError(f"{self.path}: no end of central directory at {pos}")
        end = min(pos + EOCD.size + comment_len, self.size)
        comment = self._read(pos + EOCD.size, end - pos - EOCD.size)
        directory_end = pos  # where the central directory (or the ZIP64 record) ends
        zip64 = self._zip64_end_record(pos - LOCATOR64.size)
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
        sig, _, eocd64_offset, _ = LOCATOR64.unpack(self._read(locator_pos, LOCATOR64.size))
        if sig != LOCATOR64_SIG:
            return None
        # The record normally sits right before the locator; if prepended data shift the
        # archive, the offset in the locator is relative to the archive start.
        last = locator_pos - EOCD64.size
        for candidate in (last, eocd64_offset):
            if 0 <= candidate <= last:
                raw = self._read(candidate, EOCD64.size)
                (sig64, _, _, _, disk, cd_disk, _, count, cd_size, cd_offset) = (
                    EOCD64.unpack(raw)
                )
                if sig64 == EOCD64_SIG:
                    return candidate, disk, cd_disk, count, cd_size, cd_offset
        raise CorruptZipError(f"{self.path}: ZIP64 end of central directory not found")

    def _parse_central(self, central: bytes, concat: int) -> tuple[dict[str, Member], int]:
        pos = 0
        count = 0
        index: dict[str, Member] = {}
        while pos < len(central):
            if pos + CENTRAL.size > len(central):
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
            ) = CENTRAL.unpack_from(central, pos)
            if sig != CENTRAL_SIG:
                raise CorruptZipError(
                    f"{self.path}: bad central directory record at entry {count}"
                )
            pos += CENTRAL.size
            raw_name = central[pos : pos + name_len]
            pos += name_len
            extra = central[pos : pos + extra_len]
            pos += extra_len + comment_len
            count += 1
            if SATURATED in (compress_size, file_size, header_offset):
                file_size, compress_size, header_offset = _central_zip64_fields(
                    extra, file_size, compress_size, header_offset, self.path
                )
            key = _key_of(raw_name, flags)
            if key is not None:
                index[key] = Member(
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
                layout.index[key] = Member(
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
        return self.size >= 4 and self._read(0, 4) == struct.pack("<I", LOCAL_SIG)

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
        while pos + LOCAL.size <= self.size:
            (sig, version, flags, method, clock, date, crc, compress_size, file_size,
             name_len, extra_len) = LOCAL.unpack(self._read(pos, LOCAL.size))
            if sig != LOCAL_SIG or flags & (_FLAG_DATA_DESCRIPTOR | FLAG_ENCRYPTED):
                return
            data_offset = pos + LOCAL.size + name_len + extra_len
            if data_offset > self.size:
                return
            variable = self._read(pos + LOCAL.size, name_len + extra_len)
            if SATURATED in (compress_size, file_size):
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
        if header.method == STORED:
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
            data = decompress(header.method, raw, header.file_size, f"{self.path}: member")
        except ZarrkitError:
            return False
        return zlib.crc32(data) == header.crc
