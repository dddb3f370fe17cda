# Writes a forecast group whose metadata is outsized, the way a careless pipeline might: xarray +
# zarr-python 2, an unevenly spaced latitude axis of 1001 rows (so an export lists every one of
# them), t2m with a 2 MB long_name, and d2m with a 2 MB units attribute.
# usage: huge_attrs.py ROOT
import sys

import numpy as np
import pandas as pd
import xarray as xr

root = sys.argv[1]
lat = 90 * np.sin(np.linspace(-np.pi / 2, np.pi / 2, 1001))
lon = np.arange(0, 360, 10.0)
time = pd.date_range("2026-11-20", periods=1, freq="12h")
lead = pd.to_timedelta(np.arange(3) * 6, unit="h")
la = np.deg2rad(lat)[None, None, :, None]
lo = np.deg2rad(lon)[None, None, None, :]
k = np.arange(3)[None, :, None, None]
t2m = np.round((288 - 40 * np.sin(la) ** 2 + 6 * np.cos(3 * lo + 0.2 * k) * np.cos(la)).astype("float32"), 2)
huge = "x" * 2_000_000
ds = xr.Dataset(
    {
        "t2m": (("time", "lead_time", "lat", "lon"), t2m, {"units": "K", "long_name": huge}),
        "d2m": (("time", "lead_time", "lat", "lon"), t2m - 5, {"units": "K " + huge, "long_name": "2 metre dewpoint"}),
    },
    coords={
        "time": time,
        "lead_time": lead,
        "lat": ("lat", lat, {"units": "degrees_north"}),
        "lon": ("lon", lon, {"units": "degrees_east"}),
    },
)
ds.to_zarr(root, group="forecast/global", mode="w", consolidated=True)
