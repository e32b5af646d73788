"""The native engine and the Python path read the same values from the same arrays (the
Python path and numpy are the oracles), and report corrupt chunks the same way."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any
from unittest import mock

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

import zarrkit as zk
from zarrkit import native
from zarrkit.errors import ChunkDecodeError, StoreEscapeError, ZarrkitError
from zarrkit.hierarchy import read_engine, write_engine
from zarrkit.storage import DirectoryStore, MemoryStore, ZipStore
from zarrkit.storage.directory import TEMP_PREFIX

pytestmark = pytest.mark.skipif(not native.built(), reason="zarrkit._engine is not built "
                                "(make test builds it)")

V3_COMPRESSORS: list[Any] = [
    [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
    [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                         "typesize": 4, "blocksize": 0}}],
    [{"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}],
]
V2_COMPRESSORS = [numcodecs.Zstd(level=1), numcodecs.Blosc(cname="zstd"), numcodecs.Zlib(1),
                  numcodecs.GZip(1), numcodecs.LZ4()]
DTYPES = ["u1", "<i2", "<f4", "<f8", "<c8", "|b1", ">i4", "<M8[s]"]


@st.composite
def arrays(draw: st.DrawFn) -> tuple[Any, np.ndarray[Any, Any]]:
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 12), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, n + 2)) for n in shape)
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    zarr_format = draw(st.sampled_from([2, 3]))
    options: dict[str, Any] = {}
    if zarr_format == 3:
        options["compressors"] = draw(st.sampled_from(V3_COMPRESSORS))
        options["chunk_key_encoding"] = draw(st.sampled_from([
            {"name": "default", "separator": "/"}, {"name": "default", "separator": "."},
            {"name": "v2", "separator": "."}, {"name": "v2", "separator": "/"}]))
        if dtype.byteorder == ">":
            options["serializer"] = {"name": "bytes", "configuration": {"endian": "big"}}
            dtype = dtype.newbyteorder("<")
        if ndim > 1 and draw(st.booleans()):
            order = draw(st.permutations(range(ndim)))
            options["filters"] = [{"name": "transpose", "configuration": {"order": order}}]
    else:
        options["compressors"] = draw(st.sampled_from(V2_COMPRESSORS))
        options["order"] = draw(st.sampled_from("CF"))
        options["dimension_separator"] = draw(st.sampled_from("./"))
    if dtype.kind == "M":
        data = draw(hnp.arrays(np.dtype("<i8"), shape, elements=st.integers(-10**9, 10**9)))
        data = data.view(dtype)
    else:
        data = draw(hnp.arrays(dtype, shape, elements=hnp.from_dtype(dtype, allow_nan=False)))
    store = MemoryStore()
    a = zk.create_array(store, shape=shape, chunks=chunks, dtype=dtype,
                        zarr_format=zarr_format, **options)
    # Some chunks left unwritten: the engine's batch fills them.
    region = tuple(slice(0, draw(st.integers(0, n))) for n in shape)
    a[region] = data[region]
    expected = np.full(shape, a.fill_value if a.fill_value is not None else 0, dtype=dtype)
    expected[region] = data[region]
    return a, expected


@st.composite
def selections(draw: st.DrawFn, shape: tuple[int, ...]) -> Any:
    kind = draw(st.sampled_from(["basic", "basic", "orthogonal", "ints"]))
    if kind == "ints":
        return tuple(draw(st.integers(-n, n - 1)) if draw(st.booleans())
                     else slice(None) for n in shape)
    parts = []
    for n in shape:
        start = draw(st.none() | st.integers(-n - 1, n + 1))
        stop = draw(st.none() | st.integers(-n - 1, n + 1))
        step = draw(st.none() | st.integers(1, 4) | st.integers(-3, -1))
        parts.append(slice(start, stop, step))
    return tuple(parts)


def on_disk(a: Any, factory: Any) -> Any:
    """``a`` copied into a DirectoryStore, under a group: the engine then opens its chunk
    files itself."""
    store = DirectoryStore(factory.mktemp("engine"))
    store.set_many((f"g/a/{key}", a.store.get(key)) for key in a.store.list())
    return zk.open_array(store, path="g/a")


def in_zip(a: Any, factory: Any, deflate: frozenset[str] = frozenset()) -> Any:
    """``a`` copied into a ZIP archive, under a group, its members stored (the engine then
    reads them at their offsets in the archive itself) except the keys in ``deflate``,
    compressed by Python's zipfile (the store reads those)."""
    path = factory.mktemp("engine") / "a.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for key in sorted(a.store.list()):
            archive.writestr(f"g/a/{key}", bytes(a.store.get(key)),
                             zipfile.ZIP_DEFLATED if key in deflate else zipfile.ZIP_STORED)
    return zk.open_array(ZipStore(path, mode="r"), path="g/a")


