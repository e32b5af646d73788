"""Fixtures shared by the test modules (the fixtures directory helpers are in
``shared_fixtures.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture
def default_format_2():
    """Run a test with format 2 as the default for new nodes (for the v2 suites)."""
    import zarrkit as zk

    with zk.config.set(default_zarr_format=2):
        yield


#: The peers whose releases the suite checks zarrkit against, printed in the test header.
PEERS = ("numpy", "zarr", "zarrs", "numcodecs", "tensorstore", "hdmf-zarr", "hdmf", "pynwb",
         "xarray", "dask", "distributed", "anndata", "ome-zarr", "fsspec", "s3fs", "lmdb")


def peers_line() -> str:
    """The Python and every peer's version, so a run says which releases it checked."""
    import importlib.metadata
    import platform

    found = []
    for name in PEERS:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{name} (not installed)")
    line = f"zarrkit peers on Python {platform.python_version()}: " + ", ".join(found)
    # The hdmf-zarr 0.13 peer (zarr-python 2) lives in its own venv (tests/test_hdmf_peer.py).
    from pathlib import Path

    venv = Path(__file__).resolve().parents[1] / ".venv-hdmf"
    old = sorted(f"{d.metadata['Name']} {d.version}" for d in importlib.metadata.distributions(
        path=[str(p) for p in venv.glob("lib/python*/site-packages")])
        if d.metadata["Name"].lower().replace("_", "-") in ("hdmf-zarr", "zarr"))
    return line + "; in .venv-hdmf: " + (", ".join(old) or "(not built)")


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [peers_line()]


def pytest_sessionstart(session: pytest.Session) -> None:
    """``-q`` leaves the header out (``make test`` runs quietly): the peers' line is
    printed anyway, once, by the controlling process."""
    config = session.config
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if config.get_verbosity() < 0 and reporter is not None and not hasattr(config, "workerinput"):
        reporter.write_line(peers_line())
