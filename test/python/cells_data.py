"""Open gridcast's /data view of unstructured-grid groups with xarray + zarr 2 over HTTP and compare it
with xarray's reading of the stored group: every variable's values, latitude(cell)/longitude(cell) in
degrees (ICON stores radians), and dims (only real dimensions).

stdin: [{"url", "headers", "store", "group", "vars": {published: stored}}]; stdout: per group, the problems.
"""
import json
import sys

import numpy as np
import xarray as xr

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "..", "forecast", "cells"))
from stores import centres  # noqa: E402


def check(req):
    out, checked = [], 0
    pub = xr.open_zarr(req["url"], consolidated=True, storage_options={"headers": req["headers"]})
    ref = xr.open_zarr(req["store"], group=req["group"])
    lat, lon = centres(ref)
    n = lat.size
    if set(pub.sizes) != {"time", "lead_time", "cell"} or pub.sizes["cell"] != n:
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
    for p, s in req["vars"].items():
        if p not in pub.data_vars:
            out.append(f"{p} missing")
            continue
        v = pub[p]
        if v.dims != ("time", "lead_time", "cell"):
            out.append(f"{p} dims {v.dims}")
            continue
        a = v.values.astype(np.float32)
        b = ref[s].values.astype(np.float32)
        if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
            out.append(f"{p} values differ ({a.shape} vs {b.shape})")
        checked += int(np.isfinite(a).sum())
    return {"group": req["group"], "problems": out, "checked": checked,
            "lat0": float(pub.latitude.values[0]), "ref_lat0": float(lat[0])}


print(json.dumps([check(r) for r in json.load(sys.stdin)]))
