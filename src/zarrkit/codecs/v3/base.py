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

from zarrkit.codecs.bounded import COMPRESSION_OVERHEAD as COMPRESSION_OVERHEAD
from zarrkit.codecs.bounded import compressed_bound as compressed_bound
from zarrkit.codecs.config import check_keys as check_keys
from zarrkit.codecs.config import config_choice as config_choice
from zarrkit.codecs.config import config_int as config_int
from zarrkit.codecs.v3.spec import ChunkSpec
from zarrkit.errors import MetadataError


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

    def check_input_size(self, size: int | None, bound: int) -> None:
        """Refuse, with MetadataError, an input this codec cannot encode: ``size`` bytes
        exactly (None: the size varies), at most ``bound``. The pipeline calls it once it
        knows what comes in; most codecs take any size.

        >>> BytesBytesCodec.check_input_size(None, None, 10)
        """

    def encoded_size(self, size: int) -> int | None:
        """The exact encoded size for ``size`` input bytes, or None when it varies."""
        return None

    def max_encoded_size(self, size: int) -> int:
        """An upper bound on the encoded size for ``size`` input bytes."""
        exact = self.encoded_size(size)
        return compressed_bound(size) if exact is None else exact


# --- reading configurations ----------------------------------------------------------------


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
