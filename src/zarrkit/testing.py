"""Reusable conformance tests for stores (requires pytest).

:class:`StoreTests` holds test methods that any zarrkit store should pass. To test a
store, subclass it in a test module under a name pytest collects, say how to make an
empty writable store and, if the store can be reopened read-only, how to do that:

.. code-block:: python

    from zarrkit.storage import DirectoryStore
    from zarrkit.testing import StoreTests

    class TestDirectoryStore(StoreTests):
        def make_store(self, tmp_path):
            return DirectoryStore(tmp_path / "store")

        def reopen_read_only(self, store):
            return DirectoryStore(store.root, read_only=True)

A store that cannot do something sets the matching capability attribute to ``False`` (for
example ``supports_delete = False`` for an append-only archive); the tests of that
capability are then skipped, and replaced by a check that the operation fails cleanly
where that makes sense.

>>> issubclass(StoreTests, object) and StoreTests.supports_delete
True
"""

from __future__ import annotations

import array
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from zarrkit.errors import InvalidKeyError, ReadOnlyError
from zarrkit.storage.base import Buffer, Store

__all__ = ["INVALID_KEYS", "INVALID_PREFIXES", "StoreTests"]

#: Keys every store must reject before doing any I/O.
INVALID_KEYS: list[str] = [
    "../x",
    "a/../../x",
    "/abs",
    "a//b",
    "a\\b",
    "a/./b",
    "./a",
    "nul\x00",
    "",
    "a/..",
    "a/",
    "C:/x",
]

#: Listing and deletion prefixes every store must reject.
INVALID_PREFIXES: list[str] = ["../", "/abs/", "a//", "a/../", "a\\b/", "nul\x00/"]

#: A small hierarchy with the kinds of key Zarr uses.
TREE: dict[str, bytes] = {
    ".zgroup": b'{"zarr_format": 2}',
    ".zattrs": b"{}",
    "zarr.json": b"{}",
    "0.0": b"chunk",
    "a/.zarray": b"{}",
    "a/0.0": b"\x00\x01",
    "a/0.1": b"\x02\x03",
    "a/b/c": b"c",
    "a/b/d/e": b"e",
    "ab": b"not under a/",
    "x/c/0/0": b"v3 chunk",
}


