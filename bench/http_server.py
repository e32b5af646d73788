"""S12's HTTP server: a static file server on 127.0.0.1 that counts the requests it answers.

    .venv/bin/python bench/http_server.py DIRECTORY   # prints "PORT <n>", serves until killed

The suite starts it in a process of its own (:func:`serve`), so it never shares a GIL with
the client being measured. It is aiohttp's ``web.FileResponse``: ``sendfile`` of the file's
bytes, ``Range`` requests (``bytes=a-b``, ``bytes=a-`` and the suffix form ``bytes=-n``)
answered with ``206`` and a ``Content-Range``, ``416`` past the end, ``404`` for what is not
there, keep-alive connections and a listen backlog large enough for every client's pool.

Two control paths, never counted, let a measurement child read the counts:

- ``GET /_bench/reset``: forget the requests counted so far;
- ``GET /_bench/stats``: ``{"requests": n, "bytes": b, "statuses": {...}, "log": [...]}``,
  the requests answered since the last reset (the bytes of ``200``/``206`` bodies), and the
  first :data:`LOG_MAX` of them as ``[method, path, range, status, length]``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

LOG_MAX = 200
"""Requests logged in full since the last reset (all are counted)."""

CONTROL = "/_bench/"


def make_app(root: Path) -> Any:
    """The aiohttp application serving ``root``."""
    from aiohttp import web

    root = root.resolve()
    stats: dict[str, Any] = {}

    def reset() -> None:
        stats.update(requests=0, bytes=0, statuses={}, log=[])

    reset()

    async def control(request: web.Request) -> web.Response:
        if request.match_info["what"] == "reset":
            reset()
            return web.json_response({"ok": True})
        if request.match_info["what"] == "stats":
            return web.json_response(stats)
        raise web.HTTPNotFound()

    async def serve_file(request: web.Request) -> web.StreamResponse:
        # The path as sent, decoded by aiohttp; nothing may reach above the root.
        file = (root / request.match_info["tail"]).resolve()
        if not file.is_relative_to(root) or not file.is_file():
            raise web.HTTPNotFound()
        return web.FileResponse(file)

    async def count(request: web.Request, response: web.StreamResponse) -> None:
        # Runs when the status and headers are final, before the body is sent: a client
        # asking for the stats after its read has completed sees every request.
        if request.path.startswith(CONTROL):
            return
        status = response.status
        length = response.content_length or 0
        stats["requests"] += 1
        stats["statuses"][str(status)] = stats["statuses"].get(str(status), 0) + 1
        if status in (200, 206) and request.method != "HEAD":
            stats["bytes"] += length
        if len(stats["log"]) < LOG_MAX:
            stats["log"].append([request.method, request.path, request.headers.get("Range"),
                                 status, length])

    app = web.Application()
    app.on_response_prepare.append(count)
    app.router.add_get(CONTROL + "{what}", control)
    app.router.add_get("/{tail:.+}", serve_file)  # HEAD too (allow_head)
    return app


def main() -> None:
    """Serve ``argv[1]`` on 127.0.0.1 (a free port, printed as ``PORT <n>``) until killed."""
    from aiohttp import web

    app = make_app(Path(sys.argv[1]))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before the port is announced: a connection made before the event loop runs
    # waits in the backlog. A large one: clients open their whole pool at once (16 to 100
    # connections).
    sock.listen(1024)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    web.run_app(app, sock=sock, backlog=1024, access_log=None, print=None,
                handle_signals=True)


# --- the parent's side ------------------------------------------------------------------------
@contextlib.contextmanager
def serve(root: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run the server on ``root`` in a new process; yield its base URL
    (``http://127.0.0.1:<port>``) and stop it afterwards."""
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), str(root)],
                            stdout=subprocess.PIPE, env=env or dict(os.environ),
                            start_new_session=True, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"the S12 HTTP server did not start (said {line!r})")
        url = f"http://127.0.0.1:{int(line.split()[1])}"
        stats(url)  # answers: it is listening
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _control(url: str, what: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}{CONTROL}{what}", timeout=30) as response:
        result: dict[str, Any] = json.loads(response.read())
    return result


def reset(url: str) -> None:
    """Forget the requests the server at ``url`` has counted."""
    _control(url, "reset")


def stats(url: str) -> dict[str, Any]:
    """What the server at ``url`` counted since the last reset."""
    return _control(url, "stats")


if __name__ == "__main__":
    main()
