"""Codec objects as zarr-python users write them: ``BloscCodec(cname="zstd", clevel=3)``.

These are the user-facing form of the v3 codecs in zarrkit's registry, free of any array:
the same constructor arguments, defaults, attributes, equality and ``repr`` as
zarr-python 3.4's ``zarr.codecs`` classes. Each turns into its metadata JSON with
:meth:`PublicCodec.to_dict` (what zarr-python returns) and is built back from it with
:func:`public_codec`. Chunks are never encoded through these objects: arrays bind the JSON
to their chunks through the registry (:mod:`zarrkit.codecs.v3`), which keeps the hot path
on the spec-bound codecs.

>>> codec = BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle")
>>> codec.clevel, codec.shuffle
(3, 'bitshuffle')
>>> public_codec(GzipCodec(level=1).to_dict()) == GzipCodec(level=1)
True
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, ClassVar, Literal

import numpy as np

from zarrkit.codecs.v3.base import parse_codec_entry
from zarrkit.errors import MetadataError, UnknownCodecError, ZarrDeprecationWarning
from zarrkit.metadata.dtypes import has_endianness

ARRAY_ARRAY = "array -> array"
ARRAY_BYTES = "array -> bytes"
BYTES_BYTES = "bytes -> bytes"

BLOSC_CNAMES = ("lz4", "lz4hc", "blosclz", "snappy", "zlib", "zstd")
BLOSC_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")
ENDIANS = ("little", "big")
INDEX_LOCATIONS = ("start", "end")
# zarr-python 3.3's choices; zarrkit lays every shard out in Morton order, which each
# of them reads back identically (the order is not part of the metadata).
SUBCHUNK_WRITE_ORDERS = ("morton", "unordered", "lexicographic", "colexicographic")
#: zarr-python's type of ``ShardingCodec(subchunk_write_order=...)``.
SubchunkWriteOrder = Literal["morton", "unordered", "lexicographic", "colexicographic"]


class _DeprecatedNames(type):
    """zarr-python 3.3's deprecated enums: a member name read from the class warns and
    gives the literal string, which is what the codecs hold and compare."""

    _members: tuple[str, ...]

    def __getattr__(cls, name: str) -> str:
        members: tuple[str, ...] = type.__getattribute__(cls, "_members")
        if name in members:
            warnings.warn(f"{cls.__name__}.{name} is deprecated; pass the string "
                          f"{name!r} instead.", ZarrDeprecationWarning, stacklevel=2)
            return name
        raise AttributeError(name)


class BloscCname(metaclass=_DeprecatedNames):
    """Deprecated (as in zarr-python 3.3): pass the compressor inside blosc as a string.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     BloscCname.zstd
    'zstd'
    """

    _members = BLOSC_CNAMES


class BloscShuffle(metaclass=_DeprecatedNames):
    """Deprecated (as in zarr-python 3.3): pass blosc's shuffle as a string.

    >>> BloscShuffle.from_int(2)
    'bitshuffle'
    """

    _members = BLOSC_SHUFFLES

    @staticmethod
    def from_int(num: int) -> str:
        """The shuffle of numcodecs' integer form (0, 1, 2)."""
        if isinstance(num, bool) or num not in range(3):
            raise ValueError(f"Value must be between 0 and 2. Got {num}.")
        return BLOSC_SHUFFLES[num]


class Endian(metaclass=_DeprecatedNames):
    """Deprecated (as in zarr-python 3.3): pass the ``bytes`` codec's byte order as a
    string.

    >>> BytesCodec(endian="big").endian
    'big'
    """

    _members = ENDIANS


class ShardingCodecIndexLocation(metaclass=_DeprecatedNames):
    """Deprecated (as in zarr-python 3.3): pass where a shard keeps its index as a string.

    >>> ShardingCodec(chunk_shape=(2,), index_location="start").index_location
    'start'
    """

    _members = INDEX_LOCATIONS


