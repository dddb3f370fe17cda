# Opens gridcast's /data view of a grid stored with 2-D latitude/longitude only, with xarray over
# HTTP, beside the source store, and reports: the variable's dims and grid mapping, whether the
# published latitude/longitude and values are the stored ones (in the stored row order), and for
# a recovered projection whether pyproj, reading the published CF grid mapping, puts the stored
# nodes at the published x/y (within a metre). Prints JSON; the test asserts on it.
import json
import sys

import numpy as np
import xarray as xr

url, key, source, var, stored_var, lat_name = sys.argv[1:7]
ds = xr.open_zarr(url, consolidated=True, storage_options={"headers": {"X-API-Key": key}}).load()
src = xr.open_zarr(source, consolidated=False)
src_lat = src[lat_name].values
src_lon = src[lat_name.replace("latitude", "longitude").replace("XLAT", "XLONG")].values
if src_lat.ndim == 3:
    src_lat, src_lon = src_lat[0], src_lon[0]
has_lat = "latitude" in ds.variables
if has_lat:
    if not np.allclose(ds["latitude"].values, src_lat) and np.allclose(ds["latitude"].values[::-1], src_lat):
        ds = ds.isel(y=slice(None, None, -1))
elif ds["y"].values[0] > ds["y"].values[-1]:
    # No 2-D latitude published (WRF's XLAT is per time): the source rows run south to north.
    ds = ds.isel(y=slice(None, None, -1))
v = ds[var]
gm = v.attrs.get("grid_mapping") or v.encoding.get("grid_mapping")
report = {
    "dims": list(v.dims),
    "grid_mapping": gm,
    "has_spatial_ref": "spatial_ref" in ds.variables,
    "lat_equal": bool(np.allclose(ds["latitude"].values, src_lat)) if has_lat else None,
    "lon_equal": bool(np.allclose((ds["longitude"].values - src_lon + 180) % 360 - 180, 0, atol=1e-6))
    if has_lat
    else None,
    "x_attrs": {k: str(a) for k, a in ds["x"].attrs.items()},
}
sv = src[stored_var].values.reshape(-1, *src[stored_var].shape[-2:])
gv = v.values.reshape(-1, *v.shape[-2:])
report["values_equal"] = bool(np.allclose(gv, sv[: len(gv)], atol=1e-6, equal_nan=True))
if gm:
    from pyproj import CRS, Transformer

    crs = CRS.from_cf(ds[gm].attrs)
    gx, gy = Transformer.from_crs(crs.geodetic_crs, crs, always_xy=True).transform(src_lon, src_lat)
    xx, yy = np.meshgrid(ds["x"].values, ds["y"].values)
    report["xy_worst_m"] = float(max(np.abs(gx - xx).max(), np.abs(gy - yy).max()))
print(json.dumps(report))
