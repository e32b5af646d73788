"""hdmf-zarr's reserved attributes (the NWB Zarr backend) as specs, in both of its
conventions: hdmf-zarr 0.13's in Zarr v2 files, 0.14's in Zarr v3 files
(:class:`~zarrkit.hdmf.Convention`; the names and the reading rules are
:mod:`zarrkit.hdmf`'s, :mod:`zarrkit.hierarchy.links` and :mod:`zarrkit.references`).

hdmf-zarr implements links, references and typed datasets with attributes that Zarr
itself does not interpret. hdmf-zarr 0.13: ``zarr_link`` on groups (a list of link
entries), ``zarr_dtype`` on datasets (an hdmf dtype name, or a list of ``{name, dtype}``
fields for a compound type), reference attributes ``{"value": {...}, "zarr_dtype":
"object"}``, scalar datasets of shape ``(1,)`` marked ``zarr_dtype: "scalar"``.
hdmf-zarr 0.14: ``_LINKS`` on groups, ``_DTYPE`` on datasets (``"object_reference"`` for
references), ``_REFERENCE_FIELDS`` naming a compound's reference fields, reference
attributes ``{"_REFERENCE": {"source", "path"}}``, scalar datasets of shape ``()``. Both
put ``.specloc`` on the root (the group caching the format's specifications, whose
sources are scalar datasets).

The specs state the types of those attributes and the rules no type states, as the
conventions' readers need them:

* links: every entry of the link attribute hdmf-zarr reads (``_LINKS``, else
  ``zarr_link``) has a name unique in its group that no member has; a ``zarr_link``
  beside a ``_LINKS`` is never read (its links are lost);
* datasets: a compound ``zarr_dtype`` names the fields of a stored structured dtype, in
  order; ``_REFERENCE_FIELDS`` names string fields of a structured data type; a dataset
  of references holds objects or strings; ``zarr_dtype: "scalar"`` marks shape ``(1,)``;
* reference attributes decode to references (a dict attribute with a ``zarr_dtype`` is
  one: hdmf-zarr reads no other);
* ``.specloc`` names a member group of the root (a path; 0.14 also reads a reference),
  whose sources have the convention's scalar shape: ``(1,)`` in v2 (hdmf-zarr 0.13 reads
  element 0), ``()`` in v3 (0.14 reads ``[()]``);
* a Zarr v2 file has none of 0.14's attributes, which hdmf-zarr 0.13 (the reader of v2
  files) ignores; a Zarr v3 file may have 0.13's, which hdmf-zarr 0.14 reads too.

Other attributes are allowed.

>>> import zarrkit as zk
>>> root = zk.group({}, zarr_format=2)
>>> g = root.create_group("g", attributes={"zarr_link": [{"name": "x", "path": 3}]})
>>> sorted({(v.path, v.kind) for v in validate_hdmf(root)})
[('/g', 'attribute_type')]
>>> v3 = zk.group({}, zarr_format=3)
>>> _ = v3.create_array("refs", shape=(2,), dtype="f8",
...                     attributes={"_DTYPE": "object_reference"})
>>> [v.kind for v in validate_hdmf(v3)]
['invalid']
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NotRequired

import numpy as np
from pydantic import ConfigDict, model_validator, with_config
from typing_extensions import TypedDict

from zarrkit.errors import MetadataError
from zarrkit.hdmf import (
    HDMF_ZARR_013,
    HDMF_ZARR_014,
    SPEC_LOC_ATTRIBUTE,
    Convention,
)
from zarrkit.hdmf.dtypes import REFERENCE_DTYPES, SCALAR
from zarrkit.hierarchy.nodes import link_attribute_in
from zarrkit.models import v2, v3
from zarrkit.models.validation import Violation, validate
from zarrkit.paths import normalize_path
from zarrkit.references import (
    REFERENCE_KEY,
    Reference,
    decode_attribute,
    is_reference_attribute,
)

__all__ = ["CompoundField", "HdmfAttrs", "LinkEntry", "validate_hdmf"]


class LinkEntry(TypedDict):
    """One entry of a group's link attribute (``zarr_link`` or ``_LINKS``; hdmf-zarr
    0.14 writes no object ids).

    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(LinkEntry).validate_python({"name": "d", "source": ".", "path": "/d"})
    {'name': 'd', 'source': '.', 'path': '/d'}
    """

    name: str
    source: str
    path: str
    object_id: NotRequired[str | None]
    source_object_id: NotRequired[str | None]


class CompoundField(TypedDict):
    """One field of a compound ``zarr_dtype``: its name and hdmf dtype (or nested fields).

    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(CompoundField).validate_python({"name": "x", "dtype": "uint32"})
    {'name': 'x', 'dtype': 'uint32'}
    """

    name: str
    dtype: str | list[Any]


@with_config(ConfigDict(extra="allow"))
class HdmfAttrs(TypedDict, total=False):
    """The reserved attributes a node may carry, of both conventions (all optional;
    others allowed). Their names are :data:`zarrkit.hdmf.RESERVED_ATTRIBUTES`, spelled
    out because a type checker reads only literal keys.

    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(HdmfAttrs).validate_python({"_DTYPE": "object_reference", "doc": "d"})
    {'_DTYPE': 'object_reference', 'doc': 'd'}
    """

    zarr_link: list[LinkEntry]
    zarr_dtype: str | list[CompoundField]
    _LINKS: list[LinkEntry]
    _DTYPE: str
    _REFERENCE_FIELDS: list[str]
    object_id: str
    neurodata_type: str
    namespace: str


def _check_foreign(attributes: Mapping[str, Any], convention: Convention) -> None:
    """A Zarr v2 file holds none of hdmf-zarr 0.14's attributes: hdmf-zarr 0.13, which
    reads those files, ignores them (0.14 reads 0.13's, so v3 files may hold those)."""
    if convention.zarr_format != 2:
        return
    newer = HDMF_ZARR_014
    names = [newer.link_attribute, newer.dtype_attribute, newer.reference_fields_attribute]
    found = [name for name in names if name in attributes]
    found += [name for name, value in attributes.items()
              if isinstance(value, Mapping) and REFERENCE_KEY in value or (
                  isinstance(value, list) and value and all(
                      isinstance(v, Mapping) and REFERENCE_KEY in v for v in value))]
    if found:
        raise ValueError(f"{found} {'is' if len(found) == 1 else 'are'} {newer.name}'s "
                         f"(Zarr v3) form, which {convention.name}, the reader of Zarr v2 "
                         f"files, does not read")


def _check_reference_attributes(attributes: Mapping[str, Any]) -> None:
    older = HDMF_ZARR_013
    for name, value in attributes.items():
        if isinstance(value, Mapping) and older.dtype_attribute in value and (
                value[older.dtype_attribute] != older.reference_dtype):
            raise ValueError(f"attribute {name!r} holds a {older.dtype_attribute} of "
                             f"{value[older.dtype_attribute]!r:.50}: hdmf-zarr reads such a "
                             f"value only as a reference ({older.reference_dtype!r})")
        if is_reference_attribute(value):
            try:
                decode_attribute(value)
            except MetadataError as e:
                raise ValueError(f"attribute {name!r}: {e}") from None


def _check_links(attributes: Mapping[str, Any], members: Mapping[str, Any]) -> None:
    read = link_attribute_in(attributes)
    if read is None:
        return
    ignored = [name for name in (HDMF_ZARR_013.link_attribute, HDMF_ZARR_014.link_attribute)
               if name in attributes and name != read]
    if ignored:
        hidden = [entry.get("name") for entry in attributes[ignored[0]] or ()]
        raise ValueError(f"{ignored[0]} beside {read}: hdmf-zarr reads only {read}, so the "
                         f"links {hidden} are lost")
    names = [entry["name"] for entry in attributes[read] or ()]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"{read} names {repeated} more than once")
    clashes = sorted(set(names) & set(members))
    if clashes:
        raise ValueError(f"{read} names {clashes}, which are members of the group too")


