"""gzip chunks are the same bytes whenever they are written (zarrkit.codecs.gzip_member).

numcodecs' GZip writes the time of compression into each member's header; zarrkit writes
0 there on both engines, so a chunk written again is unchanged (a resumed ``convert``
writes nothing) while staying numcodecs' bytes otherwise. The clock is moved between
writes (``time.time`` patched), so the tests do not depend on a second passing."""

from __future__ import annotations

import gzip
import time
from typing import Any
from unittest import mock

import numcodecs
import numpy as np
import pytest
import zarr

import zarrkit as zk
from zarrkit.storage import MemoryStore

GZIP_ARRAYS: dict[str, dict[str, Any]] = {
    "v3 gzip": {"zarr_format": 3, "compressors": [{"name": "gzip", "configuration": {"level": 5}}]},
    "v3 numcodecs.gzip": {"zarr_format": 3, "compressors": [
        {"name": "numcodecs.gzip", "configuration": {"level": 5}}]},
    "v2 gzip": {"zarr_format": 2, "compressors": numcodecs.GZip(level=5)},
}


def chunks_written_at(clock: float, options: dict[str, Any], engine: str) -> dict[str, bytes]:
    store = MemoryStore()
    values = np.arange(300, dtype="<i4").reshape(30, 10) % 7
    with mock.patch.object(time, "time", return_value=clock), zk.config.set(engine=engine):
        a = zk.create_array(store, shape=values.shape, chunks=(10, 10), dtype="<i4",
                            fill_value=0, **options)
        a[...] = values
    return {k: bytes(store.get(k) or b"") for k in store.list() if "/" in k or "." in k[:2]}


@pytest.mark.parametrize("engine", ["python", "auto"])
@pytest.mark.parametrize("layout", list(GZIP_ARRAYS))
def test_a_chunk_written_later_is_the_same_bytes(layout: str, engine: str) -> None:
    options = GZIP_ARRAYS[layout]
    early = chunks_written_at(1_000_000_000.0, options, engine)
    late = chunks_written_at(1_700_000_000.0, options, engine)
    chunks = {k: v for k, v in early.items() if v[:2] == b"\x1f\x8b"}
    assert len(chunks) == 3
    assert early == late
    for member in chunks.values():
        assert member[4:8] == bytes(4)  # the modification time
        gzip.decompress(member)  # a standard gzip member


@pytest.mark.parametrize("level", range(10))
def test_numcodecs_bytes_but_for_the_time(level: int) -> None:
    data = (np.arange(70_000) % 251).astype("u1").tobytes()
    from zarrkit.codecs.gzip_member import gzip_compress

    with mock.patch.object(time, "time", return_value=1_700_000_000.0):
        theirs = bytes(numcodecs.GZip(level).encode(data))
    assert theirs[4:8] != bytes(4)
    assert gzip_compress(data, level) == theirs[:4] + bytes(4) + theirs[8:]


def test_zarr_python_reads_them() -> None:
    store = MemoryStore()
    values = np.arange(100, dtype="<u2")
    zk.create_array(store, shape=(100,), chunks=(30,), dtype="<u2",
                    compressors=[{"name": "gzip", "configuration": {"level": 1}}])[...] = values
    theirs = zarr.open_array(zarr.storage.MemoryStore(
        {k: zarr.core.buffer.cpu.Buffer.from_bytes(store.get(k)) for k in store.list()}),
        mode="r")
    np.testing.assert_array_equal(theirs[...], values)


@pytest.mark.parametrize("engine", ["python", "auto"])
def test_a_resumed_convert_after_the_clock_moved_writes_nothing(tmp_path: Any,
                                                                engine: str) -> None:
    source = zk.create_array(str(tmp_path / "src.zarr"), shape=(40,), chunks=(10,), dtype="i2")
    source[...] = np.arange(40)
    dest = MemoryStore()
    options = {"zarr_format": 3, "compressors": [{"name": "gzip", "configuration": {"level": 6}}]}
    with mock.patch.object(time, "time", return_value=1_000_000_000.0), \
            zk.config.set(engine=engine):
        zk.convert(str(tmp_path / "src.zarr"), dest, progress=False, **options)
    written = dict(dest._data)
    with mock.patch.object(time, "time", return_value=1_700_000_000.0), \
            zk.config.set(engine=engine):
        zk.convert(str(tmp_path / "src.zarr"), dest, progress=False, **options)
    assert dict(dest._data) == written
