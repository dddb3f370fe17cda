# Writes a forecast group for the overlay test with xarray + zarr-python 2: analytic mean sea level
# pressure and 10 m wind on a 0.5° global grid (1 run, 1 lead).
# - msl: a cone around a low at (LOW_LAT, LOW_LON) in web-mercator world pixels of zoom 5:
#   100000 Pa + 10 Pa per pixel out to 420 px, so the 4 hPa isobars are circles 40 px apart on z 5
#   tiles (flat beyond).
# - u10: eastward wind growing with longitude, 1 m/s at 180° W to 25 m/s at 180° E; v10 = 0.
# usage: overlay_store.py ROOT LOW_LAT LOW_LON
import sys

import numpy as np
import pandas as pd
import xarray as xr

root, low_lat, low_lon = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
lat = np.linspace(90, -90, 361)
lon = np.arange(-180, 180, 0.5)
world = 256 * 2**5


def px(la, lo):
    phi = np.deg2rad(np.clip(la, -85.2, 85.2))
    y = (1 - np.log(np.tan(np.pi / 4 + phi / 2)) / np.pi) / 2 * world
    return (lo + 180) / 360 * world, y


la, lo = np.meshgrid(lat, lon, indexing="ij")
x, y = px(la, lo)
cx, cy = px(low_lat, low_lon)
msl = 100000 + 10 * np.minimum(np.hypot(x - cx, y - cy), 420)
u10 = 1 + 24 * (lo + 180) / 359.5
v10 = np.zeros_like(u10)
time = pd.date_range("2026-11-20", periods=1, freq="12h")
lead = pd.to_timedelta([0], unit="h")
dims = ("time", "lead_time", "lat", "lon")
ds = xr.Dataset(
    {
        "msl": (dims, msl[None, None].astype("float32"), {"units": "Pa", "long_name": "Mean sea level pressure"}),
        "u10": (dims, u10[None, None].astype("float32"), {"units": "m s-1", "long_name": "10 metre U wind component"}),
        "v10": (dims, v10[None, None].astype("float32"), {"units": "m s-1", "long_name": "10 metre V wind component"}),
    },
    coords={
        "time": time,
        "lead_time": lead,
        "lat": ("lat", lat, {"units": "degrees_north"}),
        "lon": ("lon", lon, {"units": "degrees_east"}),
    },
)
enc = {v: {"chunks": (1, 1, 128, 128)} for v in ds.data_vars}
ds.to_zarr(root, group="forecast/global", mode="w", encoding=enc, consolidated=True)
