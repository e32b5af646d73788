"""Reading codec configurations: one checker per kind of field, shared by the v2 (numcodecs
``{"id": ...}``) and v3 (``{"name": ..., "configuration": ...}``) codecs.

Every checker raises MetadataError naming the codec and the field, so a configuration that
would fail later, when a chunk is encoded or decoded, is refused when the array is opened.

>>> config_int("zlib", {"level": 10}, "level", low=-1, high=9)
Traceback (most recent call last):
zarrkit.errors.MetadataError: codec 'zlib': 'level' must be an integer in [-1, 9], found 10
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrkit.errors import MetadataError

INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1


def check_keys(name: str, configuration: Mapping[str, Any], allowed: set[str]) -> None:
    """Refuse configuration members a codec does not define.

    >>> check_keys("gzip", {"level": 1, "lvl": 2}, {"level"})
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'gzip': unknown configuration member(s) ['lvl']
    """
    unknown = sorted(set(configuration) - allowed)
    if unknown:
        raise MetadataError(f"codec {name!r}: unknown configuration member(s) {unknown}")


def config_int(
    name: str,
    configuration: Mapping[str, Any],
    key: str,
    default: int | None = None,
    *,
    low: int | None = None,
    high: int | None = None,
) -> int:
    """An integer member, checked against an inclusive range.

    >>> config_int("gzip", {"level": 10}, "level", low=0, high=9)
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'gzip': 'level' must be an integer in [0, 9], found 10
    """
    value = configuration.get(key, default)
    bad = (
        value is None
        or isinstance(value, bool)
        or not isinstance(value, int | np.integer)
        or (low is not None and value < low)
        or (high is not None and value > high)
    )
    if bad:
        bounds = f" in [{low}, {high}]" if low is not None and high is not None else ""
        if low is not None and high is None:
            bounds = f" >= {low}"
        found = "nothing" if key not in configuration else repr(value)
        raise MetadataError(f"codec {name!r}: {key!r} must be an integer{bounds}, found {found}")
    return int(value)  # type: ignore[arg-type]


def config_choice(
    name: str, configuration: Mapping[str, Any], key: str, choices: tuple[Any, ...],
    default: Any = None,
) -> Any:
    """A member that must be one of ``choices`` (strings, or None for "absent").

    >>> config_choice("sharding_indexed", {}, "index_location", ("start", "end"), "end")
    'end'
    """
    value = configuration.get(key, default)
    for choice in choices:
        # Compared with the type: ``in`` alone would let True match 1 and 1.0 match 1.
        if type(value) is type(choice) and value == choice:
            return value
    found = "nothing" if key not in configuration else repr(value)
    raise MetadataError(f"codec {name!r}: {key!r} must be one of {list(choices)}, found {found}")


def config_bool(name: str, configuration: Mapping[str, Any], key: str, default: bool) -> bool:
    """A boolean member.

    >>> config_bool("zstd", {"checksum": 1}, "checksum", False)
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'zstd': 'checksum' must be a boolean, found 1
    """
    value = configuration.get(key, default)
    if not isinstance(value, bool):
        raise MetadataError(f"codec {name!r}: {key!r} must be a boolean, found {value!r}")
    return value


def config_number(name: str, configuration: Mapping[str, Any], key: str,
                  default: float | None = None) -> float:
    """A finite JSON number member (int or float, not a boolean).

    >>> config_number("fixedscaleoffset", {"scale": "NaN"}, "scale")
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'fixedscaleoffset': 'scale' must be a finite number, ...
    """
    value = configuration.get(key, default)
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not math.isfinite(value)):
        raise MetadataError(f"codec {name!r}: {key!r} must be a finite number, found {value!r}")
    return value


def config_dtype(name: str, configuration: Mapping[str, Any], key: str, kinds: str,
                 default: Any = None) -> np.dtype[Any]:
    """A member naming a plain numpy data type (a string such as ``"<f8"``) of one of the
    numpy ``kinds``; structured, object and platform-sized types are refused unless a kind
    says otherwise.

    >>> config_dtype("delta", {"dtype": "|O"}, "dtype", "iuf")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: codec 'delta': 'dtype' must be a data type of kind 'iuf', ...
    """
    value = configuration.get(key, default)
    dtype = None
    if isinstance(value, str):
        try:
            dtype = np.dtype(value)
        except (TypeError, ValueError, SyntaxError):
            dtype = None
    if (dtype is None or dtype.kind not in kinds or dtype.fields is not None
            or dtype.subdtype is not None or dtype.itemsize == 0
            # long double and its complex: their size and layout depend on the platform
            or (dtype.kind == "f" and dtype.itemsize > 8)
            or (dtype.kind == "c" and dtype.itemsize > 16)):
        raise MetadataError(
            f"codec {name!r}: {key!r} must be a data type of kind {kinds!r}, found {value!r}"
        )
    return dtype
