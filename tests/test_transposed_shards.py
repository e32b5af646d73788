"""Shards of a transposed chunk: codecs ``transpose`` then ``sharding_indexed`` (tensorstore
writes these), transposes inside a shard's inner codecs (with and without the outer one),
and shards nested in shards.

The sharding codec sees the shape the transpose leaves (the shard shape with its axes
permuted), so its inner chunk shape divides *that* shape, not the array's chunk shape.
Arrays are written by tensorstore, by zarr-python and by zarrkit, read by zarrkit with
both engines (and zarrkit's writes read back by both peers), over random transpose orders,
shard and inner shapes, dtypes, byte orders, array shapes with edge shards and index
locations (slices, integers, ``oindex``, ``vindex``); numpy is the oracle.

zarr-python 3.4.2 checks the inner chunk shape against the chunk grid *before* the
transpose (``ShardingCodec.validate`` is handed the array's chunk grid), so it refuses to
open such an array unless the inner chunks also divide the untransposed shard: its writes
are drawn only among those, and :func:`test_zarr_python_refuses_what_it_should_open`
records the refusal.
"""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tensorstore as ts
import zarr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit import native

ENGINES = ("native", "python")
DTYPES = ("u1", "i2", "u4", "f4", "f8", "i8")


@dataclass(frozen=True)
class Case:
    """One array: its shape, dtype, chunk (shard, in the array's axes) shape and codecs."""

    shape: tuple[int, ...]
    dtype: str
    chunks: tuple[int, ...]
    codecs: list[dict[str, Any]]
    fill_value: int
    #: Whether zarr-python 3.4.2 opens it (its check of the untransposed shard passes).
    zarr_python_opens: bool
    #: The engine that reads it when the native one is allowed: it takes sharding_indexed
    #: only alone (transposes inside are its own), and no shard inside a shard.
    engine: str = "python"


def _bytes_codec(dtype: str, big: bool) -> dict[str, Any]:
    if np.dtype(dtype).itemsize == 1:
        return {"name": "bytes"}
    return {"name": "bytes", "configuration": {"endian": "big" if big else "little"}}


def _transpose(order: tuple[int, ...]) -> dict[str, Any]:
    return {"name": "transpose", "configuration": {"order": list(order)}}


@st.composite
def cases(draw: st.DrawFn) -> Case:
    ndim = draw(st.integers(1, 3))
    # Without the outer transpose the shards are the sharded partial I/O's (and, but for
    # a nested shard, the native engine's), with transposes inside them.
    outer = draw(st.integers(0, 2)) > 0
    order = tuple(draw(st.permutations(range(ndim)))) if outer else tuple(range(ndim))
    inner = tuple(draw(st.integers(1, 4)) for _ in range(ndim))  # in the transposed axes
    per_shard = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    transposed = tuple(i * n for i, n in zip(inner, per_shard, strict=True))
    chunks = [0] * ndim
    for k, axis in enumerate(order):  # the transpose puts array axis order[k] at k
        chunks[axis] = transposed[k]
    shape = tuple(draw(st.integers(1, 2 * c + 1)) for c in chunks)  # edge shards mostly
    dtype = draw(st.sampled_from(DTYPES))
    inner_codecs: list[dict[str, Any]] = []
    inner_shape = inner
    if ndim > 1 and draw(st.booleans()):
        inner_order = tuple(draw(st.permutations(range(ndim))))
        inner_codecs.append(_transpose(inner_order))
        inner_shape = tuple(inner[i] for i in inner_order)
    serializer = _bytes_codec(dtype, draw(st.booleans()))
    kind = draw(st.sampled_from(["plain", "zstd", "crc32c", "nested"]))
    if kind == "nested":  # a shard inside the shard, of what the inner transpose leaves
        sub = tuple(draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
                    for n in inner_shape)
        inner_codecs.append({"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(sub), "codecs": [serializer],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_location": draw(st.sampled_from(["start", "end"]))}})
    else:
        inner_codecs.append(serializer)
        if kind == "zstd":
            inner_codecs.append({"name": "zstd", "configuration": {"level": 1,
                                                                   "checksum": False}})
        elif kind == "crc32c":
            inner_codecs.append({"name": "crc32c"})
    codecs = [_transpose(order)] if outer else []
    codecs.append({"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": inner_codecs,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": draw(st.sampled_from(["start", "end"]))}})
    opens = all(c % i == 0 for c, i in zip(chunks, inner, strict=True))
    engine = "native" if not outer and kind != "nested" and native.built() else "python"
    return Case(shape, dtype, tuple(chunks), codecs, draw(st.integers(0, 9)), opens, engine)


def _values(case: Case, seed: int) -> np.ndarray:
    count = int(np.prod(case.shape))
    return (np.arange(count) * 7 + seed).reshape(case.shape).astype(case.dtype) % 120 + 10


def _region(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[slice, ...]:
    """A box of the array (possibly empty along nothing), to leave some shards unwritten."""
    box = []
    for n in shape:
        start = draw(st.integers(0, n - 1))
        box.append(slice(start, draw(st.integers(start + 1, n))))
    return tuple(box)


def _selections(draw: st.DrawFn, shape: tuple[int, ...]) -> list[tuple[str, Any]]:
    """Index locations of every kind: basic (slices with steps and integers), oindex,
    vindex."""
    basic: list[Any] = []
    for n in shape:
        if draw(st.booleans()):
            basic.append(draw(st.integers(-n, n - 1)))
        else:
            basic.append(slice(draw(st.integers(0, n)), draw(st.integers(0, n)),
                               draw(st.integers(1, 4))))
    ortho = tuple(np.array(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=5)))
                  for n in shape)
    points = draw(st.integers(1, 6))
    vector = tuple(np.array(draw(st.lists(st.integers(0, n - 1), min_size=points,
                                          max_size=points))) for n in shape)
    return [("basic", tuple(basic)), ("basic", ...), ("oindex", ortho), ("vindex", vector)]


def _read(array: Any, kind: str, selection: Any) -> np.ndarray:
    if kind == "oindex":
        return np.asarray(array.oindex[selection])
    if kind == "vindex":
        return np.asarray(array.vindex[selection])
    return np.asarray(array[selection])


def _expect(expected: np.ndarray, kind: str, selection: Any) -> np.ndarray:
    if kind == "oindex":
        return expected[np.ix_(*selection)]
    return np.asarray(expected[selection])


def _check_zarrkit_reads(path: Path, expected: np.ndarray,
                         selections: list[tuple[str, Any]], case: Case | None = None) -> None:
    for engine in ENGINES:
        with zk.config.set(engine=engine):
            array = zk.open_array(path, mode="r")
            if case is not None:
                assert array.engine == (case.engine if engine == "native" else "python")
            for kind, selection in selections:
                np.testing.assert_array_equal(_read(array, kind, selection),
                                              _expect(expected, kind, selection),
                                              err_msg=f"{engine} engine, {kind} {selection}")


def _ts_spec(path: Path, case: Case | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": "zarr3", "kvstore": {"driver": "file",
                                                          "path": str(path)}}
    if case is not None:
        spec.update(create=True, delete_existing=True, metadata={
            "shape": list(case.shape), "data_type": np.dtype(case.dtype).name,
            "chunk_grid": {"name": "regular", "configuration": {
                "chunk_shape": list(case.chunks)}},
            "codecs": case.codecs, "fill_value": case.fill_value})
    return spec


