"""The restricted unpickler: the only unpickling zarrkit ever does.

Unpickling runs whatever callables a pickle names, so numcodecs' ``pickle`` object codec
hands the writer of a store the reader's interpreter. hdmf-zarr (NWB's Zarr backend) uses
that codec by default for its object references, so zarrkit reads such chunks, but through
an unpickler whose :meth:`~RestrictedUnpickler.find_class` knows a handful of names and
binds none of them to the real callable: each is a zarrkit function that accepts exactly
the arguments numpy's and hdmf-zarr's pickles pass, and refuses anything else. The
opcodes that would act on other objects (``BUILD``, ``NEWOBJ``) or allocate what the data
announces (the C unpickler's memo table, ``BYTEARRAY8``) are guarded too
(:class:`RestrictedUnpickler`), so the work and memory are bounded by the pickle's size.
What the pickle builds is bounded too: the memo lets a few hundred bytes make a list that
holds 2^60 elements (one list appended to itself, level after level), so the items may hold
only one element per byte of the pickle plus :data:`MAX_SHARED_ITEMS` (counting a shared
container once per path to it) and no cycle (:func:`check_items`), dict keys are checked
before they are hashed however the dict is built (:func:`check_keys_of`), and error
messages describe what the pickle holds by type and length (:func:`describe_value`),
never by ``repr()``.

The allowlist (:data:`ALLOWED_GLOBALS`), with what each name is needed for:

``numpy._core.multiarray._reconstruct`` (numpy 2) and ``numpy.core.multiarray._reconstruct``
(numpy 1)
    Every pickled ndarray starts as ``_reconstruct(numpy.ndarray, (0,), b'b')`` and is
    filled by its state (``BUILD``). Here only those exact arguments are taken, and the
    state is checked (shape, dtype, element count, data size, item types) before an array
    of the chunk's size is made with ``numpy.fromiter`` (or ``frombuffer``): numpy's
    own ``ndarray.__setstate__`` is never called (a state whose object list is shorter than
    its shape crashes the interpreter in numpy 2.4).
``numpy.ndarray``
    Only as the first argument of ``_reconstruct``; calling it (which would allocate any
    shape) is refused.
``numpy.dtype``
    The dtype of the array (and of each field of a structured one): built again through
    numpy's public constructor from a checked description, for booleans, numbers, fixed
    bytes/text/void, objects and structured dtypes; never ``dtype.__setstate__``.
``hdmf_zarr.utils.ZarrReference``
    hdmf-zarr's object reference, a ``dict`` subclass: mapped to :class:`ZarrReferenceData`,
    a plain ``dict`` subclass of zarrkit's (``hdmf_zarr`` is never imported).
``_codecs.encode``
    Protocols 0 to 2 have no bytes opcode and write numpy's ``b'b'`` and raw data as
    ``_codecs.encode(text, 'latin1')``: only that encoding of text is taken.

numpy's pickles of object and structured arrays need nothing more: scalars
(``numpy._core.multiarray.scalar``), ``numpy._core.numeric._frombuffer`` (how protocol 5
pickles numeric arrays, which no object chunk holds), ``copyreg`` helpers and every other
global are refused with :class:`~zarrkit.errors.UnsafePickleError` naming them, before
anything is called. A chunk pickle must hold exactly one array, of the chunk's dtype and
element count.

>>> import pickle, numpy as np
>>> data = pickle.dumps(np.array(["a", 1, {"k": [2]}], dtype=object), protocol=5)
>>> load_array(data, np.dtype(object), 3, what="c/0").tolist()
['a', 1, {'k': [2]}]
>>> restricted_loads(b"cos\\nsystem\\n(S'echo hi'\\ntR.")
Traceback (most recent call last):
zarrkit.errors.UnsafePickleError: pickle: names os.system, which zarrkit never unpickles ...
"""

from __future__ import annotations

import io
import math
import pickle
import re
import struct
from typing import Any

import numpy as np
from numcodecs.abc import Codec

from zarrkit.codecs.bounded import as_bytes_view
from zarrkit.codecs.config import check_keys, config_int
from zarrkit.errors import ChunkDecodeError, UnsafePickleError, UnsupportedOperationError

# How deep the items of a pickled object array may nest (lists in dicts in lists...).
MAX_ITEM_DEPTH = 64
# Fields of one pickled structured dtype, nesting of dtypes, dimensions of one array.
_MAX_FIELDS = 4096
_MAX_DTYPE_DEPTH = 16
_MAX_NDIM = 64
_MAX_ITEMSIZE = (1 << 31) - 1
# Integers allowed as dict keys and set members (see _safe_key).
_MAX_SMALL_KEY = 1 << 16
#: How many elements the items of one pickle may hold beyond one per byte of the pickle,
#: counting a container or value reached twice (through the memo) twice: without shared
#: containers a pickle holds fewer elements than it has bytes, while a few hundred bytes
#: that append one list to itself through the memo make a 2^60-element list.
MAX_SHARED_ITEMS = 1 << 20


