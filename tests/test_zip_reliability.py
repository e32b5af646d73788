"""ZipStore reliability: writers killed mid-append, handles and threads sharing one archive,
processes excluding each other, create-if-absent, and damaged archives.

The kill tests run real writer processes and SIGKILL them at seeded random moments;
:func:`exercise_archive` is the body of the fuzz test, written so that an atheris target can
call it as it is.
"""

from __future__ import annotations

import gc
import inspect
import io
import os
import random
import re
import signal
import struct
import subprocess
import sys
import threading
import time
import tracemalloc
import warnings
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import run_threads

import zarrkit.storage.zip_format as zipmod
from zarrkit.errors import (
    ReadOnlyError,
    StoreLockedError,
    UnsupportedOperationError,
    ZarrkitError,
)
from zarrkit.storage.zip import BadZipFile, CorruptZipError, ZipStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL and flock")


# --- values a writer process and the test agree on -----------------------------------------


def size_for(key: str) -> int:
    """The size of the value under ``key``: a fifth over 64 KiB (the size from which
    header and data go out in two writes) and, past the base members, a few of MiBs (long
    enough for a kill to land inside the write)."""
    rng = random.Random(key)
    kind = rng.random()
    if kind < 0.08 and not key.startswith("base/"):
        return rng.randrange(1 << 20, 3 << 20)
    if kind < 0.3:
        return rng.randrange(65_537, 160_000)
    return rng.randrange(0, 3000)


def value_for(key: str) -> bytes:
    """The value stored under ``key``, the same in the writer process and the test."""
    return random.Random(key + "#").randbytes(size_for(key))


WRITER = inspect.getsource(size_for) + inspect.getsource(value_for) + '''
import random, sys, time
from zarrkit.storage.zip import ZipStore

path, mode, prefix, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
extra = sys.argv[5:]  # "key=hexvalue" members written first
store = ZipStore(path, mode=mode)
for item in extra:
    key, _, hexvalue = item.partition("=")
    store.set(key, bytes.fromhex(hexvalue))
    print(key, flush=True)
print("ready", flush=True)
for i in range(count):
    key = f"{prefix}/{i}"
    value = value_for(key)
    print(">", key, flush=True)  # about to write it
    store.set(key, value)
    print(key, flush=True)
print("done", flush=True)
time.sleep(600)
'''

TRY_OPEN = '''
import sys, time
from zarrkit.errors import StoreLockedError
from zarrkit.storage.zip import ZipStore

path = sys.argv[1]
for mode in sys.argv[2:]:
    started = time.monotonic()
    try:
        with ZipStore(path, mode=mode) as store:
            keys = sorted(store.list())
        print(mode, "opened", len(keys), flush=True)
    except StoreLockedError as error:
        print(mode, "locked", round(time.monotonic() - started, 3), error, flush=True)
'''


class Writer:
    """A writer process appending to an archive; it never closes it."""

    def __init__(self, path: Path, mode: str, prefix: str, count: int, *extra: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), mode, prefix, str(count), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.written: list[str] = []  # keys whose set() returned, in order
        self.started: list[str] = []  # keys whose set() began
        self.finished = False
        self._read_until(lambda line: line == "ready")

    def _read_until(self, stop: Callable[[str], bool]) -> None:
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline().strip()
            if not line:
                self.process.kill()
                _, err = self.process.communicate()
                pytest.fail(f"writer ended early: {err}")
            if line == "done":
                self.finished = True
                return
            if line == "ready" or line.startswith(">"):
                if line.startswith(">"):
                    self.started.append(line[2:])
                if stop(line):
                    return
                continue
            self.written.append(line)
            if stop(line):
                return

    def wait_for(self, count: int) -> None:
        """Return once ``count`` members of the loop are written (or all are)."""
        if count > 0 and not self.finished:
            target = len(self.written) + count
            self._read_until(lambda line: len(self.written) >= target)

    def wait_for_large(self, size: int) -> None:
        """Return once the writer begins to write a value of at least ``size`` bytes (or
        has written all)."""
        if not self.finished:
            self._read_until(lambda line: line.startswith(">") and size_for(line[2:]) >= size)

    def kill(self) -> list[str]:
        """SIGKILL the writer; return every key it reported written."""
        os.kill(self.process.pid, signal.SIGKILL)
        out, _ = self.process.communicate()
        # Only whole lines: the kill may cut the writer's last report short.
        complete = out.split("\n")[:-1]
        self.written += [k for k in complete if k and k not in ("ready", "done")
                         and not k.startswith(">")]
        return self.written


