"""The peer check with hdmf-zarr 0.14 (pynwb 4, zarr-python 3), in process, both ways.

* **zarrkit reads hdmf-zarr 0.14's writes.** pynwb + ``NWBZarrIO`` write an NWB file (Zarr
  v3) with a device, two electrode groups linked to it, an electrodes table whose ``group``
  column holds object references, an ElectricalSeries whose ``electrodes`` region
  references that table, a TimeSeries linked from two DecompositionSeries (and its data
  from a third TimeSeries), epochs whose ``timeseries`` column holds compound rows with
  references, and a second file whose TimeSeries' data is an external link into the
  first. zarrkit resolves every link and every reference (datasets, compound fields,
  attributes) of both files, and each must be the node that hdmf-zarr's own reading
  (its builders) and pynwb's containers say; zarrkit's view of the attributes, dtypes and
  cached specifications must match hdmf-zarr's too.
* **hdmf-zarr 0.14 reads zarrkit's writes.** zarrkit adds, to a copy of that file, a link
  (to a new electrode group, and to a group that already has ``_LINKS``), a reference
  attribute (the ``target`` of a new ragged epochs column's index), a reference dataset
  (a new electrodes column) and cached specifications of an extension; NWBZarrIO reads
  each back with the right values, as builders and as pynwb containers.
* **A converted hdmf-zarr 0.13 file.** ``zk.convert`` of the 0.13 fixture
  ``exjson.nwb.zarr`` to v3 is read by NWBZarrIO 0.14 as hdmf-zarr 0.14's own reader of
  v2 files (NWBZarrV2IO) reads the original.
"""

from __future__ import annotations

import json
import shutil
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from hdmf.build import Builder, DatasetBuilder, GroupBuilder
from hdmf_support import START, build_nwb
from hdmf_zarr import NWBZarrIO, NWBZarrV2IO
from pynwb import NWBFile, TimeSeries
from shared_fixtures import fixtures_dir

import zarrkit as zk
from zarrkit.hdmf import (
    hdmf_dtype_of,
    read_specifications,
    user_attributes,
    write_specifications,
)
from zarrkit.references import (
    Reference,
    create_reference_dataset,
    encode_attribute,
    is_reference_dataset,
    read_references,
    read_region,
)

EPHYS = "general/extracellular_ephys"


@pytest.fixture(autouse=True)
def _quiet_peers() -> Iterator[None]:
    """hdmf-zarr and zarr-python warn about consolidated metadata and inferred dtypes
    on every write and read; those warnings are theirs, not zarrkit's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The NWB file hdmf-zarr 0.14 wrote, and a second one with an external link into it."""
    top = tmp_path_factory.mktemp("hdmf_v3")
    main, external = top / "main.nwb.zarr", top / "external.nwb.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with NWBZarrIO(str(main), mode="w") as io:
            io.write(build_nwb())
        with NWBZarrIO(str(main), mode="r") as source:
            data = source.read().acquisition["ts"].data  # a zarr array: written as a link
            nwb = NWBFile(session_description="links out", identifier="peer-2",
                          session_start_time=START)
            nwb.add_acquisition(TimeSeries(name="ext", data=data, unit="m", rate=1.0))
            with NWBZarrIO(str(external), mode="w") as io:
                io.write(nwb)
    return {"main": main, "external": external}


def builders(root: GroupBuilder) -> Iterator[tuple[str, Builder]]:
    """Every group and dataset builder below ``root`` by its path in the file (links
    are not followed)."""
    def walk(builder: GroupBuilder, path: str) -> Iterator[tuple[str, Builder]]:
        for name, group in builder.groups.items():
            yield f"{path}/{name}", group
            yield from walk(group, f"{path}/{name}")
        for name, dataset in builder.datasets.items():
            yield f"{path}/{name}", dataset

    yield "/", root
    yield from walk(root, "")


def builder_path(builder: Builder) -> str:
    """The path in its file of the node a builder was read from."""
    return "/" + builder.path.removeprefix("root").strip("/")


def read_builders(path: Path) -> dict[str, Builder]:
    with NWBZarrIO(str(path), mode="r") as io:
        return dict(builders(io.read_builder()))


# --- zarrkit reads hdmf-zarr 0.14's writes --------------------------------------------------


