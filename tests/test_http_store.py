"""HTTPStore: the read-only store over HTTP, against a server started by these tests on
127.0.0.1 (never the internet).

The server serves a directory with ``Range`` support (``bytes=a-b``, ``bytes=a-``, the
suffix form ``bytes=-n`` and ``416``), ``404`` for what is not there, counts requests and
bytes, and injects faults (statuses, delays, a server ignoring ``Range``, a wrong
``Content-Range``, redirects).
"""

from __future__ import annotations

import builtins
import errno
import pickle
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import pytest
from http_support import HTTPServerFixture
from support import SHARDED_PARTIAL_READS

import zarrkit as zk
from zarrkit.codecs.v3.sharding import coalesce_ranges
from zarrkit.errors import (
    InvalidKeyError,
    ReadOnlyError,
    StoreIOError,
    UnsupportedOperationError,
)
from zarrkit.storage import DirectoryStore, HTTPStore, ReadableStore, Store
from zarrkit.storage.base import Buffer
from zarrkit.testing import INVALID_KEYS, INVALID_PREFIXES, TREE, StoreTests

# --- the test server (its classes are in http_support.py) -------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HTTPServerFixture]:
    fixture = HTTPServerFixture(tmp_path_factory.mktemp("served"))
    yield fixture
    fixture.close()


@pytest.fixture(autouse=True)
def _fresh_state(server: HTTPServerFixture) -> None:
    server.reset()


@pytest.fixture
def served(server: HTTPServerFixture) -> tuple[DirectoryStore, str]:
    """A DirectoryStore under the served root, and its URL."""
    directory = server.new_directory()
    return DirectoryStore(directory), server.url(directory)


def eventually(condition: Any, seconds: float = 3.0) -> bool:
    """Whether ``condition()`` holds within ``seconds``: the server records a request in
    its own thread, which may run after the client has given up on it."""
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def fast(url: str, **options: Any) -> HTTPStore:
    """An HTTPStore that does not wait between retries."""
    options.setdefault("backoff", 0)
    return HTTPStore(url, **options)


# --- conformance ----------------------------------------------------------------------------


class _Served(Store):
    """The conformance suite's view of an HTTPStore: every read goes through the
    HTTPStore; the writes the suite sets up its cases with (and the listings it checks
    them with) go to the DirectoryStore behind the server. StoreTests has no way to say
    "read-only, no listing" (it writes and lists through the store under test), so this
    adapter stands in, and the listing and read-only tests are replaced below."""

    def __init__(self, backing: DirectoryStore, http: HTTPStore) -> None:
        self.backing = backing
        self.http = http

    def __repr__(self) -> str:
        return f"_Served({self.http!r})"

    # reads: HTTP
    def get(self, key: str) -> bytes | None:
        return self.http.get(key)

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        return self.http.get_range(key, start, length)

    def get_many(self, keys: Any) -> list[bytes | None]:
        return self.http.get_many(keys)

    def __contains__(self, key: object) -> bool:
        return key in self.http

    @property
    def lock_identity(self) -> Any:
        return self.http.lock_identity

    def key_lock(self, key: str) -> Any:
        return self.http.key_lock(key)

    # writes and listings: the directory behind the server
    def set(self, key: str, value: Buffer) -> None:
        self.backing.set(key, value)

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        return self.backing.set_if_not_exists(key, value)

    def set_many(self, items: Any) -> None:
        self.backing.set_many(items)

    def delete(self, key: str) -> None:
        self.backing.delete(key)

    def delete_prefix(self, prefix: str) -> None:
        self.backing.delete_prefix(prefix)

    def list(self) -> Iterator[str]:
        return self.backing.list()

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return self.backing.list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        return self.backing.list_dir(prefix)

    def close(self) -> None:
        self.http.close()
        self.backing.close()


