"""zarrkit's top-level functions against zarr-python's, side by side: the same call on
both stores the same metadata documents and reads the same values."""

from __future__ import annotations

import io
import json
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    NodeNotFoundError,
)

zarr = pytest.importorskip("zarr")

METADATA_NAMES = ("zarr.json", ".zarray", ".zgroup", ".zattrs")


def _zarr_documents(store: Any) -> dict[str, Any]:
    documents = {k: json.loads(v.to_bytes()) for k, v in store._store_dict.items()
                 if k.rsplit("/", 1)[-1] in METADATA_NAMES}
    # zarr-python writes an empty .zattrs beside every format-2 node; zarrkit writes none
    # (a missing .zattrs reads as no attributes in both libraries).
    return {k: v for k, v in documents.items() if not (k.endswith(".zattrs") and v == {})}


def _zk_documents(store: dict[str, bytes]) -> dict[str, Any]:
    return {k: json.loads(v) for k, v in store.items() if k.rsplit("/", 1)[-1] in METADATA_NAMES}


def _both(call: Any) -> tuple[Any, Any, dict[str, Any], dict[str, Any]]:
    """``call(library, store)`` on zarr-python and on zarrkit, with the stored documents."""
    theirs_store = zarr.storage.MemoryStore()
    ours_store: dict[str, bytes] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = call(zarr, theirs_store)
    ours = call(zk, ours_store)
    return theirs, ours, _zarr_documents(theirs_store), _zk_documents(ours_store)


