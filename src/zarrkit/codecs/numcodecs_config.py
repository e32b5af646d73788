"""The numcodecs codecs zarrkit runs, described in one place: the fields of each codec id
with their types and ranges (:func:`check_numcodecs_config`), and what each codec does to
the data that flows through it (:func:`flow_through`).

Both are used for Zarr v2 filters and compressors (``{"id": ...}``) and for v3
``numcodecs.<id>`` codecs, when an array's codec chain is built. Checking the fields before
numcodecs builds the codec, and the chain against the chunks it will carry, means that a
chain accepted when an array is opened encodes and decodes its chunks: no ``zlib`` level 10
that fails on the first write, no ``shuffle`` element size that does not divide the chunk.
The sizes worked out along the chain bound every decompressing step when a chunk is read.

>>> check_numcodecs_config("zlib", "zlib", {"level": 10})
Traceback (most recent call last):
zarrkit.errors.MetadataError: codec 'zlib': 'level' must be an integer in [-1, 9], found 10
>>> import numcodecs
>>> flow = Flow.of_array(np.dtype("<i4"), 10)
>>> flow_through("shuffle", numcodecs.Shuffle(elementsize=3), flow)  # doctest: +ELLIPSIS
Traceback (most recent call last):
zarrkit.errors.MetadataError: codec 'shuffle': 'elementsize' 3 does not divide the 40 bytes ...
"""

from __future__ import annotations

import lzma
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numcodecs import blosc

from zarrkit.caching import BoundedCache
from zarrkit.codecs.bounded import UNBOUNDED_CHUNK_LIMIT, compressed_bound
from zarrkit.codecs.config import (
    INT32_MAX,
    UINT32_MAX,
    check_keys,
    config_bool,
    config_choice,
    config_dtype,
    config_int,
    config_number,
)
from zarrkit.errors import MetadataError

# numcodecs filters that take an array and give an array (of the same number of elements,
# but for packbits).
ARRAY_FILTERS = frozenset(
    {"delta", "fixedscaleoffset", "astype", "quantize", "bitround", "packbits", "categorize"}
)
# Codecs that serialise an array of Python objects (strings, bytes, arrays, JSON values).
OBJECT_CODECS = frozenset({"vlen-utf8", "vlen-bytes", "vlen-array", "json2", "msgpack2", "pickle"})
# Codecs that serialise a numeric array into a compressed stream of their own.
NUMERIC_SERIALISERS = frozenset({"pcodec", "zfpy"})
# Checksums add a fixed number of bytes; shuffle only reorders them.
FIXED_GROWTH = {"crc32": 4, "crc32c": 4, "adler32": 4, "fletcher32": 4, "jenkins_lookup3": 4,
                "shuffle": 0}

_NUMBERS = "iufc"
_ZSTD_LEVELS = (-131072, 22)  # ZSTD_minCLevel(), ZSTD_maxCLevel(); beyond them zstd clamps
# Mantissa bits of the float types bitround works on, by numpy's name for them, as
# numcodecs looks them up: a big-endian float (named ">f8") fails there.
_MANTISSA_BITS = {"float16": 10, "float32": 23, "float64": 52}


# --- fields ---------------------------------------------------------------------------------


# Only the compressors this build of c-blosc has: "snappy" is often missing.
BLOSC_COMPRESSORS = tuple(blosc.list_compressors())


def _blosc(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"cname", "clevel", "shuffle", "blocksize", "typesize"})
    config_choice(name, c, "cname", BLOSC_COMPRESSORS, "lz4")
    config_int(name, c, "clevel", 5, low=0, high=9)
    config_choice(name, c, "shuffle", (-1, 0, 1, 2), 1)  # -1: bit shuffle for 1-byte items
    # c-blosc keeps these in C ints.
    config_int(name, c, "blocksize", 0, low=0, high=INT32_MAX)
    if c.get("typesize") is not None:
        config_int(name, c, "typesize", low=1, high=INT32_MAX)


def _level(low: int, high: int, default: int) -> Callable[[str, Mapping[str, Any]], None]:
    def check(name: str, c: Mapping[str, Any]) -> None:
        check_keys(name, c, {"level"})
        config_int(name, c, "level", default, low=low, high=high)
    return check


