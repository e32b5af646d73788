"""Copying hierarchies between stores and formats, and migrating metadata in place.

>>> import numpy as np, zarrkit as zk
>>> source = zk.group({}, zarr_format=2)
>>> _ = source.create_array("x", shape=(4,), chunks=(2,), dtype="i2", data=np.arange(4))
>>> copy = zk.convert(source.store, {}, zarr_format=3)
>>> copy.zarr_format, copy["x"][...].tolist()
(3, [0, 1, 2, 3])
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarrkit.check import INCOMPLETE_MARKER
from zarrkit.errors import (
    ContainsArrayError,
    ContainsGroupError,
    ContainsNodeError,
    MetadataError,
    ZarrkitError,
)
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.group import Group
from zarrkit.hierarchy.nodes import METADATA_DOCUMENT_NAMES, ZARR_JSON, find_node, read_values
from zarrkit.metadata.jsonio import dump_json
from zarrkit.metadata.v2 import ZARRAY, ZATTRS, ZGROUP, ZMETADATA, ArrayMetadataV2
from zarrkit.paths import ancestors, join_path, key_prefix, normalize_path
from zarrkit.progress import ProgressCallback, progress_callback
from zarrkit.storage.base import Buffer, Store
from zarrkit.storage.resolve import make_store
from zarrkit.storage.wrapper import WrapperStore

# Copy at most about this many bytes at a time, so memory stays bounded on large arrays.
_COPY_BLOCK_BYTES = 64 << 20


def _copy_regions(shape: tuple[int, ...], chunks: tuple[int, ...], itemsize: int
                  ) -> Iterator[tuple[slice, ...]]:
    """Chunk-aligned regions of the destination covering the array, each about
    ``_COPY_BLOCK_BYTES``: whole chunk rows along the first axis."""
    if not shape or 0 in shape:
        yield tuple(slice(0, s) for s in shape)
        return
    row_bytes = math.prod(shape[1:]) * max(itemsize, 1) * chunks[0]
    rows_per_block = max(1, _COPY_BLOCK_BYTES // max(row_bytes, 1)) * chunks[0]
    for start in range(0, shape[0], rows_per_block):
        yield (slice(start, min(start + rows_per_block, shape[0])),) + tuple(
            slice(0, s) for s in shape[1:])


def _walk(group: Group) -> Iterator[tuple[str, Array | Group]]:
    yield "", group
    yield from group.members(max_depth=None)


# v2 object codecs whose elements zarrkit writes back as they are (to a v2 destination).
_KEPT_OBJECT_CODECS = ("json2", "msgpack2")


@dataclass
class _Plan:
    """How one node of the source is written: ``kind`` ``"group"``, ``"array"`` (element
    by element), ``"references"`` (through :mod:`zarrkit.references`), ``"scalar"`` (an
    hdmf-zarr scalar dataset whose shape changes with the convention), with the
    ``create_array`` keyword arguments (``options``) and, for arrays, a conversion of each
    block of values read (``transform``). ``documents``: the node's metadata values as its
    creation writes them (``zarr.json``, ``.zarray``, ``.zgroup``, ``.zattrs``; None where
    absent), to recognise the node in a destination that a previous run wrote."""

    relative: str
    node: Array | Group
    kind: str
    options: dict[str, Any] = field(default_factory=dict)
    transform: Callable[[Any], Any] | None = None
    documents: list[bytes | None] = field(default_factory=list)
    attributes: dict[str, Any] = field(default_factory=dict)  # a group's, as written
    metadata: Any = None  # an array's, as its creation writes it


def convert(
    source: Any,
    dest: Any,
    *,
    zarr_format: int = 3,
    path: str = "",
    compressors: Any = "auto",
    chunks: Any = None,
    shards: Any = None,
    overwrite: bool = False,
    progress: ProgressCallback | bool | None = None,
) -> Array | Group:
    """Copy the hierarchy (or array) at ``path`` of ``source`` into ``dest`` in
    ``zarr_format``, attributes included, re-encoding every chunk.

    ``compressors``, ``chunks`` and ``shards`` (format 3) apply to every array; by default
    chunks are kept and compressors are the format's default. Filters are kept. Progress
    (in bytes of array data) goes to ``progress(done, total)``; ``True`` shows a
    :class:`zarrkit.progress.ProgressBar` on stderr, ``None`` shows it on runs longer than
    two seconds, ``False`` is silent.

    Resumable: a node that ``dest`` already holds with the metadata this conversion
    writes (a previous run of it, interrupted or not) is kept, and each of its chunks is
    written only if its encoded bytes differ from what is stored, so that running a
    finished conversion again writes nothing. A node of ``dest`` that differs raises
    ContainsNodeError, unless ``overwrite`` (which replaces it). Each array's metadata is
    written after its chunks, so an interrupted conversion leaves no array that opens
    with chunks missing; until the conversion is done, ``dest`` holds the key
    ``.zarrkit-incomplete`` (at ``path``), which :func:`zarrkit.check.check` reports.

    hdmf-zarr files (NWB) are written in the hdmf-zarr convention of the destination's
    format (:mod:`zarrkit.hdmf.convention`: 0.13's in v2, 0.14's in v3), so that
    hdmf-zarr 0.14 reads a v2 file converted to v3 (and 0.13 the way back): links,
    reference attributes and dtype attributes are translated, scalar datasets (the
    cached specifications' sources included) change shape, and their text is stored as
    ``str`` in v3.

    Object arrays (Zarr v2 object dtype, v3 ``string`` and ``variable_length_bytes``):

    * hdmf-zarr reference datasets (``zarr_dtype`` ``"object"``, ``_DTYPE``
      ``"object_reference"``) and compound datasets with reference or text fields
      (``zarr_dtype`` a list of fields, ``_REFERENCE_FIELDS``) are read and written by
      :mod:`zarrkit.references` in the destination's form (v2: ``json2`` object arrays;
      v3: paths in a string array, or a struct), chunks kept, so that every reference
      still resolves;
    * text (vlen-utf8, vlen-bytes; or another object codec whose elements are all ``str``,
      or all ``bytes``) becomes a string (bytes) array;
    * to a v2 destination, ``json2`` and ``msgpack2`` arrays of other objects keep their
      codec;
    * anything else (lists, dicts, numbers... of an object codec to v3, pickled objects,
      structured dtypes with object fields that are not hdmf-zarr compounds) raises
      MetadataError naming the array.

    Every array is checked (object arrays read) before anything is written, so a refused
    hierarchy leaves ``dest`` untouched.

    >>> import zarrkit as zk
    >>> from zarrkit.references import Reference, create_reference_dataset, read_references
    >>> v2 = zk.group({}, zarr_format=2)
    >>> _ = create_reference_dataset(v2, "refs", [Reference("/refs")])
    >>> v3 = zk.convert(v2.store, {}, zarr_format=3, progress=False)
    >>> read_references(v3["refs"])[0].resolve(v3["refs"]).name
    '/refs'
    """
    if zarr_format not in (2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, found {zarr_format!r}")
    if shards is not None and zarr_format != 3:
        raise ValueError("shards need zarr_format 3 (Zarr v2 has no sharding)")
    source_store = make_store(source, mode="r")
    node_path = normalize_path(path)
    found = find_node(source_store, node_path)
    if found is None:
        raise MetadataError(f"nothing to convert at path {node_path!r}")
    from zarrkit.api import open_array, open_group

    root: Array | Group
    if found.kind == "array":
        root = open_array(source_store, mode="r", path=node_path)
        nodes: list[tuple[str, Array | Group]] = [("", root)]
    else:
        root = open_group(source_store, mode="r", path=node_path, consolidated=False)
        nodes = list(_walk(root))
    # Plan (and check) every node before the destination is opened: a refusal leaves it
    # as it was (a zip destination opened for writing would already be truncated).
    specifications = _specification_prefix(source_store)
    plans = [_plan(relative, node, join_path(node_path, relative), zarr_format=zarr_format,
                   compressors=compressors, chunks=chunks, shards=shards,
                   specification=isinstance(node, Array) and specifications is not None
                   and node.name.startswith(specifications))
             for relative, node in nodes]
    dest_store = make_store(dest, mode="w" if overwrite else "a")
    report, finish = progress_callback(progress, "zarrkit convert")
    total = sum(n.nbytes for _, n in nodes if isinstance(n, Array))
    done = 0
    result: Array | Group | None = None
    # Until the last node is written the destination says so (``zarrkit check`` reports
    # it): a group does not show which of its members are still to come.
    # It is written before the first change, so a finished conversion run again writes
    # nothing. (A store that cannot delete, a ZIP archive, could never remove it.)
    marker = join_path(node_path, INCOMPLETE_MARKER) if dest_store.supports_deletes else None
    marked = False

    def mark() -> None:
        nonlocal marked
        if marker is not None and not marked:
            dest_store.set(marker, dump_json({"incomplete": "zarrkit convert",
                                              "source": repr(source_store)}))
            marked = True

    try:
        for plan in plans:
            target = join_path(node_path, plan.relative)
            node = plan.node
            kept = _kept_node(dest_store, target, plan, overwrite=overwrite)
            if isinstance(node, Group):
                if not kept:
                    from zarrkit.hierarchy.nodes import create_group_node

                    mark()
                    create_group_node(dest_store, target, plan.attributes,
                                      zarr_format=zarr_format, overwrite=overwrite)
                if result is None:
                    result = open_group(dest_store, mode="r+", path=target)
                continue
            if kept:
                new = open_array(UnchangedSkipped(dest_store, before_write=mark),
                                 mode="r+", path=target)
            else:
                mark()
                # Chunks first, metadata documents last (as ``cp`` copies): an interrupted
                # conversion leaves no array whose chunks are not all written.
                from zarrkit.hierarchy.nodes import create_array_node, delete_node, node_kind

                if node_kind(dest_store, target) is not None:  # overwrite: replaced
                    delete_node(dest_store, target)
                attributes = plan.options.get("attributes") or {}
                new = Array(dest_store, target, plan.metadata, attributes=attributes)
            if plan.kind == "scalar":  # one element, from shape (1,) to () or back
                value = np.asarray(node[...]).reshape(-1)[:1]
                value = value if plan.transform is None else plan.transform(value)
                new[...] = value.reshape(new.shape)
            else:
                for region in _copy_regions(node.shape, new.shards or new.chunks,
                                            node.dtype.itemsize):
                    _copy_block(plan, node, new, region)
                    done += math.prod(r.stop - r.start for r in region) * node.dtype.itemsize
                    report(done, total)
            if not kept:
                create_array_node(dest_store, target, plan.metadata, attributes)
            if result is None:
                result = open_array(dest_store, mode="r+", path=target)
        if marker is not None and (marked or dest_store.get(marker) is not None):
            dest_store.delete(marker)
        report(total, total)
    finally:
        finish()
    assert result is not None
    return result


def _kept_node(store: Store, path: str, plan: _Plan, *, overwrite: bool) -> bool:
    """Whether the node at ``path`` of ``store`` is already the one ``plan`` creates (its
    metadata values equal), so that it is kept and only its differing chunks written;
    ContainsNodeError if another node is there, unless ``overwrite``."""
    stored = store.get_many(_node_document_keys(path))
    if stored == plan.documents:
        return True
    if overwrite or all(value is None for value in stored[:3]):
        return False
    from zarrkit.hierarchy.nodes import node_kind

    what = node_kind(store, path) or "node"
    error = ContainsArrayError if what == "array" else ContainsGroupError
    raise error(f"the destination already holds a different {what} at path {path or '/'!r} "
                "(not a previous run of this conversion); overwrite (--overwrite) replaces it")


def _node_document_keys(path: str) -> list[str]:
    return [join_path(path, name) for name in (ZARR_JSON, ZARRAY, ZGROUP, ZATTRS)]


class UnchangedSkipped(WrapperStore[Store]):
    """A view of ``store`` whose writes skip values equal to what it holds already (and
    deletes of missing keys): resuming a copy then writes only what differs. ``written``
    and ``skipped`` count the writes and deletes done and avoided; ``before_write`` is
    called before each one done (``convert`` marks its destination incomplete then).

    >>> from zarrkit.storage import MemoryStore
    >>> view = UnchangedSkipped(MemoryStore({"a": b"1"}))
    >>> view.set("a", b"1"); view.set("b", b"2"); view.delete("c")
    >>> view.written, view.skipped, sorted(view.list())
    (1, 2, ['a', 'b'])
    """

    def __init__(self, store: Store, *, before_write: Callable[[], None] | None = None
                 ) -> None:
        super().__init__(store)
        self.written = 0
        self.skipped = 0
        self._count = threading.Lock()
        self._before_write = before_write  # called before each write or delete done

    def _counted(self, changed: bool) -> None:
        with self._count:
            if changed:
                self.written += 1
            else:
                self.skipped += 1

    def set(self, key: str, value: Buffer) -> None:
        self._check_write(key, value)
        changed = self._store.get(key) != bytes(value)
        if changed:
            if self._before_write is not None:
                self._before_write()
            self._store.set(key, value)
        self._counted(changed)

    def set_many(self, items: Mapping[str, Buffer] | Iterable[tuple[str, Buffer]]) -> None:
        for key, value in (items.items() if isinstance(items, Mapping) else items):
            self.set(key, value)

    def delete(self, key: str) -> None:
        changed = self._store.get(key) is not None
        if changed:
            if self._before_write is not None:
                self._before_write()
            self._store.delete(key)
        self._counted(changed)

    def __repr__(self) -> str:
        return f"UnchangedSkipped({self._store!r})"


def _copy_block(plan: _Plan, node: Array, new: Array, region: tuple[slice, ...]) -> None:
    if plan.kind == "references":
        from zarrkit.references import read_references, write_references

        if math.prod(r.stop - r.start for r in region):
            write_references(new, region, read_references(node, region))
        return
    values = node[region]
    new[region] = values if plan.transform is None else plan.transform(values)


def _specification_prefix(store: Store) -> str | None:
    """Where the source, if it is an hdmf-zarr file, caches its specifications (see
    :func:`zarrkit.hdmf.convention.specification_prefix`): read from its root group, as
    a conversion of part of the file copies those datasets too."""
    from zarrkit.api import open_group
    from zarrkit.hdmf.convention import specification_prefix

    found = find_node(store, "")
    if found is None or found.kind != "group":
        return None
    return specification_prefix(open_group(store, mode="r", consolidated=False))


def _plan(relative: str, node: Array | Group, target: str, *, zarr_format: int,
          compressors: Any, chunks: Any, shards: Any, specification: bool = False) -> _Plan:
    """How ``node`` is written, checked now: its metadata is created in a scratch memory
    store, and an object array's values are read (and, for references, encoded) to find
    what the destination cannot hold. ``specification``: ``node`` is a source of an
    hdmf-zarr file's cached specifications, a scalar dataset in both conventions."""
    from zarrkit.hdmf.convention import (
        dataset_attributes,
        group_attributes,
        is_hdmf_dataset,
        scalar_shape,
    )
    from zarrkit.hierarchy.links import convention_for
    from zarrkit.references import is_reference_dataset
    from zarrkit.storage.memory import MemoryStore

    convention = convention_for(zarr_format)
    scratch = MemoryStore()
    if isinstance(node, Group):
        from zarrkit.hierarchy.nodes import create_group_node

        attributes = group_attributes(node.attrs.asdict(), convention, node.name)
        create_group_node(scratch, target, attributes, zarr_format=zarr_format)
        return _Plan(relative, node, "group", attributes=attributes,
                     documents=scratch.get_many(_node_document_keys(target)))
    options = _array_options(node, zarr_format=zarr_format, compressors=compressors,
                             chunks=chunks, shards=shards)
    options["attributes"] = dataset_attributes(node, convention, specification=specification)
    plan = _Plan(relative, node, "array", options)
    hdmf_text = is_hdmf_dataset(node)
    if is_reference_dataset(node):
        _plan_references(plan, zarr_format)
    elif node.dtype.hasobject:
        _plan_objects(plan, zarr_format, hdmf_text=hdmf_text)
    shape = scalar_shape(node, convention, specification=specification)
    if shape is not None and plan.kind == "array":
        plan.kind = "scalar"
        options.update(shape=shape, chunks=shape)
    from zarrkit.api import create_array

    trial = create_array(scratch, name=target, **plan.options)
    if plan.kind == "references":
        _check_references(node, trial)
    plan.documents = scratch.get_many(_node_document_keys(target))
    plan.metadata = trial.metadata
    return plan


