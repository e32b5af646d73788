"""The inspecting commands of the ``zarrkit`` command line (tree, info, ls, attrs, cat,
consolidate, spec, daf describe, demo), run as a user runs them: the installed console
script in a subprocess, on stores that zarr-python writes in the test; zarr-python and
numpy are the oracle for what the commands report. ``cat``'s selection syntax is checked
against numpy with hypothesis, in-process (click's CliRunner) to stay fast."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrkit.cli import main

ZARRKIT = str(Path(sys.executable).with_name("zarrkit"))
LINK = {"name": "alias", "source": ".", "path": "/g/a"}
REFERENCE = {"zarr_dtype": "object", "value": {"source": ".", "path": "/g/sub"}}


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run(*args: str, check: int | None = 0, subprocess_: bool = True) -> Ran:
    """``zarrkit *args``, in a subprocess (the installed console script) or, to save the
    start-up time where one subprocess case already covers a command, in-process through
    click's CliRunner; ``check``: the exit status it must end with."""
    if subprocess_:
        done = subprocess.run([ZARRKIT, *args], capture_output=True, text=True, timeout=120)
        result = Ran(done.returncode, done.stdout, done.stderr)
    else:
        invoked = CliRunner().invoke(main, list(args), catch_exceptions=False)
        result = Ran(invoked.exit_code, invoked.stdout, invoked.stderr)
    if check is not None:
        assert result.returncode == check, (result.returncode, result.stdout, result.stderr)
    return result


def run_json(*args: str, subprocess_: bool = True) -> Any:
    return json.loads(run(*args, subprocess_=subprocess_).stdout)


def assert_one_line_failure(result: Ran, status: int = 1) -> None:
    assert result.returncode == status, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zarrkit: error: "), result.stderr


def write_hierarchy(store: Any, zarr_format: int) -> dict[str, np.ndarray]:
    """A hierarchy written by zarr-python: nested groups, arrays (one sharded in format 3),
    attributes, an hdmf-zarr link and an object-reference attribute. Returns the data."""
    root = zarr.open_group(store, mode="w", zarr_format=zarr_format,
                           attributes={"title": "t", "zarr_link": [LINK]})
    g = root.create_group("g", attributes={"n": 1, "ref": REFERENCE})
    data = {"g/a": np.arange(600, dtype="i4").reshape(20, 30),
            "g/sub/deep/f": np.linspace(0, 1, 17),
            "s": np.arange(40, dtype="f8") * 1.5}
    a = g.create_array("a", shape=(20, 30), chunks=(5, 10), dtype="i4",
                       attributes={"units": "m"})
    a[:] = data["g/a"]
    f = g.create_group("sub").create_group("deep").create_array(
        "f", shape=(17,), chunks=(4,), dtype="f8")
    f[:] = data["g/sub/deep/f"]
    sharded = {"shards": (20,)} if zarr_format == 3 else {}
    s = root.create_array("s", shape=(40,), chunks=(5,), dtype="f8", **sharded)
    s[:30] = data["s"][:30]  # the last chunk (or shard) stays unwritten
    data["s"][30:] = 0
    root.create_array("empty", shape=(0, 3), chunks=(1, 3), dtype="u1")
    return data


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("cli")
    v3, v2, archive = base / "v3.zarr", base / "v2.zarr", base / "v3.zip"
    data = write_hierarchy(str(v3), 3)
    write_hierarchy(str(v2), 2)
    with zarr.storage.ZipStore(archive, mode="w") as zip_store:
        write_hierarchy(zip_store, 3)
    return {"v3": str(v3), "v2": str(v2), "zip": str(archive), "data": data, "base": base}


