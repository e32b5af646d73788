"""The measurement child: one process runs one task for one library and prints its result.

``python bench/worker.py '<task json>'`` prints one line ``RESULT <json>`` on stdout. Tasks:

- ``info``: library versions and whether zarr-python has ``FusedCodecPipeline``;
- ``prepare``: write a read dataset (or the S9/S13 hierarchies) with a reference library;
- ``verify``: read a whole array and return its crc32c;
- ``verify_model``: check what an S13 ``to_store`` wrote (zarr-python opens it);
- ``measure``: time one case (``S1``...``S13``) for one library (S12 reads over HTTP from
  the server at ``task["url"]``, which the parent started: ``http_server.py``);
- ``limits``: the physical limits (memcpy, file reads, the codec on 2 threads).

A measurement times only the operation itself (opening the array is included, importing the
library and loading the source data are not), and reports wall and CPU time
(``getrusage(RUSAGE_SELF)``, all threads) per metric. The parent adds the whole child's peak
RSS and CPU time from ``wait4``.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import resource
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    DATASET_SOURCES,
    S10_CHUNKS,
    S10_SHAPE,
    S12_MAX_GAP,
    SOURCE_SALTS,
    THREADS,
    ArraySpec,
    Sizes,
    box_index_arrays,
    boxes,
    checksum,
    dataset_specs,
    generate_source,
    hierarchy_digest,
    inner_chunk_corners,
    load_source,
    merge_ranges,
    s10_data,
    s10_selections,
    s12_partial_reads,
    source_path,
    source_shape,
    write_specs,
)

# S4 reads this many distinct chunks one at a time and reports the time per chunk: a single
# read of a few ms is below the noise of one timer reading.
S4_CHUNK_READS = 16


def _rss_kib() -> int:
    """Peak RSS of this process so far, in KiB."""
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _cpu_seconds() -> float:
    """User + system CPU time of this process, all threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Recorder:
    """Collects the metrics, checksums and notes of one task."""

    def __init__(self) -> None:
        self.metrics: dict[str, dict[str, float]] = {}
        self.checks: dict[str, int] = {}
        self.extra: dict[str, Any] = {}

    @contextlib.contextmanager
    def timed(self, metric: str, scale: Callable[[float], float]) -> Iterator[None]:
        """Time the block; the metric's value is ``scale(wall seconds)``."""
        cpu0 = _cpu_seconds()
        t0 = time.perf_counter()
        yield
        wall = time.perf_counter() - t0
        cpu = _cpu_seconds() - cpu0
        self.metrics[metric] = {"value": scale(wall), "wall": wall, "cpu": cpu}

    def note_engine(self, metric: str, engine: str | None) -> None:
        """Record which zarrkit engine the metric's array used (nothing for the peers)."""
        if engine is not None:
            self.extra.setdefault("engines", {})[metric] = engine

    def mark_baseline(self) -> None:
        """Record peak RSS so far (imports done, no data loaded yet); the first call wins,
        so a case that loads data twice keeps the baseline from before any of it."""
        self.extra.setdefault("rss_baseline_kib", _rss_kib())

    def result(self) -> dict[str, Any]:
        """The JSON document printed for the parent."""
        return {"metrics": self.metrics, "checks": self.checks,
                "rss_end_kib": _rss_kib(), **self.extra}


def gbps(nbytes: int) -> Callable[[float], float]:
    """Throughput in GB/s (10^9 bytes) of ``nbytes`` per elapsed time."""
    return lambda wall: nbytes / wall / 1e9


def per_item(count: int, unit_seconds: float) -> Callable[[float], float]:
    """Time per item, in units of ``unit_seconds`` (1e-3: ms, 1e-6: µs)."""
    return lambda wall: wall / count / unit_seconds


def rate(count: int) -> Callable[[float], float]:
    """Items per second."""
    return lambda wall: count / wall


def seconds(wall: float) -> float:
    """The elapsed time itself."""
    return wall


# --- cases -----------------------------------------------------------------------------------
def _dataset(task: dict[str, Any], name: str) -> tuple[str, ArraySpec]:
    """Path and layout of the prepared read dataset ``name``."""
    sizes = Sizes(task["scale"])
    return str(Path(task["root"]) / "datasets" / name), dataset_specs(sizes)[name]