@contextmanager
def _quiet_zarr() -> Iterator[None]:
    """zarr-python warns that codecs around sharding_indexed disable its partial I/O."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Combining a `sharding_indexed` codec")
        yield


def _write_with(writer: str, path: Path, case: Case, region: tuple[slice, ...],
                values: np.ndarray) -> None:
    if writer == "tensorstore":
        array = ts.open(_ts_spec(path, case)).result()
        array[region] = values[region]
    elif writer == "zarr-python":
        with _quiet_zarr():
            array = zarr.create(shape=case.shape, chunks=case.chunks, dtype=case.dtype,
                                zarr_format=3, codecs=case.codecs, fill_value=case.fill_value,
                                store=zarr.storage.LocalStore(path))
            array[region] = values[region]
    else:
        array = zk.create(shape=case.shape, chunks=case.chunks, dtype=case.dtype,
                          codecs=case.codecs, fill_value=case.fill_value, zarr_format=3,
                          store=path)
        array[region] = values[region]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), data=st.data())
def test_reads_of_what_each_writer_wrote_match_numpy(case: Case, data: st.DataObject) -> None:
    writers = ["tensorstore", "zarrkit"] + (["zarr-python"] if case.zarr_python_opens else [])
    region = _region(data.draw, case.shape)
    values = _values(case, 1)
    expected = np.full(case.shape, case.fill_value, dtype=case.dtype)
    expected[region] = values[region]
    selections = _selections(data.draw, case.shape)
    with tempfile.TemporaryDirectory() as tmp:
        for writer in writers:
            path = Path(tmp) / writer
            _write_with(writer, path, case, region, values)
            _check_zarrkit_reads(path, expected, selections, case)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), data=st.data())
def test_zarrkit_writes_into_peer_arrays_and_peers_read_them(case: Case,
                                                             data: st.DataObject) -> None:
    """zarrkit overwrites part of an array a peer wrote (shards rewritten whole, others
    kept), then writes elsewhere by oindex; tensorstore and zarr-python read the result."""
    engine = data.draw(st.sampled_from(ENGINES))
    first, second = _region(data.draw, case.shape), _region(data.draw, case.shape)
    values = _values(case, 3)
    expected = np.full(case.shape, case.fill_value, dtype=case.dtype)
    expected[first] = values[first]
    update = (_values(case, 5) % 7).astype(case.dtype)
    with tempfile.TemporaryDirectory() as tmp:
        for writer in ["tensorstore", "zarrkit"]:
            path = Path(tmp) / writer
            _write_with(writer, path, case, first, values)
            oracle = expected.copy()
            with zk.config.set(engine=engine):
                array = zk.open_array(path, mode="r+")
                array[second] = update[second]
                oracle[second] = update[second]
                rows = np.unique(np.array(data.draw(st.lists(
                    st.integers(0, case.shape[0] - 1), min_size=1, max_size=3))))
                array.oindex[(rows,) + (slice(None),) * (len(case.shape) - 1)] = 9
                oracle[rows] = 9
            np.testing.assert_array_equal(ts.open(_ts_spec(path)).result().read().result(),
                                          oracle)
            if case.zarr_python_opens:
                with _quiet_zarr():
                    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...],
                                                  oracle)
            _check_zarrkit_reads(path, oracle, [("basic", ...)])


def test_the_reported_array_opens_and_reads(tmp_path: Path) -> None:
    """The issue's array: shards of (32, 24) transposed to (24, 32), inner chunks (6, 8)."""
    case = Case((70, 50), "i4", (32, 24), [_transpose((1, 0)), {
        "name": "sharding_indexed", "configuration": {"chunk_shape": [6, 8],
                                                      "codecs": [_bytes_codec("i4", False)]}}],
        0, False)
    values = _values(case, 0)
    _write_with("tensorstore", tmp_path, case, (slice(None),) * 2, values)
    _check_zarrkit_reads(tmp_path, values, [("basic", ...), ("basic", (slice(3, 65, 4), 7)),
                                            ("oindex", (np.array([69, 0, 31]),
                                                        np.array([49, 23, 24])))])


