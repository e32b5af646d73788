"""zarrkit.indexing checked against numpy's own indexing, written to kill the mutants that
``tools/mutate/run.py indexing/`` left alive.

Plans are executed on a simulated chunked array (written here independently of zarrkit):
every chunk is a full-size numpy array whose overhang holds a sentinel, so a plan that
reads the overhang returns a wrong value, and one that writes it is seen afterwards. The
result of every plan is compared with the same selection applied by numpy to the whole
array; ``is_complete`` is compared with what the chunk selection visits.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrkit.indexing import (
    ChunkProjection,
    basic_indexer,
    block_indexer,
    block_region,
    chunk_shape_at,
    coordinate_indexer,
    mask_indexer,
    orthogonal_indexer,
    vindex_indexer,
)

SENTINEL = -999
Chunks = tuple[int | tuple[int, ...], ...]
FAST = settings(max_examples=60, deadline=None, derandomize=True, database=None)


# --- the simulation -------------------------------------------------------------------------


def spans(n: int, chunk: int | tuple[int, ...]) -> list[tuple[int, int]]:
    """``(start, full stop)`` of each chunk of a dimension that holds data."""
    if isinstance(chunk, int):
        return [(k * chunk, (k + 1) * chunk) for k in range(-(-n // chunk))]
    return [(chunk[i], chunk[i + 1]) for i in range(len(chunk) - 1) if chunk[i] < n]


def split(full: np.ndarray, chunks: Chunks) -> dict[tuple[int, ...], np.ndarray]:
    per_dim = [spans(n, c) for n, c in zip(full.shape, chunks, strict=True)]
    out = {}
    for coords in itertools.product(*(range(len(s)) for s in per_dim)):
        bounds = [per_dim[d][k] for d, k in enumerate(coords)]
        chunk = np.full([b - a for a, b in bounds], SENTINEL, dtype=full.dtype)
        region = tuple(slice(a, min(b, n)) for (a, b), n in zip(bounds, full.shape, strict=True))
        chunk[tuple(slice(0, r.stop - r.start) for r in region)] = full[region]
        out[coords] = chunk
    return out


def join(store: dict[tuple[int, ...], np.ndarray], shape: tuple[int, ...],
         chunks: Chunks) -> np.ndarray:
    full = np.empty(shape, dtype=np.int64)
    per_dim = [spans(n, c) for n, c in zip(shape, chunks, strict=True)]
    for coords, chunk in store.items():
        bounds = [per_dim[d][k] for d, k in enumerate(coords)]
        region = tuple(slice(a, min(b, n)) for (a, b), n in zip(bounds, shape, strict=True))
        inside = tuple(slice(0, r.stop - r.start) for r in region)
        full[region] = chunk[inside]
        overhang = chunk.copy()
        overhang[inside] = SENTINEL
        assert (overhang == SENTINEL).all(), f"overhang of chunk {coords} written"
    return full


def inside_of(coords: tuple[int, ...], shape: tuple[int, ...], chunks: Chunks
              ) -> tuple[int, ...]:
    per_dim = [spans(n, c) for n, c in zip(shape, chunks, strict=True)]
    return tuple(min(per_dim[d][k][1], n) - per_dim[d][k][0]
                 for d, (k, n) in enumerate(zip(coords, shape, strict=True)))


def execute(indexer: Any, full: np.ndarray, chunks: Chunks) -> np.ndarray:
    """Read through the plan, checking each projection on the way."""
    store = split(full, chunks)
    out = np.full(indexer.shape, SENTINEL - 1, dtype=full.dtype)
    target = out.reshape(-1) if indexer.flat_output else out
    projections = list(indexer)
    assert len(projections) == indexer.nchunks
    coords = [p.chunk_coords for p in projections]
    assert coords == sorted(coords) and len(set(coords)) == len(coords)
    for p in projections:
        assert isinstance(p, ChunkProjection)
        chunk = store[p.chunk_coords]
        assert chunk.shape == chunk_shape_at(chunks, p.chunk_coords)
        target[p.out_selection] = chunk[p.chunk_selection]
        # is_complete: the selection visits every in-bounds element once, in C order.
        inside = inside_of(p.chunk_coords, full.shape, chunks)
        labels = np.full(chunk.shape, -1, dtype=np.int64)
        labels[tuple(slice(0, n) for n in inside)] = np.arange(
            int(np.prod(inside))).reshape(inside)
        visited = np.asarray(labels[p.chunk_selection]).reshape(-1)
        assert p.is_complete == (visited.tolist() == list(range(int(np.prod(inside))))), p
    assert list(indexer.projections_for(coords)) .__len__() == len(coords)
    if coords:
        every_other = set(coords[::2]) | {tuple(c + 1000 for c in coords[0])}
        chosen = list(indexer.projections_for(every_other))
        assert [p.chunk_coords for p in chosen] == sorted(coords[::2])
    return out


def execute_write(indexer: Any, full: np.ndarray, chunks: Chunks, value: np.ndarray
                  ) -> np.ndarray:
    store = split(full, chunks)
    source = np.broadcast_to(value, indexer.shape)
    source = source.reshape(-1) if indexer.flat_output else source
    for p in indexer:
        store[p.chunk_coords][p.chunk_selection] = source[p.out_selection]
    return join(store, full.shape, chunks)


def labelled(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)


def oindex_numpy(full: np.ndarray, selection: tuple[Any, ...]) -> np.ndarray:
    """numpy's orthogonal selection: each dimension on its own, integers dropped."""
    lists, drop = [], []
    for axis, item in enumerate(selection):
        picked = np.arange(full.shape[axis])[item]
        if np.ndim(picked) == 0:
            drop.append(axis)
            picked = np.array([picked])
        lists.append(picked)
    result = full[np.ix_(*lists)] if lists else full
    return result.reshape([n for a, n in enumerate(result.shape) if a not in drop])


