"""The aiohttp application: the store's keys, read-only, and the viewer at ``/``.

Keys are served at their own path (``GET /a/zarr.json``) with ``HEAD``, single byte ranges
(206, 416), ``ETag``/``Last-Modified`` and conditional requests (``If-None-Match``,
``If-Modified-Since``: 304). Every other method is refused (405); a path that names no key
(``..``, encoded ``/``, backslashes) is a 400, a missing key (or a link out of the store) a
404. Blocking store reads run on a thread pool, never on the event loop. Responses allow
any origin (CORS), so browser-based viewers on other sites can read the store too.

>>> app = make_app({})
>>> sorted({route.method for route in app.router.routes()})
['*']
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Any, TypeVar

from aiohttp import web

from zarrkit.errors import (
    IndexingError,
    InvalidKeyError,
    NodeNotFoundError,
    StoreEscapeError,
    UnsupportedOperationError,
    ZarrkitError,
)
from zarrkit.paths import normalize_path
from zarrkit.server.consolidated import Consolidator
from zarrkit.server.urlkeys import key_from_path
from zarrkit.server.values import (
    RangeNotSatisfiableError,
    Value,
    byte_range,
    content_etag,
    read_value,
)
from zarrkit.storage.base import Store
from zarrkit.storage.resolve import make_store

log = logging.getLogger("zarrkit.server")

STORE = web.AppKey("store", Store)
CONSOLIDATOR = web.AppKey("consolidator", Consolidator)
EXECUTOR = web.AppKey("executor", ThreadPoolExecutor)

ALLOWED = "GET, HEAD, OPTIONS"
_JSON_NAMES = (".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json")
_ASSETS = {"viewer.js": "text/javascript", "viewer.css": "text/css"}
_EXPOSED = ("Content-Range, Content-Length, ETag, Last-Modified, Accept-Ranges, "
            "X-Preview-Min, X-Preview-Max, X-Preview-Sampling, X-Preview-Shape")
T = TypeVar("T")


async def _in_thread(request: web.Request, function: Callable[..., T], *args: Any) -> T:
    """Run a blocking call on the application's thread pool."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(request.app[EXECUTOR],
                                      functools.partial(function, *args))


# --- store keys ----------------------------------------------------------------------------
def _lookup(store: Store, consolidator: Consolidator, key: str) -> Value | None:
    """The value to serve for ``key``: the stored one, or consolidated metadata made for
    it (see :mod:`zarrkit.server.consolidated`)."""
    value = read_value(store, key)
    if key.rsplit("/", 1)[-1] not in (".zmetadata", "zarr.json"):
        return value
    made = consolidator.document(key, None if value is None else bytes(value.data))
    if made is None:
        return value
    return Value(made, content_etag(made), None)


def _validators(value: Value) -> dict[str, str]:
    headers = {"ETag": value.etag, "Accept-Ranges": "bytes", "Cache-Control": "no-cache"}
    if value.last_modified is not None:
        headers["Last-Modified"] = email.utils.formatdate(value.last_modified, usegmt=True)
    return headers


def _not_modified(request: web.Request, value: Value) -> bool:
    """Whether a conditional request's copy is current (If-None-Match first, as HTTP says)."""
    if_none_match = request.headers.get("If-None-Match")
    if if_none_match is not None:
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return "*" in tags or value.etag in tags
    since = request.if_modified_since
    return (since is not None and value.last_modified is not None
            and int(value.last_modified) <= since.timestamp())


def _range_applies(request: web.Request, value: Value) -> bool:
    """Whether the Range header is to be honoured (If-Range names the current value)."""
    if_range = request.headers.get("If-Range")
    if if_range is None:
        return True
    if if_range.startswith('"') or if_range.startswith("W/"):
        return if_range == value.etag
    return False  # a date: this server compares entity tags only


async def _serve_key(request: web.Request) -> web.StreamResponse:
    """GET or HEAD of one store key."""
    try:
        key = key_from_path(request.rel_url.raw_path)
    except InvalidKeyError as e:
        raise web.HTTPBadRequest(text=f"{e}\n") from e
    try:
        value = await _in_thread(request, _lookup, request.app[STORE],
                                 request.app[CONSOLIDATOR], key)
    except StoreEscapeError as e:
        log.warning("refused %s: %s", key, e)
        value = None  # as if missing: the server tells nothing of what lies outside
    except InvalidKeyError as e:
        raise web.HTTPBadRequest(text=f"{e}\n") from e
    except ZarrkitError as e:  # the store refused to read it (e.g. a FIFO, not a file)
        log.warning("cannot serve %s: %s", key, e)
        # The reason stays in the log: it may name paths of the machine serving.
        raise web.HTTPInternalServerError(
            text=f"the value of {key!r} cannot be read (see the server's log)\n") from e
    if value is None:
        raise web.HTTPNotFound(text=f"no key {key!r}\n")
    headers = _validators(value)
    if _not_modified(request, value):
        return web.Response(status=304, headers=headers)
    name = key.rsplit("/", 1)[-1]
    content_type = "application/json" if name in _JSON_NAMES else "application/octet-stream"
    selected = None
    if _range_applies(request, value):
        try:
            selected = byte_range(request.headers.get("Range"), value.size)
        except RangeNotSatisfiableError as e:
            raise web.HTTPRequestRangeNotSatisfiable(
                headers={**headers, "Content-Range": f"bytes */{value.size}"},
                text=f"{e}\n") from e
    if selected is None:
        return web.Response(body=value.data, headers=headers, content_type=content_type)
    start, stop = selected
    headers["Content-Range"] = f"bytes {start}-{stop - 1}/{value.size}"
    return web.Response(status=206, body=value.data[start:stop], headers=headers,
                        content_type=content_type)


