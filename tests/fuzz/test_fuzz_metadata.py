"""Bounded fuzzing of metadata documents: v2 ``.zarray``, ``.zgroup``, ``.zattrs`` and
``.zmetadata``, v3 ``zarr.json`` (arrays, groups, consolidated groups).

Documents are made two ways: structurally (valid-looking documents whose fields take hostile
values) and by mutating real documents (the shared fixture stores, and documents zarrkit
writes). Property (see ``targets``): the document is accepted, and then usable, or refused
with a ZarrkitError.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import targets

FUZZ = settings(max_examples=250, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])

# --- hostile JSON values ------------------------------------------------------------------

EDGE_INTS = [0, -1, 1, 2, 255, 256, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53 + 1,
             2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30]
EDGE_TEXT = ["", "NaN", "Infinity", "-Infinity", "0x7fc00000", "0xff", "0x", "cG*Fk", "cGFk",
             "<f8", "|O", "<U0", "<M8", "V1000000000", "../x", "a/../b", "/", ".", "c/0",
             "\x00", "é", "inline", "bytes", "blosc", "regular", "default", "v2", "little"]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.sampled_from(EDGE_INTS), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False), st.sampled_from(EDGE_TEXT), st.text(max_size=10),
)


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def weighted(common: st.SearchStrategy[Any], rare: st.SearchStrategy[Any],
             odds: int) -> st.SearchStrategy[Any]:
    """``common`` ``odds`` times in ``odds + 1``, else ``rare``. (one_of would weigh the two
    alike, and a small integer range is drawn at its ends far more often than inside.)"""
    return st.integers(0, 2**16).flatmap(
        lambda pick: rare if pick % (odds + 1) == 1 else common)


_TREES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=10)
JSON_VALUES = weighted(_TREES, st.integers(100, 200).map(_nested), 9)  # or around the limit


def maybe(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly a valid-looking value (6 in 7), sometimes anything at all."""
    return weighted(valid, JSON_VALUES, 6)


def optional_fields(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """An object holding some of ``fields``, each drawn from its strategy."""
    return st.fixed_dictionaries({}, optional=fields)


def _dumps(document: Any) -> bytes:
    return json.dumps(document).encode()


# --- codec configurations (shared with test_fuzz_codecs) -------------------------------------

SMALL_INTS = st.one_of(st.integers(-3, 30), st.sampled_from(EDGE_INTS))
DTYPES = st.sampled_from(["<f8", "<f4", "<i8", "<i4", "<i2", "<u2", "|u1", "|b1", ">i4",
                          "<U3", "|O", "<c16", "|S4", "<M8[ns]"])
NUMCODECS_FIELDS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "blosc": {"cname": st.sampled_from(["lz4", "zstd", "zlib", "snappy", "blosclz", "x"]),
              "clevel": SMALL_INTS, "shuffle": st.integers(-3, 4), "blocksize": SMALL_INTS,
              "typesize": SMALL_INTS},
    "zstd": {"level": SMALL_INTS, "checksum": maybe(st.booleans())},
    "zlib": {"level": SMALL_INTS}, "gzip": {"level": SMALL_INTS}, "bz2": {"level": SMALL_INTS},
    "lz4": {"acceleration": SMALL_INTS},
    "lzma": {"format": st.integers(-1, 4), "check": st.sampled_from([-1, 0, 1, 3, 4, 10]),
             "preset": maybe(st.integers(0, 10)),
             "filters": maybe(st.lists(st.fixed_dictionaries(
                 {"id": st.sampled_from([3, 4, 33, 2**62 + 1, 7])},
                 optional={"dict_size": SMALL_INTS, "dist": SMALL_INTS}), max_size=3))},
    "delta": {"dtype": DTYPES, "astype": DTYPES},
    "fixedscaleoffset": {"offset": maybe(st.floats(-10, 10)), "scale": maybe(st.integers(0, 9)),
                         "dtype": DTYPES, "astype": DTYPES},
    "astype": {"encode_dtype": DTYPES, "decode_dtype": DTYPES},
    "quantize": {"digits": SMALL_INTS, "dtype": DTYPES, "astype": DTYPES},
    "bitround": {"keepbits": SMALL_INTS},
    "packbits": {},
    "categorize": {"labels": maybe(st.lists(st.text(max_size=4), max_size=4)),
                   "dtype": DTYPES, "astype": DTYPES},
    "shuffle": {"elementsize": SMALL_INTS},
    "crc32": {"location": maybe(st.sampled_from(["start", "end"]))},
    "adler32": {"location": maybe(st.sampled_from(["start", "end"]))},
    "fletcher32": {}, "jenkins_lookup3": {"initval": SMALL_INTS},
    "base64": {},
    "json2": {"encoding": st.sampled_from(["utf-8", "utf-16", "ascii", "rot13", "nope"]),
              "indent": maybe(st.integers(0, 8)), "sort_keys": maybe(st.booleans()),
              "separators": maybe(st.lists(st.text(max_size=2), max_size=3))},
    "msgpack2": {"raw": maybe(st.booleans()), "use_single_float": maybe(st.booleans())},
    "vlen-utf8": {}, "vlen-bytes": {}, "vlen-array": {"dtype": DTYPES},
    "pickle": {}, "nope": {},
}


