"""Exceptions raised by zarrkit.

Every exception derives from :class:`ZarrkitError` and also from the builtin that an
ordinary ``except`` clause would name, so ``except KeyError`` (or, as with zarr-python,
``except FileNotFoundError``) catches a missing node and ``except PermissionError`` catches
a write to a read-only store. zarr-python's names are here too: ``ContainsArrayError`` and
``ContainsGroupError`` (creating over an existing node), ``ArrayNotFoundError``,
``GroupNotFoundError``, ``NodeNotFoundError``, ``BoundsCheckError``, ``UnknownCodecError``,
and the rest of ``zarr.errors`` (each the zarrkit exception raised where zarr-python raises
it, so ``except zarr.errors.X`` keeps working after ``import zarrkit as zarr``), with its
warning classes.

>>> from zarrkit.errors import NodeNotFoundError
>>> issubclass(NodeNotFoundError, KeyError)
True
"""

from __future__ import annotations

from typing import Any


class ZarrkitError(Exception):
    """Base class of every zarrkit error.

    >>> isinstance(ZarrkitError("x"), Exception)
    True
    """


class InvalidKeyError(ZarrkitError, ValueError):
    """A store key or a logical path is malformed (``..``, absolute, backslash, NUL...).

    >>> raise InvalidKeyError("a/../b")
    Traceback (most recent call last):
    zarrkit.errors.InvalidKeyError: a/../b
    """


class ReadOnlyError(ZarrkitError, PermissionError):
    """A write was attempted on a store or node opened read-only.

    >>> issubclass(ReadOnlyError, PermissionError)
    True
    """


class NodeNotFoundError(ZarrkitError, KeyError, FileNotFoundError):
    """No array or group exists at the requested path: a ``KeyError`` (a missing member of
    a mapping-like group) and, as zarr-python's, a ``FileNotFoundError``.

    >>> issubclass(NodeNotFoundError, KeyError), issubclass(NodeNotFoundError, FileNotFoundError)
    (True, True)
    """

    def __str__(self) -> str:  # KeyError quotes its argument; a message reads better plain
        return str(self.args[0]) if self.args else ""


class ArrayNotFoundError(NodeNotFoundError):
    """An array was requested where none exists.

    >>> issubclass(ArrayNotFoundError, NodeNotFoundError)
    True
    """


class GroupNotFoundError(NodeNotFoundError):
    """A group was requested where none exists.

    >>> issubclass(GroupNotFoundError, NodeNotFoundError)
    True
    """


class ContainsNodeError(ZarrkitError, FileExistsError):
    """A node already exists where a new one should be created (mode ``w-``, or a name
    that already holds an array when a group is asked for, or the reverse).

    >>> issubclass(ContainsNodeError, FileExistsError)
    True
    """


class MetadataError(ZarrkitError, ValueError):
    """A metadata document is malformed: bad JSON, a missing or invalid key.

    >>> issubclass(MetadataError, ValueError)
    True
    """


class UnsupportedDataTypeError(MetadataError):
    """A data type that zarrkit cannot represent.

    >>> issubclass(UnsupportedDataTypeError, ValueError)
    True
    """


class DataTypeMismatchError(UnsupportedDataTypeError):
    """A native dtype or data type JSON that is not the one a :mod:`zarrkit.dtype` class
    wraps (what zarr-python raises a ``DataTypeValidationError`` for); a registry then
    tries the next class.

    >>> from zarrkit.dtype import Int8
    >>> Int8.from_json("int16", zarr_format=3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.DataTypeMismatchError: Invalid JSON representation of Int8. Got 'int16'...
    """


class UnsupportedExtensionError(MetadataError):
    """A ``must_understand`` extension that zarrkit does not implement.

    >>> issubclass(UnsupportedExtensionError, MetadataError)
    True
    """


class UnknownCodecError(UnsupportedExtensionError):
    """A codec id or name that no registry knows (an extension zarrkit must understand
    and does not).

    >>> issubclass(UnknownCodecError, ValueError)
    True
    """