class ZarrReferenceData(dict):  # type: ignore[type-arg]
    """What a pickled ``hdmf_zarr.utils.ZarrReference`` (a ``dict`` subclass) becomes:
    a plain ``dict`` subclass holding its keys (``source``, ``path``, ``object_id``,
    ``source_object_id``). :mod:`zarrkit.references` turns it into a
    :class:`~zarrkit.references.Reference`.

    >>> ZarrReferenceData(source=".", path="/a")["path"]
    '/a'
    """

    __slots__ = ()  # no __dict__: a pickle's BUILD cannot set attributes on it


class _NdarrayName:
    """What ``numpy.ndarray`` resolves to: a marker that only ``_reconstruct`` takes."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        raise UnsafePickleError("numpy.ndarray is only unpickled as the first argument of "
                                "_reconstruct (calling it would allocate any shape)")

    def __repr__(self) -> str:
        return "numpy.ndarray"


_NDARRAY = _NdarrayName()


class _ZarrReferenceName:
    """What ``hdmf_zarr.utils.ZarrReference`` resolves to. ``NEWOBJ`` makes an empty
    :class:`ZarrReferenceData` (filled by ``SETITEMS``, whose keys are checked); a call
    (``REDUCE``, ``INST``, ``OBJ``) takes a dict or pairs like ``dict()`` does, but
    checks the keys before any is hashed: ``dict(pairs)`` would hash colliding keys."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return "hdmf_zarr.utils.ZarrReference"

    def __call__(self, *args: Any, **kwargs: Any) -> ZarrReferenceData:
        what = self.what
        if len(args) > 1 or kwargs:
            raise _refuse(what, "hdmf_zarr.utils.ZarrReference is only unpickled from a "
                                "dict or a list of pairs")
        if not args:
            return ZarrReferenceData()
        (items,) = args
        if type(items) is dict or type(items) is ZarrReferenceData:
            pairs: Any = items  # built by the checked dict opcodes
            keys: Any = items.keys()
        elif type(items) is list or type(items) is tuple:
            if not all(type(pair) is tuple and len(pair) == 2 for pair in items):
                raise _refuse(what, "hdmf_zarr.utils.ZarrReference from "
                                    f"{_short(items)} that are not all pairs")
            pairs = items
            keys = [pair[0] for pair in items]
        else:
            raise _refuse(what, f"hdmf_zarr.utils.ZarrReference from {_short(items)}")
        check_keys_of(keys, what)
        return ZarrReferenceData(pairs)


#: The globals a pickle may name, with what each is bound to (see the module docstring).
ALLOWED_GLOBALS: dict[tuple[str, str], str] = {
    ("numpy._core.multiarray", "_reconstruct"): "numpy's array reconstruction (numpy 2)",
    ("numpy.core.multiarray", "_reconstruct"): "numpy's array reconstruction (numpy 1)",
    ("numpy", "ndarray"): "the array type, as _reconstruct's first argument only",
    ("numpy", "dtype"): "the array's dtype, rebuilt through numpy's public constructor",
    ("hdmf_zarr.utils", "ZarrReference"): "hdmf-zarr's object reference (a dict)",
    ("_codecs", "encode"): "latin-1 text to bytes (protocols 0 to 2)",
}

_ALLOWED_NAMES = ", ".join(f"{m}.{n}" for m, n in ALLOWED_GLOBALS)

# The simple dtypes numpy pickles as ``dtype(<kind><size>, False, True)``.
_SPEC = re.compile(r"(?:[biufc][0-9]{1,2}|O8|[SUV][0-9]{1,10})\Z")
_ENDIANS = frozenset("<>|=")
_LEAF_TYPES = frozenset({str, bytes, bytearray, int, float, bool, type(None)})
_TEXT_TYPES = frozenset({str, bytes})
_CONTAINER_TYPES = frozenset({list, tuple, dict, set, frozenset, ZarrReferenceData})


def _refuse(what: str, message: str) -> UnsafePickleError:
    return UnsafePickleError(f"{what}: {message}")


