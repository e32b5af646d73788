"""The chunk pipeline of an array, of either Zarr format: one type (:class:`ChunkPipeline`,
which :class:`~zarrkit.codecs.v2.V2ChunkPipeline` and
:class:`~zarrkit.codecs.v3.pipeline.CodecPipelineV3` both are) and one builder,
:func:`pipeline_for`, shared by array creation (to validate a chain) and array I/O.

A pipeline knows chunks and bytes, never stores.

>>> import numpy as np
>>> from zarrkit.hierarchy.creation import array_metadata_v3
>>> meta = array_metadata_v3(shape=(4,), dtype="u1", compressors=None)
>>> pipeline_for(meta).encode(np.arange(4, dtype="u1"))
b'\\x00\\x01\\x02\\x03'
>>> pipeline_for(meta) is pipeline_for(meta)
True
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from zarrkit.caching import BoundedCache

if TYPE_CHECKING:
    from zarrkit.codecs.v3.sharding import ShardingCodec


@runtime_checkable
class ChunkPipeline(Protocol):
    """What the read and write engines ask of a chunk's codecs, in either format."""

    @property
    def sharding(self) -> ShardingCodec | None:
        """The ``sharding_indexed`` codec when the chunks are shards, else None."""
        ...

    @property
    def is_raw(self) -> bool:
        """Stored bytes are the chunk's own bytes, unchanged."""
        ...

    @property
    def decodes_into(self) -> bool:
        """:meth:`decode_into` writes into ``out`` without a chunk-sized temporary."""
        ...

    def encode(self, chunk: np.ndarray[Any, Any]) -> bytes | None: ...

    def decode(self, data: bytes | memoryview, *, what: str) -> np.ndarray[Any, Any]: ...

    def decode_into(self, data: bytes | memoryview, out: np.ndarray[Any, Any], *, what: str
                    ) -> Any: ...


def build_pipeline(metadata: Any, chunk_shape: tuple[int, ...] | None = None
                   ) -> ChunkPipeline:
    """A new pipeline for ``metadata``'s chunks (of ``chunk_shape`` when given: an edge
    chunk of a rectilinear grid), checking every codec's configuration against them
    (MetadataError if one does not fit). Prefer the cached :func:`pipeline_for`."""
    shape = tuple(metadata.chunks if chunk_shape is None else chunk_shape)
    if metadata.zarr_format == 3:
        from zarrkit.codecs.v3.pipeline import CodecPipelineV3
        from zarrkit.codecs.v3.spec import ChunkSpec

        spec = ChunkSpec(shape=shape, dtype=metadata.dtype, fill_value=metadata.fill_value)
        return CodecPipelineV3.from_json(metadata.codecs, spec)
    from zarrkit.codecs.v2 import V2ChunkPipeline

    return V2ChunkPipeline.build(metadata.dtype, shape, metadata.order, metadata.compressor,
                                 metadata.filters)


# json.dumps(codecs, sort_keys=True) builds an encoder per call, a third of its cost; the
# circular-reference check is left to the recursion limit (codecs are small JSON trees).
_KEY_ENCODER = json.JSONEncoder(sort_keys=True, check_circular=False)


def pipeline_key(metadata: Any, chunk_shape: tuple[int, ...]) -> tuple[Any, ...] | None:
    """What a pipeline depends on, hashable: format, codecs, chunk shape, dtype, and the
    fill value (v3) or order (v2); None if the codecs are not plain JSON."""
    if metadata.zarr_format == 3:
        fill = metadata.fill_value
        fill_key = (fill.dtype.str, fill.tobytes()) if isinstance(fill, np.generic) else (
            type(fill).__name__, fill)
        codecs: Any = metadata.codecs
    else:
        fill_key = metadata.order
        codecs = [metadata.compressor, metadata.filters]
    try:
        key = (metadata.zarr_format, _KEY_ENCODER.encode(codecs), chunk_shape,
               metadata.dtype, fill_key)
        hash(key)
    except (TypeError, ValueError, RecursionError):
        return None
    return key


# Built pipelines by key: arrays with equal codecs and chunk spec share one (building it
# was two thirds of the cost of an Array object when opening a hierarchy). Pipelines keep
# no state once built and are shared by the threads of a read; sharded ones hold a cache of
# their own and are left out.
_PIPELINES: BoundedCache[tuple[Any, ...], ChunkPipeline] = BoundedCache(256)


def pipeline_for(metadata: Any, chunk_shape: tuple[int, ...] | None = None) -> ChunkPipeline:
    """The pipeline of ``metadata``'s chunks (of ``chunk_shape`` when given), shared with
    every array of the same codecs, dtype, fill value (v2: order) and chunk shape. Errors
    are never cached: an invalid chain raises every time."""
    key = pipeline_key(metadata, tuple(metadata.chunks if chunk_shape is None
                                       else chunk_shape))
    if key is None:
        return build_pipeline(metadata, chunk_shape)
    pipeline = _PIPELINES.get(key)
    if pipeline is None:
        pipeline = build_pipeline(metadata, chunk_shape)
        if pipeline.sharding is None:
            _PIPELINES.put(key, pipeline)
    return pipeline


__all__ = ["ChunkPipeline", "build_pipeline", "pipeline_for", "pipeline_key"]
