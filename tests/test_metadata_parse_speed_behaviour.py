"""Parsing metadata fast (benchmark S9, opening 1000-array hierarchies) without changing
what is parsed: ``ArrayMetadataV3.from_json`` validates once and skips ``__post_init__``,
and the parsed pieces a hierarchy repeats (data types, chunk grids, chunk key encodings,
fill values, v2 typestrs, codec pipelines) are cached. Each fast path is checked against
the validating path it replaces, on valid and invalid documents."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
import zarrkit.codecs.v3  # noqa: F401  (registers the v3 codecs the documents use)
from zarrkit.caching import BoundedCache
from zarrkit.codecs.pipeline import pipeline_for
from zarrkit.errors import MetadataError
from zarrkit.hierarchy.creation import array_metadata_v3
from zarrkit.metadata import chunk_grid as chunk_grid_module
from zarrkit.metadata import chunk_key_encoding as cke_module
from zarrkit.metadata import dtypes_v3, fill_value, v3
from zarrkit.metadata.chunk_grid import RegularChunkGrid, parse_chunk_grid, register_chunk_grid
from zarrkit.metadata.chunk_key_encoding import ChunkKeyEncoding, register_chunk_key_encoding
from zarrkit.metadata.dtypes import parse_dtype_v2
from zarrkit.metadata.dtypes_v3 import DataTypeV3, parse_data_type_v3, register_data_type
from zarrkit.metadata.fill_value import decode_fill_value, decode_fill_value_v3
from zarrkit.metadata.v3 import ArrayMetadataV3


def _document(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "zarr_format": 3, "node_type": "array", "shape": [100], "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [100]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0.0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
        "attributes": {"index": 1, "scale": [1.0, 0.5]},
        "storage_transformers": [],
    }
    document.update(changes)
    return {k: v for k, v in document.items() if v is not _DROP}


_DROP = object()


def _validating_parse(document: dict[str, Any]) -> ArrayMetadataV3:
    """The document parsed as from_json did before its fast path: the same checks of the
    JSON, then every field checked again by the constructor's ``__post_init__``."""
    document = v3._check_header(document, "zarr.json", "array")
    for name in v3._REQUIRED_ARRAY_KEYS:
        if name not in document:
            raise MetadataError(f"missing required key {name!r}")
    extra = v3._extra_fields(document, v3._ARRAY_KEYS)
    shape = v3._int_tuple(document["shape"], "shape")
    data_type = parse_data_type_v3(document["data_type"])
    grid = parse_chunk_grid(document["chunk_grid"])
    encoding = ChunkKeyEncoding.from_json(document["chunk_key_encoding"])
    fill = fill_value._decode_fill_value_v3(document["fill_value"], data_type)
    codecs = document["codecs"]
    if not isinstance(codecs, list):
        raise MetadataError("codecs must be a list")
    transformers = document.get("storage_transformers", [])
    if not isinstance(transformers, list):
        raise MetadataError("storage_transformers must be a list")
    names = document.get("dimension_names")
    if names is not None and not isinstance(names, list):
        raise MetadataError("dimension_names must be a list")
    return ArrayMetadataV3(
        shape=shape, data_type=data_type, chunk_grid=grid, chunk_key_encoding=encoding,
        fill_value=fill, codecs=tuple(codecs),
        attributes=dict(v3._attributes(document.get("attributes", {}))),
        dimension_names=None if names is None else tuple(names),
        storage_transformers=tuple(transformers), extra=extra,
    )


def _outcome(parse: Any, document: dict[str, Any]) -> Any:
    """The parsed metadata, or the class of the error parsing raised."""
    try:
        return parse(copy.deepcopy(document))
    except (MetadataError, TypeError, ValueError) as e:
        return type(e)


def _same(a: ArrayMetadataV3, b: ArrayMetadataV3) -> bool:
    return a == b and type(a.fill_value) is type(b.fill_value) and a.to_json() == b.to_json()


def _check_parsed_as_validated(document: dict[str, Any]) -> ArrayMetadataV3 | None:
    """Assert that from_json parses ``document`` to what the validating parse gives, or
    refuses it with the same error; the parsed metadata, or None."""
    fast = _outcome(ArrayMetadataV3.from_json, document)
    slow = _outcome(_validating_parse, document)
    if isinstance(slow, type):
        assert fast is slow
        return None
    assert isinstance(fast, ArrayMetadataV3) and _same(fast, slow)
    return fast


# --- validating once --------------------------------------------------------------------

