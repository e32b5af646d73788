"""Array previews as PNG: a 1-D array as a line plot, a 2-D array (or a 2-D slice of an
N-D one: the last two axes, the others held at given indices) as an image in a colour scale.

A preview reads a sample of the array, never all of it: at most :data:`MAX_PIXELS` indices
per shown axis, taken with a uniform stride when that touches few chunks, else from a
few chunks spread evenly along the axis (each sampled densely), so that the decoded chunks
stay within :data:`READ_BUDGET` bytes however large the array. The selection is an
orthogonal one (``Array.oindex``), which reads only the chunks holding a selected index.

>>> import numpy as np, zarrkit as zk
>>> a = zk.create_array({}, name="x", shape=(4, 6), chunks=(2, 2), dtype="f4")
>>> a[:] = np.arange(24).reshape(4, 6)
>>> p = render_preview(a, ())
>>> p.kind, p.image.size, p.minimum, p.maximum
('image', (6, 4), 0.0, 23.0)
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from zarrkit.errors import IndexingError, UnsupportedOperationError
from zarrkit.hierarchy.array import Array

#: The most indices sampled along one shown axis (the most pixels of an image side).
MAX_PIXELS = 512
#: The most bytes of decoded chunks one preview reads (the chunks are read whole).
READ_BUDGET = 64 * 2**20
#: The size of a line plot, in pixels.
PLOT_SIZE = (640, 200)
_PLOT_MARGIN = 8

# Viridis, sampled at nine evenly spaced points: a perceptually uniform scale that reads in
# grey too. Interpolated to 256 colours.
_VIRIDIS = np.array([
    (68, 1, 84), (71, 44, 122), (59, 82, 139), (44, 114, 142), (33, 145, 140),
    (40, 174, 128), (94, 201, 98), (173, 220, 48), (253, 231, 37)], dtype=float)
COLOURS = np.stack(
    [np.interp(np.linspace(0, 1, 256), np.linspace(0, 1, len(_VIRIDIS)), _VIRIDIS[:, c])
     for c in range(3)], axis=1).round().astype(np.uint8)


@dataclass(frozen=True)
class Preview:
    """A rendered preview: ``kind`` is ``"image"`` or ``"line"``; ``minimum``/``maximum``
    the range of the finite sampled values (None if there are none); ``indices`` the
    sampled indices of each shown axis; ``sampling`` ``"strided"`` or ``"chunk-sampled"``.

    >>> import zarrkit as zk
    >>> p = render_preview(zk.create_array({}, name="x", shape=(5,), dtype="u1"), ())
    >>> p.kind, p.minimum, p.maximum, p.sampling
    ('line', 0.0, 0.0, 'strided')
    """

    kind: str
    image: Image.Image
    minimum: float | None
    maximum: float | None
    indices: tuple[np.ndarray[Any, Any], ...]
    sampling: str

    def png(self) -> bytes:
        """The preview encoded as PNG.

        >>> import zarrkit as zk
        >>> render_preview(zk.create_array({}, name="x", shape=(3,), dtype="u1"), ()
        ...                ).png()[:4]
        b'\\x89PNG'
        """
        out = io.BytesIO()
        self.image.save(out, format="PNG")
        return out.getvalue()


def _chunk_extent(chunk: Any) -> int:
    """One axis' chunk length (the largest, for a grid of varying chunk lengths)."""
    return int(max(chunk)) if isinstance(chunk, (tuple, list)) else int(chunk)


