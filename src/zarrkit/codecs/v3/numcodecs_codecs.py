"""Codecs that zarr-python stores as ``numcodecs.<id>``, run by numcodecs itself.

Filters (delta, fixedscaleoffset, astype, quantize, bitround, packbits, categorize) are
``array -> array``; object serialisers and numeric array compressors (json2, msgpack2,
vlen-*, pcodec, zfpy) are ``array -> bytes``; every other id (compressors, checksums,
shuffle) is ``bytes -> bytes``. ``numcodecs.pickle`` is refused: decoding it would run
arbitrary code from the store.

>>> import numpy as np
>>> from zarrkit.codecs.v3.spec import ChunkSpec
>>> codec = numcodecs_codec("numcodecs.zlib", {"level": 1}, ChunkSpec((4,), np.dtype("u1")))
>>> codec.kind, codec.to_json()
('bytes -> bytes', {'name': 'numcodecs.zlib', 'configuration': {'level': 1}})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrkit.codecs.bounded import as_bytes_view, decode_bounded
from zarrkit.codecs.gzip_member import encode_with
from zarrkit.codecs.numcodecs_config import (
    ARRAY_FILTERS,
    FIXED_GROWTH,
    NUMERIC_SERIALISERS,
    OBJECT_CODECS,
    Flow,
    flow_through,
)
from zarrkit.codecs.objects import ObjectDecoder
from zarrkit.codecs.registry import numcodecs_from_config
from zarrkit.codecs.v3.base import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, Codec
from zarrkit.codecs.v3.spec import ChunkSpec
from zarrkit.errors import ChunkDecodeError, MetadataError

PREFIX = "numcodecs."


def numcodecs_codec(name: str, configuration: Mapping[str, Any], spec: ChunkSpec) -> Codec:
    """The v3 codec for a ``numcodecs.<id>`` name, of the kind its id implies.

    >>> numcodecs_codec("numcodecs.nope", {}, ChunkSpec((1,), np.dtype("u1")))
    Traceback (most recent call last):
    zarrkit.errors.UnknownCodecError: unknown codec 'numcodecs.nope'
    """
    codec_id = name.removeprefix(PREFIX)
    if "id" in configuration:
        raise MetadataError(f"codec {name!r}: the configuration cannot contain 'id'")
    codec = numcodecs_from_config(name, codec_id, dict(configuration))
    if codec_id in ARRAY_FILTERS:
        return NumcodecsArrayArrayCodec(name, configuration, codec, spec)
    if codec_id in OBJECT_CODECS or codec_id in NUMERIC_SERIALISERS:
        return NumcodecsArrayBytesCodec(name, configuration, codec, spec)
    return NumcodecsBytesBytesCodec(name, configuration, codec, spec)


class _Adapter:
    """The name and configuration as given, so ``to_json`` writes them back unchanged."""

    name: str
    _configuration: dict[str, Any]

    def configuration(self) -> dict[str, Any]:
        """The configuration as given."""
        return dict(self._configuration)

    def to_json(self) -> dict[str, Any]:
        """``{"name": "numcodecs.<id>", "configuration": {...}}``."""
        return {"name": self.name, "configuration": self.configuration()}


def _decode_error(name: str, what: str, e: Exception) -> ChunkDecodeError:
    return ChunkDecodeError(f"{what}: cannot decode with {name}: {e}")


class NumcodecsArrayArrayCodec(_Adapter, ArrayArrayCodec):
    """A numcodecs filter: shape kept (packbits: packed to ``1 + ceil(n / 8)`` bytes), data
    type per its ``astype``/``encode_dtype``.

    >>> codec = numcodecs_codec("numcodecs.fixedscaleoffset",
    ...     {"offset": 0, "scale": 10, "dtype": "<f8", "astype": "<u2"},
    ...     ChunkSpec((2,), np.dtype("f8")))
    >>> codec.encode(np.array([0.5, 1.0]))
    array([ 5, 10], dtype=uint16)
    """

    def __init__(
        self, name: str, configuration: Mapping[str, Any], codec: Any, spec: ChunkSpec
    ) -> None:
        ArrayArrayCodec.__init__(self, configuration, spec)
        self.name = name  # type: ignore[misc]
        self._configuration = dict(configuration)
        self.codec = codec
        encoded = flow_through(name, codec, Flow.of_array(spec.dtype, spec.size))
        assert encoded.dtype is not None and encoded.count is not None  # an array filter's
        dtype = encoded.dtype
        shape = spec.shape if encoded.count == spec.size else (encoded.count,)  # packbits
        declared = getattr(codec, "decode_dtype", None) or getattr(codec, "dtype", None)
        try:
            fill = np.asarray(codec.encode(np.full(1, spec.fill_value, dtype=spec.dtype)))
            fill_value = fill.reshape(-1)[0] if fill.size else None
        except Exception:  # a fill the filter cannot represent only affects empty-chunk checks
            fill_value = None
        self._encoded = ChunkSpec(shape, dtype, fill_value if dtype.kind != "O" else None)
        # numcodecs reinterprets buffers in the dtypes it is configured with (which may be
        # big-endian) rather than converting, so hand it arrays in exactly those dtypes.
        self._codec_input = np.dtype(declared) if declared is not None else None
        stored = getattr(codec, "encode_dtype", None) or getattr(codec, "astype", None)
        self._codec_output = np.dtype(stored) if stored is not None else self._codec_input

    def encoded_spec(self) -> ChunkSpec:
        """The spec of the filtered array."""
        return self._encoded

    def encode(self, chunk: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """The filtered chunk."""
        if self._codec_input is not None:
            chunk = chunk.astype(self._codec_input, copy=False)
        out = np.asarray(self.codec.encode(np.ascontiguousarray(chunk)))
        return out.reshape(self._encoded.shape).astype(self._encoded.dtype, copy=False)

    def decode(self, chunk: np.ndarray[Any, Any], *, what: str) -> np.ndarray[Any, Any]:
        """The unfiltered chunk."""
        try:
            if self._codec_output is not None and chunk.dtype.kind != "O":
                chunk = chunk.astype(self._codec_output, copy=False)
            out = np.asarray(self.codec.decode(np.ascontiguousarray(chunk)))
            if out.size != self.spec.size:
                raise ValueError(f"decoded {out.size} items, expected {self.spec.size}")
            out = out.reshape(self.spec.shape)
            if out.dtype != self.spec.dtype:
                out = out.astype(self.spec.dtype)
        except Exception as e:  # a filter failing on stored data means a corrupt chunk
            raise _decode_error(self.name, what, e) from e
        return out if out.flags.writeable else out.copy()


class NumcodecsArrayBytesCodec(_Adapter, ArrayBytesCodec):
    """A numcodecs serialiser (object codecs, pcodec, zfpy).

    >>> codec = numcodecs_codec("numcodecs.json2", {}, ChunkSpec((2,), np.dtype("O"), None))
    >>> codec.decode(codec.encode(np.array([1, "a"], dtype=object)), what="c/0").tolist()
    [1, 'a']
    """

    def __init__(
        self, name: str, configuration: Mapping[str, Any], codec: Any, spec: ChunkSpec
    ) -> None:
        ArrayBytesCodec.__init__(self, configuration, spec)
        self.name = name  # type: ignore[misc]
        self._configuration = dict(configuration)
        self.codec = codec
        flow_through(name, codec, Flow.of_array(spec.dtype, spec.size))
        self._objects = (ObjectDecoder(name, codec, spec.size)
                         if codec.codec_id in OBJECT_CODECS else None)

    def encode(self, chunk: np.ndarray[Any, Any]) -> bytes:
        """The serialised chunk; MetadataError for object items the codec does not take
        (a document may pair a text codec with the ``bytes`` data type)."""
        data = np.ascontiguousarray(chunk)
        if data.dtype.kind != "O":
            return bytes(as_bytes_view(self.codec.encode(data)))
        try:
            return bytes(as_bytes_view(self.codec.encode(data.reshape(-1))))
        except (TypeError, ValueError) as e:
            raise MetadataError(f"codec {self.name!r} cannot encode the array's items "
                                f"({e}): it does not suit the array's data type") from e

    def decode(self, data: bytes | memoryview, *, what: str) -> np.ndarray[Any, Any]:
        """The chunk, reshaped and cast to the spec."""
        if self._objects is not None:  # counted before anything is allocated
            return self._objects(data, what).reshape(self.spec.shape)
        try:
            out = np.asarray(self.codec.decode(data))
            if self.spec.dtype.kind == "O" and out.dtype.kind != "O":
                out = out.astype(object)
            if out.size != self.spec.size:
                raise ValueError(f"decoded {out.size} items, expected {self.spec.size}")
            out = out.reshape(self.spec.shape)
            if out.dtype != self.spec.dtype:
                out = out.astype(self.spec.dtype)
        except Exception as e:  # any failure on stored bytes is a corrupt chunk
            raise _decode_error(self.name, what, e) from e
        return out if out.flags.writeable else out.copy()


class NumcodecsBytesBytesCodec(_Adapter, BytesBytesCodec):
    """A numcodecs compressor or checksum, decoded with a size bound.

    >>> codec = numcodecs_codec("numcodecs.crc32", {}, ChunkSpec((3,), np.dtype("u1")))
    >>> codec.encoded_size(3), bytes(codec.decode(codec.encode(b"abc"), what="c/0",
    ...     limit=3, exact=True))
    (7, b'abc')
    """

    def __init__(
        self, name: str, configuration: Mapping[str, Any], codec: Any, spec: ChunkSpec
    ) -> None:
        BytesBytesCodec.__init__(self, configuration, spec)
        self.name = name  # type: ignore[misc]
        self._configuration = dict(configuration)
        self.codec = codec
        self._growth = FIXED_GROWTH.get(codec.codec_id)

    def check_input_size(self, size: int | None, bound: int) -> None:
        """Refuse what this codec cannot encode (a shuffle element size that does not
        divide the bytes it is given).

        >>> codec = numcodecs_codec("numcodecs.shuffle", {"elementsize": 8},
        ...     ChunkSpec((3,), np.dtype("u1")))
        >>> codec.check_input_size(12, 12)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: codec 'numcodecs.shuffle': 'elementsize' 8 does not ...
        """
        flow_through(self.name, self.codec, Flow.of_bytes(size, bound))

    def encoded_size(self, size: int) -> int | None:
        """Exact for checksums and shuffle, else None."""
        return None if self._growth is None else size + self._growth

    def encode(self, data: bytes) -> bytes:
        """The encoded bytes."""
        return bytes(as_bytes_view(encode_with(self.codec, np.frombuffer(data, dtype=np.uint8))))

    def decode(
        self, data: bytes | memoryview, *, what: str, limit: int, exact: bool
    ) -> bytes | memoryview:
        """The decoded bytes, at most ``limit`` of them."""
        return as_bytes_view(decode_bounded(self.codec, data, limit, what=what, exact=exact))
