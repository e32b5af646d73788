"""FsspecStore and URL dispatch: against a real S3-compatible server (moto's server mode,
started by these tests on 127.0.0.1, never the internet), fsspec's ``memory://`` file
system, and a local HTTP server for ``http://`` URLs.

Requests to S3 are counted on the botocore client (its ``before-send`` event): what
zarrkit sends is what the server receives.
"""

from __future__ import annotations

import functools
import logging
import pickle
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import SHARDED_PARTIAL_READS

import zarrkit as zk
from zarrkit.codecs.v3.sharding import coalesce_ranges
from zarrkit.errors import InvalidKeyError, ReadOnlyError, StoreIOError, ZarrkitError
from zarrkit.storage import (
    DirectoryStore,
    FsspecStore,
    HTTPStore,
    MemoryStore,
    SQLiteStore,
    Store,
    ZipStore,
)
from zarrkit.storage.resolve import make_store
from zarrkit.testing import StoreTests

fsspec = pytest.importorskip("fsspec")
pytest.importorskip("s3fs")
boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

# --- the S3 server --------------------------------------------------------------------------


@dataclass
class SentRequest:
    method: str
    url: str
    range: str | None
    if_none_match: str | None


@dataclass
class Requests:
    """The requests a store's S3 client sent while counting."""

    sent: list[SentRequest] = field(default_factory=list)

    def gets(self) -> list[SentRequest]:
        return [r for r in self.sent if r.method == "GET" and "list-type" not in r.url]

    def listings(self) -> list[SentRequest]:
        return [r for r in self.sent if "list-type" in r.url]


def _header(headers: Any, name: str) -> str | None:
    value = headers.get(name)
    return value.decode() if isinstance(value, bytes) else value


class S3Server:
    """moto's S3 server on a free port of 127.0.0.1, with one bucket for the tests."""

    bucket = "zarrkit-tests"

    def __init__(self) -> None:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0,
                                                     verbose=False)
        self.server.start()
        host, port = self.server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        self.client = boto3.client(
            "s3", endpoint_url=self.endpoint, region_name="us-east-1",
            aws_access_key_id="testing", aws_secret_access_key="testing")
        self.client.create_bucket(Bucket=self.bucket)
        self.options: dict[str, Any] = {
            "key": "testing", "secret": "testing", "anon": False,
            "client_kwargs": {"endpoint_url": self.endpoint, "region_name": "us-east-1"},
        }

    def new_url(self, suffix: str = "") -> str:
        """A fresh, empty location in the bucket."""
        return f"s3://{self.bucket}/{uuid.uuid4().hex}{suffix}"

    def new_bucket(self) -> str:
        name = f"b-{uuid.uuid4().hex[:20]}"
        self.client.create_bucket(Bucket=name)
        return name

    def store(self, url: str, **kwargs: Any) -> FsspecStore:
        return FsspecStore(url, storage_options=self.options, **kwargs)

    @contextmanager
    def counting(self, store: FsspecStore) -> Iterator[Requests]:
        """Record every request that ``store``'s S3 client sends inside the block."""
        fs = store.fs
        if getattr(fs, "s3", None) is None:
            fs.connect()
        requests = Requests()

        def hook(request: Any, **_: Any) -> None:
            requests.sent.append(SentRequest(
                request.method, request.url, _header(request.headers, "Range"),
                _header(request.headers, "If-None-Match")))

        fs.s3.meta.events.register("before-send.s3", hook)
        try:
            yield requests
        finally:
            fs.s3.meta.events.unregister("before-send.s3", hook)

    def close(self) -> None:
        self.server.stop()


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    server = S3Server()
    yield server
    server.close()


# --- conformance ----------------------------------------------------------------------------


class TestFsspecStoreS3(StoreTests):
    # Each request is a round trip to the server: fewer threads and keys than for local
    # stores, still enough to race.
    thread_count = 4
    keys_per_thread = 10
    large_value_size = 2**20

    @pytest.fixture(autouse=True)
    def _server(self, s3: S3Server) -> None:
        self.s3 = s3

    def make_store(self, tmp_path: Path) -> Store:
        return self.s3.store(self.s3.new_url(".zarr"))

    def reopen_read_only(self, store: Store) -> Store:
        assert isinstance(store, FsspecStore)
        return self.s3.store(store.url, read_only=True)