def _zstd(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"level", "checksum"})
    config_int(name, c, "level", 0, low=_ZSTD_LEVELS[0], high=_ZSTD_LEVELS[1])
    config_bool(name, c, "checksum", False)


def _lz4(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"acceleration"})
    # LZ4 takes any C int (below 1 meaning 1).
    config_int(name, c, "acceleration", 1, low=-INT32_MAX - 1, high=INT32_MAX)


_LZMA_FILTER_OPTIONS: dict[int, dict[str, tuple[int, int]]] = {
    **{f: {"dict_size": (4096, 1536 << 20), "lc": (0, 4), "lp": (0, 4), "pb": (0, 4),
           "mode": (1, 2), "nice_len": (2, 273), "mf": (3, 20), "depth": (0, INT32_MAX),
           "preset": (0, 9)}
       for f in (lzma.FILTER_LZMA1, lzma.FILTER_LZMA2)},
    lzma.FILTER_DELTA: {"dist": (1, 256)},
    **{f: {"start_offset": (0, UINT32_MAX)}
       for f in (lzma.FILTER_X86, lzma.FILTER_POWERPC, lzma.FILTER_IA64, lzma.FILTER_ARM,
                 lzma.FILTER_ARMTHUMB, lzma.FILTER_SPARC)},
}


def _lzma_filters(name: str, filters: Any, raw: bool) -> None:
    """A filter chain: one to four filters, the last one a compressor (LZMA1 only raw)."""
    last = (lzma.FILTER_LZMA1, lzma.FILTER_LZMA2) if raw else (lzma.FILTER_LZMA2,)
    if not isinstance(filters, list) or not 1 <= len(filters) <= 4 or not all(
        isinstance(f, dict) and type(f.get("id")) is int and f["id"] in _LZMA_FILTER_OPTIONS
        for f in filters
    ) or filters[-1]["id"] not in last:
        raise MetadataError(
            f"codec {name!r}: 'filters' must be a list of one to four lzma filters ending "
            f"with {' or '.join(map(str, last))}, found {filters!r}"
        )
    for f in filters:
        options = _LZMA_FILTER_OPTIONS[f["id"]]
        check_keys(name, f, {"id", *options})
        for key in set(f) - {"id"}:
            low, high = options[key]
            config_int(name, f, key, low=low, high=high)


def _lzma(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"format", "check", "preset", "filters"})
    # FORMAT_AUTO (0) only decodes; a chunk could not be written with it.
    form = config_choice(name, c, "format", (lzma.FORMAT_XZ, lzma.FORMAT_ALONE,
                                             lzma.FORMAT_RAW), lzma.FORMAT_XZ)
    check = config_choice(name, c, "check", (-1, lzma.CHECK_NONE, lzma.CHECK_CRC32,
                                             lzma.CHECK_CRC64, lzma.CHECK_SHA256), -1)
    if form != lzma.FORMAT_XZ and check not in (-1, lzma.CHECK_NONE):
        raise MetadataError(f"codec {name!r}: 'check' needs 'format' 1 (xz), found {form}")
    preset, filters = c.get("preset"), c.get("filters")
    if preset is not None:
        if filters is not None:
            raise MetadataError(f"codec {name!r}: give 'preset' or 'filters', not both")
        level = preset & ~lzma.PRESET_EXTREME if type(preset) is int else preset
        config_int(name, {"preset": level}, "preset", low=0, high=9)
    if filters is not None or form == lzma.FORMAT_RAW:
        _lzma_filters(name, filters, form == lzma.FORMAT_RAW)


def _delta(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"dtype", "astype"})
    config_dtype(name, c, "dtype", _NUMBERS)
    config_dtype(name, c, "astype", _NUMBERS, c.get("dtype"))


def _fixedscaleoffset(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"offset", "scale", "dtype", "astype"})
    config_number(name, c, "offset")
    if config_number(name, c, "scale") == 0:
        raise MetadataError(f"codec {name!r}: 'scale' cannot be 0 (decoding divides by it)")
    config_dtype(name, c, "dtype", "iuf")
    config_dtype(name, c, "astype", "iuf", c.get("dtype"))


