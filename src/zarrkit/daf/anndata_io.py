"""AnnData to Daf and back, so that Python single-cell users can move data in and out.

An AnnData object maps onto a Daf data set with two axes, the observations (cells) and
the variables (genes):

==================  ============================================================
AnnData             Daf
==================  ============================================================
``obs_names``       entries of the ``obs_axis``
``var_names``       entries of the ``var_axis``
``X``               matrix ``(obs_axis, var_axis, x_name)``
``layers[k]``       matrix ``(obs_axis, var_axis, k)``
``obs[c]``          vector ``(obs_axis, c)``; ``var[c]`` likewise
``obsp[k]``         matrix ``(obs_axis, obs_axis, k)``; ``varp[k]`` likewise
``uns[k]``          scalar ``k`` (scalar values only)
==================  ============================================================

Sparse matrices stay sparse. Categorical columns become string vectors. What has no Daf
form (``obsm``, nested ``uns`` entries, columns with missing values or of other types) is
reported by ``unsupported``: ``"warn"`` (the default, as DataAxesFormats.jl's
``anndata_as_daf``), ``"error"`` or ``"ignore"``.

anndata is imported on first use (``pip install 'zarrkit[anndata]'``).

>>> import numpy as np, anndata, zarrkit as zk
>>> adata = anndata.AnnData(X=np.eye(2, dtype="f4"), obs={"age": [3, 4]},
...                         var={"gene_id": ["a", "b"]})
>>> daf = zk.daf.from_anndata(adata, zk.MemoryStore())
>>> back = zk.daf.to_anndata(daf, "obs", "var")
>>> back.X.tolist(), back.obs["age"].tolist()
([[1.0, 0.0], [0.0, 1.0]], [3, 4])
"""

from __future__ import annotations

import os
import warnings
from types import ModuleType
from typing import Any

import numpy as np

from zarrkit.daf.anndata_zarr import is_hdf5_file, read_anndata_zarr
from zarrkit.daf.dataset import DafDataset, open_dataset
from zarrkit.daf.values import is_sparse, normalize_scalar
from zarrkit.errors import DafValueError, MissingDependencyError
from zarrkit.hierarchy.group import Group
from zarrkit.storage.base import Store

_UNSUPPORTED = ("warn", "error", "ignore")


def _anndata() -> ModuleType:
    try:
        import anndata
    except ImportError as e:
        raise MissingDependencyError(
            "AnnData conversion needs the anndata package: pip install 'zarrkit[anndata]'"
        ) from e
    return anndata


def _report(unsupported: str, message: str) -> None:
    if unsupported == "error":
        raise DafValueError(message)
    if unsupported == "warn":
        warnings.warn(message, UserWarning, stacklevel=3)


def _column(series: Any) -> np.ndarray[Any, Any] | None:
    """A pandas column as a Daf vector, or None when Daf cannot hold it."""
    import pandas as pd

    if isinstance(series.dtype, pd.CategoricalDtype):
        if series.isna().any():
            return None
        return np.asarray(series.astype(str), dtype=object)
    if series.isna().any() and series.dtype.kind != "f":
        return None  # a missing value has no Daf form except NaN
    try:
        values = series.to_numpy()
    except (TypeError, ValueError):
        return None
    if values.dtype.kind == "O" and not all(isinstance(v, str) for v in values):
        return None
    return values  # type: ignore[no-any-return]


