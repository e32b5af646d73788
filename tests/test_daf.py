"""zarrkit.daf: Daf data sets (DataAxesFormats.jl) in Zarr, on every backend and layout.

The oracles are independent of zarrkit's Daf code: numpy and scipy.sparse for values, the
JSON documents and chunk bytes on disk (checked against the rules of the seed document
and of the Julia package), zarr-python reading the same directories and archives, and a v3
directory built here by hand, file by file, the way the Julia package lays it out.
"""

from __future__ import annotations

import doctest
import importlib
import io
import json
import mmap
import os
import signal
import struct
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import crc32c
import numcodecs
import numpy as np
import pytest
import scipy.sparse as sp
from http_support import HTTPServerFixture
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import (
    ChunkDecodeError,
    DafExistsError,
    DafKeyError,
    DafMarkerError,
    DafValueError,
    DafVersionError,
    GroupNotFoundError,
    MetadataError,
    NotDafError,
    ReadOnlyError,
    StoreLockedError,
    UnsupportedOperationError,
)

SRC = Path(__file__).resolve().parent.parent / "src"

# --- the reference data set -----------------------------------------------------------------

N_CELLS = 1100  # a float64 column of 1100 cells is 8800 bytes: large enough to pack
N_GENES = 5
CELLS = [f"cell{i}" for i in range(N_CELLS)]
GENES = ["g0", "g1", "g2", "g3", "g4"]

SCALARS: dict[str, Any] = {
    "name": "reference",
    "flag": np.bool_(True),
    "i8": np.int8(-8), "i16": np.int16(-16), "i32": np.int32(-32), "i64": np.int64(-(2**40)),
    "u8": np.uint8(8), "u16": np.uint16(16), "u32": np.uint32(2**31 + 3),
    "u64": np.uint64(2**63 + 5),
    "f32": np.float32(1.25), "f64": np.float64(-2.5), "text": "héllo",
}


def _rng() -> np.random.Generator:
    return np.random.default_rng(12)


def reference(packed: bool) -> dict[str, Any]:
    """What the reference data set holds, as numpy and scipy values (the oracle)."""
    rng = _rng()
    umis = rng.integers(0, 5, size=(N_CELLS, N_GENES)).astype(np.float32)
    sparse_f = sp.random(N_CELLS, N_GENES, density=0.1, random_state=3, format="csc",
                         dtype=np.float64)
    partial_bool = sp.csc_matrix(
        (np.array([True, False, True]), (np.array([0, 5, 9]), np.array([0, 1, 4]))),
        shape=(N_CELLS, N_GENES))
    mask = sp.csc_matrix(sp.random(N_CELLS, N_GENES, density=0.05, random_state=4) > 0)
    data: dict[str, Any] = {
        "vectors": {
            ("gene", "score"): rng.normal(size=N_GENES),
            ("gene", "rank"): np.arange(N_GENES, dtype=np.int32),
            ("gene", "is_marker"): np.array([True, False, True, False, False]),
            ("gene", "symbol"): np.array(["A", "Bé", "C", "", "E"], dtype=object),
            ("gene", "sparse_score"): sp.coo_array(np.array([0, 1.5, 0, 0, -2.0], "f4")),
            ("gene", "sparse_flags"): sp.coo_array(
                (np.array([True, False]), (np.array([1, 3]),)), shape=(N_GENES,)),
            ("gene", "sparse_mask"): sp.coo_array(np.array([False, True, True, False, True])),
            ("cell", "batch"): (np.arange(N_CELLS) % 3).astype(np.uint16),
            ("cell", "depth"): rng.normal(size=N_CELLS),
            ("cell", "zeros"): np.zeros(N_CELLS, dtype=np.int64),
        },
        "matrices": {
            ("cell", "gene", "UMIs"): umis,
            ("cell", "gene", "sparse_f"): sparse_f,
            ("cell", "gene", "mask"): mask,
            ("cell", "gene", "partial_bool"): partial_bool,
            ("gene", "cell", "dense_bool"): rng.random((N_GENES, N_CELLS)) > 0.5,
            ("gene", "gene", "square"): np.arange(25, dtype=np.int64).reshape(5, 5),
        },
        "packed": {},
    }
    if packed:
        data["packed"] = {
            ("cell", "packed_depth"): rng.normal(size=N_CELLS),
            ("cell", "gene", "packed_umis"): rng.integers(0, 9, (N_CELLS, N_GENES)).astype("u4"),
        }
    return data


def write_reference(daf: zk.daf.DafDataset, data: dict[str, Any]) -> None:
    for name, value in SCALARS.items():
        daf.set_scalar(name, value)
    daf.add_axis("cell", CELLS)
    daf.add_axis("gene", GENES)
    for (axis, name), value in data["vectors"].items():
        daf.set_vector(axis, name, value)
    for (rows, columns, name), value in data["matrices"].items():
        daf.set_matrix(rows, columns, name, value, relayout=name == "UMIs")
    for key, value in data["packed"].items():
        if len(key) == 2:
            daf.set_vector(*key, value, packed=True)
        else:
            daf.set_matrix(*key, value, packed=True, relayout=False)


def assert_same(actual: Any, expected: Any) -> None:
    """Equal values, shape and element type; sparse stays sparse."""
    if sp.issparse(expected):
        assert sp.issparse(actual), type(actual)
        assert actual.shape == expected.shape
        assert actual.dtype == expected.dtype
        np.testing.assert_array_equal(actual.toarray(), expected.toarray())
        return
    assert isinstance(actual, np.ndarray), type(actual)
    assert actual.shape == np.shape(expected)
    assert actual.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(actual, expected)


def check_reference(daf: zk.daf.DafDataset, data: dict[str, Any]) -> None:
    assert set(daf.scalars()) == set(SCALARS)
    for name, value in SCALARS.items():
        got = daf.get_scalar(name)
        assert type(got) is type(value) and got == value, (name, got)
    assert daf.axes() == {"cell", "gene"}
    assert daf.axis_vector("cell").tolist() == CELLS
    assert daf.axis_entries("gene", [4, 0]).tolist() == ["g4", "g0"]
    assert daf.axis_dict("gene") == {g: i for i, g in enumerate(GENES)}
    np.testing.assert_array_equal(daf.axis_indices("cell", ["cell7", "cell2"]), [7, 2])
    for (axis, name), value in data["vectors"].items():
        assert_same(daf.get_vector(axis, name), value)
    for (rows, columns, name), value in data["matrices"].items():
        got = daf.get_matrix(rows, columns, name)
        assert_same(got, value)
        if sp.issparse(value):
            assert isinstance(got, sp.csc_matrix)
    # UMIs was stored in both layouts; the others only as given, read flipped on demand.
    assert daf.has_matrix("gene", "cell", "UMIs", relayout=False)
    assert not daf.has_matrix("gene", "cell", "sparse_f", relayout=False)
    assert_same(daf.get_matrix("gene", "cell", "UMIs"), data["matrices"][
        ("cell", "gene", "UMIs")].T)
    assert_same(daf.get_matrix("gene", "cell", "sparse_f"), sp.csc_matrix(
        data["matrices"][("cell", "gene", "sparse_f")].T))
    assert daf.matrices("cell", "gene") == {"UMIs", "sparse_f", "mask", "partial_bool",
                                            "dense_bool", *(
                                                ["packed_umis"] if data["packed"] else [])}
    for key, value in data["packed"].items():
        got = daf.get_vector(*key) if len(key) == 2 else daf.get_matrix(*key)
        assert_same(got, value)


BACKENDS = [("directory", 3), ("directory", 2), ("zip", 3), ("zip", 2), ("multizip", 3),
            ("multizip", 2), ("memory", 3)]


def location(tmp_path: Path, backend: str) -> Any:
    if backend == "directory":
        return str(tmp_path / "ref.daf.zarr")
    if backend == "zip":
        return str(tmp_path / "ref.daf.zarr.zip")
    if backend == "multizip":
        return str(tmp_path / "refs.dafs.zarr.zip") + "#/second"
    return zk.MemoryStore()