def _astype(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"encode_dtype", "decode_dtype"})
    config_dtype(name, c, "encode_dtype", "b" + _NUMBERS)
    config_dtype(name, c, "decode_dtype", "b" + _NUMBERS)


def _quantize(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"digits", "dtype", "astype"})
    # Beyond about 300 digits 10**-digits is 0 or overflows, and numcodecs fails.
    config_int(name, c, "digits", low=-300, high=300)
    config_dtype(name, c, "dtype", "f")
    config_dtype(name, c, "astype", "f", c.get("dtype"))


def _bitround(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"keepbits"})
    config_int(name, c, "keepbits", low=0, high=max(_MANTISSA_BITS.values()))


def _categorize(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"labels", "dtype", "astype"})
    labels = c.get("labels")
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise MetadataError(f"codec {name!r}: 'labels' must be a list of strings, found "
                            f"{labels!r}")
    dtype = config_dtype(name, c, "dtype", "UO")
    astype = config_dtype(name, c, "astype", "iu", "u1")
    if len(labels) > np.iinfo(astype).max:  # label i is stored as i + 1; 0 is "other"
        raise MetadataError(
            f"codec {name!r}: {len(labels)} labels do not fit in 'astype' {astype}"
        )
    if dtype.kind == "U" and any(len(x) > dtype.itemsize // 4 for x in labels):
        raise MetadataError(f"codec {name!r}: a label is longer than 'dtype' {dtype} holds")


def _shuffle(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"elementsize"})
    config_int(name, c, "elementsize", 4, low=0, high=INT32_MAX)


def _checksum(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"location"})
    config_choice(name, c, "location", ("start", "end", None))


def _jenkins(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"initval", "prefix"})
    config_int(name, c, "initval", 0, low=0, high=UINT32_MAX)
    # numcodecs wants bytes, which JSON cannot hold.
    config_choice(name, c, "prefix", (None,))


def _json2(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"encoding", "skipkeys", "ensure_ascii", "check_circular",
                         "allow_nan", "sort_keys", "indent", "separators", "strict"})
    encoding = c.get("encoding", "utf-8")
    try:  # what numcodecs will do with it; "rot13" exists but is no text encoding
        known = isinstance(encoding, str) and "x".encode(encoding).decode(encoding) == "x"
    except (LookupError, UnicodeError):
        known = False
    if not known:
        raise MetadataError(f"codec {name!r}: 'encoding' must name a text encoding, found "
                            f"{encoding!r}")
    for key, default in (("skipkeys", False), ("ensure_ascii", True), ("check_circular", True),
                         ("allow_nan", True), ("sort_keys", True), ("strict", True)):
        config_bool(name, c, key, default)
    indent = c.get("indent")
    if indent is not None and not isinstance(indent, str):
        config_int(name, c, "indent", low=0, high=64)
    if isinstance(indent, str) and len(indent) > 64:
        raise MetadataError(f"codec {name!r}: 'indent' is longer than 64 characters")
    separators = c.get("separators")
    if separators is not None and not (
        # a list in JSON; numcodecs.JSON().get_config() gives a tuple
        isinstance(separators, list | tuple) and len(separators) == 2
        and all(isinstance(s, str) and len(s) <= 16 for s in separators)
    ):
        raise MetadataError(f"codec {name!r}: 'separators' must be two short strings, found "
                            f"{separators!r}")


def _msgpack2(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"use_single_float", "use_bin_type", "raw"})
    for key, default in (("use_single_float", False), ("use_bin_type", True), ("raw", False)):
        config_bool(name, c, key, default)


def _vlen_array(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, {"dtype"})
    config_dtype(name, c, "dtype", "b" + _NUMBERS)


def _nothing(name: str, c: Mapping[str, Any]) -> None:
    check_keys(name, c, set())


