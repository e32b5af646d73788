"""What is reported and how: the metrics of each case, their targets, and the tables.

Ratio convention: zarrkit's ratio to the fastest peer is always > 1 when zarrkit is faster
(or lighter): peer time / zarrkit time for times, zarrkit rate / peer rate for rates.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from common import LIB_LABELS, S12_PARTIAL_READS, case_libs

PEERS = ("zarr", "zarr-fused", "tensorstore", "pydantic-zarr")


@dataclass(frozen=True)
class Metric:
    """One row of the results table."""

    case: str
    task: str
    key: str
    label: str
    unit: str
    higher_is_better: bool
    target: str
    # A zarrkit-only row (a feature no peer has) compares with the peers on this row.
    peer_row: str | None = None

    @property
    def row_id(self) -> str:
        """Unique key of the row: task and metric."""
        return f"{self.task}:{self.key}"


def _m(case: str, task: str, key: str, label: str, unit: str, higher: bool, target: str,
       peer_row: str | None = None) -> Metric:
    """Shorthand for the table below."""
    return Metric(case, task, key, label, unit, higher, target, peer_row)


METRICS: tuple[Metric, ...] = (
    _m("S1", "S1", "write", "write, blosc zstd 3", "GB/s", True,
       "≥ fastest peer, ≥ 80% of 2-core codec limit"),
    _m("S2", "S2", "read-all", "read-all", "GB/s", True, "≥ 1.3x fastest peer"),
    _m("S3", "S3w", "write v2", "write, format v2", "GB/s", True, "within 5% of S1"),
    _m("S3", "S3r", "read-all v2", "read-all, format v2", "GB/s", True, "within 5% of S2"),
    _m("S4", "S4", "read-all", "read-all uncompressed", "GB/s", True,
       "≥ 2x fastest peer, ≥ 70% of memcpy"),
    _m("S4", "S4", "one chunk", "one chunk (plain read, no mmap)", "ms/chunk", False,
       "≥ 2x fastest peer"),
    _m("S4", "S4", "one chunk mmap", "one chunk, memory-mapped view copied out (zarrkit "
       "only; peers: their plain read)", "ms/chunk", False, "≥ 2x fastest peer",
       peer_row="S4:one chunk"),
    _m("S5", "S5", "write", "8 KiB chunks, write all", "chunks/s", True, "≥ tensorstore"),
    _m("S5", "S5", "read-all", "8 KiB chunks, read all", "chunks/s", True, "≥ tensorstore"),
    _m("S6", "S6", "one by one", "16^3 reads, one by one", "ms/read", False,
       "≤ tensorstore"),
    _m("S6", "S6", "batched", "16^3 reads, one vindex call", "ms/read", False,
       "≤ tensorstore"),
    _m("S7", "S7", "read-all", "sharded read-all", "GB/s", True, "≥ tensorstore"),
    _m("S7", "S7", "inner-chunk reads", "sharded, inner-chunk reads", "ms/read", False,
       "≤ tensorstore"),
    _m("S8", "S8", "write", "sharded write, whole shards", "GB/s", True, "≥ tensorstore"),
    _m("S8", "S8", "rss", "peak RSS over baseline", "MiB", False, "≤ 2 shards + data"),
    _m("S9", "S9v2", "create", "v2: create {n} arrays", "s", False, "≥ 5x zarr-python"),
    _m("S9", "S9v2", "open", "v2: open + load all metadata", "s", False,
       "≥ 5x zarr-python, ≤ tensorstore"),
    _m("S9", "S9v2", "open consolidated", "v2: open consolidated", "s", False,
       "≥ 5x zarr-python, ≤ tensorstore"),
    _m("S9", "S9v3", "create", "v3: create {n} arrays", "s", False, "≥ 5x zarr-python"),
    _m("S9", "S9v3", "open", "v3: open + load all metadata", "s", False,
       "≥ 5x zarr-python, ≤ tensorstore"),
    _m("S9", "S9v3", "open consolidated", "v3: open consolidated", "s", False,
       "≥ 5x zarr-python, ≤ tensorstore"),
    _m("S10", "S10", "a[0]", "`a[0]`", "µs/call", False, "≤ 50 µs, ≥ 10x zarr-python"),
    _m("S10", "S10", "a[0:10, :, 0]", "`a[0:10, :, 0]`", "µs/call", False,
       "≤ 50 µs, ≥ 10x zarr-python"),
    _m("S10", "S10", "a[::7]", "`a[::7]`", "µs/call", False, "≤ 50 µs, ≥ 10x zarr-python"),
    _m("S10", "S10", "oindex", "`a.oindex[rows, :, 0, cols]`", "µs/call", False,
       "≤ 50 µs, ≥ 10x zarr-python"),
    _m("S10", "S10", "vindex", "`a.vindex[5 points]`", "µs/call", False,
       "≤ 50 µs, ≥ 10x zarr-python"),
    _m("S11", "S11", "read-all", "sharded read-all, 16^3 inner chunks (8 KiB) in 64^3 shards",
       "GB/s", True, "≥ 1.2x tensorstore"),
    _m("S11", "S11", "write", "sharded write, whole 64^3 shards of 16^3 inner chunks", "GB/s",
       True, "≥ 1.2x tensorstore"),
    _m("S12", "S12", "read-all", "HTTP read-all, 128^3 chunks, blosc zstd 3", "GB/s", True,
       "≥ fastest peer"),
    _m("S12", "S12", "sharded read-all", "HTTP read-all, sharded (32^3 inner chunks)", "GB/s",
       True, "≥ fastest peer"),
    *(_m("S12", "S12", key, f"HTTP sharded partial read, {what}: server-side requests",
         "requests", False, "= minimum (1 index read per shard + coalesced ranges)")
      for key, what in S12_PARTIAL_READS.items()),
    _m("S13", "S13v2", "from_store", "v2: `GroupSpec.from_store`, consolidated, {n} arrays",
       "s", False, "≥ 5x pydantic-zarr"),
    _m("S13", "S13v2", "to_store", "v2: `spec.to_store` (new path)", "s", False,
       "≥ 5x pydantic-zarr"),
    _m("S13", "S13v3", "from_store", "v3: `GroupSpec.from_store`, consolidated, {n} arrays",
       "s", False, "≥ 5x pydantic-zarr"),
    _m("S13", "S13v3", "to_store", "v3: `spec.to_store` (new path)", "s", False,
       "≥ 5x pydantic-zarr"),
)


METRIC_BY_ROW = {metric.row_id: metric for metric in METRICS}

SCALING_ROWS = ("S1:write", "S2:read-all", "S3w:write v2", "S3r:read-all v2", "S4:read-all",
                "S5:write", "S5:read-all", "S7:read-all", "S8:write", "S11:read-all",
                "S11:write")
"""Case T: the whole-array read and write rows, timed again with zarrkit on one thread."""

SCALING_MIN = 0.97
"""T's target, 2 threads never slower than 1, met at a 2-thread / 1-thread ratio of at least
this: repeats of one case on this shared VM spread by a few percent, so a ratio just under
1 is noise, not a slowdown."""

PER_CHUNK_ROWS = ("S1:write", "S2:read-all", "S5:write", "S5:read-all", "S7:read-all",
                  "S8:write", "S11:read-all", "S11:write")
"""The chunked read and write rows of the per-chunk CPU table: zarrkit's Python engine is
timed on them too (one thread)."""

ONE_THREAD = "1 thread"
PYTHON_ENGINE = "python engine"
"""The zarrkit variants timed besides the main runs (``ZARRKIT_THREADS=1``, and that with
``ZARRKIT_ENGINE=python``), keys of :attr:`Context.variants`."""


@dataclass
class Samples:
    """The repeats of one (metric, library): values and per-run resources."""

    values: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)
    # zarrkit: the engine (native or python) each run's array used.
    engines: list[str] = field(default_factory=list)
    error: str | None = None
    wrong: str | None = None

    @property
    def median(self) -> float | None:
        """Median of the values, or None without any."""
        return statistics.median(self.values) if self.values else None


Results = dict[str, dict[str, Samples]]
"""row id -> library -> samples."""


def fmt(value: float | None) -> str:
    """A number with 3 significant digits (no exponent for everyday magnitudes)."""
    if value is None:
        return "—"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def fmt_bytes_kib(kib: float | None) -> str:
    """A KiB count as MiB or GiB."""
    if kib is None:
        return "—"
    mib = kib / 1024
    return f"{mib / 1024:.2f} GiB" if mib >= 1024 else f"{mib:.0f} MiB"


def speed(metric: Metric, value: float) -> float:
    """A value oriented so that larger is better."""
    return value if metric.higher_is_better else 1.0 / value


def ratio(metric: Metric, zk: float | None, peer: float | None) -> float | None:
    """zarrkit's advantage over a peer (>1: zarrkit better)."""
    if zk is None or peer is None or zk <= 0 or peer <= 0:
        return None
    return speed(metric, zk) / speed(metric, peer)


