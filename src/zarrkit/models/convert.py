"""Specs converted between Zarr v2 and Zarr v3: :func:`to_v3` and :func:`to_v2`.

A whole hierarchy is converted (groups recursively, arrays, attributes), so that the
result describes the same chunks: an array's v2 metadata and its v3 metadata read the
same chunk bytes as the same values. What the other format cannot represent raises
:class:`~zarrkit.errors.SpecError`, one line per problem in ``errors``, each naming the
node path (``/`` is the root) and the thing that cannot be represented; nothing is
dropped silently.

========================================  ============================================
Zarr v2                                   Zarr v3
========================================  ============================================
``order: "F"`` (two or more dimensions)   a first ``transpose`` reversing the axes
``filters`` (array -> array codecs)       ``numcodecs.<id>`` array -> array codecs
dtype byte order                          ``bytes`` codec ``endian``
``|O`` with one ``vlen-utf8`` filter      ``string`` with the ``vlen-utf8`` codec
``|O`` with one ``vlen-bytes`` filter     ``variable_length_bytes``, ``vlen-bytes``
``compressor``                            the one bytes -> bytes codec
``dimension_separator``                   chunk key encoding separator
``_ARRAY_DIMENSIONS`` attribute           ``dimension_names``
``fill_value: null``                      the data type's default fill value
========================================  ============================================

The v2 -> v3 mapping is :func:`zarrkit.convert.v3_document_for_v2`, which
:func:`zarrkit.migrate_metadata` uses too; v3 -> v2 is its reverse.

Refused by :func:`to_v3`: structured dtypes, object codecs other than one vlen-utf8 or
vlen-bytes filter, filters that are no array -> array codec in v3 (bytes filters such as
``shuffle``), compressors that serialise arrays themselves, member names v3 reserves
(``__`` prefix). Refused by :func:`to_v2`: sharding, chunk grids other than ``regular``,
storage transformers, chunk key encodings other than ``v2``/``default``, data types with
no v2 dtype (``bfloat16``, ``int4``, ``float8_*``, scaled datetimes, structs), a
transpose that is neither the identity nor a full reversal (or that follows a filter),
array -> array codecs with no numcodecs filter (``scale_offset``), array -> bytes codecs
other than ``bytes``/``vlen-utf8``/``vlen-bytes``, more than one bytes -> bytes codec (v2
has one compressor), codecs numcodecs does not know, and ``dimension_names`` with unnamed
dimensions or that contradict an ``_ARRAY_DIMENSIONS`` attribute.

Round trips, compared with ``like``:

* ``to_v2(to_v3(s)).like(s)`` for every v2 spec that :func:`to_v3` accepts, except where
  v3 has no way to say it: a null ``fill_value`` comes back as the data type's default,
  the ``order`` of an array with fewer than two dimensions (it changes no chunk byte)
  comes back ``"C"``, and blosc's automatic shuffle (``-1``) comes back as ``1``.
* ``to_v3(to_v2(s), chunk_key_encoding=...).like(s)`` for every v3 spec that
  :func:`to_v2` accepts, given the spec's own chunk key encoding name: v2 has one chunk
  key form, so which v3 encoding it came from is not recorded (``"v2"``, the default,
  keeps the v2 chunk keys, so the result describes the chunks already stored;
  ``"default"`` gives the v3 keys ``c/...``). Otherwise compared as is, except: synonymous
  data type spellings come back in zarr-python's (``r16`` as ``raw_bytes``, its fill value
  then in base64; ``bytes`` as ``variable_length_bytes``), identity transposes are left
  out, ``numcodecs.*``
  configurations come back completed with numcodecs' defaults, and an ``_ARRAY_DIMENSIONS``
  attribute beside equal ``dimension_names`` is folded into them.

>>> import numpy as np
>>> from zarrkit.models import v2
>>> spec = v2.GroupSpec(attributes={"title": "t"}, members={
...     "x": v2.ArraySpec.from_array(np.zeros((4, 4), dtype=">f4"), chunks=(2, 2),
...                                  order="F", attributes={"_ARRAY_DIMENSIONS": ["y", "x"]})})
>>> x = to_v3(spec).members["x"]
>>> [c.name for c in x.codecs], x.dimension_names, x.attributes
(['transpose', 'bytes', 'zstd'], ('y', 'x'), {})
>>> to_v2(to_v3(spec)).like(spec)
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from zarrkit.errors import InvalidKeyError, SpecError, UnsupportedDataTypeError, ZarrkitError
from zarrkit.models import v2, v3
from zarrkit.paths import check_node_name

if TYPE_CHECKING:
    from zarrkit.metadata.v3 import ArrayMetadataV3

ChunkKeyEncodingName = Literal["v2", "default"]

__all__ = ["to_v2", "to_v3"]


# --- v2 -> v3 -------------------------------------------------------------------------------

@overload
def to_v3(spec: v2.ArraySpec[Any], *,
          chunk_key_encoding: ChunkKeyEncodingName = "v2") -> v3.ArraySpec[Any]: ...


@overload
def to_v3(spec: v2.GroupSpec[Any, Any], *,
          chunk_key_encoding: ChunkKeyEncodingName = "v2") -> v3.GroupSpec[Any, Any]: ...


def to_v3(spec: v2.ArraySpec[Any] | v2.GroupSpec[Any, Any], *,
          chunk_key_encoding: ChunkKeyEncodingName = "v2"
          ) -> v3.ArraySpec[Any] | v3.GroupSpec[Any, Any]:
    """The Zarr v3 spec of a Zarr v2 array or group spec (members converted too), whose
    arrays read the same chunks; attributes are kept, ``_ARRAY_DIMENSIONS`` becoming
    ``dimension_names``. ``chunk_key_encoding="v2"`` keeps the v2 chunk keys (the chunks
    already stored stay readable, as :func:`zarrkit.migrate_metadata` does); ``"default"``
    gives v3 keys with the same separator. What v3 cannot represent raises SpecError naming
    each node path and the reason (see the module documentation).

    >>> import numpy as np
    >>> from zarrkit.models import v2
    >>> spec = v2.ArraySpec.from_array(np.zeros(4, dtype="<i2"), chunks=(2,),
    ...                                compressor={"id": "gzip", "level": 1})
    >>> converted = to_v3(spec)
    >>> converted.data_type, [c.name for c in converted.codecs]
    ('int16', ['bytes', 'gzip'])
    >>> converted.chunk_key_encoding.to_json()
    {'name': 'v2', 'configuration': {'separator': '.'}}
    >>> to_v3(v2.GroupSpec(members={"r": v2.ArraySpec.from_array(
    ...     np.zeros(2, dtype=[("a", "<i4")]))}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.SpecError: cannot convert to Zarr v3: /r: structured dtype ...
    """
    if not isinstance(spec, (v2.ArraySpec, v2.GroupSpec)):
        raise TypeError(f"to_v3 converts zarrkit.models.v2 specs, found {type(spec).__name__} "
                        f"of {type(spec).__module__}")
    if chunk_key_encoding not in ("v2", "default"):
        raise ValueError(f"chunk_key_encoding must be 'v2' or 'default', found "
                         f"{chunk_key_encoding!r}")
    problems: list[str] = []
    result = _node_to_v3(spec, "", problems, chunk_key_encoding)
    _raise_problems(problems, 3)
    return result


def _node_to_v3(node: Any, path: str, problems: list[str], chunk_key_encoding: str) -> Any:
    if isinstance(node, v2.GroupSpec):
        members = _members(node, path, problems, 3,
                           lambda member, child: _node_to_v3(member, child, problems,
                                                             chunk_key_encoding))
        if members is None:
            return None
        return v3.GroupSpec.model_validate({"attributes": node.normalized()["attributes"],
                                            "members": members})
    return _array_to_v3(node, path, problems, chunk_key_encoding)


def _array_to_v3(spec: v2.ArraySpec[Any], path: str, problems: list[str],
                 chunk_key_encoding: str) -> v3.ArraySpec[Any] | None:
    from zarrkit.convert import v3_document_for_v2

    where = path or "/"
    try:
        document = v3_document_for_v2(spec.to_metadata(), spec.normalized()["attributes"],
                                      where=where, chunk_key_encoding=chunk_key_encoding,
                                      keep_array_dimensions=False)
    except ZarrkitError as e:
        problems.append(_with_path(where, e))
        return None
    return _validated(v3.ArraySpec, document, where, problems)


# --- v3 -> v2 -------------------------------------------------------------------------------

@overload
def to_v2(spec: v3.ArraySpec[Any]) -> v2.ArraySpec[Any]: ...


@overload
def to_v2(spec: v3.GroupSpec[Any, Any]) -> v2.GroupSpec[Any, Any]: ...


def to_v2(spec: v3.ArraySpec[Any] | v3.GroupSpec[Any, Any]
          ) -> v2.ArraySpec[Any] | v2.GroupSpec[Any, Any]:
    """The Zarr v2 spec of a Zarr v3 array or group spec (members converted too), whose
    arrays read the same chunk bytes (under v2 chunk keys: the ``c/`` prefix of the
    ``default`` encoding goes, its separator stays); attributes are kept,
    ``dimension_names`` becoming the ``_ARRAY_DIMENSIONS`` attribute. What v2 cannot
    represent (sharding, irregular chunk grids, codec chains other than filters and one
    compressor, ...) raises SpecError naming each node path and the reason.

    >>> import numpy as np
    >>> from zarrkit.models import v3
    >>> spec = v3.ArraySpec.from_array(np.zeros((4, 6), dtype="u2"), chunks=(2, 3),
    ...                                dimension_names=["y", "x"])
    >>> converted = to_v2(spec)
    >>> converted.dtype, converted.chunks, converted.compressor["id"], converted.attributes
    ('<u2', (2, 3), 'zstd', {'_ARRAY_DIMENSIONS': ['y', 'x']})
    >>> sharded = v3.ArraySpec.from_array(np.zeros(8, dtype="u1"), chunks=(2,), codecs=[
    ...     {"name": "sharding_indexed", "configuration": {"chunk_shape": [1],
    ...      "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes",
    ...      "configuration": {"endian": "little"}}]}}])
    >>> to_v2(v3.GroupSpec(members={"s": sharded}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.SpecError: cannot convert to Zarr v2: /s: sharding ...
    """
    if not isinstance(spec, (v3.ArraySpec, v3.GroupSpec)):
        raise TypeError(f"to_v2 converts zarrkit.models.v3 specs, found {type(spec).__name__} "
                        f"of {type(spec).__module__}")
    problems: list[str] = []
    result = _node_to_v2(spec, "", problems)
    _raise_problems(problems, 2)
    return result


def _node_to_v2(node: Any, path: str, problems: list[str]) -> Any:
    if isinstance(node, v3.GroupSpec):
        members = _members(node, path, problems, 2,
                           lambda member, child: _node_to_v2(member, child, problems))
        if members is None:
            return None
        return v2.GroupSpec.model_validate({"attributes": node.normalized()["attributes"],
                                            "members": members})
    where = path or "/"
    try:
        metadata = node.to_metadata()
    except ZarrkitError as e:  # a spec made without validation (model_construct)
        problems.append(_with_path(where, e))
        return None
    document, reasons = v2_document_for_v3(metadata)
    if reasons:
        problems.extend(f"{where}: {reason}" for reason in reasons)
        return None
    return _validated(v2.ArraySpec, document, where, problems)


def v2_document_for_v3(metadata: ArrayMetadataV3) -> tuple[dict[str, Any], list[str]]:
    """The Zarr v2 document (``.zarray`` fields and ``attributes``) of parsed v3 array
    metadata whose chunks v2 reads as they are, and the reasons it cannot be (empty when
    it can; the document is then complete). The reverse of
    :func:`zarrkit.convert.v3_document_for_v2`.

    >>> from zarrkit.hierarchy.creation import array_metadata_v3
    >>> document, reasons = v2_document_for_v3(array_metadata_v3(shape=(4,), dtype="i4",
    ...     chunks=(2,), compressors=[{"name": "gzip", "configuration": {"level": 1}},
    ...                               {"name": "crc32c"}]))
    >>> document["dtype"], reasons
    ('<i4', ["2 bytes -> bytes codecs ('gzip', 'crc32c'): Zarr v2 has one compressor"])
    """
    from zarrkit.codecs.v3.pipeline import CodecPipelineV3
    from zarrkit.codecs.v3.spec import ChunkSpec
    from zarrkit.metadata.chunk_grid import RectilinearChunkGrid, RegularChunkGrid

    reasons: list[str] = []
    shape = metadata.shape
    grid = metadata.chunk_grid
    if isinstance(grid, RegularChunkGrid):
        chunks = grid.chunk_shape
    else:
        reasons.append(f"chunk grid {grid.name!r}: Zarr v2 chunks are regular (one chunk "
                       "shape)")
        chunks = tuple(max(lengths, default=1) for lengths in grid.chunk_lengths(shape)) \
            if isinstance(grid, RectilinearChunkGrid) else (1,) * len(shape)
    encoding = metadata.chunk_key_encoding
    if encoding.name not in ("v2", "default"):
        reasons.append(f"chunk key encoding {encoding.name!r}: Zarr v2 chunk keys are the "
                       "'v2' (or 'default') encoding's")
    if metadata.storage_transformers:
        names = [t.get("name") for t in metadata.storage_transformers]
        reasons.append(f"storage transformers {names}: Zarr v2 has none")
    if metadata.extra:
        reasons.append(f"extension fields {sorted(metadata.extra)}: Zarr v2 has none")
    document: dict[str, Any] = {
        "zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "order": "C",
        "filters": None, "compressor": None, "dimension_separator": encoding.sep,
        "attributes": dict(metadata.attributes),
    }
    try:
        pipeline = CodecPipelineV3.from_json(
            metadata.codecs, ChunkSpec(chunks, metadata.dtype, metadata.fill_value))
    except ZarrkitError as e:
        reasons.append(f"codecs: {e}")
        return document, reasons
    endian = _codecs_to_v2(pipeline, len(shape), document, reasons)
    _data_type_to_v2(metadata, endian, document, reasons)
    _dimension_names_to_v2(metadata.dimension_names, document["attributes"], reasons)
    return document, reasons


def _codecs_to_v2(pipeline: Any, ndim: int, document: dict[str, Any], reasons: list[str]
                  ) -> str | None:
    """Fill ``order``, ``filters`` and ``compressor``; return the ``bytes`` codec's endian."""
    from zarrkit.codecs.v3.array_codecs import (
        BytesCodec,
        TransposeCodec,
        VLenBytesCodec,
        VLenUTF8Codec,
    )
    from zarrkit.codecs.v3.numcodecs_codecs import NumcodecsArrayArrayCodec

    filters: list[dict[str, Any]] = []
    identity, reversal = tuple(range(ndim)), tuple(reversed(range(ndim)))
    for codec in pipeline.array_array:
        name = codec.to_json()["name"]
        if isinstance(codec, TransposeCodec):
            if codec.order == identity:
                continue
            if codec.order != reversal:
                reasons.append(f"transpose with order {list(codec.order)}: Zarr v2 orders "
                               "chunks C or F only (no partial transpose)")
            elif filters or document["order"] == "F":
                reasons.append(f"transpose after {[f['id'] for f in filters] or 'transpose'}: "
                               "Zarr v2 applies its F order before its filters")
            else:
                document["order"] = "F"
        elif isinstance(codec, NumcodecsArrayArrayCodec):
            config = _numcodecs_config(codec, reasons)
            if config is not None:
                filters.append(config)
        else:
            reasons.append(f"codec {name!r} (array -> array) has no Zarr v2 filter")
    serializer = pipeline.array_bytes
    endian = None
    if isinstance(serializer, BytesCodec):
        endian = serializer.endian
    elif isinstance(serializer, (VLenUTF8Codec, VLenBytesCodec)):
        # Only a transpose can precede it (numcodecs filters take no strings).
        filters.insert(0, {"id": serializer.name})
    elif pipeline.sharding is not None:
        reasons.append("sharding (codec 'sharding_indexed'): Zarr v2 has no shards")
    else:
        reasons.append(f"codec {serializer.to_json()['name']!r} (array -> bytes) has no "
                       "Zarr v2 form")
    compressors = pipeline.bytes_bytes
    if len(compressors) > 1:
        names = tuple(c.to_json()["name"] for c in compressors)
        reasons.append(f"{len(compressors)} bytes -> bytes codecs {names}: Zarr v2 has one "
                       "compressor")
    elif compressors:
        document["compressor"] = _numcodecs_config(compressors[0], reasons)
    document["filters"] = filters or None
    return endian


def _numcodecs_config(codec: Any, reasons: list[str]) -> dict[str, Any] | None:
    """The numcodecs (v2) configuration of a v3 codec, or None with the reason."""
    from zarrkit.codecs.registry import to_codec

    entry = codec.to_json()
    try:
        return dict(to_codec(entry).get_config())
    except ZarrkitError:
        reasons.append(f"codec {entry['name']!r} has no numcodecs (Zarr v2) equivalent")
        return None


def _data_type_to_v2(metadata: Any, endian: str | None, document: dict[str, Any],
                     reasons: list[str]) -> None:
    """Fill ``dtype`` and ``fill_value`` (the dtype in the ``bytes`` codec's byte order)."""
    from zarrkit.metadata.dtypes import dtype_to_json_v2, has_endianness, parse_dtype_v2
    from zarrkit.metadata.fill_value import encode_fill_value

    data_type = metadata.data_type
    if data_type.kind == "struct":
        reasons.append(f"data type {data_type.name!r}: structured data types are not "
                       "converted between Zarr formats (to_v3 refuses v2 structured dtypes)")
        return
    dtype: np.dtype[Any] = metadata.dtype
    if data_type.kind not in ("string", "bytes") and has_endianness(dtype) and endian:
        dtype = dtype.newbyteorder("<" if endian == "little" else ">")
    try:
        typestr = dtype_to_json_v2(dtype)
        same = parse_dtype_v2(typestr) == dtype
    except UnsupportedDataTypeError:
        same = False
    if not same:
        reasons.append(f"data type {data_type.name!r} has no Zarr v2 dtype")
        return
    document["dtype"] = typestr
    document["fill_value"] = encode_fill_value(metadata.fill_value, dtype)


def _dimension_names_to_v2(names: tuple[str | None, ...] | None, attributes: dict[str, Any],
                           reasons: list[str]) -> None:
    if names is None or all(name is None for name in names):
        return
    if any(name is None for name in names):
        reasons.append(f"dimension_names {list(names)}: their Zarr v2 form, the "
                       "_ARRAY_DIMENSIONS attribute, names every dimension")
    elif attributes.get("_ARRAY_DIMENSIONS", list(names)) != list(names):
        reasons.append(f"dimension_names {list(names)} contradict the _ARRAY_DIMENSIONS "
                       f"attribute {attributes['_ARRAY_DIMENSIONS']!r}")
    else:
        attributes["_ARRAY_DIMENSIONS"] = list(names)


# --- shared ---------------------------------------------------------------------------------

def _members(group: Any, path: str, problems: list[str], zarr_format: int,
             convert: Any) -> dict[str, Any] | None:
    """The converted members by name, or None when any could not be (problems recorded;
    every member is still visited, so that all problems are reported at once)."""
    members: dict[str, Any] = {}
    failed = False
    for name, member in group.members.items():
        child = f"{path}/{name}"
        try:
            check_node_name(name, zarr_format)
        except InvalidKeyError as e:
            problems.append(f"{child}: {e}")
            failed = True
            continue
        converted = convert(member, child)
        if converted is None:
            failed = True
        else:
            members[name] = converted
    return None if failed else members


def _validated(cls: Any, document: Mapping[str, Any], where: str, problems: list[str]
               ) -> Any:
    """``cls`` validated from ``document``, or None with the problems at ``where``."""
    try:
        return cls.model_validate(document)
    except SpecError as e:
        problems.extend(f"{where}: {line.removeprefix('/: ')}" for line in e.errors)
        return None


def _with_path(where: str, error: Exception) -> str:
    message = str(error)
    return message if message.startswith(f"{where}: ") else f"{where}: {message}"


def _raise_problems(problems: list[str], zarr_format: int) -> None:
    if not problems:
        return
    summary = problems[0] if len(problems) == 1 else (
        f"{len(problems)} problems: " + "; ".join(problems))
    raise SpecError(f"cannot convert to Zarr v{zarr_format}: {summary}", problems)