def _plan_references(plan: _Plan, zarr_format: int) -> None:
    """Plan the copy of an hdmf-zarr reference or compound dataset (either convention)
    into the destination's convention."""
    from zarrkit.references import read_references, reference_array_options, reference_fields

    array = plan.node
    assert isinstance(array, Array)
    where = f"array {array.name!r}"
    options = plan.options
    try:
        fields = reference_fields(array)
        # hdmf-zarr 0.14's fixed-length fields are as wide as their longest value.
        rows = read_references(array) if fields is not None and zarr_format == 3 else None
        storage = reference_array_options(zarr_format, fields, rows=rows)
    except (MetadataError, TypeError, ValueError) as e:
        raise MetadataError(f"{where}: not converted: {e}") from e
    for key in ("filters", "fill_value"):
        options.pop(key, None)
    attributes = storage.pop("attributes")
    if all(key in options["attributes"] for key in attributes):
        attributes = {}  # already in the destination's convention: kept as they are
    options.update(storage)
    options["attributes"] = {**options["attributes"], **attributes}
    plan.kind = "references"


def _plan_objects(plan: _Plan, zarr_format: int, *, hdmf_text: bool = False) -> None:
    """Plan the copy of an array of objects (or with object fields): see :func:`convert`.
    ``hdmf_text``: an hdmf-zarr dataset, whose text a v3 copy stores as ``str`` (as
    hdmf-zarr 0.14 does)."""
    array = plan.node
    assert isinstance(array, Array)
    where = f"array {array.name!r}"
    options = plan.options
    if array.dtype.fields is not None:
        raise MetadataError(
            f"{where}: a structured dtype with object fields ({array.dtype}) is only "
            "converted as an hdmf-zarr compound dataset (a zarr_dtype attribute listing its "
            "fields)")
    codecs = [getattr(f, "codec_id", "") for f in array.filters]
    if array.serializer is not None:
        codecs.append(getattr(array.serializer, "name", ""))
    kind = getattr(array.metadata, "data_type", None)  # v3: string, bytes
    codecs.append({"string": "vlen-utf8", "bytes": "vlen-bytes"}.get(
        getattr(kind, "kind", ""), ""))
    options.pop("filters", None)
    if "vlen-utf8" in codecs:
        options["dtype"] = str
    elif "vlen-bytes" in codecs:
        options["dtype"] = bytes
    else:
        _plan_coded_objects(plan, [c for c in codecs if c], zarr_format)
    if hdmf_text and zarr_format == 3 and options["dtype"] is bytes:
        options["dtype"] = str
        plan.transform = _utf8_text(where)
        if isinstance(options.get("fill_value"), bytes):
            options["fill_value"] = _utf8_text(where)(options["fill_value"])


