"""Where the cross-implementation fixtures live (``../shared/fixtures``).

A plain module, not ``conftest``: test directories each have their own conftest, and
``from conftest import ...`` would pick whichever is first on ``sys.path``."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"


def fixtures_dir() -> Path:
    """The shared fixtures directory, or skip the test when it is absent."""
    if not FIXTURES.is_dir():
        pytest.skip(f"shared fixtures not found at {FIXTURES}")
    return FIXTURES
