"""Where a Daf data set keeps its parts in Zarr, and how each kind of array is created.

A Daf root group holds four groups, ``scalars``, ``axes``, ``vectors`` and ``matrices``,
and a version marker ``[1, 0]``: a ``daf`` group attribute in the Zarr v3 layout (the one
DataAxesFormats.jl 0.3 writes, the default), a ``daf`` array of two ``uint8`` in the v2
layout of the seed document. Every array is one uncompressed chunk covering the whole
array, except "packed" properties: a v3 ``sharding_indexed`` array (index first, inner
chunks compressed with blosc zstd bitshuffle) whose one shard is also a ZIP archive
("indexed+zipped", :mod:`zarrkit.daf.packed`), as the Julia package writes them with
``packed=true``.

>>> vector_path("cell", "age"), matrix_path("cell", "gene", "UMIs")
('vectors/cell/age', 'matrices/cell/gene/UMIs')
>>> check_version((1, 0), "x.daf.zarr")
>>> flat_options(3, np.dtype("f4"), (2, 3))["chunks"]
(2, 3)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit.errors import DafMarkerError, DafVersionError, NotDafError
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.group import Group

#: The version of the layout written, and the newest one read (a reader accepts the same
#: major version and any minor version up to this one, as semantic versioning says).
MAJOR_VERSION = 1
MINOR_VERSION = 0

DAF_KEY = "daf"
SCALARS = "scalars"
AXES = "axes"
VECTORS = "vectors"
MATRICES = "matrices"
GROUPS = (SCALARS, AXES, VECTORS, MATRICES)

#: The attribute that marks a packed (sharded) array, and the value the Julia package writes.
PACKED_ATTRIBUTE = "daf_packed_format"
PACKED_FORMAT = "indexed+zipped"
#: The Julia package's packing rule (DAF_PACKED_TARGET_CHUNK_KB): inner chunks hold this many
#: bytes of one column, and a column smaller than this stays flat even when packing is asked.
PACKED_TARGET_BYTES = 8 * 1024
#: Bytes per element assumed for strings when sizing packed chunks (as the Julia package).
STRING_SIZE_ESTIMATE = 16
#: blosc zstd bitshuffle at level 5: DAF_PACKED_COMPRESSION's default.
PACKED_COMPRESSION_LEVEL = 5

_LITTLE_ENDIAN_BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


def scalar_path(name: str) -> str:
    """The path of a scalar property in the root group.

    >>> scalar_path("version")
    'scalars/version'
    """
    return f"{SCALARS}/{name}"


def axis_path(axis: str) -> str:
    """The path of an axis' entries array.

    >>> axis_path("cell")
    'axes/cell'
    """
    return f"{AXES}/{axis}"


def vector_path(axis: str, name: str) -> str:
    """The path of a vector property of ``axis``.

    >>> vector_path("gene", "is_marker")
    'vectors/gene/is_marker'
    """
    return f"{VECTORS}/{axis}/{name}"


def matrix_path(rows_axis: str, columns_axis: str, name: str) -> str:
    """The path of a matrix property stored with ``rows_axis`` rows (column-major).

    >>> matrix_path("gene", "cell", "UMIs")
    'matrices/gene/cell/UMIs'
    """
    return f"{MATRICES}/{rows_axis}/{columns_axis}/{name}"


# --- the version marker -----------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    """A Daf layout version, ``major.minor``.

    >>> str(Version(1, 0))
    '1.0'
    """

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


SUPPORTED = Version(MAJOR_VERSION, MINOR_VERSION)


def marker_attributes() -> dict[str, Any]:
    """The root group attributes of a new v3 layout data set.

    >>> marker_attributes()
    {'daf': [1, 0]}
    """
    return {DAF_KEY: [MAJOR_VERSION, MINOR_VERSION]}


def parse_marker(value: Any, where: str) -> Version:
    """The version a marker value holds (the v3 attribute, or the values of the v2 array);
    DafMarkerError unless it is two non-negative integers.

    >>> parse_marker([1, 0], "x")
    Version(major=1, minor=0)
    >>> parse_marker("1.0", "x")
    Traceback (most recent call last):
    zarrkit.errors.DafMarkerError: malformed Daf version marker '1.0' in x: expected [major, minor]
    """
    items = list(value) if isinstance(value, (list, tuple, np.ndarray)) else None
    if items is None or len(items) != 2 or not all(
            isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))
            and item >= 0 for item in items):
        raise DafMarkerError(
            f"malformed Daf version marker {_show(value)} in {where}: expected [major, minor]")
    return Version(int(items[0]), int(items[1]))


def _show(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return repr(value.tolist())
    return repr(value)


def check_version(version: tuple[int, int] | Version, where: str) -> None:
    """DafVersionError unless this code reads ``version`` (same major, minor not newer).

    >>> check_version((1, 1), "x.daf.zarr")
    Traceback (most recent call last):
    zarrkit.errors.DafVersionError: incompatible Daf format version 1.1 in x.daf.zarr; \