def _utf8_text(where: str) -> Callable[[Any], Any]:
    """Bytes elements as str (UTF-8), as hdmf-zarr 0.14 stores ASCII text in Zarr v3,
    which has no byte strings; MetadataError naming ``where`` for bytes that are not."""
    def decode(value: Any) -> Any:
        if isinstance(value, bytes | np.bytes_):
            try:
                return bytes(value).decode("utf-8")
            except UnicodeDecodeError as e:
                raise MetadataError(f"{where}: not converted: {value!r:.80} is not UTF-8 "
                                    f"text, which hdmf-zarr 0.14 stores as str") from e
        return value

    return np.frompyfunc(decode, 1, 1)  # type: ignore[no-any-return]


def _plan_coded_objects(plan: _Plan, codecs: list[str], zarr_format: int) -> None:
    """An object array of another object codec (json2, msgpack2, pickle...): its elements
    are read now, as they decide what it becomes."""
    array = plan.node
    assert isinstance(array, Array)
    where = f"array {array.name!r}"
    kinds: set[type] = set()
    other: Any = None
    try:
        for region in _copy_regions(array.shape, array.chunks, array.dtype.itemsize):
            for value in np.asarray(array[region], dtype=object).reshape(-1):
                if isinstance(value, str):
                    if value:  # "" is also what an unwritten element reads as
                        kinds.add(str)
                elif isinstance(value, bytes):
                    kinds.add(bytes)
                elif other is None:
                    other = value
    except ZarrkitError as e:
        raise MetadataError(f"{where}: not converted, its elements cannot be read: {e}") from e
    if other is None and kinds != {str, bytes}:
        if bytes in kinds:
            plan.options["dtype"] = bytes
            plan.transform = _empty_str_as_bytes
        else:
            plan.options["dtype"] = str
        return
    codec = next((c for c in codecs if c in _KEPT_OBJECT_CODECS), None)
    if zarr_format == 2 and codec is not None and array.zarr_format == 2:
        plan.options["dtype"] = object
        plan.options["filters"] = [f.get_config() for f in array.filters
                                   if getattr(f, "codec_id", "") == codec]
        return
    found = (f"elements of type {type(other).__name__} ({other!r:.80})" if other is not None
             else "both str and bytes elements")
    raise MetadataError(
        f"{where}: not converted: an object array ({'/'.join(codecs) or 'no codec'}) with "
        f"{found}; its Zarr v{zarr_format} copy would be a string or bytes array, whose "
        "elements are all str or all bytes (a v2 destination keeps json2 and msgpack2 "
        "objects as they are), and hdmf-zarr references are converted as such only with a "
        "zarr_dtype attribute naming them")


