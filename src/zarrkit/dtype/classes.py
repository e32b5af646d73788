"""zarr-python 3's data type classes (``Int8``, ``Float32``, ``DateTime64``, ``Struct``...)
over zarrkit's metadata layer.

Each class holds what zarr-python's does (an endianness, a length, a time unit...) and
turns it into a numpy dtype; everything about JSON comes from zarrkit's metadata modules,
which read and write array metadata: the v3 ``data_type`` from
:func:`~zarrkit.metadata.dtypes_v3.data_type_v3_from_numpy`, the v2 ``dtype`` from
:func:`~zarrkit.metadata.dtypes.dtype_to_json_v2`, scalars from
:mod:`zarrkit.metadata.fill_value`. A scalar is therefore written exactly as zarrkit
writes that fill value in a document.

>>> DateTime64(unit="s", scale_factor=10).to_json(zarr_format=3)
{'name': 'numpy.datetime64', 'configuration': {'unit': 's', 'scale_factor': 10}}
>>> Float32().to_json_scalar(float("-inf"), zarr_format=3)
'-Infinity'
"""

from __future__ import annotations

import copy
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np

from zarrkit.dtype.common import (
    DATETIME_UNIT,
    DateTimeUnit,
    EndiannessStr,
    HasEndianness,
    HasItemSize,
    HasLength,
    HasObjectCodec,
    check_dtype_spec_v2,
)
from zarrkit.dtype.registry import data_type_registry
from zarrkit.dtype.wrapper import ZDType
from zarrkit.errors import (
    DataTypeMismatchError,
    MetadataError,
    UnstableSpecificationWarning,
    UnsupportedDataTypeError,
    ZarrUserWarning,
)
from zarrkit.metadata.dtypes import dtype_to_json_v2, parse_dtype_v2
from zarrkit.metadata.dtypes_v3 import DataTypeV3, data_type_v3_from_numpy, parse_data_type_v3
from zarrkit.metadata.fill_value import (
    decode_fill_value,
    decode_fill_value_v3,
    default_fill_value_v3,
    encode_fill_value,
    encode_fill_value_v3,
    normalize_fill_value,
)

_Self = TypeVar("_Self", bound="_MetadataBacked")

_NUMPY_ORDER: dict[str, Literal["<", ">"]] = {"little": "<", "big": ">"}


def endianness_from_numpy_dtype(dtype: np.dtype[Any]) -> EndiannessStr:
    """The byte order of ``dtype`` as ``"little"`` or ``"big"`` (``"="`` is the host's).

    >>> endianness_from_numpy_dtype(np.dtype(">i4"))
    'big'
    """
    order = dtype.byteorder
    if order == "=":
        return sys.byteorder  # type: ignore[return-value]
    if order == "<":
        return "little"
    if order == ">":
        return "big"
    raise ValueError(f"The dtype {dtype} has an unsupported endianness: {order}")


def _numpy_order(endianness: str) -> Literal["<", ">"]:
    try:
        return _NUMPY_ORDER[endianness]
    except KeyError:
        raise ValueError(f"Invalid endianness: {endianness!r}. Expected one of "
                         "('little', 'big')") from None


def _not_this_json(cls: type[Any], data: Any, expected: str) -> DataTypeMismatchError:
    return DataTypeMismatchError(
        f"Invalid JSON representation of {cls.__name__}. Got {data!r}, expected {expected}"
    )


def _json_name(data: Any) -> Any:
    if isinstance(data, str):
        return data
    if isinstance(data, Mapping):
        return data.get("name")
    return None


