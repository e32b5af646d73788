"""``zarr.core.metadata``'s public names, as zarrkit's.

>>> from zarrkit.core.metadata import ArrayV3Metadata
>>> ArrayV3Metadata.__name__
'ArrayMetadataV3'
"""

from __future__ import annotations

from zarrkit.metadata.v2 import ArrayMetadataV2 as ArrayV2Metadata
from zarrkit.metadata.v3 import ArrayMetadataV3 as ArrayV3Metadata

__all__ = ["ArrayV2Metadata", "ArrayV3Metadata"]
