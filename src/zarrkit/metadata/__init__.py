"""Metadata documents, data types and fill values for Zarr v2 (and v3).

>>> from zarrkit.metadata import ArrayMetadataV2
>>> ArrayMetadataV2.__name__
'ArrayMetadataV2'
"""

from zarrkit.metadata.v2 import ArrayMetadataV2, GroupMetadataV2

__all__ = ["ArrayMetadataV2", "GroupMetadataV2"]
