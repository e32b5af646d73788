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

The other way: pynwb + hdmf-zarr 0.14 (main venv) write an NWB file in Zarr v3,
``zk.convert(..., zarr_format=2)`` turns it into hdmf-zarr 0.13's v2 form, and hdmf-zarr
0.13 (tests/hdmf_peer/read_nwb.py in ``.venv-hdmf``) must read from the copy exactly what
hdmf-zarr 0.14 (the same script, imported here) reads from the original: every link,
reference and value, as builders and as pynwb objects.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest
from hdmf_support import write_nwb
from shared_fixtures import fixtures_dir

import zarrkit as zk

REPO = Path(__file__).resolve().parents[1]
PEER = Path(__file__).resolve().parent / "hdmf_peer"
HDMF_PYTHON = REPO / ".venv-hdmf" / "bin" / "python"
PICKLE_ENV = "NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE"
# The fixture -> whether hdmf-zarr needs unpickling allowed to read it.
FIXTURES = {"exjson.nwb.zarr": False, "ex.nwb.zarr": True}


def peer_module(name: str) -> ModuleType:
    """tests/hdmf_peer/<name>.py, imported under a name of its own."""
    spec = importlib.util.spec_from_file_location(f"hdmf_peer_{name}", PEER / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def step1() -> ModuleType:
    """tests/hdmf_peer/modify_with_zarrkit.py."""
    return peer_module("modify_with_zarrkit")


def require_hdmf_venv() -> None:
    if not HDMF_PYTHON.exists():
        pytest.fail(f"the hdmf-zarr environment is missing ({HDMF_PYTHON}): run "
                    f"`make hdmf-venv` (`make test` builds it)")


def hdmf_env(pickle: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in (PICKLE_ENV, "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    if pickle:
        env[PICKLE_ENV] = "1"
    return env


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_hdmf_zarr_reads_zarrkit_changes(fixture: str, tmp_path: Path) -> None:
    require_hdmf_venv()
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
    so a broken .venv-hdmf fails the peer test above. The main venv has hdmf-zarr 0.14 (its
    own peer tests use it): the script runs here with the import made to fail."""
    script = str(PEER / "check_hdmf_reads.py")
    hide = ("import runpy, sys; sys.modules['hdmf_zarr'] = None; "
            f"sys.argv = [{script!r}, 'nowhere', 'nothing']; "
            f"runpy.run_path({script!r}, run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["error"] == "cannot import hdmf_zarr"


def test_hdmf_zarr_013_reads_a_014_file_converted_to_v2(tmp_path: Path) -> None:
    """hdmf-zarr 0.13 reads a file that hdmf-zarr 0.14 wrote (Zarr v3), once zarrkit
    converted it to v2, as hdmf-zarr 0.14 reads the original: the same links, reference
    attributes (a region's table, an index's target), reference datasets (the electrodes'
    ``group`` column, the epochs' compound rows) and every pynwb object with every field
    value."""
    require_hdmf_venv()
    source, converted = tmp_path / "v3.nwb.zarr", tmp_path / "v2.nwb.zarr"
    write_nwb(source)
    reader = peer_module("read_nwb")
    with warnings.catch_warnings():  # hdmf-zarr's own, about consolidated metadata
        warnings.simplefilter("ignore")
        theirs = reader.report(str(source))
    assert theirs["versions"]["hdmf_zarr"].startswith("0.14."), theirs["versions"]
    zk.convert(source, converted, zarr_format=2, progress=False)

    proc = subprocess.run(
        [str(HDMF_PYTHON), str(PEER / "read_nwb.py"), str(converted)], capture_output=True,
        text=True, timeout=120, env=hdmf_env(False), cwd=tmp_path)
    assert proc.returncode != 2, f"hdmf-zarr cannot be imported in .venv-hdmf:\n{proc.stdout}"
    assert proc.returncode == 0, (f"hdmf-zarr 0.13 cannot read the converted file:\n"
                                  f"{proc.stderr[-4000:]}")
    mine = json.loads(proc.stdout)
    assert mine["versions"]["hdmf_zarr"] == "0.13.0", mine["versions"]
    assert mine["versions"]["zarr"].startswith("2."), mine["versions"]
    assert mine["builders"] == theirs["builders"]
    assert mine["objects"] == theirs["objects"]
    # What both read is the file that was written, not two empty reports.
    ephys = "/general/extracellular_ephys"
    assert theirs["builders"]["links"] == {
        f"{ephys}/eg0/device": "/general/devices/dev",
        f"{ephys}/eg1/device": "/general/devices/dev",
        "/processing/mod/dec0/source_timeseries": "/acquisition/ts",
        "/processing/mod/dec1/source_timeseries": "/acquisition/ts",
        "/processing/mod/ts2/data": "/acquisition/ts/data"}
    assert theirs["builders"]["reference_attributes"] == {
        "/acquisition/es/electrodes#table": f"{ephys}/electrodes",
        "/intervals/epochs/timeseries_index#target": "/intervals/epochs/timeseries"}
    assert theirs["builders"]["reference_datasets"] == {
        f"{ephys}/electrodes/group": [f"{ephys}/eg0", f"{ephys}/eg1", f"{ephys}/eg0"],
        "/intervals/epochs/timeseries": [[0, 1, "/acquisition/ts"], [0, 10, "/acquisition/es"],
                                         [1, 1, "/processing/mod/ts2"]]}
    objects = {(o["type"], o["name"]): o["fields"] for o in theirs["objects"].values()}
    assert objects[("DynamicTableRegion", "electrodes")]["(data)"] == [0, 2]
    assert objects[("NWBFile", "root")]["session_start_time"] == "2024-01-01T00:00:00+00:00"
    assert len(objects) > 20
