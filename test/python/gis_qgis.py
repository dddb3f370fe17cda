"""QGIS 3 headless (QT_QPA_PLATFORM=offscreen) renders a WMTS layer from gridcast's capabilities
and an XYZ layer from the absolute `tiles` URL of a TileJSON, each over exactly one tile of the
pyramid at its native resolution; both images are compared with the tile itself.

stdin: {"wmts": capabilities URL, "layer": id, "time": valid time, "tilejson": URL, "tile": [z, x, y], "png": tile URL}
stdout: JSON: validity of each layer, its CRS, and how many pixels differ from the tile.
"""
import json
import os
import sys
import urllib.parse
import urllib.request

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


want = QImage()
want.loadFromData(urllib.request.urlopen(req["png"]).read())
want = pixels(want.convertToFormat(QImage.Format_ARGB32))

wmts_uri = urllib.parse.urlencode(
    {
        "contextualWMSLegend": "0",
        "crs": "EPSG:3857",
        "dpiMode": "7",
        "format": "image/png",
        "layers": req["layer"],
        "styles": "default",
        "tileMatrixSet": "GoogleMapsCompatible",
        "tileDimensions": f"Time={req['time']}",
        "url": req["wmts"],
    }
)
wmts = QgsRasterLayer(wmts_uri, "wmts", "wms")
tiles = json.loads(urllib.request.urlopen(req["tilejson"]).read())["tiles"][0]
xyz = QgsRasterLayer(f"type=xyz&url={urllib.parse.quote(tiles, safe=':/')}&zmin=0&zmax={z}", "xyz", "wms")
out = {}
for name, layer in (("wmts", wmts), ("xyz", xyz)):
    valid = layer.isValid()
    entry = {"valid": valid, "crs": layer.crs().authid() if valid else "", "error": "" if valid else str(layer.error().message())}
    if layer.isValid():
        got = pixels(render(layer))
        entry["differ"] = sum(1 for a, b in zip(got, want) if a != b)
        entry["opaque"] = sum(1 for a in got if (a >> 24) & 0xFF)
    out[name] = entry
print(json.dumps(out))
app.exitQgis()