def try_open(path: Path, *modes: str) -> dict[str, str]:
    """Open ``path`` in each mode from another process: mode -> its report line."""
    result = subprocess.run(
        [sys.executable, "-c", TRY_OPEN, str(path), *modes],
        capture_output=True, text=True, timeout=60, check=True,
    )
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in result.stdout.splitlines()}


def write_base(path: Path, count: int = 100) -> list[str]:
    keys = [f"base/{i}" for i in range(count)]
    with ZipStore(path, mode="w") as store:
        for key in keys:
            store.set(key, value_for(key))
    return keys


def assert_recovered(path: Path, required: list[str], modes: str = "ra") -> set[str]:
    """Every key in ``required`` is in the archive, and every key there holds its value,
    opened in each of ``modes``. Return the keys."""
    for mode in modes:
        with ZipStore(path, mode=mode) as store:
            keys = set(store.list())
            assert set(required) <= keys, sorted(set(required) - keys)[:5]
            for key in keys:
                assert store.get(key) == value_for(key), key
    return keys


def assert_zipfile_reads(path: Path, keys: set[str]) -> None:
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert set(zf.namelist()) == keys
        for key in keys:
            assert zf.read(key) == value_for(key)


# --- 1. a writer killed mid-append ----------------------------------------------------------


