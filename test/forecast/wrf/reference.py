# What xarray + pyproj say about a WRF store, independently of gridcast. JSON request on stdin:
#   store, points ([lat, lon], ...): per point the node nearest by great circle over the stored
#   XLAT/XLONG (first time where they are per time) and, at it, every lead of T2, Q2 and PSFC, the
#   total precipitation RAINC + RAINNC in metres, U10/V10 as stored and turned to earth-relative
#   by the stored COSALPHA/SINALPHA (u cos a - v sin a, v cos a + u sin a: WRF's rule, by hand)
#   box ([lat_min, lat_max, lon_min, lon_max], optional): RAINC + RAINNC in metres over the rows
#   and columns of gridcast's export window (rows, cols given), every lead
#   node_boxes ([lat_min, lat_max, lon_min, lon_max], ...): for a grid served from its nodes, the
#   rows and columns spanning every node whose stored XLAT/XLONG lie inside, and T2 (K) and
#   RAINC + RAINNC (m) over them, every lead
#   proj (optional): with stored x/y (xwrf), the CRS the WRF globals give (as xwrf builds it), and
#   the largest distance in metres between where it puts each stored XLAT/XLONG and the stored x/y;
#   with positions ([lat, lon], ...) their fractional (column, row) on the stored x/y, and with lead
#   the whole RAINC + RAINNC (and RAINC alone) in metres at that lead; with boxes
#   ([lat_min, lat_max, lon_min, lon_max], ...) the index window whose cells (index +- 0.5 on the
#   stored x/y) the box's outline reaches into, the nodes whose stored XLAT/XLONG lie inside, the
#   window's x/y, and T2 (K) and RAINC + RAINNC (m) over it, every lead
#   rotated (optional): for WRF's latitude-longitude grid (MAP_PROJ 6), the rotated CRS POLE_LAT/
#   POLE_LON give, the axes pyproj puts the first row's and first column's stored nodes on (and how
#   far the other nodes lie off that lattice, in cells), the fractional (column, row) of positions
#   on it, and with lead the whole T2 at that lead
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

for lat_min, lat_max, lon_min, lon_max in req.get("node_boxes", []):
    inside = (lat2 >= lat_min) & (lat2 <= lat_max) & (lon2 >= lon_min) & (lon2 <= lon_max)
    jj, ii = np.nonzero(inside)
    r0, r1, c0, c1 = int(jj.min()), int(jj.max()) + 1, int(ii.min()), int(ii.max()) + 1
    sel = {ydim: slice(r0, r1), xdim: slice(c0, c1)}
    rain = ds.RAINC.isel(sel).values.astype("float64") + ds.RAINNC.isel(sel).values.astype("float64")
    out.setdefault("node_boxes", []).append({
        "rows": [r0, r1], "cols": [c0, c1], "nodes": int(inside.sum()),
        "t2": ds.T2.isel(sel).values.astype("float64").ravel().tolist(), "tp": (rain / 1000).ravel().tolist(),
    })

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

    for lat_min, lat_max, lon_min, lon_max in req.get("boxes", []):
        t = np.linspace(0, 1, 200)
        lats = np.concatenate([np.full_like(t, lat_min), np.full_like(t, lat_max), lat_min + (lat_max - lat_min) * t,
                               lat_min + (lat_max - lat_min) * t])
        lons = np.concatenate([lon_min + (lon_max - lon_min) * t, lon_min + (lon_max - lon_min) * t,
                               np.full_like(t, lon_min), np.full_like(t, lon_max)])
        bx, by = fwd.transform(lons, lats)
        fx, fy = (bx - x0) / dx, (by - y0) / dy
        nx, ny = ds.sizes[xdim], ds.sizes[ydim]
        c0 = max(0, int(np.floor(fx.min() - 0.5)) + 1)
        c1 = min(nx, int(np.ceil(fx.max() + 0.5)))
        r0 = max(0, int(np.floor(fy.min() - 0.5)) + 1)
        r1 = min(ny, int(np.ceil(fy.max() + 0.5)))
        inside = (lat2 >= lat_min) & (lat2 <= lat_max) & (lon2 >= lon_min) & (lon2 <= lon_max)
        jj, ii = np.nonzero(inside)
        sel = {ydim: slice(r0, r1), xdim: slice(c0, c1)}
        rain = ds.RAINC.isel(sel).values.astype("float64") + ds.RAINNC.isel(sel).values.astype("float64")
        out.setdefault("boxes", []).append({
            "rows": [r0, r1], "cols": [c0, c1], "inside_rows": [int(jj.min()), int(jj.max())],
            "inside_cols": [int(ii.min()), int(ii.max())],
            "x": ds[xdim].values[c0:c1].tolist(), "y": ds[ydim].values[r0:r1].tolist(),
            "t2": ds.T2.isel(sel).values.astype("float64").ravel().tolist(), "tp": (rain / 1000).ravel().tolist(),
        })

if req.get("rotated"):
    from pyproj import CRS, Transformer

    g = ds.attrs
    crs = CRS.from_cf({"grid_mapping_name": "rotated_latitude_longitude", "grid_north_pole_latitude": g["POLE_LAT"],
                       "grid_north_pole_longitude": g["POLE_LON"], "earth_radius": 6370000.0})
    fwd = Transformer.from_crs(CRS.from_proj4("+proj=longlat +R=6370000 +no_defs"), crs, always_xy=True)
    rx, ry = fwd.transform(lon2, lat2)
    ny, nx = lat2.shape
    x0, y0 = float(rx[0, 0]), float(ry[0, 0])
    dx, dy = (float(rx[0, -1]) - x0) / (nx - 1), (float(ry[-1, 0]) - y0) / (ny - 1)
    ii, jj = np.meshgrid(np.arange(nx), np.arange(ny))
    out["lattice_worst_cells"] = float(max(np.abs((rx - x0) / dx - ii).max(), np.abs((ry - y0) / dy - jj).max()))
    out["shape"] = [int(ny), int(nx)]
    out["positions"] = []
    for lat, lon in req.get("positions", []):
        px, py = fwd.transform(lon, lat)
        out["positions"].append([(px - x0) / dx, (py - y0) / dy])
    if "lead" in req:
        out["field_t2"] = ds.T2.isel(Time=req["lead"]).values.astype("float64").ravel().tolist()

print(json.dumps(out))
