"""AnnData Zarr stores (what ``anndata.write_zarr`` writes, Zarr v2 or v3) read by zarrkit.

anndata lays an object out as a group tree whose nodes say what they hold in an
``encoding-type`` attribute: ``array``, ``csr_matrix``/``csc_matrix`` (a group of ``data``,
``indices``, ``indptr`` with a ``shape`` attribute), ``dataframe`` (one node a column, in
``column-order``, the index named by ``_index``), ``categorical`` (``codes`` and
``categories``), ``string-array``, the nullable arrays (``values`` and ``mask``),
``string`` and ``numeric-scalar`` (0-d arrays), ``dict`` and ``null``. Reading that tree
with zarrkit (any store zarrkit opens: a directory, a ZIP file, memory, HTTP) gives the
AnnData object ``anndata.read_zarr`` would give, for the parts a Daf data set can take;
an element of another encoding (``awkward-array``, a data frame inside ``uns``) is named
in a warning and left out.

>>> import numpy as np, anndata, zarrkit as zk
>>> store = zk.MemoryStore()
>>> root = zk.group(store, attributes={"encoding-type": "anndata",
...                                    "encoding-version": "0.1.0"})
>>> _ = root.create_array("X", data=np.eye(2, dtype="f4"))
>>> for axis in ("obs", "var"):
...     frame = root.create_group(axis, attributes={
...         "encoding-type": "dataframe", "encoding-version": "0.2.0",
...         "_index": "_index", "column-order": []})
...     _ = frame.create_array("_index", data=np.array(["a", "b"], dtype=object),
...                            attributes={"encoding-type": "string-array"})
>>> read_anndata_zarr(store).obs_names.tolist()
['a', 'b']
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from zarrkit.errors import DafValueError, NodeNotFoundError
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.group import Group, open_group_node
from zarrkit.storage.base import Store
from zarrkit.storage.resolve import make_store

#: The first bytes of an HDF5 file (an ``.h5ad`` file is one).
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"

#: The AnnData fields that hold a mapping of elements, each read if present.
_MAPPINGS = ("layers", "obsm", "varm", "obsp", "varp", "uns")


def is_hdf5_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a file that starts as an HDF5 file does (an ``.h5ad`` file).

    >>> is_hdf5_file(__file__)
    False
    """
    try:
        with open(path, "rb") as file:
            return file.read(len(HDF5_SIGNATURE)) == HDF5_SIGNATURE
    except (IsADirectoryError, FileNotFoundError, NotADirectoryError):
        return False


def read_anndata_zarr(source: Any, *, warn: Callable[[str], None] | None = None) -> Any:
    """The AnnData object in the AnnData Zarr store ``source`` (a path, a store, or an
    open zarrkit Group), read with zarrkit. Elements of an encoding this reader does not
    know are left out, each named through ``warn`` (default: a ``UserWarning``).

    >>> import anndata, zarrkit as zk
    >>> read_anndata_zarr(zk.MemoryStore())
    Traceback (most recent call last):
    zarrkit.errors.DafValueError: MemoryStore(<0 keys>) holds no AnnData Zarr store (no \
group at its root)
    """
    import anndata

    report = warn if warn is not None else _warn
    root = _open_root(source)
    kind = root.attrs.get("encoding-type")
    if kind != "anndata":
        raise DafValueError(f"{_where(root)} is not an AnnData Zarr store: its root group's "
                            f"encoding-type is {kind!r}, not 'anndata'")
    reader = _Reader(report)
    fields: dict[str, Any] = {}
    for name in ("X", "obs", "var", *_MAPPINGS):
        node = _member(root, name)
        if node is not None:
            fields[name] = reader.element(node, name)
    fields = {name: value for name, value in fields.items() if value is not _SKIPPED}
    raw = _member(root, "raw")
    if raw is not None and raw.attrs.get("encoding-type") != "null":
        report(f"raw ({_where(raw)}) has no Daf form; left out")
    for name in ("obs", "var"):
        if name in fields and not _is_frame(fields[name]):
            report(f"{name} is not a data frame; left out")
            del fields[name]
    return anndata.AnnData(**fields)


class _Skipped:
    """An element the reader left out (already reported)."""


_SKIPPED: Any = _Skipped()


def _warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=4)


