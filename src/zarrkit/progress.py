"""Progress of long runs (convert, copy, check): a rich progress bar on standard error with
the amount done, the rate and the time remaining. The one progress mechanism of the library
and of the ``zarrkit`` command line.

A :class:`ProgressBar` is the ``progress(done, total)`` callback that long-running
functions take; it draws nothing until it is shown, and on a stream that is no terminal
(a log file, a pipe) rich prints the bar once, when it is closed.

>>> import io
>>> with ProgressBar("copy", show=True, file=io.StringIO()) as bar:
...     bar(50, 100); bar(100, 100)
>>> bar.shown
True
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Literal, TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.text import Text

# What long-running functions report to: (amount done, total amount).
ProgressCallback = Callable[[int, int], None]
Unit = Literal["bytes", "chunks"]

# The library's default (``progress=None``): a bar appears only once a run has lasted this
# long, so that quick calls stay silent.
SHOW_AFTER_SECONDS = 2.0


class _RateColumn(ProgressColumn):
    """Items per second (rich's TransferSpeedColumn formats bytes only)."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text(f"? {self.unit}/s", style="progress.data.speed")
        return Text(f"{speed:,.0f} {self.unit}/s", style="progress.data.speed")


def _columns(unit: Unit) -> list[ProgressColumn]:
    amount: list[ProgressColumn] = (
        [DownloadColumn(), TransferSpeedColumn()] if unit == "bytes"
        else [MofNCompleteColumn(), _RateColumn(unit)])
    return [TextColumn("[progress.description]{task.description}"), BarColumn(),
            *amount, TimeRemainingColumn()]


class ProgressBar:
    """A ``progress(done, total)`` callback drawing a rich progress bar on ``file``
    (standard error by default), in ``unit`` (``"bytes"``: sizes and transfer rate;
    ``"chunks"``: counts and chunks per second), with the time remaining.

    ``show`` True draws it from the first call, False never; None (the library's default)
    draws it once the run has lasted :data:`SHOW_AFTER_SECONDS`. Close it (or use it as a
    context manager) to finish the bar; calls from several threads are safe.

    >>> import io
    >>> out = io.StringIO()
    >>> bar = ProgressBar("check", unit="chunks", show=True, file=out)
    >>> bar(3, 4); bar.close()
    >>> "3/4" in out.getvalue()
    True
    >>> quiet = ProgressBar("copy", show=None, file=out)
    >>> quiet(1, 2); quiet.shown  # not yet: the run is younger than two seconds
    False
    """

    def __init__(self, description: str, *, unit: Unit = "bytes", show: bool | None = None,
                 file: TextIO | None = None) -> None:
        if unit not in ("bytes", "chunks"):
            raise ValueError(f"progress unit must be 'bytes' or 'chunks', found {unit!r}")
        self.description = description
        self.unit: Unit = unit
        self.show = show
        self._file = file
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._closed = False

    @property
    def shown(self) -> bool:
        """Whether the bar has been drawn."""
        return self._progress is not None

    def _should_show(self) -> bool:
        if self.show is None:
            return time.monotonic() - self._started >= SHOW_AFTER_SECONDS
        return self.show

    def __call__(self, done: int, total: int) -> None:
        with self._lock:
            if self._closed:
                return
            if self._progress is None:
                if not self._should_show():
                    return
                console = Console(file=self._file if self._file is not None else sys.stderr)
                self._progress = Progress(*_columns(self.unit), console=console)
                self._progress.start()
                self._task = self._progress.add_task(self.description, total=total)
            assert self._task is not None
            self._progress.update(self._task, completed=done, total=total)

    def close(self) -> None:
        """Finish the bar (leaving its last state on screen); later calls draw nothing."""
        with self._lock:
            self._closed = True
            if self._progress is not None:
                self._progress.stop()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def silent(done: int, total: int) -> None:
    """The callback that reports nothing.

    >>> silent(1, 2)
    """


def progress_callback(progress: ProgressCallback | bool | None, description: str, *,
                      unit: Unit = "bytes") -> tuple[ProgressCallback, Callable[[], None]]:
    """The callback a function taking ``progress=`` reports to, and what to call when it
    is done: a callable is used as it is; True, False and None make a
    :class:`ProgressBar` shown from the start, never, or after
    :data:`SHOW_AFTER_SECONDS`.

    >>> seen = []
    >>> report, finish = progress_callback(lambda d, t: seen.append((d, t)), "copy")
    >>> report(1, 2); finish(); seen
    [(1, 2)]
    >>> progress_callback("yes", "copy")
    Traceback (most recent call last):
    TypeError: progress must be a callable (done, total), True, False or None, found str
    """
    if progress is None or isinstance(progress, bool):
        if progress is False:
            return silent, _nothing
        bar = ProgressBar(description, unit=unit, show=progress)
        return bar, bar.close
    if not callable(progress):
        raise TypeError("progress must be a callable (done, total), True, False or None, "
                        f"found {type(progress).__name__}")
    return progress, _nothing


def _nothing() -> None:
    pass