class _DtypeSpec:
    """A pickled ``numpy.dtype`` before it is trusted: its constructor arguments and its
    state, turned into a real dtype (through numpy's public constructor) by
    :meth:`resolve` when an array or another dtype uses it."""

    __slots__ = ("_dtype", "_resolving", "spec", "state", "what")

    def __init__(self, spec: Any, align: Any, copy: Any, what: str) -> None:
        if type(spec) is not str or not _SPEC.match(spec) or type(align) is not bool or (
                type(copy) is not bool):
            raise _refuse(what, f"numpy.dtype({_short(spec)}, {_short(align)}, "
                                f"{_short(copy)}) is not a dtype that numpy pickles for "
                                "object or structured arrays")
        self.spec = spec
        self.state: tuple[Any, ...] | None = None
        self.what = what
        self._dtype: np.dtype[Any] | None = None
        self._resolving = False

    def __setstate__(self, state: Any) -> None:
        if self.state is not None:
            raise _refuse(self.what, "a numpy.dtype is given its state twice")
        if type(state) is not tuple or len(state) != 8 or state[0] != 3:
            raise _refuse(self.what, f"unsupported numpy.dtype state {_short(state)}")
        self.state = state

    def resolve(self, depth: int = 0) -> np.dtype[Any]:
        """The numpy dtype this description stands for."""
        if self._dtype is not None:
            return self._dtype
        if depth > _MAX_DTYPE_DEPTH or self._resolving:
            raise _refuse(self.what, "numpy.dtype descriptions nest too deeply or in a cycle")
        self._resolving = True
        try:
            self._dtype = self._build(depth)
        except UnsafePickleError:
            raise
        except (TypeError, ValueError, OverflowError) as e:
            raise _refuse(self.what, f"invalid numpy.dtype description: {e}") from None
        finally:
            self._resolving = False
        return self._dtype

    def _build(self, depth: int) -> np.dtype[Any]:
        if self.state is None:
            raise _refuse(self.what, f"numpy.dtype({self.spec!r}) has no state")
        _, endian, subarray, names, fields, elsize, _alignment, _flags = self.state
        if type(endian) is not str or endian not in _ENDIANS or type(elsize) is not int or not (
                elsize == -1 or 0 <= elsize <= _MAX_ITEMSIZE):
            raise _refuse(self.what, f"unsupported numpy.dtype state {_short(self.state)}")
        kind = self.spec[0]
        if names is not None or fields is not None:
            if kind != "V" or subarray is not None:
                raise _refuse(self.what, "fields on a dtype that is not structured")
            dtype = self._structured(names, fields, elsize, depth)
        elif subarray is not None:
            # Subarray fields hold nested arrays, which a chunk pickle may not contain.
            raise _refuse(self.what, "subarray dtypes are not unpickled")
        elif kind in "SUV" and elsize != -1:
            if kind == "U" and elsize % 4:
                raise _refuse(self.what, f"a text dtype of {elsize} bytes")
            dtype = np.dtype(f"{kind}{elsize // 4 if kind == 'U' else elsize}")
        else:
            dtype = np.dtype(self.spec)
            if f"{dtype.kind}{dtype.itemsize}" != self.spec:
                raise _refuse(self.what, f"numpy.dtype({self.spec!r}) is not a numpy dtype")
        if endian in "<>" and dtype.byteorder != "|":
            dtype = dtype.newbyteorder("<" if endian == "<" else ">")
        if elsize != -1 and dtype.itemsize != elsize:
            raise _refuse(self.what, f"a {dtype} dtype of {elsize} bytes")
        return dtype

    def _structured(self, names: Any, fields: Any, elsize: int, depth: int
                    ) -> np.dtype[Any]:
        if type(names) is not tuple or type(fields) is not dict or not names or (
                len(names) > _MAX_FIELDS):
            raise _refuse(self.what, "invalid fields of a structured numpy.dtype")
        formats, offsets, titles = [], [], []
        for name in names:
            entry = fields.get(name) if type(name) is str else None
            if type(entry) is not tuple or len(entry) not in (2, 3) or (
                    type(entry[1]) is not int):
                raise _refuse(self.what, f"invalid field {_short(name)} of a numpy.dtype")
            formats.append(_resolved(entry[0], depth, self.what))
            offsets.append(entry[1])
            title = entry[2] if len(entry) == 3 else None
            if title is not None and type(title) is not str:
                raise _refuse(self.what, f"invalid title of field {_short(name)}")
            titles.append(title)
        description: dict[str, Any] = {"names": list(names), "formats": formats,
                                       "offsets": offsets, "itemsize": elsize}
        if any(t is not None for t in titles):
            description["titles"] = titles
        # numpy checks offsets, sizes and that no object field overlaps another field.
        return np.dtype(description)  # type: ignore[call-overload,no-any-return]


