"""Zarr v3 chunk grids: the ``chunk_grid`` field of ``zarr.json``.

``regular`` (core) divides every dimension into equal chunks; ``rectilinear`` (a registered
extension) gives each dimension its own sequence of chunk lengths.

>>> grid = parse_chunk_grid({"name": "regular", "configuration": {"chunk_shape": [4, 3]}})
>>> grid.chunk_shape, grid.grid_shape((7, 5))
((4, 3), (2, 2))
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from zarrkit import registry
from zarrkit.caching import BoundedCache
from zarrkit.errors import MetadataError, UnsupportedExtensionError
from zarrkit.metadata.dtypes_v3 import parse_extension


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive(value: Any, what: str) -> int:
    if not _is_int(value) or value < 1:
        raise MetadataError(f"{what} must be a positive integer, found {value!r}")
    return int(value)


def _configuration(name: str, configuration: dict[str, Any] | None, keys: set[str]
                   ) -> dict[str, Any]:
    if configuration is None or set(configuration) != keys:
        found = None if configuration is None else sorted(configuration)
        raise MetadataError(
            f"chunk grid {name!r}: configuration must have exactly the keys {sorted(keys)}, "
            f"found {found}"
        )
    return configuration


class ChunkGrid:
    """Base of the chunk grids: what every grid offers to the array layer.

    >>> issubclass(RegularChunkGrid, ChunkGrid)
    True
    """

    name: ClassVar[str]

    @property
    def ndim(self) -> int:
        """Number of dimensions of the grid."""
        raise NotImplementedError

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        """Number of chunks along each dimension that hold elements of the array."""
        raise NotImplementedError

    def check_array_shape(self, array_shape: Sequence[int]) -> None:
        """Raise MetadataError if the grid cannot cover an array of this shape."""
        if len(array_shape) != self.ndim:
            raise MetadataError(
                f"chunk grid has {self.ndim} dimensions but the shape {tuple(array_shape)} "
                f"has {len(array_shape)}"
            )

    def to_json(self) -> dict[str, Any]:
        """The ``chunk_grid`` value."""
        raise NotImplementedError

    @classmethod
    def from_json(cls, value: Any) -> ChunkGrid:
        """Parse a ``chunk_grid`` value of this grid's kind."""
        raise NotImplementedError