class TestFsspecStoreMemory(StoreTests):
    large_value_size = 2**20

    def make_store(self, tmp_path: Path) -> Store:
        return FsspecStore(f"memory://zarrkit-tests/{uuid.uuid4().hex}")

    def reopen_read_only(self, store: Store) -> Store:
        assert isinstance(store, FsspecStore)
        return FsspecStore(store.url, read_only=True)


# --- the store on S3 ------------------------------------------------------------------------


def test_repr_identity_and_url(s3: S3Server) -> None:
    url = s3.new_url()
    store = s3.store(url + "/", path="sub/x.zarr")
    assert store.url == url + "/sub/x.zarr"
    assert repr(store) == f"<FsspecStore(S3FileSystem, {url[5:]}/sub/x.zarr)>"
    assert store.lock_identity == ("fsspec", "s3", url[5:] + "/sub/x.zarr")
    assert store.lock_identity == s3.store(url + "/sub/x.zarr").lock_identity
    assert store.conditional_writes
    with pytest.raises(InvalidKeyError):
        s3.store(url, path="../escape")


def test_get_is_one_request(s3: S3Server) -> None:
    store = s3.store(s3.new_url())
    store.set("a/0", b"x" * 1000)
    with s3.counting(store) as requests:
        assert store.get("a/0") == b"x" * 1000
        assert store.get("a/missing") is None
    # no HEAD for the size first (s3fs does that unless max_concurrency=1)
    assert [(r.method, r.range) for r in requests.sent] == [("GET", None), ("GET", None)]
    with s3.counting(store) as requests:
        assert "a/0" in store and "a/missing" not in store
    assert [r.range for r in requests.sent] == ["bytes=0-0"] * 2  # a byte, not the value


def test_get_range_is_one_request_with_a_suffix_range(s3: S3Server) -> None:
    store = s3.store(s3.new_url())
    store.set("k", b"0123456789abcdef")
    with s3.counting(store) as requests:
        assert store.get_range("k", -4) == b"cdef"
        assert store.get_range("k", -6, 2) == b"ab"
        assert store.get_range("k", 3, 4) == b"3456"
        assert store.get_range("k", 3) == b"3456789abcdef"
        assert store.get_range("k", 100, 2) == b""
        assert store.get_range("k", 5, 0) == b""
        assert store.get_range("missing", 5, 0) is None
    assert [r.range for r in requests.sent] == [
        "bytes=-4", "bytes=-6", "bytes=3-6", "bytes=3-", "bytes=100-101", "bytes=5-5",
        "bytes=5-5"]
    with pytest.raises(ValueError):
        store.get_range("k", 0, -1)


def test_get_many_is_concurrent_and_ordered(s3: S3Server) -> None:
    store = s3.store(s3.new_url())
    values = {f"c/{i}": bytes([i]) * (i + 1) for i in range(40)}
    store.set_many(values)
    keys = [*reversed(values), "missing", "c/3"]
    with s3.counting(store) as requests:
        got = store.get_many(keys)
    assert got == [*[values[k] for k in reversed(values)], None, values["c/3"]]
    assert len(requests.gets()) == 41  # the duplicate is fetched once
    with pytest.raises(InvalidKeyError), s3.counting(store) as requests:
        store.get_many(["c/1", "../x"])
    assert requests.sent == []


def test_set_if_not_exists_is_a_conditional_put(s3: S3Server) -> None:
    store = s3.store(s3.new_url())
    with s3.counting(store) as requests:
        assert store.set_if_not_exists("g/zarr.json", b"1")
        assert not store.set_if_not_exists("g/zarr.json", b"2")
    assert [(r.method, r.if_none_match) for r in requests.sent] == [("PUT", "*")] * 2
    assert store.get("g/zarr.json") == b"1"
    # Another handle (another writer) loses too: the server decides, not this process.
    other = FsspecStore(store.url, storage_options={**s3.options, "skip_instance_cache": True})
    assert other.fs is not store.fs
    assert not other.set_if_not_exists("g/zarr.json", b"3")
    assert store.get("g/zarr.json") == b"1"


