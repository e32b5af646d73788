"""The Daf data set: scalars, axes, and vectors and matrices along the axes, in Zarr.

:func:`open_dataset` (``zk.daf.open``) opens or creates one; :class:`DafDataset` has the
methods of DataAxesFormats.jl without its ``!`` (``set_vector!`` is ``set_vector``), in
Python style: ``get_*`` take ``default=``, ``set_*`` take ``overwrite=``, ``delete_*``
take ``must_exist=``. In memory, indices are 0-based; on disk they are Julia's, 1-based.

Dense numbers come back as read-only numpy arrays, memory-mapped (no copy) on the
directory and ZIP backends; a dense matrix is stored column-major (its Zarr shape is the
reverse of the Daf (rows, columns) shape), so what comes back is a transposed view of the
mapped chunk. Sparse properties come back as scipy objects (``csc_matrix`` for matrices,
a 1-d ``coo_array`` for vectors).

>>> import numpy as np, zarrkit as zk
>>> daf = zk.daf.open(zk.MemoryStore(), "w", name="demo")
>>> daf.add_axis("cell", ["c1", "c2", "c3"])
>>> daf.add_axis("gene", ["g1", "g2"])
>>> daf.set_matrix("cell", "gene", "UMIs", np.arange(6).reshape(3, 2))
>>> daf.get_matrix("cell", "gene", "UMIs")[2]
array([4, 5])
>>> daf.root["matrices/cell/gene/UMIs"].shape  # the Zarr array is the transpose
(2, 3)
"""

from __future__ import annotations

import collections
import json
import os
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

import zarrkit.api as zk_api
from zarrkit.daf import layout
from zarrkit.daf import packed as daf_packed
from zarrkit.daf import sparse as daf_sparse
from zarrkit.daf.backends import MODES, StoreHandle, acquire, parse_location, wrap_store
from zarrkit.daf.layout import axis_path, matrix_path, scalar_path, vector_path
from zarrkit.daf.values import (
    RESERVED_VECTOR,
    check_name,
    is_sparse,
    normalize_entries,
    normalize_matrix,
    normalize_scalar,
    normalize_vector,
    type_name,
)
from zarrkit.errors import (
    ChunkDecodeError,
    DafExistsError,
    DafKeyError,
    DafValueError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
    NotDafError,
    ReadOnlyError,
    UnsupportedOperationError,
)
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.creation import array_metadata
from zarrkit.hierarchy.group import Group
from zarrkit.hierarchy.nodes import (
    FoundNode,
    create_array_node,
    find_node,
    group_metadata_key,
)
from zarrkit.metadata.jsonio import dump_json
from zarrkit.metadata.v2 import ZMETADATA
from zarrkit.paths import join_path, key_prefix, normalize_path
from zarrkit.storage.base import Store

# Where overwrites stage new properties and park the old ones until the swap is done. It
# is removed after every replace, so a data set only holds it after a crash midway (a
# dot name: Julia's Daf and the four layout groups never use one).
_STAGING = ".zarrkit-replacing"

# Marks an absent ``default=``: the property must then exist.
_MISSING: Any = object()


class Names(frozenset[str]):
    """A set of names (scalars, axes, vectors, matrices) that iterates in sorted order, so
    that what prints or loops over it is stable.

    >>> Names({"b", "a"}), list(Names({"b", "a"})), Names({"a"}) == {"a"}
    (Names(['a', 'b']), ['a', 'b'], True)
    """

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(frozenset.__iter__(self)))

    def __repr__(self) -> str:
        return f"Names({sorted(self)!r})"


