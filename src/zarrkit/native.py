"""The native chunk engine (:mod:`zarrkit._engine`, Rust), when it is built and allowed.

The engine decodes, scatters and encodes whole batches of chunks in one call with the GIL
released, for the codec chains it covers (v3 ``bytes``, ``transpose``, ``blosc``, ``zstd``,
``gzip``, ``crc32c`` and ``sharding_indexed`` of those; v2 with no filters and a blosc,
zstd, zlib, gzip or lz4 compressor). Everything else keeps the Python path. The setting
``zarrkit.config.engine = "python"`` (or ``ZARRKIT_ENGINE=python``) turns the engine off.

A chain is described by a JSON document (see ``_engine.pyi``):

>>> import json
>>> description = {"format": 3, "itemsize": 2, "chunk_shape": [2, 2], "dtype": "<u2",
...     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
...                {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]}
>>> chain = chain_for(description, b"\\0\\0")
>>> available() == (chain is not None)
True
>>> if chain is not None:
...     import numpy as np

from zarrkit.indexing.basic import BasicIndexer
from zarrkit.indexing.orthogonal import OrthogonalIndexer
...     [data] = encode_batch(chain, [np.array([[1, 2], [3, 4]], "<u2")], 1, True)
...     out = np.zeros((2, 3), "<u2")
...     missing, deferred = decode_into(chain, out, [("c/0/0", data, ((0, 2, 1), (0, 2, 1)),
...                                                  ((0, 2, 1), (1, 3, 1)))], 2)
...     print(out.tolist())
... else:
...     print([[0, 1, 2], [0, 3, 4]])
[[0, 1, 2], [0, 3, 4]]

A chain the engine does not cover gives None:

>>> chain_for({"format": 2, "itemsize": 4, "chunk_shape": [4], "order": "C",
...            "compressor": {"id": "lzma"}}, bytes(4)) is None
True
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from zarrkit.indexing.basic import BasicIndexer
from zarrkit.indexing.orthogonal import OrthogonalIndexer

try:
    from zarrkit import _engine
except ImportError:  # not built: the Python path does everything
    _engine = None  # type: ignore[assignment]

__all__ = [
    "ChunkDecodeError",
    "ChunkReadError",
    "Chain",
    "array_chain",
    "available",
    "built",
    "chain_for",
    "check_grid_directories",
    "grid_pieces",
    "selection_triples",
    "decode_into",
    "decode_shards_into",
    "decode_grid_into",
    "decode_grid_values_into",
    "read_files",
    "decode_points_into",
    "decode_points_values_into",
    "encode_batch",
    "encode_to_files",
]


def built() -> bool:
    """True when the native module is importable (whatever ``ZARRKIT_ENGINE`` says).

    >>> isinstance(built(), bool)
    True
    """
    return _engine is not None


def available() -> bool:
    """True when the native engine is built and not turned off (``zarrkit.config.engine``
    ``"python"``, from ``ZARRKIT_ENGINE=python``).

    >>> import zarrkit as zk
    >>> with zk.config.set(engine="python"):
    ...     available()
    False
    """
    from zarrkit.config import config

    return _engine is not None and config.engine != "python"


def chain_for(description: Mapping[str, Any] | str, fill: bytes) -> Any | None:
    """The engine's :class:`Chain` for a description (a mapping or its JSON), or None when
    the engine is unavailable or does not cover the chain. ``fill`` is the fill value's
    bytes in native byte order (``itemsize`` of them). A malformed description raises
    ValueError.

    >>> chain_for({"format": 3, "itemsize": 1, "chunk_shape": [4],
    ...            "codecs": [{"name": "vlen-utf8"}]}, b"\\0") is None
    True
    """
    if not available():
        return None
    text = description if isinstance(description, str) else json.dumps(description)
    try:
        return _engine.Chain(text, bytes(fill))
    except ValueError as e:
        if str(e).startswith("unsupported:"):
            return None
        raise


def selection_triples(selection: tuple[Any, ...], shape: tuple[int, ...]
                      ) -> tuple[tuple[int, int, int], ...] | None:
    """``selection`` as the engine's ``(start, stop, step)`` per dimension, or None when it
    is not plain forward slices of every dimension of ``shape`` (the engine then leaves it
    to the Python path).

    >>> selection_triples((slice(1, None, 2), slice(None)), (5, 3))
    ((1, 5, 2), (0, 3, 1))
    >>> selection_triples((2, slice(None)), (5, 3)) is None
    True
    """
    if len(selection) != len(shape):
        return None
    triples = []
    for part, length in zip(selection, shape, strict=True):
        if type(part) is not slice:
            return None
        start, stop, step = part.indices(length)
        if step <= 0:
            return None
        triples.append((start, stop, step))
    return tuple(triples)


# A dimension along which a selection touches more chunks than this is left to the Python
# path, which makes its pieces on demand instead of holding them.
_GRID_PIECES = 1 << 16
# The engine holds chunk indices and positions in 63 bits: a plan with larger ones (an
# array dimension beyond 2**63 elements) is left to the Python path, whose integers grow.
_ENGINE_INDEX_MAX = 2**63 - 1

# The engine holds a region (a chunk's box and the output's, ~200 bytes) for every
# combination of pieces, as many as the product of the dimensions' pieces: index arrays
# that break into more runs than this (scattered indices in several dimensions) are
# left to the Python path, whose numpy indexing needs no region per run.
_GRID_REGIONS = 1 << 16
# An index array's share of a chunk up to this long is split into runs in a Python loop.
_FEW_RUN_INDICES = 64

Triple = tuple[int, int, int]
# Per dimension, its pieces: (chunk index, chunk part, output part[, complete]).
GridDims = list[Any]


class GridPlan(NamedTuple):
    """A selection's plan in the engine's form (see :func:`grid_pieces`)."""

    dims: GridDims
    shape: tuple[int, ...]
    # Whether an index array gives some chunk several pieces (runs of its indices).
    several: bool


def grid_pieces(indexer: Any, chunk_shape: tuple[int, ...]) -> GridPlan | None:
    """The engine's form of a basic or orthogonal selection's plan (for
    ``decode_grid_into``): per dimension, ``(chunk index, chunk part, output part[,
    complete])`` of each chunk it touches, in ascending chunk order, each part an integer,
    a slice or a ``(start, stop, step)`` triple, the output part None for an integer (its
    axis of length 1 in ``shape``, the output's shape). A basic plan's pieces go as they
    are; an index array's share of a chunk is given in runs of consecutive indices,
    several pieces of one chunk when it is not one run (the engine decodes the chunk once
    for all of them). None when the engine cannot take the plan: another kind of
    selection, a negative step, no element, a dimension of more than 65,536 pieces, runs
    whose combinations number more than 65,536, a chunk index or length beyond
    2**63 - 1, or no dimensions.

    >>> from zarrkit.indexing import basic_indexer, orthogonal_indexer
    >>> (rows, columns), shape, several = grid_pieces(basic_indexer((1, slice(1, None)),
    ...                                                             (4, 4), (2, 2)), (2, 2))
    >>> rows, columns[1], shape, several
    ([(0, 1, None, False)], (1, slice(0, 2, None), slice(1, 3, None), True), (1, 3), False)
    >>> (rows,), shape, several = grid_pieces(orthogonal_indexer(([5, 0, 1, 4, 3],), (6,), (3,)),
    ...                                       (3,))
    >>> for piece in rows:
    ...     print(piece)
    (0, slice(0, 2, None), slice(1, 3, None), False)
    (1, (2, 3, 1), (0, 1, 1))
    (1, (1, 2, 1), (3, 4, 1))
    (1, (0, 1, 1), (4, 5, 1))
    >>> several
    True
    >>> grid_pieces(basic_indexer(slice(None, None, -1), (4,), (2,)), (2,)) is None
    True
    >>> grid_pieces(basic_indexer(-1, (2**64 + 3,), (1,)), (1,)) is None
    True
    """
    kind = type(indexer)
    if kind is not BasicIndexer and kind is not OrthogonalIndexer or not chunk_shape:
        return None
    dims: GridDims = []
    shape: list[int] = []
    out_lengths = iter(indexer.shape)
    several = False
    for pieces, chunk_len in zip(indexer.dim_pieces(), chunk_shape, strict=True):
        if (type(chunk_len) is not int or chunk_len > _ENGINE_INDEX_MAX
                or not 0 < len(pieces) <= _GRID_PIECES or pieces[-1][0] > _ENGINE_INDEX_MAX):
            return None
        chunk_part = pieces[0][1]
        # Every piece of a slice has its step: a negative one walks the chunks backwards.
        if type(chunk_part) is slice and chunk_part.step is not None and chunk_part.step < 0:
            return None
        shape.append(1 if pieces[0][2] is None else next(out_lengths))
        if kind is BasicIndexer:
            dims.append(pieces)
            continue
        dim: list[Any] = []
        for piece in pieces:
            index, chunk_part, out_part, _ = piece
            if (out_part is None or type(out_part) is slice) and (
                    type(chunk_part) is slice or type(chunk_part) is int):
                dim.append(piece)
                continue
            runs = _index_runs(index, chunk_part, out_part, chunk_len)
            several = several or len(runs) > 1
            dim.extend(runs)
            if len(dim) > _GRID_PIECES:
                return None
        dims.append(dim)
    if several and math.prod(map(len, dims)) > _GRID_REGIONS:
        return None
    return GridPlan(dims, tuple(shape), several)


def _index_runs(index: int, chunk_part: Any, out_part: Any, chunk_len: int
                ) -> list[tuple[int, Triple, Triple]]:
    """An index array's share of chunk ``index`` (each side a slice or an index array) as
    pieces, one per run of indices that go up by one on both sides.

    >>> import numpy as np
    >>> _index_runs(2, np.array([0, 1, 7, 3]), slice(4, 8), 10)
    [(2, (0, 2, 1), (4, 6, 1)), (2, (7, 8, 1), (6, 7, 1)), (2, (3, 4, 1), (7, 8, 1))]
    """
    inside = (np.arange(*chunk_part.indices(chunk_len)) if type(chunk_part) is slice
              else np.asarray(chunk_part, dtype=np.int64))
    outside = (np.arange(*out_part.indices(_ENGINE_INDEX_MAX)) if type(out_part) is slice
               else np.asarray(out_part, dtype=np.int64))
    if len(inside) <= _FEW_RUN_INDICES:  # numpy's calls cost more than a loop over a few
        runs: list[tuple[int, Triple, Triple]] = []
        first = at = previous = previous_at = -2
        for value, position in zip(inside.tolist(), outside.tolist(), strict=True):
            if value != previous + 1 or position != previous_at + 1:
                if previous >= 0:
                    runs.append((index, (first, previous + 1, 1), (at, previous_at + 1, 1)))
                first, at = value, position
            previous, previous_at = value, position
        runs.append((index, (first, previous + 1, 1), (at, previous_at + 1, 1)))
        return runs
    breaks = np.flatnonzero((np.diff(inside) != 1) | (np.diff(outside) != 1)) + 1
    starts = np.concatenate(([0], breaks))
    lengths = np.diff(np.concatenate((starts, [len(inside)])))
    return [(index, (first, first + length, 1), (at, at + length, 1))
            for first, at, length in zip(inside[starts].tolist(), outside[starts].tolist(),
                                         lengths.tolist(), strict=True)]


def check_grid_directories(value_file: Any, key_prefix: str, separator: str,
                           indices: list[list[int]]) -> None:
    """Have a store that locates its files check each directory the chunk files of a
    grid read are in (its ``value_file`` raises StoreEscapeError for one that leads out
    of it), before the engine opens them: with ``/`` separators, one per combination of
    the chunk ``indices`` of all but the last dimension, else the one of ``key_prefix``.

    >>> seen = []
    >>> check_grid_directories(seen.append, "c/", "/", [[0, 1], [5], [2, 3]])
    >>> seen
    ['c/0/5/2', 'c/1/5/2']
    """
    if separator != "/":
        value_file(key_prefix + "0")
        return
    last = str(indices[-1][0])
    for coords in itertools.product(*([str(i) for i in dim] for dim in indices[:-1])):
        value_file(key_prefix + "/".join((*coords, last)))


def array_chain(metadata: Any, storage_dtype: Any, fill: Any) -> Any | None:
    """The engine's chain for the chunks of an array (its metadata, the dtype its chunks
    hold and the value of missing elements), or None when the engine does not cover them:
    objects and strings, rectilinear grids, format-2 filters, codecs it does not know.

    >>> import numpy as np
    >>> from zarrkit.hierarchy.creation import array_metadata_v3
    >>> meta = array_metadata_v3(shape=(4,), dtype="u2")
    >>> chain = array_chain(meta, np.dtype("u2"), 0)
    >>> chain is None or chain.chunk_shape == (4,)
    True
    >>> array_chain(array_metadata_v3(shape=(30,), dtype="u2", chunks=(5,),
    ...                               shards=[[20, 10]]), np.dtype("u2"), 0) is None
    True
    """
    import numpy as np

    dtype = np.dtype(storage_dtype)
    grid = getattr(metadata, "chunk_grid", None)
    if grid is not None and grid.name != "regular":
        # A chain has one chunk (shard) shape; the engine would read every other chunk
        # of a rectilinear grid with the first one's.
        return None
    chunks = tuple(metadata.chunks)
    if (not available() or dtype.hasobject or dtype.kind in "OT"
            or not all(isinstance(c, int) for c in chunks)):
        return None
    description: dict[str, Any] = {"format": metadata.zarr_format, "itemsize": dtype.itemsize,
                                   "chunk_shape": list(chunks), "dtype": dtype.str}
    if metadata.zarr_format == 3:
        description["codecs"] = list(metadata.codecs)
    else:
        if metadata.filters:
            return None
        description.update(order=metadata.order, compressor=metadata.compressor)
    fill_bytes = np.asarray(fill, dtype=dtype).tobytes()
    try:
        return chain_for(description, fill_bytes)
    except ValueError:  # a description the engine cannot read: the Python path can
        return None


if _engine is not None:
    Chain = _engine.Chain
    ChunkDecodeError = _engine.ChunkDecodeError
    ChunkReadError = _engine.ChunkReadError
    decode_into = _engine.decode_into
    decode_shards_into = _engine.decode_shards_into
    decode_grid_into = _engine.decode_grid_into
    decode_grid_values_into = _engine.decode_grid_values_into
    read_files = _engine.read_files
    decode_points_into = _engine.decode_points_into
    decode_points_values_into = _engine.decode_points_values_into
    encode_batch = _engine.encode_batch
    encode_to_files = _engine.encode_to_files
else:
    class ChunkDecodeError(ValueError):  # type: ignore[no-redef]
        """Stands in for the engine's class when it is not built (never raised)."""

    class ChunkReadError(OSError):  # type: ignore[no-redef]
        """Stands in for the engine's class when it is not built (never raised)."""

    Chain = None  # type: ignore[assignment,misc]

    def _missing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("zarrkit._engine is not built")

    decode_into = decode_shards_into = decode_grid_into = decode_points_into = _missing
    decode_grid_values_into = decode_points_values_into = _missing
    encode_batch = encode_to_files = read_files = _missing


@contextlib.contextmanager
def errors_named(what: str) -> Iterator[None]:
    """The engine's errors as zarrkit's, the chunk or shard they name prefixed with
    ``what`` (``"array 'a' chunk"``): ChunkDecodeError for one that cannot be decoded (a
    corrupt index or checksum included), StoreIOError for one that cannot be read.

    >>> from zarrkit import errors
    >>> try:
    ...     with errors_named("array 'a' chunk"):
    ...         raise ChunkDecodeError("'c/0': truncated")
    ... except errors.ChunkDecodeError as e:
    ...     print(e)
    array 'a' chunk 'c/0': truncated
    """
    from zarrkit import errors

    try:
        yield
    except ChunkDecodeError as e:
        raise errors.ChunkDecodeError(f"{what} {e}") from None
    except ChunkReadError as e:
        raise errors.StoreIOError(f"{what} {e}") from None