class RemoteLike(MemoryStore):
    """A store that asks for whole values, as remote ones do (HTTP, fsspec): shards wanted
    whole are fetched a batch ahead of the engine's decoding."""

    prefers_whole_values = True


def placed(a: Any, place: str, factory: Any, data: st.DataObject) -> Any:
    """``a`` where ``place`` says: in memory as it is, in a store that prefers whole
    values (as remote ones do), in a directory, or in a ZIP archive (some of its members
    drawn to be compressed)."""
    if place == "remote":
        store = RemoteLike()
        store.set_many((key, a.store.get(key)) for key in a.store.list())
        return zk.open_array(store)
    if place == "directory":
        return on_disk(a, factory)
    if place == "zip":
        keys = sorted(a.store.list())
        deflate = data.draw(st.frozensets(st.sampled_from(keys)) if keys else st.just(
            frozenset()), label="deflated members")
        return in_zip(a, factory, deflate)
    return a


PLACES = st.sampled_from(["memory", "remote", "directory", "zip"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=arrays(), data=st.data(), threads=st.sampled_from([1, 2]), place=PLACES)
def test_both_engines_read_what_numpy_reads(case: tuple[Any, Any], data: st.DataObject,
                                            threads: int, place: str,
                                            tmp_path_factory: Any) -> None:
    a, expected = case
    a = placed(a, place, tmp_path_factory, data)
    selection = data.draw(selections(expected.shape), label="selection")
    with zk.config.set(threads=threads, engine="auto"):  # whatever ZARRKIT_ENGINE says
        assert a.engine == "native"
        ours = a[selection]
        with zk.config.set(engine="python"):
            assert a.engine == "python"
            reference = a[selection]
    np.testing.assert_array_equal(np.asarray(reference), expected[selection])
    assert np.asarray(ours).tobytes() == np.asarray(reference).tobytes()
    assert np.asarray(ours).dtype == np.asarray(reference).dtype


@st.composite
def orthogonal_selections(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """Per dimension, a slice, an integer, or an index array (any order, repeats and
    negative indices allowed), with at least one array."""
    parts: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "int", "array", "array"]))
        if kind == "slice":
            parts.append(slice(draw(st.none() | st.integers(0, n)),
                               draw(st.none() | st.integers(0, n)),
                               draw(st.none() | st.integers(1, 3))))
        elif kind == "int":
            parts.append(draw(st.integers(-n, n - 1)))
        else:
            parts.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=1,
                                                max_size=2 * n + 2)), dtype=np.intp))
    if not any(isinstance(part, np.ndarray) for part in parts):
        parts[0] = np.array([draw(st.integers(-shape[0], shape[0] - 1))], dtype=np.intp)
    return tuple(parts)


def numpy_oindex(data: np.ndarray[Any, Any], selection: tuple[Any, ...]) -> Any:
    """numpy's outer indexing, axis by axis (an integer drops its axis)."""
    axis = 0
    for part in selection:
        if isinstance(part, slice):
            data = data[(slice(None),) * axis + (part,)]
            axis += 1
        else:
            data = np.take(data, part, axis=axis)
            axis += not isinstance(part, int)
    return data


