"""Tests written for mutants of zarrkit.storage that the rest of the suite let live.

``make mutate MODULE=storage/<module>.py`` (tools/mutate/run.py) changes the code one small
step at a time and runs the storage tests against each change; a change no test notices
shows behaviour that nothing checks. Each test here checks such behaviour through what a
store returns, raises, writes to disk or asks of the operating system.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

import zarrkit as zk
from zarrkit.errors import InvalidKeyError, ReadOnlyError, StoreEscapeError, StoreIOError
from zarrkit.storage import DirectoryStore, MemoryStore, Store, locking
from zarrkit.storage import directory as directory_module
from zarrkit.storage.base import Buffer
from zarrkit.storage.directory import TEMP_PREFIX
from zarrkit.storage.keys import check_key_in_detail, validate_key, validate_prefix
from zarrkit.storage.locking import STRIPES, file_stripe_lock, key_lock, key_stripe, thread_lock

# --- keys -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key,reason",
    [
        ("", "invalid store key '': empty"),
        ("a\x00b", "invalid store key 'a\\x00b': NUL character"),
        ("a\\b", "invalid store key 'a\\\\b': backslash"),
        ("/abs", "invalid store key '/abs': absolute path"),
        ("c:", "invalid store key 'c:': drive letter"),
        ("C:/x", "invalid store key 'C:/x': drive letter"),
        ("a//b", "invalid store key 'a//b': empty segment"),
        ("a/", "invalid store key 'a/': empty segment"),
        ("a/./b", "invalid store key 'a/./b': '.' segment"),
        ("../x", "invalid store key '../x': '..' segment"),
    ],
)
def test_each_key_rule_names_its_reason(key: str, reason: str) -> None:
    for check in (validate_key, check_key_in_detail):
        with pytest.raises(InvalidKeyError) as info:
            check(key)
        assert str(info.value) == reason


@pytest.mark.parametrize("key,kind", [(5, "int"), (None, "NoneType"), (b"a", "bytes")])
def test_a_key_that_is_no_string_names_its_type(key: object, kind: str) -> None:
    with pytest.raises(InvalidKeyError) as info:
        validate_key(key)  # type: ignore[arg-type]
    assert str(info.value) == f"store key must be a str, not {kind}: {key!r}"


@pytest.mark.parametrize("key", ["1:", ":", "ab:", "a/c:", "-:"])
def test_a_colon_is_a_drive_letter_only_after_one_leading_letter(key: str) -> None:
    assert validate_key(key) == key


@pytest.mark.parametrize("prefix", ["a\\", "c:", "a\x00", "/a", ".."])
def test_a_prefix_without_a_slash_is_checked_whole(prefix: str) -> None:
    with pytest.raises(InvalidKeyError):
        validate_prefix(prefix)
    with pytest.raises(InvalidKeyError):
        list(MemoryStore().list_prefix(prefix))


@pytest.mark.parametrize("prefix", ["", "a", "a/", "a/b", "a/b/", "c", "x.y/"])
def test_valid_prefixes_are_returned_unchanged(prefix: str) -> None:
    assert validate_prefix(prefix) == prefix


# --- the Store base class ---------------------------------------------------------------------


class DictStore(Store):
    """The smallest store: the four methods Store asks of a subclass, nothing else, so
    that every public method is Store's own."""

    def __init__(self, *, read_only: bool = False) -> None:
        self.data: dict[str, bytes] = {}
        self.read_only = read_only

    def _get(self, key: str) -> bytes | None:
        return self.data.get(key)

    def _set(self, key: str, value: Buffer) -> None:
        self.data[key] = bytes(value)

    def _delete(self, key: str) -> None:
        self.data.pop(key, None)

    def _iter_keys(self) -> Iterator[str]:
        return iter(list(self.data))

    def __repr__(self) -> str:
        return "DictStore()"


def test_base_store_reads_and_writes_through_the_subclass_methods() -> None:
    store = DictStore()
    store.set("a/b", b"123456")
    store.set_many([("a/c", b"x"), ("d", bytearray(b"y"))])
    assert store.data == {"a/b": b"123456", "a/c": b"x", "d": b"y"}
    assert store.get("a/b") == b"123456" and store.get("missing") is None
    assert store.get_many(["d", "missing"]) == [b"y", None]
    assert store.get_range("a/b", 2) == b"3456"
    assert store.get_range("a/b", 2, 3) == b"345"
    assert store.get_range("a/b", -2) == b"56"
    assert store.get_range("a/b", -100, 2) == b"12"
    assert store.get_range("a/b", 0, 0) == b""
    assert store.get_range("missing", 0) is None
    assert sorted(store.list()) == ["a/b", "a/c", "d"]
    assert sorted(store.list_prefix("a/")) == ["a/b", "a/c"]
    assert sorted(store.list_prefix("a")) == ["a/b", "a/c"]
    assert store.list_dir("") == (["d"], ["a"])
    assert store.list_dir("a/") == (["b", "c"], [])
    store.delete("a/b")
    store.delete("missing")
    assert sorted(store.data) == ["a/c", "d"]
    store.delete_prefix("a/")
    assert sorted(store.data) == ["d"]
    store.delete_prefix("")
    assert store.data == {}


def test_base_store_set_if_not_exists_never_replaces_a_value() -> None:
    store = DictStore()
    assert store.set_if_not_exists("g/zarr.json", b"first") is True
    assert store.set_if_not_exists("g/zarr.json", b"second") is False
    assert store.data == {"g/zarr.json": b"first"}
    store.set("empty", b"")
    assert store.set_if_not_exists("empty", b"x") is False  # an empty value is a value
    assert store.data["empty"] == b""
    with pytest.raises(InvalidKeyError):
        store.set_if_not_exists("../x", b"1")
    with pytest.raises(TypeError, match="store values must be bytes-like, not str"):
        store.set_if_not_exists("s", "text")  # type: ignore[arg-type]
    assert "s" not in store.data


def test_base_store_set_if_not_exists_has_one_winner_among_threads() -> None:
    store = DictStore()
    winners = []
    barrier = threading.Barrier(8)

    def create(i: int) -> None:
        barrier.wait()
        if store.set_if_not_exists("k", str(i).encode()):
            winners.append(i)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1 and store.data["k"] == str(winners[0]).encode()