@st.composite
def numcodecs_configs(draw: st.DrawFn, ids: tuple[str, ...] = ()) -> tuple[str, dict[str, Any]]:
    """A numcodecs id (one of ``ids``, or any) and a configuration of some of its fields
    (and maybe junk)."""
    codec_id = draw(st.sampled_from(sorted(ids or NUMCODECS_FIELDS)))
    fields = {k: maybe(v) for k, v in NUMCODECS_FIELDS[codec_id].items()}
    config = draw(optional_fields(**fields, junk=JSON_VALUES))
    return codec_id, config


V2_CODEC = numcodecs_configs().map(lambda c: {"id": c[0], **c[1]})
SHAPES = st.lists(st.one_of(st.integers(0, 9), st.sampled_from(EDGE_INTS)), max_size=3)

# --- structural documents --------------------------------------------------------------------

ZARRAY = st.fixed_dictionaries({
    "zarr_format": maybe(st.just(2)),
    "shape": maybe(SHAPES), "chunks": maybe(SHAPES), "dtype": maybe(DTYPES),
    "compressor": maybe(st.none() | V2_CODEC),
    "fill_value": maybe(st.one_of(st.none(), st.integers(-300, 300), st.floats(),
                                  st.sampled_from(EDGE_TEXT))),
    "order": maybe(st.sampled_from(["C", "F"])),
    "filters": maybe(st.none() | st.lists(V2_CODEC, max_size=3)),
}, optional={"dimension_separator": maybe(st.sampled_from([".", "/"])), "junk": JSON_VALUES})


@FUZZ
@given(ZARRAY)
def test_structured_zarray_documents(document: dict[str, Any]) -> None:
    targets.parse_v2_array_document(_dumps(document))


@FUZZ
@given(maybe(st.fixed_dictionaries({"zarr_format": maybe(st.just(2))},
                                   optional={"junk": JSON_VALUES})))
def test_structured_zgroup_documents(document: Any) -> None:
    targets.parse_v2_group_document(_dumps(document))


@FUZZ
@given(maybe(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=5)))
def test_structured_zattrs_documents(document: Any) -> None:
    targets.parse_v2_attributes(_dumps(document))


ENTRY_NAMES = st.sampled_from([".zarray", ".zgroup", ".zattrs", ".zfoo", "zarr.json"])
ENTRY_PATHS = st.sampled_from(["", "a//b", "../a", "/a", "a/./b", "ä"])
GOOD_PATHS = st.sampled_from(["a", "b", "a/b", "a/b/c", "x y"])
PATHS = st.one_of(GOOD_PATHS, GOOD_PATHS, ENTRY_PATHS, st.text(max_size=5))


def _good_documents(kind: str) -> list[Any]:
    """Parsed documents of one kind written by zarrkit."""
    return [json.loads(data) for k, data in targets.zarrkit_documents() if k == kind]


@st.composite
def zmetadata(draw: st.DrawFn) -> Any:
    """A .zmetadata document whose entries are mostly real documents under valid paths."""
    entries = {".zgroup": {"zarr_format": 2}} if draw(weighted(
        st.just(True), st.just(False), 4)) else {}
    for _ in range(draw(st.integers(0, 4))):
        name = draw(st.one_of(st.sampled_from([".zarray", ".zgroup", ".zattrs"]), ENTRY_NAMES))
        path = draw(PATHS)
        real = st.sampled_from(_good_documents(name)) if name in (
            ".zarray", ".zgroup", ".zattrs") else JSON_VALUES
        entries[f"{path}/{name}" if path else name] = draw(st.one_of(
            real, real, real, ZARRAY, JSON_VALUES))
    return draw(maybe(st.fixed_dictionaries(
        {"metadata": maybe(st.just(entries))},
        optional={"zarr_consolidated_format": maybe(st.just(1))})))


@FUZZ
@given(zmetadata())
def test_structured_zmetadata_documents(document: Any) -> None:
    targets.parse_v2_consolidated(_dumps(document))


