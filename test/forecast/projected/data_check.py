# Opens gridcast's /data view of a projected-grid group with xarray over HTTP, and the source
# store directly, and says whether the republished dataset carries the same CRS (CF grid mapping,
# read back by pyproj where it is installed), the same 2-D latitude/longitude, the same y/x axes
# and the same values. Prints a JSON report; the test asserts on it.
import json
import sys

import numpy as np
import xarray as xr

url, key, source, var, stored_var = sys.argv[1:6]
ds = xr.open_zarr(url, consolidated=True, storage_options={"headers": {"X-API-Key": key}})
src = xr.open_zarr(source, consolidated=False)
v = ds[var]
# /data publishes every grid north-up (first row northernmost) whatever the stored order; compare in
# the stored order and report the published one.
src_y = src[src[stored_var].dims[-2]].values
report_north_up = bool(ds["y"].values[0] > ds["y"].values[-1])
if (ds["y"].values[0] - ds["y"].values[-1]) * (src_y[0] - src_y[-1]) < 0:
    ds = ds.load().isel(y=slice(None, None, -1))
    v = ds[var]
gm = v.attrs.get("grid_mapping") or v.encoding.get("grid_mapping")
report = {
    "dims": list(v.dims),
    "grid_mapping": gm,
    "mapping_attrs": {k: (val if isinstance(val, (str, int, float)) else str(val)) for k, val in ds[gm].attrs.items()},
    "lat_equal": bool(np.allclose(ds["latitude"].values, src[[n for n in src.coords if src[n].ndim == 2 and "lat" in n][0]].values)),
    "lat_dims": list(ds["latitude"].dims),
    "x_equal": bool(np.allclose(ds["x"].values, src[[d for d in src[stored_var].dims][-1]].values)),
    "y_equal": bool(np.allclose(ds["y"].values, src[[d for d in src[stored_var].dims][-2]].values)),
}
sv = src[stored_var].values.reshape(-1, *src[stored_var].shape[-2:])
gv = v.values.reshape(-1, *v.shape[-2:])
# /data republishes the stored values in their stored units.
report["north_up"] = report_north_up
report["values_equal"] = bool(np.allclose(gv, sv, atol=1e-6, equal_nan=True))
try:
    from pyproj import CRS

    src_gm = src[stored_var].attrs.get("grid_mapping") or src[stored_var].encoding.get("grid_mapping")
    report["crs_equal"] = CRS.from_cf(ds[gm].attrs) == CRS.from_cf(src[src_gm].attrs)
except ImportError:
    report["crs_equal"] = None
print(json.dumps(report))
