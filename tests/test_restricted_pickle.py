"""The restricted unpickler (zarrkit.codecs.restricted_pickle): the only unpickling zarrkit
does, for the v2 ``pickle`` object codec that hdmf-zarr uses by default.

Every hostile pickle must be refused with UnsafePickleError *before* anything it names is
called (checked with side-effect canaries: a file a shell command would create, a list a
Python function would append to), while numcodecs' and hdmf-zarr's pickles of object and
structured arrays read back exactly.
"""

from __future__ import annotations

import base64
import builtins
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_fixtures import fixtures_dir

import zarrkit as zk
from zarrkit.codecs.restricted_pickle import (
    ALLOWED_GLOBALS,
    MAX_ITEM_DEPTH,
    RestrictedPickle,
    ZarrReferenceData,
    load_array,
    restricted_loads,
)
from zarrkit.errors import (
    ChunkDecodeError,
    MetadataError,
    UnknownCodecError,
    UnsafePickleError,
    UnsupportedOperationError,
)

COMPOUND = np.dtype([("idx_start", "<i4"), ("count", "<i4"), ("timeseries", "O")])
OBJECT = np.dtype(object)

# --- canaries ---------------------------------------------------------------------------------

CALLS: list[Any] = []


def canary(*args: Any) -> None:
    """A global a hostile pickle names: any call is recorded."""
    CALLS.append(args)


@pytest.fixture
def no_calls() -> Iterator[None]:
    CALLS.clear()
    yield
    assert CALLS == [], "a hostile pickle ran code"


class Reduce:
    """An object whose pickle calls ``function(*args)`` (then, with ``state``, BUILDs)."""

    def __init__(self, function: Any, *args: Any, state: Any = None) -> None:
        self.function, self.args, self.state = function, args, state

    def __reduce__(self) -> Any:
        if self.state is None:
            return self.function, self.args
        return self.function, self.args, self.state


def _reconstruct() -> Any:
    try:
        from numpy._core.multiarray import _reconstruct as function
    except ImportError:  # numpy 1.x
        from numpy.core.multiarray import _reconstruct as function  # type: ignore[no-redef]
    return function


def v2_store(chunks: dict[str, bytes], *, dtype: Any = "|O", shape: Any = (2,),
             chunk_shape: Any = None, order: str = "C", fill_value: Any = 0,
             protocol: int = 5) -> dict[str, bytes]:
    """A v2 array stored as numcodecs' Pickle object codec writes it (no compressor)."""
    zarray = {"zarr_format": 2, "shape": list(shape), "chunks": list(chunk_shape or shape),
              "dtype": dtype, "compressor": None, "fill_value": fill_value, "order": order,
              "filters": [{"id": "pickle", "protocol": protocol}]}
    return {".zarray": json.dumps(zarray).encode(), **chunks}


def read_chunk(data: bytes, *, dtype: Any = "|O", shape: Any = (2,)) -> Any:
    return zk.open_array(v2_store({"0": data}, dtype=dtype, shape=shape), mode="r")[...]


# --- 1. hostile pickles ---------------------------------------------------------------------

def _shell_payloads(canary_file: Path) -> dict[str, bytes]:
    command = f"touch {canary_file}"
    return {
        "os.system (protocol 0 text)":
            f"cos\nsystem\n(S'{command}'\ntR.".encode(),
        "posix.system via __reduce__": pickle.dumps(Reduce(os.system, command), protocol=5),
        "subprocess.check_call": pickle.dumps(
            Reduce(subprocess.check_call, ["touch", str(canary_file)]), protocol=4),
        "subprocess.Popen": pickle.dumps(Reduce(subprocess.Popen, ["touch", str(canary_file)])),
        "builtins.eval": pickle.dumps(
            Reduce(builtins.eval, f"__import__('os').system({command!r})"), protocol=2),
        "builtins.exec": pickle.dumps(
            Reduce(builtins.exec, f"import os; os.system({command!r})"), protocol=3),
        "os.system inside an object array": pickle.dumps(
            np.array([1, Reduce(os.system, command)], dtype=object), protocol=5),
        "os.system inside a ZarrReference-like dict": pickle.dumps(
            np.array([{"path": Reduce(os.system, command)}, 1], dtype=object), protocol=5),
    }


