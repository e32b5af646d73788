"""Reading and writing metadata JSON: the one place documents are parsed and serialised.

Documents are written as zarr-python writes them (keys in the order given, indented by 2, so
the same node is the same bytes from either library) and free of NaN/Infinity (which are not
JSON); numpy scalars become plain numbers. Reading and writing both refuse documents nested deeper
than :data:`MAX_JSON_DEPTH`, so whatever zarrkit writes it can read back, and no recursive
walk of a document (parsing, copying, encoding) can exhaust the stack.

>>> dump_json({"b": 1, "a": [1, 2]})
b'{\\n  "b": 1,\\n  "a": [\\n    1,\\n    2\\n  ]\\n}'
>>> load_json(b'{"a": 1}', key="x/.zattrs")
{'a': 1}
"""

from __future__ import annotations

import json
from typing import Any, TypeGuard, cast

import numpy as np

from zarrkit.config import config
from zarrkit.errors import MetadataError

try:
    import orjson as _orjson
except ImportError:  # the standard parser does it all, only slower
    _orjson = None  # type: ignore[assignment]
try:  # one pass over the text for the depth limit and long numbers (see load_json)
    from zarrkit._engine import json_scan as _json_scan
except ImportError:  # the engine is not built (or predates it): two Python walks instead,
    _json_scan = None  # type: ignore[assignment]  # as with config.engine = "python"

# Far deeper than any real metadata (OME-Zarr attributes nest under 10 levels), far
# shallower than the interpreter's recursion limit: the recursive steps that read and write
# documents (this module's encoder, copies, nested data types) each use one or two frames per
# level, and the caller's own frames need room too.
MAX_JSON_DEPTH = 128


def _default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# The standard library encodes indented JSON in pure Python, one generator per container
# (~50 us for an array's zarr.json): creating 1000 arrays spent more time there than in
# writing the files. This encoder writes the same text in one recursive pass and uses the
# C string escaper; ``test_hierarchy_speed_behaviour`` checks it against ``json.dumps``.
_INDENT = "  "
_escape = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]
_CONSTANTS: dict[Any, str] = {None: "null", True: "true", False: "false"}


def _float_text(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("Out of range float values are not JSON compliant")
    return float.__repr__(value)


def _key_text(key: Any) -> str:
    """A dict key as JSON text: json.dumps' rules (strings, numbers, bools, null)."""
    if type(key) is str or isinstance(key, str):
        return _escape(key)
    if isinstance(key, bool) or key is None:
        return '"' + _CONSTANTS[key] + '"'
    if isinstance(key, int):
        return '"' + int.__repr__(key) + '"'
    if isinstance(key, float):
        return '"' + _float_text(key) + '"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _leaf_text(value: Any) -> str | None:
    """The text of a scalar of an exact JSON type, or None for anything else (containers,
    subclasses, numpy scalars): those take :func:`_encode`'s general path."""
    kind = type(value)
    if kind is str:
        return _escape(value)  # type: ignore[no-any-return]
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return _float_text(value)
    if value is None or value is True or value is False:
        return _CONSTANTS[value]
    return None


def _encode(value: Any, depth: int, parts: list[str], seen: set[int], indent: str | None
            ) -> None:
    """Append the text of ``value`` at nesting ``depth`` to ``parts`` (json.dumps' order of
    type checks, so subclasses such as numpy.float64 encode as their base type)."""
    if isinstance(value, str):
        parts.append(_escape(value))
    elif value is None or value is True or value is False:
        parts.append(_CONSTANTS[value])
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, float):
        parts.append(_float_text(value))
    elif isinstance(value, (list, tuple, dict)):
        _encode_container(value, depth, parts, seen, indent)
    else:
        marker = id(value)
        if marker in seen:
            raise ValueError("Circular reference detected")
        seen.add(marker)
        _encode(_default(value), depth, parts, seen, indent)
        seen.discard(marker)


def _encode_container(value: list[Any] | tuple[Any, ...] | dict[Any, Any], depth: int,
                      parts: list[str], seen: set[int], indent: str | None) -> None:
    if depth >= MAX_JSON_DEPTH:
        raise _TooDeep(f"metadata nests deeper than {MAX_JSON_DEPTH} levels")
    if not value:
        parts.append("{}" if isinstance(value, dict) else "[]")
        return
    marker = id(value)
    if marker in seen:
        raise ValueError("Circular reference detected")
    seen.add(marker)
    if indent is None:  # json.dumps' compact form: ", " and ": " on one line
        inner, separator, outer = "", ", ", ""
    else:
        inner = "\n" + indent * (depth + 1)
        separator = "," + inner
        outer = "\n" + indent * depth
    if isinstance(value, dict):
        lead = "{" + inner
        for key, item in value.items():
            text = _leaf_text(item)
            if text is None:
                parts.append(lead + _key_text(key) + ": ")
                _encode(item, depth + 1, parts, seen, indent)
            else:
                parts.append(lead + _key_text(key) + ": " + text)
            lead = separator
        parts.append(outer + "}")
    else:
        lead = "[" + inner
        for item in value:
            text = _leaf_text(item)
            if text is None:
                parts.append(lead)
                _encode(item, depth + 1, parts, seen, indent)
            else:
                parts.append(lead + text)
            lead = separator
        parts.append(outer + "]")
    seen.discard(marker)


