"""Behaviour tests of groups: open modes, hierarchy rules, paths, attributes and
consolidated metadata (Zarr format 2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import (
    ContainsNodeError,
    GroupNotFoundError,
    InvalidKeyError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarrkit.storage import MemoryStore

# These suites pin format 2; the v3 behaviour has its own tests.
pytestmark = pytest.mark.usefixtures("default_format_2")

METADATA_NAMES = (".zarray", ".zgroup", ".zattrs")


def is_metadata_key(key: str) -> bool:
    return key.rsplit("/", 1)[-1] in METADATA_NAMES


class CountingStore(MemoryStore):
    """A MemoryStore that records every ``set`` and can refuse listing and metadata reads."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sets: list[str] = []
        self.listings: list[str] = []
        self.metadata_gets: list[str] = []
        self.block = False

    def set(self, key: str, value: Any) -> None:
        self.sets.append(key)
        super().set(key, value)

    def get(self, key: str) -> bytes | None:
        if is_metadata_key(key):
            self.metadata_gets.append(key)
            if self.block:
                raise AssertionError(f"metadata read of {key!r} with consolidated metadata")
        return super().get(key)

    def get_many(self, keys: Any) -> list[bytes | None]:
        return [self.get(k) for k in keys]

    def list(self) -> Iterator[str]:
        self.listings.append("list")
        if self.block:
            raise AssertionError("list() with consolidated metadata")
        return super().list()

    def list_prefix(self, prefix: str) -> Iterator[str]:
        self.listings.append(f"list_prefix({prefix!r})")
        if self.block:
            raise AssertionError(f"list_prefix({prefix!r}) with consolidated metadata")
        return super().list_prefix(prefix)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        self.listings.append(f"list_dir({prefix!r})")
        if self.block:
            raise AssertionError(f"list_dir({prefix!r}) with consolidated metadata")
        return super().list_dir(prefix)


def keys_of(store: MemoryStore) -> list[str]:
    return sorted(store.list())


# --- open modes ---------------------------------------------------------------------------


def test_mode_w_creates_root_group() -> None:
    store = MemoryStore()
    g = zk.open_group(store, mode="w")
    assert isinstance(g, zk.Group)
    assert keys_of(store) == [".zgroup"]
    assert json.loads(store.get(".zgroup")) == {"zarr_format": 2}
    assert g.path == "" and g.name == "/" and g.read_only is False


def test_mode_w_replaces_existing_content() -> None:
    store = MemoryStore()
    root = zk.group(store)
    root.create_array("x", shape=(2,), dtype="u1")[...] = 1
    root.attrs["old"] = True
    g = zk.open_group(store, mode="w")
    assert keys_of(store) == [".zgroup"]
    assert len(g) == 0 and dict(g.attrs) == {}


def test_mode_w_at_a_path_replaces_only_that_node() -> None:
    store = MemoryStore()
    root = zk.group(store)
    root.create_array("keep", shape=(2,), chunks=(1,), dtype="u1")[...] = 1
    root.create_array("sub/x", shape=(2,), chunks=(1,), dtype="u1")[...] = 1
    root.create_array("sub2/y", shape=(1,), dtype="u1")[...] = 1
    zk.open_group(store, mode="w", path="sub")
    assert keys_of(store) == [".zgroup", "keep/.zarray", "keep/0", "keep/1", "sub/.zgroup",
                              "sub2/.zgroup", "sub2/y/.zarray", "sub2/y/0"]


def test_mode_w_minus() -> None:
    store = MemoryStore()
    g = zk.open_group(store, mode="w-", path="new")
    assert g.path == "new"
    assert keys_of(store) == [".zgroup", "new/.zgroup"]
    with pytest.raises(ContainsNodeError) as info:
        zk.open_group(store, mode="w-", path="new")
    assert isinstance(info.value, FileExistsError)
    assert "new" in str(info.value)
    zk.group(store).create_array("arr", shape=(1,), dtype="u1")
    before = dict(store._data)
    with pytest.raises(ContainsNodeError):
        zk.open_group(store, mode="w-", path="arr")
    with pytest.raises(ContainsNodeError):
        zk.open_group(store, mode="w-")  # the root group exists
    assert dict(store._data) == before


