"""The codec registry: codec configurations to codec objects.

Zarr v2 codecs are numcodecs codecs identified by ``id``; zarrkit resolves them through
numcodecs' own registry, so every codec numcodecs knows (and any registered with
:func:`register_codec`) can be read and written.

>>> codec = codec_from_config({"id": "zstd", "level": 3})
>>> codec.codec_id, codec.level
('zstd', 3)
>>> codec_from_config({"id": "no-such-codec"})
Traceback (most recent call last):
zarrkit.errors.UnknownCodecError: unknown codec id 'no-such-codec'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numcodecs
import numpy as np
from numcodecs.abc import Codec

from zarrkit import registry as _registry
from zarrkit.codecs.numcodecs_config import check_numcodecs_config
from zarrkit.errors import MetadataError, UnknownCodecError

# v3-style names whose numcodecs id differs, so ``{"name": ..., "configuration": ...}`` dicts
# can be used for v2 arrays too.
_V3_SHUFFLE = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}


def register_codec(key: str | type[Any], codec_cls: type[Any] | str | None = None, *,
                   qualname: str | None = None) -> None:
    """Make a codec class available under a name, onto zarrkit's one codec registry.

    zarr-python's form is ``register_codec(key, codec_cls)``: ``key`` is the name stored
    in metadata. A zarrkit v3 codec class (a subclass of
    :class:`zarrkit.codecs.v3.base.Codec`) becomes the v3 codec ``key``; a numcodecs codec
    class becomes the v2 codec id ``key`` (and the v3 codec ``numcodecs.<key>``).
    ``qualname`` is accepted for zarr-python's sake: zarrkit keeps one class per name.
    numcodecs' form, ``register_codec(codec_class)`` or ``register_codec(codec_class,
    codec_id)``, still works.

    >>> from zarrkit.codecs.v3.compressors import Crc32cCodec
    >>> register_codec("example.checksum", Crc32cCodec)
    >>> codec_v3_factory("example.checksum") is not None
    True
    >>> from numcodecs import Zlib
    >>> register_codec(Zlib)
    """
    from zarrkit.codecs.v3.base import Codec as CodecV3

    if isinstance(key, type):  # numcodecs' order: the class first, its id optional
        if codec_cls is not None and not isinstance(codec_cls, str):
            raise TypeError(f"a codec id must be a string, found {codec_cls!r}")
        key, codec_cls = codec_cls or getattr(key, "codec_id", None), key  # type: ignore[assignment]
        if not isinstance(key, str):
            raise TypeError(f"{codec_cls!r} has no codec_id: name it")
    if not isinstance(key, str) or not key:
        raise TypeError(f"a codec name must be a non-empty string, found {key!r}")
    if isinstance(codec_cls, type) and issubclass(codec_cls, CodecV3):
        register_codec_v3(key, codec_cls.from_config)
    elif isinstance(codec_cls, type) and issubclass(codec_cls, Codec):
        numcodecs.register_codec(codec_cls, key)
    else:
        raise TypeError(
            f"register_codec needs a zarrkit v3 codec class (zarrkit.codecs.v3.base.Codec) "
            f"or a numcodecs codec class, found {codec_cls!r}")


# Decoding a pickle runs code chosen by whoever wrote the store; such data must go through
# a restricted unpickler made for its convention, never numcodecs' Pickle codec. v2
# ``pickle`` filters are read through zarrkit.codecs.restricted_pickle (see
# codec_from_config) and never written (see to_codec); ``numcodecs.pickle`` (v3) is refused.
REFUSED_CODEC_IDS = frozenset({"pickle"})


def codec_from_config(config: dict[str, Any]) -> Codec:
    """A numcodecs codec from its v2 JSON configuration ``{"id": ..., ...}``, its fields
    checked first (:func:`~zarrkit.codecs.numcodecs_config.check_numcodecs_config`).

    The ``pickle`` object codec (hdmf-zarr's default) decodes through zarrkit's restricted
    unpickler, and encodes nothing:

    >>> codec_from_config({"id": "pickle", "protocol": 5})
    RestrictedPickle(protocol=5)
    >>> codec_from_config({"id": "blosc", "shuffle": 3})
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'blosc': 'shuffle' must be one of [-1, 0, 1, 2], found 3
    """
    if not isinstance(config, dict) or not isinstance(config.get("id"), str):
        raise MetadataError(f"a codec configuration needs a string 'id', found {config!r}")
    codec_id = config["id"]
    if codec_id == "pickle":
        from zarrkit.codecs.restricted_pickle import RestrictedPickle

        return RestrictedPickle.from_config(config)
    return numcodecs_from_config(codec_id, codec_id,
                                 {k: v for k, v in config.items() if k != "id"})


def numcodecs_from_config(name: str, codec_id: str, options: dict[str, Any]) -> Codec:
    """The numcodecs codec ``codec_id`` with ``options`` (checked); ``name`` is how errors
    call it: the v2 id, or the v3 ``numcodecs.<id>`` name.

    >>> numcodecs_from_config("numcodecs.zlib", "zlib", {"level": 10})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'numcodecs.zlib': 'level' must be an integer in [-1, 9], ...
    """
    if codec_id in REFUSED_CODEC_IDS:
        raise UnknownCodecError(
            f"codec {name!r} is refused: decoding it would run code from the store"
        )
    check_numcodecs_config(name, codec_id, options)
    try:
        return numcodecs.get_codec({"id": codec_id, **options})
    except (ValueError, KeyError) as e:
        if isinstance(e, KeyError) or "codec not available" in str(e):
            label = f"id {codec_id!r}" if name == codec_id else repr(name)
            raise UnknownCodecError(f"unknown codec {label}") from e
        raise MetadataError(f"codec {name!r}: invalid configuration: {e}") from e
    except Exception as e:  # any other constructor failure: a configuration it cannot take
        raise MetadataError(f"codec {name!r}: invalid configuration: {e}") from e


def _from_v3_style(config: dict[str, Any]) -> dict[str, Any]:
    name = config["name"]
    options = dict(config.get("configuration") or {})
    if name.startswith("numcodecs."):
        return {"id": name.removeprefix("numcodecs."), **options}
    if name == "blosc":
        shuffle = options.pop("shuffle", 1)
        if isinstance(shuffle, str):
            shuffle = _V3_SHUFFLE[shuffle]
        options.pop("typesize", None)
        return {"id": "blosc", "shuffle": shuffle, **options}
    if name == "gzip":
        return {"id": "gzip", **options}
    return {"id": name, **options}


def to_codec(value: Any) -> Codec:
    """A user's codec argument (numcodecs instance, ``{"id": ...}`` dict, or v3-style
    ``{"name": ..., "configuration": ...}`` dict) as a numcodecs codec.

    >>> to_codec({"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3,
    ...     "shuffle": "bitshuffle"}}).shuffle
    2

    Codecs given this way are for writing: ``pickle`` is refused.

    >>> to_codec("pickle")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.UnknownCodecError: codec 'pickle' is refused for writing: ...
    """
    codec = _to_codec(value)
    if getattr(codec, "codec_id", None) in REFUSED_CODEC_IDS:
        raise UnknownCodecError(
            f"codec {codec.codec_id!r} is refused for writing: reading a pickle runs code "
            "from the store, so zarrkit writes none (it reads them through a restricted "
            "unpickler); use 'json2' for arrays of objects"
        )
    return codec


def _to_codec(value: Any) -> Codec:
    from zarrkit.codecs.public import PublicCodec

    if isinstance(value, Codec):
        return value
    if isinstance(value, PublicCodec):  # zarrkit takes them for v2 arrays too
        return codec_from_config(_from_v3_style(value.to_json()))
    if isinstance(value, dict):
        if "id" in value:
            return codec_from_config(value)
        if isinstance(value.get("name"), str):
            return codec_from_config(_from_v3_style(value))
    if isinstance(value, str):
        return codec_from_config({"id": value})
    raise MetadataError(f"cannot interpret {value!r} as a codec")


# --- Zarr v3 ---------------------------------------------------------------------------------
# v3 codecs are looked up by their metadata ``name`` in zarrkit's own registry; a factory is
# any ``factory(configuration, spec) -> codec`` (see zarrkit.codecs.v3.base). The built-in
# codecs are registered when zarrkit.codecs.v3 is imported; ``numcodecs.<id>`` names need no
# registration.


def register_codec_v3(name: str, factory: Callable[[Mapping[str, Any], Any], Any]) -> None:
    """Make a v3 codec available under ``name`` (replacing any codec of that name).

    >>> from zarrkit.codecs.v3.compressors import Crc32cCodec
    >>> register_codec_v3("example.crc32c", Crc32cCodec.from_config)
    >>> codec_v3_factory("example.crc32c") is not None
    True
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a codec name must be a non-empty string, found {name!r}")
    if not callable(factory):
        raise TypeError(f"a codec factory must be callable, found {factory!r}")
    _registry.codecs.register(name, factory)


