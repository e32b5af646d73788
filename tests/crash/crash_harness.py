"""Run crash trials: start a writer process, SIGKILL it at a seeded moment, check the store.

A trial creates a store, then runs ``ROUNDS`` rounds on it. In each round a writer
(crash_writer.py, run with ``sys.executable``) performs the scenario in a loop and is killed
when operation ``after_ops`` has run for ``fraction`` of the mean time of the operations
before it -- both drawn from ``random.Random(seed)``, as are the writer's operations, so a
replay kills in the same operation (where within it depends on timing). Then the checker
verifies:

- directory stores: no temporary file is visible in the store (``os.walk``), zarrkit's
  listing shows only real keys, and opening the store with zarrkit leaves no dead writer's
  temporary beside it; ZIP archives: zarrkit opens the archive and reads every member;
  databases: they open read-only, then read-write, list only real keys and pass their own
  checks (crash_stores.database_problems);
- every node opens and every chunk decodes, with zarrkit and (directory stores) zarr-python;
- every object holds its old or new value (see crash_scenarios), nothing journaled is lost.

The next round's writer starts from the state the check saw, so a store must also stay
usable after a kill. After the last round, a resize trial grows the array to the largest
shape any writer could make (what lies outside the last shape seen must read as the fill
value), and a ZIP trial opens the archive for appending and closes it, as the next writer
would (it must keep the last state seen, leave no temporary file, and satisfy zipfile).
In half of the database trials (drawn from the seed) a bystander process keeps the
database open and reads it throughout (crash_stores.Bystander).
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from crash_journal import Journal, read_journal
from crash_scenarios import TEMP_PREFIX, Scenario, temporary_names
from crash_stores import Bystander, database_problems

from zarrkit.storage import DirectoryStore, ZipStore

WRITER = Path(__file__).with_name("crash_writer.py")
ROUNDS = 2
MAX_OPS_BEFORE_KILL = 4
PROGRESS_TIMEOUT = 60.0
# What zarrkit stores: node documents and chunk keys (v3 "c/..." or v2 "0.1" / "0/1").
REAL_KEY = re.compile(r"(?:[^/]+/)*?(?:zarr\.json|\.zarray|\.zgroup|\.zattrs|\.zmetadata"
                      r"|c(?:/\d+)+|\d+(?:[./]\d+)*)")


@dataclass
class TrialResult:
    scenario: str
    seed: int
    bystander: bool = False
    rounds: int = 0
    kills: int = 0
    kills_mid_op: int = 0
    ops_returned: int = 0
    temporaries_cleaned: int = 0
    writes_lost: int = 0
    failures: list[str] = field(default_factory=list)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class KillPlan:
    after_ops: int
    fraction: float

    @classmethod
    def draw(cls, rng: random.Random) -> KillPlan:
        # Up to 1.15 operations' time: some kills land between operations.
        return cls(rng.randint(1, MAX_OPS_BEFORE_KILL), rng.random() * 1.15)


def run_trial(scenario: Scenario, seed: int, workdir: Path, rounds: int = ROUNDS
              ) -> TrialResult:
    """Run one seeded trial of ``scenario`` in ``workdir``."""
    rng = random.Random(seed)
    result = TrialResult(scenario.name, seed)
    (workdir / "store").mkdir(parents=True)
    path = scenario.store_path(workdir / "store")
    scenario.create(path)
    state, failures = scenario.observe(path)
    result.failures += [f"before any writer ran: {f}" for f in failures]
    bystander = start_bystander(scenario, path, workdir, seed)
    result.bystander = bystander is not None
    try:
        for round_no in range(rounds):
            if result.failures:
                return result
            state = run_round(scenario, path, workdir, seed, round_no, KillPlan.draw(rng),
                              state, result)
        if not result.failures:
            result.failures += [f"after the last round: {f}"
                                for f in scenario.finish(path, state)]
    finally:
        if bystander is not None:
            result.failures += bystander.stop()
    return result


def start_bystander(scenario: Scenario, path: Path, workdir: Path, seed: int
                    ) -> Bystander | None:
    """A reader keeping the database open through the trial, in half of the database
    trials (its own random draw, so the kill plans stay those of the seed)."""
    if not scenario.database or random.Random(f"{seed}:bystander").random() < 0.5:
        return None
    return Bystander(scenario.storage, path, workdir / "bystander.err")


def run_round(scenario: Scenario, path: Path, workdir: Path, seed: int, round_no: int,
              plan: KillPlan, state: Any, result: TrialResult) -> Any:
    """Start a writer, kill it as planned, check the store; the state the check saw."""
    journal_path = workdir / f"journal-{round_no}.jsonl"
    stderr_path = workdir / f"writer-{round_no}.err"
    process = start_writer(scenario, path, journal_path, stderr_path, seed, round_no)
    problem = kill_when_due(process, journal_path, plan)
    journal = read_journal(journal_path)
    result.rounds += 1
    result.kills += problem is None
    result.kills_mid_op += problem is None and journal.in_flight is not None
    result.ops_returned += len(journal.returned)
    result.temporaries_cleaned += len(dead_writers_temporaries(path))
    failures = [] if problem is None else [f"{problem}\n{stderr_path.read_text()[-2000:]}"]
    observed, found = check_after_kill(scenario, path, state, journal, result)
    result.failures += [f"round {round_no} ({describe_kill(journal, problem is None)}): {f}"
                        for f in failures + found]
    return observed


def start_writer(scenario: Scenario, path: Path, journal_path: Path, stderr_path: Path,
                 seed: int, round_no: int) -> subprocess.Popen[bytes]:
    with open(stderr_path, "wb") as stderr:
        return subprocess.Popen(
            [sys.executable, str(WRITER), scenario.name, str(path), str(journal_path),
             str(seed), str(round_no)],
            stdout=subprocess.DEVNULL, stderr=stderr, cwd=journal_path.parent)


def check_after_kill(scenario: Scenario, path: Path, state: Any, journal: Journal,
                     result: TrialResult) -> tuple[Any, list[str]]:
    """The state the store shows now, and everything wrong with it given the state the
    round started from and the journal."""
    failures = check_store(scenario, path)
    observed, problems = scenario.observe(path)
    failures += problems
    if observed is not None:
        verdict = scenario.compare(
            observed, scenario.candidates(state, journal.returned, journal.in_flight))
        failures += verdict.failures
        result.writes_lost += verdict.lost
    return observed, failures


def kill_when_due(process: subprocess.Popen[bytes], journal_path: Path, plan: KillPlan
                  ) -> str | None:
    """SIGKILL the writer when operation ``plan.after_ops`` has run for ``plan.fraction``
    of the mean time of the operations before it, and reap it; a description of what went
    wrong if the writer ended by itself or made no progress instead."""
    deadline = time.monotonic() + PROGRESS_TIMEOUT
    while True:
        journal = read_journal(journal_path)
        if len(journal.started) > plan.after_ops:
            break
        if process.poll() is not None:
            return f"the writer ended by itself with status {process.returncode}"
        if time.monotonic() > deadline:
            process.kill()
            process.wait()
            return (f"the writer returned {len(journal.done_at)} operations in "
                    f"{PROGRESS_TIMEOUT:.0f} s")
        time.sleep(0.0005)
    # The journal's stamps come from the same monotonic clock as ours.
    due = journal.started_at[plan.after_ops] + plan.fraction * journal.mean_op_seconds()
    time.sleep(max(0.0, due - time.monotonic()))
    if process.poll() is not None:
        return f"the writer ended by itself with status {process.returncode}"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()  # reaped: its pid no longer runs, so its temporaries count as dead
    return None


def describe_kill(journal: Journal, killed: bool) -> str:
    if not killed:
        return f"not killed, after {len(journal.returned)} returned operations"
    where = f"during operation {journal.in_flight}" if journal.in_flight else \
        "between operations"
    return f"killed after {len(journal.returned)} returned operations, {where}"


def side_directory(path: Path) -> Path:
    """Where a directory store keeps its temporary files: beside its root."""
    return path.parent / f"{TEMP_PREFIX}{path.name}"


def dead_writers_temporaries(path: Path) -> list[str]:
    """The temporary files beside a directory store (before zarrkit opens it)."""
    side = side_directory(path)
    return [n for n in os.listdir(side) if n.startswith(TEMP_PREFIX)] if side.is_dir() else []


def check_store(scenario: Scenario, path: Path) -> list[str]:
    """What a kill must not leave: temporaries in sight, keys that are not real, dead
    writers' temporaries after opening (directory); an unreadable archive (ZIP); a
    database that does not open, or fails its own checks (crash_stores)."""
    if scenario.zip_store:
        return zip_members_problems(path)
    if scenario.database:
        return database_problems(scenario.storage, path, REAL_KEY)
    failures = [f"{name} is visible in the store" for name in temporary_names(path)]
    store = DirectoryStore(path)  # opening removes what killed writers left beside it
    failures += [f"{name} of a dead writer is left beside the store after opening"
                 for name in dead_writers_temporaries(path)]
    for key in store.list():
        if not REAL_KEY.fullmatch(key):
            failures.append(f"store.list() shows {key!r}, which is no document or chunk key")
        elif store.get(key) is None:
            failures.append(f"store.list() shows {key!r}, which cannot be read")
    return failures


def zip_members_problems(path: Path) -> list[str]:
    """zarrkit must open the archive and read every member it lists (CRC-checked)."""
    try:
        with ZipStore(path, mode="r") as store:
            unreadable = [key for key in store.list() if store.get(key) is None]
    except Exception as e:  # noqa: BLE001 - any error is a finding
        return [f"zarrkit cannot open the archive or read a member: {type(e).__name__}: {e}"]
    return [f"member {key!r} is listed but cannot be read" for key in unreadable]


def replay_command(result: TrialResult) -> str:
    # The test's id, not -k: "-k chunks-v2" would select "sqlite-chunks-v2" too.
    return (f"ZARRKIT_CRASH_SEED={result.seed} .venv/bin/python -m pytest -q "
            f"'tests/crash/test_crash.py::test_a_killed_writer_leaves_old_or_new"
            f"[{result.scenario}-0]'")


def report(result: TrialResult) -> str:
    """A failed trial for the test output: scenario, seed, replay command, findings."""
    lines = [f"crash trial {result.scenario} with seed {result.seed} failed"
             f"{' (with a bystander)' if result.bystander else ''} "
             f"(replay: {replay_command(result)}):"]
    lines += [f"  - {failure}" for failure in result.failures[:20]]
    if len(result.failures) > 20:
        lines.append(f"  ... and {len(result.failures) - 20} more")
    return "\n".join(lines)
