# The unstructured-grid test stores, written with xarray as the producers lay them out, and the
# reference answers numpy gives for them (nearest cell by great-circle distance, by brute force).
#   python stores.py write DIR   writes DIR/cells.zarr (forecast/icon, forecast/octa, forecast/healpix),
#                                DIR/anemoi.zarr (an anemoi-datasets dataset at the root) and
#                                DIR/icon-d2.zarr (a regional ICON patch at the root)
#   python stores.py ref         reads a list of {"store", "group", "var", "points"|"grid"} as JSON on
#                                stdin, prints the answers (with every cell tied for nearest)
import json
import sys

import numpy as np

INIT = np.array(["2025-06-01T00:00"], dtype="datetime64[ns]")
LEADS = np.array([0, 6, 12], dtype="timedelta64[h]").astype("timedelta64[ns]")


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def icosahedral_centres(k):
    """Centres of the triangles of an icosahedron whose faces are cut into k x k triangles."""
    p = (1 + 5**0.5) / 2
    v = unit(np.array([[-1, p, 0], [1, p, 0], [-1, -p, 0], [1, -p, 0], [0, -1, p], [0, 1, p],
                       [0, -1, -p], [0, 1, -p], [p, 0, -1], [p, 0, 1], [-p, 0, -1], [-p, 0, 1]], float))
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
             (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5),
             (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    up = (i + j < k).ravel()
    down = (i + j < k - 1).ravel()
    i, j = i.ravel()[:, None], j.ravel()[:, None]
    out = []
    for a, b, c in faces:
        A, B, C = v[a], v[b], v[c]
        P = lambda i, j: unit(A + (B - A) * i / k + (C - A) * j / k)
        out.append(unit(P(i, j) + P(i + 1, j) + P(i, j + 1))[up])
        out.append(unit(P(i + 1, j) + P(i + 1, j + 1) + P(i, j + 1))[down])
    xyz = np.concatenate(out)
    return np.degrees(np.arcsin(xyz[:, 2])), np.degrees(np.arctan2(xyz[:, 1], xyz[:, 0]))


def octahedral(n):
    """An O-n grid: 2n Gaussian latitudes, row i from either pole holding 4i + 16 points from 0°E."""
    x, _ = np.polynomial.legendre.leggauss(2 * n)
    rows = np.degrees(np.arcsin(-x))  # north to south
    lat, lon = [], []
    for r, phi in enumerate(rows):
        i = r + 1 if r < n else 2 * n - r
        m = 4 * i + 16
        lat.append(np.full(m, phi))
        lon.append(np.arange(m) * 360.0 / m)
    return np.concatenate(lat), np.concatenate(lon)


def healpix_nested(nside):
    """Centres of every pixel of a nested HEALPix grid (Górski et al. 2005, pix2ang_nest)."""
    p = np.arange(12 * nside * nside)
    face, q = p // (nside * nside), p % (nside * nside)

    def compress(v):
        out = np.zeros_like(v)
        for b in range(32):
            out |= ((v >> (2 * b)) & 1) << b
        return out

    ix, iy = compress(q), compress(q >> 1)
    jr = np.array([2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4])[face] * nside - ix - iy - 1
    npface = nside * nside
    nr = np.where(jr < nside, jr, np.where(jr > 3 * nside, 4 * nside - jr, nside))
    z = np.where(jr < nside, 1 - nr**2 / (3 * npface),
                 np.where(jr > 3 * nside, nr**2 / (3 * npface) - 1, (2 * nside - jr) * 2 / (3 * nside)))
    kshift = np.where((jr >= nside) & (jr <= 3 * nside), (jr - nside) & 1, 0)
    jp = (np.array([1, 3, 5, 7, 0, 2, 4, 6, 1, 3, 5, 7])[face] * nr + ix - iy + 1 + kshift) / 2
    jp = np.where(jp > 4 * nside, jp - 4 * nside, np.where(jp < 1, jp + 4 * nside, jp))
    phi = (jp - (kshift + 1) * 0.5) * (np.pi / 2 / nr)
    lon = np.degrees(phi)
    return np.degrees(np.arcsin(z)), np.where(lon >= 180, lon - 360, lon)


def field(lat, lon, seed, base, amp):
    rng = np.random.default_rng(seed)
    f = base + amp * np.cos(np.radians(lat)) * np.sin(np.radians(lon) * 2) + rng.normal(0, 0.3, lat.shape)
    return (f[None, None, :] + 2.0 * np.arange(len(LEADS))[None, :, None]).astype("float32")


def write(out):
    import xarray as xr

    # forecast/icon: ICON's layout (CDI), clat/clon in radians on ncells.
    lat, lon = icosahedral_centres(12)
    cdi = {"CDI_grid_type": "unstructured", "number_of_grid_in_reference": 1}
    ds = xr.Dataset(
        {"t_2m": (("time", "step", "ncells"), field(lat, lon, 1, 285, 20), {"units": "K", **cdi}),
         "pmsl": (("time", "step", "ncells"), field(lat, lon, 2, 101000, 900), {"units": "Pa", **cdi})},
        coords={"time": INIT, "step": LEADS,
                "clat": ("ncells", np.radians(lat), {"units": "radian", "standard_name": "latitude"}),
                "clon": ("ncells", np.radians(lon), {"units": "radian", "standard_name": "longitude"})},
        attrs={"title": "ICON-like icosahedral test grid"})
    ds.to_zarr(f"{out}/cells.zarr", group="forecast/icon", mode="w",
               encoding={v: {"chunks": (1, 2, 1000)} for v in ds.data_vars})
    # forecast/octa: an octahedral reduced Gaussian O32 as cfgrib writes it (values axis, 0..360).
    lat, lon = octahedral(32)
    grib = {"GRIB_gridType": "reduced_gg", "GRIB_N": 32, "GRIB_isOctahedral": 1}
    ds = xr.Dataset(
        {"t2m": (("time", "step", "values"), field(lat, lon, 3, 280, 25),
                 {"units": "K", "GRIB_shortName": "2t", **grib}),
         "msl": (("time", "step", "values"), field(lat, lon, 4, 101300, 800), {"units": "Pa", **grib})},
        coords={"time": INIT, "step": LEADS,
                "latitude": ("values", lat, {"units": "degrees_north", "standard_name": "latitude"}),
                "longitude": ("values", lon, {"units": "degrees_east", "standard_name": "longitude"})})
    ds.to_zarr(f"{out}/cells.zarr", group="forecast/octa", mode="a",
               encoding={v: {"chunks": (1, 3, 2000)} for v in ds.data_vars})
    # forecast/healpix: nested nside 16, centres not stored, only the grid mapping.
    lat, lon = healpix_nested(16)
    ds = xr.Dataset(
        {"t2m": (("time", "step", "cell"), field(lat, lon, 5, 283, 22), {"units": "K", "grid_mapping": "crs"})},
        coords={"time": INIT, "step": LEADS,
                "crs": ((), 0, {"grid_mapping_name": "healpix", "healpix_nside": 16, "healpix_order": "nested"})})
    ds.to_zarr(f"{out}/cells.zarr", group="forecast/healpix", mode="a",
               encoding={"t2m": {"chunks": (1, 1, 1024)}})
    # anemoi.zarr: data(dates, variables, ensemble, cells), the names in the `variables` attribute.
    lat, lon = octahedral(24)
    dates = np.array(["2025-06-01T00", "2025-06-01T06", "2025-06-01T12"], dtype="datetime64[s]")
    names = ["10u", "10v", "2t", "msl"]
    data = np.stack([field(lat, lon, 10 + k, b, a)[0] for k, (b, a) in
                     enumerate([(2, 6), (-1, 5), (281, 24), (101200, 700)])], axis=1)[:, :, None, :]
    ds = xr.Dataset(
        {"data": (("dates", "variables", "ensemble", "cells"), data)},
        coords={"dates": dates, "latitudes": ("cells", lat), "longitudes": ("cells", lon)},
        attrs={"variables": names, "frequency": "6h", "resolution": "o24", "format_version": "0.30"})
    ds.to_zarr(f"{out}/anemoi.zarr", mode="w", encoding={"data": {"chunks": (1, 4, 1, 800)}})
    # icon-d2.zarr: the cells of a finer icosahedral grid over central Europe only (a regional patch).
    lat, lon = icosahedral_centres(64)
    keep = (lat > 44) & (lat < 56) & (lon > 0) & (lon < 17)
    lat, lon = lat[keep], lon[keep]
    ds = xr.Dataset(
        {"t_2m": (("time", "step", "ncells"), field(lat, lon, 6, 288, 10), {"units": "K", **cdi})},
        coords={"time": INIT, "step": LEADS,
                "clat": ("ncells", np.radians(lat), {"units": "radian", "standard_name": "latitude"}),
                "clon": ("ncells", np.radians(lon), {"units": "radian", "standard_name": "longitude"})})
    ds.to_zarr(f"{out}/icon-d2.zarr", mode="w", encoding={"t_2m": {"chunks": (1, 3, 100)}})


def centres(ds):
    if "clat" in ds:
        return np.degrees(ds.clat.values), np.degrees(ds.clon.values)
    if "latitudes" in ds:
        return ds.latitudes.values, ds.longitudes.values
    if "latitude" in ds:
        return ds.latitude.values, ds.longitude.values
    return healpix_nested(int(ds.crs.attrs["healpix_nside"]))


def nearest(lat, lon, plat, plon):
    """The nearest cell, its distance (degrees), and every cell as near to within 1e-9° (ties)."""
    f, l, pf, pl = map(np.radians, (lat, lon, plat, plon))
    d = np.degrees(2 * np.arcsin(np.sqrt(np.sin((f - pf) / 2) ** 2 + np.cos(f) * np.cos(pf) * np.sin((l - pl) / 2) ** 2)))
    i = int(np.argmin(d))
    return i, float(d[i]), np.nonzero(d <= d[i] + 1e-9)[0]


def values(ds, name):
    if "data" in ds:
        k = list(ds.attrs["variables"]).index(name)
        return ds.data.isel(variables=k, ensemble=0).values  # (dates, cells)
    return ds[name].isel(time=0).values  # (step, cells)


def data_view(req):
    """What xarray reads from gridcast's /data view of a group: dims, cell centres, the crs, one lead."""
    import xarray as xr

    ds = xr.open_zarr(req["url"], consolidated=False, storage_options={"headers": req["headers"]})
    v = ds[req["var"]]
    return {"dims": list(v.dims), "lat": ds["latitude"].values.tolist(), "lon": ds["longitude"].values.tolist(),
            "crs": {k: (v2.item() if hasattr(v2, "item") else v2) for k, v2 in ds["crs"].attrs.items()},
            "grid_mapping": v.attrs.get("grid_mapping") or v.encoding.get("grid_mapping"),
            "values": v.isel({v.dims[0]: -1}).values.astype(float).ravel().tolist()[: req.get("limit", 10**9)]}


def ref(req, opened):
    import xarray as xr

    if "url" in req:
        return data_view(req)
    key = (req["store"], req.get("group"))
    if key not in opened:
        opened[key] = xr.open_zarr(req["store"], group=req.get("group"))
    ds = opened[key]
    lat, lon = centres(ds)
    vals = values(ds, req["var"])
    out = {"n": int(lat.size)}
    if req.get("centres"):
        out["lat"] = lat.astype(float).tolist()
        out["lon"] = (((lon + 180) % 360) - 180).astype(float).tolist()
        out["values"] = vals.astype(float).ravel().tolist()
    if "points" in req:
        out["points"] = []
        for plat, plon in req["points"]:
            i, dist, ties = nearest(lat, lon, plat, plon)
            out["points"].append({"cell": i, "lat": float(lat[i]), "lon": float(((lon[i] + 180) % 360) - 180),
                                  "dist": dist, "values": vals[:, i].astype(float).tolist(),
                                  "ties": [{"lat": float(lat[t]), "lon": float(((lon[t] + 180) % 360) - 180),
                                            "values": vals[:, t].astype(float).tolist()} for t in ties]})
    if "grid" in req:
        # Nodes of a regular grid filled from their nearest cell: per lead, lat, lon, every tied value.
        glat, glon = req["grid"]
        cells = [[nearest(lat, lon, a, b)[2] for b in glon] for a in glat]
        out["grid"] = [[[vals[k, c].astype(float).tolist() for c in row] for row in cells] for k in range(vals.shape[0])]
    return out


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        opened = {}
        print(json.dumps([ref(r, opened) for r in json.load(sys.stdin)]))