_empty_str_as_bytes = np.frompyfunc(lambda v: b"" if isinstance(v, str) and not v else v, 1, 1)


def _check_references(array: Array, trial: Array) -> None:
    """Read and encode the references of ``array`` in the form ``trial`` (the
    destination's metadata, in a scratch store) stores them, writing nothing."""
    from zarrkit.references import read_references, stored_references

    try:
        for region in _copy_regions(array.shape, trial.shards or trial.chunks,
                                    array.dtype.itemsize):
            if math.prod(r.stop - r.start for r in region):
                stored_references(trial, read_references(array, region))
    except (ZarrkitError, TypeError, ValueError) as e:
        raise MetadataError(f"array {array.name!r}: its references are not converted: "
                            f"{e}") from e


def _array_options(array: Array, *, zarr_format: int, compressors: Any, chunks: Any,
                   shards: Any) -> dict[str, Any]:
    """The ``create_array`` keyword arguments of ``array``'s copy (objects aside)."""
    options: dict[str, Any] = {}
    filters = [f.get_config() for f in array.filters if hasattr(f, "get_config")]
    if array.zarr_format == 2 and filters:
        options["filters"] = filters
    if zarr_format == 3:
        names = array.dimension_names
        if names is not None:
            options["dimension_names"] = names
        if shards is not None:
            options["shards"] = shards
    else:
        options["order"] = array.order
    return {"shape": array.shape, "dtype": array.dtype, "chunks": chunks or array.chunks,
            "fill_value": array.fill_value, "compressors": compressors,
            "attributes": array.attrs.asdict(), "zarr_format": zarr_format, **options}


