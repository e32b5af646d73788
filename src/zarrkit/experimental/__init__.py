"""New features whose interface may still change, as zarr-python's ``zarr.experimental``:
:mod:`zarrkit.experimental.cache_store` (a store that keeps what it reads from another in a
third, zarr-python 3.1.4's ``CacheStore``).

>>> from zarrkit.experimental.cache_store import CacheStore
>>> CacheStore.__name__
'CacheStore'
"""