def fastest_peer(metric: Metric, by_lib: dict[str, Samples],
                 results: Results | None = None) -> tuple[str | None, float | None]:
    """The best peer median of a row (of its ``peer_row``, given the results) and its
    library."""
    if metric.peer_row is not None and results is not None:
        by_lib = results.get(metric.peer_row, {})
    best: tuple[str | None, float | None] = (None, None)
    for lib in PEERS:
        samples = by_lib.get(lib)
        if samples is None or samples.median is None or samples.median <= 0 or samples.wrong:
            continue
        if best[1] is None or speed(metric, samples.median) > speed(metric, best[1]):
            best = (lib, samples.median)
    return best


@dataclass
class Context:
    """What target checks need besides the row itself."""

    results: Results
    limits: dict[str, Any]
    sizes: Any
    shard_bytes: int
    s8_bytes: int
    # S12: the least requests of each partial read, by row id.
    minimum_requests: dict[str, int] = field(default_factory=dict)
    # T and the per-chunk table: zarrkit's extra runs, variant -> results like ``results``.
    variants: dict[str, Results] = field(default_factory=dict)
    # Per-chunk table: (chunks, whether they are inner chunks of shards) by row id.
    chunk_counts: dict[str, tuple[int, bool]] = field(default_factory=dict)