def test_convention_is_told_per_file(files: dict[str, Path]) -> None:
    from zarrkit.hierarchy.links import HDMF_ZARR_013, HDMF_ZARR_014, convention_of

    assert convention_of(zk.open_group(files["main"], mode="r")) is HDMF_ZARR_014
    fixture = zk.open_group(fixtures_dir() / "hdmf" / "exjson.nwb.zarr", mode="r")
    assert convention_of(fixture) is HDMF_ZARR_013


def test_zarrkit_follows_every_link(files: dict[str, Path]) -> None:
    """Every link of the file (every ``_LINKS`` entry) leads zarrkit to the node that
    hdmf-zarr's LinkBuilder holds; the device and the twice-linked TimeSeries are the
    objects pynwb gives."""
    root = zk.open_group(files["main"], mode="r")
    found: dict[str, str] = {}
    for path, builder in read_builders(files["main"]).items():
        if not isinstance(builder, GroupBuilder):
            continue
        group = root[path] if path != "/" else root
        assert isinstance(group, zk.Group)
        assert set(group.links()) == set(builder.links), path
        for name, link in builder.links.items():
            target = group[name]
            assert target.name == builder_path(link.builder), (path, name)
            found[f"{path}/{name}"] = target.name
    assert found == {
        f"/{EPHYS}/eg0/device": "/general/devices/dev",
        f"/{EPHYS}/eg1/device": "/general/devices/dev",
        "/processing/mod/dec0/source_timeseries": "/acquisition/ts",
        "/processing/mod/dec1/source_timeseries": "/acquisition/ts",
        "/processing/mod/ts2/data": "/acquisition/ts/data",
    }
    with NWBZarrIO(str(files["main"]), mode="r") as io:
        nwb = io.read()
        for name in ("eg0", "eg1"):
            device = root[f"{EPHYS}/{name}/device"]
            assert device.attrs["object_id"] == nwb.electrode_groups[name].device.object_id
        for name in ("dec0", "dec1"):
            ts = root[f"processing/mod/{name}/source_timeseries"]
            source = nwb.processing["mod"][name].source_timeseries
            assert ts.attrs["object_id"] == source.object_id
        data = root["processing/mod/ts2/data"]
        assert isinstance(data, zk.Array)
        assert data[...].tolist() == nwb.processing["mod"]["ts2"].data[:].tolist()


def test_zarrkit_follows_an_external_link(files: dict[str, Path]) -> None:
    root = zk.open_group(files["external"], mode="r")
    assert root["acquisition/ext"].links()["data"].source == "../main.nwb.zarr"
    data = root["acquisition/ext/data"]
    assert isinstance(data, zk.Array) and data.name == "/acquisition/ts/data"
    with NWBZarrIO(str(files["external"]), mode="r") as io:
        assert data[...].tolist() == io.read().acquisition["ext"].data[:].tolist()


def _resolved(value: Any, node: zk.Array | zk.Group) -> Any:
    return value.resolve(node).name if isinstance(value, Reference) else value


def _builder_value(value: Any) -> Any:
    return builder_path(value) if isinstance(value, Builder) else value


def test_zarrkit_resolves_every_reference(files: dict[str, Path]) -> None:
    """Every reference dataset (and compound field) and every reference attribute of the
    file resolves in zarrkit to the node hdmf-zarr's builders hold, element by element."""
    root = zk.open_group(files["main"], mode="r")
    checked = []
    with NWBZarrIO(str(files["main"]), mode="r") as io:  # open: its datasets resolve lazily
        for path, builder in builders(io.read_builder()):
            node = root[path] if path != "/" else root
            for name, value in user_attributes(node).items():
                if isinstance(value, Reference):
                    assert value.resolve(node).name == builder_path(builder.attributes[name])
                    checked.append(f"{path}#{name}")
            if isinstance(node, zk.Array) and is_reference_dataset(node):
                assert isinstance(builder, DatasetBuilder)
                values = read_references(node).tolist()
                theirs = list(builder.data)
                if node.dtype.names:  # compound rows
                    mine = [tuple(_resolved(v, node) for v in row) for row in values]
                    theirs = [tuple(_builder_value(v) for v in row) for row in theirs]
                else:
                    mine = [_resolved(v, node) for v in values]
                    theirs = [_builder_value(v) for v in theirs]
                assert mine == theirs, path
                checked.append(path)
    assert sorted(checked) == [
        "/acquisition/es/electrodes#table",  # the region's table
        f"/{EPHYS}/electrodes/group",  # a dataset of object references
        "/intervals/epochs/timeseries",  # compound rows with a reference field
        "/intervals/epochs/timeseries_index#target",  # a VectorIndex's target
    ]


