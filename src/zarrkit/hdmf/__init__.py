"""The hdmf-zarr storage convention (NWB's Zarr backend) beyond links and references:
hdmf's dtypes and their storage (:mod:`~zarrkit.hdmf.dtypes`), the attributes a node shows
to the convention layer (:mod:`~zarrkit.hdmf.attributes`) and the cached specifications
(:mod:`~zarrkit.hdmf.specifications`). Links are :mod:`zarrkit.hierarchy.links`,
references :mod:`zarrkit.references`.

>>> import zarrkit as zk
>>> from zarrkit import hdmf
>>> root = zk.group({})
>>> _ = hdmf.write_specifications(root, "core", "2.11.0", {"namespace": {"namespaces": []}})
>>> hdmf.user_attributes(root), list(hdmf.read_specifications(root))
({}, ['core'])
"""

from zarrkit.hdmf.attributes import (
    RESERVED_ATTRIBUTES,
    RESERVED_ROOT_ATTRIBUTES,
    SPEC_LOC_ATTRIBUTE,
    is_reserved,
    user_attributes,
)
from zarrkit.hdmf.dtypes import (
    HDMF_DTYPES,
    StorageDtype,
    canonical_dtype,
    hdmf_dtype_of,
    storage_dtype,
)
from zarrkit.hdmf.specifications import (
    DEFAULT_SPEC_LOCATION,
    read_source,
    read_specifications,
    spec_location,
    write_specifications,
)

__all__ = [
    "DEFAULT_SPEC_LOCATION",
    "HDMF_DTYPES",
    "RESERVED_ATTRIBUTES",
    "RESERVED_ROOT_ATTRIBUTES",
    "SPEC_LOC_ATTRIBUTE",
    "StorageDtype",
    "canonical_dtype",
    "hdmf_dtype_of",
    "is_reserved",
    "read_source",
    "read_specifications",
    "spec_location",
    "storage_dtype",
    "user_attributes",
    "write_specifications",
]
