"""What creating and opening a large hierarchy costs in store operations (benchmark S9),
and that the faster paths behave as the plain ones: the metadata JSON text, errors for bad
metadata, consolidated snapshots kept current."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import ContainsNodeError, MetadataError
from zarrkit.metadata.jsonio import dump_json
from zarrkit.storage import MemoryStore
from zarrkit.storage.base import Buffer

ATTRS = {"units": "m", "scale": [1.0, 0.5], "long_name": "a member array"}


class CountingStore(MemoryStore):
    """A MemoryStore counting the calls that reach it and the keys they touch."""

    def __init__(self) -> None:
        super().__init__()
        self.reset()

    def reset(self) -> None:
        self.calls: dict[str, int] = {}
        self.keys_read: list[str] = []
        self.keys_written: list[str] = []

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def get(self, key: str) -> bytes | None:
        self._count("get")
        self.keys_read.append(key)
        return super().get(key)

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        self._count("get_many")
        self.keys_read.extend(keys)
        return [MemoryStore.get(self, key) for key in keys]

    def set(self, key: str, value: Buffer) -> None:
        self._count("set")
        self.keys_written.append(key)
        super().set(key, value)

    def set_many(self, items: Any) -> None:
        self._count("set_many")
        super().set_many(items)

    def set_if_not_exists(self, key: str, value: Buffer) -> bool:
        self._count("set_if_not_exists")
        self.keys_written.append(key)
        return super().set_if_not_exists(key, value)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        self._count("list_dir")
        return super().list_dir(prefix)


def _hierarchy(zarr_format: int, count: int = 5) -> CountingStore:
    store = CountingStore()
    root = zk.open_group(store, mode="w", zarr_format=zarr_format)
    for i in range(count):
        root.create_array(f"a{i}", shape=(10,), chunks=(10,), dtype="f4",
                          attributes={"index": i, **ATTRS})
    store.reset()
    return store


# --- creating ---------------------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", [2, 3])
def test_create_array_is_one_batched_read_and_one_write_per_document(zarr_format: int) -> None:
    store = _hierarchy(zarr_format, count=1)
    root = zk.open_group(store, mode="r+", zarr_format=zarr_format)
    store.reset()
    root.create_array("x", shape=(10,), chunks=(10,), dtype="f4", attributes={"i": 1})
    # One get_many probes the root and the new path; no snapshot to update, no re-reads.
    # The node's document is created only if absent (a racing writer is never replaced);
    # v2 attributes follow it.
    expected_calls = {"get_many": 1, "set_if_not_exists": 1}
    if zarr_format == 2:
        expected_calls["set"] = 1
    assert store.calls == expected_calls
    expected = ["x/.zarray", "x/.zattrs"] if zarr_format == 2 else ["x/zarr.json"]
    assert store.keys_written == expected


def test_create_array_creates_missing_ancestors_only_if_absent() -> None:
    store = _hierarchy(2, count=0)
    root = zk.open_group(store, mode="r+", zarr_format=2)
    store.reset()
    root.create_array("g/h/x", shape=(2,), dtype="u1")
    assert store.calls == {"get_many": 1, "set_if_not_exists": 3}
    assert store.keys_written == ["g/.zgroup", "g/h/.zgroup", "g/h/x/.zarray"]


def test_create_under_an_array_or_over_a_node_is_refused_before_writing() -> None:
    store = _hierarchy(3, count=1)
    root = zk.open_group(store, mode="r+")
    with pytest.raises(ContainsNodeError, match="'a0' is an array"):
        root.create_array("a0/x", shape=(2,), dtype="u1")
    with pytest.raises(ContainsNodeError, match="already exists"):
        root.create_array("a0", shape=(2,), dtype="u1")
    assert store.keys_written == []


def test_v3_snapshot_is_still_updated_when_an_ancestor_holds_one() -> None:
    store = _hierarchy(3, count=2)
    zk.consolidate_metadata(store)
    root = zk.open_group(store, mode="r+")
    root.create_array("new/x", shape=(3,), dtype="u1", attributes={"k": 1})
    snapshot = zk.open_group(store, mode="r", consolidated=True).metadata.consolidated_metadata
    assert {"new", "new/x"} <= set(snapshot.flattened_metadata)
    assert snapshot.flattened_metadata["new/x"].attributes == {"k": 1}


def test_invalid_codecs_fail_every_time_despite_the_validation_cache() -> None:
    for _ in range(2):
        with pytest.raises(MetadataError):
            zk.create_array({}, shape=(4,), dtype="u1", zarr_format=3,
                            compressors=[{"name": "gzip", "configuration": {"level": 99}}])


# --- opening ----------------------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", [2, 3])
def test_listing_members_reads_all_metadata_in_one_batch(zarr_format: int) -> None:
    store = _hierarchy(zarr_format, count=5)
    root = zk.open_group(store, mode="r", zarr_format=zarr_format, consolidated=False)
    store.reset()
    seen = {name: array.attrs.asdict()["index"] for name, array in root.arrays()}
    assert seen == {f"a{i}": i for i in range(5)}
    # One listing and one batch for five members, attributes included: no per-member reads.
    assert store.calls == {"list_dir": 1, "get_many": 1}
    # Members are of the group's format: only that format's documents are asked for.
    names = {key.rsplit("/", 1)[-1] for key in store.keys_read}
    assert names == ({"zarr.json"} if zarr_format == 3 else {".zarray", ".zgroup", ".zattrs"})


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_members_need_no_store_reads(zarr_format: int) -> None:
    store = _hierarchy(zarr_format, count=5)
    zk.consolidate_metadata(store, zarr_format=zarr_format)
    root = zk.open_group(store, mode="r", zarr_format=zarr_format, consolidated=True)
    store.reset()
    assert [a.attrs["index"] for _, a in root.arrays()] == list(range(5))
    assert store.calls == {}


def test_malformed_attributes_still_fail_when_read() -> None:
    store = _hierarchy(2, count=2)
    store.set("a1/.zattrs", b"[1, 2]")
    members = dict(zk.open_group(store, mode="r", consolidated=False).arrays())
    assert members["a0"].attrs["index"] == 0
    with pytest.raises(MetadataError, match="a1/.zattrs"):
        members["a1"].attrs.asdict()


def test_malformed_member_metadata_fails_as_when_opened_alone() -> None:
    store = _hierarchy(3, count=2)
    store.set("a1/zarr.json", b"{")
    root = zk.open_group(store, mode="r", consolidated=False)
    with pytest.raises(MetadataError, match="a1/zarr.json"):
        list(root.arrays())
    with pytest.raises(MetadataError, match="a1/zarr.json"):
        root["a1"]


def test_members_through_a_directory_store(tmp_path: Any) -> None:
    root = zk.open_group(tmp_path / "h.zarr", mode="w", zarr_format=2)
    for i in range(80):  # enough keys for the reads to go to the thread pool
        root.create_array(f"a{i:02d}", shape=(3,), dtype="i2", attributes={"i": i})
    root.create_group("g")
    again = zk.open_group(tmp_path / "h.zarr", mode="r", consolidated=False)
    assert [a.attrs["i"] for _, a in again.arrays()] == list(range(80))
    assert again.group_keys() == ["g"] and len(again) == 81


# --- metadata JSON ----------------------------------------------------------------------

def _reference(document: Any) -> bytes:
    from zarrkit.metadata.jsonio import _default

    return json.dumps(document, indent=2, ensure_ascii=True,
                      allow_nan=False, default=_default).encode()


_leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.text(),
                    st.floats(allow_nan=False, allow_infinity=False))
_documents = st.recursive(
    _leaves, lambda inner: st.one_of(st.lists(inner), st.dictionaries(st.text(), inner),
                                     st.tuples(inner, inner)), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(_documents)
def test_dump_json_writes_the_text_of_json_dumps(document: Any) -> None:
    assert dump_json(document) == _reference(document)


def test_dump_json_numpy_values_and_odd_keys_match_json_dumps() -> None:
    document = {"f32": np.float32(1.5), "f64": np.float64(0.1), "i": np.int64(-3),
                "b": np.bool_(True), "arr": np.arange(3), "t": (1, [2]), 7: "int key",
                "e": {}, "l": [], "nested": [{"z": 1, "a": [None, False]}]}
    document = {str(k): v for k, v in document.items()} | {"u": "é\n\x00"}
    assert dump_json(document) == _reference(document)
    assert dump_json({3: 1, 2.5: 2, True: 3}) == _reference({3: 1, 2.5: 2, True: 3})


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), np.float32("-inf")])
def test_dump_json_refuses_nan_and_infinity(bad: Any) -> None:
    with pytest.raises(MetadataError, match="NaN or Infinity"):
        dump_json({"x": [bad]})


def test_dump_json_refuses_cycles_and_unknown_types() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(MetadataError):
        dump_json(loop)
    with pytest.raises(TypeError, match="not JSON serialisable"):
        dump_json({"x": object()})


# --- opening: each metadata document is read once --------------------------------------------


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("opener", ["open_array", "open"])
def test_opening_an_array_reads_its_metadata_once(zarr_format: int, opener: str) -> None:
    # A remote store pays a request per read: the document found is the one used.
    store = _hierarchy(zarr_format)
    array = getattr(zk, opener)(store, mode="r", path="a1")
    assert isinstance(array, zk.Array)
    document = "a1/zarr.json" if zarr_format == 3 else "a1/.zarray"
    assert store.keys_read.count(document) == 1
    assert array.attrs["index"] == 1 and array.shape == (10,)
    np.testing.assert_array_equal(array[...], np.zeros(10, "f4"))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_opening_a_consolidated_group_reads_its_document_once(zarr_format: int) -> None:
    store = _hierarchy(zarr_format)
    zk.consolidate_metadata(store, zarr_format=zarr_format)
    store.reset()
    group = zk.open(store, mode="r")
    assert isinstance(group, zk.Group)
    document = "zarr.json" if zarr_format == 3 else ".zmetadata"
    assert store.keys_read.count(document) == 1
    assert sorted(group.array_keys()) == [f"a{i}" for i in range(5)]
    assert group["a3"].attrs["index"] == 3


def test_open_keeps_refusing_mode_w_minus_on_an_existing_array() -> None:
    store = _hierarchy(3)
    with pytest.raises(ContainsNodeError):
        zk.open(store, mode="w-", path="a1", shape=(3,), dtype="i1")
    with pytest.raises(TypeError, match="unexpected"):
        zk.open(store, mode="r", not_an_option=1)
