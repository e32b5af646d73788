"""Logical paths of nodes in a hierarchy: the one path normaliser.

As the v2 spec requires: backslashes become ``/``, leading, trailing and repeated slashes are
dropped, and a ``.`` or ``..`` segment is an error.

>>> normalize_path("\\\\foo//bar/")
'foo/bar'
>>> normalize_path("a/../b")
Traceback (most recent call last):
zarrkit.errors.InvalidKeyError: invalid path 'a/../b': '..' segments are not allowed
"""

from __future__ import annotations

import re

from zarrkit.errors import InvalidKeyError

_SLASHES = re.compile("/+")
# Paths (and store keys) made of word characters, dots and dashes, with no "." or ".."
# segment, are already normal; one match settles them in well under a microsecond.
_PLAIN_SEGMENT = r"(?!\.\.?(?:/|\Z))[\w.\-]+"
PLAIN_PATH = re.compile(rf"{_PLAIN_SEGMENT}(?:/{_PLAIN_SEGMENT})*", re.ASCII)


def normalize_path(path: str | None) -> str:
    """Normalise a logical node path; the root is ``""``.

    >>> normalize_path(None), normalize_path("/")
    ('', '')
    """
    if path is None:
        return ""
    if type(path) is str and PLAIN_PATH.fullmatch(path) is not None:
        return path
    if not isinstance(path, str):
        raise InvalidKeyError(f"a path must be a str, not {type(path).__name__}")
    if "\x00" in path:
        raise InvalidKeyError(f"invalid path {path!r}: NUL character")
    normalized = _SLASHES.sub("/", path.replace("\\", "/")).strip("/")
    for segment in normalized.split("/"):
        if segment in (".", ".."):
            raise InvalidKeyError(f"invalid path {path!r}: {segment!r} segments are not allowed")
    return normalized


def join_path(*parts: str) -> str:
    """Join normalised path parts, skipping empty ones.

    >>> join_path("", "a", "b/c")
    'a/b/c'
    """
    return "/".join(p for p in parts if p)


def key_prefix(path: str) -> str:
    """The store key prefix of a node: ``""`` for the root, else ``path + "/"``.

    >>> key_prefix("a/b"), key_prefix("")
    ('a/b/', '')
    """
    return f"{path}/" if path else ""


def ancestors(path: str) -> list[str]:
    """The paths of a node's ancestors, root first.

    >>> ancestors("a/b/c")
    ['', 'a', 'a/b']
    """
    if not path:
        return []
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts))]