@dataclass(frozen=True, kw_only=True)
class _MetadataBacked(ZDType[Any, Any]):
    """The methods of every class here, from zarrkit's metadata layer."""

    # The id of the v2 object codec ("|O" types only).
    _object_codec: ClassVar[str | None] = None
    # v3 names read as this class besides _zarr_v3_name (aliases).
    _v3_aliases: ClassVar[tuple[str, ...]] = ()
    # from_native_dtype takes exactly the dtypes _check_native_dtype accepts (the registry
    # asks that first).
    _matches_by_check: ClassVar[bool] = True

    # --- native dtype ---------------------------------------------------------------

    @classmethod
    def from_native_dtype(cls: type[_Self], dtype: Any) -> _Self:
        """This data type from a numpy dtype.

        >>> Int16.from_native_dtype(np.dtype("<i2"))
        Int16(endianness='little')
        """
        if isinstance(dtype, np.dtype) and cls._check_native_dtype(dtype):
            return cls._from_checked_dtype(dtype)
        raise DataTypeMismatchError(
            f"Invalid data type: {dtype}. Expected an instance of {cls.dtype_cls}"
        )

    @classmethod
    def _from_checked_dtype(cls: type[_Self], dtype: np.dtype[Any]) -> _Self:
        if issubclass(cls, HasEndianness):
            return cls(endianness=endianness_from_numpy_dtype(dtype))
        return cls()

    def _data_type(self) -> DataTypeV3:
        """This data type in zarrkit's v3 model (native byte order)."""
        return data_type_v3_from_numpy(self.to_native_dtype())

    def _v2_dtype(self) -> np.dtype[Any]:
        """The numpy dtype of this type in zarrkit's v2 model (objects for text)."""
        return self.to_native_dtype()  # type: ignore[no-any-return]

    # --- data type JSON -------------------------------------------------------------

    @classmethod
    def _from_json_v2(cls: type[_Self], data: Any) -> _Self:
        if not check_dtype_spec_v2(data) or (data["name"] == "|O") != (
            cls._object_codec is not None
        ) or data["object_codec_id"] != cls._object_codec:
            raise _not_this_json(cls, data, cls._expected_v2())
        if cls._object_codec is not None:
            return cls()
        try:
            native = parse_dtype_v2(data["name"])
        except UnsupportedDataTypeError as e:
            raise _not_this_json(cls, data, f"{cls._expected_v2()} ({e})") from e
        return cls.from_native_dtype(native)

    @classmethod
    def _expected_v2(cls) -> str:
        if cls._object_codec is not None:
            return f"the string '|O' and an object_codec_id of {cls._object_codec}"
        return f"a v2 dtype of {cls.dtype_cls.__name__}"

    @classmethod
    def _from_json_v3(cls: type[_Self], data: Any) -> _Self:
        name = _json_name(data)
        if name != cls._zarr_v3_name and name not in cls._v3_aliases:
            raise _not_this_json(cls, data, f"the string {cls._zarr_v3_name!r}")
        return cls._from_data_type(parse_data_type_v3(
            dict(data) if isinstance(data, Mapping) else data))

    @classmethod
    def _from_data_type(cls: type[_Self], data_type: DataTypeV3) -> _Self:
        return cls.from_native_dtype(data_type.numpy)

    def to_json(self, zarr_format: int) -> Any:
        """The JSON form in ``zarr_format`` (``{"name", "object_codec_id"}`` for 2).

        >>> Int8().to_json(zarr_format=2)
        {'name': '|i1', 'object_codec_id': None}
        >>> Int8().to_json(zarr_format=3)
        'int8'
        """
        if zarr_format == 2:
            return {"name": self._name_v2(), "object_codec_id": self._object_codec}
        if zarr_format == 3:
            # The data type's JSON may be shared by cached DataTypeV3 objects.
            return copy.deepcopy(self._data_type().json)
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format}")

    def _name_v2(self) -> Any:
        return dtype_to_json_v2(self.to_native_dtype())

    # --- scalars --------------------------------------------------------------------

    def _check_scalar(self, data: object) -> bool:
        try:
            self.cast_scalar(data)
        except (MetadataError, TypeError, ValueError):
            return False
        return True

    def cast_scalar(self, data: object) -> Any:
        """``data`` as a scalar of this type, refused (``MetadataError``) where it would
        change: out of range, a fraction for an integer, too long...

        >>> UInt8().cast_scalar(7)
        np.uint8(7)
        """
        return normalize_fill_value(data, self.to_native_dtype())

    def default_scalar(self) -> Any:
        """The fill value of an array created without one: zero, empty, or NaT for times.

        >>> Float64().default_scalar()
        np.float64(0.0)
        """
        return default_fill_value_v3(self._data_type())

    def _lenient_json_scalar(self, data: Any) -> Any:
        """``data`` with the spellings zarr-python also reads turned into the one zarrkit's
        decoders take (integers as text, for instance)."""
        return data

    def from_json_scalar(self, data: Any, *, zarr_format: int) -> Any:
        """A scalar from its JSON form (a fill value) in ``zarr_format``.

        >>> Int8().from_json_scalar(42, zarr_format=3)
        np.int8(42)
        """
        data = self._lenient_json_scalar(_as_json(data))
        if zarr_format == 3:
            return decode_fill_value_v3(data, self._data_type())
        if zarr_format == 2:
            if data is None:
                raise MetadataError(f"null is not a scalar of {self}")
            return decode_fill_value(data, self._v2_dtype(), object_codec=self._object_codec)
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format}")

    def to_json_scalar(self, data: object, *, zarr_format: int) -> Any:
        """The JSON form of ``data`` as a fill value in ``zarr_format``, as zarrkit writes it.

        >>> Int8().to_json_scalar(42, zarr_format=3)
        42
        """
        if zarr_format == 3:
            return encode_fill_value_v3(self.cast_scalar(data), self._data_type())
        if zarr_format == 2:
            return encode_fill_value(self.cast_scalar(data), self._v2_dtype())
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format}")


