"""Fuzz targets for the storage layer: each takes hostile bytes and lets only
``zarrkit.errors`` exceptions through (see ``atheris_fuzz.py``)."""

from __future__ import annotations

import io
import os
import tempfile
import zipfile

import crc32c
import numpy as np

import zarrkit as zk
from zarrkit.errors import ZarrkitError
from zarrkit.storage import MemoryStore, ZipStore

# Inputs become files here; /dev/shm keeps the fuzz loop off the disk where it exists.
_SCRATCH = tempfile.mkdtemp(prefix="zarrkit-fuzz-",
                            dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
_ARCHIVE = os.path.join(_SCRATCH, "input.zip")


def _read_every_member(store: ZipStore) -> None:
    for key in list(store.list()):
        store.get(key)
        store.get_range(key, 1, 5)
        store.get_range(key, -3)
    store.list_dir("")


def zip_archive(data: bytes) -> None:
    """A ZIP archive as found on disk: opened for reading, every member read, then
    opened for appending (recovery included), appended to and closed."""
    with open(_ARCHIVE, "wb") as f:
        f.write(data)
    try:
        with ZipStore(_ARCHIVE, mode="r") as store:
            _read_every_member(store)
    except ZarrkitError:
        pass
    try:
        with ZipStore(_ARCHIVE, mode="a") as store:
            store.set("fuzz/new", b"appended")
        with ZipStore(_ARCHIVE, mode="r") as store:
            if store.get("fuzz/new") != b"appended":
                raise AssertionError("a value appended to a recovered archive was lost")
    except ZarrkitError:
        pass


_SHARDED = MemoryStore()
zk.create_array(_SHARDED, shape=(8, 8), chunks=(2, 4), shards=(4, 8), dtype="u2",
                fill_value=7, compressors=[{"name": "zstd", "configuration": {"level": 1}}])
_SHARDED_ARRAY = zk.open_array(_SHARDED, mode="r")


_INDEX_BYTES = 4 * 16  # 2x2 inner chunks, (offset, length) of 8 bytes each


def shard(data: bytes) -> None:
    """Hostile bytes as a stored shard (index at the end, crc32c): whole and partial
    reads either decode to the array's shape or raise a zarrkit error. An odd first byte
    makes the index checksum right, so that inputs reach the index's contents."""
    if data[:1] and data[0] & 1 and len(data) >= 1 + _INDEX_BYTES + 4:
        body = bytearray(data[1:])
        body[-4:] = crc32c.crc32c(bytes(body[-4 - _INDEX_BYTES:-4])).to_bytes(4, "little")
        data = bytes(body)
    _SHARDED.set("c/0/0", data)
    for selection in (np.s_[:], np.s_[0:2, 0:4], np.s_[3, 5]):
        try:
            value = _SHARDED_ARRAY[selection]
        except ZarrkitError:
            continue
        expected = np.empty((8, 8), "u2")[selection]
        if np.shape(value) != np.shape(expected):
            raise AssertionError(f"shard decoded to shape {np.shape(value)} for {selection}")


def zip_archive_seeds() -> list[bytes]:
    """Valid archives to start from: zarrkit's own (stored, aligned) and zipfile's
    (deflated, bzip2, lzma)."""
    seeds = []
    with ZipStore(_ARCHIVE, mode="w") as store:
        store.set("zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
        store.set("a/c/0", bytes(range(40)))
    with open(_ARCHIVE, "rb") as f:
        seeds.append(f.read())
    for method in (zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=method) as archive:
            archive.writestr("a/.zarray", b'{"zarr_format": 2}' * 3)
            archive.writestr("a/0", bytes(100))
        seeds.append(buffer.getvalue())
    return seeds


def shard_seeds() -> list[bytes]:
    """A real shard of the fuzzed array (with the checksum-repair flag byte)."""
    store = MemoryStore()
    array = zk.create_array(store, shape=(8, 8), chunks=(2, 4), shards=(4, 8), dtype="u2",
                            compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    array[0:3, :] = np.arange(24, dtype="u2").reshape(3, 8)
    shard = store.get("c/0/0")
    assert shard is not None
    return [b"\x01" + shard, b"\x00" + shard]
