"""Type stub of zarrkit._engine, the native chunk engine (Rust; source in native/).

Description JSON (``Chain``'s first argument):

- v3: ``{"format": 3, "itemsize": N, "chunk_shape": [...], "codecs": [...], "dtype": "<u2"}``
  with ``transpose`` (any order), ``bytes`` (endian), ``blosc``, ``zstd``, ``gzip``,
  ``crc32c``, or ``sharding_indexed`` (inner codecs of those; index codecs ``bytes``
  optionally followed by ``crc32c``; index at ``start`` or ``end``) as the only codec.
- v2: ``{"format": 2, "itemsize": N, "chunk_shape": [...], "order": "C" | "F",
  "compressor": None | {"id": "blosc" | "zstd" | "zlib" | "gzip" | "lz4", ...},
  "filters": None}``.
- ``dtype`` (numpy's ``dtype.str``) is optional, but a chain whose ``bytes`` codec swaps
  bytes needs it (a complex item swaps per half); without it the chain is unsupported.

Selections are tuples of ``(start, stop, step)`` per dimension with ``start, stop >= 0`` and
``step >= 1``; the chunk and output selections of a task select the same count per
dimension. The tasks of one call must write disjoint regions of ``out``.

A source is a bytes-like object (any C-contiguous buffer, not copied) or
``(path, offset, length)`` of a file, read with pread inside the engine (``length`` None:
to the end of the file). A file that does not exist (or is a directory) is a chunk not
stored: its region is filled with the chain's fill and it is reported missing. A file that
is a symbolic link is never followed: nothing is written for it and it is reported
deferred, for the caller to read through its store. A source may also be
``(fd, name, offset, length, crc32)``: a range of a file the caller holds open (a stored
ZIP member), read with pread on that descriptor, which the engine never closes; ``crc32``
(or None) is checked when the range is read whole, a mismatch raising ChunkDecodeError.
"""

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from typing_extensions import Buffer

Sel = tuple[tuple[int, int, int], ...]
Source = Buffer | tuple[str, int, int | None] | tuple[int, str, int, int, int | None]
Outcomes = tuple[list[int], list[int]]
"""(indices of the tasks found missing, indices of the tasks deferred)."""

class ChunkDecodeError(ValueError):
    """A stored chunk or shard is corrupt or does not fit its array; the message starts
    with the chunk's key (and ``inner chunk (i, j)`` for an inner chunk of a shard)."""

class ChunkReadError(OSError):
    """A chunk's file could not be opened or read; the message starts with the key."""

class Chain:
    """A codec chain the engine covers. ValueError("unsupported: ...") for one it does
    not cover, ValueError("invalid chain description: ...") for a malformed one."""

    def __init__(self, description_json: str, fill: bytes) -> None: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def chunk_shape(self) -> tuple[int, ...]: ...
    @property
    def sharded(self) -> bool: ...
    @property
    def inner_shape(self) -> tuple[int, ...] | None: ...
    @property
    def fill(self) -> bytes: ...

def decode_into(
    chain: Chain,
    out: np.ndarray,
    tasks: list[tuple[str, Source, Sel, Sel]],
    threads: int,
) -> Outcomes:
    """Decode each task's chunk and copy its ``chunk_sel`` into ``out[out_sel]``.
    ``out`` is any writable array whose items have the chain's itemsize (any strides)."""

def decode_shards_into(
    chain: Chain,
    out: np.ndarray,
    shard_tasks: list[tuple[str, Source, Sequence[tuple[tuple[int, ...], Sel, Sel]]]],
    threads: int,
) -> Outcomes:
    """For each shard ``(key, source, inner)``: read and check its index, then decode each
    requested inner chunk ``(coords, chunk_sel, out_sel)`` into ``out``; inner chunks that
    are not stored fill their region with the chain's fill. A shard file is read whole
    when at least half its inner chunks are wanted, else its index and those chunks."""

