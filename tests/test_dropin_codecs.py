"""zarr-python's codec classes in zarrkit (``zarrkit.codecs`` / ``zarrkit.codecs.numcodecs``):
the same signatures, reprs, equality and JSON, accepted on create, and returned by
``Array.compressors``/``filters``/``serializer`` as zarr-python returns them for the same
array. zarr-python 3.4 runs side by side as the oracle.
"""

from __future__ import annotations

import inspect
import json
import warnings
from collections.abc import Callable
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
import zarrkit.codecs as kc
from zarrkit.errors import MetadataError

zarr = pytest.importorskip("zarr")
# zarr-python warns that numcodecs codecs are outside the v3 specification.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
import zarr.codecs as zc  # noqa: E402
from zarr.storage import MemoryStore  # noqa: E402

PUBLIC = ["BloscCodec", "GzipCodec", "ZstdCodec", "BytesCodec", "TransposeCodec",
          "Crc32cCodec", "ShardingCodec", "VLenUTF8Codec", "VLenBytesCodec", "ScaleOffset"]
# zarr-python 3.3 turned its enums into deprecated names: reading a member warns and gives
# the string that the codecs now take and hold.
DEPRECATED_ENUMS = {"BloscCname": ["lz4", "lz4hc", "blosclz", "snappy", "zlib", "zstd"],
                    "BloscShuffle": ["noshuffle", "shuffle", "bitshuffle"],
                    "Endian": ["little", "big"], "ShardingCodecIndexLocation": ["start", "end"]}
NUMCODECS = ["BZ2", "CRC32", "CRC32C", "LZ4", "LZMA", "ZFPY", "Adler32", "AsType", "BitRound",
             "Blosc", "Delta", "FixedScaleOffset", "Fletcher32", "GZip", "JenkinsLookup3",
             "PCodec", "PackBits", "Quantize", "Shuffle", "Zlib", "Zstd"]


def _params(obj: Any) -> list[tuple[str, Any, Any]]:
    """(name, kind, default) of a constructor, defaults by repr (enums differ by module)."""
    return [(p.name, p.kind, repr(p.default)) for p in inspect.signature(obj).parameters.values()]


@pytest.mark.parametrize("name", PUBLIC)
def test_public_names_and_signatures_match(name: str) -> None:
    assert name in kc.__all__
    ours, theirs = getattr(kc, name), getattr(zc, name)
    assert _params(ours) == _params(theirs)


@pytest.mark.parametrize("name", sorted(DEPRECATED_ENUMS))
def test_deprecated_enum_names_give_strings_with_a_warning(name: str) -> None:
    assert name in kc.__all__
    for lib in (zc, kc):
        for member in DEPRECATED_ENUMS[name]:
            with pytest.warns(DeprecationWarning, match=rf"{name}\.{member} is deprecated"):
                assert getattr(getattr(lib, name), member) == member
        with pytest.raises(AttributeError):
            _ = getattr(lib, name).nope


def test_subchunk_write_order_names_the_same_choices() -> None:
    from typing import get_args

    assert get_args(kc.SubchunkWriteOrder) == get_args(zc.SubchunkWriteOrder)
    for order in get_args(zc.SubchunkWriteOrder):
        ours = kc.ShardingCodec(chunk_shape=(2,), subchunk_write_order=order)
        assert repr(ours) == repr(zc.ShardingCodec(chunk_shape=(2,), subchunk_write_order=order))
    for lib in (zc, kc):
        with pytest.raises(ValueError, match="Unrecognized subchunk write order"):
            lib.ShardingCodec(chunk_shape=(2,), subchunk_write_order="spiral")


def test_an_enum_member_is_taken_by_its_value_with_a_warning() -> None:
    import enum

    class Order(str, enum.Enum):  # noqa: UP042 - what code for zarr-python < 3.3 passes
        big = "big"
        start = "start"

    for lib in (zc, kc):
        with pytest.warns(DeprecationWarning, match="Passing an enum to BytesCodec"):
            assert lib.BytesCodec(endian=Order.big).endian == "big"
        with pytest.warns(DeprecationWarning, match="Passing an enum to ShardingCodec"):
            codec = lib.ShardingCodec(chunk_shape=(2,), index_location=Order.start)
        assert codec.index_location == "start"


