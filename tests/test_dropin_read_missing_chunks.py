"""``read_missing_chunks=False`` (zarr-python 3.2+): a read of a chunk, or of a shard, that
is not stored raises ChunkNotFoundError naming every missing one; an inner chunk missing from
a stored shard reads as the fill value. zarr-python 3.4 is the oracle: the same arrays
written by each library to a store of the same kind, the same selection read by both, with
the native engine and with the Python one, from memory, directory and ZIP stores."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import ChunkNotFoundError

zarr = pytest.importorskip("zarr")

ENGINES = ["auto", "python"]
STORES = ["memory", "directory", "zip"]

# (shape, chunks, shards, zarr_format, extra create_array options)
LAYOUTS: dict[str, dict[str, Any]] = {
    "plain": {"shape": (12, 9), "chunks": (3, 4)},
    "v2": {"shape": (12, 9), "chunks": (3, 4), "zarr_format": 2},
    "sharded": {"shape": (12, 9), "chunks": (2, 2), "shards": (4, 4)},
}
# Regions written (the others missing), each chunk (shard) once (a ZIP archive stores a
# rewritten member twice): of the sharded layout's shard (1, 1), only its lower inner
# chunks are stored.
WRITES = [np.s_[0:3, 0:4], np.s_[6:9, 4:8], np.s_[9:10, 8:9]]

SELECTIONS: dict[str, Callable[[Any], Any]] = {
    "all": lambda a: a[...],
    "written chunk": lambda a: a[0:2, 0:2],
    "inner chunks of a stored shard": lambda a: a[4:6, 4:8],
    "slice": lambda a: a[1:8:2, 2:9],
    "scalar": lambda a: a[4, 5],
    "oindex": lambda a: a.oindex[[9, 0, 4], [1, 7]],
    "vindex": lambda a: a.vindex[[0, 9, 5], [0, 8, 1]],
    "blocks": lambda a: a.blocks[1, 1],
    "empty": lambda a: a[3:3, :],
}


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    with zk.config.set(engine=request.param):
        yield request.param


def _data(shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    return np.arange(int(np.prod(shape)), dtype="i2").reshape(shape) + 1


def _open_store(library: Any, kind: str, path: Path, mode: str) -> Any:
    storage = library.storage
    if kind == "directory":
        return storage.LocalStore(str(path / "a.zarr"))
    if kind == "zip":
        if library is zarr:
            return storage.ZipStore(str(path / "a.zip"), mode=mode)
        return storage.ZipStore(path / "a.zip", mode=mode)
    return storage.MemoryStore()


def _write(library: Any, kind: str, path: Path, layout: dict[str, Any],
           writes: list[Any]) -> Any:
    """The array of ``layout`` with ``writes`` stored, and the store to read it from."""
    store = _open_store(library, kind, path, "w")
    array = library.create_array(store, dtype="i2", fill_value=-1, **layout)
    data = _data(layout["shape"])
    for region in writes:
        array[region] = data[region]
    if kind == "zip":
        store.close()
        store = _open_store(library, kind, path, "r")
    return store


def _outcome(read: Callable[[], Any], error: type[Exception]) -> tuple[str, Any]:
    try:
        return "value", np.asarray(read()).tolist()
    except error as e:
        # The store is named differently by each library (ids, paths); zarr-python shows
        # an index array's chunk coordinates as numpy integers.
        message = re.sub(r"in store '[^']*'", "in store <store>", str(e))
        return "error", re.sub(r"np\.int64\((\d+)\)", r"\1", message)


def _both(kind: str, tmp_path: Path, layout: dict[str, Any], writes: list[Any],
          config_style: str = "argument") -> tuple[Any, Any]:
    """zarrkit's and zarr-python's handles on the same array, with read_missing_chunks
    off (given to open_array, or by the global setting)."""
    ours_store = _write(zk, kind, tmp_path / "zk", layout, writes)
    theirs_store = _write(zarr, kind, tmp_path / "zarr", layout, writes)
    if config_style == "argument":
        ours = zk.open_array(ours_store, config={"read_missing_chunks": False})
        theirs = zarr.open_array(theirs_store, config={"read_missing_chunks": False})
    else:
        with zk.config.set({"array.read_missing_chunks": False}), \
                zarr.config.set({"array.read_missing_chunks": False}):
            ours = zk.open_array(ours_store)
            theirs = zarr.open_array(theirs_store)
    return ours, theirs


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", STORES)
def test_reads_as_zarr_python(engine: str, kind: str, layout: str, tmp_path: Path) -> None:
    (tmp_path / "zk").mkdir()
    (tmp_path / "zarr").mkdir()
    ours, theirs = _both(kind, tmp_path, LAYOUTS[layout], WRITES)
    raised = 0
    for name, select in SELECTIONS.items():
        expected = _outcome(functools.partial(select, theirs),
                            zarr.errors.ChunkNotFoundError)
        assert _outcome(functools.partial(select, ours), ChunkNotFoundError) == expected, name
        raised += expected[0] == "error"
    assert raised >= 4  # the test reads missing chunks, not only stored ones


@pytest.mark.parametrize("kind", STORES)
def test_global_setting_and_fill_when_on(engine: str, kind: str, tmp_path: Path) -> None:
    (tmp_path / "zk").mkdir()
    (tmp_path / "zarr").mkdir()
    layout = LAYOUTS["sharded"]
    ours, theirs = _both(kind, tmp_path, layout, WRITES, config_style="global")
    assert ours.config == ours.config.__class__(**theirs.config.to_dict())
    expected = _outcome(lambda: theirs[...], zarr.errors.ChunkNotFoundError)
    assert expected[0] == "error"
    assert _outcome(lambda: ours[...], ChunkNotFoundError) == expected
    # The default handle fills, as before.
    filled = ours.with_config({"read_missing_chunks": True})
    np.testing.assert_array_equal(filled[...], theirs.with_config(
        {"read_missing_chunks": True})[...])


def test_error_is_a_value_error_naming_store_and_keys(engine: str) -> None:
    group = zk.group({})
    array = group.create_array("x/y", shape=(4,), chunks=(2,), dtype="u1",
                               config={"read_missing_chunks": False})
    with pytest.raises(ValueError, match=r"1 chunk\(s\) not found in store 'memory://\d+/x/y'"
                       r"(.|\n)*chunk 'c/0' \(grid position \(0,\)\)"):
        array[:2]
    array[:2] = 5  # writes never raise: a partial write of a missing chunk fills it
    array[2] = 1
    assert array[:].tolist() == [5, 5, 1, 0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_arrays_as_zarr_python(data: st.DataObject) -> None:
    """Random grids (plain and sharded), stored regions and selections, memory stores."""
    sharded = data.draw(st.booleans(), label="sharded")
    ndim = data.draw(st.integers(1, 2), label="ndim")
    inner = tuple(data.draw(st.integers(1, 3)) for _ in range(ndim))
    per_shard = tuple(data.draw(st.integers(1, 3)) for _ in range(ndim))
    grid = tuple(i * p for i, p in zip(inner, per_shard, strict=True)) if sharded else inner
    shape = tuple(data.draw(st.integers(1, 3 * g + 1)) for g in grid)
    layout: dict[str, Any] = {"shape": shape, "chunks": inner}
    if sharded:
        layout["shards"] = grid
    region = st.tuples(*(st.integers(0, n).flatmap(
        lambda lo, n=n: st.integers(lo, n).map(lambda hi, lo=lo: slice(lo, hi)))
        for n in shape))
    writes = data.draw(st.lists(region, max_size=3), label="writes")
    selection = data.draw(region, label="selection")
    engine = data.draw(st.sampled_from(ENGINES), label="engine")
    with zk.config.set(engine=engine):
        ours = zk.create_array({}, dtype="i2", fill_value=-1, **layout)
        theirs = zarr.create_array({}, dtype="i2", fill_value=-1, **layout)
        values = _data(shape)
        for written in writes:
            ours[written] = values[written]
            theirs[written] = values[written]
        ours = ours.with_config({"read_missing_chunks": False})
        theirs = theirs.with_config({"read_missing_chunks": False})
        assert (_outcome(lambda: ours[selection], ChunkNotFoundError)
                == _outcome(lambda: theirs[selection], zarr.errors.ChunkNotFoundError))