def _resolved(value: Any, depth: int, what: str) -> np.dtype[Any]:
    if not isinstance(value, _DtypeSpec):
        raise _refuse(what, f"a numpy.dtype field is {_short(value)}, not a dtype")
    return value.resolve(depth + 1)


def _shape(value: Any, what: str) -> tuple[int, ...]:
    if type(value) is not tuple or len(value) > _MAX_NDIM or not all(
            type(n) is int and 0 <= n < 1 << 63 for n in value):
        raise _refuse(what, f"invalid array shape {_short(value)}")
    return value


def _short(value: Any) -> str:
    return describe_value(value)


def describe_value(value: Any, limit: int = 80) -> str:
    """An untrusted value for an error message, in bounded time: numbers, None and the
    first ``limit`` characters of text as ``repr`` shows them, anything else by its type
    and length only (``repr`` of a pickled list that holds itself through the memo
    2^60 times never returns, whatever is done with its text afterwards).

    >>> describe_value("latin9"), describe_value(3), describe_value([[1, 2], [3]])
    ("'latin9'", '3', 'a list of length 2')
    >>> describe_value("x" * 100, limit=4)
    "'xxxx'... (a str of length 100)"
    """
    kind = type(value)
    if value is None or kind in (bool, float, _NdarrayName, _ZarrReferenceName):
        return repr(value)
    if kind is int:
        # int -> str is quadratic in the digits (and refused past 4300 of them).
        return repr(value) if value.bit_length() <= 64 else (
            f"an int of {value.bit_length()} bits")
    if kind is str or kind is bytes:
        text = repr(value[:limit])
        if len(value) <= limit:
            return text
        return f"{text}... (a {kind.__name__} of length {len(value)})"
    if kind in _CONTAINER_TYPES or kind is bytearray:
        return f"a {kind.__qualname__} of length {len(value)}"
    return f"a {kind.__qualname__}"


class _ArrayBuilder:
    """A pickled ndarray between ``_reconstruct`` and its state: :meth:`__setstate__`
    checks the state against the expected dtype and element count and makes the array."""

    __slots__ = ("array", "budget", "count", "dtype", "what")
    array: np.ndarray[Any, Any] | None
    budget: int
    count: int
    dtype: np.dtype[Any]
    what: str

    def __new__(cls, *args: Any, **kwargs: Any) -> _ArrayBuilder:
        # NEWOBJ on the type would skip _reconstruct's checks: only _make creates one.
        raise UnsafePickleError("numpy arrays are only unpickled through _reconstruct")

    @classmethod
    def _make(cls, dtype: np.dtype[Any], count: int, what: str, budget: int
              ) -> _ArrayBuilder:
        self = object.__new__(cls)
        self.dtype, self.count, self.what, self.budget = dtype, count, what, budget
        self.array = None
        return self

    def __setstate__(self, state: Any) -> None:
        what = self.what
        if self.array is not None:
            raise _refuse(what, "a numpy array is given its state twice")
        if type(state) is not tuple or len(state) != 5 or state[0] != 1:
            raise _refuse(what, f"unsupported numpy array state {_short(state)}")
        _, shape, spec, fortran, data = state
        shape = _shape(shape, what)
        if type(fortran) is not bool:
            raise _refuse(what, f"invalid numpy array state {_short(state)}")
        dtype = _resolved(spec, -1, what)
        if dtype != self.dtype:
            raise ChunkDecodeError(f"{what}: the pickled array has dtype {dtype}, expected "
                                   f"{self.dtype}")
        count = math.prod(shape)
        if count != self.count:
            raise ChunkDecodeError(f"{what}: the pickled array has {count} elements, "
                                   f"expected {self.count}")
        if dtype.hasobject:
            if type(data) is not list or len(data) != count:
                raise _refuse(what, f"the items of a pickled {dtype} array of shape {shape} "
                                    f"are {type(data).__name__} of {_length(data)}")
            check_items(data, what, fields=len(dtype.names) if dtype.names else None,
                        budget=self.budget)
            try:
                flat = np.fromiter(data, dtype=dtype, count=count)
            except (TypeError, ValueError, OverflowError) as e:
                raise ChunkDecodeError(f"{what}: pickled items do not fit {dtype}: {e}") from e
            # The items are listed in C order of the indices whatever the memory layout.
            array = flat.reshape(shape)
            self.array = np.asfortranarray(array) if fortran else array
        else:
            if type(data) not in (bytes, bytearray) or len(data) != count * dtype.itemsize:
                raise _refuse(what, f"the data of a pickled {dtype} array of shape {shape} "
                                    f"is {type(data).__name__} of {_length(data)}")
            flat = np.frombuffer(data, dtype=dtype)
            # The data are the array's memory, in its layout.
            self.array = (flat.reshape(shape, order="F") if fortran else flat.reshape(shape)
                          ).copy(order="K")