@pytest.mark.parametrize(("backend", "zarr_format"), BACKENDS)
def test_every_kind_of_property_round_trips(tmp_path: Path, backend: str,
                                            zarr_format: int) -> None:
    data = reference(packed=zarr_format == 3)
    where = location(tmp_path, backend)
    if backend == "multizip":  # another data set first: the archive holds both
        with zk.daf.open(str(tmp_path / "refs.dafs.zarr.zip") + "#/first", "w+",
                         zarr_format=zarr_format) as first:
            first.set_scalar("name", "first")
    # A data set inside a multi-data-set archive cannot be truncated (mode "w"): "w+".
    mode = "w+" if backend == "multizip" else "w"
    with zk.daf.open(where, mode, zarr_format=zarr_format) as daf:
        write_reference(daf, data)
        assert daf.zarr_format == zarr_format
        check_reference(daf, data)
    with zk.daf.open(where) as daf:
        # The name is resolved when opening: now from the "name" scalar.
        assert daf.name == "reference"
        assert daf.read_only and daf.zarr_format == zarr_format
        check_reference(daf, data)
    if backend == "multizip":
        with zk.daf.open(str(tmp_path / "refs.dafs.zarr.zip") + "#/first") as first:
            assert first.name == "first" and first.axes() == set()


def test_packed_needs_the_v3_layout(tmp_path: Path) -> None:
    with zk.daf.open(str(tmp_path / "v2.daf.zarr"), "w", zarr_format=2) as daf:
        daf.add_axis("cell", CELLS)
        with pytest.raises(DafValueError, match="packed properties need the Zarr v3"):
            daf.set_vector("cell", "x", np.zeros(N_CELLS), packed=True)
        assert daf.vectors("cell") == set()


# --- a v3 directory laid out by hand, as the Julia package writes it --------------------------


def _vlen_utf8(items: list[str]) -> bytes:
    """The vlen-utf8 codec's bytes: a u32 count, then each item as u32 length + UTF-8."""
    out = struct.pack("<I", len(items))
    for item in items:
        raw = item.encode("utf-8")
        out += struct.pack("<I", len(raw)) + raw
    return out


def _array_document(shape: list[int], data_type: str, fill: Any, codecs: list[Any],
                    chunks: list[int] | None = None) -> dict[str, Any]:
    """A zarr.json as Zarr.jl's lower3 writes it: no attributes, no dimension_names, no
    storage_transformers."""
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": data_type,
            "chunk_grid": {"name": "regular",
                           "configuration": {"chunk_shape": chunks or shape}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": codecs}


BYTES_LE = [{"name": "bytes", "configuration": {"endian": "little"}}]
VLEN = [{"name": "vlen-utf8", "configuration": {}}]
JULIA_UMIS = np.array([[1, 0], [2, 7], [0, 9]], dtype=np.uint16)  # Daf (cell, gene)
JULIA_BIG = np.linspace(0, 1, 1100)


def build_julia_directory(root: Path, *, consolidated: bool = True) -> None:
    """A Daf data set as DataAxesFormats.jl 0.3 writes it (its documented rules)."""
    documents: dict[str, dict[str, Any]] = {}

    def group(path: str) -> None:
        documents[path] = {"zarr_format": 3, "node_type": "group", "attributes": {}}

    def array(path: str, document: dict[str, Any], chunks: dict[str, bytes]) -> None:
        documents[path] = document
        for key, raw in chunks.items():
            target = root / path / "c" / key
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(raw)

    for name in ("scalars", "axes", "vectors", "matrices", "vectors/cell", "vectors/gene",
                 "vectors/big", "vectors/gene/sparse", "matrices/cell/gene/mask"):
        group(name)
    for rows in ("cell", "gene", "big"):
        for columns in ("cell", "gene", "big"):
            group(f"matrices/{rows}")
            group(f"matrices/{rows}/{columns}")
    array("scalars/version", _array_document([1], "string", "", VLEN),
          {"0": _vlen_utf8(["1.0"])})
    array("scalars/count", _array_document([1], "int64", 0, BYTES_LE),
          {"0": struct.pack("<q", -7)})
    array("axes/cell", _array_document([3], "string", "", VLEN),
          {"0": _vlen_utf8(["A", "B", "C"])})
    array("axes/gene", _array_document([2], "string", "", VLEN), {"0": _vlen_utf8(["X", "Y"])})
    array("axes/big", _array_document([1100], "string", "", VLEN),
          {"0": _vlen_utf8([f"b{i}" for i in range(1100)])})
    array("vectors/cell/age", _array_document([3], "float64", 0.0, BYTES_LE),
          {"0": struct.pack("<3d", 1.5, 2.5, 3.5)})
    # All values equal the fill value: Zarr.jl writes no chunk at all.
    array("vectors/cell/zero", _array_document([3], "int32", 0, BYTES_LE), {})
    array("vectors/gene/is_marker", _array_document([2], "bool", False, BYTES_LE),
          {"0": b"\x01\x00"})
    array("vectors/gene/sparse/nzind", _array_document([1], "uint32", 0, BYTES_LE),
          {"0": struct.pack("<I", 2)})
    array("vectors/gene/sparse/nzval", _array_document([1], "float32", 0.0, BYTES_LE),
          {"0": struct.pack("<f", 7.0)})
    # Column-major: the Zarr shape is (genes, cells), the chunk the Julia matrix's bytes.
    array("matrices/cell/gene/UMIs", _array_document([2, 3], "uint16", 0, BYTES_LE),
          {"0/0": JULIA_UMIS.tobytes(order="F")})
    # An all-true Bool sparse matrix, uint32 indices: (0, 1) and (2, 1) set; no nzval.
    array("matrices/cell/gene/mask/colptr", _array_document([3], "uint32", 0, BYTES_LE),
          {"0": struct.pack("<3I", 1, 1, 3)})
    array("matrices/cell/gene/mask/rowval", _array_document([2], "uint32", 0, BYTES_LE),
          {"0": struct.pack("<2I", 1, 3)})
    # A packed vector: one shard covering exactly the 1100 values (not a multiple of the
    # 1024-value inner chunk, as Julia writes it), its index first, each inner chunk
    # blosc-compressed and preceded by dead bytes (Julia puts ZIP local headers there).
    inner = 1024
    blosc = numcodecs.Blosc(cname="zstd", clevel=5, shuffle=numcodecs.Blosc.BITSHUFFLE,
                            blocksize=0)
    padded = np.zeros(2 * inner)
    padded[:1100] = JULIA_BIG
    chunks = [blosc.encode(padded[i * inner:(i + 1) * inner].astype("<f8").tobytes())
              for i in range(2)]
    index_size = 2 * 16 + 4
    body = b""
    entries = []
    for chunk in chunks:
        body += b"PK\x03\x04" + b"\x00" * 26  # dead bytes the index skips
        entries.append((index_size + len(body), len(chunk)))
        body += chunk
    index = b"".join(struct.pack("<QQ", offset, size) for offset, size in entries)
    shard = index + struct.pack("<I", crc32c.crc32c(index)) + body
    packed_codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [inner],
        "codecs": [*BYTES_LE, {"name": "blosc", "configuration": {
            "cname": "zstd", "clevel": 5, "shuffle": "bitshuffle", "typesize": 8,
            "blocksize": 0}}],
        "index_codecs": [*BYTES_LE, {"name": "crc32c"}],
        "index_location": "start"}}]
    packed = _array_document([1100], "float64", 0.0, packed_codecs)
    packed["attributes"] = {"daf_packed_format": "indexed+zipped"}
    array("vectors/big/values", packed, {"0": shard})
    for path, document in documents.items():
        (root / path).mkdir(parents=True, exist_ok=True)
        (root / path / "zarr.json").write_text(json.dumps(document))
    root_document: dict[str, Any] = {"zarr_format": 3, "node_type": "group",
                                     "attributes": {"daf": [1, 0]}}
    if consolidated:
        root_document["consolidated_metadata"] = {
            "kind": "inline", "must_understand": False, "metadata": documents}
    (root / "zarr.json").write_text(json.dumps(root_document))


