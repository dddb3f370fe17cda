"""The GeoTIFF export read by rasterio and by GDAL's own Python bindings, checked against the .npy
export of the same box: every band equal to its lead (rows flipped: the .npy runs south to north),
north-up, with CRS, no-data, band descriptions and metadata.

stdin: {"base": url, "key": api key, "exports": [{"id": dataset id, "query": {...}}]}
stdout: one JSON object per export.
"""
import io
import json
import sys
import urllib.parse
import urllib.request

import numpy as np
import rasterio
from osgeo import gdal

gdal.UseExceptions()
req = json.load(sys.stdin)
base, key = req["base"], req["key"]


def fetch(path, query):
    url = f"{base}{path}?{urllib.parse.urlencode(query)}"
    with urllib.request.urlopen(urllib.request.Request(url, headers={"X-API-Key": key})) as r:
        return r.read(), r.headers


def same(a, b, what):
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    assert np.isfinite(b).any(), f"{what}: no values"
    bad = ~((a == b) | (np.isnan(a) & np.isnan(b)))
    assert not bad.any(), f"{what}: {int(bad.sum())} of {a.size} differ"
    return int(a.size)


out = []
for e in req["exports"]:
    tiff, headers = fetch(f"/api/export/{e['id']}/tiff", e["query"])
    npy, _ = fetch(f"/api/export/{e['id']}/npy", e["query"])
    cube = np.load(io.BytesIO(npy))
    row = {"id": e["id"], "content_type": headers["Content-Type"], "tiff_bytes": len(tiff), "npy_bytes": len(npy)}
    with rasterio.MemoryFile(tiff) as mem, mem.open() as ds:
        row.update(
            crs=ds.crs.to_wkt() if ds.crs else "",
            epsg=ds.crs.to_epsg() if ds.crs else None,
            proj4=ds.crs.to_proj4() if ds.crs else "",
            transform=list(ds.transform)[:6],
            count=ds.count,
            dtypes=sorted(set(ds.dtypes)),
            nodata_is_nan=bool(ds.nodata is not None and np.isnan(ds.nodata)),
            descriptions=list(ds.descriptions),
            units=list(ds.units),
            tags=ds.tags(),
            band_tags=[ds.tags(i + 1) for i in range(ds.count)],
            compression=ds.compression.name if ds.compression else None,
        )
        data = ds.read()
    # The .npy runs south to north; the GeoTIFF north-up.
    row["compared"] = same(data, cube[:, ::-1, :], f"{e['id']} rasterio")
    gdal.FileFromMemBuffer("/vsimem/x.tif", tiff)
    g = gdal.Open("/vsimem/x.tif")
    row["gdal_geotransform"] = list(g.GetGeoTransform())
    row["gdal_compared"] = same(g.ReadAsArray().reshape(data.shape), cube[:, ::-1, :], f"{e['id']} GDAL")
    g = None
    gdal.Unlink("/vsimem/x.tif")
    out.append(row)
print(json.dumps(out))
