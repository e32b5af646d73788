"""A bounded libFuzzer run of every fuzz target (the long runs are ``make fuzz``).

Each target gets a fixed number of inputs, starting from its seeds; libFuzzer exits
non-zero when a target raises anything but a ``zarrkit.errors`` exception, crashes, runs
out of memory or time, and the test shows what it printed (with the input to replay)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "atheris_fuzz.py"
RUNS = int(os.environ.get("ZARRKIT_FUZZ_RUNS", "3000"))

pytest.importorskip("atheris", reason="atheris is a test dependency (pip install atheris)")

sys.path.insert(0, str(HERE))
from atheris_fuzz import targets  # noqa: E402


@pytest.mark.parametrize("target", sorted(targets()))
def test_fuzz_target(target: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(RUNNER), target, f"-runs={RUNS}", "-max_total_time=60",
         "-timeout=10", "-rss_limit_mb=2048", "-seed=1", f"-artifact_prefix={tmp_path}/"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    assert f"Done {RUNS} runs" in result.stderr or "DONE" in result.stderr
