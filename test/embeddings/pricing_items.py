# Quantized latents for test/embeddings/pricing.test.ts, written by Debian's xarray + zarr 2:
#   python pricing_items.py <store> <spec.json>
# i8:  int8 (520, 512, 32) with nodata -128: 8.125 MiB stored, 32.5 MiB as physical float32.
# i16: int16 (260, 256, 32), CF packed by xarray (scale_factor, _FillValue).
import json
import sys

import numpy as np
import xarray as xr
import zarr

store, spec = sys.argv[1], json.load(open(sys.argv[2]))
TILE, PERIOD, EPSG = spec["tile"], spec["period"], spec["epsg"]
E0, N0 = spec["easting"], spec["northing"]
rng = np.random.default_rng(41)


def path(family):
    return f"{store}/embeddings/{family}/rf/v1.0/base/map/{PERIOD}/{TILE}"


def transform(res):
    return [res, 0.0, E0 + 1000.0, 0.0, -res, N0 + 99_000.0]


# int8 through zarr itself: (y, x, feature), nodata declared in the attributes.
ny, nx, nf = 520, 512, 32
g = zarr.open_group(path("i8"), mode="w")
g.attrs.update({"crs": f"EPSG:{EPSG}", "transform": transform(10.0)})
a = g.create_dataset("latent", shape=(ny, nx, nf), chunks=(65, 128, nf), dtype="int8")
a.attrs["_ARRAY_DIMENSIONS"] = ["y", "x", "feature"]
a.attrs["nodata"] = -128
a[...] = rng.integers(-128, 128, (ny, nx, nf), dtype="int8")

# int16 by xarray's CF packing, with x/y coordinates.
ny, nx, nf = 260, 256, 32
t = transform(10.0)
xs = t[2] + (np.arange(nx) + 0.5) * t[0]
ys = t[5] - (np.arange(ny) + 0.5) * t[0]
v = rng.uniform(-1, 1, (ny, nx, nf)).astype("float32")
ds = xr.Dataset(
    {"latent": (("y", "x", "feature"), v)},
    coords={"y": ys, "x": xs},
    attrs={"crs": f"EPSG:{EPSG}", "transform": t},
)
ds.to_zarr(
    path("i16"),
    mode="w",
    consolidated=False,
    encoding={"latent": {"dtype": "int16", "scale_factor": 1 / 16000, "add_offset": 0.0, "_FillValue": -32768, "chunks": (65, 128, nf)}},
)
