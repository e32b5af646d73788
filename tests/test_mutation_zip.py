"""ZIP format and ZipStore checked against independent oracles: Python's ``zipfile`` module
(it reads what ZipStore writes, and ZipStore reads what it writes) and archives crafted
here byte by byte from the record layouts of APPNOTE.TXT.

Written to kill the mutants that ``tools/mutate/run.py storage/zip_format.py`` and
``storage/zip.py`` left alive: each test pins a documented behaviour (a record field, an
error class and message, a boundary) rather than an implementation detail.
"""

from __future__ import annotations

import bz2
import contextlib
import gc
import inspect
import io
import lzma
import os
import struct
import time
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import zarrkit.storage.zip_format as zf_mod
from zarrkit.config import config
from zarrkit.errors import (
    CorruptStoreError,
    ReadOnlyError,
    ResourceLimitError,
    StoreLockedError,
    UnsupportedOperationError,
)
from zarrkit.storage.zip import BadZipFile, CorruptZipError, ZipStore
from zarrkit.storage.zip_format import ArchiveReader

# --- APPNOTE.TXT record layouts, written out independently of zarrkit ------------------------

SIG_LOCAL = 0x04034B50
SIG_CENTRAL = 0x02014B50
SIG_EOCD = 0x06054B50
SIG_EOCD64 = 0x06064B50
SIG_LOCATOR = 0x07064B50


def lzma_member(data: bytes, lc: int = 3, lp: int = 0, pb: int = 2,
                dict_size: int = 1 << 20) -> bytes:
    """A ZIP LZMA member body (APPNOTE 5.8.8): version, properties size, properties, raw
    LZMA1 stream."""
    filters = [{"id": lzma.FILTER_LZMA1, "lc": lc, "lp": lp, "pb": pb,
                "dict_size": dict_size}]
    props = bytes([(pb * 5 + lp) * 9 + lc]) + dict_size.to_bytes(4, "little")
    stream = lzma.compress(data, format=lzma.FORMAT_RAW, filters=filters)
    return bytes([9, 20]) + struct.pack("<H", len(props)) + props + stream


def compress(method: int, data: bytes) -> bytes:
    if method == 0:
        return data
    if method == 8:
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush()
    if method == 12:
        return bz2.compress(data)
    if method == 14:
        return lzma_member(data)
    raise AssertionError(method)


@dataclass
class Entry:
    """One member of a crafted archive."""

    name: bytes
    data: bytes = b""
    method: int = 0
    flags: int = 0
    raw: bytes | None = None  # the member's bytes as stored (default: compressed data)
    crc: int | None = None
    # Central-record fields moved to a ZIP64 extra (saturated in the fixed record).
    zip64: tuple[str, ...] = ()
    local_zip64: bool = False  # sizes saturated in the local header, in a ZIP64 extra
    extra_before: bytes = b""  # other extra blocks in front of the ZIP64 one
    comment: bytes = b""
    central_sizes: tuple[int, int] | None = None  # (compressed, uncompressed) override
    local_sizes: tuple[int, int] | None = None


@dataclass
class Crafted:
    data: bytes
    offsets: list[int] = field(default_factory=list)  # local header offsets (file)
    cd_start: int = 0
    eocd: int = 0


def craft(
    entries: list[Entry],
    *,
    prefix: bytes = b"",
    comment: bytes = b"",
    zip64_end: bool = False,
    count: int | None = None,
    disk: int = 0,
    cd_disk: int = 0,
    locator_offset: int | None = None,
    relative_offsets: bool = True,
    with_end: bool = True,
) -> Crafted:
    """An archive in APPNOTE layout; offsets in records are relative to the archive start
    (after ``prefix``) unless ``relative_offsets`` is False."""
    out = bytearray(prefix)
    base = len(prefix) if relative_offsets else 0
    centrals = []
    offsets = []
    for e in entries:
        raw = e.raw if e.raw is not None else compress(e.method, e.data)
        crc = e.crc if e.crc is not None else zlib.crc32(e.data)
        csize, usize = e.central_sizes or (len(raw), len(e.data))
        lc, lu = e.local_sizes or (len(raw), len(e.data))
        offset = len(out)
        offsets.append(offset)
        local_extra = b""
        if e.local_zip64:
            local_extra = struct.pack("<HHQQ", 1, 16, lu, lc)
            lc = lu = 0xFFFFFFFF
        local_extra = e.extra_before + local_extra if e.local_zip64 else local_extra
        out += struct.pack("<IHHHHHIIIHH", SIG_LOCAL, 20, e.flags, e.method, 0, 0x21,
                           crc, lc, lu, len(e.name), len(local_extra))
        out += e.name + local_extra + raw
        values = {"size": usize, "csize": csize, "offset": offset - base}
        z64 = [values[f] for f in ("size", "csize", "offset") if f in e.zip64]
        extra = e.extra_before
        if z64:
            extra += struct.pack(f"<HH{len(z64)}Q", 1, 8 * len(z64), *z64)
        fixed = {f: (0xFFFFFFFF if f in e.zip64 else values[f]) for f in values}
        centrals.append(
            struct.pack("<IHHHHHHIIIHHHHHII", SIG_CENTRAL, 0x031E, 20, e.flags, e.method,
                        0, 0x21, crc, fixed["csize"], fixed["size"], len(e.name),
                        len(extra), len(e.comment), 0, 0, 0, fixed["offset"])
            + e.name + extra + e.comment
        )
    cd_start = len(out)
    central = b"".join(centrals)
    out += central
    n = len(entries) if count is None else count
    eocd_pos = len(out)
    if zip64_end:
        eocd64 = len(out)
        out += struct.pack("<IQHHIIQQQQ", SIG_EOCD64, 44, 45, 45, disk, cd_disk, n, n,
                           len(central), cd_start - base)
        loc = eocd64 - base if locator_offset is None else locator_offset
        out += struct.pack("<IIQI", SIG_LOCATOR, 0, loc, 1)
        eocd_pos = len(out)
        if with_end:
            out += struct.pack("<IHHHHIIH", SIG_EOCD, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF,
                               0xFFFFFFFF, 0xFFFFFFFF, len(comment)) + comment
    elif with_end:
        out += struct.pack("<IHHHHIIH", SIG_EOCD, disk, cd_disk, min(n, 0xFFFF),
                           min(n, 0xFFFF), len(central), cd_start - base, len(comment))
        out += comment
    return Crafted(bytes(out), offsets, cd_start, eocd_pos)


def zipfile_contents(data: bytes) -> dict[str, bytes]:
    """What zipfile reads from ``data`` (the last member of a name wins)."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {i.filename: z.read(i) for i in z.infolist() if not i.is_dir()}


def store_contents(path: Path) -> dict[str, bytes]:
    with ZipStore(path) as store:
        return {k: store.get(k) or b"" for k in store.list()}


# mutmut's trampoline adds a frame between a caller and the mutated function, so a
# warning's stacklevel points into mutmut: these tests run in `make test` only, and the
# stacklevel mutants they kill are reported as killed by them there.
UNDER_MUTMUT_FRAMES = pytest.mark.skipif(
    "MUTANT_UNDER_TEST" in os.environ,
    reason="mutmut's trampoline adds a stack frame; checked by make test")


def write(tmp_path: Path, data: bytes, name: str = "a.zip") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def zipfile_bytes(members: dict[str, bytes], method: int = zipfile.ZIP_STORED,
                  comment: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as z:
        for name, value in members.items():
            z.writestr(name, value)
        z.comment = comment
    return buffer.getvalue()


class Unseekable(io.RawIOBase):
    """A write-only stream without seek: zipfile then writes data descriptors."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: object) -> int:
        view = memoryview(b)  # type: ignore[arg-type]
        self.buffer += view
        return view.nbytes


# --- raw I/O ---------------------------------------------------------------------------------


def test_pread_exact_reads_in_pieces_and_names_a_short_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, bytes(range(100)), "raw")
    monkeypatch.setattr(zf_mod, "MAX_IO", 7)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert zf_mod.pread_exact(fd, 3, 50, path) == bytes(range(3, 53))
        assert zf_mod.pread_exact(fd, 95, 5, path) == bytes(range(95, 100))
        assert zf_mod.pread_exact(fd, 20, 14, path) == bytes(range(20, 34))  # two pieces
        assert zf_mod.pread_exact(fd, 20, 8, path) == bytes(range(20, 28))
        assert zf_mod.pread_exact(fd, 10, 0, path) == b""
        with pytest.raises(CorruptZipError, match=r"raw: unexpected end of file at offset 100$"):
            zf_mod.pread_exact(fd, 90, 20, path)
    finally:
        os.close(fd)


def test_pread_exact_without_pread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Where os.pread is missing, a seek and a read under a lock do the same.
    path = write(tmp_path, bytes(range(100)), "raw")
    monkeypatch.setattr(zf_mod, "HAS_PREAD", False)
    monkeypatch.setattr(zf_mod, "MAX_IO", 16)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.lseek(fd, 77, os.SEEK_SET)
        assert zf_mod.pread_exact(fd, 3, 40, path) == bytes(range(3, 43))
        assert zf_mod.pread_exact(fd, 99, 1, path) == b"\x63"
        with pytest.raises(CorruptZipError, match="unexpected end of file at offset 100$"):
            zf_mod.pread_exact(fd, 90, 20, path)
    finally:
        os.close(fd)


def test_pread_exact_completes_short_reads(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, bytes(range(200)), "raw")
    real = os.pread
    calls: list[tuple[int, int]] = []

    def short(fd: int, n: int, offset: int) -> bytes:
        calls.append((n, offset))
        return real(fd, min(n, 3), offset)

    monkeypatch.setattr(os, "pread", short)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert zf_mod.pread_exact(fd, 10, 10, path) == bytes(range(10, 20))
    finally:
        os.close(fd)
    assert calls == [(10, 10), (7, 13), (4, 16), (1, 19)]


def test_pwrite_all_writes_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "raw"
    path.write_bytes(b"\0" * 10)
    data = bytes(range(1, 60))
    fd = os.open(path, os.O_RDWR)
    try:
        zf_mod.pwrite_all(fd, data, 5)
        assert path.read_bytes() == b"\0" * 5 + data
        # Large writes go out in pieces of at most MAX_IO bytes.
        monkeypatch.setattr(zf_mod, "MAX_IO", 8)
        sizes: list[int] = []
        real = os.pwrite

        def spy(fd: int, chunk: memoryview, offset: int) -> int:
            sizes.append(len(chunk))
            return real(fd, chunk, offset)

        monkeypatch.setattr(os, "pwrite", spy)
        zf_mod.pwrite_all(fd, data[::-1], 2)
        assert path.read_bytes() == b"\0" * 2 + data[::-1] + data[-3:]
        assert sizes == [8] * 7 + [3]
    finally:
        os.close(fd)


def test_pwrite_all_without_pwrite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Where os.pwrite is missing, a seek and a write under a lock do the same.
    path = tmp_path / "raw"
    path.write_bytes(b"." * 10)
    monkeypatch.setattr(zf_mod, "_HAS_PWRITE", False)
    monkeypatch.setattr(zf_mod, "MAX_IO", 4)
    fd = os.open(path, os.O_RDWR)
    try:
        os.lseek(fd, 0, os.SEEK_END)
        zf_mod.pwrite_all(fd, b"abcdefghij", 3)
        zf_mod.pwrite_all(fd, memoryview(b"XY"), 0)
    finally:
        os.close(fd)
    assert path.read_bytes() == b"XY.abcdefghij"


