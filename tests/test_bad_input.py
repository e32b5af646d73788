"""Bad input: every failure is a specific zarrkit error that is also the natural builtin,
names the key or path involved, and leaves what is already stored unchanged."""

from __future__ import annotations

import bz2
import json
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import (
    BoundsCheckError,
    ChunkDecodeError,
    IndexingError,
    InvalidKeyError,
    MetadataError,
    ReadOnlyError,
    UnknownCodecError,
    UnsupportedDataTypeError,
    ZarrkitError,
)
from zarrkit.storage import DirectoryStore, MemoryStore

# These suites pin format 2; the v3 behaviour has its own tests.
pytestmark = pytest.mark.usefixtures("default_format_2")

ARRAY_PATH = "data/arr"
ZARRAY_KEY = f"{ARRAY_PATH}/.zarray"
GROUP_DOC = b'{\n    "zarr_format": 2\n}'


# --- helpers ------------------------------------------------------------------------------


@contextmanager
def unchanged(store: MemoryStore) -> Iterator[None]:
    """Assert that nothing stored changes inside the block (even when it raises)."""
    before = dict(store._data)
    try:
        yield
    finally:
        assert dict(store._data) == before


def check_raises(
    error: type[ZarrkitError], builtin: type[BaseException], fragments: tuple[str, ...],
    action: Callable[[], Any],
) -> ZarrkitError:
    """``action()`` raises ``error``, which is also ``builtin`` and names every fragment."""
    with pytest.raises(error) as info:
        action()
    assert isinstance(info.value, builtin)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return info.value


def zarray(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "|u1", "compressor": None,
        "fill_value": 0, "order": "C", "filters": None,
    }
    document.update(changes)
    return document


def store_with(documents: dict[str, Any], raw: dict[str, bytes] | None = None) -> MemoryStore:
    """A store with groups at the root and at ``data`` plus the given documents."""
    data = {".zgroup": GROUP_DOC, "data/.zgroup": GROUP_DOC}
    data.update({k: json.dumps(v).encode() for k, v in documents.items()})
    data.update(raw or {})
    return MemoryStore(data)


def open_arr(store: MemoryStore) -> Callable[[], Any]:
    return lambda: zk.open_array(store, path=ARRAY_PATH, mode="r+")


def via_group(store: MemoryStore) -> Callable[[], Any]:
    return lambda: zk.open_group(store, mode="r+")[ARRAY_PATH]


# --- malformed JSON -----------------------------------------------------------------------


MALFORMED = [b"{not json", b"", b"\xff\xfe{}", b'{"zarr_format": 2, "shape": [NaN]}',
             b"[1, 2]", b'"text"']


@pytest.mark.parametrize("raw", MALFORMED)
def test_malformed_zarray(raw: bytes) -> None:
    store = store_with({}, {ZARRAY_KEY: raw})
    with unchanged(store):
        check_raises(MetadataError, ValueError, (ZARRAY_KEY,), open_arr(store))
        check_raises(MetadataError, ValueError, (ZARRAY_KEY,), via_group(store))
        check_raises(MetadataError, ValueError, (ZARRAY_KEY,),
                     lambda: zk.open_array(store, path=ARRAY_PATH, mode="a", shape=(4,)))


@pytest.mark.parametrize("raw", MALFORMED + [b'{"zarr_format": 3}', b"{}"])
def test_malformed_zgroup(raw: bytes) -> None:
    store = MemoryStore({".zgroup": GROUP_DOC, "data/.zgroup": raw})
    with unchanged(store):
        for mode in ("r", "r+", "a"):
            check_raises(MetadataError, ValueError, ("data/.zgroup",),
                         lambda mode=mode: zk.open_group(store, mode=mode, path="data"))
        check_raises(MetadataError, ValueError, ("data/.zgroup",),
                     lambda: zk.open_group(store, mode="r+")["data"])


