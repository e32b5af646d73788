"""Independent oracle for ``zarrkit.daf``: the on-disk layout of DataAxesFormats.jl.

The data sets read here are written by hand with ``json``, ``numpy`` and ``pathlib`` only
(no zarrkit, no zarr-python) from the documented rules: issue 12 ("Layout"),
``shared/seeds/daf-zarr-format.txt`` (the v2 layout), the Zarr v3 specification in
``shared/specs`` (``bytes``, ``vlen-utf8``, ``sharding_indexed``, ``blosc``, ``crc32c``, the
default chunk key encoding) and zarr-python's inline consolidated metadata.  What zarrkit
writes is inspected the same way, with ``json``, ``numpy`` and ``zipfile`` only.

Rules taken from DataAxesFormats.jl's public source (``src/zarr_format.jl``, 0.3) where the
issue is silent:

* the v3 marker is the root group attribute ``daf: [1, 0]``; a version with another major or
  a higher minor is refused naming the found version (``2.0``), the supported one (``1.0``)
  and the path; a marker that is not a 2-element list is "malformed"; no marker is "not a
  daf data set";
* packed properties are one shard per property at ``c/0`` (``c/0/0``), index at the start
  (``bytes`` + ``crc32c``), inner ``bytes`` + ``blosc`` zstd bitshuffle; the inner chunk
  shape need not divide the array (a 1200-element vector gets 1024-element inner chunks,
  the last one padded with the fill value); for a dense matrix an inner chunk is 8 KiB of
  one Daf column, in its relayout a whole column; every component of a sparse property is
  packed on its own (``src/packed_format.jl`` ``chunks_for``, ``src/zarr_format.jl``
  ``dense_zcreate`` / ``format_relayout_matrix!``);
* the shard bytes are also a ZIP archive (``indexed+zipped``, ``IncrementalShardWriter`` in
  ``src/packed_format.jl``, records of ``src/mmap_zip_store.jl``): a local header before
  each chunk (so the index offsets skip it), a ``codec.json`` member, the central
  directory and ZIP64 end records after the last chunk (see ``shard_bytes`` below);
* scalars are shape ``[1]`` arrays; Zarr.jl writes no all-fill chunk, so a zero scalar or
  an all-zero property has no chunk file;
* Zarr.jl's v2 dense properties use ``dimension_separator: "/"`` and fill value ``null``.
"""

from __future__ import annotations

import gc
import io
import json
import math
import os
import re
import struct
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import crc32c
import numcodecs
import numpy as np
import pytest
import scipy.sparse as sp

from zarrkit import daf as zdaf
from zarrkit import errors as zk_errors

SEP_SLASH = {"name": "default", "configuration": {"separator": "/"}}
BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}
EMPTY_CHUNK = 2**64 - 1

# --------------------------------------------------------------------------------------
# Encoding helpers (no zarr library involved)
# --------------------------------------------------------------------------------------


def vlen_utf8_encode(values: Iterable[str]) -> bytes:
    """numcodecs VLenUTF8: u32 LE item count, then per item u32 LE length + UTF-8 bytes."""
    items = [v.encode("utf-8") for v in values]
    out = bytearray(struct.pack("<I", len(items)))
    for item in items:
        out += struct.pack("<I", len(item)) + item
    return bytes(out)


def vlen_utf8_decode(data: bytes) -> list[str]:
    (count,) = struct.unpack_from("<I", data, 0)
    pos = 4
    out: list[str] = []
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, pos)
        pos += 4
        out.append(data[pos : pos + n].decode("utf-8"))
        pos += n
    assert pos == len(data), "trailing bytes after the vlen-utf8 items"
    return out


def le_bytes(data: np.ndarray) -> bytes:
    """The raw little-endian C-order image of ``data``."""
    return np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<")).tobytes()


def ondisk_matrix(matrix: np.ndarray) -> np.ndarray:
    """The on-disk (reversed shape, C order) view of a Daf (rows, columns) matrix: its
    C-order bytes are the column-major bytes of ``matrix``."""
    result = np.asfortranarray(matrix).T
    assert le_bytes(result) == np.asarray(matrix).astype(matrix.dtype.newbyteorder("<")).tobytes(
        order="F"
    )
    return result


def v3_fill(dtype: np.dtype) -> Any:
    if dtype.kind == "b":
        return False
    if dtype.kind == "f":
        return 0.0
    return 0


def write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2))


def write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


# --------------------------------------------------------------------------------------
# Zarr v3 hand-built Julia layout
# --------------------------------------------------------------------------------------


def v3_group(root: Path, rel: str) -> None:
    write_json(root / rel / "zarr.json", {"zarr_format": 3, "node_type": "group"})


def v3_array_meta(shape: tuple[int, ...], data_type: str, fill: Any, codecs: list[Any]) -> dict:
    return {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape),
        "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shape)}},
        "chunk_key_encoding": SEP_SLASH,
        "fill_value": fill,
        "codecs": codecs,
    }


def chunk_key_v3(ndim: int) -> str:
    return "c/" + "/".join(["0"] * ndim)


def v3_numeric(root: Path, rel: str, ondisk: np.ndarray, *, write_chunk: bool = True) -> None:
    """A flat Julia array: one uncompressed little-endian chunk covering the array."""
    meta = v3_array_meta(ondisk.shape, ondisk.dtype.name, v3_fill(ondisk.dtype), [BYTES_LE])
    write_json(root / rel / "zarr.json", meta)
    if write_chunk:
        write_bytes(root / rel / chunk_key_v3(ondisk.ndim), le_bytes(ondisk))


def v3_strings(root: Path, rel: str, values: list[str], *, write_chunk: bool = True) -> None:
    meta = v3_array_meta((len(values),), "string", "", [{"name": "vlen-utf8"}])
    write_json(root / rel / "zarr.json", meta)
    if write_chunk:
        write_bytes(root / rel / "c/0", vlen_utf8_encode(values))


# The ZIP side of Julia's "indexed+zipped" shards (IncrementalShardWriter in
# DataAxesFormats.jl's src/packed_format.jl, records from src/mmap_zip_store.jl): STORED
# members, every record with a ZIP64 extra field and 0xFFFFFFFF in the fixed size/offset
# fields, version needed 4.5, UTF-8 flag, DOS time 0 / date 1980-01-01, made by Unix 3.0,
# mode 0o100644, no alignment padding, no data descriptor, no comment.
ZIP_MADE_BY = 0x031E
ZIP_VERSION = 45
ZIP_UTF8 = 0x0800
ZIP_DATE = 0x0021
ZIP_MODE = 0o100644 << 16
ZIP_SAT = 0xFFFFFFFF


def zip_local_header(name: bytes, size: int, crc: int) -> bytes:
    return (
        struct.pack("<IHHHHHIIIHH", 0x04034B50, ZIP_VERSION, ZIP_UTF8, 0, 0, ZIP_DATE, crc,
                    ZIP_SAT, ZIP_SAT, len(name), 20)
        + name
        + struct.pack("<HHQQ", 1, 16, size, size)
    )


def zip_central_header(name: bytes, size: int, crc: int, header_offset: int) -> bytes:
    return (
        struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, ZIP_MADE_BY, ZIP_VERSION, ZIP_UTF8, 0,
                    0, ZIP_DATE, crc, ZIP_SAT, ZIP_SAT, len(name), 28, 0, 0, 0, ZIP_MODE,
                    ZIP_SAT)
        + name
        + struct.pack("<HHQQQ", 1, 24, size, size, header_offset)
    )


def zip_end_records(count: int, cd_offset: int, cd_size: int) -> bytes:
    return (
        struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, ZIP_MADE_BY, ZIP_VERSION, 0, 0, count,
                    count, cd_size, cd_offset)
        + struct.pack("<IIQI", 0x07064B50, 0, cd_offset + cd_size, 1)
        + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, ZIP_SAT, ZIP_SAT, 0)
    )


def julia_inner_codecs(dtype: np.dtype) -> list[dict]:
    """The inner codecs of a packed property: bytes (vlen-utf8 for strings), then blosc
    zstd bitshuffle level 5 whose typesize names the element size (1 for strings)."""
    is_string = dtype.kind == "O"
    return [
        {"name": "vlen-utf8", "configuration": {}} if is_string else BYTES_LE,
        {
            "name": "blosc",
            "configuration": {
                "cname": "zstd",
                "clevel": 5,
                "shuffle": "bitshuffle",
                "typesize": 1 if is_string else dtype.itemsize,
                "blocksize": 0,
            },
        },
    ]


def julia_chunk_name(coords: tuple[int, ...], grid: tuple[int, ...]) -> bytes:
    """``c/<i>/<j>``, each coordinate zero-padded to ``ndigits(n - 1)`` (Julia's
    inner_chunk_name_bytes, dimensions reversed into Zarr order)."""
    return ("c/" + "/".join(str(c).zfill(len(str(n - 1))) for c, n in zip(coords, grid,
                                                                          strict=True))).encode()


