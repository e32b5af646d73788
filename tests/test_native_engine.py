"""The native chunk engine (``zarrkit._engine``) against the Python reference.

The Python path is the oracle: arrays are written by zarrkit's Python codecs (the
``ZARRKIT_ENGINE=python`` path) into a MemoryStore, or by numcodecs and zarr-python, and the
engine must read back exactly the values written (compared bit for bit, NaN payloads and
negative zeros included) through any selection, into outputs of any layout. Chunks and
shards the engine encodes must read back through the Python path, and are byte-identical to
what the Python path stores wherever both use the same C libraries: all of them here
(c-blosc and its compressors, zstd, zlib and lz4 give identical bytes, see
``test_engine_bytes_equal_numcodecs``) except gzip against numcodecs, whose header holds
the time of writing where zarrkit writes 0 on both paths (compared with those 4 bytes
masked, or decoded; see ``test_gzip_member.py``), and zlib and gzip at level 0, whose
stored blocks are as long as Python's output buffer has room for (compared decoded).

Hostile input (truncated and corrupt chunks, wrong sizes, lying headers, bad shard indexes,
bad checksums, random bytes) must raise ChunkDecodeError naming the key, never crash.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
import zlib
from typing import Any

import hypothesis.extra.numpy as hnp
import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit import native
from zarrkit.storage import MemoryStore

if not native.built():
    pytest.skip("zarrkit._engine is not built (make builds it; see native/)",
                allow_module_level=True)

from zarrkit import _engine as E  # noqa: E402

SETTINGS = settings(
    max_examples=int(os.environ.get("ZARRKIT_ENGINE_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.function_scoped_fixture],
)


@pytest.fixture(autouse=True)
def python_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """zarrkit itself runs its Python path here: it is the oracle."""
    monkeypatch.setattr(zk.config, "engine", "python")


# --- planning: which chunk region goes where (the numpy slicing oracle) ---------------------


def plan_dim(n: int, c: int, sl: slice) -> list[tuple[int, tuple[int, int, int], int, int]]:
    """For one dimension of length ``n`` in chunks of ``c`` and a slice with a positive
    step: ``(chunk index, chunk (start, stop, step), first output index, count)``."""
    start, stop, step = sl.indices(n)
    assert step > 0
    plan = []
    for k in range(math.ceil(n / c) if n else 0):
        lo, hi = k * c, min((k + 1) * c, n)
        j0 = max(0, -(-(lo - start) // step))
        j1 = max(0, -(-(min(hi, stop) - start) // step))
        if j1 > j0:
            first, last = start + j0 * step, start + (j1 - 1) * step
            plan.append((k, (first - lo, last - lo + 1, step), j0, j1 - j0))
    return plan


def plan(shape: tuple[int, ...], chunks: tuple[int, ...], sel: tuple[slice, ...],
         out_step: tuple[int, ...], out_offset: tuple[int, ...]
         ) -> list[tuple[tuple[int, ...], tuple[Any, ...], tuple[Any, ...]]]:
    """Every chunk touched by ``sel``: (chunk coordinates, chunk_sel, out_sel), where the
    output index j of a dimension lands at ``out_offset + j * out_step``."""
    per_dim = [plan_dim(n, c, s) for n, c, s in zip(shape, chunks, sel, strict=True)]
    tasks = []
    for combo in itertools.product(*per_dim):
        coords = tuple(p[0] for p in combo)
        chunk_sel = tuple(p[1] for p in combo)
        out_sel = tuple(
            (o + j0 * m, o + (j0 + cnt - 1) * m + 1, m)
            for (_, _, j0, cnt), m, o in zip(combo, out_step, out_offset, strict=True)
        )
        tasks.append((coords, chunk_sel, out_sel))
    return tasks


def v3_key(coords: tuple[int, ...]) -> str:
    return "/".join(["c", *map(str, coords)])


def v2_key(coords: tuple[int, ...]) -> str:
    return ".".join(map(str, coords)) if coords else "0"


# --- arrays written by the Python path ------------------------------------------------------


def write_v3(dtype: np.dtype[Any], data: np.ndarray[Any, Any], chunks: tuple[int, ...],
             codecs: list[Any], fill: Any) -> MemoryStore:
    store = MemoryStore()
    zk.create_array(store, shape=data.shape, chunks=chunks, dtype=dtype, fill_value=fill,
                    zarr_format=3, compressors=None)
    meta = json.loads(store.get("zarr.json"))
    meta["codecs"] = codecs
    store.set("zarr.json", json.dumps(meta).encode())
    zk.open_array(store, mode="r+")[...] = data
    return store


def write_v2(dtype: np.dtype[Any], data: np.ndarray[Any, Any], chunks: tuple[int, ...],
             order: str, compressor: dict[str, Any] | None, fill: Any) -> MemoryStore:
    store = MemoryStore()
    zk.create_array(store, shape=data.shape, chunks=chunks, dtype=dtype, fill_value=fill,
                    zarr_format=2, compressors=None, order=order)
    meta = json.loads(store.get(".zarray"))
    meta["compressor"] = compressor
    store.set(".zarray", json.dumps(meta).encode())
    zk.open_array(store, mode="r+")[...] = data
    return store


def describe(store: MemoryStore) -> tuple[dict[str, Any], np.dtype[Any]]:
    """The engine's description of a stored array, and the dtype of its output."""
    if store.get("zarr.json") is not None:
        meta = json.loads(store.get("zarr.json"))
        dtype = zk.open_array(store, mode="r").dtype
        return {"format": 3, "itemsize": dtype.itemsize, "dtype": dtype.str,
                "chunk_shape": meta["chunk_grid"]["configuration"]["chunk_shape"],
                "codecs": meta["codecs"]}, dtype
    meta = json.loads(store.get(".zarray"))
    dtype = np.dtype(meta["dtype"])
    return {"format": 2, "itemsize": dtype.itemsize, "dtype": dtype.str,
            "chunk_shape": meta["chunks"], "order": meta["order"],
            "compressor": meta["compressor"], "filters": meta["filters"]}, dtype


def fill_bytes(dtype: np.dtype[Any], fill: Any) -> bytes:
    return np.array(fill, dtype=dtype).tobytes()


def same_bits(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> None:
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype.itemsize == b.dtype.itemsize
    raw = np.dtype(f"V{a.dtype.itemsize}")
    assert np.array_equal(np.ascontiguousarray(a).view(raw), np.ascontiguousarray(b).view(raw))


# --- strategies -----------------------------------------------------------------------------

V3_DTYPES = ["|u1", "|i1", "|b1", "<i2", "<u2", "<i4", "<f4", "<u8", "<f8", "<c8", "<c16"]
V2_DTYPES = [*V3_DTYPES, ">i2", ">i4", ">f8", ">c16", "<M8[s]", "|S3"]
CNAMES = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]


