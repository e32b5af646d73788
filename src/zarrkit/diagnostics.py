"""Diagnostics as zarr-python offers them: :func:`print_debug_info` (versions for a bug
report) and the logging helpers :func:`set_log_level` and :func:`set_format`, which act on
the ``zarrkit`` logger (zarrkit's modules log under it, as ``zarrkit.server``).

>>> set_log_level("WARNING")
>>> logging.getLogger("zarrkit").level == logging.WARNING
True
"""

from __future__ import annotations

import functools
import logging
import platform
from importlib.metadata import PackageNotFoundError, version
from typing import Literal

__all__ = ["print_debug_info", "set_format", "set_log_level"]

_logger = logging.getLogger("zarrkit")

_REQUIRED = ["numpy", "numcodecs", "ml_dtypes", "crc32c", "zstandard", "pydantic", "urllib3",
             "click", "rich"]
# The packages behind zarrkit's optional features (extras in pyproject.toml).
_OPTIONAL = ["fsspec", "s3fs", "lmdb", "dask", "xarray", "scipy", "anndata", "aiohttp",
             "Pillow", "zarr", "tensorstore"]


def _print_packages(packages: list[str]) -> None:
    missing = []
    for package in packages:
        try:
            print(f"{package}: {version(package)}")
        except PackageNotFoundError:
            missing.append(package)
    if missing:
        print("\n**Not Installed:**")
        for package in missing:
            print(package)


def print_debug_info() -> None:
    """Print the platform, Python's version, zarrkit's and those of the packages it uses
    (required, then optional, then the optional ones not installed), for a bug report.

    >>> print_debug_info()  # doctest: +ELLIPSIS
    platform: ...
    python: ...
    zarrkit: ...
    <BLANKLINE>
    **Required dependencies:**
    numpy: ...
    """
    from zarrkit import __version__

    print(f"platform: {platform.platform()}")
    print(f"python: {platform.python_version()}")
    print(f"zarrkit: {__version__}\n")
    print("**Required dependencies:**")
    _print_packages(_REQUIRED)
    print("\n**Optional dependencies:**")
    _print_packages(_OPTIONAL)


@functools.cache
def _handler() -> logging.Handler:
    # Made and attached on first use, once: the helpers below configure this one handler.
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT))
    _logger.addHandler(handler)
    return handler


def set_log_level(
    level: Literal["NOTSET", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
) -> None:
    """Set the level of the ``zarrkit`` logger and of its stream handler (made, writing to
    standard error, on first use).

    >>> set_log_level("ERROR"); _handler().level == logging.ERROR
    True
    """
    _logger.setLevel(level)
    _handler().setLevel(level)


def set_format(log_format: str) -> None:
    """Set the format (a :class:`logging.Formatter` format string) of the messages that the
    ``zarrkit`` logger's stream handler writes.

    >>> set_format("%(name)s: %(message)s"); _handler().formatter._fmt
    '%(name)s: %(message)s'
    """
    _handler().setFormatter(logging.Formatter(fmt=log_format))
