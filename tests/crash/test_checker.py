"""The crash checker itself: it must see what it is there to see (lost and torn writes,
stale snapshots, temporaries in sight, stray keys, torn batches, dead readers' slots), and
accept what a kill may leave."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from crash_harness import check_store, side_directory
from crash_journal import read_journal
from crash_scenarios import (
    SCENARIOS,
    ArrayScenario,
    BatchScenario,
    NodeScenario,
    Tree,
    batch_value,
)
from crash_stores import (
    DATABASES,
    Bystander,
    late_changes,
    opened,
    read_everything,
    stale_readers,
)

import zarrkit as zk


def test_an_incomplete_last_journal_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text('{"ready": true, "t": 1.0}\n'
                    '{"op": 0, "steps": [{"write": [[0, 1]], "g": 5}], "t": 2.0}\n'
                    '{"done": 0, "t": 3.0}\n'
                    '{"op": 1, "steps": [{"write": [[1, 2]], "g": 6}], "t": 4.0}\n'
                    '{"done": 1, "t"')
    journal = read_journal(path)
    assert journal.returned == [[{"write": [[0, 1]], "g": 5}]]
    assert journal.in_flight == [{"write": [[1, 2]], "g": 6}]
    assert journal.mean_op_seconds() == 1.0


def chunks_scenario() -> ArrayScenario:
    scenario = SCENARIOS["chunks-v3"]
    assert isinstance(scenario, ArrayScenario)
    return scenario


def test_old_new_and_a_mix_of_whole_chunks_are_accepted() -> None:
    scenario = chunks_scenario()
    old = np.zeros((40, 60), dtype="i4")
    new = scenario.apply(old, {"write": [[0, 20], [0, 15]], "g": 7})
    half_written = new.copy()
    half_written[10:20, :15] = 0  # one of the two chunks written: chunks are atomic, not calls
    for observed in (old, new, half_written):
        assert scenario.compare(observed, [old, new]).failures == []


def test_a_lost_write_is_reported_and_counted() -> None:
    scenario = chunks_scenario()
    returned = scenario.apply(np.zeros((40, 60), dtype="i4"),
                              {"write": [[0, 10], [0, 15]], "g": 7})
    verdict = scenario.compare(np.zeros((40, 60), dtype="i4"), [returned])
    assert verdict.lost == 1
    assert verdict.failures == ["chunk (0, 0) holds {0}; old state {7}, states in flight []"]


def test_a_torn_chunk_and_garbage_are_reported() -> None:
    scenario = chunks_scenario()
    old = np.zeros((40, 60), dtype="i4")
    new = scenario.apply(old, {"write": [[0, 10], [0, 15]], "g": 7})
    torn = new.copy()
    torn[5:10, :15] = 0
    garbage = old.copy()
    garbage[30, 30] = 12345
    assert len(scenario.compare(torn, [old, new]).failures) == 1
    assert "12345" in scenario.compare(garbage, [old, new]).failures[0]


def test_a_shape_that_no_state_had_is_reported() -> None:
    scenario = SCENARIOS["resize-v3"]
    old = np.zeros((40, 60), dtype="i4")
    new = scenario.apply(old, {"resize": [20, 30]})
    assert scenario.compare(np.zeros((20, 60), dtype="i4"), [old, new]).failures


def test_a_snapshot_older_than_the_last_returned_change_is_reported() -> None:
    scenario = SCENARIOS["consolidated-v2"]
    assert isinstance(scenario, NodeScenario)
    base = Tree({"": ("group", {}), "g": ("group", {})}, {"g": ("group", {})})
    returned = scenario.candidates(
        base, [[{"create": "n1", "kind": "group", "attrs": {"gen": 1}}, {"consolidate": True}]],
        None)
    stale = Tree(returned[0].live, base.snapshot)
    verdict = scenario.compare(stale, returned)
    assert verdict.lost == 1 and "snapshot" in verdict.failures[0]


def test_a_v2_node_created_in_flight_without_its_attributes_is_accepted() -> None:
    scenario = SCENARIOS["attrs-v2"]
    assert isinstance(scenario, NodeScenario)
    base = Tree({"": ("group", {})}, None)
    states = scenario.candidates(
        base, [], [{"create": "n1", "kind": "array", "attrs": {"gen": 1}}])
    torn = Tree({"": ("group", {}), "n1": ("array", {})}, None)  # .zarray written, .zattrs not
    assert scenario.compare(torn, states).failures == []
    wrong = Tree({"": ("group", {}), "n1": ("group", {})}, None)
    assert scenario.compare(wrong, states).failures


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "data.zarr"
    SCENARIOS["chunks-v3"].create(path)
    zk.open_array(path, path="a", mode="r+")[:10, :15] = 1
    return path


def test_a_clean_store_passes(store: Path) -> None:
    assert check_store(SCENARIOS["chunks-v3"], store) == []


def test_temporaries_inside_the_store_are_reported(store: Path) -> None:
    (store / "a" / ".zarrkit-tmp-stray").write_bytes(b"x")
    (store / "a" / "c" / "0" / "1.partial").write_bytes(b"x")
    failures = check_store(SCENARIOS["chunks-v3"], store)
    assert len([f for f in failures if "is visible in the store" in f]) == 2


def test_temporaries_left_beside_the_store_after_opening_are_reported(store: Path) -> None:
    side = side_directory(store)
    side.mkdir(exist_ok=True)
    (side / ".zarrkit-tmp-of-an-unknown-writer").write_bytes(b"x")  # zarrkit keeps these
    failures = check_store(SCENARIOS["chunks-v3"], store)
    assert any("left beside the store after opening" in f for f in failures)


def test_a_key_that_is_no_document_or_chunk_is_reported(store: Path) -> None:
    (store / "a" / "notes.txt").write_bytes(b"x")
    assert any("notes.txt" in f for f in check_store(SCENARIOS["chunks-v3"], store))


LEAVE_A_TEMPORARY = """
import os, signal, sys
from zarrkit.storage import DirectoryStore
os.replace = lambda *args: os.kill(os.getpid(), signal.SIGKILL)  # die before the rename
DirectoryStore(sys.argv[1]).set("a/c/3/3", b"x")
"""


def test_a_killed_writers_temporary_is_removed_on_open(store: Path) -> None:
    """The documented cleaning, which the checker relies on: a temporary of a writer
    killed between writing it and renaming it goes when the store is next opened."""
    subprocess.run([sys.executable, "-c", LEAVE_A_TEMPORARY, str(store)], timeout=60)
    side = side_directory(store)
    assert [n for n in os.listdir(side) if n.startswith(".zarrkit-tmp-")]
    assert check_store(SCENARIOS["chunks-v3"], store) == []


# --- the database stores ------------------------------------------------------------------

def batches_scenario(storage: str = "sqlite") -> BatchScenario:
    scenario = SCENARIOS[f"{storage}-batches"]
    assert isinstance(scenario, BatchScenario)
    return scenario


def test_batches_old_or_new_are_accepted_and_a_set_many_written_in_part_is_reported(
        ) -> None:
    scenario = batches_scenario()
    states = scenario.candidates((0, 0, 0, 0), [], [{"batches": [1, 2], "g": 7}])
    assert scenario.compare((0, 0, 0, 0), states).failures == []
    assert scenario.compare((0, 7, 7, 0), states).failures == []
    verdict = scenario.compare((0, 7, 0, 0), states)
    assert verdict.lost == 0 and "written in part" in verdict.failures[0]


def test_a_lost_set_many_is_reported_and_counted() -> None:
    scenario = batches_scenario()
    returned = scenario.candidates((0, 0, 0, 0), [[{"batches": [0, 3], "g": 7}]], None)
    assert scenario.compare((0, 0, 0, 0), returned).lost == 2


@pytest.mark.parametrize("storage", DATABASES)
def test_a_torn_batch_and_garbage_values_are_reported(storage: str, tmp_path: Path) -> None:
    scenario = batches_scenario(storage)
    path = scenario.store_path(tmp_path)
    scenario.create(path)
    with opened(storage, path, "a") as store:
        store.set("b1/3", batch_value("b1/3", 5))
        store.set("b2/0", b"b2/0 0 3\nabc")  # a header of generation 0, not its payload
    state, failures = scenario.observe(path)
    assert state == (0, 5, 0, 0)
    assert len(failures) == 2
    assert "batch 1 is torn" in failures[0] and "'b2/0' holds garbage" in failures[1]


@pytest.mark.parametrize("storage", DATABASES)
def test_a_clean_database_passes_and_strays_are_reported(storage: str, tmp_path: Path
                                                         ) -> None:
    scenario = SCENARIOS[f"{storage}-chunks-v3"]
    path = scenario.store_path(tmp_path)
    scenario.create(path)
    assert check_store(scenario, path) == []
    (tmp_path / f"{path.name}.tmp").write_bytes(b"x")
    with opened(storage, path, "a") as store:
        store.set("a/notes.txt", b"x")
    failures = check_store(scenario, path)
    assert len(failures) == 2
    assert "left beside the database" in failures[0] and "notes.txt" in failures[1]


DIE_IN_AN_LMDB_READ = """
import os, signal, sys, lmdb
env = lmdb.open(sys.argv[1], subdir=False, readonly=True)
txn = env.begin()
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_dead_processes_reader_slot_is_seen(tmp_path: Path) -> None:
    """While a bystander keeps the environment open, the slot of a process killed in a read
    transaction stays in LMDB's reader table (read here without zarrkit, which may clear
    it), and stale_readers reports it."""
    path = tmp_path / "data.mdb"
    SCENARIOS["lmdb-chunks-v3"].create(path)
    bystander = Bystander("lmdb", path, tmp_path / "bystander.err")
    try:
        subprocess.run([sys.executable, "-c", DIE_IN_AN_LMDB_READ, str(path)], timeout=60)
        dead = stale_readers(path)
    finally:
        assert bystander.stop() == []
    assert len(dead) == 1


@pytest.mark.parametrize("storage", DATABASES)
def test_content_that_changes_after_the_first_look_is_reported(storage: str, tmp_path: Path
                                                               ) -> None:
    scenario = batches_scenario(storage)
    path = scenario.store_path(tmp_path)
    scenario.create(path)
    before = read_everything(storage, path)
    assert late_changes(storage, path, before, ["b0/0"]) == []
    with opened(storage, path, "a") as store:  # as a dead writer's commit surfacing late
        store.set_many({"b1/0": batch_value("b1/0", 9), "b1/1": batch_value("b1/1", 9)})
    failures = late_changes(storage, path, before, ["b0/0"])
    assert len(failures) == 1 and "2 keys hold other values" in failures[0]
