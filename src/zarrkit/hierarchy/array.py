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
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from zarrkit.codecs.pipeline import build_pipeline
from zarrkit.codecs.v2 import V2ChunkPipeline
from zarrkit.concurrency import chunk_lock
from zarrkit.config import config
from zarrkit.errors import (
    MetadataError,
    ReadOnlyError,
    ResourceLimitError,
    ShapeOverflowError,
    UnsupportedOperationError,
)
from zarrkit.hierarchy import read_engine, shape_changes, write_engine
from zarrkit.hierarchy.accessors import (
    ArrayConfig,
    BlockIndex,
    OIndex,
    StoredBytes,
    VIndex,
    check_array_config_keys,
    read_settings,
)
from zarrkit.hierarchy.array_layout import ArrayLayout, clipped_lengths
from zarrkit.hierarchy.attributes import Attributes, Edit
from zarrkit.hierarchy.consolidated import record_changes, record_documents_v2
from zarrkit.hierarchy.info import ArrayInfo
from zarrkit.hierarchy.nodes import (
    DEFAULT,
    StorePath,
    array_metadata_key,
    stored_metadata,
)
from zarrkit.hierarchy.sharded import supports_partial_io
from zarrkit.indexing import (
    basic_indexer,
    block_indexer,
    block_region,
    chunk_shape_at,
    coordinate_indexer,
    grid_shape,
    mask_indexer,
    orthogonal_indexer,
    vindex_indexer,
)
from zarrkit.indexing.dispatch import (
    check_fields,
    classify_selection,
    is_plain_basic,
    split_fields,
)
from zarrkit.metadata.fill_value import is_all_fill
from zarrkit.metadata.jsonio import as_json_lists, dump_json
from zarrkit.metadata.v2 import ZATTRS
from zarrkit.paths import join_path, key_prefix
from zarrkit.storage.base import MapsValues, Store, offers

if TYPE_CHECKING:
    from zarrkit.codecs.v3.sharding import ShardingCodec



