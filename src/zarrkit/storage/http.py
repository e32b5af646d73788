"""A read-only store over HTTP(S): each key is a URL under a base URL.

``HTTPStore("https://host/data.zarr")`` reads ``data.zarr/a/zarr.json`` from
``https://host/data.zarr/a/zarr.json``; every segment of a key is percent-encoded on its
own (``/`` separates segments and nothing else), and keys are validated as in every store,
so no key can reach above the base URL.

Reading:

- ``get_range`` sends one ``Range`` request: ``bytes=start-end``, ``bytes=start-`` for the
  rest of the value, and the suffix form ``bytes=-n`` for a negative ``start`` (the last
  ``n`` bytes: a shard index at the end of a shard costs one request, with no size
  lookup). A server that ignores ``Range`` (``200`` and the whole value) is sliced
  locally; ``416 Range Not Satisfiable`` means a range past the end, which reads as
  ``b""``, as it does in the other stores.
- ``404 Not Found`` and ``410 Gone`` are a missing key (``None``). ``403 Forbidden`` is an
  error by default (``StoreIOError`` with ``errno.EACCES``): an expired token must not
  read as an array full of fill values. S3-style buckets that answer ``403`` for every
  missing key (no ``s3:ListBucket`` permission) are read with ``missing_on_403=True``.
- Connection errors, read timeouts, ``429`` and ``500``/``502``/``503``/``504`` are retried
  ``retries`` times with exponential backoff (urllib3's ``Retry``: no wait before the first
  retry, then ``backoff * 2**(n - 1)`` seconds, at most ``backoff_max``; a ``Retry-After``
  header is respected up to two minutes). What still fails raises
  :class:`~zarrkit.errors.StoreIOError` naming the URL (without its query string, which
  may hold a token). Redirects are followed; credentials are not sent to another host.
- ``get_many`` runs its requests in a thread pool of ``max_connections`` threads owned by
  the store (zarrkit's shared pool is sized for CPU work, not for waiting on a network),
  over urllib3's thread-safe connection pool of the same size; results keep their order.
- Every request says ``Accept-Encoding: identity`` and a response in any other
  ``Content-Encoding`` (or a ``Transfer-Encoding`` other than ``chunked``) is refused
  (:class:`~zarrkit.errors.StoreIOError`): compressed transfer content is never decoded,
  so a small gzip body cannot inflate in memory. Every body is read in bounded pieces and
  bounded by what is expected of it: its ``Content-Length`` (a body longer than it
  declared is refused), the length of the range asked for, or, when neither is known,
  ``zarrkit.config.max_chunk_bytes`` (:class:`~zarrkit.errors.ResourceLimitError` as
  soon as the bound is passed). A body that breaks off is retried like a failed request.

There is no listing over plain HTTP: ``list``, ``list_prefix`` and ``list_dir`` raise
:class:`~zarrkit.errors.UnsupportedOperationError`. A hierarchy opens from consolidated
metadata (``zk.consolidate_metadata`` when writing, ``zk.open_group(HTTPStore(url),
mode="r", consolidated=True)`` when reading); nodes whose path is known open without it.
Writes raise :class:`~zarrkit.errors.ReadOnlyError`.

>>> store = HTTPStore("https://example.org/data.zarr")
>>> store
HTTPStore('https://example.org/data.zarr/')
>>> store.key_url("a b/c/0")
'https://example.org/data.zarr/a%20b/c/0'
>>> store.set("k", b"v")  # doctest: +ELLIPSIS
Traceback (most recent call last):
zarrkit.errors.ReadOnlyError: cannot write 'k': HTTPStore(...) is read-only
"""

from __future__ import annotations

import builtins
import errno
import functools
import inspect
import os
import re
import socket
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, unquote

from zarrkit.config import config
from zarrkit.errors import ResourceLimitError, StoreIOError, UnsupportedOperationError
from zarrkit.storage.base import Store
from zarrkit.storage.keys import validate_key, validate_prefix

