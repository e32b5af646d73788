"""The ``sharding_indexed`` codec: many inner chunks in one stored object, with an index.

Besides encoding and decoding whole shards it exposes what partial I/O needs: the size and
place of the index, :meth:`ShardingCodec.decode_index` and :class:`ShardIndex` to locate one
inner chunk's bytes, :meth:`ShardingCodec.assemble` to build a shard from already-encoded
inner chunks, and :func:`coalesce_ranges` to merge nearby byte ranges into fewer reads. The
partial reads and writes themselves (:meth:`ShardingCodec.plan_partial_read`,
:meth:`~ShardingCodec.partial_reader`, :meth:`~ShardingCodec.partial_writer`) live in
:mod:`zarrkit.codecs.v3.sharding_partial`: they take a byte-range reader and a small context,
never a store or an array.

Inner chunks equal to the fill value everywhere are not stored; a shard with no stored
inner chunk encodes to None so the caller can delete it. Inner chunks are written in
Morton (Z) order, as zarr-python does, so shards are byte-identical to its output.

>>> import numpy as np
>>> from zarrkit.codecs.v3.spec import ChunkSpec
>>> spec = ChunkSpec((4, 4), np.dtype("u1"), 0)
>>> codec = ShardingCodec({"chunk_shape": [2, 2], "codecs": [{"name": "bytes"}]}, spec)
>>> shard = np.zeros((4, 4), dtype="u1"); shard[3, 3] = 9
>>> data = codec.encode(shard)
>>> index = codec.decode_index(data, (4, 4), what="c/0/0")
>>> index.byte_range((0, 0)), index.byte_range((1, 1))
(None, (0, 4))
>>> codec.inner_pipeline.decode(data[0:4], what="c/0/0").tolist()
[[0, 0], [0, 9]]
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from zarrkit.codecs.v3.base import ArrayBytesCodec, check_keys, config_choice
from zarrkit.codecs.v3.compressors import as_bytes_view
from zarrkit.codecs.v3.pipeline import CodecPipelineV3
from zarrkit.codecs.v3.spec import ChunkSpec
from zarrkit.errors import ChunkDecodeError, MetadataError
from zarrkit.metadata.fill_value import fill_mask

if TYPE_CHECKING:
    from zarrkit.codecs.v3.sharding_partial import (
        Get,
        GetRange,
        PartialReader,
        PartialWriter,
        RangeRead,
        ShardContext,
        ShardJob,
        ShardPiece,
    )

EMPTY = 2**64 - 1
MAX_FILE_OFFSET = 2**63 - 1  # off_t's largest value: what pread and friends can reach
_EMPTY = np.uint64(EMPTY)
DEFAULT_INDEX_CODECS: list[dict[str, Any]] = [
    {"name": "bytes", "configuration": {"endian": "little"}},
    {"name": "crc32c"},
]


@lru_cache(maxsize=64)
def morton_rank(chunks_per_shard: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """For each inner chunk, its position in the (compressed) Morton order: bits of the
    coordinates interleaved, dimension 0 lowest, dimensions that have run out of bits
    skipped (as zarr-python and Neuroglancer order them).

    >>> morton_rank((2, 3)).tolist()
    [[0, 2, 4], [1, 3, 5]]
    """
    ndim = len(chunks_per_shard)
    if ndim == 0:
        return np.zeros((), dtype=np.int64)
    coords = np.indices(chunks_per_shard, dtype=np.int64).reshape(ndim, -1)
    bits = [max(c - 1, 0).bit_length() for c in chunks_per_shard]
    code = np.zeros(coords.shape[1], dtype=np.int64)
    out_bit = 0
    for coord_bit in range(max(bits, default=0)):
        for dim in range(ndim):
            if coord_bit < bits[dim]:
                code |= ((coords[dim] >> coord_bit) & 1) << out_bit
                out_bit += 1
    rank = np.empty_like(code)
    rank[np.argsort(code, kind="stable")] = np.arange(code.size)
    rank.flags.writeable = False
    return rank.reshape(chunks_per_shard)


class ShardIndex:
    """The decoded index of one shard: an ``(offset, nbytes)`` pair per inner chunk.

    >>> entries = np.full((2, 2), EMPTY, dtype=np.uint64); entries[1] = (10, 4)
    >>> index = ShardIndex(entries, what="c/0")
    >>> index.byte_range((0,)), index.byte_range((1,)), index.nonempty()
    (None, (10, 4), [(1,)])
    >>> index.check_bounds(12)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.ChunkDecodeError: c/0: inner chunk (1,) at bytes [10, 14) lies past the end ...
    """

    def __init__(self, entries: np.ndarray[Any, Any], *, what: str) -> None:
        if entries.ndim < 1 or entries.shape[-1] != 2:
            raise ValueError(f"a shard index has shape (..., 2), found {entries.shape}")
        self.entries = np.asarray(entries, dtype=np.uint64)
        self.what = what

    @property
    def chunks_per_shard(self) -> tuple[int, ...]:
        """The number of inner chunks along each dimension.

        >>> ShardIndex(np.zeros((3, 2, 2), np.uint64), what="").chunks_per_shard
        (3, 2)
        """
        return tuple(self.entries.shape[:-1])

    def empty_mask(self) -> np.ndarray[Any, Any]:
        """Boolean array over inner chunks: True where nothing is stored.

        >>> ShardIndex(np.full((2, 2), EMPTY, np.uint64), what="").empty_mask().tolist()
        [True, True]
        """
        return (self.entries[..., 0] == _EMPTY) & (self.entries[..., 1] == _EMPTY)

    def is_all_empty(self) -> bool:
        """True when no inner chunk is stored.

        >>> ShardIndex(np.full((1, 2), EMPTY, np.uint64), what="").is_all_empty()
        True
        """
        return bool(self.empty_mask().all())

    def nonempty(self) -> list[tuple[int, ...]]:
        """Coordinates of the stored inner chunks, in C order.

        >>> ShardIndex(np.zeros((2, 2), np.uint64), what="").nonempty()
        [(0,), (1,)]
        """
        return [tuple(int(i) for i in c) for c in np.argwhere(~self.empty_mask())]

    def byte_range(self, inner_coords: Sequence[int]) -> tuple[int, int] | None:
        """``(offset, nbytes)`` of an inner chunk in the shard, or None if it is not stored.

        >>> ShardIndex(np.array([[4, 8]], np.uint64), what="").byte_range((0,))
        (4, 8)
        """
        coords = tuple(int(c) for c in inner_coords)
        if len(coords) != len(self.chunks_per_shard) or any(
            not 0 <= c < n for c, n in zip(coords, self.chunks_per_shard, strict=True)
        ):
            raise IndexError(
                f"inner chunk {coords} is outside a shard of {self.chunks_per_shard} chunks"
            )
        offset, nbytes = (int(v) for v in self.entries[coords])
        if offset == EMPTY and nbytes == EMPTY:
            return None
        return offset, nbytes

    def byte_ranges(self, inner_coords: Sequence[Sequence[int]]
                    ) -> list[tuple[int, int] | None]:
        """:meth:`byte_range` of many inner chunks at once: one numpy lookup instead of a
        Python one per chunk, which counts when a read touches thousands of them.

        >>> entries = np.full((2, 2), EMPTY, dtype=np.uint64); entries[1] = (10, 4)
        >>> ShardIndex(entries, what="").byte_ranges([(1,), (0,)])
        [(10, 4), None]
        """
        cps = self.chunks_per_shard
        if not cps or len(inner_coords) < 16:  # numpy's set-up costs more than a few lookups
            return [self.byte_range(c) for c in inner_coords]
        try:
            coords = np.asarray(inner_coords, dtype=np.int64).reshape(len(inner_coords), -1)
        except ValueError:  # coordinates of different lengths: name the bad ones
            coords = np.empty((0, 0), dtype=np.int64)
        if coords.shape[1] != len(cps) or bool(
            ((coords < 0) | (coords >= np.asarray(cps))).any()
        ):
            for c in inner_coords:
                self.byte_range(c)  # raises the IndexError naming the bad coordinates
        rows = self.entries[tuple(coords.T)]
        empty = ((rows[:, 0] == _EMPTY) & (rows[:, 1] == _EMPTY)).tolist()
        return [None if e else (offset, nbytes)
                for (offset, nbytes), e in zip(rows.tolist(), empty, strict=True)]

    def check_bounds(self, shard_nbytes: int, *, limit: str | None = None) -> None:
        """Raise ChunkDecodeError (naming the shard) if an entry is half-empty or points
        past ``shard_nbytes`` (described as ``limit`` in the message, if given).

        >>> ShardIndex(np.array([[0, 4]], np.uint64), what="c/0").check_bounds(4)
        """
        offsets = self.entries[..., 0]
        nbytes = self.entries[..., 1]
        empty_offset, empty_nbytes = offsets == _EMPTY, nbytes == _EMPTY
        half = empty_offset ^ empty_nbytes
        if half.any():
            coords = tuple(int(i) for i in np.argwhere(half)[0])
            raise ChunkDecodeError(
                f"{self.what}: shard index entry of inner chunk {coords} is malformed "
                f"(only one of offset and nbytes marks it empty)"
            )
        size = np.uint64(shard_nbytes)
        stored = ~(empty_offset & empty_nbytes)
        room = size - np.minimum(offsets, size)
        bad = stored & ((offsets > size) | (nbytes > room))
        if bad.any():
            coords = tuple(int(i) for i in np.argwhere(bad)[0])
            offset, length = (int(v) for v in self.entries[coords])
            raise ChunkDecodeError(
                f"{self.what}: inner chunk {coords} at bytes [{offset}, {offset + length}) "
                f"lies past {limit or f'the end of the {shard_nbytes}-byte shard'}"
            )


def coalesce_ranges(
    ranges: Sequence[tuple[int, int]], max_gap: int = 1 << 16, max_length: int | None = None
) -> list[tuple[int, int, list[int]]]:
    """Merge byte ranges ``(offset, nbytes)`` that overlap or lie within ``max_gap`` bytes
    of each other into ``(start, length, indices)`` reads, ordered by start; ``indices``
    are the positions in ``ranges`` that each read covers. With ``max_length``, a read
    grows no longer than that (a single longer range is still one read), so a big
    selection is cut into pieces that threads can share.

    >>> coalesce_ranges([(100, 10), (0, 10), (15, 5), (5000, 1)], max_gap=10)
    [(0, 20, [1, 2]), (100, 10, [0]), (5000, 1, [3])]
    >>> coalesce_ranges([(0, 10), (10, 10), (20, 10)], max_length=20)
    [(0, 20, [0, 1]), (20, 10, [2])]
    """
    order = sorted(range(len(ranges)), key=lambda i: (ranges[i][0], ranges[i][1]))
    merged: list[tuple[int, int, list[int]]] = []
    start = end = 0
    members: list[int] = []
    for i in order:
        offset, nbytes = ranges[i]
        if members and offset <= end + max_gap and (
            max_length is None or max(end, offset + nbytes) - start <= max_length
        ):
            end = max(end, offset + nbytes)
            members.append(i)
            continue
        if members:
            merged.append((start, end - start, members))
        start, end, members = offset, offset + nbytes, [i]
    if members:
        merged.append((start, end - start, members))
    return merged


class ShardBuilder:
    """Lays out one shard from encoded inner chunks added in Morton order, and its index.

    Without ``capacity`` the chunks' bytes are kept as given and joined once at the end.
    With ``capacity`` (a bound on the total size of the chunks to come) each chunk is
    copied into one buffer as it is added, so the caller can drop it at once: a shard
    being written then costs its own size in memory, not twice that. ``buffer`` offers a
    byte array to use as that buffer if it is big enough (one whose pages are already in
    memory is cheaper than fresh ones); :meth:`detach` hands the buffer back.

    >>> codec = ShardingCodec({"chunk_shape": [1], "codecs": ["bytes"]},
    ...     ChunkSpec((2,), np.dtype("u1")))
    >>> builder = ShardBuilder(codec, (2,), capacity=2)
    >>> builder.add((0,), b"\\x05"); builder.add((1,), b"\\x07")
    >>> shard = builder.finish(); bytes(shard[:2]), len(shard)
    (b'\\x05\\x07', 38)
    >>> builder = ShardBuilder(codec, (2,)); builder.add((1,), b"\\x07")
    >>> builder.add((0,), b"\\x05")
    Traceback (most recent call last):
    ValueError: inner chunk (0,) comes before (1,) in Morton order; add chunks in that order
    >>> builder.add((1,), b"\\x08")
    Traceback (most recent call last):
    ValueError: inner chunk (1,) was already added to this shard
    """

    def __init__(self, codec: ShardingCodec, shard_shape: Sequence[int],
                 capacity: int | None = None,
                 buffer: np.ndarray[Any, Any] | None = None) -> None:
        self._codec = codec
        self._shard_shape = tuple(int(s) for s in shard_shape)
        self._cps = codec.chunks_per_shard(self._shard_shape)
        self._rank = morton_rank(self._cps)
        self._entries = np.full((*self._cps, 2), _EMPTY, dtype=np.uint64)
        self._index_nbytes = codec.index_nbytes(self._shard_shape)
        self._index_first = codec.index_location == "start"
        self._end = self._index_nbytes if self._index_first else 0
        self._last: tuple[int, tuple[int, ...]] | None = None
        self._parts: list[Any] = []
        self._buffer: np.ndarray[Any, Any] | None = None
        if capacity is not None:
            size = self._index_nbytes + capacity
            if buffer is not None and buffer.dtype == np.uint8 and len(buffer) >= size:
                self._buffer = buffer
            else:
                # np.empty leaves the pages untouched: only the bytes written use memory.
                self._buffer = np.empty(size, dtype=np.uint8)

    def check_coords(self, coords: Sequence[int]) -> tuple[int, ...]:
        """``coords`` as ints; ValueError if they are outside the shard."""
        key = tuple(int(c) for c in coords)
        if len(key) != len(self._cps) or any(
            not 0 <= c < n for c, n in zip(key, self._cps, strict=True)
        ):
            raise ValueError(f"inner chunk {key} is outside a shard of {self._cps} chunks")
        return key

    def morton_sorted(self, coords: Iterable[tuple[int, ...]]) -> list[tuple[int, ...]]:
        """``coords`` in the order :meth:`add` takes them."""
        rank = self._rank
        return sorted(coords, key=lambda c: int(rank[c]))

    def add(self, coords: Sequence[int], data: bytes | bytearray | memoryview) -> None:
        """Append one inner chunk's encoded bytes (copied now when there is a buffer)."""
        key = self.check_coords(coords)
        rank = int(self._rank[key])
        if self._last is not None and rank <= self._last[0]:
            self._refuse(key)
        self._last = (rank, key)
        nbytes = memoryview(data).nbytes
        self._entries[key] = (self._end, nbytes)
        if self._buffer is None:
            self._parts.append(data)
        else:
            self._reserve(self._end + nbytes)
            self._buffer[self._end:self._end + nbytes] = np.frombuffer(data, dtype=np.uint8)
        self._end += nbytes

    def _refuse(self, key: tuple[int, ...]) -> NoReturn:
        """Raise the error for an inner chunk that does not come after the last one added:
        a second copy (its index entry would silently replace the first), or a chunk out of
        Morton order."""
        if not (self._entries[key] == _EMPTY).all():
            raise ValueError(f"inner chunk {key} was already added to this shard")
        assert self._last is not None
        raise ValueError(f"inner chunk {key} comes before {self._last[1]} in Morton order; "
                         f"add chunks in that order")

    def _reserve(self, nbytes: int) -> None:
        # Stored chunks kept from an old shard may exceed the caller's bound; grow then.
        assert self._buffer is not None
        if nbytes > len(self._buffer):
            grown = np.empty(max(nbytes, 2 * len(self._buffer)), dtype=np.uint8)
            grown[:self._end] = self._buffer[:self._end]
            self._buffer = grown

    def detach(self) -> np.ndarray[Any, Any] | None:
        """The buffer (None without ``capacity``), which this builder no longer uses: any
        shard :meth:`finish` returned is a view of it."""
        buffer, self._buffer = self._buffer, None
        return buffer

    def finish(self) -> bytes | memoryview | None:
        """The shard (a view of the buffer when there is one), or None if no chunk was
        added. Calling it again returns the same shard."""
        if self._last is None:
            return None
        index = self._codec.encode_index(self._entries, self._shard_shape)
        if self._buffer is None:
            parts = [index, *self._parts] if self._index_first else [*self._parts, index]
            return b"".join(parts)
        raw = np.frombuffer(index, dtype=np.uint8)
        if self._index_first:
            self._buffer[:self._index_nbytes] = raw
            return self._buffer[:self._end].data
        self._reserve(self._end + self._index_nbytes)
        self._buffer[self._end:self._end + self._index_nbytes] = raw
        return self._buffer[:self._end + self._index_nbytes].data