def test_from_json_does_not_validate_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = ArrayMetadataV3.__post_init__

    def counting(self: ArrayMetadataV3) -> None:
        calls.append(1)
        original(self)

    monkeypatch.setattr(ArrayMetadataV3, "__post_init__", counting)
    ArrayMetadataV3.from_json(_document())
    assert calls == []
    ArrayMetadataV3(shape=(2,), data_type=parse_data_type_v3("int8"),
                    chunk_grid=RegularChunkGrid((2,)))
    assert calls == [1]  # direct construction still checks everything


def test_direct_construction_still_refuses_what_from_json_refuses() -> None:
    grid = RegularChunkGrid((2,))
    dtype = parse_data_type_v3("int8")
    with pytest.raises(MetadataError, match="must not be empty"):
        ArrayMetadataV3(shape=(2,), data_type=dtype, chunk_grid=grid, codecs=())
    with pytest.raises(MetadataError, match="dimension_names"):
        ArrayMetadataV3(shape=(2,), data_type=dtype, chunk_grid=grid,
                        dimension_names=("a", "b"))
    with pytest.raises(MetadataError, match="out of range"):
        ArrayMetadataV3(shape=(2,), data_type=dtype, chunk_grid=grid, fill_value=1000)


def test_a_subclass_goes_through_its_own_constructor() -> None:
    class Checked(ArrayMetadataV3):
        def __post_init__(self) -> None:
            super().__post_init__()
            if self.shape[0] > 10:
                raise MetadataError("too long for this subclass")

    assert type(Checked.from_json(_document(shape=[5], chunk_grid={
        "name": "regular", "configuration": {"chunk_shape": [5]}}))) is Checked
    with pytest.raises(MetadataError, match="too long"):
        Checked.from_json(_document())


FILL_CASES = [
    ("float32", 0.0), ("float32", -0.0), ("float32", "NaN"), ("float32", "0x7fc00001"),
    ("float32", "-Infinity"), ("float64", 1e300), ("float16", 0.1), ("bfloat16", 1.5),
    ("float8_e4m3fn", 2.0), ("float8_e8m0fnu", 0), ("int8", -3), ("uint64", 2**64 - 1),
    ("int32", 7.0), ("bool", True), ("bool", 0), ("complex64", [1.0, "NaN"]),
    ("r16", [1, 2]), ("string", "fill"), ("variable_length_bytes", "AGE="),
    ({"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}, "NaT"),
    ({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 10}}, 5),
    ({"name": "null_terminated_bytes", "configuration": {"length_bytes": 4}}, "cGFk"),
    ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}, "ab"),
    ({"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": "int8"}, {"name": "b", "data_type": "float32"}]}},
     {"a": 1, "b": "NaN"}),
]


@pytest.mark.parametrize(("data_type", "fill"), FILL_CASES)
def test_fast_and_validating_paths_agree_on_every_kind_of_fill_value(data_type: Any,
                                                                      fill: Any) -> None:
    codecs = (["vlen-utf8"] if data_type == "string" else ["vlen-bytes"]
              if data_type == "variable_length_bytes" else ["bytes"])
    document = _document(data_type=data_type, fill_value=fill, codecs=codecs)
    for _ in range(2):  # the second time through the caches
        fast = ArrayMetadataV3.from_json(copy.deepcopy(document))
        assert _same(fast, _validating_parse(document))


INVALID_CHANGES = [
    {"shape": [True]}, {"shape": [-1]}, {"shape": "100"}, {"shape": [100, 3]},
    {"codecs": []}, {"codecs": "bytes"}, {"codecs": [{"name": "no-such-codec"}]},
    {"codecs": [{"configuration": {}}]}, {"codecs": [{"name": "x", "must_understand": 1}]},
    {"dimension_names": ["x", "y"]}, {"dimension_names": [1]}, {"dimension_names": "x"},
    {"storage_transformers": [{"name": "t"}]}, {"storage_transformers": {}},
    {"storage_transformers": ["t"]}, {"attributes": []}, {"fill_value": "zero"},
    {"fill_value": None}, {"fill_value": True}, {"data_type": "float128"},
    {"data_type": {"name": "float32", "configuration": {"x": 1}}},
    {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [0]}}},
    {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [True]}}},
    {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": (100,)}}},
    {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 2]}}},
    {"chunk_grid": {"name": "hexagonal", "configuration": {"chunk_shape": [1]}}},
    {"chunk_key_encoding": {"name": "default", "configuration": {"separator": "-"}}},
    {"chunk_key_encoding": {"name": "v3", "configuration": {"separator": "/"}}},
    {"chunk_key_encoding": {"name": "default", "configuration": {"sep": "/"}}},
    {"chunk_key_encoding": "nope"}, {"unknown_field": 1},
]