@st.composite
def bb_codecs(draw: st.DrawFn, itemsize: int) -> list[dict[str, Any]]:
    chosen = []
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["blosc", "zstd", "gzip", "crc32c"]))
        if kind == "blosc":
            config = {"cname": draw(st.sampled_from(CNAMES)), "clevel": draw(st.integers(0, 9)),
                      "shuffle": draw(st.sampled_from(["noshuffle", "shuffle", "bitshuffle"])),
                      "typesize": draw(st.sampled_from([itemsize, 1, 4])),
                      "blocksize": draw(st.sampled_from([0, 0, 64]))}
        elif kind == "zstd":
            config = {"level": draw(st.integers(-3, 9)), "checksum": draw(st.booleans())}
        elif kind == "gzip":
            config = {"level": draw(st.integers(0, 9))}
        else:
            config = None
        chosen.append({"name": kind} if config is None else {"name": kind,
                                                             "configuration": config})
    return chosen


@st.composite
def plain_chain(draw: st.DrawFn, dtype: np.dtype[Any], ndim: int) -> list[dict[str, Any]]:
    codecs: list[dict[str, Any]] = []
    if ndim > 1 and draw(st.booleans()):
        codecs.append({"name": "transpose",
                       "configuration": {"order": draw(st.permutations(range(ndim)))}})
    if dtype.itemsize > 1:
        endian = draw(st.sampled_from(["little", "big"]))
        codecs.append({"name": "bytes", "configuration": {"endian": endian}})
    else:
        codecs.append({"name": "bytes"})
    return codecs + draw(bb_codecs(dtype.itemsize))


@st.composite
def data_for(draw: st.DrawFn, dtype: np.dtype[Any], shape: tuple[int, ...], fill: Any
             ) -> np.ndarray[Any, Any]:
    elements = hnp.from_dtype(dtype)
    # Mostly the fill value half of the time, so that some chunks are never stored.
    background = st.just(np.array(fill, dtype)[()]) if draw(st.booleans()) else None
    data = draw(hnp.arrays(dtype, shape, elements=elements, fill=background))
    return np.asarray(data, dtype=dtype)


@st.composite
def selections(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[slice, ...]:
    sel = []
    for n in shape:
        if draw(st.booleans()):
            sel.append(slice(None))
            continue
        start = draw(st.integers(0, n))
        stop = draw(st.integers(start, n))
        sel.append(slice(start, stop, draw(st.integers(1, 3))))
    return tuple(sel)


@st.composite
def fills(draw: st.DrawFn, dtype: np.dtype[Any]) -> Any:
    if dtype.kind in "SM":
        return np.zeros((), dtype)[()] if dtype.kind == "S" else np.array(0, dtype)[()]
    return np.array(draw(hnp.from_dtype(dtype)), dtype)[()]


# --- running the engine ---------------------------------------------------------------------


def output(draw: st.DrawFn, dtype: np.dtype[Any], counts: tuple[int, ...]
           ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], tuple[int, ...],
                      tuple[int, ...]]:
    """(buffer the engine writes, the view of it that holds the result, out steps,
    out offsets): C, F, strided or reversed, pre-filled with random bytes so that a region
    the engine forgets shows."""
    steps = tuple(draw(st.integers(1, 2)) for _ in counts)
    offsets = tuple(draw(st.integers(0, 1)) for _ in counts)
    big_shape = tuple(o + max(c, 1) * m for c, m, o in zip(counts, steps, offsets, strict=True))
    order = draw(st.sampled_from(["C", "F"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    raw = rng.integers(0, 256, math.prod(big_shape) * dtype.itemsize, dtype=np.uint8)
    big = raw.view(dtype).reshape(big_shape, order=order)
    if draw(st.booleans()) and big.ndim:
        big = big[::-1]  # negative strides: out_sel is relative to the view
    view = big[(*(slice(o, o + c * m, m) for c, m, o in zip(counts, steps, offsets,
                                                             strict=True)), Ellipsis)]
    return big, view, steps, offsets


def as_source(data: bytes, kind: str, tmp_path: Any, n: list[int]) -> Any:
    if kind == "bytes":
        return data
    if kind == "memoryview":
        return memoryview(bytearray(data))
    if kind == "numpy":
        return np.frombuffer(data, dtype=np.uint8)
    n[0] += 1
    path = os.path.join(tmp_path, f"chunk{n[0]}")
    pad = n[0] % 7
    with open(path, "wb") as f:
        f.write(b"\xee" * pad + data + b"\xee" * 3)
    return (path, pad, len(data))


def read_plain(store: MemoryStore, data: np.ndarray[Any, Any], sel: tuple[slice, ...],
               draw: st.DrawFn, tmp_path: Any, threads: int = 2) -> None:
    """Read ``data[sel]`` with the engine from the stored (non-sharded) chunks and
    compare with numpy."""
    desc, dtype = describe(store)
    fill = fill_bytes(dtype, zk.open_array(store, mode="r").fill_value)
    chain = E.Chain(json.dumps(desc), fill)
    assert not chain.sharded
    expected = data[(*sel, Ellipsis)]
    big, view, steps, offsets = output(draw, dtype, expected.shape)
    fmt = desc["format"]
    kind = draw(st.sampled_from(["bytes", "memoryview", "numpy", "file"]))
    n = [0]
    tasks = []
    for coords, chunk_sel, out_sel in plan(data.shape, tuple(desc["chunk_shape"]), sel,
                                           steps, offsets):
        key = v3_key(coords) if fmt == 3 else v2_key(coords)
        stored = store.get(key)
        if stored is None:  # the caller fills chunks that are not stored
            big[tuple(slice(*s) for s in out_sel)] = np.frombuffer(fill, dtype)[0]
            continue
        tasks.append((key, as_source(stored, kind, tmp_path, n), chunk_sel, out_sel))
    E.decode_into(chain, big, tasks, threads)
    same_bits(view.reshape(expected.shape), expected)


def chunk_grid(shape: tuple[int, ...], chunks: tuple[int, ...]) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(math.ceil(n / c)) for n, c in
                                     zip(shape, chunks, strict=True))))


