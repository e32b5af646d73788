"""What an array's metadata implies for its I/O, worked out once when the array is opened:
the storage grid in the indexing package's terms, the value read for missing chunks, the
dtype reads give, the largest allocation one chunk's I/O makes, and the chunk lengths a
shape is cut into.

>>> from zarrkit.hierarchy.creation import array_metadata
>>> grid_chunks(array_metadata(zarr_format=3, shape=(10,), chunks=(4,), dtype="i2"))
(4,)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.caching import BoundedCache
from zarrkit.codecs.pipeline import build_pipeline, pipeline_for
from zarrkit.errors import MetadataError
from zarrkit.indexing.grid import chunk_shape_at
from zarrkit.metadata.fill_value import default_fill_value

__all__ = ["ArrayLayout", "check_chunk_lengths", "clipped_lengths", "grid_chunks",
           "largest_allocation", "largest_chunk_shape", "read_fill", "string_dtype",
           "with_shape"]


@dataclass(frozen=True)
class ArrayLayout:
    """All of the above for one array's metadata, as the array keeps it. Arrays whose
    documents differ in their attributes only share one (a hierarchy of 1,000 alike
    arrays works it out once).

    >>> from zarrkit.hierarchy.creation import array_metadata
    >>> layout = ArrayLayout.of(array_metadata(zarr_format=3, shape=(10,), chunks=(4,),
    ...                                        dtype="i2", fill_value=7))
    >>> layout.grid_chunks, layout.regular, layout.fill, layout.largest_allocation[0]
    ((4,), True, np.int16(7), 8)
    """

    grid_chunks: tuple[Any, ...]
    regular: bool
    #: The pipeline of the chunks (of the first chunk, for a rectilinear grid).
    pipeline: Any
    #: What chunks hold, and what reads give: they differ for strings only (objects in
    #: chunks, numpy's StringDType out; see :func:`string_dtype`).
    storage_dtype: np.dtype[Any]
    dtype: np.dtype[Any]
    strings: bool
    fill: Any
    largest_allocation: tuple[int, str]

    @classmethod
    def of(cls, metadata: Any) -> ArrayLayout:
        """The layout of ``metadata``: shared with every array parsed from a document of
        the same content but for attributes (``layout_key``), except sharded ones, whose
        pipelines are not shared. MetadataError from the codec pipeline if the codecs do
        not fit; never cached."""
        key = getattr(metadata, "layout_key", None)
        layout = None if key is None else _LAYOUTS.get(key)
        if layout is None:
            layout = cls._work_out(metadata)
            if key is not None and layout.pipeline.sharding is None:
                _LAYOUTS.put(key, layout)
        return layout

    @classmethod
    def _work_out(cls, metadata: Any) -> ArrayLayout:
        grid = grid_chunks(metadata)
        regular = all(isinstance(c, int) for c in grid)
        first_chunk = None if regular else chunk_shape_at(grid, (0,) * len(grid))
        # Shared with arrays of the same codecs and chunk spec, whatever else differs.
        pipeline = pipeline_for(metadata, first_chunk)
        largest = largest_chunk_shape(metadata.shape, grid)
        largest_pipeline = pipeline
        if not regular:
            check_chunk_lengths(metadata, pipeline)
            if pipeline.sharding is not None:  # its index grows with the shard
                assert first_chunk is not None
                largest_pipeline = pipeline_for(metadata, tuple(
                    n or first for n, first in zip(largest, first_chunk, strict=True)))
        strings = string_dtype(metadata)
        return cls(
            grid_chunks=grid,
            regular=regular,
            pipeline=pipeline,
            storage_dtype=metadata.dtype,
            dtype=strings or metadata.dtype,
            strings=strings is not None,
            fill=read_fill(metadata),
            largest_allocation=largest_allocation(largest, metadata.dtype, largest_pipeline),
        )


_LAYOUTS: BoundedCache[bytes, ArrayLayout] = BoundedCache(256)


def grid_chunks(metadata: Any) -> tuple[Any, ...]:
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


def largest_allocation(chunk_shape: tuple[int, ...], dtype: np.dtype[Any], pipeline: Any
                        ) -> tuple[int, str]:
    """The largest block of memory that I/O of one chunk allocates, and what it is: the
    chunk decoded, or a shard's index (also inside nested shards), whichever is larger.

    >>> largest_allocation((2**40,), np.dtype("u1"), None)
    (1099511627776, 'a chunk of shape (1099511627776,) (1099511627776 bytes decoded)')
    """
    nbytes = math.prod(chunk_shape) * dtype.itemsize
    largest = (nbytes, f"a chunk of shape {chunk_shape} ({nbytes} bytes decoded)")
    sharding = getattr(pipeline, "sharding", None)
    while sharding is not None:
        # The shard shape is what the codec sees (its spec), not the chunk's: array ->
        # array codecs before it (a transpose) may have reordered the axes.
        shape = sharding.spec.shape
        index_nbytes = sharding.index_nbytes(shape)
        if index_nbytes > largest[0]:
            largest = (index_nbytes, f"the index of a shard of "
                       f"{sharding.chunks_per_shard(shape)} inner chunks ({index_nbytes} bytes)")
        sharding = sharding.inner_pipeline.sharding
    return largest


def check_chunk_lengths(metadata: Any, pipeline: Any) -> None:
    """MetadataError unless the codecs of a sharded array take every shard length of its
    rectilinear grid (each a multiple of the inner chunk, along the axis the sharding
    codec sees it on, after any transpose), as zarr-python checks when it opens one.
    ``pipeline`` is the pipeline of the grid's first chunk; every other length along a
    dimension is tried in its place. Arrays that are not sharded are left to their
    chunks' own pipelines.

    >>> from zarrkit.hierarchy.creation import array_metadata
    >>> from zarrkit.metadata.chunk_grid import RectilinearChunkGrid
    >>> from dataclasses import replace
    >>> meta = array_metadata(zarr_format=3, shape=(30,), chunks=(10,), shards=[[20, 10]],
    ...                       dtype="u1")
    >>> check_chunk_lengths(meta, pipeline_for(meta, (20,)))
    >>> bad = replace(meta, chunk_grid=RectilinearChunkGrid(((20, 5, 5),)))
    >>> check_chunk_lengths(bad, pipeline_for(bad, (20,)))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: shard length 5 of dimension 0: codec 'sharding_indexed': ...
    """
    from zarrkit.metadata.chunk_grid import RectilinearChunkGrid

    grid = getattr(metadata, "chunk_grid", None)
    if getattr(pipeline, "sharding", None) is None or not isinstance(
            grid, RectilinearChunkGrid):
        return
    first = tuple(pipeline.spec.shape)
    for axis, lengths in enumerate(grid.chunk_shapes):
        if isinstance(lengths, int):
            continue
        for length in sorted(set(lengths) - {first[axis]}):
            try:
                build_pipeline(metadata, (*first[:axis], length, *first[axis + 1:]))
            except MetadataError as e:
                raise MetadataError(f"shard length {length} of dimension {axis}: {e}") from e


def largest_chunk_shape(shape: tuple[int, ...], grid_chunks: tuple[Any, ...]
                         ) -> tuple[int, ...]:
    """Per dimension, the longest (full) chunk holding data: the chunk length, or the
    longest rectilinear chunk that starts inside the array."""
    return tuple(
        chunks if isinstance(chunks, int) else max(
            (stop - start for start, stop in itertools.pairwise(chunks) if start < size),
            default=0)
        for size, chunks in zip(shape, grid_chunks, strict=True))


def string_dtype(metadata: Any) -> np.dtype[Any] | None:
    """numpy's variable-width ``StringDType()`` when ``metadata`` describes variable-length
    UTF-8 strings (the v3 ``string`` data type; a v2 object array whose object codec, its
    first filter, is ``vlen-utf8``) and numpy has that type (2.0 on), else None:
    zarr-python 3.1 reads and reports such arrays in that type. Chunks still hold them as
    objects (what the codecs take and give).

    >>> from zarrkit.hierarchy.creation import array_metadata
    >>> string_dtype(array_metadata(zarr_format=2, shape=(1,), dtype=str))
    StringDType()
    >>> string_dtype(array_metadata(zarr_format=3, shape=(1,), dtype=bytes)) is None
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


def read_fill(metadata: Any) -> Any:
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


def with_shape(metadata: Any, shape: tuple[int, ...]) -> Any:
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
                # A shard added for the new extent must hold whole inner chunks: refuse
                # the shape (nothing stored yet) rather than write a grid no reader takes.
                first = chunk_shape_at(grid_chunks(metadata), (0,) * len(shape))
                check_chunk_lengths(metadata, pipeline_for(metadata, first))
    return metadata.with_shape(shape)


def clipped_lengths(size: int, chunks: Any) -> tuple[int, ...]:
    """The lengths of the chunks covering ``size`` elements, the last clipped: ``chunks``
    is one length, or a rectilinear dimension's boundaries ``(0, b1, ..., bk)``.

    >>> clipped_lengths(5, 2), clipped_lengths(5, (0, 1, 4, 9)), clipped_lengths(0, 3)
    ((2, 2, 1), (1, 3, 1), ())
    """
    if isinstance(chunks, int):
        full, rest = divmod(size, chunks)
        return (chunks,) * full + ((rest,) if rest else ())
    return tuple(min(stop, size) - start
                 for start, stop in itertools.pairwise(chunks) if start < size)
