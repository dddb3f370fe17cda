# What xarray + pyproj say about a WRF store, independently of gridcast. JSON request on stdin:
#   store, points ([lat, lon], ...): per point the node nearest by great circle over the stored
#   XLAT/XLONG (first time where they are per time) and, at it, every lead of T2, Q2 and PSFC, the
#   total precipitation RAINC + RAINNC in metres, U10/V10 as stored and turned to earth-relative
#   by the stored COSALPHA/SINALPHA (u cos a - v sin a, v cos a + u sin a: WRF's rule, by hand)
#   box ([lat_min, lat_max, lon_min, lon_max], optional): RAINC + RAINNC in metres over the rows
#   and columns of gridcast's export window (rows, cols given), every lead
#   proj (optional): with stored x/y (xwrf), the CRS the WRF globals give (as xwrf builds it), and
#   the largest distance in metres between where it puts each stored XLAT/XLONG and the stored x/y;
#   with positions ([lat, lon], ...) their fractional (column, row) on the stored x/y, and with lead
#   the whole RAINC + RAINNC (and RAINC alone) in metres at that lead
import json
import sys

import numpy as np
import xarray as xr

req = json.load(sys.stdin)
ds = xr.open_zarr(req["store"], consolidated=None)
first = lambda a: a.values[0] if a.ndim == 3 else a.values  # noqa: E731
lat2 = first(ds.XLAT).astype("float64")
lon2 = first(ds.XLONG).astype("float64")
ydim, xdim = ds.T2.dims[-2:]
out = {"points": []}


def nearest(lat, lon):
    p1, p2 = np.radians(lat), np.radians(lat2)
    dl = np.radians(lon2 - lon)
    a = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return np.unravel_index(np.argmin(a), a.shape)


def col(name, j, i):
    return ds[name].isel({ydim: j, xdim: i}).values.astype("float64").reshape(-1)


for lat, lon in req.get("points", []):
    j, i = nearest(lat, lon)
    u, v = col("U10", j, i), col("V10", j, i)
    c, s = col("COSALPHA", j, i), col("SINALPHA", j, i)
    rain = (col("RAINC", j, i) + col("RAINNC", j, i)) / 1000 if "RAINNC" in ds else None
    out["points"].append({
        "iy": int(j), "ix": int(i), "lat": float(lat2[j, i]), "lon": float(lon2[j, i]),
        "t2": col("T2", j, i).tolist(), "q2": col("Q2", j, i).tolist(), "psfc": col("PSFC", j, i).tolist(),
        "tp": None if rain is None else rain.tolist(),
        "u_grid": u.tolist(), "v_grid": v.tolist(),
        "u_earth": (u * c - v * s).tolist(), "v_earth": (v * c + u * s).tolist(),
    })

if req.get("window"):
    (r0, r1), (c0, c1) = req["window"]
    sel = {ydim: slice(r0, r1), xdim: slice(c0, c1)}
    tp = (ds.RAINC.isel(sel).values.astype("float64") + ds.RAINNC.isel(sel).values.astype("float64")) / 1000
    out["window_tp"] = tp.ravel().tolist()

if req.get("proj"):
    from pyproj import CRS, Transformer

    g = ds.attrs
    crs = CRS.from_proj4(f"+proj=lcc +lat_1={g['TRUELAT1']} +lat_2={g['TRUELAT2']} +lat_0={g['MOAD_CEN_LAT']} "
                         f"+lon_0={g['STAND_LON']} +x_0=0 +y_0=0 +a=6370000 +b=6370000 +units=m +no_defs")
    fwd = Transformer.from_crs(CRS.from_proj4("+proj=longlat +R=6370000 +no_defs"), crs, always_xy=True)
    gx, gy = fwd.transform(lon2, lat2)
    xs, ys = np.meshgrid(ds[xdim].values, ds[ydim].values)
    out["xy_worst_m"] = float(np.max(np.hypot(gx - xs, gy - ys)))
    out["x"] = ds[xdim].values.tolist()
    out["y"] = ds[ydim].values.tolist()
    # Tile probes: fractional (column, row) of lat/lon points on the stored x/y, and the fields at a lead.
    x0, y0 = float(ds[xdim][0]), float(ds[ydim][0])
    dx, dy = float(ds[xdim][1]) - x0, float(ds[ydim][1]) - y0
    out["positions"] = []
    for lat, lon in req.get("positions", []):
        px, py = fwd.transform(lon, lat)
        out["positions"].append([(px - x0) / dx, (py - y0) / dy])
    if "lead" in req:
        rc = ds.RAINC.isel(Time=req["lead"]).values.astype("float64") / 1000
        rnc = ds.RAINNC.isel(Time=req["lead"]).values.astype("float64") / 1000
        out["field_tp"] = (rc + rnc).ravel().tolist()
        out["field_rainc"] = rc.ravel().tolist()

print(json.dumps(out))
