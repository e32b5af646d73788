"""What a codec pipeline knows about the chunks it encodes: shape, data type, fill value.

>>> import numpy as np
>>> spec = ChunkSpec((2, 3), np.dtype(">i4"), 7)
>>> spec.dtype, spec.fill_value, spec.nbytes
(dtype('int32'), np.int32(7), 24)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


def native_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """``dtype`` in the machine's byte order (structured fields included).

    >>> native_dtype(np.dtype(">f8")).byteorder
    '='
    """
    dtype = np.dtype(dtype)
    if dtype.fields is None and dtype.subdtype is None and dtype.byteorder in "=|":
        return dtype
    return dtype.newbyteorder("=")


@dataclass(frozen=True)
class ChunkSpec:
    """The decoded form of one chunk: shape, native-order dtype and fill value.

    ``fill_value`` is coerced to a numpy scalar of ``dtype`` (``None`` means zero, or the
    empty string/bytes for object types, whose fill value is kept as given).

    >>> ChunkSpec((4,), np.dtype("f4"), "NaN").fill_value
    np.float32(nan)
    >>> ChunkSpec([3], np.dtype("O"), "").shape
    (3,)
    """

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    fill_value: Any = None

    def __post_init__(self) -> None:
        shape = tuple(int(s) for s in self.shape)
        if any(s < 0 for s in shape):
            raise ValueError(f"a chunk shape cannot be negative: {shape}")
        dtype = native_dtype(np.dtype(self.dtype))
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "fill_value", _coerce_fill(self.fill_value, dtype))

    @property
    def size(self) -> int:
        """Number of elements in the chunk.

        >>> ChunkSpec((2, 3), np.dtype("u1")).size
        6
        """
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int | None:
        """Decoded size in bytes, or None for object (variable-length) chunks.

        >>> ChunkSpec((2, 3), np.dtype("u2")).nbytes, ChunkSpec((2,), np.dtype("O")).nbytes
        (12, None)
        """
        if self.dtype.kind == "O":
            return None
        return self.size * self.dtype.itemsize

    def evolve(self, **changes: Any) -> ChunkSpec:
        """A copy with some fields replaced.

        >>> ChunkSpec((2, 3), np.dtype("u1"), 1).evolve(shape=(3, 2)).shape
        (3, 2)
        """
        values = {"shape": self.shape, "dtype": self.dtype, "fill_value": self.fill_value}
        values.update(changes)
        return ChunkSpec(**values)

    def fill_chunk(self) -> np.ndarray[Any, Any]:
        """A new, writable chunk holding only the fill value.

        >>> ChunkSpec((2,), np.dtype("i2"), 5).fill_chunk()
        array([5, 5], dtype=int16)
        """
        out = np.empty(self.shape, dtype=self.dtype)
        out[...] = self.fill_value
        return out


def _coerce_fill(value: Any, dtype: np.dtype[Any]) -> Any:
    if dtype.kind == "O":
        return value
    if value is None:
        return np.zeros((), dtype=dtype)[()]
    if isinstance(value, np.generic) and value.dtype == dtype:
        return value
    try:
        return np.asarray(value, dtype=dtype)[()]
    except (TypeError, ValueError) as e:
        raise ValueError(f"fill value {value!r} is not a valid {dtype}") from e
