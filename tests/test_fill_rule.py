"""One rule for empty chunks, whole or inside shards, plain or partial writes: a chunk is
empty when every element has the fill value's bits (the v3 spec's fill value is a bit
pattern). So -0.0 with a 0.0 fill, or a NaN of other bits than the fill's, is data."""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import zarrkit as zk
from zarrkit.metadata.fill_value import fill_mask, is_all_fill
from zarrkit.storage import MemoryStore

NEGATIVE_NAN = np.frombuffer(np.uint64(0xFFF8000000000000).tobytes(), "f8")[0]
_SPECIAL = [0.0, -0.0, np.nan, NEGATIVE_NAN, 1.0]


def _bits(values: np.ndarray[Any, Any]) -> list[int]:
    return np.ascontiguousarray(values).view("u8").tolist()


@settings(max_examples=60, deadline=None)
@given(data=st.lists(st.sampled_from(_SPECIAL), min_size=8, max_size=8),
       fill=st.sampled_from([0.0, -0.0, np.nan]),
       layout=st.sampled_from(["plain", "sharded"]),
       how=st.sampled_from(["whole", "per-chunk", "per-element"]))
def test_every_write_path_keeps_the_bits_and_skips_only_fill_bits(
        data: list[float], fill: float, layout: str, how: str) -> None:
    values = np.array(data, dtype="f8")
    store = MemoryStore()
    shards = (8,) if layout == "sharded" else None
    a = zk.create_array(store, shape=(8,), chunks=(2,), shards=shards, dtype="f8",
                        fill_value=fill)
    if how == "whole":
        a[:] = values
    elif how == "per-chunk":
        for start in range(0, 8, 2):
            a[start:start + 2] = values[start:start + 2]
    else:
        for i in range(8):
            a[i] = values[i]
    assert _bits(a[:]) == _bits(values)
    # What is stored: a chunk (or inner chunk) is left out exactly when all its bits are
    # the fill's.
    empty = [is_all_fill(values[i:i + 2], np.float64(fill)) for i in range(0, 8, 2)]
    if layout == "plain":
        stored = [store.get(f"c/{i}") is not None for i in range(4)]
        assert stored == [not e for e in empty]
    else:
        assert (store.get("c/0") is None) == all(empty)
        if not all(empty):
            from zarrkit.codecs.v3.sharding import ShardingCodec
            codec = a._pipeline_sharding
            assert isinstance(codec, ShardingCodec)
            index = codec.decode_index(store.get("c/0"), (8,), what="c/0")
            assert index.empty_mask().tolist() == empty


def test_fill_mask_is_bitwise() -> None:
    values = np.array([0.0, -0.0, np.nan, NEGATIVE_NAN])
    assert fill_mask(values, 0.0).tolist() == [True, False, False, False]
    assert fill_mask(values, -0.0).tolist() == [False, True, False, False]
    assert fill_mask(values, np.nan).tolist() == [False, False, True, False]
    assert fill_mask(np.array(["a", "b"], dtype=object), "a").tolist() == [True, False]


@pytest.mark.parametrize("dtype", ["u1", "i2", "f4", "c16", "V3", "M8[s]", "U2"])
def test_is_all_fill_by_bits_for_every_size(dtype: str) -> None:
    fill = np.zeros((), dtype=dtype)[()]
    zeros = np.zeros((3, 2), dtype=dtype)
    assert is_all_fill(zeros, fill)
    assert is_all_fill(zeros.T, fill)  # any memory order
    changed = zeros.copy()
    changed.view("u1").reshape(-1)[-1] = 1
    assert not is_all_fill(changed, fill)
    assert not is_all_fill(zeros, None)
