"""The hdmf-zarr convention as specs (zarrkit.models.conventions.hdmf): the files
hdmf-zarr wrote validate; broken reserved attributes are reported with their paths."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from shared_fixtures import fixtures_dir

import zarrkit as zk
from zarrkit.models import v2
from zarrkit.models.conventions.hdmf import validate_hdmf


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
