# A store for the ramp, high-DPI and patch checks in the browser, written by xarray + zarr-python 2:
#   forecast/global: 1° grid; t2m +5 °C west of 10° E and +10 °C east of it (outside 9..11° E the
#     field is flat); tp_1h 0.2 mm over 40..60° N, 20° W..20° E and 0 elsewhere; tcc overcast
#     (1) over 35..65° N, 10..60° E, 20 % over Spain (36..43° N, 9° W..0°) and clear (0) elsewhere.
#   forecast/alps: a regional 0.25° patch over 44..50° N, 5..15° E with t2m +20 °C.
# usage: ramps_store.py ROOT
import sys

import numpy as np
import pandas as pd
import xarray as xr

root = sys.argv[1]
time = pd.date_range("2026-11-20", periods=1, freq="12h")
lead = pd.to_timedelta(np.arange(3), unit="h")


def coords(lat, lon):
    return {
        "time": time,
        "lead_time": lead,
        "lat": ("lat", lat, {"units": "degrees_north"}),
        "lon": ("lon", lon, {"units": "degrees_east"}),
    }


dims = ("time", "lead_time", "lat", "lon")
lat = np.linspace(90, -90, 181)
lon = np.arange(0, 360, 1.0)
east = (lon >= 10) & (lon < 180)
t2m = np.where(east[None, None, None, :], 283.15, 278.15) + 0 * lat[None, None, :, None]
t2m = np.broadcast_to(t2m, (1, 3, lat.size, lon.size)).astype("float32")
wet = ((lat >= 40) & (lat <= 60))[:, None] & ((lon <= 20) | (lon >= 340))[None, :]
tp = np.broadcast_to(np.where(wet, 0.0002, 0.0)[None, None], (1, 3, lat.size, lon.size)).astype("float32")
cloudy = ((lat >= 35) & (lat <= 65))[:, None] & ((lon >= 10) & (lon <= 60))[None, :]
thin = ((lat >= 36) & (lat <= 43))[:, None] & ((lon >= 351) & (lon <= 359))[None, :]
tcc = np.where(cloudy, 1.0, np.where(thin, 0.2, 0.0))
tcc = np.broadcast_to(tcc[None, None], (1, 3, lat.size, lon.size)).astype("float32")
g = xr.Dataset(
    {
        "tcc": (dims, tcc, {"units": "1", "long_name": "Total cloud cover"}),
        "t2m": (dims, t2m, {"units": "K", "long_name": "2 metre temperature"}),
        "tp_1h": (dims, tp, {"units": "m", "long_name": "Total precipitation over the previous hour"}),
    },
    coords=coords(lat, lon),
)
g.to_zarr(root, group="forecast/global", mode="w", encoding={v: {"chunks": (1, 3, 91, 180)} for v in g}, consolidated=True)

alat = np.linspace(50, 44, 25)
alon = np.linspace(5, 15, 41)
a = xr.Dataset(
    {"t2m": (dims, np.full((1, 3, alat.size, alon.size), 293.15, "float32"), {"units": "K", "long_name": "2 metre temperature"})},
    coords=coords(alat, alon),
)
a.to_zarr(root, group="forecast/alps", mode="a", consolidated=True)