def test_mode_a_opens_existing_and_creates_missing() -> None:
    store = MemoryStore()
    g = zk.open_group(store, mode="a", path="p/q")
    assert keys_of(store) == [".zgroup", "p/.zgroup", "p/q/.zgroup"]
    g.attrs["k"] = 1
    g.create_group("child")
    again = zk.open_group(store, mode="a", path="p/q")
    assert dict(again.attrs) == {"k": 1}
    assert list(again) == ["child"]
    zk.group(store).create_array("arr", shape=(1,), dtype="u1")
    with pytest.raises(ContainsNodeError):
        zk.open_group(store, mode="a", path="arr")


def test_mode_r() -> None:
    store = MemoryStore()
    with pytest.raises(NodeNotFoundError) as info:
        zk.open_group(store, mode="r")
    assert isinstance(info.value, KeyError)
    with pytest.raises(KeyError):
        zk.open_group(store, mode="r", path="missing")
    root = zk.group(store)
    root.create_group("sub", attributes={"a": 1})
    root.create_array("arr", shape=(2,), dtype="i4")
    g = zk.open_group(store, mode="r", path="sub")
    assert g.read_only is True
    assert dict(g.attrs) == {"a": 1}
    with pytest.raises(GroupNotFoundError):
        zk.open_group(store, mode="r", path="arr")
    before = dict(store._data)
    ro = zk.open_group(store, mode="r")
    with pytest.raises(ReadOnlyError):
        ro.create_group("x")
    with pytest.raises(ReadOnlyError):
        ro["arr"][...] = 1
    with pytest.raises(ReadOnlyError):
        ro.attrs["x"] = 1
    assert dict(store._data) == before


def test_mode_r_plus() -> None:
    store = MemoryStore()
    with pytest.raises(NodeNotFoundError):
        zk.open_group(store, mode="r+")
    assert keys_of(store) == []
    zk.group(store)
    g = zk.open_group(store, mode="r+")
    assert g.read_only is False
    g.create_array("x", shape=(2,), dtype="u1")[...] = 3
    assert zk.open_group(store, mode="r")["x"][...].tolist() == [3, 3]


def test_invalid_mode() -> None:
    with pytest.raises(ValueError):
        zk.open_group({}, mode="x")


# --- ancestors and members ------------------------------------------------------------------


def test_creating_a_node_creates_missing_ancestor_groups() -> None:
    store = MemoryStore()
    zk.create_array(store, name="a/b/c/arr", shape=(1,), dtype="u1")
    assert keys_of(store) == [".zgroup", "a/.zgroup", "a/b/.zgroup", "a/b/c/.zgroup",
                              "a/b/c/arr/.zarray"]
    g = zk.group(store)
    g.create_group("x/y/z")
    for key in ("x/.zgroup", "x/y/.zgroup", "x/y/z/.zgroup"):
        assert json.loads(store.get(key)) == {"zarr_format": 2}
    g["x"].create_array("deep/er", shape=(1,), dtype="u1")
    assert store.get("x/deep/.zgroup") is not None
    assert isinstance(g["x/deep"], zk.Group)


@pytest.fixture
def tree_store() -> MemoryStore:
    store = MemoryStore()
    root = zk.group(store, attributes={"title": "root"})
    root.create_array("x", shape=(3,), chunks=(2,), dtype="i4")[...] = [1, 2, 3]
    root.create_array("y", shape=(2, 2), dtype="f8")
    root.create_group("g1", attributes={"n": 1})
    root.create_array("g1/arr", shape=(4,), chunks=(3,), dtype="u2")[...] = [4, 5, 6, 7]
    root.create_group("g2/sub")
    store.set("junk/not-a-node", b"data")  # a directory that is not a node
    store.set("loose-key", b"data")
    store.set("orphan/.zattrs", b"{}")  # attributes without a node document: not a node
    return store


