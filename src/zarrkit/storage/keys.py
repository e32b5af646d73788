"""Store key validation: the one check every store runs before any I/O.

A key is a ``/``-separated ASCII-safe string naming one value. Keys are relative (no leading
``/``), have no empty, ``.`` or ``..`` segments, no backslashes and no NUL, so that no store
can be tricked into touching anything outside itself.

>>> validate_key("group/array/.zarray")
'group/array/.zarray'
"""

from __future__ import annotations

from collections.abc import Sequence

from zarrkit.errors import InvalidKeyError
from zarrkit.paths import PLAIN_PATH, all_plain

# Keys in the plain form of paths are valid (no drive letter is possible without ":");
# anything else takes the detailed checks, which also explain a refusal.
_PLAIN_KEY = PLAIN_PATH


def validate_key(key: str) -> str:
    """Return ``key`` unchanged if it is a valid store key, else raise InvalidKeyError.

    >>> validate_key("a/0.0")
    'a/0.0'
    >>> validate_key("../etc/passwd")
    Traceback (most recent call last):
    zarrkit.errors.InvalidKeyError: invalid store key '../etc/passwd': '..' segment
    """
    if isinstance(key, str) and _PLAIN_KEY.fullmatch(key) is not None:
        return key
    return check_key_in_detail(key)


def validate_keys(keys: Sequence[str]) -> None:
    """Raise InvalidKeyError for the first invalid key of ``keys``: :func:`validate_key`
    for each, with one match over them all when all are plain (a batch of chunk keys).

    >>> validate_keys(["c/0/0", "c/0/1"])
    >>> validate_keys(["c/0/0", "c/../1"])
    Traceback (most recent call last):
    zarrkit.errors.InvalidKeyError: invalid store key 'c/../1': '..' segment
    """
    try:
        if len(keys) > 1 and all_plain(list(keys)):
            return
    except TypeError:  # a key that is not a str: named below
        pass
    for key in keys:
        validate_key(key)


def check_key_in_detail(key: str) -> str:
    """:func:`validate_key` without its fast path: every rule checked one by one.

    >>> check_key_in_detail("a//b")
    Traceback (most recent call last):
    zarrkit.errors.InvalidKeyError: invalid store key 'a//b': empty segment
    """
    if not isinstance(key, str):
        raise InvalidKeyError(f"store key must be a str, not {type(key).__name__}: {key!r}")
    if not key:
        raise InvalidKeyError("invalid store key '': empty")
    if "\x00" in key:
        raise InvalidKeyError(f"invalid store key {key!r}: NUL character")
    if "\\" in key:
        raise InvalidKeyError(f"invalid store key {key!r}: backslash")
    if key.startswith("/"):
        raise InvalidKeyError(f"invalid store key {key!r}: absolute path")
    if len(key) > 1 and key[1] == ":" and key[0].isalpha():
        raise InvalidKeyError(f"invalid store key {key!r}: drive letter")
    for segment in key.split("/"):
        if segment == "":
            raise InvalidKeyError(f"invalid store key {key!r}: empty segment")
        if segment in (".", ".."):
            raise InvalidKeyError(f"invalid store key {key!r}: {segment!r} segment")
    return key


def validate_prefix(prefix: str) -> str:
    """Validate a listing or deletion prefix: ``""`` or a key prefix ending in ``/``.

    >>> validate_prefix("")
    ''
    >>> validate_prefix("a/b/")
    'a/b/'
    """
    if prefix == "":
        return prefix
    validate_key(prefix[:-1] if prefix.endswith("/") else prefix)
    return prefix