@pytest.mark.parametrize("raw", MALFORMED)
def test_malformed_zattrs(raw: bytes) -> None:
    store = store_with({ZARRAY_KEY: zarray()},
                       {"data/.zattrs": raw, f"{ARRAY_PATH}/.zattrs": raw})
    with unchanged(store):
        group = zk.open_group(store, mode="r+", path="data")
        check_raises(MetadataError, ValueError, ("data/.zattrs",), lambda: dict(group.attrs))
        check_raises(MetadataError, ValueError, ("data/.zattrs",),
                     lambda: group.attrs.__setitem__("k", 1))
        check_raises(MetadataError, ValueError, ("data/.zattrs",),
                     lambda: group.attrs.update({"k": 1}))
        array = zk.open_array(store, path=ARRAY_PATH, mode="r+")
        check_raises(MetadataError, ValueError, (f"{ARRAY_PATH}/.zattrs",),
                     lambda: array.attrs["k"])
        check_raises(MetadataError, ValueError, (f"{ARRAY_PATH}/.zattrs",),
                     lambda: array.attrs.__setitem__("k", 1))


@pytest.mark.parametrize("raw", [b"{bad", b"[]", b'{"zarr_consolidated_format": 1}',
                                 b'{"metadata": [], "zarr_consolidated_format": 1}'])
def test_malformed_zmetadata(raw: bytes) -> None:
    store = store_with({}, {".zmetadata": raw})
    with unchanged(store):
        check_raises(MetadataError, ValueError, (".zmetadata",),
                     lambda: zk.open_group(store, mode="r", consolidated=True))


# --- invalid .zarray contents -------------------------------------------------------------


@pytest.mark.parametrize("missing", ["zarr_format", "shape", "chunks", "dtype", "compressor",
                                     "fill_value", "order", "filters"])
def test_missing_required_key(missing: str) -> None:
    document = zarray()
    del document[missing]
    store = store_with({ZARRAY_KEY: document})
    with unchanged(store):
        check_raises(MetadataError, ValueError, (ZARRAY_KEY, repr(missing)), open_arr(store))
        check_raises(MetadataError, ValueError, (ZARRAY_KEY,), via_group(store))


@pytest.mark.parametrize("field,value", [
    ("shape", "4"), ("shape", 4), ("shape", None), ("shape", [4.0]), ("shape", [-1]),
    ("shape", [True]), ("shape", ["4"]), ("shape", [4, 4]),
    ("chunks", [0]), ("chunks", [2, 2]), ("chunks", ["2"]), ("chunks", [1.5]),
    ("chunks", None), ("chunks", {"0": 2}), ("chunks", [-2]),
    ("zarr_format", 3), ("zarr_format", "2"),
    ("order", "X"), ("order", None),
    ("dtype", 5), ("dtype", None),
    ("compressor", "zstd"), ("compressor", {"level": 1}), ("compressor", [{"id": "zlib"}]),
    ("filters", {"id": "delta"}), ("filters", [5]), ("filters", "delta"),
    ("dimension_separator", "-"),
    ("fill_value", "abc"), ("fill_value", 300), ("fill_value", [1]), ("fill_value", 1.5),
])
def test_wrong_types_in_zarray(field: str, value: Any) -> None:
    store = store_with({ZARRAY_KEY: zarray(**{field: value})})
    with unchanged(store):
        check_raises(MetadataError, ValueError, (ZARRAY_KEY,), open_arr(store))
        check_raises(MetadataError, ValueError, (ZARRAY_KEY,), via_group(store))


# --- chunks that do not decode to their size ----------------------------------------------


@pytest.mark.parametrize("compressor", [None, {"id": "zlib", "level": 1}, {"id": "zstd"},
                                        {"id": "blosc"}])
