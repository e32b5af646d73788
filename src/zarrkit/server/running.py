"""Running the server: in the foreground until interrupted (``zarrkit serve``), or on a
background thread with its own event loop (tests, notebooks).

>>> import urllib.request
>>> with BackgroundServer({"k": b"value"}) as server:
...     urllib.request.urlopen(server.url + "k").read()
b'value'
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from aiohttp import web

from zarrkit.server.app import make_app


def _url(runner: web.AppRunner) -> str:
    host, port = runner.addresses[0][:2]
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    return f"http://{host}:{port}/"


async def _start(store: Any, host: str, port: int) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(make_app(store), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner, _url(runner)


def serve_forever(store: Any, host: str = "127.0.0.1", port: int = 8000,
                  on_ready: Callable[[str], None] | None = None) -> None:
    """Serve ``store`` at ``host:port`` (0: any free port) until interrupted; ``on_ready``
    is called with the server's URL once it accepts connections. OSError if the address
    cannot be bound (a port in use).

    >>> def ready(url: str) -> None:
    ...     print(url.startswith("http://127.0.0.1:"))
    ...     raise KeyboardInterrupt  # as Ctrl-C would
    >>> serve_forever({}, port=0, on_ready=ready)
    True
    """

    async def run() -> None:
        runner, url = await _start(store, host, port)
        try:
            if on_ready is not None:
                on_ready(url)
            await asyncio.Event().wait()  # until cancelled (Ctrl-C, SIGTERM)
        finally:
            await runner.cleanup()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass


class BackgroundServer:
    """The server of ``store`` on a thread of its own; ``url`` once started. A context
    manager: leaving it stops the server.

    >>> server = BackgroundServer({}).start()
    >>> server.url.startswith("http://127.0.0.1:")
    True
    >>> server.stop()
    """

    def __init__(self, store: Any, host: str = "127.0.0.1", port: int = 0) -> None:
        self.store, self.host, self.port = store, host, port
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="zarrkit-serve")
        self._runner: web.AppRunner | None = None

    def start(self) -> BackgroundServer:
        """Start serving; return once the server accepts connections."""
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(
            _start(self.store, self.host, self.port), self._loop)
        self._runner, self.url = future.result()
        return self

    def stop(self) -> None:
        """Stop serving and end the thread."""
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result()
            self._runner = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