DATA_TYPE_NAMES = ["bool", "int8", "uint16", "int64", "float16", "float32", "float64",
                   "complex64", "bfloat16", "float8_e4m3fn", "float4_e2m1fn", "float8_e8m0fnu",
                   "int4", "uint2", "string", "bytes", "r16", "r0", "r7"]
DATA_TYPES = st.one_of(
    st.sampled_from(DATA_TYPE_NAMES),
    st.fixed_dictionaries({
        "name": st.sampled_from(["null_terminated_bytes", "fixed_length_utf32", "raw_bytes",
                                 "numpy.datetime64", "numpy.timedelta64", "struct"]),
        "configuration": maybe(optional_fields(
            length_bytes=SMALL_INTS, unit=st.sampled_from(["ns", "s", "generic", "x"]),
            scale_factor=SMALL_INTS,
            fields=st.lists(st.fixed_dictionaries({"name": st.text(max_size=3),
                                                   "data_type": st.sampled_from(
                                                       DATA_TYPE_NAMES)}), max_size=3)))}),
)
V3_CODEC = st.one_of(
    st.sampled_from(["bytes", "crc32c", "vlen-utf8", "vlen-bytes", "transpose", "zstd"]),
    st.fixed_dictionaries({
        "name": st.sampled_from(["bytes", "gzip", "zstd", "blosc", "crc32c", "transpose",
                                 "scale_offset", "vlen-utf8", "vlen-bytes", "nope"]),
        "configuration": maybe(optional_fields(
            endian=maybe(st.sampled_from(["little", "big"])), level=SMALL_INTS,
            checksum=maybe(st.booleans()), cname=st.sampled_from(["lz4", "zstd", "snappy"]),
            clevel=SMALL_INTS, shuffle=maybe(st.sampled_from(["shuffle", "bitshuffle"])),
            typesize=SMALL_INTS, blocksize=SMALL_INTS,
            order=maybe(st.lists(st.integers(-1, 3), max_size=3)),
            offset=maybe(st.integers(-5, 5)), scale=maybe(st.integers(-3, 3))))},
        optional={"must_understand": maybe(st.booleans())}),
    numcodecs_configs().map(lambda c: {"name": f"numcodecs.{c[0]}", "configuration": c[1]}),
)
ENDIAN = {"name": "bytes", "configuration": {"endian": "little"}}


@st.composite
def v3_codecs(draw: st.DrawFn) -> Any:
    """Mostly a chain around a valid serialiser, sometimes anything."""
    before = draw(st.lists(V3_CODEC, max_size=2))
    after = draw(st.lists(V3_CODEC, max_size=2))
    serialiser = draw(st.one_of(st.just(ENDIAN), st.just({"name": "vlen-utf8"}), V3_CODEC))
    return draw(maybe(st.just([*before, serialiser, *after])))


ZARR_JSON_ARRAY = st.fixed_dictionaries({
    "zarr_format": maybe(st.just(3)), "node_type": maybe(st.just("array")),
    "shape": maybe(SHAPES), "data_type": maybe(DATA_TYPES),
    "chunk_grid": maybe(st.fixed_dictionaries({
        "name": maybe(st.just("regular")),
        "configuration": maybe(st.fixed_dictionaries({"chunk_shape": maybe(SHAPES)}))})),
    "chunk_key_encoding": maybe(st.fixed_dictionaries(
        {"name": st.sampled_from(["default", "v2", "x"])},
        optional={"configuration": maybe(st.fixed_dictionaries(
            {"separator": maybe(st.sampled_from([".", "/"]))}))})),
    "fill_value": maybe(st.one_of(st.integers(-300, 300), st.floats(), st.booleans(),
                                  st.sampled_from(EDGE_TEXT), st.lists(SMALL_INTS, max_size=3))),
    "codecs": v3_codecs(),
}, optional={"attributes": maybe(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=3)),
             "dimension_names": maybe(st.lists(st.none() | st.text(max_size=3), max_size=3)),
             "storage_transformers": maybe(st.just([])),
             "junk": maybe(st.just({"must_understand": False}))})


def _aligned(document: dict[str, Any]) -> dict[str, Any]:
    """Give the chunk shape the array's rank now and then, so that more documents get
    past the first checks."""
    shape, grid = document.get("shape"), document.get("chunk_grid")
    if isinstance(shape, list) and isinstance(grid, dict) and isinstance(
            grid.get("configuration"), dict) and all(type(n) is int for n in shape):
        grid["configuration"]["chunk_shape"] = [max(1, min(n, 4)) for n in shape]
    return document