def _arrays(group: Any, path: str) -> Iterator[tuple[str, Any]]:
    """The array specs at every depth below a group spec, by path."""
    for name, member in group.members.items():
        if isinstance(member, v2.GroupSpec | v3.GroupSpec):
            yield from _arrays(member, f"{path}/{name}")
        else:
            yield f"{path}/{name}", member


def _check_specloc(attributes: Mapping[str, Any], members: Mapping[str, Any],
                   convention: Convention) -> None:
    value = attributes.get(SPEC_LOC_ATTRIBUTE)
    if value is None:
        return
    try:
        location = decode_attribute(value)
    except MetadataError as e:
        raise ValueError(f"{SPEC_LOC_ATTRIBUTE}: {e}") from None
    if isinstance(location, Reference) and convention.reference_key is not None:
        location = location.path
    if not isinstance(location, str):
        raise ValueError(f"{SPEC_LOC_ATTRIBUTE} must be a path, found {value!r:.100}")
    name = normalize_path(location).split("/")[0]
    if not members:
        return
    if name not in members:
        raise ValueError(f"{SPEC_LOC_ATTRIBUTE} names {location!r}, which is no member of "
                         f"the root")
    specifications = members[name]
    if not isinstance(specifications, v2.GroupSpec | v3.GroupSpec):
        return
    wrong = [path for path, array in _arrays(specifications, f"/{name}")
             if tuple(array.shape) != convention.scalar_shape]
    if wrong:
        raise ValueError(f"the cached specifications' sources {wrong[:5]} are not of shape "
                         f"{convention.scalar_shape}, the scalar datasets {convention.name} "
                         f"reads")


