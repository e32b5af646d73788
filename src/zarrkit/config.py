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

>>> import zarrkit as zk
>>> with zk.config.set(fsync=True):
...     zk.config.fsync
True
"""

from __future__ import annotations

import contextlib
import os
from typing import Any


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

    def set(self, **settings: Any) -> _Restore:
        """Change settings now; used in a ``with`` block, they are restored at its end.

        >>> cfg = Config()
        >>> with cfg.set(threads=1):
        ...     cfg.threads
        1
        >>> _ = cfg.set(fsync=True); cfg.fsync  # called bare: for good
        True
        """
        previous = {}
        for name in settings:
            if not hasattr(self, name) or name.startswith("_"):
                raise AttributeError(f"unknown zarrkit setting {name!r}")
        for name, value in settings.items():
            previous[name] = getattr(self, name)
            setattr(self, name, value)
        return _Restore(self, previous)

    def __repr__(self) -> str:
        return (
            f"Config(threads={self.threads}, fsync={self.fsync}, "
            f"write_empty_chunks={self.write_empty_chunks}, "
            f"default_zarr_format={self.default_zarr_format}, "
            f"file_locks={self.file_locks}, max_chunk_bytes={self.max_chunk_bytes})"
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
            setattr(self._config, name, value)


config = Config()
