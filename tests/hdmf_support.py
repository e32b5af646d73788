"""An NWB file as pynwb + hdmf-zarr 0.14 write it (Zarr v3), for the peer checks with
hdmf-zarr (tests/test_hdmf_v3_peer.py, tests/test_hdmf_peer.py): a device, two electrode
groups linked to it, an electrodes table whose ``group`` column holds object references,
an ElectricalSeries whose ``electrodes`` region references that table, a TimeSeries
linked from two DecompositionSeries (and its data from a third TimeSeries), and epochs
whose ``timeseries`` column holds compound rows with references (its index's ``target``
is a reference attribute)."""

from __future__ import annotations

import datetime
import warnings
from pathlib import Path

import numpy as np
from hdmf_zarr import NWBZarrIO
from pynwb import NWBFile, TimeSeries
from pynwb.ecephys import ElectricalSeries
from pynwb.misc import DecompositionSeries

START = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)


def build_nwb() -> NWBFile:
    nwb = NWBFile(session_description="zarrkit peer check", identifier="peer-1",
                  session_start_time=START)
    device = nwb.create_device(name="dev")
    groups = [nwb.create_electrode_group(name=f"eg{i}", description="d", location=f"l{i}",
                                         device=device) for i in range(2)]
    for i in range(3):
        nwb.add_electrode(group=groups[i % 2], location=f"loc{i}")
    region = nwb.create_electrode_table_region([0, 2], "electrodes 0 and 2")
    es = ElectricalSeries(name="es", data=np.arange(10.0).reshape(5, 2), electrodes=region,
                          rate=10.0)
    nwb.add_acquisition(es)
    ts = TimeSeries(name="ts", data=np.arange(4.0), unit="m", rate=1.0)
    nwb.add_acquisition(ts)
    module = nwb.create_processing_module("mod", "processed")
    for i in range(2):  # the TimeSeries ts, linked from two places
        decomposition = DecompositionSeries(
            name=f"dec{i}", data=np.zeros((4, 1, 1)), metric="amplitude", description="d",
            source_timeseries=ts, rate=1.0)
        decomposition.add_band(band_name="b", band_limits=(1.0, 2.0), band_mean=1.5,
                               band_stdev=0.1)
        module.add(decomposition)
    module.add(TimeSeries(name="ts2", data=ts, unit="m", timestamps=np.arange(4.0)))
    nwb.add_epoch(start_time=0.0, stop_time=1.0, timeseries=[ts, es])
    nwb.add_epoch(start_time=1.0, stop_time=2.0, timeseries=[module["ts2"]])
    return nwb


def write_nwb(path: Path) -> None:
    """Write :func:`build_nwb`'s file at ``path`` with hdmf-zarr's NWBZarrIO (whose
    warnings about consolidated metadata and inferred dtypes are its own)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with NWBZarrIO(str(path), mode="w") as io:
            io.write(build_nwb())
