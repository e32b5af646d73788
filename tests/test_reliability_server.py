"""``zarrkit serve`` under hostile clients and files: a ``Range`` header of thousands of
digits is answered (416 for a start past the end, the whole value for an end past it),
never with a server error; a value that is a FIFO is refused at once (500, the reason
in the server's log only), and requests for it, many at once, leave the server free to
answer the next well-behaved client with the right bytes."""

from __future__ import annotations

import http.client
import os
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.server import BackgroundServer


def request(url: str, path: str, headers: dict[str, str] | None = None
            ) -> tuple[int, dict[str, str], bytes]:
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[dict[str, Any]]:
    path = tmp_path / "s.zarr"
    array = zk.create_array(str(path), shape=(16,), chunks=(4,), dtype="i4", compressors=None)
    array[:] = np.arange(16)
    os.remove(path / "c" / "1")
    os.mkfifo(path / "c" / "1")
    with BackgroundServer(path) as server:
        yield {"url": server.url, "chunk0": (path / "c" / "0").read_bytes(), "root": tmp_path}


def test_ranges_of_thousands_of_digits(served: dict[str, Any]) -> None:
    url, chunk = served["url"], served["chunk0"]
    huge = "9" * 5000
    status, headers, body = request(url, "/c/0", {"Range": f"bytes={huge}-"})
    assert status == 416 and headers["Content-Range"] == f"bytes */{len(chunk)}"
    status, _, body = request(url, "/c/0", {"Range": f"bytes=0-{huge}"})
    assert status == 206 and body == chunk
    status, _, body = request(url, "/c/0", {"Range": f"bytes=-{huge}"})
    assert status == 206 and body == chunk
    status, _, body = request(url, "/c/0", {"Range": f"bytes=1-{huge}"})
    assert status == 206 and body == chunk[1:]


def test_a_fifo_is_refused_and_blocks_no_worker(served: dict[str, Any]) -> None:
    url, chunk = served["url"], served["chunk0"]
    results: list[int] = []

    def hostile() -> None:
        results.append(request(url, "/c/1")[0])

    # More requests than the server has worker threads.
    threads = [threading.Thread(target=hostile) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert results == [500] * 32
    status, _, body = request(url, "/c/1")
    assert status == 500 and b"cannot be read" in body
    assert str(served["root"]).encode() not in body  # no path of the serving machine
    status, _, body = request(url, "/c/0")
    assert (status, body) == (200, chunk)