def _literal(value: Any, choices: tuple[str, ...], what: str, codec: str) -> str:
    # An enum member (the enums zarr-python had until 3.3, or a user's str enum mirroring
    # them) is taken by its value, with zarr-python's deprecation warning.
    if isinstance(value, Enum):
        warnings.warn(f"Passing an enum to {codec}(..., {what}=...) is deprecated; pass the "
                      f"equivalent literal string instead.", ZarrDeprecationWarning,
                      stacklevel=3)
        value = value.value
    if isinstance(value, str) and value in choices:
        return value
    raise MetadataError(f"{codec} {what} must be one of {list(choices)}, found {value!r}")


def _int(value: Any, what: str, low: int | None = None, high: int | None = None) -> int:
    if (isinstance(value, bool) or not isinstance(value, int | np.integer)
            or (low is not None and value < low) or (high is not None and value > high)):
        bounds = f" in [{low}, {high}]" if low is not None and high is not None else ""
        bounds = f" >= {low}" if low is not None and high is None else bounds
        raise MetadataError(f"{what} must be an integer{bounds}, found {value!r}")
    return int(value)


def jsonable(value: Any) -> Any:
    """``value`` with tuples as lists, as JSON stores it.

    >>> jsonable({"order": (1, 0)})
    {'order': [1, 0]}
    """
    result: Any = json.loads(json.dumps(value))
    return result


@dataclass(frozen=True)
class PublicCodec:
    """Base of the public codec classes: a JSON name, a kind, and the JSON form.

    >>> Crc32cCodec().to_dict()
    {'name': 'crc32c'}
    """

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """The codec's JSON form, as zarr-python's ``to_dict`` gives it."""
        return {"name": self.name}

    def to_json(self) -> dict[str, Any]:
        """The JSON written into new metadata: :meth:`to_dict` with tuples as lists, and
        settings left to be chosen for the array's data type left out."""
        return jsonable(self.to_dict())  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PublicCodec:
        """The codec of a JSON form ``{"name": ..., "configuration": {...}}``.

        >>> GzipCodec.from_dict({"name": "gzip", "configuration": {"level": 1}})
        GzipCodec(level=1)
        """
        name, configuration, _ = parse_codec_entry(data)
        if name != cls.name:
            raise MetadataError(f"expected a codec named {cls.name!r}, found {name!r}")
        try:
            return cls(**configuration)
        except TypeError as e:  # an unknown member
            raise MetadataError(f"codec {name!r}: invalid configuration: {e}") from e

    def for_dtype(self, dtype: np.dtype[Any]) -> PublicCodec:
        """This codec with the settings left open filled in for arrays of ``dtype``, as
        zarr-python does when an array is created (``evolve_from_array_spec``).

        >>> BytesCodec().for_dtype(np.dtype("u1"))
        BytesCodec(endian=None)
        """
        return self


