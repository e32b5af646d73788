"""Replacing data never deletes it first (issue 28).

Daf ``overwrite=True`` wrote the new property only after deleting the old one, so a write
that failed (disk full, EFBIG) lost every old value and later reads gave zeros. ``convert``
wrote each array's metadata before its chunks, so a killed conversion left a destination
that opened as complete with most elements read as fill.

Each test here failed on the code before the fix (see its docstring)."""

from __future__ import annotations

import errno
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import zarrkit as zk
from zarrkit.check import check as check_store
from zarrkit.errors import UnsupportedOperationError, ZarrkitError
from zarrkit.storage import MemoryStore

SRC = str(Path(__file__).resolve().parents[1] / "src")
N = 3000
OLD = np.arange(N, dtype=np.float64) + 0.5
NEW = -np.arange(N, dtype=np.float64) - 7.25
STAGING = ".zarrkit-replacing"


class FullDisk:
    """Give a store a disk of ``room`` free bytes: ``set``/``set_many`` raise ENOSPC when
    the bytes written (less those they replace) do not fit, and deletes free what they
    remove, as a file system does."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, store: Any, room: int) -> None:
        self.store = store
        self.room = room
        self.refused = 0
        get, set_, delete = store.get, store.set, store.delete
        delete_prefix, list_prefix = store.delete_prefix, store.list_prefix

        def size(key: str) -> int:
            value = get(key)
            return 0 if value is None else len(value)

        def take(items: list[tuple[str, Any]]) -> None:
            needed = sum(len(bytes(value)) - size(key) for key, value in items)
            if needed > self.room:
                self.refused += 1
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.room -= needed

        def set_one(key: str, value: Any) -> None:
            take([(key, value)])
            set_(key, value)

        def set_many(items: Any) -> None:
            items = list(items.items() if hasattr(items, "items") else items)
            take(items)
            for key, value in items:
                set_(key, value)

        def delete_one(key: str) -> None:
            self.room += size(key)
            delete(key)

        def delete_all(prefix: str) -> None:
            self.room += sum(size(key) for key in list(list_prefix(prefix)))
            delete_prefix(prefix)

        for name, function in (("set", set_one), ("set_many", set_many),
                               ("delete", delete_one), ("delete_prefix", delete_all)):
            monkeypatch.setattr(store, name, function)


def _put(daf: Any, kind: str, value: np.ndarray[Any, Any], *, overwrite: bool) -> None:
    if kind == "dense":
        daf.set_vector("cell", "x", value, overwrite=overwrite)
    elif kind == "packed":
        daf.set_vector("cell", "x", value, overwrite=overwrite, packed=True)
    elif kind == "sparse":
        daf.set_vector("cell", "x", sp.coo_array(np.where(value > 100, value, 0)),
                       overwrite=overwrite)
    elif kind == "matrix":
        daf.set_matrix("cell", "gene", "m", np.stack([value, 2 * value], 1),
                       overwrite=overwrite)
    else:
        daf.set_scalar("s", float(value[3]), overwrite=overwrite)


def _expected(kind: str, value: np.ndarray[Any, Any]) -> Any:
    if kind == "sparse":
        return np.where(value > 100, value, 0)
    if kind == "matrix":
        return np.stack([value, 2 * value], 1)
    if kind == "scalar":
        return float(value[3])
    return value


def _get(daf: Any, kind: str) -> Any:
    if kind == "sparse":
        return daf.get_vector("cell", "x").todense()
    if kind == "matrix":
        # Both layouts must hold the same (old or new) values.
        flipped = np.asarray(daf.get_matrix("gene", "cell", "m", relayout=False))
        matrix = np.asarray(daf.get_matrix("cell", "gene", "m", relayout=False))
        np.testing.assert_array_equal(flipped.T, matrix)
        return matrix
    if kind == "scalar":
        return float(daf.get_scalar("s"))
    return np.asarray(daf.get_vector("cell", "x"))


def _new_dataset(where: Any, kind: str, zarr_format: int) -> Any:
    daf = zk.daf.open(where, "w", zarr_format=zarr_format)
    daf.add_axis("cell", [f"c{i}" for i in range(N)])
    daf.add_axis("gene", ["a", "b"])
    _put(daf, kind, OLD, overwrite=False)
    return daf


KINDS = [("dense", 3), ("packed", 3), ("sparse", 3), ("matrix", 3), ("scalar", 3),
         ("dense", 2), ("sparse", 2), ("matrix", 2)]


@pytest.mark.parametrize("backend", ["directory", "memory"])
@pytest.mark.parametrize(("kind", "zarr_format"), KINDS)
def test_failed_overwrite_keeps_the_old_property(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str, kind: str,
        zarr_format: int) -> None:
    """Old code: ``overwrite=True`` deleted the property, then the first failed write
    (budget 0) left no property at all (DafKeyError) or, with chunks unwritten, zeros."""
    failures = 0
    failed = True
    for room in [0, 50, 200, 400, 700, 1_000, 2_000, 4_000, 8_000, 16_000, 24_000,
                 32_000, 48_000, 64_000, 96_000, 128_000, 1 << 30]:
        where: Any = (str(tmp_path / f"{room}.daf.zarr") if backend == "directory"
                      else MemoryStore())
        daf = _new_dataset(where, kind, zarr_format)
        store = daf.store
        with monkeypatch.context() as patch:
            disk = FullDisk(patch, store, room)
            try:
                _put(daf, kind, NEW, overwrite=True)
            except (OSError, ZarrkitError):
                failed = True
            else:
                failed = False
        assert failed == bool(disk.refused), "a refused write was not reported"
        daf.close()
        reopened = zk.daf.open(where if backend == "directory" else store, "r")
        expected = _expected(kind, OLD if failed else NEW)
        np.testing.assert_array_equal(_get(reopened, kind), expected)
        assert STAGING not in reopened.root, f"room {room}: staging left visible"
        if kind not in ("scalar", "matrix"):
            assert list(reopened.vectors("cell")) == ["x"]
        reopened.close()
        failures += failed
    assert failures >= 2, "the disk was never full during the overwrite"
    assert not failed, "the overwrite did not succeed with ample room"


def test_zip_overwrite_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """The ZIP backend is append-only: an overwrite is refused and the old values stay."""
    path = str(tmp_path / "d.daf.zarr.zip")
    daf = _new_dataset(path, "dense", 3)
    with pytest.raises(UnsupportedOperationError, match="append-only"):
        _put(daf, "dense", NEW, overwrite=True)
    daf.close()
    with zk.daf.open(path, "r") as reopened:
        np.testing.assert_array_equal(_get(reopened, "dense"), OLD)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_overwrite_leaves_the_layout_of_a_plain_write(tmp_path: Path, zarr_format: int
                                                      ) -> None:
    """After a successful overwrite the store is byte for byte what deleting and writing
    leaves (Julia-compatible layout, consolidated metadata included)."""
    def snapshot(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
                if p.is_file()}

    replaced, rewritten = tmp_path / "a.daf.zarr", tmp_path / "b.daf.zarr"
    for where in (replaced, rewritten):
        daf = _new_dataset(str(where), "matrix", zarr_format)
        if where == replaced:
            _put(daf, "matrix", NEW, overwrite=True)
        else:
            daf.delete_matrix("cell", "gene", "m")
            _put(daf, "matrix", NEW, overwrite=False)
        daf.close()
    assert snapshot(replaced) == snapshot(rewritten)


EFBIG_CHILD = textwrap.dedent("""
    import resource, signal, sys
    import numpy as np
    import zarrkit as zk
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    path, kind = sys.argv[1], sys.argv[2]
    daf = zk.daf.open(path, "r+")
    limit = int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    value = np.random.default_rng(0).random(%(n)d)
    try:
        if kind == "matrix":
            daf.set_matrix("cell", "gene", "m", np.stack([value, value], 1), overwrite=True)
        else:
            daf.set_vector("cell", "x", value, overwrite=True)
    except Exception as error:
        print("failed", type(error).__name__, error)
        sys.exit(3)
    print("written")