@pytest.mark.parametrize("name", NUMCODECS)
def test_numcodecs_names_match(name: str) -> None:
    ours, theirs = getattr(kc.numcodecs, name), getattr(zc.numcodecs, name)
    assert ours.codec_name == theirs.codec_name
    assert getattr(kc, name) is ours


def _construct(module: Any, text: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python warns that numcodecs codecs are not v3
        return eval(text, {"c": module})


CONSTRUCTIONS = [
    "c.BloscCodec()",
    "c.BloscCodec(cname='zstd', clevel=3, shuffle='bitshuffle')",
    "c.BloscCodec(typesize=4, cname='lz4', clevel=1, shuffle='noshuffle', blocksize=256)",
    "c.GzipCodec()", "c.GzipCodec(level=9)",
    "c.ZstdCodec()", "c.ZstdCodec(level=-3, checksum=True)",
    "c.BytesCodec()", "c.BytesCodec(endian='big')", "c.BytesCodec(endian=None)",
    "c.TransposeCodec(order=[2, 0, 1])", "c.Crc32cCodec()",
    "c.VLenUTF8Codec()", "c.VLenBytesCodec()",
    "c.ShardingCodec(chunk_shape=(2, 2))",
    "c.ShardingCodec(chunk_shape=(2,), subchunk_write_order='lexicographic')",
    "c.ScaleOffset()", "c.ScaleOffset(offset=1.5)", "c.ScaleOffset(offset=2, scale='0.5')",
    "c.ShardingCodec(chunk_shape=[4], codecs=[c.BytesCodec(endian='big'), c.GzipCodec()],"
    " index_codecs=[{'name': 'bytes'}, {'name': 'crc32c'}], index_location='start')",
    "c.numcodecs.Delta(dtype='<i4')", "c.numcodecs.BitRound(keepbits=3)",
    "c.numcodecs.Zlib(level=1)", "c.numcodecs.FixedScaleOffset(offset=1, scale=2, dtype='<f8')",
    "c.numcodecs.Quantize(digits=2)", "c.numcodecs.PackBits()", "c.numcodecs.CRC32()",
    "c.numcodecs.Adler32()", "c.numcodecs.Fletcher32()", "c.numcodecs.JenkinsLookup3()",
    "c.numcodecs.LZ4()", "c.numcodecs.LZMA()", "c.numcodecs.BZ2(level=3)",
    "c.numcodecs.Shuffle(elementsize=2)", "c.numcodecs.AsType(encode_dtype='<f4')",
]


@pytest.mark.parametrize("text", CONSTRUCTIONS)
def test_repr_dict_and_equality_match_zarr_python(text: str) -> None:
    ours, theirs = _construct(kc, text), _construct(zc, text)
    assert repr(ours) == repr(theirs)
    assert ours.to_dict() == theirs.to_dict()
    assert ours == _construct(kc, text)
    # The JSON form reads back to an equal codec, in both libraries alike.
    back = type(ours).from_dict(ours.to_dict())
    assert repr(back) == repr(type(theirs).from_dict(theirs.to_dict()))


def test_codecs_differ_when_settings_differ() -> None:
    assert kc.GzipCodec(level=1) != kc.GzipCodec(level=2)
    assert kc.VLenUTF8Codec() != kc.VLenBytesCodec()
    assert kc.numcodecs.Zlib(level=1) != kc.numcodecs.Zlib(level=2)
    assert kc.numcodecs.Zlib(level=1).codec_config == {"id": "zlib", "level": 1}


@pytest.mark.parametrize("text", [
    "c.GzipCodec(level=10)", "c.BloscCodec(cname='nope')", "c.BytesCodec(endian='middle')",
    "c.ZstdCodec(checksum=1)", "c.BloscShuffle.from_int(3)",
])
def test_bad_settings_are_refused_like_zarr_python(text: str) -> None:
    with pytest.raises((ValueError, TypeError)):
        _construct(zc, text)
    with pytest.raises(ValueError):  # MetadataError, or ValueError as numpy's enums raise
        _construct(kc, text)


@pytest.mark.parametrize("text", [
    "c.TransposeCodec(order=(0, 0))", "c.ShardingCodec(chunk_shape=(0,))",
])
def test_settings_no_array_can_use_are_refused_on_construction(text: str) -> None:
    # zarr-python refuses these only when an array is created with them.
    with pytest.raises(MetadataError):
        _construct(kc, text)


def _metadata(store: Any, name: str = "a") -> dict[str, Any]:
    raw = store[f"{name}/zarr.json"]
    return json.loads(raw if isinstance(raw, bytes) else raw.to_bytes())  # type: ignore[no-any-return]


Make = Callable[[Any, Any, Any], Any]

# Codec lists as zarr-python takes them; each call runs with zarrkit and zarr-python.
CASES: dict[str, Make] = {
    "blosc-auto": lambda m, c, s: m.create_array(
        s, name="a", shape=(10,), chunks=(5,), dtype="i4", compressors=[c.BloscCodec()]),
    "blosc-set": lambda m, c, s: m.create_array(
        s, name="a", shape=(10,), chunks=(5,), dtype="u1",
        compressors=[c.BloscCodec(cname="lz4", clevel=3, shuffle="noshuffle")]),
    "transpose-gzip-crc": lambda m, c, s: m.create_array(
        s, name="a", shape=(4, 4), chunks=(2, 2), dtype="u1",
        filters=[c.TransposeCodec(order=(1, 0))],
        compressors=[c.GzipCodec(), c.Crc32cCodec()]),
    "big-endian-zstd": lambda m, c, s: m.create_array(
        s, name="a", shape=(4,), chunks=(2,), dtype=">f8", serializer=c.BytesCodec(endian="big"),
        compressors=[c.ZstdCodec(level=3, checksum=True)]),
    "shards": lambda m, c, s: m.create_array(
        s, name="a", shape=(8,), chunks=(2,), shards=(4,), dtype="i2",
        compressors=[c.GzipCodec(level=1)]),
    "sharding-serializer": lambda m, c, s: m.create_array(
        s, name="a", shape=(4,), chunks=(2,), dtype="i2",
        serializer=c.ShardingCodec(chunk_shape=(2,), index_location="start")),
    "numcodecs-delta": lambda m, c, s: m.create_array(
        s, name="a", shape=(10,), chunks=(5,), dtype="i4",
        filters=[c.numcodecs.Delta(dtype="<i4")],
        compressors=[c.numcodecs.BZ2(level=5), c.numcodecs.CRC32()]),
    "numcodecs-bitround": lambda m, c, s: m.create_array(
        s, name="a", shape=(10,), chunks=(5,), dtype="f4",
        filters=[c.numcodecs.BitRound(keepbits=5)], compressors=[c.numcodecs.Zlib(level=1)]),
    "vlen-utf8": lambda m, c, s: m.create_array(
        s, name="a", shape=(10,), chunks=(5,), dtype=str, serializer=c.VLenUTF8Codec(),
        compressors=None),
    "defaults": lambda m, c, s: m.create_array(s, name="a", shape=(6,), chunks=(3,), dtype="f8"),
    "scale-offset": lambda m, c, s: m.create_array(
        s, name="a", shape=(6,), chunks=(3,), dtype="f8",
        filters=[c.ScaleOffset(offset=1.5, scale=4)], compressors=None),
}


def _both(make: Make) -> tuple[Any, Any, dict[str, Any], dict[str, Any]]:
    zstore, kstore = MemoryStore(), {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = make(zarr, zc, zstore)
    ours = make(zk, kc, kstore)
    return ours, theirs, _metadata(kstore), _metadata(zstore._store_dict)


@pytest.mark.parametrize("case", CASES)
def test_create_writes_zarr_pythons_metadata_and_reports_its_codecs(case: str) -> None:
    ours, theirs, our_meta, their_meta = _both(CASES[case])
    assert our_meta["codecs"] == their_meta["codecs"]
    for attribute in ("compressors", "filters", "serializer"):
        assert repr(getattr(ours, attribute)) == repr(getattr(theirs, attribute)), attribute


@pytest.mark.parametrize("case", CASES)
def test_reopened_arrays_report_zarr_pythons_codecs(case: str) -> None:
    zstore: Any = MemoryStore()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        CASES[case](zarr, zc, zstore)
        theirs = zarr.open_array(zstore, path="a", mode="r")
        # zarrkit reads what zarr-python wrote.
        ours = zk.open_array({k: v.to_bytes() for k, v in zstore._store_dict.items()},
                             path="a", mode="r")
    for attribute in ("compressors", "filters", "serializer"):
        assert repr(getattr(ours, attribute)) == repr(getattr(theirs, attribute)), attribute


@pytest.mark.parametrize("case", ["single", "evolved"])
def test_single_codecs_and_dtype_chosen_settings(case: str) -> None:
    make: Make = {
        "single": lambda m, c, s: m.create_array(
            s, name="a", shape=(4,), chunks=(2,), dtype="u2", compressors=c.GzipCodec(level=2)),
        "evolved": lambda m, c, s: m.create_array(
            s, name="a", shape=(10,), chunks=(5,), dtype="f8",
            filters=[c.numcodecs.Quantize(digits=3)],
            compressors=[c.numcodecs.Shuffle(), c.numcodecs.Zlib(level=2)]),
    }[case]
    ours, theirs, our_meta, their_meta = _both(make)
    assert our_meta["codecs"] == their_meta["codecs"]
    assert repr(ours.compressors) == repr(theirs.compressors)


def test_written_data_reads_back_in_zarr_python() -> None:
    store: dict[str, bytes] = {}
    data = np.arange(20, dtype="i4").reshape(4, 5)
    a = zk.create_array(store, name="a", shape=(4, 5), chunks=(2, 3), dtype="i4",
                        filters=[kc.numcodecs.Delta(dtype="<i4")],
                        compressors=[kc.BloscCodec(cname="zstd", clevel=3), kc.Crc32cCodec()])
    a[...] = data
    zstore = MemoryStore()
    from zarr.core.buffer import cpu

    for key, value in store.items():
        zstore._store_dict[key] = cpu.Buffer.from_bytes(value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(zarr.open_array(zstore, path="a")[...], data)


def test_v2_arrays_take_public_codecs_and_report_numcodecs() -> None:
    a = zk.create_array({}, shape=(6,), chunks=(3,), dtype="i4", zarr_format=2,
                        compressors=[kc.BloscCodec(cname="lz4", clevel=1, shuffle="shuffle")],
                        filters=[kc.numcodecs.Delta(dtype="<i4")])
    assert a.compressors == (numcodecs.Blosc(cname="lz4", clevel=1, shuffle=1),)
    assert a.filters == (numcodecs.Delta(dtype="<i4"),)
    assert a.serializer is None


@settings(max_examples=30, deadline=None)
@given(cname=st.sampled_from([m for m in DEPRECATED_ENUMS["BloscCname"] if m != "snappy"]),
       clevel=st.integers(0, 9), shuffle=st.sampled_from([None, "noshuffle", "shuffle",
                                                          "bitshuffle"]),
       dtype=st.sampled_from(["u1", "i2", "f4", "f8"]))
def test_blosc_settings_resolve_as_in_zarr_python(cname: str, clevel: int, shuffle: str | None,
                                                  dtype: str) -> None:
    make: Make = lambda m, c, s: m.create_array(  # noqa: E731
        s, name="a", shape=(8,), chunks=(4,), dtype=dtype,
        compressors=[c.BloscCodec(cname=cname, clevel=clevel, shuffle=shuffle)])
    ours, theirs, our_meta, their_meta = _both(make)
    assert our_meta["codecs"] == their_meta["codecs"]
    assert repr(ours.compressors) == repr(theirs.compressors)


def test_unknown_public_codec_name_is_refused() -> None:
    from zarrkit.codecs.public import public_codec

    with pytest.raises(MetadataError):
        kc.GzipCodec.from_dict({"name": "zstd", "configuration": {}})
    with pytest.raises(zk.errors.UnknownCodecError):
        public_codec({"name": "numcodecs.json2"})
