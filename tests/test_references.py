"""Object references of the hdmf-zarr conventions (zarrkit.references): every reference of
the hdmf-zarr 0.13 fixtures resolves to its expected target; references that zarrkit writes
(v2: hdmf-zarr 0.13's convention, v3: 0.14's; datasets, compound datasets, attributes) read
back in zarrkit and are stored as the storage spec and hdmf-zarr's JSON codec store them
(v2) or as hdmf-zarr 0.14 stores them (v3); zarr-python reads the JSON-coded reference
datasets as dicts. zarrkit's own v3 form before 0.14 (JSON texts) still reads and writes.
Files that hdmf-zarr 0.14 writes and reads are checked in tests/test_hdmf_v3_peer.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numcodecs
import numpy as np
import pytest
import zarr
from shared_fixtures import fixtures_dir

import zarrkit as zk
from zarrkit.errors import AttributeValueError, LinkError, MetadataError, ZarrkitError
from zarrkit.references import (
    Reference,
    create_reference_dataset,
    decode_attribute,
    decode_attributes,
    encode_attribute,
    is_reference_attribute,
    iter_references,
    read_references,
    read_region,
    write_references,
)

FILES = ["ex.nwb.zarr", "exjson.nwb.zarr"]
FIELDS = [("idx_start", "int32"), ("count", "int32"), ("timeseries", "object")]
REFERENCE_KEYS = ["source", "path", "object_id", "source_object_id"]


def _hdmf(name: str) -> Path:
    return fixtures_dir() / "hdmf" / name


def _expected(name: str) -> dict[str, Any]:
    return json.loads((fixtures_dir() / "hdmf" / "expected.json").read_text())[name]  # type: ignore[no-any-return]


# --- 1. the hdmf-zarr fixtures ----------------------------------------------------------------

@pytest.mark.parametrize("name", FILES)
def test_fixture_reference_attributes_resolve(name: str) -> None:
    root = zk.open_group(_hdmf(name), mode="r")
    expected = _expected(name)["reference_attributes"]
    assert expected
    for key, target_path in expected.items():
        node_path, attribute = key.split("#")
        node = root[node_path]
        stored = node.attrs[attribute]
        assert is_reference_attribute(stored)
        reference = decode_attribute(stored)
        assert isinstance(reference, Reference)
        target = reference.resolve(node)
        assert target.name == target_path, key
        # The ids hdmf-zarr stored are those of the target and of the file's root.
        assert reference.object_id in (None, target.attrs.get("object_id"))
        assert reference.source_object_id == root.attrs["object_id"]
        assert decode_attributes(node)[attribute] == reference


@pytest.mark.parametrize("name", FILES)
def test_fixture_reference_datasets_resolve(name: str) -> None:
    root = zk.open_group(_hdmf(name), mode="r")
    expected = _expected(name)["reference_datasets"]
    assert expected
    for path, targets in expected.items():
        array = root[path]
        values = read_references(array)
        if isinstance(targets[0], list):  # compound rows: [idx_start, count, target path]
            assert array.attrs["zarr_dtype"][2] == {"dtype": "object", "name": "timeseries"}
            rows = [[int(row["idx_start"]), int(row["count"]),
                     row["timeseries"].resolve(array).name] for row in values]
            assert rows == targets, path
        else:
            assert all(isinstance(v, Reference) for v in values)
            assert [v.resolve(array).name for v in values] == targets, path
        for reference in iter_references(array):
            target = reference.resolve(array)
            assert reference.object_id == target.attrs["object_id"]
            assert reference.source_object_id == root.attrs["object_id"]


def test_both_fixture_codecs_read_the_same_references() -> None:
    pickled = zk.open_group(_hdmf("ex.nwb.zarr"), mode="r")
    as_json = zk.open_group(_hdmf("exjson.nwb.zarr"), mode="r")
    path = "general/extracellular_ephys/electrodes/group"
    assert pickled[path].filters[0].codec_id == "pickle"
    assert as_json[path].filters[0].codec_id == "json2"
    # Plain indexing gives the stored dicts; read_references the References.
    assert isinstance(pickled[path][0], dict) and isinstance(as_json[path][0], dict)
    a, b = read_references(pickled[path]), read_references(as_json[path])
    assert [r.path for r in a] == [r.path for r in b]
    assert read_references(pickled[path], 1) == a[1]
    assert read_references(pickled["intervals/epochs/timeseries"], 0)["timeseries"].path == (
        "/acquisition/ts")


def test_arrays_without_references_are_refused() -> None:
    root = zk.open_group(_hdmf("exjson.nwb.zarr"), mode="r")
    with pytest.raises(MetadataError, match="holds no object references.*'str'"):
        read_references(root["intervals/epochs/tags"])
    assert decode_attribute(root["intervals/epochs/tags"].attrs["description"]) == (
        "user-defined tags")


# --- 2. writing and reading back --------------------------------------------------------------

@pytest.fixture(params=[2, 3])
def nwb(request: pytest.FixtureRequest, tmp_path: Path) -> zk.Group:
    """A small NWB-like file with object ids, in a directory store of the format."""
    root = zk.open_group(tmp_path / "file.zarr", mode="w", zarr_format=request.param,
                         attributes={"object_id": "file-id"})
    root.create_group("general/extracellular_ephys/eg", attributes={"object_id": "eg-id"})
    root.create_group("general/extracellular_ephys/electrodes",
                      attributes={"object_id": "table-id"})
    root.create_group("acquisition/ts", attributes={"object_id": "ts-id"})
    return root


def _write_all(root: zk.Group) -> tuple[zk.Array, zk.Array, zk.Array]:
    eg = root["general/extracellular_ephys/eg"]
    table = root["general/extracellular_ephys/electrodes"]
    ts = root["acquisition/ts"]
    electrodes = table.create_array("electrodes", shape=(2,), dtype="int64",
                                    attributes={"table": encode_attribute(Reference.of(table),
                                                                          table)})
    group = create_reference_dataset(table, "group", [Reference.of(eg)] * 2, chunks=(2,))
    rows = create_reference_dataset(root.create_group("intervals/epochs"), "timeseries",
                                    [(0, 1, Reference.of(ts)), (3, 4, Reference.of(eg))],
                                    fields=FIELDS)
    return electrodes, group, rows


def test_written_references_read_back(nwb: zk.Group) -> None:
    electrodes, group, rows = _write_all(nwb)
    reopened = zk.open_group(nwb.store, mode="r")
    table_ref = decode_attribute(reopened["general/extracellular_ephys/electrodes/electrodes"]
                                 .attrs["table"])
    v2 = nwb.zarr_format == 2  # only hdmf-zarr 0.13 stores object ids with references
    assert table_ref == Reference("/general/extracellular_ephys/electrodes", ".",
                                  *(("table-id", "file-id") if v2 else ()))
    refs = read_references(reopened["general/extracellular_ephys/electrodes/group"])
    assert refs.shape == (2,) and refs.dtype == object
    assert [r.resolve(group).name for r in refs] == ["/general/extracellular_ephys/eg"] * 2
    assert refs[0] == Reference("/general/extracellular_ephys/eg", ".",
                                *(("eg-id", "file-id") if v2 else ()))
    values = read_references(reopened["intervals/epochs/timeseries"])
    assert values.dtype.names == ("idx_start", "count", "timeseries")
    assert [(int(a), int(b), r.resolve(rows).name) for a, b, r in values.tolist()] == [
        (0, 1, "/acquisition/ts"), (3, 4, "/general/extracellular_ephys/eg")]
    if v2:
        assert reopened["intervals/epochs/timeseries"].attrs["zarr_dtype"] == [
            {"dtype": "int32", "name": "idx_start"}, {"dtype": "int32", "name": "count"},
            {"dtype": "object", "name": "timeseries"}]
    else:
        assert reopened["intervals/epochs/timeseries"].attrs.asdict() == {
            "_REFERENCE_FIELDS": ["timeseries"]}


def test_written_reference_attributes_are_the_spec_form(nwb: zk.Group) -> None:
    _write_all(nwb)
    base = Path(str(nwb.store.root)) / "general/extracellular_ephys/electrodes/electrodes"
    if nwb.zarr_format == 2:
        attributes = json.loads((base / ".zattrs").read_text())
    else:
        attributes = json.loads((base / "zarr.json").read_text())["attributes"]
    if nwb.zarr_format == 3:  # as hdmf-zarr 0.14 writes the table of a DynamicTableRegion
        assert attributes["table"] == {"_REFERENCE": {
            "source": ".", "path": "/general/extracellular_ephys/electrodes"}}
        return
    # The storage spec's example: "table": {"value": {...}, "zarr_dtype": "object"}.
    assert attributes["table"] == {
        "value": {"path": "/general/extracellular_ephys/electrodes", "source": ".",
                  "object_id": "table-id", "source_object_id": "file-id"},
        "zarr_dtype": "object"}
    assert sorted(attributes["table"]["value"]) == sorted(REFERENCE_KEYS)


def _chunk_bytes(path: Path, codec: Any = None) -> bytes:
    data = path.read_bytes()
    return bytes(numcodecs.Zstd().decode(data)) if codec is None else data


def test_v2_reference_datasets_are_stored_as_hdmf_zarr_json(tmp_path: Path) -> None:
    # Written with the ids of exjson.nwb.zarr, zarrkit's json2 chunk equals hdmf-zarr's.
    fixture = _hdmf("exjson.nwb.zarr")
    stored = fixture / "general/extracellular_ephys/electrodes/group"
    original = zk.open_array(stored, mode="r")
    root = zk.open_group(tmp_path / "copy.zarr", mode="w", zarr_format=2)
    array = create_reference_dataset(root, "group", read_references(original),
                                     compressor=numcodecs.Blosc("lz4", 5, 1))
    zarray = json.loads((tmp_path / "copy.zarr/group/.zarray").read_text())
    theirs = json.loads((stored / ".zarray").read_text())
    assert zarray["dtype"] == theirs["dtype"] == "|O"
    assert zarray["filters"] == theirs["filters"]  # hdmf-zarr's JSON object codec (json2)
    blosc = numcodecs.Blosc()
    mine = bytes(blosc.decode((tmp_path / "copy.zarr/group/0").read_bytes()))
    assert mine == bytes(blosc.decode((stored / "0").read_bytes()))
    assert json.loads(mine)[-2:] == ["|O", [2]]
    assert json.loads((tmp_path / "copy.zarr/group/.zattrs").read_text()) == {
        "zarr_dtype": "object"}
    assert array[0] == dict(json.loads(mine)[0])  # plain reads give the stored dicts


def test_v2_compound_datasets_are_json2_rows(tmp_path: Path) -> None:
    """Each row a JSON array in a json2 object array: numcodecs' JSON codec (which
    zarr-python 2, and so hdmf-zarr 0.13, reads it with) decodes no structured array, so
    the structured dtype hdmf-zarr 0.13 pickles (see ex.nwb.zarr) cannot be used."""
    root = zk.open_group(tmp_path / "f.zarr", mode="w", zarr_format=2)
    ref = Reference("/acquisition/ts", object_id="ts-id")
    create_reference_dataset(root, "timeseries", [(0, 1, ref)], fields=FIELDS, compressors=None)
    base = tmp_path / "f.zarr/timeseries"
    zarray = json.loads((base / ".zarray").read_text())
    assert zarray["dtype"] == "|O"
    assert [f["id"] for f in zarray["filters"]] == ["json2"]
    assert zarray["fill_value"] is None
    row = [0, 1, {"object_id": "ts-id", "path": "/acquisition/ts", "source": ".",
                  "source_object_id": None}]
    chunk = (base / "0").read_bytes()
    assert json.loads(chunk) == [row, "|O", [1]]
    assert numcodecs.JSON().decode(chunk).tolist() == [row]
    assert json.loads((base / ".zattrs").read_text())["zarr_dtype"] == [
        {"dtype": d, "name": n} for n, d in FIELDS]
    assert zk.open_array(base, mode="r")[0][2]["path"] == "/acquisition/ts"


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_compound_field_dtypes_are_written_as_hdmf_zarr_names(zarr_format: int) -> None:
    root = zk.group({}, zarr_format=zarr_format)
    fields = [{"name": "n", "dtype": "int"}, {"name": "x", "dtype": "double"},
              {"name": "label", "dtype": "text"}, {"name": "target", "dtype": "ref"}]
    array = create_reference_dataset(root, "rows", [(7, 0.5, "a", Reference("/t")),
                                                    (8, 1.5, "b", Reference("/u"))],
                                     fields=fields)
    if zarr_format == 2:
        assert array.attrs["zarr_dtype"] == [
            {"name": "n", "dtype": "int32"}, {"name": "x", "dtype": "float64"},
            {"name": "label", "dtype": "str_"}, {"name": "target", "dtype": "object"}]
    else:  # hdmf-zarr 0.14: the struct names the fields; text of at least 512 characters
        assert array.attrs.asdict() == {"_REFERENCE_FIELDS": ["target"]}
        assert array.dtype == np.dtype([("n", "<i4"), ("x", "<f8"), ("label", "<U512"),
                                        ("target", "<U512")])
    values = read_references(array)
    assert values.dtype == np.dtype([("n", "<i4"), ("x", "<f8"),
                                     ("label", "O" if zarr_format == 2 else "<U512"),
                                     ("target", "O")])
    assert values.tolist() == [(7, 0.5, "a", Reference("/t")), (8, 1.5, "b", Reference("/u"))]
    assert read_references(array, 1)["target"] == Reference("/u")
    write_references(array, 1, (9, 2.5, "c", Reference("/v")))  # one row: a tuple
    write_references(array, slice(0, 1), [(6, 3.5, "d", Reference("/w"))])
    assert read_references(array).tolist() == [(6, 3.5, "d", Reference("/w")),
                                               (9, 2.5, "c", Reference("/v"))]
    assert [r.path for r in iter_references(array)] == ["/w", "/v"]
    with pytest.raises(MetadataError, match="invalid compound field"):
        create_reference_dataset(root, "bad", [(1,)], fields=[("n", "float128")])


def test_v3_references_are_hdmf_zarr_014_paths(tmp_path: Path) -> None:
    """As hdmf-zarr 0.14 stores them: target paths in a string array (a reference to
    another store, which 0.14 never writes, as the JSON text that 0.14 also reads), and
    compound rows in a struct whose reference field is a fixed-length string."""
    root = zk.open_group(tmp_path / "f.zarr", mode="w", zarr_format=3)
    refs = create_reference_dataset(root, "refs", [Reference("/a"), Reference("/b", "../o.zarr")],
                                    compressors=None)
    rows = create_reference_dataset(root, "rows", [(2, 3, Reference("/a"))], fields=FIELDS,
                                    compressors=None)
    document = json.loads((tmp_path / "f.zarr/refs/zarr.json").read_text())
    assert document["data_type"] == "string"
    assert document["attributes"] == {"_DTYPE": "object_reference"}
    texts = numcodecs.VLenUTF8().decode((tmp_path / "f.zarr/refs/c/0").read_bytes())
    assert list(texts) == ["/a", '{"source":"../o.zarr","path":"/b"}']
    assert refs[0] == "/a"  # plain reads: the texts
    rows_document = json.loads((tmp_path / "f.zarr/rows/zarr.json").read_text())
    assert rows_document["data_type"] == {"name": "struct", "configuration": {"fields": [
        {"name": "idx_start", "data_type": "int32"}, {"name": "count", "data_type": "int32"},
        {"name": "timeseries", "data_type": {"name": "fixed_length_utf32",
                                             "configuration": {"length_bytes": 2048}}}]}}
    assert rows_document["attributes"] == {"_REFERENCE_FIELDS": ["timeseries"]}
    values = read_references(rows)
    assert values.dtype == np.dtype([("idx_start", "<i4"), ("count", "<i4"),
                                     ("timeseries", "O")])
    assert values.tolist() == [(2, 3, Reference("/a"))]
    assert [r.path for r in read_references(refs)] == ["/a", "/b"]
    assert read_references(refs)[1].source == "../o.zarr"
    # A path longer than its fixed-length field is refused, not cut (numpy would cut it).
    with pytest.raises(ValueError, match="does not fit field 'timeseries'"):
        write_references(rows, 0, (1, 1, Reference("/" + "x" * 600)))
    assert read_references(rows, 0)["timeseries"] == Reference("/a")
    wide = create_reference_dataset(root, "wide", [(1, 1, Reference("/" + "x" * 600))],
                                    fields=FIELDS)
    assert wide.dtype["timeseries"] == np.dtype("<U601")
    # zarr-python reads them as hdmf-zarr 0.14 does: paths, and struct rows.
    peer = zarr.open_group(tmp_path / "f.zarr", mode="r")
    assert list(peer["refs"][:]) == ["/a", '{"source":"../o.zarr","path":"/b"}']
    assert peer["rows"][0]["timeseries"] == "/a"


def test_zarrkit_v3_json_form_still_reads_and_writes() -> None:
    """zarrkit wrote references in v3 files as JSON texts (zarr_dtype "object") and
    compound rows as JSON lists before it knew hdmf-zarr 0.14: those arrays still read,
    and writes into them keep their form."""
    root = zk.group({}, zarr_format=3)
    refs = root.create_array("refs", shape=(2,), dtype=str, attributes={"zarr_dtype": "object"})
    refs[...] = np.array([json.dumps(Reference("/a").to_json()), ""], dtype=object)
    rows = root.create_array("rows", shape=(1,), dtype=str, attributes={
        "zarr_dtype": [{"name": n, "dtype": d} for n, d in FIELDS]})
    rows[0] = json.dumps([2, 3, Reference("/a").to_json()])
    assert read_references(refs).tolist() == [Reference("/a"), None]
    assert read_references(rows).tolist() == [(2, 3, Reference("/a"))]
    write_references(refs, 1, Reference("/b"))
    write_references(rows, 0, (4, 5, Reference("/c")))
    assert json.loads(refs[1]) == Reference("/b").to_json()
    assert json.loads(rows[0]) == [4, 5, Reference("/c").to_json()]


def test_partial_writes_and_unwritten_elements(nwb: zk.Group) -> None:
    refs = create_reference_dataset(nwb, "refs", np.array([[Reference("/a")] * 3] * 2,
                                                          dtype=object), chunks=(1, 2))
    assert read_references(refs).shape == (2, 3)
    write_references(refs, (1, slice(1, None)), [Reference("/x"), Reference("/y")])
    assert [[r.path for r in row] for row in read_references(refs)] == [
        ["/a", "/a", "/a"], ["/a", "/x", "/y"]]
    refs.resize(3, 3)
    assert read_references(refs)[2].tolist() == [None, None, None]  # unwritten: the fill
    assert len(iter_references(refs)) == 6  # type: ignore[arg-type]
    rows = create_reference_dataset(nwb, "rows", [], fields=FIELDS)
    assert rows.shape == (0,) and read_references(rows).shape == (0,)


def test_external_references(tmp_path: Path) -> None:
    here = zk.open_group(tmp_path / "a.zarr", mode="w", zarr_format=2)
    there = zk.open_group(tmp_path / "b.zarr", mode="w", zarr_format=2,
                          attributes={"object_id": "b-file"})
    target = there.create_array("data", shape=(2,), dtype="u1")
    reference = Reference.of(target, origin=here)
    assert reference == Reference("/data", "../b.zarr", None, "b-file")
    refs = create_reference_dataset(here, "refs", [reference])
    assert read_references(zk.open_array(tmp_path / "a.zarr/refs", mode="r"))[0].resolve(
        refs).name == "/data"
    with pytest.raises(LinkError):
        Reference("/data", "../missing.zarr").resolve(refs)
    with pytest.raises(LinkError, match="no array or group at path '/nope'"):
        Reference("/nope").resolve(refs)


# --- 3. attribute functions and validation ----------------------------------------------------

def test_attribute_functions() -> None:
    reference = Reference("/general/devices/dev", object_id="o", source_object_id="s")
    stored = encode_attribute(reference)
    assert stored == {"value": {"source": ".", "path": "/general/devices/dev", "object_id": "o",
                                "source_object_id": "s"}, "zarr_dtype": "object"}
    assert list(stored["value"]) == REFERENCE_KEYS  # hdmf-zarr's ZarrReference key order
    assert decode_attribute(json.loads(json.dumps(stored))) == reference
    many = encode_attribute([reference, Reference("/x")])
    assert decode_attribute(many) == [reference, Reference("/x")]
    for plain in (1, "object", [1, 2], {"zarr_dtype": "object"}, {"value": {"path": "/a"}},
                  {"zarr_dtype": ["x"], "value": 1}):
        assert decode_attribute(plain) == plain
    group = zk.group({}, attributes={"a": 1, "t": stored})
    assert dict(group.attrs) == {"a": 1, "t": stored}  # attributes themselves are unchanged
    assert decode_attributes(group) == {"a": 1, "t": reference}
    with pytest.raises(TypeError):
        encode_attribute(["/not/a/reference"])  # type: ignore[list-item]


@pytest.mark.parametrize("value", [
    {"source": "."}, {"path": 5}, {"path": "/a", "source": ""}, {"path": "/a", "object_id": 3},
    "/a", None, ["/a"],
])
def test_invalid_stored_references_are_metadata_errors(value: Any) -> None:
    with pytest.raises(MetadataError):
        Reference.from_json(value)
    with pytest.raises(MetadataError):
        decode_attribute({"zarr_dtype": "object", "value": value})


def test_invalid_reference_datasets_are_metadata_errors() -> None:
    root = zk.group({}, zarr_format=2)
    array = root.create_array("bad", shape=(2,), dtype=str,
                              attributes={"zarr_dtype": "object"})
    array[...] = np.array(["{not json", "x"], dtype=object)
    with pytest.raises(MetadataError, match="not an object reference"):
        read_references(array)
    compound = root.create_array("rows", shape=(1,), dtype=str,
                                 attributes={"zarr_dtype": [{"name": 5, "dtype": "int32"}]})
    with pytest.raises(MetadataError, match="invalid compound field"):
        read_references(compound)
    with pytest.raises(TypeError):
        create_reference_dataset(root, "wrong", ["/a"])
    with pytest.raises(TypeError):
        create_reference_dataset(root, "wrong2", [Reference("/a")], dtype=object)
    with pytest.raises(TypeError):
        Reference(5)  # type: ignore[arg-type]


# --- 4. zarr-python reads the JSON-coded v2 reference datasets as dicts ----------------------

@pytest.fixture
def zarr_python_json_objects() -> Iterator[None]:
    """zarr-python 3.1 has no data type for v2 object arrays of the json2 codec; this
    registers one (the object dtype, its JSON values as scalars) for the test's duration."""
    from zarr.core.dtype import data_type_registry
    from zarr.core.dtype.common import check_dtype_spec_v2
    from zarr.core.dtype.npy.bytes import VariableLengthBytes

    class JsonObjects(VariableLengthBytes):
        _zarr_v3_name: ClassVar[str] = "zarrkit_test.json_objects"  # type: ignore[misc]
        object_codec_id: ClassVar[str] = "json2"  # type: ignore[misc]

        @classmethod
        def _check_json_v2(cls, data: Any) -> bool:  # type: ignore[override]
            return bool(check_dtype_spec_v2(data) and data["name"] == "|O"
                        and data["object_codec_id"] == "json2")

        @classmethod
        def _check_json_v3(cls, data: Any) -> bool:  # type: ignore[override]
            return bool(data == cls._zarr_v3_name)

        @classmethod
        def _check_native_dtype(cls, dtype: Any) -> bool:  # type: ignore[override]
            return False  # never chosen for numpy's object dtype

        def to_json(self, zarr_format: Any) -> Any:  # type: ignore[override]
            return ({"name": "|O", "object_codec_id": "json2"} if zarr_format == 2
                    else self._zarr_v3_name)

        def default_scalar(self) -> Any:
            return None

        def from_json_scalar(self, data: Any, *, zarr_format: Any) -> Any:
            return data

        def to_json_scalar(self, data: Any, *, zarr_format: Any) -> Any:
            return data

        def cast_scalar(self, data: Any) -> Any:
            return data

    data_type_registry.register(JsonObjects._zarr_v3_name, JsonObjects)
    try:
        yield
    finally:
        data_type_registry.unregister(JsonObjects._zarr_v3_name)


