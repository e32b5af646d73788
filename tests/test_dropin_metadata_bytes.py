"""The same creation calls on zarr-python and zarrkit store the same metadata bytes.

Both libraries write ``zarr.json``/``.zarray``/``.zgroup``/``.zattrs`` with 2-space indents
and keys in zarr-python's field order (attributes in the order given), so a node written by
either is the same file. Known exceptions, asserted as such: zarr-python 3 also writes an
empty ``.zattrs`` beside every format-2 node, which zarrkit (like zarr-python 2) leaves out.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import numcodecs
import pytest
from hypothesis import HealthCheck, given, settings

import zarrkit

zarr = pytest.importorskip("zarr")

METADATA_NAMES = ("zarr.json", ".zarray", ".zgroup", ".zattrs")


def _cases(lib: Any) -> dict[str, dict[str, Any]]:
    codecs = lib.codecs
    return {
        "v3-default": dict(shape=(10, 10), chunks=(5, 5), dtype="f4"),
        "v3-attrs": dict(shape=(4,), dtype="i2", attributes={"z": 1, "a": [1, {"q": None}]},
                         dimension_names=["x"]),
        "v3-blosc": dict(shape=(8,), chunks=(4,), dtype="u2", compressors=codecs.BloscCodec(),
                         fill_value=3),
        "v3-gzip": dict(shape=(8,), chunks=(4,), dtype="i8",
                        compressors=codecs.GzipCodec(level=3)),
        "v3-zstd-crc": dict(shape=(8,), chunks=(4,), dtype="f8", fill_value=float("nan"),
                            compressors=[codecs.ZstdCodec(level=2, checksum=True),
                                         codecs.Crc32cCodec()]),
        "v3-sharded": dict(shape=(16, 16), chunks=(4, 4), shards=(8, 8), dtype="u1"),
        "v3-no-compressor": dict(shape=(3,), dtype="bool", compressors=None),
        "v3-complex": dict(shape=(3,), dtype="c8", fill_value=1 + 2j),
        "v3-string": dict(shape=(3,), dtype=str),
        "v3-v2-keys": dict(shape=(4,), chunks=(2,), dtype="i4",
                           chunk_key_encoding={"name": "v2", "separator": "."}),
        "v3-transpose": dict(shape=(4, 4), dtype="i4",
                             filters=[codecs.TransposeCodec(order=(1, 0))]),
        "v3-datetime": dict(shape=(3,), dtype="M8[s]"),
        "v2-default": dict(shape=(10, 10), chunks=(5, 5), dtype="f4", zarr_format=2),
        "v2-filters": dict(shape=(8,), chunks=(4,), dtype="f8", zarr_format=2,
                           compressors=numcodecs.Zstd(level=1),
                           filters=[numcodecs.Delta(dtype="f8")]),
        "v2-fortran-big-endian": dict(shape=(4, 4), dtype=">i4", zarr_format=2, order="F",
                                      fill_value=None),
        "v2-string": dict(shape=(3,), dtype=str, zarr_format=2),
        "v2-datetime": dict(shape=(3,), dtype="M8[ns]", zarr_format=2),
    }


def _metadata_files(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted(root.rglob("*")) if path.name in METADATA_NAMES}


def _compare(theirs: dict[str, bytes], ours: dict[str, bytes]) -> None:
    for key, raw in theirs.items():
        if key.endswith(".zattrs") and raw == b"{}" and key not in ours:
            continue  # zarr-python 3's empty .zattrs beside a format-2 node
        assert ours.get(key) == raw, key
    assert set(ours) <= set(theirs)


@pytest.mark.parametrize("case", sorted(_cases(zarrkit)))
def test_create_array_writes_zarr_pythons_bytes(case: str, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(store=str(tmp_path / "theirs"), **_cases(zarr)[case])
    zarrkit.create_array(store=str(tmp_path / "ours"), **_cases(zarrkit)[case])
    theirs = _metadata_files(tmp_path / "theirs")
    assert theirs, "zarr-python wrote nothing"
    _compare(theirs, _metadata_files(tmp_path / "ours"))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_groups_and_consolidated_metadata_write_zarr_pythons_bytes(zarr_format: int,
                                                                   tmp_path: Path) -> None:
    for lib, name in ((zarr, "theirs"), (zarrkit, "ours")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            root = str(tmp_path / name)
            group = lib.open_group(root, mode="w", zarr_format=zarr_format,
                                   attributes={"b": 1, "a": 2})
            group.create_group("sub", attributes={"k": "v"}).create_group("deeper")
            group.create_array("arr", shape=(2,), dtype="i1", compressors=None)
            lib.consolidate_metadata(root)
    theirs = _metadata_files(tmp_path / "theirs")
    ours = _metadata_files(tmp_path / "ours")
    _compare(theirs, ours)
    if zarr_format == 2:
        # zarr-python 3.1.6 writes .zmetadata on one line as zarrkit does, but lists a stray
        # consolidated_metadata inside nested .zgroup entries: compare the documents, not the
        # bytes, and only the entries both should hold.
        theirs_cm = json.loads((tmp_path / "theirs" / ".zmetadata").read_bytes())["metadata"]
        ours_raw = (tmp_path / "ours" / ".zmetadata").read_bytes()
        assert b"\n" not in ours_raw
        ours_cm = json.loads(ours_raw)["metadata"]
        for key, document in ours_cm.items():
            expected = {k: v for k, v in theirs_cm[key].items() if k != "consolidated_metadata"}
            assert document == expected, key


_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=5),
                       st.floats(allow_nan=False, allow_infinity=False))
_attributes = st.dictionaries(
    st.text(min_size=1, max_size=6),
    st.recursive(_json_leaf, lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6),
    max_size=5)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(attributes=_attributes, zarr_format=st.sampled_from([2, 3]))
def test_any_attributes_are_written_as_zarr_python_writes_them(
        attributes: dict[str, Any], zarr_format: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("attrs")
    zarr.create_group(str(root / "theirs"), zarr_format=zarr_format, attributes=attributes)
    zarrkit.create_group(str(root / "ours"), zarr_format=zarr_format, attributes=attributes)
    _compare(_metadata_files(root / "theirs"), _metadata_files(root / "ours"))
    reopened = zarrkit.open_group(str(root / "theirs"), mode="r")
    assert list(reopened.attrs) == list(attributes)
