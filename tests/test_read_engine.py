"""The read engine's routes: decoding into the destination, reading uncompressed chunks
into it, caller buffers (``out=``) and memory-mapped chunks.

numpy is the oracle for values; each route is forced by the codec and store chosen, and
a route that is not taken where it should be is caught by the checks on buffers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.codecs.v2 import V2ChunkPipeline
from zarrkit.codecs.v3.pipeline import CodecPipelineV3
from zarrkit.codecs.v3.spec import ChunkSpec
from zarrkit.errors import ChunkDecodeError, OutputArrayError, UnsupportedOperationError
from zarrkit.storage import DirectoryStore, MemoryStore
from zarrkit.storage.zip import ZipStore

V3_CODEC_CHAINS: dict[str, list[Any]] = {
    "raw": [],
    "blosc": [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1}}],
    "zstd": [{"name": "zstd", "configuration": {"level": 1}}],
    "gzip+crc32c": [{"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}],
    "blosc+crc32c": [{"name": "blosc", "configuration": {"cname": "zstd"}}, {"name": "crc32c"}],
    "zstd+blosc": [{"name": "zstd", "configuration": {"level": 1}},
                   {"name": "blosc", "configuration": {"cname": "lz4"}}],
}


def _v3_pipeline(chain: str, shape: tuple[int, ...], dtype: str, endian: str = "little"
                 ) -> CodecPipelineV3:
    codecs: list[Any] = [{"name": "bytes", "configuration": {"endian": endian}}]
    return CodecPipelineV3.from_json(codecs + V3_CODEC_CHAINS[chain],
                                     ChunkSpec(shape, np.dtype(dtype), 0))


@pytest.mark.parametrize("chain", sorted(V3_CODEC_CHAINS))
@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_v3_decode_into_equals_decode(chain: str, endian: str, layout: str) -> None:
    pipeline = _v3_pipeline(chain, (6, 5), "<i4", endian)
    chunk = np.arange(30, dtype="<i4").reshape(6, 5) * 7919 % 1000
    data = pipeline.encode(chunk)
    assert data is not None
    if layout == "contiguous":
        out = np.full((6, 5), -1, dtype="<i4")
    else:
        out = np.full((12, 10), -1, dtype="<i4")[::2, ::2]
    pipeline.decode_into(data, out, what="c/0")
    np.testing.assert_array_equal(out, pipeline.decode(data, what="c/0"))
    np.testing.assert_array_equal(out, chunk)


@pytest.mark.parametrize("compressor", [None, {"id": "blosc", "cname": "lz4"},
                                        {"id": "zstd", "level": 1}, {"id": "zlib"}])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", ["<u2", ">f8"])
def test_v2_decode_into_equals_decode(compressor: dict[str, Any] | None, order: str,
                                      dtype: str) -> None:
    pipeline = V2ChunkPipeline.build(np.dtype(dtype), (4, 3), order, compressor, None)
    chunk = (np.arange(12).reshape(4, 3) * 31 % 17).astype(dtype)
    data = pipeline.encode(chunk)
    for out in (np.zeros((4, 3), dtype, order=order),  # type: ignore[call-overload]
                np.zeros((4, 3), dtype, order="F" if order == "C" else "C"),  # type: ignore[call-overload]
                np.zeros((8, 3), dtype)[::2]):
        pipeline.decode_into(data, out, what="0.0")
        np.testing.assert_array_equal(out, chunk)


@pytest.mark.parametrize("chain", ["blosc", "zstd", "gzip+crc32c"])
def test_decode_into_refuses_corrupt_chunks(chain: str) -> None:
    pipeline = _v3_pipeline(chain, (8,), "<u2")
    good = pipeline.encode(np.arange(8, dtype="<u2"))
    assert good is not None
    wrong_size = _v3_pipeline(chain, (9,), "<u2").encode(np.arange(9, dtype="<u2"))
    assert wrong_size is not None
    for data in (wrong_size, good[:-3], b"\x00" * len(good)):
        out = np.zeros(8, "<u2")
        with pytest.raises(ChunkDecodeError, match="c/7"):
            pipeline.decode_into(data, out, what="c/7")


# --- arrays: every route against numpy ----------------------------------------------------

def _stores(tmp_path: Path) -> dict[str, Any]:
    return {"memory": MemoryStore(), "directory": DirectoryStore(tmp_path / "d")}


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("codec", ["raw", "blosc", "zstd"])
@pytest.mark.parametrize("store_kind", ["memory", "directory", "zip"])
@pytest.mark.parametrize("pool", [False, True], ids=["inline", "pool"])
def test_reads_match_numpy_on_every_route(tmp_path: Path, zarr_format: int, codec: str,
                                          store_kind: str, pool: bool, monkeypatch: Any
                                          ) -> None:
    """Every read route, in the calling thread and (small reads forced there) in the
    pool, with writes forced the same way."""
    import zarrkit.hierarchy.read_engine as read_engine

    if pool:
        monkeypatch.setattr(read_engine, "INLINE_WORK_BYTES", 0)
        monkeypatch.setattr(read_engine, "_POOL_COPY_BYTES", 0)
        monkeypatch.setattr(zk.config, "threads", 3)
    data = (np.arange(23 * 17 * 5).reshape(23, 17, 5) * 2654435761 % 65521).astype("<u2")
    compressors: Any = {
        "raw": None,
        "blosc": [numcodecs.Blosc(cname="lz4", clevel=1)] if zarr_format == 2 else
        V3_CODEC_CHAINS["blosc"],
        "zstd": [numcodecs.Zstd(level=1)] if zarr_format == 2 else V3_CODEC_CHAINS["zstd"],
    }[codec]
    store: Any
    if store_kind == "zip":
        with ZipStore(tmp_path / "a.zip", mode="w") as writer:
            zk.from_array(writer, data=data, chunks=(4, 17, 5), compressors=compressors,
                          zarr_format=zarr_format)
        store = ZipStore(tmp_path / "a.zip")
    else:
        store = _stores(tmp_path)[store_kind]
        zk.from_array(store, data=data, chunks=(4, 17, 5), compressors=compressors,
                      zarr_format=zarr_format)
    array = zk.open_array(store, mode="r")
    selections: list[Any] = [
        Ellipsis, (slice(4, 12),), (slice(3, 21), slice(None), 2), (slice(None, None, 3),),
        (7,), (slice(20, 23), slice(2, 9), slice(1, 4)), (slice(22, 2, -4),),
    ]
    for selection in selections:
        np.testing.assert_array_equal(array[selection], data[selection], err_msg=str(selection))
    np.testing.assert_array_equal(array.oindex[[0, 5, 22], :, [4, 0]],
                                  data[np.ix_([0, 5, 22], range(17), [4, 0])])
    np.testing.assert_array_equal(array.vindex[[0, 5, 22], [1, 1, 16], [4, 0, 2]],
                                  data[[0, 5, 22], [1, 1, 16], [4, 0, 2]])
    if store_kind == "zip":
        store.close()


def test_read_into_a_contiguous_destination_uses_no_chunk_temporary(tmp_path: Path,
                                                                 monkeypatch: Any) -> None:
    """Chunks spanning whole rows of the output are decoded (or read) in place: the
    per-thread scratch buffer is never asked for (the Python path's; the native engine
    decodes into its own buffers)."""
    import zarrkit.hierarchy.read_engine as read_engine

    monkeypatch.setattr(zk.config, "engine", "python")

    calls: list[tuple[int, ...]] = []
    real = read_engine.scratch_array

    def counting(shape: tuple[int, ...], *args: Any) -> Any:
        calls.append(shape)
        return real(shape, *args)

    monkeypatch.setattr(read_engine, "scratch_array", counting)
    data = np.arange(40 * 6, dtype="<f8").reshape(40, 6)
    for compressors in (None, V3_CODEC_CHAINS["blosc"]):
        a = zk.from_array(DirectoryStore(tmp_path / str(bool(compressors))), data=data,
                          chunks=(8, 6), compressors=compressors)
        calls.clear()  # writing may use it; reading whole chunks must not
        np.testing.assert_array_equal(a[...], data)
        assert calls == []
        np.testing.assert_array_equal(a[:, 1:3], data[:, 1:3])  # partial: scratch is used
        assert calls
        calls.clear()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_read_out_matches_numpy(data: st.DataObject) -> None:
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=1, max_size=3)))
    chunks = tuple(data.draw(st.integers(1, n + 1)) for n in shape)
    source = np.arange(int(np.prod(shape)), dtype="i4").reshape(shape)
    compressors = data.draw(st.sampled_from([None, V3_CODEC_CHAINS["blosc"]]))
    array = zk.from_array({}, data=source, chunks=chunks, compressors=compressors)
    selection = tuple(
        slice(data.draw(st.integers(0, n)), data.draw(st.integers(0, n)),
              data.draw(st.sampled_from([1, 1, 2, -1]))) for n in shape)
    expected = source[selection]
    out = np.full(expected.shape, -7, dtype="i4")
    assert array.read(selection, out=out) is out
    np.testing.assert_array_equal(out, expected)


def test_out_for_every_selection_kind() -> None:
    source = np.arange(60, dtype="u2").reshape(6, 10)
    a = zk.from_array({}, data=source, chunks=(4, 3))
    out = np.empty((2, 10), "u2")
    assert a.get_orthogonal_selection(([1, 4], slice(None)), out=out) is out
    np.testing.assert_array_equal(out, source[[1, 4]])
    points = np.empty(3, "u2")
    a.get_coordinate_selection(([0, 5, 2], [9, 0, 3]), out=points)
    np.testing.assert_array_equal(points, source[[0, 5, 2], [9, 0, 3]])
    mask = source % 7 == 0
    masked = np.empty(int(mask.sum()), "u2")
    a.get_mask_selection(mask, out=masked)
    np.testing.assert_array_equal(masked, source[mask])
    block = np.empty((2, 3), "u2")  # the edge block: rows 4-5 only
    a.get_block_selection((1, 2), out=block)
    np.testing.assert_array_equal(block, source[4:6, 6:9])


def test_out_is_checked_before_anything_is_read() -> None:
    a = zk.from_array({}, data=np.arange(12, dtype="i2").reshape(3, 4), chunks=(2, 2))
    bad: list[Any] = [
        np.empty((3, 3), "i2"), np.empty((3, 4), "i4"), [[0] * 4] * 3,
        np.broadcast_to(np.zeros(4, "i2"), (3, 4)),
    ]
    for out in bad:
        with pytest.raises(OutputArrayError, match="out="):
            a.read(out=out)
    strided = np.zeros((3, 8), "i2")[:, ::2]
    with pytest.raises(OutputArrayError, match="C-contiguous"):
        a.get_mask_selection(np.ones((3, 4), bool), out=np.zeros(24, "i2")[::2])
    a.read(out=strided)  # strided is fine for a basic selection
    np.testing.assert_array_equal(strided, np.arange(12).reshape(3, 4))


# --- uncompressed chunks read from files ----------------------------------------------------

@pytest.mark.parametrize("size", [0, 5, 9])
def test_raw_chunk_file_of_wrong_size_is_refused(tmp_path: Path, size: int) -> None:
    store = DirectoryStore(tmp_path)
    a = zk.from_array(store, data=np.arange(16, dtype="<u2"), chunks=(8,), compressors=None)
    key = a._chunk_key((1,))
    store.set(key, bytes(size * 2))
    with pytest.raises(ChunkDecodeError, match=key):
        a[...]
    with pytest.raises(ChunkDecodeError, match=key):
        a[9]
    np.testing.assert_array_equal(a[:8], np.arange(8))


# --- memory-mapped chunks -------------------------------------------------------------------

def _mapped(tmp_path: Path, data: np.ndarray[Any, Any], chunks: tuple[int, ...],
            compressors: Any = None, zarr_format: int = 3, order: str = "C") -> zk.Array:
    store = DirectoryStore(tmp_path / "m")
    zk.from_array(store, data=data, chunks=chunks, compressors=compressors,
                  zarr_format=zarr_format, **({"order": order} if zarr_format == 2 else {}))
    return zk.open_array(tmp_path / "m", mode="r", mmap=True)


@pytest.mark.parametrize("zarr_format,order", [(3, "C"), (2, "C"), (2, "F")])
def test_single_chunk_reads_are_read_only_views_of_the_file(
        tmp_path: Path, zarr_format: int, order: str) -> None:
    data = np.arange(24, dtype="<i4").reshape(4, 6)
    a = _mapped(tmp_path, data, (4, 6), zarr_format=zarr_format, order=order)
    whole = a[...]
    np.testing.assert_array_equal(whole, data)
    assert not whole.flags.writeable and not whole.flags.owndata
    np.testing.assert_array_equal(a[1:3, ::2], data[1:3, ::2])
    assert a[2, 5] == data[2, 5]
    # Writes replace files by renaming: the mapping keeps the value it was made from.
    writer = zk.open_array(tmp_path / "m", mode="r+")
    writer[...] = 0
    np.testing.assert_array_equal(whole, data)
    np.testing.assert_array_equal(a[...], 0)


def test_mapped_multi_chunk_and_compressed_reads_fall_back(tmp_path: Path) -> None:
    data = np.arange(50, dtype="u1").reshape(5, 10)
    a = _mapped(tmp_path / "raw", data, (2, 4))
    np.testing.assert_array_equal(a[...], data)  # many chunks: copied out of the mappings
    assert a[...].flags.writeable
    view = a[2:4, 4:8]  # exactly one chunk
    assert not view.flags.writeable
    np.testing.assert_array_equal(view, data[2:4, 4:8])
    np.testing.assert_array_equal(a[4:, 8:], data[4:, 8:])  # an edge chunk
    b = _mapped(tmp_path / "blosc", data, (2, 4), compressors=V3_CODEC_CHAINS["blosc"])
    np.testing.assert_array_equal(b[2:4, 4:8], data[2:4, 4:8])
    assert b[2:4, 4:8].flags.writeable


def test_mapped_missing_chunk_reads_the_fill_value(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    zk.create_array(store, shape=(4,), chunks=(4,), dtype="f4", fill_value=2.5,
                    compressors=None)
    a = zk.Array(store, "", zk.open_array(store).metadata, read_only=True, mmap=True)
    np.testing.assert_array_equal(a[...], [2.5] * 4)


def test_mmap_needs_a_mappable_store(tmp_path: Path) -> None:
    store = MemoryStore()
    zk.create_array(store, shape=(4,), dtype="u1")
    with pytest.raises(UnsupportedOperationError, match="mmap"):
        zk.open_array(store, mode="r", mmap=True)
    created = zk.open_array(tmp_path / "new", mode="w", shape=(3,), dtype="u1",
                            compressors=None, fill_value=0, mmap=True)
    created[...] = [1, 2, 3]
    view = created[...]
    assert not view.flags.writeable and view.tolist() == [1, 2, 3]


def test_zip_members_are_mapped(tmp_path: Path) -> None:
    data = np.arange(12, dtype="<u2")
    with ZipStore(tmp_path / "a.zip", mode="w") as writer:
        zk.from_array(writer, data=data, chunks=(12,), compressors=None)
    with ZipStore(tmp_path / "a.zip") as store:
        a = zk.open_array(store, mode="r", mmap=True)
        view = a[...]
        assert not view.flags.writeable
        np.testing.assert_array_equal(view, data)


def test_directory_store_map_value(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.set("a/b", b"hello")
    store.set("empty", b"")
    assert bytes(store.map_value("a/b") or b"") == b"hello"
    empty = store.map_value("empty")
    assert empty is not None and bytes(empty) == b""
    assert store.map_value("missing") is None
    view = store.map_value("a/b")
    assert view is not None and view.readonly


def test_sharded_reads_fill_a_caller_buffer() -> None:
    source = np.arange(12 * 10, dtype="<i4").reshape(12, 10)
    a = zk.from_array({}, data=source, chunks=(2, 5), shards=(4, 10), zarr_format=3)
    for selection in (Ellipsis, (slice(1, 11, 3), slice(None, None, -1)), (5,)):
        expected = source[selection]
        out = np.full(expected.shape, -1, "<i4")
        assert a.read(selection, out=out) is out
        np.testing.assert_array_equal(out, expected)
    points = np.empty(2, "<i4")
    a.get_coordinate_selection(([0, 11], [9, 0]), out=points)
    np.testing.assert_array_equal(points, source[[0, 11], [9, 0]])
    with pytest.raises(OutputArrayError, match="shape"):
        a.read(out=np.empty((12, 9), "<i4"))


def test_mapped_reads_of_compressed_zip_members_are_read_instead(tmp_path: Path) -> None:
    """A ZIP written by another tool may deflate uncompressed chunks: those cannot be
    mapped, and are read."""
    import zipfile

    data = np.arange(40, dtype="<u2").reshape(4, 10)
    zk.from_array(tmp_path / "d", data=data, chunks=(2, 5), compressors=None)
    with zipfile.ZipFile(tmp_path / "a.zip", "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for file in sorted((tmp_path / "d").rglob("*")):
            if file.is_file():
                zf.write(file, file.relative_to(tmp_path / "d").as_posix())
    with ZipStore(tmp_path / "a.zip") as store:
        a = zk.open_array(store, mode="r", mmap=True)
        np.testing.assert_array_equal(a[...], data)
        np.testing.assert_array_equal(a[2:4, 5:10], data[2:4, 5:10])


def test_zstd_chunks_of_several_frames_decode_whole() -> None:
    """A chunk written as two zstd frames (a streaming writer may do that) decodes to
    both frames' bytes, in a v2 and a v3 array."""
    first = numcodecs.Zstd().encode(np.arange(0, 4, dtype="<u2"))
    second = numcodecs.Zstd().encode(np.arange(4, 8, dtype="<u2"))
    for zarr_format, compressors in ((3, V3_CODEC_CHAINS["zstd"]), (2, [numcodecs.Zstd()])):
        store = MemoryStore()
        a = zk.create_array(store, shape=(8,), chunks=(8,), dtype="<u2",
                            compressors=compressors, zarr_format=zarr_format)
        key = "c/0" if zarr_format == 3 else "0"
        store.set(key, first + second)
        np.testing.assert_array_equal(a[...], np.arange(8))
        store.set(key, first + b"junk")  # trailing bytes that are no frame: refused
        with pytest.raises(ChunkDecodeError):
            a[...]
