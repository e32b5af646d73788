"""zarrkit.models (ZEP 6): the seed's JSON examples, JSON Schema, specs read from and
written to stores of zarrkit, zarr-python and the shared corpus, diff/like on normalised
documents, the flat form, and bad input.

Oracles: the seed's own JSON, jsonschema (an independent validator of the schemas), and
zarr-python 3.1 writing the stores that specs are read from and reading the stores that
specs write.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
import zarr
from shared_fixtures import fixtures_dir

import zarrkit as zk
from zarrkit.errors import ContainsArrayError, ContainsGroupError, SpecError
from zarrkit.models import v2, v3
from zarrkit.storage import MemoryStore

SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "zep0006-zarr-object-models.md"


def seed_json_blocks() -> list[Any]:
    """The JSON documents of the ZEP 6 seed, in order: v3 group, v2 group, v3 schema,
    v2 schema."""
    if not SEED.is_file():
        pytest.skip(f"seed not found at {SEED}")
    text = SEED.read_text()
    decoder = json.JSONDecoder()
    return [decoder.raw_decode(text[m.start():])[0] for m in re.finditer(r"^\{", text, re.M)]


# --- the seed's examples ---------------------------------------------------------------------

@pytest.mark.parametrize("module, index", [(v3, 0), (v2, 1)], ids=["v3", "v2"])
def test_seed_examples_parse_and_dump_back_to_equal_json(module: Any, index: int) -> None:
    document = seed_json_blocks()[index]
    spec = module.GroupSpec.from_json(document)
    assert spec.to_json() == document
    assert module.GroupSpec.from_json(json.dumps(document)).to_json() == document


def test_seed_v3_example_means_what_it_says() -> None:
    spec = v3.GroupSpec.from_json(seed_json_blocks()[0])
    array = spec.members["array"]
    assert isinstance(array, v3.ArraySpec)
    assert spec.attributes == {"foo": 42, "bar": False}
    assert array.shape == (1000, 1000)
    normal = array.normalized()
    # "|u1" is uint8; "GZip" is gzip; a chain with no array -> bytes codec gets "bytes".
    assert normal["data_type"] == "uint8"
    assert normal["codecs"] == [{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 1}}]
    assert array.to_metadata().chunks == (1000, 100)


def test_seed_examples_write_stores_zarr_python_reads(tmp_path: Path) -> None:
    blocks = seed_json_blocks()
    v3.GroupSpec.from_json(blocks[0]).to_store(str(tmp_path / "v3.zarr"))
    v2.GroupSpec.from_json(blocks[1]).to_store(str(tmp_path / "v2.zarr"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z3 = zarr.open_group(str(tmp_path / "v3.zarr"), mode="r")
        z2 = zarr.open_group(str(tmp_path / "v2.zarr"), mode="r")
        assert z3["array"].shape == (1000, 1000) and z3["array"].dtype == np.uint8
        assert z3["array"].metadata.dimension_names == ("rows", "columns")
        assert dict(z3.attrs) == {"foo": 42, "bar": False}
        assert z2["foo"].chunks == (100, 100) and dict(z2["foo"].attrs) == {"baz": True}


# --- JSON Schema -----------------------------------------------------------------------------

@pytest.mark.parametrize("module, index", [(v3, 0), (v2, 1)], ids=["v3", "v2"])
def test_seed_examples_validate_against_the_json_schema(module: Any, index: int) -> None:
    schema = module.GroupSpec.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(seed_json_blocks()[index], schema)


@pytest.mark.parametrize("module", [v2, v3], ids=["v2", "v3"])
def test_array_schema_validates_array_documents(module: Any) -> None:
    schema = module.ArraySpec.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    spec = module.ArraySpec.from_array(np.zeros((3, 4), dtype="<f8"), chunks=(2, 2))
    jsonschema.validate(spec.to_json(), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**spec.to_json(), "shape": "3x4"}, schema)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_hierarchy_dumped_from_real_stores_validates(tmp_path: Path, zarr_format: int) -> None:
    module = v3 if zarr_format == 3 else v2
    written_by_zarr = zarr_python_hierarchy(tmp_path / "zp.zarr", zarr_format)
    written_by_zarrkit = zarrkit_hierarchy(tmp_path / "zk.zarr", zarr_format)
    schema = module.GroupSpec.json_schema()
    for store in (written_by_zarr, written_by_zarrkit):
        jsonschema.validate(module.GroupSpec.from_store(store).to_json(), schema)


@pytest.mark.parametrize("module, index", [(v3, 0), (v2, 1)], ids=["v3", "v2"])
@pytest.mark.parametrize("breakage, path", [
    (lambda d, m: m.__setitem__("shape", "1000x1000"), ["members", "*", "shape"]),
    (lambda d, m: m.__setitem__("unexpected", 1), ["members", "*"]),
    (lambda d, m: d.__setitem__("attributes", [1, 2]), ["attributes"]),
    (lambda d, m: d["members"].__setitem__("a/b", d["members"].pop(next(iter(d["members"])))),
     ["members"]),
], ids=["shape", "extra-field", "attributes", "member-name"])
def test_a_broken_document_fails_the_schema_with_its_path(module: Any, index: int,
                                                          breakage: Any, path: list[str]) -> None:
    document = json.loads(json.dumps(seed_json_blocks()[index]))
    name = next(iter(document["members"]))
    breakage(document, document["members"][name])
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(module.GroupSpec.json_schema()).iter_errors(document))
    assert error is not None
    expected = [name if part == "*" else part for part in path]
    assert list(error.absolute_path)[:len(expected)] == expected
    with pytest.raises(SpecError):  # the models refuse it too
        module.GroupSpec.from_json(document)


# --- stores written by zarrkit and zarr-python ---------------------------------------------

def zarr_python_hierarchy(path: Path, zarr_format: int) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.open_group(str(path), mode="w", zarr_format=zarr_format,
                               attributes={"title": "zp"})
        root.create_array("ints", shape=(10,), chunks=(4,), dtype="<i4", fill_value=3,
                          attributes={"units": "m"})
        sub = root.create_group("sub", attributes={"level": 1})
        sub.create_array("floats", shape=(4, 6), chunks=(2, 3), dtype=">f8",
                         fill_value=float("nan"), compressors=[zarr.codecs.BloscCodec(
                             cname="zstd", clevel=3)] if zarr_format == 3 else None)
        sub.create_array("flags", shape=(5,), chunks=(5,), dtype=bool, fill_value=True)
        if zarr_format == 3:
            sub.create_array("sharded", shape=(8, 8), chunks=(2, 2), shards=(4, 4),
                             dtype="u2", dimension_names=("y", "x"))
        sub.create_group("empty")
    return str(path)


def zarrkit_hierarchy(path: Path, zarr_format: int) -> str:
    root = zk.open_group(str(path), mode="w", zarr_format=zarr_format,
                         attributes={"title": "zk"})
    root.create_array("ints", shape=(10,), chunks=(4,), dtype="<i4", fill_value=3,
                      attributes={"units": "m"})
    sub = root.create_group("sub", attributes={"level": 1})
    sub.create_array("floats", shape=(4, 6), chunks=(2, 3), dtype=">f8",
                     fill_value=float("nan"))
    sub.create_array("strings", shape=(3,), chunks=(3,), dtype=str)
    if zarr_format == 3:
        sub.create_array("sharded", shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="u2",
                         dimension_names=("y", "x"))
    return str(path)


def zarr_python_tree(path: str) -> dict[str, Any]:
    """What zarr-python sees: every node's kind, shape, dtype, chunks and attributes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.open_group(path, mode="r", use_consolidated=False)
        tree: dict[str, Any] = {"": ("group", dict(root.attrs))}
        for name, node in root.members(max_depth=None):
            if isinstance(node, zarr.Array):
                fill = node.metadata.fill_value
                tree[name] = ("array", node.shape, str(node.dtype), node.chunks,
                              repr(np.asarray(fill).tolist()), dict(node.attrs))
            else:
                tree[name] = ("group", dict(node.attrs))
    return tree