def _write_case(task: dict[str, Any], adapter: Any, rec: Recorder, case: str, source: str,
                metric: str, per_chunk: bool = False) -> None:
    """Create an array of the case's layout and write the whole source into it (timed)."""
    sizes = Sizes(task["scale"])
    spec = write_specs(sizes)[case]
    rec.mark_baseline()
    data = load_source(source_path(Path(task["root"]), source), spec.shape)
    scale = rate(spec.nchunks) if per_chunk else gbps(spec.nbytes)
    with rec.timed(metric, scale):
        array = adapter.create(task["out"], spec)
        adapter.write_all(array, data)
    rec.note_engine(metric, adapter.engine(array))


def _read_all(task: dict[str, Any], adapter: Any, rec: Recorder, dataset: str, metric: str,
              per_chunk: bool = False) -> None:
    """Open a prepared dataset and read all of it into a new array (timed)."""
    path, spec = _dataset(task, dataset)
    rec.mark_baseline()
    scale = rate(spec.nchunks) if per_chunk else gbps(spec.nbytes)
    with rec.timed(metric, scale):
        array = adapter.open(path, spec)
        out = adapter.read(array, ...)
    rec.checks[metric] = checksum(out)
    rec.note_engine(metric, adapter.engine(array))


def case_s1(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S1: write 1 GiB, blosc zstd 3 + shuffle, 128^3 chunks."""
    _write_case(task, adapter, rec, "S1", "big", "write")


def case_s2(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S2: read all of S1's layout into a new array."""
    _read_all(task, adapter, rec, "s2", "read-all")


def case_s3w(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S3 write: S1 in format v2."""
    _write_case(task, adapter, rec, "S3w", "big", "write v2")


def case_s3r(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S3 read: S2 in format v2."""
    _read_all(task, adapter, rec, "s3", "read-all v2")


def case_s4(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S4: read all of an uncompressed array, then single chunks one at a time."""
    _read_all(task, adapter, rec, "s4", "read-all")
    path, spec = _dataset(task, "s4")
    corners = inner_chunk_corners(spec.shape, spec.chunks, S4_CHUNK_READS, 4)
    selections = [tuple(slice(int(c), int(c) + n) for c, n in zip(corner, spec.chunks,
                                                                     strict=True))
                  for corner in corners]
    array = adapter.open(path, spec)
    parts = []
    with rec.timed("one chunk", per_item(len(selections), 1e-3)):
        for selection in selections:
            parts.append(adapter.read(array, selection))
    rec.checks["one chunk"] = checksum(np.stack(parts))
    if hasattr(adapter, "open_mapped"):
        mapped = adapter.open_mapped(path, spec)
        parts = []
        with rec.timed("one chunk mmap", per_item(len(selections), 1e-3)):
            for selection in selections:
                # A view of the mapped file; copying it out touches every byte, so the
                # time is that of having the values, as a plain read does.
                parts.append(np.array(mapped[selection]))
        rec.checks["one chunk mmap"] = checksum(np.stack(parts))


def case_s5(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S5: 8 KiB chunks, zstd: write all, then read all (of the prepared dataset)."""
    _write_case(task, adapter, rec, "S5", "s5", "write", per_chunk=True)
    _read_all(task, adapter, rec, "s5", "read-all", per_chunk=True)


def case_s6(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S6: random unaligned 16^3 reads, one call each, then all in one vindex call."""
    sizes = Sizes(task["scale"])
    path, spec = _dataset(task, "s6")
    corners = boxes(spec.shape, 16, sizes.n_reads, 6)
    index = box_index_arrays(corners, 16)
    rec.mark_baseline()
    array = adapter.open(path, spec)
    parts = []
    with rec.timed("one by one", per_item(len(corners), 1e-3)):
        for corner in corners:
            parts.append(adapter.read(array, tuple(slice(int(c), int(c) + 16)
                                                   for c in corner)))
    rec.checks["one by one"] = checksum(np.stack(parts))
    with rec.timed("batched", per_item(len(corners), 1e-3)):
        batched = adapter.vindex(array, index)
    rec.checks["batched"] = checksum(batched)


def case_s7(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S7: sharded read-all, then random inner-chunk reads one at a time."""
    sizes = Sizes(task["scale"])
    _read_all(task, adapter, rec, "s7", "read-all")
    path, spec = _dataset(task, "s7")
    corners = inner_chunk_corners(spec.shape, spec.chunks, sizes.n_reads, 7)
    array = adapter.open(path, spec)
    parts = []
    with rec.timed("inner-chunk reads", per_item(len(corners), 1e-3)):
        for corner in corners:
            parts.append(adapter.read(array, tuple(
                slice(int(c), int(c) + n) for c, n in zip(corner, spec.chunks, strict=True))))
    rec.checks["inner-chunk reads"] = checksum(np.stack(parts))


def case_s8(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S8: write whole shards of 256 MiB; the parent reads the peak RSS."""
    _write_case(task, adapter, rec, "S8", "s8", "write")


def case_s11(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S11: sharded with small inner chunks (16^3 in 64^3 shards): read all of the prepared
    dataset, then write the source as whole shards into a new array.

    The read comes first so that the write's dirty pages (512 MiB) are not being flushed
    while the read is timed; the parent syncs before the next child.
    """
    _read_all(task, adapter, rec, "s11", "read-all")
    _write_case(task, adapter, rec, "S11", "s11", "write")


def _case_s9(task: dict[str, Any], adapter: Any, rec: Recorder, zarr_format: int) -> None:
    """S9: create a hierarchy, then open the prepared one without and with consolidated
    metadata."""
    sizes = Sizes(task["scale"])
    count = sizes.n_arrays
    prepared = str(Path(task["root"]) / "hierarchies" / f"v{zarr_format}")
    if adapter.name != "tensorstore":
        # tensorstore has no groups nor attributes to create a hierarchy with.
        with rec.timed("create", seconds):
            adapter.create_hierarchy(task["out"], zarr_format, count)
    for consolidated, metric in ((False, "open"), (True, "open consolidated")):
        if consolidated and adapter.name == "tensorstore":
            continue  # no consolidated metadata in tensorstore
        with rec.timed(metric, seconds):
            seen, total = adapter.open_hierarchy(prepared, zarr_format, count, consolidated)
        rec.checks[metric] = seen * 1_000_003 + total


def case_s9v2(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S9 in format v2."""
    _case_s9(task, adapter, rec, 2)


def case_s9v3(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S9 in format v3."""
    _case_s9(task, adapter, rec, 3)


# S10 times its calls in this many blocks (see case_s10).
S10_BLOCKS = 11


def case_s10(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S10: per-call cost of small selections on an in-memory uncompressed array."""
    sizes = Sizes(task["scale"])
    spec = ArraySpec(S10_SHAPE, S10_CHUNKS, "none", dtype="float64")
    array = adapter.create_memory(spec)
    adapter.write_all(array, s10_data())
    call = {"basic": adapter.read, "oindex": adapter.oindex, "vindex": adapter.vindex}
    for name, (kind, selection) in s10_selections().items():
        function = call[kind]
        result = function(array, selection)  # warm-up, and the value checked
        rec.checks[name] = checksum(result)
        # Calibrate the call count to the time budget, so slow libraries stay affordable.
        t0 = time.perf_counter()
        function(array, selection)
        once = time.perf_counter() - t0
        per_block = max(1, int(sizes.s10_seconds / S10_BLOCKS / max(once, 1e-7)))
        # The budget in blocks, the process's value the median block's: a burst of the
        # shared VM's noise (seconds long; S10's calls take microseconds) moves a block,
        # not the value.
        blocks: list[float] = []
        with rec.timed(name, per_item(per_block * S10_BLOCKS, 1e-6)):
            for _ in range(S10_BLOCKS):
                t0 = time.perf_counter()
                for _ in range(per_block):
                    function(array, selection)
                blocks.append(time.perf_counter() - t0)
        rec.metrics[name]["value"] = sorted(blocks)[S10_BLOCKS // 2] / per_block / 1e-6


def _served(served: dict[str, Any]) -> dict[str, Any]:
    """What the S12 server counted, as kept in the result: requests, bytes, statuses,
    and the first few requests (method, path, range, status, length)."""
    return {"requests": served["requests"], "bytes": served["bytes"],
            "statuses": served["statuses"], "log": served["log"][:16]}


def case_s12(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S12: read-all over HTTP of the chunked and the sharded layout, then two partial reads
    of the sharded one; the server counts the requests of each (opening included for the
    read-alls; the partial reads use an array opened beforehand, so they count the index
    and inner-chunk requests only)."""
    import http_server

    url = task["url"]
    adapter.import_http()
    rec.mark_baseline()
    served: dict[str, Any] = {}
    for dataset, metric in (("s12", "read-all"), ("s12s", "sharded read-all")):
        _, spec = _dataset(task, dataset)
        http_server.reset(url)
        with rec.timed(metric, gbps(spec.nbytes)):
            array = adapter.open_http(f"{url}/{dataset}", spec)
            out = adapter.read(array, ...)
        served[metric] = _served(http_server.stats(url))
        rec.checks[metric] = checksum(out)
        del out, array
    _, spec = _dataset(task, "s12s")
    for metric, selection in s12_partial_reads(spec).items():
        # A fresh array: no index a library may have kept from the read-all is reused.
        array = adapter.open_http(f"{url}/s12s", spec)
        http_server.reset(url)
        with rec.timed(metric, seconds):
            out = adapter.read(array, selection)
        served[metric] = _served(http_server.stats(url))
        # The metric is the request count; the time stays in "wall".
        rec.metrics[metric]["value"] = served[metric]["requests"]
        rec.checks[metric] = checksum(out)
    rec.extra["http"] = served


def model_digest(spec: Any) -> int:
    """:func:`common.hierarchy_digest` of a ``GroupSpec`` of zarrkit or pydantic-zarr (both
    have ``attributes``, ``members`` and per array ``shape`` and ``dtype`` (v2) or
    ``data_type`` (v3))."""
    members = []
    for name, member in spec.members.items():
        dtype = member.dtype if hasattr(member, "dtype") else member.data_type
        members.append((name, dict(member.attributes), member.shape, dtype))
    return hierarchy_digest(dict(spec.attributes), members)


def _case_s13(task: dict[str, Any], adapter: Any, rec: Recorder, zarr_format: int) -> None:
    """S13: the object model of the prepared consolidated hierarchy (S9's): read it with
    ``GroupSpec.from_store`` (pydantic-zarr: ``from_zarr`` of the consolidated group), then
    write that spec to a new path (``to_store`` / ``to_zarr``)."""
    prepared = str(Path(task["root"]) / "hierarchies" / f"v{zarr_format}")
    with rec.timed("from_store", seconds):
        spec = adapter.model_from_store(prepared, zarr_format)
    rec.checks["from_store"] = model_digest(spec)
    with rec.timed("to_store", seconds):
        adapter.model_to_store(spec, task["out"])


def case_s13v2(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S13 in format v2."""
    _case_s13(task, adapter, rec, 2)


def case_s13v3(task: dict[str, Any], adapter: Any, rec: Recorder) -> None:
    """S13 in format v3."""
    _case_s13(task, adapter, rec, 3)


CASES: dict[str, Callable[[dict[str, Any], Any, Recorder], None]] = {
    "S1": case_s1, "S2": case_s2, "S3w": case_s3w, "S3r": case_s3r, "S4": case_s4,
    "S5": case_s5, "S6": case_s6, "S7": case_s7, "S8": case_s8, "S9v2": case_s9v2,
    "S9v3": case_s9v3, "S10": case_s10, "S11": case_s11, "S12": case_s12,
    "S13v2": case_s13v2, "S13v3": case_s13v3,
}


# --- other tasks -----------------------------------------------------------------------------
def task_info() -> dict[str, Any]:
    """Versions of everything measured, and the fused pipeline's presence."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    import zarr.core.codec_pipeline as pipelines

    versions = {name: version(name) for name in
                ("zarrkit", "zarr", "tensorstore", "numpy", "numcodecs")}
    try:  # S13's peer, a bench extra: pip install -e '.[bench]'
        versions["pydantic-zarr"] = version("pydantic-zarr")
    except PackageNotFoundError:
        pass
    return {"versions": versions, "fused": hasattr(pipelines, "FusedCodecPipeline"),
            "python": platform.python_version(), "platform": platform.platform()}


def task_generate(task: dict[str, Any]) -> dict[str, Any]:
    """Write the raw sources named in ``task["sources"]``; their crc32c by name."""
    sizes = Sizes(task["scale"])
    root = Path(task["root"])
    return {"crc": {name: generate_source(source_path(root, name), source_shape(sizes, name),
                                          SOURCE_SALTS[name])
                    for name in task["sources"]}}


def task_prepare(task: dict[str, Any]) -> dict[str, Any]:
    """Write the read datasets from their sources with one reference library, or the S9
    hierarchies (created and consolidated by zarr-python)."""
    from libs import make_adapter

    adapter: Any = make_adapter(task["lib"])
    root = Path(task["root"])
    seconds_taken = {}
    for dataset in task["datasets"]:
        t0 = time.perf_counter()
        if dataset == "hierarchies":
            count = Sizes(task["scale"]).n_arrays
            for zarr_format in (2, 3):
                path = str(root / "hierarchies" / f"v{zarr_format}")
                adapter.create_hierarchy(path, zarr_format, count)
                adapter.consolidate(path, zarr_format)
        else:
            path, spec = _dataset(task, dataset)
            data = load_source(source_path(root, DATASET_SOURCES[dataset]), spec.shape)
            adapter.write_all(adapter.create(path, spec), data)
            del data
        seconds_taken[dataset] = time.perf_counter() - t0
    return {"seconds": seconds_taken}


def task_verify(task: dict[str, Any]) -> dict[str, Any]:
    """crc32c of whole arrays read by one library: ``{"crc": {path: crc or error}}``.

    A failure on one array is reported for that array only, so one bad dataset does not
    hide the others.
    """
    from libs import make_adapter

    adapter = make_adapter(task["lib"])
    crcs: dict[str, Any] = {}
    for path, spec_json in task["arrays"]:
        spec = ArraySpec.from_json(spec_json)
        try:
            crcs[path] = checksum(adapter.read(adapter.open(path, spec), ...))
        except Exception as e:  # noqa: BLE001 - any failure is a finding to report
            crcs[path] = f"{type(e).__name__}: {e}"[:300]
    return {"crc": crcs}


def _stacked(data: np.ndarray[Any, Any], corners: np.ndarray[Any, Any],
             shape: tuple[int, ...]) -> int:
    """crc32c of the boxes of ``shape`` at ``corners`` of ``data``, stacked."""
    parts = [data[tuple(slice(int(c), int(c) + n) for c, n in zip(corner, shape, strict=True))]
             for corner in corners]
    return checksum(np.stack(parts))


def expected_checks(task_name: str, sizes: Sizes, root: Path, source_crc: dict[str, int]
                    ) -> dict[str, int]:
    """Checksums a task's reads must produce, computed with numpy from the sources."""
    specs = dataset_specs(sizes)

    def source(name: str) -> np.ndarray[Any, Any]:
        return np.memmap(source_path(root, name), dtype="<u2", mode="r",
                         shape=source_shape(sizes, name))

    if task_name in ("S2", "S3r"):
        return {"read-all" if task_name == "S2" else "read-all v2": source_crc["big"]}
    if task_name == "S4":
        spec = specs["s4"]
        corners = inner_chunk_corners(spec.shape, spec.chunks, S4_CHUNK_READS, 4)
        one_chunk = _stacked(source("big"), corners, spec.chunks)
        return {"read-all": source_crc["big"], "one chunk": one_chunk,
                "one chunk mmap": one_chunk}
    if task_name == "S5":
        return {"read-all": source_crc["s5"]}
    if task_name == "S6":
        corners = boxes(specs["s6"].shape, 16, sizes.n_reads, 6)
        value = _stacked(source("s6"), corners, (16, 16, 16))
        return {"one by one": value, "batched": value}
    if task_name == "S7":
        spec = specs["s7"]
        corners = inner_chunk_corners(spec.shape, spec.chunks, sizes.n_reads, 7)
        return {"read-all": source_crc["big"],
                "inner-chunk reads": _stacked(source("big"), corners, spec.chunks)}
    if task_name == "S11":
        return {"read-all": source_crc["s11"]}
    if task_name.startswith("S9"):
        n = sizes.n_arrays
        value = n * 1_000_003 + n * (n - 1) // 2
        return {"open": value, "open consolidated": value}
    if task_name == "S12":
        data = source("s8")
        checks = {"read-all": source_crc["s8"], "sharded read-all": source_crc["s8"]}
        for name, selection in s12_partial_reads(specs["s12s"]).items():
            checks[name] = checksum(data[selection])
        return checks
    if task_name.startswith("S13"):
        return {"from_store": expected_hierarchy_digest(sizes.n_arrays, int(task_name[-1]))}
    if task_name == "S10":
        data = s10_data()
        checks = {}
        for name, (kind, selection) in s10_selections().items():
            if kind == "oindex":
                rows, _, plane, cols = selection
                value_array = data[rows][:, :, plane][:, :, cols]
            else:
                value_array = np.asarray(data[selection])
            checks[name] = checksum(value_array)
        return checks
    return {}


def expected_hierarchy_digest(count: int, zarr_format: int) -> int:
    """:func:`common.hierarchy_digest` of the S9 hierarchy as created (group attributes
    empty; ``count`` (100,) float32 arrays with their attributes)."""
    from libs import HIERARCHY_ATTRS, member_name

    del zarr_format  # the same names, attributes, shapes and dtype in both formats
    return hierarchy_digest({}, [(member_name(i), {"index": i, **HIERARCHY_ATTRS}, (100,),
                                  "float32") for i in range(count)])


def s12_minimum_requests(root: Path, spec: ArraySpec) -> dict[str, dict[str, int]]:
    """The least requests of each S12 partial read, from the shard indexes on disk: one
    index read per shard touched, then the byte ranges of its stored inner chunks merged
    where at most :data:`common.S12_MAX_GAP` apart (``minimum``; ``contiguous``: merged
    only where they touch); with the shards and inner chunks touched and the bytes of the
    minimum's requests."""
    assert spec.shards is not None
    per_shard = tuple(s // c for s, c in zip(spec.shards, spec.chunks, strict=True))
    index_bytes = 16 * math.prod(per_shard) + 4  # (offset, nbytes) uint64 each, crc32c
    missing = 2**64 - 1
    indexes: dict[tuple[int, ...], np.ndarray[Any, Any]] = {}
    out = {}
    for name, selection in s12_partial_reads(spec).items():
        spans = [range(s.start // c, (s.stop - 1) // c + 1)
                 for s, c in zip(selection, spec.chunks, strict=True)]
        ranges: dict[tuple[int, ...], list[tuple[int, int]]] = {}
        inner = list(itertools.product(*spans))
        for chunk in inner:
            shard = tuple(i // n for i, n in zip(chunk, per_shard, strict=True))
            if shard not in indexes:
                raw = (root / "datasets" / "s12s" / "c").joinpath(
                    *map(str, shard)).read_bytes()
                indexes[shard] = np.frombuffer(raw[-index_bytes:-4], dtype="<u8").reshape(
                    *per_shard, 2)
            offset, nbytes = (int(v) for v in indexes[shard][
                tuple(i % n for i, n in zip(chunk, per_shard, strict=True))])
            found = ranges.setdefault(shard, [])
            if offset != missing:  # an inner chunk not stored is fill: nothing to fetch
                found.append((offset, nbytes))
        merged = {shard: merge_ranges(r, S12_MAX_GAP) for shard, r in ranges.items()}
        out[name] = {
            "minimum": len(ranges) + sum(map(len, merged.values())),
            "contiguous": len(ranges) + sum(len(merge_ranges(r, 0)) for r in ranges.values()),
            "shards": len(ranges), "inner chunks": len(inner),
            "bytes": len(ranges) * index_bytes + sum(n for m in merged.values() for _, n in m),
        }
    return out


def task_expected(task: dict[str, Any]) -> dict[str, Any]:
    """Expected checksums of every task in ``task["tasks"]``, and S12's least request
    counts."""
    sizes = Sizes(task["scale"])
    root = Path(task["root"])
    result: dict[str, Any] = {
        "checks": {name: expected_checks(name, sizes, root, task["source_crc"])
                   for name in task["tasks"]}}
    if "S12" in task["tasks"]:
        result["s12_minimum"] = s12_minimum_requests(root, dataset_specs(sizes)["s12s"])
    return result


def task_verify_hierarchy(task: dict[str, Any]) -> dict[str, Any]:
    """Open a hierarchy another library created: (arrays seen, sum of their indexes)."""
    from libs import make_adapter

    adapter = make_adapter(task["lib"])
    return {"seen": list(adapter.open_hierarchy(task["path"], task["zarr_format"],
                                                task["count"], False))}


def _metadata_documents(path: Path, zarr_format: int) -> dict[str, Any]:
    """Every member's metadata documents under ``path``, parsed: ``{name: document}``, the
    v2 ``.zarray`` with its ``.zattrs`` under ``attributes``."""
    documents = {}
    for member in sorted(p for p in path.iterdir() if p.is_dir()):
        if zarr_format == 3:
            document = json.loads((member / "zarr.json").read_text())
        else:
            document = json.loads((member / ".zarray").read_text())
            attrs = member / ".zattrs"
            document["attributes"] = json.loads(attrs.read_text()) if attrs.exists() else {}
        documents[member.name] = document
    return documents


def task_verify_model(task: dict[str, Any]) -> dict[str, Any]:
    """What an S13 ``to_store`` wrote: zarr-python opens it (no consolidated metadata) and
    its digest; and the member documents that differ (parsed JSON) from the prepared
    hierarchy's, which the spec was read from."""
    import zarr

    zarr_format = task["zarr_format"]
    group = zarr.open_group(store=task["path"], mode="r", zarr_format=zarr_format,
                            use_consolidated=False)
    members = [(name, array.attrs.asdict(), array.shape, array.dtype)
               for name, array in group.arrays()]
    written = _metadata_documents(Path(task["path"]), zarr_format)
    prepared = _metadata_documents(Path(task["prepared"]), zarr_format)
    differ = sorted(name for name in written.keys() | prepared.keys()
                    if written.get(name) != prepared.get(name))
    return {"digest": hierarchy_digest(group.attrs.asdict(), members),
            "expected": expected_hierarchy_digest(task["count"], zarr_format),
            "differ": differ[:5], "n_differ": len(differ),
            "files": sorted(str(p.relative_to(task["path"]))
                            for p in Path(task["path"]).rglob("*") if p.is_file())}


LIMIT_CORES: dict[str, list[float]] = {}
"""CPU seconds per wall second of each limit's runs, keyed like the rates."""


def _median_rate(function: Callable[[], object], nbytes: int, repeat: int) -> list[float]:
    """GB/s of ``repeat`` runs of ``function``; the cores each run kept busy go to
    :data:`LIMIT_CORES` under the key ``_record_cores`` names next."""
    rates = []
    cores = []
    for _ in range(repeat):
        cpu0 = _cpu_seconds()
        t0 = time.perf_counter()
        function()
        wall = time.perf_counter() - t0
        rates.append(nbytes / wall / 1e9)
        cores.append((_cpu_seconds() - cpu0) / wall)
    LIMIT_CORES.setdefault("_last", []).extend(cores)
    return rates


def _record_cores(name: str) -> None:
    """File the cores of the last measured limit under ``name``."""
    LIMIT_CORES[name] = LIMIT_CORES.pop("_last", [])


def _chunk_files(path: Path) -> list[Path]:
    """The chunk (or shard) files of an array directory: everything but metadata."""
    return [p for p in path.rglob("*") if p.is_file() and p.name not in
            ("zarr.json", ".zarray", ".zattrs", ".zgroup")]


def _limit_copyto(source: np.ndarray[Any, Any], repeat: int) -> list[float]:
    """numpy.copyto of the whole source into a faulted-in destination (memcpy)."""
    destination = np.empty_like(source)
    destination.fill(1)  # fault the pages in, so copyto measures copying only
    return _median_rate(lambda: np.copyto(destination, source), source.nbytes, repeat)


def _limit_copyto_new(source: np.ndarray[Any, Any], repeat: int) -> list[float]:
    """numpy.copyto into a new array each time: what a read-all into a new array cannot
    avoid (first-touch page faults of the destination, costly on this VM) plus memcpy."""
    def copy_new() -> None:
        destination = np.empty_like(source)
        np.copyto(destination, source)

    return _median_rate(copy_new, source.nbytes, repeat)


def _limit_readinto(path: Path, pool: Any, repeat: int) -> tuple[list[float], int]:
    """readinto of every chunk file under ``path`` on the pool; (rates, file bytes)."""
    sized = [(f, f.stat().st_size) for f in _chunk_files(path)]
    total = sum(s for _, s in sized)
    buffers = [bytearray(size) for _, size in sized]

    def read_one(item: tuple[tuple[Path, int], bytearray]) -> None:
        (name, size), buffer = item
        with open(name, "rb", buffering=0) as f:
            f.readinto(buffer)

    items = list(zip(sized, buffers, strict=True))
    return _median_rate(lambda: list(pool.map(read_one, items)), total, repeat), total


def _limit_codec(source: np.ndarray[Any, Any], pool: Any, repeat: int
                 ) -> tuple[list[float], list[float], float]:
    """numcodecs Blosc zstd 3 shuffle over the 128^3 chunks on the pool: (encode rates,
    decode rates, compression ratio)."""
    import numcodecs

    codec = numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.SHUFFLE)
    side = 128
    chunks = [np.ascontiguousarray(source[z:z + side, y:y + side, x:x + side])
              for z in range(0, source.shape[0], side)
              for y in range(0, source.shape[1], side)
              for x in range(0, source.shape[2], side)]
    encoded: list[Any] = []

    def encode_all() -> None:
        encoded[:] = list(pool.map(codec.encode, chunks))

    encode = _median_rate(encode_all, source.nbytes, repeat)
    _record_cores("blosc encode")
    ratio = source.nbytes / sum(len(e) for e in encoded)
    pairs = list(zip(encoded, [np.empty_like(c) for c in chunks], strict=True))

    def decode_one(item: tuple[Any, np.ndarray[Any, Any]]) -> None:
        codec.decode(item[0], out=item[1])

    decode = _median_rate(lambda: list(pool.map(decode_one, pairs)), source.nbytes, repeat)
    _record_cores("blosc decode")
    return encode, decode, ratio


def _numpy_oindex(data: np.ndarray[Any, Any], rows: Any, plane: Any, cols: Any
                  ) -> np.ndarray[Any, Any]:
    """numpy's outer indexing for S10's oindex selection."""
    return data[rows][:, :, plane][:, :, cols]


def _numpy_copy(data: np.ndarray[Any, Any], selection: Any) -> np.ndarray[Any, Any]:
    """A numpy selection copied out, as every library returns a copy."""
    return np.array(data[selection])


def _limit_numpy_s10() -> dict[str, float]:
    """numpy's own µs per S10 selection (copying): the floor no library can beat."""
    data = s10_data()
    floors = {}
    for name, (kind, selection) in s10_selections().items():
        function: Callable[[], object]
        if kind == "oindex":
            rows, _, plane, cols = selection
            function = functools.partial(_numpy_oindex, data, rows, plane, cols)
        else:
            function = functools.partial(_numpy_copy, data, selection)
        calls = 2000
        t0 = time.perf_counter()
        for _ in range(calls):
            function()
        floors[name] = (time.perf_counter() - t0) / calls * 1e6
    return floors


def task_limits(task: dict[str, Any]) -> dict[str, Any]:
    """The physical limits beside the figures: lists of rates in GB/s."""
    from concurrent.futures import ThreadPoolExecutor

    sizes = Sizes(task["scale"])
    root = Path(task["root"])
    repeat = task["repeat"]
    out: dict[str, Any] = {}
    source = load_source(source_path(root, "big"), sizes.big)
    out["copyto"] = _limit_copyto(source, repeat)
    _record_cores("copyto")
    out["copyto new"] = _limit_copyto_new(source, repeat)
    _record_cores("copyto new")
    with ThreadPoolExecutor(THREADS) as pool:
        for dataset in ("s2", "s4"):
            path = root / "datasets" / dataset
            if path.exists():
                rates, total = _limit_readinto(path, pool, repeat)
                out[f"readinto {dataset}"] = rates
                out[f"readinto {dataset} bytes"] = total
                _record_cores(f"readinto {dataset}")
        encode, decode, ratio = _limit_codec(source, pool, repeat)
    out["blosc encode"], out["blosc decode"], out["blosc ratio"] = encode, decode, ratio
    out["numpy s10"] = _limit_numpy_s10()
    out["cores"] = LIMIT_CORES
    return out


def main() -> None:
    """Run the task given as JSON in argv[1] and print its result."""
    task = json.loads(sys.argv[1])
    kind = task["task"]
    if kind == "info":
        result = task_info()
    elif kind == "generate":
        result = task_generate(task)
    elif kind == "expected":
        result = task_expected(task)
    elif kind == "prepare":
        result = task_prepare(task)
    elif kind == "verify":
        result = task_verify(task)
    elif kind == "verify_hierarchy":
        result = task_verify_hierarchy(task)
    elif kind == "verify_model":
        result = task_verify_model(task)
    elif kind == "limits":
        result = task_limits(task)
    elif kind == "measure":
        import numcodecs.blosc

        # Blosc's own threads, used when a library calls it from the main thread: as many
        # as the run gives the library (T's one-thread zarrkit runs call numcodecs' Blosc
        # inline on the main thread, where 2 Blosc threads would make a second core).
        numcodecs.blosc.set_nthreads(task.get("threads", THREADS))
        from libs import make_adapter

        adapter = make_adapter(task["lib"])
        rec = Recorder()
        case = CASES[task["case"]]
        if task.get("profile"):
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
            case(task, adapter, rec)
            profiler.disable()
            with open(task["profile"], "w") as f:
                stats = pstats.Stats(profiler, stream=f)
                stats.sort_stats("tottime").print_stats(25)
                stats.sort_stats("cumulative").print_stats(40)
        else:
            case(task, adapter, rec)
        result = rec.result()
    else:
        raise ValueError(f"unknown task {kind!r}")
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
