"""What hdmf-zarr reads from an NWB file, as JSON: the same report from either hdmf-zarr,
so that two reads can be compared. Runs in the main venv (hdmf-zarr 0.14, zarr-python 3,
imported by tests/test_hdmf_peer.py) and in ``.venv-hdmf`` (hdmf-zarr 0.13, zarr-python
2, as a subprocess); it imports only pynwb, hdmf and hdmf-zarr, never zarrkit.

Usage: ``python read_nwb.py STORE``. Opens the file with ``hdmf_zarr.NWBZarrIO(STORE,
mode="r")`` and prints one JSON document: the versions, and :func:`report` of what it
read. Exits 2 when hdmf-zarr cannot be imported.

* ``builders``: the storage convention as hdmf-zarr resolves it. Per group, its links
  (name -> the target's path); per node, its reference attributes (name -> target path);
  per dataset of references, its targets' paths (compound rows with the references
  replaced by their targets' paths).
* ``objects``: what a pynwb user sees. Every container by object id: its type, name and
  every field (a dataset's values, a container by its object id, compound rows with
  their TimeSeries by object id), a Data object's data included.
"""

from __future__ import annotations

import datetime
import json
import sys
import traceback
from collections.abc import Iterator, Mapping
from typing import Any


def _path(builder: Any) -> str:
    """A builder's path in its file ("root/a/b" in hdmf, "/a/b" here)."""
    return "/" + builder.path.removeprefix("root").strip("/")


def _builders(root: Any) -> Iterator[tuple[str, Any]]:
    """Every group and dataset builder below ``root`` by path (links are not followed)."""
    def walk(builder: Any) -> Iterator[tuple[str, Any]]:
        for group in builder.groups.values():
            yield _path(group), group
            yield from walk(group)
        for dataset in builder.datasets.values():
            yield _path(dataset), dataset

    yield "/", root
    yield from walk(root)


def _is_builder(value: Any) -> bool:
    from hdmf.build import Builder

    return isinstance(value, Builder)


def _row(row: Any) -> list[Any]:
    return [_path(v) if _is_builder(v) else _plain(v) for v in row]


def builder_report(root: Any) -> dict[str, Any]:
    """The links, reference attributes and reference datasets of the builder ``root``
    (see the module docstring), keyed ``"<path>"``, ``"<path>#<attribute>"`` or
    ``"<path>/<link>"``."""
    from hdmf.build import DatasetBuilder, GroupBuilder

    links: dict[str, str] = {}
    attributes: dict[str, str] = {}
    datasets: dict[str, Any] = {}
    for path, builder in _builders(root):
        if isinstance(builder, GroupBuilder):
            for name, link in builder.links.items():
                links[f"{path.rstrip('/')}/{name}"] = _path(link.builder)
        for name, value in builder.attributes.items():
            if _is_builder(value):
                attributes[f"{path}#{name}"] = _path(value)
        if isinstance(builder, DatasetBuilder):
            dtype = builder.dtype
            compound = isinstance(dtype, list) and any(
                isinstance(f, Mapping) and f.get("dtype") == "object" for f in dtype)
            if compound:
                datasets[path] = [_row(row) for row in builder.data]
            elif dtype == "object":
                datasets[path] = [_path(b) for b in builder.data]
    return {"links": links, "reference_attributes": attributes,
            "reference_datasets": datasets}


def _plain(value: Any) -> Any:
    """A value hdmf-zarr read, as JSON (numbers, text, lists; a container as
    ``["container", object_id]``)."""
    import numpy as np
    from hdmf.container import AbstractContainer

    if isinstance(value, AbstractContainer):
        return ["container", value.object_id]
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):  # rows and TimeSeriesReference tuples included
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return _plain(value[()])
    if hasattr(value, "shape") or hasattr(value, "__getitem__"):  # zarr and hdmf datasets
        return [_plain(v) for v in value[:]]
    return repr(value)


def container_report(nwb: Any) -> dict[str, Any]:
    """Every object of the NWBFile ``nwb`` by object id (see the module docstring)."""
    from hdmf.container import Data

    objects: dict[str, Any] = {}
    for oid, obj in nwb.objects.items():
        fields = {name: _plain(value) for name, value in sorted(obj.fields.items())}
        if isinstance(obj, Data):
            fields["(data)"] = _plain(obj.data)
        objects[oid] = {"type": type(obj).__name__, "name": obj.name, "fields": fields}
    return objects


def versions() -> dict[str, str]:
    import hdmf
    import hdmf_zarr
    import pynwb
    import zarr

    return {"hdmf_zarr": hdmf_zarr.__version__, "hdmf": hdmf.__version__,
            "pynwb": pynwb.__version__, "zarr": zarr.__version__}


def report(store: str) -> dict[str, Any]:
    """The versions and what ``NWBZarrIO`` reads from ``store`` (the module docstring)."""
    from hdmf_zarr import NWBZarrIO

    with NWBZarrIO(store, mode="r") as io:
        builders = builder_report(io.read_builder())
    with NWBZarrIO(store, mode="r") as io:
        objects = container_report(io.read())
    return {"versions": versions(), "builders": builders, "objects": objects}


def main(argv: list[str]) -> int:
    try:
        import hdmf_zarr  # noqa: F401
    except Exception:
        print(json.dumps({"error": "cannot import hdmf_zarr",
                          "traceback": traceback.format_exc()}))
        return 2
    import warnings

    with warnings.catch_warnings():  # hdmf-zarr's own warnings are not the report
        warnings.simplefilter("ignore")
        print(json.dumps(report(argv[1]), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
