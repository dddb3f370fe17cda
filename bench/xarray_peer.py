# Peer for bench/xarray.ts: xarray + zarr-python reading the same boxes and points from the same
# directory store. It runs beside the Node bench and takes one command a line, so both sides'
# rounds interleave and share whatever load the machine has:
#   "boxes"  one cold round: a fresh open_zarr (zarr keeps no decoded-chunk cache), every box
#   "boxes URL"  the same round with the store read over HTTP from URL (fsspec + aiohttp, as a
#            remote analyst reads a store a static server hands out; the session and its
#            connections are kept between rounds, as in a running notebook)
#   "point I" one point series read (one chunk decoded)
# and answers with one JSON line {seconds, bytes, fetch, decode}: fetch and decode are the
# reader's own profile (peer_phases.py), its seconds in the store's fetches and in the codec.
# usage: xarray_peer.py ROOT BOXES_JSON POINTS_JSON
import json
import sys
import time

import xarray as xr
from peer_phases import PHASES

root, boxes, points = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])


def open_t2m(where=root):
    return xr.open_zarr(where, group="forecast/global", consolidated=True)["t2m"].isel(time=0)


t2m = open_t2m()
lat, lon = t2m["lat"].values, t2m["lon"].values
index = [(int(abs(lat - p["lat"]).argmin()), int(abs(lon - (p["lon"] % 360)).argmin())) for p in points]
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    cmd = line.split()
    PHASES.take()
    t0 = time.perf_counter()
    nbytes = 0
    if cmd[0] == "boxes":
        t = open_t2m(*cmd[1:2])
        for b in boxes:
            lon0, lon1 = b["lon_min"] % 360, b["lon_max"] % 360 or 360
            nbytes += t.sel(lat=slice(b["lat_max"], b["lat_min"]), lon=slice(lon0, lon1)).values.nbytes
    elif cmd[0] == "point":
        i, j = index[int(cmd[1])]
        nbytes += t2m.isel(lat=i, lon=j).values.nbytes
    print(json.dumps({"seconds": time.perf_counter() - t0, "bytes": nbytes, **PHASES.take()}), flush=True)
