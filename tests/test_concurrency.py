"""Prefetch: values fetched ahead of the threads that consume them. Oracles: a record of
every fetch (what, when, how many at once) kept by the fetch function itself."""

from __future__ import annotations

import threading
import time

import pytest

from zarrkit.concurrency import Prefetch


class Fetcher:
    """A fetch function recording what it fetched and how many fetches ran at once."""

    def __init__(self, delay: float = 0.0, fail: int | None = None) -> None:
        self.delay = delay
        self.fail = fail
        self.fetched: list[int] = []
        self.running = 0
        self.most_running = 0
        self.running_during_first: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, item: int) -> str:
        with self.lock:
            self.fetched.append(item)
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        try:
            time.sleep(self.delay)
            if item == 0:
                self.running_during_first.append(self.running)
            if item == self.fail:
                raise OSError(f"cannot fetch {item}")
            return f"value {item}"
        finally:
            with self.lock:
                self.running -= 1


def test_each_item_is_fetched_once_and_handed_out_in_order() -> None:
    fetch = Fetcher()
    with Prefetch(fetch, list(range(20)), ahead=3) as fetched:
        assert [fetched.take(i) for i in range(20)] == [f"value {i}" for i in range(20)]
    assert sorted(fetch.fetched) == list(range(20))


def test_the_first_item_is_fetched_alone_then_ahead_items_at_once() -> None:
    fetch = Fetcher(delay=0.02)
    together = threading.Barrier(3, timeout=10)
    fetch_alone_first = fetch.__call__

    def fetch_window_together(item: int) -> str:
        if item in (1, 2, 3):
            together.wait()  # broken, and raises, unless items 1-3 are fetched at once
        return fetch_alone_first(item)

    with Prefetch(fetch_window_together, list(range(8)), ahead=3) as fetched:
        assert [fetched.take(i) for i in range(8)] == [f"value {i}" for i in range(8)]
    assert fetch.running_during_first == [1]
    assert fetch.most_running == 3


def test_no_more_than_ahead_items_are_fetched_past_the_last_taken() -> None:
    fetch = Fetcher()
    with Prefetch(fetch, list(range(20)), ahead=2) as fetched:
        for i in range(3):
            fetched.take(i)
    assert set(range(3)) <= set(fetch.fetched) <= set(range(5))
    fetch = Fetcher()
    with Prefetch(fetch, list(range(20)), ahead=2) as fetched:
        fetched.take(0)
        fetched.take(6)  # a consumer further on moves the window
    assert {0, 6} <= set(fetch.fetched) <= set(range(9))


def test_a_value_taken_by_several_consumers_is_forgotten_after_the_last() -> None:
    fetch = Fetcher()
    with Prefetch(fetch, [0, 1, 2], ahead=1, takes=[2, 1, 3]) as fetched:
        assert [fetched.take(0), fetched.take(0)] == ["value 0"] * 2
        assert 0 not in fetched._futures
        assert fetched.take(1) == "value 1"
        assert [fetched.take(2) for _ in range(3)] == ["value 2"] * 3
        assert fetched._futures == {}
    assert sorted(fetch.fetched) == [0, 1, 2]


def test_a_failed_fetch_is_raised_to_its_consumer_and_the_rest_is_not_fetched() -> None:
    fetch = Fetcher(fail=2)
    with pytest.raises(OSError, match="cannot fetch 2"):
        with Prefetch(fetch, list(range(100)), ahead=2) as fetched:
            for i in range(100):
                fetched.take(i)
    assert max(fetch.fetched) <= 4


def test_consumers_in_several_threads_get_every_value() -> None:
    fetch = Fetcher(delay=0.001)
    got: dict[int, str] = {}
    order = iter(range(40))
    lock = threading.Lock()

    def consume(fetched: Prefetch[int, str]) -> None:
        while True:
            with lock:
                i = next(order, None)
            if i is None:
                return
            got[i] = fetched.take(i)

    with Prefetch(fetch, list(range(40)), ahead=2) as fetched:
        threads = [threading.Thread(target=consume, args=(fetched,)) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert got == {i: f"value {i}" for i in range(40)}
    assert sorted(fetch.fetched) == list(range(40))

