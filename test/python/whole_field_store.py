# Writes a forecast group laid out as most producers' stores are: one whole-field chunk per lead
# (chunks (1, 1, lat, lon)), written by xarray with the compressor named, as the zarr client running
# this writes it (zarr-python 2 with Debian's python3; zarr-python 3 from the venv with FORMAT 3).
# usage: whole_field_store.py ROOT STEP_DEG LEADS CODEC FORMAT [BLOSC_BLOCKSIZE]
#   CODEC: default (the client's default compressor), lz4-shuffle, zstd-shuffle, lz4-bitshuffle,
#          zstd-bitshuffle, lz4-noshuffle, none (stored uncompressed)
import sys

import numpy as np
import pandas as pd
import xarray as xr

root, step, leads, codec, fmt = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
blocksize = int(sys.argv[6]) if len(sys.argv) > 6 else 0
lat = np.linspace(90, -90, int(round(180 / step)) + 1)
lon = np.arange(0, 360, step)
time = pd.date_range("2026-11-20", periods=1, freq="12h")
lead = pd.to_timedelta(np.arange(leads) * 3, unit="h")
la = np.deg2rad(lat)[None, None, :, None]
lo = np.deg2rad(lon)[None, None, None, :]
k = np.arange(leads)[None, :, None, None]
t2m = 288 - 40 * np.sin(la) ** 2 + 6 * np.cos(3 * lo + 0.2 * k) * np.cos(la) + 0.5 * np.sin(17 * lo) * np.cos(11 * la)
t2m = np.round(t2m.astype("float32"), 2)
ds = xr.Dataset(
    {"t2m": (("time", "lead_time", "lat", "lon"), t2m, {"units": "K", "long_name": "2 metre temperature"})},
    coords={
        "time": time,
        "lead_time": lead,
        "lat": ("lat", lat, {"units": "degrees_north"}),
        "lon": ("lon", lon, {"units": "degrees_east"}),
    },
)
enc = {"chunks": (1, 1, lat.size, lon.size)}
if codec != "default":
    if fmt == 3:
        import zarr.codecs as zc

        if codec == "none":
            enc["compressors"] = None
        else:
            cname, shuffle = codec.split("-")
            enc["compressors"] = [
                zc.BloscCodec(cname=cname, clevel=5, shuffle=shuffle, typesize=4, blocksize=blocksize)
            ]
    else:
        from numcodecs import Blosc

        if codec == "none":
            enc["compressor"] = None
        else:
            cname, shuffle = codec.split("-")
            mode = {"shuffle": Blosc.SHUFFLE, "bitshuffle": Blosc.BITSHUFFLE, "noshuffle": Blosc.NOSHUFFLE}[shuffle]
            enc["compressor"] = Blosc(cname=cname, clevel=5, shuffle=mode, blocksize=blocksize)
opts = {"zarr_format": 3} if fmt == 3 else {}
ds.to_zarr(root, group="forecast/global", mode="w", encoding={"t2m": enc}, consolidated=True, **opts)
