"""The ``array -> array`` and ``array -> bytes`` codecs of the spec and its extensions:
``bytes``, ``transpose``, ``scale_offset``, ``vlen-utf8`` and ``vlen-bytes``.

>>> import numpy as np
>>> from zarrkit.codecs.v3.spec import ChunkSpec
>>> codec = BytesCodec({"endian": "big"}, ChunkSpec((2,), np.dtype("u2")))
>>> bytes(codec.encode(np.array([1, 2], dtype="u2")))
b'\\x00\\x01\\x00\\x02'
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import Any

import numcodecs
import numpy as np

from zarrkit.codecs.objects import check_vlen_header
from zarrkit.codecs.v3.base import (
    ArrayArrayCodec,
    ArrayBytesCodec,
    check_keys,
    config_choice,
)
from zarrkit.codecs.v3.spec import ChunkSpec
from zarrkit.errors import ChunkDecodeError, MetadataError
from zarrkit.metadata.dtypes import has_endianness

NATIVE_ENDIAN = sys.byteorder


def readable_array(data: bytes | memoryview, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """``data`` as a flat array of ``dtype``, without a copy when the buffer is writable.

    >>> readable_array(bytearray(b"\\x01\\x00"), np.dtype("<u2"))
    array([1], dtype=uint16)
    """
    return np.frombuffer(data, dtype=dtype)


class BytesCodec(ArrayBytesCodec):
    """``bytes``: elements in C order, in the configured byte order.

    ``endian`` is required for data types with a byte order and ignored (and not written
    back) for single-byte ones, as zarr-python does.

    >>> spec = ChunkSpec((2,), np.dtype("i4"))
    >>> BytesCodec({}, spec)
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'bytes': 'endian' is required for data type int32
    >>> BytesCodec({"endian": "little"}, spec).to_json()
    {'name': 'bytes', 'configuration': {'endian': 'little'}}
    """

    name = "bytes"

    def __init__(self, configuration: Mapping[str, Any], spec: ChunkSpec) -> None:
        super().__init__(configuration, spec)
        check_keys(self.name, configuration, {"endian"})
        if spec.dtype.kind == "O":
            raise MetadataError(
                "codec 'bytes' cannot encode a variable-length data type; "
                "use 'vlen-utf8' or 'vlen-bytes'"
            )
        endian = None
        if "endian" in configuration:
            endian = config_choice(self.name, configuration, "endian", ("little", "big"))
        if has_endianness(spec.dtype):
            if endian is None and spec.dtype.fields is not None:
                # zarr-python 3.1 writes structured arrays with no endian and means little.
                endian = "little"
            if endian is None:
                raise MetadataError(
                    f"codec 'bytes': 'endian' is required for data type {spec.dtype}"
                )
            self.endian: str | None = endian
            self.stored_dtype = spec.dtype.newbyteorder("<" if endian == "little" else ">")
        else:
            self.endian = None
            self.stored_dtype = spec.dtype
        self.swaps = self.endian is not None and self.endian != NATIVE_ENDIAN
        self._nbytes = spec.size * spec.dtype.itemsize

    def configuration(self) -> dict[str, Any] | None:
        """``{"endian": ...}``, or None for single-byte data types."""
        return None if self.endian is None else {"endian": self.endian}

    def encoded_size(self) -> int:
        """Always ``prod(shape) * itemsize``.

        >>> BytesCodec({}, ChunkSpec((3, 4), np.dtype("u1"))).encoded_size()
        12
        """
        return self._nbytes

    def encode(self, chunk: np.ndarray[Any, Any]) -> bytes:
        """The chunk's elements in C order and the configured byte order.

        >>> bytes(BytesCodec({}, ChunkSpec((2,), np.dtype("u1"))).encode(np.array([3, 4], "u1")))
        b'\\x03\\x04'
        """
        array = np.asarray(chunk)
        if self.swaps:
            array = array.astype(self.stored_dtype, order="C")
        elif not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)
        # The chunk's own memory, not a copy: the next codec or the store reads it at once.
        return array.reshape(-1).view(np.uint8).data  # type: ignore[return-value]

    def decode(self, data: bytes | memoryview, *, what: str) -> np.ndarray[Any, Any]:
        """A native-order array: a zero-copy view of ``data`` when no byte swap is needed
        (read-only when ``data`` is), so reads pay no copy; writers copy if they must.

        >>> BytesCodec({}, ChunkSpec((2,), np.dtype("u1"))).decode(b"\\x01", what="c/0")
        Traceback (most recent call last):
        zarrkit.errors.ChunkDecodeError: c/0: 1 bytes, expected 2 for shape (2,) of uint8
        """
        nbytes = memoryview(data).nbytes
        if nbytes != self._nbytes:
            raise ChunkDecodeError(
                f"{what}: {nbytes} bytes, expected {self._nbytes} "
                f"for shape {self.spec.shape} of {self.spec.dtype}"
            )
        array = readable_array(data, self.stored_dtype)
        if self.swaps:
            array = array.astype(self.spec.dtype)
        return array.reshape(self.spec.shape)


class TransposeCodec(ArrayArrayCodec):
    """``transpose``: permutes the chunk's axes (``order`` as a list; the old ``"C"`` and
    ``"F"`` forms are read as the identity and the reversal).

    >>> codec = TransposeCodec({"order": [1, 0]}, ChunkSpec((2, 3), np.dtype("u1")))
    >>> codec.encoded_spec().shape, codec.encode(np.zeros((2, 3), "u1")).shape
    ((3, 2), (3, 2))
    """

    name = "transpose"

    def __init__(self, configuration: Mapping[str, Any], spec: ChunkSpec) -> None:
        super().__init__(configuration, spec)
        check_keys(self.name, configuration, {"order"})
        ndim = len(spec.shape)
        order = configuration.get("order")
        if order == "C":
            order = list(range(ndim))
        elif order == "F":
            order = list(range(ndim))[::-1]
        valid = (
            isinstance(order, list | tuple)
            and all(isinstance(i, int) and not isinstance(i, bool) for i in order)
            and sorted(order) == list(range(ndim))
        )
        if not valid:
            raise MetadataError(
                f"codec 'transpose': 'order' must be a permutation of 0..{ndim - 1}, "
                f"found {order!r}"
            )
        self.order = tuple(int(i) for i in order)  # type: ignore[union-attr]
        self.inverse = tuple(int(i) for i in np.argsort(self.order))
        self._encoded = spec.evolve(shape=tuple(spec.shape[i] for i in self.order))

    def configuration(self) -> dict[str, Any]:
        """``{"order": [...]}`` as an explicit permutation."""
        return {"order": list(self.order)}

    def encoded_spec(self) -> ChunkSpec:
        """The spec with permuted shape."""
        return self._encoded

    def encode(self, chunk: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """A transposed view of ``chunk``."""
        return np.transpose(chunk, self.order)

    def decode(self, chunk: np.ndarray[Any, Any], *, what: str) -> np.ndarray[Any, Any]:
        """The chunk in its original axis order (a view)."""
        if chunk.shape != self._encoded.shape:
            raise ChunkDecodeError(
                f"{what}: transpose got shape {chunk.shape}, expected {self._encoded.shape}"
            )
        return np.transpose(chunk, self.inverse)


def _parse_real(name: str, key: str, value: Any, dtype: np.dtype[Any]) -> Any:
    """A JSON number (in the fill-value encoding of ``dtype``) as a scalar of ``dtype``;
    for an integer type, one the type holds (beyond it, no chunk could be encoded). Float
    types keep NaN and infinities, which decode (an infinite scale reads every value as
    the offset) though they make finite values overflow on write.

    >>> _parse_real("scale_offset", "offset", 300, np.dtype("i1"))
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'scale_offset': 'offset' is not a valid int8 value: 300
    """
    number = _parse_number(value, dtype)
    if number is not None and (dtype.kind == "f" or (
            int(np.iinfo(dtype).min) <= number <= int(np.iinfo(dtype).max))):
        return number
    raise MetadataError(f"codec {name!r}: {key!r} is not a valid {dtype} value: {value!r}")


def _parse_number(value: Any, dtype: np.dtype[Any]) -> Any:
    """``value`` as a scalar of ``dtype`` (a Python int for integer types), or None."""
    if dtype.kind == "f":
        if isinstance(value, str):
            specials = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
            if value in specials:
                return dtype.type(specials[value])
            if value.startswith("0x"):
                try:
                    bits = int(value, 16)
                    return np.array(bits, dtype=f"u{dtype.itemsize}").view(dtype)[()]
                except (ValueError, OverflowError):
                    pass
        elif isinstance(value, int | float) and not isinstance(value, bool):
            with np.errstate(over="ignore"):  # an overflow to inf is refused by the caller
                return dtype.type(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if math.isfinite(value) and float(value).is_integer():
            return int(value)
    return None


class ScaleOffsetCodec(ArrayArrayCodec):
    """``scale_offset``: encodes ``(x - offset) * scale`` and decodes ``x / scale + offset``
    in the array's own data type (real numbers only). A result the data type cannot hold
    (float overflow, integer overflow, inexact integer division) is an error.

    >>> codec = ScaleOffsetCodec({"offset": 1.0, "scale": 2.0}, ChunkSpec((2,), np.dtype("f8")))
    >>> codec.encode(np.array([0.0, 0.5]))
    array([-2., -1.])
    >>> codec.decode(np.array([-2.0, -1.0]), what="c/0")
    array([0. , 0.5])
    """

    name = "scale_offset"

    def __init__(self, configuration: Mapping[str, Any], spec: ChunkSpec) -> None:
        super().__init__(configuration, spec)
        check_keys(self.name, configuration, {"offset", "scale"})
        if spec.dtype.kind not in "iuf":
            raise MetadataError(
                f"codec 'scale_offset' needs a real-number data type, not {spec.dtype}"
            )
        self._json = dict(configuration)
        self.offset = _parse_real(self.name, "offset", configuration.get("offset", 0), spec.dtype)
        self.scale = _parse_real(self.name, "scale", configuration.get("scale", 1), spec.dtype)
        if self.scale == 0:
            raise MetadataError("codec 'scale_offset': 'scale' cannot be zero")
        try:
            fill = self.encode(np.asarray(spec.fill_value, dtype=spec.dtype))[()]
        except ValueError:
            fill = spec.fill_value
        self._encoded = spec.evolve(fill_value=fill)

    def configuration(self) -> dict[str, Any] | None:
        """The configuration as given (None when it was empty)."""
        return self._json or None

    def encoded_spec(self) -> ChunkSpec:
        """The same shape and dtype; the fill value passed through the codec."""
        return self._encoded

    def _integer(self, values: np.ndarray[Any, Any], encode: bool, what: str) -> Any:
        dtype = self.spec.dtype
        info = np.iinfo(dtype)
        bound = (max(abs(info.min), abs(info.max)) + abs(self.offset)) * abs(self.scale)
        work: np.ndarray[Any, Any] = values.astype(np.int64 if bound < 2**62 else object)
        if encode:
            out = (work - self.offset) * self.scale
        else:
            quotient = work // self.scale  # np.divmod has no object loop
            if np.any(quotient * self.scale != work):
                raise ChunkDecodeError(f"{what}: scale_offset: value not divisible by scale")
            out = quotient + self.offset
        out = np.asarray(out)  # 0-d arithmetic yields scalars
        if out.size and (out.min() < info.min or out.max() > info.max):
            message = f"scale_offset: result does not fit in {dtype}"
            if encode:
                raise ValueError(message)
            raise ChunkDecodeError(f"{what}: {message}")
        return out.astype(dtype)

    def _float(self, values: np.ndarray[Any, Any], encode: bool, what: str) -> Any:
        with np.errstate(all="ignore"):
            if encode:
                out = (values - self.offset) * self.scale
            else:
                out = values / self.scale + self.offset
        if np.any(np.isfinite(values) & ~np.isfinite(out)):
            message = f"scale_offset: result overflows {self.spec.dtype}"
            if encode:
                raise ValueError(message)
            raise ChunkDecodeError(f"{what}: {message}")
        return out

    def encode(self, chunk: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """``(chunk - offset) * scale``; ValueError if the data type cannot hold it."""
        values = np.asarray(chunk, dtype=self.spec.dtype)
        if self.spec.dtype.kind == "f":
            return np.asarray(self._float(values, True, ""))
        return np.asarray(self._integer(values, True, ""))

    def decode(self, chunk: np.ndarray[Any, Any], *, what: str) -> np.ndarray[Any, Any]:
        """``chunk / scale + offset``."""
        values = np.asarray(chunk, dtype=self.spec.dtype)
        if self.spec.dtype.kind == "f":
            return np.asarray(self._float(values, False, what))
        return np.asarray(self._integer(values, False, what))


class _VLenCodec(ArrayBytesCodec):
    """Shared by vlen-utf8 and vlen-bytes: a u32le item count, then u32le-length-prefixed
    items in C order (the numcodecs VLen format, whose C implementation does the work)."""

    _numcodecs: Any = None

    def __init__(self, configuration: Mapping[str, Any], spec: ChunkSpec) -> None:
        super().__init__(configuration, spec)
        check_keys(self.name, configuration, set())
        if spec.dtype.kind != "O":
            raise MetadataError(
                f"codec {self.name!r} needs a variable-length (object) data type, "
                f"not {spec.dtype}"
            )

    def configuration(self) -> dict[str, Any]:
        """Always ``{}`` (zarr-python writes the empty object)."""
        return {}

    def encode(self, chunk: np.ndarray[Any, Any]) -> bytes:
        """The length-prefixed items; MetadataError for items the codec does not take
        (bytes for vlen-utf8: a document may pair it with the ``bytes`` data type)."""
        flat = np.asarray(chunk, dtype=object).reshape(-1)
        try:
            return bytes(self._numcodecs.encode(flat))
        except (TypeError, ValueError) as e:
            raise MetadataError(f"codec {self.name!r} cannot encode the array's items "
                                f"({e}): it does not suit the array's data type") from e

    def decode(self, data: bytes | memoryview, *, what: str) -> np.ndarray[Any, Any]:
        """An object array of the spec's shape."""
        # The header is checked first: numcodecs would allocate an object array of whatever
        # size a corrupt one claims.
        view = check_vlen_header(data, self.spec.size, self.name, what)
        try:
            items = self._numcodecs.decode(view)
        except Exception as e:  # truncated data, invalid UTF-8
            raise ChunkDecodeError(f"{what}: cannot decode {self.name}: {e}") from e
        return np.asarray(items, dtype=object).reshape(self.spec.shape)


class VLenUTF8Codec(_VLenCodec):
    """``vlen-utf8``: variable-length strings.

    >>> codec = VLenUTF8Codec({}, ChunkSpec((2,), np.dtype("O"), ""))
    >>> data = codec.encode(np.array(["a", "é"], dtype=object))
    >>> data
    b'\\x02\\x00\\x00\\x00\\x01\\x00\\x00\\x00a\\x02\\x00\\x00\\x00\\xc3\\xa9'
    >>> codec.decode(data, what="c/0").tolist()
    ['a', 'é']
    """

    name = "vlen-utf8"
    _numcodecs = numcodecs.VLenUTF8()


class VLenBytesCodec(_VLenCodec):
    """``vlen-bytes``: variable-length byte strings.

    >>> codec = VLenBytesCodec({}, ChunkSpec((1,), np.dtype("O"), b""))
    >>> codec.decode(codec.encode(np.array([b"xy"], dtype=object)), what="c/0").tolist()
    [b'xy']
    """

    name = "vlen-bytes"
    _numcodecs = numcodecs.VLenBytes()