def test_pynwb_objects_match_zarrkit_references(files: dict[str, Path]) -> None:
    """The electrodes' ``group`` column, the ElectricalSeries' region and the epochs'
    compound rows, as pynwb reads them, are the nodes zarrkit's references resolve to."""
    root = zk.open_group(files["main"], mode="r")
    with NWBZarrIO(str(files["main"]), mode="r") as io:
        nwb = io.read()
        column = root[f"{EPHYS}/electrodes/group"]
        assert isinstance(column, zk.Array)
        mine = [r.resolve(column).attrs["object_id"] for r in read_references(column)]
        assert mine == [g.object_id for g in nwb.electrodes["group"].data[:]]
        assert len(set(mine)) == 2

        series = root["acquisition/es/electrodes"]
        assert isinstance(series, zk.Array)
        region = read_region(series)
        electrodes = nwb.acquisition["es"].electrodes
        assert region.table.attrs["object_id"] == electrodes.table.object_id
        assert region.rows.tolist() == list(electrodes.data[:]) == [0, 2]

        rows = root["intervals/epochs/timeseries"]
        assert isinstance(rows, zk.Array)
        mine_rows = [(int(a), int(b), r.resolve(rows).attrs["object_id"])
                     for a, b, r in read_references(rows).tolist()]
        theirs = [(int(a), int(b), t.object_id)
                  for a, b, t in nwb.epochs["timeseries"].target.data[:]]
        assert mine_rows == theirs and len(theirs) == 3


def test_user_attributes_and_dtypes_match_hdmf_zarr(files: dict[str, Path]) -> None:
    """zarrkit hides the attributes hdmf-zarr 0.14 reserves (``_LINKS``, ``_DTYPE``,
    ``_REFERENCE_FIELDS``, ``.specloc``): each node's user attributes are the builder's;
    and each dataset's hdmf dtype is the one its builder has."""
    root = zk.open_group(files["main"], mode="r")
    for path, builder in read_builders(files["main"]).items():
        node = root[path] if path != "/" else root
        assert set(user_attributes(node)) == set(builder.attributes), path
        if isinstance(builder, DatasetBuilder):
            assert isinstance(node, zk.Array)
            theirs = builder.dtype
            mine = hdmf_dtype_of(node)
            if isinstance(theirs, list):  # compound: field names, references "object"
                assert isinstance(mine, list)
                assert [(f["name"], f["dtype"] == "object") for f in mine] == [
                    (f["name"], f["dtype"] == "object") for f in theirs], path
            elif theirs == "object":
                assert mine == "object", path
            elif theirs == "str":  # 0.14 stores all text as str
                assert mine == "text", path
            else:
                assert mine == np.dtype(theirs).name, path


def test_cached_specifications_match_hdmf_zarr(files: dict[str, Path]) -> None:
    root = zk.open_group(files["main"], mode="r")
    specs = read_specifications(root)
    peer = zarr.open_group(str(files["main"]), mode="r")
    for namespace, versions in specs.items():
        for version, sources in versions.items():
            group = peer[f"specifications/{namespace}/{version}"]
            assert set(sources) == set(group.array_keys())
            for name, value in sources.items():
                assert value == json.loads(str(group[name][()]))
    with NWBZarrIO(str(files["main"]), mode="r") as io:
        catalog = io.manager.namespace_catalog
        for namespace in ("core", "hdmf-common", "hdmf-experimental"):
            assert list(specs[namespace]) == [catalog.get_namespace(namespace).version]


# --- hdmf-zarr 0.14 reads zarrkit's writes --------------------------------------------------

