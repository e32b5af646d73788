"""``ZDType``: the base class of zarr-python 3's data type classes, for :mod:`zarrkit.dtype`.

A ``ZDType`` wraps a native (numpy) data type and knows its Zarr v2 and v3 JSON forms and
the JSON form of its scalars (fill values). The classes of :mod:`zarrkit.dtype` derive all
of that from zarrkit's metadata layer (:mod:`zarrkit.metadata.dtypes_v3`,
:mod:`zarrkit.metadata.dtypes`, :mod:`zarrkit.metadata.fill_value`), which parses and
writes array metadata: one source of truth for what a data type and its fill value look
like in a document.

>>> from zarrkit.dtype import Int8
>>> isinstance(Int8(), ZDType)
True
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

TBaseDType = np.dtype[Any]
TBaseScalar = np.generic | str | bytes

DType = TypeVar("DType", bound=np.dtype[Any])
Scalar = TypeVar("Scalar")


@dataclass(frozen=True, kw_only=True)
class ZDType(ABC, Generic[DType, Scalar]):
    """A Zarr data type: a native dtype with its JSON forms and its scalars' JSON forms.

    ``dtype_cls`` is the numpy dtype class it wraps, ``_zarr_v3_name`` its Zarr v3 name.

    >>> from zarrkit.dtype import Float32
    >>> Float32.from_native_dtype(np.dtype(">f4"))
    Float32(endianness='big')
    """

    # A numpy dtype class (some are generic in numpy's stubs, hence Any).
    dtype_cls: ClassVar[Any]
    _zarr_v3_name: ClassVar[str]

    @classmethod
    def _check_native_dtype(cls, dtype: Any) -> bool:
        """Whether ``dtype`` is of the class this data type wraps."""
        return type(dtype) is cls.dtype_cls

    @classmethod
    @abstractmethod
    def from_native_dtype(cls, dtype: Any) -> Any:
        """This data type from a native dtype; :class:`~zarrkit.errors.DataTypeMismatchError` if the
        dtype is not the one it wraps."""

    @abstractmethod
    def to_native_dtype(self) -> DType:
        """The native dtype (the inverse of :meth:`from_native_dtype`)."""

    @classmethod
    @abstractmethod
    def _from_json_v2(cls, data: Any) -> Any:
        """This data type from its v2 ``{"name", "object_codec_id"}`` form."""

    @classmethod
    @abstractmethod
    def _from_json_v3(cls, data: Any) -> Any:
        """This data type from its v3 ``data_type`` form."""

    @classmethod
    def from_json(cls, data: Any, *, zarr_format: int) -> Any:
        """This data type from its JSON form in ``zarr_format``.

        >>> from zarrkit.dtype import Int16
        >>> Int16.from_json({"name": ">i2", "object_codec_id": None}, zarr_format=2)
        Int16(endianness='big')
        """
        if zarr_format == 2:
            return cls._from_json_v2(data)
        if zarr_format == 3:
            return cls._from_json_v3(data)
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format}")

    @abstractmethod
    def to_json(self, zarr_format: int) -> Any:
        """The JSON form in ``zarr_format``: ``{"name", "object_codec_id"}`` for 2, the
        ``data_type`` value for 3."""

    @abstractmethod
    def _check_scalar(self, data: object) -> bool:
        """Whether ``data`` can be cast to a scalar of this data type."""

    @abstractmethod
    def cast_scalar(self, data: object) -> Scalar:
        """``data`` as a scalar of this data type."""

    @abstractmethod
    def default_scalar(self) -> Scalar:
        """The scalar of an array created without a fill value."""

    @abstractmethod
    def from_json_scalar(self, data: Any, *, zarr_format: int) -> Scalar:
        """A scalar from its JSON form (a fill value) in ``zarr_format``."""

    @abstractmethod
    def to_json_scalar(self, data: object, *, zarr_format: int) -> Any:
        """The JSON form (as a fill value) of ``data`` in ``zarr_format``."""


def scalar_failed_type_check_msg(cls_instance: Any, bad_scalar: object) -> str:
    """The message of a value that is no scalar of a data type.

    >>> from zarrkit.dtype import Bool
    >>> scalar_failed_type_check_msg(Bool(), [1])[:29]
    'The value [1] failed a type c'
    """
    return (
        f"The value {bad_scalar!r} failed a type check. It cannot be safely cast to a "
        f"scalar compatible with {cls_instance}."
    )


__all__ = ["TBaseDType", "TBaseScalar", "ZDType", "scalar_failed_type_check_msg"]
