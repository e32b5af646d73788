"""Process-wide settings, readable from the environment and settable in code.

- ``threads`` (``ZARRKIT_THREADS``, default: the number of CPUs)
- ``fsync`` (``ZARRKIT_FSYNC``, default ``False``)
- ``write_empty_chunks`` (``ZARRKIT_WRITE_EMPTY_CHUNKS``, default ``False``)
- ``default_zarr_format`` (``ZARRKIT_DEFAULT_ZARR_FORMAT``, default ``3``)
- ``file_locks`` (``ZARRKIT_FILE_LOCKS``, default ``False``): take an OS file lock per
  chunk or shard key around read-modify-write, so that processes writing parts of one
  chunk lose nothing (threads of one process are always serialised)
- ``max_chunk_bytes`` (``ZARRKIT_MAX_CHUNK_BYTES``, default 8 GiB): the largest chunk or
  shard (decoded) that zarrkit will allocate; beyond it a ResourceLimitError is raised
- ``read_missing_chunks`` (``ZARRKIT_READ_MISSING_CHUNKS``, default ``True``): what new
  array handles do with a chunk (a shard) that is not stored: read it as the fill value,
  or (``False``) raise :class:`~zarrkit.errors.ChunkNotFoundError` (zarr-python's
  ``array.read_missing_chunks``; a handle keeps the value it was made with, see
  ``Array.with_config``)

- ``order`` (``ZARRKIT_ORDER``, default ``"C"``): the memory order of new format-2 arrays
  when a call gives none (zarr-python's ``array.order``)
- ``engine`` (``ZARRKIT_ENGINE``, default ``"auto"``): ``"auto"`` decodes chunks with the
  native engine (:mod:`zarrkit.native`) for the codec chains it covers, ``"python"``
  always with the Python path (the reference); ``array.engine`` says which one an array
  uses

As in zarr-python, ``set`` also takes a dict, and both ``set`` and ``get`` take
zarr-python's dotted keys: ``"array.write_empty_chunks"``, ``"array.order"``,
``"array.read_missing_chunks"``, ``"default_zarr_format"`` and ``"threading.max_workers"``
(``threads``; ``None`` means the number of CPUs) are mapped to the settings above.
zarr-python's other keys (``"async.concurrency"``, ``"json_indent"``,
``"codec_pipeline.batch_size"``, ``"array.allow_unsafe_pickle_decode"``, ``"codecs.*"``...)
are accepted and remembered, so code written for zarr-python runs, but have no effect:
zarrkit has no event loop, writes its own JSON layout, picks its codecs by name from its
registry (``"codecs.*"`` name zarrkit's classes) and decodes pickles with its restricted
unpickler whatever the setting. Any other key raises ``AttributeError`` (a typo would
otherwise pass silently). ``pprint()`` prints them all as a tree, as zarr-python's.

>>> import zarrkit as zk
>>> with zk.config.set(fsync=True):
...     zk.config.fsync
True
>>> with zk.config.set({"array.write_empty_chunks": True}):
...     zk.config.get("array.write_empty_chunks"), zk.config.write_empty_chunks
(True, True)
"""

from __future__ import annotations

import contextlib
import os
import pprint
from collections.abc import Mapping
from typing import Any

_NO_DEFAULT: Any = object()

