"""Reading and writing metadata JSON: the one place documents are parsed and serialised.

Documents are written sorted, indented by 4 and free of NaN/Infinity (which are not JSON);
numpy scalars become plain numbers.

>>> dump_json({"b": 1, "a": [1, 2]})
b'{\\n    "a": [\\n        1,\\n        2\\n    ],\\n    "b": 1\\n}'
>>> load_json(b'{"a": 1}', key="x/.zattrs")
{'a': 1}
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from zarrkit.errors import MetadataError


def _default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def dump_json(document: Any) -> bytes:
    """Serialise a metadata document (sorted keys, 4-space indent, strict JSON).

    >>> dump_json({"x": np.int64(3)})
    b'{\\n    "x": 3\\n}'
    """
    try:
        text = json.dumps(
            document, indent=4, sort_keys=True, ensure_ascii=True, allow_nan=False,
            default=_default,
        )
    except ValueError as e:
        raise MetadataError(f"metadata cannot hold NaN or Infinity as numbers: {e}") from e
    return text.encode("utf-8")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def load_json(data: bytes | str, *, key: str) -> Any:
    """Parse a metadata document, raising MetadataError that names ``key`` on bad input.

    >>> load_json(b"{", key="a/.zarray")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: a/.zarray: malformed JSON: Expecting property name ...
    """
    try:
        return json.loads(data, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as e:
        raise MetadataError(f"{key}: malformed JSON: {e}") from e


def load_json_object(data: bytes | str, *, key: str) -> dict[str, Any]:
    """Parse a document that must be a JSON object.

    >>> load_json_object(b"[]", key=".zattrs")
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: .zattrs: expected a JSON object, found list
    """
    document = load_json(data, key=key)
    if not isinstance(document, dict):
        raise MetadataError(f"{key}: expected a JSON object, found {type(document).__name__}")
    return document
