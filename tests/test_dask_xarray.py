"""Dask and xarray on zarrkit: zarrkit.dask (to_dask, store, from_dask) and zarrkit.xarray
(the ``engine="zarrkit"`` backend and to_zarrkit), against numpy, a dask.distributed
cluster of worker processes, and xarray's own zarr backend on zarr-python."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")
pd = pytest.importorskip("pandas")

import zarrkit as zk  # noqa: E402
from zarrkit.dask import (  # noqa: E402
    ArraySource,
    UnsafeWriteError,
    aligned_chunks,
    grid_boundaries,
    is_aligned,
)
from zarrkit.errors import ChunkDecodeError, UnsupportedOperationError  # noqa: E402
from zarrkit.storage import MemoryStore  # noqa: E402
from zarrkit.xarray import ZarrkitBackendEntrypoint, to_zarrkit  # noqa: E402


@pytest.fixture(autouse=True)
def _synchronous_dask() -> Iterator[None]:
    # Tests compute in this process unless they say otherwise (the cluster tests do).
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        yield c


class CountingStore(MemoryStore):
    """A memory store counting the reads of each key."""

    def __init__(self, data: dict[str, bytes] | None = None) -> None:
        super().__init__(data)
        self.reads: Counter[str] = Counter()

    def _get(self, key: str) -> bytes | None:
        self.reads[key] += 1
        return super()._get(key)

    def chunk_reads(self, prefix: str) -> int:
        return sum(n for key, n in self.reads.items() if key.startswith(prefix)
                   and not key.rsplit("/", 1)[-1].startswith((".z", "zarr.json")))


def copy_to_counting_store(path: Path) -> CountingStore:
    data = {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}
    return CountingStore(data)


# --- dask: reading -------------------------------------------------------------------------

@pytest.mark.parametrize(("options", "blocks"), [
    ({"chunks": (4, 5)}, ((4, 4, 2), (5, 5, 2))),
    ({"chunks": (2, 3), "shards": (4, 6)}, ((4, 4, 2), (6, 6))),   # one block per shard
    ({"chunks": (3, 12), "zarr_format": 2}, ((3, 3, 3, 1), (12,))),
])
def test_to_dask_has_one_task_per_chunk_or_shard(options: dict[str, Any],
                                                 blocks: tuple[Any, ...]) -> None:
    data = np.arange(120, dtype="i4").reshape(10, 12)
    a = zk.from_array({}, data=data, **options)
    x = zk.to_dask(a)
    assert x.chunks == blocks
    assert len(x.__dask_graph__()) == math.prod(len(b) for b in blocks) == x.npartitions
    np.testing.assert_array_equal(x.compute(), data)
    np.testing.assert_array_equal(a.to_dask()[3:7, 1:11].compute(), data[3:7, 1:11])


def test_to_dask_chunks_argument() -> None:
    a = zk.from_array({}, data=np.arange(100.0), chunks=(10,))
    assert zk.to_dask(a, chunks=25).chunks == ((25, 25, 25, 25),)
    assert all(c % 10 == 0 for c in zk.to_dask(a, chunks="auto").chunks[0][:-1])
    assert zk.to_dask(a).name == zk.to_dask(a).name  # deterministic, as dask names go


def test_to_dask_reads_lazily_through_zarrkit() -> None:
    store = CountingStore()
    a = zk.from_array(store, data=np.arange(40), chunks=(10,), name="a")
    store.reads.clear()
    x = zk.to_dask(a)
    assert store.chunk_reads("a/") == 0
    assert int(x[12:15].sum().compute()) == 12 + 13 + 14
    assert store.chunk_reads("a/") == 1   # the one chunk the selection needs


def test_to_dask_zero_dimensional_and_empty() -> None:
    scalar = zk.from_array({}, data=np.array(4.5))
    assert zk.to_dask(scalar).compute() == 4.5
    empty = zk.create_array({}, shape=(0, 3), chunks=(2, 3), dtype="u1")
    assert zk.to_dask(empty).compute().shape == (0, 3)


# --- dask: what tasks carry ---------------------------------------------------------------

def test_array_source_pickles_small_and_reopens_once_per_process(tmp_path: Path) -> None:
    data = np.arange(64, dtype="f8").reshape(8, 8)
    a = zk.from_array(tmp_path / "s.zarr", data=data, chunks=(2, 2), shards=(4, 4))
    payload = pickle.dumps(ArraySource(a))
    assert len(payload) < 4096
    first, second = pickle.loads(payload), pickle.loads(payload)
    assert first is second            # reopened once, kept for the next tasks
    np.testing.assert_array_equal(first[2:6, 1:3], data[2:6, 1:3])


def test_array_source_reopens_a_read_only_zip_store(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with zk.storage.ZipStore(path, mode="w") as store:
        zk.from_array(store, data=np.arange(10), chunks=(3,))
    with zk.storage.ZipStore(path) as store:
        source = pickle.loads(pickle.dumps(ArraySource(zk.open_array(store, mode="r"))))
        np.testing.assert_array_equal(source[...], np.arange(10))
        writable = zk.storage.ZipStore(tmp_path / "b.zip", mode="w")
        b = zk.create_array(writable, shape=(3,), dtype="u1")
        with pytest.raises(UnsupportedOperationError, match="one writer"):
            pickle.dumps(ArraySource(b))
        writable.close()


def test_memory_store_stays_in_its_process() -> None:
    a = zk.from_array({}, data=np.arange(10), chunks=(4,))
    with pytest.raises(UnsupportedOperationError, match="MemoryStore lives in this process"):
        pickle.dumps(ArraySource(a))
    with dask.config.set(scheduler="threads"):   # threads share it: fine
        assert int(zk.to_dask(a).sum().compute()) == 45


def test_import_zarrkit_does_not_import_dask() -> None:
    code = ("import sys, zarrkit as zk; assert 'dask' not in sys.modules; "
            "assert zk.to_dask and zk.store and zk.from_dask; "
            "assert 'dask' not in sys.modules; "  # zarrkit.dask imports dask when called
            "a = zk.from_array({}, data=[1, 2]); assert a.to_dask().sum().compute() == 3; "
            "assert 'dask' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# --- dask: writing -------------------------------------------------------------------------

def test_alignment_helpers() -> None:
    a = zk.create_array({}, shape=(10, 6), chunks=(2, 3), shards=(4, 6), dtype="u1")
    assert grid_boundaries(a) == [[0, 4, 8, 10], [0, 6]]
    assert is_aligned(((8, 2), (6,)), a) and not is_aligned(((2, 8), (6,)), a)
    assert aligned_chunks(((3, 3, 3, 1), (2, 2, 2)), a) == ((4, 4, 2), (6,))


def test_aligned_write_one_task_per_block_no_rechunk() -> None:
    z = zk.create_array({}, shape=(12, 8), chunks=(3, 4), dtype="i8")
    x = da.from_array(np.arange(96).reshape(12, 8), chunks=(6, 4))
    delayed = zk.store(x, z, compute=False)
    graph = dict(delayed.__dask_graph__())
    assert not any("rechunk" in str(key) for key in graph)
    assert sum("store" in str(key) for key in graph) in (x.npartitions, x.npartitions + 1)
    dask.compute(delayed)
    np.testing.assert_array_equal(z[...], np.arange(96).reshape(12, 8))


@pytest.mark.parametrize("shards", [None, (4,)])
def test_unaligned_write_is_rechunked_by_default(shards: tuple[int, ...] | None) -> None:
    z = zk.create_array({}, shape=(10,), chunks=(2,), shards=shards, dtype="i8")
    x = da.arange(10, chunks=3)
    delayed = zk.store(x, z, compute=False)
    assert any("rechunk" in str(key) for key in dict(delayed.__dask_graph__()))
    dask.compute(delayed)
    np.testing.assert_array_equal(z[:], np.arange(10))


def test_unaligned_write_with_lock_false_is_refused_without_cross_process_locks(
        tmp_path: Path) -> None:
    z = zk.create_array(tmp_path / "u.zarr", shape=(10,), chunks=(4,), dtype="i8")
    with pytest.raises(UnsafeWriteError, match="do not exclude other processes"):
        zk.store(da.arange(10, chunks=5), z, lock=False)
    assert z.nchunks_initialized == 0
    with zk.config.set(file_locks=True):  # OS file locks: processes are excluded
        zk.store(da.arange(10, chunks=5), z, lock=False)
    np.testing.assert_array_equal(z[:], np.arange(10))


def test_unaligned_write_with_lock_true_in_threads() -> None:
    z = zk.create_array({}, shape=(100,), chunks=(7,), dtype="i8")
    with dask.config.set(scheduler="threads", num_workers=4):
        zk.store(da.arange(100, chunks=3), z, lock=True)   # 34 blocks over 15 chunks
    np.testing.assert_array_equal(z[:], np.arange(100))


def test_store_checks_shape_and_writability() -> None:
    z = zk.create_array({}, shape=(4,), dtype="u1")
    with pytest.raises(ValueError, match="shape"):
        zk.store(da.zeros(5, dtype="u1"), z)
    ro = zk.open_array(z.store, mode="r")
    with pytest.raises(PermissionError):
        zk.store(da.zeros(4, dtype="u1"), ro)


def test_from_dask_defaults_and_options() -> None:
    x = da.random.default_rng(1).random((9, 7), chunks=(4, 7))
    a = zk.from_dask(x, {}, "r")
    assert a.chunks == (4, 7) and a.path == "r" and a.dtype == np.float64
    np.testing.assert_array_equal(a[...], x.compute())
    b = zk.from_dask(x, {}, dtype="f4", chunks=(3, 7), zarr_format=2)
    assert b.dtype == np.float32 and b.zarr_format == 2
    np.testing.assert_allclose(b[...], x.compute().astype("f4"))


# --- dask.distributed: worker processes --------------------------------------------------

def test_round_trip_on_a_cluster_of_processes(client: Any, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    expected = rng.random((60, 40))
    x = da.from_array(expected, chunks=(20, 20))
    with dask.config.set(scheduler=client):
        plain = zk.from_dask(x, tmp_path / "plain.zarr")
        sharded = zk.from_dask(x, tmp_path / "sharded.zarr", chunks=(10, 10), shards=(20, 20))
        v2 = zk.from_dask(x, tmp_path / "v2.zarr", zarr_format=2, chunks=(20, 20))
        for a in (plain, sharded, v2):
            reread = zk.open_array(a.store, mode="r")
            y = zk.to_dask(reread)
            assert len(y.__dask_graph__()) == 6  # one task per chunk, or per shard
            np.testing.assert_array_equal(y.compute(), expected)
        # Unaligned blocks (15x25 over 20x20 chunks): rechunked by default.
        default = zk.create_array(tmp_path / "d.zarr", shape=x.shape, chunks=(20, 20),
                                  dtype="f8")
        zk.store(x.rechunk((15, 25)), default)
        np.testing.assert_array_equal(default[...], expected)


def test_unaligned_locked_write_on_a_cluster_needs_file_locks(client: Any,
                                                              tmp_path: Path) -> None:
    expected = np.arange(60 * 40, dtype="f8").reshape(60, 40)
    x = da.from_array(expected, chunks=(15, 25))   # blocks share the 20x20 chunks
    z = zk.create_array(tmp_path / "u.zarr", shape=x.shape, chunks=(20, 20), dtype="f8")
    with dask.config.set(scheduler=client):
        with pytest.raises(UnsafeWriteError, match="sent to other processes"):
            zk.store(x, z, lock=True)
        with pytest.raises(UnsafeWriteError):
            zk.store(x, z, lock=False)
        assert z.nchunks_initialized == 0
        with zk.config.set(file_locks=True):
            zk.store(x, z, lock=True)
    np.testing.assert_array_equal(z[...], expected)
    # The workers took OS file locks as the graph asked.
    assert all(client.run(lambda: __import__("zarrkit").config.file_locks).values())


def test_xarray_dask_variables_on_a_cluster(client: Any, tmp_path: Path) -> None:
    ds = xr.Dataset({"v": (("y", "x"), np.arange(48.0).reshape(8, 6))},
                    coords={"y": np.arange(8), "x": np.arange(6)})
    with dask.config.set(scheduler=client):
        to_zarrkit(ds.chunk({"y": 4}), tmp_path / "c.zarr",
                   encoding={"v": {"chunks": (2, 3), "shards": (4, 6)}})
        opened = xr.open_dataset(tmp_path / "c.zarr", engine="zarrkit", chunks={})
        assert opened["v"].chunks == ((2, 2, 2, 2), (3, 3))   # the inner chunks
        opened = xr.open_dataset(tmp_path / "c.zarr", engine="zarrkit",
                                 chunks={"y": 4, "x": 6})
        assert opened["v"].chunks == ((4, 4), (6,))           # the shards
        xr.testing.assert_identical(opened.compute(), ds)


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A directory served over HTTP (whole-file GETs, 404 for missing keys)."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    handler = functools.partial(Quiet, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_remote_http_store_read_by_a_cluster(client: Any, http_root: tuple[Path, str]) -> None:
    root, url = http_root
    ds = xr.Dataset({"v": (("y", "x"), np.arange(48.0).reshape(8, 6))},
                    coords={"y": np.arange(8)}, attrs={"source": "http"})
    to_zarrkit(ds, root / "h.zarr", encoding={"v": {"chunks": (4, 3)}})
    with dask.config.set(scheduler=client):   # workers reopen the HTTPStore from its URL
        opened = xr.open_dataset(f"{url}/h.zarr", engine="zarrkit", chunks={})
        xr.testing.assert_identical(opened.compute(), ds)
        x = zk.to_dask(zk.open_array(f"{url}/h.zarr", path="v", mode="r"))
        assert x.npartitions == 4
        np.testing.assert_array_equal(x.compute(), ds["v"].values)


def test_array_source_of_an_fsspec_store_pickles() -> None:
    pytest.importorskip("fsspec")
    from zarrkit.storage import FsspecStore

    store = FsspecStore("memory://zarrkit-dask-test/a.zarr")
    zk.from_array(store, data=np.arange(6), chunks=(4,))
    source = pickle.loads(pickle.dumps(ArraySource(zk.open_array(store, mode="r"))))
    np.testing.assert_array_equal(source[...], np.arange(6))


# --- xarray: reading ----------------------------------------------------------------------

def example_dataset() -> Any:
    times = pd.date_range("2001-01-01", periods=6, freq="6h")
    temperature = np.arange(24, dtype="f8").reshape(6, 4)
    temperature[1, 2] = np.nan
    ds = xr.Dataset(
        {
            "temp": (("time", "x"), temperature,
                     {"units": "K", "long_name": "temperature", "valid": [1, 2]}),
            "count": (("x",), np.array([1, 2, 3, 4], dtype="i4")),
            "label": (("x",), np.array(["a", "bb", "ccc", "d"], dtype=object)),
            "scalar": ((), 3.5),
        },
        coords={"time": times, "x": [10.0, 20.0, 30.0, 40.0],
                "lat": (("x",), np.linspace(0, 1, 4)),
                "name": (("x",), np.array(["p", "q", "r", "s"]))},
        attrs={"title": "demo", "version": 2},
    )
    ds["temp"].encoding["_FillValue"] = -9999.0   # NaN stored as -9999, CF-encoded
    return ds


def write_with_xarray(ds: Any, path: Path, zarr_format: int, **kwargs: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # zarr-python's v3 string and consolidation notes
        ds.to_zarr(path, zarr_format=zarr_format, consolidated=True, **kwargs)


def open_with_zarr(path: Path, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_zarr(path, **kwargs).load()


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_open_dataset_equals_open_zarr(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "x.zarr"
    write_with_xarray(example_dataset().chunk({"time": 3}), path, zarr_format)
    expected = open_with_zarr(path)
    got = xr.open_dataset(path, engine="zarrkit")
    xr.testing.assert_identical(got.load(), expected)
    assert dict(got.sizes) == {"time": 6, "x": 4}
    assert set(got.coords) == {"time", "x", "lat", "name"}
    assert got["temp"].attrs == {"units": "K", "long_name": "temperature", "valid": [1, 2]}
    assert np.isnan(got["temp"].values[1, 2])                # masked by _FillValue
    assert got["time"].dtype.kind == "M"                     # CF times decoded by xarray
    assert got["temp"].encoding["preferred_chunks"] == {"time": 3, "x": 4}
    dropped = xr.open_dataset(path, engine="zarrkit", drop_variables=["temp", "label"])
    assert set(dropped.data_vars) == {"count", "scalar"}
    raw = xr.open_dataset(path, engine="zarrkit", mask_and_scale=False, decode_times=False)
    assert raw["temp"].values[1, 2] == -9999.0 and raw["time"].dtype.kind == "i"


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_open_dataset_of_a_group_and_sharded_arrays(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "g.zarr"
    ds = xr.Dataset({"v": (("y", "x"), np.arange(48.0).reshape(8, 6))},
                    coords={"y": np.arange(8), "x": np.arange(6)}, attrs={"level": 1})
    encoding = {"v": {"chunks": (2, 3)}}
    if zarr_format == 3:
        encoding["v"]["shards"] = (4, 6)
    write_with_xarray(ds, path, zarr_format, group="sub/level", encoding=encoding)
    expected = open_with_zarr(path, group="sub/level")
    got = xr.open_dataset(path, engine="zarrkit", group="sub/level")
    xr.testing.assert_identical(got.load(), expected)
    # chunks={}: one block per (inner) chunk, sharded or not, as engine="zarr" prefers.
    chunked = xr.open_dataset(path, engine="zarrkit", group="sub/level", chunks={})
    assert chunked["v"].chunks == ((2,) * 4, (3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert chunked["v"].chunks == xr.open_dataset(path, engine="zarr", group="sub/level",
                                                      chunks={})["v"].chunks


def test_open_dataset_is_lazy(tmp_path: Path) -> None:
    path = tmp_path / "lazy.zarr"
    write_with_xarray(example_dataset(), path, 3, encoding={"temp": {"chunks": (2, 2)}})
    store = copy_to_counting_store(path)
    ds = xr.open_dataset(store, engine="zarrkit")
    assert store.chunk_reads("temp/") == 0     # metadata only
    subset = ds["temp"].isel(time=slice(0, 2), x=slice(0, 2))
    assert store.chunk_reads("temp/") == 0
    np.testing.assert_array_equal(subset.values, [[0.0, 1.0], [4.0, 5.0]])
    assert store.chunk_reads("temp/") == 1     # the one chunk the selection needs
    assert ds["temp"].values.shape == (6, 4)
    assert store.chunk_reads("temp/") == 1 + 6


def test_open_dataset_reads_no_chunk_until_values(tmp_path: Path) -> None:
    path = tmp_path / "broken.zarr"
    write_with_xarray(example_dataset(), path, 2)
    (path / "temp" / "0.0").write_bytes(b"not a chunk")     # a corrupt chunk
    ds = xr.open_dataset(path, engine="zarrkit")             # opens: nothing read
    assert ds["count"].values.tolist() == [1, 2, 3, 4]
    with pytest.raises(ChunkDecodeError):
        ds["temp"].load()


def test_open_dataset_indexing_kinds(tmp_path: Path) -> None:
    data = np.arange(60.0).reshape(5, 12)
    ds = xr.Dataset({"v": (("y", "x"), data)})
    path = tmp_path / "i.zarr"
    write_with_xarray(ds, path, 3, encoding={"v": {"chunks": (2, 5)}})
    got = xr.open_dataset(path, engine="zarrkit")["v"]
    np.testing.assert_array_equal(got.isel(y=[0, 4], x=slice(2, 9)).values, data[[0, 4], 2:9])
    points = got.isel(y=xr.DataArray([0, 3, 4], dims="p"), x=xr.DataArray([1, 5, 11], dims="p"))
    np.testing.assert_array_equal(points.values, data[[0, 3, 4], [1, 5, 11]])
    mixed = got.isel(y=xr.DataArray([0, 3], dims="p"), x=slice(1, 4))
    np.testing.assert_array_equal(mixed.values, data[[0, 3], 1:4])
    assert float(got[2, 3]) == data[2, 3]


def test_backend_registration_and_options(tmp_path: Path) -> None:
    assert "zarrkit" in xr.backends.list_engines()
    entrypoint = ZarrkitBackendEntrypoint()
    assert entrypoint.guess_can_open(tmp_path / "a.zarr")
    assert entrypoint.guess_can_open("s3://bucket/a.zarr/")
    assert not entrypoint.guess_can_open("a.nc")
    path = tmp_path / "o.zarr"
    write_with_xarray(example_dataset(), path, 3)
    with pytest.raises(TypeError, match="storage_options"):   # passed to zarrkit's store
        xr.open_dataset(path, engine="zarrkit", storage_options={"anon": True})
    group = zk.open_group(path, mode="r")
    xr.testing.assert_identical(xr.open_dataset(group, engine="zarrkit").load(),
                                open_with_zarr(path))


def test_backend_array_pickles_for_sharded_arrays(tmp_path: Path) -> None:
    path = tmp_path / "p.zarr"
    write_with_xarray(xr.Dataset({"v": (("x",), np.arange(16.0))}), path, 3,
                      encoding={"v": {"chunks": (2,), "shards": (8,)}})
    ds = xr.open_dataset(path, engine="zarrkit", chunks={})
    again = pickle.loads(pickle.dumps(ds))
    np.testing.assert_array_equal(again["v"].values, np.arange(16.0))


# --- xarray: writing ----------------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", [2, 3])
def test_to_zarrkit_is_read_back_by_open_zarr(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "w.zarr"
    original = example_dataset()
    to_zarrkit(original, path, zarr_format=zarr_format)
    back = open_with_zarr(path, consolidated=True)
    xr.testing.assert_identical(back, original)
    assert back["time"].encoding["units"].startswith("hours since 2001-01-01")
    temp = zk.open_array(path / "temp", mode="r")
    assert temp.dimension_names == ("time", "x")
    assert temp.attrs["coordinates"] == "lat name"
    if zarr_format == 2:   # _FillValue is the array's fill value, and the mask
        assert temp.fill_value == -9999.0 and "_FillValue" not in temp.attrs
        assert temp.attrs["_ARRAY_DIMENSIONS"] == ["time", "x"]
    else:                  # NaN fill; _FillValue kept as xarray's base64 attribute
        assert np.isnan(temp.fill_value) and temp.attrs["_FillValue"] == "AAAAAICHw8A="
        assert "_ARRAY_DIMENSIONS" not in temp.attrs
    assert temp[1, 2] == -9999.0
    # ... and by zarrkit's own backend.
    xr.testing.assert_identical(xr.open_dataset(path, engine="zarrkit").load(), original)


@pytest.mark.filterwarnings("ignore:variable label has data in the form of a dask array")
def test_to_zarrkit_writes_dask_variables_in_blocks(tmp_path: Path) -> None:
    original = example_dataset()
    path = tmp_path / "d.zarr"
    to_zarrkit(original.chunk({"time": 2}), path, zarr_format=3,
               encoding={"count": {"chunks": (2,)}, "temp": {"compressors": None}})
    assert zk.open_array(path / "temp").chunks == (2, 4)     # from the dask chunks
    assert zk.open_array(path / "temp").compressors == ()
    assert zk.open_array(path / "count").chunks == (2,)
    xr.testing.assert_identical(open_with_zarr(path), original)


def test_to_zarrkit_modes_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "m.zarr"
    ds = xr.Dataset({"a": (("x",), [1, 2])})
    to_zarrkit(ds, path)
    with pytest.raises(FileExistsError):
        to_zarrkit(ds, path)                                    # "w-"
    to_zarrkit(ds.rename({"a": "b"}), path, mode="w")
    assert set(open_with_zarr(path).data_vars) == {"b"}
    with pytest.raises(ValueError, match="not a variable"):
        to_zarrkit(ds, tmp_path / "e1.zarr", encoding={"nope": {}})
    with pytest.raises(ValueError, match="unexpected encoding"):
        to_zarrkit(ds, tmp_path / "e2.zarr", encoding={"a": {"bogus": 1}})
    with pytest.raises(ValueError, match="mode"):
        to_zarrkit(ds, tmp_path / "e3.zarr", mode="x")


def test_to_zarrkit_round_trips_a_dataset_opened_by_either_backend(tmp_path: Path) -> None:
    source = tmp_path / "s.zarr"
    write_with_xarray(example_dataset(), source, 3,
                      encoding={"temp": {"chunks": (2, 2), "shards": (6, 4)}})
    for engine in ("zarr", "zarrkit"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opened = xr.open_dataset(source, engine=engine)
        target = tmp_path / f"from-{engine}.zarr"
        to_zarrkit(opened, target)
        temp = zk.open_array(target / "temp")
        assert (temp.chunks, temp.shards) == ((2, 2), (6, 4))
        xr.testing.assert_identical(open_with_zarr(target), open_with_zarr(source))