def _value_kinds() -> list[tuple[str, Callable[[bytes], Buffer]]]:
    def int_view(data: bytes) -> Buffer:
        return memoryview(array.array("i", data[: len(data) // 4 * 4].ljust(8, b"\x00")))

    return [
        ("bytes", bytes),
        ("bytearray", bytearray),
        ("memoryview", memoryview),
        ("memoryview-slice", lambda d: memoryview(b"??" + d + b"??")[2:-2]),
        ("memoryview-strided", lambda d: memoryview(bytes(b for c in d for b in (c, 0)))[::2]),
        ("memoryview-int32", int_view),
    ]


class StoreTests:
    """Conformance tests for a zarrkit store; subclass and implement :meth:`make_store`.

    Capability attributes (all ``True`` by default) switch groups of tests off:
    ``supports_delete``, ``supports_read_only`` (the subclass implements
    :meth:`reopen_read_only`), ``supports_concurrent_writes`` and ``supports_unicode_keys``.
    ``large_value_size`` sets the size of the large round-trip value.

    >>> class TestMyStore(StoreTests):
    ...     def make_store(self, tmp_path):
    ...         from zarrkit.storage import MemoryStore
    ...         return MemoryStore()
    >>> TestMyStore.supports_delete
    True
    """

    supports_delete: ClassVar[bool] = True
    supports_read_only: ClassVar[bool] = True
    supports_concurrent_writes: ClassVar[bool] = True
    supports_unicode_keys: ClassVar[bool] = True
    large_value_size: ClassVar[int] = 5 * 2**20
    thread_count: ClassVar[int] = 8
    keys_per_thread: ClassVar[int] = 40

    # --- hooks for subclasses -----------------------------------------------------------
    def make_store(self, tmp_path: Path) -> Store:
        """Return a new, empty, writable store (files, if any, under ``tmp_path``).

        Example: ``return DirectoryStore(tmp_path / "store")``.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement make_store")

    def reopen_read_only(self, store: Store) -> Store:
        """Return a read-only store over the same data as ``store`` (which it may close).

        The default skips the read-only tests. Example, for an archive that must be closed
        before it can be read: ``store.close(); return ZipStore(store.path, mode="r")``.
        """
        pytest.skip(f"{type(self).__name__} does not implement reopen_read_only")

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        """A fresh writable store from :meth:`make_store`, closed after the test; a test
        asks for it by naming a ``store`` argument: ``def test_x(self, store): ...``."""
        store = self.make_store(tmp_path)
        yield store
        store.close()

    # --- helpers ------------------------------------------------------------------------
    @staticmethod
    def fill(store: Store, items: dict[str, bytes]) -> None:
        """Write ``items`` one key at a time.

        >>> from zarrkit.storage import MemoryStore
        >>> s = MemoryStore(); StoreTests.fill(s, {"a": b"1"}); s.get("a")
        b'1'
        """
        for key, value in items.items():
            store.set(key, value)

    def _require(self, capability: str) -> None:
        if not getattr(self, capability):
            pytest.skip(f"{type(self).__name__} has {capability} = False")

    # --- get / set ----------------------------------------------------------------------
    def test_empty_store(self, store: Store) -> None:
        assert list(store.list()) == []
        assert store.list_dir("") == ([], [])

    def test_get_missing(self, store: Store) -> None:
        assert store.get("missing") is None
        assert store.get("missing/deeper/key") is None
        assert "missing" not in store

    @pytest.mark.parametrize(("kind", "make"), _value_kinds(), ids=[k for k, _ in _value_kinds()])
    def test_set_get_round_trip(self, store: Store, kind: str, make: Callable[..., Any]) -> None:
        value = make(b"\x00\x01binary\xff" * 3)
        store.set("k", value)
        got = store.get("k")
        assert isinstance(got, bytes)
        assert got == memoryview(value).tobytes()
        assert "k" in store

    def test_empty_value(self, store: Store) -> None:
        store.set("empty", b"")
        assert store.get("empty") == b""
        assert list(store.list()) == ["empty"]

    def test_set_rejects_non_buffers(self, store: Store) -> None:
        with pytest.raises(TypeError):
            store.set("k", "text")  # type: ignore[arg-type]
        assert store.get("k") is None

    def test_set_copies(self, store: Store) -> None:
        value = bytearray(b"original")
        store.set("k", value)
        value[:] = b"mutated!"
        assert store.get("k") == b"original"
        view = memoryview(bytearray(b"viewed"))
        store.set("v", view)
        view[0] = ord("X")
        assert store.get("v") == b"viewed"

    def test_overwrite(self, store: Store) -> None:
        store.set("k", b"first value")
        store.set("k", b"2nd")
        assert store.get("k") == b"2nd"
        assert list(store.list()) == ["k"]

    def test_values_are_independent(self, store: Store) -> None:
        self.fill(store, TREE)
        for key, value in TREE.items():
            assert store.get(key) == value

    def test_unicode_key(self, store: Store) -> None:
        self._require("supports_unicode_keys")
        store.set("grüße/ключ", b"u")
        assert store.get("grüße/ключ") == b"u"
        assert store.list_dir("grüße/") == (["ключ"], [])

    def test_large_value(self, store: Store) -> None:
        value = bytes(range(256)) * (self.large_value_size // 256) + b"tail"
        store.set("large", value)
        assert store.get("large") == value
        assert store.get_range("large", len(value) - 10, 6) == value[-10:-4]
        assert store.get_range("large", -4) == b"tail"

    # --- ranges and batches -------------------------------------------------------------
    @pytest.mark.parametrize(
        ("start", "length"),
        [
            (0, None),
            (0, 0),
            (0, 4),
            (3, 5),
            (3, None),
            (15, 1),
            (15, 10),
            (16, None),
            (16, 3),
            (100, 5),
            (-1, None),
            (-4, None),
            (-4, 2),
            (-16, None),
            (-100, None),
            (-100, 3),
        ],
    )
    def test_get_range(self, store: Store, start: int, length: int | None) -> None:
        value = b"0123456789abcdef"
        store.set("k", value)
        begin = max(len(value) + start, 0) if start < 0 else start
        expected = value[begin:] if length is None else value[begin : begin + length]
        assert store.get_range("k", start, length) == expected

    def test_get_range_missing(self, store: Store) -> None:
        assert store.get_range("missing", 0, 4) is None
        assert store.get_range("missing", -4) is None

    def test_get_many(self, store: Store) -> None:
        self.fill(store, {"a": b"1", "b/c": b"2", "d": b""})
        assert store.get_many(["d", "missing", "b/c", "a", "a"]) == [b"", None, b"2", b"1", b"1"]
        assert store.get_many([]) == []

    def test_set_many_mapping(self, store: Store) -> None:
        store.set_many(TREE)
        assert sorted(store.list()) == sorted(TREE)
        assert store.get_many(list(TREE)) == list(TREE.values())

    def test_set_many_pairs(self, store: Store) -> None:
        store.set_many((f"c/{i}", bytes([i])) for i in range(10))
        assert [store.get(f"c/{i}") for i in range(10)] == [bytes([i]) for i in range(10)]

    def test_set_many_invalid_key_writes_nothing(self, store: Store) -> None:
        with pytest.raises(InvalidKeyError):
            store.set_many({"good": b"1", "../bad": b"2"})
        assert list(store.list()) == []

    # --- delete -------------------------------------------------------------------------
    def test_delete(self, store: Store) -> None:
        if not self.supports_delete:
            # An append-only store refuses, names the key, and keeps the value.
            store.set("k", b"v")
            with pytest.raises((NotImplementedError, PermissionError), match="k"):
                store.delete("k")
            with pytest.raises((NotImplementedError, PermissionError)):
                store.delete_prefix("")
            assert store.get("k") == b"v"
            return
        self.fill(store, {"a/b": b"1", "a/c": b"2"})
        store.delete("a/b")
        assert store.get("a/b") is None
        assert sorted(store.list()) == ["a/c"]
        store.delete("a/c")
        assert list(store.list()) == []
        assert store.list_dir("") == ([], [])

    def test_delete_missing(self, store: Store) -> None:
        store.delete("missing")
        store.delete("missing/deeper")
        store.set("k", b"v")
        store.delete("k/child")
        assert store.get("k") == b"v"

    def test_delete_prefix(self, store: Store) -> None:
        self.fill(store, TREE)
        if not self.supports_delete:
            with pytest.raises((NotImplementedError, PermissionError), match="a/b/"):
                store.delete_prefix("a/b/")
            store.delete_prefix("nothing/")  # nothing matches: not an error
            assert sorted(store.list()) == sorted(TREE)
            return
        store.delete_prefix("a/b/")
        assert sorted(store.list()) == sorted(k for k in TREE if not k.startswith("a/b/"))
        store.delete_prefix("a/")
        assert sorted(store.list()) == sorted(k for k in TREE if not k.startswith("a/"))
        assert store.get("ab") == TREE["ab"]
        store.delete_prefix("missing/")
        store.delete_prefix("")
        assert list(store.list()) == []

    # --- listing ------------------------------------------------------------------------
    def test_list(self, store: Store) -> None:
        self.fill(store, TREE)
        keys = list(store.list())
        assert len(keys) == len(set(keys))
        assert sorted(keys) == sorted(TREE)

    def test_list_prefix(self, store: Store) -> None:
        self.fill(store, TREE)
        assert sorted(store.list_prefix("")) == sorted(TREE)
        assert sorted(store.list_prefix("a/")) == sorted(k for k in TREE if k.startswith("a/"))
        assert sorted(store.list_prefix("a/b/")) == ["a/b/c", "a/b/d/e"]
        assert sorted(store.list_prefix("x/c/0/")) == ["x/c/0/0"]
        assert list(store.list_prefix("missing/")) == []

    def test_list_dir(self, store: Store) -> None:
        self.fill(store, TREE)
        assert store.list_dir("") == ([".zattrs", ".zgroup", "0.0", "ab", "zarr.json"], ["a", "x"])
        assert store.list_dir("a/") == ([".zarray", "0.0", "0.1"], ["b"])
        assert store.list_dir("a/b/") == (["c"], ["d"])
        assert store.list_dir("a/b/d/") == (["e"], [])
        assert store.list_dir("x/") == ([], ["c"])
        assert store.list_dir("missing/") == ([], [])

    def test_list_dir_sorted(self, store: Store) -> None:
        names = ["10", "2", "b", "A", ".z", "1.0", "0.0"]
        for name in reversed(names):
            store.set(f"g/{name}", b"")
            store.set(f"g/d{name}/0", b"")
        keys, prefixes = store.list_dir("g/")
        assert keys == sorted(names)
        assert prefixes == sorted(f"d{name}" for name in names)

    # --- invalid keys -------------------------------------------------------------------
    @pytest.mark.parametrize("key", INVALID_KEYS)
    def test_invalid_key_get(self, store: Store, key: str) -> None:
        with pytest.raises(InvalidKeyError):
            store.get(key)
        with pytest.raises(InvalidKeyError):
            store.get_range(key, 0, 1)
        with pytest.raises(InvalidKeyError):
            store.get_many(["fine", key])

    @pytest.mark.parametrize("key", INVALID_KEYS)
    def test_invalid_key_set(self, store: Store, key: str) -> None:
        with pytest.raises(InvalidKeyError):
            store.set(key, b"value")
        with pytest.raises(InvalidKeyError):
            store.set_many([(key, b"value")])
        assert list(store.list()) == []
        assert store.list_dir("") == ([], [])

    @pytest.mark.parametrize("key", INVALID_KEYS)
    def test_invalid_key_delete(self, store: Store, key: str) -> None:
        store.set("keep", b"v")
        with pytest.raises(InvalidKeyError):
            store.delete(key)
        assert list(store.list()) == ["keep"]

    @pytest.mark.parametrize("prefix", INVALID_PREFIXES)
    def test_invalid_prefix(self, store: Store, prefix: str) -> None:
        store.set("keep", b"v")
        with pytest.raises(InvalidKeyError):
            list(store.list_prefix(prefix))
        with pytest.raises(InvalidKeyError):
            store.list_dir(prefix)
        with pytest.raises(InvalidKeyError):
            store.delete_prefix(prefix)
        assert list(store.list()) == ["keep"]

    # --- create-if-absent and locks ----------------------------------------------------
    def test_set_if_not_exists(self, store: Store) -> None:
        assert store.set_if_not_exists("g/zarr.json", b"first") is True
        assert store.set_if_not_exists("g/zarr.json", b"second") is False
        assert store.get("g/zarr.json") == b"first"
        store.set("g/zarr.json", b"replaced")  # plain set still replaces
        assert store.get("g/zarr.json") == b"replaced"
        with pytest.raises(InvalidKeyError):
            store.set_if_not_exists("../x", b"v")
        with pytest.raises(TypeError):
            store.set_if_not_exists("k", "not bytes")  # type: ignore[arg-type]

    def test_set_if_not_exists_has_one_winner(self, store: Store) -> None:
        self._require("supports_concurrent_writes")
        winners: list[int] = []
        start = threading.Barrier(self.thread_count)

        def work(t: int) -> None:
            start.wait()
            if store.set_if_not_exists("race", b"%d" % t):
                winners.append(t)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(self.thread_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(winners) == 1
        assert store.get("race") == b"%d" % winners[0]

    def test_lock_identity_and_key_lock(self, store: Store) -> None:
        identity = store.lock_identity
        hash(identity)  # usable as a key
        assert store.lock_identity == identity
        with store.key_lock("a/0"):
            pass  # a key lock can be taken, and released
        with store.key_lock("a/0"):
            pass

    def test_read_only_refuses_set_if_not_exists(self, store: Store) -> None:
        self._require("supports_read_only")
        store.set("k", b"v")
        reopened = self.reopen_read_only(store)
        try:
            with pytest.raises(ReadOnlyError):
                reopened.set_if_not_exists("new", b"x")
            assert reopened.get("new") is None
        finally:
            reopened.close()

    # --- read-only ----------------------------------------------------------------------
    def test_persists_when_reopened(self, store: Store) -> None:
        self._require("supports_read_only")
        self.fill(store, TREE)
        reopened = self.reopen_read_only(store)
        try:
            assert sorted(reopened.list()) == sorted(TREE)
            for key, value in TREE.items():
                assert reopened.get(key) == value
            assert reopened.list_dir("a/") == ([".zarray", "0.0", "0.1"], ["b"])
        finally:
            reopened.close()

    def test_read_only_rejects_writes(self, store: Store) -> None:
        self._require("supports_read_only")
        store.set("k", b"v")
        reopened = self.reopen_read_only(store)
        try:
            assert reopened.read_only
            with pytest.raises(ReadOnlyError):
                reopened.set("new", b"x")
            with pytest.raises(ReadOnlyError):
                reopened.set("k", b"changed")
            with pytest.raises(ReadOnlyError):
                reopened.set_many({"new": b"x"})
            with pytest.raises(ReadOnlyError):
                reopened.delete("k")
            with pytest.raises(ReadOnlyError):
                reopened.delete("missing")
            with pytest.raises(ReadOnlyError):
                reopened.delete_prefix("")
            assert list(reopened.list()) == ["k"]
            assert reopened.get("k") == b"v"
            assert reopened.get("new") is None
        finally:
            reopened.close()

    # --- threads ------------------------------------------------------------------------
    def test_concurrent_set(self, store: Store) -> None:
        self._require("supports_concurrent_writes")
        errors: list[BaseException] = []
        start = threading.Barrier(self.thread_count)

        def work(t: int) -> None:
            try:
                start.wait()
                for i in range(self.keys_per_thread):
                    store.set(f"t{t}/{i}", f"{t}:{i}".encode() * (i + 1))
            except BaseException as e:  # surfaced below: a thread's failure fails the test
                errors.append(e)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(self.thread_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        expected = {
            f"t{t}/{i}": f"{t}:{i}".encode() * (i + 1)
            for t in range(self.thread_count)
            for i in range(self.keys_per_thread)
        }
        assert sorted(store.list()) == sorted(expected)
        for key, value in expected.items():
            assert store.get(key) == value

    def test_concurrent_get(self, store: Store) -> None:
        values = {f"c/{i}": bytes([i % 256]) * (1000 + i) for i in range(50)}
        self.fill(store, values)
        errors: list[BaseException] = []

        def work() -> None:
            try:
                for _ in range(5):
                    for key, value in values.items():
                        assert store.get(key) == value
                        assert store.get_range(key, -3) == value[-3:]
            except BaseException as e:  # surfaced below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(self.thread_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
