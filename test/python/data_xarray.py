"""Open every /data dataset with xarray + zarr-python 2 over HTTP and check it against gridcast's own
answers: /point for one grid node and /api/export/{id}/npy for one box, value for value, and the
decoded time + lead_time against the instants /point reports.

usage: data_xarray.py <base-url> <api-key>; prints a JSON summary, exits non-zero on any mismatch.
"""
import io
import json
import sys
import urllib.parse
import urllib.request

import numpy as np
import xarray as xr

BASE, KEY = sys.argv[1], sys.argv[2]
HEADERS = {"X-API-Key": KEY}


def fetch(path, **query):
    url = BASE + path + ("?" + urllib.parse.urlencode(query) if query else "")
    with urllib.request.urlopen(urllib.request.Request(url, headers=HEADERS)) as r:
        return r.read(), r.headers


def fetch_json(path, **query):
    return json.loads(fetch(path, **query)[0])


def index_of(coord, value):
    """Index of a coordinate value (longitudes compared modulo 360); it must be on the grid."""
    c = np.asarray(coord, dtype=np.float64)
    diff = np.abs(c - value)
    if coord.name == "lon":
        diff = np.minimum(diff % 360, (-diff) % 360)
    i = int(np.argmin(diff))
    assert diff[i] < 1e-9, f"{coord.name}={value} is not a grid node (nearest {c[i]})"
    return i


def axis_values(spec):
    if "values" in spec:
        return spec["values"]
    return [spec["first"] + k * spec["step"] for k in range(spec["count"])]


def same(a, b, what):
    a32 = np.asarray(a, dtype=np.float32)
    b32 = np.asarray(b, dtype=np.float32)
    assert a32.shape == b32.shape, f"{what}: shape {a32.shape} != {b32.shape}"
    assert np.isfinite(b32).any(), f"{what}: no values at all"
    bad = ~((a32 == b32) | (np.isnan(a32) & np.isnan(b32)))
    assert not bad.any(), f"{what}: {int(bad.sum())} values differ, e.g. {a32[bad][:3]} vs {b32[bad][:3]}"
    return int(a32.size)


def point_node(ds, name):
    """A node away from the grid edges and, for the global group, outside every regional patch."""
    if name == "forecast~global":
        return -31.0, 101.0
    lat, lon = ds.lat.values, ds.lon.values
    return float(lat[len(lat) // 3]), float(lon[2 * len(lon) // 3])


def box_of(ds, name):
    if name == "forecast~global":
        return -21.0, 9.0, 60.0, 81.0
    lat, lon = np.sort(ds.lat.values), np.sort(ds.lon.values)
    return float(lat[2]), float(lat[len(lat) // 2]), float(lon[3]), float(lon[len(lon) // 2])


summary = []
for d in fetch_json("/data/datasets")["datasets"]:
    name, group = d["id"], d["group"]
    ds = xr.open_zarr(BASE + d["zarr"], consolidated=True, storage_options={"headers": HEADERS})
    assert sorted(ds.data_vars) == sorted(v["name"] for v in d["variables"]), (name, list(ds.data_vars))
    assert np.issubdtype(ds.time.dtype, np.datetime64) and np.issubdtype(ds.lead_time.dtype, np.timedelta64)
    run = len(ds.time) - 1
    checked = {"id": name, "variables": [], "values": 0}
    for var in sorted(ds.data_vars):
        da = ds[var]
        level = {"level": 500} if "level" in da.dims else {}
        lat, lon = point_node(ds, name)
        p = fetch_json("/point", lat=lat, lon=lon, var=var, group=group, run=run, **level)
        assert p["group"] == group, f"{name}/{var}: /point answered from {p['group']}"
        col = da.isel(time=run, lat=index_of(ds.lat, p["grid_lat"]), lon=index_of(ds.lon, p["grid_lon"]))
        if level:
            col = col.sel(level=500)
        col = col.load()
        points = [np.nan if v is None else v for v in p["values"]]
        n = same(col.values, points, f"{name}/{var} point")
        valid = (ds.time.values[run] + ds.lead_time.values).astype("datetime64[s]")
        assert [str(t) for t in valid] == p["times"], f"{name}/{var}: times {valid} != {p['times']}"

        lat0, lat1, lon0, lon1 = box_of(ds, name)
        body, headers = fetch(
            f"/api/export/{name}/npy", var=var, time_index=0, lead_start=1, lead_stop=3,
            lat_min=lat0, lat_max=lat1, lon_min=lon0, lon_max=lon1, **level,
        )
        npy = np.load(io.BytesIO(body))
        field = json.loads(headers["X-SVC-Field"])
        rows = [index_of(ds.lat, v) for v in axis_values(field["lat"])]
        cols = [index_of(ds.lon, v) for v in axis_values(field["lon"])]
        box = da.isel(time=0, lead_time=slice(1, 4))
        if level:
            box = box.sel(level=500)
        # One contiguous selection (lazy), loaded, then put in the export's row/column order.
        r0, r1, c0, c1 = min(rows), max(rows) + 1, min(cols), max(cols) + 1
        sub = box.isel(lat=slice(r0, r1), lon=slice(c0, c1)).load()
        sub = sub.values[:, [r - r0 for r in rows]][:, :, [c - c0 for c in cols]]
        n += same(sub, npy, f"{name}/{var} box")
        checked["variables"].append(var)
        checked["values"] += n
    summary.append(checked)

print(json.dumps({"datasets": summary}))
