"""A store in a single ZIP archive.

Reading accepts any archive a Zarr tool is likely to produce: stored, deflated, bzip2 and
LZMA members, ZIP64, data prepended to the archive (self-extracting style), and several
members with the same name (the last one in the central directory wins, as in Python's
``zipfile`` and in zarr-python). Directory members are ignored, and so is every member whose
name is not a valid store key (``..``, absolute paths, backslashes...): a crafted archive
can never make this store hand out a key that escapes a directory when copied elsewhere.

Writing is append-only. Each value becomes a new STORED (uncompressed) member whose data
start at a file offset that is a multiple of 8, so that a reader can memory-map a chunk and
view it as a numpy array without copying (:meth:`ZipStore.map_value`). Setting a key that
already exists appends another member with the same name; the newest one wins on every
later read, by this store, by ``zipfile`` and by zarr-python, but the old bytes stay in the
file. Deleting is not possible. The central directory is written by :meth:`ZipStore.close`
(or at the end of a ``with`` block): until then the file on disk is not a valid archive.

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
import lzma
import mmap
import os
import struct
import threading
import time
import warnings
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from zipfile import BadZipFile

from zarrkit.config import config
from zarrkit.errors import InvalidKeyError, UnsupportedOperationError
from zarrkit.storage.base import Buffer, Store
from zarrkit.storage.keys import validate_key, validate_prefix

__all__ = ["BadZipFile", "ZipStore"]

# Record layouts of the ZIP specification (APPNOTE.TXT), all little-endian.
_LOCAL = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIG = 0x04034B50
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
_CENTRAL_SIG = 0x02014B50
_EOCD = struct.Struct("<IHHHHIIH")
_EOCD_SIG = 0x06054B50
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

_STORED, _DEFLATED, _BZIP2, _LZMA = 0, 8, 12, 14
_FLAG_ENCRYPTED = 0x1
_FLAG_UTF8 = 0x800
_VERSION = 20
_VERSION_ZIP64 = 45
_UNIX_FILE_ATTRS = (0o100644 & 0xFFFF) << 16
_MADE_BY_UNIX = 3 << 8

_ALIGNMENT = 8
_MAX_COMMENT = 0xFFFF
_READ_BLOCK = 1 << 16
# Below this size, header and data go out in one write call.
_SMALL_VALUE = 1 << 16
# Linux caps a single read or write at a little under 2 GiB.
_MAX_IO = 1 << 30


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


def _dos_datetime(timestamp: float) -> tuple[int, int]:
    t = time.localtime(timestamp)
    year = min(max(t.tm_year, 1980), 2107)
    date = ((year - 1980) << 9) | (t.tm_mon << 5) | t.tm_mday
    clock = (t.tm_hour << 11) | (t.tm_min << 5) | (t.tm_sec // 2)
    return date, clock


def _lzma_decompress(data: bytes, size: int) -> bytes:
    # A ZIP LZMA member starts with its own small header (version, properties size and the
    # 5-byte LZMA1 properties) in front of a raw LZMA1 stream.
    if len(data) < 4:
        raise BadZipFile("truncated LZMA header")
    (props_size,) = struct.unpack_from("<H", data, 2)
    props = data[4 : 4 + props_size]
    if len(props) != 5:
        raise BadZipFile("bad LZMA properties")
    packed, dict_size = props[0], int.from_bytes(props[1:5], "little")
    lc, rest = packed % 9, packed // 9
    lp, pb = rest % 5, rest // 5
    filters = [
        {"id": lzma.FILTER_LZMA1, "lc": lc, "lp": lp, "pb": pb, "dict_size": dict_size}
    ]
    decompressor = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters)
    return decompressor.decompress(data[4 + props_size :], size)


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
    positional reads (``os.pread``) and never block each other.

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

        self._write_lock = threading.Lock()  # serialises appends and close
        self._index_lock = threading.Lock()  # guards the index and the sorted-key cache
        self._seek_lock = threading.Lock()  # only used where os.pread/pwrite are missing
        self._map_lock = threading.Lock()
        self._index: dict[str, _Member] = {}
        self._sorted_keys: list[str] | None = None
        self._mmap: mmap.mmap | None = None
        # Central directory records of the archive as found on disk, re-emitted verbatim in
        # append mode so that members this store hides (directories, unsafe names,
        # shadowed duplicates) survive.
        self._old_central = b""
        self._old_count = 0
        self._comment = b""
        self._new_central: list[bytes] = []
        self._concat = 0  # bytes before the archive proper
        self._data_end = 0  # where member data end (the start of the central directory)
        self._write_pos = 0
        self._dirty = False
        self._fd = -1

        flags = getattr(os, "O_BINARY", 0)
        if mode == "r":
            flags |= os.O_RDONLY
        elif mode == "w":
            flags |= os.O_RDWR | os.O_CREAT | os.O_TRUNC
        elif mode == "x":
            flags |= os.O_RDWR | os.O_CREAT | os.O_EXCL
        else:
            flags |= os.O_RDWR | os.O_CREAT
        self._fd = os.open(self.path, flags, 0o666)
        try:
            size = os.fstat(self._fd).st_size
            if mode == "r" or (mode == "a" and size > 0):
                self._read_central_directory(size)
                self._write_pos = self._data_end
            # A new archive must be written on close even if nothing is ever set.
            self._dirty = mode != "r" and size == 0
        except BaseException:
            os.close(self._fd)
            self._fd = -1
            raise

    def __repr__(self) -> str:
        return f"ZipStore({str(self.path)!r}, mode={self.mode!r})"

    # --- low-level I/O ------------------------------------------------------------------
    def _require_open(self) -> int:
        fd = self._fd
        if fd < 0:
            raise ValueError(f"I/O operation on closed {self!r}")
        return fd

    def _pread(self, offset: int, size: int) -> bytes:
        fd = self._require_open()
        parts: list[bytes] = []
        while size > 0:
            n = min(size, _MAX_IO)
            if hasattr(os, "pread"):
                part = os.pread(fd, n, offset)
            else:  # pragma: no cover - Windows
                with self._seek_lock:
                    os.lseek(fd, offset, os.SEEK_SET)
                    part = os.read(fd, n)
            if not part:
                raise BadZipFile(f"{self.path}: unexpected end of file at offset {offset}")
            parts.append(part)
            offset += len(part)
            size -= len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _pwrite(self, data: Buffer, offset: int) -> None:
        fd = self._require_open()
        view = memoryview(data).cast("B")
        while view:
            chunk = view[:_MAX_IO]
            if hasattr(os, "pwrite"):
                n = os.pwrite(fd, chunk, offset)
            else:  # pragma: no cover - Windows
                with self._seek_lock:
                    os.lseek(fd, offset, os.SEEK_SET)
                    n = os.write(fd, chunk)
            view = view[n:]
            offset += n

    # --- reading the archive ------------------------------------------------------------
    def _find_eocd(self, size: int) -> tuple[int, bytes]:
        """Return the file offset of the end-of-central-directory record and the tail of
        the file that holds it."""
        tail_size = min(size, _EOCD.size + _MAX_COMMENT)
        tail = self._pread(size - tail_size, tail_size) if tail_size else b""
        signature = struct.pack("<I", _EOCD_SIG)
        fallback = -1
        pos = tail.rfind(signature)
        while pos >= 0:
            if pos + _EOCD.size <= len(tail):
                (comment_len,) = struct.unpack_from("<H", tail, pos + _EOCD.size - 2)
                if pos + _EOCD.size + comment_len == len(tail):
                    return size - tail_size + pos, tail[pos:]
                if fallback < 0:
                    fallback = pos
            pos = tail.rfind(signature, 0, pos)
        if fallback >= 0:  # comment length disagrees with the file: trust the record anyway
            return size - tail_size + fallback, tail[fallback:]
        raise BadZipFile(f"{self.path} is not a ZIP archive (no end of central directory)")

    def _read_central_directory(self, size: int) -> None:
        eocd_pos, record = self._find_eocd(size)
        (_, disk, cd_disk, _, count, cd_size, cd_offset, comment_len) = _EOCD.unpack_from(
            record
        )
        self._comment = record[_EOCD.size : _EOCD.size + comment_len]
        directory_end = eocd_pos  # where the central directory (or the ZIP64 record) ends
        locator_pos = eocd_pos - _LOCATOR64.size
        if locator_pos >= 0:
            locator = self._pread(locator_pos, _LOCATOR64.size)
            sig, _, eocd64_offset, _ = _LOCATOR64.unpack(locator)
            if sig == _LOCATOR64_SIG:
                # The record normally sits right before the locator; if prepended data shift
                # the archive, the offset in the locator is relative to the archive start.
                eocd64_pos = locator_pos - _EOCD64.size
                candidates = [eocd64_pos, eocd64_offset] if eocd64_pos >= 0 else [eocd64_offset]
                for candidate in candidates:
                    raw = self._pread(candidate, _EOCD64.size)
                    if struct.unpack_from("<I", raw)[0] == _EOCD64_SIG:
                        (_, _, _, _, disk, cd_disk, _, count, cd_size, cd_offset) = (
                            _EOCD64.unpack(raw)
                        )
                        directory_end = candidate
                        break
                else:
                    raise BadZipFile(f"{self.path}: ZIP64 end of central directory not found")
        if disk != 0 or cd_disk != 0:
            raise BadZipFile(f"{self.path}: multi-disk archives are not supported")
        concat = directory_end - cd_size - cd_offset
        if concat < 0:
            raise BadZipFile(f"{self.path}: central directory offset past its end")
        self._concat = concat
        self._data_end = concat + cd_offset
        central = self._pread(self._data_end, cd_size) if cd_size else b""
        self._old_count = self._parse_central(central, count)
        if self.mode == "a":
            self._old_central = central

    def _parse_central(self, central: bytes, expected: int) -> int:
        pos = 0
        count = 0
        index = self._index
        while pos < len(central):
            if pos + _CENTRAL.size > len(central):
                raise BadZipFile(f"{self.path}: truncated central directory")
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
                raise BadZipFile(f"{self.path}: bad central directory record at entry {count}")
            pos += _CENTRAL.size
            raw_name = central[pos : pos + name_len]
            pos += name_len
            extra = central[pos : pos + extra_len]
            pos += extra_len + comment_len
            count += 1
            if 0xFFFFFFFF in (compress_size, file_size, header_offset):
                file_size, compress_size, header_offset = self._zip64_fields(
                    extra, file_size, compress_size, header_offset
                )
            name = raw_name.decode("utf-8" if flags & _FLAG_UTF8 else "cp437")
            if name.endswith("/"):
                continue
            try:
                validate_key(name)
            except InvalidKeyError:
                continue  # zip slip: a name that could escape a directory is never a key
            index[name] = _Member(
                header_offset + self._concat, compress_size, file_size, method, crc, flags
            )
        if count != expected and expected != 0xFFFF:
            # Some writers wrap the 16-bit count; the records themselves are authoritative.
            warnings.warn(
                f"{self.path}: central directory holds {count} records, "
                f"end record says {expected}",
                stacklevel=4,
            )
        return count

    def _zip64_fields(
        self, extra: bytes, file_size: int, compress_size: int, header_offset: int
    ) -> tuple[int, int, int]:
        pos = 0
        while pos + 4 <= len(extra):
            block_id, block_size = _EXTRA_HEADER.unpack_from(extra, pos)
            body = extra[pos + 4 : pos + 4 + block_size]
            pos += 4 + block_size
            if block_id != _ZIP64_EXTRA_ID:
                continue
            values = [v for (v,) in struct.iter_unpack("<Q", body[: len(body) // 8 * 8])]
            # Only the fields saturated in the fixed record are present, in this order.
            if file_size == 0xFFFFFFFF and values:
                file_size = values.pop(0)
            if compress_size == 0xFFFFFFFF and values:
                compress_size = values.pop(0)
            if header_offset == 0xFFFFFFFF and values:
                header_offset = values.pop(0)
            return file_size, compress_size, header_offset
        if 0xFFFFFFFF in (file_size, compress_size, header_offset):
            raise BadZipFile(f"{self.path}: ZIP64 field saturated without a ZIP64 extra")
        return file_size, compress_size, header_offset

    def _data_offset(self, member: _Member) -> int:
        if member.data_offset >= 0:
            return member.data_offset
        header = self._pread(member.header_offset, _LOCAL.size)
        sig, *_, name_len, extra_len = _LOCAL.unpack(header)
        if sig != _LOCAL_SIG:
            raise BadZipFile(f"{self.path}: bad local header at {member.header_offset}")
        offset = member.header_offset + _LOCAL.size + name_len + extra_len
        if offset + member.compress_size > self._data_end:
            raise BadZipFile(f"{self.path}: member at {member.header_offset} overruns the data")
        member.data_offset = offset  # benign race: every thread computes the same value
        return offset

    def _member(self, key: str) -> _Member | None:
        member = self._index.get(key)
        if member is not None and member.flags & _FLAG_ENCRYPTED:
            raise NotImplementedError(f"{self.path}: member {key!r} is encrypted")
        return member

    def _decompress(self, key: str, member: _Member, raw: bytes) -> bytes:
        method = member.method
        if method == _STORED:
            data = raw
        elif method == _DEFLATED:
            decompressor = zlib.decompressobj(-15)
            data = decompressor.decompress(raw, member.file_size + 1)
        elif method == _BZIP2:
            data = bz2.BZ2Decompressor().decompress(raw, member.file_size + 1)
        elif method == _LZMA:
            data = _lzma_decompress(raw, member.file_size + 1)
        else:
            raise NotImplementedError(
                f"{self.path}: member {key!r} uses unsupported compression method {method}"
            )
        if len(data) != member.file_size:
            raise BadZipFile(
                f"{self.path}: member {key!r} has {len(data)} bytes, "
                f"the directory says {member.file_size}"
            )
        return data

    # --- readable -----------------------------------------------------------------------
    def _get(self, key: str) -> bytes | None:
        member = self._member(key)
        if member is None:
            return None
        raw = self._pread(self._data_offset(member), member.compress_size)
        data = self._decompress(key, member, raw)
        if self.verify_crc and zlib.crc32(data) != member.crc:
            raise BadZipFile(f"{self.path}: bad CRC-32 for member {key!r}")
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
            return self._inflate_prefix(member, data_offset, end)[begin:end]
        value = self._get(key)
        assert value is not None
        return value[begin:end]

    def _inflate_prefix(self, member: _Member, data_offset: int, end: int) -> bytes:
        decompressor = zlib.decompressobj(-15)
        out = bytearray()
        consumed = 0
        while len(out) < end and consumed < member.compress_size:
            block = self._pread(
                data_offset + consumed, min(_READ_BLOCK, member.compress_size - consumed)
            )
            consumed += len(block)
            out += decompressor.decompress(block, end - len(out))
            while decompressor.unconsumed_tail and len(out) < end:
                out += decompressor.decompress(decompressor.unconsumed_tail, end - len(out))
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
                    raise BadZipFile(f"{self.path}: unexpected end of file in {key!r}")
                done += n
                offset += n
            if self.verify_crc and zlib.crc32(target) != member.crc:
                raise BadZipFile(f"{self.path}: bad CRC-32 for member {key!r}")
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
        view = memoryview(value)
        if not view.c_contiguous:
            view = memoryview(view.tobytes())
        view = view.cast("B")
        size = view.nbytes
        crc = zlib.crc32(view)
        name = key.encode("utf-8")
        flags = 0 if key.isascii() else _FLAG_UTF8
        date, clock = _dos_datetime(time.time())
        with self._write_lock:
            self._require_open()
            offset = self._write_pos
            archive_offset = offset - self._concat
            big = size >= _ZIP64_LIMIT
            version = _VERSION_ZIP64 if big or archive_offset >= _ZIP64_LIMIT else _VERSION
            local_extra = (
                _EXTRA_HEADER.pack(_ZIP64_EXTRA_ID, 16) + struct.pack("<QQ", size, size)
                if big
                else b""
            )
            head = _LOCAL.size + len(name) + len(local_extra)
            local_extra += _align_padding(offset + head)
            size32 = 0xFFFFFFFF if big else size
            header = (
                _LOCAL.pack(
                    _LOCAL_SIG, version, flags, _STORED, clock, date, crc, size32, size32,
                    len(name), len(local_extra),
                )
                + name
                + local_extra
            )
            data_offset = offset + len(header)
            if size < _SMALL_VALUE:
                self._pwrite(header + view.tobytes(), offset)
            else:
                self._pwrite(header, offset)
                self._pwrite(view, data_offset)
            self._write_pos = data_offset + size
            self._data_end = self._write_pos
            self._dirty = True
            self._new_central.append(
                self._central_record(name, flags, clock, date, crc, size, archive_offset)
            )
            member = _Member(offset, size, size, _STORED, crc, flags, data_offset)
            with self._index_lock:
                is_new = key not in self._index
                self._index[key] = member
                if is_new:
                    self._sorted_keys = None

    @staticmethod
    def _central_record(
        name: bytes, flags: int, clock: int, date: int, crc: int, size: int, offset: int
    ) -> bytes:
        zip64_values = []
        size32 = size
        offset32 = offset
        if size >= _ZIP64_LIMIT:
            zip64_values += [size, size]
            size32 = 0xFFFFFFFF
        if offset >= _ZIP64_LIMIT:
            zip64_values.append(offset)
            offset32 = 0xFFFFFFFF
        extra = b""
        if zip64_values:
            extra = _EXTRA_HEADER.pack(_ZIP64_EXTRA_ID, 8 * len(zip64_values)) + struct.pack(
                f"<{len(zip64_values)}Q", *zip64_values
            )
        version = _VERSION_ZIP64 if zip64_values else _VERSION
        return (
            _CENTRAL.pack(
                _CENTRAL_SIG, _MADE_BY_UNIX | version, version, flags, _STORED, clock, date,
                crc, size32, size32, len(name), len(extra), 0, 0, 0, _UNIX_FILE_ATTRS,
                offset32,
            )
            + name
            + extra
        )

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
        with self._index_lock:
            if self._sorted_keys is None:
                self._sorted_keys = sorted(self._index)
            # The cached list is replaced, never mutated, so it can be read unlocked.
            return self._sorted_keys

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
        """Write the central directory (if anything changed) and close the file. Calling
        it again does nothing.

        >>> import os, tempfile, zipfile
        >>> path = os.path.join(tempfile.mkdtemp(), "c.zip")
        >>> s = ZipStore(path, mode="w"); s.set("k", b"v"); s.close()
        >>> zipfile.ZipFile(path).read("k")
        b'v'
        """
        with self._write_lock:
            if self._fd < 0:
                return
            try:
                if self._dirty:
                    self._write_central_directory()
            finally:
                self._release()

    def _release(self) -> None:
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                pass  # views handed out keep the mapping alive; it closes when they die
            self._mmap = None
        fd, self._fd = self._fd, -1
        os.close(fd)

    def _write_central_directory(self) -> None:
        start = self._write_pos
        central = b"".join([self._old_central, *self._new_central])
        count = self._old_count + len(self._new_central)
        archive_start = start - self._concat
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
            min(len(central), 0xFFFFFFFF), min(archive_start, 0xFFFFFFFF), len(self._comment),
        )
        tail += self._comment
        self._pwrite(tail, start)
        os.ftruncate(self._fd, start + len(tail))
        if config.fsync:
            os.fsync(self._fd)
        self._dirty = False

    def __enter__(self) -> ZipStore:
        return self

    def __del__(self) -> None:
        if getattr(self, "_fd", -1) >= 0:
            if getattr(self, "_dirty", False):
                warnings.warn(
                    f"{self!r} was not closed; the archive has no central directory",
                    ResourceWarning,
                    stacklevel=2,
                )
            os.close(self._fd)
            self._fd = -1