def _as_json(data: Any) -> Any:
    """``data`` with tuples as lists: zarr-python's scalars hold complex pairs as tuples,
    which are JSON arrays as much as lists are (zarrkit's decoders take lists)."""
    if isinstance(data, (tuple, list)):
        return [_as_json(item) for item in data]
    if isinstance(data, dict):
        return {key: _as_json(value) for key, value in data.items()}
    return data


def _unstable_v3(dtype: object) -> None:
    warnings.warn(
        f"The data type ({dtype}) does not have a Zarr V3 specification. That means that the "
        "representation of arrays saved with this data type may change without warning in a "
        "future version of Zarr Python. Arrays stored with this data type may be unreadable "
        "by other Zarr libraries. Use this data type at your own risk! Check "
        "https://github.com/zarr-developers/zarr-extensions/tree/main/data-types for the "
        "status of data type specifications for Zarr V3.",
        UnstableSpecificationWarning, stacklevel=3,
    )


# --- fixed-size numbers -----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Fixed(_MetadataBacked, HasItemSize):
    """A number type: numpy's kind and size say which."""

    _code: ClassVar[str]  # the numpy code, as "i2"

    @classmethod
    def _check_native_dtype(cls, dtype: Any) -> bool:
        # By kind and size, not the dtype class: "l" and "q" are both int64 on Linux.
        return (dtype.kind == cls._code[0] and dtype.itemsize == int(cls._code[1:])
                and type(dtype).__module__.startswith("numpy"))

    def to_native_dtype(self) -> Any:
        """The numpy dtype, in this type's byte order.

        >>> Int32(endianness="big").to_native_dtype()
        dtype('>i4')
        """
        dtype = np.dtype(self._code)
        if isinstance(self, HasEndianness):
            return dtype.newbyteorder(_numpy_order(self.endianness))
        return dtype

    @property
    def item_size(self) -> int:
        """Bytes per scalar.

        >>> Complex128().item_size
        16
        """
        return int(self._code[1:])


@dataclass(frozen=True, kw_only=True)
class Bool(_Fixed):
    """numpy's ``bool``; v2 ``|b1``, v3 ``bool``.

    >>> Bool().to_json_scalar(True, zarr_format=3)
    True
    """

    dtype_cls = np.dtypes.BoolDType
    _zarr_v3_name: ClassVar[str] = "bool"
    _zarr_v2_name: ClassVar[str] = "|b1"
    _code: ClassVar[str] = "b1"


@dataclass(frozen=True, kw_only=True)
class BaseInt(_Fixed):
    """The integer types.

    >>> Int64().from_json_scalar("12", zarr_format=2)
    np.int64(12)
    """

    _zarr_v2_names: ClassVar[tuple[str, ...]]

    def _lenient_json_scalar(self, data: Any) -> Any:
        # zarr-python reads integers written as text too.
        if isinstance(data, str):
            try:
                return int(data)
            except ValueError:
                pass
        return data


@dataclass(frozen=True, kw_only=True)
class Int8(BaseInt):
    """``int8``.

    >>> Int8().to_native_dtype()
    dtype('int8')
    """

    dtype_cls = np.dtypes.Int8DType
    _zarr_v3_name: ClassVar[str] = "int8"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = ("|i1",)
    _code: ClassVar[str] = "i1"


@dataclass(frozen=True, kw_only=True)
class UInt8(BaseInt):
    """``uint8``.

    >>> UInt8().to_json(zarr_format=2)
    {'name': '|u1', 'object_codec_id': None}
    """

    dtype_cls = np.dtypes.UInt8DType
    _zarr_v3_name: ClassVar[str] = "uint8"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = ("|u1",)
    _code: ClassVar[str] = "u1"


@dataclass(frozen=True, kw_only=True)
class Int16(BaseInt, HasEndianness):
    """``int16``.

    >>> Int16(endianness="big").to_json(zarr_format=2)
    {'name': '>i2', 'object_codec_id': None}
    """

    dtype_cls = np.dtypes.Int16DType
    _zarr_v3_name: ClassVar[str] = "int16"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">i2", "<i2")
    _code: ClassVar[str] = "i2"


@dataclass(frozen=True, kw_only=True)
class UInt16(BaseInt, HasEndianness):
    """``uint16``.

    >>> UInt16().to_json(zarr_format=3)
    'uint16'
    """

    dtype_cls = np.dtypes.UInt16DType
    _zarr_v3_name: ClassVar[str] = "uint16"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">u2", "<u2")
    _code: ClassVar[str] = "u2"


@dataclass(frozen=True, kw_only=True)
class Int32(BaseInt, HasEndianness):
    """``int32``.

    >>> Int32().item_size
    4
    """

    dtype_cls = np.dtypes.Int32DType
    _zarr_v3_name: ClassVar[str] = "int32"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">i4", "<i4")
    _code: ClassVar[str] = "i4"