def test_zarr_python_reads_json_reference_datasets_as_dicts(
        tmp_path: Path, zarr_python_json_objects: None) -> None:
    fixture = _hdmf("exjson.nwb.zarr") / "general/extracellular_ephys/electrodes/group"
    theirs = zarr.open_array(fixture, mode="r")[:]
    assert [v["path"] for v in theirs] == ["/general/extracellular_ephys/eg"] * 2

    root = zk.open_group(tmp_path / "f.zarr", mode="w", zarr_format=2)
    refs = [Reference("/a", object_id="o-a", source_object_id="f"), Reference("/b")]
    create_reference_dataset(root, "refs", refs, chunks=(1,))
    values = zarr.open_array(tmp_path / "f.zarr/refs", mode="r")[:]
    assert values.dtype == object
    assert [dict(v) for v in values] == [r.to_json() for r in refs]
    assert [Reference.from_json(v) for v in values] == refs


# --- hdmf-zarr 0.14's reference attributes, regions, and attrs[name] = Reference ---------------

@pytest.mark.parametrize("zarr_format", [2, 3])
def test_encode_attribute_writes_the_nodes_convention(zarr_format: int) -> None:
    root = zk.group({}, zarr_format=zarr_format)
    target = Reference("/t", object_id="t-1")
    one, many = encode_attribute(target, root), encode_attribute([target, Reference("/u")], root)
    if zarr_format == 3:  # as hdmf-zarr 0.14's write_attributes: source and path only
        assert one == {"_REFERENCE": {"source": ".", "path": "/t"}}
        assert many == [{"_REFERENCE": {"source": ".", "path": "/t"}},
                        {"_REFERENCE": {"source": ".", "path": "/u"}}]
    else:
        assert one == {"value": target.to_json(), "zarr_dtype": "object"}
    root.attrs.update(one=one, many=many)
    decoded = decode_attributes(root)
    assert decoded["one"].path == "/t" and [r.path for r in decoded["many"]] == ["/t", "/u"]
    assert is_reference_attribute(one) and is_reference_attribute(many)
    assert not is_reference_attribute([]) and not is_reference_attribute([{"a": 1}])