@pytest.mark.parametrize("writer", [zarr_python_hierarchy, zarrkit_hierarchy],
                         ids=["zarr-python", "zarrkit"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_from_store_to_store_round_trip(tmp_path: Path, writer: Any, zarr_format: int) -> None:
    module = v3 if zarr_format == 3 else v2
    source = writer(tmp_path / "source.zarr", zarr_format)
    spec = module.GroupSpec.from_store(source)
    assert set(spec.to_flat()) == {"/" + p if p else p for p in zarr_python_tree(source)}
    target = str(tmp_path / "copy.zarr")
    spec.to_store(target)
    assert zarr_python_tree(target) == zarr_python_tree(source)
    assert module.GroupSpec.from_store(target).like(spec)
    # And through JSON: the spec's JSON form describes the same hierarchy.
    assert module.GroupSpec.from_json(json.dumps(spec.to_json())).like(spec)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_from_store_reads_consolidated_metadata_without_listing(zarr_format: int) -> None:
    store = CountingStore()
    root = zk.group(store, zarr_format=zarr_format, attributes={"a": 1})
    for i in range(5):
        root.create_array(f"g/x{i}", shape=(3,), dtype="u1", attributes={"i": i})
    zk.consolidate_metadata(store)
    store.calls.clear()
    module = v3 if zarr_format == 3 else v2
    spec = module.GroupSpec.from_store(store)
    assert "list" not in {call for call, _ in store.calls}
    assert "list_dir" not in {call for call, _ in store.calls}
    assert sorted(spec.to_flat()) == ["", "/g"] + [f"/g/x{i}" for i in range(5)]
    assert spec.members["g"].members["x3"].attributes == {"i": 3}
    # The listing path gives the same spec.
    plain = module.GroupSpec.from_store(zk.open_group(store, mode="r", consolidated=False))
    assert plain.like(spec)


class CountingStore(MemoryStore):
    """A memory store that records the calls made on it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, Any]] = []

    def get(self, key: str) -> Any:
        self.calls.append(("get", key))
        return super().get(key)

    def get_many(self, keys: Any) -> Any:
        self.calls.append(("get_many", tuple(keys)))
        return super().get_many(keys)

    def list(self) -> Any:
        self.calls.append(("list", None))
        return super().list()

    def list_dir(self, prefix: str = "") -> Any:
        self.calls.append(("list_dir", prefix))
        return super().list_dir(prefix)


@pytest.mark.parametrize("depth, expected", [
    (0, [""]), (1, ["", "/a"]), (2, ["", "/a", "/a/b"]), (-1, ["", "/a", "/a/b", "/a/b/c"])])
def test_from_store_depth(depth: int, expected: list[str]) -> None:
    root = zk.group({}, zarr_format=3)
    root.create_group("a/b/c")
    assert sorted(v3.GroupSpec.from_store(root, depth=depth).to_flat()) == expected


def test_from_store_of_a_subgroup_and_of_the_wrong_format() -> None:
    store: dict[str, bytes] = {}
    root = zk.group(store, zarr_format=2)
    root.create_array("a/x", shape=(2,), dtype="u1")
    assert list(v2.GroupSpec.from_store(store, path="a").members) == ["x"]
    with pytest.raises(SpecError, match="Zarr v2"):
        v3.GroupSpec.from_store(store)


# --- the shared corpus -----------------------------------------------------------------------

def corpus_stores() -> list[tuple[str, int]]:
    try:
        manifest = json.loads((fixtures_dir() / "corpus" / "MANIFEST.json").read_text())
    except pytest.skip.Exception:
        return []
    return sorted({(e["store"], e["zarr_format"]) for e in manifest["entries"]})


@pytest.mark.parametrize("store, zarr_format", corpus_stores() or [pytest.param(
    "", 0, marks=pytest.mark.skip(reason="../shared/fixtures/corpus not found"))])
def test_every_corpus_hierarchy_round_trips_through_a_spec(store: str, zarr_format: int) -> None:
    path = str(fixtures_dir() / "corpus" / store)
    module = v3 if zarr_format == 3 else v2
    node = zk.open(path, mode="r")
    if isinstance(node, zk.Group):
        spec: Any = module.GroupSpec.from_store(node)
    else:
        spec = module.ArraySpec.from_array(node)
    written = spec.to_store({})
    if isinstance(written, zk.Group):
        again: Any = module.GroupSpec.from_store(written)
    else:
        again = module.ArraySpec.from_array(written)
    assert spec.like(again), spec.diff(again)
    assert module.GroupSpec.from_flat(spec.to_flat()).to_flat().keys() == spec.to_flat().keys()
    assert type(spec).from_json(json.dumps(spec.to_json())).like(spec)


# --- normalised comparison ------------------------------------------------------------------

def v3_array(**changes: Any) -> dict[str, Any]:
    document = {"zarr_format": 3, "node_type": "array", "shape": [4, 4],
                "data_type": "float32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
                "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                "fill_value": "NaN", "codecs": [{"name": "bytes",
                                                "configuration": {"endian": "little"}}],
                "attributes": {}}
    document.update(changes)
    return document


@pytest.mark.parametrize("left, right", [
    # codec spellings and defaults: a name alone, blosc typesize and blocksize
    ({"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, "crc32c"]},
     {"codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                 {"name": "crc32c"}]}),
    ({"codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                 {"name": "blosc", "configuration": {
        "cname": "zstd", "clevel": 5, "shuffle": "shuffle"}}]},
     {"codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                 {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5,
                                                     "shuffle": "shuffle", "typesize": 4,
                                                     "blocksize": 0}}]}),
    # empty optional fields
    ({"storage_transformers": []}, {}),
    ({"dimension_names": None}, {}),
    # chunk key encoding default configuration
    ({"chunk_key_encoding": {"name": "default"}}, {}),
], ids=["codec-name", "blosc-defaults", "storage-transformers", "dimension-names",
        "key-encoding"])
def test_like_ignores_spellings_and_defaults(left: dict[str, Any], right: dict[str, Any]
                                             ) -> None:
    a = v3.ArraySpec.from_json(v3_array(**left))
    b = v3.ArraySpec.from_json(v3_array(**{**left, **right}) if "codecs" not in right
                               else v3_array(**right))
    assert a.like(b) and b.like(a), a.diff(b)


def test_v2_like_ignores_codec_defaults_and_spellings() -> None:
    base = {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<f8",
            "fill_value": "NaN", "order": "C", "filters": None, "dimension_separator": ".",
            "compressor": {"id": "zstd", "level": 0, "checksum": False}, "attributes": {}}
    short = {**base, "compressor": {"id": "zstd"}, "filters": [], "fill_value": float("nan")}
    assert v2.ArraySpec.from_json(base).like(v2.ArraySpec.from_json(short))
    via_compressors = v2.ArraySpec.from_array(np.zeros(4), chunks=(2,),
                                              compressors=[{"id": "zstd"}],
                                              fill_value="NaN")
    assert via_compressors.like(v2.ArraySpec.from_json(base))


def test_like_after_a_plain_write_and_read_with_zarr_python(tmp_path: Path) -> None:
    # pydantic-zarr's like() reports differences here: zarr-python writes defaults the
    # spec left out. zarrkit compares what both mean.
    spec = v3.GroupSpec(attributes={"a": 1}, members={
        "x": v3.ArraySpec.from_json(v3_array(codecs=[
            {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}]))})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        group = zarr.open_group(str(tmp_path / "z.zarr"), mode="w", zarr_format=3,
                                attributes={"a": 1})
        group.create_array("x", shape=(4, 4), chunks=(2, 2), dtype="float32",
                           fill_value=float("nan"), compressors=[zarr.codecs.ZstdCodec()])
    assert v3.GroupSpec.from_store(str(tmp_path / "z.zarr")).like(spec)


def test_diff_lists_exactly_the_changed_fields() -> None:
    a = v3.GroupSpec(attributes={"t": 1}, members={
        "x": v3.ArraySpec.from_json(v3_array()),
        "only-left": v3.GroupSpec(),
        "g": v3.GroupSpec(members={"y": v3.ArraySpec.from_json(v3_array())}),
    })
    b = v3.GroupSpec(attributes={"t": 2}, members={
        "x": v3.ArraySpec.from_json(v3_array(shape=[4, 5], fill_value=0.0)),
        "only-right": v3.ArraySpec.from_json(v3_array()),
        "g": v3.GroupSpec(members={"y": v3.ArraySpec.from_json(
            v3_array(attributes={"u": "m"}, dimension_names=["r", "c"]))}),
    })
    found = [(d.path, d.field) for d in a.diff(b)]
    assert found == [("", "attributes"), ("/g/y", "dimension_names"), ("/g/y", "attributes"),
                     ("/only-left", "node"), ("/only-right", "node"), ("/x", "shape"),
                     ("/x", "fill_value")]
    shape = next(d for d in a.diff(b) if d.field == "shape")
    assert (shape.left, shape.right) == ([4, 4], [4, 5])
    assert [(d.path, d.field) for d in a.diff(b, include=["shape", "members"])] == [
        ("/only-left", "node"), ("/only-right", "node"), ("/x", "shape")]
    assert a.diff(b, exclude=["members"]) == a.diff(b, include=["attributes"])
    assert a.like(b, include=["zarr_format", "node_type"], exclude=["members"])


# --- writing -------------------------------------------------------------------------------

def test_to_store_keeps_equal_nodes_and_refuses_different_ones() -> None:
    store: dict[str, bytes] = {}
    spec = v3.GroupSpec(members={"a": v3.ArraySpec.from_json(v3_array()),
                                 "g": v3.GroupSpec(attributes={"k": 1})})
    array = spec.to_store(store)["a"]
    array[...] = np.ones((4, 4), dtype="f4")
    spec.to_store(store)  # equal: accepted, data kept
    assert zk.open_array(store, path="a", mode="r")[...].sum() == 16
    with pytest.raises(ContainsArrayError):
        v3.GroupSpec(members={"a": v3.ArraySpec.from_json(v3_array(shape=[5, 4]))}
                     ).to_store(store)
    with pytest.raises(ContainsGroupError):
        v3.GroupSpec(members={"g": v3.GroupSpec(attributes={"k": 2})}).to_store(store)
    with pytest.raises(ContainsGroupError):
        v3.GroupSpec(members={"g": v3.ArraySpec.from_json(v3_array())}).to_store(store)


def test_a_refused_write_leaves_the_store_unchanged() -> None:
    store: dict[str, bytes] = {}
    v3.GroupSpec(members={"z": v3.GroupSpec(attributes={"mine": True})}).to_store(store)
    before = dict(store)
    # Members are written in order; "z" conflicts after "a", "b" and "c" would be new.
    spec = v3.GroupSpec(members={"a": v3.GroupSpec(), "b": v3.ArraySpec.from_json(v3_array()),
                                 "c": v3.GroupSpec(members={"d": v3.GroupSpec()}),
                                 "z": v3.GroupSpec(attributes={"theirs": True})})
    with pytest.raises(ContainsGroupError):
        spec.to_store(store)
    assert store == before


def test_to_store_overwrite_replaces_different_nodes_and_keeps_group_members() -> None:
    store: dict[str, bytes] = {}
    root = zk.group(store, zarr_format=3)
    kept = root.create_array("g/kept", shape=(2,), dtype="u1", fill_value=0)
    kept[...] = [1, 2]
    root.create_array("x", shape=(2,), dtype="u1")
    v3.GroupSpec(members={"g": v3.GroupSpec(attributes={"new": 1}),
                          "x": v3.GroupSpec()}).to_store(store, overwrite=True)
    assert zk.open_group(store, path="g", mode="r").attrs.asdict() == {"new": 1}
    assert zk.open_array(store, path="g/kept", mode="r")[...].tolist() == [1, 2]
    assert isinstance(zk.open(store, path="x", mode="r"), zk.Group)


def test_to_store_under_a_path_and_array_specs() -> None:
    store: dict[str, bytes] = {}
    array = v2.ArraySpec.from_array(np.arange(6, dtype="i2").reshape(2, 3), chunks=(1, 3),
                                    attributes={"a": 1}).to_store(store, "deep/arr")
    assert (array.shape, array.chunks, array.attrs.asdict()) == ((2, 3), (1, 3), {"a": 1})
    assert isinstance(zk.open(store, path="deep", mode="r"), zk.Group)


# --- from_array and the flat form -------------------------------------------------------------

def test_from_array_of_numpy_and_of_zarrkit_arrays() -> None:
    data = np.arange(12, dtype=">u2").reshape(3, 4)
    spec = v3.ArraySpec.from_array(data, chunks=(2, 2), attributes={"x": 1},
                                   dimension_names=["r", "c"])
    assert spec.shape == (3, 4) and spec.attributes == {"x": 1}
    assert spec.to_metadata().dtype == np.dtype("u2")
    written = spec.to_store({})
    assert v3.ArraySpec.from_array(written).like(spec)
    assert v3.ArraySpec.from_array(written, shape=[5, 4]).diff(spec)[0].field == "shape"
    with pytest.raises(SpecError, match="Zarr v3"):
        v2.ArraySpec.from_array(written)


def test_flat_form_round_trip() -> None:
    spec = v3.GroupSpec(attributes={"r": 0}, members={
        "a": v3.GroupSpec(members={"b": v3.ArraySpec.from_json(v3_array())}),
        "c": v3.ArraySpec.from_json(v3_array(shape=[2, 2]))})
    flat = spec.to_flat()
    assert sorted(flat) == ["", "/a", "/a/b", "/c"]
    assert flat["/a"].members == {}
    assert v3.GroupSpec.from_flat(flat).like(spec)
    as_json = {key: node.to_json() for key, node in flat.items()}
    assert v3.GroupSpec.from_flat(as_json).like(spec)
    implied = v3.GroupSpec.from_flat({"/x/y": v3.ArraySpec.from_json(v3_array())})
    assert sorted(implied.to_flat()) == ["", "/x", "/x/y"]
    with pytest.raises(SpecError):
        v3.GroupSpec.from_flat({"/c": v3.ArraySpec.from_json(v3_array()),
                                "/c/d": v3.GroupSpec()})


# --- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("module, name", [
    (v3, ""), (v3, "a/b"), (v3, "."), (v3, ".."), (v3, "__reserved"), (v2, "x/y"), (v2, ".."),
])
def test_invalid_member_names_are_refused(module: Any, name: str) -> None:
    with pytest.raises(SpecError, match="invalid node name"):
        module.GroupSpec(members={name: module.GroupSpec()})
    with pytest.raises(SpecError, match="invalid node name"):
        module.GroupSpec.from_json({"members": {name: {"members": {}}}})


def test_v2_allows_double_underscore_names() -> None:
    assert list(v2.GroupSpec(members={"__x": v2.GroupSpec()}).members) == ["__x"]


def test_unknown_codec_is_refused_with_its_path() -> None:
    document = {"members": {"g": {"node_type": "group", "members": {
        "x": v3_array(codecs=[{"name": "bytes", "configuration": {"endian": "little"}},
                              {"name": "no-such-codec"}])}}}}
    with pytest.raises(SpecError, match=r"/g/x.*no-such-codec") as raised:
        v3.GroupSpec.from_json(document)
    assert len(raised.value.errors) == 1


@pytest.mark.parametrize("document, fragment", [
    ({"zarr_format": 2, "node_type": "group", "members": {}}, "node_type"),
    ({"zarr_format": 2, "members": {"x": {**v3_array(), "zarr_format": 2}}}, "/x"),
    ({"zarr_format": 3, "members": {}}, "zarr_format"),
], ids=["v3-field-in-v2-group", "v3-array-in-v2-group", "v3-format-in-v2"])
def test_a_v2_spec_with_v3_fields_is_refused(document: dict[str, Any], fragment: str) -> None:
    with pytest.raises(SpecError, match=re.escape(fragment)):
        v2.GroupSpec.from_json(document)


def test_several_problems_are_all_reported() -> None:
    document = {"members": {"a": v3_array(shape="x"), "b": v3_array(data_type="no-type"),
                            "c": {"node_type": "group", "attributes": 5}}}
    with pytest.raises(SpecError) as raised:
        v3.GroupSpec.from_json(document)
    paths = sorted(line.split(":")[0] for line in raised.value.errors)
    assert paths == ["/a", "/b", "/c"]


@pytest.mark.parametrize("text", ["{", "[]", '"group"'])
def test_not_a_spec_document(text: str) -> None:
    with pytest.raises(SpecError):
        v3.GroupSpec.from_json(text)


def test_specs_are_immutable() -> None:
    spec = v3.GroupSpec()
    with pytest.raises(Exception) as raised:  # pydantic's frozen-instance error
        spec.attributes = {"x": 1}  # type: ignore[misc]
    assert "frozen" in str(raised.value).lower()


def test_a_copy_with_changes_compares_by_its_own_fields() -> None:
    spec = v2.ArraySpec(shape=(2,), chunks=(2,), dtype="|u1", attributes={"u": 1})
    spec.normalized()
    changed = spec.model_copy(update={"attributes": {"u": 2}})
    assert changed.normalized()["attributes"] == {"u": 2}
    assert [d.field for d in spec.diff(changed)] == ["attributes"]


def test_json_schema_of_parametrised_and_convention_specs() -> None:
    from typing_extensions import TypedDict

    from zarrkit.models.conventions import xarray

    class Units(TypedDict):
        units: str

    for cls, fmt in ((v2.ArraySpec[Units], 2), (v3.GroupSpec[Units, Any], 3),
                     (xarray.GroupSpec, 2)):
        schema = cls.json_schema()
        jsonschema.Draft202012Validator.check_schema(schema)
        assert f"version {fmt}" in json.dumps(schema)
    units_schema = v2.ArraySpec[Units].json_schema()
    good = v2.ArraySpec[Units](shape=[2], chunks=[2], dtype="<f4", attributes={"units": "m"})
    jsonschema.validate(good.to_json(), units_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**good.to_json(), "attributes": {}}, units_schema)


def test_compressor_only_chains_of_multi_byte_types_get_a_little_endian_serializer() -> None:
    spec = v3.ArraySpec.from_json(v3_array(codecs=[{"name": "gzip"}]))
    assert spec.normalized()["codecs"][0] == {"name": "bytes",
                                              "configuration": {"endian": "little"}}


def test_numpy_dtype_names_in_v2_specs_mean_their_type_strings() -> None:
    spec = v2.ArraySpec(shape=[10, 10], chunks=[10, 10], dtype="uint8")
    assert spec.shape == (10, 10) and spec.normalized()["dtype"] == "|u1"
    assert spec.like(v2.ArraySpec(shape=(10, 10), chunks=(10, 10), dtype="|u1"))