class DafDataset:
    """One Daf data set in a Zarr hierarchy; obtain it from :func:`zarrkit.daf.open`.

    Every method holds the data set's lock (shared by every data set of one ZIP archive
    in this process), so threads may share a data set. ``close()`` (or a ``with`` block)
    releases its store; a ZIP archive's central directory is written when its last data
    set closes (or is garbage collected).

    >>> import zarrkit as zk
    >>> with zk.daf.open(zk.MemoryStore(), "w") as daf:
    ...     daf.set_scalar("version", "1.0")
    ...     daf.get_scalar("version"), daf.zarr_format
    ('1.0', 3)
    """

    def __init__(self, root: Group, handle: StoreHandle, *, path: str, mode: str,
                 name: str | None = None) -> None:
        self._root = root
        self._handle = handle
        self._lock = handle.lock
        self._path = path
        self._mode = mode
        self._read_only = mode == "r" or handle.store.read_only
        # Axis entries and their index, read once per axis (an axis never changes while
        # it exists: it is only ever deleted and added again, which drops these).
        self._entries: dict[str, np.ndarray[Any, Any]] = {}
        self._indices: dict[str, dict[str, int]] = {}
        # The store is released when the data set is closed or garbage collected.
        self._finalizer = weakref.finalize(self, handle.release)
        if name is None and self.has_scalar("name"):
            name = str(self.get_scalar("name"))
        self._name = path if name is None else name

    # --- description ------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The data set's name: given to ``open``, else its ``name`` scalar, else its path.

        >>> import zarrkit as zk
        >>> zk.daf.open(zk.MemoryStore(), "w", name="cells").name
        'cells'
        """
        return self._name

    @property
    def path(self) -> str:
        """Where the data set lives: absolute path (with ``#/group``), URL, or store.

        >>> import zarrkit as zk
        >>> zk.daf.open(zk.MemoryStore(), "w").path
        '<MemoryStore>'
        """
        return self._path

    @property
    def mode(self) -> str:
        """The mode it was opened with (``r``, ``r+``, ``w+``, ``w``).

        >>> import zarrkit as zk
        >>> zk.daf.open(zk.MemoryStore(), "w+").mode
        'w+'
        """
        return self._mode

    @property
    def read_only(self) -> bool:
        """Whether changes are refused (mode ``r``, or a read-only store).

        >>> import zarrkit as zk
        >>> store = zk.MemoryStore(); zk.daf.open(store, "w").close()
        >>> zk.daf.open(store).read_only
        True
        """
        return self._read_only

    @property
    def zarr_format(self) -> int:
        """The Zarr format of its layout: 3 (DataAxesFormats.jl 0.3) or 2 (the seed).

        >>> import zarrkit as zk
        >>> zk.daf.open(zk.MemoryStore(), "w", zarr_format=2).zarr_format
        2
        """
        return self._root.zarr_format

    @property
    def backend(self) -> str:
        """``directory``, ``zip``, ``http``, or ``store`` (a store given to ``open``).

        >>> import zarrkit as zk
        >>> zk.daf.open(zk.MemoryStore(), "w").backend
        'store'
        """
        return self._handle.kind

    @property
    def root(self) -> Group:
        """The Zarr group holding the data set (for direct access to the layout).

        >>> import zarrkit as zk
        >>> sorted(zk.daf.open(zk.MemoryStore(), "w").root)
        ['axes', 'matrices', 'scalars', 'vectors']
        """
        return self._root

    @property
    def store(self) -> Store:
        """The store holding the data set (shared by every open of one ZIP archive).

        >>> import zarrkit as zk
        >>> store = zk.MemoryStore(); zk.daf.open(store, "w").store is store
        True
        """
        return self._handle.store

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called.

        >>> import zarrkit as zk
        >>> zk.daf.open(zk.MemoryStore(), "w").closed
        False
        """
        return not self._finalizer.alive

    def __repr__(self) -> str:
        return (f"<zarrkit.daf.DafDataset {self._name!r} (zarr v{self.zarr_format}, "
                f"{self.backend}, mode {self._mode!r})>")

    def close(self) -> None:
        """Release the store (a ZIP archive's is closed, writing its central directory,
        when its last data set closes). Idempotent.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.close(); daf.closed
        True
        """
        with self._lock:
            self._finalizer()

    def __enter__(self) -> DafDataset:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- internals --------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise DafValueError(f"the Daf data set {self._name!r} ({self._path}) is closed")

    def _check_writable(self) -> None:
        self._check_open()
        if self._read_only:
            raise ReadOnlyError(f"the Daf data set {self._name!r} ({self._path}) is "
                                f"read-only (mode {self._mode!r})")

    def _node(self, path: str) -> Array | Group | None:
        """The array or group at ``path`` below the root, or None."""
        try:
            return self._root.get(path)  # type: ignore[no-any-return]
        except MetadataError:
            array = self._julia_packed(path)
            if array is None:
                raise
            return array

    def _julia_packed(self, path: str) -> Array | None:
        """A packed array as the Julia package writes it (its shard not a multiple of the
        inner chunk), opened with the shard rounded up; None if it is not one."""
        full = join_path(self._root.path, path)
        found = find_node(self._handle.store, full)
        if found is None or found.kind != "array":
            return None
        metadata = layout.rounded_shard_metadata(found.metadata)
        if metadata is None:
            return None
        return Array(self._handle.store, full, metadata, read_only=True)

    def _exists(self, path: str) -> bool:
        return self._node(path) is not None

    def _names(self, path: str, *, arrays_only: bool = False) -> Names:
        group = self._node(path)
        if not isinstance(group, Group):
            return Names()
        if arrays_only:
            return Names(name for name, found in group.member_nodes() if found.kind == "array")
        return Names(group.keys())

    def _read(self, array: Array, shape: tuple[int, ...], what: str) -> np.ndarray[Any, Any]:
        """An array's data, read-only: a view of the mapped chunk when the backend maps."""
        if tuple(array.shape) != shape:
            raise ChunkDecodeError(f"{what}: stored with shape {tuple(array.shape)}, "
                                   f"expected {shape}")
        if self._handle.can_map:
            array = Array(array.store, array.path, array.metadata, read_only=True, mmap=True)
        data = np.asarray(array[...])
        if data.dtype.kind == "T":  # strings read as numpy's StringDType: Daf gives objects
            data = data.astype(object)
        if data.flags.writeable:
            data.flags.writeable = False
        return data

    def _relative(self, node: Array | Group) -> str:
        """The path of a node below the data set's root group."""
        prefix = self._root.path
        return node.path[len(prefix) + 1:] if prefix else node.path

    def _component(self, group: Group, name: str, what: str, *, required: bool = True
                   ) -> np.ndarray[Any, Any] | None:
        node = self._node(join_path(self._relative(group), name))
        if node is None and not required:
            return None
        if not isinstance(node, Array) or node.ndim != 1:
            raise ChunkDecodeError(f"{what}: the sparse group has no 1-d {name!r} array")
        return self._read(node, node.shape, f"{what} ({name})")

    def _prepare_set(self, paths: Iterable[str], overwrite: bool, what: str) -> list[str]:
        """Check that the properties at ``paths`` may be (re)written; return those that
        exist (to be replaced by :meth:`_replace`). Nothing is changed here."""
        existing = [path for path in paths if self._exists(path)]
        if existing and not overwrite:
            raise DafExistsError(f"{what} already exists in {self._name!r} "
                                 f"({', '.join(existing)}); pass overwrite=True to replace it")
        if existing:
            self._check_deletable(what, "overwrite")
        return existing

    def _check_deletable(self, what: str, verb: str = "delete") -> None:
        if self._handle.append_only:
            raise UnsupportedOperationError(
                f"cannot {verb} {what} in {self._name!r}: the ZIP backend is append-only "
                "(properties cannot be deleted or replaced, axes cannot be deleted or "
                "reordered)")

    def _delete(self, path: str) -> None:
        del self._root[path]

    def _replace(self, paths: list[str], existing: list[str],
                 write: Callable[[list[str]], None]) -> None:
        """Write properties at ``paths`` with ``write`` (given the paths to write at),
        replacing those in ``existing`` without ever deleting one first.

        The new properties are written in a staging group, the old ones moved aside, the
        new ones moved in, and only then the old ones removed: a failure at any step
        (ENOSPC, EFBIG) undoes what was done and leaves every old property readable where
        it was, with no half-written one visible. Moves copy chunks before documents
        (:meth:`Group.move`), so each step is itself undone on failure."""
        if not existing:
            write(paths)
            return
        staging = f"{_STAGING}/{uuid.uuid4().hex}"
        new = [f"{staging}/new/{i}" for i in range(len(paths))]
        aside = {path: f"{staging}/old/{i}" for i, path in enumerate(existing)}
        moved: list[str] = []
        placed: list[str] = []
        try:
            write(new)
            for path in existing:
                self._root.move(path, aside[path])
                moved.append(path)
            for path, source in zip(paths, new, strict=True):
                self._root.move(source, path)
                placed.append(path)
        except BaseException:
            # Undo in reverse order, best effort: the original error is the one to raise.
            for path in placed:
                self._discard(path)
            stranded = False
            for path in reversed(moved):
                try:
                    self._root.move(aside[path], path)
                except Exception:
                    stranded = True  # left aside in the staging group, not lost
            self._discard_staging(staging, keep_old=stranded)
            raise
        self._discard_staging(staging)

    def _discard(self, path: str) -> None:
        """Delete the node at ``path`` if there is one, ignoring failures (cleanup only).
        When the store refuses writes (disk full), updating consolidated metadata fails:
        the keys are then deleted directly, which needs no write."""
        try:
            if self._exists(path):
                self._delete(path)
        except Exception:
            try:
                self._handle.store.delete_prefix(key_prefix(join_path(self._root.path, path)))
            except Exception:  # noqa: S110 - cleanup after an earlier error, which is raised
                pass

    def _discard_staging(self, staging: str, *, keep_old: bool = False) -> None:
        """Remove a staging group, and the staging root once it is empty (so that after a
        successful replace the layout is exactly what a plain write leaves). With
        ``keep_old`` (an old property could not be moved back) the old ones stay there
        rather than being deleted."""
        if keep_old:
            self._discard(f"{staging}/new")
            return
        self._discard(staging)
        if not self._names(_STAGING):
            self._discard(_STAGING)

    def _write_dense(self, path: str, data: np.ndarray[Any, Any], *, packed: bool,
                     separator: str = "/", whole_rows: bool = False) -> None:
        """Create the array at ``path`` holding ``data`` (already in Zarr orientation);
        ``packed`` (v3) stores it as an "indexed+zipped" shard when large enough, its
        inner chunks whole Daf columns with ``whole_rows`` (as Julia's relayout does)."""
        options = (layout.packed_options(data.dtype, data.shape, whole_rows=whole_rows)
                   if packed else None)
        is_packed = options is not None
        if options is None:
            options = layout.flat_options(self.zarr_format, data.dtype, data.shape,
                                          separator=separator)
        # What Group.create_array does, with the zarr.json shaped as Zarr.jl writes it.
        store = self._handle.store
        full = join_path(self._root.path, path)
        attributes = options.pop("attributes", None)
        metadata = array_metadata(zarr_format=self.zarr_format, attributes=attributes,
                                  **options)
        create_array_node(store, full, layout.JuliaShaped(metadata), attributes)
        if is_packed:
            # Julia's dual-format shard (every inner chunk stored, ZIP records around
            # them), not zarrkit's sharding codec (which skips all-fill inner chunks).
            daf_packed.write_packed(store, full, metadata, data)
        elif data.size:
            Array(store, full, metadata, attributes=attributes or {})[...] = data

    # Julia packs every component of a sparse property (each when large enough), as its
    # write_sparse_vector / write_sparse_matrix do with ``is_packed``.
    def _write_sparse_vector(self, path: str, parts: daf_sparse.SparseVectorParts, *,
                             packed: bool) -> None:
        self._root.create_group(path)
        self._write_dense(f"{path}/nzind", parts.nzind, packed=packed, separator=".")
        if parts.nzval is not None:
            self._write_dense(f"{path}/nzval", parts.nzval, packed=packed)

    def _write_sparse_matrix(self, path: str, parts: daf_sparse.SparseMatrixParts, *,
                             packed: bool) -> None:
        self._root.create_group(path)
        self._write_dense(f"{path}/colptr", parts.colptr, packed=packed, separator=".")
        self._write_dense(f"{path}/rowval", parts.rowval, packed=packed, separator=".")
        if parts.nzval is not None:
            self._write_dense(f"{path}/nzval", parts.nzval, packed=packed)

    def _check_packed(self, packed: bool) -> None:
        if packed and self.zarr_format != 3:
            raise DafValueError(
                f"packed properties need the Zarr v3 layout; {self._name!r} uses v2, whose "
                "arrays are single uncompressed chunks")

    # --- scalars ----------------------------------------------------------------------
    def set_scalar(self, name: str, value: Any, *, overwrite: bool = False) -> None:
        """Set a scalar property: a bool, integer, float (numpy scalars keep their type)
        or str. DafExistsError if it exists, unless ``overwrite``.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w")
        >>> daf.set_scalar("count", np.uint8(7)); daf.get_scalar("count")
        np.uint8(7)
        """
        with self._lock:
            self._check_writable()
            check_name(name, "scalar")
            stored = normalize_scalar(value)
            path = scalar_path(name)
            existing = self._prepare_set([path], overwrite, f"scalar {name!r}")
            dtype = np.dtype(object) if isinstance(stored, str) else stored.dtype
            data = np.array([stored], dtype=dtype)
            self._replace([path], existing, lambda at: self._write_dense(
                at[0], data, packed=False, separator="."))

    def get_scalar(self, name: str, *, default: Any = _MISSING) -> Any:
        """The value of a scalar property (a numpy scalar, or str); ``default`` if it does
        not exist and one is given, else DafKeyError.

        >>> import zarrkit as zk
        >>> zk.daf.open(zk.MemoryStore(), "w").get_scalar("missing", default=None) is None
        True
        """
        with self._lock:
            self._check_open()
            node = self._node(scalar_path(name))
            if node is None:
                if default is _MISSING:
                    raise DafKeyError(f"no scalar {name!r} in the Daf data set {self._name!r}")
                return default
            if not isinstance(node, Array) or node.size != 1:
                raise ChunkDecodeError(f"scalar {name!r}: expected a single-element array")
            value = np.asarray(node[...]).reshape(-1)[0]
            return str(value) if isinstance(value, str) else value

    def has_scalar(self, name: str) -> bool:
        """Whether a scalar property exists.

        >>> import zarrkit as zk
        >>> zk.daf.open(zk.MemoryStore(), "w").has_scalar("version")
        False
        """
        with self._lock:
            self._check_open()
            return isinstance(self._node(scalar_path(name)), Array)

    def scalars(self) -> Names:
        """The names of the scalar properties.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.set_scalar("a", 1); daf.scalars()
        Names(['a'])
        """
        with self._lock:
            self._check_open()
            return self._names(layout.SCALARS, arrays_only=True)

    def delete_scalar(self, name: str, *, must_exist: bool = True) -> None:
        """Delete a scalar property; DafKeyError if it does not exist and ``must_exist``.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.set_scalar("a", 1)
        >>> daf.delete_scalar("a"); daf.delete_scalar("a", must_exist=False); daf.scalars()
        Names([])
        """
        with self._lock:
            self._check_writable()
            path = scalar_path(name)
            if not self._exists(path):
                if must_exist:
                    raise DafKeyError(f"no scalar {name!r} in the Daf data set {self._name!r}")
                return
            self._check_deletable(f"scalar {name!r}")
            self._delete(path)

    # --- axes -------------------------------------------------------------------------
    def add_axis(self, axis: str, entries: Any, *, overwrite: bool = False) -> None:
        """Add an axis with unique string ``entries``. With ``overwrite``, an existing axis
        of that name is deleted first, with all its vectors and matrices (as in Julia).

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a", "b"])
        >>> daf.axis_length("cell"), sorted(daf.root["matrices"])
        (2, ['cell'])
        """
        with self._lock:
            self._check_writable()
            check_name(axis, "axis")
            values = normalize_entries(entries, f"axis {axis!r}")
            if self._exists(axis_path(axis)):
                if not overwrite:
                    raise DafExistsError(f"axis {axis!r} already exists in {self._name!r}; "
                                         "pass overwrite=True to replace it")
                self._check_deletable(f"axis {axis!r}", "overwrite")
                self._delete_axis(axis)
            others = sorted(self._names(layout.AXES, arrays_only=True))
            self._write_dense(axis_path(axis), values, packed=False, separator=".")
            self._root.require_group(f"{layout.VECTORS}/{axis}")
            # Every pair of axes has its matrices group, the axis with itself included.
            self._root.require_group(f"{layout.MATRICES}/{axis}/{axis}")
            for other in others:
                self._root.require_group(f"{layout.MATRICES}/{axis}/{other}")
                self._root.require_group(f"{layout.MATRICES}/{other}/{axis}")

    def _axis_array(self, axis: str) -> Array | None:
        node = self._node(axis_path(axis))
        if node is not None and (not isinstance(node, Array) or node.ndim != 1):
            raise ChunkDecodeError(f"axis {axis!r}: {axis_path(axis)} is not a 1-d array")
        return node

    def _require_axis_length(self, axis: str) -> int:
        array = self._axis_array(axis)
        if array is None:
            raise DafKeyError(f"no axis {axis!r} in the Daf data set {self._name!r}")
        return int(array.shape[0])

    def _axis_entries(self, axis: str) -> np.ndarray[Any, Any] | None:
        entries = self._entries.get(axis)
        if entries is None:
            array = self._axis_array(axis)
            if array is None:
                return None
            entries = self._read(array, array.shape, f"axis {axis!r}")
            self._entries[axis] = entries
        return entries

    def _require_entries(self, axis: str) -> np.ndarray[Any, Any]:
        entries = self._axis_entries(axis)
        if entries is None:
            raise DafKeyError(f"no axis {axis!r} in the Daf data set {self._name!r}")
        return entries

    def axis_vector(self, axis: str, *, default: Any = _MISSING) -> Any:
        """The entries of an axis (a read-only object array of str); ``default`` when the
        axis does not exist and one is given.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a", "b"])
        >>> daf.axis_vector("cell").tolist(), daf.axis_vector("gene", default=None)
        (['a', 'b'], None)
        """
        with self._lock:
            self._check_open()
            entries = self._axis_entries(axis)
            if entries is None:
                if default is _MISSING:
                    raise DafKeyError(f"no axis {axis!r} in the Daf data set {self._name!r}")
                return default
            return entries

    def axis_entries(self, axis: str, indices: Any = None) -> np.ndarray[Any, Any]:
        """The entries of an axis at 0-based ``indices`` (all of them when None).

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a", "b", "c"])
        >>> daf.axis_entries("cell", [2, 0]).tolist()
        ['c', 'a']
        """
        with self._lock:
            self._check_open()
            entries = self._require_entries(axis)
            if indices is None:
                return entries
            try:
                return entries[np.asarray(indices, dtype=np.intp)]  # type: ignore[no-any-return]
            except IndexError as e:
                raise DafValueError(f"axis {axis!r} has {entries.size} entries: {e}") from None

    def axis_dict(self, axis: str) -> dict[str, int]:
        """A new dict from each entry of an axis to its 0-based index.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a", "b"])
        >>> daf.axis_dict("cell")
        {'a': 0, 'b': 1}
        """
        with self._lock:
            self._check_open()
            return dict(self._index_of(axis))

    def _index_of(self, axis: str) -> dict[str, int]:
        index = self._indices.get(axis)
        if index is None:
            entries = self._require_entries(axis).tolist()
            index = {entry: i for i, entry in enumerate(entries)}
            if len(index) != len(entries):
                # A file not written by a Daf library: an entry named twice has no index.
                twice = next(e for e, n in collections.Counter(entries).items() if n > 1)
                raise ChunkDecodeError(f"axis {axis!r} of the Daf data set {self._name!r}: "
                                       f"entry {twice!r} appears more than once")
            self._indices[axis] = index
        return index

    def axis_indices(self, axis: str, entries: Any) -> np.ndarray[Any, Any]:
        """The 0-based indices of ``entries`` in an axis; DafValueError naming any that
        are not entries of it.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a", "b"])
        >>> daf.axis_indices("cell", ["b", "a", "b"])
        array([1, 0, 1])
        """
        with self._lock:
            self._check_open()
            index = self._index_of(axis)
            wanted = [entries] if isinstance(entries, str) else list(entries)
            missing = [entry for entry in wanted if entry not in index]
            if missing:
                raise DafValueError(f"not entries of axis {axis!r}: {missing[:5]!r}"
                                    + (f" and {len(missing) - 5} more" if len(missing) > 5
                                       else ""))
            return np.array([index[entry] for entry in wanted], dtype=np.int64)

    def axis_length(self, axis: str) -> int:
        """The number of entries of an axis (from its metadata: nothing is read).

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a"])
        >>> daf.axis_length("cell")
        1
        """
        with self._lock:
            self._check_open()
            return self._require_axis_length(axis)

    def has_axis(self, axis: str) -> bool:
        """Whether an axis exists.

        >>> import zarrkit as zk
        >>> zk.daf.open(zk.MemoryStore(), "w").has_axis("cell")
        False
        """
        with self._lock:
            self._check_open()
            return self._axis_array(axis) is not None

    def axes(self) -> Names:
        """The names of the axes.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a"]); daf.axes()
        Names(['cell'])
        """
        with self._lock:
            self._check_open()
            return self._names(layout.AXES, arrays_only=True)

    def delete_axis(self, axis: str, *, must_exist: bool = True) -> None:
        """Delete an axis with all its vectors and the matrices along it (as in Julia).

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a"])
        >>> daf.set_vector("cell", "age", [3]); daf.delete_axis("cell"); daf.axes()
        Names([])
        """
        with self._lock:
            self._check_writable()
            if self._axis_array(axis) is None:
                if must_exist:
                    raise DafKeyError(f"no axis {axis!r} in the Daf data set {self._name!r}")
                return
            self._check_deletable(f"axis {axis!r}")
            self._delete_axis(axis)

    def _delete_axis(self, axis: str) -> None:
        others = self._names(layout.AXES, arrays_only=True)
        for path in (f"{layout.VECTORS}/{axis}", f"{layout.MATRICES}/{axis}",
                     *(f"{layout.MATRICES}/{other}/{axis}" for other in others),
                     axis_path(axis)):
            if self._exists(path):
                self._delete(path)
        self._entries.pop(axis, None)
        self._indices.pop(axis, None)

    # --- vectors ----------------------------------------------------------------------
    def set_vector(self, axis: str, name: str, value: Any, *, overwrite: bool = False,
                   packed: bool = False) -> None:
        """Set a vector property of an axis: a 1-d array (or list) of its length, a scalar
        to fill it with, or a scipy.sparse vector (stored sparse). ``packed`` stores a
        large dense vector (or each large component of a sparse one) chunked and
        compressed in an "indexed+zipped" shard, as Julia's ``packed=true`` (v3 layout;
        small ones stay flat, as in Julia; see :mod:`zarrkit.daf.packed`).

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a", "b"])
        >>> daf.set_vector("cell", "type", ["T", "B"]); daf.get_vector("cell", "type")
        array(['T', 'B'], dtype=object)
        """
        with self._lock:
            self._check_writable()
            check_name(name, "vector")
            if name == RESERVED_VECTOR:
                raise DafValueError(f"the vector name {RESERVED_VECTOR!r} is reserved for the "
                                    "axis entries")
            self._check_packed(packed)
            length = self._require_axis_length(axis)
            what = f"vector {name!r} of axis {axis!r}"
            parts = daf_sparse.encode_vector(value, length, what) if is_sparse(value) else None
            dense = None if parts is not None else normalize_vector(value, length, what)
            path = vector_path(axis, name)
            existing = self._prepare_set([path], overwrite, what)

            def write(at: list[str]) -> None:
                if parts is not None:
                    self._write_sparse_vector(at[0], parts, packed=packed)
                else:
                    assert dense is not None
                    self._write_dense(at[0], dense, packed=packed)

            self._replace([path], existing, write)

    def get_vector(self, axis: str, name: str, *, default: Any = _MISSING) -> Any:
        """A vector property: a read-only numpy array (memory-mapped on the directory and
        ZIP backends), or a 1-d ``scipy.sparse.coo_array`` for a sparse one. The name
        ``"name"`` gives the axis entries. ``default`` (None, a scalar to fill with, or a
        vector) when it does not exist and one is given.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a", "b"])
        >>> daf.get_vector("cell", "age", default=0)
        array([0, 0])
        """
        with self._lock:
            self._check_open()
            length = self._require_axis_length(axis)
            if name == RESERVED_VECTOR:
                return self._require_entries(axis)
            what = f"vector {name!r} of axis {axis!r}"
            node = self._node(vector_path(axis, name))
            if node is None:
                if default is _MISSING:
                    raise DafKeyError(f"no {what} in the Daf data set {self._name!r}")
                return None if default is None else normalize_vector(default, length, what)
            if isinstance(node, Array):
                return self._read(node, (length,), what)
            nzind = self._component(node, "nzind", what)
            nzval = self._component(node, "nzval", what, required=False)
            assert nzind is not None
            return daf_sparse.decode_vector(nzind, nzval, length, what)

    def has_vector(self, axis: str, name: str) -> bool:
        """Whether a vector property exists (``"name"``, the entries, always does).

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a"])
        >>> daf.has_vector("cell", "name"), daf.has_vector("cell", "age")
        (True, False)
        """
        with self._lock:
            self._check_open()
            self._require_axis_length(axis)
            return name == RESERVED_VECTOR or self._exists(vector_path(axis, name))

    def vectors(self, axis: str) -> Names:
        """The names of the vector properties of an axis (not the reserved ``"name"``).

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a"])
        >>> daf.set_vector("cell", "age", [1]); daf.vectors("cell")
        Names(['age'])
        """
        with self._lock:
            self._check_open()
            self._require_axis_length(axis)
            return self._names(f"{layout.VECTORS}/{axis}")

    def delete_vector(self, axis: str, name: str, *, must_exist: bool = True) -> None:
        """Delete a vector property; DafKeyError if it does not exist and ``must_exist``.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w"); daf.add_axis("cell", ["a"])
        >>> daf.set_vector("cell", "age", [1]); daf.delete_vector("cell", "age")
        >>> daf.has_vector("cell", "age")
        False
        """
        with self._lock:
            self._check_writable()
            self._require_axis_length(axis)
            path = vector_path(axis, name)
            if not self._exists(path):
                if must_exist:
                    raise DafKeyError(f"no vector {name!r} of axis {axis!r} in the Daf data "
                                      f"set {self._name!r}")
                return
            self._check_deletable(f"vector {name!r} of axis {axis!r}")
            self._delete(path)

    # --- matrices ---------------------------------------------------------------------
    def _matrix_shape(self, rows_axis: str, columns_axis: str) -> tuple[int, int]:
        return self._require_axis_length(rows_axis), self._require_axis_length(columns_axis)

    def set_matrix(self, rows_axis: str, columns_axis: str, name: str, value: Any, *,
                   overwrite: bool = False, relayout: bool = True,
                   packed: bool = False) -> None:
        """Set a matrix property: a 2-d numeric or Bool array of shape (rows, columns), a
        scalar to fill it with, or a scipy.sparse matrix (stored sparse). It is stored
        column-major; with ``relayout`` (the default, as in Julia) the flipped layout
        (columns axis as rows) is stored too, unless both axes are the same. ``packed``
        packs as Julia's ``packed=true`` does: a dense matrix in inner chunks of 8 KiB of
        a column (its flipped layout in whole columns), each large component of a sparse
        one (its flipped layout is not packed); small ones stay flat.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w")
        >>> daf.add_axis("cell", ["a", "b"]); daf.add_axis("gene", ["x"])
        >>> daf.set_matrix("cell", "gene", "UMIs", [[1], [2]])
        >>> daf.get_matrix("gene", "cell", "UMIs")
        array([[1, 2]])
        """
        with self._lock:
            self._check_writable()
            check_name(name, "matrix")
            self._check_packed(packed)
            shape = self._matrix_shape(rows_axis, columns_axis)
            relayout = relayout and rows_axis != columns_axis
            what = f"matrix {name!r} of axes ({rows_axis!r}, {columns_axis!r})"
            sparse_parts = flipped_parts = None
            dense = None
            if is_sparse(value):
                sparse_parts = daf_sparse.encode_matrix(value, shape, what)
                if relayout:
                    flipped_parts = daf_sparse.encode_matrix(value.T, shape[::-1], what)
            else:
                dense = normalize_matrix(value, shape, what)
            paths = [matrix_path(rows_axis, columns_axis, name)]
            if relayout:
                paths.append(matrix_path(columns_axis, rows_axis, name))
            existing = self._prepare_set(paths, overwrite, what)

            # The flipped layout is written as Julia's format_relayout_matrix! does: a
            # sparse one never packed, a packed dense one in whole-column inner chunks.
            def write(at: list[str]) -> None:
                if sparse_parts is not None:
                    self._write_sparse_matrix(at[0], sparse_parts, packed=packed)
                    if flipped_parts is not None:
                        self._write_sparse_matrix(at[1], flipped_parts, packed=False)
                else:
                    assert dense is not None
                    # Column-major: the Zarr array holds the transpose, in C order.
                    self._write_dense(at[0], dense.T, packed=packed)
                    if relayout:
                        self._write_dense(at[1], dense, packed=packed, whole_rows=True)

            self._replace(paths, existing, write)

    def _read_matrix(self, node: Array | Group, shape: tuple[int, int], what: str) -> Any:
        """The matrix stored at ``node`` in the Daf (rows, columns) orientation."""
        if isinstance(node, Array):
            return self._read(node, shape[::-1], what).T
        colptr = self._component(node, "colptr", what)
        rowval = self._component(node, "rowval", what)
        nzval = self._component(node, "nzval", what, required=False)
        assert colptr is not None and rowval is not None
        return daf_sparse.decode_matrix(colptr, rowval, nzval, shape, what)

    def get_matrix(self, rows_axis: str, columns_axis: str, name: str, *,
                   default: Any = _MISSING, relayout: bool = True) -> Any:
        """A matrix property in the Daf (rows, columns) orientation: a read-only numpy
        array (a transposed view of the memory-mapped chunk on the directory and ZIP
        backends), or a ``scipy.sparse.csc_matrix`` (0-based). With ``relayout``, a matrix
        stored only in the flipped layout is returned relayouted. ``default`` (None, or a
        scalar to fill with) when it does not exist and one is given.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w")
        >>> daf.add_axis("cell", ["a", "b"]); daf.add_axis("gene", ["x"])
        >>> daf.get_matrix("cell", "gene", "UMIs", default=0.5)
        array([[0.5],
               [0.5]])
        """
        with self._lock:
            self._check_open()
            shape = self._matrix_shape(rows_axis, columns_axis)
            what = f"matrix {name!r} of axes ({rows_axis!r}, {columns_axis!r})"
            node = self._node(matrix_path(rows_axis, columns_axis, name))
            if node is not None:
                return self._read_matrix(node, shape, what)
            if relayout and rows_axis != columns_axis:
                node = self._node(matrix_path(columns_axis, rows_axis, name))
                if node is not None:
                    flipped = self._read_matrix(node, shape[::-1], what)
                    # Dense: the transpose of the flipped matrix is its Zarr array itself
                    # (row-major), a view; sparse: CSR of the flipped CSC, made CSC.
                    return flipped.T if isinstance(node, Array) else flipped.T.tocsc()
            if default is _MISSING:
                raise DafKeyError(f"no {what} in the Daf data set {self._name!r}")
            return None if default is None else normalize_matrix(default, shape, what)

    def has_matrix(self, rows_axis: str, columns_axis: str, name: str, *,
                   relayout: bool = True) -> bool:
        """Whether a matrix property exists (in either layout, with ``relayout``).

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w")
        >>> daf.add_axis("cell", ["a"]); daf.add_axis("gene", ["x"])
        >>> daf.set_matrix("cell", "gene", "m", [[1.0]], relayout=False)
        >>> daf.has_matrix("gene", "cell", "m"), daf.has_matrix("gene", "cell", "m", relayout=False)
        (True, False)
        """
        with self._lock:
            self._check_open()
            self._matrix_shape(rows_axis, columns_axis)
            if self._exists(matrix_path(rows_axis, columns_axis, name)):
                return True
            return relayout and rows_axis != columns_axis and self._exists(
                matrix_path(columns_axis, rows_axis, name))

    def matrices(self, rows_axis: str, columns_axis: str, *, relayout: bool = True) -> Names:
        """The names of the matrix properties of two axes (in either layout, with
        ``relayout``).

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w")
        >>> daf.add_axis("cell", ["a"]); daf.add_axis("gene", ["x"])
        >>> daf.set_matrix("gene", "cell", "m", [[1.0]], relayout=False)
        >>> daf.matrices("cell", "gene"), daf.matrices("cell", "gene", relayout=False)
        (Names(['m']), Names([]))
        """
        with self._lock:
            self._check_open()
            self._matrix_shape(rows_axis, columns_axis)
            names = set(self._names(f"{layout.MATRICES}/{rows_axis}/{columns_axis}"))
            if relayout and rows_axis != columns_axis:
                names |= self._names(f"{layout.MATRICES}/{columns_axis}/{rows_axis}")
            return Names(names)

    def delete_matrix(self, rows_axis: str, columns_axis: str, name: str, *,
                      must_exist: bool = True, relayout: bool = True) -> None:
        """Delete a matrix property (both layouts, with ``relayout``); DafKeyError if it
        does not exist and ``must_exist``.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w")
        >>> daf.add_axis("cell", ["a"]); daf.add_axis("gene", ["x"])
        >>> daf.set_matrix("cell", "gene", "m", [[1.0]]); daf.delete_matrix("gene", "cell", "m")
        >>> daf.has_matrix("cell", "gene", "m")
        False
        """
        with self._lock:
            self._check_writable()
            self._matrix_shape(rows_axis, columns_axis)
            relayout = relayout and rows_axis != columns_axis
            paths = [matrix_path(rows_axis, columns_axis, name)]
            if relayout:
                paths.append(matrix_path(columns_axis, rows_axis, name))
            existing = [path for path in paths if self._exists(path)]
            what = f"matrix {name!r} of axes ({rows_axis!r}, {columns_axis!r})"
            if not existing:
                if must_exist:
                    raise DafKeyError(f"no {what} in the Daf data set {self._name!r}")
                return
            self._check_deletable(what)
            for path in existing:
                self._delete(path)

    def relayout_matrix(self, rows_axis: str, columns_axis: str, name: str, *,
                        overwrite: bool = False, packed: bool = False) -> None:
        """Store the flipped layout (columns axis as rows) of a matrix stored with
        ``rows_axis`` rows. A matrix of one axis with itself cannot be relayouted (Daf
        keeps a single layout of those). With ``packed``, a dense one is packed in whole
        columns when they are large enough (Julia's relayout); a sparse one stays flat.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w")
        >>> daf.add_axis("cell", ["a"]); daf.add_axis("gene", ["x", "y"])
        >>> daf.set_matrix("cell", "gene", "m", [[1, 2]], relayout=False)
        >>> daf.relayout_matrix("cell", "gene", "m")
        >>> daf.get_matrix("gene", "cell", "m", relayout=False)
        array([[1],
               [2]])
        """
        with self._lock:
            self._check_writable()
            self._check_packed(packed)
            shape = self._matrix_shape(rows_axis, columns_axis)
            what = f"matrix {name!r} of axes ({rows_axis!r}, {columns_axis!r})"
            if rows_axis == columns_axis:
                raise DafValueError(f"cannot relayout {what}: Daf stores a matrix of an axis "
                                    "with itself in one layout only")
            node = self._node(matrix_path(rows_axis, columns_axis, name))
            if node is None:
                raise DafKeyError(f"no {what} in the Daf data set {self._name!r}")
            matrix = self._read_matrix(node, shape, what)
            path = matrix_path(columns_axis, rows_axis, name)
            existing = self._prepare_set([path], overwrite, f"the flipped {what}")

            # As Julia's format_relayout_matrix!: a packed dense layout has whole-column
            # inner chunks; a sparse one is never packed.
            def write(at: list[str]) -> None:
                if isinstance(node, Array):
                    self._write_dense(at[0], np.ascontiguousarray(matrix), packed=packed,
                                      whole_rows=True)
                else:
                    parts = daf_sparse.encode_matrix(matrix.T, shape[::-1], what)
                    self._write_sparse_matrix(at[0], parts, packed=False)

            self._replace([path], existing, write)

    # --- description ------------------------------------------------------------------
    def _describe(self, node: Array | Group, shape: tuple[int, ...]) -> str:
        dims = " x ".join(str(n) for n in shape)
        if isinstance(node, Array):
            kind = "packed" if layout.is_packed(node) else "dense"
            return f"{dims} x {type_name(node.dtype)} ({kind})"
        nzval = node.get("nzval")
        index = node.get("rowval")
        if index is None:
            index = node.get("nzind")
        dtype = nzval.dtype if isinstance(nzval, Array) else np.dtype(bool)
        count = index.shape[0] if isinstance(index, Array) else 0
        total = int(np.prod(shape)) or 1
        return (f"{dims} x {type_name(dtype)} (sparse, nnz {count}, "
                f"{100 * count / total:.3g}%)")

    def description(self) -> str:
        """A text summary: name, location, format, then every scalar, axis, vector and
        matrix (as stored: each matrix layout on its own), read from metadata only.

        >>> import zarrkit as zk
        >>> daf = zk.daf.open(zk.MemoryStore(), "w", name="demo")
        >>> daf.set_scalar("version", "1.0"); daf.add_axis("cell", ["a", "b"])
        >>> daf.set_vector("cell", "age", [1.5, 2.5])
        >>> print(daf.description())  # doctest: +ELLIPSIS
        name: demo
        type: ZarrDaf (zarrkit)
        path: <MemoryStore>
        mode: w
        format: zarr v3
        scalars:
          version: "1.0"
        axes:
          cell: 2 entries
        vectors:
          cell:
            age: 2 x float64 (dense)
        """
        with self._lock:
            self._check_open()
            lines = [f"name: {self._name}", "type: ZarrDaf (zarrkit)", f"path: {self._path}",
                     f"mode: {self._mode}", f"format: zarr v{self.zarr_format}"]
            scalars = self.scalars()
            if scalars:
                lines.append("scalars:")
                for name in scalars:
                    value = self.get_scalar(name)
                    shown = json.dumps(value) if isinstance(value, str) else str(value)
                    lines.append(f"  {name}: {shown}")
            axes = self.axes()
            if axes:
                lines.append("axes:")
                lines += [f"  {axis}: {self.axis_length(axis)} entries" for axis in axes]
            vectors = [(axis, self.vectors(axis)) for axis in axes]
            if any(names for _, names in vectors):
                lines.append("vectors:")
                for axis, names in vectors:
                    if names:
                        lines.append(f"  {axis}:")
                        length = self.axis_length(axis)
                        for name in names:
                            node = self._node(vector_path(axis, name))
                            assert node is not None
                            lines.append(f"    {name}: {self._describe(node, (length,))}")
            pairs = [(rows, columns, self.matrices(rows, columns, relayout=False))
                     for rows in axes for columns in axes]
            if any(names for *_, names in pairs):
                lines.append("matrices:")
                for rows, columns, names in pairs:
                    if names:
                        lines.append(f"  {rows},{columns}:")
                        shape = self._matrix_shape(rows, columns)
                        for name in names:
                            node = self._node(matrix_path(rows, columns, name))
                            assert node is not None
                            lines.append(f"    {name}: {self._describe(node, shape)}")
            return "\n".join(lines)


# --- opening ----------------------------------------------------------------------------


def _create_root(store: Store, path: str, zarr_format: int, *, consolidate: bool) -> Group:
    """A new Daf root group at ``path``: marker and the four groups (consolidated metadata
    on the directory backend)."""
    if zarr_format == 3:
        root = zk_api.open_group(store, mode="w-", path=path, zarr_format=3,
                                 attributes=layout.marker_attributes())
    else:
        root = zk_api.open_group(store, mode="w-", path=path, zarr_format=2)
        layout.write_marker_v2(root)
    layout.create_groups(root)
    if consolidate:
        root = zk_api.consolidate_metadata(store, path, zarr_format)
    return root


def _adopt(root: Group, *, consolidate: bool) -> Group:
    """Make an existing non-Daf group a Daf root (mode ``w+``, as Julia does)."""
    if root.zarr_format == 3:
        root.attrs.update(layout.marker_attributes())
    else:
        layout.write_marker_v2(root)
    layout.create_groups(root)
    if consolidate:
        root = zk_api.consolidate_metadata(root.store, root.path, root.zarr_format)
    return root


def _has_consolidated(root: Group, found: FoundNode) -> bool:
    """Whether the data set's root has consolidated metadata stored (``found``: the root as
    read before opening; a local root is opened without its snapshot, as zarr-python's
    ``use_consolidated=False`` drops it)."""
    if root.zarr_format == 3:
        return found.metadata.consolidated_metadata is not None
    return root.store.get(join_path(root.path, ZMETADATA)) is not None


def _open_root(handle: StoreHandle, group: str, where: str, mode: str,
               zarr_format: int | None) -> Group:
    store = handle.store
    read_only = mode == "r"
    found = None if mode == "w" else find_node(store, group)
    if found is not None and found.kind != "group":
        raise NotDafError(f"{where} is a Zarr array, not a Daf data set")
    if found is None:
        if mode in ("r", "r+"):
            raise GroupNotFoundError(f"no Daf data set at {where}")
        return _create_root(store, group, zarr_format or 3,
                            consolidate=handle.kind == "directory")
    if zarr_format is not None and zarr_format != found.zarr_format:
        raise DafValueError(f"{where} uses the Zarr v{found.zarr_format} layout, but "
                            f"zarr_format={zarr_format} was asked")
    try:
        # Over HTTP there is no listing: the data set opens from consolidated metadata.
        # Local stores are listed (cheap), so a stale snapshot never hides a property.
        root = zk_api.open_group(store, mode="r" if read_only else "r+", path=group,
                                 zarr_format=found.zarr_format,
                                 consolidated=handle.kind == "http")
    except NodeNotFoundError as e:
        if handle.kind != "http":
            raise
        raise MetadataError(
            f"cannot open {where} over HTTP: the Daf data set needs consolidated metadata "
            f"(inline in the root zarr.json, or .zmetadata for v2): open it once locally "
            f"in a writable mode, or run zarrkit.consolidate_metadata on it ({e})") from None
    try:
        version = layout.read_marker(root, where)
    except NotDafError:
        if mode != "w+":
            raise
        return _adopt(root, consolidate=handle.kind == "directory")
    layout.check_version(version, where)
    if not read_only and handle.kind == "directory" and not _has_consolidated(root, found):
        root = zk_api.consolidate_metadata(store, group, root.zarr_format)
    if not read_only and handle.kind == "zip" and root.zarr_format == 3 and _has_consolidated(
            root, found):
        # A snapshot in an append-only archive would be rewritten (appended) on every
        # change; the Julia package strips it instead, once (the central directory lists
        # the members anyway).
        key = group_metadata_key(group, 3)
        store.set(key, dump_json(replace(root.metadata, consolidated_metadata=None).to_json()))
        root = zk_api.open_group(store, mode="r+", path=group, zarr_format=3,
                                 consolidated=False)
    return root


def _store_label(store: Store) -> str:
    """How a data set in a store given to ``open`` is named: the store's location when it
    has one, else its type."""
    for attribute in ("path", "url", "root"):
        location = getattr(store, attribute, None)
        if isinstance(location, (str, os.PathLike)):
            return os.fspath(location)
    return f"<{type(store).__name__}>"


def open_dataset(path: str | os.PathLike[str] | Store | Group, mode: str = "r", *,
                 name: str | None = None, zarr_format: int | None = None) -> DafDataset:
    """Open a Daf data set, or create one (modes ``w+``: if missing, ``w``: afresh).

    ``path``: ``x.daf.zarr`` (a directory), ``x.daf.zarr.zip`` (a ZIP archive),
    ``x.dafs.zarr.zip#/group`` (one of several data sets in an archive), ``http://`` or
    ``https://`` (read-only; needs consolidated metadata), or a zarrkit Store or Group.
    ``mode``: ``r`` (read-only), ``r+`` (must exist), ``w+`` (created if missing), ``w``
    (created, replacing what is there). ``zarr_format``: the layout of a new data set, 3
    (DataAxesFormats.jl 0.3, the default) or 2 (the seed layout); an existing one's is
    detected, and must match it when given. ``name`` defaults to the data set's ``name``
    scalar, else its path.

    >>> import os, tempfile, zarrkit as zk
    >>> path = os.path.join(tempfile.mkdtemp(), "cells.daf.zarr")
    >>> with zk.daf.open(path, "w") as daf:
    ...     daf.add_axis("cell", ["c1", "c2"])
    >>> with zk.daf.open(path) as daf:
    ...     daf.axis_vector("cell").tolist(), daf.read_only, daf.zarr_format
    (['c1', 'c2'], True, 3)
    """
    if mode not in MODES:
        raise DafValueError(f"mode must be one of {MODES}, found {mode!r}")
    if zarr_format not in (None, 2, 3):
        raise DafValueError(f"zarr_format must be 2 or 3, found {zarr_format!r}")
    if isinstance(path, (Store, Group)):
        store = path if isinstance(path, Store) else path.store
        group = "" if isinstance(path, Store) else path.path
        if mode != "r" and store.read_only:
            raise ReadOnlyError(f"cannot open a Daf data set in {store!r} with mode {mode!r}: "
                                "the store is read-only")
        handle = wrap_store(store)
        where = _store_label(store) + (f"#/{group}" if group else "")
        if mode == "w" and find_node(store, group) is not None:
            prefix = f"{group}/" if group else ""
            if not store.supports_deletes:
                raise UnsupportedOperationError(
                    f"cannot truncate {where} (mode 'w'): the store cannot delete")
            store.delete_prefix(prefix)
    else:
        location = parse_location(path)
        if location.kind != "http":
            container = os.path.abspath(location.container)
            location = replace(location, container=container,
                               display=container + (f"#/{location.group}" if location.group
                                                    else ""))
        handle = acquire(location, mode)
        group, where = normalize_path(location.group), location.display
    try:
        with handle.lock:
            root = _open_root(handle, group, where, mode, zarr_format)
            return DafDataset(root, handle, path=where, mode=mode, name=name)
    except BaseException:
        handle.release()
        raise


__all__ = ["DafDataset", "Names", "open_dataset"]
