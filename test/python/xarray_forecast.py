# Writes a forecast group the way users' pipelines do: xarray + zarr-python 2 with their default
# compressor (Blosc lz4, byte shuffle), CF time/lead coordinates, consolidated metadata.
# usage: xarray_forecast.py ROOT STEP_DEG RUNS LEADS CHUNK_LATLON [CHUNK_LEADS (default: all)]
#        [BLOSC_BLOCKSIZE (bytes; default: Blosc's own choice)]
import sys

import numpy as np
import pandas as pd
import xarray as xr

root, step, runs, leads, chunk = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
lat = np.linspace(90, -90, int(round(180 / step)) + 1)
lon = np.arange(0, 360, step)
time = pd.date_range("2026-11-20", periods=runs, freq="12h")
lead = pd.to_timedelta(np.arange(leads) * 6, unit="h")
la = np.deg2rad(lat)[None, None, :, None]
lo = np.deg2rad(lon)[None, None, None, :]
k = np.arange(leads)[None, :, None, None]
r = np.arange(runs)[:, None, None, None]
# A smooth temperature-like field (kelvin) with fine structure, rounded like a real product.
t2m = 288 - 40 * np.sin(la) ** 2 + 6 * np.cos(3 * lo + 0.2 * k + r) * np.cos(la) + 0.5 * np.sin(17 * lo) * np.cos(11 * la)
t2m = np.round(t2m.astype("float32"), 2)
ds = xr.Dataset(
    {"t2m": (("time", "lead_time", "lat", "lon"), t2m, {"units": "K", "long_name": "2 metre temperature"})},
    coords={"time": time, "lead_time": lead, "lat": ("lat", lat, {"units": "degrees_north"}), "lon": ("lon", lon, {"units": "degrees_east"})},
)
lead_chunk = int(sys.argv[6]) if len(sys.argv) > 6 else leads
enc = {"t2m": {"chunks": (1, lead_chunk, chunk, chunk)}}
if len(sys.argv) > 7:
    # zarr's default compressor with blocks of a given size (several to a chunk).
    from numcodecs import Blosc

    enc["t2m"]["compressor"] = Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE, blocksize=int(sys.argv[7]))
ds.to_zarr(root, group="forecast/global", mode="w", encoding=enc, consolidated=True)
