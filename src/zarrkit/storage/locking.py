"""Locks around the read-modify-write of one key, for threads and for processes.

Threads: a fixed table of thread locks, chosen by the store's *identity* (its kind and
resolved location, equal for every handle on the same data) and the key's stripe, so that
two handles a program opens on one directory share their locks.

Processes (``zarrkit.config.file_locks``): POSIX byte-range locks (``fcntl.lockf``) on one
lock file per store, one byte per stripe. Such locks belong to the process, not the
thread, and closing *any* descriptor of the file releases all of them: so each lock file
is opened once per process and kept open, and a stripe's byte is only ever taken by the
thread that holds the same stripe's thread lock (the thread lock is chosen from the
stripe, never from the key itself).

A thread holds at most one key lock at a time anywhere in zarrkit, except through
:func:`keys_lock`, which takes a batch's locks in one global order (thread locks by their
place in the table, then stripes' bytes by stripe) and never adds to locks it holds: so
striping cannot deadlock, in a process or among processes.

>>> with key_lock(("memory", 1), "a/0.0"):
...     pass
"""

from __future__ import annotations

import os
import threading
import zlib
from collections.abc import Hashable, Iterable, Iterator
from contextlib import ExitStack, contextmanager

from zarrkit.errors import UnsupportedOperationError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: Keys map onto this many stripes; one byte of the lock file each.
STRIPES = 1 << 16
_THREAD_LOCKS = [threading.Lock() for _ in range(1024)]

_lock_files: dict[str, int] = {}
_lock_files_guard = threading.Lock()


def _reset_after_fork() -> None:
    # A lock held by another thread at fork time would never be released in the child.
    global _lock_files_guard
    _THREAD_LOCKS[:] = [threading.Lock() for _ in range(len(_THREAD_LOCKS))]
    _lock_files_guard = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def key_stripe(key: str) -> int:
    """The stripe of ``key``: the same in every process (Python's ``hash`` of a string
    is salted per process, so it cannot name a byte of a shared lock file).

    >>> key_stripe("a/0.0") == key_stripe("a/0.0")
    True
    """
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) & (STRIPES - 1)


def thread_lock(identity: Hashable, stripe: int) -> threading.Lock:
    """The thread lock guarding ``stripe`` of the store with ``identity``.

    >>> thread_lock("s", 3) is thread_lock("s", 3)
    True
    """
    return _THREAD_LOCKS[_place(identity, stripe)]


def _place(identity: Hashable, stripe: int) -> int:
    """The index in the table of the thread lock of ``stripe`` of ``identity``."""
    return hash((identity, stripe)) % len(_THREAD_LOCKS)


def _lock_file_descriptor(path: str) -> int:
    with _lock_files_guard:
        fd = _lock_files.get(path)
        if fd is None:
            fd = _open_lock_file(path)
            _lock_files[path] = fd
        return fd


def _open_lock_file(path: str) -> int:
    # The directory is shared with other stores' temporaries, and a store removes it
    # when it finds it empty: another process may do so between makedirs and open.
    for _ in range(100):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except FileNotFoundError:
            continue
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)


@contextmanager
def file_stripe_lock(path: str, stripe: int) -> Iterator[None]:
    """Hold an exclusive OS lock on byte ``stripe`` of the lock file at ``path``.

    >>> import os, tempfile
    >>> with file_stripe_lock(os.path.join(tempfile.mkdtemp(), "locks"), 7):
    ...     pass
    """
    if fcntl is None:  # pragma: no cover - Windows
        raise UnsupportedOperationError("file_locks needs POSIX fcntl locks")
    fd = _lock_file_descriptor(path)
    fcntl.lockf(fd, fcntl.LOCK_EX, 1, stripe)
    try:
        yield
    finally:
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, stripe)


@contextmanager
def key_lock(identity: Hashable, key: str, lock_file: str | None = None) -> Iterator[None]:
    """Serialise read-modify-write of ``key`` among the threads of this process that use
    the store with ``identity`` and, when ``lock_file`` is given, among processes.

    >>> import os, tempfile
    >>> with key_lock("s", "k", os.path.join(tempfile.mkdtemp(), "locks")):
    ...     pass
    """
    stripe = key_stripe(key)
    with thread_lock(identity, stripe):
        if lock_file is None:
            yield
        else:
            with file_stripe_lock(lock_file, stripe):
                yield


@contextmanager
def keys_lock(identity: Hashable, keys: Iterable[str], lock_file: str | None = None
              ) -> Iterator[None]:
    """:func:`key_lock` for a batch of keys at once (a writer that stores them all in one
    call): every distinct thread lock, taken in table order, then with ``lock_file`` every
    stripe's byte, in stripe order.

    >>> import os, tempfile
    >>> with keys_lock("s", ["a", "b", "a"], os.path.join(tempfile.mkdtemp(), "locks")):
    ...     pass
    """
    stripes = sorted({key_stripe(key) for key in keys})
    places = sorted({_place(identity, stripe) for stripe in stripes})
    with ExitStack() as held:
        for place in places:
            held.enter_context(_THREAD_LOCKS[place])
        if lock_file is not None:
            if fcntl is None:  # pragma: no cover - Windows
                raise UnsupportedOperationError("file_locks needs POSIX fcntl locks")
            fd = _lock_file_descriptor(lock_file)
            for stripe in stripes:
                fcntl.lockf(fd, fcntl.LOCK_EX, 1, stripe)
                held.callback(fcntl.lockf, fd, fcntl.LOCK_UN, 1, stripe)
        yield
