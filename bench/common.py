"""Shared definitions of the benchmark suite: sizes, datasets, data generation, checksums.

Both the orchestrator (``run.py``) and the measurement child (``worker.py``) import this
module, so a dataset or a layout is defined once and every process agrees on it.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

THREADS = 2
"""Worker threads every library gets: this machine has 2 cores."""

SEED = 20240601
"""Seed of every random draw (data noise, read positions), so runs are comparable."""

NOISE_SIGMA = 4.0
"""Standard deviation of the Gaussian noise added to the smooth field."""

LIBS = ("zarrkit", "zarr", "zarr-fused", "tensorstore")
"""Libraries of the array cases, in report order: zarrkit, then the peers."""

CASE_LIBS = {"S13": ("zarrkit", "pydantic-zarr")}
"""Cases measured against other libraries than :data:`LIBS`: S13 compares zarrkit's object
model (``zarrkit.models``) with pydantic-zarr's, which runs on zarr-python."""

LIB_LABELS = {
    "zarrkit": "zarrkit",
    "zarr": "zarr-python",
    "zarr-fused": "zarr-python Fused",
    "tensorstore": "tensorstore",
    "pydantic-zarr": "pydantic-zarr",
}


def case_libs(case: str, available: Iterable[str]) -> list[str]:
    """The libraries of ``available`` that case ``case`` (S1, S13, ...) is measured with."""
    wanted = CASE_LIBS.get(case, LIBS)
    return [lib for lib in available if lib in wanted]


@dataclass(frozen=True)
class ArraySpec:
    """How one on-disk (or in-memory) array is laid out and encoded.

    ``codec`` is one of ``blosc-zstd`` (cname zstd, clevel 3, byte shuffle), ``blosc-lz4``
    (clevel 5, byte shuffle), ``zstd`` (level 3, no checksum) or ``none``; ``shards`` makes a
    v3 array sharded with ``chunks`` as the inner chunk shape and a crc32c index.
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    codec: str
    zarr_format: int = 3
    dtype: str = "uint16"
    shards: tuple[int, ...] | None = None

    @property
    def nbytes(self) -> int:
        """Uncompressed size of the whole array."""
        return math.prod(self.shape) * np.dtype(self.dtype).itemsize

    @property
    def nchunks(self) -> int:
        """Number of (inner) chunks covering the array."""
        return math.prod(math.ceil(s / c) for s, c in zip(self.shape, self.chunks, strict=True))

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form, to hand the spec to a child process."""
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ArraySpec:
        """The inverse of :meth:`to_json`."""
        shards = doc.get("shards")
        return cls(shape=tuple(doc["shape"]), chunks=tuple(doc["chunks"]), codec=doc["codec"],
                   zarr_format=doc["zarr_format"], dtype=doc["dtype"],
                   shards=tuple(shards) if shards else None)