def check_julia_data_set(daf: zk.daf.DafDataset) -> None:
    assert daf.zarr_format == 3
    assert daf.scalars() == {"version", "count"}
    assert daf.get_scalar("version") == "1.0" and daf.get_scalar("count") == np.int64(-7)
    assert daf.axes() == {"cell", "gene", "big"}
    assert daf.axis_vector("cell").tolist() == ["A", "B", "C"]
    assert_same(daf.get_vector("cell", "age"), np.array([1.5, 2.5, 3.5]))
    assert_same(daf.get_vector("cell", "zero"), np.zeros(3, dtype=np.int32))
    assert_same(daf.get_vector("gene", "is_marker"), np.array([True, False]))
    assert_same(daf.get_vector("gene", "sparse"), sp.coo_array(np.array([0, 7.0], "f4")))
    assert_same(daf.get_matrix("cell", "gene", "UMIs"), JULIA_UMIS)
    assert_same(daf.get_matrix("gene", "cell", "UMIs"), JULIA_UMIS.T)
    assert_same(daf.get_matrix("cell", "gene", "mask"),
                sp.csc_matrix(np.array([[False, True], [False, False], [False, True]])))
    assert_same(daf.get_vector("big", "values"), JULIA_BIG)
    assert daf.vectors("gene") == {"is_marker", "sparse"}


def test_reads_a_directory_laid_out_as_julia_writes_it(tmp_path: Path) -> None:
    root = tmp_path / "julia.daf.zarr"
    build_julia_directory(root)
    with zk.daf.open(str(root)) as daf:
        check_julia_data_set(daf)
        assert daf.name == str(root)  # no "name" scalar: the path
    with zk.daf.open(str(root), "r", name="given") as daf:
        assert daf.name == "given"


def test_appends_to_a_julia_directory(tmp_path: Path) -> None:
    root = tmp_path / "julia.daf.zarr"
    build_julia_directory(root)
    with zk.daf.open(str(root), "r+") as daf:
        daf.set_vector("gene", "new", np.array([1, 2], dtype=np.int8))
        daf.delete_vector("cell", "age")
    with zk.daf.open(str(root)) as daf:
        assert daf.vectors("cell") == {"zero"} and daf.vectors("gene") == {
            "is_marker", "sparse", "new"}
    # The inline snapshot was kept current (a reader over HTTP relies on it).
    snapshot = json.loads((root / "zarr.json").read_text())["consolidated_metadata"]["metadata"]
    assert "vectors/gene/new" in snapshot and "vectors/cell/age" not in snapshot


# --- what the writer puts on disk -------------------------------------------------------------


def _member_documents(root: Path, name: str) -> dict[str, Any]:
    return {str(p.parent.relative_to(root)): json.loads(p.read_text())
            for p in root.rglob(name) if p.parent != root}


def small_data_set(where: Any, zarr_format: int = 3) -> dict[str, Any]:
    """A small data set; returns the values written."""
    umis = np.array([[1.5, 0.0, 2.0], [0.0, 3.0, 0.0]], dtype=np.float32)  # 2 cells x 3 genes
    sparse_umis = sp.csc_matrix(np.array([[0, 4, 0], [5, 0, 6]], dtype=np.int32))
    mask = sp.csc_matrix(np.array([[True, False, False], [False, False, True]]))
    with zk.daf.open(where, "w", zarr_format=zarr_format) as daf:
        daf.set_scalar("version", "1.0")
        daf.add_axis("cell", ["c1", "c2"])
        daf.add_axis("gene", ["g1", "g2", "g3"])
        daf.set_vector("gene", "mark", sp.coo_array(np.array([True, False, True])))
        daf.set_matrix("cell", "gene", "UMIs", umis, relayout=False)
        daf.set_matrix("cell", "gene", "sparse", sparse_umis, relayout=False)
        daf.set_matrix("cell", "gene", "mask", mask, relayout=False)
    return {"umis": umis, "sparse": sparse_umis, "mask": mask}


def test_v3_directory_layout_on_disk(tmp_path: Path) -> None:
    root = tmp_path / "small.daf.zarr"
    values = small_data_set(str(root))
    root_document = json.loads((root / "zarr.json").read_text())
    assert root_document["attributes"] == {"daf": [1, 0]}
    documents = _member_documents(root, "zarr.json")
    # Inline consolidated metadata lists every node, exactly as its own zarr.json.
    inline = root_document["consolidated_metadata"]
    assert inline["kind"] == "inline" and inline["must_understand"] is False
    # (zarr-python's writer, and zarrkit's, give nested groups an empty snapshot of their own)
    empty = {"kind": "inline", "must_understand": False, "metadata": {}}
    assert all(v["consolidated_metadata"] == empty for v in inline["metadata"].values()
               if v["node_type"] == "group")
    assert {k: {f: x for f, x in v.items() if f != "consolidated_metadata"}
            for k, v in inline["metadata"].items()} == documents
    # Every pair of axes has its group, an axis with itself included.
    for rows in ("cell", "gene"):
        for columns in ("cell", "gene"):
            assert documents[f"matrices/{rows}/{columns}"]["node_type"] == "group"
    dense = documents["matrices/cell/gene/UMIs"]
    assert dense["shape"] == [3, 2]  # the reverse of the Daf (cells, genes)
    assert dense["chunk_grid"]["configuration"]["chunk_shape"] == [3, 2]  # one chunk
    assert dense["codecs"] == BYTES_LE  # uncompressed, little-endian
    assert dense["data_type"] == "float32" and dense["fill_value"] == 0.0
    assert dense["chunk_key_encoding"] == {"name": "default",
                                           "configuration": {"separator": "/"}}
    assert "dimension_names" not in dense and "attributes" not in dense  # as Zarr.jl
    assert (root / "matrices/cell/gene/UMIs/c/0/0").read_bytes() == values["umis"].tobytes(
        order="F")
    entries = documents["axes/cell"]
    assert entries["data_type"] == "string" and entries["fill_value"] == ""
    assert [c["name"] for c in entries["codecs"]] == ["vlen-utf8"]
    assert (root / "axes/cell/c/0").read_bytes() == _vlen_utf8(["c1", "c2"])
    # Sparse: 1-based CSC; an all-true Bool property has no nzval.
    colptr = np.frombuffer((root / "matrices/cell/gene/sparse/colptr/c/0").read_bytes(), "<i8")
    rowval = np.frombuffer((root / "matrices/cell/gene/sparse/rowval/c/0").read_bytes(), "<i8")
    nzval = np.frombuffer((root / "matrices/cell/gene/sparse/nzval/c/0").read_bytes(), "<i4")
    assert colptr.tolist() == [1, 2, 3, 4] and rowval.tolist() == [2, 1, 2]
    assert nzval.tolist() == [5, 4, 6]
    assert not (root / "matrices/cell/gene/mask/nzval").exists()
    assert np.frombuffer((root / "matrices/cell/gene/mask/rowval/c/0").read_bytes(),
                         "<i8").tolist() == [1, 2]
    assert not (root / "vectors/gene/mark/nzval").exists()
    assert np.frombuffer((root / "vectors/gene/mark/nzind/c/0").read_bytes(),
                         "<i8").tolist() == [1, 3]


def test_v3_packed_layout_on_disk(tmp_path: Path) -> None:
    root = tmp_path / "packed.daf.zarr"
    values = np.arange(1100, dtype=np.float64) / 7
    with zk.daf.open(str(root), "w") as daf:
        daf.add_axis("cell", CELLS)
        daf.set_vector("cell", "values", values, packed=True)
        daf.set_vector("cell", "flat", values)  # not asked: flat
    document = json.loads((root / "vectors/cell/values/zarr.json").read_text())
    assert document["attributes"] == {"daf_packed_format": "indexed+zipped"}
    (sharding,) = document["codecs"]
    config = sharding["configuration"]
    assert sharding["name"] == "sharding_indexed" and config["index_location"] == "start"
    assert config["chunk_shape"] == [1024]
    assert config["codecs"][1] == {"name": "blosc", "configuration": {
        "cname": "zstd", "clevel": 5, "shuffle": "bitshuffle", "typesize": 8, "blocksize": 0}}
    assert config["index_codecs"] == [*BYTES_LE, {"name": "crc32c"}]
    assert sorted(p.name for p in (root / "vectors/cell/values/c").iterdir()) == ["0"]
    # The shard: index first (offset, size per inner chunk, then a CRC-32C), each inner
    # chunk a blosc frame that numcodecs decodes to the values.
    shard = (root / "vectors/cell/values/c/0").read_bytes()
    index = shard[:36]
    assert struct.unpack("<I", shard[32:36])[0] == crc32c.crc32c(index[:32])
    offset, size = struct.unpack("<QQ", index[:16])
    first = np.frombuffer(numcodecs.Blosc().decode(shard[offset:offset + size]), "<f8")
    np.testing.assert_array_equal(first, values[:1024])
    assert json.loads((root / "vectors/cell/flat/zarr.json").read_text())["codecs"] == BYTES_LE
    # "indexed+zipped": the shard is also a ZIP archive whose members are the inner chunks'
    # blosc frames (the byte-exact layout is checked in test_daf_julia_layout.py).
    with zipfile.ZipFile(io.BytesIO(shard)) as archive:
        assert archive.testzip() is None
        assert archive.namelist() == ["c/0", "c/1", "codec.json"]
        assert archive.read("c/0") == shard[offset:offset + size]


