"""``zarrkit cp``, ``convert`` and ``check``, the resumable copy and the progress bar.

Oracles: zarr-python writes the sources and reads (with tensorstore) what the commands
write; the files on disk are compared byte for byte; corruption is injected by hand at
offsets the specification fixes.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tensorstore as ts
import zarr
from click.testing import CliRunner
from numcodecs import GZip
from zarr.codecs import BytesCodec, Crc32cCodec

import zarrkit as zk
from zarrkit import progress as progress_module
from zarrkit.check import check
from zarrkit.cli import main
from zarrkit.convert import replicate
from zarrkit.storage.memory import MemoryStore


def run(*args: str, ok: int | None = 0) -> subprocess.CompletedProcess[str]:
    """``zarrkit ARGS`` in a subprocess, stdout and stderr piped (not terminals)."""
    result = subprocess.run([sys.executable, "-m", "zarrkit", *args], capture_output=True,
                            text=True, timeout=120)
    if ok is not None:
        assert result.returncode == ok, result.stderr
    return result


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def tensorstore_read(path: Path, zarr_format: int) -> np.ndarray[Any, Any]:
    driver = "zarr3" if zarr_format == 3 else "zarr"
    return np.asarray(ts.open({"driver": driver, "kvstore": {"driver": "file",
                                                             "path": str(path)}}).result()
                      .read().result())


@pytest.fixture
def source_v2(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray[Any, Any]]]:
    """A Zarr v2 hierarchy written by zarr-python: a group with attributes, a float
    array with a partial edge chunk, an int array with unwritten (fill) chunks."""
    root = zarr.open_group(tmp_path / "src.zarr", mode="w", zarr_format=2)
    root.attrs["title"] = "source"
    values = {
        "grp/x": np.arange(40 * 30, dtype="f4").reshape(40, 30) / 7,
        "y": np.zeros(100, dtype="i8"),
    }
    values["y"][:30] = np.arange(30)
    x = root.create_array("grp/x", shape=(40, 30), chunks=(10, 10), dtype="f4")
    x[...] = values["grp/x"]
    y = root.create_array("y", shape=(100,), chunks=(10,), dtype="i8", fill_value=0)
    y[:30] = values["y"][:30]
    return tmp_path / "src.zarr", values


@pytest.fixture
def source_v3(tmp_path: Path) -> tuple[Path, np.ndarray[Any, Any]]:
    """A sharded Zarr v3 array written by zarr-python (inner chunks: bytes + crc32c)."""
    values = np.arange(16 * 12, dtype="<u2").reshape(16, 12)
    a = zarr.create_array(tmp_path / "v3.zarr", name="a", shape=(16, 12), shards=(8, 6),
                          chunks=(4, 3), dtype="<u2", serializer=BytesCodec(),
                          compressors=[Crc32cCodec()], fill_value=0)
    a[...] = values
    return tmp_path / "v3.zarr", values


# --- cp ---------------------------------------------------------------------------------------
def test_cp_copies_every_key_as_it_is_and_resumes_with_nothing_to_write(
        tmp_path: Path, source_v2: Any) -> None:
    src, values = source_v2
    dst = tmp_path / "dst.zarr"
    first = json.loads(run("cp", str(src), str(dst), "--json").stdout)
    expected = files(src)
    assert files(dst) == expected  # the bytes of every key: nothing re-encoded
    assert first == {"keys": len(expected), "written": len(expected), "skipped": 0,
                     "bytes_written": sum(len(v) for v in expected.values())}
    copied = zarr.open_group(dst, mode="r")
    assert copied.attrs["title"] == "source"
    for name, array in values.items():
        np.testing.assert_array_equal(copied[name][...], array)
        np.testing.assert_array_equal(tensorstore_read(dst / name, 2), array)
    again = json.loads(run("cp", str(src), str(dst), "--json").stdout)
    assert again == {"keys": len(expected), "written": 0, "skipped": len(expected),
                     "bytes_written": 0}


def test_cp_a_node_to_another_path_creates_its_parent_groups(
        tmp_path: Path, source_v3: Any) -> None:
    src, values = source_v3
    dst = tmp_path / "out.zarr"
    result = run("cp", str(src), str(dst), "a", "--path", "copies/b")
    assert result.stdout.startswith("copied 5 of 5 keys")  # zarr.json and 4 shards
    assert files(dst / "copies" / "b") == files(src / "a")
    root = zarr.open_group(dst, mode="r")
    assert root["copies"]["b"].shards == (8, 6)
    np.testing.assert_array_equal(root["copies/b"][...], values)
    np.testing.assert_array_equal(tensorstore_read(dst / "copies" / "b", 3), values)


def test_cp_refuses_a_different_node_unless_overwrite(tmp_path: Path, source_v2: Any,
                                                      source_v3: Any) -> None:
    src, values = source_v2
    other, _ = source_v3
    result = run("cp", str(other), str(src), ok=1)
    assert result.stderr.startswith("zarrkit: error: the destination already holds a "
                                    "different node at path '/'")
    assert len(result.stderr.splitlines()) == 1
    assert "Traceback" in run("--debug", "cp", str(other), str(src), ok=1).stderr
    run("cp", str(other), str(src), "--overwrite")
    assert files(src) == files(other)


def test_cp_resumes_an_interrupted_copy(source_v2: Any) -> None:
    src, values = source_v2
    dest = Interrupting(after=5)
    with pytest.raises(RuntimeError, match="interrupted"):
        replicate(str(src), dest, progress=False)
    assert 0 < len(dest.values) < len(files(src))
    assert not any(k.endswith((".zarray", ".zgroup", ".zattrs")) for k in dest.values)
    dest.after = None
    dest.writes = 0
    report = replicate(str(src), dest, progress=False)
    assert report.skipped == 5 and dest.writes == report.written == len(files(src)) - 5
    assert {k: bytes(v) for k, v in dest.values.items()} == files(src)


# --- resumable convert --------------------------------------------------------------------
class Interrupting(MemoryStore):
    """A memory store counting its writes (and deletes), failing on the one after
    ``after`` as an interrupted run would stop."""

    def __init__(self, after: int | None = None) -> None:
        super().__init__()
        self.after = after
        self.writes = 0

    def _count(self) -> None:
        if self.after is not None and self.writes >= self.after:
            raise RuntimeError("interrupted")
        self.writes += 1

    def set(self, key: str, value: Any) -> None:
        self._count()
        super().set(key, value)

    def set_if_not_exists(self, key: str, value: Any) -> bool:
        self._count()
        return super().set_if_not_exists(key, value)

    def delete(self, key: str) -> None:
        self._count()
        super().delete(key)

    @property
    def values(self) -> dict[str, Any]:
        return self._data  # type: ignore[attr-defined, no-any-return]


@pytest.mark.parametrize("options", [
    {"zarr_format": 3, "compressors": [{"name": "gzip", "configuration": {"level": 6}}]},
    {"zarr_format": 3, "chunks": (5, 5), "shards": (20, 10)},
    {"zarr_format": 2, "compressors": [{"id": "zstd", "level": 3}]},
], ids=["v3-gzip", "v3-sharded", "v2-zstd"])
def test_convert_resumes_after_an_interruption_and_then_writes_nothing(
        source_v2: Any, options: dict[str, Any]) -> None:
    src, values = source_v2
    if "shards" in options:  # a 2-D hierarchy for the 2-D shards
        src = src / "grp"
        values = {"x": values["grp/x"]}
    clean = Interrupting()
    zk.convert(str(src), clean, progress=False, **options)
    dest = Interrupting(after=clean.writes // 2)
    with pytest.raises(RuntimeError, match="interrupted"):
        zk.convert(str(src), dest, progress=False, **options)
    dest.after, dest.writes = None, 0
    zk.convert(str(src), dest, progress=False, **options)
    assert 0 < dest.writes < clean.writes  # only what the first run had not written
    # The resumed destination is exactly a clean conversion's, and holds the values.
    assert {k: bytes(v) for k, v in dest.values.items()} == {
        k: bytes(v) for k, v in clean.values.items()}
    reread = zarr.open_group(zarr.storage.MemoryStore(
        {k: zarr.core.buffer.cpu.Buffer.from_bytes(bytes(v)) for k, v in dest.values.items()}),
        mode="r")
    assert reread.metadata.zarr_format == options["zarr_format"]
    for name, array in values.items():
        np.testing.assert_array_equal(reread[name][...], array)
    dest.writes = 0
    zk.convert(str(src), dest, progress=False, **options)
    assert dest.writes == 0


def test_convert_refuses_a_destination_holding_something_else(source_v2: Any) -> None:
    src = source_v2[0] / "grp"  # 2-D arrays only
    dest = Interrupting()
    zk.convert(str(src), dest, progress=False, zarr_format=3)
    with pytest.raises(zk.errors.ContainsArrayError, match="different array at path 'x'"):
        zk.convert(str(src), dest, progress=False, zarr_format=3, chunks=(5, 5))
    zk.convert(str(src), dest, progress=False, zarr_format=3, chunks=(5, 5), overwrite=True)
    assert zk.open_array(dest, path="x", mode="r").chunks == (5, 5)


# --- convert through the command line ---------------------------------------------------------
def test_convert_v2_to_sharded_v3_read_by_zarr_python_and_tensorstore(
        tmp_path: Path, source_v2: Any) -> None:
    src, values = source_v2
    dst = tmp_path / "v3.zarr"
    summary = json.loads(run("convert", str(src), str(dst), "--path", "grp", "--zarr-format",
                             "3", "--compressor", "blosc:zstd:5", "--chunks", "5,5",
                             "--shards", "20,10", "--json").stdout)
    assert summary == {"zarr_format": 3, "path": "grp", "arrays": 1, "groups": 1}
    x = zarr.open_array(dst, path="grp/x", mode="r")
    assert (x.metadata.zarr_format, x.shards, x.chunks) == (3, (20, 10), (5, 5))
    (blosc,) = x.compressors
    assert (blosc.cname, blosc.clevel) == ("zstd", 5)
    np.testing.assert_array_equal(x[...], values["grp/x"])
    np.testing.assert_array_equal(tensorstore_read(dst / "grp" / "x", 3), values["grp/x"])
    before = files(dst)
    run("convert", str(src), str(dst), "--path", "grp", "--compressor", "blosc:zstd:5",
        "--chunks", "5,5", "--shards", "20,10")
    assert files(dst) == before


def test_convert_v3_to_v2_gzip(tmp_path: Path, source_v3: Any) -> None:
    src, values = source_v3
    dst = tmp_path / "v2.zarr"
    result = run("convert", str(src), str(dst), "--zarr-format", "2", "--compressor", "gzip:6")
    assert result.stdout == "converted 1 array and 1 group to Zarr v2\n"
    a = zarr.open_array(dst, path="a", mode="r")
    assert a.metadata.zarr_format == 2 and a.metadata.compressor.get_config() == {
        "id": "gzip", "level": 6}
    np.testing.assert_array_equal(a[...], values)
    np.testing.assert_array_equal(tensorstore_read(dst / "a", 2), values)


@pytest.mark.parametrize("args, message", [
    (["--chunks", "5,x"], "Invalid value for '--chunks'"),
    (["--chunks", "0,5"], "Invalid value for '--chunks'"),
    (["--compressor", "snappy"], "unknown compressor 'snappy'"),
    (["--compressor", "zstd:high"], "unknown compressor 'zstd:high'"),
    (["--zarr-format", "4"], "Invalid value for '--zarr-format'"),
    (["--zarr-format", "2", "--shards", "20,10"], "sharding needs --zarr-format 3"),
])
def test_convert_usage_errors_exit_2(tmp_path: Path, source_v2: Any, args: list[str],
                                     message: str) -> None:
    src, _ = source_v2
    result = CliRunner().invoke(main, ["convert", str(src), str(tmp_path / "d.zarr"), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "d.zarr").exists() or not files(tmp_path / "d.zarr")


def test_convert_failures_exit_1_in_one_line(tmp_path: Path, source_v2: Any) -> None:
    src, _ = source_v2
    missing = run("convert", str(src), str(tmp_path / "d.zarr"), "--path", "nope", ok=1)
    assert missing.stderr == "zarrkit: error: nothing to convert at path 'nope'\n"
    no_store = run("convert", str(tmp_path / "absent.zarr"), str(tmp_path / "d.zarr"), ok=1)
    assert no_store.stderr.startswith("zarrkit: error: no such store")


# --- check --------------------------------------------------------------------------------------
def test_check_reports_a_clean_store_clean(tmp_path: Path, source_v2: Any,
                                           source_v3: Any) -> None:
    src, _ = source_v2
    report = json.loads(run("check", str(src), "--json").stdout)
    on_disk = files(src)
    chunks = [k for k in on_disk if not k.rpartition("/")[2].startswith(".z")]
    assert report == {"ok": True, "documents": len(on_disk) - len(chunks), "arrays": 2,
                      "chunks": len(chunks), "problems": []}
    v3, _ = source_v3
    assert run("check", str(v3)).stdout.endswith(
        "checked 2 metadata documents and 4 chunks of 1 arrays: ok\n")


def test_check_names_every_corrupt_key_and_exits_1(tmp_path: Path, source_v2: Any,
                                                   source_v3: Any) -> None:
    src, _ = source_v2
    v3, _ = source_v3
    # v2 chunks of a gzip-compressed array: one flipped byte fails gzip's CRC.
    gz = zarr.open_group(src, mode="a").create_array(
        "gz", shape=(20,), chunks=(10,), dtype="i4", compressors=GZip(level=5))
    gz[...] = np.arange(20)
    chunk = src / "gz" / "1"
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))
    (src / "grp" / "x" / ".zarray").write_text("{broken")  # its chunks cannot be checked
    (src / "y" / "2").write_bytes(b"\x00\x01")  # uncompressed i8 chunk of the wrong size
    # Sharded: the first inner chunk (Morton order, offset 0) fails its crc32c; a
    # truncated shard loses its index.
    shard = v3 / "a" / "c" / "0" / "0"
    data = bytearray(shard.read_bytes())
    data[0] ^= 0xFF
    shard.write_bytes(bytes(data))
    truncated = v3 / "a" / "c" / "1" / "1"
    truncated.write_bytes(truncated.read_bytes()[:40])
    (v3 / "zarr.json").write_text('{"zarr_format": 3, "node_type": "grou')

    result = run("check", str(src), "--json", ok=1)
    report = json.loads(result.stdout)
    assert report["ok"] is False
    assert sorted(p["key"] for p in report["problems"]) == ["grp/x/.zarray", "gz/1", "y/2"]
    result = run("check", str(v3), "--json", ok=1)
    problems = {(p["key"], tuple(p.get("inner_chunk", ()))): p["error"]
                for p in json.loads(result.stdout)["problems"]}
    assert set(problems) == {("zarr.json", ()), ("a/c/0/0", (0, 0)), ("a/c/1/1", ())}
    assert "checksum" in problems[("a/c/0/0", (0, 0))].lower()
    plain = run("check", str(v3), ok=1).stdout.splitlines()
    assert any(line.startswith("corrupt: a/c/0/0 inner chunk [0, 0]: ") for line in plain)
    assert plain[-1] == "checked 2 metadata documents and 4 chunks of 1 arrays: 3 corrupt"


def test_check_from_python_and_on_a_sub_path(source_v3: Any) -> None:
    v3, _ = source_v3
    assert check(str(v3), "a").ok
    with pytest.raises(zk.errors.MetadataError, match="nothing to check at path 'b'"):
        check(str(v3), "b")
    assert run("check", str(v3), "b", ok=1).stderr.startswith(
        "zarrkit: error: nothing to check")


# --- progress -------------------------------------------------------------------------------
def test_progress_is_silent_when_piped_unless_asked(tmp_path: Path, source_v2: Any) -> None:
    src, _ = source_v2
    quiet = run("convert", str(src), str(tmp_path / "a.zarr"))
    assert quiet.stderr == ""
    shown = run("convert", str(src), str(tmp_path / "b.zarr"), "--progress")
    assert "zarrkit convert" in shown.stderr and "/s" in shown.stderr  # with its rate
    assert run("check", str(src), "--progress").stderr.count("chunks/s") == 1
    assert run("cp", str(src), str(tmp_path / "c.zarr"), "--no-progress").stderr == ""


def test_library_progress_default_shows_only_long_runs(
        source_v2: Any, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    src, _ = source_v2
    zk.convert(str(src), {}, progress=None)
    assert capsys.readouterr().err == ""  # a run shorter than SHOW_AFTER_SECONDS
    monkeypatch.setattr(progress_module, "SHOW_AFTER_SECONDS", 0.0)
    zk.convert(str(src), {}, progress=None)
    assert "zarrkit convert" in capsys.readouterr().err
    seen: list[tuple[int, int]] = []
    zk.convert(str(src), {}, progress=lambda done, total: seen.append((done, total)))
    total = 40 * 30 * 4 + 100 * 8
    assert seen[-1] == (total, total) and all(t == total for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_progress_bar_reports_counts_and_rate() -> None:
    out = io.StringIO()
    with progress_module.ProgressBar("check", unit="chunks", show=True, file=out) as bar:
        bar(7, 10)
    assert "7/10" in out.getvalue() and "chunks/s" in out.getvalue()
    hidden = progress_module.ProgressBar("check", show=False, file=out)
    hidden(1, 2)
    assert not hidden.shown
    with pytest.raises(ValueError, match="progress unit"):
        progress_module.ProgressBar("x", unit="parsecs")  # type: ignore[arg-type]


def test_python_m_zarrkit_lists_the_commands() -> None:
    result = run("--help")
    for command in ("cp", "convert", "check"):
        assert f"  {command} " in result.stdout
