"""Zarr v3 chunk key encodings: the ``chunk_key_encoding`` field of ``zarr.json``.

``default`` keys start with ``c`` (``c/1/2``; ``c`` alone for 0-d arrays); ``v2`` keys are
the Zarr v2 ones (``1.2``; ``0`` for 0-d arrays).

>>> cke = ChunkKeyEncoding.from_json("default")
>>> cke.encode((1, 2)), cke.decode("c/1/2")
('c/1/2', (1, 2))
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from zarrkit import registry
from zarrkit.caching import BoundedCache
from zarrkit.errors import MetadataError, UnsupportedExtensionError
from zarrkit.metadata.dtypes_v3 import parse_extension

_DEFAULT_SEPARATORS = {"default": "/", "v2": "."}
# Only canonical decimals, so that keys and chunk coordinates correspond one to one.
_INDEX = re.compile(r"^(0|[1-9][0-9]*)$")

ChunkKeyEncodingFactory = Callable[[str, "dict[str, Any] | None"], "ChunkKeyEncoding"]
"""Builds a chunk key encoding from its name and ``configuration`` (None when absent)."""


@dataclass(frozen=True)
class ChunkKeyEncoding:
    """A chunk key encoding; the separator defaults to ``"/"`` for ``default`` and
    ``"."`` for ``v2``.

    >>> ChunkKeyEncoding("v2")
    ChunkKeyEncoding(name='v2', separator='.')
    >>> ChunkKeyEncoding("v2", "/").encode(())
    '0'
    """

    name: str = "default"
    separator: str | None = None

    def __post_init__(self) -> None:
        # Subclasses registered for other names bring their own rules.
        if type(self) is ChunkKeyEncoding and self.name not in _DEFAULT_SEPARATORS:
            raise UnsupportedExtensionError(f"unsupported chunk key encoding {self.name!r}")
        if self.separator is None:
            object.__setattr__(self, "separator", _DEFAULT_SEPARATORS.get(self.name, "/"))
        if self.separator not in ("/", "."):
            raise MetadataError(
                f"chunk key encoding {self.name!r}: separator must be '/' or '.', "
                f"found {self.separator!r}"
            )

    @property
    def sep(self) -> str:
        """The separator (never None once constructed).

        >>> ChunkKeyEncoding().sep
        '/'
        """
        assert self.separator is not None
        return self.separator

    def encode(self, chunk_coords: Sequence[int]) -> str:
        """The key of a chunk, relative to the array's prefix.

        >>> ChunkKeyEncoding("default", ".").encode((1, 23, 45))
        'c.1.23.45'
        >>> ChunkKeyEncoding().encode(())
        'c'
        """
        if self.name == "v2":
            return self.sep.join(map(str, chunk_coords)) if chunk_coords else "0"
        return self.sep.join(("c", *map(str, chunk_coords)))

    def layout(self) -> tuple[str, str] | None:
        """(prefix, separator) of the keys of chunks with coordinates, which are the
        prefix then the coordinates joined by the separator; None for an encoding
        registered by a user, whose keys may follow other rules.

        >>> ChunkKeyEncoding().layout(), ChunkKeyEncoding("v2").layout()
        (('c/', '/'), ('', '.'))
        """
        if type(self) is not ChunkKeyEncoding:
            return None
        return ("" if self.name == "v2" else "c" + self.sep), self.sep

    def decode(self, key: str, ndim: int | None = None) -> tuple[int, ...] | None:
        """The chunk coordinates a key stands for, or None if it is not a chunk key (of an
        ``ndim``-dimensional array, when given). ``v2`` needs ``ndim`` to tell the 0-d key
        ``"0"`` from chunk ``(0,)``.

        >>> ChunkKeyEncoding().decode("c/0/12"), ChunkKeyEncoding().decode("zarr.json")
        ((0, 12), None)
        >>> ChunkKeyEncoding("v2").decode("0", ndim=0), ChunkKeyEncoding("v2").decode("0")
        ((), (0,))
        """
        if self.name == "v2":
            if ndim == 0:
                return () if key == "0" else None
            parts = key.split(self.sep)
        else:
            if key == "c":
                parts = []
            elif key.startswith("c" + self.sep):
                parts = key[2:].split(self.sep)
            else:
                return None
        if not all(_INDEX.match(part) for part in parts):
            return None
        coords = tuple(int(part) for part in parts)
        if ndim is not None and len(coords) != ndim:
            return None
        return coords

    def to_json(self) -> dict[str, Any]:
        """The ``chunk_key_encoding`` value (always with its separator).

        >>> ChunkKeyEncoding().to_json()
        {'name': 'default', 'configuration': {'separator': '/'}}
        """
        return {"name": self.name, "configuration": {"separator": self.separator}}

    @classmethod
    def from_json(cls, value: Any) -> ChunkKeyEncoding:
        """Parse a ``chunk_key_encoding`` value with the encoding registered under its name.

        >>> ChunkKeyEncoding.from_json({"name": "v2", "configuration": {"separator": "/"}})
        ChunkKeyEncoding(name='v2', separator='/')
        >>> ChunkKeyEncoding.from_json({"name": "default", "configuration": {"sep": "/"}})
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: chunk key encoding 'default': unknown configuration ...
        """
        key = _plain_key(value)
        if key is not None:
            # Valid while the name maps to the same factory (it may be registered again).
            cached = _PARSED.get_for(key, registry.chunk_key_encodings.get(key[0]))
            if cached is not None:
                return cached
        ref = parse_extension(value, "chunk key encoding")
        factory = registry.chunk_key_encodings.get(ref.name)
        if factory is None:
            raise UnsupportedExtensionError(f"unsupported chunk key encoding {ref.name!r}")
        result = factory(ref.name, ref.configuration)  # type: ignore[operator]
        if not isinstance(result, ChunkKeyEncoding):
            raise TypeError(f"the factory of chunk key encoding {ref.name!r} returned "
                            f"{result!r}")
        if key is not None and type(result) is ChunkKeyEncoding:
            _PARSED.put_for(key, factory, result)
        return result


# Encodings parsed from their plain JSON forms, with the factory that built them: every
# array of a hierarchy usually has the same one, and a ChunkKeyEncoding is immutable (a
# subclass from a third-party factory is not cached). Only successes are kept.
_PARSED: BoundedCache[tuple[str, str | None, bool], ChunkKeyEncoding] = BoundedCache(64)


def _plain_key(value: Any) -> tuple[str, str | None, bool] | None:
    """``(name, separator, written as a bare name)`` when ``value`` is a name or exactly
    ``{"name": str, "configuration": {"separator": str}}`` (so the key determines the whole
    value), else None.

    >>> _plain_key({"name": "v2", "configuration": {"separator": "/"}}), _plain_key("v2")
    (('v2', '/', False), ('v2', None, True))
    """
    if type(value) is str:
        return value, None, True
    if type(value) is not dict or len(value) != 2:
        return None
    name = value.get("name")
    configuration = value.get("configuration")
    if type(name) is not str or type(configuration) is not dict or len(configuration) != 1:
        return None
    separator = configuration.get("separator")
    if type(separator) is not str:
        return None
    return name, separator, False


def _builtin_factory(name: str, configuration: dict[str, Any] | None) -> ChunkKeyEncoding:
    configuration = configuration or {}
    unknown = sorted(set(configuration) - {"separator"})
    if unknown:
        raise MetadataError(f"chunk key encoding {name!r}: unknown configuration keys {unknown}")
    return ChunkKeyEncoding(name, configuration.get("separator"))


def register_chunk_key_encoding(
    name: str, factory: ChunkKeyEncodingFactory, *, replace: bool = True
) -> None:
    """Make ``name`` parseable as a ``chunk_key_encoding``; ``factory(name, configuration)``
    returns a :class:`ChunkKeyEncoding` (a subclass overriding ``encode``/``decode``).

    >>> register_chunk_key_encoding("v2", _builtin_factory)
    """
    registry.chunk_key_encodings.register(name, factory, replace=replace)


register_chunk_key_encoding("default", _builtin_factory)
register_chunk_key_encoding("v2", _builtin_factory)
