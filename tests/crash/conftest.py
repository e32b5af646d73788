"""The crash trials' summary: per scenario, the trials run, the kills, the operations the
journals say returned, the writes found lost and the failed trials.

Printed at the end of a run that names tests/crash (``pytest tests/crash``, ``make soak``);
trials running in xdist workers append their figures to files in a directory that the
controller creates here and passes on in ZARRKIT_CRASH_STATS_DIR.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

STATS_ENV = "ZARRKIT_CRASH_STATS_DIR"
_created = pytest.StashKey[str]()
COLUMNS = ("trials", "kills", "kills mid-op", "ops returned", "temps cleaned", "writes lost",
           "failed")


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or os.environ.get(STATS_ENV):
        return  # an xdist worker, or an outer run collects the figures
    directory = tempfile.mkdtemp(prefix="zarrkit-crash-stats-")
    os.environ[STATS_ENV] = directory
    config.stash[_created] = directory


def pytest_unconfigure(config: pytest.Config) -> None:
    directory = config.stash.get(_created, None)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
        os.environ.pop(STATS_ENV, None)


def _totals(directory: Path) -> dict[str, list[int]]:
    totals: dict[str, list[int]] = defaultdict(lambda: [0] * len(COLUMNS))
    for file in sorted(directory.glob("*.jsonl")):
        for line in file.read_text().splitlines():
            record: dict[str, Any] = json.loads(line)
            row = totals[record["scenario"]]
            figures = (1, record["kills"], record["kills_mid_op"], record["ops_returned"],
                       record["temporaries_cleaned"], record["writes_lost"],
                       bool(record["failures"]))
            for i, value in enumerate(figures):
                row[i] += value
    return totals


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    directory = config.stash.get(_created, None)
    if directory is None:
        return
    totals = _totals(Path(directory))
    if not totals:
        return
    terminalreporter.write_sep("-", "crash trials")
    terminalreporter.write_line(f"{'scenario':<18}" + "".join(f"{c:>15}" for c in COLUMNS))
    for name, row in sorted(totals.items()):
        terminalreporter.write_line(f"{name:<18}" + "".join(f"{v:>15}" for v in row))
    overall = [sum(column) for column in zip(*totals.values(), strict=True)]
    terminalreporter.write_line(f"{'all':<18}" + "".join(f"{v:>15}" for v in overall))