@pytest.mark.parametrize("make", [DictStore, MemoryStore])
def test_read_only_errors_name_the_store_and_the_key(make: Callable[..., Store]) -> None:
    store = make(read_only=True)
    name = repr(store)
    calls: list[tuple[Callable[[], object], str]] = [
        (lambda: store.set("k", b"1"), f"cannot write 'k': {name} is read-only"),
        (lambda: store.set_if_not_exists("n", b"1"), f"cannot write 'n': {name} is read-only"),
        (lambda: store.set_many({"m": b"1"}), f"cannot write 'm': {name} is read-only"),
        (lambda: store.set_many({}), f"cannot write: {name} is read-only"),
        (lambda: store.delete("d"), f"cannot write 'd': {name} is read-only"),
        (lambda: store.delete_prefix("p/"), f"cannot write 'p/': {name} is read-only"),
        (lambda: store.delete_prefix(""), f"cannot write: {name} is read-only"),
    ]
    for call, message in calls:
        with pytest.raises(ReadOnlyError) as info:
            call()
        assert str(info.value) == message


@pytest.mark.parametrize("make", [DictStore, MemoryStore])
def test_a_value_that_is_not_bytes_like_is_refused_by_type(make: Callable[..., Store]) -> None:
    store = make()
    for value, kind in (("text", "str"), (None, "NoneType"), ([1], "list")):
        with pytest.raises(TypeError) as info:
            store.set("k", value)  # type: ignore[arg-type]
        assert str(info.value) == f"store values must be bytes-like, not {kind}"
    assert list(store.list()) == []


def test_membership_is_for_string_keys_with_a_value() -> None:
    store = DictStore()
    store.set("a/b", b"")
    assert "a/b" in store
    assert "a" not in store and "missing" not in store
    assert 5 not in store and None not in store and b"a/b" not in store


def test_a_store_is_its_own_context_and_closes_on_exit() -> None:
    closed = []

    class Closing(DictStore):
        def close(self) -> None:
            closed.append(self)

    with Closing() as store:
        assert isinstance(store, Closing)
        store.set("k", b"v")
        assert closed == []
    assert closed == [store]
    assert DictStore().close() is None  # the base close has nothing to release


def test_lock_identity_is_per_handle_for_the_base_store() -> None:
    a, b = DictStore(), DictStore()
    assert a.lock_identity == a.lock_identity
    assert a.lock_identity != b.lock_identity
    assert a.lock_identity[0] == "DictStore"


def enters(lock: AbstractContextManager[None], timeout: float) -> bool:
    """Whether another thread enters ``lock`` within ``timeout`` seconds."""
    entered = threading.Event()

    def enter() -> None:
        with lock:
            entered.set()

    threading.Thread(target=enter, daemon=True).start()
    return entered.wait(timeout)


def holds_off(lock: AbstractContextManager[None]) -> bool:
    """Whether ``lock`` keeps another thread out (for half a second)."""
    return not enters(lock, 0.5)


def lets_in(lock: AbstractContextManager[None]) -> bool:
    """Whether another thread gets into ``lock`` (waiting long: the machine may be busy)."""
    return enters(lock, 20)


@pytest.mark.parametrize("make", [DictStore, MemoryStore])
def test_key_locks_exclude_per_store_and_per_key(make: Callable[[], Store]) -> None:
    store = make()
    others = [make() for _ in range(4)]
    key = "a/0"
    # Stores and keys are spread over a table of locks: pick another store and another
    # key that do not happen to share this key's lock.
    other = next(s for s in others
                 if thread_lock(s.lock_identity, key_stripe(key))
                 is not thread_lock(store.lock_identity, key_stripe(key)))
    other_key = next(k for k in (f"a/{i}" for i in range(1, 50))
                     if thread_lock(store.lock_identity, key_stripe(k))
                     is not thread_lock(store.lock_identity, key_stripe(key)))
    with store.key_lock(key):
        assert holds_off(store.key_lock(key))
        assert lets_in(other.key_lock(key))
        assert lets_in(store.key_lock(other_key))
    assert lets_in(store.key_lock(key))


# --- MemoryStore -------------------------------------------------------------------------------


def test_memory_store_uses_a_given_dict_and_makes_its_own_otherwise() -> None:
    shared: dict[str, bytes] = {}
    MemoryStore(shared).set("k", b"v")
    assert shared == {"k": b"v"}
    a, b = MemoryStore(), MemoryStore()
    a.set("k", b"v")
    assert b.get("k") is None
    assert not MemoryStore().read_only
    assert MemoryStore(read_only=True).read_only


def test_memory_store_lock_identity_follows_the_dict() -> None:
    shared: dict[str, bytes] = {}
    assert MemoryStore(shared).lock_identity == MemoryStore(shared).lock_identity
    assert MemoryStore().lock_identity != MemoryStore().lock_identity
    assert MemoryStore(shared).lock_identity != DictStore().lock_identity


def test_memory_store_repr_equality_and_hashing() -> None:
    assert repr(MemoryStore()) == "MemoryStore(<0 keys>)"
    assert repr(MemoryStore({"a": b"1", "b": b"2"})) == "MemoryStore(<2 keys>)"
    assert MemoryStore({"a": b"1"}) == MemoryStore({"a": b"1"})
    assert MemoryStore({"a": b"1"}) != MemoryStore({"a": b"2"})
    assert MemoryStore() != {}  # a dict with the same items is no store
    assert MemoryStore() != DictStore()
    with pytest.raises(TypeError):
        hash(MemoryStore())


def test_memory_store_set_if_not_exists_copies_and_refuses() -> None:
    store = MemoryStore()
    value = bytearray(b"abc")
    assert store.set_if_not_exists("k", value) is True
    value[0] = 0
    assert store.get("k") == b"abc" and type(store.get("k")) is bytes
    assert store.set_if_not_exists("k", b"zzz") is False
    assert store.get("k") == b"abc"
    with pytest.raises(InvalidKeyError):
        store.set_if_not_exists("a//b", b"1")
    with pytest.raises(ReadOnlyError):
        MemoryStore(read_only=True).set_if_not_exists("k", b"1")


def test_memory_store_listing_is_a_snapshot() -> None:
    store = MemoryStore({"a": b"1", "b": b"2"})
    keys = store.list()
    store.set("c", b"3")  # a write during the iteration does not disturb it
    assert sorted(keys) == ["a", "b"]


# --- locking -----------------------------------------------------------------------------------