def _open_root(source: Any) -> Group:
    if isinstance(source, Group):
        return source
    store: Store = make_store(source, mode="r")
    try:
        return open_group_node(store, "", read_only=True)
    except NodeNotFoundError as e:
        raise DafValueError(f"{store!r} holds no AnnData Zarr store (no group at its root)"
                            ) from e


def _where(node: Array | Group) -> str:
    return f"{node.store!r} at {node.path or '/'!r}"


def _member(group: Group, name: str) -> Array | Group | None:
    try:
        return group[name]
    except KeyError:
        return None


def _is_frame(value: Any) -> bool:
    import pandas as pd

    return isinstance(value, pd.DataFrame)


class _Reader:
    """Reads elements by their ``encoding-type``, reporting what it leaves out."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self.report = report

    def element(self, node: Array | Group, label: str) -> Any:
        kind = node.attrs.get("encoding-type")
        if isinstance(node, Array) and kind in (None, "array"):
            return node[...]
        read = _READERS.get((kind, isinstance(node, Array)))
        if read is None:
            self.report(f"{label} ({_where(node)}) has the AnnData encoding {kind!r}, which "
                        f"zarrkit does not read into Daf; left out")
            return _SKIPPED
        return read(self, node, label)

    def mapping(self, group: Any, label: str) -> dict[str, Any]:
        values = {name: self.element(child, f"{label}[{name!r}]")
                  for name, child in group.members()}
        return {name: value for name, value in values.items() if value is not _SKIPPED}

    def sparse(self, group: Any, label: str) -> Any:
        import scipy.sparse

        kind = group.attrs["encoding-type"]
        parts = tuple(group[name][...] for name in ("data", "indices", "indptr"))
        shape = tuple(int(n) for n in group.attrs["shape"])
        matrix = scipy.sparse.csr_matrix if kind == "csr_matrix" else scipy.sparse.csc_matrix
        return matrix(parts, shape=shape)

    def frame(self, group: Any, label: str) -> Any:
        import pandas as pd

        index_name = group.attrs.get("_index", "_index")
        columns = {}
        for column in group.attrs.get("column-order", []):
            value = self.element(group[column], f"{label}[{column!r}]")
            if value is not _SKIPPED:
                columns[column] = value
        index = pd.Index(self.element(group[index_name], f"{label}.index"),
                         name=None if index_name == "_index" else index_name)
        return pd.DataFrame(columns, index=index)

    def categorical(self, group: Any, label: str) -> Any:
        import pandas as pd

        categories = self.element(group["categories"], f"{label}.categories")
        return pd.Categorical.from_codes(group["codes"][...], categories=categories,
                                         ordered=bool(group.attrs.get("ordered", False)))

    def strings(self, array: Any, label: str) -> Any:
        return np.asarray(array[...], dtype=object)

    def nullable(self, group: Any, label: str) -> Any:
        import pandas as pd

        kind = group.attrs["encoding-type"]
        values, mask = group["values"][...], group["mask"][...].astype(bool)
        if kind == "nullable-string-array":
            # anndata's "na-value" says which missing value the column's dtype has
            missing = np.nan if group.attrs.get("na-value") == "NaN" else pd.NA
            return pd.array(np.where(mask, None, np.asarray(values, dtype=object)),
                            dtype=pd.StringDtype(na_value=missing))
        array = pd.arrays.IntegerArray if kind == "nullable-integer" else pd.arrays.BooleanArray
        return array(values, mask)

    def string(self, array: Any, label: str) -> Any:
        return str(array[()])

    def scalar(self, array: Any, label: str) -> Any:
        return array[()]

    def null(self, node: Any, label: str) -> Any:
        return None


#: (encoding-type, is an array) -> how the reader reads it.
_READERS: dict[tuple[Any, bool], Callable[[_Reader, Any, str], Any]] = {
    ("csr_matrix", False): _Reader.sparse,
    ("csc_matrix", False): _Reader.sparse,
    ("dataframe", False): _Reader.frame,
    ("categorical", False): _Reader.categorical,
    ("string-array", True): _Reader.strings,
    ("nullable-integer", False): _Reader.nullable,
    ("nullable-boolean", False): _Reader.nullable,
    ("nullable-string-array", False): _Reader.nullable,
    ("string", True): _Reader.string,
    ("numeric-scalar", True): _Reader.scalar,
    ("null", True): _Reader.null,
    ("dict", False): _Reader.mapping,
}


__all__ = ["is_hdf5_file", "read_anndata_zarr"]