@dataclass(frozen=True, kw_only=True)
class UInt32(BaseInt, HasEndianness):
    """``uint32``.

    >>> UInt32().default_scalar()
    np.uint32(0)
    """

    dtype_cls = np.dtypes.UInt32DType
    _zarr_v3_name: ClassVar[str] = "uint32"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">u4", "<u4")
    _code: ClassVar[str] = "u4"


@dataclass(frozen=True, kw_only=True)
class Int64(BaseInt, HasEndianness):
    """``int64``.

    >>> Int64().to_json_scalar(-5, zarr_format=2)
    -5
    """

    dtype_cls = np.dtypes.Int64DType
    _zarr_v3_name: ClassVar[str] = "int64"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">i8", "<i8")
    _code: ClassVar[str] = "i8"


@dataclass(frozen=True, kw_only=True)
class UInt64(BaseInt, HasEndianness):
    """``uint64``.

    >>> UInt64().from_json_scalar(2**64 - 1, zarr_format=3)
    np.uint64(18446744073709551615)
    """

    dtype_cls = np.dtypes.UInt64DType
    _zarr_v3_name: ClassVar[str] = "uint64"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">u8", "<u8")
    _code: ClassVar[str] = "u8"


@dataclass(frozen=True, kw_only=True)
class BaseFloat(_Fixed, HasEndianness):
    """The IEEE float types: NaN and the infinities are ``"NaN"``, ``"Infinity"``,
    ``"-Infinity"``; Zarr v3 also reads ``"0x..."`` bit patterns, and zarrkit writes one for
    a NaN other than numpy's (so its payload survives).

    >>> Float16().from_json_scalar("0x7c00", zarr_format=3)
    np.float16(inf)
    """

    _zarr_v2_names: ClassVar[tuple[str, ...]]

    def _lenient_json_scalar(self, data: Any) -> Any:
        # zarr-python reads numbers written as text ("1.5") too.
        if isinstance(data, str) and data not in ("NaN", "Infinity", "-Infinity") and (
            not data.startswith(("0x", "0X"))
        ):
            try:
                return float(data)
            except ValueError:
                pass
        return data


@dataclass(frozen=True, kw_only=True)
class Float16(BaseFloat):
    """``float16``.

    >>> Float16().to_json_scalar(0.5, zarr_format=3)
    0.5
    """

    dtype_cls = np.dtypes.Float16DType
    _zarr_v3_name: ClassVar[str] = "float16"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">f2", "<f2")
    _code: ClassVar[str] = "f2"


@dataclass(frozen=True, kw_only=True)
class Float32(BaseFloat):
    """``float32``.

    >>> Float32().from_json_scalar("NaN", zarr_format=2)
    np.float32(nan)
    """

    dtype_cls = np.dtypes.Float32DType
    _zarr_v3_name: ClassVar[str] = "float32"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">f4", "<f4")
    _code: ClassVar[str] = "f4"


@dataclass(frozen=True, kw_only=True)
class Float64(BaseFloat):
    """``float64``.

    >>> Float64().to_json_scalar(float("inf"), zarr_format=2)
    'Infinity'
    """

    dtype_cls = np.dtypes.Float64DType
    _zarr_v3_name: ClassVar[str] = "float64"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">f8", "<f8")
    _code: ClassVar[str] = "f8"


@dataclass(frozen=True, kw_only=True)
class BaseComplex(_Fixed, HasEndianness):
    """The complex types: scalars are ``(real, imag)`` pairs of JSON floats.

    >>> Complex64().to_json_scalar(complex(1, float("nan")), zarr_format=3)
    (1.0, 'NaN')
    """

    _zarr_v2_names: ClassVar[tuple[str, ...]]

    def to_json_scalar(self, data: object, *, zarr_format: int) -> Any:
        """The ``(real, imag)`` pair of ``data`` (a tuple, as zarr-python returns it).

        >>> Complex128().to_json_scalar(2j, zarr_format=2)
        (0.0, 2.0)
        """
        return tuple(super().to_json_scalar(data, zarr_format=zarr_format))


@dataclass(frozen=True, kw_only=True)
class Complex64(BaseComplex):
    """``complex64``.

    >>> Complex64().default_scalar()
    np.complex64(0j)
    """

    dtype_cls = np.dtypes.Complex64DType
    _zarr_v3_name: ClassVar[str] = "complex64"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">c8", "<c8")
    _code: ClassVar[str] = "c8"


@dataclass(frozen=True, kw_only=True)
class Complex128(BaseComplex):
    """``complex128``.

    >>> Complex128().to_json(zarr_format=3)
    'complex128'
    """

    dtype_cls = np.dtypes.Complex128DType
    _zarr_v3_name: ClassVar[str] = "complex128"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">c16", "<c16")
    _code: ClassVar[str] = "c16"


