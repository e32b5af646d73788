"""zarr-python's user guide, session by session, run with zarr-python and with
``import zarrkit as zarr``.

Every block of every docs session (``tests/user_guide_examples.py``, zarr-python 3.4.2's docs)
runs in order in one namespace per session and per library, in a fresh working directory. A
block that raises under zarr-python (a missing optional package, a GPU, or an error the docs
show on purpose) is skipped with zarr-python's error as the reason; for every other block
zarrkit must run it too and print the same text, after the normalisation of things that
differ by nature (temporary paths, object ids). What differs on purpose is in
``DIFFERENCES``, with the reason.
"""

from __future__ import annotations

import ast
import contextlib
import doctest
import io
import os
import re
import sys
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import zarrkit
from tests.user_guide_examples import PAGES

zarr = pytest.importorskip("zarr")

# Blocks not run with either library: they reach the network.
NETWORK: dict[tuple[str, int], str] = {
    ("s3demo", 0): "writes to s3://example-bucket (network)",
    ("storage", 1): "reads s3://noaa-nwm-retro-v2-zarr-pds (network)",
    ("storage", 5): "reads s3://noaa-nwm-retro-v2-zarr-pds (network)",
    ("storage", 12): "reads s3://noaa-nwm-retro-v2-zarr-pds (network)",
    ("storage", 13): "connects to s3 for noaa-nwm-retro-v2-zarr-pds (network)",
    ("storage", 16): "reads s3://noaa-nwm-retro-v2-zarr-pds (network)",
}

_METADATA_REPR = ("pprints metadata objects: zarrkit's metadata dataclasses "
                  "(ArrayMetadataV3, GroupMetadataV3, ConsolidatedMetadata) have their own "
                  "fields and reprs, not zarr-python's ArrayV3Metadata/GroupMetadata ones")

# Blocks whose output differs on purpose: (page, block) -> reason. Kept small.
DIFFERENCES: dict[tuple[str, int], str] = {
    ("quickstart", 4): _METADATA_REPR,
    ("consolidated_metadata", 4): _METADATA_REPR,
    ("consolidated_metadata", 6): _METADATA_REPR,
    ("data_types", 15): _METADATA_REPR + " (here a struct data type: zarr-python's "
                        "Struct ZDType, zarrkit's DataTypeV3)",
    ("config", 2): "zarr.config.pprint() prints the class paths of zarr-python's codecs "
                   "(zarrkit's: zarrkit.codecs.public.BloscCodec..., and its scale_offset "
                   "codec), threading.max_workers None (zarrkit's resolved CPU count) and not "
                   "zarrkit's own settings (engine, file_locks, fsync, max_chunk_bytes); the "
                   "other keys print the same, as tests/test_dropin_config.py checks",
}

# Blocks of zarr-python API that zarrkit lacks so far (reported, not on purpose): each must
# still fail, so that one implemented leaves the table.
UNIMPLEMENTED: dict[tuple[str, int], str] = {
}



@dataclass(frozen=True)
class BlockRun:
    """What one block did: its printed text, or the error it raised."""

    output: str
    error: str | None


def _as_zarrkit(source: str) -> str:
    """The block as a zarrkit user pastes it: ``zarr`` imports become ``zarrkit`` ones."""
    source = re.sub(r"^(\s*)import zarr\s*$", r"\1import zarrkit as zarr", source, flags=re.M)
    # ``import zarr.storage`` would bind ``zarr`` to zarr-python again; zarrkit's
    # submodule is imported instead (``zarr`` stays zarrkit, bound by ``import zarr``).
    source = re.sub(r"^(\s*)import zarr\.(\w[\w.]*)[ \t]*$", r"\1import zarrkit.\2", source,
                    flags=re.M)
    return re.sub(r"^(\s*)from zarr(\.|\s)", r"\1from zarrkit\2", source, flags=re.M)


def _doctest_source(source: str) -> str | None:
    """The code of a ``>>>`` block, or None for a plain code block."""
    if not source.lstrip().startswith(">>>"):
        return None
    return "".join(example.source for example in doctest.DocTestParser().get_examples(source))


def _exec_block(source: str, namespace: dict[str, Any]) -> None:
    """Run a block; in a ``>>>`` block each expression statement's value is shown as the
    interactive prompt shows it."""
    code = _doctest_source(source)
    if code is None:
        exec(compile(source, "<user-guide>", "exec"), namespace)
        return
    for statement in ast.parse(code).body:
        if isinstance(statement, ast.Expr):
            value = eval(compile(ast.Expression(statement.value), "<user-guide>", "eval"),
                         namespace)
            if value is not None:
                print(repr(value))
        else:
            exec(compile(ast.Module([statement], []), "<user-guide>", "exec"), namespace)