class ChunkDecodeError(ZarrkitError, ValueError):
    """A stored chunk cannot be decoded into its expected shape and size.

    >>> issubclass(ChunkDecodeError, ValueError)
    True
    """


class IndexingError(ZarrkitError, IndexError):
    """A selection is out of bounds or of an unsupported kind.

    >>> issubclass(IndexingError, IndexError)
    True
    """


class BoundsCheckError(IndexingError):
    """An index lies outside the array.

    >>> issubclass(BoundsCheckError, IndexError)
    True
    """


class OutputArrayError(ZarrkitError, ValueError):
    """An ``out=`` array cannot receive the selection (wrong shape, dtype or layout, or
    read-only).

    >>> issubclass(OutputArrayError, ValueError)
    True
    """


class UnsupportedOperationError(ZarrkitError, NotImplementedError):
    """A store cannot perform the operation (deleting from an append-only ZIP).

    >>> issubclass(UnsupportedOperationError, NotImplementedError)
    True
    """


class UnknownDataTypeError(UnsupportedDataTypeError, UnsupportedExtensionError):
    """A ``data_type`` name that no registered data type implements: both an unsupported
    data type and an unsupported ``must_understand`` extension, so either clause catches it.

    >>> issubclass(UnknownDataTypeError, UnsupportedExtensionError)
    True
    """


class ResourceLimitError(ZarrkitError, MemoryError):
    """An operation would need more memory or work than zarrkit allows: a chunk or shard
    beyond ``zarrkit.config.max_chunk_bytes``, a decoded size a chunk cannot hold, a shape
    whose element count does not fit in 64 bits.

    >>> issubclass(ResourceLimitError, MemoryError)
    True
    """


class StoreEscapeError(ZarrkitError, PermissionError):
    """A key would reach outside the store: through a symbolic link that resolves outside
    a directory store's root, or through a link cycle.

    >>> issubclass(StoreEscapeError, PermissionError)
    True
    """


class StoreIOError(ZarrkitError, OSError):
    """The operating system refused a store operation (a name too long for the file
    system, a file standing where a directory is needed...). The original ``errno`` is
    kept.

    >>> StoreIOError(36, "name too long").errno
    36
    """


class StoreLockedError(ZarrkitError, BlockingIOError):
    """Another process holds the store's write lock (a ZIP archive open for writing
    elsewhere).

    >>> issubclass(StoreLockedError, OSError)
    True
    """


class CorruptStoreError(ZarrkitError, ValueError):
    """A store's container is damaged beyond what zarrkit can read (a ZIP archive whose
    central directory and local headers are both unreadable).

    >>> issubclass(CorruptStoreError, ValueError)
    True
    """


class ShapeOverflowError(ZarrkitError, OverflowError):
    """A size or position is too large for the machine integer an operation needs: ``len()``
    of an array whose first dimension exceeds ``sys.maxsize``, or an index array entry at
    or beyond ``2**63`` (index arrays are numpy ``intp``; plain integers and slices reach
    any element).

    >>> issubclass(ShapeOverflowError, OverflowError)
    True
    """


class ContainsArrayError(ContainsNodeError, ValueError):
    """An array already exists where a new node should be created without
    ``overwrite`` (zarr-python's name and, as there, a ``ValueError``; also a
    :class:`ContainsNodeError`, so a ``FileExistsError``).

    >>> issubclass(ContainsArrayError, FileExistsError), issubclass(ContainsArrayError, ValueError)
    (True, True)
    """


class ContainsGroupError(ContainsNodeError, ValueError):
    """An group already exists where a new node should be created without
    ``overwrite`` (zarr-python's name and, as there, a ``ValueError``; also a
    :class:`ContainsNodeError`, so a ``FileExistsError``).

    >>> issubclass(ContainsGroupError, FileExistsError), issubclass(ContainsGroupError, ValueError)
    (True, True)
    """