# --- text and bytes ---------------------------------------------------------------------


def _check_length(length: int) -> None:
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ValueError(f"length must be >= 1, got {length}.")


@dataclass(frozen=True, kw_only=True)
class FixedLengthUTF32(_MetadataBacked, HasEndianness, HasLength, HasItemSize):
    """numpy's ``U<length>``: ``length`` code points of UTF-32.

    >>> FixedLengthUTF32(length=3).to_json(zarr_format=3)
    {'name': 'fixed_length_utf32', 'configuration': {'length_bytes': 12}}
    """

    dtype_cls = np.dtypes.StrDType
    _zarr_v3_name: ClassVar[str] = "fixed_length_utf32"
    code_point_bytes: ClassVar[int] = 4

    def __post_init__(self) -> None:
        _check_length(self.length)

    @classmethod
    def _from_checked_dtype(cls, dtype: np.dtype[Any]) -> FixedLengthUTF32:
        return cls(length=dtype.itemsize // cls.code_point_bytes,
                   endianness=endianness_from_numpy_dtype(dtype))

    def to_native_dtype(self) -> Any:
        """``U<length>`` in this type's byte order.

        >>> FixedLengthUTF32(length=2, endianness="big").to_native_dtype()
        dtype('>U2')
        """
        return np.dtype(f"U{self.length}").newbyteorder(_numpy_order(self.endianness))

    @property
    def item_size(self) -> int:
        """Bytes per scalar: four per code point.

        >>> FixedLengthUTF32(length=3).item_size
        12
        """
        return self.length * self.code_point_bytes


@dataclass(frozen=True, kw_only=True)
class VariableLengthUTF8(_MetadataBacked, HasObjectCodec):
    """Text of any length: v3 ``string``, v2 ``|O`` with the ``vlen-utf8`` codec; numpy's
    ``StringDType``.

    >>> VariableLengthUTF8().to_json(zarr_format=2)
    {'name': '|O', 'object_codec_id': 'vlen-utf8'}
    """

    dtype_cls = np.dtypes.StringDType
    _zarr_v3_name: ClassVar[str] = "string"
    object_codec_id: ClassVar[str] = "vlen-utf8"
    _object_codec: ClassVar[str | None] = "vlen-utf8"

    @classmethod
    def _from_checked_dtype(cls, dtype: np.dtype[Any]) -> VariableLengthUTF8:
        if hasattr(dtype, "na_object"):
            raise ValueError(
                f"Zarr data type resolution from {dtype} failed. Attempted to resolve a zarr "
                "data type from a `numpy.dtypes.StringDType` with `na_object` set, which is "
                "not supported.")
        return cls()

    @classmethod
    def _from_data_type(cls, data_type: DataTypeV3) -> VariableLengthUTF8:
        return cls()

    def to_native_dtype(self) -> Any:
        """numpy's ``StringDType()``.

        >>> VariableLengthUTF8().to_native_dtype()
        StringDType()
        """
        return np.dtypes.StringDType()

    def _data_type(self) -> DataTypeV3:
        return parse_data_type_v3(self._zarr_v3_name)

    def _v2_dtype(self) -> np.dtype[Any]:
        return np.dtype("O")

    def _name_v2(self) -> Any:
        return "|O"

    def cast_scalar(self, data: object) -> str:
        """``str(data)``.

        >>> VariableLengthUTF8().cast_scalar(12)
        '12'
        """
        return str(data)

    def _lenient_json_scalar(self, data: Any) -> Any:
        # A number is read as its text, in both formats (zarr-python's rule).
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return str(data)
        return data


@dataclass(frozen=True, kw_only=True)
class NullTerminatedBytes(_MetadataBacked, HasLength, HasItemSize):
    """numpy's ``S<length>``: bytes with trailing NULs dropped.

    >>> NullTerminatedBytes(length=4).to_json_scalar(b"ab", zarr_format=3)
    'YWI='
    """

    dtype_cls = np.dtypes.BytesDType
    _zarr_v3_name: ClassVar[str] = "null_terminated_bytes"

    def __post_init__(self) -> None:
        _check_length(self.length)

    @classmethod
    def _from_checked_dtype(cls, dtype: np.dtype[Any]) -> NullTerminatedBytes:
        return cls(length=dtype.itemsize)

    def to_native_dtype(self) -> Any:
        """``S<length>``.

        >>> NullTerminatedBytes(length=4).to_native_dtype()
        dtype('S4')
        """
        return np.dtype(f"S{self.length}")

    def to_json(self, zarr_format: int) -> Any:
        """The JSON form in ``zarr_format``; for 3 zarr-python warns that the type is not
        in the v3 specification.

        >>> NullTerminatedBytes(length=4).to_json(zarr_format=2)
        {'name': '|S4', 'object_codec_id': None}
        """
        if zarr_format == 3:
            _unstable_v3(self)
        return super().to_json(zarr_format)

    @property
    def item_size(self) -> int:
        """Bytes per scalar.

        >>> NullTerminatedBytes(length=4).item_size
        4
        """
        return self.length


