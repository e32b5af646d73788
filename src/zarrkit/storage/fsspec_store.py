"""A store on any fsspec file system: ``s3://``, ``gs://``, ``az://``, ``memory://``, ...

``FsspecStore("s3://bucket/data.zarr", storage_options={...})`` keeps key ``a/zarr.json`` at
``s3://bucket/data.zarr/a/zarr.json``. The file system comes from fsspec (``fsspec`` and,
for S3, ``s3fs``: ``pip install 'zarrkit[remote]'``); its asynchronous implementations
(s3fs, gcsfs, adlfs) run every request of a batch concurrently on fsspec's event loop,
invisibly to the caller, and synchronous ones (``memory://``) run them in turn.

How each operation maps onto fsspec:

- ``get``: ``cat_file`` (s3fs is asked for one ``GET``: ``max_concurrency=1``, so that it
  does not send a ``HEAD`` for the size first); a missing key (``FileNotFoundError``) is
  ``None``.
- ``get_many``: one ``fs.cat(paths, on_error="return")``, which an asynchronous file system
  runs concurrently; a key asked for twice is fetched once.
- ``get_range``: ``cat_file(path, start, end)``, one ``Range`` request: a negative ``start``
  is the suffix form ``bytes=-n`` (a shard index at the end of a shard costs one request
  and no size lookup); a range past the end (``416``/``InvalidRange``) reads as ``b""``.
- ``set`` / ``set_many``: ``pipe_file`` / one ``fs.pipe({...})`` (concurrent uploads).
- ``set_if_not_exists``: on S3 (s3fs) a conditional ``PUT`` with ``If-None-Match: *``
  (``pipe_file(mode="create")``), atomic on the server among every writer; other file
  systems have no conditional write that fsspec exposes, so there it is a check then a
  write, atomic only among the threads of this process (see
  :meth:`FsspecStore.set_if_not_exists`).
- ``list_dir``: ``fs.ls`` (a delimiter listing: one request per 1000 entries on S3);
  ``list_prefix`` and ``list``: ``fs.find`` (a flat listing); entries whose names are not
  valid store keys (written by other programs: ``a//b``, directory markers) are left out.
- ``delete``: ``rm_file`` (a missing key is not an error); ``delete_prefix``: the keys
  listed by ``find``, removed with one ``fs.rm([...])`` (S3: ``DeleteObjects``, 1000 keys
  a request). Not ``fs.rm(prefix, recursive=True)``: on a store at the root of a bucket
  that would delete the bucket itself, and fsspec expands ``*``, ``?`` and ``[`` in paths
  as patterns (keys holding them are read and removed one by one, never as patterns).

Errors: a missing bucket is a :class:`~zarrkit.errors.StoreIOError` (``ENOENT``), not a
missing key, so that a misspelt bucket never reads as an array of fill values; every other
failure of the file system (no permission, a network error, a server error after the file
system's own retries) is a ``StoreIOError`` naming the URL, with the original error as its
cause. A read-only store raises :class:`~zarrkit.errors.ReadOnlyError` on any write.

>>> store = FsspecStore("memory://zarrkit-doc-module/data.zarr")
>>> store.set("a/zarr.json", b"{}")
>>> store.list_dir("a/")
(['zarr.json'], [])
>>> store.get("missing") is None
True
"""

from __future__ import annotations

import builtins
import errno
import inspect
import os
import re
import threading
import zlib
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from zarrkit.errors import InvalidKeyError, StoreIOError, ZarrkitError
from zarrkit.storage.base import Buffer, Store
from zarrkit.storage.keys import validate_key, validate_prefix

# fsspec is imported when a store is made, not with zarrkit: it is an optional dependency.
if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

__all__ = ["FsspecStore"]

# Characters that fsspec's cat/rm/expand_path read as glob patterns.
_MAGIC = re.compile(r"[*?\[]")
# A missing key on every file system; the last two for file systems with real directories.
_MISSING = (FileNotFoundError, IsADirectoryError, NotADirectoryError)
# Error codes (S3's, and the HTTP statuses that s3fs reports as codes) of a range that
# lies past the end of a value.
_RANGE_CODES = frozenset({"InvalidRange", "416", "RequestedRangeNotSatisfiable"})
# Error codes of a server that does not implement conditional writes.
_NO_CONDITIONAL_CODES = frozenset({"NotImplemented", "501"})
# Conditional writes of this process on one key take turns (see set_if_not_exists).
_CREATE_LOCKS = [threading.Lock() for _ in range(64)]


