"""HTTPStore refuses what it did not ask for (issue 28): a body in a coding other than
``identity`` (a gzip bomb), a body longer than its ``Content-Length``, a range larger
than asked for, and a body of no declared length beyond ``max_chunk_bytes``, each
against a hostile server started here on 127.0.0.1.

Each read runs in a subprocess with ``ZARRKIT_MAX_CHUNK_BYTES`` set to 1 MiB, which
reports the error it got and the peak of Python's allocations during the read
(``tracemalloc``) and the growth of its resident set (``VmHWM`` after resetting it): the
bodies are 64-256 MiB, the bound is a small multiple of 1 MiB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from http_support import HostileServer

from zarrkit.storage import HTTPStore

MAX_CHUNK_BYTES = 1 << 20
#: What a refused read may cost: a few pieces of at most max_chunk_bytes each.
BOUND = 8 * MAX_CHUNK_BYTES

_PROBE = r"""
import json, sys, tracemalloc

from zarrkit.storage import HTTPStore


def hwm():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM"))


store = HTTPStore(sys.argv[1], retries=0, timeout=30)
assert store.get("small") == b"ok" * 10  # imports and connects before measuring
try:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak resident set starts again from here
except OSError:
    pass
base = hwm()
tracemalloc.start()
try:
    value = eval(sys.argv[2], {"store": store})
    outcome = {"value": repr(value)[:100], "length": len(value)
               if isinstance(value, (bytes, list)) else None}
except BaseException as e:
    outcome = {"error": type(e).__name__, "message": str(e),
               "classes": [c.__name__ for c in type(e).__mro__]}
outcome["peak"] = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
outcome["rss_growth"] = hwm() - base
outcome["next"] = repr(store.get("small"))  # the store still reads good values
print(json.dumps(outcome))
"""


@pytest.fixture(scope="module")
def hostile() -> Iterator[HostileServer]:
    server = HostileServer(bomb_bytes=256 << 20, stream_bytes=64 << 20, stream_seconds=30)
    yield server
    server.close()


def probe(server: HostileServer, expression: str) -> dict[str, Any]:
    """What ``expression`` (over ``store``, an HTTPStore of ``server``) gives in a fresh
    process with max_chunk_bytes at 1 MiB, with its peak memory."""
    environment = {**os.environ, "ZARRKIT_MAX_CHUNK_BYTES": str(MAX_CHUNK_BYTES)}
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, server.url, expression], env=environment,
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    assert outcome["next"] == repr(b"ok" * 10)
    return outcome


def assert_refused(outcome: dict[str, Any], error: str, *phrases: str) -> None:
    assert outcome.get("error") == error, outcome
    assert "ZarrkitError" in outcome["classes"]
    for phrase in phrases:
        assert phrase in outcome["message"], outcome["message"]
    assert outcome["peak"] < BOUND, outcome
    assert outcome["rss_growth"] < 4 * BOUND, outcome


def test_gzip_bomb_is_refused_not_inflated(hostile: HostileServer) -> None:
    outcome = probe(hostile, "store.get('a/c/0')".replace("a/c/0", "a/gzip"))
    assert_refused(outcome, "StoreIOError", "'a/gzip'", f"{hostile.url}a/gzip",
                   "Content-Encoding 'gzip'")
    asked = [r for r in hostile.requests if r.path.endswith("/a/gzip")]
    assert asked and all(r.headers["accept-encoding"] == "identity" for r in asked)


def test_gzip_transfer_coding_is_refused(hostile: HostileServer) -> None:
    # http.client does not undo "gzip, chunked": accepted, it would be the value's bytes.
    outcome = probe(hostile, "store.get('gzip-transfer')")
    assert_refused(outcome, "StoreIOError", "'gzip-transfer'", "Transfer-Encoding")


def test_gzip_bomb_in_a_ranged_read_and_in_get_many(hostile: HostileServer) -> None:
    assert_refused(probe(hostile, "store.get_range('gzip', 0, 100)"), "StoreIOError",
                   "Content-Encoding")
    assert_refused(probe(hostile, "store.get_many(['gzip', 'small', 'b/gzip'])"),
                   "StoreIOError", "Content-Encoding")
    assert_refused(probe(hostile, "list(store.get_many_as_completed(['small', 'gzip']))"),
                   "StoreIOError", "Content-Encoding")


@pytest.mark.parametrize("name", ["endless", "until-close"])
def test_body_of_no_declared_length_stops_at_max_chunk_bytes(
        hostile: HostileServer, name: str) -> None:
    outcome = probe(hostile, f"store.get({name!r})")
    assert_refused(outcome, "ResourceLimitError", repr(name), f"{hostile.url}{name}",
                   f"max_chunk_bytes ({MAX_CHUNK_BYTES})")
    assert "MemoryError" in outcome["classes"]  # as before, for callers catching that


def test_endless_bodies_in_get_many(hostile: HostileServer) -> None:
    outcome = probe(hostile, "store.get_many(['endless', 'until-close', 'x/endless'])")
    assert_refused(outcome, "ResourceLimitError", "'endless'")
    # Values of unknown length are fine up to the bound.
    assert probe(hostile, "store.get_many(['small', 's/small'])")["length"] == 2


def test_unwanted_endless_bodies_are_not_read(hostile: HostileServer) -> None:
    # An existence check (a one-byte range the server ignores) and a 404 whose page
    # never ends: neither body is wanted, so neither is read.
    outcome = probe(hostile, "('endless' in store, store.get('missing-endless'), "
                             "store.get_range('missing-endless', 5, 5))")
    assert outcome["value"] == "(True, None, None)", outcome
    assert outcome["peak"] < BOUND and outcome["rss_growth"] < 4 * BOUND, outcome


def test_body_longer_than_its_content_length_is_refused(hostile: HostileServer) -> None:
    outcome = probe(hostile, "store.get('overlong')")
    assert_refused(outcome, "StoreIOError", "'overlong'", "longer than the 1000 bytes")


@pytest.mark.parametrize("name", ["range-declared", "range-chunked"])
def test_range_answered_with_more_than_asked_is_refused(
        hostile: HostileServer, name: str) -> None:
    outcome = probe(hostile, f"store.get_range({name!r}, 0, 10)")
    assert_refused(outcome, "StoreIOError", repr(name), "range of 10 bytes"
                   if name == "range-declared" else "the 10 bytes of the range")
    suffix = probe(hostile, f"store.get_range({name!r}, -16)")  # the last 16 bytes
    assert_refused(suffix, "StoreIOError", "16")


def test_open_ended_range_is_bounded_by_max_chunk_bytes(hostile: HostileServer) -> None:
    # "bytes=5-" has no length of its own: the value's bound applies.
    outcome = probe(hostile, "store.get_range('range-declared', 5)")
    assert_refused(outcome, "ResourceLimitError", "'range-declared'",
                   "max_chunk_bytes")


def test_accept_encoding_identity_cannot_be_lost() -> None:
    store = HTTPStore("http://127.0.0.1:9/", headers={"X-Token": "t"})
    assert store.headers["Accept-Encoding"] == "identity"
