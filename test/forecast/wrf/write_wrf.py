# Writes WRF output to Zarr (xarray 2026 + zarr 3 venv, pyproj), laid out as its producers leave it:
#   rotated  a raw wrfout as xarray opens it (XTIME decoded, XLAT/XLONG on Time, Times as bytes),
#            written to Zarr v2 as is: WRF's latitude-longitude grid (MAP_PROJ 6) rotated by its
#            pole, COSALPHA/SINALPHA from pyproj, U10/V10 along the grid, T2, Q2, RAINC, RAINNC
#   onepart  the same without RAINNC (cumulus off and the grid-scale part dropped)
#   bucket   the same with WRF's bucket counters I_RAINC/I_RAINNC (bucket_mm set)
#   timesonly the same without XTIME: only the Times strings say when each time is
#   movingnest the same with XLAT moved north at the last time (a moving nest)
#   xwrf     a Lambert domain as xwrf's postprocess() and destagger() leave it, written to Zarr v3:
#            Time decoded from Times, XTIME a date, XLAT/XLONG (y, x), 1-D x/y in metres computed
#            from CEN_LON/CEN_LAT as xwrf does, dims renamed (y, x, z), CF attributes added, the
#            wrf_projection CRS object dropped (no Zarr writer keeps it; grid_mapping still names
#            it), U destaggered onto (Time, z, y, x), the WRF globals kept
#   xwrfdelta the same as older xwrf left it: XTIME a duration (minutes since the start)
import sys

import numpy as np
import xarray as xr
from pyproj import CRS, Geod, Transformer

mode, out = sys.argv[1], sys.argv[2]
R = 6_370_000.0
START = "2024-07-01_00:00:00"
NT = 3
# Rotated grid: pole at (51 N, 82 E) puts the rotated origin at (39 N, 98 W); 0.8 degree spacing.
ROT = dict(pole_lat=51.0, pole_lon=82.0, nx=19, ny=14, d=0.8)
# Lambert domain (WRF's 6370 km sphere), centred on (39 N, 98 W).
LCC = dict(t1=30.0, t2=60.0, stand_lon=-98.0, moad=39.0, cen_lat=39.0, cen_lon=-98.0, nx=40, ny=28, dx=30000.0)


def field(ny, nx, seed, base):
    rng = np.random.default_rng(seed)
    yy, xx = np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij")
    t = base + 15 * np.sin(xx / 7.0) * np.cos(yy / 5.0) + rng.normal(0, 0.5, (ny, nx))
    return (t[None] + np.arange(NT)[:, None, None]).astype("float32")


def bearing_of_plus_y(to_geo, xs, ys, step):
    """Bearing of the grid's +y at each node (degrees clockwise from north), on WRF's sphere."""
    lo1, la1 = to_geo.transform(xs, ys)
    lo2, la2 = to_geo.transform(xs, ys + step)
    return np.asarray(Geod(a=R, f=0.0).inv(lo1, la1, lo2, la2)[0])


def rotated_nodes():
    crs = CRS.from_cf({"grid_mapping_name": "rotated_latitude_longitude", "grid_north_pole_latitude": ROT["pole_lat"],
                       "grid_north_pole_longitude": ROT["pole_lon"], "earth_radius": R})
    to_geo = Transformer.from_crs(crs, CRS.from_proj4(f"+proj=longlat +R={R} +no_defs"), always_xy=True)
    rx = (np.arange(ROT["nx"]) - (ROT["nx"] - 1) / 2) * ROT["d"]
    ry = (np.arange(ROT["ny"]) - (ROT["ny"] - 1) / 2) * ROT["d"]
    xs, ys = np.meshgrid(rx, ry)
    lon, lat = to_geo.transform(xs, ys)
    beta = np.radians(bearing_of_plus_y(to_geo, xs, ys, 1e-4))
    return lat, lon, -beta


def lambert():
    crs = CRS.from_proj4(f"+proj=lcc +lat_1={LCC['t1']} +lat_2={LCC['t2']} +lat_0={LCC['moad']} "
                         f"+lon_0={LCC['stand_lon']} +x_0=0 +y_0=0 +a={R} +b={R} +units=m +no_defs")
    # As xwrf places the nodes: the centre from CEN_LON/CEN_LAT, then DX/DY either way.
    e, n = Transformer.from_crs(CRS(4326), crs, always_xy=True).transform(LCC["cen_lon"], LCC["cen_lat"])
    x = e + (np.arange(LCC["nx"]) - (LCC["nx"] - 1) / 2) * LCC["dx"]
    y = n + (np.arange(LCC["ny"]) - (LCC["ny"] - 1) / 2) * LCC["dx"]
    to_geo = Transformer.from_crs(crs, crs.geodetic_crs, always_xy=True)
    xs, ys = np.meshgrid(x, y)
    lon, lat = to_geo.transform(xs, ys)
    beta = np.radians(bearing_of_plus_y(to_geo, xs, ys, 1.0))
    return lat, lon, -beta, x, y


