# Stores for bench/point-copy.ts, written by xarray + zarr 2 (Debian) the way most producers'
# stores are laid out (ECMWF open data, WeatherBench2, ARCO-ERA5, GraphCast, AIFS): one whole-field
# chunk per lead, float32, the writer's default compressor (Blosc lz4 + byte shuffle), and the
# same series read back by xarray as an analyst would.
#   python3 point_copy_stores.py write DIR LEADS    DIR/det.zarr: 0.25° global 1440×721, LEADS hourly
#                                                   leads; DIR/ens.zarr: 1° global 360×181, 20 members
#   python3 point_copy_stores.py peer STORE         reads "lat lon" lines from stdin; answers each with
#                                                   one JSON line {seconds} (one series read, decoded)
# Values: a smooth field that moves with the lead plus noise, quantised to 1/64 K as GRIB's 16-bit
# packing leaves them (what a decoded GRIB field compresses like).
import json
import sys
import time

import numpy as np
import pandas as pd
import xarray as xr

RUN = pd.Timestamp("2026-12-01T00:00")


def field(nlat, nlon, leads, members, seed):
    rng = np.random.default_rng(seed)
    lat = np.linspace(90, -90, nlat)
    lon = np.arange(nlon) * (360.0 / nlon)
    la, lo = np.meshgrid(np.radians(lat), np.radians(lon), indexing="ij")
    base = 250 + 45 * np.cos(la) ** 2
    shape = (1, leads, members, nlat, nlon) if members else (1, leads, nlat, nlon)
    out = np.empty(shape, np.float32)
    for t in range(leads):
        phase = t * 2 * np.pi / 24
        for m in range(max(members, 1)):
            wave = 6 * np.sin(3 * lo + phase + 0.1 * m) * np.cos(2 * la) + 3 * np.cos(5 * lo - 0.3 * t / 24)
            f = base + wave + rng.normal(0, 0.4, (nlat, nlon))
            f = np.round(f * 64) / 64
            if members:
                out[0, t, m] = f
            else:
                out[0, t] = f
    return lat, lon, out


def write(path, nlat, nlon, leads, members, seed):
    lat, lon, values = field(nlat, nlon, leads, members, seed)
    dims = ["time", "step", "number", "latitude", "longitude"] if members else ["time", "step", "latitude", "longitude"]
    coords = {
        "time": [RUN.to_datetime64()],
        "step": pd.to_timedelta(np.arange(leads), unit="h"),
        "latitude": ("latitude", lat, {"units": "degrees_north", "standard_name": "latitude"}),
        "longitude": ("longitude", lon, {"units": "degrees_east", "standard_name": "longitude"}),
    }
    if members:
        coords["number"] = np.arange(members)
    t2m = xr.DataArray(values, dims=dims, coords=coords, name="t2m",
                       attrs={"units": "K", "long_name": "2 metre temperature", "standard_name": "air_temperature"})
    chunks = (1, 1, members, nlat, nlon) if members else (1, 1, nlat, nlon)
    ds = t2m.to_dataset()
    ds.to_zarr(path, mode="w", group="forecast/global", consolidated=True,
               encoding={"t2m": {"chunks": chunks}})


def peer(store):
    ds = xr.open_zarr(store, group="forecast/global", consolidated=True)
    t2m = ds["t2m"].isel(time=0)
    if "number" in t2m.dims:
        t2m = t2m.isel(number=0)
    lat, lon = ds["latitude"].values, ds["longitude"].values
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        a, b = (float(x) for x in line.split())
        t0 = time.perf_counter()
        iy = int(abs(lat - a).argmin())
        ix = int(abs(lon - (b % 360)).argmin())
        series = t2m.isel(latitude=iy, longitude=ix).values
        print(json.dumps({"seconds": time.perf_counter() - t0, "n": int(series.size)}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        out, leads = sys.argv[2], int(sys.argv[3])
        write(f"{out}/det.zarr", 721, 1440, leads, 0, 1)
        write(f"{out}/ens.zarr", 181, 360, leads, 20, 2)
    elif sys.argv[1] == "peer":
        peer(sys.argv[2])
    else:
        sys.exit(__doc__)