def test_key_stripes_are_the_same_in_every_process_and_spread_over_the_range() -> None:
    keys = [f"a/{i}.{j}" for i in range(20) for j in range(20)] + ["", "zarr.json", "é/ü"]
    script = (
        "import sys, json\n"
        "from zarrkit.storage.locking import key_stripe\n"
        "print(json.dumps([key_stripe(k) for k in json.loads(sys.argv[1])]))\n"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", script, json.dumps(keys)], env=env,
                         capture_output=True, check=True, text=True).stdout
    stripes = [key_stripe(k) for k in keys]
    assert json.loads(out) == stripes
    assert all(0 <= s < STRIPES for s in stripes)
    assert len(set(stripes)) > 390  # 403 keys: all but a few stripes differ
    assert max(stripes) > STRIPES // 2
    assert {s % 4 for s in stripes} == {0, 1, 2, 3}  # every bit of the stripe is used


def test_a_key_with_a_lone_surrogate_can_be_locked() -> None:
    key = "a/\ud800"  # valid as a key: nothing in it escapes the store
    assert validate_key(key) == key
    assert 0 <= key_stripe(key) < STRIPES
    with MemoryStore().key_lock(key):
        pass


def test_thread_locks_spread_over_stripes_and_identities() -> None:
    by_stripe = {id(thread_lock("s", stripe)) for stripe in range(200)}
    by_identity = {id(thread_lock(("directory", f"/d{i}"), 7)) for i in range(200)}
    assert len(by_stripe) > 150 and len(by_identity) > 150
    assert thread_lock(("memory", 1), 5) is thread_lock(("memory", 1), 5)


def test_the_lock_file_is_made_with_its_directory_and_opened_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "new" / "dir" / "locks")
    opened: list[str] = []
    real_open = os.open

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    with file_stripe_lock(path, 3):
        pass
    with key_lock("s", "a/0", path):
        pass
    with file_stripe_lock(path, STRIPES - 1):
        pass
    assert opened.count(path) == 1
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~mask
    # A lock file in a directory that is already there.
    second = str(tmp_path / "locks2")
    with file_stripe_lock(second, 0):
        assert os.path.exists(second)


_PROBE_BYTES = textwrap.dedent("""
    import fcntl, json, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR)
    free = []
    for byte in json.loads(sys.argv[2]):
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, byte)
        except OSError:
            free.append(False)
        else:
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, byte)
            free.append(True)
    print(json.dumps(free))
""")


def free_in_another_process(path: str, stripes: list[int]) -> list[bool]:
    """Whether another process can lock each byte of the lock file at ``path``."""
    out = subprocess.run([sys.executable, "-c", _PROBE_BYTES, path, json.dumps(stripes)],
                         capture_output=True, check=True, text=True).stdout
    return json.loads(out)


def test_a_file_stripe_lock_holds_exactly_its_own_byte(tmp_path: Path) -> None:
    path = str(tmp_path / "locks")
    with file_stripe_lock(path, 10):
        assert free_in_another_process(path, [9, 10, 11]) == [True, False, True]
        with file_stripe_lock(path, 11):
            assert free_in_another_process(path, [10, 11, 12]) == [False, False, True]
        # releasing 11 (a POSIX lock belongs to the process) left 10 locked
        assert free_in_another_process(path, [9, 10, 11]) == [True, False, True]
        with file_stripe_lock(path, 9):
            pass
        assert free_in_another_process(path, [10]) == [False]
    assert free_in_another_process(path, [9, 10, 11]) == [True, True, True]


def test_key_lock_with_a_lock_file_locks_the_keys_stripe_across_processes(
        tmp_path: Path) -> None:
    path = str(tmp_path / "locks")
    stripe = key_stripe("g/a/0.0")
    with key_lock(("directory", str(tmp_path)), "g/a/0.0", path):
        assert free_in_another_process(path, [stripe, (stripe + 1) % STRIPES]) == [False, True]
    assert free_in_another_process(path, [stripe]) == [True]
    with key_lock(("directory", str(tmp_path)), "g/a/0.0"):  # no lock file: threads only
        assert free_in_another_process(path, [stripe]) == [True]


def test_locks_taken_before_a_fork_are_free_after_it(tmp_path: Path) -> None:
    """A lock that another thread holds when the process forks would never be released
    in the child: the child starts with a fresh table of locks."""
    identity = ("memory", 12345)
    stripe = key_stripe("k")
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with thread_lock(identity, stripe):
            taken.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait()
    try:
        pid = os.fork()
        if pid == 0:  # the child: exit 0 if the lock is free and lock files work
            code = 1
            try:
                if thread_lock(identity, stripe).acquire(timeout=2):
                    with key_lock(identity, "other", str(tmp_path / "locks")):
                        code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        # The same reset, run here: the lock the thread holds is replaced by a free one.
        locking._reset_after_fork()
        lock = thread_lock(identity, stripe)
        assert lock.acquire(timeout=2)
        lock.release()
        with key_lock(identity, "k", str(tmp_path / "locks")):
            pass
    finally:
        release.set()
        holder.join()


# --- DirectoryStore ----------------------------------------------------------------------------


def files_named_like_temporaries(root: Path) -> list[str]:
    """Temporary files under ``root`` (beside a store: its side directory's contents)."""
    return [os.path.join(d, n) for d, _, files in os.walk(root)
            for n in files if n.startswith(TEMP_PREFIX)]


def side_of(root: Path) -> Path:
    """Where a DirectoryStore on ``root`` keeps its temporaries and its lock file."""
    real = Path(os.path.realpath(root))
    return real.parent / f"{TEMP_PREFIX}{real.name}"


def test_directory_store_repr_equality_and_hashing(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "s")
    assert repr(store) == f"DirectoryStore({str(tmp_path / 's')!r})"
    assert store == DirectoryStore(tmp_path / "s")
    assert store == DirectoryStore(str(tmp_path / "s"))
    assert store != DirectoryStore(tmp_path / "t")
    assert store != MemoryStore() and store != str(tmp_path / "s") and store != 5
    with pytest.raises(TypeError):
        hash(store)


def test_directory_store_read_only_errors_name_the_store_and_the_key(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "s", read_only=True)
    for call, target in (
            (lambda: store.set("k", b"1"), "write 'k'"),
            (lambda: store.set_if_not_exists("n", b"1"), "write 'n'"),
            (lambda: store.delete("d"), "write 'd'"),
            (lambda: store.delete_prefix("p/"), "write 'p/'"),
            (lambda: store.delete_prefix("p"), "write 'p'"),
            (lambda: store.delete_prefix(""), "write")):
        with pytest.raises(ReadOnlyError) as info:
            call()
        assert str(info.value) == f"cannot {target}: {store!r} is read-only"


