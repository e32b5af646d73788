"""Zarr Object Models for Zarr v2: :class:`ArraySpec` and :class:`GroupSpec`.

Their JSON form is the ZEP 6 one: an array is its ``.zarray`` document with its
``.zattrs`` under ``attributes``; a group is ``zarr_format``, ``attributes`` and
``members``.

>>> import numpy as np
>>> from zarrkit.models.v2 import ArraySpec, GroupSpec
>>> spec = GroupSpec(members={"x": ArraySpec.from_array(np.zeros(4, dtype="u1"))})
>>> GroupSpec.from_store(spec.to_store({})).like(spec)
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, cast

import numpy as np
from pydantic import (
    BaseModel,
    NonNegativeInt,
    PositiveInt,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from zarrkit.models import _common, store_io
from zarrkit.models._common import GroupMethods, NodeMethods, SpecModel, as_value_error

TAttrs = TypeVar("TAttrs", bound="Mapping[str, Any] | BaseModel")
if TYPE_CHECKING:
    TMembers = TypeVar("TMembers", bound="ArraySpec[Any] | GroupSpec[Any, Any]")
else:
    # Unparametrised at run time: a member parsed from JSON is validated as the plain
    # spec (attributes an object, members specs), not as ``GroupSpec[Any, Any]``.
    TMembers = TypeVar("TMembers", bound="ArraySpec | GroupSpec")

ZARR_FORMAT = 2

# A structured dtype: [name, type] or [name, type, shape] entries, nested.
StructuredDtype = list[list[Any]]


class ArraySpec(SpecModel, NodeMethods, Generic[TAttrs]):
    """A Zarr v2 array's metadata (``.zarray``) and attributes (``.zattrs``).

    >>> import numpy as np
    >>> spec = ArraySpec.from_array(np.arange(6, dtype="i2"), chunks=(3,))
    >>> spec.shape, spec.chunks, spec.dtype
    ((6,), (3,), '<i2')
    """

    _header: ClassVar[tuple[str, ...]] = ("zarr_format", "attributes")

    zarr_format: Literal[2] = 2
    attributes: TAttrs = cast(Any, {})
    shape: Sequence[NonNegativeInt]
    chunks: Sequence[PositiveInt]
    dtype: str | StructuredDtype
    fill_value: Any = None
    order: Literal["C", "F"] = "C"
    # ZEP 6's example writes "no filters" as {}; null and [] say the same.
    filters: tuple[dict[str, Any], ...] | dict[str, Any] | None = None
    dimension_separator: Literal[".", "/"] = "."
    compressor: dict[str, Any] | None = None

    _normal: dict[str, Any] | None = PrivateAttr(default=None)

    @field_validator("shape", "chunks")
    @classmethod
    def _int_tuple(cls, value: Sequence[int]) -> tuple[int, ...]:
        return tuple(value)

    @field_validator("filters")
    @classmethod
    def _check_filters(cls, filters: Any) -> Any:
        if isinstance(filters, dict) and filters:
            raise ValueError("filters must be a list of codec configurations or null")
        return filters

    @model_validator(mode="after")
    def _check_metadata(self, info: ValidationInfo) -> ArraySpec[TAttrs]:
        if not (info.context or {}).get("trusted"):
            as_value_error(self.normalized)
        return self

    def to_metadata(self) -> Any:
        """The :class:`~zarrkit.metadata.v2.ArrayMetadataV2` this spec describes.

        >>> import numpy as np
        >>> ArraySpec.from_array(np.zeros(3, dtype="f4")).to_metadata().dtype
        dtype('float32')
        """
        from zarrkit.metadata.v2 import ArrayMetadataV2

        document = self.model_dump(mode="json")
        document.pop("attributes")
        if not document["filters"]:
            document["filters"] = None
        document["dtype"] = _understood_dtype(document["dtype"])
        return ArrayMetadataV2.from_json(document, key="ArraySpec")

    def normalized(self) -> dict[str, Any]:
        """The ``.zarray`` document as zarrkit writes it back, with codec configurations
        completed by numcodecs and the attributes; ``diff`` and ``like`` compare these.

        >>> import numpy as np
        >>> spec = ArraySpec.from_array(np.zeros(2, dtype="u1"), compressor={"id": "zstd"})
        >>> spec.normalized()["compressor"]
        {'id': 'zstd', 'level': 0, 'checksum': False}
        """
        if self._normal is None:
            from zarrkit.hierarchy.creation import validated_codecs

            metadata = self.to_metadata()
            validated_codecs(metadata)
            document = metadata.to_json()
            document["compressor"] = _complete(document["compressor"])
            document["filters"] = [_complete(f) for f in document["filters"] or ()] or None
            document["attributes"] = self.model_dump(mode="json",
                                                     include={"attributes"})["attributes"]
            self._normal = document
        return self._normal

    @classmethod
    def _from_trusted(cls, document: dict[str, Any]) -> ArraySpec[Any] | None:
        """A spec of a document zarrkit's metadata parser has accepted, built without
        validating it again; None when the document has keys a spec does not."""
        if not document.keys() <= _ARRAY_FIELDS:
            return None
        fields = dict(document)
        fields["shape"] = tuple(document["shape"])
        fields["chunks"] = tuple(document["chunks"])
        if document.get("filters") is not None:
            fields["filters"] = tuple(document["filters"])
        return cls.model_construct(**fields)

    @classmethod
    def from_metadata(cls, metadata: Any, attributes: Mapping[str, Any] | None = None
                      ) -> ArraySpec[Any]:
        """The spec of parsed ``.zarray`` metadata and its attributes.

        >>> from zarrkit.hierarchy.creation import array_metadata_v2
        >>> ArraySpec.from_metadata(array_metadata_v2(shape=(2,), dtype="u1")).chunks
        (2,)
        """
        return cast(ArraySpec[Any], store_io.spec_of(cls, metadata, attributes or {}))

    @classmethod
    def from_array(cls, array: Any, **overrides: Any) -> ArraySpec[Any]:
        """The spec of an array: a zarrkit array's own metadata, or for any other array
        (numpy, dask, zarr-python) the metadata zarrkit would create for its shape and
        dtype. ``overrides`` replace spec fields (``compressors=[codec]`` sets
        ``compressor``).

        >>> import numpy as np
        >>> ArraySpec.from_array(np.zeros((2, 3)), chunks=(1, 3)).chunks
        (1, 3)
        """
        overrides = dict(overrides)
        if "compressors" in overrides:
            overrides["compressor"] = _one_compressor(overrides.pop("compressors"))
        return cast(ArraySpec[Any], store_io.array_spec_from(cls, array, ZARR_FORMAT,
                                                             overrides))


class GroupSpec(SpecModel, GroupMethods, Generic[TAttrs, TMembers]):
    """A Zarr v2 group: its attributes (``.zattrs``) and its members by name.

    >>> GroupSpec(members={"g": GroupSpec()}).to_json()["members"]
    {'g': {'zarr_format': 2, 'attributes': {}, 'members': {}}}
    """

    _header: ClassVar[tuple[str, ...]] = ("zarr_format", "attributes", "members")
    _zarr_format: ClassVar[int] = ZARR_FORMAT

    zarr_format: Literal[2] = 2
    attributes: TAttrs = cast(Any, {})
    members: Mapping[str, TMembers] = {}

    @field_validator("members")
    @classmethod
    def _check_names(cls, members: Mapping[str, Any]) -> Mapping[str, Any]:
        _common.check_member_names(members, ZARR_FORMAT)
        return members

    def normalized(self) -> dict[str, Any]:
        """The group's own documents (members left out), as compared by ``diff``.

        >>> GroupSpec(attributes={"a": 1}).normalized()
        {'zarr_format': 2, 'attributes': {'a': 1}}
        """
        return {"zarr_format": 2,
                "attributes": self.model_dump(mode="json", include={"attributes"})
                ["attributes"]}

    @classmethod
    def _parse_member(cls, document: Any) -> Any:
        return parse_node(document)


def parse_node(document: Any) -> ArraySpec[Any] | GroupSpec[Any, Any]:
    """An array or group spec from a spec or JSON document (an array has a ``shape``).

    >>> type(parse_node({"zarr_format": 2, "members": {}})).__name__
    'GroupSpec'
    """
    if isinstance(document, (ArraySpec, GroupSpec)):
        return document
    if _common.claimed_kind(document) == "array":
        return ArraySpec.model_validate(document)
    return GroupSpec.model_validate(document)


def _understood_dtype(dtype: Any) -> Any:
    """A numpy spelling that is no v2 type string (``"uint8"``, as ZEP 6's typed example
    writes it) read as the type it names; anything else is left for the parser to judge."""
    from zarrkit.errors import MetadataError
    from zarrkit.metadata.dtypes import dtype_to_json_v2, parse_dtype_v2

    if not isinstance(dtype, str):
        return dtype
    try:
        parse_dtype_v2(dtype)
    except MetadataError:
        try:
            return dtype_to_json_v2(np.dtype(dtype))
        except (TypeError, ValueError, MetadataError):
            pass
    return dtype


def _complete(config: dict[str, Any] | None) -> dict[str, Any] | None:
    """A numcodecs configuration with numcodecs' defaults filled in (as zarr-python
    writes it), so ``{"id": "zstd"}`` and ``{"id": "zstd", "level": 0, ...}`` compare equal."""
    if config is None:
        return None
    from zarrkit.codecs.registry import to_codec

    try:
        return dict(to_codec(config).get_config())
    except Exception:  # noqa: BLE001 - a codec numcodecs cannot build stays as written
        return dict(config)


def _one_compressor(compressors: Any) -> dict[str, Any] | None:
    from zarrkit.codecs.registry import to_codec
    from zarrkit.errors import SpecError

    if compressors is None:
        return None
    items = [compressors] if isinstance(compressors, (dict, str)) or hasattr(
        compressors, "get_config") else list(compressors)
    if len(items) > 1:
        raise SpecError(f"Zarr v2 arrays have one compressor, found {len(items)}: {items!r}")
    return dict(to_codec(items[0]).get_config()) if items else None


GroupSpec.model_rebuild()
ArraySpec.model_rebuild()
# pydantic's model_fields is a property that costs microseconds per access.
_ARRAY_FIELDS = frozenset(ArraySpec.model_fields)
