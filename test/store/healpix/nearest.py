# The nearest HEALPix pixel centre to each point, by numpy brute force over every pixel: the centres
# from Górski et al. (2005) written out here for both orders (nested from the test stores' own
# pix2ang_nest, ring from the ring formulas), the distance by great circle.
#   python nearest.py   reads {"nside", "order", "points": [[lat, lon], ...]} on stdin, prints for
#                       each point every pixel tied for nearest (within 1e-12 rad) and the distance
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "forecast", "cells"))
from stores import healpix_nested  # noqa: E402


def healpix_ring(nside):
    """Centres of every pixel of a ring-ordered HEALPix grid (pix2ang_ring)."""
    npix = 12 * nside * nside
    ncap = 2 * nside * (nside - 1)
    p = np.arange(npix)
    z = np.empty(npix)
    phi = np.empty(npix)
    north = p < ncap
    south = p >= npix - ncap
    mid = ~north & ~south
    pn = p[north]
    i = np.floor((1 + np.sqrt(1 + 2 * pn)) / 2).astype(np.int64)
    j = pn + 1 - 2 * i * (i - 1)
    z[north] = 1 - i**2 / (3 * nside**2)
    phi[north] = (j - 0.5) * np.pi / (2 * i)
    q = p[mid] - ncap
    i = q // (4 * nside) + nside
    j = q % (4 * nside) + 1
    s = np.where((i + nside) % 2 == 1, 1.0, 0.5)
    z[mid] = (2 * nside - i) * 2 / (3 * nside)
    phi[mid] = (j - s) * np.pi / (2 * nside)
    qs = npix - p[south]
    i = np.floor((1 + np.sqrt(2 * qs - 1)) / 2).astype(np.int64)
    j = 4 * i + 1 - (qs - 2 * i * (i - 1))
    z[south] = -1 + i**2 / (3 * nside**2)
    phi[south] = (j - 0.5) * np.pi / (2 * i)
    return np.degrees(np.arcsin(z)), np.degrees(phi)


req = json.load(sys.stdin)
lat, lon = healpix_nested(req["nside"]) if req["order"] == "nested" else healpix_ring(req["nside"])
f, l = np.radians(lat), np.radians(lon)
xyz = np.stack([np.cos(f) * np.cos(l), np.cos(f) * np.sin(l), np.sin(f)], axis=1)
out = []
for plat, plon in req["points"]:
    a, b = np.radians(plat), np.radians(plon)
    q = np.array([np.cos(a) * np.cos(b), np.cos(a) * np.sin(b), np.sin(a)])
    d = np.arccos(np.clip(xyz @ q, -1, 1))
    best = d.min()
    out.append({"ties": np.nonzero(d <= best + 1e-12)[0].tolist(), "dist": float(best)})
print(json.dumps(out))