def test_members_are_direct_children(tree_store: MemoryStore) -> None:
    g = zk.open_group(tree_store, mode="r")
    assert list(g) == ["g1", "g2", "x", "y"]
    assert g.keys() == ["g1", "g2", "x", "y"]
    assert len(g) == 4
    members = dict(g.members())
    assert sorted(members) == ["g1", "g2", "x", "y"]
    assert isinstance(members["g1"], zk.Group) and isinstance(members["x"], zk.Array)
    assert [name for name, _ in g.groups()] == ["g1", "g2"]
    assert [name for name, _ in g.arrays()] == ["x", "y"]
    assert all(isinstance(node, zk.Group) for _, node in g.groups())
    assert all(isinstance(node, zk.Array) for _, node in g.arrays())
    assert g.group_keys() == ["g1", "g2"]
    assert g.array_keys() == ["x", "y"]
    deep = dict(g.members(max_depth=None))
    assert sorted(deep) == ["g1", "g1/arr", "g2", "g2/sub", "x", "y"]
    assert deep["g1/arr"].path == "g1/arr"
    assert sorted(dict(g.members(max_depth=1))) == ["g1", "g1/arr", "g2", "g2/sub", "x", "y"]
    assert list(g["g2"]) == ["sub"]
    assert len(g["g2/sub"]) == 0


def test_nested_access_and_contains(tree_store: MemoryStore) -> None:
    g = zk.open_group(tree_store, mode="r")
    arr = g["g1/arr"]
    assert isinstance(arr, zk.Array)
    assert arr.path == "g1/arr" and arr.name == "/g1/arr"
    assert arr[...].tolist() == [4, 5, 6, 7]
    assert g["g1"]["arr"].path == "g1/arr"
    sub = g["g2/sub"]
    assert isinstance(sub, zk.Group) and sub.path == "g2/sub" and sub.basename == "sub"
    assert "g1/arr" in g
    assert "g2/sub" in g
    assert "g1" in g and "x" in g
    assert "g1/missing" not in g
    assert "junk" not in g
    assert "loose-key" not in g
    assert "orphan" not in g
    assert 3 not in g
    with pytest.raises(KeyError):
        g["g1/missing"]
    assert g.get("nothing", "default") == "default"
    assert dict(g["g1"].attrs) == {"n": 1}


def test_delete_removes_everything_below() -> None:
    store = MemoryStore()
    g = zk.group(store)
    g.create_array("a/b/c", shape=(4,), chunks=(2,), dtype="u1")[...] = 1
    g.create_group("a/d", attributes={"x": 1})
    g.create_array("ab/c", shape=(1,), dtype="u1")[...] = 2  # shares a prefix with "a"
    g.create_array("a2", shape=(1,), dtype="u1")
    del g["a"]
    assert keys_of(store) == [".zgroup", "a2/.zarray", "ab/.zgroup", "ab/c/.zarray", "ab/c/0"]
    assert "a" not in g
    assert list(g) == ["a2", "ab"]
    with pytest.raises(NodeNotFoundError):
        del g["a"]
    del g["ab/c"]
    assert keys_of(store) == [".zgroup", "a2/.zarray", "ab/.zgroup"]
    del g["a2"]
    assert keys_of(store) == [".zgroup", "ab/.zgroup"]


def test_delete_on_directory_store(tmp_path: Any) -> None:
    root = tmp_path / "h.zarr"
    g = zk.open_group(str(root), mode="w")
    g.create_array("a/b/c", shape=(4,), chunks=(2,), dtype="u1")[...] = 1
    g.create_array("ab", shape=(2,), chunks=(2,), dtype="u1")[...] = 2
    del g["a"]
    assert not (root / "a").exists()
    assert (root / "ab" / "0").is_file()
    assert list(zk.open_group(str(root), mode="r")) == ["ab"]


def test_read_modes_on_a_missing_directory_create_nothing(tmp_path: Any) -> None:
    for mode in ("r", "r+"):
        with pytest.raises(NodeNotFoundError):
            zk.open_group(str(tmp_path / "nope"), mode=mode)
    assert list(tmp_path.iterdir()) == []


