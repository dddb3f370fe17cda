# What a producer's own reader makes of an item written by producers.py: numpy (zarr-python 3,
# which reads v2 and v3) with the producer's de-quantization, or xarray's decoding where xarray is
# the reference (CF packing, the Zarr fill_value rule), as (y, x, feature) float32 on stdout (.npy).
#   python producers_truth.py <item group directory> <family> [raw]
import sys

import numpy as np
import xarray as xr
import zarr

p, family = sys.argv[1], sys.argv[2]
raw = len(sys.argv) > 3 and sys.argv[3] == "raw"
g = zarr.open_group(p, mode="r")
if raw:
    name = {"aef": "aef", "tessera": "embeddings"}.get(family, "latent")
    out = g[name][...]
elif family in ("rioxr",):
    out = np.transpose(g["embedding"][...], (1, 2, 0))
elif family == "aef":
    q = g["aef"][...].astype(np.float64)
    out = np.where(q == -128, np.nan, np.sign(q) * (np.abs(q) / 127.5) ** 2)
elif family == "tessera":
    out = g["embeddings"][...].astype(np.float32) * g["scales"][...][..., None]
elif family == "ftscale":
    out = g["latent"][...].astype(np.float32) * g["feature_scale"][...]
elif family in ("cfpack", "relu2", "relu3"):
    out = xr.open_zarr(p, consolidated=False)["latent"].values
elif family == "relu2nd":
    q = g["latent"][...].astype(np.float32)
    out = np.where(q == -128, np.nan, q)
elif family in ("vec1d", "vec2d"):
    out = g["latent"][...].reshape(1, 1, -1)
elif family == "vecfirst":
    out = np.transpose(g["latent"][...], (1, 2, 0))
else:
    out = g["latent"][...]
if not raw:
    out = out.astype(np.float32)
np.save(sys.stdout.buffer, np.ascontiguousarray(out), allow_pickle=False)