def test_keys_with_pattern_characters_are_not_patterns(s3: S3Server) -> None:
    store = s3.store(s3.new_url())
    store.set_many({"a*": b"star", "a[1]": b"bracket", "a?": b"question", "ab": b"plain",
                    "a1": b"one"})
    assert store.get_many(["a*", "a[1]", "a?", "ab"]) == [b"star", b"bracket", b"question",
                                                           b"plain"]
    store.delete("a*")
    store.delete("a?")
    assert sorted(store.list()) == ["a1", "a[1]", "ab"]
    store.set("p/x*", b"")
    store.set("p/xy", b"")
    store.delete_prefix("p/")
    assert sorted(store.list()) == ["a1", "a[1]", "ab"]


def test_store_at_a_bucket_root(s3: S3Server) -> None:
    bucket = s3.new_bucket()
    store = s3.store(f"s3://{bucket}")
    store.set_many({"a/b": b"1", "c": b"2"})
    assert store.list_dir("") == (["c"], ["a"])
    store.delete_prefix("")  # empties the bucket, and keeps it
    assert list(store.list()) == []
    store.set("again", b"3")
    assert store.get("again") == b"3"


def test_keys_other_programs_wrote_are_left_out(s3: S3Server) -> None:
    url = s3.new_url()
    store = s3.store(url)
    store.set("ok/k", b"1")
    prefix = url.split("/", 3)[3]
    for key in (f"{prefix}/marker/", f"{prefix}/ok//double"):
        s3.client.put_object(Bucket=s3.bucket, Key=key, Body=b"")
    assert sorted(store.list()) == ["ok/k"]
    assert store.list_dir("ok/")[0] == ["k"]


def test_listing_is_never_stale(s3: S3Server) -> None:
    url = s3.new_url()
    store = s3.store(url)
    store.set("g/a", b"")
    assert store.list_dir("g/") == (["a"], [])
    # Written behind the store's back, by another client: the next listing sees it.
    s3.client.put_object(Bucket=s3.bucket, Key=f"{url.split('/', 3)[3]}/g/b", Body=b"")
    assert store.list_dir("g/") == (["a", "b"], [])
    assert sorted(store.list_prefix("g/")) == ["g/a", "g/b"]


def test_missing_bucket_is_an_error(s3: S3Server) -> None:
    store = s3.store(f"s3://no-such-bucket-{uuid.uuid4().hex[:12]}/x.zarr")
    with pytest.raises(StoreIOError, match="bucket does not exist") as info:
        store.get("zarr.json")
    assert "s3://no-such-bucket-" in str(info.value)
    with pytest.raises(StoreIOError, match="bucket"):
        store.get_many(["a", "b"])
    with pytest.raises(StoreIOError):
        store.set("k", b"v")
    with pytest.raises(StoreIOError, match=r"2 keys \('a', \.\.\.\) under s3://no-such"):
        store.set_many({"a": b"", "b": b""})


def test_connection_refused_names_the_url() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    options = {"key": "k", "secret": "s", "retries": 1,
               "client_kwargs": {"endpoint_url": f"http://127.0.0.1:{port}",
                                 "region_name": "us-east-1"},
               "config_kwargs": {"retries": {"max_attempts": 1}, "connect_timeout": 2}}
    store = FsspecStore("s3://bucket/x.zarr", storage_options=options)
    with pytest.raises(StoreIOError, match=r"s3://bucket/x\.zarr/k"):
        store.get("k")


def test_read_only(s3: S3Server) -> None:
    url = s3.new_url()
    s3.store(url).set("k", b"v")
    store = s3.store(url, read_only=True)
    with s3.counting(store) as requests:
        for write in (lambda: store.set("k", b"w"), lambda: store.set_many({"n": b""}),
                      lambda: store.set_if_not_exists("n", b""), lambda: store.delete("k"),
                      lambda: store.delete_prefix("")):
            with pytest.raises(ReadOnlyError):
                write()
    assert requests.sent == []
    assert store.get("k") == b"v"