def test_killed_append_keeps_the_archive_readable(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    base = write_base(path)
    writer = Writer(path, "a", "new", 0, "n=78")  # sets "n" to b"x", then is killed
    assert writer.kill() == ["n"]
    # Python's zipfile still finds the untouched archive in front of the new member.
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert sorted(zf.namelist()) == sorted(base)
    with ZipStore(path) as store:
        assert store.recovered
        assert store.get("n") == b"x"
        assert len(list(store.list())) == 101
    with ZipStore(path, mode="a") as store:
        assert store.recovered
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert set(zf.namelist()) == {*base, "n"}
        assert zf.read("n") == b"x"
    with ZipStore(path) as store:
        assert not store.recovered


def test_append_leaves_the_old_archive_in_place(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    write_base(path, 10)
    before = path.read_bytes()
    with ZipStore(path, mode="a") as store:
        store.set("more", b"m" * 100)
    after = path.read_bytes()
    assert after[: len(before)] == before  # old central directory kept, as dead space
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert zf.read("more") == b"m" * 100
        assert len(zf.namelist()) == 11


def seconds_per_byte_of_set(directory: Path) -> float:
    """How long this machine takes to set() a byte of a large value (CRC and write)."""
    value = os.urandom(2 << 20)
    with ZipStore(directory / "calibrate.zip", mode="w") as store:
        store.set("warm", value)
        started = time.perf_counter()
        store.set("timed", value)
        return (time.perf_counter() - started) / len(value)


def test_kills_at_random_moments_during_appends(tmp_path: Path) -> None:
    """Writers appending small, >64 KiB and MiB values, SIGKILLed at seeded random
    moments (mostly while a MiB value is being written); after each kill nothing written
    before is lost and nothing visible is wrong, whether this process or the next writer
    recovers the archive."""
    rng = random.Random(20240611)
    path = tmp_path / "k.zip"
    per_byte = seconds_per_byte_of_set(tmp_path)
    required = write_base(path)
    for session in range(12):
        writer = Writer(path, "a", f"s{session}", 30)
        writer.wait_for(rng.randrange(0, 25))
        if rng.random() < 0.7:
            writer.wait_for_large(1 << 20)
            if not writer.finished:  # aim at the write that follows the CRC
                time.sleep(rng.uniform(0.5, 1.0) * per_byte * size_for(writer.started[-1]))
        else:
            time.sleep(rng.uniform(0, 0.003))
        written = writer.kill()
        with ZipStore(path) as store:
            assert store.recovered or not written
        if session % 3 == 2:
            keys = assert_recovered(path, required + written, "ra")
            assert_zipfile_reads(path, keys)  # the "a" open gave it a central directory
            with ZipStore(path) as store:
                assert not store.recovered
        else:  # the next writer appends to the torn archive itself
            assert_recovered(path, required + written, "r")
        required += written


def test_recovery_without_a_directory_scans_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "w.zip"
    writer = Writer(path, "w", "w", 12)
    writer.wait_for(12)
    written = writer.kill()
    assert len(written) == 12
    with ZipStore(path) as store:
        assert store.recovered
        assert sorted(store.list()) == sorted(written)
    keys = assert_recovered(path, written)
    assert_zipfile_reads(path, keys)


def test_every_truncation_of_an_append_is_recovered(tmp_path: Path) -> None:
    """The states a kill can leave, cut deterministically: the file truncated at every
    member boundary and at points inside headers and data."""
    path = tmp_path / "t.zip"
    base = write_base(path, 5)
    clean = path.read_bytes()
    appended = [f"x/{i}" for i in range(6)]
    writer = Writer(path, "a", "x", 6)
    writer.wait_for(6)
    assert writer.kill()[-6:] == appended
    full = path.read_bytes()
    starts = [m.start() for m in re.finditer(b"PK\x03\x04", full) if m.start() >= len(clean)]
    assert len(starts) == len(appended)
    cuts = {len(clean), len(full)} | {s + d for s in starts for d in (0, 1, 29, 30, 31, 45)}
    cuts |= set(random.Random(1).sample(range(len(clean), len(full)), 40))
    for cut in sorted(c for c in cuts if len(clean) <= c <= len(full)):
        path.write_bytes(full[:cut])
        complete = [k for k, s in zip(appended, [*starts[1:], len(full)], strict=True)
                    if s <= cut]
        with ZipStore(path) as store:
            assert sorted(store.list()) == sorted(base + complete), cut
            assert all(store.get(k) == value_for(k) for k in store.list())
        assert path.read_bytes() == full[:cut]  # mode "r" repairs nothing
        with ZipStore(path, mode="a") as store:
            store.set("after", b"A")
        assert_zipfile_reads_with_after(path, set(base + complete))


def assert_zipfile_reads_with_after(path: Path, keys: set[str]) -> None:
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert set(zf.namelist()) == keys | {"after"}
        assert zf.read("after") == b"A"


def test_a_value_that_is_an_archive_is_not_taken_for_the_directory(tmp_path: Path) -> None:
    path = tmp_path / "v.zip"
    base = write_base(path, 5)
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("evil", b"from the inner archive")
    writer = Writer(path, "a", "after", 2, "inner=" + inner.getvalue().hex())
    writer.wait_for(2)
    written = writer.kill()
    with ZipStore(path) as store:
        assert sorted(store.list()) == sorted(base + written)
        assert store.get("inner") == inner.getvalue()


def test_read_only_open_of_a_torn_archive_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "r.zip"
    write_base(path, 3)
    with open(path, "ab") as f:  # a torn member: a header and half its data
        f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, 0, 100, 100, 1, 0))
        f.write(b"k" + b"\x00" * 50)
    before = path.read_bytes()
    with ZipStore(path) as store:
        assert store.recovered
        assert len(list(store.list())) == 3
    assert path.read_bytes() == before
    with ZipStore(path, mode="a") as store:
        store.set("k", b"v")
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert zf.read("k") == b"v"
        assert len(zf.namelist()) == 4


# --- 2. handles and threads of one process ---------------------------------------------------


def test_threads_with_their_own_handles_share_the_archive(tmp_path: Path) -> None:
    path = tmp_path / "t.zip"
    ZipStore(path, mode="w").close()
    threads_count, per_thread = 8, 25
    barrier = threading.Barrier(threads_count)
    expected = {f"t{t}/{i}" for t in range(threads_count) for i in range(per_thread)}

    def work(t: int) -> None:
        store = ZipStore(path, mode="a")
        barrier.wait()
        for i in range(per_thread):
            store.set(f"t{t}/{i}", value_for(f"t{t}/{i}"))
        barrier.wait()
        assert set(store.list()) == expected  # every handle sees every write
        assert store.get(f"t{(t + 1) % threads_count}/0") == value_for(
            f"t{(t + 1) % threads_count}/0"
        )
        store.close()

    run_threads(threads_count, work)
    assert_zipfile_reads(path, expected)


