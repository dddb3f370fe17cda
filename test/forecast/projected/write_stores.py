# Writes the projected-grid test stores with the real writers and prints the reference answers
# pyproj + xarray give for them. Run twice: with the zarr 3 venv ("lcc" and "stere": Zarr v3
# stores as dynamical.org's HRRR is laid out, plus the reference math) and with Debian's python
# ("rotated": a Zarr v2 store, COSMO/ICON-D2 style, from coordinates the venv computed).
import json
import sys

import numpy as np

mode, out = sys.argv[1], sys.argv[2]
INIT = np.array(["2025-06-01T00:00"], dtype="datetime64[ns]")
LEADS = np.array([0, 3, 6], dtype="timedelta64[h]").astype("timedelta64[ns]")


def fields(ny, nx, seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij")
    shape = (1, len(LEADS), ny, nx)
    t = 10 + 15 * np.sin(xx / 7.0) * np.cos(yy / 5.0) + rng.normal(0, 0.5, (ny, nx))
    t = np.broadcast_to(t, shape) + np.arange(len(LEADS))[None, :, None, None]
    return t.astype("float32")


if mode in ("lcc", "stere"):
    import xarray as xr
    from pyproj import CRS, Transformer

    if mode == "lcc":
        # HRRR's Lambert conformal on its sphere, a coarse 60 km version of its 3 km grid.
        crs = CRS.from_cf(dict(grid_mapping_name="lambert_conformal_conic", standard_parallel=38.5,
                               longitude_of_central_meridian=-97.5, latitude_of_projection_origin=38.5,
                               earth_radius=6371229.0))
        nx, ny, step = 48, 30, 60000.0
        x = -1440000.0 + step * np.arange(nx)
        y = -840000.0 + step * np.arange(ny)
    else:
        # NSIDC's north polar stereographic (EPSG:3413: WGS 84 ellipsoid, true scale at 70° N,
        # straight down from the pole along 45° W), at 150 km instead of 25 km. As NSIDC lays it
        # out, y runs from the top down (descending) and the grid holds the pole.
        crs = CRS.from_epsg(3413)
        nx, ny, step = 51, 75, 150000.0
        x = -3775000.0 + step * np.arange(nx)
        y = 5775000.0 - step * np.arange(ny)
    to_geo = Transformer.from_crs(crs, crs.geodetic_crs, always_xy=True)
    xx, yy = np.meshgrid(x, y)
    lon, lat = to_geo.transform(xx, yy)
    t = fields(ny, nx, 1)
    # Winds along the grid's axes: a steady 10 m/s up the grid's +y axis, plus a little +x.
    u = np.full(t.shape, 2.0, dtype="float32")
    v = np.full(t.shape, 10.0, dtype="float32")
    msl = (101000 + 800 * np.sin(xx / 5e5) * np.cos(yy / 4e5)).astype("float32")
    msl = np.broadcast_to(msl, t.shape).copy()
    cf = crs.to_cf()
    dims = ("init_time", "lead_time", "y", "x")
    wind = {"units": "m s-1", "GRIB_uvRelativeToGrid": 1, "grid_mapping": "spatial_ref"}
    ds = xr.Dataset(
        {
            "temperature_2m": (dims, t, {"units": "degree_Celsius", "grid_mapping": "spatial_ref"}),
            "wind_u_10m": (dims, u, wind),
            "wind_v_10m": (dims, v, wind),
            "pressure_reduced_to_mean_sea_level": (dims, msl, {"units": "Pa", "grid_mapping": "spatial_ref"}),
        },
        coords={
            "init_time": INIT,
            "lead_time": LEADS,
            "x": ("x", x, {"standard_name": "projection_x_coordinate", "units": "m", "axis": "X"}),
            "y": ("y", y, {"standard_name": "projection_y_coordinate", "units": "m", "axis": "Y"}),
            "latitude": (("y", "x"), lat, {"standard_name": "latitude", "units": "degrees_north"}),
            "longitude": (("y", "x"), lon, {"standard_name": "longitude", "units": "degrees_east"}),
            "spatial_ref": ((), 0, cf),
        },
        attrs={"dataset_id": f"test-{mode}", "name": f"projected test ({mode})"},
    )
    enc = {k: {"chunks": (1, 2, 16, 16)} for k in ds.data_vars}
    if len(sys.argv) > 3 and sys.argv[3] == "patch":
        # A regional patch over a global 2° lat/lon group in one store: forecast/global, forecast/hrrr.
        import zarr

        zarr.open_group(out, mode="w", zarr_format=3).create_group("forecast")
        glat = np.arange(-90, 90.1, 2.0)
        glon = np.arange(-180, 180, 2.0)
        gt = np.broadcast_to(np.full((len(glat), len(glon)), 250.0, "float32"), (1, len(LEADS), len(glat), len(glon)))
        g = xr.Dataset({"t2m": (("init_time", "lead_time", "latitude", "longitude"), gt.copy(), {"units": "K"})},
                       coords={"init_time": INIT, "lead_time": LEADS, "latitude": glat, "longitude": glon})
        g.to_zarr(out, group="forecast/global", zarr_format=3, mode="w", consolidated=False)
        ds.to_zarr(out, group="forecast/hrrr", zarr_format=3, mode="w", encoding=enc, consolidated=False)
    else:
        ds.to_zarr(out, zarr_format=3, mode="w", encoding=enc, consolidated=False)
    print(json.dumps({"proj4": crs.to_proj4(), "nx": nx, "ny": ny}))
elif mode == "wrong-crs":
    # The store's grid mapping edited to another central meridian: its lat/lon no longer agree.
    import zarr

    a = zarr.open_array(out + "/spatial_ref", mode="r+")
    attrs = dict(a.attrs)
    attrs["longitude_of_central_meridian"] = -95.0
    attrs.pop("crs_wkt", None)
    attrs.pop("spatial_ref", None)
    a.attrs.clear()
    a.attrs.update(attrs)
elif mode == "curvilinear":
    # 2-D latitude/longitude and nothing else to place the nodes: no CRS.
    import xarray as xr

    lat, lon = np.meshgrid(np.linspace(40, 50, 12), np.linspace(0, 12, 15), indexing="ij")
    lon = lon + 0.3 * (lat - 45)
    t = fields(12, 15, 3)
    ds = xr.Dataset(
        {"t2m": (("time", "step", "y", "x"), t + 273.15, {"units": "K"})},
        coords={"time": INIT, "step": LEADS, "lat": (("y", "x"), lat), "lon": (("y", "x"), lon)},
    )
    ds.to_zarr(out, mode="w")
elif mode == "rotated-coords":
    # The rotated pole's 2-D latitude/longitude as COSMO writes them, from pyproj.
    from pyproj import CRS, Transformer

    crs = CRS.from_cf(dict(grid_mapping_name="rotated_latitude_longitude", grid_north_pole_latitude=40.0,
                           grid_north_pole_longitude=-170.0))
    rlon = -10.0 + 0.5 * np.arange(44)
    rlat = -8.0 + 0.5 * np.arange(34)
    rr, pp = np.meshgrid(rlon, rlat)
    lon, lat = Transformer.from_crs(crs, "EPSG:4326", always_xy=True).transform(rr, pp)
    np.savez(out, rlon=rlon, rlat=rlat, lon=lon, lat=lat)
elif mode == "rotated":
    import xarray as xr

    c = np.load(sys.argv[3])
    ny, nx = c["lat"].shape
    t = fields(ny, nx, 2)
    dims = ("time", "step", "rlat", "rlon")
    gm = {"grid_mapping": "rotated_pole"}
    ds = xr.Dataset(
        {
            "t_2m": (dims, t + 273.15, {"units": "K", **gm}),
            "u_10m": (dims, np.full(t.shape, 0.0, "float32"), {"units": "m s-1", "standard_name": "grid_eastward_wind", **gm}),
            "v_10m": (dims, np.full(t.shape, 8.0, "float32"), {"units": "m s-1", "standard_name": "grid_northward_wind", **gm}),
            "rotated_pole": ((), np.int32(0), {"grid_mapping_name": "rotated_latitude_longitude",
                                               "grid_north_pole_latitude": 40.0, "grid_north_pole_longitude": -170.0}),
        },
        coords={
            "time": INIT,
            "step": LEADS,
            "rlon": ("rlon", c["rlon"], {"standard_name": "grid_longitude", "units": "degrees", "axis": "X"}),
            "rlat": ("rlat", c["rlat"], {"standard_name": "grid_latitude", "units": "degrees", "axis": "Y"}),
            "lat": (("rlat", "rlon"), c["lat"], {"standard_name": "latitude", "units": "degrees_north"}),
            "lon": (("rlat", "rlon"), c["lon"], {"standard_name": "longitude", "units": "degrees_east"}),
        },
        attrs={"title": "rotated pole test"},
    )
    ds.to_zarr(out, mode="w", encoding={k: {"chunks": (1, 1, 17, 22)} for k in ds.data_vars if k != "rotated_pole"})
    print(json.dumps({"nx": nx, "ny": ny}))