class SpecError(MetadataError):
    """A hierarchy specification (``zarrkit.models``) is invalid: a bad member name, a field
    of the other Zarr format, metadata that is no valid array or group, or a conversion
    that the target format cannot represent. ``errors`` lists each problem with its path.

    >>> issubclass(SpecError, ValueError)
    True
    """

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.errors = list(errors or [message])


class SpecValidationError(ZarrkitError, ValueError):
    """A live hierarchy does not match a specification (``zk.models.validate(...,
    strict=True)``); ``violations`` holds every one, each with its path.

    >>> issubclass(SpecValidationError, ValueError)
    True
    """

    def __init__(self, message: str, violations: list[Any]) -> None:
        super().__init__(message)
        self.violations = violations


class LinkError(NodeNotFoundError):
    """A link or object reference (the hdmf-zarr convention) cannot be followed: its
    target does not exist (a dangling link, named in the message), its source store cannot
    be opened, or links form a cycle.

    >>> issubclass(LinkError, NodeNotFoundError)
    True
    """


class UnsafePickleError(ZarrkitError, ValueError):
    """A pickled chunk names a global outside the restricted unpickler's allowlist
    (numpy's array reconstruction and hdmf-zarr's ZarrReference): zarrkit never runs the
    code a pickle could name.

    >>> issubclass(UnsafePickleError, ValueError)
    True
    """


class DafError(ZarrkitError):
    """Base class of the errors of Daf data sets (:mod:`zarrkit.daf`); every concrete one
    also derives from the builtin that fits it.

    >>> issubclass(DafVersionError, DafError)
    True
    """


class NotDafError(DafError, MetadataError):
    """A Zarr group holds no Daf version marker (no ``daf`` group attribute in format 3,
    no ``daf`` array in format 2): it is not a Daf data set.

    >>> issubclass(NotDafError, ValueError)
    True
    """


class DafMarkerError(DafError, MetadataError):
    """The Daf version marker is there but malformed (not two non-negative integers).

    >>> issubclass(DafMarkerError, MetadataError)
    True
    """


class DafVersionError(DafError, MetadataError):
    """A Daf data set uses a version of the layout that zarrkit does not support; ``found``
    and ``supported`` are ``(major, minor)`` pairs and ``path`` names the data set.

    >>> e = DafVersionError("too new", found=(1, 1), supported=(1, 0), path="x.daf.zarr")
    >>> e.found, e.supported, e.path
    ((1, 1), (1, 0), 'x.daf.zarr')
    """

    def __init__(self, message: str, *, found: tuple[int, int], supported: tuple[int, int],
                 path: str) -> None:
        super().__init__(message)
        self.found = found
        self.supported = supported
        self.path = path


class DafValueError(DafError, ValueError):
    """A value or a name given to a Daf data set does not fit it: a vector or matrix whose
    length does not match its axes, an element type Daf cannot store, duplicate axis
    entries, a reserved or invalid name, a closed data set.

    >>> issubclass(DafValueError, ValueError)
    True
    """


class DafKeyError(DafError, NodeNotFoundError):
    """A scalar, axis, vector or matrix that the Daf data set does not hold.

    >>> issubclass(DafKeyError, KeyError)
    True
    """


class DafExistsError(DafError, ContainsNodeError):
    """A scalar, axis, vector or matrix already exists and ``overwrite`` was not given.

    >>> issubclass(DafExistsError, FileExistsError)
    True
    """


class MissingDependencyError(ZarrkitError, ImportError):
    """An optional package that a feature needs is not installed (scipy for sparse Daf
    properties, anndata for AnnData conversion); the message names the extra to install.

    >>> issubclass(MissingDependencyError, ImportError)
    True
    """


# --- the rest of zarr-python's names (zarr.errors) ----------------------------------------
# Where zarrkit raises one exception in several of the situations that zarr-python tells
# apart, zarr-python's name is that exception (an alias): ``except`` clauses written for
# zarr-python then catch what zarrkit raises.