def test_every_close_leaves_a_complete_archive(tmp_path: Path) -> None:
    path = tmp_path / "c.zip"
    first = ZipStore(path, mode="w")
    second = ZipStore(path, mode="a")
    first.set("a", b"1")
    second.set("b", b"2")
    assert second.get("a") == b"1" and first.get("b") == b"2"
    first.close()
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert sorted(zf.namelist()) == ["a", "b"]
    second.set("c", b"3")
    assert try_open(path, "a")["a"].startswith("locked")  # the last handle holds the lock
    second.close()
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert sorted(zf.namelist()) == ["a", "b", "c"]
    assert try_open(path, "a")["a"] == "opened 3"  # released by the last close


def test_lock_identity(tmp_path: Path) -> None:
    path = tmp_path / "i.zip"
    with ZipStore(path, mode="w") as w, ZipStore(path, mode="a") as a:
        w.set("k", b"v")
        link = tmp_path / "link.zip"
        os.link(path, link)
        with ZipStore(link, mode="a") as via_link, ZipStore(tmp_path / "o.zip", "w") as other:
            assert w.lock_identity == a.lock_identity == via_link.lock_identity
            assert hash(w.lock_identity) == hash(a.lock_identity)
            assert w.lock_identity != other.lock_identity
            via_link.set("l", b"w")
        assert a.get("l") == b"w"
    with ZipStore(path) as reader:
        st = os.stat(path)
        assert reader.lock_identity == ("zip", st.st_dev, st.st_ino)


def test_a_leaked_handle_releases_the_archive(tmp_path: Path) -> None:
    path = tmp_path / "leak.zip"
    store = ZipStore(path, mode="w")
    store.set("k", b"v")
    with pytest.warns(ResourceWarning, match="not closed"):
        del store
        gc.collect()
    assert try_open(path, "a")["a"] == "opened 1"  # lock released, member recovered


def test_mode_w_refuses_an_archive_open_for_writing_here(tmp_path: Path) -> None:
    path = tmp_path / "w.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", b"v")
        with pytest.raises(StoreLockedError, match="w.zip"):
            ZipStore(path, mode="w")
        assert store.get("k") == b"v"
    with ZipStore(path) as store:
        assert store.get("k") == b"v"


# --- 3. processes -----------------------------------------------------------------------


def test_a_second_process_cannot_write(tmp_path: Path) -> None:
    path = tmp_path / "p.zip"
    store = ZipStore(path, mode="w")
    store.set("k", b"v")
    before = path.read_bytes()
    report = try_open(path, "a", "w", "r")
    assert report["a"].startswith("locked") and str(path) in report["a"]
    assert float(report["w"].split()[1]) < 1.0  # at once, not after waiting
    assert report["w"].startswith("locked")
    assert report["r"] == "opened 1"  # readers take no lock (and recover the open archive)
    assert path.read_bytes() == before  # the refused "w" emptied nothing
    store.set("k2", b"v2")
    store.close()
    assert try_open(path, "a")["a"] == "opened 2"


def test_a_writer_in_another_process_locks_this_one_out(tmp_path: Path) -> None:
    path = tmp_path / "o.zip"
    write_base(path, 3)
    writer = Writer(path, "a", "o", 1)
    writer.wait_for(1)
    before = path.read_bytes()
    for mode in ("a", "w"):
        started = time.monotonic()
        with pytest.raises(StoreLockedError, match=re.escape(str(path))):
            ZipStore(path, mode=mode)
        assert time.monotonic() - started < 1.0
    assert path.read_bytes() == before
    with ZipStore(path) as reader:
        assert "o/0" in reader
    written = writer.kill()  # the kernel drops the dead writer's lock
    with ZipStore(path, mode="a") as store:
        assert set(written) <= set(store.list())


# --- 4. create-if-absent -------------------------------------------------------------------


def test_set_if_not_exists(tmp_path: Path) -> None:
    path = tmp_path / "s.zip"
    with ZipStore(path, mode="w") as store:
        assert store.set_if_not_exists("k", b"first")
        assert not store.set_if_not_exists("k", b"second")
        assert store.get("k") == b"first"
        with pytest.raises(TypeError):
            store.set_if_not_exists("t", "text")  # type: ignore[arg-type]
        assert "t" not in store
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == ["k"]  # the refused value was never appended
    with ZipStore(path) as store, pytest.raises(ReadOnlyError):
        store.set_if_not_exists("new", b"x")


