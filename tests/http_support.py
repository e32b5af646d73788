"""An HTTP server for tests, on 127.0.0.1 (never the internet): it serves a directory with
``Range`` support (``bytes=a-b``, ``bytes=a-``, the suffix form ``bytes=-n`` and ``416``),
``404`` for what is not there, counts requests and bytes, and injects faults (statuses,
delays, a server ignoring ``Range``, a wrong ``Content-Range``, redirects).

``HostileServer`` answers with bodies no well-behaved server sends (a gzip bomb, a body
that never ends, one longer than its ``Content-Length``, a range larger than asked for),
each bounded in the server by size and time so that a client without limits still ends.

Shared by the test modules that need a server (``test_http_store.py``, ``test_daf.py``,
``test_reliability_http.py``).
"""

from __future__ import annotations

import functools
import itertools
import re
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

__all__ = ["HTTPServerFixture", "HostileServer", "Request", "ServerState"]

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
        self.closed = True  # ends the streams still running in handler threads
        self.httpd.shutdown()
        self.httpd.server_close()


# --- a hostile server -------------------------------------------------------------------------

_PIECE = 64 << 10


@functools.cache
def gzip_bomb(inflated: int) -> bytes:
    """A gzip stream of ``inflated`` zero bytes (about a thousandth of that), compressed
    piece by piece so that making it costs no memory."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    parts = [compressor.compress(zeros) for _ in range(inflated >> 20)]
    parts.append(compressor.compress(bytes(inflated & ((1 << 20) - 1))))
    parts.append(compressor.flush())
    return b"".join(parts)


class _HostileHandler(BaseHTTPRequestHandler):
    """Answers by path, writing raw bytes so that headers and body go out exactly as
    given (in one write where a client could otherwise race the server)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _HostileHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:  # noqa: N802
        owner = self.server.owner
        with owner.lock:
            owner.requests.append(Request(
                self.command, self.path, "", self.headers.get("Range"),
                {k.lower(): v for k, v in self.headers.items()}))
        name = self.path.partition("?")[0].rsplit("/", 1)[-1]
        self.close_connection = name != "small"
        try:
            getattr(self, "_answer_" + name.replace("-", "_"), self._answer_missing)(owner)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass  # the client refused the body and closed the connection: as it should

    def _head(self, status: str, headers: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
        return "\r\n".join(lines).encode("latin-1")

    def _stream(self, owner: HostileServer, first: bytes, chunked: bool) -> None:
        """``first``, then zero bytes until ``owner.stream_bytes`` are sent or
        ``owner.stream_seconds`` have passed (a client without bounds still ends)."""
        self.wfile.write(first)
        piece = bytes(_PIECE)
        if chunked:
            piece = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
        sent, end = 0, time.monotonic() + owner.stream_seconds
        while sent < owner.stream_bytes and time.monotonic() < end and not owner.closed:
            self.wfile.write(piece)
            sent += _PIECE
            with owner.lock:
                owner.bytes_sent += _PIECE
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _answer_small(self, owner: HostileServer) -> None:
        body = b"ok" * 10
        self.wfile.write(self._head("200 OK", {"Content-Length": str(len(body))}) + body)

    def _answer_gzip(self, owner: HostileServer) -> None:
        """A gzip bomb, though the request asked for the identity coding."""
        body = gzip_bomb(owner.bomb_bytes)
        self.wfile.write(self._head("200 OK", {
            "Content-Encoding": "gzip", "Content-Length": str(len(body))}) + body)

    def _answer_gzip_transfer(self, owner: HostileServer) -> None:
        """The same bomb as a transfer coding (``Transfer-Encoding: gzip, chunked``)."""
        body = gzip_bomb(owner.bomb_bytes)
        chunk = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
        self.wfile.write(self._head("200 OK", {"Transfer-Encoding": "gzip, chunked"}) + chunk)

    def _answer_endless(self, owner: HostileServer) -> None:
        """A chunked body, no Content-Length, streaming zeros (as long as allowed)."""
        self._stream(owner, self._head("200 OK", {"Transfer-Encoding": "chunked"}), True)

    def _answer_until_close(self, owner: HostileServer) -> None:
        """No Content-Length and no chunking: the body ends when the connection does."""
        self._stream(owner, self._head("200 OK", {"Connection": "close"}), False)

    def _answer_missing_endless(self, owner: HostileServer) -> None:
        """A 404 whose error page never ends."""
        self._stream(owner, self._head("404 Not Found", {"Transfer-Encoding": "chunked"}),
                     True)

    def _answer_overlong(self, owner: HostileServer) -> None:
        """``Content-Length: 1000``, then 1000 bytes and far more: the first excess piece
        goes out with the declared body, so it is there when the client has read that."""
        declared = b"d" * 1000
        self._stream(owner, self._head("200 OK", {"Content-Length": "1000"}) + declared
                     + bytes(_PIECE), False)

    def _answer_range_declared(self, owner: HostileServer) -> None:
        """A 206 whatever the range asked for: the whole (large) value, with a
        consistent Content-Range and Content-Length."""
        size = owner.stream_bytes
        head = self._head("206 Partial Content", {
            "Content-Range": f"bytes 0-{size - 1}/{size}", "Content-Length": str(size)})
        self._stream(owner, head, False)

    def _answer_range_chunked(self, owner: HostileServer) -> None:
        """A 206 without a length, streaming far beyond the range asked for."""
        self._stream(owner, self._head("206 Partial Content", {
            "Transfer-Encoding": "chunked"}), True)

    def _answer_missing(self, owner: HostileServer) -> None:
        body = b"no such key"
        self.wfile.write(self._head("404 Not Found", {"Content-Length": str(len(body))})
                         + body)


class _HostileHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    owner: HostileServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class HostileServer:
    """A server on 127.0.0.1 whose answer depends on the last path segment: ``small``
    (20 good bytes), ``gzip`` and ``gzip-transfer`` (a bomb of ``bomb_bytes``),
    ``endless``, ``until-close``, ``missing-endless`` (a 404), ``overlong``,
    ``range-declared``, ``range-chunked``; anything else is a 404. Streams stop after
    ``stream_bytes`` or ``stream_seconds``."""

    def __init__(self, *, bomb_bytes: int = 256 << 20, stream_bytes: int = 64 << 20,
                 stream_seconds: float = 20.0) -> None:
        self.bomb_bytes = bomb_bytes
        self.stream_bytes = stream_bytes
        self.stream_seconds = stream_seconds
        self.lock = threading.Lock()
        self.requests: list[Request] = []
        self.bytes_sent = 0
        self.closed = False
        gzip_bomb(bomb_bytes)  # made before any request waits for it
        self.httpd = _HostileHTTPServer(("127.0.0.1", 0), _HostileHandler)
        self.httpd.owner = self
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/data.zarr/"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.closed = True  # ends the streams still running in handler threads
        self.httpd.shutdown()
        self.httpd.server_close()
