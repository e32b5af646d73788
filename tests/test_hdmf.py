"""zarrkit.hdmf: hdmf's dtypes and their storage, the convention layer's attributes and the
cached specifications, against the NWB files hdmf-zarr 0.13.0 wrote
(../shared/fixtures/hdmf); converting such a file to Zarr v3; consolidated metadata after
zarrkit changes one, as zarr-python 3.1 sees it.

The peer check with hdmf-zarr itself is tests/test_hdmf_peer.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from shared_fixtures import fixtures_dir

import zarrkit as zk
from zarrkit.errors import MetadataError
from zarrkit.hdmf import (
    HDMF_DTYPES,
    canonical_dtype,
    hdmf_dtype_of,
    read_specifications,
    spec_location,
    storage_dtype,
    user_attributes,
    write_specifications,
)
from zarrkit.references import (
    Reference,
    create_reference_dataset,
    encode_attribute,
    read_references,
)

FIXTURE_FILES = ("ex.nwb.zarr", "exjson.nwb.zarr")


def hdmf_dir() -> Path:
    return fixtures_dir() / "hdmf"


def expected() -> dict[str, Any]:
    return json.loads((hdmf_dir() / "expected.json").read_text())


def copy_fixture(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(hdmf_dir() / name, target)
    return target


def open_fixture(name: str) -> zk.Group:
    return zk.open_group(hdmf_dir() / name, mode="r")


def arrays_of(root: zk.Group) -> dict[str, zk.Array]:
    return {path: node for path, node in root.members(max_depth=None)
            if isinstance(node, zk.Array)}


def chunk_text(path: Path) -> str:
    """The single JSON text of a cached specification's chunk as hdmf-zarr wrote it
    (json2: ``[text, "|O", [1]]``), parsed without zarrkit."""
    items = json.loads((path / "0").read_bytes())
    assert items[1:] == ["|O", [1]]
    return str(items[0])


# --- dtypes ---------------------------------------------------------------------------------

# The storage spec's dtype table: hdmf name -> canonical name.
SEED_TABLE = {
    "float": "float32", "float32": "float32", "double": "float64", "float64": "float64",
    "long": "int64", "int64": "int64", "int": "int32", "int32": "int32", "int16": "int16",
    "int8": "int8", "uint32": "uint32", "uint16": "uint16", "uint8": "uint8", "bool": "bool",
    "text": "text", "utf": "text", "utf8": "text", "utf-8": "text",
    "ascii": "ascii", "str": "ascii",
    "ref": "object", "reference": "object", "object": "object",
    "isodatetime": "isodatetime",
}

# canonical name -> (numpy dtype, v2 object codec, zarr_dtype as hdmf-zarr writes it)
STORAGE = {
    "float32": ("<f4", None, "float32"), "float64": ("<f8", None, "float64"),
    "int64": ("<i8", None, "int64"), "int32": ("<i4", None, "int32"),
    "int16": ("<i2", None, "int16"), "int8": ("|i1", None, "int8"),
    "uint64": ("<u8", None, "uint64"), "uint32": ("<u4", None, "uint32"),
    "uint16": ("<u2", None, "uint16"), "uint8": ("|u1", None, "uint8"),
    "bool": ("|b1", None, "bool"),
    "text": ("|O", "vlen-utf8", "str"), "ascii": ("|O", "vlen-bytes", "bytes"),
    "isodatetime": ("|O", "vlen-bytes", "bytes"), "object": ("|O", "json2", "object"),
}

SAMPLES: dict[str, list[Any]] = {
    "float32": [1.5, -2.0], "float64": [0.1, 1e300], "int64": [-(2**62), 3],
    "int32": [-(2**30), 7], "int16": [-300, 300], "int8": [-5, 5], "uint64": [2**63, 1],
    "uint32": [2**31, 0], "uint16": [65535, 1], "uint8": [255, 0], "bool": [True, False],
    "text": ["zoé", ""], "ascii": [b"abc", b""],
    "isodatetime": [b"2018-09-28T14:43:54.123+02:00", b"2020-01-01T00:00:00+00:00"],
}


def test_seed_table_names_fold_to_canonical_names() -> None:
    for name, canonical in SEED_TABLE.items():
        assert canonical_dtype(name) == canonical, name
        assert HDMF_DTYPES[name] == canonical
    assert canonical_dtype({"target_type": "ElectrodeGroup", "reftype": "object"}) == "object"
    assert canonical_dtype([{"name": "x", "dtype": "uint32"}, {"name": "y", "dtype": "uint32"},
                            {"name": "weight", "dtype": "float"}]) == [
        {"name": "x", "dtype": "uint32"}, {"name": "y", "dtype": "uint32"},
        {"name": "weight", "dtype": "float32"}]
    for bad in ("float16", "", None, {"reftype": "region"}, [], [{"name": "a"}],
                [{"name": "a", "dtype": "int"}, {"name": "a", "dtype": "int"}],
                [{"name": "a", "dtype": [{"name": "b", "dtype": "int"}]}]):
        with pytest.raises(ValueError):
            canonical_dtype(bad)


@pytest.mark.parametrize("name", sorted(HDMF_DTYPES))
def test_storage_dtype_table(name: str) -> None:
    canonical = HDMF_DTYPES[name]
    storage = storage_dtype(name)
    numpy_dtype, codec, zarr_dtype = STORAGE[canonical]
    assert storage.hdmf_dtype == canonical
    assert storage.dtype == np.dtype(numpy_dtype) and storage.dtype.str == numpy_dtype
    assert storage.object_codec == codec
    assert storage.zarr_dtype == zarr_dtype
    assert storage.is_reference == (canonical == "object")


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("name", sorted(HDMF_DTYPES))
def test_dtype_round_trip(name: str, zarr_format: int) -> None:
    """hdmf name -> storage -> a written array -> hdmf_dtype_of: the canonical name back
    (isodatetime is stored as ASCII text, so it reads back as "ascii")."""
    canonical = HDMF_DTYPES[name]
    root = zk.group({}, zarr_format=zarr_format)
    storage = storage_dtype(name)
    if storage.is_reference:
        with pytest.raises(TypeError, match="create_reference_dataset"):
            storage.array_options(zarr_format)
        target = root.create_group("target")
        array = create_reference_dataset(root, "refs", [Reference.of(target)] * 2)
        assert hdmf_dtype_of(array) == "object"
        assert [r.path for r in read_references(array)] == ["/target"] * 2
        return
    values = SAMPLES[canonical]
    for scalar in (False, True):
        data = values[:1] if scalar else values
        # hdmf-zarr 0.13 stores a scalar with shape (1,), 0.14 with shape ().
        shape = () if scalar and zarr_format == 3 else (len(data),)
        array = root.create_array(f"a{scalar}", shape=shape,
                                  **storage.array_options(zarr_format, scalar=scalar))
        array[...] = np.array(data, dtype=storage.dtype).reshape(shape)
        if zarr_format == 2:
            assert array.attrs.asdict() == {
                "zarr_dtype": "scalar" if scalar else storage.zarr_dtype}
        else:  # hdmf-zarr 0.14: _DTYPE, "str" for any text (Zarr v3 has no byte strings)
            assert array.attrs.asdict() == {"_DTYPE": "str" if storage.object_codec else
                                            np.dtype(canonical).name}
        back = "ascii" if canonical == "isodatetime" else canonical
        if zarr_format == 3 and back == "ascii":
            back = "text"  # stored as unicode, as hdmf-zarr 0.14 stores it
        assert hdmf_dtype_of(array) == back
        expected = [v.decode() if isinstance(v, bytes) and zarr_format == 3 else v
                    for v in data]  # 0.14 keeps ASCII text as UTF-8 strings
        assert np.asarray(array[...]).reshape(-1).tolist() == expected
        if zarr_format == 2:
            # The stored dtype (strings read as StringDType on numpy 2, as in zarr-python).
            assert array.metadata.dtype == storage.dtype
            ids = [f.codec_id for f in array.filters]
            assert ids == ([storage.object_codec] if storage.object_codec else [])


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_compound_dtype_round_trip(zarr_format: int) -> None:
    fields = [{"name": "idx_start", "dtype": "int"}, {"name": "count", "dtype": "int32"},
              {"name": "timeseries", "dtype": {"target_type": "TimeSeries", "reftype": "object"}}]
    storage = storage_dtype(fields)
    assert storage.is_reference and storage.object_codec == "json2"
    assert storage.dtype == np.dtype([("idx_start", "<i4"), ("count", "<i4"), ("timeseries", "O")])
    with pytest.raises(TypeError):
        storage.array_options(zarr_format)
    root = zk.group({}, zarr_format=zarr_format)
    ts = root.create_group("acquisition/ts")
    array = create_reference_dataset(
        root, "timeseries", [(0, 1, Reference.of(ts))],
        fields=[(f["name"], f["dtype"]) for f in storage.zarr_dtype])
    assert hdmf_dtype_of(array) == canonical_dtype(fields)
    # A compound of numbers only is a plain structured array.
    numbers = storage_dtype([{"name": "x", "dtype": "uint32"}, {"name": "w", "dtype": "float"}])
    assert numbers.object_codec is None and not numbers.is_reference
    if zarr_format == 2:
        plain = root.create_array("xy", shape=(2,), **numbers.array_options())
        assert hdmf_dtype_of(plain) == [{"name": "x", "dtype": "uint32"},
                                        {"name": "w", "dtype": "float32"}]


# What hdmf-zarr 0.13.0 wrote, per dataset of the fixtures: zarr_dtype -> canonical dtype.
FIXTURE_DTYPES = {
    "acquisition/es/data": "int16",
    "acquisition/es/electrodes": "int64",
    "acquisition/es/starting_time": "float64",  # scalar
    "acquisition/ts/data": "float64",  # zarr_dtype "float": a list of Python floats
    "acquisition/ts/starting_time": "float64",  # scalar
    "file_create_date": "ascii",  # isodatetime, stored as bytes
    "general/extracellular_ephys/electrodes/group": "object",
    "general/extracellular_ephys/electrodes/group_name": "text",
    "general/extracellular_ephys/electrodes/id": "int64",
    "general/extracellular_ephys/electrodes/location": "text",
    "identifier": "text",  # scalar
    "intervals/epochs/id": "int64",
    "intervals/epochs/start_time": "float64",
    "intervals/epochs/stop_time": "float64",
    "intervals/epochs/tags": "text",
    "intervals/epochs/tags_index": "uint8",
    "session_description": "text",  # scalar
    "session_start_time": "ascii",  # scalar isodatetime
    "timestamps_reference_time": "ascii",  # scalar isodatetime
}
COMPOUND = [{"name": "idx_start", "dtype": "int32"}, {"name": "count", "dtype": "int32"},
            {"name": "timeseries", "dtype": "object"}]


@pytest.mark.parametrize("fixture", FIXTURE_FILES)
def test_dtypes_of_fixture_datasets(fixture: str) -> None:
    arrays = arrays_of(open_fixture(fixture))
    found = {path: hdmf_dtype_of(a) for path, a in arrays.items()
             if not path.startswith("specifications/")}
    want: dict[str, Any] = dict(FIXTURE_DTYPES)
    if fixture == "ex.nwb.zarr":
        want["intervals/epochs/timeseries"] = COMPOUND
        want["intervals/epochs/timeseries_index"] = "uint8"
    assert found == want
    for path, array in arrays.items():
        attribute = array.attrs["zarr_dtype"]
        if path.startswith("specifications/"):
            assert hdmf_dtype_of(array) == "text" and attribute == "scalar"
            continue
        storage = storage_dtype(found[path])
        # The stored numpy dtype and object codec are what the table says...
        if storage.dtype.names:
            assert array.dtype == storage.dtype
        else:  # the stored dtype: strings read as StringDType on numpy 2
            assert array.metadata.dtype == storage.dtype, path
        ids = [f.codec_id for f in array.filters]
        if storage.object_codec in ("vlen-utf8", "vlen-bytes"):
            assert ids == [storage.object_codec], path
        elif storage.object_codec == "json2":  # references: pickle by default, or JSON
            assert ids == ["pickle" if fixture == "ex.nwb.zarr" else "json2"], path
        else:
            assert ids == [], path
        # ...and so is the zarr_dtype attribute, but for scalars and Python floats.
        if attribute == "scalar":
            assert array.shape == (1,), path
        elif attribute == "float":
            assert array.dtype == np.dtype("<f8")
        else:
            assert attribute == storage.zarr_dtype, path


# --- attributes -----------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURE_FILES)
def test_user_attributes_of_fixtures(fixture: str) -> None:
    root = open_fixture(fixture)
    assert ".specloc" in root.attrs
    assert user_attributes(root) == {k: v for k, v in root.attrs.asdict().items()
                                     if k != ".specloc"}
    assert set(user_attributes(root)) == {"namespace", "neurodata_type", "nwb_version",
                                          "object_id"}
    for node_path in expected()[fixture]["links"]:
        node = root[node_path]
        assert "zarr_link" in node.attrs and "zarr_link" not in user_attributes(node)
        assert user_attributes(node)["neurodata_type"] == "ElectrodeGroup"
    for path, array in arrays_of(root).items():
        shown = user_attributes(array)
        assert "zarr_dtype" in array.attrs and "zarr_dtype" not in shown, path
        assert set(shown) == set(array.attrs) - {"zarr_dtype"}
    # Reference attributes come out as References that resolve to the expected node.
    for where, target in expected()[fixture]["reference_attributes"].items():
        node_path, name = where.split("#")
        node = root[node_path]
        reference = user_attributes(node)[name]
        assert isinstance(reference, Reference), where
        assert reference.path == target and reference.source == "."
        assert reference.resolve(node).name == target
        assert isinstance(node.attrs[name], dict)  # stored attributes untouched


def test_user_attributes_reserved_names() -> None:
    root = zk.group({}, attributes={".specloc": "specifications", "zarr_dtype": "x",
                                    "zarr_link": [], "keep": 1})
    assert user_attributes(root) == {"keep": 1}
    target = root.create_group("t", attributes={"object_id": "t-1"})
    sub = root.create_group("sub", attributes={
        ".specloc": "elsewhere", "zarr_link": [], "refs": encode_attribute([Reference("/t")] * 2),
        "plain": {"value": 3}, "not_ref": {"zarr_dtype": "int", "value": 1}})
    sub.create_link("l", target)
    shown = user_attributes(sub)
    assert shown[".specloc"] == "elsewhere"  # reserved on the root only
    assert "zarr_link" not in shown
    assert [r.path for r in shown["refs"]] == ["/t", "/t"]
    assert shown["plain"] == {"value": 3}
    assert shown["not_ref"] == {"zarr_dtype": "int", "value": 1}
    # Nested in the store under a path, the group at "" is still the root.
    nested = zk.open_group(root.store, path="sub", mode="r")
    assert ".specloc" in user_attributes(nested)


# --- specifications -------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURE_FILES)
def test_fixture_specifications(fixture: str) -> None:
    root = open_fixture(fixture)
    specs = read_specifications(root)
    spec_dir = hdmf_dir() / fixture / "specifications"
    assert spec_location(root) == "specifications"
    assert set(specs) == {"core", "hdmf-common", "hdmf-experimental"}
    assert list(specs["core"]) == [root.attrs["nwb_version"]] == ["2.11.0"]
    assert list(specs["hdmf-common"]) == ["1.10.0"]
    for namespace, versions in specs.items():
        for version, sources in versions.items():
            directory = spec_dir / namespace / version
            on_disk = sorted(p.name for p in directory.iterdir() if p.is_dir())
            assert sorted(sources) == on_disk
            for source, parsed in sources.items():
                assert parsed == json.loads(chunk_text(directory / source)), source
            declared = sources["namespace"]["namespaces"]
            assert [(n["name"], n["version"]) for n in declared] == [(namespace, version)]
            # Every source the namespace lists is cached under its name.
            listed = {entry["source"] for entry in declared[0]["schema"] if "source" in entry}
            assert listed == set(sources) - {"namespace"}
    core = specs["core"]["2.11.0"]
    assert {"nwb.base", "nwb.ecephys", "nwb.file"} <= set(core)
    types = {g.get("neurodata_type_def") for g in core["nwb.ecephys"]["groups"]}
    assert "ElectrodeGroup" in types


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_write_read_specifications(zarr_format: int, tmp_path: Path) -> None:
    source = open_fixture("exjson.nwb.zarr")
    specs = read_specifications(source)
    path = tmp_path / "out.zarr"
    root = zk.group(path, zarr_format=zarr_format)
    for namespace, versions in specs.items():
        for version, sources in versions.items():
            # Raw JSON texts for core (stored as given), parsed values for the others.
            given: dict[str, Any] = sources
            if namespace == "core":
                given = {name: chunk_text(hdmf_dir() / "exjson.nwb.zarr" / "specifications"
                                          / namespace / version / name) for name in sources}
            group = write_specifications(root, namespace, version, given)
            assert group.name == f"/specifications/{namespace}/{version}"
    assert root.attrs[".specloc"] == "specifications"
    assert read_specifications(zk.open_group(path, mode="r")) == specs
    fixture_dir = hdmf_dir() / "exjson.nwb.zarr" / "specifications" / "core" / "2.11.0"
    for name in ("namespace", "nwb.base", "nwb.ecephys"):
        written = path / "specifications" / "core" / "2.11.0" / name
        if zarr_format == 2:
            # As hdmf-zarr writes them: the same chunk bytes, the same array metadata.
            assert (written / "0").read_bytes() == (fixture_dir / name / "0").read_bytes()
            mine = json.loads((written / ".zarray").read_text())
            theirs = json.loads((fixture_dir / name / ".zarray").read_text())
            for key in ("shape", "chunks", "dtype", "compressor", "filters", "order"):
                assert mine[key] == theirs[key], key
            assert json.loads((written / ".zattrs").read_text()) == {"zarr_dtype": "scalar"}
        else:  # as hdmf-zarr 0.14's ZarrSpecWriter: a scalar string array, no attributes
            document = json.loads((written / "zarr.json").read_text())
            assert document["data_type"] == "string" and document["shape"] == []
            assert document["attributes"] == {}
            assert [c["name"] for c in document["codecs"]] == ["vlen-utf8", "zstd"]
    if zarr_format == 3:  # zarr-python reads them too (it has no json2 object arrays)
        import zarr

        theirs = zarr.open_group(path, mode="r")
        text = theirs["specifications/core/2.11.0/nwb.base"][()]
        assert json.loads(str(text)) == specs["core"]["2.11.0"]["nwb.base"]


def test_specifications_location_and_errors() -> None:
    root = zk.group({}, attributes={".specloc": "/cache/specs"})
    write_specifications(root, "ext", "0.1.0", {"namespace": {"namespaces": []}})
    assert root.attrs[".specloc"] == "/cache/specs"  # an existing location is kept
    assert "cache/specs/ext/0.1.0/namespace" in root
    write_specifications(root, "ext", "0.1.0", {"namespace": '{"namespaces":[1]}'})
    write_specifications(root, "ext", "0.2.0", {"namespace": "{}"})
    assert read_specifications(root) == {"ext": {"0.1.0": {"namespace": {"namespaces": [1]}},
                                                 "0.2.0": {"namespace": {}}}}
    with pytest.raises(ValueError, match="not JSON"):
        write_specifications(root, "ext", "0.1.0", {"namespace": "{nope"})
    for namespace, version, source in (("a/b", "1", "s"), ("a", "", "s"), ("a", "1", ".."),
                                       ("a", "1", "x/y")):
        with pytest.raises(ValueError, match="invalid"):
            write_specifications(root, namespace, version, {source: "{}"})
    assert read_specifications(zk.group({})) == {}
    with pytest.raises(MetadataError, match="not in the file"):
        read_specifications(zk.group({}, attributes={".specloc": "missing"}))
    with pytest.raises(MetadataError, match="must be a path"):
        read_specifications(zk.group({}, attributes={".specloc": 3}))
    bad = zk.group({}, attributes={".specloc": "s"})
    bad.create_array("s/ns/1/src", shape=(2,), dtype=str)
    with pytest.raises(MetadataError, match="not a scalar"):
        read_specifications(bad)
    worse = zk.group({}, attributes={".specloc": "s"})
    worse.create_array("s/ns/1/src", shape=(1,), dtype=str)[0] = "{nope"
    with pytest.raises(MetadataError, match="not JSON"):
        read_specifications(worse)


# --- converting an hdmf-zarr file to Zarr v3 ------------------------------------------------


def reference_datasets(root: zk.Group) -> list[str]:
    """The datasets holding references: zarr_dtype "object" or a compound list."""
    return [path for path, array in arrays_of(root).items()
            if array.attrs.get("zarr_dtype") == "object"
            or isinstance(array.attrs.get("zarr_dtype"), list)]


def check_converted(source: zk.Group, copy: zk.Group, fixture: str,
                    removed: tuple[str, ...] = (), zarr_format: int = 3) -> None:
    """Everything but the reference datasets: links, attributes (reference attributes
    included, but those to ``removed`` datasets), text, dates, numbers, dtypes and the
    cached specifications."""
    assert copy.zarr_format == zarr_format
    # Through v3, hdmf-zarr 0.14's convention: _LINKS (no object ids), _DTYPE, scalars of
    # shape (), ASCII text as str; back on v2, 0.13's again (its ids lost on the way).
    v3 = copy.zarr_format == 3 or copy.store != source.store and zarr_format == 2
    for node_path, links in expected()[fixture]["links"].items():
        group = copy[node_path]
        assert isinstance(group, zk.Group)
        assert [(link.name, link.source, link.path) for link in group.links().values()] == [
            (link["name"], link["source"], link["path"]) for link in links]
        assert list(group.attrs).count("_LINKS" if zarr_format == 3 else "zarr_link") == 1
        for link in links:
            target = group[link["name"]]
            assert target.name == link["path"] and target.zarr_format == zarr_format
    for path, node in source.members(max_depth=None):
        assert plain_attributes(copy[path]) == plain_attributes(node), path
        reserved = [k for k in copy[path].attrs if k in ("zarr_dtype", "zarr_link", "_DTYPE",
                                                          "_LINKS", "_REFERENCE_FIELDS")]
        assert all(k.startswith("_") == (zarr_format == 3) for k in reserved), (path, reserved)
    for where, target in expected()[fixture]["reference_attributes"].items():
        node_path, name = where.split("#")
        if target.lstrip("/") in removed:
            continue
        assert user_attributes(copy[node_path])[name].resolve(copy[node_path]).name == target
    skipped = set(reference_datasets(source))
    for path, array in arrays_of(source).items():
        if path in skipped:
            continue
        converted = copy[path]
        dtype = hdmf_dtype_of(array)
        assert hdmf_dtype_of(converted) == ("text" if v3 and dtype == "ascii" else dtype), path
        assert flat_text(converted) == flat_text(array), path
        if array.attrs.get("zarr_dtype") == "scalar":
            assert converted.shape == (() if zarr_format == 3 else (1,)), path
    assert read_specifications(copy) == read_specifications(source)


def plain_attributes(node: zk.Array | zk.Group) -> dict[str, Any]:
    """The attributes that neither convention reserves nor encodes (references)."""
    return {k: v for k, v in user_attributes(node).items()
            if not isinstance(v, Reference | list) or isinstance(v, list) and not any(
                isinstance(i, Reference) for i in v)}


def flat_text(array: zk.Array) -> list[Any]:
    """The elements in C order, bytes as str (hdmf-zarr 0.14 stores ASCII text as str)."""
    return [v.decode() if isinstance(v, bytes) else v
            for v in np.asarray(array[...], dtype=object).reshape(-1).tolist()]


@pytest.mark.parametrize("fixture", FIXTURE_FILES)
def test_convert_to_v3_keeps_links_text_and_attributes(fixture: str, tmp_path: Path) -> None:
    """A file converted to v3 without its reference datasets (for those, see the next
    test): links are attributes, so all survive, and so do reference attributes, text (v3
    "string"), ISO dates (v3 "variable_length_bytes") and the cached specifications."""
    store = copy_fixture(fixture, tmp_path)
    source = zk.open_group(store, mode="r+")
    removed = tuple(reference_datasets(source))
    assert removed
    for path in removed:
        del source[path]
    assert reference_datasets(source) == []
    zk.consolidate_metadata(store)
    zk.convert(store, tmp_path / "v3.zarr", zarr_format=3, progress=False)
    copy = zk.open_group(tmp_path / "v3.zarr", mode="r")
    check_converted(zk.open_group(store, mode="r"), copy, fixture, removed)
    kinds = {path: copy[path].metadata.data_type.name for path in
             ("identifier", "general/extracellular_ephys/electrodes/location",
              "session_start_time", "file_create_date")}
    # hdmf-zarr 0.14 stores ISO dates (ASCII) as str too: Zarr v3 has no byte strings.
    assert set(kinds.values()) == {"string"}


def check_reference_datasets(source: zk.Group, copy: zk.Group, fixture: str) -> None:
    """Every reference dataset of ``fixture`` in ``copy``: same hdmf dtype, attributes and
    chunks, each reference read by zarrkit resolving to its expected target in ``copy``."""
    for path, targets in expected()[fixture]["reference_datasets"].items():
        array = copy[path]
        assert isinstance(array, zk.Array) and array.zarr_format == copy.zarr_format
        assert hdmf_dtype_of(array) == hdmf_dtype_of(source[path])
        assert plain_attributes(array) == plain_attributes(source[path])
        if array.zarr_format == 3:  # hdmf-zarr 0.14's attributes
            assert ("_DTYPE" in array.attrs) != ("_REFERENCE_FIELDS" in array.attrs), path
        assert array.chunks == source[path].chunks and array.shape == source[path].shape
        found = []
        for item in read_references(array).tolist():
            values = item if isinstance(item, tuple) else (item,)
            resolved = [v.resolve(array) if isinstance(v, Reference) else v for v in values]
            for node in resolved:
                if isinstance(node, zk.Array | zk.Group):
                    assert node.store == copy.store  # in the copy, not the source
            row = [v.name if isinstance(v, zk.Array | zk.Group) else v for v in resolved]
            found.append(row if isinstance(item, tuple) else row[0])
        assert found == targets, path


@pytest.mark.parametrize("fixture", FIXTURE_FILES)
def test_convert_to_v3_keeps_reference_datasets(fixture: str, tmp_path: Path) -> None:
    """The whole file to v3 and back to v2: reference datasets (pickled or json2 on v2,
    compound ones included) become hdmf-zarr 0.14's paths in v3 string arrays (structs)
    and json2 again on v2, read by zarrkit.references, every reference and link still
    resolving. (hdmf-zarr 0.14 reading the v3 copy: tests/test_hdmf_v3_peer.py.)"""
    store = copy_fixture(fixture, tmp_path)
    source = zk.open_group(store, mode="r")
    zk.convert(store, tmp_path / "v3.zarr", zarr_format=3, progress=False)
    copy = zk.open_group(tmp_path / "v3.zarr", mode="r")
    check_converted(source, copy, fixture)
    check_reference_datasets(source, copy, fixture)
    group = copy["general/extracellular_ephys/electrodes/group"]
    assert group.metadata.data_type.name == "string"
    assert group[0] == "/general/extracellular_ephys/eg"
    assert group.attrs["_DTYPE"] == "object_reference"

    zk.convert(tmp_path / "v3.zarr", tmp_path / "back.zarr", zarr_format=2, progress=False)
    back = zk.open_group(tmp_path / "back.zarr", mode="r")
    check_converted(source, back, fixture, zarr_format=2)
    check_reference_datasets(source, back, fixture)
    for path in expected()[fixture]["reference_datasets"]:
        assert [f.codec_id for f in back[path].filters] == ["json2"], path
    assert not (tmp_path / "back.zarr/zarr.json").exists()


def test_convert_keeps_unwritten_references(tmp_path: Path) -> None:
    """Unwritten references (the fill value, read as None) stay None through v3 and back,
    in a 2-d reference dataset and in a compound one; chunks are kept."""
    root = zk.open_group(tmp_path / "v2.zarr", mode="w", zarr_format=2)
    target = root.create_group("acquisition/ts")
    refs = create_reference_dataset(root, "refs", np.array([[Reference.of(target)] * 2] * 2,
                                                           dtype=object), chunks=(1, 2))
    refs.resize(3, 2)
    rows = create_reference_dataset(root, "rows", [(1, "a", Reference("/acquisition/ts"))],
                                    fields=[("n", "int"), ("label", "text"), ("ts", "ref")],
                                    chunks=(1,))
    rows.resize(2)
    want_refs, want_rows = read_references(refs).tolist(), read_references(rows).tolist()
    assert want_refs[2] == [None, None] and want_rows[1][2] is None
    zk.convert(tmp_path / "v2.zarr", tmp_path / "v3.zarr", zarr_format=3, progress=False)
    zk.convert(tmp_path / "v3.zarr", tmp_path / "back.zarr", zarr_format=2, progress=False)
    # The unwritten row's text field reads None on v2 (a null row); hdmf-zarr 0.14's
    # struct keeps text in fixed-length strings, whose fill is "".
    assert want_rows[1] == (0, None, None)
    for name, fmt in (("v3.zarr", 3), ("back.zarr", 2)):
        copy = zk.open_group(tmp_path / name, mode="r")
        assert copy.zarr_format == fmt
        assert read_references(copy["refs"]).tolist() == want_refs, name
        assert read_references(copy["rows"]).tolist() == [want_rows[0], (0, "", None)], name
        assert copy["refs"].chunks == (1, 2) and copy["rows"].chunks == (1,)
        assert read_references(copy["refs"])[0, 0].resolve(copy).name == "/acquisition/ts"


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_convert_refuses_unconvertible_object_arrays_before_writing(
        zarr_format: int, tmp_path: Path) -> None:
    """An object array whose elements no destination array here holds (json2 dicts that
    are no hdmf-zarr references: no zarr_dtype; to v2, pickled ones) is refused with a
    MetadataError naming it before anything is written, wherever it is in the walk."""
    source = zk.open_group(tmp_path / "src.zarr", mode="w", zarr_format=2)
    source.create_array("a_first", shape=(4,), chunks=(2,), dtype="i4", data=np.arange(4))
    text = source.create_array("b_text", shape=(2,), dtype=object, filters=[{"id": "json2"}])
    text[...] = np.array(["x", "y"], dtype=object)
    source.create_group("c_group", attributes={"k": 1})
    odd = source.create_array("c_group/odd", shape=(3,), chunks=(2,), dtype=object,
                              filters=[{"id": "json2"}])
    odd[...] = np.array(["fine", "text", {"path": "/a_first"}], dtype=object)  # last chunk
    dest = tmp_path / "dest.zarr"
    if zarr_format == 2:  # a v2 destination keeps json2 objects as they are
        copy = zk.convert(source.store, dest, zarr_format=2, progress=False)
        assert isinstance(copy, zk.Group)
        assert copy["c_group/odd"][...].tolist() == ["fine", "text", {"path": "/a_first"}]
        assert copy["b_text"][...].tolist() == ["x", "y"]
        shutil.rmtree(dest)
        # Pickled objects are read (restricted) but never written.
        pickled = hdmf_dir() / "ex.nwb.zarr/general/extracellular_ephys/electrodes/group"
        shutil.rmtree(tmp_path / "src.zarr/c_group/odd")
        shutil.copytree(pickled, tmp_path / "src.zarr/c_group/odd")
        del zk.open_array(tmp_path / "src.zarr/c_group/odd", mode="r+").attrs["zarr_dtype"]
        match = "array '/c_group/odd'.*pickle.*ZarrReferenceData"
    else:
        match = "array '/c_group/odd'.*json2.*dict"
    for existing in (False, True):
        if existing:  # a destination with content is left as it was, overwrite or not
            zk.group(dest, zarr_format=zarr_format, attributes={"keep": True})
        before = {p: p.read_bytes() for p in dest.rglob("*") if p.is_file()}
        with pytest.raises(MetadataError, match=match):
            zk.convert(source.store, dest, zarr_format=zarr_format, progress=False,
                       overwrite=existing)
        after = {p: p.read_bytes() for p in dest.rglob("*") if p.is_file()}
        assert after == before
        assert dest.exists() == existing
    # Named a reference dataset (zarr_dtype "object"), every element must be a reference:
    # "fine" is not, and that too is found before anything is written.
    if zarr_format == 3:
        odd.attrs["zarr_dtype"] = "object"
        with pytest.raises(MetadataError, match="array '/c_group/odd'.*not an object ref"):
            zk.convert(source.store, tmp_path / "other.zarr", zarr_format=3, progress=False)
        assert not (tmp_path / "other.zarr").exists()


# --- consolidated metadata ------------------------------------------------------------------


def zarr_python_unreadable(store: Path) -> list[str]:
    """The arrays of an hdmf-zarr file that zarr-python 3.1 cannot parse the metadata of,
    whoever wrote the file: object arrays with an object codec (json2, pickle: references
    and cached specifications) and object arrays with the numeric fill value 0 that
    hdmf-zarr writes for ISO dates (vlen-bytes)."""
    found = []
    for zarray in sorted(store.rglob(".zarray")):
        metadata = json.loads(zarray.read_text())
        ids = [f["id"] for f in metadata.get("filters") or []]
        if "O" in json.dumps(metadata["dtype"]) and (
                {"json2", "pickle"} & set(ids) or metadata["fill_value"] == 0
                and "vlen-bytes" in ids):
            found.append(zarray.parent.relative_to(store).as_posix())
    return found


def change_with_zarrkit(store: Path) -> None:
    root = zk.open_group(store, mode="r+")
    root["general/extracellular_ephys"].create_link("device_again", root["general/devices/dev"])
    root["acquisition/ts/data"].attrs["comment"] = "changed by zarrkit"
    root["acquisition/es"].attrs["source_ts"] = encode_attribute(
        Reference.of(root["acquisition/ts"]))
    root.attrs["note"] = "root attribute"


def check_changed(root: Any, links: Any) -> None:
    assert [entry["name"] for entry in links("general/extracellular_ephys")] == ["device_again"]
    assert root["acquisition/ts/data"].attrs["comment"] == "changed by zarrkit"
    assert root["acquisition/es"].attrs["source_ts"]["value"]["path"] == "/acquisition/ts"
    assert root.attrs["note"] == "root attribute"


@pytest.mark.parametrize("fixture", FIXTURE_FILES)
def test_consolidated_metadata_after_zarrkit_changes(fixture: str, tmp_path: Path) -> None:
    import zarr

    store = copy_fixture(fixture, tmp_path)
    before = json.loads((store / ".zmetadata").read_text())["metadata"]
    # zarr-python 3.1 parses no hdmf-zarr file (see zarr_python_unreadable); it gets a copy
    # without those arrays, trimmed before zarrkit changes it.
    with pytest.raises((TypeError, ValueError)):
        zarr.open_consolidated(store, mode="r", zarr_format=2)
    trimmed = tmp_path / "trimmed" / fixture
    shutil.copytree(store, trimmed)
    unreadable = zarr_python_unreadable(trimmed)
    assert "session_start_time" in unreadable
    for path in unreadable:
        shutil.rmtree(trimmed / path)
    zk.consolidate_metadata(trimmed)

    for target in (store, trimmed):
        change_with_zarrkit(target)
        # zarrkit keeps .zmetadata current itself: a consolidated reader sees the changes
        # before anyone consolidates again (and consolidating again changes nothing).
        current = zk.open_group(target, mode="r", consolidated=True)
        assert current.attrs["note"] == "root attribute"
        kept = (target / ".zmetadata").read_bytes()
        zk.consolidate_metadata(target)
        assert json.loads((target / ".zmetadata").read_bytes()) == json.loads(kept)

    # zarrkit's .zmetadata of the full copy: every node still there, the changes in.
    after = json.loads((store / ".zmetadata").read_text())["metadata"]
    assert "general/extracellular_ephys/.zattrs" not in before  # it had no attributes
    assert set(after) == set(before) | {"general/extracellular_ephys/.zattrs"}
    changed = {key for key in after if after[key] != before.get(key)}
    assert changed == {".zattrs", "general/extracellular_ephys/.zattrs",
                       "acquisition/ts/data/.zattrs", "acquisition/es/.zattrs"}
    mine = zk.open_group(store, mode="r", consolidated=True)
    assert mine.consolidated
    check_changed(mine, lambda p: [link.to_json() for link in mine[p].links().values()])
    assert mine["general/extracellular_ephys/device_again"] == mine["general/devices/dev"]

    theirs = zarr.open_consolidated(trimmed, mode="r", zarr_format=2)
    check_changed(theirs, lambda p: theirs[p].attrs["zarr_link"])
    # ...read from the consolidated document, not from the .zattrs files.
    flat = theirs.metadata.consolidated_metadata.flattened_metadata
    assert flat["acquisition/ts/data"].attributes["comment"] == "changed by zarrkit"
    assert [e["name"] for e in flat["general/extracellular_ephys"].attributes["zarr_link"]] \
        == ["device_again"]
    assert theirs.attrs["note"] == "root attribute"
