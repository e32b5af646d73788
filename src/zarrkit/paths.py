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
_PLAIN_SEGMENT = r"(?!\.\.?(?:/|\n|\Z))[\w.\-]+"
_PLAIN = rf"{_PLAIN_SEGMENT}(?:/{_PLAIN_SEGMENT})*"
PLAIN_PATH = re.compile(_PLAIN, re.ASCII)
# The same rule for many paths at once, one per line: one match for a snapshot's 1,000.
_PLAIN_LINES = re.compile(rf"{_PLAIN}(?:\n{_PLAIN})*", re.ASCII)


def all_plain(paths: list[str]) -> bool:
    r"""Whether every path of ``paths`` is plain (as :data:`PLAIN_PATH` tells, so already
    normal), with one match over them all; False for none.

    >>> all_plain(["a", "a/b-1.x"]), all_plain(["a", "a/./b"]), all_plain(["a\nb"])
    (True, False, False)
    """
    joined = "\n".join(paths)
    # A newline inside a path would make two plain-looking lines of one.
    return (joined.count("\n") == len(paths) - 1
            and _PLAIN_LINES.fullmatch(joined) is not None)


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


def check_node_name(name: object, zarr_format: int) -> str:
    """Check that ``name`` can name a member of a group: a non-empty string without ``/``
    or NUL that is not ``.`` or ``..``; format 3 also reserves names starting with ``__``.

    >>> check_node_name("a.b", 3)
    'a.b'
    >>> check_node_name("__x", 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.InvalidKeyError: invalid node name '__x': names starting with '__' are ...
    """
    if not isinstance(name, str):
        raise InvalidKeyError(f"a node name must be a str, not {type(name).__name__}")
    problem = (
        "it is empty" if not name
        else "'.' and '..' are not node names" if name in (".", "..")
        else "it contains '/'" if "/" in name
        else "it contains a NUL character" if "\x00" in name
        else "names starting with '__' are reserved in Zarr v3"
        if zarr_format == 3 and name.startswith("__")
        else None
    )
    if problem is not None:
        raise InvalidKeyError(f"invalid node name {name!r}: {problem}")
    return name
