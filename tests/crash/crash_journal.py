"""The journal a crash-test writer keeps outside the store.

One JSON object per line: ``{"ready": ...}`` once the writer has opened the store, then for
each operation ``{"op": n, "steps": [...]}`` *before* performing it and ``{"done": n}``
*after* it returned. Every line is flushed and fsynced before the writer goes on, so a line
that is there was written; a kill can only leave the last line incomplete, and an
incomplete line is ignored.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

Step = dict[str, Any]


def append_line(journal: IO[str], entry: dict[str, Any]) -> None:
    """Write ``entry`` (stamped with the monotonic clock) and make it durable."""
    journal.write(json.dumps({**entry, "t": time.monotonic()}) + "\n")
    journal.flush()
    os.fsync(journal.fileno())


@dataclass
class Journal:
    """What a journal says: when the writer was ready, the operations it started (in
    order) and which of them returned."""

    ready_at: float | None = None
    started: list[list[Step]] = field(default_factory=list)
    started_at: list[float] = field(default_factory=list)
    done_at: list[float] = field(default_factory=list)

    @property
    def returned(self) -> list[list[Step]]:
        """The steps of every operation that returned: all must be visible."""
        return self.started[: len(self.done_at)]

    @property
    def in_flight(self) -> list[Step] | None:
        """The steps of the operation started and not known to have returned, if any."""
        return self.started[-1] if len(self.started) > len(self.done_at) else None

    def mean_op_seconds(self) -> float:
        """How long the returned operations took on average (journal writes left out)."""
        starts = self.started_at[: len(self.done_at)]
        durations = [done - start for start, done in zip(starts, self.done_at, strict=True)]
        return sum(durations) / len(durations) if durations else 0.0


def read_journal(path: Path) -> Journal:
    """Parse the complete lines of the journal at ``path`` (missing: an empty journal)."""
    journal = Journal()
    try:
        text = path.read_text()
    except FileNotFoundError:
        return journal
    for line in text.split("\n")[:-1]:  # the part after the last newline is incomplete
        entry = json.loads(line)
        if "ready" in entry:
            journal.ready_at = entry["t"]
        elif "steps" in entry:
            if entry["op"] != len(journal.started) or journal.in_flight is not None:
                raise ValueError(f"{path}: operation {entry['op']} out of order")
            journal.started.append(entry["steps"])
            journal.started_at.append(entry["t"])
        elif "done" in entry:
            if entry["done"] != len(journal.done_at):
                raise ValueError(f"{path}: end of operation {entry['done']} out of order")
            journal.done_at.append(entry["t"])
    return journal
