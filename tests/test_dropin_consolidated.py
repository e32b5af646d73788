"""``group.metadata.consolidated_metadata`` is an object as zarr-python's
``ConsolidatedMetadata``: the same nesting, names, kinds and node metadata, checked side by
side with zarr-python reading the same store."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
import zarr

import zarrkit as zk
from zarrkit.metadata.v3 import ConsolidatedMetadata, GroupMetadataV3

warnings.filterwarnings("ignore", category=UserWarning, module="zarr")


def _hierarchy(writer: Any, store: Any) -> None:
    root = writer.open_group(store, mode="w", zarr_format=3)
    root.create_group("a/b/c", attributes={"deep": True})
    root.create_array("a/x", shape=(4,), chunks=(2,), dtype="i4", attributes={"u": "m"})
    root.create_array("a/b/y", shape=(2, 2), chunks=(1, 2), dtype="f8")
    root.create_group("e")
    root.create_array("z", shape=(3,), dtype="u1")


def _shape(snapshot: Any) -> dict[str, Any]:
    """The nesting of a snapshot: name -> (node type, attributes, nested shape or None)."""
    result = {}
    for name, node in snapshot.metadata.items():
        inner = getattr(node, "consolidated_metadata", None)
        result[name] = (node.node_type, dict(node.attributes),
                        None if inner is None else _shape(inner))
    return result


@pytest.mark.parametrize("writer", [zk, zarr], ids=["written-by-zarrkit", "by-zarr-python"])
def test_snapshot_object_matches_zarr_pythons(writer: Any, tmp_path: Path) -> None:
    store = str(tmp_path / "h.zarr")
    _hierarchy(writer, store)
    writer.consolidate_metadata(store)
    ours = zk.open_group(store, mode="r", consolidated=True).metadata.consolidated_metadata
    theirs = zarr.open_group(store, mode="r",
                             use_consolidated=True).metadata.consolidated_metadata
    assert isinstance(ours, ConsolidatedMetadata)
    assert (ours.kind, ours.must_understand) == (theirs.kind, theirs.must_understand)
    assert _shape(ours) == _shape(theirs)
    assert set(ours.flattened_metadata) == set(theirs.flattened_metadata)
    for path, node in theirs.flattened_metadata.items():
        mine = ours.flattened_metadata[path]
        assert mine.node_type == node.node_type
        if node.node_type == "array":
            assert (mine.shape, mine.chunks) == (node.shape, node.chunks)
    stored = json.loads((tmp_path / "h.zarr" / "zarr.json").read_text())
    assert ours.to_dict() == stored["consolidated_metadata"]


def test_groups_below_a_consolidated_one_carry_their_part_as_in_zarr_python(
        tmp_path: Path) -> None:
    store = str(tmp_path)
    _hierarchy(zk, store)
    zk.consolidate_metadata(store)
    ours = zk.open_group(store, mode="r", consolidated=True)
    theirs = zarr.open_group(store, mode="r", use_consolidated=True)
    for path in ("a", "a/b", "a/b/c", "e"):
        mine = ours[path].metadata.consolidated_metadata
        expected = theirs[path].metadata.consolidated_metadata
        assert (mine is None) == (expected is None), path  # a/b/c: none, as stored
        assert expected is None or _shape(mine) == _shape(expected), path
    # The stored document of a member group is not changed by reading it so.
    assert json.loads((tmp_path / "a" / "zarr.json").read_text()).get(
        "consolidated_metadata") is None


def test_info_of_a_consolidated_group_counts_its_members_as_zarr_python(
        tmp_path: Path) -> None:
    store = str(tmp_path)
    _hierarchy(zk, store)
    zk.consolidate_metadata(store)
    ours = zk.open_group(store, mode="r", consolidated=True)
    theirs = zarr.open_group(store, mode="r", use_consolidated=True)
    assert str(ours.info).replace("DirectoryStore", "LocalStore") == str(theirs.info)
    assert "No. members : 7" in str(ours.info)


def test_no_snapshot_is_none(tmp_path: Path) -> None:
    store = str(tmp_path)
    _hierarchy(zk, store)
    assert zk.open_group(store, mode="r").metadata.consolidated_metadata is None
    theirs = zarr.open_group(store, mode="r", use_consolidated=False)
    assert theirs.metadata.consolidated_metadata is None


@pytest.mark.parametrize("engine", ["auto", "python"])
@pytest.mark.parametrize("mode", ["r", "r+"])
def test_opened_without_consolidated_metadata_a_group_has_none(
        tmp_path: Path, engine: str, mode: str) -> None:
    """As zarr-python's ``use_consolidated=False``: the snapshot is dropped from the opened
    group's metadata (and, large, left unparsed), members are found by listing, and an
    attribute change keeps the stored snapshot."""
    store = str(tmp_path)
    _hierarchy(zk, store)
    root = zk.open_group(store, mode="r+")
    for i in range(300):  # a snapshot large enough for the engine to skip it unparsed
        root.create_array(f"many/a{i}", shape=(2,), dtype="u1")
    zk.consolidate_metadata(store)
    theirs = zarr.open_group(store, mode="r", use_consolidated=False)
    with zk.config.set(engine=engine):
        ours = zk.open_group(store, mode=mode, use_consolidated=False)
        assert ours.metadata.consolidated_metadata is None
        assert theirs.metadata.consolidated_metadata is None
        assert sorted(ours.keys()) == sorted(theirs.keys()) == ["a", "e", "many", "z"]
        assert ours.attrs.asdict() == theirs.attrs.asdict() == {}
        assert zk.open_group(store, mode="r", use_consolidated=True
                             ).metadata.consolidated_metadata is not None
        if mode == "r+":
            ours.attrs["note"] = 1
            stored = json.loads((tmp_path / "zarr.json").read_bytes())
            assert stored["attributes"] == {"note": 1}
            assert len(stored["consolidated_metadata"]["metadata"]) > 300
            again = zarr.open_group(store, mode="r", use_consolidated=True)
            assert len(again.metadata.consolidated_metadata.flattened_metadata) > 300


def test_a_snapshot_survives_changes_through_its_object_form() -> None:
    store: dict[str, bytes] = {}
    _hierarchy(zk, store)
    zk.consolidate_metadata(store)
    before = json.loads(store["zarr.json"])["consolidated_metadata"]
    root = zk.open_group(store, mode="r+", consolidated=True)
    root.attrs["k"] = 1  # rewrites the root's zarr.json through GroupMetadataV3.to_json
    after = json.loads(store["zarr.json"])
    assert after["attributes"] == {"k": 1}
    assert after["consolidated_metadata"] == before


def test_raw_dict_is_parsed_and_bad_entries_fail_when_read() -> None:
    metadata = GroupMetadataV3(consolidated_metadata={
        "kind": "inline", "must_understand": False,
        "metadata": {"g": {"zarr_format": 3, "node_type": "nonsense"}}})
    assert isinstance(metadata.consolidated_metadata, ConsolidatedMetadata)
    with pytest.raises(zk.errors.MetadataError, match="node_type"):
        _ = metadata.consolidated_metadata.metadata
    with pytest.raises(zk.errors.MetadataError, match="kind"):
        ConsolidatedMetadata.from_dict({"kind": "other", "metadata": {}})


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_writer_reaches_nodes_its_stale_snapshot_lacks(zarr_format: int) -> None:
    """Writable modes read through consolidated metadata when present (zarr-python's
    default), but a node created after the snapshot without recording it there (a killed
    writer; another library) must stay reachable to a writer; a reader keeps to the
    snapshot, as zarr-python's does."""
    store: dict[str, Any] = {}
    root = zk.open_group(store, mode="w", zarr_format=zarr_format)
    root.create_group("g")
    zk.consolidate_metadata(store)
    # Written behind the snapshot's back, as a plain store write.
    late: dict[str, Any] = {}
    zk.create_array(late, name="g/late", shape=(2,), dtype="u1", zarr_format=zarr_format)
    for key, value in late.items():
        if key.startswith("g/late/"):
            store[key] = value
    reader = zk.open_group(store, mode="r")
    with pytest.raises(KeyError):
        reader["g/late"]
    for mode in ("r+", "a"):
        writer = zk.open_group(store, mode=mode)
        assert writer.consolidated
        late_array = writer["g/late"]
        assert isinstance(late_array, zk.Array) and late_array.shape == (2,)
        late_array.attrs["seen"] = True
    assert zk.open_group(store, mode="r", use_consolidated=False)["g/late"].attrs["seen"]