def _reset_after_fork() -> None:
    # A lock held by another thread at fork time would never be released in the child.
    _CREATE_LOCKS[:] = [threading.Lock() for _ in range(len(_CREATE_LOCKS))]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _error_code(error: BaseException) -> str | None:
    """The service's error code behind an fsspec error (botocore's ``ClientError`` keeps
    it in ``response["Error"]["Code"]``; s3fs raises the translated error from it)."""
    for cause in (error, error.__cause__, error.__context__):
        response = getattr(cause, "response", None)
        if isinstance(response, dict):
            code = response.get("Error", {}).get("Code")
            if code is not None:
                return str(code)
    return None


def _is_range_error(error: BaseException) -> bool:
    if _error_code(error) in _RANGE_CODES:
        return True
    return (isinstance(error, OSError) and error.errno == errno.EINVAL
            and "range" in str(error).lower())


def _is_missing_bucket(error: BaseException) -> bool:
    return _error_code(error) == "NoSuchBucket"


def _url_to_fs(url: str, options: Mapping[str, Any]) -> tuple[Any, str]:
    """The file system and path of ``url``; a ZarrkitError naming the protocol and the
    package to install when fsspec cannot provide one."""
    protocol = url.split("://", 1)[0] if "://" in url else "file"
    try:
        from fsspec.core import url_to_fs
    except ImportError as e:
        raise ZarrkitError(
            f"cannot open {url!r}: URLs other than http(s):// and memory:// need the "
            "'fsspec' package (pip install 'zarrkit[remote]')"
        ) from e
    try:
        return url_to_fs(url, **options)  # type: ignore[no-any-return]
    except ImportError as e:
        raise ZarrkitError(
            f"cannot open {url!r}: fsspec needs another package for the {protocol!r} "
            f"protocol ({e})"
        ) from e
    except ValueError as e:
        if "protocol" not in str(e).lower():
            raise
        raise ZarrkitError(
            f"cannot open {url!r}: no fsspec file system for the protocol {protocol!r} "
            f"({e}); an fsspec plugin package may provide it"
        ) from e


def _accepts(method: Any, name: str) -> bool:
    try:
        return name in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def _has_atomic_create(fs: Any) -> bool:
    """Whether ``pipe_file(mode="create")`` is a server-side conditional write: s3fs's
    (``If-None-Match: *``). fsspec's default ``mode="create"`` checks, then writes."""
    module = type(fs).__module__ or ""
    return module.split(".")[0] == "s3fs" and _accepts(getattr(fs, "_pipe_file", None), "mode")