def test_shell_payloads_are_refused_and_never_run(tmp_path: Path) -> None:
    canary_file = tmp_path / "canary"
    for label, data in _shell_payloads(canary_file).items():
        for reader in (lambda d: load_array(d, OBJECT, 2, what="c/0"), read_chunk):
            with pytest.raises(UnsafePickleError, match=r"names \w+\.\w+, which zarrkit "
                                                        "never unpickles"):
                reader(data)
            assert not canary_file.exists(), f"{label} ran"
        # Where no array is expected, the array of the last payloads is refused first.
        with pytest.raises(UnsafePickleError):
            restricted_loads(data)
        assert not canary_file.exists(), f"{label} ran"


def test_the_refused_global_is_named(no_calls: None) -> None:
    data = pickle.dumps(Reduce(canary, "x"))
    with pytest.raises(UnsafePickleError, match=rf"names {__name__}\.canary, which"):
        restricted_loads(data)
    with pytest.raises(UnsafePickleError, match="names builtins.eval"):
        restricted_loads(b"cbuiltins\neval\n(S'1'\ntR.")


@pytest.mark.parametrize("function", [
    np.load, np.frombuffer, np.fromfile, np.empty, np.ones, getattr, setattr, __import__,
    open, os.popen, pickle.loads, canary,
], ids=lambda f: getattr(f, "__qualname__", repr(f)))
def test_globals_outside_the_allowlist_are_refused(function: Any, no_calls: None) -> None:
    with pytest.raises(UnsafePickleError, match="zarrkit never unpickles"):
        restricted_loads(pickle.dumps(Reduce(function, "x"), protocol=5))


@pytest.mark.parametrize("module, name", [
    ("numpy._core.numeric", "_frombuffer"),   # protocol 5's numeric arrays: not needed
    ("numpy._core.multiarray", "scalar"),     # numpy scalars: not needed for these arrays
    ("numpy.core.multiarray", "scalar"),
    ("numpy", "load"),
    ("numpy", "frombuffer"),
    ("numpy.lib.npyio", "load"),
    ("copyreg", "_reconstructor"),
    ("builtins", "getattr"),
    ("hdmf_zarr.utils", "ZarrIO"),
    ("hdmf_zarr", "ZarrReference"),
    ("numpy", "ndarray.__new__"),
])
def test_every_name_outside_the_allowlist_is_refused(module: str, name: str) -> None:
    data = f"c{module}\n{name}\n.".encode()
    with pytest.raises(UnsafePickleError, match=f"names {module}.{name}, which"):
        restricted_loads(data)


def test_the_allowlist_is_exactly_array_reconstruction_and_zarr_reference() -> None:
    assert set(ALLOWED_GLOBALS) == {
        ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"), ("numpy", "dtype"), ("hdmf_zarr.utils", "ZarrReference"),
        ("_codecs", "encode"),
    }


def test_allowed_names_are_refused_when_misused(tmp_path: Path) -> None:
    reconstruct = _reconstruct()
    huge = (1 << 40,)
    cases = {
        # Calling ndarray (or NEWOBJ on it) would allocate any shape.
        "ndarray called": pickle.dumps(Reduce(np.ndarray, huge)),
        "_reconstruct with a huge shape": pickle.dumps(Reduce(reconstruct, np.ndarray, huge,
                                                              b"b")),
        "_reconstruct of another type": pickle.dumps(Reduce(reconstruct, np.matrix, (0,),
                                                            b"b")),
        "dtype of an unknown spec": pickle.dumps(Reduce(np.dtype, "i3", False, True)),
        "dtype of a datetime": pickle.dumps(np.array([1], dtype="M8[s]").astype(object)[0:0]
                                            .astype("M8[s]"), protocol=4),
        "_codecs.encode to another encoding": b"c_codecs\nencode\n(Vabc\nVrot13\ntR.",
        "_codecs.encode of bytes": b"c_codecs\nencode\n(C\x03abcVlatin1\ntR.",
    }
    for label, data in cases.items():
        with pytest.raises(UnsafePickleError):
            load_array(data, OBJECT, 2, what=label)
    with pytest.raises(UnsafePickleError, match="numpy.ndarray is only unpickled as"):
        load_array(cases["ndarray called"], OBJECT, 2, what="c/0")