def test_set_if_not_exists_has_one_winner_across_handles(tmp_path: Path) -> None:
    path = tmp_path / "race.zip"
    ZipStore(path, mode="w").close()
    threads_count, keys = 8, 40
    barrier = threading.Barrier(threads_count)
    wins: dict[str, list[int]] = {f"k/{i}": [] for i in range(keys)}

    def work(t: int) -> None:
        with ZipStore(path, mode="a") as store:
            barrier.wait()
            for key in wins:
                if store.set_if_not_exists(key, b"%d" % t):
                    wins[key].append(t)

    run_threads(threads_count, work)
    assert all(len(winners) == 1 for winners in wins.values())
    with zipfile.ZipFile(path) as zf:
        assert len(zf.namelist()) == keys
        for key, (winner,) in wins.items():
            assert zf.read(key) == b"%d" % winner


# --- 5. damaged archives ---------------------------------------------------------------------


def patch(data: bytes, signature: bytes, offset: int, fmt: str, value: int) -> bytes:
    """Overwrite a field ``offset`` bytes into every record starting with ``signature``."""
    out = bytearray(data)
    for match in re.finditer(re.escape(signature), data):
        struct.pack_into(fmt, out, match.start() + offset, value)
    return bytes(out)


LOCAL, CENTRAL, END = b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06"


