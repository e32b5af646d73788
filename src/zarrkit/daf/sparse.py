"""Sparse vectors and matrices in Julia's layout, to and from scipy.sparse.

Daf stores a sparse vector as Julia's ``SparseVector`` (``nzind``, ``nzval``) and a sparse
matrix as ``SparseMatrixCSC`` (``colptr``, ``rowval``, ``nzval``), with 1-based indices. A
Bool property whose stored values are all true omits ``nzval``. In memory zarrkit hands out
0-based scipy objects: a 1-d ``scipy.sparse.coo_array`` for a vector, a
``scipy.sparse.csc_matrix`` for a matrix. Stored indices may be of any integer type.

scipy is needed only here, and imported on first use: a data set of dense properties
works without it.

>>> import scipy.sparse as sp
>>> parts = encode_matrix(sp.csc_matrix(np.array([[0, 2.0], [3.0, 0]])), (2, 2), "x")
>>> parts.colptr.tolist(), parts.rowval.tolist(), parts.nzval.tolist()
([1, 2, 3], [2, 1], [3.0, 2.0])
>>> decode_matrix(parts.colptr, parts.rowval, parts.nzval, (2, 2), "x").toarray()
array([[0., 2.],
       [3., 0.]])
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from zarrkit.daf.values import storage_dtype
from zarrkit.errors import ChunkDecodeError, DafValueError, MissingDependencyError

#: The type of the stored indices (Julia's default ``Int``); any integer type is read.
INDEX_DTYPE = np.dtype("int64")


def scipy_sparse() -> ModuleType:
    """``scipy.sparse``, or MissingDependencyError when scipy is not installed.

    >>> scipy_sparse().__name__
    'scipy.sparse'
    """
    try:
        import scipy.sparse
    except ImportError as e:  # pragma: no cover - scipy is in the test environment
        raise MissingDependencyError(
            "sparse Daf properties need scipy: pip install 'zarrkit[daf]'") from e
    return scipy.sparse


@dataclass(frozen=True, eq=False)
class SparseVectorParts:
    """A sparse vector as stored: 1-based ``nzind``, and ``nzval`` (None when the vector
    is Bool with every stored value true)."""

    nzind: np.ndarray[Any, Any]
    nzval: np.ndarray[Any, Any] | None


@dataclass(frozen=True, eq=False)
class SparseMatrixParts:
    """A sparse matrix as stored (CSC, 1-based ``colptr`` and ``rowval``), ``nzval`` None
    when the matrix is Bool with every stored value true."""

    colptr: np.ndarray[Any, Any]
    rowval: np.ndarray[Any, Any]
    nzval: np.ndarray[Any, Any] | None


def _values(data: np.ndarray[Any, Any], what: str) -> np.ndarray[Any, Any] | None:
    dtype = storage_dtype(data.dtype, what, strings=False)
    values = data.astype(dtype, copy=False)
    # Julia skips nzval for an all-true Bool property (typically a mask).
    if dtype.kind == "b" and bool(values.all()):
        return None
    return values


def encode_vector(value: Any, length: int, what: str) -> SparseVectorParts:
    """The stored parts of a scipy.sparse vector: shape ``(length,)``, ``(1, length)`` or
    ``(length, 1)``. Duplicate entries are summed, indices sorted.

    >>> import scipy.sparse as sp
    >>> parts = encode_vector(sp.coo_array(np.array([0, 5, 0, 7])), 4, "x")
    >>> parts.nzind.tolist(), parts.nzval.tolist()
    ([2, 4], [5, 7])
    """
    sparse = scipy_sparse()
    shape = tuple(value.shape)
    if shape not in ((length,), (1, length), (length, 1)):
        raise DafValueError(f"{what}: a sparse vector of {length} elements must have shape "
                            f"({length},), (1, {length}) or ({length}, 1), found {shape}")
    coo = sparse.coo_array(value, copy=True)  # summed in place below: not the caller's
    coo.sum_duplicates()  # also sorts the coordinates (row-major)
    index = coo.coords[-1] if shape == (1, length) or len(shape) == 1 else coo.coords[0]
    order = np.argsort(index, kind="stable")
    nzind = index[order].astype(INDEX_DTYPE) + 1
    return SparseVectorParts(nzind, _values(np.asarray(coo.data)[order], what))


def encode_matrix(value: Any, shape: tuple[int, int], what: str) -> SparseMatrixParts:
    """The stored parts of a scipy.sparse matrix of Daf ``shape`` (rows, columns): its CSC
    form with duplicates summed and rows sorted within each column, indices 1-based.

    >>> import scipy.sparse as sp
    >>> encode_matrix(sp.eye(2, dtype=bool), (2, 2), "x").nzval is None
    True
    """
    sparse = scipy_sparse()
    if tuple(value.shape) != shape:
        raise DafValueError(f"{what}: shape {tuple(value.shape)}, but the axes have {shape}")
    csc = sparse.csc_matrix(value)  # shares the arrays of a CSC input: never modified
    if not csc.has_canonical_format:
        csc = csc.copy()
        csc.sum_duplicates()  # and sorts the rows of each column
    colptr = np.asarray(csc.indptr, dtype=INDEX_DTYPE) + 1
    rowval = np.asarray(csc.indices, dtype=INDEX_DTYPE) + 1
    return SparseMatrixParts(colptr, rowval, _values(np.asarray(csc.data), what))


def _indices(stored: np.ndarray[Any, Any], what: str, name: str) -> np.ndarray[Any, Any]:
    """0-based int64 indices from stored 1-based ones of any integer type."""
    if stored.dtype.kind not in "iu":
        raise ChunkDecodeError(f"{what}: {name} must hold integers, found {stored.dtype}")
    return stored.astype(INDEX_DTYPE) - 1


def decode_vector(nzind: np.ndarray[Any, Any], nzval: np.ndarray[Any, Any] | None,
                  length: int, what: str) -> Any:
    """A 1-d ``scipy.sparse.coo_array`` from stored parts (``nzval`` None: all true).

    >>> decode_vector(np.array([2], "u4"), None, 3, "x").toarray()
    array([False,  True, False])
    """
    sparse = scipy_sparse()
    index = _indices(np.asarray(nzind).reshape(-1), what, "nzind")
    values = np.ones(index.shape, dtype=bool) if nzval is None else np.asarray(nzval)
    if values.shape != index.shape:
        raise ChunkDecodeError(f"{what}: nzind has {index.size} elements but nzval "
                               f"{values.size}")
    if index.size and (index.min() < 0 or index.max() >= length):
        raise ChunkDecodeError(f"{what}: nzind holds indices outside 1..{length}")
    return sparse.coo_array((values, (index,)), shape=(length,))


def decode_matrix(colptr: np.ndarray[Any, Any], rowval: np.ndarray[Any, Any],
                  nzval: np.ndarray[Any, Any] | None, shape: tuple[int, int],
                  what: str) -> Any:
    """A ``scipy.sparse.csc_matrix`` of Daf ``shape`` from stored 1-based CSC parts
    (``nzval`` None: all true). The values are not copied (a mapped nzval stays mapped).

    >>> decode_matrix(np.array([1, 1, 2]), np.array([1]), None, (1, 2), "x").toarray()
    array([[False,  True]])
    """
    sparse = scipy_sparse()
    nrows, ncols = shape
    indptr = _indices(np.asarray(colptr).reshape(-1), what, "colptr")
    indices = _indices(np.asarray(rowval).reshape(-1), what, "rowval")
    values = np.ones(indices.shape, dtype=bool) if nzval is None else np.asarray(nzval)
    if indptr.size != ncols + 1:
        raise ChunkDecodeError(f"{what}: colptr has {indptr.size} elements, expected "
                               f"{ncols + 1} (columns + 1)")
    if indptr[0] != 0 or indptr[-1] != indices.size or np.any(np.diff(indptr) < 0):
        raise ChunkDecodeError(f"{what}: colptr must rise from 1 to nnz + 1 "
                               f"({indices.size + 1})")
    if values.shape != indices.shape:
        raise ChunkDecodeError(f"{what}: rowval has {indices.size} elements but nzval "
                               f"{values.size}")
    if indices.size and (indices.min() < 0 or indices.max() >= nrows):
        raise ChunkDecodeError(f"{what}: rowval holds rows outside 1..{nrows}")
    return sparse.csc_matrix((values, indices, indptr), shape=shape, copy=False)


def nnz(value: Any) -> int:
    """The number of stored entries of a scipy.sparse object.

    >>> import scipy.sparse as sp
    >>> nnz(sp.eye(3))
    3
    """
    return int(value.nnz)


__all__ = [
    "INDEX_DTYPE",
    "SparseMatrixParts",
    "SparseVectorParts",
    "decode_matrix",
    "decode_vector",
    "encode_matrix",
    "encode_vector",
    "scipy_sparse",
]
