"""hdmf-zarr's reserved attributes (the NWB Zarr backend) as specs.

hdmf-zarr implements links, references and typed datasets with attributes that Zarr
itself does not interpret: ``zarr_link`` on groups (a list of link entries), ``zarr_dtype``
on datasets (an hdmf dtype name, or a list of ``{name, dtype}`` fields for a compound
type) and, on the root, ``.specloc`` (the group caching the format's specifications).
The specs here state their shapes and the rules no type states: a compound
``zarr_dtype`` names the fields of the stored structured dtype, in order; every link
entry has a name unique in its group; ``.specloc`` names a member group of the root.
Other attributes are allowed. Both Zarr formats are covered.

>>> import zarrkit as zk
>>> root = zk.group({}, zarr_format=2)
>>> g = root.create_group("g", attributes={"zarr_link": [{"name": "x", "path": 3}]})
>>> sorted({(v.path, v.kind) for v in validate_hdmf(root)})
[('/g', 'attribute_type')]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired

import numpy as np
from pydantic import ConfigDict, model_validator, with_config
from typing_extensions import TypedDict

from zarrkit.models import v2, v3
from zarrkit.models.validation import Violation, validate

__all__ = ["CompoundField", "HdmfAttrs", "LinkEntry", "validate_hdmf"]


class LinkEntry(TypedDict):
    """One entry of a group's ``zarr_link`` attribute.

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
    """The reserved attributes a node may carry (all optional; others allowed).

    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(HdmfAttrs).validate_python({"zarr_dtype": "object", "doc": "d"})
    {'zarr_dtype': 'object', 'doc': 'd'}
    """

    zarr_link: list[LinkEntry]
    zarr_dtype: str | list[CompoundField]
    object_id: str
    neurodata_type: str
    namespace: str


def _check_compound(attributes: Mapping[str, Any], dtype: np.dtype[Any] | None) -> None:
    fields = attributes.get("zarr_dtype")
    if not isinstance(fields, list) or dtype is None:
        return
    stored = list(dtype.names or ())
    named = [field["name"] for field in fields]
    if named != stored:
        raise ValueError(f"zarr_dtype names the fields {named} but the stored dtype has "
                         f"{stored}")


def _check_links(attributes: Mapping[str, Any], members: Mapping[str, Any]) -> None:
    names = [entry["name"] for entry in attributes.get("zarr_link", ())]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"zarr_link names {repeated} more than once")
    clashes = sorted(set(names) & set(members))
    if clashes:
        raise ValueError(f"zarr_link names {clashes}, which are members of the group too")


def _check_specloc(attributes: Mapping[str, Any], members: Mapping[str, Any]) -> None:
    location = attributes.get(".specloc")
    if location is None:
        return
    name = str(location).strip("/")
    if members and name not in members:
        raise ValueError(f".specloc names {location!r}, which is no member of the root")


class ArraySpecV2(v2.ArraySpec[HdmfAttrs]):
    """A Zarr v2 dataset as hdmf-zarr writes one.

    >>> ArraySpecV2(shape=(1,), chunks=(1,), dtype=[["x", "<u4"]],
    ...             attributes={"zarr_dtype": [{"name": "y", "dtype": "uint32"}]})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.SpecError: invalid ArraySpecV2: /: zarr_dtype names the fields ['y'] ...
    """

    @model_validator(mode="after")
    def _check_reserved(self) -> ArraySpecV2:
        _check_compound(self.attributes, self.to_metadata().dtype)
        return self


class GroupSpecV2(v2.GroupSpec[HdmfAttrs, Any]):
    """A Zarr v2 group as hdmf-zarr writes one (members: hdmf datasets and groups).

    >>> GroupSpecV2(attributes={"zarr_link": [{"name": "b", "source": ".", "path": "/a"}]},
    ...             members={"a": GroupSpecV2()}).members["a"].zarr_format
    2
    """

    members: Mapping[str, ArraySpecV2 | GroupSpecV2] = {}

    @model_validator(mode="after")
    def _check_reserved(self) -> GroupSpecV2:
        _check_links(self.attributes, self.members)
        _check_specloc(self.attributes, self.members)
        return self


class ArraySpecV3(v3.ArraySpec[HdmfAttrs]):
    """A Zarr v3 dataset with hdmf-zarr's reserved attributes (references and compounds
    are JSON texts there, so ``zarr_dtype`` names no stored fields).

    >>> ArraySpecV3.from_array(np.zeros(2), attributes={"zarr_dtype": "float64"}).shape
    (2,)
    """


class GroupSpecV3(v3.GroupSpec[HdmfAttrs, Any]):
    """A Zarr v3 group with hdmf-zarr's reserved attributes.

    >>> GroupSpecV3(attributes={"zarr_link": [{"name": "a", "source": ".", "path": "/b"},
    ...     {"name": "a", "source": ".", "path": "/c"}]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.SpecError: invalid GroupSpecV3: /: zarr_link names ['a'] more than once
    """

    members: Mapping[str, ArraySpecV3 | GroupSpecV3] = {}

    @model_validator(mode="after")
    def _check_reserved(self) -> GroupSpecV3:
        _check_links(self.attributes, self.members)
        _check_specloc(self.attributes, self.members)
        return self


GroupSpecV2.model_rebuild()
GroupSpecV3.model_rebuild()


def validate_hdmf(store: Any, *, path: str = "", strict: bool = False) -> list[Violation]:
    """Every violation of hdmf-zarr's reserved attributes in the hierarchy at ``path`` of
    ``store`` (either format; every member at every depth).

    >>> import zarrkit as zk
    >>> validate_hdmf(zk.group({}, zarr_format=3, attributes={".specloc": "specifications"}))
    []
    """
    from zarrkit.api import open_group

    group = open_group(store, mode="r", path=path) if not hasattr(store, "zarr_format") \
        else store
    spec: Any = GroupSpecV3() if group.zarr_format == 3 else GroupSpecV2()
    return validate(group, spec, strict=strict)