def shard_bytes(
    ondisk: np.ndarray,
    inner: tuple[int, ...],
    *,
    empty_chunks: Iterable[int] = (),
    zip_framing: bool = True,
) -> bytes:
    """A ``sharding_indexed`` shard with the index at the start (``bytes`` + ``crc32c``),
    inner chunks ``bytes`` (``vlen-utf8``) + ``blosc`` zstd bitshuffle, in C order of the
    inner chunk grid, those reaching past the array padded with the fill value (0, "").

    With ``zip_framing`` the shard is Julia's "indexed+zipped" dual format: before each
    chunk a ZIP local header (member ``c/<i>[/<j>]``, the chunk's blosc frame STORED), after
    the last one a STORED ``codec.json`` member (the inner codecs, compact JSON, sorted
    keys), the central directory (chunks, then codec.json) and the ZIP64 end records; the
    index offsets point past the local headers.  Zarr.jl hands blosc the chunk's bytes,
    so the frames have a blosc type size of 1.  An inner chunk in ``empty_chunks`` is not
    stored (index entry 2**64-1 twice, no member), as Julia's writer would elide it."""
    blosc = numcodecs.Blosc(cname="zstd", clevel=5, shuffle=numcodecs.Blosc.BITSHUFFLE,
                            blocksize=0)
    is_string = ondisk.dtype.kind == "O"
    grid = tuple(-(-s // c) for s, c in zip(ondisk.shape, inner, strict=True))
    n_chunks = math.prod(grid)
    index_size = 16 * n_chunks + 4
    empty = set(empty_chunks)
    body = bytearray()
    entries: list[tuple[int, int]] = []
    members: list[tuple[bytes, int, int, int]] = []  # name, size, crc, header offset

    def add_member(name: bytes, data: bytes) -> int:
        crc = zlib.crc32(data)
        header_offset = index_size + len(body)
        members.append((name, len(data), crc, header_offset))
        body.extend(zip_local_header(name, len(data), crc))
        data_offset = index_size + len(body)
        body.extend(data)
        return data_offset

    for k, idx in enumerate(np.ndindex(*grid)):
        if k in empty:
            entries.append((EMPTY_CHUNK, EMPTY_CHUNK))
            continue
        region = tuple(
            slice(i * c, min((i + 1) * c, s))
            for i, c, s in zip(idx, inner, ondisk.shape, strict=True)
        )
        part = ondisk[region]
        if is_string:
            block = np.full(inner, "", dtype=object)
            block[tuple(slice(0, p) for p in part.shape)] = part
            raw = vlen_utf8_encode(block.ravel().tolist())
        else:
            block = np.zeros(inner, dtype=ondisk.dtype.newbyteorder("<"))
            block[tuple(slice(0, p) for p in part.shape)] = part
            raw = le_bytes(block)
        encoded = bytes(blosc.encode(np.frombuffer(raw, dtype="u1")))
        if zip_framing:
            entries.append((add_member(julia_chunk_name(idx, grid), encoded), len(encoded)))
        else:
            entries.append((index_size + len(body), len(encoded)))
            body += encoded
    if zip_framing:
        codecs = julia_inner_codecs(ondisk.dtype)
        add_member(b"codec.json", json.dumps(codecs, sort_keys=True,
                                             separators=(",", ":")).encode())
        cd_offset = index_size + len(body)
        directory = b"".join(zip_central_header(*member) for member in members)
        body += directory + zip_end_records(len(members), cd_offset, len(directory))
    index = np.array(entries, dtype="<u8").tobytes()
    index += struct.pack("<I", crc32c.crc32c(index))
    assert len(index) == index_size
    return index + bytes(body)


def packed_meta(ondisk: np.ndarray, inner: tuple[int, ...]) -> dict:
    """The zarr.json of a packed array exactly as Julia writes it: one shard of exactly
    the array's shape (even when the inner chunk does not divide it)."""
    is_string = ondisk.dtype.kind == "O"
    meta = v3_array_meta(
        ondisk.shape,
        "string" if is_string else ondisk.dtype.name,
        "" if is_string else v3_fill(ondisk.dtype),
        [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": list(inner),
                    "codecs": julia_inner_codecs(ondisk.dtype),
                    "index_codecs": [BYTES_LE, {"name": "crc32c"}],
                    "index_location": "start",
                },
            }
        ],
    )
    meta["attributes"] = {"daf_packed_format": "indexed+zipped"}
    return meta


def v3_packed(root: Path, rel: str, ondisk: np.ndarray, inner: tuple[int, ...], **kw: Any) -> None:
    write_json(root / rel / "zarr.json", packed_meta(ondisk, inner))
    write_bytes(root / rel / chunk_key_v3(ondisk.ndim), shard_bytes(ondisk, inner, **kw))


def v3_sparse_vector(
    root: Path, rel: str, dense: np.ndarray, index_dtype: str, *, omit_nzval: bool = False
) -> None:
    v3_group(root, rel)
    nz = np.flatnonzero(dense)
    v3_numeric(root, f"{rel}/nzind", (nz + 1).astype(index_dtype))
    if not omit_nzval:
        v3_numeric(root, f"{rel}/nzval", dense[nz])


