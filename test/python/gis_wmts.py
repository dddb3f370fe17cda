"""OWSLib and GDAL's WMTS driver on gridcast's WMTS capabilities, checked against the XYZ tiles of
the same layer and time: OWSLib's layer list, Time dimension, tile matrix limits and legend, the
tile OWSLib fetches byte for byte against the tile route, and the pixels GDAL reads over one tile
against that tile decoded.

stdin: {"wmts": capabilities URL, "base": server URL, "layer": id, "tile": [z, x, y], "lead": hours}
stdout: JSON with what was found.
"""
import json
import sys
import urllib.request
import xml.etree.ElementTree as ET

import numpy as np
from osgeo import gdal
from owslib.wmts import WebMapTileService

gdal.UseExceptions()
# GDAL's WMTS driver caches tiles in ./gdalwmscache by default: nothing is to be left behind.
gdal.SetConfigOption("GDAL_ENABLE_WMS_CACHE", "NO")
gdal.SetConfigOption("GDAL_DEFAULT_WMS_CACHE_PATH", "/vsimem/gdalwmscache")
req = json.load(sys.stdin)
z, x, y = req["tile"]
wmts = WebMapTileService(req["wmts"])
layer = wmts.contents[req["layer"]]
# OWSLib 0.27 (Debian's) reads neither Dimension nor fills {Time}: the Time dimension is read
# from the document as the spec lays it out, and {Time} filled in as a client does.
NS = {"w": "http://www.opengis.net/wmts/1.0", "ows": "http://www.opengis.net/ows/1.1"}
with urllib.request.urlopen(req["wmts"]) as r:
    doc = ET.fromstring(r.read())
dim = None
for el in doc.iterfind("w:Contents/w:Layer", NS):
    if el.findtext("ows:Identifier", namespaces=NS) == req["layer"]:
        d = el.find("w:Dimension", NS)
        dim = {"values": [v.text for v in d.iterfind("w:Value", NS)], "default": d.findtext("w:Default", namespaces=NS)}
limits = layer.tilematrixsetlinks["GoogleMapsCompatible"].tilematrixlimits
matrices = wmts.tilematrixsets["GoogleMapsCompatible"].tilematrix
out = {
    "layers": sorted(wmts.contents),
    "times": dim["values"] if dim else [],
    "default_time": dim["default"] if dim else None,
    "matrices": sorted(int(k) for k in matrices),
    "limits": {k: [v.mintilerow, v.maxtilerow, v.mintilecol, v.maxtilecol] for k, v in limits.items()},
    "legend": [s.get("legend") for s in layer.styles.values()],
    "template": layer.resourceURLs[0]["template"],
}
time = out["times"][1]
url = wmts.buildTileResource(layer=req["layer"], tilematrixset="GoogleMapsCompatible", tilematrix=str(z), row=y, column=x)
with urllib.request.urlopen(url.replace("{Time}", time)) as r:
    owslib_tile = r.read()
route = f"{req['base']}/api/forecast/tile/{z}/{x}/{y}?layer={req['layer']}&lead={req['lead']}"
with urllib.request.urlopen(route) as r:
    xyz_tile = r.read()
out["owslib_tile_equal"] = owslib_tile == xyz_tile

# GDAL's WMTS driver: the layer at zoom z (its default time), the pixels over tile (x, y).
ds = gdal.Open(f"WMTS:{req['wmts']},layer={req['layer']},tilematrix={z}")
gt = ds.GetGeoTransform()
half = 20037508.3427892
size = 2 * half / 2**z
col = round((-half + x * size - gt[0]) / gt[1])
row = round((half - y * size - gt[3]) / gt[5])
# GDAL's raster spans the layer's bounding box, not whole tiles: compare where they overlap.
c0, r0 = max(col, 0), max(row, 0)
c1, r1 = min(col + 256, ds.RasterXSize), min(row + 256, ds.RasterYSize)
got = ds.ReadAsArray(c0, r0, c1 - c0, r1 - r0)
out["gdal"] = {"bands": ds.RasterCount, "size": [ds.RasterXSize, ds.RasterYSize], "srs": ds.GetSpatialRef().GetAuthorityCode(None), "overlap": [c1 - c0, r1 - r0]}
default_tile = urllib.request.urlopen(f"{req['base']}/api/forecast/tile/{z}/{x}/{y}?layer={req['layer']}").read()
gdal.FileFromMemBuffer("/vsimem/d.png", default_tile)
png = gdal.Open("/vsimem/d.png")
if png.RasterCount == 1 and png.GetRasterBand(1).GetColorTable() is not None:
    # A paletted PNG: GDAL's WMTS driver hands out its colours as RGBA.
    png = gdal.Translate("/vsimem/d.tif", png, rgbExpand="rgba")
want_default = png.ReadAsArray()[:, r0 - row : r1 - row, c0 - col : c1 - col]
out["gdal_pixels_equal"] = bool(got.shape == want_default.shape and (got == want_default).all())
out["gdal_opaque_pixels"] = int((got[3] > 0).sum()) if got.shape[0] == 4 else None

# A global layer whole at a low zoom, as `gdal_translate WMTS:…` copies it: GDAL turns the layer's
# bounding box into tile rows, so a box reaching ±90° asks for rows outside the matrix.
if "global_layer" in req:
    gz = req["global_zoom"]
    n = 2**gz
    tr = gdal.Translate("/vsimem/global.tif", f"WMTS:{req['wmts']},layer={req['global_layer']},tilematrix={gz}")
    got = tr.ReadAsArray()
    mosaic = np.zeros((4, 256 * n, 256 * n), dtype=np.uint8)
    for ty in range(n):
        for tx in range(n):
            url = f"{req['base']}/api/forecast/tile/{gz}/{tx}/{ty}?layer={req['global_layer']}"
            gdal.FileFromMemBuffer("/vsimem/t.png", urllib.request.urlopen(url).read())
            t = gdal.Open("/vsimem/t.png")
            if t.RasterCount == 1 and t.GetRasterBand(1).GetColorTable() is not None:
                t = gdal.Translate("/vsimem/t.tif", t, rgbExpand="rgba")
            a = t.ReadAsArray()
            if a.shape[0] == 3:
                a = np.concatenate([a, np.full((1, 256, 256), 255, np.uint8)])
            mosaic[:, ty * 256 : (ty + 1) * 256, tx * 256 : (tx + 1) * 256] = a
    out["global"] = {
        "size": [tr.RasterXSize, tr.RasterYSize],
        "geotransform": list(tr.GetGeoTransform()),
        "pixels_equal": bool(got.shape == mosaic.shape and (got == mosaic).all()),
        "opaque": int((got[3] > 0).sum()) if got.shape[0] == 4 else None,
    }
print(json.dumps(out))