@pytest.fixture
def links(tmp_path: Path) -> tuple[DirectoryStore, Path]:
    """A store with links leading outside it, inside it, and in a loop."""
    outside = tmp_path / "outside"
    (outside / "d").mkdir(parents=True)
    (outside / "secret").write_bytes(b"secret")
    root = tmp_path / "store"
    (root / "inner").mkdir(parents=True)
    (root / "inner" / "v").write_bytes(b"inside")
    (root / "out").symlink_to(outside)
    (root / "file").symlink_to(outside / "secret")
    (root / "flink").symlink_to(root / "inner" / "v")
    (root / "inner" / "rel").symlink_to("v")
    (root / "loop1").symlink_to(root / "loop2")
    (root / "loop2").symlink_to(root / "loop1")
    return DirectoryStore(root), outside


def test_file_links_inside_the_store_are_followed(links: tuple[DirectoryStore, Path]) -> None:
    store, _ = links
    assert store.get("flink") == b"inside"
    assert store.get("inner/rel") == b"inside"
    assert store.get_range("flink", 2, 3) == b"sid"
    assert bytes(store.map_value("flink") or b"") == b"inside"
    buffer = bytearray(6)
    assert store.get_into("inner/rel", memoryview(buffer)) and buffer == b"inside"


def test_escapes_are_refused_with_the_key_named(links: tuple[DirectoryStore, Path]) -> None:
    store, outside = links
    through_directory = f"key {{!r}} of {store!r} leads outside the store through a symbolic link"
    calls: list[tuple[Callable[[], object], str]] = [
        (lambda: store.get("file"),
         f"key 'file' of {store!r} is a symbolic link leading outside the store"),
        (lambda: store.get("out/secret"), through_directory.format("out/secret")),
        (lambda: store.set("out/new", b"1"), through_directory.format("out/new")),
        (lambda: store.set_if_not_exists("out/n", b"1"), through_directory.format("out/n")),
        (lambda: store.delete("out/secret"), through_directory.format("out/secret")),
        (lambda: store.delete_prefix("out/d/"), through_directory.format("out/d/")),
    ]
    for call, message in calls:
        with pytest.raises(StoreEscapeError) as info:
            call()
        assert str(info.value) == message
    assert sorted(p.name for p in outside.iterdir()) == ["d", "secret"]


def test_a_link_loop_is_reported_as_one(links: tuple[DirectoryStore, Path]) -> None:
    store, _ = links
    with pytest.raises(StoreEscapeError) as info:
        store.get("loop1")
    assert str(info.value).startswith(f"cannot read 'loop1' in {store!r}: a symbolic link loop (")


def test_delete_prefix_of_everything_empties_the_root(links: tuple[DirectoryStore, Path]) -> None:
    store, outside = links
    (store.root / "empty" / "dir").mkdir(parents=True)
    store.set("a/b", b"1")
    store.delete_prefix("")
    assert list(store.root.iterdir()) == []
    # Links are removed themselves: what they lead to stays.
    assert (outside / "secret").read_bytes() == b"secret" and (outside / "d").is_dir()
    assert (store.root / "inner").exists() is False
    store.delete_prefix("")  # an empty store, and a missing root, are fine
    store.root.rmdir()
    store.delete_prefix("")
    assert not store.root.exists()


def test_delete_prefix_without_a_slash_deletes_the_keys_that_start_with_it(
        tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    for key in ("a/b", "a/c/d", "ab", "a.x", "b/a"):
        store.set(key, b"1")
    store.delete_prefix("a")
    assert list(store.list()) == ["b/a"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


@pytest.mark.parametrize("names", [("a b", "a"), ("boX", "bo"), ("aXX/XXb", "a/b")])
def test_listing_names_with_spaces_and_any_letters(tmp_path: Path,
                                                   names: tuple[str, str]) -> None:
    store = DirectoryStore(tmp_path)
    first, second = names
    store.set(f"{first}/k1", b"1")
    store.set(f"{second}/k2", b"2")
    assert store.list_dir(f"{first}/") == (["k1"], [])
    assert list(store.list_prefix(f"{first}/")) == [f"{first}/k1"]
    assert list(store.list_prefix(f"{first}/k")) == [f"{first}/k1"]
    assert sorted(store.list_prefix(f"{second}/")) == [f"{second}/k2"]


def test_listing_a_prefix_reads_only_the_directories_under_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path / "s")
    for i in range(5):
        store.set(f"a/b/c/{i}", b"1")
        store.set(f"a/x/{i}/0", b"1")
        store.set(f"y/{i}", b"1")
    scanned: list[str] = []
    real_scandir = os.scandir

    def spy(path: Any) -> Any:
        scanned.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", spy)
    assert sorted(store.list_prefix("a/b/c/")) == [f"a/b/c/{i}" for i in range(5)]
    assert sorted(store.list_prefix("a/b/c/1")) == ["a/b/c/1"]
    assert store.list_dir("a/b/") == ([], ["c"])
    assert scanned and all(s.startswith(str(store.root / "a" / "b")) for s in scanned)


@pytest.mark.parametrize("file_locks", [True, False])
def test_file_locks_use_one_lock_file_beside_the_store(tmp_path: Path,
                                                       file_locks: bool) -> None:
    store = DirectoryStore(tmp_path / "s")
    store.set("a/0", b"1")
    lock_file = side_of(store.root) / "locks"
    stripe = key_stripe("a/0")
    with zk.config.set(file_locks=file_locks), store.key_lock("a/0"):
        if file_locks:
            assert free_in_another_process(str(lock_file), [stripe]) == [False]
        else:
            assert not lock_file.exists()
    assert list(store.list()) == ["a/0"]
    assert [p.name for p in store.root.iterdir()] == ["a"]  # nothing inside the store


def test_file_locks_go_inside_the_root_when_nothing_can_go_beside_it(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "s")
    store.set("k", b"1")
    store._side = None  # as when the parent directory is not writable
    with zk.config.set(file_locks=True), store.key_lock("k"):
        assert free_in_another_process(str(store.root / "locks"),
                                       [key_stripe("k")]) == [False]


def test_directory_key_locks_are_per_directory(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "s")
    key = "a/0"
    same = DirectoryStore(str(tmp_path / "s") + "/.")
    others = [DirectoryStore(tmp_path / f"o{i}") for i in range(4)]
    other = next(s for s in others
                 if thread_lock(s.lock_identity, key_stripe(key))
                 is not thread_lock(store.lock_identity, key_stripe(key)))
    with store.key_lock(key):
        assert holds_off(same.key_lock(key))
        assert lets_in(other.key_lock(key))


def test_get_into_reads_with_one_readv_and_reports_what_it_cannot_fill(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path)
    store.set("k", b"abcdef")
    store.set("d/x", b"1")
    calls: list[str] = []
    real_readv, real_pread = os.readv, os.pread
    monkeypatch.setattr(os, "readv", lambda fd, bufs: calls.append("readv") or real_readv(fd, bufs))
    monkeypatch.setattr(os, "pread", lambda *a: calls.append("pread") or real_pread(*a))
    buffer = bytearray(6)
    assert store.get_into("k", memoryview(buffer)) is True
    assert buffer == b"abcdef" and calls == ["readv"]
    words = memoryview(bytearray(6)).cast("H")  # any format: filled byte for byte
    assert store.get_into("k", words) and words.tobytes() == b"abcdef"
    assert store.get_into("missing", memoryview(bytearray(6))) is False
    with pytest.raises(ValueError) as info:
        store.get_into("k", memoryview(bytearray(5)))
    assert str(info.value) == "size of 'k' (6) differs from the expected 5"
    # A key that names a directory has no value, whatever the size asked for.
    size = os.stat(tmp_path / "d").st_size
    assert store.get_into("d", memoryview(bytearray(size))) is False


def test_get_into_completes_short_readvs_and_stops_at_an_early_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path)
    value = bytes(range(200))
    store.set("k", value)
    real_readv = os.readv
    calls = []

    def one_byte(fd: int, buffers: list[memoryview]) -> int:
        calls.append(1)
        return real_readv(fd, [buffers[0][:1]])

    monkeypatch.setattr(os, "readv", one_byte)
    buffer = bytearray(200)
    assert store.get_into("k", memoryview(buffer)) and bytes(buffer) == value
    assert len(calls) == 200

    def ends(fd: int, buffers: list[memoryview]) -> int:  # the file shrank meanwhile
        calls.append(0)
        if len(calls) > 205:
            raise RuntimeError("get_into kept reading after the end of the file")
        return 0

    monkeypatch.setattr(os, "readv", ends)
    with pytest.raises(ValueError) as info:
        store.get_into("k", memoryview(bytearray(200)))
    assert str(info.value) == "'k' ended after 0 of 200 bytes"