class FsspecStore(Store):
    """A store whose keys are files under ``url_or_fs`` (a URL, or an fsspec file system
    object with ``path`` the store's root in it).

    ``storage_options`` go to the file system (with a URL only): credentials, an
    ``endpoint_url`` in ``client_kwargs`` for an S3-compatible server, ``anon=True`` for a
    public bucket... ``path`` is appended to the URL's path. Nothing is sent until the
    store is used.

    Attribute ``conditional_writes`` says whether :meth:`set_if_not_exists` is a
    conditional write on the server (``True`` for S3 through s3fs; it turns ``False`` by
    itself when the server answers ``501 Not Implemented``). Set it to ``False`` for an
    S3-compatible server that silently ignores ``If-None-Match`` (it would overwrite): the
    store then checks, then writes.

    >>> s = FsspecStore("memory://zarrkit-doc-class", "data.zarr", read_only=True)
    >>> s.url, s.read_only, s.lock_identity
    ('memory://zarrkit-doc-class/data.zarr', True, \
('fsspec', 'memory', '/zarrkit-doc-class/data.zarr'))
    >>> s.set("k", b"v")
    Traceback (most recent call last):
    zarrkit.errors.ReadOnlyError: cannot write 'k': \
<FsspecStore(MemoryFileSystem, /zarrkit-doc-class/data.zarr)> is read-only
    """

    supports_listing: bool = True
    prefers_whole_values: bool = True
    supports_writes: bool = True
    supports_deletes: bool = True
    supports_partial_reads: bool = True

    def __init__(
        self,
        url_or_fs: str | AbstractFileSystem,
        path: str = "",
        *,
        storage_options: Mapping[str, Any] | None = None,
        read_only: bool = False,
    ) -> None:
        sub_path = path.strip("/")
        if sub_path:
            validate_key(sub_path)
        if isinstance(url_or_fs, str):
            fs, root = _url_to_fs(url_or_fs, storage_options or {})
            root = root.rstrip("/")
            if sub_path:
                root = f"{root}/{sub_path}" if root else fs._strip_protocol(sub_path)
        else:
            if storage_options:
                raise TypeError("storage_options are for a URL; a file system object is "
                                "already configured")
            if not hasattr(url_or_fs, "cat_file"):
                raise TypeError(f"FsspecStore needs a URL or an fsspec file system, not "
                                f"{type(url_or_fs).__name__}")
            fs = url_or_fs
            root = fs._strip_protocol(sub_path).rstrip("/") if sub_path else ""
        self.fs: Any = fs
        self.root: str = root
        self.read_only = read_only
        protocol = fs.protocol
        self.protocol: str = protocol if isinstance(protocol, str) else protocol[0]
        # Full paths are this base and the key; the root of the file system if no root.
        self._base = f"{root}/" if root else (getattr(fs, "root_marker", "") or "")
        url = fs.unstrip_protocol(root) if root else f"{self.protocol}://"
        self.url: str = url.replace(":///", "://", 1) if self.protocol == "memory" else url
        self.conditional_writes: bool = _has_atomic_create(fs)
        # s3fs reads a whole value with a HEAD (for its size) and then GETs, unless asked
        # for no concurrency: then one GET.
        self._cat_options: dict[str, Any] = (
            {"max_concurrency": 1} if _accepts(getattr(fs, "_cat_file", None),
                                               "max_concurrency") else {})

    @classmethod
    def from_url(cls, url: str, storage_options: Mapping[str, Any] | None = None,
                 read_only: bool = False, allowed_exceptions: Any = None) -> FsspecStore:
        """The store at ``url``, as zarr-python's ``FsspecStore.from_url`` makes it
        (``allowed_exceptions`` is accepted for that signature: zarrkit treats only a
        missing key as missing).

        >>> FsspecStore.from_url("memory://zarrkit-doc-from-url", read_only=True).read_only
        True
        """
        return cls(url, storage_options=storage_options, read_only=read_only)

    def __repr__(self) -> str:
        """As zarr-python prints the store: its file system's class and its root path.

        >>> FsspecStore("memory://zarrkit-doc-repr/x")
        <FsspecStore(MemoryFileSystem, /zarrkit-doc-repr/x)>
        """
        return f"<FsspecStore({type(self.fs).__name__}, {self.root or '/'})>"

    @property
    def lock_identity(self) -> Hashable:
        """``("fsspec", protocol, root)``: equal for every handle on the same location.

        >>> a = FsspecStore("memory://zarrkit-doc-lock/x")
        >>> a.lock_identity == FsspecStore("memory://zarrkit-doc-lock", "x/").lock_identity
        True
        """
        return ("fsspec", self.protocol, self.root)

    # --- paths and errors ---------------------------------------------------------------
    def _path(self, key: str) -> str:
        return self._base + key

    def _display(self, key: str) -> str:
        return f"{self.url.rstrip('/')}/{key}" if key else self.url

    def _error(self, error: BaseException, key: str, action: str,
               count: int = 1) -> StoreIOError:
        """A StoreIOError for a failed ``action`` on ``key`` (on ``count`` keys, the first
        of them ``key``, for a batch), naming the URL and keeping ``error``'s errno."""
        where = (f"{key!r} at {self._display(key)}" if count == 1 else
                 f"{count} keys ({key!r}, ...) under {self.url}")
        if _is_missing_bucket(error):
            return StoreIOError(errno.ENOENT,
                                f"cannot {action} {where}: the bucket does not exist")
        number = getattr(error, "errno", None)
        if not isinstance(number, int):
            number = errno.EACCES if isinstance(error, PermissionError) else errno.EIO
        what = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        return StoreIOError(number, f"cannot {action} {where}: {what}")

    def _missing(self, error: BaseException, key: str) -> None:
        """Accept ``error`` as "no value under ``key``", unless it is a missing bucket."""
        if _is_missing_bucket(error):
            raise self._error(error, key, "read") from error

    # --- readable -----------------------------------------------------------------------
    def _get(self, key: str) -> bytes | None:
        try:
            return bytes(self.fs.cat_file(self._path(key), **self._cat_options))
        except _MISSING as e:
            self._missing(e, key)
            return None
        except Exception as e:
            raise self._error(e, key, "read") from e

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Return ``length`` bytes of ``key``'s value from ``start`` (to the end if None),
        with one range request; a negative ``start`` counts from the end (a suffix
        range, then cut to ``length``). A range past the end gives ``b""``, a missing key
        ``None``.

        >>> s = FsspecStore("memory://zarrkit-doc-range")
        >>> s.set("k", b"0123456789")
        >>> s.get_range("k", 2, 3), s.get_range("k", -4), s.get_range("k", -4, 1)
        (b'234', b'6789', b'6')
        >>> s.get_range("k", 20, 5), s.get_range("missing", 0, 1)
        (b'', None)
        """
        validate_key(key)
        if length is not None and length < 0:
            raise ValueError(f"length must be None or >= 0, not {length}")
        if start == 0 and length is None:
            return self.get(key)
        # A zero-length read still tells a missing key from a present one: ask for a byte.
        want = None if length is None else max(length, 1)
        end = None if start < 0 or want is None else start + want
        try:
            data = bytes(self.fs.cat_file(self._path(key), start=start, end=end))
        except _MISSING as e:
            self._missing(e, key)
            return None
        except Exception as e:
            if _is_range_error(e):  # the key exists; the range lies past its end
                return b""
            raise self._error(e, key, "read") from e
        return data if length is None else data[:length]

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` has a value, reading at most one byte of it.

        >>> s = FsspecStore("memory://zarrkit-doc-contains"); s.set("k", b"")
        >>> "k" in s, "missing" in s, 42 in s
        (True, False, False)
        """
        return isinstance(key, str) and self.get_range(key, 0, 0) is not None

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """The values of ``keys`` in order (``None`` for a missing key), fetched with one
        ``fs.cat`` call, concurrently on an asynchronous file system; every key is
        validated before any request, and a key asked for twice is fetched once.

        >>> s = FsspecStore("memory://zarrkit-doc-many")
        >>> s.set_many({"a": b"1", "b/c": b"2"})
        >>> s.get_many(["b/c", "missing", "a", "a"])
        [b'2', None, b'1', b'1']
        """
        unique = list(dict.fromkeys(validate_key(key) for key in keys))
        if len(unique) <= 1:
            found = {key: self._get(key) for key in unique}
            return [found[key] for key in keys]
        paths = {self._path(key): key for key in unique}
        batched = [path for path in paths if _MAGIC.search(path) is None]
        results: dict[str, Any] = {}
        if batched:
            try:
                results = self.fs.cat(batched, on_error="return", **self._cat_options)
            except Exception as e:
                raise self._error(e, paths[batched[0]], "read", count=len(batched)) from e
        found = {}
        for path, key in paths.items():
            if path not in results:  # a key with pattern characters, read on its own
                found[key] = self._get(key)
                continue
            value = results[path]
            if isinstance(value, _MISSING):
                self._missing(value, key)
                found[key] = None
            elif isinstance(value, BaseException):
                raise self._error(value, key, "read") from value
            else:
                found[key] = bytes(value)
        return [found[key] for key in keys]

    # --- writable -----------------------------------------------------------------------
    def _set(self, key: str, value: Buffer) -> None:
        try:
            self.fs.pipe_file(self._path(key), bytes(value))
        except Exception as e:
            raise self._error(e, key, "write") from e

    def set_many(self, items: Mapping[str, Buffer] | Iterable[tuple[str, Buffer]]) -> None:
        """Store several values with one ``fs.pipe`` call (concurrent uploads on an
        asynchronous file system); keys and values are all checked before anything is
        written, and of a key given twice the last value is stored.

        >>> s = FsspecStore("memory://zarrkit-doc-set-many")
        >>> s.set_many([("x/0", b"a"), ("x/1", b"b")])
        >>> sorted(s.list_prefix("x/"))
        ['x/0', 'x/1']
        """
        pairs = list(items.items()) if isinstance(items, Mapping) else list(items)
        self._check_writable(pairs[0][0] if pairs else "")
        for key, value in pairs:
            self._check_write(key, value)
        if not pairs:
            return
        data = {self._path(key): bytes(value) for key, value in pairs}
        try:
            self.fs.pipe(data)
        except Exception as e:
            raise self._error(e, pairs[0][0], "write", count=len(data)) from e

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        """Store ``value`` under ``key`` only if no value is there; whether it was stored.

        On S3 (s3fs) this is one conditional ``PUT`` (``If-None-Match: *``): the server
        lets exactly one writer create the key, among all processes and machines; a
        server that ignores the header (some older S3-compatible servers do) gives no
        such guarantee, and one that answers ``501 Not Implemented`` makes the store fall
        back as below. Elsewhere fsspec exposes no conditional write, so this checks
        then writes: atomic among the threads of this process (which is all there is for
        ``memory://``), best effort across processes.

        >>> s = FsspecStore("memory://zarrkit-doc-create")
        >>> s.set_if_not_exists("k", b"1"), s.set_if_not_exists("k", b"2"), s.get("k")
        (True, False, b'1')
        """
        self._check_write(key, value)
        if not self.conditional_writes:
            return super().set_if_not_exists(key, value)
        path = self._path(key)
        # The server decides; the lock only spares it (and S3 emulators that check, then
        # write) racing requests of this process for one key.
        stripe = zlib.crc32(f"{self.protocol}\x00{path}".encode("utf-8", "surrogatepass"))
        with _CREATE_LOCKS[stripe % len(_CREATE_LOCKS)]:
            try:
                self.fs.pipe_file(path, bytes(value), mode="create")
                return True
            except FileExistsError:
                return False
            except Exception as e:
                if _error_code(e) not in _NO_CONDITIONAL_CODES:
                    raise self._error(e, key, "create") from e
        self.conditional_writes = False
        return super().set_if_not_exists(key, value)

    def _delete(self, key: str) -> None:
        try:
            self.fs.rm_file(self._path(key))
        except _MISSING:
            pass
        except Exception as e:
            raise self._error(e, key, "delete") from e

    def delete_prefix(self, prefix: str) -> None:
        """Delete every key that starts with ``prefix`` (``""`` empties the store, and
        leaves a bucket in place): the keys ``find`` lists, removed with one batched
        ``fs.rm``.

        >>> s = FsspecStore("memory://zarrkit-doc-delete")
        >>> s.set_many({"a/0": b"", "a/1": b"", "ab": b""})
        >>> s.delete_prefix("a/"); sorted(s.list())
        ['ab']
        """
        self._check_writable(prefix)
        validate_prefix(prefix)
        keys = builtins.list(self.list_prefix(prefix))
        batched = [key for key in keys if _MAGIC.search(self._path(key)) is None]
        if batched:
            try:
                self.fs.rm([self._path(key) for key in batched])
            except _MISSING:  # some vanished meanwhile: remove the rest one by one
                for key in batched:
                    self._delete(key)
            except Exception as e:
                raise self._error(e, batched[0], "delete", count=len(batched)) from e
        for key in keys:
            if _MAGIC.search(self._path(key)) is not None:
                self._delete(key)

    # --- listable -----------------------------------------------------------------------
    def _iter_keys(self) -> Iterator[str]:
        return self.list_prefix("")

    def _listing_path(self, prefix: str) -> str:
        path = (self._base + prefix).rstrip("/")
        return path or getattr(self.fs, "root_marker", "") or ""

    def _relative(self, name: str) -> str | None:
        """The store key of the file system path ``name``, or None if it is not one."""
        if not name.startswith(self._base):
            return None
        key = name[len(self._base):]
        try:
            return validate_key(key)
        except InvalidKeyError:
            return None

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Iterate over the keys that start with ``prefix``, from one flat listing
        (``fs.find``), sorted.

        >>> s = FsspecStore("memory://zarrkit-doc-list-prefix")
        >>> s.set_many({"a/b/c": b"", "a/d": b"", "ab": b""})
        >>> builtins.list(s.list_prefix("a/"))
        ['a/b/c', 'a/d']
        """
        validate_prefix(prefix)
        try:
            found = self.fs.find(self._listing_path(prefix), detail=True)
        except _MISSING as e:
            self._missing(e, prefix)
            return iter([])
        except Exception as e:
            raise self._error(e, prefix, "list") from e
        keys = []
        for name, info in found.items():
            if info.get("type", "file") != "file":
                continue
            key = self._relative(name)
            if key is not None and key.startswith(prefix):
                keys.append(key)
        return iter(sorted(keys))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """``(keys, prefixes)`` directly under ``prefix``, from one delimiter listing
        (``fs.ls``, never from a cached listing), both sorted.

        >>> s = FsspecStore("memory://zarrkit-doc-list-dir")
        >>> s.set_many({"g/a/zarr.json": b"", "g/zarr.json": b""})
        >>> s.list_dir("g/")
        (['zarr.json'], ['a'])
        """
        validate_prefix(prefix)
        try:
            entries = self.fs.ls(self._listing_path(prefix), detail=True, refresh=True)
        except _MISSING as e:
            self._missing(e, prefix)
            return [], []
        except Exception as e:
            raise self._error(e, prefix, "list") from e
        keys: set[str] = set()
        prefixes: set[str] = set()
        for entry in entries:
            name = entry["name"] if isinstance(entry, dict) else entry
            key = self._relative(name.rstrip("/"))
            if key is None or not key.startswith(prefix):
                continue  # the listed path itself, when it is a file
            rest = key[len(prefix):]
            if "/" in rest:
                continue
            is_directory = isinstance(entry, dict) and entry.get("type") == "directory"
            (prefixes if is_directory else keys).add(rest)
        return sorted(keys), sorted(prefixes)