def _length(value: Any) -> str:
    try:
        return f"length {len(value)}"
    except TypeError:
        return "no length"


def check_items(items: list[Any], what: str, *, fields: int | None = None,
                budget: int = MAX_SHARED_ITEMS) -> None:
    """Check that the items of a pickled object array are plain data: text, bytes,
    numbers, booleans, None, and lists, tuples, dicts and sets of them (and
    :class:`ZarrReferenceData`), nested at most :data:`MAX_ITEM_DEPTH` deep. With
    ``fields``, each item must be a tuple of that many values (one structured element).
    The items may hold at most ``budget`` elements, a value reached along two paths
    counting twice, and no cycle: whatever walks them later (``repr``, comparison,
    ``json``) is bounded too.

    >>> check_items([1, "a", {"k": (None, 2.5)}], "c/0")
    >>> check_items([[[[0]]]], "c/0")  # nesting is fine up to the limit
    >>> check_items([(1, 2)], "c/0", fields=3)
    Traceback (most recent call last):
    zarrkit.errors.UnsafePickleError: c/0: a structured element is tuple of length 2, not 3 values
    >>> shared = [0] * 10
    >>> check_items([shared] * 10, "c/0", budget=50)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.UnsafePickleError: c/0: pickled items hold more than 50 elements ...
    """
    if fields is not None:
        for item in items:
            if type(item) is not tuple or len(item) != fields:
                raise _refuse(what, f"a structured element is {type(item).__name__} of "
                                    f"{_length(item)}, not {fields} values")
    # A depth-first walk that visits each container once but counts, for each, the
    # elements below it along every path (a container shared through the memo counts
    # once per path) and the height: a DAG of a few hundred bytes is refused in as many
    # steps as it has containers, not in 2^60. The containers being walked are the
    # current path, so meeting one of them again is a cycle.
    leaves = _LEAF_TYPES
    finished: dict[int, tuple[int, int]] = {}  # id -> (elements below, height)
    path: set[int] = set()
    stack: list[tuple[Any, list[Any] | None]] = [(items, None)]
    while stack:
        value, children = stack[-1]
        key = id(value)
        if children is not None:  # every child is finished
            stack.pop()
            path.discard(key)
            count = len(value) * (2 if isinstance(value, dict) else 1)
            height = 0
            for child in children:
                below, child_height = finished[id(child)]
                count += below
                height = max(height, child_height)
            if count > budget:
                raise _refuse(what, f"pickled items hold more than {budget} elements "
                                    "(counting those shared through the pickle's memo "
                                    "once per path)")
            finished[key] = (count, height + 1)
            continue
        kind = type(value)
        if kind not in _CONTAINER_TYPES:
            raise _refuse(what, f"a pickled item is a {kind.__qualname__}, which zarrkit "
                                "does not unpickle here")
        done = finished.get(key)
        if done is not None:
            stack.pop()
            if len(path) + done[1] > MAX_ITEM_DEPTH:
                raise _refuse(what, f"pickled items nest more than {MAX_ITEM_DEPTH} deep")
            continue
        if key in path:
            raise _refuse(what, "pickled items hold themselves (a cycle through the "
                                "pickle's memo)")
        if len(path) >= MAX_ITEM_DEPTH:
            raise _refuse(what, f"pickled items nest more than {MAX_ITEM_DEPTH} deep")
        path.add(key)
        groups = (value.keys(), value.values()) if isinstance(value, dict) else (value,)
        children = []
        for group in groups:
            # One C-speed pass for the common case of a container of plain values.
            if not leaves.issuperset(map(type, group)):
                children.extend(item for item in group if type(item) not in leaves)
        stack[-1] = (value, children)
        stack.extend((child, None) for child in children)


def _load_build(self: RestrictedUnpickler) -> None:
    # BUILD would set attributes on anything else (a stand-in's class, a function):
    # only numpy's arrays and dtypes take a state here, each checked by its stand-in.
    state = self.stack.pop()
    target = self.stack[-1]
    if type(target) not in (_ArrayBuilder, _DtypeSpec):
        raise _refuse(self._what, f"a state given to {_short(target)}")
    target.__setstate__(state)


def _load_newobj(self: RestrictedUnpickler) -> None:
    args = self.stack.pop()
    self.append(_new_zarr_reference(self, self.stack.pop(), args, {}))


