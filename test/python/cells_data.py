"""Open gridcast's /data view of unstructured-grid groups with xarray over HTTP (Debian's xarray + zarr 2
on the v2 view, or xarray 2026 + zarr 3 on the v3 view with "zarr_format": 3) and compare it with
xarray's reading of the stored group: every variable's values, latitude(cell)/longitude(cell) in
degrees (ICON stores radians), dims (only real dimensions), and the grid mapping the variables name.
An anemoi-datasets store is published in its own layout: data(time, variables, ensemble, cell) with
the variable names in the root attributes, compared with the stored data(dates, ...).

stdin: [{"url", "headers", "store", "group", "vars": {published: stored} | "anemoi", "zarr_format"?,
"crs": {attribute: value}}]; stdout: per group, the problems.
"""
import json
import sys

import numpy as np
import xarray as xr

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "..", "forecast", "cells"))
from stores import centres  # noqa: E402


def open_view(req):
    opts = {"storage_options": {"headers": req["headers"]}, "consolidated": True}
    if req.get("zarr_format"):
        opts["zarr_format"] = req["zarr_format"]
    return xr.open_zarr(req["url"], **opts)


def check_anemoi(req, pub, ref, out):
    """anemoi-datasets' own layout: data(time, variables, ensemble, cell), names in the root attributes."""
    checked = 0
    if list(pub.attrs.get("variables", [])) != list(ref.attrs["variables"]):
        out.append(f"variables attribute {pub.attrs.get('variables')}")
    if "data" not in pub.data_vars or pub.data.dims != ("time", "variables", "ensemble", "cell"):
        out.append(f"data dims {pub.data.dims if 'data' in pub else None}")
        return checked
    if not np.array_equal(pub.time.values.astype("datetime64[s]"), ref.dates.values.astype("datetime64[s]")):
        out.append(f"time {pub.time.values} vs dates {ref.dates.values}")
    a = pub.data.values.astype(np.float32)
    b = ref.data.values.astype(np.float32)
    if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
        out.append(f"data values differ ({a.shape} vs {b.shape})")
    if pub.data.attrs.get("grid_mapping", pub.data.encoding.get("grid_mapping")) != "crs" and "crs" not in pub.data.coords:
        out.append("data names no grid mapping")
    return int(np.isfinite(a).sum())


def check(req):
    out, checked = [], 0
    pub = open_view(req)
    ref = xr.open_zarr(req["store"], group=req.get("group"))
    lat, lon = centres(ref)
    n = lat.size
    anemoi = req["vars"] == "anemoi"
    want_dims = {"time", "lead_time", "cell"} | ({"variables", "ensemble"} if anemoi else set())
    if set(pub.sizes) != want_dims or pub.sizes["cell"] != n:
        out.append(f"dims {dict(pub.sizes)}")
    for name in ("latitude", "longitude"):
        if name not in pub.coords or pub[name].dims != ("cell",):
            out.append(f"{name} is not a coordinate on (cell,)")
    if not out:
        if not np.allclose(pub.latitude.values, lat, atol=1e-6):
            out.append("latitude differs")
        dl = (pub.longitude.values - lon + 180) % 360 - 180
        if not np.allclose(dl, 0, atol=1e-6):
            out.append("longitude differs")
    # The grid mapping says what the grid is.
    crs = pub["crs"].attrs if "crs" in pub.variables else {}
    for k, v in req.get("crs", {}).items():
        if crs.get(k) != v:
            out.append(f"crs {k} = {crs.get(k)!r}, not {v!r}")
    if anemoi:
        checked = check_anemoi(req, pub, ref, out)
        return {"group": req.get("group") or req["store"], "problems": out, "checked": checked}
    for p, s in req["vars"].items():
        if p not in pub.data_vars:
            out.append(f"{p} missing")
            continue
        v = pub[p]
        if v.dims != ("time", "lead_time", "cell"):
            out.append(f"{p} dims {v.dims}")
            continue
        gm = v.attrs.get("grid_mapping", v.encoding.get("grid_mapping"))
        if gm != "crs" and "crs" not in v.coords:
            out.append(f"{p} names no grid mapping ({gm})")
        a = v.values.astype(np.float32)
        b = ref[s].values.astype(np.float32)
        if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
            out.append(f"{p} values differ ({a.shape} vs {b.shape})")
        checked += int(np.isfinite(a).sum())
    return {"group": req.get("group") or req["store"], "problems": out, "checked": checked,
            "lat0": float(pub.latitude.values[0]), "ref_lat0": float(lat[0])}


print(json.dumps([check(r) for r in json.load(sys.stdin)]))