def test_open_dispatches_on_node_kind() -> None:
    store = MemoryStore()
    zk.group(store).create_array("a", shape=(2,), dtype="u1")
    assert isinstance(zk.open(store, mode="r"), zk.Group)
    assert isinstance(zk.open(store, mode="r", path="a"), zk.Array)
    with pytest.raises(NodeNotFoundError):
        zk.open(store, mode="r", path="b")


# --- a name holds an array or a group, not both --------------------------------------------


def test_array_and_group_cannot_share_a_name() -> None:
    store = MemoryStore()
    g = zk.group(store)
    g.create_array("arr", shape=(2,), chunks=(1,), dtype="u1")[...] = 5
    g.create_group("grp")
    before = dict(store._data)
    with pytest.raises(ContainsNodeError) as info:
        g.create_group("arr")
    assert "arr" in str(info.value)
    with pytest.raises(ContainsNodeError):
        g.create_array("arr/inner", shape=(1,), dtype="u1")
    with pytest.raises(ContainsNodeError):
        g.create_group("arr/inner/deeper")
    with pytest.raises(ContainsNodeError):
        g.require_group("arr")
    with pytest.raises(ContainsNodeError):
        g.create_array("grp", shape=(1,), dtype="u1")
    with pytest.raises(ContainsNodeError):
        g.require_array("grp", shape=(1,), dtype="u1")
    with pytest.raises(ContainsNodeError):
        g.create_array("arr", shape=(1,), dtype="u1")
    with pytest.raises(ContainsNodeError):
        zk.create_array(store, name="arr/x", shape=(1,), dtype="u1")
    assert dict(store._data) == before


def test_overwrite_replaces_node() -> None:
    store = MemoryStore()
    g = zk.group(store)
    g.create_array("n", shape=(4,), chunks=(1,), dtype="u1")[...] = 5
    g.create_group("n", overwrite=True)
    assert keys_of(store) == [".zgroup", "n/.zgroup"]
    g.create_array("n/inner", shape=(1,), dtype="u1")
    a = g.create_array("n", shape=(2,), dtype="i8", overwrite=True)
    assert keys_of(store) == [".zgroup", "n/.zarray"]
    assert a[...].tolist() == [0, 0]


def test_require_group_and_require_array() -> None:
    store = MemoryStore()
    g = zk.group(store)
    sub = g.require_group("s/t")
    assert sub.path == "s/t"
    sub.attrs["k"] = "v"
    again = g.require_group("s/t")
    assert again.path == "s/t" and dict(again.attrs) == {"k": "v"}
    a = g.require_array("s/arr", shape=(3,), chunks=(2,), dtype="i2", fill_value=1)
    a[0] = 9
    b = g.require_array("s/arr", shape=(3,), dtype="i2")
    assert b.path == "s/arr"
    assert b[...].tolist() == [9, 1, 1]
    before = dict(store._data)
    with pytest.raises(TypeError):
        g.require_array("s/arr", shape=(4,), dtype="i2")
    with pytest.raises(TypeError):  # zarr-python's check: exact, or a safe cast from i2
        g.require_array("s/arr", shape=(3,), dtype="f4", exact=True)
    with pytest.raises(TypeError):
        g.require_array("s/arr", shape=(3,), dtype="i1")
    assert g.require_array("s/arr", shape=(3,), dtype="f4") == b
    assert dict(store._data) == before


# --- paths --------------------------------------------------------------------------------


def test_path_normalisation() -> None:
    store = MemoryStore()
    g = zk.group(store)
    sub = g.create_group("\\a//b/")
    assert sub.path == "a/b"
    assert sub.name == "/a/b"
    assert keys_of(store) == [".zgroup", "a/.zgroup", "a/b/.zgroup"]
    assert g["/a/b/"].path == "a/b"
    assert g["a\\b"].path == "a/b"
    assert "//a///b" in g
    assert zk.open_group(store, mode="r", path="/a//b/").path == "a/b"
    arr = zk.create_array(store, name="\\\\x\\y//", shape=(1,), dtype="u1")
    assert arr.path == "x/y"
    assert store.get("x/y/.zarray") is not None
    assert g.create_group("...").path == "..."  # only '.' and '..' segments are reserved
    assert g.create_group("a/.b").path == "a/.b"