def zipfile_bytes(method: int, members: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as zf:
        for name, value in (members or {"m": b"0123456789" * 300}).items():
            zf.writestr(name, value)
    return buffer.getvalue()


@contextmanager
def peak_memory() -> Iterator[list[int]]:
    """Track the peak of Python allocations in the block; the list gets it at the end."""
    peak: list[int] = []
    tracemalloc.start()
    try:
        yield peak
    finally:
        peak.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


DAMAGED = {
    # name: (archive bytes, the error that reading "m" raises)
    "unknown-method": (patch(patch(zipfile_bytes(0), LOCAL, 8, "<H", 99), CENTRAL, 10, "<H", 99),
                       UnsupportedOperationError),
    "encrypted": (patch(zipfile_bytes(8), CENTRAL, 8, "<H", 1), UnsupportedOperationError),
    "huge-compressed-size": (patch(zipfile_bytes(8), CENTRAL, 20, "<I", 0xFFFFFFF0),
                             CorruptZipError),
    "huge-declared-size": (patch(zipfile_bytes(8), CENTRAL, 24, "<I", 0x7FFFFFFF),
                           CorruptZipError),
    "bad-deflate": (patch(zipfile_bytes(8), LOCAL, 30 + 1, "<I", 0xFFFFFFFF), CorruptZipError),
    "bad-bzip2": (patch(zipfile_bytes(12), LOCAL, 30 + 1 + 4, "<I", 0x12345678),
                  CorruptZipError),
    "bad-lzma-properties": (patch(zipfile_bytes(14), LOCAL, 30 + 1 + 4, "<B", 255),
                            CorruptZipError),
    "offset-past-the-file": (patch(zipfile_bytes(0), CENTRAL, 42, "<I", 0xFFFFFFF0),
                             CorruptZipError),
    "stored-sizes-disagree": (patch(zipfile_bytes(0), CENTRAL, 24, "<I", 0x7FFFFFFF),
                              CorruptZipError),
}


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_damaged_members_raise_zarrkit_errors(tmp_path: Path, case: str) -> None:
    data, error = DAMAGED[case]
    path = tmp_path / "d.zip"
    path.write_bytes(data)
    with ZipStore(path) as store:
        with peak_memory() as peak:
            with pytest.raises(error) as caught:
                store.get("m")
            assert isinstance(caught.value, ZarrkitError)
            try:  # a prefix may decode fine before the damage shows
                store.get_range("m", 5, 10)
            except ZarrkitError:
                pass
        assert peak[0] < 4 << 20  # no allocation of the declared sizes


LZMA_UNDER_LIMIT = """
import resource, sys
from zarrkit.storage.zip import ZipStore

with open("/proc/self/status") as status:
    kib = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
limit = (kib << 10) + (1 << 30)  # what the process maps now, plus 1 GiB
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
with ZipStore(sys.argv[1]) as store:
    print(len(store.get("m")))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_forged_lzma_dictionary_is_not_allocated(tmp_path: Path) -> None:
    path = tmp_path / "l.zip"
    value = b"0123456789" * 300
    # The 4-byte dictionary size follows the version, properties size and lc/lp/pb byte;
    # 4 GiB must not be allocated for a 3000-byte member (here: cannot be).
    path.write_bytes(patch(zipfile_bytes(14, {"m": value}), LOCAL, 30 + 1 + 5, "<I", 0xFFFFFFFF))
    result = subprocess.run(
        [sys.executable, "-c", LZMA_UNDER_LIMIT, str(path)],
        capture_output=True, text=True, timeout=60,
    )
    assert result.stdout.strip() == "3000", result.stderr[-500:]
    with ZipStore(path) as store:
        assert store.get("m") == value


@pytest.mark.parametrize(
    "damage",
    ["huge-directory-size", "huge-directory-offset", "zip64-offset", "bad-utf8-name", "empty"],
)
def test_damaged_directories_raise_zarrkit_errors(tmp_path: Path, damage: str) -> None:
    data = zipfile_bytes(8, {"m": b"x" * 100, "n": b"y"})
    path = tmp_path / "d.zip"
    if damage == "huge-directory-size":
        path.write_bytes(patch(data, END, 12, "<I", 0xFFFFFF00))
    elif damage == "huge-directory-offset":
        path.write_bytes(patch(data, END, 16, "<I", 0xFFFFFF00))
    elif damage == "zip64-offset":
        # Saturate m's header offset and give it a ZIP64 extra pointing 2**62 bytes away.
        path.write_bytes(_with_zip64_offset(data, 1 << 62))
    elif damage == "bad-utf8-name":
        path.write_bytes(_with_bad_utf8_name(data))
    else:
        path.write_bytes(b"")
    if damage == "empty":
        with pytest.raises(CorruptZipError) as caught:
            ZipStore(path)
        assert isinstance(caught.value, ZarrkitError)
        return
    with ZipStore(path) as store:
        # A directory that does not fit the file is damage: the members are found
        # through their local headers instead.
        assert store.recovered == damage.startswith("huge")
        if damage == "zip64-offset":
            with pytest.raises(CorruptZipError):
                store.get("m")
        if damage == "bad-utf8-name":
            assert list(store.list()) == ["n"]  # a name that is no key is skipped
        assert store.get("n") == b"y"


def _with_zip64_offset(data: bytes, offset: int) -> bytes:
    start = data.index(CENTRAL)  # the first record is m's
    name_len, extra_len = struct.unpack_from("<HH", data, start + 28)
    assert extra_len == 0
    extra = struct.pack("<HHQ", 1, 8, offset)
    record = bytearray(data[start : start + 46 + name_len])
    struct.pack_into("<H", record, 30, len(extra))
    struct.pack_into("<I", record, 42, 0xFFFFFFFF)
    out = bytearray(data[:start] + record + extra + data[start + 46 + name_len :])
    end = out.rindex(END)
    cd_size = struct.unpack_from("<I", out, end + 12)[0]
    struct.pack_into("<I", out, end + 12, cd_size + len(extra))
    return bytes(out)


def _with_bad_utf8_name(data: bytes) -> bytes:
    start = data.index(CENTRAL)
    out = bytearray(data)
    flags = struct.unpack_from("<H", out, start + 8)[0]
    struct.pack_into("<H", out, start + 8, flags | 0x800)
    out[start + 46] = 0xFF  # "m" becomes an invalid UTF-8 byte
    return bytes(out)


def test_not_a_zip_still_is_a_bad_zip_file(tmp_path: Path) -> None:
    path = tmp_path / "n.zip"
    path.write_bytes(b"plain text, no archive here\n" * 20)
    for mode in ("r", "a"):
        with pytest.raises(CorruptZipError, match="not a ZIP archive") as caught:
            ZipStore(path, mode=mode)
        assert isinstance(caught.value, BadZipFile)
        assert isinstance(caught.value, ZarrkitError)


# --- fuzzing -------------------------------------------------------------------------------


def _read_everything(path: Path) -> ZipStore | None:
    """Open ``path`` read-only and read every member every way; zarrkit errors are the
    expected outcome of damage, anything else escapes. Return the (closed) store."""
    try:
        store = ZipStore(path)
    except ZarrkitError:
        return None
    with store:
        for key in list(store.list()):
            _read_member(store, key)
    return store


def _read_member(store: ZipStore, key: str) -> None:
    try:
        value = store.get(key)
    except ZarrkitError:
        value = None
    for start, length in ((1, 5), (-3, None), (0, 1 << 40)):
        try:
            store.get_range(key, start, length)
        except ZarrkitError:
            pass
    if value is None:
        return
    try:
        buffer = bytearray(len(value))
        store.get_into(key, memoryview(buffer))
        assert bytes(buffer) == value
        mapped = store.map_value(key)
        assert mapped is not None and bytes(mapped) == value
    except ZarrkitError:
        pass
    except ValueError as error:  # map_value of a compressed member: a usage error
        if "compressed" not in str(error):
            raise


def exercise_archive(data: bytes, directory: Path) -> None:
    """Open ``data`` as an archive and read every member every way, then open it for
    appending, close it, and read it again. Only zarrkit errors may come out of damage:
    any other exception propagates (the body of an atheris target, as it is)."""
    path = directory / "fuzz.zip"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _read_everything(path)
        try:
            appender = ZipStore(path, mode="a")
        except ZarrkitError:
            return
        keys = set(appender.list())
        recovered = appender.recovered
        appender.close()
        reread = _read_everything(path)
        if recovered:  # the append-mode close gave it a whole central directory
            assert reread is not None and not reread.recovered
            with ZipStore(path) as store:
                assert keys <= set(store.list())


@cache
def fuzz_seeds() -> list[bytes]:
    """Real archives to damage: zarrkit's (closed, appended to, torn, ZIP64) and
    zipfile's (stored, deflate, bzip2, lzma)."""
    import tempfile

    members = {"zarr.json": b'{"zarr_format": 3}', "c/0": bytes(range(256)) * 8, "c/1": b""}
    seeds = [zipfile_bytes(method, members) for method in (0, 8, 12, 14)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.zip"
        with ZipStore(path, mode="w") as store:
            store.set_many(members)
        seeds.append(path.read_bytes())
        with ZipStore(path, mode="a") as store:
            store.set("c/2", b"appended" * 20)
        seeds.append(path.read_bytes())
        store = ZipStore(path, mode="a")
        store.set("torn", b"t" * 300)
        seeds.append(path.read_bytes()[:-100])  # a writer killed mid-member
        store.close()
        limits = (zipmod.ZIP64_LIMIT, zipmod.ZIP64_COUNT_LIMIT)
        zipmod.ZIP64_LIMIT, zipmod.ZIP64_COUNT_LIMIT = 100, 2
        try:
            with ZipStore(path, mode="w") as store:
                store.set_many(members)
        finally:
            zipmod.ZIP64_LIMIT, zipmod.ZIP64_COUNT_LIMIT = limits
        seeds.append(path.read_bytes())
    return seeds


INTERESTING = [0, 1, 5, 0x7F, 0xFF, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 1 << 40, 1 << 63]


@st.composite
def damaged_archives(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(fuzz_seeds())))
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        kind = draw(st.sampled_from(["field", "field", "flip", "truncate", "splice"]))
        if kind == "field":  # a header field: where damage is the most dangerous
            records = [m.start() for m in re.finditer(b"PK[\x01\x03\x05\x06\x07]", data)]
            pos = draw(st.sampled_from(records or [0])) + draw(st.integers(4, 60))
            width = draw(st.sampled_from([1, 2, 4, 8]))
            value = draw(st.sampled_from(INTERESTING)) % (1 << (8 * width))
            data[pos : pos + width] = value.to_bytes(width, "little")[: max(len(data) - pos, 0)]
        elif kind == "flip":
            pos = draw(st.integers(0, len(data) - 1))
            data[pos] ^= draw(st.integers(1, 255))
        elif kind == "truncate":
            del data[draw(st.integers(0, len(data))) :]
        else:
            pos = draw(st.integers(0, len(data)))
            data[pos : pos + draw(st.integers(0, 40))] = draw(st.binary(max_size=40))
    return bytes(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_archives())
def test_fuzzed_archives_raise_only_zarrkit_errors(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        started = time.monotonic()
        with peak_memory() as peak:
            exercise_archive(data, Path(tmp))
        assert peak[0] < 64 << 20
        assert time.monotonic() - started < 5


def test_recovers_zip64_members(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Lowered limits give every member ZIP64 sizes and offsets in its local header.
    monkeypatch.setattr(zipmod, "ZIP64_LIMIT", 1000)
    monkeypatch.setattr(zipmod, "ZIP64_COUNT_LIMIT", 3)
    path, torn = tmp_path / "z.zip", tmp_path / "torn.zip"
    members = {f"m{i}": random.Random(i).randbytes(700 * i) for i in range(6)}
    with ZipStore(path, mode="w") as store:
        store.set_many(members)
        torn.write_bytes(path.read_bytes())  # what a kill before close leaves
    with ZipStore(torn) as store:
        assert store.recovered
        assert {k: store.get(k) for k in store.list()} == members
    ZipStore(torn, mode="a").close()
    monkeypatch.undo()
    with zipfile.ZipFile(torn) as zf:
        assert zf.testzip() is None
        assert {n: zf.read(n) for n in zf.namelist()} == members


def test_a_comment_holding_an_end_record_is_not_carried_over(tmp_path: Path) -> None:
    """Found by fuzzing (atheris): a damaged archive whose comment holds an end-of-central-
    directory signature, recovered and appended to, was written back with that comment
    after the new end record, so the next reader took the fake record in the comment for
    the archive's end and saw none of the members."""
    path = tmp_path / "c.zip"
    path.write_bytes(bytes.fromhex("504b03043f0002000e00f919785d4072414a29003e000000612f30504b050600000000000000000000000000000000ffff88991600000064000000030000000000000000000030504b0506000000000e00000000000000870000000000"))
    with ZipStore(path, mode="a") as store:
        store.set("fuzz/new", b"appended")
    with ZipStore(path, mode="r") as store:
        assert store.get("fuzz/new") == b"appended"
        assert not store.recovered
    assert zipfile.ZipFile(path).read("fuzz/new") == b"appended"


def test_flush_makes_appends_visible_and_later_appends_keep_them(tmp_path: Path) -> None:
    path = tmp_path / "f.zip"
    store = ZipStore(path, mode="w")
    store.set("a", b"1" * 100)
    store.flush()
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None and archive.read("a") == b"1" * 100
    with ZipStore(path) as reader:
        assert reader.get("a") == b"1" * 100
    size = path.stat().st_size
    store.flush()  # nothing new: the file is left as it is
    assert path.stat().st_size == size
    store.set("b", b"2" * 200_000)
    # Until the next flush a reader still finds everything flushed (and recovers the
    # complete members appended after it).
    with ZipStore(path) as reader:
        assert reader.get("a") == b"1" * 100
        assert reader.get("b") in (None, b"2" * 200_000)
    store.close()
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["a", "b"] and archive.testzip() is None
    with pytest.raises(ValueError, match="closed"):
        store.flush()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_never_writes_the_parents_archive(tmp_path: Path) -> None:
    # The child's copy of a writable store has a stale write position: a central directory
    # written there (by close) would truncate what the parent appended after the fork.
    path = tmp_path / "f.zip"
    store = ZipStore(path, mode="w")
    store.set("before", b"b" * 100)  # not yet in a central directory at the fork
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(write_end)
            os.read(read_end, 1)
            message = (f"^ZipStore\\({str(path)!r}, mode='w'\\) was opened for writing in "
                       f"process {os.getppid()}; this forked process cannot write it \\(open "
                       "the archive again here\\)$")
            try:
                store.set("child", b"c")
            except UnsupportedOperationError as error:
                assert re.match(message, str(error)), str(error)
                try:
                    store.flush()
                except UnsupportedOperationError as again:
                    assert re.match(message, str(again)), str(again)
                    store.close()  # releases its copy, writes nothing
                    code = 0
        finally:
            os._exit(code)
    os.close(read_end)
    store.set("after", b"a" * 1000)
    os.write(write_end, b"x")
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.get("after") == b"a" * 1000
    store.close()
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        assert {n: archive.read(n) for n in archive.namelist()} == {
            "before": b"b" * 100, "after": b"a" * 1000}
