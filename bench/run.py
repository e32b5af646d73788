"""Run zarrkit's benchmark suite (cases S1–S13 and T of BENCHMARKS.md) against its peers.

    .venv/bin/python bench/run.py --out docs/benchmarks.md   # full mode (what `make bench` runs)
    .venv/bin/python bench/run.py --quick               # sizes / 16, prints the ratio table
    .venv/bin/python bench/run.py --cases S1,S5 --repeat 3 --out /tmp/b.md
    .venv/bin/python bench/run.py --cases S13             # one case, full size, printed
    .venv/bin/python bench/run.py --quick --cases T       # T and the cases it re-times

Protocol: each (case, library) measurement runs in a fresh child process (``worker.py``),
libraries interleaved and their order rotated between repeats; the report gives the median
and min–max over the repeats. Read cases read identical bytes, written once by tensorstore
and checked with every library before any timing; every timed read is checksummed against
the source data too, and zarrkit's writes are read back with tensorstore. S13 compares
zarrkit's object model with pydantic-zarr's (``CASE_LIBS``) instead of the Zarr peers.
S12 reads over HTTP from a server the run starts in a process of its own on 127.0.0.1
(``http_server.py``), which counts the requests. T (thread scaling) runs zarrkit again on the
read and write cases with one thread, and with one thread on its Python engine (for the
per-chunk CPU table), interleaved with the main runs of the same cases.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import http_server
from common import (
    DATASET_SOURCES,
    LIB_LABELS,
    LIBS,
    S10_CHUNKS,
    S10_SHAPE,
    S12_MAX_GAP,
    S12_PARTIAL_READS,
    THREADS,
    ArraySpec,
    Sizes,
    case_libs,
    child_env,
    dataset_specs,
    write_specs,
)
from report import (
    METRICS,
    ONE_THREAD,
    PER_CHUNK_ROWS,
    PYTHON_ENGINE,
    SCALING_MIN,
    SCALING_ROWS,
    SCALING_TARGET,
    Context,
    Results,
    Samples,
    limits_table,
    per_chunk_table,
    ratio_text_table,
    resources_table,
    results_table,
    scaling_table,
)

BENCH_DIR = Path(__file__).resolve().parent
WORKER = BENCH_DIR / "worker.py"

TASKS = ("S1", "S2", "S3w", "S3r", "S4", "S5", "S6", "S7", "S8", "S9v2", "S9v3", "S10",
         "S11", "S12", "S13v2", "S13v3")
"""Child tasks in run order; a task belongs to the case its name starts with."""

TASK_SOURCES = {"S1": "big", "S2": "big", "S3w": "big", "S3r": "big", "S4": "big",
                "S5": "s5", "S6": "s6", "S7": "big", "S8": "s8", "S11": "s11", "S12": "s8"}
TASK_DATASETS = {"S2": ("s2",), "S3r": ("s3",), "S4": ("s4",), "S5": ("s5",), "S6": ("s6",),
                 "S7": ("s7",), "S11": ("s11",), "S12": ("s12", "s12s")}
"""The prepared datasets each read task reads."""
WRITE_TASKS = {"S1": "big", "S3w": "big", "S5": "s5", "S8": "s8", "S11": "s11"}
REFERENCE_WRITER = "tensorstore"
"""Writes the read datasets: the reference implementation, so zarrkit's reads are checked
against bytes it did not produce."""

VARIANT_ENV = {
    ONE_THREAD: {"ZARRKIT_THREADS": "1"},
    PYTHON_ENGINE: {"ZARRKIT_THREADS": "1", "ZARRKIT_ENGINE": "python"},
}
"""T's extra zarrkit runs: environment over :func:`common.child_env` (its 2 threads are the
main runs' numbers, reused)."""
VARIANT_ROWS = {ONE_THREAD: SCALING_ROWS, PYTHON_ENGINE: PER_CHUNK_ROWS}
"""The rows each variant is reported on; it runs the tasks of those rows."""
VARIANT_REPEAT = 3
"""Repeats of each variant (fewer than the main runs' 5, to bound the run time; the
report's ratios compare medians)."""
REPEAT_CAPS: dict[tuple[str, str], int] = {}
"""(task, library) -> at most this many repeats, for a library too slow on a case to time
it 5 times in the run's budget (the report says so). Empty: zarr-python's S11 child, the
slowest, takes about 30 s in full mode (65,536 inner chunks each way)."""


def log(message: str) -> None:
    """Progress on stderr, so stdout carries only the ratio table."""
    print(message, file=sys.stderr, flush=True)


def case_of(task: str) -> str:
    """The case (S1..S13) a task belongs to."""
    match = re.match(r"S\d+", task)
    assert match is not None
    return match.group()


@dataclass
class Child:
    """What one child process produced."""

    ok: bool
    result: dict[str, Any]
    error: str
    maxrss_kib: int
    cpu: float
    wall: float


