"""What the format-2 and format-3 models share: the pydantic base, error reports with
paths, member-name checks, differences between specs, and the flat form.

The specs are the JSON documents of ZEP 6; what they mean is decided by
``zarrkit.metadata``: every array spec converts to the metadata object zarrkit opens
arrays with (``to_metadata``), and comparisons (``diff``, ``like``) compare the documents
that metadata writes back, so spellings and codec defaults never show as differences.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic._internal._model_construction import ModelMetaclass

from zarrkit.errors import InvalidKeyError, SpecError, ZarrkitError
from zarrkit.models import store_io
from zarrkit.paths import check_node_name

SpecT = TypeVar("SpecT", bound="SpecModel")


def spec_errors(error: ValidationError, data: Any = None) -> list[str]:
    """pydantic's errors as ``"/member/path: field: message"`` lines, keeping for a member
    that matches neither node type only the errors of the type its document claims."""
    found: dict[tuple[str, str], str] = {}
    for item in error.errors(include_url=False):
        located = _locate(tuple(item["loc"]), data)
        if located is None:
            continue
        # One message per field: a union (attributes: object or model) fails per branch.
        found.setdefault(located, item["msg"].removeprefix("Value error, "))
    lines = [f"{path or '/'}: {field}: {message}" if field else f"{path or '/'}: {message}"
             for (path, field), message in found.items()]
    return lines or [str(error)]


def _branch_kind(name: str) -> str | None:
    """The node type of a union branch in an error location (``"GroupSpec"``,
    ``"function-after[_check_metadata(), ArraySpec]"``), if it is one."""
    for spec, kind in (("ArraySpec", "array"), ("GroupSpec", "group")):
        if name.startswith(spec) or name.endswith(f" {spec}]"):
            return kind
    return None


def claimed_kind(document: Any) -> str | None:
    """The node type a member document claims: ``node_type``, else what its keys show."""
    if isinstance(document, BaseModel):
        return _branch_kind(type(document).__name__)
    if not isinstance(document, Mapping):
        return None
    node_type = document.get("node_type")
    if node_type in ("array", "group"):
        return str(node_type)
    if "members" in document:
        return "group"
    if "shape" in document:
        return "array"
    return None


def _locate(loc: tuple[Any, ...], data: Any) -> tuple[str, str] | None:
    """(node path, field) of an error location; None for the errors of a union branch
    that the document does not claim to be."""
    node_path = ""
    fields: list[str] = []
    current = data
    i = 0
    while i < len(loc):
        part = loc[i]
        if part == "members" and i + 1 < len(loc) and not fields:
            name = str(loc[i + 1])
            node_path = f"{node_path}/{name}"
            current = current.get("members", {}).get(name) if isinstance(current, Mapping) \
                else None
            i += 2
            if i < len(loc) and isinstance(loc[i], str) and _branch_kind(loc[i]) is not None:
                claimed = claimed_kind(current)
                if claimed is not None and claimed != _branch_kind(loc[i]):
                    return None
                i += 1
            continue
        if isinstance(part, str) and (part.startswith("function-") or "[" in part
                                      or part == "BaseModel"):
            i += 1
            continue
        fields.append(str(part))
        i += 1
    return node_path, ".".join(fields)


if TYPE_CHECKING:
    # Type checkers must see pydantic's own metaclass: a subclass of it hides the
    # constructor signature they derive from the fields.
    _SpecMeta = ModelMetaclass
else:
    class _SpecMeta(ModelMetaclass):
        # Construction errors become SpecError here rather than in an ``__init__``
        # override: pydantic would call such an override for nested models too, without
        # the validation context that lets specs built from validated metadata skip
        # re-checking it.
        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            with _outermost() as outermost:
                try:
                    return super().__call__(*args, **kwargs)
                except ValidationError as e:
                    if not outermost:
                        raise
                    raise _spec_error(cls.__name__, e, kwargs) from None


class SpecModel(BaseModel, metaclass=_SpecMeta):
    """Immutable, closed (unknown fields are errors), validated; invalid input raises
    :class:`zarrkit.errors.SpecError` listing every problem with its path."""

    # NaN and infinities are written as Zarr writes them ("NaN", "Infinity"), not as null.
    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=False,
                              ser_json_inf_nan="strings")

    # Fields always written by to_json, even when left at their defaults.
    _header: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def model_validate(cls: type[SpecT], obj: Any, *args: Any, **kwargs: Any) -> SpecT:
        with _outermost() as outermost:
            try:
                return super().model_validate(obj, *args, **kwargs)
            except ValidationError as e:
                if not outermost:
                    raise
                raise _spec_error(cls.__name__, e, obj) from None

    def model_copy(self: SpecT, *, update: Mapping[str, Any] | None = None,
                   deep: bool = False) -> SpecT:
        """A copy (pydantic's), with ``update`` applied and nothing derived from the
        original's fields kept.

        >>> from zarrkit.models.v3 import GroupSpec
        >>> GroupSpec().model_copy(update={"attributes": {"a": 1}}).normalized()["attributes"]
        {'a': 1}
        """
        copy = super().model_copy(update=update, deep=deep)
        private = copy.__pydantic_private__
        if update and private:
            copy.__pydantic_private__ = {name: None for name in private}
        return copy

    @model_validator(mode="before")
    @classmethod
    def _fill_header(cls, data: Any) -> Any:
        # Header fields count as given, so that to_json (which writes what was given)
        # always writes them.
        header = cls._header
        if not header or not isinstance(data, Mapping):
            return data
        if type(data) is not dict:
            data = dict(data)
        if not data.keys() >= set(header):
            defaults = {name: cls.model_fields[name].get_default(call_default_factory=True)
                        for name in header}
            data = {**defaults, **data}
        return data

    @classmethod
    def from_json(cls: type[SpecT], document: Mapping[str, Any] | str | bytes) -> SpecT:
        """A spec from its JSON form (a parsed object or JSON text).

        >>> from zarrkit.models.v3 import GroupSpec
        >>> GroupSpec.from_json('{"zarr_format": 3, "node_type": "group"}').to_json()
        {'zarr_format': 3, 'node_type': 'group', 'attributes': {}, 'members': {}}
        """
        if isinstance(document, (str, bytes)):
            try:
                document = json.loads(document)
            except ValueError as e:
                raise SpecError(f"{cls.__name__}: not JSON: {e}") from e
        return cls.model_validate(document)

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON Schema of this spec's JSON form (draft 2020-12), with array and
        group definitions as ZEP 6 shows them; member names are checked too.

        >>> from zarrkit.models.v3 import GroupSpec
        >>> schema = GroupSpec.json_schema()
        >>> schema["$ref"], sorted(schema["$defs"])
        ('#/$defs/GroupSpec', ['ArraySpec', 'GroupSpec', 'NamedConfig'])
        """
        return node_json_schema(cls)

    def to_json(self) -> dict[str, Any]:
        """The JSON form: every field that was given (or read from a store), in the
        order of the ZEP 6 examples.

        >>> from zarrkit.models.v3 import GroupSpec
        >>> GroupSpec(attributes={"a": 1}).to_json()["attributes"]
        {'a': 1}
        """
        return self.model_dump(mode="json", exclude_unset=True)


_depth = threading.local()


@contextmanager
def _outermost() -> Iterator[bool]:
    level = getattr(_depth, "level", 0)
    _depth.level = level + 1
    try:
        yield level == 0
    finally:
        _depth.level = level


def _spec_error(name: str, error: ValidationError, data: Any) -> SpecError:
    lines = spec_errors(error, data)
    summary = lines[0] if len(lines) == 1 else f"{len(lines)} problems: " + "; ".join(lines)
    return SpecError(f"invalid {name.split('[')[0]}: {summary}", lines)


def check_member_names(members: Mapping[str, Any], zarr_format: int) -> None:
    """Every member name valid for ``zarr_format``; a ValueError (what pydantic reports)."""
    for name in members:
        try:
            check_node_name(name, zarr_format)
        except InvalidKeyError as e:
            raise ValueError(str(e)) from None


def as_value_error(check: Callable[[], Any]) -> Any:
    """Run ``check``; a zarrkit error becomes the ValueError pydantic reports with its path."""
    try:
        return check()
    except ZarrkitError as e:
        raise ValueError(f"{type(e).__name__}: {e}") from e


# --- differences ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Difference:
    """One difference between two specs: the node's path (``""`` for the root), the field
    (``"node"`` when a member exists on one side only) and the two values (None where
    absent).

    >>> Difference("/a", "shape", [2], [3])
    Difference(path='/a', field='shape', left=[2], right=[3])
    """

    path: str
    field: str
    left: Any
    right: Any

    def __str__(self) -> str:
        return f"{self.path or '/'}: {self.field}: {self.left!r} != {self.right!r}"


def compare_nodes(left: Any, right: Any, *, include: Iterable[str] | None = None,
                  exclude: Iterable[str] | None = None, path: str = "") -> Iterator[Difference]:
    """The differences between two specs' normalised documents, members included."""
    included = None if include is None else set(include)
    excluded = set(exclude or ())
    yield from _compare(left, right, included, excluded, path)


def _compare(left: Any, right: Any, include: set[str] | None, exclude: set[str],
             path: str) -> Iterator[Difference]:
    mine, theirs = left.normalized(), right.normalized()
    for field in sorted(set(mine) | set(theirs), key=_field_order):
        if field == "members" or field in exclude or (include is not None and
                                                       field not in include):
            continue
        if mine.get(field) != theirs.get(field):
            yield Difference(path, field, mine.get(field), theirs.get(field))
    if "members" in exclude or (include is not None and "members" not in include):
        return
    left_members = getattr(left, "members", None) or {}
    right_members = getattr(right, "members", None) or {}
    for name in sorted(set(left_members) | set(right_members)):
        child = f"{path}/{name}"
        if name not in right_members or name not in left_members:
            yield Difference(child, "node", _kind(left_members.get(name)),
                             _kind(right_members.get(name)))
            continue
        yield from _compare(left_members[name], right_members[name], include, exclude, child)


_FIELD_ORDER = ("zarr_format", "node_type", "shape", "data_type", "dtype", "chunk_grid",
                "chunks", "chunk_key_encoding", "fill_value", "order", "filters", "compressor",
                "codecs", "dimension_separator", "dimension_names", "storage_transformers",
                "attributes")


def _field_order(field: str) -> tuple[int, str]:
    return (_FIELD_ORDER.index(field) if field in _FIELD_ORDER else len(_FIELD_ORDER), field)


def _kind(node: Any) -> str | None:
    return None if node is None else ("group" if hasattr(node, "members") else "array")


# --- flat form -------------------------------------------------------------------------------

def flatten(root: Any) -> dict[str, Any]:
    """``{"": root, "/a": ..., "/a/b": ...}``; groups appear without their members."""
    flat: dict[str, Any] = {}

    def visit(node: Any, path: str) -> None:
        members = getattr(node, "members", None)
        flat[path] = node if members is None else node.model_copy(update={"members": {}})
        for name, member in (members or {}).items():
            visit(member, f"{path}/{name}")

    visit(root, "")
    return flat


def unflatten(flat: Mapping[str, Any], group_class: Any, parse: Callable[[Any], Any],
              zarr_format: int) -> Any:
    """The tree of a flat form; groups missing between the root and a node are created
    empty. ``parse`` turns a flat value (spec or JSON document) into a spec."""
    nodes: dict[tuple[str, ...], Any] = {}
    for key, value in flat.items():
        if not isinstance(key, str) or (key and not key.startswith("/")):
            raise SpecError(f"flat keys are '' or start with '/', found {key!r}")
        parts = tuple(key[1:].split("/")) if key else ()
        for name in parts:
            check_node_name(name, zarr_format)
        nodes[parts] = parse(value)
    if () not in nodes:
        nodes[()] = group_class()
    children: dict[tuple[str, ...], dict[str, tuple[str, ...]]] = {}
    for parts in sorted(nodes, key=len):
        for depth in range(1, len(parts) + 1):
            parent, name = parts[:depth - 1], parts[depth - 1]
            if parts[:depth] not in nodes:
                nodes[parts[:depth]] = group_class()
            children.setdefault(parent, {})[name] = parts[:depth]

    def build(parts: tuple[str, ...]) -> Any:
        node = nodes[parts]
        names = children.get(parts)
        if not names:
            return node
        if getattr(node, "members", None) is None:
            raise SpecError(f"{'/' + '/'.join(parts)!r} is an array but has members")
        members = {**node.members, **{name: build(child) for name, child in names.items()}}
        return node.model_copy(update={"members": members})

    return build(())


# --- methods every array spec and every group spec has ------------------------------------

class NodeMethods:
    """Comparison, writing and the flat form, for array and group specs of both formats."""

    def normalized(self) -> dict[str, Any]:
        raise NotImplementedError

    def diff(self, other: Any, *, include: Iterable[str] | None = None,
             exclude: Iterable[str] | None = None) -> list[Difference]:
        """Every difference between the two specs, with its path: fields of nodes present
        in both (compared as normalised documents: data type and fill value spellings,
        codec defaults and empty optional fields do not count) and members present in
        only one. ``include``/``exclude`` name the fields compared (``"members"`` too).

        >>> from zarrkit.models.v3 import GroupSpec
        >>> a = GroupSpec(members={"g": GroupSpec()})
        >>> [str(d) for d in a.diff(GroupSpec(attributes={"x": 1}))]
        ["/: attributes: {} != {'x': 1}", "/g: node: 'group' != None"]
        """
        return list(compare_nodes(self, other, include=include, exclude=exclude))

    def like(self, other: Any, *, include: Iterable[str] | None = None,
             exclude: Iterable[str] | None = None) -> bool:
        """Whether the two specs describe the same node (``diff`` finds nothing).

        >>> from zarrkit.models.v3 import GroupSpec
        >>> GroupSpec().like(GroupSpec.from_json(GroupSpec().to_json()))
        True
        """
        return not self.diff(other, include=include, exclude=exclude)

    def to_store(self, store: Any, path: str = "", *, overwrite: bool = False) -> Any:
        """Write the metadata of the node and of everything below it (no chunks), and
        open it. An existing node with equal (normalised) metadata is kept; a different
        one raises ContainsArrayError or ContainsGroupError unless ``overwrite``. Every
        node is checked before the first is written, so a refusal changes nothing.

        >>> from zarrkit.models.v3 import GroupSpec
        >>> GroupSpec(members={"g": GroupSpec()}).to_store({})["g"].path
        'g'
        """
        return store_io.write_spec(self, store, path, overwrite=overwrite)

    def to_flat(self) -> dict[str, Any]:
        """``{"": root, "/a": ..., "/a/b": ...}``; groups appear without their members.

        >>> from zarrkit.models.v3 import GroupSpec
        >>> sorted(GroupSpec(members={"a": GroupSpec(members={"b": GroupSpec()})}).to_flat())
        ['', '/a', '/a/b']
        """
        return flatten(self)


class GroupMethods(NodeMethods):
    """Reading a group spec from a store, and building one from the flat form."""

    _zarr_format: ClassVar[int]

    @classmethod
    def from_store(cls, store: Any, path: str = "", *, depth: int = -1) -> Any:
        """The spec of the group at ``path`` of a store (or of a zarrkit Group), with its
        members ``depth`` levels down (-1: all). Consolidated metadata is used when the
        store has it: one read, no listing.

        >>> import zarrkit as zk
        >>> from zarrkit.models.v3 import GroupSpec
        >>> root = zk.group({}, zarr_format=3)
        >>> _ = root.create_array("a", shape=(2,), dtype="u1")
        >>> list(GroupSpec.from_store(root).members)
        ['a']
        """
        return store_io.read_spec(store, path, depth=depth, zarr_format=cls._zarr_format)

    @classmethod
    def from_flat(cls, flat: Mapping[str, Any]) -> Any:
        """The hierarchy of a flat form (values: specs or their JSON documents); groups
        missing between the root and a node are created empty.

        >>> from zarrkit.models.v3 import GroupSpec
        >>> list(GroupSpec.from_flat({"/a/b": GroupSpec()}).to_flat())
        ['', '/a', '/a/b']
        """
        return unflatten(flat, cls, cls._parse_member, cls._zarr_format)

    @classmethod
    def _parse_member(cls, document: Any) -> Any:
        raise NotImplementedError


# --- JSON Schema -----------------------------------------------------------------------------

_NAME_PATTERNS = {2: r"^(?!\.\.?$)[^/\x00]+$", 3: r"^(?!__)(?!\.\.?$)[^/\x00]+$"}


def node_json_schema(cls: Any) -> dict[str, Any]:
    """pydantic's schema of ``cls``, made to read as ZEP 6's: definitions named
    ``ArraySpec``/``GroupSpec``, untyped attributes as objects, untyped members as array
    or group specs, short descriptions."""
    from zarrkit.models import v2, v3

    module = v2 if issubclass(cls, (v2.ArraySpec, v2.GroupSpec)) else v3
    zarr_format = module.ZARR_FORMAT
    schema = cls.model_json_schema()
    definitions: dict[str, Any] = dict(schema.pop("$defs", {}))
    own = "GroupSpec" if cls.__name__.startswith("GroupSpec") else "ArraySpec"
    if "$ref" not in schema:  # a recursive model is a reference into its own $defs
        definitions[cls.__name__] = schema
    for base in (module.ArraySpec, module.GroupSpec):  # the untyped specs members may hold
        extra = base.model_json_schema()
        definitions.update({k: v for k, v in extra.pop("$defs", {}).items()
                            if k not in definitions})
        if "$ref" not in extra:
            definitions.setdefault(base.__name__, extra)
    renamed = {name: _plain_name(name) for name in definitions}
    for name in [n for n in definitions if renamed[n] != n]:
        if renamed[name] in definitions:
            del definitions[name]  # the untyped one is already there under its plain name
        else:
            definitions[renamed[name]] = definitions.pop(name)
    definitions.pop("BaseModel", None)
    if own != cls.__name__ and cls.__name__ in definitions:
        definitions[own] = definitions.pop(cls.__name__)
    for name, definition in definitions.items():
        definition.pop("description", None)
        properties = definition.get("properties", {})
        attributes = properties.get("attributes")
        if attributes is not None and "type" not in attributes and "$ref" not in attributes:
            attributes.pop("anyOf", None)
            attributes["type"] = "object"
        members = properties.get("members")
        if members is not None:
            untyped = [{"$ref": f"#/$defs/{n}"} for n in ("ArraySpec", "GroupSpec")]
            member_schema = members.get("additionalProperties")
            if member_schema in (True, None, {}) or (
                    isinstance(member_schema, dict) and member_schema.get("anyOf") in (
                        untyped, untyped[::-1])):
                # if/then/else rather than ZEP 6's anyOf: an invalid member is reported
                # against the node type it claims, at the path of what is wrong in it.
                claims_array = ({"properties": {"node_type": {"const": "array"}},
                                 "required": ["node_type"]} if zarr_format == 3
                                else {"required": ["shape"]})
                members["additionalProperties"] = {
                    "if": claims_array, "then": {"$ref": "#/$defs/ArraySpec"},
                    "else": {"$ref": "#/$defs/GroupSpec"}}
            members["propertyNames"] = {"pattern": _NAME_PATTERNS[zarr_format]}
        if name in ("ArraySpec", "GroupSpec"):
            definition["title"] = name
            definition["description"] = (f"A model of a Zarr version {zarr_format} "
                                         f"{name.removesuffix('Spec').lower()}")
    text = json.dumps(definitions)
    for old, new in renamed.items():
        text = text.replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": f"#/$defs/{own}", "$defs": json.loads(text)}


def _plain_name(name: str) -> str:
    for plain in ("ArraySpec", "GroupSpec"):
        if name == f"{plain}_Any_" or name == f"{plain}_Any_Any_":
            return plain
    return name