@pytest.mark.parametrize("backend", ["directory", "zip", "memory"])
def test_packed_all_fill_chunks_are_stored(tmp_path: Path, backend: str) -> None:
    """As Julia's shard writer: every inner chunk is stored, even one of fill values only
    (zarrkit's sharding codec would leave it out), and the shard is a ZIP archive on every
    backend."""
    where = location(tmp_path, backend)
    values = np.zeros(N_CELLS, dtype=np.float64)
    values[-1] = 3.5  # the first inner chunk is all zeros
    with zk.daf.open(where, "w") as daf:
        daf.add_axis("cell", CELLS)
        daf.set_vector("cell", "tail", values, packed=True)
        daf.set_vector("cell", "zeros", np.zeros(N_CELLS, dtype=np.int64), packed=True)
        store = daf.root.store
        prefix = daf.root.path
        for name in ("tail", "zeros"):
            shard = store.get("/".join(filter(None, [prefix, f"vectors/cell/{name}/c/0"])))
            assert shard is not None
            entries = np.frombuffer(shard[:32], "<u8").reshape(2, 2)
            assert (entries != 2**64 - 1).all()
            with zipfile.ZipFile(io.BytesIO(shard)) as archive:
                assert archive.namelist() == ["c/0", "c/1", "codec.json"]
    with zk.daf.open(where) as daf:
        assert_same(daf.get_vector("cell", "tail"), values)
        assert_same(daf.get_vector("cell", "zeros"), np.zeros(N_CELLS, dtype=np.int64))


@pytest.mark.parametrize("module", ["packed", "layout", "dataset", "sparse", "values",
                                    "backends"])
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(f"zarrkit.daf.{module}"))
    assert result.failed == 0
    assert result.attempted > 0


def test_v2_directory_layout_on_disk(tmp_path: Path) -> None:
    root = tmp_path / "small2.daf.zarr"
    values = small_data_set(str(root), zarr_format=2)
    assert json.loads((root / ".zgroup").read_text()) == {"zarr_format": 2}
    marker = json.loads((root / "daf/.zarray").read_text())
    assert marker["dtype"] == "|u1" and marker["shape"] == [2] and marker["compressor"] is None
    assert (root / "daf/0").read_bytes() == b"\x01\x00"
    dense = json.loads((root / "matrices/cell/gene/UMIs/.zarray").read_text())
    assert dense["shape"] == [3, 2] and dense["chunks"] == [3, 2] and dense["order"] == "C"
    assert dense["compressor"] is None and dense["filters"] is None
    assert dense["dtype"] == "<f4"
    chunk = root / "matrices/cell/gene/UMIs" / ("0" + dense["dimension_separator"] + "0")
    assert chunk.read_bytes() == values["umis"].tobytes(order="F")
    entries = json.loads((root / "axes/gene/.zarray").read_text())
    assert entries["dtype"] == "|O" and entries["filters"] == [{"id": "vlen-utf8"}]
    assert entries["compressor"] is None
    assert not (root / "matrices/cell/gene/mask/nzval").exists()
    # .zmetadata is current: every document of the hierarchy, as stored.
    consolidated = json.loads((root / ".zmetadata").read_text())["metadata"]
    on_disk = {str(p.relative_to(root)): json.loads(p.read_text())
               for pattern in (".zarray", ".zgroup", ".zattrs") for p in root.rglob(pattern)}
    assert consolidated == on_disk


def test_zip_archive_layout(tmp_path: Path) -> None:
    path = tmp_path / "small.daf.zarr.zip"
    small_data_set(str(path))
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        root_document = json.loads(archive.read("zarr.json"))
        assert root_document["attributes"] == {"daf": [1, 0]}
        assert "consolidated_metadata" not in root_document  # not in ZIP archives
        assert "matrices/cell/gene/UMIs/c/0/0" in names
        raw = path.read_bytes()
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            name_length, extra_length = struct.unpack(
                "<HH", raw[info.header_offset + 26:info.header_offset + 30])
            data_offset = info.header_offset + 30 + name_length + extra_length
            assert data_offset % 8 == 0, info.filename  # so that members memory-map


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_zarr_python_reads_the_directory_and_sees_the_transpose(tmp_path: Path,
                                                                 zarr_format: int) -> None:
    import zarr

    root = tmp_path / "peer.daf.zarr"
    data = reference(packed=zarr_format == 3)
    with zk.daf.open(str(root), "w", zarr_format=zarr_format) as daf:
        write_reference(daf, data)
    group = zarr.open_group(str(root), mode="r")
    umis = data["matrices"][("cell", "gene", "UMIs")]
    np.testing.assert_array_equal(group["matrices/cell/gene/UMIs"][...], umis.T)
    np.testing.assert_array_equal(group["matrices/gene/cell/UMIs"][...], umis)
    assert list(group["axes/gene"][...]) == GENES
    assert list(group["vectors/gene/symbol"][...]) == list(data["vectors"][("gene", "symbol")])
    sparse_f = data["matrices"][("cell", "gene", "sparse_f")]
    np.testing.assert_array_equal(group["matrices/cell/gene/sparse_f/colptr"][...],
                                  sparse_f.indptr + 1)
    np.testing.assert_array_equal(group["matrices/cell/gene/sparse_f/nzval"][...],
                                  sparse_f.data)
    if zarr_format == 3:
        np.testing.assert_array_equal(group["vectors/cell/packed_depth"][...],
                                      data["packed"][("cell", "packed_depth")])
        np.testing.assert_array_equal(group["matrices/cell/gene/packed_umis"][...],
                                      data["packed"][("cell", "gene", "packed_umis")].T)


# --- memory-mapped reads ----------------------------------------------------------------------


def mapped_file(array: np.ndarray[Any, Any]) -> mmap.mmap | None:
    """The mmap an array views, following its ``.base`` chain (None: it owns its data)."""
    base: Any = array
    while base is not None:
        if isinstance(base, mmap.mmap):
            return base
        if isinstance(base, memoryview):
            return base.obj if isinstance(base.obj, mmap.mmap) else None
        base = getattr(base, "base", None)
    return None


@pytest.mark.parametrize("backend", ["directory", "zip"])
def test_dense_reads_are_read_only_views_of_the_mapped_chunks(tmp_path: Path,
                                                              backend: str) -> None:
    where = str(tmp_path / ("m.daf.zarr" + (".zip" if backend == "zip" else "")))
    values = small_data_set(where)
    with zk.daf.open(where) as daf:
        umis = daf.get_matrix("cell", "gene", "UMIs")
        assert mapped_file(umis) is not None
        assert not umis.flags.writeable
        assert umis.flags.f_contiguous  # the transposed view of a C-ordered (genes, cells)
        np.testing.assert_array_equal(umis, values["umis"])
        with pytest.raises(ValueError, match="read-only"):
            umis[0, 0] = 1
        again = daf.get_matrix("cell", "gene", "UMIs")
        if backend == "zip":  # one mapping of the archive, shared by every read
            assert np.shares_memory(umis, again)
        sparse = daf.get_matrix("cell", "gene", "sparse")
        assert mapped_file(sparse.data) is not None  # the values stay mapped too
    # The mapped views outlive the data set (and, for ZIP, its store).
    np.testing.assert_array_equal(umis, values["umis"])


