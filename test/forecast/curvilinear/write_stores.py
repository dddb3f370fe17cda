# Writes grids stored with 2-D latitude/longitude and no x/y values, each laid out as its producer
# lays it out, with no renaming:
#   coords   (zarr 3 venv, pyproj): the nodes of a coarse HRRR-like Lambert grid and a WRF Lambert
#            domain, saved to an .npz for the writers below (Debian's Python has no pyproj)
#   cfgrib   (Debian xarray + zarr 2): a cfgrib-opened HRRR GRIB written to Zarr: dims (step, y, x),
#            scalar time, 2-D latitude/longitude in 0..360, the GRIB_* keys on every variable
#   herbie   (venv xarray + zarr 3): the same plus Herbie's CF grid mapping variable, named by every
#            variable's grid_mapping (still no x/y values)
#   kerchunk (Debian xarray + zarr 2): runs concatenated along time (kerchunk's MultiZarrToZarr),
#            scalar step, valid_time beside it
#   wrfout   (Debian: scipy writes a netCDF-3 wrfout, xarray opens it and writes it to Zarr as is)
#   nocrs    (Debian): 2-D latitude/longitude and nothing stating a projection (a curvilinear
#            grid), winds along its rows and columns named x_wind/y_wind
#   jitter   (Debian): a curvilinear grid whose nodes are each moved at random (not smooth)
#   badgrib  (Debian): cfgrib-shaped with GRIB_LoVInDegrees that disagrees with the stored nodes
import json
import sys

import numpy as np

mode, out = sys.argv[1], sys.argv[2]

# HRRR's Lambert on GRIB's sphere (shapeOfTheEarth 6), 60 km instead of 3 km.
HRRR = dict(lat1=38.5, lat2=38.5, lov=262.5, lad=38.5, nx=48, ny=30, step=60000.0, x0=-1440000.0, y0=-840000.0)
# A WRF domain: Lambert with two true latitudes on WRF's 6370 km sphere.
WRF = dict(t1=30.0, t2=60.0, stand_lon=-98.0, moad=39.0, nx=40, ny=28, dx=30000.0, x0=-585000.0, y0=-405000.0)


def field(ny, nx, n, seed, base):
    rng = np.random.default_rng(seed)
    yy, xx = np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij")
    t = base + 15 * np.sin(xx / 7.0) * np.cos(yy / 5.0) + rng.normal(0, 0.5, (ny, nx))
    return (t[None] + np.arange(n)[:, None, None]).astype("float32")


def grib_attrs(c, name, short, units, extra=None):
    a = {
        "GRIB_paramId": 167, "GRIB_dataType": "fc", "GRIB_numberOfPoints": int(c["nx"] * c["ny"]),
        "GRIB_typeOfLevel": "heightAboveGround", "GRIB_stepUnits": 1, "GRIB_stepType": "instant",
        "GRIB_gridType": "lambert", "GRIB_DxInMetres": c["step"], "GRIB_DyInMetres": c["step"],
        "GRIB_LaDInDegrees": c["lad"], "GRIB_Latin1InDegrees": c["lat1"], "GRIB_Latin2InDegrees": c["lat2"],
        "GRIB_LoVInDegrees": c["lov"], "GRIB_Nx": c["nx"], "GRIB_Ny": c["ny"], "GRIB_NV": 0,
        "GRIB_gridDefinitionDescription": "Lambert Conformal can be secant or tangent, conical or bipolar",
        "GRIB_iScansNegatively": 0, "GRIB_jPointsAreConsecutive": 0, "GRIB_jScansPositively": 1,
        "GRIB_latitudeOfFirstGridPointInDegrees": float(c["lat"][0, 0]),
        "GRIB_longitudeOfFirstGridPointInDegrees": float(c["lon"][0, 0]),
        "GRIB_latitudeOfSouthernPoleInDegrees": -90.0, "GRIB_longitudeOfSouthernPoleInDegrees": 0.0,
        "GRIB_missingValue": 3.4028234663852886e38, "GRIB_name": name, "GRIB_shortName": short,
        "GRIB_units": units, "GRIB_cfVarName": short, "long_name": name, "units": units,
    }
    a.update(extra or {})
    return a


