"""Consolidated metadata: the v2 ``.zmetadata`` document and the v3 inline
``consolidated_metadata`` member of a group's ``zarr.json``.

Both map node paths to the documents of those nodes. The readers of a snapshot use its
entries as documents without parsing them again, so their structure is checked here, where
the snapshot is parsed: every entry is a JSON object under a well-formed path.

>>> parse_consolidated_v2({"zarr_consolidated_format": 1,
...     "metadata": {".zgroup": {"zarr_format": 2}, "a/.zattrs": {"x": 1}}})
{'.zgroup': {'zarr_format': 2}, 'a/.zattrs': {'x': 1}}
>>> parse_consolidated_v2({"metadata": {"a/.zarray": 5}}, key="g/.zmetadata")
Traceback (most recent call last):
zarrkit.errors.MetadataError: g/.zmetadata: entry 'a/.zarray' must be a JSON object, found int
"""

from __future__ import annotations

from typing import Any

from zarrkit.errors import InvalidKeyError, MetadataError
from zarrkit.paths import all_plain, normalize_path

ZMETADATA = ".zmetadata"
_V2_DOCUMENTS = (".zarray", ".zgroup", ".zattrs")


def _check_path(path: str, entry: str, key: str) -> None:
    """Refuse a node path that is not already in normal form (empty, ``.``/``..`` or
    repeated-slash segments, backslashes): every reader joins it to store keys as is."""
    try:
        normal = normalize_path(path)
    except InvalidKeyError as e:
        raise MetadataError(f"{key}: entry {entry!r} has an invalid path: {e}") from e
    if normal != path:
        raise MetadataError(f"{key}: entry {entry!r} has an invalid path {path!r}")


def _check_entry(entry: str, document: Any, key: str) -> None:
    if not isinstance(document, dict):
        raise MetadataError(
            f"{key}: entry {entry!r} must be a JSON object, found {type(document).__name__}"
        )


def parse_consolidated_v2(document: Any, key: str = ZMETADATA) -> dict[str, dict[str, Any]]:
    """The ``metadata`` map of a ``.zmetadata`` document, checked: a
    ``zarr_consolidated_format`` of 1 when given, and entries named ``<path>/.zarray``,
    ``.zgroup`` or ``.zattrs`` (no path for the group itself) holding JSON objects.

    >>> parse_consolidated_v2({"metadata": {"a/.zarray/x": {}}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: .zmetadata: entry 'a/.zarray/x' is not a .zarray, .zgroup ...
    >>> parse_consolidated_v2({"metadata": []})
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: .zmetadata: 'metadata' must be a JSON object, found list
    """
    if not isinstance(document, dict):
        raise MetadataError(f"{key}: expected a JSON object, found {type(document).__name__}")
    version = document.get("zarr_consolidated_format", 1)
    if version != 1 or isinstance(version, bool):
        raise MetadataError(f"{key}: unsupported zarr_consolidated_format {version!r}")
    entries = document.get("metadata")
    if not isinstance(entries, dict):
        raise MetadataError(
            f"{key}: 'metadata' must be a JSON object, found {type(entries).__name__}"
        )
    for entry, value in entries.items():
        path, _, name = entry.rpartition("/")
        if name not in _V2_DOCUMENTS:
            raise MetadataError(
                f"{key}: entry {entry!r} is not a .zarray, .zgroup or .zattrs document"
            )
        if path:
            _check_path(path, entry, key)
        elif entry.startswith("/"):
            raise MetadataError(f"{key}: entry {entry!r} has an invalid path ''")
        _check_entry(entry, value, key)
    return entries


def check_consolidated_v3(value: Any) -> None:
    """Check a group's inline ``consolidated_metadata`` (None: there is none): kind
    ``inline`` and a ``metadata`` object mapping relative node paths to ``zarr.json``
    objects. A nested group's own snapshot is checked when that group is parsed.

    >>> check_consolidated_v3({"kind": "inline", "metadata": {"a": {}, "a//b": {}}})
    Traceback (most recent call last):
    zarrkit.errors.MetadataError: consolidated_metadata: entry 'a//b' has an invalid path 'a//b'
    """
    if value is None:
        return
    where = "consolidated_metadata"
    if not isinstance(value, dict):
        raise MetadataError(f"{where} must be an object or null, found {value!r}")
    if value.get("kind") != "inline":
        raise MetadataError(f"{where}: kind must be 'inline', found {value.get('kind')!r}")
    entries = value.get("metadata")
    if not isinstance(entries, dict):
        raise MetadataError(f"{where}: metadata must map paths to zarr.json objects")
    if all_plain(list(entries)) and all(type(d) is dict for d in entries.values()):
        return  # the checks below, for all at once (1,000 entries: 1 ms one by one)
    for path, document in entries.items():
        if not path:
            raise MetadataError(f"{where}: entry '' has an invalid path ''")
        _check_path(path, path, where)
        _check_entry(path, document, where)