@FUZZ
@given(st.one_of(ZARR_JSON_ARRAY, ZARR_JSON_ARRAY.map(_aligned)))
def test_structured_zarr_json_arrays(document: dict[str, Any]) -> None:
    targets.parse_v3_document(_dumps(document))


@st.composite
def zarr_json_groups(draw: st.DrawFn) -> Any:
    """A group zarr.json whose inline snapshot mostly holds real documents."""
    real = st.sampled_from([d for d in _good_documents("zarr.json")
                            if "consolidated_metadata" not in d])
    entries = {}
    for _ in range(draw(st.integers(0, 3))):
        entries[draw(PATHS)] = draw(st.one_of(
            real, real, ZARR_JSON_ARRAY.map(_aligned), JSON_VALUES))
    consolidated = draw(maybe(st.fixed_dictionaries({
        "kind": maybe(st.just("inline")), "must_understand": maybe(st.just(False)),
        "metadata": maybe(st.just(entries))})))
    return draw(maybe(st.fixed_dictionaries(
        {"zarr_format": maybe(st.just(3)), "node_type": maybe(st.just("group")),
         "consolidated_metadata": st.just(consolidated)},
        optional={"attributes": maybe(st.dictionaries(st.text(max_size=4), JSON_VALUES,
                                                      max_size=3))})))


@FUZZ
@given(zarr_json_groups())
def test_structured_zarr_json_groups(document: Any) -> None:
    targets.parse_v3_document(_dumps(document))
    targets.parse_v3_consolidated(_dumps(document))


# --- mutated real documents ----------------------------------------------------------------

SEEDS = targets.document_seeds()


def _target_for(kind: str, data: bytes) -> list[Any]:
    if kind == "zarr.json":
        if b'"consolidated_metadata"' in data:
            return [targets.parse_v3_document, targets.parse_v3_consolidated]
        return [targets.parse_v3_document]
    return [{".zarray": targets.parse_v2_array_document,
             ".zgroup": targets.parse_v2_group_document,
             ".zattrs": targets.parse_v2_attributes,
             ".zmetadata": targets.parse_v2_consolidated}[kind]]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in a JSON tree."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


def _replace(tree: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = tree
    for step in path[:-1]:
        parent = parent[step]
    if new is _DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return tree


_DELETE = object()


@st.composite
def json_mutations(draw: st.DrawFn) -> tuple[str, bytes]:
    """A seed document with one to three values replaced, deleted or set to junk."""
    kind, data = draw(st.sampled_from(SEEDS))
    tree = json.loads(data)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(tree)
        path = draw(st.sampled_from(paths))
        new = draw(st.one_of(JSON_VALUES, st.just(_DELETE) if path else JSON_VALUES))
        tree = _replace(tree, path, new)
    return kind, _dumps(tree)


@st.composite
def byte_mutations(draw: st.DrawFn) -> tuple[str, bytes]:
    """A seed document with bytes flipped, cut out, duplicated or inserted."""
    kind, data = draw(st.sampled_from(SEEDS))
    buffer = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "cut", "dup", "insert", "truncate"]))
        at = draw(st.integers(0, max(0, len(buffer) - 1)))
        if op == "flip" and buffer:
            buffer[at] = draw(st.sampled_from(b'{}[]":,0123456789-. ex\\\xff'))
        elif op == "cut":
            del buffer[at:at + draw(st.integers(1, 8))]
        elif op == "dup":
            buffer[at:at] = buffer[at:at + draw(st.integers(1, 16))]
        elif op == "insert":
            buffer[at:at] = draw(st.binary(max_size=8))
        else:
            del buffer[at:]
    return kind, bytes(buffer)


def test_there_are_seeds_of_every_kind() -> None:
    kinds = {kind for kind, _ in SEEDS}
    assert kinds >= {".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json"}
    if not (targets.FIXTURES / "corpus").is_dir():
        pytest.skip(f"no shared fixtures at {targets.FIXTURES}: only zarrkit's documents used")


@pytest.mark.parametrize("seed", range(len(SEEDS)), ids=[f"{k}-{i}" for i, (k, _) in
                                                          enumerate(SEEDS)])
def test_unmutated_seeds_are_accepted(seed: int) -> None:
    kind, data = SEEDS[seed]
    for target in _target_for(kind, data):
        assert target(data), (kind, data[:200])


@FUZZ
@given(json_mutations())
def test_json_mutations_of_real_documents(case: tuple[str, bytes]) -> None:
    kind, data = case
    for target in _target_for(kind, data):
        target(data)


@FUZZ
@given(byte_mutations())
def test_byte_mutations_of_real_documents(case: tuple[str, bytes]) -> None:
    kind, data = case
    for target in _target_for(kind, data):
        target(data)