@dataclass
class CopyReport:
    """What :func:`replicate` did: ``keys`` of the source considered, of which
    ``written`` were stored (``bytes_written`` bytes) and ``skipped`` already held the
    same value at the destination.

    >>> CopyReport(keys=2, written=1, skipped=1, bytes_written=8).to_json()["skipped"]
    1
    """

    keys: int = 0
    written: int = 0
    skipped: int = 0
    bytes_written: int = 0

    def to_json(self) -> dict[str, int]:
        """The report as a JSON object."""
        return {"keys": self.keys, "written": self.written, "skipped": self.skipped,
                "bytes_written": self.bytes_written}


# Keys copied per batch: read together (in the pool), so memory stays bounded.
_COPY_BATCH_KEYS = 64


def replicate(
    source: Any,
    dest: Any,
    source_path: str = "",
    dest_path: str | None = None,
    *,
    overwrite: bool = False,
    progress: ProgressCallback | bool | None = None,
) -> CopyReport:
    """Copy the node at ``source_path`` of ``source`` (and everything below it) to
    ``dest_path`` of ``dest`` (by default the same path) as it is: every key's bytes,
    chunks not re-encoded (use :func:`convert` to change format, codecs or chunking).
    Missing ancestor groups of ``dest_path`` are created, in the source's format. (What
    ``zarrkit cp`` runs; :func:`zarrkit.copy_store` is zarr-python 2's raw key copy, with
    its selection and ``if_exists`` choices.)

    Resumable: a key whose value ``dest`` already holds is not written again, so running
    a finished copy again writes nothing; metadata documents are copied last, so an
    interrupted copy is no node yet. A different node at ``dest_path`` raises
    ContainsNodeError, unless ``overwrite`` (which deletes everything under
    ``dest_path`` first). ``progress`` (in keys) as in :func:`convert`. A source that
    cannot list its keys (HTTP) is copied by walking its hierarchy (with its consolidated
    metadata, if any) and asking for every chunk of the grid.

    >>> import numpy as np, zarrkit as zk
    >>> source = {}
    >>> zk.create_array(source, name="a", shape=(4,), chunks=(2,), dtype="i2")[...] = 3
    >>> dest = {}
    >>> replicate(source, dest, progress=False).written, sorted(dest) == sorted(source)
    (4, True)
    >>> replicate(source, dest, progress=False).skipped
    4
    """
    source_store = make_store(source, mode="r")
    from_path = normalize_path(source_path)
    to_path = from_path if dest_path is None else normalize_path(dest_path)
    found = find_node(source_store, from_path)
    if found is None:
        raise MetadataError(f"nothing to copy at path {from_path!r}")
    dest_store = make_store(dest, mode="a")
    source_keys = _source_keys(source_store, from_path)
    from_prefix, to_prefix = key_prefix(from_path), key_prefix(to_path)
    _check_copy_target(source_store, dest_store, from_path, to_path, overwrite=overwrite)
    for ancestor in ancestors(to_path):
        from zarrkit.hierarchy.nodes import group_document, group_metadata_key, node_kind

        if node_kind(dest_store, ancestor) is None:
            dest_store.set_if_not_exists(group_metadata_key(ancestor, found.zarr_format),
                                         group_document(found.zarr_format))
    # Chunks first, metadata documents last: an interrupted copy leaves no node that
    # looks complete, and a resumed one finds the data it already wrote.
    source_keys.sort(key=lambda k: (k.rpartition("/")[2] in METADATA_DOCUMENT_NAMES, k))
    report = CopyReport(keys=len(source_keys))
    update, finish = progress_callback(progress, "zarrkit cp", unit="chunks")
    try:
        for start in range(0, len(source_keys), _COPY_BATCH_KEYS):
            batch = source_keys[start:start + _COPY_BATCH_KEYS]
            targets = [to_prefix + key[len(from_prefix):] for key in batch]
            values = read_values(source_store, batch)
            present = read_values(dest_store, targets)
            changed = {target: value for target, value, old in zip(
                targets, values, present, strict=True) if value is not None and value != old}
            if changed:
                dest_store.set_many(changed)
            report.written += len(changed)
            report.bytes_written += sum(len(v) for v in changed.values())
            report.skipped += sum(v is not None for v in values) - len(changed)
            update(start + len(batch), len(source_keys))
    finally:
        finish()
    return report