def _check_group(attributes: Mapping[str, Any], members: Mapping[str, Any],
                 convention: Convention) -> None:
    _check_foreign(attributes, convention)
    _check_reference_attributes(attributes)
    _check_links(attributes, members)
    _check_specloc(attributes, members, convention)


def _check_dataset(attributes: Mapping[str, Any], dtype: np.dtype[Any] | None,
                   shape: tuple[int, ...], convention: Convention) -> None:
    _check_foreign(attributes, convention)
    _check_reference_attributes(attributes)
    older, newer = HDMF_ZARR_013, HDMF_ZARR_014
    zarr_dtype = attributes.get(older.dtype_attribute)
    names = list(dtype.names or ()) if dtype is not None else []
    if isinstance(zarr_dtype, list) and names:
        named = [field["name"] for field in zarr_dtype]
        if named != names:
            raise ValueError(f"{older.dtype_attribute} names the fields {named} but the "
                             f"stored dtype has {names}")
    if zarr_dtype == SCALAR and shape != older.scalar_shape:
        raise ValueError(f"{older.dtype_attribute} {SCALAR!r} marks a dataset of shape "
                         f"{older.scalar_shape}, found {shape}")
    fields = attributes.get(newer.reference_fields_attribute or "")
    if fields is not None and dtype is not None:
        strings = [name for name in names if dtype[name].kind == "U"]
        wrong = [name for name in fields if name not in strings]
        if wrong:
            raise ValueError(f"{newer.reference_fields_attribute} names {wrong}, which are "
                             f"no string fields of the stored data type ({dtype})")
    references = attributes.get(newer.dtype_attribute) == newer.reference_dtype or (
        isinstance(zarr_dtype, str) and zarr_dtype in REFERENCE_DTYPES)
    if references and dtype is not None and dtype.kind not in "OTU":
        raise ValueError(f"a dataset of references holds objects or strings, found {dtype}")