def from_anndata(adata: Any, path: Any, *, obs_axis: str = "obs", var_axis: str = "var",
                 x_name: str = "X", mode: str = "w", name: str | None = None,
                 zarr_format: int | None = None, unsupported: str = "warn") -> DafDataset:
    """Write an AnnData object into a Daf data set and return it, open. ``adata`` may also
    be the path of an ``.h5ad`` file, or the path, store or group of an AnnData Zarr store
    (``anndata.write_zarr``'s, Zarr v2 or v3), read by zarrkit
    (:func:`~zarrkit.daf.anndata_zarr.read_anndata_zarr`). ``path`` is anything
    :func:`zarrkit.daf.open` takes (opened with ``mode``, ``name`` and ``zarr_format``), or
    an open writable DafDataset.

    >>> import numpy as np, anndata, zarrkit as zk
    >>> adata = anndata.AnnData(X=np.ones((2, 1)), uns={"organism": "human"})
    >>> daf = zk.daf.from_anndata(adata, zk.MemoryStore(), obs_axis="cell",
    ...                           var_axis="gene", x_name="UMIs")
    >>> daf.get_scalar("organism"), daf.matrices("cell", "gene")
    ('human', Names(['UMIs']))
    """
    anndata = _anndata()
    if unsupported not in _UNSUPPORTED:
        raise DafValueError(f"unsupported must be one of {_UNSUPPORTED}, found {unsupported!r}")
    if isinstance(adata, (str, os.PathLike)) and is_hdf5_file(adata):
        adata = anndata.read_h5ad(adata)
    elif isinstance(adata, (str, os.PathLike, Store, Group)):
        adata = read_anndata_zarr(adata, warn=lambda message: _report(unsupported, message))
    if obs_axis == var_axis:
        raise DafValueError(f"the obs and var axes must differ, both are {obs_axis!r}")
    daf = path if isinstance(path, DafDataset) else open_dataset(
        path, mode, name=name, zarr_format=zarr_format)
    try:
        daf.add_axis(obs_axis, np.asarray(adata.obs_names, dtype=object))
        daf.add_axis(var_axis, np.asarray(adata.var_names, dtype=object))
        for key, value in adata.uns.items():
            try:
                daf.set_scalar(key, normalize_scalar(value))
            except DafValueError:
                _report(unsupported, f"uns[{key!r}] ({type(value).__name__}) is not a Daf "
                                     "scalar; not converted")
        for axis, frame, label in ((obs_axis, adata.obs, "obs"), (var_axis, adata.var, "var")):
            for column in frame.columns:
                values = _column(frame[column])
                if values is None:
                    _report(unsupported, f"{label}[{column!r}] ({frame[column].dtype}) has "
                                         "no Daf form; not converted")
                    continue
                try:
                    daf.set_vector(axis, str(column), values)
                except DafValueError as e:  # e.g. a column named as Daf's reserved "name"
                    _report(unsupported, f"{label}[{column!r}] cannot be a Daf vector ({e}); "
                                         "not converted")
        matrices = ([(obs_axis, var_axis, x_name, adata.X)] if adata.X is not None else [])
        # anndata 0.13 shows X among the layers under the key None
        matrices += [(obs_axis, var_axis, k, v) for k, v in adata.layers.items()
                     if k is not None]
        matrices += [(obs_axis, obs_axis, k, v) for k, v in adata.obsp.items()]
        matrices += [(var_axis, var_axis, k, v) for k, v in adata.varp.items()]
        for rows, columns, key, value in matrices:
            if not is_sparse(value):
                value = np.asarray(value)
            daf.set_matrix(rows, columns, str(key), value)
        for label, mapping in (("obsm", adata.obsm), ("varm", adata.varm)):
            for key in mapping:
                _report(unsupported, f"{label}[{key!r}] needs an axis Daf does not have; "
                                     "not converted")
    except BaseException:
        if daf is not path:
            daf.close()
        raise
    return daf


def to_anndata(daf: Any, obs_axis: str, var_axis: str, *, x_name: str = "X",
               copy: bool = True) -> Any:
    """An AnnData object of a Daf data set's ``obs_axis`` and ``var_axis`` (``daf`` is an
    open DafDataset, or anything :func:`zarrkit.daf.open` takes, opened read-only). The
    ``x_name`` matrix becomes ``X``, the other matrices of the two axes ``layers``,
    matrices of an axis with itself ``obsp``/``varp``, vectors ``obs``/``var`` columns
    (sparse ones densified) and scalars ``uns``. ``copy=False`` keeps dense data as the
    read-only memory-mapped views the data set returns.

    >>> import numpy as np, zarrkit as zk
    >>> daf = zk.daf.open(zk.MemoryStore(), "w")
    >>> daf.add_axis("cell", ["c1", "c2"]); daf.add_axis("gene", ["g1"])
    >>> daf.set_matrix("cell", "gene", "UMIs", [[1], [2]])
    >>> zk.daf.to_anndata(daf, "cell", "gene", x_name="UMIs").X.ravel().tolist()
    [1, 2]
    """
    anndata = _anndata()
    import pandas as pd

    opened = not isinstance(daf, DafDataset)
    source: DafDataset = open_dataset(daf, "r") if opened else daf
    try:
        for axis in (obs_axis, var_axis):
            if not source.has_axis(axis):
                raise DafValueError(f"no axis {axis!r} in the Daf data set {source.name!r}")

        def data(value: Any) -> Any:
            if is_sparse(value):
                return value.copy() if copy else value
            return np.array(value) if copy else value

        def frame(axis: str) -> Any:
            columns = {}
            for name in source.vectors(axis):
                value = source.get_vector(axis, name)
                columns[name] = value.toarray() if is_sparse(value) else data(value)
            index = pd.Index(np.asarray(source.axis_vector(axis), dtype=object), dtype=object)
            return pd.DataFrame(columns, index=index)

        names = source.matrices(obs_axis, var_axis)
        x = (data(source.get_matrix(obs_axis, var_axis, x_name)) if x_name in names
             else None)
        layers = {name: data(source.get_matrix(obs_axis, var_axis, name))
                  for name in names if name != x_name}
        obsp = {name: data(source.get_matrix(obs_axis, obs_axis, name))
                for name in source.matrices(obs_axis, obs_axis)}
        varp = {name: data(source.get_matrix(var_axis, var_axis, name))
                for name in source.matrices(var_axis, var_axis)}
        uns = {name: source.get_scalar(name) for name in source.scalars()}
        return anndata.AnnData(X=x, obs=frame(obs_axis), var=frame(var_axis), layers=layers,
                               obsp=obsp, varp=varp, uns=uns)
    finally:
        if opened:
            source.close()


__all__ = ["from_anndata", "to_anndata"]