def _load_newobj_ex(self: RestrictedUnpickler) -> None:
    kwargs = self.stack.pop()
    args = self.stack.pop()
    self.append(_new_zarr_reference(self, self.stack.pop(), args, kwargs))


def _new_zarr_reference(self: RestrictedUnpickler, cls: Any, args: Any, kwargs: Any
                        ) -> ZarrReferenceData:
    # ``cls.__new__(cls, ...)``: of the allowed globals, only ZarrReference is a class.
    if cls is not self._zarr_reference or type(args) is not tuple or args or (
            type(kwargs) is not dict or kwargs):
        raise _refuse(self._what, f"{_short(cls)}.__new__ is not unpickled")
    return ZarrReferenceData()


def _safe_key(key: Any) -> bool:
    # Text and bytes hash with a random key; small ints and singletons cannot be made to
    # collide in numbers. Others (large ints, floats, tuples) can flood a dict or set.
    kind = type(key)
    return (kind is str or kind is bytes or key is None or kind is bool
            or (kind is int and -_MAX_SMALL_KEY <= key < _MAX_SMALL_KEY))


def _check_keys(self: RestrictedUnpickler, keys: Any) -> None:
    check_keys_of(keys, self._what)


def check_keys_of(keys: Any, what: str) -> None:
    """Refuse dict keys or set members that could be crafted to collide (or that take
    long to hash: a tuple of tuples shared through the memo hashes 2^n leaves), before
    any of them is hashed: only text, bytes, None, booleans and small ints pass.

    >>> check_keys_of(["path", b"x", 3, None], "c/0")
    >>> check_keys_of([1 << 40], "c/0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.UnsafePickleError: c/0: a dict key or set member 1099511627776 (only ...
    """
    if _TEXT_TYPES.issuperset(map(type, keys)):  # the common case, at C speed
        return
    for key in keys:
        if not _safe_key(key):
            raise _refuse(what, f"a dict key or set member {_short(key)} (only text, "
                                f"bytes and ints below {_MAX_SMALL_KEY} are unpickled)")


def _keys_then(load: Any, pairs: bool) -> Any:
    """An opcode that builds a dict or set from the items on the stack, after checking
    its keys (every other item for a dict)."""

    def checked(self: RestrictedUnpickler) -> None:
        _check_keys(self, self.stack[0::2] if pairs else self.stack)
        load(self)

    return checked


def _load_setitem(self: RestrictedUnpickler) -> None:
    _check_keys(self, self.stack[-2:-1])
    pickle._Unpickler.load_setitem(self)  # type: ignore[attr-defined]


def _put(self: RestrictedUnpickler, index: int) -> None:
    # Picklers number memo entries in order (the index is the memo's size): a sparse
    # index would make the memo a table to flood.
    if not 0 <= index <= len(self.memo):
        raise _refuse(self._what, f"memo index {index} out of order")
    self.memo[index] = self.stack[-1]


def _load_put(self: RestrictedUnpickler) -> None:
    _put(self, int(self.readline()[:-1]))


def _load_binput(self: RestrictedUnpickler) -> None:
    _put(self, self.read(1)[0])


def _load_long_binput(self: RestrictedUnpickler) -> None:
    _put(self, struct.unpack("<I", self.read(4))[0])


def _load_bytearray8(self: RestrictedUnpickler) -> None:
    # The stock opcode allocates the announced size before reading: read first.
    (size,) = struct.unpack("<Q", self.read(8))
    data = self.read(size) if size <= self._size else b""
    if len(data) != size:
        raise pickle.UnpicklingError("pickle data was truncated")
    self.append(bytearray(data))