def record_get_many(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The keys of every ``MemoryStore.get_many`` call from now on, call by call."""
    asked: list[list[str]] = []
    real_get_many = MemoryStore.get_many

    def get_many(store: MemoryStore, keys: Any) -> Any:
        asked.append(list(keys))
        return real_get_many(store, keys)

    monkeypatch.setattr(MemoryStore, "get_many", get_many)
    return asked


def check_orthogonal_read(a: Any, expected: np.ndarray[Any, Any], data: st.DataObject,
                          threads: int) -> None:
    """A drawn ``oindex`` selection of ``a`` reads numpy's values with the Python path,
    and the same bytes with the engine."""
    selection = data.draw(orthogonal_selections(expected.shape), label="selection")
    with zk.config.set(threads=threads, engine="auto"):
        ours = a.oindex[selection]
        with zk.config.set(engine="python"):
            reference = a.oindex[selection]
    np.testing.assert_array_equal(np.asarray(reference), numpy_oindex(expected, selection))
    assert np.asarray(ours).tobytes() == np.asarray(reference).tobytes()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=arrays(), data=st.data(), threads=st.sampled_from([1, 2]), place=PLACES)
def test_both_engines_read_orthogonal_selections_as_numpy(
        case: tuple[Any, Any], data: st.DataObject, threads: int, place: str,
        tmp_path_factory: Any) -> None:
    """``oindex`` selections with index arrays go to the engine's grid reads (a chunk
    an array meets in several runs decoded once for all of them); the Python path and
    numpy agree, from every kind of store."""
    check_orthogonal_read(placed(case[0], place, tmp_path_factory, data), case[1], data,
                          threads)


@pytest.mark.parametrize("compressors", [None, "auto"])
def test_an_orthogonal_read_decodes_each_chunk_once(
        monkeypatch: pytest.MonkeyPatch, compressors: Any) -> None:
    """S10's ``oindex``: rows that fall into one chunk in four runs, and columns in two
    chunks, go to one engine call, which is asked for each chunk's value once."""
    data = np.arange(40 * 4 * 10, dtype="<f8").reshape(40, 4, 10)
    a = zk.create_array(MemoryStore(), shape=data.shape, chunks=(10, 1, 5), dtype="<f8",
                        compressors=compressors, fill_value=-1)
    a[:30] = data[:30]  # rows 30 and on are in chunks not stored
    expected = data.copy()
    expected[30:] = -1
    asked = record_get_many(monkeypatch)
    monkeypatch.setattr(read_engine, "python_batch_reader",
                        lambda *_: pytest.fail("read by the Python path"))
    rows = np.array([0, 3, 4, 9, 2, 35])
    columns = np.array([0, 5, 9, 6])
    with zk.config.set(engine="auto"):
        ours = a.oindex[rows, :, columns]
    np.testing.assert_array_equal(ours, numpy_oindex(expected, (rows, slice(None), columns)))
    assert len(asked) == 1
    assert sorted(asked[0]) == sorted(set(asked[0]))
    assert len(asked[0]) == 2 * 4 * 2