# urllib3 is imported when a store is made, not with zarrkit: most programs never use HTTP.
if TYPE_CHECKING:
    import urllib3

__all__ = ["HTTPStore"]

_T = TypeVar("_T")

#: Statuses retried with backoff: overload and transient server or gateway failures.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: Statuses that mean "no value under this key".
_MISSING = frozenset({404, 410})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_CONTENT_RANGE = re.compile(r"\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*$", re.IGNORECASE)
# Retry-After is obeyed up to this many seconds (urllib3's own cap is six hours).
_RETRY_AFTER_MAX = 120
# Bodies are read this much at a time, so a bound is noticed before memory follows it.
_PIECE = 1 << 20
# An unwanted body (an error page, the value behind an existence check) at most this long
# is read to keep its connection; a longer or unknown one closes the connection instead.
_DISCARD_MAX = 64 << 10
# Content codings that leave the stored bytes as they are.
_IDENTITY = frozenset({"", "identity"})


@functools.cache
def _retry_options() -> dict[str, Any]:
    """Options of urllib3's Retry that only recent versions have."""
    from urllib3.util.retry import Retry

    parameters = inspect.signature(Retry.__init__).parameters
    return {"retry_after_max": _RETRY_AFTER_MAX} if "retry_after_max" in parameters else {}

_NO_LISTING = (
    "HTTP has no listing, so {what} is not possible on {store!r}. Open the hierarchy from "
    "consolidated metadata instead: zk.open_group(store, mode='r', consolidated=True), "
    "after zk.consolidate_metadata(...) when writing it; arrays and groups whose paths "
    "are known open without listing."
)


def _normalize_url(url: str) -> tuple[str, str | None, str | None]:
    """``(base URL ending in "/", query or None, userinfo or None)`` of ``url``: scheme
    and host lower-cased, default port dropped, dot segments removed, invalid path
    characters percent-encoded."""
    from urllib3.util import parse_url

    if not isinstance(url, str):
        raise TypeError(f"HTTPStore URL must be a str, not {type(url).__name__}")
    parsed = parse_url(url.strip())
    scheme = (parsed.scheme or "").lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError(f"HTTPStore needs an http:// or https:// URL, not {url!r}")
    if not parsed.host:
        raise ValueError(f"HTTPStore URL {url!r} has no host")
    if parsed.fragment is not None:
        raise ValueError(f"HTTPStore URL {url!r} has a fragment ('#...'), which no "
                         "request would send")
    port = "" if parsed.port in (None, _DEFAULT_PORTS[scheme]) else f":{parsed.port}"
    path = parsed.path or "/"
    if not path.endswith("/"):
        path += "/"
    return f"{scheme}://{parsed.host.lower()}{port}{path}", parsed.query, parsed.auth


def _error_number(reason: object) -> int:
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError, ReadTimeoutError

    if isinstance(reason, NewConnectionError):  # (a ConnectTimeoutError subclass)
        return errno.ECONNREFUSED
    if isinstance(reason, (ConnectTimeoutError, ReadTimeoutError)):
        return errno.ETIMEDOUT
    return errno.EIO


def _slice(value: bytes, start: int, length: int | None) -> bytes:
    """The protocol's range of a whole value (as ``Store.get_range`` takes it)."""
    if start < 0:
        start = max(len(value) + start, 0)
    return value[start:] if length is None else value[start:start + length]


def _content_length(response: urllib3.BaseHTTPResponse) -> int | None:
    """The declared length of the body, or None if the server declared none (a chunked
    body, one that ends when the connection does). urllib3 has already refused
    contradicting or malformed ``Content-Length`` headers."""
    remaining = response.length_remaining
    return None if remaining is None else int(remaining)


def _socket(response: urllib3.BaseHTTPResponse) -> Any:
    """The socket ``response`` is read from, if it has one."""
    connection = response.connection
    return None if connection is None else getattr(connection, "sock", None)


