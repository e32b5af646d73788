"""Where a Daf data set lives: parsing its path, and opening the store that holds it.

Path forms (DataAxesFormats.jl's): ``x.daf.zarr`` (a directory), ``x.daf.zarr.zip`` (a ZIP
archive holding one data set at its root), ``x.dafs.zarr.zip#/group`` (one of several data
sets of an archive), ``http://...`` and ``https://...`` (read-only). Any other path names a
directory, and any other ``*.zip`` an archive (``#/group`` selects a group in it).

All opens of one ZIP archive in a process share one :class:`~zarrkit.storage.zip.ZipStore`
and one lock: the first open decides whether it is writable, and a later open asking to
write an archive first opened read-only is refused. The last release closes the store,
which writes the archive's central directory. A directory gets a store per open.

>>> parse_location("cells.dafs.zarr.zip#/batch1")
DafLocation(kind='zip', container='cells.dafs.zarr.zip', group='batch1', \
display='cells.dafs.zarr.zip#/batch1')
>>> parse_location("https://example.org/cells.daf.zarr").kind
'http'
"""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

from zarrkit.errors import (
    DafValueError,
    GroupNotFoundError,
    ReadOnlyError,
    StoreIOError,
    StoreLockedError,
)
from zarrkit.paths import normalize_path
from zarrkit.storage.base import MapsValues, Store, offers
from zarrkit.storage.directory import DirectoryStore
from zarrkit.storage.http import HTTPStore

MODES = ("r", "r+", "w+", "w")
_SINGLE_ZIP = ".daf.zarr.zip"
_MULTI_ZIP = ".dafs.zarr.zip"

Kind = Literal["directory", "zip", "http", "store"]


@dataclass(frozen=True)
class DafLocation:
    """A parsed data set path: the backend ``kind``, the ``container`` (directory, archive
    or URL), the ``group`` path of the data set inside it (``""``: its root) and the text
    that names it in messages (the path with its ``#/group``)."""

    kind: Kind
    container: str
    group: str
    display: str


def parse_location(path: str | os.PathLike[str]) -> DafLocation:
    """The location a data set path names; DafValueError for Julia's near misses (a
    ``#/group`` on a single-data-set ``.daf.zarr.zip``, a ``.dafs.zarr.zip`` without one).

    >>> parse_location("x.daf.zarr.zip#/a")
    Traceback (most recent call last):
    zarrkit.errors.DafValueError: x.daf.zarr.zip#/a: a .daf.zarr.zip archive holds one data \
set at its root and takes no #/group; name the archive .dafs.zarr.zip for several
    """
    text = os.fspath(path)
    if text.lower().startswith(("http://", "https://")):
        return DafLocation("http", text, "", text)
    container, marker, group = text.partition("#/")
    if marker:
        if container.endswith(_SINGLE_ZIP):
            raise DafValueError(
                f"{text}: a {_SINGLE_ZIP} archive holds one data set at its root and takes "
                f"no #/group; name the archive {_MULTI_ZIP} for several")
        if not container.endswith(".zip"):
            raise DafValueError(f"{text}: only a ZIP archive (*.zip) takes a #/group")
        group = normalize_path(group)
        if not group:
            raise DafValueError(f"{text}: the #/group is empty")
        return DafLocation("zip", container, group, f"{container}#/{group}")
    if text.endswith(_MULTI_ZIP):
        raise DafValueError(f"{text}: a {_MULTI_ZIP} archive holds several data sets; "
                            f"name one as {text}#/group")
    if text.endswith(".zip"):
        return DafLocation("zip", text, "", text)
    return DafLocation("directory", text, "", text)


class RangedHTTPStore(HTTPStore):
    """An HTTPStore that reads every value with ``Range`` requests, in stripes of
    ``stripe`` bytes: no response is larger than a stripe, and a failed request costs a
    retry of one stripe, not of a whole chunk.

    >>> RangedHTTPStore("http://127.0.0.1:1/x.daf.zarr").stripe
    8388608
    """

    stripe: int = 8 << 20

    def _get(self, key: str) -> bytes | None:
        parts: list[bytes] = []
        start = 0
        while True:
            part = self.get_range(key, start, self.stripe)
            if part is None:
                if not parts:
                    return None
                # Never a silently short value: the rest vanished while it was read.
                raise StoreIOError(f"{key!r} at {self.url!r} disappeared after its first "
                                   f"{start} bytes were read")
            parts.append(part)
            start += len(part)
            if len(part) < self.stripe:
                break
        return parts[0] if len(parts) == 1 else b"".join(parts)


@dataclass
class _SharedArchive:
    """One ZIP archive open in this process: its store, whether it is writable, how many
    data set handles use it, and the lock that serialises their operations."""

    store: Any  # a ZipStore
    writable: bool
    refs: int = 1
    lock: threading.RLock = field(default_factory=threading.RLock)


# Open archives by real path. Entries leave when their last handle is released.
_archives: dict[str, _SharedArchive] = {}
_archives_lock = threading.Lock()


