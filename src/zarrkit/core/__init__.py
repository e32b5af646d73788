"""zarr-python's ``zarr.core`` names that users import, under zarrkit's classes, so that
``from zarr.core.group import GroupMetadata`` works after ``zarr`` becomes ``zarrkit``.

Only the names of zarr-python's public user guide are here; zarrkit's own homes
(:mod:`zarrkit.metadata`, :mod:`zarrkit.hierarchy`) stay where new code should import from.

>>> from zarrkit.core.group import GroupMetadata
>>> GroupMetadata(attributes={"a": 1}).attributes
{'a': 1}
"""
