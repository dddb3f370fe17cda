"""Stores whose variables carry the CF encodings producers write, written by the real writer (xarray
with whichever zarr-python runs this script), and what xarray reads back from them.

usage:
  cf_stores.py write <path> <zarr_format>   write the store (a dataset at <path>)
  cf_stores.py truth <path>                 print xarray's decoded values of the store as JSON
  cf_stores.py data <url> <key> <truth> [rtol]
                                            open the /data view at <url> with default settings and
                                            check every variable against <truth> (the JSON `truth`
                                            printed): exactly, or within rtol when the truth came from
                                            the other xarray generation (older xarray unpacks int16 in
                                            float32 arithmetic, newer in float64)

The variables (time 2 × step 3 × latitude 6 × longitude 8):
  t2m  float32, _FillValue 9.999e20 (GRIB-style) where cells are missing
  d2m  int16 packed with scale_factor/add_offset and _Unsigned "true": most raw values lie above
       32767, so they are stored negative; _FillValue 65535 (stored as -1)
  tcc  int16 packed with scale_factor and a missing_value (-999)
  msl  float32 with a missing_value list [1e20, -1] written as attributes
  r2   int8 with _Unsigned "maybe"                (gridcast refuses it)
  sp   float32 with scale_factor "0.5", a string  (gridcast refuses it)
"""
import json
import sys
import warnings

import numpy as np
import xarray as xr

warnings.simplefilter("ignore")

SHAPE = (2, 3, 6, 8)
MISSING = (slice(None), slice(None), slice(2, 4), slice(3, 5))  # a 2 × 2 block of missing cells
SERVED = ["d2m", "msl", "t2m", "tcc"]


def dataset():
    rng = np.random.default_rng(11)
    coords = {
        "time": np.array(["2026-11-20T00", "2026-11-20T12"], dtype="datetime64[ns]"),
        "step": np.array([0, 3, 6], dtype="timedelta64[h]").astype("timedelta64[ns]"),
        "latitude": np.arange(50.0, 44.0, -1.0),
        "longitude": np.arange(5.0, 13.0, 1.0),
    }
    dims = ("time", "step", "latitude", "longitude")

    def field(lo, hi):
        return (lo + (hi - lo) * rng.random(SHAPE)).astype("f8")

    t2m = field(250, 300).astype("f4")
    t2m[MISSING] = np.nan
    d2m = field(250, 309)  # raw (d2m - 180) / 0.002 ≥ 35000: every value is above int16's range
    d2m[MISSING] = np.nan
    tcc = np.round(field(0, 1), 4)
    tcc[MISSING] = np.nan
    msl = field(98000, 103000).astype("f4")
    msl[0, :, 2:4, 3:5] = 1e20
    msl[1, :, 2:4, 3:5] = -1
    ds = xr.Dataset(
        {
            "t2m": (dims, t2m, {"units": "K", "long_name": "2 metre temperature"}),
            "d2m": (dims, d2m, {"units": "K", "long_name": "2 metre dewpoint temperature"}),
            "tcc": (dims, tcc, {"units": "1", "long_name": "total cloud cover"}),
            # As a float32 array's attribute holds them: 1e20 rounded to float32 (the two xarray
            # generations disagree on a marker the data type cannot hold; gridcast rounds it).
            "msl": (dims, msl, {"units": "Pa", "missing_value": [float(np.float32(1e20)), -1.0]}),
            "r2": (dims, rng.integers(-100, 100, SHAPE).astype("i1"), {"units": "%", "_Unsigned": "maybe"}),
            "sp": (dims, field(90000, 100000).astype("f4"), {"units": "Pa", "scale_factor": "0.5"}),
        },
        coords=coords,
    )
    encoding = {
        "t2m": {"_FillValue": 9.999e20},
        "d2m": {"dtype": "i2", "_Unsigned": "true", "scale_factor": 0.002, "add_offset": 180.0, "_FillValue": 65535},
        "tcc": {"dtype": "i2", "scale_factor": 0.0001, "missing_value": -999},
    }
    return ds, encoding


def write(path, fmt):
    ds, encoding = dataset()
    kwargs = {"zarr_format": fmt} if fmt == 3 else {}
    ds.to_zarr(path, mode="w", encoding=encoding, consolidated=True, **kwargs)


def as_json(a):
    a = np.asarray(a, dtype=np.float64)
    return [None if np.isnan(v) else float(v) for v in a.ravel()]


def truth(path):
    ds = xr.open_zarr(path)
    out = {v: as_json(ds[v].values) for v in SERVED}
    # The stored raw values too: the test proves decoding matters where they differ.
    raw = xr.open_zarr(path, mask_and_scale=False)
    out["raw"] = {v: as_json(raw[v].values.astype("f8")) for v in SERVED}
    print(json.dumps(out))


def data(url, key, truth_file, rtol=0.0):
    served = xr.open_zarr(url, storage_options={"headers": {"X-API-Key": key}})
    with open(truth_file) as f:
        source = json.load(f)
    checked = {}
    for var in SERVED:
        a = served[var].values.astype("f4")
        b = np.array([np.nan if v is None else v for v in source[var]], dtype="f4").reshape(SHAPE)
        assert a.shape == b.shape, (var, a.shape, b.shape)
        close = np.isclose(a, b, rtol=rtol, atol=0) if rtol else a == b
        same = close | (np.isnan(a) & np.isnan(b))
        assert same.all(), f"{var}: {int((~same).sum())} values differ, e.g. {a[~same][:3]} vs {b[~same][:3]}"
        checked[var] = {"values": int(a.size), "missing": int(np.isnan(a).sum())}
    print(json.dumps({"zarr": __import__("zarr").__version__, "variables": sorted(served.data_vars), "checked": checked}))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "write":
        write(sys.argv[2], int(sys.argv[3]))
    elif cmd == "truth":
        truth(sys.argv[2])
    elif cmd == "data":
        data(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]) if len(sys.argv) > 5 else 0.0)
    else:
        sys.exit(f"unknown command {cmd}")
