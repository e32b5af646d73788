"""The specifications (schema) cached in an hdmf-zarr file.

hdmf-zarr caches the namespaces a file was written with under the group that the root's
``.specloc`` attribute names (``"specifications"`` by default): one group per namespace
and version, ``/specifications/<namespace>/<version>``, holding one scalar dataset per
source, named after the source file without its extension (``namespace``, ``nwb.base``,
``nwb.ecephys``...), whose single element is the source as JSON text.

Each is stored as hdmf-zarr's ``ZarrSpecWriter`` writes it. hdmf-zarr 0.13 (Zarr v2): an
object array of shape ``(1,)`` and chunks ``(1,)``, no compressor, numcodecs' JSON object
codec (``json2``) as its filter and the attribute ``zarr_dtype: "scalar"``; the text is
compact JSON (``","`` and ``":"`` separators, keys in the given order), so the chunk is
the same bytes. (zarrkit's ``.zarray`` also names the dimension separator, and its fill
value is ``""`` where hdmf-zarr's is ``0``: no element is ever unwritten.) hdmf-zarr 0.14
(Zarr v3): a string array of shape ``()``, default codecs, no attributes, holding the
same text. Both are read (and so is a v3 string array of shape ``(1,)``, as zarrkit wrote
before it knew 0.14). The namespace source holds ``{"namespaces": [...]}``. hdmf-zarr 0.14
also reads a ``.specloc`` written as a reference attribute (``{"_REFERENCE": {...}}``).

>>> import zarrkit as zk
>>> root = zk.group({}, zarr_format=2)
>>> _ = write_specifications(root, "core", "2.11.0",
...     {"namespace": {"namespaces": [{"name": "core", "version": "2.11.0"}]},
...      "nwb.base": '{"groups":[]}'})
>>> root.attrs[".specloc"]
'specifications'
>>> read_specifications(root)["core"]["2.11.0"]["nwb.base"]
{'groups': []}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrkit.errors import MetadataError, NodeNotFoundError
from zarrkit.hdmf.attributes import SPEC_LOC_ATTRIBUTE
from zarrkit.hdmf.dtypes import SCALAR
from zarrkit.paths import normalize_path
from zarrkit.references import Reference, decode_attribute

if TYPE_CHECKING:
    from zarrkit.hierarchy.array import Array
    from zarrkit.hierarchy.group import Group

#: Where hdmf-zarr caches specifications when the root has no ``.specloc`` yet.
DEFAULT_SPEC_LOCATION = "specifications"

#: The ``json2`` filter of a cached source, as hdmf-zarr writes it (numcodecs' JSON codec
#: with its defaults).
JSON_CODEC: dict[str, Any] = {
    "id": "json2", "allow_nan": True, "check_circular": True, "encoding": "utf-8",
    "ensure_ascii": True, "indent": None, "separators": [",", ":"], "skipkeys": False,
    "sort_keys": True, "strict": True,
}


def spec_location(root: Group) -> str | None:
    """The path of the group holding ``root``'s cached specifications (its ``.specloc``
    attribute, leading ``/`` dropped), or None when it has none.

    >>> import zarrkit as zk
    >>> spec_location(zk.group({}, attributes={".specloc": "/specifications"}))
    'specifications'
    >>> spec_location(zk.group({})) is None
    True
    >>> spec_location(zk.group({}, attributes={".specloc": {"_REFERENCE": {"path": "/s"}}}))
    's'
    """
    value = root.attrs.get(SPEC_LOC_ATTRIBUTE)
    if value is None:
        return None
    reference = decode_attribute(value)
    if isinstance(reference, Reference):
        value = reference.path
    if not isinstance(value, str):
        raise MetadataError(f"{SPEC_LOC_ATTRIBUTE} must be a path, found {value!r:.100}")
    return normalize_path(value)


def _segment(kind: str, name: Any) -> str:
    if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
        raise ValueError(f"invalid {kind} name {name!r}: one non-empty path segment")
    return name


def _as_text(source: str, value: str | Mapping[str, Any] | list[Any]) -> str:
    """The JSON text stored for a source, checked to be JSON."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError as error:
            raise ValueError(f"specification source {source!r} is not JSON: {error}") from None
        return value
    return json.dumps(value, separators=(",", ":"))


