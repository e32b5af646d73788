"""The registry of data type classes that :func:`zarrkit.dtype.parse_dtype` matches
against, as zarr-python's ``DataTypeRegistry``.

>>> from zarrkit.dtype import data_type_registry
>>> data_type_registry.match_json("int16", zarr_format=3)
Int16(endianness='little')
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarrkit.errors import DataTypeMismatchError
from zarrkit.metadata.dtypes import normalize_dtype


@dataclass(frozen=True, kw_only=True)
class DataTypeRegistry:
    """Zarr v3 data type names -> the :class:`~zarrkit.dtype.ZDType` classes that wrap them.

    >>> from zarrkit.dtype import Bool
    >>> registry = DataTypeRegistry()
    >>> registry.register("bool", Bool)
    >>> registry.match_dtype(np.dtype("bool"))
    Bool()
    """

    contents: dict[str, type[Any]] = field(default_factory=dict, init=False)

    def register(self, key: str, cls: type[Any]) -> None:
        """Register ``cls`` under the v3 name ``key`` (again: nothing changes).

        >>> from zarrkit.dtype import Int8
        >>> DataTypeRegistry().register("int8", Int8)
        """
        if self.contents.get(key) is not cls:
            self.contents[key] = cls

    def unregister(self, key: str) -> None:
        """Remove the class registered under ``key``; KeyError if there is none.

        >>> DataTypeRegistry().unregister("int8")
        Traceback (most recent call last):
        KeyError: "Data type 'int8' not found in registry."
        """
        if key not in self.contents:
            raise KeyError(f"Data type '{key}' not found in registry.")
        del self.contents[key]

    def get(self, key: str) -> type[Any]:
        """The class registered under ``key``.

        >>> from zarrkit.dtype import data_type_registry
        >>> data_type_registry.get("float32").__name__
        'Float32'
        """
        return self.contents[key]

    def match_dtype(self, dtype: Any) -> Any:
        """The one registered data type that wraps the native ``dtype``. ValueError for
        numpy's object dtype (strings or bytes: ambiguous) and for none or several
        matches.

        >>> from zarrkit.dtype import data_type_registry
        >>> data_type_registry.match_dtype(np.dtype(">M8[10s]"))
        DateTime64(endianness='big', scale_factor=10, unit='s')
        """
        if isinstance(dtype, np.dtype) and dtype == np.dtype("O"):
            raise ValueError(
                f"Zarr data type resolution from {dtype} failed. Attempted to resolve a zarr "
                'data type from a numpy "Object" data type, which is ambiguous, as multiple '
                'zarr data types can be represented by the numpy "Object" data type. In this '
                "case you should construct your array by providing a specific Zarr data type "
                "(zarrkit.dtype.VariableLengthUTF8() or VariableLengthBytes())."
            )
        matched = []
        for cls in self.contents.values():
            # zarrkit's classes match exactly what their _check_native_dtype accepts: asking
            # it first spares building an exception (and numpy's slow str of the dtype).
            if getattr(cls, "_matches_by_check", False) and not cls._check_native_dtype(dtype):
                continue
            # DataTypeMismatchError means "not this class"; any other error (a matching
            # dtype with an unsupported configuration) is the caller's.
            with contextlib.suppress(DataTypeMismatchError):
                matched.append(cls.from_native_dtype(dtype))
        if len(matched) == 1:
            return matched[0]
        if matched:
            raise ValueError(
                f"Zarr data type resolution from {dtype} failed. Multiple data type wrappers "
                f"found that match dtype '{dtype}': {matched}. Unregister one of them, or "
                "give a specific Zarr data type."
            )
        raise ValueError(f"No Zarr data type found that matches dtype '{dtype!r}'")

    def match_json(self, data: Any, *, zarr_format: int) -> Any:
        """The registered data type whose JSON form in ``zarr_format`` is ``data``.

        >>> from zarrkit.dtype import data_type_registry
        >>> data_type_registry.match_json({"name": "|O", "object_codec_id": "vlen-utf8"},
        ...                               zarr_format=2)
        VariableLengthUTF8()
        """
        for candidate in _v2_spellings(data) if zarr_format == 2 else (data,):
            for cls in self.contents.values():
                with contextlib.suppress(DataTypeMismatchError):
                    return cls.from_json(candidate, zarr_format=zarr_format)
        raise ValueError(f"No Zarr data type found that matches {data!r}")


# The "<" and ">" spellings of single-byte v2 types that other writers use (netCDF-C,
# Zarr.jl, jzarr): the same type as the canonical "|" one.
_V2_SINGLE_BYTE = {f"{order}{code}": f"|{code}" for order in "<>" for code in ("b1", "i1", "u1")}


def _v2_spellings(data: Any) -> tuple[Any, ...]:
    """The v2 JSON as written, then in its canonical spelling if it has another."""
    if isinstance(data, dict) and isinstance(name := data.get("name"), str):
        canonical = _V2_SINGLE_BYTE.get(name)
        if canonical is None and name[:2] in ("<V", ">V") and name[2:].isdigit():
            canonical = f"|{name[1:]}"
        if canonical is not None:
            return (data, {**data, "name": canonical})
    return (data,)


def native_dtype_of(dtype: Any) -> np.dtype[Any]:
    """A native dtype from what numpy takes, lists of field tuples included.

    >>> native_dtype_of([["a", "<i2"]])
    dtype([('a', '<i2')])
    """
    if isinstance(dtype, np.dtype):
        return dtype
    if isinstance(dtype, list):
        return np.dtype([tuple(d) for d in dtype])
    try:
        return np.dtype(dtype)
    except TypeError:
        # Raises zarrkit's UnsupportedDataTypeError naming the value.
        return normalize_dtype(dtype)


data_type_registry = DataTypeRegistry()
"""The registry :func:`zarrkit.dtype.parse_dtype` uses; zarrkit's built-in classes are in it."""
