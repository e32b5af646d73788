"""The stores of the crash trials, and what a kill must not leave in the database stores.

A scenario keeps its data in a directory (DirectoryStore), a ZIP archive (ZipStore), an
SQLite database (SQLiteStore) or an LMDB database (LMDBStore); :func:`opened` opens any of
them for reading, appending or creating. Writers open LMDB with a one-page initial map
(``WRITER_MAP_SIZE``; LMDB takes the size in use instead), so that each writer grows the
map as soon as it needs a new page, and some kills land in a growth.

After a kill, a database must (:func:`database_problems`):

- open read-only first (the first opener after the kill: SQLite recovers the dead writer's
  WAL through a read-only connection) and show only document and chunk keys, each readable;
- open read-write and commit a write (the dead writer held the write lock: SQLite's file
  lock, LMDB's robust mutex): rewriting a value as it was read changes nothing else, so
  the content must be what the first reader saw (a killed writer's transaction must not
  surface, or vanish, later);
- pass SQLite's ``PRAGMA integrity_check`` and still be in WAL mode; in LMDB, hold no reader
  slot of a dead process once zarrkit has opened it (a stale slot pins the pages of its
  snapshot, so the file only grows, and fills the reader table);
- leave nothing beside it but its own files (``-wal``/``-shm``, ``-lock``) and the side
  directory of the key locks.

A *bystander* (this file run as a script) is a reader process that keeps the database open
through a trial, reading every key over and over; while it runs, LMDB keeps its reader
table (the first opener of an unused environment resets it) and SQLite its shared memory,
so a kill's traces must be dealt with, not wiped. Half of the database trials have one.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zarrkit.storage import SQLiteStore, Store, ZipStore

DATABASES = ("sqlite", "lmdb")
STORE_NAMES = {"directory": "data.zarr", "zip": "data.zip", "sqlite": "data.db",
               "lmdb": "data.mdb"}
#: LMDB's initial map in the writers (LMDB takes the size in use if that is larger).
WRITER_MAP_SIZE = 1 << 12
BYSTANDER_PAUSE = 0.02
BYSTANDER_MAX_SECONDS = 600.0
SIDE_PREFIX = ".zarrkit-tmp-"  # the side directory of the key locks (file_locks)
# A row of LMDB's reader table as Environment.readers() prints it: pid, thread, txnid.
READER_ROW = re.compile(r"\s*(\d+)\s+[0-9a-fA-F]+\s+(-|\d+)\s*")


def open_store(storage: str, path: Path, mode: str, *, writer: bool = False) -> Any:
    """The store at ``path`` (mode "r", "a" or "w"): a path for a directory (zarrkit
    opens it), else an open store to close after use."""
    if storage == "directory":
        return path
    if storage == "zip":
        return ZipStore(path, mode=mode)
    if storage == "sqlite":
        return SQLiteStore(path, read_only=mode == "r")
    if storage == "lmdb":
        from zarrkit.storage import LMDBStore

        if writer:
            return LMDBStore(path, map_size=WRITER_MAP_SIZE)
        return LMDBStore(path, read_only=mode == "r")
    raise ValueError(f"unknown storage {storage!r}")


@contextmanager
def opened(storage: str, path: Path, mode: str) -> Iterator[Any]:
    """:func:`open_store`, closed at the end."""
    store = open_store(storage, path, mode)
    try:
        yield store
    finally:
        if isinstance(store, Store):
            store.close()


# --- after a kill ---------------------------------------------------------------------------

def database_problems(storage: str, path: Path, real_key: re.Pattern[str]) -> list[str]:
    """Everything wrong with the database at ``path`` after a kill (see the module
    documentation); ``real_key`` matches the keys the scenario's writers make."""
    failures = stray_files(storage, path)
    try:
        before = read_everything(storage, path)
    except Exception as e:  # noqa: BLE001 - any error is a finding
        return failures + [f"the database cannot be opened read-only and read after the "
                           f"kill: {type(e).__name__}: {e}"]
    for key, value in before.items():
        if not real_key.fullmatch(key):
            failures.append(f"store.list() shows {key!r}, which is no key a writer made")
        elif value is None:
            failures.append(f"store.list() shows {key!r}, which cannot be read")
    rewritten = sorted(before)[:1]
    failures += rewrite_problems(storage, path, rewritten)
    failures += late_changes(storage, path, before, rewritten)
    if storage == "sqlite":
        failures += sqlite_problems(path)
    else:
        failures += [f"LMDB's reader table holds a slot of dead process {pid} (txnid "
                     f"{txnid}) after zarrkit opened the database read-only and read-write "
                     f"(nothing ran reader_check)" for pid, txnid in stale_readers(path)]
    return failures


def read_everything(storage: str, path: Path) -> dict[str, bytes | None]:
    """Every key the database lists, with its value (read-only, one get_many)."""
    with opened(storage, path, "r") as store:
        keys = list(store.list())
        return dict(zip(keys, store.get_many(keys), strict=True))