# --- fsspec memory:// and file system objects -----------------------------------------------


def test_file_system_object_and_path() -> None:
    fs = fsspec.filesystem("memory")
    name = uuid.uuid4().hex
    store = FsspecStore(fs, f"{name}/data.zarr")
    store.set("a", b"1")
    assert FsspecStore(f"memory://{name}/data.zarr").get("a") == b"1"
    assert FsspecStore(f"memory://{name}", "data.zarr").get("a") == b"1"
    assert fs.cat_file(f"/{name}/data.zarr/a") == b"1"
    assert not store.conditional_writes  # memory: check then write, in-process atomic
    with pytest.raises(TypeError):
        FsspecStore(fs, storage_options={"x": 1})
    with pytest.raises(TypeError):
        FsspecStore(42)  # type: ignore[arg-type]


def test_pickle() -> None:
    store = FsspecStore(f"memory://zarrkit-tests/{uuid.uuid4().hex}")
    store.set("k", b"v")
    again = pickle.loads(pickle.dumps(store))
    assert again.get("k") == b"v"
    assert again.lock_identity == store.lock_identity


# --- arrays on S3 ---------------------------------------------------------------------------


def _write_hierarchy(url: str, options: dict[str, Any], zarr_format: int
                     ) -> dict[str, np.ndarray[Any, Any]]:
    rng = np.random.default_rng(zarr_format)
    root = zk.open_group(url, mode="w", zarr_format=zarr_format, storage_options=options,
                         attributes={"title": "on s3"})
    data = {
        "raw": rng.integers(0, 1000, size=(40, 30), dtype="int32"),
        "sub/values": rng.random((17,)),
    }
    raw = root.create_array("raw", shape=(40, 30), chunks=(16, 16), dtype="int32",
                            fill_value=0, attributes={"units": "counts"})
    raw[...] = data["raw"]
    values = root.create_group("sub").create_array("values", shape=(17,), chunks=(5,),
                                                   dtype="float64")
    values[...] = data["sub/values"]
    if zarr_format == 3:
        data["sharded"] = np.arange(64 * 48, dtype="uint16").reshape(64, 48)
        zk.create_array(url, name="sharded", shape=(64, 48), chunks=(8, 8), shards=(32, 24),
                        dtype="uint16", data=data["sharded"], storage_options=options)
    zk.consolidate_metadata(url, storage_options=options)
    return data


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_round_trip_with_consolidated_metadata(s3: S3Server, zarr_format: int) -> None:
    url = s3.new_url(".zarr")
    expected = _write_hierarchy(url, s3.options, zarr_format)
    root = zk.open_group(url, mode="r", consolidated=True, storage_options=s3.options)
    assert isinstance(root.store, FsspecStore) and root.store.read_only
    with s3.counting(root.store) as requests:
        for path, values in expected.items():
            np.testing.assert_array_equal(root[path][...], values)
        assert root.attrs["title"] == "on s3"
        assert root["raw"].attrs["units"] == "counts"
        assert sorted(root.group_keys()) == ["sub"]
    assert requests.listings() == []  # consolidated: nothing listed
    with pytest.raises(ReadOnlyError):
        root["raw"][0, 0] = 5
    # Without consolidated metadata, through listings.
    listed = zk.open_group(url, mode="r", consolidated=False, storage_options=s3.options)
    for path, values in expected.items():
        np.testing.assert_array_equal(listed[path][...], values)
    # zk.open detects the node, from the same URL.
    array = zk.open(url, mode="r", path="raw", storage_options=s3.options)
    assert isinstance(array, zk.Array) and array.shape == (40, 30)


