"""Read outputs: how they are allocated. Oracle: numpy's own switch, read back."""

from __future__ import annotations

import numpy as np
import pytest

from zarrkit import buffers


def test_large_read_outputs_are_allocated_without_asking_for_huge_pages(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy's huge-page request is off while a large output is allocated, and restored
    after, whatever it was; a smaller output keeps numpy's choice."""
    switch = buffers._set_madvise_hugepage
    if switch is None:
        pytest.skip("this numpy has no huge-page switch")
    state_during: list[bool] = []
    real_empty = np.empty

    def empty(*args: object, **kwargs: object) -> object:
        previous = switch(False)
        switch(previous)
        state_during.append(previous)
        return real_empty(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(np, "empty", empty)
    monkeypatch.setattr(buffers, "SMALL_PAGES_FROM", 24)
    for before in (True, False):
        switch(before)
        try:
            out = buffers.allocate((3, 4), np.dtype("u2"))
            assert switch(before) == before  # restored
        finally:
            switch(True)
        assert out.shape == (3, 4) and out.flags.owndata and out.flags.writeable
        switch(before)
        try:
            buffers.allocate((2, 4), np.dtype("u2"))  # 16 bytes: numpy's choice
        finally:
            switch(True)
    assert state_during == [False, True, False, False]