def csc_parts(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr, indices, data), 0-based, of a Julia SparseMatrixCSC of ``matrix``."""
    indptr = [0]
    indices: list[int] = []
    data: list[Any] = []
    for j in range(matrix.shape[1]):
        rows = np.flatnonzero(matrix[:, j])
        indices.extend(rows.tolist())
        data.extend(matrix[rows, j].tolist())
        indptr.append(len(indices))
    return np.array(indptr), np.array(indices, dtype=np.int64), np.array(data, dtype=matrix.dtype)


def v3_sparse_matrix(
    root: Path,
    rel: str,
    matrix: np.ndarray,
    colptr_dtype: str,
    rowval_dtype: str,
    *,
    omit_nzval: bool = False,
) -> None:
    v3_group(root, rel)
    indptr, indices, data = csc_parts(matrix)
    v3_numeric(root, f"{rel}/colptr", (indptr + 1).astype(colptr_dtype))
    v3_numeric(root, f"{rel}/rowval", (indices + 1).astype(rowval_dtype))
    if not omit_nzval:
        v3_numeric(root, f"{rel}/nzval", data)


def v3_consolidated(root: Path) -> dict:
    metadata: dict[str, Any] = {}
    for path in sorted(root.rglob("zarr.json")):
        rel = path.parent.relative_to(root).as_posix()
        if rel != ".":
            metadata[rel] = json.loads(path.read_text())
    return {"kind": "inline", "must_understand": False, "metadata": metadata}


def v3_root(root: Path, daf_marker: Any, *, consolidated: bool) -> None:
    """The root group, written last (its consolidated metadata lists every node)."""
    meta: dict[str, Any] = {"zarr_format": 3, "node_type": "group"}
    if daf_marker is not None:
        meta["attributes"] = {"daf": daf_marker}
    if consolidated:
        meta["consolidated_metadata"] = v3_consolidated(root)
    write_json(root / "zarr.json", meta)


# --------------------------------------------------------------------------------------
# Expected contents and the check of what zarrkit.daf reads
# --------------------------------------------------------------------------------------


@dataclass
class Expected:
    name: str | None = None
    scalars: dict[str, Any] = field(default_factory=dict)  # name -> np scalar or str
    axes: dict[str, list[str]] = field(default_factory=dict)
    vectors: dict[tuple[str, str], Any] = field(default_factory=dict)  # ndarray or list[str]
    matrices: dict[tuple[str, str, str], tuple[np.ndarray, bool]] = field(default_factory=dict)


CELLS = ["c1", "c2", "Zellé", "c4", "c5", "日本"]
GENES = ["g1", "g2", "g3", "g4"]

SCALAR_VALUES: dict[str, Any] = {
    "b": np.bool_(True),
    "i8": np.int8(-7),
    "i16": np.int16(-300),
    "i32": np.int32(-70000),
    "i64": np.int64(-(2**40) - 3),
    "u8": np.uint8(250),
    "u16": np.uint16(65000),
    "u32": np.uint32(4_000_000_001),
    "u64": np.uint64(2**64 - 2),
    "f32": np.float32(-1.5),
    "f64": np.float64(3.25e10),
    "s": "Zürich ☃",
}


def build_julia_v3(root: Path, *, consolidated: bool) -> Expected:
    """A v3 Daf directory exactly as DataAxesFormats.jl 0.3 lays it out."""
    exp = Expected(name="julia_built")
    for g in ("scalars", "axes", "vectors", "matrices"):
        v3_group(root, g)

    # scalars: single-element arrays of every type; zero / "" scalars have no chunk file
    for name, value in SCALAR_VALUES.items():
        if isinstance(value, str):
            v3_strings(root, f"scalars/{name}", [value])
        else:
            v3_numeric(root, f"scalars/{name}", np.array([value]))
        exp.scalars[name] = value
    v3_strings(root, "scalars/name", ["julia_built"])
    exp.scalars["name"] = "julia_built"
    v3_numeric(root, "scalars/zero", np.array([0], dtype=np.int32), write_chunk=False)
    exp.scalars["zero"] = np.int32(0)
    v3_strings(root, "scalars/empty", [""], write_chunk=False)
    exp.scalars["empty"] = ""

    # axes, and vectors/<axis>, matrices/<a>/<b> for every pair (incl. <a>/<a>)
    exp.axes = {"cell": CELLS, "gene": GENES}
    for axis, entries in exp.axes.items():
        v3_strings(root, f"axes/{axis}", entries)
        v3_group(root, f"vectors/{axis}")
        v3_group(root, f"matrices/{axis}")
    for a in exp.axes:
        for b in exp.axes:
            v3_group(root, f"matrices/{a}/{b}")

    # dense vectors
    dense_vectors: dict[tuple[str, str], np.ndarray] = {
        ("cell", "age"): np.array([3, -1, 400, 7, 0, 12], dtype=np.int16),
        ("cell", "score"): np.array([0.5, -1.25, 3e-7, 0.0, 1e300, -0.0], dtype=np.float64),
        ("cell", "flag"): np.array([True, False, True, True, False, False]),
        ("cell", "big"): np.array([2**63 + 1, 0, 1, 2, 3, 2**64 - 1], dtype=np.uint64),
        ("gene", "weight"): np.array([1.5, 0.0, -2.25, 8.0], dtype=np.float32),
        ("gene", "is_marker"): np.array([False, True, False, True]),
        ("gene", "tiny"): np.array([-128, 127, 0, 5], dtype=np.int8),
    }
    for (axis, name), values in dense_vectors.items():
        v3_numeric(root, f"vectors/{axis}/{name}", values)
        exp.vectors[(axis, name)] = values
    v3_strings(root, "vectors/cell/label", ["a", "ü", "", "b", "日本語", "d"])
    exp.vectors[("cell", "label")] = ["a", "ü", "", "b", "日本語", "d"]

    # all-fill dense vectors: no chunk file
    v3_numeric(root, "vectors/cell/zeros", np.zeros(6, dtype=np.float32), write_chunk=False)
    exp.vectors[("cell", "zeros")] = np.zeros(6, dtype=np.float32)
    v3_strings(root, "vectors/gene/blank", [""] * 4, write_chunk=False)
    exp.vectors[("gene", "blank")] = [""] * 4

    # sparse vectors (1-based nzind of several integer types)
    sparse_vectors: list[tuple[str, str, np.ndarray, str]] = [
        ("cell", "sv_f64_i64", np.array([0, 1.5, 0, 0, -2.0, 0]), "int64"),
        ("cell", "sv_i32_i32", np.array([-4, 0, 0, 9, 0, 0], dtype=np.int32), "int32"),
        ("cell", "sv_u8_u32", np.array([0, 0, 0, 0, 0, 200], dtype=np.uint8), "uint32"),
        ("gene", "sv_f32_u64", np.array([0, 0.25, 0, 1], dtype=np.float32), "uint64"),
        ("gene", "sv_i64_u16", np.array([5, 0, -6, 0], dtype=np.int64), "uint16"),
    ]
    for axis, name, values, index_dtype in sparse_vectors:
        v3_sparse_vector(root, f"vectors/{axis}/{name}", values, index_dtype)
        exp.vectors[(axis, name)] = values
    marker = np.array([False, True, False, False, True, True])
    v3_sparse_vector(root, "vectors/cell/marker", marker, "int64", omit_nzval=True)
    exp.vectors[("cell", "marker")] = marker

    # packed vector (inner chunks divide the array) and a packed matrix (inner = one column)
    packed = np.array([1.0, -2.5, 3.25, 0.0, 5e-3, 6e6])
    v3_packed(root, "vectors/cell/packed", packed, (3,))
    exp.vectors[("cell", "packed")] = packed

    # dense matrices (Daf orientation) stored reversed, column-major bytes
    rng = np.random.default_rng(12)
    fraction = rng.random((6, 4)).astype(np.float32)
    corr = np.arange(16, dtype=np.float64).reshape(4, 4) * 0.5 - 3.0  # not symmetric
    adj = rng.random((6, 6)) < 0.4
    adj[0, 1], adj[1, 0] = True, False  # not symmetric
    counts = np.arange(24, dtype=np.int32).reshape(4, 6) - 10
    for (rows, cols, name), matrix in {
        ("cell", "gene", "fraction"): fraction,
        ("gene", "gene", "corr"): corr,
        ("cell", "cell", "adj"): adj,
        ("gene", "cell", "counts"): counts,
    }.items():
        v3_numeric(root, f"matrices/{rows}/{cols}/{name}", ondisk_matrix(matrix))
        exp.matrices[(rows, cols, name)] = (matrix, False)
    v3_numeric(
        root, "matrices/gene/cell/empty", np.zeros((6, 4), dtype=np.int64), write_chunk=False
    )
    exp.matrices[("gene", "cell", "empty")] = (np.zeros((4, 6), dtype=np.int64), False)

    packed_m = (np.arange(24, dtype=np.float32).reshape(6, 4) - 5) / 4
    v3_packed(root, "matrices/cell/gene/packed_m", ondisk_matrix(packed_m), (1, 6))
    exp.matrices[("cell", "gene", "packed_m")] = (packed_m, False)

    # sparse matrices (SparseMatrixCSC, 1-based), an empty column included
    umis = np.zeros((6, 4))
    umis[0, 0], umis[3, 0], umis[5, 2], umis[1, 3], umis[2, 3] = 1, 7.5, -2, 3, 1e-3
    v3_sparse_matrix(root, "matrices/cell/gene/umis", umis, "int64", "int64")
    exp.matrices[("cell", "gene", "umis")] = (umis, True)
    small = np.zeros((4, 4), dtype=np.uint16)
    small[1, 0], small[3, 0], small[0, 3] = 65535, 2, 9
    v3_sparse_matrix(root, "matrices/gene/gene/small", small, "int32", "uint32")
    exp.matrices[("gene", "gene", "small")] = (small, True)
    links = np.zeros((4, 6), dtype=bool)
    links[0, 0] = links[3, 0] = links[2, 4] = links[1, 5] = True
    v3_sparse_matrix(root, "matrices/gene/cell/links", links, "uint64", "int32", omit_nzval=True)
    exp.matrices[("gene", "cell", "links")] = (links, True)

    v3_root(root, [1, 0], consolidated=consolidated)
    return exp


def dense_vector(value: Any) -> np.ndarray:
    if sp.issparse(value):
        return np.asarray(value.toarray()).reshape(-1)
    return np.asarray(value)


def check_scalar(got: Any, expected: Any) -> None:
    if isinstance(expected, str):
        assert isinstance(got, str)
        assert got == expected
        return
    if isinstance(got, np.generic | np.ndarray):
        assert np.asarray(got).dtype == np.asarray(expected).dtype, (got, expected)
    else:
        assert isinstance(got, bool | int | float)
        assert type(got) is (bool if expected.dtype.kind == "b" else type(expected.item()))
    assert got == expected.item()


def check_vector(got: Any, expected: Any, length: int) -> None:
    if isinstance(expected, list):
        values = [str(x) for x in np.asarray(got, dtype=object).tolist()]
        assert len(values) == length
        assert values == expected
        return
    dense = dense_vector(got)
    assert dense.shape == (length,)
    assert dense.dtype == expected.dtype, (dense.dtype, expected.dtype)
    np.testing.assert_array_equal(dense, expected)


def check_matrix(got: Any, expected: np.ndarray, is_sparse: bool) -> None:
    if is_sparse:
        assert isinstance(got, sp.csc_matrix), type(got)
        assert got.shape == expected.shape
        assert got.dtype == expected.dtype
        indptr, indices, data = csc_parts(expected)
        np.testing.assert_array_equal(got.indptr, indptr)
        np.testing.assert_array_equal(got.indices, indices)
        np.testing.assert_array_equal(got.data, data)
        np.testing.assert_array_equal(got.toarray(), expected)
    else:
        assert isinstance(got, np.ndarray), type(got)
        assert got.shape == expected.shape
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def check_daf(d: Any, exp: Expected) -> None:
    """Every value of ``exp`` read through the zarrkit.daf API."""
    if exp.name is not None:
        assert str(d.name).startswith(exp.name)
    assert set(d.scalars()) == set(exp.scalars)
    for name, value in exp.scalars.items():
        assert d.has_scalar(name)
        check_scalar(d.get_scalar(name), value)
    assert not d.has_scalar("no_such_scalar")
    assert d.get_scalar("no_such_scalar", default=17) == 17

    assert set(d.axes()) == set(exp.axes)
    for axis, entries in exp.axes.items():
        assert d.has_axis(axis)
        assert d.axis_length(axis) == len(entries)
        assert [str(x) for x in d.axis_entries(axis)] == entries
        assert dict(d.axis_dict(axis)) == {e: i for i, e in enumerate(entries)}
        picked = [entries[-1], entries[0]]
        assert [int(i) for i in d.axis_indices(axis, picked)] == [len(entries) - 1, 0]
    assert not d.has_axis("no_such_axis")

    for axis in exp.axes:
        names = {n for (a, n) in exp.vectors if a == axis}
        assert set(d.vectors(axis)) == names
        for name in names:
            assert d.has_vector(axis, name)
            check_vector(d.get_vector(axis, name), exp.vectors[(axis, name)], len(exp.axes[axis]))
        assert not d.has_vector(axis, "no_such_vector")

    for rows in exp.axes:
        for cols in exp.axes:
            here = {n for (r, c, n) in exp.matrices if (r, c) == (rows, cols)}
            flipped = {n for (r, c, n) in exp.matrices if (c, r) == (rows, cols)}
            listed = set(d.matrices(rows, cols))
            # matrices(rows, cols) may also list what is stored in the other orientation
            assert here <= listed <= here | flipped, (rows, cols, listed)
            for name in here:
                assert d.has_matrix(rows, cols, name)
                matrix, is_sparse = exp.matrices[(rows, cols, name)]
                check_matrix(d.get_matrix(rows, cols, name), matrix, is_sparse)
            assert not d.has_matrix(rows, cols, "no_such_matrix")


def open_daf(path: Path | str, mode: str = "r", **kw: Any) -> Any:
    return zdaf.open(str(path), mode, **kw)


def close_daf(d: Any) -> None:
    close = getattr(d, "close", None)
    if callable(close):
        close()


# --------------------------------------------------------------------------------------
# 1. A hand-built Julia v3 directory, read by zarrkit.daf
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("consolidated", [True, False], ids=["consolidated", "plain"])
def test_julia_v3_directory_reads_every_value(tmp_path: Path, consolidated: bool) -> None:
    root = tmp_path / "julia.daf.zarr"
    exp = build_julia_v3(root, consolidated=consolidated)
    d = open_daf(root)
    try:
        check_daf(d, exp)
    finally:
        close_daf(d)


@pytest.mark.parametrize("consolidated", [True, False], ids=["consolidated", "plain"])
def test_julia_v3_relayout_on_read(tmp_path: Path, consolidated: bool) -> None:
    """get_matrix(cols, rows, name) of a matrix stored as (rows, cols) gives the transpose
    (relayout=True is the default)."""
    root = tmp_path / "julia.daf.zarr"
    exp = build_julia_v3(root, consolidated=consolidated)
    d = open_daf(root)
    try:
        fraction, _ = exp.matrices[("cell", "gene", "fraction")]
        got = d.get_matrix("gene", "cell", "fraction")
        assert np.asarray(got).shape == (4, 6)
        np.testing.assert_array_equal(np.asarray(got), fraction.T)
        umis, _ = exp.matrices[("cell", "gene", "umis")]
        got_sparse = d.get_matrix("gene", "cell", "umis")
        assert sp.issparse(got_sparse)
        assert got_sparse.shape == (4, 6)
        np.testing.assert_array_equal(got_sparse.toarray(), umis.T)
    finally:
        close_daf(d)


def test_julia_v3_marker_is_plain_json_list(tmp_path: Path) -> None:
    """The hand-built root is what the issue describes: checks the oracle itself."""
    root = tmp_path / "julia.daf.zarr"
    build_julia_v3(root, consolidated=True)
    meta = json.loads((root / "zarr.json").read_text())
    assert meta["attributes"] == {"daf": [1, 0]}
    cm = meta["consolidated_metadata"]
    assert cm["kind"] == "inline" and cm["must_understand"] is False
    assert cm["metadata"]["matrices/gene/gene"] == {"zarr_format": 3, "node_type": "group"}
    assert not (root / "scalars/zero/c").exists()
    assert not (root / "vectors/cell/marker/nzval").exists()
    shard = (root / "vectors/cell/packed/c/0").read_bytes()
    index = shard[:36]
    assert struct.unpack("<I", index[32:])[0] == crc32c.crc32c(index[:32])


@pytest.mark.parametrize("zip_framing", [True, False], ids=["indexed+zipped", "index-only"])
def test_julia_packed_inner_chunk_past_the_end(tmp_path: Path, zip_framing: bool) -> None:
    """Julia's packed writer picks inner chunks that need not divide the array (1024 for
    1200 elements): the last inner chunk is padded with the fill value.  An empty inner
    chunk (offset = nbytes = 2**64-1) reads as the fill value."""
    root = tmp_path / "packed.daf.zarr"
    for g in ("scalars", "axes", "vectors", "matrices"):
        v3_group(root, g)
    cells = [f"c{i}" for i in range(10)]
    v3_strings(root, "axes/cell", cells)
    v3_group(root, "vectors/cell")
    v3_group(root, "matrices/cell")
    v3_group(root, "matrices/cell/cell")
    tail = np.arange(10, dtype=np.int32) * 3 - 7
    v3_packed(root, "vectors/cell/tail", tail, (4,), zip_framing=zip_framing)
    holes = np.array([1.5, 2, 3, 4, 5, 6, 7, 8, 9, 10], dtype=np.float64)
    v3_packed(root, "vectors/cell/holes", holes, (3,), empty_chunks=[1], zip_framing=zip_framing)
    holes_expected = holes.copy()
    holes_expected[3:6] = 0
    v3_root(root, [1, 0], consolidated=True)
    d = open_daf(root)
    try:
        assert set(d.vectors("cell")) == {"tail", "holes"}
        check_vector(d.get_vector("cell", "tail"), tail, 10)
        check_vector(d.get_vector("cell", "holes"), holes_expected, 10)
    finally:
        close_daf(d)


# --------------------------------------------------------------------------------------
# 2. A hand-built v2 directory in the seed's layout
# --------------------------------------------------------------------------------------


def v2_dtype(dtype: np.dtype) -> str:
    return dtype.newbyteorder("<").str if dtype.itemsize > 1 else dtype.str


def v2_group(root: Path, rel: str) -> None:
    write_json(root / rel / ".zgroup", {"zarr_format": 2})


def v2_numeric(
    root: Path, rel: str, ondisk: np.ndarray, *, sep: str = "/", fill: Any = None
) -> None:
    meta = {
        "zarr_format": 2,
        "shape": list(ondisk.shape),
        "chunks": list(ondisk.shape),
        "dtype": v2_dtype(ondisk.dtype),
        "compressor": None,
        "fill_value": fill,
        "filters": None,
        "order": "C",
        "dimension_separator": sep,
    }
    write_json(root / rel / ".zarray", meta)
    write_bytes(root / rel / sep.join(["0"] * ondisk.ndim), le_bytes(ondisk))


def v2_strings(root: Path, rel: str, values: list[str]) -> None:
    meta = {
        "zarr_format": 2,
        "shape": [len(values)],
        "chunks": [len(values)],
        "dtype": "|O",
        "compressor": None,
        "fill_value": None,
        "filters": [{"id": "vlen-utf8"}],
        "order": "C",
        "dimension_separator": "/",
    }
    write_json(root / rel / ".zarray", meta)
    write_bytes(root / rel / "0", vlen_utf8_encode(values))


def v2_consolidate(root: Path) -> None:
    metadata: dict[str, Any] = {}
    for name in (".zgroup", ".zarray", ".zattrs"):
        for path in root.rglob(name):
            metadata[path.relative_to(root).as_posix()] = json.loads(path.read_text())
    metadata = dict(sorted(metadata.items()))
    write_json(root / ".zmetadata", {"zarr_consolidated_format": 1, "metadata": metadata})


def build_seed_v2(root: Path, daf_marker: tuple[int, ...] | None = (1, 0)) -> Expected:
    """A v2 Daf directory as the seed (and Zarr.jl under DataAxesFormats.jl 0.2) lays it out."""
    exp = Expected(name="seed_v2")
    v2_group(root, "")
    if daf_marker is not None:
        v2_numeric(root, "daf", np.array(daf_marker, dtype=np.uint8), sep=".")
    for g in ("scalars", "axes", "vectors", "matrices"):
        v2_group(root, g)
    for name in ("b", "i16", "u64", "f32", "f64"):
        value = SCALAR_VALUES[name]
        v2_numeric(root, f"scalars/{name}", np.array([value]))
        exp.scalars[name] = value
    v2_strings(root, "scalars/s", [SCALAR_VALUES["s"]])
    exp.scalars["s"] = SCALAR_VALUES["s"]
    v2_strings(root, "scalars/name", ["seed_v2"])
    exp.scalars["name"] = "seed_v2"

    exp.axes = {"cell": CELLS, "gene": GENES}
    for axis, entries in exp.axes.items():
        v2_strings(root, f"axes/{axis}", entries)
        v2_group(root, f"vectors/{axis}")
        v2_group(root, f"matrices/{axis}")
    for a in exp.axes:
        for b in exp.axes:
            v2_group(root, f"matrices/{a}/{b}")

    batch = np.array([1, 2, 2, 1, 3, 3], dtype=np.uint32)
    v2_numeric(root, "vectors/cell/batch", batch, fill=0)
    exp.vectors[("cell", "batch")] = batch
    v2_strings(root, "vectors/cell/label", ["x", "y", "ÿ", "", "z", "w"])
    exp.vectors[("cell", "label")] = ["x", "y", "ÿ", "", "z", "w"]
    is_marker = np.array([True, False, False, True])
    v2_numeric(root, "vectors/gene/is_marker", is_marker)
    exp.vectors[("gene", "is_marker")] = is_marker

    sv = np.array([0, 0, 2.5, 0, 0, -1.0])
    v2_group(root, "vectors/cell/sv")
    v2_numeric(root, "vectors/cell/sv/nzind", np.array([3, 6], dtype=np.int32))
    v2_numeric(root, "vectors/cell/sv/nzval", np.array([2.5, -1.0]))
    exp.vectors[("cell", "sv")] = sv
    mark = np.array([False, True, True, False])
    v2_group(root, "vectors/gene/mark")
    v2_numeric(root, "vectors/gene/mark/nzind", np.array([2, 3], dtype=np.int64))
    exp.vectors[("gene", "mark")] = mark

    fraction = (np.arange(24, dtype=np.float32).reshape(6, 4) + 1) / 8
    v2_numeric(root, "matrices/cell/gene/fraction", ondisk_matrix(fraction), fill=0.0)
    exp.matrices[("cell", "gene", "fraction")] = (fraction, False)
    square = np.array([[1, 2], [3, 4]], dtype=np.int64)
    sq = np.zeros((4, 4), dtype=np.int64)
    sq[:2, :2] = square
    sq[3, 1] = -9
    v2_numeric(root, "matrices/gene/gene/sq", ondisk_matrix(sq))
    exp.matrices[("gene", "gene", "sq")] = (sq, False)

    umis = np.zeros((6, 4), dtype=np.float32)
    umis[1, 0], umis[4, 0], umis[0, 3] = 2, 3, 4
    v2_group(root, "matrices/cell/gene/umis")
    indptr, indices, data = csc_parts(umis)
    v2_numeric(root, "matrices/cell/gene/umis/colptr", (indptr + 1).astype(np.int64))
    v2_numeric(root, "matrices/cell/gene/umis/rowval", (indices + 1).astype(np.int32))
    v2_numeric(root, "matrices/cell/gene/umis/nzval", data)
    exp.matrices[("cell", "gene", "umis")] = (umis, True)
    links = np.zeros((4, 6), dtype=bool)
    links[0, 5] = links[2, 5] = links[3, 1] = True
    v2_group(root, "matrices/gene/cell/links")
    indptr, indices, _ = csc_parts(links)
    v2_numeric(root, "matrices/gene/cell/links/colptr", (indptr + 1).astype(np.uint64))
    v2_numeric(root, "matrices/gene/cell/links/rowval", (indices + 1).astype(np.uint64))
    exp.matrices[("gene", "cell", "links")] = (links, True)

    v2_consolidate(root)
    return exp


def test_seed_v2_directory_reads_every_value(tmp_path: Path) -> None:
    root = tmp_path / "seed.daf.zarr"
    exp = build_seed_v2(root)
    assert (root / "daf/0").read_bytes() == b"\x01\x00"
    d = open_daf(root)
    try:
        check_daf(d, exp)
    finally:
        close_daf(d)


def test_seed_v2_with_zarr_python_compressed_chunked_arrays(tmp_path: Path) -> None:
    """Properties written by zarr-python 3.1 (format 2: blosc, several chunks, '.'
    separator, a .zattrs) in place of Julia's flat ones still read."""
    import shutil

    import zarr

    root = tmp_path / "mixed.daf.zarr"
    exp = build_seed_v2(root)
    shutil.rmtree(root / "matrices/cell/gene/fraction")
    shutil.rmtree(root / "vectors/cell/label")
    fraction, _ = exp.matrices[("cell", "gene", "fraction")]
    group = zarr.open_group(str(root), mode="r+", zarr_format=2, use_consolidated=False)
    arr = group["matrices/cell/gene"].create_array(
        "fraction", shape=(4, 6), chunks=(3, 4), dtype="float32", fill_value=0
    )
    arr[...] = fraction.T
    labels = ["α", "β", "", "δδ", "e", "f"]
    sarr = group["vectors/cell"].create_array("label", shape=(6,), chunks=(4,), dtype=str)
    sarr[...] = np.array(labels)
    exp.vectors[("cell", "label")] = labels
    meta = json.loads((root / "matrices/cell/gene/fraction/.zarray").read_text())
    assert meta["compressor"] is not None and meta["chunks"] == [3, 4]
    assert (root / "matrices/cell/gene/fraction/1.1").exists()
    v2_consolidate(root)
    d = open_daf(root)
    try:
        check_daf(d, exp)
    finally:
        close_daf(d)