def test_writable_directory_and_zip_reads_are_mapped(tmp_path: Path) -> None:
    for name in ("w.daf.zarr", "w.daf.zarr.zip"):
        with zk.daf.open(str(tmp_path / name), "w") as daf:
            daf.add_axis("cell", ["a", "b"])
            daf.set_vector("cell", "x", np.array([1.0, 2.0]))
            got = daf.get_vector("cell", "x")
            assert mapped_file(got) is not None
            assert not got.flags.writeable
            daf.set_vector("cell", "y", np.array([3.0, 4.0]))  # appended after the mapping
            np.testing.assert_array_equal(daf.get_vector("cell", "y"), [3.0, 4.0])
            np.testing.assert_array_equal(got, [1.0, 2.0])


# --- modes and markers ------------------------------------------------------------------------


def test_modes(tmp_path: Path) -> None:
    path = str(tmp_path / "modes.daf.zarr")
    with pytest.raises(GroupNotFoundError):
        zk.daf.open(path)
    with pytest.raises(GroupNotFoundError):
        zk.daf.open(path, "r+")
    with zk.daf.open(path, "w+") as daf:  # created
        daf.set_scalar("a", 1)
    with zk.daf.open(path, "w+") as daf:  # kept
        assert daf.scalars() == {"a"}
    with zk.daf.open(path, "r+") as daf:
        daf.set_scalar("b", 2)
    with zk.daf.open(path) as daf:
        assert daf.scalars() == {"a", "b"} and daf.read_only
        with pytest.raises(ReadOnlyError):
            daf.set_scalar("c", 3)
        with pytest.raises(ReadOnlyError):
            daf.delete_scalar("a")
    with zk.daf.open(path, "w") as daf:  # truncated
        assert daf.scalars() == set()
    with pytest.raises(DafValueError, match="mode"):
        zk.daf.open(path, "a")
    with pytest.raises(DafValueError, match="uses the Zarr v3 layout"):
        zk.daf.open(path, "r", zarr_format=2)
    other = tmp_path / "not-zarr"
    other.mkdir()
    (other / "precious.txt").write_text("keep me")
    with pytest.raises(DafValueError, match="not a Zarr directory"):
        zk.daf.open(str(other), "w")
    assert (other / "precious.txt").exists()


def _v3_root(path: Path, attributes: dict[str, Any]) -> None:
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps(
        {"zarr_format": 3, "node_type": "group", "attributes": attributes}))


@pytest.mark.parametrize(("marker", "found"), [([2, 0], (2, 0)), ([1, 1], (1, 1)),
                                               ([0, 9], (0, 9))])
def test_unsupported_versions_are_refused(tmp_path: Path, marker: list[int],
                                          found: tuple[int, int]) -> None:
    root = tmp_path / "future.daf.zarr"
    _v3_root(root, {"daf": marker})
    with pytest.raises(DafVersionError) as caught:
        zk.daf.open(str(root))
    error = caught.value
    assert error.found == found and error.supported == (1, 0) and error.path == str(root)
    assert f"{found[0]}.{found[1]}" in str(error) and "1.0" in str(error)
    assert str(root) in str(error)


def test_v2_versions_and_markers(tmp_path: Path) -> None:
    root = tmp_path / "v2.daf.zarr"
    group = zk.open_group(str(root), mode="w", zarr_format=2)
    group.create_array("daf", shape=(2,), dtype="u1", data=np.array([2, 0], "u1"))
    with pytest.raises(DafVersionError, match=r"2\.0"):
        zk.daf.open(str(root))
    bad = tmp_path / "bad2.daf.zarr"
    zk.open_group(str(bad), mode="w", zarr_format=2).create_array(
        "daf", shape=(3,), dtype="u1", data=np.array([1, 0, 0], "u1"))
    with pytest.raises(DafMarkerError):
        zk.daf.open(str(bad))
    plain = tmp_path / "plain2.zarr"
    zk.open_group(str(plain), mode="w", zarr_format=2)
    with pytest.raises(NotDafError):
        zk.daf.open(str(plain))


@pytest.mark.parametrize("marker", ["1.0", [1], [1, "0"], [1, -1], [True, False], {"v": 1}])
def test_malformed_markers_have_their_own_error(tmp_path: Path, marker: Any) -> None:
    root = tmp_path / "bad.daf.zarr"
    _v3_root(root, {"daf": marker})
    with pytest.raises(DafMarkerError, match="malformed"):
        zk.daf.open(str(root))


def test_missing_marker_and_adoption(tmp_path: Path) -> None:
    root = tmp_path / "plain.zarr"
    _v3_root(root, {"owner": "someone"})
    with pytest.raises(NotDafError, match="not a Daf data set"):
        zk.daf.open(str(root))
    with pytest.raises(NotDafError):
        zk.daf.open(str(root), "r+")
    with zk.daf.open(str(root), "w+") as daf:  # as Julia: w+ makes the group a Daf root
        daf.set_scalar("x", 1.0)
    document = json.loads((root / "zarr.json").read_text())
    assert document["attributes"] == {"owner": "someone", "daf": [1, 0]}
    with zk.daf.open(str(root)) as daf:
        assert daf.get_scalar("x") == 1.0


def test_path_forms(tmp_path: Path) -> None:
    with pytest.raises(DafValueError, match="takes no #/group"):
        zk.daf.open(str(tmp_path / "one.daf.zarr.zip") + "#/g", "w+")
    with pytest.raises(DafValueError, match="several data sets"):
        zk.daf.open(str(tmp_path / "many.dafs.zarr.zip"), "w+")
    with pytest.raises(DafValueError, match="cannot truncate"):
        zk.daf.open(str(tmp_path / "many.dafs.zarr.zip") + "#/g", "w")
    group = zk.open_group(zk.MemoryStore(), mode="w", zarr_format=3).create_group("inner")
    with zk.daf.open(group, "w+") as daf:
        daf.add_axis("cell", ["a"])
        assert daf.root.path == "inner"


# --- the ZIP backend --------------------------------------------------------------------------


def test_zip_is_append_only(tmp_path: Path) -> None:
    path = str(tmp_path / "append.daf.zarr.zip")
    with zk.daf.open(path, "w") as daf:
        daf.set_scalar("s", 1)
        daf.add_axis("cell", ["a", "b"])
        daf.add_axis("gene", ["x"])
        daf.set_vector("cell", "v", [1, 2])
        daf.set_matrix("cell", "gene", "m", [[1.0], [2.0]])
    with zk.daf.open(path, "r+") as daf:
        refusals = [
            lambda: daf.delete_scalar("s"),
            lambda: daf.set_scalar("s", 2, overwrite=True),
            lambda: daf.delete_vector("cell", "v"),
            lambda: daf.set_vector("cell", "v", [3, 4], overwrite=True),
            lambda: daf.delete_matrix("cell", "gene", "m"),
            lambda: daf.set_matrix("cell", "gene", "m", [[0.0], [0.0]], overwrite=True),
            lambda: daf.delete_axis("cell"),
            lambda: daf.add_axis("cell", ["b", "a"], overwrite=True),  # reordering
        ]
        for refused in refusals:
            with pytest.raises(UnsupportedOperationError, match="append-only"):
                refused()
        daf.delete_scalar("missing", must_exist=False)  # nothing to delete: fine
        daf.set_vector("cell", "w", [5, 6])  # appending is fine
    with zk.daf.open(path) as daf:
        assert daf.get_scalar("s") == 1
        assert daf.get_vector("cell", "v").tolist() == [1, 2]
        assert daf.get_vector("cell", "w").tolist() == [5, 6]
        assert daf.axis_vector("cell").tolist() == ["a", "b"]