@dataclass(frozen=True)
class RegularChunkGrid(ChunkGrid):
    """Chunks of one shape; edge chunks overhang the array.

    >>> RegularChunkGrid((10, 3)).to_json()
    {'name': 'regular', 'configuration': {'chunk_shape': [10, 3]}}
    """

    name: ClassVar[str] = "regular"
    chunk_shape: tuple[int, ...]

    def __post_init__(self) -> None:
        if isinstance(self.chunk_shape, (str, bytes)) or not isinstance(
            self.chunk_shape, Sequence
        ):
            raise MetadataError(f"chunk_shape must be a list of integers, "
                                f"found {self.chunk_shape!r}")
        object.__setattr__(self, "chunk_shape", tuple(
            _positive(n, f"chunk_shape entry of {list(self.chunk_shape)}")
            for n in self.chunk_shape
        ))

    @property
    def ndim(self) -> int:
        """Number of dimensions.

        >>> RegularChunkGrid(()).ndim
        0
        """
        return len(self.chunk_shape)

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        """Chunks per dimension: ``ceil(shape / chunk)``.

        >>> RegularChunkGrid((5, 20, 400)).grid_shape((10, 200, 3000))
        (2, 10, 8)
        """
        self.check_array_shape(array_shape)
        return tuple(-(-s // c) for s, c in zip(array_shape, self.chunk_shape, strict=True))

    def to_json(self) -> dict[str, Any]:
        """The ``chunk_grid`` value.

        >>> RegularChunkGrid(()).to_json()
        {'name': 'regular', 'configuration': {'chunk_shape': []}}
        """
        return {"name": "regular", "configuration": {"chunk_shape": list(self.chunk_shape)}}

    @classmethod
    def from_json(cls, value: Any) -> RegularChunkGrid:
        """Parse ``{"name": "regular", "configuration": {"chunk_shape": [...]}}``.

        >>> RegularChunkGrid.from_json({"name": "regular",
        ...                             "configuration": {"chunk_shape": [0]}})
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: chunk_shape entry of [0] must be a positive integer, found 0
        """
        ref = parse_extension(value, "chunk grid")
        config = _configuration(ref.name, ref.configuration, {"chunk_shape"})
        shape = config["chunk_shape"]
        if not isinstance(shape, list):
            raise MetadataError(f"chunk_shape must be a list of integers, found {shape!r}")
        return cls(tuple(shape))


def _expand_axis(spec: Any, axis: int) -> int | tuple[int, ...]:
    what = f"chunk_shapes[{axis}]"
    if _is_int(spec):
        return _positive(spec, what)
    if not isinstance(spec, list):
        raise MetadataError(f"{what} must be an integer or a list, found {spec!r}")
    lengths: list[int] = []
    for item in spec:
        if isinstance(item, list):
            if len(item) != 2:
                raise MetadataError(f"{what}: a run must be [length, count], found {item!r}")
            length = _positive(item[0], f"{what} run length")
            lengths.extend([length] * _positive(item[1], f"{what} run count"))
        else:
            lengths.append(_positive(item, f"{what} entry"))
    return tuple(lengths)


def _compress_axis(lengths: tuple[int, ...]) -> list[Any]:
    out: list[Any] = []
    for length, run in itertools.groupby(lengths):
        count = len(list(run))
        out.append([length, count] if count > 1 else length)
    return out


@dataclass(frozen=True)
class RectilinearChunkGrid(ChunkGrid):
    """Per-dimension chunk lengths (the ``rectilinear`` extension, ``kind: "inline"``).

    ``chunk_shapes`` holds, per dimension, either one integer (a regular step repeated to
    cover the dimension) or the tuple of explicit chunk lengths (run-length encoding already
    expanded; it is reapplied, for runs of two or more, when writing).

    >>> grid = RectilinearChunkGrid.from_json({"name": "rectilinear", "configuration": {
    ...     "kind": "inline", "chunk_shapes": [4, [1, 2, 3], [[4, 2]], [[1, 3], 3]]}})
    >>> grid.chunk_shapes
    (4, (1, 2, 3), (4, 4), (1, 1, 1, 3))
    >>> grid.chunk_boundaries((6, 6, 6, 6))[0]
    (0, 4, 8)
    """

    name: ClassVar[str] = "rectilinear"
    chunk_shapes: tuple[int | tuple[int, ...], ...]

    def __post_init__(self) -> None:
        axes: list[int | tuple[int, ...]] = []
        for axis, spec in enumerate(self.chunk_shapes):
            if isinstance(spec, int):
                axes.append(_positive(spec, f"chunk_shapes[{axis}]"))
            else:
                axes.append(tuple(_positive(n, f"chunk_shapes[{axis}] entry") for n in spec))
        object.__setattr__(self, "chunk_shapes", tuple(axes))

    @property
    def ndim(self) -> int:
        """Number of dimensions.

        >>> RectilinearChunkGrid((2, (1, 1))).ndim
        2
        """
        return len(self.chunk_shapes)

    def chunk_lengths(self, array_shape: Sequence[int]) -> tuple[tuple[int, ...], ...]:
        """Per dimension, the lengths of the chunks that hold elements of the array (the
        last one may overhang; chunks wholly beyond the array are left out).

        >>> RectilinearChunkGrid((3, (4, 4, 4))).chunk_lengths((10, 6))
        ((3, 3, 3, 3), (4, 4))
        """
        self.check_array_shape(array_shape)
        result: list[tuple[int, ...]] = []
        for spec, extent in zip(self.chunk_shapes, array_shape, strict=True):
            if isinstance(spec, int):
                result.append((spec,) * -(-extent // spec))
                continue
            lengths: list[int] = []
            covered = 0
            for length in spec:
                if covered >= extent:
                    break
                lengths.append(length)
                covered += length
            result.append(tuple(lengths))
        return tuple(result)

    def chunk_boundaries(self, array_shape: Sequence[int]) -> tuple[tuple[int, ...], ...]:
        """Per dimension, the offsets where chunks start, followed by the end of the last.

        >>> RectilinearChunkGrid(((16, 10), (24, 14))).chunk_boundaries((26, 38))
        ((0, 16, 26), (0, 24, 38))
        """
        return tuple(
            tuple(itertools.accumulate(lengths, initial=0))
            for lengths in self.chunk_lengths(array_shape)
        )

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        """Chunks per dimension that hold elements of the array.

        >>> RectilinearChunkGrid(((1, 2, 3), 4)).grid_shape((4, 6))
        (3, 2)
        """
        return tuple(len(lengths) for lengths in self.chunk_lengths(array_shape))

    def check_array_shape(self, array_shape: Sequence[int]) -> None:
        """Raise MetadataError unless every dimension's chunks cover the array.

        >>> RectilinearChunkGrid(((1, 2),)).check_array_shape((4,))
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: chunk_shapes[0] sums to 3, less than the array's 4
        """
        super().check_array_shape(array_shape)
        for axis, (spec, extent) in enumerate(zip(self.chunk_shapes, array_shape, strict=True)):
            if not isinstance(spec, int) and sum(spec) < extent:
                raise MetadataError(
                    f"chunk_shapes[{axis}] sums to {sum(spec)}, less than the array's {extent}"
                )

    def to_json(self) -> dict[str, Any]:
        """The ``chunk_grid`` value, run-length encoding runs of equal lengths.

        >>> RectilinearChunkGrid((5, (10, 10, 10, 20, 30))).to_json()["configuration"]
        {'kind': 'inline', 'chunk_shapes': [5, [[10, 3], 20, 30]]}
        """
        return {
            "name": "rectilinear",
            "configuration": {
                "kind": "inline",
                "chunk_shapes": [
                    spec if isinstance(spec, int) else _compress_axis(spec)
                    for spec in self.chunk_shapes
                ],
            },
        }

    @classmethod
    def from_json(cls, value: Any) -> RectilinearChunkGrid:
        """Parse a ``rectilinear`` chunk grid.

        >>> RectilinearChunkGrid.from_json({"name": "rectilinear",
        ...     "configuration": {"kind": "file", "chunk_shapes": []}})
        Traceback (most recent call last):
        zarrkit.errors.MetadataError: chunk grid 'rectilinear': kind must be 'inline', found 'file'
        """
        ref = parse_extension(value, "chunk grid")
        config = _configuration(ref.name, ref.configuration, {"kind", "chunk_shapes"})
        if config["kind"] != "inline":
            raise MetadataError(
                f"chunk grid 'rectilinear': kind must be 'inline', found {config['kind']!r}"
            )
        shapes = config["chunk_shapes"]
        if not isinstance(shapes, list):
            raise MetadataError(f"chunk_shapes must be a list, found {shapes!r}")
        return cls(tuple(_expand_axis(spec, axis) for axis, spec in enumerate(shapes)))


def register_chunk_grid(name: str, grid_class: type[ChunkGrid], *, replace: bool = True
                        ) -> None:
    """Make ``name`` parseable as a ``chunk_grid``; ``grid_class.from_json`` parses it.

    >>> register_chunk_grid("regular", RegularChunkGrid)
    """
    registry.chunk_grids.register(name, grid_class, replace=replace)


register_chunk_grid("regular", RegularChunkGrid)
register_chunk_grid("rectilinear", RectilinearChunkGrid)


def parse_chunk_grid(value: Any) -> ChunkGrid:
    """Parse a ``chunk_grid`` value with the grid registered under its name.

    ``must_understand: false`` cannot make an unknown chunk grid acceptable (the spec does
    not allow it for chunk grids).

    >>> parse_chunk_grid({"name": "hexagonal"})
    Traceback (most recent call last):
    zarrkit.errors.UnsupportedExtensionError: unsupported chunk grid 'hexagonal'
    """
    key = _plain_key(value)
    if key is not None:
        # Valid while the name maps to the same class (register_chunk_grid may replace it).
        cached = _PARSED.get_for(key, registry.chunk_grids.get(key[0]))
        if cached is not None:
            return cached
    ref = parse_extension(value, "chunk grid")
    grid_class = registry.chunk_grids.get(ref.name)
    if grid_class is None:
        raise UnsupportedExtensionError(f"unsupported chunk grid {ref.name!r}")
    grid: ChunkGrid = grid_class.from_json(value)  # type: ignore[attr-defined]
    if key is not None and type(grid) is RegularChunkGrid:
        _PARSED.put_for(key, grid_class, grid)
    return grid


# Regular grids parsed from their plain JSON form, with the class that parsed them: the
# arrays of a hierarchy mostly share a chunk shape, and a grid is immutable. Only
# successes are kept, so an invalid grid fails every time.
_PARSED: BoundedCache[tuple[str, tuple[int, ...]], ChunkGrid] = BoundedCache(256)


def _plain_key(value: Any) -> tuple[str, tuple[int, ...]] | None:
    """``(name, chunk_shape)`` when ``value`` is exactly ``{"name": str, "configuration":
    {"chunk_shape": [int, ...]}}`` (so the key determines the whole value), else None.

    >>> _plain_key({"name": "regular", "configuration": {"chunk_shape": [2, 3]}})
    ('regular', (2, 3))
    >>> _plain_key({"name": "regular", "configuration": {"chunk_shape": [True]}}) is None
    True
    """
    if type(value) is not dict or len(value) != 2:
        return None
    name = value.get("name")
    configuration = value.get("configuration")
    if type(name) is not str or type(configuration) is not dict or len(configuration) != 1:
        return None
    shape = configuration.get("chunk_shape")
    if type(shape) is not list or not all(type(n) is int for n in shape):
        return None
    return name, tuple(shape)