def _median_of(ctx: Context, row_id: str, lib: str) -> float | None:
    """A library's median on a row, unless missing or wrong."""
    samples = ctx.results.get(row_id, {}).get(lib)
    return None if samples is None or samples.wrong else samples.median


def check_target(metric: Metric, ctx: Context) -> tuple[str, str]:
    """("yes" / "no" / "n/a", detail) for zarrkit on one row."""
    by_lib = ctx.results.get(metric.row_id, {})
    zk_samples = by_lib.get("zarrkit")
    if zk_samples is None or zk_samples.median is None:
        return "n/a", "zarrkit has no result"
    if zk_samples.wrong:
        return "no", "zarrkit gave wrong values"
    zk = zk_samples.median
    checks: list[tuple[bool, str]] = []
    peer_lib, peer = fastest_peer(metric, by_lib, ctx.results)
    r = ratio(metric, zk, peer)

    def vs_peer(minimum: float) -> None:
        if r is not None:
            checks.append((r >= minimum, f"{r:.2f}x {LIB_LABELS[peer_lib or '']}"))

    def vs_lib(lib: str, minimum: float, value: float | None = None) -> None:
        other = value if value is not None else _median_of(ctx, metric.row_id, lib)
        lib_ratio = ratio(metric, zk, other)
        if lib_ratio is not None:
            checks.append((lib_ratio >= minimum, f"{lib_ratio:.2f}x {LIB_LABELS[lib]}"))

    def vs_limit(name: str, fraction: float) -> None:
        rates = ctx.limits.get(name)
        if rates:
            limit = statistics.median(rates)
            checks.append((zk >= fraction * limit, f"{zk / limit:.0%} of {name}"))

    row = metric.row_id
    if row == "S1:write":
        vs_peer(1.0)
        vs_limit("blosc encode", 0.8)
    elif row == "S2:read-all":
        vs_peer(1.3)
    elif metric.case == "S3":
        base = "S1:write" if metric.key.startswith("write") else "S2:read-all"
        base_value = _median_of(ctx, base, "zarrkit")
        if base_value:
            # Parity between the formats, either way: a faster v2 flags a slow v3 path.
            checks.append((abs(zk / base_value - 1) <= 0.05,
                           f"{zk / base_value:.0%} of {base[:2]}"))
    elif row == "S4:read-all":
        vs_peer(2.0)
        vs_limit("copyto", 0.7)
    elif row in ("S4:one chunk", "S4:one chunk mmap"):
        vs_peer(2.0)
    elif metric.case in ("S5", "S6", "S7") or row == "S8:write":
        vs_lib("tensorstore", 1.0)
    elif row == "S8:rss":
        budget = (ctx.s8_bytes + 2 * ctx.shard_bytes) / 2**20
        checks.append((zk <= budget, f"{zk:.0f} of {budget:.0f} MiB"))
    elif metric.case == "S9":
        vs_lib("zarr", 5.0)
        if metric.key != "create":
            # tensorstore opens the same paths; it has no consolidated metadata.
            vs_lib("tensorstore", 1.0, _median_of(ctx, f"{metric.task}:open", "tensorstore"))
    elif metric.case == "S10":
        checks.append((zk <= 50.0, f"{zk:.0f} µs"))
        vs_lib("zarr", 10.0)
    elif metric.case == "S11":
        vs_lib("tensorstore", 1.2)
    elif metric.case == "S12" and metric.unit == "requests":
        minimum = ctx.minimum_requests.get(row)
        if minimum is not None:
            checks.append((zk == minimum, f"{zk:.0f} requests, minimum {minimum}"))
    elif metric.case == "S12":
        vs_peer(1.0)
    elif metric.case == "S13":
        vs_lib("pydantic-zarr", 5.0)
    if not checks:
        return "n/a", "no peer result"
    met = all(ok for ok, _ in checks)
    return ("yes" if met else "no"), "; ".join(text for _, text in checks)


