"""xarray's Zarr v2 convention as specs.

xarray stores a Dataset as a Zarr group whose arrays are its variables; as Zarr v2
arrays have no dimension names, each array carries them in the ``_ARRAY_DIMENSIONS``
attribute, a list of strings (xarray refuses to read an array without it). The specs
here state that rule (:class:`XarrayAttrs`), the one no type states (as many names as
the array has dimensions: :class:`ArraySpec`) and the Dataset's (a dimension has one size
in a group: :class:`GroupSpec`). Other attributes are allowed. Zarr v3 stores, where
xarray uses the arrays' ``dimension_names`` instead, and NCZarr's attributes are not
covered.

>>> import zarrkit as zk
>>> root = zk.group({}, zarr_format=2)
>>> a = root.create_array("t", shape=(3, 4), dtype="f4", attributes={"units": "K"})
>>> [str(v) for v in validate_xarray(root)]
["/t: missing_attribute: attribute '_ARRAY_DIMENSIONS' (list[str]) is missing"]
>>> a.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
>>> validate_xarray(root)
[]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ConfigDict, model_validator, with_config
from typing_extensions import TypedDict

from zarrkit.models import v2
from zarrkit.models.validation import Violation, validate

__all__ = ["ArraySpec", "GroupSpec", "XarrayAttrs", "validate_xarray"]


@with_config(ConfigDict(extra="allow"))
class XarrayAttrs(TypedDict):
    """An xarray variable's attributes: ``_ARRAY_DIMENSIONS``, the names of its
    dimensions, is required; other attributes (``units``, ...) are allowed at run time
    (mypy, which knows only the keys listed, wants a subclass that lists them).

    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(XarrayAttrs).validate_python({"_ARRAY_DIMENSIONS": ["x"], "units": "m"})
    {'_ARRAY_DIMENSIONS': ['x'], 'units': 'm'}
    """

    _ARRAY_DIMENSIONS: list[str]


class ArraySpec(v2.ArraySpec[XarrayAttrs]):
    """A Zarr v2 array as xarray writes a variable: ``_ARRAY_DIMENSIONS`` names each of
    its dimensions (as many names as ``shape`` has entries).

    >>> spec = ArraySpec(shape=(2, 3), chunks=(2, 3), dtype="<f8",
    ...                  attributes={"_ARRAY_DIMENSIONS": ["y", "x"]})
    >>> spec.attributes["_ARRAY_DIMENSIONS"]
    ['y', 'x']
    >>> ArraySpec(shape=(2, 3), chunks=(2, 3), dtype="<f8",
    ...           attributes={"_ARRAY_DIMENSIONS": ["x"]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.SpecError: invalid ArraySpec: /: _ARRAY_DIMENSIONS names 1 dimension...
    """

    @model_validator(mode="after")
    def _check_dimension_count(self) -> ArraySpec:
        names = self.attributes["_ARRAY_DIMENSIONS"]
        if len(names) != len(self.shape):
            raise ValueError(f"_ARRAY_DIMENSIONS names {len(names)} dimension"
                             f"{'' if len(names) == 1 else 's'} ({names!r}) but shape "
                             f"{list(self.shape)} has {len(self.shape)}")
        return self


class GroupSpec(v2.GroupSpec[Any, Any]):
    """A Zarr v2 group as xarray writes a Dataset (or a DataTree node): its members are
    xarray arrays (:class:`ArraySpec`) or such groups, and a dimension has the same size
    in every array of the group that uses it.

    >>> x = ArraySpec(shape=(4,), chunks=(4,), dtype="<f8",
    ...               attributes={"_ARRAY_DIMENSIONS": ["x"]})
    >>> sorted(GroupSpec(members={"x": x, "sub": GroupSpec()}).members)
    ['sub', 'x']
    >>> y = ArraySpec(shape=(5,), chunks=(5,), dtype="<f8",
    ...               attributes={"_ARRAY_DIMENSIONS": ["x"]})
    >>> GroupSpec(members={"x": x, "y": y})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zarrkit.errors.SpecError: invalid GroupSpec: /: dimension 'x' has size 4 in 'x' but 5 ...
    """

    members: Mapping[str, ArraySpec | GroupSpec] = {}

    @model_validator(mode="after")
    def _check_dimension_sizes(self) -> GroupSpec:
        sizes: dict[str, tuple[int, str]] = {}
        for name, member in self.members.items():
            if not isinstance(member, ArraySpec):
                continue
            for dimension, size in zip(member.attributes["_ARRAY_DIMENSIONS"], member.shape,
                                       strict=True):
                first_size, first_name = sizes.setdefault(dimension, (size, name))
                if first_size != size:
                    raise ValueError(f"dimension {dimension!r} has size {first_size} in "
                                     f"{first_name!r} but {size} in {name!r}")
        return self


GroupSpec.model_rebuild()


def validate_xarray(store: Any, *, path: str = "", strict: bool = False) -> list[Violation]:
    """Every violation of xarray's convention by the Zarr v2 group at ``path`` of
    ``store`` (a zarrkit Group or anything zarrkit opens), members at every depth included:
    :func:`~zarrkit.models.validation.validate` with an empty :class:`GroupSpec`.

    >>> import zarrkit as zk
    >>> root = zk.group({}, zarr_format=2)
    >>> _ = root.create_array("x", shape=(3,), dtype="i4",
    ...                       attributes={"_ARRAY_DIMENSIONS": ["x", "y"]})
    >>> [v.kind for v in validate_xarray(root)]
    ['invalid']
    """
    return validate(store, GroupSpec(), path=path, strict=strict)
