# What xarray + pyproj say about a projected-grid store, independently of gridcast: the node
# nearest to each point by great-circle distance (from the store's own 2-D latitude/longitude),
# its values, the index window covering a lat/lon box, the bearing of grid north at a node, and
# the fractional grid position of a point (for map pixels). Reads a JSON request on stdin.
import json
import sys

import numpy as np
import xarray as xr
from pyproj import CRS, Geod, Transformer

req = json.load(sys.stdin)
ds = xr.open_zarr(req["store"], consolidated=False, decode_timedelta=True)
gm = ds[req["var"]].attrs.get("grid_mapping") or ds[req["var"]].encoding.get("grid_mapping")
crs = CRS.from_cf(ds[gm].attrs)
xname, yname, latname, lonname = req["axes"]
x = ds[xname].values
y = ds[yname].values
lat2 = ds[latname].values
lon2 = ds[lonname].values
geod = Geod(a=6371229.0, f=0.0)
fwd = Transformer.from_crs("EPSG:4326", crs, always_xy=True)
out = {"points": [], "boxes": [], "bearings": [], "positions": []}

for lat, lon in req.get("points", []):
    _, _, d = geod.inv(np.full(lat2.shape, lon), np.full(lat2.shape, lat), lon2, lat2)
    j, i = np.unravel_index(np.argmin(d), d.shape)
    col = ds[req["var"]].isel({yname: j, xname: i}).values.reshape(-1)
    out["points"].append({"iy": int(j), "ix": int(i), "lat": float(lat2[j, i]), "lon": float(lon2[j, i]),
                          "values": [float(v) for v in col]})

for lat_min, lat_max, lon_min, lon_max in req.get("boxes", []):
    t = np.linspace(0, 1, 200)
    # A box whose lon_max is west of its lon_min crosses the antimeridian, eastward from lon_min.
    crosses = lon_max < lon_min
    east = lon_max + 360 if crosses else lon_max
    lats = np.concatenate([np.full_like(t, lat_min), np.full_like(t, lat_max), lat_min + (lat_max - lat_min) * t,
                           lat_min + (lat_max - lat_min) * t])
    lons = np.concatenate([lon_min + (east - lon_min) * t, lon_min + (east - lon_min) * t,
                           np.full_like(t, lon_min), np.full_like(t, east)])
    gx, gy = fwd.transform(lons, lats)
    fx = (gx - x[0]) / (x[1] - x[0])
    fy = (gy - y[0]) / (y[1] - y[0])
    # Nodes whose cells (index ± 0.5) the box's outline reaches into.
    c0 = max(0, int(np.floor(fx.min() - 0.5)) + 1)
    c1 = min(len(x), int(np.ceil(fx.max() + 0.5)))
    r0 = max(0, int(np.floor(fy.min() - 0.5)) + 1)
    r1 = min(len(y), int(np.ceil(fy.max() + 0.5)))
    in_lon = ((lon2 >= lon_min) | (lon2 <= lon_max)) if crosses else ((lon2 >= lon_min) & (lon2 <= lon_max))
    inside = (lat2 >= lat_min) & (lat2 <= lat_max) & in_lon
    jj, ii = np.nonzero(inside)
    field = ds[req["var"]].isel({yname: slice(r0, r1), xname: slice(c0, c1)}).values
    field = field.reshape(-1, r1 - r0, c1 - c0)
    out["boxes"].append({"rows": [r0, r1], "cols": [c0, c1], "inside_rows": [int(jj.min()), int(jj.max())],
                         "inside_cols": [int(ii.min()), int(ii.max())], "y": [float(v) for v in y[r0:r1]],
                         "x": [float(v) for v in x[c0:c1]], "field": field.astype("float64").ravel().tolist()})

for j, i in req.get("nodes", []):
    # Bearing of the grid's +y axis at the node (CF: y_wind is positive with increasing y, whichever
    # way the rows are stored): towards the point a tenth of a cell up in y.
    to_geo = Transformer.from_crs(crs, crs.geodetic_crs, always_xy=True)
    lo1, la1 = to_geo.transform(x[i], y[j])
    lo2, la2 = to_geo.transform(x[i], y[j] + 0.1 * abs(y[1] - y[0]))
    az, _, _ = geod.inv(lo1, la1, lo2, la2)
    out["bearings"].append(float(az))

for lat, lon in req.get("positions", []):
    gx, gy = fwd.transform(lon, lat)
    out["positions"].append([float((gx - x[0]) / (x[1] - x[0])), float((gy - y[0]) / (y[1] - y[0]))])

if req.get("bounds"):
    # Geographic bounds of the grid's cells: the outer cell edges, densely sampled, back to lat/lon.
    to_geo = Transformer.from_crs(crs, crs.geodetic_crs, always_xy=True)
    dx, dy = x[1] - x[0], y[1] - y[0]
    t = np.linspace(0, 1, 500)
    ex = np.concatenate([x[0] - dx / 2 + t * len(x) * dx, x[0] - dx / 2 + t * len(x) * dx,
                         np.full_like(t, x[0] - dx / 2), np.full_like(t, x[-1] + dx / 2)])
    ey = np.concatenate([np.full_like(t, y[0] - dy / 2), np.full_like(t, y[-1] + dy / 2),
                         y[0] - dy / 2 + t * len(y) * dy, y[0] - dy / 2 + t * len(y) * dy])
    lo, la = to_geo.transform(ex, ey)
    out["bounds"] = [float(lo.min()), float(la.min()), float(lo.max()), float(la.max())]

print(json.dumps(out))
