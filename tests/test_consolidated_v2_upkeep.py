"""Format-2 ``.zmetadata`` kept current by zarrkit's own changes (as format-3 inline
snapshots are): zarr-python and hdmf-zarr open files consolidated, so a change zarrkit
makes must show there without calling consolidate_metadata again."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import zarr
from shared_fixtures import fixtures_dir

import zarrkit as zk


def consolidated_view(path: Path) -> dict[str, Any]:
    """What zarr-python sees through .zmetadata: node kinds, shapes and attributes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.open_consolidated(str(path), mode="r", zarr_format=2)
        view: dict[str, Any] = {"": dict(root.attrs)}
        for name, node in root.members(max_depth=None):
            shape = node.shape if isinstance(node, zarr.Array) else None
            view[name] = (shape, dict(node.attrs))
    return view


def plain_view(path: Path) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.open_group(str(path), mode="r", zarr_format=2, use_consolidated=False)
        view: dict[str, Any] = {"": dict(root.attrs)}
        for name, node in root.members(max_depth=None):
            shape = node.shape if isinstance(node, zarr.Array) else None
            view[name] = (shape, dict(node.attrs))
    return view


def test_every_kind_of_change_reaches_the_zmetadata(tmp_path: Path) -> None:
    path = tmp_path / "h.zarr"
    root = zk.open_group(str(path), mode="w", zarr_format=2, attributes={"v": 0})
    root.create_array("a", shape=(4,), chunks=(2,), dtype="i4")
    root.create_group("g/h")
    zk.consolidate_metadata(str(path))
    handle = zk.open_group(str(path), mode="r+", consolidated=False)
    handle.attrs["v"] = 1                                          # root attributes
    handle.create_array("g/h/new", shape=(3,), dtype="f4",           # a node, implicit
                        attributes={"units": "m"})                   # parents' documents
    handle.create_array("x/y/z", shape=(2,), dtype="u1")             # missing parents
    array = handle["a"]
    assert isinstance(array, zk.Array)
    array.resize((6,))                                               # .zarray
    array.attrs["note"] = "resized"                                  # .zattrs
    del handle["g/h"]                                                # a whole subtree
    assert consolidated_view(path) == plain_view(path)
    assert consolidated_view(path)["a"] == ((6,), {"note": "resized"})
    assert "g/h" not in consolidated_view(path)


def test_a_subgroup_zmetadata_is_kept_too(tmp_path: Path) -> None:
    path = tmp_path / "h.zarr"
    root = zk.open_group(str(path), mode="w", zarr_format=2)
    root.create_group("sub")
    zk.consolidate_metadata(str(path), path="sub")
    zk.open_group(str(path), mode="r+").create_array("sub/x", shape=(1,), dtype="u1")
    document = json.loads((path / "sub" / ".zmetadata").read_text())
    assert "x/.zarray" in document["metadata"]


def test_an_hdmf_zarr_file_stays_consistent_after_zarrkit_changes_it(tmp_path: Path) -> None:
    path = tmp_path / "copy.zarr"
    shutil.copytree(fixtures_dir() / "hdmf" / "exjson.nwb.zarr", path)
    root = zk.open_group(str(path), mode="r+", consolidated=False)
    group = root["general/extracellular_ephys"]
    assert isinstance(group, zk.Group)
    group.create_link("device_again", "/general/devices/dev")
    entries = json.loads((path / ".zmetadata").read_text())["metadata"]
    links = entries["general/extracellular_ephys/.zattrs"]["zarr_link"]
    assert [link["name"] for link in links][-1] == "device_again"
    reopened = zk.open_group(str(path), mode="r", consolidated=True)
    assert reopened["general/extracellular_ephys/device_again"].path == "general/devices/dev"


def test_stores_without_zmetadata_get_none(tmp_path: Path) -> None:
    root = zk.open_group(str(tmp_path / "h.zarr"), mode="w", zarr_format=2)
    root.create_array("a", shape=(2,), dtype="u1", data=np.arange(2, dtype="u1"))
    root.attrs["x"] = 1
    assert not list((tmp_path / "h.zarr").rglob(".zmetadata"))
