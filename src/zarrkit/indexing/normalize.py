"""Validation and normalisation of the pieces of a user selection.

Everything here works on one dimension at a time, or on the raw selection tuple, and
turns user input into plain, non-negative, bounds-checked values so that the planners
never have to think about negative indices, Ellipsis or numpy scalar types again.

>>> normalize_integer(-1, 10)
9
>>> expand_ellipsis((0, Ellipsis), 3)
(0, slice(None, None, None), slice(None, None, None))
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import numpy.typing as npt

from zarrkit.errors import BoundsCheckError, IndexingError, ShapeOverflowError
from zarrkit.indexing.grid import INTP_MAX

__all__ = [
    "as_integer",
    "as_selection_tuple",
    "expand_ellipsis",
    "is_pure_basic",
    "normalize_integer",
    "normalize_integer_array",
    "normalize_slice",
]

_FULL_SLICE = slice(None)


def as_selection_tuple(selection: Any) -> tuple[Any, ...]:
    """Wrap a bare selection item in a tuple, the way numpy reads ``a[item]``.

    >>> as_selection_tuple(3)
    (3,)
    >>> as_selection_tuple((1, slice(None)))
    (1, slice(None, None, None))
    """
    if type(selection) is tuple:
        return selection
    return (selection,)


def as_integer(item: Any) -> int | None:
    """Return ``item`` as a Python int if numpy would treat it as an integer index.

    Booleans are refused because numpy treats them as masks, not as 0 and 1.

    >>> as_integer(np.int16(-3))
    -3
    >>> as_integer(np.array(4))
    4
    >>> as_integer(True) is None, as_integer(1.5) is None, as_integer([1]) is None
    (True, True, True)
    """
    if type(item) is int:
        return item
    if isinstance(item, bool | np.bool_):
        return None
    if isinstance(item, np.ndarray) and (item.ndim != 0 or item.dtype.kind not in "iu"):
        return None
    try:
        return operator.index(item)
    except TypeError:
        return None


def normalize_integer(index: int, dim_len: int) -> int:
    """Map a possibly negative integer index into ``range(dim_len)``.

    Raises :class:`~zarrkit.errors.BoundsCheckError` when it lies outside the dimension.

    >>> normalize_integer(3, 5), normalize_integer(-5, 5)
    (3, 0)
    >>> normalize_integer(5, 5)
    Traceback (most recent call last):
    zarrkit.errors.BoundsCheckError: index 5 is out of bounds for a dimension of length 5
    """
    normalized = index + dim_len if index < 0 else index
    if not 0 <= normalized < dim_len:
        raise BoundsCheckError(
            f"index {index} is out of bounds for a dimension of length {dim_len}"
        )
    return normalized


def normalize_slice(selection: slice, dim_len: int) -> tuple[int, int, int]:
    """Resolve a slice against a dimension, clipping like numpy.

    Returns ``(start, step, length)``: the selected indices are
    ``start + j * step`` for ``j in range(length)``.

    >>> normalize_slice(slice(None, None, -2), 5)
    (4, -2, 3)
    >>> normalize_slice(slice(-100, 100), 4)
    (0, 1, 4)
    >>> normalize_slice(slice(None, None, -1), 2**64)
    (18446744073709551615, -1, 18446744073709551616)
    >>> normalize_slice(slice(None, None, 0), 4)
    Traceback (most recent call last):
    zarrkit.errors.IndexingError: slice step cannot be zero
    """
    try:
        start, stop, step = selection.indices(dim_len)
    except ValueError as error:  # only a zero step makes slice.indices raise ValueError
        raise IndexingError("slice step cannot be zero") from error
    except TypeError as error:
        raise IndexingError(f"slice bounds must be integers or None, got {selection!r}") from error
    # len(range(...)) would do, but raises OverflowError beyond sys.maxsize elements.
    if step > 0:
        return start, step, (stop - start - 1) // step + 1 if start < stop else 0
    return start, step, (start - stop - 1) // -step + 1 if start > stop else 0


def expand_ellipsis(items: tuple[Any, ...], ndim: int) -> tuple[Any, ...]:
    """Replace the (single) Ellipsis by full slices and pad missing trailing dimensions.

    >>> expand_ellipsis((Ellipsis, 1), 3)
    (slice(None, None, None), slice(None, None, None), 1)
    >>> expand_ellipsis((1,), 2)
    (1, slice(None, None, None))
    >>> expand_ellipsis((1, 2, 3), 2)
    Traceback (most recent call last):
    zarrkit.errors.IndexingError: too many indices: 3 given for an array of 2 dimensions
    """
    # Identity test rather than ``in``/``count``: ``==`` on a numpy array is elementwise.
    ellipsis_positions = [position for position, item in enumerate(items) if item is Ellipsis]
    if not ellipsis_positions:
        if len(items) > ndim:
            raise IndexingError(
                f"too many indices: {len(items)} given for an array of {ndim} dimensions"
            )
        if len(items) == ndim:
            return items
        return items + (_FULL_SLICE,) * (ndim - len(items))
    if len(ellipsis_positions) > 1:
        raise IndexingError("a selection may contain at most one Ellipsis")
    explicit = len(items) - 1
    if explicit > ndim:
        raise IndexingError(f"too many indices: {explicit} given for an array of {ndim} dimensions")
    position = ellipsis_positions[0]
    return items[:position] + (_FULL_SLICE,) * (ndim - explicit) + items[position + 1 :]


# Index arrays up to this long have their bounds found in a Python loop.
_FEW_INDICES = 32


def normalize_integer_array(
    selection: Any, dim_len: int, *, allow_bool: bool
) -> npt.NDArray[np.intp]:
    """Turn an integer (or, if allowed, boolean) array-like into in-bounds ``intp`` indices.

    Negative indices are wrapped; a boolean array must have length ``dim_len`` and is
    replaced by the positions of its True entries. The result keeps the input's shape.
    Positions beyond ``intp`` (a dimension longer than 2**63) raise
    :class:`~zarrkit.errors.ShapeOverflowError`: plain integers and slices reach them.

    >>> normalize_integer_array([-1, 0, 2], 4, allow_bool=False).tolist()
    [3, 0, 2]
    >>> normalize_integer_array(np.array([True, False, True]), 3, allow_bool=True).tolist()
    [0, 2]
    >>> normalize_integer_array([4], 4, allow_bool=False)
    Traceback (most recent call last):
    zarrkit.errors.BoundsCheckError: index 4 is out of bounds for a dimension of length 4
    >>> normalize_integer_array([-1, 0], 2**63, allow_bool=False).tolist()
    [9223372036854775807, 0]
    >>> normalize_integer_array([2**63], 2**64, allow_bool=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.ShapeOverflowError: index 9223372036854775808 is beyond ...
    """
    try:
        array = np.asarray(selection)
    except ValueError as error:  # ragged nested sequences
        raise IndexingError(f"cannot interpret {selection!r} as an index array") from error
    kind = array.dtype.kind
    if kind == "b":
        if not allow_bool:
            raise IndexingError("boolean arrays are only accepted as a whole-array mask here")
        if array.ndim != 1 or array.shape[0] != dim_len:
            raise IndexingError(
                f"boolean index of shape {array.shape} does not match a dimension "
                f"of length {dim_len}"
            )
        return np.flatnonzero(array)
    if array.size == 0:
        # ``np.asarray([])`` is float64; an empty selection is still a valid integer one.
        return np.zeros(array.shape, dtype=np.intp)
    if kind not in "iu":
        # numpy stores Python ints beyond 64 bits as floats or objects.
        array = _as_python_ints(selection, array)
    if array.size <= _FEW_INDICES:  # numpy's reductions cost more than a loop over a few
        values = array.reshape(-1).tolist()
        lowest, highest = int(min(values)), int(max(values))
    else:
        lowest, highest = int(array.min()), int(array.max())
    if lowest < -dim_len or highest >= dim_len:
        offender = lowest if lowest < -dim_len else highest
        raise BoundsCheckError(
            f"index {offender} is out of bounds for a dimension of length {dim_len}"
        )
    _check_intp(highest, dim_len)
    if lowest >= 0:
        return array.astype(np.intp, copy=False)
    return _wrap_negative(array, lowest, dim_len)


def _as_python_ints(selection: Any, array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``selection`` as an object array of ints when its items are all integers (too
    large for numpy to have stored as such), else IndexingError."""
    if isinstance(selection, np.ndarray) or array.dtype.kind not in "fO":
        raise IndexingError(f"index arrays must hold integers, got dtype {array.dtype}")
    items = np.array(selection, dtype=object)
    if not all(type(item) is int for item in items.reshape(-1)):
        raise IndexingError(f"index arrays must hold integers, got dtype {array.dtype}")
    return items


def _check_intp(index: int, dim_len: int) -> None:
    if index > INTP_MAX:
        raise ShapeOverflowError(
            f"index {index} is beyond what an index array can hold (2**63 - 1) in a "
            f"dimension of length {dim_len}; select it with an integer or a slice"
        )


def _wrap_negative(array: npt.NDArray[Any], lowest: int, dim_len: int
                   ) -> npt.NDArray[np.intp]:
    """In-bounds indices with negative ones counted from the end."""
    if dim_len <= INTP_MAX:
        indices = array.astype(np.intp, copy=False)
        return np.where(indices < 0, indices + dim_len, indices)
    # ``dim_len`` cannot be a numpy operand: count in Python ints (rare, so no matter).
    negative = array < 0
    _check_intp(dim_len + int(array[negative].max()), dim_len)
    return np.where(negative, array.astype(object) + dim_len, array).astype(np.intp)


def is_pure_basic(selection: Any) -> bool:
    """Tell whether a selection contains only integers, slices and Ellipsis.

    A caller can use this to send ``a[sel]`` to :func:`basic_indexer` and everything else
    to :func:`orthogonal_indexer`.

    >>> is_pure_basic((1, slice(None), Ellipsis)), is_pure_basic(np.int64(2))
    (True, True)
    >>> is_pure_basic(([0, 1], 2)), is_pure_basic(None)
    (False, False)
    """
    for item in as_selection_tuple(selection):
        if type(item) is slice or item is Ellipsis:
            continue
        if as_integer(item) is None:
            return False
    return True