class TestHTTPStoreConformance(StoreTests):
    supports_concurrent_writes = False  # writes go to the directory behind the server

    @pytest.fixture(autouse=True)
    def _bind(self, server: HTTPServerFixture) -> None:
        self.server = server

    def make_store(self, tmp_path: Path) -> Store:
        directory = self.server.new_directory()
        return _Served(DirectoryStore(directory), fast(self.server.url(directory)))

    def reopen_read_only(self, store: Store) -> Store:
        assert isinstance(store, _Served)
        return HTTPStore(store.http.url)  # the bare store over the same URL

    # Listing: refused, with a message pointing at consolidated metadata.
    @staticmethod
    def _refuses_listing(store: HTTPStore) -> None:
        with pytest.raises(UnsupportedOperationError, match="consolidated=True"):
            store.list()
        with pytest.raises(UnsupportedOperationError, match="HTTP has no listing"):
            store.list_prefix("a/")
        with pytest.raises(UnsupportedOperationError, match="HTTP has no listing"):
            store.list_dir("")

    def test_empty_store(self, store: Store) -> None:
        assert isinstance(store, _Served)
        self._refuses_listing(store.http)
        assert store.get_many(["zarr.json", ".zgroup"]) == [None, None]

    def test_list(self, store: Store) -> None:
        assert isinstance(store, _Served)
        self.fill(store, TREE)
        self._refuses_listing(store.http)
        assert store.http.get_many(list(TREE)) == list(TREE.values())

    test_list_prefix = test_list
    test_list_dir = test_list

    test_list_dir_sorted = test_list

    @pytest.mark.parametrize("prefix", INVALID_PREFIXES)
    def test_invalid_prefix(self, store: Store, prefix: str) -> None:
        assert isinstance(store, _Served)
        with pytest.raises(InvalidKeyError):  # a bad prefix is named before the refusal
            store.http.list_prefix(prefix)
        with pytest.raises(InvalidKeyError):
            store.http.list_dir(prefix)
        with pytest.raises(ReadOnlyError):
            store.http.delete_prefix(prefix)

    def test_persists_when_reopened(self, store: Store) -> None:
        self.fill(store, TREE)
        reopened = self.reopen_read_only(store)
        try:
            assert reopened.get_many(list(TREE)) == list(TREE.values())
            for key, value in TREE.items():
                assert reopened.get(key) == value
            assert isinstance(reopened, HTTPStore)
            self._refuses_listing(reopened)
        finally:
            reopened.close()

    def test_read_only_rejects_writes(self, store: Store) -> None:
        assert isinstance(store, _Served)
        store.set("k", b"v")
        reopened = self.reopen_read_only(store)
        try:
            assert reopened.read_only
            with pytest.raises(ReadOnlyError):
                reopened.set("new", b"x")
            with pytest.raises(ReadOnlyError):
                reopened.set("k", b"changed")
            with pytest.raises(ReadOnlyError):
                reopened.set_many({"new": b"x"})
            with pytest.raises(ReadOnlyError):
                reopened.set_if_not_exists("new", b"x")
            with pytest.raises(ReadOnlyError):
                reopened.delete("k")
            with pytest.raises(ReadOnlyError):
                reopened.delete("missing")
            with pytest.raises(ReadOnlyError):
                reopened.delete_prefix("")
            assert list(store.backing.list()) == ["k"]
            assert reopened.get("k") == b"v"
            assert reopened.get("new") is None
        finally:
            reopened.close()


def test_capabilities() -> None:
    store = HTTPStore("http://127.0.0.1:9/x")
    assert isinstance(store, ReadableStore)
    assert store.read_only
    assert not store.supports_listing and not store.supports_writes
    assert not store.supports_deletes and store.supports_partial_reads


# --- ranges ---------------------------------------------------------------------------------

RANGE_CASES = [
    (0, None), (0, 0), (0, 4), (3, 5), (3, None), (15, 1), (15, 10), (16, None), (16, 3),
    (100, 5), (-1, None), (-4, None), (-4, 2), (-16, None), (-100, None), (-100, 3), (-3, 0),
]


def _expected(value: bytes, start: int, length: int | None) -> bytes:
    begin = max(len(value) + start, 0) if start < 0 else start
    return value[begin:] if length is None else value[begin:begin + length]


@pytest.mark.parametrize("ignore_range", [False, True], ids=["ranges", "server-ignores-range"])
def test_get_range_matches_directory_store(server: HTTPServerFixture,
                                           served: tuple[DirectoryStore, str],
                                           ignore_range: bool) -> None:
    directory, url = served
    value = b"0123456789abcdef"
    directory.set("k", value)
    directory.set("empty", b"")
    state = server.state
    state.ignore_range = ignore_range
    with fast(url) as store:
        for start, length in RANGE_CASES:
            expected = _expected(value, start, length)
            assert directory.get_range("k", start, length) == expected
            assert store.get_range("k", start, length) == expected, (start, length)
            assert store.get_range("empty", start, length) == b""
            assert store.get_range("missing", start, length) is None
    assert all(r.status in (200, 206, 404, 416) for r in state.requests)
    if ignore_range:
        assert {r.status for r in state.requests} == {200, 404}


