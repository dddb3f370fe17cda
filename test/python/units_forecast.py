# A forecast group with one variable per display conversion, written by xarray + zarr-python 2:
# t2m (K), msl (Pa), tp (m), tcc (fraction), u10 (m/s). Then the stored values of every
# variable as xarray reads them back, one float32 file each (C order, time × lead × lat × lon).
# usage: units_forecast.py ROOT OUTDIR
import sys

import numpy as np
import pandas as pd
import xarray as xr

root, outdir = sys.argv[1], sys.argv[2]
lat = np.linspace(90, -90, 37)
lon = np.arange(0, 360, 5.0)
time = pd.date_range("2026-11-20", periods=1, freq="12h")
lead = pd.to_timedelta(np.arange(4) * 6, unit="h")
la = np.deg2rad(lat)[None, None, :, None]
lo = np.deg2rad(lon)[None, None, None, :]
k = np.arange(4)[None, :, None, None]
shape = (1, 4, lat.size, lon.size)
fields = {
    "t2m": (288 - 40 * np.sin(la) ** 2 + 6 * np.cos(3 * lo + 0.2 * k), "K", "2 metre temperature"),
    "msl": (101325 + 1500 * np.cos(2 * lo + 0.3 * k) * np.cos(la), "Pa", "mean sea level pressure"),
    "tp": (np.maximum(0, 0.004 * np.sin(3 * lo + k) * np.cos(2 * la)), "m", "total precipitation"),
    "tcc": ((1 + np.sin(2 * lo - 0.5 * k) * np.cos(la)) / 2, "1", "total cloud cover"),
    "u10": (12 * np.sin(lo + 0.4 * k) * np.cos(la), "m s-1", "10 metre U wind component"),
}
dims = ("time", "lead_time", "lat", "lon")
ds = xr.Dataset(
    {n: (dims, np.broadcast_to(v, shape).astype("float32"), {"units": u, "long_name": ln}) for n, (v, u, ln) in fields.items()},
    coords={"time": time, "lead_time": lead, "lat": ("lat", lat, {"units": "degrees_north"}), "lon": ("lon", lon, {"units": "degrees_east"})},
)
ds.to_zarr(root, group="forecast/global", mode="w", encoding={n: {"chunks": (1, 4, 19, 36)} for n in fields}, consolidated=True)
back = xr.open_zarr(root, group="forecast/global")
for n in fields:
    back[n].values.astype("<f4").tofile(f"{outdir}/{n}.f32")