@dataclass(frozen=True, kw_only=True)
class RawBytes(_MetadataBacked, HasLength, HasItemSize):
    """numpy's unstructured ``V<length>``: opaque bytes.

    >>> RawBytes(length=2).to_json_scalar(b"ab", zarr_format=3)
    'YWI='
    """

    dtype_cls = np.dtypes.VoidDType
    _zarr_v3_name: ClassVar[str] = "raw_bytes"

    def __post_init__(self) -> None:
        _check_length(self.length)

    @classmethod
    def _check_native_dtype(cls, dtype: Any) -> bool:
        # Not a sub-array dtype ("(2,)i4"): zarr-python takes it for raw bytes of its size,
        # which would store the numbers as opaque bytes; zarrkit refuses it as everywhere.
        return (type(dtype) is cls.dtype_cls and dtype.fields is None
                and dtype.subdtype is None)

    @classmethod
    def _from_checked_dtype(cls, dtype: np.dtype[Any]) -> RawBytes:
        return cls(length=dtype.itemsize)

    def to_native_dtype(self) -> Any:
        """``V<length>``.

        >>> RawBytes(length=3).to_native_dtype()
        dtype('V3')
        """
        return np.dtype(f"V{self.length}")

    def to_json(self, zarr_format: int) -> Any:
        """The JSON form in ``zarr_format``; for 3 zarr-python warns that the type is not
        in the v3 specification.

        >>> RawBytes(length=3).to_json(zarr_format=2)
        {'name': '|V3', 'object_codec_id': None}
        """
        if zarr_format == 3:
            _unstable_v3(self)
        return super().to_json(zarr_format)

    @property
    def item_size(self) -> int:
        """Bytes per scalar.

        >>> RawBytes(length=3).item_size
        3
        """
        return self.length


@dataclass(frozen=True, kw_only=True)
class VariableLengthBytes(_MetadataBacked, HasObjectCodec):
    """Bytes of any length: v3 ``variable_length_bytes``, v2 ``|O`` with ``vlen-bytes``;
    numpy objects.

    >>> VariableLengthBytes().from_json_scalar("AGI=", zarr_format=3)
    b'\\x00b'
    """

    dtype_cls = np.dtypes.ObjectDType
    _zarr_v3_name: ClassVar[str] = "variable_length_bytes"
    _v3_aliases: ClassVar[tuple[str, ...]] = ("bytes",)
    object_codec_id: ClassVar[str] = "vlen-bytes"
    _object_codec: ClassVar[str | None] = "vlen-bytes"

    @classmethod
    def _from_data_type(cls, data_type: DataTypeV3) -> VariableLengthBytes:
        return cls()

    def to_native_dtype(self) -> Any:
        """numpy's object dtype.

        >>> VariableLengthBytes().to_native_dtype()
        dtype('O')
        """
        return np.dtype("O")

    def _data_type(self) -> DataTypeV3:
        return parse_data_type_v3(self._zarr_v3_name)

    def _name_v2(self) -> Any:
        return "|O"

    def to_json(self, zarr_format: int) -> Any:
        """The JSON form in ``zarr_format``; for 3 zarr-python warns that the type is not
        in the v3 specification.

        >>> VariableLengthBytes().to_json(zarr_format=2)
        {'name': '|O', 'object_codec_id': 'vlen-bytes'}
        """
        if zarr_format == 3:
            _unstable_v3(self)
        return super().to_json(zarr_format)

    def cast_scalar(self, data: object) -> bytes:
        """``data`` as bytes (text as UTF-8).

        >>> VariableLengthBytes().cast_scalar("é")
        b'\\xc3\\xa9'
        """
        if isinstance(data, str):
            return data.encode("utf-8")
        if isinstance(data, (bytes, bytearray, memoryview, np.bytes_)):
            return bytes(data)
        raise TypeError(
            f"Cannot convert object {data!r} with type {type(data)} to a scalar compatible "
            f"with the data type {self}.")