@dataclass(frozen=True)
class Sizes:
    """Every size of the suite, for the full mode (``scale=1``) or ``--quick`` (16).

    Quick mode divides each data size by 16; the random-read counts and the hierarchy
    size are divided by 16 too, since they scale the run time the same way.
    """

    scale: int
    big: tuple[int, ...] = field(init=False)
    s5: tuple[int, ...] = field(init=False)
    s6: tuple[int, ...] = field(init=False)
    s8: tuple[int, ...] = field(init=False)
    s11: tuple[int, ...] = field(init=False)
    s12_shards: tuple[int, ...] = field(init=False)
    n_reads: int = field(init=False)
    n_arrays: int = field(init=False)
    s10_seconds: float = field(init=False)

    def __post_init__(self) -> None:
        quick = self.scale != 1
        # 1 GiB = 512x1024x1024 uint16; /16 splits the factor over the axes (4, 2, 2) so
        # chunks stay 128^3 and there are still several per axis.
        set_ = object.__setattr__
        set_(self, "big", (128, 512, 512) if quick else (512, 1024, 1024))
        set_(self, "s5", (1024, 1024) if quick else (4096, 4096))
        set_(self, "s6", (64, 256, 256) if quick else (256, 512, 512))
        set_(self, "s8", (64, 256, 512) if quick else (256, 512, 1024))
        # S11: 512 MiB (quick 32 MiB, /16 as (4, 2, 2) like big); every axis a multiple of
        # its 64^3 shards, so both modes write whole shards only.
        set_(self, "s11", (128, 256, 512) if quick else (512, 512, 1024))
        # S12 reads S8's shape (256 MiB, quick 16 MiB); quick shards are smaller than S7's
        # so that its partial read still spans 4 shards (a 1x2x4 shard grid either way).
        set_(self, "s12_shards", (64, 128, 128) if quick else (256, 256, 256))
        set_(self, "n_reads", 1000 // self.scale)
        set_(self, "n_arrays", 1000 // self.scale)
        # Each S10 selection is called for this long (at least 5 calls) per process.
        set_(self, "s10_seconds", 0.1 if quick else 0.3)


def clip_shards(shards: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """Shard shape no larger than the array, so quick mode still writes whole shards."""
    return tuple(min(s, n) for s, n in zip(shards, shape, strict=True))


def dataset_specs(sizes: Sizes) -> dict[str, ArraySpec]:
    """The on-disk arrays read by the cases, keyed by dataset name."""
    big = sizes.big
    return {
        "s2": ArraySpec(big, (128, 128, 128), "blosc-zstd"),
        "s3": ArraySpec(big, (128, 128, 128), "blosc-zstd", zarr_format=2),
        "s4": ArraySpec(big, (128, 128, 128), "none"),
        "s5": ArraySpec(sizes.s5, (64, 64), "zstd"),
        "s6": ArraySpec(sizes.s6, (32, 32, 32), "blosc-lz4"),
        "s7": ArraySpec(big, (32, 32, 32), "blosc-zstd",
                        shards=clip_shards((256, 256, 256), big)),
        "s11": _s11_spec(sizes),
        # S12, read over HTTP: S2's chunks and S7's inner chunks on S8's 256 MiB shape.
        "s12": ArraySpec(sizes.s8, (128, 128, 128), "blosc-zstd"),
        "s12s": ArraySpec(sizes.s8, (32, 32, 32), "blosc-zstd", shards=sizes.s12_shards),
    }


def write_specs(sizes: Sizes) -> dict[str, ArraySpec]:
    """The arrays the write cases create, keyed by case."""
    big = sizes.big
    return {
        "S1": ArraySpec(big, (128, 128, 128), "blosc-zstd"),
        "S3w": ArraySpec(big, (128, 128, 128), "blosc-zstd", zarr_format=2),
        "S5": ArraySpec(sizes.s5, (64, 64), "zstd"),
        "S8": ArraySpec(sizes.s8, (32, 32, 32), "blosc-zstd",
                        shards=clip_shards((256, 256, 256), sizes.s8)),
        # S11 writes the layout its read-all reads.
        "S11": _s11_spec(sizes),
    }


def _s11_spec(sizes: Sizes) -> ArraySpec:
    """S11's layout: 64^3 shards of 16^3 inner chunks (8 KiB of uint16), 4096 inner chunks a
    shard, with S7's codecs (blosc zstd 3 shuffle, crc32c index)."""
    return ArraySpec(sizes.s11, (16, 16, 16), "blosc-zstd",
                     shards=clip_shards((64, 64, 64), sizes.s11))


S10_SHAPE = (60632, 4, 1, 10)
S10_CHUNKS = (15158, 1, 1, 5)
"""zarr-python 3.1's automatic chunks for S10's shape and dtype, used by every library."""

SOURCE_SALTS = {"big": 1, "s5": 5, "s6": 6, "s8": 8, "s11": 11}
"""Raw sources and the salt of their random draws: S1–S4 and S7 share ``big``; S11's shape
matches no other source, so it has its own."""

DATASET_SOURCES = {"s2": "big", "s3": "big", "s4": "big", "s5": "s5", "s6": "s6", "s7": "big",
                   "s11": "s11", "s12": "s8", "s12s": "s8"}
"""The source each read dataset is written from."""


def source_shape(sizes: Sizes, source: str) -> tuple[int, ...]:
    """Shape of the raw source data named ``source``."""
    return {"big": sizes.big, "s5": sizes.s5, "s6": sizes.s6, "s8": sizes.s8,
            "s11": sizes.s11}[source]


def source_path(root: Path, source: str) -> Path:
    """Where the raw little-endian uint16 bytes of ``source`` live."""
    return root / "sources" / f"{source}.u16"


@functools.lru_cache(maxsize=4)
def _diagonal_wave(ny: int, nx: int) -> np.ndarray[Any, Any]:
    """The plane-independent part of the field, computed once per plane shape."""
    y = np.arange(ny, dtype=np.float32)
    x = np.arange(nx, dtype=np.float32)
    wave = 20000.0 + 3000.0 * np.sin((y[:, None] + x[None, :]) / np.float32(97.0))
    wave.flags.writeable = False
    return wave


def _plane(index: int, shape: tuple[int, ...], salt: int) -> np.ndarray[Any, Any]:
    """One plane (the last two axes) of the image-like field: smooth waves plus noise.

    Each plane has its own generator seeded by (seed, salt, plane index), so a plane's
    values do not depend on how the data is cut into slabs or which thread makes it.
    """
    ny, nx = shape
    rng = np.random.default_rng([SEED, salt, index])
    z = np.float32(index)
    y = np.arange(ny, dtype=np.float32)
    x = np.arange(nx, dtype=np.float32)
    # sin(z/37 + y/61) * cos(x/53 - z/29): separable, so it costs two 1-d evaluations.
    field_ = np.outer(np.float32(6000.0) * np.sin(z / np.float32(37.0) + y / np.float32(61.0)),
                      np.cos(x / np.float32(53.0) - z / np.float32(29.0)))
    field_ += _diagonal_wave(ny, nx)
    noise = rng.standard_normal((ny, nx), dtype=np.float32)
    noise *= np.float32(NOISE_SIGMA)
    field_ += noise
    np.rint(field_, out=field_)
    np.clip(field_, 0, 65535, out=field_)
    return field_.astype("<u2")


_PLANES_IN_FLIGHT = 8
"""Planes generated at once (by :data:`THREADS` threads) before they are written."""


def generate_source(path: Path, shape: tuple[int, ...], salt: int) -> int:
    """Write the deterministic uint16 data of ``shape`` to ``path`` a few planes at a time
    (never the whole array in memory); return its crc32c."""
    from concurrent.futures import ThreadPoolExecutor

    import crc32c

    path.parent.mkdir(parents=True, exist_ok=True)
    plane_shape = shape[-2:]
    n_planes = math.prod(shape[:-2])
    crc = 0
    # numpy's generators and ufuncs release the GIL, so threads make planes in parallel.
    with open(path, "wb") as f, ThreadPoolExecutor(THREADS) as pool:
        for first in range(0, n_planes, _PLANES_IN_FLIGHT):
            indexes = range(first, min(first + _PLANES_IN_FLIGHT, n_planes))
            for plane in pool.map(lambda i: _plane(i, plane_shape, salt), indexes):
                crc = crc32c.crc32c(plane.data, crc)
                f.write(plane.data)
    return crc


def load_source(path: Path, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """The raw source as an in-memory array (read from the page cache)."""
    return np.fromfile(path, dtype="<u2").reshape(shape)


def checksum(array: np.ndarray[Any, Any]) -> int:
    """crc32c of the array's values in C order."""
    import crc32c

    data = np.ascontiguousarray(array)
    return int(crc32c.crc32c(data.reshape(-1).view(np.uint8).data))


def hierarchy_digest(attributes: dict[str, Any],
                     members: Iterable[tuple[str, dict[str, Any], Sequence[int], str]]) -> int:
    """crc32c of a hierarchy's group attributes and its members' (name, attributes, shape,
    dtype), in name order: whatever library read or wrote it, the same hierarchy gives the
    same number (dtype as numpy's ``str``, tuples as JSON lists)."""
    import json

    import crc32c

    rows = sorted([name, attrs, [int(n) for n in shape], np.dtype(dtype).str]
                  for name, attrs, shape, dtype in members)
    document = json.dumps([attributes, rows], sort_keys=True, separators=(",", ":"))
    return int(crc32c.crc32c(document.encode()))


def boxes(shape: tuple[int, ...], side: int, count: int, seed_salt: int
          ) -> np.ndarray[Any, Any]:
    """``count`` random corners of unaligned ``side``-wide boxes inside ``shape``."""
    rng = np.random.default_rng([SEED, seed_salt])
    highs = np.array([s - side + 1 for s in shape])
    return rng.integers(0, highs, size=(count, len(shape)))


def inner_chunk_corners(shape: tuple[int, ...], chunk: tuple[int, ...], count: int,
                        seed_salt: int) -> np.ndarray[Any, Any]:
    """``count`` random chunk-aligned corners (distinct when the grid allows)."""
    rng = np.random.default_rng([SEED, seed_salt])
    grid = [s // c for s, c in zip(shape, chunk, strict=True)]
    total = math.prod(grid)
    flat = rng.choice(total, size=count, replace=count > total)
    coords = np.stack(np.unravel_index(flat, grid), axis=1)
    return coords * np.array(chunk)


def box_index_arrays(corners: np.ndarray[Any, Any], side: int
                     ) -> tuple[np.ndarray[Any, Any], ...]:
    """Coordinate arrays selecting every box at once, each of shape (n, side, ..., side):
    entry ``[i, j, k, l]`` of axis ``a``'s array is box ``i``'s corner plus the offset
    along ``a``."""
    count, ndim = corners.shape
    offsets = np.arange(side)
    arrays = []
    for axis in range(ndim):
        along = [1] * ndim
        along[axis] = side
        arrays.append(corners[:, axis].reshape(count, *([1] * ndim))
                      + offsets.reshape(along)[None])
    return tuple(np.ascontiguousarray(a) for a in np.broadcast_arrays(*arrays))


S12_PARTIAL_READS = {
    "partial one shard": "4 inner chunks in one shard",
    "partial four shards": "8 inner chunks across 4 shards",
}
"""S12's sharded partial reads: metric key -> what it reads."""

S12_MAX_GAP = 1 << 16
"""Byte ranges of one shard this close are one request in S12's minimum count (the gap
zarrkit's sharding codec coalesces over): reading up to 64 KiB more is cheaper than a
second request."""


def s12_partial_reads(spec: ArraySpec) -> dict[str, tuple[slice, ...]]:
    """S12's two partial reads of the sharded layout, by metric key: unaligned boxes that
    touch 4 inner chunks (1x1x4) of the first shard, and 8 (1x2x4) around the corner where
    4 shards meet (2 inner chunks, adjacent along the last axis, in each)."""
    assert spec.shards is not None
    c0, c1, c2 = spec.chunks
    _, s1, s2 = spec.shards
    return {
        "partial one shard": (slice(c0 + 2, 2 * c0 - 2), slice(c1 + 2, 2 * c1 - 2),
                              slice(2, 4 * c2 - 2)),
        "partial four shards": (slice(c0 + 2, 2 * c0 - 2), slice(s1 - c1 + 2, s1 + c1 - 2),
                                slice(s2 - 2 * c2 + 2, s2 + 2 * c2 - 2)),
    }


def merge_ranges(ranges: Iterable[tuple[int, int]], max_gap: int) -> list[tuple[int, int]]:
    """``(offset, nbytes)`` ranges merged where they overlap or lie at most ``max_gap``
    bytes apart, in offset order.

    >>> merge_ranges([(100, 10), (0, 10), (15, 5), (5000, 1)], max_gap=10)
    [(0, 20), (100, 10), (5000, 1)]
    """
    merged: list[tuple[int, int]] = []
    for offset, nbytes in sorted(ranges):
        if merged and offset <= merged[-1][0] + merged[-1][1] + max_gap:
            start, length = merged[-1]
            merged[-1] = (start, max(start + length, offset + nbytes) - start)
        else:
            merged.append((offset, nbytes))
    return merged


def s10_data() -> np.ndarray[Any, Any]:
    """Deterministic float64 values for the in-memory indexing case."""
    rng = np.random.default_rng([SEED, 10])
    return rng.standard_normal(S10_SHAPE)


def s10_selections() -> dict[str, tuple[str, Any]]:
    """The S10 calls: name -> (kind, selection); kind is basic, oindex or vindex."""
    rows = np.array([0, 100, 1000, 10000, 60000])
    return {
        "a[0]": ("basic", (0,)),
        "a[0:10, :, 0]": ("basic", (slice(0, 10), slice(None), 0)),
        "a[::7]": ("basic", (slice(None, None, 7),)),
        "oindex": ("oindex", (rows, slice(None), 0, np.array([0, 5, 9]))),
        "vindex": ("vindex", (rows, np.array([0, 1, 2, 3, 0]), np.zeros(5, dtype=np.intp),
                              np.array([0, 5, 9, 1, 2]))),
    }


def child_env() -> dict[str, str]:
    """Environment of a measurement child: every thread knob pinned to :data:`THREADS`."""
    env = dict(os.environ)
    env.update({
        "ZARRKIT_THREADS": str(THREADS),
        # numpy's BLAS is not used, but pin it so no library gets stray threads.
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
    })
    return env
