"""The accessors of zarr-python's array API (``a.oindex[...]``, ``a.vindex[...]``,
``a.blocks[...]``) and its handle-level types (``ArrayConfig``, the callable byte count of
``nbytes_stored``).

>>> import zarrkit as zk
>>> a = zk.create_array({}, shape=(4,), chunks=(2,), dtype="i1")
>>> a.oindex[[0, 3]] = 5; a.blocks[1].tolist()
[0, 5]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from zarrkit.config import config
from zarrkit.indexing import vindex_indexer

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array

__all__ = ["ARRAY_CONFIG_KEYS", "READ_CONFIG_KEYS", "ArrayConfig", "BlockIndex", "OIndex",
           "StoredBytes", "VIndex", "check_array_config_keys", "read_settings"]


class OIndex:
    """``a.oindex[...]``: orthogonal selection helper."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_orthogonal_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_orthogonal_selection(selection, value)


class VIndex:
    """``a.vindex[...]``: coordinate or mask selection helper."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        array = self._array
        return array._get(vindex_indexer, selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        array = self._array
        array._set(vindex_indexer, selection, value)


class BlockIndex:
    """``a.blocks[...]``: chunk-grid selection helper."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_block_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_block_selection(selection, value)


class StoredBytes(int):
    """A byte count that is also callable (returning itself): ``nbytes_stored`` is a
    property in zarrkit and a method in zarr-python, and both spellings work.

    >>> StoredBytes(7)(), StoredBytes(7) + 1
    (7, 8)
    """

    def __call__(self) -> int:
        return int(self)


@dataclass(frozen=True)
class ArrayConfig:
    """The runtime configuration of an array handle, as zarr-python's ``ArrayConfig``.

    ``read_missing_chunks`` False makes a read of a chunk (a shard, for a sharded array)
    that is not stored raise :class:`~zarrkit.errors.ChunkNotFoundError` instead of
    giving the fill value; an inner chunk missing from a stored shard still reads as the
    fill value, as in zarr-python. The ``sharding_coalesce_*`` settings are zarr-python's
    tuning of its shard reads: accepted, kept and shown, with no effect, as zarrkit's shard
    reads merge byte ranges by their own rule (see
    :mod:`zarrkit.codecs.v3.sharding_partial`; the native engine reads a shard whole when
    most of it is wanted).

    >>> ArrayConfig("C", True).to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'order': 'C', 'write_empty_chunks': True, 'read_missing_chunks': True,
     'sharding_coalesce_max_gap_bytes': 1048576, 'sharding_coalesce_max_bytes': 16777216}
    """

    order: str = "C"
    write_empty_chunks: bool = False
    read_missing_chunks: bool = field(default=True, kw_only=True)
    sharding_coalesce_max_gap_bytes: int = field(default=1 << 20, kw_only=True)
    sharding_coalesce_max_bytes: int = field(default=16 << 20, kw_only=True)

    def __post_init__(self) -> None:
        if self.order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F', found {self.order!r}")
        for name in ("write_empty_chunks", "read_missing_chunks"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, found {getattr(self, name)!r}")
        for name in ("sharding_coalesce_max_gap_bytes", "sharding_coalesce_max_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, found {value!r}")

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict.

        >>> sorted(ArrayConfig().to_dict())[:2]
        ['order', 'read_missing_chunks']
        """
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArrayConfig:
        """From a dict of some fields; the others from ``zarrkit.config`` (its
        ``array.*`` settings), as zarr-python's. An unknown key raises ``TypeError``.

        >>> ArrayConfig.from_dict({"order": "F"}).order
        'F'
        >>> ArrayConfig.from_dict({"read_missing": False})
        Traceback (most recent call last):
        ...
        TypeError: Unknown array config keys: ['read_missing']. Valid keys are ['order', ...].
        """
        check_array_config_keys(data)
        return cls(**{name: data[name] if name in data else config.get(f"array.{name}")
                      for name in ARRAY_CONFIG_KEYS})


def array_config_dict(config: ArrayConfig | Mapping[str, Any] | None
                      ) -> dict[str, Any] | None:
    """An array ``config`` as zarr-python takes it (an :class:`ArrayConfig` or a dict of
    some of its fields) as a dict, or None.

    >>> array_config_dict(ArrayConfig("F"))["order"], array_config_dict({"order": "C"})
    ('F', {'order': 'C'})
    """
    if config is None:
        return None
    if isinstance(config, ArrayConfig):
        return config.to_dict()
    return dict(config)


#: The fields of :class:`ArrayConfig`, in zarr-python's order.
ARRAY_CONFIG_KEYS = tuple(f.name for f in fields(ArrayConfig))


def check_array_config_keys(data: Any) -> None:
    """``TypeError`` (zarr-python's message) when the dict ``data`` has a key that is not
    an :class:`ArrayConfig` field.

    >>> check_array_config_keys({"order": "C", "read_missing_chunks": False})
    """
    unknown = set(data) - set(ARRAY_CONFIG_KEYS)
    if unknown:
        raise TypeError(f"Unknown array config keys: {sorted(unknown)}. "
                        f"Valid keys are {list(ARRAY_CONFIG_KEYS)}.")


#: The fields of :class:`ArrayConfig` that tune reads (all but order and write_empty_chunks,
#: which an array handle keeps its own way).
READ_CONFIG_KEYS = ARRAY_CONFIG_KEYS[2:]


def read_settings(data: Any = None) -> dict[str, Any]:
    """The read fields of :class:`ArrayConfig` (``READ_CONFIG_KEYS``) from the dict or
    ``ArrayConfig`` ``data``, those it lacks from ``zarrkit.config`` as they are now: what
    an array handle keeps from the moment it is made, as zarr-python's does.

    >>> read_settings({"read_missing_chunks": False})["read_missing_chunks"]
    False
    >>> read_settings()["sharding_coalesce_max_bytes"]
    16777216
    """
    if isinstance(data, ArrayConfig):
        data = data.to_dict()
    data = data or {}
    return {name: data[name] if name in data else config.get(f"array.{name}")
            for name in READ_CONFIG_KEYS}
