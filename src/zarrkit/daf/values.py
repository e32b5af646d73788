"""Checking and normalising what a user gives a Daf data set, before anything is written.

Daf stores a closed set of element types (DataAxesFormats.jl's ``StorageScalar``): ``bool``,
the signed and unsigned integers of 8 to 64 bits, ``float32``, ``float64`` and strings.
Matrices hold numbers and booleans only (``StorageReal``). Everything else is refused with
:class:`~zarrkit.errors.DafValueError`, naming what was given.

>>> normalize_scalar(3), normalize_scalar("x"), normalize_scalar(np.float32(0.5))
(np.int64(3), 'x', np.float32(0.5))
>>> normalize_vector([1.5, 2.5], 2, "vector 'x'").dtype
dtype('float64')
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from zarrkit.errors import DafValueError, InvalidKeyError
from zarrkit.paths import check_node_name

#: The numeric element types Daf stores (StorageReal).
REAL_DTYPES = frozenset(np.dtype(name) for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64"))

#: The reserved vector name: ``get_vector(axis, "name")`` is the axis entries.
RESERVED_VECTOR = "name"


def check_name(name: object, what: str) -> str:
    """``name`` if it can name a property or an axis (a Zarr node name that is not
    reserved by Zarr v3); DafValueError otherwise.

    >>> check_name("UMIs", "matrix")
    'UMIs'
    >>> check_name("a/b", "vector")
    Traceback (most recent call last):
    zarrkit.errors.DafValueError: invalid vector name 'a/b': it contains '/'
    """
    try:
        # Format 3's rule (no "__" prefix) applies to both layouts: a name must survive a
        # conversion of the data set to the other format.
        return check_node_name(name, 3)
    except InvalidKeyError as e:
        reason = str(e).split(": ", 1)[-1]
        raise DafValueError(f"invalid {what} name {name!r}: {reason}") from None


def is_sparse(value: Any) -> bool:
    """Whether ``value`` is a scipy.sparse matrix or array (without importing scipy: if it
    was never imported, nothing can be one).

    >>> is_sparse(np.zeros(2))
    False
    """
    module = sys.modules.get("scipy.sparse")
    return module is not None and bool(module.issparse(value))


def storage_dtype(dtype: np.dtype[Any], what: str, *, strings: bool = True) -> np.dtype[Any]:
    """The dtype Daf stores elements of ``dtype`` as: native byte order for numbers,
    object for text (``str`` arrays); DafValueError for anything else.

    >>> storage_dtype(np.dtype(">i4"), "vector 'x'"), storage_dtype(np.dtype("<U3"), "x")
    (dtype('int32'), dtype('O'))
    """
    if dtype.kind in "biuf":
        native = dtype.newbyteorder("=")
        if native in REAL_DTYPES:
            return native
    elif dtype.kind in "UO":
        if strings:
            return np.dtype(object)
        raise DafValueError(f"{what}: Daf stores no string matrices (found {dtype})")
    kinds = "bool, int8-int64, uint8-uint64, float32, float64" + (", str" if strings else "")
    raise DafValueError(f"{what}: Daf cannot store elements of type {dtype} "
                        f"(supported: {kinds})")


def strings_array(values: np.ndarray[Any, Any], what: str) -> np.ndarray[Any, Any]:
    """An object array of plain ``str`` (what the vlen-utf8 codec takes) from a ``str`` or
    object array; DafValueError if an element is not a string.

    >>> strings_array(np.array(["a", "b"]), "x").tolist()
    ['a', 'b']
    """
    if values.dtype.kind == "U":
        return values.astype(object)
    flat = values.reshape(-1)
    out = np.empty(flat.shape, dtype=object)
    for i, item in enumerate(flat):
        if not isinstance(item, str):
            raise DafValueError(f"{what}: element {i} is {type(item).__name__} {item!r}, "
                                "not a string")
        out[i] = str(item)  # a numpy.str_ becomes a plain str
    return out.reshape(values.shape)


def normalize_scalar(value: Any) -> Any:
    """A scalar property value as stored: a numpy scalar of a Daf type, or ``str``. Python
    ``bool``, ``int`` (int64, uint64 above its range) and ``float`` (float64) are accepted.

    >>> normalize_scalar(True), normalize_scalar(2**63)
    (np.True_, np.uint64(9223372036854775808))
    >>> normalize_scalar(1j)
    Traceback (most recent call last):
    zarrkit.errors.DafValueError: scalar: Daf cannot store complex 1j \
