"""``zarrkit serve``: a read-only HTTP server for a store, and a web viewer on the same port.

Store keys are served at the root of the server (``GET /group/array/zarr.json``), so a store
served at ``http://host:port/`` reads with zarr-python, tensorstore's ``http`` kvstore,
zarrkit's :class:`~zarrkit.storage.http.HTTPStore` and Daf's HTTP backend. The viewer lives
entirely at ``/``: the page is ``/`` itself and its assets and JSON API are ``/`` with a query
(``/?api=tree``). The empty path is never a store key, so the two cannot collide.

Modules: :mod:`~zarrkit.server.app` (the aiohttp application), :mod:`~zarrkit.server.urlkeys`
(request paths to store keys, refusing escapes), :mod:`~zarrkit.server.values` (values with
their validators and byte ranges), :mod:`~zarrkit.server.consolidated` (consolidated metadata
made on the fly), :mod:`~zarrkit.server.viewer` (the viewer's JSON documents),
:mod:`~zarrkit.server.preview` (array previews as PNG), :mod:`~zarrkit.server.running`
(running the server in the foreground or on a background thread).

>>> from zarrkit.server import make_app
>>> make_app({}).router is not None
True
"""

from __future__ import annotations

from zarrkit.server.app import make_app
from zarrkit.server.running import BackgroundServer, serve_forever

__all__ = ["BackgroundServer", "make_app", "serve_forever"]
