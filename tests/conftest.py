"""Shared test helpers: where the cross-implementation fixtures live."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"


def fixtures_dir() -> Path:
    """The shared fixtures directory, or skip the test when it is absent."""
    if not FIXTURES.is_dir():
        pytest.skip(f"shared fixtures not found at {FIXTURES}")
    return FIXTURES


@pytest.fixture
def default_format_2():
    """Run a test with format 2 as the default for new nodes (for the v2 suites)."""
    import zarrkit as zk

    with zk.config.set(default_zarr_format=2):
        yield
