"""Links (hdmf-zarr 0.13's ``zarr_link`` attribute in Zarr v2 files, 0.14's ``_LINKS`` in
v3 ones): reading the fixtures written by hdmf-zarr, writing links, following them (soft,
external, through paths), errors and tree output. Files written by hdmf-zarr 0.14 itself
are checked in tests/test_hdmf_v3_peer.py."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from shared_fixtures import fixtures_dir

import zarrkit as zk
from zarrkit.errors import (
    ContainsNodeError,
    LinkError,
    MetadataError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarrkit.hierarchy.links import (
    Link,
    convention_for,
    open_target,
    parse_links,
    relative_source,
    store_location,
)
from zarrkit.storage import DirectoryStore, MemoryStore, ZipStore

FIXTURE_FILES = ("ex.nwb.zarr", "exjson.nwb.zarr")
# The object_id attributes of the fixtures' link target and root group, as stored.
DEVICE_OBJECT_IDS = {
    "ex.nwb.zarr": "1e1dc4bd-a8b9-43d8-88dd-3a6125020ab9",
    "exjson.nwb.zarr": "87c5e6ea-57ca-4760-a17a-5cd694c9b9f8",
}
ROOT_OBJECT_IDS = {
    "ex.nwb.zarr": "d47b2618-1632-4031-87d3-9123b44fe19e",
    "exjson.nwb.zarr": "d50ee96c-0efc-437e-ad94-01cb542399b0",
}


def hdmf_dir() -> Path:
    return fixtures_dir() / "hdmf"


def expected_links() -> dict[str, Any]:
    return json.loads((hdmf_dir() / "expected.json").read_text())


def zattrs(path: Path) -> dict[str, Any]:
    return json.loads((path / ".zattrs").read_text())


class CountingStore(MemoryStore):
    """A MemoryStore recording every key read."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads: list[str] = []

    def get(self, key: str) -> bytes | None:
        self.reads.append(key)
        return super().get(key)

    def get_many(self, keys: Any) -> list[bytes | None]:
        return [self.get(k) for k in keys]


def nwb_like(store: Any, zarr_format: int) -> zk.Group:
    """A small hierarchy shaped like the fixtures' link: eg/device -> /general/devices/dev."""
    root = zk.group(store, zarr_format=zarr_format, attributes={"object_id": "root-id"})
    root.create_group("general/devices/dev", attributes={"object_id": "dev-id"})
    root["general/devices/dev"].create_array(  # type: ignore[union-attr]
        "serial", shape=(3,), dtype="i4", data=np.array([7, 8, 9], dtype="i4"))
    root.create_group("general/extracellular_ephys/eg", attributes={"location": "l"})
    return root