def test_opens_of_one_archive_share_one_store(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.dafs.zarr.zip")
    first = zk.daf.open(path + "#/a", "w+")
    second = zk.daf.open(path + "#/b", "w+")
    assert first.store is second.store
    first.add_axis("cell", ["x"])
    second.add_axis("gene", ["y"])
    reader = zk.daf.open(path + "#/a")  # shares the writable store
    assert reader.store is first.store and reader.axes() == {"cell"}
    for daf in (first, second, reader):
        daf.close()
    # First opened read-only: a later writable open is refused until it is closed.
    reader = zk.daf.open(path + "#/a")
    with pytest.raises(ReadOnlyError, match="first opened read-only"):
        zk.daf.open(path + "#/b", "r+")
    reader.close()
    with zk.daf.open(path + "#/b", "r+") as writer:
        assert writer.axes() == {"gene"}


def test_truncating_an_archive_open_in_this_process_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "busy.daf.zarr.zip")
    with zk.daf.open(path, "w") as daf:
        daf.add_axis("cell", ["a"])
    with zk.daf.open(path) as reader:
        with pytest.raises(StoreLockedError, match="open in this process"):
            zk.daf.open(path, "w")  # would empty the archive under the reader
        assert reader.axes() == {"cell"}
    with zk.daf.open(path, "w") as daf:
        assert daf.axes() == set()


def test_reads_a_foreign_zarr_python_v2_zip(tmp_path: Path) -> None:
    """A v2 archive written by zarr-python, chunked and compressed (not as Daf writes)."""
    import zarr

    path = tmp_path / "foreign.daf.zarr.zip"
    cells = ["c1", "c2", "c3", "c4", "c5"]
    umis = np.arange(10, dtype=np.int32).reshape(5, 2)  # Daf (cell, gene)
    sparse_umis = sp.csc_matrix(np.array([[0, 1.0], [2.0, 0], [0, 0], [0, 3.0], [4.0, 0]]))
    store = zarr.storage.ZipStore(path, mode="w")
    root = zarr.open_group(store, mode="w", zarr_format=2)
    compressor = numcodecs.Blosc(cname="lz4")

    def put(name: str, data: np.ndarray[Any, Any], chunks: tuple[int, ...]) -> None:
        dtype = str if data.dtype.kind in "OU" else data.dtype
        array = root.create_array(name, shape=data.shape, dtype=dtype, chunks=chunks,
                                  compressors=compressor)
        array[...] = data

    put("daf", np.array([1, 0], dtype=np.uint8), (2,))
    for name in ("scalars", "vectors/cell", "vectors/gene", "matrices/cell/gene",
                 "matrices/gene/cell"):
        root.require_group(name)
    put("scalars/version", np.array(["2.5"], dtype=object), (1,))
    put("axes/cell", np.array(cells, dtype=object), (2,))
    put("axes/gene", np.array(["g1", "g2"], dtype=object), (1,))
    put("vectors/cell/age", np.linspace(0, 1, 5), (2,))
    put("matrices/cell/gene/UMIs", np.ascontiguousarray(umis.T), (1, 3))
    root.require_group("matrices/cell/gene/sparse")
    put("matrices/cell/gene/sparse/colptr", sparse_umis.indptr.astype("u4") + 1, (2,))
    put("matrices/cell/gene/sparse/rowval", sparse_umis.indices.astype("i2") + 1, (3,))
    put("matrices/cell/gene/sparse/nzval", sparse_umis.data, (3,))
    store.close()
    with zipfile.ZipFile(path) as archive:  # really compressed and chunked
        assert "vectors/cell/age/2" in archive.namelist()
    with zk.daf.open(str(path)) as daf:
        assert daf.zarr_format == 2
        assert daf.get_scalar("version") == "2.5"
        assert daf.axis_vector("cell").tolist() == cells
        assert_same(daf.get_vector("cell", "age"), np.linspace(0, 1, 5))
        assert_same(daf.get_matrix("cell", "gene", "UMIs"), umis)
        assert_same(daf.get_matrix("gene", "cell", "UMIs"), umis.T)
        assert_same(daf.get_matrix("cell", "gene", "sparse"), sparse_umis)


def test_a_killed_append_leaves_the_archive_readable(tmp_path: Path) -> None:
    path = str(tmp_path / "killed.daf.zarr.zip")
    code = textwrap.dedent(f"""
        import os, signal
        import numpy as np
        import zarrkit as zk
        with zk.daf.open({path!r}, "w") as daf:
            daf.add_axis("cell", ["a", "b", "c"])
            daf.set_vector("cell", "before", np.array([1.0, 2.0, 3.0]))
        daf = zk.daf.open({path!r}, "r+")
        daf.set_vector("cell", "during", np.arange(3))
        os.kill(os.getpid(), signal.SIGKILL)  # no central directory for the append
    """)
    environment = {**os.environ, "PYTHONPATH": str(SRC)}
    result = subprocess.run([sys.executable, "-c", code], env=environment, timeout=120,
                            check=False)
    assert result.returncode == -signal.SIGKILL
    with zk.daf.open(path) as daf:
        assert daf.axis_vector("cell").tolist() == ["a", "b", "c"]
        assert daf.get_vector("cell", "before").tolist() == [1.0, 2.0, 3.0]


# --- the HTTP backend -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HTTPServerFixture]:
    fixture = HTTPServerFixture(tmp_path_factory.mktemp("served"))
    yield fixture
    fixture.close()


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_reads_over_http_with_range_requests(server: HTTPServerFixture,
                                             zarr_format: int) -> None:
    directory = server.new_directory()
    data = reference(packed=zarr_format == 3)
    with zk.daf.open(str(directory / "ref.daf.zarr"), "w", zarr_format=zarr_format) as daf:
        write_reference(daf, data)
    state = server.reset()
    url = server.url(directory / "ref.daf.zarr")
    with zk.daf.open(url) as daf:
        assert daf.backend == "http" and daf.read_only
        assert daf.name == "reference"
        check_reference(daf, data)
        with pytest.raises(ReadOnlyError):
            daf.set_scalar("x", 1)
    chunk_requests = [r for r in state.requests if "/c/" in r.path or r.path.endswith("/0")
                      or "/0/" in r.path or r.path.endswith(".0")]
    assert chunk_requests
    assert all(r.range is not None for r in chunk_requests), [
        r.path for r in chunk_requests if r.range is None]
    # Metadata comes from the consolidated snapshot: no node document is fetched one by one
    # below the top groups.
    assert not [r for r in state.requests if r.path.count("/") > 4 and (
        r.path.endswith("zarr.json") or r.path.endswith(".zarray"))]


def test_reads_a_julia_directory_over_http(server: HTTPServerFixture) -> None:
    directory = server.new_directory()
    build_julia_directory(directory / "julia.daf.zarr")
    with zk.daf.open(server.url(directory / "julia.daf.zarr")) as daf:
        check_julia_data_set(daf)


def test_http_needs_consolidated_metadata_and_mode_r(server: HTTPServerFixture) -> None:
    directory = server.new_directory()
    build_julia_directory(directory / "bare.daf.zarr", consolidated=False)
    url = server.url(directory / "bare.daf.zarr")
    with pytest.raises(MetadataError, match="needs consolidated metadata"):
        zk.daf.open(url)
    with pytest.raises(ReadOnlyError, match="read-only"):
        zk.daf.open(url, "r+")
    with pytest.raises(GroupNotFoundError):
        zk.daf.open(server.url(directory / "nothing.daf.zarr"))


# --- checks on every set, and failed sets lose nothing -----------------------------------------