EXTENSION = "zarrkit-test"
EXTENSION_SOURCES = {
    "namespace": {"namespaces": [{
        "name": EXTENSION, "version": "0.1.0", "doc": "written by zarrkit",
        "author": ["zarrkit"], "contact": ["zarrkit@example.org"], "full_name": "zarrkit",
        "schema": [{"namespace": "core", "neurodata_types": ["NWBDataInterface"]},
                   {"source": f"{EXTENSION}.extensions"}]}]},
    f"{EXTENSION}.extensions": {"groups": [{
        "neurodata_type_def": "ZarrkitThing", "neurodata_type_inc": "NWBDataInterface",
        "doc": "a type only the cached specifications define"}]},
}


def modify(path: Path) -> dict[str, Any]:
    """zarrkit's changes to the NWB file at ``path``, in its convention (hdmf-zarr
    0.14's); the ids they must be read back with."""
    root = zk.open_group(path, mode="r+")
    ephys = root[EPHYS]
    device = root["general/devices/dev"]
    assert isinstance(ephys, zk.Group) and isinstance(device, zk.Group)
    # 1. Links: the device of a new electrode group, and a second link in a group that
    # already has _LINKS (hdmf-zarr 0.14 reads no zarr_link beside a _LINKS).
    eg2 = ephys.create_group("eg2", attributes={
        "description": "written by zarrkit", "location": "l2", "namespace": "core",
        "neurodata_type": "ElectrodeGroup", "object_id": str(uuid.uuid4())})
    eg2.create_link("device", device)
    eg0 = root[f"{EPHYS}/eg0"]
    assert isinstance(eg0, zk.Group)
    eg0.create_link("device_again", device)
    # 2. A reference attribute: the target of the index of a new ragged epochs column.
    epochs = root["intervals/epochs"]
    assert isinstance(epochs, zk.Group)
    labels = epochs.create_array("labels", shape=(2,), dtype=str, attributes={
        "_ARRAY_DIMENSIONS": ["dim0"], "_DTYPE": "str", "description": "by zarrkit",
        "namespace": "hdmf-common", "neurodata_type": "VectorData",
        "object_id": str(uuid.uuid4())})
    labels[...] = np.array(["sleep", "run"], dtype=object)
    index = epochs.create_array("labels_index", shape=(2,), dtype="u1", attributes={
        "_ARRAY_DIMENSIONS": ["num_rows"], "_DTYPE": "uint8",
        "description": "Index for VectorData 'labels'", "namespace": "hdmf-common",
        "neurodata_type": "VectorIndex", "object_id": str(uuid.uuid4())})
    index[...] = np.array([1, 2], dtype="u1")
    index.attrs["target"] = encode_attribute(Reference.of(labels), index)
    epochs.attrs["colnames"] = [*epochs.attrs["colnames"], "labels"]
    # 3. A reference dataset: a column of the electrodes table referring to groups.
    electrodes = root[f"{EPHYS}/electrodes"]
    assert isinstance(electrodes, zk.Group)
    groups = [eg2, eg0, eg2]
    create_reference_dataset(electrodes, "group2", [Reference.of(g) for g in groups],
                             attributes={
        "_ARRAY_DIMENSIONS": ["dim0"], "description": "groups, by zarrkit",
        "namespace": "hdmf-common", "neurodata_type": "VectorData",
        "object_id": str(uuid.uuid4())})
    electrodes.attrs["colnames"] = [*electrodes.attrs["colnames"], "group2"]
    # 4. Cached specifications of an extension.
    write_specifications(root, EXTENSION, "0.1.0", EXTENSION_SOURCES)
    zk.consolidate_metadata(path)  # hdmf-zarr opens the file through them
    return {"eg2": eg2.attrs["object_id"], "device": device.attrs["object_id"],
            "labels": labels.attrs["object_id"],
            "groups": [g.attrs["object_id"] for g in groups]}


