"""The Zarr v3 codec pipeline: ``array -> array`` codecs, one ``array -> bytes`` codec, then
``bytes -> bytes`` codecs, applied in order on write and in reverse on read.

>>> import numpy as np
>>> from zarrkit.codecs.v3.spec import ChunkSpec
>>> spec = ChunkSpec((2, 3), np.dtype("i4"), 0)
>>> pipeline = CodecPipelineV3.from_json(
...     [{"name": "bytes", "configuration": {"endian": "little"}},
...      {"name": "zstd", "configuration": {"level": 1}}], spec)
>>> chunk = np.arange(6, dtype="i4").reshape(2, 3)
>>> np.array_equal(pipeline.decode(pipeline.encode(chunk), what="c/0/0"), chunk)
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from zarrkit import registry
from zarrkit.codecs.bounded import UNBOUNDED_CHUNK_LIMIT as UNBOUNDED_CHUNK_LIMIT
from zarrkit.codecs.v3.array_codecs import NATIVE_ENDIAN, BytesCodec
from zarrkit.codecs.v3.base import (
    ArrayArrayCodec,
    ArrayBytesCodec,
    BytesBytesCodec,
    Codec,
    parse_codec_entry,
)
from zarrkit.codecs.v3.numcodecs_codecs import PREFIX, numcodecs_codec
from zarrkit.codecs.v3.spec import ChunkSpec
from zarrkit.errors import ChunkDecodeError, MetadataError, UnknownCodecError

if TYPE_CHECKING:
    from zarrkit.codecs.v3.sharding import ShardingCodec



def build_codec(entry: Any, spec: ChunkSpec, *, after_array_bytes: bool) -> Codec:
    """One codec from its JSON form, validated against the spec of its input.

    An unknown codec marked ``"must_understand": false`` becomes a pass-through that is
    written back unchanged.

    >>> build_codec({"name": "nope"}, ChunkSpec((1,), np.dtype("u1")), after_array_bytes=False)
    Traceback (most recent call last):
    zarrkit.errors.UnknownCodecError: unknown codec 'nope'
    """
    name, configuration, must_understand = parse_codec_entry(entry)
    factory = registry.codecs.get(name)
    if factory is not None:
        codec = cast(Any, factory)(configuration, spec)
    elif name.startswith(PREFIX):
        codec = numcodecs_codec(name, configuration, spec)
    elif not must_understand:
        kind = PassThroughBytes if after_array_bytes else PassThroughArray
        return kind(dict(entry), spec)
    else:
        raise UnknownCodecError(f"unknown codec {name!r}")
    if not isinstance(codec, ArrayArrayCodec | ArrayBytesCodec | BytesBytesCodec):
        raise MetadataError(f"the factory for codec {name!r} returned {codec!r}, not a codec")
    return codec


class PassThroughArray(ArrayArrayCodec):
    """An ignorable (``must_understand: false``) codec we do not know, before the
    ``array -> bytes`` codec: the identity, written back as found.

    >>> PassThroughArray({"name": "x", "must_understand": False},
    ...     ChunkSpec((1,), np.dtype("u1"))).to_json()
    {'name': 'x', 'must_understand': False}
    """

    def __init__(self, entry: Mapping[str, Any], spec: ChunkSpec) -> None:
        super().__init__({}, spec)
        self._entry = dict(entry)

    def to_json(self) -> dict[str, Any]:
        """The codec's JSON exactly as found."""
        return dict(self._entry)

    def encode(self, chunk: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """``chunk`` unchanged."""
        return chunk

    def decode(self, chunk: np.ndarray[Any, Any], *, what: str) -> np.ndarray[Any, Any]:
        """``chunk`` unchanged."""
        return chunk


class PassThroughBytes(BytesBytesCodec):
    """An ignorable codec we do not know, after the ``array -> bytes`` codec.

    >>> PassThroughBytes({"name": "x", "must_understand": False},
    ...     ChunkSpec((1,), np.dtype("u1"))).encoded_size(5)
    5
    """

    def __init__(self, entry: Mapping[str, Any], spec: ChunkSpec) -> None:
        super().__init__({}, spec)
        self._entry = dict(entry)

    def to_json(self) -> dict[str, Any]:
        """The codec's JSON exactly as found."""
        return dict(self._entry)

    def encoded_size(self, size: int) -> int:
        """``size``: the bytes are unchanged."""
        return size

    def encode(self, data: bytes) -> bytes:
        """``data`` unchanged."""
        return data

    def decode(
        self, data: bytes | memoryview, *, what: str, limit: int, exact: bool
    ) -> bytes | memoryview:
        """``data`` unchanged."""
        return data


class CodecPipelineV3:
    """Encodes and decodes the chunks of one v3 array (or the inner chunks of a shard).

    ``encode`` returns None when there is nothing to store: only a ``sharding_indexed``
    codec does that, for a shard whose inner chunks all equal the fill value, so the caller
    can delete the stored shard instead. ``decode`` returns a writable array of
    ``spec.shape`` (possibly a non-contiguous view, e.g. after ``transpose``).

    >>> spec = ChunkSpec((4,), np.dtype("<u2"), 0)
    >>> p = CodecPipelineV3.from_json([{"name": "bytes", "configuration": {"endian": "little"}}],
    ...     spec)
    >>> p.is_raw, p.sharding is None, p.encoded_size
    (True, True, 8)
    """

    def __init__(
        self,
        spec: ChunkSpec,
        array_array: Sequence[ArrayArrayCodec],
        array_bytes: ArrayBytesCodec,
        bytes_bytes: Sequence[BytesBytesCodec],
    ) -> None:
        self.spec = spec
        self.array_array = tuple(array_array)
        self.array_bytes = array_bytes
        self.bytes_bytes = tuple(bytes_bytes)
        self.sharding: ShardingCodec | None = (
            cast("ShardingCodec", array_bytes) if array_bytes.is_sharding else None
        )
        self.is_raw: bool = (
            not self.array_array
            and not self.bytes_bytes
            and isinstance(array_bytes, BytesCodec)
            and array_bytes.endian in (None, NATIVE_ENDIAN)
            and spec.dtype.kind != "O"
        )
        # For each bytes -> bytes codec, the exact size (if fixed) and a bound on the size
        # of its decoded side, so decompression is never allowed to outgrow it.
        exact = array_bytes.encoded_size()
        bound = array_bytes.max_encoded_size()
        self._decoded_sizes: list[tuple[int | None, int]] = []
        for codec in self.bytes_bytes:
            limit = UNBOUNDED_CHUNK_LIMIT if bound is None else bound
            codec.check_input_size(exact, limit)
            self._decoded_sizes.append((exact, limit))
            exact = None if exact is None else codec.encoded_size(exact)
            bound = None if bound is None else codec.max_encoded_size(bound)
        self.encoded_size: int | None = exact
        self.max_encoded_size: int | None = bound
        # Chunks whose stored bytes, once the bytes -> bytes codecs are undone, are the
        # chunk's own C-order native bytes, and whose innermost compressor can write into
        # a caller's buffer, are decoded without a chunk-sized temporary.
        self.decodes_into: bool = (
            not self.array_array
            and isinstance(array_bytes, BytesCodec)
            and not array_bytes.swaps
            and spec.dtype.kind != "O"
            and bool(self.bytes_bytes) and self.bytes_bytes[0].decodes_into_buffer
        )

    @classmethod
    def from_json(cls, codecs: Sequence[Mapping[str, Any] | str], spec: ChunkSpec
                  ) -> CodecPipelineV3:
        """Build and validate a pipeline from a ``codecs`` list for chunks of ``spec``.

        >>> CodecPipelineV3.from_json([{"name": "gzip"}], ChunkSpec((1,), np.dtype("u1")))
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: codec 'gzip' (bytes -> bytes) cannot come before ...
        """
        if isinstance(codecs, str | bytes) or not isinstance(codecs, Sequence):
            raise MetadataError(f"'codecs' must be a list, found {codecs!r}")
        array_array: list[ArrayArrayCodec] = []
        array_bytes: ArrayBytesCodec | None = None
        bytes_bytes: list[BytesBytesCodec] = []
        current = spec
        for entry in codecs:
            codec = build_codec(entry, current, after_array_bytes=array_bytes is not None)
            if isinstance(codec, ArrayArrayCodec):
                if array_bytes is not None:
                    raise MetadataError(
                        f"codec {codec.name!r} (array -> array) cannot come after the "
                        f"array -> bytes codec {array_bytes.name!r}"
                    )
                array_array.append(codec)
                current = codec.encoded_spec()
            elif isinstance(codec, ArrayBytesCodec):
                if array_bytes is not None:
                    raise MetadataError(
                        f"only one array -> bytes codec is allowed, found {array_bytes.name!r} "
                        f"and {codec.name!r}"
                    )
                array_bytes = codec
            elif isinstance(codec, BytesBytesCodec):
                if array_bytes is None:
                    raise MetadataError(
                        f"codec {codec.name!r} (bytes -> bytes) cannot come before the "
                        f"array -> bytes codec"
                    )
                bytes_bytes.append(codec)
            else:
                raise MetadataError(f"{codec!r} is not an array or bytes codec")
        if array_bytes is None:
            raise MetadataError(
                "'codecs' needs exactly one array -> bytes codec (such as 'bytes'), found none"
            )
        return cls(spec, array_array, array_bytes, bytes_bytes)

    @property
    def codecs(self) -> tuple[Codec, ...]:
        """Every codec, in encoding order.

        >>> [c.name for c in CodecPipelineV3.from_json(["bytes", "crc32c"],
        ...     ChunkSpec((1,), np.dtype("u1"))).codecs]
        ['bytes', 'crc32c']
        """
        return (*self.array_array, self.array_bytes, *self.bytes_bytes)

    def to_json(self) -> list[dict[str, Any]]:
        """The canonical JSON ``codecs`` list (defaults filled in as zarr-python writes them).

        >>> CodecPipelineV3.from_json([{"name": "bytes"}, {"name": "blosc", "configuration":
        ...     {"cname": "lz4", "clevel": 1, "shuffle": "shuffle"}}],
        ...     ChunkSpec((4,), np.dtype("u1"))).to_json()[1]["configuration"]["typesize"]
        1
        """
        return [codec.to_json() for codec in self.codecs]

    def encode(self, chunk: np.ndarray[Any, Any]) -> bytes | None:
        """Stored bytes for an array of ``spec.shape`` (None: nothing to store, see above).

        >>> CodecPipelineV3.from_json(["bytes"], ChunkSpec((2,), np.dtype("u1"))).encode(
        ...     np.array([1, 2], dtype="u1"))
        b'\\x01\\x02'
        """
        array = np.asarray(chunk)
        if array.shape != self.spec.shape:
            raise ValueError(f"chunk has shape {array.shape}, expected {self.spec.shape}")
        if array.dtype != self.spec.dtype:
            array = array.astype(self.spec.dtype)
        for aa in self.array_array:
            array = aa.encode(array)
        data = self.array_bytes.encode(array)
        if data is None:
            return None
        for bb in self.bytes_bytes:
            data = bb.encode(data)
        # ``bytes`` hands compressors a view of the chunk; what leaves the pipeline must
        # not alias the caller's array.
        return data if isinstance(data, bytes) else bytes(data)

    def decode(self, data: bytes | memoryview, *, what: str) -> np.ndarray[Any, Any]:
        """The chunk stored as ``data``; any failure is a ChunkDecodeError naming ``what``.

        >>> CodecPipelineV3.from_json(["bytes"], ChunkSpec((2,), np.dtype("u1"))).decode(
        ...     b"\\x01\\x02\\x03", what="c/1")
        Traceback (most recent call last):
        zarrkit.errors.ChunkDecodeError: c/1: 3 bytes, expected 2 for shape (2,) of uint8
        """
        try:
            buffer: bytes | memoryview = data
            for bb, (exact, bound) in zip(
                reversed(self.bytes_bytes), reversed(self._decoded_sizes), strict=True
            ):
                buffer = bb.decode(
                    buffer, what=what, limit=bound if exact is None else exact,
                    exact=exact is not None,
                )
                if exact is not None and memoryview(buffer).nbytes != exact:
                    raise ChunkDecodeError(
                        f"{what}: {bb.name} decoded to {memoryview(buffer).nbytes} bytes, "
                        f"expected {exact}"
                    )
            array = self.array_bytes.decode(buffer, what=what)
            for aa in reversed(self.array_array):
                array = aa.decode(array, what=what)
        except ChunkDecodeError:
            raise
        except Exception as e:  # whatever a codec raises on stored bytes means corruption
            raise ChunkDecodeError(f"{what}: cannot decode: {type(e).__name__}: {e}") from e
        if array.shape != self.spec.shape:
            raise ChunkDecodeError(
                f"{what}: decoded to shape {array.shape}, expected {self.spec.shape}"
            )
        return array

    def decode_into(self, data: bytes | memoryview, out: np.ndarray[Any, Any], *, what: str
                    ) -> None:
        """Decode the chunk stored as ``data`` into ``out``, a writable array of
        ``spec.shape`` and ``spec.dtype``. When :attr:`decodes_into` is true and ``out`` is
        C-contiguous no chunk-sized temporary is made: the innermost codec writes into
        ``out``; otherwise the chunk is decoded then copied.

        >>> p = CodecPipelineV3.from_json([{"name": "bytes", "configuration": {"endian":
        ...     "little"}}, {"name": "blosc", "configuration": {"cname": "lz4"}}],
        ...     ChunkSpec((3,), np.dtype("<u2")))
        >>> out = np.zeros(3, "<u2")
        >>> p.decode_into(p.encode(np.array([7, 8, 9], "<u2")), out, what="c/0"); out
        array([7, 8, 9], dtype=uint16)
        """
        if not (self.decodes_into and out.flags.c_contiguous):
            np.copyto(out, self.decode(data, what=what))
            return
        target = out.reshape(-1).view(np.uint8).data
        try:
            buffer: bytes | memoryview = data
            outer = list(zip(self.bytes_bytes, self._decoded_sizes, strict=True))
            innermost = outer.pop(0) if outer else None
            for bb, (exact, bound) in reversed(outer):
                buffer = bb.decode(buffer, what=what, limit=bound if exact is None else exact,
                                   exact=exact is not None)
            if innermost is not None and innermost[0].decode_into(buffer, target, what=what):
                return
            if innermost is not None:
                buffer = innermost[0].decode(buffer, what=what, limit=target.nbytes, exact=True)
        except ChunkDecodeError:
            raise
        except Exception as e:  # whatever a codec raises on stored bytes means corruption
            raise ChunkDecodeError(f"{what}: cannot decode: {type(e).__name__}: {e}") from e
        source = memoryview(buffer).cast("B")
        if source.nbytes != target.nbytes:
            raise ChunkDecodeError(
                f"{what}: decoded to {source.nbytes} bytes, expected {target.nbytes} "
                f"for shape {self.spec.shape} of {self.spec.dtype}"
            )
        target[:] = source

    def __repr__(self) -> str:
        return f"CodecPipelineV3({self.to_json()!r}, {self.spec!r})"