# --------------------------------------------------------------------------------------
# 3. What zarrkit.daf writes, inspected on disk
# --------------------------------------------------------------------------------------


class Tree:
    """Read-only view of a directory or a ZIP archive by Zarr key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.files: dict[str, bytes] = {}
        if path.is_dir():
            for p in path.rglob("*"):
                if p.is_file():
                    self.files[p.relative_to(path).as_posix()] = p.read_bytes()
        else:
            with zipfile.ZipFile(path) as zf:
                for info in zf.infolist():  # a later duplicate wins, as in zipfile
                    self.files[info.filename] = zf.read(info)

    def get(self, key: str) -> bytes | None:
        return self.files.get(key)

    def json(self, key: str) -> Any:
        data = self.get(key)
        assert data is not None, f"missing {key}"
        return json.loads(data)

    def has_prefix(self, prefix: str) -> bool:
        return any(k.startswith(prefix) for k in self.files)


@dataclass
class Written:
    """What the write test stores: on-disk images keyed by array path."""

    exp: Expected
    flat: dict[str, Any] = field(default_factory=dict)  # path -> ndarray (on-disk) / list[str]
    sparse_vectors: dict[str, tuple[np.ndarray, bool]] = field(default_factory=dict)
    sparse_matrices: dict[str, tuple[np.ndarray, bool]] = field(default_factory=dict)
    packed: dict[str, np.ndarray] = field(default_factory=dict)


WRITE_SCALARS: dict[str, Any] = {
    "b": np.bool_(True),
    "i8": np.int8(-8),
    "i16": np.int16(-1600),
    "i32": np.int32(-320000),
    "i64": np.int64(-(2**40)),
    "u8": np.uint8(200),
    "u16": np.uint16(60000),
    "u32": np.uint32(4_000_000_000),
    "u64": np.uint64(2**63 + 5),
    "f32": np.float32(1.25),
    "f64": np.float64(-2.5e-3),
    "s": "héllo ☃",
}
W_CELLS = ["a1", "ä2", "a3", "a4", "a5"]
W_GENES = ["x", "y", "z"]
W_BINS = [f"bin{i}" for i in range(1100)]


def write_with_zarrkit(path: Path, zarr_format: int) -> Written:
    kw = {} if zarr_format == 3 else {"zarr_format": 2}
    d = open_daf(path, "w", **kw)
    w = Written(Expected(name=None))
    exp = w.exp
    try:
        for name, value in WRITE_SCALARS.items():
            d.set_scalar(name, value)
            exp.scalars[name] = value
            w.flat[f"scalars/{name}"] = [value] if isinstance(value, str) else np.array([value])
        for axis, entries in (("cell", W_CELLS), ("gene", W_GENES)):
            d.add_axis(axis, entries)
            exp.axes[axis] = entries
            w.flat[f"axes/{axis}"] = entries

        dense = {
            ("cell", "score"): np.array([0.5, -1.0, 2.0, 1e-9, 7.0]),
            ("cell", "count"): np.array([1, -2, 3, 0, 5], dtype=np.int32),
            ("cell", "flag"): np.array([True, False, False, True, True]),
            ("gene", "w16"): np.array([1, 2, 65535], dtype=np.uint16),
        }
        for (axis, name), values in dense.items():
            d.set_vector(axis, name, values)
            exp.vectors[(axis, name)] = values
            w.flat[f"vectors/{axis}/{name}"] = values
        labels = ["l1", "", "ł3", "l4", "l5"]
        d.set_vector("cell", "label", np.array(labels))
        exp.vectors[("cell", "label")] = labels
        w.flat["vectors/cell/label"] = labels

        sv = np.array([0, 2.5, 0, 0, -1], dtype=np.float32)
        d.set_vector("cell", "sv", sp.coo_array(sv))
        exp.vectors[("cell", "sv")] = sv
        w.sparse_vectors["vectors/cell/sv"] = (sv, False)
        mark = np.array([False, True, True])
        d.set_vector("gene", "mark", sp.coo_array(mark))
        exp.vectors[("gene", "mark")] = mark
        w.sparse_vectors["vectors/gene/mark"] = (mark, True)
        if zarr_format == 3:
            # A column of 8800 bytes: packed under either reading of "packed=True" (always,
            # or as the Julia package: only from DAF_PACKED_TARGET_CHUNK_KB = 8 KiB up), in
            # inner chunks that need not divide it (Julia: 1024 elements).
            d.add_axis("bin", W_BINS)
            exp.axes["bin"] = W_BINS
            w.flat["axes/bin"] = W_BINS
            packed = np.random.default_rng(5).normal(size=len(W_BINS)).round(3)
            d.set_vector("bin", "packed", packed, packed=True)
            exp.vectors[("bin", "packed")] = packed
            w.packed["vectors/bin/packed"] = packed

        fraction = (np.arange(15, dtype=np.float32).reshape(5, 3) - 4) / 3
        adj = np.array(
            [[i < j or (i + j) % 3 == 0 for j in range(5)] for i in range(5)], dtype=bool
        )
        gg = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=np.int8)
        for (rows, cols, name), matrix in {
            ("cell", "gene", "fraction"): fraction,
            ("cell", "cell", "adj"): adj,
            ("gene", "gene", "gg"): gg,
        }.items():
            d.set_matrix(rows, cols, name, matrix)
            exp.matrices[(rows, cols, name)] = (matrix, False)
            w.flat[f"matrices/{rows}/{cols}/{name}"] = ondisk_matrix(matrix)
        umis = np.zeros((5, 3))
        umis[0, 0], umis[4, 0], umis[2, 2] = 3, 1.5, -8
        d.set_matrix("cell", "gene", "umis", sp.csc_matrix(umis))
        exp.matrices[("cell", "gene", "umis")] = (umis, True)
        w.sparse_matrices["matrices/cell/gene/umis"] = (umis, False)
        links = np.zeros((3, 5), dtype=bool)
        links[0, 1] = links[2, 1] = links[1, 4] = True
        d.set_matrix("gene", "cell", "links", sp.csc_matrix(links))
        exp.matrices[("gene", "cell", "links")] = (links, True)
        w.sparse_matrices["matrices/gene/cell/links"] = (links, True)
    finally:
        close_daf(d)
    del d
    gc.collect()
    return w


INT_NAMES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


def check_v3_numeric_meta(meta: dict, shape: tuple[int, ...], dtype: np.dtype | None) -> None:
    assert meta["zarr_format"] == 3 and meta["node_type"] == "array"
    assert meta["shape"] == list(shape)
    if dtype is None:
        assert meta["data_type"] in INT_NAMES
        dtype = np.dtype(meta["data_type"])
    else:
        assert meta["data_type"] == dtype.name
    assert meta["chunk_grid"] == {"name": "regular", "configuration": {"chunk_shape": list(shape)}}
    assert meta["chunk_key_encoding"] == SEP_SLASH
    assert "attributes" not in meta and "dimension_names" not in meta
    if dtype.itemsize == 1:
        assert meta["codecs"] in ([BYTES_LE], [{"name": "bytes"}])
    else:
        assert meta["codecs"] == [BYTES_LE]
    if dtype.kind == "b":
        assert meta["fill_value"] is False
    else:
        assert meta["fill_value"] == 0 and not isinstance(meta["fill_value"], bool)


def v3_read_flat(tree: Tree, path: str, dtype: np.dtype | None = None) -> np.ndarray:
    meta = tree.json(f"{path}/zarr.json")
    shape = tuple(meta["shape"])
    check_v3_numeric_meta(meta, shape, dtype)
    raw = tree.get(f"{path}/{chunk_key_v3(len(shape))}")
    assert raw is not None, f"{path}: missing chunk"
    dt = np.dtype(meta["data_type"]).newbyteorder("<")
    assert len(raw) == math.prod(shape) * dt.itemsize, f"{path}: not a raw image"
    return np.frombuffer(raw, dtype=dt).reshape(shape)


def v3_read_strings(tree: Tree, path: str) -> list[str]:
    meta = tree.json(f"{path}/zarr.json")
    assert meta["node_type"] == "array" and meta["data_type"] == "string"
    assert meta["codecs"] in ([{"name": "vlen-utf8"}], [{"name": "vlen-utf8", "configuration": {}}])
    assert meta["fill_value"] == ""
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == meta["shape"]
    assert meta["chunk_key_encoding"] == SEP_SLASH
    assert "attributes" not in meta and "dimension_names" not in meta
    raw = tree.get(f"{path}/c/0")
    assert raw is not None
    values = vlen_utf8_decode(raw)
    assert len(values) == meta["shape"][0]
    return values


def v2_read_flat(tree: Tree, path: str, dtype: np.dtype | None = None) -> np.ndarray:
    meta = tree.json(f"{path}/.zarray")
    shape = tuple(meta["shape"])
    assert meta["zarr_format"] == 2
    assert meta["chunks"] == list(shape)
    assert meta["compressor"] is None and meta["filters"] in (None, [])
    assert meta["order"] == "C"
    if dtype is None:
        dt = np.dtype(meta["dtype"])
        assert dt.kind in "iu"
    else:
        assert meta["dtype"] == v2_dtype(dtype)
        dt = dtype
    sep = meta.get("dimension_separator", ".")
    raw = tree.get(f"{path}/" + sep.join(["0"] * len(shape)))
    assert raw is not None, f"{path}: missing chunk"
    assert len(raw) == math.prod(shape) * dt.itemsize
    return np.frombuffer(raw, dtype=dt.newbyteorder("<")).reshape(shape)


def v2_read_strings(tree: Tree, path: str) -> list[str]:
    meta = tree.json(f"{path}/.zarray")
    assert meta["dtype"] == "|O" and meta["filters"] == [{"id": "vlen-utf8"}]
    assert meta["compressor"] is None and meta["chunks"] == meta["shape"]
    raw = tree.get(f"{path}/0")
    assert raw is not None
    return vlen_utf8_decode(raw)


def decode_shard(tree: Tree, path: str, dtype: np.dtype) -> np.ndarray:
    meta = tree.json(f"{path}/zarr.json")
    shape = tuple(meta["shape"])
    assert meta["data_type"] == dtype.name
    assert meta["attributes"] == {"daf_packed_format": "indexed+zipped"}
    [codec] = meta["codecs"]
    assert codec["name"] == "sharding_indexed"
    config = codec["configuration"]
    inner = tuple(config["chunk_shape"])
    # One shard covering the array: exactly its shape (Julia), or that shape rounded up to
    # whole inner chunks (what the sharding spec requires when they do not divide it).
    rounded = [-(-s // c) * c for s, c in zip(shape, inner, strict=True)]
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] in (list(shape), rounded)
    assert config["index_location"] == "start"
    assert config["index_codecs"] == [BYTES_LE, {"name": "crc32c"}]
    inner_codecs = config["codecs"]
    assert len(inner_codecs) == 2 and inner_codecs[0]["name"] == "bytes"
    assert inner_codecs[0].get("configuration", {}).get("endian", "little") == "little"
    blosc = inner_codecs[1]
    assert blosc["name"] == "blosc"
    assert blosc["configuration"]["cname"] == "zstd"
    assert blosc["configuration"]["shuffle"] == "bitshuffle"
    assert blosc["configuration"]["typesize"] == dtype.itemsize
    raw = tree.get(f"{path}/{chunk_key_v3(len(shape))}")
    assert raw is not None
    grid = tuple(-(-s // c) for s, c in zip(shape, inner, strict=True))
    n = math.prod(grid)
    index = raw[: 16 * n]
    assert struct.unpack_from("<I", raw, 16 * n)[0] == crc32c.crc32c(index)
    pairs = np.frombuffer(index, dtype="<u8").reshape(n, 2)
    out = np.zeros(shape, dtype=dtype)
    codec_obj = numcodecs.Blosc()
    for k, idx in enumerate(np.ndindex(*grid)):
        offset, nbytes = (int(x) for x in pairs[k])
        if offset == EMPTY_CHUNK and nbytes == EMPTY_CHUNK:
            continue
        assert offset >= 16 * n + 4 and offset + nbytes <= len(raw)
        block = np.frombuffer(
            codec_obj.decode(raw[offset : offset + nbytes]), dtype=dtype.newbyteorder("<")
        ).reshape(inner)
        region = tuple(
            slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, inner, shape, strict=True)
        )
        out[region] = block[tuple(slice(0, r.stop - r.start) for r in region)]
    return out


def group_keys(zarr_format: int, path: str) -> str:
    if zarr_format == 3:
        return f"{path}/zarr.json" if path else "zarr.json"
    return f"{path}/.zgroup" if path else ".zgroup"


def check_written_tree(tree: Tree, w: Written, zarr_format: int) -> None:
    exp = w.exp
    # the marker and the four groups, matrices/<a>/<b> for every pair
    if zarr_format == 3:
        root = tree.json("zarr.json")
        assert root["zarr_format"] == 3 and root["node_type"] == "group"
        marker = root["attributes"]["daf"]
        assert marker == [1, 0] and all(type(x) is int for x in marker)
        assert tree.get(".zgroup") is None and tree.get("daf/.zarray") is None
    else:
        assert tree.json(".zgroup")["zarr_format"] == 2
        assert tree.get("zarr.json") is None
        assert tree.get("daf/0") == b"\x01\x00"
        np.testing.assert_array_equal(v2_read_flat(tree, "daf", np.dtype("u1")), [1, 0])
    groups = ["scalars", "axes", "vectors", "matrices"]
    groups += [f"vectors/{a}" for a in exp.axes] + [f"matrices/{a}" for a in exp.axes]
    groups += [f"matrices/{a}/{b}" for a in exp.axes for b in exp.axes]
    groups += list(w.sparse_vectors) + list(w.sparse_matrices)
    for g in groups:
        key = group_keys(zarr_format, g)
        if zarr_format == 3:
            assert tree.json(key)["node_type"] == "group", g
        else:
            assert tree.json(key)["zarr_format"] == 2, g

    read_flat = v3_read_flat if zarr_format == 3 else v2_read_flat
    read_strings = v3_read_strings if zarr_format == 3 else v2_read_strings
    for path, expected in w.flat.items():
        if isinstance(expected, list):
            assert read_strings(tree, path) == expected, path
        else:
            got = read_flat(tree, path, expected.dtype)
            assert got.shape == expected.shape, path  # dense matrices: reversed shape
            assert got.tobytes() == le_bytes(expected), path

    for path, (values, all_true) in w.sparse_vectors.items():
        nz = np.flatnonzero(values)
        nzind = read_flat(tree, f"{path}/nzind")
        np.testing.assert_array_equal(nzind, nz + 1)  # 1-based
        if all_true:
            assert not tree.has_prefix(f"{path}/nzval/"), f"{path}: nzval not omitted"
        else:
            np.testing.assert_array_equal(
                read_flat(tree, f"{path}/nzval", values.dtype), values[nz]
            )

    for path, (matrix, all_true) in w.sparse_matrices.items():
        indptr, indices, data = csc_parts(matrix)
        colptr = read_flat(tree, f"{path}/colptr")
        rowval = read_flat(tree, f"{path}/rowval")
        assert colptr.shape == (matrix.shape[1] + 1,)
        assert int(colptr[0]) == 1 and int(colptr[-1]) == len(data) + 1
        np.testing.assert_array_equal(colptr, indptr + 1)
        np.testing.assert_array_equal(rowval, indices + 1)
        if all_true:
            assert not tree.has_prefix(f"{path}/nzval/"), f"{path}: nzval not omitted"
        else:
            np.testing.assert_array_equal(read_flat(tree, f"{path}/nzval", matrix.dtype), data)

    for path, values in w.packed.items():
        np.testing.assert_array_equal(decode_shard(tree, path, values.dtype), values)


def check_v3_consolidated(tree: Tree) -> None:
    """Root zarr.json carries zarr-python's inline consolidated metadata: every node, its
    zarr.json verbatim (an empty ``attributes`` aside)."""

    def norm(meta: dict) -> dict:
        meta = dict(meta)
        if meta.get("attributes") == {}:
            del meta["attributes"]
        meta.pop("consolidated_metadata", None)
        return meta

    root = tree.json("zarr.json")
    cm = root["consolidated_metadata"]
    assert cm["kind"] == "inline" and cm["must_understand"] is False
    nodes = {
        k[: -len("/zarr.json")]: json.loads(v)
        for k, v in tree.files.items()
        if k.endswith("/zarr.json")
    }
    assert set(cm["metadata"]) == set(nodes)
    for key, meta in nodes.items():
        assert norm(cm["metadata"][key]) == norm(meta), key


def check_v2_consolidated(tree: Tree) -> None:
    zmeta = tree.json(".zmetadata")
    assert zmeta["zarr_consolidated_format"] == 1
    docs = {
        k: json.loads(v)
        for k, v in tree.files.items()
        if k.rsplit("/", 1)[-1] in (".zgroup", ".zarray", ".zattrs")
    }
    assert set(zmeta["metadata"]) == set(docs)
    for key, doc in docs.items():
        assert zmeta["metadata"][key] == doc, key


def check_zip_members(path: Path) -> None:
    """Every member stored (method 0) with its data at an 8-byte-aligned offset."""
    with zipfile.ZipFile(path) as zf, path.open("rb") as raw:
        infos = zf.infolist()
        assert infos
        for info in infos:
            assert info.compress_type == zipfile.ZIP_STORED, info.filename
            raw.seek(info.header_offset)
            header = raw.read(30)
            signature, *_rest = struct.unpack("<IHHHHHIIIHH", header)
            assert signature == 0x04034B50, info.filename
            name_len, extra_len = struct.unpack_from("<HH", header, 26)
            data_offset = info.header_offset + 30 + name_len + extra_len
            assert data_offset % 8 == 0, (info.filename, data_offset)
            raw.seek(data_offset)
            assert raw.read(info.file_size) == zf.read(info), info.filename


FORMATS_BACKENDS = [(3, "dir"), (3, "zip"), (2, "dir"), (2, "zip")]


@pytest.mark.parametrize(("zarr_format", "backend"), FORMATS_BACKENDS)
def test_written_layout_on_disk(tmp_path: Path, zarr_format: int, backend: str) -> None:
    path = tmp_path / ("w.daf.zarr" if backend == "dir" else "w.daf.zarr.zip")
    w = write_with_zarrkit(path, zarr_format)
    assert path.is_dir() == (backend == "dir")
    if backend == "zip":
        check_zip_members(path)
    tree = Tree(path)
    check_written_tree(tree, w, zarr_format)
    if zarr_format == 3:
        if backend == "dir":
            check_v3_consolidated(tree)
        else:
            assert "consolidated_metadata" not in tree.json("zarr.json")
    elif backend == "dir":
        check_v2_consolidated(tree)

    d = open_daf(path)
    try:
        check_daf(d, w.exp)
    finally:
        close_daf(d)


@pytest.mark.parametrize(("zarr_format", "backend"), FORMATS_BACKENDS)
def test_consolidated_metadata_current_after_changes(
    tmp_path: Path, zarr_format: int, backend: str
) -> None:
    path = tmp_path / ("u.daf.zarr" if backend == "dir" else "u.daf.zarr.zip")
    w = write_with_zarrkit(path, zarr_format)
    d = open_daf(path, "r+")
    try:
        extra = np.array([9, 8, 7], dtype=np.int64)
        d.set_vector("gene", "extra", extra)
        d.set_scalar("later", np.float32(0.5))
    finally:
        close_daf(d)
    del d
    gc.collect()
    w.flat["vectors/gene/extra"] = extra
    w.flat["scalars/later"] = np.array([0.5], dtype=np.float32)
    w.exp.vectors[("gene", "extra")] = extra
    w.exp.scalars["later"] = np.float32(0.5)
    tree = Tree(path)
    check_written_tree(tree, w, zarr_format)
    if backend == "zip":
        check_zip_members(path)
        if zarr_format == 3:
            assert "consolidated_metadata" not in tree.json("zarr.json")
    elif zarr_format == 3:
        check_v3_consolidated(tree)
        assert "vectors/gene/extra" in tree.json("zarr.json")["consolidated_metadata"]["metadata"]
    else:
        check_v2_consolidated(tree)
        assert "vectors/gene/extra/.zarray" in tree.json(".zmetadata")["metadata"]

    if backend == "dir":  # deleting is refused on the append-only ZIP backend
        d = open_daf(path, "r+")
        try:
            d.delete_vector("gene", "extra")
        finally:
            close_daf(d)
        tree = Tree(path)
        if zarr_format == 3:
            check_v3_consolidated(tree)
            assert (
                "vectors/gene/extra"
                not in tree.json("zarr.json")["consolidated_metadata"]["metadata"]
            )
        else:
            check_v2_consolidated(tree)
            assert "vectors/gene/extra/.zarray" not in tree.json(".zmetadata")["metadata"]


def test_default_format_is_v3(tmp_path: Path) -> None:
    path = tmp_path / "default.daf.zarr"
    d = open_daf(path, "w")
    close_daf(d)
    root = json.loads((path / "zarr.json").read_text())
    assert root["attributes"]["daf"] == [1, 0]
    assert not (path / ".zgroup").exists() and not (path / "daf").exists()
    for g in ("scalars", "axes", "vectors", "matrices"):
        assert json.loads((path / g / "zarr.json").read_text())["node_type"] == "group"


# --------------------------------------------------------------------------------------
# 3b. Packed properties: Julia's "indexed+zipped" shards, byte for byte
# --------------------------------------------------------------------------------------

P_CELLS = [f"cell{i}" for i in range(1200)]  # 1200 float64: 1024-element inner chunks
P_GENES = [f"gene{i}" for i in range(1030)]  # 1030 float64 = 8240 bytes: packs too


@dataclass
class PackedSet:
    """A data set written by zarrkit with ``packed=True`` everywhere: what each packed
    array holds (on-disk orientation) and its inner chunk shape, and the flat leftovers."""

    packed: dict[str, tuple[np.ndarray, tuple[int, ...]]] = field(default_factory=dict)
    flat: list[str] = field(default_factory=list)
    vectors: dict[str, Any] = field(default_factory=dict)
    matrices: dict[tuple[str, str, str], Any] = field(default_factory=dict)


def write_packed_set(path: Path) -> PackedSet:
    """Julia's packing rules: an inner chunk holds 8 KiB of one Daf column (1024 float64,
    512 strings at 16 bytes each), a column shorter than that stays flat; a matrix's
    relayout (set_matrix's or relayout_matrix's) packs whole columns; every component of
    a sparse property is packed on its own, a relayouted sparse matrix is not packed."""
    rng = np.random.default_rng(31)
    out = PackedSet()
    score = rng.normal(size=len(P_CELLS))
    label = np.array([f"é{i % 7}-{i}" for i in range(len(P_CELLS))], dtype=object)
    sparse_vector = np.where(rng.random(len(P_CELLS)) < 0.9, rng.normal(size=len(P_CELLS)), 0.0)
    umis = rng.integers(0, 4, size=(len(P_CELLS), len(P_GENES))).astype(np.float64)
    counts = rng.integers(0, 9, size=(2, len(P_GENES))).astype(np.float64)
    sparse_umis = np.where(rng.random(umis.shape) < 0.01, umis + 1, 0.0)
    d = open_daf(path, "w")
    try:
        d.add_axis("cell", P_CELLS)
        d.add_axis("gene", P_GENES)
        d.add_axis("pair", ["p0", "p1"])
        d.set_vector("cell", "score", score, packed=True)
        d.set_vector("cell", "label", label, packed=True)
        d.set_vector("cell", "sv", sp.coo_array(sparse_vector), packed=True)
        d.set_vector("gene", "short", np.arange(len(P_GENES), dtype=np.float32), packed=True)
        d.set_matrix("cell", "gene", "umis", umis, packed=True)
        d.set_matrix("pair", "gene", "counts", counts, packed=True, relayout=False)
        d.relayout_matrix("pair", "gene", "counts", packed=True)
        d.set_matrix("cell", "gene", "sp", sp.csc_matrix(sparse_umis), packed=True)
    finally:
        close_daf(d)
    out.vectors = {"score": score, "label": label, "sv": sparse_vector}
    out.matrices = {("cell", "gene", "umis"): umis, ("gene", "cell", "umis"): umis.T,
                    ("pair", "gene", "counts"): counts, ("gene", "pair", "counts"): counts.T,
                    ("cell", "gene", "sp"): sparse_umis, ("gene", "cell", "sp"): sparse_umis.T}
    out.packed["vectors/cell/score"] = (score, (1024,))
    out.packed["vectors/cell/label"] = (label, (512,))
    nz = np.flatnonzero(sparse_vector)
    out.packed["vectors/cell/sv/nzind"] = (nz + 1, (1024,))
    out.packed["vectors/cell/sv/nzval"] = (sparse_vector[nz], (1024,))
    # (cell, gene): columns of 1200 cells in 1024-cell inner chunks; the relayout (gene,
    # cell): whole columns of 1030 genes. (pair, gene) has 2-element columns: flat; its
    # relayout_matrix (gene, pair): whole columns of 1030 genes.
    out.packed["matrices/cell/gene/umis"] = (ondisk_matrix(umis), (1, 1024))
    out.packed["matrices/gene/cell/umis"] = (ondisk_matrix(umis.T), (1, len(P_GENES)))
    out.packed["matrices/gene/pair/counts"] = (ondisk_matrix(counts.T), (1, len(P_GENES)))
    indptr, indices, data = csc_parts(sparse_umis)
    out.packed["matrices/cell/gene/sp/colptr"] = (indptr + 1, (1024,))  # 1031 entries
    out.packed["matrices/cell/gene/sp/rowval"] = (indices + 1, (1024,))
    out.packed["matrices/cell/gene/sp/nzval"] = (data, (1024,))
    out.flat = ["vectors/gene/short", "matrices/pair/gene/counts", "matrices/gene/cell/sp/colptr",
                "matrices/gene/cell/sp/rowval", "matrices/gene/cell/sp/nzval"]
    return out


def on_disk_values(tree: Tree, path: str, values: np.ndarray) -> np.ndarray:
    """``values`` in the data type the array's zarr.json names (index types are the
    writer's choice; any integer type is valid)."""
    data_type = tree.json(f"{path}/zarr.json")["data_type"]
    return values if data_type == "string" else values.astype(np.dtype(data_type))