# --- strategies ------------------------------------------------------------------------------


@st.composite
def grids(draw: st.DrawFn, max_ndim: int = 3, max_len: int = 9) -> tuple[tuple[int, ...], Chunks]:
    ndim = draw(st.integers(1, max_ndim))
    shape = tuple(draw(st.integers(0, max_len)) for _ in range(ndim))
    chunks: list[int | tuple[int, ...]] = []
    for n in shape:
        if draw(st.booleans()):
            chunks.append(draw(st.integers(1, max(1, n + 1))))
        else:
            cuts = sorted(draw(st.sets(st.integers(1, n + 3), max_size=4)) | {max(n, 1)})
            extra = draw(st.integers(0, 2))
            chunks.append((0, *cuts, *(cuts[-1] + i + 1 for i in range(extra))))
    return shape, tuple(chunks)


def slices(n: int) -> st.SearchStrategy[slice]:
    bound = st.none() | st.integers(-n - 3, n + 3)
    step = st.none() | st.integers(-4, 4).filter(lambda s: s != 0)
    return st.builds(slice, bound, bound, step)


@st.composite
def basic_selections(draw: st.DrawFn, shape: tuple[int, ...]) -> Any:
    items: list[Any] = []
    for n in shape:
        if n and draw(st.booleans()):
            items.append(draw(st.integers(-n, n - 1)))
        else:
            items.append(draw(slices(n)))
    if items and draw(st.booleans()):
        position = draw(st.integers(0, len(items)))
        count = draw(st.integers(0, len(items) - position))
        items[position : position + count] = [Ellipsis]
    return tuple(items) if len(items) != 1 or draw(st.booleans()) else items[0]


@st.composite
def orthogonal_selections(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, ...]:
    items: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "list", "bool"] if n else ["slice", "list"]))
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            items.append(draw(slices(n)))
        elif kind == "list":
            items.append(draw(st.lists(st.integers(-n, n - 1), max_size=6)) if n else [])
        else:
            items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                                  dtype=bool))
    return tuple(items)


# --- plans against numpy ------------------------------------------------------------------------


