"""Zarr v3 data types: the ``data_type`` field of ``zarr.json``, to and from numpy.

Every data type is a :class:`DataTypeV3`: its registered ``name``, the exact JSON written for
it, the numpy dtype of decoded arrays (native byte order; the ``bytes`` codec owns endianness)
and a ``kind`` that says how fill values and chunks are represented:

========================  ================================================  ==================
kind                      data types                                        numpy dtype
========================  ================================================  ==================
``"bool"``                ``bool``                                          ``bool``
``"numeric"``             ``int8``..``uint64``, ``float16/32/64``,          the same; ml_dtypes
                          ``complex64/128``, ``bfloat16``, ``float8_*``,    types for the
                          ``float4_e2m1fn``, ``int2/4``, ``uint2/4``        tensorstore ones
``"datetime"``            ``numpy.datetime64``, ``numpy.timedelta64``       ``M8[..]``/``m8[..]``
``"raw"``                 ``r<bits>``, ``raw_bytes``                        ``V<n>``
``"fixed_bytes"``         ``null_terminated_bytes``                         ``S<n>``
``"fixed_string"``        ``fixed_length_utf32``                            ``U<n>``
``"struct"``              ``struct`` (and the legacy ``structured``)        packed structured
``"string"``              ``string`` (variable-length UTF-8)                ``object`` (str)
``"bytes"``               ``variable_length_bytes`` (alias ``bytes``)       ``object`` (bytes)
========================  ================================================  ==================

Chunks of ``string`` hold objects; arrays read them as numpy's ``StringDType()`` from numpy
2, as zarr-python 3.1 does (:attr:`zarrkit.Array.dtype`).

>>> parse_data_type_v3("int16").numpy
dtype('int16')
>>> data_type_v3_from_numpy(np.dtype("S5")).json
{'name': 'null_terminated_bytes', 'configuration': {'length_bytes': 5}}
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

from zarrkit import registry
from zarrkit.caching import BoundedCache
from zarrkit.errors import (
    MetadataError,
    UnknownDataTypeError,
    UnsupportedDataTypeError,
)

DataTypeFactory = Callable[[str, "dict[str, Any] | None"], "DataTypeV3"]
"""Builds a data type from its name and ``configuration`` (None when absent)."""


@dataclass(frozen=True)
class ExtensionRef:
    """An extension point's value split into its parts (shared by every v3 extension point).

    >>> ExtensionRef("gzip", {"level": 1}).must_understand
    True
    """

    name: str
    configuration: dict[str, Any] | None = field(default=None, hash=False)
    must_understand: bool = True


_EXTENSION_MEMBERS = frozenset({"name", "configuration", "must_understand"})


def parse_extension(value: Any, what: str, *, strict: bool = True) -> ExtensionRef:
    """Split a short-hand name or ``{"name", "configuration", "must_understand"}`` object.

    ``strict`` refuses members other than those three.

    >>> parse_extension("bytes", "codec")
    ExtensionRef(name='bytes', configuration=None, must_understand=True)
    >>> parse_extension({"name": "x", "must_understand": False}, "codec").must_understand
    False
    >>> parse_extension(3, "chunk grid")
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: chunk grid must be a name or an object with a 'name', found 3
    """
    if isinstance(value, str):
        return ExtensionRef(value)
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise MetadataError(f"{what} must be a name or an object with a 'name', found {value!r}")
    name = value["name"]
    configuration = value.get("configuration")
    if configuration is not None and not isinstance(configuration, dict):
        raise MetadataError(f"{what} {name!r}: configuration must be an object")
    must_understand = value.get("must_understand", True)
    if not isinstance(must_understand, bool):
        raise MetadataError(f"{what} {name!r}: must_understand must be a boolean")
    if strict:
        unexpected = sorted(set(value) - _EXTENSION_MEMBERS)
        if unexpected:
            raise MetadataError(f"{what} {name!r}: unexpected members {unexpected}")
    return ExtensionRef(name, configuration, must_understand)


@dataclass(frozen=True)
class DataTypeV3:
    """A Zarr v3 data type.

    ``name`` is the registered name, ``json`` the exact ``data_type`` value written,
    ``numpy`` the (native byte order) dtype of decoded arrays, ``kind`` one of the kinds in
    the module docstring and ``fields`` the member types of a struct.

    >>> dt = parse_data_type_v3({"name": "numpy.datetime64",
    ...                          "configuration": {"unit": "s", "scale_factor": 10}})
    >>> dt.name, dt.numpy, dt.kind
    ('numpy.datetime64', dtype('<M8[10s]'), 'datetime')
    """

    name: str
    json: Any = field(hash=False)
    numpy: np.dtype[Any]
    kind: str
    fields: tuple[tuple[str, DataTypeV3], ...] = ()

    @property
    def variable_length(self) -> bool:
        """Whether elements have no fixed size (the ``string`` and ``bytes`` types).

        >>> parse_data_type_v3("string").variable_length
        True
        """
        return self.kind in ("string", "bytes")

    @property
    def item_size(self) -> int | None:
        """Bytes per element, or None for variable-length types.

        >>> parse_data_type_v3("r24").item_size
        3
        """
        return None if self.variable_length else self.numpy.itemsize


# --- the built-in types -------------------------------------------------------------------

_NUMPY_SIMPLE: dict[str, tuple[Any, str]] = {
    "bool": (np.bool_, "bool"),
    "int8": (np.int8, "numeric"),
    "int16": (np.int16, "numeric"),
    "int32": (np.int32, "numeric"),
    "int64": (np.int64, "numeric"),
    "uint8": (np.uint8, "numeric"),
    "uint16": (np.uint16, "numeric"),
    "uint32": (np.uint32, "numeric"),
    "uint64": (np.uint64, "numeric"),
    "float16": (np.float16, "numeric"),
    "float32": (np.float32, "numeric"),
    "float64": (np.float64, "numeric"),
    "complex64": (np.complex64, "numeric"),
    "complex128": (np.complex128, "numeric"),
}

# The types tensorstore writes beyond the core set, all provided by ml_dtypes (those missing
# from an older ml_dtypes are simply not registered).
_ML_DTYPES_NAMES = (
    "bfloat16", "float8_e3m4", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn",
    "int2", "int4", "uint2", "uint4",
)

_VARIABLE_LENGTH = {"string": "string", "variable_length_bytes": "bytes", "bytes": "bytes"}

_TIME_UNITS = frozenset(
    {"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic"}
)
_MAX_SCALE_FACTOR = 2**31 - 1
# numpy keeps the size of a type in a C int.
_MAX_ITEM_SIZE = 2**31 - 1
_RAW_NAME = re.compile(r"^r([1-9][0-9]*)$")

_SIMPLE: dict[str, tuple[np.dtype[Any], str]] = {
    name: (np.dtype(scalar), kind) for name, (scalar, kind) in _NUMPY_SIMPLE.items()
}
for _name in _ML_DTYPES_NAMES:
    if hasattr(ml_dtypes, _name):
        _SIMPLE[_name] = (np.dtype(getattr(ml_dtypes, _name)), "numeric")

# numpy dtype -> name of a configuration-free type, for data_type_v3_from_numpy.
_FROM_NUMPY: dict[np.dtype[Any], str] = {dtype: name for name, (dtype, _) in _SIMPLE.items()}


def _no_configuration(name: str, configuration: dict[str, Any] | None) -> None:
    if configuration:
        raise MetadataError(f"data type {name!r} takes no configuration, found {configuration!r}")


def _exact_keys(name: str, configuration: dict[str, Any] | None, keys: set[str]) -> dict[str, Any]:
    if configuration is None:
        raise MetadataError(f"data type {name!r} needs a configuration with {sorted(keys)}")
    if set(configuration) != keys:
        raise MetadataError(
            f"data type {name!r}: configuration must have exactly the keys {sorted(keys)}, "
            f"found {sorted(configuration)}"
        )
    return configuration


def _positive_int(name: str, what: str, value: Any, *, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (
        maximum is not None and value > maximum
    ):
        limit = f" no greater than {maximum}" if maximum is not None else ""
        raise MetadataError(f"data type {name!r}: {what} must be a positive integer{limit}, "
                            f"found {value!r}")
    return value


def _simple_factory(name: str, configuration: dict[str, Any] | None) -> DataTypeV3:
    _no_configuration(name, configuration)
    dtype, kind = _SIMPLE[name]
    return DataTypeV3(name, name, dtype, kind)


def _variable_length_factory(name: str, configuration: dict[str, Any] | None) -> DataTypeV3:
    _no_configuration(name, configuration)
    return DataTypeV3(name, name, np.dtype(object), _VARIABLE_LENGTH[name])


def _time_factory(name: str, configuration: dict[str, Any] | None) -> DataTypeV3:
    config = _exact_keys(name, configuration, {"unit", "scale_factor"})
    unit, scale = config["unit"], config["scale_factor"]
    if not isinstance(unit, str) or unit not in _TIME_UNITS:
        raise MetadataError(f"data type {name!r}: unknown time unit {unit!r}")
    _positive_int(name, "scale_factor", scale, maximum=_MAX_SCALE_FACTOR)
    code = "M8" if name == "numpy.datetime64" else "m8"
    if unit == "generic":
        if scale != 1:
            raise MetadataError(f"data type {name!r}: a generic unit needs scale_factor 1")
        dtype = np.dtype(code)
    else:
        dtype = np.dtype(f"{code}[{scale if scale != 1 else ''}{unit}]")
    json = {"name": name, "configuration": {"unit": unit, "scale_factor": scale}}
    return DataTypeV3(name, json, dtype, "datetime")


def _length_factory(name: str, configuration: dict[str, Any] | None) -> DataTypeV3:
    config = _exact_keys(name, configuration, {"length_bytes"})
    length = _positive_int(name, "length_bytes", config["length_bytes"],
                           maximum=_MAX_ITEM_SIZE)
    json = {"name": name, "configuration": {"length_bytes": length}}
    if name == "raw_bytes":
        return DataTypeV3(name, json, np.dtype(f"V{length}"), "raw")
    if name == "null_terminated_bytes":
        return DataTypeV3(name, json, np.dtype(f"S{length}"), "fixed_bytes")
    if length % 4:
        raise MetadataError(f"data type {name!r}: length_bytes must be a multiple of 4, "
                            f"found {length}")
    return DataTypeV3(name, json, np.dtype(f"U{length // 4}"), "fixed_string")


def _struct_field(name: str, entry: Any) -> tuple[str, Any]:
    # "struct" writes {"name", "data_type"} objects; the legacy "structured" wrote pairs.
    if isinstance(entry, dict) and set(entry) == {"name", "data_type"}:
        return entry["name"], entry["data_type"]
    if isinstance(entry, list) and len(entry) == 2:
        return entry[0], entry[1]
    raise MetadataError(f"data type {name!r}: malformed field {entry!r}")


def _struct_factory(name: str, configuration: dict[str, Any] | None) -> DataTypeV3:
    config = _exact_keys(name, configuration, {"fields"})
    entries = config["fields"]
    if not isinstance(entries, list) or not entries:
        raise MetadataError(f"data type {name!r}: fields must be a non-empty list")
    fields: list[tuple[str, DataTypeV3]] = []
    for entry in entries:
        field_name, field_json = _struct_field(name, entry)
        if not isinstance(field_name, str) or not field_name:
            raise MetadataError(f"data type {name!r}: field names must be non-empty strings, "
                                f"found {field_name!r}")
        if any(field_name == seen for seen, _ in fields):
            raise MetadataError(f"data type {name!r}: duplicate field name {field_name!r}")
        field_type = parse_data_type_v3(field_json)
        if field_type.variable_length:
            raise UnsupportedDataTypeError(
                f"data type {name!r}: field {field_name!r} has the variable-length type "
                f"{field_type.name!r}"
            )
        fields.append((field_name, field_type))
    return _make_struct(name, tuple(fields))


def _make_struct(name: str, fields: tuple[tuple[str, DataTypeV3], ...]) -> DataTypeV3:
    if name == "structured":
        # Kept in the legacy form so rewriting an existing array's metadata (attributes,
        # resize) does not make it unreadable by the writer that created it.
        field_json: list[Any] = [[n, t.json] for n, t in fields]
    else:
        field_json = [{"name": n, "data_type": t.json} for n, t in fields]
    json = {"name": name, "configuration": {"fields": field_json}}
    # numpy would wrap a size beyond a C int around, to a negative itemsize.
    if sum(t.numpy.itemsize for _, t in fields) > _MAX_ITEM_SIZE:
        raise UnsupportedDataTypeError(
            f"data type {name!r}: the fields add up to more than {_MAX_ITEM_SIZE} bytes")
    dtype = np.dtype([(n, t.numpy) for n, t in fields])
    return DataTypeV3(name, json, dtype, "struct", fields)


def register_data_type(
    name: str,
    factory: DataTypeFactory,
    *,
    numpy_dtype: Any = None,
    replace: bool = True,
) -> None:
    """Make ``name`` parseable as a ``data_type``; ``factory(name, configuration)`` builds it.

    With ``numpy_dtype``, :func:`data_type_v3_from_numpy` maps that numpy dtype to
    ``factory(name, None)``.

    >>> register_data_type("example.uint8", lambda name, configuration: DataTypeV3(
    ...     name, name, np.dtype("u1"), "numeric"))
    >>> parse_data_type_v3("example.uint8").numpy
    dtype('uint8')
    """
    registry.data_types.register(name, factory, replace=replace)
    if numpy_dtype is not None:
        _FROM_NUMPY[np.dtype(numpy_dtype)] = name


for _name in _SIMPLE:
    register_data_type(_name, _simple_factory)
for _name in _VARIABLE_LENGTH:
    register_data_type(_name, _variable_length_factory)
for _name in ("numpy.datetime64", "numpy.timedelta64"):
    register_data_type(_name, _time_factory)
for _name in ("raw_bytes", "null_terminated_bytes", "fixed_length_utf32"):
    register_data_type(_name, _length_factory)
for _name in ("struct", "structured"):
    register_data_type(_name, _struct_factory)


def parse_data_type_v3(value: Any) -> DataTypeV3:
    """Parse a ``data_type`` value (a name or a ``{"name", "configuration"}`` object).

    >>> parse_data_type_v3("bfloat16").numpy
    dtype(bfloat16)
    >>> parse_data_type_v3({"name": "fixed_length_utf32",
    ...                     "configuration": {"length_bytes": 16}}).numpy
    dtype('<U4')
    >>> parse_data_type_v3("float128")
    Traceback (most recent call last):
    zarrkit.errors.UnknownDataTypeError: unsupported data type 'float128'
    """
    if type(value) is str:
        factory = registry.data_types.get(value)
        # Valid while the name maps to the same factory (register_data_type may replace it).
        cached = _BY_NAME.get_for(value, factory)
        if cached is not None:
            return cached
        result = _parse_data_type_v3(value)
        _BY_NAME.put_for(value, factory, result)
        return result
    return _parse_data_type_v3(value)


# Data types parsed from a bare name (as in ``"data_type": "float32"``), with the factory
# that built them: a hierarchy repeats a few names over and over, and the result of a
# name is immutable. Only successes are kept, so an invalid name fails every time.
_BY_NAME: BoundedCache[str, DataTypeV3] = BoundedCache(256)


def _parse_data_type_v3(value: Any) -> DataTypeV3:
    ref = parse_extension(value, "data type")
    raw = _RAW_NAME.match(ref.name)
    if raw is not None:
        _no_configuration(ref.name, ref.configuration)
        bits = int(raw.group(1))
        if bits % 8 or bits // 8 > _MAX_ITEM_SIZE:
            raise UnsupportedDataTypeError(
                f"unsupported data type {ref.name!r}: raw types must be a multiple of 8 bits, "
                f"at most {_MAX_ITEM_SIZE} bytes"
            )
        return DataTypeV3(ref.name, ref.name, np.dtype(f"V{bits // 8}"), "raw")
    factory = registry.data_types.get(ref.name)
    if factory is None:
        raise UnknownDataTypeError(f"unsupported data type {ref.name!r}")
    result = factory(ref.name, ref.configuration)  # type: ignore[operator]
    if not isinstance(result, DataTypeV3):
        raise TypeError(f"the factory of data type {ref.name!r} returned {result!r}")
    return result


def data_type_v3_from_numpy(dtype: Any, *, object_kind: str | None = None) -> DataTypeV3:
    """The v3 data type to write for a numpy dtype (in the forms zarr-python writes).

    Object arrays need ``object_kind`` (``"string"`` or ``"bytes"``); the Python types
    ``str`` and ``bytes`` stand for those directly.

    >>> data_type_v3_from_numpy(">f4").json
    'float32'
    >>> data_type_v3_from_numpy("m8[ms]").json
    {'name': 'numpy.timedelta64', 'configuration': {'unit': 'ms', 'scale_factor': 1}}
    >>> data_type_v3_from_numpy(bytes).json
    'variable_length_bytes'
    >>> data_type_v3_from_numpy("O")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.UnsupportedDataTypeError: object arrays need object_kind='string' or ...
    """
    if isinstance(dtype, DataTypeV3):
        return dtype
    if dtype is str:
        return parse_data_type_v3("string")
    if dtype is bytes:
        return parse_data_type_v3("variable_length_bytes")
    try:
        numpy_dtype = np.dtype(dtype)
    except TypeError as e:
        raise UnsupportedDataTypeError(f"unsupported dtype {dtype!r}: {e}") from e
    if numpy_dtype.kind == "O":
        if object_kind == "string":
            return parse_data_type_v3("string")
        if object_kind == "bytes":
            return parse_data_type_v3("variable_length_bytes")
        raise UnsupportedDataTypeError(
            "object arrays need object_kind='string' or object_kind='bytes' to choose a Zarr "
            f"v3 data type, found object_kind={object_kind!r}"
        )
    if numpy_dtype.kind == "T":  # numpy's variable-width StringDType
        return parse_data_type_v3("string")
    if numpy_dtype.fields is not None:
        return _struct_from_numpy(numpy_dtype)
    if numpy_dtype.subdtype is not None:
        raise UnsupportedDataTypeError(
            f"a subarray dtype {numpy_dtype} has no Zarr v3 data type; add a dimension instead"
        )
    native = numpy_dtype.newbyteorder("=")
    name = _FROM_NUMPY.get(native)
    if name is not None:
        return parse_data_type_v3(name)
    kind = numpy_dtype.kind
    if kind in "mM":
        unit, scale = np.datetime_data(numpy_dtype)
        return parse_data_type_v3({
            "name": "numpy.datetime64" if kind == "M" else "numpy.timedelta64",
            "configuration": {"unit": unit, "scale_factor": scale},
        })
    if kind in "SUV" and numpy_dtype.itemsize == 0:
        raise UnsupportedDataTypeError(f"unsupported dtype {numpy_dtype}: zero size")
    length = {"S": "null_terminated_bytes", "U": "fixed_length_utf32", "V": "raw_bytes"}
    if kind in length:
        return parse_data_type_v3({
            "name": length[kind], "configuration": {"length_bytes": numpy_dtype.itemsize},
        })
    raise UnsupportedDataTypeError(f"dtype {numpy_dtype} has no Zarr v3 data type")


def _struct_from_numpy(dtype: np.dtype[Any]) -> DataTypeV3:
    fields: list[tuple[str, DataTypeV3]] = []
    for name in dtype.names or ():
        info = dtype.fields[name]  # type: ignore[index]
        if len(info) > 2:
            raise UnsupportedDataTypeError(
                f"structured dtype {dtype}: field titles have no Zarr v3 representation"
            )
        field_type = data_type_v3_from_numpy(info[0])
        if field_type.variable_length:
            raise UnsupportedDataTypeError(
                f"structured dtype {dtype}: field {name!r} is variable-length"
            )
        fields.append((name, field_type))
    # The struct type is always packed; padded numpy layouts map to their packed equivalent.
    return _make_struct("struct", tuple(fields))