def test_pwrite_all_completes_short_writes(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "raw"
    path.write_bytes(b"")
    real = os.pwrite
    calls: list[tuple[int, int]] = []

    def short(fd: int, chunk: memoryview, offset: int) -> int:
        calls.append((len(chunk), offset))
        return real(fd, memoryview(chunk)[:4], offset)

    monkeypatch.setattr(os, "pwrite", short)
    fd = os.open(path, os.O_RDWR)
    try:
        zf_mod.pwrite_all(fd, b"abcdefghij", 3)
    finally:
        os.close(fd)
    assert path.read_bytes() == b"\0\0\0abcdefghij"
    assert calls == [(10, 3), (6, 7), (2, 11)]


# --- DOS dates ---------------------------------------------------------------------------------


def dos_to_tuple(date: int, clock: int) -> tuple[int, ...]:
    # APPNOTE 4.4.6 / MS-DOS: the decoding zipfile.ZipInfo uses.
    return ((date >> 9) + 1980, (date >> 5) & 0xF, date & 0x1F,
            clock >> 11, (clock >> 5) & 0x3F, (clock & 0x1F) * 2)


@pytest.mark.parametrize("when", [
    (2024, 2, 29, 23, 59, 58), (2001, 12, 31, 0, 0, 1), (1995, 7, 4, 12, 30, 31),
    (2107, 1, 2, 3, 4, 5), (1980, 1, 1, 1, 1, 1),
])
def test_dos_datetime_encodes_local_time(when: tuple[int, ...]) -> None:
    stamp = time.mktime((*when, 0, 0, -1))
    for extra in (0.0, 0.75):  # the same second, twice: once computed, once cached
        date, clock = zf_mod.dos_datetime(stamp + extra)
        t = time.localtime(stamp)
        assert dos_to_tuple(date, clock) == (
            t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec // 2 * 2)


def test_dos_datetime_clamps_the_year() -> None:
    early = time.mktime((1975, 6, 15, 10, 20, 30, 0, 0, -1))
    late = time.mktime((2150, 6, 15, 10, 20, 30, 0, 0, -1))
    assert dos_to_tuple(*zf_mod.dos_datetime(early)) == (1980, 6, 15, 10, 20, 30)
    assert dos_to_tuple(*zf_mod.dos_datetime(late)) == (2107, 6, 15, 10, 20, 30)
    assert dos_to_tuple(*zf_mod.dos_datetime(early)) == (1980, 6, 15, 10, 20, 30)


def test_members_carry_the_time_of_writing(tmp_path: Path) -> None:
    path = tmp_path / "t.zip"
    before = time.time()
    with ZipStore(path, mode="w") as store:
        store.set("k", b"v")
    after = time.time()
    with zipfile.ZipFile(path) as z:
        stamp = time.mktime((*z.getinfo("k").date_time, 0, 0, -1))
    assert int(before) - 2 <= stamp <= after


# --- decompression ---------------------------------------------------------------------------


@pytest.mark.parametrize("lc,lp,pb", [(3, 0, 2), (0, 0, 0), (4, 0, 4), (1, 3, 1), (0, 4, 1),
                                      (0, 2, 3)])
def test_lzma_properties_are_decoded(tmp_path: Path, lc: int, lp: int, pb: int) -> None:
    data = bytes(range(256)) * 20 + b"tail" * 333
    entry = Entry(b"m", data, method=14, raw=lzma_member(data, lc, lp, pb))
    crafted = craft([entry]).data
    assert zipfile_contents(crafted) == {"m": data}
    assert store_contents(write(tmp_path, crafted)) == {"m": data}


def test_lzma_dictionary_is_as_long_as_the_value(tmp_path: Path) -> None:
    # Matches 8 KiB back need a dictionary longer than the 4 KiB minimum.
    block = os.urandom(8192)
    data = block + block
    entry = Entry(b"m", data, method=14, raw=lzma_member(data, dict_size=1 << 24))
    crafted = craft([entry]).data
    assert zipfile_contents(crafted) == {"m": data}
    assert store_contents(write(tmp_path, crafted)) == {"m": data}
    # The declared dictionary is used as it is (all four bytes of it) when it is shorter
    # than the value.
    exact = Entry(b"m", data, method=14, raw=lzma_member(data, dict_size=8448))
    crafted = craft([exact]).data
    assert zipfile_contents(crafted) == {"m": data}
    assert store_contents(write(tmp_path, crafted, "e.zip")) == {"m": data}
    # A stream that reaches further back than its declared dictionary is corrupt, for
    # zipfile too.
    raw = bytearray(lzma_member(data, dict_size=1 << 16))
    struct.pack_into("<I", raw, 5, 4096)
    crafted = craft([Entry(b"m", data, method=14, raw=bytes(raw))]).data
    with zipfile.ZipFile(io.BytesIO(crafted)) as z, pytest.raises(lzma.LZMAError):
        z.read("m")
    with ZipStore(write(tmp_path, crafted, "l.zip")) as store:
        with pytest.raises(CorruptZipError, match="cannot be decompressed"):
            store.get("m")


def test_lzma_properties_size_is_unsigned() -> None:
    # A properties size of 0x8005 is no 5, however the bytes after it look.
    data = os.urandom(32000)
    member = lzma_member(data)
    raw = member[:2] + struct.pack("<H", 0x8005) + member[4:]
    raw += b"\0" * (32768 - len(raw))
    with pytest.raises(CorruptZipError, match="^bad LZMA properties$"):
        zf_mod.decompress(14, raw, len(data), "m")


@pytest.mark.parametrize("raw,message", [
    (b"", "truncated LZMA header"),
    (b"\x09\x14\x05", "truncated LZMA header"),
    (b"\x09\x14\x05\x00\x5d\x00\x00", "bad LZMA properties"),
    (b"\x09\x14\x04\x00\x5d\x00\x00\x10\x00", "bad LZMA properties"),
    (b"\x09\x14\x06\x00\x5d\x00\x00\x10\x00\x00", "bad LZMA properties"),
])
def test_damaged_lzma_headers(raw: bytes, message: str) -> None:
    with pytest.raises(CorruptZipError, match=f"^{message}$"):
        zf_mod.decompress(14, raw, 10, "m")


def test_lzma_header_of_four_bytes_is_read() -> None:
    # Four bytes hold the version and properties size: the properties are then missing.
    with pytest.raises(CorruptZipError, match="^bad LZMA properties$"):
        zf_mod.decompress(14, b"\x09\x14\x05\x00", 10, "m")
    data = b"abc" * 50
    assert zf_mod.decompress(14, lzma_member(data), len(data), "m") == data


@pytest.mark.parametrize("method", [8, 12, 14])
def test_decompress_returns_exactly_the_declared_size(method: int) -> None:
    data = b"0123456789abcdef" * 64
    raw = compress(method, data)
    assert zf_mod.decompress(method, raw, len(data), "m") == data
    with pytest.raises(CorruptZipError, match=f"^m has {len(data)} bytes, the directory says "
                                              f"{len(data) - 1}$"):
        zf_mod.decompress(method, raw, len(data) - 1, "m")
    with pytest.raises(CorruptZipError, match=f"^m has {len(data)} bytes, the directory says "
                                              f"{len(data) + 5}$"):
        zf_mod.decompress(method, raw, len(data) + 5, "m")
    with pytest.raises(CorruptZipError, match="^m has 1 bytes, the directory says 0$"):
        zf_mod.decompress(method, raw, 0, "m")


@pytest.mark.parametrize("method,garbage", [(8, b"\xff" * 20), (12, b"BZh9" + b"\x00" * 20),
                                            (14, b"\x09\x14\x05\x00\xff\x00\x00\x10\x00xx")])
def test_undecodable_streams_are_corrupt(method: int, garbage: bytes) -> None:
    with pytest.raises(CorruptZipError, match="^member x cannot be decompressed: ") as caught:
        zf_mod.decompress(method, garbage, 100, "member x")
    assert caught.value.__cause__ is not None


def test_decompress_refuses_unknown_methods_and_huge_sizes(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    for method in (0, 1, 9, 99):
        with pytest.raises(UnsupportedOperationError,
                           match=f"^m uses unsupported compression method {method}$"):
            zf_mod.decompress(method, b"", 0, "m")
    data = b"x" * 100
    raw = compress(8, data)
    monkeypatch.setattr(config, "max_chunk_bytes", 100)
    assert zf_mod.decompress(8, raw, 100, "m") == data
    monkeypatch.setattr(config, "max_chunk_bytes", 99)
    with pytest.raises(ResourceLimitError,
                       match="^m declares 100 bytes, more than zarrkit.config.max_chunk_bytes$"):
        zf_mod.decompress(8, raw, 100, "m")


def test_decompress_stops_after_one_byte_too_many() -> None:
    # However long the stream, at most size + 1 bytes are produced.
    raw = compress(8, b"\0" * (1 << 24))
    with pytest.raises(CorruptZipError, match="^m has 11 bytes, the directory says 10$"):
        zf_mod.decompress(8, raw, 10, "m")


# --- alignment -------------------------------------------------------------------------------


@pytest.mark.parametrize("used", range(0, 40))
def test_align_padding_is_a_well_formed_extra_block(used: int) -> None:
    pad = zf_mod.align_padding(used)
    assert (used + len(pad)) % 8 == 0
    if used % 8 == 0:
        assert pad == b""
        return
    assert 6 <= len(pad) < 14
    block_id, size, alignment = struct.unpack_from("<HHH", pad)
    assert (block_id, size, alignment) == (0xD935, len(pad) - 4, 8)
    assert pad[6:] == bytes(len(pad) - 6)


def test_written_data_are_aligned_with_zipalign_blocks(tmp_path: Path) -> None:
    path = tmp_path / "al.zip"
    members = {"k" * n: bytes([n]) * (n * 5 % 17) for n in range(1, 20)}
    with ZipStore(path, mode="w") as store:
        for key, value in members.items():
            store.set(key, value)
    blob = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            name_len, extra_len = struct.unpack_from("<HH", blob, info.header_offset + 26)
            start = info.header_offset + 30 + name_len + extra_len
            assert start % 8 == 0
            assert blob[start : start + info.file_size] == members[info.filename]
            extra = blob[info.header_offset + 30 + name_len : start]
            if extra:
                assert struct.unpack_from("<HHH", extra) == (0xD935, len(extra) - 4, 8)


# --- records written: read back by zipfile -----------------------------------------------------


def test_central_records_as_zipfile_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "c.zip"
    members = {"plain": b"abc", "grüße/ü": b"utf-8 name", "empty": b""}
    with ZipStore(path, mode="w") as store:
        for key, value in members.items():
            store.set(key, value)
    blob = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        for info in z.infolist():
            data = members[info.filename]
            assert z.read(info) == data
            assert info.create_system == 3  # Unix
            assert info.create_version == 20
            assert info.extract_version == 20
            assert info.external_attr >> 16 == 0o100644
            assert info.internal_attr == 0
            assert info.comment == b""
            assert info.extra == b""
            assert info.compress_type == zipfile.ZIP_STORED
            assert info.flag_bits == (0 if info.filename.isascii() else 0x800)
            assert info.CRC == zlib.crc32(data)
            assert info.file_size == info.compress_size == len(data)
            assert info.volume == 0
            local = struct.unpack_from("<IHHHHHIIIHH", blob, info.header_offset)
            assert local[:4] == (SIG_LOCAL, 20, info.flag_bits, 0)
            assert local[6:9] == (info.CRC, len(data), len(data))
            assert local[9] == len(info.filename.encode())
            central_time = struct.unpack_from("<HH", blob, blob.index(
                struct.pack("<I", SIG_CENTRAL)) + 12)
            assert local[4:6] == central_time


def test_zip64_records_as_zipfile_reads_them(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zf_mod, "ZIP64_LIMIT", 500)
    path = tmp_path / "z.zip"
    members = {"small": b"s" * 10, "big": os.urandom(600), "after": b"a" * 20,
               "big2": os.urandom(500)}
    with ZipStore(path, mode="w") as store:
        for key, value in members.items():
            store.set(key, value)
    monkeypatch.undo()
    blob = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        infos = {i.filename: i for i in z.infolist()}
        assert {n: z.read(n) for n in infos} == members
        for name, info in infos.items():
            big = len(members[name]) >= 500
            far = info.header_offset >= 500
            values = []
            if big:
                values += [len(members[name])] * 2
            if far:
                values.append(info.header_offset)
            expected_extra = struct.pack(f"<HH{len(values)}Q", 1, 8 * len(values), *values)
            assert info.extra == (expected_extra if values else b"")
            assert info.create_version == info.extract_version == (45 if values else 20)
            local = struct.unpack_from("<IHHHHHIIIHH", blob, info.header_offset)
            assert local[1] == (45 if values else 20)
            if big:
                assert local[7:9] == (0xFFFFFFFF, 0xFFFFFFFF)
                name_len = local[9]
                assert blob[info.header_offset + 30 + name_len:][:20] == struct.pack(
                    "<HHQQ", 1, 16, len(members[name]), len(members[name]))
    assert store_contents(path) == members


def test_central_record_saturates_each_field_it_moves() -> None:
    def fields(record: bytes) -> tuple[int, ...]:
        return struct.unpack_from("<IHHHHHHIIIHHHHHII", record)

    small = zf_mod.central_record(b"n", 20, 0, 0, 1, 2, 3, 10, 10, 100)
    assert fields(small) == (SIG_CENTRAL, 0x0314, 20, 0, 0, 1, 2, 3, 10, 10, 1, 0, 0, 0, 0,
                             0o100644 << 16, 100)
    assert small[46:] == b"n"
    limit = zf_mod.ZIP64_LIMIT
    for csize, usize, offset, values in [
        (limit, 5, 1, [5, limit]),
        (5, limit, 1, [limit, 5]),
        (5, 5, limit, [limit]),
        (limit - 1, limit - 1, limit - 1, []),
        (limit + 1, limit + 2, limit + 3, [limit + 2, limit + 1, limit + 3]),
    ]:
        record = zf_mod.central_record(b"nm", 20, 0x800, 8, 0, 0, 7, csize, usize, offset)
        f = fields(record)
        sizes_moved = usize >= limit or csize >= limit
        assert f[8] == (0xFFFFFFFF if sizes_moved else csize)
        assert f[9] == (0xFFFFFFFF if sizes_moved else usize)
        assert f[16] == (0xFFFFFFFF if offset >= limit else offset)
        assert f[1] == 0x0300 | (45 if values else 20)
        assert f[2] == (45 if values else 20)
        assert f[3:5] == (0x800, 8)
        extra = struct.pack(f"<HH{len(values)}Q", 1, 8 * len(values), *values) if values else b""
        assert f[11] == len(extra)
        assert record[46:] == b"nm" + extra
    # A version above 4.5 is kept.
    assert fields(zf_mod.central_record(b"n", 63, 0, 0, 0, 0, 0, 0, 0, limit))[2] == 63


# --- reading what zipfile writes -----------------------------------------------------------------


@pytest.mark.parametrize("method", [0, 8, 12, 14])
def test_reads_zipfile_members_with_data_descriptors(tmp_path: Path, method: int) -> None:
    stream = Unseekable()
    members = {"a": b"first" * 100, "b/c": b"", "d": bytes(range(256)) * 9}
    with zipfile.ZipFile(stream, "w", compression=method) as z:
        for name, value in members.items():
            z.writestr(name, value)
    data = bytes(stream.buffer)
    assert zipfile_contents(data) == members
    path = write(tmp_path, data)
    assert store_contents(path) == members
    with ZipStore(path) as store:
        assert not store.recovered
    # Without its directory nothing can be recovered from a member with a descriptor.
    torn = write(tmp_path, data[: data.index(struct.pack("<I", SIG_CENTRAL))], "t.zip")
    with ZipStore(torn) as store:
        assert store.recovered
        assert list(store.list()) == []


def test_reads_zipfile_zip64_archives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 300)
    monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 2)
    members = {f"m{i}": os.urandom(150 * i) for i in range(5)}
    data = zipfile_bytes(members, comment=b"zip64 comment")
    monkeypatch.undo()
    assert struct.pack("<I", SIG_EOCD64) in data
    path = write(tmp_path, data)
    assert store_contents(path) == members
    with ZipStore(path, mode="a") as store:
        store.set("new", b"n")
    members["new"] = b"n"
    assert zipfile_contents(path.read_bytes()) == members
    with zipfile.ZipFile(path) as z:
        assert z.comment == b"zip64 comment"


# --- crafted directories -----------------------------------------------------------------------


@pytest.mark.parametrize("fields", [("size",), ("csize",), ("offset",), ("size", "csize"),
                                    ("size", "offset"), ("csize", "offset"),
                                    ("size", "csize", "offset")])
def test_central_zip64_fields_in_order(tmp_path: Path, fields: tuple[str, ...]) -> None:
    data = b"deflated " * 50
    entries = [Entry(b"pad", b"p" * 40),
               Entry(b"m", data, method=8, zip64=fields,
                     extra_before=struct.pack("<HH3s", 0x5455, 3, b"abc")),
               Entry(b"after", b"tail")]
    crafted = craft(entries).data
    expected = {"pad": b"p" * 40, "m": data, "after": b"tail"}
    assert zipfile_contents(crafted) == expected
    assert store_contents(write(tmp_path, crafted)) == expected


def test_a_saturated_field_without_zip64_extra_is_corrupt(tmp_path: Path) -> None:
    entry = Entry(b"m", b"v" * 10, zip64=("offset",))
    data = bytearray(craft([entry]).data)
    # Rename the ZIP64 block (id 1) to an unknown id: the saturated offset has no value.
    central = data.index(struct.pack("<I", SIG_CENTRAL))
    struct.pack_into("<H", data, central + 46 + 1, 0x9999)
    path = write(tmp_path, bytes(data))
    error = _directory_error(path, len(data) - 22)
    assert isinstance(error, CorruptZipError)
    assert str(error) == f"{path}: ZIP64 field saturated without a ZIP64 extra"
    with ZipStore(path) as store:
        # The directory is damaged; the member is recovered through its local header.
        assert store.recovered
        assert store.get("m") == b"v" * 10


def test_zip64_extra_shorter_than_its_fields(tmp_path: Path) -> None:
    # A ZIP64 block holding only the size although the offset is saturated too: the offset
    # stays saturated, which lies past the file.
    data = b"v" * 10
    entry = Entry(b"m", data, zip64=("size", "offset"))
    crafted = bytearray(craft([entry]).data)
    central = crafted.index(struct.pack("<I", SIG_CENTRAL))
    struct.pack_into("<H", crafted, central + 46 + 1 + 2, 8)  # block size 16 -> 8
    # The block still takes 20 bytes of extra: the rest is an empty unknown block.
    struct.pack_into("<HH", crafted, central + 46 + 1 + 12, 0x7777, 4)
    path = write(tmp_path, bytes(crafted))
    with pytest.raises(BadZipFile, match="Header offset not found"):
        zipfile.ZipFile(path)
    with ZipStore(path) as store:
        assert "m" in store
        with pytest.raises(CorruptZipError, match="lies past the member data"):
            store.get("m")


def test_zip64_block_after_other_blocks_and_partial_values() -> None:
    block = zf_mod._zip64_block
    assert block(b"") is None
    assert block(struct.pack("<HH", 0x5455, 0)) is None
    assert block(struct.pack("<HH", 1, 0)) == []
    assert block(struct.pack("<HHQ", 1, 8, 7)) == [7]
    assert block(struct.pack("<HH2sHHQQ", 0x5455, 2, b"xx", 1, 16, 5, 6)) == [5, 6]
    # A body that is not a whole number of values: the rest is ignored.
    assert block(struct.pack("<HHQ3s", 1, 11, 9, b"abc")) == [9]
    # A truncated header at the end is no block.
    assert block(struct.pack("<HH2sHQ", 0x5455, 2, b"xx", 1, 3)[:9]) is None
    assert block(struct.pack("<HH", 0x5455, 0) + b"\x01\x00\x08") is None
    assert block(struct.pack("<HH", 0x5455, 0) + struct.pack("<HHQ", 1, 8, 3)) == [3]
    # The body ends where its size says, even if more blocks follow.
    assert block(struct.pack("<HHQ7sHH", 1, 15, 4, b"1234567", 0x5455, 0)) == [4]
    # Blocks of different sizes in front.
    assert block(struct.pack("<HH2sHH6sHHQ", 0x5455, 2, b"ab", 0x7875, 6, b"\1" * 6,
                             1, 8, 12)) == [12]
    # Values are unsigned 64-bit.
    assert block(struct.pack("<HHQ", 1, 8, (1 << 64) - 2)) == [(1 << 64) - 2]


def test_local_zip64_sizes() -> None:
    sizes = zf_mod._local_zip64_sizes
    assert sizes(struct.pack("<HHQQ", 1, 16, 5, 6), 0, 0) == (5, 6)
    assert sizes(struct.pack("<HHQQQ", 1, 24, 5, 6, 7), 0, 0) == (5, 6)
    for extra in (b"", struct.pack("<HHQ", 1, 8, 5), struct.pack("<HHQQ", 2, 16, 5, 6)):
        with pytest.raises(CorruptZipError, match="^ZIP64 sizes saturated without a ZIP64"
                                                  " extra$"):
            sizes(extra, 0, 0)


def test_central_zip64_fields_unit() -> None:
    f = zf_mod._central_zip64_fields
    sat = 0xFFFFFFFF
    extra = struct.pack("<HH3Q", 1, 24, 11, 22, 33)
    p = Path("x")
    assert f(extra, sat, sat, sat, p) == (11, 22, 33)
    assert f(extra, 1, sat, sat, p) == (1, 11, 22)
    assert f(extra, 1, 2, sat, p) == (1, 2, 11)
    assert f(extra, sat, 2, 3, p) == (11, 2, 3)
    assert f(struct.pack("<HHQ", 1, 8, 11), sat, sat, sat, p) == (11, sat, sat)
    assert f(struct.pack("<HH", 1, 0), sat, sat, sat, p) == (sat, sat, sat)
    with pytest.raises(CorruptZipError,
                       match="^x: ZIP64 field saturated without a ZIP64 extra$"):
        f(b"", sat, 1, 1, p)


def test_names_in_cp437_and_utf8(tmp_path: Path) -> None:
    entries = [Entry(b"caf\x82", b"cp437"),  # 0x82 is e-acute in code page 437
               Entry("grüße".encode(), b"utf8", flags=0x800),
               Entry(b"dir/", b""),
               Entry(b"../up", b"x"),
               Entry(b"ok", b"fine")]
    crafted = craft(entries).data
    assert zipfile_contents(crafted) == {"café": b"cp437", "grüße": b"utf8", "ok": b"fine",
                                         "../up": b"x"}
    expected = {"café": b"cp437", "grüße": b"utf8", "ok": b"fine"}
    assert store_contents(write(tmp_path, crafted)) == expected
    # A name flagged UTF-8 that is no UTF-8 (zipfile fails on it) is skipped.
    crafted = craft([*entries, Entry(b"bad\xff", b"x", flags=0x800)]).data
    with pytest.raises(UnicodeDecodeError):
        zipfile.ZipFile(io.BytesIO(crafted))
    assert store_contents(write(tmp_path, crafted, "b.zip")) == expected


def test_count_mismatch_warns_but_records_win(tmp_path: Path) -> None:
    entries = [Entry(b"a", b"1"), Entry(b"b", b"2"), Entry(b"c", b"3")]
    expected = {"a": b"1", "b": b"2", "c": b"3"}
    for count in (3, 0xFFFF):
        path = write(tmp_path, craft(entries, count=count).data)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert store_contents(path) == expected
    for count in (2, 4, 0xFFFE):
        path = write(tmp_path, craft(entries, count=count).data)
        with pytest.warns(UserWarning) as record:
            store = ZipStore(path)
        store.close()
        messages = [str(w.message) for w in record]
        assert messages == [f"{path}: central directory holds 3 records, end record says "
                            f"{count}"]
        with pytest.warns(UserWarning, match="central directory holds 3 records"):
            assert store_contents(path) == expected


def test_counts_agree() -> None:
    agree = zf_mod._counts_agree
    assert agree(3, 3) and agree(70000, 0xFFFF) and agree(3, 0xFFFF)
    assert agree(0x10003, 3)
    assert not agree(3, 4) and not agree(4, 3) and not agree(0x10003, 4)


def test_end_record_found_behind_a_comment(tmp_path: Path) -> None:
    members = {"k": b"value"}
    fake = struct.pack("<IHHHHIIH", SIG_EOCD, 0, 0, 0, 0, 0, 0, 0)
    for comment in (b"", b"c", b"\xff" * 65535, b"x" + fake + b"y", b"PK\x05\x06",
                    b"PK\x05\x06" + b"z" * 30, fake + b"\0"):
        data = zipfile_bytes(members, comment=comment)
        if comment.isascii() and SIG_EOCD.to_bytes(4, "little") not in comment:
            assert zipfile_contents(data) == members
        path = write(tmp_path, data)
        with ZipStore(path) as store:
            assert not store.recovered
            assert store.get("k") == b"value"
        assert _read_layout(path).comment == comment
    # A comment ending in a complete end record (of an empty archive): that one is the
    # last end record whose comment ends at the end of the file; zipfile agrees.
    for comment in (fake, b"abc" + fake):
        data = zipfile_bytes(members, comment=comment)
        assert zipfile_contents(data) == {}
        with ZipStore(write(tmp_path, data)) as store:
            assert list(store.list()) == []


def eocd(disk: int = 0, comment_len: int = 0) -> bytes:
    return struct.pack("<IHHHHIIH", SIG_EOCD, disk, 0, 0, 0, 0, 0, comment_len)


def test_end_records_in_the_comment_are_tried_last_first(tmp_path: Path) -> None:
    members = {"k": b"value"}
    # The last end record is no valid one (multi-disk): the real one before it is used.
    path = write(tmp_path, zipfile_bytes(members, comment=eocd(disk=1)))
    layout = _read_layout(path)
    assert not layout.recovered and list(layout.index) == ["k"]
    # A valid record (of an empty archive) between the invalid last one and the real one:
    # that one is the last valid record.
    path = write(tmp_path, zipfile_bytes(members, comment=eocd(comment_len=22)
                                         + eocd(disk=1)), "b.zip")
    layout = _read_layout(path)
    assert not layout.recovered and layout.index == {} and layout.count == 0
    # An end record at the very start of the file is found too.
    path = write(tmp_path, eocd(comment_len=22) + eocd(disk=1), "c.zip")
    layout = _read_layout(path)
    assert not layout.recovered and layout.index == {}


def test_empty_zip64_archive(tmp_path: Path) -> None:
    # Nothing but the end records: the ZIP64 one is at offset 0.
    crafted = craft([], zip64_end=True).data
    assert crafted[:4] == struct.pack("<I", SIG_EOCD64)
    assert zipfile_contents(crafted) == {}
    layout = _read_layout(write(tmp_path, crafted))
    assert not layout.recovered and layout.index == {} and layout.count == 0


def test_end_record_with_a_comment_running_past_the_file(tmp_path: Path) -> None:
    data = bytearray(zipfile_bytes({"k": b"value"}))
    struct.pack_into("<H", data, len(data) - 2, 5)  # 5 comment bytes that are not there
    path = write(tmp_path, bytes(data))
    with ZipStore(path) as store:
        # No end record whose comment ends at the end of the file: recovered.
        assert store.recovered
        assert store.get("k") == b"value"


def test_end_record_at_the_very_start_of_a_short_file(tmp_path: Path) -> None:
    # The smallest archive: 22 bytes, nothing but an end record.
    empty = struct.pack("<IHHHHIIH", SIG_EOCD, 0, 0, 0, 0, 0, 0, 0)
    assert zipfile_contents(empty) == {}
    path = write(tmp_path, empty)
    with ZipStore(path) as store:
        assert not store.recovered
        assert list(store.list()) == []
    path = write(tmp_path, empty + b"ab", "c.zip")
    with ZipStore(path) as store:  # found by the backward scan
        assert store.recovered and list(store.list()) == []
    commented = struct.pack("<IHHHHIIH", SIG_EOCD, 0, 0, 0, 0, 0, 0, 2) + b"ab"
    assert not ZipStore(write(tmp_path, commented, "d.zip")).recovered


@pytest.mark.parametrize("disk,cd_disk", [(1, 0), (0, 1), (2, 2)])
def test_multi_disk_archives_are_refused(tmp_path: Path, disk: int, cd_disk: int) -> None:
    crafted = craft([Entry(b"k", b"v")], disk=disk, cd_disk=cd_disk).data
    path = write(tmp_path, crafted)
    reader_error = _directory_error(path, len(crafted) - 22)
    assert isinstance(reader_error, CorruptZipError)
    assert str(reader_error) == f"{path}: multi-disk archives are not supported"
    # Opening falls back to the local headers.
    with ZipStore(path) as store:
        assert store.recovered and store.get("k") == b"v"


def _directory_error(path: Path, pos: int) -> Exception | None:
    fd = os.open(path, os.O_RDONLY)
    try:
        ArchiveReader(fd, path, os.fstat(fd).st_size)._directory_at(pos)
    except Exception as error:  # noqa: BLE001 - returned for inspection
        return error
    finally:
        os.close(fd)
    return None


def _read_layout(path: Path) -> zf_mod._Layout:
    fd = os.open(path, os.O_RDONLY)
    try:
        return ArchiveReader(fd, path, os.fstat(fd).st_size).read()
    finally:
        os.close(fd)


def test_directory_errors_name_the_damage(tmp_path: Path) -> None:
    good = craft([Entry(b"k", b"value"), Entry(b"l", b"other")])
    eocd = good.eocd
    cases: dict[str, tuple[bytes, str]] = {}
    data = bytearray(good.data)
    struct.pack_into("<I", data, eocd + 16, good.cd_start + 1)  # offset past its end
    cases["offset"] = (bytes(data), "central directory offset past its end")
    data = bytearray(good.data)
    struct.pack_into("<I", data, good.cd_start, 0x12345678)
    cases["sig"] = (bytes(data), "bad central directory record at entry 0")
    data = bytearray(good.data)
    second = good.data.index(struct.pack("<I", SIG_CENTRAL), good.cd_start + 4)
    struct.pack_into("<I", data, second, 0x12345678)
    cases["sig2"] = (bytes(data), "bad central directory record at entry 1")
    data = bytearray(good.data)
    struct.pack_into("<H", data, good.cd_start + 30, 200)  # an extra running past the end
    cases["overrun"] = (bytes(data), "truncated central directory")
    # A directory size that cuts the last record short.
    data = bytearray(good.data)
    cd_size = eocd - good.cd_start
    short = bytes(data[: good.cd_start]) + bytes(data[good.cd_start : eocd - 10])
    eocd_rec = bytearray(data[eocd:])
    struct.pack_into("<I", eocd_rec, 12, cd_size - 10)
    cases["short"] = (short + bytes(eocd_rec), "truncated central directory")
    for name, (blob, message) in cases.items():
        path = write(tmp_path, blob, name + ".zip")
        pos = blob.rindex(struct.pack("<I", SIG_EOCD))
        error = _directory_error(path, pos)
        assert isinstance(error, CorruptZipError), name
        assert str(error) == f"{path}: {message}", name
    # Not an end record at all.
    path = write(tmp_path, good.data, "good.zip")
    error = _directory_error(path, 0)
    assert isinstance(error, CorruptZipError)
    assert str(error) == f"{path}: no end of central directory at 0"


def test_reads_outside_the_file_are_corrupt(tmp_path: Path) -> None:
    path = write(tmp_path, b"0123456789", "f")
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = ArchiveReader(fd, path, 10)
        assert reader._read(0, 10) == b"0123456789"
        assert reader._read(10, 0) == b""
        assert reader._read(4, 0) == b""
        for offset, size in ((-1, 2), (0, -1), (9, 2), (11, 0)):
            with pytest.raises(CorruptZipError, match=(
                    f"^{path}: {size} bytes at offset {offset} lie outside the file$")):
                reader._read(offset, size)
    finally:
        os.close(fd)


# --- ZIP64 end records -------------------------------------------------------------------------


def test_zip64_end_record_is_used(tmp_path: Path) -> None:
    entries = [Entry(b"a", b"1" * 30), Entry(b"b", b"2" * 7)]
    crafted = craft(entries, zip64_end=True, comment=b"hi").data
    assert zipfile_contents(crafted) == {"a": b"1" * 30, "b": b"2" * 7}
    layout = _read_layout(write(tmp_path, crafted))
    assert sorted(layout.index) == ["a", "b"]
    assert layout.count == 2 and layout.comment == b"hi" and layout.concat == 0
    assert not layout.recovered


def test_zip64_end_record_with_prepended_data(tmp_path: Path) -> None:
    entries = [Entry(b"a", b"1" * 30), Entry(b"b", b"2" * 7)]
    prefix = b"#!prepended\n" * 9
    crafted = craft(entries, prefix=prefix, zip64_end=True)
    assert zipfile_contents(crafted.data) == {"a": b"1" * 30, "b": b"2" * 7}
    path = write(tmp_path, crafted.data)
    layout = _read_layout(path)
    assert layout.concat == len(prefix)
    assert layout.index["a"].header_offset == crafted.offsets[0]
    assert layout.index["b"].header_offset == crafted.offsets[1]
    assert layout.data_end == crafted.cd_start
    assert store_contents(path) == {"a": b"1" * 30, "b": b"2" * 7}


def test_zip64_end_record_not_right_before_the_locator(tmp_path: Path) -> None:
    # Something between the ZIP64 end record and its locator: found by the locator's offset.
    entries = [Entry(b"a", b"abc")]
    base = craft(entries, zip64_end=True)
    data = bytearray(base.data)
    eocd64 = data.index(struct.pack("<I", SIG_EOCD64))
    filler = b"F" * 60
    data[eocd64 + 56 : eocd64 + 56] = filler  # after the 56-byte ZIP64 end record
    path = write(tmp_path, bytes(data))
    # zipfile only looks right before the locator; this store follows the locator.
    layout = _read_layout(path)
    assert sorted(layout.index) == ["a"] and not layout.recovered
    # The locator pointing elsewhere (not at a record): the directory is not found.
    struct.pack_into("<Q", data, eocd64 + 56 + 60 + 8, 3)
    path = write(tmp_path, bytes(data), "b.zip")
    error = _directory_error(path, len(data) - 22)
    assert isinstance(error, CorruptZipError)
    assert str(error) == f"{path}: ZIP64 end of central directory not found"


def test_zip64_locator_at_the_start_and_records_past_it(tmp_path: Path) -> None:
    # A locator whose offset points past itself is ignored (the record precedes it).
    entries = [Entry(b"a", b"abc")]
    data = bytearray(craft(entries, zip64_end=True).data)
    loc = data.index(struct.pack("<I", SIG_LOCATOR))
    struct.pack_into("<Q", data, loc + 8, loc)
    eocd64 = data.index(struct.pack("<I", SIG_EOCD64))
    struct.pack_into("<I", data, eocd64, 0)  # the record right before it is no record
    path = write(tmp_path, bytes(data))
    error = _directory_error(path, len(data) - 22)
    assert str(error) == f"{path}: ZIP64 end of central directory not found"
    # Only a locator and an end record, nothing before: the candidate before it is < 0.
    tiny = struct.pack("<IIQI", SIG_LOCATOR, 0, 0, 1) + struct.pack(
        "<IHHHHIIH", SIG_EOCD, 0, 0, 0, 0, 0, 0, 0)
    path = write(tmp_path, tiny, "t.zip")
    error = _directory_error(path, 20)
    assert str(error) == f"{path}: ZIP64 end of central directory not found"


def test_zip64_end_record_values_replace_the_end_records(tmp_path: Path) -> None:
    entries = [Entry(b"a", b"1"), Entry(b"b", b"2")]
    for disk, cd_disk in ((1, 0), (0, 1)):
        crafted = craft(entries, zip64_end=True, disk=disk, cd_disk=cd_disk).data
        path = write(tmp_path, crafted)
        error = _directory_error(path, len(crafted) - 22)
        assert str(error) == f"{path}: multi-disk archives are not supported"
    # The end record's own (saturated) disk numbers are not consulted.
    path = write(tmp_path, craft(entries, zip64_end=True).data, "ok.zip")
    layout = _read_layout(path)
    assert layout.count == 2 and sorted(layout.index) == ["a", "b"]


def test_no_locator_before_a_plain_end_record(tmp_path: Path) -> None:
    entries = [Entry(b"a", b"x" * 21)]
    crafted = craft(entries).data
    assert crafted[-42:-38] != struct.pack("<I", SIG_LOCATOR)
    layout = _read_layout(write(tmp_path, crafted))
    assert list(layout.index) == ["a"] and layout.data_end == 30 + 1 + 21


# --- layouts: prepended data, comments -------------------------------------------------------


def test_layout_of_an_archive_with_prepended_data(tmp_path: Path) -> None:
    prefix = b"P" * 33
    crafted = craft([Entry(b"a", b"1" * 5), Entry(b"b", b"2" * 9)], prefix=prefix,
                    comment=b"note")
    path = write(tmp_path, crafted.data)
    layout = _read_layout(path)
    assert layout.concat == 33
    assert [m.header_offset for m in layout.index.values()] == crafted.offsets
    assert layout.data_end == crafted.cd_start
    assert layout.end == len(crafted.data)
    assert layout.comment == b"note"
    assert layout.count == 2
    assert layout.central == crafted.data[crafted.cd_start : crafted.eocd]
    m = layout.index["b"]
    assert (m.compress_size, m.file_size, m.method, m.crc, m.flags, m.data_offset) == (
        9, 9, 0, zlib.crc32(b"2" * 9), 0, -1)


def test_absolute_offsets_in_an_archive_with_prepended_data(tmp_path: Path) -> None:
    # Some tools write offsets relative to the file: then concat computes to zero.
    crafted = craft([Entry(b"a", b"1" * 5)], prefix=b"P" * 40, relative_offsets=False)
    assert zipfile_contents(crafted.data) == {"a": b"1" * 5}
    assert store_contents(write(tmp_path, crafted.data)) == {"a": b"1" * 5}


def test_member_comments_and_extras_are_skipped(tmp_path: Path) -> None:
    entries = [Entry(b"a", b"first", comment=b"member comment",
                     extra_before=struct.pack("<HH4s", 0x5455, 4, b"abcd")),
               Entry(b"b", b"second", comment=b"c2")]
    crafted = craft(entries).data
    assert zipfile_contents(crafted) == {"a": b"first", "b": b"second"}
    path = write(tmp_path, crafted)
    assert store_contents(path) == {"a": b"first", "b": b"second"}
    layout = _read_layout(path)
    assert not layout.recovered and layout.count == 2


def test_records_of_minimal_size_at_the_end(tmp_path: Path) -> None:
    # A last member with an empty name and no data: a 46-byte central record and a
    # 30-byte local header, each ending exactly where the directory or file ends.
    crafted = craft([Entry(b"a", b"x"), Entry(b"", b"")])
    with zipfile.ZipFile(io.BytesIO(crafted.data)) as z:
        assert z.namelist() == ["a", ""]
    layout = _read_layout(write(tmp_path, crafted.data))
    assert not layout.recovered and layout.count == 2 and list(layout.index) == ["a"]
    torn = crafted.data[: crafted.cd_start]
    layout = _read_layout(write(tmp_path, torn, "t.zip"))
    assert layout.recovered and list(layout.index) == ["a"]
    assert len(layout.recovered_records) == 2
    assert layout.end == len(torn)


def test_recovery_keeps_an_empty_last_member(tmp_path: Path) -> None:
    path = tmp_path / "e.zip"
    with ZipStore(path, mode="w") as store:
        store.set("a", b"1")
        store.set("empty", b"")
        torn = path.read_bytes()
    layout = _read_layout(write(tmp_path, torn, "t.zip"))
    assert layout.recovered and sorted(layout.index) == ["a", "empty"]
    assert layout.index["empty"].data_offset == len(torn)


# --- recovery --------------------------------------------------------------------------------


def test_recovery_of_a_store_without_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "w.zip"
    members = {"a": b"1" * 100, "b/c": b"", "d": os.urandom(70_000)}
    with ZipStore(path, mode="w") as store:
        for key, value in members.items():
            store.set(key, value)
        snapshot = path.read_bytes()
    torn = write(tmp_path, snapshot, "torn.zip")
    layout = _read_layout(torn)
    assert layout.recovered and layout.central == b"" and layout.count == 0
    assert sorted(layout.index) == sorted(members)
    assert layout.end == layout.data_end == len(snapshot)
    assert len(layout.recovered_records) == 3
    for key, m in layout.index.items():
        assert m.data_offset % 8 == 0
        assert snapshot[m.data_offset : m.data_offset + m.file_size] == members[key]
    # The records recovered make a directory zipfile accepts.
    with ZipStore(torn, mode="a") as store:
        assert store.recovered
    assert zipfile_contents(torn.read_bytes()) == members


def test_recovery_after_a_directory_with_prepended_data(tmp_path: Path) -> None:
    inner = zipfile_bytes({"old": b"o" * 10, "old2": b"p"}, method=zipfile.ZIP_DEFLATED,
                          comment=b"kept")
    prefix = b"#!sfx\n" * 5
    path = write(tmp_path, prefix + inner)
    with ZipStore(path, mode="a") as store:
        store.set("new", b"n" * 3)
        store.set("new2", b"m" * 12)
        torn = path.read_bytes()
    torn_path = write(tmp_path, torn, "torn.zip")
    layout = _read_layout(torn_path)
    assert layout.recovered
    assert layout.concat == len(prefix)
    assert layout.comment == b"kept"
    assert layout.count == 2
    assert sorted(layout.index) == ["new", "new2", "old", "old2"]
    assert layout.index["new"].header_offset == len(prefix) + len(inner)
    assert layout.end == layout.data_end == len(torn)
    expected = {"old": b"o" * 10, "old2": b"p", "new": b"nnn", "new2": b"m" * 12}
    assert store_contents(torn_path) == expected
    with ZipStore(torn_path, mode="a"):
        pass
    assert zipfile_contents(torn_path.read_bytes()) == expected
    with zipfile.ZipFile(torn_path) as z:
        assert z.comment == b"kept"


def test_recovery_stops_at_a_damaged_member(tmp_path: Path) -> None:
    good = [Entry(b"a", b"aaaa"), Entry(b"b", b"b" * 50, method=8), Entry(b"c", b"cc")]
    crafted = craft(good, with_end=False)
    data = crafted.data[: crafted.cd_start]
    # Flip a data byte of b: its CRC fails, c (after it) is not trusted.
    bad = bytearray(data)
    bad[crafted.offsets[2] - 2] ^= 0xFF
    layout = _read_layout(write(tmp_path, bytes(bad)))
    assert layout.recovered and list(layout.index) == ["a"]
    assert layout.end == crafted.offsets[1]
    # A stored member whose CRC is wrong.
    bad = bytearray(data)
    bad[crafted.offsets[0] + 31] ^= 0xFF
    layout = _read_layout(write(tmp_path, bytes(bad), "b.zip"))
    assert list(layout.index) == []
    assert layout.end == 0
    # All intact: every member, and the end right after the last.
    layout = _read_layout(write(tmp_path, data, "c.zip"))
    assert list(layout.index) == ["a", "b", "c"]
    assert layout.end == layout.data_end == len(data)
    assert layout.index["c"].data_offset == crafted.offsets[2] + 31


@pytest.mark.parametrize("method", [0, 8, 12, 14])
def test_recovery_of_members_of_every_method(tmp_path: Path, method: int) -> None:
    value = b"recover me " * 40
    crafted = craft([Entry(b"m", value, method=method), Entry(b"n", b"second")],
                    with_end=False)
    path = write(tmp_path, crafted.data[: crafted.cd_start])
    with ZipStore(path) as store:
        assert store.recovered
        assert store.get("m") == value and store.get("n") == b"second"


def test_recovery_refuses_members_it_cannot_trust(tmp_path: Path) -> None:
    value = b"v" * 20
    cases = {
        "descriptor": Entry(b"m", value, flags=0x8),
        "encrypted": Entry(b"m", value, flags=0x1),
        "stored-sizes-differ": Entry(b"m", value, local_sizes=(20, 21)),
        "unknown-method": Entry(b"m", value, method=99, raw=value),
        "bad-deflate": Entry(b"m", value, method=8, raw=b"\xff" * 20),
        "past-the-end": Entry(b"m", value, local_sizes=(2000, 2000)),
        "bad-zip64": Entry(b"m", value, local_sizes=(0xFFFFFFFF, 0xFFFFFFFF)),
        "descriptor-and-encrypted": Entry(b"m", value, flags=0x9),
    }
    for name, entry in cases.items():
        crafted = craft([Entry(b"first", b"f"), entry, Entry(b"after", b"a")], with_end=False)
        path = write(tmp_path, crafted.data[: crafted.cd_start], name + ".zip")
        layout = _read_layout(path)
        assert list(layout.index) == ["first"], name
        assert layout.end == crafted.offsets[1], name
    # A UTF-8 flag is no obstacle (only 0x1 and 0x8 are).
    crafted = craft([Entry("ü".encode(), b"x", flags=0x800 | 0x2)], with_end=False)
    layout = _read_layout(write(tmp_path, crafted.data[: crafted.cd_start], "u.zip"))
    assert list(layout.index) == ["ü"]


def test_recovery_of_zip64_local_headers(tmp_path: Path) -> None:
    value = os.urandom(300)
    crafted = craft([Entry(b"a", value, local_zip64=True,
                           extra_before=struct.pack("<HH2s", 0x5455, 2, b"zz")),
                     Entry(b"b", b"bb")], with_end=False)
    data = crafted.data[: crafted.cd_start]
    layout = _read_layout(write(tmp_path, data))
    assert sorted(layout.index) == ["a", "b"]
    assert layout.index["a"].file_size == 300
    assert store_contents(write(tmp_path, data, "s.zip")) == {"a": value, "b": b"bb"}
    # The recovered central record moves the sizes to a ZIP64 extra when they are big.
    record = layout.recovered_records[0]
    assert struct.unpack_from("<I", record, 42)[0] == crafted.offsets[0]


def test_recovery_of_a_header_torn_in_its_name_or_data(tmp_path: Path) -> None:
    crafted = craft([Entry(b"first", b"f" * 10), Entry(b"second-name", b"s" * 10)],
                    with_end=False)
    data = crafted.data[: crafted.cd_start]
    second = crafted.offsets[1]
    for cut in (second + 10, second + 30, second + 30 + 5, second + 30 + 11,
                second + 30 + 11 + 9):
        layout = _read_layout(write(tmp_path, data[:cut], f"{cut}.zip"))
        assert list(layout.index) == ["first"], cut
        assert layout.end == second
    layout = _read_layout(write(tmp_path, data, "whole.zip"))
    assert list(layout.index) == ["first", "second-name"]


def test_recovery_keeps_unnamed_members_in_the_directory(tmp_path: Path) -> None:
    crafted = craft([Entry(b"dir/", b""), Entry(b"../x", b"hidden"), Entry(b"k", b"v")],
                    with_end=False)
    path = write(tmp_path, crafted.data[: crafted.cd_start])
    layout = _read_layout(path)
    assert list(layout.index) == ["k"]
    assert len(layout.recovered_records) == 3
    with ZipStore(path, mode="a"):
        pass
    with zipfile.ZipFile(path) as z:
        assert z.namelist() == ["dir/", "../x", "k"]
        assert z.read("../x") == b"hidden"


def test_not_a_zip_archive(tmp_path: Path) -> None:
    for blob in (b"", b"PK", b"PK\x03", b"hello world" * 10, b"\x00" * 100):
        path = write(tmp_path, blob, "n.zip")
        with pytest.raises(CorruptZipError) as caught:
            ZipStore(path)
        assert str(caught.value) == (f"{path} is not a ZIP archive: no valid end of central "
                                     "directory and no member at its start")
        assert isinstance(caught.value, BadZipFile)
        assert isinstance(caught.value, CorruptStoreError)
    # A damaged end record is named in the message.
    crafted = craft([Entry(b"k", b"v")], disk=1)
    data = b"x" * 40 + crafted.data[crafted.cd_start :]
    path = write(tmp_path, data, "d.zip")
    with pytest.raises(CorruptZipError, match=r"\(.*multi-disk archives are not supported\)$"
                       ) as caught:
        ZipStore(path)
    assert isinstance(caught.value.__cause__, CorruptZipError)
    # Only a truncated local header at the start: an empty recovered archive.
    crafted = craft([Entry(b"k", b"value")], with_end=False)
    path = write(tmp_path, crafted.data[:20], "l.zip")
    with ZipStore(path) as store:
        assert store.recovered and list(store.list()) == []


def test_a_valid_archive_inside_a_member_is_not_the_directory(tmp_path: Path) -> None:
    inner = zipfile_bytes({"inner": b"i" * 10})
    path = tmp_path / "outer.zip"
    with ZipStore(path, mode="w") as store:
        store.set("first", b"f")
        store.set("blob", inner)
        torn = path.read_bytes()
    layout = _read_layout(write(tmp_path, torn + b"trailing junk", "t.zip"))
    assert layout.recovered
    assert sorted(layout.index) == ["blob", "first"]
    assert layout.central == b""
    # An earlier directory before the member holding an archive is the one trusted.
    with ZipStore(path, mode="w") as store:
        store.set("first", b"f")
    with ZipStore(path, mode="a") as store:
        store.set("blob", inner)
        torn = path.read_bytes()
    layout = _read_layout(write(tmp_path, torn + b"torn", "e.zip"))
    assert layout.recovered and layout.count == 1
    assert sorted(layout.index) == ["blob", "first"]


def test_recovery_finds_the_last_of_several_directories(tmp_path: Path) -> None:
    path = tmp_path / "s.zip"
    with ZipStore(path, mode="w") as store:
        store.set("a", b"1")
    for key in ("b", "c"):
        with ZipStore(path, mode="a") as store:
            store.set(key, key.encode())
    with ZipStore(path, mode="a") as store:
        store.set("d", b"4")
        torn = path.read_bytes()
    layout = _read_layout(write(tmp_path, torn, "t.zip"))
    assert layout.recovered and layout.count == 3
    assert sorted(layout.index) == ["a", "b", "c", "d"]
    assert len(layout.recovered_records) == 1


def test_recovery_skips_end_signatures_that_are_no_records(tmp_path: Path) -> None:
    path = tmp_path / "s.zip"
    with ZipStore(path, mode="w") as store:
        store.set("a", b"1")
    fake = struct.pack("<I", SIG_EOCD) + b"\xff" * 40  # a multi-disk "record"
    with ZipStore(path, mode="a") as store:
        store.set("b", b"data " + fake + b" more")
        store.set("c", b"3")
        torn = path.read_bytes()
    layout = _read_layout(write(tmp_path, torn, "t.zip"))
    assert layout.recovered and layout.count == 1
    assert sorted(layout.index) == ["a", "b", "c"]
    assert store_contents(write(tmp_path, torn, "u.zip"))["b"] == b"data " + fake + b" more"


def test_recovery_scans_blocks_backwards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Small scan blocks: end records straddling and inside blocks are found.
    for block in (7, 16, 22, 64, 1000):
        monkeypatch.setattr(zf_mod, "_SCAN_BLOCK", block)
        path = tmp_path / "s.zip"
        with ZipStore(path, mode="w") as store:
            store.set("a", b"1" * 37)
        with ZipStore(path, mode="a") as store:
            store.set("big", b"b" * 300)
            torn = path.read_bytes()
        layout = _read_layout(write(tmp_path, torn, "t.zip"))
        assert layout.count == 1, block
        assert sorted(layout.index) == ["a", "big"], block
        assert torn[layout.index["big"].data_offset:][:300] == b"b" * 300


def test_end_signatures_are_all_found_last_first(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    sig = struct.pack("<I", SIG_EOCD)
    data = bytearray(b"." * 100)
    positions = [0, 5, 20, 24, 47, 96]
    for p in positions:
        data[p : p + 4] = sig
    path = write(tmp_path, bytes(data), "sigs")
    for block in (1, 3, 4, 10, 1 << 20):
        monkeypatch.setattr(zf_mod, "_SCAN_BLOCK", block)
        fd = os.open(path, os.O_RDONLY)
        try:
            reader = ArchiveReader(fd, path, 100)
            assert list(reader._end_signatures(100)) == positions[::-1], block
            assert list(reader._end_signatures(47)) == [24, 20, 5, 0], block
            assert list(reader._end_signatures(48)) == [47, 24, 20, 5, 0], block
            assert list(reader._end_signatures(0)) == []
        finally:
            os.close(fd)


def test_inside_member(tmp_path: Path) -> None:
    crafted = craft([Entry(b"a", b"x" * 10), Entry(b"b", b"y" * 10)], with_end=False)
    data = crafted.data[: crafted.cd_start]
    path = write(tmp_path, data, "m")
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = ArchiveReader(fd, path, len(data))
        a, b = crafted.offsets
        assert reader._inside_member(0, a)
        assert reader._inside_member(0, b - 1)
        assert reader._inside_member(0, b)
        assert reader._inside_member(0, len(data) - 1)
        assert not reader._inside_member(b, b - 1)
        assert not reader._inside_member(0, len(data))
        assert not reader._inside_member(b, b - 1)
        assert not reader._inside_member(len(data), 0)
    finally:
        os.close(fd)


def test_starts_local(tmp_path: Path) -> None:
    for blob, expected in ((b"PK\x03\x04", True), (b"PK\x03\x04rest", True), (b"PK\x03", False),
                           (b"PK\x05\x06", False), (b"", False)):
        path = write(tmp_path, blob, "s")
        fd = os.open(path, os.O_RDONLY)
        try:
            assert ArchiveReader(fd, path, len(blob))._starts_local() is expected
        finally:
            os.close(fd)


# === ZipStore (storage/zip.py) ==================================================================


def test_constructor_arguments(tmp_path: Path) -> None:
    path = tmp_path / "c.zip"
    for mode in ("rw", "", "R", "wa"):
        with pytest.raises(ValueError, match=f"^ZipStore mode must be 'r', 'w', 'a' or 'x', "
                                             f"not {mode!r}$"):
            ZipStore(path, mode=mode)
    with pytest.raises(ValueError, match="^read_only=True contradicts mode 'w'$"):
        ZipStore(path, mode="w", read_only=True)
    assert not path.exists()
    with ZipStore(path, mode="w", read_only=False) as store:
        assert not store.read_only and store.mode == "w" and store.verify_crc
        assert repr(store) == f"ZipStore({str(path)!r}, mode='w')"
        assert store.path == path
    for mode in ("a", "x"):
        with pytest.raises(ValueError, match=f"^read_only=True contradicts mode '{mode}'$"):
            ZipStore(path, mode=mode, read_only=True)
    with pytest.raises(ValueError, match="^read_only=False contradicts mode 'r'$"):
        ZipStore(path, mode="r", read_only=False)
    with ZipStore(str(path), read_only=True, verify_crc=False) as store:
        assert store.read_only and store.mode == "r" and not store.verify_crc
        assert isinstance(store.path, Path)
    with ZipStore(path, mode="a") as store:
        assert not store.read_only


def test_mode_x_and_a_create(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    ZipStore(path, mode="x").close()
    assert zipfile_contents(path.read_bytes()) == {}
    with pytest.raises(FileExistsError):
        ZipStore(path, mode="x")
    new = tmp_path / "a.zip"
    with ZipStore(new, mode="a") as store:
        assert list(store.list()) == []
    assert zipfile_contents(new.read_bytes()) == {}


def test_new_archives_get_the_usual_file_mode(tmp_path: Path) -> None:
    import stat

    old = os.umask(0o022)
    try:
        for mode in ("w", "a", "x"):
            path = tmp_path / f"{mode}.zip"
            ZipStore(path, mode=mode).close()
            assert stat.S_IMODE(path.stat().st_mode) == 0o644
    finally:
        os.umask(old)


def test_mode_w_empties_an_archive_and_writes_one_on_close(tmp_path: Path) -> None:
    path = write(tmp_path, zipfile_bytes({"old": b"o" * 100}))
    with ZipStore(path, mode="w") as store:
        assert list(store.list()) == []
        assert path.stat().st_size == 0
    assert path.read_bytes() == struct.pack("<IHHHHIIH", SIG_EOCD, 0, 0, 0, 0, 0, 0, 0)


def test_append_without_change_rewrites_nothing(tmp_path: Path) -> None:
    data = zipfile_bytes({"k": b"v"}, comment=b"c")
    path = write(tmp_path, data)
    with ZipStore(path, mode="a") as store:
        assert store.get("k") == b"v"
    assert path.read_bytes() == data


def test_closed_store(tmp_path: Path) -> None:
    path = tmp_path / "c.zip"
    store = ZipStore(path, mode="w")
    store.set("k", b"v")
    store.close()
    store.close()
    message = f"^I/O operation on closed ZipStore\\({str(path)!r}, mode='w'\\)$"
    with pytest.raises(ValueError, match=message):
        store.set("j", b"v")
    reader = ZipStore(path)
    reader.close()
    message = f"^I/O operation on closed ZipStore\\({str(path)!r}, mode='r'\\)$"
    for call in (lambda: reader.get("k"), lambda: reader.get_range("k", 0, 1),
                 lambda: reader.get_into("k", memoryview(bytearray(1))),
                 lambda: reader.map_value("k")):
        with pytest.raises(ValueError, match=message):
            call()
    assert "k" in reader  # the index stays
    assert reader.get("missing") is None


def test_recovered_and_lock_identity(tmp_path: Path) -> None:
    path = tmp_path / "r.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", b"v")
        assert store.recovered is False
        torn = path.read_bytes()
        stat = os.stat(path)
        assert store.lock_identity == ("zip", stat.st_dev, stat.st_ino)
    with ZipStore(path) as store:
        assert store.recovered is False
        assert store.lock_identity == ("zip", stat.st_dev, stat.st_ino)
    other = write(tmp_path, torn, "t.zip")
    with ZipStore(other) as store:
        assert store.recovered
        assert store.lock_identity != ("zip", stat.st_dev, stat.st_ino)


def test_recovery_in_append_mode_drops_the_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "r.zip"
    with ZipStore(path, mode="w") as store:
        store.set("a", b"1" * 10)
        store.set("b", b"2" * 10)
        torn = path.read_bytes()
    cut = torn[:-3]  # b's last bytes are missing
    path = write(tmp_path, cut, "t.zip")
    with ZipStore(path) as store:
        assert store.recovered and list(store.list()) == ["a"]
    assert path.read_bytes() == cut  # read-only: nothing repaired
    with ZipStore(path, mode="a") as store:
        assert store.recovered and list(store.list()) == ["a"]
        b_start = torn.index(b"PK\x03\x04", 1)
        assert path.stat().st_size == b_start
    # Closed without a write: still a complete directory.
    assert zipfile_contents(path.read_bytes()) == {"a": b"1" * 10}
    with ZipStore(path) as store:
        assert not store.recovered


def test_reading_with_short_preads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.zip"
    value = os.urandom(5000)
    with ZipStore(path, mode="w") as store:
        store.set("k", value)
    real = os.pread

    def short(fd: int, n: int, offset: int) -> bytes:
        return real(fd, min(n, 1000), offset)

    with ZipStore(path) as store:
        monkeypatch.setattr(os, "pread", short)
        assert store.get("k") == value
        assert store.get_range("k", 10, 3000) == value[10:3010]
    monkeypatch.undo()
    # Reads larger than MAX_IO go through the piecewise reader.
    import zarrkit.storage.zip as zip_mod

    monkeypatch.setattr(zip_mod, "MAX_IO", 100)
    monkeypatch.setattr(zf_mod, "MAX_IO", 100)
    with ZipStore(path) as store:
        assert store.get("k") == value


def test_a_file_that_shrinks_under_a_reader(tmp_path: Path) -> None:
    path = tmp_path / "s.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", b"v" * 100)
    with ZipStore(path) as store:
        offset = store._data_offset(store._index["k"])
        os.truncate(path, offset + 10)
        with pytest.raises(CorruptZipError, match=f"^{path}: unexpected end of file at "
                                                  f"offset {offset + 10}$"):
            store.get("k")


def test_reading_without_pread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import zarrkit.storage.zip as zip_mod

    path = tmp_path / "w.zip"
    value = os.urandom(3000)
    with ZipStore(path, mode="w") as store:
        store.set("k", value)
    # As on Windows: no os.pread at all.
    monkeypatch.setattr(zip_mod, "HAS_PREAD", False)
    monkeypatch.setattr(zf_mod, "HAS_PREAD", False)
    monkeypatch.delattr(os, "pread")
    with ZipStore(path) as store:
        assert store.get("k") == value
        assert store.get_range("k", 5, 10) == value[5:15]


def test_member_location_errors(tmp_path: Path) -> None:
    value = b"0123456789"
    good = craft([Entry(b"k", value), Entry(b"z", b"zz")])

    def damaged(mutate: object, name: str) -> Path:
        data = bytearray(good.data)
        mutate(data)  # type: ignore[operator]
        return write(tmp_path, bytes(data), name)

    central = good.cd_start

    def header_past_data(d: bytearray) -> None:
        struct.pack_into("<I", d, central + 42, good.cd_start - 29)

    def bad_local(d: bytearray) -> None:
        struct.pack_into("<I", d, 0, 0x12345678)

    def two_sizes(d: bytearray) -> None:
        struct.pack_into("<I", d, central + 20, 9)

    def overrun(d: bytearray) -> None:
        struct.pack_into("<II", d, central + 20, 60, 60)

    cases = [
        (header_past_data, f"local header at {good.cd_start - 29} lies past the member data"),
        (bad_local, "bad local header at 0"),
        (two_sizes, "stored member at 0 declares two sizes"),
        (overrun, "member at 0 overruns the data"),
    ]
    for mutate, message in cases:
        path = damaged(mutate, message[:12].replace(" ", "_") + ".zip")
        with ZipStore(path) as store:
            for call in (lambda s=store: s.get("k"), lambda s=store: s.get_range("k", 1, 2),
                         lambda s=store: s.map_value("k"),
                         lambda s=store: s.get_into("k", memoryview(bytearray(
                             s._index["k"].file_size)))):
                with pytest.raises(CorruptZipError, match=f"^{path}: {message}$"):
                    call()
            assert store.get("z") == b"zz"
    # The limit is the end of member data: a header just fitting is read.
    exact = craft([Entry(b"k", b"")])
    path = write(tmp_path, exact.data, "exact.zip")
    with ZipStore(path) as store:
        assert store.get("k") == b""
        assert store.get_range("k", 0) == b""


def test_header_offset_at_the_edge_of_the_data(tmp_path: Path) -> None:
    # A member whose header plus data end exactly where the directory begins.
    crafted = craft([Entry(b"a", b"x" * 5), Entry(b"b", b"y" * 7)])
    path = write(tmp_path, crafted.data)
    with ZipStore(path) as store:
        assert store.get("b") == b"y" * 7
        assert bytes(store.map_value("b") or b"") == b"y" * 7


def test_encrypted_members_are_refused(tmp_path: Path) -> None:
    crafted = craft([Entry(b"k", b"secret", flags=0x1), Entry(b"p", b"plain", flags=0x8)])
    path = write(tmp_path, crafted.data)
    with ZipStore(path) as store:
        message = f"^{path}: member 'k' is encrypted$"
        for call in (lambda: store.get("k"), lambda: store.get_range("k", 0, 2),
                     lambda: store.get_into("k", memoryview(bytearray(6))),
                     lambda: store.map_value("k")):
            with pytest.raises(UnsupportedOperationError, match=message):
                call()
        assert "k" in store
        assert store.get("p") == b"plain"


def test_crc_is_checked_on_every_full_read(tmp_path: Path) -> None:
    entries = [Entry(b"s", b"stored", crc=1), Entry(b"d", b"deflated" * 9, method=8, crc=2)]
    path = write(tmp_path, craft(entries).data)
    with ZipStore(path) as store:
        for key in ("s", "d"):
            message = f"^{path}: bad CRC-32 for member {key!r}$"
            with pytest.raises(CorruptZipError, match=message):
                store.get(key)
            size = store._index[key].file_size
            with pytest.raises(CorruptZipError, match=message):
                store.get_into(key, memoryview(bytearray(size)))
        # Ranges are not checked (only part of the value is read).
        assert store.get_range("s", 1, 3) == b"tor"
        assert store.get_range("d", 0, 8) == b"deflated"
    with ZipStore(path, verify_crc=False) as store:
        assert store.get("s") == b"stored"
        assert store.get("d") == b"deflated" * 9
        buffer = bytearray(6)
        assert store.get_into("s", memoryview(buffer)) and buffer == b"stored"


RANGES = [(0, None), (0, 0), (0, 1), (3, 4), (5, None), (-1, None), (-3, 2), (-100, 5),
          (-100, None), (10, 5), (9, 100), (100, 3), (10, None), (0, 10), (2, 0), (-10, 10),
          (-11, 1), (7, 3), (8, 1000)]


@pytest.mark.parametrize("method", [0, 8, 12, 14])
def test_get_range_slices_like_python(tmp_path: Path, method: int) -> None:
    value = b"0123456789"
    long = bytes(range(256)) * 300
    path = write(tmp_path, craft([Entry(b"k", value, method=method),
                                  Entry(b"long", long, method=method),
                                  Entry(b"empty", b"", method=method)]).data)
    with ZipStore(path) as store:
        for start, length in RANGES:
            for key, data in (("k", value), ("long", long), ("empty", b"")):
                begin = max(len(data) + start, 0) if start < 0 else start
                expected = data[begin:] if length is None else data[begin : begin + length]
                assert store.get_range(key, start, length) == expected, (key, start, length)
        assert store.get_range("missing", 0, 1) is None
        assert store.get_range("long", 70_000, 10) == long[70_000:70_010]
        assert store.get_range("long", -5) == long[-5:]


def test_deflated_range_reads_in_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import zarrkit.storage.zip as zip_mod

    value = os.urandom(3000) + bytes(5000)
    path = write(tmp_path, craft([Entry(b"k", value, method=8)]).data)
    monkeypatch.setattr(zip_mod, "READ_BLOCK", 64)
    with ZipStore(path) as store:
        for start, length in ((0, 1), (100, 2000), (2990, 20), (4000, 4000), (7999, 1),
                              (0, 8000)):
            assert store.get_range("k", start, length) == value[start : start + length]


def test_deflated_range_decompresses_no_more_than_asked(tmp_path: Path) -> None:
    import tracemalloc

    # 64 MiB of zeros deflate to about 64 KiB: one read block would inflate to all of it.
    zeros = bytes(64 << 20)
    path = write(tmp_path, craft([Entry(b"z", zeros, method=8, crc=0)]).data)
    del zeros
    with ZipStore(path) as store:
        tracemalloc.start()
        try:
            assert store.get_range("z", 10, 20) == bytes(20)
            assert store.get_range("z", 1 << 20, 5) == bytes(5)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 8 << 20


def test_deflated_range_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    value = os.urandom(4000)
    raw = compress(8, value)
    # A stream that ends early (truncated), and one that is garbage.
    truncated = Entry(b"t", value, method=8, raw=raw[:3000])
    garbage = Entry(b"g", value, method=8, raw=b"\xff" * 50)
    short = Entry(b"s", value, method=8, raw=compress(8, value[:100]))
    path = write(tmp_path, craft([truncated, garbage, short]).data)
    with ZipStore(path) as store:
        with pytest.raises(CorruptZipError, match=f"^{path}: member 't' is shorter than "
                                                  "declared$"):
            store.get_range("t", 3500, 100)
        with pytest.raises(CorruptZipError, match=f"^{path}: member 'g': Error -3 "):
            store.get_range("g", 0, 10)
        with pytest.raises(CorruptZipError, match=f"^{path}: member 's' is shorter than "
                                                  "declared$"):
            store.get_range("s", 150, 10)
        assert store.get_range("s", 50, 50) == value[50:100]
        with pytest.raises(CorruptZipError, match=f"^{path}: member 'g' cannot be "
                                                  "decompressed: Error -3 "):
            store.get("g")
        with pytest.raises(CorruptZipError, match=f"^{path}: member 's' has 100 bytes, the "
                                                  "directory says 4000$"):
            store.get("s")
        # An empty range reads nothing, so damage cannot show.
        assert store.get_range("g", 5, 0) == b""
        assert store.get_range("g", 4000, None) == b""
        assert store.get_range("g", 10**6, 3) == b""
        monkeypatch.setattr(config, "max_chunk_bytes", 1000)
        assert store.get_range("s", 0, 100) == value[:100]
        with pytest.raises(ResourceLimitError, match=f"^{path}: reading 1001 bytes of 't' "
                                                     "exceeds max_chunk_bytes$"):
            store.get_range("t", 1000, 1)
        assert store.get_range("t", 999, 1) == value[999:1000]


def test_get_into(tmp_path: Path) -> None:
    members = {"s": b"stored value", "d": b"deflated" * 30, "e": b""}
    path = write(tmp_path, craft([Entry(b"s", members["s"]),
                                  Entry(b"d", members["d"], method=8),
                                  Entry(b"e", b"")]).data)
    with ZipStore(path) as store:
        for key, value in members.items():
            buffer = bytearray(len(value))
            assert store.get_into(key, memoryview(buffer)) is True
            assert buffer == value
            for wrong in (len(value) + 1, len(value) + 8):
                with pytest.raises(ValueError, match=f"^size of {key!r} \\({len(value)}\\) "
                                                     f"differs from the expected {wrong}$"):
                    store.get_into(key, memoryview(bytearray(wrong)))
        assert store.get_into("missing", memoryview(bytearray(3))) is False
        # Any contiguous buffer of the right byte size.
        import numpy as np

        out = np.zeros(3, dtype="<u4")
        assert store.get_into("s", memoryview(out))
        assert out.tobytes() == members["s"]


def test_get_into_piecewise_and_short_reads(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import zarrkit.storage.zip as zip_mod

    value = os.urandom(1000)
    path = tmp_path / "g.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", value)
    calls: list[int] = []
    real = os.preadv

    def spy(fd: int, buffers: list[memoryview], offset: int) -> int:
        calls.append(len(buffers[0]))
        return real(fd, [buffers[0][:300]], offset)

    monkeypatch.setattr(os, "preadv", spy)
    with ZipStore(path) as store:
        buffer = bytearray(1000)
        assert store.get_into("k", memoryview(buffer)) and buffer == value
        assert calls == [1000, 700, 400, 100]
        calls.clear()
        monkeypatch.setattr(zip_mod, "MAX_IO", 256)
        buffer = bytearray(1000)
        assert store.get_into("k", memoryview(buffer)) and buffer == value
        assert calls == [256, 256, 256, 232]

        def one_byte(fd: int, buffers: list[memoryview], offset: int) -> int:
            return real(fd, [buffers[0][:1]], offset)

        monkeypatch.setattr(os, "preadv", one_byte)
        buffer = bytearray(1000)
        assert store.get_into("k", memoryview(buffer)) and buffer == value

        def ends(fd: int, buffers: list[memoryview], offset: int) -> int:
            return 0

        monkeypatch.setattr(os, "preadv", ends)
        with pytest.raises(CorruptZipError, match=f"^{path}: unexpected end of file in 'k'$"):
            store.get_into("k", memoryview(bytearray(1000)))
        monkeypatch.delattr(os, "preadv")
        buffer = bytearray(1000)
        assert store.get_into("k", memoryview(buffer)) and buffer == value


def test_map_value(tmp_path: Path) -> None:
    path = write(tmp_path, craft([Entry(b"s", b"stored"), Entry(b"d", b"dd" * 40, method=8),
                                  Entry(b"e", b"")]).data)
    with ZipStore(write(tmp_path, path.read_bytes(), "w.zip"), mode="a") as store:
        # A writable archive maps too; a member appended afterwards maps the grown file,
        # and the first view stays valid (member bytes never move or change).
        first = store.map_value("s")
        assert first is not None and first.readonly and bytes(first) == b"stored"
        store.set("late", b"L" * 5000)
        late = store.map_value("late")
        assert late is not None and bytes(late) == b"L" * 5000
        assert late.obj is not first.obj and len(late.obj) > len(first.obj)
        assert store.map_value("s").obj is late.obj  # the newest mapping serves all
        store.set("s", b"shadow")  # a new member shadows: the old view keeps its bytes
        assert bytes(first) == b"stored" and bytes(store.map_value("s") or b"") == b"shadow"
        del first, late
    with ZipStore(path) as store:
        view = store.map_value("s")
        assert view is not None and view.readonly and bytes(view) == b"stored"
        again = store.map_value("s")
        assert again is not None and again.obj is view.obj  # one mapping
        empty = store.map_value("e")
        assert empty is not None and bytes(empty) == b""
        assert store.map_value("missing") is None
        with pytest.raises(ValueError, match=f"^member 'd' of {path} is compressed \\(method "
                                             "8\\) and cannot be mapped; use get\\(\\)$"):
            store.map_value("d")
    assert bytes(view) == b"stored"  # outlives the store
    del view, again
    with ZipStore(path) as store:
        assert bytes(store.map_value("s") or b"") == b"stored"
    # Closing with no view handed out closes the mapping.
    store = ZipStore(path)
    mapped = store.map_value("s")
    del mapped
    store.close()
    assert store._mmap is None


def test_contains_only_string_keys(tmp_path: Path) -> None:
    with ZipStore(tmp_path / "c.zip", mode="w") as store:
        store.set("k", b"v")
        assert "k" in store
        assert "j" not in store
        assert b"k" not in store
        assert 1 not in store


def test_set_takes_any_buffer(tmp_path: Path) -> None:
    import numpy as np

    path = tmp_path / "b.zip"
    array = np.arange(12, dtype="<i4").reshape(3, 4)
    values = {"strided": memoryview(array[:, ::2]), "ints": memoryview(array),
              "fortran": memoryview(np.asfortranarray(array)), "view": memoryview(b"abcdef")[1:4],
              "bytearray": bytearray(b"ba")}
    with ZipStore(path, mode="w") as store:
        for key, value in values.items():
            store.set(key, value)
        assert store.get("strided") == array[:, ::2].tobytes()
    expected = {"strided": array[:, ::2].tobytes(), "ints": array.tobytes(),
                "fortran": array.tobytes(), "view": b"bcd", "bytearray": b"ba"}
    assert zipfile_contents(path.read_bytes()) == expected
    assert store_contents(path) == expected


def test_large_values_are_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "l.zip"
    members = {f"v{n}": os.urandom(n) for n in (zf_mod.SMALL_VALUE - 1, zf_mod.SMALL_VALUE,
                                                 zf_mod.SMALL_VALUE + 1, 200_000)}
    with ZipStore(path, mode="w") as store:
        for key, value in members.items():
            store.set(key, value)
    assert zipfile_contents(path.read_bytes()) == members
    assert store_contents(path) == members


def test_set_if_not_exists(tmp_path: Path) -> None:
    path = tmp_path / "s.zip"
    with ZipStore(path, mode="w") as store:
        assert store.set_if_not_exists("k", b"first") is True
        assert store.set_if_not_exists("k", b"second") is False
        assert store.get("k") == b"first"
        assert store.set_if_not_exists("ü", memoryview(b"x")) is True
    assert zipfile_contents(path.read_bytes()) == {"k": b"first", "ü": b"x"}
    with ZipStore(path) as store, pytest.raises(ReadOnlyError):
        store.set_if_not_exists("n", b"v")


def test_set_if_not_exists_checks_again_under_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "s.zip"
    with ZipStore(path, mode="w") as store:
        real = store._prepare

        def racing(key: str, value: object) -> object:
            # Another handle sets the key between the first check and the lock.
            with ZipStore(path, mode="a") as other:
                other.set(key, b"other")
            return real(key, value)  # type: ignore[arg-type]

        store._prepare = racing  # type: ignore[method-assign]
        assert store.set_if_not_exists("k", b"mine") is False
        assert store.get("k") == b"other"
    assert zipfile_contents(path.read_bytes()) == {"k": b"other"}


def test_members_written_past_the_zip64_limits(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zf_mod, "ZIP64_LIMIT", 200)
    path = tmp_path / "z.zip"
    prefix = b"P" * 64
    path.write_bytes(prefix + zipfile_bytes({"old": b"o"}))
    members = {"old": b"o", "small": b"s" * 50, "exact": b"e" * 200, "tiny": b"t",
               "big": os.urandom(300)}
    with ZipStore(path, mode="a") as store:
        for key in ("small", "exact", "tiny", "big"):
            store.set(key, members[key])
        assert store.get("exact") == members["exact"]
    monkeypatch.undo()
    blob = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        assert {n: z.read(n) for n in z.namelist()} == members
        for info in z.infolist():
            if info.filename == "old":
                continue
            local = struct.unpack_from("<IHHHHHIIIHH", blob, info.header_offset)
            big = info.file_size >= 200
            relative = info.header_offset - len(prefix)
            assert local[1] == (45 if big or relative >= 200 else 20), info.filename
            assert local[3] == 0  # stored
            assert local[7:9] == ((0xFFFFFFFF,) * 2 if big else (info.file_size,) * 2)
            extra = blob[info.header_offset + 30 + local[9]:][: local[10]]
            if big:
                assert extra[:20] == struct.pack("<HHQQ", 1, 16, info.file_size,
                                                 info.file_size)
            data = info.header_offset + 30 + local[9] + local[10]
            assert data % 8 == 0
            assert info.extract_version == (45 if big or relative >= 200 else 20)
    assert store_contents(path) == members


def test_local_version_from_the_offset_limit_on(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "v.zip"
    with ZipStore(path, mode="w") as store:
        store.set("a", b"1" * 10)
        limit = store._archive.write_pos  # where "b" goes
        monkeypatch.setattr(zf_mod, "ZIP64_LIMIT", limit)
        store.set("b", b"2" * 10)
        monkeypatch.undo()
    blob = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        infos = {i.filename: i for i in z.infolist()}
        assert infos["b"].header_offset == limit
        assert struct.unpack_from("<H", blob, infos["a"].header_offset + 4)[0] == 20
        assert struct.unpack_from("<H", blob, limit + 4)[0] == 45
        assert infos["b"].extract_version == 45
        assert infos["b"].extra == struct.pack("<HHQ", 1, 8, limit)
        assert z.read("b") == b"2" * 10


def test_delete(tmp_path: Path) -> None:
    path = tmp_path / "d.zip"
    with ZipStore(path, mode="w") as store:
        store.set("a/k", b"v")
        store.set("b", b"v")
        with pytest.raises(UnsupportedOperationError,
                           match=f"^cannot delete 'a/k': ZipStore\\({str(path)!r}, "
                                 "mode='w'\\) is append-only and does not support delete$"):
            store.delete("a/k")
        with pytest.raises(UnsupportedOperationError,
                           match=f"^cannot delete prefix 'a/' \\(holding 'a/k'\\): "
                                 f"ZipStore\\({str(path)!r}, mode='w'\\) is append-only$"):
            store.delete_prefix("a/")
        store.delete("a")
        store.delete_prefix("c/")
        store.delete_prefix("a/k/")
        assert sorted(store.list()) == ["a/k", "b"]
    assert ZipStore.supports_deletes is False
    with ZipStore(path) as store:
        with pytest.raises(ReadOnlyError) as caught:
            store.delete_prefix("zzz/")
        assert str(caught.value) == f"cannot write 'zzz/': {store!r} is read-only"


def test_listing_is_sorted_and_follows_writes(tmp_path: Path) -> None:
    path = tmp_path / "l.zip"
    with ZipStore(path, mode="w") as store:
        for key in ("b/2", "a", "b/1", "c/x/y", "b/10", "ba"):
            store.set(key, b"")
        assert list(store.list_prefix("b/")) == ["b/1", "b/10", "b/2"]
        assert list(store.list_prefix("")) == ["a", "b/1", "b/10", "b/2", "ba", "c/x/y"]
        assert list(store.list_prefix("b")) == ["b/1", "b/10", "b/2", "ba"]
        assert list(store.list_prefix("z")) == []
        store.set("b/0", b"")
        assert list(store.list_prefix("b/")) == ["b/0", "b/1", "b/10", "b/2"]
        store.set("b/0", b"again")  # not a new key
        assert list(store.list_prefix("b/")) == ["b/0", "b/1", "b/10", "b/2"]
        assert store.list_dir("b/") == (["0", "1", "10", "2"], [])
        assert store.list_dir("") == (["a", "ba"], ["b", "c"])
        assert sorted(store.list()) == ["a", "b/0", "b/1", "b/10", "b/2", "ba", "c/x/y"]
    with ZipStore(path, mode="a") as first, ZipStore(path, mode="a") as second:
        assert list(first.list_prefix("c")) == ["c/x/y"]
        second.set("c/new", b"")
        assert list(first.list_prefix("c")) == ["c/new", "c/x/y"]


def test_handles_share_one_archive(tmp_path: Path) -> None:
    path = tmp_path / "h.zip"
    first = ZipStore(path, mode="w")
    first.set("a", b"1")
    second = ZipStore(path, mode="a")
    assert second.get("a") == b"1"
    second.set("b", b"2")
    assert first.get("b") == b"2"
    with pytest.raises(StoreLockedError) as caught:
        ZipStore(path, mode="w")
    assert str(caught.value) == (
        f"{path} is open for writing in this process; mode 'w' would empty it under the "
        "other handles (open it with mode 'a' to share it)")
    first.close()
    # The file stays open for the other handle; its close writes everything.
    second.set("c", b"3")
    assert zipfile_contents(path.read_bytes()) == {"a": b"1", "b": b"2"}
    second.close()
    assert zipfile_contents(path.read_bytes()) == {"a": b"1", "b": b"2", "c": b"3"}
    with ZipStore(path, mode="w") as store:  # free again
        assert list(store.list()) == []


def test_the_os_lock_is_held_while_open_and_released_on_close(tmp_path: Path) -> None:
    import fcntl

    path = tmp_path / "l.zip"

    def lockable() -> bool:
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        finally:
            os.close(fd)
        return True

    first = ZipStore(path, mode="w")
    assert not lockable()
    second = ZipStore(path, mode="a")
    first.close()
    assert not lockable()
    second.close()
    assert lockable()
    reader = ZipStore(path)
    assert lockable()  # readers take no lock
    reader.close()


def test_lock_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import fcntl

    path = tmp_path / "e.zip"
    real = fcntl.flock

    def held(fd: int, operation: int) -> None:
        raise BlockingIOError(errno.EWOULDBLOCK, "held")

    monkeypatch.setattr(fcntl, "flock", held)
    with pytest.raises(StoreLockedError) as caught:
        ZipStore(path, mode="w")
    assert str(caught.value) == (
        f"{path} is open for writing in another process (it holds the archive's lock); "
        "close it there, or open this one with mode='r'")
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    for code in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
        def unsupported(fd: int, operation: int, code: int = code) -> None:
            if operation & fcntl.LOCK_EX:
                raise OSError(code, "no locks")
            real(fd, operation)

        monkeypatch.setattr(fcntl, "flock", unsupported)
        with ZipStore(path, mode="w") as store:  # writes unguarded
            store.set("k", b"v")
            assert store._archive.locked is False
        assert zipfile_contents(path.read_bytes()) == {"k": b"v"}

    def failing(fd: int, operation: int) -> None:
        raise OSError(errno.EIO, "io error")

    monkeypatch.setattr(fcntl, "flock", failing)
    with pytest.raises(OSError) as caught_io:
        ZipStore(path, mode="a")
    assert caught_io.value.errno == errno.EIO
    monkeypatch.setattr(fcntl, "flock", real)
    with ZipStore(path, mode="a") as store:
        assert store._archive.locked is True
        assert store.get("k") == b"v"


def test_without_os_locks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import zarrkit.storage.zip as zip_mod

    # A platform without fcntl: writes go unguarded, and nothing is unlocked on close.
    monkeypatch.setattr(zip_mod, "fcntl", None)
    path = tmp_path / "n.zip"
    with ZipStore(path, mode="w") as store:
        assert store._archive.locked is False
        store.set("k", b"v")
    assert zipfile_contents(path.read_bytes()) == {"k": b"v"}


def test_the_last_close_forgets_the_shared_state(tmp_path: Path) -> None:
    import zarrkit.storage.zip as zip_mod

    path = tmp_path / "f.zip"
    first = ZipStore(path, mode="w")
    second = ZipStore(path, mode="a")
    identity = first._archive.identity
    assert zip_mod._registry[identity] is first._archive is second._archive
    first.close()
    assert zip_mod._registry[identity] is second._archive
    second.close()
    assert identity not in zip_mod._registry
    reader = ZipStore(path)
    assert identity not in zip_mod._registry  # readers are never shared
    reader.close()


def test_unclosed_writer_warns_when_collected(tmp_path: Path) -> None:
    import gc

    path = tmp_path / "u.zip"
    store = ZipStore(path, mode="w")
    store.set("k", b"v")
    with pytest.warns(ResourceWarning, match=f"^ZipStore\\({str(path)!r}, mode='w'\\) was "
                                             "not closed; the archive has no central "
                                             "directory$"):
        del store
        gc.collect()
    # The file was released: a new writer may open it (and recovers the member).
    with ZipStore(path, mode="a") as again:
        assert again.recovered and again.get("k") == b"v"
    # A clean handle, a reader, or one of several handles: no warning.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clean = ZipStore(path, mode="a")
        del clean
        gc.collect()
        reader = ZipStore(path)
        del reader
        gc.collect()
        first = ZipStore(path, mode="a")
        second = ZipStore(path, mode="a")
        first.set("x", b"1")
        del second
        gc.collect()
        first.close()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []
    assert zipfile_contents(path.read_bytes())["x"] == b"1"


def test_a_store_that_failed_to_open_is_collected_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc
    import sys

    unraisable: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    with pytest.raises(ValueError):
        ZipStore(tmp_path / "x.zip", mode="bad")
    with pytest.raises(FileNotFoundError):
        ZipStore(tmp_path / "missing.zip")
    gc.collect()
    assert unraisable == []


def test_a_failed_open_leaks_no_descriptor(tmp_path: Path) -> None:
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc")
    path = write(tmp_path, b"not a zip" * 20)
    before = len(list(fds.iterdir()))
    for mode in ("r", "a"):
        with pytest.raises(CorruptZipError) as caught:
            ZipStore(path, mode=mode)
        assert str(caught.value).startswith(f"{path} is not a ZIP archive")
    assert len(list(fds.iterdir())) == before
    with ZipStore(path, mode="w"):
        pass
    assert len(list(fds.iterdir())) == before


# --- central directories written -----------------------------------------------------------------


def parse_end(blob: bytes) -> dict[str, object]:
    """The end records of ``blob`` per APPNOTE 4.3.14-4.3.16."""
    eocd = blob.rindex(struct.pack("<I", SIG_EOCD))
    fields = struct.unpack_from("<IHHHHIIH", blob, eocd)
    out: dict[str, object] = {"eocd": fields, "comment": blob[eocd + 22:]}
    if eocd >= 20 and blob[eocd - 20 : eocd - 16] == struct.pack("<I", SIG_LOCATOR):
        locator = struct.unpack_from("<IIQI", blob, eocd - 20)
        out["locator"] = locator
        out["eocd64"] = struct.unpack_from("<IQHHIIQQQQ", blob, eocd - 20 - 56)
        out["eocd64_at"] = eocd - 20 - 56
    return out


def test_plain_end_record_fields(tmp_path: Path) -> None:
    path = tmp_path / "e.zip"
    with ZipStore(path, mode="w") as store:
        store.set("a", b"1")
        store.set("b", b"22")
    blob = path.read_bytes()
    end = parse_end(blob)
    assert "locator" not in end
    cd_start = blob.index(struct.pack("<I", SIG_CENTRAL))
    cd_size = len(blob) - 22 - cd_start
    assert end["eocd"] == (SIG_EOCD, 0, 0, 2, 2, cd_size, cd_start, 0)
    assert end["comment"] == b""


@pytest.mark.parametrize("trigger", ["count", "offset", "size"])
@pytest.mark.parametrize("reached", [True, False])
def test_zip64_end_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           trigger: str, reached: bool) -> None:
    prefix = b"S" * 24
    path = write(tmp_path, prefix + zipfile_bytes({"old": b"o"}, comment=b"note"))
    members = {"old": b"o"}
    with ZipStore(path, mode="a") as store:
        for i in range(10):
            members[f"k{i}"] = bytes([i]) * (100 if trigger == "offset" else 0)
            store.set(f"k{i}", members[f"k{i}"])
        # The directory goes where the next member would.
        archive = store._archive
        archive_start = archive.write_pos - len(prefix)
        central_len = len(b"".join([archive.old_central, *archive.new_central]))
        if trigger == "count":
            name, value = "ZIP64_COUNT_LIMIT", 11
        elif trigger == "offset":
            assert central_len < archive_start
            name, value = "ZIP64_LIMIT", archive_start
        else:
            assert archive_start < central_len
            name, value = "ZIP64_LIMIT", central_len
        monkeypatch.setattr(zf_mod, name, value if reached else value + 1)
    monkeypatch.undo()
    blob = path.read_bytes()
    end = parse_end(blob)
    assert end["eocd"] == (SIG_EOCD, 0, 0, 11, 11, central_len, archive_start, 4)
    assert end["comment"] == b"note"
    if reached:
        assert end["eocd64"] == (SIG_EOCD64, 44, 0x0300 | 45, 45, 0, 0, 11, 11, central_len,
                                 archive_start)
        assert end["locator"] == (SIG_LOCATOR, 0, archive_start + central_len, 1)
    else:
        assert "locator" not in end
    assert zipfile_contents(blob) == members
    assert store_contents(path) == members


def test_end_record_saturates_what_does_not_fit(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import zarrkit.storage.zip as zip_mod

    # The 16- and 32-bit fields of the plain end record hold min(value, their maximum).
    path = tmp_path / "s.zip"
    monkeypatch.setattr(zf_mod, "ZIP64_COUNT_LIMIT", 2)
    monkeypatch.setattr(zip_mod, "SATURATED", 30)
    with ZipStore(path, mode="w") as store:
        for i in range(3):
            store.set(f"k{i}", b"v")
    monkeypatch.undo()
    end = parse_end(path.read_bytes())
    eocd = end["eocd"]
    assert isinstance(eocd, tuple)
    assert eocd[3:5] == (3, 3)
    assert eocd[5] == 30 and eocd[6] == 30


def test_comment_is_kept_unless_it_holds_a_signature(tmp_path: Path) -> None:
    for signature in (SIG_EOCD, SIG_EOCD64, SIG_LOCATOR):
        comment = b"ab" + struct.pack("<I", signature) + b"cd"
        data = bytearray(zipfile_bytes({"k": b"v"}))
        struct.pack_into("<H", data, len(data) - 2, len(comment))
        path = write(tmp_path, bytes(data) + comment, f"{signature:x}.zip")
        with ZipStore(path, mode="a") as store:
            store.set("n", b"new")
        assert parse_end(path.read_bytes())["comment"] == b""
        assert store_contents(path) == {"k": b"v", "n": b"new"}
    for comment in (b"PK\x03\x04 local is fine", b"PK\x01\x02", b"plain"):
        path = write(tmp_path, zipfile_bytes({"k": b"v"}, comment=comment), "ok.zip")
        with ZipStore(path, mode="a") as store:
            store.set("n", b"new")
        assert parse_end(path.read_bytes())["comment"] == comment
        with zipfile.ZipFile(path) as z:
            assert z.comment == comment


def test_every_close_writes_a_complete_directory(tmp_path: Path) -> None:
    path = tmp_path / "c.zip"
    with ZipStore(path, mode="w") as first:
        first.set("a", b"1")
        second = ZipStore(path, mode="a")
        second.set("b", b"2")
        second.close()
        assert zipfile_contents(path.read_bytes()) == {"a": b"1", "b": b"2"}
        size = path.stat().st_size
        first.set("c", b"3")
        # The new member goes after the directory, which stays intact.
        assert zipfile_contents(path.read_bytes()[:size]) == {"a": b"1", "b": b"2"}
    assert zipfile_contents(path.read_bytes()) == {"a": b"1", "b": b"2", "c": b"3"}
    with zipfile.ZipFile(path) as z:
        assert [i.filename for i in z.infolist()] == ["a", "b", "c"]


def test_a_close_without_changes_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "n.zip"
    first = ZipStore(path, mode="w")
    second = ZipStore(path, mode="a")
    second.set("k", b"v")
    second.close()
    written = path.read_bytes()
    assert zipfile_contents(written) == {"k": b"v"}
    first.close()  # nothing changed since the last directory
    assert path.read_bytes() == written


def test_fsync_follows_the_configuration(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fsync

    def spy(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    monkeypatch.setattr(config, "fsync", False)
    with ZipStore(tmp_path / "a.zip", mode="w") as store:
        store.set("k", b"v")
    assert synced == []
    monkeypatch.setattr(config, "fsync", True)
    with ZipStore(tmp_path / "b.zip", mode="w") as store:
        store.set("k", b"v")
        fd = store._fd
    assert synced == [fd]


def test_appending_after_a_recovered_open_with_comment(tmp_path: Path) -> None:
    path = tmp_path / "r.zip"
    path.write_bytes(zipfile_bytes({"a": b"1"}, comment=b"cmt"))
    with ZipStore(path, mode="a") as store:
        store.set("b", b"2")
        torn = path.read_bytes()
    path = write(tmp_path, torn, "t.zip")
    with ZipStore(path, mode="a") as store:
        assert store.recovered
        store.set("c", b"3")
    assert zipfile_contents(path.read_bytes()) == {"a": b"1", "b": b"2", "c": b"3"}
    with zipfile.ZipFile(path) as z:
        assert z.comment == b"cmt"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_closing_an_inherited_store_keeps_the_parents_lock(
    tmp_path: Path,
) -> None:
    import fcntl

    path = write(tmp_path, zipfile_bytes({"k": b"v"}))
    store = ZipStore(path, mode="a")  # nothing written: its close writes nothing
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            store.close()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
    store.set("n", b"new")
    store.close()
    assert zipfile_contents(path.read_bytes()) == {"k": b"v", "n": b"new"}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_close_unlocks_even_while_a_child_holds_a_copy_of_the_descriptor(
    tmp_path: Path,
) -> None:
    import fcntl

    path = tmp_path / "c.zip"
    store = ZipStore(path, mode="w")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child keeps its copy of the archive's descriptor until told
        try:
            os.close(write_end)
            os.read(read_end, 1)
        finally:
            os._exit(0)
    os.close(read_end)
    try:
        store.close()
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: close unlocked it
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    finally:
        os.write(write_end, b"x")
        os.close(write_end)
        os.waitpid(pid, 0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_opens_archives_with_its_own_state(tmp_path: Path) -> None:
    path = tmp_path / "parent.zip"
    other = tmp_path / "child.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", b"parent")
        pid = os.fork()
        if pid == 0:  # the child: report through the exit code only
            code = 1
            try:
                try:
                    ZipStore(path, mode="a")  # the parent's state is not shared, its lock is
                except StoreLockedError:
                    with ZipStore(other, mode="w") as mine:
                        mine.set("c", b"child")
                    code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        store.set("k2", b"still mine")
    assert zipfile_contents(other.read_bytes()) == {"c": b"child"}
    assert zipfile_contents(path.read_bytes()) == {"k": b"parent", "k2": b"still mine"}


# --- survivors of the second mutation run ------------------------------------------------------


@contextlib.contextmanager
def descriptor_zero_free() -> Iterator[None]:
    """Close descriptor 0 for the duration, so that the next file opened gets it (a process
    started with its stdin closed); put the original back afterwards."""
    try:
        saved: int | None = os.dup(0)
    except OSError:  # already closed
        saved = None
    else:
        os.close(0)
    try:
        yield
    finally:
        if saved is None:
            with contextlib.suppress(OSError):
                os.close(0)
        else:
            os.dup2(saved, 0)
            os.close(saved)


def descriptor_zero_is(path: Path) -> bool:
    try:
        return os.fstat(0).st_ino == path.stat().st_ino
    except OSError:  # closed
        return False


def test_an_archive_on_descriptor_zero(tmp_path: Path) -> None:
    # 0 is a valid descriptor: only negative ones mean "closed".
    path = tmp_path / "zero.zip"
    with descriptor_zero_free():
        store = ZipStore(path, mode="w")
        assert descriptor_zero_is(path)
        store.set("k", b"v")
        assert store.get("k") == b"v"
        store.close()  # writes the directory and closes descriptor 0
        assert not descriptor_zero_is(path)
        assert zipfile_contents(path.read_bytes()) == {"k": b"v"}

        reader = ZipStore(path)
        assert descriptor_zero_is(path)
        assert reader.get("k") == b"v"
        reader.close()
        assert not descriptor_zero_is(path)

        # An unclosed writer on descriptor 0 warns when collected and releases the file.
        store = ZipStore(path, mode="a")
        assert descriptor_zero_is(path)
        store.set("n", b"new")
        with pytest.warns(ResourceWarning, match="was not closed"):
            del store
            gc.collect()
        assert not descriptor_zero_is(path)
    with ZipStore(path, mode="a") as store:  # unlocked: the recovered member is there
        assert store.recovered and store.get("n") == b"new"


def test_readers_never_touch_the_os_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    # "Readers take no lock", and release none: where flock is emulated with per-process
    # POSIX locks (NFS), a reader's unlock would drop the lock of a writer in this process.
    path = write(tmp_path, zipfile_bytes({"k": b"v"}))
    calls: list[int] = []
    real = fcntl.flock

    def spy(fd: int, operation: int) -> None:
        calls.append(operation)
        real(fd, operation)

    monkeypatch.setattr(fcntl, "flock", spy)
    with ZipStore(path) as reader:
        assert reader.get("k") == b"v"
    reader = ZipStore(path)
    del reader
    gc.collect()
    assert calls == []
    with ZipStore(path, mode="a") as writer:
        assert writer.get("k") == b"v"
    assert calls == [fcntl.LOCK_EX | fcntl.LOCK_NB, fcntl.LOCK_UN]


def test_archives_are_opened_in_binary_mode(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import zarrkit.storage.zip as zip_mod

    # O_BINARY is 0 on POSIX; give it Windows' value (stripped before the real open) to
    # see that every open of the archive asks for it.
    binary = 0x8000
    monkeypatch.setattr(zip_mod, "O_BINARY", binary)
    real = os.open
    flags_seen: list[int] = []

    def spy(file: object, flags: int, *args: int, **kwargs: object) -> int:
        if Path(os.fsdecode(file)).parent == tmp_path:  # type: ignore[arg-type]
            flags_seen.append(flags)
            flags &= ~binary
        return real(file, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", spy)
    path = tmp_path / "b.zip"
    for mode in ("x", "w", "a", "r"):
        with ZipStore(path, mode=mode) as store:
            if not store.read_only:
                store.set(mode, mode.encode())
    monkeypatch.undo()
    assert len(flags_seen) == 4
    assert all(flags & binary for flags in flags_seen), flags_seen
    assert flags_seen[-1] & ~binary == os.O_RDONLY  # the reader: read-only, nothing else
    assert zipfile_contents(path.read_bytes()) == {"w": b"w", "a": b"a"}


def test_the_fork_handler_gives_the_child_a_fresh_registry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import threading

    import zarrkit.storage.zip as zip_mod

    # What os.register_at_fork runs in a child, run here on a stand-in registry (the
    # forked-child tests cover the real thing, in a process this one cannot observe).
    stale = object()
    registry: dict[object, object] = {("dev", "ino"): stale}
    old_lock = threading.RLock()
    old_lock.acquire()  # as if held by a parent thread that does not exist in the child
    monkeypatch.setattr(zip_mod, "_registry", registry)
    monkeypatch.setattr(zip_mod, "_registry_lock", old_lock)
    zip_mod._reset_after_fork()
    assert registry == {}
    assert zip_mod._registry_lock is not old_lock
    # Writers open and close under the new lock, although the old one is still held.
    path = tmp_path / "f.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", b"v")
        assert registry == {store._archive.identity: store._archive}
    assert registry == {}
    assert zipfile_contents(path.read_bytes()) == {"k": b"v"}


@pytest.mark.parametrize("verify_crc", [True, False])
def test_pickled_stores_reopen_the_file(tmp_path: Path, verify_crc: bool) -> None:
    import pickle

    path = write(tmp_path, craft([Entry(b"ok", b"fine"), Entry(b"bad", b"data", crc=1)]).data)
    with ZipStore(path, verify_crc=verify_crc) as reader:
        copy = pickle.loads(pickle.dumps(reader))
    try:
        assert type(copy) is ZipStore
        assert (copy.path, copy.mode, copy.read_only, copy.verify_crc) == (
            path, "r", True, verify_crc)
        assert copy.get("ok") == b"fine"
        if verify_crc:
            with pytest.raises(CorruptZipError, match="bad CRC-32 for member 'bad'"):
                copy.get("bad")
        else:
            assert copy.get("bad") == b"data"
        with pytest.raises(ReadOnlyError):
            copy.set("new", b"x")
    finally:
        copy.close()
    # A writer's copy appends (mode "a", sharing this process's state), never empties.
    with ZipStore(path, mode="a", verify_crc=verify_crc) as writer:
        writer.set("w", b"1")
        copy = pickle.loads(pickle.dumps(writer))
        try:
            assert (copy.mode, copy.read_only, copy.verify_crc) == ("a", False, verify_crc)
            assert copy.get("w") == b"1"
            copy.set("c", b"2")
            assert writer.get("c") == b"2"
            if verify_crc:
                with pytest.raises(CorruptZipError, match="bad CRC-32 for member 'bad'"):
                    copy.get("bad")
            else:
                assert copy.get("bad") == b"data"
        finally:
            copy.close()
    with ZipStore(path, verify_crc=False) as reader:
        assert {key: reader.get(key) for key in reader.list()} == {
            "ok": b"fine", "bad": b"data", "w": b"1", "c": b"2"}


def test_a_header_ending_exactly_at_the_directory(tmp_path: Path) -> None:
    # The local header (no name, no extra) of an empty member ends exactly where the
    # central directory starts: it lies within the member data, and its data are empty.
    local = struct.pack("<IHHHHHIIIHH", SIG_LOCAL, 20, 0, 0, 0, 0x21, 0, 0, 0, 0, 0)
    central = struct.pack("<IHHHHHHIIIHHHHHII", SIG_CENTRAL, 0x031E, 20, 0, 0, 0, 0x21, 0,
                          0, 0, 1, 0, 0, 0, 0, 0, 0) + b"k"
    end = struct.pack("<IHHHHIIH", SIG_EOCD, 0, 0, 1, 1, len(central), len(local), 0)
    path = write(tmp_path, local + central + end)
    with ZipStore(path) as store:
        assert store.get("k") == b""
        view = store.map_value("k")
        assert view is not None and bytes(view) == b""
        del view
    # One byte less of data before the directory, and the header overruns it.
    shifted = local[:-1] + central + struct.pack("<IHHHHIIH", SIG_EOCD, 0, 0, 1, 1,
                                                 len(central), len(local) - 1, 0)
    path = write(tmp_path, shifted, "s.zip")
    with ZipStore(path) as store, pytest.raises(
            CorruptZipError, match=f"^{path}: local header at 0 lies past the member data$"):
        store.get("k")


def test_a_deflated_range_ignores_damage_past_its_end(tmp_path: Path) -> None:
    # Two stored deflate blocks, then a damaged one: a range within the first two
    # decompresses up to its end, never into the damage. The first read block (64 KiB)
    # ends inside the second deflate block, so the range takes two reads.
    # The damage: a final fixed-Huffman block of the literals "A" and "B", then a match
    # with the invalid distance code 30 (zlib notices it only when it decodes that far).
    damage = bytes.fromhex("7374023e")
    assert zlib.decompressobj(-15).decompress(damage, 1) == b"A"
    with pytest.raises(zlib.error, match="invalid distance code"):
        zlib.decompressobj(-15).decompress(damage)
    first, second = os.urandom(40_000), os.urandom(40_000)
    raw = (b"\x00" + struct.pack("<HH", len(first), len(first) ^ 0xFFFF) + first
           + b"\x00" + struct.pack("<HH", len(second), len(second) ^ 0xFFFF) + second
           + damage)
    value = first + second
    assert len(raw) > zf_mod.READ_BLOCK > len(first)
    path = write(tmp_path, craft([Entry(b"k", value, method=8, raw=raw)]).data)
    with ZipStore(path) as store:
        assert store.get_range("k", 0) == value
        assert store.get_range("k", 70_000, 10_000) == value[70_000:]
        with pytest.raises(CorruptZipError, match=f"^{path}: member 'k' has 80001 bytes"):
            store.get("k")  # the whole value is checked: one byte too many


def test_values_from_small_value_on_are_written_without_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Below SMALL_VALUE a value goes out with its header in one write; from SMALL_VALUE on,
    # the header is written, then the caller's buffer itself (no copy of a large value).
    writes: list[object] = []
    real = os.pwrite

    def spy(fd: int, data: bytes, offset: int) -> int:
        writes.append(data)
        return real(fd, data, offset)

    small = os.urandom(zf_mod.SMALL_VALUE - 1)
    large = bytearray(os.urandom(zf_mod.SMALL_VALUE))
    path = tmp_path / "w.zip"
    with ZipStore(path, mode="w") as store:
        monkeypatch.setattr(os, "pwrite", spy)
        store.set("s", small)
        assert len(writes) == 1 and bytes(writes[0]).endswith(small)  # type: ignore[arg-type]
        writes.clear()
        store.set("l", large)
        assert len(writes) == 2
        header, data = writes
        assert isinstance(data, memoryview) and data.obj is large
        assert isinstance(header, bytes) and header[:4] == b"PK\x03\x04"
        assert (len(path.read_bytes()) - len(large)) % 8 == 0  # data after it, aligned
        monkeypatch.undo()
    assert zipfile_contents(path.read_bytes()) == {"s": small, "l": bytes(large)}


def test_a_writer_reads_its_members_where_it_wrote_them(tmp_path: Path) -> None:
    # A member appended by this handle is read at the data offset it was written at: its
    # local header is not read again (here it was overwritten behind the store's back).
    path = tmp_path / "h.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", b"value")
        store.set("j", b"other")
        with open(path, "r+b") as raw:
            raw.write(b"XXXX")  # the signature of the first local header
        assert store.get("k") == b"value"
        assert bytes(store.map_value("k") or b"") == b"value"
        assert store.get_range("k", 1, 3) == b"alu"
        assert store.get("j") == b"other"
    # Read from the file, the damaged header is noticed.
    with ZipStore(path) as store:
        assert store.get("j") == b"other"
        with pytest.raises(CorruptZipError, match=f"^{path}: bad local header at 0$"):
            store.get("k")


@UNDER_MUTMUT_FRAMES
def test_the_unclosed_warning_points_at_the_code_dropping_the_store(tmp_path: Path) -> None:
    store = ZipStore(tmp_path / "u.zip", mode="w")
    store.set("k", b"v")
    with pytest.warns(ResourceWarning, match="was not closed") as record:
        line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        del store
    assert len(record) == 1
    assert (record[0].filename, record[0].lineno) == (__file__, line)


def test_a_resurrected_store_is_closed(tmp_path: Path) -> None:
    # A store collected in a reference cycle whose other member brings it back to life
    # (PEP 442): its finaliser ran and released the file, and it behaves as closed.
    path = tmp_path / "r.zip"
    saved: list[ZipStore] = []

    class Owner:
        store: ZipStore

        def __del__(self) -> None:
            saved.append(self.store)

    store = ZipStore(path, mode="w")
    store.set("k", b"v")
    owner = Owner()
    owner.store = store
    store.owner = owner  # type: ignore[attr-defined]
    del store, owner
    with pytest.warns(ResourceWarning, match="was not closed"):
        gc.collect()
    (zombie,) = saved
    message = f"^I/O operation on closed ZipStore\\({str(path)!r}, mode='w'\\)$"
    with pytest.raises(ValueError, match=message):
        zombie.get("k")
    with pytest.raises(ValueError, match=message):
        zombie.set("j", b"w")
    zombie.close()  # nothing left to do
    del zombie.owner, zombie  # type: ignore[attr-defined]
    saved.clear()
    with ZipStore(path, mode="a") as store:  # released: the recovered member is there
        assert store.recovered and store.get("k") == b"v"


def test_a_name_ending_like_a_directory_only_if_it_ends_in_a_slash(tmp_path: Path) -> None:
    entries = [Entry(b"dir/", b""), Entry(b"aXX/XX", b"1"), Entry(b"x/y", b"2")]
    path = write(tmp_path, craft(entries).data)
    assert store_contents(path) == {"aXX/XX": b"1", "x/y": b"2"}
    assert zf_mod._key_of(b"a/b/", 0) is None and zf_mod._key_of(b"a/b", 0) == "a/b"


def test_a_file_shorter_than_its_size_names_the_file(tmp_path: Path) -> None:
    # The file shrank after its size was taken: a read past its new end is damage.
    path = write(tmp_path, b"0123456789", "short")
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = ArchiveReader(fd, path, 20)
        assert reader._read(2, 8) == b"23456789"
        with pytest.raises(CorruptZipError,
                           match=f"^{path}: unexpected end of file at offset 10$"):
            reader._read(5, 10)
    finally:
        os.close(fd)


@UNDER_MUTMUT_FRAMES
def test_the_count_warning_points_at_the_caller_of_read(tmp_path: Path) -> None:
    entries = [Entry(b"a", b"1"), Entry(b"b", b"2")]
    path = write(tmp_path, craft(entries, count=3).data)
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = ArchiveReader(fd, path, path.stat().st_size)
        with pytest.warns(UserWarning, match="holds 2 records, end record says 3") as record:
            line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
            layout = reader.read()
    finally:
        os.close(fd)
    assert sorted(layout.index) == ["a", "b"]
    assert len(record) == 1
    assert (record[0].filename, record[0].lineno) == (__file__, line)
