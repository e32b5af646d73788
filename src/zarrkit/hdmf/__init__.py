"""hdmf-zarr's storage conventions (NWB's Zarr backend) beyond links and references:
hdmf's dtypes and their storage (:mod:`~zarrkit.hdmf.dtypes`), the attributes a node shows
to the convention layer (:mod:`~zarrkit.hdmf.attributes`), the cached specifications
(:mod:`~zarrkit.hdmf.specifications`) and moving a node between conventions
(:mod:`~zarrkit.hdmf.convention`, for :func:`zarrkit.convert`). Links are
:mod:`zarrkit.hierarchy.links`, references :mod:`zarrkit.references`.

Two conventions exist, and zarrkit reads both in files of either Zarr format: hdmf-zarr
0.13's (zarr-python 2, Zarr v2 files: ``zarr_link``, ``zarr_dtype``, references as JSON
objects, scalars of shape ``(1,)``) and hdmf-zarr 0.14's (zarr-python 3, Zarr v3 files:
``_LINKS``, ``_DTYPE``, ``_REFERENCE_FIELDS``, ``{"_REFERENCE": ...}`` attributes,
references as target paths, scalars of shape ``()``). zarrkit writes a file's own:
:func:`convention_of` tells which (0.13's in a v2 file, 0.14's in a v3 one).

>>> import zarrkit as zk
>>> from zarrkit import hdmf
>>> root = zk.group({})
>>> _ = hdmf.write_specifications(root, "core", "2.11.0", {"namespace": {"namespaces": []}})
>>> hdmf.user_attributes(root), list(hdmf.read_specifications(root))
({}, ['core'])
>>> hdmf.convention_of(root).name
'hdmf-zarr 0.14'
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
from zarrkit.hierarchy.links import (
    HDMF_ZARR_013,
    HDMF_ZARR_014,
    Convention,
    convention_for,
    convention_of,
)

__all__ = [
    "DEFAULT_SPEC_LOCATION",
    "HDMF_ZARR_013",
    "HDMF_ZARR_014",
    "Convention",
    "convention_for",
    "convention_of",
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
