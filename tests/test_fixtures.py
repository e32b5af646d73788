"""Every store in the shared corpus (formats 2 and 3), written by zarr-python and
tensorstore, reads exactly as its expected .npy says."""

from __future__ import annotations

import json

import numpy as np
import pytest
from shared_fixtures import FIXTURES, fixtures_dir

import zarrkit as zk


def _entries(zarr_format: int) -> list[dict]:
    manifest = FIXTURES / "corpus" / "MANIFEST.json"
    if not manifest.exists():
        return []
    return [e for e in json.loads(manifest.read_text())["entries"]
            if e["zarr_format"] == zarr_format]


def assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.shape == expected.shape
    if actual.dtype.name in ML_DTYPES_AS_BITS:
        # The corpus stores ml_dtypes values as what numpy can hold: bit patterns for
        # bfloat16 and float8, small ints for int4/int2.
        expected_kind = ML_DTYPES_AS_BITS[actual.dtype.name]
        converted = (actual.view(expected.dtype) if expected_kind == "bits"
                     else actual.astype(expected.dtype))
        assert np.array_equal(converted, expected)
        return
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
    elif expected.dtype.kind == "O" or actual.dtype.kind in "OT":
        assert actual.tolist() == expected.tolist()
    else:
        assert actual.dtype == expected.dtype or actual.dtype.newbyteorder("=") == \
            expected.dtype.newbyteorder("=")
        assert np.array_equal(actual, expected)


ML_DTYPES_AS_BITS = {"bfloat16": "bits", "float8_e4m3fn": "bits", "float8_e5m2": "bits",
                     "int4": "values", "uint4": "values", "int2": "values", "uint2": "values"}
V2_ENTRIES = _entries(2)
V3_ENTRIES = _entries(3)
ALL_ENTRIES = V2_ENTRIES + V3_ENTRIES


@pytest.mark.parametrize("entry", ALL_ENTRIES, ids=[f"{e['id']}:{e['array']}" for e in ALL_ENTRIES])
def test_read_fixture(entry: dict) -> None:
    corpus = fixtures_dir() / "corpus"
    expected = np.load(corpus / entry["expected"], allow_pickle=False)
    array = zk.open_array(str(corpus / entry["store"]), mode="r", path=entry["array"] or None)
    assert array.zarr_format == entry["zarr_format"]
    assert_same(np.asarray(array[...]), expected)
    assert array.shape == tuple(entry["shape"])


def test_fixture_manifest_has_cases() -> None:
    fixtures_dir()
    assert len(V2_ENTRIES) >= 60
    assert len(V3_ENTRIES) >= 70
