"""Links never write (issue 28): a link is data from the file, and its ``source`` may name
any path, absolute ones too. Following it from a group opened in the default (writable)
mode must neither create nor change a store at that path: the source must exist (else a
LinkError naming it) and is opened read-only, whatever store kind it resolves to.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import LinkError, ReadOnlyError, ZarrkitError
from zarrkit.storage import DirectoryStore, LMDBStore, SQLiteStore, ZipStore
from zarrkit.storage.base import Store

KINDS = ["planted.sqlite", "planted.lmdb", "planted.zip", "planted.zarr", "planted.db",
         "planted.mdb", "planted.sqlite3"]


def _link_attribute(zarr_format: int) -> str:
    return "zarr_link" if zarr_format == 2 else "_LINKS"


def _plant(origin: Path, zarr_format: int, source: str, path: str = "/") -> None:
    """A store at ``origin`` whose root holds a link ``planted`` to ``source``:``path``,
    written as raw attributes, as a hostile file would hold it."""
    root = zk.group(origin, zarr_format=zarr_format)
    root.attrs[_link_attribute(zarr_format)] = [
        {"name": "planted", "source": source, "path": path}]


def _leftovers(target: Path) -> list[str]:
    """Every file or directory that a store opened at ``target`` could have made."""
    names = [target.name + suffix for suffix in ("", "-wal", "-shm", "-journal", "-lock")]
    return sorted(name for name in names if os.path.lexists(target.parent / name))


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("absolute", [True, False], ids=["absolute", "relative"])
@pytest.mark.parametrize("name", KINDS)
def test_link_to_a_missing_source_creates_nothing(tmp_path: Path, zarr_format: int,
                                                  absolute: bool, name: str) -> None:
    elsewhere = tmp_path / "attacker" / "dir"
    elsewhere.mkdir(parents=True)
    target = elsewhere / name
    source = str(target) if absolute else f"../attacker/dir/{name}"
    _plant(tmp_path / "main.zarr", zarr_format, source)

    root = zk.open_group(tmp_path / "main.zarr")  # the default mode: writable
    assert not root.read_only
    with pytest.raises(LinkError) as info:
        root["planted"]
    assert str(target) in str(info.value)
    with pytest.raises(LinkError):
        root["planted/deeper"]
    with pytest.raises(LinkError):
        zk.open_group(tmp_path / "main.zarr", mode="r+")["planted"]
    assert _leftovers(target) == []
    assert sorted(os.listdir(elsewhere)) == []


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_create_link_to_a_missing_source_creates_nothing(tmp_path: Path,
                                                         zarr_format: int) -> None:
    # create_link looks its target up too, to record object ids: that must not write either.
    root = zk.group(tmp_path / "main.zarr", zarr_format=zarr_format)
    for name in KINDS:
        root.create_link(name, "/data", source=str(tmp_path / name))
        with pytest.raises(LinkError):
            root[name]
        assert _leftovers(tmp_path / name) == []


def test_http_source_is_a_local_path_and_creates_nothing(tmp_path: Path) -> None:
    # A source is joined to the origin's location as a path: a URL is never fetched, and
    # the path it turns into is not made.
    _plant(tmp_path / "main.zarr", 2, "http://127.0.0.1:9/remote.zarr")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(LinkError, match="remote.zarr"):
        zk.open_group(tmp_path / "main.zarr")["planted"]
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def _sqlite(path: Path) -> Store:
    return SQLiteStore(path)


def _lmdb(path: Path) -> Store:
    return LMDBStore(path)


def _zip(path: Path) -> Store:
    return ZipStore(path, mode="w")


def _directory(path: Path) -> Store:
    return DirectoryStore(path)


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize(("name", "make"), [("lib.sqlite", _sqlite), ("lib.lmdb", _lmdb),
                                            ("lib.zip", _zip), ("lib.zarr", _directory)])
@pytest.mark.parametrize("absolute", [True, False], ids=["absolute", "relative"])
def test_link_to_an_existing_store_is_read_only(tmp_path: Path, zarr_format: int, name: str,
                                                make: object, absolute: bool) -> None:
    location = tmp_path / name
    store = make(location)  # type: ignore[operator]
    lib = zk.group(store, zarr_format=zarr_format)
    lib.create_array("arr", shape=(3,), dtype="i4", data=np.array([1, 2, 3], dtype="i4"))
    store.close()
    source = str(location) if absolute else f"../{name}"
    _plant(tmp_path / "main.zarr", zarr_format, source, "/arr")

    root = zk.open_group(tmp_path / "main.zarr")  # the default mode: writable
    target = root["planted"]
    assert isinstance(target, zk.Array)
    assert target.read_only
    np.testing.assert_array_equal(target[...], [1, 2, 3])
    with pytest.raises(ReadOnlyError):
        target[...] = 7
    with pytest.raises(ReadOnlyError):
        target.attrs["x"] = 1
    with pytest.raises(ZarrkitError):
        target.store.set("planted/zarr.json", b"{}")
    target.store.close()

    check = zk.open_array(location, path="arr", mode="r")
    np.testing.assert_array_equal(check[...], [1, 2, 3])
    assert "x" not in check.attrs
    check.store.close()