def test_region_reads_table_and_rows() -> None:
    root = zk.group({}, zarr_format=3)
    table = root.create_group("electrodes")
    region = root.create_array("region", shape=(3,), dtype="i8", attributes={
        "table": {"_REFERENCE": {"source": ".", "path": "/electrodes"}}})
    region[...] = [2, 0, 1]
    found = read_region(region)
    assert found.table == table and found.rows.tolist() == [2, 0, 1]
    plain = root.create_array("plain", shape=(1,), dtype="i8")
    with pytest.raises(MetadataError, match="no region"):
        read_region(plain)
    texts = root.create_array("texts", shape=(1,), dtype=str,
                              attributes={"table": encode_attribute(Reference.of(table), root)})
    with pytest.raises(MetadataError, match="not row indices"):
        read_region(texts)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_setting_a_reference_attribute_says_how(zarr_format: int) -> None:
    """``attrs[name] = Reference(...)``: the hierarchy (which knows no conventions) refuses
    it with a ZarrkitError that is also a TypeError, naming the attribute and saying to
    use encode_attribute; nothing is written."""
    root = zk.group({}, zarr_format=zarr_format, attributes={"keep": 1})
    ref = Reference("/t")
    attempts = [lambda: root.attrs.__setitem__("t", ref),
                lambda: root.attrs.update(t=[1, {"deep": ref}]),
                lambda: root.attrs.put({"t": ref})]
    for attempt in attempts:
        with pytest.raises(AttributeValueError, match="'t'.*Reference is not JSON serial"
                           ".*encode_attribute") as info:
            attempt()
        assert isinstance(info.value, TypeError) and isinstance(info.value, ZarrkitError)
    assert zk.open_group(root.store, mode="r").attrs.asdict() == {"keep": 1}
    root.attrs["t"] = encode_attribute(ref, root)  # the way that works
    assert decode_attribute(root.attrs["t"]) == ref