this code supports version 1.0
    """
    major, minor = (version.major, version.minor) if isinstance(version, Version) else version
    if major != MAJOR_VERSION or minor > MINOR_VERSION:
        raise DafVersionError(
            f"incompatible Daf format version {major}.{minor} in {where}; "
            f"this code supports version {SUPPORTED}",
            found=(major, minor), supported=(MAJOR_VERSION, MINOR_VERSION), path=where)


def read_marker(root: Group, where: str) -> Version:
    """The version marker of a Daf root group of either Zarr format: NotDafError when it
    has none, DafMarkerError when it is malformed (not checked against what is supported).

    >>> import zarrkit as zk
    >>> read_marker(zk.group({}, zarr_format=3, attributes={"daf": [1, 0]}), "memory")
    Version(major=1, minor=0)
    """
    if root.zarr_format == 3:
        if DAF_KEY not in root.attrs:
            raise NotDafError(f"{where} is a Zarr group but not a Daf data set "
                              f"(its zarr.json has no {DAF_KEY!r} attribute)")
        return parse_marker(root.attrs[DAF_KEY], where)
    marker = root.get(DAF_KEY)
    if marker is None:
        raise NotDafError(f"{where} is a Zarr group but not a Daf data set "
                          f"(it has no {DAF_KEY!r} array)")
    if not isinstance(marker, Array) or marker.ndim != 1 or marker.dtype.kind not in "iu":
        raise DafMarkerError(f"malformed Daf version marker in {where}: {DAF_KEY!r} must be "
                             f"a 1-d integer array holding [major, minor]")
    return parse_marker(marker[...], where)


def write_marker_v2(root: Group) -> None:
    """Create the ``daf`` array of the v2 layout: two ``uint8``, uncompressed, fill null
    (what Zarr.jl writes with no fill value).

    >>> import zarrkit as zk
    >>> root = zk.group({}, zarr_format=2); write_marker_v2(root)
    >>> read_marker(root, "memory")
    Version(major=1, minor=0)
    """
    root.create_array(DAF_KEY, shape=(2,), dtype="u1", chunks=(2,), compressors=None,
                      fill_value=None, data=np.array([MAJOR_VERSION, MINOR_VERSION], "u1"))


def create_groups(root: Group) -> None:
    """Create whichever of the four top groups are missing.

    >>> import zarrkit as zk
    >>> root = zk.group({}, zarr_format=3); create_groups(root); sorted(root)
    ['axes', 'matrices', 'scalars', 'vectors']
    """
    for name in GROUPS:
        root.require_group(name)


# --- array creation ---------------------------------------------------------------------


def _chunks(shape: tuple[int, ...]) -> tuple[int, ...]:
    # One chunk covering the array; an empty dimension still needs a chunk length of 1.
    return tuple(max(n, 1) for n in shape)


def flat_options(zarr_format: int, dtype: np.dtype[Any], shape: tuple[int, ...], *,
                 separator: str = "/") -> dict[str, Any]:
    """``create_array`` options of an unpacked array: one uncompressed chunk covering the
    array. Numbers: the ``bytes`` codec, little-endian, fill zero (v3), fill null and no
    compressor (v2, as Zarr.jl); strings (object dtype): vlen-utf8 and fill ``""``.
    ``separator`` is the v2 dimension separator (the Julia package uses ``/`` for dense
    properties, the default ``.`` for the others; both name a 1-d chunk ``0``).

    >>> flat_options(3, np.dtype(bool), (4,))["serializer"]
    {'name': 'bytes', 'configuration': {'endian': 'little'}}
    >>> flat_options(2, np.dtype(object), (4,))["fill_value"]
    ''
    """
    options: dict[str, Any] = {"dtype": dtype, "shape": shape, "chunks": _chunks(shape),
                               "compressors": None}
    is_string = dtype.kind == "O"
    if zarr_format == 3:
        options["fill_value"] = "" if is_string else 0
        if not is_string:
            options["serializer"] = dict(_LITTLE_ENDIAN_BYTES)
    else:
        options["fill_value"] = "" if is_string else None
        options["dimension_separator"] = separator
    return options


def packed_chunk_rows(rows: int, dtype: np.dtype[Any]) -> int | None:
    """How many rows (elements of a column) one inner chunk of a packed property holds,
    or None when the column is too short to pack (DAF_PACKED_TARGET_CHUNK_KB's rule).

    >>> packed_chunk_rows(1000, np.dtype("f8")), packed_chunk_rows(1100, np.dtype("f8"))
    (None, 1024)
    """
    element = STRING_SIZE_ESTIMATE if dtype.kind == "O" else dtype.itemsize
    if rows * element < PACKED_TARGET_BYTES:
        return None
    return min(PACKED_TARGET_BYTES // element, rows)


def packed_inner_codecs(dtype: np.dtype[Any]) -> list[dict[str, Any]]:
    """The inner codecs of a packed property (DAF_PACKED_COMPRESSION's default,
    ``:blosc_zstd_bitshuffle`` at level 5): ``bytes`` (``vlen-utf8`` for strings), then
    blosc, whose ``typesize`` names the element size (1 for strings), as Julia writes it.

    >>> packed_inner_codecs(np.dtype("u2"))[1]["configuration"]["typesize"]
    2
    """
    is_string = dtype.kind == "O"
    serializer = ({"name": "vlen-utf8", "configuration": {}} if is_string
                  else dict(_LITTLE_ENDIAN_BYTES))
    blosc = {"name": "blosc", "configuration": {
        "cname": "zstd", "clevel": PACKED_COMPRESSION_LEVEL, "shuffle": "bitshuffle",
        "typesize": 1 if is_string else dtype.itemsize, "blocksize": 0}}
    return [serializer, blosc]


def packed_options(dtype: np.dtype[Any], shape: tuple[int, ...], *,
                   whole_rows: bool = False) -> dict[str, Any] | None:
    """``create_array`` options of a packed v3 array of ``shape`` (Zarr order, the Daf rows
    last), or None when it is too small to pack.

    An inner chunk holds DAF_PACKED_TARGET_CHUNK_KB of one Daf column
    (:func:`packed_chunk_rows`); with ``whole_rows`` a whole Daf column, as the Julia
    package's relayout (``format_get_empty_dense_matrix!``'s streaming writer) stores it.
    The Julia package makes the shard cover exactly the array; when the inner chunk does
    not divide the rows, that shard shape breaks the sharding spec's divisibility rule
    (zarr-python refuses such an array). The shard here is rounded up to a multiple of the
    inner chunk instead: the same single shard ``c/0`` (``c/0/0``), with the same number of
    inner chunks and the same bytes, in metadata every Zarr reader accepts.

    >>> options = packed_options(np.dtype("f8"), (3, 1100))
    >>> options["chunks"], options["shards"], options["attributes"]
    ((1, 1024), (3, 2048), {'daf_packed_format': 'indexed+zipped'})
    >>> packed_options(np.dtype("f8"), (3, 1100), whole_rows=True)["chunks"]
    (1, 1100)
    """
    if not shape or any(n == 0 for n in shape):
        return None
    rows = shape[-1]
    inner_rows = packed_chunk_rows(rows, dtype)
    if inner_rows is None:
        return None
    if whole_rows:
        inner_rows = rows
    inner = (1,) * (len(shape) - 1) + (inner_rows,)
    shard = shape[:-1] + (-(-rows // inner_rows) * inner_rows,)
    serializer, blosc = packed_inner_codecs(dtype)
    is_string = dtype.kind == "O"
    options: dict[str, Any] = {
        "dtype": dtype, "shape": shape, "chunks": inner, "shards": shard,
        "compressors": [blosc], "index_location": "start",
        "fill_value": "" if is_string else 0,
        "attributes": {PACKED_ATTRIBUTE: PACKED_FORMAT},
    }
    if not is_string:
        options["serializer"] = serializer
    return options


def rounded_shard_metadata(metadata: Any) -> Any | None:
    """For the metadata of a packed array as the Julia package writes it (one shard exactly
    covering the array, the inner chunk not dividing it), the same array described with
    its shard rounded up to a multiple of the inner chunk, which zarrkit reads: the shard
    key, its index and its inner chunks are the same. None for any other metadata.

    >>> import json, zarrkit as zk
    >>> from zarrkit.metadata.v3 import ArrayMetadataV3
    >>> meta = packed_options(np.dtype("f8"), (1100,))
    >>> doc = zk.create_array({}, **meta).metadata.to_json()
    >>> doc["chunk_grid"]["configuration"]["chunk_shape"] = [1100]  # as Julia writes it
    >>> rounded_shard_metadata(ArrayMetadataV3.from_json(doc)).chunks
    (2048,)
    """
    from dataclasses import replace

    from zarrkit.metadata.chunk_grid import RegularChunkGrid

    if metadata.zarr_format != 3 or len(metadata.codecs) != 1:
        return None
    codec = metadata.codecs[0]
    inner = (codec.get("configuration") or {}).get("chunk_shape")
    shard = tuple(metadata.chunks)
    if (codec.get("name") != "sharding_indexed" or shard != tuple(metadata.shape)
            or not isinstance(inner, list) or len(inner) != len(shard)
            or not all(isinstance(n, int) and n > 0 for n in inner)):
        return None
    rounded = tuple(-(-s // n) * n for s, n in zip(shard, inner, strict=True))
    if rounded == shard:
        return None
    return replace(metadata, chunk_grid=RegularChunkGrid(rounded))


@dataclass(frozen=True)
class JuliaShaped:
    """Array metadata that serialises as Zarr.jl writes a ``zarr.json``: without the
    optional ``attributes`` and ``storage_transformers`` when they are empty (the Julia
    package's arrays carry neither). It is what node creation is given in place of the
    metadata itself (it asks for ``zarr_format`` and ``to_json()`` only); the metadata
    read back is the same.

    >>> import zarrkit as zk
    >>> meta = zk.create_array({}, shape=(2,), dtype="u1", zarr_format=3).metadata
    >>> sorted(JuliaShaped(meta).to_json())  # doctest: +NORMALIZE_WHITESPACE
    ['chunk_grid', 'chunk_key_encoding', 'codecs', 'data_type', 'fill_value', 'node_type',
     'shape', 'zarr_format']
    """

    metadata: Any

    @property
    def zarr_format(self) -> int:
        """The Zarr format of the metadata.

        >>> import zarrkit as zk
        >>> JuliaShaped(zk.create_array({}, shape=(1,), zarr_format=2).metadata).zarr_format
        2
        """
        return int(self.metadata.zarr_format)

    def to_json(self) -> dict[str, Any]:
        """The document, the empty optional members left out (format 3).

        >>> import zarrkit as zk
        >>> meta = zk.create_array({}, shape=(1,), zarr_format=3, attributes={"a": 1}).metadata
        >>> JuliaShaped(meta).to_json()["attributes"]
        {'a': 1}
        """
        document: dict[str, Any] = self.metadata.to_json()
        if self.zarr_format == 3:
            for optional in ("attributes", "storage_transformers"):
                if not document.get(optional, True):
                    del document[optional]
        return document


def is_packed(array: Array) -> bool:
    """Whether an array is stored packed (sharded), as a Daf writer marks it or not.

    >>> import zarrkit as zk
    >>> is_packed(zk.create_array({}, shape=(2,), dtype="u1"))
    False
    """
    return array.shards is not None


__all__ = [
    "AXES",
    "DAF_KEY",
    "GROUPS",
    "JuliaShaped",
    "MAJOR_VERSION",
    "MATRICES",
    "MINOR_VERSION",
    "PACKED_ATTRIBUTE",
    "PACKED_FORMAT",
    "SCALARS",
    "SUPPORTED",
    "VECTORS",
    "Version",
    "axis_path",
    "check_version",
    "create_groups",
    "flat_options",
    "is_packed",
    "marker_attributes",
    "matrix_path",
    "packed_chunk_rows",
    "packed_inner_codecs",
    "packed_options",
    "parse_marker",
    "read_marker",
    "rounded_shard_metadata",
    "scalar_path",
    "vector_path",
    "write_marker_v2",
]