def run_child(task: dict[str, Any], timeout: float, env: dict[str, str] | None = None
              ) -> Child:
    """Run ``worker.py`` on ``task`` in a fresh process; its resource usage comes from
    ``wait4``, so it covers exactly that child."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, str(WORKER), json.dumps(task)],
                                stdout=out, stderr=err, env=env or child_env(),
                                cwd=BENCH_DIR, start_new_session=True)
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        # wait4 reaped the child; tell Popen so it does not try again.
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    result: dict[str, Any] = {}
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
    ok = proc.returncode == 0 and "RESULT " in stdout
    error = ""
    if killed.is_set():
        error = f"timed out after {timeout:.0f} s"
    elif not ok:
        tail = [line for line in stderr.strip().splitlines() if line.strip()]
        error = (tail[-1] if tail else f"exit code {proc.returncode}")[:300]
    return Child(ok, result, error, int(usage.ru_maxrss),
                 usage.ru_utime + usage.ru_stime, wall)


class Suite:
    """One run of the suite: its data directory, its results and its notes."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.sizes = Sizes(16 if args.quick else 1)
        base = os.environ.get("TMPDIR") or "/tmp"
        self.root = Path(tempfile.mkdtemp(prefix="zarrkit-bench-", dir=base))
        self.timeout = args.timeout or (240.0 if args.quick else 900.0)
        cases = set(args.cases)
        # T re-times the read and write cases: it needs their main (2-thread) runs.
        self.variant_tasks: dict[str, list[str]] = {}
        if "T" in cases:
            for variant, rows in VARIANT_ROWS.items():
                for task in dict.fromkeys(row.split(":", 1)[0] for row in rows):
                    self.variant_tasks.setdefault(task, []).append(variant)
            cases |= {case_of(task) for task in self.variant_tasks}
        self.tasks = [t for t in TASKS if case_of(t) in cases]
        self.results: Results = {}
        self.variants: dict[str, Results] = {variant: {} for variant in VARIANT_ENV}
        self.notes: list[str] = []
        self.verification: list[str] = []
        self.source_crc: dict[str, int] = {}
        self.limits: dict[str, Any] = {}
        self.info: dict[str, Any] = {}
        self.libs: list[str] = []
        self.bad_datasets: dict[str, set[str]] = {}
        self.expected: dict[str, dict[str, int]] = {}
        self.s12_minimum: dict[str, dict[str, int]] = {}
        self.http_served: dict[str, list[dict[str, Any]]] = {}
        self.written_files: dict[str, dict[str, list[str]]] = {}

    # --- set-up --------------------------------------------------------------------------
    def base_task(self, **fields: Any) -> dict[str, Any]:
        """Fields every child task carries."""
        return {"root": str(self.root), "scale": self.sizes.scale, **fields}

    def detect(self) -> None:
        """Library versions, and whether zarr-python has the fused pipeline (and
        pydantic-zarr, S13's peer)."""
        child = run_child({"task": "info"}, 120)
        if not child.ok:
            raise SystemExit(f"cannot import the libraries: {child.error}")
        self.info = child.result
        self.libs = ["zarrkit", "zarr"]
        if self.info["fused"]:
            self.libs.append("zarr-fused")
        self.libs.append("tensorstore")
        if any(case_of(t) == "S13" for t in self.tasks):
            if "pydantic-zarr" in self.info["versions"]:
                self.libs.append("pydantic-zarr")
            else:
                self.notes.append("S13: pydantic-zarr is not installed (`pip install -e "
                                  "'.[bench]'`); zarrkit is timed alone.")

    def task_libs(self, task: str) -> list[str]:
        """The libraries a task is measured with, in report order."""
        return case_libs(case_of(task), self.libs)

    def generate(self) -> None:
        """The raw source data the tasks need, one plane at a time (in a child, so this
        process stays small: a child's ``ru_maxrss`` starts from its parent's at fork)."""
        needed = sorted({TASK_SOURCES[t] for t in self.tasks if t in TASK_SOURCES} | {"big"})
        t0 = time.perf_counter()
        child = run_child(self.base_task(task="generate", sources=needed), self.timeout)
        if not child.ok:
            raise SystemExit(f"cannot generate the data: {child.error}")
        self.source_crc = child.result["crc"]
        log(f"sources {', '.join(needed)}: {time.perf_counter() - t0:.1f} s")

    def prepare(self) -> None:
        """Write the read datasets once and check every library reads the same values."""
        datasets = sorted({d for t in self.tasks for d in TASK_DATASETS.get(t, ())}
                          | {"s2", "s4"})  # the file-read limits need s2 and s4
        specs = dataset_specs(self.sizes)
        t0 = time.perf_counter()
        child = run_child(self.base_task(task="prepare", lib=REFERENCE_WRITER,
                                         datasets=datasets), self.timeout)
        if not child.ok:
            raise SystemExit(f"{REFERENCE_WRITER} could not write the datasets: {child.error}")
        log(f"datasets {', '.join(datasets)} written by {REFERENCE_WRITER}: "
            f"{time.perf_counter() - t0:.1f} s")
        paths = {d: str(self.root / "datasets" / d) for d in datasets}
        arrays = [(paths[d], specs[d].to_json()) for d in datasets]
        for lib in (lib for lib in self.libs if lib in LIBS):
            t0 = time.perf_counter()
            child = run_child({"task": "verify", "lib": lib, "arrays": arrays}, self.timeout)
            for dataset in datasets:
                expected = self.source_crc[DATASET_SOURCES[dataset]]
                got = child.result.get("crc", {}).get(paths[dataset]) if child.ok else None
                if not child.ok:
                    status = f"error: {child.error}"
                elif isinstance(got, str):
                    status = f"error: {got}"
                elif got != expected:
                    status = "**MISMATCH** (different values)"
                else:
                    status = "same values"
                if status != "same values":
                    self.bad_datasets.setdefault(dataset, set()).add(lib)
                    self.notes.append(f"Dataset {dataset}: {LIB_LABELS[lib]} read back: "
                                      f"{status}; its timings on it are left out.")
                self.verification.append(f"| {dataset} | {_describe(specs[dataset])} | "
                                         f"{LIB_LABELS[lib]} | {status} |")
            log(f"  verify with {lib}: {time.perf_counter() - t0:.1f} s")
        if any(case_of(t) in ("S9", "S13") for t in self.tasks):
            t0 = time.perf_counter()
            child = run_child(self.base_task(task="prepare", lib="zarr",
                                             datasets=["hierarchies"]), self.timeout)
            if not child.ok:
                raise SystemExit(f"zarr-python could not write the hierarchies: {child.error}")
            log(f"hierarchies written by zarr-python: {time.perf_counter() - t0:.1f} s")
        child = run_child(self.base_task(task="expected", tasks=self.tasks,
                                         source_crc=self.source_crc), self.timeout)
        if not child.ok:
            raise SystemExit(f"cannot compute the expected values: {child.error}")
        self.expected = child.result["checks"]
        self.s12_minimum = child.result.get("s12_minimum", {})

    def measure_limits(self) -> None:
        """memcpy, file reads and the codec on 2 threads, in a child like the cases."""
        os.sync()  # the datasets just written must not be flushed during the measurement
        t0 = time.perf_counter()
        child = run_child(self.base_task(task="limits", repeat=5), self.timeout)
        if child.ok:
            self.limits = child.result
        else:
            self.notes.append(f"The physical limits could not be measured: {child.error}")
        log(f"limits: {time.perf_counter() - t0:.1f} s")

    # --- measurements ----------------------------------------------------------------------
    def samples(self, task: str, key: str, lib: str, variant: str | None = None) -> Samples:
        """The samples of one row and library (of a T variant's results, given one),
        created on first use."""
        results = self.results if variant is None else self.variants[variant]
        return results.setdefault(f"{task}:{key}", {}).setdefault(lib, Samples())

    def record(self, task: str, lib: str, child: Child, expected: dict[str, int],
               variant: str | None = None) -> None:
        """Fold one child's result into the samples (of ``variant``'s results)."""
        keys = [m.key for m in METRICS if m.task == task]
        if not child.ok:
            for key in keys:
                self.samples(task, key, lib, variant).error = child.error
            return
        result = child.result
        for key, values in result["metrics"].items():
            samples = self.samples(task, key, lib, variant)
            samples.values.append(values["value"])
            samples.walls.append(values["wall"])
            samples.cpus.append(values["cpu"])
            samples.rss_kib.append(child.maxrss_kib)
            engine = result.get("engines", {}).get(key)
            if engine is not None:
                samples.engines.append(engine)
            got = result["checks"].get(key)
            if key in expected and got is not None and got != expected[key]:
                samples.wrong = "checksum differs from the source data"
        if task == "S8" and variant is None:
            samples = self.samples(task, "rss", lib)
            samples.values.append((child.maxrss_kib - result["rss_baseline_kib"]) / 1024)

    def verify_model_write(self, task: str, lib: str, out: Path) -> None:
        """S13: zarr-python opens what ``to_store`` wrote, which must hold the hierarchy
        read (names, attributes, shapes, dtypes) and the same member documents as the
        prepared one."""
        zarr_format = int(task[-1])
        prepared = self.root / "hierarchies" / f"v{zarr_format}"
        child = run_child({"task": "verify_model", "path": str(out), "prepared": str(prepared),
                           "zarr_format": zarr_format, "count": self.sizes.n_arrays},
                          self.timeout)
        result = child.result
        problem = child.error
        if child.ok and result["digest"] != result["expected"]:
            problem = "different names, attributes, shapes or dtypes"
        elif child.ok and result["n_differ"]:
            problem = (f"{result['n_differ']} member documents differ from the prepared "
                       f"hierarchy's, e.g. {', '.join(result['differ'])}")
        if problem:
            self.samples(task, "to_store", lib).wrong = f"zarr-python reads back: {problem}"
            self.notes.append(f"{task}: {LIB_LABELS[lib]}'s to_store output, read back with "
                              f"zarr-python: {problem}.")
        else:
            self.written_files.setdefault(task, {})[lib] = result["files"]
        log(f"  {task} {lib} output read back: {'FAILED' if problem else 'ok'} "
            f"({len(result.get('files', []))} files)")

    def compare_written_files(self) -> None:
        """S13: note the files one library's to_store wrote and the other's did not."""
        for task, by_lib in self.written_files.items():
            if len(by_lib) < 2:
                continue
            (lib_a, files_a), (lib_b, files_b) = list(by_lib.items())[:2]
            only_a = sorted(set(files_a) - set(files_b))
            only_b = sorted(set(files_b) - set(files_a))
            if only_a or only_b:
                self.notes.append(
                    f"{task} to_store files: {len(files_a)} by {LIB_LABELS[lib_a]}, "
                    f"{len(files_b)} by {LIB_LABELS[lib_b]}; only {LIB_LABELS[lib_a]}: "
                    f"{', '.join(only_a) or 'none'}; only {LIB_LABELS[lib_b]}: "
                    f"{', '.join(only_b) or 'none'}.")

    def verify_write(self, task: str, lib: str, out: Path, variant: str | None = None
                     ) -> None:
        """Read a write case's output back with tensorstore (or zarr-python for S9); a
        failure marks the write rows (of ``variant``'s results) wrong."""
        if task.startswith("S13"):
            self.verify_model_write(task, lib, out)
            return
        if task.startswith("S9"):
            check = {"task": "verify_hierarchy", "lib": "zarr", "path": str(out),
                     "zarr_format": int(task[-1]), "count": self.sizes.n_arrays}
            child = run_child(check, self.timeout)
            n = self.sizes.n_arrays
            ok = child.ok and child.result.get("seen") == [n, n * (n - 1) // 2]
        else:
            spec = write_specs(self.sizes)[task]
            child = run_child({"task": "verify", "lib": REFERENCE_WRITER,
                               "arrays": [(str(out), spec.to_json())]}, self.timeout)
            got = child.result.get("crc", {}).get(str(out)) if child.ok else None
            ok = got == self.source_crc[WRITE_TASKS[task]]
            if not ok and isinstance(got, str):
                child.error = got
        if not ok:
            reader = "zarr-python" if task.startswith("S9") else REFERENCE_WRITER
            problem = child.error or "different values"
            # Only the write rows: S5's and S11's read-alls read the prepared dataset, not
            # this output, and are checked on their own.
            for key in ("create",) if task.startswith("S9") else (
                    m.key for m in METRICS if m.task == task and m.key.startswith("write")):
                self.samples(task, key, lib, variant).wrong = f"{reader} reads back: {problem}"
            self.notes.append(f"{task}: {_run_label(lib, variant)}'s output, read back with "
                              f"{reader}: {problem}.")
        log(f"  {task} {_run_label(lib, variant)} output read back: "
            f"{'ok' if ok else 'FAILED'}")

    @contextlib.contextmanager
    def server(self, task: str) -> Iterator[dict[str, Any]]:
        """The fields a task's children need besides :meth:`base_task`: for S12, the URL of
        an HTTP server serving the prepared datasets, started in a process of its own for
        the task's duration (so it never shares a GIL with the measured client)."""
        if task != "S12":
            yield {}
            return
        with http_server.serve(self.root / "datasets", env=child_env()) as url:
            log(f"{task}: HTTP server at {url}")
            yield {"url": url}

    def measure(self) -> None:
        """Every task, repeated, with the libraries interleaved and rotated."""
        for task in self.tasks:
            with self.server(task) as fields:
                self.measure_task(task, fields)
        self.compare_written_files()

    def runs(self, task: str, repeat: int) -> list[tuple[str, str | None]]:
        """The (library, T variant or None) runs of one repeat of a task, in report order:
        each library's main run while it has repeats left, then T's zarrkit variants in
        their first :data:`VARIANT_REPEAT` repeats (interleaved with the main runs, so a
        2-thread / 1-thread ratio compares runs made at the same time)."""
        runs: list[tuple[str, str | None]] = [
            (lib, None) for lib in self.task_libs(task)
            if repeat < min(self.args.repeat, REPEAT_CAPS.get((task, lib), self.args.repeat))]
        if repeat < min(self.args.repeat, VARIANT_REPEAT):
            runs += [("zarrkit", variant) for variant in self.variant_tasks.get(task, ())]
        return runs

    def measure_task(self, task: str, fields: dict[str, Any]) -> None:
        """One task, repeated, with the libraries (and T's variants) interleaved and
        rotated."""
        out_root = self.root / "out"
        expected = self.expected.get(task, {})
        datasets = TASK_DATASETS.get(task, ())
        failed: set[tuple[str, str | None]] = set()
        for repeat in range(self.args.repeat):
            runs = self.runs(task, repeat)
            shift = repeat % max(len(runs), 1)
            for lib, variant in runs[shift:] + runs[:shift]:
                if (lib, variant) in failed:
                    continue
                bad = [d for d in datasets if lib in self.bad_datasets.get(d, set())]
                if bad:
                    # It could not read the dataset right: its timing means nothing.
                    failed.add((lib, variant))
                    for metric in METRICS:
                        if metric.task == task:
                            self.samples(task, metric.key, lib, variant).error = (
                                f"not timed: could not read dataset {', '.join(bad)} back")
                    continue
                name = _run_label(lib, variant)
                out = out_root / f"{task}-{lib}-{variant or 'main'}-{repeat}".replace(" ", "_")
                env = child_env()
                env.update(VARIANT_ENV.get(variant or "", {}))
                # Flush earlier writes now, so their writeback does not land in this
                # child's timed region; the page cache stays warm.
                os.sync()
                child = run_child(self.base_task(task="measure", case=task, lib=lib,
                                                 out=str(out),
                                                 threads=int(env["ZARRKIT_THREADS"]),
                                                 **fields),
                                  self.timeout, env=env)
                self.record(task, lib, child, expected, variant)
                summary = ", ".join(f"{k}={v['value']:.4g}" for k, v in
                                    child.result.get("metrics", {}).items())
                log(f"{task} {name} #{repeat}: {summary or child.error} "
                    f"({child.wall:.1f} s, rss {child.maxrss_kib / 1024:.0f} MiB)")
                if not child.ok:
                    failed.add((lib, variant))
                    self.notes.append(f"{task}: {name} failed: {child.error}")
                elif repeat == 0 and (task.startswith("S13") or lib == "zarrkit" and (
                        task in WRITE_TASKS or task.startswith("S9"))):
                    # S13 checks both libraries' output: they must do the same work.
                    # T's variants write through other code paths: checked as well.
                    self.verify_write(task, lib, out, variant)
                if child.ok and "http" in child.result and variant is None:
                    self.http_served.setdefault(lib, []).append(child.result["http"])
                retire_output(out)

    def http_notes(self) -> list[str]:
        """S12: what the server counted for each library (the first repeat; request counts
        are the same in every repeat, or the note says so), and the least counts."""
        if not self.http_served:
            return []
        notes = []
        for key, what in S12_PARTIAL_READS.items():
            least = self.s12_minimum.get(key)
            if least:
                notes.append(
                    f"S12 {what}: touches {least['inner chunks']} inner chunks in "
                    f"{least['shards']} shard{'s' if least['shards'] != 1 else ''}; the least "
                    f"requests are {least['minimum']} "
                    f"(one suffix-range index read per shard, then the inner chunks' byte "
                    f"ranges merged where at most {S12_MAX_GAP // 1024} KiB apart: "
                    f"{least['bytes']} bytes; merging only ranges that touch would take "
                    f"{least['contiguous']}).")
        for lib in LIB_LABELS:
            runs = self.http_served.get(lib)
            if not runs:
                continue
            parts = []
            for key, served in runs[0].items():
                counts = sorted({run[key]["requests"] for run in runs if key in run})
                count = "/".join(map(str, counts))
                statuses = ", ".join(f"{n}x {status}" for status, n in
                                     sorted(served["statuses"].items()))
                parts.append(f"{key}: {count} requests, {served['bytes'] / 2**20:.2f} MiB "
                             f"({statuses})")
            notes.append(f"S12 server-side counts, {LIB_LABELS[lib]} (read-alls include "
                         f"opening the array): {'; '.join(parts)}.")
            first = runs[0]
            for key in S12_PARTIAL_READS:
                log_ = first.get(key, {}).get("log", [])
                if log_:
                    requests = ", ".join(f"{path.rsplit('/c/', 1)[-1]} {rng or 'whole'}"
                                         for _, path, rng, _, _ in log_[:12])
                    more = len(log_) > 12 or first[key]["requests"] > len(log_)
                    notes.append(f"S12 {key}, {LIB_LABELS[lib]}'s requests (shard, Range): "
                                 f"{requests}{', ...' if more else ''}.")
        return notes

    def profile(self, directory: Path) -> None:
        """cProfile of one zarrkit child per task, twice: with the measured thread count
        (time spent in the pool shows as lock waits in the main thread, since cProfile
        sees one thread) and with one thread, where all the work is in the profile."""
        directory.mkdir(parents=True, exist_ok=True)
        for threads in (THREADS, 1):
            env = child_env()
            env["ZARRKIT_THREADS"] = str(threads)
            for task in self.tasks:
                out = self.root / "out" / f"profile-{task}-{threads}thread"
                target = directory / f"{task}-{threads}thread.txt"
                os.sync()
                with self.server(task) as fields:
                    child = run_child(self.base_task(task="measure", case=task, lib="zarrkit",
                                                     out=str(out), profile=str(target),
                                                     threads=threads, **fields),
                                      self.timeout, env=env)
                retire_output(out)
                log(f"profile {task}, {threads} thread(s): "
                    f"{target if child.ok else child.error}")

    def cleanup(self) -> None:
        """Remove the data directory unless asked to keep it."""
        if self.args.keep:
            log(f"data kept in {self.root}")
        else:
            shutil.rmtree(self.root, ignore_errors=True)


def retire_output(out: Path) -> None:
    """Free a finished run's data now and its files at the end of the run: every file is
    emptied (its blocks and page cache go back) and the emptied tree stays in ``out`` until
    :meth:`Suite.cleanup` removes the whole data directory.

    Deleting the files between runs made the next run's writes pay for it, whichever library
    wrote: on an ext4 without a journal (this machine's), the inode allocator skips inodes
    freed in the last 60 s and re-checks each of them for every file it creates, so a write of
    4,096 files after a deletion of 4,096 ran 2-3x slower, all in the kernel (``perf``:
    ``recently_deleted`` under ``ext4_create``). Emptied files keep their inodes, so every
    timed write allocates as the first one of a run does.
    """
    for directory, _, files in os.walk(out):
        for name in files:
            with contextlib.suppress(OSError):
                os.truncate(os.path.join(directory, name), 0)


def _run_label(lib: str, variant: str | None) -> str:
    """A library's label, with T's variant if any: ``zarrkit (1 thread)``."""
    return LIB_LABELS[lib] + (f" ({variant})" if variant else "")


def _describe(spec: ArraySpec) -> str:
    """One line naming a dataset's format, shape, layout and codec."""
    shape = "x".join(map(str, spec.shape))
    layout = "x".join(map(str, spec.chunks))
    if spec.shards:
        layout = "x".join(map(str, spec.shards)) + " shards of " + layout
    return f"v{spec.zarr_format} {shape} {spec.dtype}, {layout} chunks, {spec.codec}"


def _cpu_model() -> str:
    """The CPU model name, from /proc/cpuinfo."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory() -> str:
    """Total memory, from /proc/meminfo."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def render(suite: Suite, command: str, elapsed: float) -> tuple[str, str]:
    """The markdown report and the stdout ratio table."""
    sizes = suite.sizes
    s8_spec = write_specs(sizes)["S8"]
    shard_bytes = math.prod(s8_spec.shards or s8_spec.chunks) * 2
    ctx = Context(suite.results, suite.limits, sizes, shard_bytes, s8_spec.nbytes,
                  {f"S12:{key}": least["minimum"] for key, least in suite.s12_minimum.items()},
                  {variant: results for variant, results in suite.variants.items() if results},
                  chunk_counts(sizes))
    versions = suite.info.get("versions", {})
    zarr_version = versions.get("zarr", "?")
    fused_note = f"n/a (not in zarr {zarr_version})"
    mode = "quick (sizes / 16)" if sizes.scale != 1 else "full"
    lines = [
        "# zarrkit benchmarks",
        "",
        "Generated by `bench/run.py` (the suite of `BENCHMARKS.md`); do not edit by hand.",
        "",
        f"- Command: `{command}`",
        f"- Mode: {mode}; {suite.args.repeat} repeats per (case, library), each in a fresh "
        f"process; total run time {elapsed / 60:.1f} min.",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M %Z')}",
        "",
        "## Machine",
        "",
        f"- CPU: {_cpu_model()}, {os.cpu_count()} logical CPUs; memory {_memory()}",
        f"- OS: {suite.info.get('platform', platform.platform())}",
        f"- Python {suite.info.get('python', platform.python_version())}; "
        + ", ".join(f"{name} {v}" for name, v in versions.items()),
        f"- zarr-python `FusedCodecPipeline`: "
        f"{'present, measured' if suite.info.get('fused') else fused_note}",
        "",
        "## How to read",
        "",
        "- Each cell: median over the repeats, (min–max), then the median peak RSS of the "
        "whole child process (`ru_maxrss` from `wait4`: imports, source data and output "
        "included).",
        "- **zarrkit ratio** is against the fastest peer of the same row: peer time / "
        "zarrkit time, or zarrkit rate / peer rate. **> 1 means zarrkit is faster** "
        "(for the RSS row: lighter).",
        "- GB/s are 10^9 bytes of uncompressed array data per second. The machine is "
        "shared and noisy: compare ratios, not absolutes.",
        "- The timed region opens (or creates) the array and does the operation; imports "
        "and loading the source data are outside it.",
        "- S10's calls take microseconds: each process times its 0.3 s of calls in 11 "
        "blocks and its value is the median block's time per call (a burst of the VM's "
        "noise moves a block, not the process's value); the row is then the median of "
        "the processes as for the others.",
        f"- Every library gets {THREADS} threads: `ZARRKIT_THREADS={THREADS}`; zarr-python "
        f"`threading.max_workers={THREADS}` (its executor, where codecs and file I/O run) "
        "with `async.concurrency=10` (its default: in-flight chunk coroutines, not "
        f"threads); tensorstore `data_copy_concurrency` and `file_io_concurrency` limits "
        f"{THREADS}, cache pool 0 (its default); Blosc's own thread count "
        f"{THREADS}. `write_empty_chunks` is on everywhere.",
        "",
        "## Results",
        "",
        *results_table(ctx, suite.libs, fused_note),
        "",
        *_variant_sections(suite, ctx),
        "## Physical limits (same run)",
        "",
        *limits_table(suite.limits, math.prod(sizes.big) * 2),
        "",
        "## Wall and CPU time of the timed regions (medians, seconds)",
        "",
        "CPU time is `getrusage(RUSAGE_SELF)` of the child over the timed region, all threads; "
        "CPU / wall near 2 means both cores were busy.",
        "",
        *resources_table(ctx, suite.libs),
        "",
        "## Data and verification",
        "",
        "Data is image-like uint16: a smooth field (sums of sines) plus Gaussian noise "
        "(sigma 4), seeded per plane, generated one plane at a time into raw files. "
        f"The read datasets were written once by {LIB_LABELS[REFERENCE_WRITER]} and read back "
        "whole by every library (crc32c against the source) before any timing; every timed "
        "read is checksummed against the source too, and zarrkit's writes (first repeat) are "
        "read back by tensorstore (T's one-thread and Python-engine writes too; S9: "
        "zarr-python; S13: both libraries' to_store output, by zarr-python).",
        "",
        "| dataset | layout | library | read back |",
        "|---|---|---|---|",
        *suite.verification,
        "",
        "## Notes",
        "",
        *[f"- {note}" for note in _standard_notes(suite) + suite.http_notes() + suite.notes],
        "",
    ]
    return "\n".join(lines), ratio_text_table(ctx)


def chunk_counts(sizes: Sizes) -> dict[str, tuple[int, bool]]:
    """The per-chunk table's divisors: (chunks the row reads or writes, whether they are
    inner chunks of shards) by row id."""
    datasets = dataset_specs(sizes)
    writes = write_specs(sizes)
    counts = {}
    for row in PER_CHUNK_ROWS:
        task, key = row.split(":", 1)
        spec = writes[task] if key.startswith("write") else datasets[TASK_DATASETS[task][0]]
        counts[row] = (spec.nchunks, spec.shards is not None)
    return counts


def _variant_sections(suite: Suite, ctx: Context) -> list[str]:
    """T's table and the per-chunk CPU table, when T ran."""
    if not ctx.variants:
        return []
    repeat = min(suite.args.repeat, VARIANT_REPEAT)
    lines = [
        "## Thread scaling (zarrkit)",
        "",
        f"T: zarrkit on the whole-array read and write rows with `ZARRKIT_THREADS=1` "
        f"({repeat} repeats, each in a fresh process, interleaved with the main runs of the "
        f"same case), against the main runs' 2-thread numbers ({suite.args.repeat} repeats). "
        f"Target: {SCALING_TARGET}; met at a 2t / 1t ratio ≥ {SCALING_MIN:g}, a 3% noise "
        "margin (repeats of one case spread by a few percent on this shared VM). On one "
        "thread zarrkit works inline on the calling thread, so numcodecs' Blosc (the Python "
        "engine's codec) gets 1 thread of its own there too, not the main runs' 2. "
        "'CPU / wall' of the 2-thread runs shows whether the second core was really "
        "available.",
        "",
        *scaling_table(ctx),
        "",
    ]
    if PYTHON_ENGINE in ctx.variants:
        lines += [
            "## Per-chunk CPU cost, one thread",
            "",
            "CPU µs per chunk: the CPU time (`getrusage`, all threads) of the timed region, "
            "median over the repeats, divided by the chunks the row reads or writes; for "
            "sharded arrays (S7, S8, S11) these are the inner chunks. The timed region "
            "includes opening or creating the array and, for reads, faulting in the new "
            "destination array, so this is an upper bound of the codec pipeline's cost per "
            "chunk. zarrkit's two engines on one thread (`ZARRKIT_THREADS=1`, T's runs; and "
            f"with `ZARRKIT_ENGINE=python` too, {repeat} repeats); beside them, for "
            "reference, zarrkit's and tensorstore's 2-thread main runs (CPU of all their "
            "threads: a second thread costs some CPU of its own). The default engine "
            "(`auto`) is the native one only for the codec chains and layouts it covers; "
            "its cells name the engine the array reported (`array.engine`), and where that "
            "is python both zarrkit columns time the same path (their ratio is noise).",
            "",
            *per_chunk_table(ctx),
            "",
        ]
    return lines


def _standard_notes(suite: Suite) -> list[str]:
    """Notes every report carries: sizes and the choices made for each case."""
    sizes = suite.sizes
    specs = write_specs(sizes)
    s12 = dataset_specs(sizes)
    return [
        "Noise: the machine is a 2-vCPU VM shared with other work. 'cores busy' in the "
        "limits table and CPU / wall in the timing table show when the second core was not "
        "really available (CPU / wall near 1 for a 2-thread job); the median of the repeats "
        "damps this but does not remove it. Fresh memory is also costly here: the first "
        "touch of pages the VM has not used yet runs well below memcpy speed, which every "
        "read into a new array pays (see 'memcpy + page faults').",
        "Outputs: a run's files are emptied when it ends, not deleted; the emptied trees go "
        "with the data directory after the last run. On this machine's ext4 (no journal) "
        "deleting thousands of files made the next writer, whichever library, re-check "
        "every freed inode for each file it created during the next 60 s.",
        f"Sizes: S1–S4 and S7 {'x'.join(map(str, sizes.big))} uint16; S5 "
        f"{'x'.join(map(str, sizes.s5))}; S6 {'x'.join(map(str, sizes.s6))}; S8 "
        f"{'x'.join(map(str, sizes.s8))} with shards {specs['S8'].shards}; "
        f"{sizes.n_reads} random reads in S6/S7; {sizes.n_arrays} arrays in S9 and S13; "
        f"S11 {_describe(s12['s11'])}; "
        f"S12 {'x'.join(map(str, sizes.s8))} ({_describe(s12['s12'])}; and "
        f"{_describe(s12['s12s'])}).",
        "S4 'one chunk': all three time a plain read of one whole chunk (16 distinct "
        "chunks, one call each, time per chunk). 'memory-mapped' is zarrkit's "
        "`open_array(..., mmap=True)`: each read returns a read-only view of the mapped "
        "chunk file, which the benchmark copies into a new array inside the timed region "
        "(the peers have no such view; their row is the plain read).",
        "S5 uses the v3 `zstd` codec (level 3, no checksum) on 64x64 chunks.",
        "S6 'batched' is one `vindex` call per library with (n, 16, 16, 16) coordinate "
        "arrays selecting all boxes (tensorstore: `.vindex[...].read()`).",
        "S7 inner-chunk reads are chunk-aligned 32^3 reads of random inner chunks, one call "
        "each.",
        "S8 RSS row: peak RSS of the child minus its peak RSS before loading the source "
        "(imports only); the budget is the source data plus two shards.",
        "S11: one process per library reads all of the prepared dataset (written by "
        f"{LIB_LABELS[REFERENCE_WRITER]}), then writes the source into a new array of the "
        "same layout, whole shards only; the read comes first so that the write's dirty "
        "pages are not flushed during it. Inner chunks are 8 KiB, so the per-chunk work "
        "dominates: 4096 inner chunks a shard.",
        *(f"{task}: {LIB_LABELS[lib]} is timed {cap} times, not {suite.args.repeat} "
          "(too slow for the run's time budget)."
          for (task, lib), cap in REPEAT_CAPS.items()
          if task in suite.tasks and cap < suite.args.repeat),
        "S9: the hierarchies opened were created by zarr-python and consolidated with "
        "`zarr.consolidate_metadata`; each library's 'create' writes a new one. 'Load every "
        "array's metadata' = open each member array and read its shape, dtype and "
        "attributes. tensorstore has no groups: it opens the known member paths, all "
        "concurrently, and is compared with zarrkit's consolidated open too.",
        f"S10: chunks {S10_CHUNKS} (zarr-python 3.1's automatic chunks for "
        f"{'x'.join(map(str, S10_SHAPE))} float64), no compressor, each library's in-memory "
        "store; each call is repeated for a fixed time budget per process. `a[::7]` copies "
        "2.8 MB, so its 50 µs floor is out of reach for anything (see numpy's time in the "
        "limits).",
        "S12: both layouts written by tensorstore (S8's data), served from the data "
        "directory by aiohttp's `web.FileResponse` (sendfile, Range including suffix ranges, "
        "keep-alive) in a process of its own on 127.0.0.1, which counts the requests it "
        "answers; each library reads through its own HTTP client: zarrkit "
        "`zk.open_array('http://127.0.0.1:PORT/s12', mode='r')` (`HTTPStore`: urllib3, "
        "`max_connections=16` threads and connections), zarr-python `FsspecStore.from_url(url, "
        "read_only=True)` (fsspec `HTTPFileSystem` on aiohttp; `async.concurrency=10`), "
        "tensorstore's `http` kvstore (libcurl; `http_request_concurrency` left at its "
        "default). Request concurrency is each library's default; decoding gets 2 threads "
        "as everywhere. Each client's modules (urllib3; fsspec's HTTP and aiohttp) are "
        "imported before the timed region, as imports are in every case. "
        "'read-all' opens the array and reads it whole (GB/s of uncompressed "
        "data). The partial reads use an array opened beforehand (not counted) and count "
        "every request the server answers during the read; their time is in the wall / CPU "
        "table. The server shares the 2 cores with the client.",
        "S13: the object model of S9's prepared consolidated hierarchy, against pydantic-zarr "
        "(on zarr-python, configured as in S9). 'from_store': zarrkit "
        "`zarrkit.models.v{2,3}.GroupSpec.from_store(path)` (reads the consolidated "
        "metadata, no listing); pydantic-zarr `pydantic_zarr.v{2,3}.GroupSpec.from_zarr("
        "zarr.open_group(path, mode='r', use_consolidated=True))`. 'to_store': the spec just "
        "read written to a new path, `spec.to_store(path)` / `spec.to_zarr(LocalStore(path), "
        "path='')` (metadata only, no chunks, no consolidation). Each spec read is checked "
        "against the hierarchy created (names, attributes, shapes, dtypes); each library's "
        "output (first repeat) is opened by zarr-python and its member documents must equal "
        "the prepared hierarchy's (parsed JSON).",
    ]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="sizes divided by 16, for development (under 2 minutes)")
    parser.add_argument("--cases", default="",
                        help="comma-separated case ids to run, e.g. S1,S5 or T (T also "
                             "runs the cases it re-times; default: all)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="processes per (case, library); default 5 (3 with --quick)")
    parser.add_argument("--out", default=None,
                        help="markdown report to write (default: none, the ratio table is "
                             "printed; `make bench` writes docs/benchmarks.md)")
    parser.add_argument("--json", default=None, help="also dump the raw samples here")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per child process (default 900, 240 with --quick)")
    parser.add_argument("--profile", default=None,
                        help="directory for cProfile reports of one zarrkit child per case")
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    args = parser.parse_args(argv)
    # T (thread scaling) re-times other cases; it has no task of its own.
    all_cases = [*sorted({case_of(t) for t in TASKS}, key=lambda c: int(c[1:])), "T"]
    args.cases = [c.strip().upper() for c in args.cases.split(",") if c.strip()] or all_cases
    unknown = set(args.cases) - set(all_cases)
    if unknown:
        parser.error(f"unknown cases {sorted(unknown)}; choose from {all_cases}")
    if args.repeat is None:
        args.repeat = 3 if args.quick else 5
    return args


def main(argv: Sequence[str] | None = None) -> None:
    """Run the suite and write the report."""
    args = parse_args(argv)
    executable = os.path.relpath(sys.executable)
    if executable.startswith(".."):
        executable = sys.executable
    command = " ".join(shlex.quote(a) for a in [
        executable, "bench/run.py", *(sys.argv[1:] if argv is None else argv)])
    t0 = time.perf_counter()
    suite = Suite(args)
    log(f"data in {suite.root}; cases {','.join(args.cases)}; repeat {args.repeat}")
    try:
        suite.detect()
        suite.generate()
        suite.prepare()
        suite.measure_limits()
        suite.measure()
        if args.profile:
            suite.profile(Path(args.profile))
    finally:
        suite.cleanup()
    elapsed = time.perf_counter() - t0
    markdown, table = render(suite, command, elapsed)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(markdown)
        log(f"wrote {out}")
    if args.json:
        raw = {row: {lib: vars(s) for lib, s in by_lib.items()}
               for row, by_lib in suite.results.items()}
        document = {"results": raw, "limits": suite.limits, "info": suite.info}
        if any(suite.variants.values()):
            document["variants"] = {
                variant: {row: {lib: vars(s) for lib, s in by_lib.items()}
                          for row, by_lib in results.items()}
                for variant, results in suite.variants.items()}
        if suite.http_served:
            document["s12"] = {"minimum_requests": suite.s12_minimum,
                               "served": suite.http_served}
        Path(args.json).write_text(json.dumps(document, indent=1))
    print(table)
    print(f"\ntotal {elapsed / 60:.1f} min ({elapsed:.0f} s)")


if __name__ == "__main__":
    main()
