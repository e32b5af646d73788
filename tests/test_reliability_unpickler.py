"""Issue 28: the restricted unpickler is bounded in time and size.

A few hundred bytes of pickle can describe objects far larger than themselves: a list
appended to itself through the memo 60 times holds 2^60 leaves, a tuple built the same way
takes 2^60 steps to hash, and 60,000 integer keys that share one hash make a dict take
quadratic time to fill. Walking such an object (``repr`` in an error message, hashing a
key, ``==``) never returns, so:

- no error message ``repr()``\\ s an untrusted object (type and length only);
- the items of one pickle may hold a bounded number of elements, counting those reached
  through the memo each time (so a DAG or a cycle is refused, and whatever walks the
  result later is bounded);
- every way of building a dict (``SETITEMS``, ``DICT``, and now a call of
  ``ZarrReference`` through ``REDUCE``, ``INST`` or ``OBJ``) checks keys before hashing.

The hostile pickles are written by hand (opcodes as CPython's ``pickletools`` documents
them). Whatever hangs on the old code runs in a subprocess with a timeout and an address
space limit, so the test fails in seconds rather than hanging (or exhausting memory).
"""

from __future__ import annotations

import json
import pickle
import pickletools
import re
import resource
import struct
import subprocess
import sys
import textwrap
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrkit as zk
from zarrkit.codecs.restricted_pickle import (
    MAX_SHARED_ITEMS,
    ZarrReferenceData,
    describe_value,
    load_array,
    restricted_loads,
)
from zarrkit.errors import MetadataError, UnsafePickleError
from zarrkit.references import read_references

OBJECT = np.dtype(object)
# A hostile input must be refused within this time (the fixed code takes milliseconds;
# the old one never returned). The subprocess's own start-up is not counted.
TIME_LIMIT = 5.0


# --- hand-written pickles ---------------------------------------------------------------------

def _get(index: int) -> bytes:
    return b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index)


def _put(index: int) -> bytes:
    return b"q" + bytes([index]) if index < 256 else b"r" + struct.pack("<I", index)


def list_dag(levels: int) -> bytes:
    """Opcodes pushing L_levels, where L_0 = [] and L_(i+1) = [L_i, L_i] (memo i holds
    L_i): ``levels * 9`` bytes for 2^levels leaves."""
    ops = b"]" + _put(0)
    for i in range(1, levels + 1):
        # POP the previous level (kept in the memo), make the next and fill it.
        ops += b"0]" + _put(i) + b"(" + _get(i - 1) + _get(i - 1) + b"e"
    return ops


def tuple_dag(levels: int) -> bytes:
    """Opcodes pushing T_levels, where T_0 = () and T_(i+1) = (T_i, T_i): DUP, TUPLE2."""
    return b")" + b"2\x86" * levels


def object_array(items: bytes, count: int = 1) -> bytes:
    """numpy's protocol-3 pickle of an object array of ``count`` elements, whose item list
    the opcodes ``items`` push (they may use memo indices from 0: the rest uses none).
    Matches ``pickle.dumps(np.array(..., dtype=object), protocol=3)`` opcode for opcode."""
    return (b"\x80\x03cnumpy._core.multiarray\n_reconstruct\ncnumpy\nndarray\n"
            b"K\x00\x85C\x01b\x87R"
            b"(K\x01K" + bytes([count]) + b"\x85"
            b"cnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87R"
            b"(K\x03X\x01\x00\x00\x00|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb"
            b"\x89" + items + b"tb.")


def colliding_int(k: int) -> int:
    """Integers whose hash is 0 (CPython hashes ints modulo 2^61 - 1)."""
    return k * ((1 << 61) - 1)


def long1(value: int) -> bytes:
    data = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(data)]) + data


def reference_from_pairs(keys: list[int], opcode: str = "REDUCE") -> bytes:
    """``ZarrReference([(key, None), ...])`` called through REDUCE, INST or OBJ."""
    pairs = b"](" + b"".join(long1(k) + b"N\x86" for k in keys) + b"e"
    name = b"hdmf_zarr.utils\nZarrReference\n"
    if opcode == "REDUCE":
        return b"\x80\x02c" + name + pairs + b"\x85R."
    if opcode == "INST":
        return b"(" + pairs + b"i" + name + b"."
    assert opcode == "OBJ"
    return b"\x80\x02(c" + name + pairs + b"o."