def test_get_into_without_readv_reads_the_whole_value(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path)
    value = bytes(range(256)) * 3
    store.set("k", value)
    monkeypatch.delattr(os, "readv")  # as on Windows
    buffer = bytearray(len(value))
    assert store.get_into("k", memoryview(buffer)) is True
    assert bytes(buffer) == value
    assert store.get_into("missing", memoryview(buffer)) is False


def test_reads_use_one_pread_per_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path)
    store.set("k", b"0123456789")
    calls: list[tuple[int, int]] = []
    real_pread = os.pread

    def spy(fd: int, n: int, offset: int) -> bytes:
        calls.append((n, offset))
        return real_pread(fd, n, offset)

    monkeypatch.setattr(os, "pread", spy)
    assert store.get("k") == b"0123456789"
    assert store.get_range("k", 3, 4) == b"3456"
    assert store.get_range("k", -2) == b"89"
    assert calls == [(10, 0), (4, 3), (2, 8)]


def test_reads_without_pread_seek_and_read(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path)
    value = bytes(range(256)) * 4
    store.set("k", value)
    monkeypatch.delattr(os, "pread")  # as on Windows
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: real_read(fd, min(n, 100)))  # short reads
    assert store.get("k") == value
    assert store.get_range("k", 300, 500) == value[300:800]
    assert store.get_range("k", -10) == value[-10:]


def test_map_value_of_empty_and_tiny_values(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.set("empty", b"")
    store.set("one", b"1")
    empty = store.map_value("empty")
    assert empty is not None and bytes(empty) == b""
    one = store.map_value("one")
    assert one is not None and bytes(one) == b"1"
    assert store.map_value("missing") is None


def test_a_rename_across_file_systems_moves_temporaries_beside_the_targets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path / "s")
    store.set("a/old", b"0")
    side = side_of(store.root)
    replaced: list[str] = []
    real_replace = os.replace

    def cross_device_once(src: str, dst: str) -> None:
        replaced.append(src)
        if len(replaced) == 1:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", cross_device_once)
    store.set("a/b", b"value")
    assert store.get("a/b") == b"value"
    assert os.path.dirname(replaced[0]) == str(side)
    assert os.path.dirname(replaced[1]) == str(store.root / "a")
    assert not side.exists() or list(side.iterdir()) == []  # the first temporary is gone
    store.set("c/d", b"2")  # later writes go beside their targets too
    assert os.path.dirname(replaced[2]) == str(store.root / "c")
    assert sorted(store.list()) == ["a/b", "a/old", "c/d"]
    assert files_named_like_temporaries(tmp_path) == []


def test_other_rename_errors_are_store_errors_and_change_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path / "s")
    store.set("a/b", b"old")

    def busy(src: str, dst: str) -> None:
        raise OSError(errno.EBUSY, "Device or resource busy")

    monkeypatch.setattr(os, "replace", busy)
    with pytest.raises(StoreIOError) as info:
        store.set("a/b", b"new")
    assert info.value.errno == errno.EBUSY
    assert info.value.strerror.startswith(f"cannot store 'a/b' in {store!r}: ")
    monkeypatch.undo()
    assert store.get("a/b") == b"old"
    assert files_named_like_temporaries(tmp_path) == []
    store.set("x/y", b"1")  # temporaries still go beside the store
    assert side_of(store.root).exists() is False or not list(side_of(store.root).iterdir())