@pytest.mark.parametrize("size", [3, 5, 0, 100])
def test_chunk_of_wrong_decoded_size(compressor: dict[str, Any] | None, size: int) -> None:
    payload = bytes(range(1, size + 1))
    if compressor is not None:
        payload = numcodecs.get_codec(dict(compressor)).encode(payload)
    store = store_with({ZARRAY_KEY: zarray(compressor=compressor, shape=[6], chunks=[4])},
                       {f"{ARRAY_PATH}/0": bytes(payload)})
    array = zk.open_array(store, path=ARRAY_PATH, mode="r+")
    chunk_key = f"{ARRAY_PATH}/0"
    with unchanged(store):
        check_raises(ChunkDecodeError, ValueError, (chunk_key,), lambda: array[...])
        check_raises(ChunkDecodeError, ValueError, (chunk_key,), lambda: array[1])
        check_raises(ChunkDecodeError, ValueError, (chunk_key,),
                     lambda: array.__setitem__(1, 7))  # a partial write must read the chunk
        check_raises(ChunkDecodeError, ValueError, (chunk_key,),
                     lambda: array.oindex.__setitem__([0, 2], 7))
    assert array[4:].tolist() == [0, 0]  # other chunks still read


def test_chunk_that_is_not_valid_compressed_data() -> None:
    store = store_with({ZARRAY_KEY: zarray(compressor={"id": "zlib", "level": 1})},
                       {f"{ARRAY_PATH}/0": b"definitely not zlib"})
    array = zk.open_array(store, path=ARRAY_PATH, mode="r+")
    with unchanged(store):
        check_raises(ChunkDecodeError, ValueError, (f"{ARRAY_PATH}/0",), lambda: array[...])


def test_object_chunk_with_wrong_item_count() -> None:
    store = MemoryStore()
    array = zk.create_array(store, name=ARRAY_PATH, shape=(4,), chunks=(4,), dtype=str)
    store.set(f"{ARRAY_PATH}/0", numcodecs.VLenUTF8().encode(np.array(["a", "b", "c"],
                                                                      dtype=object)))
    with unchanged(store):
        check_raises(ChunkDecodeError, ValueError, (f"{ARRAY_PATH}/0",), lambda: array[...])


# --- decompression bombs ------------------------------------------------------------------

BOMB_SIZE = 100 * 1024 * 1024
PEAK_LIMIT = 8 * 1024 * 1024


