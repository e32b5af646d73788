"""Request paths to store keys: the server's one check that a URL names a key of the store.

Each ``/``-separated segment of the raw (still percent-encoded) path is decoded on its own,
so an encoded slash (``%2f``) cannot join segments, and the key is then held to
:func:`zarrkit.storage.keys.validate_key` (no ``..``, ``.``, empty segments, backslashes,
NUL or absolute paths). Stores run the same check again, and a directory store also refuses
symbolic links out of its root.

>>> key_from_path("/group/array/c/0/0")
'group/array/c/0/0'
>>> key_from_path("/%2e%2e/etc/passwd")
Traceback (most recent call last):
zarrkit.errors.InvalidKeyError: invalid store key '../etc/passwd': '..' segment
"""

from __future__ import annotations

from urllib.parse import unquote

from zarrkit.errors import InvalidKeyError
from zarrkit.storage.keys import validate_key


def key_from_path(raw_path: str) -> str:
    """The store key a raw request path names (InvalidKeyError if it names none).

    >>> key_from_path("/a%20b/.zattrs")
    'a b/.zattrs'
    >>> key_from_path("/a%2fb")
    Traceback (most recent call last):
    zarrkit.errors.InvalidKeyError: invalid store key 'a%2fb': encoded '/' in a segment
    """
    if not raw_path.startswith("/"):
        raise InvalidKeyError(f"invalid request path {raw_path!r}: not absolute")
    raw_key = raw_path[1:]
    segments = []
    for raw_segment in raw_key.split("/"):
        try:
            segment = unquote(raw_segment, errors="strict")
        except UnicodeDecodeError as e:
            raise InvalidKeyError(f"invalid store key {raw_key!r}: not UTF-8 ({e})") from e
        if "/" in segment:
            raise InvalidKeyError(f"invalid store key {raw_key!r}: encoded '/' in a segment")
        segments.append(segment)
    return validate_key("/".join(segments))