# --- the hdmf-zarr fixtures ---------------------------------------------------------------
@pytest.mark.parametrize("name", FIXTURE_FILES)
@pytest.mark.parametrize("consolidated", [True, False])
def test_fixture_links_resolve(name: str, consolidated: bool) -> None:
    expected = expected_links()[name]["links"]
    assert expected  # the fixtures do hold links
    root = zk.open_group(hdmf_dir() / name, mode="r", consolidated=consolidated)
    assert root.consolidated is consolidated
    for group_path, entries in expected.items():
        group = root[group_path]
        assert isinstance(group, zk.Group)
        # The attribute parses to exactly the stored entries, and writes back the same JSON.
        assert group.links() == {e["name"]: Link(e["name"], e["source"], e["path"])
                                 for e in entries}
        assert [link.to_json() for link in group.links().values()] == entries
        assert [link.to_json() for link in group.links().values()] == \
            zattrs(hdmf_dir() / name / group_path)["zarr_link"]
        for entry in entries:
            target = root[f"{group_path}/{entry['name']}"]
            assert target.name == entry["path"]
            assert target == root[entry["path"]]
            assert isinstance(target, zk.Group)
            stored = zattrs(hdmf_dir() / name / entry["path"].lstrip("/"))
            assert target.attrs["object_id"] == stored["object_id"] == DEVICE_OBJECT_IDS[name]
            assert dict(target.attrs) == stored
            assert group[entry["name"]] == target
            assert open_target(group, entry["source"], entry["path"]) == target
            assert entry["name"] in group
            assert group.get(entry["name"]) == target
            # Links are not members.
            assert entry["name"] not in group.keys()
            assert entry["name"] not in dict(group.members())


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_fixture_link_read_without_store_reads_when_consolidated(name: str) -> None:
    class Counting(DirectoryStore):
        reads: list[str] = []

        def get(self, key: str) -> bytes | None:
            self.reads.append(key)
            return super().get(key)

        def get_many(self, keys: Any) -> list[bytes | None]:
            return [self.get(k) for k in keys]

    store = Counting(hdmf_dir() / name, read_only=True)
    root = zk.open_group(store, mode="r", consolidated=True)
    store.reads.clear()
    device = root["general/extracellular_ephys/eg/device"]
    assert device.name == "/general/devices/dev"
    assert device.attrs["object_id"] == DEVICE_OBJECT_IDS[name]
    assert store.reads == []


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_fixture_tree_shows_link(name: str) -> None:
    root = zk.open_group(hdmf_dir() / name, mode="r")
    eg = root["general/extracellular_ephys/eg"]
    assert isinstance(eg, zk.Group)
    assert eg.tree() == "/general/extracellular_ephys/eg\n└── device -> /general/devices/dev"


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_link_added_to_copied_fixture(tmp_path: Path, name: str) -> None:
    copy = tmp_path / name
    shutil.copytree(hdmf_dir() / name, copy)
    root = zk.open_group(copy, mode="r+")
    eg = root["general/extracellular_ephys/eg"]
    assert isinstance(eg, zk.Group)
    link = eg.create_link("device2", root["general/devices/dev"])
    expected_entry = {
        "name": "device2",
        "source": ".",
        "path": "/general/devices/dev",
        "object_id": DEVICE_OBJECT_IDS[name],
        "source_object_id": ROOT_OBJECT_IDS[name],
    }
    assert link.to_json() == expected_entry
    stored = zattrs(copy / "general/extracellular_ephys/eg")
    assert stored["zarr_link"] == [
        {"name": "device", "path": "/general/devices/dev", "source": "."}, expected_entry]
    # The other attributes are untouched.
    original = zattrs(hdmf_dir() / name / "general/extracellular_ephys/eg")
    assert {k: v for k, v in stored.items() if k != "zarr_link"} == \
        {k: v for k, v in original.items() if k != "zarr_link"}
    zk.consolidate_metadata(copy)  # as hdmf-zarr does after writing
    again = zk.open_group(copy, mode="r")
    assert again.consolidated
    assert again["general/extracellular_ephys/eg/device2"].attrs["object_id"] == \
        DEVICE_OBJECT_IDS[name]


# --- writing links ------------------------------------------------------------------------
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_create_link_writes_the_seed_json(tmp_path: Path, zarr_format: int) -> None:
    root = nwb_like(tmp_path / "f.zarr", zarr_format)
    eg = root["general/extracellular_ephys/eg"]
    assert isinstance(eg, zk.Group)
    link = eg.create_link("device", root["general/devices/dev"])
    group_dir = tmp_path / "f.zarr/general/extracellular_ephys/eg"
    if zarr_format == 2:  # hdmf-zarr 0.13's zarr_link, with the object ids
        assert link == Link("device", ".", "/general/devices/dev", "dev-id", "root-id")
        entry = {"name": "device", "source": ".", "path": "/general/devices/dev",
                 "object_id": "dev-id", "source_object_id": "root-id"}
        assert json.loads((group_dir / ".zattrs").read_text()) == {
            "location": "l", "zarr_link": [entry]}
    else:  # hdmf-zarr 0.14's _LINKS: its three keys, in its order
        assert link == Link("device", ".", "/general/devices/dev")
        document = json.loads((group_dir / "zarr.json").read_text())
        assert document == {
            "zarr_format": 3, "node_type": "group",
            "attributes": {"location": "l", "_LINKS": [
                {"source": ".", "path": "/general/devices/dev", "name": "device"}]}}
        assert list(document["attributes"]["_LINKS"][0]) == ["source", "path", "name"]
    reopened = zk.open_group(tmp_path / "f.zarr", mode="r")
    device = reopened["general/extracellular_ephys/eg/device"]
    assert device.name == "/general/devices/dev"
    assert device.attrs["object_id"] == "dev-id"
    assert reopened["general/extracellular_ephys/eg/device/serial"][...].tolist() == [7, 8, 9]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_create_link_to_a_path_and_to_an_array(zarr_format: int) -> None:
    store = MemoryStore()
    root = nwb_like(store, zarr_format)
    eg = root["general/extracellular_ephys/eg"]
    assert isinstance(eg, zk.Group)
    by_path = eg.create_link("device", "general/devices/dev")  # leading "/" optional
    to_array = eg.create_link("serial", root["general/devices/dev/serial"])
    ids = zarr_format == 2  # only hdmf-zarr 0.13's entries record object ids
    assert by_path == Link("device", ".", "/general/devices/dev",
                           *(("dev-id", "root-id") if ids else ()))
    assert to_array == Link("serial", ".", "/general/devices/dev/serial",
                            *((None, "root-id") if ids else ()))
    assert eg.links() == {"device": by_path, "serial": to_array}
    assert root.attrs["object_id"] == "root-id"
    serial = eg["serial"]
    assert isinstance(serial, zk.Array)
    assert serial.name == "/general/devices/dev/serial"
    assert serial[...].tolist() == [7, 8, 9]
    convention = convention_for(zarr_format)
    assert eg.attrs[convention.link_attribute] == [
        by_path.to_json(convention), to_array.to_json(convention)]
    # keys(), members() and len() list real members only.
    assert eg.keys() == [] and list(eg) == [] and len(eg) == 0
    assert list(eg.members()) == []