def test_range_requests_are_single_and_suffix(server: HTTPServerFixture,
                                              served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    directory.set("k", bytes(range(100)))
    with fast(url) as store:
        assert store.get_range("k", 10, 5) == bytes(range(10, 15))
        assert store.get_range("k", 90) == bytes(range(90, 100))
        assert store.get_range("k", -7) == bytes(range(93, 100))
        assert store.get_range("k", -7, 3) == bytes(range(93, 96))
        assert store.get_range("k", 150, 3) == b""
        assert store.get_range("k", 0) == bytes(range(100))
    assert server.state.ranges() == [
        "bytes=10-14", "bytes=90-", "bytes=-7", "bytes=-7", "bytes=150-152", None]
    assert [r.status for r in server.state.requests] == [206, 206, 206, 206, 416, 200]
    assert server.state.bytes_sent == 5 + 10 + 7 + 7 + 100


def test_negative_length_refused(served: tuple[DirectoryStore, str]) -> None:
    with pytest.raises(ValueError, match="length"):
        HTTPStore(served[1]).get_range("k", 0, -1)


def test_wrong_content_range_is_an_error(server: HTTPServerFixture,
                                         served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    directory.set("k", bytes(range(100)))
    server.state.shift_range = 3
    with fast(url) as store, pytest.raises(StoreIOError, match=r"bytes 13-17"):
        store.get_range("k", 10, 5)


def test_contains_reads_one_byte(server: HTTPServerFixture,
                                 served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    directory.set("big", b"x" * 100_000)
    directory.set("empty", b"")
    with fast(url) as store:
        assert "big" in store
        assert "empty" in store
        assert "missing" not in store
        assert 3 not in store  # type: ignore[operator]
    assert server.state.ranges() == ["bytes=0-0"] * 3
    assert server.state.bytes_sent == 1


# --- missing keys and errors ----------------------------------------------------------------


def test_missing_statuses(server: HTTPServerFixture, served: tuple[DirectoryStore, str]) -> None:
    _, url = served
    with fast(url) as store:
        assert store.get("nope") is None
        server.state.missing_status = 410
        assert store.get("nope") is None
        server.state.missing_status = 403
        with pytest.raises(StoreIOError, match="missing_on_403") as info:
            store.get("nope")
        assert info.value.errno == errno.EACCES
        assert f"{url}nope" in str(info.value)
    with fast(url, missing_on_403=True) as s3_like:
        assert s3_like.get("nope") is None
        assert s3_like.get_range("nope", -10) is None
        assert s3_like.get_many(["a", "b"]) == [None, None]


def test_client_errors_are_not_retried(server: HTTPServerFixture,
                                       served: tuple[DirectoryStore, str]) -> None:
    _, url = served
    server.state.always = 400
    with fast(url, retries=3) as store, pytest.raises(StoreIOError, match="HTTP 400"):
        store.get("k")
    assert len(server.state.requests) == 1


def test_retries_then_success(server: HTTPServerFixture,
                              served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    directory.set("k", b"value")
    server.state.faults = [503, 503]
    with fast(url, retries=3) as store:
        assert store.get("k") == b"value"
    assert [r.status for r in server.state.requests] == [503, 503, 200]
    state = server.reset()
    state.faults = [502, 500]
    with fast(url, retries=2) as store:
        assert store.get_range("k", -3) == b"lue"
    assert [r.status for r in state.requests] == [502, 500, 206]


def test_always_failing_raises_after_the_retries(server: HTTPServerFixture,
                                                 served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    directory.set("k", b"value")
    server.state.always = 500
    with fast(url, retries=2) as store, pytest.raises(StoreIOError) as info:
        store.get("k")
    assert len(server.state.requests) == 3  # the request and two retries
    message = str(info.value)
    assert f"{url}k" in message and "HTTP 500" in message and "after 2 retries" in message
    state = server.reset()
    state.always = 503
    with fast(url, retries=0) as store, pytest.raises(StoreIOError, match="HTTP 503"):
        store.get_many(["k", "l"])
    assert 1 <= len(state.requests) <= 2  # the first failure cancels what has not started


def test_backoff_is_exponential(server: HTTPServerFixture,
                                served: tuple[DirectoryStore, str]) -> None:
    _, url = served
    server.state.always = 503
    begin = time.monotonic()
    with HTTPStore(url, retries=3, backoff=0.1) as store, pytest.raises(StoreIOError):
        store.get("k")
    # urllib3: no wait before the first retry, then 0.1 * 2 and 0.1 * 4 seconds.
    assert time.monotonic() - begin >= 0.55
    assert len(server.state.requests) == 4


def test_timeout(server: HTTPServerFixture, served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    directory.set("k", b"value")
    server.state.delay = 1.5
    begin = time.monotonic()
    with fast(url, timeout=0.2, retries=1) as store, pytest.raises(StoreIOError) as info:
        store.get("k")
    assert time.monotonic() - begin < 1.2
    assert info.value.errno == errno.ETIMEDOUT
    assert f"{url}k" in str(info.value) and "after 1 retries" in str(info.value)
    state = server.state
    assert eventually(lambda: len(state.requests) == 2)


def test_connection_refused() -> None:
    import socket

    with socket.socket() as probe:  # a port with nothing listening on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/data/"
    with fast(url, retries=1) as store, pytest.raises(StoreIOError) as info:
        store.get("zarr.json")
    assert info.value.errno == errno.ECONNREFUSED
    assert f"{url}zarr.json" in str(info.value)


# --- keys and URLs --------------------------------------------------------------------------


def test_invalid_keys_send_nothing(server: HTTPServerFixture,
                                   served: tuple[DirectoryStore, str]) -> None:
    with fast(served[1]) as store:
        for key in INVALID_KEYS:
            for call in (store.get, lambda k: store.get_range(k, -1), store.key_url,
                         lambda k: store.get_many(["fine", "other", k]),
                         lambda k: k in store):
                with pytest.raises(InvalidKeyError):
                    call(key)
    assert server.state.requests == []


SPECIAL_KEYS = ["a b/c", "q?x", "h#y", "pct%2e%2e/x", "pct%2F", "ü/ключ", "plus+sign",
                "semi;colon=eq", "colon:x@y", "tilde~", "amp&", "quote'\"", "dots..x"]


def test_keys_are_percent_encoded_and_stay_under_the_base(
        server: HTTPServerFixture, served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    for i, key in enumerate(SPECIAL_KEYS):
        directory.set(key, b"%d" % i)
    base_path = "/" + url.split("/", 3)[3]
    with fast(url) as store:
        assert store.get_many(SPECIAL_KEYS) == [b"%d" % i for i in range(len(SPECIAL_KEYS))]
        assert store.key_url("pct%2e%2e/x") == f"{url}pct%252e%252e/x"
        assert store.key_url("pct%2F") == f"{url}pct%252F"
        assert store.key_url("q?x") == f"{url}q%3Fx"
    for request in server.state.requests:
        assert request.path.startswith(base_path)
        assert request.query == ""
        segments = [unquote(s) for s in request.path[len(base_path):].split("/")]
        assert "/".join(segments) in SPECIAL_KEYS


def test_base_url_spellings(server: HTTPServerFixture, served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    directory.set("k", b"v")
    no_slash = url.rstrip("/")
    upper = url.replace("http://127.0.0.1", "HTTP://127.0.0.1")
    dotted = url + "sub/.."
    stores = [HTTPStore(u) for u in (url, no_slash, upper, dotted)]
    assert {s.lock_identity for s in stores} == {("http", url)}
    assert [s.get("k") for s in stores] == [b"v"] * 4
    assert repr(stores[1]) == f"HTTPStore({url!r})"
    for s in stores:
        s.close()
    for bad in ("ftp://h/x", "http:///x", "http://h/x#frag", "/local/path"):
        with pytest.raises(ValueError):
            HTTPStore(bad)


def test_headers_query_and_basic_auth(server: HTTPServerFixture,
                                      served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    directory.set("k", b"v")
    with_query = url + "?sig=s3cr%2Bt&sv=1"
    with fast(with_query, headers={"X-Token": "abc"}) as store:
        assert store.get("k") == b"v"
        assert store.get_range("k", -1) == b"v"
        assert "s3cr" not in repr(store)
    authed = url.replace("http://", "http://user:p%40ss@")
    with fast(authed) as store:
        assert store.get("k") == b"v"
        assert "p%40ss" not in repr(store) and "user" not in repr(store)
    first, second, third = server.state.requests
    assert first.query == second.query == "sig=s3cr%2Bt&sv=1"
    assert first.headers["x-token"] == "abc" and first.headers["accept-encoding"] == "identity"
    assert second.range == "bytes=-1" and second.headers["x-token"] == "abc"
    assert third.headers["authorization"] == "Basic dXNlcjpwQHNz"  # user:p@ss


def test_error_messages_hide_the_query(server: HTTPServerFixture,
                                       served: tuple[DirectoryStore, str]) -> None:
    server.state.always = 500
    with fast(served[1] + "?sig=secret", retries=0) as store, \
            pytest.raises(StoreIOError) as info:
        store.get("k")
    assert "secret" not in str(info.value) and f"{served[1]}k" in str(info.value)


def test_redirects_are_followed(server: HTTPServerFixture,
                                served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    directory.set("a/k", b"moved value")
    real = "/" + url.split("/", 3)[3]
    server.state.redirect = ("/old/", real)
    with fast(f"http://127.0.0.1:{server.port}/old/") as store:
        assert store.get("a/k") == b"moved value"
        assert store.get_range("a/k", -5) == b"value"
    assert [r.status for r in server.state.requests] == [301, 200, 301, 206]


# --- get_many -------------------------------------------------------------------------------


def test_get_many_order_duplicates_and_missing(server: HTTPServerFixture,
                                               served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    values = {f"c/{i}": bytes([i]) * (i + 1) for i in range(20)}
    directory.set_many(values)
    keys = ["c/3", "missing", *values, "c/3", "c/0"]
    with fast(url) as store:
        assert store.get_many(keys) == [values.get(k) for k in keys]
        assert store.get_many(["c/1"]) == [values["c/1"]]
    assert len(server.state.requests) == len(values) + 1 + 1  # each key fetched once


def test_get_many_runs_concurrently_within_max_connections(
        server: HTTPServerFixture, served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    keys = [f"k{i}" for i in range(9)]
    directory.set_many({k: k.encode() for k in keys})
    server.state.delay = 0.3
    begin = time.monotonic()
    with fast(url, max_connections=3) as store:
        assert store.get_many(keys) == [k.encode() for k in keys]
    elapsed = time.monotonic() - begin
    assert server.state.peak == 3  # three at a time, never more
    assert elapsed < 9 * 0.3 * 0.7  # not one after the other (3 rounds of 0.3 s)


def test_get_many_from_many_threads(served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    values = {f"c/{i}": bytes([i]) * 1000 for i in range(40)}
    directory.set_many(values)
    errors: list[BaseException] = []
    with fast(url, max_connections=4) as store:
        def work() -> None:
            try:
                for _ in range(3):
                    assert store.get_many(list(values)) == list(values.values())
            except BaseException as e:  # surfaced below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []


# --- lifetime -------------------------------------------------------------------------------


def test_close_and_context_manager(served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    directory.set("k", b"v")
    with HTTPStore(url) as store:
        assert store.get_many(["k", "k2"]) == [b"v", None]
    with pytest.raises(ValueError, match="closed"):
        store.get("k")
    with pytest.raises(ValueError, match="closed"):
        store.get_many(["k", "j"])
    store.close()  # again: nothing


def test_pickle(served: tuple[DirectoryStore, str]) -> None:
    directory, url = served
    directory.set("k", b"v")
    with fast(url, retries=1, headers={"X-A": "b"}) as store:
        assert store.get("k") == b"v"
        clone = pickle.loads(pickle.dumps(store))
    with clone:
        assert clone.get("k") == b"v"
        assert clone.lock_identity == store.lock_identity and clone.retries == 1
        assert clone.headers["X-A"] == "b"


# --- hierarchies over HTTP ------------------------------------------------------------------


def _write_v3(path: Path) -> dict[str, np.ndarray[Any, Any]]:
    rng = np.random.default_rng(3)
    root = zk.open_group(path, mode="w", zarr_format=3, attributes={"title": "v3 over http"})
    img = rng.integers(0, 60000, size=(50, 40), dtype="uint16")
    a = root.create_array("raw/img", shape=(50, 40), chunks=(16, 16), dtype="uint16",
                          compressors=[{"name": "zstd", "configuration": {"level": 3}}],
                          fill_value=7, attributes={"units": "counts"},
                          dimension_names=["y", "x"])
    a[:32, :] = img[:32]  # rows 32.. never written: fill value
    expected_img = img.copy()
    expected_img[32:] = 7
    f = root.create_array("f", shape=(10,), chunks=(3,), dtype="f8", fill_value=np.nan)
    f[:4] = np.arange(4.0)
    expected_f = np.full(10, np.nan)
    expected_f[:4] = np.arange(4.0)
    sharded = root.create_array("sharded", shape=(64, 64), chunks=(8, 8), shards=(32, 32),
                                dtype="int32", fill_value=-1)
    s = rng.integers(-1000, 1000, size=(64, 64), dtype="int32")
    sharded[:40, :] = s[:40]
    expected_s = s.copy()
    expected_s[40:] = -1
    root.create_group("empty").attrs["note"] = "nothing here"
    zk.consolidate_metadata(path)
    return {"raw/img": expected_img, "f": expected_f, "sharded": expected_s}


def _write_v2(path: Path) -> dict[str, np.ndarray[Any, Any]]:
    import numcodecs

    root = zk.open_group(path, mode="w", zarr_format=2, attributes={"title": "v2 over http"})
    a = root.create_array("g/slash", shape=(30, 20), chunks=(7, 9), dtype="<i4",
                          zarr_format=2, dimension_separator="/",
                          compressors=[numcodecs.Blosc("zstd")],
                          filters=[{"id": "delta", "dtype": "<i4"}], fill_value=0)
    data = np.arange(600, dtype="<i4").reshape(30, 20)
    a[:14] = data[:14]
    expected_a = data.copy()
    expected_a[14:] = 0
    b = root.create_array("dot", shape=(12,), chunks=(5,), dtype="<f4", zarr_format=2,
                          fill_value=1.5)
    b[5:] = np.arange(7, dtype="<f4")
    expected_b = np.full(12, 1.5, dtype="<f4")
    expected_b[5:] = np.arange(7)
    zk.consolidate_metadata(path)
    return {"g/slash": expected_a, "dot": expected_b}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_round_trip_from_consolidated_metadata(server: HTTPServerFixture, zarr_format: int
                                               ) -> None:
    directory = server.new_directory()
    expected = (_write_v3 if zarr_format == 3 else _write_v2)(directory)
    local = zk.open_group(directory, mode="r")
    server.reset()
    with fast(server.url(directory)) as store:
        root = zk.open_group(store, mode="r", consolidated=True)
        assert root.consolidated and root.read_only and root.zarr_format == zarr_format
        assert root.attrs.asdict() == local.attrs.asdict()
        assert root.tree() == local.tree()
        assert sorted(name for name, _ in root.members(max_depth=None)) == sorted(
            name for name, _ in local.members(max_depth=None))
        opened = server.state.requests[:]
        for path, values in expected.items():
            array = root[path]
            np.testing.assert_array_equal(array[...], values)
            np.testing.assert_array_equal(array[...], local[path][...])
            assert array.attrs.asdict() == local[path].attrs.asdict()
            assert array.metadata.to_json() == local[path].metadata.to_json()
        # Opening read one document: zarr.json, or .zmetadata for format 2.
        assert [r.path.rsplit("/", 1)[1] for r in opened] == (
            ["zarr.json"] if zarr_format == 3 else ["zarr.json", ".zmetadata"])
        # zk.open and consolidated=None (the default in mode "r") take the same path.
        assert isinstance(zk.open(store, mode="r"), zk.Group)
        again = zk.open_group(store, mode="r")
        assert again.consolidated and again.tree() == local.tree()
        if zarr_format == 3:
            assert root["empty"].attrs["note"] == "nothing here"
    assert all(r.status in (200, 206, 404, 416) for r in server.state.requests)
    assert 404 in {r.status for r in server.state.requests}  # chunks never written


def test_without_consolidated_metadata(server: HTTPServerFixture) -> None:
    directory = server.new_directory()
    root = zk.open_group(directory, mode="w", zarr_format=3)
    root.create_array("a/b", shape=(4,), chunks=(2,), dtype="u1")[:] = [1, 2, 3, 4]
    with fast(server.url(directory)) as store:
        with pytest.raises(zk.errors.NodeNotFoundError):
            zk.open_group(store, mode="r", consolidated=True)
        opened = zk.open_group(store, mode="r")  # known paths open without listing
        assert not opened.consolidated
        assert opened["a/b"][...].tolist() == [1, 2, 3, 4]
        assert zk.open_array(store, mode="r", path="a/b")[...].tolist() == [1, 2, 3, 4]
        with pytest.raises(UnsupportedOperationError, match="consolidated"):
            list(opened.members())


def test_missing_chunks_read_as_fill_value(server: HTTPServerFixture) -> None:
    directory = server.new_directory()
    a = zk.create_array(directory, name="a", shape=(10, 10), chunks=(5, 5), dtype="i2",
                        fill_value=-3, zarr_format=3)
    a[:5, :5] = 1
    with fast(server.url(directory)) as store:
        remote = zk.open_array(store, mode="r", path="a")
        server.reset()
        values = remote[...]
    expected = np.full((10, 10), -3, dtype="i2")
    expected[:5, :5] = 1
    np.testing.assert_array_equal(values, expected)
    assert sorted(r.status for r in server.state.requests) == [200, 404, 404, 404]


# --- sharded partial reads ------------------------------------------------------------------

SHAPE = (1024, 1024)
SHARDS = (512, 512)
INNER = (64, 64)  # 8 KiB each, stored in Morton order inside a shard of 512 KiB
PER_SHARD = (SHARDS[0] // INNER[0]) * (SHARDS[1] // INNER[1])  # 64 inner chunks
INDEX_BYTES = 16 * PER_SHARD + 4  # (offset, nbytes) as uint64 each, and a CRC32C


@pytest.fixture(scope="module")
def sharded(server: HTTPServerFixture) -> tuple[str, np.ndarray[Any, Any], Path]:
    directory = server.root / "sharded"
    data = np.random.default_rng(7).integers(0, 2**16, size=SHAPE, dtype="uint16")
    a = zk.create_array(directory, name="a", shape=SHAPE, chunks=INNER, shards=SHARDS,
                        dtype="uint16", compressors=None, zarr_format=3)
    a[...] = data
    zk.consolidate_metadata(directory)
    return server.url(directory), data, directory


def _shard_index(directory: Path, shard: tuple[int, int]) -> np.ndarray[Any, Any]:
    """The (offset, nbytes) pairs of a shard's inner chunks, read from the file itself."""
    raw = (directory / "a" / "c" / str(shard[0]) / str(shard[1])).read_bytes()
    return np.frombuffer(raw[-INDEX_BYTES:-4], dtype="<u8").reshape(
        SHARDS[0] // INNER[0], SHARDS[1] // INNER[1], 2)


def _expected_requests(directory: Path, rows: list[int], cols: list[int]
                       ) -> tuple[set[str], int, int]:
    """The Range headers of the least requests reading the inner chunks that hold the
    elements ``rows x cols``: one index per touched shard, then the chunks' byte ranges
    merged as the sharding codec merges them; their count and the bytes they fetch."""
    chunks = {(r // INNER[0], c // INNER[1]) for r in rows for c in cols}
    per_shard: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for cr, cc in chunks:
        shard = (cr * INNER[0] // SHARDS[0], cc * INNER[1] // SHARDS[1])
        index = _shard_index(directory, shard)
        offset, nbytes = index[cr % index.shape[0], cc % index.shape[1]]
        per_shard.setdefault(shard, []).append((int(offset), int(nbytes)))
    ranges = {f"bytes=-{INDEX_BYTES}"}
    count = len(per_shard)
    total = INDEX_BYTES * len(per_shard)
    for found in per_shard.values():
        for start, length, _ in coalesce_ranges(found):
            ranges.add(f"bytes={start}-{start + length - 1}")
            count += 1
            total += length
    return ranges, count, total


@pytest.mark.parametrize(("name", "select", "rows", "cols"), SHARDED_PARTIAL_READS)
def test_sharded_partial_read_fetches_only_what_it_needs(
        server: HTTPServerFixture, sharded: tuple[str, np.ndarray[Any, Any], Path],
        name: str, select: Any, rows: Any, cols: Any) -> None:
    url, data, directory = sharded
    with fast(url) as store:
        array = zk.open_group(store, mode="r", consolidated=True)["a"]
        state = server.reset()
        if select == "corners":
            got = array.oindex[[0, 511], [0, 511]]
            np.testing.assert_array_equal(got, data[np.ix_([0, 511], [0, 511])])
        else:
            np.testing.assert_array_equal(array[select], data[select])
    ranges, count, total = _expected_requests(directory, list(rows), list(cols))
    assert len(state.requests) == count, (name, state.ranges())
    assert set(state.ranges()) == ranges
    assert all(r.status == 206 for r in state.requests)
    assert state.bytes_sent == total
    shard_bytes = (directory / "a" / "c" / "0" / "0").stat().st_size
    assert state.bytes_sent < shard_bytes / 4
    print(f"{name}: {len(state.requests)} requests, {state.bytes_sent} of {shard_bytes} "
          f"bytes of one shard")


def test_sharded_missing_shard_reads_fill(server: HTTPServerFixture) -> None:
    directory = server.new_directory()
    a = zk.create_array(directory, name="a", shape=(64,), chunks=(4,), shards=(16,),
                        dtype="i4", fill_value=9, zarr_format=3)
    a[:16] = np.arange(16)
    with fast(server.url(directory)) as store:
        remote = zk.open_array(store, mode="r", path="a")
        state = server.reset()
        got = remote[10:40]
    np.testing.assert_array_equal(got, np.r_[np.arange(10, 16), np.full(24, 9)])
    assert sorted(r.status for r in state.requests) == [206, 206, 404, 404]


# --- zarr-python over fsspec HTTP -----------------------------------------------------------


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_python_reads_the_same_values(server: HTTPServerFixture, zarr_format: int) -> None:
    zarr = pytest.importorskip("zarr")
    pytest.importorskip("aiohttp")
    pytest.importorskip("fsspec")
    directory = server.new_directory()
    expected = (_write_v3 if zarr_format == 3 else _write_v2)(directory)
    url = server.url(directory)
    theirs = zarr.open_group(url, mode="r", zarr_format=zarr_format)
    with fast(url) as store:
        ours = zk.open_group(store, mode="r", consolidated=True)
        for path, values in expected.items():
            mine = ours[path][...]
            np.testing.assert_array_equal(mine, values)
            np.testing.assert_array_equal(np.asarray(theirs[path][...]), mine)
            assert dict(theirs[path].attrs) == ours[path].attrs.asdict()
        assert dict(theirs.attrs) == ours.attrs.asdict()


def test_get_many_as_completed_yields_each_value_as_it_arrives(
        served: tuple[DirectoryStore, str]) -> None:
    # Readers decode each chunk while the others are still in flight: a slow key comes
    # last, every index (a repeated key too) comes once, and values match get_many's.
    directory, url = served
    directory.set_many({"slow": b"s", "a": b"a", "b": b"b"})
    with fast(url, max_connections=3) as store:
        plain_get = store._get

        def get(key: str) -> bytes | None:
            if key == "slow":
                time.sleep(0.3)
            return plain_get(key)

        store._get = get  # type: ignore[method-assign]
        arrived = list(store.get_many_as_completed(["slow", "a", "b", "a", "missing"]))
        assert arrived[-1] == (0, b"s")
        assert sorted(arrived, key=lambda pair: pair[0]) == [
            (0, b"s"), (1, b"a"), (2, b"b"), (3, b"a"), (4, None)]
        with pytest.raises(InvalidKeyError):
            list(store.get_many_as_completed(["a", "../x"]))


def test_sharded_read_all_fetches_each_shard_whole_once(
        server: HTTPServerFixture, sharded: tuple[str, np.ndarray[Any, Any], Path]) -> None:
    # Each request costs a round trip: a shard wanted whole is one GET (its index read
    # from its own bytes) once there are two shards or more per thread.
    url, data, directory = sharded
    shards = sorted(p.relative_to(directory / "a").as_posix()
                    for p in (directory / "a" / "c").rglob("*") if p.is_file())
    with fast(url) as store:
        array = zk.open_group(store, mode="r", consolidated=True)["a"]
        state = server.reset()
        with zk.config.set(threads=max(1, len(shards) // 2)):
            np.testing.assert_array_equal(array[...], data)
        assert sorted(r.path.split("/a/", 1)[1] for r in state.requests) == shards
        assert {(r.range, r.status) for r in state.requests} == {(None, 200)}
        state = server.reset()
        with zk.config.set(threads=len(shards)):  # one shard a thread: index and ranges
            np.testing.assert_array_equal(array[...], data)
        assert all(r.range is not None for r in state.requests)