def _normalise(text: str, workdir: Path) -> str:
    text = text.replace(str(workdir.resolve()), "<tmp>").replace(str(workdir), "<tmp>")
    text = re.sub(r" at 0x[0-9a-f]+", " at 0x?", text)
    # A memory store is named by an object id; a ``memory://name`` URL is an fsspec store in
    # zarr-python and zarrkit's own named in-process store: both print as one memory store.
    text = re.sub(r"<FsspecStore\(AsyncFileSystemWrapper, /[^)]*\)>", "memory://<id>", text)
    # For the same reason the info of a node in a ``memory://name`` store names the store
    # type FsspecStore in zarr-python and MemoryStore in zarrkit (network URLs, the other
    # source of FsspecStore, are not run).
    text = re.sub(r"(Store type\s*: )FsspecStore", r"\1MemoryStore", text)
    # Timings the docs print (performance) differ from run to run.
    text = re.sub(r"\b\d+\.\d+s\b", "<seconds>s", text)
    # The experimental pages print timings, and a ratio of two, as bare numbers.
    text = re.sub(r"(Speedup is|access took) [\d.e+-]+", r"\1 <number>", text)
    return re.sub(r"memory://\d+", "memory://<id>", text)


def _forget_memory_urls() -> None:
    """Empty the process-wide ``memory://`` file systems so a page starts from nothing."""
    with contextlib.suppress(ImportError):
        import fsspec

        fs = fsspec.filesystem("memory")
        fs.store.clear()
        fs.pseudo_dirs[:] = [""]


@contextlib.contextmanager
def _workdir(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run_page(page: str, library: str, workdir: Path) -> list[BlockRun | None]:
    """Every block of ``page`` in order with ``library`` ("zarr" or "zarrkit"); None for a
    block not run (network)."""
    _forget_memory_urls()
    namespace: dict[str, Any] = {"__name__": f"user_guide_{page}"}
    runs: list[BlockRun | None] = []
    with _workdir(workdir), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for index, source in enumerate(PAGES[page]):
            if (page, index) in NETWORK:
                runs.append(None)
                continue
            if library == "zarrkit":
                source = _as_zarrkit(source)
            out = io.StringIO()
            error = None
            try:
                with contextlib.redirect_stdout(out):
                    _exec_block(source, namespace)
            except Exception as e:  # noqa: BLE001 - the block's error is the result
                error = "".join(traceback.format_exception_only(type(e), e)).strip()
            runs.append(BlockRun(_normalise(out.getvalue(), workdir), error))
    # A session's settings (config.set without a with block) must not reach the next one.
    (zarr if library == "zarr" else zarrkit).config.reset()
    return runs


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    cache: dict[str, tuple[list[BlockRun | None], list[BlockRun | None]]] = {}

    def runs(page: str) -> tuple[list[BlockRun | None], list[BlockRun | None]]:
        if page not in cache:
            theirs = run_page(page, "zarr", tmp_path_factory.mktemp(f"{page}-zarr"))
            ours = run_page(page, "zarrkit", tmp_path_factory.mktemp(f"{page}-zarrkit"))
            cache[page] = (theirs, ours)
        return cache[page]

    return runs


BLOCKS = [(page, index) for page, blocks in PAGES.items() for index in range(len(blocks))]


@pytest.mark.parametrize(("page", "index"), BLOCKS, ids=[f"{p}-{i}" for p, i in BLOCKS])
def test_block_prints_as_zarr_python(page: str, index: int, page_runs: Any) -> None:
    if (page, index) in NETWORK:
        pytest.skip(NETWORK[page, index])
    theirs, ours = (runs[index] for runs in page_runs(page))
    assert theirs is not None and ours is not None
    if theirs.error is not None:
        pytest.skip(f"does not run with zarr-python {zarr.__version__}: {theirs.error}")
    if (page, index) in DIFFERENCES:
        pytest.xfail(DIFFERENCES[page, index])
    if (page, index) in UNIMPLEMENTED:
        pytest.xfail(f"not implemented in zarrkit: {UNIMPLEMENTED[page, index]}")
    assert ours.error is None, f"zarrkit raised: {ours.error}\n{PAGES[page][index]}"
    assert ours.output == theirs.output


def test_differences_table_is_current(page_runs: Any) -> None:
    """Every listed difference is still one: a fixed one must leave the table."""
    for page, index in [*DIFFERENCES, *UNIMPLEMENTED]:
        theirs, ours = (runs[index] for runs in page_runs(page))
        assert theirs is not None and ours is not None
        assert ours.error is not None or ours.output != theirs.output, (page, index)


def test_zarrkit_import_rewrite() -> None:
    """The paste rule: only ``zarr`` imports change."""
    source = ("import zarr\nfrom zarr.storage import LocalStore\nfrom zarr import x\nzarr.y\n"
              "import zarr.storage\n")
    assert _as_zarrkit(source) == ("import zarrkit as zarr\nfrom zarrkit.storage import "
                                   "LocalStore\nfrom zarrkit import x\nzarr.y\n"
                                   "import zarrkit.storage\n")


if __name__ == "__main__":  # a page's side-by-side output, for looking at differences
    import tempfile

    for name in sys.argv[1:]:
        for lib in ("zarr", "zarrkit"):
            with tempfile.TemporaryDirectory() as d:
                results = run_page(name, lib, Path(d))
            with open(f"/tmp/h6/{name}-{lib}.txt", "w") as f:
                for i, r in enumerate(results):
                    f.write(f"===== {i}\n")
                    if r is not None:
                        f.write(r.output + (f"!! {r.error}\n" if r.error else ""))