def whole_chunk(chain: Any, key: str, stored: bytes, dtype: np.dtype[Any]
                ) -> np.ndarray[Any, Any]:
    """A stored chunk or shard decoded whole by the engine."""
    shape = chain.chunk_shape
    out = np.empty(shape, dtype)
    full = tuple((0, n, 1) for n in shape)
    if not chain.sharded:
        E.decode_into(chain, out, [(key, stored, full, full)], 1)
        return out
    inner = chain.inner_shape
    cps = [n // c for n, c in zip(shape, inner, strict=True)]
    jobs = []
    for coords in itertools.product(*map(range, cps)):
        jobs.append((coords, tuple((0, c, 1) for c in inner),
                     tuple((i * c, (i + 1) * c, 1) for i, c in zip(coords, inner, strict=True))))
    E.decode_shards_into(chain, out, [(key, stored, jobs)], 1)
    return out


def check_encode(store: MemoryStore, data: np.ndarray[Any, Any], threads: int = 2) -> None:
    """Re-encode every stored chunk with the engine: the same bytes as the Python path
    (for chains without gzip), and, stored in place of Python's, the same values read
    back through the Python path."""
    desc, dtype = describe(store)
    fill = fill_bytes(dtype, zk.open_array(store, mode="r").fill_value)
    chain = E.Chain(json.dumps(desc), fill)
    fmt = desc["format"]
    shape = tuple(desc["chunk_shape"])
    keys, chunks = [], []
    for coords in chunk_grid(data.shape, shape):
        key = v3_key(coords) if fmt == 3 else v2_key(coords)
        stored = store.get(key)
        if stored is not None:
            keys.append(key)
            chunks.append(whole_chunk(chain, key, stored, dtype))
    encoded = E.encode_batch(chain, chunks, threads, False)
    # zlib and gzip at level 0 store blocks as long as Python's output buffer has room:
    # compared by value only (gzip at any level, for simplicity).
    has_gzip = "gzip" in json.dumps(desc) or (
        fmt == 2 and (desc["compressor"] or {}).get("id") == "zlib"
        and desc["compressor"]["level"] == 0)
    for key, chunk, mine in zip(keys, chunks, encoded, strict=True):
        assert mine is not None or chain.sharded
        theirs = store.get(key)
        if not has_gzip:
            assert mine == theirs, key
        # Bitwise empty check: None exactly when every item is the fill pattern.
        [skipped] = E.encode_batch(chain, [chunk], 1, True)
        is_fill = chunk.tobytes() == fill * chunk.size
        assert (skipped is None) == is_fill
        if mine is None:
            store.delete(key)
        else:
            store.set(key, mine)
    same_bits(np.asarray(zk.open_array(store, mode="r")[...]).astype(data.dtype), data)


# --- v3, not sharded ------------------------------------------------------------------------


@st.composite
def v3_cases(draw: st.DrawFn) -> tuple[MemoryStore, np.ndarray[Any, Any]]:
    dtype = np.dtype(draw(st.sampled_from(V3_DTYPES)))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=9))
    chunks = tuple(draw(st.integers(1, max(n, 1) + 1)) for n in shape)
    fill = draw(fills(dtype))
    data = draw(data_for(dtype, shape, fill))
    codecs = draw(plain_chain(dtype, len(shape)))
    return write_v3(dtype, data, chunks, codecs, fill), data


@SETTINGS
@given(case=v3_cases(), data=st.data())
def test_v3_read_equals_python(case: Any, data: st.DataObject, tmp_path_factory: Any) -> None:
    store, array = case
    sel = data.draw(selections(array.shape))
    read_plain(store, array, sel, data.draw, tmp_path_factory.mktemp("v3"))


@SETTINGS
@given(case=v3_cases())
def test_v3_encode_equals_python(case: Any) -> None:
    store, array = case
    check_encode(store, array)


# --- v2 -------------------------------------------------------------------------------------


@st.composite
def v2_compressors(draw: st.DrawFn) -> dict[str, Any] | None:
    kind = draw(st.sampled_from([None, "blosc", "zstd", "zlib", "gzip", "lz4"]))
    if kind is None:
        return None
    if kind == "blosc":
        return {"id": "blosc", "cname": draw(st.sampled_from(CNAMES)),
                "clevel": draw(st.integers(0, 9)), "shuffle": draw(st.integers(-1, 2)),
                "blocksize": draw(st.sampled_from([0, 0, 128]))}
    if kind == "zstd":
        return {"id": "zstd", "level": draw(st.integers(-2, 9)), "checksum": draw(st.booleans())}
    if kind == "lz4":
        return {"id": "lz4", "acceleration": draw(st.integers(1, 8))}
    return {"id": kind, "level": draw(st.integers(0, 9))}


@st.composite
def v2_cases(draw: st.DrawFn) -> tuple[MemoryStore, np.ndarray[Any, Any]]:
    dtype = np.dtype(draw(st.sampled_from(V2_DTYPES)))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=9))
    chunks = tuple(draw(st.integers(1, max(n, 1) + 1)) for n in shape)
    fill = draw(fills(dtype))
    data = draw(data_for(dtype, shape, fill))
    order = draw(st.sampled_from(["C", "F"]))
    return write_v2(dtype, data, chunks, order, draw(v2_compressors()), fill), data


@SETTINGS
@given(case=v2_cases(), data=st.data())
def test_v2_read_equals_python(case: Any, data: st.DataObject, tmp_path_factory: Any) -> None:
    store, array = case
    sel = data.draw(selections(array.shape))
    read_plain(store, array, sel, data.draw, tmp_path_factory.mktemp("v2"))


@SETTINGS
@given(case=v2_cases())
def test_v2_encode_equals_python(case: Any) -> None:
    store, array = case
    check_encode(store, array)


# --- sharded --------------------------------------------------------------------------------


@st.composite
def sharded_cases(draw: st.DrawFn) -> tuple[MemoryStore, np.ndarray[Any, Any]]:
    dtype = np.dtype(draw(st.sampled_from(V3_DTYPES)))
    ndim = draw(st.integers(1, 3))
    inner = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    shard = tuple(c * draw(st.integers(1, 3)) for c in inner)
    shape = tuple(draw(st.integers(0, 2 * s + 1)) for s in shard)
    fill = draw(fills(dtype))
    data = draw(data_for(dtype, shape, fill))
    index_codecs = [{"name": "bytes", "configuration": {
        "endian": draw(st.sampled_from(["little", "big"]))}}]
    if draw(st.booleans()):
        index_codecs.append({"name": "crc32c"})
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": draw(plain_chain(dtype, ndim)),
        "index_codecs": index_codecs,
        "index_location": draw(st.sampled_from(["start", "end"]))}}]
    return write_v3(dtype, data, shard, codecs, fill), data