def _stream(compressor: Any) -> bytes:
    block = bytes(1 << 20)
    parts = [compressor.compress(block) for _ in range(BOMB_SIZE // len(block))]
    return b"".join(parts) + compressor.flush()


def _zstd_without_content_size(frame: bytes) -> bytes:
    """The same zstd frame with the optional content size removed from its header."""
    descriptor = frame[4]
    single_segment = (descriptor >> 5) & 1
    assert not single_segment  # a 100 MB frame needs a window descriptor
    size_bytes = (0, 2, 4, 8)[descriptor >> 6]
    offset = 6 + (0, 1, 2, 4)[descriptor & 3]
    return frame[:4] + bytes([descriptor & 0x3F]) + frame[5:offset] + frame[offset + size_bytes:]


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    """100 MB of zeros compressed by each codec."""
    zeros = np.zeros(BOMB_SIZE, dtype="u1")
    zstd = bytes(numcodecs.Zstd(level=1).encode(zeros))
    result = {
        "zlib": _stream(zlib.compressobj()),
        "gzip": _stream(zlib.compressobj(wbits=16 + zlib.MAX_WBITS)),
        "bz2": _stream(bz2.BZ2Compressor()),
        "zstd": zstd,
        "zstd-no-content-size": _zstd_without_content_size(zstd),
        "blosc": bytes(numcodecs.Blosc(cname="zstd").encode(zeros)),
        "lz4": bytes(numcodecs.LZ4().encode(zeros)),
    }
    del zeros
    return result


@pytest.mark.parametrize("kind", ["zlib", "gzip", "bz2", "zstd", "zstd-no-content-size",
                                  "blosc", "lz4"])
def test_decompression_bomb_is_refused_without_allocating(kind: str,
                                                          bombs: dict[str, bytes]) -> None:
    codec_id = kind.split("-")[0]
    store = MemoryStore()
    array = zk.create_array(store, name=ARRAY_PATH, shape=(2048,), chunks=(1024,), dtype="u1",
                            compressors={"id": codec_id})
    chunk_key = f"{ARRAY_PATH}/1"
    store.set(chunk_key, bombs[kind])
    with unchanged(store):
        tracemalloc.start()
        try:
            check_raises(ChunkDecodeError, ValueError, (chunk_key,), lambda: array[...])
            check_raises(ChunkDecodeError, ValueError, (chunk_key,),
                         lambda: array.__setitem__(1500, 1))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < PEAK_LIMIT, f"{kind}: peak {peak / 2**20:.1f} MiB while refusing a bomb"


# --- unknown codecs -----------------------------------------------------------------------


@pytest.mark.parametrize("field,value", [
    ("compressor", {"id": "no-such-codec"}),
    ("filters", [{"id": "no-such-filter"}]),
])
def test_unknown_codec_in_metadata(field: str, value: Any) -> None:
    store = store_with({ZARRAY_KEY: zarray(**{field: value})})
    codec_id = value["id"] if isinstance(value, dict) else value[0]["id"]
    with unchanged(store):
        error = check_raises(UnknownCodecError, ValueError, (codec_id,), open_arr(store))
        assert isinstance(error, MetadataError)
        check_raises(UnknownCodecError, ValueError, (codec_id, ARRAY_PATH), open_arr(store))
        check_raises(UnknownCodecError, ValueError, (codec_id, ARRAY_PATH), via_group(store))


@pytest.mark.parametrize("kwargs", [
    {"compressors": {"id": "no-such-codec"}},
    {"compressor": {"id": "no-such-codec"}},
    {"filters": [{"id": "no-such-codec"}]},
    {"compressors": [{"name": "no-such-codec", "configuration": {}}]},
    {"compressors": "no-such-codec"},
])
def test_creating_array_with_unknown_codec_writes_nothing(kwargs: dict[str, Any]) -> None:
    store = MemoryStore()
    old = zk.create_array(store, name="old", shape=(4,), chunks=(2,), dtype="i4")
    old[...] = [1, 2, 3, 4]
    with unchanged(store):
        check_raises(UnknownCodecError, ValueError, ("no-such-codec",),
                     lambda: zk.create_array(store, name="new/deep/arr", shape=(4,),
                                             dtype="i4", **kwargs))
        check_raises(UnknownCodecError, ValueError, ("no-such-codec",),
                     lambda: zk.group(store).create_array("new/arr", shape=(4,), dtype="i4",
                                                          **kwargs))
        check_raises(UnknownCodecError, ValueError, ("no-such-codec",),
                     lambda: zk.create_array(store, name="old", shape=(4,), dtype="i4",
                                             overwrite=True, **kwargs))
        check_raises(UnknownCodecError, ValueError, ("no-such-codec",),
                     lambda: zk.open_array(store, path="other", mode="w", shape=(4,),
                                           dtype="i4", **kwargs))
    assert old[...].tolist() == [1, 2, 3, 4]


# --- unsupported data types ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["<M8", "|m8", "|x4", "<f16", "<c32", "<U0", "|S0", "|V0",
                                   "<i16", "int32", "<i4x"])
def test_unsupported_dtype_in_metadata(dtype: str) -> None:
    store = store_with({ZARRAY_KEY: zarray(dtype=dtype, fill_value=None)})
    with unchanged(store):
        check_raises(UnsupportedDataTypeError, ValueError, (ZARRAY_KEY, repr(dtype)),
                     open_arr(store))
        check_raises(UnsupportedDataTypeError, ValueError, (ZARRAY_KEY,), via_group(store))


@pytest.mark.parametrize("dtype", ["<M8", "m8", "|x4", "<f16", "<c32", "U0", "S0", "(2,)i4"])
def test_creating_array_with_unsupported_dtype_writes_nothing(dtype: str) -> None:
    store = MemoryStore()
    zk.group(store)
    with unchanged(store):
        check_raises(UnsupportedDataTypeError, ValueError, (),
                     lambda: zk.create_array(store, name="x/arr", shape=(2,), dtype=dtype,
                                             fill_value=None))


# --- read-only ----------------------------------------------------------------------------


