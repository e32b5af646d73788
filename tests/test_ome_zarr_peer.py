"""OME-Zarr images with ome-zarr-py (the current release) as the peer, both ways.

ome-zarr writes an image pyramid (OME-NGFF 0.5 on Zarr v3, 0.4 on Zarr v2); zarrkit
opens it, finds the same multiscales metadata and reads every level with the values
ome-zarr's own reader gives. zarrkit writes a pyramid with its plain API (a group's
``ome``/``multiscales`` attributes and one array per level); ome-zarr's reader finds the
image, with its axes and scales, and reads zarrkit's values; ome-zarr-models validates
the 0.5 image. A region that zarrkit writes into an image ome-zarr made is read back
changed by ome-zarr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrkit as zk

ome_zarr = pytest.importorskip("ome_zarr")
zarr = pytest.importorskip("zarr")
from ome_zarr.format import FormatV04, FormatV05  # noqa: E402
from ome_zarr.io import parse_url  # noqa: E402
from ome_zarr.reader import Reader  # noqa: E402
from ome_zarr.writer import write_image  # noqa: E402

FORMATS = {"0.5": FormatV05(), "0.4": FormatV04()}


def image(seed: int = 0) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2**16, (2, 70, 45), dtype=np.uint16)


def ome_levels(path: Path, version: str) -> tuple[dict[str, Any], list[np.ndarray[Any, Any]]]:
    """The first image ome-zarr's reader finds at ``path``: its metadata and levels."""
    node = next(iter(Reader(parse_url(str(path), fmt=FORMATS[version]))()))
    return node.metadata, [np.asarray(level) for level in node.data]


def multiscales(attributes: dict[str, Any], version: str) -> list[dict[str, Any]]:
    return attributes["ome"]["multiscales"] if version == "0.5" else attributes["multiscales"]


def write_with_ome_zarr(path: Path, version: str, data: np.ndarray[Any, Any]) -> None:
    fmt = FORMATS[version]
    root = zarr.group(store=parse_url(str(path), mode="w", fmt=fmt).store,
                      zarr_format=fmt.zarr_format)
    write_image(image=data, group=root, axes="cyx", fmt=fmt,
                storage_options={"chunks": (1, 32, 16)})


@pytest.mark.parametrize("version", ["0.5", "0.4"])
def test_zarrkit_reads_the_pyramid_ome_zarr_writes(tmp_path: Path, version: str) -> None:
    path = tmp_path / "image.ome.zarr"
    write_with_ome_zarr(path, version, image())
    metadata, levels = ome_levels(path, version)
    root = zk.open_group(str(path), mode="r")
    assert root.zarr_format == FORMATS[version].zarr_format
    (scales,) = multiscales(root.attrs.asdict(), version)
    assert scales["axes"] == metadata["axes"]
    datasets = scales["datasets"]
    assert len(datasets) == len(levels) > 1
    for dataset, expected in zip(datasets, levels, strict=True):
        level = root[dataset["path"]]
        assert isinstance(level, zk.Array)
        assert level.shape == expected.shape and level.dtype == expected.dtype
        np.testing.assert_array_equal(level[...], expected)
        np.testing.assert_array_equal(level[:, 5:40:3, ::7], expected[:, 5:40:3, ::7])


def write_with_zarrkit(path: Path, version: str, data: np.ndarray[Any, Any]) -> list[Any]:
    """A three-level pyramid (each level halves y and x) written with zarrkit alone."""
    fmt = FORMATS[version].zarr_format
    axes = [{"name": "c", "type": "channel"}, {"name": "y", "type": "space", "unit": "micrometer"},
            {"name": "x", "type": "space", "unit": "micrometer"}]
    levels = [data, data[:, ::2, ::2], data[:, ::4, ::4]]
    datasets = [{"path": str(i), "coordinateTransformations": [
        {"type": "scale", "scale": [1.0, 0.5 * 2**i, 0.5 * 2**i]}]} for i in range(3)]
    scales = {"axes": axes, "datasets": datasets, "name": "zarrkit image"}
    attributes = ({"ome": {"version": "0.5", "multiscales": [scales]}} if version == "0.5"
                  else {"multiscales": [{**scales, "version": "0.4"}]})
    root = zk.open_group(str(path), mode="w", zarr_format=fmt, attributes=attributes)
    for i, level in enumerate(levels):
        extra: dict[str, Any] = ({"dimension_names": ["c", "y", "x"]} if fmt == 3
                                 else {"dimension_separator": "/"})
        array = root.create_array(str(i), shape=level.shape, dtype=level.dtype,
                                  chunks=(1, 16, 16), **extra)
        array[...] = level
    return levels


@pytest.mark.parametrize("version", ["0.5", "0.4"])
def test_ome_zarr_reads_the_pyramid_zarrkit_writes(tmp_path: Path, version: str) -> None:
    path = tmp_path / "image.ome.zarr"
    written = write_with_zarrkit(path, version, image(1))
    metadata, levels = ome_levels(path, version)
    assert metadata["name"] == "zarrkit image"
    assert [axis["name"] for axis in metadata["axes"]] == ["c", "y", "x"]
    assert metadata["coordinateTransformations"][2] == [
        {"type": "scale", "scale": [1.0, 2.0, 2.0]}]
    assert len(levels) == len(written)
    for got, expected in zip(levels, written, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_ome_zarr_models_validates_the_image_zarrkit_writes(tmp_path: Path) -> None:
    models = pytest.importorskip("ome_zarr_models.v05")
    path = tmp_path / "image.ome.zarr"
    write_with_zarrkit(path, "0.5", image(2))
    model = models.Image.from_zarr(zarr.open_group(str(path), mode="r"))
    assert [d.path for d in model.ome_attributes.multiscales[0].datasets] == ["0", "1", "2"]


@pytest.mark.parametrize("version", ["0.5", "0.4"])
def test_ome_zarr_reads_a_region_zarrkit_wrote_into_its_image(tmp_path: Path,
                                                              version: str) -> None:
    path = tmp_path / "image.ome.zarr"
    data = image(3)
    write_with_ome_zarr(path, version, data)
    root = zk.open_group(str(path), mode="r+")
    first = multiscales(root.attrs.asdict(), version)[0]["datasets"][0]["path"]
    patch = np.full((1, 30, 20), 7, dtype=np.uint16)
    root[first][1:2, 20:50, 10:30] = patch
    data[1:2, 20:50, 10:30] = patch
    _, levels = ome_levels(path, version)
    np.testing.assert_array_equal(levels[0], data)
