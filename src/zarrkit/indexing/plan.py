"""The vocabulary shared by every indexer: a chunk projection and the indexer protocol.

An indexer turns one user selection into a sequence of :class:`ChunkProjection`, one per
chunk that the selection touches, in C order of the chunk grid. The caller moves data with
plain numpy indexing:

* read:  ``target[p.out_selection] = chunk[p.chunk_selection]``
* write: ``chunk[p.chunk_selection] = source[p.out_selection]``

where ``chunk`` is the full-size decoded chunk (shape ``chunks``, edge chunks included;
on a rectilinear grid, that chunk's own shape, :func:`~zarrkit.indexing.chunk_shape_at`)
and ``target``/``source`` is the output array of shape ``indexer.shape`` (or the value
broadcast to it) -- flattened with ``.reshape(-1)`` when ``indexer.flat_output`` is True.

>>> p = ChunkProjection((0,), (slice(0, 2),), (slice(0, 2),), False)
>>> p.chunk_coords
(0,)
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from itertools import islice
from typing import Any, NamedTuple, Protocol, runtime_checkable

__all__ = ["ChunkProjection", "Indexer", "plan_batches"]


class ChunkProjection(NamedTuple):
    """How one chunk takes part in a selection (a named tuple: indexers make one per chunk
    touched, and a tuple is built several times faster than a frozen dataclass).

    ``chunk_selection`` indexes the chunk's full-size array (its own full shape along
    rectilinear dimensions, overhang included); ``out_selection`` indexes the
    output (flattened if the indexer has ``flat_output``). ``is_complete`` is True exactly
    when ``chunk_selection`` visits every in-bounds element of the chunk once, in C order,
    so a write may build the chunk from scratch instead of reading the old one.

    >>> import numpy as np
    >>> chunk = np.arange(4)
    >>> p = ChunkProjection((1,), (slice(1, 3),), (slice(0, 2),), False)
    >>> out = np.zeros(2, dtype=int)
    >>> out[p.out_selection] = chunk[p.chunk_selection]
    >>> out.tolist()
    [1, 2]
    """

    chunk_coords: tuple[int, ...]
    chunk_selection: tuple[Any, ...]
    out_selection: tuple[Any, ...]
    is_complete: bool


@runtime_checkable
class Indexer(Protocol):
    """What every indexer offers: the result shape and an iterable chunk plan.

    ``flat_output`` tells the caller to index ``out.reshape(-1)`` rather than ``out``.
    ``nchunks`` is the number of projections that iteration yields; ``projections_for``
    yields only those of the given chunks (in C order), so that a caller who knows which
    chunks exist can plan just those; ``partial_projections`` only those not complete (in
    C order), which a write reads back.

    >>> from zarrkit.indexing import basic_indexer
    >>> isinstance(basic_indexer(0, (4,), (2,)), Indexer)
    True
    """

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def flat_output(self) -> bool: ...

    @property
    def nchunks(self) -> int: ...

    def __iter__(self) -> Iterator[ChunkProjection]: ...

    def projections_for(self, chunk_coords: Collection[tuple[int, ...]]
                        ) -> Iterator[ChunkProjection]: ...

    def partial_projections(self) -> Iterator[ChunkProjection]: ...


def plan_batches(projections: Iterable[ChunkProjection], size: int, *, first: int | None = None
                 ) -> Iterator[list[ChunkProjection]]:
    """A plan in lists of at most ``size`` projections (the first of at most ``first``),
    made as they are consumed: a selection of millions of chunks never holds a
    projection for each at once.

    >>> from zarrkit.indexing import basic_indexer
    >>> [len(batch) for batch in plan_batches(basic_indexer(slice(None), (10,), (2,)), 2)]
    [2, 2, 1]
    >>> [len(b) for b in plan_batches(basic_indexer(slice(None), (10,), (2,)), 3, first=1)]
    [1, 3, 1]
    """
    iterator = iter(projections)
    batch = list(islice(iterator, size if first is None else first))
    while batch:
        yield batch
        batch = list(islice(iterator, size))
