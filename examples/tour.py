"""A tour of zarrkit: write a small hierarchy to a directory store, read it back, print it.

Run with ``make demo`` (or ``python examples/tour.py example.zarr``).
"""

from __future__ import annotations

import sys

import numcodecs
import numpy as np

import zarrkit as zk


def main(path: str) -> None:
    # Zarr format 3 by default; pass zarr_format=2 for the older format.
    root = zk.open_group(path, mode="w", attributes={"title": "zarrkit tour"})

    # An image-like array, zstd-compressed, written in one go.
    y, x = np.mgrid[0:256, 0:256]
    image = (1000 + 500 * np.sin(x / 20) * np.cos(y / 30)).astype("uint16")
    img = root.create_array("raw/image", shape=image.shape, chunks=(64, 64), dtype="uint16",
                            dimension_names=["y", "x"], attributes={"units": "counts"})
    img[...] = image

    # The same image sharded: 128x128 shards of 32x32 inner chunks, one file per shard.
    sharded = root.create_array("raw/image_sharded", shape=image.shape, chunks=(32, 32),
                                shards=(128, 128), dtype="uint16")
    sharded[...] = image

    # A time series that grows by appending, blosc-compressed with a delta filter.
    series = root.create_array("raw/series", shape=(0,), chunks=(100,), dtype="<i8",
                               compressors=[numcodecs.Blosc("zstd", clevel=3)],
                               filters=[{"id": "delta", "dtype": "<i8"}])
    for day in range(5):
        series.append(np.arange(day * 50, day * 50 + 50))

    # Labels as variable-length strings, and a table with a structured dtype.
    labels = root.create_array("meta/labels", shape=(4,), chunks=(2,), dtype=str)
    labels[:] = ["alpha", "beta", "gamma", "delta"]
    table_dtype = np.dtype([("id", "<i4"), ("score", "<f8"), ("tag", "S4")])
    table = root.create_array("meta/table", shape=(3,), chunks=(3,), dtype=table_dtype)
    table[:] = np.array([(1, 0.5, b"a"), (2, 1.5, b"b"), (3, np.nan, b"c")], table_dtype)

    zk.consolidate_metadata(path)

    # Read everything back, through the consolidated metadata.
    back = zk.open_group(path, mode="r", consolidated=True)
    print(back.tree())
    print()
    image_back = back["raw/image"]
    assert isinstance(image_back, zk.Array)
    assert np.array_equal(image_back[...], image)
    print("image[100, 100:104] =", image_back[100, 100:104])
    print("image.oindex[[0, 255], [0, 255]] =", image_back.oindex[[0, 255], [0, 255]].tolist())
    print("image.vindex[[0, 255], [0, 255]] =", image_back.vindex[[0, 255], [0, 255]].tolist())
    print("sharded[100, 100:104] =", back["raw/image_sharded"][100, 100:104],
          "shards:", back["raw/image_sharded"].shards)
    print("series[-3:] =", back["raw/series"][-3:])
    print("labels =", back["meta/labels"][:].tolist())
    print("table['score'] =", back["meta/table"][:]["score"])
    print("attrs:", dict(back.attrs), dict(image_back.attrs), image_back.dimension_names)
    print()
    print(image_back.info)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "example.zarr")