def test_create_link_refuses_existing_names_and_bad_arguments() -> None:
    root = nwb_like(MemoryStore(), 2)
    general = root["general"]
    assert isinstance(general, zk.Group)
    with pytest.raises(ContainsNodeError, match="already exists"):
        general.create_link("devices", "/general/extracellular_ephys")
    general.create_link("l", "/general/devices")
    with pytest.raises(ContainsNodeError, match="already has a link 'l'"):
        general.create_link("l", "/general/extracellular_ephys")
    with pytest.raises(ValueError, match="source is computed"):
        general.create_link("m", root["general/devices"], source="../x.zarr")
    with pytest.raises(TypeError):
        general.create_link("m", 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        general.create_link("a/b", "/general")
    assert general.attrs["zarr_link"] == [
        {"name": "l", "source": ".", "path": "/general/devices", "source_object_id": "root-id"}]
    read_only = zk.open_group(root.store, mode="r")
    with pytest.raises(ReadOnlyError):
        read_only.create_link("x", "/general")


def test_create_link_keeps_concurrent_links() -> None:
    store = MemoryStore()
    zk.group(store, zarr_format=2).create_group("g")
    handles = [zk.open_group(store, mode="r+", path="g") for _ in range(8)]
    for h in handles:
        assert dict(h.attrs) == {}  # every handle has read (cached) the empty attributes

    def add(i: int) -> None:
        handles[i].create_link(f"l{i}", f"/t{i}")

    threads = [threading.Thread(target=add, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = json.loads(store.get("g/.zattrs") or b"")
    assert sorted(e["name"] for e in stored["zarr_link"]) == [f"l{i}" for i in range(8)]
    # A handle whose cache predates another's link still refuses the name.
    stale = handles[0]
    with pytest.raises(ContainsNodeError):
        stale.create_link("l5", "/elsewhere")


def test_delete_link() -> None:
    root = nwb_like(MemoryStore(), 2)
    root.attrs["keep"] = 1
    root.create_link("a", "/general")
    root.create_link("b", "/general/devices")
    del root["a"]
    assert root.attrs.asdict() == {"object_id": "root-id", "keep": 1, "zarr_link": [
        {"name": "b", "source": ".", "path": "/general/devices",
         "source_object_id": "root-id"}]}
    root.delete_link("b")
    assert root.attrs.asdict() == {"object_id": "root-id", "keep": 1}
    assert "general/devices" in root  # targets stay
    with pytest.raises(NodeNotFoundError):
        del root["b"]
    with pytest.raises(NodeNotFoundError):
        root.delete_link("b")


# --- following links ----------------------------------------------------------------------
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_multi_segment_paths_through_links(zarr_format: int) -> None:
    root = nwb_like(MemoryStore(), zarr_format)
    eg = root["general/extracellular_ephys/eg"]
    assert isinstance(eg, zk.Group)
    eg.create_link("device", "/general/devices/dev")
    root.create_link("eg_alias", "/general/extracellular_ephys/eg")  # a link to a group
    root.create_link("chain", "/eg_alias/device")  # a target path through links
    serial = root["general/extracellular_ephys/eg/device/serial"]
    assert serial.name == "/general/devices/dev/serial"
    assert serial[...].tolist() == [7, 8, 9]
    assert root["eg_alias/device/serial"].name == "/general/devices/dev/serial"
    assert root["chain"].name == "/general/devices/dev"
    assert root["chain/serial"][...].tolist() == [7, 8, 9]
    assert "eg_alias/device/serial" in root
    assert "eg_alias/device/missing" not in root
    with pytest.raises(NodeNotFoundError) as info:
        root["eg_alias/device/missing"]
    assert not isinstance(info.value, LinkError)  # the links are fine; the member is not
    assert str(info.value) == "no array or group at path 'eg_alias/device/missing'"
    with pytest.raises(NodeNotFoundError, match="is an array"):
        root["chain/serial/deeper"]
    # Plain misses keep their message.
    with pytest.raises(NodeNotFoundError) as info:
        root["general/nothing"]
    assert str(info.value) == "no array or group at path 'general/nothing'"
    assert open_target(serial, ".", "/").name == "/"
    assert open_target(serial, ".", "eg_alias/device").name == "/general/devices/dev"


def test_a_real_member_wins_over_a_link() -> None:
    store = MemoryStore()
    root = zk.group(store, zarr_format=2)
    root.create_group("target")
    root.create_link("x", "/target")
    store.set("x/.zgroup", b'{"zarr_format": 2}')  # by another tool, after the link
    assert root["x"].name == "/x"
    assert root.links()["x"].path == "/target"
    assert root.tree() == "/\n├── target\n└── x"


def test_dangling_link_names_the_link_and_target() -> None:
    root = nwb_like(MemoryStore(), 2)
    eg = root["general/extracellular_ephys/eg"]
    assert isinstance(eg, zk.Group)
    link = eg.create_link("device", "/general/devices/gone")
    # No target, so no object_id; the source store is there, with its root's.
    assert link == Link("device", ".", "/general/devices/gone", None, "root-id")
    message = ("dangling link '/general/extracellular_ephys/eg/device' -> "
               "'/general/devices/gone': no array or group at path 'general/devices/gone'")
    with pytest.raises(LinkError) as info:
        root["general/extracellular_ephys/eg/device"]
    assert str(info.value) == message
    with pytest.raises(LinkError) as info:
        eg["device/anything"]
    assert str(info.value) == message
    assert isinstance(info.value, KeyError)
    assert "device" not in eg
    assert eg.get("device", "default") == "default"
    with pytest.raises(LinkError) as info:
        open_target(eg, ".", "/general/devices/gone")
    assert str(info.value) == \
        "no array or group at path '/general/devices/gone' in source '.'"


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_cycles_raise_link_error(zarr_format: int) -> None:
    root = zk.group(MemoryStore(), zarr_format=zarr_format)
    root.create_link("a", "/b")
    root.create_link("b", "/a")
    with pytest.raises(LinkError) as info:
        root["a"]
    assert str(info.value) == "links form a cycle: /a -> /b -> /a"
    with pytest.raises(LinkError) as info:
        root["b/x"]
    assert str(info.value) == "links form a cycle: /b -> /a -> /b"
    assert "a" not in root and root.get("a") is None
    root.create_group("g").create_link("self", "/g/self/deeper")
    with pytest.raises(LinkError) as info:
        root["g/self"]
    assert str(info.value) == "links form a cycle: /g/self -> /g/self"
    with pytest.raises(LinkError) as info:
        open_target(root, ".", "/a")
    assert str(info.value) == "links form a cycle: /a -> /b -> /a"


def test_long_chains_are_followed_up_to_the_limit() -> None:
    root = zk.group(MemoryStore(), zarr_format=2)
    root.create_group("end")
    root.create_link("l0", "/end")
    for i in range(1, 40):
        root.create_link(f"l{i}", f"/l{i - 1}")
    assert root["l39"].name == "/end"
    root.create_link("l40", "/l39")
    with pytest.raises(LinkError, match="more than 40 links"):
        root["l40"]


def test_malformed_zarr_link() -> None:
    store = MemoryStore()
    root = zk.group(store, zarr_format=2)
    root.attrs["zarr_link"] = "not a list"
    with pytest.raises(MetadataError) as info:
        root.links()
    assert str(info.value) == "zarr_link of group '/': zarr_link must be a list of links, " \
        "found str"
    with pytest.raises(MetadataError):
        root["missing"]
    assert root.tree() == "/"
    root.attrs["zarr_link"] = [{"name": "x", "path": 3, "source": "."}]
    with pytest.raises(MetadataError, match="link 'x' has an invalid path 3"):
        root.links()
    with pytest.raises(MetadataError, match="'..' segments"):
        parse_links([{"name": "x", "path": "/a/../b"}])
    # A missing source means ".", extra keys are ignored.
    assert parse_links([{"name": "x", "path": "/a", "other": 1}]) == {
        "x": Link("x", ".", "/a")}


def test_lookups_without_links_read_nothing_more() -> None:
    store = CountingStore()
    root = zk.group(store, zarr_format=2)
    root.create_array("x", shape=(1,), dtype="u1")
    root = zk.open_group(store, mode="r+")
    store.reads.clear()
    assert root["x"].name == "/x"
    assert ".zattrs" not in store.reads  # a hit never looks at links
    store.reads.clear()
    assert "y" not in root
    assert store.reads.count(".zattrs") == 1  # a miss reads the group's attributes once
    store.reads.clear()
    with pytest.raises(NodeNotFoundError):
        root["y"]
    assert ".zattrs" not in store.reads  # ... then they are cached


# --- external links -----------------------------------------------------------------------
def make_other(path: Path, zarr_format: int = 2) -> zk.Group:
    other = zk.group(path, zarr_format=zarr_format, attributes={"object_id": "other-root"})
    other.create_array("data", shape=(2,), dtype="u1", data=np.array([5, 6], dtype="u1"),
                       attributes={"object_id": "data-id"})
    other.create_group("sub/inner", attributes={"object_id": "inner-id"})
    return other


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_external_link_to_sibling_store(tmp_path: Path, zarr_format: int) -> None:
    other = make_other(tmp_path / "other.zarr", zarr_format)
    root = zk.group(tmp_path / "main.zarr", zarr_format=zarr_format,
                    attributes={"object_id": "main-root"})
    link = root.create_link("ext", other["data"])
    group_link = root.create_link("ext_group", other["sub"])
    by_path = root.create_link("by_path", "/sub/inner", source="../other.zarr")
    ids = zarr_format == 2  # only hdmf-zarr 0.13's entries record object ids
    assert link == Link("ext", "../other.zarr", "/data",
                        *(("data-id", "other-root") if ids else ()))
    assert group_link == Link("ext_group", "../other.zarr", "/sub",
                              *((None, "other-root") if ids else ()))
    assert by_path == Link("by_path", "../other.zarr", "/sub/inner",
                           *(("inner-id", "other-root") if ids else ()))
    convention = convention_for(zarr_format)
    assert root.attrs[convention.link_attribute] == [
        link.to_json(convention), group_link.to_json(convention), by_path.to_json(convention)]

    reopened = zk.open_group(tmp_path / "main.zarr", mode="r")
    data = reopened["ext"]
    assert isinstance(data, zk.Array)
    assert data[...].tolist() == [5, 6]
    assert store_location(data.store) == (tmp_path / "other.zarr").absolute()
    assert data.read_only  # opened read-only, as its origin
    with pytest.raises(ReadOnlyError):
        data[...] = 1
    assert reopened["ext_group/inner"].attrs["object_id"] == "inner-id"
    assert reopened["by_path"].name == "/sub/inner"
    assert reopened.tree() == "\n".join([
        "/", "├── by_path -> ../other.zarr:/sub/inner", "├── ext -> ../other.zarr:/data",
        "└── ext_group -> ../other.zarr:/sub"])

    # Links never write: the target is read-only even from a writable origin (issue 28).
    writable = zk.open_group(tmp_path / "main.zarr", mode="r+")
    target = writable["ext"]
    assert target.read_only
    with pytest.raises(ReadOnlyError):
        target[...] = np.array([1, 2], dtype="u1")
    assert other["data"][...].tolist() == [5, 6]


def test_external_sources_in_nested_directories(tmp_path: Path) -> None:
    make_other(tmp_path / "deep/dir/other.zarr")
    origin = tmp_path / "a/main.zarr"
    root = zk.group(origin, zarr_format=2)
    other = zk.open_group(tmp_path / "deep/dir/other.zarr", mode="r")
    assert relative_source(root.store, other.store) == "../../deep/dir/other.zarr"
    assert relative_source(root.store, root.store) == "."
    assert relative_source(root.store, DirectoryStore(origin)) == "."
    link = root.create_link("x", other["data"])
    assert link.source == "../../deep/dir/other.zarr"
    assert root["x"][...].tolist() == [5, 6]
    # A source naming the store itself is the store itself.
    root.create_group("g")
    root.create_link("self", "/g", source="../main.zarr")
    assert root["self"] == root["g"]


def test_external_link_from_a_zip_store(tmp_path: Path) -> None:
    make_other(tmp_path / "other.zarr")
    archive = tmp_path / "main.zip"
    with ZipStore(archive, mode="w") as store:
        root = zk.group(store, zarr_format=2)
        other = zk.open_group(tmp_path / "other.zarr", mode="r")
        # Relative to the archive, as hdmf-zarr joins sources to the file's path.
        assert root.create_link("ext", other["data"]).source == "../other.zarr"
    with ZipStore(archive, mode="r") as store:
        root = zk.open_group(store, mode="r")
        assert root["ext"][...].tolist() == [5, 6]
    # And to a node inside an archive: read-only, whatever the origin.
    with ZipStore(tmp_path / "lib.zip", mode="w") as lib_store:
        lib = zk.group(lib_store, zarr_format=2)
        lib.create_array("arr", shape=(1,), dtype="u1", data=np.array([4], dtype="u1"))
    main = zk.group(tmp_path / "plain.zarr", zarr_format=2)
    assert main.create_link("in_zip", "/arr", source="../lib.zip") == \
        Link("in_zip", "../lib.zip", "/arr")
    target = main["in_zip"]
    assert target[...].tolist() == [4] and target.read_only


def test_external_link_errors(tmp_path: Path) -> None:
    root = zk.group(tmp_path / "main.zarr", zarr_format=2)
    root.create_link("missing_store", "/data", source="../nope.zarr")
    with pytest.raises(LinkError) as info:
        root["missing_store"]
    assert str(info.value).startswith(
        "link '/missing_store' -> '../nope.zarr:/data': cannot open source '../nope.zarr' (")
    make_other(tmp_path / "other.zarr")
    root.create_link("missing_node", "/nothing", source="../other.zarr")
    with pytest.raises(LinkError) as info:
        root["missing_node"]
    assert str(info.value) == ("dangling link '/missing_node' -> '../other.zarr:/nothing': "
                               "no array or group at path 'nothing'")
    with pytest.raises(LinkError, match="cannot open source '../nope.zarr'"):
        open_target(root, "../nope.zarr", "/")

    memory = zk.group(MemoryStore(), zarr_format=2)
    with pytest.raises(LinkError, match="no location on disk"):
        memory.create_link("x", root)
    with pytest.raises(LinkError, match="no location on disk"):
        memory.create_link("x", "/data", source="../other.zarr")
    with pytest.raises(LinkError, match="no location on disk"):
        open_target(memory, "../other.zarr", "/data")
    assert "zarr_link" not in memory.attrs


def test_cycle_across_stores(tmp_path: Path) -> None:
    one = zk.group(tmp_path / "one.zarr", zarr_format=2)
    two = zk.group(tmp_path / "two.zarr", zarr_format=2)
    one.create_link("to_two", "/back", source="../two.zarr")
    two.create_link("back", "/to_two", source="../one.zarr")
    with pytest.raises(LinkError) as info:
        one["to_two"]
    location = (tmp_path / "two.zarr").absolute()
    assert str(info.value) == f"links form a cycle: /to_two -> {location}:/back -> /to_two"


# --- other implementations ----------------------------------------------------------------
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_python_reads_stores_with_links(tmp_path: Path, zarr_format: int) -> None:
    zarr = pytest.importorskip("zarr")
    root = nwb_like(tmp_path / "f.zarr", zarr_format)
    eg = root["general/extracellular_ephys/eg"]
    assert isinstance(eg, zk.Group)
    eg.create_link("device", root["general/devices/dev"])
    opened = zarr.open_group(str(tmp_path / "f.zarr"), mode="r")
    assert opened.metadata.zarr_format == zarr_format
    zeg = opened["general/extracellular_ephys/eg"]
    assert zeg.attrs.asdict() == {"location": "l", "zarr_link": [
        {"name": "device", "source": ".", "path": "/general/devices/dev",
         "object_id": "dev-id", "source_object_id": "root-id"}]} if zarr_format == 2 else {
        "location": "l", "_LINKS": [
            {"source": ".", "path": "/general/devices/dev", "name": "device"}]}
    assert list(zeg.keys()) == []
    assert opened["general/devices/dev/serial"][...].tolist() == [7, 8, 9]


def test_links_written_by_zarr_python_are_followed(tmp_path: Path) -> None:
    zarr = pytest.importorskip("zarr")
    written = zarr.open_group(str(tmp_path / "z.zarr"), mode="w", zarr_format=2)
    written.create_group("devices").create_group("dev")
    eg = written.create_group("eg")
    eg.attrs["zarr_link"] = [{"name": "device", "source": ".", "path": "/devices/dev"}]
    root = zk.open_group(tmp_path / "z.zarr", mode="r")
    assert root["eg/device"].name == "/devices/dev"
    assert root.tree() == "\n".join(
        ["/", "├── devices", "│   └── dev", "└── eg", "    └── device -> /devices/dev"])


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_members_cannot_be_created_under_a_link_name(zarr_format: int) -> None:
    root = zk.group({}, zarr_format=zarr_format)
    root.create_group("target")
    root.create_link("alias", "/target")
    with pytest.raises(ContainsNodeError, match="link"):
        root.create_group("alias")
    with pytest.raises(ContainsNodeError, match="link"):
        root.create_array("alias/x", shape=(1,), dtype="u1")
    assert root["alias"].path == "target"
    root.delete_link("alias")
    assert root.create_group("alias").path == "alias"


def test_no_api_creates_a_node_under_a_link_name() -> None:
    store = MemoryStore()
    root = zk.group(store, zarr_format=3)
    root.create_group("g")
    sub = root["g"]
    assert isinstance(sub, zk.Group)
    sub.create_link("alias", "/elsewhere")
    with pytest.raises(ContainsNodeError, match="'alias' is a link of group '/g'"):
        zk.create_array(store, name="g/alias/deep", shape=(1,), dtype="u1")
    with pytest.raises(ContainsNodeError, match="link"):
        zk.create_group(store, path="g/alias")


# --- hdmf-zarr 0.14's _LINKS beside 0.13's zarr_link ----------------------------------------
def test_links_go_to_the_attribute_the_group_has() -> None:
    """A link is appended to the link attribute its group has (hdmf-zarr 0.14 reads a
    group's zarr_link only when it has no _LINKS), else to its file's convention's; a
    zarr_link beside a _LINKS is not read, as by hdmf-zarr 0.14."""
    v3 = zk.group({}, zarr_format=3)
    v3.create_group("devices/dev")
    old = v3.create_group("old", attributes={"zarr_link": [{"name": "a", "path": "/devices"}]})
    old.create_link("b", "/devices/dev")  # a v3 group written with 0.13's attribute
    assert list(old.attrs) == ["zarr_link"] and set(old.links()) == {"a", "b"}
    both = v3.create_group("both", attributes={
        "_LINKS": [{"source": ".", "path": "/devices", "name": "a"}],
        "zarr_link": [{"name": "hidden", "path": "/devices/dev"}]})
    assert set(both.links()) == {"a"}
    with pytest.raises(NodeNotFoundError):
        both["hidden"]
    both.create_link("c", "/devices/dev")
    assert both.attrs["_LINKS"][-1] == {"source": ".", "path": "/devices/dev", "name": "c"}
    assert both["c"].name == "/devices/dev"
    both.delete_link("a")
    both.delete_link("c")
    assert "_LINKS" not in both.attrs and both.attrs["zarr_link"][0]["name"] == "hidden"
    with pytest.raises(ContainsNodeError, match="link"):
        old.create_group("b")
    v2 = zk.group({}, zarr_format=2)
    v2.create_group("x")
    new = v2.create_group("g", attributes={"_LINKS": []})
    new.create_link("x", "/x")
    assert new.attrs.asdict() == {"_LINKS": [{"source": ".", "path": "/x", "name": "x"}]}
    with pytest.raises(MetadataError, match="_LINKS of group '/g': _LINKS must be a list"):
        new.attrs["_LINKS"] = "nope"
        new.links()