def walk(entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The nodes of a ``tree --json`` document, by path."""
    found = {entry["path"]: entry}
    for member in entry.get("members") or []:
        if member["kind"] == "link":
            found["link:" + member["name"]] = member
        else:
            found.update(walk(member))
    return found


# --- tree -------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["v3", "v2", "zip"])
def test_tree_json_matches_zarr_python(stores: dict[str, Any], which: str) -> None:
    nodes = walk(run_json("tree", stores[which], "--json", subprocess_=which == "v3"))
    store: Any = stores[which]
    if which == "zip":
        store = zarr.storage.ZipStore(store, mode="r")
    root = zarr.open_group(store, mode="r")
    expected = dict(root.members(max_depth=None))
    assert set(nodes) - {""} == set(expected) | {"link:alias"}
    for path, node in expected.items():
        entry = nodes[path]
        if isinstance(node, zarr.Array):
            assert entry["kind"] == "array"
            assert tuple(entry["shape"]) == node.shape
            assert entry["dtype"] == str(node.dtype)
            assert tuple(entry["chunks"]) == node.chunks
            assert (entry["shards"] and tuple(entry["shards"])) == node.shards
        else:
            assert entry["kind"] == "group"
            assert entry["arrays"] == len(list(node.array_keys()))
            assert entry["groups"] == len(list(node.group_keys()))
    assert nodes["link:alias"]["target"] == "/g/a"
    assert nodes["g"]["references"] == {"ref": ["/g/sub"]}
    if which == "v2":
        zarray = json.loads((Path(stores["v2"]) / "g" / "a" / ".zarray").read_text())
        assert nodes["g/a"]["codecs"] == [zarray["compressor"]["id"]]
    else:
        assert nodes["s"]["codecs"] == ["sharding_indexed(bytes, zstd)"]


def test_tree_text_shows_links_references_and_chunking(stores: dict[str, Any]) -> None:
    lines = run("tree", stores["v3"]).stdout.splitlines()
    assert lines[0] == "/ (2 arrays, 1 group, 1 link)"
    assert "├── alias -> /g/a" in lines
    assert any(line.endswith("@ref -> /g/sub") for line in lines)
    assert any("a (20, 30) int32 chunks=(5, 10) codecs=[bytes, zstd]" in line for line in lines)
    assert any("s (40,) float64 chunks=(5,) shards=(20,)" in line for line in lines)


def test_tree_depth_and_path(stores: dict[str, Any]) -> None:
    top = run_json("tree", stores["v3"], "--json", "--depth", "1", subprocess_=False)
    g = next(m for m in top["members"] if m["name"] == "g")
    assert g["members"] is None and g["groups"] == 1 and g["arrays"] == 1
    sub = run_json("tree", stores["v3"], "g/sub", "--json", subprocess_=False)
    assert sub["path"] == "g/sub" and sub["members"][0]["members"][0]["path"] == "g/sub/deep/f"
    # a path through a link leads to the target
    assert run_json("tree", stores["v3"], "alias", "--json", subprocess_=False)["path"] == "g/a"


# --- info -------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["v3", "v2"])
@pytest.mark.parametrize("path", ["g/a", "s"])
def test_info_array_json_matches_zarr_python(stores: dict[str, Any], which: str,
                                             path: str) -> None:
    info = run_json("info", stores[which], path, "--json", subprocess_=path == "s")
    a = zarr.open_array(stores[which], path=path, mode="r")
    assert info["kind"] == "array" and info["zarr_format"] == a.metadata.zarr_format
    assert tuple(info["shape"]) == a.shape and info["dtype"] == str(a.dtype)
    assert info["nbytes"] == a.nbytes
    assert info["nbytes_stored"] == a.nbytes_stored()
    assert info["storage_ratio"] == pytest.approx(a.nbytes / a.nbytes_stored())
    assert info["attributes"] == a.attrs.asdict()
    metadata_key = "zarr.json" if which == "v3" else ".zarray"
    stored = json.loads((Path(stores[which]) / path / metadata_key).read_text())
    stored.pop("attributes", None)
    assert info["metadata"] == stored
    zarr_info = {label.strip(): value for label, value in (
        line.split(" : ", 1) for line in str(a.info_complete()).splitlines())}
    # the same rows as zarr-python's (read-only: the CLI opens the store read-only)
    assert {k: v for k, v in info["info"].items() if k != "Name"} == zarr_info | {
        "Read-only": "True"}
    # stored objects: chunk files, or shard files for a sharded array
    chunk_files = [f for _, _, files in os.walk(Path(stores[which]) / path) for f in files
                   if not f.startswith((".z", "zarr.json"))]
    count_key = "shards_initialized" if a.shards is not None else "chunks_initialized"
    assert info[count_key] == len(chunk_files)


def test_info_group_json_and_text(stores: dict[str, Any]) -> None:
    info = run_json("info", stores["v3"], "g", "--json")
    g = zarr.open_group(stores["v3"], path="g", mode="r")
    assert info["kind"] == "group" and info["attributes"] == g.attrs.asdict()
    assert (info["arrays"], info["groups"]) == (len(list(g.arrays())), len(list(g.groups())))
    assert int(info["info"]["No. members"]) == len(g.members(max_depth=None))
    root = run_json("info", stores["v3"], "/", "--json", subprocess_=False)
    assert root["link_targets"] == {"alias": "/g/a"} and root["links"] == 1
    text = run("info", stores["v2"], "g/a", subprocess_=False).stdout
    assert "Name               : /g/a" in text and "Zarr format        : 2" in text
    assert json.loads(text.split("Attributes:\n", 1)[1]) == {"units": "m"}


# --- ls, attrs ------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["v3", "v2"])
def test_ls_json_matches_zarr_python(stores: dict[str, Any], which: str) -> None:
    listed = run_json("ls", stores[which], "--json", subprocess_=which == "v3")
    root = zarr.open_group(stores[which], mode="r")
    expected = {name: node for name, node in root.members()}
    assert [item["name"] for item in listed] == sorted([*expected, "alias"])
    for item in listed:
        if item["kind"] == "link":
            assert item["target"] == "/g/a"
            continue
        node = expected[item["name"]]
        assert item["kind"] == ("array" if isinstance(node, zarr.Array) else "group")
        if isinstance(node, zarr.Array):
            assert tuple(item["shape"]) == node.shape and item["dtype"] == str(node.dtype)
    text = run("ls", stores[which], "g", subprocess_=False).stdout.splitlines()
    assert text[0].split() == ["name", "kind", "shape", "dtype"]
    assert text[1].split() == ["a", "array", "(20,", "30)", "int32"]
    assert_one_line_failure(run("ls", stores[which], "g/a", check=None, subprocess_=False))


@pytest.mark.parametrize("path", ["", "g", "g/a"])
def test_attrs_is_the_json_zarr_python_reads(stores: dict[str, Any], path: str) -> None:
    node = zarr.open(stores["v2"], path=path, mode="r")
    assert run_json("attrs", stores["v2"], path, subprocess_=path == "g") == node.attrs.asdict()


# --- cat ----------------------------------------------------------------------------------
def numpy_text(values: Any) -> str:
    with np.printoptions(threshold=sys.maxsize):
        return str(values) + "\n"


@pytest.mark.parametrize(("which", "path", "text", "selection"), [
    ("v3", "g/a", "0:10,5", np.s_[0:10, 5]),
    ("v2", "g/a", "-1", np.s_[-1]),
    ("zip", "s", "::-3", np.s_[::-3]),
    ("v3", "g/a", "...,1:30:7", np.s_[..., 1:30:7]),
    ("v3", "g/a", "", np.s_[...]),
])
def test_cat_prints_what_numpy_prints(stores: dict[str, Any], which: str, path: str,
                                      text: str, selection: Any) -> None:
    args = ["cat", stores[which], path] + (["--slice", text] if text else [])
    assert run(*args, subprocess_=which != "v3").stdout == numpy_text(
        stores["data"][path][selection])


def _index_text(n: int) -> st.SearchStrategy[tuple[str, Any]]:
    ints = st.integers(-n, n - 1).map(lambda i: (str(i), i))
    bound = st.none() | st.integers(-n - 2, n + 2)
    step = st.none() | st.integers(-4, 4).filter(bool)

    def spell(parts: tuple[int | None, int | None, int | None]) -> tuple[str, Any]:
        start, stop, step_ = ("" if p is None else str(p) for p in parts)
        text = f"{start}:{stop}" + (f":{step_}" if parts[2] is not None else "")
        return text, slice(*parts)

    return ints | st.tuples(bound, bound, step).map(spell)


@st.composite
def selections(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[str, tuple[Any, ...]]:
    count = draw(st.integers(0, len(shape)))
    items = [draw(_index_text(n)) for n in shape[:count]]
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), ("...", Ellipsis))
    return ",".join(text for text, _ in items), tuple(item for _, item in items)


@settings(max_examples=80, deadline=None)
@given(selections((20, 30)))
def test_cat_selection_syntax_against_numpy(stores: dict[str, Any],
                                            case: tuple[str, tuple[Any, ...]]) -> None:
    text, selection = case
    result = CliRunner().invoke(main, ["cat", stores["v3"], "g/a", "--slice", text])
    assert result.exit_code == 0, result.output
    assert result.output == numpy_text(stores["data"]["g/a"][selection])


@pytest.mark.parametrize("text", ["1.5", "0:1:2:3", "a", "::0", "...,...", "1,,2"])
def test_cat_bad_slice_text_is_a_usage_error(stores: dict[str, Any], text: str) -> None:
    result = CliRunner().invoke(main, ["cat", stores["v3"], "g/a", "--slice", text])
    assert result.exit_code == 2 and "--slice" in result.output


def test_cat_refusals(stores: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    result = run("cat", stores["v3"], "g/a", "--slice", "20", check=2)  # out of bounds
    assert "out of bounds" in result.stderr and "Traceback" not in result.stderr
    run("cat", stores["v3"], "g/a", "--slice", "1,2,3", check=2, subprocess_=False)  # too many
    assert_one_line_failure(run("cat", stores["v3"], "g", check=None, subprocess_=False))
    big = stores["base"] / "big.zarr"
    zarr.create_array(str(big), shape=(10_000_001,), chunks=(1_000_000,), dtype="u1")
    result = run("cat", str(big), "", check=None)
    assert_one_line_failure(result)
    assert "--force" in result.stderr
    assert run("cat", str(big), "", "--slice", ":3", subprocess_=False).stdout == "[0 0 0]\n"
    # --force lifts the bound (a small one here, to stay fast)
    monkeypatch.setattr("zarrkit.cli.inspect.MAX_CAT_ELEMENTS", 5)
    assert CliRunner().invoke(main, ["cat", stores["v3"], "s"]).exit_code == 1
    forced = CliRunner().invoke(main, ["cat", stores["v3"], "s", "--force"])
    assert forced.exit_code == 0 and forced.output == numpy_text(stores["data"]["s"])


# --- failures -------------------------------------------------------------------------------
def test_missing_store_is_reported_and_not_created(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.zarr")
    for args in (["tree", missing], ["ls", missing], ["attrs", missing],
                 ["info", missing, "x", "--json"], ["cat", missing, "x"],
                 ["consolidate", missing], ["spec", "dump", missing]):
        result = run(*args, check=None, subprocess_=args[0] == "tree")
        assert_one_line_failure(result)
        assert "no such store" in result.stderr
        assert not os.path.exists(missing)
    assert_one_line_failure(run("tree", str(tmp_path / "missing.zip"), check=None,
                                subprocess_=False))
    assert not (tmp_path / "missing.zip").exists()


def test_missing_node_and_corrupt_metadata(stores: dict[str, Any], tmp_path: Path) -> None:
    result = run("info", stores["v3"], "g/nope", check=None)
    assert_one_line_failure(result)
    assert "g/nope" in result.stderr
    corrupt = tmp_path / "corrupt.zarr"
    zarr.open_group(str(corrupt), mode="w").create_array("x", shape=(2,), dtype="u1")
    (corrupt / "x" / "zarr.json").write_text('{"zarr_format": 3, "node_type"')
    for args in (["info", str(corrupt), "x"], ["tree", str(corrupt)], ["cat", str(corrupt), "x"]):
        result = run(*args, check=None, subprocess_=args[0] == "info")
        assert_one_line_failure(result)
        assert "x/zarr.json" in result.stderr
    debug = run("--debug", "info", str(corrupt), "x", check=None)
    assert debug.returncode == 1 and "Traceback" in debug.stderr
    assert "MetadataError" in debug.stderr
    run("tree", str(corrupt), "--depth", "-1", check=2)  # usage: a bad option value
    run("nonsense", check=2, subprocess_=False)


# --- consolidate, spec ----------------------------------------------------------------------
@pytest.mark.parametrize(("zarr_format", "suffix"), [(2, ".zarr"), (3, ".zarr"), (2, ".zip")])
def test_consolidate_is_read_by_zarr_python(tmp_path: Path, zarr_format: int,
                                            suffix: str) -> None:
    path = str(tmp_path / f"c{suffix}")
    if suffix == ".zip":
        with zarr.storage.ZipStore(path, mode="w") as zip_store:
            write_hierarchy(zip_store, zarr_format)
    else:
        write_hierarchy(path, zarr_format)
    result = run("consolidate", path, subprocess_=suffix == ".zip")
    assert "consolidated the metadata of 7 nodes" in result.stdout
    store: Any = path if suffix != ".zip" else zarr.storage.ZipStore(path, read_only=True)
    group = zarr.open_consolidated(store, mode="r", zarr_format=zarr_format)
    consolidated = group.metadata.consolidated_metadata
    assert consolidated is not None
    assert set(consolidated.flattened_metadata) == {
        "g", "g/a", "g/sub", "g/sub/deep", "g/sub/deep/f", "s", "empty"}
    if suffix == ".zarr":
        assert (".zmetadata" if zarr_format == 2 else "zarr.json") in os.listdir(path)
    # the commands read through it: the same tree as before
    assert walk(run_json("tree", path, "--json", subprocess_=False)).keys() == {
        "", "g", "g/a", "g/sub", "g/sub/deep", "g/sub/deep/f", "s", "empty", "link:alias"}


def test_spec_dump_and_validate(stores: dict[str, Any], tmp_path: Path) -> None:
    spec = run_json("spec", "dump", stores["v3"])
    root = zarr.open_group(stores["v3"], mode="r")
    assert spec["zarr_format"] == 3 and spec["attributes"] == root.attrs.asdict()
    assert tuple(spec["members"]["g"]["members"]["a"]["shape"]) == root["g/a"].shape
    assert spec["members"]["s"]["codecs"][0]["name"] == "sharding_indexed"
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    assert run("spec", "validate", stores["v3"], str(path)).stdout == "valid\n"
    assert run("spec", "validate", stores["v2"], str(path), check=1,
               subprocess_=False).stdout.count("\n") >= 1
    spec["members"]["g"]["members"]["a"]["shape"] = [21, 30]
    spec["attributes"]["title"] = "other"
    path.write_text(json.dumps(spec))
    result = run("spec", "validate", stores["v3"], str(path), check=1)
    assert result.stdout.splitlines() == [
        "/: attribute_value: attribute 'title': expected 'other', found 't'",
        "/g/a: shape: expected [21, 30], found [20, 30]"]
    array_spec = run_json("spec", "dump", stores["v2"], "g/a", subprocess_=False)
    assert array_spec["shape"] == [20, 30] and array_spec["zarr_format"] == 2
    path.write_text("{not json")
    assert_one_line_failure(run("spec", "validate", stores["v3"], str(path), check=None,
                                subprocess_=False))


# --- over HTTP ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def http_root(stores: dict[str, Any]) -> Iterator[str]:
    """The test's stores served read-only on 127.0.0.1 (aiohttp's static files: Range
    requests too) from a thread; yields the base URL."""
    from aiohttp import web

    loop = asyncio.new_event_loop()
    runner = web.AppRunner(web.Application())
    runner.app.router.add_static("/", stores["base"])
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}"
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.run_until_complete(runner.cleanup())
    loop.close()


@pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part")
def test_commands_read_a_url(stores: dict[str, Any], http_root: str, tmp_path: Path) -> None:
    # HTTP cannot list: the hierarchy is read from consolidated metadata
    local = tmp_path / "served.zarr"
    write_hierarchy(str(local), 3)
    zarr.consolidate_metadata(str(local))
    served = stores["base"] / "served.zarr"
    os.rename(local, served)
    url = f"{http_root}/served.zarr"
    nodes = walk(run_json("tree", url, "--json"))
    assert tuple(nodes["s"]["shards"]) == (20,) and nodes["link:alias"]["target"] == "/g/a"
    assert run("cat", url, "s", "--slice", "::7", subprocess_=False).stdout == numpy_text(
        stores["data"]["s"][::7])
    info = run_json("info", url, "g/a", "--json", subprocess_=False)
    assert tuple(info["shape"]) == (20, 30) and info["nbytes_stored"] is None
    assert_one_line_failure(run("tree", f"{http_root}/nothing.zarr", check=None,
                                subprocess_=False))


# --- daf, demo, python -m -----------------------------------------------------------------
def test_daf_describe(tmp_path: Path) -> None:
    import zarrkit as zk

    path = str(tmp_path / "cells.daf.zarr")
    with zk.daf.open(path, "w", name="cells") as daf:
        daf.add_axis("cell", ["c1", "c2", "c3"])
        daf.add_axis("gene", ["g1", "g2"])
        daf.set_vector("cell", "age", np.array([1.0, 2.0, 3.0]))
        daf.set_matrix("cell", "gene", "UMIs", np.arange(6, dtype="u2").reshape(3, 2))
    lines = run("daf", "describe", path).stdout.splitlines()
    axes = zarr.open_group(path, path="axes", mode="r")
    for axis in ("cell", "gene"):
        assert f"  {axis}: {axes[axis].shape[0]} entries" in lines
    assert "    age: 3 x float64 (dense)" in lines
    assert any(line.startswith("    UMIs: 3 x 2 x uint16") for line in lines)
    assert_one_line_failure(run("daf", "describe", str(tmp_path / "none.daf.zarr"), check=None,
                                subprocess_=False))
    assert not (tmp_path / "none.daf.zarr").exists()
    not_daf = tmp_path / "plain.zarr"
    zarr.open_group(str(not_daf), mode="w")
    assert_one_line_failure(run("daf", "describe", str(not_daf), check=None, subprocess_=False))


def test_demo_writes_what_zarr_python_reads(tmp_path: Path) -> None:
    target = tmp_path / "demo.zarr"
    result = run("demo", str(target))
    assert f"zarrkit tree {target}" in result.stdout
    root = zarr.open_group(str(target), mode="r")
    assert root.metadata.zarr_format == 3 and root.attrs["title"] == "zarrkit demo"
    series = root["measurements/series"]
    assert series.shards == (500,)
    assert np.array_equal(series[:], np.cumsum(np.arange(1000) % 7))
    assert root["images/gradient"].shards == (128, 128)
    assert run_json("tree", str(target), "latest", "--json", subprocess_=False)["path"] == (
        "measurements/temperature")
    assert_one_line_failure(run("demo", str(target), check=None, subprocess_=False))


def test_python_dash_m(stores: dict[str, Any]) -> None:
    result = subprocess.run([sys.executable, "-m", "zarrkit", "ls", stores["v3"], "--json"],
                            capture_output=True, text=True, timeout=120, check=True)
    assert [item["name"] for item in json.loads(result.stdout)] == ["alias", "empty", "g", "s"]