@dataclass
class StoreHandle:
    """The store of one open data set, its lock (shared by every handle on one ZIP
    archive), and what the backend allows."""

    store: Store
    kind: Kind
    lock: threading.RLock
    archive_key: str | None = None
    released: bool = False

    @property
    def append_only(self) -> bool:
        """Whether nothing may be deleted or replaced (a ZIP archive).

        >>> from zarrkit.storage import MemoryStore
        >>> wrap_store(MemoryStore()).append_only
        False
        """
        return not self.store.supports_deletes and not self.store.read_only

    @property
    def can_map(self) -> bool:
        """Whether chunks can be mapped rather than read (zarrkit's ``mmap=True``).

        >>> from zarrkit.storage import MemoryStore
        >>> wrap_store(MemoryStore()).can_map
        False
        """
        return offers(self.store, MapsValues)

    def release(self) -> None:
        """Give the store back: a ZIP archive's store closes with its last handle (writing
        its central directory), a directory's and an HTTP store's at once. Idempotent.

        >>> from zarrkit.storage import MemoryStore
        >>> handle = wrap_store(MemoryStore()); handle.release(); handle.released
        True
        """
        if self.released:
            return
        self.released = True
        if self.archive_key is None:
            if self.kind in ("directory", "http"):
                self.store.close()
            return
        with _archives_lock:
            shared = _archives[self.archive_key]
            shared.refs -= 1
            if shared.refs > 0:
                return
            del _archives[self.archive_key]
        shared.store.close()


def _open_zip(location: DafLocation, mode: str) -> StoreHandle:
    from zarrkit.storage.zip import ZipStore

    path = location.container
    key = os.path.realpath(path)
    writable = mode != "r"
    with _archives_lock:
        shared = _archives.get(key)
        if shared is not None:
            if mode == "w":
                raise StoreLockedError(
                    f"cannot truncate {location.display} (mode 'w'): the archive is open in "
                    "this process; close those data sets first")
            if writable and not shared.writable:
                raise ReadOnlyError(
                    f"cannot open {location.display} for writing (mode {mode!r}): the "
                    "archive was first opened read-only in this process and its handles "
                    "share that store; close them first, or open the writable one first")
            shared.refs += 1
            return StoreHandle(shared.store, "zip", shared.lock, key)
        if mode in ("r", "r+") and not os.path.isfile(path):
            raise GroupNotFoundError(f"no Daf data set at {location.display}: no such file")
        store = ZipStore(path, {"r": "r", "r+": "a", "w+": "a", "w": "w"}[mode])
        shared = _SharedArchive(store, writable)
        _archives[key] = shared
        return StoreHandle(store, "zip", shared.lock, key)


def _looks_like_zarr(path: str) -> bool:
    names = set(os.listdir(path))
    return not names or bool(names & {"zarr.json", ".zgroup", ".zarray"})


def _open_directory(location: DafLocation, mode: str) -> StoreHandle:
    path = location.container
    if mode in ("r", "r+") and not os.path.isdir(path):
        raise GroupNotFoundError(f"no Daf data set at {location.display}: no such directory")
    if mode == "w" and os.path.lexists(path):
        # Truncation removes a whole tree: only one that is (or could be) a Zarr hierarchy,
        # never a directory of other files named by mistake.
        if not os.path.isdir(path) or os.path.islink(path) or not _looks_like_zarr(path):
            raise DafValueError(f"refusing to truncate {location.display} (mode 'w'): it is "
                                "not a Zarr directory")
        shutil.rmtree(path)
    return StoreHandle(DirectoryStore(path, read_only=mode == "r"), "directory",
                       threading.RLock())


def acquire(location: DafLocation, mode: str) -> StoreHandle:
    """Open the store of a data set location in ``mode`` (``r``, ``r+``, ``w+``, ``w``).

    >>> import tempfile, os
    >>> handle = acquire(parse_location(os.path.join(tempfile.mkdtemp(), "x.daf.zarr")), "w+")
    >>> handle.kind, handle.append_only, handle.can_map
    ('directory', False, True)
    >>> handle.release()
    """
    if mode not in MODES:
        raise DafValueError(f"mode must be one of {MODES}, found {mode!r}")
    if location.kind == "http":
        if mode != "r":
            raise ReadOnlyError(f"cannot open {location.display} with mode {mode!r}: the "
                                "HTTP backend is read-only (use mode 'r')")
        return StoreHandle(RangedHTTPStore(location.container), "http", threading.RLock())
    if location.kind == "zip":
        if mode == "w" and location.group:
            raise DafValueError(
                f"cannot truncate {location.display} (mode 'w'): a data set inside a ZIP "
                "archive of several cannot be removed (the archive is append-only); use "
                "mode 'r+' or 'w+'")
        return _open_zip(location, mode)
    return _open_directory(location, mode)


def wrap_store(store: Store) -> StoreHandle:
    """A handle on a store the caller built and keeps (it is not closed on release).

    >>> from zarrkit.storage import MemoryStore
    >>> wrap_store(MemoryStore()).kind
    'store'
    """
    return StoreHandle(store, "store", threading.RLock())


__all__ = [
    "MODES",
    "DafLocation",
    "RangedHTTPStore",
    "StoreHandle",
    "acquire",
    "parse_location",
    "wrap_store",
]
