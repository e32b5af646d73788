"""The peer check with hdmf-zarr, NWB's own Zarr backend: files that zarrkit changed must
read back in hdmf-zarr with every change resolved.

Step 1 (here, in the main venv) copies an NWB file written by hdmf-zarr 0.13.0 and changes
it with zarrkit only: a new link, a new reference attribute, a new reference dataset and
an extension namespace in the cached specifications, then consolidates the metadata
(tests/hdmf_peer/modify_with_zarrkit.py). Step 2 runs tests/hdmf_peer/check_hdmf_reads.py
in ``.venv-hdmf`` (hdmf-zarr pins zarr-python 2; ``make test`` builds that venv, ``make
hdmf-venv`` alone), which opens the copy with ``hdmf_zarr.NWBZarrIO(path, mode="r")``,
reads the NWB file, checks that each change resolves to the right object, as builders and
as pynwb containers, and that the extension was loaded from the cache. A missing venv or
an hdmf-zarr that cannot be imported fails the test: it never skips.

The pickle fixture (``ex.nwb.zarr``, hdmf-zarr's default object codec) can only be read
by numcodecs with ``NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE=1``, set for that file only.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from shared_fixtures import fixtures_dir

REPO = Path(__file__).resolve().parents[1]
PEER = Path(__file__).resolve().parent / "hdmf_peer"
HDMF_PYTHON = REPO / ".venv-hdmf" / "bin" / "python"
PICKLE_ENV = "NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE"
# The fixture -> whether hdmf-zarr needs unpickling allowed to read it.
FIXTURES = {"exjson.nwb.zarr": False, "ex.nwb.zarr": True}


def step1() -> ModuleType:
    """tests/hdmf_peer/modify_with_zarrkit.py, imported under a name of its own."""
    spec = importlib.util.spec_from_file_location(
        "hdmf_peer_modify_with_zarrkit", PEER / "modify_with_zarrkit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hdmf_env(pickle: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in (PICKLE_ENV, "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    if pickle:
        env[PICKLE_ENV] = "1"
    return env


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_hdmf_zarr_reads_zarrkit_changes(fixture: str, tmp_path: Path) -> None:
    if not HDMF_PYTHON.exists():
        pytest.fail(f"the hdmf-zarr environment is missing ({HDMF_PYTHON}): run "
                    f"`make hdmf-venv` (`make test` builds it)")
    store = tmp_path / fixture
    shutil.copytree(fixtures_dir() / "hdmf" / fixture, store)
    expected = step1().modify(str(store))
    expected_path = tmp_path / "expected.json"
    expected_path.write_text(json.dumps(expected))

    proc = subprocess.run(
        [str(HDMF_PYTHON), str(PEER / "check_hdmf_reads.py"), str(store), str(expected_path)],
        capture_output=True, text=True, timeout=120, env=hdmf_env(FIXTURES[fixture]),
        cwd=tmp_path)
    report = f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-4000:]}"
    assert proc.returncode != 2, f"hdmf-zarr cannot be imported in .venv-hdmf:\n{report}"
    assert proc.returncode == 0, f"hdmf-zarr did not resolve zarrkit's changes:\n{report}"
    results = json.loads(proc.stdout)
    assert results["versions"]["hdmf_zarr"] == "0.13.0", results["versions"]
    assert results["versions"]["zarr"].startswith("2."), results["versions"]
    assert sorted(results["checks"]) == sorted([
        *(f"{what} ({level})" for what in ("link", "reference attribute", "reference dataset")
          for level in ("builder", "pynwb")),
        "cached specifications (hdmf)"]), results["checks"]
    assert all(c["ok"] for c in results["checks"].values()), results["checks"]


def test_step2_needs_hdmf_zarr() -> None:
    """check_hdmf_reads.py exits 2 ("cannot import hdmf_zarr") where hdmf-zarr is missing,
    as in the main venv, so a broken .venv-hdmf fails the peer test above."""
    if importlib.util.find_spec("hdmf_zarr") is not None:
        pytest.skip("hdmf_zarr is importable in this environment")
    proc = subprocess.run(
        [sys.executable, str(PEER / "check_hdmf_reads.py"), "nowhere", "nothing"],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["error"] == "cannot import hdmf_zarr"