@pytest.mark.parametrize("bad", ["a/../b", "..", "./a", "a/.", "a/./b", "a\\..\\b", "x/.."])
def test_dot_segments_are_invalid(bad: str) -> None:
    store = MemoryStore()
    g = zk.group(store)
    g.create_group("a/b")
    before = dict(store._data)
    with pytest.raises(InvalidKeyError) as info:
        g.create_group(bad)
    assert isinstance(info.value, ValueError)
    assert repr(bad) in str(info.value)
    with pytest.raises(InvalidKeyError):
        g.create_array(bad, shape=(1,), dtype="u1")
    with pytest.raises(InvalidKeyError):
        g[bad]
    with pytest.raises(InvalidKeyError):
        zk.open_group(store, mode="a", path=bad)
    with pytest.raises(InvalidKeyError):
        zk.create_array(store, name=bad, shape=(1,), dtype="u1")
    assert dict(store._data) == before


# --- tree -------------------------------------------------------------------------------------


def test_tree_text() -> None:
    store = MemoryStore()
    g = zk.group(store)
    g.create_array("a/x", shape=(2,), dtype="u1")
    g.create_group("a/c")
    g.create_group("b")
    g.create_array("z", shape=(3, 4), dtype="f8")
    assert g.tree() == "\n".join([
        "/",
        "├── a",
        "│   ├── c",
        "│   └── x (2,) uint8",
        "├── b",
        "└── z (3, 4) float64",
    ])
    assert g["a"].tree() == "\n".join([
        "/a",
        "├── c",
        "└── x (2,) uint8",
    ])
    assert zk.group({}).tree() == "/"


# --- attributes ---------------------------------------------------------------------------


def test_attributes_write_through() -> None:
    store = MemoryStore()
    g1 = zk.open_group(store, mode="a")
    g2 = zk.open_group(store, mode="a")
    g1.attrs["k"] = [1, 2]
    assert json.loads(store.get(".zattrs")) == {"k": [1, 2]}
    assert dict(g2.attrs) == {"k": [1, 2]}
    g2.attrs["m"] = {"nested": True}
    assert json.loads(store.get(".zattrs")) == {"k": [1, 2], "m": {"nested": True}}
    g3 = zk.open_group(store, mode="r")
    assert dict(g3.attrs) == {"k": [1, 2], "m": {"nested": True}}
    del g2.attrs["k"]
    assert dict(zk.open_group(store, mode="r").attrs) == {"m": {"nested": True}}
    a = g1.create_array("arr", shape=(1,), dtype="u1")
    a.attrs["units"] = "m"
    assert json.loads(store.get("arr/.zattrs")) == {"units": "m"}
    assert dict(zk.open_array(store, path="arr", mode="r").attrs) == {"units": "m"}
    assert dict(g1["arr"].attrs) == {"units": "m"}


def test_attrs_update_is_one_store_write() -> None:
    store = CountingStore()
    g = zk.group(store)
    a = g.create_array("arr", shape=(1,), dtype="u1")
    store.sets.clear()
    g.attrs.update({"a": 1, "b": 2, "c": 3})
    assert store.sets == [".zattrs"]
    store.sets.clear()
    a.attrs.update(x=1, y=[1, 2])
    assert store.sets == ["arr/.zattrs"]
    store.sets.clear()
    g.update_attributes({"d": 4, "e": 5})
    assert store.sets == [".zattrs"]
    assert dict(zk.open_group(store, mode="r").attrs) == {"a": 1, "b": 2, "c": 3, "d": 4,
                                                           "e": 5}
    assert dict(zk.open_array(store, path="arr", mode="r").attrs) == {"x": 1, "y": [1, 2]}