# --- running what hung in a bounded subprocess -----------------------------------------------

_RUNNER = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import zarrkit as zk
    from zarrkit.codecs.restricted_pickle import load_array, restricted_loads
    from zarrkit.references import read_references
    data = sys.stdin.buffer.read()
    zarray = {"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "|O",
              "compressor": None, "fill_value": 0, "order": "C",
              "filters": [{"id": "pickle", "protocol": 3}]}
    store = {".zarray": json.dumps(zarray).encode(),
             ".zattrs": json.dumps({"zarr_dtype": "object"}).encode(), "0": data}
    start = time.perf_counter()
    try:
        if sys.argv[1] == "array":
            load_array(data, np.dtype(object), 1, what="c/0")
        elif sys.argv[1] == "references":  # a v2 reference dataset of one pickled chunk
            read_references(zk.open_array(store, mode="r"))
        else:
            restricted_loads(data, what="c/0")
        outcome = "returned"
    except Exception as e:
        outcome = f"{type(e).__name__}: {e}"
    print(f"{time.perf_counter() - start:.3f} {outcome}")
""")


def _limit_memory() -> None:
    # The old code's repr() of a DAG builds strings of 2^n characters: fail with
    # MemoryError instead of taking the machine's memory.
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def load_bounded(data: bytes, kind: str = "array") -> tuple[float, str]:
    """``load_array`` (``kind="array"``, an object array of one element), ``read_references``
    of a reference dataset whose one chunk is ``data`` (``"references"``) or
    ``restricted_loads`` (``"value"``) in a subprocess: (seconds it took, its outcome)."""
    try:
        done = subprocess.run([sys.executable, "-c", _RUNNER, kind], input=data,
                              capture_output=True, timeout=TIME_LIMIT + 5,
                              preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        pytest.fail(f"unpickling {len(data)} bytes did not return")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    seconds, outcome = done.stdout.decode().strip().split(" ", 1)
    return float(seconds), outcome


# --- the pickles are what they claim ----------------------------------------------------------

def test_the_hand_written_pickles_are_what_they_claim() -> None:
    # Checked with the stock unpickler, on sizes it can afford.
    assert pickle.loads(object_array(b"]Na")).tolist() == [None]
    reference = pickle.dumps(np.array([None], dtype=object), protocol=3)
    assert [op.name for op, _, _ in pickletools.genops(object_array(b"]Na"))] == [
        op.name for op, _, _ in pickletools.genops(reference)
        if op.name not in ("BINPUT", "LONG_BINPUT")]
    small = pickle.loads(b"\x80\x03" + list_dag(3) + b".")
    assert len(json.dumps(small)) == len(json.dumps([[[[], []], [[], []]]] * 2))
    assert small[0] is small[1]
    assert pickle.loads(b"\x80\x03" + tuple_dag(2) + b".") == (((), ()), ((), ()))
    assert len(object_array(b"]" + list_dag(60) + b"a")) < 800  # the was 661 bytes
    assert {hash(colliding_int(k)) for k in range(1, 100)} == {0}


# --- 1. a list DAG: refused, never repr'd -----------------------------------------------------

def test_a_list_dag_in_an_object_chunk_is_refused_at_once() -> None:
    # 2^60 leaves in 553 bytes: the old code accepted it, and the first error message
    # about it (read_references: "not an object reference: {value!r:.200}") never returned.
    data = object_array(b"](" + list_dag(60) + b"e")
    seconds, outcome = load_bounded(data)
    assert outcome.startswith("UnsafePickleError: c/0: pickled items hold more than")
    assert seconds < TIME_LIMIT


@pytest.mark.parametrize("levels", [21, 40])
def test_a_list_dag_is_refused_in_process(levels: int) -> None:
    # 2^21 leaves already exceed the budget of a 200-byte pickle (the old code returned it).
    with pytest.raises(UnsafePickleError, match="c/0: pickled items hold more than"):
        load_array(object_array(b"](" + list_dag(levels) + b"e"), OBJECT, 1, what="c/0")
    with pytest.raises(UnsafePickleError, match="pickled items hold more than"):
        restricted_loads(b"\x80\x03" + list_dag(levels) + b".")


def test_a_list_that_holds_itself_is_refused() -> None:
    # L = [L]: finite to the old "seen" walk, endless to json, ==, deepcopy...
    cycle = b"\x80\x03]q\x00h\x00a."
    with pytest.raises(UnsafePickleError, match="pickled items hold themselves"):
        restricted_loads(cycle)
    with pytest.raises(UnsafePickleError, match="pickled items hold themselves"):
        load_array(object_array(b"](]q\x00h\x00ae"), OBJECT, 1, what="c/0")


def test_read_references_refuses_a_dag_chunk_naming_the_key() -> None:
    # The reproducer: read_references on a pickled reference chunk holding the
    # DAG never returned (its message repr()'d the element).
    seconds, outcome = load_bounded(object_array(b"](" + list_dag(60) + b"e"), "references")
    assert re.match(r"UnsafePickleError: array '/' chunk '0': pickled items hold more "
                    r"than", outcome), outcome
    assert seconds < TIME_LIMIT


def test_shared_items_within_the_budget_still_read() -> None:
    # Legitimate sharing (one list in every element, memoized strings) is read as before.
    shared = ["a", "b"]
    values = np.empty(1000, dtype=object)
    values[:] = [shared] * 1000
    result = load_array(pickle.dumps(values, protocol=5), OBJECT, 1000, what="c/0")
    assert result.tolist() == [shared] * 1000
    # A pickle may hold one element per byte plus MAX_SHARED_ITEMS shared ones: L_19
    # (2^20 - 2 elements below it) fits, L_20 does not.
    assert MAX_SHARED_ITEMS == 2 ** 20
    fits = load_array(object_array(b"](" + list_dag(19) + b"e"), OBJECT, 1, what="c/0")
    assert fits[0][0] is fits[0][1]
    with pytest.raises(UnsafePickleError, match="more than"):
        load_array(object_array(b"](" + list_dag(20) + b"e"), OBJECT, 1, what="c/0")


# --- 2. no repr() of untrusted objects in messages -------------------------------------------

_HOSTILE_ARGUMENTS = {
    # Each puts a 2^60-element object where a message used to repr() (or a check used to
    # hash) it; each was endless on the old code.
    "dtype spec": b"\x80\x03cnumpy\ndtype\n" + list_dag(60) + b"\x89\x88\x87R.",
    "dtype endian": (b"\x80\x03cnumpy._core.multiarray\n_reconstruct\ncnumpy\nndarray\n"
                     b"K\x00\x85C\x01b\x87R(K\x01K\x01\x85cnumpy\ndtype\n"
                     b"X\x02\x00\x00\x00O8\x89\x88\x87R(K\x03" + tuple_dag(60)
                     + b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb\x89]Natb."),
    "_reconstruct shape": (b"\x80\x03cnumpy._core.multiarray\n_reconstruct\ncnumpy\nndarray\n"
                           + list_dag(60) + b"C\x01b\x87R."),
    "_codecs.encode encoding": (b"\x80\x03c_codecs\nencode\nX\x01\x00\x00\x00a"
                                + list_dag(60) + b"\x86R."),
    "array state": (b"\x80\x03cnumpy._core.multiarray\n_reconstruct\ncnumpy\nndarray\n"
                    b"K\x00\x85C\x01b\x87R" + list_dag(60) + b"b."),
    "NEWOBJ class": b"\x80\x03" + list_dag(60) + b")\x81.",
}


@pytest.mark.parametrize("name", sorted(_HOSTILE_ARGUMENTS))
def test_messages_describe_hostile_values_by_type_and_length(name: str) -> None:
    seconds, outcome = load_bounded(_HOSTILE_ARGUMENTS[name])
    assert outcome.startswith("UnsafePickleError: c/0: "), outcome
    assert seconds < TIME_LIMIT
    assert "[[" not in outcome and "((" not in outcome  # described, not repr'd
    assert len(outcome) < 400


def test_read_references_messages_describe_values() -> None:
    # A stored element that is not a reference is described by type and length (the old
    # message was its repr, cut after it was built).
    values = np.empty(1, dtype=object)
    values[0] = [1] * 10_000
    codec = numcodecs.JSON()
    zarray = {"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "|O",
              "compressor": None, "fill_value": None, "order": "C",
              "filters": [codec.get_config()]}
    store = {".zarray": json.dumps(zarray).encode(),
             ".zattrs": json.dumps({"zarr_dtype": "object"}).encode(),
             "0": codec.encode(values)}
    with pytest.raises(MetadataError, match=r"not an object reference: a list of length 10000\Z"):
        read_references(zk.open_array(store, mode="r"))


def test_reference_messages_never_repr_a_dag() -> None:
    # Reference.from_json (read_references' decoder) on a mapping whose path is a 2^60
    # leaf list: its message used to be repr(value)[:200], which never returned.
    code = textwrap.dedent("""
        import time
        from zarrkit.references import Reference
        dag = []
        for _ in range(60):
            dag = [dag, dag]
        start = time.perf_counter()
        for value in ({"path": dag}, {"path": "/a", "source": dag}, [dag], dag):
            try:
                Reference.from_json(value)
            except Exception as e:
                print(type(e).__name__, e)
        print(f"{time.perf_counter() - start:.3f}")
    """)
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                              timeout=TIME_LIMIT + 5, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        pytest.fail("a reference message took forever")
    lines = done.stdout.decode().splitlines()
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert lines[:4] == [
        "MetadataError not an object reference (needs a str 'path'): a dict of length 1",
        "MetadataError object reference with an invalid source: a list of length 2",
        "MetadataError not an object reference (needs a JSON object): a list of length 1",
        "MetadataError not an object reference (needs a JSON object): a list of length 2"]
    assert float(lines[4]) < TIME_LIMIT


@given(st.recursive(st.none() | st.integers() | st.text() | st.binary() | st.floats(),
                    lambda children: st.lists(children) | st.dictionaries(st.text(), children)
                    | st.tuples(children, children), max_leaves=20),
       st.integers(1, 200))
@settings(max_examples=200, deadline=None)
def test_describe_value_is_short_and_never_reprs_containers(value: Any, limit: int) -> None:
    text = describe_value(value, limit)
    if type(value) in (list, dict, tuple):
        assert text == f"a {type(value).__name__} of length {len(value)}"
    elif type(value) in (str, bytes):
        assert text.startswith(repr(value[:limit]))
        assert len(text) <= len(repr(value[:limit])) + 40
    else:
        assert len(text) <= 40


def test_describe_value_bounds_huge_ints() -> None:
    assert describe_value(1 << 100_000) == "an int of 100001 bits"
    assert describe_value(-(1 << 63)) == str(-(1 << 63))


# --- 3. dicts built by a call check their keys before hashing ---------------------------------

@pytest.mark.parametrize("opcode", ["REDUCE", "INST", "OBJ"])
def test_zarr_reference_from_pairs_checks_keys(opcode: str) -> None:
    # The old code hashed the keys of ZarrReference(pairs) unchecked (and returned it).
    with pytest.raises(UnsafePickleError, match=f"a dict key or set member {colliding_int(1)} "):
        restricted_loads(reference_from_pairs([colliding_int(1)], opcode))
    # Keys the dict opcodes accept are accepted here too.
    pairs = b"](X\x04\x00\x00\x00pathX\x02\x00\x00\x00/a\x86e"
    ok = b"\x80\x02chdmf_zarr.utils\nZarrReference\n" + pairs + b"\x85R."
    assert restricted_loads(ok) == {"path": "/a"}
    assert type(restricted_loads(ok)) is ZarrReferenceData


def test_zarr_reference_from_anything_else_is_refused() -> None:
    name = b"\x80\x02chdmf_zarr.utils\nZarrReference\n"
    for args in (b"K\x01\x85", b"K\x01K\x02\x86", b"(]]t", b"]K\x01a\x85",
                 b"](K\x01K\x02K\x03\x87e\x85"):
        with pytest.raises(UnsafePickleError, match="ZarrReference"):
            restricted_loads(name + args + b"R.")
    # A tuple DAG as a key: refused before it is hashed (2^60 steps).
    dag_key = name + b"](" + tuple_dag(60) + b"N\x86e\x85R."
    seconds, outcome = load_bounded(dag_key, "value")
    assert outcome.startswith("UnsafePickleError: c/0: a dict key or set member a tuple of "
                              "length 2"), outcome
    assert seconds < TIME_LIMIT


def test_sixty_thousand_colliding_keys_are_refused_at_once() -> None:
    # The 879 KB pickle (17 s on the old code): refused at the first key.
    data = reference_from_pairs([colliding_int(k) for k in range(1, 60_001)])
    assert 800_000 < len(data) < 1_000_000
    seconds, outcome = load_bounded(data, "value")
    assert outcome.startswith("UnsafePickleError: c/0: a dict key or set member"), outcome
    assert seconds < 1.0
