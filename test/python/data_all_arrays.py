"""Read every array of every /data dataset with xarray + zarr-python 2, once with each of two keys,
and check the two reads are identical value for value (NaN where NaN). Used to show that a
rate-limited key gets the same numbers as an unlimited one: zarr 2 turns a refused chunk into
fill values silently, so any refusal would show up here as a difference.

usage: data_all_arrays.py <base-url> <reference-key> <other-key>; prints a JSON summary, exits
non-zero on any difference.
"""
import json
import sys
import urllib.request

import numpy as np
import xarray as xr

BASE, REF, OTHER = sys.argv[1], sys.argv[2], sys.argv[3]


def listing(key):
    req = urllib.request.Request(BASE + "/data/datasets", headers={"X-API-Key": key})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())["datasets"]


def open_all(href, key):
    ds = xr.open_zarr(BASE + href, consolidated=True, storage_options={"headers": {"X-API-Key": key}})
    return {name: np.asarray(ds[name].values) for name in sorted(ds.variables)}


summary = []
failures = []
for d in listing(OTHER):
    ref = open_all(d["zarr"], REF)
    got = open_all(d["zarr"], OTHER)
    assert sorted(ref) == sorted(got), (d["id"], sorted(ref), sorted(got))
    values = 0
    for name in sorted(ref):
        a, b = ref[name], got[name]
        assert a.shape == b.shape, (d["id"], name, a.shape, b.shape)
        if a.dtype.kind == "f":
            same = (a == b) | (np.isnan(a) & np.isnan(b))
            finite = int(np.isfinite(a).sum())
        else:
            same = a == b
            finite = int(a.size)
        if not same.all():
            failures.append(f"{d['id']}/{name}: {int((~same).sum())} of {a.size} values differ")
        values += finite
    summary.append({"id": d["id"], "arrays": sorted(ref), "values": values})

print(json.dumps({"datasets": summary, "failures": failures}))
sys.exit(1 if failures else 0)