def test_bad_input_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with zk.daf.open(str(tmp_path / "checks.daf.zarr"), "w") as daf:
        daf.add_axis("cell", ["a", "b", "c"])
        daf.add_axis("gene", ["x", "y"])
        daf.set_vector("cell", "v", [1.0, 2.0, 3.0])
        daf.set_matrix("cell", "gene", "m", np.ones((3, 2)))
        before = sorted(str(p) for p in (tmp_path / "checks.daf.zarr").rglob("*"))
        cases: list[tuple[type[Exception], str, Any]] = [
            (DafValueError, "2 elements, but the axis has 3",
             lambda: daf.set_vector("cell", "v", [1, 2], overwrite=True)),
            (DafValueError, "cannot store elements of type complex",
             lambda: daf.set_vector("cell", "v", np.ones(3, complex), overwrite=True)),
            (DafValueError, "float16", lambda: daf.set_vector("cell", "h", np.ones(3, "f2"))),
            (DafValueError, "not a string",
             lambda: daf.set_vector("cell", "s", np.array(["a", 1, "c"], dtype=object))),
            (DafValueError, "shape \\(2, 3\\), but the axes have \\(3, 2\\)",
             lambda: daf.set_matrix("cell", "gene", "m", np.ones((2, 3)), overwrite=True)),
            (DafValueError, "no string matrices",
             lambda: daf.set_matrix("cell", "gene", "t", np.full((3, 2), "a"))),
            (DafValueError, "shape \\(3, 3\\)",
             lambda: daf.set_matrix("cell", "gene", "sp", sp.eye(3).tocsc())),
            (DafValueError, "unique", lambda: daf.add_axis("batch", ["b1", "b1"])),
            (DafValueError, "strings", lambda: daf.add_axis("batch", [1, 2])),
            (DafValueError, "reserved", lambda: daf.set_vector("cell", "name", [1, 2, 3])),
            (DafValueError, "contains '/'", lambda: daf.set_scalar("a/b", 1)),
            (DafValueError, "Daf cannot store", lambda: daf.set_scalar("d", {"a": 1})),
            (DafKeyError, "no axis 'nope'", lambda: daf.set_vector("nope", "v", [1])),
            (DafExistsError, "already exists", lambda: daf.set_vector("cell", "v", [0, 0, 0])),
            (DafExistsError, "already exists", lambda: daf.add_axis("cell", ["q"])),
            (DafExistsError, "already exists",
             lambda: daf.set_matrix("gene", "cell", "m", np.ones((2, 3)))),
            (DafKeyError, "no scalar", lambda: daf.delete_scalar("missing")),
            (DafKeyError, "no matrix", lambda: daf.get_matrix("cell", "gene", "missing")),
            (DafValueError, "cannot relayout",
             lambda: daf.relayout_matrix("cell", "cell", "m")),
        ]
        for error, message, call in cases:
            with pytest.raises(error, match=message):
                call()
        assert sorted(str(p) for p in (tmp_path / "checks.daf.zarr").rglob("*")) == before
        assert daf.get_vector("cell", "v").tolist() == [1.0, 2.0, 3.0]
        assert daf.get_matrix("cell", "gene", "m").tolist() == np.ones((3, 2)).tolist()


def test_defaults_overwrites_deletes_and_relayout(tmp_path: Path) -> None:
    with zk.daf.open(str(tmp_path / "ops.daf.zarr"), "w") as daf:
        daf.add_axis("cell", ["a", "b"])
        daf.add_axis("gene", ["x", "y", "z"])
        assert daf.get_scalar("s", default=None) is None
        assert daf.get_vector("cell", "v", default=None) is None
        assert daf.get_vector("cell", "v", default=1.5).tolist() == [1.5, 1.5]
        assert daf.get_matrix("cell", "gene", "m", default=None) is None
        assert daf.get_vector("cell", "name").tolist() == ["a", "b"]
        daf.set_vector("cell", "v", [1, 2])
        daf.set_vector("cell", "v", sp.coo_array(np.array([0, 5])), overwrite=True)
        assert_same(daf.get_vector("cell", "v"), sp.coo_array(np.array([0, 5])))
        # Stored only as (gene, cell): read as (cell, gene) by relayout, or not at all.
        m = np.arange(6, dtype=np.int16).reshape(3, 2)
        daf.set_matrix("gene", "cell", "m", m, relayout=False)
        assert_same(daf.get_matrix("cell", "gene", "m"), m.T)
        assert daf.get_matrix("cell", "gene", "m", relayout=False, default=None) is None
        assert daf.matrices("cell", "gene", relayout=False) == set()
        daf.relayout_matrix("gene", "cell", "m")
        assert_same(daf.get_matrix("cell", "gene", "m", relayout=False), m.T)
        with pytest.raises(DafExistsError):
            daf.relayout_matrix("gene", "cell", "m")
        daf.delete_matrix("cell", "gene", "m", relayout=False)
        assert daf.has_matrix("cell", "gene", "m")  # still there flipped
        daf.delete_matrix("cell", "gene", "m")
        assert not daf.has_matrix("gene", "cell", "m")
        daf.delete_matrix("cell", "gene", "m", must_exist=False)
        # Sparse relayout, and deleting an axis takes its vectors and matrices along.
        s = sp.random(2, 3, density=0.5, random_state=1, format="csc")
        daf.set_matrix("cell", "gene", "s", s)
        assert_same(daf.get_matrix("gene", "cell", "s", relayout=False), sp.csc_matrix(s.T))
        daf.set_matrix("gene", "gene", "sq", np.eye(3))
        daf.delete_axis("cell")
        assert daf.axes() == {"gene"}
        assert not (tmp_path / "ops.daf.zarr/matrices/cell").exists()
        assert not (tmp_path / "ops.daf.zarr/matrices/gene/cell").exists()
        assert not (tmp_path / "ops.daf.zarr/vectors/cell").exists()
        assert daf.matrices("gene", "gene") == {"sq"}
        daf.add_axis("gene", ["p"], overwrite=True)
        assert daf.matrices("gene", "gene") == set() and daf.axis_length("gene") == 1
        daf.set_scalar("s", "x")
        daf.set_scalar("s", 2.5, overwrite=True)
        assert daf.get_scalar("s") == 2.5
    with pytest.raises(DafValueError, match="closed"):
        daf.scalars()


def test_empty_axis_and_empty_sparse(tmp_path: Path) -> None:
    with zk.daf.open(str(tmp_path / "empty.daf.zarr"), "w") as daf:
        daf.add_axis("none", [])
        daf.add_axis("gene", ["x"])
        daf.set_vector("none", "v", np.zeros(0, dtype=np.float32))
        daf.set_matrix("none", "gene", "m", np.zeros((0, 1)))
        daf.set_matrix("gene", "gene", "s", sp.csc_matrix((1, 1), dtype=np.float64))
    with zk.daf.open(str(tmp_path / "empty.daf.zarr")) as daf:
        assert daf.axis_length("none") == 0
        assert_same(daf.get_vector("none", "v"), np.zeros(0, dtype=np.float32))
        assert_same(daf.get_matrix("none", "gene", "m"), np.zeros((0, 1)))
        assert_same(daf.get_matrix("gene", "gene", "s"), sp.csc_matrix((1, 1)))


def test_description(tmp_path: Path) -> None:
    with zk.daf.open(str(tmp_path / "d.daf.zarr"), "w", name="described") as daf:
        daf.set_scalar("version", "1.0")
        daf.add_axis("cell", ["a", "b"])
        daf.add_axis("gene", ["x"])
        daf.set_vector("cell", "v", sp.coo_array(np.array([0.0, 1.0])))
        daf.set_matrix("cell", "gene", "m", np.ones((2, 1), dtype=np.float32))
        text = daf.description()
    assert text.splitlines()[0] == "name: described"
    assert "format: zarr v3" in text and 'version: "1.0"' in text
    assert "cell: 2 entries" in text
    assert "v: 2 x float64 (sparse, nnz 1, 50%)" in text
    assert "cell,gene:\n    m: 2 x 1 x float32 (dense)" in text
    assert "gene,cell:\n    m: 1 x 2 x float32 (dense)" in text


# --- round trips of arbitrary values ---------------------------------------------------------

DTYPES = ["bool", "int8", "uint16", "int32", "uint64", "float32", "float64"]


@st.composite
def properties(draw: st.DrawFn) -> tuple[int, int, np.ndarray[Any, Any], Any]:
    rows = draw(st.integers(1, 6))
    columns = draw(st.integers(1, 6))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        vector = rng.random(rows) > 0.5
        matrix = rng.random((rows, columns)) > 0.6
    elif dtype.kind == "f":
        vector = rng.normal(size=rows).astype(dtype)
        matrix = (rng.normal(size=(rows, columns)) * (rng.random((rows, columns)) > 0.6)
                  ).astype(dtype)
    else:
        info = np.iinfo(dtype)
        vector = rng.integers(info.min, info.max, size=rows, dtype=dtype, endpoint=True)
        matrix = (rng.integers(0, 100, size=(rows, columns)) * (
            rng.random((rows, columns)) > 0.6)).astype(dtype)
    sparse = draw(st.booleans())
    return rows, columns, vector, sp.csc_matrix(matrix) if sparse else matrix