def write_specifications(root: Group, namespace: str, version: str,
                         sources: Mapping[str, str | Mapping[str, Any]]) -> Group:
    """Cache the sources of ``namespace`` at ``version`` in ``root``'s file, as hdmf-zarr
    does in its convention (0.13's in a Zarr v2 file, 0.14's in a v3 one: see the module
    docstring): each source (JSON text, or a JSON value to serialize
    compactly) becomes the scalar dataset ``<specloc>/<namespace>/<version>/<source>``,
    replacing one of the same name. ``<specloc>`` is the root's ``.specloc`` attribute,
    set to ``"specifications"`` when absent. Return the version's group.

    Like hdmf-zarr, this writes no consolidated metadata: call
    :func:`zarrkit.consolidate_metadata` afterwards on a store that has some.

    >>> import zarrkit as zk
    >>> root = zk.group({}, zarr_format=3)
    >>> write_specifications(root, "hdmf-common", "1.10.0", {"base": "{}"}).name
    '/specifications/hdmf-common/1.10.0'
    >>> root["specifications/hdmf-common/1.10.0/base"][()]
    '{}'
    """
    texts = {_segment("source", name): _as_text(name, value) for name, value in sources.items()}
    location = spec_location(root)
    if location is None:
        location = DEFAULT_SPEC_LOCATION
        root.attrs[SPEC_LOC_ATTRIBUTE] = location
    path = "/".join(p for p in (location, _segment("namespace", namespace),
                                _segment("version", version)) if p)
    group = root.require_group(path)
    for name, text in texts.items():
        if group.zarr_format == 2:
            array = group.create_array(
                name, shape=(1,), chunks=(1,), compressors=None, dtype=object,
                filters=[JSON_CODEC], attributes={"zarr_dtype": SCALAR}, overwrite=True)
            array[0] = text
        else:
            group.create_array(name, shape=(), dtype=str, overwrite=True)[()] = text
    return group


def read_specifications(root: Group) -> dict[str, dict[str, dict[str, Any]]]:
    """Every specification cached in ``root``'s file, parsed:
    ``{namespace: {version: {source: JSON value}}}``, found by following the root's
    ``.specloc`` attribute ({} when it has none). MetadataError if ``.specloc`` names no
    group or a source is not a scalar JSON text.

    >>> import zarrkit as zk
    >>> read_specifications(zk.group({}))
    {}
    """
    location = spec_location(root)
    if location is None:
        return {}
    try:
        spec_group = root[location] if location else root
    except NodeNotFoundError as error:
        raise MetadataError(f"{SPEC_LOC_ATTRIBUTE} names {location!r}, which is not in the "
                            f"file") from error
    if not hasattr(spec_group, "groups"):
        raise MetadataError(f"{SPEC_LOC_ATTRIBUTE} names {location!r}, an array")
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for namespace, namespace_group in spec_group.groups():
        versions = found.setdefault(namespace, {})
        for version, version_group in namespace_group.groups():
            versions[version] = {name: read_source(array)
                                 for name, array in version_group.arrays()}
    return found


def read_source(array: Array) -> Any:
    """The parsed JSON of one cached source: the single element of a scalar dataset
    (shape ``(1,)`` as hdmf-zarr writes it, or ``()``), as text or UTF-8 bytes.

    >>> import zarrkit as zk
    >>> a = zk.group({}).create_array("s", shape=(1,), dtype=str)
    >>> a[0] = '{"a": [1]}'
    >>> read_source(a)
    {'a': [1]}
    """
    if array.shape not in ((), (1,)):
        raise MetadataError(f"specification {array.name!r} is not a scalar dataset: shape "
                            f"{array.shape}")
    value = np.asarray(array[...]).reshape(-1)[0]
    if isinstance(value, bytes | np.bytes_):
        value = bytes(value).decode("utf-8")
    if not isinstance(value, str):
        raise MetadataError(f"specification {array.name!r} holds {type(value).__name__}, "
                            f"not JSON text")
    try:
        return json.loads(value)
    except ValueError as error:
        raise MetadataError(f"specification {array.name!r} is not JSON: {error}") from None
