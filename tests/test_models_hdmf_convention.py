"""The hdmf-zarr conventions as specs (zarrkit.models.conventions.hdmf): the files
hdmf-zarr wrote validate (0.13's Zarr v2 fixtures, a file that pynwb 4 + hdmf-zarr 0.14
write in Zarr v3, and both converted by zk.convert); broken reserved attributes are
reported with their paths, and where a rule is hdmf-zarr 0.14's reading, NWBZarrIO is
shown to fail or lose what the spec reports."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hdmf.build import GroupBuilder
from hdmf_support import write_nwb
from hdmf_zarr import NWBZarrIO
from shared_fixtures import fixtures_dir

import zarrkit as zk
from zarrkit.hdmf import HDMF_ZARR_014, RESERVED_ATTRIBUTES
from zarrkit.models import v2, v3
from zarrkit.models.conventions.hdmf import HdmfAttrs, LinkEntry, validate_hdmf

EPHYS = "general/extracellular_ephys"


@pytest.mark.parametrize("name", ["ex.nwb.zarr", "exjson.nwb.zarr"])
def test_files_written_by_hdmf_zarr_follow_the_convention(name: str) -> None:
    path = fixtures_dir() / "hdmf" / name
    assert validate_hdmf(str(path)) == []
    # And their specs round-trip like any hierarchy.
    spec = v2.GroupSpec.from_store(str(path))
    assert v2.GroupSpec.from_json(json.dumps(spec.to_json())).like(spec)


def copy_fixture(tmp_path: Path) -> Path:
    target = tmp_path / "copy.zarr"
    shutil.copytree(fixtures_dir() / "hdmf" / "exjson.nwb.zarr", target)
    return target


def test_broken_reserved_attributes_are_reported_with_their_paths(tmp_path: Path) -> None:
    path = copy_fixture(tmp_path)
    root = zk.open_group(str(path), mode="r+", consolidated=False)
    group = root["general/extracellular_ephys/eg"]
    links = group.attrs["zarr_link"]
    group.attrs["zarr_link"] = links + [dict(links[0])]  # the same name twice
    root["general/devices"].attrs["zarr_link"] = [{"name": "x", "path": 5}]
    found = sorted({(v.path, v.kind) for v in validate_hdmf(root)})
    assert found == [("/general/devices", "attribute_type"),
                     ("/general/extracellular_ephys/eg", "invalid")]


def test_specloc_must_name_a_member_of_the_root(tmp_path: Path) -> None:
    # (A group's own rules are checked once its members pass: pydantic validates
    # members first.)
    root = zk.open_group(str(copy_fixture(tmp_path)), mode="r+", consolidated=False)
    root.attrs[".specloc"] = "nowhere"
    violations = validate_hdmf(root)
    assert [(v.path, v.kind) for v in violations] == [("", "invalid")]
    assert ".specloc" in violations[0].message


# --- hdmf-zarr 0.14 (Zarr v3) ---------------------------------------------------------------


@pytest.fixture(scope="module")
def nwb014(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The NWB file pynwb + hdmf-zarr 0.14 write (tests/hdmf_support.py)."""
    path = tmp_path_factory.mktemp("hdmf014") / "main.nwb.zarr"
    write_nwb(path)
    return path


