"""Decoding chunks of objects (strings, bytes, arrays, JSON values) without trusting what a
stored chunk says about itself.

numcodecs sizes its output by the chunk's own header: the VLen codecs allocate an array of
as many objects as the first four bytes claim (2**32 - 1 of them from a four-byte chunk),
``json2`` and ``msgpack2`` an array of whatever shape and type the chunk ends with. Here the
claimed number of items is checked against the chunk's element count, and against the room
the bytes have for them, before anything is allocated.

>>> import numcodecs
>>> decode = ObjectDecoder("vlen-utf8", numcodecs.VLenUTF8(), 2)
>>> decode(numcodecs.VLenUTF8().encode(np.array(["a", "bc"], dtype=object)), "c/0").tolist()
['a', 'bc']
>>> decode(b"\\xff\\xff\\xff\\x0f", "c/0")
Traceback (most recent call last):
zarrkit.errors.ChunkDecodeError: c/0: vlen-utf8 holds 268435455 items, expected 2
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from zarrkit.codecs.bounded import as_bytes_view
from zarrkit.errors import ChunkDecodeError, UnsafePickleError

_VLEN_IDS = frozenset({"vlen-utf8", "vlen-bytes", "vlen-array"})


def check_vlen_header(data: Any, count: int, name: str, what: str) -> memoryview:
    """``data`` as bytes, once its VLen header (a u32le item count, then a u32le length
    before each item) is found to announce ``count`` items that it has room for. numcodecs
    then checks each item's length against the bytes left before reading it.

    >>> check_vlen_header(b"\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00", 2, "vlen-bytes", "c/0")
    Traceback (most recent call last):
    zarrkit.errors.ChunkDecodeError: c/0: 8 bytes cannot hold the 2 items vlen-bytes announces
    """
    view = as_bytes_view(data)
    if view.nbytes < 4:
        raise ChunkDecodeError(f"{what}: {view.nbytes} bytes is too short for {name}")
    (claimed,) = struct.unpack_from("<I", view, 0)
    if claimed != count:
        raise ChunkDecodeError(f"{what}: {name} holds {claimed} items, expected {count}")
    if 4 + 4 * claimed > view.nbytes:
        raise ChunkDecodeError(
            f"{what}: {view.nbytes} bytes cannot hold the {claimed} items {name} announces"
        )
    return view


def _flatten(values: Any, shape: list[int], name: str, what: str) -> list[Any]:
    """The items of a nested list of ``shape`` (what numpy's ``tolist`` writes) in C
    order; items may be lists themselves, so the shape, not the nesting, says where to
    stop."""
    rows: list[Any] = [values]
    for length in shape or [1]:
        flat: list[Any] = []
        for row in rows:
            if not isinstance(row, list) or len(row) != length:
                raise ChunkDecodeError(f"{what}: {name} items do not have shape {shape}")
            flat.extend(row)
        rows = flat
    return rows


def _objects_of(items: Any, count: int, name: str, what: str) -> np.ndarray[Any, Any]:
    """The ``json2``/``msgpack2`` layout: the items (nested by the chunk's shape), then the
    array's dtype string and shape. Only the number of items is trusted, once checked."""
    # The dtype is text, or bytes when msgpack2 reads strings raw.
    if not isinstance(items, list) or len(items) < 2 or not isinstance(items[-2], str | bytes):
        raise ChunkDecodeError(f"{what}: {name} data is not [items..., dtype, shape]")
    shape = items[-1]
    if not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape) or (
        math.prod(shape) != count
    ):
        raise ChunkDecodeError(
            f"{what}: {name} holds an array of shape {shape!r}, expected {count} items"
        )
    values = _flatten(items[:-2], shape, name, what)
    # fromiter stores each item as it is; assigning a list would let numpy broadcast it.
    return np.fromiter(values, dtype=object, count=count)


def _rows(objects: np.ndarray[Any, Any], dtype: np.dtype[Any], what: str
          ) -> np.ndarray[Any, Any]:
    """The elements of a structured ``dtype`` from JSON/msgpack rows (numcodecs writes each
    element as the list of its field values)."""
    fields = len(dtype.names or ())
    for row in objects:
        if not isinstance(row, list | tuple) or len(row) != fields:
            raise ChunkDecodeError(f"{what}: an element of {dtype} is not a list of "
                                   f"{fields} field values: {row!r:.80}")
    try:
        return np.fromiter(map(tuple, objects), dtype=dtype, count=objects.size)
    except (TypeError, ValueError, OverflowError) as e:
        raise ChunkDecodeError(f"{what}: elements do not fit {dtype}: {e}") from e


class ObjectDecoder:
    """Decodes chunks of ``count`` objects stored by the numcodecs object codec ``codec``
    into flat object arrays; every failure is a ChunkDecodeError.

    >>> import numcodecs
    >>> codec = numcodecs.JSON()
    >>> data = codec.encode(np.array([[1, "a"], [None, [2]]], dtype=object))
    >>> ObjectDecoder("json2", codec, 4)(data, "c/0").tolist()
    [1, 'a', None, [2]]
    >>> ObjectDecoder("json2", codec, 3)(data, "c/0")
    Traceback (most recent call last):
    zarrkit.errors.ChunkDecodeError: c/0: json2 holds an array of shape [2, 2], expected 3 items
    """

    def __init__(self, name: str, codec: Any, count: int, dtype: np.dtype[Any] | None = None,
                 order: str = "C") -> None:
        self.name = name
        self.codec = codec
        self.count = count
        # A structured dtype with object fields (hdmf-zarr's compound datasets) is decoded
        # into that dtype; ``order`` is the chunk's, for arrays that a pickle holds whole.
        self.dtype = dtype if dtype is not None and dtype.names else None
        self.order = order
        codec_id = codec.codec_id
        config = codec.get_config()
        self._items: Callable[[memoryview], Any] = codec.decode
        if codec_id == "json2":
            decoder = json.JSONDecoder(strict=config.get("strict", True))
            encoding = config.get("encoding", "utf-8")
            self._items = lambda view: decoder.decode(bytes(view).decode(encoding))
        elif codec_id == "msgpack2":
            import msgpack  # numcodecs has msgpack2 only when msgpack is installed

            raw = config.get("raw", False)
            self._items = lambda view: msgpack.unpackb(view, raw=raw)
        self._vlen = codec_id in _VLEN_IDS
        self._structured = codec_id in ("json2", "msgpack2")
        self._pickle = codec_id == "pickle"

    def __call__(self, data: Any, what: str) -> np.ndarray[Any, Any]:
        try:
            if self._vlen:
                view = check_vlen_header(data, self.count, self.name, what)
                out = np.asarray(self.codec.decode(view), dtype=object)
            elif self._structured:
                objects = _objects_of(self._items(as_bytes_view(data)), self.count,
                                      self.name, what)
                return objects if self.dtype is None else _rows(objects, self.dtype, what)
            elif self._pickle:  # zarrkit.codecs.restricted_pickle: checks dtype and count
                array = self.codec.decode_array(data, self.dtype or np.dtype(object),
                                                self.count, what)
                return array.reshape(-1, order=self.order)  # type: ignore[no-any-return]
            else:
                out = np.asarray(self.codec.decode(data), dtype=object)
        except (ChunkDecodeError, UnsafePickleError):
            raise
        except Exception as e:  # truncated data, invalid UTF-8 or JSON, deep nesting...
            raise ChunkDecodeError(f"{what}: cannot decode {self.name}: {e}") from e
        if out.size != self.count:
            raise ChunkDecodeError(
                f"{what}: {self.name} decoded {out.size} items, expected {self.count}"
            )
        return out.reshape(-1)
