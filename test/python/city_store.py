# A store for the zoom-7 high-DPI check in the browser, written by xarray + zarr-python 2: one
# regional group, forecast/city, a 0.1° patch over 44..52° N, 4° W..8° E whose t2m swings between
# +2 and +18 °C every 1.5° of longitude, so a zoom-7 tile crosses many 1 °C class edges.
# usage: city_store.py ROOT
import sys

import numpy as np
import pandas as pd
import xarray as xr

root = sys.argv[1]
time = pd.date_range("2026-11-20", periods=1, freq="12h")
lead = pd.to_timedelta(np.arange(2), unit="h")
lat = np.linspace(52, 44, 81)
lon = np.linspace(-4, 8, 121)
swing = 8 * np.sin(lon[None, :] * np.pi / 1.5) * np.cos((lat[:, None] - 48) * np.pi / 8)
t2m = np.broadcast_to((283.15 + swing)[None, None], (1, 2, lat.size, lon.size)).astype("float32")
ds = xr.Dataset(
    {"t2m": (("time", "lead_time", "lat", "lon"), t2m, {"units": "K", "long_name": "2 metre temperature"})},
    coords={
        "time": time,
        "lead_time": lead,
        "lat": ("lat", lat, {"units": "degrees_north"}),
        "lon": ("lon", lon, {"units": "degrees_east"}),
    },
)
ds.to_zarr(root, group="forecast/city", mode="w", consolidated=True)