def raw_wrfout(lat, lon, alpha, globs, variant=""):
    """A wrfout as xarray.open_dataset leaves it (XTIME decoded to dates)."""
    ny, nx = lat.shape
    dims = ("Time", "south_north", "west_east")
    per_time = lambda a: np.broadcast_to(a.astype("float32"), (NT, ny, nx)).copy()  # noqa: E731
    times = np.array([f"2024-07-01_{h:02d}:00:00".encode() for h in (0, 3, 6)], dtype="S19")
    xtime = np.datetime64("2024-07-01T00:00", "ns") + np.array([0, 180, 360]).astype("timedelta64[m]")

    def attrs(units, desc, stagger=""):
        return {"FieldType": 104, "MemoryOrder": "XY ", "description": desc, "units": units, "stagger": stagger}

    rain = lambda seed, base, w: np.maximum(field(ny, nx, seed, base), 0) * np.array(w, "float32")[:, None, None]  # noqa: E731
    data = {
        "Times": (("Time",), times),
        "T2": (dims, field(ny, nx, 5, 290.0), attrs("K", "TEMP at 2 M")),
        "PSFC": (dims, field(ny, nx, 6, 0.0) * 10 + 95000, attrs("Pa", "SFC PRESSURE")),
        "Q2": (dims, field(ny, nx, 7, 20.0) / 2000, attrs("kg kg-1", "QV at 2 M")),
        "U10": (dims, np.full((NT, ny, nx), 2.0, "float32"), attrs("m s-1", "U at 10 M")),
        "V10": (dims, np.full((NT, ny, nx), 10.0, "float32"), attrs("m s-1", "V at 10 M")),
        "RAINC": (dims, rain(8, 0.0, [0, 1, 2]), attrs("mm", "ACCUMULATED TOTAL CUMULUS PRECIPITATION")),
        "RAINNC": (dims, rain(9, 2.0, [0, 2, 3]), attrs("mm", "ACCUMULATED TOTAL GRID SCALE PRECIPITATION")),
        "COSALPHA": (dims, per_time(np.cos(alpha)), attrs("", "Local cosine of map rotation")),
        "SINALPHA": (dims, per_time(np.sin(alpha)), attrs("", "Local sine of map rotation")),
        "U": (("Time", "bottom_top", "south_north", "west_east_stag"), np.zeros((NT, 4, ny, nx + 1), "float32"),
              attrs("m s-1", "x-wind component", "X")),
    }
    if variant == "onepart":
        del data["RAINNC"]
    if variant == "bucket":
        data["I_RAINC"] = (dims, np.zeros((NT, ny, nx), "int32"), attrs("-", "BUCKET FOR RAINC"))
        data["I_RAINNC"] = (dims, np.zeros((NT, ny, nx), "int32"), attrs("-", "BUCKET FOR RAINNC"))
    ds = xr.Dataset(
        data,
        coords={
            "XLAT": (dims, per_time(lat), attrs("degree_north", "LATITUDE, SOUTH IS NEGATIVE")),
            "XLONG": (dims, per_time(lon), attrs("degree_east", "LONGITUDE, WEST IS NEGATIVE")),
            "XTIME": (("Time",), xtime, {"FieldType": 104, "MemoryOrder": "0  ", "stagger": "",
                                         "description": "minutes since 2024-07-01 00:00:00"}),
        },
        attrs={"TITLE": " OUTPUT FROM WRF V4.5 MODEL", "START_DATE": START, "SIMULATION_START_DATE": START,
               "WEST-EAST_GRID_DIMENSION": nx + 1, "SOUTH-NORTH_GRID_DIMENSION": ny + 1, "GRID_ID": 1,
               "DT": 180.0, **globs},
    )
    for v in ds.data_vars:
        if v != "Times":
            ds[v].attrs["coordinates"] = "XLONG XLAT XTIME"
    ds["XTIME"].encoding = {"units": "minutes since 2024-07-01 00:00:00", "dtype": "float32"}
    return ds