@dataclass(frozen=True)
class BloscCodec(PublicCodec):
    """``blosc`` (bytes -> bytes). ``typesize`` and ``shuffle`` left as None are chosen
    from the array's item size when the array is created.

    >>> BloscCodec(typesize=4, shuffle="shuffle").to_dict()["configuration"]
    {'typesize': 4, 'cname': 'zstd', 'clevel': 5, 'shuffle': 'shuffle', 'blocksize': 0}
    """

    name: ClassVar[str] = "blosc"
    kind: ClassVar[str] = BYTES_BYTES
    is_fixed_size: ClassVar[bool] = False

    # Which of typesize and shuffle were left to be chosen per array (zarr-python's
    # attribute, part of its repr and equality).
    _tunable_attrs: set[str] = field(init=False)
    typesize: int
    cname: str
    clevel: int
    shuffle: str
    blocksize: int

    def __init__(self, *, typesize: int | None = None, cname: str = "zstd", clevel: int = 5,
                 shuffle: str | None = None, blocksize: int = 0) -> None:
        tunable = set()
        if typesize is None:
            typesize = 1
            tunable.add("typesize")
        if shuffle is None:
            shuffle = "bitshuffle"
            tunable.add("shuffle")
        object.__setattr__(self, "_tunable_attrs", tunable)
        object.__setattr__(self, "typesize", _int(typesize, "blosc typesize", 1))
        object.__setattr__(self, "cname", _literal(cname, BLOSC_CNAMES, "cname", "BloscCodec"))
        object.__setattr__(self, "clevel", _int(clevel, "blosc clevel", 0, 9))
        object.__setattr__(self, "shuffle", _literal(shuffle, BLOSC_SHUFFLES, "shuffle",
                                                     "BloscCodec"))
        object.__setattr__(self, "blocksize", _int(blocksize, "blosc blocksize", 0))

    def to_dict(self) -> dict[str, Any]:
        """Every member, as zarr-python writes them."""
        return {"name": self.name, "configuration": {
            "typesize": self.typesize, "cname": self.cname, "clevel": self.clevel,
            "shuffle": self.shuffle, "blocksize": self.blocksize}}

    def to_json(self) -> dict[str, Any]:
        """Without the members left open: the array's codec fills them in from its item
        size.

        >>> BloscCodec().to_json()
        {'name': 'blosc', 'configuration': {'cname': 'zstd', 'clevel': 5, 'blocksize': 0}}
        """
        result = self.to_dict()
        for name in self._tunable_attrs:
            del result["configuration"][name]
        return result

    def for_dtype(self, dtype: np.dtype[Any]) -> BloscCodec:
        """The members left open chosen for ``dtype``.

        >>> BloscCodec().for_dtype(np.dtype("f8")).shuffle
        'shuffle'
        """
        item_size = 1 if dtype.kind == "O" else max(dtype.itemsize, 1)
        codec = self
        if "typesize" in self._tunable_attrs:
            codec = replace(codec, typesize=item_size)
        if "shuffle" in self._tunable_attrs:
            codec = replace(codec, shuffle="bitshuffle" if item_size == 1 else "shuffle")
        return codec


@dataclass(frozen=True)
class GzipCodec(PublicCodec):
    """``gzip`` (bytes -> bytes).

    >>> GzipCodec(level=10)
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: gzip level must be an integer in [0, 9], found 10
    """

    name: ClassVar[str] = "gzip"
    kind: ClassVar[str] = BYTES_BYTES
    is_fixed_size: ClassVar[bool] = False

    level: int = 5

    def __init__(self, *, level: int = 5) -> None:
        object.__setattr__(self, "level", _int(level, "gzip level", 0, 9))

    def to_dict(self) -> dict[str, Any]:
        """``{"name": "gzip", "configuration": {"level": ...}}``."""
        return {"name": self.name, "configuration": {"level": self.level}}


@dataclass(frozen=True)
class ZstdCodec(PublicCodec):
    """``zstd`` (bytes -> bytes).

    >>> ZstdCodec(level=3).to_dict()
    {'name': 'zstd', 'configuration': {'level': 3, 'checksum': False}}
    """

    name: ClassVar[str] = "zstd"
    kind: ClassVar[str] = BYTES_BYTES
    is_fixed_size: ClassVar[bool] = True

    level: int = 0
    checksum: bool = False

    def __init__(self, *, level: int = 0, checksum: bool = False) -> None:
        if not isinstance(checksum, bool):
            raise MetadataError(f"zstd checksum must be a boolean, found {checksum!r}")
        object.__setattr__(self, "level", _int(level, "zstd level", -131072, 22))
        object.__setattr__(self, "checksum", checksum)

    def to_dict(self) -> dict[str, Any]:
        """Both members."""
        return {"name": self.name, "configuration": {"level": self.level,
                                                      "checksum": self.checksum}}


@dataclass(frozen=True)
class Crc32cCodec(PublicCodec):
    """``crc32c`` (bytes -> bytes): a 4-byte checksum after the data.

    >>> Crc32cCodec() == Crc32cCodec()
    True
    """

    name: ClassVar[str] = "crc32c"
    kind: ClassVar[str] = BYTES_BYTES
    is_fixed_size: ClassVar[bool] = True