def cfgrib_dataset(c, steps=3):
    import xarray as xr

    ny, nx = c["lat"].shape
    dims = ("step", "y", "x")
    wind = {"GRIB_uvRelativeToGrid": 1, "standard_name": "unknown"}
    time = np.datetime64("2025-06-01T00:00", "ns")
    step = (np.arange(steps) * 3).astype("timedelta64[h]").astype("timedelta64[ns]")
    ds = xr.Dataset(
        {
            "t2m": (dims, field(ny, nx, steps, 1, 285.0), grib_attrs(c, "2 metre temperature", "2t", "K")),
            "u10": (dims, np.full((steps, ny, nx), 2.0, "float32"),
                    grib_attrs(c, "10 metre U wind component", "10u", "m s**-1", wind)),
            "v10": (dims, np.full((steps, ny, nx), 10.0, "float32"),
                    grib_attrs(c, "10 metre V wind component", "10v", "m s**-1", wind)),
        },
        coords={
            "time": ((), time, {"long_name": "initial time of forecast", "standard_name": "forecast_reference_time"}),
            "step": ("step", step, {"long_name": "time since forecast_reference_time", "standard_name": "forecast_period"}),
            "heightAboveGround": ((), 2.0, {"long_name": "height above the surface", "units": "m", "positive": "up",
                                            "standard_name": "height"}),
            "latitude": (("y", "x"), c["lat"], {"units": "degrees_north", "standard_name": "latitude",
                                                "long_name": "latitude"}),
            "longitude": (("y", "x"), c["lon"], {"units": "degrees_east", "standard_name": "longitude",
                                                 "long_name": "longitude"}),
            "valid_time": ("step", time + step, {"standard_name": "time", "long_name": "time"}),
        },
        attrs={"GRIB_edition": 2, "GRIB_centre": "kwbc", "GRIB_centreDescription": "US National Weather Service",
               "Conventions": "CF-1.7", "institution": "US National Weather Service - NCEP"},
    )
    return ds


if mode == "coords":
    from pyproj import CRS, Transformer

    h = CRS.from_proj4(f"+proj=lcc +lat_1={HRRR['lat1']} +lat_2={HRRR['lat2']} +lat_0={HRRR['lad']} "
                       f"+lon_0={HRRR['lov']} +R=6371229 +units=m +no_defs")
    x = HRRR["x0"] + HRRR["step"] * np.arange(HRRR["nx"])
    y = HRRR["y0"] + HRRR["step"] * np.arange(HRRR["ny"])
    lon, lat = Transformer.from_crs(h, h.geodetic_crs, always_xy=True).transform(*np.meshgrid(x, y))
    w = CRS.from_proj4(f"+proj=lcc +lat_1={WRF['t1']} +lat_2={WRF['t2']} +lat_0={WRF['moad']} "
                       f"+lon_0={WRF['stand_lon']} +R=6370000 +units=m +no_defs")
    wx = WRF["x0"] + WRF["dx"] * np.arange(WRF["nx"])
    wy = WRF["y0"] + WRF["dx"] * np.arange(WRF["ny"])
    wlon, wlat = Transformer.from_crs(w, w.geodetic_crs, always_xy=True).transform(*np.meshgrid(wx, wy))
    # cfgrib gives HRRR's longitudes in 0..360; WRF's XLONG runs -180..180.
    np.savez(out, lat=lat, lon=lon % 360, wlat=wlat, wlon=wlon)
    print(json.dumps({"hrrr": h.to_proj4(), "wrf": w.to_proj4()}))
elif mode in ("cfgrib", "badgrib"):
    z = np.load(sys.argv[3])
    c = dict(HRRR, lat=z["lat"], lon=z["lon"])
    if mode == "badgrib":
        c["lov"] = 265.0
    ds = cfgrib_dataset(c)
    ds.to_zarr(out, mode="w", encoding={k: {"chunks": (1, 16, 16)} for k in ds.data_vars})
elif mode == "herbie":
    from pyproj import CRS, Transformer

    h = CRS.from_proj4(f"+proj=lcc +lat_1={HRRR['lat1']} +lat_2={HRRR['lat2']} +lat_0={HRRR['lad']} "
                       f"+lon_0={HRRR['lov']} +R=6371229 +units=m +no_defs")
    x = HRRR["x0"] + HRRR["step"] * np.arange(HRRR["nx"])
    y = HRRR["y0"] + HRRR["step"] * np.arange(HRRR["ny"])
    lon, lat = Transformer.from_crs(h, h.geodetic_crs, always_xy=True).transform(*np.meshgrid(x, y))
    ds = cfgrib_dataset(dict(HRRR, lat=lat, lon=lon % 360))
    # Herbie's ds.herbie.crs written back as a CF grid mapping coordinate every variable names.
    ds = ds.assign_coords(gribfile_projection=((), np.int64(0), h.to_cf()))
    for v in ds.data_vars:
        ds[v].attrs["grid_mapping"] = "gribfile_projection"
    ds.attrs["model"] = "hrrr"
    ds.attrs["product"] = "sfc"
    ds.attrs["description"] = "High-Resolution Rapid Refresh - CONUS"
    ds.to_zarr(out, mode="w", zarr_format=3, consolidated=False,
               encoding={k: {"chunks": (1, 16, 16)} for k in ds.data_vars})
