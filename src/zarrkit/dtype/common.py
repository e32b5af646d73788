"""The JSON shapes, type guards and mix-ins that zarr-python's ``zarr.core.dtype.common``
defines, for :mod:`zarrkit.dtype`.

A Zarr v2 data type is packed with the id of its object codec (``"|O"`` alone does not say
whether the objects are strings or bytes), so its JSON form here is
``{"name": ..., "object_codec_id": ...}``:

>>> check_dtype_spec_v2({"name": "<i4", "object_codec_id": None})
True
>>> check_dtype_spec_v2("<i4")
False
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal, TypedDict, TypeGuard

EndiannessStr = Literal["little", "big"]
ENDIANNESS_STR: Final = ("little", "big")

DateTimeUnit = Literal[
    "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic"
]
DATETIME_UNIT: Final = (
    "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic",
)

ObjectCodecID = Literal["vlen-utf8", "vlen-bytes", "vlen-array", "pickle", "json2", "msgpack2"]
OBJECT_CODEC_IDS: Final = ("vlen-utf8", "vlen-bytes", "vlen-array", "pickle", "json2",
                           "msgpack2")

DTypeJSON = str | int | float | Sequence[Any] | None | Mapping[str, object]
"""What ``from_json`` takes: any JSON value (each class checks its own shape)."""

StructuredName_V2 = Sequence[Any]
DTypeName_V2 = StructuredName_V2 | str


class DTypeConfig_V2(TypedDict):  # noqa: N801 - zarr-python's name
    """A Zarr v2 data type with the id of its object codec (None for all but ``"|O"``)."""

    name: Any
    object_codec_id: str | None


DTypeSpec_V2 = DTypeConfig_V2
DTypeSpec_V3 = str | Mapping[str, object]


class LengthBytesConfig(TypedDict):
    """The configuration of the data types of a fixed byte length."""

    length_bytes: int


class TimeConfig(TypedDict):
    """The configuration of ``numpy.datetime64`` and ``numpy.timedelta64``."""

    unit: DateTimeUnit
    scale_factor: int


# The JSON forms zarr-python names, one per data type and format.
class DateTime64JSON_V2(DTypeConfig_V2):  # noqa: N801
    """``{"name": "<M8[10s]", "object_codec_id": None}``."""


class TimeDelta64JSON_V2(DTypeConfig_V2):  # noqa: N801
    """``{"name": "<m8[ms]", "object_codec_id": None}``."""


class FixedLengthUTF32JSON_V2(DTypeConfig_V2):  # noqa: N801
    """``{"name": "<U4", "object_codec_id": None}``."""


class NullterminatedBytesJSON_V2(DTypeConfig_V2):  # noqa: N801
    """``{"name": "|S5", "object_codec_id": None}``."""


class RawBytesJSON_V2(DTypeConfig_V2):  # noqa: N801
    """``{"name": "|V5", "object_codec_id": None}``."""


class StructuredJSON_V2(DTypeConfig_V2):  # noqa: N801
    """``{"name": [["a", "<i4"], ...], "object_codec_id": None}``."""


class VariableLengthBytesJSON_V2(DTypeConfig_V2):  # noqa: N801
    """``{"name": "|O", "object_codec_id": "vlen-bytes"}``."""


class VariableLengthUTF8JSON_V2(DTypeConfig_V2):  # noqa: N801
    """``{"name": "|O", "object_codec_id": "vlen-utf8"}``."""


class DateTime64JSON_V3(TypedDict):  # noqa: N801
    """``{"name": "numpy.datetime64", "configuration": {"unit", "scale_factor"}}``."""

    name: Literal["numpy.datetime64"]
    configuration: TimeConfig


class TimeDelta64JSON_V3(TypedDict):  # noqa: N801
    """``{"name": "numpy.timedelta64", "configuration": {"unit", "scale_factor"}}``."""

    name: Literal["numpy.timedelta64"]
    configuration: TimeConfig


class FixedLengthUTF32JSON_V3(TypedDict):  # noqa: N801
    """``{"name": "fixed_length_utf32", "configuration": {"length_bytes": ...}}``."""

    name: Literal["fixed_length_utf32"]
    configuration: LengthBytesConfig


class NullTerminatedBytesJSON_V3(TypedDict):  # noqa: N801
    """``{"name": "null_terminated_bytes", "configuration": {"length_bytes": ...}}``."""

    name: Literal["null_terminated_bytes"]
    configuration: LengthBytesConfig


class RawBytesJSON_V3(TypedDict):  # noqa: N801
    """``{"name": "raw_bytes", "configuration": {"length_bytes": ...}}``."""

    name: Literal["raw_bytes"]
    configuration: LengthBytesConfig


class StructJSON_V3(TypedDict):  # noqa: N801
    """``{"name": "struct", "configuration": {"fields": [{"name", "data_type"}, ...]}}``."""

    name: Literal["struct"]
    configuration: dict[str, Any]


class StructuredJSON_V3(TypedDict):  # noqa: N801
    """The legacy ``{"name": "structured", "configuration": {"fields": [[name, type]]}}``."""

    name: Literal["structured"]
    configuration: dict[str, Any]


def check_structured_dtype_v2_inner(data: object) -> bool:
    """Whether ``data`` is one ``[name, type]`` field of a v2 structured data type, where
    ``type`` is a typestr or itself a list of fields.

    >>> check_structured_dtype_v2_inner(["a", "<i4"]), check_structured_dtype_v2_inner("a")
    (True, False)
    """
    if isinstance(data, (str, Mapping)) or not isinstance(data, Sequence) or len(data) != 2:
        return False
    if not isinstance(data[0], str):
        return False
    if isinstance(data[-1], str):
        return True
    if isinstance(data[-1], Sequence) and not isinstance(data[-1], Mapping):
        return check_structured_dtype_name_v2(data[-1])
    return False


def check_structured_dtype_name_v2(data: Sequence[object]) -> bool:
    """Whether every item of ``data`` is a v2 structured field.

    >>> check_structured_dtype_name_v2([["a", "<i4"], ["b", [["c", "|u1"]]]])
    True
    """
    return all(check_structured_dtype_v2_inner(d) for d in data)


def check_dtype_name_v2(data: object) -> TypeGuard[DTypeName_V2]:
    """Whether ``data`` is a v2 data type name: a typestr or a list of fields.

    >>> check_dtype_name_v2("<f8"), check_dtype_name_v2(3)
    (True, False)
    """
    if isinstance(data, str):
        return True
    if isinstance(data, Sequence) and not isinstance(data, Mapping):
        return check_structured_dtype_name_v2(data)
    return False


def check_dtype_spec_v2(data: object) -> TypeGuard[DTypeSpec_V2]:
    """Whether ``data`` is ``{"name": <v2 name>, "object_codec_id": <str or None>}``.

    >>> check_dtype_spec_v2({"name": "|O", "object_codec_id": "vlen-utf8"})
    True
    """
    if not isinstance(data, Mapping) or set(data.keys()) != {"name", "object_codec_id"}:
        return False
    if not check_dtype_name_v2(data["name"]):
        return False
    return isinstance(data["object_codec_id"], (str, type(None)))


def check_dtype_spec_no_object_codec_v2(data: object) -> TypeGuard[DTypeSpec_V2]:
    """:func:`check_dtype_spec_v2` for the data types without an object codec.

    >>> check_dtype_spec_no_object_codec_v2({"name": "|O", "object_codec_id": "vlen-utf8"})
    False
    """
    return check_dtype_spec_v2(data) and data["object_codec_id"] is None  # type: ignore[index]


def check_dtype_spec_v3(data: object) -> TypeGuard[DTypeSpec_V3]:
    """Whether ``data`` is a v3 data type: a name, or ``{"name", "configuration"}``.

    >>> check_dtype_spec_v3({"name": "struct", "configuration": {"fields": []}})
    True
    """
    return isinstance(data, str) or (
        isinstance(data, Mapping)
        and set(data.keys()) == {"name", "configuration"}
        and isinstance(data["configuration"], Mapping)
        and all(isinstance(k, str) for k in data["configuration"])
    )


def unpack_dtype_json(data: Any) -> Any:
    """The data type as array metadata holds it: the v2 name out of its
    ``{"name", "object_codec_id"}`` pair, the v3 form as it is.

    >>> unpack_dtype_json({"name": "<i2", "object_codec_id": None})
    '<i2'
    """
    if isinstance(data, Mapping) and set(data.keys()) == {"name", "object_codec_id"}:
        return data["name"]
    return data


@dataclass(frozen=True, kw_only=True)
class HasLength:
    """A data type of a fixed number of elements (characters or bytes) per scalar.

    >>> from zarrkit.dtype import NullTerminatedBytes
    >>> NullTerminatedBytes(length=4).length
    4
    """

    length: int


@dataclass(frozen=True, kw_only=True)
class HasEndianness:
    """A data type with a byte order: the in-memory one of ``to_native_dtype()``. Stored
    chunks have the ``bytes`` codec's (v3) or the v2 dtype's byte order; v3 data type
    JSON has none, so a data type read from it has the host's.

    >>> from zarrkit.dtype import Int16
    >>> Int16(endianness="big").to_native_dtype().str
    '>i2'
    """

    endianness: EndiannessStr = sys.byteorder  # type: ignore[assignment]


@dataclass(frozen=True, kw_only=True)
class HasItemSize:
    """A data type whose scalars have a fixed size in bytes (``item_size``).

    >>> from zarrkit.dtype import Float32
    >>> Float32().item_size
    4
    """

    @property
    def item_size(self) -> int:
        """Bytes per scalar."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class HasObjectCodec:
    """A data type that numpy holds as objects, which Zarr v2 stores with an object codec
    (``object_codec_id``) that is part of the data type's identity.

    >>> from zarrkit.dtype import VariableLengthBytes
    >>> VariableLengthBytes.object_codec_id
    'vlen-bytes'
    """

    object_codec_id: ClassVar[str]