@pytest.fixture(scope="module")
def packed_sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, PackedSet]]:
    base = tmp_path_factory.mktemp("packed")
    return {backend: (path, write_packed_set(path)) for backend, path in
            (("dir", base / "p.daf.zarr"), ("zip", base / "p.daf.zarr.zip"))}


@pytest.mark.parametrize("backend", ["dir", "zip"])
def test_packed_shards_are_julia_bytes(packed_sets: dict[str, tuple[Path, PackedSet]],
                                       backend: str) -> None:
    """Every packed shard equals, byte for byte, the one rebuilt here from Julia's rules
    (shard_bytes), and its zarr.json is Julia's, the shard shape rounded up to whole inner
    chunks when they do not divide it (Julia's exact shape is refused by zarr-python)."""
    path, written = packed_sets[backend]
    tree = Tree(path)
    directory = Tree(packed_sets["dir"][0]) if backend == "zip" else None
    for array_path, (values, inner) in written.packed.items():
        ondisk = on_disk_values(tree, array_path, values)
        meta = tree.json(f"{array_path}/zarr.json")
        julia = packed_meta(ondisk, inner)
        shape = list(ondisk.shape)
        rounded = [-(-s // c) * c for s, c in zip(shape, inner, strict=True)]
        assert meta["chunk_grid"]["configuration"]["chunk_shape"] == rounded, array_path
        julia["chunk_grid"]["configuration"]["chunk_shape"] = rounded
        assert meta == julia, array_path
        raw = tree.get(f"{array_path}/{chunk_key_v3(ondisk.ndim)}")
        assert raw is not None, array_path
        if directory is None:
            assert raw == shard_bytes(ondisk, inner), array_path
        else:  # the same bytes as the directory's (checked against shard_bytes there)
            assert raw == directory.get(f"{array_path}/{chunk_key_v3(ondisk.ndim)}")
    # A whole-column relayout divides its shard: Julia's zarr.json exactly.
    for array_path in ("matrices/gene/cell/umis", "matrices/gene/pair/counts"):
        values, inner = written.packed[array_path]
        assert tree.json(f"{array_path}/zarr.json") == packed_meta(values, inner)
    for array_path in written.flat:  # too short to pack, or a relayouted sparse matrix
        meta = tree.json(f"{array_path}/zarr.json")
        assert meta["codecs"] == [BYTES_LE] and "attributes" not in meta, array_path
    packed_nodes = {
        key[: -len("/zarr.json")]
        for key, data in tree.files.items()
        if key.endswith("zarr.json") and "daf_packed_format" in json.loads(data).get(
            "attributes", {})
    }
    assert packed_nodes == set(written.packed)


def test_packed_shards_are_zip_archives(packed_sets: dict[str, tuple[Path, PackedSet]]
                                        ) -> None:
    """Each shard is a valid ZIP archive for Python's zipfile: one STORED member per inner
    chunk (fixed-width names, in chunk order) whose data is the blosc frame the Zarr index
    points at, then codec.json; the CRCs check."""
    path, written = packed_sets["dir"]
    for array_path, (values, inner) in written.packed.items():
        raw = (path / array_path / chunk_key_v3(values.ndim)).read_bytes()
        grid = tuple(-(-s // c) for s, c in zip(values.shape, inner, strict=True))
        n = math.prod(grid)
        pairs = np.frombuffer(raw[: 16 * n], dtype="<u8").reshape(n, 2)
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            assert archive.testzip() is None, array_path
            infos = archive.infolist()
            expected = [julia_chunk_name(idx, grid).decode() for idx in np.ndindex(*grid)]
            assert [info.filename for info in infos] == [*expected, "codec.json"]
            for info, (offset, size) in zip(infos, pairs, strict=False):
                assert info.compress_type == zipfile.ZIP_STORED
                assert info.file_size == info.compress_size == int(size)
                assert info.date_time == (1980, 1, 1, 0, 0, 0)
                assert info.header_offset + 30 + len(info.filename) + 20 == int(offset)
                frame = raw[int(offset) : int(offset) + int(size)]
                assert archive.read(info) == frame
                assert numcodecs.Blosc().decode(frame)  # a blosc frame
            data_type = json.loads((path / array_path / "zarr.json").read_text())["data_type"]
            dtype = np.dtype(object) if data_type == "string" else np.dtype(data_type)
            assert json.loads(archive.read("codec.json")) == julia_inner_codecs(dtype)
            assert archive.comment == b""


def test_packed_arrays_read_back(packed_sets: dict[str, tuple[Path, PackedSet]]) -> None:
    """zarr-python reads the packed arrays of the directory (the ZIP records are invisible
    to a Zarr reader), and zarrkit.daf reads every property back from both backends."""
    import zarr

    path, written = packed_sets["dir"]
    group = zarr.open_group(str(path), mode="r")
    tree = Tree(path)
    for array_path, (values, _) in written.packed.items():
        got = group[array_path][...]
        if values.dtype.kind == "O":
            assert [str(x) for x in np.asarray(got).tolist()] == values.tolist(), array_path
        else:
            np.testing.assert_array_equal(got, on_disk_values(tree, array_path, values))
    for backend in ("dir", "zip"):
        path, written = packed_sets[backend]
        d = open_daf(path)
        try:
            np.testing.assert_array_equal(d.get_vector("cell", "score"), written.vectors["score"])
            assert [str(x) for x in d.get_vector("cell", "label")] == written.vectors[
                "label"].tolist()
            np.testing.assert_array_equal(dense_vector(d.get_vector("cell", "sv")),
                                          written.vectors["sv"])
            for (rows, cols, name), expected in written.matrices.items():
                got = d.get_matrix(rows, cols, name, relayout=False)
                dense = got.toarray() if sp.issparse(got) else np.asarray(got)
                np.testing.assert_array_equal(dense, expected)
        finally:
            close_daf(d)


@pytest.mark.parametrize("writer", ["zarr-python", "index-only"])
def test_foreign_index_only_shards_read(tmp_path: Path, writer: str) -> None:
    """A sharded array without the daf_packed_format attribute and without ZIP records
    (a foreign Zarr writer's: zarr-python's, index at the end; or an index-only shard with
    the index at the start) is read through its index, as Julia's ZarrDaf does."""
    import zarr

    root = tmp_path / "foreign.daf.zarr"
    for g in ("scalars", "axes", "vectors", "matrices"):
        v3_group(root, g)
    v3_strings(root, "axes/cell", [f"c{i}" for i in range(10)])
    v3_group(root, "vectors/cell")
    v3_group(root, "matrices/cell")
    v3_group(root, "matrices/cell/cell")
    values = np.arange(10, dtype=np.int32) * 3 - 7
    if writer == "zarr-python":
        array = zarr.create_array(str(root / "vectors/cell/v"), shape=(10,), chunks=(4,),
                                  shards=(12,), dtype="int32", fill_value=0)
        array[...] = values
    else:
        meta = packed_meta(values, (4,))
        del meta["attributes"]
        write_json(root / "vectors/cell/v/zarr.json", meta)
        write_bytes(root / "vectors/cell/v/c/0", shard_bytes(values, (4,), zip_framing=False))
    meta = json.loads((root / "vectors/cell/v/zarr.json").read_text())
    assert "daf_packed_format" not in meta.get("attributes", {})
    v3_root(root, [1, 0], consolidated=True)
    d = open_daf(root)
    try:
        check_vector(d.get_vector("cell", "v"), values, 10)
    finally:
        close_daf(d)


# --------------------------------------------------------------------------------------
# 4. zarr-python reads the directory form
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_zarr_python_reads_directory(tmp_path: Path, zarr_format: int) -> None:
    import zarr

    path = tmp_path / "zp.daf.zarr"
    w = write_with_zarrkit(path, zarr_format)
    group = zarr.open_group(str(path), mode="r")
    assert group.metadata.zarr_format == zarr_format
    seen = {name for name, node in group.members(max_depth=None) if isinstance(node, zarr.Array)}
    tree = Tree(path)
    meta_name = "zarr.json" if zarr_format == 3 else ".zarray"
    on_disk = set()
    for key, data in tree.files.items():
        if key.endswith("/" + meta_name):
            doc = json.loads(data)
            if zarr_format == 2 or doc["node_type"] == "array":
                on_disk.add(key[: -len(meta_name) - 1])
    assert seen == on_disk

    for path_key, expected in w.flat.items():
        got = group[path_key][...]
        if isinstance(expected, list):
            assert [str(x) for x in np.asarray(got).tolist()] == expected, path_key
        else:
            assert got.shape == expected.shape, path_key
            np.testing.assert_array_equal(got, expected)
    for path_key, values in w.packed.items():
        np.testing.assert_array_equal(group[path_key][...], values)

    d = open_daf(path)
    try:
        zp_matrix = np.asarray(group["matrices/cell/gene/fraction"][...])
        daf_matrix = np.asarray(d.get_matrix("cell", "gene", "fraction"))
        assert zp_matrix.shape == (3, 5) and daf_matrix.shape == (5, 3)
        np.testing.assert_array_equal(zp_matrix, daf_matrix.T)
        assert [str(x) for x in group["axes/cell"][...]] == W_CELLS
        assert [str(x) for x in d.axis_entries("cell")] == W_CELLS
    finally:
        close_daf(d)


# --------------------------------------------------------------------------------------
# 5. Version and marker errors
# --------------------------------------------------------------------------------------


def build_marked(root: Path, zarr_format: int, marker: Any) -> None:
    """A minimal data set whose marker is ``marker`` (``None``: no marker)."""
    if zarr_format == 3:
        for g in ("scalars", "axes", "vectors", "matrices"):
            v3_group(root, g)
        v3_root(root, marker, consolidated=False)
    else:
        v2_group(root, "")
        for g in ("scalars", "axes", "vectors", "matrices"):
            v2_group(root, g)
        if marker is not None:
            v2_numeric(root, "daf", np.array(marker, dtype=np.uint8), sep=".")
        v2_consolidate(root)


def open_error(path: Path) -> BaseException:
    with pytest.raises(Exception) as info:  # noqa: B017 - the class is checked below
        d = open_daf(path)
        close_daf(d)
    return info.value


def names_path(message: str, path: Path) -> bool:
    candidates = {str(path), os.path.abspath(path), os.path.realpath(path)}
    return any(c in message for c in candidates)


@pytest.mark.parametrize("zarr_format", [3, 2])
@pytest.mark.parametrize(("marker", "found"), [([2, 0], "2.0"), ([1, 1], "1.1"), ([0, 9], "0.9")])
def test_unsupported_version_is_refused(
    tmp_path: Path, zarr_format: int, marker: list[int], found: str
) -> None:
    path = tmp_path / "v.daf.zarr"
    build_marked(path, zarr_format, marker)
    err = open_error(path)
    assert type(err) is zk_errors.DafVersionError, repr(err)
    assert err.found == tuple(marker) and err.supported == (1, 0)
    message = str(err)
    major, minor = found.split(".")
    assert re.search(rf"\b{major}\s*[.,]\s*{minor}\b", message), message
    # the supported version 1.0, named apart from the found one
    assert re.search(r"\b1\s*[.,]\s*0\b", message.replace(found, "")), message
    assert names_path(message, path), message


MARKER_CASES: list[tuple[type, int, Any]] = [
    (zk_errors.DafMarkerError, 3, "1.0"),
    (zk_errors.DafMarkerError, 3, [1, 0, 0]),
    (zk_errors.DafMarkerError, 3, [1]),
    (zk_errors.DafMarkerError, 3, {"major": 1, "minor": 0}),
    (zk_errors.DafMarkerError, 2, [1, 0, 0]),
    (zk_errors.NotDafError, 3, None),
    (zk_errors.NotDafError, 2, None),
]


@pytest.mark.parametrize(("error", "zarr_format", "marker"), MARKER_CASES)
def test_malformed_and_missing_markers(
    tmp_path: Path, error: type, zarr_format: int, marker: Any
) -> None:
    """A malformed marker and a missing one: each its own error, apart from the version
    error (all three Daf errors, so zarrkit errors)."""
    path = tmp_path / "m.daf.zarr"
    build_marked(path, zarr_format, marker)
    err = open_error(path)
    assert type(err) is error, repr(err)
    assert isinstance(err, zk_errors.DafError) and isinstance(err, zk_errors.ZarrkitError)
    assert not isinstance(err, zk_errors.DafVersionError)
    assert names_path(str(err), path), str(err)


def test_error_classes_are_distinct() -> None:
    classes = {zk_errors.DafVersionError, zk_errors.DafMarkerError, zk_errors.NotDafError}
    assert len(classes) == 3
    for a in classes:
        for b in classes - {a}:
            assert not issubclass(a, b), (a, b)


def test_supported_markers_open(tmp_path: Path) -> None:
    """[1, 0] opens in both formats (an empty data set); the oracle for the errors above."""
    for zarr_format in (3, 2):
        path = tmp_path / f"ok{zarr_format}.daf.zarr"
        build_marked(path, zarr_format, [1, 0])
        d = open_daf(path)
        try:
            assert set(d.axes()) == set() and set(d.scalars()) == set()
        finally:
            close_daf(d)
