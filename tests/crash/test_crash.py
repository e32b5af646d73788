"""Crash trials: writers killed with SIGKILL at seeded moments leave old or new, never
garbage, lose nothing they returned, and leave no temporary files in sight.

``ZARRKIT_CRASH_TRIALS`` (default 3) trials per scenario, ``ZARRKIT_CRASH_ZIP_TRIALS``
(default twice that) for the ZIP-append scenarios, ``ZARRKIT_CRASH_DB_TRIALS`` (default two
thirds of that, at least one) for the SQLite and LMDB scenarios; ``ZARRKIT_CRASH_SEED`` runs
one trial per scenario with that seed (a failing trial prints its seed and the command to
replay it).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from crash_harness import TrialResult, report, run_trial
from crash_scenarios import SCENARIOS

STATS_ENV = "ZARRKIT_CRASH_STATS_DIR"


def _trials(scenario: str) -> int:
    if os.environ.get("ZARRKIT_CRASH_SEED"):
        return 1
    trials = int(os.environ.get("ZARRKIT_CRASH_TRIALS", "3"))
    if scenario.startswith("zip-"):
        # Short trials, and the window an append can break is short: twice as many.
        return int(os.environ.get("ZARRKIT_CRASH_ZIP_TRIALS", 2 * trials))
    if SCENARIOS[scenario].database:
        # Sixteen scenarios, most repeating the directory ones' writes: fewer trials each.
        return int(os.environ.get("ZARRKIT_CRASH_DB_TRIALS", max(1, 2 * trials // 3)))
    return trials


def _params() -> list[object]:
    return [pytest.param(name, id=f"{name}-{trial}")
            for name in SCENARIOS for trial in range(_trials(name))]


def _seed() -> int:
    chosen = os.environ.get("ZARRKIT_CRASH_SEED")
    return int(chosen) if chosen else random.SystemRandom().randrange(2**32)


def _record(result: TrialResult) -> None:
    """Add the trial's figures to the run's summary (see conftest.py)."""
    directory = os.environ.get(STATS_ENV)
    if directory:
        with open(Path(directory) / f"{os.getpid()}.jsonl", "a") as f:
            f.write(json.dumps(result.as_record()) + "\n")


@pytest.mark.parametrize("name", _params())
def test_a_killed_writer_leaves_old_or_new(name: str, tmp_path: Path) -> None:
    result = run_trial(SCENARIOS[name], _seed(), tmp_path)
    _record(result)
    assert not result.failures, report(result)