(supported: bool, int8-int64, uint8-uint64, float32, float64, str)
    """
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bool, np.bool_)):
        return np.bool_(value)
    if isinstance(value, int) and not isinstance(value, np.integer):
        if -(2**63) <= value < 2**63:
            return np.int64(value)
        if 0 <= value < 2**64:
            return np.uint64(value)
        raise DafValueError(f"scalar: the integer {value} does not fit 64 bits")
    if isinstance(value, float):
        return np.float64(value)
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.astype(storage_dtype(value.dtype, "scalar"))
    raise DafValueError(f"scalar: Daf cannot store {type(value).__name__} {value!r} (supported: "
                        "bool, int8-int64, uint8-uint64, float32, float64, str)")


def normalize_vector(value: Any, length: int, what: str) -> np.ndarray[Any, Any]:
    """A dense vector as stored: 1-d, ``length`` elements, a Daf dtype (text as an object
    array of ``str``). A scalar fills the vector, as ``set_vector!`` does in Julia.

    >>> normalize_vector(7, 3, "x")
    array([7, 7, 7])
    >>> normalize_vector([1, 2], 3, "vector 'x' of axis 'cell'")
    Traceback (most recent call last):
    zarrkit.errors.DafValueError: vector 'x' of axis 'cell': 2 elements, but the axis has 3
    """
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        fill = normalize_scalar(value)
        if isinstance(fill, str):
            return np.full(length, fill, dtype=object)
        return np.full(length, fill)
    array = np.asarray(value)
    if array.ndim != 1:
        raise DafValueError(f"{what}: a vector must be 1-d, found shape {array.shape}")
    if array.shape[0] != length:
        raise DafValueError(f"{what}: {array.shape[0]} elements, but the axis has {length}")
    dtype = storage_dtype(array.dtype, what)
    if dtype.kind == "O":
        return strings_array(array, what)
    return array.astype(dtype, copy=False)


def normalize_matrix(value: Any, shape: tuple[int, int], what: str) -> np.ndarray[Any, Any]:
    """A dense matrix as given, in the Daf (rows, columns) orientation: 2-d of ``shape``, a
    numeric or bool dtype (Daf stores no string matrices). A scalar fills the matrix.

    >>> normalize_matrix(0.5, (1, 2), "x")
    array([[0.5, 0.5]])
    >>> normalize_matrix(np.zeros((2, 3)), (3, 2), "matrix 'x'")
    Traceback (most recent call last):
    zarrkit.errors.DafValueError: matrix 'x': shape (2, 3), but the axes have (3, 2)
    """
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        fill = normalize_scalar(value)
        if isinstance(fill, str):
            raise DafValueError(f"{what}: Daf stores no string matrices")
        return np.full(shape, fill)
    array = np.asarray(value)
    if array.ndim != 2:
        raise DafValueError(f"{what}: a matrix must be 2-d, found shape {array.shape}")
    if array.shape != shape:
        raise DafValueError(f"{what}: shape {array.shape}, but the axes have {shape}")
    return array.astype(storage_dtype(array.dtype, what, strings=False), copy=False)


def normalize_entries(entries: Any, what: str) -> np.ndarray[Any, Any]:
    """Axis entries as stored: a 1-d object array of unique ``str``.

    >>> normalize_entries(["a", "b"], "axis 'x'").tolist()
    ['a', 'b']
    >>> normalize_entries(["a", "b", "a"], "axis 'x'")
    Traceback (most recent call last):
    zarrkit.errors.DafValueError: axis 'x': entries must be unique; 'a' appears 2 times
    """
    array = np.asarray(entries)
    if array.ndim != 1:
        raise DafValueError(f"{what}: entries must be 1-d, found shape {array.shape}")
    if array.size == 0:
        array = array.astype(object)
    if array.dtype.kind not in "UO":
        raise DafValueError(f"{what}: entries must be strings, found {array.dtype}")
    strings = strings_array(array, what)
    seen: dict[str, int] = {}
    for item in strings:
        seen[item] = seen.get(item, 0) + 1
    if len(seen) != len(strings):
        duplicate, count = next((k, n) for k, n in seen.items() if n > 1)
        raise DafValueError(f"{what}: entries must be unique; {duplicate!r} appears {count} "
                            "times")
    return strings


def type_name(dtype: np.dtype[Any]) -> str:
    """The element type as :meth:`DafDataset.description` shows it.

    >>> type_name(np.dtype("f4")), type_name(np.dtype(object))
    ('float32', 'str')
    """
    return "str" if dtype.kind in "OU" else dtype.name


__all__ = [
    "REAL_DTYPES",
    "RESERVED_VECTOR",
    "check_name",
    "is_sparse",
    "normalize_entries",
    "normalize_matrix",
    "normalize_scalar",
    "normalize_vector",
    "storage_dtype",
    "strings_array",
    "type_name",
]
