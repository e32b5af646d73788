"""Step 1 of the peer check with hdmf-zarr (runs in the main venv, with zarrkit).

:func:`modify` changes a copy of an hdmf-zarr NWB file with zarrkit only, in ways that
the NWB schema gives a meaning to, so that hdmf-zarr must resolve each one to read the
file back (step 2, ``check_hdmf_reads.py`` in ``.venv-hdmf``):

* a **new link**: a new ElectrodeGroup ``/general/extracellular_ephys/eg2`` whose
  ``device`` is a link (``Group.create_link``) to the existing ``/general/devices/dev``;
* a **new reference attribute**: a new ragged column ``labels`` of the epochs table, whose
  VectorIndex ``labels_index`` has its ``target`` attribute set to a reference
  (``references.encode_attribute``) to the new ``labels`` VectorData;
* a **new reference dataset**: a new column ``group2`` of the electrodes table holding
  references (``references.create_reference_dataset``) to ``eg2`` and the existing ``eg``;
* **new cached specifications**: an extension namespace ``zarrkit-test`` (one new type,
  ``ZarrkitThing``) cached with ``hdmf.write_specifications``, which hdmf-zarr loads
  when it opens the file;

then consolidates the metadata (hdmf-zarr opens a file through its ``.zmetadata``).
It returns what step 2 must find: paths and object ids.

Usage: ``python modify_with_zarrkit.py STORE`` prints that JSON.
"""

from __future__ import annotations

import json
import sys
import uuid
from typing import Any

import numpy as np

import zarrkit as zk
from zarrkit.hdmf import write_specifications
from zarrkit.references import Reference, create_reference_dataset, encode_attribute

EPHYS = "general/extracellular_ephys"
EPOCHS = "intervals/epochs"
LABELS = ["sleep", "run"]
EXTENSION = "zarrkit-test"
EXTENSION_VERSION = "0.1.0"
EXTENSION_TYPE = "ZarrkitThing"
EXTENSION_SOURCES = {
    "namespace": {"namespaces": [{
        "name": EXTENSION, "version": EXTENSION_VERSION, "doc": "written by zarrkit",
        "author": ["zarrkit"], "contact": ["zarrkit@example.org"],
        "full_name": "zarrkit peer check",
        "schema": [{"namespace": "core", "neurodata_types": ["NWBDataInterface"]},
                   {"source": f"{EXTENSION}.extensions"}]}]},
    f"{EXTENSION}.extensions": {"groups": [{
        "neurodata_type_def": EXTENSION_TYPE, "neurodata_type_inc": "NWBDataInterface",
        "doc": "a type only the cached specifications define"}]},
}


def _group(root: zk.Group, path: str) -> zk.Group:
    node = root[path]
    assert isinstance(node, zk.Group), f"{path} is not a group"
    return node


def modify(store_path: str) -> dict[str, Any]:
    """Modify the NWB file at ``store_path`` in place (see the module docstring); return
    the expected paths and object ids."""
    root = zk.open_group(store_path, mode="r+")
    ephys = _group(root, EPHYS)
    device = _group(root, "general/devices/dev")
    eg = _group(root, f"{EPHYS}/eg")

    # 1. A new link: the device of a new electrode group.
    eg2 = ephys.create_group("eg2", attributes={
        "description": "second group, written by zarrkit", "location": "l2",
        "namespace": "core", "neurodata_type": "ElectrodeGroup",
        "object_id": str(uuid.uuid4())})
    eg2.create_link("device", device)

    # 2. A new reference attribute: the target of the index of a new ragged epochs column.
    epochs = _group(root, EPOCHS)
    labels = epochs.create_array(
        "labels", shape=(len(LABELS),), dtype=str, attributes={
            "_ARRAY_DIMENSIONS": ["dim0"], "description": "labels, written by zarrkit",
            "namespace": "hdmf-common", "neurodata_type": "VectorData",
            "object_id": str(uuid.uuid4()), "zarr_dtype": "str"})
    labels[...] = np.array(LABELS, dtype=object)
    index = epochs.create_array(
        "labels_index", shape=(1,), dtype="u1", attributes={
            "_ARRAY_DIMENSIONS": ["num_rows"], "description": "Index for VectorData 'labels'",
            "namespace": "hdmf-common", "neurodata_type": "VectorIndex",
            "object_id": str(uuid.uuid4()), "zarr_dtype": "uint8"})
    index[...] = np.array([len(LABELS)], dtype="u1")
    index.attrs["target"] = encode_attribute(Reference.of(labels))
    epochs.attrs["colnames"] = [*epochs.attrs["colnames"], "labels"]

    # 3. A new reference dataset: a column of the electrodes table referring to groups.
    electrodes = _group(root, f"{EPHYS}/electrodes")
    group2 = create_reference_dataset(
        electrodes, "group2", [Reference.of(eg2), Reference.of(eg)], attributes={
            "_ARRAY_DIMENSIONS": ["dim0"], "description": "groups, written by zarrkit",
            "namespace": "hdmf-common", "neurodata_type": "VectorData",
            "object_id": str(uuid.uuid4())})
    electrodes.attrs["colnames"] = [*electrodes.attrs["colnames"], "group2"]

    # 4. New cached specifications: an extension namespace.
    write_specifications(root, EXTENSION, EXTENSION_VERSION, EXTENSION_SOURCES)

    zk.consolidate_metadata(store_path)
    return {
        "link": {"group": eg2.name, "name": "device", "target": device.name,
                 "group_object_id": eg2.attrs["object_id"],
                 "target_object_id": device.attrs["object_id"]},
        "reference_attribute": {"node": index.name, "attribute": "target",
                                "target": labels.name,
                                "target_object_id": labels.attrs["object_id"],
                                "values": LABELS},
        "reference_dataset": {"node": group2.name,
                              "targets": [eg2.name, eg.name],
                              "target_object_ids": [eg2.attrs["object_id"],
                                                    eg.attrs["object_id"]]},
        "specifications": {"namespace": EXTENSION, "version": EXTENSION_VERSION,
                           "type": EXTENSION_TYPE},
    }


if __name__ == "__main__":
    print(json.dumps(modify(sys.argv[1]), indent=1))