def read_sharded(store: MemoryStore, data: np.ndarray[Any, Any], sel: tuple[slice, ...],
                 draw: st.DrawFn, tmp_path: Any, threads: int = 2) -> None:
    desc, dtype = describe(store)
    fill = fill_bytes(dtype, zk.open_array(store, mode="r").fill_value)
    chain = E.Chain(json.dumps(desc), fill)
    assert chain.sharded
    shard, inner = chain.chunk_shape, chain.inner_shape
    cps = tuple(s // c for s, c in zip(shard, inner, strict=True))
    expected = data[(*sel, Ellipsis)]
    big, view, steps, offsets = output(draw, dtype, expected.shape)
    kind = draw(st.sampled_from(["bytes", "memoryview", "file"]))
    n = [0]
    by_shard: dict[tuple[int, ...], list[Any]] = {}
    for coords, chunk_sel, out_sel in plan(data.shape, inner, sel, steps, offsets):
        shard_coords = tuple(c // k for c, k in zip(coords, cps, strict=True))
        inner_coords = tuple(c % k for c, k in zip(coords, cps, strict=True))
        by_shard.setdefault(shard_coords, []).append((inner_coords, chunk_sel, out_sel))
    tasks = []
    for shard_coords, jobs in by_shard.items():
        key = v3_key(shard_coords)
        stored = store.get(key)
        if stored is None:  # the caller fills shards that are not stored
            for _, _, out_sel in jobs:
                big[tuple(slice(*s) for s in out_sel)] = np.frombuffer(fill, dtype)[0]
            continue
        tasks.append((key, as_source(stored, kind, tmp_path, n), jobs))
    E.decode_shards_into(chain, big, tasks, threads)
    same_bits(view.reshape(expected.shape), expected)


@SETTINGS
@given(case=sharded_cases(), data=st.data())
def test_sharded_read_equals_python(case: Any, data: st.DataObject,
                                    tmp_path_factory: Any) -> None:
    store, array = case
    sel = data.draw(selections(array.shape))
    read_sharded(store, array, sel, data.draw, tmp_path_factory.mktemp("sh"))


@SETTINGS
@given(case=sharded_cases())
def test_sharded_encode_equals_python(case: Any) -> None:
    store, array = case
    check_encode(store, array)


def test_sharded_missing_inner_chunks_fill_and_layout() -> None:
    """Inner chunks equal to the fill (bitwise: -0.0 is stored with fill 0.0) are not
    stored, read back as the fill, and the shard is laid out as zarrkit lays it out."""
    data = np.zeros((8, 8), "<f8")
    data[0, 0] = -0.0
    data[5, 6] = 7.5
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [{"name": "bytes", "configuration": {
            "endian": "little"}}], "index_location": "start"}}]
    store = write_v3(np.dtype("<f8"), data, (8, 8), codecs, 0.0)
    desc, _ = describe(store)
    chain = E.Chain(json.dumps(desc), bytes(8))
    [shard] = E.encode_batch(chain, [data], 1, True)
    assert shard == store.get("c/0/0")
    out = np.full((8, 8), 99.0)
    full = [(c, ((0, 2, 1), (0, 2, 1)), ((2 * c[0], 2 * c[0] + 2, 1), (2 * c[1], 2 * c[1] + 2, 1)))
            for c in itertools.product(range(4), range(4))]
    E.decode_shards_into(chain, out, [("c/0/0", shard, full)], 2)
    same_bits(out, data)
    assert E.encode_batch(chain, [np.zeros((8, 8))], 1, True) == [None]


# --- against numcodecs and zarr-python directly ---------------------------------------------


def test_engine_bytes_equal_numcodecs() -> None:
    """Same C libraries, same bytes: every v2 compressor configuration, on compressible,
    random and one-byte data, beyond blosc's block size."""
    rng = np.random.default_rng(1)
    arrays = [rng.integers(0, 50, (64, 130)).astype("<u2"),
              rng.integers(0, 2**31, (64, 130)).astype("<i4"),
              rng.integers(0, 4, (300, 300)).astype("u1")]
    configs: list[dict[str, Any]] = [
        {"id": "zstd", "level": 1, "checksum": False}, {"id": "zstd", "level": 7,
                                                        "checksum": True},
        {"id": "zstd", "level": -5, "checksum": False},
        {"id": "zlib", "level": 0}, {"id": "zlib", "level": 6}, {"id": "gzip", "level": 9},
        {"id": "gzip", "level": 1}, {"id": "lz4", "acceleration": 1},
        {"id": "lz4", "acceleration": 9},
    ]
    configs += [{"id": "blosc", "cname": c, "clevel": level, "shuffle": s, "blocksize": b}
                for c in CNAMES for level in (1, 9) for s in (-1, 0, 1, 2) for b in (0, 256)]
    for config in configs:
        for a in arrays:
            desc = {"format": 2, "itemsize": a.itemsize, "chunk_shape": list(a.shape),
                    "order": "C", "compressor": config}
            chain = E.Chain(json.dumps(desc), bytes(a.itemsize))
            [mine] = E.encode_batch(chain, [a], 1, False)
            theirs = numcodecs.get_codec(dict(config)).encode(a)
            if config["id"] == "gzip":  # the header's modification time: now vs 0
                theirs = theirs[:4] + bytes(4) + theirs[8:]
            if config.get("level") != 0 or config["id"] not in ("zlib", "gzip"):
                # (level 0 stores blocks as long as Python's output buffer has room)
                assert mine == bytes(theirs), config
            out = np.empty_like(a)
            full = tuple((0, n, 1) for n in a.shape)
            E.decode_into(chain, out, [("k", bytes(theirs), full, full)], 1)
            assert np.array_equal(out, a)