def test_scattered_index_arrays_in_several_dimensions_take_the_python_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Index arrays that break into runs by the hundred in two dimensions of one chunk
    would have the engine hold a region for each of their 90,000 combinations: the
    Python path reads them (numpy's indexing), with the same values."""
    rng = np.random.default_rng(9)
    data = rng.integers(0, 1000, (300, 300), dtype="<i4")
    a = zk.create_array(MemoryStore(), shape=data.shape, chunks=(300, 300), dtype="<i4",
                        compressors=None)
    a[...] = data
    rows, columns = rng.permutation(300), rng.permutation(300)
    monkeypatch.setattr(native, "decode_grid_values_into",
                        lambda *_, **__: pytest.fail("read by the engine's grid"))
    with zk.config.set(engine="auto"):
        np.testing.assert_array_equal(a.oindex[rows, columns], data[np.ix_(rows, columns)])
        # A few runs each: the engine's.
        monkeypatch.undo()
        calls: list[int] = []
        real = native.decode_grid_values_into

        def read(*args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            return real(*args, **kwargs)

        monkeypatch.setattr(native, "decode_grid_values_into", read)
        few = np.array([5, 9, 10, 2])
        np.testing.assert_array_equal(a.oindex[few, few], data[np.ix_(few, few)])
        assert calls == [1]


def test_points_from_memory_are_read_by_the_engine_in_one_fetch(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Many points from a store whose values Python fetches: the engine groups them by
    chunk and asks for each chunk touched once, in one ``get_many``; points in chunks not
    stored get the fill value."""
    data = np.arange(30 * 20, dtype="<i4").reshape(30, 20)
    a = zk.create_array(MemoryStore(), shape=data.shape, chunks=(7, 6), dtype="<i4",
                        fill_value=-5, compressors=[{"name": "zstd"}])
    a[:14] = data[:14]
    expected = data.copy()
    expected[14:] = -5
    rng = np.random.default_rng(5)
    points = (rng.integers(0, 30, 200), rng.integers(0, 20, 200))
    asked = record_get_many(monkeypatch)
    with zk.config.set(engine="auto"):
        ours = a.vindex[points]
    np.testing.assert_array_equal(ours, expected[points])
    touched = {(int(r) // 7, int(c) // 6) for r, c in zip(*points, strict=True)}
    assert len(asked) == 1
    assert sorted(asked[0]) == sorted(f"c/{i}/{j}" for i, j in touched)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_both_engines_name_a_corrupt_chunk(zarr_format: int) -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(8,), chunks=(4,), dtype="<i4", zarr_format=zarr_format,
                        compressors=[{"name": "zstd", "configuration": {"level": 1}}]
                        if zarr_format == 3 else numcodecs.Zstd(1))
    a[...] = np.arange(8)
    key = "c/1" if zarr_format == 3 else "1"
    store.set(key, b"\x28\xb5\x2f\xfd" + b"\x00" * 12)  # a zstd frame header, then garbage
    for engine in ("auto", "python"):
        with zk.config.set(engine=engine), pytest.raises(ChunkDecodeError, match=key):
            a[...]
        with zk.config.set(engine=engine):
            np.testing.assert_array_equal(a[:4], np.arange(4))  # the good chunk still reads


def test_arrays_the_engine_does_not_cover_take_the_python_path() -> None:
    filtered = zk.create_array({}, shape=(4,), dtype="<f8", zarr_format=2,
                               filters=[numcodecs.Delta(dtype="<f8")])
    strings = zk.create_array({}, shape=(2,), dtype=str)
    raw = zk.create_array({}, shape=(4,), dtype="u1", compressors=None)
    covered = zk.create_array({}, shape=(4,), dtype="u1")
    with zk.config.set(engine="auto"):  # whatever ZARRKIT_ENGINE says
        assert [x.engine for x in (filtered, strings, raw)] == ["python"] * 3
        assert covered.engine == "native"
        # array.info tells it too, and prints zarr-python's rows only
        assert [x.info.engine for x in (filtered, raw, covered)] == ["python", "python",
                                                                     "native"]
        assert "ngine" not in str(covered.info) + str(covered.info_complete())
    with zk.config.set(engine="python"):
        assert covered.engine == covered.info.engine == "python"


@st.composite
def sharded_arrays(draw: st.DrawFn) -> tuple[Any, np.ndarray[Any, Any]]:
    ndim = draw(st.integers(1, 3))
    inner = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    shards = tuple(i * draw(st.integers(1, 3)) for i in inner)
    shape = tuple(draw(st.integers(1, 2 * s + 1)) for s in shards)
    dtype = np.dtype(draw(st.sampled_from(["u1", "<i2", "<f4", "<f8", "<c16"])))
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}},
              *draw(st.sampled_from(V3_COMPRESSORS))]
    index_codecs = [{"name": "bytes", "configuration": {"endian": "little"}},
                    *([{"name": "crc32c"}] if draw(st.booleans()) else [])]
    store = MemoryStore()
    a = zk.create_array(store, shape=shape, chunks=shards, dtype=dtype, fill_value=0,
                        serializer={"name": "sharding_indexed", "configuration": {
                            "chunk_shape": list(inner), "codecs": codecs,
                            "index_codecs": index_codecs,
                            "index_location": draw(st.sampled_from(["start", "end"]))}},
                        compressors=None)
    data = draw(hnp.arrays(dtype, shape, elements=hnp.from_dtype(dtype, allow_nan=False)))
    # Unwritten shards, and inner chunks left empty (all fill), in some of them.
    region = tuple(slice(0, draw(st.integers(0, n))) for n in shape)
    expected = np.zeros(shape, dtype)
    expected[region] = data[region]
    a[region] = data[region]
    return a, expected


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=sharded_arrays(), data=st.data(), threads=st.sampled_from([1, 2]),
       place=PLACES)
def test_both_engines_read_sharded_arrays_as_numpy(case: tuple[Any, Any], data: st.DataObject,
                                                   threads: int, place: str,
                                                   tmp_path_factory: Any) -> None:
    """From a DirectoryStore or a ZIP archive's stored members, every slice selection goes
    through the engine (shards read whole, or index and wanted inner chunks with pread);
    from memory (and compressed members), whole shards."""
    a, expected = case
    a = placed(a, place, tmp_path_factory, data)
    selection = data.draw(st.sampled_from([Ellipsis, "drawn"]), label="kind")
    if selection == "drawn":
        selection = data.draw(selections(expected.shape), label="selection")
    with zk.config.set(threads=threads, engine="auto"):
        assert a.engine == "native"
        ours = a[selection]
        with zk.config.set(engine="python"):
            reference = a[selection]
    np.testing.assert_array_equal(np.asarray(reference), expected[selection])
    assert np.asarray(ours).tobytes() == np.asarray(reference).tobytes()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=sharded_arrays(), data=st.data(), threads=st.sampled_from([1, 2]),
       place=st.sampled_from(["directory", "zip", "memory"]))
def test_both_engines_read_orthogonal_selections_of_shards_as_numpy(
        case: tuple[Any, Any], data: st.DataObject, threads: int, place: str,
        tmp_path_factory: Any) -> None:
    """From shard files, ``oindex`` selections group their pieces by shard and by inner
    chunk in the engine; the Python path and numpy agree."""
    check_orthogonal_read(placed(case[0], place, tmp_path_factory, data), case[1], data,
                          threads)


def test_a_corrupt_shard_read_whole_is_named() -> None:
    store = MemoryStore()
    a = zk.create_array(store, shape=(8,), chunks=(4,), shards=(8,), dtype="<i4",
                        compressors=None)
    a[...] = np.arange(8)
    raw = bytearray(store.get("c/0"))
    raw[-20] ^= 0xFF  # inside the index (bytes + crc32c by default)
    store.set("c/0", bytes(raw))
    for engine in ("auto", "python"):
        with zk.config.set(engine=engine), pytest.raises(ChunkDecodeError, match="c/0"):
            a[...]


def stored_values(store: Any) -> dict[str, bytes]:
    """Every key's value; for a DirectoryStore, after checking that no temporary file is
    left anywhere under its root or in its side directory."""
    if isinstance(store, DirectoryStore):
        root = Path(store.root)
        names = [p.name for p in root.rglob("*")]
        side = root.parent / f"{TEMP_PREFIX}{root.name}"
        names += [p.name for p in side.rglob("*") if p.name != "locks"] if side.is_dir() else []
        assert not [name for name in names if name.startswith(TEMP_PREFIX)]
    return {key: bytes(store.get(key)) for key in store.list()}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=arrays(), data=st.data(), threads=st.sampled_from([1, 2]),
       write_empty=st.booleans(), one_by_one=st.booleans(),
       place=st.sampled_from(["memory", "directory"]), zero=st.booleans(),
       call_bytes=st.sampled_from([1, 100, 4 << 20]), plan_batch=st.sampled_from([3, 8192]))
def test_both_engines_store_the_same_bytes(case: tuple[Any, Any], data: st.DataObject,
                                           threads: int, write_empty: bool,
                                           one_by_one: bool, place: str, zero: bool,
                                           call_bytes: int, plan_batch: int,
                                           tmp_path_factory: Any) -> None:
    """A write through the engine (whole chunks) stores exactly the Python path's bytes,
    and leaves out (or deletes) the same all-fill chunks, whether the engine encodes
    chunks in batches (small chunks) or one per pool thread (``one_by_one``: what chunks
    over ``NATIVE_WRITE_CHUNK_BYTES`` take), and whether the store takes the bytes
    (memory) or the engine writes the files itself (a directory), leaving no temporary
    file behind; ``call_bytes`` cuts the engine's file-writing calls small, so that one
    is prepared while the last one writes, and ``plan_batch`` cuts the plan small, so that
    calls queue up across plan batches (partial chunks written between them)."""
    source, expected = case
    selection = data.draw(st.sampled_from([Ellipsis, "drawn"]), label="kind")
    if selection == "drawn":
        selection = data.draw(selections(expected.shape), label="selection")
    value = np.asarray(expected[selection])
    if zero and value.size:  # all-fill chunks (over stored ones: deleted unless write_empty)
        value = value.copy()
        value.reshape(-1)[: value.size // 2] = 0
    stores = []
    cutoff = 0 if one_by_one else write_engine.NATIVE_WRITE_CHUNK_BYTES
    for engine in ("auto", "python"):
        store: Any = MemoryStore()
        if place == "directory":
            store = DirectoryStore(tmp_path_factory.mktemp("written") / "a")
        store.set_many((key, source.store.get(key)) for key in source.store.list())
        a = zk.open_array(store, mode="r+", write_empty_chunks=write_empty)
        with zk.config.set(threads=threads, engine=engine), \
                mock.patch.object(write_engine, "NATIVE_WRITE_CHUNK_BYTES", cutoff), \
                mock.patch.object(write_engine, "_NATIVE_FILE_WRITE_BYTES", call_bytes), \
                mock.patch.object(read_engine, "PLAN_BATCH", plan_batch):
            a[selection] = value[::-1] if value.ndim else value
        stores.append(stored_values(store))
    assert stores[0] == stores[1]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=sharded_arrays(), data=st.data(), threads=st.sampled_from([1, 2]),
       zero=st.booleans(), place=st.sampled_from(["memory", "directory"]),
       call_bytes=st.sampled_from([1, 4 << 20]))
def test_both_engines_store_the_same_shards(case: tuple[Any, Any], data: st.DataObject,
                                            threads: int, zero: bool, place: str,
                                            call_bytes: int, tmp_path_factory: Any) -> None:
    """Shards a write covers whole are encoded by the engine (the others by the Python
    path): both store the same bytes, leave out the same all-fill inner chunks, and delete
    the same all-fill shards, whether the store takes each shard's bytes (memory) or the
    engine writes its index and inner chunks to the file one after another (a directory;
    ``call_bytes`` of 1 makes each call one shard, which shares out its inner chunks).
    (Not for gzip, whose inner chunks differ in their header's time stamp, covered with a
    mask for plain chunks above.)"""
    source, expected = case
    assume(b"gzip" not in source.store.get("zarr.json"))
    selection = data.draw(st.sampled_from([Ellipsis, "drawn"]), label="kind")
    if selection == "drawn":
        selection = data.draw(selections(expected.shape), label="selection")
    value = np.asarray(expected[selection])
    if zero and value.size:  # some all-fill inner chunks and shards
        value = value.copy()
        value.reshape(-1)[: value.size // 2] = 0
    stores = []
    for engine in ("auto", "python"):
        store: Any = MemoryStore()
        if place == "directory":
            store = DirectoryStore(tmp_path_factory.mktemp("sharded") / "a")
        store.set_many((key, source.store.get(key)) for key in source.store.list())
        a = zk.open_array(store, mode="r+")
        with zk.config.set(threads=threads, engine=engine), \
                mock.patch.object(write_engine, "_NATIVE_FILE_WRITE_BYTES", call_bytes):
            a[selection] = value
        stores.append(stored_values(store))
    assert stores[0] == stores[1]


@pytest.mark.parametrize("shards", [None, (4,)])
def test_chunk_files_that_are_links_are_read_through_the_store(tmp_path: Any,
                                                               shards: Any) -> None:
    """The engine never follows a link: a chunk (or shard) file that is one is read
    through the store, which follows links inside the store and refuses ones that lead
    out of it, with either engine; so does a chunk directory that is a link."""
    store = DirectoryStore(tmp_path / "a")
    a = zk.create_array(store, shape=(8,), chunks=(2,), shards=shards, dtype="<i4",
                        compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    a[...] = np.arange(8)
    first, second = ("c/0", "c/1") if shards else ("c/1", "c/2")
    file = tmp_path / "a" / second
    file.unlink()
    file.symlink_to(tmp_path / "a" / first)  # inside the store: followed
    copied = np.arange(8)
    if shards:
        copied[4:8] = [0, 1, 2, 3]
    else:
        copied[4:6] = [2, 3]
    for engine in ("auto", "python"):
        with zk.config.set(engine=engine):
            np.testing.assert_array_equal(a[...], copied)
    (tmp_path / "outside").write_bytes((tmp_path / "a" / first).read_bytes())
    file.unlink()
    file.symlink_to(tmp_path / "outside")
    for engine in ("auto", "python"):
        with zk.config.set(engine=engine), pytest.raises(StoreEscapeError):
            a[...]
    file.unlink()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "a" / "c").rename(tmp_path / "elsewhere" / "c")
    (tmp_path / "a" / "c").symlink_to(tmp_path / "elsewhere" / "c")
    fresh = zk.open_array(DirectoryStore(tmp_path / "a"))
    for engine in ("auto", "python"):
        with zk.config.set(engine=engine), pytest.raises(StoreEscapeError):
            fresh[...]


@pytest.mark.parametrize("order", ["C", "F"])
def test_large_reads_of_raw_chunks_from_memory_match_numpy(order: str) -> None:
    """Raw chunks read into an output of 1 MiB and more from a store that hands over
    bytes are copied by the engine's threads (S10's layout); both engines give numpy's."""
    data = np.random.default_rng(3).random((24252, 4, 1, 10))
    a = zk.create_array({}, shape=data.shape, chunks=(6063, 1, 1, 5), dtype="<f8",
                        compressors=None, zarr_format=2, order=order)
    a[...] = data
    for selection in [slice(None, None, 7), (slice(5, None, 3), slice(None), 0),
                      (slice(None, None, -2), 1), Ellipsis]:
        for engine in ("auto", "python"):
            with zk.config.set(engine=engine, threads=2):
                np.testing.assert_array_equal(a[selection], data[selection])


@pytest.mark.parametrize("place", ["memory", "directory"])
def test_chunk_indices_beyond_63_bits_are_read_as_python_reads_them(
        place: str, tmp_path: Any) -> None:
    """A dimension of more than 2**63 elements has chunk indices the engine does not hold:
    its basic selections take the Python path, with the same values on either engine."""
    store = MemoryStore() if place == "memory" else DirectoryStore(tmp_path / "a")
    a = zk.create_array(store, shape=(2**64 + 3, 2), chunks=(1, 2), dtype="<i4",
                        fill_value=-1)
    a[2**64 + 1] = [4, 5]
    a[3] = [6, 7]
    for engine in ("auto", "python"):
        with zk.config.set(engine=engine):
            assert a[2**64:].tolist() == [[-1, -1], [4, 5], [-1, -1]]
            assert a[-2].tolist() == [4, 5]
            assert a[2:4, 1].tolist() == [-1, 7]


def test_a_basic_read_from_memory_fetches_its_chunks_in_one_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine names a basic selection's chunks itself and reads them in one call
    from the values of one ``get_many``, the absent ones included, which it fills."""
    data = np.arange(12 * 10, dtype="<i4").reshape(12, 10)
    a = zk.create_array(MemoryStore(), shape=(12, 10), chunks=(3, 4), dtype="<i4",
                        fill_value=-1)
    a[:9] = data[:9]  # the last chunk row is not stored
    expected = data.copy()
    expected[9:] = -1
    asked = record_get_many(monkeypatch)
    calls: list[int] = []
    real_read = native.decode_grid_values_into

    def read(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real_read(*args, **kwargs)

    monkeypatch.setattr(native, "decode_grid_values_into", read)
    monkeypatch.setattr(native, "decode_into", lambda *_: pytest.fail("chunk by chunk"))
    with zk.config.set(engine="auto"):
        np.testing.assert_array_equal(a[1::2, 3:], expected[1::2, 3:])
    assert calls == [1]
    assert asked == [[f"c/{i}/{j}" for i in range(4) for j in range(3)]]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=arrays(), data=st.data(), threads=st.sampled_from([1, 2]), place=PLACES)
def test_both_engines_read_points_as_numpy(case: tuple[Any, Any], data: st.DataObject,
                                           threads: int, place: str,
                                           tmp_path_factory: Any) -> None:
    """Pointwise selections of many points (``vindex`` coordinates, and masks) are read
    by the engine (grouped and copied in Rust), from files or from the values of one
    fetch; the Python path and numpy agree."""
    a, expected = case
    a = placed(a, place, tmp_path_factory, data)
    shape = expected.shape
    if data.draw(st.booleans(), label="mask"):
        selection: Any = data.draw(hnp.arrays(np.bool_, shape), label="mask array")
    else:
        count = data.draw(st.integers(33, 120), label="points")
        selection = tuple(
            np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=count,
                                        max_size=count)), dtype=np.intp) for n in shape)
    with zk.config.set(threads=threads, engine="auto"):
        assert a.engine == "native"
        ours = a.vindex[selection]
        with zk.config.set(engine="python"):
            reference = a.vindex[selection]
    np.testing.assert_array_equal(reference, expected[selection])
    assert ours.tobytes() == reference.tobytes()


def test_stored_zip_members_are_read_by_the_engine(tmp_path: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine reads a ZIP archive's stored members at their offsets itself (plain
    chunks and the inner chunks of shards); the store reads only compressed members."""
    data = np.arange(24 * 24, dtype="<u2").reshape(24, 24)
    plain = zk.create_array({}, shape=(24, 24), chunks=(8, 8), dtype="<u2")
    sharded = zk.create_array({}, shape=(24, 24), chunks=(4, 4), shards=(8, 8), dtype="<u2")
    for source in (plain, sharded):
        source[...] = data
        deflated = frozenset({"c/1/1"})
        a = in_zip(source, _Factory(tmp_path / str(id(source))), deflated)
        fetched: list[str] = []
        real_get = ZipStore._get

        def spy(store: ZipStore, key: str, real_get: Any = real_get,
                fetched: list[str] = fetched) -> Any:
            fetched.append(key)
            return real_get(store, key)

        monkeypatch.setattr(ZipStore, "_get", spy)
        with zk.config.set(engine="auto"):
            np.testing.assert_array_equal(a[...], data)
            assert fetched == ["g/a/c/1/1"]  # only the compressed member went by the store
            fetched.clear()
            np.testing.assert_array_equal(a[3:21:2, 5:19], data[3:21:2, 5:19])
            assert set(fetched) <= {"g/a/c/1/1"}
        monkeypatch.undo()


def test_a_stored_zip_member_with_a_bad_checksum_is_refused(tmp_path: Any) -> None:
    """A stored member whose bytes no longer match its CRC-32 raises a zarrkit error on
    both engines (the engine checks the checksum of a member it reads whole), naming it."""
    source = zk.create_array({}, shape=(16,), chunks=(8,), dtype="<i4")
    source[...] = np.arange(16)
    a = in_zip(source, _Factory(tmp_path))
    _, _, offset, length, crc = a.store.value_range("g/a/c/1")
    assert crc is not None
    path = a.store.path
    a.store.close()
    with open(path, "r+b") as archive:
        archive.seek(offset + length - 1)
        last = archive.read(1)
        archive.seek(offset + length - 1)
        archive.write(bytes([last[0] ^ 0xFF]))
    a = zk.open_array(ZipStore(path, mode="r"), path="g/a")
    for engine, error in (("auto", ChunkDecodeError), ("python", ZarrkitError)):
        with zk.config.set(engine=engine):
            with pytest.raises(error, match="CRC-32"):
                a[...]
            np.testing.assert_array_equal(a[:8], np.arange(8))  # the good chunk still reads


class _Factory:
    """tmp_path_factory's ``mktemp`` over a plain directory."""

    def __init__(self, root: Any) -> None:
        self.root = root

    def mktemp(self, name: str) -> Any:
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path


def test_whole_shards_from_a_remote_store_are_decoded_by_the_engine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-all from a store that prefers whole values goes through the engine, batch
    by batch (the next fetched while one decodes); a partial read keeps the Python path,
    which fetches byte ranges only."""
    store = RemoteLike()
    a = zk.create_array(store, shape=(64, 64), chunks=(4, 4), shards=(8, 8), dtype="<u2")
    data = np.arange(64 * 64, dtype="<u2").reshape(64, 64)
    a[...] = data
    batches: list[int] = []
    real = native.decode_shards_into

    def spy(chain: Any, target: Any, tasks: Any, threads: int) -> Any:
        batches.append(len(tasks))
        return real(chain, target, tasks, threads)

    monkeypatch.setattr(native, "decode_shards_into", spy)
    with zk.config.set(engine="auto", threads=2):
        np.testing.assert_array_equal(a[...], data)
        assert len(batches) > 1 and sum(batches) == 64  # 64 shards, in batches
        batches.clear()
        np.testing.assert_array_equal(a[3:13, 5:9], data[3:13, 5:9])
        assert batches == []

