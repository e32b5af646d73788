"""zarrkit.models.validation: live hierarchies checked against specs (every violation,
with its path), and the xarray convention (zarrkit.models.conventions.xarray)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import zarr
from pydantic import model_validator
from typing_extensions import TypedDict

import zarrkit as zk
from zarrkit.errors import SpecError, SpecValidationError
from zarrkit.models import v2, v3
from zarrkit.models.conventions import xarray
from zarrkit.models.validation import Violation, validate


def kinds(violations: list[Violation]) -> list[tuple[str, str]]:
    return [(v.path, v.kind) for v in violations]


class Labels(TypedDict):
    names: list[str]


def array_v3(shape: tuple[int, ...], dtype: str, chunks: tuple[int, ...],
             **overrides: Any) -> v3.ArraySpec[Any]:
    return v3.ArraySpec.from_array(np.zeros(shape, dtype=dtype), chunks=chunks, **overrides)


def survey_spec() -> v3.GroupSpec[Any, Any]:
    labels = array_v3((3,), "i4", (3,)).to_json()
    labels["attributes"] = {"names": ["a", "b", "c"]}
    return v3.GroupSpec(attributes={"title": "survey"}, members={
        "temp": array_v3((4, 6), "f4", (2, 3), attributes={"units": "K"}),
        "mask": array_v3((4, 6), "bool", (4, 6)),
        "labels": v3.ArraySpec[Labels].model_validate(labels),
        "gone": array_v3((2,), "u1", (2,)),
        "node": v3.GroupSpec(),
        "meta": v3.GroupSpec(attributes={"version": 1}),
        "sub": v3.GroupSpec(members={"depth": array_v3((10,), "i2", (5,))}),
    })


def broken_survey() -> tuple[zk.Group, v3.GroupSpec[Any, Any]]:
    """The survey hierarchy, written from its spec, then changed in ten ways."""
    spec = survey_spec()
    root = spec.to_store({})
    del root["gone"]
    root.create_array("temp", shape=(4, 6), chunks=(2, 3), dtype="f8", overwrite=True)
    root.create_array("mask", shape=(4, 5), chunks=(4, 6), dtype="bool", overwrite=True)
    root["labels"].attrs["names"] = "a,b,c"
    del root["node"]
    root.create_array("node", shape=(1,), dtype="u1")
    root["meta"].attrs["version"] = 2
    root.create_array("sub/depth", shape=(10,), chunks=(2,), dtype="i2", compressors=None,
                      overwrite=True)
    root.create_group("stray")
    return root, spec


# --- a report of every violation ---------------------------------------------------------


def test_a_conforming_hierarchy_has_no_violations():
    spec = survey_spec()
    root = spec.to_store({})
    assert validate(root, spec, closed=True) == []
    assert validate(root.store, spec, closed=True) == []


def test_every_violation_is_reported_with_its_path():
    root, spec = broken_survey()
    found = validate(root, spec, closed=True)
    assert kinds(found) == [
        ("/gone", "missing"),
        ("/labels", "attribute_type"),
        ("/mask", "shape"),
        ("/meta", "attribute_value"),
        ("/node", "node_type"),
        ("/stray", "extra"),
        ("/sub/depth", "chunk_grid"),
        ("/sub/depth", "codecs"),
        ("/temp", "data_type"),
        ("/temp", "missing_attribute"),
    ]
    by_kind = {v.kind: v for v in found}
    assert (by_kind["shape"].expected, by_kind["shape"].found) == ([4, 6], [4, 5])
    assert (by_kind["data_type"].expected, by_kind["data_type"].found) == ("float32",
                                                                           "float64")
    assert by_kind["chunk_grid"].found["configuration"] == {"chunk_shape": [2]}
    assert [c["name"] for c in by_kind["codecs"].expected] == ["bytes", "zstd"]
    assert [c["name"] for c in by_kind["codecs"].found] == ["bytes"]
    assert (by_kind["missing_attribute"].expected, by_kind["missing_attribute"].found) == (
        "K", None)
    assert (by_kind["attribute_type"].expected, by_kind["attribute_type"].found) == (
        "list[str]", "a,b,c")
    assert (by_kind["node_type"].expected, by_kind["node_type"].found) == ("group", "array")
    assert (by_kind["missing"].expected, by_kind["extra"].found) == ("array", "group")
    assert str(by_kind["shape"]) == "/mask: shape: expected [4, 6], found [4, 5]"
    assert str(by_kind["missing_attribute"]) == \
        "/temp: missing_attribute: attribute 'units' is missing (the spec has 'K')"
    assert str(by_kind["attribute_type"]) == \
        "/labels: attribute_type: attribute 'names': Input should be a valid list"


def test_extra_members_count_only_when_closed():
    root, spec = broken_survey()
    assert ("/stray", "extra") not in kinds(validate(root, spec))
    assert kinds(validate(root, spec, closed=True)).count(("/stray", "extra")) == 1
    # Below a member the spec does not list nothing is looked at.
    root.create_array("stray/deeper", shape=(1,), dtype="u1")
    assert [v.path for v in validate(root, spec, closed=True) if v.kind == "extra"] == [
        "/stray"]


def test_strict_raises_with_every_violation():
    root, spec = broken_survey()
    found = validate(root, spec, closed=True)
    with pytest.raises(SpecValidationError) as raised:
        validate(root, spec, closed=True, strict=True)
    assert raised.value.violations == found
    assert len(raised.value.violations) == 10
    assert "/mask: shape: expected [4, 6], found [4, 5]" in str(raised.value)
    assert validate(spec.to_store({}), spec, strict=True) == []


def test_v2_fields_each_have_their_kind():
    spec = v2.GroupSpec(members={
        "a": v2.ArraySpec(shape=(8, 8), chunks=(4, 4), dtype="<i4", fill_value=0,
                          compressor={"id": "zstd"}, order="C"),
        "b": v2.ArraySpec(shape=(5,), chunks=(5,), dtype="<f8", fill_value="NaN",
                          filters=[{"id": "delta", "dtype": "<f8"}]),
    })
    root = zk.group({}, zarr_format=2)
    root.create_array("a", shape=(8, 8), chunks=(8, 2), dtype="<i8", fill_value=1,
                      compressors=[{"id": "zlib", "level": 1}], order="F")
    root.create_array("b", shape=(5,), chunks=(5,), dtype="<f8", fill_value=0.0,
                      compressor=None, dimension_separator="/")
    assert kinds(validate(root, spec)) == [
        ("/a", "dtype"), ("/a", "chunks"), ("/a", "fill_value"), ("/a", "order"),
        ("/a", "compressor"),
        ("/b", "fill_value"), ("/b", "filters"), ("/b", "dimension_separator"),
    ]
    b_fill = next(v for v in validate(root, spec) if v.path == "/b" and
                  v.kind == "fill_value")
    assert (b_fill.expected, b_fill.found) == ("NaN", 0.0)


def test_the_root_itself():
    spec = v3.GroupSpec(members={"x": array_v3((2,), "u1", (2,))})
    store: dict[str, Any] = {}
    spec.to_store(store, "data")
    assert validate(store, spec, path="data") == []
    assert validate(zk.open_group(store, mode="r"), spec, path="data") == []
    assert kinds(validate(store, spec, path="elsewhere")) == [("", "missing")]
    assert kinds(validate(store, spec.members["x"], path="data")) == [("", "node_type")]
    assert validate(store, spec.members["x"], path="data/x") == []
    assert validate(zk.open(store, path="data/x"), spec.members["x"]) == []
    # The same layout in the other format is a format violation, not a missing node.
    v2_store: dict[str, Any] = {}
    zk.group(v2_store, zarr_format=2)
    [found] = validate(v2_store, spec)
    assert (found.path, found.kind, found.expected, found.found) == ("", "zarr_format", 3, 2)
    assert kinds(validate(zk.open_group(v2_store), spec)) == [("", "zarr_format")]


def test_a_member_of_the_other_format_is_missing_with_a_note():
    spec = v3.GroupSpec(members={"x": array_v3((2,), "u1", (2,))})
    store: dict[str, Any] = {}
    zk.group(store, zarr_format=3)
    zk.create_array(store, name="x", shape=(2,), dtype="u1", zarr_format=2)
    [found] = validate(store, spec)
    assert (found.path, found.kind) == ("/x", "missing")
    assert "Zarr v2 array is there" in found.message


def test_spec_arguments():
    spec = v3.GroupSpec(attributes={"a": 1})
    root = spec.to_store({})
    assert validate(root, spec.to_json()) == []
    assert kinds(validate(root, {"zarr_format": 3, "attributes": {"a": 2}})) == [
        ("", "attribute_value")]
    with pytest.raises(SpecError):
        validate(root, {"attributes": {}})  # which format?
    with pytest.raises(SpecError):
        validate(root, object())
    with pytest.raises(SpecError):
        validate(root, {"zarr_format": 3, "node_type": "group", "members": {"a/b": {}}})


# --- the attribute rule ------------------------------------------------------------------


def test_untyped_spec_attributes_are_required_values():
    spec = v3.GroupSpec(attributes={"title": "survey", "version": 1, "flag": True,
                                    "nested": {"a": [1, 2]}})
    root = zk.group({}, zarr_format=3, attributes={"title": "survey", "version": 1.0,
                                                   "flag": 1, "nested": {"a": [1, 2, 3]},
                                                   "other": "allowed"})
    found = validate(root, spec)
    # 1 and 1.0 are the same JSON number; true is not 1.
    assert kinds(found) == [("", "attribute_value"), ("", "attribute_value")]
    assert [v.message.split(":")[0] for v in found] == ["attribute 'flag'",
                                                         "attribute 'nested'"]


def test_typed_spec_attribute_values_are_examples():
    labels = array_v3((3,), "i4", (3,)).to_json()
    labels["attributes"] = {"names": ["a", "b", "c"]}
    spec = v3.GroupSpec(members={"labels": v3.ArraySpec[Labels].model_validate(labels)})
    root = zk.group({}, zarr_format=3)
    root.create_array("labels", shape=(3,), chunks=(3,), dtype="i4",
                      attributes={"names": ["x"]})
    assert validate(root, spec) == []  # another list of strings: fine
    root["labels"].attrs["names"] = ["x", 2]
    [found] = validate(root, spec)
    assert (found.path, found.kind, found.found) == ("/labels", "attribute_type", 2)
    assert found.message == "attribute 'names'[1]: Input should be a valid string"
    del root["labels"].attrs["names"]
    [found] = validate(root, spec)
    assert (found.path, found.kind, found.expected) == ("/labels", "missing_attribute",
                                                        "list[str]")


def test_value_dependent_validators_run_on_the_live_node():
    class Positive(v3.ArraySpec[Any]):
        @model_validator(mode="after")
        def _check_first_dimension(self) -> Positive:
            if self.shape[0] % 2:
                raise ValueError("the first dimension must be even")
            return self

    spec = v3.GroupSpec(members={"x": Positive.model_validate(
        array_v3((4,), "u1", (4,)).to_json())})
    root = zk.group({}, zarr_format=3)
    root.create_array("x", shape=(5,), chunks=(4,), dtype="u1")
    assert kinds(validate(root, spec)) == [("/x", "shape"), ("/x", "invalid")]
    assert str(validate(root, spec)[1]) == "/x: invalid: the first dimension must be even"


# --- zarr-python's hierarchies ----------------------------------------------------------


def write_with_zarr_python(path: str, zarr_format: int, consolidated: bool) -> None:
    root = zarr.open_group(path, mode="w", zarr_format=zarr_format,
                           attributes={"title": "t"})
    extra = {"dimension_names": ["y", "x"]} if zarr_format == 3 else {}
    root.create_array("temp", shape=(4, 6), chunks=(2, 3), dtype="f4", fill_value=np.nan,
                      attributes={"units": "K"}, **extra)
    sub = root.create_group("sub")
    sub.create_array("mask", shape=(3,), dtype=bool)
    sub.create_array("count", shape=(10,), chunks=(5,), dtype="<u2", fill_value=7)
    if consolidated:
        zarr.consolidate_metadata(path)


def zarrkit_spec_for_zarr_python_layout(zarr_format: int) -> Any:
    """The same layout, built with zarrkit in other spellings (codec defaults left out,
    numpy data type names, fill values as numbers)."""
    if zarr_format == 2:
        blosc = {"id": "blosc"}  # zarr-python writes cname, clevel, shuffle, blocksize
        return v2.GroupSpec(attributes={"title": "t"}, members={
            "temp": v2.ArraySpec(shape=[4, 6], chunks=[2, 3], dtype="<f4",
                                 fill_value=float("nan"), compressor=blosc, filters=[],
                                 attributes={"units": "K"}),
            "sub": v2.GroupSpec(members={
                "mask": v2.ArraySpec(shape=[3], chunks=[3], dtype="|b1", fill_value=False,
                                     compressor=blosc),
                "count": v2.ArraySpec(shape=[10], chunks=[5], dtype="<u2", fill_value=7.0,
                                      compressor=blosc),
            }),
        })

    little = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}]

    def array(shape: list[int], chunks: list[int], data_type: str, fill_value: Any,
              codecs: list[Any] = little, **rest: Any) -> v3.ArraySpec[Any]:
        return v3.ArraySpec.from_json({
            "shape": shape, "data_type": data_type, "fill_value": fill_value,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "codecs": codecs, **rest})

    return v3.GroupSpec(attributes={"title": "t"}, members={
        "temp": array([4, 6], [2, 3], "<f4", "NaN", dimension_names=["y", "x"],
                      attributes={"units": "K"}, storage_transformers=None),
        "sub": v3.GroupSpec(members={
            "mask": array([3], [3], "|b1", False, codecs=[{"name": "zstd"}]),
            "count": array([10], [5], "uint16", 7.0, dimension_names=[None]),
        }),
    })


@pytest.mark.parametrize("consolidated", [False, True])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_zarr_python_hierarchy_matches_a_zarrkit_spec(tmp_path, zarr_format, consolidated):
    path = str(tmp_path / "data.zarr")
    write_with_zarr_python(path, zarr_format, consolidated)
    spec = zarrkit_spec_for_zarr_python_layout(zarr_format)
    assert validate(path, spec, closed=True) == []
    assert validate(zk.open_group(path, mode="r"), spec, closed=True) == []
    assert validate(path, spec.members["sub"], path="sub", closed=True) == []
    # ...and a real difference still shows.
    zarr.open_group(path, mode="r+")["sub/count"].attrs["units"] = "1"
    changed = type(spec).from_json({**spec.to_json(), "attributes": {"title": "t"}}).members[
        "sub"].members["count"]
    changed = type(changed).from_json({**changed.to_json(), "attributes": {"units": "m"}})
    assert kinds(validate(path, changed, path="sub/count")) == [("", "attribute_value")]


# --- the xarray convention ---------------------------------------------------------------


def write_xarray_like(path: str) -> zarr.Group:
    """What xarray writes for a small Dataset (with zarr-python, Zarr v2)."""
    root = zarr.open_group(path, mode="w", zarr_format=2, attributes={"title": "demo"})
    root.create_array("temp", shape=(4, 6), chunks=(2, 3), dtype="f4",
                      attributes={"_ARRAY_DIMENSIONS": ["lat", "lon"], "units": "K"})
    root.create_array("lat", shape=(4,), dtype="f8",
                      attributes={"_ARRAY_DIMENSIONS": ["lat"]})
    root.create_array("lon", shape=(6,), dtype="f8",
                      attributes={"_ARRAY_DIMENSIONS": ["lon"]})
    child = root.create_group("child")  # a DataTree node
    child.create_array("time", shape=(3,), dtype="i8",
                       attributes={"_ARRAY_DIMENSIONS": ["time"], "calendar": "standard"})
    return root


def test_an_xarray_store_written_by_zarr_python_validates(tmp_path):
    path = str(tmp_path / "ds.zarr")
    write_xarray_like(path)
    assert xarray.validate_xarray(path) == []
    assert xarray.validate_xarray(zk.open_group(path, mode="r")) == []
    assert validate(path, xarray.GroupSpec(), closed=False) == []


def test_xarray_violations_have_their_paths(tmp_path):
    path = str(tmp_path / "ds.zarr")
    root = write_xarray_like(path)
    root["temp"].attrs["_ARRAY_DIMENSIONS"] = ["lat"]  # wrong length
    del root["lon"].attrs["_ARRAY_DIMENSIONS"]  # none
    root["child/time"].attrs["_ARRAY_DIMENSIONS"] = [0]  # not strings
    found = xarray.validate_xarray(path)
    assert kinds(found) == [
        ("/child/time", "attribute_type"),
        ("/lon", "missing_attribute"),
        ("/temp", "invalid"),
    ]
    assert found[1].expected == "list[str]"
    assert found[2].message == ("_ARRAY_DIMENSIONS names 1 dimension (['lat']) but shape "
                                "[4, 6] has 2")
    with pytest.raises(SpecValidationError) as raised:
        xarray.validate_xarray(path, strict=True)
    assert raised.value.violations == found


def test_xarray_dimension_sizes_agree_within_a_group(tmp_path):
    path = str(tmp_path / "ds.zarr")
    root = write_xarray_like(path)
    root.create_array("lon2", shape=(7,), dtype="f8",
                      attributes={"_ARRAY_DIMENSIONS": ["lon"]})
    [found] = xarray.validate_xarray(path)
    assert (found.path, found.kind) == ("", "invalid")
    assert "dimension 'lon' has size" in found.message
    # Groups are Datasets of their own: the same name may have another size there.
    root["child"].create_array("lon", shape=(2,), dtype="f8",
                               attributes={"_ARRAY_DIMENSIONS": ["lon"]})
    assert kinds(xarray.validate_xarray(path)) == [("", "invalid")]


def test_xarray_spec_with_members(tmp_path):
    path = str(tmp_path / "ds.zarr")
    write_xarray_like(path)
    temp = xarray.ArraySpec(shape=(4, 6), chunks=(2, 3), dtype="<f4", fill_value=0.0,
                            compressor={"id": "blosc"},
                            attributes={"_ARRAY_DIMENSIONS": ["y", "x"]})
    spec = xarray.GroupSpec(attributes={"title": "demo"}, members={"temp": temp})
    # The dimension names in the spec are an example (typed attributes): only their
    # type is required, so other names pass.
    assert validate(path, spec) == []
    retitled = xarray.GroupSpec.from_json({**spec.to_json(), "attributes": {"title": "x"}})
    assert kinds(validate(path, retitled)) == [("", "attribute_value")]
    del zarr.open_group(path, mode="r+")["temp"].attrs["_ARRAY_DIMENSIONS"]
    assert kinds(validate(path, spec)) == [("/temp", "missing_attribute")]


def test_xarray_convention_is_zarr_v2():
    root = zk.group({}, zarr_format=3)
    assert kinds(xarray.validate_xarray(root)) == [("", "zarr_format")]


def test_a_single_xarray_array(tmp_path):
    path = str(tmp_path / "ds.zarr")
    write_xarray_like(path)
    spec = xarray.ArraySpec(shape=(4,), chunks=(4,), dtype="<f8", fill_value=0.0,
                            compressor={"id": "blosc"}, attributes={"_ARRAY_DIMENSIONS": ["y"]})
    assert validate(path, spec, path="lat") == []
    live = zk.open_array(path, path="lon", mode="r")
    assert kinds(validate(live, spec)) == [("", "shape"), ("", "chunks")]
    assert kinds(validate(path, spec, path="temp")) == [("", "shape"), ("", "dtype"),
                                                        ("", "chunks")]
    assert kinds(validate(path, spec, path="nothing")) == [("", "missing")]
    assert kinds(validate(str(tmp_path / "no-such-store"), spec)) == [("", "missing")]


# --- the seed's example (ZEP 6, "Validating Zarr Object Models") ------------------------

XArraySpec = v2.ArraySpec[xarray.XarrayAttrs]
XGroupSpec = v2.GroupSpec[Any, XArraySpec | v2.GroupSpec[Any, Any]]


def seed_array(attributes: Any, dimension_separator: str) -> dict[str, Any]:
    # The seed writes dtype='uint8'; a Zarr v2 dtype is a numpy type string.
    return {"shape": [10, 10], "attributes": attributes, "dtype": "|u1", "chunks": [10, 10],
            "compressor": None, "dimension_separator": dimension_separator}


def test_seed_example_valid_passes_invalid_fails():
    valid = XGroupSpec(attributes={}, members={
        "array_0": XArraySpec(**seed_array({"_ARRAY_DIMENSIONS": ["a", "b"]}, "."))})
    with pytest.raises(SpecError) as raised:
        XGroupSpec(attributes={}, members={
            "array_0": seed_array({"foo": 10}, "/")})
    assert raised.value.errors == ["/array_0: attributes._ARRAY_DIMENSIONS: Field required"]

    # The same checks against live hierarchies.
    assert validate(valid.to_store({}), valid, closed=True) == []
    invalid = v2.GroupSpec(attributes={}, members={
        "array_0": v2.ArraySpec(**seed_array({"foo": 10}, "/"))})
    assert kinds(validate(invalid.to_store({}), valid, closed=True)) == [
        ("/array_0", "dimension_separator"), ("/array_0", "missing_attribute")]
    # The convention's own specs add the value-dependent rule.
    assert kinds(validate(valid.to_store({}), xarray.GroupSpec())) == []
    short = v2.GroupSpec(members={
        "array_0": v2.ArraySpec(**seed_array({"_ARRAY_DIMENSIONS": ["a"]}, "."))})
    assert kinds(validate(short.to_store({}), xarray.GroupSpec())) == [
        ("/array_0", "invalid")]
