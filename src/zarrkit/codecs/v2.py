"""The Zarr v2 chunk pipeline: filters in order then the compressor, reversed on read.

It turns one chunk's ndarray into stored bytes and back, and knows nothing of stores. When
it is built, every codec's configuration is checked, and so is the chain against the chunks
it carries (:mod:`zarrkit.codecs.numcodecs_config`); on read, every step (filters included)
decodes into at most the bytes the step before it on write produced, and objects are
counted before they are allocated.

>>> import numpy as np
>>> pipeline = V2ChunkPipeline.build(np.dtype("<i4"), (2, 3), "C",
...     compressor={"id": "zlib", "level": 1}, filters=None)
>>> chunk = np.arange(6, dtype="<i4").reshape(2, 3)
>>> np.array_equal(pipeline.decode(pipeline.encode(chunk), what="0.0"), chunk)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_ndarray_like

from zarrkit.codecs.bounded import decode_bounded, decode_bounded_into
from zarrkit.codecs.gzip_member import encode_with
from zarrkit.codecs.numcodecs_config import Flow, flow_through
from zarrkit.codecs.objects import ObjectDecoder
from zarrkit.codecs.registry import codec_from_config
from zarrkit.errors import ChunkDecodeError


@dataclass(frozen=True)
class _Step:
    """One codec of the chain with what it decodes back into: the flow it was given on
    write, and for a step that gives back objects, the decoder that counts them."""

    codec: Codec
    decoded: Flow
    objects: ObjectDecoder | None


def _steps(dtype: np.dtype[Any], chunk_shape: tuple[int, ...],
           codecs: tuple[Codec, ...], order: str = "C") -> tuple[_Step, ...]:
    """Check ``codecs`` (filters then compressor) against the chunks they carry, and
    record what each one decodes back into."""
    count = math.prod(chunk_shape)
    flow = Flow.of_array(dtype, count)
    steps = []
    for codec in codecs:
        objects = None
        if flow.dtype is not None and flow.dtype.hasobject:
            objects = ObjectDecoder(codec.codec_id, codec, count, flow.dtype, order)
        steps.append(_Step(codec, flow, objects))
        flow = flow_through(codec.codec_id, codec, flow)
    return tuple(steps)


@dataclass(frozen=True)
class V2ChunkPipeline:
    """Encodes and decodes chunks of one v2 array.

    >>> V2ChunkPipeline.build(np.dtype("u1"), (4,), "C", None, None).encode(
    ...     np.arange(4, dtype="u1"))
    b'\\x00\\x01\\x02\\x03'
    """

    dtype: np.dtype[Any]
    chunk_shape: tuple[int, ...]
    order: str
    filters: tuple[Codec, ...]
    compressor: Codec | None
    # Filters then compressor, each with what it decodes into (see _steps); built from the
    # fields above when not given.
    steps: tuple[_Step, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.steps:
            codecs = (*self.filters, *(() if self.compressor is None else (self.compressor,)))
            object.__setattr__(self, "steps", _steps(self.dtype, self.chunk_shape, codecs,
                                                     self.order))

    @classmethod
    def build(
        cls,
        dtype: np.dtype[Any],
        chunk_shape: tuple[int, ...],
        order: str,
        compressor: dict[str, Any] | None,
        filters: tuple[dict[str, Any], ...] | None,
    ) -> V2ChunkPipeline:
        """A pipeline from the JSON configurations stored in ``.zarray``, checked against
        the chunks it will carry.

        >>> V2ChunkPipeline.build(np.dtype("<f8"), (10,), "C", None,
        ...     ({"id": "shuffle", "elementsize": 3},))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: codec 'shuffle': 'elementsize' 3 does not divide the 80 ...
        """
        return cls(
            dtype=dtype,
            chunk_shape=tuple(chunk_shape),
            order=order,
            filters=tuple(codec_from_config(f) for f in filters or ()),
            compressor=codec_from_config(compressor) if compressor else None,
        )

    @property
    def sharding(self) -> None:
        """Format 2 has no sharding (see :class:`zarrkit.codecs.pipeline.ChunkPipeline`)."""
        return None

    @property
    def chunk_nbytes(self) -> int:
        """Size in bytes of one decoded chunk (for fixed-size dtypes)."""
        return math.prod(self.chunk_shape) * self.dtype.itemsize

    @property
    def is_raw(self) -> bool:
        """True when stored bytes are the chunk's bytes unchanged (no codecs, not object)."""
        return not self.filters and self.compressor is None and self.dtype.kind != "O"

    @property
    def decodes_into(self) -> bool:
        """True when :meth:`decode_into` writes a chunk without a chunk-sized temporary
        (no filters, fixed-size items, a blosc compressor, which can decode into a
        buffer), given an ``out`` contiguous in :attr:`order`."""
        return (not self.filters and self.dtype.kind != "O"
                and getattr(self.compressor, "codec_id", None) == "blosc")

    def decode_into(self, data: bytes | memoryview, out: np.ndarray[Any, Any], *, what: str
                    ) -> None:
        """Decode a chunk into ``out``, a writable array of the chunk's shape and dtype.

        >>> p = V2ChunkPipeline.build(np.dtype("<i2"), (2, 2), "F", {"id": "blosc"}, None)
        >>> out = np.empty((2, 2), "<i2", order="F")
        >>> p.decode_into(p.encode(np.array([[1, 2], [3, 4]], "<i2")), out, what="0.0"); out
        array([[1, 2],
               [3, 4]], dtype=int16)
        """
        contiguous = out.flags.f_contiguous if self.order == "F" else out.flags.c_contiguous
        if not (self.decodes_into and contiguous):
            np.copyto(out, self.decode(data, what=what))
            return
        flat = out.reshape(-1, order="A")  # type: ignore[call-overload]
        target = flat.view(np.uint8).data
        if self.compressor is not None and decode_bounded_into(
                self.compressor, data, target, what=what):
            return
        decoded = data if self.compressor is None else decode_bounded(
            self.compressor, data, target.nbytes, what=what, exact=True)
        source = memoryview(ensure_ndarray_like(decoded)).cast("B")
        if source.nbytes != target.nbytes:
            raise ChunkDecodeError(
                f"{what}: decoded to {source.nbytes} bytes, expected {target.nbytes} bytes "
                f"for chunk shape {self.chunk_shape} of {self.dtype}"
            )
        target[:] = source

    def encode(self, chunk: np.ndarray[Any, Any]) -> bytes:
        """Stored bytes for a chunk-shaped array."""
        data: Any = chunk
        if self.order == "F":
            data = np.asfortranarray(data)
        else:
            data = np.ascontiguousarray(data)
        for codec in self.filters:
            data = codec.encode(data)
        if self.compressor is not None:
            data = encode_with(self.compressor, data)
        if isinstance(data, np.ndarray):
            if data.dtype.kind == "O":
                raise ChunkDecodeError(
                    "object arrays need an object codec filter such as vlen-utf8, "
                    "vlen-bytes or json2"
                )
            return data.tobytes(order="A")
        return bytes(data)

    def decode(self, data: bytes | memoryview, *, what: str) -> np.ndarray[Any, Any]:
        """A chunk-shaped array from stored bytes; ``what`` names the chunk in errors.

        >>> import numcodecs
        >>> p = V2ChunkPipeline.build(np.dtype("u1"), (10,), "C", None, ({"id": "zstd"},))
        >>> p.decode(numcodecs.Zstd().encode(bytes(1000)), what="0")
        Traceback (most recent call last):
        zarrkit.errors.ChunkDecodeError: 0: decodes to more than the expected 10 bytes
        """
        decoded: Any = data
        for step in reversed(self.steps):
            if step.objects is not None:
                decoded = step.objects(decoded, what)
            else:
                decoded = decode_bounded(step.codec, decoded, step.decoded.decoded_limit,
                                         what=what, exact=step.decoded.nbytes is not None)
        if self.dtype.hasobject:  # objects, or a structured dtype with object fields
            array = np.asarray(decoded)
            if array.dtype != self.dtype or array.size != math.prod(self.chunk_shape):
                raise ChunkDecodeError(
                    f"{what}: decoded {array.size} items of {array.dtype}, expected "
                    f"{math.prod(self.chunk_shape)} objects"
                )
            return array.reshape(self.chunk_shape, order=self.order)  # type: ignore[call-overload,no-any-return]
        expected = self.chunk_nbytes
        raw = ensure_ndarray_like(decoded)
        if raw.nbytes != expected:
            raise ChunkDecodeError(
                f"{what}: decoded to {raw.nbytes} bytes, expected {expected} bytes "
                f"for chunk shape {self.chunk_shape} of {self.dtype}"
            )
        flat = np.ascontiguousarray(raw).reshape(-1).view(np.uint8).view(self.dtype)
        return flat.reshape(self.chunk_shape, order=self.order)  # type: ignore[call-overload,no-any-return]