class _TooDeep(Exception):
    """Raised inside the encoder when a document nests deeper than MAX_JSON_DEPTH."""


def dump_json(document: Any, *, compact: bool = False) -> bytes:
    """Serialise a metadata document (keys in order, 2-space indent, strict JSON): the text
    of ``json.dumps(document, indent=2, allow_nan=False)``, only faster; ``compact`` writes
    it on one line, as ``json.dumps(document, allow_nan=False)`` (zarr-python's form of a
    format-2 ``.zmetadata``).

    >>> dump_json({"x": np.int64(3)})
    b'{\\n  "x": 3\\n}'
    >>> dump_json({"x": [1, {"y": None}]}, compact=True)
    b'{"x": [1, {"y": null}]}'
    >>> dump_json({"x": float("nan")})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: metadata cannot hold NaN or Infinity as numbers: ...
    >>> nested: list[Any] = []
    >>> for _ in range(MAX_JSON_DEPTH):
    ...     nested = [nested]
    >>> dump_json({"x": nested})
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: metadata nests deeper than 128 levels
    """
    parts: list[str] = []
    try:
        _encode(document, 0, parts, set(), None if compact else _INDENT)
    except _TooDeep as e:
        raise MetadataError(str(e)) from None
    except RecursionError as e:  # a non-JSON value whose _default form recurses forever
        raise MetadataError(f"metadata nests too deeply to be written: {e}") from None
    except ValueError as e:
        raise MetadataError(f"metadata cannot hold NaN or Infinity as numbers: {e}") from e
    return "".join(parts).encode("ascii")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def json_depth_exceeds(document: Any, limit: int) -> bool:
    """Whether ``document`` nests containers more than ``limit`` levels deep. Walked a
    level at a time, without recursion, so the check itself cannot overflow (and a 1.4 MB
    consolidated document takes 2 ms, where a stack of (node, depth) pairs took 6).

    >>> json_depth_exceeds({"a": [[1]]}, 3), json_depth_exceeds({"a": [[1]]}, 2)
    (False, True)
    """
    level = [document] if type(document) is dict or type(document) is list else []
    depth = 1
    while level:
        if depth > limit:
            return True
        below = []
        for value in level:
            for child in (value.values() if type(value) is dict else value):
                if type(child) is dict or type(child) is list:
                    below.append(child)
        level = below
        depth += 1
    return False


def _container_marks(data: bytes | str) -> int:
    """An upper bound on the nesting depth of a JSON text: its opening brackets (also
    those inside strings, which only makes the bound looser)."""
    if isinstance(data, str):
        return data.count("[") + data.count("{")
    return data.count(b"[") + data.count(b"{")


def load_json(data: bytes | str, *, key: str, omit: str | None = None) -> Any:
    """Parse a metadata document, raising MetadataError that names ``key`` on bad input,
    nesting deeper than :data:`MAX_JSON_DEPTH` included.

    ``omit`` names a member of a top-level object to leave out of the result. The engine's
    scan finds where its value lies, and a large one is then not parsed at all (a root
    group's consolidated metadata, opened without it: 1 MB for 1,000 arrays). The depth and
    long-number checks still cover the whole text; a syntax error inside the value left
    out goes unnoticed, as it would have no effect.

    >>> load_json(b"{", key="a/.zarray")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: a/.zarray: malformed JSON: Expecting property name ...
    >>> load_json(b"[" * 100000, key="zarr.json")
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: zarr.json: metadata nests deeper than 128 levels
    """
    scan = (_json_scan(data, omit) if _is_utf8_text(data) and _json_scan is not None
            and config.engine != "python" else None)
    if scan is not None and scan[2] is not None and scan[2][1] - scan[2][0] > _WORTH_OMITTING:
        start, end = scan[2]
        text = cast(bytes, data)  # the scan reads bytes only (_is_utf8_text)
        data = b"".join((text[:start], b"null", text[end:]))
    long_number = scan[1] >= _LONG_DIGITS if scan is not None else _has_long_number(data)
    document = _UNPARSED if long_number else _fast_loads(data)
    if document is _UNPARSED:
        document = _standard_loads(data, key)
    if scan is not None:
        too_deep = scan[0] > MAX_JSON_DEPTH
    else:
        # Counting brackets costs nanoseconds; only a document with many is walked.
        too_deep = (_container_marks(data) > MAX_JSON_DEPTH
                    and json_depth_exceeds(document, MAX_JSON_DEPTH))
    if too_deep:
        raise MetadataError(f"{key}: metadata nests deeper than {MAX_JSON_DEPTH} levels")
    if omit is not None and isinstance(document, dict):
        document.pop(omit, None)
    return document


