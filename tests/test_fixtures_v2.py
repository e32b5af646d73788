"""Every format-2 store in the shared corpus, written by zarr-python and tensorstore, reads
exactly as its expected .npy says."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import FIXTURES, fixtures_dir

import zarrkit as zk


def _entries(zarr_format: int) -> list[dict]:
    manifest = FIXTURES / "corpus" / "MANIFEST.json"
    if not manifest.exists():
        return []
    return [e for e in json.loads(manifest.read_text())["entries"]
            if e["zarr_format"] == zarr_format]


def assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.shape == expected.shape
    if expected.dtype.fields is not None:
        assert actual.dtype.names == expected.dtype.names
        for name in expected.dtype.names:
            assert_same(actual[name], expected[name])
        return
    if expected.dtype.kind in "fc":
        np.testing.assert_array_equal(actual, expected)  # NaN equals NaN here
    elif expected.dtype.kind in "mM":
        assert actual.dtype == expected.dtype
        assert np.array_equal(actual.view("i8"), expected.view("i8"))  # NaT equals NaT
    elif expected.dtype.kind == "O" or actual.dtype.kind == "O":
        assert actual.tolist() == expected.tolist()
    else:
        assert actual.dtype == expected.dtype or actual.dtype.newbyteorder("=") == \
            expected.dtype.newbyteorder("=")
        assert np.array_equal(actual, expected)


V2_ENTRIES = _entries(2)


@pytest.mark.parametrize("entry", V2_ENTRIES, ids=[e["id"] + ":" + e["array"] for e in V2_ENTRIES])
def test_read_v2_fixture(entry: dict) -> None:
    corpus = fixtures_dir() / "corpus"
    expected = np.load(corpus / entry["expected"], allow_pickle=False)
    array = zk.open_array(str(corpus / entry["store"]), mode="r", path=entry["array"] or None)
    actual = array[...]
    assert_same(np.asarray(actual), expected)
    assert array.shape == tuple(entry["shape"])


def test_fixture_manifest_has_v2_cases() -> None:
    fixtures_dir()
    assert len(V2_ENTRIES) >= 60
