"""xarray parity, both ways, against xarray's own zarr backend on zarr-python as the oracle.

- Reading: for any dataset that ``Dataset.to_zarr`` writes (formats 2 and 3, consolidated
  or not), ``engine="zarrkit"`` gives every variable the dtype, values, attributes and
  ``encoding`` that ``engine="zarr"`` gives, before loading (lazily) and after.
- Writing: :func:`zarrkit.xarray.to_zarrkit` writes the metadata documents ``to_zarr``
  writes (``.zarray``, ``.zattrs``, ``.zgroup``, ``zarr.json``, ``.zmetadata``: every
  field, fill values included), the same encoded values, and ``xr.open_zarr`` reads both
  stores back identical; appends and region writes too, on a dask.distributed cluster.

Normalisations (the only places where the two sides are compared other than by plain,
type-strict equality), each because the objects differ by nature, not by content:

- codecs in ``encoding["compressors"]``, ``["filters"]``, ``["serializer"]``: zarr-python's
  format-3 codec objects against the JSON zarrkit puts there (zarr-python refuses zarrkit's
  codec objects, so a dataset opened by zarrkit could not be written by ``to_zarr``); both
  are compared as that JSON, ``codec.to_dict()`` on zarr-python's side. Format-2 codecs
  are numcodecs objects on both sides and compared as they are.
"""

from __future__ import annotations

import json
import math
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

dask = pytest.importorskip("dask")
xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("distributed")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from zarrkit.xarray import to_zarrkit  # noqa: E402

# Dataset.chunk makes object-dtype strings dask arrays too; xarray warns on encoding them.
pytestmark = pytest.mark.filterwarnings(
    "ignore:variable .* has data in the form of a dask array")

METADATA_KEYS = (".zarray", ".zattrs", ".zgroup", ".zmetadata", "zarr.json")
CODEC_KEYS = ("compressors", "filters", "serializer")


@pytest.fixture(autouse=True)
def _synchronous_dask() -> Iterator[None]:
    # Tests compute in this process unless they say otherwise (the cluster tests do).
    with dask.config.set(scheduler="synchronous"):
        yield


# --- the datasets ----------------------------------------------------------------------------

def _with_holes(values: np.ndarray, holes: list[bool], missing: Any) -> np.ndarray:
    values = values.copy()
    values[np.array(holes[:values.size]).reshape(values.shape)] = missing
    return values


