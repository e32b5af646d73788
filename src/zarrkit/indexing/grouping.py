"""Vectorised grouping of selected elements by the chunk that holds them.

Both orthogonal index arrays and vectorised point selections need the same thing: a
stable permutation that brings elements of one chunk together (keeping their output
order inside the chunk), and the boundaries of each chunk's run.

>>> keys = np.array([2, 0, 2, 1, 0])
>>> order = stable_group_order(keys, nkeys=3)
>>> order.tolist()
[1, 4, 3, 0, 2]
>>> group_starts(keys[order]).tolist()
[0, 2, 3]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["group_out_selections", "group_starts", "stable_group_order"]

_DIGIT_BITS = 16
_DIGIT_MASK = (1 << _DIGIT_BITS) - 1


def stable_group_order(keys: npt.NDArray[np.intp], nkeys: int) -> npt.NDArray[np.intp] | None:
    """Stable argsort of non-negative ``keys < nkeys``, or None if already sorted.

    numpy only uses its (much faster) radix sort for integers of 16 bits or fewer, so
    keys are narrowed, and wider keys are sorted in two 16-bit least-significant-digit
    passes, which still beats the comparison sort numpy would otherwise use.

    >>> stable_group_order(np.array([0, 0, 1]), nkeys=2) is None
    True
    >>> stable_group_order(np.array([70000, 3, 70000, 5]), nkeys=70001).tolist()
    [1, 3, 0, 2]
    """
    if keys.shape[0] < 2 or not bool((keys[1:] < keys[:-1]).any()):
        return None
    if nkeys <= 1 << 8:
        return np.argsort(keys.astype(np.uint8), kind="stable")
    if nkeys <= 1 << _DIGIT_BITS:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    if nkeys <= 1 << (2 * _DIGIT_BITS):
        order = np.argsort((keys & _DIGIT_MASK).astype(np.uint16), kind="stable")
        high_digits = (keys >> _DIGIT_BITS).astype(np.uint16)[order]
        return order[np.argsort(high_digits, kind="stable")]
    return np.argsort(keys, kind="stable")


def group_starts(sorted_keys: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
    """Positions where a run of equal keys begins in a non-empty sorted key array.

    >>> group_starts(np.array([4, 4, 7, 9, 9])).tolist()
    [0, 2, 3]
    """
    changes = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
    return np.concatenate((np.zeros(1, dtype=changes.dtype), changes))


def group_out_selections(
    order: npt.NDArray[np.intp] | None,
    starts: npt.NDArray[np.intp],
    ends: npt.NDArray[np.intp],
) -> list[slice | npt.NDArray[np.intp]]:
    """Output positions of each group, as a slice wherever they form a contiguous run.

    ``order`` is the grouping permutation (None for the identity). A stable sort keeps
    each group's positions ascending and distinct, so a group whose last and first
    positions are ``count - 1`` apart is exactly a run.

    >>> order = np.array([1, 2, 0, 3])
    >>> group_out_selections(order, np.array([0, 2]), np.array([2, 4]))
    [slice(1, 3, None), array([0, 3])]
    """
    if order is None:
        return [
            slice(begin, end) for begin, end in zip(starts.tolist(), ends.tolist(), strict=True)
        ]
    firsts = order[starts]
    lasts = order[ends - 1]
    runs = (lasts - firsts == ends - starts - 1).tolist()
    return [
        slice(first, last + 1) if run else order[begin:end]
        for first, last, run, begin, end in zip(
            firsts.tolist(), lasts.tolist(), runs, starts.tolist(), ends.tolist(), strict=True
        )
    ]


def positions_part(positions: list[int]) -> slice | npt.NDArray[np.intp]:
    """A group's ascending, distinct output positions (gathered in plain Python for a
    few elements) as a slice when they run contiguously, else as an index array.

    >>> positions_part([3, 4, 5]), positions_part([0, 2])
    (slice(3, 6, None), array([0, 2]))
    """
    first, last = positions[0], positions[-1]
    if last - first == len(positions) - 1:
        return slice(first, last + 1)
    return np.array(positions, dtype=np.intp)