@settings(max_examples=12, deadline=None)
@given(value=properties(), zarr_format=st.sampled_from([2, 3]))
def test_round_trip_property(value: tuple[int, int, np.ndarray[Any, Any], Any],
                             zarr_format: int) -> None:
    rows, columns, vector, matrix = value
    with zk.daf.open(zk.MemoryStore(), "w", zarr_format=zarr_format) as daf:
        daf.add_axis("r", [f"r{i}" for i in range(rows)])
        daf.add_axis("c", [f"c{i}" for i in range(columns)])
        daf.set_vector("r", "v", vector)
        daf.set_matrix("r", "c", "m", matrix)
        assert_same(daf.get_vector("r", "v"), vector)
        assert_same(daf.get_matrix("r", "c", "m"), matrix)
        expected_flipped = sp.csc_matrix(matrix.T) if sp.issparse(matrix) else matrix.T
        assert_same(daf.get_matrix("c", "r", "m", relayout=False), expected_flipped)


# --- AnnData ---------------------------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_anndata_round_trip(tmp_path: Path, zarr_format: int) -> None:
    import anndata
    import pandas as pd

    rng = _rng()
    obs = pd.DataFrame({"batch": pd.Categorical(["a", "b", "a", "c"]),
                        "depth": rng.normal(size=4), "ok": [True, False, True, True],
                        "count": np.arange(4, dtype=np.int32)},
                       index=["c1", "c2", "c3", "c4"])
    var = pd.DataFrame({"symbol": ["S1", "S2", "S3"]}, index=["g1", "g2", "g3"])
    adata = anndata.AnnData(
        X=sp.random(4, 3, density=0.5, random_state=2, format="csr", dtype=np.float32),
        obs=obs, var=var, layers={"raw": rng.integers(0, 9, (4, 3)).astype(np.int64)},
        obsp={"distances": sp.random(4, 4, density=0.3, random_state=5, format="csr")},
        uns={"organism": "mouse", "release": 3, "nested": {"no": "daf form"}})
    obsm = adata.obsm
    obsm["pca"] = np.zeros((4, 2))
    path = str(tmp_path / "from_anndata.daf.zarr")
    with pytest.warns(UserWarning) as warned:
        zk.daf.from_anndata(adata, path, obs_axis="cell", var_axis="gene", x_name="UMIs",
                            zarr_format=zarr_format).close()
    assert {"uns['nested']", "obsm['pca']"} <= {
        str(w.message).split(" ")[0] for w in warned}
    with zk.daf.open(path) as daf:
        assert daf.axis_vector("cell").tolist() == ["c1", "c2", "c3", "c4"]
        assert daf.get_vector("cell", "batch").tolist() == ["a", "b", "a", "c"]
        assert_same(daf.get_matrix("cell", "gene", "UMIs"), sp.csc_matrix(adata.X))
        back = zk.daf.to_anndata(daf, "cell", "gene", x_name="UMIs")
    assert list(back.obs_names) == list(adata.obs_names)
    assert list(back.var_names) == list(adata.var_names)
    assert sp.issparse(back.X)
    np.testing.assert_array_equal(back.X.toarray(), adata.X.toarray())
    np.testing.assert_array_equal(back.layers["raw"], adata.layers["raw"])
    np.testing.assert_array_equal(back.obsp["distances"].toarray(),
                                  adata.obsp["distances"].toarray())
    np.testing.assert_array_equal(back.obs["depth"], obs["depth"])
    assert back.obs["count"].dtype == np.int32
    assert back.obs["ok"].tolist() == [True, False, True, True]
    assert back.obs["batch"].tolist() == ["a", "b", "a", "c"]
    assert back.var["symbol"].tolist() == ["S1", "S2", "S3"]
    assert back.uns["organism"] == "mouse" and back.uns["release"] == 3
    assert back.layers["raw"].flags.writeable  # copies by default


def test_anndata_unsupported_can_be_an_error() -> None:
    import anndata

    adata = anndata.AnnData(X=np.ones((1, 1)), uns={"nested": {"a": 1}})
    with pytest.raises(DafValueError, match="uns\\['nested'\\]"):
        zk.daf.from_anndata(adata, zk.MemoryStore(), unsupported="error")


def test_zipped_directory_is_appended_to_without_its_snapshot(tmp_path: Path) -> None:
    """A ZIP of a directory data set carries the inline snapshot; the first writable open
    drops it (an append-only archive would grow a root zarr.json per change)."""
    directory = tmp_path / "d.daf.zarr"
    small_data_set(str(directory))
    archive = tmp_path / "d.daf.zarr.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for file in sorted(directory.rglob("*")):
            if file.is_file():
                out.write(file, file.relative_to(directory).as_posix())
    with zk.daf.open(str(archive)) as daf:  # read as it is
        assert daf.get_scalar("version") == "1.0"
    assert "consolidated_metadata" in json.loads(zipfile.ZipFile(archive).read("zarr.json"))
    with zk.daf.open(str(archive), "r+") as daf:
        daf.set_scalar("more", 1)
    root = json.loads(zipfile.ZipFile(archive).read("zarr.json"))
    assert "consolidated_metadata" not in root and root["attributes"] == {"daf": [1, 0]}
    with zk.daf.open(str(archive)) as daf:
        assert daf.scalars() == {"version", "more"}


def test_writable_open_adds_missing_consolidated_metadata(tmp_path: Path) -> None:
    root = tmp_path / "bare.daf.zarr"
    build_julia_directory(root, consolidated=False)
    with zk.daf.open(str(root)):  # mode "r" writes nothing
        pass
    assert "consolidated_metadata" not in json.loads((root / "zarr.json").read_text())
    with zk.daf.open(str(root), "r+"):
        pass
    inline = json.loads((root / "zarr.json").read_text())["consolidated_metadata"]
    assert "vectors/big/values" in inline["metadata"]


def test_dense_use_needs_neither_scipy_nor_anndata(tmp_path: Path) -> None:
    """With scipy and anndata unimportable, dense properties work and sparse ones (and the
    AnnData conversion) fail with MissingDependencyError."""
    path = str(tmp_path / "dense.daf.zarr")
    with zk.daf.open(path, "w") as daf:
        daf.add_axis("cell", ["a", "b"])
        daf.set_vector("cell", "sparse", sp.coo_array(np.array([0.0, 1.0])))
    code = textwrap.dedent(f"""
        import sys
        for name in ("scipy", "scipy.sparse", "anndata"):
            sys.modules[name] = None  # import fails
        import numpy as np
        import zarrkit as zk
        from zarrkit.errors import MissingDependencyError
        with zk.daf.open({path!r}, "r+") as daf:
            daf.set_vector("cell", "dense", np.array([1.5, 2.5]))
            assert daf.get_vector("cell", "dense").tolist() == [1.5, 2.5]
            try:
                daf.get_vector("cell", "sparse")
            except MissingDependencyError as e:
                assert "scipy" in str(e)
            else:
                raise AssertionError("no error")
            try:
                zk.daf.to_anndata(daf, "cell", "cell")
            except MissingDependencyError as e:
                assert "anndata" in str(e)
            else:
                raise AssertionError("no error")
        assert "scipy" not in [m for m in sys.modules if sys.modules[m] is not None]
    """)
    environment = {**os.environ, "PYTHONPATH": str(SRC)}
    subprocess.run([sys.executable, "-c", code], env=environment, timeout=120, check=True)


def test_stored_axis_with_a_repeated_entry_is_refused(tmp_path: Path) -> None:
    # A file written by something other than a Daf library: entries must be unique.
    path = str(tmp_path / "dup.daf.zarr")
    with zk.daf.open(path, "w") as daf:
        daf.add_axis("cell", ["a", "b", "c"])
    root = zk.open_group(path, mode="r+")
    root["axes"].create_array("cell", shape=(3,), dtype=str, overwrite=True)[:] = np.array(
        ["a", "b", "a"], dtype=object)
    with zk.daf.open(path) as daf:
        assert daf.axis_entries("cell").tolist() == ["a", "b", "a"]
        with pytest.raises(ChunkDecodeError, match="entry 'a' appears more than once"):
            daf.axis_dict("cell")
        with pytest.raises(ChunkDecodeError, match="more than once"):
            daf.axis_indices("cell", ["b"])