def _populated(store: MemoryStore) -> None:
    root = zk.group(store, attributes={"a": 1})
    arr = root.create_array(ARRAY_PATH, shape=(4, 4), chunks=(2, 2), dtype="i4",
                            attributes={"b": 2})
    arr[...] = np.arange(16).reshape(4, 4)


READ_ONLY_STORE_WRITES: dict[str, tuple[tuple[str, ...], Callable[[MemoryStore], Any]]] = {
    "store.set": (("new/key",), lambda s: s.set("new/key", b"v")),
    "store.set_many": (("new/key",), lambda s: s.set_many({"new/key": b"v"})),
    "store.delete": ((".zgroup",), lambda s: s.delete(".zgroup")),
    "store.delete_prefix": (("data/",), lambda s: s.delete_prefix("data/")),
    "array.setitem": ((ARRAY_PATH,),
                      lambda s: zk.open_array(s, path=ARRAY_PATH, mode="a").__setitem__(0, 1)),
    "array.resize": ((ARRAY_PATH,),
                     lambda s: zk.open_array(s, path=ARRAY_PATH, mode="a").resize(8, 8)),
    "array.attrs": ((ARRAY_PATH,), lambda s: zk.open_array(s, path=ARRAY_PATH, mode="a")
                    .attrs.__setitem__("x", 1)),
    "group.create_group": (("group '/'",),
                           lambda s: zk.open_group(s, mode="a").create_group("new")),
    "group.attrs": ((".zattrs",),
                    lambda s: zk.open_group(s, mode="a").attrs.__setitem__("x", 1)),
    "create_array": (("x/y",),
                     lambda s: zk.create_array(s, name="x/y", shape=(1,), dtype="u1")),
    "consolidate_metadata": ((".zmetadata",), lambda s: zk.consolidate_metadata(s)),
}


@pytest.mark.parametrize("name", sorted(READ_ONLY_STORE_WRITES))
def test_read_only_store(name: str) -> None:
    writable = MemoryStore()
    _populated(writable)
    store = MemoryStore(dict(writable._data), read_only=True)
    fragments, write = READ_ONLY_STORE_WRITES[name]
    assert zk.open_array(store, path=ARRAY_PATH, mode="a").read_only
    assert zk.open_group(store, mode="a").read_only
    with unchanged(store):
        check_raises(ReadOnlyError, PermissionError, fragments, lambda: write(store))


def test_read_only_array_and_group() -> None:
    store = MemoryStore()
    _populated(store)
    with unchanged(store):
        array = zk.open_array(store, path=ARRAY_PATH, mode="r")
        writes: list[Callable[[], Any]] = [
            lambda: array.__setitem__((0, 0), 5),
            lambda: array.__setitem__(..., 0),
            lambda: array.oindex.__setitem__(([0], [1]), 5),
            lambda: array.vindex.__setitem__(([0], [1]), 5),
            lambda: array.vindex.__setitem__(np.ones((4, 4), dtype=bool), 5),
            lambda: array.blocks.__setitem__(0, 5),
            lambda: array.set_basic_selection(0, 5),
            lambda: array.resize(2, 2),
            lambda: array.append(np.zeros((1, 4))),
            lambda: array.attrs.__setitem__("x", 1),
            lambda: array.attrs.update({"x": 1}),
            lambda: array.attrs.__delitem__("b"),
            lambda: array.update_attributes({"x": 1}),
        ]
        for write in writes:
            check_raises(ReadOnlyError, PermissionError, (ARRAY_PATH,), write)
        group = zk.open_group(store, mode="r")
        check_raises(ReadOnlyError, PermissionError, (), lambda: group.create_group("new"))
        check_raises(ReadOnlyError, PermissionError, (),
                     lambda: group.create_array("new", shape=(1,), dtype="u1"))
        check_raises(ReadOnlyError, PermissionError, (), lambda: group.require_group("new"))
        check_raises(ReadOnlyError, PermissionError, (),
                     lambda: group.require_array("new", shape=(1,), dtype="u1"))
        check_raises(ReadOnlyError, PermissionError, (), lambda: group.__delitem__("data"))
        check_raises(ReadOnlyError, PermissionError, (".zattrs",),
                     lambda: group.attrs.__setitem__("x", 1))
        sub = group["data"]
        check_raises(ReadOnlyError, PermissionError, ("data",),
                     lambda: sub.create_group("new"))
        check_raises(ReadOnlyError, PermissionError, ("data/.zattrs",),
                     lambda: sub.attrs.update({"x": 1}))
        nested = group[ARRAY_PATH]
        check_raises(ReadOnlyError, PermissionError, (ARRAY_PATH,),
                     lambda: nested.__setitem__(0, 1))