# --- the viewer ----------------------------------------------------------------------------
@functools.cache
def _static(name: str) -> bytes:
    return resources.files("zarrkit.server").joinpath("static", name).read_bytes()


def _json(document: Any, status: int = 200) -> web.Response:
    return web.Response(text=json.dumps(document), status=status,
                        content_type="application/json")


def _preview(store: Store, path: str, index: tuple[int, ...]) -> tuple[bytes, dict[str, str]]:
    from zarrkit.api import open_array
    from zarrkit.server.preview import render_preview

    preview = render_preview(open_array(store, path=path, mode="r"), index)
    headers = {"X-Preview-Sampling": preview.sampling,
               "X-Preview-Shape": ",".join(str(len(i)) for i in preview.indices),
               "Cache-Control": "no-cache"}
    if preview.minimum is not None and preview.maximum is not None:
        headers["X-Preview-Min"] = repr(preview.minimum)
        headers["X-Preview-Max"] = repr(preview.maximum)
    return preview.png(), headers


def _index(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError as e:
        raise IndexingError(f"index must be integers separated by commas: {text!r}") from e


async def _serve_viewer(request: web.Request) -> web.StreamResponse:
    """``/``: the viewer's page, its assets (``?asset=``) and its API (``?api=``)."""
    query = request.rel_url.query
    if not query:
        return web.Response(body=_static("index.html"), content_type="text/html")
    asset = query.get("asset")
    if asset is not None:
        if asset not in _ASSETS:
            raise web.HTTPNotFound(text=f"no asset {asset!r}\n")
        return web.Response(body=_static(asset), content_type=_ASSETS[asset])
    store = request.app[STORE]
    api = query.get("api")
    try:
        path = normalize_path(query.get("path", ""))
        if api == "tree":
            from zarrkit.server.viewer import members

            return _json(await _in_thread(request, members, store, path))
        if api == "node":
            from zarrkit.server.viewer import describe

            return _json(await _in_thread(request, describe, store, path))
        if api == "preview":
            png, headers = await _in_thread(request, _preview, store, path,
                                            _index(query.get("index", "")))
            return web.Response(body=png, headers=headers, content_type="image/png")
        if api == "colorbar":
            from zarrkit.server.preview import colour_bar

            return web.Response(body=colour_bar(), content_type="image/png")
    except NodeNotFoundError as e:
        return _json({"error": str(e.args[0] if e.args else e)}, status=404)
    except (UnsupportedOperationError, IndexingError, InvalidKeyError) as e:
        return _json({"error": str(e)}, status=400)
    raise web.HTTPNotFound(text=f"no viewer API {api!r}\n")


# --- dispatch ---------------------------------------------------------------------------------
async def _dispatch(request: web.Request) -> web.StreamResponse:
    """Every request: the viewer at ``/``, store keys elsewhere; read-only."""
    if request.method == "OPTIONS":  # a CORS preflight
        return web.Response(status=204, headers={
            "Allow": ALLOWED, "Access-Control-Allow-Methods": ALLOWED,
            "Access-Control-Allow-Headers": "Range, If-None-Match, If-Modified-Since, If-Range",
            "Access-Control-Max-Age": "86400"})
    if request.method not in ("GET", "HEAD"):
        raise web.HTTPMethodNotAllowed(request.method, ["GET", "HEAD", "OPTIONS"],
                                       text="this server is read-only\n")
    if request.rel_url.raw_path == "/":
        return await _serve_viewer(request)
    return await _serve_key(request)


async def _allow_any_origin(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.setdefault("Access-Control-Allow-Origin", "*")
    response.headers.setdefault("Access-Control-Expose-Headers", _EXPOSED)


def make_app(store: Any, *, threads: int = 8) -> web.Application:
    """The server application for ``store`` (any store-like, opened read-only).

    >>> make_app("memory://served-doc")[STORE]
    MemoryStore(<0 keys>)
    """
    store_obj = make_store(store, mode="r")
    app = web.Application()
    app[STORE] = store_obj
    app[CONSOLIDATOR] = Consolidator(store_obj)
    executor = ThreadPoolExecutor(threads, thread_name_prefix="zarrkit-serve")
    app[EXECUTOR] = executor

    async def shut_down(_: web.Application) -> None:
        executor.shutdown(wait=False, cancel_futures=True)

    app.on_cleanup.append(shut_down)
    app.on_response_prepare.append(_allow_any_origin)
    app.router.add_route("*", "/{tail:.*}", _dispatch)
    return app

