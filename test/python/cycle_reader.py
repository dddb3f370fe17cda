"""Reads one /data dataset with xarray again and again, as an analyst's notebook would while a
forecast cycle is published under it, and prints one JSON line per read: the run times it decoded
and, per run, the sum and NaN count of t2m over a box at every lead. A read that fails prints
{"error": ...} instead; the test decides what is right.

usage: cycle_reader.py <dataset-url> <api-key> <stop-file> <max-seconds>
Stops when the stop file exists or after max-seconds.
"""
import json
import os
import sys
import time

import numpy as np
import xarray as xr

URL, KEY, STOP, MAX_S = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
end = time.monotonic() + MAX_S
print(json.dumps({"ready": True}), flush=True)
while not os.path.exists(STOP) and time.monotonic() < end:
    try:
        ds = xr.open_zarr(URL, storage_options={"headers": {"X-API-Key": KEY}})
        box = ds["t2m"].isel(lat=slice(40, 56), lon=slice(0, 24)).values
        runs = [str(t)[:19] for t in ds["time"].values]
        if box.shape[0] != len(runs):
            raise AssertionError(f"t2m has {box.shape[0]} runs, time has {len(runs)}")
        sums = [float(np.nansum(box[i])) for i in range(box.shape[0])]
        nans = [int(np.isnan(box[i]).sum()) for i in range(box.shape[0])]
        print(json.dumps({"runs": runs, "sums": sums, "nans": nans}), flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported to the test as a line
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}), flush=True)
