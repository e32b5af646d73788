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
