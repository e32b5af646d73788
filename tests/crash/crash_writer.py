"""A crash-test writer: performs a scenario's operations in a loop until it is killed.

Usage: ``python crash_writer.py SCENARIO STORE JOURNAL SEED ROUND``. The operations come
from ``random.Random(f"{SEED}:{ROUND}")``; each is journaled before it starts and after it
returns (see crash_journal). The writer stops by itself only if its parent dies or after
``MAX_SECONDS``, so that a crashed test run leaves no writer behind.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

from crash_journal import append_line
from crash_scenarios import SCENARIOS

import zarrkit as zk

MAX_SECONDS = 120.0


def main(argv: list[str]) -> int:
    name, store, journal_path, seed, round_no = argv
    zk.config.set(fsync=True, file_locks=True, threads=2)
    writer = SCENARIOS[name].writer(Path(store))
    rng = random.Random(f"{seed}:{round_no}")
    parent = os.getppid()
    deadline = time.monotonic() + MAX_SECONDS
    with open(journal_path, "a") as journal:
        append_line(journal, {"ready": True, "pid": os.getpid()})
        op = 0
        while os.getppid() == parent and time.monotonic() < deadline:
            steps = writer.plan(rng, int(round_no), op)
            append_line(journal, {"op": op, "steps": steps})
            writer.perform(steps)
            append_line(journal, {"done": op})
            op += 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
