"""Turning the arguments of ``create_array`` into validated array metadata.

>>> meta = array_metadata_v2(shape=(100, 100), dtype="u2", chunks=(10, 10))
>>> meta.compressor["id"], meta.fill_value
('zstd', np.uint16(0))
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numcodecs.abc import Codec

from zarrkit.caching import BoundedCache
from zarrkit.codecs.pipeline import pipeline_for, pipeline_key
from zarrkit.codecs.registry import codec_json_v3, codecs_json_v3, is_one_codec, to_codec
from zarrkit.dtype import VariableLengthBytes, VariableLengthUTF8, ZDType, parse_dtype
from zarrkit.errors import MetadataError
from zarrkit.hierarchy.nodes import DEFAULT
from zarrkit.metadata.dtypes import normalize_dtype
from zarrkit.metadata.fill_value import default_fill_value, normalize_fill_value
from zarrkit.metadata.v2 import FIRST_FILTERS_OF_OBJECTS, ArrayMetadataV2

DEFAULT_COMPRESSOR_V2: dict[str, Any] = {"id": "zstd", "level": 0}
# The chunk-size heuristic of HDF5's h5py, as zarr-python uses it: a target that grows
# with the array's size (256 KiB more per tenfold), between 128 KiB and 64 MiB.
_CHUNK_STEP_BYTES = 256 * 1024
_MIN_CHUNK_BYTES = 128 * 1024
_MAX_CHUNK_BYTES = 64 * 1024 * 1024


def guess_chunks(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """A chunk shape for ``shape`` as zarr-python guesses it (so that arrays created without
    ``chunks`` store the same metadata with either library): halve the axes in turn until a
    chunk is near a target size that grows with the array's.

    >>> guess_chunks((10000, 1000), 8)
    (1250, 125)
    >>> guess_chunks((100,), 4), guess_chunks((), 4)
    ((100,), ())
    """
    chunks = [max(1, int(s)) for s in shape]
    if not chunks or itemsize <= 0:
        return tuple(chunks)
    total = math.prod(chunks) * itemsize
    target = _CHUNK_STEP_BYTES * 2 ** math.log10(total / (1024 * 1024))
    target = min(max(target, _MIN_CHUNK_BYTES), _MAX_CHUNK_BYTES)
    axis = 0
    while True:
        size = math.prod(chunks) * itemsize
        near = size < target or abs(size - target) / target < 0.5
        if (near and size < _MAX_CHUNK_BYTES) or all(c == 1 for c in chunks):
            return tuple(chunks)
        chunks[axis % len(chunks)] = math.ceil(chunks[axis % len(chunks)] / 2)
        axis += 1


def normalize_chunks(chunks: Any, shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """A user's ``chunks`` argument as a tuple: an int applies to every axis, ``-1`` or
    ``None`` in a position means the whole axis, ``None``/``"auto"``/``True`` guesses,
    ``False`` is one chunk.

    >>> normalize_chunks((5, -1), (10, 20), 1)
    (5, 20)
    >>> normalize_chunks(4, (10, 20), 1)
    (4, 4)
    """
    if chunks is None or chunks is True or (isinstance(chunks, str) and chunks == "auto"):
        return guess_chunks(shape, itemsize)
    if chunks is False:  # zarr-python's "no chunking": one chunk
        return tuple(max(s, 1) for s in shape)
    if isinstance(chunks, (int, np.integer)):
        chunks = (int(chunks),) * len(shape)
    chunks = tuple(chunks)
    if len(chunks) != len(shape):
        raise MetadataError(f"chunks {chunks} do not match the {len(shape)} dimensions of {shape}")
    result = []
    for size, chunk in zip(shape, chunks, strict=True):
        if chunk is None or chunk == -1:
            chunk = max(size, 1)
        if not isinstance(chunk, (int, np.integer)) or isinstance(chunk, bool) or chunk < 1:
            raise MetadataError(f"chunk sizes must be positive integers, found {chunks}")
        result.append(int(chunk))
    return tuple(result)


def normalize_shape(shape: Any) -> tuple[int, ...]:
    """A user's shape as a tuple of non-negative ints.

    >>> normalize_shape(5)
    (5,)
    """
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    result = tuple(shape)
    if not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0
               for s in result):
        raise MetadataError(f"shape must be non-negative integers, found {shape!r}")
    return tuple(int(s) for s in result)


def _codec_json(codec: Codec) -> dict[str, Any]:
    config = dict(codec.get_config())
    # tensorstore refuses an explicit "checksum": false; it is numcodecs' default anyway.
    if config.get("id") == "zstd" and config.get("checksum") is False:
        del config["checksum"]
    return config


def _codec_list(value: Any) -> list[Codec]:
    if value is None:
        return []
    if is_one_codec(value):
        return [to_codec(value)]
    return [to_codec(v) for v in value]


def _text_of_number(fill_value: Any, dtype: np.dtype[Any]) -> Any:
    """A number given as the fill value of a fixed-length text or bytes type, as numpy (and
    zarr-python) convert it: ``0`` is ``"0"`` (the type's empty default is what leaving the
    fill value out gives).

    >>> _text_of_number(0, np.dtype("U3")), _text_of_number(2.5, np.dtype("S3"))
    ('0', b'2.5')
    """
    if (dtype.kind in "SU" and isinstance(fill_value, (int, float, np.integer, np.floating))
            and not isinstance(fill_value, (bool, np.bool_))):
        return np.array(fill_value).astype(dtype)[()].item()
    return fill_value


def dtype_argument(dtype: Any, *, zarr_format: int) -> Any:
    """A ``dtype`` argument in the forms :func:`~zarrkit.metadata.dtypes.normalize_dtype`
    takes: a :mod:`zarrkit.dtype` class (``zarrkit.dtype.Int8()``) or a Zarr data type's
    JSON (``"string"``, ``{"name": "numpy.datetime64", ...}``) as zarr-python reads it, with
    ``str`` and ``bytes`` for variable-length text and bytes; anything else as it is.

    >>> from zarrkit.dtype import Int16, VariableLengthBytes
    >>> dtype_argument(Int16(endianness="big"), zarr_format=2)
    dtype('>i2')
    >>> dtype_argument(VariableLengthBytes(), zarr_format=3), dtype_argument("string",
    ...     zarr_format=3)
    (<class 'bytes'>, <class 'str'>)
    """
    if isinstance(dtype, Mapping) or (isinstance(dtype, str) and not _numpy_reads(dtype)):
        try:
            dtype = parse_dtype(dtype, zarr_format=zarr_format)
        except (ValueError, TypeError):
            return dtype  # not a Zarr data type: zarrkit's own reading (ml_dtypes names...)
    if isinstance(dtype, VariableLengthUTF8):
        return str
    if isinstance(dtype, VariableLengthBytes):
        return bytes
    if isinstance(dtype, ZDType):
        return dtype.to_native_dtype()
    return dtype


def _numpy_reads(name: str) -> bool:
    """Whether numpy makes a dtype of some size of ``name`` ("int8", "<M8[ns]"): then it is
    read as numpy reads it (Zarr's names of these types mean the same), and only names numpy
    refuses or makes nothing of ("string", "bytes", "str") are Zarr data type names here."""
    try:
        return np.dtype(name).itemsize > 0
    except TypeError:
        return False


def array_metadata_v2(
    *,
    shape: Any,
    dtype: Any,
    chunks: Any = None,
    fill_value: Any = DEFAULT,
    order: str = "C",
    compressors: Any = "auto",
    compressor: Any = "auto",
    filters: Any = None,
    dimension_separator: str | None = None,
    chunk_key_encoding: Any = None,
) -> ArrayMetadataV2:
    """Validated v2 metadata from ``create_array``-style arguments.

    ``compressors`` (a list of at most one codec, as zarr-python 3 accepts) and
    ``compressor`` (one codec, as zarr-python 2) both work; ``"auto"`` means zstd.

    >>> array_metadata_v2(shape=5, dtype=str).filters
    ({'id': 'vlen-utf8'},)
    """
    dtype = dtype_argument(dtype, zarr_format=2)
    want_bytes = dtype is bytes
    numpy_dtype = normalize_dtype(dtype)
    shape_tuple = normalize_shape(shape)
    chunk_tuple = normalize_chunks(chunks, shape_tuple, numpy_dtype.itemsize or 8)
    if order not in ("C", "F"):
        raise MetadataError(f"order must be 'C' or 'F', found {order!r}")
    if compressors != "auto" and compressor != "auto":
        raise MetadataError("give either compressors or compressor, not both")
    chosen = compressors if compressors != "auto" else compressor
    if chosen == "auto":
        compressor_codecs = [to_codec(DEFAULT_COMPRESSOR_V2)]
    else:
        compressor_codecs = _codec_list(chosen)
    if len(compressor_codecs) > 1:
        raise MetadataError(
            f"Zarr v2 arrays take at most one compressor, found {len(compressor_codecs)}; "
            "put array-to-array codecs in filters"
        )
    filter_codecs = _codec_list(filters)
    if numpy_dtype.kind == "O" and not any(
        f.codec_id in FIRST_FILTERS_OF_OBJECTS for f in filter_codecs
    ):
        filter_codecs.insert(0, to_codec({"id": "vlen-bytes" if want_bytes else "vlen-utf8"}))
    separator = dimension_separator
    if chunk_key_encoding is not None:
        encoding = chunk_key_encoding
        if isinstance(encoding, dict):
            separator = (encoding.get("configuration") or {}).get("separator", separator)
            if encoding.get("name") not in ("v2", "default"):
                raise MetadataError(f"unknown chunk key encoding {encoding!r}")
    separator = separator or "."
    if separator not in (".", "/"):
        raise MetadataError(f"dimension_separator must be '.' or '/', found {separator!r}")
    if numpy_dtype.kind == "O" and fill_value is not None:
        is_bytes = want_bytes or any(f.codec_id == "vlen-bytes" for f in filter_codecs)
        fill = (normalize_fill_value(fill_value, numpy_dtype)
                if fill_value is not DEFAULT and fill_value not in (None, 0)
                else (b"" if is_bytes else ""))
    elif fill_value is None:
        # null, as zarr-python 3 writes an explicit None (objects too): xarray's zarr
        # backend makes any other fill of a format-2 array a _FillValue mask, and an
        # object array whose fill is "" would read every empty string as missing.
        fill = None
    elif fill_value is DEFAULT:
        fill = default_fill_value(numpy_dtype)
    else:
        fill = normalize_fill_value(_text_of_number(fill_value, numpy_dtype), numpy_dtype)
    metadata = ArrayMetadataV2(
        shape=shape_tuple,
        chunks=chunk_tuple,
        dtype=numpy_dtype,
        fill_value=fill,
        order=order,  # type: ignore[arg-type]
        compressor=_codec_json(compressor_codecs[0]) if compressor_codecs else None,
        filters=tuple(_codec_json(f) for f in filter_codecs) or None,
        dimension_separator=separator,  # type: ignore[arg-type]
    )
    # Building the pipeline validates every codec before anything is written.
    validated_codecs(metadata)
    metadata.to_json()
    return metadata


DEFAULT_COMPRESSORS_V3: tuple[dict[str, Any], ...] = (
    {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
)
def array_metadata_v3(
    *,
    shape: Any,
    dtype: Any,
    chunks: Any = None,
    shards: Any = None,
    fill_value: Any = DEFAULT,
    order: str = "C",
    compressors: Any = "auto",
    compressor: Any = "auto",
    filters: Any = None,
    serializer: Any = "auto",
    attributes: dict[str, Any] | None = None,
    dimension_names: Any = None,
    dimension_separator: str | None = None,
    chunk_key_encoding: Any = None,
    index_location: str = "end",
    codecs: Any = None,
) -> Any:
    """Validated v3 metadata from ``create_array``-style arguments.

    ``shards`` makes the array sharded: ``chunks`` is then the inner chunk shape and the
    shard shape is the array's chunk grid. ``codecs`` (zarr-python's ``create(codecs=...)``)
    is the whole codec chain, given instead of filters, serializer and compressors.

    >>> meta = array_metadata_v3(shape=(100,), dtype="u2", chunks=(10,), shards=(50,))
    >>> meta.chunks, meta.codecs[0]["name"]
    ((50,), 'sharding_indexed')
    """
    from zarrkit.metadata.chunk_grid import RectilinearChunkGrid, RegularChunkGrid
    from zarrkit.metadata.chunk_key_encoding import ChunkKeyEncoding
    from zarrkit.metadata.dtypes import bytes_codec_json
    from zarrkit.metadata.dtypes_v3 import data_type_v3_from_numpy
    from zarrkit.metadata.v3 import ArrayMetadataV3

    if order not in ("C", "F"):
        raise MetadataError(f"order must be 'C' or 'F', found {order!r}")
    dtype = dtype_argument(dtype, zarr_format=3)
    numpy_dtype = normalize_dtype(dtype)
    object_kind = "bytes" if dtype is bytes else ("string" if numpy_dtype.kind == "O" else None)
    data_type = data_type_v3_from_numpy(numpy_dtype, object_kind=object_kind)
    shape_tuple = normalize_shape(shape)
    rectilinear = _rectilinear_chunks(chunks, shape_tuple)
    if rectilinear is not None:
        if shards is not None:
            raise MetadataError(
                "rectilinear chunks with sharding are not supported (a shard's inner chunks "
                "form a regular grid): use rectilinear shards instead, chunks=(inner_size, "
                "...), shards=[[shard_sizes], ...]")
        inner = tuple(n if isinstance(n, int) else n[0] for n in rectilinear)
    else:
        inner = normalize_chunks(chunks, shape_tuple, numpy_dtype.itemsize or 8)
    if compressors != "auto" and compressor != "auto":
        raise MetadataError("give either compressors or compressor, not both")
    chosen = compressors if compressors != "auto" else compressor
    bytes_codecs = (list(DEFAULT_COMPRESSORS_V3) if chosen == "auto"
                    else codecs_json_v3(chosen, numpy_dtype))
    if serializer == "auto":
        if object_kind == "bytes":
            serializer_json: dict[str, Any] = {"name": "vlen-bytes"}
        elif object_kind == "string":
            serializer_json = {"name": "vlen-utf8"}
        else:
            serializer_json = bytes_codec_json(numpy_dtype)
    else:
        serializer_json = codec_json_v3(serializer, numpy_dtype)
    codec_chain = [*codecs_json_v3(filters, numpy_dtype), serializer_json, *bytes_codecs]
    if codecs is not None:
        codec_chain = codecs_json_v3(codecs, numpy_dtype)
    if shards is not None:
        rectilinear = _rectilinear_shards(shards, shape_tuple, inner)
        if rectilinear is not None:
            # A shard shape to validate the codecs with: all shards share the inner ones.
            shard_shape = tuple(n if isinstance(n, int) else n[0] for n in rectilinear)
        else:
            shard_shape = normalize_chunks(shards, shape_tuple, numpy_dtype.itemsize or 8)
        if any(s % c for s, c in zip(shard_shape, inner, strict=True)):
            raise MetadataError(
                f"shard shape {shard_shape} must be a multiple of the chunk shape {inner}"
            )
        codec_chain = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(inner),
            "codecs": codec_chain,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c"}],
            "index_location": index_location,
        }}]
        grid_shape = shard_shape
    else:
        grid_shape = inner
    if chunk_key_encoding is None:
        encoding = ChunkKeyEncoding("default", dimension_separator or "/")
    elif isinstance(chunk_key_encoding, ChunkKeyEncoding):
        encoding = chunk_key_encoding
    else:
        encoding = ChunkKeyEncoding.from_json(chunk_key_encoding)
    if numpy_dtype.kind == "O":
        fill = fill_value if fill_value is not DEFAULT and fill_value not in (None, 0) else (
            b"" if object_kind == "bytes" else "")
    elif fill_value is None or fill_value is DEFAULT:
        fill = default_fill_value(numpy_dtype)
    else:
        fill = normalize_fill_value(_text_of_number(fill_value, numpy_dtype), numpy_dtype)
    names = None if dimension_names is None else tuple(dimension_names)
    chunk_grid: Any = (RegularChunkGrid(tuple(grid_shape)) if rectilinear is None
                       else RectilinearChunkGrid(rectilinear))
    metadata = ArrayMetadataV3(
        shape=shape_tuple,
        data_type=data_type,
        chunk_grid=chunk_grid,
        chunk_key_encoding=encoding,
        fill_value=fill,
        codecs=tuple(codec_chain),
        attributes=dict(attributes or {}),
        dimension_names=names,
    )
    # Building the pipeline validates every codec (and fills in defaults such as blosc's
    # typesize) before anything is written; create_array_node's to_json() then checks the
    # rest of the document, still before the first write.
    codecs = tuple(c for c in validated_codecs(metadata, tuple(grid_shape)) if c is not None)
    if codecs != metadata.codecs:
        from dataclasses import replace

        metadata = replace(metadata, codecs=codecs)
    return metadata


# Validated codec chains by (chain, chunk spec): building a pipeline was a third of the
# cost of creating a small array, and a hierarchy usually repeats one chain. Only
# successes are kept (registering a codec cannot make a valid chain invalid).
_VALIDATED: BoundedCache[tuple[Any, ...], tuple[dict[str, Any] | None, ...]] = BoundedCache(256)


def validated_codecs(metadata: Any, chunk_shape: tuple[int, ...] | None = None
                     ) -> tuple[dict[str, Any] | None, ...]:
    """Check that the array's codecs build a pipeline for chunks of ``chunk_shape`` (by
    default the metadata's chunk shape) and return them as that pipeline writes them back
    (format 3: defaults such as blosc's typesize filled in; format 2: the filters then the
    compressor, unchanged). The pipeline is built once per distinct chain and chunk spec;
    an invalid chain raises the pipeline's error every time.

    >>> meta = array_metadata_v3(shape=(4,), dtype="u1", compressors=None)
    >>> validated_codecs(meta)
    ({'name': 'bytes'},)
    >>> validated_codecs(array_metadata_v2(shape=(4,), dtype="u1", compressor=None))
    (None,)
    """
    shape = tuple(metadata.chunks if chunk_shape is None else chunk_shape)
    key = pipeline_key(metadata, shape)
    cached = _VALIDATED.get(key) if key is not None else None
    if cached is not None:
        return cached
    pipeline = pipeline_for(metadata, shape)
    codecs: tuple[dict[str, Any] | None, ...]
    if metadata.zarr_format == 3:
        codecs = tuple(pipeline.to_json())  # type: ignore[attr-defined]
    else:
        codecs = (*(metadata.filters or ()), metadata.compressor)
    if key is not None:
        _VALIDATED.put(key, codecs)
    return codecs


def _rectilinear_chunks(chunks: Any, shape: tuple[int, ...]
                        ) -> tuple[int | tuple[int, ...], ...] | None:
    """Per-dimension chunk lengths when ``chunks`` gives a sequence of lengths for some
    dimension (a rectilinear grid, v3 only), else None.

    >>> _rectilinear_chunks([[2, 3], 4], (5, 8))
    ((2, 3), 4)
    """
    if not isinstance(chunks, (list, tuple)) or not any(
            isinstance(c, (list, tuple)) for c in chunks):
        return None
    if len(chunks) != len(shape):
        raise MetadataError(f"chunks {chunks} do not match the {len(shape)} dimensions")
    result: list[int | tuple[int, ...]] = []
    for size, entry in zip(shape, chunks, strict=True):
        lengths = tuple(entry) if isinstance(entry, (list, tuple)) else int(entry)
        values = lengths if isinstance(lengths, tuple) else (lengths,)
        if not values or any(not isinstance(n, int) or isinstance(n, bool) or n < 1
                             for n in values):
            raise MetadataError(f"chunk lengths must be positive integers, found {entry!r}")
        if isinstance(lengths, tuple) and sum(lengths) < size:
            raise MetadataError(f"chunk lengths {lengths} do not cover a dimension of {size}")
        result.append(lengths)
    return tuple(result)


def _rectilinear_shards(shards: Any, shape: tuple[int, ...], inner: tuple[int, ...]
                        ) -> tuple[int | tuple[int, ...], ...] | None:
    """Per-dimension shard lengths when ``shards`` gives a list of lengths for some
    dimension (a rectilinear shard grid over regular inner chunks, as zarr-python 3.4
    takes it), else None. A list must sum to its dimension exactly (any list will do
    for an empty dimension: the shards it grows into); every length, and a single
    length, must be a multiple of the inner chunk length; ``-1`` is one shard spanning
    the dimension, rounded up to a multiple of the inner chunk.

    >>> _rectilinear_shards([[60, 40, 20], -1], (120, 95), (10, 10))
    ((60, 40, 20), 100)
    >>> _rectilinear_shards([[60, 40], 50], (120, 100), (10, 10))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: shard lengths [60, 40] of dimension 0 sum to 100, not its ...
    """
    if not isinstance(shards, (list, tuple)) or not any(
            isinstance(s, (list, tuple)) for s in shards):
        return None
    if len(shards) != len(shape):
        raise MetadataError(f"shards {shards!r} do not match the {len(shape)} dimensions "
                            f"of {shape}")
    result: list[int | tuple[int, ...]] = []
    for axis, (entry, size, step) in enumerate(zip(shards, shape, inner, strict=True)):
        if isinstance(entry, (list, tuple)):
            if not entry or any(not isinstance(n, (int, np.integer)) or isinstance(n, bool)
                                or n < 1 for n in entry):
                raise MetadataError(f"shard lengths of dimension {axis} must be a non-empty "
                                    f"list of positive integers, found {entry!r}")
            lengths = tuple(int(n) for n in entry)
            if size > 0 and sum(lengths) != size:
                raise MetadataError(f"shard lengths {list(lengths)} of dimension {axis} sum "
                                    f"to {sum(lengths)}, not its length {size}")
            result.append(lengths)
            bad = [n for n in lengths if n % step]
        else:
            if not isinstance(entry, (int, np.integer)) or isinstance(entry, bool) or (
                    entry < 1 and entry != -1):
                raise MetadataError(f"the shard length of dimension {axis} must be a positive "
                                    f"integer or -1, found {entry!r}")
            length = step * max(1, -(-size // step)) if entry == -1 else int(entry)
            result.append(length)
            bad = [length] if length % step else []
        if bad:
            raise MetadataError(f"shard length {bad[0]} of dimension {axis} is not a multiple "
                                f"of the inner chunk length {step}")
    return tuple(result)


def array_metadata(*, zarr_format: int, attributes: dict[str, Any] | None = None,
                   **options: Any) -> Any:
    """Array metadata of either format from ``create_array``-style arguments.

    >>> array_metadata(zarr_format=2, shape=(3,), dtype="i1").zarr_format
    2
    """
    if zarr_format == 3:
        return array_metadata_v3(attributes=attributes, **options)
    if zarr_format != 2:
        raise MetadataError(f"zarr_format must be 2 or 3, found {zarr_format!r}")
    for name in ("shards", "serializer", "dimension_names", "index_location", "codecs"):
        if options.get(name) not in (None, "auto"):
            raise MetadataError(f"{name!r} needs zarr_format=3")
        options.pop(name, None)
    return array_metadata_v2(**options)