def sample_indices(length: int, chunk: int, max_chunks: int,
                   max_pixels: int = MAX_PIXELS) -> tuple[np.ndarray[Any, Any], bool]:
    """Indices to sample along an axis of ``length`` in chunks of ``chunk``, touching at
    most ``max_chunks`` chunks; and whether the stride is uniform.

    >>> sample_indices(10, 5, 4)[0].tolist()
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    >>> indices, uniform = sample_indices(100_000, 1000, 2, max_pixels=4)
    >>> indices.tolist(), uniform
    ([0, 500, 99000, 99500], False)
    """
    step = max(1, math.ceil(length / max_pixels))
    uniform = np.arange(0, length, step)
    if len(np.unique(uniform // chunk)) <= max_chunks:
        return uniform, True
    n_chunks = math.ceil(length / chunk)
    chosen = np.unique(np.linspace(0, n_chunks - 1, max_chunks).round().astype(int))
    per_chunk = max(1, max_pixels // len(chosen))
    parts = []
    for c in chosen:
        start, stop = int(c) * chunk, min((int(c) + 1) * chunk, length)
        parts.append(np.arange(start, stop, max(1, math.ceil((stop - start) / per_chunk))))
    return np.concatenate(parts), False


def _as_numbers(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The values as float64 for a colour scale or a plot (refusing what has no number)."""
    kind = values.dtype.kind
    if kind == "b":
        return values.astype(np.float64)
    if kind in "iuf":
        return values.astype(np.float64)
    if kind == "c":
        return np.abs(values).astype(np.float64)  # complex values show their magnitude
    if kind in "mM":
        numbers = values.view(np.int64).astype(np.float64)
        numbers[np.isnat(values)] = np.nan
        return numbers
    raise UnsupportedOperationError(f"no preview for data type {values.dtype}")


def _range(numbers: np.ndarray[Any, Any]) -> tuple[float | None, float | None]:
    finite = numbers[np.isfinite(numbers)]
    if finite.size == 0:
        return None, None
    return float(finite.min()), float(finite.max())


def colour_image(numbers: np.ndarray[Any, Any], low: float | None, high: float | None
                 ) -> Image.Image:
    """A 2-D array of numbers as an RGBA image in :data:`COLOURS` between ``low`` and
    ``high``; non-finite values are transparent.

    >>> image = colour_image(np.array([[0.0, np.nan], [1.0, 2.0]]), 0.0, 2.0)
    >>> image.getpixel((0, 0)), image.getpixel((1, 0))[3]
    ((68, 1, 84, 255), 0)
    """
    finite = np.isfinite(numbers)
    if low is None or high is None:
        levels = np.zeros(numbers.shape, dtype=np.uint8)
    elif high == low:
        levels = np.full(numbers.shape, 128, dtype=np.uint8)
    else:
        scaled = (np.where(finite, numbers, low) - low) * (255 / (high - low))
        levels = np.clip(scaled, 0, 255).astype(np.uint8)
    rgba = np.empty((*numbers.shape, 4), dtype=np.uint8)
    rgba[..., :3] = COLOURS[levels]
    rgba[..., 3] = np.where(finite, 255, 0)
    return Image.fromarray(rgba, mode="RGBA")


def colour_bar(width: int = 256, height: int = 12) -> bytes:
    """The colour scale as a PNG, low values on the left.

    >>> colour_bar()[:4]
    b'\\x89PNG'
    """
    ramp = np.tile(np.linspace(0, 1, width), (height, 1))
    out = io.BytesIO()
    colour_image(ramp, 0.0, 1.0).save(out, format="PNG")
    return out.getvalue()


def line_plot(numbers: np.ndarray[Any, Any], low: float | None, high: float | None
              ) -> Image.Image:
    """A 1-D array of numbers as a line plot of :data:`PLOT_SIZE` (gaps where a value is
    not finite).

    >>> line_plot(np.array([0.0, 1.0, 0.5]), 0.0, 1.0).size
    (640, 200)
    """
    width, height = PLOT_SIZE
    image = Image.new("RGB", PLOT_SIZE, (255, 255, 255))
    draw = ImageDraw.Draw(image)
    m = _PLOT_MARGIN
    draw.rectangle((m - 1, m - 1, width - m, height - m), outline=(200, 200, 200))
    if low is None or high is None or numbers.size == 0:
        return image
    span = (high - low) or 1.0
    xs = np.linspace(m, width - m - 1, numbers.size) if numbers.size > 1 else np.array(
        [width / 2])
    ys = (height - m - 1) - (numbers - low) / span * (height - 2 * m - 1)
    if high == low:
        ys = np.full(numbers.shape, height / 2)
    colour = tuple(int(c) for c in COLOURS[80])
    run: list[tuple[float, float]] = []
    for x, y in zip(xs.tolist(), ys.tolist(), strict=True):
        if math.isfinite(y):
            run.append((x, y))
            continue
        _draw_run(draw, run, colour)
        run = []
    _draw_run(draw, run, colour)
    return image


def _draw_run(draw: ImageDraw.ImageDraw, run: list[tuple[float, float]],
              colour: tuple[int, ...]) -> None:
    if len(run) == 1:
        x, y = run[0]
        draw.ellipse((x - 1.5, y - 1.5, x + 1.5, y + 1.5), fill=colour)
    elif run:
        draw.line(run, fill=colour, width=2)


def render_preview(array: Array, index: Sequence[int]) -> Preview:
    """The preview of ``array``: its last two axes (one, for a 1-D array) shown, each other
    axis held at the position ``index`` gives (0 for those not given).

    >>> import zarrkit as zk
    >>> a = zk.create_array({}, name="v", shape=(2, 3, 700), chunks=(1, 3, 100), dtype="i2")
    >>> p = render_preview(a, (1,))
    >>> p.image.size, [len(i) for i in p.indices]
    ((350, 3), [3, 350])
    >>> render_preview(a, (5,))
    Traceback (most recent call last):
    zarrkit.errors.IndexingError: index 5 is out of range for axis 0 of length 2
    """
    if array.ndim == 0 or array.size == 0:
        raise UnsupportedOperationError(f"no preview for an array of shape {array.shape}")
    _as_numbers(np.zeros(0, dtype=array.dtype))  # refuse other data types before reading
    shown = min(array.ndim, 2)
    held = array.ndim - shown
    if len(index) > held:
        raise IndexingError(f"{len(index)} indices given for {held} held axes")
    positions = [*index, *[0] * (held - len(index))]
    for axis, (position, length) in enumerate(zip(positions, array.shape, strict=False)):
        if not 0 <= position < length:
            raise IndexingError(
                f"index {position} is out of range for axis {axis} of length {length}")
    chunks = [_chunk_extent(c) for c in array.chunks]
    chunk_bytes = math.prod(chunks) * max(array.dtype.itemsize, 1)
    max_chunks = max(1, int((READ_BUDGET // chunk_bytes) ** (1 / shown)))
    sampled = [sample_indices(array.shape[a], chunks[a], max_chunks)
               for a in range(held, array.ndim)]
    indices = tuple(i for i, _ in sampled)
    values = np.asarray(array.oindex[(*positions, *indices)])
    numbers = _as_numbers(values)
    low, high = _range(numbers)
    sampling = "strided" if all(uniform for _, uniform in sampled) else "chunk-sampled"
    if shown == 1:
        return Preview("line", line_plot(numbers, low, high), low, high, indices, sampling)
    return Preview("image", colour_image(numbers, low, high), low, high, indices, sampling)