CALLS = {
    "zeros": lambda z, s: z.zeros((20, 30), store=s),
    "zeros_v2": lambda z, s: z.zeros((20, 30), chunks=(7, 9), dtype="i2", store=s,
                                     zarr_format=2),
    "ones": lambda z, s: z.ones((5,), dtype="u1", store=s),
    "full": lambda z, s: z.full((3, 3), 7.5, store=s),
    "full_v2": lambda z, s: z.full((3,), 9, dtype="i4", store=s, zarr_format=2),
    "empty": lambda z, s: z.empty((4,), dtype="f4", store=s),
    "array": lambda z, s: z.array(np.arange(12).reshape(3, 4), store=s),
    "array_chunks": lambda z, s: z.array(np.arange(10.0), chunks=(3,), store=s),
    "create": lambda z, s: z.create((100,), chunks=10, dtype="i4", store=s, zarr_format=2,
                                    dimension_separator="/"),
    "create_v3": lambda z, s: z.create((10, 10), chunks=(5, 5), dtype="u2", store=s,
                                       fill_value=3, dimension_names=["y", "x"],
                                       attributes={"a": 1}),
    "create_key_encoding": lambda z, s: z.create((4,), chunks=2, dtype="u1", store=s,
                                                 chunk_key_encoding=("v2", ".")),
    "create_array_auto": lambda z, s: z.create_array(s, shape=(10000, 1000), dtype="f8"),
    "create_array_v2_str": lambda z, s: z.create_array(s, shape=(3,), dtype=str,
                                                       zarr_format=2),
    "create_array_data": lambda z, s: z.create_array(s, name="d", data=np.arange(6)),
    "create_array_encoding": lambda z, s: z.create_array(
        s, shape=(4, 4), chunks=(2, 2), dtype="i1",
        chunk_key_encoding={"name": "v2", "separator": "."}),
    "create_array_shards": lambda z, s: z.create_array(s, shape=(8, 8), chunks=(2, 2),
                                                       shards=(4, 4), dtype="u1"),
    "create_array_no_compression": lambda z, s: z.create_array(
        s, shape=(4,), dtype="u1", compressors=None, fill_value=5),
    "from_array": lambda z, s: z.from_array(s, data=np.arange(9).reshape(3, 3)),
    "from_array_v2_source": lambda z, s: z.from_array(s, data=z.create_array(
        {}, shape=(6,), chunks=(2,), dtype="i2", fill_value=3, zarr_format=2,
        attributes={"k": 1}, chunk_key_encoding={"name": "v2", "separator": "/"})),
    "from_array_keep_fill": lambda z, s: z.from_array(s, fill_value=None, data=z.create_array(
        {}, shape=(6,), chunks=(2,), dtype="u1", fill_value=3, compressors=None)),
    "from_array_sharded": lambda z, s: z.from_array(s, data=z.create_array(
        {}, shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="f4",
        dimension_names=["y", "x"])),
    "from_array_to_v2": lambda z, s: z.from_array(s, zarr_format=2, data=z.create_array(
        {}, shape=(5,), chunks=(2,), dtype="i8")),
    "open_array_w": lambda z, s: z.open_array(s, mode="w", shape=(6,), chunks=(3,),
                                              dtype="i8"),
    "open_shape": lambda z, s: z.open(s, mode="w", shape=(2, 2), dtype="f4"),
    # zarr-python 3.4: create's mode defaults to None ("a") and it takes data to write.
    "create_data": lambda z, s: z.create((5,), chunks=2, dtype="i2", store=s,
                                         data=np.arange(5) * 3),
    "create_mode_none": lambda z, s: z.create((3,), dtype="u1", store=s, mode=None),
    # zarr-python 3.4: from_array copies the source's attributes (deeply) and fill value.
    "from_array_source_attrs": lambda z, s: z.from_array(s, data=z.create_array(
        {}, shape=(4,), chunks=(2,), dtype="f4", fill_value=-1.5,
        attributes={"units": "m", "nested": {"k": [1, 2]}})),
    "from_array_no_attrs": lambda z, s: z.from_array(s, attributes={}, data=z.create_array(
        {}, shape=(4,), chunks=(2,), dtype="u2", fill_value=7, attributes={"a": 1})),
    "from_array_v2_fill_none": lambda z, s: z.from_array(
        s, fill_value=None, zarr_format=2, data=z.create_array(
            {}, shape=(4,), chunks=(2,), dtype="i4", fill_value=9, zarr_format=2)),
    "group": lambda z, s: z.group(s, attributes={"t": "x"}),
    "create_group_v2": lambda z, s: z.create_group(s, path="a/b", zarr_format=2),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_same_call_same_documents_and_values(name: str) -> None:
    theirs, ours, theirs_docs, ours_docs = _both(CALLS[name])
    assert ours_docs == theirs_docs
    assert type(ours).__name__ == type(theirs).__name__
    if isinstance(theirs, zarr.Array):
        assert ours.shape == theirs.shape
        if theirs.dtype.kind != "T":  # zarr-python's StringDType reads as object in zarrkit
            assert ours.dtype == theirs.dtype
        assert ours.chunks == theirs.chunks
        np.testing.assert_array_equal(ours[...], theirs[...])


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 3000), min_size=1, max_size=3),
       dtype=st.sampled_from(["u1", "i2", "f4", "f8", "c16"]))
def test_guessed_chunks_are_zarr_pythons(shape: list[int], dtype: str) -> None:
    theirs = zarr.create_array({}, shape=tuple(shape), dtype=dtype)
    assert zk.create_array({}, shape=tuple(shape), dtype=dtype).chunks == theirs.chunks


