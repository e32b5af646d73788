"""Files are checked before they are trusted: a value of a directory store that is not a
regular file (a FIFO, which blocks its reader forever; a device, which never ends) is
refused with a StoreIOError naming the store and the key, by both engines, for chunks,
shards and metadata documents, one key or many at once. Each case runs in a subprocess
with a time limit, so that a regression fails instead of hanging the suite."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Run in a subprocess: writes an array, turns one of its files into a FIFO (or a device),
# reads, and prints what each read gave (values, or the error's classes and text).
SCRIPT = textwrap.dedent("""
    import json, os, stat, sys
    import numpy as np
    import zarrkit as zk
    path, layout, victim, kind, engine = sys.argv[1:6]
    options = {"shards": (8,)} if layout == "sharded" else {}
    compressors = None if layout == "raw" else "auto"
    a = zk.create_array(path, shape=(16,), chunks=(4,), dtype="i4", compressors=compressors,
                        **options)
    a[:] = np.arange(16)
    target = os.path.join(path, *victim.split("/"))
    os.remove(target)
    if kind == "fifo":
        os.mkfifo(target)
    else:  # /dev/zero's numbers: reads never end
        os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(1, 5))
    results = {}
    with zk.config.set(engine=engine):
        def attempt(name, action):
            try:
                value = action()
                results[name] = {"value": np.asarray(value).tolist()}
            except Exception as e:
                results[name] = {"error": [c.__name__ for c in type(e).__mro__], "text": str(e)}
        if victim == "zarr.json":
            attempt("open", lambda: zk.open_array(path, mode="r")[:])
        else:
            b = zk.open_array(path, mode="r")
            inside = 9 if layout == "sharded" else 5  # an element of the file c/1
            attempt("all", lambda: b[:])
            attempt("one", lambda: b[inside])
            attempt("elsewhere", lambda: b[:2])
            attempt("points", lambda: b.vindex[[1, inside]])
            keys = [f"c/{i}" for i in range(4)] * 8
            attempt("get_many", lambda: [v is not None for v in b.store.get_many(keys)])
    print(json.dumps(results))
""")


def run(tmp_path: Path, layout: str, victim: str, kind: str, engine: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "a.zarr"), layout, victim, kind, engine],
        capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def assert_refused(result: dict, key: str) -> None:
    assert "error" in result, result
    assert "StoreIOError" in result["error"] and "ZarrkitError" in result["error"], result
    assert key in result["text"] and "regular file" in result["text"], result


@pytest.mark.parametrize("engine", ["native", "python"])
@pytest.mark.parametrize("layout", ["raw", "compressed", "sharded"])
def test_a_fifo_chunk_is_refused_not_waited_on(tmp_path: Path, layout: str,
                                                engine: str) -> None:
    # c/1: the chunk of elements 4-7, or (sharded) the shard of elements 8-15
    results = run(tmp_path, layout, "c/1", "fifo", engine)
    for name in ("all", "one", "points"):
        assert_refused(results[name], "c/1")
    assert results["elsewhere"] == {"value": [0, 1]}
    assert_refused(results["get_many"], "c/1")


@pytest.mark.parametrize("engine", ["native", "python"])
def test_a_fifo_metadata_document_is_refused(tmp_path: Path, engine: str) -> None:
    result = run(tmp_path, "raw", "zarr.json", "fifo", engine)["open"]
    assert_refused(result, "zarr.json")


@pytest.mark.parametrize("engine", ["native", "python"])
def test_a_device_chunk_is_refused(tmp_path: Path, engine: str) -> None:
    probe = tmp_path / "probe"
    try:
        os.mknod(probe, stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("this machine does not let the test make a device file")
    results = run(tmp_path, "compressed", "c/2", "device", engine)
    assert_refused(results["all"], "c/2")
    assert results["elsewhere"] == {"value": [0, 1]}