def decode_grid_into(
    chain: Chain,
    out: np.ndarray,
    dims: Sequence[Sequence[tuple[Any, ...]]],
    root: str,
    key_prefix: str,
    separator: str,
    threads: int,
) -> tuple[int, list[list[int]]]:
    """Read every chunk (shard, for a sharding chain) of the product of ``dims``: per
    dimension, pieces ``(chunk index, chunk part, output part[, ignored])`` in ascending
    chunk order (indices of inner chunks for a sharding chain), each part an int, a slice
    with a positive step or a ``(start, stop, step)`` triple, an output part None for an
    axis of length 1. Several pieces of one chunk (together) are copied from one decode:
    the regions of a chunk are every combination of its pieces. A chunk's key is
    ``key_prefix`` then its indices joined by ``separator``, its file ``root + key``.
    Returns (how many chunks or shards were missing, the coordinates of those
    deferred)."""

def decode_grid_values_into(
    chain: Chain,
    out: np.ndarray,
    dims: Sequence[Sequence[tuple[Any, ...]]],
    fetch: Callable[[list[str]], Sequence[Any]],
    key_prefix: str,
    separator: str,
    threads: int,
) -> tuple[int, list[list[int]]]:
    """``decode_grid_into`` (a plain chain) from a store whose values Python fetches: the
    keys of every chunk of the product of ``dims`` go to one ``fetch(keys)`` call, whose
    values (in order: a buffer, a file or descriptor source as in ``decode_into``, or None
    for a chunk not stored, its region filled) are read. Returns (how many chunks were
    missing, an empty list)."""

def encode_batch(
    chain: Chain, chunks: list[np.ndarray], threads: int, skip_fill: bool
) -> list[bytes | None]:
    """Encode whole chunks of ``chunk_shape`` (whole shards for a sharding chain). None
    where ``skip_fill`` and every item equals the fill bitwise; inner chunks equal to the
    fill are never stored, and a shard with none stored is None."""

def encode_to_files(
    chain: Chain,
    chunks: list[np.ndarray],
    targets: list[str],
    temp_directory: str | None,
    temp_prefix: str,
    threads: int,
    skip_fill: bool,
) -> list[bytes | Literal[False] | None]:
    """Encode as ``encode_batch`` and store each chunk in ``targets[i]`` through a new
    temporary file (``temp_prefix`` + i, in ``temp_directory`` or beside its target)
    renamed over it, making missing directories. None where stored, False where all fill
    (nothing written), the encoded bytes where the file could not be written."""

def decode_points_into(
    chain: Chain,
    out: np.ndarray,
    coords: Sequence[np.ndarray],
    array_shape: list[int],
    root: str,
    key_prefix: str,
    separator: str,
    threads: int,
) -> tuple[int, list[list[int]]]:
    """Read points (``vindex``): ``coords`` one contiguous int64 array per dimension, the
    points in output order, each inside ``array_shape``; ``out`` is 1-d. Chunks are named
    and read as by ``decode_grid_into``, each once. Returns (how many chunks were
    missing, the coordinates of those deferred)."""

def decode_points_values_into(
    chain: Chain,
    out: np.ndarray,
    coords: Sequence[np.ndarray],
    array_shape: list[int],
    fetch: Callable[[list[str]], Sequence[Any]],
    key_prefix: str,
    separator: str,
    threads: int,
) -> tuple[int, list[list[int]]]:
    """``decode_points_into`` from a store whose values Python fetches: the keys of the
    chunks the points touch go to one ``fetch(keys)`` call, whose values (as for
    ``decode_grid_values_into``) are read. Returns (how many chunks were missing, an
    empty list)."""

def read_files(paths: list[str], threads: int) -> list[bytes | None | bool]:
    """The whole of each file, read in parallel: None for a missing file (or a
    directory), False for a symbolic link (never followed)."""

def versions() -> list[tuple[str, str]]:
    """The engine's version and those of the C libraries it carries."""

def blosc_zstd_calls() -> int:
    """How many of c-blosc's zstd calls went to the engine's per-thread zstd contexts (0
    where the linker could not send them there, as on other systems than Linux)."""

def json_scan(data: bytes, member: str | None = None
              ) -> tuple[int, int, tuple[int, int] | None]:
    """``(deepest nesting of arrays and objects, longest run of digits, span)`` of a UTF-8
    JSON text, the first two outside strings (the metadata loader's depth limit and
    long-number test); ``span`` is ``(start, end)`` of the value of the top-level member
    named ``member`` (spelt without escapes), or None."""
