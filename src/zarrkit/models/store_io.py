"""Specs from stores and arrays, and specs written to stores, for both formats."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrkit.errors import ContainsArrayError, ContainsGroupError, SpecError
from zarrkit.paths import join_path, normalize_path


def _module(zarr_format: int) -> Any:
    if zarr_format == 3:
        from zarrkit.models import v3

        return v3
    from zarrkit.models import v2

    return v2


def array_spec_from(cls: Any, array: Any, zarr_format: int, overrides: Mapping[str, Any]
                    ) -> Any:
    """``cls.from_array``: a zarrkit array's metadata, or the metadata zarrkit creates for
    any other array's shape and dtype; then ``overrides`` (spec fields; ``chunks``)."""
    from zarrkit.hierarchy import Array

    overrides = dict(overrides)
    chunks = overrides.pop("chunks", None) if zarr_format == 3 else None
    if isinstance(array, Array):
        if array.zarr_format != zarr_format:
            raise SpecError(f"{array!r} is a Zarr v{array.zarr_format} array; use "
                            f"zarrkit.models.v{array.zarr_format} (or convert the spec with "
                            f"zarrkit.models.to_v{zarr_format})")
        spec = spec_of(cls, array.metadata, array.attrs.asdict())
        if chunks is not None:
            overrides["chunk_grid"] = _regular_grid(chunks, array.shape)
    else:
        from zarrkit.hierarchy.creation import array_metadata

        if not (hasattr(array, "shape") and hasattr(array, "dtype")):
            array = np.asarray(array)
        options: dict[str, Any] = {"shape": tuple(array.shape), "dtype": np.dtype(array.dtype)}
        if chunks is not None or (zarr_format == 2 and "chunks" in overrides):
            options["chunks"] = chunks if chunks is not None else overrides.pop("chunks")
        spec = spec_of(cls, array_metadata(zarr_format=zarr_format, **options), {})
    if not overrides:
        return spec
    document = spec.to_json()
    document.update(overrides)
    return cls.model_validate(document)


def _regular_grid(chunks: Any, shape: tuple[int, ...]) -> dict[str, Any]:
    from zarrkit.hierarchy.creation import normalize_chunks

    return {"name": "regular",
            "configuration": {"chunk_shape": list(normalize_chunks(chunks, shape, 1))}}


def spec_of(cls: Any, metadata: Any, attributes: Mapping[str, Any],
            stored: Mapping[str, Any] | None = None) -> Any:
    """The array spec of parsed metadata and attributes (trusted: already validated).
    ``stored``, the document the metadata was parsed from, is taken as it is when it has
    no field a spec lacks (writing the metadata back out costs as much as parsing it)."""
    # Only the plain specs are built unvalidated: a typed or derived one has checks of
    # its own to run.
    plain = cls is _module(metadata.zarr_format).ArraySpec
    if plain and stored is not None:
        spec = cls._from_trusted({**stored, "attributes": dict(attributes)})
        if spec is not None:
            return spec
    document = metadata.to_json()
    document["attributes"] = dict(attributes)
    if plain:
        spec = cls._from_trusted(document)
        if spec is not None:
            return spec
    return cls.model_validate(document, context={"trusted": True})


def read_spec(source: Any, path: str, *, depth: int, zarr_format: int) -> Any:
    """``GroupSpec.from_store``: the spec of the group at ``path`` and its members."""
    from zarrkit.api import open_group
    from zarrkit.hierarchy import Group

    if isinstance(source, Group):
        group = source if not normalize_path(path) else source[normalize_path(path)]
        if not isinstance(group, Group):
            raise SpecError(f"{group!r} is an array; use ArraySpec.from_array")
    else:
        group = open_group(source, mode="r", path=path)  # consolidated when present
    if group.zarr_format != zarr_format:
        raise SpecError(f"the group at {group.path or '/'!r} is Zarr v{group.zarr_format}; use "
                        f"zarrkit.models.v{group.zarr_format}.GroupSpec.from_store")
    module = _module(zarr_format)
    return _group_spec(module, group, group.attrs.asdict(), depth)


def _group_spec(module: Any, group: Any, attributes: dict[str, Any], depth: int) -> Any:
    members: dict[str, Any] = {}
    if depth != 0:
        for name, found in group.member_nodes():
            found_attributes = found.attributes
            if found_attributes is None:  # format 2 listed without its .zattrs parsed
                found_attributes = group[name].attrs.asdict()
            if found.kind == "array":
                members[name] = spec_of(module.ArraySpec, found.metadata, found_attributes,
                                        found.document)
            else:
                members[name] = _group_spec(module, group[name], found_attributes, depth - 1)
    return module.GroupSpec.model_validate({"attributes": attributes, "members": members},
                                           context={"trusted": True})


def write_spec(spec: Any, target: Any, path: str, *, overwrite: bool) -> Any:
    """``spec.to_store``: check every node first, then write the ones that differ."""
    from zarrkit.api import open_array, open_group
    from zarrkit.hierarchy.nodes import create_array_node, create_group_node, find_node
    from zarrkit.storage.resolve import make_store

    store = make_store(target, mode="a")
    root = normalize_path(path)
    plan: list[tuple[str, Any, Any]] = []
    for relative, node in spec.to_flat().items():
        node_path = join_path(root, relative.strip("/"))
        found = find_node(store, node_path)
        if found is not None and _same_node(found, node, store):
            continue
        if found is not None and not overwrite:
            error = ContainsArrayError if found.kind == "array" else ContainsGroupError
            raise error(f"a different {found.kind} exists at {node_path or '/'!r}; "
                        "pass overwrite=True to replace it")
        plan.append((node_path, node, found))
    for node_path, node, found in plan:
        is_group = getattr(node, "members", None) is not None
        attributes = node.normalized()["attributes"]
        if is_group and found is not None and found.kind == "group" and \
                found.zarr_format == node.zarr_format:
            # Only the group's own document changes: its members (and their chunks) stay.
            open_group(store, mode="r+", path=node_path).attrs.put(attributes)
        elif is_group:
            create_group_node(store, node_path, attributes, zarr_format=node.zarr_format,
                              overwrite=found is not None)
        else:
            create_array_node(store, node_path, node.to_metadata(), attributes,
                              overwrite=found is not None)
    if getattr(spec, "members", None) is None:
        return open_array(store, mode="r+", path=root)
    return open_group(store, mode="r+", path=root)


def _same_node(found: Any, node: Any, store: Any) -> bool:
    if found.zarr_format != node.zarr_format:
        return False
    is_group = getattr(node, "members", None) is not None
    if is_group != (found.kind == "group"):
        return False
    attributes = found.attributes
    if attributes is None:
        from zarrkit.metadata.jsonio import load_json_object
        from zarrkit.metadata.v2 import parse_attributes

        key = join_path(found.path, ".zattrs")
        raw = store.get(key)
        attributes = {} if raw is None else parse_attributes(load_json_object(raw, key=key))
    module = _module(node.zarr_format)
    if is_group:
        existing = module.GroupSpec.model_validate({"attributes": attributes},
                                                   context={"trusted": True})
    else:
        existing = spec_of(module.ArraySpec, found.metadata, attributes)
    return bool(existing.normalized() == node.normalized())