_CHECKS: dict[str, Callable[[str, Mapping[str, Any]], None]] = {
    "blosc": _blosc,
    "zstd": _zstd,
    "zlib": _level(-1, 9, 1),
    "gzip": _level(-1, 9, 1),
    "bz2": _level(1, 9, 1),
    "lz4": _lz4,
    "lzma": _lzma,
    "delta": _delta,
    "fixedscaleoffset": _fixedscaleoffset,
    "astype": _astype,
    "quantize": _quantize,
    "bitround": _bitround,
    "packbits": _nothing,
    "categorize": _categorize,
    "shuffle": _shuffle,
    "crc32": _checksum,
    "crc32c": _checksum,
    "adler32": _checksum,
    "fletcher32": _nothing,
    "jenkins_lookup3": _jenkins,
    "base64": _nothing,
    "json2": _json2,
    "msgpack2": _msgpack2,
    "vlen-utf8": _nothing,
    "vlen-bytes": _nothing,
    "vlen-array": _vlen_array,
}
CHECKED_IDS = frozenset(_CHECKS)
"""The numcodecs ids whose configurations are checked field by field. Others (codecs that
users register, pcodec and zfpy when installed) are checked by their own constructors."""


def check_numcodecs_config(name: str, codec_id: str, configuration: Mapping[str, Any]) -> None:
    """Check the fields of a numcodecs configuration (without its ``id``); ``name`` is
    how errors call the codec.

    >>> check_numcodecs_config("numcodecs.blosc", "blosc", {"shuffle": 3})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'numcodecs.blosc': 'shuffle' must be one of [-1, 0, ...
    """
    check = _CHECKS.get(codec_id)
    if check is None:
        return
    key = _config_key(codec_id, configuration)
    if key is not None and _CHECKED.get(key) is not None:
        return
    check(name, configuration)
    if key is not None:
        _CHECKED.put(key, True)


# Configurations found valid, by value: v2 pipelines are built for every array opened, and a
# hierarchy repeats a few configurations. Only successes are kept (see BoundedCache).
_CHECKED: BoundedCache[tuple[Any, ...], bool] = BoundedCache(256)