def late_changes(storage: str, path: Path, before: dict[str, bytes | None],
                 rewritten: list[str]) -> list[str]:
    """What changed between the first look after the kill and a look after the rewrite.
    Nothing may: no live process committed anything else, so a change is the dead
    writer's transaction surfacing late (or vanishing), after readers were shown the state
    without it -- and a read-modify-write that read before that moment has written a
    stale value into the new state."""
    try:
        after = read_everything(storage, path)
    except Exception as e:  # noqa: BLE001 - any error is a finding
        return [f"the database cannot be read after the rewrite: {type(e).__name__}: {e}"]
    changed = sorted(key for key in before.keys() | after.keys()
                     if before.get(key) != after.get(key))
    if not changed:
        return []
    return [f"the content changed with no writer alive: after opening the database "
            f"read-write and storing {rewritten} again as read, {len(changed)} keys hold "
            f"other values than the first reader after the kill saw ({changed[:6]}"
            f"{' ...' if len(changed) > 6 else ''}): the dead writer's last transaction "
            f"became visible (or vanished) only then"]


def stray_files(storage: str, path: Path) -> list[str]:
    """Files beside the database that are neither its own nor the key locks' directory."""
    own = {path.name, f"{SIDE_PREFIX}{path.name}"}
    own |= ({f"{path.name}-wal", f"{path.name}-shm", f"{path.name}-journal"}
            if storage == "sqlite" else {f"{path.name}-lock"})
    return [f"{name} is left beside the database" for name in sorted(os.listdir(path.parent))
            if name not in own]


def rewrite_problems(storage: str, path: Path, keys: list[str]) -> list[str]:
    """Open the database read-write and store a value again as it is (a committed write
    transaction that changes nothing a checker sees)."""
    try:
        with opened(storage, path, "a") as store:
            for key in keys:
                value = store.get(key)
                if value is not None:
                    store.set(key, value)
    except Exception as e:  # noqa: BLE001 - any error is a finding
        return [f"the database cannot be opened read-write and written after the kill: "
                f"{type(e).__name__}: {e}"]
    return []


def sqlite_problems(path: Path) -> list[str]:
    """SQLite's own verdict on the file (a fresh read-only connection)."""
    try:
        connection = sqlite3.connect(Path(path).absolute().as_uri() + "?mode=ro", uri=True)
        try:
            verdict = [row[0] for row in connection.execute("PRAGMA integrity_check")]
            mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
        finally:
            connection.close()
    except sqlite3.Error as e:
        return [f"sqlite3 cannot check the database: {type(e).__name__}: {e}"]
    failures = [] if verdict == ["ok"] else [f"PRAGMA integrity_check: {verdict[:5]}"]
    if str(mode).lower() != "wal":
        failures.append(f"the database is in journal mode {mode!r}, not WAL")
    return failures


def stale_readers(path: Path) -> list[tuple[int, str]]:
    """(pid, txnid) of the slots of LMDB's reader table held by processes that are gone.
    Only meaningful while another process keeps the environment open (a bystander):
    else opening it here resets the table. No zarrkit handle on ``path`` may be open in
    this process (LMDB forbids opening an environment twice in a process)."""
    import lmdb

    env = lmdb.open(str(path), subdir=False, readonly=True, lock=True, max_dbs=0)
    try:
        table = env.readers()
    finally:
        env.close()
    return [(pid, txnid) for pid, txnid in parse_readers(table) if not alive(pid)]


def parse_readers(table: str) -> list[tuple[int, str]]:
    """(pid, txnid) of each row of ``Environment.readers()``.

    >>> parse_readers("    pid     thread     txnid\\n     812 7f92832 14\\n")
    [(812, '14')]
    """
    rows = (READER_ROW.fullmatch(line) for line in table.splitlines())
    return [(int(row[1]), row[2]) for row in rows if row]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- a reader keeping the database open -----------------------------------------------------

class Bystander:
    """A reader process (this file as a script) that keeps the database open and reads
    every key until it is stopped; it ends by itself, with the error on stderr, when a
    read fails."""

    def __init__(self, storage: str, path: Path, stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        with open(stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, __file__, storage, str(path)],
                stdout=subprocess.PIPE, stderr=stderr)
        assert self.process.stdout is not None
        self.process.stdout.readline()  # "ready": the database is open

    def stop(self) -> list[str]:
        """Stop it; what went wrong in it, if anything."""
        ended = self.process.poll()
        if ended is None:
            self.process.kill()
        self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()
        if ended is None:
            return []
        return [f"the bystander reading the database ended with status {ended}:\n"
                f"{self.stderr_path.read_text()[-2000:]}"]


def bystander(storage: str, path: Path) -> int:
    """A bystander's loop: read every key of the database, pause, again."""
    parent = os.getppid()
    store: Any = open_store(storage, path, "r")
    keys = list(store.list())
    store.get_many(keys)
    print("ready", flush=True)
    deadline = time.monotonic() + BYSTANDER_MAX_SECONDS
    while os.getppid() == parent and time.monotonic() < deadline:
        try:
            keys = list(store.list())
            if None in store.get_many(keys):
                raise AssertionError("a listed key cannot be read")
        except Exception:  # noqa: BLE001 - report every failure
            traceback.print_exc()
            return 1
        time.sleep(BYSTANDER_PAUSE)
    return 0


if __name__ == "__main__":
    sys.exit(bystander(sys.argv[1], Path(sys.argv[2])))
