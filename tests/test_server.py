"""``zarrkit serve``: the read-only HTTP server read by zarr-python, tensorstore, zarrkit's
HTTPStore and Daf's HTTP backend; its HTTP semantics (ranges, validators, refusals), its
refusal of paths out of the store, consolidated metadata made on the fly, the viewer's API
and previews, and the ``zarrkit serve`` command.

Every server runs on 127.0.0.1 in this process (or a subprocess) on a free port.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import re
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tensorstore as ts
import zarr
from PIL import Image
from zarr.storage import FsspecStore

import zarrkit as zk
from zarrkit.server import BackgroundServer
from zarrkit.server.preview import COLOURS, MAX_PIXELS, PLOT_SIZE, READ_BUDGET
from zarrkit.storage import MemoryStore, ZipStore

SECRET = b"top secret, outside the store"


def request(url: str, path: str, method: str = "GET", headers: dict[str, str] | None = None,
            body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    """Send ``path`` exactly as given (no client-side normalisation of ``..``)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A v3 hierarchy written by zarrkit, a v2 one written by zarr-python (neither
    consolidated), a file outside both, and a link from inside the v3 store to it."""
    root = tmp_path_factory.mktemp("served")
    rng = np.random.default_rng(14)
    values = {
        "img": rng.random((300, 200)).astype("f4"),
        "sub/line": np.arange(1000, dtype="i4") * 3,
        "sub/cube": rng.integers(0, 1000, (3, 40, 50)).astype("u2"),
    }
    v3 = root / "v3.zarr"
    group = zk.open_group(v3, mode="w", zarr_format=3)
    group.attrs["title"] = "served"
    group.create_array("img", shape=(300, 200), chunks=(64, 64), dtype="f4",
                       attributes={"units": "m"})[:] = values["img"]
    group.create_array("sub/line", shape=(1000,), chunks=(128,), dtype="i4")[:] = (
        values["sub/line"])
    group.create_array("sub/cube", shape=(3, 40, 50), chunks=(1, 16, 16), dtype="u2",
                       shards=(1, 32, 32))[:] = values["sub/cube"]
    v2 = root / "v2.zarr"
    v2_group = zarr.open_group(str(v2), mode="w", zarr_format=2)
    v2_group.create_array("img", shape=(300, 200), chunks=(64, 64), dtype="f4")[:] = (
        values["img"])
    v2_group.create_group("sub").create_array("line", shape=(1000,), chunks=(128,),
                                              dtype="i4")[:] = values["sub/line"]
    (root / "secret.txt").write_bytes(SECRET)
    os.symlink(root / "secret.txt", v3 / "escape")
    os.symlink(root, v3 / "up")
    return {"root": root, "v3": v3, "v2": v2, "values": values}


@pytest.fixture(scope="module")
def v3_url(data: dict[str, Any]) -> Iterator[str]:
    with BackgroundServer(data["v3"]) as server:
        yield server.url


@pytest.fixture(scope="module")
def v2_url(data: dict[str, Any]) -> Iterator[str]:
    with BackgroundServer(data["v2"]) as server:
        yield server.url


# --- peers read through the server ------------------------------------------------------------
def test_zarr_python_reads_v3_through_the_server(data: dict[str, Any], v3_url: str) -> None:
    group = zarr.open_group(FsspecStore.from_url(v3_url, read_only=True), mode="r")
    assert group.attrs["title"] == "served"
    assert sorted(group.keys()) == ["img", "sub"]
    for name, expected in data["values"].items():
        np.testing.assert_array_equal(group[name][...], expected)
    assert group["img"].attrs["units"] == "m"


def test_zarr_python_reads_v2_consolidated_made_on_the_fly(data: dict[str, Any],
                                                           v2_url: str) -> None:
    assert not (data["v2"] / ".zmetadata").exists()
    group = zarr.open_consolidated(FsspecStore.from_url(v2_url, read_only=True),
                                   zarr_format=2, mode="r")
    assert sorted(group.members(max_depth=None), key=lambda m: m[0])[0][0] == "img"
    assert group.metadata.consolidated_metadata is not None
    assert sorted(group.metadata.consolidated_metadata.flattened_metadata) == [
        "img", "sub", "sub/line"]
    np.testing.assert_array_equal(group["img"][...], data["values"]["img"])
    np.testing.assert_array_equal(group["sub/line"][...], data["values"]["sub/line"])
    assert not (data["v2"] / ".zmetadata").exists()  # made in memory, never written


def test_v3_root_document_gets_an_inline_snapshot(data: dict[str, Any], v3_url: str) -> None:
    stored = json.loads((data["v3"] / "zarr.json").read_bytes())
    assert not isinstance(stored.get("consolidated_metadata"), dict)
    status, _, body = request(v3_url, "/zarr.json")
    served = json.loads(body)
    assert status == 200
    assert sorted(served["consolidated_metadata"]["metadata"]) == [
        "img", "sub", "sub/cube", "sub/line"]
    assert served["attributes"] == stored["attributes"]
    group = zarr.open_consolidated(FsspecStore.from_url(v3_url, read_only=True), mode="r")
    assert sorted(group.metadata.consolidated_metadata.flattened_metadata) == [
        "img", "sub", "sub/cube", "sub/line"]
    # The stored document is left as it was.
    assert json.loads((data["v3"] / "zarr.json").read_bytes()) == stored


@pytest.mark.parametrize("driver, store, name", [
    ("zarr3", "v3", "img"), ("zarr3", "v3", "sub/cube"), ("zarr", "v2", "img"),
    ("zarr", "v2", "sub/line")])
def test_tensorstore_reads_through_the_http_kvstore(data: dict[str, Any], v3_url: str,
                                                    v2_url: str, driver: str, store: str,
                                                    name: str) -> None:
    url = v3_url if store == "v3" else v2_url
    array = ts.open({"driver": driver,
                     "kvstore": {"driver": "http", "base_url": url, "path": name + "/"}},
                    read=True).result()
    np.testing.assert_array_equal(array.read().result(), data["values"][name])


def test_zarrkit_http_store_reads_through_the_server(data: dict[str, Any], v3_url: str,
                                                     v2_url: str) -> None:
    for url in (v3_url, v2_url):
        array = zk.open_array(url, path="sub/line", mode="r")
        np.testing.assert_array_equal(array[...], data["values"]["sub/line"])
    group = zk.open_group(v3_url, mode="r")
    np.testing.assert_array_equal(group["sub/cube"][1, 5:30, 7:44],
                                  data["values"]["sub/cube"][1, 5:30, 7:44])


def test_daf_http_backend_reads_an_unconsolidated_data_set(tmp_path: Path) -> None:
    path = tmp_path / "cells.daf.zarr"
    with zk.daf.open(str(path), "w") as daf:
        daf.add_axis("cell", ["c1", "c2", "c3"])
        daf.set_vector("cell", "age", np.array([3.5, 1.0, 2.25]))
    root = json.loads((path / "zarr.json").read_bytes())
    root.pop("consolidated_metadata", None)  # Daf over HTTP needs what the server makes
    (path / "zarr.json").write_text(json.dumps(root))
    with BackgroundServer(path) as server, zk.daf.open(server.url) as daf:
        assert daf.backend == "http"
        assert daf.axis_vector("cell").tolist() == ["c1", "c2", "c3"]
        np.testing.assert_array_equal(daf.get_vector("cell", "age"), [3.5, 1.0, 2.25])


def test_a_zip_store_is_served(tmp_path: Path) -> None:
    values = np.arange(60, dtype="f8").reshape(6, 10)
    with ZipStore(tmp_path / "data.zip", mode="w") as store:
        zk.group(store).create_array("a", shape=(6, 10), chunks=(3, 5), dtype="f8")[:] = values
    with BackgroundServer(str(tmp_path / "data.zip")) as server:
        group = zarr.open_group(FsspecStore.from_url(server.url, read_only=True), mode="r")
        np.testing.assert_array_equal(group["a"][...], values)
        with ZipStore(tmp_path / "data.zip", mode="r") as store:
            chunk = store.get("a/c/1/1")
        assert chunk is not None
        status, headers, body = request(server.url, "/a/c/1/1", headers={"Range": "bytes=-7"})
        assert (status, body) == (206, chunk[-7:])
        assert headers["Content-Range"] == f"bytes {len(chunk) - 7}-{len(chunk) - 1}/{len(chunk)}"


# --- HTTP semantics -------------------------------------------------------------------------
def test_get_head_and_byte_ranges(data: dict[str, Any], v3_url: str) -> None:
    raw = (data["v3"] / "img" / "c" / "1" / "2").read_bytes()
    n = len(raw)
    status, headers, body = request(v3_url, "/img/c/1/2")
    assert (status, body, int(headers["Content-Length"])) == (200, raw, n)
    assert headers["Accept-Ranges"] == "bytes" and headers["Last-Modified"].endswith("GMT")
    status, headers, body = request(v3_url, "/img/c/1/2", "HEAD")
    assert (status, body, int(headers["Content-Length"])) == (200, b"", n)
    for header, start, stop in [("bytes=2-5", 2, 6), ("bytes=-3", n - 3, n),
                                ("bytes=10-", 10, n), ("bytes=0-999999", 0, n)]:
        status, headers, body = request(v3_url, "/img/c/1/2", headers={"Range": header})
        assert (status, body) == (206, raw[start:stop]), header
        assert headers["Content-Range"] == f"bytes {start}-{stop - 1}/{n}"
        assert int(headers["Content-Length"]) == stop - start
    for header in (f"bytes={n}-", "bytes=-0"):
        status, headers, _ = request(v3_url, "/img/c/1/2", headers={"Range": header})
        assert (status, headers["Content-Range"]) == (416, f"bytes */{n}")
    # Several ranges are ignored, as HTTP allows: the whole value.
    status, _, body = request(v3_url, "/img/c/1/2", headers={"Range": "bytes=0-1,4-5"})
    assert (status, body) == (200, raw)


def test_validators_and_conditional_requests(data: dict[str, Any], tmp_path: Path) -> None:
    store = tmp_path / "s.zarr"
    zk.create_array(store, shape=(4,), chunks=(2,), dtype="u1")[:] = [1, 2, 3, 4]
    with BackgroundServer(store) as server:
        _, first, _ = request(server.url, "/c/0")
        _, again, _ = request(server.url, "/c/0")
        assert first["ETag"] == again["ETag"]
        status, headers, body = request(server.url, "/c/0",
                                        headers={"If-None-Match": first["ETag"]})
        assert (status, body, headers["ETag"]) == (304, b"", first["ETag"])
        status, _, _ = request(server.url, "/c/0",
                               headers={"If-Modified-Since": first["Last-Modified"]})
        assert status == 304
        status, _, body = request(server.url, "/c/0", headers={
            "Range": "bytes=0-0", "If-Range": '"stale"'})
        assert status == 200  # If-Range names another version: the whole value
        zk.open_array(store, mode="r+")[:2] = [9, 9]
        status, changed, _ = request(server.url, "/c/0",
                                     headers={"If-None-Match": first["ETag"]})
        assert status == 200 and changed["ETag"] != first["ETag"]
        # Generated documents have validators too.
        _, made, _ = request(server.url, "/.zmetadata")
        assert made.get("ETag") is None or made["ETag"].startswith('"')


def test_missing_keys_and_writes_are_refused(data: dict[str, Any], v3_url: str) -> None:
    assert request(v3_url, "/img/c/9/9")[0] == 404
    assert request(v3_url, "/no/such/zarr.json")[0] == 404
    assert request(v3_url, "/img/c")[0] == 404  # a directory is no key
    before = (data["v3"] / "img" / "zarr.json").read_bytes()
    for method in ("PUT", "POST", "DELETE", "PATCH"):
        status, headers, _ = request(v3_url, "/img/zarr.json", method, body=b"{}")
        assert status == 405, method
        assert "PUT" not in headers["Allow"] and "GET" in headers["Allow"]
    assert request(v3_url, "/img/new", "PUT", body=b"x")[0] == 405
    assert (data["v3"] / "img" / "zarr.json").read_bytes() == before
    assert not (data["v3"] / "img" / "new").exists()
    status, headers, _ = request(v3_url, "/img/zarr.json", "OPTIONS")
    assert status == 204 and headers["Access-Control-Allow-Methods"] == "GET, HEAD, OPTIONS"


@pytest.mark.parametrize("path", [
    "/../secret.txt", "/img/../../secret.txt", "/%2e%2e/secret.txt",
    "/img/%2E%2E/%2e%2e/secret.txt", "/..%2fsecret.txt", "/img%2f..%2f..%2fsecret.txt",
    "/..%5csecret.txt", "/%5c..%5csecret.txt", "//secret.txt", "/%2fetc/passwd",
    "/escape", "/up/secret.txt",
    "/./escape", "/img/%00"])
def test_paths_out_of_the_store_are_refused(data: dict[str, Any], v3_url: str,
                                            path: str) -> None:
    status, _, body = request(v3_url, path)
    assert status in (400, 404), (path, status)
    assert SECRET not in body and b"root:" not in body


# --- the viewer's API and previews ----------------------------------------------------------
@pytest.mark.filterwarnings("ignore:Object at:UserWarning")  # zarr-python on the links
def test_viewer_page_and_api(data: dict[str, Any], v3_url: str, v2_url: str) -> None:
    status, headers, page = request(v3_url, "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b"viewer.js" in page and b"<a " not in page  # no links for fsspec to list
    for asset in ("viewer.js", "viewer.css"):
        assert request(v3_url, f"/?asset={asset}")[0] == 200
    assert request(v3_url, "/?asset=../app.py")[0] == 404
    _, _, body = request(v3_url, "/?api=tree&path=")
    reference = zarr.open_group(str(data["v3"]), mode="r")
    assert [m["name"] for m in json.loads(body)] == sorted(reference.keys())
    _, _, body = request(v3_url, "/?api=tree&path=sub")
    members = {m["name"]: m for m in json.loads(body)}
    assert members["cube"]["shape"] == list(reference["sub/cube"].shape)
    assert members["cube"]["dtype"] == str(reference["sub/cube"].dtype)
    _, _, body = request(v3_url, "/?api=node&path=sub/cube")
    node = json.loads(body)
    assert node["metadata"] == json.loads((data["v3"] / "sub/cube/zarr.json").read_bytes())
    assert (node["held_axes"], node["preview"], node["shards"]) == ([3], "image", [1, 32, 32])
    assert json.loads(request(v3_url, "/?api=node&path=img")[2])["attributes"] == {
        "units": "m"}
    assert request(v3_url, "/?api=node&path=nothing")[0] == 404
    assert request(v3_url, "/?api=node&path=../x")[0] == 400
    assert request(v3_url, "/?api=unknown")[0] == 404
    v2_members = json.loads(request(v2_url, "/?api=tree&path=sub")[2])
    assert [(m["name"], m["kind"], m["zarr_format"]) for m in v2_members] == [
        ("line", "array", 2)]
    v2_node = json.loads(request(v2_url, "/?api=node&path=img")[2])
    assert v2_node["metadata"] == json.loads((data["v2"] / "img" / ".zarray").read_bytes())


def png_of(body: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(body))
    image.load()
    return image


def test_previews_have_the_right_size_and_range(data: dict[str, Any], v3_url: str) -> None:
    status, headers, body = request(v3_url, "/?api=preview&path=img")
    assert status == 200 and headers["Content-Type"] == "image/png"
    assert png_of(body).size == (200, 300)  # every value fits: width is the last axis
    expected = data["values"]["img"]
    assert float(headers["X-Preview-Min"]) == pytest.approx(float(expected.min()))
    assert float(headers["X-Preview-Max"]) == pytest.approx(float(expected.max()))
    _, headers, body = request(v3_url, "/?api=preview&path=sub/cube&index=2")
    assert png_of(body).size == (50, 40)
    assert float(headers["X-Preview-Max"]) == data["values"]["sub/cube"][2].max()
    _, _, body = request(v3_url, "/?api=preview&path=sub/line")
    assert png_of(body).size == PLOT_SIZE
    assert request(v3_url, "/?api=preview&path=sub/cube&index=3")[0] == 400
    assert request(v3_url, "/?api=preview&path=sub/cube&index=x")[0] == 400
    assert png_of(request(v3_url, "/?api=colorbar")[2]).size == (256, 12)


def test_previews_stride_large_arrays_to_the_pixel_limit(tmp_path: Path) -> None:
    values = np.arange(2000 * 1500, dtype="f4").reshape(2000, 1500)
    zk.create_array(tmp_path / "a.zarr", shape=values.shape, chunks=(1000, 1500),
                    dtype="f4")[:] = values
    with BackgroundServer(tmp_path / "a.zarr") as server:
        _, headers, body = request(server.url, "/?api=preview&path=")
    step_y, step_x = -(-2000 // MAX_PIXELS), -(-1500 // MAX_PIXELS)
    sampled = values[::step_y, ::step_x]
    image = png_of(body)
    assert image.size == (sampled.shape[1], sampled.shape[0])
    assert max(image.size) <= MAX_PIXELS
    assert headers["X-Preview-Sampling"] == "strided"
    assert float(headers["X-Preview-Max"]) == sampled.max()
    # Each pixel has the colour of its value's place between the minimum and maximum.
    low, high = float(sampled.min()), float(sampled.max())
    levels = ((sampled.astype("f8") - low) * (255 / (high - low))).astype(np.uint8)
    np.testing.assert_array_equal(np.asarray(image)[..., :3], COLOURS[levels])


class CountingStore(MemoryStore):
    """A memory store that records every key read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    def _get(self, key: str) -> bytes | None:
        self.reads.append(key)
        return super()._get(key)