def test_an_object_list_shorter_than_the_shape_is_refused_without_crashing() -> None:
    # numpy's own ndarray.__setstate__ crashes the interpreter on this state (numpy 2.4);
    # the restricted unpickler never calls it. Run in a subprocess so that a regression
    # shows as a failure, not as a dead test session.
    script = textwrap.dedent("""
        import pickle, numpy as np
        from zarrkit.codecs.restricted_pickle import load_array
        from zarrkit.errors import UnsafePickleError
        try:
            from numpy._core.multiarray import _reconstruct
        except ImportError:
            from numpy.core.multiarray import _reconstruct
        class Reduce:
            def __reduce__(self):
                return (_reconstruct, (np.ndarray, (0,), b"b"),
                        (1, (10000,), np.dtype("O"), False, [1, 2]))
        data = pickle.dumps(Reduce())
        try:
            load_array(data, np.dtype(object), 10000, what="c/0")
        except UnsafePickleError as e:
            print("refused:", e)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "refused: c/0: the items of a pickled object array of shape (10000,)" in result.stdout


def test_array_states_are_checked_before_anything_is_allocated() -> None:
    reconstruct = _reconstruct()

    def state(shape: Any, dtype: Any, data: Any, fortran: Any = False) -> bytes:
        return pickle.dumps(Reduce(reconstruct, np.ndarray, (0,), b"b",
                                   state=(1, shape, dtype, fortran, data)), protocol=5)

    i8 = np.dtype("<i8")
    unsafe = {
        "object data that is bytes": (state((2,), OBJECT, b"\x00" * 16), OBJECT),
        "numeric data that is a list": (state((2,), i8, [1, 2]), i8),
        "numeric data too short": (state((2,), i8, b"\x00" * 8), i8),
        "a negative dimension": (state((-2,), OBJECT, [1, 2]), OBJECT),
        "a float dimension": (state((2.0,), OBJECT, [1, 2]), OBJECT),
        "fortran that is not a bool": (state((2,), OBJECT, [1, 2], fortran=1), OBJECT),
        "a structured element that is not a tuple": (state((2,), COMPOUND, [1, 2]), COMPOUND),
        "a structured element of the wrong length": (
            state((2,), COMPOUND, [(1, 2), (1, 2)]), COMPOUND),
    }
    for label, (data, dtype) in unsafe.items():
        with pytest.raises(UnsafePickleError):
            load_array(data, dtype, 2, what=label)
    assert load_array(state((2,), i8, b"\x01" + b"\x00" * 15), i8, 2, what="ok").tolist() == [
        1, 0]
    mismatched = {
        "more elements than the chunk": state((3,), OBJECT, [1, 2, 3]),
        "fewer elements than the chunk": state((1,), OBJECT, [1]),
        "another dtype than the array's": state((2,), np.dtype("<i8"), b"\x00" * 16),
    }
    for label, data in mismatched.items():
        with pytest.raises(ChunkDecodeError):
            load_array(data, OBJECT, 2, what=label)
    with pytest.raises(ChunkDecodeError, match="has 1099511627776 elements, expected 2"):
        load_array(state((1 << 40,), OBJECT, []), OBJECT, 2, what="huge")


def test_overlapping_object_fields_are_refused() -> None:
    # numpy's public dtype constructor, through which every pickled dtype is rebuilt,
    # refuses object fields that overlap (a pointer read from other bytes).
    dtype = np.dtype([("a", "O"), ("b", "O")])
    data = pickle.dumps(np.array([(1, 2)], dtype=dtype), protocol=5)
    hostile = data.replace(b"K\x08\x86", b"K\x00\x86")  # field b's offset 8 -> 0
    assert hostile != data
    with pytest.raises(UnsafePickleError, match="overlapping object fields"):
        load_array(hostile, dtype, 1, what="c/0")


def test_leaked_stand_ins_and_nested_arrays_are_refused() -> None:
    # An allowed global used as an item would hand the caller zarrkit's stand-in.
    stand_in = pickle.dumps(np.array([np.dtype("i4"), 1], dtype=object), protocol=5)
    with pytest.raises(UnsafePickleError, match="is a _DtypeSpec"):
        load_array(stand_in, OBJECT, 2, what="c/0")
    nested = pickle.dumps(np.array([np.zeros(2, dtype=object), 1], dtype=object), protocol=4)
    with pytest.raises(UnsafePickleError, match="more than one numpy array"):
        load_array(nested, OBJECT, 2, what="c/0")
    with pytest.raises(UnsafePickleError, match="a numpy array where none is expected"):
        restricted_loads(pickle.dumps(np.array([1], dtype=object)))


def test_deep_nesting_is_refused() -> None:
    deep: list[Any] = []
    for _ in range(MAX_ITEM_DEPTH + 5):
        deep = [deep]
    with pytest.raises(UnsafePickleError, match="nest more than"):
        load_array(pickle.dumps(np.array([deep, 1], dtype=object)), OBJECT, 2, what="c/0")
    very_deep = b"\x80\x05" + b"]" * 200_000 + b"a" * 199_999 + b"."
    with pytest.raises((UnsafePickleError, ChunkDecodeError)):
        restricted_loads(very_deep)


def test_malformed_pickles_are_chunk_decode_errors() -> None:
    good = pickle.dumps(np.array(["a", "b"], dtype=object), protocol=5)
    for data in (b"", good[:-1], good[: len(good) // 2], b"\x80\x05\xff.", b"not a pickle"):
        with pytest.raises(ChunkDecodeError):
            load_array(data, OBJECT, 2, what="c/0")
    with pytest.raises(ChunkDecodeError, match="holds a str, not an array"):
        load_array(pickle.dumps("abc"), OBJECT, 2, what="c/0")
    with pytest.raises(ChunkDecodeError):  # persistent ids are not resolved
        restricted_loads(b"\x80\x05K\x01\x94Q.")


def _seed_pickles() -> list[bytes]:
    rows = np.array([(0, 1, {"source": ".", "path": "/a", "object_id": None})], dtype=COMPOUND)
    values = np.array(["a", 1, {"k": [None, 2.5]}, b"x"], dtype=object)
    return [pickle.dumps(a, protocol=p) for a in (rows, values) for p in (2, 4, 5)]


SEEDS = _seed_pickles()


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(range(len(SEEDS))), st.lists(
    st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=4),
    st.integers(0, 10_000))
def test_mutated_pickles_only_raise_zarrkit_errors(seed: int, flips: list[tuple[int, int]],
                                                   cut: int) -> None:
    data = bytearray(SEEDS[seed])
    for position, value in flips:
        data[position % len(data)] = value
    data = data[:max(1, len(data) - cut % 8)] if cut % 3 == 0 else data
    for dtype, count in ((COMPOUND, 1), (OBJECT, 4)):
        try:
            result = load_array(bytes(data), dtype, count, what="c/0")
        except (UnsafePickleError, ChunkDecodeError):
            continue
        assert result.dtype == dtype and result.size == count
    assert CALLS == []


def test_dicts_and_sets_cannot_be_flooded() -> None:
    # Integers equal modulo 2**61 - 1 share a hash: a dict of n such keys takes n**2 steps.
    colliding = {k * ((1 << 61) - 1): 0 for k in range(1, 50)}
    for data in (pickle.dumps(np.array([colliding, 1], dtype=object), protocol=p)
                 for p in (0, 2, 5)):
        with pytest.raises(UnsafePickleError, match="a dict key or set member"):
            load_array(data, OBJECT, 2, what="c/0")
    with pytest.raises(UnsafePickleError, match="a dict key or set member"):
        load_array(pickle.dumps(np.array([frozenset({1.5}), {(1, 2)}], dtype=object),
                                protocol=5), OBJECT, 2, what="c/0")
    # Memo indices out of order would make the memo such a table.
    with pytest.raises(UnsafePickleError, match="memo index 2305843009213693951 out of order"):
        restricted_loads(b"(lp2305843009213693951\n.")
    small = {1: "a", -5: "b", "k": {None: True, b"x": 2}}
    assert load_array(pickle.dumps(np.array([small, {3, "x"}], dtype=object), protocol=5),
                      OBJECT, 2, what="c/0").tolist() == [small, {3, "x"}]


# --- 2. what the pickle codec reads ---------------------------------------------------------

OBJECT_VALUES = [
    ["a", "bc"],
    [1, -(1 << 70)],
    [{"k": [1, 2.5, None]}, {"nested": {"x": (1, "y")}}],
    [b"bytes", True],
    [None, 1.5],
    [{"source": ".", "path": "/a"}, ["list", ("tuple",)]],
]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_numcodecs_pickles_of_object_arrays_read(protocol: int) -> None:
    codec = numcodecs.Pickle(protocol=protocol)
    for values in OBJECT_VALUES:
        chunk = np.empty(2, dtype=object)
        chunk[:] = values
        result = read_chunk(codec.encode(chunk))
        assert result.dtype == OBJECT and result.tolist() == values


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_multi_chunk_and_fortran_order_object_arrays_read(protocol: int) -> None:
    codec = numcodecs.Pickle(protocol=protocol)
    expected = np.empty((3, 4), dtype=object)
    expected[...] = [[f"{i},{j}" if (i + j) % 2 else {"i": i, "j": [j]} for j in range(4)]
                     for i in range(3)]
    for order in ("C", "F"):
        chunks = {}
        for ci in range(2):
            for cj in range(2):
                block = np.full((2, 2), "", dtype=object)
                part = expected[2 * ci:2 * ci + 2, 2 * cj:2 * cj + 2]
                block[:part.shape[0], :part.shape[1]] = part
                block = np.asfortranarray(block) if order == "F" else block
                chunks[f"{ci}.{cj}"] = codec.encode(block)
        store = v2_store(chunks, shape=(3, 4), chunk_shape=(2, 2), order=order,
                         protocol=protocol)
        array = zk.open_array(store, mode="r")
        assert array[...].tolist() == expected.tolist()
        assert array[1:, 2].tolist() == expected[1:, 2].tolist()


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_structured_arrays_with_object_fields_read(protocol: int) -> None:
    expected = np.array([(0, 1, {"path": "/a"}), (5, 2, "x")], dtype=COMPOUND)
    store = v2_store({"0": numcodecs.Pickle(protocol=protocol).encode(expected)},
                     dtype=[["idx_start", "<i4"], ["count", "<i4"], ["timeseries", "|O"]],
                     fill_value=base64.b64encode(pickle.dumps(0, protocol=5)).decode())
    array = zk.open_array(store, mode="r")
    assert array.dtype == COMPOUND
    assert array[...].tolist() == expected.tolist()
    assert array.fill_value.tolist() == (0, 0, 0)


def test_hostile_fill_values_are_refused(tmp_path: Path) -> None:
    canary_file = tmp_path / "canary"
    fill = base64.b64encode(pickle.dumps(Reduce(os.system, f"touch {canary_file}"))).decode()
    store = v2_store({}, dtype=[["a", "<i4"], ["b", "|O"]], fill_value=fill)
    with pytest.raises(MetadataError, match="names posix.system|names nt.system") as info:
        zk.open_array(store, mode="r")
    causes = []
    error: BaseException | None = info.value
    while error is not None:
        causes.append(type(error))
        error = error.__cause__
    assert UnsafePickleError in causes
    assert not canary_file.exists()


def _pickle_with_fake_hdmf_zarr(value_factory: Any, protocol: int,
                                monkeypatch: pytest.MonkeyPatch) -> bytes:
    """Pickle as hdmf-zarr does, with a stand-in ``hdmf_zarr.utils.ZarrReference`` (pickle
    checks that the class can be imported), removed again before anything is read."""
    utils = types.ModuleType("hdmf_zarr.utils")

    class ZarrReference(dict):  # type: ignore[type-arg]
        pass

    ZarrReference.__module__ = "hdmf_zarr.utils"
    ZarrReference.__qualname__ = "ZarrReference"
    utils.ZarrReference = ZarrReference  # type: ignore[attr-defined]
    # The real hdmf_zarr may be imported already (its peer tests run in this process): it
    # is put back as it was, so reading never meets the stand-in.
    before = sys.modules.get("hdmf_zarr"), sys.modules.get("hdmf_zarr.utils")
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "hdmf_zarr", types.ModuleType("hdmf_zarr"))
        patch.setitem(sys.modules, "hdmf_zarr.utils", utils)
        data = pickle.dumps(value_factory(ZarrReference), protocol=protocol)
    assert (sys.modules.get("hdmf_zarr"), sys.modules.get("hdmf_zarr.utils")) == before
    return data


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_zarr_references_of_every_protocol_read(protocol: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def refs(cls: Any) -> Any:
        array = np.empty(2, dtype=object)
        array[:] = [cls(source=".", path="/a", object_id=None, source_object_id="f-1"),
                    cls(source="../b.zarr", path="/c/d", object_id="o", source_object_id=None)]
        return array

    result = read_chunk(_pickle_with_fake_hdmf_zarr(refs, protocol, monkeypatch))
    assert all(type(item) is ZarrReferenceData for item in result)
    assert result[1] == {"source": "../b.zarr", "path": "/c/d", "object_id": "o",
                         "source_object_id": None}


def test_states_are_only_given_to_arrays_and_dtypes(monkeypatch: pytest.MonkeyPatch) -> None:
    # BUILD sets attributes: on a ZarrReference, or on the stand-in class itself (which
    # would change it for every later read), it is refused.
    def with_state(cls: Any) -> Any:
        return np.array([Reduce(cls, state={"evil": 1}), cls(path="/a")], dtype=object)

    data = _pickle_with_fake_hdmf_zarr(with_state, 5, monkeypatch)
    with pytest.raises(UnsafePickleError, match="a state given to a ZarrReferenceData"):
        read_chunk(data)
    on_class = b"\x80\x04chdmf_zarr.utils\nZarrReference\nN}\x8c\x04keys\x8c\x01xs\x86b."
    with pytest.raises(UnsafePickleError,
                       match="a state given to hdmf_zarr.utils.ZarrReference"):
        restricted_loads(on_class)
    assert ZarrReferenceData.keys is dict.keys
    with pytest.raises(UnsafePickleError, match="a state given to a method"):
        restricted_loads(b"\x80\x04c_codecs\nencode\nN}\x8c\x0c__defaults__)s\x86b.")


def test_newobj_only_makes_zarr_references() -> None:
    # NEWOBJ calls cls.__new__: only ZarrReference (a dict) is a class among the names.
    ok = b"\x80\x04chdmf_zarr.utils\nZarrReference\n)\x81}\x8c\x04path\x8c\x02/a\x86\x86."
    assert restricted_loads(b"\x80\x04chdmf_zarr.utils\nZarrReference\n)\x81.") == {}
    for data in (b"\x80\x04cnumpy\nndarray\n)\x81.", b"\x80\x04cnumpy\ndtype\n)\x81.",
                 b"\x80\x04chdmf_zarr.utils\nZarrReference\n(K\x01t\x81."):
        with pytest.raises(UnsafePickleError, match="__new__ is not unpickled"):
            restricted_loads(data)
    assert ok


def test_announced_sizes_are_not_allocated_before_they_are_read() -> None:
    # The C unpickler zeroes a memo table of twice a PUT's index (12 bytes -> 1.6 GB) and
    # allocates BYTEARRAY8's stated size before reading: neither happens here.
    import tracemalloc

    tracemalloc.start()
    try:
        for data in (b"(lp99999999\n.", b"\x80\x02]r\xff\xff\xff\x3f.",
                     b"\x80\x05\x96\x00\x00\x00\x00\x01\x00\x00\x00."):
            with pytest.raises((UnsafePickleError, ChunkDecodeError)):
                restricted_loads(data)
        assert tracemalloc.get_traced_memory()[1] < 10 << 20
    finally:
        tracemalloc.stop()
    assert restricted_loads(b"\x80\x02]r\x00\x00\x00\x00.") == []  # index 0: in order
    assert restricted_loads(b"\x80\x05\x96\x02\x00\x00\x00\x00\x00\x00\x00ab.") == (
        bytearray(b"ab"))


# --- 3. the hdmf-zarr fixture ---------------------------------------------------------------

def _fixture(name: str) -> Path:
    return fixtures_dir() / "hdmf" / name


def test_fixture_pickled_datasets_read() -> None:
    root = zk.open_group(_fixture("ex.nwb.zarr"), mode="r")
    group = root["general/extracellular_ephys/electrodes/group"]
    assert group.filters[0].codec_id == "pickle"
    values = group[...]
    assert [type(v) for v in values] == [ZarrReferenceData, ZarrReferenceData]
    assert [v["path"] for v in values] == ["/general/extracellular_ephys/eg"] * 2
    assert set(values[0]) == {"source", "path", "object_id", "source_object_id"}
    eg = root["general/extracellular_ephys/eg"]
    assert values[0]["object_id"] == eg.attrs["object_id"]
    assert values[0]["source_object_id"] == root.attrs["object_id"]

    rows = root["intervals/epochs/timeseries"]
    assert rows.dtype == COMPOUND
    assert rows.fill_value.tolist() == (0, 0, 0)  # "gAVLAC4=": pickle.dumps(0)
    (row,) = rows[...]
    assert (int(row["idx_start"]), int(row["count"])) == (0, 1)
    assert row["timeseries"]["path"] == "/acquisition/ts"


def test_reading_the_fixture_never_imports_hdmf_zarr() -> None:
    # hdmf_zarr is made unimportable: the fixture still reads, so it was never imported.
    script = textwrap.dedent(f"""
        import sys
        sys.modules["hdmf_zarr"] = None
        sys.modules["hdmf_zarr.utils"] = None
        import zarrkit as zk
        root = zk.open_group({str(_fixture("ex.nwb.zarr"))!r}, mode="r")
        print(root["general/extracellular_ephys/electrodes/group"][0]["path"])
        print(root["intervals/epochs/timeseries"][0]["timeseries"]["path"])
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["/general/extracellular_ephys/eg", "/acquisition/ts"]


# --- 4. writing stays refused ---------------------------------------------------------------

def test_creating_a_pickle_array_is_refused() -> None:
    for filters in ([{"id": "pickle"}], [numcodecs.Pickle()], "pickle"):
        with pytest.raises(UnknownCodecError, match="'pickle' is refused for writing.*json2"):
            zk.create_array({}, shape=(2,), dtype=object, filters=filters, zarr_format=2)


def test_writing_into_a_pickled_array_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "ex.nwb.zarr"
    shutil.copytree(_fixture("ex.nwb.zarr"), copy)
    for path in copy.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    array = zk.open_array(copy / "general/extracellular_ephys/electrodes/group", mode="r+")
    chunk = (copy / "general/extracellular_ephys/electrodes/group/0").read_bytes()
    with pytest.raises(UnsupportedOperationError, match="does not write pickled chunks"):
        array[0] = {"source": ".", "path": "/x"}
    assert (copy / "general/extracellular_ephys/electrodes/group/0").read_bytes() == chunk
    assert array[0]["path"] == "/general/extracellular_ephys/eg"


def test_codec_configuration_is_checked() -> None:
    for config in ({"id": "pickle", "protocol": 9}, {"id": "pickle", "protocol": "5"},
                   {"id": "pickle", "level": 1}):
        with pytest.raises(MetadataError):
            zk.open_array(v2_store({}, protocol=0) | {".zarray": json.dumps(
                {"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|O",
                 "compressor": None, "fill_value": 0, "order": "C",
                 "filters": [config]}).encode()}, mode="r")
    assert RestrictedPickle.from_config({"id": "pickle"}).get_config() == {
        "id": "pickle", "protocol": pickle.HIGHEST_PROTOCOL}


def test_pickle_after_a_compressor_is_bounded_like_other_object_codecs() -> None:
    data = numcodecs.Zstd().encode(numcodecs.Pickle().encode(np.array(["a", "b"], dtype=object)))
    zarray = {"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|O",
              "compressor": {"id": "zstd", "level": 1}, "fill_value": 0, "order": "C",
              "filters": [{"id": "pickle", "protocol": 5}]}
    store = {".zarray": json.dumps(zarray).encode(), "0": data}
    assert zk.open_array(store, mode="r")[...].tolist() == ["a", "b"]
