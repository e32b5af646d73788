"""No deprecated numpy or library API in zarrkit's own code: the suite's warning filters
(``pyproject.toml``) turn a DeprecationWarning or FutureWarning raised from a zarrkit
module into an error, so a test that reaches such a call fails. These tests check the
filters themselves, with code that runs as a zarrkit module does."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest


def as_zarrkit_module(source: str) -> dict[str, Any]:
    """The namespace of ``source`` run as the module ``zarrkit.probe`` (a warning's module
    is the ``__name__`` of the frame its stacklevel points at)."""
    namespace: dict[str, Any] = {"__name__": "zarrkit.probe"}
    exec(compile(source, "zarrkit/probe.py", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("category", [DeprecationWarning, FutureWarning])
def test_a_deprecation_raised_in_zarrkit_fails(category: type[Warning]) -> None:
    probe = as_zarrkit_module("import warnings\n"
                              "def old(category):\n"
                              "    warnings.warn('old API', category)\n")
    with pytest.raises(category, match="old API"):
        probe["old"](category)


def test_a_library_deprecation_reached_from_zarrkit_fails() -> None:
    """numpy 2.5 deprecates assigning ``.shape``; its warning names the caller's module."""
    probe = as_zarrkit_module("def reshape(a):\n"
                              "    a.shape = (2, 2)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            np.zeros(4).shape = (2, 2)
        except DeprecationWarning:
            pass
        else:
            pytest.skip(f"numpy {np.__version__} does not deprecate assigning .shape")
    with pytest.raises(DeprecationWarning):
        probe["reshape"](np.zeros(4))


def test_a_deprecation_elsewhere_is_only_a_warning() -> None:
    namespace: dict[str, Any] = {"__name__": "not_zarrkit"}
    exec(compile("import warnings\ndef old():\n    warnings.warn('x', DeprecationWarning)\n",
                 "elsewhere.py", "exec"), namespace)
    with warnings.catch_warnings(record=True) as caught:  # the suite's filters stay
        namespace["old"]()
    assert [w.category for w in caught] == [DeprecationWarning]