def _check_copy_target(source: Store, dest: Store, from_path: str, to_path: str, *,
                       overwrite: bool) -> None:
    """ContainsNodeError if ``dest`` holds at ``to_path`` a node whose metadata differs
    from the source's (a copy resumed finds its own); with ``overwrite``, clear it."""
    if overwrite:
        dest.delete_prefix(key_prefix(to_path))
        return
    names = (ZARR_JSON, ZARRAY, ZGROUP)
    there = dest.get_many([join_path(to_path, n) for n in names])
    if all(value is None for value in there):
        return
    if there != source.get_many([join_path(from_path, n) for n in names]):
        raise ContainsNodeError(
            f"the destination already holds a different node at path {to_path or '/'!r} "
            "(not a previous run of this copy); overwrite (--overwrite) replaces it")


def _source_keys(store: Store, path: str) -> list[str]:
    """The keys of the node at ``path`` and below: listed, or for a store that cannot
    list, the metadata keys of every node of the hierarchy and every chunk key of the
    grid of each array (those missing are skipped when read)."""
    if store.supports_listing:
        return list(store.list_prefix(key_prefix(path)))
    from zarrkit.api import open_array, open_group

    found = find_node(store, path)
    assert found is not None
    if found.kind == "array":
        nodes: list[tuple[str, Array | Group]] = [("", open_array(store, mode="r", path=path))]
    else:
        nodes = list(_walk(open_group(store, mode="r", path=path)))
    keys = [join_path(path, ZMETADATA)]
    for relative, node in nodes:
        node_path = join_path(path, relative)
        keys += _node_document_keys(node_path)
        if isinstance(node, Array):
            keys += [node._chunk_key(tuple(c))
                     for c in np.ndindex(*node._storage_grid_shape)]
    return keys