@pytest.mark.parametrize("like", ["zeros_like", "ones_like", "empty_like", "full_like"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_like_functions_copy_the_source(like: str, zarr_format: int) -> None:
    def call(z: Any, s: Any) -> Any:
        src = z.create_array({}, shape=(6, 4), chunks=(3, 2), dtype="i4", fill_value=2,
                             zarr_format=zarr_format)
        extra = {"fill_value": 5} if like == "full_like" else {}
        # zarr-python keeps the source's format only when told (zarrkit keeps it anyway).
        return getattr(z, like)(src, store=s, zarr_format=zarr_format, **extra)

    theirs, ours, theirs_docs, ours_docs = _both(call)
    assert ours_docs == theirs_docs
    np.testing.assert_array_equal(ours[...], theirs[...])


@pytest.mark.parametrize("like", ["zeros_like", "ones_like", "empty_like", "full_like",
                                  "open_like"])
@pytest.mark.parametrize(("source_format", "zarr_format"), [(2, None), (3, None), (2, 3),
                                                            (3, 2)])
def test_like_functions_in_the_source_format_or_the_one_asked(
        like: str, source_format: int, zarr_format: int | None) -> None:
    """zarr-python 3.4: the source's format unless ``zarr_format`` asks for the other, and
    then that format's default codecs (its own mean nothing there)."""
    def call(z: Any, s: Any) -> Any:
        src = z.create_array({}, shape=(6,), chunks=(3,), dtype="i2", fill_value=4,
                             compressors=None, zarr_format=source_format)
        extra = {"fill_value": 5} if like == "full_like" else {}
        if like == "open_like":
            return z.open_like(src, "x", store=s, zarr_format=zarr_format)
        return getattr(z, like)(src, store=s, zarr_format=zarr_format, **extra)

    theirs, ours, theirs_docs, ours_docs = _both(call)
    assert ours_docs == theirs_docs
    assert ours.metadata.zarr_format == theirs.metadata.zarr_format
    np.testing.assert_array_equal(ours[...], theirs[...])


def test_save_takes_storage_options_for_the_store(tmp_path: Any) -> None:
    """zarr-python 3.4: ``storage_options`` reach the store and are no array to save."""
    for lib in (zarr, zk):
        url = f"local://{tmp_path}/{lib.__name__}.zarr"  # an fsspec URL for both
        lib.save(url, np.arange(3), storage_options={"auto_mkdir": True})
        node = lib.open(url, mode="r")
        assert isinstance(node, lib.Array), lib.__name__
        np.testing.assert_array_equal(node[...], np.arange(3))


@pytest.mark.parametrize("opener", ["open_array", "open", "Array.open", "require_array"])
def test_config_applies_to_an_existing_array(opener: str) -> None:
    """zarr-python 3.4 applies ``config`` when it opens an existing array, not only when it
    creates one."""
    wanted = {"write_empty_chunks": True, "order": "F"}
    for lib in (zarr, zk):
        store = lib.storage.MemoryStore()
        root = lib.create_group(store)
        root.create_array("a", shape=(4, 4), chunks=(2, 2), dtype="u1", fill_value=0)
        if opener == "Array.open":
            alone = lib.storage.MemoryStore()
            lib.create_array(alone, shape=(4, 4), chunks=(2, 2), dtype="u1", fill_value=0)
            a = lib.Array.open(alone, config=wanted)
        elif opener == "require_array":
            a = root.require_array("a", shape=(4, 4), dtype="u1", config=wanted)
        else:
            a = getattr(lib, opener)(store, path="a", mode="r+", config=wanted)
        assert (a.config.write_empty_chunks, a.config.order) == (True, "F"), lib.__name__
        a[...] = 0  # all fill: stored anyway, as write_empty_chunks asks
        assert a.nchunks_initialized == 4, lib.__name__
        assert a[...].flags.f_contiguous, lib.__name__


def test_like_functions_of_numpy_arrays() -> None:
    data = np.arange(6, dtype="u2").reshape(2, 3)
    for like in ("zeros_like", "ones_like", "empty_like"):
        theirs, ours, theirs_docs, ours_docs = _both(
            lambda z, s, like=like: getattr(z, like)(data, store=s))
        assert ours_docs == theirs_docs
        np.testing.assert_array_equal(ours[...], theirs[...])


def test_open_like_creates_then_opens() -> None:
    theirs, ours, theirs_docs, ours_docs = _both(
        lambda z, s: z.open_like(z.zeros((4,), chunks=(2,), dtype="u1"), "x", store=s,
                                 mode="a"))
    assert ours_docs == theirs_docs


def test_array_of_an_array_copies_its_codecs() -> None:
    theirs, ours, theirs_docs, ours_docs = _both(
        lambda z, s: z.array(z.create_array({}, shape=(4,), chunks=(2,), dtype="i2",
                                            compressors=None, fill_value=1), store=s))
    assert ours_docs == theirs_docs


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_save_and_load(zarr_format: int) -> None:
    def call(z: Any, s: Any) -> None:
        z.save(s, np.arange(5), np.ones((2, 2)), b=np.zeros(3, "i1"), zarr_format=zarr_format)

    _, _, theirs_docs, ours_docs = _both(call)
    assert ours_docs == theirs_docs
    ours: dict[str, bytes] = {}
    zk.save_array(ours, np.arange(4), path="x", zarr_format=zarr_format)
    theirs = zarr.storage.MemoryStore()
    zarr.save_array(theirs, np.arange(4), path="x", zarr_format=zarr_format)
    np.testing.assert_array_equal(zk.load(ours, path="x"), zarr.load(theirs, path="x"))
    assert _zk_documents(ours) == _zarr_documents(theirs)


def test_load_of_a_group_gives_its_arrays() -> None:
    s: dict[str, bytes] = {}
    zk.save(s, a=np.arange(2), b=np.ones(1))
    loaded = zk.load(s)
    assert sorted(loaded) == ["a", "b"]
    np.testing.assert_array_equal(loaded["a"], np.arange(2))


def test_save_needs_an_array() -> None:
    with pytest.raises(ValueError, match="at least one array"):
        zk.save({})
    with pytest.raises(TypeError):
        zk.save_group({}, [1, 2])


def test_open_consolidated() -> None:
    s: dict[str, bytes] = {}
    zk.group(s).create_array("a", shape=(1,), dtype="u1")
    with pytest.raises(NodeNotFoundError):
        zk.open_consolidated(s)
    zk.consolidate_metadata(s)
    g = zk.open_consolidated(s, mode="r")
    assert g.consolidated and list(g) == ["a"]
    with pytest.raises(TypeError, match="use_consolidated"):
        zk.open_consolidated(s, use_consolidated=False)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_use_consolidated_default_reads_the_snapshot_in_every_reading_mode(
        zarr_format: int) -> None:
    s: dict[str, bytes] = {}
    zk.group(s, zarr_format=zarr_format).create_array("a", shape=(1,), dtype="u1")
    assert not zk.open_group(s, mode="a").consolidated
    zk.consolidate_metadata(s)
    for mode in ("r", "r+", "a"):
        assert zk.open_group(s, mode=mode).consolidated, mode
        assert not zk.open_group(s, mode=mode, use_consolidated=False).consolidated, mode
    opened = zk.open_group(s, mode="a", attributes={"new": 1})
    assert opened.consolidated and zk.open_group(s, mode="r").attrs["new"] == 1


def test_create_hierarchy_matches_zarr_python() -> None:
    from zarr.core.group import GroupMetadata
    from zarr.core.metadata import ArrayV3Metadata

    array_doc = json.loads(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {"k": 1}, "storage_transformers": [],
    }))
    theirs_store = zarr.storage.MemoryStore()
    theirs = dict(zarr.create_hierarchy(store=theirs_store, nodes={
        "": GroupMetadata(attributes={"t": 1}), "g/x": ArrayV3Metadata.from_dict(array_doc)}))
    ours_store: dict[str, bytes] = {}
    from zarrkit.metadata.v3 import ArrayMetadataV3, GroupMetadataV3

    ours = dict(zk.create_hierarchy(store=ours_store, nodes={
        "": GroupMetadataV3(attributes={"t": 1}), "g/x": ArrayMetadataV3.from_json(array_doc)}))
    assert _zk_documents(ours_store) == _zarr_documents(theirs_store)
    assert {k: type(v).__name__ for k, v in ours.items()} == {
        k: type(v).__name__ for k, v in theirs.items() if k in ours}
    # zarr-python's own metadata objects and plain documents are accepted too.
    again: dict[str, bytes] = {}
    list(zk.create_hierarchy(store=again, nodes={"": GroupMetadata(attributes={"t": 1}),
                                                 "g/x": array_doc}))
    assert _zk_documents(again) == _zk_documents(ours_store)
    with pytest.raises(ContainsArrayError):
        list(zk.create_hierarchy(store=again, nodes={"g/x": array_doc}))


