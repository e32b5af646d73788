"""Step 2 of the peer check with hdmf-zarr: runs in ``.venv-hdmf`` (hdmf-zarr, pynwb,
zarr-python 2), never in the main venv.

Usage: ``python check_hdmf_reads.py STORE EXPECTED_JSON``. Opens the NWB file that step 1
(``modify_with_zarrkit.py``) changed with ``hdmf_zarr.NWBZarrIO(STORE, mode="r")``, reads
it, and checks that hdmf-zarr resolves the new link, reference attribute and reference
dataset to the expected objects, both as builders (the storage convention itself) and as
pynwb containers (what a user of the file sees), and that it loaded the extension
namespace zarrkit cached in the file's specifications. Prints one JSON document (versions and
every check) and exits 0 when all checks pass, 1 when one fails, 2 when hdmf-zarr cannot
be imported.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from typing import Any


def _path(builder: Any) -> str:
    """A builder's path in the file, as zarrkit writes it (hdmf says "root/a/b")."""
    path = builder.path
    return "/" + path.split("/", 1)[1] if "/" in path else "/"


def run_checks(store: str, expected: dict[str, Any]) -> dict[str, Any]:
    import hdmf
    import hdmf_zarr
    import numcodecs
    import pynwb
    import zarr
    from hdmf.build import DatasetBuilder, GroupBuilder
    from hdmf.common.table import VectorIndex
    from hdmf_zarr import NWBZarrIO

    results: dict[str, Any] = {"versions": {
        "hdmf_zarr": hdmf_zarr.__version__, "hdmf": hdmf.__version__,
        "pynwb": pynwb.__version__, "zarr": zarr.__version__,
        "numcodecs": numcodecs.__version__}, "checks": {}}
    checks: dict[str, Any] = results["checks"]

    def check(name: str, test: Callable[[], Any]) -> None:
        try:
            outcome = test()
            checks[name] = {"ok": outcome is True, "got": None if outcome is True else
                            repr(outcome)}
        except Exception:  # every failure is reported, not raised
            checks[name] = {"ok": False, "got": traceback.format_exc(limit=4)}

    link, attribute, dataset, specs = (
        expected["link"], expected["reference_attribute"], expected["reference_dataset"],
        expected["specifications"])
    with NWBZarrIO(store, mode="r") as io:
        nwb = io.read()
        root = io.read_builder()

        def link_builder() -> Any:
            group = root[link["group"].lstrip("/")]
            target = group.links[link["name"]].builder
            ok = (isinstance(target, GroupBuilder) and _path(target) == link["target"]
                  and target.attributes["object_id"] == link["target_object_id"])
            return ok or (_path(target), target.attributes.get("object_id"))

        def link_container() -> Any:
            group = nwb.electrode_groups[link["group"].rsplit("/", 1)[1]]
            device = group.device
            ok = (group.object_id == link["group_object_id"]
                  and device is nwb.devices[link["target"].rsplit("/", 1)[1]]
                  and device.object_id == link["target_object_id"])
            return ok or (group.object_id, device.name, device.object_id)

        def attribute_builder() -> Any:
            node = root[attribute["node"].lstrip("/")]
            target = node.attributes[attribute["attribute"]]
            ok = (isinstance(target, DatasetBuilder) and _path(target) == attribute["target"]
                  and target.attributes["object_id"] == attribute["target_object_id"])
            return ok or repr(target)[:300]

        def attribute_container() -> Any:
            column = attribute["target"].rsplit("/", 1)[1]
            index = nwb.epochs[column]
            ok = (isinstance(index, VectorIndex)
                  and index.target.object_id == attribute["target_object_id"]
                  and list(index[0]) == attribute["values"])
            return ok or (type(index).__name__, getattr(index, "target", None))

        def dataset_builder() -> Any:
            data = root[dataset["node"].lstrip("/")].data
            targets = [data[i] for i in range(len(data))]
            got = [(_path(t), t.attributes.get("object_id")) for t in targets]
            want = list(zip(dataset["targets"], dataset["target_object_ids"], strict=True))
            return got == want or got

        def dataset_container() -> Any:
            column = nwb.electrodes[dataset["node"].rsplit("/", 1)[1]]
            groups = list(column.data[:])
            got = [(g.name, g.object_id) for g in groups]
            want = [(t.rsplit("/", 1)[1], oid) for t, oid in
                    zip(dataset["targets"], dataset["target_object_ids"], strict=True)]
            same = all(g is nwb.electrode_groups[name] for g, (name, _) in zip(
                groups, want, strict=True))
            return (got == want and same) or got

        def specifications() -> Any:
            type_map = io.manager.type_map
            namespace = type_map.namespace_catalog.get_namespace(specs["namespace"])
            cls = type_map.get_dt_container_cls(specs["type"], specs["namespace"])
            ok = (namespace.version == specs["version"] and cls.__name__ == specs["type"])
            return ok or (namespace.version, cls)

        check("link (builder)", link_builder)
        check("link (pynwb)", link_container)
        check("reference attribute (builder)", attribute_builder)
        check("reference attribute (pynwb)", attribute_container)
        check("reference dataset (builder)", dataset_builder)
        check("reference dataset (pynwb)", dataset_container)
        check("cached specifications (hdmf)", specifications)
    return results


def main(argv: list[str]) -> int:
    store, expected_path = argv[1], argv[2]
    try:
        import hdmf_zarr  # noqa: F401
    except Exception:
        print(json.dumps({"error": "cannot import hdmf_zarr",
                          "traceback": traceback.format_exc()}))
        return 2
    with open(expected_path, encoding="utf-8") as f:
        expected = json.load(f)
    results = run_checks(store, expected)
    print(json.dumps(results, indent=1))
    return 0 if all(c["ok"] for c in results["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