# zarr-python's settings that act on zarrkit's, by dotted key.
_ZARR_PYTHON_NAMES = {
    "array.write_empty_chunks": "write_empty_chunks",
    "array.order": "order",
    "array.read_missing_chunks": "read_missing_chunks",
    "default_zarr_format": "default_zarr_format",
    "threading.max_workers": "threads",
}
# zarr-python's settings that zarrkit accepts and ignores, with zarr-python's defaults.
_INERT_DEFAULTS: dict[str, Any] = {
    "array.target_shard_size_bytes": None,
    "async.concurrency": 10,
    "async.timeout": None,
    "json_indent": 2,
    "codec_pipeline.batch_size": 1,
    "codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline",
    # zarr-python 3.3's tuning of its own pipeline and shard reads (zarrkit's engine has
    # its own threads and range merging).
    "codec_pipeline.max_workers": None,
    "array.sharding_coalesce_max_gap_bytes": 1 << 20,
    "array.sharding_coalesce_max_bytes": 16 << 20,
    # zarr-python 3.4's switch for rectilinear grids, which zarrkit always reads and writes.
    "array.rectilinear_chunks": False,
    # zarr-python 3.4's opt-in to decode pickles: zarrkit decodes them with a restricted
    # unpickler (see zarrkit.codecs.restricted_pickle), whatever this says.
    "array.allow_unsafe_pickle_decode": False,
    # zarrkit has no buffer classes: numpy arrays and bytes throughout.
    "buffer": "zarr.buffer.cpu.Buffer",
    "ndbuffer": "zarr.buffer.cpu.NDBuffer",
    # zarr-python's codec classes by name; zarrkit's classes of the same codecs (the
    # registry, not this, picks what decodes a chunk).
    **{f"codecs.{name}": f"zarrkit.codecs.public.{cls}" for name, cls in (
        ("blosc", "BloscCodec"), ("bytes", "BytesCodec"), ("crc32c", "Crc32cCodec"),
        ("endian", "BytesCodec"), ("gzip", "GzipCodec"), ("scale_offset", "ScaleOffset"),
        ("sharding_indexed", "ShardingCodec"), ("transpose", "TransposeCodec"),
        ("vlen-bytes", "VLenBytesCodec"), ("vlen-utf8", "VLenUTF8Codec"),
        ("zstd", "ZstdCodec"))},
    **{f"codecs.numcodecs.{name}": f"zarrkit.codecs.numcodecs.{cls}" for name, cls in (
        (cls.lower(), cls) for cls in (
            "Adler32", "AsType", "BitRound", "Blosc", "BZ2", "CRC32", "CRC32C", "Delta",
            "FixedScaleOffset", "Fletcher32", "GZip", "LZ4", "LZMA", "PackBits", "PCodec",
            "Quantize", "Shuffle", "ZFPY", "Zlib", "Zstd"))},
    "codecs.numcodecs.jenkins_lookup3": "zarrkit.codecs.numcodecs.JenkinsLookup3",
}
# Keys of newer zarr-python that its user guide sets (zarr-python 3.1.6 accepts any key):
# accepted and ignored as the others, but not listed until set, as in zarr-python 3.1.6.
_NEWER_INERT_DEFAULTS: dict[str, Any] = {
    "attributes.non_finite_floats": "allow",
    "attributes.non_string_keys": "warn",
}
_ZARR_PYTHON_KEYS = (*_ZARR_PYTHON_NAMES, *_INERT_DEFAULTS)
_OWN_NAMES = ("threads", "fsync", "write_empty_chunks", "default_zarr_format", "file_locks",
              "max_chunk_bytes", "order", "engine", "read_missing_chunks")


def _setting_name(key: str) -> str:
    """zarrkit's name of the setting ``key`` (zarrkit's own or zarr-python's dotted key)."""
    if key in _OWN_NAMES or key in _INERT_DEFAULTS or key in _NEWER_INERT_DEFAULTS:
        return key
    if key in _ZARR_PYTHON_NAMES:
        return _ZARR_PYTHON_NAMES[key]
    raise AttributeError(f"unknown zarrkit setting {key!r}")


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


