"""``zk.daf.from_anndata`` given an AnnData Zarr store (what anndata writes with
``write_zarr``, Zarr v2 and v3): zarrkit reads the store itself, and the Daf data set it
makes must equal the one made from ``anndata.read_zarr`` of the same store (the oracle),
with every element Daf cannot hold named in a warning.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit as zk
from zarrkit.errors import DafValueError

anndata = pytest.importorskip("anndata")
pd = pytest.importorskip("pandas")
sp = pytest.importorskip("scipy.sparse")


def sample(seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    n_obs, n_var = 6, 4
    obs = pd.DataFrame(
        {"age": rng.integers(0, 90, n_obs), "kind": pd.Categorical(list("abcabc")),
         "name": [f"n{i}" for i in range(n_obs)], "flag": rng.random(n_obs) < 0.5,
         "ratio": rng.random(n_obs), "count": np.arange(n_obs, dtype=np.int32),
         "with_gap": pd.array([1, None, 3, 4, 5, 6], dtype="Int64")},
        index=[f"cell{i}" for i in range(n_obs)])
    var = pd.DataFrame({"gene_id": list("wxyz"), "high": [True, False, True, False]},
                       index=list("ABCD"))
    x = sp.random(n_obs, n_var, density=0.5, format="csr", dtype="f4", random_state=seed)
    return anndata.AnnData(
        X=x, obs=obs, var=var,
        layers={"dense": rng.integers(0, 9, (n_obs, n_var)), "csc": sp.csc_matrix(x)},
        obsm={"pca": np.zeros((n_obs, 2))}, varm={"loadings": np.ones((n_var, 3))},
        obsp={"distances": sp.eye(n_obs, format="csr")}, varp={"corr": np.eye(n_var)},
        uns={"organism": "human", "release": 3, "scale": 0.5, "flag": True,
             "nested": {"a": 1}, "colors": np.arange(3)})


def write(adata: Any, path: Path, zarr_format: int) -> Path:
    with warnings.catch_warnings():
        # anndata 0.13 warns that choosing the format will go away in 0.14
        warnings.simplefilter("ignore", DeprecationWarning)
        anndata.settings.zarr_write_format = zarr_format
        try:
            adata.write_zarr(path)
        finally:
            anndata.settings.zarr_write_format = 3
    return path


def daf_contents(daf: Any) -> dict[str, Any]:
    """Everything a Daf data set holds, as plain values."""
    def plain(value: Any) -> Any:
        value = value.toarray() if sp.issparse(value) else np.asarray(value)
        return value.dtype.str if value.dtype.kind != "O" else "O", value.tolist()

    axes = sorted(daf.axes())
    return {
        "scalars": {name: plain(daf.get_scalar(name)) for name in daf.scalars()},
        "axes": {axis: plain(daf.axis_vector(axis)) for axis in axes},
        "vectors": {(axis, name): plain(daf.get_vector(axis, name))
                    for axis in axes for name in daf.vectors(axis)},
        "matrices": {(rows, columns, name): plain(daf.get_matrix(rows, columns, name))
                     for rows in axes for columns in axes
                     for name in daf.matrices(rows, columns)},
    }


def converted(source: Any) -> tuple[dict[str, Any], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        daf = zk.daf.from_anndata(source, zk.MemoryStore(), obs_axis="cell", var_axis="gene")
    try:
        return daf_contents(daf), sorted(str(w.message).split(" ")[0] for w in caught
                                         if issubclass(w.category, UserWarning))
    finally:
        daf.close()


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_an_anndata_zarr_path_converts_as_the_object_anndata_reads(
        tmp_path: Path, zarr_format: int) -> None:
    path = write(sample(), tmp_path / "cells.zarr", zarr_format)
    from_path, warned_path = converted(str(path))
    from_object, warned_object = converted(anndata.read_zarr(path))
    assert from_path == from_object
    assert warned_path == warned_object
    # what Daf cannot hold is named, never dropped silently
    assert {"uns['nested']", "uns['colors']", "obsm['pca']", "varm['loadings']",
            "obs['with_gap']"} <= set(warned_path)
    assert from_path["axes"]["cell"][1] == [f"cell{i}" for i in range(6)]
    # X and the layers, nothing else (anndata 0.13 lists X among the layers as None)
    assert {name for rows, columns, name in from_path["matrices"]
            if (rows, columns) == ("cell", "gene")} == {"X", "dense", "csc"}
    assert from_path["vectors"][("cell", "kind")][1] == list("abcabc")
    assert from_path["scalars"]["organism"][1] == "human"


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_an_anndata_zarr_store_or_group_or_zip_converts_too(
        tmp_path: Path, zarr_format: int) -> None:
    path = write(sample(1), tmp_path / "cells.zarr", zarr_format)
    expected, _ = converted(anndata.read_zarr(path))
    archive = Path(shutil.make_archive(str(tmp_path / "cells"), "zip", path))
    store = zk.MemoryStore()
    zk.copy_store(zk.DirectoryStore(path), store)
    for source in (store, zk.open_group(str(path), mode="r"), zk.ZipStore(archive, mode="r")):
        assert converted(source)[0] == expected, source


def test_unsupported_elements_can_be_errors(tmp_path: Path) -> None:
    path = write(sample(), tmp_path / "cells.zarr", 3)
    element = r"^(obs|var|uns|obsm|varm)\['\w+'\].*not converted"
    with pytest.raises(DafValueError, match=element):
        zk.daf.from_anndata(str(path), zk.MemoryStore(), unsupported="error")


def test_an_element_of_an_unknown_encoding_is_named(tmp_path: Path) -> None:
    path = write(sample(), tmp_path / "cells.zarr", 3)
    root = zk.open_group(str(path), mode="r+")
    root["uns"].create_group("ragged", attributes={"encoding-type": "awkward-array",
                                                   "encoding-version": "0.1.0"})
    with pytest.warns(UserWarning, match="uns\\['ragged'\\].*'awkward-array'"):
        zk.daf.from_anndata(str(path), zk.MemoryStore()).close()


def test_a_store_that_is_not_anndata_is_refused_by_name(tmp_path: Path) -> None:
    zk.open_group(str(tmp_path / "plain.zarr"), mode="w", attributes={"title": "x"})
    with pytest.raises(DafValueError, match="plain.zarr.*not an AnnData Zarr store"):
        zk.daf.from_anndata(str(tmp_path / "plain.zarr"), zk.MemoryStore())


def test_an_h5ad_path_is_still_read_by_anndata(tmp_path: Path) -> None:
    adata = sample()
    del adata.uns["nested"]
    adata.write_h5ad(tmp_path / "cells.h5ad")
    assert converted(str(tmp_path / "cells.h5ad"))[0] == converted(adata)[0]