def _overflows(sock: Any, allowed: int) -> bool:
    """Whether more than ``allowed`` bytes wait on ``sock``, the body of declared length
    being read but for its last ``allowed`` (0 or 1) bytes: a server sending more than
    it declared. (Checked before the last byte is read: urllib3 gives the connection
    back to its pool as soon as the declared length is read, and then another thread
    may be waiting on it.) Not checked over TLS, whose socket holds records, not bytes;
    bytes left there are still never read as a body, as urllib3 closes a pooled
    connection with bytes waiting on it."""
    from urllib3.util.wait import wait_for_read

    if sock is None or hasattr(sock, "cipher"):
        return False
    try:
        # (a socket with a timeout waits for data before recv, whatever its flags)
        if sock.fileno() == -1 or not wait_for_read(sock, timeout=0.0):
            return False
        waiting = sock.recv(allowed + 1, socket.MSG_PEEK)
    except OSError:  # a closed connection: no excess here
        return False
    return len(waiting) > allowed


def _abandon(response: urllib3.BaseHTTPResponse) -> None:
    """Close the connection of a response whose body is not wanted or not trusted (no
    more of it is read) and give the slot back to the pool."""
    response.close()
    response.release_conn()


def _discard(response: urllib3.BaseHTTPResponse) -> None:
    """Dispose of an unwanted body: read it if it is short and of known length (the
    connection is kept), else close the connection."""
    declared = _content_length(response)
    if declared is not None and declared <= _DISCARD_MAX:
        response.read(declared + 1, decode_content=False)
        response.release_conn()  # (urllib3 drops a connection with bytes left on it)
        return
    _abandon(response)


def _discarded(response: urllib3.BaseHTTPResponse) -> urllib3.BaseHTTPResponse:
    _discard(response)
    return response


