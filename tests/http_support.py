"""An HTTP server for tests, on 127.0.0.1 (never the internet): it serves a directory with
``Range`` support (``bytes=a-b``, ``bytes=a-``, the suffix form ``bytes=-n`` and ``416``),
``404`` for what is not there, counts requests and bytes, and injects faults (statuses,
delays, a server ignoring ``Range``, a wrong ``Content-Range``, redirects).

Shared by the test modules that need a server (``test_http_store.py``, ``test_daf.py``).
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

__all__ = ["HTTPServerFixture", "Request", "ServerState"]

@dataclass
class Request:
    method: str
    path: str  # as sent, percent-encoded
    query: str
    range: str | None
    headers: dict[str, str]
    status: int = 0


@dataclass
class ServerState:
    """What one test sees and sets: a fresh one per test, so that handler threads left
    over from an earlier test (a slow response) touch only that test's state."""

    requests: list[Request] = field(default_factory=list)
    bytes_sent: int = 0
    active: int = 0
    peak: int = 0
    faults: list[int] = field(default_factory=list)  # statuses for the next requests
    always: int | None = None  # a status for every request
    delay: float = 0.0  # seconds before answering
    ignore_range: bool = False  # answer 200 with the whole file
    shift_range: int = 0  # send the bytes of a range this far off
    missing_status: int = 404
    redirect: tuple[str, str] | None = None  # (path prefix, replacement): 301
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ranges(self) -> list[str | None]:
        return [r.range for r in self.requests]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # get_many opens up to max_connections at once: a backlog of 5 (the default) drops
    # SYNs, which the client resends a second later.
    request_queue_size = 128
    state: ServerState
    root: Path

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up on a slow answer: nothing to report


_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers
    disable_nagle_algorithm = True  # headers and body go out in two writes
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:  # noqa: N802
        self._serve()

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve()

    def _serve(self) -> None:
        state = self.server.state
        path, _, query = self.path.partition("?")
        request = Request(self.command, path, query, self.headers.get("Range"),
                          {k.lower(): v for k, v in self.headers.items()})
        with state.lock:
            state.requests.append(request)
            state.active += 1
            state.peak = max(state.peak, state.active)
            fault = state.faults.pop(0) if state.faults else state.always
        try:
            if state.delay:
                time.sleep(state.delay)
            if fault is not None:
                self._send(state, request, fault, b"injected failure")
                return
            if state.redirect is not None and path.startswith(state.redirect[0]):
                target = state.redirect[1] + path[len(state.redirect[0]):]
                self._send(state, request, 301, b"", {"Location": target})
                return
            file = self._resolve(path)
            if file is None:
                self._send(state, request, state.missing_status, b"no such key")
                return
            self._send_file(state, request, file.read_bytes())
        finally:
            with state.lock:
                state.active -= 1

    def _resolve(self, path: str) -> Path | None:
        segments = [unquote(s, errors="strict") for s in path.split("/")[1:]]
        if any(s in ("", ".", "..") or "/" in s or "\x00" in s for s in segments):
            return None
        file = self.server.root.joinpath(*segments)
        return file if file.is_file() else None

    def _send_file(self, state: ServerState, request: Request, data: bytes) -> None:
        match = _RANGE.fullmatch((request.range or "").strip())
        if match is None or match[0] == "bytes=-" or state.ignore_range:
            self._send(state, request, 200, data)
            return
        size = len(data)
        if match[1] == "":  # the last n bytes
            n = int(match[2])
            if n == 0 or size == 0:
                self._send(state, request, 416, b"", {"Content-Range": f"bytes */{size}"})
                return
            first, last = max(size - n, 0), size - 1
        else:
            first = int(match[1])
            last = int(match[2]) if match[2] else size - 1
            if last < first:  # syntactically invalid: ignored, as RFC 9110 says
                self._send(state, request, 200, data)
                return
            if first >= size:
                self._send(state, request, 416, b"", {"Content-Range": f"bytes */{size}"})
                return
            last = min(last, size - 1)
        first += state.shift_range
        last = min(last + state.shift_range, size - 1)
        self._send(state, request, 206, data[first:last + 1],
                   {"Content-Range": f"bytes {first}-{last}/{size}"})

    def _send(self, state: ServerState, request: Request, status: int, body: bytes,
              headers: dict[str, str] | None = None) -> None:
        request.status = status
        try:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            if self.command != "HEAD" and status in (200, 206):
                with state.lock:  # counted first: the client may check before we return
                    state.bytes_sent += len(body)  # bytes of values, not of error pages
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)


class HTTPServerFixture:
    """A server on 127.0.0.1 serving ``root``; ``state`` is reset for every test."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.root = root
        self.httpd.state = ServerState()
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self._names = itertools.count()

    @property
    def state(self) -> ServerState:
        return self.httpd.state

    def reset(self) -> ServerState:
        self.httpd.state = ServerState()
        return self.httpd.state

    def new_directory(self) -> Path:
        """A fresh directory under the served root."""
        path = self.root / f"d{next(self._names)}"
        path.mkdir()
        return path

    def url(self, directory: Path | str = "") -> str:
        relative = Path(directory).relative_to(self.root) if Path(directory).is_absolute() \
            else Path(directory)
        text = relative.as_posix()
        return f"http://127.0.0.1:{self.port}/" + ("" if text == "." else text + "/")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