elif mode == "kerchunk":
    import xarray as xr

    z = np.load(sys.argv[3])
    c = dict(HRRR, lat=z["lat"], lon=z["lon"])
    runs = []
    for k, hour in enumerate([0, 6]):
        ds = cfgrib_dataset(c, steps=1).isel(step=0)
        ds = ds.assign_coords(time=np.datetime64(f"2025-06-01T{hour:02d}:00", "ns"))
        ds = ds.assign_coords(valid_time=ds.time + ds.step)
        for v in ds.data_vars:
            ds[v] = ds[v] + 3.0 * k
            ds[v].attrs.update(cfgrib_dataset(c, 1)[v].attrs)
        runs.append(ds)
    ds = xr.concat(runs, dim="time", data_vars="minimal", coords="minimal", compat="override")
    ds = ds.assign_coords(valid_time=ds.time + ds.step)
    ds.to_zarr(out, mode="w", encoding={k: {"chunks": (1, 30, 48)} for k in ds.data_vars})
elif mode == "nocrs":
    import xarray as xr

    z = np.load(sys.argv[3])
    ds = cfgrib_dataset(dict(HRRR, lat=z["lat"], lon=z["lon"]))
    for v in ds.data_vars:
        ds[v].attrs = {"units": ds[v].attrs["units"], "long_name": ds[v].attrs["long_name"]}
    # Winds along the grid's rows and columns, as CF names them.
    ds["u10"].attrs["standard_name"] = "x_wind"
    ds["v10"].attrs["standard_name"] = "y_wind"
    ds.to_zarr(out, mode="w", encoding={k: {"chunks": (1, 16, 16)} for k in ds.data_vars})
elif mode == "jitter":
    # A curvilinear grid whose nodes are not smooth (each moved up to half a cell at random):
    # the node nearest to a point need not be a corner of the cell it interpolates into.
    import xarray as xr

    z = np.load(sys.argv[3])
    rng = np.random.default_rng(11)
    lat = z["lat"] + rng.uniform(-0.25, 0.25, z["lat"].shape)
    lon = z["lon"] + rng.uniform(-0.25, 0.25, z["lon"].shape)
    ds = cfgrib_dataset(dict(HRRR, lat=lat, lon=lon))[["t2m"]]
    ds["t2m"].attrs = {"units": "K"}
    ds.to_zarr(out, mode="w")
