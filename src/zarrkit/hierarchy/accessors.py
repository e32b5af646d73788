"""The accessors of zarr-python's array API (``a.oindex[...]``, ``a.vindex[...]``,
``a.blocks[...]``) and its handle-level types (``ArrayConfig``, the callable byte count of
``nbytes_stored``).

>>> import zarrkit as zk
>>> a = zk.create_array({}, shape=(4,), chunks=(2,), dtype="i1")
>>> a.oindex[[0, 3]] = 5; a.blocks[1].tolist()
[0, 5]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zarrkit.config import config
from zarrkit.indexing import vindex_indexer

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array

__all__ = ["ArrayConfig", "BlockIndex", "OIndex", "StoredBytes", "VIndex"]


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

    >>> ArrayConfig("C", True).to_dict()
    {'order': 'C', 'write_empty_chunks': True}
    """

    order: str = "C"
    write_empty_chunks: bool = False

    def __post_init__(self) -> None:
        if self.order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F', found {self.order!r}")
        if not isinstance(self.write_empty_chunks, bool):
            raise TypeError(f"write_empty_chunks must be a bool, "
                            f"found {self.write_empty_chunks!r}")

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict."""
        return {"order": self.order, "write_empty_chunks": self.write_empty_chunks}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArrayConfig:
        """From a dict of some fields; the others from ``zarrkit.config``.

        >>> ArrayConfig.from_dict({"order": "F"}).order
        'F'
        """
        return cls(order=data.get("order", "C"),
                   write_empty_chunks=data.get("write_empty_chunks",
                                               config.write_empty_chunks))