# Values shorter than this are parsed and dropped: cutting them out costs a copy of the text.
_WORTH_OMITTING = 1 << 12


def _is_utf8_text(data: bytes | str) -> TypeGuard[bytes]:
    """Whether ``data`` is bytes the one-pass scan reads right: UTF-8 (whose multi-byte
    characters hold no ASCII byte), not the UTF-16 or UTF-32 that the standard parser also
    accepts, told apart as it tells them (a NUL among the first bytes, or a BOM)."""
    return (type(data) is bytes and b"\0" not in data[:4]
            and not data.startswith((b"\xff\xfe", b"\xfe\xff")))


_UNPARSED = object()
# Digits to "0", everything else to " ": then 19 digits in a row are one substring search
# (a regular expression took 15 ms over a 1.4 MB consolidated document, this 1).
_DIGITS_ONLY = bytes(ord("0") if chr(i).isdigit() and i < 128 else ord(" ") for i in range(256))
_LONG_DIGITS = 19
_LONG_RUN = b"0" * _LONG_DIGITS


def _has_long_number(data: bytes | str) -> bool:
    """Whether ``data`` holds 19 digits in a row (in a number; in a string it only costs
    the fast parser)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    return _LONG_RUN in raw.translate(_DIGITS_ONLY)


def _fast_loads(data: bytes | str) -> Any:
    """``data`` parsed by orjson (4-5x the standard parser's speed on metadata, where
    opening 1,000 arrays parses 1,000 documents), or _UNPARSED for anything it refuses:
    the standard parser then decides, so what is accepted, and every error message, stay
    the standard parser's (orjson refuses more: text that is not UTF-8, escaped lone
    surrogates, very deep nesting; and NaN, which is refused anyway). A document with a
    number of 19 digits or more goes to the standard parser too: orjson reads integers
    beyond 64 bits as floats, where it should keep them exact (the caller checks)."""
    if _orjson is None:
        return _UNPARSED
    try:
        return _orjson.loads(data)
    except _orjson.JSONDecodeError:
        return _UNPARSED


def _standard_loads(data: bytes | str, key: str) -> Any:
    try:
        return json.loads(data, parse_constant=_reject_constant)
    except RecursionError:
        # The C parser gives up at the interpreter's recursion limit; a shallower limit of
        # our own applies below. ``from None``: the chained traceback would be as deep.
        raise MetadataError(
            f"{key}: metadata nests deeper than {MAX_JSON_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise MetadataError(f"{key}: malformed JSON: {e}") from e


def load_json_object(data: bytes | str, *, key: str, omit: str | None = None
                     ) -> dict[str, Any]:
    """Parse a document that must be a JSON object (``omit``: see :func:`load_json`).

    >>> load_json_object(b"[]", key=".zattrs")
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: .zattrs: expected a JSON object, found list
    """
    document = load_json(data, key=key, omit=omit)
    if not isinstance(document, dict):
        raise MetadataError(f"{key}: expected a JSON object, found {type(document).__name__}")
    return document


def content_key(value: Any) -> bytes | None:
    """A compact dump of a JSON value to key a cache on its content (object members in
    their order), or None when there is no fast encoder or it refuses the value (integers
    beyond 64 bits, objects that are not JSON). It tells true, 1 and 1.0 apart, but not a
    tuple from a list, and NaN and infinities dump as null: a cache confirms a hit with
    ``==`` on the values themselves.

    >>> content_key({"b": [1, 2.0], "a": None}) if _orjson else b'{"b":[1,2.0],"a":null}'
    b'{"b":[1,2.0],"a":null}'
    """
    if _orjson is None:
        return None
    try:
        return _orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None


def as_json_lists(value: Any) -> Any:
    """``value`` with tuples as lists, as JSON gives a document back: zarr-python's
    ``metadata.to_dict()`` holds tuples where a stored document has lists.

    >>> as_json_lists({"shape": (2,), "codecs": ({"name": "bytes"},)})
    {'shape': [2], 'codecs': [{'name': 'bytes'}]}
    """
    if isinstance(value, tuple | list):
        return [as_json_lists(item) for item in value]
    if isinstance(value, dict):
        return {key: as_json_lists(item) for key, item in value.items()}
    return value