def label(metric: Metric, ctx: Context) -> str:
    """The row label, with the run's hierarchy size filled in."""
    return metric.label.format(n=ctx.sizes.n_arrays)


def cell(samples: Samples | None, show_rss: bool, counts: bool = False) -> str:
    """A library's cell: median (min–max), and its process's median peak RSS; ``counts``
    (request counts) are whole numbers."""
    if samples is None:
        return "—"
    if samples.error and not samples.values:
        return f"error: {samples.error}"
    number = (lambda v: f"{v:.0f}") if counts else fmt
    text = (f"{number(samples.median)} ({number(min(samples.values))}–"
            f"{number(max(samples.values))})")
    if show_rss and samples.rss_kib:
        text += f" · {fmt_bytes_kib(statistics.median(samples.rss_kib))}"
    if samples.wrong:
        text += f" **WRONG VALUES** ({samples.wrong})"
    if samples.error:
        text += f" (error in some runs: {samples.error})"
    return text


def results_table(ctx: Context, libs: Sequence[str], fused_note: str) -> list[str]:
    """The main markdown table: one row per case and metric."""
    columns = [lib for lib in LIB_LABELS if lib in libs or lib == "zarr-fused"]
    head = ["case", "metric", "unit", *(LIB_LABELS[lib] for lib in columns)]
    head += ["zarrkit ratio", "target", "met"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for metric in METRICS:
        by_lib = ctx.results.get(metric.row_id)
        if by_lib is None:
            continue
        show_rss = metric.key != "rss"
        cells = [metric.case, label(metric, ctx), metric.unit]
        for lib in columns:
            if lib not in case_libs(metric.case, LIB_LABELS):
                cells.append("—")  # not measured in this case
            elif lib not in libs:
                cells.append(fused_note)
            elif metric.key == "open consolidated" and lib == "tensorstore":
                cells.append("— (no consolidated metadata; see open)")
            elif metric.key == "create" and lib == "tensorstore":
                cells.append("— (no groups/attributes)")
            else:
                cells.append(cell(by_lib.get(lib), show_rss, metric.unit == "requests"))
        peer_lib, peer = fastest_peer(metric, by_lib, ctx.results)
        zk = by_lib.get("zarrkit")
        r = ratio(metric, zk.median if zk and not zk.wrong else None, peer)
        cells.append(f"{r:.2f}x vs {LIB_LABELS[peer_lib or '']}" if r is not None else "—")
        met, detail = check_target(metric, ctx)
        cells += [metric.target, f"{met} ({detail})" if detail else met]
        lines.append("| " + " | ".join(cells) + " |")
    summary = scaling_summary(ctx)
    if summary is not None:
        value, met, detail = summary
        cells = ["T", f"thread scaling (zarrkit): worst 2-thread / 1-thread ratio of "
                 f"{len(_scaling_rows(ctx))} read and write rows (see 'Thread scaling')",
                 "ratio"]
        cells += [value if lib == "zarrkit" else "—" for lib in columns]
        cells += ["—", SCALING_TARGET, f"{met} ({detail})"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


SCALING_TARGET = "2 threads never slower than 1"


def _row_name(row: str) -> str:
    """A short name of a row for inline text: case and metric key, e.g. ``S11 write``."""
    metric = METRIC_BY_ROW[row]
    return f"{metric.case} {metric.key}"


def _scaling_rows(ctx: Context) -> list[str]:
    """The T rows that have a one-thread run."""
    return [row for row in SCALING_ROWS if row in ctx.variants.get(ONE_THREAD, {})]


def _measured(samples: Samples | None) -> Samples | None:
    """The samples if they hold values, else None."""
    return samples if samples is not None and samples.values else None


def scaling_ratio(ctx: Context, row: str) -> float | None:
    """zarrkit's 2-thread speed over its 1-thread speed on a T row (> 1: two threads are
    faster); None when either run is missing or read back wrong."""
    two = _measured(ctx.results.get(row, {}).get("zarrkit"))
    one = _measured(ctx.variants.get(ONE_THREAD, {}).get(row, {}).get("zarrkit"))
    if two is None or one is None or two.wrong or one.wrong:
        return None
    return ratio(METRIC_BY_ROW[row], two.median, one.median)


def scaling_summary(ctx: Context) -> tuple[str, str, str] | None:
    """T's row of the results table: (worst ratio and its row, met, detail), or None when
    T did not run."""
    rows = _scaling_rows(ctx)
    if not rows:
        return None
    ratios = {row: scaling_ratio(ctx, row) for row in rows}
    measured = {row: r for row, r in ratios.items() if r is not None}
    missing = [_row_name(row) for row, r in ratios.items() if r is None]
    if not measured:
        return "—", "n/a", "no row has both runs"
    worst = min(measured, key=lambda row: measured[row])
    slower = [_row_name(row) for row, r in measured.items() if r < SCALING_MIN]
    value = f"{measured[worst]:.2f}x ({_row_name(worst)})"
    detail = (f"{len(measured) - len(slower)} of {len(measured)} rows ≥ {SCALING_MIN:g}x, "
              f"the noise margin")
    if slower:
        detail += f"; slower on 2 threads: {', '.join(slower)}"
    if missing:
        detail += f"; without both runs (missing or wrong values): {', '.join(missing)}"
    met = "no" if slower else ("n/a" if missing else "yes")
    return value, met, detail


def scaling_table(ctx: Context) -> list[str]:
    """T: zarrkit's 1-thread and 2-thread medians of each whole-array read and write row."""
    head = ["case", "metric", "unit", "1 thread", "2 threads (main run)",
            "2 threads: CPU / wall", "2t / 1t", f"met (≥ {SCALING_MIN:g})"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in _scaling_rows(ctx):
        metric = METRIC_BY_ROW[row]
        one = ctx.variants[ONE_THREAD][row].get("zarrkit")
        two = ctx.results.get(row, {}).get("zarrkit")
        r = scaling_ratio(ctx, row)
        if (one is not None and one.wrong) or (two is not None and two.wrong):
            met = "no (wrong values)"
        elif r is None:
            met = "n/a"
        else:
            met = "yes" if r >= SCALING_MIN else "no"
        cores = "—"
        if two is not None and two.walls:
            # Near 2: both cores worked; near 1: the second core was busy elsewhere.
            cores = f"{statistics.median(two.cpus) / statistics.median(two.walls):.2f}"
        lines.append(f"| {metric.case} | {label(metric, ctx)} | {metric.unit} | "
                     f"{cell(one, False)} | {cell(two, False)} | {cores} | "
                     f"{'—' if r is None else f'{r:.2f}x'} | {met} |")
    return lines


def cpu_per_chunk(samples: Samples | None, chunks: int) -> float | None:
    """Median CPU µs per chunk of a row's timed regions, None without (right) values."""
    if samples is None or not samples.cpus or samples.wrong or chunks <= 0:
        return None
    return statistics.median(samples.cpus) / chunks * 1e6


def _engines(samples: Samples | None) -> str:
    """The engine(s) zarrkit's runs of a row used, e.g. ``native``."""
    return "/".join(sorted(set(samples.engines))) if samples is not None else ""


def per_chunk_table(ctx: Context) -> list[str]:
    """CPU µs per (inner) chunk of zarrkit's two engines on one thread, beside zarrkit's and
    tensorstore's 2-thread runs; the default engine's cells say which engine it picked."""
    head = ["case", "metric", "chunks", "zarrkit default engine (auto), 1 thread",
            "zarrkit Python engine, 1 thread", "Python / default",
            "zarrkit default, 2 threads", "tensorstore, 2 threads"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    python_runs = ctx.variants.get(PYTHON_ENGINE, {})
    for row in PER_CHUNK_ROWS:
        if row not in python_runs or row not in ctx.chunk_counts:
            continue
        metric = METRIC_BY_ROW[row]
        chunks, inner = ctx.chunk_counts[row]
        sources = (ctx.variants.get(ONE_THREAD, {}).get(row, {}).get("zarrkit"),
                   python_runs[row].get("zarrkit"),
                   ctx.results.get(row, {}).get("zarrkit"),
                   ctx.results.get(row, {}).get("tensorstore"))
        costs = [cpu_per_chunk(samples, chunks) for samples in sources]
        cells = []
        for index, (cost, samples) in enumerate(zip(costs, sources, strict=True)):
            if cost is None:
                cells.append("wrong values" if samples is not None and samples.wrong else "—")
                continue
            text = fmt(cost)
            engines = _engines(samples)
            # zarrkit's cells name the engine its arrays reported (``array.engine``); the
            # Python column must say python, or ZARRKIT_ENGINE was not honoured.
            if index != 3 and engines and (index != 1 or engines != "python"):
                text += f" · {engines}"
            cells.append(text)
        default, python = costs[0], costs[1]
        cells.insert(2, f"{python / default:.2f}x" if default and python else "—")
        lines.append(f"| {metric.case} | {label(metric, ctx)} | "
                     f"{chunks}{' inner' if inner else ''} | " + " | ".join(cells) + " |")
    return lines


def resources_table(ctx: Context, libs: Sequence[str]) -> list[str]:
    """Wall and CPU seconds of each timed region (medians): CPU/wall shows cores used."""
    head = ["case", "metric", *(f"{LIB_LABELS[lib]} wall / CPU s" for lib in libs)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for metric in METRICS:
        by_lib = ctx.results.get(metric.row_id)
        if by_lib is None or metric.key == "rss":
            continue
        cells = [metric.case, label(metric, ctx)]
        for lib in libs:
            samples = by_lib.get(lib)
            if samples is None or not samples.walls:
                cells.append("—")
                continue
            cells.append(f"{fmt(statistics.median(samples.walls))} / "
                         f"{fmt(statistics.median(samples.cpus))}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def ratio_text_table(ctx: Context) -> str:
    """The ratio table for stdout: plain text, one line per metric."""
    rows = [("case", "metric", "zarrkit", "fastest peer", "ratio", "met")]
    for metric in METRICS:
        by_lib = ctx.results.get(metric.row_id)
        if by_lib is None:
            continue
        zk = by_lib.get("zarrkit")
        zk_value = zk.median if zk else None
        peer_lib, peer = fastest_peer(metric, by_lib, ctx.results)
        r = ratio(metric, zk_value if zk and not zk.wrong else None, peer)
        met, _ = check_target(metric, ctx)
        number = (lambda v: "—" if v is None else f"{v:.0f}") if (
            metric.unit == "requests") else fmt
        rows.append((
            metric.case, f"{label(metric, ctx)} [{metric.unit}]",
            number(zk_value) + (" WRONG" if zk and zk.wrong else ""),
            f"{number(peer)} {LIB_LABELS.get(peer_lib or '', '')}".strip(),
            f"{r:.2f}x" if r is not None else "—", met,
        ))
    summary = scaling_summary(ctx)
    if summary is not None:
        value, met, _ = summary
        rows.append(("T", "worst 2-thread / 1-thread [ratio]", value, "—", "—", met))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(text.ljust(w) for text, w in zip(row, widths, strict=True))
                     for row in rows)


def limits_table(limits: dict[str, Any], big_bytes: int) -> list[str]:
    """The physical limits, measured in the same run."""
    def rates(name: str) -> str:
        values = limits.get(name)
        if not values:
            return "—"
        text = f"{fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})"
        cores = limits.get("cores", {}).get(name)
        if cores:
            # CPU / wall shows whether both cores really worked (the machine is shared).
            text += f"; {statistics.median(cores):.2f} cores busy"
        return text

    gib = big_bytes / 2**30
    lines = [
        "| limit | what | GB/s, median (min–max) |",
        "|---|---|---|",
        f"| memcpy | `numpy.copyto` of {gib:g} GiB into a faulted-in array | "
        f"{rates('copyto')} |",
        f"| memcpy + page faults | `numpy.copyto` of {gib:g} GiB into a new `np.empty` array "
        f"each time (as a read-all into a new array must) | {rates('copyto new')} |",
    ]
    for dataset, what in (("s2", "S1/S2 chunk files (blosc zstd)"),
                          ("s4", "S4 chunk files (uncompressed)")):
        total = limits.get(f"readinto {dataset} bytes")
        if total:
            lines.append(f"| file read | `readinto` of all {what}, {total / 2**20:.0f} MiB "
                         f"of file bytes, 2 threads | {rates(f'readinto {dataset}')} |")
    ratio_text = f"{limits['blosc ratio']:.2f}x" if "blosc ratio" in limits else "?"
    lines += [
        f"| codec encode | numcodecs Blosc zstd 3 shuffle over the 128^3 chunks, 2-thread "
        f"pool (ratio {ratio_text}); GB/s of uncompressed data | {rates('blosc encode')} |",
        f"| codec decode | the same, decoding into preallocated chunks | "
        f"{rates('blosc decode')} |",
    ]
    floors = limits.get("numpy s10") or {}
    for name, value in floors.items():
        lines.append(f"| S10 floor | numpy on an in-memory ndarray, `{name}` (copying) | "
                     f"{fmt(value)} µs/call |")
    return lines