@st.composite
def datasets(draw: st.DrawFn, zarr_format: int) -> Any:
    """A small dataset of the kinds ``to_zarr`` encodes: floats with NaN (NaN fills),
    integers with an integer ``_FillValue``, packed scale/offset, booleans, datetime64 and
    timedelta64 with NaT (CF times), variable-length strings (empty ones and None too),
    fixed-width ``U`` and ``S``, 0-d scalars, dimension coordinates (times, strings or
    integers) and a non-dimension coordinate; with attributes, and at times chunk (or,
    format 3, shard) encodings or dask-backed variables."""
    nt = draw(st.integers(1, 5))
    nx = draw(st.integers(1, 4))
    holes = draw(st.lists(st.booleans(), min_size=nt * nx, max_size=nt * nx))
    words = draw(st.lists(st.sampled_from(["", "a", "bb", "ccc", "été", "x y"]),
                          min_size=nx, max_size=nx))
    kinds = draw(st.sets(st.sampled_from([
        "float64", "float32", "int_fill", "int_plain", "packed", "bool", "datetime",
        "timedelta", "vlen", "vlen_none", "fixed_u", "fixed_s", "scalar"]), min_size=1))
    start = draw(st.datetimes(min_value=pd.Timestamp("1970-01-01").to_pydatetime(),
                              max_value=pd.Timestamp("2100-01-01").to_pydatetime()))
    times = pd.date_range(start, periods=nt, freq=draw(st.sampled_from(["h", "D", "6h"])))
    x_kind = draw(st.sampled_from(["strings", "integers", "none"]))
    base = np.arange(nt * nx, dtype="f8").reshape(nt, nx) + 0.5
    data: dict[str, Any] = {}
    encoding: dict[str, dict[str, Any]] = {}
    if "float64" in kinds:
        data["f64"] = (("time", "x"), _with_holes(base, holes, np.nan),
                       {"units": "K", "long_name": "temperature"})
    if "float32" in kinds:
        data["f32"] = (("time", "x"), _with_holes(base.astype("f4"), holes, np.nan))
    if "int_fill" in kinds:
        data["ifill"] = (("time",), np.arange(nt, dtype="i4") - 1)
        encoding["ifill"] = {"_FillValue": -1}     # the value -1 reads back masked
    if "int_plain" in kinds:
        data["count"] = (("time", "x"), np.arange(nt * nx, dtype="u2").reshape(nt, nx),
                         {"flag_values": [0, 1], "valid_range": [0, 100]})
    if "packed" in kinds:
        data["packed"] = (("time", "x"), _with_holes(base, holes, np.nan))
        encoding["packed"] = {"dtype": "int16", "scale_factor": 0.5, "add_offset": 1.0,
                              "_FillValue": -32767}
    if "bool" in kinds:
        data["flag"] = (("x",), np.array([i % 2 == 0 for i in range(nx)]))
    if "datetime" in kinds:
        stamps = np.array(times.values[:1].repeat(nx) + np.arange(nx) * np.timedelta64(1, "D"))
        data["when"] = (("x",), _with_holes(stamps, holes[::-1], np.datetime64("NaT", "ns")))
    if "timedelta" in kinds:
        spans = np.arange(nt) * np.timedelta64(90, "m")
        data["span"] = (("time",), _with_holes(spans.astype("m8[ns]"), holes,
                                               np.timedelta64("NaT", "ns")))
    if "vlen" in kinds:
        data["label"] = (("x",), np.array(words, dtype=object), {"note": "vlen"})
    if "vlen_none" in kinds:
        data["maybe"] = (("x",), np.array([w or None for w in words], dtype=object))
    if "fixed_u" in kinds:
        data["code"] = (("x",), np.array(words, dtype="U4"))
    if "fixed_s" in kinds:
        data["raw"] = (("x",), np.array([w.encode() for w in words], dtype="S6"))
    if "scalar" in kinds:
        data["scalar"] = ((), draw(st.sampled_from([3.5, np.nan, 7])), {"kind": "0-d"})
    coords: dict[str, Any] = {"time": times}
    if x_kind == "strings":
        coords["x"] = np.array([f"s{i}" if i else "" for i in range(nx)], dtype=object)
    elif x_kind == "integers":
        coords["x"] = np.arange(nx, dtype="i8") * 10
    if draw(st.booleans()):
        coords["lat"] = (("x",), np.linspace(-10.0, 10.0, nx), {"units": "degrees_north"})
    attrs = draw(st.dictionaries(
        st.sampled_from(["title", "history", "version", "scale", "levels", "empty"]),
        st.one_of(st.text(max_size=5), st.integers(-5, 5), st.floats(-10, 10),
                  st.lists(st.integers(0, 9), max_size=3)), max_size=3))
    ds = xr.Dataset(data, coords=coords, attrs=attrs)
    for name, variable_encoding in encoding.items():
        ds[name].encoding.update(variable_encoding)
    if draw(st.booleans()) and "f64" in ds:
        chunk = {"chunks": (min(2, nt), nx)}
        if zarr_format == 3 and draw(st.booleans()):
            chunk = {"chunks": (1, nx), "shards": (min(2, nt), nx)}
        ds["f64"].encoding.update(chunk)
    if draw(st.booleans()):
        ds = ds.chunk({"time": 2})
    return ds


# --- the comparisons -------------------------------------------------------------------------

def same(ours: Any, theirs: Any) -> bool:
    """Equal in type and value, containers item by item, NaN (and NaT) equal to itself."""
    if type(ours) is not type(theirs):
        return False
    if isinstance(ours, dict):
        return ours.keys() == theirs.keys() and all(same(ours[k], theirs[k]) for k in ours)
    if isinstance(ours, (list, tuple)):
        return len(ours) == len(theirs) and all(map(same, ours, theirs))
    if isinstance(ours, np.ndarray):
        return ours.dtype == theirs.dtype and bool(np.array_equal(
            ours, theirs, equal_nan=ours.dtype.kind in "fc"))
    if isinstance(ours, (float, np.floating)) and math.isnan(ours):
        return bool(math.isnan(theirs))
    return bool(ours == theirs)


