# What xarray + pyproj say about a store with 2-D latitude/longitude and no x/y values,
# independently of gridcast. Reads a JSON request on stdin:
#   store, var, lat, lon (stored names), sel (isel of the non-grid dims, e.g. {"step": 0}),
#   proj4 (the producer's projection) for boxes, bearings and positions
#   points:    the node nearest by great circle over the stored 2-D latitude/longitude, its values
#   boxes:     the index window whose cells the box's outline reaches into (x/y rebuilt with pyproj
#              through the first stored node, spacing from the last node of row 0 and column 0),
#              the nodes inside, and the field over the window
#   bearings:  the bearing of the grid's +y axis at nodes (pyproj)
#   positions: fractional grid positions of lat/lon points (for tile pixels)
#   node_boxes: the rows and columns spanning the stored nodes inside each box (curvilinear grids)
import json
import sys

import numpy as np
import xarray as xr

req = json.load(sys.stdin)
ds = xr.open_zarr(req["store"], consolidated=False, decode_timedelta=True)
lat2 = ds[req["lat"]].values
lon2 = ds[req["lon"]].values
if lat2.ndim == 3:  # WRF's XLAT/XLONG on Time
    lat2, lon2 = lat2[0], lon2[0]
lat2 = lat2.astype("float64")
lon2 = lon2.astype("float64")
var = ds[req["var"]].isel(req.get("sel", {}))
ydim, xdim = ds[req["lat"]].dims[-2:]
out = {"points": [], "boxes": [], "bearings": [], "positions": []}


def nearest(lat, lon):
    # Haversine on the sphere: the node nearest by great circle.
    p1, p2 = np.radians(lat), np.radians(lat2)
    dl = np.radians(lon2 - lon)
    a = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return np.unravel_index(np.argmin(a), a.shape)


for lat, lon in req.get("points", []):
    j, i = nearest(lat, lon)
    col = var.isel({ydim: j, xdim: i}).values.reshape(-1)
    out["points"].append({"iy": int(j), "ix": int(i), "lat": float(lat2[j, i]), "lon": float(((lon2[j, i] + 180) % 360) - 180),
                          "values": [float(v) for v in col]})

for lat_min, lat_max, lon_min, lon_max in req.get("node_boxes", []):
    # A curvilinear grid's window: the rows and columns spanning every stored node inside the box.
    lon180 = ((lon2 + 180) % 360) - 180
    inside = (lat2 >= lat_min) & (lat2 <= lat_max) & (lon180 >= lon_min) & (lon180 <= lon_max)
    jj, ii = np.nonzero(inside)
    r0, r1, c0, c1 = int(jj.min()), int(jj.max()) + 1, int(ii.min()), int(ii.max()) + 1
    field = var.isel({ydim: slice(r0, r1), xdim: slice(c0, c1)}).values.astype("float64")
    out["boxes"].append({"rows": [r0, r1], "cols": [c0, c1], "inside_rows": [r0, r1 - 1],
                         "inside_cols": [c0, c1 - 1], "field": field.ravel().tolist()})

if req.get("proj4"):
    from pyproj import CRS, Geod, Transformer

    crs = CRS.from_proj4(req["proj4"])
    fwd = Transformer.from_crs(crs.geodetic_crs, crs, always_xy=True)
    inv = Transformer.from_crs(crs, crs.geodetic_crs, always_xy=True)
    ny, nx = lat2.shape
    x0, y0 = fwd.transform(lon2[0, 0], lat2[0, 0])
    dx = (fwd.transform(lon2[0, -1], lat2[0, -1])[0] - x0) / (nx - 1)
    dy = (fwd.transform(lon2[-1, 0], lat2[-1, 0])[1] - y0) / (ny - 1)
    x = x0 + dx * np.arange(nx)
    y = y0 + dy * np.arange(ny)
    out["axes"] = {"x0": float(x0), "dx": float(dx), "y0": float(y0), "dy": float(dy)}
    for lat_min, lat_max, lon_min, lon_max in req.get("boxes", []):
        t = np.linspace(0, 1, 200)
        lats = np.concatenate([np.full_like(t, lat_min), np.full_like(t, lat_max), lat_min + (lat_max - lat_min) * t,
                               lat_min + (lat_max - lat_min) * t])
        lons = np.concatenate([lon_min + (lon_max - lon_min) * t, lon_min + (lon_max - lon_min) * t,
                               np.full_like(t, lon_min), np.full_like(t, lon_max)])
        gx, gy = fwd.transform(lons, lats)
        fx, fy = (gx - x0) / dx, (gy - y0) / dy
        c0 = max(0, int(np.floor(fx.min() - 0.5)) + 1)
        c1 = min(nx, int(np.ceil(fx.max() + 0.5)))
        r0 = max(0, int(np.floor(fy.min() - 0.5)) + 1)
        r1 = min(ny, int(np.ceil(fy.max() + 0.5)))
        lon180 = ((lon2 + 180) % 360) - 180
        inside = (lat2 >= lat_min) & (lat2 <= lat_max) & (lon180 >= lon_min) & (lon180 <= lon_max)
        jj, ii = np.nonzero(inside)
        field = var.isel({ydim: slice(r0, r1), xdim: slice(c0, c1)}).values.astype("float64")
        out["boxes"].append({"rows": [r0, r1], "cols": [c0, c1], "inside_rows": [int(jj.min()), int(jj.max())],
                             "inside_cols": [int(ii.min()), int(ii.max())], "field": field.ravel().tolist()})
    geod = Geod(**({"a": crs.ellipsoid.semi_major_metre, "f": 0.0}))
    for j, i in req.get("nodes", []):
        lo1, la1 = inv.transform(x[i], y[j])
        lo2, la2 = inv.transform(x[i], y[j] + 0.1 * abs(dy))
        out["bearings"].append(float(geod.inv(lo1, la1, lo2, la2)[0]))
    for lat, lon in req.get("positions", []):
        gx, gy = fwd.transform(lon, lat)
        out["positions"].append([float((gx - x0) / dx), float((gy - y0) / dy)])

print(json.dumps(out))
