"""``zarr.core.group``'s public names, as zarrkit's.

>>> from zarrkit.core.group import Group, GroupMetadata
>>> GroupMetadata(zarr_format=2)
GroupMetadataV2(zarr_format=2)
"""

from __future__ import annotations

from typing import Any

from zarrkit.hierarchy.group import Group
from zarrkit.hierarchy.nodes import StorePath
from zarrkit.metadata.v2 import GroupMetadataV2
from zarrkit.metadata.v3 import ConsolidatedMetadata, GroupMetadataV3


def GroupMetadata(  # noqa: N802 - zarr-python's class name, built by a function
    attributes: dict[str, Any] | None = None,
    zarr_format: int = 3,
    consolidated_metadata: ConsolidatedMetadata | None = None,
) -> GroupMetadataV3 | GroupMetadataV2 | dict[str, Any]:
    """A group's metadata as zarr-python's ``GroupMetadata(...)`` makes it, in a form
    :func:`zarrkit.create_hierarchy` takes: zarrkit's :class:`GroupMetadataV3`, or for
    ``zarr_format=2`` :class:`GroupMetadataV2` (which holds no attributes: a format-2
    group keeps them in ``.zattrs``; with attributes, the group's JSON description
    ``{"zarr_format": 2, "attributes": ...}``).

    >>> GroupMetadata({"k": "v"})
    GroupMetadataV3(attributes={'k': 'v'}, consolidated_metadata=None, extra={})
    """
    if zarr_format == 2:
        if consolidated_metadata is not None:
            raise ValueError("a format-2 group keeps consolidated metadata in .zmetadata, "
                             "not in its metadata")
        if attributes:
            return {"zarr_format": 2, "attributes": dict(attributes)}
        return GroupMetadataV2()
    if zarr_format != 3:
        raise ValueError(f"zarr_format must be 2 or 3, not {zarr_format!r}")
    return GroupMetadataV3(attributes=dict(attributes or {}),
                           consolidated_metadata=consolidated_metadata)


__all__ = ["ConsolidatedMetadata", "Group", "GroupMetadata", "StorePath"]