@pytest.fixture
def copy014(nwb014: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy.nwb.zarr"
    shutil.copytree(nwb014, target)
    return target


def test_reserved_names_are_the_hdmf_layers() -> None:
    """The typed attributes are the names zarrkit.hdmf reserves (spelled out in the
    TypedDict only because type checkers need literal keys)."""
    typed = HdmfAttrs.__required_keys__ | HdmfAttrs.__optional_keys__
    assert RESERVED_ATTRIBUTES <= typed
    assert set(HDMF_ZARR_014.link_keys) <= LinkEntry.__required_keys__


def test_file_written_by_hdmf_zarr_014_follows_the_convention(nwb014: Path) -> None:
    assert validate_hdmf(str(nwb014)) == []
    spec = v3.GroupSpec.from_store(str(nwb014))
    assert v3.GroupSpec.from_json(json.dumps(spec.to_json())).like(spec)
    # The file holds what the 0.14 rules are about: _LINKS, _DTYPE, _REFERENCE_FIELDS,
    # reference attributes, and scalars (its specifications' sources too) of shape ().
    documents = [json.loads(p.read_text()) for p in nwb014.rglob("zarr.json")]
    names = {name for d in documents for name in d.get("attributes", {})}
    assert {"_LINKS", "_DTYPE", "_REFERENCE_FIELDS", ".specloc"} <= names
    values = [v for d in documents for v in d.get("attributes", {}).values()]
    assert any(isinstance(v, dict) and "_REFERENCE" in v for v in values)
    assert any(d.get("shape") == [] for d in documents)


def _set(root: zk.Group, path: str, name: str, value: Any) -> None:
    node = root[path] if path else root
    node.attrs[name] = value


def _respec(root: zk.Group) -> None:
    """A source of the cached specifications stored as zarrkit did before it knew
    hdmf-zarr 0.14: shape (1,)."""
    group = root["specifications/core"]
    assert isinstance(group, zk.Group)
    version = group[next(iter(group.group_keys()))]
    assert isinstance(version, zk.Group)
    text = version["namespace"][()]
    version.create_array("namespace", shape=(1,), dtype=str, overwrite=True)[0] = text


LINK = {"source": ".", "path": "/general/devices/dev", "name": "device"}
# (how the copy is broken, the violations (path, kind), a part of the message)
BROKEN_014: dict[str, tuple[Any, list[tuple[str, str]], str]] = {
    "link entry": (lambda r: _set(r, f"{EPHYS}/eg0", "_LINKS", [{"name": "d", "path": 3}]),
                   [(f"/{EPHYS}/eg0", "attribute_type")], "_LINKS"),
    "link name twice": (lambda r: _set(r, f"{EPHYS}/eg0", "_LINKS", [LINK, LINK]),
                        [(f"/{EPHYS}/eg0", "invalid")], "_LINKS names ['device'] more"),
    "link named as a member": (
        lambda r: _set(r, "acquisition/ts", "_LINKS", [{**LINK, "name": "data"}]),
        [("/acquisition/ts", "invalid")], "members of the group"),
    "zarr_link beside _LINKS": (
        lambda r: _set(r, f"{EPHYS}/eg1", "zarr_link", [{**LINK, "name": "again"}]),
        [(f"/{EPHYS}/eg1", "invalid")], "the links ['again'] are lost"),
    "_DTYPE type": (lambda r: _set(r, "acquisition/ts/data", "_DTYPE", 5),
                    [("/acquisition/ts/data", "attribute_type")], "_DTYPE"),
    "references of numbers": (
        lambda r: _set(r, "acquisition/ts/data", "_DTYPE", "object_reference"),
        [("/acquisition/ts/data", "invalid")], "holds objects or strings, found float64"),
    "reference field of numbers": (
        lambda r: _set(r, "intervals/epochs/timeseries", "_REFERENCE_FIELDS", ["count"]),
        [("/intervals/epochs/timeseries", "invalid")], "names ['count'], which are no string"),
    "reference fields type": (
        lambda r: _set(r, "intervals/epochs/timeseries", "_REFERENCE_FIELDS", "timeseries"),
        [("/intervals/epochs/timeseries", "attribute_type")], "_REFERENCE_FIELDS"),
    "reference attribute": (
        lambda r: _set(r, "acquisition/es/electrodes", "table", {"_REFERENCE": {"source": "."}}),
        [("/acquisition/es/electrodes", "invalid")], "attribute 'table': not an object"),
    "dict attribute with a zarr_dtype": (
        lambda r: _set(r, "acquisition/ts", "note", {"zarr_dtype": "float", "value": 1.0}),
        [("/acquisition/ts", "invalid")], "hdmf-zarr reads such a value only as a reference"),
    "scalar marker": (lambda r: _set(r, "acquisition/ts/starting_time", "zarr_dtype", "scalar"),
                      [("/acquisition/ts/starting_time", "invalid")], "of shape (1,), found ()"),
    "specifications of shape (1,)": (
        _respec, [("", "invalid")], "are not of shape (), the scalar datasets hdmf-zarr 0.14"),
    "specloc": (lambda r: _set(r, "", ".specloc", "nowhere"), [("", "invalid")],
                "no member of the root"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_014))
def test_broken_014_reserved_attributes_are_reported(case: str, copy014: Path) -> None:
    breaks, expected, message = BROKEN_014[case]
    root = zk.open_group(str(copy014), mode="r+", consolidated=False)
    breaks(root)
    violations = validate_hdmf(root)
    assert sorted({(v.path, v.kind) for v in violations}) == expected
    assert any(message in v.message for v in violations), [v.message for v in violations]


def test_specloc_may_be_a_reference_in_v3(copy014: Path) -> None:
    """hdmf-zarr 0.14 also reads a .specloc written as a reference attribute."""
    root = zk.open_group(str(copy014), mode="r+", consolidated=False)
    root.attrs[".specloc"] = {"_REFERENCE": {"source": ".", "path": "/specifications"}}
    assert validate_hdmf(root) == []
    zk.consolidate_metadata(str(copy014))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with NWBZarrIO(str(copy014), mode="r") as io:
            assert io.read().identifier == "peer-1"


def _read_with_hdmf_zarr(path: Path) -> GroupBuilder:
    zk.consolidate_metadata(str(path))  # hdmf-zarr opens the file through them
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with NWBZarrIO(str(path), mode="r") as io:
            builder: GroupBuilder = io.read_builder()
            return builder


# What hdmf-zarr 0.14 raises reading a file that breaks a rule: the JSON text of a source of
# shape (1,) is read as "['...']"; a dict attribute with another zarr_dtype is refused; a
# number is resolved as a reference.
PEER_ERRORS: dict[str, type[Exception]] = {
    "specifications of shape (1,)": json.JSONDecodeError,
    "dict attribute with a zarr_dtype": NotImplementedError,
    "references of numbers": AttributeError,
}


@pytest.mark.parametrize("case", ["zarr_link beside _LINKS", *sorted(PEER_ERRORS)])
def test_reported_014_violations_break_hdmf_zarr(case: str, copy014: Path) -> None:
    """What the spec reports, hdmf-zarr 0.14 cannot read right: it loses the link, or
    fails to open or read the file."""
    breaks, _, _ = BROKEN_014[case]
    root = zk.open_group(str(copy014), mode="r+", consolidated=False)
    breaks(root)
    assert validate_hdmf(root)
    if case == "zarr_link beside _LINKS":
        group = _read_with_hdmf_zarr(copy014)[f"{EPHYS}/eg1"]
        assert isinstance(group, GroupBuilder)
        assert set(group.links) == {"device"}  # "again" is lost
        return
    with pytest.raises(PEER_ERRORS[case]):
        builder = _read_with_hdmf_zarr(copy014)
        list(builder["acquisition/ts/data"].data)  # resolving a float as a reference


# --- hdmf-zarr 0.13's rules in Zarr v2, and converted files ---------------------------------

BROKEN_013: dict[str, tuple[Any, list[tuple[str, str]], str]] = {
    "_LINKS in v2": (lambda r: _set(r, f"{EPHYS}/eg", "_LINKS", [LINK]),
                     [(f"/{EPHYS}/eg", "invalid")], "['_LINKS'] is hdmf-zarr 0.14's"),
    "_DTYPE in v2": (lambda r: _set(r, "acquisition/ts/data", "_DTYPE", "float64"),
                     [("/acquisition/ts/data", "invalid")], "['_DTYPE'] is hdmf-zarr 0.14's"),
    "0.14 reference attribute in v2": (
        lambda r: _set(r, "acquisition/es/electrodes", "table",
                       {"_REFERENCE": {"source": ".", "path": f"/{EPHYS}/electrodes"}}),
        [("/acquisition/es/electrodes", "invalid")], "['table'] is hdmf-zarr 0.14's"),
    "scalar marker on (3,)": (
        lambda r: _set(r, "acquisition/ts/data", "zarr_dtype", "scalar"),
        [("/acquisition/ts/data", "invalid")], "of shape (1,), found (3,)"),
    "0.14 specifications in v2": (
        lambda r: r["specifications/core"].create_group("9.9.9").create_array(
            "namespace", shape=(), dtype=object, filters=[{"id": "json2"}]),
        [("", "invalid")], "are not of shape (1,), the scalar datasets hdmf-zarr 0.13"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_013))
def test_broken_013_reserved_attributes_are_reported(case: str, tmp_path: Path) -> None:
    breaks, expected, message = BROKEN_013[case]
    root = zk.open_group(str(copy_fixture(tmp_path)), mode="r+", consolidated=False)
    breaks(root)
    violations = validate_hdmf(root)
    assert sorted({(v.path, v.kind) for v in violations}) == expected
    assert any(message in v.message for v in violations), [v.message for v in violations]


def test_converted_files_follow_the_destination_convention(nwb014: Path,
                                                           tmp_path: Path) -> None:
    """zk.convert writes the destination format's convention: hdmf-zarr 0.14's file in
    v2 follows 0.13's (its specifications' sources of shape (1,) among them), 0.13's
    fixture in v3 follows 0.14's (sources of shape ())."""
    zk.convert(nwb014, tmp_path / "v2.zarr", zarr_format=2, progress=False)
    zk.convert(fixtures_dir() / "hdmf" / "exjson.nwb.zarr", tmp_path / "v3.zarr",
               zarr_format=3, progress=False)
    for name, fmt in (("v2.zarr", 2), ("v3.zarr", 3)):
        root = zk.open_group(str(tmp_path / name), mode="r")
        assert root.zarr_format == fmt
        assert validate_hdmf(root) == [], name
        source = root["specifications/core/2.11.0/namespace"]
        assert isinstance(source, zk.Array)
        assert source.shape == ((1,) if fmt == 2 else ())
        assert json.loads(str(np.asarray(source[...]).reshape(-1)[0]))["namespaces"]