def test_tree_prints_as_zarr_python() -> None:
    def build(z: Any) -> Any:
        g = z.group()
        g.create_group("a").create_array("x", shape=(3,), dtype="i4")
        g.create_array("y", shape=(2, 2), dtype="f8")
        return g

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = str(zarr.tree(build(zarr))).strip()
    ours = zk.tree(build(zk))
    assert str(ours).strip() == theirs
    assert repr(ours) == str(ours)
    assert "x" not in str(zk.tree(build(zk), level=1))


# Errors: zarr-python's classes, raised where zarr-python raises them.

@pytest.mark.parametrize(("call", "error"), [
    (lambda z, s: z.create_array(s, name="a", shape=(1,), dtype="u1"), "ContainsArrayError"),
    (lambda z, s: z.create_group(s, path="a"), "ContainsArrayError"),
    (lambda z, s: z.create_array(s, shape=(1,), dtype="u1"), "ContainsGroupError"),
    (lambda z, s: z.create(shape=(1,), store=s, path="a"), "ContainsArrayError"),
    (lambda z, s: z.open_group(s, path="b", mode="r"), "GroupNotFoundError"),
    (lambda z, s: z.open_array(s, path="b", mode="r"), "ArrayNotFoundError"),
])
def test_errors_are_zarr_pythons(call: Any, error: str) -> None:
    theirs_store = zarr.storage.MemoryStore()
    zarr.group(theirs_store).create_array("a", shape=(1,), dtype="u1")
    with pytest.raises(getattr(zarr.errors, error)):
        call(zarr, theirs_store)
    ours_store: dict[str, bytes] = {}
    zk.group(ours_store).create_array("a", shape=(1,), dtype="u1")
    with pytest.raises(getattr(zk.errors, error)) as caught:
        call(zk, ours_store)
    # What an except clause written for zarr-python (or for zarrkit) catches.
    if "NotFound" in error:
        assert isinstance(caught.value, FileNotFoundError)
        assert isinstance(caught.value, KeyError)
    else:
        assert isinstance(caught.value, ValueError)
        assert isinstance(caught.value, FileExistsError)