# --- times ------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TimeDTypeBase(_MetadataBacked, HasEndianness, HasItemSize):
    """``numpy.datetime64`` and ``numpy.timedelta64``: a count of ``scale_factor`` ×
    ``unit`` in an int64 (NaT is its smallest value).

    >>> TimeDelta64(unit="ms").from_json_scalar(1500, zarr_format=3)
    np.timedelta64(1500,'ms')
    """

    _numpy_name: ClassVar[str]
    scale_factor: int = 1
    unit: DateTimeUnit = "generic"

    def __post_init__(self) -> None:
        if isinstance(self.scale_factor, bool) or not isinstance(self.scale_factor, int) or (
                self.scale_factor < 1):
            raise ValueError(f"scale_factor must be > 0, got {self.scale_factor}.")
        if self.scale_factor >= 2**31:
            raise ValueError(f"scale_factor must be < 2147483648, got {self.scale_factor}.")
        if self.unit not in DATETIME_UNIT:
            raise ValueError(f"unit must be one of {DATETIME_UNIT}, got {self.unit!r}.")
        if self.unit == "μs":
            object.__setattr__(self, "unit", "us")

    @classmethod
    def _from_checked_dtype(cls, dtype: np.dtype[Any]) -> TimeDTypeBase:
        unit, scale_factor = np.datetime_data(dtype)
        return cls(unit=unit, scale_factor=scale_factor,  # type: ignore[arg-type]
                   endianness=endianness_from_numpy_dtype(dtype))

    def to_native_dtype(self) -> Any:
        """numpy's type for this unit, in this type's byte order.

        >>> DateTime64(unit="s", scale_factor=10).to_native_dtype()
        dtype('<M8[10s]')
        """
        dtype = np.dtype(f"{self._numpy_name}[{self.scale_factor}{self.unit}]")
        return dtype.newbyteorder(_numpy_order(self.endianness))

    @property
    def item_size(self) -> int:
        """Bytes per scalar: an int64.

        >>> DateTime64().item_size
        8
        """
        return 8


@dataclass(frozen=True, kw_only=True)
class TimeDelta64(TimeDTypeBase):
    """``numpy.timedelta64``.

    >>> TimeDelta64(unit="ns").to_json(zarr_format=2)
    {'name': '<m8[ns]', 'object_codec_id': None}
    """

    dtype_cls = np.dtypes.TimeDelta64DType
    _zarr_v3_name: ClassVar[str] = "numpy.timedelta64"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">m8", "<m8")
    _numpy_name: ClassVar[str] = "timedelta64"


@dataclass(frozen=True, kw_only=True)
class DateTime64(TimeDTypeBase):
    """``numpy.datetime64``.

    >>> DateTime64(unit="D").to_json_scalar(np.datetime64("1970-01-11"), zarr_format=3)
    10
    """

    dtype_cls = np.dtypes.DateTime64DType
    _zarr_v3_name: ClassVar[str] = "numpy.datetime64"
    _zarr_v2_names: ClassVar[tuple[str, ...]] = (">M8", "<M8")
    _numpy_name: ClassVar[str] = "datetime64"


# --- structures -------------------------------------------------------------------------


def _unsupported_field_feature(dtype: np.dtype[Any]) -> str | None:
    """Why a structured dtype has no Zarr data type (a titled or sub-array field), or None."""
    for name in dtype.names or ():
        field_dtype, _offset, *title = dtype.fields[name]  # type: ignore[index]
        if title:
            return f"field {name!r} has a title ({title[0]!r})"
        if field_dtype.subdtype is not None:
            return f"field {name!r} is a subarray with shape {field_dtype.shape}"
        if field_dtype.names is not None:
            reason = _unsupported_field_feature(field_dtype)
            if reason is not None:
                return f"within field {name!r}: {reason}"
    return None