def test_missing_zattrs_means_empty() -> None:
    store = MemoryStore({".zgroup": b'{"zarr_format": 2}',
                         "a/.zarray": json.dumps({
                             "zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<i4",
                             "compressor": None, "fill_value": 0, "order": "C",
                             "filters": None}).encode()})
    g = zk.open_group(store, mode="r")
    assert dict(g.attrs) == {} and len(g.attrs) == 0
    assert dict(g["a"].attrs) == {}
    created = MemoryStore()
    zk.group(created).create_group("s")
    assert created.get("s/.zattrs") is None
    assert dict(zk.open_group(created, mode="r", path="s").attrs) == {}


# --- consolidated metadata ------------------------------------------------------------------


def build_consolidated_hierarchy(store: MemoryStore) -> dict[str, np.ndarray[Any, Any]]:
    root = zk.group(store, attributes={"title": "t", "nested": {"a": [1, 2]}})
    values = {
        "x": np.arange(10, dtype="i4"),
        "g1/arr": np.linspace(0, 1, 12).reshape(3, 4),
        "g2/sub/deep": np.array([b"ab", b"c"], dtype="S2"),
    }
    chunks = {"x": (3,), "g1/arr": (2, 3), "g2/sub/deep": (1,)}
    for name, data in values.items():
        a = root.create_array(name, shape=data.shape, chunks=chunks[name], dtype=data.dtype,
                              attributes={"name": name})
        a[...] = data
    root["g1"].attrs["kind"] = "group"
    root.create_array("nanfill", shape=(3,), chunks=(2,), dtype="f4", fill_value=float("nan"))
    return values


def test_consolidate_writes_zmetadata_in_zarr_python_format() -> None:
    store = MemoryStore()
    build_consolidated_hierarchy(store)
    metadata_keys = sorted(k for k in store.list() if is_metadata_key(k))
    g = zk.consolidate_metadata(store)
    assert isinstance(g, zk.Group)
    document = json.loads(store.get(".zmetadata"))
    assert sorted(document) == ["metadata", "zarr_consolidated_format"]
    assert document["zarr_consolidated_format"] == 1
    assert sorted(document["metadata"]) == metadata_keys
    for key in metadata_keys:
        assert document["metadata"][key] == json.loads(store.get(key)), key
    assert document["metadata"]["nanfill/.zarray"]["fill_value"] == "NaN"


def test_open_consolidated_needs_no_listing_or_metadata_reads() -> None:
    store = CountingStore()
    values = build_consolidated_hierarchy(store)
    plain = zk.open_group(store, mode="r", consolidated=False)
    expected_tree = plain.tree()
    expected_attrs = {name: dict(node.attrs) for name, node in plain.members(max_depth=None)}
    zk.consolidate_metadata(store)
    store.block = True
    store.listings.clear()
    store.metadata_gets.clear()
    g = zk.open_group(store, mode="r", consolidated=True)
    assert g.consolidated
    assert g.tree() == expected_tree
    assert dict(g.attrs) == {"title": "t", "nested": {"a": [1, 2]}}
    members = dict(g.members(max_depth=None))
    assert sorted(members) == sorted(expected_attrs)
    for name, node in members.items():
        assert dict(node.attrs) == expected_attrs[name], name
    for name, data in values.items():
        arr = g[name]
        assert isinstance(arr, zk.Array)
        np.testing.assert_array_equal(arr[...], data)
        assert arr.dtype == data.dtype
    assert np.isnan(g["nanfill"][...]).all()
    assert "g2/sub/deep" in g and "g2/missing" not in g
    assert list(g) == ["g1", "g2", "nanfill", "x"]
    assert store.listings == []
    assert store.metadata_gets == []


def test_open_read_only_uses_consolidated_metadata_when_present() -> None:
    store = CountingStore()
    build_consolidated_hierarchy(store)
    zk.consolidate_metadata(store)
    store.block = True
    store.listings.clear()
    store.metadata_gets.clear()
    g = zk.open_group(store, mode="r")
    assert g.consolidated
    assert sorted(dict(g.members(max_depth=None))) == [
        "g1", "g1/arr", "g2", "g2/sub", "g2/sub/deep", "nanfill", "x"]
    assert store.listings == [] and store.metadata_gets == []


