"""The printable summaries of arrays and groups (``a.info``, ``a.info_complete()``,
``g.info``), laid out as zarr-python's.

>>> import zarrkit as zk
>>> print(zk.group({}).info_complete())  # doctest: +NORMALIZE_WHITESPACE
Name        :
Type        : Group
Zarr format : 3
Read-only   : False
Store type  : MemoryStore
No. members : 0
No. arrays  : 0
No. groups  : 0
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit.storage.base import Store
from zarrkit.storage.directory import DirectoryStore

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array
    from zarrkit.hierarchy.group import Group


def store_type_name(store: Store) -> str:
    """The store's class as zarr-python names it (a directory is its ``LocalStore``).

    >>> from zarrkit.storage import MemoryStore
    >>> store_type_name(MemoryStore())
    'MemoryStore'
    """
    return "LocalStore" if isinstance(store, DirectoryStore) else type(store).__name__


def _grid_text(shape: tuple[Any, ...]) -> str:
    """A chunk or shard shape as zarr-python's summary shows it: ``<variable>`` for a
    rectilinear grid (some dimension has several lengths).

    >>> _grid_text((4, 2)), _grid_text(((2, 1), 3))
    ('(4, 2)', '<variable>')
    """
    return str(shape) if all(isinstance(n, int) for n in shape) else "<variable>"


class ArrayInfo:
    """A printable summary of an array laid out as zarr-python's: ``a.info`` holds what
    the metadata says, ``a.info_complete()`` adds what needs the store listed (bytes
    stored, chunks or shards initialized).

    >>> import zarrkit as zk
    >>> a = zk.create_array({}, shape=(4,), chunks=(2,), dtype="u1"); a[:2] = 1
    >>> dict(a.info_complete().items())["Chunks Initialized"]
    '1'
    """

    def __init__(self, array: Array, *, complete: bool = False) -> None:
        self._array = array
        self._complete = complete

    def items(self) -> list[tuple[str, str]]:
        """The summary as (label, value) rows, in zarr-python's order."""
        a = self._array
        rows = [("Type", "Array"), ("Zarr format", str(a.zarr_format)),
                ("Data type", data_type_repr(a)), ("Fill value", str(a.fill_value)),
                ("Shape", str(a.shape))]
        if a.shards is not None:
            rows.append(("Shard shape", _grid_text(a.shards)))
        rows += [("Chunk shape", _grid_text(a.chunks)), ("Order", a.order),
                 ("Read-only", str(a.read_only)), ("Store type", store_type_name(a.store)),
                 ("Filters", repr(tuple(a.filters)))]
        if a.serializer is not None:
            rows.append(("Serializer", repr(a.serializer)))
        rows += [("Compressors", repr(tuple(a.compressors))), ("No. bytes", byte_info(a.nbytes))]
        if self._complete:
            stored = int(a.nbytes_stored)
            rows.append(("No. bytes stored", byte_info(stored)))
            if stored > 0:
                rows.append(("Storage ratio", f"{a.nbytes / stored:.1f}"))
            if a.shards is not None:
                rows.append(("Shards Initialized", str(a._nshards_initialized)))
            else:
                rows.append(("Chunks Initialized", str(a.nchunks_initialized)))
        return rows

    @property
    def engine(self) -> str:
        """The engine that decodes the array's chunks (:attr:`Array.engine`: ``"native"``
        or ``"python"``), as ``zarrkit.config.engine`` sets it now. Not a printed row:
        the summary prints as zarr-python's does, byte for byte.

        >>> import zarrkit as zk
        >>> a = zk.create_array({}, shape=(4,), dtype="u2")
        >>> with zk.config.set(engine="python"):
        ...     a.info.engine
        'python'
        """
        return self._array.engine

    def __repr__(self) -> str:
        return "\n".join(f"{label:<18} : {value}" for label, value in self.items())

    __str__ = __repr__


# zarr-python's data type class per numpy kind and item size (its ``ZDType`` reprs).
_NUMERIC_TYPE_NAMES = {"i": "Int", "u": "UInt", "f": "Float", "c": "Complex"}


def data_type_repr(array: Array) -> str:
    """The array's data type as zarr-python prints its data type object.

    >>> import zarrkit as zk
    >>> data_type_repr(zk.create_array({}, shape=(1,), dtype=">i4", zarr_format=2))
    "Int32(endianness='big')"
    """
    dtype = array.dtype
    order = {"<": "'little'", ">": "'big'", "=": repr(sys.byteorder)}.get(dtype.byteorder)
    # A format 3 array holds its byte order in the ``bytes`` codec, as zarr-python's type.
    endian = getattr(array.serializer, "endian", None)
    if order is not None and endian is not None:
        order = repr(getattr(endian, "value", endian))
    if dtype.kind == "b":
        return "Bool()"
    if dtype.kind in _NUMERIC_TYPE_NAMES:
        name = f"{_NUMERIC_TYPE_NAMES[dtype.kind]}{dtype.itemsize * 8}"
        return f"{name}()" if order is None else f"{name}(endianness={order})"
    if dtype.kind in "mM":
        unit, count = np.datetime_data(dtype)
        name = "DateTime64" if dtype.kind == "M" else "TimeDelta64"
        return f"{name}(endianness={order}, scale_factor={count}, unit={unit!r})"
    if dtype.kind == "U":
        return f"FixedLengthUTF32(length={dtype.itemsize // 4}, endianness={order})"
    if dtype.kind == "S":
        return f"NullTerminatedBytes(length={dtype.itemsize})"
    if dtype.kind == "V" and dtype.fields is None:
        return f"RawBytes(length={dtype.itemsize})"
    if dtype.kind in "OT" and array.metadata.zarr_format == 3:
        name = array.metadata.data_type.name
        if name == "string":
            return "VariableLengthUTF8()"
        if name in ("bytes", "variable_length_bytes"):
            return "VariableLengthBytes()"
    return str(dtype)


def byte_info(size: int) -> str:
    """A byte count as zarr-python's summaries print it: bare below 1 KiB, else with a
    binary-unit size (``K``, ``M``, ...) after it.

    >>> byte_info(1000), byte_info(40000), byte_info(400_000_000)
    ('1000', '40000 (39.1K)', '400000000 (381.5M)')
    """
    if size < 1024:
        return str(size)
    value = float(size)
    for unit in "KMGTP":
        value /= 1024
        if value < 1024 or unit == "P":
            return f"{size} ({value:.1f}{unit})"
    raise AssertionError("unreachable")


class GroupInfo:
    """A printable summary of a group (``print(g.info)``), laid out as zarr-python's;
    the member counts only when known.

    >>> import zarrkit as zk
    >>> GroupInfo(zk.group({}), members=3, groups=1).items()[-2:]
    [('No. arrays', '2'), ('No. groups', '1')]
    """

    def __init__(self, group: Group, *, members: int | None = None, groups: int = 0) -> None:
        self._group = group
        self._members = members
        self._groups = groups

    def items(self) -> list[tuple[str, str]]:
        """The summary as (label, value) rows."""
        g = self._group
        rows = [("Name", g.path), ("Type", "Group"), ("Zarr format", str(g.zarr_format)),
                ("Read-only", str(g.read_only)), ("Store type", store_type_name(g.store))]
        if self._members is not None:
            rows += [("No. members", str(self._members)),
                     ("No. arrays", str(self._members - self._groups)),
                     ("No. groups", str(self._groups))]
        return rows

    def __repr__(self) -> str:
        return "\n".join(f"{label:<11} : {value}" for label, value in self.items())

    __str__ = __repr__