#: zarr-python's base of its errors: zarrkit's is :class:`ZarrkitError` (every zarrkit error).
BaseZarrError = ZarrkitError

#: Metadata that is not valid: :class:`MetadataError`, as zarrkit raises for any malformed
#: or invalid metadata document or value.
MetadataValidationError = MetadataError

#: A ``node_type`` that is missing or wrong for what was asked: zarrkit raises
#: :class:`MetadataError` for it as for other bad metadata.
NodeTypeValidationError = MetadataError

#: Array and group documents at one path: zarrkit refuses to create over it as over any
#: existing node, with a :class:`ContainsNodeError`.
ContainsArrayAndGroupError = ContainsNodeError

#: A selection that vindex cannot take (a slice, a mix of kinds): :class:`IndexingError`.
VindexInvalidSelectionError = IndexingError

#: An index that does not fit the array: :class:`IndexingError`.
ArrayIndexError = IndexingError


#: A data type zarr-python cannot build from its JSON or numpy form (3.2): zarrkit raises
#: :class:`UnsupportedDataTypeError` there, also a ``ValueError``.
DataTypeValidationError = UnsupportedDataTypeError

#: Reading pickled data without zarr-python 3.4.2's opt-in: zarrkit decodes pickles with
#: a restricted unpickler instead, and refuses only what names code outside its allowlist,
#: with :class:`UnsafePickleError`.
PickleCodecDisabledError = UnsafePickleError


class ChunkNotFoundError(ZarrkitError, ValueError):
    """A chunk expected in storage is missing: raised by a read of an array handle whose
    ``read_missing_chunks`` is off (``config={"read_missing_chunks": False}`` or
    ``zarrkit.config.set({"array.read_missing_chunks": False})``, as in zarr-python 3.2+),
    naming the store and every missing chunk (shard) of the selection.

    >>> issubclass(ChunkNotFoundError, ValueError)
    True
    """


class NegativeStepError(IndexingError):
    """A slice with a negative step: zarr-python refuses them, zarrkit reads and writes
    them as numpy does, so it never raises this; the name exists for ``except`` clauses.

    >>> import zarrkit as zk
    >>> a = zk.array([1, 2, 3])
    >>> a[::-1].tolist()
    [3, 2, 1]
    """


class ZarrFutureWarning(FutureWarning):
    """A behaviour that will change in a later release (zarr-python's name).

    >>> issubclass(ZarrFutureWarning, FutureWarning)
    True
    """


class UnstableSpecificationWarning(ZarrFutureWarning):
    """A feature outside the Zarr specification, whose stored form may change.

    >>> issubclass(UnstableSpecificationWarning, ZarrFutureWarning)
    True
    """


class ZarrDeprecationWarning(DeprecationWarning):
    """A feature that will be removed (zarr-python's name).

    >>> issubclass(ZarrDeprecationWarning, DeprecationWarning)
    True
    """


class ZarrUserWarning(UserWarning):
    """A problem in how zarrkit is called (zarr-python's name).

    >>> issubclass(ZarrUserWarning, UserWarning)
    True
    """


class ZarrRuntimeWarning(RuntimeWarning):
    """Dubious behaviour at run time (zarr-python's name).

    >>> issubclass(ZarrRuntimeWarning, RuntimeWarning)
    True
    """


class CopyError(ZarrkitError, RuntimeError):
    """A copy (:func:`zarrkit.copy`, :func:`zarrkit.copy_store`...) would overwrite
    something in the destination and ``if_exists`` is ``"raise"`` (zarr-python 2's name).

    >>> issubclass(CopyError, RuntimeError)
    True
    """


class AttributeValueError(ZarrkitError, TypeError):
    """An attribute value that JSON cannot hold (an object of another type than str,
    numbers, bool, None, lists and dicts of them, numpy scalars and arrays).

    >>> issubclass(AttributeValueError, TypeError)
    True
    """