def test_a_failed_write_removes_its_temporary_and_nothing_else(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    (work / "XXXX").write_bytes(b"not the store's")
    monkeypatch.chdir(work)
    store = DirectoryStore(tmp_path / "s")
    store.set("k", b"old")

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with zk.config.set(fsync=True), pytest.raises(StoreIOError):
        store.set("k", b"new")
    with zk.config.set(fsync=True), pytest.raises(StoreIOError):
        store.set_if_not_exists("n", b"new")
    assert store.get("k") == b"old" and store.get("n") is None
    assert files_named_like_temporaries(tmp_path) == []
    assert (work / "XXXX").read_bytes() == b"not the store's"


@pytest.mark.parametrize("side", [True, False])
def test_a_file_where_a_directory_is_needed_names_the_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, side: bool) -> None:
    store = DirectoryStore(tmp_path / "s")
    store.set("k", b"1")
    if not side:
        store._side = None  # as when the parent directory is not writable
    real_makedirs = os.makedirs

    def raced(path: str, *args: Any, **kwargs: Any) -> None:
        if str(path).startswith(str(store.root)):  # a file appeared there meanwhile
            raise FileExistsError(errno.EEXIST, "File exists", str(path))
        real_makedirs(path, *args, **kwargs)

    monkeypatch.setattr(os, "makedirs", raced)
    with pytest.raises(StoreIOError) as info:
        store.set("a/b", b"1")
    assert info.value.errno == errno.ENOTDIR
    assert info.value.strerror.startswith(
        "cannot store 'a/b': a file stands where a directory is needed")
    with pytest.raises(StoreIOError) as info:
        store.set_if_not_exists("c/d", b"1")
    assert info.value.errno == errno.ENOTDIR
    assert info.value.strerror.startswith(
        "cannot store 'c/d': a file stands where a directory is needed")


def no_hard_links(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make os.link behave as on a file system without hard links."""

    def link(src: str, dst: str) -> None:
        if not os.path.isdir(os.path.dirname(dst)):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", dst)
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", link)


def test_create_if_absent_without_hard_links(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """File systems without hard links: created exclusively, never replaced."""
    store = DirectoryStore(tmp_path / "s")
    store.set("g/.zattrs", b"{}")
    no_hard_links(monkeypatch)
    assert store.set_if_not_exists("g/zarr.json", b"first") is True
    assert store.set_if_not_exists("g/zarr.json", b"second") is False
    assert store.get("g/zarr.json") == b"first"
    mask = os.umask(0)
    os.umask(mask)
    mode = os.stat(store.root / "g" / "zarr.json").st_mode
    assert stat.S_IMODE(mode) == 0o666 & ~mask
    assert files_named_like_temporaries(tmp_path) == []
    store.set("g/k", b"")
    assert store.set_if_not_exists("g/k", b"x") is False


def test_create_if_absent_without_hard_links_in_a_new_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path / "s")
    no_hard_links(monkeypatch)
    assert store.set_if_not_exists("new/zarr.json", b"first") is True
    assert store.get("new/zarr.json") == b"first"


def test_delete_errors_are_store_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path)
    store.set("a/k", b"1")

    def busy(path: Any) -> None:
        raise OSError(errno.EBUSY, "Device or resource busy")

    monkeypatch.setattr(os, "unlink", busy)
    with pytest.raises(StoreIOError) as info:
        store.delete("a/k")
    assert info.value.errno == errno.EBUSY
    assert info.value.strerror.startswith(f"cannot delete 'a/k' in {store!r}: ")
    monkeypatch.undo()
    assert store.get("a/k") == b"1"


def test_fsync_syncs_the_file_and_the_directories_it_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path / "s")
    store.set("x", b"0")
    synced: list[str] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    with zk.config.set(fsync=True):
        store.set("a/b/c", b"1")
        directories = [s for s in synced if os.path.isdir(s)]
        assert str(store.root / "a" / "b") in directories  # the renamed file's directory
        assert str(store.root / "a") in directories  # the new directory's parent
        assert len(synced) - len(directories) == 1  # and the file itself
        synced.clear()
        assert store.set_if_not_exists("a/b/d", b"2")
        assert str(store.root / "a" / "b") in synced


def ended_pid() -> int:
    """The process id of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def temporary_name(host: str, pid: int | str) -> str:
    return f"{TEMP_PREFIX}{host}-{pid}-00000000-0"


def test_only_this_hosts_ended_writers_temporaries_are_removed(tmp_path: Path) -> None:
    root = tmp_path / "s"
    side = side_of(root)
    side.mkdir()
    gone = ended_pid()
    ended = side / temporary_name(directory_module._HOST, gone)
    foreign = side / temporary_name("0badc0de", gone)  # another host's: its pids mean nothing
    odd = side / temporary_name(directory_module._HOST, "x1")
    short = side / f"{TEMP_PREFIX}{directory_module._HOST}"
    for path in (ended, foreign, odd, short):
        path.write_bytes(b"partial")
    DirectoryStore(root)
    assert not ended.exists()
    assert foreign.exists() and odd.exists() and short.exists()


@pytest.mark.parametrize("read_only", [False, True])
def test_temporaries_inside_a_store_are_removed_only_if_it_is_writable(
        tmp_path: Path, read_only: bool) -> None:
    root = tmp_path / "s"
    DirectoryStore(root).set("a/k", b"1")
    gone = ended_pid()
    inside = root / "a" / temporary_name(directory_module._HOST, gone)
    beside = side_of(root) / temporary_name(directory_module._HOST, gone)
    side_of(root).mkdir(exist_ok=True)
    inside.write_bytes(b"partial")
    beside.write_bytes(b"partial")
    store = DirectoryStore(root, read_only=read_only)
    assert not beside.exists()  # beside the store: always cleaned
    assert list(store.list()) == ["a/k"]  # never listed
    assert store.list_dir("a/") == (["k"], [])
    assert inside.exists() is read_only  # inside: only a writable store changes files


def test_temporaries_inside_a_store_without_a_side_directory_are_cleaned(
        tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "s")
    store.set("a/k", b"1")
    store._side = None  # as when the parent directory is not writable
    temporary = store.root / "a" / temporary_name(directory_module._HOST, ended_pid())
    temporary.write_bytes(b"partial")
    assert list(store.list()) == ["a/k"]
    assert not temporary.exists()


def test_temporaries_of_live_writers_are_kept_and_the_writers_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "s"
    side = side_of(root)
    side.mkdir()
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = side / temporary_name(directory_module._HOST, writer.pid)
        live.write_bytes(b"in flight")
        two_parts = side / f"{TEMP_PREFIX}{directory_module._HOST}-{ended_pid()}"
        two_parts.write_bytes(b"partial")
        DirectoryStore(root)
        assert live.exists()
        assert not two_parts.exists()  # host and pid are all it takes
        time.sleep(0.2)
        assert writer.poll() is None  # asked whether it lives, not signalled

        def not_mine(pid: int, sig: int) -> None:
            raise PermissionError(errno.EPERM, "Operation not permitted")

        monkeypatch.setattr(os, "kill", not_mine)  # a writer of another user
        DirectoryStore(root)
        assert live.exists()
    finally:
        monkeypatch.undo()
        writer.kill()
        writer.wait()


def test_listing_errors(links: tuple[DirectoryStore, Path], monkeypatch: pytest.MonkeyPatch
                        ) -> None:
    store, _ = links
    assert store.list_dir("loop1/") == ([], [])  # a link loop lists as nothing
    assert list(store.list_prefix("loop1/")) == []
    real_scandir = os.scandir

    def failing(path: Any) -> Any:
        if str(path).endswith("inner"):
            raise OSError(errno.EIO, "Input/output error")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", failing)
    with pytest.raises(StoreIOError) as info:
        store.list_dir("inner/")
    assert info.value.errno == errno.EIO
    assert info.value.strerror == (f"cannot list {store.root / 'inner'} in {store!r}: "
                                   "[Errno 5] Input/output error")


def test_set_if_not_exists_refuses_values_that_are_not_bytes_like(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    for value, kind in (("text", "str"), (None, "NoneType")):
        with pytest.raises(TypeError) as info:
            store.set_if_not_exists("k", value)  # type: ignore[arg-type]
        assert str(info.value) == f"store values must be bytes-like, not {kind}"
    assert list(store.list()) == []


def test_set_if_not_exists_errors_are_store_errors(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path / "s")
    store.set("g/.zattrs", b"{}")

    def failing(src: str, dst: str) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "link", failing)
    with pytest.raises(StoreIOError) as info:
        store.set_if_not_exists("g/zarr.json", b"1")
    assert info.value.errno == errno.EIO
    assert info.value.strerror == (f"cannot store 'g/zarr.json' in {store!r}: "
                                   "[Errno 5] Input/output error")
    assert files_named_like_temporaries(tmp_path) == []


def test_writes_without_a_side_directory(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "s")
    store._side = None  # as when the parent directory is not writable
    assert store.set_if_not_exists("a/b/zarr.json", b"1") is True
    assert store.set_if_not_exists("a/b/zarr.json", b"2") is False
    store.set("c/d", b"3")
    assert sorted(store.list()) == ["a/b/zarr.json", "c/d"]
    assert store.get("a/b/zarr.json") == b"1"
    assert files_named_like_temporaries(tmp_path) == []


def test_short_reads_take_as_few_preads_as_the_data_needs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path)
    store.set("k", b"0123456789")
    calls: list[tuple[int, int]] = []
    real_pread = os.pread

    def three_at_most(fd: int, n: int, offset: int) -> bytes:
        calls.append((n, offset))
        if len(calls) > 50:
            raise RuntimeError("the read does not end")
        return real_pread(fd, min(n, 3), offset)

    monkeypatch.setattr(os, "pread", three_at_most)
    assert store.get("k") == b"0123456789"
    assert calls == [(10, 0), (7, 3), (4, 6), (1, 9)]
    calls.clear()
    assert store.get_range("k", 4, 100) == b"456789"  # to the end: one read finds it
    assert calls == [(6, 4), (3, 7)]