elif mode == "wrfout":
    import xarray as xr
    from scipy.io import netcdf_file

    z = np.load(sys.argv[3])
    lat, lon = z["wlat"].astype("float32"), z["wlon"].astype("float32")
    ny, nx = lat.shape
    nt, nz = 3, 4
    nc = netcdf_file(sys.argv[4], "w", version=2)
    for d, n in [("Time", None), ("DateStrLen", 19), ("west_east", nx), ("south_north", ny), ("bottom_top", nz),
                 ("west_east_stag", nx + 1), ("south_north_stag", ny + 1), ("bottom_top_stag", nz + 1)]:
        nc.createDimension(d, n)
    glob = dict(TITLE=b" OUTPUT FROM WRF V4.5 MODEL", START_DATE=b"2024-07-01_00:00:00",
                SIMULATION_START_DATE=b"2024-07-01_00:00:00", WEST_EAST_GRID_DIMENSION=nx + 1,
                SOUTH_NORTH_GRID_DIMENSION=ny + 1, BOTTOM_TOP_GRID_DIMENSION=nz + 1, DX=np.float32(WRF["dx"]),
                DY=np.float32(WRF["dx"]), CEN_LAT=np.float32(lat[ny // 2, nx // 2]),
                CEN_LON=np.float32(lon[ny // 2, nx // 2]), TRUELAT1=np.float32(WRF["t1"]),
                TRUELAT2=np.float32(WRF["t2"]), MOAD_CEN_LAT=np.float32(WRF["moad"]),
                STAND_LON=np.float32(WRF["stand_lon"]), POLE_LAT=np.float32(90), POLE_LON=np.float32(0),
                MAP_PROJ=np.int32(1), MAP_PROJ_CHAR=b"Lambert Conformal", GRID_ID=np.int32(1),
                DT=np.float32(180))
    for k, v in glob.items():
        setattr(nc, k, v)

    def var(name, dtype, dims, data, units, desc, stagger=b"", coords=b"XLONG XLAT XTIME"):
        v = nc.createVariable(name, dtype, dims)
        v[:] = data
        v.FieldType = np.int32(104)
        v.MemoryOrder = b"XY " if len(dims) == 3 else b"XYZ"
        v.description = desc
        v.units = units
        v.stagger = stagger
        if coords:
            v.coordinates = coords
        return v

    times = np.array([list(f"2024-07-01_{h:02d}:00:00".encode()) for h in (0, 3, 6)], dtype="S1")
    nc.createVariable("Times", "c", ("Time", "DateStrLen"))[:] = times
    var("XLAT", "f", ("Time", "south_north", "west_east"), np.broadcast_to(lat, (nt, ny, nx)), b"degree_north",
        b"LATITUDE, SOUTH IS NEGATIVE", coords=b"XLONG XLAT")
    var("XLONG", "f", ("Time", "south_north", "west_east"), np.broadcast_to(lon, (nt, ny, nx)), b"degree_east",
        b"LONGITUDE, WEST IS NEGATIVE", coords=b"XLONG XLAT")
    xt = nc.createVariable("XTIME", "f", ("Time",))
    xt[:] = np.array([0, 180, 360], "float32")
    xt.units = b"minutes since 2024-07-01 00:00:00"
    xt.description = b"minutes since 2024-07-01 00:00:00"
    xt.FieldType = np.int32(104)
    xt.MemoryOrder = b"0  "
    xt.stagger = b""
    grid3 = ("Time", "south_north", "west_east")
    var("T2", "f", grid3, field(ny, nx, nt, 5, 290.0), b"K", b"TEMP at 2 M")
    # Q2, and total precipitation in WRF's two parts, each accumulated since the start (mm).
    var("Q2", "f", grid3, (field(ny, nx, nt, 7, 20.0) / 2000).astype("float32"), b"kg kg-1", b"QV at 2 M")
    var("RAINC", "f", grid3, np.maximum(field(ny, nx, nt, 8, 0.0), 0) * np.array([0, 1, 2])[:, None, None],
        b"mm", b"ACCUMULATED TOTAL CUMULUS PRECIPITATION")
    var("RAINNC", "f", grid3, np.maximum(field(ny, nx, nt, 9, 2.0), 0) * np.array([0, 2, 3])[:, None, None],
        b"mm", b"ACCUMULATED TOTAL GRID SCALE PRECIPITATION")
    var("PSFC", "f", grid3, field(ny, nx, nt, 6, 0.0) * 10 + 95000, b"Pa", b"SFC PRESSURE")
    var("U10", "f", grid3, np.full((nt, ny, nx), 2.0, "float32"), b"m s-1", b"U at 10 M")
    var("V10", "f", grid3, np.full((nt, ny, nx), 10.0, "float32"), b"m s-1", b"V at 10 M")
    # The rotation WRF's post-processors turn winds by (sin/cos of the grid's angle to true north).
    from math import radians

    cone = (np.log(np.cos(radians(WRF["t1"]))) - np.log(np.cos(radians(WRF["t2"])))) / (
        np.log(np.tan(radians(45 - WRF["t1"] / 2))) - np.log(np.tan(radians(45 - WRF["t2"] / 2))))
    # WRF turns winds as u cos a - v sin a (east), v cos a + u sin a (north): east of STAND_LON the
    # grid's +x points south of east in the northern hemisphere, so a = -cone * (lon - STAND_LON).
    alpha = -np.radians(((lon - WRF["stand_lon"] + 180) % 360 - 180) * cone)
    var("COSALPHA", "f", grid3, np.broadcast_to(np.cos(alpha), (nt, ny, nx)), b"", b"Local cosine of map rotation")
    var("SINALPHA", "f", grid3, np.broadcast_to(np.sin(alpha), (nt, ny, nx)), b"", b"Local sine of map rotation")
    var("U", "f", ("Time", "bottom_top", "south_north", "west_east_stag"), np.zeros((nt, nz, ny, nx + 1)), b"m s-1",
        b"x-wind component", stagger=b"X", coords=b"XLONG_U XLAT_U XTIME")
    var("V", "f", ("Time", "bottom_top", "south_north_stag", "west_east"), np.zeros((nt, nz, ny + 1, nx)), b"m s-1",
        b"y-wind component", stagger=b"Y", coords=b"XLONG_V XLAT_V XTIME")
    var("W", "f", ("Time", "bottom_top_stag", "south_north", "west_east"), np.zeros((nt, nz + 1, ny, nx)), b"m s-1",
        b"z-wind component", stagger=b"Z")
    var("PH", "f", ("Time", "bottom_top_stag", "south_north", "west_east"), np.zeros((nt, nz + 1, ny, nx)),
        b"m2 s-2", b"perturbation geopotential", stagger=b"Z")
    nc.close()
    ds = xr.open_dataset(sys.argv[4])
    ds.to_zarr(out, mode="w")
else:
    raise SystemExit(f"unknown mode {mode}")
