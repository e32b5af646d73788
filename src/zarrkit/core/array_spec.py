"""``zarr.core.array_spec``'s public names, as zarrkit's: the runtime configuration of an
array handle, taken by ``create_array``, ``open_array`` and the other creation functions
as an :class:`ArrayConfig` or a dict of some of its fields.

>>> import zarrkit
>>> from zarrkit.core.array_spec import ArrayConfig, parse_array_config
>>> a = zarrkit.create_array({}, shape=(4,), dtype="u1", config=ArrayConfig("F", True))
>>> a.config.order, a.config.write_empty_chunks, parse_array_config({"order": "F"}).order
('F', True, 'F')
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from zarrkit.hierarchy.accessors import ArrayConfig


class ArrayConfigParams(TypedDict, total=False):
    """The fields of :class:`ArrayConfig` as a dict may give them (zarr-python's name)."""

    order: Literal["C", "F"]
    write_empty_chunks: bool
    read_missing_chunks: bool
    sharding_coalesce_max_gap_bytes: int
    sharding_coalesce_max_bytes: int


#: What a ``config=`` argument takes.
ArrayConfigLike = ArrayConfig | ArrayConfigParams


def parse_array_config(data: Any) -> ArrayConfig:
    """An :class:`ArrayConfig` from one, a dict of some of its fields (the others from
    ``zarrkit.config``) or None (all from ``zarrkit.config``), as zarr-python's.

    >>> parse_array_config(None).order
    'C'
    """
    if isinstance(data, ArrayConfig):
        return data
    return ArrayConfig.from_dict(dict(data or {}))


__all__ = ["ArrayConfig", "ArrayConfigLike", "ArrayConfigParams", "parse_array_config"]