def test_the_side_directory_is_removed_when_empty(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "s")
    store.set("k", b"1")
    side = side_of(store.root)
    side.mkdir(exist_ok=True)
    store.close()
    assert not side.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["s"]
    with zk.config.set(file_locks=True), store.key_lock("k"):
        pass
    store.close()  # the lock file stays, and its directory with it
    assert (side / "locks").exists()
    store._side = None
    store.close()  # temporaries inside: nothing beside to remove
    assert (side / "locks").exists()
    DirectoryStore(tmp_path / "s").close()
    assert store.get("k") == b"1"


def test_opening_the_lock_file_retries_while_its_directory_is_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "side" / "locks")
    attempts: list[str] = []
    real_open = os.open

    def removed_twice(file: Any, *args: Any, **kwargs: Any) -> int:
        if str(file) == path:
            attempts.append(path)
            if len(attempts) <= 2:  # another process removed the directory meanwhile
                os.rmdir(os.path.dirname(path))
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", removed_twice)
    with file_stripe_lock(path, 1):
        assert free_in_another_process(path, [1]) == [False]
    assert len(attempts) == 3

    never = str(tmp_path / "never" / "locks")
    tries: list[str] = []

    def always_removed(file: Any, *args: Any, **kwargs: Any) -> int:
        if str(file) == never:
            tries.append(never)
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", never)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", always_removed)
    with pytest.raises(FileNotFoundError):
        with file_stripe_lock(never, 1):
            pass
    assert len(tries) == 101  # a hundred tries with the directory made, then one more


@pytest.mark.parametrize("side", [True, False])
def test_writes_to_existing_directories_make_no_directories(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, side: bool) -> None:
    store = DirectoryStore(tmp_path / "s")
    if not side:
        store._side = None  # as when the parent directory is not writable
    store.set("a/0", b"0")  # makes a/ (and the side directory)
    made: list[str] = []
    real_makedirs = os.makedirs

    def spy(path: Any, *args: Any, **kwargs: Any) -> None:
        made.append(str(path))
        real_makedirs(path, *args, **kwargs)

    monkeypatch.setattr(os, "makedirs", spy)
    for i in range(1, 4):
        store.set(f"a/{i}", b"1")
        assert store.set_if_not_exists(f"a/n{i}", b"1")
    assert made == []
    assert len(list(store.list())) == 7


def test_a_side_directory_made_by_another_writer_meanwhile_is_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path / "s")
    side = side_of(store.root)
    real_open = os.open
    raced = []

    def racing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).startswith(str(side)) and not raced:
            raced.append(file)
            os.makedirs(side)  # another writer makes it between our open and makedirs
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(file))
        return real_open(file, *args, **kwargs)

    replaced: list[str] = []
    real_replace = os.replace
    monkeypatch.setattr(os, "open", racing_open)
    monkeypatch.setattr(os, "replace", lambda s, d: replaced.append(s) or real_replace(s, d))
    store.set("a/b", b"1")
    store.set("a/c", b"2")
    assert raced and len(replaced) >= 2
    assert all(os.path.dirname(s) == str(side) for s in replaced)


