"""Community conventions as ready specs: a convention is a spec class whose typed
attributes and validators state its rules, so that :func:`zarrkit.models.validation.validate`
checks a live hierarchy against it (and mypy checks specs built in code).

* :mod:`zarrkit.models.conventions.xarray`: xarray's Zarr v2 encoding (every array names
  its dimensions in ``_ARRAY_DIMENSIONS``).
* :mod:`zarrkit.models.conventions.hdmf`: hdmf-zarr's reserved attributes, hdmf-zarr
  0.13's in Zarr v2 (``zarr_link``, ``zarr_dtype``, ``.specloc``) and 0.14's in Zarr v3
  (``_LINKS``, ``_DTYPE``, ``_REFERENCE_FIELDS``, ``{"_REFERENCE": ...}`` values).

>>> from zarrkit.models.conventions import xarray
>>> xarray.GroupSpec().zarr_format
2
"""

from __future__ import annotations

from zarrkit.models.conventions import hdmf, xarray

__all__ = ["hdmf", "xarray"]
