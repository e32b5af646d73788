"""Verifying a store: every metadata document parses, and every stored chunk decodes.

:func:`check` reads everything under a path and reports each corrupt document or chunk by
its store key (an inner chunk of a shard by the shard's key and its coordinates in the
shard), never stopping at the first one. ``zarrkit check`` prints its report.

>>> import numpy as np, zarrkit as zk
>>> store = {}
>>> zk.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="u1")[...] = 1
>>> store["a/c/1"] = b"junk"
>>> report = check(store)
>>> report.ok, [p.key for p in report.problems]
(False, ['a/c/1'])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zarrkit.concurrency import parallel_map
from zarrkit.errors import MetadataError, UnsupportedOperationError
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.nodes import METADATA_DOCUMENT_NAMES, ZARR_JSON, read_values
from zarrkit.metadata.consolidated import parse_consolidated_v2
from zarrkit.metadata.jsonio import load_json_object
from zarrkit.metadata.v2 import (
    ZARRAY,
    ZATTRS,
    ZGROUP,
    ArrayMetadataV2,
    GroupMetadataV2,
    parse_attributes,
)
from zarrkit.metadata.v3 import ArrayMetadataV3, parse_node_v3
from zarrkit.paths import key_prefix, normalize_path
from zarrkit.progress import ProgressCallback, progress_callback
from zarrkit.storage.base import Store
from zarrkit.storage.resolve import make_store

# The key a copy (``zarrkit convert``) writes at the root of its destination before
# anything else and deletes once every node is written: a destination holding it was
# interrupted, even if every node there reads well.
INCOMPLETE_MARKER = ".zarrkit-incomplete"

# Chunks read from the store at once: a batch is decoded in the thread pool while memory
# stays bounded.
_BATCH = 64


@dataclass(frozen=True)
class Problem:
    """A corrupt metadata document or chunk: its store ``key`` (for an inner chunk of a
    shard, the shard's key and ``inner_chunk``, its coordinates in the shard) and what is
    wrong with it.

    >>> Problem("a/c/0", "truncated", (1, 0)).to_json()
    {'key': 'a/c/0', 'inner_chunk': [1, 0], 'error': 'truncated'}
    """

    key: str
    error: str
    inner_chunk: tuple[int, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The problem as a JSON object."""
        found: dict[str, Any] = {"key": self.key}
        if self.inner_chunk is not None:
            found["inner_chunk"] = list(self.inner_chunk)
        found["error"] = self.error
        return found


@dataclass
class CheckReport:
    """What :func:`check` verified (``documents`` parsed, ``arrays`` opened, ``chunks``
    stored chunks or shards decoded) and the ``problems`` found; ``ok`` if none.

    >>> CheckReport(documents=1).to_json()
    {'ok': True, 'documents': 1, 'arrays': 0, 'chunks': 0, 'problems': []}
    """

    documents: int = 0
    arrays: int = 0
    chunks: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether nothing is corrupt."""
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object."""
        return {"ok": self.ok, "documents": self.documents, "arrays": self.arrays,
                "chunks": self.chunks, "problems": [p.to_json() for p in self.problems]}


def _parse_document(name: str, raw: bytes, key: str) -> Any:
    """The parsed metadata of a document named ``name``; MetadataError if it is bad."""
    document = load_json_object(raw, key=key)
    if name == ZARR_JSON:
        return parse_node_v3(document, key)
    if name == ZARRAY:
        return ArrayMetadataV2.from_json(document, key=key)
    if name == ZGROUP:
        return GroupMetadataV2.from_json(document, key=key)
    if name == ZATTRS:
        return parse_attributes(document, key)
    return parse_consolidated_v2(document, key)


def _error_text(error: Exception) -> str:
    text = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    return text or type(error).__name__


def check(store: Any, path: str = "", *,
          progress: ProgressCallback | bool | None = False) -> CheckReport:
    """Verify the hierarchy at ``path`` of ``store`` (any store-like; it must be listable):
    parse every metadata document (``zarr.json``, ``.zarray``, ``.zgroup``, ``.zattrs``,
    ``.zmetadata``) and decode every stored chunk of every array, for sharded arrays the
    shard index (and its checksum) and every inner chunk. Each corrupt one is reported in
    :attr:`CheckReport.problems`, by key. ``progress`` (in chunks) as in
    :func:`zarrkit.convert`; silent by default.

    >>> import zarrkit as zk
    >>> store = {"zarr.json": b"{not json"}
    >>> [p.key for p in check(store).problems]
    ['zarr.json']
    >>> check({}, "missing")
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: nothing to check at path 'missing': no metadata document there
    """
    store_obj = make_store(store, mode="r")
    if not store_obj.supports_listing:
        raise UnsupportedOperationError(
            f"cannot check {store_obj!r}: checking lists the keys of the store, and this "
            "store cannot list them")
    root = normalize_path(path)
    keys = sorted(store_obj.list_prefix(key_prefix(root)))
    report = CheckReport()
    for key in keys:
        if key.rpartition("/")[2] == INCOMPLETE_MARKER:
            report.problems.append(Problem(
                key, "an interrupted copy: its destination is not complete (some arrays "
                "or members may be missing); run the copy again to finish it"))
    arrays = _check_documents(store_obj, keys, report)
    if report.documents == 0:
        raise MetadataError(f"nothing to check at path {root!r}: no metadata document there")
    opened = []
    for array_path, metadata_key in arrays:
        array = _open_array(store_obj, array_path, metadata_key, report)
        if array is not None:
            opened.append((array, array._stored_chunks()))
    report.arrays = len(opened)
    total = sum(len(chunks) for _, chunks in opened)
    report_progress, finish = progress_callback(progress, "zarrkit check", unit="chunks")
    try:
        for array, chunks in opened:
            for start in range(0, len(chunks), _BATCH):
                batch = chunks[start:start + _BATCH]
                values = read_values(store_obj, [key for key, _ in batch])
                found = parallel_map(_chunk_checker(array),
                                     list(zip(batch, values, strict=True)))
                for problems in found:
                    report.problems.extend(problems)
                report.chunks += len(batch)
                report_progress(report.chunks, total)
    finally:
        finish()
    return report


def _check_documents(store: Store, keys: list[str], report: CheckReport
                     ) -> list[tuple[str, str]]:
    """Parse every metadata document among ``keys`` (problems go to ``report``); return
    ``(path, metadata key)`` of the arrays whose metadata parsed."""
    documents = [k for k in keys if k.rpartition("/")[2] in METADATA_DOCUMENT_NAMES]
    report.documents = len(documents)
    arrays: dict[str, str] = {}
    for key, raw in zip(documents, read_values(store, documents), strict=True):
        if raw is None:  # deleted since it was listed
            continue
        node_path, _, name = key.rpartition("/")
        try:
            metadata = _parse_document(name, raw, key)
        except (MetadataError, ValueError, TypeError) as e:
            report.problems.append(Problem(key, _error_text(e)))
            continue
        # zarr.json wins over .zarray at the same path, as when the node is opened.
        if isinstance(metadata, ArrayMetadataV3) or (
                isinstance(metadata, ArrayMetadataV2) and node_path not in arrays):
            arrays[node_path] = key
    return sorted(arrays.items())


def _open_array(store: Store, path: str, metadata_key: str, report: CheckReport
                ) -> Array | None:
    """The array at ``path``, or None with a problem reported against its metadata key
    (metadata that parses can still name a codec or data type that cannot be built)."""
    from zarrkit.api import open_array

    try:
        return open_array(store, mode="r", path=path,
                          zarr_format=3 if metadata_key.endswith(ZARR_JSON) else 2)
    except Exception as e:  # noqa: BLE001 - whatever fails, the check goes on with the rest
        report.problems.append(Problem(metadata_key, _error_text(e)))
        return None


def _chunk_checker(array: Array) -> Callable[[tuple[tuple[str, tuple[int, ...]], bytes | None]],
                                             list[Problem]]:
    """A function decoding one stored chunk of ``array`` and returning its problems."""

    def check_one(item: tuple[tuple[str, tuple[int, ...]], bytes | None]) -> list[Problem]:
        (key, coords), data = item
        if data is None:  # deleted since it was listed
            return []
        pipeline = array._pipeline_for(array._chunk_shape(coords))
        sharding = getattr(pipeline, "sharding", None)
        # A chain with only the sharding codec: each inner chunk is checked on its own.
        # (Other codecs around it make the shard's bytes something else: decode it whole.)
        if sharding is not None and len(pipeline.codecs) == 1:
            return _check_shard(sharding, key, data, array.name)
        try:
            array._decode(data, key, coords)
        except Exception as e:  # noqa: BLE001 - codecs raise all kinds; report and go on
            return [Problem(key, _error_text(e))]
        return []

    return check_one


def _check_shard(sharding: Any, key: str, data: bytes, name: str) -> list[Problem]:
    """The problems of a shard: its index (checksum, bounds), then each inner chunk."""
    what = f"array {name!r} shard {key!r}"
    view = memoryview(data)
    try:
        index = sharding.decode_index(view, sharding.spec.shape, what=what)
        index.check_bounds(len(view))
    except Exception as e:  # noqa: BLE001 - a bad index: its inner chunks cannot be found
        return [Problem(key, _error_text(e))]
    problems = []
    empty = index.empty_mask()
    for coords, _ in sharding.inner_regions(sharding.spec.shape):
        if empty[coords]:
            continue
        offset, nbytes = (int(v) for v in index.entries[coords])
        try:
            sharding.inner_pipeline.decode(view[offset:offset + nbytes],
                                           what=f"{what} inner chunk {coords}")
        except Exception as e:  # noqa: BLE001 - codecs raise all kinds; report and go on
            problems.append(Problem(key, _error_text(e), tuple(int(c) for c in coords)))
    return problems