@pytest.mark.parametrize("failure", ["open", "makedirs"])
def test_temporaries_go_inside_when_nothing_can_be_made_beside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    store = DirectoryStore(tmp_path / "s")
    side = side_of(store.root)
    real_open, real_makedirs = os.open, os.makedirs

    def refusing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).startswith(str(side)):
            if failure == "open":
                raise PermissionError(errno.EACCES, "Permission denied", str(file))
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(file))
        return real_open(file, *args, **kwargs)

    def refusing_makedirs(path: Any, *args: Any, **kwargs: Any) -> None:
        if str(path) == str(side):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        real_makedirs(path, *args, **kwargs)

    replaced: list[str] = []
    real_replace = os.replace
    monkeypatch.setattr(os, "open", refusing_open)
    monkeypatch.setattr(os, "makedirs", refusing_makedirs)
    monkeypatch.setattr(os, "replace", lambda s, d: replaced.append(s) or real_replace(s, d))
    store.set("a/b", b"1")
    store.set("c", b"2")
    store.set("a/d", b"3")
    assert [os.path.dirname(s) for s in replaced] == [
        str(store.root / "a"), str(store.root), str(store.root / "a")]
    assert sorted(store.list()) == ["a/b", "a/d", "c"]
    assert files_named_like_temporaries(tmp_path) == []


def test_set_if_not_exists_in_new_directories(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path / "s")
    assert store.set_if_not_exists("new/dir/zarr.json", b"1") is True
    assert store.get("new/dir/zarr.json") == b"1"
    real_link = os.link
    calls = []

    def other_writer_first(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 2:  # the directory was just made: another writer is quicker
            with open(dst, "wb") as f:
                f.write(b"theirs")
        real_link(src, dst)

    monkeypatch.setattr(os, "link", other_writer_first)
    assert store.set_if_not_exists("other/zarr.json", b"mine") is False
    assert len(calls) == 2 and store.get("other/zarr.json") == b"theirs"
    assert files_named_like_temporaries(tmp_path) == []


def test_the_lock_file_opens_on_the_last_try(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "late" / "locks")
    tries: list[str] = []
    real_open = os.open

    def removed_a_hundred_times(file: Any, *args: Any, **kwargs: Any) -> int:
        if str(file) == path:
            tries.append(path)
            if len(tries) <= 100:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", removed_a_hundred_times)
    with file_stripe_lock(path, 5):
        assert free_in_another_process(path, [5]) == [False]
    assert len(tries) == 101
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~mask


def test_a_value_that_ends_early_is_returned_as_far_as_it_goes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file shrank between its size and its reading: what was read, one read at the
    end."""
    store = DirectoryStore(tmp_path)
    store.set("k", b"0123456789")
    calls: list[int] = []
    real_pread = os.pread

    def truncated_at(end: int) -> Callable[[int, int, int], bytes]:
        def pread(fd: int, n: int, offset: int) -> bytes:
            calls.append(offset)
            return real_pread(fd, max(0, min(n, 3, end - offset)), offset)
        return pread

    monkeypatch.setattr(os, "pread", truncated_at(5))
    assert store.get("k") == b"01234"
    assert calls == [0, 3, 5]
    calls.clear()
    monkeypatch.setattr(os, "pread", truncated_at(0))
    assert store.get("k") == b""
    assert calls == [0]


def test_read_errors_are_store_errors(links: tuple[DirectoryStore, Path],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    store, _ = links
    store.set("k", b"1")
    real_open = os.open
    failing = {str(store.root / "k"), str(store.root / "flink")}

    def eio(file: Any, flags: int, *args: Any) -> int:
        if str(file) in failing and not flags & getattr(os, "O_NOFOLLOW", 0):
            raise OSError(errno.EIO, "Input/output error")
        if str(file) == str(store.root / "k"):
            raise OSError(errno.EIO, "Input/output error")
        return real_open(file, flags, *args)

    monkeypatch.setattr(os, "open", eio)
    for key in ("k", "flink"):  # a plain file; a link, opened once it is checked
        with pytest.raises(StoreIOError) as info:
            store.get(key)
        assert info.value.errno == errno.EIO
        assert info.value.strerror == (f"cannot read {key!r} in {store!r}: "
                                       "[Errno 5] Input/output error")


def test_checked_directories_are_remembered_up_to_a_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DirectoryStore(tmp_path / "s")
    for name in ("d1", "d2", "d3"):
        store.set(f"{name}/k", b"1")
    store.set("top", b"1")
    store = DirectoryStore(tmp_path / "s")
    resolved: list[str] = []

    def spy(real: Any) -> Any:
        def check(path: Any, *args: Any, **kwargs: Any) -> Any:
            resolved.append(str(path))
            return real(path, *args, **kwargs)
        return check

    # A directory is checked by resolving it, or (under one known to be inside) by
    # seeing that it is not a link.
    monkeypatch.setattr(os.path, "realpath", spy(os.path.realpath))
    monkeypatch.setattr(os.path, "islink", spy(os.path.islink))
    assert store.get("top") == b"1"  # the root was checked when the store was opened
    assert store.get("d1/k") == b"1" and store.get("d1/k") == b"1"
    assert resolved == [str(store.root / "d1")]  # checked once, then remembered
    monkeypatch.setattr(directory_module, "_MAX_CHECKED_DIRECTORIES", 2)  # the root and one
    resolved.clear()
    for name in ("d2", "d1", "d1", "d3"):  # each new one replaces the one remembered
        assert store.get(f"{name}/k") == b"1"
    assert store.get("top") == b"1"  # the root itself is never forgotten
    assert resolved == [str(store.root / n) for n in ("d2", "d1", "d3")]


def test_short_writes_are_continued_and_files_get_open_s_permissions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Values are written with os.write, which may write less than it is given: the rest
    follows, for every kind of buffer a store takes. Files get the permissions open()
    gives (0o666 less the umask), not os.open's default 0o777."""
    store = DirectoryStore(tmp_path / "s")
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data)[:3]))
    values = {"a": b"0123456789", "b/c": bytearray(b"abcdefg"), "d": b"",
              "e": memoryview(b"xyz" * 5)[::3], "f": memoryview(bytes(range(8))).cast("I")}
    for key, value in values.items():
        store.set(key, value)
    monkeypatch.undo()
    for key, value in values.items():
        assert store.get(key) == bytes(value)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "s" / "a").st_mode) == 0o666 & ~umask