@FAST
@given(data=st.data())
def test_basic_plans_read_and_write_like_numpy(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    selection = data.draw(basic_selections(shape))
    full = labelled(shape)
    indexer = basic_indexer(selection, shape, chunks)
    expected = full[selection]
    assert indexer.shape == expected.shape
    assert np.array_equal(execute(indexer, full, chunks), expected)
    value = -labelled(expected.shape) - 1
    written = full.copy()
    written[selection] = value
    assert np.array_equal(execute_write(indexer, full, chunks, value), written)


@FAST
@given(data=st.data())
def test_orthogonal_plans_read_and_write_like_numpy(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    selection = data.draw(orthogonal_selections(shape))
    full = labelled(shape)
    indexer = orthogonal_indexer(selection, shape, chunks)
    expected = oindex_numpy(full, selection)
    assert indexer.shape == expected.shape
    assert np.array_equal(execute(indexer, full, chunks), expected)
    # Writes of unique positions (numpy leaves the last of repeated ones).
    unique = tuple(np.unique(np.arange(n)[item]) if isinstance(item, list) else item
                   for n, item in zip(shape, selection, strict=True))
    indexer = orthogonal_indexer(unique, shape, chunks)
    value = -labelled(indexer.shape) - 1
    written = full.copy()
    lists = [np.atleast_1d(np.arange(n)[item]) for n, item in zip(shape, unique, strict=True)]
    written[np.ix_(*lists)] = value.reshape([len(x) for x in lists])
    assert np.array_equal(execute_write(indexer, full, chunks, value), written)


@FAST
@given(data=st.data())
def test_coordinate_plans_read_like_numpy(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    full = labelled(shape)
    if 0 in shape:
        points = 0
    else:
        points = data.draw(st.integers(0, 40))
    rows = [data.draw(st.lists(st.integers(-n, n - 1), min_size=points, max_size=points))
            if n else [] for n in shape]
    selection = tuple(np.array(r, dtype=np.intp) for r in rows)
    indexer = coordinate_indexer(selection, shape, chunks)
    expected = full[selection]
    assert indexer.shape == expected.shape
    assert np.array_equal(execute(indexer, full, chunks), expected)


@FAST
@given(data=st.data())
def test_mask_plans_read_and_write_like_numpy(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    full = labelled(shape)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=full.size,
                                       max_size=full.size)), dtype=bool).reshape(shape)
    for indexer in (mask_indexer(mask, shape, chunks), vindex_indexer(mask, shape, chunks)):
        assert indexer.shape == full[mask].shape
        assert np.array_equal(execute(indexer, full, chunks), full[mask])
        value = -np.arange(int(mask.sum())) - 1
        written = full.copy()
        written[mask] = value
        assert np.array_equal(execute_write(indexer, full, chunks, value), written)


@FAST
@given(data=st.data())
def test_block_plans_cover_whole_chunks(data: st.DataObject) -> None:
    shape, chunks = data.draw(grids())
    full = labelled(shape)
    per_dim = [spans(n, c) for n, c in zip(shape, chunks, strict=True)]
    items: list[Any] = []
    regions = []
    for n, dim_spans in zip(shape, per_dim, strict=True):
        count = len(dim_spans)
        if count and data.draw(st.booleans()):
            block = data.draw(st.integers(-count, count - 1))
            a, b = dim_spans[block]
            items.append(block)
            regions.append(slice(a, min(b, n)))
        else:
            first = data.draw(st.none() | st.integers(-count - 2, count + 2))
            stop = data.draw(st.none() | st.integers(-count - 2, count + 2))
            items.append(slice(first, stop))
            picked = list(range(count))[slice(first, stop)]
            regions.append(slice(dim_spans[picked[0]][0], min(dim_spans[picked[-1]][1], n))
                           if picked else slice(0, 0))
    assert block_region(tuple(items), shape, chunks) == tuple(regions)
    indexer = block_indexer(tuple(items), shape, chunks)
    assert np.array_equal(execute(indexer, full, chunks), full[tuple(regions)])
