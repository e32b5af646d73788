"""``config=`` as zarr-python 3.4 takes it: an ``ArrayConfig`` (``zarr.core.array_spec``)
or a dict, on every creation and opening function, with the same effect on the handle
(its order and ``write_empty_chunks``) and the same stored chunks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import zarrkit
from zarrkit.core.array_spec import ArrayConfig, parse_array_config

zarr = pytest.importorskip("zarr")
from zarr.core.array_spec import ArrayConfig as TheirConfig  # noqa: E402


def chunk_keys(store: Any) -> list[str]:
    if isinstance(store, zarr.abc.store.Store):  # zarr-python's: an async listing
        import asyncio

        async def listed() -> list[str]:
            return [k async for k in store.list()]
        keys = asyncio.run(listed())
    else:
        keys = list(store.list())
    return sorted(k for k in keys if k.startswith("c/"))


@pytest.mark.parametrize("kind", ["instance", "dict"])
@pytest.mark.parametrize("settings", [("F", True), ("C", False), ("C", True)])
def test_create_array_takes_an_array_config(kind: str, settings: tuple[str, bool]) -> None:
    order, empty = settings
    ours_config: Any = (ArrayConfig(order, empty) if kind == "instance"
                        else {"order": order, "write_empty_chunks": empty})
    theirs_config: Any = (TheirConfig(order, empty) if kind == "instance"
                          else {"order": order, "write_empty_chunks": empty})
    ours = zarrkit.create_array(zarrkit.storage.MemoryStore(), shape=(4, 4), chunks=(2, 2),
                                dtype="i4", config=ours_config)
    theirs = zarr.create_array(zarr.storage.MemoryStore(), shape=(4, 4), chunks=(2, 2),
                               dtype="i4", config=theirs_config)
    for array in (ours, theirs):
        array[:2, :2] = 0  # the fill value: stored only with write_empty_chunks
        array[2:, 2:] = np.arange(4).reshape(2, 2)
    assert (ours.config.order, ours.config.write_empty_chunks) == (
        theirs.config.order, theirs.config.write_empty_chunks)
    assert ours.order == theirs.order
    assert chunk_keys(ours.store) == chunk_keys(theirs.store)
    np.testing.assert_array_equal(ours[...], theirs[...])


def test_open_and_from_array_take_an_array_config(tmp_path: Any) -> None:
    path = str(tmp_path / "a.zarr")
    zarrkit.create_array(path, shape=(4,), chunks=(2,), dtype="u1")
    opened = zarrkit.open_array(path, mode="r+", config=ArrayConfig("F", True))
    assert opened.config.write_empty_chunks and opened.config.order == "F"
    assert zarrkit.open(path, mode="r", config=ArrayConfig("F")).config.order == "F"
    copy = zarrkit.from_array(zarrkit.storage.MemoryStore(), data=np.arange(4),
                              config=ArrayConfig("C", True))
    assert copy.config.write_empty_chunks
    created = zarrkit.create(shape=(2,), config=ArrayConfig("C", True))
    assert created.config.write_empty_chunks


def test_parse_array_config_as_zarr_python() -> None:
    from zarr.core.array_spec import parse_array_config as theirs

    for data in (None, {"order": "F"}, {"write_empty_chunks": True}):
        assert parse_array_config(data).to_dict() == {
            k: v for k, v in vars(theirs(data)).items()}