def test_read_only_directory_store(tmp_path: Path) -> None:
    root = tmp_path / "ro.zarr"
    zk.create_array(str(root), name="a", shape=(4,), chunks=(2,), dtype="u1")[...] = 3
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    contents = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    array = zk.open_array(str(root), path="a", mode="r")
    check_raises(ReadOnlyError, PermissionError, ("a",), lambda: array.__setitem__(0, 1))
    store = DirectoryStore(root, read_only=True)
    check_raises(ReadOnlyError, PermissionError, (), lambda: store.set("a/9", b"x"))
    check_raises(ReadOnlyError, PermissionError, (), lambda: store.delete_prefix(""))
    check_raises(ReadOnlyError, PermissionError, (),
                 lambda: zk.open_array(store, path="a", mode="a").resize(1))
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == contents


# --- paths with '..' ----------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["..", "a/../b", "../escape", "data/..", "./x", "a/./b"])
def test_dot_segments_in_paths(bad: str, tmp_path: Path) -> None:
    store = MemoryStore()
    _populated(store)
    with unchanged(store):
        check_raises(InvalidKeyError, ValueError, (repr(bad),),
                     lambda: zk.open_array(store, path=bad, mode="r"))
        check_raises(InvalidKeyError, ValueError, (repr(bad),),
                     lambda: zk.open_group(store, path=bad, mode="a"))
        check_raises(InvalidKeyError, ValueError, (repr(bad),),
                     lambda: zk.create_array(store, name=bad, shape=(1,), dtype="u1"))
        check_raises(InvalidKeyError, ValueError, (repr(bad),),
                     lambda: zk.open_group(store, mode="r+")[bad])
        check_raises(InvalidKeyError, ValueError, (repr(bad),),
                     lambda: zk.open_group(store, mode="r+").create_group(bad))
        check_raises(InvalidKeyError, ValueError, (repr(bad),), lambda: store.get(bad))
        check_raises(InvalidKeyError, ValueError, (repr(bad),), lambda: store.set(bad, b""))
    directory = DirectoryStore(tmp_path / "inner")
    check_raises(InvalidKeyError, ValueError, (),
                 lambda: zk.create_array(directory, name=bad + "/x", shape=(1,), dtype="u1"))
    check_raises(InvalidKeyError, ValueError, (), lambda: directory.set(bad + "/k", b"x"))
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["inner"])
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


# --- fill values --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype,fill", [
    ("u1", 300), ("u1", -1), ("i8", 2**70), ("i4", "abc"), ("i4", float("nan")),
    ("i4", 1.5), ("f8", [1.0, 2.0]), ("f4", 1e300), ("|b1", "x"), ("<M8[s]", "x"),
    ("i2", float("inf")), ("u8", -5),
])
def test_invalid_fill_value_on_create(dtype: str, fill: Any) -> None:
    store = MemoryStore()
    zk.group(store)
    with unchanged(store):
        check_raises(MetadataError, ValueError, (),
                     lambda: zk.create_array(store, name="x", shape=(2,), dtype=dtype,
                                             fill_value=fill))


@pytest.mark.parametrize("dtype,fill", [
    ("|u1", 300), ("|u1", -1), ("<i4", "abc"), ("<i4", 1.5), ("<f8", "nan"), ("<f8", [1]),
    ("|b1", "yes"), ("<c16", [1.0]), ("|S3", 5), ("|S3", "!!!not base64"), ("<M8[s]", 1.5),
])
def test_invalid_fill_value_in_metadata(dtype: str, fill: Any) -> None:
    store = store_with({ZARRAY_KEY: zarray(dtype=dtype, fill_value=fill)})
    with unchanged(store):
        check_raises(MetadataError, ValueError, (ZARRAY_KEY,), open_arr(store))


