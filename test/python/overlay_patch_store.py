# A regional group for the zoom-7 @2x overlay check, written by xarray + zarr-python 2: forecast/patch,
# 0.1° over 44..52° N, 4° W..8° E (a few dozen zoom-7 tiles), with mean sea level pressure falling
# 15 hPa a degree towards a low at 48° N 2° E (4 hPa isobars about 25 px apart at zoom 7, so a
# zoom-7 tile holds several lines and their labels) and 10 m wind turning round it.
# usage: overlay_patch_store.py ROOT
import sys

import numpy as np
import pandas as pd
import xarray as xr

root = sys.argv[1]
time = pd.date_range("2026-11-20", periods=1, freq="12h")
lead = pd.to_timedelta(np.arange(1), unit="h")
lat = np.linspace(52, 44, 81)
lon = np.linspace(-4, 8, 121)
la, lo = np.meshgrid(lat, lon, indexing="ij")
dy = la - 48
dx = (lo - 2) * np.cos(np.deg2rad(48))
r = np.hypot(dx, dy)
msl = 96000 + 1500 * r
speed = np.minimum(30, 8 * r)
u10 = -speed * dy / np.maximum(r, 1e-6)
v10 = speed * dx / np.maximum(r, 1e-6)


def field(a):
    return np.broadcast_to(a[None, None], (1, 1, lat.size, lon.size)).astype("float32")


dims = ("time", "lead_time", "lat", "lon")
ds = xr.Dataset(
    {
        "msl": (dims, field(msl), {"units": "Pa", "long_name": "Mean sea level pressure"}),
        "u10": (dims, field(u10), {"units": "m s-1", "long_name": "10 metre U wind component"}),
        "v10": (dims, field(v10), {"units": "m s-1", "long_name": "10 metre V wind component"}),
    },
    coords={
        "time": time,
        "lead_time": lead,
        "lat": ("lat", lat, {"units": "degrees_north"}),
        "lon": ("lon", lon, {"units": "degrees_east"}),
    },
)
ds.to_zarr(root, group="forecast/patch", mode="w", consolidated=True)