class RestrictedUnpickler(pickle._Unpickler):
    """An unpickler that resolves only the globals of :data:`ALLOWED_GLOBALS`, each to a
    checking stand-in; any other global is an :class:`~zarrkit.errors.UnsafePickleError`
    raised before anything is called.

    It is Python's pure-Python unpickler (``pickle._Unpickler``), not the C one: that one
    pre-allocates what a pickle announces (a ``PUT`` of index 10**8, twelve bytes, zeroes
    a 1.6 GB memo table; ``BYTEARRAY8`` allocates its stated size before reading), and
    its opcodes cannot be overridden. Here the memo is a dict filled in order,
    ``BYTEARRAY8`` reads before it allocates, ``BUILD`` only reaches numpy's array and
    dtype stand-ins, ``NEWOBJ`` only ``ZarrReference``, and dict keys and set members are
    text, bytes or small integers (others could be crafted to collide, making each
    insertion scan all the others), also when ``ZarrReference`` is called on a dict or a
    list of pairs (``REDUCE``, ``INST``, ``OBJ``).

    ``dtype`` and ``count`` say what the one array the pickle may hold must be (a chunk's
    dtype and element count); without them, the pickle may hold no array.

    >>> RestrictedUnpickler(io.BytesIO(b"cbuiltins\\neval\\n.")).load()
    Traceback (most recent call last):
    zarrkit.errors.UnsafePickleError: pickle: names builtins.eval, which zarrkit never ...
    """

    dispatch = dict(pickle._Unpickler.dispatch)
    dispatch[pickle.BUILD[0]] = _load_build  # type: ignore[assignment]
    dispatch[pickle.NEWOBJ[0]] = _load_newobj  # type: ignore[assignment]
    dispatch[pickle.NEWOBJ_EX[0]] = _load_newobj_ex  # type: ignore[assignment]
    dispatch[pickle.BYTEARRAY8[0]] = _load_bytearray8  # type: ignore[assignment]
    dispatch[pickle.PUT[0]] = _load_put  # type: ignore[assignment]
    dispatch[pickle.BINPUT[0]] = _load_binput  # type: ignore[assignment]
    dispatch[pickle.LONG_BINPUT[0]] = _load_long_binput  # type: ignore[assignment]
    dispatch[pickle.SETITEM[0]] = _load_setitem  # type: ignore[assignment]
    for _opcode, _pairs in ((pickle.SETITEMS, True), (pickle.DICT, True),
                            (pickle.ADDITEMS, False), (pickle.FROZENSET, False)):
        dispatch[_opcode[0]] = _keys_then(dispatch[_opcode[0]], _pairs)  # type: ignore[assignment]
    del _opcode, _pairs

    # Set by pickle._Unpickler (its __init__ and load()).
    memo: dict[int, Any]
    stack: list[Any]
    append: Any
    read: Any
    readline: Any

    def __init__(self, file: Any, *, dtype: np.dtype[Any] | None = None,
                 count: int | None = None, what: str = "pickle", size: int = 1 << 62
                 ) -> None:
        super().__init__(file, fix_imports=False)
        self._expected = dtype
        self._count = count
        self._what = what
        self._size = size
        self._arrays = 0
        self._zarr_reference = _ZarrReferenceName(what)

    def find_class(self, module: str, name: str) -> Any:
        """The stand-in for an allowed global; UnsafePickleError for any other."""
        key = (module, name)
        if key not in ALLOWED_GLOBALS:
            raise UnsafePickleError(
                f"{self._what}: names {module}.{name}, which zarrkit never unpickles "
                f"(allowed: {_ALLOWED_NAMES})")
        if name == "_reconstruct":
            return self._reconstruct
        if name == "ndarray":
            return _NDARRAY
        if name == "dtype":
            return self._dtype
        if name == "ZarrReference":
            return self._zarr_reference
        return self._latin1

    def _latin1(self, text: Any, encoding: Any = "latin1") -> bytes:
        # ``_codecs.encode`` as protocols 0-2 use it: text to bytes in latin-1 only.
        if type(text) is not str or encoding not in ("latin1", "latin-1"):
            raise _refuse(self._what, f"_codecs.encode is only unpickled as encode(text, "
                                      f"'latin1'), found encode({type(text).__name__}, "
                                      f"{_short(encoding)})")
        return text.encode("latin-1")

    def _dtype(self, spec: Any = None, align: Any = False, copy: Any = False) -> _DtypeSpec:
        return _DtypeSpec(spec, align, copy, self._what)

    def _reconstruct(self, subtype: Any = None, shape: Any = None, typecode: Any = None
                     ) -> _ArrayBuilder:
        if subtype is not _NDARRAY or shape != (0,) or typecode != b"b":
            raise _refuse(self._what, f"_reconstruct({_short(subtype)}, {_short(shape)}, "
                                      f"{_short(typecode)}) is not how numpy pickles an "
                                      "ndarray")
        if self._expected is None or self._count is None:
            raise _refuse(self._what, "a numpy array where none is expected")
        self._arrays += 1
        if self._arrays > 1:
            raise _refuse(self._what, "more than one numpy array in one pickle (arrays "
                                      "nested in the items of a chunk are not unpickled)")
        return _ArrayBuilder._make(self._expected, self._count, self._what,
                                   self._size + MAX_SHARED_ITEMS)


