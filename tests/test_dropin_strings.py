"""Variable-length strings read as numpy's StringDType, side by side with zarr-python 3.1.

On numpy 2, zarr-python reads variable-length UTF-8 strings (the v3 ``string`` data type,
v2 object arrays whose object codec is ``vlen-utf8``) as ``StringDType()`` arrays and reports
``array.dtype`` as ``StringDType()``; values written are converted as numpy converts them to
that type. Every test runs the same calls on both libraries and compares what they give;
chunks are stored as they always were, so the stored documents and chunks are compared too.
Variable-length bytes and the other object codecs stay object arrays, as in zarr-python.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk

pytestmark = [
    pytest.mark.skipif(not hasattr(np.dtypes, "StringDType"),
                       reason="numpy < 2 has no StringDType: strings stay objects"),
    pytest.mark.filterwarnings("ignore::UserWarning"),  # zarr-python's v3 string warning
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

FORMATS = [2, 3]
# (zarr_format, shards) of the layouts both libraries write.
LAYOUTS = [(2, None), (3, None), (3, (4,))]
LAYOUT_IDS = ["v2", "v3", "v3-sharded"]


def pair(tmp_path: Path, *, zarr_format: int, shards: Any = None, **kwargs: Any
         ) -> tuple[Any, zk.Array]:
    """The same array created by zarr-python and zarrkit, each in its own directory."""
    options: dict[str, Any] = {"shape": (6,), "chunks": (2,), "dtype": str,
                               "zarr_format": zarr_format, **kwargs}
    if shards is not None:
        options["shards"] = shards
    z = zarr.create_array(str(tmp_path / "zarr"), **options)
    a = zk.create_array(str(tmp_path / "zarrkit"), **options)
    return z, a


def assert_same_read(got: Any, want: Any) -> None:
    """Same type, dtype, shape and values (``want`` from zarr-python)."""
    if isinstance(want, np.ndarray) and want.ndim == 0:  # zarr-python: 0-d for a[i]
        want = want[()]
    assert type(got) is type(want), (got, want)
    if isinstance(want, np.ndarray):
        assert repr(got.dtype) == repr(want.dtype)
        assert got.shape == want.shape
        assert got.tolist() == want.tolist()
    else:
        assert got == want


def stored_document(root: Path, zarr_format: int) -> dict[str, Any]:
    name = ".zarray" if zarr_format == 2 else "zarr.json"
    return json.loads((root / name).read_text())  # type: ignore[no-any-return]


def stored_chunks(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith((".z", "zarr.json"))}


# --- what an array reports ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", [str, np.dtypes.StringDType(), "T"],
                         ids=["str", "StringDType", "T"])
@pytest.mark.parametrize("zarr_format", FORMATS)
def test_new_array_reports_string_dtype(tmp_path: Path, dtype: Any, zarr_format: int) -> None:
    z, a = pair(tmp_path, zarr_format=zarr_format, dtype=dtype)
    assert repr(a.dtype) == repr(z.dtype) == "StringDType()"
    assert repr(a.fill_value) == repr(z.fill_value)
    assert a.nbytes == z.nbytes
    assert "dtype=StringDType()" in repr(a)
    assert stored_document(tmp_path / "zarrkit", zarr_format) == stored_document(
        tmp_path / "zarr", zarr_format)


@pytest.mark.parametrize(("zarr_format", "shards"), LAYOUTS, ids=LAYOUT_IDS)
def test_unwritten_chunks_read_as_fill(tmp_path: Path, zarr_format: int, shards: Any) -> None:
    for fill in (None, "-"):
        kwargs = {} if fill is None else {"fill_value": fill}
        z, a = pair(tmp_path / str(fill), zarr_format=zarr_format, shards=shards, **kwargs)
        assert_same_read(a[...], z[...])
        assert_same_read(a[0], z[0])
        assert_same_read(a[2:5], z[2:5])
        assert repr(a.fill_value) == repr(z.fill_value)


def test_vlen_bytes_and_other_object_codecs_stay_objects(tmp_path: Path) -> None:
    for zarr_format in FORMATS:
        options = {"shape": (6,), "chunks": (2,), "zarr_format": zarr_format}
        z = zarr.create_array(str(tmp_path / f"zarr{zarr_format}"),
                              dtype=zarr.dtype.VariableLengthBytes(), **options)
        a = zk.create_array(str(tmp_path / f"zarrkit{zarr_format}"), dtype=bytes, **options)
        z[:2] = [b"x", b"yz"]
        a[:2] = [b"x", b"yz"]
        assert a.dtype == z.dtype == np.dtype(object)
        assert_same_read(a[...], z[...])
    # Other object codecs (zarr-python 3.1 opens none of them): objects, as before.
    for codec in ("json2", "msgpack2"):
        a = zk.create_array({}, shape=(2,), chunks=(2,), dtype=object, zarr_format=2,
                            filters=[{"id": codec}])
        a[...] = ["a", 1]
        assert a.dtype == a[...].dtype == np.dtype(object), codec
        assert a[...].tolist() == ["a", 1]
    store: dict[str, Any] = {}
    a = zk.create_array(store, shape=(2,), chunks=(2,), dtype=object, zarr_format=2,
                        filters=[{"id": "json2"}])
    document = json.loads(store[".zarray"])
    document["filters"] = [{"id": "pickle", "protocol": 5}]
    store[".zarray"] = json.dumps(document).encode()
    store["0"] = numcodecs.Zstd().encode(numcodecs.Pickle().encode(
        np.array(["p", "q"], dtype=object)))
    a = zk.open_array(store, mode="r")
    assert a.dtype == a[...].dtype == np.dtype(object)
    assert a[...].tolist() == ["p", "q"]


# --- writing -------------------------------------------------------------------------------

STRING_DTYPE = np.dtypes.StringDType() if hasattr(np.dtypes, "StringDType") else None
VALUES = {
    "list": ["a", "bé", "", "☃", "ccc", "d"],
    "object": np.array(["a", "bé", "", "☃", "ccc", "d"], dtype=object),
    "StringDType": np.array(["a", "bé", "", "☃", "ccc", "d"], dtype=STRING_DTYPE),
    "unicode": np.array(["a", "bé", "", "☃", "ccc", "d"]),
    "numbers": [1, 2.5, -3, 0, 7, 8],
    "mixed": ["a", None, 1, b"x", np.str_("y"), True],
}


@pytest.mark.parametrize("value_id", list(VALUES))
@pytest.mark.parametrize(("zarr_format", "shards"), LAYOUTS, ids=LAYOUT_IDS)
def test_writes_take_what_zarr_python_takes(tmp_path: Path, zarr_format: int, shards: Any,
                                            value_id: str) -> None:
    z, a = pair(tmp_path, zarr_format=zarr_format, shards=shards)
    value = VALUES[value_id]
    z[...] = value
    a[...] = value
    assert_same_read(a[...], z[...])
    # Chunks as zarr-python stores them, so each library reads the other's.
    assert stored_chunks(tmp_path / "zarrkit") == stored_chunks(tmp_path / "zarr")
    assert_same_read(zk.open_array(str(tmp_path / "zarr"), mode="r")[...], z[...])
    assert_same_read(zarr.open_array(str(tmp_path / "zarrkit"), mode="r")[...], z[...])


@pytest.mark.parametrize(("zarr_format", "shards"), LAYOUTS, ids=LAYOUT_IDS)
def test_scalar_and_partial_writes(tmp_path: Path, zarr_format: int, shards: Any) -> None:
    z, a = pair(tmp_path, zarr_format=zarr_format, shards=shards)
    for selection, value in [(slice(None), "all"), (1, "one"), (3, 42), (4, None),
                             (slice(1, 4), ["p", "q", "r"]), (5, b"raw"),
                             (slice(None, None, 2), np.array(["e", "f", "g"], dtype=object))]:
        z[selection] = value
        a[selection] = value
        assert_same_read(a[...], z[...])
    for selection in [0, 3, slice(1, 5), slice(None, None, 2), slice(4, 5)]:
        assert_same_read(a[selection], z[selection])


# --- reading -------------------------------------------------------------------------------


@pytest.mark.parametrize(("zarr_format", "shards"), LAYOUTS, ids=LAYOUT_IDS)
def test_selections(tmp_path: Path, zarr_format: int, shards: Any) -> None:
    z, a = pair(tmp_path, zarr_format=zarr_format, shards=shards)
    z[:5] = VALUES["list"][:5]
    a[:5] = VALUES["list"][:5]
    mask = np.array([True, False, True, True, False, True])
    assert_same_read(a[[4, 0, 5]], z[[4, 0, 5]])
    assert_same_read(a[mask], z[mask])
    assert_same_read(a.oindex[[1, 5]], z.oindex[[1, 5]])
    assert_same_read(a.vindex[[3, 3, 0]], z.vindex[[3, 3, 0]])
    assert_same_read(a.get_coordinate_selection([2, 5]), z.get_coordinate_selection([2, 5]))
    assert_same_read(a.get_mask_selection(mask), z.get_mask_selection(mask))
    assert_same_read(a.get_orthogonal_selection(([0, 2],)),
                     z.get_orthogonal_selection(([0, 2],)))
    assert_same_read(a.blocks[1], z.blocks[1])
    assert_same_read(np.asarray(a), np.asarray(z))
    assert list(a) == list(z[...])
    # zarrkit's own out=: the caller's StringDType array receives the read.
    out = np.empty(3, dtype=STRING_DTYPE)
    assert a.get_basic_selection(slice(1, 4), out=out) is out
    assert_same_read(out, z[1:4])
    # ...or an object array (what strings were read as before StringDType), not others.
    objects = np.empty(6, dtype=object)
    a.read(out=objects)
    assert objects.tolist() == z[...].tolist()
    assert {type(x) for x in objects} == {str}
    with pytest.raises(zk.errors.OutputArrayError, match="dtype"):
        a.get_basic_selection(slice(1, 4), out=np.empty(3, dtype="U3"))


def test_two_dimensional_fortran_order(tmp_path: Path) -> None:
    options = {"shape": (3, 4), "chunks": (2, 3), "dtype": str, "order": "F",
               "zarr_format": 2}
    z = zarr.create_array(str(tmp_path / "zarr"), **options)
    a = zk.create_array(str(tmp_path / "zarrkit"), **options)
    data = np.array([["a", "b", "c", "d"], ["e", "", "g", "h"], ["i", "j", "☃", "l"]],
                    dtype=STRING_DTYPE)
    z[:, 1:] = data[:, 1:]
    a[:, 1:] = data[:, 1:]
    assert_same_read(a[...], z[...])
    assert_same_read(a[1], z[1])
    assert_same_read(a[1, 2], z[1, 2])
    assert_same_read(a.oindex[[2, 0], [3, 1]], z.oindex[[2, 0], [3, 1]])
    assert stored_chunks(tmp_path / "zarrkit") == stored_chunks(tmp_path / "zarr")


text = st.text(st.characters(exclude_categories=("Cs",)), max_size=5)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(text, min_size=1, max_size=6), start=st.integers(0, 5),
       zarr_format=st.sampled_from(FORMATS))
def test_written_text_reads_back_as_numpy_and_zarr_python_say(
        tmp_path_factory: pytest.TempPathFactory, values: list[str], start: int,
        zarr_format: int) -> None:
    tmp_path = tmp_path_factory.mktemp("strings")
    z, a = pair(tmp_path, zarr_format=zarr_format)
    stop = min(6, start + len(values))
    part = values[:stop - start]
    z[start:stop] = part
    a[start:stop] = part
    expected = np.full(6, "", dtype=STRING_DTYPE)
    expected[start:stop] = part
    assert_same_read(a[...], expected)
    assert_same_read(a[...], z[...])
    assert_same_read(zarr.open_array(str(tmp_path / "zarrkit"), mode="r")[...], expected)


def test_hdmf_text_is_still_text(tmp_path: Path) -> None:
    """hdmf-zarr's text datasets keep their hdmf dtype; the stored dtype is objects."""
    from zarrkit.hdmf.dtypes import hdmf_dtype_of, storage_dtype

    for zarr_format in FORMATS:
        root = zk.group({}, zarr_format=zarr_format)
        storage = storage_dtype("text")
        array = root.create_array("t", shape=(2,),
                                  **storage.array_options(zarr_format, scalar=False))
        array[...] = ["x", "ÿ"]
        assert hdmf_dtype_of(array) == "text"
        assert array.metadata.dtype == np.dtype(object)
        assert array[...].tolist() == ["x", "ÿ"]