def test_open_consolidated_without_zmetadata_fails() -> None:
    store = MemoryStore()
    zk.group(store)
    with pytest.raises(NodeNotFoundError) as info:
        zk.open_group(store, mode="r", consolidated=True)
    assert ".zmetadata" in str(info.value)


def test_consolidated_subgroup() -> None:
    store = CountingStore()
    build_consolidated_hierarchy(store)
    zk.consolidate_metadata(store, path="g2")
    document = json.loads(store.get("g2/.zmetadata"))
    assert sorted(document["metadata"]) == [".zgroup", "sub/.zgroup", "sub/deep/.zarray",
                                            "sub/deep/.zattrs"]
    store.block = True
    store.listings.clear()
    store.metadata_gets.clear()
    g = zk.open_group(store, mode="r", path="g2", consolidated=True)
    assert g["sub/deep"][...].tolist() == [b"ab", b"c"]
    assert store.listings == [] and store.metadata_gets == []


# --- metadata JSON formatting ---------------------------------------------------------------


def _strict_json(raw: bytes) -> Any:
    def reject(name: str) -> Any:
        raise AssertionError(f"non-JSON constant {name} in metadata")

    return json.loads(raw, parse_constant=reject)


def test_metadata_json_is_written_as_zarr_python_writes_it_and_nan_free() -> None:
    """Keys in the order given, 2-space indents; ``.zmetadata`` on one line."""
    store = MemoryStore()
    g = zk.group(store, attributes={"z": 1, "a": {"y": 2, "b": 3}})
    g.create_array("nan", shape=(2,), dtype="f8", fill_value=float("nan"))
    g.create_array("inf", shape=(2,), dtype="f4", fill_value=float("-inf"))
    g.create_array("cplx", shape=(2,), dtype="c16", fill_value=complex(float("nan"), 1.5))
    zk.consolidate_metadata(store)
    for key in sorted(store.list()):
        if not key.rsplit("/", 1)[-1].startswith(".z"):
            continue
        raw = store.get(key)
        document = _strict_json(raw)
        indent = None if key.endswith(".zmetadata") else 2
        assert raw == json.dumps(document, indent=indent).encode(), key
    assert list(_strict_json(store.get(".zattrs"))) == ["z", "a"]
    assert _strict_json(store.get("nan/.zarray"))["fill_value"] == "NaN"
    assert _strict_json(store.get("inf/.zarray"))["fill_value"] == "-Infinity"
    assert _strict_json(store.get("cplx/.zarray"))["fill_value"] == ["NaN", 1.5]
    fresh = zk.open_group(store, mode="r", consolidated=False)
    assert np.isnan(fresh["nan"].fill_value)
    assert fresh["inf"].fill_value == -np.inf
    assert fresh["cplx"].fill_value.imag == 1.5


def test_nan_attribute_never_reaches_the_store() -> None:
    store = MemoryStore()
    g = zk.group(store, attributes={"ok": 1})
    before = dict(store._data)
    try:
        g.attrs["bad"] = float("nan")
    except ValueError:
        assert dict(store._data) == before
        assert dict(zk.open_group(store, mode="r").attrs) == {"ok": 1}
    _strict_json(store.get(".zattrs"))


def test_open_group_in_mode_a_honours_consolidated_and_read_only_stores() -> None:
    from zarrkit.storage import MemoryStore

    data: dict[str, bytes] = {}
    root = zk.group(data, zarr_format=3)
    root.create_array("a", shape=(2,), dtype="u1")
    zk.consolidate_metadata(data)
    opened = zk.open_group(data, consolidated=True)  # mode "a"
    assert opened.consolidated and list(opened) == ["a"]
    read_only = zk.open_group(MemoryStore(data, read_only=True))  # mode "a"
    assert read_only.read_only and read_only.consolidated
    with pytest.raises(zk.errors.ReadOnlyError):
        read_only.create_group("new")
