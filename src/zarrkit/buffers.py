"""Per-thread scratch arrays: one reusable chunk-sized buffer per thread.

Decoding a compressed chunk whose destination is not one contiguous block (a 128^3 chunk
inside a larger array) needs a temporary. Allocating a fresh multi-megabyte array per chunk
costs a page fault per 4 KiB, as much as decompressing it; reusing one buffer per thread
pays that once.

>>> a = scratch_array((2, 3), np.dtype("i4"))
>>> a.shape, a.dtype
((2, 3), dtype('int32'))
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

# Larger temporaries are not kept: holding a huge buffer per thread for the life of the
# process would cost more memory than the page faults it saves.
MAX_KEPT_BYTES = 64 << 20

_state = threading.local()


def scratch_array(shape: tuple[int, ...], dtype: np.dtype[Any], order: str = "C"
                  ) -> np.ndarray[Any, Any]:
    """A writable array of ``shape`` and ``dtype`` backed by this thread's scratch buffer.

    Its contents are undefined, and it is only valid until the next call in the same
    thread: copy what you need out of it before calling anything that may use it again.

    >>> first = scratch_array((4,), np.dtype("u1"))
    >>> np.shares_memory(first, scratch_array((2,), np.dtype("u2")))
    True
    """
    if dtype.hasobject:
        raise TypeError("scratch arrays hold raw bytes, not Python objects")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > MAX_KEPT_BYTES:
        return np.empty(shape, dtype=dtype, order=order)  # type: ignore[call-overload,no-any-return]
    buffer: np.ndarray[Any, Any] | None = getattr(_state, "buffer", None)
    if buffer is None or buffer.nbytes < nbytes:
        buffer = _state.buffer = np.empty(max(nbytes, 64), dtype=np.uint8)
    return buffer[:nbytes].view(dtype).reshape(shape, order=order)  # type: ignore[call-overload,no-any-return]