def _packed(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """``dtype`` with its fields one after another, nested structures too."""
    return np.dtype([
        (name, _packed(dtype.fields[name][0]) if dtype.fields[name][0].names  # type: ignore[index]
         else dtype.fields[name][0])  # type: ignore[index]
        for name in dtype.names or ()
    ])


@dataclass(frozen=True, kw_only=True)
class Structured(_MetadataBacked, HasItemSize):
    """A structure of named fields, each of a data type (zarr-python's legacy v3 name
    ``structured``; :class:`Struct` is the registered one).

    >>> Structured(fields=(("a", Int8()),)).to_native_dtype()
    dtype([('a', 'i1')])
    """

    dtype_cls = np.dtypes.VoidDType
    _zarr_v3_name: ClassVar[str] = "structured"
    fields: tuple[tuple[str, ZDType[Any, Any]], ...]

    def __post_init__(self) -> None:
        if len(self.fields) < 1:
            raise ValueError(f"must have at least one field. Got {self.fields!r}")

    @classmethod
    def _check_native_dtype(cls, dtype: Any) -> bool:
        return isinstance(dtype, cls.dtype_cls) and dtype.fields is not None

    @classmethod
    def _from_checked_dtype(cls, dtype: np.dtype[Any]) -> Structured:
        reason = _unsupported_field_feature(dtype)
        if reason is not None:
            raise UnsupportedDataTypeError(
                f"Cannot convert the structured data type {dtype}: {reason}. Zarr data types "
                "have no field titles or subarray fields.")
        packed = _packed(dtype)
        if packed != dtype:
            warnings.warn(
                "The structured dtype is converted to a packed field layout. Field values "
                "are preserved when writing arrays, but field offsets and itemsize may change.",
                ZarrUserWarning, stacklevel=4)
        return cls(fields=tuple(
            (name, data_type_registry.match_dtype(packed.fields[name][0]))  # type: ignore[index]
            for name in packed.names or ()
        ))

    def to_native_dtype(self) -> Any:
        """The packed structured dtype of the fields' native dtypes.

        >>> Struct(fields=(("x", Float32(endianness="big")),)).to_native_dtype()
        dtype([('x', '>f4')])
        """
        return np.dtype([(name, field.to_native_dtype()) for name, field in self.fields])

    def _data_type(self) -> DataTypeV3:
        return parse_data_type_v3({"name": "structured", "configuration": {"fields": [
            [name, field.to_json(zarr_format=3)] for name, field in self.fields]}})

    def to_json(self, zarr_format: int) -> Any:
        """The JSON form in ``zarr_format``; the legacy v3 form warns (no specification).

        >>> Structured(fields=(("a", Int8()),)).to_json(zarr_format=2)
        {'name': [['a', '|i1']], 'object_codec_id': None}
        """
        if zarr_format == 3 and type(self) is Structured:
            _unstable_v3(self)
        return super().to_json(zarr_format)

    def cast_scalar(self, data: object) -> Any:
        """``data`` (a tuple or list of field values, the packed bytes, or a structured
        scalar) as a scalar of this structure.

        >>> Struct(fields=(("a", Int8()), ("b", Float32()))).cast_scalar([1, 2.5])
        np.void((1, 2.5), dtype=[('a', 'i1'), ('b', '<f4')])
        """
        native = self.to_native_dtype()
        if isinstance(data, list):
            data = tuple(data)
        if isinstance(data, np.void) and data.dtype.names is not None:
            # By field, not by bytes: the fields may differ in byte order or layout.
            data = data.item()
        return normalize_fill_value(data, native)

    def default_scalar(self) -> Any:
        """Zero in every field (times too: zero, not NaT).

        >>> Struct(fields=(("a", Int8()),)).default_scalar()
        np.void((0,), dtype=[('a', 'i1')])
        """
        return np.array(super().default_scalar(), dtype=self.to_native_dtype())[()]

    def from_json_scalar(self, data: Any, *, zarr_format: int) -> Any:
        """A scalar from its JSON form: per field (v3 ``struct``) or the bytes in base64.

        >>> Struct(fields=(("a", Int8()),)).from_json_scalar({"a": 3}, zarr_format=3)
        np.void((3,), dtype=[('a', 'i1')])
        """
        decoded = super().from_json_scalar(data, zarr_format=zarr_format)
        return np.array(decoded, dtype=self.to_native_dtype())[()]

    @property
    def item_size(self) -> int:
        """Bytes per scalar: the fields' sizes added up.

        >>> Struct(fields=(("a", Int8()), ("b", Float64()))).item_size
        9
        """
        return int(self.to_native_dtype().itemsize)

    def has_multi_byte_fields(self) -> bool:
        """Whether a field has more than one byte (so a byte order matters).

        >>> Struct(fields=(("a", Int8()),)).has_multi_byte_fields()
        False
        """
        return any(isinstance(field, HasItemSize) and field.item_size > 1
                   for _, field in self.fields)


@dataclass(frozen=True, kw_only=True)
class Struct(Structured):
    """A structure, v3 ``struct`` (which also reads the legacy ``structured``).

    >>> Struct(fields=(("a", Int8()),)).to_json(zarr_format=3)
    {'name': 'struct', 'configuration': {'fields': [{'name': 'a', 'data_type': 'int8'}]}}
    """

    _zarr_v3_name: ClassVar[str] = "struct"
    _v3_aliases: ClassVar[tuple[str, ...]] = ("structured",)

    def _data_type(self) -> DataTypeV3:
        return data_type_v3_from_numpy(self.to_native_dtype())


__all__ = [
    "BaseComplex", "BaseFloat", "BaseInt", "Bool", "Complex64", "Complex128", "DateTime64",
    "FixedLengthUTF32", "Float16", "Float32", "Float64", "Int8", "Int16", "Int32", "Int64",
    "NullTerminatedBytes", "RawBytes", "Struct", "Structured", "TimeDTypeBase", "TimeDelta64",
    "UInt8", "UInt16", "UInt32", "UInt64", "VariableLengthBytes", "VariableLengthUTF8",
    "endianness_from_numpy_dtype",
]
