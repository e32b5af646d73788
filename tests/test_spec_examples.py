"""The examples of the Zarr v2 storage specification (seed ``zarr-v2-storage-spec.rst``,
section "Examples"), replayed with zarrkit: the same keys, documents and chunk bytes."""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

import zarrkit as zk
from zarrkit.storage.zip import ZipStore


def _json(path: Path) -> object:
    return json.loads(path.read_text())


def test_storing_a_single_array(tmp_path: Path) -> None:
    root = tmp_path / "example.zarr"
    a = zk.create_array(str(root), shape=(20, 20), chunks=(10, 10), dtype="i4", fill_value=42,
                        compressors=[{"id": "zlib", "level": 1}], zarr_format=2, overwrite=True)
    assert sorted(os.listdir(root)) == [".zarray"]
    document = _json(root / ".zarray")
    assert isinstance(document, dict)
    # The spec predates the optional dimension_separator key, which zarr-python also writes.
    assert document.pop("dimension_separator") == "."
    assert document == {
        "chunks": [10, 10], "compressor": {"id": "zlib", "level": 1}, "dtype": "<i4",
        "fill_value": 42, "filters": None, "order": "C", "shape": [20, 20], "zarr_format": 2,
    }
    a[0:10, 0:10] = 1
    assert sorted(os.listdir(root)) == [".zarray", "0.0"]
    a[0:10, 10:20] = 2
    a[10:20, :] = 3
    assert sorted(os.listdir(root)) == [".zarray", "0.0", "0.1", "1.0", "1.1"]
    chunk = np.frombuffer(zlib.decompress((root / "0.0").read_bytes()), dtype="<i4")
    assert chunk.tolist() == [1] * 100
    a.attrs["foo"] = 42
    a.attrs["bar"] = "apples"
    a.attrs["baz"] = [1, 2, 3, 4]
    assert sorted(os.listdir(root)) == [".zarray", ".zattrs", "0.0", "0.1", "1.0", "1.1"]
    assert _json(root / ".zattrs") == {"bar": "apples", "baz": [1, 2, 3, 4], "foo": 42}
    # Keys are written in the order they were set, as zarr-python 3 writes them (the
    # spec's listing is sorted, as zarr-python 2 wrote them; JSON objects have no order).
    assert list(_json(root / ".zattrs")) == ["foo", "bar", "baz"]  # type: ignore[arg-type]


def _build_group_example(store: object) -> None:
    root_grp = zk.group(store, overwrite=True, zarr_format=2)
    sub_grp = root_grp.create_group("foo")
    a = sub_grp.create_array("bar", shape=(20, 20), chunks=(10, 10))
    a[:] = 42
    a.attrs["comment"] = "answer to life, the universe and everything"


def test_storing_multiple_arrays_in_a_hierarchy(tmp_path: Path) -> None:
    root = tmp_path / "group.zarr"
    zk.group(str(root), overwrite=True, zarr_format=2)
    assert sorted(os.listdir(root)) == [".zgroup"]
    assert _json(root / ".zgroup") == {"zarr_format": 2}
    _build_group_example(str(root))
    assert sorted(os.listdir(root)) == [".zgroup", "foo"]
    assert sorted(os.listdir(root / "foo")) == [".zgroup", "bar"]
    assert sorted(os.listdir(root / "foo" / "bar")) == [
        ".zarray", ".zattrs", "0.0", "0.1", "1.0", "1.1"]
    values = zk.open_array(str(root), path="foo/bar", mode="r")[...]
    assert np.array_equal(values, np.full((20, 20), 42.0))


def test_the_same_hierarchy_in_a_zip_file(tmp_path: Path) -> None:
    path = tmp_path / "group.zip"
    with ZipStore(path, mode="w") as store:
        _build_group_example(store)
    with zipfile.ZipFile(path, mode="r") as zf:
        assert sorted(set(zf.namelist())) == [
            ".zgroup", "foo/.zgroup", "foo/bar/.zarray", "foo/bar/.zattrs",
            "foo/bar/0.0", "foo/bar/0.1", "foo/bar/1.0", "foo/bar/1.1",
        ]
    with ZipStore(path, mode="r") as store:
        array = zk.open_array(store, path="foo/bar", mode="r")
        assert array.attrs["comment"] == "answer to life, the universe and everything"
        assert np.array_equal(array[...], np.full((20, 20), 42.0))