# Chunk keys an array remembers (see Array._chunk_keys): a few MiB at most.
_CHUNK_KEYS_KEPT = 1 << 14


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
        if mmap and not offers(store, MapsValues):
            raise UnsupportedOperationError(
                f"mmap=True needs a store that can map values (directory or ZIP); "
                f"{store!r} cannot")
        self._mmap = mmap
        # zarr-python's config order when it differs from the stored one (else None): for
        # format 3 the memory order of what reads return; what is stored does not change.
        self._config_order: str | None = None
        # zarr-python's read settings of the handle, as the config had them when it was made.
        self._read_settings: dict[str, Any] = read_settings()
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
        key = self._metadata_key
        with chunk_lock(self._store, key):
            metadata = change(stored_metadata(self._store, key, self._metadata.zarr_format))
            document = metadata.to_json()
            self._store.set(key, dump_json(document))
            # Adopted in the order stored: threads changing one handle leave it with the
            # last stored document (two appends' shapes never end with the smaller).
            self._set_metadata(metadata)
        if metadata.zarr_format == 3 and self._path:  # outside the lock: it takes others
            record_changes(self._store, {self._path: document})
        elif metadata.zarr_format == 2:
            record_documents_v2(self._store, {self._metadata_key: document})
        return metadata

    def _set_metadata(self, metadata: Any) -> None:
        self._metadata = metadata
        self._metadata_key = array_metadata_key(self._path, metadata.zarr_format)
        try:
            layout = ArrayLayout.of(metadata)
        except MetadataError as e:
            raise type(e)(f"array {self.name!r} ({self._metadata_key}): {e}") from e
        # The storage grid: shards for a sharded array, chunks otherwise; a rectilinear
        # dimension holds its chunk boundaries instead of one length.
        self._grid_chunks: tuple[Any, ...] = layout.grid_chunks
        self._regular = layout.regular
        self._pipeline = layout.pipeline
        self._pipelines: dict[tuple[int, ...], Any] = {}
        # (config.engine, the native chain or None), set on the first read.
        self._native: tuple[str, Any] | None = None
        # Chunks hold the metadata's dtype; reads give (and ``dtype`` reports) the user's,
        # which differs only for strings (see array_layout.string_dtype).
        self._strings = layout.strings
        self._storage_dtype: np.dtype[Any] = layout.storage_dtype
        self._dtype: np.dtype[Any] = layout.dtype
        # Sharded as zarr-python counts it: sharding_indexed is the only codec. With
        # codecs around it (a transpose before it, as tensorstore writes) the stored
        # objects are still shards, but of the codecs' output, whose axes need not be
        # the array's: such an array is read and written chunk by chunk, its chunk
        # being the whole shard.
        self._pipeline_sharding = (self._pipeline.sharding
                                   if supports_partial_io(self._pipeline) else None)
        # Partial shard I/O decodes inner chunks straight into the output, in the storage
        # dtype: strings (objects in chunks, StringDType out) go through whole shards.
        self._sharded_io = (self._pipeline_sharding is not None and not self._strings
                            and self._regular)
        self._fill = layout.fill
        self._prefix = key_prefix(self._path)
        # Chunk coordinates -> store keys: the same chunks' keys are made on every read
        # of a small selection (a third of S10's per-chunk cost, without this).
        self._chunk_keys: dict[tuple[int, ...], str] = {}
        # Checked against config.max_chunk_bytes before each selection's I/O (not here:
        # valid metadata must open, and the limit can change).
        self._largest_allocation = layout.largest_allocation

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
    def _native_chain(self) -> Any:
        """The native engine's chain for this array's chunks, or None when they take the
        Python path (see :attr:`engine`); decided once per ``config.engine`` setting."""
        # Raw chunks are read straight into the output by the Python path, with no
        # decoding to hand over (see _native_copy_chain for the exception); mapped ones
        # are views of the files.
        return None if self._pipeline.is_raw else self._engine_chain()

    @property
    def _native_copy_chain(self) -> Any:
        """The engine's chain for raw (uncompressed) chunks, which a read only copies: the
        engine does that in one call for reads from stores that hand over bytes (S10's
        ``a[::7]`` from memory: 32 strided copies, in its threads; ``a[0]``: 8 copies of 40
        bytes, inline), not a Python copy per chunk; None for other arrays."""
        return self._engine_chain() if self._pipeline.is_raw else None

    def _engine_chain(self) -> Any:
        setting = config.engine
        cached = self._native
        if cached is None or cached[0] != setting:
            chain = None
            sharding = self._pipeline_sharding
            if (self._regular and (sharding is None or self._sharded_io)
                    and not self._strings and not self._mmap):
                from zarrkit import native

                chain = native.array_chain(self._metadata, self._storage_dtype, self._fill)
            cached = self._native = (setting, chain)
        return cached[1]

    @property
    def engine(self) -> str:
        """Which engine decodes this array's chunks: ``"native"`` (:mod:`zarrkit.native`,
        for the codec chains it covers) or ``"python"``; ``zarrkit.config.engine =
        "python"`` (``ZARRKIT_ENGINE=python``) sends every array to the Python path.

        >>> import zarrkit as zk
        >>> a = zk.create_array({}, shape=(4,), dtype="u2")
        >>> with zk.config.set(engine="python"):
        ...     a.engine
        'python'
        """
        return "python" if self._native_chain is None else "native"

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
            return self._declared_lengths()
        return tuple(self._metadata.chunks)

    def _declared_lengths(self) -> tuple[Any, ...]:
        """Per dimension of a rectilinear grid, the declared chunk (shard) lengths, or the
        one length of a regular dimension, as dask writes chunks."""
        return tuple(n if isinstance(n, int) else tuple(int(d) for d in np.diff(n))
                     for n in self._grid_chunks)

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
        """The shard shape of a sharded array, else None; for a rectilinear shard grid, per
        dimension the shard length or the tuple of shard lengths (as :attr:`chunks` gives a
        rectilinear chunk grid; zarr-python raises NotImplementedError there).

        >>> import zarrkit as zk
        >>> zk.create_array({}, shape=(30, 8), chunks=(5, 4), shards=[[20, 10], [8]],
        ...                 dtype="u1").shards
        ((20, 10), (8,))
        """
        if self._pipeline_sharding is not None:
            return tuple(self._metadata.chunks) if self._regular else self._declared_lengths()
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
    def read_missing_chunks(self) -> bool:
        """Whether a chunk (a shard) that is not stored reads as the fill value (default),
        or raises :class:`~zarrkit.errors.ChunkNotFoundError`: the handle's config, set
        by ``config=`` or :meth:`with_config`, else ``zarrkit.config`` when it was made.

        >>> import zarrkit as zk
        >>> a = zk.create_array({}, shape=(2,), dtype="u1")
        >>> a.read_missing_chunks, a.with_config({"read_missing_chunks": False})[:]
        Traceback (most recent call last):
        ...
        zarrkit.errors.ChunkNotFoundError: 1 chunk(s) not found in store 'memory://...'.
        Set the 'array.read_missing_chunks' config to True ...
        Missing chunks:
          chunk 'c/0' (grid position (0,))
        """
        return bool(self._read_settings["read_missing_chunks"])

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
        if self._pipeline_sharding is None:
            return self._nshards_initialized
        inner = self._pipeline_sharding.chunk_shape
        if not self._regular:  # shards of a rectilinear grid hold different numbers
            return sum(math.prod(shard // step for shard, step in zip(
                self._chunk_shape(coords), inner, strict=True))
                for _, coords in self._stored_chunks())
        return self._nshards_initialized * math.prod(shard // step for shard, step in zip(
            self._grid_chunks, inner, strict=True))

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
        """The runtime configuration of this handle (zarr-python's ``ArrayConfig``).

        >>> import zarrkit as zk
        >>> zk.create_array({}, shape=(2,), dtype="u1").config  # doctest: +ELLIPSIS
        ArrayConfig(order='C', write_empty_chunks=False, read_missing_chunks=True, ...)
        """
        return ArrayConfig(order=self._config_order or "C",
                           write_empty_chunks=self.write_empty_chunks, **self._read_settings)

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
        write_empty_chunks = self._write_empty_chunks
        if isinstance(config, ArrayConfig):
            new = config
            write_empty_chunks = new.write_empty_chunks
        elif isinstance(config, dict):
            check_array_config_keys(config)
            new = ArrayConfig(**{**self.config.to_dict(), **config})
            if "write_empty_chunks" in config:
                write_empty_chunks = new.write_empty_chunks
        else:
            raise TypeError(f"config must be an ArrayConfig or a dict, "
                            f"not {type(config).__name__}")
        handle = Array(self._store, self._path, self._metadata, read_only=self._read_only,
                       write_empty_chunks=write_empty_chunks, mmap=self._mmap)
        handle._config_order = new.order if new.order != "C" else None
        handle._read_settings = read_settings(new)
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
        return tuple(clipped_lengths(size, chunks)
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
            tuple(length for shard in shards for length in clipped_lengths(shard, step))
            for shards, step in zip(self.write_chunk_sizes, inner, strict=True))

    @classmethod
    def open(cls, store: Any, *, config: ArrayConfig | dict[str, Any] | None = None) -> Array:
        """The existing array at the root of ``store`` (any store-like argument), as
        zarr-python's ``Array.open``, with the runtime ``config`` given (see
        :meth:`with_config`); ArrayNotFoundError if there is none.

        >>> import zarrkit as zk
        >>> s = {}; _ = zk.create_array(s, shape=(2,), dtype="u1")
        >>> Array.open(s, config={"write_empty_chunks": True}).config.write_empty_chunks
        True
        """
        from zarrkit.api import open_array

        array: Array = open_array(store)
        return array if config is None else array.with_config(config)

    @classmethod
    def from_dict(cls, store_path: StorePath, data: dict[str, Any]) -> Array:
        """An array at ``store_path`` described by the metadata document ``data`` (format
        2 or 3, as ``metadata.to_dict()`` gives it, ``attributes`` included). As in
        zarr-python, nothing is written: the metadata live in the returned object only
        (write them with :func:`zarrkit.create_hierarchy` to keep them); chunks written
        through it are stored.

        >>> from zarrkit.storage import MemoryStore, StorePath
        >>> s = MemoryStore()
        >>> a = Array.from_dict(StorePath(s, "x"), {"zarr_format": 2, "shape": [4],
        ...     "chunks": [2], "dtype": "<i2", "compressor": None, "fill_value": 0,
        ...     "filters": None, "order": "C", "attributes": {"u": 1}})
        >>> a[:] = 7; a.attrs["u"], sorted(s.list())
        (1, ['x/0', 'x/1'])
        """
        from zarrkit.metadata.v2 import ArrayMetadataV2
        from zarrkit.metadata.v3 import ArrayMetadataV3

        if not isinstance(data, dict):
            raise MetadataError(f"array metadata must be a dict, found {type(data).__name__}")
        document = as_json_lists(data)
        attributes = document.get("attributes") or {}
        zarr_format = document.get("zarr_format")
        metadata: Any
        if zarr_format == 3:
            metadata = ArrayMetadataV3.from_json(document)
        elif zarr_format == 2:
            metadata = ArrayMetadataV2.from_json(
                {k: v for k, v in document.items() if k != "attributes"})
        else:
            raise MetadataError(f"zarr_format must be 2 or 3, found {zarr_format!r}")
        return cls(store_path.store, store_path.path, metadata,
                   read_only=store_path.store.read_only, attributes=attributes)

    @classmethod
    def create(
        cls,
        store: Any,
        *,
        shape: Any,
        dtype: Any,
        zarr_format: int = 3,
        fill_value: Any = DEFAULT,
        attributes: dict[str, Any] | None = None,
        chunk_shape: Any = None,
        chunk_key_encoding: Any = None,
        codecs: Any = None,
        dimension_names: Any = None,
        chunks: Any = None,
        dimension_separator: str | None = None,
        order: str | None = None,
        filters: Any = None,
        compressor: Any = "auto",
        overwrite: bool = False,
        config: dict[str, Any] | None = None,
    ) -> Array:
        """A new array at the root of ``store`` (zarr-python's deprecated classmethod:
        use :func:`zarrkit.create_array`); warns ``ZarrDeprecationWarning`` as zarr-python
        does. ``chunk_shape``, ``chunk_key_encoding`` and ``codecs`` are format 3's,
        ``chunks``, ``dimension_separator``, ``order``, ``filters`` and ``compressor``
        format 2's.

        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     a = Array.create({}, shape=(4,), dtype="u1", chunk_shape=(2,))
        >>> a.chunks
        (2,)
        """
        import warnings

        from zarrkit.creation_functions import create
        from zarrkit.errors import ZarrDeprecationWarning

        warnings.warn("Use zarrkit.create_array instead.", ZarrDeprecationWarning,
                      stacklevel=2)
        return create(shape, store=store, dtype=dtype, zarr_format=zarr_format,
                      fill_value=fill_value, attributes=attributes, chunk_shape=chunk_shape,
                      chunk_key_encoding=chunk_key_encoding, codecs=codecs,
                      dimension_names=dimension_names, chunks=chunks,
                      dimension_separator=dimension_separator, order=order, filters=filters,
                      compressor=compressor, overwrite=overwrite, config=config)

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
                                  self._write_empty_chunks, self._mmap, self._config_order,
                                  self._read_settings))

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
        keys = self._chunk_keys
        key = keys.get(chunk_coords)
        if key is None:
            key = self._prefix + self._metadata.chunk_key(chunk_coords)
            if len(keys) >= _CHUNK_KEYS_KEPT:
                keys.clear()
            keys[chunk_coords] = key
        return key

    def _decode(self, data: bytes, key: str, chunk_coords: tuple[int, ...]
                ) -> np.ndarray[Any, Any]:
        return read_engine.decode(self, data, key, chunk_coords)

    def _get(self, factory: Any, selection: Any, out: np.ndarray[Any, Any] | None = None
             ) -> Any:
        return read_engine.get(self, factory, selection, out)

    def _set(self, factory: Any, selection: Any, value: Any) -> None:
        return write_engine.set(self, factory, selection, value)

    def _check_output(self, out: Any, shape: tuple[int, ...], *, flat: bool
                      ) -> np.ndarray[Any, Any]:
        return read_engine.check_output(self, out, shape, flat=flat)

    def _output(self, indexer: Any, out: np.ndarray[Any, Any] | None
                ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        return read_engine.output(self, indexer, out)

    def _read(self, indexer: Any, out: np.ndarray[Any, Any] | None = None) -> Any:
        # The output first: one that cannot be allocated fails before any planning.
        return read_engine.read(self, indexer, out)









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
        return write_engine.prepare_value(self, indexer, value, check=check)


    def _empty_chunk(self, chunk_coords: tuple[int, ...]) -> np.ndarray[Any, Any]:
        return write_engine.empty_chunk(self, chunk_coords)

    def _load_chunk_for_update(self, key: str, chunk_coords: tuple[int, ...]
                               ) -> np.ndarray[Any, Any]:
        return write_engine.load_chunk_for_update(self, key, chunk_coords)

    def _is_all_fill(self, chunk: np.ndarray[Any, Any]) -> bool:
        return is_all_fill(chunk, self._metadata.fill_value)

    def _store_chunk(self, key: str, chunk: np.ndarray[Any, Any]) -> None:
        return write_engine.store_chunk(self, key, chunk)

    def _write(self, indexer: Any, value: Any) -> None:
        return write_engine.write(self, indexer, value)

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
        shape_changes.resize(self, new_shape, *more)

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow the array along ``axis`` and write ``data`` into the new region; return
        the new shape.

        >>> import zarrkit as zk
        >>> a = zk.from_array({}, data=np.zeros((2, 2)), chunks=(1, 2))
        >>> a.append(np.ones((1, 2)))
        (3, 2)
        """
        return shape_changes.append(self, data, axis)

    def update_attributes(self, new_attributes: dict[str, Any]) -> Array:
        """Merge ``new_attributes`` into the stored ones in one write; return self."""
        self._attrs.update(new_attributes)
        return self


def _unpickle_array(store: Store, path: str, metadata: Any, read_only: bool,
                    write_empty_chunks: bool | None, mmap: bool,
                    config_order: str | None = None,
                    settings: dict[str, Any] | None = None) -> Array:
    array = Array(store, path, metadata, read_only=read_only,
                  write_empty_chunks=write_empty_chunks, mmap=mmap)
    array._config_order = config_order
    if settings is not None:
        array._read_settings = read_settings(settings)
    return array