def test_hdmf_zarr_reads_zarrkit_changes(files: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "changed.nwb.zarr"
    shutil.copytree(files["main"], path)
    expected = modify(path)

    # Written as hdmf-zarr 0.14 writes them.
    def attributes(node: str) -> dict[str, Any]:
        return dict(json.loads((path / node / "zarr.json").read_text())["attributes"])

    assert attributes(f"{EPHYS}/eg0")["_LINKS"] == [
        {"source": ".", "path": "/general/devices/dev", "name": "device"},
        {"source": ".", "path": "/general/devices/dev", "name": "device_again"}]
    assert "zarr_link" not in attributes(f"{EPHYS}/eg0")
    assert attributes(f"{EPHYS}/eg2")["_LINKS"] == [
        {"source": ".", "path": "/general/devices/dev", "name": "device"}]
    assert attributes("intervals/epochs/labels_index")["target"] == {"_REFERENCE": {
        "source": ".", "path": "/intervals/epochs/labels"}}
    mine = json.loads((path / EPHYS / "electrodes/group2/zarr.json").read_text())
    theirs = json.loads((path / EPHYS / "electrodes/group/zarr.json").read_text())
    for key in ("data_type", "fill_value", "codecs"):
        assert mine[key] == theirs[key], key
    assert mine["attributes"]["_DTYPE"] == theirs["attributes"]["_DTYPE"]

    with NWBZarrIO(str(path), mode="r") as io:
        built = dict(builders(io.read_builder()))
        eg0 = built[f"/{EPHYS}/eg0"]
        assert isinstance(eg0, GroupBuilder)
        assert {name: builder_path(link.builder) for name, link in eg0.links.items()} == {
            "device": "/general/devices/dev", "device_again": "/general/devices/dev"}
        index = built["/intervals/epochs/labels_index"]
        assert builder_path(index.attributes["target"]) == "/intervals/epochs/labels"
        column = built[f"/{EPHYS}/electrodes/group2"]
        assert isinstance(column, DatasetBuilder)
        assert [builder_path(b) for b in column.data] == [
            f"/{EPHYS}/eg2", f"/{EPHYS}/eg0", f"/{EPHYS}/eg2"]

    with NWBZarrIO(str(path), mode="r") as io:
        nwb = io.read()
        eg2 = nwb.electrode_groups["eg2"]
        assert eg2.object_id == expected["eg2"]
        assert eg2.device.object_id == expected["device"]
        assert nwb.epochs["labels"].target.object_id == expected["labels"]
        assert [list(nwb.epochs["labels"][i]) for i in range(2)] == [["sleep"], ["run"]]
        assert [g.object_id for g in nwb.electrodes["group2"].data[:]] == expected["groups"]
        assert io.manager.namespace_catalog.get_namespace(EXTENSION).version == "0.1.0"
        assert io.manager.type_map.get_dt_container_cls("ZarrkitThing", EXTENSION)


# --- a converted hdmf-zarr 0.13 file ----------------------------------------------------------


def _summary(nwb: NWBFile) -> dict[str, Any]:
    """What both reads must agree on: every object by id (type and name), the link, the
    references (dataset, region, the ragged tags' index target) and the data."""
    es, ts = nwb.acquisition["es"], nwb.acquisition["ts"]
    return {
        "objects": sorted((o.object_id, type(o).__name__, o.name)
                          for o in nwb.objects.values()),
        "device": nwb.electrode_groups["eg"].device.object_id,
        "groups": [g.object_id for g in nwb.electrodes["group"].data[:]],
        "region": (es.electrodes.table.object_id, list(es.electrodes.data[:])),
        "tags": [list(nwb.epochs["tags"][i]) for i in range(len(nwb.epochs))],
        "tags_target": nwb.epochs["tags"].target.object_id,
        "data": (es.data[:].tolist(), ts.data[:].tolist()),
        "start": nwb.session_start_time.isoformat(),
        "identifier": nwb.identifier,
    }


def test_converted_013_file_reads_in_hdmf_zarr_014(tmp_path: Path) -> None:
    source = tmp_path / "exjson.nwb.zarr"
    shutil.copytree(fixtures_dir() / "hdmf" / "exjson.nwb.zarr", source)
    zk.convert(source, tmp_path / "v3.nwb.zarr", zarr_format=3, progress=False)
    zk.consolidate_metadata(tmp_path / "v3.nwb.zarr")
    with NWBZarrV2IO(str(source), mode="r") as io:
        theirs = _summary(io.read())
    with NWBZarrIO(str(tmp_path / "v3.nwb.zarr"), mode="r") as io:
        mine = _summary(io.read())
    assert mine == theirs
    assert len(theirs["objects"]) > 10 and len(set(theirs["groups"])) == 1
