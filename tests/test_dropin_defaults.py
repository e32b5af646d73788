"""Defaults a zarr-python user relies on without writing them: the fill value when none is
given (NaT for times), and what ``Array.order`` reports; zarr-python is the oracle."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import zarrkit

zarr = pytest.importorskip("zarr")

_FILL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("create_array", {}),
    ("create_array", {"fill_value": 0}),
    ("create_array", {"fill_value": None}),
    ("create_array", {"fill_value": "NaT"}),
    ("create", {}),
    ("empty", {}),
    ("zeros", {}),
    ("ones", {}),
    ("full", {"fill_value": None}),
]


def _make(lib: Any, function: str, kwargs: dict[str, Any], dtype: str, zarr_format: int) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if function == "create_array":
            return lib.create_array(store={}, shape=(3,), chunks=(2,), dtype=dtype,
                                    zarr_format=zarr_format, **kwargs)
        return getattr(lib, function)(shape=(3,), chunks=(2,), dtype=dtype,
                                      zarr_format=zarr_format, **kwargs)


def _same(ours: Any, theirs: Any) -> bool:
    if theirs is None or ours is None:
        return ours is None and theirs is None
    return bool(np.asarray(ours).tobytes() == np.asarray(theirs).tobytes())


@pytest.mark.parametrize("dtype", ["M8[s]", "m8[ms]", "f4", "i2", "U3"])
@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize(("function", "kwargs"), _FILL_CALLS,
                         ids=[f"{f}-{'-'.join(k) or 'default'}" for f, k in _FILL_CALLS])
def test_fill_value_and_unwritten_elements_as_zarr_python(
        function: str, kwargs: dict[str, Any], dtype: str, zarr_format: int) -> None:
    try:
        theirs = _make(zarr, function, kwargs, dtype, zarr_format)
    except (TypeError, ValueError):  # zarr-python refuses it: zarrkit must refuse it too
        with pytest.raises(zarrkit.errors.ZarrkitError):
            _make(zarrkit, function, kwargs, dtype, zarr_format)
        return
    ours = _make(zarrkit, function, kwargs, dtype, zarr_format)
    assert _same(ours.fill_value, theirs.fill_value), (ours.fill_value, theirs.fill_value)
    expected = np.asarray(theirs[...])
    actual = ours[...]
    assert actual.dtype.kind == expected.dtype.kind
    assert actual.tobytes() == expected.tobytes() or np.array_equal(actual, expected)


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("how", ["none", "order-F", "config-F", "config-C"])
def test_order_reported_and_read_as_zarr_python(zarr_format: int, how: str) -> None:
    kwargs: dict[str, Any] = {
        "none": {}, "order-F": {"order": "F"}, "config-F": {"config": {"order": "F"}},
        "config-C": {"config": {"order": "C"}},
    }[how]
    data = np.arange(12, dtype="i4").reshape(3, 4)
    arrays = []
    for lib in (zarr, zarrkit):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = lib.create_array(store={}, shape=data.shape, chunks=(2, 2), dtype="i4",
                                 zarr_format=zarr_format, **kwargs)
        a[...] = data
        arrays.append(a)
    theirs, ours = arrays
    assert ours.order == theirs.order
    assert ours.config.order == theirs.config.order
    read_theirs, read_ours = np.asarray(theirs[...]), ours[...]
    np.testing.assert_array_equal(read_ours, data)
    assert read_ours.flags.f_contiguous == read_theirs.flags.f_contiguous
    assert read_ours.flags.c_contiguous == read_theirs.flags.c_contiguous


@pytest.mark.parametrize(("shape", "chunks", "shards", "written"), [
    ((1000,), (100,), (500,), np.s_[:600]),
    ((1000,), (100,), None, np.s_[:250]),
    ((30, 40), (5, 10), (10, 20), np.s_[:12, 25:]),
    ((30, 40), (5, 10), (10, 20), np.s_[:0]),
    ((7, 9), (2, 4), (4, 8), np.s_[5:, :]),
])
def test_chunk_counts_as_zarr_python(shape: tuple[int, ...], chunks: tuple[int, ...],
                                     shards: tuple[int, ...] | None, written: Any) -> None:
    """cdata_shape and nchunks count inner chunks of a sharded array; nchunks_initialized
    the inner chunks of the stored shards (zarr-python's rule)."""
    arrays = []
    for lib in (zarr, zarrkit):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = lib.create_array(store={}, shape=shape, chunks=chunks, shards=shards,
                                 dtype="i2")
        a[written] = 1
        arrays.append(a)
    theirs, ours = arrays
    assert ours.cdata_shape == theirs.cdata_shape
    assert ours.nchunks == theirs.nchunks
    assert ours.nchunks_initialized == theirs.nchunks_initialized
