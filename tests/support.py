"""Helpers shared by test modules: threads released together, and a time and memory bound
for inputs that must be refused fast (hostile metadata and chunks)."""

from __future__ import annotations

import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

MiB = 2**20


def run_threads(count: int, target: Callable[[int], None]) -> None:
    """Run ``target(i)`` in ``count`` threads released together; re-raise the first error."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@contextmanager
def bounded(seconds: float = 1.0, megabytes: float = 16) -> Iterator[None]:
    """Fail unless the block runs within ``seconds`` and allocates at most ``megabytes``
    (numpy reports its buffers to tracemalloc)."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert elapsed < seconds, f"took {elapsed:.2f} s"
    assert peak < megabytes * MiB, f"allocated {peak / MiB:.0f} MiB"


# Partial reads of a 1024x1024 array of 512x512 shards and 64x64 inner chunks, each with the
# rows and columns it touches: the cases every remote store's request-count test runs.
SHARDED_PARTIAL_READS: list[tuple[str, Any, Any, Any]] = [
    ("one inner chunk", np.s_[0:64, 0:64], range(0, 64), range(0, 64)),
    ("a few elements", np.s_[70:72, 140:145], range(70, 72), range(140, 145)),
    ("neighbours", np.s_[0:20, 10:200], range(0, 20), range(10, 200)),
    ("across four shards", np.s_[500:524, 500:524], range(500, 524), range(500, 524)),
    ("far apart", "corners", [0, 511], [0, 511]),
]
