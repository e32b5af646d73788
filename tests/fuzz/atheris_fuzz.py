"""Coverage-guided fuzzing of zarrkit's parsers and decoders with atheris (libFuzzer).

    .venv/bin/python tests/fuzz/atheris_fuzz.py --list
    .venv/bin/python tests/fuzz/atheris_fuzz.py TARGET [libFuzzer options, e.g. -runs=100000]

A target is a function ``f(data: bytes) -> None`` of ``tests/fuzz/targets.py`` or
``tests/fuzz/targets_storage.py`` that feeds the bytes to one parser or decoder and lets
only ``zarrkit.errors`` exceptions pass: anything else (a raw exception, a crash, a hang
past libFuzzer's ``-timeout``, memory past ``-rss_limit_mb``) is a finding, and libFuzzer
stops with the input saved as ``crash-*``/``timeout-*``/``oom-*``.

``make fuzz`` runs every target for a while; ``tests/fuzz/test_atheris.py`` runs each for a
bounded number of inputs inside ``make test``.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
TARGET_MODULES = ("targets", "targets_storage")


def _modules() -> list[ModuleType]:
    sys.path.insert(0, str(HERE))
    modules = []
    for name in TARGET_MODULES:
        try:
            modules.append(__import__(name))
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
    return modules


def targets() -> dict[str, Callable[[bytes], None]]:
    """Every fuzz target, by name: the public functions of the target modules that take
    one ``data: bytes`` argument."""
    found: dict[str, Callable[[bytes], None]] = {}
    for module in _modules():
        for name, function in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(function):
                continue
            if function.__module__ != module.__name__:
                continue
            parameters = list(inspect.signature(function).parameters.values())
            if len(parameters) == 1 and parameters[0].name == "data":
                found[name] = function
    return found


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    if sys.argv[1] == "--list":
        print("\n".join(sorted(targets())))
        return
    import atheris

    # zarrkit is imported (by the target modules) inside the instrumentation, so that
    # libFuzzer sees which branches of it an input reaches.
    with atheris.instrument_imports(include=["zarrkit"]):
        available = targets()
    name = sys.argv[1]
    if name not in available:
        raise SystemExit(f"unknown target {name!r}; --list shows them")
    arguments = [sys.argv[0], *sys.argv[2:]]
    if not any(not a.startswith("-") for a in sys.argv[2:]):
        arguments.append(str(seed_corpus(name)))
    atheris.Setup(arguments, available[name])
    atheris.Fuzz()


def seed_corpus(name: str) -> Path:
    """A corpus directory holding the target's seeds (from ``<name>_seeds()`` in its
    module, if any), for runs that name no corpus of their own."""
    import tempfile

    corpus = Path(tempfile.mkdtemp(prefix=f"zarrkit-corpus-{name}-"))
    for module in _modules():
        make = getattr(module, f"{name}_seeds", None)
        if make is not None:
            for i, seed in enumerate(make()):
                (corpus / f"seed-{i}").write_bytes(seed)
    return corpus


if __name__ == "__main__":
    main()
