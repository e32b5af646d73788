"""to_zarrkit's write modes ("a", "a-", "r+"), append_dim and region, against xarray's own
zarr backend (``Dataset.to_zarr`` on zarr-python) as the oracle: the same sequence of
writes made by either writer reads back the same through either reader."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

dask = pytest.importorskip("dask")
xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")
pd = pytest.importorskip("pandas")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import zarrkit as zk  # noqa: E402
from zarrkit.errors import GroupNotFoundError  # noqa: E402
from zarrkit.xarray import _region_aligned_chunks, to_zarrkit  # noqa: E402

# Dataset.chunk makes the object-dtype "label" a dask array too; xarray warns on encoding it.
pytestmark = pytest.mark.filterwarnings(
    "ignore:variable label has data in the form of a dask array")


@pytest.fixture(autouse=True)
def _synchronous_dask() -> Iterator[None]:
    with dask.config.set(scheduler="synchronous"):
        yield


# Stored encoding of the first write: appended values must follow it (int16 scaled by
# 0.5 with -1 as the mask, times as int64 days since 2000).
ENCODING = {
    "temp": {"dtype": "int16", "scale_factor": 0.5, "_FillValue": -1, "chunks": (2, 4)},
    "time": {"units": "days since 2000-01-01", "dtype": "int64", "chunks": (2,)},
    "count": {"chunks": (2,)},
}


def climate(start: int, steps: int) -> Any:
    """Time steps ``start`` to ``start + steps`` of a small daily dataset."""
    times = pd.date_range("2001-01-01", periods=start + steps, freq="D")[start:]
    temp = np.arange(start * 4, (start + steps) * 4, dtype="f8").reshape(steps, 4) / 2
    if start <= 1 < start + steps:
        temp[1 - start, 2] = np.nan
    return xr.Dataset(
        {"temp": (("time", "x"), temp, {"units": "K"}),
         "count": (("time",), np.arange(start, start + steps, dtype="i4")),
         "label": (("x",), np.array(["a", "bb", "ccc", "d"], dtype=object))},
        coords={"time": times, "x": [10, 20, 30, 40],
                "lat": (("x",), np.linspace(0.0, 1.5, 4))},
        attrs={"title": "demo"})


def chunked(ds: Any) -> Any:
    return ds.chunk({"time": 2})


def numpy_backed(ds: Any) -> Any:
    return ds


def write_with_xarray(ds: Any, path: Path, **kwargs: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # zarr-python's v3 string and consolidation notes
        ds.to_zarr(path, **kwargs)


def open_with_zarr(path: Path, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_zarr(path, **kwargs).load()


def open_with_zarrkit(path: Path, **kwargs: Any) -> Any:
    return xr.open_dataset(path, engine="zarrkit", **kwargs).load()


def assert_reads(paths: list[Path], expected: Any, **kwargs: Any) -> None:
    """Every store reads back as ``expected`` through both readers."""
    for path in paths:
        for reader in (open_with_zarr, open_with_zarrkit):
            xr.testing.assert_identical(reader(path, **kwargs), expected)


def concat(parts: list[Any]) -> Any:
    return xr.concat(parts, "time", data_vars="minimal", coords="minimal",
                     compat="override", join="exact")


# --- append_dim ----------------------------------------------------------------------------

@pytest.mark.parametrize("backing", [numpy_backed, chunked])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_append_matches_to_zarr(tmp_path: Path, zarr_format: int,
                                backing: Callable[[Any], Any]) -> None:
    parts = [climate(0, 3), climate(3, 1), climate(4, 2)]
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    to_zarrkit(backing(parts[0]), ours, zarr_format=zarr_format, encoding=ENCODING)
    write_with_xarray(backing(parts[0]), theirs, zarr_format=zarr_format, encoding=ENCODING)
    for part in parts[1:]:
        to_zarrkit(backing(part), ours, append_dim="time")     # mode None: "a"
        write_with_xarray(backing(part), theirs, append_dim="time")
    assert_reads([ours, theirs], concat(parts))
    assert_reads([ours], concat(parts), consolidated=True)  # the snapshot was refreshed
    for name in ("temp", "time", "count", "label", "lat"):
        mine, oracle = zk.open_array(ours / name, mode="r"), zk.open_array(theirs / name,
                                                                            mode="r")
        assert (mine.shape, mine.chunks, mine.dtype) == (oracle.shape, oracle.chunks,
                                                          oracle.dtype)
        assert mine.attrs.asdict() == oracle.attrs.asdict()
        np.testing.assert_array_equal(mine[...], oracle[...])   # the encoded values
    temp = zk.open_array(ours / "temp", mode="r")
    assert temp.dtype == np.int16 and temp.shape == (6, 4)
    assert temp[1, 2] == -1                                  # NaN: the _FillValue
    time = zk.open_array(ours / "time", mode="r")
    assert time.attrs["units"] == "days since 2000-01-01"   # unchanged by the appends
    np.testing.assert_array_equal(time[:], np.arange(366, 372))
    assert open_with_zarr(ours)["time"].encoding["units"] == "days since 2000-01-01"


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_cross_writer_appends(tmp_path: Path, zarr_format: int) -> None:
    parts = [climate(0, 2), climate(2, 2), climate(4, 1)]
    by_xarray, by_zarrkit = tmp_path / "x.zarr", tmp_path / "k.zarr"
    write_with_xarray(parts[0], by_xarray, zarr_format=zarr_format, encoding=ENCODING)
    to_zarrkit(parts[0], by_zarrkit, zarr_format=zarr_format, encoding=ENCODING)
    to_zarrkit(chunked(parts[1]), by_xarray, append_dim="time")
    write_with_xarray(chunked(parts[1]), by_zarrkit, append_dim="time")
    to_zarrkit(parts[2], by_xarray, mode="a", append_dim="time")
    write_with_xarray(parts[2], by_zarrkit, mode="a", append_dim="time")
    assert_reads([by_xarray, by_zarrkit], concat(parts))


def test_append_into_a_nested_group_keeps_its_format(tmp_path: Path) -> None:
    path = tmp_path / "g.zarr"
    parts = [climate(0, 2), climate(2, 3)]
    to_zarrkit(parts[0], path, group="runs/a", zarr_format=2)
    group = to_zarrkit(parts[1], path, group="runs/a", append_dim="time")
    assert group.zarr_format == 2 and group.path == "runs/a"
    assert_reads([path], concat(parts), group="runs/a")


def test_append_mode_a_dash_leaves_other_variables(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    first = climate(0, 2)
    second = climate(2, 2).assign(label=("x", np.array(["z", "z", "z", "z"], dtype=object)))
    for path in (ours, theirs):
        to_zarrkit(first, path)
    to_zarrkit(second, ours, mode="a-", append_dim="time")
    write_with_xarray(second, theirs, mode="a-", append_dim="time")
    for path in (ours, theirs):
        back = open_with_zarrkit(path)
        assert list(back["label"].values) == ["a", "bb", "ccc", "d"]   # not overwritten
        assert back.sizes["time"] == 4
    xr.testing.assert_identical(open_with_zarr(ours), open_with_zarr(theirs))


def test_append_adds_variables_new_to_the_store(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    first, second = climate(0, 2), climate(2, 2)
    second["depth"] = ("x", np.array([1.0, 2.0, 3.0, 4.0]))
    to_zarrkit(first, ours)
    write_with_xarray(first, theirs)
    to_zarrkit(second, ours, append_dim="time", encoding={"depth": {"chunks": (2,)}})
    write_with_xarray(second, theirs, append_dim="time", encoding={"depth": {"chunks": (2,)}})
    assert zk.open_array(ours / "depth").chunks == (2,)
    for path in (ours, theirs):
        back = open_with_zarrkit(path)
        np.testing.assert_array_equal(back["depth"].values, [1.0, 2.0, 3.0, 4.0])
        assert back.sizes["time"] == 4
    xr.testing.assert_identical(open_with_zarr(ours), open_with_zarr(theirs))


# --- mode "a" without append_dim -------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", [2, 3])
def test_mode_a_overwrites_and_adds_variables(tmp_path: Path, zarr_format: int) -> None:
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    base = climate(0, 4)
    to_zarrkit(base, ours, zarr_format=zarr_format, encoding=ENCODING)
    write_with_xarray(base, theirs, zarr_format=zarr_format, encoding=ENCODING)
    update = xr.Dataset({"temp": base["temp"] + 1.5,
                         "extra": (("x",), np.array([5, 6, 7, 8], dtype="i2"))},
                        attrs={"history": "updated"})
    to_zarrkit(update, ours, mode="a")
    write_with_xarray(update, theirs, mode="a")
    back = open_with_zarr(ours)
    xr.testing.assert_identical(back, open_with_zarr(theirs))
    xr.testing.assert_identical(open_with_zarrkit(ours), back)
    np.testing.assert_array_equal(back["temp"].values, base["temp"].values + 1.5)
    np.testing.assert_array_equal(back["count"].values, base["count"].values)
    assert back.attrs == {"history": "updated"}            # replaced, as to_zarr does
    assert back["temp"].attrs == {"units": "K"}            # the stored array's metadata
    assert zk.open_array(ours / "temp").dtype == np.int16  # ... and its encoding


def test_mode_a_creates_a_missing_group(tmp_path: Path) -> None:
    path = tmp_path / "new.zarr"
    ds = climate(0, 2)
    group = to_zarrkit(ds, path, mode="a")
    assert group.zarr_format == 3
    assert_reads([path], ds)


# --- region ----------------------------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", [2, 3])
def test_region_writes_into_a_template(tmp_path: Path, zarr_format: int) -> None:
    full = climate(0, 6)
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    for path in (ours, theirs):   # metadata and indexes only: values are left to the slabs
        write_with_xarray(full.chunk(), path, compute=False, zarr_format=zarr_format,
                          encoding=ENCODING)
    slabs: list[tuple[Any, Any]] = [
        (full.isel(time=slice(2, 4)).drop_vars(["x", "lat", "label"]),
         {"time": slice(2, 4)}),
        (chunked(full.isel(time=slice(0, 2)).drop_vars(["x", "lat", "label"])),
         {"time": slice(0, 2)}),
        (full.isel(time=slice(4, 6)).drop_vars(["x", "lat", "label"]), {"time": "auto"}),
        (full[["lat", "label"]], "auto"),
    ]
    for slab, region in slabs:
        to_zarrkit(slab, ours, region=region)           # mode None: "r+"
        write_with_xarray(slab, theirs, region=region)
    assert_reads([ours, theirs], full)
    assert_reads([ours], full, consolidated=True)     # r+ left valid metadata as it was


def test_region_with_mode_a_and_a_zarrkit_template(tmp_path: Path) -> None:
    full = climate(0, 6)
    path = tmp_path / "z.zarr"
    to_zarrkit(xr.zeros_like(full), path, zarr_format=2, encoding=ENCODING)
    slab = full.isel(time=slice(1, 5)).drop_vars(["x", "lat", "label"])
    slab.attrs = {"note": "slab"}
    to_zarrkit(slab, path, mode="a", region={"time": slice(1, 5)})
    back = open_with_zarr(path)
    np.testing.assert_array_equal(back["temp"].values[1:5], full["temp"].values[1:5])
    np.testing.assert_array_equal(back["count"].values, [0, 1, 2, 3, 4, 0])
    assert back.attrs == {"note": "slab"}     # mode "a" replaces the group's attributes


def test_unaligned_dask_blocks_are_aligned_with_the_region(tmp_path: Path) -> None:
    path = tmp_path / "u.zarr"
    full = climate(0, 6)
    to_zarrkit(xr.zeros_like(full), path, encoding=ENCODING)   # chunks of 2 along time
    slab = full.isel(time=slice(1, 6)).drop_vars(["x", "lat", "label"]).chunk({"time": 1})
    to_zarrkit(slab, path, region={"time": slice(1, 6)})
    back = open_with_zarrkit(path)
    np.testing.assert_array_equal(back["temp"].values[1:], full["temp"].values[1:])
    np.testing.assert_array_equal(back["count"].values, [0, 1, 2, 3, 4, 5])
    # Blocks are kept when each covers whole chunks of the region (its end chunks may be
    # partly outside it), else rechunked to such blocks.
    array = zk.open_array(path / "count")
    assert _region_aligned_chunks(((1, 2, 2),), array, (slice(1, 6),)) == ((1, 2, 2),)
    assert _region_aligned_chunks(((1, 1, 1, 1, 1),), array, (slice(1, 6),)) == ((1, 2, 2),)
    assert _region_aligned_chunks(((2, 3),), array, (slice(1, 6),)) == ((3, 2),)
    assert _region_aligned_chunks(((2, 2),), array, (slice(2, 6),)) == ((2, 2),)


# --- errors ----------------------------------------------------------------------------------

def both_raise(dataset: Any, path: Path, match: str, **kwargs: Any) -> None:
    """to_zarrkit refuses as to_zarr does (ValueError unless said otherwise)."""
    with pytest.raises(ValueError, match=match):
        to_zarrkit(dataset, path, **kwargs)
    with pytest.raises(ValueError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dataset.to_zarr(path, **kwargs)


def test_errors(tmp_path: Path) -> None:
    path = tmp_path / "e.zarr"
    ds = climate(0, 4)
    to_zarrkit(ds, path, encoding=ENCODING)
    slab = ds.isel(time=slice(0, 2)).drop_vars(["x", "lat", "label"])
    # r+: the group and every variable must exist, shapes must match.
    with pytest.raises(GroupNotFoundError, match="no group"):
        to_zarrkit(ds, tmp_path / "missing.zarr", mode="r+")
    with pytest.raises(GroupNotFoundError):
        to_zarrkit(ds, path, mode="r+", group="nope")
    both_raise(ds.assign(new=ds["count"]), path, "non-pre-existing variables \\['new'\\]",
               mode="r+")
    both_raise(ds.isel(time=slice(0, 3)), path, "different dimension sizes", mode="r+")
    # Modes, append_dim and region.
    both_raise(ds, path, "append_dim", mode="w", append_dim="time")
    both_raise(ds, path, "region", mode="w-", region={"time": slice(0, 2)})
    with pytest.raises(ValueError, match="both append_dim and region"):
        to_zarrkit(slab, path, append_dim="time", region={"time": slice(0, 2)})
    with pytest.raises(ValueError, match="both append_dim and region"):
        to_zarrkit(slab, path, append_dim="x", region={"time": slice(0, 2)})
    with pytest.raises(ValueError, match="mode must be one of"):
        to_zarrkit(ds, path, mode="x")
    # Region: every variable must share a region dimension; slices of step 1 that fit.
    both_raise(ds.isel(time=slice(0, 2)), path,
               "drop_vars\\(\\['label', 'x', 'lat'\\]\\)", region={"time": slice(0, 2)})
    both_raise(slab, path, "step", region={"time": slice(0, 4, 2)})
    both_raise(slab, path, "different dimension sizes", region={"time": slice(3, 5)})
    with pytest.raises(ValueError, match="keys in region"):
        to_zarrkit(slab, path, region={"depth": slice(0, 2)})
    with pytest.raises(KeyError, match="Not all values"):
        to_zarrkit(climate(8, 2).drop_vars(["x", "lat", "label"]), path, region="auto")
    with pytest.raises(ValueError, match="cannot create"):
        to_zarrkit(slab.assign(new=slab["count"]), path, mode="a",
                   region={"time": slice(0, 2)})
    # Encoding is for new variables only.
    both_raise(ds, path, "'temp' already exists, but encoding", mode="a",
               encoding={"temp": {"dtype": "int32"}})
    # Appending: other dimensions keep their sizes; append_dim must exist.
    both_raise(climate(4, 1).isel(x=slice(0, 3)), path, "different dimension sizes",
               append_dim="time")
    both_raise(climate(4, 1), path, "append_dim='depth' does not match", append_dim="depth")
    fresh = tmp_path / "fresh.zarr"
    with pytest.raises(ValueError, match="does not match any existing"):
        to_zarrkit(ds, fresh, append_dim="time")
    with pytest.raises(GroupNotFoundError):   # nothing was created
        zk.open_group(fresh, mode="r")
    with pytest.raises(ValueError, match="zarr_format=2 was given"):
        to_zarrkit(climate(4, 1), path, append_dim="time", zarr_format=2)
    # Nothing above changed the store.
    assert_reads([path], ds)


# --- property --------------------------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(total=st.integers(1, 9), data=st.data(), zarr_format=st.sampled_from([2, 3]),
       chunk=st.integers(1, 4), dask_backed=st.booleans())
def test_appending_the_parts_of_a_series_gives_the_whole(
        total: int, data: st.DataObject, zarr_format: int, chunk: int,
        dask_backed: bool) -> None:
    cuts = sorted(data.draw(st.sets(st.integers(1, total - 1), max_size=3))) if total > 1 \
        else []
    whole = xr.Dataset(
        {"v": (("time",), np.linspace(-1.0, 1.0, total).astype("f4"))},
        coords={"time": pd.date_range("1999-12-30", periods=total, freq="D")})
    bounds = [0, *cuts, total]
    parts = [whole.isel(time=slice(a, b)) for a, b in zip(bounds, bounds[1:], strict=False)]
    store: dict[str, bytes] = {}
    for i, part in enumerate(parts):
        if dask_backed:
            part = part.chunk({"time": chunk})
        if i == 0:
            to_zarrkit(part, store, zarr_format=zarr_format,
                       encoding={"v": {"chunks": (chunk,)}})
        else:
            to_zarrkit(part, store, append_dim="time")
    back = xr.open_dataset(store, engine="zarrkit").load()
    xr.testing.assert_identical(back, whole)
    assert zk.open_array(store, path="v", mode="r").chunks == (chunk,)
    time = zk.open_array(store, path="time", mode="r")
    assert time.attrs["units"] == "days since 1999-12-30 00:00:00"