def _config_key(codec_id: str, configuration: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The cache key of a configuration of scalars, each with its type (True == 1 and
    1.0 == 1, which the checks tell apart); None when a value is a list or object."""
    items = []
    for key in sorted(configuration):
        value = configuration[key]
        kind = type(value)
        if kind not in _SCALARS:
            return None
        items.append((key, kind, value))
    return (codec_id, *items)


_SCALARS = frozenset({str, int, float, bool, type(None)})


# --- what flows through a chain -------------------------------------------------------------


@dataclass(frozen=True)
class Flow:
    """What one step of a codec chain hands the next: an array of ``count`` elements of
    ``dtype``, or bytes (``dtype`` None); ``nbytes`` exactly when the size is fixed, and
    never more than ``bound`` bytes.

    >>> Flow.of_array(np.dtype("u2"), 3)
    Flow(dtype=dtype('uint16'), count=3, nbytes=6, bound=6)
    """

    dtype: np.dtype[Any] | None
    count: int | None
    nbytes: int | None
    bound: int

    @classmethod
    def of_array(cls, dtype: np.dtype[Any], count: int) -> Flow:
        """An array chunk: fixed size, or bounded only by the object-chunk limit.

        >>> Flow.of_array(np.dtype("O"), 3).nbytes is None
        True
        """
        if dtype.hasobject:
            return cls(dtype, count, None, UNBOUNDED_CHUNK_LIMIT)
        return cls(dtype, count, count * dtype.itemsize, count * dtype.itemsize)

    @classmethod
    def of_bytes(cls, nbytes: int | None, bound: int) -> Flow:
        """Bytes of an exact size (None: it varies) and at most ``bound`` of them.

        >>> Flow.of_bytes(None, 10)
        Flow(dtype=None, count=None, nbytes=None, bound=10)
        """
        return cls(None, None, nbytes, bound)

    @property
    def decoded_limit(self) -> int:
        """How many bytes decoding into this flow may produce.

        >>> Flow.of_bytes(None, 10).decoded_limit
        10
        """
        return self.bound if self.nbytes is None else self.nbytes


def _native(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return dtype.newbyteorder("=") if dtype.byteorder in "<>" else dtype


def _needs_array(name: str, flow: Flow, dtype: np.dtype[Any] | None, what: str) -> np.dtype[Any]:
    """The array dtype flowing in, checked to be ``dtype`` (None: any) in either byte
    order: numcodecs reinterprets the chunk's memory as its configured type."""
    if flow.dtype is None:
        raise MetadataError(f"codec {name!r} needs an array, but is given bytes")
    if dtype is not None and _native(flow.dtype) != _native(dtype):
        raise MetadataError(
            f"codec {name!r} is configured for {dtype} ({what!r}), but is given {flow.dtype}"
        )
    return flow.dtype


def _array_filter(name: str, codec_id: str, codec: Any, flow: Flow) -> Flow:
    """Check an array filter against its input; its output flow."""
    count = flow.count or 0
    if codec_id == "astype":
        _needs_array(name, flow, codec.decode_dtype, "decode_dtype")
        return Flow.of_array(codec.encode_dtype, count)
    if codec_id == "packbits":
        _needs_array(name, flow, np.dtype(bool), "bool input")
        return Flow.of_array(np.dtype("u1"), 1 + math.ceil(count / 8))
    if codec_id == "bitround":
        dtype = _needs_array(name, flow, None, "data type")
        bits = _MANTISSA_BITS.get(str(dtype))
        if bits is None or codec.keepbits > bits:
            raise MetadataError(
                f"codec {name!r}: 'keepbits' {codec.keepbits} needs a native-order float16, "
                f"float32 or float64 of at least that many mantissa bits, but is given {dtype}"
            )
        # The rounded values come out as the integers of their bits, unless none are cut.
        return flow if codec.keepbits == bits else Flow.of_array(
            np.dtype(dtype.str.replace("f", "i")), count)
    _needs_array(name, flow, codec.dtype, "dtype")
    return Flow.of_array(codec.astype, count)  # delta, fixedscaleoffset, quantize, categorize


def _bytes_codec(name: str, codec_id: str, codec: Any, flow: Flow) -> Flow:
    """Check a bytes -> bytes codec against its input; its output flow."""
    if flow.dtype is not None and flow.dtype.hasobject:
        raise MetadataError(f"codec {name!r} needs bytes or numbers, but is given objects")
    if codec_id == "shuffle" and codec.elementsize > 1 and (
        flow.nbytes is None or flow.nbytes % codec.elementsize
    ):
        given = "bytes of varying size" if flow.nbytes is None else f"{flow.nbytes} bytes"
        raise MetadataError(
            f"codec {name!r}: 'elementsize' {codec.elementsize} does not divide the "
            f"{given} it is given"
        )
    growth = FIXED_GROWTH.get(codec_id)
    if growth is not None:
        return Flow.of_bytes(None if flow.nbytes is None else flow.nbytes + growth,
                             flow.bound + growth)
    if codec_id == "base64":
        return Flow.of_bytes(None if flow.nbytes is None else 4 * -(-flow.nbytes // 3),
                             4 * -(-flow.bound // 3))
    return Flow.of_bytes(None, compressed_bound(flow.bound))


def flow_through(name: str, codec: Any, flow: Flow) -> Flow:
    """Check that the numcodecs ``codec`` can encode what ``flow`` describes, and describe
    what it produces.

    >>> import numcodecs
    >>> flow_through("delta", numcodecs.Delta("<i8", "<i2"), Flow.of_array(np.dtype("<i8"), 4))
    Flow(dtype=dtype('int16'), count=4, nbytes=8, bound=8)
    >>> flow_through("vlen-utf8", numcodecs.VLenUTF8(), Flow.of_array(np.dtype("<i8"), 4))
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'vlen-utf8' encodes arrays of objects, but is given int64
    """
    codec_id = codec.codec_id
    if codec_id in ARRAY_FILTERS:
        return _array_filter(name, codec_id, codec, flow)
    if codec_id in OBJECT_CODECS:  # objects, or structured elements with object fields
        if flow.dtype is None or not flow.dtype.hasobject:
            given = "bytes" if flow.dtype is None else flow.dtype
            raise MetadataError(f"codec {name!r} encodes arrays of objects, but is given {given}")
        return Flow.of_bytes(None, UNBOUNDED_CHUNK_LIMIT)
    if codec_id in NUMERIC_SERIALISERS:
        dtype = _needs_array(name, flow, None, "data type")
        if dtype.kind not in _NUMBERS:
            raise MetadataError(f"codec {name!r} encodes numbers, but is given {dtype}")
        return Flow.of_bytes(None, compressed_bound(flow.bound))
    return _bytes_codec(name, codec_id, codec, flow)
