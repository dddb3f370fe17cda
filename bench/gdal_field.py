# Writes the field bench/gdal.ts tiles with GDAL: t2m of the first run and lead of the xarray
# bench store, longitudes rolled to -180..180, as an ESRI BIL raster (float32) GDAL reads as is.
# usage: gdal_field.py STORE OUT_BASENAME
import sys

import numpy as np
import xarray as xr

store, out = sys.argv[1], sys.argv[2]
t = xr.open_zarr(store, group="forecast/global")["t2m"].isel(time=0, lead_time=0)
lat, lon = t["lat"].values, t["lon"].values
v = t.values.astype("<f4")
shift = int(np.searchsorted(lon, 180.0))
v = np.concatenate([v[:, shift:], v[:, :shift]], axis=1)
step = float(lat[0] - lat[1])
v.tofile(out + ".bil")
with open(out + ".hdr", "w") as h:
    h.write(
        f"BYTEORDER I\nLAYOUT BIL\nNROWS {v.shape[0]}\nNCOLS {v.shape[1]}\nNBANDS 1\nNBITS 32\nPIXELTYPE FLOAT\n"
        f"ULXMAP {-180.0:.6f}\nULYMAP {lat[0]:.6f}\nXDIM {step}\nYDIM {step}\n"
    )
