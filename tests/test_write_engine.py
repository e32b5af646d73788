"""The write engine: which chunks are stored, and what whole-chunk writes cost in reads.

Oracles: numpy for values, and the store's own key list for what was written."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.storage import MemoryStore


@settings(max_examples=80, deadline=None)
@given(kind=st.sampled_from(["i2", "u1", "f4", "f8", "b1"]),
       fill_nan=st.booleans(), data=st.data())
def test_a_chunk_is_stored_exactly_when_not_all_fill(kind: str, fill_nan: bool,
                                                     data: st.DataObject) -> None:
    """Chunks equal to the fill value everywhere are not stored; any other chunk is, even
    when its first element equals the fill value (the check may stop early only on a
    difference)."""
    fill: Any = (np.nan if fill_nan and kind[0] == "f" else
                 (True if kind == "b1" else 3))
    other: Any = False if kind == "b1" else 5
    values = data.draw(st.lists(st.sampled_from([fill, other]), min_size=8, max_size=8))
    source = np.array(values, dtype=kind).reshape(2, 4)
    store = MemoryStore()
    a = zk.create_array(store, shape=(2, 8), chunks=(2, 4), dtype=kind, fill_value=fill)
    a[:, :4] = source
    a[:, 4:] = np.full((2, 4), fill, dtype=kind)
    stored = sorted(k for k in store.list() if "/c/" in k or k.startswith("c/"))
    all_fill = bool(np.all(np.isnan(source))) if fill_nan and kind[0] == "f" else bool(
        np.all(source == np.array(fill, dtype=kind)))
    assert stored == ([] if all_fill else ["c/0/0"])
    np.testing.assert_array_equal(a[:, :4], source)


class CountingStore(MemoryStore):
    """A memory store that counts reads of chunk keys."""

    def __init__(self) -> None:
        super().__init__()
        self.chunk_reads = 0

    def get(self, key: str) -> bytes | None:
        if "c/" in key:
            self.chunk_reads += 1
        return super().get(key)

    def get_many(self, keys: Any) -> list[bytes | None]:
        return [self.get(k) for k in keys]


def test_whole_chunk_writes_never_read_the_chunk() -> None:
    store = CountingStore()
    a = zk.create_array(store, shape=(10, 10), chunks=(4, 4), dtype="i4", fill_value=0,
                        compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    source = np.arange(100, dtype="i4").reshape(10, 10)
    a[...] = source  # every chunk complete, edge chunks included
    a[...] = source + 1
    assert store.chunk_reads == 0
    a[1:3, 1:3] = 0  # a partial write reads the one chunk it changes
    assert store.chunk_reads == 1
    expected = source + 1
    expected[1:3, 1:3] = 0
    np.testing.assert_array_equal(a[...], expected)