def test_writes_update_and_delete_through_urls(s3: S3Server) -> None:
    url = s3.new_url(".zarr")
    a = zk.create_array(url, name="a", shape=(10,), chunks=(3,), dtype="i2", fill_value=-1,
                        storage_options=s3.options)
    a[2:8] = np.arange(6)
    again = zk.open_array(url, mode="r+", path="a", storage_options=s3.options)
    again[0] = 100
    np.testing.assert_array_equal(
        zk.open_array(url, mode="r", path="a", storage_options=s3.options)[...],
        np.array([100, -1, 0, 1, 2, 3, 4, 5, -1, -1], dtype="i2"))
    copy = zk.from_array(s3.new_url(), data=again, name="copy", storage_options=s3.options)
    np.testing.assert_array_equal(copy[...], again[...])
    zk.open_group(url, mode="w", storage_options=s3.options)  # replaces everything
    assert sorted(s3.store(url).list()) == ["zarr.json"]


# --- sharded partial reads on S3 ------------------------------------------------------------

SHAPE = (1024, 1024)
SHARDS = (512, 512)
INNER = (64, 64)  # 8 KiB each, in Morton order inside a shard of 512 KiB
PER_SHARD = (SHARDS[0] // INNER[0]) * (SHARDS[1] // INNER[1])
INDEX_BYTES = 16 * PER_SHARD + 4  # (offset, nbytes) as uint64 each, and a CRC32C


@pytest.fixture(scope="module")
def sharded(s3: S3Server) -> tuple[str, np.ndarray[Any, Any]]:
    url = s3.new_url(".zarr")
    data = np.random.default_rng(7).integers(0, 2**16, size=SHAPE, dtype="uint16")
    zk.create_array(url, name="a", shape=SHAPE, chunks=INNER, shards=SHARDS, dtype="uint16",
                    compressors=None, zarr_format=3, data=data, storage_options=s3.options)
    zk.consolidate_metadata(url, storage_options=s3.options)
    return url, data


def _expected_ranges(store: FsspecStore, rows: list[int], cols: list[int]
                     ) -> tuple[list[str], int]:
    """The Range headers (sorted) of the least GETs reading the inner chunks that hold
    ``rows x cols``: one index per touched shard, then the chunks' byte ranges merged
    as the sharding codec merges them; and the bytes they fetch."""
    chunks = {(r // INNER[0], c // INNER[1]) for r in rows for c in cols}
    per_shard: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for cr, cc in chunks:
        shard = (cr * INNER[0] // SHARDS[0], cc * INNER[1] // SHARDS[1])
        raw = store.get(f"a/c/{shard[0]}/{shard[1]}")
        assert raw is not None
        index = np.frombuffer(raw[-INDEX_BYTES:-4], dtype="<u8").reshape(
            SHARDS[0] // INNER[0], SHARDS[1] // INNER[1], 2)
        offset, nbytes = index[cr % index.shape[0], cc % index.shape[1]]
        per_shard.setdefault(shard, []).append((int(offset), int(nbytes)))
    ranges = [f"bytes=-{INDEX_BYTES}"] * len(per_shard)
    total = INDEX_BYTES * len(per_shard)
    for found in per_shard.values():
        for start, length, _ in coalesce_ranges(found):
            ranges.append(f"bytes={start}-{start + length - 1}")
            total += length
    return sorted(ranges), total


@pytest.mark.parametrize(("name", "select", "rows", "cols"), SHARDED_PARTIAL_READS)
def test_sharded_partial_read_fetches_only_what_it_needs(
        s3: S3Server, sharded: tuple[str, np.ndarray[Any, Any]],
        name: str, select: Any, rows: Any, cols: Any) -> None:
    url, data = sharded
    array = zk.open_group(url, mode="r", consolidated=True, storage_options=s3.options)["a"]
    store = array.store
    assert isinstance(store, FsspecStore)
    with s3.counting(store) as requests:
        if select == "corners":
            got = array.oindex[[0, 511], [0, 511]]
            np.testing.assert_array_equal(got, data[np.ix_([0, 511], [0, 511])])
        else:
            np.testing.assert_array_equal(array[select], data[select])
    ranges, total = _expected_ranges(store, list(rows), list(cols))
    assert all(r.method == "GET" for r in requests.sent), requests.sent  # no HEAD, no LIST
    assert sorted(r.range or "" for r in requests.sent) == ranges, name
    shard_bytes = len(store.get("a/c/0/0") or b"")
    assert total < shard_bytes / 4
    indexes = sum(r.range.startswith("bytes=-") for r in requests.sent if r.range)
    print(f"{name}: {len(requests.sent)} requests ({indexes} index reads), {total} of "
          f"{shard_bytes} bytes of one shard")


# --- zarr-python on the same URLs -----------------------------------------------------------


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_python_reads_what_zarrkit_wrote(s3: S3Server, zarr_format: int) -> None:
    zarr = pytest.importorskip("zarr")
    url = s3.new_url(".zarr")
    expected = _write_hierarchy(url, s3.options, zarr_format)
    theirs = zarr.open_group(url, mode="r", zarr_format=zarr_format,
                             storage_options=s3.options)
    for path, values in expected.items():
        np.testing.assert_array_equal(np.asarray(theirs[path][...]), values)
    assert dict(theirs.attrs) == {"title": "on s3"}
    assert dict(theirs["raw"].attrs) == {"units": "counts"}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarrkit_reads_what_zarr_python_wrote(s3: S3Server, zarr_format: int) -> None:
    zarr = pytest.importorskip("zarr")
    url = s3.new_url(".zarr")
    rng = np.random.default_rng(11)
    theirs = zarr.open_group(url, mode="w", zarr_format=zarr_format,
                             storage_options=s3.options)
    theirs.attrs["by"] = "zarr-python"
    expected = {"x": rng.integers(-50, 50, size=(30, 20), dtype="int16"),
                "g/y": rng.random(25)}
    x = theirs.create_array("x", shape=(30, 20), chunks=(7, 8), dtype="int16", fill_value=0)
    x[...] = expected["x"]
    y = theirs.create_group("g").create_array("y", shape=(25,), chunks=(10,), dtype="f8")
    y[...] = expected["g/y"]
    if zarr_format == 3:
        expected["s"] = np.arange(100 * 60, dtype="int32").reshape(100, 60)
        s = theirs.create_array("s", shape=(100, 60), chunks=(10, 10), shards=(50, 30),
                                dtype="int32")
        s[...] = expected["s"]
    ours = zk.open_group(url, mode="r", storage_options=s3.options)
    for path, values in expected.items():
        np.testing.assert_array_equal(ours[path][...], values)
    assert ours.attrs["by"] == "zarr-python"
    assert sorted(ours.array_keys()) == sorted(k for k in expected if "/" not in k)


# --- memory://name --------------------------------------------------------------------------


def test_memory_url_is_shared_by_name() -> None:
    name = f"memory://shared-{uuid.uuid4().hex}"
    root = zk.open_group(name, mode="w", attributes={"a": 1})
    root.create_array("x", shape=(4,), chunks=(2,), dtype="i4")[...] = [1, 2, 3, 4]
    again = zk.open(name, mode="r")
    assert isinstance(again, zk.Group) and again.attrs["a"] == 1
    np.testing.assert_array_equal(zk.open_array(name, mode="r", path="x")[...], [1, 2, 3, 4])
    zk.open_array(name, mode="r+", path="x")[0] = 9  # a write through one handle...
    assert root["x"][0] == 9  # ...is seen through the other
    with pytest.raises(ReadOnlyError):
        zk.open_array(name, mode="r", path="x")[0] = 1
    assert make_store(name, mode="a").lock_identity == make_store(name, mode="r").lock_identity
    # Another name, and no name, are other stores.
    assert list(zk.open_group(name + "-other", mode="a")) == []
    zk.open_group("memory://", mode="w", attributes={"b": 2})
    assert zk.open_group("memory://", mode="a").attrs.asdict() == {}
    assert make_store(name + "/", mode="r").get("zarr.json") is not None


# --- URL dispatch ---------------------------------------------------------------------------


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def http_directory(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A directory served over HTTP on 127.0.0.1 (no Range support: HTTPStore slices)."""
    directory = tmp_path / "served"
    directory.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(directory))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield directory, f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_http_url(http_directory: tuple[Path, str]) -> None:
    directory, url = http_directory
    zk.create_array(directory / "d.zarr", name="a", shape=(6,), chunks=(4,), dtype="u1",
                    data=np.arange(6))
    zk.consolidate_metadata(directory / "d.zarr")
    root = zk.open_group(url + "d.zarr", mode="r", storage_options={"retries": 0})
    assert isinstance(root.store, HTTPStore) and root.store.retries == 0
    np.testing.assert_array_equal(root["a"][...], np.arange(6))
    np.testing.assert_array_equal(zk.open_array(url + "d.zarr", mode="a", path="a")[...],
                                  np.arange(6))
    for mode in ("w", "w-", "r+"):
        with pytest.raises(ReadOnlyError, match="read-only"):
            zk.open_group(url + "d.zarr", mode=mode)
    with pytest.raises(ReadOnlyError):
        zk.create_array(url + "d.zarr", name="b", shape=(1,), dtype="u1")
    assert isinstance(make_store("https://example.org/x.zarr", mode="r"), HTTPStore)
    with pytest.raises(TypeError):
        make_store(url, mode="r", storage_options={"no_such_option": 1})


def test_fsspec_urls(s3: S3Server) -> None:
    store = make_store(s3.new_url(), mode="r", storage_options=s3.options)
    assert isinstance(store, FsspecStore) and store.read_only and store.protocol == "s3"
    assert not make_store(s3.new_url(), mode="a", storage_options=s3.options).read_only
    memory = make_store(f"memory://x-{uuid.uuid4().hex}", mode="a")
    assert isinstance(memory, MemoryStore)  # zarrkit's, shared by name: not fsspec's
    for scheme, package in (("gs", "gcsfs"), ("az", "adlfs")):
        try:
            __import__(package)
        except ImportError:
            with pytest.raises(ZarrkitError, match=package):
                make_store(f"{scheme}://bucket/x.zarr", mode="r")
        else:
            assert isinstance(make_store(f"{scheme}://bucket/x.zarr", mode="r"), FsspecStore)


def test_unknown_protocol() -> None:
    with pytest.raises(ZarrkitError, match="'nosuchproto'"):
        make_store("nosuchproto://bucket/x.zarr", mode="r")
    with pytest.raises(ZarrkitError, match="nosuchproto"):
        zk.open_group("nosuchproto://bucket/x.zarr", mode="r")


def test_local_paths(tmp_path: Path) -> None:
    assert isinstance(make_store(tmp_path / "d.zarr", mode="a"), DirectoryStore)
    assert isinstance(make_store(f"file://{tmp_path}/f.zarr", mode="a"), DirectoryStore)
    zip_store = make_store(str(tmp_path / "a.zip"), mode="w")
    assert isinstance(zip_store, ZipStore)
    zip_store.close()
    for name in ("a.sqlite", "b.sqlite3", "c.db"):
        store = make_store(tmp_path / name, mode="a")
        assert isinstance(store, SQLiteStore), name
        store.set("k", b"v")
        store.close()
        again = make_store(str(tmp_path / name), mode="r")
        assert again.read_only and again.get("k") == b"v"
        again.close()
    (tmp_path / "dir.db").mkdir()  # an existing directory stays a directory store
    assert isinstance(make_store(tmp_path / "dir.db", mode="a"), DirectoryStore)
    with pytest.raises(TypeError, match="storage_options"):
        make_store(tmp_path / "d.zarr", mode="a", storage_options={"anon": True})
    with pytest.raises(TypeError, match="storage_options"):
        zk.open_group({}, storage_options={"anon": True})


def test_lmdb_paths(tmp_path: Path) -> None:
    pytest.importorskip("lmdb")
    from zarrkit.storage import LMDBStore

    for name in ("a.lmdb", "data.mdb"):
        store = make_store(tmp_path / name, mode="a")
        assert isinstance(store, LMDBStore), name
        root = zk.open_group(store, mode="w")
        root.create_array("x", shape=(3,), dtype="i1")[...] = [1, 2, 3]
        store.close()
        again = zk.open_array(str(tmp_path / name), mode="r", path="x")
        np.testing.assert_array_equal(again[...], [1, 2, 3])
        again.store.close()