@dataclass(frozen=True)
class BytesCodec(PublicCodec):
    """``bytes`` (array -> bytes); ``endian`` None for data types without a byte order.

    >>> BytesCodec(endian="big").to_dict()
    {'name': 'bytes', 'configuration': {'endian': 'big'}}
    >>> BytesCodec(endian=None).to_dict()
    {'name': 'bytes'}
    """

    name: ClassVar[str] = "bytes"
    kind: ClassVar[str] = ARRAY_BYTES
    is_fixed_size: ClassVar[bool] = True

    endian: str | None = "little"

    def __init__(self, *, endian: str | None = "little") -> None:
        object.__setattr__(self, "endian", None if endian is None
                           else _literal(endian, ENDIANS, "endian", "BytesCodec"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BytesCodec:
        """The codec of its JSON form; no ``endian`` there is none here (zarr-python 3.3
        reads it so, and the round trip keeps it).

        >>> BytesCodec.from_dict({"name": "bytes"})
        BytesCodec(endian=None)
        """
        name, configuration, _ = parse_codec_entry(data)
        if name != cls.name:
            raise MetadataError(f"expected a codec named {cls.name!r}, found {name!r}")
        if set(configuration) - {"endian"}:
            raise MetadataError(f"codec 'bytes': unknown configuration member(s) "
                                f"{sorted(set(configuration) - {'endian'})}")
        return cls(endian=configuration.get("endian"))

    def to_dict(self) -> dict[str, Any]:
        """The byte order, when there is one."""
        if self.endian is None:
            return {"name": self.name}
        return {"name": self.name, "configuration": {"endian": self.endian}}

    def for_dtype(self, dtype: np.dtype[Any]) -> BytesCodec:
        """No byte order for single-byte data types."""
        if self.endian is not None and not has_endianness(dtype):
            return replace(self, endian=None)
        return self


@dataclass(frozen=True)
class TransposeCodec(PublicCodec):
    """``transpose`` (array -> array): permutes a chunk's axes.

    >>> TransposeCodec(order=[1, 0])
    TransposeCodec(order=(1, 0))
    """

    name: ClassVar[str] = "transpose"
    kind: ClassVar[str] = ARRAY_ARRAY
    is_fixed_size: ClassVar[bool] = False

    order: tuple[int, ...]

    def __init__(self, *, order: Iterable[int]) -> None:
        if isinstance(order, str | bytes) or not isinstance(order, Iterable):
            raise MetadataError(f"transpose order must be a sequence of axes, found {order!r}")
        axes = tuple(_int(i, "transpose order axis", 0) for i in order)
        if sorted(axes) != list(range(len(axes))):
            raise MetadataError(f"transpose order must be a permutation, found {axes}")
        object.__setattr__(self, "order", axes)

    def to_dict(self) -> dict[str, Any]:
        """The permutation."""
        return {"name": self.name, "configuration": {"order": self.order}}


@dataclass(frozen=True)
class ScaleOffset(PublicCodec):
    """``scale_offset`` (array -> array): stores ``(x - offset) * scale``. Numbers or their
    JSON text (a string keeps the exact spelling); the defaults are left out of the JSON.

    >>> ScaleOffset(offset=1.5, scale=10).to_dict()
    {'name': 'scale_offset', 'configuration': {'offset': 1.5, 'scale': 10}}
    >>> ScaleOffset().to_dict()
    {'name': 'scale_offset'}
    """

    name: ClassVar[str] = "scale_offset"
    kind: ClassVar[str] = ARRAY_ARRAY
    is_fixed_size: ClassVar[bool] = True

    offset: int | float | str = 0
    scale: int | float | str = 1

    def __init__(self, *, offset: int | float | str = 0, scale: int | float | str = 1) -> None:
        for what, value in (("offset", offset), ("scale", scale)):
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise MetadataError(f"scale_offset {what} must be a number or string, "
                                    f"found {value!r}")
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "scale", scale)

    def to_dict(self) -> dict[str, Any]:
        """The members that are not their defaults."""
        configuration = {k: v for k, v, default in (("offset", self.offset, 0),
                                                     ("scale", self.scale, 1)) if v != default}
        if not configuration:
            return {"name": self.name}
        return {"name": self.name, "configuration": configuration}


@dataclass(frozen=True)
class VLenUTF8Codec(PublicCodec):
    """``vlen-utf8`` (array -> bytes): variable-length strings.

    >>> VLenUTF8Codec().to_dict()
    {'name': 'vlen-utf8', 'configuration': {}}
    """

    name: ClassVar[str] = "vlen-utf8"
    kind: ClassVar[str] = ARRAY_BYTES
    is_fixed_size: ClassVar[bool] = False

    def to_dict(self) -> dict[str, Any]:
        """An empty configuration, as zarr-python writes it."""
        return {"name": self.name, "configuration": {}}


@dataclass(frozen=True)
class VLenBytesCodec(VLenUTF8Codec):
    """``vlen-bytes`` (array -> bytes): variable-length byte strings.

    >>> VLenBytesCodec()
    VLenBytesCodec()
    """

    name: ClassVar[str] = "vlen-bytes"


def _codec_tuple(codecs: Any, what: str) -> tuple[Any, ...]:
    if isinstance(codecs, PublicCodec | Mapping | str):
        codecs = [codecs]
    return tuple(c if isinstance(c, PublicCodec) else public_codec(c) for c in codecs)


@dataclass(frozen=True)
class ShardingCodec(PublicCodec):
    """``sharding_indexed`` (array -> bytes): inner chunks of ``chunk_shape`` in one shard.

    >>> ShardingCodec(chunk_shape=(2,), codecs=[{"name": "bytes"}]).codecs
    (BytesCodec(endian=None),)
    """

    name: ClassVar[str] = "sharding_indexed"
    kind: ClassVar[str] = ARRAY_BYTES
    is_fixed_size: ClassVar[bool] = False

    chunk_shape: tuple[int, ...]
    codecs: tuple[Any, ...]
    index_codecs: tuple[Any, ...]
    index_location: str
    # zarr-python's layout choice, kept only on the object: it is not in the metadata.
    subchunk_write_order: str = "morton"

    def __init__(self, *, chunk_shape: Iterable[int] | int,
                 codecs: Iterable[Any] = (BytesCodec(),),
                 index_codecs: Iterable[Any] = (BytesCodec(), Crc32cCodec()),
                 index_location: str = "end", subchunk_write_order: str = "morton") -> None:
        shape = (chunk_shape,) if isinstance(chunk_shape, int) else chunk_shape
        object.__setattr__(self, "chunk_shape",
                           tuple(_int(n, "sharding chunk_shape", 1) for n in shape))
        object.__setattr__(self, "codecs", _codec_tuple(codecs, "codecs"))
        object.__setattr__(self, "index_codecs", _codec_tuple(index_codecs, "index_codecs"))
        object.__setattr__(self, "index_location", _literal(
            index_location, INDEX_LOCATIONS, "index_location", "ShardingCodec"))
        if subchunk_write_order not in SUBCHUNK_WRITE_ORDERS:
            raise MetadataError(f"Unrecognized subchunk write order: {subchunk_write_order}. "
                                f"Only {SUBCHUNK_WRITE_ORDERS} are allowed.")
        object.__setattr__(self, "subchunk_write_order", subchunk_write_order)

    def to_dict(self) -> dict[str, Any]:
        """The configuration with the inner codecs' JSON forms."""
        return {"name": self.name, "configuration": {
            "chunk_shape": self.chunk_shape,
            "codecs": tuple(_to_dict(c) for c in self.codecs),
            "index_codecs": tuple(_to_dict(c) for c in self.index_codecs),
            "index_location": self.index_location}}

    def to_json(self) -> dict[str, Any]:
        """The inner codecs' JSON as they are written."""
        result = jsonable(self.to_dict())
        result["configuration"]["codecs"] = [_to_json(c) for c in self.codecs]
        result["configuration"]["index_codecs"] = [_to_json(c) for c in self.index_codecs]
        return result  # type: ignore[no-any-return]

    def for_dtype(self, dtype: np.dtype[Any]) -> ShardingCodec:
        """The inner codecs settled for ``dtype`` (the index codecs stay as they are)."""
        codecs = tuple(c.for_dtype(dtype) if isinstance(c, PublicCodec) else c
                       for c in self.codecs)
        return self if codecs == self.codecs else replace(self, codecs=codecs)


def _to_dict(codec: Any) -> dict[str, Any]:
    return codec.to_dict() if isinstance(codec, PublicCodec) else codec.to_json()


def _to_json(codec: Any) -> dict[str, Any]:
    return jsonable(codec.to_json())  # type: ignore[no-any-return]


_BY_NAME: dict[str, type[PublicCodec]] = {
    cls.name: cls for cls in (BloscCodec, GzipCodec, ZstdCodec, Crc32cCodec, BytesCodec,
                              TransposeCodec, ScaleOffset, VLenUTF8Codec, VLenBytesCodec,
                              ShardingCodec)
}


def public_codec(entry: Any) -> PublicCodec:
    """The public codec object of a v3 codec's JSON form (or bare name).

    ``numcodecs.<id>`` names give the classes of :mod:`zarrkit.codecs.numcodecs`.

    >>> public_codec({"name": "zstd", "configuration": {"level": 3, "checksum": False}})
    ZstdCodec(level=3, checksum=False)
    >>> public_codec("no-such-codec")
    Traceback (most recent call last):
    zarrkit.errors.UnknownCodecError: codec 'no-such-codec' has no public codec class
    """
    name, _, _ = parse_codec_entry(entry)
    if isinstance(entry, str):
        entry = {"name": entry}
    cls = _BY_NAME.get(name)
    if cls is None and name.startswith("numcodecs."):
        from zarrkit.codecs.numcodecs import numcodecs_class

        cls = numcodecs_class(name)
    if cls is None:
        raise UnknownCodecError(f"codec {name!r} has no public codec class")
    return cls.from_dict(entry)


def public_form(codec: Any) -> Any:
    """The public codec object of a spec-bound v3 codec (what ``Array.compressors`` and
    friends return), settled for its data type as zarr-python settles it; a codec with no
    public class (a zarrkit or user-registered extension) is returned as it is.

    >>> from zarrkit.codecs.v3 import ChunkSpec, CodecPipelineV3
    >>> pipeline = CodecPipelineV3.from_json(["bytes"], ChunkSpec((2,), np.dtype("u1")))
    >>> public_form(pipeline.array_bytes)
    BytesCodec(endian=None)
    """
    try:
        public = public_codec(codec.to_json())
    except UnknownCodecError:
        return codec
    return public.for_dtype(codec.spec.dtype)


def array_codecs(pipeline: Any) -> tuple[tuple[Any, ...], Any, tuple[Any, ...]]:
    """``(filters, serializer, compressors)`` of a v3 array's codec pipeline in public
    form; an array whose only codec is ``sharding_indexed`` reports the inner chunks'
    codecs, as zarr-python does.

    >>> from zarrkit.codecs.v3 import ChunkSpec, CodecPipelineV3
    >>> pipeline = CodecPipelineV3.from_json(["bytes", "crc32c"],
    ...     ChunkSpec((2,), np.dtype("u1")))
    >>> array_codecs(pipeline)
    ((), BytesCodec(endian=None), (Crc32cCodec(),))
    """
    if pipeline.sharding is not None and not pipeline.array_array and not pipeline.bytes_bytes:
        pipeline = pipeline.sharding.inner_pipeline
    return (tuple(public_form(c) for c in pipeline.array_array),
            public_form(pipeline.array_bytes),
            tuple(public_form(c) for c in pipeline.bytes_bytes))
