"""Daf ("data in axes", DataAxesFormats.jl) data sets in Zarr.

A Daf data set holds scalars, axes (named entries), vectors along an axis and matrices
along a pair of axes, dense or sparse; single-cell data is its typical content. zarrkit
reads and writes the layouts of the Julia package byte for byte, so that Python and Julia
users share files: the Zarr v3 layout of DataAxesFormats.jl 0.3 (the default) and the v2
layout of its documentation, in a directory (``x.daf.zarr``), a ZIP archive
(``x.daf.zarr.zip``, or ``x.dafs.zarr.zip#/group`` for several data sets), or over HTTP
(read-only). Dense numbers are read as memory-mapped numpy views.

>>> import numpy as np, zarrkit as zk
>>> with zk.daf.open(zk.MemoryStore(), "w") as daf:
...     daf.add_axis("gene", ["g1", "g2", "g3"])
...     daf.set_vector("gene", "is_marker", np.array([True, False, True]))
...     daf.get_vector("gene", "is_marker")
array([ True, False,  True])

Sparse properties need scipy; :func:`from_anndata` and :func:`to_anndata` need anndata.
"""

from __future__ import annotations

from zarrkit.daf.anndata_io import from_anndata, to_anndata
from zarrkit.daf.dataset import DafDataset, Names, open_dataset
from zarrkit.daf.layout import MAJOR_VERSION, MINOR_VERSION

#: ``zk.daf.open(path, mode="r", name=None, zarr_format=None)``: see :func:`open_dataset`.
open = open_dataset  # noqa: A001 - the package's entry point, as zk.open

__all__ = [
    "MAJOR_VERSION",
    "MINOR_VERSION",
    "DafDataset",
    "Names",
    "from_anndata",
    "open",
    "open_dataset",
    "to_anndata",
]
