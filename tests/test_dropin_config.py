"""zarrkit.config in zarr-python's forms: set({...}), get("dotted.key"), and bare calls that
take effect for good."""

from __future__ import annotations

import importlib
import io
import pprint
from collections.abc import Iterator

import numpy as np
import pytest

import zarrkit as zk
from zarrkit import concurrency
from zarrkit.config import Config

zarr = pytest.importorskip("zarr")


@pytest.fixture
def restore() -> Iterator[None]:
    saved = dict(vars(zk.config))
    saved["_inert"] = dict(zk.config._inert)
    yield
    vars(zk.config).update(saved)


def test_bare_set_takes_effect_and_the_pool_follows(restore: None) -> None:
    zk.config.set(threads=1)
    assert zk.config.threads == 1
    zk.config.set(threads=2)
    concurrency._get_pool()
    assert concurrency._pool_size == 2
    # A parallel read with the new setting still gives numpy's answer.
    a = zk.create_array({}, shape=(64,), chunks=(4,), dtype="i4")
    a[...] = np.arange(64)
    np.testing.assert_array_equal(a[...], np.arange(64))


def test_with_restores_what_set_changed(restore: None) -> None:
    zk.config.set(threads=3)
    with zk.config.set({"threading.max_workers": 1, "array.write_empty_chunks": True}) as c:
        assert c is zk.config
        assert (zk.config.threads, zk.config.write_empty_chunks) == (1, True)
    assert (zk.config.threads, zk.config.write_empty_chunks) == (3, False)


@pytest.mark.parametrize(("key", "value"), [
    ("array.write_empty_chunks", True), ("array.order", "F"), ("default_zarr_format", 2),
    ("async.concurrency", 4), ("json_indent", 4), ("array.read_missing_chunks", False),
    ("array.allow_unsafe_pickle_decode", True), ("array.rectilinear_chunks", True),
])
def test_get_and_set_by_zarr_python_keys(restore: None, key: str, value: object) -> None:
    assert zk.config.get(key) == zarr.config.get(key)  # the same defaults
    with zk.config.set({key: value}), zarr.config.set({key: value}):
        assert zk.config.get(key) == zarr.config.get(key) == value
    assert zk.config.get(key) == zarr.config.get(key)


def test_settings_act_as_in_zarr_python(restore: None) -> None:
    with zk.config.set({"default_zarr_format": 2}), zarr.config.set({"default_zarr_format": 2}):
        assert zk.group().zarr_format == zarr.group().metadata.zarr_format == 2
    with zk.config.set({"array.order": "F"}), zarr.config.set({"array.order": "F"}):
        ours = zk.create((2, 2), store={}, zarr_format=2)
        theirs = zarr.create((2, 2), store={}, zarr_format=2)
        assert ours.order == theirs.order == "F"
    with zk.config.set(array__write_empty_chunks=True):  # donfig's keyword spelling
        assert zk.config.write_empty_chunks


def test_get_of_a_section_and_unknown_keys() -> None:
    cfg = Config()
    zarr.config.refresh()
    # zarr-python 3.4's array section, key for key (read_missing_chunks and the shard-read
    # tuning of 3.3, rectilinear_chunks and allow_unsafe_pickle_decode of 3.4).
    assert cfg.get("array") == zarr.config.get("array")
    for key in ("array.sharding_coalesce_max_gap_bytes", "array.sharding_coalesce_max_bytes",
                "codec_pipeline.max_workers", "array.read_missing_chunks"):
        assert cfg.get(key) == zarr.config.get(key)
    with pytest.raises(KeyError):
        cfg.get("no.such.key")
    assert cfg.get("no.such.key", 7) == 7
    with pytest.raises(AttributeError, match="unknown zarrkit setting"):
        cfg.set({"array.wirte_empty_chunks": True})
    with pytest.raises(AttributeError):
        cfg.set(thread=1)


def test_threads_none_means_every_cpu() -> None:
    cfg = Config()
    cfg.set({"threading.max_workers": None})
    assert cfg.threads >= 1


def _tree_shape(tree: object) -> object:
    """A config tree with every class path reduced to its class name."""
    if isinstance(tree, dict):
        return {key: _tree_shape(value) for key, value in tree.items()}
    if isinstance(tree, str) and tree.startswith(("zarr.codecs.", "zarrkit.codecs.")):
        return tree.rsplit(".", 1)[1]
    return tree


def test_to_dict_has_zarr_python_tree_and_zarrkit_settings() -> None:
    """``to_dict``/``pprint`` give zarr-python 3.4's tree: the same sections and keys with
    the same values, but for the codec classes (zarrkit's, of the same names) and the
    threads (zarrkit resolves None to the CPU count); zarrkit's own settings are added at
    the top level."""
    zarr.config.refresh()
    ours, theirs = Config().to_dict(), zarr.config.to_dict()
    own = {"engine", "file_locks", "fsync", "max_chunk_bytes"}
    assert set(ours) == set(theirs) | own
    for section in set(theirs) - {"codecs", "threading"}:
        assert ours[section] == theirs[section], section
    assert ours["threading"]["max_workers"] == Config().threads
    # Every codec zarr-python names, by zarrkit's class of the same name, which exists.
    extra = set(ours["codecs"]) - set(theirs["codecs"])
    assert extra == {"scale_offset"}  # zarrkit's codec beyond zarr-python's
    shape = _tree_shape(ours["codecs"])
    assert isinstance(shape, dict)
    assert {k: v for k, v in shape.items() if k not in extra} == _tree_shape(theirs["codecs"])
    for path in ours["codecs"].values():
        module, name = path.rsplit(".", 1)
        assert isinstance(getattr(importlib.import_module(module), name), type), path


def test_pprint_prints_the_tree(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = Config()
    stream = io.StringIO()
    cfg.pprint(stream=stream, width=60)
    expected = io.StringIO()
    pprint.pprint(cfg.to_dict(), stream=expected, width=60)
    assert stream.getvalue() == expected.getvalue()
    assert "'read_missing_chunks': True" in stream.getvalue()
    cfg.set({"array.read_missing_chunks": False})
    cfg.pprint()
    assert "'read_missing_chunks': False" in capsys.readouterr().out


def test_read_missing_chunks_setting_acts_on_new_handles(restore: None) -> None:
    """As zarr-python's: a handle takes ``array.read_missing_chunks`` when it is made."""
    store: dict[str, bytes] = {}
    before = zk.create_array(store, shape=(4,), chunks=(2,), dtype="u1", overwrite=True)
    theirs_before = zarr.create_array({}, shape=(4,), chunks=(2,), dtype="u1")
    with zk.config.set({"array.read_missing_chunks": False}), \
            zarr.config.set({"array.read_missing_chunks": False}):
        during = zk.open_array(store)
        theirs = zarr.create_array({}, shape=(4,), chunks=(2,), dtype="u1")
        assert during.config.read_missing_chunks is theirs.config.read_missing_chunks is False
        # A handle made before keeps reading missing chunks as the fill value.
        assert before[:].tolist() == theirs_before[:].tolist() == [0] * 4
    with pytest.raises(zarr.errors.ChunkNotFoundError):
        theirs[:]
    with pytest.raises(zk.errors.ChunkNotFoundError):
        during[:]
    assert zk.config.read_missing_chunks is True
