# Stores for bench/cells-point.ts, written with xarray as producers lay them out:
#   DIR/octa.zarr     an octahedral reduced Gaussian O500 as cfgrib writes it (1,018,000 points on a
#                     values axis, rows of 4i + 16 points on the 1000 Gaussian latitudes)
#   DIR/regular.zarr  a regular 0.25° grid, 721 × 1440 = 1,038,240 points
# Both hold t2m for one run and two leads, chunked to about the same number of values per chunk.
import sys

import numpy as np
import xarray as xr

out = sys.argv[1]
INIT = np.array(["2025-06-01T00:00"], dtype="datetime64[ns]")
STEPS = np.array([0, 6], dtype="timedelta64[h]").astype("timedelta64[ns]")


def field(lat, lon):
    f = 285 + 20 * np.cos(np.radians(lat)) * np.sin(np.radians(lon) * 2)
    return np.stack([f, f + 1])[None].astype("float32")


n = 500
x, _ = np.polynomial.legendre.leggauss(2 * n)
rows = np.degrees(np.arcsin(-x))
lat, lon = [], []
for r, phi in enumerate(rows):
    i = r + 1 if r < n else 2 * n - r
    m = 4 * i + 16
    lat.append(np.full(m, phi))
    lon.append(np.arange(m) * 360.0 / m)
lat, lon = np.concatenate(lat), np.concatenate(lon)
grib = {"GRIB_gridType": "reduced_gg", "GRIB_N": n, "GRIB_isOctahedral": 1}
xr.Dataset(
    {"t2m": (("time", "step", "values"), field(lat, lon), {"units": "K", **grib})},
    coords={"time": INIT, "step": STEPS,
            "latitude": ("values", lat, {"units": "degrees_north", "standard_name": "latitude"}),
            "longitude": ("values", lon, {"units": "degrees_east", "standard_name": "longitude"})},
).to_zarr(f"{out}/octa.zarr", mode="w", encoding={"t2m": {"chunks": (1, 2, 16384)}})

glat = np.linspace(90, -90, 721)
glon = np.arange(1440) * 0.25
la, lo = np.meshgrid(glat, glon, indexing="ij")
xr.Dataset(
    {"t2m": (("time", "step", "latitude", "longitude"), field(la, lo), {"units": "K"})},
    coords={"time": INIT, "step": STEPS,
            "latitude": ("latitude", glat, {"units": "degrees_north", "standard_name": "latitude"}),
            "longitude": ("longitude", glon, {"units": "degrees_east", "standard_name": "longitude"})},
).to_zarr(f"{out}/regular.zarr", mode="w", encoding={"t2m": {"chunks": (1, 2, 64, 128)}})