def migrate_metadata(store: Any, path: str = "", *, dry_run: bool = False) -> list[str]:
    """Rewrite the format-2 metadata of the hierarchy at ``path`` as format 3 in place,
    without touching chunks: arrays get the ``v2`` chunk key encoding with their separator,
    F order becomes a ``transpose`` codec, filters and compressor become the equivalent
    v3 codecs (:func:`v3_document_for_v2`). Return the paths migrated. Arrays whose chunks
    v3 cannot read as they are (structured dtypes, object codecs other than
    vlen-utf8/vlen-bytes, filters or compressors of another kind in v3) raise MetadataError
    before anything is written.

    >>> import numpy as np, zarrkit as zk
    >>> s = {}
    >>> _ = zk.create_array(s, name="a", shape=(3,), chunks=(2,), dtype="<i4",
    ...     data=np.arange(3), zarr_format=2)
    >>> zk.migrate_metadata(s)
    ['', 'a']
    >>> zk.open_array(s, path="a", mode="r").zarr_format, zk.open(s, path="a")[...].tolist()
    (3, [0, 1, 2])
    """
    store_obj = make_store(store, mode="a")
    root_path = normalize_path(path)
    from zarrkit.api import open_array, open_group

    found = find_node(store_obj, root_path, zarr_format=2)
    if found is None:
        raise MetadataError(f"no format 2 array or group at path {root_path!r} to migrate")
    if found.kind == "array":
        nodes: list[tuple[str, Array | Group]] = [
            ("", open_array(store_obj, mode="r", path=root_path, zarr_format=2))]
    else:
        nodes = list(_walk(open_group(store_obj, mode="r", path=root_path, zarr_format=2,
                                      consolidated=False)))
    plans: list[tuple[str, dict[str, Any]]] = []
    for relative, node in nodes:
        node_path = join_path(root_path, relative)
        if isinstance(node, Group):
            document = {"zarr_format": 3, "node_type": "group",
                        "attributes": node.attrs.asdict()}
        else:
            document = v3_document_for_v2(node.metadata, node.attrs.asdict(),
                                          where=f"array {node.name!r}")
        plans.append((node_path, document))
    if dry_run:
        return [p for p, _ in plans]
    for node_path, document in plans:
        store_obj.set(join_path(node_path, ZARR_JSON), dump_json(document))
    for node_path, _ in plans:
        for name in (ZARRAY, ZGROUP, ZATTRS, ZMETADATA):
            store_obj.delete(join_path(node_path, name))
    return [p for p, _ in plans]