""") % {"n": N}


@pytest.mark.parametrize("kind", ["dense", "matrix"])
def test_efbig_during_overwrite_keeps_the_old_values(tmp_path: Path, kind: str) -> None:
    """A real EFBIG (RLIMIT_FSIZE below the new chunk's size) on a directory store, in a
    subprocess. Old code: the old property was gone, the new one had no chunk, so reads
    gave zeros (or DafKeyError)."""
    path = str(tmp_path / "d.daf.zarr")
    _new_dataset(path, kind, 3).close()
    env = {**os.environ, "PYTHONPATH": SRC}
    result = subprocess.run([sys.executable, "-c", EFBIG_CHILD, path, kind, "4096"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 3, result.stdout + result.stderr
    with zk.daf.open(path, "r") as reopened:
        np.testing.assert_array_equal(_get(reopened, kind), _expected(kind, OLD))
        assert STAGING not in reopened.root


# --- convert killed midway ----------------------------------------------------------

CONVERT_CHILD = textwrap.dedent("""
    import sys
    import zarrkit as zk
    print("ready", flush=True)
    zk.convert(sys.argv[1], sys.argv[2], zarr_format=int(sys.argv[3]), progress=False)
    print("done", flush=True)
""")

ARRAYS = {"a": (120, 100), "g/b": (90, 110), "g/h/c": (100, 100)}


def _source(tmp_path: Path, zarr_format: int) -> tuple[str, dict[str, np.ndarray[Any, Any]]]:
    path = str(tmp_path / f"source{zarr_format}.zarr")
    root = zk.open_group(path, mode="w", zarr_format=zarr_format)
    values = {}
    for offset, (name, shape) in enumerate(ARRAYS.items()):
        # No element equals the fill value, so any unwritten chunk shows.
        data = np.arange(np.prod(shape), dtype="i4").reshape(shape) + 1 + offset
        root.create_array(name, shape=shape, chunks=(10, 10), dtype="i4", fill_value=0)[...] = data
        values[name] = data
    root.attrs["title"] = "source"
    return path, values


def _run_convert(source: str, dest: str, zarr_format: int, delay: float | None
                 ) -> tuple[bool, float]:
    """Convert in a subprocess, SIGKILLed ``delay`` seconds after it imported zarrkit
    (None: let it finish); whether it finished, and how long it ran."""
    env = {**os.environ, "PYTHONPATH": SRC}
    child = subprocess.Popen([sys.executable, "-c", CONVERT_CHILD, source, dest,
                              str(zarr_format)], env=env, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    started = time.monotonic()
    try:
        if delay is not None:
            try:
                child.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                child.send_signal(signal.SIGKILL)
        child.wait(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return child.returncode == 0, time.monotonic() - started


@pytest.mark.parametrize(("source_format", "dest_format"), [(2, 3), (3, 2)])
def test_killed_convert_never_shows_an_incomplete_array(
        tmp_path: Path, source_format: int, dest_format: int) -> None:
    """SIGKILL a ``convert`` at random moments: every array that opens in the destination
    holds all the source's values, and ``check`` is not ok while the conversion has not
    finished. Old code: the array metadata was written first, so an interrupted
    destination opened with most elements read as the fill value, and check said ok."""
    source, values = _source(tmp_path, source_format)
    finished, duration = _run_convert(source, str(tmp_path / "clean.zarr"), dest_format,
                                      None)
    assert finished
    rng = random.Random(28 + dest_format)
    interrupted = partial_arrays = 0
    for trial in range(16):  # bounded; the delays adapt to the machine's load
        if interrupted >= 4 and partial_arrays:
            break  # enough seen
        dest = str(tmp_path / f"dest{trial}.zarr")
        finished, _ = _run_convert(source, dest, dest_format,
                                   rng.uniform(0.02, 0.6) * duration)
        if finished:
            duration *= 0.7
        if finished or not os.path.exists(dest):
            continue
        marker = Path(dest, ".zarrkit-incomplete")
        if not marker.exists():
            # Killed before its first write or after its last: nothing, or everything.
            nodes = [p for p in Path(dest).rglob("*") if p.name in (".zarray", "zarr.json")]
            if nodes:
                assert check_store(dest).ok
                for name, expected in values.items():
                    np.testing.assert_array_equal(
                        zk.open_array(dest, mode="r", path=name)[...], expected)
            continue
        interrupted += 1
        opened = 0
        for name, expected in values.items():
            try:
                array = zk.open_array(dest, mode="r", path=name)
            except (ZarrkitError, FileNotFoundError, KeyError):
                continue
            opened += 1
            np.testing.assert_array_equal(array[...], expected,
                                          err_msg=f"trial {trial}: {name}")
        partial_arrays += opened < len(values)
        try:
            report = check_store(dest)
        except ZarrkitError:
            pass  # nothing readable yet: not "ok" either
        else:
            assert not report.ok
            assert ".zarrkit-incomplete" in [p.key for p in report.problems]
        cli = subprocess.run([sys.executable, "-m", "zarrkit", "check", dest],
                             env={**os.environ, "PYTHONPATH": SRC}, capture_output=True,
                             text=True, timeout=120)
        assert cli.returncode != 0, cli.stdout
        # Running it again finishes the copy, and the marker goes.
        assert _run_convert(source, dest, dest_format, None)[0]
        assert not marker.exists()
        assert check_store(dest).ok
        for name, expected in values.items():
            np.testing.assert_array_equal(zk.open_array(dest, mode="r", path=name)[...],
                                          expected)
    # How many kills land mid-way depends on the machine's load; the deterministic
    # full-disk test below stops the copy at every point.
    assert interrupted >= 1, "no kill landed during the conversion"


@pytest.mark.parametrize(("source_format", "dest_format"), [(2, 3), (3, 2), (3, 3)])
def test_convert_failing_midway_never_shows_an_incomplete_array(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source_format: int,
        dest_format: int) -> None:
    """A conversion whose destination fills up at every point of the copy (in process,
    deterministic): each array that opens is whole, and ``check`` reports the
    destination incomplete. Old code: arrays opened with their later chunks as fill,
    and check said ok."""
    source, values = _source(tmp_path, source_format)
    stopped = 0
    for room in range(0, 120_000, 6_000):
        dest = MemoryStore()
        with monkeypatch.context() as patch:
            FullDisk(patch, dest, room)
            try:
                zk.convert(source, dest, zarr_format=dest_format, progress=False)
            except (OSError, ZarrkitError):
                pass
            else:
                break
        stopped += 1
        for name, expected in values.items():
            try:
                array = zk.open_array(dest, mode="r", path=name)
            except (ZarrkitError, KeyError):
                continue
            np.testing.assert_array_equal(array[...], expected, err_msg=f"room {room}")
        if any(True for _ in dest.list()):
            assert [p.key for p in check_store(dest).problems] == [".zarrkit-incomplete"]
    assert stopped >= 5
