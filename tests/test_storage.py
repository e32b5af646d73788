"""Tests of the stores: the shared conformance suite plus store-specific behaviour."""

from __future__ import annotations

import json
import os
import struct
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit.storage.zip_format as zipmod
from zarrkit.errors import InvalidKeyError, ReadOnlyError
from zarrkit.storage import DirectoryStore, MemoryStore, Store
from zarrkit.storage.directory import TEMP_PREFIX
from zarrkit.storage.zip import BadZipFile, ZipStore
from zarrkit.testing import StoreTests

# --- conformance --------------------------------------------------------------------------


class TestMemoryStore(StoreTests):
    def make_store(self, tmp_path: Path) -> Store:
        return MemoryStore()

    def reopen_read_only(self, store: Store) -> Store:
        return MemoryStore({k: store.get(k) or b"" for k in store.list()}, read_only=True)


class TestDirectoryStore(StoreTests):
    def make_store(self, tmp_path: Path) -> Store:
        return DirectoryStore(tmp_path / "store")

    def reopen_read_only(self, store: Store) -> Store:
        assert isinstance(store, DirectoryStore)
        return DirectoryStore(store.root, read_only=True)


class TestZipStore(StoreTests):
    supports_delete = False

    def make_store(self, tmp_path: Path) -> Store:
        return ZipStore(tmp_path / "store.zip", mode="w")

    def reopen_read_only(self, store: Store) -> Store:
        assert isinstance(store, ZipStore)
        store.close()
        return ZipStore(store.path, mode="r")


# --- helpers ------------------------------------------------------------------------------


def data_offsets(path: Path) -> dict[str, int]:
    """Data offset of every member, computed from its local header (last name wins)."""
    offsets = {}
    with zipfile.ZipFile(path) as zf, open(path, "rb") as f:
        for info in zf.infolist():
            f.seek(info.header_offset)
            header = f.read(30)
            assert header[:4] == b"PK\x03\x04"
            name_len, extra_len = struct.unpack("<HH", header[26:30])
            offsets[info.filename] = info.header_offset + 30 + name_len + extra_len
    return offsets


def write_zipfile(path: Path, members: dict[str, bytes], method: int) -> None:
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)


MEMBERS = {
    ".zgroup": b'{"zarr_format": 2}',
    "a/.zarray": b"{}",
    "a/0.0": bytes(range(256)) * 40,
    "a/0.1": b"\x00" * 5000,
    "b/c/d": b"deep",
    "empty": b"",
}


@pytest.fixture
def zpath(tmp_path: Path) -> Path:
    return tmp_path / "test.zip"


# --- DirectoryStore -----------------------------------------------------------------------


def temp_files(root: Path) -> list[str]:
    return [
        os.path.join(d, name)
        for d, dirs, files in os.walk(root)
        for name in files + dirs
        if name.startswith(TEMP_PREFIX)
    ]


