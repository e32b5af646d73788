"""The Array: chunked N-dimensional data behind numpy-style indexing.

>>> import zarrkit as zk
>>> a = zk.create_array({}, shape=(4, 6), chunks=(2, 3), dtype="i4", fill_value=0)
>>> a[1:3, 2:5] = 7
>>> a[1:3, 1:5]
array([[0, 7, 7, 7],
       [0, 7, 7, 7]], dtype=int32)
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from zarrkit.buffers import ROW_COPY_FROM, allocate, copy_into, scratch_array
from zarrkit.codecs.pipeline import build_pipeline, pipeline_for
from zarrkit.codecs.v2 import V2ChunkPipeline
from zarrkit.concurrency import chunk_lock, parallel_batches, parallel_map
from zarrkit.config import config
from zarrkit.errors import (
    ChunkDecodeError,
    MetadataError,
    OutputArrayError,
    ReadOnlyError,
    ResourceLimitError,
    ShapeOverflowError,
    UnsupportedOperationError,
)
from zarrkit.hierarchy.attributes import Attributes, Edit
from zarrkit.hierarchy.consolidated import record_changes, record_documents_v2
from zarrkit.hierarchy.info import ArrayInfo
from zarrkit.hierarchy.nodes import StorePath, array_metadata_key, stored_metadata
from zarrkit.hierarchy.sharded import read_sharded, supports_partial_io, write_sharded
from zarrkit.indexing import (
    ChunkProjection,
    basic_indexer,
    block_indexer,
    block_region,
    chunk_shape_at,
    coordinate_indexer,
    grid_shape,
    mask_indexer,
    orthogonal_indexer,
    plan_batches,
    vindex_indexer,
)
from zarrkit.indexing.dispatch import (
    check_fields,
    classify_selection,
    is_plain_basic,
    split_fields,
)
from zarrkit.metadata.fill_value import default_fill_value, is_all_fill
from zarrkit.metadata.jsonio import dump_json
from zarrkit.metadata.v2 import ZATTRS
from zarrkit.paths import join_path, key_prefix
from zarrkit.storage.base import MapsValues, ReadsInto, Store

if TYPE_CHECKING:
    from zarrkit.codecs.v3.pipeline import CodecPipelineV3
    from zarrkit.codecs.v3.sharding import ShardingCodec

# Reads with less work than this run in the calling thread: handing a few small chunks
# to the pool costs more in wake-ups and GIL hand-offs than decoding them (S6's 16^3
# boxes over 64 KiB chunks ran 2x slower in the pool). The work is the bytes produced:
# of the output for uncompressed chunks (copies), of whole chunks otherwise (decoding).
_INLINE_WORK_BYTES = 1 << 20
# Uncompressed reads use the pool only when each chunk's copy averages at least this.
_POOL_COPY_BYTES = 256 << 10
# Plans are run this many projections at a time (a batch at a time in the pool): a
# selection of millions of chunks never holds a projection for each of them at once.
_PLAN_BATCH = 8192
# A read of at least _LIST_FROM chunks, spanning at least 1/_LIST_FRACTION of the grid,
# switches to listing the array's stored chunks once and reading only those when it has
# met as many missing chunks as stored ones, and at least half a probe (its first _PROBE
# chunks) of them. Each missing chunk costs a request, a listed key much less (2**20
# missing chunks took 5.4 s in memory and 15 s on disk read chunk by chunk). Listing costs
# in proportion to the whole array, hence the fraction; the stored chunks already read
# are read again, at most as many as the missing ones met. A dense array never switches.
_LIST_FROM = 4096
_LIST_FRACTION = 4
_PROBE = 32


def _grid_chunks(metadata: Any) -> tuple[Any, ...]:
    """The storage grid in the indexing package's terms: per dimension a chunk length, or
    for a rectilinear dimension its chunk boundaries ``(0, b1, ..., bk)``."""
    if metadata.zarr_format == 2:
        return tuple(metadata.chunks)
    from zarrkit.metadata.chunk_grid import RectilinearChunkGrid

    grid = metadata.chunk_grid
    if not isinstance(grid, RectilinearChunkGrid):
        return tuple(metadata.chunks)
    return tuple(
        lengths if isinstance(lengths, int) else tuple(itertools.accumulate(lengths, initial=0))
        for lengths in grid.chunk_shapes
    )


def _largest_allocation(chunk_shape: tuple[int, ...], dtype: np.dtype[Any], pipeline: Any
                        ) -> tuple[int, str]:
    """The largest block of memory that I/O of one chunk allocates, and what it is: the
    chunk decoded, or a shard's index (also inside nested shards), whichever is larger.

    >>> _largest_allocation((2**40,), np.dtype("u1"), None)
    (1099511627776, 'a chunk of shape (1099511627776,) (1099511627776 bytes decoded)')
    """
    nbytes = math.prod(chunk_shape) * dtype.itemsize
    largest = (nbytes, f"a chunk of shape {chunk_shape} ({nbytes} bytes decoded)")
    shape, sharding = chunk_shape, getattr(pipeline, "sharding", None)
    while sharding is not None:
        index_nbytes = sharding.index_nbytes(shape)
        if index_nbytes > largest[0]:
            largest = (index_nbytes, f"the index of a shard of "
                       f"{sharding.chunks_per_shard(shape)} inner chunks ({index_nbytes} bytes)")
        shape, sharding = sharding.chunk_shape, sharding.inner_pipeline.sharding
    return largest


def _largest_chunk_shape(shape: tuple[int, ...], grid_chunks: tuple[Any, ...]
                         ) -> tuple[int, ...]:
    """Per dimension, the longest (full) chunk holding data: the chunk length, or the
    longest rectilinear chunk that starts inside the array."""
    return tuple(
        chunks if isinstance(chunks, int) else max(
            (stop - start for start, stop in itertools.pairwise(chunks) if start < size),
            default=0)
        for size, chunks in zip(shape, grid_chunks, strict=True))


def _string_dtype(metadata: Any) -> np.dtype[Any] | None:
    """numpy's variable-width ``StringDType()`` when ``metadata`` describes variable-length
    UTF-8 strings (the v3 ``string`` data type; a v2 object array whose object codec, its
    first filter, is ``vlen-utf8``) and numpy has that type (2.0 on), else None:
    zarr-python 3.1 reads and reports such arrays in that type. Chunks still hold them as
    objects (what the codecs take and give).

    >>> from zarrkit.hierarchy.creation import array_metadata
    >>> _string_dtype(array_metadata(zarr_format=2, shape=(1,), dtype=str))
    StringDType()
    >>> _string_dtype(array_metadata(zarr_format=3, shape=(1,), dtype=bytes)) is None
    True
    """
    string_type = getattr(np.dtypes, "StringDType", None)
    if string_type is None or metadata.dtype.kind != "O":
        return None
    if metadata.zarr_format == 3:
        strings = getattr(metadata.data_type, "kind", None) == "string"
    else:
        # Parsing checked that an object array's first filter is its object codec.
        filters: tuple[Any, ...] = metadata.filters or ()
        strings = bool(filters) and filters[0].get("id") == "vlen-utf8"
    return string_type() if strings else None  # type: ignore[no-any-return]


def _read_fill(metadata: Any) -> Any:
    """The value of elements in missing chunks: the fill value, or the type's default (zero,
    NaT for times) when it is null: the spec leaves such chunks undefined, and that is what
    zarr-python returns."""
    if metadata.fill_value is not None or metadata.zarr_format == 3:
        return metadata.fill_value
    if metadata.dtype.kind == "O":
        filter_ids = {f.get("id") for f in metadata.filters or ()}
        if "vlen-utf8" in filter_ids:
            return ""
        if "vlen-bytes" in filter_ids:
            return b""
        return None
    return default_fill_value(metadata.dtype)


class Array:
    """A Zarr array in a store.

    Obtain one with :func:`zarrkit.create_array`, :func:`zarrkit.open_array` or from a
    group; indexing follows numpy (``a[...]``, ``a.oindex[...]``, ``a.vindex[...]``,
    ``a.blocks[...]``).

    >>> import zarrkit as zk
    >>> a = zk.create_array({}, shape=(3,), chunks=(2,), dtype="f8", fill_value=1.5)
    >>> a[:]
    array([1.5, 1.5, 1.5])
    """

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: Any,
        *,
        read_only: bool = False,
        attributes: dict[str, Any] | None = None,
        write_empty_chunks: bool | None = None,
        mmap: bool = False,
    ) -> None:
        if mmap and not isinstance(store, MapsValues):
            raise UnsupportedOperationError(
                f"mmap=True needs a store that can map values (directory or ZIP); "
                f"{store!r} cannot")
        self._mmap = mmap
        # zarr-python's config order when it differs from the stored one (else None): for
        # format 3 the memory order of what reads return; what is stored does not change.
        self._config_order: str | None = None
        self._store = store
        self._path = path
        self._read_only = read_only
        self._write_empty_chunks = write_empty_chunks
        self._metadata: Any = metadata
        self._metadata_key: str = array_metadata_key(path, metadata.zarr_format)
        self._set_metadata(metadata)
        if metadata.zarr_format == 3:
            # v3 keeps attributes inside zarr.json: a change rewrites that document.
            self._attrs = Attributes(
                store, self._metadata_key, read_only=read_only,
                loaded=dict(metadata.attributes), writer=self._write_attributes_v3,
            )
        else:
            self._attrs = Attributes(
                store, join_path(path, ZATTRS), read_only=read_only, loaded=attributes
            )

    def _write_attributes_v3(self, edit: Edit) -> dict[str, Any]:
        metadata = self._update_metadata(
            lambda current: current.with_attributes(edit(dict(current.attributes))))
        return dict(metadata.attributes)

    def _update_metadata(self, change: Callable[[Any], Any]) -> Any:
        """Apply ``change`` to the metadata document as stored now, under its key lock,
        and adopt the result: a resize or an attribute change by another handle since
        this one was opened is kept, not overwritten with this handle's old copy."""
        with chunk_lock(self._store, self._metadata_key):
            metadata = change(stored_metadata(self._store, self._metadata_key,
                                              self._metadata.zarr_format))
            document = metadata.to_json()
            self._store.set(self._metadata_key, dump_json(document))
        if metadata.zarr_format == 3 and self._path:  # outside the lock: it takes others
            record_changes(self._store, {self._path: document})
        elif metadata.zarr_format == 2:
            record_documents_v2(self._store, {self._metadata_key: document})
        self._set_metadata(metadata)
        return metadata

    def _set_metadata(self, metadata: Any) -> None:
        self._metadata = metadata
        self._metadata_key = array_metadata_key(self._path, metadata.zarr_format)
        # The storage grid: shards for a sharded array, chunks otherwise; a rectilinear
        # dimension holds its chunk boundaries instead of one length.
        self._grid_chunks: tuple[Any, ...] = _grid_chunks(metadata)
        self._regular = all(isinstance(c, int) for c in self._grid_chunks)
        first_chunk = None if self._regular else chunk_shape_at(
            self._grid_chunks, (0,) * len(self._grid_chunks))
        try:
            # Shared with arrays of the same codecs and chunk spec: a hierarchy of 1000
            # alike arrays builds (and validates) its pipeline once.
            self._pipeline = pipeline_for(metadata, first_chunk)
        except MetadataError as e:
            raise type(e)(f"array {self.name!r} ({self._metadata_key}): {e}") from e
        self._pipelines: dict[tuple[int, ...], Any] = {}
        # Chunks hold the metadata's dtype; reads give (and ``dtype`` reports) the user's,
        # which differs only for strings (see _string_dtype).
        string_dtype = _string_dtype(metadata)
        self._strings = string_dtype is not None
        self._storage_dtype: np.dtype[Any] = metadata.dtype
        self._dtype: np.dtype[Any] = string_dtype or metadata.dtype
        self._pipeline_sharding = getattr(self._pipeline, "sharding", None)
        # Partial shard I/O decodes inner chunks straight into the output, in the storage
        # dtype: strings (objects in chunks, StringDType out) go through whole shards.
        self._sharded_io = supports_partial_io(self._pipeline) if (
            self._pipeline_sharding is not None and not self._strings) else False
        if self._pipeline_sharding is not None and not self._regular:
            raise MetadataError(
                f"array {self.name!r}: sharding needs a regular chunk grid")
        self._fill = _read_fill(metadata)
        self._prefix = key_prefix(self._path)
        # Checked against config.max_chunk_bytes before each selection's I/O (not here:
        # valid metadata must open, and the limit can change).
        self._largest_allocation = _largest_allocation(
            _largest_chunk_shape(metadata.shape, self._grid_chunks), metadata.dtype,
            self._pipeline)

    def _check_allocation_limit(self) -> None:
        """ResourceLimitError if reading or writing a chunk of this array would allocate
        more than ``config.max_chunk_bytes`` at once (a declared chunk can be absurd)."""
        nbytes, what = self._largest_allocation
        if nbytes > config.max_chunk_bytes:
            raise ResourceLimitError(
                f"array {self.name!r}: I/O would allocate {what}, more than "
                f"zarrkit.config.max_chunk_bytes ({config.max_chunk_bytes}; "
                f"ZARRKIT_MAX_CHUNK_BYTES in the environment)")

    def _chunk_shape(self, chunk_coords: tuple[int, ...]) -> tuple[int, ...]:
        """The full shape of the chunk at ``chunk_coords`` (overhang included)."""
        if self._regular:
            return self._grid_chunks
        return chunk_shape_at(self._grid_chunks, chunk_coords)

    def _chunk_start(self, chunk_coords: tuple[int, ...]) -> tuple[int, ...]:
        """The array index where the chunk at ``chunk_coords`` begins."""
        return tuple(c * n if isinstance(n, int) else n[c]
                     for c, n in zip(chunk_coords, self._grid_chunks, strict=True))

    @property
    def _sharding_codec(self) -> ShardingCodec:
        """The sharding codec of a sharded array (its partial I/O asks only then)."""
        codec = self._pipeline_sharding
        if codec is None:
            raise UnsupportedOperationError(f"array {self.name!r} is not sharded")
        return codec

    def _pipeline_for(self, chunk_shape: tuple[int, ...]) -> Any:
        if self._regular:
            return self._pipeline
        pipeline = self._pipelines.get(chunk_shape)
        if pipeline is None:
            pipeline = self._pipelines[chunk_shape] = build_pipeline(self._metadata, chunk_shape)
        return pipeline

    # --- description ----------------------------------------------------------------------
    @property
    def metadata(self) -> Any:
        """The parsed array metadata document."""
        return self._metadata

    @property
    def store(self) -> Store:
        """The store holding this array."""
        return self._store

    @property
    def path(self) -> str:
        """Path of the array in its store (``""`` at the root)."""
        return self._path

    @property
    def name(self) -> str:
        """Absolute name of the array in its hierarchy, e.g. ``"/raw/img"``."""
        return "/" + self._path

    @property
    def basename(self) -> str:
        """The last segment of the name."""
        return self._path.rsplit("/", 1)[-1]

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        return self._metadata.shape

    @property
    def chunks(self) -> tuple[Any, ...]:
        """The shape of one chunk (of one inner chunk when the array is sharded, as in
        zarr-python; :attr:`shards` is then the shard shape). For a rectilinear grid, per
        dimension the chunk length or the tuple of chunk lengths, as dask writes chunks."""
        if self._pipeline_sharding is not None:
            return tuple(self._pipeline_sharding.chunk_shape)
        if not self._regular:
            return tuple(n if isinstance(n, int) else tuple(int(d) for d in np.diff(n))
                         for n in self._grid_chunks)
        return tuple(self._metadata.chunks)

    @property
    def dtype(self) -> np.dtype[Any]:
        """The numpy data type of the elements: that of the metadata, except for
        variable-length strings, numpy's ``StringDType()`` (from numpy 2; objects before),
        as in zarr-python 3.1.

        >>> import zarrkit as zk
        >>> zk.create_array({}, shape=(2,), dtype="i2").dtype
        dtype('int16')
        """
        return self._dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Size of the uncompressed data in bytes."""
        return self.size * self.dtype.itemsize

    @property
    def fill_value(self) -> Any:
        """Value of elements never written (``None`` when the metadata says null)."""
        return self._metadata.fill_value

    @property
    def order(self) -> str:
        """The memory order of the array, ``"C"`` or ``"F"``, as zarr-python reports it:
        for format 2 the stored order of its chunks; for format 3 (whose chunks are
        always stored C, a ``transpose`` codec changing the layout instead) the order of
        what reads return, set by ``config={"order": ...}``.

        >>> import zarrkit as zk
        >>> zk.create_array({}, shape=(2, 2), dtype="u1", config={"order": "F"}).order
        'F'
        >>> zk.create_array({}, shape=(2, 2), dtype="u1", order="F", zarr_format=2).order
        'F'
        """
        if self._metadata.zarr_format == 3:
            return self._config_order or "C"
        return self._stored_order

    @property
    def _stored_order(self) -> str:
        """The memory layout of stored chunks (always C in format 3)."""
        return getattr(self._metadata, "order", "C")

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        """Names of the dimensions (format 3 metadata, or xarray's ``_ARRAY_DIMENSIONS``
        attribute in format 2), or None."""
        if self._metadata.zarr_format == 3:
            names = self._metadata.dimension_names
            return tuple(names) if names is not None else None
        names = self._attrs.get("_ARRAY_DIMENSIONS")
        return tuple(names) if isinstance(names, list) else None

    @property
    def zarr_format(self) -> int:
        """The Zarr format version of the metadata."""
        return self._metadata.zarr_format

    @property
    def compressors(self) -> tuple[Any, ...]:
        """The bytes-to-bytes codecs (for v2: the compressor, if any); for v3 the public
        codec objects zarr-python returns (:mod:`zarrkit.codecs.public`)."""
        if self._metadata.zarr_format == 3:
            from zarrkit.codecs.public import array_codecs

            return array_codecs(self._pipeline)[2]
        compressor = cast("V2ChunkPipeline", self._pipeline).compressor
        return (compressor,) if compressor is not None else ()

    @property
    def compressor(self) -> Any:
        """The v2 compressor (the first bytes-to-bytes codec in v3), or None."""
        return self.compressors[0] if self.compressors else None

    @property
    def filters(self) -> tuple[Any, ...]:
        """The array-to-array codecs (v2 filters), applied in order on write."""
        if self._metadata.zarr_format == 3:
            from zarrkit.codecs.public import array_codecs

            return array_codecs(self._pipeline)[0]
        return cast("V2ChunkPipeline", self._pipeline).filters

    @property
    def serializer(self) -> Any:
        """The array-to-bytes codec of a format 3 array (None for format 2)."""
        if self._metadata.zarr_format == 3:
            from zarrkit.codecs.public import array_codecs

            return array_codecs(self._pipeline)[1]
        return None

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape of a sharded array, else None."""
        if self._pipeline_sharding is not None:
            return tuple(self._metadata.chunks)
        return None

    @property
    def attrs(self) -> Attributes:
        """User attributes, written through to the store on every change."""
        return self._attrs

    @property
    def read_only(self) -> bool:
        """Whether writes are refused."""
        return self._read_only or self._store.read_only

    @property
    def write_empty_chunks(self) -> bool:
        """Whether chunks equal to the fill value are stored (default: not)."""
        if self._write_empty_chunks is None:
            return config.write_empty_chunks
        return self._write_empty_chunks

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """Number of chunks along each dimension; inner chunks of a sharded array, as
        zarr-python counts them (:attr:`_storage_grid_shape` counts what is stored).

        >>> import zarrkit as zk
        >>> zk.create_array({}, shape=(1000,), chunks=(100,), shards=(500,), dtype="u1"
        ...                 ).cdata_shape
        (10,)
        """
        if self._pipeline_sharding is None:
            return self._storage_grid_shape
        return grid_shape(self.shape, self._pipeline_sharding.chunk_shape)

    @property
    def _storage_grid_shape(self) -> tuple[int, ...]:
        """Number of stored chunks (shards of a sharded array) along each dimension."""
        return grid_shape(self.shape, self._grid_chunks)

    @property
    def nchunks(self) -> int:
        """Total number of chunks in the grid (inner chunks of a sharded array, which
        may exceed the number of stored objects, as in zarr-python)."""
        return math.prod(self.cdata_shape)

    def _stored_chunks(self) -> list[tuple[str, tuple[int, ...]]]:
        """(key, chunk coordinates) of every stored chunk (shard) inside the grid."""
        grid = self._storage_grid_shape
        found = []
        prefix_length = len(self._prefix)
        for key in self._store.list_prefix(self._prefix):  # type: ignore[attr-defined]
            coords = self._metadata.parse_chunk_key(key[prefix_length:])
            if coords is not None and all(c < g for c, g in zip(coords, grid, strict=True)):
                found.append((key, coords))
        return found

    def _stored_chunk_keys(self) -> list[str]:
        return [key for key, _ in self._stored_chunks()]

    @property
    def nchunks_initialized(self) -> int:
        """Number of chunks present in the store; for a sharded array, as zarr-python
        counts them, the stored shards times the inner chunks a shard holds.

        >>> import zarrkit as zk
        >>> a = zk.create_array({}, shape=(1000,), chunks=(100,), shards=(500,), dtype="u1")
        >>> a[:10] = 1
        >>> a.nchunks_initialized, a._nshards_initialized
        (5, 1)
        """
        stored = self._nshards_initialized
        if self._pipeline_sharding is None:
            return stored
        return stored * math.prod(shard // inner for shard, inner in zip(
            self._grid_chunks, self._pipeline_sharding.chunk_shape, strict=True))

    @property
    def _nshards_initialized(self) -> int:
        """Number of stored objects (shards, or chunks of an unsharded array) in the store."""
        return len(self._stored_chunk_keys())

    @property
    def nbytes_stored(self) -> StoredBytes:
        """Bytes the array occupies in the store: its metadata and stored chunks. A number
        that can also be called, so that zarr-python's ``a.nbytes_stored()`` works too.

        >>> import zarrkit as zk
        >>> a = zk.create_array({}, shape=(2,), dtype="u1")
        >>> a.nbytes_stored == a.nbytes_stored() > 0
        True
        """
        keys = [self._metadata_key, join_path(self._path, ZATTRS)]
        keys += self._stored_chunk_keys()
        return StoredBytes(sum(len(v) for v in self._store.get_many(keys) if v is not None))

    @property
    def info(self) -> ArrayInfo:
        """A summary of the array, printed as a table.

        >>> import zarrkit as zk
        >>> print(zk.create_array({}, shape=(2,), dtype="u1").info)  # doctest: +ELLIPSIS
        Type               : Array
        ...
        """
        return ArrayInfo(self)

    # --- zarr-python's handle API: config, store path, chunk sizes, equality -----------------
    def info_complete(self) -> ArrayInfo:
        """The summary with what needs the store listed (bytes stored, chunks or shards
        initialized), as zarr-python's ``info_complete()``.

        >>> import zarrkit as zk
        >>> a = zk.create_array({}, shape=(4,), chunks=(2,), dtype="u1"); a[:2] = 1
        >>> dict(a.info_complete().items())["Chunks Initialized"]
        '1'
        """
        return ArrayInfo(self, complete=True)

    @property
    def config(self) -> ArrayConfig:
        """The runtime configuration of this handle (zarr-python's ``ArrayConfig``):
        ``order`` and ``write_empty_chunks``.

        >>> import zarrkit as zk
        >>> zk.create_array({}, shape=(2,), dtype="u1").config
        ArrayConfig(order='C', write_empty_chunks=False)
        """
        return ArrayConfig(order=self._config_order or "C",
                           write_empty_chunks=self.write_empty_chunks)

    def with_config(self, config: ArrayConfig | dict[str, Any]) -> Array:
        """A new handle on the same array with ``config`` (an :class:`ArrayConfig`, or a
        dict of some of its fields, the others kept from this handle's), as zarr-python.

        ``order`` is, for format 3, the memory order of what reads return (equal values,
        and :attr:`order`); what is stored does not change. Format 2 reads keep returning
        the stored order, as zarr-python's.

        >>> import zarrkit as zk
        >>> a = zk.create_array({}, shape=(2, 2), dtype="u1", fill_value=0)
        >>> b = a.with_config({"write_empty_chunks": True, "order": "F"})
        >>> b.config.write_empty_chunks, a.config.write_empty_chunks, a == b
        (True, False, True)
        >>> b[:].flags.f_contiguous, a[:].flags.f_contiguous, b.order, a.order
        (True, False, 'F', 'C')
        """
        if isinstance(config, ArrayConfig):
            new = config
        elif isinstance(config, dict):
            unknown = set(config) - {"order", "write_empty_chunks"}
            if unknown:
                raise TypeError(f"unknown array config keys {sorted(unknown)}; "
                                f"expected 'order' and 'write_empty_chunks'")
            new = ArrayConfig(**{**self.config.to_dict(), **config})
        else:
            raise TypeError(f"config must be an ArrayConfig or a dict, "
                            f"not {type(config).__name__}")
        handle = Array(self._store, self._path, self._metadata, read_only=self._read_only,
                       write_empty_chunks=bool(new.write_empty_chunks), mmap=self._mmap)
        handle._config_order = new.order if new.order != "C" else None
        return handle

    @property
    def store_path(self) -> StorePath:
        """The array's store and path; ``str()`` of it is the store's URL and the path,
        as zarr-python prints it.

        >>> import zarrkit as zk
        >>> g = zk.group({}); a = g.create_array("x/y", shape=(1,), dtype="u1")
        >>> str(a.store_path).endswith("/x/y"), a.store_path.path
        (True, 'x/y')
        """
        return StorePath(self._store, self._path)

    @property
    def write_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Per dimension, the lengths of the units of storage (shards when sharded, else
        chunks) inside the array, the last one clipped at the array's edge: the chunks of
        a dask array aligned with the storage. For rectilinear grids too.

        >>> import zarrkit as zk
        >>> zk.create_array({}, shape=(5, 4), chunks=(2, 4), dtype="u1").write_chunk_sizes
        ((2, 2, 1), (4,))
        >>> zk.create_array({}, shape=(6,), chunks=[[1, 2, 4]], dtype="u1",
        ...                 zarr_format=3).write_chunk_sizes
        ((1, 2, 3),)
        """
        return tuple(_clipped_lengths(size, chunks)
                     for size, chunks in zip(self.shape, self._grid_chunks, strict=True))

    @property
    def read_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Per dimension, the lengths of the smallest units a read decodes (the inner
        chunks of a sharded array, each shard's own clipped at its edge and the
        array's), else the same as :attr:`write_chunk_sizes`.

        >>> import zarrkit as zk
        >>> zk.create_array({}, shape=(10,), chunks=(2,), shards=(4,), dtype="u1"
        ...                 ).read_chunk_sizes
        ((2, 2, 2, 2, 2),)
        """
        if self._pipeline_sharding is None:
            return self.write_chunk_sizes
        inner = tuple(self._pipeline_sharding.chunk_shape)
        return tuple(
            tuple(length for shard in shards for length in _clipped_lengths(shard, step))
            for shards, step in zip(self.write_chunk_sizes, inner, strict=True))

    @classmethod
    def open(cls, store: Any) -> Array:
        """The existing array at the root of ``store`` (any store-like argument), as
        zarr-python's ``Array.open``; ArrayNotFoundError if there is none.

        >>> import zarrkit as zk
        >>> s = {}; _ = zk.create_array(s, shape=(2,), dtype="u1")
        >>> Array.open(s).shape
        (2,)
        """
        from zarrkit.api import open_array

        return open_array(store)  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        """Two handles are equal when they address the same array: equal store paths.

        >>> import zarrkit as zk
        >>> g = zk.group({}); a = g.create_array("x", shape=(1,), dtype="u1")
        >>> a == g["x"], a == g.create_array("y", shape=(1,), dtype="u1")
        (True, False)
        """
        if not isinstance(other, Array):
            return NotImplemented
        return self.store_path == other.store_path

    def __hash__(self) -> int:
        return hash(("zarrkit.Array", self._path))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle by what the array is (store, path, metadata, options), not by its
        caches, pipelines and locks, which the copy builds again: a Dask task in another
        process opens the same array.

        >>> import pickle, zarrkit as zk
        >>> a = zk.create_array({}, shape=(4,), chunks=(2,), shards=(4,), dtype="i2")
        >>> a[:] = 7
        >>> pickle.loads(pickle.dumps(a))[:]
        array([7, 7, 7, 7], dtype=int16)
        """
        # Format-2 attributes live in their own document: the copy reads them when asked.
        return (_unpickle_array, (self._store, self._path, self._metadata, self._read_only,
                                  self._write_empty_chunks, self._mmap, self._config_order))

    def __repr__(self) -> str:
        """As zarr-python prints an array: its store path, shape and data type.

        >>> import zarrkit as zk
        >>> zk.create_array({}, shape=(2,), dtype="u1")  # doctest: +ELLIPSIS
        <Array memory://... shape=(2,) dtype=uint8>
        """
        return f"<Array {self.store_path} shape={self.shape} dtype={self.dtype}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        if self.shape[0] > sys.maxsize:
            raise ShapeOverflowError(
                f"len() of array {self.name!r}: its first dimension, {self.shape[0]}, is "
                f"larger than len() can return ({sys.maxsize}); use .shape[0]")
        return self.shape[0]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        data = self[...]
        data = np.asarray(data)
        return data if dtype is None else data.astype(dtype)

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return self._iter_rows()

    def _iter_rows(self) -> Iterator[Any]:
        # Read one chunk row at a time so each chunk is decoded once, not once per row.
        first = self.chunks[0]
        if isinstance(first, int):
            starts = list(range(0, self.shape[0], max(first, 1)))
        else:  # rectilinear: the chunk lengths along the first dimension
            starts = [0, *itertools.accumulate(first)][:len(first)]
        for start, stop in itertools.pairwise([*starts, self.shape[0]]):
            yield from self[start:stop]

    # --- reading ---------------------------------------------------------------------------
    def __getitem__(self, selection: Any) -> Any:
        """Read a selection the way zarr-python's ``a[...]`` does (see
        :mod:`zarrkit.indexing.dispatch`): integer arrays and lists one per dimension, or
        a boolean mask, pick points (``vindex``); one index array among integers and
        slices picks an outer product (``oindex``); field names select fields.

        >>> import zarrkit as zk
        >>> a = zk.from_array({}, data=np.arange(12).reshape(3, 4), chunks=(2, 2))
        >>> a[[0, 2], [1, 3]], a[1, [1, 3]]
        (array([ 1, 11]), array([5, 7]))
        >>> a[1:, [0, 3]]
        array([[ 4,  7],
               [ 8, 11]])
        """
        if is_plain_basic(selection):
            return self._get(basic_indexer, selection)
        fields, selection = split_fields(selection)
        if fields is not None:
            field_dtype = check_fields(fields, self.dtype)
        factory, selection = self._bracket_plan(selection)
        result = self._get(factory, selection)
        if fields is None:
            return result
        records = np.asarray(result)
        if isinstance(fields, str):
            taken = records[fields].copy()  # not a view holding every field
        else:  # packed, as zarr-python returns several fields
            taken = np.empty(records.shape, dtype=field_dtype)
            for name in fields:
                taken[name] = records[name]
        return taken[()] if taken.ndim == 0 else taken

    def _bracket_plan(self, selection: Any) -> tuple[Any, Any]:
        """(the indexer factory, the selection to give it) for ``a[selection]``, fields
        split off."""
        kind, selection = classify_selection(selection, self.ndim)
        if kind == "vectorized":
            return vindex_indexer, selection
        if kind == "orthogonal":
            return orthogonal_indexer, selection
        return basic_indexer, selection

    def get_basic_selection(self, selection: Any = Ellipsis, *,
                            out: np.ndarray[Any, Any] | None = None) -> Any:
        """Read a basic (int, slice, ellipsis) selection, as numpy would; with ``out``,
        into that array (of the selection's shape and the array's dtype), which is returned.

        >>> import zarrkit as zk
        >>> zk.from_array({}, data=np.arange(10), chunks=(3,)).get_basic_selection(
        ...     slice(1, 8, 3))
        array([1, 4, 7])
        """
        return self._get(basic_indexer, selection, out)

    def read(self, selection: Any = Ellipsis, *, out: np.ndarray[Any, Any] | None = None
             ) -> Any:
        """Read a basic selection (the whole array by default), optionally into ``out``:
        chunks are then decoded, or read when uncompressed, straight into the caller's
        buffer wherever they fill a contiguous block of it.

        >>> import zarrkit as zk
        >>> a = zk.from_array({}, data=np.arange(6, dtype="u1"), chunks=(3,))
        >>> buffer = np.zeros(6, dtype="u1")
        >>> a.read(out=buffer) is buffer, buffer
        (True, array([0, 1, 2, 3, 4, 5], dtype=uint8))
        """
        return self._get(basic_indexer, selection, out)

    def get_orthogonal_selection(self, selection: Any, *,
                                 out: np.ndarray[Any, Any] | None = None) -> Any:
        """Read an outer-product selection (per-axis ints, slices, int arrays, masks)."""
        return self._get(orthogonal_indexer, selection, out)

    def get_coordinate_selection(self, selection: Any, *,
                                 out: np.ndarray[Any, Any] | None = None) -> Any:
        """Read points given by one integer array per axis."""
        return self._get(coordinate_indexer, selection, out)

    def get_mask_selection(self, mask: Any, *, out: np.ndarray[Any, Any] | None = None
                           ) -> Any:
        """Read the elements where a boolean mask of the array's shape is true."""
        return self._get(mask_indexer, mask, out)

    def get_block_selection(self, selection: Any, *, out: np.ndarray[Any, Any] | None = None
                            ) -> Any:
        """Read whole chunks (whole shards of a sharded array, as in zarr-python),
        selected by chunk-grid index."""
        self._check_allocation_limit()
        if self._sharded_io:
            region = self._block_region(selection)
            if region is not None:
                return self._get(basic_indexer, region, out)
        return self._read(block_indexer(selection, self.shape, self._grid_chunks), out)

    @property
    def oindex(self) -> OIndex:
        """Orthogonal (outer) indexing: ``a.oindex[[0, 2], :]``."""
        return OIndex(self)

    @property
    def vindex(self) -> VIndex:
        """Vectorised (numpy fancy) indexing: ``a.vindex[[0, 1], [2, 3]]``."""
        return VIndex(self)

    @property
    def blocks(self) -> BlockIndex:
        """Chunk-grid indexing: ``a.blocks[0, 1]`` is one whole chunk."""
        return BlockIndex(self)

    def to_dask(self, chunks: Any = None) -> Any:
        """A dask array reading this array lazily: one task per chunk (per shard when
        sharded) unless ``chunks`` says otherwise; see :func:`zarrkit.dask.to_dask`.

        >>> import zarrkit as zk
        >>> zk.from_array({}, data=np.arange(6), chunks=(4,)).to_dask().chunks
        ((4, 2),)
        """
        from zarrkit.dask import to_dask

        return to_dask(self, chunks)

    def _chunk_key(self, chunk_coords: tuple[int, ...]) -> str:
        return self._prefix + self._metadata.chunk_key(chunk_coords)

    def _decode(self, data: bytes, key: str, chunk_coords: tuple[int, ...]
                ) -> np.ndarray[Any, Any]:
        pipeline = self._pipeline_for(self._chunk_shape(chunk_coords))
        return pipeline.decode(data, what=f"array {self.name!r} chunk {key!r}")  # type: ignore[no-any-return]

    def _get(self, factory: Any, selection: Any, out: np.ndarray[Any, Any] | None = None
             ) -> Any:
        self._check_allocation_limit()
        if self._sharded_io:
            # Decodes straight into ``out`` (checked there against the selection).
            return self._in_read_order(read_sharded(self, factory, selection, out), out)
        indexer = factory(selection, self.shape, self._grid_chunks)
        if self._mmap and out is None and factory is basic_indexer and indexer.nchunks == 1:
            view = self._mapped_selection(indexer)
            if view is not None:  # a view into the file is the point of mmap=: no copy
                return view
        return self._in_read_order(self._read(indexer, out), out)

    @property
    def _read_order(self) -> str | None:
        """The memory order of what reads return when it is not C (None): the config
        order of a format 3 handle; the stored order of a format 2 array, whatever the
        config, as zarr-python's."""
        if self._metadata.zarr_format == 3:
            return self._config_order
        return "F" if self._stored_order == "F" else None

    def _in_read_order(self, result: Any, out: Any) -> Any:
        """``result`` in the handle's config order (a copy only when a path could not
        allocate it so); a caller's ``out`` is returned as it is."""
        if (self._read_order != "F" or out is not None or not isinstance(result, np.ndarray)
                or result.flags.f_contiguous):
            return result
        return np.asfortranarray(result)

    def _set(self, factory: Any, selection: Any, value: Any) -> None:
        self._check_writable()
        self._check_allocation_limit()
        if self._sharded_io:
            write_sharded(self, factory, selection, value)
        else:
            self._write(factory(selection, self.shape, self._grid_chunks), value)

    def _check_output(self, out: Any, shape: tuple[int, ...], *, flat: bool
                      ) -> np.ndarray[Any, Any]:
        """``out`` if it can receive a selection of ``shape``, else OutputArrayError."""
        problem = None
        if not isinstance(out, np.ndarray):
            problem = f"is a {type(out).__name__}, not a numpy array"
        elif tuple(out.shape) != tuple(shape):
            problem = f"has shape {out.shape}, the selection {tuple(shape)}"
        elif out.dtype != self.dtype and not (self._strings and out.dtype == self._storage_dtype):
            # Strings may also be read into objects, as they were before StringDType.
            problem = f"has dtype {out.dtype}, the array {self.dtype}"
        elif not out.flags.writeable:
            problem = "is read-only"
        elif flat and not out.flags.c_contiguous:
            problem = "must be C-contiguous for this selection"
        if problem is not None:
            raise OutputArrayError(f"out= for array {self.name!r} {problem}")
        return out  # type: ignore[no-any-return]

    def _output(self, indexer: Any, out: np.ndarray[Any, Any] | None
                ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """(the result of a read: ``out`` once checked, or a new array; the array the
        indexer's ``out_selection`` address: the result, flattened for pointwise reads)."""
        flat = getattr(indexer, "flat_output", False)
        if out is None:
            try:
                if self._read_order == "F" and not flat:
                    # An F-ordered array is the transpose of a C-ordered one.
                    result = allocate(tuple(indexer.shape)[::-1], self.dtype).T
                else:
                    result = allocate(indexer.shape, self.dtype)
            except ResourceLimitError as e:
                raise ResourceLimitError(f"reading array {self.name!r}: {e}") from e
        else:
            result = self._check_output(out, indexer.shape, flat=flat)
        return result, (result.reshape(-1) if flat else result)

    def _read(self, indexer: Any, out: np.ndarray[Any, Any] | None = None) -> Any:
        # The output first: one that cannot be allocated fails before any planning.
        result, target = self._output(indexer, out)
        read_batch = self._batch_reader(target)
        if self._may_list_for(indexer):
            self._read_sparse(indexer, target, result, read_batch)
        else:
            for batch in plan_batches(indexer, _PLAN_BATCH):
                self._read_batch(batch, result, read_batch)
        if out is None and result.ndim == 0:
            return result[()]
        return result

    def _read_sparse(self, indexer: Any, target: np.ndarray[Any, Any],
                     result: np.ndarray[Any, Any],
                     read_batch: Callable[[Sequence[ChunkProjection]], list[bool]]) -> None:
        """Read chunk by chunk, counting the chunks found missing; once they are as many
        as those found stored (see _LIST_FROM), list the stored chunks and read those."""
        found = missing = 0
        for batch in plan_batches(indexer, _PLAN_BATCH, first=_PROBE):
            if missing >= max(_PROBE // 2, found):
                self._read_listed(indexer, target, result, read_batch)
                return
            stored = sum(self._read_batch(batch, result, read_batch))
            found += stored
            missing += len(batch) - stored

    def _may_list_for(self, indexer: Any) -> bool:
        """Whether a read of ``indexer`` may switch to listing the stored chunks (see
        _LIST_FROM): it spans very many chunks and a good part of the grid, and the
        store can list."""
        if math.prod(indexer.shape) < _LIST_FROM:  # each chunk gives at least an element
            return False
        nchunks = indexer.nchunks
        return (nchunks >= _LIST_FROM
                and nchunks * _LIST_FRACTION >= math.prod(self._storage_grid_shape)
                and getattr(self._store, "supports_listing", False))

    def _read_listed(self, indexer: Any, target: np.ndarray[Any, Any],
                     result: np.ndarray[Any, Any],
                     read_batch: Callable[[Sequence[ChunkProjection]], list[bool]]) -> None:
        """The read again, from the array's stored chunks listed once: ``target`` filled
        with the fill value, then only the listed chunks the selection touches read."""
        stored = [coords for _, coords in self._stored_chunks()]
        target[...] = self._fill
        for batch in plan_batches(indexer.projections_for(stored), _PLAN_BATCH):
            self._read_batch(batch, result, read_batch)

    def _read_batch(self, batch: list[ChunkProjection], result: np.ndarray[Any, Any],
                    read_batch: Callable[[Sequence[ChunkProjection]], list[bool]]
                    ) -> list[bool]:
        """Read one batch of a plan, in the pool when worth it; for each chunk, whether
        it was stored."""
        if self._read_in_pool(batch, result):
            return parallel_batches(read_batch, batch)
        return read_batch(batch)

    def _read_in_pool(self, projections: Sequence[ChunkProjection],
                      result: np.ndarray[Any, Any]) -> bool:
        """Whether a read is worth the thread pool. Decoding is: once the chunks add up
        to enough bytes. Uncompressed chunks are only copied into the result, and a short
        copy per chunk gains less than the hand-off costs (S10's ``a[::7]``: 32 copies of
        87 KB, 1.0 ms inline, 1.8 ms in the pool): the copies must be long as well."""
        if self._pipeline.is_raw:
            return (result.nbytes >= _INLINE_WORK_BYTES
                    and result.nbytes >= _POOL_COPY_BYTES * len(projections))
        return self._chunks_bytes(projections) >= _INLINE_WORK_BYTES

    def _chunks_bytes(self, projections: Sequence[ChunkProjection]) -> int:
        """Decoded size of the chunks ``projections`` touch (estimated from the first chunk's
        shape on a rectilinear grid)."""
        if not projections:
            return 0
        chunk_shape = self._chunk_shape(projections[0].chunk_coords)
        return len(projections) * math.prod(chunk_shape) * self._storage_dtype.itemsize

    def _batch_reader(self, target: np.ndarray[Any, Any]
                      ) -> Callable[[Sequence[ChunkProjection]], list[bool]]:
        """A function that reads a batch of projections into ``target``, and says for
        each whether its chunk was stored.

        Chunks go by the cheapest route their codecs and the store allow: read straight
        into the destination (uncompressed, with a store that has ``get_into``), decoded
        into it (when the chunk fills a contiguous block of it), decoded into this thread's
        scratch buffer and copied (no fresh chunk-sized allocation), or, for codecs that
        need it, decoded into a new array."""
        fill = self._fill
        pipeline = self._pipeline
        raw = pipeline.is_raw
        mapped = self._mmap and raw
        reads_into = raw and not mapped and isinstance(self._store, ReadsInto)
        decodes_into = pipeline.decodes_into and not raw

        dtype = self._storage_dtype
        order = self._stored_order
        itemsize = dtype.itemsize

        def put(projection: ChunkProjection, chunk: np.ndarray[Any, Any]) -> None:
            part = chunk[projection.chunk_selection]
            if type(part) is np.ndarray and part.nbytes >= ROW_COPY_FROM and all(
                    type(s) is slice for s in projection.out_selection):
                copy_into(target[projection.out_selection], part)
            else:
                target[projection.out_selection] = part

        def place(projection: ChunkProjection, key: str, data: Any) -> None:
            if data is None:
                target[projection.out_selection] = fill
                return
            chunk_shape = self._chunk_shape(projection.chunk_coords)
            if raw:  # a view of the stored bytes: the only copy is into the target
                if len(data) != math.prod(chunk_shape) * itemsize:
                    raise ChunkDecodeError(
                        f"array {self.name!r} chunk {key!r}: {len(data)} bytes, expected "
                        f"{math.prod(chunk_shape) * itemsize} for shape {chunk_shape} of {dtype}")
                put(projection, np.frombuffer(data, dtype).reshape(chunk_shape, order=order))  # type: ignore[call-overload]
                return
            what = f"array {self.name!r} chunk {key!r}"
            if decodes_into:
                chunk_pipeline = self._pipeline_for(chunk_shape)
                destination = self._whole_chunk_view(target, projection, chunk_shape)
                if destination is not None:
                    chunk_pipeline.decode_into(data, destination, what=what)
                    return
                chunk = scratch_array(chunk_shape, dtype, self._stored_order)
                chunk_pipeline.decode_into(data, chunk, what=what)
            else:
                chunk = self._pipeline_for(chunk_shape).decode(data, what=what)
            put(projection, chunk)

        def read_into(projection: ChunkProjection, key: str) -> bool:
            chunk_shape = self._chunk_shape(projection.chunk_coords)
            destination = self._whole_chunk_view(target, projection, chunk_shape)
            chunk = destination if destination is not None else scratch_array(
                chunk_shape, dtype, self._stored_order)
            flat = chunk.reshape(-1, order="A")  # type: ignore[call-overload]
            buffer = flat.view(np.uint8).data
            try:
                found = self._store.get_into(key, buffer)  # type: ignore[attr-defined]
            except ValueError as e:
                raise ChunkDecodeError(f"array {self.name!r} chunk {key!r}: {e}") from e
            if not found:
                target[projection.out_selection] = fill
            elif destination is None:
                put(projection, chunk)
            return bool(found)

        def read_batch(batch: Sequence[ChunkProjection]) -> list[bool]:
            # Fetch inside the worker: local stores read in parallel, and remote stores
            # still get one get_many per batch of keys.
            keys = [self._chunk_key(p.chunk_coords) for p in batch]
            if reads_into:
                return [read_into(projection, key)
                        for projection, key in zip(batch, keys, strict=True)]
            if mapped:
                values = [self._mapped_value(key) for key in keys]
                for projection, key, data in zip(batch, keys, values, strict=True):
                    place(projection, key, data)
                return [data is not None for data in values]
            # Each chunk is decoded as it arrives: a remote store's other requests of
            # the batch are still in flight meanwhile (a local store's come in order).
            found = [False] * len(keys)
            arriving = getattr(self._store, "get_many_as_completed", None)
            pairs = (arriving(keys) if arriving is not None
                     else enumerate(self._store.get_many(keys)))
            for index, data in pairs:
                place(batch[index], keys[index], data)
                found[index] = data is not None
            return found

        return read_batch

    def _whole_chunk_view(self, target: np.ndarray[Any, Any], projection: ChunkProjection,
                          chunk_shape: tuple[int, ...]) -> np.ndarray[Any, Any] | None:
        """The part of ``target`` a chunk fills whole, when that part is one contiguous
        block laid out as the chunk is stored (so the chunk can be decoded into it)."""
        if not projection.is_complete:
            return None
        for part in projection.out_selection:
            if type(part) is not slice:
                return None
        view = target[(*projection.out_selection, Ellipsis)]  # a view even when 0-d
        if view.shape != chunk_shape:
            return None
        flags = view.flags
        contiguous = flags.f_contiguous if self._stored_order == "F" else flags.c_contiguous
        return view if contiguous else None

    def _mapped_value(self, key: str) -> Any:
        """The stored value of ``key`` mapped into memory, or read when it cannot be
        mapped (a compressed ZIP member), or None when missing."""
        try:
            return self._store.map_value(key)  # type: ignore[attr-defined]
        except ValueError:
            return self._store.get(key)

    def _mapped_selection(self, indexer: Any) -> np.ndarray[Any, Any] | None:
        """A read-only view into the memory-mapped chunk holding a one-chunk basic
        selection, or None when that chunk is not stored raw (or not stored)."""
        if not self._pipeline.is_raw:
            return None
        projection = next(iter(indexer))
        key = self._chunk_key(projection.chunk_coords)
        try:
            mapped = self._store.map_value(key)  # type: ignore[attr-defined]
        except ValueError:  # a compressed ZIP member cannot be mapped
            return None
        if mapped is None:
            return None
        chunk_shape = self._chunk_shape(projection.chunk_coords)
        chunk = self._pipeline_for(chunk_shape).decode(
            mapped, what=f"array {self.name!r} chunk {key!r}")
        return chunk[projection.chunk_selection]  # type: ignore[no-any-return]

    # --- writing ---------------------------------------------------------------------------
    def __setitem__(self, selection: Any, value: Any) -> None:
        """Write a selection chosen as by ``a[selection]`` (see :meth:`__getitem__`);
        ``value`` broadcasts to it as in numpy. Writing fields reads the selected records
        first and writes them back whole.

        >>> import zarrkit as zk
        >>> a = zk.create_array({}, shape=(3, 4), chunks=(2, 2), dtype="i2")
        >>> a[[0, 2], [1, 3]] = 5; a[1, 1:3] = [6, 7]; a[:]
        array([[0, 5, 0, 0],
               [0, 6, 7, 0],
               [0, 0, 0, 5]], dtype=int16)
        """
        if is_plain_basic(selection):
            self._set(basic_indexer, selection, value)
            return
        fields, selection = split_fields(selection)
        factory, selection = self._bracket_plan(selection)
        if fields is None:
            self._set(factory, selection, value)
            return
        check_fields(fields, self.dtype)
        self._check_writable()
        records = np.array(self._get(factory, selection))
        records[fields] = value
        self._set(factory, selection, records)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        """Write a basic selection; ``value`` broadcasts as in numpy.

        >>> import zarrkit as zk
        >>> a = zk.create_array({}, shape=(4,), chunks=(2,), dtype="i2")
        >>> a.set_basic_selection(slice(1, 3), [5, 6]); a[:]
        array([0, 5, 6, 0], dtype=int16)
        """
        self._set(basic_indexer, selection, value)

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        """Write an outer-product selection."""
        self._set(orthogonal_indexer, selection, value)

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        """Write points given by one integer array per axis."""
        self._set(coordinate_indexer, selection, value)

    def set_mask_selection(self, mask: Any, value: Any) -> None:
        """Write the elements where a boolean mask is true."""
        self._set(mask_indexer, mask, value)

    def set_block_selection(self, selection: Any, value: Any) -> None:
        """Write whole chunks (shards of a sharded array) selected by chunk-grid index."""
        region = self._block_region(selection) if self._sharded_io else None
        if region is not None:
            self._set(basic_indexer, region, value)
        else:
            self._check_writable()
            self._check_allocation_limit()
            self._write(block_indexer(selection, self.shape, self._grid_chunks), value)

    def _block_region(self, selection: Any) -> tuple[slice, ...] | None:
        """The element region a block selection covers on the storage grid, so that
        sharded partial I/O can serve it through a basic selection (None when it
        selects nothing)."""
        region = block_region(selection, self.shape, self._grid_chunks)
        if any(part.start == part.stop for part in region):
            return None
        return region

    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyError(f"array {self.name!r} is read-only")

    def _prepare_value(self, indexer: Any, value: Any, *, check: bool = False
                       ) -> tuple[Any, bool]:
        """The value as an array broadcast to the selection, or a scalar (cheap to assign).
        With ``check``, its elements are also run through the codecs that may refuse them
        (:meth:`_check_encodable`): a write of several chunks must not fail after storing
        some of them."""
        dtype = self._storage_dtype
        if self._strings:
            # As zarr-python: values become text as numpy's StringDType converts them (str()
            # of a number or None, bytes decoded), then objects, which the codecs take.
            strings = np.asarray(value, dtype=self._dtype)
            if strings.ndim == 0:
                text = strings[()]
                if check:
                    self._check_encodable(np.full(1, text, dtype=object))
                return text, True
            array = strings.astype(object)
        elif dtype.kind == "O":
            if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
                if check:
                    self._check_encodable(np.full(1, value, dtype=object))
                return value, True
            array = np.empty(np.shape(value), dtype=object)
            array[...] = value
        elif np.isscalar(value) or (isinstance(value, np.ndarray) and value.ndim == 0):
            scalar = np.asarray(value, dtype=dtype)[()]
            if check:
                self._check_encodable(np.full(1, scalar, dtype=dtype))
            return scalar, True
        else:
            array = np.asarray(value, dtype=dtype) if dtype.fields is None else np.asarray(value)
            if dtype.fields is not None and array.dtype != dtype:
                array = array.astype(dtype)
        if check:
            self._check_encodable(array)
        try:
            array = np.broadcast_to(array, indexer.shape)
        except ValueError as e:
            raise ValueError(
                f"cannot broadcast a value of shape {array.shape} to the selection's shape "
                f"{indexer.shape} in array {self.name!r}"
            ) from e
        if getattr(indexer, "flat_output", False):
            array = array.reshape(-1)
        return array, False

    def _check_encodable(self, elements: np.ndarray[Any, Any]) -> None:
        """Encode ``elements`` (of a value to write), in blocks of a chunk's shape, through
        the codecs that can refuse a value, and drop the result: the innermost chunks'
        codecs up to the one that makes bytes of the values. Those are the authority on
        what they take: for objects, str for vlen-utf8 (and not numpy.str_), bytes for
        vlen-bytes, what msgpack can hold...; for numbers, scale_offset refuses what its
        type cannot hold (numpy has converted the value already). Codecs of bytes take
        any bytes, so they are not run."""
        pipeline = self._pipeline
        while pipeline.sharding is not None:
            pipeline = pipeline.sharding.inner_pipeline
        stages: list[Any]
        if isinstance(pipeline, V2ChunkPipeline):
            stages, shape = list(pipeline.filters), tuple(pipeline.chunk_shape)
        else:
            v3 = cast("CodecPipelineV3", pipeline)
            stages = [*v3.array_array, *([v3.array_bytes] if self._storage_dtype.hasobject
                                         else [])]
            shape = tuple(v3.spec.shape)
        if not stages:
            return
        size = math.prod(shape)
        flat = elements.reshape(-1)
        for start in range(0, flat.size, size):
            # Every element of a block comes from the value (np.resize repeats them).
            block = np.resize(flat[start:start + size], shape)
            for codec in stages:
                block = codec.encode(block)

    def _is_edge_chunk(self, chunk_coords: tuple[int, ...]) -> bool:
        if not self._regular:
            return True  # cheap to treat every chunk as possibly overhanging
        return any(
            (c + 1) * n > s
            for c, n, s in zip(chunk_coords, self._grid_chunks, self.shape, strict=True)
        )

    def _empty_chunk(self, chunk_coords: tuple[int, ...]) -> np.ndarray[Any, Any]:
        shape = self._chunk_shape(chunk_coords)
        return np.full(shape, self._fill, dtype=self._storage_dtype, order=self._stored_order)  # type: ignore[call-overload]

    def _load_chunk_for_update(self, key: str, chunk_coords: tuple[int, ...]
                               ) -> np.ndarray[Any, Any]:
        data = self._store.get(key)
        if data is None:
            return self._empty_chunk(chunk_coords)
        chunk = self._decode(data, key, chunk_coords)
        return chunk if chunk.flags.writeable else chunk.copy(order="K")

    def _is_all_fill(self, chunk: np.ndarray[Any, Any]) -> bool:
        return is_all_fill(chunk, self._metadata.fill_value)

    def _store_chunk(self, key: str, chunk: np.ndarray[Any, Any]) -> None:
        skip = self._store.supports_deletes and not self.write_empty_chunks
        encoded = (None if skip and self._is_all_fill(chunk)
                   else self._pipeline_for(chunk.shape).encode(chunk))
        if encoded is None:  # all fill, or a shard whose inner chunks are all empty
            self._store.delete(key)
        else:
            self._store.set(key, encoded)

    def _write(self, indexer: Any, value: Any) -> None:
        self._check_writable()
        # Nothing is stored before the value encodes and every chunk to update decodes:
        # otherwise a write of several chunks failing on a later one leaves the first
        # ones written. (With one chunk, a failure comes before its store anyway.)
        several = indexer.nchunks > 1
        array, is_scalar = self._prepare_value(indexer, value, check=several)
        if several:
            self._check_chunks_to_update(indexer)
        storage_dtype = self._storage_dtype

        def write_one(projection: ChunkProjection) -> None:
            key = self._chunk_key(projection.chunk_coords)
            part = array if is_scalar else array[projection.out_selection]
            with chunk_lock(self._store, key):
                if projection.is_complete:
                    if self._is_edge_chunk(projection.chunk_coords):
                        chunk = self._empty_chunk(projection.chunk_coords)
                    elif storage_dtype.hasobject:
                        chunk = np.empty(self._grid_chunks, dtype=storage_dtype,  # type: ignore[call-overload]
                                         order=self._stored_order)
                    else:  # every element is written: no fill, and no fresh pages either
                        chunk = scratch_array(self._grid_chunks, storage_dtype, self._stored_order)
                else:
                    chunk = self._load_chunk_for_update(key, projection.chunk_coords)
                chunk[projection.chunk_selection] = part
                self._store_chunk(key, chunk)

        self._for_each_chunk(iter(indexer), write_one)

    def _check_chunks_to_update(self, indexer: Any) -> None:
        """Read and decode, then drop, every stored chunk that a write of ``indexer`` only
        partly overwrites, so that a corrupt one fails the write before anything is
        stored. Each is read again under its lock when rewritten: another writer may
        change it in between."""

        def check_one(projection: ChunkProjection) -> None:
            key = self._chunk_key(projection.chunk_coords)
            data = self._store.get(key)
            if data is not None:
                self._decode(data, key, projection.chunk_coords)

        self._for_each_chunk((p for p in indexer if not p.is_complete), check_one)

    def _for_each_chunk(self, projections: Iterator[ChunkProjection],
                        work: Callable[[ChunkProjection], None]) -> None:
        """``work`` on every projection, a plan batch at a time: in the pool when the
        batch's chunks add up to enough bytes to be worth it."""
        for batch in plan_batches(projections, _PLAN_BATCH):
            if self._chunks_bytes(batch) < _INLINE_WORK_BYTES:
                for projection in batch:
                    work(projection)
            else:
                parallel_map(work, batch)

    # --- shape changes ---------------------------------------------------------------------
    def resize(self, new_shape: Any, *more: Any) -> None:
        """Change the shape to ``new_shape`` (a tuple, or the lengths as arguments as in
        zarr-python 2); chunks wholly outside the new shape are deleted, and the part of a
        straddling chunk outside it is reset to the fill value. A rectilinear chunk grid
        that no longer covers a dimension gains a chunk spanning the added extent.

        >>> import zarrkit as zk
        >>> a = zk.from_array({}, data=np.arange(6), chunks=(2,))
        >>> a.resize(3); a.resize(6); a[:]
        array([0, 1, 2, 0, 0, 0])
        """
        self._check_writable()
        shape = (new_shape, *more)
        new_shape = tuple(int(s) for s in (shape[0] if len(shape) == 1 and isinstance(
            shape[0], (tuple, list)) else shape))
        if len(new_shape) != self.ndim or any(s < 0 for s in new_shape):
            raise ValueError(
                f"cannot resize array {self.name!r} of shape {self.shape} to {new_shape}"
            )
        if any(n < o for n, o in zip(new_shape, self.shape, strict=True)):
            self._check_allocation_limit()  # before any change: shrinking rewrites chunks
        # Shrinking clears what falls outside before the smaller shape is written: a
        # writer killed in between leaves the old shape over partly cleared data, never a
        # small shape over old data that a later grow would bring back.
        current = stored_metadata(self._store, self._metadata_key, self._metadata.zarr_format)
        if any(n < o for n, o in zip(new_shape, current.shape, strict=True)):
            # Along growing dimensions nothing is cleared (and a rectilinear grid may
            # not cover the new length yet).
            self._trim_chunks(tuple(min(n, o) for n, o in zip(new_shape, current.shape,
                                                              strict=True)))
        self._update_metadata(lambda stored: _with_shape(stored, new_shape))

    def _trim_chunks(self, shape: tuple[int, ...]) -> None:
        grid = grid_shape(shape, self._grid_chunks)
        doomed: list[str] = []
        straddling: list[tuple[str, tuple[int, ...], tuple[slice, ...]]] = []
        for key in list(self._store.list_prefix(self._prefix)):  # type: ignore[attr-defined]
            coords = self._metadata.parse_chunk_key(key[len(self._prefix):])
            if coords is None:
                continue
            if any(c >= g for c, g in zip(coords, grid, strict=True)):
                doomed.append(key)
                continue
            starts = self._chunk_start(coords)
            extents = self._chunk_shape(coords)
            if any(b + n > s for b, n, s in zip(starts, extents, shape, strict=True)):
                inside = tuple(slice(0, min(n, s - b))
                               for b, n, s in zip(starts, extents, shape, strict=True))
                straddling.append((key, coords, inside))
        for key in doomed:
            self._store.delete(key)
        for key, coords, inside in straddling:
            with chunk_lock(self._store, key):
                chunk = self._load_chunk_for_update(key, coords)
                trimmed = self._empty_chunk(coords)
                trimmed[inside] = chunk[inside]
                self._store_chunk(key, trimmed)

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow the array along ``axis`` and write ``data`` into the new region; return
        the new shape.

        >>> import zarrkit as zk
        >>> a = zk.from_array({}, data=np.zeros((2, 2)), chunks=(1, 2))
        >>> a.append(np.ones((1, 2)))
        (3, 2)
        """
        data = np.asanyarray(data)
        if data.ndim != self.ndim:
            raise ValueError(f"cannot append {data.ndim}-d data to a {self.ndim}-d array")
        axis = axis % self.ndim
        for i, (s, d) in enumerate(zip(self.shape, data.shape, strict=True)):
            if i != axis and s != d:
                raise ValueError(
                    f"shape {data.shape} does not match {self.shape} except along axis {axis}"
                )
        old = self.shape[axis]
        new_shape = tuple(s + data.shape[axis] if i == axis else s
                          for i, s in enumerate(self.shape))
        self.resize(new_shape)
        region = tuple(slice(old, None) if i == axis else slice(None) for i in range(self.ndim))
        self[region] = data
        return new_shape

    def update_attributes(self, new_attributes: dict[str, Any]) -> Array:
        """Merge ``new_attributes`` into the stored ones in one write; return self."""
        self._attrs.update(new_attributes)
        return self


class OIndex:
    """``a.oindex[...]``: orthogonal selection helper."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_orthogonal_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_orthogonal_selection(selection, value)


class VIndex:
    """``a.vindex[...]``: coordinate or mask selection helper."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        array = self._array
        return array._get(vindex_indexer, selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        array = self._array
        array._set(vindex_indexer, selection, value)


class BlockIndex:
    """``a.blocks[...]``: chunk-grid selection helper."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_block_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_block_selection(selection, value)


def _unpickle_array(store: Store, path: str, metadata: Any, read_only: bool,
                    write_empty_chunks: bool | None, mmap: bool,
                    config_order: str | None = None) -> Array:
    array = Array(store, path, metadata, read_only=read_only,
                  write_empty_chunks=write_empty_chunks, mmap=mmap)
    array._config_order = config_order
    return array


def _with_shape(metadata: Any, shape: tuple[int, ...]) -> Any:
    """``metadata`` resized to ``shape``; a rectilinear grid gains a chunk along each
    dimension that its chunks no longer cover (see
    :func:`zarrkit.indexing.grid.grown_chunk_lengths`)."""
    if metadata.zarr_format == 3:
        from dataclasses import replace

        from zarrkit.indexing.grid import grown_chunk_lengths
        from zarrkit.metadata.chunk_grid import RectilinearChunkGrid

        grid = metadata.chunk_grid
        if isinstance(grid, RectilinearChunkGrid):
            grown = RectilinearChunkGrid(grown_chunk_lengths(grid.chunk_shapes, shape))
            if grown != grid:
                metadata = replace(metadata, chunk_grid=grown)
    return metadata.with_shape(shape)


def _clipped_lengths(size: int, chunks: Any) -> tuple[int, ...]:
    """The lengths of the chunks covering ``size`` elements, the last clipped: ``chunks``
    is one length, or a rectilinear dimension's boundaries ``(0, b1, ..., bk)``.

    >>> _clipped_lengths(5, 2), _clipped_lengths(5, (0, 1, 4, 9)), _clipped_lengths(0, 3)
    ((2, 2, 1), (1, 3, 1), ())
    """
    if isinstance(chunks, int):
        full, rest = divmod(size, chunks)
        return (chunks,) * full + ((rest,) if rest else ())
    return tuple(min(stop, size) - start
                 for start, stop in itertools.pairwise(chunks) if start < size)


class StoredBytes(int):
    """A byte count that is also callable (returning itself): ``nbytes_stored`` is a
    property in zarrkit and a method in zarr-python, and both spellings work.

    >>> StoredBytes(7)(), StoredBytes(7) + 1
    (7, 8)
    """

    def __call__(self) -> int:
        return int(self)


@dataclass(frozen=True)
class ArrayConfig:
    """The runtime configuration of an array handle, as zarr-python's ``ArrayConfig``.

    >>> ArrayConfig("C", True).to_dict()
    {'order': 'C', 'write_empty_chunks': True}
    """

    order: str = "C"
    write_empty_chunks: bool = False

    def __post_init__(self) -> None:
        if self.order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F', found {self.order!r}")
        if not isinstance(self.write_empty_chunks, bool):
            raise TypeError(f"write_empty_chunks must be a bool, "
                            f"found {self.write_empty_chunks!r}")

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict."""
        return {"order": self.order, "write_empty_chunks": self.write_empty_chunks}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArrayConfig:
        """From a dict of some fields; the others from ``zarrkit.config``.

        >>> ArrayConfig.from_dict({"order": "F"}).order
        'F'
        """
        return cls(order=data.get("order", "C"),
                   write_empty_chunks=data.get("write_empty_chunks",
                                               config.write_empty_chunks))