if mode in ("rotated", "onepart", "bucket", "timesonly", "movingnest"):
    lat, lon, alpha = rotated_nodes()
    globs = {"MAP_PROJ": 6, "MAP_PROJ_CHAR": "Cylindrical Equidistant", "POLE_LAT": ROT["pole_lat"],
             "POLE_LON": ROT["pole_lon"], "STAND_LON": 180.0 - ROT["pole_lon"], "TRUELAT1": 0.0, "TRUELAT2": 0.0,
             "CEN_LAT": 39.0, "CEN_LON": -98.0, "MOAD_CEN_LAT": 39.0, "DX": 88940.0, "DY": 88940.0}
    ds = raw_wrfout(lat, lon, alpha, globs, "" if mode == "rotated" else mode)
    if mode == "movingnest":
        # A nest that moves: its nodes half a degree further north at the last time.
        ds["XLAT"].values[2] += 0.5
    if mode == "timesonly":
        ds = ds.drop_vars("XTIME")
        for v in ds.data_vars:
            if v != "Times":
                ds[v].attrs["coordinates"] = "XLONG XLAT"
    ds.to_zarr(out, mode="w", zarr_format=2, consolidated=True)
elif mode in ("xwrf", "xwrfdelta"):
    lat, lon, alpha, x, y = lambert()
    globs = {"MAP_PROJ": 1, "MAP_PROJ_CHAR": "Lambert Conformal", "TRUELAT1": LCC["t1"], "TRUELAT2": LCC["t2"],
             "STAND_LON": LCC["stand_lon"], "MOAD_CEN_LAT": LCC["moad"], "CEN_LAT": LCC["cen_lat"],
             "CEN_LON": LCC["cen_lon"], "POLE_LAT": 90.0, "POLE_LON": 0.0, "DX": LCC["dx"], "DY": LCC["dx"]}
    ds = raw_wrfout(lat, lon, alpha, globs)
    # postprocess(): CF attributes, XLAT/XLONG at the first time, Time from Times, x/y, renamed dims.
    cf = {"U10": {"standard_name": "x_wind"}, "V10": {"standard_name": "y_wind"}, "U": {"standard_name": "x_wind"},
          "T2": {"standard_name": "air_temperature"}, "PSFC": {"standard_name": "air_pressure"},
          "Q2": {"standard_name": "humidity_mixing_ratio"},
          "RAINNC": {"standard_name": "integral_of_lwe_precipitation_rate_wrt_time"}}
    for v, a in cf.items():
        ds[v].attrs.update(a)
    for c in ("XLAT", "XLONG"):
        a = dict(ds[c].attrs, standard_name="latitude" if c == "XLAT" else "longitude")
        ds = ds.assign_coords({c: (ds[c].dims[1:], ds[c].values[0])})
        ds[c].attrs = a
    ds = ds.assign_coords(Time=("Time", np.array([np.datetime64(t.decode().replace("_", "T"), "ns")
                                                  for t in ds.Times.values])))
    ds.Time.attrs = {"long_name": "Time", "standard_name": "time"}
    ds["south_north"] = ("south_north", y, {"units": "m", "standard_name": "projection_y_coordinate", "axis": "Y"})
    ds["west_east"] = ("west_east", x, {"units": "m", "standard_name": "projection_x_coordinate", "axis": "X"})
    for v in ds.data_vars:
        if "south_north" in ds[v].dims or "west_east" in ds[v].dims or "west_east_stag" in ds[v].dims:
            ds[v].attrs["grid_mapping"] = "wrf_projection"
    ds = ds.rename({"south_north": "y", "west_east": "x", "west_east_stag": "x_stag", "bottom_top": "z"})
    # destagger(): U averaged onto the mass points.
    u = ds["U"]
    ds["U"] = (("Time", "z", "y", "x"), (0.5 * (u.values[..., 1:] + u.values[..., :-1])).astype("float32"),
               {k: v for k, v in u.attrs.items() if k != "stagger"})
    ds = ds.drop_dims("x_stag", errors="ignore")
    if mode == "xwrfdelta":
        # Older xwrf made XTIME what its description says: minutes since the start, a duration.
        ds["XTIME"] = ds.XTIME - np.datetime64("2024-07-01T00:00", "ns")
        ds["XTIME"].encoding = {"units": "minutes", "dtype": "float32"}
    ds.to_zarr(out, mode="w", zarr_format=3, consolidated=False)
else:
    raise SystemExit(f"unknown mode {mode}")
