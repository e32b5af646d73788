"""The ``sharding_indexed`` codec's smaller promises, which the engine and builder tests do
not reach: how a shard index reads its entries (both halves must be 2^64-1 for an inner
chunk to be missing), how out-of-shard lookups fail, that many lookups are one vectorised
step, what counts as "equal to the fill value" for every item size, how the builder's buffer
grows, and the exact errors a bad configuration gets.

Oracles: the sharding spec (``../shared/specs/zarr-v3/codecs-sharding-indexed.rst``), numpy
(bit-for-bit comparisons of inner chunks with the fill value) and zarr-python, whose shards
must be byte for byte those of ``ShardingCodec.encode``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

from zarrkit.codecs.v3.sharding import EMPTY, ShardBuilder, ShardIndex, ShardingCodec
from zarrkit.codecs.v3.spec import ChunkSpec
from zarrkit.errors import ChunkDecodeError, MetadataError

LE = {"name": "bytes", "configuration": {"endian": "little"}}


@contextmanager
def raises_exactly(error: type[BaseException], message: str) -> Iterator[None]:
    """``pytest.raises`` that also wants the exact class (not a subclass) and the whole
    message (``message`` is a regular expression matched from start to end)."""
    with pytest.raises(error) as excinfo:
        yield
    assert excinfo.type is error
    assert re.fullmatch(message, str(excinfo.value)), str(excinfo.value)


def _index(entries: list[Any], what: str = "c/0") -> ShardIndex:
    return ShardIndex(np.array(entries, dtype=np.uint64), what=what)


def _random_entries(shape: tuple[int, ...], seed: int) -> np.ndarray[Any, Any]:
    """Entries with stored, empty and malformed (half-empty) inner chunks."""
    rng = np.random.default_rng(seed)
    entries = rng.integers(0, 1000, (*shape, 2)).astype(np.uint64)
    kind = rng.integers(0, 4, shape)
    entries[kind == 1] = EMPTY
    entries[..., 0][kind == 2] = EMPTY  # offset only
    entries[..., 1][kind == 3] = EMPTY  # nbytes only
    return entries


def _expected_range(entries: np.ndarray[Any, Any], coords: tuple[int, ...]
                    ) -> tuple[int, int] | None:
    """The spec's reading of one entry: missing only when offset and nbytes are both
    2^64-1."""
    offset, nbytes = (int(v) for v in entries[coords])
    return None if offset == nbytes == EMPTY else (offset, nbytes)


# --- ShardIndex: construction and the empty mask ------------------------------------------


@pytest.mark.parametrize("shape", [(), (4,), (3, 3), (2, 2, 3)])
def test_a_shard_index_must_end_in_an_axis_of_two(shape: tuple[int, ...]) -> None:
    # The index has the chunks-per-shard shape with an appended dimension of size 2.
    with raises_exactly(ValueError,
                        re.escape(f"a shard index has shape (..., 2), found {shape}")):
        ShardIndex(np.zeros(shape, np.uint64), what="c/0")


@pytest.mark.parametrize("dtype", ["<i8", ">u8", "<u4", ">i4"])
def test_shard_index_entries_are_uint64_whatever_integer_type_they_come_in(dtype: str
                                                                         ) -> None:
    # Entries are the spec's 64-bit unsigned integers, whatever array they were read into.
    given = np.array([[[0, 4], [4, 9]], [[13, 1], [14, 100]]], dtype=dtype)
    index = ShardIndex(given, what="c/0")
    assert index.entries.dtype == np.dtype(np.uint64)
    np.testing.assert_array_equal(index.entries, given.astype(np.uint64))
    assert index.byte_range((1, 1)) == (14, 100)


@pytest.mark.parametrize(("entry", "empty"), [
    ((EMPTY, EMPTY), True),
    ((EMPTY, 5), False),  # only one half marks it: malformed, not missing
    ((5, EMPTY), False),
    ((0, 0), False),
    ((7, 3), False),
])
def test_only_an_entry_empty_in_both_halves_is_a_missing_inner_chunk(entry: tuple[int, int],
                                                                     empty: bool) -> None:
    # Spec: "Empty inner chunks are denoted by setting both offset and nbytes to 2^64 - 1".
    index = _index([[0, 4], list(entry)])
    assert index.empty_mask().tolist() == [False, empty]
    assert index.nonempty() == ([(0,)] if empty else [(0,), (1,)])
    assert index.byte_range((1,)) == (None if empty else entry)
    assert _index([list(entry)]).is_all_empty() is empty


# --- ShardIndex.byte_range and byte_ranges -----------------------------------------------


@pytest.mark.parametrize("coords", [
    (0,), (0, 0, 0), (), (2, 0), (0, 3), (-1, 0), (0, -1), (5, 5),
])
def test_a_lookup_outside_the_shard_names_the_coordinates(coords: tuple[int, ...]) -> None:
    # Coordinates of the wrong length or outside [0, chunks per shard) are refused, never
    # wrapped around (numpy would read (-1, 0) as the last row) nor half-checked.
    index = ShardIndex(_random_entries((2, 3), seed=1), what="c/0")
    message = re.escape(f"inner chunk {coords} is outside a shard of (2, 3) chunks")
    with raises_exactly(IndexError, message):
        index.byte_range(coords)
    # The same error from a many-chunk lookup. (Its coordinates are all of one length:
    # with mixed lengths numpy's own ValueError comes first, an inconsistency left alone.)
    many = [(0, 0)] * 20 + [coords] + [(1, 2)] * 3 if len(coords) == 2 else [coords] * 20
    with raises_exactly(IndexError, message):
        index.byte_ranges(many)


@pytest.mark.parametrize("count", [1, 15, 16, 17, 200])
@pytest.mark.parametrize("shape", [(4, 4, 4), (7,), (1, 1), (3, 5)])
def test_many_lookups_agree_with_one_at_a_time(count: int, shape: tuple[int, ...]) -> None:
    # byte_ranges is byte_range of each inner chunk, half-empty entries included (they are
    # stored chunks with a broken index, not missing ones), corners (index 0 and n - 1) too.
    entries = _random_entries(shape, seed=count)
    index = ShardIndex(entries, what="c/0")
    rng = np.random.default_rng(count)
    coords = [tuple(int(v) for v in rng.integers(0, shape)) for _ in range(count)]
    coords[0] = tuple(0 for _ in shape)
    coords[-1] = tuple(n - 1 for n in shape)
    expected = [_expected_range(entries, c) for c in coords]
    assert index.byte_ranges(coords) == expected
    assert [index.byte_range(c) for c in coords] == expected


def test_many_lookups_take_coordinates_of_any_integer_type() -> None:
    # Like byte_range (which takes int() of each coordinate), numpy integers of mixed kinds
    # are coordinates too; numpy would turn a uint64/int64 mix into float64 indices.
    entries = _random_entries((4, 4), seed=5)
    index = ShardIndex(entries, what="c/0")
    coords = [(np.uint64(k % 4), np.int64(k // 4)) for k in range(16)]
    expected = [_expected_range(entries, (k % 4, k // 4)) for k in range(16)]
    assert index.byte_ranges(coords) == expected


def test_many_lookups_with_the_wrong_number_of_coordinates_are_refused() -> None:
    # Twenty lookups of 2 coordinates in a 3-dimensional shard: an IndexError naming the
    # first, not a partial index into the entries.
    index = ShardIndex(_random_entries((4, 4, 4), seed=2), what="c/0")
    with raises_exactly(IndexError,
                        re.escape("inner chunk (0, 1) is outside a shard of (4, 4, 4) chunks")):
        index.byte_ranges([(0, 1)] * 20)


def test_a_zero_dimensional_shard_index_answers_many_lookups() -> None:
    # A 0-d array's shard has one inner chunk, at coordinates (); its index has shape (2,).
    index = _index([5, 3])
    assert index.chunks_per_shard == ()
    assert index.byte_ranges([()] * 20) == [(5, 3)] * 20
    assert _index([EMPTY, EMPTY]).byte_ranges([()] * 20) == [None] * 20


@pytest.mark.parametrize("count", [16, 17, 64])
def test_many_lookups_are_one_vectorised_step(monkeypatch: pytest.MonkeyPatch, count: int
                                              ) -> None:
    # The documented point of byte_ranges: one numpy lookup instead of a Python one per
    # chunk, once there are 16 or more (coordinates on the shard's edges, 0 included).
    entries = _random_entries((4, 4), seed=count)
    index = ShardIndex(entries, what="c/0")
    calls: list[Any] = []
    original = ShardIndex.byte_range

    def counting(self: ShardIndex, inner_coords: Any) -> tuple[int, int] | None:
        calls.append(inner_coords)
        return original(self, inner_coords)

    monkeypatch.setattr(ShardIndex, "byte_range", counting)
    coords = [(k % 4, (k // 4) % 4) for k in range(count)]
    assert index.byte_ranges(coords) == [_expected_range(entries, c) for c in coords]
    assert calls == []


# --- ShardIndex.check_bounds ---------------------------------------------------------------


def test_a_half_empty_entry_is_reported_with_its_coordinates() -> None:
    entries = np.zeros((2, 3, 2), np.uint64)
    entries[1, 2] = (EMPTY, 4)
    entries[1, 0] = (3, EMPTY)  # the first in C order is named
    with raises_exactly(ChunkDecodeError, re.escape(
            "c/1/2: shard index entry of inner chunk (1, 0) is malformed (only one of "
            "offset and nbytes marks it empty)")):
        ShardIndex(entries, what="c/1/2").check_bounds(100)


@pytest.mark.parametrize(("entry", "inside"), [
    ((10, 0), True),  # an empty byte range right at the end lies inside the shard
    ((9, 1), True),
    ((0, 10), True),
    ((11, 0), False),
    ((10, 1), False),
    ((9, 2), False),
    ((0, 11), False),
    ((EMPTY - 1, 2), False),  # offset + nbytes overflows 64 bits
])
def test_entries_must_lie_inside_the_shard(entry: tuple[int, int], inside: bool) -> None:
    index = _index([[0, 1], list(entry), [EMPTY, EMPTY]], what="c/4")
    if inside:
        index.check_bounds(10)
        return
    offset, nbytes = entry
    with raises_exactly(ChunkDecodeError, re.escape(
            f"c/4: inner chunk (1,) at bytes [{offset}, {offset + nbytes}) lies past the "
            f"end of the 10-byte shard")):
        index.check_bounds(10)


def test_a_zero_length_last_inner_chunk_of_an_index_first_shard_is_in_bounds() -> None:
    # With the index at the start, an inner chunk of 0 bytes added last starts exactly at
    # the end of the shard; the assembled shard's index must pass its own bounds check.
    codec = ShardingCodec({"chunk_shape": [1], "codecs": [LE], "index_location": "start"},
                          ChunkSpec((2,), np.dtype("u1"), 0))
    shard = codec.assemble({(0,): b"\x05\x06", (1,): b""}, (2,))
    assert shard is not None
    index = codec.decode_index(shard, (2,), what="c/0")
    assert index.byte_range((1,)) == (len(shard), 0)
    index.check_bounds(len(shard))


# --- what equals the fill value ------------------------------------------------------------


def _bitwise_empty(shard: np.ndarray[Any, Any], fill: Any, codec: ShardingCodec
                   ) -> np.ndarray[Any, Any]:
    """Oracle: an inner chunk is empty when its bytes are those of the fill value repeated."""
    cps = codec.chunks_per_shard(shard.shape)
    out = np.zeros(cps, dtype=bool)
    for coords, region in codec.inner_regions(shard.shape):
        part = np.ascontiguousarray(shard[region])
        out[coords] = part.tobytes() == np.full(part.shape, fill, part.dtype).tobytes()
    return out


def _fill_cases() -> list[Any]:
    """(dtype, fill, shard): shards of 4 inner chunks of 2 elements; inner chunk 0 is all
    fill, 1 differs from the fill in one byte of one element, 2 is all fill, 3 is other."""
    cases = []
    for dtype, fill, near, other in [
        ("<c16", complex(np.nan, 0.0), complex(np.nan, -0.0), 1 + 1j),  # 16-byte items
        ("<c16", 1 + 2j, np.nextafter(1, 2) + 2j, 0j),
        ("V3", b"abc", b"abd", b"\0\0\0"),  # raw bits r24: 3-byte items
        ("U3", "ab", "ac", ""),  # 12-byte items
        ("S3", b"ab", b"ab\x01", b""),
        ("<u1", 7, 6, 0),
        ("<f4", 1.5, np.nextafter(np.float32(1.5), np.float32(2)), 0.0),
        ("<f8", np.nan, -np.nan, 0.0),
        ("<i2", -2, 254, 0),
        ("<f4", 0.0, -0.0, 1.0),  # -0.0 is not the fill 0.0
    ]:
        shard = np.array([fill, fill, fill, near, fill, fill, other, other], dtype=dtype)
        cases.append(pytest.param(dtype, fill, shard, id=f"{dtype}-{fill!r}"))
    return cases


@pytest.mark.parametrize("byteorder", ["<", ">"])
@pytest.mark.parametrize(("dtype", "fill", "shard"), _fill_cases())
def test_inner_chunks_equal_to_the_fill_value_bit_for_bit_are_not_stored(
        dtype: str, fill: Any, shard: np.ndarray[Any, Any], byteorder: str) -> None:
    # An inner chunk is empty when every element is the fill value bit for bit (NaN fills
    # match NaN, -0.0 does not match 0.0), for every item size, in either byte order of
    # the array handed to the codec; empty inner chunks are left out of the index.
    codec = ShardingCodec({"chunk_shape": [2], "codecs": [LE]},
                          ChunkSpec((8,), np.dtype(dtype), fill))
    given = shard.astype(np.dtype(dtype).newbyteorder(byteorder))
    expected = _bitwise_empty(shard, codec.spec.fill_value, codec)
    assert expected.tolist() == [True, False, True, False]
    np.testing.assert_array_equal(codec.empty_inner_chunks(given), expected)
    data = codec.encode(given)
    assert data is not None
    index = codec.decode_index(data, (8,), what="c/0")
    np.testing.assert_array_equal(index.empty_mask(), expected)
    decoded = codec.decode(data, what="c/0")
    assert decoded.tobytes() == shard.tobytes()


def test_a_two_dimensional_shard_of_wide_items_finds_its_fill_chunks() -> None:
    # 16-byte items over a 4 x 6 shard of 2 x 3 inner chunks: the mask has the inner-chunk
    # grid's shape and marks exactly the all-fill ones.
    fill = complex(1.0, -1.0)
    shard = np.full((4, 6), fill, dtype="<c16")
    shard[0, 4] = 0j  # inner chunk (0, 1)
    shard[3, 0] = complex(1.0, 1.0)  # inner chunk (1, 0)
    codec = ShardingCodec({"chunk_shape": [2, 3], "codecs": [LE]},
                          ChunkSpec((4, 6), np.dtype("<c16"), fill))
    assert codec.empty_inner_chunks(shard).tolist() == [[True, False], [False, True]]


def test_complex_shards_are_those_of_zarr_python(tmp_path: Path) -> None:
    # zarr-python leaves out the inner chunks equal to the fill value too and writes the
    # rest in Morton order with a crc32c-checked index at the end: the same bytes.
    fill = 1 + 2j
    data = np.arange(64, dtype="<c16").reshape(8, 8) * (1 - 1j)
    data[0:2, 2:4] = fill
    data[4:8, 4:6] = fill
    array = zarr.create_array(store=str(tmp_path), shape=(8, 8), chunks=(2, 2), shards=(8, 8),
                              dtype="complex128", fill_value=fill, compressors=None,
                              serializer=zarr.codecs.BytesCodec(endian="little"))
    array[...] = data
    expected = (tmp_path / "c" / "0" / "0").read_bytes()
    codec = ShardingCodec({"chunk_shape": [2, 2], "codecs": [LE]},
                          ChunkSpec((8, 8), np.dtype("<c16"), fill))
    assert codec.encode(data) == expected
    index = codec.decode_index(expected, (8, 8), what="c/0/0")
    assert sorted(set(np.ndindex(4, 4)) - set(index.nonempty())) == [(0, 1), (2, 2), (3, 2)]


# --- ShardBuilder ---------------------------------------------------------------------------


@pytest.mark.parametrize("index_location", ["start", "end"])
def test_the_builder_buffer_at_least_doubles_when_it_grows(index_location: str) -> None:
    # A buffer that turns out too small grows geometrically (to at least twice its size),
    # so that many small additions past a wrong capacity are not a copy each.
    codec = ShardingCodec({"chunk_shape": [1], "codecs": [LE],
                           "index_location": index_location},
                          ChunkSpec((4,), np.dtype("u1"), 0))
    index_nbytes = codec.index_nbytes((4,))
    builder = ShardBuilder(codec, (4,), capacity=0)
    builder.add((0,), b"\x01")
    shard = builder.finish()
    assert shard is not None
    assert bytes(shard) == codec.assemble({(0,): b"\x01"}, (4,))
    buffer = builder.detach()
    assert buffer is not None
    assert len(buffer) >= 2 * index_nbytes


# --- ShardingCodec configuration ------------------------------------------------------------


@pytest.mark.parametrize("chunk_shape", [
    [0, 2], [-2, 2], [2, -2], [True, 2], [2, False], [2], [2, 2, 2], [2.0, 2], "22", None,
])
def test_chunk_shape_must_be_one_positive_integer_per_dimension(chunk_shape: Any) -> None:
    # Spec: "The length of the chunk_shape array must match the number of dimensions of
    # the shard shape"; an inner chunk of size 0 or less (or a bool) is no chunk.
    with raises_exactly(MetadataError, re.escape(
            "codec 'sharding_indexed': 'chunk_shape' must be 2 positive integers, "
            f"found {chunk_shape!r}")):
        ShardingCodec({"chunk_shape": chunk_shape, "codecs": [LE]},
                      ChunkSpec((4, 4), np.dtype("u1"), 0))


@pytest.mark.parametrize(("configuration", "message"), [
    ({"chunk_shape": [2]}, "codec 'sharding_indexed': 'codecs' is required"),
    ({"chunk_shape": [2], "codecs": [LE], "index_codecs": [LE, {"name": "gzip"}]},
     "codec 'sharding_indexed': 'index_codecs' must encode to a fixed size (no compression)"),
    ({"chunk_shape": [2], "codecs": [LE], "index_location": "middle"},
     "codec 'sharding_indexed': 'index_location' must be one of ['start', 'end'], "
     "found 'middle'"),
    ({"chunk_shape": [2], "codecs": [LE], "index_codec": [LE]},
     "codec 'sharding_indexed': unknown configuration member(s) ['index_codec']"),
])
def test_bad_configurations_get_errors_naming_the_codec(configuration: dict[str, Any],
                                                         message: str) -> None:
    with raises_exactly(MetadataError, re.escape(message)):
        ShardingCodec(configuration, ChunkSpec((4,), np.dtype("u1"), 0))


def test_the_index_pipeline_is_built_once_per_shard_shape() -> None:
    # Partial reads ask for the index pipeline of every shard they touch: it is built once
    # per shard shape and reused, and each shape gets the size the spec gives it
    # (16 bytes per inner chunk + 4 for crc32c).
    codec = ShardingCodec({"chunk_shape": [2, 2], "codecs": [LE]},
                          ChunkSpec((8, 8), np.dtype("u1"), 0))
    first = codec.index_pipeline((8, 8))
    assert codec.index_pipeline((8, 8)) is first
    assert codec.index_pipeline([8, 8]) is first
    small = codec.index_pipeline((4, 2))
    assert small is not first
    assert codec.index_pipeline((4, 2)) is small
    assert (first.encoded_size, small.encoded_size) == (16 * 16 + 4, 16 * 2 + 4)


def test_byte_ranges_of_coordinates_with_different_lengths_name_the_bad_ones() -> None:
    # Many lookups take the vectorised path; coordinates of mixed lengths must still get
    # the IndexError that names them, as with few lookups.
    index = ShardIndex(np.zeros((4, 4, 2), np.uint64), what="c/0")
    for count in (3, 16):
        with pytest.raises(IndexError, match=r"inner chunk \(0,\) is outside"):
            index.byte_ranges([(0, 0)] * count + [(0,)])


@pytest.mark.parametrize("capacity", [None, 64])
def test_shard_builder_finish_twice_returns_the_same_shard(capacity: int | None) -> None:
    codec = ShardingCodec({"chunk_shape": [1], "codecs": ["bytes"]},
                          ChunkSpec((2,), np.dtype("u1")))
    builder = ShardBuilder(codec, (2,)) if capacity is None else \
        ShardBuilder(codec, (2,), capacity=capacity)
    builder.add((0,), b"\x05")
    builder.add((1,), b"\x07")
    first = bytes(builder.finish())  # type: ignore[arg-type]
    assert bytes(builder.finish()) == first  # type: ignore[arg-type]
    decoded = codec.decode(first, what="c/0")
    assert decoded.tolist() == [5, 7]
