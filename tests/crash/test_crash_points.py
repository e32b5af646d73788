"""Kills at chosen moments: a writer that SIGKILLs itself right after a given store write,
and readers that SIGKILL themselves inside a database read transaction.

The random trials of test_crash.py found that a shrinking resize killed between writing
the array's new metadata and trimming its chunks leaves data outside the new shape, which
a later grow brings back instead of the fill value. This test kills at exactly that moment.

A kill inside a read transaction is rare in the random trials (reads are short), and in
LMDB it leaves the dead reader's slot in the reader table while another process keeps the
database open: the slot pins the pages of its snapshot (the file only grows) and, past
``max_readers`` such kills, every read fails. The second test kills readers there.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from crash_harness import check_store
from crash_scenarios import SCENARIOS
from crash_stores import Bystander

import zarrkit as zk

KILL_AFTER_SET = textwrap.dedent("""
    import os, signal, sys
    import zarrkit as zk
    from zarrkit.storage import DirectoryStore, Store

    path, fatal_key, shape = sys.argv[1], sys.argv[2], eval(sys.argv[3])
    zk.config.set(fsync=True)

    def set_then_die(self, key, value):
        Store.set(self, key, value)
        if key == fatal_key:
            os.kill(os.getpid(), signal.SIGKILL)

    DirectoryStore.set = set_then_die
    zk.open_array(path, path="a", mode="r+").resize(shape)
""")


def run_killed_after_set(path: Path, key: str, shape: tuple[int, ...]) -> None:
    process = subprocess.run([sys.executable, "-c", KILL_AFTER_SET, str(path), key, repr(shape)],
                             capture_output=True, text=True, timeout=60)
    assert process.returncode == -signal.SIGKILL, process.stderr


@pytest.mark.parametrize("zarr_format,metadata_key", [(2, "a/.zarray"), (3, "a/zarr.json")])
def test_shrink_killed_after_its_metadata_write_then_grow_shows_fill(
        tmp_path: Path, zarr_format: int, metadata_key: str) -> None:
    path = tmp_path / "data.zarr"
    array = zk.open_group(path, mode="w", zarr_format=zarr_format).create_array(
        "a", shape=(40, 60), chunks=(10, 15), dtype="i4", fill_value=0)
    array[...] = 7

    run_killed_after_set(path, metadata_key, (15, 20))

    survivor = zk.open_array(path, path="a", mode="r+")
    assert survivor.shape in ((40, 60), (15, 20))
    visible = survivor.shape
    survivor.resize((40, 60))
    grown = survivor[...]
    expected = np.zeros((40, 60), dtype="i4")
    expected[: visible[0], : visible[1]] = 7
    wrong = int((grown != expected).sum())
    assert wrong == 0, (f"after the killed shrink to {visible} and a grow back to (40, 60), "
                        f"{wrong} elements outside {visible} hold old data, not the fill value")


DIE_IN_A_READ = textwrap.dedent("""
    import os, signal, sys
    from zarrkit.storage import LMDBStore, SQLiteStore

    storage, path = sys.argv[1], sys.argv[2]
    store = (SQLiteStore if storage == "sqlite" else LMDBStore)(path, read_only=True)

    def die(handle):  # the store's read transaction: an SQLite connection, an LMDB txn
        if storage == "sqlite":
            handle.execute("SELECT k FROM zarr LIMIT 1").fetchone()  # takes the read lock
        else:
            handle.get(b"a/zarr.json")
        os.kill(os.getpid(), signal.SIGKILL)

    store._read("read", die)
""")

@pytest.mark.parametrize("storage", ["sqlite", "lmdb"])
def test_readers_killed_in_a_read_transaction_leave_nothing_behind(
        storage: str, tmp_path: Path) -> None:
    """With another process keeping the database open throughout, three readers die inside
    a read transaction; then the database must pass every check a kill's aftermath must
    (crash_stores.database_problems), which includes: no reader slot of a dead process
    once zarrkit has opened it."""
    scenario = SCENARIOS[f"{storage}-chunks-v3"]
    (tmp_path / "store").mkdir()
    path = scenario.store_path(tmp_path / "store")
    scenario.create(path)
    bystander = Bystander(storage, path, tmp_path / "bystander.err")
    try:
        for _ in range(3):
            process = subprocess.run([sys.executable, "-c", DIE_IN_A_READ, storage, str(path)],
                                     capture_output=True, text=True, timeout=60)
            assert process.returncode == -signal.SIGKILL, process.stderr
        failures = check_store(scenario, path)
    finally:
        failures_in_bystander = bystander.stop()
    assert failures + failures_in_bystander == []