class ArraySpecV2(v2.ArraySpec[HdmfAttrs]):
    """A Zarr v2 dataset as hdmf-zarr 0.13 writes one.

    >>> ArraySpecV2(shape=(1,), chunks=(1,), dtype=[["x", "<u4"]],
    ...             attributes={"zarr_dtype": [{"name": "y", "dtype": "uint32"}]})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.SpecError: invalid ArraySpecV2: /: zarr_dtype names the fields ['y'] ...
    """

    @model_validator(mode="after")
    def _check_reserved(self) -> ArraySpecV2:
        _check_dataset(self.attributes, self.to_metadata().dtype, tuple(self.shape),
                       HDMF_ZARR_013)
        return self


class GroupSpecV2(v2.GroupSpec[HdmfAttrs, Any]):
    """A Zarr v2 group as hdmf-zarr 0.13 writes one (members: hdmf datasets and groups).

    >>> GroupSpecV2(attributes={"zarr_link": [{"name": "b", "source": ".", "path": "/a"}]},
    ...             members={"a": GroupSpecV2()}).members["a"].zarr_format
    2
    """

    members: Mapping[str, ArraySpecV2 | GroupSpecV2] = {}

    @model_validator(mode="after")
    def _check_reserved(self) -> GroupSpecV2:
        _check_group(self.attributes, self.members, HDMF_ZARR_013)
        return self


class ArraySpecV3(v3.ArraySpec[HdmfAttrs]):
    """A Zarr v3 dataset as hdmf-zarr 0.14 writes one (a scalar has shape ``()``); the
    attributes of hdmf-zarr 0.13, which 0.14 reads too, are allowed (zarrkit wrote them in
    v3 files before it knew 0.14: references and compounds as JSON texts, so there a
    ``zarr_dtype`` names no stored fields).

    >>> ArraySpecV3.from_array(np.zeros(()), attributes={"_DTYPE": "float64"}).shape
    ()
    >>> ArraySpecV3.from_array(np.zeros(2, dtype=[("n", "i4"), ("t", "U9")]),
    ...                        attributes={"_REFERENCE_FIELDS": ["n"]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.SpecError: invalid ArraySpecV3: /: _REFERENCE_FIELDS names ['n'], ...
    """

    @model_validator(mode="after")
    def _check_reserved(self) -> ArraySpecV3:
        _check_dataset(self.attributes, self.to_metadata().dtype, tuple(self.shape),
                       HDMF_ZARR_014)
        return self


class GroupSpecV3(v3.GroupSpec[HdmfAttrs, Any]):
    """A Zarr v3 group as hdmf-zarr 0.14 writes one (0.13's attributes allowed).

    >>> GroupSpecV3(attributes={"_LINKS": [{"name": "a", "source": ".", "path": "/b"},
    ...     {"name": "a", "source": ".", "path": "/c"}]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.SpecError: invalid GroupSpecV3: /: _LINKS names ['a'] more than once
    """

    members: Mapping[str, ArraySpecV3 | GroupSpecV3] = {}

    @model_validator(mode="after")
    def _check_reserved(self) -> GroupSpecV3:
        _check_group(self.attributes, self.members, HDMF_ZARR_014)
        return self


GroupSpecV2.model_rebuild()
GroupSpecV3.model_rebuild()


def validate_hdmf(store: Any, *, path: str = "", strict: bool = False) -> list[Violation]:
    """Every violation of hdmf-zarr's convention of the hierarchy's format (0.13's in
    Zarr v2, 0.14's in v3) in the hierarchy at ``path`` of ``store`` (every member at
    every depth).

    >>> import zarrkit as zk
    >>> validate_hdmf(zk.group({}, zarr_format=3, attributes={".specloc": "specifications"}))
    []
    """
    from zarrkit.api import open_group

    group = open_group(store, mode="r", path=path) if not hasattr(store, "zarr_format") \
        else store
    spec: Any = GroupSpecV3() if group.zarr_format == 3 else GroupSpecV2()
    return validate(group, spec, strict=strict)
