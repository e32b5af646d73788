"""Zarr Object Models for Zarr v3: :class:`ArraySpec` and :class:`GroupSpec`.

Their JSON form is the ZEP 6 one: a ``zarr.json`` document of a node, with the group's
members nested under ``members``.

>>> from zarrkit.models.v3 import ArraySpec, GroupSpec
>>> spec = GroupSpec(attributes={"title": "demo"}, members={
...     "x": ArraySpec.from_array(np.zeros((4, 4), dtype="u1"), chunks=(2, 2))})
>>> group = spec.to_store({})
>>> GroupSpec.from_store(group.store).like(spec)
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, cast

import numpy as np
from pydantic import (
    BaseModel,
    NonNegativeInt,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from zarrkit.errors import UnknownDataTypeError
from zarrkit.models import _common, store_io
from zarrkit.models._common import GroupMethods, NodeMethods, SpecModel, as_value_error

TAttrs = TypeVar("TAttrs", bound="Mapping[str, Any] | BaseModel")
if TYPE_CHECKING:
    TMembers = TypeVar("TMembers", bound="ArraySpec[Any] | GroupSpec[Any, Any]")
else:
    # Unparametrised at run time: a member parsed from JSON is validated as the plain
    # spec (attributes an object, members specs), not as ``GroupSpec[Any, Any]``.
    TMembers = TypeVar("TMembers", bound="ArraySpec | GroupSpec")

ZARR_FORMAT = 3


class NamedConfig(SpecModel):
    """An extension point's value: ``{"name": ..., "configuration": {...}}`` (a chunk grid,
    chunk key encoding, codec or storage transformer).

    >>> NamedConfig(name="gzip", configuration={"level": 1}).to_json()
    {'name': 'gzip', 'configuration': {'level': 1}}
    """

    name: str
    configuration: dict[str, Any] | None = None
    must_understand: bool | None = None

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Absent and null mean the same here, and Zarr v3 documents leave them out.
        document: dict[str, Any] = handler(self)
        return {key: value for key, value in document.items()
                if value is not None or key == "name"}


class ArraySpec(SpecModel, NodeMethods, Generic[TAttrs]):
    """A Zarr v3 array's metadata, attributes included (no chunk data).

    >>> spec = ArraySpec.from_array(np.arange(6, dtype="i2"), chunks=(3,))
    >>> spec.shape, spec.data_type, spec.chunk_grid.configuration
    ((6,), 'int16', {'chunk_shape': [3]})
    """

    _header: ClassVar[tuple[str, ...]] = ("zarr_format", "node_type", "attributes",
                                          "chunk_key_encoding")

    zarr_format: Literal[3] = 3
    node_type: Literal["array"] = "array"
    attributes: TAttrs = cast(Any, {})
    shape: Sequence[NonNegativeInt]
    data_type: str | dict[str, Any]
    chunk_grid: NamedConfig
    chunk_key_encoding: NamedConfig = NamedConfig(name="default",
                                                  configuration={"separator": "/"})
    fill_value: Any
    codecs: tuple[NamedConfig | str, ...]
    storage_transformers: tuple[NamedConfig, ...] | None = None
    dimension_names: tuple[str | None, ...] | None = None

    _normal: dict[str, Any] | None = PrivateAttr(default=None)

    @field_validator("shape")
    @classmethod
    def _shape_tuple(cls, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(shape)

    @model_validator(mode="after")
    def _check_metadata(self, info: ValidationInfo) -> ArraySpec[TAttrs]:
        if not (info.context or {}).get("trusted"):
            as_value_error(self.normalized)
        return self

    def to_metadata(self) -> Any:
        """The :class:`~zarrkit.metadata.v3.ArrayMetadataV3` this spec describes.

        >>> ArraySpec.from_array(np.zeros(3, dtype="f4")).to_metadata().dtype
        dtype('float32')
        """
        from zarrkit.metadata.v3 import ArrayMetadataV3

        return ArrayMetadataV3.from_json(_understood(self.model_dump(mode="json")),
                                         key="ArraySpec")

    def normalized(self) -> dict[str, Any]:
        """The document as zarrkit writes it back: canonical data type and fill value
        spellings, codec defaults filled in, empty optional fields left out. ``diff`` and
        ``like`` compare these.

        >>> spec = ArraySpec.from_json({"shape": [2], "data_type": "|u1", "fill_value": 0,
        ...     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        ...     "codecs": [{"name": "bytes"}]})
        >>> spec.normalized()["data_type"], spec.normalized()["codecs"]
        ('uint8', [{'name': 'bytes'}])
        """
        if self._normal is None:
            from zarrkit.hierarchy.creation import validated_codecs

            metadata = self.to_metadata()
            document = metadata.to_json()
            document["codecs"] = list(validated_codecs(metadata, _largest_chunk(metadata)))
            if not document.get("storage_transformers"):
                document.pop("storage_transformers", None)
            if all(name is None for name in document.get("dimension_names") or ()):
                document.pop("dimension_names", None)
            self._normal = document
        return self._normal

    @classmethod
    def _from_trusted(cls, document: dict[str, Any]) -> ArraySpec[Any] | None:
        """A spec of a document zarrkit's metadata parser has accepted, built without
        validating it again (opening 1000 arrays' specs was mostly pydantic re-checking
        them); None when the document has keys a spec does not, for the slow path."""
        if not document.keys() <= _ARRAY_FIELDS:
            return None
        fields = dict(document)
        try:
            fields["shape"] = tuple(document["shape"])
            fields["chunk_grid"] = _trusted_named(document["chunk_grid"])
            fields["chunk_key_encoding"] = _trusted_named(document["chunk_key_encoding"])
            fields["codecs"] = tuple(c if isinstance(c, str) else _trusted_named(c)
                                     for c in document["codecs"])
            if document.get("storage_transformers") is not None:
                fields["storage_transformers"] = tuple(
                    _trusted_named(t) for t in document["storage_transformers"])
            if document.get("dimension_names") is not None:
                fields["dimension_names"] = tuple(document["dimension_names"])
        except (KeyError, TypeError, _NotPlain):
            return None
        return cls.model_construct(**fields)

    @classmethod
    def from_metadata(cls, metadata: Any) -> ArraySpec[Any]:
        """The spec of parsed array metadata (attributes included).

        >>> from zarrkit.hierarchy.creation import array_metadata_v3
        >>> ArraySpec.from_metadata(array_metadata_v3(shape=(2,), dtype="u1")).shape
        (2,)
        """
        return cast(ArraySpec[Any], store_io.spec_of(cls, metadata, metadata.attributes))

    @classmethod
    def from_array(cls, array: Any, **overrides: Any) -> ArraySpec[Any]:
        """The spec of an array: a zarrkit array's own metadata, or for any other array
        (numpy, dask, zarr-python) the metadata zarrkit would create for its shape and
        dtype. ``overrides`` replace spec fields; ``chunks=`` sets the chunk shape.

        >>> ArraySpec.from_array(np.zeros((2, 3)), chunks=(1, 3)).chunk_grid.configuration
        {'chunk_shape': [1, 3]}
        """
        return cast(ArraySpec[Any], store_io.array_spec_from(cls, array, ZARR_FORMAT,
                                                             overrides))

class GroupSpec(SpecModel, GroupMethods, Generic[TAttrs, TMembers]):
    """A Zarr v3 group: its attributes and its members (array and group specs by name).

    >>> GroupSpec(members={"g": GroupSpec()}).to_flat()["/g"].node_type
    'group'
    """

    _header: ClassVar[tuple[str, ...]] = ("zarr_format", "node_type", "attributes", "members")
    _zarr_format: ClassVar[int] = ZARR_FORMAT

    zarr_format: Literal[3] = 3
    node_type: Literal["group"] = "group"
    attributes: TAttrs = cast(Any, {})
    members: Mapping[str, TMembers] = {}

    @field_validator("members")
    @classmethod
    def _check_names(cls, members: Mapping[str, Any]) -> Mapping[str, Any]:
        _common.check_member_names(members, ZARR_FORMAT)
        return members

    def normalized(self) -> dict[str, Any]:
        """The group's own document (members left out), as compared by ``diff``.

        >>> GroupSpec(attributes={"a": 1}).normalized()
        {'zarr_format': 3, 'node_type': 'group', 'attributes': {'a': 1}}
        """
        return {"zarr_format": 3, "node_type": "group",
                "attributes": self.model_dump(mode="json", include={"attributes"})
                ["attributes"]}

    def to_metadata(self) -> Any:
        """The :class:`~zarrkit.metadata.v3.GroupMetadataV3` of the group itself.

        >>> GroupSpec(attributes={"a": 1}).to_metadata().attributes
        {'a': 1}
        """
        from zarrkit.metadata.v3 import GroupMetadataV3

        return GroupMetadataV3(attributes=self.normalized()["attributes"])

    @classmethod
    def _parse_member(cls, document: Any) -> Any:
        return parse_node(document)

class _NotPlain(Exception):
    pass


def _trusted_named(value: Any) -> NamedConfig:
    if not isinstance(value, dict) or not value.keys() <= _NAMED_FIELDS \
            or not isinstance(value.get("name"), str):
        raise _NotPlain
    return NamedConfig.model_construct(**value)


def _largest_chunk(metadata: Any) -> tuple[int, ...] | None:
    """The chunk shape to check the codecs with: the grid's own when regular, else the
    largest chunk of each dimension (codecs are checked per chunk shape)."""
    from zarrkit.metadata.chunk_grid import RegularChunkGrid

    grid = metadata.chunk_grid
    if isinstance(grid, RegularChunkGrid):
        return None
    return tuple(max(lengths, default=1)
                 for lengths in grid.chunk_lengths(metadata.shape))


def parse_node(document: Any) -> ArraySpec[Any] | GroupSpec[Any, Any]:
    """An array or group spec from a spec or JSON document, by its ``node_type``.

    >>> type(parse_node({"zarr_format": 3, "node_type": "group"})).__name__
    'GroupSpec'
    """
    if isinstance(document, (ArraySpec, GroupSpec)):
        return document
    if _common.claimed_kind(document) == "array":
        return ArraySpec.model_validate(document)
    return GroupSpec.model_validate(document)


def _understood(document: dict[str, Any]) -> dict[str, Any]:
    """The spellings ZEP 6's own example uses that are not Zarr v3 metadata, read as
    what they mean: a numpy data type string (``"|u1"``), a codec name in another case
    (``"GZip"``) and ``"storage_transformers": null``."""
    from zarrkit.metadata.dtypes_v3 import data_type_v3_from_numpy, parse_data_type_v3

    data_type = document.get("data_type")
    if isinstance(data_type, str):
        try:
            parse_data_type_v3(data_type)
        except UnknownDataTypeError:
            try:
                numpy_type = np.dtype(data_type)
            except TypeError:
                pass
            else:
                document["data_type"] = data_type_v3_from_numpy(numpy_type).json
    codecs = [_known_codec_name(c) for c in document.get("codecs") or ()]
    document["codecs"] = _with_array_bytes_codec(codecs, document)
    if document.get("storage_transformers") is None:
        document.pop("storage_transformers", None)
    return document


def _with_array_bytes_codec(codecs: list[Any], document: dict[str, Any]) -> list[Any]:
    """``codecs`` with the ``bytes`` codec added where the chain has no array -> bytes
    codec (ZEP 6's example lists only a compressor)."""
    from zarrkit.codecs.v3.base import ArrayArrayCodec, ArrayBytesCodec
    from zarrkit.codecs.v3.pipeline import build_codec
    from zarrkit.codecs.v3.spec import ChunkSpec
    from zarrkit.errors import ZarrkitError
    from zarrkit.metadata.chunk_grid import parse_chunk_grid
    from zarrkit.metadata.dtypes import bytes_codec_json
    from zarrkit.metadata.dtypes_v3 import parse_data_type_v3

    try:
        grid = parse_chunk_grid(document["chunk_grid"])
        dtype = parse_data_type_v3(document["data_type"]).numpy
        spec = ChunkSpec(tuple(getattr(grid, "chunk_shape", ())), dtype)
        kinds = [build_codec(c, spec, after_array_bytes=False) for c in codecs]
    except (ZarrkitError, KeyError, TypeError, ValueError):
        return codecs  # the metadata parser reports what is wrong
    if any(isinstance(codec, ArrayBytesCodec) for codec in kinds):
        return codecs
    position = sum(1 for codec in kinds if isinstance(codec, ArrayArrayCodec))
    return [*codecs[:position], bytes_codec_json(dtype), *codecs[position:]]


def _known_codec_name(codec: Any) -> Any:
    from zarrkit import registry

    if not isinstance(codec, dict) or not isinstance(codec.get("name"), str):
        return codec
    name = codec["name"]
    if name in registry.codecs:
        return codec
    folded = {known.lower(): known for known in registry.codecs.names()}
    known = folded.get(name.lower())
    return codec if known is None else {**codec, "name": known}


GroupSpec.model_rebuild()
ArraySpec.model_rebuild()
# pydantic's model_fields is a property that costs microseconds per access.
_ARRAY_FIELDS = frozenset(ArraySpec.model_fields)
_NAMED_FIELDS = frozenset(NamedConfig.model_fields)
