"""``zarr.core.array``'s public names, as zarrkit's.

>>> from zarrkit.core.array import Array
>>> import zarrkit
>>> isinstance(zarrkit.zeros(2), Array)
True
"""

from __future__ import annotations

from zarrkit.hierarchy.array import Array
from zarrkit.metadata.v2 import ArrayMetadataV2 as ArrayV2Metadata
from zarrkit.metadata.v3 import ArrayMetadataV3 as ArrayV3Metadata

__all__ = ["Array", "ArrayV2Metadata", "ArrayV3Metadata"]