@pytest.mark.parametrize("change", INVALID_CHANGES, ids=str)
def test_fast_and_validating_paths_refuse_the_same_documents(change: dict[str, Any]) -> None:
    document = _document(**change)
    # The valid document first, so that every cache holds its pieces.
    ArrayMetadataV3.from_json(_document())
    for _ in range(2):
        fast = _outcome(ArrayMetadataV3.from_json, document)
        assert isinstance(fast, type) and issubclass(fast, Exception)
        assert fast is _outcome(_validating_parse, document)


json_scalars = st.one_of(st.booleans(), st.integers(-300, 300),
                         st.floats(allow_nan=False, width=32), st.sampled_from(
                             ["NaN", "Infinity", "-Infinity", "0x7fc00000", "x", ""]))


@settings(max_examples=150, deadline=None)
@given(
    data_type=st.sampled_from(["bool", "int8", "uint8", "int16", "float16", "float32",
                               "float64", "bfloat16", "float8_e5m2"]),
    fill=json_scalars,
    shape=st.lists(st.one_of(st.integers(0, 9), st.booleans()), max_size=3),
    chunks=st.lists(st.integers(-1, 5), max_size=3),
    names=st.one_of(st.none(), st.lists(st.one_of(st.none(), st.text(max_size=2)),
                                        max_size=3)),
    separator=st.sampled_from(["/", ".", "-"]),
    encoding=st.sampled_from(["default", "v2"]),
)
def test_fast_path_matches_validating_path(data_type: str, fill: Any, shape: list[Any],
                                           chunks: list[int], names: Any, separator: str,
                                           encoding: str) -> None:
    document = _document(
        data_type=data_type, fill_value=fill, shape=shape,
        chunk_grid={"name": "regular", "configuration": {"chunk_shape": chunks}},
        chunk_key_encoding={"name": encoding, "configuration": {"separator": separator}},
        dimension_names=_DROP if names is None else names,
    )
    for _ in range(2):
        _check_parsed_as_validated(document)


confusables = st.sampled_from([0, 0.0, -0.0, 1, 1.0, True, False, None, "0", [0], (0,), [],
                               {}, "NaN", 2**64 - 1, 2**70, np.int64(1)])
fields_to_vary = st.sampled_from(["fill_value", "shape", "chunk_grid", "codecs", "data_type",
                                  "dimension_names", "storage_transformers", "extra",
                                  "tuple shape", "tuple chunk_shape", "tuple codecs",
                                  "tuple storage_transformers"])


@settings(max_examples=300, deadline=None)
@given(first=st.dictionaries(st.sampled_from(["fill_value", "shape", "codecs"]),
                             confusables, max_size=1),
       field=fields_to_vary, value=confusables, attributes=st.dictionaries(
           st.text(max_size=3), st.integers(), max_size=2))
