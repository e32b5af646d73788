"""Kills at chosen moments: a writer that SIGKILLs itself right after a given store write.

The random trials of test_crash.py found that a shrinking resize killed between writing
the array's new metadata and trimming its chunks leaves data outside the new shape, which
a later grow brings back instead of the fill value. This test kills at exactly that moment.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

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
