"""Checking a live hierarchy against a spec: :func:`validate` lists every
:class:`Violation`, each with the path of its node.

What is checked, node by node (paths are relative to the spec's root: ``""`` is the
root, ``"/a/b"`` a member of a member):

* every member the spec lists must exist (``"missing"``), with the spec's node type
  (``"node_type"``) and Zarr format (``"zarr_format"``); members the spec does not list
  are allowed unless ``closed=True`` (``"extra"``);
* an array's metadata fields, compared as the specs' ``normalized()`` documents (so data
  type and fill value spellings, codec defaults and empty optional fields do not count):
  the kind is the field's name (``"shape"``, ``"dtype"``/``"data_type"``,
  ``"chunks"``/``"chunk_grid"``, ``"compressor"``, ``"filters"``, ``"codecs"``,
  ``"fill_value"``, ``"order"``, ``"dimension_names"``, ...);
* attributes, by the rule below.

**Attributes.** A spec whose ``attributes`` are untyped (``Any``, ``dict[str, Any]``: the
plain ``ArraySpec``/``GroupSpec``) *requires* each attribute it lists, with an equal JSON
value (``"missing_attribute"``, ``"attribute_value"``); other attributes of the live node
are allowed. A spec whose attributes are *typed* (``ArraySpec[SomeTypedDict]``, a
pydantic model, ``dict[str, int]``, ...) requires their *type* only: the values the spec
holds are examples, and the live attributes are checked by validating the live node's
document with the spec node's own class (``"missing_attribute"``, ``"attribute_type"``,
``"extra_attribute"`` when the typed class forbids others). Use ``Literal`` types, or a
validator, to require values in a typed spec.

**Validators.** Whenever a spec node's class is more than the plain one (typed attributes
or members, a subclass with pydantic validators), the live node's document is validated
with that class and each error becomes a violation: value-dependent rules (a
``model_validator``) give ``"invalid"``. A typed group class checks its members' types
too, the members the spec does not list included. pydantic runs a group's "after"
validators only once its members are valid, so such a group-level violation can show
only after member violations are fixed.

>>> import numpy as np
>>> import zarrkit as zk
>>> from zarrkit.models.v3 import ArraySpec, GroupSpec
>>> spec = GroupSpec(members={"x": ArraySpec.from_array(np.zeros(4, dtype="u1"))})
>>> root = zk.group({}, zarr_format=3)
>>> _ = root.create_array("x", shape=(5,), chunks=(4,), dtype="u1")
>>> [str(v) for v in validate(root, spec)]
['/x: shape: expected [4], found [5]']
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ValidationError

from zarrkit.errors import NodeNotFoundError, SpecError, SpecValidationError
from zarrkit.models import _common, v2, v3
from zarrkit.paths import join_path, normalize_path

__all__ = ["Violation", "validate"]

_PLAIN = (v2.ArraySpec, v2.GroupSpec, v3.ArraySpec, v3.GroupSpec)
_ARRAYS = (v2.ArraySpec, v3.ArraySpec)
_GROUPS = (v2.GroupSpec, v3.GroupSpec)


@dataclass(frozen=True)
class Violation:
    """One way a live hierarchy differs from a spec: the node's path (relative to the
    spec's root; ``""`` is the root), what kind of violation it is (``"missing"``,
    ``"extra"``, ``"node_type"``, ``"zarr_format"``, a metadata field's name,
    ``"missing_attribute"``, ``"attribute_value"``, ``"attribute_type"``,
    ``"extra_attribute"``, ``"invalid"``), a readable message, and what the spec expected
    and what was found (None where that means nothing).

    >>> str(Violation("/a", "shape", "expected [2], found [3]", [2], [3]))
    '/a: shape: expected [2], found [3]'
    """

    path: str
    kind: str
    message: str
    expected: Any = None
    found: Any = None

    def __str__(self) -> str:
        return f"{self.path or '/'}: {self.kind}: {self.message}"


def validate(group_or_store: Any, spec: Any, *, path: str = "", closed: bool = False,
             strict: bool = False) -> list[Violation]:
    """Every violation of ``spec`` by the live node at ``path`` of ``group_or_store`` (a
    zarrkit Group or Array, or any store zarrkit opens: a path, a dict, a Store), each
    with its path; an empty list when the node conforms. ``spec`` is an array or group
    spec of either format (or its JSON document). ``closed=True`` also reports members
    the spec does not list; ``strict=True`` raises :class:`~zarrkit.errors.SpecValidationError`
    (holding the list) instead of returning violations. The module's docstring gives the
    rules.

    >>> import zarrkit as zk
    >>> from zarrkit.models.v2 import ArraySpec, GroupSpec
    >>> spec = GroupSpec(attributes={"title": "demo"}, members={
    ...     "x": ArraySpec(shape=(4,), chunks=(2,), dtype="<i2", fill_value=0)})
    >>> root = zk.group({}, zarr_format=2, attributes={"title": "demo"})
    >>> _ = root.create_array("x", shape=(4,), chunks=(2,), dtype="i2", compressor=None)
    >>> _ = root.create_group("extra")
    >>> validate(root, spec)
    []
    >>> [str(v) for v in validate(root, spec, closed=True)]
    ['/extra: extra: a group the spec does not list (closed=True)']
    >>> validate(root, spec, closed=True, strict=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.SpecValidationError: the hierarchy violates the spec: /extra: extra: ...
    """
    spec = _as_spec(spec)
    violations = _Validation(closed=bool(closed)).run(group_or_store, spec, path)
    if strict and violations:
        lines = [str(v) for v in violations]
        shown = "; ".join(lines[:10]) + (f"; ... and {len(lines) - 10} more"
                                         if len(lines) > 10 else "")
        raise SpecValidationError(f"the hierarchy violates the spec: {shown}", violations)
    return violations


def _as_spec(spec: Any) -> Any:
    if isinstance(spec, (*_ARRAYS, *_GROUPS)):
        return spec
    if isinstance(spec, Mapping):
        zarr_format = spec.get("zarr_format")
        if zarr_format == 3:
            return v3.parse_node(spec)
        if zarr_format == 2:
            return v2.parse_node(spec)
        raise SpecError(f"a spec document needs zarr_format 2 or 3, found {zarr_format!r}")
    raise SpecError("spec must be an ArraySpec or GroupSpec of zarrkit.models.v2 or "
                    f"zarrkit.models.v3 (or its JSON document), not {type(spec).__name__}")


def _is_group(node: Any) -> bool:
    return isinstance(node, _GROUPS)


def _kind(node: Any) -> str:
    return "group" if _is_group(node) else "array"


def _is_plain(cls: type) -> bool:
    """Whether validating with ``cls`` can find nothing the plain spec class would not."""
    if cls in _PLAIN:
        return True
    metadata = getattr(cls, "__pydantic_generic_metadata__", None) or {}
    return metadata.get("origin") in _PLAIN and all(arg is Any for arg in metadata["args"])


def _typed_attributes(cls: type) -> bool:
    """Whether ``cls`` declares a type for its attributes (not Any / a mapping of Any)."""
    field = getattr(cls, "model_fields", {}).get("attributes")
    annotation = None if field is None else field.annotation
    if annotation is None or annotation is Any or isinstance(annotation, TypeVar):
        return False
    if annotation in (dict, Mapping):
        return False
    if get_origin(annotation) in (dict, Mapping):
        return get_args(annotation)[1:] != (Any,)
    return True


def _read_depth(spec: Any) -> int:
    """How many member levels of the live group to read: as deep as the spec goes (its
    own members listed, for ``closed``), all of them below a typed group class."""
    if not _is_group(spec):
        return 0
    if not _is_plain(type(spec)):
        return -1
    depths = [_read_depth(member) for member in spec.members.values()]
    if -1 in depths:
        return -1
    return 1 + max(depths, default=0)


class _Validation:
    def __init__(self, *, closed: bool) -> None:
        self.closed = closed
        self.found: list[Violation] = []
        self.root_group: Any = None

    def run(self, source: Any, spec: Any, path: str) -> list[Violation]:
        from zarrkit.hierarchy import Array, Group

        node, other = _open_live(source, normalize_path(path), spec.zarr_format)
        if node is None:
            if other is not None:
                self._add("", "zarr_format", f"expected Zarr v{spec.zarr_format}, found a "
                          f"Zarr v{other.zarr_format} {other.kind}", spec.zarr_format,
                          other.zarr_format)
            else:
                self._add("", "missing", f"no {_kind(spec)} here (nor any node)", _kind(spec),
                          None)
            return self._result()
        kind = "group" if isinstance(node, Group) else "array"
        if kind != _kind(spec):
            self._add("", "node_type", f"expected {_a(_kind(spec))}, found {_a(kind)}",
                      _kind(spec), kind)
            return self._result()
        if node.zarr_format != spec.zarr_format:
            self._add("", "zarr_format", f"expected Zarr v{spec.zarr_format}, found Zarr "
                      f"v{node.zarr_format}", spec.zarr_format, node.zarr_format)
            return self._result()
        module = v3 if spec.zarr_format == 3 else v2
        if isinstance(node, Array):
            live = module.ArraySpec.from_array(node)
        else:
            self.root_group = node
            live = module.GroupSpec.from_store(node, depth=_read_depth(spec))
        self._check(spec, live, "")
        return self._result()

    def _result(self) -> list[Violation]:
        unique = list({(v.path, v.kind, v.message): v for v in self.found}.values())
        return sorted(unique, key=lambda v: (v.path.split("/"), _kind_order(v.kind)))

    def _add(self, path: str, kind: str, message: str, expected: Any = None,
             found: Any = None) -> None:
        self.found.append(Violation(path, kind, message, expected, found))

    def _check(self, spec: Any, live: Any, path: str) -> None:
        if _kind(spec) != _kind(live):
            self._add(path, "node_type", f"expected {_a(_kind(spec))}, found {_a(_kind(live))}",
                      _kind(spec), _kind(live))
            return
        expected, found = spec.normalized(), live.normalized()
        for field in sorted(set(expected) | set(found), key=_common._field_order):
            if field in ("zarr_format", "node_type", "attributes"):
                continue
            if not _same(expected.get(field), found.get(field)):
                self._add(path, field, f"expected {expected.get(field)!r}, found "
                          f"{found.get(field)!r}", expected.get(field), found.get(field))
        if not _typed_attributes(type(spec)):
            self._check_attributes(expected["attributes"], found["attributes"], path)
        if not _is_plain(type(spec)):
            self._check_class(type(spec), live, path)
        if _is_group(spec):
            self._check_members(spec, live, path)

    def _check_attributes(self, expected: Mapping[str, Any], found: Mapping[str, Any],
                          path: str) -> None:
        for key, value in expected.items():
            if key not in found:
                self._add(path, "missing_attribute", f"attribute {key!r} is missing (the "
                          f"spec has {value!r})", value, None)
            elif not _same(value, found[key]):
                self._add(path, "attribute_value", f"attribute {key!r}: expected {value!r}, "
                          f"found {found[key]!r}", value, found[key])

    def _check_members(self, spec: Any, live: Any, path: str) -> None:
        for name in sorted(spec.members):
            child = f"{path}/{name}"
            if name in live.members:
                self._check(spec.members[name], live.members[name], child)
                continue
            expected = _kind(spec.members[name])
            elsewhere = self._other_format(child, spec.zarr_format)
            self._add(child, "missing", f"no {expected} here{elsewhere}", expected, None)
        if self.closed:
            for name in sorted(set(live.members) - set(spec.members)):
                kind = _kind(live.members[name])
                self._add(f"{path}/{name}", "extra",
                          f"{_a(kind)} the spec does not list (closed=True)", None, kind)

    def _other_format(self, path: str, zarr_format: int) -> str:
        """A note on a node of the other Zarr format at ``path``: a group does not list
        those as members."""
        from zarrkit.hierarchy.nodes import find_node

        if self.root_group is None:
            return ""
        other = 2 if zarr_format == 3 else 3
        try:
            found = find_node(self.root_group.store, join_path(self.root_group.path,
                                                               path.strip("/")),
                              zarr_format=other)
        except Exception:  # noqa: BLE001 - only a note: unreadable metadata adds none
            return ""
        if found is None:
            return ""
        return (f" (a Zarr v{other} {found.kind} is there, which a Zarr v{zarr_format} group "
                "does not list)")

    def _check_class(self, cls: Any, live: Any, path: str) -> None:
        """Validate the live node's document with the spec node's class."""
        document = live.to_json()
        try:
            with _common._outermost():  # pydantic's own errors, not a SpecError
                cls.model_validate(document, context={"trusted": True})
        except ValidationError as error:
            for item in error.errors(include_url=False):
                located = _locate(tuple(item["loc"]), document, cls)
                if located is not None:
                    self._add_error(path, item, *located)
        except SpecError as error:
            for line in error.errors or [str(error)]:
                self._add(path, "invalid", line)

    def _add_error(self, path: str, item: Any, node_path: str, fields: list[str],
                   cls: type | None) -> None:
        where = path + node_path
        message = str(item["msg"]).removeprefix("Value error, ")
        if not fields or fields[0] != "attributes":
            shown = f"{'.'.join(fields)}: {message}" if fields else message
            self._add(where, "invalid", shown, None,
                      item.get("input") if fields else None)
            return
        if len(fields) == 1:
            self._add(where, "attribute_type", f"attributes: {message}", _attributes_type(cls),
                      item.get("input"))
            return
        key, declared = fields[1], _declared_type(cls, fields[1])
        if item["type"] == "missing" and len(fields) == 2:
            of_type = f" ({declared})" if declared else ""
            self._add(where, "missing_attribute", f"attribute {key!r}{of_type} is missing",
                      declared, None)
        elif item["type"] == "extra_forbidden" and len(fields) == 2:
            self._add(where, "extra_attribute", f"attribute {key!r} is not allowed by "
                      f"{_attributes_type(cls)}", None, item.get("input"))
        else:
            item_path = "".join(f"[{part}]" for part in fields[2:])
            self._add(where, "attribute_type", f"attribute {key!r}{item_path}: {message}",
                      declared, item.get("input"))


def _open_live(source: Any, path: str, zarr_format: int) -> tuple[Any, Any]:
    """(node, None) for the live node at ``path``; (None, found) when only a node of the
    other format is there; (None, None) when nothing is."""
    from zarrkit.api import open as open_node
    from zarrkit.hierarchy import Array, Group
    from zarrkit.hierarchy.nodes import find_node
    from zarrkit.storage.resolve import make_store

    if isinstance(source, (Group, Array)):
        if not path:
            return source, None
        if isinstance(source, Array):
            return None, None
        try:
            return source[path], None
        except NodeNotFoundError:
            return None, None
    store = make_store(source, mode="r")
    try:
        return open_node(store, mode="r", path=path, zarr_format=zarr_format), None
    except NodeNotFoundError:
        return None, find_node(store, path)


_FUNCTION_PREFIX = re.compile(r"function-[a-z-]+\[[^,\[\]]*, ")


def _arm_named(arms: list[type], tag: Any) -> type | None:
    """The union member class pydantic names ``tag`` in an error location (its name, or
    its name wrapped in ``function-after[validator, ...]``)."""
    if not isinstance(tag, str):
        return None
    wrappers = len(_FUNCTION_PREFIX.findall(tag))
    name = _FUNCTION_PREFIX.sub("", tag)
    name = name[:len(name) - wrappers] if wrappers else name
    return next((arm for arm in arms if arm.__name__ == name), None)


def _member_classes(cls: type | None) -> list[type]:
    """The spec classes a group class allows as members (none known: [])."""
    field = getattr(cls, "model_fields", {}).get("members")
    if field is None:
        return []
    args = get_args(field.annotation)
    item = args[1] if len(args) == 2 else Any
    arms = get_args(item) if get_origin(item) in (Union, UnionType) else (item,)
    return [arm for arm in arms if isinstance(arm, type) and issubclass(arm, BaseModel)]


def _locate(loc: tuple[Any, ...], document: Any, cls: type
            ) -> tuple[str, list[str], type | None] | None:
    """(node path, field path, class of that node) of a pydantic error location; None
    for errors of a union member class that the node is not (an array's errors as a
    group)."""
    node_path = ""
    fields: list[str] = []
    current_doc: Any = document
    current_cls: type | None = cls
    i = 0
    while i < len(loc):
        part = loc[i]
        if part == "members" and not fields and i + 1 < len(loc):
            name = str(loc[i + 1])
            node_path = f"{node_path}/{name}"
            members = current_doc.get("members") if isinstance(current_doc, Mapping) else None
            current_doc = members.get(name) if isinstance(members, Mapping) else None
            claimed = _common.claimed_kind(current_doc)
            arms = _member_classes(current_cls)
            i += 2
            arm = _arm_named(arms, loc[i]) if i < len(loc) else None
            if arm is not None:
                i += 1
                if claimed is not None and claimed != ("group" if issubclass(arm, _GROUPS)
                                                       else "array"):
                    return None
                current_cls = arm
            else:
                matching = [a for a in arms if claimed == ("group" if issubclass(a, _GROUPS)
                                                           else "array")]
                current_cls = matching[0] if matching else None
            continue
        if isinstance(part, str) and (part.startswith("function-") or "[" in part):
            i += 1
            continue
        fields.append(str(part))
        i += 1
    return node_path, fields, current_cls


def _attributes_type(cls: type | None) -> str | None:
    field = getattr(cls, "model_fields", {}).get("attributes")
    return None if field is None else _type_name(field.annotation)


def _declared_type(cls: type | None, key: str) -> str | None:
    """The type ``cls`` declares for attribute ``key``, as text (None when unknown)."""
    field = getattr(cls, "model_fields", {}).get("attributes")
    annotation = None if field is None else field.annotation
    try:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            declared = annotation.model_fields[key].annotation
        else:
            declared = get_type_hints(annotation)[key]
    except Exception:  # noqa: BLE001 - the annotation is not a typed dict or model
        return None
    return _type_name(declared)


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type) and not get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "").replace("typing_extensions.", "")


def _same(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (NaN equals NaN) but never equal to booleans."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a)
                          and math.isnan(b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


_KINDS_BEFORE = ("missing", "extra", "node_type", "zarr_format")
_KINDS_AFTER = ("missing_attribute", "attribute_value", "attribute_type", "extra_attribute",
                "invalid")


def _kind_order(kind: str) -> tuple[int, int]:
    """Violations of one node in this order: structure, metadata fields (in the order of
    the documents), attributes, validators."""
    if kind in _KINDS_BEFORE:
        return 0, _KINDS_BEFORE.index(kind)
    if kind in _KINDS_AFTER:
        return 2, _KINDS_AFTER.index(kind)
    return 1, _common._field_order(kind)[0]


def _a(kind: str) -> str:
    return f"an {kind}" if kind == "array" else f"a {kind}"
