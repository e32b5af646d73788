"""The ``zarrkit`` command line (also ``python -m zarrkit``).

>>> from click.testing import CliRunner
>>> "tree" in CliRunner().invoke(main, ["--help"]).output
True
"""

from __future__ import annotations

from zarrkit.cli import copy as _copy  # noqa: F401 - registers its commands
from zarrkit.cli import inspect as _inspect  # noqa: F401 - registers its commands
from zarrkit.cli import serve as _serve  # noqa: F401 - registers its commands
from zarrkit.cli.app import main

__all__ = ["main"]
