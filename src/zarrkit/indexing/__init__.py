"""Turn a user selection into a per-chunk plan over a regular or rectilinear chunk grid.

Pure numpy: nothing here knows about stores or codecs. Each ``*_indexer`` function takes
``(selection, shape, chunks)`` and returns an :class:`Indexer` whose ``shape`` is the
result shape and whose iteration yields one :class:`ChunkProjection` per chunk touched,
in C order of the chunk grid; ``projections_for`` yields those of given chunks only
(the stored ones, say). Building an indexer never walks the chunks a slice crosses, and
iterating it holds no projection for every chunk at once: ``a[:]`` over 2**40 chunks
costs nothing until iterated. Dimensions may be any length: Python ints, never numpy's.

Each entry of ``chunks`` is either an int (a regular grid along that dimension) or a
tuple of chunk boundaries ``(0, b1, ..., bk)`` with ``bk >= n`` (the ``rectilinear``
chunk grid; see :mod:`zarrkit.indexing.grid`). Chunk selections address the chunk's own
full-size array (shape :func:`chunk_shape_at`, overhang included) and never touch the
overhang.

What the selections look like:

* :func:`basic_indexer`, :func:`block_indexer` (``flat_output`` False): Python ints and
  slices only; ``out_selection`` has one slice (step 1) per kept dimension.
* :func:`orthogonal_indexer` (``flat_output`` False): as basic, plus 1-d ``intp`` arrays
  where a chunk's share of an index array is not an increasing arithmetic run. When a
  projection holds several arrays they are reshaped into an ``np.ix_`` open mesh (slices
  become aranges if a slice separates them), so plain ``x[sel]`` stays orthogonal.
* :func:`coordinate_indexer`, :func:`mask_indexer`, :func:`vindex_indexer`
  (``flat_output`` True): ``chunk_selection`` is one 1-d ``intp`` array of chunk-local
  coordinates per dimension; ``out_selection`` is ``(slice,)`` or ``(positions,)`` into
  ``out.reshape(-1)``.

>>> import numpy as np
>>> from zarrkit.indexing import basic_indexer
>>> full = np.arange(10)
>>> chunk_of = lambda k: np.resize(full[3 * k : 3 * k + 3], 3)  # full-size, padded
>>> indexer = basic_indexer(slice(2, 8, 2), shape=(10,), chunks=(3,))
>>> out = np.empty(indexer.shape, dtype=full.dtype)
>>> for p in indexer:
...     out[p.out_selection] = chunk_of(*p.chunk_coords)[p.chunk_selection]
>>> out.tolist()
[2, 4, 6]

The same selection over rectilinear chunks ``[0, 4)``, ``[4, 5)`` and ``[5, 12)``, whose
last chunk overhangs the array by two elements:

>>> bounds = (0, 4, 5, 12)
>>> grid_shape((10,), (bounds,)), chunk_shape_at((bounds,), (2,))
((3,), (7,))
>>> chunk_of = lambda k: np.resize(full[bounds[k] : bounds[k + 1]], bounds[k + 1] - bounds[k])
>>> indexer = basic_indexer(slice(2, 8, 2), shape=(10,), chunks=(bounds,))
>>> out = np.empty(indexer.shape, dtype=full.dtype)
>>> for p in indexer:
...     out[p.out_selection] = chunk_of(*p.chunk_coords)[p.chunk_selection]
>>> out.tolist(), [p.chunk_selection for p in indexer]
([2, 4, 6], [(slice(2, 3, 2),), (slice(0, 1, 2),), (slice(1, 2, 2),)])
"""

from zarrkit.indexing.basic import BasicIndexer, basic_indexer, block_indexer, block_region
from zarrkit.indexing.grid import ChunkDim, ChunkGrid, chunk_shape_at, grid_shape
from zarrkit.indexing.normalize import (
    is_pure_basic,
    normalize_integer,
    normalize_integer_array,
    normalize_slice,
)
from zarrkit.indexing.orthogonal import OrthogonalIndexer, orthogonal_indexer
from zarrkit.indexing.plan import ChunkProjection, Indexer, plan_batches
from zarrkit.indexing.vectorized import (
    VectorizedIndexer,
    coordinate_indexer,
    mask_indexer,
    vindex_indexer,
)

__all__ = [
    "BasicIndexer",
    "ChunkDim",
    "ChunkGrid",
    "ChunkProjection",
    "Indexer",
    "OrthogonalIndexer",
    "VectorizedIndexer",
    "basic_indexer",
    "block_indexer",
    "block_region",
    "chunk_shape_at",
    "coordinate_indexer",
    "grid_shape",
    "is_pure_basic",
    "mask_indexer",
    "normalize_integer",
    "normalize_integer_array",
    "normalize_slice",
    "orthogonal_indexer",
    "plan_batches",
    "vindex_indexer",
]