class HTTPStore(Store):
    """A read-only store whose keys are URLs under ``url``.

    ``timeout`` is in seconds, for connecting and for each wait for data (a number, or a
    ``(connect, read)`` pair); ``retries`` is how many times a failed request is retried
    (connection errors, timeouts, 429 and 5xx), waiting ``backoff * 2**(n - 1)`` seconds
    before the n-th retry from the second on (at most ``backoff_max``);
    ``max_connections`` bounds the connections per host and the requests ``get_many``
    runs at once. ``headers`` are sent with every request (``Authorization``, say); user
    information in the URL (``https://user:password@host/``) becomes a Basic
    ``Authorization`` header. A query string in the URL (a shared-access token) is
    appended to every key's URL. ``missing_on_403=True`` reads ``403 Forbidden`` as a
    missing key, for S3-style buckets that answer so when listing is not allowed.

    Nothing is sent until a value is read.

    >>> s = HTTPStore("HTTP://Example.ORG:80/a/../data.zarr/", retries=2, timeout=(3, 10))
    >>> s, s.read_only, s.lock_identity
    (HTTPStore('http://example.org/data.zarr/'), True, ('http', 'http://example.org/data.zarr/'))
    >>> s.list_dir("")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.UnsupportedOperationError: HTTP has no listing, ... consolidated=True), ...
    """

    read_only: bool = True
    supports_listing: bool = False
    supports_writes: bool = False
    supports_deletes: bool = False
    prefers_whole_values: bool = True
    supports_partial_reads: bool = True

    def __init__(
        self,
        url: str,
        *,
        timeout: float | tuple[float, float] = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        backoff_max: float = 20.0,
        max_connections: int = 16,
        headers: Mapping[str, str] | None = None,
        missing_on_403: bool = False,
    ) -> None:
        if retries < 0:
            raise ValueError(f"retries must be >= 0, not {retries}")
        if backoff < 0 or backoff_max < 0:
            raise ValueError("backoff and backoff_max must be >= 0")
        if max_connections < 1:
            raise ValueError(f"max_connections must be >= 1, not {max_connections}")
        from urllib3.util import Timeout, make_headers
        from urllib3.util.retry import Retry

        self.url, self._query, auth = _normalize_url(url)
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.backoff_max = backoff_max
        self.max_connections = max_connections
        self.missing_on_403 = missing_on_403
        # identity: a Range applies to the stored bytes only when nothing re-encodes them.
        merged = {"Accept-Encoding": "identity"}
        if auth is not None:
            merged["Authorization"] = make_headers(basic_auth=unquote(auth))["authorization"]
        for name, value in (headers or {}).items():  # names are case-insensitive
            for same in [n for n in merged if n.lower() == name.lower()]:
                del merged[same]
            merged[name] = value
        self.headers: dict[str, str] = merged
        connect, read = timeout if isinstance(timeout, tuple) else (timeout, timeout)
        self._timeout = Timeout(connect=connect, read=read)
        self._retry = Retry(
            total=None, connect=retries, read=retries, status=retries, other=retries,
            redirect=10, allowed_methods=frozenset({"GET", "HEAD"}),
            status_forcelist=RETRY_STATUSES, backoff_factor=backoff, backoff_max=backoff_max,
            raise_on_status=False, raise_on_redirect=True, respect_retry_after_header=True,
            **_retry_options(),
        )
        self._lock = threading.Lock()
        self._closed = False
        self._pid = os.getpid()
        self._manager: urllib3.PoolManager | None = None
        self._executor: ThreadPoolExecutor | None = None

    def __repr__(self) -> str:
        return f"HTTPStore({self.url!r})"

    @property
    def lock_identity(self) -> Hashable:
        """``("http", base URL)``, the URL normalized so that every spelling of it agrees.

        >>> HTTPStore("http://H/x").lock_identity == HTTPStore("http://h:80/x/").lock_identity
        True
        """
        return ("http", self.url)

    def key_url(self, key: str) -> str:
        """The URL that ``key`` is read from: each segment percent-encoded on its own.

        >>> HTTPStore("http://h/base?sig=abc").key_url("g/%2e%2e/ü?#")
        'http://h/base/g/%252e%252e/%C3%BC%3F%23?sig=abc'
        """
        validate_key(key)
        path = "/".join(quote(segment, safe="") for segment in key.split("/"))
        return self.url + path + ("" if self._query is None else f"?{self._query}")

    # --- connections --------------------------------------------------------------------
    def _pool(self) -> urllib3.PoolManager:
        if self._closed:
            raise ValueError(f"I/O operation on closed {self!r}")
        manager = self._manager
        if manager is not None and self._pid == os.getpid():
            return manager
        with self._lock:
            if self._manager is None or self._pid != os.getpid():
                import urllib3

                # A forked child must not share its parent's sockets.
                self._pid = os.getpid()
                self._executor = None
                self._manager = urllib3.PoolManager(
                    num_pools=8, maxsize=self.max_connections, block=True,
                    headers=self.headers,
                )
            return self._manager

    def _threads(self) -> ThreadPoolExecutor:
        self._pool()  # refuses a closed store, resets after a fork
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=self.max_connections, thread_name_prefix="zarrkit-http")
            return self._executor

    def _display(self, key: str) -> str:
        """The key's URL for messages: without the query, which may hold a token."""
        return self.key_url(key).partition("?")[0]

    def _request(self, key: str, byte_range: str | None) -> urllib3.BaseHTTPResponse:
        """GET ``key`` (with a ``Range`` header if given), retried as configured; the
        response with its body not read yet (``_body`` or ``_discard`` consume it)."""
        from urllib3.exceptions import HTTPError, MaxRetryError, ResponseError

        url = self.key_url(key)
        headers = None if byte_range is None else {**self.headers, "Range": byte_range}
        try:
            response = self._pool().request(
                "GET", url, headers=headers, timeout=self._timeout, retries=self._retry,
                preload_content=False, decode_content=False,
            )
        except MaxRetryError as e:
            reason = e.reason
            what = str(reason)
            if not (isinstance(reason, ResponseError) and "redirect" in what):
                what += f" (after {self.retries} retries)"
            raise StoreIOError(
                _error_number(reason), f"cannot read {key!r} from {self._display(key)}: {what}"
            ) from e
        except HTTPError as e:
            raise StoreIOError(
                errno.EIO, f"cannot read {key!r} from {self._display(key)}: {e}") from e
        try:
            self._check_encoding(key, response)
        except BaseException:
            _abandon(response)
            raise
        return response

    def _fetch(self, key: str, byte_range: str | None, read: Callable[
            [urllib3.BaseHTTPResponse], _T]) -> _T:
        """``read(response)`` of a GET of ``key``; a body that breaks off (a connection
        reset or a read timeout mid-body) is retried ``retries`` times, as a failed
        request is."""
        from urllib3.exceptions import HTTPError

        attempt = 0
        while True:
            response = self._request(key, byte_range)
            try:
                return read(response)
            except HTTPError as e:
                _abandon(response)
                if attempt >= self.retries:
                    raise StoreIOError(
                        _error_number(e), f"cannot read {key!r} from {self._display(key)}: "
                        f"the body broke off: {e} (after {self.retries} retries)") from e
                attempt += 1
            except BaseException:
                _abandon(response)
                raise

    def _check_encoding(self, key: str, response: urllib3.BaseHTTPResponse) -> None:
        """Refuse a body in a coding that was not asked for: decoding it could turn a few
        megabytes into gigabytes, and a range would not apply to the stored bytes."""
        coding = response.headers.get("Content-Encoding", "").strip().lower()
        transfer = [part.strip() for part in
                    response.headers.get("Transfer-Encoding", "").lower().split(",")]
        if coding not in _IDENTITY or any(p not in ("", "identity", "chunked")
                                          for p in transfer):
            what = (f"Content-Encoding {coding!r}" if coding not in _IDENTITY
                    else f"Transfer-Encoding {response.headers['Transfer-Encoding']!r}")
            raise StoreIOError(
                errno.EPROTO,
                f"cannot read {key!r} from {self._display(key)}: the server sent {what[:80]}, "
                "but only the stored bytes (Accept-Encoding: identity) were asked for",
            )

    def _body(self, key: str, response: urllib3.BaseHTTPResponse,
              expected: int | None = None) -> bytes:
        """The whole body of ``response``, read in pieces and bounded: by
        ``Content-Length``, by ``expected`` (the length of the range asked for) and by
        ``config.max_chunk_bytes``; past any of them, the connection is closed and an
        error raised."""
        where = f"cannot read {key!r} from {self._display(key)}"
        declared = _content_length(response)
        if declared is not None and expected is not None and declared > expected:
            raise StoreIOError(
                errno.EIO, f"{where}: the server declared {declared} bytes for a range of "
                f"{expected} bytes")
        limit = config.max_chunk_bytes
        if declared is not None and declared > limit:
            raise ResourceLimitError(
                f"{where}: the server declared {declared} bytes, more than "
                f"zarrkit.config.max_chunk_bytes ({limit})")
        bound = min(b for b in (declared, expected, limit) if b is not None)
        sock = _socket(response)
        # The excess check happens with the last declared byte unread (see _overflows).
        check_at = None if declared is None else max(declared - 1, 0)
        pieces: list[bytes] = []
        size = 0
        while True:
            if declared is not None and size == check_at:
                check_at = None
                if _overflows(sock, declared - size):
                    raise StoreIOError(
                        errno.EIO, f"{where}: the body is longer than the {declared} "
                        "bytes its Content-Length declared")
            amount = min(_PIECE, bound + 1 - size)
            if check_at is not None:
                amount = min(amount, check_at - size)
            piece = response.read(amount, decode_content=False)
            if not piece:
                break
            size += len(piece)
            pieces.append(piece)
            if size > bound:
                if declared is not None and size > declared:
                    raise StoreIOError(
                        errno.EIO, f"{where}: the body is longer than the {declared} bytes "
                        "its Content-Length declared")
                if expected is not None and size > expected:
                    raise StoreIOError(
                        errno.EIO, f"{where}: the server sent more than the {expected} "
                        "bytes of the range asked for")
                raise ResourceLimitError(
                    f"{where}: the body (of no declared length) is longer than "
                    f"zarrkit.config.max_chunk_bytes ({limit})")
        response.release_conn()
        return b"".join(pieces)

    def _failure(self, key: str, response: urllib3.BaseHTTPResponse) -> StoreIOError:
        status = response.status
        text = f"HTTP {status} {response.reason or ''}".rstrip()
        history = response.retries.history if response.retries is not None else ()
        if status in RETRY_STATUSES and history:
            text += f" after {len(history)} retries"
        message = f"cannot read {key!r} from {self._display(key)}: {text}"
        if status == 403:
            message += (" (for a bucket that answers 403 to every missing key, use "
                        "HTTPStore(..., missing_on_403=True))")
        number = errno.EACCES if status in (401, 403) else errno.EIO
        return StoreIOError(number, message)

    def _is_missing(self, status: int) -> bool:
        return status in _MISSING or (status == 403 and self.missing_on_403)

    # --- readable -----------------------------------------------------------------------
    def _get(self, key: str) -> bytes | None:
        return self._fetch(key, None, functools.partial(self._whole, key))

    def _whole(self, key: str, response: urllib3.BaseHTTPResponse) -> bytes | None:
        if response.status == 200:
            return self._body(key, response)
        _discard(response)
        if self._is_missing(response.status):
            return None
        raise self._failure(key, response)

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Return ``length`` bytes of ``key``'s value from ``start`` (to the end if None),
        with one ``Range`` request; a negative ``start`` counts from the end (a suffix
        range). A range past the end gives ``b""``, a missing key ``None``.

        >>> HTTPStore("http://h/").get_range("k", 0, -1)
        Traceback (most recent call last):
        ValueError: length must be None or >= 0, not -1
        """
        validate_key(key)
        if length is not None and length < 0:
            raise ValueError(f"length must be None or >= 0, not {length}")
        if start == 0 and length is None:
            return self.get(key)
        if length == 0:
            return b"" if self._exists(key) else None
        if start < 0:
            byte_range = f"bytes=-{-start}"
        elif length is None:
            byte_range = f"bytes={start}-"
        else:
            byte_range = f"bytes={start}-{start + length - 1}"
        return self._fetch(key, byte_range, functools.partial(
            self._ranged, key, start, length))

    def _ranged(self, key: str, start: int, length: int | None,
                response: urllib3.BaseHTTPResponse) -> bytes | None:
        status = response.status
        if status == 206:
            return self._partial(key, response, start, length)
        if status == 200:  # the server ignored the Range header: the whole value
            return _slice(self._body(key, response), start, length)
        _discard(response)
        if status == 416:  # the key exists; the range lies past its end
            return b""
        if self._is_missing(status):
            return None
        raise self._failure(key, response)

    def _partial(self, key: str, response: urllib3.BaseHTTPResponse, start: int,
                 length: int | None) -> bytes:
        """The bytes of a 206 response, checked against what was asked for."""
        expected = -start if start < 0 else length
        data = self._body(key, response, expected)
        match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
        if match is not None:
            first, last = int(match[1]), int(match[2])
            if last - first + 1 != len(data) or (start >= 0 and first != start):
                raise StoreIOError(
                    errno.EIO,
                    f"cannot read {key!r} from {self._display(key)}: the server sent bytes "
                    f"{first}-{last} ({len(data)} bytes) for a request from byte {start}",
                )
        if length is not None and len(data) > length:
            data = data[:length]
        return data

    def _exists(self, key: str) -> bool:
        """Whether ``key`` has a value: a one-byte range request (not HEAD, which
        pre-signed URLs often refuse); its body is at most one byte."""
        response = self._fetch(key, "bytes=0-0", _discarded)
        if response.status in (200, 206, 416):  # 416: an empty value
            return True
        if self._is_missing(response.status):
            return False
        raise self._failure(key, response)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._exists(validate_key(key))

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """The values of ``keys`` in order (``None`` for a missing key), fetched
        concurrently by up to ``max_connections`` threads; a key asked for twice is
        fetched once. Every key is validated before any request.

        >>> HTTPStore("http://h/").get_many([])
        []
        """
        unique = list(dict.fromkeys(validate_key(key) for key in keys))
        if len(unique) <= 1:
            values = [self._get(key) for key in unique]
        else:
            values = list(self._threads().map(self._get, unique))
        found = dict(zip(unique, values, strict=True))
        return [found[key] for key in keys]

    def get_many_as_completed(self, keys: Sequence[str]
                              ) -> Iterator[tuple[int, bytes | None]]:
        """``(index in keys, value)`` as each request completes (up to
        ``max_connections`` at once), so a reader decodes chunks while the rest are still
        being fetched; a key asked for twice is fetched once. Every key is validated
        before any request; after a failure, requests not yet started are cancelled.

        >>> list(HTTPStore("http://h/").get_many_as_completed([]))
        []
        """
        unique = list(dict.fromkeys(validate_key(key) for key in keys))
        if len(unique) <= 1:
            yield from enumerate(self.get_many(keys))
            return
        positions: dict[str, list[int]] = {}
        for index, key in enumerate(keys):
            positions.setdefault(key, []).append(index)
        executor = self._threads()
        futures = {executor.submit(self._get, key): key for key in unique}
        try:
            for future in as_completed(futures):
                value = future.result()
                for index in positions[futures[future]]:
                    yield index, value
        finally:
            for future in futures:
                future.cancel()

    # --- not listable -------------------------------------------------------------------
    def list(self) -> Iterator[str]:
        """Refused: HTTP has no listing (open hierarchies from consolidated metadata).

        >>> HTTPStore("http://h/").list()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.UnsupportedOperationError: HTTP has no listing, ...
        """
        raise UnsupportedOperationError(_NO_LISTING.format(what="list()", store=self))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Refused (after the prefix is validated): HTTP has no listing.

        >>> HTTPStore("http://h/").list_prefix("a/")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.UnsupportedOperationError: HTTP has no listing, ...
        """
        validate_prefix(prefix)
        raise UnsupportedOperationError(
            _NO_LISTING.format(what=f"list_prefix({prefix!r})", store=self))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """Refused (after the prefix is validated): HTTP has no listing.

        >>> HTTPStore("http://h/").list_dir("a/")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.UnsupportedOperationError: HTTP has no listing, ...
        """
        validate_prefix(prefix)
        raise UnsupportedOperationError(
            _NO_LISTING.format(what=f"list_dir({prefix!r})", store=self))

    def _iter_keys(self) -> Iterator[str]:
        raise UnsupportedOperationError(_NO_LISTING.format(what="listing", store=self))

    # --- lifetime -----------------------------------------------------------------------
    def close(self) -> None:
        """Close the pooled connections and the request threads; the store cannot be
        used afterwards. Calling it again does nothing.

        >>> s = HTTPStore("http://h/"); s.close(); s.get("k")
        Traceback (most recent call last):
        ValueError: I/O operation on closed HTTPStore('http://h/')
        """
        with self._lock:
            self._closed = True
            manager, self._manager = self._manager, None
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
        if manager is not None:
            manager.clear()

    def __enter__(self) -> HTTPStore:
        return self

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.update(_lock=None, _manager=None, _executor=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