def test_zarr_python_refuses_what_it_should_open(tmp_path: Path) -> None:
    """zarr-python 3.4.2's own bug: it checks the inner chunks against the shard shape
    before the transpose, so the issue's array (valid by the spec, written by
    tensorstore, read by zarrkit) does not open."""
    case = Case((70, 50), "i4", (32, 24), [_transpose((1, 0)), {
        "name": "sharding_indexed", "configuration": {"chunk_shape": [6, 8],
                                                      "codecs": [_bytes_codec("i4", False)]}}],
        0, False)
    _write_with("tensorstore", tmp_path, case, (slice(None),) * 2, _values(case, 0))
    with pytest.raises(ValueError, match="not divisible by the shard's inner chunk size"):
        zarr.open_array(tmp_path, mode="r")
    zk.open_array(tmp_path, mode="r")


def test_an_array_with_codecs_around_its_shards_reports_what_zarr_python_does(
        tmp_path: Path) -> None:
    """Sharded, for zarr-python, means sharding_indexed is the only codec: with a transpose
    before it, ``chunks`` is the chunk grid's, ``shards`` None, and the chunk counts are of
    stored chunks (not of inner chunks counted along the wrong axes)."""
    case = Case((50, 70), "i4", (24, 24), [_transpose((1, 0)), {
        "name": "sharding_indexed", "configuration": {"chunk_shape": [8, 6],
                                                      "codecs": [_bytes_codec("i4", False)]}}],
        0, True)
    _write_with("zarr-python", tmp_path, case, (slice(0, 30), slice(None)), _values(case, 0))
    with _quiet_zarr():
        peer = zarr.open_array(tmp_path, mode="r")
    ours = zk.open_array(tmp_path, mode="r")
    for name in ("chunks", "shards", "cdata_shape", "nchunks", "nchunks_initialized",
                 "read_chunk_sizes", "write_chunk_sizes"):
        assert getattr(ours, name) == getattr(peer, name), name
    assert "Shard shape" not in str(ours.info)


def test_the_native_engine_declines_codecs_around_shards(tmp_path: Path) -> None:
    """The engine takes ``sharding_indexed`` only as the sole codec: with a transpose
    before it the array takes the Python path (and reads right, above)."""
    case = Case((10, 12), "u1", (4, 6), [_transpose((1, 0)), {
        "name": "sharding_indexed", "configuration": {"chunk_shape": [3, 2],
                                                      "codecs": [{"name": "bytes"}]}}],
        0, False)
    _write_with("zarrkit", tmp_path, case, (slice(None),) * 2, _values(case, 0))
    assert zk.open_array(tmp_path, mode="r").engine == "python"


def test_largest_allocation_is_of_the_shard_the_codec_sees() -> None:
    """The shard index a read allocates is counted for the transposed shard (and for a
    nested shard, for the inner chunk as the inner transpose leaves it)."""
    from zarrkit.hierarchy.array_layout import ArrayLayout
    from zarrkit.hierarchy.creation import array_metadata

    meta = array_metadata(zarr_format=3, shape=(64, 6), chunks=(64, 6), dtype="u1",
                          codecs=[_transpose((1, 0)), {
                              "name": "sharding_indexed", "configuration": {
                                  "chunk_shape": [3, 1],
                                  "codecs": [_transpose((1, 0)), {
                                      "name": "sharding_indexed", "configuration": {
                                          "chunk_shape": [1, 1], "codecs": ["bytes"]}}]}}])
    nbytes, what = ArrayLayout.of(meta).largest_allocation
    # The outer shard (6, 64) holds 2 x 64 inner chunks: its index is 128 * 16 + 4 bytes.
    assert (nbytes, what) == (2052, "the index of a shard of (2, 64) inner chunks "
                                    "(2052 bytes)")