def codec_config(codec: Any) -> Any:
    """The normalisation of codecs documented at the top of this module."""
    if isinstance(codec, (list, tuple)):
        return tuple(codec_config(c) for c in codec)
    if hasattr(codec, "to_dict") and not hasattr(codec, "get_config"):   # zarr-python's
        return codec.to_dict()
    return codec


def assert_same_encoding(name: str, ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert sorted(ours) == sorted(theirs), f"{name}: encoding keys"
    for key in theirs:
        mine, oracle = ours[key], theirs[key]
        if key in CODEC_KEYS:
            mine, oracle = codec_config(mine), codec_config(oracle)
        assert same(mine, oracle), f"{name}: encoding[{key!r}] {mine!r} != {oracle!r}"


def assert_same_variables(ours: Any, theirs: Any, *, values: bool) -> None:
    """Every variable the same dtype, shape, dims, attributes and encoding (and values).

    Not the order of the variables: zarr-python lists a directory store's arrays in the
    file system's order, zarrkit sorted."""
    assert sorted(ours.variables) == sorted(theirs.variables)
    assert same(ours.attrs, theirs.attrs)
    for name in theirs.variables:
        mine, oracle = ours.variables[name], theirs.variables[name]
        assert (mine.dims, mine.shape) == (oracle.dims, oracle.shape), name
        assert (mine.dtype, mine.dtype.metadata) == (oracle.dtype, oracle.dtype.metadata), (
            f"{name}: dtype {mine.dtype} != {oracle.dtype}")
        assert same(mine.attrs, oracle.attrs), f"{name}: attrs {mine.attrs} != {oracle.attrs}"
        assert_same_encoding(str(name), mine.encoding, oracle.encoding)
        if values:
            xr.testing.assert_identical(mine, oracle)


def write_with_xarray(ds: Any, path: Path, **kwargs: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # zarr-python's v3 string and consolidation notes
        ds.to_zarr(path, **kwargs)


def open_dataset(path: Path, engine: str, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_dataset(path, engine=engine, **kwargs)


def open_with_zarr(path: Path, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_zarr(path, **kwargs).load()


def metadata_documents(path: Path) -> dict[str, Any]:
    """Every metadata document of a store, by key, as JSON."""
    return {str(p.relative_to(path)): json.loads(p.read_text())
            for p in sorted(path.rglob("*")) if p.name in METADATA_KEYS}


def chunk_keys(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")
            if p.is_file() and p.name not in METADATA_KEYS}


def differences(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """Where two JSON documents differ, field by field (types too: 0 is not 0.0)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        found = [f"{where}/{k}: only in {'ours' if k in ours else 'theirs'}"
                 for k in ours.keys() ^ theirs.keys()]
        for key in sorted(ours.keys() & theirs.keys()):
            found += differences(ours[key], theirs[key], f"{where}/{key}")
        return found
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [d for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
                for d in differences(a, b, f"{where}[{i}]")]
    if type(ours) is not type(theirs) or ours != theirs:
        return [f"{where}: {ours!r} != {theirs!r}"]
    return []


def assert_same_stores(ours: Path, theirs: Path) -> None:
    """The same metadata documents, chunk keys and encoded values (read by zarr-python)."""
    mine, oracle = metadata_documents(ours), metadata_documents(theirs)
    found = differences(mine, oracle)
    assert not found, "\n".join(found)
    # zarr-python skips a chunk equal to the data type's default ("" or 0) when the fill
    # value is null; zarrkit keeps it (a null fill has no value to compare with, and
    # readers other than these two fill missing chunks of such arrays with garbage or
    # None). Both read the same values back, compared below.
    extra = chunk_keys(ours) - chunk_keys(theirs)
    assert chunk_keys(theirs) <= chunk_keys(ours)
    null_filled = {key.split("/")[0] for key, document in oracle.items()
                   if key.endswith((".zarray", "zarr.json")) and "/" in key
                   and document.get("fill_value", 0) is None}
    assert {key.split("/")[0] for key in extra} <= null_filled, extra
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours_group, theirs_group = zarr.open_group(ours, mode="r"), zarr.open_group(
            theirs, mode="r")
        for name, array in theirs_group.arrays():
            values, expected = ours_group[name][...], array[...]
            assert values.dtype == expected.dtype, name
            np.testing.assert_array_equal(values, expected, err_msg=name)


# Decoding options both engines take; each changes which attributes and encoding keys a
# variable ends with (masks left as attributes, raw times). Not use_zarr_fill_value_as_mask:
# xarray's zarr backend drops it in open_dataset (it opens the store with None, the
# format's default, whatever was asked: pydata/xarray#10269), which zarrkit honours.
DECODING = st.sampled_from([{}, {"mask_and_scale": False}, {"decode_times": False},
                            {"decode_timedelta": False}, {"decode_cf": False}])

def strings_as_objects(ds: Any) -> Any:
    """``ds`` with its StringDType variables as objects (and no ``dtype`` encoding): what
    ``to_zarr`` needs in format 2. Given a variable read back with its vlen-utf8 filter in
    the encoding, xarray 2026.9 makes the strings fixed-width and zarr-python 3.4.2 then
    writes a "<U" array with a vlen-utf8 filter that it cannot open itself ("No Zarr data
    type found that matches {'name': '<U3', 'object_codec_id': 'vlen-utf8'}"); to_zarrkit
    writes the variable-length strings the variable was read from, as here."""
    replaced = {name: xr.Variable(variable.dims, variable.values.astype(object),
                                  variable.attrs, {k: v for k, v in variable.encoding.items()
                                                   if k != "dtype"})
                for name, variable in ds.variables.items() if variable.dtype.kind == "T"}
    return ds.assign_coords({k: v for k, v in replaced.items() if k in ds.coords}).assign(
        {k: v for k, v in replaced.items() if k not in ds.coords})


FORMATS = pytest.mark.parametrize(("zarr_format", "consolidated"),
                                  [(2, True), (2, False), (3, True), (3, False)])
PROPERTY = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# --- engine="zarrkit" reads what to_zarr writes, as engine="zarr" does -------------------------

@FORMATS
@PROPERTY
@given(data=st.data())
def test_engine_zarrkit_reads_to_zarr_stores_as_engine_zarr(data: st.DataObject,
                                                            zarr_format: int,
                                                            consolidated: bool) -> None:
    ds = data.draw(datasets(zarr_format))
    options = data.draw(DECODING, label="decoding options")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.zarr"
        write_with_xarray(ds, path, zarr_format=zarr_format, consolidated=consolidated)
        theirs = open_dataset(path, "zarr", consolidated=consolidated, **options)
        ours = open_dataset(path, "zarrkit", consolidated=consolidated, **options)
        assert_same_variables(ours, theirs, values=False)    # lazily: nothing loaded
        assert_same_variables(ours.load(), theirs.load(), values=True)
        # ... and as dask arrays, block for block.
        theirs = open_dataset(path, "zarr", chunks={}, **options)
        ours = open_dataset(path, "zarrkit", chunks={}, **options)
        assert {k: v.chunks for k, v in ours.variables.items()} == {
            k: v.chunks for k, v in theirs.variables.items()}
        assert_same_variables(ours.compute(), theirs.compute(), values=True)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_variable_length_strings_keep_numpy_stringdtype_and_their_encoding(
        tmp_path: Path, zarr_format: int) -> None:
    # The defect: zarrkit's backend gave StringDType without encoding["dtype"], so xarray's
    # decoding turned it into objects and dropped chunks, compressors... (and fill_value).
    ds = xr.Dataset({"label": (("x",), np.array(["a", "", "ccc"], dtype=object))},
                    coords={"x": np.array(["p", "", "q"], dtype=object)})
    path = tmp_path / "s.zarr"
    write_with_xarray(ds, path, zarr_format=zarr_format)
    theirs, ours = open_dataset(path, "zarr"), open_dataset(path, "zarrkit")
    for name in ("label", "x"):
        assert ours[name].dtype == theirs[name].dtype == np.dtypes.StringDType()
        expected = {"chunks", "preferred_chunks", "compressors", "filters", "shards", "dtype"}
        if zarr_format == 3:
            expected |= {"serializer", "fill_value"}
        assert set(ours[name].encoding) == set(theirs[name].encoding) == expected
        assert ours[name].values.tolist() == ["a", "", "ccc"] if name == "label" else True
    assert ours["x"].values.tolist() == ["p", "", "q"]


def test_sharded_arrays_prefer_their_inner_chunks_as_engine_zarr(tmp_path: Path) -> None:
    ds = xr.Dataset({"v": (("y", "x"), np.arange(48.0).reshape(8, 6))})
    path = tmp_path / "sh.zarr"
    write_with_xarray(ds, path, encoding={"v": {"chunks": (2, 3), "shards": (4, 6)}})
    theirs, ours = open_dataset(path, "zarr"), open_dataset(path, "zarrkit")
    assert_same_variables(ours, theirs, values=False)
    assert ours["v"].encoding["preferred_chunks"] == {"y": 2, "x": 3}
    assert ours["v"].encoding["serializer"] == {"name": "bytes",
                                                "configuration": {"endian": "little"}}


# --- to_zarrkit writes what to_zarr writes ----------------------------------------------------

@FORMATS
@PROPERTY
@given(data=st.data())
def test_to_zarrkit_writes_what_to_zarr_writes(data: st.DataObject, zarr_format: int,
                                               consolidated: bool) -> None:
    ds = data.draw(datasets(zarr_format))
    reopened_by = data.draw(st.sampled_from([None, "zarr", "zarrkit"]), label="reopened by")
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = Path(tmp) / "ours.zarr", Path(tmp) / "theirs.zarr"
        if reopened_by is not None:
            # A dataset read from a store (with the encoding its reader gave it: codecs,
            # chunks, fill values, string dtypes), then written anew by either writer.
            source = Path(tmp) / "source.zarr"
            write_with_xarray(ds, source, zarr_format=zarr_format)
            ds = open_dataset(source, reopened_by).load()
        to_zarrkit(ds, ours, zarr_format=zarr_format, consolidated=consolidated)
        write_with_xarray(ds if zarr_format == 3 else strings_as_objects(ds), theirs,
                          zarr_format=zarr_format, consolidated=consolidated)
        assert_same_stores(ours, theirs)
        xr.testing.assert_identical(open_with_zarr(ours, consolidated=consolidated),
                                    open_with_zarr(theirs, consolidated=consolidated))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_empty_strings_survive_a_round_trip_through_open_zarr(tmp_path: Path,
                                                             zarr_format: int) -> None:
    # The defect: to_zarrkit wrote format-2 object strings with "fill_value": "", which
    # xarray's zarr backend takes as the _FillValue mask: every "" read back as NaN.
    ds = xr.Dataset({"label": (("x",), np.array(["a", "", "ccc"], dtype=object))},
                    coords={"x": np.array(["", "q", "r"], dtype=object)})
    path = tmp_path / "e.zarr"
    to_zarrkit(ds, path, zarr_format=zarr_format)
    back = open_with_zarr(path)
    xr.testing.assert_identical(back, ds)
    assert back["label"].values.tolist() == ["a", "", "ccc"]
    if zarr_format == 2:
        assert json.loads((path / "label" / ".zarray").read_text())["fill_value"] is None


@pytest.mark.parametrize("engine", ["zarr", "zarrkit"])
def test_a_format_2_string_variable_read_back_is_written_as_variable_length_strings(
        tmp_path: Path, engine: str) -> None:
    # Read back, a format-2 string variable is StringDType with its vlen-utf8 filter in
    # the encoding; xarray's encoding makes it fixed-width, which to_zarrkit refused
    # (MetadataError: vlen-utf8 on "<U3") and to_zarr writes unreadably (strings_as_objects).
    source, target = tmp_path / "source.zarr", tmp_path / "target.zarr"
    ds = xr.Dataset({"label": (("x",), np.array(["a", "", "ccc"], dtype=object))},
                    coords={"x": np.array(["p", "", "q"], dtype=object)})
    write_with_xarray(ds, source, zarr_format=2)
    to_zarrkit(open_dataset(source, engine).load(), target, zarr_format=2)
    for name in ("label", "x"):
        document = json.loads((target / name / ".zarray").read_text())
        assert (document["dtype"], document["filters"], document["fill_value"]) == (
            "|O", [{"id": "vlen-utf8"}], None)
    xr.testing.assert_identical(open_with_zarr(target), open_with_zarr(source))


# --- appends and region writes on a dask.distributed cluster ---------------------------------

@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        yield c


def series(start: int, steps: int) -> Any:
    """Steps ``start`` to ``start + steps`` of an hourly dataset with every kind of value
    whose encoding an append must follow (packed floats, times, empty strings)."""
    times = pd.date_range("2001-01-01", periods=start + steps, freq="h")[start:]
    temp = np.arange(start * 3, (start + steps) * 3, dtype="f8").reshape(steps, 3) / 4
    temp[::2, 1] = np.nan
    names = np.array([["", "a", "bb"][(start + i) % 3] for i in range(steps)], dtype=object)
    return xr.Dataset(
        {"temp": (("time", "x"), temp, {"units": "K"}),
         "name": (("time",), names),
         "code": (("x",), np.array(["", "b", "c"], dtype=object))},
        coords={"time": times, "x": np.array(["p", "", "r"], dtype=object)},
        attrs={"title": "series"})


ENCODING = {"temp": {"dtype": "int16", "scale_factor": 0.25, "_FillValue": -1,
                     "chunks": (2, 3)},
            "time": {"units": "hours since 2001-01-01", "chunks": (2,)},
            "name": {"chunks": (2,)}}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_appends_on_a_cluster_match_to_zarr(client: Any, tmp_path: Path,
                                             zarr_format: int) -> None:
    parts = [series(0, 4), series(4, 2), series(6, 3)]
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    write_with_xarray(parts[0].chunk({"time": 2}), theirs, zarr_format=zarr_format,
                      encoding=ENCODING)
    for part in parts[1:]:
        write_with_xarray(part.chunk({"time": 2}), theirs, mode="a", append_dim="time")
    with dask.config.set(scheduler=client):
        to_zarrkit(parts[0].chunk({"time": 2}), ours, zarr_format=zarr_format,
                   encoding=ENCODING)
        for part in parts[1:]:
            to_zarrkit(part.chunk({"time": 2}), ours, mode="a", append_dim="time")
    assert_same_stores(ours, theirs)
    whole = xr.concat(parts, "time", data_vars="minimal", coords="minimal",
                      compat="override", join="exact")
    xr.testing.assert_identical(open_with_zarr(ours), open_with_zarr(theirs))
    xr.testing.assert_identical(open_with_zarr(ours), whole)


@pytest.mark.parametrize("template", ["to_zarr(compute=False)", "each writer, whole"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_region_writes_on_a_cluster_match_to_zarr(client: Any, tmp_path: Path,
                                                  zarr_format: int, template: str) -> None:
    full = series(0, 6)
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    if template == "to_zarr(compute=False)":
        for path in (ours, theirs):   # metadata and indexes only: values come in slabs
            write_with_xarray(full.chunk(), path, compute=False, zarr_format=zarr_format,
                              encoding=ENCODING)
    else:   # the whole dataset first, by either writer, then slabs of new values
        write_with_xarray(full, theirs, zarr_format=zarr_format, encoding=ENCODING)
        to_zarrkit(full, ours, zarr_format=zarr_format, encoding=ENCODING)
        full = full.assign(temp=full["temp"] * 2 + 1, name=("time", full["name"].values[::-1]),
                           code=("x", np.array(["z", "", "y"], dtype=object)))
    slabs = [(full.isel(time=slice(2, 6)).drop_vars(["x", "code"]), {"time": slice(2, 6)}),
             (full.isel(time=slice(0, 2)).drop_vars(["x", "code"]), {"time": "auto"}),
             (full[["code"]], "auto")]
    slabs = [(slab.chunk({"time": 2} if "time" in slab.dims else {}), region)
             for slab, region in slabs]
    for slab, region in slabs:
        write_with_xarray(slab, theirs, region=region)
    with dask.config.set(scheduler=client):
        for slab, region in slabs:
            to_zarrkit(slab, ours, region=region)
    assert_same_stores(ours, theirs)
    xr.testing.assert_identical(open_with_zarr(ours), open_with_zarr(theirs))
    xr.testing.assert_identical(open_with_zarr(ours), full)