def codec_v3_factory(name: str) -> Callable[[Mapping[str, Any], Any], Any] | None:
    """The factory registered for the v3 codec ``name``, or None.

    >>> codec_v3_factory("no-such-codec") is None
    True
    """
    return _registry.codecs.get(name)  # type: ignore[return-value]


def registered_codecs_v3() -> list[str]:
    """Names of the registered v3 codecs, sorted.

    >>> import zarrkit.codecs.v3
    >>> {"bytes", "sharding_indexed"} <= set(registered_codecs_v3())
    True
    """
    return _registry.codecs.names()


_SHUFFLE_NAMES = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle", -1: "shuffle"}


def codec_json_v3(value: Any, dtype: Any = None) -> dict[str, Any]:
    """A user's codec argument in the v3 form ``{"name": ..., "configuration": ...}``.

    Accepts the public codec objects (:mod:`zarrkit.codecs.public`, such as
    ``BloscCodec(...)`` or ``numcodecs.Delta(...)``), v3 dicts and names, v2 ``{"id": ...}``
    dicts and numcodecs objects; codecs with a v3 name of their own (zstd, gzip, blosc,
    crc32c) get it, others become ``numcodecs.<id>`` as zarr-python 3 writes them. Given
    the array's ``dtype``, public codecs fill in what zarr-python chooses from it (such as
    ``Shuffle``'s ``elementsize``).

    >>> codec_json_v3({"id": "zstd", "level": 3})
    {'name': 'zstd', 'configuration': {'level': 3, 'checksum': False}}
    >>> codec_json_v3("crc32c")
    {'name': 'crc32c'}
    >>> from zarrkit.codecs.numcodecs import Shuffle
    >>> codec_json_v3(Shuffle(), dtype="<f8")
    {'name': 'numcodecs.shuffle', 'configuration': {'elementsize': 8}}
    """
    from zarrkit.codecs.public import PublicCodec

    if isinstance(value, PublicCodec):
        if dtype is not None:
            value = value.for_dtype(np.dtype(dtype))
        return value.to_json()
    if isinstance(value, str):
        return {"name": value}
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return dict(value)
    config = dict(to_codec(value).get_config())
    codec_id = config.pop("id")
    if codec_id == "zstd":
        return {"name": "zstd", "configuration": {"level": config.get("level", 0),
                                                  "checksum": config.get("checksum", False)}}
    if codec_id == "gzip":
        return {"name": "gzip", "configuration": {"level": config.get("level", 1)}}
    if codec_id == "blosc":
        shuffle = config.get("shuffle", 1)
        return {"name": "blosc", "configuration": {
            "cname": config.get("cname", "lz4"), "clevel": config.get("clevel", 5),
            "shuffle": _SHUFFLE_NAMES.get(shuffle, shuffle),
            "blocksize": config.get("blocksize", 0),
        }}
    if codec_id == "crc32c":
        return {"name": "crc32c"}
    return {"name": f"numcodecs.{codec_id}", "configuration": config}


def is_one_codec(value: Any) -> bool:
    """Whether a ``compressors=``/``filters=`` argument is a single codec rather than a
    list of them.

    >>> from zarrkit.codecs.public import GzipCodec
    >>> is_one_codec(GzipCodec()), is_one_codec([GzipCodec()]), is_one_codec("zstd")
    (True, False, True)
    """
    from zarrkit.codecs.public import PublicCodec

    return isinstance(value, Codec | PublicCodec | dict | str)


def codecs_json_v3(value: Any, dtype: Any = None) -> list[dict[str, Any]]:
    """A ``compressors=``/``filters=`` argument (None, one codec or a list of them) as v3
    JSON codecs (see :func:`codec_json_v3`).

    >>> from zarrkit.codecs.public import GzipCodec
    >>> codecs_json_v3(GzipCodec(level=1))
    [{'name': 'gzip', 'configuration': {'level': 1}}]
    >>> codecs_json_v3(None)
    []
    """
    if value is None:
        return []
    if is_one_codec(value):
        return [codec_json_v3(value, dtype)]
    return [codec_json_v3(v, dtype) for v in value]