@st.composite
def blosc_zstd_rounds(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Rounds of c-blosc zstd work on one thread: levels, block sizes and sizes that change
    from round to round (each sizes zstd's context differently), some with corrupt input."""
    return draw(st.lists(st.fixed_dictionaries({
        "clevel": st.integers(0, 9), "shuffle": st.sampled_from([0, 1, 2]),
        "blocksize": st.sampled_from([0, 256, 4096, 65536]),
        "items": st.integers(1, 60_000), "seed": st.integers(0, 3),
        "corrupt": st.booleans()}), min_size=2, max_size=8))


@pytest.mark.skipif(sys.platform != "linux",
                    reason="the linker sends c-blosc's zstd calls to the engine on Linux only")
@settings(max_examples=25, deadline=None)
@given(rounds=blosc_zstd_rounds())
def test_blosc_zstd_contexts_are_reused_with_numcodecs_bytes(rounds: list[dict[str, Any]]
                                                             ) -> None:
    """The engine sends c-blosc's per-block zstd calls to one context per thread (a block
    no longer pays for building one). Reused across levels, block sizes, sizes and failed
    frames, the contexts still give numcodecs' bytes and decode what numcodecs wrote."""
    before = E.blosc_zstd_calls()
    for r in rounds:
        rng = np.random.default_rng(r["seed"])
        a = rng.integers(0, 1 << (4 * (r["seed"] + 1)), r["items"]).astype("<u2")
        config = {"id": "blosc", "cname": "zstd", "clevel": r["clevel"],
                  "shuffle": r["shuffle"], "blocksize": r["blocksize"]}
        chain = E.Chain(json.dumps({"format": 2, "itemsize": 2, "chunk_shape": [a.size],
                                    "order": "C", "compressor": config}), bytes(2))
        theirs = bytes(numcodecs.get_codec(dict(config)).encode(a))
        full = ((0, a.size, 1),)
        if r["corrupt"]:
            # A zstd frame broken inside a block: refused, and the context stays usable.
            bad = bytearray(theirs)
            bad[len(bad) // 2:] = bytes(len(bad) - len(bad) // 2)
            try:
                E.decode_into(chain, np.empty_like(a), [("k", bytes(bad), full, full)], 1)
            except E.ChunkDecodeError:
                pass
        [mine] = E.encode_batch(chain, [a], 1, False)
        assert mine == theirs, config
        out = np.empty_like(a)
        E.decode_into(chain, out, [("k", theirs, full, full)], 1)
        assert np.array_equal(out, a)
    # c-blosc copies level 0 and buffers under 128 bytes without calling zstd.
    if any(r["clevel"] > 0 and r["items"] * 2 >= 128 for r in rounds):
        assert E.blosc_zstd_calls() > before


def test_reads_zarr_python_arrays(tmp_path: Any) -> None:
    """Arrays written by zarr-python (v2 and v3, sharded too), read from their files by
    path, offset and length."""
    import zarr

    rng = np.random.default_rng(2)
    data = rng.normal(size=(13, 17)).astype("<f4")
    cases = [
        dict(zarr_format=3, chunks=(4, 8), compressors=[{"name": "blosc", "configuration": {
            "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle"}}]),
        dict(zarr_format=3, chunks=(4, 4), shards=(8, 8),
             compressors=[{"name": "zstd", "configuration": {"level": 2}}]),
        dict(zarr_format=3, chunks=(5, 5), serializer={"name": "bytes", "configuration": {
            "endian": "big"}}, compressors=[{"name": "gzip", "configuration": {"level": 4}}]),
        dict(zarr_format=2, chunks=(6, 6), compressors=numcodecs.LZ4(), order="F"),
        dict(zarr_format=2, chunks=(6, 6), compressors=numcodecs.Zlib(3)),
    ]
    for i, kwargs in enumerate(cases):
        path = tmp_path / f"a{i}"
        z = zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, fill_value=0,
                              **kwargs)
        z[...] = data
        if kwargs["zarr_format"] == 3:
            meta = json.loads((path / "zarr.json").read_text())
            grid = meta["chunk_grid"]["configuration"]["chunk_shape"]
            desc = {"format": 3, "itemsize": 4, "dtype": "<f4", "chunk_shape": grid,
                    "codecs": meta["codecs"]}
        else:
            meta = json.loads((path / ".zarray").read_text())
            grid = meta["chunks"]
            desc = {"format": 2, "itemsize": 4, "chunk_shape": grid, "order": meta["order"],
                    "compressor": meta["compressor"], "filters": meta["filters"]}
        chain = E.Chain(json.dumps(desc), bytes(4))
        out = np.full(data.shape, np.nan, "<f4")
        sel = (slice(None), slice(None))
        if not chain.sharded:
            tasks = []
            for coords, cs, os_ in plan(data.shape, tuple(grid), sel, (1, 1), (0, 0)):
                key = v3_key(coords) if kwargs["zarr_format"] == 3 else v2_key(coords)
                file = path / key
                tasks.append((key, (str(file), 0, file.stat().st_size), cs, os_))
            E.decode_into(chain, out, tasks, 2)
        else:
            inner = chain.inner_shape
            cps = [s // c for s, c in zip(grid, inner, strict=True)]
            by: dict[tuple[int, ...], list[Any]] = {}
            for coords, cs, os_ in plan(data.shape, inner, sel, (1, 1), (0, 0)):
                sc = tuple(c // k for c, k in zip(coords, cps, strict=True))
                ic = tuple(c % k for c, k in zip(coords, cps, strict=True))
                by.setdefault(sc, []).append((ic, cs, os_))
            tasks = []
            for sc, jobs in by.items():
                file = path / v3_key(sc)
                tasks.append((v3_key(sc), (str(file), 0, file.stat().st_size), jobs))
            E.decode_shards_into(chain, out, tasks, 2)
        same_bits(out, data)


# --- threads --------------------------------------------------------------------------------


def test_two_threads_same_as_one() -> None:
    rng = np.random.default_rng(3)
    data = rng.integers(0, 1000, (64, 64, 32)).astype("<u2")
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [8, 8, 8], "codecs": [
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1,
                                                "shuffle": "shuffle"}}]}}]
    store = write_v3(np.dtype("<u2"), data, (32, 32, 32), codecs, 0)
    desc, dtype = describe(store)
    chain = E.Chain(json.dumps(desc), bytes(2))
    shards = [data[i:i + 32, j:j + 32] for i in (0, 32) for j in (0, 32)]
    one = E.encode_batch(chain, shards, 1, True)
    for threads in (2, 3):
        assert E.encode_batch(chain, shards, threads, True) == one
    jobs = [(c, ((0, 8, 1),) * 3, tuple((8 * i, 8 * i + 8, 1) for i in c))
            for c in itertools.product(range(4), range(4), range(4))]
    results = []
    for threads in (1, 2):
        out = np.zeros((2, 2, 32, 32, 32), "<u2")
        tasks = [(f"c/{i}/{j}/0", one[2 * i + j], jobs) for i in (0, 1) for j in (0, 1)]
        for k, (key, shard, _) in enumerate(tasks):
            E.decode_shards_into(chain, out[k // 2, k % 2], [(key, shard, jobs)], threads)
        results.append(out)
        for i, j in itertools.product((0, 1), (0, 1)):
            assert np.array_equal(out[i, j], data[32 * i:32 * i + 32, 32 * j:32 * j + 32])
    assert np.array_equal(results[0], results[1])


# --- hostile input --------------------------------------------------------------------------


def chain_of(codecs: list[Any], shape: tuple[int, ...] = (4, 4), itemsize: int = 2,
             fill: bytes | None = None) -> Any:
    return E.Chain(json.dumps({"format": 3, "itemsize": itemsize, "chunk_shape": list(shape),
                               "dtype": f"<u{itemsize}", "codecs": codecs}),
                   fill if fill is not None else bytes(itemsize))


BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
BB_CHAINS = {
    "raw": [BYTES],
    "blosc": [BYTES, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                         "shuffle": "shuffle"}}],
    "zstd": [BYTES, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    "gzip": [BYTES, {"name": "gzip", "configuration": {"level": 5}}],
    "crc32c": [BYTES, {"name": "crc32c"}],
    "zstd+crc32c": [BYTES, {"name": "zstd", "configuration": {"level": 1}}, {"name": "crc32c"}],
}
V2_LZ4 = {"format": 2, "itemsize": 2, "chunk_shape": [4, 4], "order": "C",
          "compressor": {"id": "lz4", "acceleration": 1}}
V2_ZLIB = {**V2_LZ4, "compressor": {"id": "zlib", "level": 1}}


def all_chains() -> dict[str, Any]:
    chains = {name: chain_of(c) for name, c in BB_CHAINS.items()}
    chains["lz4"] = E.Chain(json.dumps(V2_LZ4), bytes(2))
    chains["zlib"] = E.Chain(json.dumps(V2_ZLIB), bytes(2))
    return chains


FULL = ((0, 4, 1), (0, 4, 1))


def decode(chain: Any, data: Any, key: str = "c/1/2") -> np.ndarray[Any, Any]:
    out = np.zeros((4, 4), "<u2")
    E.decode_into(chain, out, [(key, data, FULL, FULL)], 1)
    return out


@pytest.mark.parametrize("name", [*BB_CHAINS, "lz4", "zlib"])
def test_truncated_and_corrupt_chunks_raise(name: str) -> None:
    chain = all_chains()[name]
    good = np.arange(16, dtype="<u2").reshape(4, 4)
    [data] = E.encode_batch(chain, [good], 1, False)
    assert np.array_equal(decode(chain, data), good)
    for bad in [data[:-1], data[: len(data) // 2], b"", data + b"\0"]:
        if name in ("gzip", "zlib") and bad == data + b"\0":
            continue  # zlib streams, like Python's readers, ignore bytes after their end
        with pytest.raises(E.ChunkDecodeError, match=r"^c/1/2: "):
            decode(chain, bad)
    # A flipped byte anywhere is caught or decodes to 32 bytes of something; never a crash.
    for i in range(len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 0x5A
        try:
            decode(chain, bytes(flipped))
        except E.ChunkDecodeError as e:
            assert str(e).startswith("c/1/2: ")


def test_wrong_decoded_size_is_refused() -> None:
    for name, chain in all_chains().items():
        small = chain_of(BB_CHAINS.get(name, [BYTES]), shape=(4, 5))
        if name in ("lz4", "zlib"):
            small = E.Chain(json.dumps({**(V2_LZ4 if name == "lz4" else V2_ZLIB),
                                        "chunk_shape": [4, 5]}), bytes(2))
        [other] = E.encode_batch(small, [np.ones((4, 5), "<u2")], 1, False)
        with pytest.raises(E.ChunkDecodeError, match="^c/1/2: "):
            decode(chain, other)


def test_lying_headers_do_not_allocate() -> None:
    chains = all_chains()
    good = np.arange(16, dtype="<u2").reshape(4, 4)
    [blosc] = E.encode_batch(chains["blosc"], [good], 1, False)
    for field in (4, 8, 12):  # nbytes, blocksize, cbytes
        for value in (2**31 - 1, 2**32 - 1, 33, 31, 0):
            lie = bytearray(blosc)
            lie[field:field + 4] = value.to_bytes(4, "little")
            try:
                decode(chains["blosc"], bytes(lie))
            except E.ChunkDecodeError:
                pass
    [lz4] = E.encode_batch(chains["lz4"], [good], 1, False)
    for value in (2**31 - 1, 2**32 - 1, 31, 33):
        with pytest.raises(E.ChunkDecodeError, match="lz4"):
            decode(chains["lz4"], value.to_bytes(4, "little") + lz4[4:])
    # A zstd frame of 1 MiB for a 32-byte chunk.
    import zstandard

    bomb = zstandard.ZstdCompressor().compress(bytes(1 << 20))
    with pytest.raises(E.ChunkDecodeError, match="zstd"):
        decode(chains["zstd"], bomb)


def shard_chain(location: str = "end", crc: bool = True) -> Any:
    index = [BYTES, {"name": "crc32c"}] if crc else [BYTES]
    return chain_of([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [BYTES], "index_codecs": index,
        "index_location": location}}])


def shard_read(chain: Any, shard: Any, key: str = "c/0/1") -> np.ndarray[Any, Any]:
    out = np.zeros((4, 4), "<u2")
    jobs = [(c, ((0, 2, 1), (0, 2, 1)), ((2 * c[0], 2 * c[0] + 2, 1), (2 * c[1], 2 * c[1] + 2,
                                                                       1)))
            for c in itertools.product(range(2), range(2))]
    E.decode_shards_into(chain, out, [(key, shard, jobs)], 2)
    return out


@pytest.mark.parametrize("location", ["start", "end"])
def test_bad_shard_indexes_raise(location: str, tmp_path: Any) -> None:
    chain = shard_chain(location)
    good = np.arange(1, 17, dtype="<u2").reshape(4, 4)
    [shard] = E.encode_batch(chain, [good], 1, True)
    assert np.array_equal(shard_read(chain, shard), good)
    at = 0 if location == "start" else len(shard) - 68

    def with_entry(i: int, offset: int, nbytes: int, fix_crc: bool = True) -> bytes:
        import crc32c

        raw = bytearray(shard)
        index = bytearray(raw[at:at + 68])
        index[16 * i:16 * i + 16] = offset.to_bytes(8, "little") + nbytes.to_bytes(8, "little")
        if fix_crc:
            index[64:68] = crc32c.crc32c(bytes(index[:64])).to_bytes(4, "little")
        raw[at:at + 68] = index
        return bytes(raw)

    empty = 2**64 - 1
    cases = [
        ("lies past the end", with_entry(1, len(shard) - 4, 8)),
        ("lies past the end", with_entry(2, 2**63, 8)),
        ("lies past the end", with_entry(2, 10, empty - 5)),
        ("is malformed", with_entry(3, empty, 8)),
        ("checksum mismatch", with_entry(0, 3, 8, fix_crc=False)),
        ("needs 68 bytes, found 40", shard[:40]),
    ]
    for what, bad in cases:
        with pytest.raises(E.ChunkDecodeError, match=r"^c/0/1: .*" + what):
            shard_read(chain, bad)
    # A wrong inner chunk size names the inner chunk.
    with pytest.raises(E.ChunkDecodeError, match=r"^c/0/1 inner chunk \(0, 1\): "):
        shard_read(chain, with_entry(1, 0 if location == "end" else 68, 7))
    # Missing inner chunks read as the fill.
    missing = with_entry(3, empty, empty)
    expected = good.copy()
    expected[2:, 2:] = 0
    assert np.array_equal(shard_read(chain, missing), expected)
    # The same from a file, and a file shorter than its stated range.
    path = tmp_path / "shard"
    path.write_bytes(b"xx" + shard)
    assert np.array_equal(shard_read(chain, (str(path), 2, len(shard))), good)
    with pytest.raises(E.ChunkReadError, match="^c/0/1"):
        shard_read(chain, (str(path), 100, len(shard)))
    # Missing: filled and reported, as is a file that is a symbolic link (deferred).
    out = np.ones((4, 4), "<u2")
    full = [(c, ((0, 2, 1), (0, 2, 1)), ((2 * c[0], 2 * c[0] + 2, 1), (2 * c[1], 2 * c[1] + 2, 1)))
            for c in itertools.product(range(2), range(2))]
    link = tmp_path / "link"
    link.symlink_to(path)
    tasks = [("c/0/1", (str(tmp_path / "nope"), 0, None), full),
             ("c/0/2", (str(link), 2, None), full)]
    assert E.decode_shards_into(chain, out, tasks, 2) == ([0], [1])
    assert not out.any()


def test_bad_arguments_are_value_errors() -> None:
    chain = chain_of([BYTES])
    data = bytes(32)
    out = np.zeros((4, 4), "<u2")
    for chunk_sel, out_sel in [
        (((0, 5, 1), (0, 4, 1)), ((0, 5, 1), (0, 4, 1))),   # outside the chunk
        (FULL, ((1, 5, 1), (0, 4, 1))),                      # outside out
        (FULL, ((0, 2, 1), (0, 4, 1))),                      # different counts
        (((0, 4, 0), (0, 4, 1)), FULL),                      # step 0
        (((0, 4, 1),), ((0, 4, 1),)),                        # wrong dimensions
    ]:
        with pytest.raises(ValueError):
            E.decode_into(chain, out, [("k", data, chunk_sel, out_sel)], 1)
    with pytest.raises(ValueError, match="writable"):
        ro = np.zeros((4, 4), "<u2")
        ro.flags.writeable = False
        E.decode_into(chain, ro, [("k", data, FULL, FULL)], 1)
    with pytest.raises(ValueError, match="items"):
        E.decode_into(chain, np.zeros((4, 4), "<u4"), [("k", data, FULL, FULL)], 1)
    objects = chain_of([BYTES], itemsize=8, fill=bytes(8))
    with pytest.raises(ValueError, match="objects"):
        E.decode_into(objects, np.empty((4, 4), object), [("k", bytes(128), FULL, FULL)], 1)
    with pytest.raises(ValueError, match="objects"):
        E.encode_batch(objects, [np.empty((4, 4), object)], 1, False)
    with pytest.raises(ValueError, match="shape"):
        E.encode_batch(chain, [np.zeros((4, 5), "<u2")], 1, False)
    with pytest.raises(ValueError, match="^unsupported: "):
        chain_of([BYTES, {"name": "numcodecs.delta", "configuration": {"dtype": "<u2"}}])
    with pytest.raises(ValueError, match="^unsupported: "):
        E.Chain(json.dumps({**V2_LZ4, "filters": [{"id": "delta", "dtype": "<u2"}]}),
                bytes(2))
    with pytest.raises(ValueError, match="^unsupported: "):  # a swap needs the dtype
        E.Chain(json.dumps({"format": 3, "itemsize": 2, "chunk_shape": [4],
                            "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}]}),
                bytes(2))
    with pytest.raises(ValueError, match="^invalid"):
        E.Chain("{", b"")
    with pytest.raises(ValueError, match="^invalid"):
        chain_of([BYTES], fill=b"\0")
    assert native.chain_for({**V2_LZ4, "compressor": {"id": "lzma"}}, bytes(2)) is None


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200), name=st.sampled_from([*BB_CHAINS, "lz4", "zlib",
                                                           "shard-end", "shard-start"]),
       seed=st.sampled_from([None, "blosc", "lz4", "zstd"]))
def test_fuzz_random_bytes(data: bytes, name: str, seed: str | None) -> None:
    """Random bytes into every decoder: a value or ChunkDecodeError, nothing else. Some
    inputs start with a valid header so that the decoders get past it."""
    chains = FUZZ_CHAINS
    if seed == "blosc":
        data = FUZZ_SEEDS["blosc"][:16] + data
    elif seed == "lz4":
        data = (32).to_bytes(4, "little") + data
    elif seed == "zstd":
        data = FUZZ_SEEDS["zstd"][:6] + data
    try:
        if name.startswith("shard"):
            shard_read(chains[name], data)
        else:
            decode(chains[name], data)
    except E.ChunkDecodeError as e:
        assert str(e).startswith(("c/1/2", "c/0/1"))


FUZZ_CHAINS = {**all_chains(), "shard-end": shard_chain("end"),
               "shard-start": shard_chain("start", crc=False)}
FUZZ_SEEDS = {name: E.encode_batch(FUZZ_CHAINS[name], [np.arange(16, dtype="<u2").reshape(4, 4)],
                                   1, False)[0] for name in ("blosc", "zstd")}


def test_out_layouts_and_fill() -> None:
    """Big-endian stored items and complex halves swap into native order; transposed
    chunks land in any output layout."""
    a = (np.arange(24) + 1j * (100 + np.arange(24))).astype("<c16").reshape(2, 3, 4)
    codecs = [{"name": "transpose", "configuration": {"order": [2, 0, 1]}},
              {"name": "bytes", "configuration": {"endian": "big"}}]
    chain = E.Chain(json.dumps({"format": 3, "itemsize": 16, "dtype": "<c16",
                                "chunk_shape": [2, 3, 4], "codecs": codecs}), bytes(16))
    stored = np.transpose(a, (2, 0, 1)).astype(">c16").tobytes()
    [mine] = E.encode_batch(chain, [np.asfortranarray(a)], 1, False)
    assert mine == stored
    full = ((0, 2, 1), (0, 3, 1), (0, 4, 1))
    for order in "CF":
        out = np.zeros((2, 3, 4), "<c16", order=order)
        E.decode_into(chain, out, [("c/0/0/0", stored, full, full)], 1)
        assert np.array_equal(out, a)
    rev = np.zeros((2, 3, 4), "<c16")[::-1, :, ::-1]
    E.decode_into(chain, rev, [("c/0/0/0", stored, full, full)], 1)
    assert np.array_equal(rev, a)


def test_zero_dimensional_and_empty() -> None:
    chain = E.Chain(json.dumps({"format": 2, "itemsize": 8, "chunk_shape": [], "order": "C",
                                "compressor": {"id": "zstd", "level": 1}}), bytes(8))
    x = np.array(3.5)
    [data] = E.encode_batch(chain, [x], 1, True)
    out = np.zeros(())
    E.decode_into(chain, out, [("0", data, (), ())], 1)
    assert out[()] == 3.5
    assert E.encode_batch(chain, [np.array(0.0)], 1, True) == [None]
    assert E.encode_batch(chain, [np.array(-0.0)], 1, True) != [None]  # bitwise
    E.decode_into(chain, out, [], 2)


def test_file_sources_report_missing_and_deferred_chunks(tmp_path: Any) -> None:
    """Whole-file sources (length None) are read to their end; a missing file or a
    directory is filled and reported missing; a file that is a symbolic link is never
    followed and is reported deferred, with its region untouched."""
    zstd = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
    chain = chain_of([BYTES, zstd], shape=(1, 4, 4))
    data = np.arange(16, dtype="<u2").reshape(1, 4, 4)
    [stored] = E.encode_batch(chain, [data], 1, False)
    (tmp_path / "c").write_bytes(stored)
    (tmp_path / "d").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "c")
    names = ["c", "nope", "d", "link", "nodir/x"]
    out = np.full((5, 4, 4), 7, "<u2")
    tasks = [(name, (str(tmp_path / name), 0, None), ((0, 1, 1), *FULL),
              ((i, i + 1, 1), *FULL)) for i, name in enumerate(names)]
    assert E.decode_into(chain, out, tasks, 2) == ([1, 2, 4], [3])
    assert np.array_equal(out[0], data[0])
    assert not out[[1, 2, 4]].any()
    assert (out[3] == 7).all()


def test_descriptor_sources_read_ranges_of_an_open_file(tmp_path: Any) -> None:
    """``(fd, name, offset, length, crc32)`` sources (a ZIP archive's stored members) are
    read with pread on the caller's descriptor, which stays open; a checksum that does not
    match, a range past the end of the file and a descriptor that is not open are errors
    naming the chunk, never a crash."""
    zstd = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
    chain = chain_of([BYTES, zstd], shape=(1, 4, 4))
    data = np.arange(16, dtype="<u2").reshape(1, 4, 4)
    [stored] = E.encode_batch(chain, [data], 1, False)
    path = tmp_path / "archive"
    path.write_bytes(b"header" + stored + b"trailer")
    crc = zlib.crc32(stored)
    sel = ((0, 1, 1), *FULL)
    with open(path, "rb") as archive:
        fd = archive.fileno()

        def read(source: Any) -> np.ndarray[Any, Any]:
            out = np.zeros((1, 4, 4), "<u2")
            E.decode_into(chain, out, [("c/0/1", source, sel, sel)], 1)
            return out

        for check in (crc, None):
            np.testing.assert_array_equal(read((fd, str(path), 6, len(stored), check)), data)
        with pytest.raises(E.ChunkDecodeError, match="^c/0/1: .*CRC-32"):
            read((fd, str(path), 6, len(stored), crc ^ 1))
        with pytest.raises(E.ChunkReadError, match="^c/0/1: "):
            read((fd, str(path), 6, len(stored) + 100, None))
        os.pread(fd, 1, 0)  # still open: the engine never closes the caller's descriptor
    for bad_fd in (-1, 2**30):  # none, and a number beyond any open descriptor
        with pytest.raises(E.ChunkReadError, match="^c/0/1: "):
            read((bad_fd, str(path), 6, len(stored), None))
    with pytest.raises(ValueError, match="descriptor source"):
        read((fd, str(path), -6, len(stored), None))


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300))
def test_fuzz_json_scan(data: bytes) -> None:
    """Any bytes: a depth and a digit run no larger than the text, nothing else."""
    depth, digits, _ = E.json_scan(data)
    assert 0 <= depth <= len(data) and 0 <= digits <= len(data)


