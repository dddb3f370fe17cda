# Peer for bench/npy-zarr.ts. With no command: writes the bench store (Zarr v2 by Debian's
# xarray + zarr 2: one latent item compressed with Zstandard, one with zarr's default Blosc).
# Otherwise it serves the Node bench one command a line, so both sides' rounds interleave:
#   "read <item dir>"  zarr-python opens the latent afresh (it keeps no decoded chunks) and reads
#                      the bench's slice into numpy; answers {seconds, bytes, cpu} (cpu: the
#                      process's user + system seconds over the read, all its threads)
#   "read <item URL>"  the same over HTTP (fsspec + aiohttp) from a static server of the store
# Each answer also gives the reader's own profile (peer_phases.py): seconds fetching (metadata
# and chunks, from the store) and decoding; the rest is opening, indexing and copying.
# usage: npy_zarr_peer.py write ROOT TILE EASTING NORTHING EPSG | npy_zarr_peer.py serve Y_STOP
import json
import resource
import sys
import time

import numpy as np
import zarr

SHAPE = (512, 512, 32)
CHUNKS = (128, 128, 32)

if sys.argv[1] == "write":
    import numcodecs
    import xarray as xr

    root, tile, e0, n0, epsg = sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
    zarr.open_group(root, mode="a")
    res = 100_000 / SHAPE[1]
    xs = e0 + (np.arange(SHAPE[1]) + 0.5) * res
    ys = n0 + 100_000 - (np.arange(SHAPE[0]) + 0.5) * res
    rng = np.random.default_rng(1)
    # Smooth fields plus noise, rounded to 10 bits of mantissa: compressible as latents are.
    base = np.sin(np.arange(SHAPE[0])[:, None, None] / 17.0) * np.cos(np.arange(SHAPE[1])[None, :, None] / 23.0)
    v = (base + 0.1 * rng.standard_normal(SHAPE)).astype("float32")
    v = (v.view("uint32") & np.uint32(0xFFFFE000)).view("float32")
    for family, compressor in [("zstd", numcodecs.Zstd(level=3)), ("blosc", numcodecs.Blosc())]:
        ds = xr.Dataset({"latent": (("y", "x", "feature"), v)}, coords={"y": ys, "x": xs})
        ds.attrs.update({"crs": f"EPSG:{epsg}", "transform": [res, 0, e0, 0, -res, n0 + 100_000]})
        path = f"{root}/embeddings/{family}/rf/v1.0/base/map/2024_01_01_2024_12_31/{tile}"
        ds.to_zarr(path, mode="w", encoding={"latent": {"compressor": compressor, "chunks": CHUNKS}})
    sys.exit(0)

from peer_phases import PHASES  # noqa: E402  (times the reads below; installed once imported)

y_stop = int(sys.argv[2])
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    cmd = line.split()
    PHASES.take()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    a = zarr.open_array(f"{cmd[1]}/latent", mode="r")
    out = a[0:y_stop, :, :]
    seconds = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    print(json.dumps({"seconds": seconds, "bytes": out.nbytes, "cpu": cpu, **PHASES.take()}), flush=True)
