"""Allocations driven by a file are bounded by what the request needs: a shard that
declares 2^26 inner chunks costs a read of one element of an empty array no table of
them (the native engine built its Morton order of every inner chunk: 2.6 GB, 10 s).
Measured in a subprocess (its peak RSS), on both engines."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent("""
    import json, sys, numpy as np, zarrkit as zk

    def peak_kib():  # this process's own (ru_maxrss starts at the parent's size)
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status
                        if line.startswith("VmHWM:"))

    path, engine = sys.argv[1:3]
    before = peak_kib()
    with zk.config.set(engine=engine):
        a = zk.open_array(path, mode="r")
        values = [int(a[5]), a[:3].tolist(), a.vindex[[7, 70000]].tolist()]
    after = peak_kib()
    print(json.dumps({"values": values, "grown_mb": (after - before) / 1024}))
""")


@pytest.mark.parametrize("engine", ["native", "python"])
def test_one_element_of_a_shard_of_2_26_inner_chunks(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "m.zarr"
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [1 << 26], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1 << 26]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 3,
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1], "codecs": [{"name": "bytes"}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c"}]}}]}))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(path), engine],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["values"] == [3, [3, 3, 3], [3, 3]]
    assert result["grown_mb"] < 200, result