def test_grid_values_are_fetched_once_by_name_and_missing_ones_filled() -> None:
    """``decode_grid_values_into`` names every chunk of the box as the store does, asks
    ``fetch`` for all of them in one call, fills the regions of those it gets None for
    with the fill value, and refuses a fetch that answers for other than every chunk."""
    data = np.arange(8 * 8, dtype="<u2").reshape(8, 8)
    chain = chain_of([BYTES], fill=(7).to_bytes(2, "little"))
    values = {f"p/{i}.{j}": data[4 * i:4 * i + 4, 4 * j:4 * j + 4].tobytes()
              for i in range(2) for j in range(2) if (i, j) != (1, 0)}
    asked: list[list[str]] = []

    def fetch(keys: list[str]) -> list[bytes | None]:
        asked.append(keys)
        return [values.get(key) for key in keys]

    # Rows 1, 3, 5, 7 (both row chunks), columns 2..6 (both column chunks).
    rows = [(0, (1, 4, 2), (0, 2, 1)), (1, (1, 4, 2), (2, 4, 1))]
    columns = [(0, (2, 4, 1), (0, 2, 1)), (1, (0, 2, 1), (2, 4, 1))]
    out = np.zeros((4, 4), "<u2")
    missing, deferred = E.decode_grid_values_into(chain, out, [rows, columns], fetch, "p/",
                                                  ".", 2)
    expected = data[1::2, 2:6].copy()
    expected[2:, :2] = 7  # chunk (1, 0) is not stored
    np.testing.assert_array_equal(out, expected)
    assert (missing, deferred) == (1, [])
    assert asked == [["p/0.0", "p/0.1", "p/1.0", "p/1.1"]]
    with pytest.raises(ValueError, match="3 values for 4 chunks"):
        E.decode_grid_values_into(chain, out, [rows, columns], lambda keys: keys[:3] and
                                  [values.get(key) for key in keys[:3]], "p/", ".", 1)
    with pytest.raises(KeyError):
        E.decode_grid_values_into(chain, out, [rows, columns],
                                  lambda keys: [values[key] for key in keys], "p/", ".", 1)
    sharded = E.Chain(json.dumps({"format": 3, "itemsize": 2, "chunk_shape": [4, 4],
                                  "dtype": "<u2", "codecs": [{
                                      "name": "sharding_indexed", "configuration": {
                                          "chunk_shape": [2, 2], "codecs": [BYTES],
                                          "index_codecs": [BYTES]}}]}), bytes(2))
    asked.clear()
    with pytest.raises(ValueError, match="sharded"):
        E.decode_grid_values_into(sharded, out, [rows, columns], fetch, "p/", ".", 1)
    assert asked == []  # refused before anything is fetched