def test_documents_parsed_after_a_like_one_are_parsed_as_alone(
        first: dict[str, Any], field: str, value: Any, attributes: dict[str, Any]) -> None:
    """Documents are parsed once per content but for attributes: a document following one
    that differs only in a value JSON may spell alike (1, 1.0 and true; a list and a
    tuple; an int and numpy's) or in its attributes is parsed to what the validating
    parse gives, with its own attributes, and is refused where that refuses it."""
    base = _document()
    if field in ("shape", "chunk_grid"):
        changed = {field: [value] if field == "shape" else {
            "name": "regular", "configuration": {"chunk_shape": [value]}}}
    elif field == "codecs":
        changed = {"codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                              {"name": "zstd", "configuration": {"level": value}}]}
    elif field == "extra":
        changed = {"unknown": {"must_understand": value}}
    elif field.startswith("tuple "):  # a document built in Python: JSON has lists
        changed = {"shape": {"shape": (100,)}, "chunk_shape": {"chunk_grid": {
            "name": "regular", "configuration": {"chunk_shape": (100,)}}},
            "codecs": {"codecs": tuple(base["codecs"])},
            "storage_transformers": {"storage_transformers": ()}}[field[len("tuple "):]]
    else:
        changed = {field: value}
    documents = [_document(**first), base, _document(**changed, attributes=attributes), base]
    for document in documents:
        fast = _check_parsed_as_validated(document)
        if fast is not None:
            assert fast.attributes == document["attributes"]


def test_arrays_alike_but_for_attributes_share_their_layout() -> None:
    """What an array works out from its metadata (pipeline, grid, fill, allocation) is
    shared by arrays whose documents differ in attributes only; any other difference,
    or an attribute change, gives the array its own, and each reads its own values."""
    store: dict[str, Any] = {}
    root = zk.open_group(store, mode="w", zarr_format=3)
    for i in range(3):
        root.create_array(f"a{i}", shape=(4,), chunks=(2,), dtype="f4", fill_value=0.5,
                          attributes={"i": i})
    root.create_array("other", shape=(4,), chunks=(2,), dtype="f4", fill_value=-0.0)
    opened = zk.open_group(store, mode="r+", use_consolidated=False)
    a0, a1, a2, other = (opened[name] for name in ("a0", "a1", "a2", "other"))
    assert a0.metadata.layout_key == a1.metadata.layout_key is not None
    assert a0._pipeline is a1._pipeline is a2._pipeline
    assert a0._fill is a1._fill and other.metadata.layout_key != a0.metadata.layout_key
    assert [a.attrs["i"] for a in (a0, a1, a2)] == [0, 1, 2]
    assert a0[:].tolist() == [0.5] * 4 and np.signbit(other[:]).all()
    a1.attrs["i"] = 10
    assert a1.metadata.layout_key is None and a1.attrs["i"] == 10 and a0.attrs["i"] == 0
    a1[:2] = 3
    assert a1[:].tolist() == [3, 3, 0.5, 0.5] and a0[:].tolist() == [0.5] * 4
    a2.resize((6,))
    assert a2.shape == (6,) and a0.shape == (4,) and a2[:].tolist() == [0.5] * 6


def test_parsed_attributes_stay_isolated_from_the_document() -> None:
    document = _document()
    metadata = ArrayMetadataV3.from_json(document)
    document["attributes"]["index"] = 99
    assert metadata.attributes["index"] == 1


# --- caches -----------------------------------------------------------------------------

def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    calls: list[Any] = []
    original = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return calls


def test_opening_alike_arrays_parses_their_shared_pieces_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    store: dict[str, Any] = {}
    root = zk.open_group(store, mode="w", zarr_format=3)
    for i in range(20):
        root.create_array(f"a{i}", shape=(7,), chunks=(7,), dtype="float32", fill_value=0.25,
                          attributes={"index": i})
    zk.consolidate_metadata(store)
    monkeypatch.setattr(dtypes_v3, "_BY_NAME", BoundedCache(256))
    monkeypatch.setattr(fill_value, "_DECODED_V3", BoundedCache(1024))
    monkeypatch.setattr(chunk_grid_module, "_PARSED", BoundedCache(256))
    monkeypatch.setattr(cke_module, "_PARSED", BoundedCache(64))
    data_types = _counting(monkeypatch, dtypes_v3, "_parse_data_type_v3")
    fills = _counting(monkeypatch, fill_value, "_decode_fill_value_v3")
    grids = _counting(monkeypatch, RegularChunkGrid, "from_json")
    for consolidated in (False, True):
        group = zk.open_group(store, mode="r", consolidated=consolidated)
        indexes = sorted(a.attrs["index"] for _, a in group.arrays())
        assert indexes == list(range(20))
    assert (len(data_types), len(fills), len(grids)) == (1, 1, 1)


def test_a_replaced_data_type_factory_is_used_despite_the_cache() -> None:
    name = "test.cached_type"
    register_data_type(name, lambda n, c: DataTypeV3(n, n, np.dtype("u1"), "numeric"))
    assert parse_data_type_v3(name).numpy == np.dtype("u1")
    register_data_type(name, lambda n, c: DataTypeV3(n, n, np.dtype("u2"), "numeric"))
    assert parse_data_type_v3(name).numpy == np.dtype("u2")


def test_a_replaced_chunk_grid_class_is_used_despite_the_cache() -> None:
    class OtherGrid(RegularChunkGrid):
        pass

    value = {"name": "test.cached_grid", "configuration": {"chunk_shape": [3]}}
    register_chunk_grid("test.cached_grid", RegularChunkGrid)
    assert type(parse_chunk_grid(value)) is RegularChunkGrid
    register_chunk_grid("test.cached_grid", OtherGrid)
    assert type(parse_chunk_grid(value)) is OtherGrid


def test_a_replaced_chunk_key_encoding_factory_is_used_despite_the_cache() -> None:
    value = {"name": "default", "configuration": {"separator": "."}}
    original = cke_module._builtin_factory
    try:
        assert ChunkKeyEncoding.from_json(value).separator == "."
        register_chunk_key_encoding("default", lambda n, c: ChunkKeyEncoding(n, "/"))
        assert ChunkKeyEncoding.from_json(value).separator == "/"
    finally:
        register_chunk_key_encoding("default", original)
    assert ChunkKeyEncoding.from_json(value).separator == "."


def _decoded(decode: Any, value: Any, data_type: DataTypeV3) -> Any:
    try:
        decoded = decode(value, data_type)
    except MetadataError:
        return MetadataError
    return type(decoded), np.asarray(decoded).tobytes()


@pytest.mark.parametrize(("data_type", "first", "second"), [
    ("float32", 0.0, -0.0), ("int8", 1, True), ("bool", 1, True), ("float64", 1, 1.0),
    ("float32", 1, True),
])
def test_fill_values_that_compare_equal_in_python_are_cached_apart(data_type: str,
                                                                   first: Any,
                                                                   second: Any) -> None:
    parsed = parse_data_type_v3(data_type)
    for value in (first, second, first, second):  # each after the other is cached
        assert _decoded(decode_fill_value_v3, value, parsed) == _decoded(
            fill_value._decode_fill_value_v3, value, parsed)


def test_v2_caches_give_what_parsing_gives() -> None:
    assert parse_dtype_v2("<f4") is parse_dtype_v2("<f4")
    for _ in range(2):
        with pytest.raises(MetadataError):
            parse_dtype_v2("<f3")
    zero = decode_fill_value(0.0, np.dtype("f4"))
    negative = decode_fill_value(-0.0, np.dtype("f4"))
    assert np.signbit(negative) and not np.signbit(zero)
    assert type(decode_fill_value(True, np.dtype("?"))) is np.bool_
    assert decode_fill_value(1, np.dtype("i2")).dtype == np.dtype("i2")


def test_invalid_fill_values_fail_every_time_despite_the_cache() -> None:
    parsed = parse_data_type_v3("int8")
    decode_fill_value_v3(5, parsed)
    for _ in range(2):
        with pytest.raises(MetadataError):
            decode_fill_value_v3(500, parsed)
        with pytest.raises(MetadataError):
            decode_fill_value(500, np.dtype("i1"))


# --- shared pipelines -------------------------------------------------------------------

def test_pipelines_are_shared_only_between_equal_specs() -> None:
    a = array_metadata_v3(shape=(10,), chunks=(5,), dtype="f4", fill_value=0.0)
    b = array_metadata_v3(shape=(20,), chunks=(5,), dtype="f4", fill_value=0.0)
    negative = array_metadata_v3(shape=(10,), chunks=(5,), dtype="f4", fill_value=-0.0)
    other_chunks = array_metadata_v3(shape=(10,), chunks=(2,), dtype="f4", fill_value=0.0)
    shared = pipeline_for(a)
    assert pipeline_for(b) is shared
    assert pipeline_for(negative) is not shared
    assert pipeline_for(other_chunks) is not shared


def test_sharded_pipelines_are_not_shared() -> None:
    meta = array_metadata_v3(shape=(8,), chunks=(2,), shards=(4,), dtype="u1")
    assert pipeline_for(meta) is not pipeline_for(meta)


def test_an_invalid_chain_fails_every_time_despite_the_pipeline_cache() -> None:
    good = array_metadata_v3(shape=(4,), dtype="u1", compressors=None)
    pipeline_for(good)
    bad = ArrayMetadataV3.from_json(_document(
        shape=[4], data_type="uint8", fill_value=0,
        chunk_grid={"name": "regular", "configuration": {"chunk_shape": [4]}},
        codecs=[{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 99}}]))
    for _ in range(2):
        with pytest.raises(MetadataError):
            pipeline_for(bad)