def test_preview_of_a_huge_array_reads_a_bounded_number_of_chunks() -> None:
    store = CountingStore()
    # 200000 x 200000 float32 is 160 GB; only a corner is written.
    array = zk.create_array(store, name="huge", shape=(200_000, 200_000), chunks=(1000, 1000),
                            dtype="f4", fill_value=0)
    array[:1000, :1000] = 7
    chunk_bytes = 1000 * 1000 * 4
    bound = READ_BUDGET // chunk_bytes
    with BackgroundServer(store) as server:
        store.reads.clear()
        status, headers, body = request(server.url, "/?api=preview&path=huge")
    assert status == 200
    chunk_reads = [key for key in store.reads if "/c/" in key]
    assert 0 < len(chunk_reads) <= bound, len(chunk_reads)
    assert headers["X-Preview-Sampling"] == "chunk-sampled"
    assert "huge/c/0/0" in chunk_reads  # evenly spread chunks include the first
    image = png_of(body)
    assert max(image.size) <= MAX_PIXELS and min(image.size) > 1
    assert (float(headers["X-Preview-Min"]), float(headers["X-Preview-Max"])) == (0.0, 7.0)


# --- the command ----------------------------------------------------------------------------
def test_zarrkit_serve_command(data: dict[str, Any]) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "zarrkit", "serve", str(data["v3"]), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match, line + (process.stderr.read() if process.poll() is not None else "")
        status, _, body = request(match.group(0), "/img/zarr.json")
        assert status == 200
        assert body == (data["v3"] / "img" / "zarr.json").read_bytes()
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_zarrkit_serve_reports_a_missing_store_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "zarrkit", "serve", str(tmp_path / "none.zarr"), "--port", "0"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "none.zarr" in result.stderr