def restricted_loads(data: Any, *, dtype: np.dtype[Any] | None = None,
                     count: int | None = None, what: str = "pickle") -> Any:
    """Unpickle ``data`` with :class:`RestrictedUnpickler`. A pickled array comes back as
    an ndarray (of ``dtype`` with ``count`` elements: without them no array is
    accepted); other values must be plain data (see :func:`check_items`). A malformed
    pickle is a :class:`~zarrkit.errors.ChunkDecodeError`.

    >>> restricted_loads(pickle.dumps(0, protocol=5))
    0
    >>> restricted_loads(b"\\x80\\x05(K")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.ChunkDecodeError: pickle: cannot unpickle: ...
    """
    view = as_bytes_view(data)
    unpickler = RestrictedUnpickler(io.BytesIO(view), dtype=dtype, count=count, what=what,
                                    size=view.nbytes)
    try:
        value = unpickler.load()
    except (UnsafePickleError, ChunkDecodeError):
        raise
    except RecursionError as e:
        raise ChunkDecodeError(f"{what}: cannot unpickle: nested too deeply") from e
    except Exception as e:  # truncated data, bad opcodes, wrong argument types...
        raise ChunkDecodeError(f"{what}: cannot unpickle: {e}") from e
    if type(value) is _ArrayBuilder:
        if value.array is None:
            raise _refuse(what, "a numpy array without its state")
        return value.array
    check_items([value], what, budget=view.nbytes + MAX_SHARED_ITEMS)
    return value


def load_array(data: Any, dtype: np.dtype[Any], count: int, *, what: str
               ) -> np.ndarray[Any, Any]:
    """The array a chunk's pickle holds: of ``dtype`` with ``count`` elements, else a
    ChunkDecodeError; UnsafePickleError for any global outside the allowlist.

    >>> import numcodecs
    >>> refs = np.array([1, 2], dtype=object)
    >>> load_array(numcodecs.Pickle().encode(refs), np.dtype(object), 3, what="c/0")
    Traceback (most recent call last):
    zarrkit.errors.ChunkDecodeError: c/0: the pickled array has 2 elements, expected 3
    """
    value = restricted_loads(data, dtype=dtype, count=count, what=what)
    if not isinstance(value, np.ndarray):
        raise ChunkDecodeError(f"{what}: the pickle holds a {type(value).__name__}, not an "
                               "array")
    return value


class RestrictedPickle(Codec):  # type: ignore[misc]
    """The v2 ``pickle`` object codec (``{"id": "pickle", "protocol": n}``), for reading
    only: chunks are decoded by :func:`load_array`; encoding is refused (zarrkit writes no
    pickles: use ``json2`` for arrays of objects).

    >>> codec = RestrictedPickle(protocol=5)
    >>> codec.get_config()
    {'id': 'pickle', 'protocol': 5}
    >>> codec.encode(np.array([1], dtype=object))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.UnsupportedOperationError: zarrkit does not write pickled chunks ...
    """

    codec_id = "pickle"

    def __init__(self, protocol: int = pickle.HIGHEST_PROTOCOL) -> None:
        self.protocol = protocol

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> RestrictedPickle:
        """The codec of a ``{"id": "pickle", ...}`` configuration (MetadataError if
        invalid).

        >>> RestrictedPickle.from_config({"id": "pickle", "protocol": 9})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: codec 'pickle': 'protocol' must be an integer in [0, 5], ...
        """
        options = {k: v for k, v in config.items() if k != "id"}
        check_keys("pickle", options, {"protocol"})
        protocol = config_int("pickle", options, "protocol", pickle.HIGHEST_PROTOCOL,
                              low=0, high=pickle.HIGHEST_PROTOCOL)
        return cls(protocol=protocol)

    def get_config(self) -> dict[str, Any]:
        """The JSON configuration (as numcodecs writes it)."""
        return {"id": self.codec_id, "protocol": self.protocol}

    def decode(self, buf: Any, out: Any = None) -> Any:
        """Unpickle ``buf`` with :func:`restricted_loads` (no array accepted: chunks go
        through :func:`load_array`, which knows their dtype and size)."""
        value = restricted_loads(buf)
        if out is not None:
            raise UnsupportedOperationError("the pickle codec decodes into no buffer")
        return value

    def decode_array(self, buf: Any, dtype: np.dtype[Any], count: int, what: str
                     ) -> np.ndarray[Any, Any]:
        """The chunk array ``buf`` holds (see :func:`load_array`)."""
        return load_array(buf, dtype, count, what=what)

    def encode(self, buf: Any) -> Any:
        """Refused: zarrkit writes no pickles."""
        raise UnsupportedOperationError(
            "zarrkit does not write pickled chunks (reading them runs code in other "
            "readers); use the json2 object codec (numcodecs.JSON) instead")


