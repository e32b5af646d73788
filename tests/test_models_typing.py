"""Static checks of typed specs (ZEP 6, "Validating Zarr Object Models"): mypy accepts the
seed's valid xarray hierarchy and reports errors exactly on the invalid lines.

Lines that must have errors end with ``# E: <mypy error code>, ...``; every other line
must have none.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

EXAMPLE = '''\
from typing import Any, Union

from typing_extensions import TypedDict

from zarrkit.models.conventions import xarray
from zarrkit.models.v2 import ArraySpec, GroupSpec


class XAttrs(TypedDict):
    _ARRAY_DIMENSIONS: list[str]


XArraySpec = ArraySpec[XAttrs]
XGroupSpec = GroupSpec[Any, Union[XArraySpec, GroupSpec[Any, Any]]]

# this passes the type checker
valid = XGroupSpec(
    attributes={},
    members={
        "array_0": XArraySpec(
            shape=(10, 10),
            attributes=XAttrs(_ARRAY_DIMENSIONS=["a", "b"]),
            dtype="|u1",
            chunks=(10, 10),
            compressor=None,
            dimension_separator=".",
        )
    },
)

# the seed's invalid hierarchy: no _ARRAY_DIMENSIONS, and a key XAttrs does not have
invalid = XGroupSpec(
    attributes={},
    members={
        "array_0": XArraySpec(
            shape=(10, 10),
            attributes={"foo": 10},  # E: typeddict-item, typeddict-unknown-key
            dtype="|u1",
            chunks=(10, 10),
            compressor=None,
            dimension_separator="/",
        )
    },
)

missing = XArraySpec(shape=(10,), chunks=(10,), dtype="|u1",
                     attributes={})  # E: typeddict-item
extra = XArraySpec(shape=(10,), chunks=(10,), dtype="|u1",
                   attributes={"_ARRAY_DIMENSIONS": ["a"], "foo": 10})  # E: typeddict-unknown-key
ill_typed = XArraySpec(shape=(10,), chunks=(10,), dtype="|u1",
                       attributes={"_ARRAY_DIMENSIONS": "a"})  # E: typeddict-item

# zarrkit's own xarray convention types the same way
x = xarray.ArraySpec(shape=(3,), chunks=(3,), dtype="<f8",
                     attributes={"_ARRAY_DIMENSIONS": ["x"]})
dataset = xarray.GroupSpec(attributes={"title": "demo"},
                           members={"x": x, "child": xarray.GroupSpec()})
dimensions: list[str] = x.attributes["_ARRAY_DIMENSIONS"]
no_dims = xarray.ArraySpec(shape=(3,), chunks=(3,), dtype="<f8",
                           attributes={"dims": ["x"]})  # E: typeddict-item, typeddict-unknown-key
not_a_member = xarray.GroupSpec(members={"x": 1})  # E: dict-item
'''


def expected_errors(source: str) -> set[tuple[int, str]]:
    found = set()
    for number, line in enumerate(source.splitlines(), start=1):
        marker = re.search(r"# E: (.*)$", line)
        if marker:
            found |= {(number, code.strip()) for code in marker.group(1).split(",")}
    return found


def test_mypy_reports_errors_exactly_on_the_invalid_lines(tmp_path):
    example = tmp_path / "example.py"
    example.write_text(EXAMPLE)
    env = {**os.environ, "MYPYPATH": str(SRC)}
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / ".mypy_cache"),
         "--follow-imports=silent", "--show-error-codes", "--no-error-summary",
         "--no-pretty", "--hide-error-context", "example.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    reported = set()
    for line in result.stdout.splitlines():
        error = re.match(r"example\.py:(\d+): error: .*\[([a-z-]+)\]$", line)
        if error:
            reported.add((int(error.group(1)), error.group(2)))
        else:
            assert ": note:" in line, result.stdout + result.stderr
    assert reported == expected_errors(EXAMPLE), result.stdout + result.stderr
    assert result.returncode == 1


def test_the_example_runs_up_to_its_first_invalid_line():
    """The valid part of the example is valid at run time too."""
    valid_part = EXAMPLE.split("# the seed's invalid hierarchy")[0]
    namespace: dict[str, object] = {}
    exec(compile(valid_part, "example.py", "exec"), namespace)
    assert namespace["valid"].to_json()["members"]["array_0"]["attributes"] == {
        "_ARRAY_DIMENSIONS": ["a", "b"]}