def test_not_found_errors_are_file_not_found() -> None:
    for error in (NodeNotFoundError, ArrayNotFoundError, GroupNotFoundError):
        assert issubclass(error, FileNotFoundError) and issubclass(error, KeyError)
    assert issubclass(ContainsGroupError, ValueError)


# Stores.

def test_local_store_is_directory_store(tmp_path: Any) -> None:
    assert zk.LocalStore is zk.DirectoryStore is zk.storage.LocalStore
    store = zk.storage.LocalStore(str(tmp_path / "d"), read_only=False)
    zk.create_array(store, shape=(2,), dtype="u1", fill_value=1)
    assert zk.open_array(zk.storage.LocalStore(tmp_path / "d", read_only=True))[0] == 1
    assert zk.ZipStore is zk.storage.ZipStore


def test_store_constructor_keywords(tmp_path: Any) -> None:
    assert zk.storage.MemoryStore(read_only=True).read_only
    path = tmp_path / "x.zip"
    with zk.storage.ZipStore(path, mode="w") as store:
        zk.create_array(store, shape=(2,), dtype="u1", fill_value=4)
    with zk.storage.ZipStore(path, mode="r", read_only=True) as store:
        assert zk.open_array(store, mode="r")[1] == 4


def test_config_write_empty_chunks_of_create_array() -> None:
    s: dict[str, bytes] = {}
    a = zk.create_array(s, shape=(4,), chunks=(2,), dtype="u1",
                        config={"write_empty_chunks": True})
    a[...] = 0
    assert "c/0" in s and a.write_empty_chunks
    with pytest.raises(TypeError, match="config"):
        zk.create_array({}, shape=(1,), dtype="u1", config={"nope": 1})


