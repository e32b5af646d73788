"""zarrkit.config in zarr-python's forms: set({...}), get("dotted.key"), and bare calls that
take effect for good."""

from __future__ import annotations

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
    ("async.concurrency", 4), ("json_indent", 4),
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
    assert cfg.get("array") == {"order": "C", "write_empty_chunks": False,
                                "target_shard_size_bytes": None}
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
