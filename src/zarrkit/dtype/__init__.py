"""zarr-python 3's ``zarr.dtype``: one class per Zarr data type, and :func:`parse_dtype`.

A data type class (a :class:`ZDType`) wraps a numpy dtype and gives its Zarr v2 and v3 JSON
forms and those of its scalars (fill values), as zarr-python's classes of the same names
do. It sits on zarrkit's metadata layer, which it only wraps: the JSON is what zarrkit
writes in array metadata (see :mod:`zarrkit.dtype.classes`). Arrays take these classes as
``dtype`` and keep numpy's dtype as ``Array.dtype``.

>>> import numpy as np
>>> from zarrkit.dtype import Int8, parse_dtype
>>> int8 = Int8.from_native_dtype(np.dtype("int8"))
>>> int8.to_json(zarr_format=2)
{'name': '|i1', 'object_codec_id': None}
>>> int8.to_json_scalar(42, zarr_format=3)
42
>>> parse_dtype({"name": "numpy.datetime64",
...              "configuration": {"unit": "s", "scale_factor": 10}}, zarr_format=3)
DateTime64(endianness='little', scale_factor=10, unit='s')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from zarrkit.dtype.classes import (
    BaseComplex,
    BaseFloat,
    BaseInt,
    Bool,
    Complex64,
    Complex128,
    DateTime64,
    FixedLengthUTF32,
    Float16,
    Float32,
    Float64,
    Int8,
    Int16,
    Int32,
    Int64,
    NullTerminatedBytes,
    RawBytes,
    Struct,
    Structured,
    TimeDelta64,
    TimeDTypeBase,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    VariableLengthBytes,
    VariableLengthUTF8,
)
from zarrkit.dtype.common import (
    DateTime64JSON_V2,
    DateTime64JSON_V3,
    DTypeConfig_V2,
    DTypeJSON,
    DTypeSpec_V2,
    DTypeSpec_V3,
    FixedLengthUTF32JSON_V2,
    FixedLengthUTF32JSON_V3,
    HasEndianness,
    HasItemSize,
    HasLength,
    HasObjectCodec,
    NullterminatedBytesJSON_V2,
    NullTerminatedBytesJSON_V3,
    RawBytesJSON_V2,
    RawBytesJSON_V3,
    StructJSON_V3,
    StructuredJSON_V2,
    StructuredJSON_V3,
    TimeDelta64JSON_V2,
    TimeDelta64JSON_V3,
    VariableLengthBytesJSON_V2,
    VariableLengthUTF8JSON_V2,
    check_dtype_spec_no_object_codec_v2,
    check_dtype_spec_v2,
    check_dtype_spec_v3,
)
from zarrkit.dtype.registry import DataTypeRegistry, data_type_registry, native_dtype_of
from zarrkit.dtype.wrapper import TBaseDType, TBaseScalar, ZDType

INTEGER_DTYPE: Final = (Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64)
FLOAT_DTYPE: Final = (Float16, Float32, Float64)
COMPLEX_FLOAT_DTYPE: Final = (Complex64, Complex128)
STRING_DTYPE: Final = (FixedLengthUTF32, VariableLengthUTF8)
TIME_DTYPE: Final = (DateTime64, TimeDelta64)
BYTES_DTYPE: Final = (RawBytes, NullTerminatedBytes, VariableLengthBytes)
ANY_DTYPE: Final = (Bool, *INTEGER_DTYPE, *FLOAT_DTYPE, *COMPLEX_FLOAT_DTYPE, *STRING_DTYPE,
                    *BYTES_DTYPE, Struct, *TIME_DTYPE)

# What asks for variable-length text rather than numpy's inference of a U<length> type.
VLEN_UTF8_ALIAS: Final = ("str", str, "string")

ZDTypeLike = Any
"""What :func:`parse_dtype` takes: a ZDType, its JSON, or what numpy makes a dtype of."""

for _cls in ANY_DTYPE:
    data_type_registry.register(_cls._zarr_v3_name, _cls)


def get_data_type_from_native_dtype(dtype: Any) -> ZDType[Any, Any]:
    """The registered data type of a native dtype (or of what numpy makes one of).

    >>> get_data_type_from_native_dtype("<U3")
    FixedLengthUTF32(length=3, endianness='little')
    """
    return data_type_registry.match_dtype(native_dtype_of(dtype))  # type: ignore[no-any-return]


def get_data_type_from_json(dtype_spec: Any, *, zarr_format: int) -> ZDType[Any, Any]:
    """The registered data type whose JSON form in ``zarr_format`` is ``dtype_spec``.

    >>> get_data_type_from_json({"name": "<f8", "object_codec_id": None}, zarr_format=2)
    Float64(endianness='little')
    """
    return data_type_registry.match_json(dtype_spec, zarr_format=zarr_format)  # type: ignore[no-any-return]


def parse_dtype(dtype_spec: Any, *, zarr_format: int) -> ZDType[Any, Any]:
    """``dtype_spec`` as a data type: a ZDType as it is, else its JSON form in
    ``zarr_format``, else ``"str"``/``str``/``"string"`` as variable-length text, else the
    native dtype numpy makes of it.

    >>> import numpy as np
    >>> parse_dtype("int32", zarr_format=2)
    Int32(endianness='little')
    >>> parse_dtype(np.dtype("S10"), zarr_format=2)
    NullTerminatedBytes(length=10)
    >>> parse_dtype(">M8[10s]", zarr_format=2)
    DateTime64(endianness='big', scale_factor=10, unit='s')
    """
    if isinstance(dtype_spec, ZDType):
        return dtype_spec
    if isinstance(dtype_spec, (Mapping, str, Sequence)):
        try:
            return get_data_type_from_json(dtype_spec, zarr_format=zarr_format)
        except ValueError:
            pass
    if isinstance(dtype_spec, (str, type)) and dtype_spec in VLEN_UTF8_ALIAS:
        return VariableLengthUTF8()
    return get_data_type_from_native_dtype(dtype_spec)


def parse_data_type(dtype_spec: Any, *, zarr_format: int) -> ZDType[Any, Any]:
    """:func:`parse_dtype` under its older name.

    >>> parse_data_type("uint8", zarr_format=3)
    UInt8()
    """
    return parse_dtype(dtype_spec, zarr_format=zarr_format)


def __getattr__(name: str) -> object:
    if name == "DataTypeValidationError":
        import warnings

        from zarrkit.errors import DataTypeValidationError, ZarrDeprecationWarning

        warnings.warn(
            "Importing DataTypeValidationError from zarr.dtype is deprecated. Use "
            "zarr.errors.DataTypeValidationError instead.",
            ZarrDeprecationWarning, stacklevel=2,
        )
        return DataTypeValidationError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ANY_DTYPE",
    "BYTES_DTYPE",
    "COMPLEX_FLOAT_DTYPE",
    "FLOAT_DTYPE",
    "INTEGER_DTYPE",
    "STRING_DTYPE",
    "TIME_DTYPE",
    "VLEN_UTF8_ALIAS",
    "BaseComplex",
    "BaseFloat",
    "BaseInt",
    "Bool",
    "Complex64",
    "Complex128",
    "DTypeConfig_V2",
    "DTypeJSON",
    "DTypeSpec_V2",
    "DTypeSpec_V3",
    "DataTypeRegistry",
    "DateTime64",
    "DateTime64JSON_V2",
    "DateTime64JSON_V3",
    "FixedLengthUTF32",
    "FixedLengthUTF32JSON_V2",
    "FixedLengthUTF32JSON_V3",
    "Float16",
    "Float32",
    "Float64",
    "HasEndianness",
    "HasItemSize",
    "HasLength",
    "HasObjectCodec",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "NullTerminatedBytes",
    "NullTerminatedBytesJSON_V3",
    "NullterminatedBytesJSON_V2",
    "RawBytes",
    "RawBytesJSON_V2",
    "RawBytesJSON_V3",
    "Struct",
    "StructJSON_V3",
    "Structured",
    "StructuredJSON_V2",
    "StructuredJSON_V3",
    "TBaseDType",
    "TBaseScalar",
    "TimeDTypeBase",
    "TimeDelta64",
    "TimeDelta64JSON_V2",
    "TimeDelta64JSON_V3",
    "UInt8",
    "UInt16",
    "UInt32",
    "UInt64",
    "VariableLengthBytes",
    "VariableLengthBytesJSON_V2",
    "VariableLengthUTF8",
    "VariableLengthUTF8JSON_V2",
    "ZDType",
    "ZDTypeLike",
    "check_dtype_spec_no_object_codec_v2",
    "check_dtype_spec_v2",
    "check_dtype_spec_v3",
    "data_type_registry",
    "get_data_type_from_json",
    "get_data_type_from_native_dtype",
    "parse_data_type",
    "parse_dtype",
]