def _zarray(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "zarr_format": 2, "shape": [100], "chunks": [100], "dtype": "<f4", "fill_value": 0.0,
        "order": "C", "compressor": {"id": "zstd", "level": 1}, "filters": None,
        "dimension_separator": ".",
    }
    document.update(changes)
    return document


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(["fill_value", "shape", "chunks", "dtype", "order", "filters",
                              "compressor", "dimension_separator"]),
       value=confusables, wrap=st.booleans())
def test_zarray_documents_parsed_after_a_like_one_are_parsed_as_alone(
        field: str, value: Any, wrap: bool) -> None:
    """Format 2 too: each .zarray content is parsed once, and a document following a like
    one (a value JSON spells alike, a tuple for a list) is parsed, or refused, as the
    uncached parse does it."""
    from zarrkit.metadata.v2 import ArrayMetadataV2

    if field in ("shape", "chunks") and wrap:
        value = (value,) if type(value) is int else [value]
    elif field == "compressor" and wrap:
        value = {"id": "zstd", "level": value}
    for document in (_zarray(), _zarray(**{field: value}), _zarray()):
        fast = _outcome(ArrayMetadataV2.from_json, document)
        slow = _outcome(lambda d: ArrayMetadataV2._parse(d, ".zarray"), document)
        if isinstance(slow, type):
            assert fast is slow
        else:
            assert fast == slow and fast.to_json() == slow.to_json()
            assert type(fast.fill_value) is type(slow.fill_value)