# --- wrong-shaped values ------------------------------------------------------------------


def test_broadcasting_wrong_shaped_value() -> None:
    store = MemoryStore()
    array = zk.create_array(store, name=ARRAY_PATH, shape=(4, 6), chunks=(2, 3), dtype="i4")
    array[...] = np.arange(24).reshape(4, 6)
    writes: list[Callable[[], Any]] = [
        lambda: array.__setitem__(slice(0, 2), np.ones((3, 6))),
        lambda: array.__setitem__(..., np.ones(5)),
        lambda: array.__setitem__((0, slice(None)), np.ones((6, 1))),
        lambda: array.__setitem__((0, 0), np.ones(2)),
        lambda: array.oindex.__setitem__(([0, 1], [0, 1, 2]), np.ones((3, 2))),
        lambda: array.vindex.__setitem__(([0, 1], [0, 1]), [1, 2, 3]),
        lambda: array.vindex.__setitem__(np.eye(4, 6, dtype=bool), np.ones(5)),
        lambda: array.blocks.__setitem__(0, np.ones((3, 3))),
    ]
    with unchanged(store):
        for write in writes:
            with pytest.raises(ValueError) as info:
                write()
            assert ARRAY_PATH in str(info.value), str(info.value)
    assert array[...].tolist() == np.arange(24).reshape(4, 6).tolist()


# --- out-of-bounds indices ----------------------------------------------------------------


@pytest.mark.parametrize("how,selection,index", [
    ("basic", 4, "4"),
    ("basic", -5, "-5"),
    ("basic", (0, 6), "6"),
    ("basic", (slice(None), -7), "-7"),
    ("oindex", ([0, 4], slice(None)), "4"),
    ("oindex", (slice(None), [-7, 0]), "-7"),
    ("vindex", ([0, 4], [0, 0]), "4"),
    ("vindex", ([0, 1], [0, 6]), "6"),
    ("blocks", 2, "2"),
    ("blocks", (0, -3), "-3"),
])
def test_out_of_bounds_index(how: str, selection: Any, index: str) -> None:
    store = MemoryStore()
    array = zk.create_array(store, name=ARRAY_PATH, shape=(4, 6), chunks=(2, 3), dtype="i4")
    array[...] = 1
    target = {"basic": array, "oindex": array.oindex, "vindex": array.vindex,
              "blocks": array.blocks}[how]
    with unchanged(store):
        check_raises(BoundsCheckError, IndexError, (index,), lambda: target[selection])
        check_raises(BoundsCheckError, IndexError, (index,),
                     lambda: target.__setitem__(selection, 5))


def test_too_many_indices_and_zero_d() -> None:
    store = MemoryStore()
    array = zk.create_array(store, shape=(4,), chunks=(2,), dtype="i4")
    scalar = zk.create_array(MemoryStore(), shape=(), dtype="i4")
    with unchanged(store):
        check_raises(IndexingError, IndexError, (), lambda: array[0, 0])
        check_raises(IndexingError, IndexError, (), lambda: array.__setitem__((0, 0), 1))
        check_raises(IndexingError, IndexError, (), lambda: scalar[0])


def test_pickle_object_codec_reads_only_through_the_restricted_unpickler() -> None:
    # A pickled chunk naming any global outside the allowlist (here builtins.object) is
    # refused before that global is looked up, let alone called.
    import pickle

    store = MemoryStore()
    zarray = {"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "|O",
              "compressor": None, "fill_value": None, "order": "C",
              "filters": [{"id": "pickle"}]}
    store.set(".zarray", json.dumps(zarray).encode())
    store.set("0", pickle.dumps(np.array([object()], dtype=object)))
    with pytest.raises(zk.errors.UnsafePickleError, match="builtins.object"):
        zk.open_array(store, mode="r")[...]
