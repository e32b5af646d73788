"""The three kinds of Zarr v3 codec, and helpers for reading codec configurations.

Every codec object is bound to the :class:`ChunkSpec` of its decoded input when it is
built, so it validates its configuration once and knows every size it needs afterwards.
A codec *factory* (what :func:`zarrkit.codecs.registry.register_codec_v3` registers) is
any callable ``factory(configuration, spec) -> codec``.

>>> import numpy as np
>>> from zarrkit.codecs.v3.spec import ChunkSpec
>>> class Reverse(ArrayArrayCodec):
...     name = "reverse"
...     def encode(self, chunk): return chunk[::-1]
...     def decode(self, chunk, *, what): return chunk[::-1]
>>> Reverse({}, ChunkSpec((3,), np.dtype("u1"))).encode(np.arange(3, dtype="u1"))
array([2, 1, 0], dtype=uint8)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from zarrkit.codecs.v3.spec import ChunkSpec
from zarrkit.errors import MetadataError

# A bound on what any compressor may add to its input, used only to cap how much a stacked
# compressor may inflate to (decompression-bomb protection), never to size real buffers.
COMPRESSION_OVERHEAD = 1024


def compressed_bound(size: int) -> int:
    """A generous upper bound on the compressed size of ``size`` bytes (any compressor).

    >>> compressed_bound(8000)
    11024
    """
    return size + (size >> 2) + COMPRESSION_OVERHEAD


class Codec:
    """Base of all v3 codecs: a name, a kind, the input spec, and its JSON form.

    >>> Codec({}, ChunkSpec((1,), np.dtype("u1"))).to_json()
    {'name': 'codec'}
    """

    name: ClassVar[str] = "codec"
    kind: ClassVar[str] = ""

    def __init__(self, configuration: Mapping[str, Any], spec: ChunkSpec) -> None:
        self.spec = spec

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any], spec: ChunkSpec) -> Codec:
        """The factory registered for this codec: build it for chunks described by ``spec``.

        >>> Codec.from_config({}, ChunkSpec((1,), np.dtype("u1"))).spec.shape
        (1,)
        """
        return cls(configuration, spec)

    def configuration(self) -> dict[str, Any] | None:
        """The ``configuration`` member of the JSON form; None to omit it."""
        return None

    def to_json(self) -> dict[str, Any]:
        """The canonical ``{"name": ..., "configuration": {...}}`` form."""
        config = self.configuration()
        if config is None:
            return {"name": self.name}
        return {"name": self.name, "configuration": config}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_json()!r})"


class ArrayArrayCodec(Codec):
    """An ``array -> array`` codec (transpose, scale_offset, numcodecs filters).

    >>> ArrayArrayCodec.kind
    'array -> array'
    """

    kind = "array -> array"

    def encoded_spec(self) -> ChunkSpec:
        """The spec of the encoded array (defaults to the input spec)."""
        return self.spec

    def encode(self, chunk: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """The encoded array of a chunk-shaped array."""
        raise NotImplementedError

    def decode(self, chunk: np.ndarray[Any, Any], *, what: str) -> np.ndarray[Any, Any]:
        """The decoded (spec-shaped) array; errors are ChunkDecodeError naming ``what``."""
        raise NotImplementedError


class ArrayBytesCodec(Codec):
    """An ``array -> bytes`` codec (bytes, vlen-utf8, vlen-bytes, sharding_indexed).

    >>> ArrayBytesCodec.kind, ArrayBytesCodec.is_sharding
    ('array -> bytes', False)
    """

    kind = "array -> bytes"
    is_sharding: ClassVar[bool] = False

    def encode(self, chunk: np.ndarray[Any, Any]) -> bytes | None:
        """Encoded bytes; None means "nothing to store" (an all-empty shard)."""
        raise NotImplementedError

    def decode(self, data: bytes | memoryview, *, what: str) -> np.ndarray[Any, Any]:
        """The decoded array; errors are ChunkDecodeError naming ``what``."""
        raise NotImplementedError

    def encoded_size(self) -> int | None:
        """The exact encoded size in bytes, or None when it varies."""
        return None

    def max_encoded_size(self) -> int | None:
        """An upper bound on the encoded size, or None when there is none."""
        return self.encoded_size()


class BytesBytesCodec(Codec):
    """A ``bytes -> bytes`` codec (compressors and checksums).

    Its ``spec`` is that of the array given to the pipeline's ``array -> bytes`` codec, which
    is what blosc needs to choose a ``typesize``.

    >>> BytesBytesCodec.kind
    'bytes -> bytes'
    """

    kind = "bytes -> bytes"
    # Whether decode_into can write into a caller's buffer without a temporary.
    decodes_into_buffer: bool = False

    def encode(self, data: bytes) -> bytes:
        """Encoded bytes."""
        raise NotImplementedError

    def decode(
        self, data: bytes | memoryview, *, what: str, limit: int, exact: bool
    ) -> bytes | memoryview:
        """Decoded bytes, never more than ``limit`` of them (exactly ``limit`` when
        ``exact``); errors are ChunkDecodeError naming ``what``."""
        raise NotImplementedError

    def decode_into(self, data: bytes | memoryview, out: memoryview, *, what: str) -> bool:
        """Decode straight into ``out`` (writable, exactly the decoded size) and return
        True, or return False having written nothing when this codec cannot, so the caller
        falls back to :meth:`decode`. Saves allocating a chunk-sized temporary.

        >>> BytesBytesCodec.decode_into(None, b"", memoryview(bytearray()), what="c/0")
        False
        """
        return False

    def encoded_size(self, size: int) -> int | None:
        """The exact encoded size for ``size`` input bytes, or None when it varies."""
        return None

    def max_encoded_size(self, size: int) -> int:
        """An upper bound on the encoded size for ``size`` input bytes."""
        exact = self.encoded_size(size)
        return compressed_bound(size) if exact is None else exact


# --- reading configurations ----------------------------------------------------------------


def check_keys(name: str, configuration: Mapping[str, Any], allowed: set[str]) -> None:
    """Refuse configuration members a codec does not define.

    >>> check_keys("gzip", {"level": 1, "lvl": 2}, {"level"})
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'gzip': unknown configuration member(s) ['lvl']
    """
    unknown = sorted(set(configuration) - allowed)
    if unknown:
        raise MetadataError(f"codec {name!r}: unknown configuration member(s) {unknown}")


def config_int(
    name: str,
    configuration: Mapping[str, Any],
    key: str,
    default: int | None = None,
    *,
    low: int | None = None,
    high: int | None = None,
) -> int:
    """An integer member, checked against an inclusive range.

    >>> config_int("gzip", {"level": 10}, "level", low=0, high=9)
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'gzip': 'level' must be an integer in [0, 9], found 10
    """
    value = configuration.get(key, default)
    bad = (
        value is None
        or isinstance(value, bool)
        or not isinstance(value, int | np.integer)
        or (low is not None and value < low)
        or (high is not None and value > high)
    )
    if bad:
        bounds = f" in [{low}, {high}]" if low is not None and high is not None else ""
        if low is not None and high is None:
            bounds = f" >= {low}"
        found = "nothing" if key not in configuration else repr(value)
        raise MetadataError(f"codec {name!r}: {key!r} must be an integer{bounds}, found {found}")
    return int(value)  # type: ignore[arg-type]


def config_choice(
    name: str, configuration: Mapping[str, Any], key: str, choices: tuple[str, ...],
    default: str | None = None,
) -> str:
    """A string member that must be one of ``choices``.

    >>> config_choice("sharding_indexed", {}, "index_location", ("start", "end"), "end")
    'end'
    """
    value = configuration.get(key, default)
    if value not in choices:
        found = "nothing" if key not in configuration else repr(value)
        raise MetadataError(
            f"codec {name!r}: {key!r} must be one of {list(choices)}, found {found}"
        )
    return str(value)


def parse_codec_entry(entry: Any) -> tuple[str, dict[str, Any], bool]:
    """``(name, configuration, must_understand)`` of one element of a ``codecs`` list; the
    short-hand form is a bare name string.

    >>> parse_codec_entry("crc32c")
    ('crc32c', {}, True)
    >>> parse_codec_entry({"name": "gzip", "configuration": {"level": 1}})
    ('gzip', {'level': 1}, True)
    """
    if isinstance(entry, str):
        return entry, {}, True
    if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
        raise MetadataError(f"a codec must be a name or an object with a 'name', found {entry!r}")
    unknown = set(entry) - {"name", "configuration", "must_understand"}
    if unknown:
        raise MetadataError(f"codec {entry['name']!r}: unknown member(s) {sorted(unknown)}")
    configuration = entry.get("configuration", {})
    if configuration is None:
        configuration = {}
    if not isinstance(configuration, Mapping):
        raise MetadataError(
            f"codec {entry['name']!r}: 'configuration' must be an object, found {configuration!r}"
        )
    must_understand = entry.get("must_understand", True)
    if not isinstance(must_understand, bool):
        raise MetadataError(
            f"codec {entry['name']!r}: 'must_understand' must be a boolean, "
            f"found {must_understand!r}"
        )
    return entry["name"], dict(configuration), must_understand
