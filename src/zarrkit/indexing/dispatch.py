"""Which path ``a[selection]`` takes: basic, orthogonal or vectorised, as in zarr-python.

zarr-python's ``Array.__getitem__`` sends a *pure fancy* selection (integer arrays or
lists, possibly with integers, one per dimension; or one boolean mask) to ``vindex``, a
selection of integers and slices with at most one array (or only arrays, when one of them
is boolean) to ``oindex``, and anything else to basic indexing, which refuses arrays. So
``a[[0, 2], [1, 3]]`` is pointwise, as in numpy, while ``a[1:3, [0, 2]]`` is an outer
product, and ``a[mask_rows, [0, 2]]`` is an outer product where numpy would pair them up.

Where zarr-python refuses a selection that numpy reads unambiguously, zarrkit follows
numpy: an Ellipsis next to index arrays is expanded first, an empty list is an empty
integer list, a 0-d integer array or a numpy integer is an integer anywhere (zarr-python
makes ``a[np.array(2)]`` a 1-element array; numpy and zarrkit a scalar), a 1-d boolean
array on an array of more dimensions selects along the first axis. Selections that
numpy and zarr-python would read differently and zarr-python refuses (two index arrays
with a slice between, say) are refused.

Strings in a selection tuple name fields of a structured dtype (see :func:`split_fields`).

>>> classify_selection(([0, 2], [1, 3]), ndim=2)
('vectorized', ([0, 2], [1, 3]))
>>> classify_selection((slice(1, 3), [0, 2]), ndim=2)
('orthogonal', (slice(1, 3, None), [0, 2]))
>>> classify_selection((Ellipsis, 1), ndim=2)
('basic', (Ellipsis, 1))
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from zarrkit.errors import IndexingError
from zarrkit.indexing.normalize import as_integer, expand_ellipsis

__all__ = [
    "SelectionKind",
    "check_fields",
    "classify_selection",
    "is_plain_basic",
    "split_fields",
]

SelectionKind = Literal["basic", "orthogonal", "vectorized"]

Fields = str | list[str]


def is_plain_basic(selection: Any) -> bool:
    """Tell, cheaply, whether a selection is Python ints, slices and Ellipsis only: the
    common case, which needs no classifying.

    >>> is_plain_basic((1, slice(None))), is_plain_basic(Ellipsis)
    (True, True)
    >>> is_plain_basic(([0], 1)), is_plain_basic("x")
    (False, False)
    """
    if type(selection) is tuple:
        return all(type(item) is int or type(item) is slice or item is Ellipsis
                   for item in selection)
    return type(selection) is int or type(selection) is slice or selection is Ellipsis


def split_fields(selection: Any) -> tuple[Fields | None, Any]:
    """Separate the field names (strings) of a selection from its indices.

    Returns ``(fields, selection)``: fields are None, one name, or a list of names; a
    tuple left with one item is unwrapped, and a bare name selects everything, as in
    zarr-python's ``a["x"]`` and ``a[0:2, "x"]``.

    >>> split_fields("x")
    ('x', ())
    >>> split_fields((slice(0, 2), "x", "y"))
    (['x', 'y'], slice(0, 2, None))
    >>> split_fields((1, 2))
    (None, (1, 2))
    """
    if isinstance(selection, str):
        return selection, ()
    if type(selection) is not tuple:
        return None, selection
    names = [item for item in selection if isinstance(item, str)]
    rest = tuple(item for item in selection if not isinstance(item, str))
    fields: Fields | None = None
    if len(names) == 1:
        fields = names[0]
    elif names:
        fields = names
    return fields, rest[0] if len(rest) == 1 else rest


def _is_integer(item: Any) -> bool:
    return as_integer(item) is not None


def _is_integer_list(item: Any) -> bool:
    # An empty list counts: numpy reads it as an empty integer index.
    return type(item) is list and all(_is_integer(element) for element in item)


def _is_bool_list(item: Any) -> bool:
    return (type(item) is list and len(item) > 0
            and all(isinstance(element, bool | np.bool_) for element in item))


def _is_integer_array(item: Any) -> bool:
    return isinstance(item, np.ndarray) and item.ndim > 0 and item.dtype.kind in "iu"


def _is_bool_array(item: Any) -> bool:
    return isinstance(item, np.ndarray) and item.dtype == np.bool_


def _is_integers(item: Any) -> bool:
    """An integer index array or list: what a coordinate selection is made of."""
    return _is_integer_list(item) or _is_integer_array(item)


def _is_fancy(item: Any) -> bool:
    """An index array or list, integer or boolean."""
    return _is_integers(item) or _is_bool_list(item) or _is_bool_array(item)


def classify_selection(selection: Any, ndim: int) -> tuple[SelectionKind, Any]:
    """The path ``a[selection]`` takes on an array of ``ndim`` dimensions, and the
    selection to give it (fields already split off by :func:`split_fields`).

    * ``"vectorized"``: a boolean mask (an array, or a list on a 1-d array), or one
      integer, integer array or integer list per dimension with at least one of the
      latter, and no slice: numpy's pointwise indexing, ``a.vindex``.
    * ``"orthogonal"``: integers and slices plus exactly one index array (integer or
      boolean), or one index array per dimension with a boolean one among them:
      ``a.oindex``.
    * ``"basic"``: anything else, including every selection without an index array;
      basic indexing refuses what it cannot read.

    >>> classify_selection([True, False, True], ndim=1)[0]
    'vectorized'
    >>> classify_selection(np.ones((2, 2), dtype=bool), ndim=2)[0]
    'vectorized'
    >>> classify_selection((1, [0, 2]), ndim=2)[0], classify_selection([0, 2], ndim=2)[0]
    ('vectorized', 'orthogonal')
    >>> classify_selection((np.array([True, False]), [0, 2]), ndim=2)[0]
    'orthogonal'
    >>> classify_selection((Ellipsis, [0, 2]), ndim=3)
    ('orthogonal', (slice(None, None, None), slice(None, None, None), [0, 2]))
    >>> classify_selection((slice(None), [0, 1], [0, 1]), ndim=3)[0]
    'basic'
    """
    if type(selection) is not tuple:
        if _is_bool_array(selection):
            if selection.ndim == 1 and ndim > 1:  # rows, as numpy reads it
                return "orthogonal", (selection,)
            return "vectorized", selection
        if ndim == 1 and _is_integers(selection):
            return "vectorized", selection
        if ndim == 1 and _is_bool_list(selection):
            return "vectorized", np.asarray(selection, dtype=bool)
        items: tuple[Any, ...] = (selection,)
    else:
        items = selection
    fancy = [_is_fancy(item) for item in items]
    if not any(fancy):
        return "basic", selection
    if any(item is Ellipsis for item in items):
        items = expand_ellipsis(items, ndim)
        fancy = [_is_fancy(item) for item in items]
    if len(items) == ndim and all(
        _is_integer(item) or _is_integers(item) for item in items
    ):
        return "vectorized", items
    if ndim and len(items) == ndim and all(fancy):
        return "orthogonal", items
    if ndim and len(items) <= ndim and sum(fancy) == 1 and all(
        is_fancy or type(item) is slice or _is_integer(item)
        for item, is_fancy in zip(items, fancy, strict=True)
    ):
        return "orthogonal", items
    return "basic", selection


def check_fields(fields: Fields, dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype of ``fields`` of a structured ``dtype``: one field's own, or the packed
    record of several; IndexingError if ``dtype`` has no such field.

    >>> check_fields("x", np.dtype([("x", "i2"), ("y", "f4")]))
    dtype('int16')
    >>> check_fields(["y"], np.dtype([("x", "i2"), ("y", "f4")]))
    dtype([('y', '<f4')])
    >>> check_fields("x", np.dtype("i4"))
    Traceback (most recent call last):
    zarrkit.errors.IndexingError: cannot select field 'x': dtype int32 has no fields
    """
    if dtype.names is None:
        raise IndexingError(f"cannot select field {fields!r}: dtype {dtype} has no fields")
    names = [fields] if isinstance(fields, str) else fields
    missing = [name for name in names if name not in dtype.names]
    if missing:
        raise IndexingError(
            f"no field {missing[0]!r} in dtype {dtype}: its fields are {list(dtype.names)}")
    if isinstance(fields, str):
        return dtype[fields]
    return np.dtype([(name, dtype[name]) for name in names])
