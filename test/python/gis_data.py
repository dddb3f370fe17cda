"""GDAL (Debian's python3-gdal, Zarr driver over /vsicurl/) on /data, checked against xarray on the
same datasets: the CRS GDAL finds, a north-up geotransform, every pixel's value at the place GDAL
says it is, and `gdal_translate -projwin` on a window.

stdin: {"base": url, "key": api key, "datasets": [{"id", "var", "x", "y", "index": "0:0", "projwin": [ulx, uly, lrx, lry] | null}]}
stdout: one JSON object per dataset: srs (WKT), geographic, projected, geotransform, compared, projwin size.
"""
import json
import sys

import numpy as np
import xarray as xr
from osgeo import gdal

gdal.UseExceptions()
req = json.load(sys.stdin)
base, key = req["base"], req["key"]
gdal.SetConfigOption("GDAL_HTTP_HEADERS", f"X-API-Key: {key}")
gdal.SetConfigOption("GDAL_DISABLE_READDIR_ON_OPEN", "EMPTY_DIR")


def physical(band):
    a = band.ReadAsArray().astype(np.float64)
    nd = band.GetNoDataValue()
    if nd is not None:
        a[a == nd] = np.nan
    return a * (band.GetScale() or 1.0) + (band.GetOffset() or 0.0)


def same(a, b, what):
    a32, b32 = np.asarray(a, np.float32), np.asarray(b, np.float32)
    assert a32.shape == b32.shape, f"{what}: shape {a32.shape} != {b32.shape}"
    assert np.isfinite(b32).any(), f"{what}: no values"
    bad = ~((a32 == b32) | (np.isnan(a32) & np.isnan(b32)))
    assert not bad.any(), f"{what}: {int(bad.sum())} of {a32.size} differ, e.g. {a32[bad][:3]} vs {b32[bad][:3]}"
    return int(a32.size)


out = []
for d in req["datasets"]:
    url = f"{base}/data/datasets/{d['id']}/zarr"
    name = f'ZARR:"/vsicurl/{url}":/{d["var"]}:{d["index"]}'
    ds = gdal.Open(name)
    srs = ds.GetSpatialRef()
    gt = ds.GetGeoTransform()
    values = physical(ds.GetRasterBand(1))
    xa = xr.open_zarr(url, storage_options={"headers": {"X-API-Key": key}}, consolidated=True)
    field = xa[d["var"]].isel(time=0, lead_time=0)
    # Where GDAL puts each pixel centre, looked up in xarray by coordinate (not by index).
    xs = gt[0] + gt[1] * (np.arange(ds.RasterXSize) + 0.5)
    ys = gt[3] + gt[5] * (np.arange(ds.RasterYSize) + 0.5)
    tol = 1e-6 * max(abs(gt[1]), abs(gt[5]))
    truth = field.sel({d["x"]: xs, d["y"]: ys}, method="nearest", tolerance=tol).transpose(d["y"], d["x"])
    compared = same(values, truth.values, f"{d['id']}/{d['var']}")
    row = {
        "id": d["id"],
        "srs": srs.ExportToWkt() if srs else "",
        "geographic": bool(srs and srs.IsGeographic()),
        "projected": bool(srs and srs.IsProjected()),
        "geotransform": list(gt),
        "compared": compared,
    }
    if d.get("projwin"):
        ulx, uly, lrx, lry = d["projwin"]
        win = gdal.Translate("/vsimem/win.tif", ds, projWin=[ulx, uly, lrx, lry])
        wgt = win.GetGeoTransform()
        wx = wgt[0] + wgt[1] * (np.arange(win.RasterXSize) + 0.5)
        wy = wgt[3] + wgt[5] * (np.arange(win.RasterYSize) + 0.5)
        wtruth = field.sel({d["x"]: wx, d["y"]: wy}, method="nearest", tolerance=tol).transpose(d["y"], d["x"])
        row["projwin"] = {"size": [win.RasterXSize, win.RasterYSize], "compared": same(physical(win.GetRasterBand(1)), wtruth.values, "projwin")}
        win = None
        gdal.Unlink("/vsimem/win.tif")
    out.append(row)
print(json.dumps(out))