class ShardingCodec(ArrayBytesCodec):
    """``sharding_indexed`` (``array -> bytes``), bound to the shard spec it is built for.

    >>> spec = ChunkSpec((4,), np.dtype("<i2"), 0)
    >>> codec = ShardingCodec({"chunk_shape": [2], "codecs": [
    ...     {"name": "bytes", "configuration": {"endian": "little"}}]}, spec)
    >>> codec.chunks_per_shard((4,)), codec.index_nbytes((4,)), codec.index_location
    ((2,), 36, 'end')
    """

    name = "sharding_indexed"
    is_sharding = True

    def __init__(self, configuration: Mapping[str, Any], spec: ChunkSpec) -> None:
        super().__init__(configuration, spec)
        check_keys(
            self.name, configuration, {"chunk_shape", "codecs", "index_codecs", "index_location"}
        )
        chunk_shape = configuration.get("chunk_shape")
        ndim = len(spec.shape)
        valid = (
            isinstance(chunk_shape, list | tuple)
            and len(chunk_shape) == ndim
            and all(isinstance(c, int) and not isinstance(c, bool) and c > 0
                    for c in chunk_shape)
        )
        if not valid:
            raise MetadataError(
                f"codec 'sharding_indexed': 'chunk_shape' must be {ndim} positive integers, "
                f"found {chunk_shape!r}"
            )
        self.chunk_shape: tuple[int, ...] = tuple(chunk_shape)  # type: ignore[arg-type]
        self.chunks_per_shard(spec.shape)
        if "codecs" not in configuration:
            raise MetadataError("codec 'sharding_indexed': 'codecs' is required")
        self.inner_pipeline = CodecPipelineV3.from_json(
            configuration["codecs"], spec.evolve(shape=self.chunk_shape)
        )
        self._index_codecs = configuration.get("index_codecs", DEFAULT_INDEX_CODECS)
        self.index_location = config_choice(
            self.name, configuration, "index_location", ("start", "end"), "end"
        )
        self._index_pipelines: dict[tuple[int, ...], CodecPipelineV3] = {}
        self._lock = threading.Lock()
        self._template = self.index_pipeline(spec.shape)

    def configuration(self) -> dict[str, Any]:
        """The full configuration, defaults written out."""
        return {
            "chunk_shape": list(self.chunk_shape),
            "codecs": self.inner_pipeline.to_json(),
            "index_codecs": self._template.to_json(),
            "index_location": self.index_location,
        }

    # --- geometry ----------------------------------------------------------------------------

    def chunks_per_shard(self, shard_shape: Sequence[int]) -> tuple[int, ...]:
        """Inner chunks along each dimension; MetadataError if they do not tile the shard.

        >>> ShardingCodec({"chunk_shape": [3], "codecs": ["bytes"]},
        ...     ChunkSpec((4,), np.dtype("u1")))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: codec 'sharding_indexed': inner chunk shape (3,) does not ...
        """
        shape = tuple(int(s) for s in shard_shape)
        if len(shape) != len(self.chunk_shape) or any(
            s % c for s, c in zip(shape, self.chunk_shape, strict=True)
        ):
            raise MetadataError(
                f"codec 'sharding_indexed': inner chunk shape {self.chunk_shape} does not "
                f"divide the shard shape {shape}"
            )
        return tuple(s // c for s, c in zip(shape, self.chunk_shape, strict=True))

    def index_pipeline(self, shard_shape: Sequence[int]) -> CodecPipelineV3:
        """The pipeline of the index codecs for shards of ``shard_shape`` (fixed-size).

        >>> ShardingCodec({"chunk_shape": [1], "codecs": ["bytes"]},
        ...     ChunkSpec((2,), np.dtype("u1"))).index_pipeline((2,)).encoded_size
        36
        """
        key = tuple(int(s) for s in shard_shape)
        pipeline = self._index_pipelines.get(key)
        if pipeline is None:
            spec = ChunkSpec((*self.chunks_per_shard(key), 2), np.dtype(np.uint64), EMPTY)
            pipeline = CodecPipelineV3.from_json(self._index_codecs, spec)
            if pipeline.encoded_size is None:
                raise MetadataError(
                    "codec 'sharding_indexed': 'index_codecs' must encode to a fixed size "
                    "(no compression)"
                )
            with self._lock:
                self._index_pipelines[key] = pipeline
        return pipeline

    def index_nbytes(self, shard_shape: Sequence[int]) -> int:
        """Size in bytes of the encoded index of a shard of ``shard_shape``.

        >>> ShardingCodec({"chunk_shape": [2, 2], "codecs": ["bytes"]},
        ...     ChunkSpec((4, 4), np.dtype("u1"))).index_nbytes((4, 4))
        68
        """
        size = self.index_pipeline(shard_shape).encoded_size
        assert size is not None  # checked when the index pipeline was built
        return size

    def max_encoded_size(self) -> int | None:
        """The index plus every inner chunk at its largest, if that is bounded.

        >>> ShardingCodec({"chunk_shape": [1], "codecs": ["bytes"]},
        ...     ChunkSpec((2,), np.dtype("u1"))).max_encoded_size()
        38
        """
        inner = self.inner_pipeline.max_encoded_size
        if inner is None:
            return None
        return self.index_nbytes(self.spec.shape) + math.prod(
            self.chunks_per_shard(self.spec.shape)
        ) * inner

    # --- the index -----------------------------------------------------------------------

    def decode_index(
        self, data: bytes | memoryview, shard_shape: Sequence[int], *, what: str
    ) -> ShardIndex:
        """The index of a shard, from the shard's bytes or just its index bytes.

        >>> codec = ShardingCodec({"chunk_shape": [1], "codecs": ["bytes"]},
        ...     ChunkSpec((1,), np.dtype("u1")))
        >>> codec.decode_index(b"\\0" * 10, (1,), what="c/0")
        Traceback (most recent call last):
        zarrkit.errors.ChunkDecodeError: c/0: shard index truncated (needs 20 bytes, found 10)
        """
        needed = self.index_nbytes(shard_shape)
        view = as_bytes_view(data)
        if len(view) < needed:
            raise ChunkDecodeError(
                f"{what}: shard index truncated (needs {needed} bytes, found {len(view)})")
        part = view[:needed] if self.index_location == "start" else view[len(view) - needed:]
        entries = self.index_pipeline(shard_shape).decode(part, what=f"{what} (shard index)")
        return ShardIndex(entries, what=what)

    def shard_index(self, shard: bytes | memoryview, shard_shape: Sequence[int], *, what: str
                    ) -> ShardIndex:
        """The index of a whole shard's bytes, its ranges checked to lie inside the shard.

        >>> codec = ShardingCodec({"chunk_shape": [1], "codecs": ["bytes"]},
        ...     ChunkSpec((2,), np.dtype("u1"), 0))
        >>> codec.shard_index(codec.encode(np.array([0, 5], "u1")), (2,), what="c/0").nonempty()
        [(1,)]
        """
        view = as_bytes_view(shard)
        index = self.decode_index(view, shard_shape, what=what)
        index.check_bounds(len(view))
        return index

    def read_index(self, get_range: Callable[[int, int], bytes | memoryview | None],
                   shard_shape: Sequence[int], *, what: str) -> ShardIndex | None:
        """The index of a stored shard, fetched alone with ``get_range(start, length)`` (a
        negative start counts from the end, as ``Store.get_range``); None when the shard
        is not stored.

        >>> codec = ShardingCodec({"chunk_shape": [1], "codecs": ["bytes"]},
        ...     ChunkSpec((2,), np.dtype("u1"), 0))
        >>> shard = codec.encode(np.array([0, 5], "u1"))
        >>> codec.read_index(lambda start, n: shard[start:][:n], (2,), what="c/0").nonempty()
        [(1,)]
        """
        nbytes = self.index_nbytes(shard_shape)
        raw = get_range(-nbytes if self.index_location == "end" else 0, nbytes)
        if raw is None:
            return None
        if len(raw) != nbytes:
            raise ChunkDecodeError(f"{what}: shard index truncated ({len(raw)} of {nbytes} "
                                   "bytes)")
        index = self.decode_index(raw, shard_shape, what=what)
        # The shard's size is not known here (a range past its end shows as a short read),
        # but no range may pass the largest file offset: reading it would overflow.
        index.check_bounds(MAX_FILE_OFFSET, limit="the largest file offset")
        return index

    def encode_index(self, entries: np.ndarray[Any, Any], shard_shape: Sequence[int]) -> bytes:
        """The encoded form of an index array of shape ``chunks_per_shard + (2,)``.

        >>> codec = ShardingCodec({"chunk_shape": [1], "codecs": ["bytes"],
        ...     "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]},
        ...     ChunkSpec((1,), np.dtype("u1")))
        >>> codec.encode_index(np.array([[1, 2]], np.uint64), (1,))[:9]
        b'\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02'
        """
        data = self.index_pipeline(shard_shape).encode(entries)
        assert data is not None  # index codecs cannot be sharding
        return data

    def assemble(
        self, inner: Mapping[tuple[int, ...], bytes | memoryview | None], shard_shape: Sequence[int]
    ) -> bytes | None:
        """A shard from already-encoded inner chunks (coordinates to bytes; missing or None
        means empty), their bytes kept as given, in Morton order; None if all are empty.

        >>> codec = ShardingCodec({"chunk_shape": [1], "codecs": ["bytes"]},
        ...     ChunkSpec((2,), np.dtype("u1")))
        >>> codec.assemble({(1,): b"\\x07"}, (2,))[:1]
        b'\\x07'
        >>> codec.assemble({(0,): None}, (2,)) is None
        True
        """
        builder = ShardBuilder(self, shard_shape)
        present: dict[tuple[int, ...], bytes | memoryview] = {}
        for coords, data in inner.items():
            key = builder.check_coords(coords)
            if data is not None:
                present[key] = data
        for key in builder.morton_sorted(present):
            builder.add(key, present[key])
        shard = builder.finish()
        return None if shard is None else bytes(shard)

    # --- partial I/O (see sharding_partial) ------------------------------------------------

    def plan_partial_read(self, context: ShardContext, get_range: GetRange, job: ShardJob,
                          output: np.ndarray[Any, Any], *, whole: bool = False
                          ) -> list[RangeRead | ShardPiece]:
        """The byte-range requests for one shard's part of a read (its index fetched with
        ``get_range(key, start, length)``), unstored inner chunks filled into ``output``
        at once; with ``whole``, one request for a shard wanted whole. A
        :meth:`partial_reader` decodes them.

        >>> from zarrkit.codecs.v3.sharding_partial import ShardContext, ShardJob
        >>> from zarrkit.indexing import basic_indexer
        >>> codec = ShardingCodec({"chunk_shape": [2], "codecs": ["bytes"]},
        ...     ChunkSpec((4,), np.dtype("u1"), 0))
        >>> shard = codec.encode(np.array([0, 0, 3, 4], "u1"))
        >>> context = ShardContext("a", (4,), np.dtype("u1"), 0, (4,), lambda c: "c/0",
        ...     lambda chunk: not chunk.any(), False)
        >>> members = [(p.chunk_coords, p) for p in basic_indexer(np.s_[:], (4,), (2,))]
        >>> out = np.ones(4, "u1")
        >>> [r.length for r in codec.plan_partial_read(context,
        ...     lambda key, start, n: shard[start:][:n], ShardJob((0,), None, members), out)]
        [2]
        >>> out.tolist()[:2]  # the unstored inner chunk, filled
        [0, 0]
        """
        from zarrkit.codecs.v3.sharding_partial import plan_reads

        return plan_reads(self, context, get_range, output, job, whole)

    def partial_reader(self, context: ShardContext, get_range: GetRange,
                       fetched_shard: Callable[[str], tuple[memoryview, Any] | None] | None
                       = None) -> PartialReader:
        """A reader of :meth:`plan_partial_read`'s requests (one per thread), fetching
        byte ranges with ``get_range`` and whole shards with ``fetched_shard``.

        >>> from zarrkit.codecs.v3.sharding_partial import ShardContext
        >>> codec = ShardingCodec({"chunk_shape": [2], "codecs": ["bytes"]},
        ...     ChunkSpec((4,), np.dtype("u1"), 0))
        >>> context = ShardContext("a", (4,), np.dtype("u1"), 0, (4,), lambda c: "c/0",
        ...     lambda chunk: not chunk.any(), False)
        >>> type(codec.partial_reader(context, lambda key, start, n: None)).__name__
        'PartialReader'
        """
        from zarrkit.codecs.v3.sharding_partial import PartialReader

        return PartialReader(self, context, get_range, fetched_shard)

    def partial_writer(self, context: ShardContext, get: Get, source: Any, is_scalar: bool
                       ) -> PartialWriter:
        """A rebuilder of shards (one per thread) that rewrites the inner chunks a write
        touches from ``source`` and keeps the stored bytes of the others (read with
        ``get(key)``).

        >>> from zarrkit.codecs.v3.sharding_partial import ShardContext, ShardJob
        >>> from zarrkit.indexing import basic_indexer
        >>> codec = ShardingCodec({"chunk_shape": [2], "codecs": ["bytes"]},
        ...     ChunkSpec((4,), np.dtype("u1"), 0))
        >>> stored = {"c/0": codec.encode(np.array([1, 2, 0, 0], "u1"))}
        >>> context = ShardContext("a", (4,), np.dtype("u1"), 0, (4,), lambda c: "c/0",
        ...     lambda chunk: not chunk.any(), False)
        >>> members = [(p.chunk_coords, p) for p in basic_indexer(np.s_[3:], (4,), (2,))]
        >>> writer = codec.partial_writer(context, stored.get, 9, True)
        >>> shard = writer.rebuild(ShardJob((0,), None, members)).finish()
        >>> codec.decode(bytes(shard), what="c/0").tolist()
        [1, 2, 0, 9]
        """
        from zarrkit.codecs.v3.sharding_partial import PartialWriter

        return PartialWriter(self, context, get, source, is_scalar)

    # --- whole shards --------------------------------------------------------------------

    def inner_regions(
        self, shard_shape: Sequence[int]
    ) -> Iterator[tuple[tuple[int, ...], tuple[slice, ...]]]:
        """``(inner chunk coordinates, slices of the shard)`` for every inner chunk.

        >>> codec = ShardingCodec({"chunk_shape": [2], "codecs": ["bytes"]},
        ...     ChunkSpec((4,), np.dtype("u1")))
        >>> list(codec.inner_regions((4,)))
        [((0,), (slice(0, 2, None),)), ((1,), (slice(2, 4, None),))]
        """
        for coords in np.ndindex(*self.chunks_per_shard(shard_shape)):
            yield coords, tuple(
                slice(c * s, (c + 1) * s) for c, s in zip(coords, self.chunk_shape, strict=True)
            )

    def empty_inner_chunks(self, shard: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """Boolean array over inner chunks: True where the inner chunk is all fill value.

        >>> codec = ShardingCodec({"chunk_shape": [2], "codecs": ["bytes"]},
        ...     ChunkSpec((4,), np.dtype("u1"), 0))
        >>> codec.empty_inner_chunks(np.array([0, 0, 0, 1], "u1")).tolist()
        [True, False]
        """
        cps = self.chunks_per_shard(shard.shape)
        mask = fill_mask(shard, self.spec.fill_value)
        # Axes (c0, s0, c1, s1, ...) so that each inner chunk's elements are the odd axes.
        split = [n for pair in zip(cps, self.chunk_shape, strict=True) for n in pair]
        return np.asarray(mask.reshape(split).all(axis=tuple(range(1, 2 * len(cps), 2))))

    def encode(self, chunk: np.ndarray[Any, Any]) -> bytes | None:
        """The shard's bytes, or None when every inner chunk equals the fill value.

        >>> codec = ShardingCodec({"chunk_shape": [1], "codecs": ["bytes"]},
        ...     ChunkSpec((2,), np.dtype("u1"), 0))
        >>> codec.encode(np.array([0, 0], "u1")) is None, len(codec.encode(np.array([0, 5], "u1")))
        (True, 37)
        """
        shard = np.asarray(chunk)
        empty = self.empty_inner_chunks(shard)
        inner: dict[tuple[int, ...], bytes | None] = {}
        for coords, region in self.inner_regions(shard.shape):
            if not empty[coords]:
                inner[coords] = self.inner_pipeline.encode(shard[region])
        return self.assemble(inner, shard.shape)

    def decode(self, data: bytes | memoryview, *, what: str) -> np.ndarray[Any, Any]:
        """The whole shard; missing inner chunks read as the fill value.

        >>> codec = ShardingCodec({"chunk_shape": [1], "codecs": ["bytes"]},
        ...     ChunkSpec((2,), np.dtype("u1"), 7))
        >>> codec.decode(codec.encode(np.array([7, 5], "u1")), what="c/0").tolist()
        [7, 5]
        """
        shape = self.spec.shape
        view = as_bytes_view(data)
        index = self.shard_index(view, shape, what=what)
        empty = index.empty_mask()
        if empty.all():
            return self.spec.fill_chunk()
        out = self.spec.fill_chunk() if empty.any() else np.empty(shape, dtype=self.spec.dtype)
        for coords, region in self.inner_regions(shape):
            if empty[coords]:
                continue
            offset, nbytes = (int(v) for v in index.entries[coords])
            out[region] = self.inner_pipeline.decode(
                view[offset:offset + nbytes], what=f"{what} inner chunk {coords}"
            )
        return out