def test_write_data_false_keeps_only_shape_and_dtype() -> None:
    s: dict[str, bytes] = {}
    a = zk.create_array(s, data=np.arange(4), write_data=False)
    assert a.shape == (4,) and not a.nchunks_initialized
    with pytest.raises(ValueError, match="shape"):
        zk.create_array({}, data=np.arange(4), shape=(5,))


def test_zarr_version_is_zarr_format() -> None:
    with pytest.warns(DeprecationWarning):
        assert zk.open_group({}, zarr_version=2).zarr_format == 2


def test_zip_store_from_file_objects(tmp_path: Any) -> None:
    import zipfile

    buffer = io.BytesIO()
    with zk.ZipStore(buffer, mode="w") as store:
        zk.create_array(store, name="a", data=np.arange(6).reshape(2, 3), chunks=(1, 3))
    # What zarr-python's ZipStore reads from the same bytes.
    path = tmp_path / "copy.zip"
    path.write_bytes(buffer.getvalue())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_array(zarr.storage.ZipStore(path, mode="r"), path="a", mode="r")[...]
    with zk.ZipStore(buffer) as store:
        np.testing.assert_array_equal(zk.open_array(store, path="a", mode="r")[...], theirs)
    assert sorted(zipfile.ZipFile(buffer).namelist())[0] == "a/c/0/0"
    with zk.ZipStore(buffer, mode="a") as store:  # appending goes back into the buffer
        zk.open_array(store, path="a")[0, 0] = 9
    with zk.ZipStore(buffer) as store:
        assert zk.open_array(store, path="a", mode="r")[0, 0] == 9
    with open(path, "rb") as file, zk.ZipStore(file) as store:  # a file on disk
        assert store.path == path
        np.testing.assert_array_equal(zk.open_array(store, path="a", mode="r")[...], theirs)
    with pytest.raises(TypeError, match="open binary file"):
        zk.ZipStore(object())  # type: ignore[arg-type]


def test_memory_store_takes_zarr_pythons_keywords() -> None:
    import inspect

    theirs = inspect.signature(zarr.storage.MemoryStore.__init__).parameters
    ours = inspect.signature(zk.MemoryStore.__init__).parameters
    assert set(theirs) <= set(ours)
    backing: dict[str, bytes] = {}
    store = zk.MemoryStore(store_dict=backing, read_only=False)
    zk.create_array(store, shape=(2,), dtype="u1")
    assert "zarr.json" in backing  # the dict given is the one written to


def test_create_hierarchy_takes_zarr_pythons_metadata_objects() -> None:
    """zarr-python's metadata objects hold tuples where documents hold lists."""
    import warnings

    import zarr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.create_array(store={}, shape=(4, 6), chunks=(2, 3), dtype="i2",
                                   attributes={"k": (1, 2)})
    store: dict[str, Any] = {}
    made = dict(zk.create_hierarchy(store=store, nodes={
        "a/x": theirs.metadata, "a": zarr.core.group.GroupMetadata(attributes={"g": 1})}))
    assert sorted(made) == ["", "a", "a/x"]
    x = zk.open_array(store, path="a/x", mode="r")
    assert (x.shape, x.chunks, x.dtype, dict(x.attrs)) == ((4, 6), (2, 3), np.dtype("i2"),
                                                          {"k": [1, 2]})
    assert dict(zk.open_group(store, path="a", mode="r").attrs) == {"g": 1}