class Config:
    """The settings object behind ``zarrkit.config``.

    >>> cfg = Config()
    >>> cfg.threads >= 1
    True
    """

    def __init__(self) -> None:
        self.threads: int = _env_int("ZARRKIT_THREADS", os.cpu_count() or 1)
        self.fsync: bool = _env_bool("ZARRKIT_FSYNC", False)
        self.write_empty_chunks: bool = _env_bool("ZARRKIT_WRITE_EMPTY_CHUNKS", False)
        # The format of new nodes when a call does not say.
        self.default_zarr_format: int = _env_int("ZARRKIT_DEFAULT_ZARR_FORMAT", 3)
        self.file_locks: bool = _env_bool("ZARRKIT_FILE_LOCKS", False)
        # Far above any real chunk, far below what would exhaust memory by declaration
        # alone: a hostile document can declare a chunk of 2**62 elements.
        self.max_chunk_bytes: int = _env_int("ZARRKIT_MAX_CHUNK_BYTES", 8 << 30)
        self.order: str = os.environ.get("ZARRKIT_ORDER") or "C"
        self.engine: str = (os.environ.get("ZARRKIT_ENGINE") or "auto").strip().lower()
        self.read_missing_chunks: bool = _env_bool("ZARRKIT_READ_MISSING_CHUNKS", True)
        # zarr-python settings that zarrkit accepts and has no use for.
        self._inert: dict[str, Any] = dict(_INERT_DEFAULTS)

    def set(self, arg: Mapping[str, Any] | None = None, **settings: Any) -> _Restore:
        """Change settings now, for good; used in a ``with`` block, they are restored at its
        end. Settings come as keywords (zarrkit's names; ``array__order`` stands for
        ``"array.order"``, as in zarr-python) or as a dict (zarr-python's form), in either
        naming.

        >>> cfg = Config()
        >>> with cfg.set(threads=1):
        ...     cfg.threads
        1
        >>> _ = cfg.set(fsync=True); cfg.fsync  # called bare: for good
        True
        >>> _ = cfg.set({"threading.max_workers": 2}); cfg.threads, cfg.get("threads")
        (2, 2)
        """
        changes: dict[str, Any] = {}
        for key, value in [*(arg or {}).items(), *settings.items()]:
            name = _setting_name(key.replace("__", ".") if key in settings else key)
            if name == "threads" and value is None:
                value = os.cpu_count() or 1
            changes[name] = value
        previous = {name: self._value(name) for name in changes}
        for name, value in changes.items():
            self._assign(name, value)
        return _Restore(self, previous)

    def reset(self) -> None:
        """Every setting back to its default (from the environment), as zarr-python's
        ``zarr.config.reset()``.

        >>> cfg = Config()
        >>> _ = cfg.set({"array.order": "F"}); cfg.reset(); cfg.order
        'C'
        """
        self.__init__()  # type: ignore[misc]

    def get(self, key: str, default: Any = _NO_DEFAULT) -> Any:
        """The value of a setting, by zarrkit's name or zarr-python's dotted key; a section
        (``"array"``) gives a dict of its keys. An unknown key raises ``KeyError`` unless a
        ``default`` is given.

        >>> cfg = Config()
        >>> cfg.get("default_zarr_format"), cfg.get("async.concurrency"), cfg.get("x", 0)
        (3, 10, 0)
        >>> cfg.get("array")["read_missing_chunks"], len(cfg.get("array"))
        (True, 8)
        """
        try:
            return self._value(_setting_name(key))
        except AttributeError:
            prefix = key + "."
            section = {k[len(prefix):]: self.get(k) for k in _ZARR_PYTHON_KEYS
                       if k.startswith(prefix)}
            if section:
                return section
            if default is _NO_DEFAULT:
                raise KeyError(key) from None
            return default

    def to_dict(self) -> dict[str, Any]:
        """Every setting as a tree, as zarr-python's ``zarr.config.to_dict()``: its keys
        by section (``"array"``, ``"async"``, ``"codecs"``...; ``threads`` is
        ``threading.max_workers``), then zarrkit's own settings at the top level.

        >>> cfg = Config()
        >>> tree = cfg.to_dict()
        >>> tree["array"]["read_missing_chunks"], tree["codecs"]["zstd"], tree["fsync"]
        (True, 'zarrkit.codecs.public.ZstdCodec', False)
        """
        tree: dict[str, Any] = {}
        keys = [*_ZARR_PYTHON_KEYS, *(k for k in _NEWER_INERT_DEFAULTS if k in self._inert)]
        keys += [name for name in _OWN_NAMES if name not in _ZARR_PYTHON_NAMES.values()]
        for key in keys:
            # A section's keys may hold dots themselves ("codecs.numcodecs.zstd").
            section, _, rest = key.partition(".")
            if rest:
                tree.setdefault(section, {})[rest] = self.get(key)
            else:
                tree[key] = self.get(key)
        return tree

    def pprint(self, **kwargs: Any) -> None:
        """Print :meth:`to_dict` with :func:`pprint.pprint` (its keywords: ``stream``,
        ``width``...), as zarr-python's ``zarr.config.pprint()``.

        >>> import io
        >>> text = io.StringIO(); Config().pprint(stream=text, width=60)
        >>> text.getvalue().splitlines()[0]
        "{'array': {'allow_unsafe_pickle_decode': False,"
        """
        pprint.pprint(self.to_dict(), **kwargs)

    def _value(self, name: str) -> Any:
        if name in _NEWER_INERT_DEFAULTS:
            return self._inert.get(name, _NEWER_INERT_DEFAULTS[name])
        return self._inert[name] if name in _INERT_DEFAULTS else getattr(self, name)

    def _assign(self, name: str, value: Any) -> None:
        if name in _INERT_DEFAULTS or name in _NEWER_INERT_DEFAULTS:
            self._inert[name] = value
        else:
            setattr(self, name, value)

    def __repr__(self) -> str:
        return (
            f"Config(threads={self.threads}, fsync={self.fsync}, "
            f"write_empty_chunks={self.write_empty_chunks}, "
            f"default_zarr_format={self.default_zarr_format}, "
            f"file_locks={self.file_locks}, max_chunk_bytes={self.max_chunk_bytes}, "
            f"order={self.order!r}, engine={self.engine!r})"
        )


class _Restore(contextlib.AbstractContextManager["Config"]):
    """What ``Config.set`` returns: entering gives the config, exiting restores the
    settings that ``set`` changed."""

    def __init__(self, config: Config, previous: dict[str, Any]) -> None:
        self._config = config
        self._previous = previous

    def __enter__(self) -> Config:
        return self._config

    def __exit__(self, *exc_info: object) -> None:
        for name, value in self._previous.items():
            self._config._assign(name, value)


config = Config()