def v3_document_for_v2(metadata: ArrayMetadataV2, attributes: Mapping[str, Any], *,
                       where: str, chunk_key_encoding: str = "v2",
                       keep_array_dimensions: bool = True) -> dict[str, Any]:
    """The Zarr v3 ``zarr.json`` document of a format-2 array, whose chunks are the v2
    chunks as they are: F order becomes a leading ``transpose``, filters the equivalent
    ``array -> array`` codecs, the dtype's byte order the ``bytes`` codec's endian (a single
    vlen-utf8/vlen-bytes filter: that codec), the compressor a ``bytes -> bytes`` codec, a
    null fill value the data type's default, and an ``_ARRAY_DIMENSIONS`` attribute (a list
    of names, one per dimension) the ``dimension_names``. ``chunk_key_encoding`` ``"v2"``
    keeps the chunk keys; ``"default"`` writes the v3 keys with the same separator.

    What v3 cannot express raises MetadataError starting with ``where``: structured dtypes,
    object codecs other than one vlen-utf8/vlen-bytes filter, filters that are not
    ``array -> array`` codecs in v3 and compressors that are not ``bytes -> bytes`` ones.
    Used by :func:`migrate_metadata` and ``zarrkit.models.to_v3``.

    >>> import numpy as np
    >>> from zarrkit.metadata.v2 import ArrayMetadataV2
    >>> m = ArrayMetadataV2(shape=(4, 6), chunks=(2, 3), dtype=np.dtype(">i2"), order="F",
    ...     compressor={"id": "zlib", "level": 1})
    >>> doc = v3_document_for_v2(m, {"_ARRAY_DIMENSIONS": ["y", "x"]}, where="a",
    ...     keep_array_dimensions=False)
    >>> [c["name"] for c in doc["codecs"]], doc["dimension_names"], doc["attributes"]
    (['transpose', 'bytes', 'numcodecs.zlib'], ['y', 'x'], {})
    >>> v3_document_for_v2(ArrayMetadataV2(shape=(2,), chunks=(2,),
    ...     dtype=np.dtype([("x", "<i4")])), {}, where="array '/rec'")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: array '/rec': structured dtype ...
    """
    from zarrkit.codecs.numcodecs_config import ARRAY_FILTERS, NUMERIC_SERIALISERS, OBJECT_CODECS
    from zarrkit.codecs.registry import codec_json_v3
    from zarrkit.hierarchy.creation import validated_codecs
    from zarrkit.metadata.dtypes import has_endianness
    from zarrkit.metadata.dtypes_v3 import data_type_v3_from_numpy
    from zarrkit.metadata.fill_value import default_fill_value, encode_fill_value_v3
    from zarrkit.metadata.v3 import ArrayMetadataV3

    dtype = metadata.dtype
    if dtype.fields is not None:
        raise MetadataError(
            f"{where}: structured dtype {dtype} is not converted: Zarr v3 has no core "
            "structured data type (zk.convert copies the data into a v3 struct array)")
    if chunk_key_encoding not in ("v2", "default"):
        raise ValueError(f"chunk_key_encoding must be 'v2' or 'default', found "
                         f"{chunk_key_encoding!r}")
    codecs: list[dict[str, Any]] = []
    filters = [dict(f) for f in metadata.filters or ()]
    object_kind = None
    if dtype.kind == "O":
        ids = [f["id"] for f in filters]
        if ids not in (["vlen-utf8"], ["vlen-bytes"]):
            raise MetadataError(
                f"{where}: object dtype with filters {ids}: only a single vlen-utf8 or "
                "vlen-bytes filter has a Zarr v3 codec")
        object_kind = "string" if ids[0] == "vlen-utf8" else "bytes"
        filters = []
    for config in filters:
        if config["id"] not in ARRAY_FILTERS:
            raise MetadataError(
                f"{where}: filter {config['id']!r} is no array -> array codec in Zarr v3 "
                f"(those are {sorted(ARRAY_FILTERS)})")
    compressor = metadata.compressor
    if compressor is not None and compressor["id"] in (
            ARRAY_FILTERS | OBJECT_CODECS | NUMERIC_SERIALISERS):
        raise MetadataError(
            f"{where}: compressor {compressor['id']!r} is no bytes -> bytes codec in Zarr v3")
    # v2 filters see the chunk in its stored (F or C) order, so the transpose comes first.
    if metadata.order == "F" and len(metadata.shape) > 1:
        codecs.append({"name": "transpose",
                       "configuration": {"order": list(range(len(metadata.shape)))[::-1]}})
    for config in filters:
        codecs.append(codec_json_v3(config))
    if object_kind == "string":
        codecs.append({"name": "vlen-utf8"})
    elif object_kind == "bytes":
        codecs.append({"name": "vlen-bytes"})
    elif has_endianness(dtype):
        endian = "big" if dtype.byteorder == ">" or (
            dtype.byteorder == "=" and sys.byteorder == "big") else "little"
        codecs.append({"name": "bytes", "configuration": {"endian": endian}})
    else:
        codecs.append({"name": "bytes"})
    if compressor is not None:
        codecs.append(codec_json_v3(dict(compressor)))
    native = dtype.newbyteorder("=")
    data_type = data_type_v3_from_numpy(native, object_kind=object_kind)
    fill = metadata.fill_value
    if fill is None:
        fill = b"" if object_kind == "bytes" else ("" if object_kind else
                                                   default_fill_value(native))
    attributes = dict(attributes)
    document: dict[str, Any] = {
        "zarr_format": 3, "node_type": "array",
        "shape": list(metadata.shape),
        "data_type": data_type.json,
        "chunk_grid": {"name": "regular",
                       "configuration": {"chunk_shape": list(metadata.chunks)}},
        "chunk_key_encoding": {"name": chunk_key_encoding,
                               "configuration": {"separator": metadata.dimension_separator}},
        "fill_value": encode_fill_value_v3(fill, data_type),
        "codecs": codecs,
        "attributes": attributes,
    }
    names = attributes.get("_ARRAY_DIMENSIONS")
    if isinstance(names, list) and len(names) == len(metadata.shape) and all(
            isinstance(name, str) for name in names):
        document["dimension_names"] = names
        if not keep_array_dimensions:
            del attributes["_ARRAY_DIMENSIONS"]
    # Validate now (the codec chain too), so a bad array stops before anything is written.
    v3_metadata = ArrayMetadataV3.from_json(document, key=where)
    try:
        validated_codecs(v3_metadata)
    except ZarrkitError as e:
        raise MetadataError(f"{where}: {e}") from e
    return document