class TestDirectorySpecific:
    def test_no_temp_files_after_writes(self, tmp_path: Path) -> None:
        store = DirectoryStore(tmp_path)
        for i in range(20):
            store.set(f"a/b/{i}", b"x" * i)
            store.set("a/b/0", b"overwrite")
        assert temp_files(tmp_path) == []

    def test_failed_replace_keeps_old_value(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        store = DirectoryStore(tmp_path)
        store.set("g/k", b"old")

        def fail(src: object, dst: object) -> None:
            raise OSError("simulated crash before the rename")

        monkeypatch.setattr(os, "replace", fail)
        with pytest.raises(OSError, match="simulated"):
            store.set("g/k", b"new")
        with pytest.raises(OSError, match="simulated"):
            store.set("g/fresh", b"new")
        monkeypatch.undo()
        assert store.get("g/k") == b"old"
        assert store.get("g/fresh") is None
        assert temp_files(tmp_path) == []
        assert sorted(store.list()) == ["g/k"]

    def test_interrupted_write_leaves_no_temp(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        store = DirectoryStore(tmp_path)
        store.set("k", b"old")

        def interrupt(src: object, dst: object) -> None:
            raise KeyboardInterrupt

        monkeypatch.setattr(os, "replace", interrupt)
        with pytest.raises(KeyboardInterrupt):
            store.set("k", b"new")
        monkeypatch.undo()
        assert store.get("k") == b"old"
        assert temp_files(tmp_path) == []

    def test_temp_files_never_listed(self, tmp_path: Path) -> None:
        store = DirectoryStore(tmp_path)
        store.set("a/b", b"1")
        (tmp_path / f"{TEMP_PREFIX}b.123").write_bytes(b"partial")
        (tmp_path / "a" / f"{TEMP_PREFIX}c.456").write_bytes(b"partial")
        assert list(store.list()) == ["a/b"]
        assert list(store.list_prefix("a/")) == ["a/b"]
        assert store.list_dir("") == ([], ["a"])
        assert store.list_dir("a/") == (["b"], [])

    def test_nested_keys_make_nested_directories(self, tmp_path: Path) -> None:
        store = DirectoryStore(tmp_path)
        store.set("g/arr/c/0/1", b"chunk")
        assert (tmp_path / "g" / "arr" / "c" / "0" / "1").read_bytes() == b"chunk"
        assert (tmp_path / "g" / "arr" / "c" / "0").is_dir()

    def test_list_dir_reads_the_filesystem(self, tmp_path: Path) -> None:
        (tmp_path / "g" / "sub").mkdir(parents=True)
        (tmp_path / "g" / ".zgroup").write_bytes(b"{}")
        (tmp_path / "g" / "sub" / "0").write_bytes(b"0")
        (tmp_path / "top").write_bytes(b"t")
        store = DirectoryStore(tmp_path, read_only=True)
        assert store.list_dir("") == (["top"], ["g"])
        assert store.list_dir("g/") == ([".zgroup"], ["sub"])
        assert sorted(store.list()) == ["g/.zgroup", "g/sub/0", "top"]
        assert store.get("g/sub/0") == b"0"

    def test_key_under_a_file_is_missing(self, tmp_path: Path) -> None:
        store = DirectoryStore(tmp_path)
        store.set("f", b"file")
        assert store.get("f/child") is None
        assert store.get_range("f/child", 0) is None
        assert store.list_dir("f/") == ([], [])

    def test_delete_prunes_empty_directories(self, tmp_path: Path) -> None:
        store = DirectoryStore(tmp_path / "root")
        store.set("a/b/c", b"1")
        store.delete("a/b/c")
        assert not (tmp_path / "root" / "a").exists()
        assert (tmp_path / "root").is_dir()

    def test_missing_root_is_empty(self, tmp_path: Path) -> None:
        store = DirectoryStore(tmp_path / "nope", read_only=True)
        assert list(store.list()) == []
        assert store.list_dir("") == ([], [])
        assert store.get("k") is None


# --- ZipStore: format -----------------------------------------------------------------------


class TestZipFormat:
    def test_archive_is_valid_for_zipfile(self, zpath: Path) -> None:
        with ZipStore(zpath, mode="w") as store:
            store.set_many(MEMBERS)
        with zipfile.ZipFile(zpath) as zf:
            assert zf.testzip() is None
            assert sorted(zf.namelist()) == sorted(MEMBERS)
            for name, data in MEMBERS.items():
                assert zf.read(name) == data
                assert zf.getinfo(name).compress_type == zipfile.ZIP_STORED

    def test_stored_data_are_8_byte_aligned(self, zpath: Path) -> None:
        names = {"k" * n: os.urandom(n * 7 % 23) for n in range(1, 40)}
        with ZipStore(zpath, mode="w") as store:
            store.set_many(names)
        offsets = data_offsets(zpath)
        assert len(offsets) == len(names)
        assert all(offset % 8 == 0 for offset in offsets.values())
        with open(zpath, "rb") as f:
            blob = f.read()
        for name, data in names.items():
            assert blob[offsets[name] : offsets[name] + len(data)] == data

    def test_empty_archive(self, zpath: Path) -> None:
        ZipStore(zpath, mode="w").close()
        with zipfile.ZipFile(zpath) as zf:
            assert zf.namelist() == []
        with ZipStore(zpath) as store:
            assert list(store.list()) == []

    def test_unicode_names_are_flagged_utf8(self, zpath: Path) -> None:
        with ZipStore(zpath, mode="w") as store:
            store.set("grüße", b"1")
        with zipfile.ZipFile(zpath) as zf:
            assert zf.read("grüße") == b"1"

    def test_zip64_by_entry_count(self, zpath: Path) -> None:
        count = 65_600
        with ZipStore(zpath, mode="w") as store:
            store.set_many((f"c/{i}", b"%d" % i) for i in range(count))
        tail = zpath.read_bytes()[-200:]
        assert b"PK\x06\x06" in tail and b"PK\x06\x07" in tail
        with zipfile.ZipFile(zpath) as zf:
            assert len(zf.infolist()) == count
            assert zf.read("c/65599") == b"65599"
        with ZipStore(zpath) as store:
            assert len(list(store.list())) == count
            assert store.get("c/65599") == b"65599"
            assert store.list_dir("")[1] == ["c"]

    def test_zip64_by_size_and_offset(self, zpath: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        # Lowered limits give every member ZIP64 sizes and offsets without writing 4 GiB.
        monkeypatch.setattr(zipmod, "ZIP64_LIMIT", 1000)
        monkeypatch.setattr(zipmod, "ZIP64_COUNT_LIMIT", 3)
        members = {f"m{i}": os.urandom(600 * i) for i in range(6)}
        with ZipStore(zpath, mode="w") as store:
            store.set_many(members)
        monkeypatch.undo()
        with zipfile.ZipFile(zpath) as zf:
            assert zf.testzip() is None
            for info in zf.infolist():
                assert info.extract_version == (45 if info.file_size >= 1000 or
                                                info.header_offset >= 1000 else 20)
            assert {n: zf.read(n) for n in zf.namelist()} == members
        assert all(offset % 8 == 0 for offset in data_offsets(zpath).values())
        with ZipStore(zpath) as store:
            assert {k: store.get(k) for k in store.list()} == members

    def test_reads_zipfile_zip64(self, zpath: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 1000)
        monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 3)
        members = {f"m{i}": os.urandom(700 * i) for i in range(6)}
        write_zipfile(zpath, members, zipfile.ZIP_STORED)
        monkeypatch.undo()
        assert b"PK\x06\x06" in zpath.read_bytes()[-200:]
        with ZipStore(zpath) as store:
            assert {k: store.get(k) for k in store.list()} == members
            assert store.get_range("m5", 100, 50) == members["m5"][100:150]

    def test_zip64_archive_appended_to(self, zpath: Path) -> None:
        with ZipStore(zpath, mode="w") as store:
            store.set_many((f"c/{i}", b"") for i in range(65_540))
        with ZipStore(zpath, mode="a") as store:
            store.set("extra", b"more")
        with ZipStore(zpath) as store:
            assert len(list(store.list())) == 65_541
            assert store.get("extra") == b"more"


# --- ZipStore: reading foreign archives --------------------------------------------------------


class TestZipReading:
    @pytest.mark.parametrize(
        "method",
        [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA],
        ids=["stored", "deflated", "bzip2", "lzma"],
    )
    def test_reads_zipfile_archive(self, zpath: Path, method: int) -> None:
        write_zipfile(zpath, MEMBERS, method)
        with ZipStore(zpath) as store:
            assert sorted(store.list()) == sorted(MEMBERS)
            for name, data in MEMBERS.items():
                assert store.get(name) == data
                assert store.get_range(name, 3, 100) == data[3:103]
                assert store.get_range(name, -7) == data[-7:]
            assert store.list_dir("") == ([".zgroup", "empty"], ["a", "b"])
            assert store.list_dir("a/") == ([".zarray", "0.0", "0.1"], [])

    def test_deflated_range_decompresses_a_prefix_only(self, zpath: Path) -> None:
        data = os.urandom(1 << 20)
        write_zipfile(zpath, {"big": data}, zipfile.ZIP_DEFLATED)
        with ZipStore(zpath) as store:
            reads: list[int] = []
            real = store._pread

            def counting(offset: int, size: int) -> bytes:
                reads.append(size)
                return real(offset, size)

            store._pread = counting  # type: ignore[method-assign]
            assert store.get_range("big", 10, 20) == data[10:30]
            assert sum(reads) < 200_000
            assert store.get_range("big", -5) == data[-5:]

    def test_stored_range_reads_only_the_range(self, zpath: Path) -> None:
        data = os.urandom(1 << 20)
        with ZipStore(zpath, mode="w") as store:
            store.set("big", data)
        with ZipStore(zpath) as store:
            reads: list[int] = []
            real = store._pread

            def counting(offset: int, size: int) -> bytes:
                reads.append(size)
                return real(offset, size)

            store._pread = counting  # type: ignore[method-assign]
            assert store.get_range("big", 1000, 64) == data[1000:1064]
            assert store.get_range("big", -64) == data[-64:]
            assert sum(reads) <= 30 + 64 + 64  # one local header, then the two ranges

    # zarr-python rewrites zarr.json when attributes change, so its archives hold duplicates.
    @pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")
    def test_reads_zarr_python_zip(self, zpath: Path) -> None:
        zarr = pytest.importorskip("zarr")
        zs = zarr.storage.ZipStore(zpath, mode="w")
        arr = zarr.create_array(store=zs, shape=(4, 6), chunks=(2, 3), dtype="int32")
        arr[:] = np.arange(24, dtype="int32").reshape(4, 6)
        arr.attrs["note"] = "written by zarr-python"
        zs.close()
        with zipfile.ZipFile(zpath) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            expected = {i.filename: zf.read(i.filename) for i in infos}  # last name wins
        assert len(infos) > len(expected)
        with ZipStore(zpath) as store:
            assert sorted(store.list()) == sorted(expected)
            assert "zarr.json" in expected and "c/1/1" in expected
            for key, value in expected.items():
                assert store.get(key) == value
            meta = json.loads(store.get("zarr.json") or b"")
            assert meta["shape"] == [4, 6]
            assert store.list_dir("") == (["zarr.json"], ["c"])

    def test_duplicate_names_last_wins(self, zpath: Path) -> None:
        with (
            pytest.warns(UserWarning, match="Duplicate name"),
            zipfile.ZipFile(zpath, "w") as zf,
        ):
            zf.writestr("k", b"first")
            zf.writestr("other", b"o")
            zf.writestr("k", b"second")
        with ZipStore(zpath) as store:
            assert store.get("k") == b"second"
            assert sorted(store.list()) == ["k", "other"]

    def test_zip_slip_names_are_ignored(self, zpath: Path) -> None:
        evil = ["../evil", "a/../../evil", "/etc/passwd", "a\\..\\evil", "a//b", "./x", "C:/w"]
        with zipfile.ZipFile(zpath, "w") as zf:
            for name in evil:
                zf.writestr(zipfile.ZipInfo(name), b"evil")
            zf.writestr("dir/", b"")
            zf.writestr("dir/ok", b"fine")
        with zipfile.ZipFile(zpath) as zf:
            assert set(evil) <= set(zf.namelist())  # the archive really holds them
        with ZipStore(zpath) as store:
            assert list(store.list()) == ["dir/ok"]
            assert store.list_dir("") == ([], ["dir"])
            with pytest.raises(InvalidKeyError):
                store.get("../evil")

    def test_prepended_data(self, zpath: Path) -> None:
        inner = zpath.with_suffix(".inner")
        write_zipfile(inner, MEMBERS, zipfile.ZIP_DEFLATED)
        zpath.write_bytes(b"#!/bin/sh\necho self-extracting\n" * 10 + inner.read_bytes())
        with ZipStore(zpath) as store:
            assert {k: store.get(k) for k in store.list()} == MEMBERS
        with ZipStore(zpath, mode="a") as store:
            store.set("new", b"appended")
        with zipfile.ZipFile(zpath) as zf:
            assert zf.testzip() is None
            assert zf.read("new") == b"appended"
        with ZipStore(zpath) as store:
            assert store.get("new") == b"appended"
            assert store.get("a/0.0") == MEMBERS["a/0.0"]

    def test_archive_comment_is_kept(self, zpath: Path) -> None:
        with zipfile.ZipFile(zpath, "w") as zf:
            zf.writestr("k", b"v")
            zf.comment = b"a comment"
        with ZipStore(zpath, mode="a") as store:
            assert store.get("k") == b"v"
            store.set("k2", b"v2")
        with zipfile.ZipFile(zpath) as zf:
            assert zf.comment == b"a comment"
            assert zf.read("k2") == b"v2"

    def test_corrupt_crc_is_detected(self, zpath: Path) -> None:
        with ZipStore(zpath, mode="w") as store:
            store.set("k", b"payload")
        offset = data_offsets(zpath)["k"]
        blob = bytearray(zpath.read_bytes())
        blob[offset] ^= 0xFF
        zpath.write_bytes(bytes(blob))
        with ZipStore(zpath) as store, pytest.raises(BadZipFile, match="CRC"):
            store.get("k")
        with ZipStore(zpath, verify_crc=False) as store:
            assert store.get("k") == b"\x8fayload"

    def test_not_a_zip(self, zpath: Path) -> None:
        zpath.write_bytes(b"not a zip file at all" * 10)
        with pytest.raises(BadZipFile):
            ZipStore(zpath)
        with pytest.raises(BadZipFile):
            ZipStore(zpath, mode="a")

    def test_missing_file(self, zpath: Path) -> None:
        with pytest.raises(FileNotFoundError):
            ZipStore(zpath)


# --- ZipStore: modes, writes and mmap ---------------------------------------------------------


class TestZipBehaviour:
    def test_append_mode_adds_members_last_wins(self, zpath: Path) -> None:
        with zipfile.ZipFile(zpath, "w") as zf:
            zf.writestr("dir/", b"")
            zf.writestr("../hidden", b"kept in the archive")
            zf.writestr("k", b"v1", compress_type=zipfile.ZIP_DEFLATED)
        with ZipStore(zpath, mode="a") as store:
            assert store.get("k") == b"v1"
            store.set("k", b"v2")
            store.set("new", b"n")
            assert store.get("k") == b"v2"
        with ZipStore(zpath, mode="a") as store:
            store.set("k", b"v3")
        with zipfile.ZipFile(zpath) as zf:
            assert zf.testzip() is None
            assert zf.namelist() == ["dir/", "../hidden", "k", "k", "new", "k"]
            assert zf.read("k") == b"v3"
        with ZipStore(zpath) as store:
            assert sorted(store.list()) == ["k", "new"]
            assert store.get("k") == b"v3"

    def test_append_creates_missing_archive(self, zpath: Path) -> None:
        with ZipStore(zpath, mode="a") as store:
            store.set("k", b"v")
        with ZipStore(zpath) as store:
            assert store.get("k") == b"v"

    def test_append_without_writes_leaves_file_untouched(self, zpath: Path) -> None:
        write_zipfile(zpath, MEMBERS, zipfile.ZIP_DEFLATED)
        before = zpath.read_bytes()
        with ZipStore(zpath, mode="a") as store:
            assert store.get("b/c/d") == b"deep"
        assert zpath.read_bytes() == before

    def test_mode_w_truncates(self, zpath: Path) -> None:
        write_zipfile(zpath, MEMBERS, zipfile.ZIP_STORED)
        with ZipStore(zpath, mode="w") as store:
            assert list(store.list()) == []
            store.set("only", b"1")
        with zipfile.ZipFile(zpath) as zf:
            assert zf.namelist() == ["only"]

    def test_mode_x(self, zpath: Path) -> None:
        with ZipStore(zpath, mode="x") as store:
            store.set("k", b"v")
        with pytest.raises(FileExistsError):
            ZipStore(zpath, mode="x")
        with ZipStore(zpath) as store:
            assert store.get("k") == b"v"

    def test_mode_and_read_only_arguments(self, zpath: Path) -> None:
        with pytest.raises(ValueError, match="mode"):
            ZipStore(zpath, mode="rw")
        with pytest.raises(ValueError, match="read_only"):
            ZipStore(zpath, mode="w", read_only=True)
        assert not zpath.exists()
        ZipStore(zpath, mode="w").close()
        with pytest.raises(ValueError, match="read_only"):
            ZipStore(zpath, mode="r", read_only=False)
        with ZipStore(zpath, read_only=True) as store:
            assert store.read_only
            with pytest.raises(ReadOnlyError):
                store.set("k", b"v")

    def test_delete_is_not_supported(self, zpath: Path) -> None:
        with ZipStore(zpath, mode="w") as store:
            store.set("a/k", b"v")
            with pytest.raises(NotImplementedError, match="'a/k'"):
                store.delete("a/k")
            with pytest.raises(NotImplementedError, match="'a/'"):
                store.delete_prefix("a/")
            store.delete("missing")
            store.delete_prefix("b/")
            assert store.get("a/k") == b"v"

    def test_closed_store_refuses_io(self, zpath: Path) -> None:
        store = ZipStore(zpath, mode="w")
        store.set("k", b"v")
        store.close()
        store.close()  # idempotent
        with pytest.raises(ValueError, match="closed"):
            store.get("k")
        with pytest.raises(ValueError, match="closed"):
            store.set("k", b"v")

    def test_concurrent_writes_and_reads(self, zpath: Path) -> None:
        with ZipStore(zpath, mode="w") as store:
            store.set("base", b"b" * 100)
            errors: list[BaseException] = []

            def writer(t: int) -> None:
                try:
                    for i in range(50):
                        store.set(f"w{t}/{i}", os.urandom(i * 37))
                except BaseException as e:
                    errors.append(e)

            def reader() -> None:
                try:
                    for _ in range(200):
                        assert store.get("base") == b"b" * 100
                        store.list_dir("")
                except BaseException as e:
                    errors.append(e)

            threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
            threads += [threading.Thread(target=reader) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert errors == []
            assert len(list(store.list())) == 201
        with zipfile.ZipFile(zpath) as zf:
            assert zf.testzip() is None
        assert all(offset % 8 == 0 for offset in data_offsets(zpath).values())

    def test_get_into(self, zpath: Path) -> None:
        data = np.arange(100, dtype="<f8")
        with ZipStore(zpath, mode="w") as store:
            store.set("c", data.tobytes())
            out = np.empty(100, dtype="<f8")
            assert store.get_into("c", out.data.cast("B"))
            assert np.array_equal(out, data)
            assert not store.get_into("missing", out.data)
            with pytest.raises(ValueError, match="differs"):
                store.get_into("c", memoryview(bytearray(3)))


class TestZipMmap:
    @pytest.fixture
    def archive(self, zpath: Path) -> Iterator[Path]:
        with ZipStore(zpath, mode="w") as store:
            store.set("a", np.arange(1000, dtype="<i4").tobytes())
            store.set("b/c", b"odd length!")
            store.set("empty", b"")
        with zipfile.ZipFile(zpath, "a") as zf:
            zf.writestr("deflated", b"z" * 1000, compress_type=zipfile.ZIP_DEFLATED)
        yield zpath

    def test_returns_exact_read_only_bytes(self, archive: Path) -> None:
        with ZipStore(archive) as store:
            view = store.map_value("a")
            assert view is not None
            assert view.readonly
            assert bytes(view) == np.arange(1000, dtype="<i4").tobytes()
            with pytest.raises(TypeError):
                view[0] = 1  # type: ignore[index]
            array = np.frombuffer(view, dtype="<i4")
            assert not array.flags.writeable
            assert array[999] == 999
            assert bytes(store.map_value("b/c") or b"?") == b"odd length!"
            empty = store.map_value("empty")
            assert empty is not None and bytes(empty) == b""
            assert store.map_value("missing") is None

    def test_view_outlives_close(self, archive: Path) -> None:
        store = ZipStore(archive)
        view = store.map_value("b/c")
        store.close()
        assert view is not None and bytes(view) == b"odd length!"

    def test_compressed_member_refused(self, archive: Path) -> None:
        with ZipStore(archive) as store:
            with pytest.raises(ValueError, match="compressed"):
                store.map_value("deflated")
            assert store.get("deflated") == b"z" * 1000

    def test_writable_store_maps_what_it_appends(self, archive: Path) -> None:
        with ZipStore(archive, mode="a") as store:
            before = store.map_value("a")
            assert before is not None
            expected = bytes(before)
            store.set("new", b"n" * 100_000)
            assert bytes(store.map_value("new") or b"") == b"n" * 100_000
            assert bytes(before) == expected


# --- interoperability with zarr-python ---------------------------------------------------------


def test_zarr_python_reads_our_zip(zpath: Path) -> None:
    zarr = pytest.importorskip("zarr")
    meta = {
        "zarr_format": 2,
        "shape": [4],
        "chunks": [2],
        "dtype": "<i4",
        "compressor": None,
        "fill_value": 0,
        "order": "C",
        "filters": None,
    }
    with ZipStore(zpath, mode="w") as store:
        store.set(".zarray", json.dumps(meta).encode())
        store.set("0", np.array([1, 2], dtype="<i4").tobytes())
        store.set("1", np.array([99, 99], dtype="<i4").tobytes())
        store.set("1", np.array([3, 4], dtype="<i4").tobytes())  # shadows the first "1"
    zs = zarr.storage.ZipStore(zpath, mode="r")
    try:
        arr = zarr.open_array(store=zs, mode="r", zarr_format=2)
        assert arr.shape == (4,)
        np.testing.assert_array_equal(arr[:], np.array([1, 2, 3, 4], dtype="<i4"))
    finally:
        zs.close()


def test_zarr_python_reads_our_zip64(zpath: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    zarr = pytest.importorskip("zarr")
    monkeypatch.setattr(zipmod, "ZIP64_LIMIT", 64)
    monkeypatch.setattr(zipmod, "ZIP64_COUNT_LIMIT", 1)
    meta = {"zarr_format": 3, "node_type": "group", "attributes": {"x": "y" * 100}}
    with ZipStore(zpath, mode="w") as store:
        store.set("zarr.json", json.dumps(meta).encode())
    monkeypatch.undo()
    zs = zarr.storage.ZipStore(zpath, mode="r")
    try:
        group = zarr.open_group(store=zs, mode="r")
        assert group.attrs["x"] == "y" * 100
    finally:
        zs.close()


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab./\\:\x00-_é", max_size=8))
def test_key_fast_path_agrees_with_the_detailed_checks(key: str) -> None:
    """validate_key's one-regex fast path accepts exactly what the rule-by-rule checks do."""
    from zarrkit.storage.keys import check_key_in_detail, validate_key

    def outcome(check: Any) -> bool:
        try:
            check(key)
        except InvalidKeyError:
            return False
        return True

    assert outcome(validate_key) == outcome(check_key_in_detail)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(alphabet="ab./\\:\x00\n-_é", max_size=6),
                          st.sampled_from(["c/0/1", "a/b", "0.0"]), st.integers(0, 3)),
                max_size=5))
def test_get_many_refuses_what_get_refuses(keys: list[Any]) -> None:
    """get_many checks a batch of keys with one match; it refuses a batch exactly when
    get refuses one of its keys, naming the first such key, and reads the rest."""
    store = MemoryStore({"c/0/1": b"x", "a/b": b"y"})

    def first_refusal() -> str | None:
        for key in keys:
            try:
                store.get(key)
            except InvalidKeyError as e:
                return str(e)
        return None

    refusal = first_refusal()
    if refusal is None:
        assert store.get_many(keys) == [store.get(key) for key in keys]
    else:
        with pytest.raises(InvalidKeyError) as caught:
            store.get_many(keys)
        assert str(caught.value) == refusal


def test_get_many_goes_through_a_redefined_get() -> None:
    """A store that redefines get (to count or wrap reads) sees get_many's keys."""
    seen: list[str] = []

    class Counting(MemoryStore):
        def get(self, key: str) -> bytes | None:
            seen.append(key)
            return super().get(key)

    assert Counting({"a": b"1"}).get_many(["a", "b"]) == [b"1", None]
    assert seen == ["a", "b"]