@settings(max_examples=400, deadline=None)
@given(paths=st.lists(st.text(alphabet="ab/.-\n\\\x00é_ ", max_size=6), max_size=6,
                      unique=True),
       not_an_object=st.booleans())
def test_a_snapshots_paths_are_checked_at_once_as_one_by_one(paths: list[str],
                                                              not_an_object: bool) -> None:
    """An inline snapshot's paths are checked with one match over all of them; it refuses
    exactly the snapshots the check of each path (already normal, not empty) and each
    entry (a JSON object) refuses."""
    from zarrkit.errors import InvalidKeyError
    from zarrkit.metadata.consolidated import check_consolidated_v3
    from zarrkit.paths import PLAIN_PATH, all_plain, normalize_path

    def normal(path: str) -> bool:
        try:
            return path != "" and normalize_path(path) == path
        except InvalidKeyError:
            return False

    entries: dict[str, Any] = {path: {"node_type": "group"} for path in paths}
    if not_an_object and paths:
        entries[paths[-1]] = []
    valid = all(normal(p) for p in paths) and not (not_an_object and paths)
    outcome = _outcome(check_consolidated_v3, {"kind": "inline", "metadata": entries})
    assert (outcome is MetadataError) == (not valid)
    if all_plain(paths):
        assert all(PLAIN_PATH.fullmatch(p) and normal(p) for p in paths)



@settings(max_examples=60, deadline=None)
@given(kinds=st.lists(st.sampled_from(["array", "group", "both", "none"]), min_size=1,
                      max_size=4),
       zarr_format=st.sampled_from([2, 3]), asked=st.sampled_from([None, 2, 3]))
def test_consolidated_members_are_found_as_from_their_documents(
        kinds: list[str], zarr_format: int, asked: int | None) -> None:
    """A member looked up in consolidated metadata (the short path that opening a
    consolidated group takes per member) is the node that the same documents give when
    read from a store: same kind, format, metadata and attributes; none where there is
    none; an array where a v2 node has both .zarray and .zgroup."""
    import json

    from zarrkit.hierarchy.nodes import find_node
    from zarrkit.storage import MemoryStore

    store = MemoryStore()
    root = zk.open_group(store, mode="w", zarr_format=zarr_format)
    for i, kind in enumerate(kinds):
        name = f"m{i}"
        if kind in ("array", "both"):
            root.create_array(name, shape=(3,), dtype="i2", attributes={"i": i})
        elif kind == "group":
            root.create_group(name, attributes={"i": i})
    if zarr_format == 2:
        for i, kind in enumerate(kinds):
            if kind == "both":
                store.set(f"m{i}/.zgroup", json.dumps({"zarr_format": 2}).encode())
    zk.consolidate_metadata(store)
    consolidated = zk.open_group(store, mode="r", zarr_format=zarr_format,
                                 consolidated=True)._consolidated
    assert consolidated is not None
    # The snapshot's documents, as files of a store: the general path's input.
    documents = MemoryStore({key: json.dumps(document).encode()
                             for key, document in consolidated.items()})
    for i, kind in enumerate(kinds):
        direct = find_node(documents, f"m{i}", None, asked)
        via = find_node(store, f"m{i}", consolidated, asked)
        if direct is None:
            assert via is None
            continue
        assert via is not None
        assert (via.kind, via.zarr_format, via.metadata) == (
            direct.kind, direct.zarr_format, direct.metadata)
        assert via.kind == ("group" if kind == "group" else "array")
        expected = direct.attributes
        if expected is None:  # format 2 read from a store: attributes come lazily
            raw = documents.get(f"m{i}/.zattrs")
            expected = {} if raw is None else json.loads(raw)
        assert via.attributes == expected
