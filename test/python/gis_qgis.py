"""QGIS 3 headless (QT_QPA_PLATFORM=offscreen) renders a WMTS layer from gridcast's capabilities
and an XYZ layer from the absolute `tiles` URL of a TileJSON, each over exactly one tile of the
pyramid at its native resolution; both images are compared with the tile itself.

Also opens /data groups as GIS users add them to QGIS (GDAL's Zarr driver over /vsicurl/, with the
API key in GDAL_HTTP_HEADERS): the layer's CRS, its extent, and its values read through the QGIS
provider, checked against xarray on the same URL by coordinate.

stdin: {"wmts": capabilities URL, "layer": id, "time": valid time, "tilejson": URL, "tile": [z, x, y], "png": tile URL
        of that time, "png_first": tile URL of the first time step,
        "data": [{"id", "base", "key", "var", "x", "y"}]}
stdout: JSON: validity of each layer, its CRS, and how many pixels differ from the tile; per /data group
its validity, authid, proj4, extent, xarray's extent (outer cell edges) and how many values were compared.
"""
import json
import os
import sys
import urllib.parse
import urllib.request

import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from qgis.core import (  # noqa: E402
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsMapRendererParallelJob,
    QgsMapSettings,
    QgsRasterLayer,
    QgsRectangle,
)
from qgis.PyQt.QtCore import QSize  # noqa: E402
from qgis.PyQt.QtGui import QColor, QImage  # noqa: E402

req = json.load(sys.stdin)
app = QgsApplication([], False)
app.initQgis()
z, x, y = req["tile"]
half = 20037508.342789244
size = 2 * half / 2**z
extent = QgsRectangle(-half + x * size, half - (y + 1) * size, -half + (x + 1) * size, half - y * size)


def render(layer):
    ms = QgsMapSettings()
    ms.setLayers([layer])
    ms.setDestinationCrs(QgsCoordinateReferenceSystem("EPSG:3857"))
    ms.setExtent(extent)
    ms.setOutputSize(QSize(256, 256))
    ms.setBackgroundColor(QColor(0, 0, 0, 0))
    job = QgsMapRendererParallelJob(ms)
    job.start()
    job.waitForFinished()
    return job.renderedImage().convertToFormat(QImage.Format_ARGB32)


def pixels(img):
    return [img.pixel(i, j) for j in range(img.height()) for i in range(img.width())]


def tile_pixels(url):
    img = QImage()
    img.loadFromData(urllib.request.urlopen(url).read())
    return pixels(img.convertToFormat(QImage.Format_ARGB32))


wanted = {"wmts": tile_pixels(req["png"]), "xyz": tile_pixels(req["png"]), "first": tile_pixels(req["png_first"])}


def wmts_layer(dimensions):
    uri = {
        "contextualWMSLegend": "0",
        "crs": "EPSG:3857",
        "dpiMode": "7",
        "format": "image/png",
        "layers": req["layer"],
        "styles": "default",
        "tileMatrixSet": "GoogleMapsCompatible",
        "url": req["wmts"],
    }
    uri["tileDimensions"] = dimensions
    return QgsRasterLayer(urllib.parse.urlencode(uri), "wmts", "wms")


# QGIS 3.22 fills {Time} only from the layer's tileDimensions, not from the Dimension's Default.
wmts = wmts_layer(f"Time={req['time']}")
tiles = json.loads(urllib.request.urlopen(req["tilejson"]).read())["tiles"][0]
xyz = QgsRasterLayer(f"type=xyz&url={urllib.parse.quote(tiles, safe=':/')}&zmin=0&zmax={z}", "xyz", "wms")
# The two time steps' tiles differ, or rendering the asked one would show nothing about Time.
out = {"time_steps_differ": sum(1 for a, b in zip(wanted["wmts"], wanted["first"]) if a != b)}
for name, layer in (("wmts", wmts), ("xyz", xyz)):
    want = wanted[name]
    valid = layer.isValid()
    entry = {"valid": valid, "crs": layer.crs().authid() if valid else "", "error": "" if valid else str(layer.error().message())}
    if layer.isValid():
        got = pixels(render(layer))
        entry["differ"] = sum(1 for a, b in zip(got, want) if a != b)
        entry["opaque"] = sum(1 for a in got if (a >> 24) & 0xFF)
    out[name] = entry


def data_layer(d):
    """One /data group as a QGIS raster layer, checked against xarray (which reads no CRS attribute)."""
    import xarray as xr
    from osgeo import gdal

    url = f"{d['base']}/data/datasets/{d['id']}/zarr"
    # QGIS's GDAL provider runs in this process: GDAL's options reach its /vsicurl/ requests.
    gdal.SetConfigOption("GDAL_HTTP_HEADERS", f"X-API-Key: {d['key']}")
    gdal.SetConfigOption("GDAL_DISABLE_READDIR_ON_OPEN", "EMPTY_DIR")
    layer = QgsRasterLayer(f'ZARR:"/vsicurl/{url}":/{d["var"]}:0:0', d["id"], "gdal")
    entry = {"valid": layer.isValid(), "error": "" if layer.isValid() else str(layer.error().message())}
    if not layer.isValid():
        return entry
    crs = layer.crs()
    e = layer.extent()
    entry.update(
        crs_valid=crs.isValid(),
        authid=crs.authid(),
        proj4=crs.toProj(),
        extent=[e.xMinimum(), e.yMinimum(), e.xMaximum(), e.yMaximum()],
    )
    field = xr.open_zarr(url, storage_options={"headers": {"X-API-Key": d["key"]}}, consolidated=True)[d["var"]]
    field = field.isel({k: 0 for k in field.dims if k not in (d["x"], d["y"])})
    xs, ys = field[d["x"]].values.astype(float), field[d["y"]].values.astype(float)
    dx, dy = abs(xs[1] - xs[0]), abs(ys[1] - ys[0])
    entry["xarray_extent"] = [xs.min() - dx / 2, ys.min() - dy / 2, xs.max() + dx / 2, ys.max() + dy / 2]
    # Every value through the provider, placed where QGIS says it is, against xarray by coordinate.
    w, h = layer.width(), layer.height()
    block = layer.dataProvider().block(1, e, w, h)
    got = np.array([[block.value(j, i) if not block.isNoData(j, i) else np.nan for i in range(w)] for j in range(h)])
    cx = e.xMinimum() + (np.arange(w) + 0.5) * e.width() / w
    cy = e.yMaximum() - (np.arange(h) + 0.5) * e.height() / h
    truth = field.sel({d["x"]: cx, d["y"]: cy}, method="nearest", tolerance=1e-6 * dx).transpose(d["y"], d["x"]).values
    got32, want32 = got.astype(np.float32), truth.astype(np.float32)
    same = (got32 == want32) | (np.isnan(got32) & np.isnan(want32))
    entry["compared"] = int(same.size) if np.isfinite(want32).any() else 0
    entry["differ"] = int((~same).sum())
    return entry


out["data"] = {d["id"]: data_layer(d) for d in req.get("data", [])}
print(json.dumps(out))
app.exitQgis()
